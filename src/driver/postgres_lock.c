/*
** postgres_lock.c -- named locks as session advisory locks.
**
** The key is the core's 64-bit FNV-1a hash of the name, computed in C, so
** it never changes with the server's version (hashtext() is internal and
** has changed between releases).  Locks live on a second session of the
** handle, opened at the first lock: a timed wait sets lock_timeout there,
** outside any transaction of the caller's, so a timeout (SQLSTATE 55P03)
** never aborts the caller's work.  The server releases every lock of a
** session when the session ends, so a holder that dies loses its locks.
** Session locks do not survive PgBouncer's transaction pooling.
**
** Transaction locks (sqlq_lock_xact) are pg_advisory_xact_lock() in the
** caller's transaction, so they work through transaction pooling.  A timed
** wait runs inside a savepoint with a local lock_timeout: a timeout rolls
** back to the savepoint (undoing the setting too) and leaves the
** transaction usable.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "postgres_int.h"

struct sqlq__lockstate {
  int64_t key;
};

/* Run sql with the key as $1 on the lock session; *got receives the
** boolean result when got is not NULL. */
static int run_key(sqlq_db *db, const char *sql, int64_t key, int *got) {
  postgres_db *p = PG(db);
  char text[24];
  snprintf(text, sizeof text, "%lld", (long long)key);
  const char *params[1] = {text};
  PGresult *r = PQexecParams(p->lock_conn, sql, 1, NULL, params, NULL, NULL, 0);
  ExecStatusType s = PQresultStatus(r);
  int rc = s == PGRES_TUPLES_OK || s == PGRES_COMMAND_OK ? SQLQ_OK
                                                         : sqlq__pg_error(db, p->lock_conn, r, "lock");
  if (rc == SQLQ_OK && got) *got = PQntuples(r) == 1 && strcmp(PQgetvalue(r, 0, 0), "t") == 0;
  PQclear(r);
  return rc;
}

static int set_timeout(sqlq_db *db, double timeout_s) {
  char sql[64];
  long long ms = timeout_s > 0 ? (long long)(timeout_s * 1000 + 0.5) : 0;
  if (timeout_s > 0 && ms < 1) ms = 1;
  if (ms > 2147483647LL) ms = 0; /* beyond the setting's range: no limit */
  snprintf(sql, sizeof sql, "SET lock_timeout = %lld", ms);
  PGresult *r = PQexec(PG(db)->lock_conn, sql);
  int rc = PQresultStatus(r) == PGRES_COMMAND_OK ? SQLQ_OK
                                                 : sqlq__pg_error(db, PG(db)->lock_conn, r, "SET lock_timeout");
  PQclear(r);
  return rc;
}

int sqlq__pg_lock(sqlq_db *db, uint64_t key, const void *name, size_t name_len, double timeout_s,
                  sqlq__lockstate **out) {
  (void)name;
  (void)name_len;
  postgres_db *p = PG(db);
  if (p->lock_conn && PQstatus(p->lock_conn) != CONNECTION_OK && db->locks == NULL) {
    PQfinish(p->lock_conn); /* lost, and held nothing: open a new one */
    p->lock_conn = NULL;
  }
  if (p->lock_conn == NULL && (p->lock_conn = sqlq__pg_connect(db)) == NULL) return db->errcode;
  sqlq__lockstate *ls = malloc(sizeof *ls);
  if (ls == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  ls->key = (int64_t)key;
  int got = 0, rc;
  if (timeout_s == 0) {
    rc = run_key(db, "SELECT pg_try_advisory_lock($1::int8)", ls->key, &got);
  } else {
    rc = set_timeout(db, timeout_s < 0 ? 0 : timeout_s);
    if (rc == SQLQ_OK) {
      rc = run_key(db, "SELECT pg_advisory_lock($1::int8)", ls->key, NULL);
      got = rc == SQLQ_OK;
      if (rc == SQLQ_BUSY) rc = SQLQ_OK;
      int trc = set_timeout(db, 0);
      if (rc == SQLQ_OK) rc = trc;
    }
  }
  if (rc == SQLQ_OK && !got)
    rc = sqlq__error(db, SQLQ_BUSY, "the lock is held by another session%s",
                     timeout_s > 0 ? " (timed out)" : "");
  if (rc != SQLQ_OK) {
    if (got) run_key(db, "SELECT pg_advisory_unlock($1::int8)", ls->key, NULL);
    free(ls);
    return rc;
  }
  *out = ls;
  return SQLQ_OK;
}

void sqlq__pg_unlock(sqlq_db *db, sqlq__lockstate *ls) {
  postgres_db *p = PG(db);
  /* A lost session has already lost its locks. */
  if (p->lock_conn && PQstatus(p->lock_conn) == CONNECTION_OK) {
    int errcode = db->errcode;
    char errmsg[sizeof db->errmsg];
    memcpy(errmsg, db->errmsg, sizeof errmsg);
    run_key(db, "SELECT pg_advisory_unlock($1::int8)", ls->key, NULL);
    db->errcode = errcode;
    memcpy(db->errmsg, errmsg, sizeof errmsg);
  }
  free(ls);
}

/* Run sql on the main session, in the open transaction; *got receives a
** boolean result when got is not NULL.  A failure is recorded on db. */
static int run_in_tx(sqlq_db *db, const char *sql, int64_t key, int *got) {
  PGconn *conn = PG(db)->conn;
  char text[24];
  snprintf(text, sizeof text, "%lld", (long long)key);
  const char *params[1] = {text};
  PGresult *r = PQexecParams(conn, sql, key ? 1 : 0, NULL, key ? params : NULL, NULL, NULL, 0);
  ExecStatusType s = PQresultStatus(r);
  int rc = s == PGRES_TUPLES_OK || s == PGRES_COMMAND_OK ? SQLQ_OK : sqlq__pg_error(db, conn, r, "lock");
  if (rc == SQLQ_OK && got) *got = PQntuples(r) == 1 && strcmp(PQgetvalue(r, 0, 0), "t") == 0;
  PQclear(r);
  return rc;
}

/* The transaction's lock_timeout setting, as text. */
static int read_timeout(sqlq_db *db, char *out, size_t size) {
  PGconn *conn = PG(db)->conn;
  PGresult *r = PQexec(conn, "SELECT current_setting('lock_timeout')");
  int ok = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1;
  int rc = ok ? SQLQ_OK : sqlq__pg_error(db, conn, r, "lock");
  if (ok) snprintf(out, size, "%s", PQgetvalue(r, 0, 0));
  PQclear(r);
  return rc;
}

/* Set lock_timeout back to old for the rest of the transaction. */
static int restore_timeout(sqlq_db *db, const char *old) {
  PGconn *conn = PG(db)->conn;
  const char *params[1] = {old};
  PGresult *r = PQexecParams(conn, "SELECT set_config('lock_timeout', $1, true)", 1, NULL, params,
                             NULL, NULL, 0);
  int rc = PQresultStatus(r) == PGRES_TUPLES_OK ? SQLQ_OK : sqlq__pg_error(db, conn, r, "lock");
  PQclear(r);
  return rc;
}

int sqlq__pg_lock_xact(sqlq_db *db, uint64_t key, const void *name, size_t name_len,
                       double timeout_s) {
  (void)name;
  (void)name_len;
  int64_t k = (int64_t)key;
  int got = 0, rc = sqlq__pg_begin_now(db);
  if (rc != SQLQ_OK) return rc;
  if (timeout_s == 0) {
    rc = run_in_tx(db, "SELECT pg_try_advisory_xact_lock($1::int8)", k, &got);
  } else {
    char set[96];
    long long ms = timeout_s > 0 ? (long long)(timeout_s * 1000 + 0.5) : 0;
    if (timeout_s > 0 && ms < 1) ms = 1;
    if (ms > 2147483647LL) ms = 0;
    snprintf(set, sizeof set, "SELECT set_config('lock_timeout', '%lld', true)", ms);
    char old[64] = "0";
    rc = read_timeout(db, old, sizeof old);
    if (rc == SQLQ_OK) rc = run_in_tx(db, "SAVEPOINT sqlq_lock", 0, NULL);
    if (rc == SQLQ_OK) rc = run_in_tx(db, set, 0, NULL);
    if (rc == SQLQ_OK) rc = run_in_tx(db, "SELECT pg_advisory_xact_lock($1::int8)", k, NULL);
    got = rc == SQLQ_OK;
    /* Keep the lock, drop the setting: roll back to the savepoint only
    ** when the lock was not had, else reset the setting and release it. */
    int errcode = db->errcode;
    char errmsg[sizeof db->errmsg];
    memcpy(errmsg, db->errmsg, sizeof errmsg);
    int undo = got ? restore_timeout(db, old) : run_in_tx(db, "ROLLBACK TO SAVEPOINT sqlq_lock", 0, NULL);
    if (undo == SQLQ_OK) undo = run_in_tx(db, "RELEASE SAVEPOINT sqlq_lock", 0, NULL);
    if (!got) {
      db->errcode = errcode;
      memcpy(db->errmsg, errmsg, sizeof errmsg);
    }
    if (rc == SQLQ_BUSY) rc = SQLQ_OK;
    if (rc == SQLQ_OK && undo != SQLQ_OK) rc = undo;
  }
  if (rc == SQLQ_OK && !got)
    rc = sqlq__error(db, SQLQ_BUSY, "the lock is held by another session%s",
                     timeout_s > 0 ? " (timed out)" : "");
  return rc;
}
