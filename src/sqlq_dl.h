/*
** sqlq_dl.h -- a backend's client library, loaded when a URL of its scheme
** is first opened.
**
** A driver whose client library is not SQLite (libpq, libmariadb,
** libfbclient) lists the library's functions it calls in one X-macro,
** SQLQ__NAME_API(X) in src/driver/NAME_api.h, and defines its library there
** and in NAME_api.c with SQLQ__DL_LIBRARY.  Its open method calls
** sqlq__dl_load() before anything else; the first call (under a mutex)
** dlopens the library with RTLD_NOW | RTLD_LOCAL and resolves every listed
** function into the library's table, later calls return at once.  The
** library then stays loaded until the process ends (no dlclose): a driver's
** connections, threads and atexit handlers may outlive any one handle.
**
** Built with SQLQ_DLOPEN (the default; see CMakeLists.txt), NAME_api.h
** redirects each listed name to its table entry with a macro, so the
** driver's calls read as plain calls of the client API.  Built without it,
** the driver links the client library as before and sqlq__dl_load() only
** runs the library's init function once.
*/
#ifndef SQLQ_DL_H
#define SQLQ_DL_H

#include "sqlq.h"

/* A function of a client library as stored; a call casts it back to the
** type of the function's declaration in the client header. */
typedef void (*sqlq__dl_fn)(void);

/* A client library of a driver.  Every pointer is static data of the
** driver; fns and loaded are written by sqlq__dl_load() only. */
typedef struct sqlq__dl_lib {
  const char *backend;        /* the driver's name, for messages */
  const char *package;        /* the Debian package that ships the library */
  const char *const *sonames; /* tried in order, NULL-terminated */
  const char *const *names;   /* the functions the driver calls, NULL-terminated */
  sqlq__dl_fn *fns;           /* one per name, in the same order */
  int (*init)(void);          /* run once after loading (may be NULL); nonzero fails */
  int loaded;                 /* 1 once fns is filled and init ran */
} sqlq__dl_lib;

/* Make lib usable: load it (once per process) and resolve its functions.
** Returns SQLQ_OK, or SQLQ_UNAVAILABLE with a message on db naming the
** missing library and its package (a failed load is tried again by the
** next call). */
int sqlq__dl_load(sqlq_db *db, sqlq__dl_lib *lib);

/* For an API list: the enumerator of a function's slot, and its name. */
#define SQLQ__DL_ID(name) SQLQ__DL_ID_##name,
#define SQLQ__DL_NAME(name) #name,

/* The loaded function of lib for the client function name, typed as its
** declaration.  name is not expanded again inside its own redirect. */
#define SQLQ__DL_FN(lib, name) ((__typeof__(&name))(lib).fns[SQLQ__DL_ID_##name])

#define SQLQ__DL_STR(x) #x
/* Fails the build when name, listed in an API list, has no redirect
** macro: the call would then bind to the client library at link time. */
#define SQLQ__DL_REDIRECTED(name) \
  _Static_assert(sizeof SQLQ__DL_STR(name) != sizeof #name, \
                 #name " is listed in the API but not redirected to the loaded library");

#ifdef SQLQ_DLOPEN
#define SQLQ__DL_CHECK(api) api(SQLQ__DL_REDIRECTED)
#else
#define SQLQ__DL_CHECK(api)
#endif

/* Define the sqlq__dl_lib var for the functions of the X-macro api (count
** of them), the backend's name, the Debian package, the init function (or
** NULL) and the sonames to try. */
#define SQLQ__DL_LIBRARY(var, api, count, backend, package, init, ...) \
  SQLQ__DL_CHECK(api) \
  static const char *const var##_names[] = {api(SQLQ__DL_NAME) NULL}; \
  static const char *const var##_sonames[] = {__VA_ARGS__, NULL}; \
  static sqlq__dl_fn var##_fns[count]; \
  sqlq__dl_lib var = {backend, package, var##_sonames, var##_names, var##_fns, init, 0}

#endif
