/*
** test_cancel.c -- cancellation (schema version 9): sqlq_cancel() of ready,
** scheduled, waiting and running jobs, of jobs done or unknown, and what a
** cancel does to a FIFO group, a concurrency limit and a retry; workers
** that wait in sqlq_wait_lost() for their jobs to be cancelled.
*/
#include <pthread.h>
#include <string.h>

#include "harness.h"

/* The job id of the fixture's queue as sqlq_list() gives it: its state (0:
** none) and, when error is not NULL, whether its last_error is error. */
static int state_of(const fixture *f, int64_t id, const char *error, int *error_is) {
  found fd = fx_find(f->db, f, id);
  int state = fd.job ? fd.job->state : 0;
  if (error_is) *error_is = fd.job && fd.job->last_error && strcmp(fd.job->last_error, error) == 0;
  fx_found_free(&fd);
  return state;
}

/* Assert that job id is dead, cancelled (its last_error says so). */
static void assert_cancelled(const fixture *f, int64_t id) {
  int cancelled = 0;
  assert_int_equal(state_of(f, id, "cancelled", &cancelled), SQLQ_STATE_DEAD);
  assert_true(cancelled);
}

/* Cancel the n jobs ids through db, asserting SQLQ_OK; returns how many
** the call says it cancelled. */
static size_t cancel(sqlq_db *db, const int64_t *ids, size_t n) {
  size_t count = 99;
  assert_ok(db, sqlq_cancel(db, ids, n, &count));
  return count;
}

/* A ready job and a scheduled one become dead, cancelled, and no claim
** takes them. */
static void cancel_ready_and_scheduled(void **state) {
  fixture *f = *state;
  sqlq_job_spec later = {.delay = 3600};
  int64_t ids[2] = {fx_push(f->db, f, "now", 0), fx_push_spec(f->db, f, &later)};
  assert_int_equal(state_of(f, ids[1], NULL, NULL), SQLQ_STATE_SCHEDULED);
  assert_int_equal(cancel(f->db, ids, 2), 2);
  assert_cancelled(f, ids[0]);
  assert_cancelled(f, ids[1]);
  fx_assert_counts(f->db, f, 0, 0, 0, 2);
  assert_int_equal(fx_claim_one(f->db, f, 30).id, 0);
}

/* A running job: its holder's ack, touch, fail and release are stale; it
** is dead, cancelled, and not claimed again. */
static void cancel_running(void **state) {
  fixture *f = *state;
  int64_t id = fx_push(f->db, f, "run", 0);
  claimed j = fx_claim_one(f->db, f, 30);
  assert_int_equal(j.id, id);
  sqlq_db *other = fx_open(f);
  assert_int_equal(cancel(other, &id, 1), 1);
  sqlq_close(other);
  assert_status(f->db, sqlq_touch(f->db, j.id, j.token, 30, NULL), SQLQ_STALE);
  assert_status(f->db, sqlq_ack(f->db, j.id, j.token), SQLQ_STALE);
  assert_status(f->db, sqlq_fail(f->db, j.id, j.token, "late", NULL), SQLQ_STALE);
  assert_status(f->db, sqlq_release(f->db, j.id, j.token, 0), SQLQ_STALE);
  assert_cancelled(f, id);
  fx_assert_counts(f->db, f, 0, 0, 0, 1);
  assert_int_equal(fx_claim_one(f->db, f, 30).id, 0);
}

/* Jobs done, dead already, unknown or repeated: no error, counted once or
** not at all. */
static void cancel_done_dead_unknown_and_mix(void **state) {
  fixture *f = *state;
  sqlq_job_spec once = {.max_attempts = 1};
  int64_t done = fx_push(f->db, f, "done", 0);
  claimed j = fx_claim_one(f->db, f, 30);
  assert_ok(f->db, sqlq_ack(f->db, j.id, j.token));
  int64_t dead = fx_push_spec(f->db, f, &once);
  j = fx_claim_one(f->db, f, 30);
  assert_int_equal(j.id, dead);
  assert_ok(f->db, sqlq_fail(f->db, j.id, j.token, "boom", NULL));
  int64_t ready = fx_push(f->db, f, "ready", 0);
  int64_t running = fx_push(f->db, f, "running", 0);
  j = fx_claim_one(f->db, f, 30);
  assert_int_equal(j.id, ready);
  int64_t none[] = {done, dead, 0, -7, INT64_MAX, INT64_MIN};
  assert_int_equal(cancel(f->db, none, 6), 0);
  int boom = 0;
  assert_int_equal(state_of(f, dead, "boom", &boom), SQLQ_STATE_DEAD);
  assert_true(boom); /* a dead job stays as it died */
  int64_t mix[] = {running, done, ready, INT64_MAX, running, dead, ready};
  assert_int_equal(cancel(f->db, mix, 7), 2);
  assert_cancelled(f, ready);
  assert_cancelled(f, running);
  assert_status(f->db, sqlq_ack(f->db, j.id, j.token), SQLQ_STALE);
  assert_int_equal(cancel(f->db, mix, 7), 0); /* again: nothing left to cancel */
  assert_int_equal(cancel(f->db, NULL, 0), 0);
  assert_status(f->db, sqlq_cancel(f->db, NULL, 1, NULL), SQLQ_MISUSE);
  assert_ok(f->db, sqlq_cancel(f->db, mix, 7, NULL));
}

/* The running head of a FIFO group cancelled: the group's next job runs. */
static void cancel_fifo_head(void **state) {
  fixture *f = *state;
  sqlq_job_spec g = {.group_key = "g", .payload = "x", .payload_len = 1};
  int64_t head = fx_push_spec(f->db, f, &g), next = fx_push_spec(f->db, f, &g);
  claimed j = fx_claim_one(f->db, f, 30);
  assert_int_equal(j.id, head);
  assert_int_equal(fx_claim_one(f->db, f, 30).id, 0); /* the group is busy */
  assert_int_equal(cancel(f->db, &head, 1), 1);
  assert_int_equal(fx_claim_one(f->db, f, 30).id, next);
}

/* A ready head of a FIFO group cancelled: its next job is the head. */
static void cancel_fifo_ready_head(void **state) {
  fixture *f = *state;
  sqlq_job_spec g = {.group_key = "g", .payload = "x", .payload_len = 1};
  int64_t head = fx_push_spec(f->db, f, &g), next = fx_push_spec(f->db, f, &g);
  assert_int_equal(cancel(f->db, &head, 1), 1);
  assert_int_equal(fx_claim_one(f->db, f, 30).id, next);
}

/* A cancelled running job frees its slot of a concurrency limit. */
static void cancel_frees_a_limit_slot(void **state) {
  fixture *f = *state;
  assert_ok(f->db, sqlq_concurrency_set(f->db, f->queue, 1));
  int64_t a = fx_push(f->db, f, "a", 0), b = fx_push(f->db, f, "b", 0);
  assert_int_equal(fx_claim_one(f->db, f, 30).id, a);
  assert_int_equal(fx_claim_one(f->db, f, 30).id, 0); /* full */
  assert_int_equal(cancel(f->db, &a, 1), 1);
  assert_int_equal(fx_claim_one(f->db, f, 30).id, b);
}

/* A job waiting for another, cancelled, stays dead when that one
** succeeds; the jobs waiting for a cancelled job keep waiting. */
static void cancel_and_dependencies(void **state) {
  fixture *f = *state;
  sqlq_job_spec spec = {.payload = "after", .payload_len = 5};
  int64_t a = fx_push(f->db, f, "a", 0), waiting = 0, after_b = 0;
  assert_ok(f->db, sqlq_enqueue_after(f->db, f->queue, &spec, 1, &a, 1, &waiting));
  assert_int_equal(state_of(f, waiting, NULL, NULL), SQLQ_STATE_WAITING);
  assert_int_equal(cancel(f->db, &waiting, 1), 1);
  claimed j = fx_claim_one(f->db, f, 30);
  assert_int_equal(j.id, a);
  assert_ok(f->db, sqlq_ack(f->db, j.id, j.token));
  assert_cancelled(f, waiting);
  int64_t b = fx_push(f->db, f, "b", 0);
  assert_ok(f->db, sqlq_enqueue_after(f->db, f->queue, &spec, 1, &b, 1, &after_b));
  assert_int_equal(cancel(f->db, &b, 1), 1);
  assert_int_equal(state_of(f, after_b, NULL, NULL), SQLQ_STATE_WAITING);
  assert_int_equal(fx_claim_one(f->db, f, 30).id, 0);
}

/* A cancelled job retried runs again; its retry counts it. */
static void cancel_then_retry(void **state) {
  fixture *f = *state;
  int64_t a = fx_push(f->db, f, "a", 0);
  assert_int_equal(cancel(f->db, &a, 1), 1);
  size_t n = 0;
  assert_ok(f->db, sqlq_retry(f->db, f->queue, &a, 1, &n));
  assert_int_equal(n, 1);
  assert_int_equal(state_of(f, a, NULL, NULL), SQLQ_STATE_READY);
  claimed j = fx_claim_one(f->db, f, 30);
  assert_int_equal(j.id, a);
  assert_ok(f->db, sqlq_ack(f->db, j.id, j.token));
  int64_t b = fx_push(f->db, f, "b", 0);
  assert_int_equal(cancel(f->db, &b, 1), 1);
  assert_ok(f->db, sqlq_retry(f->db, f->queue, NULL, 0, &n));
  assert_int_equal(n, 1);
  assert_int_equal(fx_claim_one(f->db, f, 30).id, b);
}

/* A wait that must end on a cancel, and how long it may take. */
#define LONG_TIMEOUT 20.0
#define WOKEN_WITHIN 10.0

/* sqlq_wait_lost() answers at once when a job is lost already, saying
** which; it times out while every job is held; bad arguments are refused. */
static void wait_lost_at_once_and_timeout(void **state) {
  fixture *f = *state;
  fx_push(f->db, f, "a", 0);
  fx_push(f->db, f, "b", 0);
  claimed a = fx_claim_one(f->db, f, 30), b = fx_claim_one(f->db, f, 30);
  sqlq_job_ref refs[2] = {{a.id, a.token}, {b.id, b.token}};
  int lost[2] = {7, 7};
  assert_status(f->db, sqlq_wait_lost(f->db, f->queue, refs, 2, 0.2, lost), SQLQ_TIMEOUT);
  assert_status(f->db, sqlq_wait_lost(f->db, f->queue, NULL, 0, 0, NULL), SQLQ_TIMEOUT);
  assert_ok(f->db, sqlq_ack(f->db, b.id, b.token));
  assert_ok(f->db, sqlq_wait_lost(f->db, f->queue, refs, 2, LONG_TIMEOUT, lost));
  assert_int_equal(lost[0], 0);
  assert_int_equal(lost[1], 1);
  assert_ok(f->db, sqlq_wait_lost(f->db, f->queue, refs, 2, LONG_TIMEOUT, NULL));
  refs[1].token = a.token; /* job b with a wrong token */
  refs[1].id = a.id;
  refs[0].token = a.token + 1;
  assert_ok(f->db, sqlq_wait_lost(f->db, f->queue, refs, 2, LONG_TIMEOUT, lost));
  assert_int_equal(lost[0], 1);
  assert_int_equal(lost[1], 0);
  assert_status(f->db, sqlq_wait_lost(f->db, f->queue, NULL, 1, 0, NULL), SQLQ_MISUSE);
  assert_status(f->db, sqlq_wait_lost(f->db, "", refs, 1, 0, NULL), SQLQ_MISUSE);
}

/* Cancel job *arg after a moment, through a handle of this process. */
static int cancel_later(const fixture *f, void *arg) {
  sqlq_db *db = NULL;
  size_t n = 0;
  fx_sleep(0.2);
  int rc = sqlq_open(f->url, NULL, &db);
  if (rc == SQLQ_OK) rc = sqlq_cancel(db, (const int64_t *)arg, 1, &n);
  sqlq_close(db);
  return rc == SQLQ_OK && n != 1 ? -1 : rc;
}

/* Wait in sqlq_wait_lost() for the job j of the fixture's queue, which
** its other job keeps company, to be cancelled; assert that it was, in
** time, and that the other is still held. */
static void assert_wait_sees_cancel(const fixture *f, claimed j, claimed other) {
  sqlq_job_ref refs[2] = {{other.id, other.token}, {j.id, j.token}};
  int lost[2] = {7, 7};
  double t0 = fx_now();
  assert_ok(f->db, sqlq_wait_lost(f->db, f->queue, refs, 2, LONG_TIMEOUT, lost));
  assert_true(fx_now() - t0 < WOKEN_WITHIN);
  assert_int_equal(lost[0], 0);
  assert_int_equal(lost[1], 1);
  assert_cancelled(f, j.id);
}

static void *cancel_thread(void *arg) {
  void **a = arg;
  *(int *)a[2] = cancel_later(a[0], a[1]);
  return NULL;
}

/* A cancel by another process, and by another thread of this one, wakes
** the wait for the job. */
static void wait_lost_woken_by_cancel(void **state) {
  fixture *f = *state;
  fx_need_fork();
  fx_push(f->db, f, "a", 0);
  fx_push(f->db, f, "b", 0);
  fx_push(f->db, f, "c", 0);
  claimed a = fx_claim_one(f->db, f, 60), b = fx_claim_one(f->db, f, 60);
  claimed c = fx_claim_one(f->db, f, 60);
  fx_child child = fx_fork(cancel_later, f, &b.id);
  assert_wait_sees_cancel(f, b, a);
  assert_int_equal(fx_reap(&child), SQLQ_OK);
  int status = -1;
  void *args[3] = {f, &c.id, &status};
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, cancel_thread, args), 0);
  assert_wait_sees_cancel(f, c, a);
  assert_int_equal(pthread_join(t, NULL), 0);
  assert_int_equal(status, SQLQ_OK);
}

int run_cancel_tests(void) {
  const struct CMUnitTest tests[] = {
    FX_TEST(cancel_ready_and_scheduled),       FX_TEST(cancel_running),
    FX_TEST(cancel_done_dead_unknown_and_mix), FX_TEST(cancel_fifo_head),
    FX_TEST(cancel_fifo_ready_head),           FX_TEST(cancel_frees_a_limit_slot),
    FX_TEST(cancel_and_dependencies),          FX_TEST(cancel_then_retry),
    FX_TEST(wait_lost_at_once_and_timeout),    FX_TEST(wait_lost_woken_by_cancel),
  };
  return fx_run_group_from("cancellation", 9, tests, sizeof tests / sizeof tests[0]);
}
