/*
** test_concurrency.c -- no job is ever handed to two claimers at once,
** whether they are threads of one process (which, on SQLite, share one
** connection) or processes with connections of their own.
*/
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "harness.h"

enum { N_JOBS = 2000, N_THREADS = 4, N_PROCS = 3, CLAIM_MAX = 10 };

/* What the claiming threads share. */
typedef struct race {
  const fixture *f;
  const int64_t *ids;        /* the enqueued ids, ascending */
  atomic_int counts[N_JOBS]; /* how often each job was claimed */
  atomic_int strangers;      /* claimed ids that were never enqueued */
} race;

/* One claiming thread's state and result. */
typedef struct claimer {
  race *race;
  int status; /* the first failing status, or SQLQ_OK */
  int claimed;
} claimer;

/* The index of id in the ascending array ids of n, or -1. */
static int index_of(const int64_t *ids, int n, int64_t id) {
  int lo = 0, hi = n - 1;
  while (lo <= hi) {
    int mid = lo + (hi - lo) / 2;
    if (ids[mid] == id) return mid;
    if (ids[mid] < id)
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return -1;
}

/* Count the claimed jobs and ack them in one batch; returns the status. */
static int record_and_ack(sqlq_db *db, race *r, const sqlq_job *jobs, int n) {
  sqlq_job_ref refs[CLAIM_MAX];
  int i;
  for (i = 0; i < n; i++) {
    int at = index_of(r->ids, N_JOBS, jobs[i].id);
    if (at < 0)
      atomic_fetch_add(&r->strangers, 1);
    else
      atomic_fetch_add(&r->counts[at], 1);
    refs[i].id = jobs[i].id;
    refs[i].token = jobs[i].token;
  }
  return sqlq_ack_batch(db, refs, (size_t)n, NULL);
}

/* Claim and ack until the queue is empty, on a handle of this thread. */
static void *claim_until_empty(void *arg) {
  claimer *c = arg;
  sqlq_options opts = SQLQ_OPTIONS_INIT(sqlq_options);
  sqlq_claim_options co = SQLQ_OPTIONS_INIT(sqlq_claim_options);
  sqlq_db *db = NULL;
  opts.busy_timeout = 60;
  co.lease = 600;
  c->status = sqlq_open(c->race->f->url, &opts, &db);
  while (c->status == SQLQ_OK) {
    sqlq_job *jobs = NULL;
    size_t got = 0;
    c->status = sqlq_claim(db, c->race->f->queue, CLAIM_MAX, &co, &jobs, &got);
    int n = (int)got;
    if (c->status == SQLQ_OK && n > 0) c->status = record_and_ack(db, c->race, jobs, n);
    sqlq_jobs_free(jobs, got);
    c->claimed += n;
    if (n == 0) break;
  }
  sqlq_close(db);
  return NULL;
}

/* Enqueue N_JOBS jobs of equal priority in one batch into ids. */
static void enqueue_many(const fixture *f, int64_t *ids) {
  sqlq_job_spec *specs = calloc(N_JOBS, sizeof *specs);
  int i;
  assert_non_null(specs);
  assert_ok(f->db, sqlq_enqueue_batch(f->db, f->queue, specs, N_JOBS, ids));
  for (i = 1; i < N_JOBS; i++) assert_true(ids[i] > ids[i - 1]);
  free(specs);
}

/* Check that every job was claimed exactly once and the queue is empty. */
static void assert_each_once(const fixture *f, race *r, int total) {
  int i;
  assert_int_equal(atomic_load(&r->strangers), 0);
  for (i = 0; i < N_JOBS; i++) assert_int_equal(atomic_load(&r->counts[i]), 1);
  assert_int_equal(total, N_JOBS);
  assert_int_equal(fx_count(f->db, f, 0), 0);
}

/* A child process's claim loop (run by fx_fork): returns its status. */
static int claim_in_child(const fixture *f, void *arg) {
  claimer c;
  (void)f;
  memset(&c, 0, sizeof c);
  c.race = arg;
  claim_until_empty(&c);
  return c.status;
}

/* Four threads, each with its own handle, claim 2000 jobs concurrently:
** every job is claimed exactly once and the queue ends empty. */
static void never_two_holders(void **state) {
  fixture *f = *state;
  int64_t *ids = calloc(N_JOBS, sizeof *ids);
  race *r = calloc(1, sizeof *r);
  claimer workers[N_THREADS];
  pthread_t threads[N_THREADS];
  int i, total = 0;
  assert_non_null(ids);
  assert_non_null(r);
  enqueue_many(f, ids);
  r->f = f;
  r->ids = ids;
  memset(workers, 0, sizeof workers);
  for (i = 0; i < N_THREADS; i++) {
    workers[i].race = r;
    assert_int_equal(pthread_create(&threads[i], NULL, claim_until_empty, &workers[i]), 0);
  }
  for (i = 0; i < N_THREADS; i++) assert_int_equal(pthread_join(threads[i], NULL), 0);
  for (i = 0; i < N_THREADS; i++) {
    assert_ok(NULL, workers[i].status);
    total += workers[i].claimed;
  }
  assert_each_once(f, r, total);
  free(r);
  free(ids);
}

/* Three processes, each opening its own handle (and so, on SQLite, its own
** connection), claim 2000 jobs concurrently: every job is claimed exactly
** once.  The counts live in shared memory made before the fork. */
static void never_two_holders_across_processes(void **state) {
  fixture *f = *state;
  fx_need_fork(); /* before it makes anything of its own */
  int64_t *ids = calloc(N_JOBS, sizeof *ids);
  race *r = mmap(NULL, sizeof *r, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  fx_child children[N_PROCS];
  int i, total = 0;
  assert_non_null(ids);
  assert_true(r != MAP_FAILED);
  memset(r, 0, sizeof *r);
  enqueue_many(f, ids);
  r->f = f;
  r->ids = ids;
  for (i = 0; i < N_PROCS; i++) children[i] = fx_fork(claim_in_child, f, r);
  for (i = 0; i < N_PROCS; i++) assert_int_equal(fx_reap(&children[i]), SQLQ_OK);
  for (i = 0; i < N_JOBS; i++) total += atomic_load(&r->counts[i]);
  assert_each_once(f, r, total);
  munmap(r, sizeof *r);
  free(ids);
}

int run_concurrency_tests(void) {
  const struct CMUnitTest tests[] = {
    FX_TEST(never_two_holders),
    FX_TEST(never_two_holders_across_processes),
  };
  return FX_RUN_GROUP("concurrency", tests);
}
