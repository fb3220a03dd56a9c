/*
** test_deps.c -- dependencies (schema version 7): jobs that wait for
** others to succeed, a fan-out/fan-in batch across processes, the race of
** an enqueue with the ack of what it waits for, death and purge.
*/
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "harness.h"

/* Enqueue one job on queue after the n jobs after; returns its id. */
static int64_t push_after(sqlq_db *db, const char *queue, const int64_t *after, size_t n) {
  sqlq_job_spec spec = {.payload = "after", .payload_len = 5};
  int64_t id = 0;
  assert_ok(db, sqlq_enqueue_after(db, queue, &spec, 1, after, n, &id));
  assert_true(id > 0);
  return id;
}

/* The state sqlq_list() gives job id of the fixture's queue (0: none). */
static int state_of(const fixture *f, int64_t id) {
  found fd = fx_find(f->db, f, id);
  int state = fd.job ? fd.job->state : 0;
  fx_found_free(&fd);
  return state;
}

/* Claim job id of queue (nothing else may come) and ack it. */
static void run_job(sqlq_db *db, const char *queue, int64_t id) {
  sqlq_job *jobs = NULL;
  size_t n = 0;
  assert_ok(db, sqlq_claim(db, queue, 1, NULL, &jobs, &n));
  assert_int_equal(n, 1);
  assert_int_equal(jobs[0].id, id);
  assert_ok(db, sqlq_ack(db, jobs[0].id, jobs[0].token));
  sqlq_jobs_free(jobs, n);
}

/* A job after five: listed as waiting, never claimed, until the last of
** the five is acked; then it is ready, once. */
static void fan_in_waits_for_all(void **state) {
  fixture *f = *state;
  int64_t ids[5];
  sqlq_job_spec specs[5] = {{0}};
  assert_ok(f->db, sqlq_enqueue_batch(f->db, f->queue, specs, 5, ids));
  int64_t last = push_after(f->db, f->queue, ids, 5);
  assert_int_equal(state_of(f, last), SQLQ_STATE_WAITING);
  assert_int_equal(fx_count(f->db, f, SQLQ_STATE_WAITING), 1);
  fx_assert_counts(f->db, f, 5, 1, 0, 0); /* a waiting job counts as scheduled */
  for (int i = 0; i < 5; i++) {
    assert_int_equal(state_of(f, last), SQLQ_STATE_WAITING);
    run_job(f->db, f->queue, ids[i]);
  }
  assert_int_equal(state_of(f, last), SQLQ_STATE_READY);
  run_job(f->db, f->queue, last);
  assert_int_equal(fx_count(f->db, f, 0), 0);
}

/* Jobs that finished already, and repeated ids, are not waited for. */
static void finished_and_repeated_ids(void **state) {
  fixture *f = *state;
  int64_t a = fx_push(f->db, f, "a", 0), b = fx_push(f->db, f, "b", 0);
  run_job(f->db, f->queue, a);
  int64_t after[] = {a, b, b, a, b};
  int64_t c = push_after(f->db, f->queue, after, 5);
  assert_int_equal(state_of(f, c), SQLQ_STATE_WAITING);
  run_job(f->db, f->queue, b);
  assert_int_equal(state_of(f, c), SQLQ_STATE_READY);
  int64_t d = push_after(f->db, f->queue, &a, 1); /* a is done */
  assert_int_equal(state_of(f, d), SQLQ_STATE_READY);
}

/* Bad lists of ids store nothing. */
static void bad_ids_are_refused(void **state) {
  fixture *f = *state;
  sqlq_job_spec spec = {0};
  int64_t a = fx_push(f->db, f, "a", 0), id = 0;
  int64_t zero[] = {a, 0}, negative[] = {-5}, future[] = {a, a + 1000000};
  int64_t *many = calloc(SQLQ_AFTER_MAX + 1, sizeof *many);
  assert_non_null(many);
  for (int i = 0; i <= SQLQ_AFTER_MAX; i++) many[i] = a;
  assert_status(f->db, sqlq_enqueue_after(f->db, f->queue, &spec, 1, zero, 2, &id), SQLQ_MISUSE);
  assert_status(f->db, sqlq_enqueue_after(f->db, f->queue, &spec, 1, negative, 1, &id),
                SQLQ_MISUSE);
  assert_status(f->db, sqlq_enqueue_after(f->db, f->queue, &spec, 1, NULL, 1, &id), SQLQ_MISUSE);
  assert_status(f->db, sqlq_enqueue_after(f->db, f->queue, &spec, 1, &a, 0, &id), SQLQ_MISUSE);
  assert_status(f->db, sqlq_enqueue_after(f->db, f->queue, &spec, 1, many, SQLQ_AFTER_MAX + 1, &id),
                SQLQ_MISUSE);
  assert_status(f->db, sqlq_enqueue_after(f->db, f->queue, &spec, 1, future, 2, &id),
                SQLQ_NOTFOUND);
  assert_status(f->db, sqlq_enqueue_after(f->db, "", &spec, 1, &a, 1, &id), SQLQ_MISUSE);
  assert_int_equal(fx_count(f->db, f, 0), 1);
  /* SQLQ_AFTER_MAX ids, all the same, are fine. */
  assert_ok(f->db, sqlq_enqueue_after(f->db, f->queue, &spec, 1, many, SQLQ_AFTER_MAX, &id));
  assert_int_equal(state_of(f, id), SQLQ_STATE_WAITING);
  free(many);
}

/* A dependent's delay counts from its release; several jobs after one. */
static void delay_counts_from_release(void **state) {
  fixture *f = *state;
  int64_t a = fx_push(f->db, f, "a", 0), ids[2];
  sqlq_job_spec specs[2] = {{.delay = 3600}, {.priority = 3}};
  assert_ok(f->db, sqlq_enqueue_after(f->db, f->queue, specs, 2, &a, 1, ids));
  assert_int_equal(state_of(f, ids[0]), SQLQ_STATE_WAITING);
  assert_int_equal(state_of(f, ids[1]), SQLQ_STATE_WAITING);
  run_job(f->db, f->queue, a);
  assert_int_equal(state_of(f, ids[0]), SQLQ_STATE_SCHEDULED);
  run_job(f->db, f->queue, ids[1]);
}

/* A dependency that dies keeps its dependent waiting; retried and acked,
** it lets the dependent run. */
static void dead_dependency_then_retry(void **state) {
  fixture *f = *state;
  sqlq_job_spec once = {.max_attempts = 1};
  int64_t a = fx_push_spec(f->db, f, &once);
  int64_t c = push_after(f->db, f->queue, &a, 1);
  claimed j = fx_claim_one(f->db, f, 30);
  assert_int_equal(j.id, a);
  assert_ok(f->db, sqlq_fail(f->db, j.id, j.token, "boom", NULL));
  assert_int_equal(state_of(f, a), SQLQ_STATE_DEAD);
  assert_int_equal(state_of(f, c), SQLQ_STATE_WAITING);
  assert_int_equal(fx_claim_one(f->db, f, 30).id, 0);
  size_t n = 0;
  assert_ok(f->db, sqlq_retry(f->db, f->queue, &a, 1, &n));
  assert_int_equal(n, 1);
  run_job(f->db, f->queue, a);
  run_job(f->db, f->queue, c);
}

/* A dependency purged before it succeeded kills its dependents on other
** queues, naming it; sqlq_retry() with a waiting job's id runs it now. */
static void purge_kills_and_retry_releases(void **state) {
  fixture *f = *state;
  char other[128];
  fx_name(f, "up", other, sizeof other);
  sqlq_job_spec spec = {0};
  int64_t a = 0, b = fx_push(f->db, f, "b", 0);
  assert_ok(f->db, sqlq_enqueue(f->db, other, &spec, &a, NULL));
  int64_t after[] = {a, b};
  int64_t c = push_after(f->db, f->queue, after, 2);
  int64_t d = push_after(f->db, f->queue, &b, 1);
  size_t n = 0;
  assert_ok(f->db, sqlq_purge(f->db, other, &n));
  assert_int_equal(n, 1);
  found fd = fx_find(f->db, f, c);
  assert_non_null(fd.job);
  assert_int_equal(fd.job->state, SQLQ_STATE_DEAD);
  char want[64];
  snprintf(want, sizeof want, "dependency %lld was purged", (long long)a);
  assert_non_null(fd.job->last_error);
  assert_non_null(strstr(fd.job->last_error, want));
  fx_found_free(&fd);
  assert_int_equal(state_of(f, d), SQLQ_STATE_WAITING);
  assert_ok(f->db, sqlq_retry(f->db, f->queue, &d, 1, &n));
  assert_int_equal(state_of(f, d), SQLQ_STATE_READY);
  run_job(f->db, f->queue, b); /* b first: the lower id */
  run_job(f->db, f->queue, d);
}

/* Batch acks, with history and without, release what they finish; a stale
** ref among them is reported and the others still count. */
static void batch_acks_release(void **state) {
  fixture *f = *state;
  for (int history = 0; history < 2; history++) {
    sqlq_db *h = NULL;
    assert_ok(h, fx_open_with(f, history ? "history=1" : "history=0", NULL, &h));
    int64_t ids[3];
    sqlq_job_spec specs[3] = {{0}};
    assert_ok(h, sqlq_enqueue_batch(h, f->queue, specs, 3, ids));
    int64_t c = push_after(h, f->queue, ids, 2); /* after the first two */
    sqlq_job *jobs = NULL;
    size_t n = 0, acked = 0;
    assert_ok(h, sqlq_claim(h, f->queue, 3, NULL, &jobs, &n));
    assert_int_equal(n, 3);
    sqlq_job_ref refs[4];
    for (size_t i = 0; i < 3; i++) refs[i] = (sqlq_job_ref){jobs[i].id, jobs[i].token};
    refs[3] = (sqlq_job_ref){jobs[0].id, jobs[0].token + 1};
    assert_status(h, sqlq_ack_batch(h, refs, 4, &acked), SQLQ_STALE);
    assert_int_equal(acked, 3);
    sqlq_jobs_free(jobs, n);
    run_job(h, f->queue, c);
    sqlq_close(h);
  }
}

/* What release_wakes_a_waiter's child shares with it. */
typedef struct waiter {
  int64_t want;      /* the job the child must get */
  atomic_int asleep; /* set as it first goes to wait */
} waiter;

/* Claim and ack the next job of the fixture's queue, waiting for it with
** sqlq_wait(), for at most 60 s: SQLQ_OK when it is w->want. */
static int wait_in_child(const fixture *f, void *arg) {
  waiter *w = arg;
  sqlq_db *db = fx_open(f);
  double deadline = fx_now() + 60;
  int64_t got = 0;
  int rc = SQLQ_OK;
  while (rc == SQLQ_OK && got == 0 && fx_now() < deadline) {
    sqlq_job *jobs = NULL;
    size_t n = 0;
    rc = sqlq_claim(db, f->queue, 1, NULL, &jobs, &n);
    if (rc == SQLQ_OK && n == 1) {
      got = jobs[0].id;
      rc = sqlq_ack(db, jobs[0].id, jobs[0].token);
    } else if (rc == SQLQ_OK) {
      atomic_store(&w->asleep, 1);
      rc = sqlq_wait(db, f->queue, deadline - fx_now());
      if (rc == SQLQ_TIMEOUT) rc = SQLQ_OK;
    }
    sqlq_jobs_free(jobs, n);
  }
  sqlq_close(db);
  return rc != SQLQ_OK ? rc : got == w->want ? SQLQ_OK : SQLQ_NOTFOUND;
}

/* A worker of another process, waiting on the dependent's queue (whose
** only other job runs), wakes when the ack that releases the dependent
** commits: its wait has no timer to end it, only that wake-up. */
static void release_wakes_a_waiter(void **state) {
  fixture *f = *state;
  fx_need_fork();
  waiter *w = mmap(NULL, sizeof *w, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  assert_true(w != MAP_FAILED);
  memset(w, 0, sizeof *w);
  int64_t a = fx_push(f->db, f, "a", 0);
  claimed j = fx_claim_one(f->db, f, 120);
  assert_int_equal(j.id, a);
  w->want = push_after(f->db, f->queue, &a, 1);
  fx_child c = fx_fork(wait_in_child, f, w);
  /* Ack once the child goes to wait (whether it is asleep yet or not, it
  ** must get the job: the pause only makes the wake-up the likely way). */
  for (double until = fx_now() + 30; !atomic_load(&w->asleep) && fx_now() < until;) fx_sleep(0.01);
  fx_sleep(0.2);
  assert_ok(f->db, sqlq_ack(f->db, j.id, j.token));
  assert_int_equal(fx_reap(&c), SQLQ_OK);
  munmap(w, sizeof *w);
}

/* ---------------------------------------------------------------------
** Across processes.
*/

#define FAN_N 40
#define FAN_PROCS 2
#define FAN_THREADS 2

/* What the workers of fan_in_across_processes share. */
typedef struct fan {
  int64_t fan_in;
  atomic_int acked;       /* jobs of the batch acked */
  atomic_int fan_in_runs; /* claims of the fan-in job */
  atomic_int early;       /* claims of it before every other was acked */
} fan;

typedef struct fan_worker {
  const fixture *f;
  fan *fan;
  int status;
} fan_worker;

static void *fan_work(void *arg) {
  fan_worker *w = arg;
  sqlq_db *db = fx_open(w->f);
  double until = fx_now() + 120;
  while (atomic_load(&w->fan->fan_in_runs) == 0 && fx_now() < until && w->status == SQLQ_OK) {
    sqlq_job *jobs = NULL;
    size_t n = 0;
    int rc = sqlq_claim(db, w->f->queue, 1, NULL, &jobs, &n);
    if (rc == SQLQ_OK && n == 0) rc = sqlq_wait(db, w->f->queue, 0.5);
    if (rc == SQLQ_TIMEOUT) rc = SQLQ_OK;
    if (rc == SQLQ_OK && n == 1) {
      if (jobs[0].id == w->fan->fan_in) {
        /* Every other job of the queue is gone, acked. */
        if (fx_count(db, w->f, 0) != 1) atomic_fetch_add(&w->fan->early, 1);
        atomic_fetch_add(&w->fan->fan_in_runs, 1);
      }
      rc = sqlq_ack(db, jobs[0].id, jobs[0].token);
      if (rc == SQLQ_OK && jobs[0].id != w->fan->fan_in) atomic_fetch_add(&w->fan->acked, 1);
    }
    sqlq_jobs_free(jobs, n);
    if (rc != SQLQ_OK && rc != SQLQ_BUSY) w->status = rc;
  }
  sqlq_close(db);
  return NULL;
}

/* A process's workers: FAN_THREADS threads, each with a handle. */
static int fan_process(const fixture *f, void *arg) {
  fan_worker w[FAN_THREADS];
  pthread_t t[FAN_THREADS];
  int status = SQLQ_OK;
  for (int i = 0; i < FAN_THREADS; i++) {
    w[i] = (fan_worker){.f = f, .fan = arg};
    if (pthread_create(&t[i], NULL, fan_work, &w[i]) != 0) return SQLQ_ERROR;
  }
  for (int i = 0; i < FAN_THREADS; i++) {
    pthread_join(t[i], NULL);
    if (w[i].status != SQLQ_OK) status = w[i].status;
  }
  return status;
}

/* Fan-out/fan-in: FAN_N jobs and one after them all, worked by several
** workers in two processes: the fan-in job runs once, after the last. */
static void fan_in_across_processes(void **state) {
  fixture *f = *state;
  fx_need_fork();
  fan *shared =
    mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  assert_true(shared != MAP_FAILED);
  memset(shared, 0, sizeof *shared);
  int64_t ids[FAN_N];
  sqlq_job_spec specs[FAN_N] = {{0}};
  assert_ok(f->db, sqlq_begin(f->db));
  assert_ok(f->db, sqlq_enqueue_batch(f->db, f->queue, specs, FAN_N, ids));
  shared->fan_in = push_after(f->db, f->queue, ids, FAN_N);
  assert_ok(f->db, sqlq_commit(f->db));
  fx_child c[FAN_PROCS];
  for (int i = 0; i < FAN_PROCS; i++) c[i] = fx_fork(fan_process, f, shared);
  for (int i = 0; i < FAN_PROCS; i++) assert_int_equal(fx_reap(&c[i]), SQLQ_OK);
  assert_int_equal(atomic_load(&shared->acked), FAN_N);
  assert_int_equal(atomic_load(&shared->fan_in_runs), 1);
  assert_int_equal(atomic_load(&shared->early), 0);
  assert_int_equal(fx_count(f->db, f, 0), 0);
  munmap(shared, sizeof *shared);
}

#define RACE_N 400

/* Claim and ack RACE_N jobs of the queue named arg, one at a time. */
static int ack_in_child(const fixture *f, void *arg) {
  const char *queue = arg;
  sqlq_db *db = fx_open(f);
  int rc = SQLQ_OK, acked = 0;
  double until = fx_now() + 120;
  while (acked < RACE_N && rc == SQLQ_OK && fx_now() < until) {
    sqlq_job *jobs = NULL;
    size_t n = 0;
    rc = sqlq_claim(db, queue, 1, NULL, &jobs, &n);
    if (rc == SQLQ_OK && n == 0) rc = sqlq_wait(db, queue, 0.2);
    if (rc == SQLQ_OK && n == 1) rc = sqlq_ack(db, jobs[0].id, jobs[0].token);
    acked += rc == SQLQ_OK && n == 1;
    if (rc == SQLQ_BUSY || rc == SQLQ_TIMEOUT) rc = SQLQ_OK;
    sqlq_jobs_free(jobs, n);
  }
  sqlq_close(db);
  return acked == RACE_N ? rc : SQLQ_TIMEOUT;
}

/* Enqueue on "<queue>-after" job i after ids[i] and ids[RACE_N + i], for
** each i, while the children ack those. */
static int enqueue_in_child(const fixture *f, void *arg) {
  const int64_t *ids = arg;
  char after_queue[128];
  fx_name(f, "after", after_queue, sizeof after_queue);
  sqlq_db *db = fx_open(f);
  sqlq_job_spec spec = {0};
  int rc = SQLQ_OK;
  for (int i = 0; i < RACE_N && rc == SQLQ_OK; i++) {
    int64_t id, after[2] = {ids[i], ids[RACE_N + i]};
    do rc = sqlq_enqueue_after(db, after_queue, &spec, 1, after, 2, &id);
    while (rc == SQLQ_BUSY);
  }
  sqlq_close(db);
  return rc;
}

/* Dependents, each after a job of queue A and one of queue B, enqueued
** while two processes ack A's and B's jobs in the same order at once (an
** early dependent races the acks of its jobs, a later one sees its two
** jobs acked at about the same time): none is left waiting. */
static void no_dependent_left_waiting(void **state) {
  fixture *f = *state;
  fx_need_fork();
  int64_t *ids = calloc(2 * RACE_N, sizeof *ids);
  sqlq_job_spec *specs = calloc(RACE_N, sizeof *specs);
  char b[128], after_queue[128];
  fx_name(f, "b", b, sizeof b);
  fx_name(f, "after", after_queue, sizeof after_queue);
  assert_non_null(ids);
  assert_non_null(specs);
  assert_ok(f->db, sqlq_enqueue_batch(f->db, f->queue, specs, RACE_N, ids));
  assert_ok(f->db, sqlq_enqueue_batch(f->db, b, specs, RACE_N, ids + RACE_N));
  free(specs);
  fx_child c[3];
  c[0] = fx_fork(enqueue_in_child, f, ids);
  c[1] = fx_fork(ack_in_child, f, f->queue);
  c[2] = fx_fork(ack_in_child, f, b);
  for (int i = 0; i < 3; i++) assert_int_equal(fx_reap(&c[i]), SQLQ_OK);
  sqlq_job_info *jobs = NULL;
  size_t n = 0, waiting = 0;
  assert_ok(f->db, sqlq_list(f->db, after_queue, 0, 0, &jobs, &n));
  assert_int_equal(n, RACE_N);
  for (size_t i = 0; i < n; i++) waiting += jobs[i].state == SQLQ_STATE_WAITING;
  assert_int_equal(waiting, 0);
  sqlq_job_infos_free(jobs, n);
  assert_ok(f->db, sqlq_purge(f->db, after_queue, NULL));
  free(ids);
}

int run_deps_tests(void) {
  const struct CMUnitTest tests[] = {
    FX_TEST(fan_in_waits_for_all),       FX_TEST(finished_and_repeated_ids),
    FX_TEST(bad_ids_are_refused),        FX_TEST(delay_counts_from_release),
    FX_TEST(dead_dependency_then_retry), FX_TEST(purge_kills_and_retry_releases),
    FX_TEST(batch_acks_release),         FX_TEST(release_wakes_a_waiter),
    FX_TEST(fan_in_across_processes),    FX_TEST(no_dependent_left_waiting),
  };
  return fx_run_group_from("dependencies", 7, tests, sizeof tests / sizeof tests[0]);
}
