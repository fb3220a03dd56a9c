/*
** limit.c -- concurrency, rate and per-group limits and fair claiming:
** settings of a queue (sqlq_queues' max_running, rate_max, rate_period,
** group_running and fair columns, and a rate's slots in
** sqlq_rate_starts).  The claim enforces them (claim.c, GROUP_ROOM in each
** dialect's SQL, fair.c).
*/
#include "sqlq_int.h"

/* How long a handle trusts that its database has no concurrency limits
** before it reads the schema version again. */
#define UNLIMITED_RECHECK_NS 1000000000LL

int sqlq__limits_known(const sqlq_db *db) {
  return (db->limits_schema == SQLQ__LIMITS_GROUPS && db->lanes) ||
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
    db->limits_schema = version >= SQLQ__GROUPS_VERSION   ? SQLQ__LIMITS_GROUPS
                        : version >= SQLQ__RATES_VERSION  ? SQLQ__LIMITS_RATES
                        : version >= SQLQ__LIMITS_VERSION ? SQLQ__LIMITS_CONCURRENCY
                                                          : SQLQ__LIMITS_NONE;
    db->lanes = version >= db->driver->lanes_version;
    db->limits_checked_ns = now;
  }
  return rc;
}

int sqlq__limits_sql(const sqlq_db *db, int unlimited, int concurrency, int rates, int groups) {
  const int sql[] = {
    [SQLQ__LIMITS_NONE] = unlimited,
    [SQLQ__LIMITS_CONCURRENCY] = concurrency,
    [SQLQ__LIMITS_RATES] = rates,
    [SQLQ__LIMITS_GROUPS] = groups,
  };
  return sql[db->limits_schema];
}

/* A kind of setting of a queue: the statements that set and get it, and
** the one run after it is set to 0 (0: none), the level
** (SQLQ__LIMITS_*) and schema version that brought it, its least and
** greatest value and its default, and what messages call it, its value
** and its least value. */
struct limit_kind {
  int set_sql, get_sql, off_sql, level, version;
  int64_t least_value, most_value, default_value;
  const char *what, *name, *least;
};

/* The kinds, one a row.  A fair queue set off forgets its tenants' turns.
** A rate limit has two values and calls of its own (below); its row
** serves need_limits. */
enum { CONCURRENCY, PER_GROUP, FAIR, RATE };
static const struct limit_kind kinds[] = {
  [CONCURRENCY] = {SQLQ__SQL_LIMIT_SET, SQLQ__SQL_LIMIT_GET, 0, SQLQ__LIMITS_CONCURRENCY,
                   SQLQ__LIMITS_VERSION, 0, SQLQ_MAX_RUNNING_MAX, 0, "concurrency limits",
                   "max_running", "0 (no limit)"},
  [PER_GROUP] = {SQLQ__SQL_GROUP_LIMIT_SET, SQLQ__SQL_GROUP_LIMIT_GET, 0, SQLQ__LIMITS_GROUPS,
                 SQLQ__GROUPS_VERSION, 1, SQLQ_MAX_RUNNING_MAX, 1, "per-group limits", "per_group",
                 "1"},
  [FAIR] = {SQLQ__SQL_FAIR_SET, SQLQ__SQL_FAIR_GET, SQLQ__SQL_FAIR_FORGET, SQLQ__LIMITS_GROUPS,
            SQLQ__GROUPS_VERSION, 0, 1, 0, "fair queues", "fair", "0"},
  [RATE] = {SQLQ__SQL_RATE_SET, SQLQ__SQL_RATE_GET, 0, SQLQ__LIMITS_RATES, SQLQ__RATES_VERSION, 0,
            SQLQ_RATE_MAX_STARTS_MAX, 0, "rate limits", "max_starts", "0 (no rate limit)"},
};

/* A setting of a queue and its value. */
struct limit {
  const char *queue;
  int64_t value;
  const struct limit_kind *kind;
};

/* SQLQ_OK when the database has the kind of limit k, read afresh; else
** SQLQ_SCHEMA, recorded. */
static int need_limits(sqlq_db *db, const struct limit_kind *k) {
  db->limits_checked_ns = 0;
  int rc = sqlq__limits_schema(db);
  if (rc == SQLQ_OK && db->limits_schema < k->level)
    rc = sqlq__error(db, SQLQ_SCHEMA, "the database has no %s (schema version %d): run `sqlq init`",
                     k->what, k->version);
  return rc;
}

static int set_tx(sqlq_db *db, void *arg) {
  struct limit *l = arg;
  sqlq__query q = {.sql = l->kind->set_sql};
  int rc = need_limits(db, l->kind);
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
  int rc = need_limits(db, l->kind);
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
  int rc = need_limits(db, &kinds[RATE]);
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
  int rc = need_limits(db, &kinds[RATE]);
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
