/*
** test_batch.c -- batches of jobs: enqueues and acks of many jobs at once.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

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
  int got = 0;
  assert_ok(f->db, sqlq_claim(f->db, f->queue, 15, NULL, &jobs, &got));
  assert_int_equal(got, 15);
  sqlq_job_ref refs[15];
  for (int i = 0; i < got; i++) {
    refs[i].id = jobs[i].id;
    refs[i].token = jobs[i].token;
  }
  sqlq_claimed_free(jobs, got);
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
      FX_TEST(batches_of_other_sizes_on_one_handle),
  };
  return FX_RUN_GROUP("batch", tests);
}
