/*
** mysql_ids.c -- the ids of a batch of jobs, taken from the counter row.
**
** Since schema version 3, job ids come from the one row of sqlq_job_ids
** (migration 3 of mysql_sql.c): the trigger sqlq_jobs_id numbers each row
** inserted without an id, one UPDATE of the counter per row.  A batch
** takes its n ids with one UPDATE instead, before its INSERT, and gives
** them to the INSERT as the array of its parameter $7, which the trigger
** leaves alone: one statement more per batch, n counter updates fewer.
** The counter's row stays locked until the batch's transaction ends, as
** with the trigger, so the ids follow the order of the commits: a batch
** run outside a transaction (SQLQ__TX_SINGLE) opens one here, which its
** step commits once the INSERT ran (mysql.c, my_step).  Else a claim
** could see the counter past ids whose INSERT had yet to commit, and its
** cursor skip those jobs (mysql_sql.c, "Late commits").
*/
#include <stdlib.h>

#include "mysql_int.h"

int sqlq__my_take_ids(sqlq_db *db, sqlq__stmt *st) {
  mysql_db *m = MY(db);
  int rc = sqlq__my_start(db);
  if (rc == SQLQ_OK && !m->in_tx) {
    rc = sqlq__my_query(db, m->conn, "START TRANSACTION", "START TRANSACTION");
    m->in_tx = m->batch_tx = m->tx_watch = rc == SQLQ_OK;
  }
  if (rc != SQLQ_OK) return rc;
  size_t n = sqlq__my_array_rows(st);
  const char *params[1] = {NULL};
  long long count[1] = {(long long)n};
  sqlq__stmt *take = NULL;
  rc = sqlq__my_run(db, MY_SQL_TAKE_IDS, 1, params, count, &take);
  /* LAST_INSERT_ID(expr) hands the new last id back with the UPDATE's
  ** result, as its insert id. */
  long long last = take ? take->insert_id : 0, matched = take ? take->changes : 0;
  if (take) db->driver->reset(take);
  if (rc != SQLQ_OK) return rc;
  if (matched != 1)
    return sqlq__error(db, SQLQ_SCHEMA, "the job counter sqlq_job_ids has no row: run `sqlq init`");
  int64_t *ids = malloc((n ? n : 1) * sizeof *ids);
  if (ids == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  for (size_t k = 0; k < n; k++) ids[k] = last - (long long)n + 1 + (long long)k;
  rc = sqlq__my_bind_int64_array(st, 7, ids, n);
  free(ids);
  return rc == SQLQ_OK ? SQLQ_OK : sqlq__error(db, rc, "out of memory");
}
