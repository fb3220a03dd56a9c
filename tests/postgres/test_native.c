/*
** test_native.c -- the PostgreSQL session behind sqlq_native_handle().
**
** An application writes its own rows through the handle's session, so that
** they commit or roll back with the jobs enqueued beside them.  These tests
** use libpq on that session against the server of SQLQ_TEST_PG_URL, and
** check that a subscribed table written beside an enqueue is announced.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <libpq-fe.h>
#include <poll.h>

#include "sqlq.h"

struct fixture {
  sqlq_db *db;
  char queue[64];
  char table[64];
};

/* Run sql on conn and return the single integer it selects (-1 when the
** statement fails or returns no integer). */
static long long scalar(PGconn *conn, const char *sql) {
  PGresult *r = PQexec(conn, sql);
  long long v = -1;
  if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1)
    v = atoll(PQgetvalue(r, 0, 0));
  else if (PQresultStatus(r) != PGRES_COMMAND_OK)
    print_error("%s: %s", sql, PQerrorMessage(conn));
  PQclear(r);
  return v;
}

static void exec_ok(PGconn *conn, const char *sql) {
  PGresult *r = PQexec(conn, sql);
  if (PQresultStatus(r) != PGRES_COMMAND_OK) print_error("%s: %s", sql, PQerrorMessage(conn));
  assert_int_equal(PQresultStatus(r), PGRES_COMMAND_OK);
  PQclear(r);
}

static int setup(void **state) {
  const char *url = getenv("SQLQ_TEST_PG_URL");
  if (url == NULL || *url == '\0') {
    fprintf(stderr, "test_native: SQLQ_TEST_PG_URL is not set\n");
    return -1;
  }
  struct fixture *f = calloc(1, sizeof *f);
  if (f == NULL || sqlq_open(url, NULL, &f->db) != SQLQ_OK || sqlq_init(f->db, NULL) != SQLQ_OK) {
    fprintf(stderr, "test_native: cannot open %s: %s\n", url, f ? sqlq_errmsg(f->db) : "");
    return -1;
  }
  snprintf(f->queue, sizeof f->queue, "native-%ld", (long)getpid());
  snprintf(f->table, sizeof f->table, "app_rows_%ld", (long)getpid());
  char sql[128];
  snprintf(sql, sizeof sql, "CREATE TABLE %s (n int)", f->table);
  exec_ok(sqlq_native_handle(f->db), sql);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  struct fixture *f = *state;
  char sql[128];
  snprintf(sql, sizeof sql, "DROP TABLE %s", f->table);
  exec_ok(sqlq_native_handle(f->db), sql);
  sqlq_purge(f->db, f->queue, NULL);
  sqlq_close(f->db);
  free(f);
  return 0;
}

static long long app_rows(struct fixture *f) {
  char sql[128];
  snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", f->table);
  return scalar(sqlq_native_handle(f->db), sql);
}

static long long ready_jobs(struct fixture *f) {
  sqlq_queue_stats *st = NULL;
  size_t n = 0;
  assert_int_equal(sqlq_stats(f->db, f->queue, &st, &n), SQLQ_OK);
  long long ready = n == 1 ? (long long)st[0].ready : 0;
  sqlq_queue_stats_free(st, n);
  return ready;
}

/* Enqueue a job and write an application row in one transaction, through
** the library and the native session; end it with commit or rollback. */
static void job_and_row(struct fixture *f, int commit) {
  sqlq_job_spec spec = {.payload = "p", .payload_len = 1};
  assert_int_equal(sqlq_begin(f->db), SQLQ_OK);
  assert_int_equal(sqlq_enqueue(f->db, f->queue, &spec, NULL, NULL), SQLQ_OK);
  char sql[128];
  snprintf(sql, sizeof sql, "INSERT INTO %s VALUES (1)", f->table);
  exec_ok(sqlq_native_handle(f->db), sql);
  assert_int_equal(commit ? sqlq_commit(f->db) : sqlq_rollback(f->db), SQLQ_OK);
}

static void rollback_drops_row_and_job(void **state) {
  struct fixture *f = *state;
  job_and_row(f, 0);
  assert_int_equal(app_rows(f), 0);
  assert_int_equal(ready_jobs(f), 0);
}

static void commit_keeps_row_and_job(void **state) {
  struct fixture *f = *state;
  job_and_row(f, 1);
  assert_int_equal(app_rows(f), 1);
  assert_int_equal(ready_jobs(f), 1);
}

/* After an enqueue, the library has sent its NOTIFY without reading the
** answer; the native session must still take a plain command at once. */
static void native_after_notify(void **state) {
  struct fixture *f = *state;
  sqlq_job_spec spec = {.payload = "p", .payload_len = 1};
  for (int i = 0; i < 3; i++) {
    assert_int_equal(sqlq_enqueue(f->db, f->queue, &spec, NULL, NULL), SQLQ_OK);
    assert_int_equal(scalar(sqlq_native_handle(f->db), "SELECT 42"), 42);
  }
  assert_int_equal(ready_jobs(f), 3);
}

/* A claim the library commits itself sets synchronous_commit off for its
** own transaction only: the session keeps the server's setting. */
static void lazy_commit_stays_local(void **state) {
  struct fixture *f = *state;
  sqlq_job_spec spec = {.payload = "p", .payload_len = 1};
  assert_int_equal(sqlq_enqueue(f->db, f->queue, &spec, NULL, NULL), SQLQ_OK);
  sqlq_job *jobs = NULL;
  size_t n = 0;
  assert_int_equal(sqlq_claim(f->db, f->queue, 1, NULL, &jobs, &n), SQLQ_OK);
  assert_int_equal(n, 1);
  assert_int_equal(sqlq_ack(f->db, jobs[0].id, jobs[0].token), SQLQ_OK);
  sqlq_jobs_free(jobs, n);
  PGconn *conn = sqlq_native_handle(f->db);
  PGresult *r = PQexec(conn, "SHOW synchronous_commit");
  assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
  assert_string_equal(PQgetvalue(r, 0, 0), "on");
  PQclear(r);
}

/* A job counts as held only while it runs, as on the other backends: one
** that a plain-SQL writer moved back to ready, or buried, with its token
** left set, is refused to every call that presents that token (each
** statement tests `state = 'running'`). */
static void held_only_while_running(void **state) {
  struct fixture *f = *state;
  sqlq_job_spec spec = {.payload = "p", .payload_len = 1};
  for (int i = 0; i < 3; i++)
    assert_int_equal(sqlq_enqueue(f->db, f->queue, &spec, NULL, NULL), SQLQ_OK);
  sqlq_job *jobs = NULL;
  size_t n = 0;
  assert_int_equal(sqlq_claim(f->db, f->queue, 3, NULL, &jobs, &n), SQLQ_OK);
  assert_int_equal(n, 3);
  sqlq_job_ref refs[3];
  for (int i = 0; i < 3; i++) refs[i] = (sqlq_job_ref){jobs[i].id, jobs[i].token};
  sqlq_jobs_free(jobs, n);
  PGconn *conn = sqlq_native_handle(f->db);
  char sql[160];
  snprintf(sql, sizeof sql, "UPDATE sqlq_jobs SET state = 'ready' WHERE id = %lld",
           (long long)refs[0].id);
  exec_ok(conn, sql);
  snprintf(sql, sizeof sql, "UPDATE sqlq_jobs SET state = 'dead' WHERE id = %lld",
           (long long)refs[1].id);
  exec_ok(conn, sql);

  sqlq_db *history = NULL;
  sqlq_options opts = {.size = sizeof(sqlq_options), .keep_history = 1};
  assert_int_equal(sqlq_open(getenv("SQLQ_TEST_PG_URL"), &opts, &history), SQLQ_OK);
  for (int i = 0; i < 2; i++) {
    int64_t id = refs[i].id, token = refs[i].token;
    assert_int_equal(sqlq_ack(f->db, id, token), SQLQ_STALE);
    assert_int_equal(sqlq_ack(history, id, token), SQLQ_STALE);
    assert_int_equal(sqlq_touch(f->db, id, token, 30, NULL), SQLQ_STALE);
    assert_int_equal(sqlq_release(f->db, id, token, 0), SQLQ_STALE);
    assert_int_equal(sqlq_fail(f->db, id, token, "no", NULL), SQLQ_STALE);
  }
  size_t acked = 0;
  assert_int_equal(sqlq_ack_batch(history, refs, 2, &acked), SQLQ_STALE);
  assert_int_equal(acked, 0);
  assert_int_equal(sqlq_ack_batch(f->db, refs, 3, &acked), SQLQ_STALE);
  assert_int_equal(acked, 1);
  sqlq_close(history);
  snprintf(sql, sizeof sql,
           "SELECT count(*) FROM sqlq_jobs WHERE id IN (%lld, %lld) AND attempts = 1"
           " AND last_error IS NULL AND state IN ('ready', 'dead')",
           (long long)refs[0].id, (long long)refs[1].id);
  assert_int_equal(scalar(conn, sql), 2);
  snprintf(sql, sizeof sql, "SELECT count(*) FROM sqlq_jobs_history WHERE id IN (%lld, %lld)",
           (long long)refs[0].id, (long long)refs[1].id);
  assert_int_equal(scalar(conn, sql), 0);
}

/* Return the EXPLAIN of the session's prepared statement whose text starts
** with prefix, executed with args (a parenthesised list), or NULL when no
** such statement is prepared.  The caller frees it. */
static char *explain_prepared(PGconn *conn, const char *prefix, const char *args) {
  const char *params[1] = {prefix};
  PGresult *r = PQexecParams(conn,
                             "SELECT name FROM pg_prepared_statements"
                             " WHERE starts_with(statement, $1)",
                             1, NULL, params, NULL, NULL, 0);
  if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1) {
    print_error("no prepared statement starts with '%s'\n", prefix);
    PQclear(r);
    return NULL;
  }
  char sql[256];
  snprintf(sql, sizeof sql, "EXPLAIN EXECUTE %s%s", PQgetvalue(r, 0, 0), args);
  PQclear(r);
  r = PQexec(conn, sql);
  char *plan = calloc(1, 65536);
  for (int i = 0; plan != NULL && PQresultStatus(r) == PGRES_TUPLES_OK && i < PQntuples(r); i++) {
    strncat(plan, PQgetvalue(r, i, 0), 65536 - strlen(plan) - 2);
    strcat(plan, "\n");
  }
  PQclear(r);
  return plan;
}

/* Does every scan of sqlq_jobs in plan (EXPLAIN's text) have a condition
** on its index, so that it reads the rows it needs and not the table?  A
** sequential scan, or an index scan with no "Index Cond" line under it,
** reads every row. */
static int scans_bounded(const char *plan) {
  for (const char *line = plan; *line; line = strchr(line, '\n') + 1) {
    const char *end = strchr(line, '\n');
    const char *on = strstr(line, " on sqlq_jobs");
    const char *scan = strstr(line, "Scan ");
    if (on != NULL && on < end && (on[13] == ' ' || on[13] == '\n') && scan != NULL && scan < on) {
      const char *next = end + 1;
      const char *next_end = strchr(next, '\n');
      const char *cond = strstr(next, " Cond: ");
      if (next_end == NULL || cond == NULL || cond > next_end) return 0;
    }
  }
  return 1;
}

/* A queue table that VACUUM has just seen empty looks free to read in
** full; the claim and the ack planned then must still go through the
** indexes.  And autovacuum visits the table often.  The test gets a table of its own in a schema of its own, so
** that it can empty it. */
static void plans_use_indexes_after_vacuum(void **state) {
  struct fixture *f = *state;
  sqlq_db *db = NULL;
  assert_int_equal(sqlq_open(getenv("SQLQ_TEST_PG_URL"), NULL, &db), SQLQ_OK);
  PGconn *conn = sqlq_native_handle(db);
  char sql[256];
  snprintf(sql, sizeof sql, "CREATE SCHEMA %s; SET search_path = %s", f->table, f->table);
  exec_ok(conn, sql);
  assert_int_equal(sqlq_init(db, NULL), SQLQ_OK);
  /* One job acked alone, two together: each ack statement gets prepared. */
  sqlq_job_spec spec = {.payload = "p", .payload_len = 1};
  for (int i = 0; i < 3; i++)
    assert_int_equal(sqlq_enqueue(db, f->queue, &spec, NULL, NULL), SQLQ_OK);
  sqlq_job *jobs = NULL;
  size_t n = 0;
  assert_int_equal(sqlq_claim(db, f->queue, 1, NULL, &jobs, &n), SQLQ_OK);
  assert_int_equal(n, 1);
  assert_int_equal(sqlq_ack(db, jobs[0].id, jobs[0].token), SQLQ_OK);
  sqlq_jobs_free(jobs, n);
  assert_int_equal(sqlq_claim(db, f->queue, 2, NULL, &jobs, &n), SQLQ_OK);
  assert_int_equal(n, 2);
  sqlq_job_ref refs[2] = {{jobs[0].id, jobs[0].token}, {jobs[1].id, jobs[1].token}};
  assert_int_equal(sqlq_ack_batch(db, refs, 2, NULL), SQLQ_OK);
  sqlq_jobs_free(jobs, n);
  /* The queue table is vacuumed once it has 1,000 dead rows, whatever its
  ** size (the dead entries slow every claim down). */
  assert_int_equal(scalar(conn, "SELECT count(*) FROM pg_class WHERE oid = 'sqlq_jobs'::regclass"
                                " AND 'autovacuum_vacuum_scale_factor=0' = ANY(reloptions)"
                                " AND 'autovacuum_vacuum_threshold=1000' = ANY(reloptions)"),
                   1);
  exec_ok(conn, "VACUUM sqlq_jobs");
  assert_int_equal(scalar(conn, "SELECT relpages FROM pg_class WHERE oid = 'sqlq_jobs'::regclass"),
                   0);

  /* A handle whose claims go by lanes (schema version 11), in the same
  ** schema, prepares the claim by lanes. */
  char url[1024];
  const char *base = getenv("SQLQ_TEST_PG_URL");
  snprintf(url, sizeof url, "%s%clanes=on", base, strchr(base, '?') ? '&' : '?');
  sqlq_db *lanes_db = NULL;
  assert_int_equal(sqlq_open(url, NULL, &lanes_db), SQLQ_OK);
  PGconn *lanes_conn = sqlq_native_handle(lanes_db);
  snprintf(sql, sizeof sql, "SET search_path = %s", f->table);
  exec_ok(lanes_conn, sql);
  assert_int_equal(sqlq_claim(lanes_db, f->queue, 1, NULL, &jobs, &n), SQLQ_OK);
  assert_int_equal(n, 0);

  char *claim = explain_prepared(conn, "WITH buried", "('q', 1, 1000000, 1, 0)");
  char *by_lanes = explain_prepared(lanes_conn, "WITH clock", "('q', 1, 1000000, 1, 0, NULL)");
  char *ack = explain_prepared(conn, "DELETE FROM sqlq_jobs WHERE id = $1", "(1, 1)");
  char *acks = explain_prepared(conn, "DELETE FROM sqlq_jobs WHERE id = ANY", "('{1,2}', '{1,2}')");
  sqlq_close(lanes_db);
  char *plans[] = {claim, by_lanes, ack, acks};
  for (int i = 0; i < 4; i++) {
    assert_non_null(plans[i]);
    int bounded = scans_bounded(plans[i]);
    if (!bounded) print_error("%s", plans[i]);
    assert_true(bounded);
    free(plans[i]);
  }
  snprintf(sql, sizeof sql, "DROP SCHEMA %s CASCADE", f->table);
  exec_ok(conn, sql);
  sqlq_close(db);
}

/* Whether a notification on channel reaches conn within timeout_ms. */
static int notified(PGconn *conn, const char *channel, int timeout_ms) {
  int64_t left = timeout_ms;
  for (;;) {
    PQconsumeInput(conn);
    PGnotify *n;
    int hit = 0;
    while ((n = PQnotifies(conn)) != NULL) {
      if (strcmp(n->relname, channel) == 0) hit = 1;
      PQfreemem(n);
    }
    if (hit) return 1;
    if (left <= 0) return 0;
    struct pollfd pfd = {.fd = PQsocket(conn), .events = POLLIN};
    poll(&pfd, 1, 100);
    left -= 100;
  }
}

/* A subscribed table written in a transaction where the library enqueued
** too: the trigger on sqlq_jobs keeps quiet there (the library announces
** its own queues at commit), so the subscription's trigger announces its
** tag itself. */
static void subscription_announced_in_library_tx(void **state) {
  struct fixture *f = *state;
  PGconn *conn = sqlq_native_handle(f->db);
  char keyed[80], tag[80], sql[256];
  snprintf(keyed, sizeof keyed, "%s_keyed", f->table);
  snprintf(tag, sizeof tag, "%s-tag", f->queue);
  snprintf(sql, sizeof sql, "CREATE TABLE %s (id int PRIMARY KEY)", keyed);
  exec_ok(conn, sql);
  assert_int_equal(sqlq_subscribe(f->db, keyed, SQLQ_ON_INSERT, tag, 0), SQLQ_OK);

  PGconn *listener = PQconnectdb(getenv("SQLQ_TEST_PG_URL"));
  assert_int_equal(PQstatus(listener), CONNECTION_OK);
  const char *params[1] = {tag};
  PGresult *r = PQexecParams(listener, "SELECT sqlq_channel($1)", 1, NULL, params, NULL, NULL, 0);
  assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
  char channel[64];
  snprintf(channel, sizeof channel, "%s", PQgetvalue(r, 0, 0));
  PQclear(r);
  snprintf(sql, sizeof sql, "LISTEN %s", channel);
  exec_ok(listener, sql);

  sqlq_job_spec spec = {.payload = "p", .payload_len = 1};
  assert_int_equal(sqlq_begin(f->db), SQLQ_OK);
  assert_int_equal(sqlq_enqueue(f->db, f->queue, &spec, NULL, NULL), SQLQ_OK);
  snprintf(sql, sizeof sql, "INSERT INTO %s VALUES (1)", keyed);
  exec_ok(conn, sql);
  assert_int_equal(sqlq_commit(f->db), SQLQ_OK);
  assert_true(notified(listener, channel, 5000));
  PQfinish(listener);

  assert_int_equal(sqlq_unsubscribe(f->db, keyed, tag), SQLQ_OK);
  assert_int_equal(sqlq_purge(f->db, tag, NULL), SQLQ_OK);
  snprintf(sql, sizeof sql, "DROP TABLE %s", keyed);
  exec_ok(conn, sql);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown(rollback_drops_row_and_job, setup, teardown),
    cmocka_unit_test_setup_teardown(commit_keeps_row_and_job, setup, teardown),
    cmocka_unit_test_setup_teardown(native_after_notify, setup, teardown),
    cmocka_unit_test_setup_teardown(lazy_commit_stays_local, setup, teardown),
    cmocka_unit_test_setup_teardown(held_only_while_running, setup, teardown),
    cmocka_unit_test_setup_teardown(plans_use_indexes_after_vacuum, setup, teardown),
    cmocka_unit_test_setup_teardown(subscription_announced_in_library_tx, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
