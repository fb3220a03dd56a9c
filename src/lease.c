/*
** lease.c -- named locks as leases: rows of the database, for handles whose
** sessions cannot hold a lock (db->lease_locks: a transaction pooler
** between the handle and its server hands each transaction to whichever
** server session is free, so a session lock is taken on a session that
** other clients then use, and released by nobody).
**
** A lease is a row of the lock's 64-bit key (LEASE_TAKE): a holder token,
** a fence and the time its lease runs out, on the database's clock.  A
** holder takes the row when it is free or its lease has run out, with a
** fresh random token, and the row's fence grows by one at each taking; the
** holder renews its lease at each sqlq_lock_check (LEASE_RENEW, which
** changes the row only while it still has the holder's token: a lease
** taken over is never renewed) and frees it at sqlq_unlock (LEASE_RELEASE,
** likewise).  A holder that dies stops renewing: its lease runs out
** db->lock_lease_s seconds after its last renewal, and the next taker
** gets the lock then.  Nothing here depends on a session: every statement
** is one autocommit transaction, so it is correct through a transaction
** pool, and on a cluster whose writes are replicated before they commit.
**
** The statements run on a second handle of the same URL (the lease
** session, opened at the first lease), so that a lease's wait or renewal
** never runs in, or waits for, a transaction of the caller's.  A renewal
** is bounded by the check's deadline (db->call_deadline_ns, which a driver
** honours by closing a session that did not answer in time).
**
** What the holder must do: check (renew) more often than the lease, and
** stop the work the lock protects when a check fails, before the lease can
** run out.  `sqlq lock` checks every --check-interval seconds and stops
** its command within --check-timeout + --kill-after seconds of a failed
** check (docs/scale.md: the lease must be longer than the three).
** A waiter polls the row, every 10 ms at first, then less often, up to
** LEASE_POLL_MAX_NS apart.
*/
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sqlq_int.h"

/* The longest pause between two tries of a waiter. */
#define LEASE_POLL_MAX_NS 250000000LL

struct sqlq__lease {
  int64_t key;   /* the lock name's key */
  int64_t token; /* this holder's */
  int64_t fence; /* the row's fence when it was taken */
};

/* One lease statement of the lease session, with its arguments. */
typedef struct lease_call {
  int sql;
  const struct sqlq__lease *ls;
  int64_t lease_us;
  int64_t fence; /* out: the row's fence */
  size_t rows;   /* out: rows it returned */
} lease_call;

static int lease_tx(sqlq_db *side, void *arg) {
  lease_call *c = arg;
  sqlq__query q = {.sql = c->sql, .row = sqlq__read_int64, .arg = &c->fence};
  int rc;
  c->rows = 0;
  c->fence = 0;
  if (c->sql == SQLQ__SQL_LEASE_RELEASE)
    rc = sqlq__run(side, &q, SQLQ__INT(c->ls->key), SQLQ__INT(c->ls->token));
  else
    rc =
      sqlq__run(side, &q, SQLQ__INT(c->ls->key), SQLQ__INT(c->ls->token), SQLQ__INT(c->lease_us));
  c->rows = q.rows;
  return rc;
}

/* Open db's lease session when it has none. */
static int lease_session(sqlq_db *db) {
  if (db->lease_db) return SQLQ_OK;
  if (db->url_text == NULL) return sqlq__error(db, SQLQ_MISUSE, "this handle has no URL to lease");
  sqlq_db *side = NULL;
  int rc = sqlq_open(db->url_text, NULL, &side);
  if (rc != SQLQ_OK) {
    sqlq__error(db, rc, "the lease session: %s", side ? side->errmsg : "out of memory");
    sqlq_close(side);
    return rc;
  }
  db->lease_db = side;
  return SQLQ_OK;
}

/* Run c on db's lease session, in a transaction of its own; an error is
** recorded on db. */
static int lease_run(sqlq_db *db, lease_call *c, int64_t deadline_ns) {
  int rc = lease_session(db);
  if (rc != SQLQ_OK) return rc;
  sqlq_db *side = db->lease_db;
  sqlq__clear_error(side);
  side->call_deadline_ns = deadline_ns;
  rc = sqlq__in_tx(side, SQLQ__TX_WRITE | SQLQ__TX_SINGLE, lease_tx, c);
  side->call_deadline_ns = 0;
  if (rc != SQLQ_OK) sqlq__error(db, rc, "%s", side->errmsg);
  return rc;
}

static void pause_ns(int64_t ns) {
  struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

int sqlq__lease_lock(sqlq_db *db, uint64_t key, double timeout_s, struct sqlq__lease **out) {
  struct sqlq__lease *ls = calloc(1, sizeof *ls);
  if (ls == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  ls->key = (int64_t)key;
  ls->token = sqlq__new_token();
  int64_t deadline = timeout_s < 0 ? -1 : sqlq__monotonic_after(timeout_s);
  int64_t pause = 10000000;
  lease_call c = {
    .sql = SQLQ__SQL_LEASE_TAKE, .ls = ls, .lease_us = sqlq__seconds_to_us(db->lock_lease_s)};
  int rc;
  for (;;) {
    rc = lease_run(db, &c, 0);
    if (rc != SQLQ_OK || c.rows == 1) break;
    int64_t now = sqlq__monotonic_ns();
    if (deadline >= 0 && now >= deadline) {
      rc = sqlq__error(db, SQLQ_BUSY, "the lock is held by another session%s",
                       timeout_s > 0 ? " (timed out)" : "");
      break;
    }
    pause_ns(deadline >= 0 && deadline - now < pause ? deadline - now : pause);
    pause = pause * 2 > LEASE_POLL_MAX_NS ? LEASE_POLL_MAX_NS : pause * 2;
  }
  if (rc != SQLQ_OK) {
    free(ls);
    return rc;
  }
  ls->fence = c.fence;
  *out = ls;
  return SQLQ_OK;
}

int sqlq__lease_check(sqlq_db *db, struct sqlq__lease *ls, int64_t deadline_ns) {
  lease_call c = {
    .sql = SQLQ__SQL_LEASE_RENEW, .ls = ls, .lease_us = sqlq__seconds_to_us(db->lock_lease_s)};
  int rc = lease_run(db, &c, deadline_ns);
  if (rc == SQLQ_OK && sqlq__monotonic_ns() > deadline_ns)
    rc = sqlq__error(db, SQLQ_TIMEOUT, "the lease was renewed too late");
  if (rc != SQLQ_OK)
    return sqlq__error(db, SQLQ_LOCK_LOST, "the lease could not be renewed: %s", db->errmsg);
  if (c.rows != 1)
    return sqlq__error(db, SQLQ_LOCK_LOST,
                       "the lease ran out and another holder took the lock (fence %lld)",
                       (long long)ls->fence);
  return SQLQ_OK;
}

SQLQ__API int64_t sqlq_lock_fence(const sqlq_lock *lk) {
  return lk && lk->lease ? lk->lease->fence : 0;
}

void sqlq__lease_unlock(sqlq_db *db, struct sqlq__lease *ls) {
  sqlq__saved_error saved;
  sqlq__save_error(db, &saved);
  lease_call c = {.sql = SQLQ__SQL_LEASE_RELEASE, .ls = ls};
  lease_run(db, &c, 0);
  sqlq__restore_error(db, &saved);
  free(ls);
}
