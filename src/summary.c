/*
** summary.c -- sqlq_summary(): every queue's counts, each bounded, and the
** age of its oldest due job, in one statement (SQLQ__SQL_SUMMARY) whose
** cost does not grow with the number of jobs: what a dashboard polls.
*/
#include <stdlib.h>
#include <string.h>

#include "sqlq_int.h"

struct summary {
  const char *queue;
  int64_t limit;
  sqlq_queue_summary *rows;
  size_t n, cap;
};

/* Count column i of st, at most s->limit; sets bit in *more when the
** statement found more (it counts up to limit + 1). */
static int64_t bounded(const sqlq__driver *d, sqlq__stmt *st, int i, const struct summary *s,
                       unsigned bit, unsigned *more) {
  int64_t count = d->column_int64(st, i);
  if (count <= s->limit) return count;
  *more |= bit;
  return s->limit;
}

static int summary_row(sqlq_db *db, sqlq__stmt *st, void *arg) {
  struct summary *s = arg;
  const sqlq__driver *d = db->driver;
  int rc = sqlq__grow(db, (void **)&s->rows, &s->cap, s->n, sizeof *s->rows);
  if (rc != SQLQ_OK) return rc;
  sqlq_queue_summary *r = &s->rows[s->n++];
  memset(r, 0, sizeof *r);
  sqlq__column_queue(db, st, 0, r->queue);
  r->ready = bounded(d, st, 1, s, SQLQ_MORE_READY, &r->more);
  r->scheduled = bounded(d, st, 2, s, SQLQ_MORE_SCHEDULED, &r->more);
  r->running = bounded(d, st, 3, s, SQLQ_MORE_RUNNING, &r->more);
  r->dead = bounded(d, st, 4, s, SQLQ_MORE_DEAD, &r->more);
  r->paused = d->column_int64(st, 5) != 0;
  r->oldest_ready_age_us = -1;
  if (!d->column_is_null(st, 6)) {
    int64_t age = d->column_int64(st, 6);
    r->oldest_ready_age_us = age > 0 ? age : 0;
  }
  return SQLQ_OK;
}

static int summary_tx(sqlq_db *db, void *arg) {
  struct summary *s = arg;
  sqlq__query q = {.sql = SQLQ__SQL_SUMMARY, .row = summary_row, .arg = s};
  return sqlq__run(db, &q, SQLQ__TEXT(s->queue), SQLQ__INT(s->limit));
}

SQLQ__API int sqlq_summary(sqlq_db *db, const char *queue, int64_t limit, sqlq_queue_summary **out,
                           size_t *n_out) {
  if (out) *out = NULL;
  if (n_out) *n_out = 0;
  int rc = sqlq__enter(db);
  if (rc == SQLQ_OK && queue) rc = sqlq__check_queue(db, queue);
  if (rc != SQLQ_OK) return rc;
  if (out == NULL || n_out == NULL)
    return sqlq__error(db, SQLQ_MISUSE, "sqlq_summary() needs somewhere to put the counts");
  if (limit < 1 || limit > SQLQ_SUMMARY_LIMIT_MAX)
    return sqlq__error(db, SQLQ_MISUSE, "sqlq_summary(): limit must be from 1 to %d",
                       SQLQ_SUMMARY_LIMIT_MAX);
  struct summary s = {.queue = queue, .limit = limit};
  rc = sqlq__in_tx(db, SQLQ__TX_READ, summary_tx, &s);
  if (rc != SQLQ_OK) {
    free(s.rows);
    return rc;
  }
  *out = s.rows;
  *n_out = s.n;
  return SQLQ_OK;
}

/* The summaries hold no pointers: n is there so that every free function
** of the API takes the same arguments. */
SQLQ__API void sqlq_queue_summaries_free(sqlq_queue_summary *summaries, size_t n) {
  (void)n;
  free(summaries);
}
