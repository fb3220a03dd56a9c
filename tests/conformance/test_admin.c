/*
** test_admin.c -- queue administration (pause, stats, list, retry, purge),
** transactions and the history option.
*/
#include <string.h>

#include "harness.h"

/* Enqueue one job with a delay (seconds) and return its id. */
static int64_t push_delayed(const fixture *f, double delay) {
  sqlq_job_spec spec = {0};
  spec.delay = delay;
  return fx_push_spec(f->db, f, &spec);
}

/* Claim one job and make it dead; returns its id. */
static int64_t make_dead(const fixture *f) {
  sqlq_fail_options dead = SQLQ_OPTIONS_INIT(sqlq_fail_options);
  claimed c = fx_claim_one(f->db, f, 30);
  assert_true(c.id != 0);
  dead.dead = 1;
  assert_ok(f->db, sqlq_fail(f->db, c.id, c.token, "dead", &dead));
  return c.id;
}

/* A paused queue gives SQLQ_PAUSED and no jobs, to every handle, until it
** is resumed. */
static void pause_and_resume(void **state) {
  fixture *f = *state;
  sqlq_db *other = fx_open(f);
  sqlq_job *jobs = (sqlq_job *)&jobs;
  size_t n = 99;
  int64_t id = fx_push(f->db, f, "p", 0);
  assert_ok(f->db, sqlq_pause(f->db, f->queue));
  assert_status(other, sqlq_claim(other, f->queue, 10, NULL, &jobs, &n), SQLQ_PAUSED);
  assert_int_equal(n, 0);
  assert_null(jobs);
  assert_int_equal(fx_stats(f->db, f).paused, 1);
  assert_int_equal(fx_stats(f->db, f).ready, 1);
  assert_ok(f->db, sqlq_resume(f->db, f->queue));
  assert_int_equal(fx_stats(f->db, f).paused, 0);
  assert_int_equal(fx_claim_one(other, f, 30).id, id);
  sqlq_close(other);
}

/* Pausing a queue with no jobs makes it known to sqlq_stats(). */
static void pause_empty_queue_listed(void **state) {
  fixture *f = *state;
  assert_ok(f->db, sqlq_pause(f->db, f->queue));
  assert_int_equal(fx_stats(f->db, f).paused, 1);
  assert_int_equal(fx_stats(f->db, f).ready, 0);
}

/* Build a queue with 2 ready, 1 scheduled, 1 running and 1 dead job. */
static void make_one_of_each(const fixture *f) {
  fx_push(f->db, f, "dead", 9);
  make_dead(f);
  fx_push(f->db, f, "running", 8);
  assert_true(fx_claim_one(f->db, f, 60).id != 0);
  fx_push(f->db, f, "ready", 0);
  fx_push(f->db, f, "ready", 0);
  push_delayed(f, 600);
}

/* Stats count each state exactly. */
static void stats_counts_exact(void **state) {
  fixture *f = *state;
  sqlq_queue_stats *all = NULL;
  size_t n = 0, i, mine = 0;
  make_one_of_each(f);
  fx_assert_counts(f->db, f, 2, 1, 1, 1);
  assert_int_equal(fx_stats(f->db, f).paused, 0);
  /* Every queue: ours is in the list, which is sorted by name. */
  assert_ok(f->db, sqlq_stats(f->db, NULL, &all, &n));
  for (i = 0; i < n; i++) {
    if (strcmp(all[i].queue, f->queue) == 0) mine++;
    if (i > 0) assert_true(strcmp(all[i - 1].queue, all[i].queue) < 0);
  }
  assert_int_equal(mine, 1);
  sqlq_queue_stats_free(all, n);
}

/* The one summary of queue (limit) that sqlq_summary() gives. */
static sqlq_queue_summary summary_of(const fixture *f, const char *queue, int64_t limit) {
  sqlq_queue_summary *s = NULL, one;
  size_t n = 0;
  assert_ok(f->db, sqlq_summary(f->db, queue, limit, &s, &n));
  assert_int_equal(n, 1);
  assert_string_equal(s[0].queue, queue);
  one = s[0];
  sqlq_queue_summaries_free(s, n);
  return one;
}

/* sqlq_summary() counts what sqlq_stats() counts; a count that reaches
** the limit stops there with its bit set; the oldest due job's age is
** given (-1 with none due); a queue paused with no jobs is listed; every
** queue comes in name order. */
static void summary_bounded(void **state) {
  fixture *f = *state;
  sqlq_queue_summary s, *all = NULL;
  size_t n = 0, i, mine = 0, idle = 0;
  char paused[128];
  make_one_of_each(f); /* 2 ready, 1 scheduled, 1 running, 1 dead */
  s = summary_of(f, f->queue, 100);
  assert_int_equal(s.ready, 2);
  assert_int_equal(s.scheduled, 1);
  assert_int_equal(s.running, 1);
  assert_int_equal(s.dead, 1);
  assert_int_equal(s.more, 0);
  assert_int_equal(s.paused, 0);
  assert_true(s.oldest_ready_age_us >= 0 && s.oldest_ready_age_us < 600000000);
  s = summary_of(f, f->queue, 2); /* exactly the limit: no bit */
  assert_int_equal(s.ready, 2);
  assert_int_equal(s.more, 0);
  s = summary_of(f, f->queue, 1);
  assert_int_equal(s.ready, 1);
  assert_int_equal(s.scheduled, 1);
  assert_int_equal(s.running, 1);
  assert_int_equal(s.dead, 1);
  assert_int_equal(s.more, SQLQ_MORE_READY);
  fx_push(f->db, f, "third", 0);
  push_delayed(f, 600);
  s = summary_of(f, f->queue, 2);
  assert_int_equal(s.ready, 2);
  assert_int_equal(s.scheduled, 2);
  assert_int_equal(s.more, SQLQ_MORE_READY);
  /* A queue paused with no jobs: listed, zeros, none due. */
  fx_name(f, "paused", paused, sizeof paused);
  assert_ok(f->db, sqlq_pause(f->db, paused));
  s = summary_of(f, paused, 5);
  assert_int_equal(s.paused, 1);
  assert_int_equal(s.ready + s.scheduled + s.running + s.dead, 0);
  assert_int_equal(s.oldest_ready_age_us, -1);
  /* Every queue, in bytewise order, ours once each, as sqlq_stats() says. */
  assert_ok(f->db, sqlq_summary(f->db, NULL, 1000, &all, &n));
  for (i = 0; i < n; i++) {
    if (strcmp(all[i].queue, f->queue) == 0) {
      mine++;
      assert_int_equal(all[i].ready, 3);
      assert_int_equal(all[i].scheduled, 2);
    }
    if (strcmp(all[i].queue, paused) == 0) idle += all[i].paused;
    if (i > 0) assert_true(strcmp(all[i - 1].queue, all[i].queue) < 0);
  }
  assert_int_equal(mine, 1);
  assert_int_equal(idle, 1);
  sqlq_queue_summaries_free(all, n);
  /* A queue the database does not know: no entry. */
  fx_name(f, "unknown", paused, sizeof paused);
  all = (sqlq_queue_summary *)&all;
  assert_ok(f->db, sqlq_summary(f->db, paused, 10, &all, &n));
  assert_int_equal(n, 0);
  sqlq_queue_summaries_free(all, n);
}

/* A queue with only scheduled jobs has none due; garbage is refused. */
static void summary_garbage(void **state) {
  fixture *f = *state;
  sqlq_queue_summary *s = (sqlq_queue_summary *)&s;
  size_t n = 99;
  push_delayed(f, 600);
  assert_int_equal(summary_of(f, f->queue, 10).oldest_ready_age_us, -1);
  assert_int_equal(summary_of(f, f->queue, 10).scheduled, 1);
  static const int64_t bad[] = {0, -1, INT64_MIN, SQLQ_SUMMARY_LIMIT_MAX + (int64_t)1, INT64_MAX};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    assert_status(f->db, sqlq_summary(f->db, f->queue, bad[i], &s, &n), SQLQ_MISUSE);
    assert_null(s);
    assert_int_equal(n, 0);
  }
  assert_status(f->db, sqlq_summary(f->db, f->queue, 10, NULL, &n), SQLQ_MISUSE);
  assert_status(f->db, sqlq_summary(f->db, f->queue, 10, &s, NULL), SQLQ_MISUSE);
  assert_true(sqlq_summary(f->db, "", 10, &s, &n) != SQLQ_OK);
  assert_status(NULL, sqlq_summary(NULL, NULL, 10, &s, &n), SQLQ_MISUSE);
  sqlq_queue_summaries_free(NULL, 0);
}

/* sqlq_health lists the backend's items, each with a name, a unit and a
** threshold, over exactly when its value passes the threshold; it needs
** somewhere to put them, and its free function accepts NULL. */
static void health_items(void **state) {
  fixture *f = *state;
  sqlq_health_item *items = NULL;
  size_t n = 99, i;
  fx_push(f->db, f, "x", 0);
  assert_ok(f->db, sqlq_health(f->db, &items, &n));
  assert_true(n >= 3);
  for (i = 0; i < n; i++) {
    assert_non_null(items[i].name);
    assert_true(items[i].name[0] != '\0');
    assert_non_null(items[i].unit);
    assert_true(items[i].value >= 0);
    assert_true(items[i].threshold > 0);
    assert_int_equal(items[i].over, items[i].value > items[i].threshold);
    assert_true(items[i].holder == NULL || items[i].holder[0] != '\0');
    assert_true(items[i].started_at_us >= 0);
  }
  sqlq_health_items_free(items, n);
  items = (sqlq_health_item *)1;
  assert_status(f->db, sqlq_health(f->db, &items, NULL), SQLQ_MISUSE);
  assert_null(items);
  sqlq_health_items_free(NULL, 0);
}

/* sqlq_list filters by state, in claim order, and honours its limit. */
static void list_with_state_filter(void **state) {
  fixture *f = *state;
  sqlq_job_info *jobs = NULL;
  size_t n = 0;
  make_one_of_each(f);
  assert_int_equal(fx_count(f->db, f, 0), 5);
  assert_int_equal(fx_count(f->db, f, SQLQ_STATE_READY), 2);
  assert_int_equal(fx_count(f->db, f, SQLQ_STATE_SCHEDULED), 1);
  assert_int_equal(fx_count(f->db, f, SQLQ_STATE_RUNNING), 1);
  assert_int_equal(fx_count(f->db, f, SQLQ_STATE_DEAD), 1);

  assert_ok(f->db, sqlq_list(f->db, f->queue, SQLQ_STATE_RUNNING, 0, &jobs, &n));
  assert_int_equal(n, 1);
  assert_int_equal(jobs[0].state, SQLQ_STATE_RUNNING);
  assert_int_equal(jobs[0].payload_len, 7);
  assert_memory_equal(jobs[0].payload, "running", 8);
  assert_true(jobs[0].lease_until_us > 0);
  sqlq_job_infos_free(jobs, n);

  assert_ok(f->db, sqlq_list(f->db, f->queue, SQLQ_STATE_SCHEDULED, 0, &jobs, &n));
  assert_int_equal(n, 1);
  assert_int_equal(jobs[0].state, SQLQ_STATE_SCHEDULED);
  assert_int_equal(jobs[0].lease_until_us, 0);
  sqlq_job_infos_free(jobs, n);

  assert_ok(f->db, sqlq_list(f->db, f->queue, 0, 2, &jobs, &n));
  assert_int_equal(n, 2);
  sqlq_job_infos_free(jobs, n);
}

/* retry by ids revives just those dead jobs with a fresh attempt count. */
static void retry_dead_by_ids(void **state) {
  fixture *f = *state;
  int64_t a, b;
  size_t count = 99;
  claimed c;
  fx_push(f->db, f, "a", 0);
  a = make_dead(f);
  fx_push(f->db, f, "b", 0);
  b = make_dead(f);
  assert_ok(f->db, sqlq_retry(f->db, f->queue, &b, 1, &count));
  assert_int_equal(count, 1);
  fx_assert_counts(f->db, f, 1, 0, 0, 1);
  c = fx_claim_one(f->db, f, 30);
  assert_int_equal(c.id, b);
  assert_int_equal(c.attempt, 1);
  {
    found fd = fx_find(f->db, f, a);
    assert_non_null(fd.job);
    assert_int_equal(fd.job->state, SQLQ_STATE_DEAD);
    fx_found_free(&fd);
  }
}

/* retry without ids revives every dead job of the queue, and only those. */
static void retry_all_dead(void **state) {
  fixture *f = *state;
  size_t count = 99;
  fx_push(f->db, f, "a", 0);
  make_dead(f);
  fx_push(f->db, f, "b", 0);
  make_dead(f);
  fx_push(f->db, f, "c", 0);
  assert_true(fx_claim_one(f->db, f, 60).id != 0);
  assert_ok(f->db, sqlq_retry(f->db, f->queue, NULL, 0, &count));
  assert_int_equal(count, 2);
  fx_assert_counts(f->db, f, 2, 0, 1, 0);
}

/* retry by id makes a scheduled job ready now. */
static void retry_scheduled_by_id(void **state) {
  fixture *f = *state;
  int64_t id = push_delayed(f, 600);
  size_t count = 99;
  assert_ok(f->db, sqlq_retry(f->db, f->queue, &id, 1, &count));
  assert_int_equal(count, 1);
  assert_int_equal(fx_claim_one(f->db, f, 30).id, id);
}

/* A dead job whose dedupe key is held by a newer unfinished job stays dead. */
static void retry_keeps_dead_when_key_taken(void **state) {
  fixture *f = *state;
  sqlq_job_spec spec = {0};
  int64_t dead_id, newer;
  size_t count = 99;
  spec.dedupe_key = "key";
  fx_push_spec(f->db, f, &spec);
  dead_id = make_dead(f);
  newer = fx_push_spec(f->db, f, &spec);
  assert_true(newer != dead_id);
  assert_ok(f->db, sqlq_retry(f->db, f->queue, NULL, 0, &count));
  assert_int_equal(count, 0);
  fx_assert_counts(f->db, f, 1, 0, 0, 1);
}

/* delete_dead deletes the dead jobs given and no other: not a job in
** another state, another queue's or an unknown one, nor a dead job that
** another waits for. */
static void delete_dead_by_ids(void **state) {
  fixture *f = *state;
  sqlq_job_spec spec = {0};
  int64_t ids[5], waiter;
  size_t count = 99;
  make_one_of_each(f); /* 2 ready, 1 scheduled, 1 running, 1 dead */
  ids[0] = fx_push(f->db, f, "second dead", 9);
  assert_int_equal(make_dead(f), ids[0]);
  ids[1] = fx_push(f->db, f, "awaited", 9);
  assert_int_equal(make_dead(f), ids[1]);
  assert_ok(f->db, sqlq_enqueue_after(f->db, f->queue, &spec, 1, &ids[1], 1, &waiter));
  ids[2] = fx_push(f->db, f, "ready", 0);
  ids[3] = INT64_MAX;
  ids[4] = ids[0];
  fx_assert_counts(f->db, f, 3, 2, 1, 3);
  assert_ok(f->db, sqlq_delete_dead(f->db, f->queue, ids, 5, &count));
  assert_int_equal(count, 1);
  fx_assert_counts(f->db, f, 3, 2, 1, 2);
  /* Nothing to do, and a bad call. */
  assert_ok(f->db, sqlq_delete_dead(f->db, f->queue, NULL, 0, &count));
  assert_int_equal(count, 0);
  assert_status(f->db, sqlq_delete_dead(f->db, f->queue, NULL, 1, &count), SQLQ_MISUSE);
  assert_status(f->db, sqlq_delete_dead(f->db, "", ids, 1, &count), SQLQ_MISUSE);
}

/* purge deletes every job and makes running tokens stale. */
static void purge_makes_tokens_stale(void **state) {
  fixture *f = *state;
  size_t count = 99;
  claimed c;
  make_one_of_each(f);
  c = fx_claim_one(f->db, f, 30);
  assert_true(c.id != 0);
  assert_ok(f->db, sqlq_purge(f->db, f->queue, &count));
  assert_int_equal(count, 5);
  assert_status(f->db, sqlq_ack(f->db, c.id, c.token), SQLQ_STALE);
  assert_status(f->db, sqlq_touch(f->db, c.id, c.token, 30, NULL), SQLQ_STALE);
  fx_assert_counts(f->db, f, 0, 0, 0, 0);
  assert_int_equal(fx_count(f->db, f, 0), 0);
}

/* A job enqueued in a rolled-back transaction does not exist. */
static void transaction_rollback_drops_job(void **state) {
  fixture *f = *state;
  sqlq_job_spec specs[2];
  memset(specs, 0, sizeof specs);
  assert_ok(f->db, sqlq_begin(f->db));
  fx_push(f->db, f, "gone", 0);
  assert_ok(f->db, sqlq_enqueue_batch(f->db, f->queue, specs, 2, NULL));
  assert_ok(f->db, sqlq_rollback(f->db));
  assert_int_equal(fx_count(f->db, f, 0), 0);
  assert_int_equal(fx_claim_one(f->db, f, 30).id, 0);
}

/* A job enqueued in a committed transaction is there for other handles. */
static void transaction_commit_keeps_job(void **state) {
  fixture *f = *state;
  int64_t id;
  sqlq_db *other = fx_open(f);
  assert_ok(f->db, sqlq_begin(f->db));
  id = fx_push(f->db, f, "kept", 0);
  assert_ok(f->db, sqlq_commit(f->db));
  assert_int_equal(fx_claim_one(other, f, 30).id, id);
  sqlq_close(other);
}

/* A nested begin is refused and leaves the open transaction usable. */
static void nested_begin_is_misuse(void **state) {
  fixture *f = *state;
  assert_ok(f->db, sqlq_begin(f->db));
  assert_status(f->db, sqlq_begin(f->db), SQLQ_MISUSE);
  fx_push(f->db, f, "in", 0);
  assert_ok(f->db, sqlq_commit(f->db));
  assert_int_equal(fx_count(f->db, f, 0), 1);
}

/* Acking works with history kept, set by option or by URL. */
static void ack_with_history(void **state) {
  fixture *f = *state;
  sqlq_options opts = SQLQ_OPTIONS_INIT(sqlq_options);
  const char *urlopt[2] = {NULL, "history=1"};
  int i;
  opts.keep_history = 1;
  for (i = 0; i < 2; i++) {
    sqlq_db *db = NULL;
    claimed c;
    assert_ok(db, fx_open_with(f, urlopt[i], i == 0 ? &opts : NULL, &db));
    fx_push(db, f, "h", 0);
    c = fx_claim_one(db, f, 30);
    assert_true(c.id != 0);
    assert_ok(db, sqlq_ack(db, c.id, c.token));
    assert_status(db, sqlq_ack(db, c.id, c.token), SQLQ_STALE);
    assert_int_equal(fx_count(db, f, 0), 0);
    sqlq_close(db);
  }
}

int run_admin_tests(void) {
  const struct CMUnitTest tests[] = {
    FX_TEST(pause_and_resume),
    FX_TEST(pause_empty_queue_listed),
    FX_TEST(stats_counts_exact),
    FX_TEST(summary_bounded),
    FX_TEST(summary_garbage),
    FX_TEST(health_items),
    FX_TEST(list_with_state_filter),
    FX_TEST(retry_dead_by_ids),
    FX_TEST(retry_all_dead),
    FX_TEST(retry_scheduled_by_id),
    FX_TEST(retry_keeps_dead_when_key_taken),
    FX_TEST(delete_dead_by_ids),
    FX_TEST(purge_makes_tokens_stale),
    FX_TEST(transaction_rollback_drops_job),
    FX_TEST(transaction_commit_keeps_job),
    FX_TEST(nested_begin_is_misuse),
    FX_TEST(ack_with_history),
  };
  return FX_RUN_GROUP("admin", tests);
}
