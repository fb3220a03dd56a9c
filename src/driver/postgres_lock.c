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
