/*
** dialect_mysql.c -- MariaDB's statement texts for params.c (a file of
** their own: each driver defines the library's statement struct its own
** way).
*/
#include "dialects.h"
#include "driver/mysql_int.h"

const char *const *dialect_mysql(int *count, int *max_params) {
  *count = MY_SQL_COUNT;
  *max_params = MY_MAX_PARAMS;
  return sqlq__mysql_sql;
}
