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
** The lock session is kept alive and watched (docs/postgres.md): it turns
** off the server's idle_session_timeout, idle_in_transaction_session_timeout
** and statement_timeout for itself, has TCP keepalives on both ends (the
** handle's, postgres.c, where the URL's own keepalive options win; the
** server's, set for the session).  Only the end of the session releases its locks
** (nothing else in it unlocks), so a lock is held while the session that
** took it answers: the check is one round trip on it, "SELECT 1", with a
** deadline (libpq's asynchronous calls and poll()).  A session that does
** not answer in time is closed, and its locks are lost.
**
** Transaction locks (sqlq_lock_xact) are pg_advisory_xact_lock() in the
** caller's transaction, so they work through transaction pooling.  A timed
** wait runs inside a savepoint with a local lock_timeout: a timeout rolls
** back to the savepoint (undoing the setting too) and leaves the
** transaction usable.
*/
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "postgres_int.h"

#define TEXT(n) #n
#define NUMBER(n) TEXT(n)

struct sqlq__lockstate {
  int64_t key;
  unsigned session; /* the lock session it was taken on (lock_session) */
};

/* Server settings that would end an idle lock session (with its locks) or
** a long wait for a lock, turned off for the lock session where the
** server has them; and the server's own TCP keepalives on the session,
** sqlq__keepalive's values, so that the server ends the session of a
** holder cut off by the network, and frees its locks, about 40 s after it
** last heard from it (instead of its system's default of over 2 hours),
** which is well after the holder's checks stopped its command (docs/scale.md). */
static const char no_timeouts_sql[] =
  "SELECT set_config(name, CASE name WHEN 'tcp_keepalives_idle' THEN '" NUMBER(SQLQ__KEEPIDLE_S) "' WHEN 'tcp_keepalives_interval' THEN '" NUMBER(
    SQLQ__KEEPINTVL_S) "' WHEN 'tcp_keepalives_count' THEN '" NUMBER(SQLQ__KEEPCNT) "' WHEN 'tcp_user_timeout' THEN '" NUMBER(SQLQ__USER_TIMEOUT_MS) "' ELSE '0' END, false) FROM pg_settings WHERE name IN"
                                                                                                                                                     " ('idle_session_timeout', 'idle_in_transaction_session_timeout', 'statement_timeout',"
                                                                                                                                                     " 'tcp_keepalives_idle', 'tcp_keepalives_interval', 'tcp_keepalives_count', 'tcp_user_timeout')";

/* Run sql on conn with one text parameter $1 (none when param is NULL).
** When out is not NULL it receives the first column of the first row
** ("t" or "f" for a boolean; empty when there is none).  A failure is
** recorded on db. */
static int run(sqlq_db *db, PGconn *conn, const char *sql, const char *param, char *out,
               size_t out_size) {
  PGresult *r = PQexecParams(conn, sql, param ? 1 : 0, NULL, param ? &param : NULL, NULL, NULL, 0);
  ExecStatusType s = PQresultStatus(r);
  int rc =
    s == PGRES_TUPLES_OK || s == PGRES_COMMAND_OK ? SQLQ_OK : sqlq__pg_error(db, conn, r, "lock");
  if (rc == SQLQ_OK && out)
    snprintf(out, out_size, "%s", PQntuples(r) == 1 ? PQgetvalue(r, 0, 0) : "");
  PQclear(r);
  return rc;
}

/* Take or try a lock: run sql with the key; *got says whether the lock is
** had (a boolean result of "t", or, when the result is not a boolean, the
** statement's success). */
static int run_lock(sqlq_db *db, PGconn *conn, const char *sql, int64_t key, int *got) {
  char text[24], result[8];
  snprintf(text, sizeof text, "%lld", (long long)key);
  int rc = run(db, conn, sql, text, result, sizeof result);
  *got = rc == SQLQ_OK && (result[0] == '\0' || strcmp(result, "t") == 0);
  return rc;
}

/* lock_timeout for a wait of timeout_s seconds, in milliseconds as text:
** 0 (no limit) for a negative timeout or one beyond the setting's range
** (24 days).  The range is checked before any conversion to an integer. */
static void timeout_text(double timeout_s, char *out, size_t size) {
  double ms = timeout_s > 0 ? timeout_s * 1000 + 0.5 : 0;
  if (ms > 2147483647.0)
    ms = 0;
  else if (timeout_s > 0 && ms < 1)
    ms = 1;
  snprintf(out, size, "%lld", (long long)ms);
}

/* Set lock_timeout on the lock session. */
static int set_timeout(sqlq_db *db, double timeout_s) {
  char ms[24];
  timeout_text(timeout_s, ms, sizeof ms);
  return run(db, PG(db)->lock_conn, "SELECT set_config('lock_timeout', $1, false)", ms, NULL, 0);
}

/* Open the lock session, on db's parameters (with their TCP keepalives),
** and run no_timeouts_sql on it. */
static int open_session(sqlq_db *db) {
  postgres_db *p = PG(db);
  p->lock_conn = sqlq__pg_connect(db);
  if (p->lock_conn == NULL) return db->errcode;
  p->lock_session++;
  int rc = run(db, p->lock_conn, no_timeouts_sql, NULL, NULL, 0);
  if (rc != SQLQ_OK) {
    PQfinish(p->lock_conn);
    p->lock_conn = NULL;
  }
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
  int rc = p->lock_conn ? SQLQ_OK : open_session(db);
  if (rc != SQLQ_OK) return rc;
  sqlq__lockstate *ls = malloc(sizeof *ls);
  if (ls == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  ls->key = (int64_t)key;
  ls->session = p->lock_session;
  int got = 0;
  if (timeout_s == 0) {
    rc = run_lock(db, p->lock_conn, "SELECT pg_try_advisory_lock($1::int8)", ls->key, &got);
  } else {
    rc = set_timeout(db, timeout_s < 0 ? 0 : timeout_s);
    if (rc == SQLQ_OK) {
      rc = run_lock(db, p->lock_conn, "SELECT pg_advisory_lock($1::int8)", ls->key, &got);
      if (rc == SQLQ_BUSY) rc = SQLQ_OK;
      int trc = set_timeout(db, 0);
      if (rc == SQLQ_OK) rc = trc;
    }
  }
  if (rc == SQLQ_OK && !got)
    rc = sqlq__error(db, SQLQ_BUSY, "the lock is held by another session%s",
                     timeout_s > 0 ? " (timed out)" : "");
  if (rc != SQLQ_OK) {
    if (got) run_lock(db, p->lock_conn, "SELECT pg_advisory_unlock($1::int8)", ls->key, &got);
    free(ls);
    return rc;
  }
  *out = ls;
  return SQLQ_OK;
}

/* Read the next result of c into *r (NULL: none left), waiting for it
** until deadline_ns.  0 when it did not come in time or c broke. */
static int next_result(PGconn *c, int64_t deadline_ns, PGresult **r) {
  while (PQisBusy(c)) {
    struct pollfd fd = {PQsocket(c), POLLIN, 0};
    if (fd.fd < 0 || sqlq__monotonic_ns() >= deadline_ns) return 0;
    if (poll(&fd, 1, sqlq__poll_ms(deadline_ns)) < 0 && errno != EINTR) return 0;
    if (!PQconsumeInput(c)) return 0;
  }
  *r = PQgetResult(c);
  return 1;
}

int sqlq__pg_lock_check(sqlq_db *db, sqlq__lockstate *ls, int64_t deadline_ns) {
  postgres_db *p = PG(db);
  PGconn *c = p->lock_conn;
  if (c == NULL || ls->session != p->lock_session)
    return sqlq__error(db, SQLQ_LOCK_LOST, "postgres: the lock's session was closed");
  int state = PQstatus(c) == CONNECTION_OK && PQsendQuery(c, "SELECT 1") ? SQLQ_OK : SQLQ_ERROR;
  PGresult *r = NULL;
  while (state == SQLQ_OK) {
    if (!next_result(c, deadline_ns, &r)) {
      state = PQstatus(c) == CONNECTION_OK ? SQLQ_TIMEOUT : SQLQ_ERROR;
    } else if (r == NULL) {
      return SQLQ_OK;
    } else if (PQresultStatus(r) != PGRES_TUPLES_OK) {
      state = SQLQ_ERROR;
      sqlq__pg_error(db, c, r, "the lock check");
    }
    PQclear(r);
    r = NULL;
  }
  /* The session ended, refused, or gave no answer: close it, dropping
  ** whatever it may still hold. */
  char why[SQLQ__ERRMSG_SIZE] = "postgres: the lock's session gave no answer in time (closed it)";
  if (state == SQLQ_ERROR) {
    if (db->errcode == SQLQ_OK) sqlq__pg_error(db, c, NULL, "the lock check");
    snprintf(why, sizeof why, "%s", db->errmsg);
  }
  PQfinish(c);
  p->lock_conn = NULL;
  return sqlq__error(db, SQLQ_LOCK_LOST, "%s", why);
}

void sqlq__pg_unlock(sqlq_db *db, sqlq__lockstate *ls) {
  postgres_db *p = PG(db);
  /* A lost session has already lost its locks; a later session holds
  ** locks of its own, maybe on the same key. */
  if (p->lock_conn && ls->session == p->lock_session && PQstatus(p->lock_conn) == CONNECTION_OK) {
    sqlq__saved_error saved;
    int released;
    sqlq__save_error(db, &saved);
    run_lock(db, p->lock_conn, "SELECT pg_advisory_unlock($1::int8)", ls->key, &released);
    sqlq__restore_error(db, &saved);
  }
  free(ls);
}

int sqlq__pg_lock_xact(sqlq_db *db, uint64_t key, const void *name, size_t name_len,
                       double timeout_s) {
  (void)name;
  (void)name_len;
  int64_t k = (int64_t)key;
  int got = 0, rc = sqlq__pg_begin_now(db);
  if (rc != SQLQ_OK) return rc;
  PGconn *conn = sqlq__pg_conn(db);
  if (timeout_s == 0) {
    rc = run_lock(db, conn, "SELECT pg_try_advisory_xact_lock($1::int8)", k, &got);
  } else {
    char old[64] = "0", ms[24];
    timeout_text(timeout_s, ms, sizeof ms);
    rc = run(db, conn, "SELECT current_setting('lock_timeout')", NULL, old, sizeof old);
    if (rc == SQLQ_OK) rc = run(db, conn, "SAVEPOINT sqlq_lock", NULL, NULL, 0);
    if (rc == SQLQ_OK)
      rc = run(db, conn, "SELECT set_config('lock_timeout', $1, true)", ms, NULL, 0);
    if (rc == SQLQ_OK) rc = run_lock(db, conn, "SELECT pg_advisory_xact_lock($1::int8)", k, &got);
    /* Keep the lock, drop the setting: roll back to the savepoint only
    ** when the lock was not had, else put the setting back; then release
    ** the savepoint. */
    sqlq__saved_error saved;
    sqlq__save_error(db, &saved);
    int undo = got ? run(db, conn, "SELECT set_config('lock_timeout', $1, true)", old, NULL, 0)
                   : run(db, conn, "ROLLBACK TO SAVEPOINT sqlq_lock", NULL, NULL, 0);
    if (undo == SQLQ_OK) undo = run(db, conn, "RELEASE SAVEPOINT sqlq_lock", NULL, NULL, 0);
    if (!got) sqlq__restore_error(db, &saved);
    if (rc == SQLQ_BUSY) rc = SQLQ_OK;
    if (rc == SQLQ_OK && undo != SQLQ_OK) rc = undo;
  }
  if (rc == SQLQ_OK && !got)
    rc = sqlq__error(db, SQLQ_BUSY, "the lock is held by another session%s",
                     timeout_s > 0 ? " (timed out)" : "");
  return rc;
}
