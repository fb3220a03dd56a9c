/*
** limit.c -- concurrency and rate limits: the settings of a queue
** (sqlq_queues' max_running, rate_max and rate_period columns, and a rate's
** slots in sqlq_rate_starts).  The claim enforces them (claim.c).
*/
#include "sqlq_int.h"

/* How long a handle trusts that its database has no concurrency limits
** before it reads the schema version again. */
#define UNLIMITED_RECHECK_NS 1000000000LL

int sqlq__limits_known(const sqlq_db *db) {
  return db->limits_schema == SQLQ__LIMITS_RATES ||
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
    db->limits_schema = version >= SQLQ__RATES_VERSION    ? SQLQ__LIMITS_RATES
                        : version >= SQLQ__LIMITS_VERSION ? SQLQ__LIMITS_CONCURRENCY
                                                          : SQLQ__LIMITS_NONE;
    db->limits_checked_ns = now;
  }
  return rc;
}

int sqlq__limits_sql(const sqlq_db *db, int unlimited, int concurrency, int rates) {
  switch (db->limits_schema) {
  case SQLQ__LIMITS_NONE:
    return unlimited;
  case SQLQ__LIMITS_CONCURRENCY:
    return concurrency;
  default:
    return rates;
  }
}

struct limit {
  const char *queue;
  int64_t max_running;
};

/* SQLQ_OK when the database has the limits of level (SQLQ__LIMITS_*), read
** afresh; else SQLQ_SCHEMA, recorded. */
static int need_limits(sqlq_db *db, int level) {
  db->limits_checked_ns = 0;
  int rc = sqlq__limits_schema(db);
  if (rc == SQLQ_OK && db->limits_schema < level)
    rc = sqlq__error(db, SQLQ_SCHEMA,
                     "the database has no %s limits (schema version %d): run `sqlq init`",
                     level == SQLQ__LIMITS_RATES ? "rate" : "concurrency",
                     level == SQLQ__LIMITS_RATES ? SQLQ__RATES_VERSION : SQLQ__LIMITS_VERSION);
  return rc;
}

static int set_tx(sqlq_db *db, void *arg) {
  struct limit *l = arg;
  sqlq__query q = {.sql = SQLQ__SQL_LIMIT_SET};
  int rc = need_limits(db, SQLQ__LIMITS_CONCURRENCY);
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
  int rc = need_limits(db, SQLQ__LIMITS_CONCURRENCY);
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

/* ---------------------------------------------------------------------
** Rate limits.
*/

struct rate {
  const char *queue;
  int64_t max_starts, period_us;
  int64_t slots; /* get: how many slots the queue has */
};

static int read_rate(sqlq_db *db, sqlq__stmt *st, void *arg) {
  struct rate *r = arg;
  const sqlq__driver *d = db->driver;
  r->max_starts = d->column_is_null(st, 0) ? 0 : d->column_int64(st, 0);
  r->period_us = d->column_is_null(st, 1) ? 0 : d->column_int64(st, 1);
  r->slots = d->column_int64(st, 2);
  return SQLQ__DONE;
}

static int rate_read(sqlq_db *db, struct rate *r) {
  sqlq__query q = {.sql = SQLQ__SQL_RATE_GET, .row = read_rate, .arg = r};
  r->max_starts = r->period_us = r->slots = 0;
  return sqlq__run(db, &q, SQLQ__TEXT(r->queue));
}

static sqlq__slot column_slot(sqlq_db *db, sqlq__stmt *st) {
  return (sqlq__slot){db->driver->column_int64(st, 0), db->driver->column_int64(st, 1)};
}

static int read_slot(sqlq_db *db, sqlq__stmt *st, void *arg) {
  *(sqlq__slot *)arg = column_slot(db, st);
  return SQLQ__DONE;
}

static int add_slot(sqlq_db *db, sqlq__stmt *st, void *arg) {
  sqlq__slots *s = arg;
  int rc = sqlq__grow(db, (void **)&s->v, &s->cap, s->n, sizeof *s->v);
  if (rc == SQLQ_OK) s->v[s->n++] = column_slot(db, st);
  return rc;
}

int sqlq__rate_free(sqlq_db *db, const char *queue, int64_t period_us, int max, sqlq__slots *s) {
  sqlq__query q = {.sql = SQLQ__SQL_RATE_FREE, .row = add_slot, .arg = s};
  s->n = 0;
  return sqlq__run(db, &q, SQLQ__TEXT(queue), SQLQ__INT(period_us), SQLQ__INT(max));
}

int sqlq__rate_stamp(sqlq_db *db, const char *queue, const sqlq__slot *last) {
  sqlq__query q = {.sql = SQLQ__SQL_RATE_STAMP};
  return sqlq__run(db, &q, SQLQ__TEXT(queue), SQLQ__INT(last->started_at), SQLQ__INT(last->slot));
}

/* Keep the queue's `keep` newest slots (its latest starts), deleting the
** rest. */
static int slots_trim(sqlq_db *db, const char *queue, int64_t keep) {
  sqlq__slot cut = {INT64_MAX, INT64_MAX};
  int rc = SQLQ_OK;
  if (keep > 0) {
    sqlq__query newest = {.sql = SQLQ__SQL_RATE_NEWEST, .row = read_slot, .arg = &cut};
    rc = sqlq__run(db, &newest, SQLQ__TEXT(queue), SQLQ__INT(keep - 1));
    if (rc != SQLQ_OK || newest.rows == 0) return rc;
  }
  sqlq__query prune = {.sql = SQLQ__SQL_RATE_PRUNE};
  return sqlq__run(db, &prune, SQLQ__TEXT(queue), SQLQ__INT(cut.started_at), SQLQ__INT(cut.slot));
}

/* Add n slots that never started to the queue. */
static int slots_grow(sqlq_db *db, const char *queue, int64_t n) {
  int rc = SQLQ_OK;
  for (int64_t left = n; left > 0 && rc == SQLQ_OK; left -= SQLQ__RATE_GROW_ROWS) {
    sqlq__query q = {.sql = SQLQ__SQL_RATE_GROW};
    rc = sqlq__run(db, &q, SQLQ__TEXT(queue),
                   SQLQ__INT(left < SQLQ__RATE_GROW_ROWS ? left : SQLQ__RATE_GROW_ROWS));
  }
  return rc;
}

/* Store the rate and give the queue as many slots as it allows starts,
** keeping its latest starts, so that a change of the rate forgets none of
** the window. */
static int rate_set_tx(sqlq_db *db, void *arg) {
  struct rate *r = arg;
  struct rate old = {.queue = r->queue};
  sqlq__query set = {.sql = SQLQ__SQL_RATE_SET};
  int rc = need_limits(db, SQLQ__LIMITS_RATES);
  if (rc == SQLQ_OK)
    rc =
      sqlq__run(db, &set, SQLQ__TEXT(r->queue), SQLQ__INT(r->max_starts), SQLQ__INT(r->period_us));
  if (rc == SQLQ_OK) rc = rate_read(db, &old);
  if (rc == SQLQ_OK && old.slots > r->max_starts) rc = slots_trim(db, r->queue, r->max_starts);
  if (rc == SQLQ_OK && old.slots < r->max_starts)
    rc = slots_grow(db, r->queue, r->max_starts - old.slots);
  /* A rate raised, lengthened or removed lets the queue's waiting workers
  ** claim (or sleep until its new window frees a slot). */
  if (rc == SQLQ_OK) sqlq__owe_wake(db, r->queue, SQLQ__WAKE_ALL);
  return rc;
}

SQLQ__API int sqlq_rate_set(sqlq_db *db, const char *queue, int64_t max_starts, int64_t period_us) {
  int rc = sqlq__enter(db);
  if (rc == SQLQ_OK) rc = sqlq__check_queue(db, queue);
  if (rc != SQLQ_OK) return rc;
  if (max_starts < 0 || max_starts > SQLQ_RATE_MAX_STARTS_MAX)
    return sqlq__error(db, SQLQ_MISUSE, "max_starts must be 0 (no rate limit) to %d, not %lld",
                       SQLQ_RATE_MAX_STARTS_MAX, (long long)max_starts);
  if (max_starts > 0 && (period_us < 1 || period_us > SQLQ_RATE_PERIOD_MAX_US))
    return sqlq__error(db, SQLQ_MISUSE,
                       "the rate's period must be 1 to %lld microseconds, not %lld",
                       (long long)SQLQ_RATE_PERIOD_MAX_US, (long long)period_us);
  struct rate r = {queue, max_starts, max_starts ? period_us : 0, 0};
  return sqlq__in_tx(db, SQLQ__TX_WRITE, rate_set_tx, &r);
}

static int rate_get_tx(sqlq_db *db, void *arg) {
  int rc = need_limits(db, SQLQ__LIMITS_RATES);
  return rc == SQLQ_OK ? rate_read(db, arg) : rc;
}

SQLQ__API int sqlq_rate_get(sqlq_db *db, const char *queue, int64_t *max_starts_out,
                            int64_t *period_us_out) {
  if (max_starts_out) *max_starts_out = 0;
  if (period_us_out) *period_us_out = 0;
  int rc = sqlq__enter(db);
  if (rc == SQLQ_OK) rc = sqlq__check_queue(db, queue);
  if (rc != SQLQ_OK) return rc;
  struct rate r = {.queue = queue};
  rc = sqlq__in_tx(db, SQLQ__TX_READ, rate_get_tx, &r);
  if (rc == SQLQ_OK && max_starts_out) *max_starts_out = r.max_starts;
  if (rc == SQLQ_OK && period_us_out) *period_us_out = r.period_us;
  return rc;
}
