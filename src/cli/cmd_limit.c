/*
** cmd_limit.c -- `sqlq limit`: show or set the flow limits of a queue (its
** concurrency limit: at most N of its jobs running at once; its rate
** limit: at most N of its jobs starting in any period).
*/
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>

#include "cli.h"

static const char limit_usage[] =
  "usage: sqlq [--url URL] limit [--concurrency N] [--rate N/PERIOD] [--json] QUEUE\n"
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
  "until its oldest start leaves it.  Without --concurrency or --rate, print\n"
  "the settings; with them, change them and print the result.\n"
  "\n"
  "  -c, --concurrency N   at most N jobs running (1 to 1000000); 0: no limit\n"
  "  -r, --rate N/PERIOD   at most N starts (1 to 100000) in any PERIOD, a\n"
  "                        duration of 1 microsecond to a year: 100/1s, 10/m,\n"
  "                        0.5s, 90 (seconds), 2h; a bare unit is one of it\n"
  "                        (100/s); 0: no rate limit\n"
  "  -j, --json            print {\"queue\":Q,\"concurrency\":N,\"rate\":\n"
  "                        {\"max_starts\":N,\"period_us\":P}}, null where\n"
  "                        there is no limit\n"
  "  -h, --help            print this help\n";

/* A queue's limits; 0 where there is none. */
struct limits {
  int64_t concurrency, max_starts, period_us;
};

static json_t *rate_json(const struct limits *l) {
  if (l->max_starts == 0) {
    return json_null();
  }
  json_t *r = json_object();
  json_object_set_new(r, "max_starts", json_integer(l->max_starts));
  json_object_set_new(r, "period_us", json_integer(l->period_us));
  return r;
}

static int print_limit(const char *queue, const struct limits *l, int json) {
  static const char *const header[] = {"queue", "concurrency", "rate"};
  char name[CLI_NAME_SIZE], count[24], rate[96];
  const char *row[3];
  cli_table t;
  if (json) {
    json_t *o = json_object();
    json_object_set_new(o, "queue", cli_json_text(queue));
    json_object_set_new(o, "concurrency",
                        l->concurrency ? json_integer(l->concurrency) : json_null());
    json_object_set_new(o, "rate", rate_json(l));
    return cli_print_json(o);
  }
  snprintf(count, sizeof count, l->concurrency ? "%" PRId64 : "-", l->concurrency);
  cli_format_rate(l->max_starts, l->period_us, rate, sizeof rate);
  row[0] = cli_name(queue, name);
  row[1] = count;
  row[2] = rate;
  return cli_table_finish(&t, cli_table_init(&t, 3, header) == 0 && cli_table_add(&t, row) == 0,
                          "limit");
}

/* Set what was asked (new_concurrency >= 0, new_max_starts >= 0), then
** read both limits into l.  A database without rate limits (below schema
** version 8) shows none, unless one was asked for. */
static int apply(sqlq_db *db, const char *queue, long long new_concurrency, int64_t new_max_starts,
                 int64_t new_period_us, struct limits *l) {
  int rc = SQLQ_OK;
  if (new_concurrency >= 0) {
    rc = sqlq_concurrency_set(db, queue, new_concurrency);
  }
  if (rc == SQLQ_OK && new_max_starts >= 0) {
    rc = sqlq_rate_set(db, queue, new_max_starts, new_period_us);
  }
  if (rc == SQLQ_OK) {
    rc = sqlq_concurrency_get(db, queue, &l->concurrency);
  }
  if (rc == SQLQ_OK) {
    rc = sqlq_rate_get(db, queue, &l->max_starts, &l->period_us);
    if (rc == SQLQ_SCHEMA && new_max_starts < 0) {
      rc = SQLQ_OK;
    }
  }
  return rc;
}

int cmd_limit(const cli_global *g, int argc, char **argv) {
  static const struct option options[] = {
    {"concurrency", required_argument, NULL, 'c'},
    {"rate", required_argument, NULL, 'r'},
    {"json", no_argument, NULL, 'j'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  long long new_concurrency = -1;
  int64_t new_max_starts = -1, new_period_us = 0;
  struct limits l = {0, 0, 0};
  int c, json = 0, code, rc;
  sqlq_db *db;

  while ((c = cli_getopt("limit", argc, argv, ":c:r:jh", options)) != -1) {
    switch (c) {
    case 'c':
      if (cli_parse_int(optarg, 0, SQLQ_MAX_RUNNING_MAX, &new_concurrency) != 0) {
        return cli_usage_error("limit", "concurrency '%.40s' is not a whole number 0 to %d", optarg,
                               SQLQ_MAX_RUNNING_MAX);
      }
      break;
    case 'r':
      if (cli_parse_rate(optarg, &new_max_starts, &new_period_us) != 0) {
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
  rc = apply(db, argv[optind], new_concurrency, new_max_starts, new_period_us, &l);
  code = rc == SQLQ_OK ? print_limit(argv[optind], &l, json) : cli_fail(db, rc, "limit");
  sqlq_close(db);
  return code;
}
