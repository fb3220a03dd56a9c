/*
** error.c -- status names and the error text kept on each handle.
*/
#include <stdio.h>
#include <string.h>

#include "sqlq_int.h"

static const char *const status_names[] = {
  [SQLQ_OK] = "SQLQ_OK",
  [SQLQ_ERROR] = "SQLQ_ERROR",
  [SQLQ_MISUSE] = "SQLQ_MISUSE",
  [SQLQ_TOOBIG] = "SQLQ_TOOBIG",
  [SQLQ_NOTFOUND] = "SQLQ_NOTFOUND",
  [SQLQ_STALE] = "SQLQ_STALE",
  [SQLQ_BUSY] = "SQLQ_BUSY",
  [SQLQ_TIMEOUT] = "SQLQ_TIMEOUT",
  [SQLQ_INTERRUPTED] = "SQLQ_INTERRUPTED",
  [SQLQ_UNAVAILABLE] = "SQLQ_UNAVAILABLE",
  [SQLQ_NOMEM] = "SQLQ_NOMEM",
  [SQLQ_SCHEMA] = "SQLQ_SCHEMA",
  [SQLQ_PAUSED] = "SQLQ_PAUSED",
  [SQLQ_LOCK_LOST] = "SQLQ_LOCK_LOST",
};

SQLQ__API const char *sqlq_status_name(int status) {
  if (status < 0 || (size_t)status >= sizeof status_names / sizeof *status_names)
    return "SQLQ_UNKNOWN";
  return status_names[status];
}

int sqlq__error(sqlq_db *db, int status, const char *fmt, ...) {
  if (db == NULL) return status;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(db->errmsg, sizeof db->errmsg, fmt, ap);
  va_end(ap);
  db->errcode = status;
  return status;
}

void sqlq__clear_error(sqlq_db *db) {
  db->errcode = SQLQ_OK;
  db->errmsg[0] = '\0';
}

void sqlq__save_error(const sqlq_db *db, sqlq__saved_error *saved) {
  saved->code = db->errcode;
  memcpy(saved->msg, db->errmsg, sizeof saved->msg);
}

void sqlq__restore_error(sqlq_db *db, const sqlq__saved_error *saved) {
  db->errcode = saved->code;
  memcpy(db->errmsg, saved->msg, sizeof db->errmsg);
}

SQLQ__API const char *sqlq_errmsg(const sqlq_db *db) {
  if (db == NULL) return "no database handle (out of memory?)";
  if (db->errcode == SQLQ_OK) return "not an error";
  return db->errmsg;
}

SQLQ__API int sqlq_errcode(const sqlq_db *db) {
  return db ? db->errcode : SQLQ_NOMEM;
}
