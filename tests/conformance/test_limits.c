/*
** test_limits.c -- concurrency limits (sqlq_concurrency_set): a claim takes
** at most the queue's free slots, across every handle and process, and a
** lease that expires frees its slot.
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

/* The race, and the workers' own count of the jobs running, in memory
** shared across the fork. */
typedef struct limit_race {
  fx_race race;       /* first: the handler gets it */
  atomic_int running; /* jobs claimed and not yet acked, by the workers'
                         own count */
  atomic_int most;    /* the most seen at once */
} limit_race;

/* Count n jobs just claimed as running, noting the most at once: a
** worker's jobs hold their slots from the claim until their acks. */
static void count_in(limit_race *r, int n) {
  int now = atomic_fetch_add(&r->running, n) + n;
  int most = atomic_load(&r->most);
  while (now > most && !atomic_compare_exchange_weak(&r->most, &most, now)) {}
}

/* Handle the jobs just claimed: count them in, then run each handler:
** hold its slot a moment, and count it out before the ack frees the
** slot. */
static int handle(sqlq_db *db, fx_race *race, const sqlq_job *jobs, size_t n) {
  limit_race *r = (limit_race *)race;
  int rc = SQLQ_OK;
  count_in(r, (int)n);
  for (size_t i = 0; i < n && rc == SQLQ_OK; i++) {
    usleep(1000);
    atomic_fetch_sub(&r->running, 1);
    rc = sqlq_ack(db, jobs[i].id, jobs[i].token);
    if (rc == SQLQ_OK) atomic_fetch_add(&race->done, 1);
  }
  return rc;
}

/* Eight workers in two processes, each with its own handle, drain a queue
** limited to LIMIT: the workers, counting their jobs in shared memory
** from the claim until just before the ack, never see more than LIMIT of
** them running at once, and every job is done. */
static void limit_never_exceeded_across_processes(void **state) {
  fixture *f = *state;
  fx_need_fork(); /* before it makes anything of its own */
  limit_race *r = mmap(NULL, sizeof *r, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  assert_true(r != MAP_FAILED);
  memset(r, 0, sizeof *r);
  r->race =
    (fx_race){.f = f, .goal = N_JOBS, .claim_max = CLAIM_MAX, .lease = 600, .handle = handle};
  sqlq_job_spec *specs = calloc(N_JOBS, sizeof *specs);
  assert_non_null(specs);
  assert_ok(f->db, sqlq_enqueue_batch(f->db, f->queue, specs, N_JOBS, NULL));
  free(specs);
  assert_ok(f->db, sqlq_concurrency_set(f->db, f->queue, LIMIT));
  assert_int_equal(fx_race_run(&r->race, N_PROCS, N_THREADS), SQLQ_OK);
  print_message("limit %d: at most %d jobs ran at once\n", LIMIT, atomic_load(&r->most));
  assert_true(atomic_load(&r->most) <= LIMIT);
  assert_int_equal(atomic_load(&r->race.done), N_JOBS);
  assert_int_equal(fx_count(f->db, f, 0), 0);
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
  return fx_run_group_from("limits", LIMITS_SCHEMA, tests, sizeof tests / sizeof tests[0]);
}
