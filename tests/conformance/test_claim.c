/*
** test_claim.c -- claiming and finishing jobs: claim sizes, failures and
** backoff, dead jobs, leases and their tokens, release, touch.
*/
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* A lease short enough to expire during a test, and the sleep that
** outlasts it. */
#define SHORT_LEASE 0.1
#define PAST_SHORT_LEASE 0.3

/* Enqueue one job with max_attempts and return its id. */
static int64_t push_attempts(const fixture *f, int max_attempts) {
  sqlq_job_spec spec = {0};
  spec.max_attempts = max_attempts;
  return fx_push_spec(f->db, f, &spec);
}

/* Every call that presents a token says SQLQ_STALE for this old one, and
** none changes the job: its state, attempts, lease and error stay. */
static void assert_token_stale(sqlq_db *db, const fixture *f, int64_t id, int64_t token) {
  sqlq_fail_options now = SQLQ_OPTIONS_INIT(sqlq_fail_options);
  now.retry_now = 1;
  int64_t until = 0;
  found before = fx_find(db, f, id), after;
  assert_non_null(before.job);
  assert_status(db, sqlq_ack(db, id, token), SQLQ_STALE);
  assert_status(db, sqlq_fail(db, id, token, "stale", &now), SQLQ_STALE);
  now.dead = 1;
  assert_status(db, sqlq_fail(db, id, token, "stale", &now), SQLQ_STALE);
  assert_status(db, sqlq_release(db, id, token, 0), SQLQ_STALE);
  assert_status(db, sqlq_touch(db, id, token, 60, &until), SQLQ_STALE);
  after = fx_find(db, f, id);
  assert_non_null(after.job);
  assert_int_equal(after.job->state, before.job->state);
  assert_int_equal(after.job->attempts, before.job->attempts);
  assert_int_equal(after.job->lease_until_us, before.job->lease_until_us);
  assert_int_equal(after.job->run_at_us, before.job->run_at_us);
  assert_true((after.job->last_error == NULL) == (before.job->last_error == NULL));
  if (after.job->last_error != NULL) {
    assert_string_equal(after.job->last_error, before.job->last_error);
  }
  fx_found_free(&before);
  fx_found_free(&after);
}

/* A claim returns at most the number asked for, and nothing once empty. */
static void claim_returns_at_most_n(void **state) {
  fixture *f = *state;
  int64_t got[10];
  int i;
  for (i = 0; i < 5; i++) fx_push(f->db, f, "n", 0);
  assert_int_equal(fx_claim_ids(f->db, f, 3, 30, got), 3);
  assert_int_equal(fx_claim_ids(f->db, f, 10, 30, got), 2);
  assert_int_equal(fx_claim_ids(f->db, f, 10, 30, got), 0);
  assert_int_equal(fx_claim_ids(f->db, f, 1, 30, got), 0);
  fx_assert_counts(f->db, f, 0, 0, 5, 0);
}

/* Failing with backoff 0 makes the job ready at once with the attempt
** counted; after max_attempts failures it is dead and no longer claimed. */
static void fail_until_dead(void **state) {
  fixture *f = *state;
  sqlq_fail_options now = SQLQ_OPTIONS_INIT(sqlq_fail_options);
  now.retry_now = 1;
  int64_t id = push_attempts(f, 3);
  int attempt;
  found fd;
  for (attempt = 1; attempt <= 3; attempt++) {
    claimed c = fx_claim_one(f->db, f, 30);
    assert_int_equal(c.id, id);
    assert_int_equal(c.attempt, attempt);
    assert_ok(f->db, sqlq_fail(f->db, c.id, c.token, "it broke", &now));
    if (attempt < 3) fx_assert_counts(f->db, f, 1, 0, 0, 0);
  }
  fx_assert_counts(f->db, f, 0, 0, 0, 1);
  assert_int_equal(fx_claim_one(f->db, f, 30).id, 0);
  fd = fx_find(f->db, f, id);
  assert_non_null(fd.job);
  assert_int_equal(fd.job->state, SQLQ_STATE_DEAD);
  assert_int_equal(fd.job->attempts, 3);
  assert_int_equal(fd.job->max_attempts, 3);
  assert_string_equal(fd.job->last_error, "it broke");
  fx_found_free(&fd);
}

/* A positive backoff schedules the retry for later; the default backoff
** (about 1 s) is finite, so the job comes back with its next attempt. */
static void fail_with_backoff_schedules_retry(void **state) {
  fixture *f = *state;
  sqlq_fail_options later = SQLQ_OPTIONS_INIT(sqlq_fail_options);
  claimed c;
  later.backoff = 60;
  fx_push(f->db, f, "b", 0);
  c = fx_claim_one(f->db, f, 30);
  assert_ok(f->db, sqlq_fail(f->db, c.id, c.token, NULL, &later));
  fx_assert_counts(f->db, f, 0, 1, 0, 0);
  assert_int_equal(fx_claim_one(f->db, f, 30).id, 0);

  assert_ok(f->db, sqlq_retry(f->db, f->queue, &c.id, 1, NULL));
  c = fx_claim_one(f->db, f, 30);
  assert_true(c.id != 0);
  assert_ok(f->db, sqlq_fail(f->db, c.id, c.token, NULL, NULL));
  c = fx_wait_claim(f->db, f, 20);
  assert_true(c.id != 0);
  assert_int_equal(c.attempt, 2);
}

/* fail with dead=1 kills the job whatever attempts remain. */
static void fail_dead_now(void **state) {
  fixture *f = *state;
  sqlq_fail_options dead = SQLQ_OPTIONS_INIT(sqlq_fail_options);
  int64_t id = push_attempts(f, 25);
  claimed c = fx_claim_one(f->db, f, 30);
  found fd;
  dead.dead = 1;
  assert_ok(f->db, sqlq_fail(f->db, c.id, c.token, "fatal", &dead));
  fx_assert_counts(f->db, f, 0, 0, 0, 1);
  fd = fx_find(f->db, f, id);
  assert_int_equal(fd.job->state, SQLQ_STATE_DEAD);
  assert_int_equal(fd.job->attempts, 1);
  assert_string_equal(fd.job->last_error, "fatal");
  fx_found_free(&fd);
}

/* The error text kept with a job is cut to 4096 bytes. */
static void fail_error_cut_to_4096(void **state) {
  fixture *f = *state;
  sqlq_fail_options dead = SQLQ_OPTIONS_INIT(sqlq_fail_options);
  char *error = malloc(10001);
  int64_t id = fx_push(f->db, f, "e", 0);
  claimed c = fx_claim_one(f->db, f, 30);
  found fd;
  assert_non_null(error);
  memset(error, 'e', 10000);
  error[10000] = '\0';
  dead.dead = 1;
  assert_ok(f->db, sqlq_fail(f->db, c.id, c.token, error, &dead));
  fd = fx_find(f->db, f, id);
  assert_non_null(fd.job->last_error);
  assert_int_equal(strlen(fd.job->last_error), 4096);
  assert_memory_equal(fd.job->last_error, error, 4096);
  fx_found_free(&fd);
  free(error);
}

/* A job whose lease expired is claimed again with attempt 2 and a new
** token; the old token is refused by every call and changes nothing. */
static void lease_expiry_reclaims_with_new_token(void **state) {
  fixture *f = *state;
  int64_t id = fx_push(f->db, f, "lease", 0);
  claimed first = fx_claim_one(f->db, f, SHORT_LEASE), second;
  assert_int_equal(first.id, id);
  assert_int_equal(first.attempt, 1);
  fx_sleep(PAST_SHORT_LEASE);
  second = fx_claim_one(f->db, f, 30);
  assert_int_equal(second.id, id);
  assert_int_equal(second.attempt, 2);
  assert_true(second.token != first.token);
  assert_token_stale(f->db, f, id, first.token);
  {
    found fd = fx_find(f->db, f, id);
    assert_int_equal(fd.job->state, SQLQ_STATE_RUNNING);
    assert_int_equal(fd.job->attempts, 2);
    fx_found_free(&fd);
  }
  assert_ok(f->db, sqlq_ack(f->db, id, second.token));
  assert_int_equal(fx_count(f->db, f, 0), 0);
}

/* The crash case at the C level: a worker's lease runs out, another handle
** claims the job, and the first worker's late ack is refused without
** deleting the job. */
static void late_ack_from_first_holder_refused(void **state) {
  fixture *f = *state;
  sqlq_db *other = fx_open(f);
  int64_t id = fx_push(f->db, f, "fence", 0);
  claimed first = fx_claim_one(f->db, f, SHORT_LEASE), second;
  fx_sleep(PAST_SHORT_LEASE);
  second = fx_claim_one(other, f, 30);
  assert_int_equal(second.id, id);
  assert_status(f->db, sqlq_ack(f->db, id, first.token), SQLQ_STALE);
  assert_int_equal(fx_count(f->db, f, 0), 1);
  fx_assert_counts(f->db, f, 0, 0, 1, 0);
  assert_ok(other, sqlq_ack(other, id, second.token));
  sqlq_close(other);
}

/* A lease that expires on the last attempt makes the job dead. */
static void lease_expiry_on_last_attempt_is_dead(void **state) {
  fixture *f = *state;
  int64_t id = push_attempts(f, 1);
  claimed c = fx_claim_one(f->db, f, SHORT_LEASE);
  assert_int_equal(c.id, id);
  fx_sleep(PAST_SHORT_LEASE);
  assert_int_equal(fx_claim_one(f->db, f, 30).id, 0);
  fx_assert_counts(f->db, f, 0, 0, 0, 1);
  assert_status(f->db, sqlq_ack(f->db, id, c.token), SQLQ_STALE);
}

/* release gives the job back without counting the attempt. */
static void release_does_not_count_attempt(void **state) {
  fixture *f = *state;
  int64_t id = fx_push(f->db, f, "r", 0);
  claimed c = fx_claim_one(f->db, f, 30);
  assert_ok(f->db, sqlq_release(f->db, c.id, c.token, 0));
  fx_assert_counts(f->db, f, 1, 0, 0, 0);
  c = fx_claim_one(f->db, f, 30);
  assert_int_equal(c.id, id);
  assert_int_equal(c.attempt, 1);
  /* The token of a released job is no longer good. */
  assert_ok(f->db, sqlq_release(f->db, c.id, c.token, 0));
  assert_status(f->db, sqlq_ack(f->db, c.id, c.token), SQLQ_STALE);
}

/* release with a delay schedules the job. */
static void release_with_delay(void **state) {
  fixture *f = *state;
  claimed c;
  fx_push(f->db, f, "r", 0);
  c = fx_claim_one(f->db, f, 30);
  assert_ok(f->db, sqlq_release(f->db, c.id, c.token, 60));
  fx_assert_counts(f->db, f, 0, 1, 0, 0);
  assert_int_equal(fx_claim_one(f->db, f, 30).id, 0);
}

/* touch extends a lease: the job outlives its first lease and stays held. */
static void touch_extends_lease(void **state) {
  fixture *f = *state;
  sqlq_db *other = fx_open(f);
  int64_t until = 0;
  claimed c;
  fx_push(f->db, f, "t", 0);
  c = fx_claim_one(f->db, f, 0.3);
  assert_ok(f->db, sqlq_touch(f->db, c.id, c.token, 30, &until));
  assert_true(until > c.lease_until_us);
  fx_sleep(0.5);
  assert_int_equal(fx_claim_one(other, f, 30).id, 0);
  assert_ok(f->db, sqlq_touch(f->db, c.id, c.token, 30, NULL));
  assert_ok(f->db, sqlq_ack(f->db, c.id, c.token));
  sqlq_close(other);
}

/* ack_batch acks every held job and counts the stale one out. */
static void ack_batch_with_one_stale(void **state) {
  fixture *f = *state;
  sqlq_job_ref refs[3];
  size_t acked = 99;
  int i;
  for (i = 0; i < 3; i++) {
    claimed c;
    fx_push(f->db, f, "a", 0);
    c = fx_claim_one(f->db, f, 30);
    refs[i].id = c.id;
    refs[i].token = c.token;
  }
  refs[1].token ^= 0x5a5a;
  assert_status(f->db, sqlq_ack_batch(f->db, refs, 3, &acked), SQLQ_STALE);
  assert_int_equal(acked, 2);
  assert_int_equal(fx_count(f->db, f, 0), 1);
  refs[1].token ^= 0x5a5a;
  assert_ok(f->db, sqlq_ack_batch(f->db, &refs[1], 1, &acked));
  assert_int_equal(acked, 1);
  assert_int_equal(fx_count(f->db, f, 0), 0);
}

int run_claim_tests(void) {
  const struct CMUnitTest tests[] = {
    FX_TEST(claim_returns_at_most_n),
    FX_TEST(fail_until_dead),
    FX_TEST(fail_with_backoff_schedules_retry),
    FX_TEST(fail_dead_now),
    FX_TEST(fail_error_cut_to_4096),
    FX_TEST(lease_expiry_reclaims_with_new_token),
    FX_TEST(late_ack_from_first_holder_refused),
    FX_TEST(lease_expiry_on_last_attempt_is_dead),
    FX_TEST(release_does_not_count_attempt),
    FX_TEST(release_with_delay),
    FX_TEST(touch_extends_lease),
    FX_TEST(ack_batch_with_one_stale),
  };
  return FX_RUN_GROUP("claim", tests);
}
