/*
** cmd_retention.c -- `sqlq retention`: show or set how long and how many
** finished jobs of a queue history keeps; `sqlq prune`: prune them now.
*/
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char retention_usage[] =
  "usage: sqlq [--url URL] retention [--keep DURATION] [--keep-count N] [--json] QUEUE\n"
  "\n"
  "Show or set the retention of QUEUE: how long, and how many of, its\n"
  "finished jobs history keeps.  History holds the jobs acked by workers whose\n"
  "URL has history=1 (see `sqlq jobs --state done`).  A finished job is pruned\n"
  "once it finished more than the --keep duration ago, or once N newer jobs\n"
  "of QUEUE finished, whichever comes first; without retention history keeps\n"
  "every job.  Dead jobs are not finished: they stay until `sqlq retry` or\n"
  "`sqlq purge`.  Workers that keep history prune the queue they claim from,\n"
  "in batches of at most 1000 rows, each its own short transaction; `sqlq\n"
  "prune` prunes at once.  Without --keep or --keep-count, print the setting;\n"
  "with them, change those limits (the other one stays) and print the result.\n"
  "\n"
  "  -k, --keep DURATION   keep finished jobs this long: a number of seconds, or\n"
  "                        one with a unit s, m, h, d or w (90m, 7d, 1.5h);\n"
  "                        0: no limit of age\n"
  "  -c, --keep-count N    keep the N newest finished jobs (at most 1000000000);\n"
  "                        0: no limit of number\n"
  "  -j, --json            print {\"queue\":Q,\"keep_seconds\":S,\"keep_count\":N},\n"
  "                        null where there is no limit\n"
  "  -h, --help            print this help\n";

static const char prune_usage[] =
  "usage: sqlq [--url URL] prune [--batch N] QUEUE\n"
  "\n"
  "Delete from history the finished jobs of QUEUE that its retention (`sqlq\n"
  "retention`) no longer keeps, oldest first, in batches of at most N rows,\n"
  "each its own short transaction, until none is left.  Prints \"N jobs\n"
  "pruned\".  A queue without retention prunes nothing.\n"
  "\n"
  "  -b, --batch N   rows one batch deletes at most (default 1000, at most\n"
  "                  100000)\n"
  "  -h, --help      print this help\n";

static int print_retention(const char *queue, double keep_for, int64_t keep_count, int json) {
  static const char *const header[] = {"queue", "keep", "keep_count"};
  char name[CLI_NAME_SIZE], keep[64], count[24];
  const char *row[3];
  cli_table t;
  if (json) {
    json_t *o = json_object();
    json_t *seconds = keep_for == 0                 ? json_null()
                      : keep_for == floor(keep_for) ? json_integer((json_int_t)keep_for)
                                                    : json_real(keep_for);
    json_object_set_new(o, "queue", cli_json_text(queue));
    json_object_set_new(o, "keep_seconds", seconds);
    json_object_set_new(o, "keep_count", keep_count ? json_integer(keep_count) : json_null());
    return cli_print_json(o);
  }
  cli_format_duration(keep_for, keep, sizeof keep);
  snprintf(count, sizeof count, keep_count ? "%" PRId64 : "-", keep_count);
  row[0] = cli_name(queue, name);
  row[1] = keep;
  row[2] = count;
  return cli_table_finish(&t, cli_table_init(&t, 3, header) == 0 && cli_table_add(&t, row) == 0,
                          "retention");
}

int cmd_retention(const cli_global *g, int argc, char **argv) {
  static const struct option options[] = {
    {"keep", required_argument, NULL, 'k'},
    {"keep-count", required_argument, NULL, 'c'},
    {"json", no_argument, NULL, 'j'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  double keep_for = 0, new_keep_for = -1;
  int64_t keep_count = 0;
  long long new_count = -1;
  int c, json = 0, code, rc;
  sqlq_db *db;

  while ((c = cli_getopt("retention", argc, argv, ":k:c:jh", options)) != -1) {
    switch (c) {
    case 'k':
      if (cli_parse_duration(optarg, &new_keep_for) != 0) {
        return cli_usage_error("retention",
                               "keep '%.40s' is not a duration >= 0 (like 90, 30m, 7d)", optarg);
      }
      break;
    case 'c':
      if (cli_parse_int(optarg, 0, SQLQ_KEEP_COUNT_MAX, &new_count) != 0) {
        return cli_usage_error("retention", "keep-count '%.40s' is not a whole number 0 to %d",
                               optarg, SQLQ_KEEP_COUNT_MAX);
      }
      break;
    case 'j':
      json = 1;
      break;
    case 'h':
      fputs(retention_usage, stdout);
      return 0;
    default:
      return EXIT_USAGE;
    }
  }
  if (argc - optind != 1) {
    return cli_usage_error("retention", "expected QUEUE");
  }
  if ((code = cli_check_queue("retention", argv[optind])) != 0 ||
      (db = cli_open(g, &code)) == NULL) {
    return code;
  }
  rc = sqlq_retention_get(db, argv[optind], &keep_for, &keep_count);
  if (rc == SQLQ_OK && (new_keep_for >= 0 || new_count >= 0)) {
    keep_for = new_keep_for >= 0 ? new_keep_for : keep_for;
    keep_count = new_count >= 0 ? new_count : keep_count;
    rc = sqlq_retention_set(db, argv[optind], keep_for, keep_count);
  }
  code = rc == SQLQ_OK ? print_retention(argv[optind], keep_for, keep_count, json)
                       : cli_fail(db, rc, "retention");
  sqlq_close(db);
  return code;
}

int cmd_prune(const cli_global *g, int argc, char **argv) {
  static const struct option options[] = {
    {"batch", required_argument, NULL, 'b'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  long long batch = SQLQ_PRUNE_BATCH;
  size_t pruned, total = 0;
  int c, code, rc;
  sqlq_db *db;

  while ((c = cli_getopt("prune", argc, argv, ":b:h", options)) != -1) {
    if (c == 'b') {
      if (cli_parse_int(optarg, 1, SQLQ_PRUNE_BATCH_MAX, &batch) != 0) {
        return cli_usage_error("prune", "batch '%.40s' is not a whole number 1 to %d", optarg,
                               SQLQ_PRUNE_BATCH_MAX);
      }
    } else if (c == 'h') {
      fputs(prune_usage, stdout);
      return 0;
    } else {
      return EXIT_USAGE;
    }
  }
  if (argc - optind != 1) {
    return cli_usage_error("prune", "expected QUEUE");
  }
  if ((code = cli_check_queue("prune", argv[optind])) != 0 || (db = cli_open(g, &code)) == NULL) {
    return code;
  }
  do {
    rc = sqlq_history_prune(db, argv[optind], (size_t)batch, &pruned);
    total += pruned;
  } while (rc == SQLQ_OK && pruned == (size_t)batch);
  if (rc == SQLQ_OK) {
    printf("%zu jobs pruned\n", total);
  }
  return cli_done(db, rc, "prune");
}
