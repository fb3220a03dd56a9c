/*
** firebird_api.c -- libfbclient, loaded when the first firebird: URL is
** opened (firebird_api.h).  The embedded engine (firebird:PATH) is a plugin
** that libfbclient loads itself.
*/
#include "firebird_int.h"

SQLQ__DL_LIBRARY(sqlq__fb_lib, SQLQ__FB_API, SQLQ__FB_API_COUNT, "firebird", "libfbclient2", NULL,
                 "libfbclient.so.2");
