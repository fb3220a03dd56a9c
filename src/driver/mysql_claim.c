/*
** mysql_claim.c -- the claim in two steps, in one transaction.
**
** 1. The pick (sql[SQLQ__SQL_CLAIM]): SELECT ... FOR UPDATE SKIP LOCKED
**    locks the first due jobs and the first jobs whose lease expired that
**    no other claimer holds, and reads them whole.
** 2. Of those, in the order priority DESC, run_at, id, the expired jobs
**    with no attempt left are buried as dead, and the first `limit` of the
**    others are marked running with the claim's token and lease by one
**    UPDATE ... WHERE id IN (...) of their ids.
**
** Both UPDATEs name their rows by id and hold no LIMIT, SKIP LOCKED or
** clock of the client, so they replay identically under statement-based
** replication.  The ids written into their text are integers the server
** returned, never text from the caller.
**
** The statement then shows the pick's rows of the jobs taken, with the
** attempt counted and the new lease (see my_column_int64 in mysql.c).  A
** claim outside a transaction (SQLQ__TX_SINGLE) opens its own.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mysql_int.h"

/* The pick's columns this file reads. */
enum { COL_ID = 0, COL_PRIORITY = 1, COL_RUN_AT = 2, COL_ATTEMPTS = 3, COL_MAX_ATTEMPTS = 4,
       COL_EXPIRED = 6, COL_LEASE_UNTIL = 10 };

/* A job the pick locked: its place in the order and in the stored rows. */
typedef struct candidate {
  long long id, priority, run_at;
  int dead;                  /* its lease expired and no attempt is left */
  unsigned long long row;
} candidate;

static int candidate_order(const void *a, const void *b) {
  const candidate *x = a, *y = b;
  if (x->priority != y->priority) return x->priority > y->priority ? -1 : 1;
  if (x->run_at != y->run_at) return x->run_at < y->run_at ? -1 : 1;
  return (x->id > y->id) - (x->id < y->id);
}

static long long col_int(const sqlq__stmt *st, int i) {
  const my_col *c = &st->cols[i];
  if (c->is_null) return 0;
  return c->is_int ? c->ival : strtoll(c->buf, NULL, 10);
}

/* Run "UPDATE sqlq_jobs SET <set> WHERE id IN (<ids>)" for the n ids of
** the candidates in list (indexes into cands). */
static int update_ids(sqlq_db *db, const char *set, const candidate *cands, const int *list, int n) {
  if (n == 0) return SQLQ_OK;
  size_t size = strlen(set) + 64 + (size_t)n * 21;
  char *sql = malloc(size);
  if (sql == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  size_t len = (size_t)snprintf(sql, size, "UPDATE sqlq_jobs SET %s WHERE id IN (", set);
  for (int k = 0; k < n; k++)
    len += (size_t)snprintf(sql + len, size - len, "%s%lld", k ? "," : "", cands[list[k]].id);
  snprintf(sql + len, size - len, ")");
  int rc = sqlq__my_query(db, MY(db)->conn, sql, "claim");
  free(sql);
  return rc;
}

/* Read the pick's rows into cands (n of them, in stored order). */
static int read_candidates(sqlq_db *db, sqlq__stmt *st, candidate *cands, int n,
                           long long *lease_until) {
  for (int r = 0; r < n; r++) {
    int rc = sqlq__my_fetch(db, st);
    if (rc != SQLQ__ROW) return rc == SQLQ__DONE ? sqlq__error(db, SQLQ_ERROR, "mysql: the pick lost a row") : rc;
    cands[r].id = col_int(st, COL_ID);
    cands[r].priority = col_int(st, COL_PRIORITY);
    cands[r].run_at = col_int(st, COL_RUN_AT);
    cands[r].dead = col_int(st, COL_EXPIRED) && col_int(st, COL_ATTEMPTS) >= col_int(st, COL_MAX_ATTEMPTS);
    cands[r].row = (unsigned long long)r;
    *lease_until = col_int(st, COL_LEASE_UNTIL);
  }
  return SQLQ_OK;
}

/* Steps 1 and 2 inside the open transaction. */
static int pick_and_mark(sqlq_db *db, sqlq__stmt *st) {
  int rc = sqlq__my_execute(db, st);
  if (rc != SQLQ_OK) return rc;
  long long limit = st->ints[3], token = st->ints[1];
  int n = (int)mysql_stmt_num_rows(st->ms);
  if (n == 0) return SQLQ_OK;
  candidate *cands = calloc((size_t)n, sizeof *cands);
  int *taken = calloc((size_t)n, sizeof *taken), *buried = calloc((size_t)n, sizeof *buried);
  st->rows = calloc((size_t)n, sizeof *st->rows);
  if (cands == NULL || taken == NULL || buried == NULL || st->rows == NULL) {
    rc = sqlq__error(db, SQLQ_NOMEM, "out of memory");
    goto done;
  }
  if ((rc = read_candidates(db, st, cands, n, &st->lease_until)) != SQLQ_OK) goto done;
  qsort(cands, (size_t)n, sizeof *cands, candidate_order);
  int n_taken = 0, n_buried = 0;
  for (int k = 0; k < n; k++) {
    if (cands[k].dead) buried[n_buried++] = k;
    else if (n_taken < limit) taken[n_taken++] = k;
  }
  rc = update_ids(db,
                  "last_error = CONCAT('lease expired during attempt ', attempts),"
                  " state = 'dead', token = NULL, lease_until = NULL",
                  cands, buried, n_buried);
  char set[256];
  /* Assignments run left to right: last_error reads the old state. */
  snprintf(set, sizeof set,
           "last_error = IF(state = 'running', CONCAT('lease expired during attempt ', attempts),"
           " last_error), attempts = attempts + 1, state = 'running', token = %lld,"
           " lease_until = %lld",
           token, st->lease_until);
  if (rc == SQLQ_OK) rc = update_ids(db, set, cands, taken, n_taken);
  for (int k = 0; rc == SQLQ_OK && k < n_taken; k++) st->rows[k] = cands[taken[k]].row;
  st->n_rows = rc == SQLQ_OK ? n_taken : 0;
done:
  free(cands);
  free(taken);
  free(buried);
  return rc;
}

int sqlq__my_claim(sqlq_db *db, sqlq__stmt *st) {
  mysql_db *m = MY(db);
  int own = !m->in_tx;
  int rc = own ? sqlq__my_query(db, m->conn, "START TRANSACTION", "START TRANSACTION") : SQLQ_OK;
  if (rc == SQLQ_OK) rc = pick_and_mark(db, st);
  if (own && rc == SQLQ_OK) rc = sqlq__my_query(db, m->conn, "COMMIT", "COMMIT");
  if (own && rc != SQLQ_OK && !m->lost) {
    sqlq__saved_error saved;
    sqlq__save_error(db, &saved);
    sqlq__my_query(db, m->conn, "ROLLBACK", "ROLLBACK");
    sqlq__restore_error(db, &saved);
  }
  /* With no row taken, step shows none. */
  if (rc == SQLQ_OK && st->rows == NULL) st->rows = calloc(1, sizeof *st->rows);
  return rc == SQLQ_OK && st->rows == NULL ? sqlq__error(db, SQLQ_NOMEM, "out of memory") : rc;
}
