/*
** test_rates.c -- rate limits (sqlq_rate_set): a claim takes at most the
** starts that the queue's rate has left in the sliding window, across
** every handle and process, and no window of the period ever holds more
** starts than the rate allows, on the database's clock.
**
** No test asserts a timing: where a claim must find the window full, the
** test accepts a fuller answer when the period has passed since the
** window's starts (the machine may be slow).
*/
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness.h"

/* The schema version that brought rate limits. */
enum { RATES_SCHEMA = 8 };

/* A period no single test step outlasts on a sane machine; the tests
** that see it pass say so rather than fail. */
#define PERIOD_S 3.0
#define PERIOD_US ((int64_t)(PERIOD_S * 1e6))

/* Claim up to max jobs of queue with a lease of 600 s; returns how many,
** their refs in refs (when not NULL). */
static int claim_from(sqlq_db *db, const char *queue, int max, sqlq_job_ref *refs) {
  sqlq_job *jobs = NULL;
  size_t n = 0;
  sqlq_claim_options co = SQLQ_OPTIONS_INIT(sqlq_claim_options);
  co.lease = 600;
  assert_ok(db, sqlq_claim(db, queue, (size_t)max, &co, &jobs, &n));
  for (size_t i = 0; refs && i < n; i++) refs[i] = (sqlq_job_ref){jobs[i].id, jobs[i].token};
  sqlq_jobs_free(jobs, n);
  return (int)n;
}

static void push_to(sqlq_db *db, const char *queue, int n) {
  sqlq_job_spec *specs = calloc((size_t)n, sizeof *specs);
  assert_non_null(specs);
  assert_ok(db, sqlq_enqueue_batch(db, queue, specs, (size_t)n, NULL));
  free(specs);
}

/* The claim that started a window at since finds it full, unless the
** period has passed since (then it may take more). */
static void assert_full(int claimed, double since) {
  if (claimed != 0 && fx_now() - since < PERIOD_S)
    fail_msg("a claim took %d jobs from a full window", claimed);
}

/* The setting reads back; 0 is no limit, also for an unknown queue; bad
** values are refused and change nothing. */
static void rate_setting_reads_back(void **state) {
  fixture *f = *state;
  int64_t n = -1, p = -1;
  assert_ok(f->db, sqlq_rate_get(f->db, f->queue, &n, &p));
  assert_int_equal(n, 0);
  assert_int_equal(p, 0);
  assert_ok(f->db, sqlq_rate_set(f->db, f->queue, 10, 1000000));
  assert_ok(f->db, sqlq_rate_get(f->db, f->queue, &n, &p));
  assert_int_equal(n, 10);
  assert_int_equal(p, 1000000);
  assert_status(f->db, sqlq_rate_set(f->db, f->queue, -1, 1000000), SQLQ_MISUSE);
  assert_status(f->db, sqlq_rate_set(f->db, f->queue, SQLQ_RATE_MAX_STARTS_MAX + 1, 1000000),
                SQLQ_MISUSE);
  assert_status(f->db, sqlq_rate_set(f->db, f->queue, 5, 0), SQLQ_MISUSE);
  assert_status(f->db, sqlq_rate_set(f->db, f->queue, 5, -1), SQLQ_MISUSE);
  assert_status(f->db, sqlq_rate_set(f->db, f->queue, 5, SQLQ_RATE_PERIOD_MAX_US + 1), SQLQ_MISUSE);
  assert_status(f->db, sqlq_rate_set(f->db, "", 5, 1000000), SQLQ_MISUSE);
  assert_ok(f->db, sqlq_rate_get(f->db, f->queue, &n, NULL));
  assert_int_equal(n, 10);
  assert_ok(f->db, sqlq_rate_set(f->db, f->queue, 0, 0));
  assert_ok(f->db, sqlq_rate_get(f->db, f->queue, &n, &p));
  assert_int_equal(n, 0);
  assert_int_equal(p, 0);
  /* The largest rate and period are taken. */
  assert_ok(f->db,
            sqlq_rate_set(f->db, f->queue, SQLQ_RATE_MAX_STARTS_MAX, SQLQ_RATE_PERIOD_MAX_US));
  assert_ok(f->db, sqlq_rate_get(f->db, f->queue, &n, &p));
  assert_int_equal(n, SQLQ_RATE_MAX_STARTS_MAX);
  assert_int_equal(p, SQLQ_RATE_PERIOD_MAX_US);
  assert_int_equal(claim_from(f->db, f->queue, 5, NULL), 0);
  assert_ok(f->db, sqlq_rate_set(f->db, f->queue, 0, 0));
}

/* A claim of 100 under a rate of 10 takes 10; the window is then full,
** for other handles too; once its starts leave it, sqlq_wait() says so
** and 10 more come. */
static void claim_takes_the_rate(void **state) {
  fixture *f = *state;
  push_to(f->db, f->queue, 100);
  assert_ok(f->db, sqlq_rate_set(f->db, f->queue, 10, PERIOD_US));
  double since = fx_now();
  assert_int_equal(claim_from(f->db, f->queue, 100, NULL), 10);
  sqlq_db *other = fx_open(f);
  assert_full(claim_from(other, f->queue, 100, NULL), since);
  assert_full(claim_from(f->db, f->queue, 100, NULL), since);
  assert_ok(other, sqlq_wait(other, f->queue, 60));
  assert_int_equal(claim_from(other, f->queue, 100, NULL), 10);
  fx_assert_counts(f->db, f, 80, 0, 20, 0);
  sqlq_close(other);
}

/* A wait on a queue whose window is full times out before the window
** frees a slot, then returns once it has. */
static void wait_sleeps_until_the_window_frees(void **state) {
  fixture *f = *state;
  push_to(f->db, f->queue, 4);
  assert_ok(f->db, sqlq_rate_set(f->db, f->queue, 2, PERIOD_US));
  double since = fx_now();
  assert_int_equal(claim_from(f->db, f->queue, 4, NULL), 2);
  sqlq_db *other = fx_open(f);
  int rc = sqlq_wait(other, f->queue, 0.2);
  if (fx_now() - since < PERIOD_S) assert_status(other, rc, SQLQ_TIMEOUT);
  assert_ok(other, sqlq_wait(other, f->queue, 60));
  assert_int_equal(claim_from(other, f->queue, 4, NULL), 2);
  sqlq_close(other);
}

/* A rate and a concurrency limit together: a claim takes what both allow. */
static void rate_and_concurrency_together(void **state) {
  fixture *f = *state;
  sqlq_job_ref refs[16];
  push_to(f->db, f->queue, 20);
  assert_ok(f->db, sqlq_concurrency_set(f->db, f->queue, 3));
  assert_ok(f->db, sqlq_rate_set(f->db, f->queue, 5, PERIOD_US));
  double since = fx_now();
  assert_int_equal(claim_from(f->db, f->queue, 10, refs), 3);
  for (int i = 0; i < 3; i++) assert_ok(f->db, sqlq_ack(f->db, refs[i].id, refs[i].token));
  int n = claim_from(f->db, f->queue, 10, refs);
  if (fx_now() - since < PERIOD_S) assert_int_equal(n, 2);
  for (int i = 0; i < n; i++) assert_ok(f->db, sqlq_ack(f->db, refs[i].id, refs[i].token));
  assert_full(claim_from(f->db, f->queue, 10, refs), since);
  /* Without the rate, the concurrency limit alone. */
  assert_ok(f->db, sqlq_rate_set(f->db, f->queue, 0, 0));
  assert_int_equal(claim_from(f->db, f->queue, 10, refs), 3);
}

/* A queue without limits is not held back by another's rate. */
static void unlimited_queue_unaffected(void **state) {
  fixture *f = *state;
  char free_queue[96];
  snprintf(free_queue, sizeof free_queue, "%s.free", f->queue);
  push_to(f->db, f->queue, 10);
  push_to(f->db, free_queue, 100);
  assert_ok(f->db, sqlq_rate_set(f->db, f->queue, 1, PERIOD_US));
  assert_int_equal(claim_from(f->db, f->queue, 10, NULL), 1);
  assert_int_equal(claim_from(f->db, free_queue, 100, NULL), 100);
  assert_ok(f->db, sqlq_purge(f->db, free_queue, NULL));
}

/* A change of the rate keeps the window's starts: they count against the
** new rate. */
static void rate_change_keeps_the_starts(void **state) {
  fixture *f = *state;
  push_to(f->db, f->queue, 20);
  assert_ok(f->db, sqlq_rate_set(f->db, f->queue, 3, PERIOD_US));
  double since = fx_now();
  assert_int_equal(claim_from(f->db, f->queue, 20, NULL), 3);
  assert_ok(f->db, sqlq_rate_set(f->db, f->queue, 5, PERIOD_US));
  int n = claim_from(f->db, f->queue, 20, NULL);
  if (fx_now() - since < PERIOD_S) assert_int_equal(n, 2);
  assert_ok(f->db, sqlq_rate_set(f->db, f->queue, 2, PERIOD_US));
  assert_full(claim_from(f->db, f->queue, 20, NULL), since);
  assert_ok(f->db, sqlq_rate_set(f->db, f->queue, 0, 0));
  assert_int_equal(claim_from(f->db, f->queue, 20, NULL), 20 - 3 - n);
}

/* A retry is a start: a job failed for an immediate retry takes the
** window's next slot. */
static void retries_count_as_starts(void **state) {
  fixture *f = *state;
  push_to(f->db, f->queue, 3);
  assert_ok(f->db, sqlq_rate_set(f->db, f->queue, 2, PERIOD_US));
  double since = fx_now();
  claimed first = fx_claim_one(f->db, f, 600);
  assert_true(first.id != 0);
  sqlq_fail_options fo = SQLQ_OPTIONS_INIT(sqlq_fail_options);
  fo.retry_now = 1;
  assert_ok(f->db, sqlq_fail(f->db, first.id, first.token, "again", &fo));
  assert_int_equal(claim_from(f->db, f->queue, 3, NULL), 1);
  assert_full(claim_from(f->db, f->queue, 3, NULL), since);
}

/* The race: N_JOBS jobs under a rate of RATE_N per RATE_P_US, drained by
** N_PROCS processes of N_THREADS threads, claiming CLAIM_MAX at a time. */
enum { N_JOBS = 60, RATE_N = 4, N_PROCS = 2, N_THREADS = 4, CLAIM_MAX = 3 };
#define RATE_P_US 250000
#define RACE_LEASE_S 600

/* The race, and every job's start on the database's clock (its
** lease_until less the lease), in memory shared across the fork. */
typedef struct rate_race {
  fx_race race; /* first: the handler gets it */
  atomic_int n_starts;
  int64_t starts[N_JOBS * 2];
} rate_race;

/* Record the starts of jobs[0..n), then ack them. */
static int record_and_ack(sqlq_db *db, fx_race *race, const sqlq_job *jobs, size_t n) {
  rate_race *r = (rate_race *)race;
  int rc = SQLQ_OK;
  for (size_t i = 0; i < n; i++) {
    int at = atomic_fetch_add(&r->n_starts, 1);
    if (at < N_JOBS * 2) r->starts[at] = jobs[i].lease_until_us - RACE_LEASE_S * INT64_C(1000000);
  }
  for (size_t i = 0; i < n && rc == SQLQ_OK; i++) {
    rc = sqlq_ack(db, jobs[i].id, jobs[i].token);
    if (rc == SQLQ_OK) atomic_fetch_add(&race->done, 1);
  }
  return rc;
}

static int by_time(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Eight workers in two processes, each with its own handle, drain a queue
** with a rate of RATE_N per RATE_P_US: sorted, the starts recorded on the
** database's clock have each start and the RATE_N-th after it at least
** the period apart, so no window of the period holds more than RATE_N
** (the documented bound, exact). */
static void rate_never_exceeded_across_processes(void **state) {
  fixture *f = *state;
  fx_need_fork(); /* before it makes anything of its own */
  rate_race *r = mmap(NULL, sizeof *r, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  assert_true(r != MAP_FAILED);
  memset(r, 0, sizeof *r);
  r->race = (fx_race){.f = f,
                      .goal = N_JOBS,
                      .claim_max = CLAIM_MAX,
                      .lease = RACE_LEASE_S,
                      .handle = record_and_ack};
  push_to(f->db, f->queue, N_JOBS);
  assert_ok(f->db, sqlq_rate_set(f->db, f->queue, RATE_N, RATE_P_US));
  assert_int_equal(fx_race_run(&r->race, N_PROCS, N_THREADS), SQLQ_OK);
  int n = atomic_load(&r->n_starts);
  assert_int_equal(n, N_JOBS);
  assert_int_equal(atomic_load(&r->race.done), N_JOBS);
  qsort(r->starts, (size_t)n, sizeof r->starts[0], by_time);
  int64_t closest = INT64_MAX;
  for (int i = 0; i + RATE_N < n; i++)
    if (r->starts[i + RATE_N] - r->starts[i] < closest)
      closest = r->starts[i + RATE_N] - r->starts[i];
  print_message("rate %d per %d us: %d starts over %lld us; closest %d+1 starts %lld us apart\n",
                RATE_N, RATE_P_US, n, (long long)(r->starts[n - 1] - r->starts[0]), RATE_N,
                (long long)closest);
  assert_true(closest >= RATE_P_US);
  assert_int_equal(fx_count(f->db, f, 0), 0);
  munmap(r, sizeof *r);
}

int run_rate_tests(void) {
  const struct CMUnitTest tests[] = {
    FX_TEST(rate_setting_reads_back),
    FX_TEST(claim_takes_the_rate),
    FX_TEST(wait_sleeps_until_the_window_frees),
    FX_TEST(rate_and_concurrency_together),
    FX_TEST(unlimited_queue_unaffected),
    FX_TEST(rate_change_keeps_the_starts),
    FX_TEST(retries_count_as_starts),
    FX_TEST(rate_never_exceeded_across_processes),
  };
  return fx_run_group_from("rates", RATES_SCHEMA, tests, sizeof tests / sizeof tests[0]);
}
