/*
** test_schema.c -- opening a database and creating its schema.
*/
#include <stdio.h>
#include <string.h>

#include "harness.h"

/* sqlq_init() reports the current version and changes nothing when run
** again: jobs and paused queues survive, from this or another handle. */
static void init_is_idempotent(void **state) {
  fixture *f = *state;
  sqlq_db *other;
  int version = -1;
  int64_t id = fx_push(f->db, f, "kept", 0);
  assert_ok(f->db, sqlq_pause(f->db, f->queue));

  assert_ok(f->db, sqlq_init(f->db, &version));
  assert_int_equal(version, SQLQ_SCHEMA_VERSION);
  assert_ok(f->db, sqlq_init(f->db, NULL));
  other = fx_open(f);
  version = -1;
  assert_ok(other, sqlq_init(other, &version));
  assert_int_equal(version, SQLQ_SCHEMA_VERSION);
  sqlq_close(other);

  {
    found fd = fx_find(f->db, f, id);
    assert_non_null(fd.job);
    assert_int_equal(fd.job->payload_len, 4);
    assert_memory_equal(fd.job->payload, "kept", 4);
    fx_found_free(&fd);
  }
  assert_int_equal(fx_stats(f->db, f).paused, 1);
  assert_int_equal(fx_count(f->db, f, 0), 1);
}

/* Before sqlq_init() a database has no schema: queue calls say
** SQLQ_SCHEMA, and after init they work.  Needs a database of its own, so
** it runs only when the suite makes its own SQLite files. */
static void schema_missing_before_init(void **state) {
  fixture *f = *state;
  char url[512];
  sqlq_db *db = NULL;
  sqlq_job_spec spec = {0};
  sqlq_job *jobs = NULL;
  size_t n = 0;
  int version = 0;
  if (f->dir[0] == '\0') skip();
  snprintf(url, sizeof url, "sqlite:%s/fresh.db", f->dir);
  assert_ok(db, sqlq_open(url, NULL, &db));
  assert_status(db, sqlq_enqueue(db, "q", &spec, NULL, NULL), SQLQ_SCHEMA);
  assert_status(db, sqlq_claim(db, "q", 1, NULL, &jobs, &n), SQLQ_SCHEMA);
  assert_int_equal(n, 0);
  assert_int_equal(sqlq_errcode(db), SQLQ_SCHEMA);
  assert_true(strlen(sqlq_errmsg(db)) > 0);
  assert_ok(db, sqlq_init(db, &version));
  assert_int_equal(version, SQLQ_SCHEMA_VERSION);
  assert_ok(db, sqlq_enqueue(db, "q", &spec, NULL, NULL));
  sqlq_close(db);
}

/* A handle names its backend and gives its URL back without a password. */
static void backend_and_redacted_url(void **state) {
  fixture *f = *state;
  const char *backend = sqlq_backend(f->db);
  const char *redacted = sqlq_url_redacted(f->db);
  assert_non_null(backend);
  assert_non_null(redacted);
  assert_int_equal(strncmp(backend, f->url, strlen(backend)), 0);
  if (f->dir[0] != '\0') assert_string_equal(backend, "sqlite");
  /* A password sits between "://user:" and "@". */
  const char *auth = strstr(f->url, "://"), *at = auth ? strchr(auth + 3, '@') : NULL;
  const char *colon = at ? memchr(auth + 3, ':', (size_t)(at - auth - 3)) : NULL;
  if (colon == NULL) {
    assert_string_equal(redacted, f->url);
  } else {
    char password[256];
    snprintf(password, sizeof password, "%.*s", (int)(at - colon - 1), colon + 1);
    assert_non_null(strstr(redacted, ":***@"));
    assert_null(strstr(redacted, password));
  }
}

int run_schema_tests(void) {
  const struct CMUnitTest tests[] = {
    FX_TEST(init_is_idempotent),
    FX_TEST(schema_missing_before_init),
    FX_TEST(backend_and_redacted_url),
  };
  return FX_RUN_GROUP("schema", tests);
}
