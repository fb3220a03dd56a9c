/*
** limit.c -- concurrency limits, per-group limits and fair claiming:
** settings of a queue (sqlq_queues' max_running, group_running and fair
** columns).  The claim enforces them (claim.c, GROUP_ROOM in each
** dialect's SQL, fair.c).
*/
#include "sqlq_int.h"

/* How long a handle trusts that its database has no concurrency limits
** before it reads the schema version again. */
#define UNLIMITED_RECHECK_NS 1000000000LL

int sqlq__limits_known(const sqlq_db *db) {
  return db->limits_schema == SQLQ__FLOW_GROUPS ||
         (db->limits_checked_ns &&
          sqlq__monotonic_ns() - db->limits_checked_ns < UNLIMITED_RECHECK_NS);
}

int sqlq__limits_schema(sqlq_db *db) {
  if (sqlq__limits_known(db)) return SQLQ_OK;
  int64_t now = sqlq__monotonic_ns();
  int64_t version = 0;
  sqlq__query q = {.sql = SQLQ__SQL_SCHEMA_VERSION, .row = sqlq__read_int64, .arg = &version};
  int rc = sqlq__query_run(db, &q, NULL, 0);
  if (rc == SQLQ_OK) {
    db->limits_schema = version >= SQLQ__GROUPS_VERSION   ? SQLQ__FLOW_GROUPS
                        : version >= SQLQ__LIMITS_VERSION ? SQLQ__FLOW_QUEUE
                                                          : SQLQ__FLOW_NONE;
    db->limits_checked_ns = now;
  }
  return rc;
}

/* A kind of setting of a queue: the statements that set and get it, and
** the one run after it is set to 0 (0: none), the flow level
** (SQLQ__FLOW_*) and schema version that brought it, its least and
** greatest value and its default, and what messages call it, its value
** and its least value. */
struct limit_kind {
  int set_sql, get_sql, off_sql, level, version;
  int64_t least_value, most_value, default_value;
  const char *what, *name, *least;
};

/* The kinds, one a row.  A fair queue set off forgets its tenants' turns. */
enum { CONCURRENCY, PER_GROUP, FAIR };
static const struct limit_kind kinds[] = {
  [CONCURRENCY] = {SQLQ__SQL_LIMIT_SET, SQLQ__SQL_LIMIT_GET, 0, SQLQ__FLOW_QUEUE,
                   SQLQ__LIMITS_VERSION, 0, SQLQ_MAX_RUNNING_MAX, 0, "concurrency limits",
                   "max_running", "0 (no limit)"},
  [PER_GROUP] = {SQLQ__SQL_GROUP_LIMIT_SET, SQLQ__SQL_GROUP_LIMIT_GET, 0, SQLQ__FLOW_GROUPS,
                 SQLQ__GROUPS_VERSION, 1, SQLQ_MAX_RUNNING_MAX, 1, "per-group limits", "per_group",
                 "1"},
  [FAIR] = {SQLQ__SQL_FAIR_SET, SQLQ__SQL_FAIR_GET, SQLQ__SQL_FAIR_FORGET, SQLQ__FLOW_GROUPS,
            SQLQ__GROUPS_VERSION, 0, 1, 0, "fair queues", "fair", "0"},
};

/* A setting of a queue and its value. */
struct limit {
  const char *queue;
  int64_t value;
  const struct limit_kind *kind;
};

/* SQLQ_OK when the database has l's kind of limit, read afresh; else
** SQLQ_SCHEMA, recorded. */
static int need_limits(sqlq_db *db, const struct limit *l) {
  db->limits_checked_ns = 0;
  int rc = sqlq__limits_schema(db);
  if (rc == SQLQ_OK && db->limits_schema < l->kind->level)
    rc = sqlq__error(db, SQLQ_SCHEMA, "the database has no %s (schema version %d): run `sqlq init`",
                     l->kind->what, l->kind->version);
  return rc;
}

static int set_tx(sqlq_db *db, void *arg) {
  struct limit *l = arg;
  sqlq__query q = {.sql = l->kind->set_sql};
  int rc = need_limits(db, l);
  if (rc == SQLQ_OK) rc = sqlq__run(db, &q, SQLQ__TEXT(l->queue), SQLQ__INT(l->value));
  if (rc == SQLQ_OK && l->value == 0 && l->kind->off_sql)
    rc = sqlq__run_for_queue(db, l->kind->off_sql, l->queue, NULL, NULL);
  /* A limit raised or removed lets the queue's waiting workers claim. */
  if (rc == SQLQ_OK) sqlq__owe_wake(db, l->queue, SQLQ__WAKE_ALL);
  return rc;
}

/* Set queue's setting of kind to value, after checking that it is from
** the kind's least value to its greatest. */
static int limit_set(sqlq_db *db, const struct limit_kind *kind, const char *queue, int64_t value) {
  int rc = sqlq__enter(db);
  if (rc == SQLQ_OK) rc = sqlq__check_queue(db, queue);
  if (rc != SQLQ_OK) return rc;
  if (value < kind->least_value || value > kind->most_value)
    return sqlq__error(db, SQLQ_MISUSE, "%s must be %s to %lld, not %lld", kind->name, kind->least,
                       (long long)kind->most_value, (long long)value);
  struct limit l = {queue, value, kind};
  return sqlq__in_tx(db, SQLQ__TX_WRITE, set_tx, &l);
}

static int get_tx(sqlq_db *db, void *arg) {
  struct limit *l = arg;
  sqlq__query q = {.sql = l->kind->get_sql, .row = sqlq__read_int64, .arg = &l->value};
  int rc = need_limits(db, l);
  return rc == SQLQ_OK ? sqlq__run(db, &q, SQLQ__TEXT(l->queue)) : rc;
}

/* Read queue's setting of kind into *out: the kind's default when the
** queue is unknown. */
static int limit_get(sqlq_db *db, const struct limit_kind *kind, const char *queue, int64_t *out) {
  if (out) *out = kind->default_value;
  int rc = sqlq__enter(db);
  if (rc == SQLQ_OK) rc = sqlq__check_queue(db, queue);
  if (rc != SQLQ_OK) return rc;
  struct limit l = {queue, kind->default_value, kind};
  rc = sqlq__in_tx(db, SQLQ__TX_READ, get_tx, &l);
  if (rc == SQLQ_OK && out) *out = l.value;
  return rc;
}

SQLQ__API int sqlq_concurrency_set(sqlq_db *db, const char *queue, int64_t max_running) {
  return limit_set(db, &kinds[CONCURRENCY], queue, max_running);
}

SQLQ__API int sqlq_concurrency_get(sqlq_db *db, const char *queue, int64_t *max_running_out) {
  return limit_get(db, &kinds[CONCURRENCY], queue, max_running_out);
}

SQLQ__API int sqlq_group_limit_set(sqlq_db *db, const char *queue, int64_t per_group) {
  return limit_set(db, &kinds[PER_GROUP], queue, per_group);
}

SQLQ__API int sqlq_group_limit_get(sqlq_db *db, const char *queue, int64_t *per_group_out) {
  return limit_get(db, &kinds[PER_GROUP], queue, per_group_out);
}

SQLQ__API int sqlq_fair_set(sqlq_db *db, const char *queue, int fair) {
  return limit_set(db, &kinds[FAIR], queue, fair);
}

SQLQ__API int sqlq_fair_get(sqlq_db *db, const char *queue, int *fair_out) {
  int64_t fair = 0;
  int rc = limit_get(db, &kinds[FAIR], queue, &fair);
  if (fair_out) *fair_out = (int)fair;
  return rc;
}
