/*
** admin.c -- queue administration: pause, resume, stats, list, retry,
** delete dead jobs, purge.
*/
#include <stdlib.h>
#include <string.h>

#include "sqlq_int.h"

struct queue_op {
  const char *queue;
  int64_t flag;       /* pause: 1 or 0 */
  const int64_t *ids; /* retry */
  size_t n_ids;
  int64_t count;
  int deps; /* purge: the database has dependencies (sqlq__deps_on) */
};

static int pause_tx(sqlq_db *db, void *arg) {
  struct queue_op *q = arg;
  sqlq__query set = {.sql = SQLQ__SQL_PAUSE_SET};
  int rc = sqlq__run(db, &set, SQLQ__TEXT(q->queue), SQLQ__INT(q->flag));
  if (rc == SQLQ_OK && !q->flag) sqlq__owe_wake(db, q->queue, 1);
  return rc;
}

static int set_paused(sqlq_db *db, const char *queue, int paused) {
  int rc = sqlq__enter(db);
  if (rc == SQLQ_OK) rc = sqlq__check_queue(db, queue);
  if (rc != SQLQ_OK) return rc;
  struct queue_op q = {.queue = queue, .flag = paused};
  return sqlq__in_tx(db, SQLQ__TX_WRITE, pause_tx, &q);
}

SQLQ__API int sqlq_pause(sqlq_db *db, const char *queue) {
  return set_paused(db, queue, 1);
}
SQLQ__API int sqlq_resume(sqlq_db *db, const char *queue) {
  return set_paused(db, queue, 0);
}

/* A job retried is no longer marked cancelled (schema version 9): the
** marks of the queue's dead jobs go before RETRY_DEAD (one a newer job's
** dedupe key keeps dead loses it too), the mark of a job retried by id
** after RETRY_ID made it ready. */
static int retry_tx(sqlq_db *db, void *arg) {
  struct queue_op *q = arg;
  int version = 0;
  int rc = sqlq__schema_version(db, &version);
  int marks = version >= SQLQ__CANCEL_VERSION;
  q->count = 0;
  if (rc == SQLQ_OK && q->ids == NULL && marks)
    rc = sqlq__run_for_queue(db, SQLQ__SQL_UNCANCEL_DEAD, q->queue, NULL, NULL);
  if (rc == SQLQ_OK && q->ids == NULL)
    rc = sqlq__run_for_queue(db, SQLQ__SQL_RETRY_DEAD, q->queue, NULL, &q->count);
  for (size_t i = 0; q->ids && i < q->n_ids && rc == SQLQ_OK; i++) {
    rc = sqlq__run_for_queue(db, SQLQ__SQL_RETRY_ID, q->queue, &q->ids[i], &q->count);
    if (rc == SQLQ_OK && marks)
      rc = sqlq__run_for_queue(db, SQLQ__SQL_UNCANCEL_ID, q->queue, &q->ids[i], NULL);
  }
  if (rc == SQLQ_OK && q->count > 0)
    sqlq__owe_wake(db, q->queue, (int)(q->count > 1000000 ? 1000000 : q->count));
  return rc;
}

/* Run tx on the n ids of queue in a write transaction, and give the count
** it left in q->count to *count_out (may be NULL; 0 on failure). */
static int ids_op(sqlq_db *db, const char *queue, const int64_t *ids, size_t n,
                  int (*tx)(sqlq_db *, void *), size_t *count_out) {
  struct queue_op q = {.queue = queue, .ids = ids, .n_ids = n};
  int rc = sqlq__in_tx(db, SQLQ__TX_WRITE, tx, &q);
  if (count_out) *count_out = rc == SQLQ_OK ? (size_t)q.count : 0;
  return rc;
}

SQLQ__API int sqlq_retry(sqlq_db *db, const char *queue, const int64_t *ids, size_t n,
                         size_t *count_out) {
  if (count_out) *count_out = 0;
  int rc = sqlq__enter(db);
  if (rc == SQLQ_OK) rc = sqlq__check_queue(db, queue);
  return rc == SQLQ_OK ? ids_op(db, queue, ids, n, retry_tx, count_out) : rc;
}

static int delete_dead_tx(sqlq_db *db, void *arg) {
  struct queue_op *q = arg;
  int version = 0;
  int rc = sqlq__schema_version(db, &version);
  q->count = 0;
  if (rc == SQLQ_OK && version < SQLQ__DEPS_VERSION)
    return sqlq__error(db, SQLQ_SCHEMA,
                       "deleting dead jobs needs schema version %d: run `sqlq init`",
                       SQLQ__DEPS_VERSION);
  for (size_t i = 0; i < q->n_ids && rc == SQLQ_OK; i++)
    rc = sqlq__run_for_queue(db, SQLQ__SQL_DELETE_DEAD_ID, q->queue, &q->ids[i], &q->count);
  return rc;
}

SQLQ__API int sqlq_delete_dead(sqlq_db *db, const char *queue, const int64_t *ids, size_t n,
                               size_t *deleted_out) {
  if (deleted_out) *deleted_out = 0;
  int rc = sqlq__enter(db);
  if (rc == SQLQ_OK) rc = sqlq__check_queue(db, queue);
  if (rc != SQLQ_OK) return rc;
  if (ids == NULL && n > 0)
    return sqlq__error(db, SQLQ_MISUSE, "sqlq_delete_dead() needs the ids of its %zu jobs", n);
  return n == 0 ? SQLQ_OK : ids_op(db, queue, ids, n, delete_dead_tx, deleted_out);
}

static int purge_tx(sqlq_db *db, void *arg) {
  struct queue_op *q = arg;
  q->count = 0;
  /* The jobs that wait for those of the queue will never see them succeed. */
  int rc = q->deps ? sqlq__deps_purge(db, q->queue) : SQLQ_OK;
  return rc == SQLQ_OK ? sqlq__run_for_queue(db, SQLQ__SQL_PURGE, q->queue, NULL, &q->count) : rc;
}

SQLQ__API int sqlq_purge(sqlq_db *db, const char *queue, size_t *count_out) {
  if (count_out) *count_out = 0;
  /* A queue a plain-SQL writer named with control characters must stay
  ** possible to purge. */
  int rc = sqlq__enter(db);
  if (rc == SQLQ_OK) rc = sqlq__check_stored_queue(db, queue);
  if (rc != SQLQ_OK) return rc;
  struct queue_op q = {.queue = queue};
  if ((rc = sqlq__deps_on(db, &q.deps)) != SQLQ_OK) return rc;
  rc = sqlq__in_tx(db, SQLQ__TX_WRITE, purge_tx, &q);
  if (count_out) *count_out = rc == SQLQ_OK ? (size_t)q.count : 0;
  return rc;
}

/* ---------------------------------------------------------------------
** Reading: stats and list.  They run in a transaction too, so that their
** counts are one consistent snapshot.
*/

struct stats {
  const char *queue;
  sqlq_queue_stats *rows;
  size_t n, cap;
};

static int stats_row(sqlq_db *db, sqlq__stmt *st, void *arg) {
  struct stats *s = arg;
  const sqlq__driver *d = db->driver;
  int rc = sqlq__grow(db, (void **)&s->rows, &s->cap, s->n, sizeof *s->rows);
  if (rc != SQLQ_OK) return rc;
  sqlq_queue_stats *r = &s->rows[s->n++];
  memset(r, 0, sizeof *r);
  sqlq__column_queue(db, st, 0, r->queue);
  r->ready = d->column_int64(st, 1);
  r->scheduled = d->column_int64(st, 2);
  r->running = d->column_int64(st, 3);
  r->dead = d->column_int64(st, 4);
  r->paused = d->column_int64(st, 5) != 0;
  return SQLQ_OK;
}

static int stats_tx(sqlq_db *db, void *arg) {
  struct stats *s = arg;
  sqlq__query q = {.sql = SQLQ__SQL_STATS, .row = stats_row, .arg = s};
  return sqlq__run(db, &q, SQLQ__TEXT(s->queue));
}

SQLQ__API int sqlq_stats(sqlq_db *db, const char *queue, sqlq_queue_stats **stats_out,
                         size_t *n_out) {
  if (stats_out) *stats_out = NULL;
  if (n_out) *n_out = 0;
  int rc = sqlq__enter(db);
  if (rc == SQLQ_OK && queue) rc = sqlq__check_queue(db, queue);
  if (rc != SQLQ_OK) return rc;
  if (stats_out == NULL || n_out == NULL)
    return sqlq__error(db, SQLQ_MISUSE, "sqlq_stats() needs somewhere to put the counts");
  struct stats s = {.queue = queue};
  rc = sqlq__in_tx(db, SQLQ__TX_READ, stats_tx, &s);
  if (rc != SQLQ_OK) {
    free(s.rows);
    return rc;
  }
  *stats_out = s.rows;
  *n_out = s.n;
  return SQLQ_OK;
}

/* The counts hold no pointers: n is there so that every free function of
** the API takes the same arguments. */
SQLQ__API void sqlq_queue_stats_free(sqlq_queue_stats *stats, size_t n) {
  (void)n;
  free(stats);
}

struct list {
  const char *queue;
  int state, limit;
  sqlq_job_info *rows;
  size_t n, cap;
};

/* A malloc'ed NUL-terminated copy of column i, or NULL for SQL NULL. */
static int dup_column(sqlq_db *db, sqlq__stmt *st, int i, char **out, size_t *len_out) {
  size_t len = 0;
  const void *p = db->driver->column_blob(st, i, &len);
  *out = NULL;
  if (len_out) *len_out = len;
  if (p == NULL) return SQLQ_OK;
  if ((*out = malloc(len + 1)) == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  memcpy(*out, p, len);
  (*out)[len] = '\0';
  return SQLQ_OK;
}

static int list_row(sqlq_db *db, sqlq__stmt *st, void *arg) {
  struct list *l = arg;
  const sqlq__driver *d = db->driver;
  int rc = sqlq__grow(db, (void **)&l->rows, &l->cap, l->n, sizeof *l->rows);
  if (rc != SQLQ_OK) return rc;
  sqlq_job_info *j = &l->rows[l->n++];
  memset(j, 0, sizeof *j);
  j->id = d->column_int64(st, 0);
  j->state = (int)d->column_int64(st, 1);
  j->priority = (int)d->column_int64(st, 2);
  j->attempts = (int)d->column_int64(st, 3);
  j->max_attempts = (int)d->column_int64(st, 4);
  /* A waiting job has no time to run yet (its run_at only keeps it apart). */
  j->run_at_us = j->state == SQLQ_STATE_WAITING ? 0 : d->column_int64(st, 5);
  j->created_at_us = d->column_int64(st, 6);
  j->lease_until_us = d->column_is_null(st, 7) ? 0 : d->column_int64(st, 7);
  rc = dup_column(db, st, 8, &j->dedupe_key, NULL);
  if (rc == SQLQ_OK) rc = dup_column(db, st, 9, &j->group_key, NULL);
  if (rc == SQLQ_OK) rc = dup_column(db, st, 10, &j->last_error, NULL);
  if (rc == SQLQ_OK) rc = dup_column(db, st, 11, (char **)&j->payload, &j->payload_len);
  if (rc == SQLQ_OK && j->payload == NULL) {
    j->payload = calloc(1, 1);
    if (j->payload == NULL) rc = sqlq__error(db, SQLQ_NOMEM, "out of memory");
  }
  return rc;
}

static int list_tx(sqlq_db *db, void *arg) {
  struct list *l = arg;
  /* Finished jobs are in history, in rows of the same shape. */
  int sql = l->state == SQLQ_STATE_DONE ? SQLQ__SQL_HISTORY_LIST : SQLQ__SQL_LIST;
  sqlq__query q = {.sql = sql, .row = list_row, .arg = l};
  return sqlq__run(db, &q, SQLQ__TEXT(l->queue), SQLQ__INT(l->state),
                   SQLQ__INT(l->limit > 0 ? l->limit : -1));
}

SQLQ__API int sqlq_list(sqlq_db *db, const char *queue, int state, size_t limit,
                        sqlq_job_info **jobs_out, size_t *n_out) {
  if (jobs_out) *jobs_out = NULL;
  if (n_out) *n_out = 0;
  int rc = sqlq__enter(db);
  if (rc == SQLQ_OK) rc = sqlq__check_queue(db, queue);
  if (rc != SQLQ_OK) return rc;
  if (jobs_out == NULL || n_out == NULL)
    return sqlq__error(db, SQLQ_MISUSE, "sqlq_list() needs somewhere to put the jobs");
  if (state < 0 || state > SQLQ_STATE_WAITING)
    return sqlq__error(db, SQLQ_MISUSE, "unknown job state %d", state);
  struct list l = {.queue = queue, .state = state, .limit = sqlq__limit(limit)};
  rc = sqlq__in_tx(db, SQLQ__TX_READ, list_tx, &l);
  if (rc != SQLQ_OK) {
    sqlq_job_infos_free(l.rows, l.n);
    return rc;
  }
  *jobs_out = l.rows;
  *n_out = l.n;
  return SQLQ_OK;
}

SQLQ__API void sqlq_job_infos_free(sqlq_job_info *jobs, size_t n) {
  if (jobs == NULL) return;
  for (size_t i = 0; i < n; i++) {
    free(jobs[i].dedupe_key);
    free(jobs[i].group_key);
    free(jobs[i].last_error);
    free(jobs[i].payload);
  }
  free(jobs);
}
