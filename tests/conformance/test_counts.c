/*
** test_counts.c -- counts of what handles did (schema version 13):
** sqlq_counts(), sqlq_counts_flush(), the URL options counts and
** counts_flush, and what each call counts.
*/
#include <math.h>
#include <string.h>
#include <time.h>

#include "harness.h"

/* The sums of the rows of sqlq_counts of queue (NULL: of every queue but
** the named locks' row, which sum_locks adds up) since an hour ago. */
typedef struct sums {
  int64_t enqueued, finished, failed, dead, claims, lags, locks, lock_busy;
} sums;

static sums sum_counts(sqlq_db *db, const char *queue) {
  sqlq_minute_counts *rows = NULL;
  size_t n = 0, i;
  int b;
  sums s = {0};
  assert_ok(db, sqlq_counts(db, queue, (int64_t)time(NULL) - 3600, &rows, &n));
  for (i = 0; i < n; i++) {
    if (i > 0) assert_true(strcmp(rows[i - 1].queue, rows[i].queue) <= 0);
    if (queue != NULL) assert_string_equal(rows[i].queue, queue);
    if (rows[i].queue[0] == '\0') {
      s.locks += rows[i].locks;
      s.lock_busy += rows[i].lock_busy;
      continue;
    }
    if (queue == NULL) continue;
    s.enqueued += rows[i].enqueued;
    s.finished += rows[i].finished;
    s.failed += rows[i].failed;
    s.dead += rows[i].dead;
    for (b = 0; b < SQLQ_LATENCY_BUCKETS; b++) {
      s.claims += rows[i].claims[b];
      s.lags += rows[i].lags[b];
    }
  }
  sqlq_minute_counts_free(rows, n);
  return s;
}

/* A worker's handle counts what it claimed, finished, retried and made
** dead; the producer's counts what it enqueued; each once flushed. */
static void counts_of_a_worker(void **state) {
  fixture *f = *state;
  sqlq_db *w = fx_open(f), *p = NULL;
  sqlq_fail_options dead = SQLQ_OPTIONS_INIT(sqlq_fail_options);
  sqlq_fail_options again = SQLQ_OPTIONS_INIT(sqlq_fail_options);
  claimed c[4];
  int i;
  /* The producer flushes when told only (a handle flushing every 5 s
  ** would flush by itself on a machine slow enough, as under valgrind). */
  assert_ok(p, fx_open_with(f, "counts_flush=3600", NULL, &p));
  for (i = 0; i < 4; i++) fx_push(p, f, "job", 0);
  assert_int_equal(sum_counts(f->db, f->queue).enqueued, 0); /* not flushed yet */
  assert_ok(p, sqlq_counts_flush(p));
  sqlq_close(p);
  assert_int_equal(sum_counts(f->db, f->queue).enqueued, 4);
  for (i = 0; i < 4; i++) {
    c[i] = fx_claim_one(w, f, 30);
    assert_true(c[i].id != 0);
  }
  assert_int_equal(fx_claim_one(w, f, 30).id, 0); /* an empty claim is a claim too */
  assert_ok(w, sqlq_ack(w, c[0].id, c[0].token));
  sqlq_job_ref refs[2] = {{c[1].id, c[1].token}, {c[1].id + 1000000, 1}};
  assert_status(w, sqlq_ack_batch(w, refs, 2, NULL), SQLQ_STALE);
  dead.dead = 1;
  assert_ok(w, sqlq_fail(w, c[2].id, c[2].token, "boom", &dead));
  again.retry_now = 1;
  assert_ok(w, sqlq_fail(w, c[3].id, c[3].token, "again", &again));
  assert_ok(w, sqlq_counts_flush(w));
  sums s = sum_counts(f->db, f->queue);
  assert_int_equal(s.enqueued, 4);
  assert_int_equal(s.finished, 2); /* the stale ref is not counted */
  assert_int_equal(s.dead, 1);
  assert_int_equal(s.failed, 1);
  assert_int_equal(s.claims, 5);
  assert_int_equal(s.lags, 4);
  /* Flushing again with nothing new changes nothing. */
  assert_ok(w, sqlq_counts_flush(w));
  assert_int_equal(sum_counts(f->db, f->queue).finished, 2);
  /* The retried job, claimed and acked again: counted again; the handle
  ** closing writes it. */
  c[3] = fx_claim_one(w, f, 30);
  assert_true(c[3].id != 0);
  assert_ok(w, sqlq_ack(w, c[3].id, c[3].token));
  sqlq_close(w);
  s = sum_counts(f->db, f->queue);
  assert_int_equal(s.finished, 3);
  assert_int_equal(s.lags, 5);
}

/* What a call counts inside the caller's transaction is written after its
** commit, and dropped by its rollback. */
static void counts_follow_the_transaction(void **state) {
  fixture *f = *state;
  assert_ok(f->db, sqlq_begin(f->db));
  fx_push(f->db, f, "rolled back", 0);
  assert_status(f->db, sqlq_counts_flush(f->db), SQLQ_MISUSE);
  assert_ok(f->db, sqlq_rollback(f->db));
  assert_ok(f->db, sqlq_counts_flush(f->db));
  assert_int_equal(sum_counts(f->db, f->queue).enqueued, 0);
  assert_ok(f->db, sqlq_begin(f->db));
  fx_push(f->db, f, "committed", 0);
  fx_push(f->db, f, "committed", 0);
  assert_ok(f->db, sqlq_commit(f->db));
  assert_ok(f->db, sqlq_counts_flush(f->db));
  assert_int_equal(sum_counts(f->db, f->queue).enqueued, 2);
  /* A duplicate is not a job enqueued. */
  sqlq_job_spec spec = {0};
  spec.dedupe_key = "k";
  fx_push_spec(f->db, f, &spec);
  fx_push_spec(f->db, f, &spec);
  assert_ok(f->db, sqlq_counts_flush(f->db));
  assert_int_equal(sum_counts(f->db, f->queue).enqueued, 3);
}

/* Named-lock acquisitions are counted on the row of no queue. */
static void counts_of_locks(void **state) {
  fixture *f = *state;
  sqlq_db *w = fx_open(f);
  sqlq_lock *lock = NULL, *other = NULL;
  char name[128];
  fx_name(f, "lock", name, sizeof name);
  sums before = sum_counts(f->db, NULL);
  assert_ok(w, sqlq_lock_acquire(w, name, strlen(name), 0, &lock));
  assert_status(f->db, sqlq_lock_acquire(f->db, name, strlen(name), 0, &other), SQLQ_BUSY);
  sqlq_unlock(lock);
  assert_ok(w, sqlq_counts_flush(w));
  assert_ok(f->db, sqlq_counts_flush(f->db));
  sums after = sum_counts(f->db, NULL);
  assert_true(after.locks >= before.locks + 2);
  assert_true(after.lock_busy >= before.lock_busy + 1);
  sqlq_close(w);
}

/* counts=off counts nothing; the URL options take only what they say. */
static void counts_off_and_options(void **state) {
  fixture *f = *state;
  sqlq_db *db = NULL;
  assert_ok(db, fx_open_with(f, "counts=off", NULL, &db));
  fx_push(db, f, "not counted", 0);
  assert_ok(db, sqlq_counts_flush(db));
  sqlq_close(db);
  assert_int_equal(sum_counts(f->db, f->queue).enqueued, 0);
  db = NULL;
  assert_ok(db, fx_open_with(f, "counts=on&counts_flush=0.05", NULL, &db));
  fx_push(db, f, "counted", 0);
  fx_sleep(0.1);
  fx_push(db, f, "flushes both", 0); /* the flush was due: this call writes */
  assert_int_equal(sum_counts(f->db, f->queue).enqueued, 2);
  sqlq_close(db);
  static const char *const bad[] = {"counts=maybe",      "counts=",        "counts_flush=0",
                                    "counts_flush=3601", "counts_flush=x", "counts_flush=nan"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    db = NULL;
    assert_status(db, fx_open_with(f, bad[i], NULL, &db), SQLQ_MISUSE);
    assert_non_null(strstr(sqlq_errmsg(db), "counts"));
    sqlq_close(db);
  }
}

/* The garbage sqlq_counts() refuses, and the buckets' bounds. */
static void counts_garbage(void **state) {
  fixture *f = *state;
  sqlq_minute_counts *rows = (sqlq_minute_counts *)&rows;
  size_t n = 99;
  char long_name[300];
  memset(long_name, 'q', sizeof long_name - 1);
  long_name[sizeof long_name - 1] = '\0';
  assert_status(f->db, sqlq_counts(f->db, f->queue, 0, &rows, NULL), SQLQ_MISUSE);
  assert_null(rows);
  assert_status(f->db, sqlq_counts(f->db, f->queue, 0, NULL, &n), SQLQ_MISUSE);
  assert_int_equal(n, 0);
  assert_true(sqlq_counts(f->db, long_name, 0, &rows, &n) != SQLQ_OK);
  assert_true(sqlq_counts(f->db, "", 0, &rows, &n) != SQLQ_OK);
  assert_status(NULL, sqlq_counts(NULL, NULL, 0, &rows, &n), SQLQ_MISUSE);
  assert_status(NULL, sqlq_counts_flush(NULL), SQLQ_MISUSE);
  /* A since in the future: no rows. */
  assert_ok(f->db, sqlq_counts(f->db, NULL, INT64_MAX, &rows, &n));
  assert_int_equal(n, 0);
  sqlq_minute_counts_free(rows, n);
  sqlq_minute_counts_free(NULL, 0);
  assert_true(sqlq_latency_bound(0) == 0.001);
  assert_true(sqlq_latency_bound(SQLQ_LATENCY_BUCKETS - 2) == 300);
  assert_true(isinf(sqlq_latency_bound(SQLQ_LATENCY_BUCKETS - 1)));
  assert_true(isinf(sqlq_latency_bound(-1)));
  assert_true(isinf(sqlq_latency_bound(1000)));
  for (int i = 1; i < SQLQ_LATENCY_BUCKETS; i++)
    assert_true(sqlq_latency_bound(i) > sqlq_latency_bound(i - 1));
}

/* sqlq_last_job_id gives the id of the last job inserted, or a later
** one's (another test's). */
static void last_job_id(void **state) {
  fixture *f = *state;
  int64_t last = -1, id = fx_push(f->db, f, "one", 0);
  assert_ok(f->db, sqlq_last_job_id(f->db, &last));
  assert_true(last >= id);
  id = fx_push(f->db, f, "two", 0);
  int64_t later = -1;
  assert_ok(f->db, sqlq_last_job_id(f->db, &later));
  assert_true(later >= id);
  assert_true(later > last);
  assert_status(f->db, sqlq_last_job_id(f->db, NULL), SQLQ_MISUSE);
  assert_status(NULL, sqlq_last_job_id(NULL, &last), SQLQ_MISUSE);
}

int run_counts_tests(void) {
  const struct CMUnitTest tests[] = {
    FX_TEST(counts_of_a_worker), FX_TEST(counts_follow_the_transaction),
    FX_TEST(counts_of_locks),    FX_TEST(counts_off_and_options),
    FX_TEST(counts_garbage),     FX_TEST(last_job_id),
  };
  return fx_run_group_from("counts", 13, tests, sizeof tests / sizeof tests[0]);
}
