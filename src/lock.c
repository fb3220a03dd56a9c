/*
** lock.c -- named locks: validation, the stable 64-bit key, and the list of
** locks held through each handle.  The holding itself is the driver's.
*/
#include <stdlib.h>

#include "sqlq_int.h"

SQLQ__API int sqlq_lock_acquire(sqlq_db *db, const void *name, size_t name_len, double timeout,
                                sqlq_lock **lock_out) {
  if (db == NULL || lock_out == NULL) return SQLQ_MISUSE;
  *lock_out = NULL;
  sqlq__clear_error(db);
  if (db->drv_methods == NULL) return sqlq__error(db, SQLQ_MISUSE, "the database handle failed to open");
  if (!(db->drv_methods->caps & SQLQ__CAP_LOCKS))
    return sqlq__error(db, SQLQ_MISUSE, "the %s backend has no named locks", db->drv_methods->name);
  if (name == NULL || name_len == 0) return sqlq__error(db, SQLQ_MISUSE, "lock name is empty");
  if (name_len > SQLQ_LOCK_NAME_MAX)
    return sqlq__error(db, SQLQ_TOOBIG, "lock name of %zu bytes is longer than %d bytes", name_len,
                       SQLQ_LOCK_NAME_MAX);
  if (timeout != timeout) return sqlq__error(db, SQLQ_MISUSE, "lock timeout is not a number");
  sqlq_lock *lk = calloc(1, sizeof *lk);
  if (lk == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  int rc = db->drv_methods->lock(db, sqlq__hash64(name, name_len), name, name_len, timeout, &lk->ls);
  if (rc != SQLQ_OK) {
    free(lk);
    return rc;
  }
  lk->db = db;
  lk->next = db->locks;
  if (db->locks) db->locks->prev = lk;
  db->locks = lk;
  *lock_out = lk;
  return SQLQ_OK;
}

SQLQ__API void sqlq_unlock(sqlq_lock *lk) {
  if (lk == NULL) return;
  sqlq_db *db = lk->db;
  db->drv_methods->unlock(db, lk->ls);
  if (lk->prev) lk->prev->next = lk->next;
  else db->locks = lk->next;
  if (lk->next) lk->next->prev = lk->prev;
  free(lk);
}
