/*
** test_api.c -- unit tests of the public API that need no particular
** backend: status names, destructors, NULL handles, versions, URL
** redaction, an in-memory database, and a deterministic fuzz of the URL
** parser through sqlq_open().
*/
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "sqlq.h"

#include "test_backends.h"

/* How many URLs each fuzz test tries. */
#define FUZZ_ROUNDS 2000

/* A small deterministic pseudo-random generator (xorshift64), so that a
** failing fuzz case can be replayed. */
static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static unsigned rng_next(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (unsigned)(rng_state >> 32);
}

/* Every status code has its own name, spelled like the macro. */
static void status_names(void **state) {
  static const char *const names[] = {
    "SQLQ_OK",    "SQLQ_ERROR",  "SQLQ_MISUSE",  "SQLQ_TOOBIG",      "SQLQ_NOTFOUND",
    "SQLQ_STALE", "SQLQ_BUSY",   "SQLQ_TIMEOUT", "SQLQ_INTERRUPTED", "SQLQ_UNAVAILABLE",
    "SQLQ_NOMEM", "SQLQ_SCHEMA", "SQLQ_PAUSED",  "SQLQ_LOCK_LOST",
  };
  int i;
  (void)state;
  for (i = 0; i <= SQLQ_LOCK_LOST; i++) assert_string_equal(sqlq_status_name(i), names[i]);
  assert_non_null(sqlq_status_name(-1));
  assert_string_equal(sqlq_status_name(SQLQ_LOCK_LOST + 1), "SQLQ_UNKNOWN");
}

/* Every destructor accepts NULL, and errmsg of NULL still gives text. */
static void destructors_accept_null(void **state) {
  (void)state;
  sqlq_close(NULL);
  sqlq_jobs_free(NULL, 0);
  sqlq_queue_stats_free(NULL, 0);
  sqlq_subscriptions_free(NULL, 0);
  sqlq_job_infos_free(NULL, 0);
  sqlq_unlock(NULL);
  sqlq_ring_entries_free(NULL, 0);
  sqlq_pool_items_free(NULL, 0);
  assert_non_null(sqlq_errmsg(NULL));
  assert_true(strlen(sqlq_errmsg(NULL)) > 0);
}

/* The ring and pool calls refuse a NULL handle, and leave their outputs
** empty. */
static void rings_and_pools_refuse_null_handles(void **state) {
  sqlq_ring_entry *entries = (sqlq_ring_entry *)1;
  sqlq_pool_item *items = (sqlq_pool_item *)1;
  size_t n = 1;
  int64_t seq = 1;
  int added = 1;
  (void)state;
  assert_int_equal(sqlq_ring_create(NULL, "r", 1), SQLQ_MISUSE);
  assert_int_equal(sqlq_ring_push(NULL, "r", "x", 1, &seq), SQLQ_MISUSE);
  assert_int_equal(seq, 0);
  assert_int_equal(sqlq_ring_read(NULL, "r", 0, 0, &entries, &n), SQLQ_MISUSE);
  assert_null(entries);
  assert_int_equal(n, 0);
  assert_int_equal(sqlq_ring_wait(NULL, "r", 0, 0), SQLQ_MISUSE);
  assert_int_equal(sqlq_ring_drop(NULL, "r"), SQLQ_MISUSE);
  assert_int_equal(sqlq_pool_add(NULL, "p", "i", &added), SQLQ_MISUSE);
  assert_int_equal(added, 0);
  assert_int_equal(sqlq_pool_remove(NULL, "p", "i"), SQLQ_MISUSE);
  assert_int_equal(sqlq_pool_list(NULL, "p", &items, &n), SQLQ_MISUSE);
  assert_null(items);
  items = (sqlq_pool_item *)1;
  assert_int_equal(sqlq_pool_next(NULL, "p", 0, &items), SQLQ_MISUSE);
  assert_null(items);
  assert_int_equal(sqlq_pool_release(NULL, "p", "i", 1), SQLQ_MISUSE);
}

/* The version number agrees with the version string. */
static void version_macros_agree(void **state) {
  int major = -1, minor = -1, patch = -1;
  (void)state;
  assert_int_equal(sscanf(SQLQ_VERSION, "%d.%d.%d", &major, &minor, &patch), 3);
  assert_int_equal(SQLQ_VERSION_NUMBER, major * 1000000 + minor * 1000 + patch);
  assert_int_equal(SQLQ_VERSION_NUMBER,
                   SQLQ_VERSION_MAJOR * 1000000 + SQLQ_VERSION_MINOR * 1000 + SQLQ_VERSION_PATCH);
  assert_string_equal(sqlq_version(), SQLQ_VERSION);
  assert_int_equal(sqlq_version_number(), SQLQ_VERSION_NUMBER);
  assert_true(SQLQ_SCHEMA_VERSION >= 1);
}

/* An in-memory SQLite database works end to end and keeps its URL. */
static void memory_database_roundtrip(void **state) {
  sqlq_db *db = NULL;
  sqlq_job_spec spec = {0};
  sqlq_job *jobs = NULL;
  size_t n = 0;
  int version = 0;
  (void)state;
  assert_int_equal(sqlq_open("sqlite::memory:", NULL, &db), SQLQ_OK);
  assert_string_equal(sqlq_backend(db), "sqlite");
  assert_string_equal(sqlq_url_redacted(db), "sqlite::memory:");
  assert_int_equal(sqlq_errcode(db), SQLQ_OK);
  assert_int_equal(sqlq_init(db, &version), SQLQ_OK);
  assert_int_equal(version, SQLQ_SCHEMA_VERSION);
  spec.payload = "m";
  spec.payload_len = 1;
  assert_int_equal(sqlq_enqueue(db, "q", &spec, NULL, NULL), SQLQ_OK);
  assert_int_equal(sqlq_claim(db, "q", 1, NULL, &jobs, &n), SQLQ_OK);
  assert_int_equal(n, 1);
  assert_int_equal(sqlq_ack(db, jobs[0].id, jobs[0].token), SQLQ_OK);
  sqlq_jobs_free(jobs, n);
  sqlq_close(db);
}

/* Rings and pools work in an in-memory database, where a wait has only
** this handle's own commits to see. */
static void memory_database_rings_and_pools(void **state) {
  sqlq_db *db = NULL;
  sqlq_ring_entry *e = NULL;
  sqlq_pool_item *it = NULL;
  size_t n = 0;
  int64_t seq = 0;
  (void)state;
  assert_int_equal(sqlq_open("sqlite::memory:", NULL, &db), SQLQ_OK);
  assert_int_equal(sqlq_init(db, NULL), SQLQ_OK);
  assert_int_equal(sqlq_ring_create(db, "r", 2), SQLQ_OK);
  assert_int_equal(sqlq_ring_wait(db, "r", 0, 0.01), SQLQ_TIMEOUT);
  assert_int_equal(sqlq_ring_push(db, "r", "m", 1, &seq), SQLQ_OK);
  assert_int_equal(seq, 1);
  assert_int_equal(sqlq_ring_wait(db, "r", 0, 0.01), SQLQ_OK);
  assert_int_equal(sqlq_ring_read(db, "r", 0, 0, &e, &n), SQLQ_OK);
  assert_int_equal(n, 1);
  assert_memory_equal(e[0].payload, "m", 1);
  sqlq_ring_entries_free(e, n);
  assert_int_equal(sqlq_pool_add(db, "p", "i", NULL), SQLQ_OK);
  assert_int_equal(sqlq_pool_next(db, "p", 0, &it), SQLQ_OK);
  assert_string_equal(it->item, "i");
  assert_int_equal(it->uses, 1);
  sqlq_pool_items_free(it, 1);
  sqlq_close(db);
}

/* A server URL keeps everything but its password and the values of its
** secret options, which become "***", whether or not the backend is built
** (port 1 refuses at once).  An empty password is hidden too (it once sent
** the redaction into an endless write past its buffer), and a key is
** judged once decoded. */
static void redacted_url_hides_password(void **state) {
  static const char *const urls[][2] = {
    {"postgres://u:secret@127.0.0.1:1/db", "postgres://u:***@127.0.0.1:1/db"},
    {"mysql://u:secret@127.0.0.1:1/db?connect_timeout=1",
     "mysql://u:***@127.0.0.1:1/db?connect_timeout=1"},
    {"mysql://root:@127.0.0.1:1/db?connect_timeout=1",
     "mysql://root:***@127.0.0.1:1/db?connect_timeout=1"},
    {"postgres://u:@127.0.0.1:1/db", "postgres://u:***@127.0.0.1:1/db"},
    {"postgres://u@127.0.0.1:1/db?pass%77ord=secret", "postgres://u@127.0.0.1:1/db?pass%77ord=***"},
    {"postgres://u:a%2Fsecret@127.0.0.1:1/db?connect_timeout=1&password=secret&password=",
     "postgres://u:***@127.0.0.1:1/db?connect_timeout=1&password=***&password=***"},
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof urls / sizeof urls[0]; i++) {
    sqlq_db *db = NULL;
    int rc = sqlq_open(urls[i][0], NULL, &db);
    assert_int_equal(rc, SQLQ_UNAVAILABLE);
    assert_non_null(db);
    assert_string_equal(sqlq_url_redacted(db), urls[i][1]);
    assert_null(strstr(sqlq_errmsg(db), "secret"));
    sqlq_close(db);
  }
}

/* A URL whose password holds a raw '/' or '?' is refused, and neither the
** message nor the redacted URL quotes it. */
static void unencoded_password_is_refused(void **state) {
  static const char *const urls[] = {
    "postgres://u:12/secret@127.0.0.1:1/db",
    "postgres://u:12?secret@127.0.0.1:1/db",
    "mysql://u:12?x&secret@127.0.0.1:1/db",
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof urls / sizeof urls[0]; i++) {
    sqlq_db *db = NULL;
    assert_int_equal(sqlq_open(urls[i], NULL, &db), SQLQ_MISUSE);
    assert_null(strstr(sqlq_errmsg(db), "secret"));
    assert_null(strstr(sqlq_url_redacted(db), "secret"));
    sqlq_close(db);
  }
}

/* Append up to max random bytes (printable mostly, some URL syntax, some
** raw bytes) to buf at len; returns the new length. */
static size_t random_tail(char *buf, size_t len, size_t max) {
  static const char syntax[] = "?&=%:/@[]._-0123456789";
  size_t n = rng_next() % (max + 1), i;
  for (i = 0; i < n; i++) {
    unsigned r = rng_next();
    char c;
    switch (r % 4) {
    case 0:
      c = syntax[(r >> 8) % (sizeof syntax - 1)];
      break;
    case 1:
      c = (char)(1 + (r >> 8) % 255);
      break;
    default:
      c = (char)('a' + (r >> 8) % 26);
      break;
    }
    buf[len++] = c;
  }
  buf[len] = '\0';
  return len;
}

/* Overwrite k random bytes of buf[from..len) with random non-NUL bytes. */
static void mutate(char *buf, size_t from, size_t len, int k) {
  while (k-- > 0 && len > from)
    buf[from + rng_next() % (len - from)] = (char)(1 + rng_next() % 255);
}

/* Open url and check the outcome is a valid status, that a failure sets a
** message and that the handle closes cleanly.  Returns the status. */
static int open_and_close(const char *url) {
  sqlq_db *db = NULL;
  int rc = sqlq_open(url, NULL, &db);
  if (rc < SQLQ_OK || rc > SQLQ_LOCK_LOST) {
    print_error("sqlq_open(\"%s\") returned %d\n", url, rc);
    fail();
  }
  if (rc != SQLQ_OK && db != NULL) {
    assert_int_equal(sqlq_errcode(db), rc);
    assert_true(strlen(sqlq_errmsg(db)) > 0);
  }
  if (db != NULL) assert_non_null(sqlq_url_redacted(db));
  sqlq_close(db);
  return rc;
}

/* Random query strings after an in-memory SQLite path -- pure noise, or
** a valid query with a few bytes changed -- either open or are refused
** with SQLQ_MISUSE; nothing crashes or leaks (run under ASan and valgrind). */
static void fuzz_sqlite_query_strings(void **state) {
  static const char prefix[] = "sqlite::memory:?";
  static const char valid[] = "payload_limit=100&history=1&sync=normal&busy_timeout=2.5&lanes=on";
  char url[128];
  int i;
  (void)state;
  for (i = 0; i < FUZZ_ROUNDS; i++) {
    size_t len;
    int rc;
    if (i % 2 == 0) {
      random_tail(url, (size_t)snprintf(url, sizeof url, "%s", prefix), 40);
    } else {
      len = (size_t)snprintf(url, sizeof url, "%s%s", prefix, valid);
      mutate(url, sizeof prefix - 1, len, 1 + (int)(rng_next() % 3));
    }
    rc = open_and_close(url);
    if (rc != SQLQ_OK && rc != SQLQ_MISUSE) {
      print_error("sqlq_open(\"%s\") returned %s\n", url, sqlq_status_name(rc));
      fail();
    }
  }
}

/* Random text after a scheme that no build has, or after a server scheme
** this build lacks, never opens. */
static void fuzz_unopenable_urls(void **state) {
  const char *prefixes[5];
  size_t n_prefixes = 0;
  char url[128];
  int i;
  (void)state;
  prefixes[n_prefixes++] = "zz-unknown://";
  prefixes[n_prefixes++] = "#";
  if (!SQLQ_TEST_HAVE_POSTGRES) prefixes[n_prefixes++] = "postgres://";
  if (!SQLQ_TEST_HAVE_MYSQL) prefixes[n_prefixes++] = "mysql://";
  if (!SQLQ_TEST_HAVE_FIREBIRD) prefixes[n_prefixes++] = "firebird://";
  for (i = 0; i < FUZZ_ROUNDS; i++) {
    size_t len = (size_t)snprintf(url, sizeof url, "%s", prefixes[rng_next() % n_prefixes]);
    random_tail(url, len, 60);
    if (open_and_close(url) == SQLQ_OK) {
      print_error("sqlq_open(\"%s\") opened\n", url);
      fail();
    }
  }
}

/* A handle that failed to open refuses every call with SQLQ_MISUSE and
** says why; before the one entry prologue, the subscription calls read
** the missing driver and crashed. */
static void failed_handle_refuses_calls(void **state) {
  sqlq_db *db = NULL;
  sqlq_subscription *subs = (sqlq_subscription *)1;
  sqlq_job *jobs = (sqlq_job *)1;
  sqlq_lock *lock = (sqlq_lock *)1;
  sqlq_job_spec spec = {0};
  size_t n = 1;
  (void)state;
  assert_int_equal(sqlq_open("zz-unknown://x", NULL, &db), SQLQ_UNAVAILABLE);
  assert_non_null(db);
  assert_int_equal(sqlq_subscribe(db, "t", SQLQ_ON_INSERT, "tag", 0), SQLQ_MISUSE);
  assert_non_null(strstr(sqlq_errmsg(db), "failed to open"));
  assert_int_equal(sqlq_unsubscribe(db, "t", "tag"), SQLQ_MISUSE);
  assert_int_equal(sqlq_subscriptions(db, &subs, &n), SQLQ_MISUSE);
  assert_null(subs);
  assert_int_equal(n, 0);
  assert_int_equal(sqlq_init(db, NULL), SQLQ_MISUSE);
  assert_int_equal(sqlq_enqueue(db, "q", &spec, NULL, NULL), SQLQ_MISUSE);
  n = 1;
  assert_int_equal(sqlq_claim(db, "q", 1, NULL, &jobs, &n), SQLQ_MISUSE);
  assert_null(jobs);
  assert_int_equal(n, 0);
  assert_int_equal(sqlq_ack(db, 1, 1), SQLQ_MISUSE);
  assert_int_equal(sqlq_fail(db, 1, 1, NULL, NULL), SQLQ_MISUSE);
  assert_int_equal(sqlq_release(db, 1, 1, 0), SQLQ_MISUSE);
  assert_int_equal(sqlq_touch(db, 1, 1, 1, NULL), SQLQ_MISUSE);
  assert_int_equal(sqlq_wait(db, "q", 0), SQLQ_MISUSE);
  assert_int_equal(sqlq_pause(db, "q"), SQLQ_MISUSE);
  assert_int_equal(sqlq_purge(db, "q", NULL), SQLQ_MISUSE);
  assert_int_equal(sqlq_begin(db), SQLQ_MISUSE);
  assert_int_equal(sqlq_lock_acquire(db, "l", 1, 0, &lock), SQLQ_MISUSE);
  assert_null(lock);
  assert_int_equal(sqlq_ring_create(db, "r", 1), SQLQ_MISUSE);
  assert_int_equal(sqlq_pool_add(db, "p", "i", NULL), SQLQ_MISUSE);
  assert_non_null(strstr(sqlq_errmsg(db), "failed to open"));
  sqlq_close(db);
}

/* Open an in-memory database with opts; returns the status, and the
** payload limit it took in *limit (0 when the open failed). */
static int open_with(const sqlq_options *opts, size_t *limit) {
  sqlq_db *db = NULL;
  int rc = sqlq_open("sqlite::memory:", opts, &db);
  *limit = rc == SQLQ_OK ? sqlq_payload_limit(db) : 0;
  if (rc == SQLQ_MISUSE) assert_non_null(strstr(sqlq_errmsg(db), "sqlq_options"));
  sqlq_close(db);
  return rc;
}

/* The size rule of options structs, at its edges: size 0 (a struct zeroed
** without SQLQ_OPTIONS_INIT) is refused; a struct of only its size takes
** every default, whatever the bytes past size hold; a larger struct (of a
** newer header) is read when its unknown bytes are zero, and refused when
** one is not. */
static void options_size_edges(void **state) {
  sqlq_options zeroed = {0}, only_size = {0}, full = SQLQ_OPTIONS_INIT(sqlq_options);
  struct {
    sqlq_options known;
    unsigned char newer[16];
  } larger;
  size_t limit = 0;
  (void)state;
  zeroed.payload_limit = 10;
  assert_int_equal(open_with(&zeroed, &limit), SQLQ_MISUSE);
  only_size.size = sizeof(size_t);
  only_size.payload_limit = 10;
  assert_int_equal(open_with(&only_size, &limit), SQLQ_OK);
  assert_int_equal(limit, 1024 * 1024);
  full.payload_limit = 10;
  assert_int_equal(open_with(&full, &limit), SQLQ_OK);
  assert_int_equal(limit, 10);
  memset(&larger, 0, sizeof larger);
  larger.known.size = sizeof larger;
  larger.known.payload_limit = 10;
  assert_int_equal(open_with(&larger.known, &limit), SQLQ_OK);
  assert_int_equal(limit, 10);
  larger.newer[15] = 1;
  assert_int_equal(open_with(&larger.known, &limit), SQLQ_MISUSE);
}

/* An in-memory database with its schema and one job on queue "q". */
static sqlq_db *memory_db_with_job(void) {
  sqlq_db *db = NULL;
  sqlq_job_spec spec = {0};
  assert_int_equal(sqlq_open("sqlite::memory:", NULL, &db), SQLQ_OK);
  assert_int_equal(sqlq_init(db, NULL), SQLQ_OK);
  assert_int_equal(sqlq_enqueue(db, "q", &spec, NULL, NULL), SQLQ_OK);
  return db;
}

/* Claim the one job of "q" into *job (its id and token). */
static void claim_the_job(sqlq_db *db, sqlq_job_ref *job) {
  sqlq_claim_options co = SQLQ_OPTIONS_INIT(sqlq_claim_options);
  sqlq_job *jobs = NULL;
  size_t n = 0;
  assert_int_equal(sqlq_claim(db, "q", 1, &co, &jobs, &n), SQLQ_OK);
  assert_int_equal(n, 1);
  job->id = jobs[0].id;
  job->token = jobs[0].token;
  sqlq_jobs_free(jobs, n);
}

/* When the one job of "q" runs next, microseconds since the epoch. */
static int64_t run_at_us(sqlq_db *db) {
  sqlq_job_info *jobs = NULL;
  size_t n = 0;
  assert_int_equal(sqlq_list(db, "q", 0, 0, &jobs, &n), SQLQ_OK);
  assert_int_equal(n, 1);
  int64_t at = jobs[0].run_at_us;
  sqlq_job_infos_free(jobs, n);
  return at;
}

/* The wall clock, in microseconds since the epoch. */
static int64_t wall_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* sqlq_fail_options keep the zero-default rule: retry_now retries at once,
** a zero backoff is the default of 1 s (-25% jitter: at least 0.75 s), a
** negative one is refused; zero-sized options are refused too. */
static void fail_retry_now_and_default_backoff(void **state) {
  sqlq_db *db = memory_db_with_job();
  sqlq_fail_options fo = SQLQ_OPTIONS_INIT(sqlq_fail_options), zeroed = {0};
  sqlq_claim_options co_zeroed = {0};
  sqlq_job_ref job;
  sqlq_job *jobs = NULL;
  size_t n = 1;
  (void)state;
  claim_the_job(db, &job);
  assert_int_equal(sqlq_fail(db, job.id, job.token, NULL, &zeroed), SQLQ_MISUSE);
  fo.retry_now = 1;
  assert_int_equal(sqlq_fail(db, job.id, job.token, NULL, &fo), SQLQ_OK);
  assert_true(run_at_us(db) <= wall_us() + 1000);
  claim_the_job(db, &job);
  fo.retry_now = 0;
  fo.backoff = -1;
  assert_int_equal(sqlq_fail(db, job.id, job.token, NULL, &fo), SQLQ_MISUSE);
  fo.backoff = 0;
  int64_t before = wall_us();
  assert_int_equal(sqlq_fail(db, job.id, job.token, NULL, &fo), SQLQ_OK);
  assert_true(run_at_us(db) >= before + 750000 - 1000);
  assert_int_equal(sqlq_claim(db, "q", 1, &co_zeroed, &jobs, &n), SQLQ_MISUSE);
  assert_null(jobs);
  assert_int_equal(n, 0);
  sqlq_close(db);
}

/* A zero duration takes the default; a negative or NaN one is refused, not
** silently replaced by the default: a claim's lease and a handle's
** busy_timeout. */
static void negative_durations_are_refused(void **state) {
  sqlq_db *db = memory_db_with_job();
  sqlq_claim_options co = SQLQ_OPTIONS_INIT(sqlq_claim_options);
  sqlq_job *jobs = NULL;
  size_t n = 1;
  (void)state;
  co.lease = -1;
  assert_int_equal(sqlq_claim(db, "q", 1, &co, &jobs, &n), SQLQ_MISUSE);
  co.lease = NAN;
  assert_int_equal(sqlq_claim(db, "q", 1, &co, &jobs, &n), SQLQ_MISUSE);
  assert_int_equal(n, 0);
  co.lease = 0;
  assert_int_equal(sqlq_claim(db, "q", 1, &co, &jobs, &n), SQLQ_OK);
  assert_int_equal(n, 1);
  sqlq_jobs_free(jobs, n);
  sqlq_close(db);
  sqlq_options o = SQLQ_OPTIONS_INIT(sqlq_options);
  o.busy_timeout = -1;
  assert_int_equal(sqlq_open("sqlite::memory:", &o, &db), SQLQ_MISUSE);
  assert_non_null(strstr(sqlq_errmsg(db), "busy_timeout"));
  sqlq_close(db);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(status_names),
    cmocka_unit_test(destructors_accept_null),
    cmocka_unit_test(rings_and_pools_refuse_null_handles),
    cmocka_unit_test(version_macros_agree),
    cmocka_unit_test(memory_database_roundtrip),
    cmocka_unit_test(memory_database_rings_and_pools),
    cmocka_unit_test(redacted_url_hides_password),
    cmocka_unit_test(unencoded_password_is_refused),
    cmocka_unit_test(fuzz_sqlite_query_strings),
    cmocka_unit_test(fuzz_unopenable_urls),
    cmocka_unit_test(failed_handle_refuses_calls),
    cmocka_unit_test(options_size_edges),
    cmocka_unit_test(negative_durations_are_refused),
    cmocka_unit_test(fail_retry_now_and_default_backoff),
  };
  return cmocka_run_group_tests_name("unit: public API", tests, NULL, NULL);
}
