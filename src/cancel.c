/*
** cancel.c -- cancellation (schema version 9): sqlq_cancel() makes ready
** and running jobs dead, marked cancelled, and tells the workers of their
** queues on the queue's cancel channel, where sqlq_wait_lost() listens.
**
** A cancelled job is dead with cancelled_at set: its token is cleared like
** any dead job's, so the statements keyed by (id, token, state running)
** of its worker change nothing and answer SQLQ_STALE.  Everything that
** follows a job's death follows a cancel too: the FIFO group's next job
** may run (the claims' test, and the triggers that wake the group's
** waiters where a backend has them), a concurrency limit counts one
** running job less, and the jobs waiting for it keep waiting.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sqlq_int.h"

const char *sqlq__cancel_channel(const char *queue, char *buf) {
  snprintf(buf, SQLQ__CANCEL_CHANNEL_SIZE,
           "\x1E"
           "cncl:%s",
           queue);
  return buf;
}

struct cancel {
  const int64_t *ids; /* sorted, without repeats */
  size_t n;
  size_t cancelled;
  char **queues; /* the queue of each job cancelled (counts.c), or NULL */
};

/* Row reader of CANCEL_PEEK: the queue, into the char * at arg. */
static int read_queue(sqlq_db *db, sqlq__stmt *st, void *arg) {
  char **queue = arg;
  return *queue ? SQLQ_OK : sqlq__column_text(db, st, 0, queue, NULL);
}

/* Cancel job id when it is ready or running, counting it in c->cancelled,
** and owe its queue a wake-up: its waiting workers may claim (a FIFO
** group's next job, a concurrency limit's slot), and its workers that
** wait in sqlq_wait_lost() look at the jobs they hold. */
static int cancel_one(sqlq_db *db, struct cancel *c, int64_t id) {
  char *queue = NULL;
  sqlq__query peek = {.sql = SQLQ__SQL_CANCEL_PEEK, .row = read_queue, .arg = &queue};
  int rc = sqlq__run(db, &peek, SQLQ__INT(id));
  /* A job's queue never changes; the cancel changes the row only if it
  ** is still ready or running (an ack in between wins). */
  sqlq__query q = {.sql = SQLQ__SQL_CANCEL, .flags = SQLQ__Q_CHANGES};
  if (rc == SQLQ_OK && queue) rc = sqlq__run(db, &q, SQLQ__INT(id));
  if (rc == SQLQ_OK && q.changes > 0) {
    char channel[SQLQ__CANCEL_CHANNEL_SIZE];
    if (c->queues) c->queues[c->cancelled] = strdup(queue);
    c->cancelled++;
    sqlq__owe_wake(db, queue, 1);
    sqlq__owe_wake(db, sqlq__cancel_channel(queue, channel), SQLQ__WAKE_ALL);
  }
  free(queue);
  return rc;
}

static int cancel_tx(sqlq_db *db, void *arg) {
  struct cancel *c = arg;
  int version = 0;
  for (size_t i = 0; c->queues && i < c->cancelled; i++) free(c->queues[i]);
  c->cancelled = 0;
  int rc = sqlq__schema_version(db, &version);
  if (rc == SQLQ_OK && version < SQLQ__CANCEL_VERSION)
    return sqlq__error(db, SQLQ_SCHEMA,
                       "the database has no cancellation (schema version %d): run `sqlq init`",
                       SQLQ__CANCEL_VERSION);
  for (size_t i = 0; i < c->n && rc == SQLQ_OK; i++) rc = cancel_one(db, c, c->ids[i]);
  return rc;
}

SQLQ__API int sqlq_cancel(sqlq_db *db, const int64_t *ids, size_t n, size_t *cancelled_out) {
  if (cancelled_out) *cancelled_out = 0;
  int rc = sqlq__enter(db);
  if (rc != SQLQ_OK || n == 0) return rc;
  if (ids == NULL) return sqlq__error(db, SQLQ_MISUSE, "ids is NULL");
  /* In id order, without repeats: concurrent cancels lock rows in one
  ** order, and a repeated id counts once. */
  int64_t *sorted = NULL;
  size_t m = 0;
  if ((rc = sqlq__id_set(db, ids, n, &sorted, &m)) != SQLQ_OK) return rc;
  struct cancel c = {.ids = sorted, .n = m, .queues = calloc(m, sizeof(char *))};
  rc = sqlq__in_tx(db, SQLQ__TX_WRITE, cancel_tx, &c);
  free(sorted);
  for (size_t i = 0; c.queues && i < c.cancelled; i++) {
    if (rc == SQLQ_OK && c.queues[i]) sqlq__count_dead(db, c.queues[i], 1);
    free(c.queues[i]);
  }
  free(c.queues);
  if (cancelled_out && rc == SQLQ_OK) *cancelled_out = c.cancelled;
  return rc;
}

/* What sqlq_wait_lost() watches: n jobs, and for each whether it is lost. */
struct watch {
  const sqlq_job_ref *refs;
  size_t n;
  int *lost;
};

/* Is one of the jobs watched no longer held?  FAIL_PEEK finds a job held
** with its token; only a commit (a cancel, or any other change of the
** job) can bring a loss, so there is no due time. */
static int lost_due(sqlq_db *db, void *arg, int64_t *due_in_us) {
  struct watch *w = arg;
  int any = 0, rc = SQLQ_OK;
  for (size_t i = 0; i < w->n && rc == SQLQ_OK; i++) {
    sqlq__query q = {.sql = SQLQ__SQL_FAIL_PEEK};
    rc = sqlq__run(db, &q, SQLQ__INT(w->refs[i].id), SQLQ__INT(w->refs[i].token));
    w->lost[i] = rc == SQLQ_OK && q.rows == 0;
    any |= w->lost[i];
  }
  *due_in_us = any ? 0 : -1;
  return rc;
}

SQLQ__API int sqlq_wait_lost(sqlq_db *db, const char *queue, const sqlq_job_ref *refs, size_t n,
                             double timeout, int *lost_out) {
  int64_t deadline = -1;
  int rc = sqlq__enter(db);
  if (rc == SQLQ_OK) rc = sqlq__check_queue(db, queue);
  if (rc == SQLQ_OK) rc = sqlq__deadline(db, timeout, &deadline);
  if (rc == SQLQ_OK && n > 0 && refs == NULL) rc = sqlq__error(db, SQLQ_MISUSE, "refs is NULL");
  if (rc != SQLQ_OK) return rc;
  int *lost = lost_out ? lost_out : calloc(n ? n : 1, sizeof *lost);
  if (lost == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  for (size_t i = 0; i < n; i++) lost[i] = 0;
  struct watch w = {refs, n, lost};
  char channel[SQLQ__CANCEL_CHANNEL_SIZE];
  rc = sqlq__wait_on(db, sqlq__cancel_channel(queue, channel), lost_due, &w, deadline);
  if (lost != lost_out) free(lost);
  if (rc == SQLQ_TIMEOUT)
    return sqlq__error(db, SQLQ_TIMEOUT, "every job watched on queue '%s' is still held", queue);
  return rc;
}
