/*
** cmd_init.c -- `sqlq init`: create the schema, or upgrade it, and print
** the version now in place.
*/
#include <getopt.h>
#include <stdio.h>

#include "cli.h"

static const char usage[] =
  "usage: sqlq [--url URL] init\n"
  "\n"
  "Create the schema in the database, or upgrade it to the version this\n"
  "build knows.  Running it again changes nothing.  Prints the version.\n";

int cmd_init(const cli_global *g, int argc, char **argv) {
  static const struct option options[] = {
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  sqlq_db *db;
  int c, rc, version = 0, code;

  while ((c = cli_getopt("init", argc, argv, ":h", options)) != -1) {
    if (c == 'h') {
      fputs(usage, stdout);
      return 0;
    }
    return EXIT_USAGE;
  }
  if (optind != argc) {
    return cli_usage_error("init", "takes no arguments");
  }
  db = cli_open(g, &code);
  if (db == NULL) {
    return code;
  }
  rc = sqlq_init(db, &version);
  if (rc == SQLQ_OK) {
    printf("schema version %d\n", version);
    code = 0;
  } else {
    code = cli_fail(db, rc, "init");
  }
  sqlq_close(db);
  return code;
}
