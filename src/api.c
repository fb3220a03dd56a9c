/*
** api.c -- what every public entry point shares: the prologue that checks
** the handle, the reading of a caller's options struct by its size, the
** bound on seconds, and the library's version.
*/
#include <limits.h>
#include <string.h>

#include "sqlq_int.h"

/* SQLQ__SECONDS_MAX as the messages write it ("3.2e9"). */
#define TEXT_OF(x) #x
#define TEXT(x) TEXT_OF(x)
#define SECONDS_MAX_TEXT TEXT(SQLQ__SECONDS_MAX)

SQLQ__API const char *sqlq_version(void) {
  return SQLQ_VERSION;
}

SQLQ__API int sqlq_version_number(void) {
  return SQLQ_VERSION_NUMBER;
}

int sqlq__enter(sqlq_db *db) {
  if (db == NULL) return SQLQ_MISUSE;
  sqlq__clear_error(db);
  if (db->driver == NULL) return sqlq__error(db, SQLQ_MISUSE, "the database handle failed to open");
  return SQLQ_OK;
}

int sqlq__limit(size_t limit) {
  return limit > INT_MAX ? 0 : (int)limit;
}

int sqlq__check_seconds(sqlq_db *db, double seconds, int zero_ok, const char *what) {
  int above_floor = zero_ok ? seconds >= 0 : seconds > 0;
  if (above_floor && seconds <= SQLQ__SECONDS_MAX) return SQLQ_OK;
  return sqlq__error(
    db, SQLQ_MISUSE, "%s must be %s seconds", what,
    zero_ok ? "0 to " SECONDS_MAX_TEXT : "more than 0 and at most " SECONDS_MAX_TEXT);
}

int sqlq__read_options(sqlq_db *db, const void *opts, size_t known, void *out, const char *what) {
  memset(out, 0, known);
  if (opts == NULL) return SQLQ_OK;
  size_t size;
  memcpy(&size, opts, sizeof size);
  if (size < sizeof size)
    return sqlq__error(db, SQLQ_MISUSE, "%s has size %zu: initialise it with SQLQ_OPTIONS_INIT",
                       what, size);
  const unsigned char *bytes = opts;
  for (size_t i = known; i < size; i++)
    if (bytes[i] != 0)
      return sqlq__error(db, SQLQ_MISUSE,
                         "%s sets an option that libsqlq %s does not know (byte %zu of %zu)", what,
                         SQLQ_VERSION, i, size);
  memcpy(out, opts, size < known ? size : known);
  return SQLQ_OK;
}
