/*
** cmd_cancel.c -- `sqlq cancel ID...`: stop jobs (sqlq_cancel).  Ready
** and running jobs become dead, marked cancelled; the workers running them
** are told and stop their commands.
*/
#include <getopt.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char usage[] =
  "usage: sqlq [--url URL] cancel [--json] ID...\n"
  "       sqlq [--url URL] cancel [--json] -    (ids on stdin, one a line)\n"
  "\n"
  "Cancel the jobs ID..., in one transaction: each that is ready (due,\n"
  "scheduled or waiting for other jobs) or running becomes dead, cancelled\n"
  "(its last error says \"cancelled\"), and is never claimed again until\n"
  "`sqlq retry`.  The worker running a cancelled job is told within the\n"
  "wake-up latency (at the latest at its next lease extension) and stops\n"
  "its command: SIGTERM, then SIGKILL after its --kill-after; its result is\n"
  "not recorded.  Jobs done, dead already or unknown are left alone.\n"
  "Prints \"N jobs cancelled\".  A bad id on the command line exits 64, a\n"
  "bad line on stdin 65.\n"
  "\n"
  "  -j, --json   print {\"cancelled\":N}\n"
  "  -h, --help   print this help\n";

/* The most bytes of ids read from stdin (about three million ids). */
#define STDIN_MAX ((size_t)64 << 20)

/* Parse the lines of text (empty lines skipped) as job ids into a new
** array *ids_out of *n_out.  Returns 0, or prints one line and returns
** EXIT_DATAERR (a bad line) or EXIT_SOFTWARE. */
static int parse_lines(char *text, int64_t **ids_out, size_t *n_out) {
  size_t n = 0, lines = 1;
  for (const char *p = text; *p; p++) lines += *p == '\n';
  int64_t *ids = malloc(lines * sizeof *ids);
  if (ids == NULL) {
    cli_error("cancel: out of memory");
    return EXIT_SOFTWARE;
  }
  char *line = text;
  for (size_t at = 1; line != NULL; at++) {
    char *nl = strchr(line, '\n');
    long long id;
    if (nl) *nl = '\0';
    if (*line != '\0' && cli_parse_int(line, 1, INT64_MAX, &id) != 0) {
      cli_error("cancel: stdin line %zu: '%s' is not a job id (a whole number >= 1)", at, line);
      free(ids);
      return EXIT_DATAERR;
    }
    if (*line != '\0') ids[n++] = id;
    line = nl ? nl + 1 : NULL;
  }
  *ids_out = ids;
  *n_out = n;
  return 0;
}

/* The ids of stdin into *ids_out and *n_out.  Returns 0 or the exit code. */
static int read_ids(int64_t **ids_out, size_t *n_out) {
  size_t len = 0;
  unsigned char *text = cli_read_stdin(STDIN_MAX, &len);
  if (text == NULL) {
    cli_error("cancel: cannot read the ids on stdin (at most %zu bytes)", STDIN_MAX);
    return EXIT_DATAERR;
  }
  if (strlen((const char *)text) != len) {
    free(text);
    cli_error("cancel: stdin holds a NUL byte, not job ids");
    return EXIT_DATAERR;
  }
  int code = parse_lines((char *)text, ids_out, n_out);
  free(text);
  return code;
}

/* Print the count the way the flags ask. */
static int print_count(size_t count, int json) {
  if (!json) {
    printf("%zu jobs cancelled\n", count);
    return 0;
  }
  return cli_print_json(json_pack("{sI}", "cancelled", (json_int_t)count));
}

int cmd_cancel(const cli_global *g, int argc, char **argv) {
  static const struct option options[] = {
    {"json", no_argument, NULL, 'j'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  int64_t *ids = NULL;
  size_t n = 0, count = 0;
  int c, json = 0, code;
  while ((c = cli_getopt("cancel", argc, argv, ":jh", options)) != -1) {
    if (c == 'j') {
      json = 1;
    } else if (c == 'h') {
      fputs(usage, stdout);
      return 0;
    } else {
      return EXIT_USAGE;
    }
  }
  int from_stdin = argc - optind == 1 && strcmp(argv[optind], "-") == 0;
  if (argc == optind) return cli_usage_error("cancel", "expected ID... or -");
  code =
    from_stdin ? read_ids(&ids, &n) : cli_parse_ids("cancel", argv + optind, argc - optind, &ids);
  if (code == 0 && !from_stdin) n = (size_t)(argc - optind);
  if (code != 0) return code;
  sqlq_db *db = cli_open(g, &code);
  if (db != NULL) {
    int rc = sqlq_cancel(db, ids, n, &count);
    code = rc == SQLQ_OK ? print_count(count, json) : cli_fail(db, rc, "cancel");
    sqlq_close(db);
  }
  free(ids);
  return code;
}
