/*
** test_subscribe.c -- table subscriptions through the public API: what
** sqlq_subscribe() and sqlq_unsubscribe() refuse, and that a refusal
** changes nothing.  (The suite has no SQL client of its own to make an
** application table; the CLI tests, tests/cli/subscribe.bash, cover
** subscriptions that deliver events, on every backend.)
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* The subscriptions as one line per entry, for comparing before and
** after.  The caller frees the text. */
static char *snapshot(sqlq_db *db) {
  sqlq_subscription *subs = NULL;
  size_t n = 0, len = 1;
  assert_ok(db, sqlq_subscriptions(db, &subs, &n));
  for (size_t i = 0; i < n; i++) len += strlen(subs[i].table) + strlen(subs[i].tag) + 32;
  char *text = calloc(1, len);
  assert_non_null(text);
  for (size_t i = 0; i < n; i++) {
    char line[32];
    strcat(text, subs[i].table);
    strcat(text, " ");
    strcat(text, subs[i].tag);
    snprintf(line, sizeof line, " %u %u %d\n", subs[i].actions, subs[i].flags, subs[i].status);
    strcat(text, line);
  }
  sqlq_subscriptions_free(subs, n);
  return text;
}

static void subscribe_refusals(void **state) {
  fixture *f = *state;
  sqlq_db *db = f->db;
  char *before = snapshot(db);
  char long_name[SQLQ_TABLE_NAME_MAX + 2];
  memset(long_name, 't', sizeof long_name - 1);
  long_name[sizeof long_name - 1] = '\0';
  const char *tag = f->queue;

  /* No such table: quotes and SQL in the name find nothing and run nothing. */
  assert_status(db, sqlq_subscribe(db, "no_such_table_here", SQLQ_ON_INSERT, tag, 0),
                SQLQ_NOTFOUND);
  assert_status(db, sqlq_subscribe(db, "x\"; DROP TABLE sqlq_jobs; --", SQLQ_ON_INSERT, tag, 0),
                SQLQ_NOTFOUND);
  assert_status(db, sqlq_subscribe(db, "x'); DROP TABLE sqlq_jobs; --", SQLQ_ON_INSERT, tag, 0),
                SQLQ_NOTFOUND);
  assert_status(db, sqlq_subscribe(db, "x`; DROP TABLE sqlq_jobs; --", SQLQ_ON_INSERT, tag, 0),
                SQLQ_NOTFOUND);
  /* Bad names. */
  assert_status(db, sqlq_subscribe(db, NULL, SQLQ_ON_INSERT, tag, 0), SQLQ_MISUSE);
  assert_status(db, sqlq_subscribe(db, "", SQLQ_ON_INSERT, tag, 0), SQLQ_MISUSE);
  assert_status(db, sqlq_subscribe(db, long_name, SQLQ_ON_INSERT, tag, 0), SQLQ_MISUSE);
  assert_status(db, sqlq_subscribe(db, "new\nline", SQLQ_ON_INSERT, tag, 0), SQLQ_MISUSE);
  assert_status(db, sqlq_subscribe(db, "\xff\xfe", SQLQ_ON_INSERT, tag, 0), SQLQ_MISUSE);
  /* sqlq's own tables, however written. */
  assert_status(db, sqlq_subscribe(db, "sqlq_jobs", SQLQ_ON_INSERT, tag, 0), SQLQ_MISUSE);
  assert_status(db, sqlq_subscribe(db, "SQLQ_Jobs", SQLQ_ON_INSERT, tag, 0), SQLQ_MISUSE);
  /* Bad actions, flags and tags. */
  assert_status(db, sqlq_subscribe(db, "t", 0, tag, 0), SQLQ_MISUSE);
  assert_status(db, sqlq_subscribe(db, "t", 0x8, tag, 0), SQLQ_MISUSE);
  assert_status(db, sqlq_subscribe(db, "t", SQLQ_ON_INSERT, tag, 0x2), SQLQ_MISUSE);
  assert_status(db, sqlq_subscribe(db, "t", SQLQ_ON_INSERT, "", 0), SQLQ_MISUSE);
  assert_status(db, sqlq_subscribe(db, "t", SQLQ_ON_INSERT, NULL, 0), SQLQ_MISUSE);
  assert_int_equal(sqlq_subscribe(NULL, "t", SQLQ_ON_INSERT, tag, 0), SQLQ_MISUSE);
  /* Unsubscribing what is not there. */
  assert_status(db, sqlq_unsubscribe(db, "no_such_table_here", tag), SQLQ_NOTFOUND);
  assert_status(db, sqlq_unsubscribe(db, "sqlq_jobs", tag), SQLQ_MISUSE);
  assert_status(db, sqlq_unsubscribe(db, "t", ""), SQLQ_MISUSE);
  assert_int_equal(sqlq_unsubscribe(NULL, "t", tag), SQLQ_MISUSE);

  char *after = snapshot(db);
  assert_string_equal(before, after);
  free(before);
  free(after);
  /* The queue works as before. */
  int64_t id = 0;
  sqlq_job_spec spec = {0};
  spec.payload = "still";
  spec.payload_len = 5;
  assert_ok(db, sqlq_enqueue(db, f->queue, &spec, &id, NULL));
  assert_true(id > 0);
}

static void subscriptions_arguments(void **state) {
  fixture *f = *state;
  sqlq_subscription *subs = (sqlq_subscription *)1;
  size_t n = 7;
  assert_status(f->db, sqlq_subscriptions(f->db, NULL, &n), SQLQ_MISUSE);
  assert_int_equal(n, 0);
  assert_status(f->db, sqlq_subscriptions(f->db, &subs, NULL), SQLQ_MISUSE);
  assert_null(subs);
  assert_int_equal(sqlq_subscriptions(NULL, &subs, &n), SQLQ_MISUSE);
  sqlq_subscriptions_free(NULL, 0);
}

int run_subscription_tests(void) {
  const struct CMUnitTest tests[] = {
    FX_TEST(subscribe_refusals),
    FX_TEST(subscriptions_arguments),
  };
  return fx_run_group_from("subscriptions", 3, tests, sizeof tests / sizeof tests[0]);
}
