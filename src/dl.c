/*
** dl.c -- loading a backend's client library on first use (sqlq_dl.h).
**
** Tests, and only tests, may set SQLQ_TEST_LIBDIR to a directory: each
** soname is then opened as DIR/soname, so that a directory without it
** makes the real dlopen fail as it does on a machine without the package
** (tests/cli/dlopen.sh).  The variable is read with secure_getenv(), so a
** set-user-ID program ignores it.
*/
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sqlq_dl.h"
#include "sqlq_int.h"

/* Serializes every load, and the first reads of lib->loaded. */
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

#ifdef SQLQ_DLOPEN
/* dlopen the first of lib's sonames that opens; NULL with the reason in
** err (err_size bytes) when none does. */
static void *open_library(const sqlq__dl_lib *lib, char *err, size_t err_size) {
  const char *dir = secure_getenv("SQLQ_TEST_LIBDIR");
  for (const char *const *s = lib->sonames; *s; s++) {
    char path[4096];
    snprintf(path, sizeof path, "%s%s%s", dir ? dir : "", dir ? "/" : "", *s);
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle) return handle;
    const char *why = dlerror();
    if (s == lib->sonames) snprintf(err, err_size, "%s", why ? why : "not found");
  }
  return NULL;
}

/* Fill lib->fns from handle; on a missing function, name it on db. */
static int resolve(sqlq_db *db, sqlq__dl_lib *lib, void *handle) {
  for (size_t i = 0; lib->names[i]; i++) {
    void *sym = dlsym(handle, lib->names[i]);
    if (sym == NULL)
      return sqlq__error(db, SQLQ_UNAVAILABLE,
                         "%s: the client library lacks %s (install a newer %s)", lib->backend,
                         lib->names[i], lib->package);
    /* POSIX makes dlsym's object pointer convertible to a function one. */
    memcpy(&lib->fns[i], &sym, sizeof sym);
  }
  return SQLQ_OK;
}

static int load(sqlq_db *db, sqlq__dl_lib *lib) {
  char why[512] = "";
  void *handle = open_library(lib, why, sizeof why);
  if (handle == NULL)
    return sqlq__error(db, SQLQ_UNAVAILABLE,
                       "%s: cannot load the client library %s (install the package %s): %s",
                       lib->backend, lib->sonames[0], lib->package, why);
  int rc = resolve(db, lib, handle);
  if (rc != SQLQ_OK) dlclose(handle);
  return rc;
}
#else
/* Linked at build time: nothing to load. */
static int load(sqlq_db *db, sqlq__dl_lib *lib) {
  (void)db;
  (void)lib;
  return SQLQ_OK;
}
#endif

int sqlq__dl_load(sqlq_db *db, sqlq__dl_lib *lib) {
  pthread_mutex_lock(&load_lock);
  int rc = SQLQ_OK;
  if (!lib->loaded && (rc = load(db, lib)) == SQLQ_OK) {
    if (lib->init && lib->init() != 0)
      rc = sqlq__error(db, SQLQ_UNAVAILABLE, "%s: the client library failed to initialize",
                       lib->backend);
    else
      lib->loaded = 1;
  }
  pthread_mutex_unlock(&load_lock);
  return rc;
}
