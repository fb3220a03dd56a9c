/*
** test_retention.c -- finished jobs in history: listing them
** (SQLQ_STATE_DONE), a queue's retention, and pruning in bounded batches,
** on demand and by the handle that claims.  (Schema version 5.)
*/
#include <math.h>
#include <pthread.h>
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

static size_t count_done(sqlq_db *db, const char *queue) {
  sqlq_job_info *jobs = NULL;
  size_t n = list_done(db, queue, 0, &jobs);
  sqlq_job_infos_free(jobs, n);
  return n;
}

/* A handle that keeps history, after n jobs of the fixture's queue
** finished through it and the queue got a retention of keep_count. */
static sqlq_db *history_to_prune(const fixture *f, size_t n, int64_t keep_count) {
  sqlq_db *h = open_history(f);
  finish_jobs(f, h, f->queue, n, "j");
  assert_ok(f->db, sqlq_retention_set(f->db, f->queue, 0, keep_count));
  return h;
}

/* Assert that the done jobs of the fixture's queue are the newest kept of
** the n that history_to_prune() finished (payloads "j0" to "j<n-1>"). */
static void assert_newest_kept(const fixture *f, size_t n, size_t kept) {
  sqlq_job_info *left = NULL;
  assert_int_equal(list_done(f->db, f->queue, 0, &left), kept);
  for (size_t i = 0; i < kept; i++)
    assert_true((size_t)atoi((const char *)left[i].payload + 1) >= n - kept);
  sqlq_job_infos_free(left, kept);
}

/* Claim from the fixture's queue, which has no job, through db. */
static void claim_none(sqlq_db *db, const fixture *f) {
  sqlq_job *jobs = NULL;
  size_t n = 1;
  assert_ok(db, sqlq_claim(db, f->queue, 10, NULL, &jobs, &n));
  assert_int_equal(n, 0);
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
  assert_status(f->db, sqlq_list(f->db, f->queue, SQLQ_STATE_WAITING + 1, 0, &jobs, &n),
                SQLQ_MISUSE);
  sqlq_close(h);
}

/* A queue's retention reads back as set, for every handle; a queue never
** set has none; bad values are refused and change nothing. */
static void retention_setting(void **state) {
  fixture *f = *state;
  sqlq_db *other = fx_open(f);
  double keep_for = -1;
  int64_t keep_count = -1;
  assert_ok(f->db, sqlq_retention_get(f->db, f->queue, &keep_for, &keep_count));
  assert_true(keep_for == 0 && keep_count == 0);
  assert_ok(f->db, sqlq_retention_set(f->db, f->queue, 3600.25, 10));
  assert_ok(other, sqlq_retention_get(other, f->queue, &keep_for, &keep_count));
  assert_true(keep_for == 3600.25);
  assert_int_equal(keep_count, 10);
  assert_status(f->db, sqlq_retention_set(f->db, f->queue, -1, 0), SQLQ_MISUSE);
  assert_status(f->db, sqlq_retention_set(f->db, f->queue, NAN, 0), SQLQ_MISUSE);
  assert_status(f->db, sqlq_retention_set(f->db, f->queue, 1e300, 0), SQLQ_MISUSE);
  assert_status(f->db, sqlq_retention_set(f->db, f->queue, 0, -1), SQLQ_MISUSE);
  assert_status(f->db, sqlq_retention_set(f->db, f->queue, 0, SQLQ_KEEP_COUNT_MAX + 1LL),
                SQLQ_MISUSE);
  assert_status(f->db, sqlq_retention_set(f->db, "", 1, 1), SQLQ_MISUSE);
  assert_ok(other, sqlq_retention_get(other, f->queue, &keep_for, &keep_count));
  assert_true(keep_for == 3600.25);
  assert_int_equal(keep_count, 10);
  /* Only the count. */
  assert_ok(f->db, sqlq_retention_set(f->db, f->queue, 0, 7));
  assert_ok(other, sqlq_retention_get(other, f->queue, &keep_for, NULL));
  assert_true(keep_for == 0);
  /* A paused queue keeps its retention, and the retention its pause. */
  assert_ok(f->db, sqlq_pause(f->db, f->queue));
  assert_ok(other, sqlq_retention_get(other, f->queue, NULL, &keep_count));
  assert_int_equal(keep_count, 7);
  assert_ok(f->db, sqlq_retention_set(f->db, f->queue, 0, 0));
  assert_int_equal(fx_stats(f->db, f).paused, 1);
  assert_ok(other, sqlq_retention_get(other, f->queue, &keep_for, &keep_count));
  assert_true(keep_for == 0 && keep_count == 0);
  size_t pruned = 9;
  assert_status(f->db, sqlq_history_prune(f->db, f->queue, SQLQ_PRUNE_BATCH_MAX + 1, &pruned),
                SQLQ_MISUSE);
  assert_int_equal(pruned, 0);
  sqlq_close(other);
}

/* keep_count N keeps exactly the N newest finished jobs of the queue (by
** finished_at, then id: the order of the done list) and no other queue's. */
static void count_retention_prunes_exactly(void **state) {
  fixture *f = *state;
  sqlq_db *h = open_history(f);
  char other[128];
  sqlq_job_info *before = NULL, *after = NULL;
  size_t pruned = 99;
  fx_name(f, "other", other, sizeof other);
  /* Several acks, so that finishing times differ and tie. */
  for (int i = 0; i < 5; i++) finish_jobs(f, h, f->queue, 5, "c");
  finish_jobs(f, h, other, 3, "o");
  assert_ok(f->db, sqlq_retention_set(f->db, other, 0, 1));
  /* No retention: nothing goes. */
  assert_ok(h, sqlq_history_prune(h, f->queue, 0, &pruned));
  assert_int_equal(pruned, 0);
  size_t n_before = list_done(f->db, f->queue, 0, &before);
  assert_int_equal(n_before, 25);

  assert_ok(f->db, sqlq_retention_set(f->db, f->queue, 0, 10));
  assert_ok(h, sqlq_history_prune(h, f->queue, 0, &pruned));
  assert_int_equal(pruned, 15);
  size_t n_after = list_done(f->db, f->queue, 0, &after);
  assert_int_equal(n_after, 10);
  for (size_t i = 0; i < n_after; i++) assert_int_equal(after[i].id, before[i].id);
  assert_ok(h, sqlq_history_prune(h, f->queue, 0, &pruned));
  assert_int_equal(pruned, 0);
  assert_int_equal(count_done(f->db, other), 3);
  sqlq_job_infos_free(before, n_before);
  sqlq_job_infos_free(after, n_after);
  sqlq_close(h);
}

/* The database's clock now, in microseconds: the created_at of a job
** enqueued on clock_queue (emptied first). */
static int64_t db_now(const fixture *f, const char *clock_queue) {
  sqlq_job_info *jobs = NULL;
  size_t n = 0;
  int64_t id = 0;
  assert_ok(f->db, sqlq_purge(f->db, clock_queue, NULL));
  assert_ok(f->db, sqlq_enqueue(f->db, clock_queue, &(sqlq_job_spec){0}, &id, NULL));
  assert_ok(f->db, sqlq_list(f->db, clock_queue, 0, 1, &jobs, &n));
  assert_int_equal(n, 1);
  int64_t now = jobs[0].created_at_us;
  sqlq_job_infos_free(jobs, n);
  return now;
}

/* Whether the job id is among the done jobs of queue. */
static int is_done(sqlq_job_info *done, size_t n, int64_t id) {
  for (size_t i = 0; i < n; i++)
    if (done[i].id == id) return 1;
  return 0;
}

/*
** keep_for K prunes the jobs that finished more than K before the prune
** and keeps the others.  The prune's clock is not seen, only bracketed by
** two readings T1 <= now <= T2: a job that finished before T1 - K must be
** gone, one that finished at T2 - K or later must stay.  Group A finishes
** more than K before T1; a round is conclusive when the fresh group B
** finished after T2 - K (the round took less than K), which a few rounds
** make all but certain whatever the load.
*/
static void age_retention_prunes_exactly(void **state) {
  fixture *f = *state;
  const double keep = 2.0;
  const int64_t keep_us = 2000000;
  sqlq_db *h = open_history(f);
  char clock_queue[128];
  sqlq_job_info *all = NULL;
  int conclusive = 0;
  fx_name(f, "clock", clock_queue, sizeof clock_queue);
  finish_jobs(f, h, f->queue, 3, "a");
  size_t n_all = list_done(f->db, f->queue, 0, &all);
  int64_t a_last = all[0].run_at_us;
  sqlq_job_infos_free(all, n_all);
  /* Wait on the database's clock until A is older than K. */
  double deadline = fx_now() + 30;
  while (db_now(f, clock_queue) <= a_last + keep_us && fx_now() < deadline) fx_sleep(0.1);
  assert_ok(f->db, sqlq_retention_set(f->db, f->queue, keep, 0));
  for (int round = 0; round < 5 && !conclusive; round++) {
    sqlq_job_info *before = NULL, *after = NULL;
    size_t pruned = 0;
    finish_jobs(f, h, f->queue, 2, "b");
    size_t n_before = list_done(f->db, f->queue, 0, &before);
    int64_t t1 = db_now(f, clock_queue);
    assert_ok(h, sqlq_history_prune(h, f->queue, 0, &pruned));
    int64_t t2 = db_now(f, clock_queue);
    size_t n_after = list_done(f->db, f->queue, 0, &after);
    assert_int_equal(n_before - n_after, pruned);
    int old_gone = 1, new_kept = 1;
    for (size_t i = 0; i < n_before; i++) {
      int kept = is_done(after, n_after, before[i].id);
      if (before[i].run_at_us < t1 - keep_us) assert_false(kept);
      if (before[i].run_at_us >= t2 - keep_us) assert_true(kept);
      if (strncmp((const char *)before[i].payload, "a", 1) == 0) old_gone &= !kept;
      if (i < 2) new_kept &= before[i].run_at_us >= t2 - keep_us;
    }
    assert_true(old_gone);
    conclusive = new_kept;
    sqlq_job_infos_free(before, n_before);
    sqlq_job_infos_free(after, n_after);
  }
  assert_true(conclusive);
  sqlq_close(h);
}

/* A backlog of 10,000 finished jobs goes in batches of at most the size
** asked for, oldest first, however large it is. */
static void backlog_pruned_in_batches(void **state) {
  fixture *f = *state;
  sqlq_db *h = history_to_prune(f, 10000, 100);
  size_t pruned = 0, total = 0;
  int calls = 0;
  assert_ok(h, sqlq_history_prune(h, f->queue, 300, &pruned));
  assert_int_equal(pruned, 300);
  total += pruned;
  do {
    assert_ok(h, sqlq_history_prune(h, f->queue, 0, &pruned));
    assert_true(pruned <= SQLQ_PRUNE_BATCH);
    total += pruned;
    calls++;
  } while (pruned == SQLQ_PRUNE_BATCH && calls < 100);
  /* 9,600 more: nine full batches and one of 600. */
  assert_int_equal(calls, 10);
  assert_int_equal(pruned, 600);
  assert_int_equal(total, 9900);
  assert_newest_kept(f, 10000, 100);
  sqlq_close(h);
}

/* A handle that keeps history prunes the queue it claims from, one batch
** of SQLQ_PRUNE_BATCH per claim while batches come back full; a handle
** that keeps none never prunes. */
static void claim_prunes_in_batches(void **state) {
  fixture *f = *state;
  sqlq_db *h = history_to_prune(f, 2500, 100);
  claim_none(f->db, f);
  assert_int_equal(count_done(f->db, f->queue), 2500);
  static const size_t left[] = {1500, 500, 100, 100};
  for (size_t i = 0; i < sizeof left / sizeof left[0]; i++) {
    claim_none(h, f);
    assert_int_equal(count_done(f->db, f->queue), left[i]);
  }
  sqlq_close(h);
}

/* A claim inside the caller's transaction (sqlq_begin()) prunes nothing:
** the caller's commit is not the prune's to make.  The next claim outside
** one does. */
static void no_prune_in_caller_transaction(void **state) {
  fixture *f = *state;
  sqlq_db *h = history_to_prune(f, 30, 10);
  assert_ok(h, sqlq_begin(h));
  claim_none(h, f);
  assert_ok(h, sqlq_commit(h));
  assert_int_equal(count_done(f->db, f->queue), 30);
  claim_none(h, f);
  assert_int_equal(count_done(f->db, f->queue), 10);
  sqlq_close(h);
}

/* A pruner of concurrent_prunes: its handle, what it pruned, how it ended. */
typedef struct pruner {
  const fixture *f;
  size_t pruned;
  int status;
} pruner;

/* Prune in batches of 100 until a batch comes back short, going on after
** SQLQ_BUSY (a row another pruner deletes). */
static void *prune_loop(void *arg) {
  pruner *p = arg;
  sqlq_db *db = NULL;
  size_t n = 100;
  if ((p->status = fx_open_with(p->f, NULL, NULL, &db)) != SQLQ_OK) {
    sqlq_close(db);
    return NULL;
  }
  for (int i = 0; i < 1000 && n == 100; i++) {
    p->status = sqlq_history_prune(db, p->f->queue, 100, &n);
    if (p->status == SQLQ_BUSY) {
      n = 100;
      continue;
    }
    if (p->status != SQLQ_OK) break;
    p->pruned += n;
  }
  if (p->status == SQLQ_BUSY) p->status = SQLQ_OK;
  sqlq_close(db);
  return NULL;
}

/* Three handles pruning one queue at once fail with nothing but
** SQLQ_BUSY, count each row they delete once, and leave (with a last
** prune) exactly the newest keep_count. */
static void concurrent_prunes(void **state) {
  fixture *f = *state;
  sqlq_db *h = history_to_prune(f, 3000, 500);
  pruner p[3];
  pthread_t threads[3];
  size_t total = 0, n = 0;
  for (int i = 0; i < 3; i++) {
    p[i] = (pruner){.f = f};
    assert_int_equal(pthread_create(&threads[i], NULL, prune_loop, &p[i]), 0);
  }
  for (int i = 0; i < 3; i++) {
    assert_int_equal(pthread_join(threads[i], NULL), 0);
    assert_ok(NULL, p[i].status);
    total += p[i].pruned;
  }
  do {
    assert_ok(h, sqlq_history_prune(h, f->queue, 0, &n));
    total += n;
  } while (n > 0);
  assert_int_equal(total, 2500);
  assert_newest_kept(f, 3000, 500);
  sqlq_close(h);
}

int run_retention_tests(void) {
  const struct CMUnitTest tests[] = {
    FX_TEST(done_lists_history),
    FX_TEST(retention_setting),
    FX_TEST(count_retention_prunes_exactly),
    FX_TEST(age_retention_prunes_exactly),
    FX_TEST(backlog_pruned_in_batches),
    FX_TEST(claim_prunes_in_batches),
    FX_TEST(no_prune_in_caller_transaction),
    FX_TEST(concurrent_prunes),
  };
  return fx_run_group_from("retention", 5, tests, sizeof tests / sizeof tests[0]);
}
