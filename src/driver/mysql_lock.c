/*
** mysql_lock.c -- named locks with GET_LOCK, on a second session.
**
** The locks live on a session of their own (opened on first use), so that
** taking or waiting for one never runs inside, or disturbs, the caller's
** transaction on the main session.  A lock is released by RELEASE_LOCK, or
** by the server when the session ends (the holder died).
**
** Names: MySQL compares lock names without regard to case and takes at
** most 64 characters; MariaDB compares them byte for byte and takes more.
** So that a name means the same lock on both, a name of 1 to 64 bytes of
** printable ASCII without capital letters is used as it is (another
** program can GET_LOCK it too); any other name, and any name beginning with
** "sqlq" (the driver's own locks), becomes "sqlq:" and the 16 hex digits
** of its 64-bit key (the core's FNV-1a hash).  Names that differ only in case thus stay distinct
** locks on both servers.
**
** Timeouts: MariaDB waits fractions of a second; MySQL truncates the
** timeout to whole seconds.  GET_LOCK is never given a negative timeout
** nor a huge one (MariaDB answers NULL to both): a wait for ever, or
** longer than an hour, waits in rounds of at most an hour.  A
** deadlock between lock waits (MySQL's 3058, InnoDB's 1213) is SQLQ_BUSY.
**
** The second session is kept alive and watched (docs/mysql.md): its
** wait_timeout and interactive_timeout are a year, the most the server
** takes, its socket has TCP keepalives, and the client never reconnects it
** by itself (MYSQL_OPT_RECONNECT is off: a silent reconnect would lose
** its locks unseen).  Only the end of the session releases its locks
** (nothing else in it releases them all), so a lock is held while the
** session that took it answers: the check is one round trip on it,
** "SELECT 1", sent and awaited with a deadline (mysql_send_query(),
** poll()).  A session that does not answer in time is closed, and its
** locks are lost.
*/
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mysql_int.h"

#define NAME_MAX_PLAIN 64
#define FOREVER_ROUND_S 3600.0

struct sqlq__lockstate {
  char name[NAME_MAX_PLAIN + 1];
  unsigned session; /* the second session it was taken on (aux_session) */
};

/* The second session's idle timeouts, which would end it and drop its
** locks: a year, the most the server takes. */
static const char keep_alive_sql[] =
  "SET SESSION wait_timeout = 31536000, interactive_timeout = 31536000";

/* The name GET_LOCK is given for a lock (see above). */
static void lock_name(uint64_t key, const unsigned char *name, size_t len, char *out) {
  int plain = len <= NAME_MAX_PLAIN && !(len >= 4 && memcmp(name, "sqlq", 4) == 0);
  for (size_t i = 0; plain && i < len; i++)
    if (name[i] < 0x20 || name[i] > 0x7e || (name[i] >= 'A' && name[i] <= 'Z')) plain = 0;
  if (plain) {
    memcpy(out, name, len);
    out[len] = '\0';
  } else {
    snprintf(out, NAME_MAX_PLAIN + 1, "sqlq:%016llx", (unsigned long long)key);
  }
}

MYSQL *sqlq__my_aux(sqlq_db *db) {
  mysql_db *m = MY(db);
  if (m->aux) return m->aux;
  MYSQL *aux = sqlq__my_connect(db);
  if (aux && mysql_query(aux, keep_alive_sql) != 0) {
    sqlq__error(db, SQLQ_UNAVAILABLE, "mysql: cannot set up the second session on %s: %s",
                db->url_redacted, mysql_error(aux));
    mysql_close(aux);
    aux = NULL;
  }
  if (aux == NULL) return NULL;
  m->aux_session++;
  return m->aux = aux;
}

void sqlq__my_check_aux(mysql_db *m) {
  if (m->aux && mysql_errno(m->aux) >= 2000 && mysql_errno(m->aux) < 3000) {
    mysql_close(m->aux);
    m->aux = NULL;
    m->block_held = 0;
  }
}

int sqlq__my_run_on_aux(sqlq_db *db, MYSQL *aux, const char *sql, const char *name, double *seconds,
                        long long *v) {
  MYSQL_BIND in[2], out;
  memset(in, 0, sizeof in);
  memset(&out, 0, sizeof out);
  unsigned long len = (unsigned long)strlen(name);
  in[0].buffer_type = MYSQL_TYPE_STRING;
  in[0].buffer = (void *)name;
  in[0].buffer_length = len;
  in[0].length = &len;
  in[1].buffer_type = MYSQL_TYPE_DOUBLE;
  in[1].buffer = seconds;
  my_bool is_null = 0;
  out.buffer_type = MYSQL_TYPE_LONGLONG;
  out.buffer = v;
  out.is_null = &is_null;
  MYSQL_STMT *st = mysql_stmt_init(aux);
  int rc = SQLQ_OK;
  if (st == NULL || mysql_stmt_prepare(st, sql, (unsigned long)strlen(sql)) != 0 ||
      mysql_stmt_bind_param(st, in) || mysql_stmt_execute(st) != 0 ||
      (v && (mysql_stmt_bind_result(st, &out) || mysql_stmt_fetch(st) == 1)))
    rc = sqlq__my_error(db, aux, st, v ? "GET_LOCK" : "RELEASE_LOCK");
  if (st) mysql_stmt_close(st);
  if (rc == SQLQ_OK && v && is_null) *v = -1;
  return rc;
}

/* The GET_LOCK timeout of the next round of a wait for ever (timeout_s <
** 0), once (0), or until deadline_ns: at most an hour. */
static double round_seconds(double timeout_s, int64_t deadline_ns) {
  if (timeout_s < 0) return FOREVER_ROUND_S;
  double left = timeout_s > 0 ? (double)(deadline_ns - sqlq__monotonic_ns()) / 1e9 : 0;
  return left < 0 ? 0 : left > FOREVER_ROUND_S ? FOREVER_ROUND_S : left;
}

int sqlq__my_lock(sqlq_db *db, uint64_t key, const void *name, size_t name_len, double timeout_s,
                  sqlq__lockstate **out) {
  mysql_db *m = MY(db);
  sqlq__lockstate *ls = calloc(1, sizeof *ls);
  if (ls == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  lock_name(key, name, name_len, ls->name);
  MYSQL *aux = sqlq__my_aux(db);
  ls->session = m->aux_session;
  int rc = aux ? sqlq__my_refuse_on_galera(db, aux, "named locks", GET_LOCK_LOCAL) : db->errcode,
      got = 0;
  int64_t deadline = sqlq__monotonic_after(timeout_s);
  while (rc == SQLQ_OK && !got) {
    double seconds = round_seconds(timeout_s, deadline);
    long long v = 0;
    rc = sqlq__my_run_on_aux(db, aux, "SELECT GET_LOCK(?, ?)", ls->name, &seconds, &v);
    if (rc == SQLQ_OK && v < 0) rc = sqlq__error(db, SQLQ_ERROR, "mysql: GET_LOCK answered NULL");
    got = v == 1;
    if (seconds < FOREVER_ROUND_S) break; /* the last round */
  }
  if (rc != SQLQ_OK) sqlq__my_check_aux(m);
  if (rc == SQLQ_BUSY) /* 1213 or 3058: waiting would deadlock */
    rc = sqlq__error(db, SQLQ_BUSY, "lock not taken: waiting for it would deadlock");
  if (rc == SQLQ_OK && !got) rc = sqlq__error(db, SQLQ_BUSY, "lock is held elsewhere");
  if (rc != SQLQ_OK) {
    free(ls);
    return rc;
  }
  *out = ls;
  return SQLQ_OK;
}

/* Wait until the answer to what was sent on aux is there, or until
** deadline_ns: 0 when it is not there by then. */
static int answer_by(MYSQL *aux, int64_t deadline_ns) {
  struct pollfd fd = {mysql_get_socket(aux), POLLIN, 0};
  for (;;) {
    int r = poll(&fd, 1, sqlq__poll_ms(deadline_ns));
    if (r > 0) return 1;
    if ((r == 0 || errno != EINTR) && sqlq__monotonic_ns() >= deadline_ns) return 0;
  }
}

int sqlq__my_lock_check(sqlq_db *db, sqlq__lockstate *ls, int64_t deadline_ns) {
  static const char sql[] = "SELECT 1";
  mysql_db *m = MY(db);
  MYSQL *aux = m->aux;
  if (aux == NULL || ls->session != m->aux_session)
    return sqlq__error(db, SQLQ_LOCK_LOST, "mysql: the lock's session was closed");
  int sent = mysql_send_query(aux, sql, sizeof sql - 1) == 0;
  int answered = sent && answer_by(aux, deadline_ns);
  if (answered && mysql_read_query_result(aux) == 0) {
    MYSQL_RES *res = mysql_store_result(aux);
    if (res) {
      mysql_free_result(res);
      return SQLQ_OK;
    }
  }
  /* The session ended, refused, or gave no answer: close it, dropping
  ** whatever it may still hold. */
  if (!sent || answered)
    sqlq__error(db, SQLQ_LOCK_LOST, "mysql: the lock's session ended: %s", mysql_error(aux));
  else
    sqlq__error(db, SQLQ_LOCK_LOST, "mysql: the lock's session gave no answer in time (closed it)");
  mysql_close(aux);
  m->aux = NULL;
  m->block_held = 0;
  return SQLQ_LOCK_LOST;
}

void sqlq__my_unlock(sqlq_db *db, sqlq__lockstate *ls) {
  mysql_db *m = MY(db);
  /* A lost session has already lost its locks; a later session holds
  ** locks of its own, maybe of the same name. */
  if (m->aux && ls->session == m->aux_session) {
    sqlq__saved_error saved;
    sqlq__save_error(db, &saved);
    if (sqlq__my_run_on_aux(db, m->aux, "DO RELEASE_LOCK(?)", ls->name, NULL, NULL) != SQLQ_OK)
      sqlq__my_check_aux(m);
    sqlq__restore_error(db, &saved);
  }
  free(ls);
}
