/*
** test_wait.c -- waiting for work: sqlq_wait() wakes on enqueues by other
** threads and processes, on due run_at and lease expiry, and on
** sqlq_interrupt().
**
** Timing assertions are generous upper bounds only (the wake-up must come
** well before the long timeout), plus "not before" checks for delays.
*/
#include <pthread.h>

#include "harness.h"

/* The long timeout a woken wait must beat, and the bound it must meet. */
#define LONG_TIMEOUT 20.0
#define WOKEN_WITHIN 10.0

/* A helper thread's orders and result. */
typedef struct helper {
  const fixture *f;
  double delay;    /* seconds to sleep before acting */
  int in_txn;      /* enqueue inside sqlq_begin/sqlq_commit, committing late */
  sqlq_db *target; /* for interrupters: the handle to interrupt */
  int status;      /* the status of the helper's last call */
} helper;

/* Open a handle of its own on the fixture's database and, after h->delay
** seconds, enqueue one job there; in a transaction, commit h->delay
** seconds after the enqueue. */
static void *enqueue_later(void *arg) {
  helper *h = arg;
  sqlq_db *db = NULL;
  sqlq_job_spec spec = {0};
  h->status = sqlq_open(h->f->url, NULL, &db);
  fx_sleep(h->delay);
  if (h->status == SQLQ_OK && h->in_txn) h->status = sqlq_begin(db);
  if (h->status == SQLQ_OK) h->status = sqlq_enqueue(db, h->f->queue, &spec, NULL, NULL);
  if (h->status == SQLQ_OK && h->in_txn) {
    fx_sleep(h->delay);
    h->status = sqlq_commit(db);
  }
  sqlq_close(db);
  return NULL;
}

/* Interrupt h->target after h->delay seconds. */
static void *interrupt_later(void *arg) {
  helper *h = arg;
  fx_sleep(h->delay);
  sqlq_interrupt(h->target);
  return NULL;
}

/* Run a helper thread while this thread waits for a job; assert the job
** came within the bound. */
static void wait_for_thread_enqueue(const fixture *f, int in_txn) {
  helper h = {0};
  pthread_t thread;
  double t0 = fx_now();
  claimed c;
  h.f = f;
  h.delay = 0.1;
  h.in_txn = in_txn;
  assert_int_equal(pthread_create(&thread, NULL, enqueue_later, &h), 0);
  c = fx_wait_claim(f->db, f, LONG_TIMEOUT);
  assert_int_equal(pthread_join(thread, NULL), 0);
  assert_ok(NULL, h.status);
  assert_true(c.id != 0);
  assert_true(fx_now() - t0 < WOKEN_WITHIN);
}

/* A due job makes sqlq_wait return SQLQ_OK at once. */
static void wait_returns_at_once_when_due(void **state) {
  fixture *f = *state;
  double t0;
  fx_push(f->db, f, "due", 0);
  t0 = fx_now();
  assert_ok(f->db, sqlq_wait(f->db, f->queue, LONG_TIMEOUT));
  assert_true(fx_now() - t0 < WOKEN_WITHIN);
}

/* An empty queue makes sqlq_wait time out, not before its timeout; a zero
** timeout only looks. */
static void wait_times_out_when_empty(void **state) {
  fixture *f = *state;
  double t0 = fx_now();
  assert_status(f->db, sqlq_wait(f->db, f->queue, 0.2), SQLQ_TIMEOUT);
  assert_true(fx_now() - t0 >= 0.19);
  assert_true(fx_now() - t0 < WOKEN_WITHIN);
  assert_status(f->db, sqlq_wait(f->db, f->queue, 0), SQLQ_TIMEOUT);
}

/* An enqueue by another thread on another handle wakes the waiter. */
static void wait_woken_by_thread_enqueue(void **state) {
  wait_for_thread_enqueue(*state, 0);
}

/* A commit of a transaction that enqueued wakes the waiter. */
static void wait_woken_by_thread_commit(void **state) {
  wait_for_thread_enqueue(*state, 1);
}

/* In a child process: open a handle, enqueue one job after 0.1 s. */
static int child_enqueue(const fixture *f, void *arg) {
  sqlq_db *db = NULL;
  sqlq_job_spec spec = {0};
  int rc;
  (void)arg;
  rc = sqlq_open(f->url, NULL, &db);
  fx_sleep(0.1);
  if (rc == SQLQ_OK) rc = sqlq_enqueue(db, f->queue, &spec, NULL, NULL);
  sqlq_close(db);
  return rc == SQLQ_OK ? 0 : 10 + rc;
}

/* An enqueue by another process wakes the waiter. */
static void wait_woken_by_other_process(void **state) {
  fixture *f = *state;
  double t0 = fx_now();
  fx_child child = fx_fork(child_enqueue, f, NULL);
  claimed c = fx_wait_claim(f->db, f, LONG_TIMEOUT);
  assert_int_equal(fx_reap(&child), 0);
  assert_true(c.id != 0);
  assert_true(fx_now() - t0 < WOKEN_WITHIN);
}

/* A delayed job wakes the waiter when it comes due, not before. */
static void wait_woken_at_run_at(void **state) {
  fixture *f = *state;
  sqlq_job_spec spec = {0};
  double t0 = fx_now();
  claimed c;
  spec.delay = 0.3;
  fx_push_spec(f->db, f, &spec);
  c = fx_wait_claim(f->db, f, LONG_TIMEOUT);
  assert_true(c.id != 0);
  assert_true(fx_now() - t0 >= 0.29);
  assert_true(fx_now() - t0 < WOKEN_WITHIN);
}

/* A lease running out wakes the waiter, who gets the job's next attempt. */
static void wait_woken_at_lease_expiry(void **state) {
  fixture *f = *state;
  int64_t id = fx_push(f->db, f, "lease", 0);
  double t0;
  claimed c = fx_claim_one(f->db, f, 0.2);
  assert_int_equal(c.id, id);
  t0 = fx_now();
  c = fx_wait_claim(f->db, f, LONG_TIMEOUT);
  assert_int_equal(c.id, id);
  assert_int_equal(c.attempt, 2);
  assert_true(fx_now() - t0 < WOKEN_WITHIN);
}

/* sqlq_interrupt from another thread ends a wait with SQLQ_INTERRUPTED. */
static void interrupt_from_thread(void **state) {
  fixture *f = *state;
  helper h = {0};
  pthread_t thread;
  double t0 = fx_now();
  h.delay = 0.05;
  h.target = f->db;
  assert_int_equal(pthread_create(&thread, NULL, interrupt_later, &h), 0);
  assert_status(f->db, sqlq_wait(f->db, f->queue, LONG_TIMEOUT), SQLQ_INTERRUPTED);
  assert_int_equal(pthread_join(thread, NULL), 0);
  assert_true(fx_now() - t0 < WOKEN_WITHIN);
}

/* An interrupt made before the wait ends the next wait, once. */
static void interrupt_before_wait_ends_next_wait_once(void **state) {
  fixture *f = *state;
  double t0 = fx_now();
  sqlq_interrupt(f->db);
  assert_status(f->db, sqlq_wait(f->db, f->queue, LONG_TIMEOUT), SQLQ_INTERRUPTED);
  assert_true(fx_now() - t0 < WOKEN_WITHIN);
  assert_status(f->db, sqlq_wait(f->db, f->queue, 0.05), SQLQ_TIMEOUT);
}

int run_wait_tests(void) {
  const struct CMUnitTest tests[] = {
    FX_TEST(wait_returns_at_once_when_due),
    FX_TEST(wait_times_out_when_empty),
    FX_TEST(wait_woken_by_thread_enqueue),
    FX_TEST(wait_woken_by_thread_commit),
    FX_TEST(wait_woken_by_other_process),
    FX_TEST(wait_woken_at_run_at),
    FX_TEST(wait_woken_at_lease_expiry),
    FX_TEST(interrupt_from_thread),
    FX_TEST(interrupt_before_wait_ends_next_wait_once),
  };
  return FX_RUN_GROUP("wait", tests);
}
