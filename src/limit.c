/*
** limit.c -- concurrency limits: the setting of a queue (sqlq_queues'
** max_running column).  The claim enforces it (claim.c).
*/
#include "sqlq_int.h"

/* How long a handle trusts that its database has no concurrency limits
** before it reads the schema version again. */
#define UNLIMITED_RECHECK_NS 1000000000LL

int sqlq__limits_schema(sqlq_db *db) {
  int64_t now = sqlq__monotonic_ns();
  if (db->limits_schema ||
      (db->limits_checked_ns && now - db->limits_checked_ns < UNLIMITED_RECHECK_NS))
    return SQLQ_OK;
  int64_t version = 0;
  sqlq__query q = {.sql = SQLQ__SQL_SCHEMA_VERSION, .row = sqlq__read_int64, .arg = &version};
  int rc = sqlq__query_run(db, &q, NULL, 0);
  if (rc == SQLQ_OK) {
    db->limits_schema = version >= SQLQ__LIMITS_VERSION;
    db->limits_checked_ns = now;
  }
  return rc;
}

struct limit {
  const char *queue;
  int64_t max_running;
};

/* SQLQ_OK when the database has concurrency limits, read afresh; else
** SQLQ_SCHEMA, recorded. */
static int need_limits(sqlq_db *db) {
  db->limits_checked_ns = 0;
  int rc = sqlq__limits_schema(db);
  if (rc == SQLQ_OK && !db->limits_schema)
    rc = sqlq__error(db, SQLQ_SCHEMA,
                     "the database has no concurrency limits (schema version %d): run `sqlq init`",
                     SQLQ__LIMITS_VERSION);
  return rc;
}

static int set_tx(sqlq_db *db, void *arg) {
  struct limit *l = arg;
  sqlq__query q = {.sql = SQLQ__SQL_LIMIT_SET};
  int rc = need_limits(db);
  if (rc == SQLQ_OK) rc = sqlq__run(db, &q, SQLQ__TEXT(l->queue), SQLQ__INT(l->max_running));
  /* A limit raised or removed lets the queue's waiting workers claim. */
  if (rc == SQLQ_OK) sqlq__owe_wake(db, l->queue, SQLQ__WAKE_ALL);
  return rc;
}

SQLQ__API int sqlq_concurrency_set(sqlq_db *db, const char *queue, int64_t max_running) {
  int rc = sqlq__enter(db);
  if (rc == SQLQ_OK) rc = sqlq__check_queue(db, queue);
  if (rc != SQLQ_OK) return rc;
  if (max_running < 0 || max_running > SQLQ_MAX_RUNNING_MAX)
    return sqlq__error(db, SQLQ_MISUSE, "max_running must be 0 (no limit) to %d, not %lld",
                       SQLQ_MAX_RUNNING_MAX, (long long)max_running);
  struct limit l = {queue, max_running};
  return sqlq__in_tx(db, SQLQ__TX_WRITE, set_tx, &l);
}

static int get_tx(sqlq_db *db, void *arg) {
  struct limit *l = arg;
  sqlq__query q = {.sql = SQLQ__SQL_LIMIT_GET, .row = sqlq__read_int64, .arg = &l->max_running};
  int rc = need_limits(db);
  return rc == SQLQ_OK ? sqlq__run(db, &q, SQLQ__TEXT(l->queue)) : rc;
}

SQLQ__API int sqlq_concurrency_get(sqlq_db *db, const char *queue, int64_t *max_running_out) {
  if (max_running_out) *max_running_out = 0;
  int rc = sqlq__enter(db);
  if (rc == SQLQ_OK) rc = sqlq__check_queue(db, queue);
  if (rc != SQLQ_OK) return rc;
  struct limit l = {queue, 0};
  rc = sqlq__in_tx(db, SQLQ__TX_READ, get_tx, &l);
  if (rc == SQLQ_OK && max_running_out) *max_running_out = l.max_running;
  return rc;
}
