/*
** errors.c -- how the commands of the sqlq tool fail: one line on stderr
** per failure ("sqlq: ..." with control characters masked), and the
** sysexits code for each library status.  cli_open(), cli_fail() and
** cli_done() join the two around the library's calls.
*/
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void cli_error(const char *fmt, ...) {
  char *msg = NULL, *p;
  va_list ap;
  int n;
  va_start(ap, fmt);
  n = vasprintf(&msg, fmt, ap);
  va_end(ap);
  if (n < 0) {
    fputs("sqlq: out of memory\n", stderr);
    return;
  }
  /* Arguments and database messages may hold control characters: the
  ** error stays one line whatever they hold. */
  for (p = msg; *p != '\0'; p++) {
    if ((unsigned char)*p < 0x20 || *p == 0x7f) {
      *p = '?';
    }
  }
  fprintf(stderr, "sqlq: %s\n", msg);
  free(msg);
}

int cli_usage_error(const char *cmd, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  cli_error("%s: %s (see 'sqlq %s --help')", cmd, msg, cmd);
  return EXIT_USAGE;
}

int cli_exit_code(int status) {
  switch (status) {
  case SQLQ_OK:
    return 0;
  case SQLQ_MISUSE:
    return EXIT_USAGE;
  case SQLQ_TOOBIG:
  case SQLQ_NOTFOUND:
    return EXIT_DATAERR;
  case SQLQ_UNAVAILABLE:
  case SQLQ_SCHEMA:
    return EXIT_UNAVAILABLE;
  case SQLQ_BUSY:
  case SQLQ_TIMEOUT:
  case SQLQ_STALE:
  case SQLQ_LOCK_LOST:
    return EXIT_TEMPFAIL;
  default:
    return EXIT_SOFTWARE;
  }
}

sqlq_db *cli_open(const cli_global *g, int *exit_code) {
  sqlq_db *db = NULL;
  int rc = sqlq_open(g->url, NULL, &db);
  if (rc == SQLQ_OK) {
    return db;
  }
  *exit_code = cli_fail(db, rc, "open");
  sqlq_close(db);
  return NULL;
}

int cli_fail(sqlq_db *db, int status, const char *what) {
  const char *msg = sqlq_errmsg(db);
  if (status == SQLQ_SCHEMA && strstr(msg, "sqlq init") == NULL) {
    cli_error("%s: %s (run `sqlq init`)", what, msg);
  } else {
    cli_error("%s: %s", what, msg);
  }
  return cli_exit_code(status);
}

int cli_done(sqlq_db *db, int rc, const char *what) {
  int code = rc == SQLQ_OK ? 0 : cli_fail(db, rc, what);
  sqlq_close(db);
  return code;
}
