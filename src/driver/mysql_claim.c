/*
** mysql_claim.c -- the claim in two steps, in one transaction.
**
** 1. The pick (sql[SQLQ__SQL_CLAIM]): SELECT ... FOR UPDATE SKIP LOCKED
**    locks the first `limit` due jobs, in the order priority DESC, run_at,
**    id, that no other claimer holds, and reads them whole.
** 2. One UPDATE ... WHERE id IN (...) of their ids marks them running
**    with the claim's token and lease.
**
** Expired leases: the pick also says, reading without locks, whether the
** queue has jobs whose lease expired.  Only then (rarely) does the claim
** lock those jobs, bury the ones with no attempt left as dead, put the
** others back as ready (their error saying why), and pick again.  A
** locking scan of the running jobs in every claim would hold gap locks
** that the other claimers' UPDATEs wait for, and deadlock them.
**
** The UPDATEs name their rows by id and hold no LIMIT, SKIP LOCKED or
** clock of the client, so they replay identically under statement-based
** replication.  The ids written into their text are integers the server
** returned, never text from the caller.
**
** The statement then shows the pick's rows again, which read the attempt
** counted and the new lease as the UPDATE writes them.  A claim outside a
** transaction (SQLQ__TX_SINGLE) opens its own, and sends its COMMIT with
** the UPDATE: three round trips.  Unless the binary log is statement-based
** (which refuses writes under READ COMMITTED), that transaction reads
** committed: under REPEATABLE READ, a pick that reaches the end of the
** queue's ready jobs locks the gap after them until it commits, and every
** producer's INSERT of a new job waits for it.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mysql_int.h"

/* The pick's columns this file reads. */
enum { COL_ID = 0, COL_LEASE_UNTIL = 6, COL_EXPIRED_EXIST = 10 };

static long long col_int(const sqlq__stmt *st, int i) {
  const my_col *c = &st->cols[i];
  if (c->is_null) return 0;
  return c->is_int ? c->ival : strtoll(c->buf, NULL, 10);
}

/* Run "UPDATE sqlq_jobs SET <set> WHERE id IN (<ids>)" for n ids, and
** COMMIT in the same round trip when commit is set (a failed UPDATE stops
** the script before it).  The
** primary key is named: with the statistics of a table that just grew, the
** optimizer may scan the whole index instead, locking every row, and
** deadlock the other claimers. */
static int update_ids(sqlq_db *db, const char *set, const long long *ids, int n, int commit) {
  if (n == 0) return SQLQ_OK;
  sqlq__buf sql = {0};
  sqlq__buf_addf(&sql, "UPDATE sqlq_jobs FORCE INDEX (PRIMARY) SET %s WHERE id IN (", set);
  for (int k = 0; k < n; k++) sqlq__buf_addf(&sql, "%s%lld", k ? "," : "", ids[k]);
  sqlq__buf_add(&sql, commit ? "); COMMIT" : ")");
  int rc = sql.oom ? sqlq__error(db, SQLQ_NOMEM, "out of memory")
                   : sqlq__my_query(db, MY(db)->conn, sql.p, "claim");
  sqlq__buf_free(&sql);
  return rc;
}

/* Does queue (parameter 1 of the pick) have expired leases?  The pick's
** first row says; with no row, ask. */
static int expired_exist(sqlq_db *db, sqlq__stmt *pick, int n_rows, int *exist) {
  if (n_rows > 0) {
    mysql_stmt_data_seek(pick->ms, 0);
    int rc = sqlq__my_fetch(db, pick);
    if (rc != SQLQ__ROW)
      return rc == SQLQ__DONE ? sqlq__error(db, SQLQ_ERROR, "mysql: the pick lost a row") : rc;
    *exist = col_int(pick, COL_EXPIRED_EXIST) != 0;
    return SQLQ_OK;
  }
  const char *params[1] = {pick->params[0].buffer};
  sqlq__stmt *st;
  int rc = sqlq__my_run(db, MY_SQL_EXPIRED_EXIST, 1, params, NULL, &st);
  if (rc == SQLQ_OK) rc = sqlq__my_fetch(db, st);
  *exist = rc == SQLQ__ROW && col_int(st, 0) != 0;
  db->driver->reset(st);
  return rc == SQLQ__ROW || rc == SQLQ__DONE ? SQLQ_OK : rc;
}

/* Lock the queue's jobs whose lease expired; bury those with no attempt
** left and make the others ready again. */
static int take_back_expired(sqlq_db *db, const char *queue) {
  const char *params[1] = {queue};
  sqlq__stmt *st;
  int rc = sqlq__my_run(db, MY_SQL_EXPIRED, 1, params, NULL, &st);
  int n = rc == SQLQ_OK ? (int)mysql_stmt_num_rows(st->ms) : 0;
  long long *ids = n ? malloc((size_t)n * sizeof *ids) : NULL;
  int n_dead = 0, n_ready = 0;
  if (n && ids == NULL) rc = sqlq__error(db, SQLQ_NOMEM, "out of memory");
  /* The dead fill ids from the front, the others from the back. */
  if (rc == SQLQ_OK) {
    while ((rc = sqlq__my_fetch(db, st)) == SQLQ__ROW && n_dead + n_ready < n) {
      if (col_int(st, 1))
        ids[n_dead++] = col_int(st, 0);
      else
        ids[n - ++n_ready] = col_int(st, 0);
    }
  }
  db->driver->reset(st);
  if (rc == SQLQ__DONE) rc = SQLQ_OK;
  if (rc == SQLQ_OK)
    rc = update_ids(db,
                    "last_error = CONCAT('lease expired during attempt ', attempts),"
                    " state = 'dead', token = NULL, lease_until = NULL",
                    ids, n_dead, 0);
  if (rc == SQLQ_OK)
    rc = update_ids(db,
                    "last_error = CONCAT('lease expired during attempt ', attempts),"
                    " state = 'ready', token = NULL, lease_until = NULL",
                    ids + n - n_ready, n_ready, 0);
  free(ids);
  return rc;
}

/* Steps 1 and 2 inside the open transaction; with commit set, the UPDATE
** that marks the jobs also commits, and *committed says it did. */
static int pick_and_mark(sqlq_db *db, sqlq__stmt *st, int commit, int *committed) {
  int rc = sqlq__my_execute(db, st);
  int n = rc == SQLQ_OK ? (int)mysql_stmt_num_rows(st->ms) : 0, exist = 0;
  if (rc == SQLQ_OK) rc = expired_exist(db, st, n, &exist);
  if (rc == SQLQ_OK && exist) {
    mysql_stmt_free_result(st->ms);
    rc = take_back_expired(db, st->params[0].buffer);
    if (rc == SQLQ_OK) rc = sqlq__my_execute(db, st);
    n = rc == SQLQ_OK ? (int)mysql_stmt_num_rows(st->ms) : 0;
  }
  if (rc != SQLQ_OK || n == 0) return rc;
  long long *ids = malloc((size_t)n * sizeof *ids);
  if (ids == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  mysql_stmt_data_seek(st->ms, 0);
  long long lease_until = 0;
  for (int r = 0; rc == SQLQ_OK && r < n; r++) {
    rc = sqlq__my_fetch(db, st);
    if (rc == SQLQ__ROW)
      rc = SQLQ_OK;
    else if (rc == SQLQ__DONE)
      rc = sqlq__error(db, SQLQ_ERROR, "mysql: the pick lost a row");
    ids[r] = col_int(st, COL_ID);
    lease_until = col_int(st, COL_LEASE_UNTIL);
  }
  char set[160];
  snprintf(set, sizeof set,
           "attempts = attempts + 1, state = 'running', token = %lld, lease_until = %lld",
           st->ints[1], lease_until);
  if (rc == SQLQ_OK) rc = update_ids(db, set, ids, n, commit);
  *committed = rc == SQLQ_OK && commit;
  /* The statement's steps show the rows from the first. */
  mysql_stmt_data_seek(st->ms, 0);
  free(ids);
  return rc;
}

int sqlq__my_claim(sqlq_db *db, sqlq__stmt *st) {
  const char *start = MY(db)->rc_claims
                        ? "SET TRANSACTION ISOLATION LEVEL READ COMMITTED; START TRANSACTION"
                        : "START TRANSACTION";
  return sqlq__my_in_own_tx(db, st, start, pick_and_mark);
}
