/*
** test_input.c -- bad input through the API: queue names, job specs, lock
** names and URLs.  Each is refused with a clear status and leaves the jobs
** already stored as they were.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#include "test_backends.h"

/* The jobs stored before the bad input, to compare with afterwards. */
typedef struct snapshot {
  sqlq_job_info *jobs;
  size_t n;
} snapshot;

/* Store a few jobs in several states and take a snapshot of them. */
static snapshot store_reference_jobs(const fixture *f) {
  sqlq_job_spec spec = {0};
  snapshot s = {0};
  fx_push(f->db, f, "one", 0);
  fx_push(f->db, f, "two", 5);
  spec.payload = "\0three";
  spec.payload_len = 6;
  spec.delay = 600;
  spec.dedupe_key = "d";
  fx_push_spec(f->db, f, &spec);
  assert_ok(f->db, sqlq_list(f->db, f->queue, 0, 0, &s.jobs, &s.n));
  assert_int_equal(s.n, 3);
  return s;
}

/* Assert that the stored jobs are exactly those of the snapshot, then free
** the snapshot. */
static void assert_intact_and_free(const fixture *f, snapshot *s) {
  sqlq_job_info *now = NULL;
  size_t n = 0, i;
  assert_ok(f->db, sqlq_list(f->db, f->queue, 0, 0, &now, &n));
  assert_int_equal(n, s->n);
  for (i = 0; i < n; i++) {
    assert_int_equal(now[i].id, s->jobs[i].id);
    assert_int_equal(now[i].state, s->jobs[i].state);
    assert_int_equal(now[i].attempts, s->jobs[i].attempts);
    assert_int_equal(now[i].run_at_us, s->jobs[i].run_at_us);
    assert_int_equal(now[i].payload_len, s->jobs[i].payload_len);
    assert_memory_equal(now[i].payload, s->jobs[i].payload, now[i].payload_len);
  }
  sqlq_job_infos_free(now, n);
  sqlq_job_infos_free(s->jobs, s->n);
  memset(s, 0, sizeof *s);
}

/* Every call that takes a queue name refuses name with SQLQ_MISUSE, but
** sqlq_purge() when controls is set: name is a queue name but for its
** control characters, which a queue a plain-SQL writer made may have, and
** there is nothing to purge. */
static void assert_queue_name_refused(sqlq_db *db, const char *name, int controls) {
  sqlq_job_spec spec = {0};
  sqlq_job *jobs = NULL;
  sqlq_job_info *infos = NULL;
  sqlq_queue_stats *stats = NULL;
  size_t n_infos = 0, n_stats = 0;
  size_t n = 0;
  int64_t id = 0;
  assert_status(db, sqlq_enqueue(db, name, &spec, &id, NULL), SQLQ_MISUSE);
  assert_status(db, sqlq_enqueue_batch(db, name, &spec, 1, &id), SQLQ_MISUSE);
  assert_status(db, sqlq_claim(db, name, 1, NULL, &jobs, &n), SQLQ_MISUSE);
  assert_int_equal(n, 0);
  assert_status(db, sqlq_pause(db, name), SQLQ_MISUSE);
  assert_status(db, sqlq_resume(db, name), SQLQ_MISUSE);
  assert_status(db, sqlq_list(db, name, 0, 0, &infos, &n_infos), SQLQ_MISUSE);
  assert_status(db, sqlq_retry(db, name, NULL, 0, NULL), SQLQ_MISUSE);
  size_t purged = 99;
  assert_status(db, sqlq_purge(db, name, &purged), controls ? SQLQ_OK : SQLQ_MISUSE);
  if (controls) assert_int_equal(purged, 0);
  assert_status(db, sqlq_wait(db, name, 0), SQLQ_MISUSE);
  /* NULL asks sqlq_stats() for every queue, so it is no bad input there. */
  if (name != NULL) assert_status(db, sqlq_stats(db, name, &stats, &n_stats), SQLQ_MISUSE);
  assert_true(strlen(sqlq_errmsg(db)) > 0);
}

/* NULL, empty, over-long, control-character and non-UTF-8 queue names are
** refused by every call. */
static void bad_queue_names_refused(void **state) {
  fixture *f = *state;
  static const struct {
    const char *name;
    int controls;
  } bad[] = {
    {"", 0},           {"line\nbreak", 1}, {"tab\there", 1},          {"\x01", 1},
    {"esc\x1b[0m", 1}, {"bell\x07", 1},    {"\xff\xfe not utf-8", 0}, {"truncated \xc3", 0},
  };
  char long_name[SQLQ_QUEUE_NAME_MAX + 2], *huge = malloc(10001);
  snapshot s = store_reference_jobs(f);
  size_t i;
  assert_non_null(huge);
  memset(long_name, 'q', sizeof long_name - 1);
  long_name[sizeof long_name - 1] = '\0';
  memset(huge, 'h', 10000);
  huge[10000] = '\0';
  assert_queue_name_refused(f->db, NULL, 0);
  assert_queue_name_refused(f->db, long_name, 0);
  assert_queue_name_refused(f->db, huge, 0);
  for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_queue_name_refused(f->db, bad[i].name, bad[i].controls);
  assert_intact_and_free(f, &s);
  free(huge);
}

/* Names that are merely unusual -- 128 bytes, quotes and SQL, non-ASCII
** UTF-8 -- are valid queues of their own. */
static void unusual_queue_names_work(void **state) {
  fixture *f = *state;
  char names[3][SQLQ_QUEUE_NAME_MAX + 1];
  snapshot s = store_reference_jobs(f);
  int i;
  memset(names[0], 'x', SQLQ_QUEUE_NAME_MAX);
  names[0][SQLQ_QUEUE_NAME_MAX] = '\0';
  memcpy(names[0], f->queue, strlen(f->queue));
  snprintf(names[1], sizeof names[1], "%s'\"; DROP TABLE sqlq_jobs; --", f->queue);
  snprintf(names[2], sizeof names[2],
           "%s-\xd0\xbe\xd1\x87\xd0\xb5\xd1\x80\xd0\xb5\xd0\xb4\xd1\x8c-\xc3\xa9", f->queue);
  for (i = 0; i < 3; i++) {
    sqlq_job_spec spec = {0};
    sqlq_job *jobs = NULL;
    int64_t id = 0;
    size_t purged = 0;
    size_t n = 0;
    assert_ok(f->db, sqlq_enqueue(f->db, names[i], &spec, &id, NULL));
    assert_ok(f->db, sqlq_claim(f->db, names[i], 5, NULL, &jobs, &n));
    assert_int_equal(n, 1);
    assert_int_equal(jobs[0].id, id);
    assert_string_equal(jobs[0].queue, names[i]);
    sqlq_jobs_free(jobs, n);
    assert_ok(f->db, sqlq_purge(f->db, names[i], &purged));
    assert_int_equal(purged, 1);
  }
  assert_intact_and_free(f, &s);
}

/* Enqueue spec and assert that it is refused with expected or with
** alternative. */
static void assert_spec_refused(const fixture *f, const sqlq_job_spec *spec, int expected,
                                int alternative) {
  int rc = sqlq_enqueue(f->db, f->queue, spec, NULL, NULL);
  if (rc == alternative) return;
  assert_status(f->db, rc, expected);
}

/* Bad job specs are refused: NULL spec, negative max_attempts, payload
** NULL with a length, keys over SQLQ_KEY_MAX (SQLQ_MISUSE or SQLQ_TOOBIG:
** the header calls both "over-long name" and "name over its limit"). */
static void bad_specs_refused(void **state) {
  fixture *f = *state;
  char key[SQLQ_KEY_MAX + 2];
  sqlq_job_spec spec = {0};
  snapshot s = store_reference_jobs(f);
  memset(key, 'k', sizeof key - 1);
  key[sizeof key - 1] = '\0';

  assert_status(f->db, sqlq_enqueue(f->db, f->queue, NULL, NULL, NULL), SQLQ_MISUSE);
  assert_status(f->db, sqlq_enqueue_batch(f->db, f->queue, NULL, 2, NULL), SQLQ_MISUSE);
  spec.max_attempts = -1;
  assert_spec_refused(f, &spec, SQLQ_MISUSE, SQLQ_MISUSE);
  spec.max_attempts = 0;
  spec.payload_len = 5;
  assert_spec_refused(f, &spec, SQLQ_MISUSE, SQLQ_MISUSE);
  spec.payload_len = 0;
  spec.dedupe_key = key;
  assert_spec_refused(f, &spec, SQLQ_MISUSE, SQLQ_TOOBIG);
  spec.dedupe_key = NULL;
  spec.group_key = key;
  assert_spec_refused(f, &spec, SQLQ_MISUSE, SQLQ_TOOBIG);
  assert_intact_and_free(f, &s);

  /* Keys of exactly SQLQ_KEY_MAX bytes are fine. */
  key[SQLQ_KEY_MAX] = '\0';
  spec.dedupe_key = key;
  fx_push_spec(f->db, f, &spec);
  assert_int_equal(fx_count(f->db, f, 0), 4);
}

/* Open url, expect status, and check the handle's message: set, not
** holding secret (when given), and holding must_say (when given). */
static void assert_open_refused(const char *url, int expected, const char *secret,
                                const char *must_say) {
  sqlq_db *db = NULL;
  int rc = sqlq_open(url, NULL, &db);
  if (rc != expected) {
    print_error("sqlq_open(\"%s\") returned %s, expected %s (errmsg: %s)\n",
                url != NULL ? url : "(null)", sqlq_status_name(rc), sqlq_status_name(expected),
                sqlq_errmsg(db));
    sqlq_close(db);
    fail();
  }
  assert_non_null(db);
  assert_int_equal(sqlq_errcode(db), expected);
  assert_string_not_equal(sqlq_errmsg(db), "not an error");
  if (secret != NULL) {
    assert_null(strstr(sqlq_errmsg(db), secret));
    assert_null(strstr(sqlq_url_redacted(db), secret));
  }
  if (must_say != NULL && strstr(sqlq_errmsg(db), must_say) == NULL) {
    print_error("errmsg \"%s\" does not say \"%s\"\n", sqlq_errmsg(db), must_say);
    sqlq_close(db);
    fail();
  }
  sqlq_close(db);
}

/* A server URL for a backend this build lacks says "not built" and never
** shows its password; one it has fails to reach host "h" without it. */
static void assert_server_url_refused(const char *url, int built) {
  if (built)
    assert_open_refused(url, SQLQ_UNAVAILABLE, "secret", NULL);
  else
    assert_open_refused(url, SQLQ_UNAVAILABLE, "secret", "not built");
}

/* Malformed URLs say SQLQ_MISUSE, unknown or missing backends
** SQLQ_UNAVAILABLE, and nothing stored is touched. */
static void bad_urls_refused(void **state) {
  fixture *f = *state;
  snapshot s = store_reference_jobs(f);
  assert_open_refused(NULL, SQLQ_MISUSE, NULL, NULL);
  assert_open_refused("", SQLQ_MISUSE, NULL, NULL);
  assert_open_refused("://", SQLQ_MISUSE, NULL, NULL);
  assert_open_refused("sqlite:", SQLQ_MISUSE, NULL, NULL);
  assert_open_refused("postgres://h:99999999/db", SQLQ_MISUSE, NULL, NULL);
  assert_open_refused("postgres://u:secret@h:99999999/db", SQLQ_MISUSE, "secret", NULL);
  assert_open_refused("foo://x", SQLQ_UNAVAILABLE, NULL, NULL);
  assert_open_refused("foo://u:secret@x/db", SQLQ_UNAVAILABLE, "secret", NULL);
  assert_server_url_refused("postgres://u:secret@h/db", SQLQ_TEST_HAVE_POSTGRES);
  assert_server_url_refused("postgresql://u:secret@h/db", SQLQ_TEST_HAVE_POSTGRES);
  assert_server_url_refused("mysql://u:secret@h/db", SQLQ_TEST_HAVE_MYSQL);
  assert_server_url_refused("mariadb://u:secret@h/db", SQLQ_TEST_HAVE_MYSQL);
  assert_server_url_refused("firebird://u:secret@h/db", SQLQ_TEST_HAVE_FIREBIRD);
  assert_open_refused("sqlite::memory:?payload_limit=lots", SQLQ_MISUSE, NULL, NULL);
  assert_open_refused("sqlite::memory:?busy_timeout=-", SQLQ_MISUSE, NULL, NULL);
  assert_open_refused("sqlite::memory:?sync=sometimes", SQLQ_MISUSE, NULL, NULL);
  assert_intact_and_free(f, &s);
}

/* Calls that present a token for a job that does not exist change nothing. */
static void unknown_job_ids_change_nothing(void **state) {
  fixture *f = *state;
  snapshot s = store_reference_jobs(f);
  int64_t missing = 0;
  size_t count = 99;
  size_t i;
  int rc;
  for (i = 0; i < s.n; i++) {
    if (s.jobs[i].id > missing) missing = s.jobs[i].id;
  }
  missing += 1000000;
  rc = sqlq_ack(f->db, missing, 1);
  assert_true(rc == SQLQ_STALE || rc == SQLQ_NOTFOUND);
  rc = sqlq_fail(f->db, missing, 1, "x", NULL);
  assert_true(rc == SQLQ_STALE || rc == SQLQ_NOTFOUND);
  rc = sqlq_retry(f->db, f->queue, &missing, 1, &count);
  assert_true(rc == SQLQ_OK || rc == SQLQ_NOTFOUND);
  if (rc == SQLQ_OK) assert_int_equal(count, 0);
  assert_intact_and_free(f, &s);
}

int run_input_tests(void) {
  const struct CMUnitTest tests[] = {
    FX_TEST(bad_queue_names_refused),
    FX_TEST(unusual_queue_names_work),
    FX_TEST(bad_specs_refused),
    FX_TEST(bad_urls_refused),
    FX_TEST(unknown_job_ids_change_nothing),
  };
  return FX_RUN_GROUP("input", tests);
}
