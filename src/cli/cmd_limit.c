/*
** cmd_limit.c -- `sqlq limit`: show or set the flow limits of a queue (its
** concurrency limit: at most N of its jobs running at once; its rate
** limit: at most N of its jobs starting in any period; its per-group
** limit: at most N of the jobs of one group key running at once; fair
** claiming: round-robin across group keys).
*/
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>

#include "cli.h"

static const char limit_usage[] =
  "usage: sqlq [--url URL] limit [--concurrency N] [--rate N/PERIOD] [--per-group N]\n"
  "                              [--fair | --no-fair] [--json] QUEUE\n"
  "\n"
  "Show or set the limits of QUEUE.  With a concurrency limit N, at most N of\n"
  "its jobs run at once, across every worker of every host: a claim takes at\n"
  "most the free slots, N less the jobs running with a lease that has not\n"
  "expired (a job whose lease expires frees its slot).  Jobs already running\n"
  "when the limit is lowered finish; workers claim again once fewer than N\n"
  "run.  With a rate limit of N per PERIOD, at most N of its jobs start\n"
  "(claims: first runs, retries and re-claims alike) in any interval of\n"
  "PERIOD on the database's clock, across every worker of every host: a\n"
  "sliding window, exact; a worker whose claim finds the window full sleeps\n"
  "until its oldest start leaves it.  With a per-group limit N, at most N\n"
  "jobs of one group key run at once, starting in the order they were\n"
  "enqueued (1, the default: one at a time).  A fair queue's claims take its\n"
  "jobs round-robin across tenants (group keys; the jobs without one are a\n"
  "tenant too), the best by priority of the tenant served longest ago first,\n"
  "instead of in the queue's order.  The limits combine: a claim takes what\n"
  "all of them allow.  Without options, print the settings; with them,\n"
  "change them and print the result.\n"
  "\n"
  "  -c, --concurrency N   at most N jobs running (1 to 1000000); 0: no limit\n"
  "  -r, --rate N/PERIOD   at most N starts (1 to 100000) in any PERIOD, a\n"
  "                        duration of 1 microsecond to a year: 100/1s, 10/m,\n"
  "                        0.5s, 90 (seconds), 2h; a bare unit is one of it\n"
  "                        (100/s); 0: no rate limit\n"
  "  -g, --per-group N     at most N jobs of one group running (1 to 1000000)\n"
  "  -f, --fair            claim round-robin across tenants\n"
  "  -F, --no-fair         claim in the queue's order (the default); forgets\n"
  "                        the tenants' turns\n"
  "  -j, --json            print {\"queue\":Q,\"concurrency\":N,\"rate\":\n"
  "                        {\"max_starts\":N,\"period_us\":P},\"per_group\":N,\n"
  "                        \"fair\":B}, concurrency and rate null where there\n"
  "                        is no limit\n"
  "  -h, --help            print this help\n";

static int print_limit(const char *queue, const cli_limits *l, int json) {
  static const char *const header[] = {"queue", "concurrency", "rate", "per_group", "fair"};
  char name[CLI_NAME_SIZE], count[24], rate[96], per_group[24];
  const char *row[5];
  cli_table t;
  if (json) {
    return cli_print_json(cli_limits_json(queue, l));
  }
  snprintf(count, sizeof count, l->concurrency ? "%" PRId64 : "-", l->concurrency);
  cli_format_rate(l->max_starts, l->period_us, rate, sizeof rate);
  snprintf(per_group, sizeof per_group, "%" PRId64, l->per_group);
  row[0] = cli_name(queue, name);
  row[1] = count;
  row[2] = rate;
  row[3] = per_group;
  row[4] = l->fair ? "yes" : "no";
  return cli_table_finish(&t, cli_table_init(&t, 5, header) == 0 && cli_table_add(&t, row) == 0,
                          "limit");
}

/* rc, or SQLQ_OK for the SQLQ_SCHEMA of a database too old for a setting
** that was not asked for (it shows the setting's default). */
static int unless_older(int rc, int asked) {
  return rc == SQLQ_SCHEMA && !asked ? SQLQ_OK : rc;
}

/* Set the limits asked for in set (each -1: left as it is; the rate's
** period goes with max_starts), then read them all into out.  A database
** below the schema version of rate limits (8), or of per-group limits and
** fair queues (10), shows their defaults, unless one was asked for. */
int cli_limits_apply(sqlq_db *db, const char *queue, const cli_limits *set, cli_limits *out) {
  int rc = set->concurrency >= 0 ? sqlq_concurrency_set(db, queue, set->concurrency) : SQLQ_OK;
  if (rc == SQLQ_OK && set->max_starts >= 0)
    rc = sqlq_rate_set(db, queue, set->max_starts, set->period_us);
  if (rc == SQLQ_OK && set->per_group >= 0) rc = sqlq_group_limit_set(db, queue, set->per_group);
  if (rc == SQLQ_OK && set->fair >= 0) rc = sqlq_fair_set(db, queue, set->fair);
  if (rc == SQLQ_OK) rc = sqlq_concurrency_get(db, queue, &out->concurrency);
  if (rc == SQLQ_OK)
    rc = unless_older(sqlq_rate_get(db, queue, &out->max_starts, &out->period_us),
                      set->max_starts >= 0);
  if (rc == SQLQ_OK)
    rc = unless_older(sqlq_group_limit_get(db, queue, &out->per_group), set->per_group >= 0);
  if (rc == SQLQ_OK) rc = unless_older(sqlq_fair_get(db, queue, &out->fair), set->fair >= 0);
  return rc;
}

int cmd_limit(const cli_global *g, int argc, char **argv) {
  static const struct option options[] = {
    {"concurrency", required_argument, NULL, 'c'},
    {"rate", required_argument, NULL, 'r'},
    {"per-group", required_argument, NULL, 'g'},
    {"fair", no_argument, NULL, 'f'},
    {"no-fair", no_argument, NULL, 'F'},
    {"json", no_argument, NULL, 'j'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  cli_limits set = {-1, -1, 0, -1, -1}, l = {0, 0, 0, 1, 0};
  long long number;
  int c, json = 0, code, rc;
  sqlq_db *db;

  while ((c = cli_getopt("limit", argc, argv, ":c:r:g:fFjh", options)) != -1) {
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
    case 'r':
      if (cli_parse_rate(optarg, &set.max_starts, &set.period_us) != 0) {
        return cli_usage_error("limit",
                               "rate '%.40s' is not N/PERIOD (N 0 to %d, PERIOD 1us to a year,"
                               " like 100/1s or 10/m)",
                               optarg, SQLQ_RATE_MAX_STARTS_MAX);
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
  rc = cli_limits_apply(db, argv[optind], &set, &l);
  code = rc == SQLQ_OK ? print_limit(argv[optind], &l, json) : cli_fail(db, rc, "limit");
  sqlq_close(db);
  return code;
}
