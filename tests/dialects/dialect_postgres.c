/*
** dialect_postgres.c -- PostgreSQL's statement texts for params.c (a file
** of their own: each driver defines the library's statement struct its
** own way).
*/
#include "dialects.h"
#include "driver/postgres_int.h"

const char *const *dialect_postgres(int *count, int *max_params) {
  *count = PG_SQL_COUNT;
  *max_params = PG_MAX_PARAMS;
  return sqlq__postgres_sql;
}
