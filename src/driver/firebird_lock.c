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
*/
#include <stdlib.h>
#include <time.h>

#include "firebird_int.h"

/* Sleeps between the NO WAIT tries of a timed wait's last second. */
#define POLL_FIRST_NS 1000000
#define POLL_MAX_NS 50000000

struct sqlq__lockstate {
  isc_tr_handle tr; /* the lock attachment's transaction that holds the row */
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
  in.da.sqlvar[0] = (XSQLVAR){.sqltype = SQL_INT64 | 1, .sqllen = 8, .sqldata = (char *)&key,
                              .sqlind = &in_ind};
  out.da.sqlvar[0] = (XSQLVAR){.sqltype = SQL_INT64 | 1, .sqllen = 8, .sqldata = (char *)&got,
                               .sqlind = &out_ind};
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
  while (nanosleep(&ts, &ts) != 0) {
  }
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

int sqlq__fb_lock(sqlq_db *db, uint64_t key, const void *name, size_t name_len, double timeout_s,
                  sqlq__lockstate **out) {
  (void)name;
  (void)name_len;
  fb_db *f = FB(db);
  *out = NULL;
  sqlq__lockstate *ls = calloc(1, sizeof *ls);
  if (ls == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  int rc = f->lock_att ? SQLQ_OK : sqlq__fb_attach(db, &f->lock_att);
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

void sqlq__fb_unlock(sqlq_db *db, sqlq__lockstate *ls) {
  fb_db *f = FB(db);
  ISC_STATUS_ARRAY st;
  /* On a lost attachment the rollback fails: the server has rolled back. */
  if (ls->tr) isc_rollback_transaction(st, &ls->tr);
  f->locks_held--;
  free(ls);
}

void sqlq__fb_forget_locks(sqlq_db *db) {
  fb_db *f = FB(db);
  ISC_STATUS_ARRAY st;
  if (f->lock_att) isc_detach_database(st, &f->lock_att);
  f->lock_att = 0; /* a lost attachment fails to detach: forget it */
}
