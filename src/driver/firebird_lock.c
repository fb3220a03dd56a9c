/*
** firebird_lock.c -- named locks of the Firebird driver (not yet).
*/
#include "firebird_int.h"

int sqlq__fb_lock(sqlq_db *db, uint64_t key, const void *name, size_t name_len, double timeout_s,
                  sqlq__lockstate **out) {
  (void)key;
  (void)name;
  (void)name_len;
  (void)timeout_s;
  *out = NULL;
  return sqlq__error(db, SQLQ_UNAVAILABLE, "named locks are not available on Firebird yet");
}

void sqlq__fb_unlock(sqlq_db *db, sqlq__lockstate *ls) {
  (void)db;
  (void)ls;
}
