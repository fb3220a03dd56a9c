/*
** deps.c -- dependencies between jobs (schema version 7): a job that waits
** for others to succeed, its release when the last of them is acked, and
** its death when one of them is purged.
**
** A waiting job is ready with run_at = SQLQ__WAITING_AT + its delay, so
** that no claim takes it and no index or plain-SQL INSERT changes; its
** waits column counts the jobs it still waits for, and each job waited for
** has awaited set, which the acks read: an ack leaves such a job to a
** second pass (claim.c), which deletes it and runs sqlq__deps_release in
** the same transaction.  The count is kept on the dependent's row, so that
** two acks of its last two dependencies at once take turns on that row
** and one of them sees it reach zero.
**
** Races with a dependent's enqueue are settled by the dependency's row:
** the enqueue marks it (DEPS_AWAIT) and keeps it locked until it commits,
** while an ack deletes it.  Whichever comes second waits for the other:
** an enqueue after the ack finds no row and does not wait for it; an ack
** after the enqueue sees awaited set and releases the dependent.
*/
#include <stdlib.h>

#include "sqlq_int.h"

int sqlq__deps_wait(sqlq_db *db, int64_t id, const int64_t *after, size_t n, int64_t delay_us) {
  /* Ids grow: one as high as the new job's was never any job's before. */
  if (after[n - 1] >= id)
    return sqlq__error(db, SQLQ_NOTFOUND, "job %lld does not exist", (long long)after[n - 1]);
  int64_t waits = 0;
  for (size_t i = 0; i < n; i++) {
    sqlq__query q = {.sql = SQLQ__SQL_DEPS_AWAIT, .flags = SQLQ__Q_CHANGES};
    int rc = sqlq__run(db, &q, SQLQ__INT(after[i]));
    if (rc != SQLQ_OK) return rc;
    if (q.changes == 0) continue; /* finished already */
    q = (sqlq__query){.sql = SQLQ__SQL_DEPS_ADD};
    if ((rc = sqlq__run(db, &q, SQLQ__INT(id), SQLQ__INT(after[i]))) != SQLQ_OK) return rc;
    waits++;
  }
  if (waits == 0) return SQLQ_OK;
  sqlq__query q = {.sql = SQLQ__SQL_DEPS_HOLD};
  return sqlq__run(db, &q, SQLQ__INT(id), SQLQ__INT(waits), SQLQ__INT(delay_us));
}

/* A row of DEPS_READY: a queue that has count jobs ready now. */
static int owe_ready(sqlq_db *db, sqlq__stmt *st, void *arg) {
  (void)arg;
  char *queue = NULL;
  int rc = sqlq__column_text(db, st, 0, &queue, NULL);
  int64_t n = db->driver->column_int64(st, 1);
  if (rc == SQLQ_OK) sqlq__owe_wake(db, queue, n > 1000000 ? 1000000 : (int)n);
  free(queue);
  return rc;
}

int sqlq__deps_release(sqlq_db *db, int64_t id) {
  sqlq__query q = {.sql = SQLQ__SQL_DEPS_RELEASE};
  int rc = sqlq__run(db, &q, SQLQ__INT(id));
  if (rc != SQLQ_OK) return rc;
  q = (sqlq__query){.sql = SQLQ__SQL_DEPS_READY, .row = owe_ready};
  if ((rc = sqlq__run(db, &q, SQLQ__INT(id))) != SQLQ_OK) return rc;
  q = (sqlq__query){.sql = SQLQ__SQL_DEPS_DONE};
  return sqlq__run(db, &q, SQLQ__INT(id));
}

int sqlq__deps_purge(sqlq_db *db, const char *queue) {
  int rc = sqlq__run_for_queue(db, SQLQ__SQL_DEPS_KILL, queue, NULL, NULL);
  return rc == SQLQ_OK ? sqlq__run_for_queue(db, SQLQ__SQL_DEPS_FORGET, queue, NULL, NULL) : rc;
}
