/*
** cmd_limit.c -- `sqlq limit`: show or set the flow limits of a queue (its
** concurrency limit: at most N of its jobs running at once; its per-group
** limit: at most N of the jobs of one group key running at once; fair
** claiming: round-robin across group keys).
*/
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>

#include "cli.h"

static const char limit_usage[] =
  "usage: sqlq [--url URL] limit [--concurrency N] [--per-group N] [--fair | --no-fair]\n"
  "                              [--json] QUEUE\n"
  "\n"
  "Show or set the limits of QUEUE.  With a concurrency limit N, at most N of\n"
  "its jobs run at once, across every worker of every host: a claim takes at\n"
  "most the free slots, N less the jobs running with a lease that has not\n"
  "expired (a job whose lease expires frees its slot).  Jobs already running\n"
  "when the limit is lowered finish; workers claim again once fewer than N\n"
  "run.  With a per-group limit N, at most N jobs of one group key run at\n"
  "once, starting in the order they were enqueued (1, the default: one at a\n"
  "time).  A fair queue's claims take its jobs round-robin across tenants\n"
  "(group keys; the jobs without one are a tenant too), the best by priority\n"
  "of the tenant served longest ago first, instead of in the queue's order.\n"
  "Without options, print the settings; with them, change them and print\n"
  "the result.\n"
  "\n"
  "  -c, --concurrency N   at most N jobs running (1 to 1000000); 0: no limit\n"
  "  -g, --per-group N     at most N jobs of one group running (1 to 1000000)\n"
  "  -f, --fair            claim round-robin across tenants\n"
  "  -F, --no-fair         claim in the queue's order (the default); forgets\n"
  "                        the tenants' turns\n"
  "  -j, --json            print {\"queue\":Q,\"concurrency\":N,\"per_group\":N,\n"
  "                        \"fair\":B}, concurrency null where there is no limit\n"
  "  -h, --help            print this help\n";

/* The limits of a queue, as read back. */
typedef struct limits {
  int64_t concurrency, per_group;
  int fair;
} limits;

static int print_limit(const char *queue, const limits *l, int json) {
  static const char *const header[] = {"queue", "concurrency", "per_group", "fair"};
  char name[CLI_NAME_SIZE], count[24], per_group[24];
  const char *row[4];
  cli_table t;
  if (json) {
    json_t *o = json_object();
    json_object_set_new(o, "queue", cli_json_text(queue));
    json_object_set_new(o, "concurrency",
                        l->concurrency ? json_integer(l->concurrency) : json_null());
    json_object_set_new(o, "per_group", json_integer(l->per_group));
    json_object_set_new(o, "fair", json_boolean(l->fair));
    return cli_print_json(o);
  }
  snprintf(count, sizeof count, l->concurrency ? "%" PRId64 : "-", l->concurrency);
  snprintf(per_group, sizeof per_group, "%" PRId64, l->per_group);
  row[0] = cli_name(queue, name);
  row[1] = count;
  row[2] = per_group;
  row[3] = l->fair ? "yes" : "no";
  return cli_table_finish(&t, cli_table_init(&t, 4, header) == 0 && cli_table_add(&t, row) == 0,
                          "limit");
}

/* Set the limits asked for in set (each -1: left as it is), then read them
** all into out. */
static int apply(sqlq_db *db, const char *queue, const limits *set, limits *out) {
  int rc = set->concurrency >= 0 ? sqlq_concurrency_set(db, queue, set->concurrency) : SQLQ_OK;
  if (rc == SQLQ_OK && set->per_group >= 0) rc = sqlq_group_limit_set(db, queue, set->per_group);
  if (rc == SQLQ_OK && set->fair >= 0) rc = sqlq_fair_set(db, queue, set->fair);
  if (rc == SQLQ_OK) rc = sqlq_concurrency_get(db, queue, &out->concurrency);
  if (rc == SQLQ_OK) rc = sqlq_group_limit_get(db, queue, &out->per_group);
  if (rc == SQLQ_OK) rc = sqlq_fair_get(db, queue, &out->fair);
  return rc;
}

int cmd_limit(const cli_global *g, int argc, char **argv) {
  static const struct option options[] = {
    {"concurrency", required_argument, NULL, 'c'},
    {"per-group", required_argument, NULL, 'g'},
    {"fair", no_argument, NULL, 'f'},
    {"no-fair", no_argument, NULL, 'F'},
    {"json", no_argument, NULL, 'j'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  limits set = {-1, -1, -1}, l = {0, 1, 0};
  long long number;
  int c, json = 0, code, rc;
  sqlq_db *db;

  while ((c = cli_getopt("limit", argc, argv, ":c:g:fFjh", options)) != -1) {
    switch (c) {
    case 'c':
      if (cli_parse_int(optarg, 0, SQLQ_MAX_RUNNING_MAX, &number) != 0) {
        return cli_usage_error("limit", "concurrency '%.40s' is not a whole number 0 to %d", optarg,
                               SQLQ_MAX_RUNNING_MAX);
      }
      set.concurrency = number;
      break;
    case 'g':
      if (cli_parse_int(optarg, 1, SQLQ_MAX_RUNNING_MAX, &number) != 0) {
        return cli_usage_error("limit", "per-group '%.40s' is not a whole number 1 to %d", optarg,
                               SQLQ_MAX_RUNNING_MAX);
      }
      set.per_group = number;
      break;
    case 'f':
    case 'F':
      if (set.fair >= 0 && set.fair != (c == 'f')) {
        return cli_usage_error("limit", "--fair and --no-fair together");
      }
      set.fair = c == 'f';
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
  rc = apply(db, argv[optind], &set, &l);
  code = rc == SQLQ_OK ? print_limit(argv[optind], &l, json) : cli_fail(db, rc, "limit");
  sqlq_close(db);
  return code;
}
