/*
** test_limits.c -- concurrency limits (sqlq_concurrency_set): a claim takes
** at most the queue's free slots, across every handle and process, and a
** lease that expires frees its slot; per-group limits
** (sqlq_group_limit_set): at most N jobs of a group run at once, in id
** order.
*/
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness.h"

/* The schema version that brought concurrency limits. */
enum { LIMITS_SCHEMA = 6 };

/* The race: N_JOBS jobs, a limit of LIMIT, N_PROCS processes of N_THREADS
** claiming threads each, CLAIM_MAX jobs per claim. */
enum { N_JOBS = 300, LIMIT = 3, N_PROCS = 2, N_THREADS = 4, CLAIM_MAX = 2 };

/* Claim up to max jobs of the fixture's queue with a 30 s lease; returns
** how many, their refs in refs. */
static int claim_refs(sqlq_db *db, const fixture *f, int max, sqlq_job_ref *refs) {
  sqlq_job *jobs = NULL;
  size_t n = 0;
  sqlq_claim_options co = SQLQ_OPTIONS_INIT(sqlq_claim_options);
  co.lease = 30;
  assert_ok(db, sqlq_claim(db, f->queue, (size_t)max, &co, &jobs, &n));
  for (size_t i = 0; i < n; i++) refs[i] = (sqlq_job_ref){jobs[i].id, jobs[i].token};
  sqlq_jobs_free(jobs, n);
  return (int)n;
}

static void push_n(const fixture *f, int n) {
  for (int i = 0; i < n; i++) fx_push(f->db, f, "x", 0);
}

/* The setting reads back; 0 is no limit, also for an unknown queue; a
** negative or over-large limit is refused and changes nothing. */
static void setting_reads_back(void **state) {
  fixture *f = *state;
  int64_t v = -1;
  assert_ok(f->db, sqlq_concurrency_get(f->db, f->queue, &v));
  assert_int_equal(v, 0);
  assert_ok(f->db, sqlq_concurrency_set(f->db, f->queue, 3));
  assert_ok(f->db, sqlq_concurrency_get(f->db, f->queue, &v));
  assert_int_equal(v, 3);
  assert_status(f->db, sqlq_concurrency_set(f->db, f->queue, -1), SQLQ_MISUSE);
  assert_status(f->db, sqlq_concurrency_set(f->db, f->queue, SQLQ_MAX_RUNNING_MAX + 1),
                SQLQ_MISUSE);
  assert_status(f->db, sqlq_concurrency_set(f->db, "", 1), SQLQ_MISUSE);
  assert_ok(f->db, sqlq_concurrency_get(f->db, f->queue, &v));
  assert_int_equal(v, 3);
  assert_ok(f->db, sqlq_concurrency_set(f->db, f->queue, 0));
  assert_ok(f->db, sqlq_concurrency_get(f->db, f->queue, &v));
  assert_int_equal(v, 0);
}

/* A claim takes at most the free slots; an ack frees one; a claim of a
** full queue returns no job (not an error). */
static void claim_takes_free_slots(void **state) {
  fixture *f = *state;
  sqlq_job_ref refs[16];
  push_n(f, 10);
  assert_ok(f->db, sqlq_concurrency_set(f->db, f->queue, 3));
  assert_int_equal(claim_refs(f->db, f, 10, refs), 3);
  sqlq_db *other = fx_open(f);
  sqlq_job_ref more[16];
  assert_int_equal(claim_refs(other, f, 10, more), 0);
  assert_ok(f->db, sqlq_ack(f->db, refs[0].id, refs[0].token));
  assert_int_equal(claim_refs(other, f, 10, more), 1);
  assert_int_equal(claim_refs(other, f, 10, more), 0);
  fx_assert_counts(f->db, f, 6, 0, 3, 0);
  /* Without the limit, the rest come at once. */
  assert_ok(f->db, sqlq_concurrency_set(f->db, f->queue, 0));
  assert_int_equal(claim_refs(other, f, 10, more), 6);
  sqlq_close(other);
}

/* Lowering the limit below the running jobs lets them run; claims wait
** until fewer run than the new limit. */
static void lowered_limit_waits_for_the_running(void **state) {
  fixture *f = *state;
  sqlq_job_ref refs[16], more[16];
  push_n(f, 6);
  assert_int_equal(claim_refs(f->db, f, 3, refs), 3);
  assert_ok(f->db, sqlq_concurrency_set(f->db, f->queue, 2));
  assert_int_equal(claim_refs(f->db, f, 3, more), 0);
  assert_ok(f->db, sqlq_ack(f->db, refs[0].id, refs[0].token));
  assert_int_equal(claim_refs(f->db, f, 3, more), 0);
  assert_ok(f->db, sqlq_ack(f->db, refs[1].id, refs[1].token));
  assert_int_equal(claim_refs(f->db, f, 3, more), 1);
}

/* A job whose lease expired no longer holds its slot: the next claim takes
** it back (or another job), and the old token is stale. */
static void expired_lease_frees_its_slot(void **state) {
  fixture *f = *state;
  push_n(f, 2);
  assert_ok(f->db, sqlq_concurrency_set(f->db, f->queue, 1));
  claimed first = fx_claim_one(f->db, f, 0.2);
  assert_true(first.id != 0);
  claimed next = {0};
  double deadline = fx_now() + 30;
  while (next.id == 0 && fx_now() < deadline) {
    next = fx_claim_one(f->db, f, 30);
    if (next.id == 0) fx_sleep(0.05);
  }
  assert_true(next.id != 0);
  assert_status(f->db, sqlq_ack(f->db, first.id, first.token), SQLQ_STALE);
  /* The slot is the new holder's. */
  assert_int_equal(fx_claim_one(f->db, f, 30).id, 0);
}

/* A paused limited queue says it is paused. */
static void paused_limited_queue_says_paused(void **state) {
  fixture *f = *state;
  sqlq_job *jobs = NULL;
  size_t n = 0;
  push_n(f, 1);
  assert_ok(f->db, sqlq_concurrency_set(f->db, f->queue, 1));
  assert_ok(f->db, sqlq_pause(f->db, f->queue));
  assert_status(f->db, sqlq_claim(f->db, f->queue, 1, NULL, &jobs, &n), SQLQ_PAUSED);
  assert_ok(f->db, sqlq_resume(f->db, f->queue));
  assert_int_equal(fx_claim_one(f->db, f, 30).id != 0, 1);
}

/* A wait on a full queue sleeps (its ready jobs are not due for it) until
** an ack frees a slot. */
static void wait_sleeps_while_full(void **state) {
  fixture *f = *state;
  sqlq_job_ref refs[4];
  push_n(f, 3);
  assert_ok(f->db, sqlq_concurrency_set(f->db, f->queue, 1));
  assert_int_equal(claim_refs(f->db, f, 1, refs), 1);
  sqlq_db *other = fx_open(f);
  assert_status(other, sqlq_wait(other, f->queue, 0.2), SQLQ_TIMEOUT);
  assert_ok(f->db, sqlq_ack(f->db, refs[0].id, refs[0].token));
  assert_ok(other, sqlq_wait(other, f->queue, 30));
  sqlq_close(other);
}

/* The counters of the race: the queue's, then those of its groups "a"
** and "b". */
enum { ALL, GROUP_A, GROUP_B, N_COUNTERS };

/* The race, and the workers' own counts of the jobs running, in memory
** shared across the fork. */
typedef struct limit_race {
  fx_race race;                   /* first: the handler gets it */
  atomic_int running[N_COUNTERS]; /* jobs claimed and not yet acked, by the
                                     workers' own count */
  atomic_int most[N_COUNTERS];    /* the most seen at once */
} limit_race;

/* The counter of job's group, or -1. */
static int group_counter(const sqlq_job *job) {
  if (job->group_key == NULL) return -1;
  return strcmp(job->group_key, "a") == 0 ? GROUP_A : GROUP_B;
}

/* Count n more jobs running on counter i, noting the most at once. */
static void count_on(limit_race *r, int i, int n) {
  int now = atomic_fetch_add(&r->running[i], n) + n;
  int most = atomic_load(&r->most[i]);
  while (now > most && !atomic_compare_exchange_weak(&r->most[i], &most, now)) {}
}

/* Count job out of its counters. */
static void count_out(limit_race *r, const sqlq_job *job) {
  atomic_fetch_sub(&r->running[ALL], 1);
  if (group_counter(job) >= 0) atomic_fetch_sub(&r->running[group_counter(job)], 1);
}

/* Handle the jobs just claimed: count them in (a worker's jobs hold their
** slots from the claim until their acks), then run each handler: hold its
** slot a moment, and count it out before the ack frees the slot. */
static int handle(sqlq_db *db, fx_race *race, const sqlq_job *jobs, size_t n) {
  limit_race *r = (limit_race *)race;
  int rc = SQLQ_OK;
  count_on(r, ALL, (int)n);
  for (size_t i = 0; i < n; i++)
    if (group_counter(&jobs[i]) >= 0) count_on(r, group_counter(&jobs[i]), 1);
  for (size_t i = 0; i < n && rc == SQLQ_OK; i++) {
    usleep(1000);
    count_out(r, &jobs[i]);
    rc = sqlq_ack(db, jobs[i].id, jobs[i].token);
    if (rc == SQLQ_OK) atomic_fetch_add(&race->done, 1);
  }
  return rc;
}

/* Run the race on the fixture's queue, whose N_JOBS jobs have the group
** keys groups (NULL: none) in turn, after set(f) set its limits: every job
** is done.  Returns the shared counters (munmap them). */
static limit_race *run_race(const fixture *f, const char *const *groups, size_t n_groups,
                            void (*set)(const fixture *f)) {
  fx_need_fork(); /* before it makes anything of its own */
  limit_race *r = mmap(NULL, sizeof *r, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  assert_true(r != MAP_FAILED);
  memset(r, 0, sizeof *r);
  r->race =
    (fx_race){.f = f, .goal = N_JOBS, .claim_max = CLAIM_MAX, .lease = 600, .handle = handle};
  sqlq_job_spec *specs = calloc(N_JOBS, sizeof *specs);
  assert_non_null(specs);
  for (size_t i = 0; i < N_JOBS; i++) specs[i].group_key = groups[i % n_groups];
  assert_ok(f->db, sqlq_enqueue_batch(f->db, f->queue, specs, N_JOBS, NULL));
  free(specs);
  set(f);
  assert_int_equal(fx_race_run(&r->race, N_PROCS, N_THREADS), SQLQ_OK);
  assert_int_equal(atomic_load(&r->race.done), N_JOBS);
  assert_int_equal(fx_count(f->db, f, 0), 0);
  return r;
}

static void set_queue_limit(const fixture *f) {
  assert_ok(f->db, sqlq_concurrency_set(f->db, f->queue, LIMIT));
}

/* Eight workers in two processes, each with its own handle, drain a queue
** limited to LIMIT: the workers, counting their jobs in shared memory
** from the claim until just before the ack, never see more than LIMIT of
** them running at once, and every job is done. */
static void limit_never_exceeded_across_processes(void **state) {
  fixture *f = *state;
  static const char *const none[] = {NULL};
  limit_race *r = run_race(f, none, 1, set_queue_limit);
  print_message("limit %d: at most %d jobs ran at once\n", LIMIT, atomic_load(&r->most[ALL]));
  assert_true(atomic_load(&r->most[ALL]) <= LIMIT);
  munmap(r, sizeof *r);
}

/* ---------------------------------------------------------------------
** Per-group limits (schema version 10).
*/

enum { GROUPS_SCHEMA = 10 };

/* The ids of up to max jobs claimed, in claim order (priority, run_at,
** id), into ids; returns how many. */
static int claim_ids(sqlq_db *db, const fixture *f, int max, int64_t *ids, sqlq_job_ref *refs) {
  int n = claim_refs(db, f, max, refs);
  for (int i = 0; i < n; i++) ids[i] = refs[i].id;
  return n;
}

static int64_t push_group(const fixture *f, const char *group) {
  sqlq_job_spec spec = {.group_key = group};
  return fx_push_spec(f->db, f, &spec);
}

/* The setting reads back: 1 unless set, also for an unknown queue; one
** below 1 or above SQLQ_MAX_RUNNING_MAX is refused and changes nothing. */
static void group_setting_reads_back(void **state) {
  fixture *f = *state;
  int64_t v = -1;
  assert_ok(f->db, sqlq_group_limit_get(f->db, f->queue, &v));
  assert_int_equal(v, 1);
  assert_ok(f->db, sqlq_group_limit_set(f->db, f->queue, 3));
  assert_ok(f->db, sqlq_group_limit_get(f->db, f->queue, &v));
  assert_int_equal(v, 3);
  assert_status(f->db, sqlq_group_limit_set(f->db, f->queue, 0), SQLQ_MISUSE);
  assert_status(f->db, sqlq_group_limit_set(f->db, f->queue, -2), SQLQ_MISUSE);
  assert_status(f->db, sqlq_group_limit_set(f->db, f->queue, SQLQ_MAX_RUNNING_MAX + 1),
                SQLQ_MISUSE);
  assert_status(f->db, sqlq_group_limit_set(f->db, "", 2), SQLQ_MISUSE);
  assert_ok(f->db, sqlq_group_limit_get(f->db, f->queue, &v));
  assert_int_equal(v, 3);
  /* The queue's concurrency limit is another setting. */
  assert_ok(f->db, sqlq_concurrency_get(f->db, f->queue, &v));
  assert_int_equal(v, 0);
  assert_ok(f->db, sqlq_group_limit_set(f->db, f->queue, 1));
  assert_ok(f->db, sqlq_group_limit_get(f->db, f->queue, &v));
  assert_int_equal(v, 1);
}

/* Unset, a group runs one job at a time; with a limit of 3, three, the
** earliest first, and an ack lets the next in id order start.  Jobs
** without a group are not limited. */
static void group_limit_starts_n_in_id_order(void **state) {
  fixture *f = *state;
  int64_t g[5], h[2], ids[16];
  sqlq_job_ref heads[16], refs[16];
  for (int i = 0; i < 5; i++) g[i] = push_group(f, "g");
  for (int i = 0; i < 2; i++) h[i] = push_group(f, "h");
  int64_t free_job = push_group(f, NULL);
  sqlq_db *other = fx_open(f);
  /* One at a time: the heads. */
  assert_int_equal(claim_ids(other, f, 16, ids, heads), 3);
  assert_int_equal(ids[0], g[0]);
  assert_int_equal(ids[1], h[0]);
  assert_int_equal(ids[2], free_job);
  assert_int_equal(claim_ids(other, f, 16, ids, refs), 0);
  /* Three at a time: two more of g, one more of h. */
  assert_ok(f->db, sqlq_group_limit_set(f->db, f->queue, 3));
  assert_int_equal(claim_ids(other, f, 16, ids, refs), 3);
  assert_int_equal(ids[0], g[1]);
  assert_int_equal(ids[1], g[2]);
  assert_int_equal(ids[2], h[1]);
  assert_int_equal(claim_ids(other, f, 16, ids, refs), 0);
  /* The ack of g's first lets its fourth start, never its fifth. */
  assert_ok(other, sqlq_ack(other, heads[0].id, heads[0].token));
  assert_int_equal(claim_ids(other, f, 16, ids, refs), 1);
  assert_int_equal(ids[0], g[3]);
  assert_int_equal(claim_ids(other, f, 16, ids, refs), 0);
  /* Back to one: g's three running finish before its fifth starts. */
  assert_ok(f->db, sqlq_group_limit_set(f->db, f->queue, 1));
  assert_int_equal(fx_count(f->db, f, SQLQ_STATE_READY), 1);
  assert_int_equal(claim_ids(other, f, 16, ids, refs), 0);
  sqlq_close(other);
}

/* A wait on a queue whose groups are all at their limit sleeps until an
** ack makes room; a raised limit wakes it. */
static void wait_sleeps_while_groups_full(void **state) {
  fixture *f = *state;
  sqlq_job_ref refs[4];
  for (int i = 0; i < 3; i++) push_group(f, "g");
  assert_int_equal(claim_refs(f->db, f, 4, refs), 1);
  sqlq_db *other = fx_open(f);
  assert_status(other, sqlq_wait(other, f->queue, 0.2), SQLQ_TIMEOUT);
  assert_ok(f->db, sqlq_group_limit_set(f->db, f->queue, 2));
  assert_ok(other, sqlq_wait(other, f->queue, 30));
  assert_int_equal(claim_refs(other, f, 4, refs + 1), 1);
  assert_status(other, sqlq_wait(other, f->queue, 0.2), SQLQ_TIMEOUT);
  assert_ok(f->db, sqlq_ack(f->db, refs[0].id, refs[0].token));
  assert_ok(other, sqlq_wait(other, f->queue, 30));
  sqlq_close(other);
}

static void set_group_limit(const fixture *f) {
  assert_ok(f->db, sqlq_group_limit_set(f->db, f->queue, LIMIT));
}

static void set_nothing(const fixture *f) {
  (void)f;
}

/* Eight workers in two processes drain a queue of two groups with a
** per-group limit of LIMIT: neither group ever has more than LIMIT jobs
** running at once, by the workers' count in shared memory. */
static void group_limit_never_exceeded_across_processes(void **state) {
  fixture *f = *state;
  static const char *const groups[] = {"a", "b"};
  limit_race *r = run_race(f, groups, 2, set_group_limit);
  print_message("per-group limit %d: at most %d of a, %d of b ran at once\n", LIMIT,
                atomic_load(&r->most[GROUP_A]), atomic_load(&r->most[GROUP_B]));
  assert_true(atomic_load(&r->most[GROUP_A]) <= LIMIT);
  assert_true(atomic_load(&r->most[GROUP_B]) <= LIMIT);
  munmap(r, sizeof *r);
}

static void set_fair_group_limit(const fixture *f) {
  assert_ok(f->db, sqlq_group_limit_set(f->db, f->queue, LIMIT));
  assert_ok(f->db, sqlq_fair_set(f->db, f->queue, 1));
}

/* The same race on a fair queue (schema version 10, "Fair claiming"): its
** claims keep the per-group limit too. */
static void fair_group_limit_never_exceeded_across_processes(void **state) {
  fixture *f = *state;
  static const char *const groups[] = {"a", "b"};
  limit_race *r = run_race(f, groups, 2, set_fair_group_limit);
  print_message("fair, per-group limit %d: at most %d of a, %d of b ran at once\n", LIMIT,
                atomic_load(&r->most[GROUP_A]), atomic_load(&r->most[GROUP_B]));
  assert_true(atomic_load(&r->most[GROUP_A]) <= LIMIT);
  assert_true(atomic_load(&r->most[GROUP_B]) <= LIMIT);
  munmap(r, sizeof *r);
}

/* The same race without the setting: one job of a group at a time. */
static void fifo_groups_across_processes(void **state) {
  fixture *f = *state;
  static const char *const groups[] = {"a", "b"};
  limit_race *r = run_race(f, groups, 2, set_nothing);
  assert_true(atomic_load(&r->most[GROUP_A]) <= 1);
  assert_true(atomic_load(&r->most[GROUP_B]) <= 1);
  munmap(r, sizeof *r);
}

int run_limit_tests(void) {
  const struct CMUnitTest tests[] = {
    FX_TEST(setting_reads_back),
    FX_TEST(claim_takes_free_slots),
    FX_TEST(lowered_limit_waits_for_the_running),
    FX_TEST(expired_lease_frees_its_slot),
    FX_TEST(paused_limited_queue_says_paused),
    FX_TEST(wait_sleeps_while_full),
    FX_TEST(limit_never_exceeded_across_processes),
  };
  const struct CMUnitTest group_tests[] = {
    FX_TEST(group_setting_reads_back),
    FX_TEST(group_limit_starts_n_in_id_order),
    FX_TEST(wait_sleeps_while_groups_full),
    FX_TEST(group_limit_never_exceeded_across_processes),
    FX_TEST(fifo_groups_across_processes),
    FX_TEST(fair_group_limit_never_exceeded_across_processes),
  };
  int failed = fx_run_group_from("limits", LIMITS_SCHEMA, tests, sizeof tests / sizeof tests[0]);
  return failed + fx_run_group_from("group_limits", GROUPS_SCHEMA, group_tests,
                                    sizeof group_tests / sizeof group_tests[0]);
}
