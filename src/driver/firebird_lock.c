/*
** firebird_lock.c -- named locks of the Firebird driver: a row of
** sqlq_locks, held locked by a transaction of its own.
**
** A lock is the row of sqlq_locks whose lock_key is the name's 64-bit key
** (the core's FNV-1a hash, cast to signed).  Taking it is an UPDATE of the
** row (lock_key = lock_key), which holds the row's write lock until the
** transaction ends; unlocking rolls that transaction back.  Every lock has
** a transaction of its own on an attachment of the handle dedicated to
** locks (opened at the first lock, detached by sqlq__fb_forget_locks), so
** that a lock is never taken or waited for inside the caller's
** transaction, and a timeout never disturbs it.  The server rolls back the
** transactions of an attachment that dies, so a holder that dies (kill -9)
** loses its locks.  A row missing at the first use of a name is made by an
** INSERT in a short transaction of its own, committed at once; a duplicate
** from a concurrent maker is as good.  Holders never commit, so rows are
** never changed and no lock waits for anything but a holder.  The two
** statements run with isc_dsql_exec_immed2 on the lock attachment (the
** statement cache of firebird_stmt.c belongs to the main attachment).
**
** Waiting (docs/firebird.md has the figures):
** - timeout 0: a NO WAIT transaction, one try.
** - timeout < 0: a WAIT transaction without a lock timeout; the server
**   hands the row over when its holder rolls back.  A conflict then can
**   only be the lock manager's deadlock detection (after its
**   DeadlockTimeout, 10 s by default), e.g. a handle waiting for a lock it
**   holds itself: SQLQ_BUSY.
** - timeout > 0: Firebird's lock timeout counts whole seconds of the wall
**   clock: LOCK TIMEOUT n gives up at the n-th change of second, after
**   n - 1 to n seconds, with the same update conflict that a holder's commit
**   gives.  So the wait runs in rounds of LOCK TIMEOUT n, n the whole
**   seconds left (never past the deadline), and the last fraction of a
**   second in NO WAIT tries with sleeps growing from 1 ms to 50 ms; a
**   conflict before the deadline means try again.
** Like the MySQL and PostgreSQL drivers' lock waits, a wait is not cut
** short by sqlq_interrupt().
**
** Watching (docs/firebird.md): a lock is held while its transaction lives,
** and the transaction lives while the lock attachment does.  The check asks
** the server about the transaction (isc_transaction_info, one round trip),
** which fails once the attachment is gone (the server restarted, the
** attachment was deleted from MON$ATTACHMENTS).  The client library has no
** call with a deadline, so a watchdog thread shuts the attachment's socket
** down (shutdown(), on a descriptor of the driver's own) when the answer
** has not come by the deadline: the call then fails at once, and the
** attachment and its locks are lost.  The socket has TCP keepalives.
** Firebird 3 has no idle timeout; Firebird 4's ConnectionIdleTimeout is
** the server's, and a session can only lower it.  An embedded database
** (no socket) is checked without a watchdog.
*/
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "firebird_int.h"

/* Sleeps between the NO WAIT tries of a timed wait's last second. */
#define POLL_FIRST_NS 1000000
#define POLL_MAX_NS 50000000

struct sqlq__lockstate {
  isc_tr_handle tr; /* the lock attachment's transaction that holds the row */
  unsigned session; /* the lock attachment it was taken on (lock_session) */
};

/* Takes the row's write lock, returning its key when the row is there
** (NULL when it is not: see firebird_stmt.c on RETURNING). */
static const char take_sql[] =
  "UPDATE sqlq_locks SET lock_key = lock_key WHERE lock_key = ? RETURNING lock_key";
static const char make_sql[] = "INSERT INTO sqlq_locks (lock_key) VALUES (?)";

/* Run sql, whose one parameter is key, in tr on the lock attachment; with
** found not NULL, sql returns the key, and *found says whether a row
** matched.  Returns 0, or non-zero with the error in st. */
static ISC_STATUS run_key(fb_db *f, isc_tr_handle *tr, const char *sql, int64_t key, int *found,
                          ISC_STATUS *st) {
  union {
    XSQLDA da;
    char room[XSQLDA_LENGTH(1)];
  } in = {0}, out = {0};
  short in_ind = 0, out_ind = -1;
  int64_t got = 0;
  in.da.version = out.da.version = SQLDA_VERSION1;
  in.da.sqln = in.da.sqld = out.da.sqln = out.da.sqld = 1;
  in.da.sqlvar[0] =
    (XSQLVAR){.sqltype = SQL_INT64 | 1, .sqllen = 8, .sqldata = (char *)&key, .sqlind = &in_ind};
  out.da.sqlvar[0] =
    (XSQLVAR){.sqltype = SQL_INT64 | 1, .sqllen = 8, .sqldata = (char *)&got, .sqlind = &out_ind};
  if (isc_dsql_exec_immed2(st, &f->lock_att, tr, 0, sql, 3, &in.da, found ? &out.da : NULL))
    return st[1];
  if (found) *found = out_ind == 0;
  return 0;
}

/* Record the error in st on db, unless it is a lock conflict (SQLQ_BUSY,
** nothing recorded). */
static int failed(sqlq_db *db, const ISC_STATUS *st, const char *doing) {
  return sqlq__fb_conflict(st) ? SQLQ_BUSY : sqlq__fb_error(db, st, doing);
}

/* take_row's answer when the row is missing and another maker's row is
** not committed yet: try again shortly. */
#define NOT_YET (-1)

/* Make the row of key, in a transaction of its own waiting as wait_s does
** (sqlq__fb_start) for a concurrent maker's uncommitted row.  A duplicate
** key is fine: a concurrent maker's row, committed or not (an INSERT that
** does not wait, or stops waiting, for an uncommitted duplicate fails with
** the same unique-key violation as for a committed one). */
static int make_row(sqlq_db *db, double wait_s, int64_t key) {
  fb_db *f = FB(db);
  isc_tr_handle tr;
  ISC_STATUS_ARRAY st, st2;
  int rc = sqlq__fb_start(db, &f->lock_att, wait_s, &tr);
  if (rc != SQLQ_OK) return rc;
  if (run_key(f, &tr, make_sql, key, NULL, st) == 0 && isc_commit_transaction(st, &tr) == 0)
    return SQLQ_OK;
  int dupe = sqlq__fb_has(st, isc_unique_key_violation) || sqlq__fb_has(st, isc_no_dup);
  rc = dupe ? SQLQ_OK : failed(db, st, "cannot make the lock's row");
  if (tr) isc_rollback_transaction(st2, &tr);
  return rc;
}

/* Try to take the row of key in tr, whose waiting is wait_s, making the
** row first when it is missing: SQLQ_OK when held, SQLQ_BUSY on a
** conflict, NOT_YET when the row is still missing after the making (both
** with nothing recorded), or an error recorded on db. */
static int take_row(sqlq_db *db, isc_tr_handle *tr, double wait_s, int64_t key) {
  fb_db *f = FB(db);
  ISC_STATUS_ARRAY st;
  int found = 0;
  for (int made = 0; !found; made++) {
    if (made == 2) return NOT_YET;
    int rc = made ? make_row(db, wait_s, key) : SQLQ_OK;
    if (rc == SQLQ_OK && run_key(f, tr, take_sql, key, &found, st))
      rc = failed(db, st, "cannot take the lock");
    if (rc != SQLQ_OK) return rc;
  }
  return SQLQ_OK;
}

/* Sleep ns nanoseconds. */
static void nap(int64_t ns) {
  struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
  while (nanosleep(&ts, &ts) != 0) {}
}

/* Take the row of key in *tr (started here), waiting as the file's header
** says. */
static int take(sqlq_db *db, int64_t key, double timeout_s, isc_tr_handle *tr) {
  fb_db *f = FB(db);
  int64_t deadline = timeout_s > 0 ? sqlq__monotonic_after(timeout_s) : 0;
  int64_t pause = POLL_FIRST_NS;
  double tr_wait = 0;
  ISC_STATUS_ARRAY st;
  for (;;) {
    int64_t left = deadline - sqlq__monotonic_ns();
    double wait = timeout_s <= 0 ? timeout_s : (double)(left / 1000000000);
    if (*tr && wait != tr_wait) isc_rollback_transaction(st, tr);
    if (*tr == 0) {
      int rc = sqlq__fb_start(db, &f->lock_att, wait, tr);
      if (rc != SQLQ_OK) return rc;
      tr_wait = wait;
    }
    int rc = take_row(db, tr, wait, key);
    if (rc != SQLQ_BUSY && rc != NOT_YET) return rc;
    /* Tried once; or, waiting for ever, a deadlock. */
    if (timeout_s == 0 || (timeout_s < 0 && rc == SQLQ_BUSY)) return SQLQ_BUSY;
    if (timeout_s > 0 && (left = deadline - sqlq__monotonic_ns()) <= 0) return SQLQ_BUSY;
    if (wait == 0 || rc == NOT_YET) {
      nap(timeout_s > 0 && left < pause ? left : pause);
      if ((pause *= 2) > POLL_MAX_NS) pause = POLL_MAX_NS;
    }
  }
}

/* Make the lock attachment, keeping a descriptor of its socket with TCP
** keepalives. */
static int attach_locks(sqlq_db *db) {
  fb_db *f = FB(db);
  sqlq__fb_fds before;
  sqlq__fb_fds_note(&before);
  int rc = sqlq__fb_attach(db, &f->lock_att);
  f->lock_sock = sqlq__fb_fds_new_socket(&before);
  if (f->lock_sock >= 0) sqlq__keepalive(f->lock_sock);
  f->lock_session++;
  return rc;
}

int sqlq__fb_lock(sqlq_db *db, uint64_t key, const void *name, size_t name_len, double timeout_s,
                  sqlq__lockstate **out) {
  (void)name;
  (void)name_len;
  fb_db *f = FB(db);
  *out = NULL;
  sqlq__lockstate *ls = calloc(1, sizeof *ls);
  if (ls == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  int rc = f->lock_att ? SQLQ_OK : attach_locks(db);
  ls->session = f->lock_session;
  if (rc == SQLQ_OK) rc = take(db, (int64_t)key, timeout_s, &ls->tr);
  if (rc == SQLQ_OK) {
    f->locks_held++;
    *out = ls;
    return SQLQ_OK;
  }
  ISC_STATUS_ARRAY st;
  if (ls->tr) isc_rollback_transaction(st, &ls->tr);
  free(ls);
  if (rc == SQLQ_BUSY && timeout_s < 0)
    return sqlq__error(db, SQLQ_BUSY, "lock not taken: waiting for it would deadlock");
  if (rc == SQLQ_BUSY)
    return sqlq__error(db, SQLQ_BUSY, "the lock is held by another holder%s",
                       timeout_s > 0 ? " (timed out)" : "");
  /* A lost lock attachment that holds nothing is attached afresh next time. */
  if (rc == SQLQ_UNAVAILABLE && f->locks_held == 0) sqlq__fb_forget_locks(db);
  return rc;
}

/* A thread that shuts sock down at deadline_ns unless stopped before. */
typedef struct watchdog {
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cond;
  int sock;
  int64_t deadline_ns;
  int stop;  /* set by the caller */
  int fired; /* set by the thread */
} watchdog;

static void *watch(void *arg) {
  watchdog *w = arg;
  pthread_mutex_lock(&w->mu);
  while (!w->stop) {
    int64_t now = sqlq__monotonic_ns();
    if (now >= w->deadline_ns) {
      shutdown(w->sock, SHUT_RDWR);
      w->fired = 1;
      break;
    }
    struct timespec until = {(time_t)(w->deadline_ns / 1000000000),
                             (long)(w->deadline_ns % 1000000000)};
    pthread_cond_timedwait(&w->cond, &w->mu, &until);
  }
  pthread_mutex_unlock(&w->mu);
  return NULL;
}

/* Start w on sock; 0 when the thread cannot be made (errno set). */
static int watchdog_start(watchdog *w, int sock, int64_t deadline_ns) {
  pthread_condattr_t attr;
  w->sock = sock;
  w->deadline_ns = deadline_ns;
  w->stop = w->fired = 0;
  pthread_mutex_init(&w->mu, NULL);
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(&w->cond, &attr);
  pthread_condattr_destroy(&attr);
  int e = pthread_create(&w->thread, NULL, watch, w);
  if (e == 0) return 1;
  pthread_cond_destroy(&w->cond);
  pthread_mutex_destroy(&w->mu);
  errno = e;
  return 0;
}

/* Stop w and return whether it fired. */
static int watchdog_stop(watchdog *w) {
  pthread_mutex_lock(&w->mu);
  w->stop = 1;
  pthread_cond_signal(&w->cond);
  pthread_mutex_unlock(&w->mu);
  pthread_join(w->thread, NULL);
  pthread_cond_destroy(&w->cond);
  pthread_mutex_destroy(&w->mu);
  return w->fired;
}

/* Whether the server still knows tr, asked by deadline_ns when the lock
** attachment has a socket.  Returns SQLQ_OK, or records on db why not:
** SQLQ_UNAVAILABLE when the attachment is gone or did not answer. */
static int ask_server(sqlq_db *db, isc_tr_handle *tr, int64_t deadline_ns) {
  static const char items[] = {isc_info_tra_id, isc_info_end};
  fb_db *f = FB(db);
  char answer[32];
  ISC_STATUS_ARRAY st;
  watchdog w;
  if (f->lock_sock >= 0 && !watchdog_start(&w, f->lock_sock, deadline_ns))
    return sqlq__error(db, SQLQ_UNAVAILABLE, "firebird: cannot watch the lock check: %s",
                       strerror(errno));
  int failed = isc_transaction_info(st, tr, sizeof items, items, sizeof answer, answer) != 0;
  if (f->lock_sock >= 0 && watchdog_stop(&w))
    return sqlq__error(db, SQLQ_UNAVAILABLE,
                       "firebird: the lock's attachment gave no answer in time (closed it)");
  return failed ? sqlq__fb_error(db, st, "firebird: the lock's transaction is gone") : SQLQ_OK;
}

int sqlq__fb_lock_check(sqlq_db *db, sqlq__lockstate *ls, int64_t deadline_ns) {
  fb_db *f = FB(db);
  if (f->lock_att == 0 || ls->session != f->lock_session)
    return sqlq__error(db, SQLQ_LOCK_LOST, "firebird: the lock's attachment was closed");
  int rc = ask_server(db, &ls->tr, deadline_ns);
  if (rc == SQLQ_OK) return SQLQ_OK;
  /* The attachment ended, refused, or gave no answer: drop it, with
  ** whatever it may still hold. */
  char why[SQLQ__ERRMSG_SIZE];
  snprintf(why, sizeof why, "%s", db->errmsg);
  ISC_STATUS_ARRAY st;
  isc_rollback_transaction(st, &ls->tr);
  if (f->lock_sock >= 0) shutdown(f->lock_sock, SHUT_RDWR);
  sqlq__fb_forget_locks(db);
  return sqlq__error(db, SQLQ_LOCK_LOST, "%s", why);
}

void sqlq__fb_unlock(sqlq_db *db, sqlq__lockstate *ls) {
  fb_db *f = FB(db);
  ISC_STATUS_ARRAY st;
  /* On a lost attachment the rollback fails: the server has rolled back.
  ** A lock of an attachment dropped since is left alone. */
  if (ls->tr && ls->session == f->lock_session) isc_rollback_transaction(st, &ls->tr);
  f->locks_held--;
  free(ls);
}

void sqlq__fb_forget_locks(sqlq_db *db) {
  fb_db *f = FB(db);
  ISC_STATUS_ARRAY st;
  if (f->lock_att) isc_detach_database(st, &f->lock_att);
  f->lock_att = 0; /* a lost attachment fails to detach: forget it */
  if (f->lock_sock >= 0) close(f->lock_sock);
  f->lock_sock = -1;
}
