/*
** test_batch.c -- batches past the statement limits of every backend.
**
** A driver with array statements splits a batch (an enqueue, an ack, an
** ack with history) into statements of at most its array_rows_max
** elements, all in the batch's one transaction: PostgreSQL 1000,
** Firebird 1560 (a packed array of integers fits a VARCHAR(32765)),
** MariaDB 9362 (65,535 placeholders in a statement, 7 in a row of an
** enqueue).  In one statement, an ack failed on Firebird past about 1,600
** refs and on MariaDB past 21,845 (3 placeholders a ref).  Every backend
** runs every size: each of those limits and one more.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* The sizes of the batches that go in, out and away: the limits of the
** enqueues and of the acks with history (the first 4), and one more. */
static const size_t sizes[] = {1000, 1001, 1560, 1561, 9362, 9363};
#define N_SIZES (sizeof sizes / sizeof sizes[0])
#define N_HISTORY_SIZES 4
/* The sizes of the acks of refs no job holds: those of the acks, the
** widest integers in Firebird's packed arrays, and MariaDB's placeholders
** in an ack. */
static const size_t stale_sizes[] = {1000, 1001, 1560, 1561, 21845, 21846};
#define N_STALE_SIZES (sizeof stale_sizes / sizeof stale_sizes[0])
#define MOST 21846

/* MOST refs that no job holds, with the widest integers there are (the
** most bytes in a packed array): ids from INT64_MIN up, token INT64_MIN. */
static sqlq_job_ref *stale_refs(void) {
  sqlq_job_ref *refs = malloc(MOST * sizeof *refs);
  assert_non_null(refs);
  for (size_t i = 0; i < MOST; i++) {
    refs[i].id = INT64_MIN + (int64_t)i;
    refs[i].token = INT64_MIN;
  }
  return refs;
}

/* An ack of n refs that no job holds changes nothing and says so, naming
** the first; on db, with or without history. */
static void ack_all_stale(sqlq_db *db, const sqlq_job_ref *refs, size_t n) {
  size_t acked = 99;
  assert_status(db, sqlq_ack_batch(db, refs, n, &acked), SQLQ_STALE);
  assert_int_equal(acked, 0);
  assert_non_null(strstr(sqlq_errmsg(db), "first: job -9223372036854775808)"));
}

/* Acks of stale refs at each size, with and without history; a job held
** at the end of the largest batch (in its last statement) is acked. */
static void ack_batch_of_stale_refs(void **state) {
  fixture *f = *state;
  sqlq_job_ref *refs = stale_refs();
  for (size_t i = 0; i < N_STALE_SIZES; i++) ack_all_stale(f->db, refs, stale_sizes[i]);

  sqlq_options opts = {.size = sizeof(sqlq_options), .keep_history = 1};
  sqlq_db *history = NULL;
  assert_ok(history, fx_open_with(f, NULL, &opts, &history));
  for (size_t i = 0; i < N_HISTORY_SIZES; i++) ack_all_stale(history, refs, stale_sizes[i]);

  fx_push(f->db, f, "held", 0);
  claimed c = fx_claim_one(f->db, f, 30);
  refs[MOST - 1].id = c.id;
  refs[MOST - 1].token = c.token;
  size_t acked = 0;
  assert_status(f->db, sqlq_ack_batch(f->db, refs, MOST, &acked), SQLQ_STALE);
  assert_int_equal(acked, 1);
  assert_int_equal(fx_count(f->db, f, 0), 0);
  sqlq_close(history);
  free(refs);
}

/* Enqueue n jobs in one batch on db, claim them with the largest claim
** there is, and ack them in one batch. */
static void round_trip(sqlq_db *db, const fixture *f, size_t n) {
  sqlq_job_spec *specs = calloc(n, sizeof *specs);
  int64_t *ids = malloc(n * sizeof *ids);
  sqlq_job_ref *refs = malloc(n * sizeof *refs);
  assert_true(specs && ids && refs);
  for (size_t i = 0; i < n; i++) {
    specs[i].payload = "b";
    specs[i].payload_len = 1;
  }
  assert_ok(db, sqlq_enqueue_batch(db, f->queue, specs, n, ids));
  for (size_t i = 1; i < n; i++) assert_true(ids[i] > ids[i - 1]);

  sqlq_job *jobs = NULL;
  size_t got = 0;
  assert_ok(db, sqlq_claim(db, f->queue, 100000, NULL, &jobs, &got));
  assert_int_equal(got, n);
  for (size_t i = 0; i < got; i++) {
    refs[i].id = jobs[i].id;
    refs[i].token = jobs[i].token;
  }
  sqlq_jobs_free(jobs, got);
  size_t acked = 0;
  assert_ok(db, sqlq_ack_batch(db, refs, n, &acked));
  assert_int_equal(acked, n);
  assert_int_equal(fx_count(db, f, 0), 0);
  free(specs);
  free(ids);
  free(refs);
}

/* Batches of every size go in, out and away whole. */
static void batches_at_each_limit(void **state) {
  fixture *f = *state;
  for (size_t i = 0; i < N_SIZES; i++) round_trip(f->db, f, sizes[i]);
}

/* With history kept, the same for the sizes of the array acks with
** history (PostgreSQL's and Firebird's; MariaDB's acks them one by one). */
static void batches_with_history(void **state) {
  fixture *f = *state;
  sqlq_options opts = {.size = sizeof(sqlq_options), .keep_history = 1};
  sqlq_db *db = NULL;
  assert_ok(db, fx_open_with(f, NULL, &opts, &db));
  for (size_t i = 0; i < N_HISTORY_SIZES; i++) round_trip(db, f, sizes[i]);
  sqlq_close(db);
}

/* The error message of db contains the text that fmt makes of id. */
static void expect_errmsg(sqlq_db *db, const char *fmt, int64_t id) {
  char want[128];
  snprintf(want, sizeof want, fmt, (long long)id);
  if (strstr(sqlq_errmsg(db), want) == NULL) fail_msg("'%s' lacks '%s'", sqlq_errmsg(db), want);
}

/* Batches of other sizes on one handle (statements prepared again for
** another number of rows) say which jobs they stored and acked: on
** MariaDB the columns of a RETURNING clause were bound only for the first
** statement, and later batches read its last id again. */
static void batches_of_other_sizes_on_one_handle(void **state) {
  fixture *f = *state;
  static const size_t n[] = {5, 3, 3, 4};
  sqlq_job_spec specs[5] = {{.payload = "s", .payload_len = 1}};
  for (size_t i = 1; i < 5; i++) specs[i] = specs[0];
  int64_t ids[15], last = 0;
  size_t at = 0;
  for (size_t b = 0; b < 4; b++) {
    assert_ok(f->db, sqlq_enqueue_batch(f->db, f->queue, specs, n[b], ids + at));
    for (size_t i = at; i < at + n[b]; i++) {
      assert_true(ids[i] > last);
      last = ids[i];
    }
    at += n[b];
  }
  sqlq_job *jobs = NULL;
  size_t got = 0;
  assert_ok(f->db, sqlq_claim(f->db, f->queue, 15, NULL, &jobs, &got));
  assert_int_equal(got, 15);
  sqlq_job_ref refs[15];
  for (size_t i = 0; i < got; i++) {
    refs[i].id = jobs[i].id;
    refs[i].token = jobs[i].token;
  }
  sqlq_jobs_free(jobs, got);
  /* Acks of 4, then 5 with the third and fourth stale, then 6 with the
  ** second stale. */
  size_t acked = 0;
  assert_ok(f->db, sqlq_ack_batch(f->db, refs, 4, &acked));
  refs[6].token ^= 1;
  refs[7].token ^= 1;
  assert_status(f->db, sqlq_ack_batch(f->db, refs + 4, 5, &acked), SQLQ_STALE);
  assert_int_equal(acked, 3);
  expect_errmsg(f->db, "2 of 5 jobs were not held with their tokens (first: job %lld)", refs[6].id);
  refs[10].token ^= 1;
  assert_status(f->db, sqlq_ack_batch(f->db, refs + 9, 6, &acked), SQLQ_STALE);
  assert_int_equal(acked, 5);
  expect_errmsg(f->db, "job %lld is not held", refs[10].id);
}

int run_batch_tests(void) {
  const struct CMUnitTest tests[] = {
    FX_TEST(ack_batch_of_stale_refs),
    FX_TEST(batches_at_each_limit),
    FX_TEST(batches_with_history),
    FX_TEST(batches_of_other_sizes_on_one_handle),
  };
  return FX_RUN_GROUP("batch", tests);
}
