/*
** lock.c -- named locks: validation, the stable 64-bit key, and the list of
** locks held through each handle.  The holding itself is the driver's.
*/
#include <stdio.h>
#include <stdlib.h>

#include "sqlq_int.h"

/* Check the arguments of a lock call. */
static int check_lock(sqlq_db *db, const void *name, size_t name_len, double timeout) {
  if (db->driver->lock == NULL && !db->lease_locks)
    return sqlq__error(db, SQLQ_MISUSE, "the %s backend has no named locks", db->driver->name);
  if (name == NULL || name_len == 0) return sqlq__error(db, SQLQ_MISUSE, "lock name is empty");
  if (name_len > SQLQ_LOCK_NAME_MAX)
    return sqlq__error(db, SQLQ_TOOBIG, "lock name of %zu bytes is longer than %d bytes", name_len,
                       SQLQ_LOCK_NAME_MAX);
  if (timeout != timeout) return sqlq__error(db, SQLQ_MISUSE, "lock timeout is not a number");
  return SQLQ_OK;
}

/* Take a lock with the driver's lock method and put it on *list. */
static int take(sqlq_db *db, const void *name, size_t name_len, double timeout, sqlq_lock **list,
                sqlq_lock **lock_out) {
  sqlq_lock *lk = calloc(1, sizeof *lk);
  if (lk == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  uint64_t key = sqlq__hash64(name, name_len);
  int64_t t0 = sqlq__monotonic_ns();
  int rc = db->lease_locks ? sqlq__lease_lock(db, key, timeout, &lk->lease)
                           : db->driver->lock(db, key, name, name_len, timeout, &lk->ls);
  sqlq__count_lock(db, sqlq__monotonic_ns() - t0, rc);
  if (rc != SQLQ_OK) {
    free(lk);
    return rc;
  }
  lk->db = db;
  lk->list = list;
  lk->next = *list;
  if (*list) (*list)->prev = lk;
  *list = lk;
  if (lock_out) *lock_out = lk;
  return SQLQ_OK;
}

SQLQ__API int sqlq_lock_acquire(sqlq_db *db, const void *name, size_t name_len, double timeout,
                                sqlq_lock **lock_out) {
  if (lock_out) *lock_out = NULL;
  int rc = sqlq__enter(db);
  if (rc != SQLQ_OK) return rc;
  if (lock_out == NULL) return sqlq__error(db, SQLQ_MISUSE, "sqlq_lock_acquire() needs lock_out");
  rc = check_lock(db, name, name_len, timeout);
  return rc == SQLQ_OK ? take(db, name, name_len, timeout, &db->locks, lock_out) : rc;
}

SQLQ__API int sqlq_lock_xact(sqlq_db *db, const void *name, size_t name_len, double timeout) {
  int rc = sqlq__enter(db);
  if (rc == SQLQ_OK) rc = check_lock(db, name, name_len, timeout);
  if (rc != SQLQ_OK) return rc;
  if (!db->in_user_tx)
    return sqlq__error(db, SQLQ_MISUSE,
                       "sqlq_lock_xact needs a transaction: call sqlq_begin first");
  const sqlq__driver *d = db->driver;
  /* Leases exclude only leases: a transaction's lock is one too, then,
  ** taken outside the transaction and released when it ends. */
  if (d->lock_xact && !db->lease_locks) {
    int64_t t0 = sqlq__monotonic_ns();
    rc = d->lock_xact(db, sqlq__hash64(name, name_len), name, name_len, timeout);
    sqlq__count_lock(db, sqlq__monotonic_ns() - t0, rc);
    return rc;
  }
  return take(db, name, name_len, timeout, &db->xact_locks, NULL);
}

void sqlq__release_xact_locks(sqlq_db *db) {
  while (db->xact_locks) sqlq_unlock(db->xact_locks);
}

SQLQ__API int sqlq_lock_check(sqlq_lock *lk, double timeout) {
  if (lk == NULL) return SQLQ_MISUSE;
  sqlq_db *db = lk->db;
  sqlq__clear_error(db);
  if (!(timeout > 0))
    return sqlq__error(db, SQLQ_MISUSE, "a lock check's timeout must be a number of seconds > 0");
  if (lk->lost[0] == '\0') {
    int64_t deadline = sqlq__monotonic_after(timeout);
    if ((lk->lease ? sqlq__lease_check(db, lk->lease, deadline)
                   : db->driver->lock_check(db, lk->ls, deadline)) == SQLQ_OK)
      return SQLQ_OK;
    snprintf(lk->lost, sizeof lk->lost, "%s", db->errmsg[0] ? db->errmsg : "lost");
  }
  return sqlq__error(db, SQLQ_LOCK_LOST, "%s", lk->lost);
}

SQLQ__API double sqlq_lock_lease(const sqlq_lock *lk) {
  return lk && lk->lease ? lk->db->lock_lease_s : 0;
}

SQLQ__API void sqlq_unlock(sqlq_lock *lk) {
  if (lk == NULL) return;
  sqlq_db *db = lk->db;
  if (lk->lease)
    sqlq__lease_unlock(db, lk->lease);
  else
    db->driver->unlock(db, lk->ls);
  if (lk->prev)
    lk->prev->next = lk->next;
  else
    *lk->list = lk->next;
  if (lk->next) lk->next->prev = lk->prev;
  free(lk);
}
