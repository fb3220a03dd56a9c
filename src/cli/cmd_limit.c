/*
** cmd_limit.c -- `sqlq limit`: show or set the flow limits of a queue (its
** concurrency limit: at most N of its jobs running at once).
*/
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>

#include "cli.h"

static const char limit_usage[] =
  "usage: sqlq [--url URL] limit [--concurrency N] [--json] QUEUE\n"
  "\n"
  "Show or set the limits of QUEUE.  With a concurrency limit N, at most N of\n"
  "its jobs run at once, across every worker of every host: a claim takes at\n"
  "most the free slots, N less the jobs running with a lease that has not\n"
  "expired (a job whose lease expires frees its slot).  Jobs already running\n"
  "when the limit is lowered finish; workers claim again once fewer than N\n"
  "run.  Without --concurrency, print the setting; with it, change it and\n"
  "print the result.\n"
  "\n"
  "  -c, --concurrency N   at most N jobs running (1 to 1000000); 0: no limit\n"
  "  -j, --json            print {\"queue\":Q,\"concurrency\":N}, null where\n"
  "                        there is no limit\n"
  "  -h, --help            print this help\n";

static int print_limit(const char *queue, int64_t concurrency, int json) {
  static const char *const header[] = {"queue", "concurrency"};
  char name[CLI_NAME_SIZE], count[24];
  const char *row[2];
  cli_table t;
  if (json) {
    json_t *o = json_object();
    json_object_set_new(o, "queue", cli_json_text(queue));
    json_object_set_new(o, "concurrency", concurrency ? json_integer(concurrency) : json_null());
    return cli_print_json(o);
  }
  snprintf(count, sizeof count, concurrency ? "%" PRId64 : "-", concurrency);
  row[0] = cli_name(queue, name);
  row[1] = count;
  return cli_table_finish(&t, cli_table_init(&t, 2, header) == 0 && cli_table_add(&t, row) == 0,
                          "limit");
}

int cmd_limit(const cli_global *g, int argc, char **argv) {
  static const struct option options[] = {
    {"concurrency", required_argument, NULL, 'c'},
    {"json", no_argument, NULL, 'j'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  long long new_concurrency = -1;
  int64_t concurrency = 0;
  int c, json = 0, code, rc;
  sqlq_db *db;

  while ((c = cli_getopt("limit", argc, argv, ":c:jh", options)) != -1) {
    switch (c) {
    case 'c':
      if (cli_parse_int(optarg, 0, SQLQ_MAX_RUNNING_MAX, &new_concurrency) != 0) {
        return cli_usage_error("limit", "concurrency '%.40s' is not a whole number 0 to %d", optarg,
                               SQLQ_MAX_RUNNING_MAX);
      }
      break;
    case 'j':
      json = 1;
      break;
    case 'h':
      fputs(limit_usage, stdout);
      return 0;
    default:
      return EXIT_USAGE;
    }
  }
  if (argc - optind != 1) {
    return cli_usage_error("limit", "expected QUEUE");
  }
  if ((code = cli_check_queue("limit", argv[optind])) != 0 || (db = cli_open(g, &code)) == NULL) {
    return code;
  }
  if (new_concurrency >= 0) {
    rc = sqlq_concurrency_set(db, argv[optind], new_concurrency);
  } else {
    rc = SQLQ_OK;
  }
  if (rc == SQLQ_OK) {
    rc = sqlq_concurrency_get(db, argv[optind], &concurrency);
  }
  code = rc == SQLQ_OK ? print_limit(argv[optind], concurrency, json) : cli_fail(db, rc, "limit");
  sqlq_close(db);
  return code;
}
