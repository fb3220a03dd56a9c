/*
** mysql_api.c -- libmariadb, loaded when the first mysql:// or mariadb://
** URL is opened (mysql_api.h).
*/
#include "mysql_int.h"

/* mysql_init() initializes the library on its first call, which is not
** thread-safe; the loader runs this once, under its mutex, instead.
** mysql_library_init is a macro of mysql.h for mysql_server_init. */
static int init_library(void) {
  return mysql_library_init(0, NULL, NULL);
}

SQLQ__DL_LIBRARY(sqlq__my_lib, SQLQ__MY_API, SQLQ__MY_API_COUNT, "mysql", "libmariadb3",
                 init_library, "libmariadb.so.3");
