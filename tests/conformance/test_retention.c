/*
** test_retention.c -- finished jobs in history: listing them
** (SQLQ_STATE_DONE).  (Schema version 4.)
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* Open a handle on the fixture's database that keeps history. */
static sqlq_db *open_history(const fixture *f) {
  sqlq_db *db = NULL;
  assert_ok(db, fx_open_with(f, "history=1", NULL, &db));
  return db;
}

/* Enqueue n jobs with payloads "<tag><i>" on queue, claim them through
** f->db (which keeps no history) and ack them through h, in one batch. */
static void finish_jobs(const fixture *f, sqlq_db *h, const char *queue, size_t n,
                        const char *tag) {
  sqlq_job_spec *specs = calloc(n, sizeof *specs);
  char(*payloads)[32] = calloc(n, sizeof *payloads);
  sqlq_job_ref *refs = calloc(n, sizeof *refs);
  sqlq_job *jobs = NULL;
  size_t i, got = 0, acked = 0;
  assert_non_null(specs);
  assert_non_null(payloads);
  assert_non_null(refs);
  for (i = 0; i < n; i++) {
    snprintf(payloads[i], sizeof payloads[i], "%s%zu", tag, i);
    specs[i].payload = payloads[i];
    specs[i].payload_len = strlen(payloads[i]);
  }
  assert_ok(f->db, sqlq_enqueue_batch(f->db, queue, specs, n, NULL));
  assert_ok(f->db, sqlq_claim(f->db, queue, n, NULL, &jobs, &got));
  assert_int_equal(got, n);
  for (i = 0; i < n; i++) refs[i] = (sqlq_job_ref){.id = jobs[i].id, .token = jobs[i].token};
  assert_ok(h, sqlq_ack_batch(h, refs, n, &acked));
  assert_int_equal(acked, n);
  sqlq_jobs_free(jobs, got);
  free(refs);
  free(payloads);
  free(specs);
}

/* The finished jobs of queue, newest first. */
static size_t list_done(sqlq_db *db, const char *queue, size_t limit, sqlq_job_info **jobs) {
  size_t n = 0;
  assert_ok(db, sqlq_list(db, queue, SQLQ_STATE_DONE, limit, jobs, &n));
  return n;
}

/* Acked jobs of a handle that keeps history are listed as done, newest
** finished first, with their fields; the other states do not list them,
** and a handle without history leaves nothing there. */
static void done_lists_history(void **state) {
  fixture *f = *state;
  sqlq_db *h = open_history(f);
  sqlq_job_info *jobs = NULL;
  sqlq_job_spec spec = {.payload = "x\0y", .payload_len = 3, .priority = 4};
  spec.dedupe_key = "d";
  spec.group_key = "g";
  int64_t first = fx_push_spec(f->db, f, &spec);
  claimed c = fx_claim_one(f->db, f, 30);
  assert_int_equal(c.id, first);
  assert_ok(h, sqlq_ack(h, c.id, c.token));
  finish_jobs(f, h, f->queue, 3, "later");
  /* Not kept: acked through a handle without history. */
  fx_push(f->db, f, "gone", 0);
  c = fx_claim_one(f->db, f, 30);
  assert_ok(f->db, sqlq_ack(f->db, c.id, c.token));

  size_t n = list_done(f->db, f->queue, 0, &jobs);
  assert_int_equal(n, 4);
  for (size_t i = 0; i + 1 < n; i++) {
    assert_true(jobs[i].run_at_us > jobs[i + 1].run_at_us ||
                (jobs[i].run_at_us == jobs[i + 1].run_at_us && jobs[i].id > jobs[i + 1].id));
    assert_int_equal(jobs[i].state, SQLQ_STATE_DONE);
  }
  sqlq_job_info *j = &jobs[3];
  assert_int_equal(j->id, first);
  assert_int_equal(j->state, SQLQ_STATE_DONE);
  assert_int_equal(j->priority, 4);
  assert_int_equal(j->attempts, 1);
  assert_int_equal(j->payload_len, 3);
  assert_memory_equal(j->payload, "x\0y", 3);
  assert_string_equal(j->dedupe_key, "d");
  assert_string_equal(j->group_key, "g");
  assert_null(j->last_error);
  assert_int_equal(j->lease_until_us, 0);
  assert_true(j->run_at_us >= j->created_at_us);
  sqlq_job_infos_free(jobs, n);

  assert_int_equal(list_done(f->db, f->queue, 2, &jobs), 2);
  sqlq_job_infos_free(jobs, 2);
  assert_int_equal(fx_count(f->db, f, 0), 0);
  assert_status(f->db, sqlq_list(f->db, f->queue, SQLQ_STATE_DONE + 1, 0, &jobs, &n),
                SQLQ_MISUSE);
  sqlq_close(h);
}

int run_retention_tests(void) {
  const struct CMUnitTest tests[] = {
    FX_TEST(done_lists_history),
  };
  return fx_run_group_from("retention", 4, tests, sizeof tests / sizeof tests[0]);
}
