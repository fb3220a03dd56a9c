/*
** test_fair.c -- fair queues (sqlq_fair_set): claims take jobs round-robin
** across tenants (group keys, and the jobs without one), priority first
** within a tenant, in an order that the same claims always repeat.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* The schema version that brought fair queues. */
enum { FAIR_SCHEMA = 10 };

/* The race of the issue: A_JOBS jobs of tenant A enqueued first, then
** B_JOBS of tenant B, claimed CLAIM_MAX at a time. */
enum { A_JOBS = 10000, B_JOBS = 10, CLAIM_MAX = 10 };

/* One job claimed: its tenant ('-' for none) and its payload's first
** byte. */
typedef struct seen {
  char tenant, mark;
} seen;

/* Enqueue n jobs of tenant group (NULL: none) with the payload mark and
** priority priority. */
static void push_jobs(const fixture *f, const char *group, char mark, int priority, size_t n) {
  sqlq_job_spec *specs = calloc(n, sizeof *specs);
  assert_non_null(specs);
  for (size_t i = 0; i < n; i++)
    specs[i] =
      (sqlq_job_spec){.payload = &mark, .payload_len = 1, .priority = priority, .group_key = group};
  assert_ok(f->db, sqlq_enqueue_batch(f->db, f->queue, specs, n, NULL));
  free(specs);
}

/* Claim up to max jobs through db and ack them, appending what was seen to
** out; returns how many. */
static size_t claim_seen(sqlq_db *db, const fixture *f, size_t max, seen *out) {
  sqlq_job *jobs = NULL;
  size_t n = 0;
  assert_ok(db, sqlq_claim(db, f->queue, max, NULL, &jobs, &n));
  for (size_t i = 0; i < n; i++) {
    out[i].tenant = jobs[i].group_key ? jobs[i].group_key[0] : '-';
    out[i].mark = jobs[i].payload_len ? (char)jobs[i].payload[0] : '?';
    assert_ok(db, sqlq_ack(db, jobs[i].id, jobs[i].token));
  }
  sqlq_jobs_free(jobs, n);
  return n;
}

/* The sequence of claims of up to `batch` jobs that drains the queue,
** through db, as "tenant mark" pairs into text (room for 2 * max + 1). */
static void drain_text(sqlq_db *db, const fixture *f, size_t batch, char *text, size_t max) {
  seen s[16];
  size_t at = 0, n;
  while (at < max && (n = claim_seen(db, f, batch, s)) > 0)
    for (size_t i = 0; i < n && at < max; i++, at++) {
      text[2 * at] = s[i].tenant;
      text[2 * at + 1] = s[i].mark;
    }
  text[2 * at] = '\0';
}

static void make_fair(const fixture *f) {
  assert_ok(f->db, sqlq_fair_set(f->db, f->queue, 1));
  assert_ok(f->db, sqlq_group_limit_set(f->db, f->queue, SQLQ_MAX_RUNNING_MAX));
}

/* The setting reads back; 0 unless set, also for an unknown queue; any
** value but 0 and 1 is refused and changes nothing. */
static void fair_setting_reads_back(void **state) {
  fixture *f = *state;
  int v = -1;
  assert_ok(f->db, sqlq_fair_get(f->db, f->queue, &v));
  assert_int_equal(v, 0);
  assert_ok(f->db, sqlq_fair_set(f->db, f->queue, 1));
  assert_ok(f->db, sqlq_fair_get(f->db, f->queue, &v));
  assert_int_equal(v, 1);
  assert_status(f->db, sqlq_fair_set(f->db, f->queue, 2), SQLQ_MISUSE);
  assert_status(f->db, sqlq_fair_set(f->db, f->queue, -1), SQLQ_MISUSE);
  assert_status(f->db, sqlq_fair_set(f->db, "", 1), SQLQ_MISUSE);
  assert_ok(f->db, sqlq_fair_get(f->db, f->queue, &v));
  assert_int_equal(v, 1);
  assert_ok(f->db, sqlq_fair_set(f->db, f->queue, 0));
  assert_ok(f->db, sqlq_fair_get(f->db, f->queue, &v));
  assert_int_equal(v, 0);
}

/* The jobs of turns_in_the_documented_order, on a fair queue. */
static void push_turns(const fixture *f) {
  make_fair(f);
  push_jobs(f, "a", '1', 0, 1);
  push_jobs(f, "b", '1', 0, 1);
  push_jobs(f, "a", '2', 5, 1);
  push_jobs(f, NULL, '1', 0, 1);
  push_jobs(f, "a", '3', 0, 1);
  push_jobs(f, NULL, '2', 0, 1);
  push_jobs(f, "b", '3', 0, 1);
}

/* The order of turns, exactly: tenants never served first, the jobs
** without a group key before the groups, groups by key; each tenant
** served goes behind the others; priority first within a tenant.  Claims
** of one job through two handles in turn give the same order as claims of
** three through one: the turns are the queue's. */
static void turns_in_the_documented_order(void **state) {
  fixture *f = *state;
  static const char want[] = "-1a2b1-2a1b3a3";
  push_turns(f);
  char got[32];
  drain_text(f->db, f, 3, got, 15);
  assert_string_equal(got, want);
  /* Again, one job a claim, through two handles in turn. */
  assert_ok(f->db, sqlq_fair_set(f->db, f->queue, 0)); /* forgets the turns */
  push_turns(f);
  sqlq_db *other = fx_open(f);
  seen s[1];
  size_t at = 0;
  for (int turn = 0; at < 7; turn++) {
    assert_int_equal(claim_seen(turn % 2 ? other : f->db, f, 1, s), 1);
    got[2 * at] = s[0].tenant;
    got[2 * at + 1] = s[0].mark;
    at++;
  }
  got[2 * at] = '\0';
  assert_string_equal(got, want);
  sqlq_close(other);
}

/* A tenant that runs dry in a claim drops out of its turns; the others
** go on, past the jobs their first pick read. */
static void tenant_runs_dry_mid_claim(void **state) {
  fixture *f = *state;
  make_fair(f);
  push_jobs(f, "b", '1', 0, 3);
  push_jobs(f, "b", '2', 0, 7);
  push_jobs(f, "a", '1', 0, 1);
  char got[32];
  seen s[8];
  size_t n = claim_seen(f->db, f, 7, s);
  for (size_t i = 0; i < n; i++) {
    got[2 * i] = s[i].tenant;
    got[2 * i + 1] = s[i].mark;
  }
  got[2 * n] = '\0';
  assert_string_equal(got, "a1b1b1b1b2b2b2");
  assert_int_equal(claim_seen(f->db, f, 7, s), 4);
}

/* The test: tenant A's 10,000 jobs, then tenant B's 10: every job
** of B starts before half of A's have, claimed CLAIM_MAX at a time. */
static void small_tenant_not_starved(void **state) {
  fixture *f = *state;
  make_fair(f);
  push_jobs(f, "A", 'a', 0, A_JOBS);
  push_jobs(f, "B", 'b', 0, B_JOBS);
  seen s[CLAIM_MAX];
  size_t a = 0, b = 0, n;
  while (b < B_JOBS && a < A_JOBS / 2 && (n = claim_seen(f->db, f, CLAIM_MAX, s)) > 0)
    for (size_t i = 0; i < n; i++) s[i].tenant == 'A' ? a++ : b++;
  print_message("fair: B's %zu jobs started before %zu of A's %d\n", b, a, A_JOBS);
  assert_int_equal(b, B_JOBS);
  assert_true(a < A_JOBS / 2);
}

/* A queue that is not fair keeps its order: A's jobs, enqueued first,
** come first. */
static void unfair_queue_keeps_its_order(void **state) {
  fixture *f = *state;
  assert_ok(f->db, sqlq_group_limit_set(f->db, f->queue, SQLQ_MAX_RUNNING_MAX));
  push_jobs(f, "A", 'a', 0, 30);
  push_jobs(f, "B", 'b', 0, 3);
  char got[80];
  drain_text(f->db, f, 10, got, 33);
  for (int i = 0; i < 30; i++) assert_int_equal(got[2 * i], 'A');
  assert_string_equal(got + 60, "BbBbBb");
}

/* The same sequence of claims on the same jobs takes the same jobs, on
** a second queue. */
static void same_claims_same_jobs(void **state) {
  fixture *f = *state;
  char first[128], second[128];
  fixture g = *f;
  snprintf(g.queue, sizeof g.queue, "%.50s-2", f->queue);
  const fixture *both[2] = {f, &g};
  for (int k = 0; k < 2; k++) {
    make_fair(both[k]);
    for (int i = 0; i < 4; i++) {
      push_jobs(both[k], "x", (char)('0' + i), i % 2, 3);
      push_jobs(both[k], i % 2 ? "y" : NULL, (char)('0' + i), 0, 2);
      push_jobs(both[k], "z", (char)('0' + i), 3 - i, 1);
    }
    drain_text(f->db, both[k], 4, k ? second : first, 24);
  }
  assert_int_equal(strlen(first), 48);
  assert_string_equal(first, second);
}

/* A paused fair queue says so; a fair queue with a concurrency limit takes
** at most its free slots. */
static void fair_queue_paused_and_limited(void **state) {
  fixture *f = *state;
  sqlq_job *jobs = NULL;
  size_t n = 0;
  make_fair(f);
  push_jobs(f, "a", '1', 0, 3);
  push_jobs(f, "b", '1', 0, 3);
  assert_ok(f->db, sqlq_pause(f->db, f->queue));
  assert_status(f->db, sqlq_claim(f->db, f->queue, 5, NULL, &jobs, &n), SQLQ_PAUSED);
  assert_ok(f->db, sqlq_resume(f->db, f->queue));
  assert_ok(f->db, sqlq_concurrency_set(f->db, f->queue, 2));
  assert_ok(f->db, sqlq_claim(f->db, f->queue, 5, NULL, &jobs, &n));
  assert_int_equal(n, 2);
  assert_string_equal(jobs[0].group_key, "a");
  assert_string_equal(jobs[1].group_key, "b");
  sqlq_jobs_free(jobs, n);
}

/* A job whose lease expired is taken back by a fair claim (or dies, with
** no attempt left), and its old token is stale. */
static void fair_claim_takes_back_expired_leases(void **state) {
  fixture *f = *state;
  make_fair(f);
  push_jobs(f, "a", '1', 0, 1);
  claimed first = fx_claim_one(f->db, f, 0.2);
  assert_true(first.id != 0);
  claimed again = {0};
  double deadline = fx_now() + 30;
  while (again.id == 0 && fx_now() < deadline) {
    again = fx_claim_one(f->db, f, 30);
    if (again.id == 0) fx_sleep(0.05);
  }
  assert_int_equal(again.id, first.id);
  assert_status(f->db, sqlq_ack(f->db, first.id, first.token), SQLQ_STALE);
  assert_ok(f->db, sqlq_ack(f->db, again.id, again.token));
}

/* Claim up to max jobs through db and keep them: their tenants as text
** into tenants (room for max + 1), their refs into refs; returns how
** many. */
static size_t claim_held(sqlq_db *db, const fixture *f, size_t max, char *tenants,
                         sqlq_job_ref *refs) {
  sqlq_job *jobs = NULL;
  size_t n = 0;
  assert_ok(db, sqlq_claim(db, f->queue, max, NULL, &jobs, &n));
  for (size_t i = 0; i < n; i++) {
    tenants[i] = jobs[i].group_key ? jobs[i].group_key[0] : '-';
    refs[i] = (sqlq_job_ref){jobs[i].id, jobs[i].token};
  }
  tenants[n] = '\0';
  sqlq_jobs_free(jobs, n);
  return n;
}

static void ack_held(const fixture *f, const sqlq_job_ref *refs, size_t n) {
  for (size_t i = 0; i < n; i++) assert_ok(f->db, sqlq_ack(f->db, refs[i].id, refs[i].token));
}

/* A fair queue keeps its per-group, concurrency and rate limits at once:
** each claim takes what all of them allow, in turns. */
static void fair_queue_keeps_every_limit(void **state) {
  fixture *f = *state;
  char t[16];
  sqlq_job_ref held[16];
  assert_ok(f->db, sqlq_fair_set(f->db, f->queue, 1));
  assert_ok(f->db, sqlq_group_limit_set(f->db, f->queue, 2));
  assert_ok(f->db, sqlq_concurrency_set(f->db, f->queue, 2));
  assert_ok(f->db, sqlq_rate_set(f->db, f->queue, 5, 3600 * INT64_C(1000000)));
  push_jobs(f, "a", '1', 0, 4);
  push_jobs(f, "b", '1', 0, 1);
  /* Two slots: a job of each tenant (the queue's order would take two of
  ** a's). */
  assert_int_equal(claim_held(f->db, f, 10, t, held), 2);
  assert_string_equal(t, "ab");
  ack_held(f, held, 2);
  /* Three slots and three starts left: a's per-group limit lets two of its
  ** three start. */
  assert_ok(f->db, sqlq_concurrency_set(f->db, f->queue, 3));
  assert_int_equal(claim_held(f->db, f, 10, t, held), 2);
  assert_string_equal(t, "aa");
  ack_held(f, held, 2);
  /* One start left: b's turn, served longest ago. */
  push_jobs(f, "b", '2', 0, 2);
  assert_int_equal(claim_held(f->db, f, 10, t, held), 1);
  assert_string_equal(t, "b");
  ack_held(f, held, 1);
  /* The window is full. */
  assert_int_equal(claim_held(f->db, f, 10, t, held), 0);
  assert_int_equal(fx_count(f->db, f, SQLQ_STATE_READY), 2);
}

int run_fair_tests(void) {
  const struct CMUnitTest tests[] = {
    FX_TEST(fair_setting_reads_back),
    FX_TEST(turns_in_the_documented_order),
    FX_TEST(small_tenant_not_starved),
    FX_TEST(unfair_queue_keeps_its_order),
    FX_TEST(same_claims_same_jobs),
    FX_TEST(fair_queue_paused_and_limited),
    FX_TEST(fair_claim_takes_back_expired_leases),
    FX_TEST(tenant_runs_dry_mid_claim),
    FX_TEST(fair_queue_keeps_every_limit),
  };
  return fx_run_group_from("fair", FAIR_SCHEMA, tests, sizeof tests / sizeof tests[0]);
}
