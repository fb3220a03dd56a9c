/*
** drivers.c -- the backends this build includes.
**
** The list comes from the build (CMake writes sqlq_drivers.inc with one
** SQLQ_DRIVER(name) line per backend found), so no code here names a
** backend.
*/
#include "sqlq_int.h"

#define SQLQ_DRIVER(name) extern const sqlq__driver sqlq__driver_##name;
#include "sqlq_drivers.inc"
#undef SQLQ_DRIVER

#define SQLQ_DRIVER(name) &sqlq__driver_##name,
const sqlq__driver *const sqlq__drivers[] = {
#include "sqlq_drivers.inc"
  NULL,
};
#undef SQLQ_DRIVER
