/*
** dialects.h -- the statement texts of the server dialects, for params.c:
** each returns its dialect's array of *count statements (NULL where the
** dialect has none) and the highest $N its driver binds.  The arrays are
** the library's own.
*/
#ifndef SQLQ_TEST_DIALECTS_H
#define SQLQ_TEST_DIALECTS_H

const char *const *dialect_postgres(int *count, int *max_params);
const char *const *dialect_mysql(int *count, int *max_params);

#endif
