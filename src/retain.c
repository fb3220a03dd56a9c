/*
** retain.c -- retention of finished jobs: a queue's setting (how long and
** how many of its finished jobs history keeps) and pruning in batches.
**
** A prune reads in one read transaction the queue's setting and where its
** cut lies: the rows older than keep_for, and the rows that have keep_count
** newer ones, are past it.  It bounds the cut by the batch's last row (the
** max-th oldest of the queue), then deletes the rows up to the cut in a
** write transaction of its own, with no LIMIT (statement-based replication
** on MariaDB takes none in a DELETE).  Each statement reads or deletes a
** range of the index sqlq_jobs_history_age (queue, finished_at, id): at
** most a batch of rows is deleted, and only the count's cut reads
** keep_count index entries.
*/
#include <stdint.h>

#include "sqlq_int.h"

/* How long a handle that keeps history waits between prunes while a batch
** does not come back full or met a busy row, and after another failure (a
** schema without retention: run sqlq init). */
#define PRUNE_INTERVAL_NS INT64_C(1000000000)
#define PRUNE_RETRY_NS INT64_C(60000000000)

/* The rows of a queue's history with (finished_at, id) <= (at, id). */
typedef struct cut {
  int64_t at, id;
  int set; /* 0: no rows */
} cut;

static int cut_before(const cut *a, const cut *b) {
  return a->at < b->at || (a->at == b->at && a->id < b->id);
}

/* A row reader: (finished_at, id) into the cut at arg. */
static int read_cut(sqlq_db *db, sqlq__stmt *st, void *arg) {
  cut *c = arg;
  c->at = db->driver->column_int64(st, 0);
  c->id = db->driver->column_int64(st, 1);
  c->set = 1;
  return SQLQ__DONE;
}

/* The cut of the row of sql (HISTORY_NEWEST or HISTORY_OLDEST) at offset;
** unset when the queue has no such row. */
static int row_at(sqlq_db *db, int sql, const char *queue, int64_t offset, cut *out) {
  sqlq__query q = {.sql = sql, .row = read_cut, .arg = out};
  out->set = 0;
  return sqlq__run(db, &q, SQLQ__TEXT(queue), SQLQ__INT(offset));
}

/* A queue's retention as stored, and the database's clock. */
typedef struct retention {
  int64_t keep_for_us; /* 0: no limit */
  int64_t keep_count;  /* 0: no limit */
  int64_t now_us;
} retention;

static int read_retention(sqlq_db *db, sqlq__stmt *st, void *arg) {
  retention *r = arg;
  const sqlq__driver *d = db->driver;
  r->keep_for_us = d->column_is_null(st, 0) ? 0 : d->column_int64(st, 0);
  r->keep_count = d->column_is_null(st, 1) ? 0 : d->column_int64(st, 1);
  r->now_us = d->column_int64(st, 2);
  return SQLQ__DONE;
}

static int get_retention(sqlq_db *db, const char *queue, retention *r) {
  sqlq__query q = {.sql = SQLQ__SQL_RETENTION_GET, .row = read_retention, .arg = r};
  *r = (retention){0};
  return sqlq__run(db, &q, SQLQ__TEXT(queue));
}

/* One prune batch: its queue and size, the cut planned, what it deleted. */
struct prune {
  const char *queue;
  int64_t max;
  cut cut;
  int64_t pruned;
};

/* Find the batch's cut: the later of the age's and the count's, bounded by
** the max-th oldest row. */
static int plan_tx(sqlq_db *db, void *arg) {
  struct prune *p = arg;
  retention r;
  cut c = {0}, row;
  int rc = get_retention(db, p->queue, &r);
  p->cut.set = 0;
  if (rc != SQLQ_OK) return rc;
  if (r.keep_for_us > 0) c = (cut){.at = r.now_us - r.keep_for_us - 1, .id = INT64_MAX, .set = 1};
  if (r.keep_count > 0) {
    if ((rc = row_at(db, SQLQ__SQL_HISTORY_NEWEST, p->queue, r.keep_count, &row)) != SQLQ_OK)
      return rc;
    if (row.set && (!c.set || cut_before(&c, &row))) c = row;
  }
  if (!c.set) return SQLQ_OK;
  if ((rc = row_at(db, SQLQ__SQL_HISTORY_OLDEST, p->queue, p->max - 1, &row)) != SQLQ_OK) return rc;
  if (row.set && cut_before(&row, &c)) c = row;
  p->cut = c;
  return SQLQ_OK;
}

static int prune_tx(sqlq_db *db, void *arg) {
  struct prune *p = arg;
  sqlq__query q = {.sql = SQLQ__SQL_HISTORY_PRUNE, .flags = SQLQ__Q_CHANGES};
  int rc = sqlq__run(db, &q, SQLQ__TEXT(p->queue), SQLQ__INT(p->cut.at), SQLQ__INT(p->cut.id));
  p->pruned = rc == SQLQ_OK ? q.changes : 0;
  return rc;
}

/* Plan and delete one batch of at most p->max rows. */
static int prune_batch(sqlq_db *db, struct prune *p) {
  int rc = sqlq__in_tx(db, SQLQ__TX_READ, plan_tx, p);
  p->pruned = 0;
  if (rc != SQLQ_OK || !p->cut.set) return rc;
  /* Losing the delete in a crash only leaves it to the next prune. */
  return sqlq__in_tx(db, SQLQ__TX_WRITE | SQLQ__TX_SINGLE | SQLQ__TX_LAZY, prune_tx, p);
}

SQLQ__API int sqlq_history_prune(sqlq_db *db, const char *queue, size_t max, size_t *pruned_out) {
  if (pruned_out) *pruned_out = 0;
  int rc = sqlq__enter(db);
  if (rc == SQLQ_OK) rc = sqlq__check_queue(db, queue);
  if (rc != SQLQ_OK) return rc;
  if (max > SQLQ_PRUNE_BATCH_MAX)
    return sqlq__error(db, SQLQ_MISUSE, "a prune batch is at most %d rows, not %zu",
                       SQLQ_PRUNE_BATCH_MAX, max);
  struct prune p = {.queue = queue, .max = max ? (int64_t)max : SQLQ_PRUNE_BATCH};
  rc = prune_batch(db, &p);
  if (rc == SQLQ_OK && pruned_out) *pruned_out = (size_t)p.pruned;
  return rc;
}

void sqlq__prune_due(sqlq_db *db, const char *queue) {
  int64_t now = sqlq__monotonic_ns();
  if (db->in_user_tx || now < db->prune_at_ns) return;
  sqlq__saved_error saved;
  sqlq__save_error(db, &saved);
  struct prune p = {.queue = queue, .max = SQLQ_PRUNE_BATCH};
  int rc = prune_batch(db, &p);
  if (rc == SQLQ_OK && p.pruned >= p.max)
    db->prune_at_ns = 0;
  else
    db->prune_at_ns = now + (rc == SQLQ_OK || rc == SQLQ_BUSY ? PRUNE_INTERVAL_NS : PRUNE_RETRY_NS);
  sqlq__restore_error(db, &saved);
}

/* ---------------------------------------------------------------------
** The setting.
*/

struct setting {
  const char *queue;
  int64_t keep_for_us, keep_count;
};

static int set_tx(sqlq_db *db, void *arg) {
  struct setting *s = arg;
  sqlq__query index = {.sql = SQLQ__SQL_HISTORY_INDEX};
  sqlq__query q = {.sql = SQLQ__SQL_RETENTION_SET};
  int rc = SQLQ_OK;
  if ((s->keep_for_us || s->keep_count) && db->driver->sql[SQLQ__SQL_HISTORY_INDEX])
    rc = sqlq__query_run(db, &index, NULL, 0);
  if (rc != SQLQ_OK) return rc;
  return sqlq__run(db, &q, SQLQ__TEXT(s->queue), SQLQ__INT(s->keep_for_us),
                   SQLQ__INT(s->keep_count));
}

SQLQ__API int sqlq_retention_set(sqlq_db *db, const char *queue, double keep_for,
                                 int64_t keep_count) {
  int rc = sqlq__enter(db);
  if (rc == SQLQ_OK) rc = sqlq__check_queue(db, queue);
  if (rc == SQLQ_OK) rc = sqlq__check_seconds(db, keep_for, 1, "keep_for");
  if (rc != SQLQ_OK) return rc;
  if (keep_count < 0 || keep_count > SQLQ_KEEP_COUNT_MAX)
    return sqlq__error(db, SQLQ_MISUSE, "keep_count must be 0 to %d, not %lld", SQLQ_KEEP_COUNT_MAX,
                       (long long)keep_count);
  struct setting s = {
    .queue = queue, .keep_for_us = sqlq__seconds_to_us(keep_for), .keep_count = keep_count};
  /* A limit of age below a microsecond is still one. */
  if (keep_for > 0 && s.keep_for_us == 0) s.keep_for_us = 1;
  return sqlq__in_tx(db, SQLQ__TX_WRITE, set_tx, &s);
}

static int get_tx(sqlq_db *db, void *arg) {
  struct setting *s = arg;
  retention r;
  int rc = get_retention(db, s->queue, &r);
  s->keep_for_us = r.keep_for_us;
  s->keep_count = r.keep_count;
  return rc;
}

SQLQ__API int sqlq_retention_get(sqlq_db *db, const char *queue, double *keep_for_out,
                                 int64_t *keep_count_out) {
  if (keep_for_out) *keep_for_out = 0;
  if (keep_count_out) *keep_count_out = 0;
  int rc = sqlq__enter(db);
  if (rc == SQLQ_OK) rc = sqlq__check_queue(db, queue);
  if (rc != SQLQ_OK) return rc;
  struct setting s = {.queue = queue};
  rc = sqlq__in_tx(db, SQLQ__TX_READ, get_tx, &s);
  if (rc != SQLQ_OK) return rc;
  if (keep_for_out) *keep_for_out = (double)s.keep_for_us / 1e6;
  if (keep_count_out) *keep_count_out = s.keep_count;
  return SQLQ_OK;
}
