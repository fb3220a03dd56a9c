/*
** postgres_api.c -- libpq, loaded when the first postgres:// URL is opened
** (postgres_api.h).
*/
#include "postgres_int.h"

SQLQ__DL_LIBRARY(sqlq__pg_lib, SQLQ__PG_API, SQLQ__PG_API_COUNT, "postgres", "libpq5", NULL,
                 "libpq.so.5");
