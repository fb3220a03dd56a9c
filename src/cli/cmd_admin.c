/*
** cmd_admin.c -- the queue administration commands: stats, jobs, retry,
** pause, resume and purge.  Tables are for people; --json output is for
** programs and is printed compact, keys in a fixed order.
*/
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Widest preview of a payload or an error in the jobs table, in bytes of
** escaped text. */
#define PREVIEW_MAX 40

static const char stats_usage[] =
  "usage: sqlq [--url URL] stats [--json] [--warn NAME=LIMIT]... [QUEUE]\n"
  "\n"
  "Count the jobs of QUEUE, or of every queue, by state: ready (due now),\n"
  "scheduled (due later), running (leased) and dead (out of attempts).\n"
  "Bytes of names outside printable ASCII are shown escaped (\\xHH).\n"
  "\n"
  "Without QUEUE, then show the database's health: what holds the queues\n"
  "back (an old snapshot, a long transaction, a WAL a reader keeps from its\n"
  "checkpoint) and who holds it, one item a row (see docs/health.md).  Each\n"
  "item over its threshold also prints a line \"sqlq: warning: ...\" on\n"
  "stderr; the exit status stays 0.\n"
  "\n"
  "  -j, --json              print {\"queues\":[{\"queue\":Q,\"ready\":N,\n"
  "                          \"scheduled\":N,\"running\":N,\"dead\":N,\n"
  "                          \"paused\":BOOL},...]}, without QUEUE with\n"
  "                          \"health\":[{\"name\":S,\"value\":N,\"unit\":S,\n"
  "                          \"threshold\":N,\"over\":BOOL,\"holder\":S,\n"
  "                          \"started_at\":TIME,\"detail\":S},...] after it\n"
  "  -w, --warn NAME=LIMIT   warn when health item NAME is over LIMIT (a\n"
  "                          whole number >= 0 in the item's unit) instead of\n"
  "                          its default threshold; 0: never; repeatable\n"
  "  -h, --help              print this help\n";

static const char jobs_usage[] =
  "usage: sqlq [--url URL] jobs [--state STATE] [--limit N] [--json] QUEUE\n"
  "\n"
  "List the jobs of QUEUE in the order they would be claimed.  With --state\n"
  "done, list its finished jobs instead, newest first: those that workers\n"
  "whose URL has history=1 acked and its retention still keeps (see `sqlq\n"
  "retention`); their time is when they finished (finished_at).\n"
  "\n"
  "  -s, --state STATE  only jobs in STATE: ready, scheduled, waiting (for\n"
  "                     other jobs: `push --after`), running or dead; or done\n"
  "                     (finished, from history)\n"
  "  -n, --limit N      at most N jobs (default: all)\n"
  "  -j, --json         print a JSON array with every field of every job; the\n"
  "                     payload is \"payload\" (a string) when it is UTF-8,\n"
  "                     else \"payload_base64\"\n"
  "  -h, --help         print this help\n";

static const char retry_usage[] =
  "usage: sqlq [--url URL] retry QUEUE ID...\n"
  "       sqlq [--url URL] retry --dead QUEUE\n"
  "\n"
  "Make the jobs ID... (dead or scheduled), or with --dead every dead job of\n"
  "QUEUE, ready to run now with a fresh count of attempts.  Prints\n"
  "\"N jobs retried\".\n"
  "\n"
  "  -d, --dead   retry every dead job of QUEUE\n"
  "  -h, --help   print this help\n";

static const char pause_usage[] =
  "usage: sqlq [--url URL] pause QUEUE\n"
  "\n"
  "Pause QUEUE: workers claim none of its jobs until it is resumed.\n";

static const char resume_usage[] = "usage: sqlq [--url URL] resume QUEUE\n"
                                   "\n"
                                   "Resume a paused QUEUE.\n";

static const char purge_usage[] =
  "usage: sqlq [--url URL] purge QUEUE\n"
  "\n"
  "Delete every job of QUEUE, whatever its state; running jobs' results will\n"
  "be refused.  Prints \"N jobs purged\".  QUEUE may hold control characters\n"
  "(a queue a plain-SQL writer named so): give the name that stats shows\n"
  "escaped in bash's $'...' quoting.\n";

/* ---------------------------------------------------------------------
** Flags and arguments.
*/

/* Parse the flags of a command that takes none but --help.  Returns -1 to
** go on, else the exit code (0 after printing the help). */
static int parse_no_flags(const char *cmd, const char *usage, int argc, char **argv) {
  static const struct option options[] = {
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  int c = cli_getopt(cmd, argc, argv, ":h", options);
  if (c == 'h') {
    fputs(usage, stdout);
    return 0;
  }
  return c == -1 ? -1 : EXIT_USAGE;
}

/* Check that min to max (-1: any number of) positional arguments follow
** the flags and that the first, if any, is a queue name.  Returns 0 or the
** exit code. */
static int check_args(const char *cmd, int argc, char **argv, int min, int max,
                      const char *expected) {
  int have = argc - optind;
  if (have < min || (max >= 0 && have > max)) {
    return cli_usage_error(cmd, "expected %s", expected);
  }
  return have > 0 ? cli_check_queue(cmd, argv[optind]) : 0;
}

/* ---------------------------------------------------------------------
** pause, resume, purge: one queue, one call.
*/

typedef int (*queue_action)(sqlq_db *db, const char *queue);

static int do_pause(sqlq_db *db, const char *queue) {
  int rc = sqlq_pause(db, queue);
  return rc == SQLQ_OK ? 0 : cli_fail(db, rc, "pause");
}

static int do_resume(sqlq_db *db, const char *queue) {
  int rc = sqlq_resume(db, queue);
  return rc == SQLQ_OK ? 0 : cli_fail(db, rc, "resume");
}

static int do_purge(sqlq_db *db, const char *queue) {
  size_t count = 0;
  int rc = sqlq_purge(db, queue, &count);
  if (rc != SQLQ_OK) {
    return cli_fail(db, rc, "purge");
  }
  printf("%zu jobs purged\n", count);
  return 0;
}

/* Run a command of the form `sqlq CMD QUEUE`: act on the queue. */
static int queue_command(const cli_global *g, const char *cmd, const char *usage, int argc,
                         char **argv, queue_action act) {
  sqlq_db *db;
  int code = parse_no_flags(cmd, usage, argc, argv);
  if (code >= 0 || (code = check_args(cmd, argc, argv, 1, 1, "QUEUE")) != 0) {
    return code;
  }
  if ((db = cli_open(g, &code)) == NULL) {
    return code;
  }
  code = act(db, argv[optind]);
  sqlq_close(db);
  return code;
}

int cmd_pause(const cli_global *g, int argc, char **argv) {
  return queue_command(g, "pause", pause_usage, argc, argv, do_pause);
}

int cmd_resume(const cli_global *g, int argc, char **argv) {
  return queue_command(g, "resume", resume_usage, argc, argv, do_resume);
}

int cmd_purge(const cli_global *g, int argc, char **argv) {
  return queue_command(g, "purge", purge_usage, argc, argv, do_purge);
}

/* ---------------------------------------------------------------------
** stats
*/

static int print_stats_table(const sqlq_queue_stats *st, size_t n) {
  static const char *const header[] = {"queue", "ready", "scheduled", "running", "dead", "paused"};
  cli_table t;
  size_t i;
  int ok = cli_table_init(&t, 6, header) == 0;
  for (i = 0; ok && i < n; i++) {
    char nums[4][24], name[CLI_NAME_SIZE];
    const char *row[6];
    snprintf(nums[0], sizeof nums[0], "%" PRId64, st[i].ready);
    snprintf(nums[1], sizeof nums[1], "%" PRId64, st[i].scheduled);
    snprintf(nums[2], sizeof nums[2], "%" PRId64, st[i].running);
    snprintf(nums[3], sizeof nums[3], "%" PRId64, st[i].dead);
    row[0] = cli_name(st[i].queue, name);
    row[1] = nums[0];
    row[2] = nums[1];
    row[3] = nums[2];
    row[4] = nums[3];
    row[5] = st[i].paused ? "yes" : "no";
    ok = cli_table_add(&t, row) == 0;
  }
  return cli_table_finish(&t, ok, "stats");
}

/* ---------------------------------------------------------------------
** stats: health
*/

/* A --warn NAME=LIMIT override of a health item's threshold. */
typedef struct warn_limit {
  const char *name; /* points into argv, name_len bytes before the "=" */
  size_t name_len;
  long long limit;
} warn_limit;

/* Parse the value of --warn into *w.  Returns 0, or prints one line and
** returns EXIT_USAGE. */
static int parse_warn(const char *arg, warn_limit *w) {
  const char *eq = strchr(arg, '=');
  size_t len = eq ? (size_t)(eq - arg) : 0;
  if (eq == NULL || len == 0 || len > 64 ||
      strspn(arg, "abcdefghijklmnopqrstuvwxyz0123456789_") != len) {
    return cli_usage_error("stats", "--warn takes NAME=LIMIT, not '%.40s'", arg);
  }
  if (cli_parse_int(eq + 1, 0, INT64_MAX, &w->limit) != 0) {
    return cli_usage_error("stats", "--warn limit '%.40s' is not a whole number >= 0", eq + 1);
  }
  w->name = arg;
  w->name_len = len;
  return 0;
}

/* Apply the --warn overrides to the items: the last one given for a name
** wins. */
static void apply_warn(sqlq_health_item *items, size_t n, const warn_limit *w, size_t n_w) {
  size_t i, k;
  for (i = 0; i < n; i++) {
    for (k = 0; k < n_w; k++) {
      if (strlen(items[i].name) == w[k].name_len &&
          memcmp(items[i].name, w[k].name, w[k].name_len) == 0) {
        items[i].threshold = w[k].limit;
        items[i].over = w[k].limit > 0 && items[i].value > w[k].limit;
      }
    }
  }
}

/* holder or "-", escaped for a terminal into out (HOLDER_MAX + 4 bytes). */
#define HOLDER_MAX 80
static const char *shown_text(const char *text, char *out) {
  if (text == NULL) {
    return "-";
  }
  cli_escape((const unsigned char *)text, strlen(text), HOLDER_MAX, out);
  return out;
}

static int print_health_table(const sqlq_health_item *items, size_t n) {
  static const char *const header[] = {"health", "value", "threshold", "holder", "since"};
  cli_table t;
  size_t i;
  int ok;
  putchar('\n');
  ok = cli_table_init(&t, 5, header) == 0;
  for (i = 0; ok && i < n; i++) {
    const sqlq_health_item *h = &items[i];
    char value[48], threshold[48], since[CLI_TIME_SIZE], holder[HOLDER_MAX + 4];
    const char *row[5];
    snprintf(value, sizeof value, "%" PRId64 " %s", h->value, h->unit);
    if (h->threshold > 0) {
      snprintf(threshold, sizeof threshold, "%" PRId64 " %s", h->threshold, h->unit);
    } else {
      strcpy(threshold, "-");
    }
    if (h->started_at_us != 0) {
      cli_format_time(h->started_at_us, 0, since);
    } else {
      strcpy(since, "-");
    }
    row[0] = h->name;
    row[1] = value;
    row[2] = threshold;
    row[3] = shown_text(h->holder, holder);
    row[4] = since;
    ok = cli_table_add(&t, row) == 0;
  }
  return cli_table_finish(&t, ok, "stats");
}

/* One line on stderr for each item over its threshold. */
static void warn_health(const sqlq_health_item *items, size_t n) {
  char holder[HOLDER_MAX + 4], detail[HOLDER_MAX + 4];
  size_t i;
  for (i = 0; i < n; i++) {
    const sqlq_health_item *h = &items[i];
    if (h->over) {
      fprintf(stderr, "sqlq: warning: %s is %" PRId64 " %s, over %" PRId64 "%s%s%s%s%s\n", h->name,
              h->value, h->unit, h->threshold, h->holder ? "; held by " : "",
              h->holder ? shown_text(h->holder, holder) : "", h->detail ? " (" : "",
              h->detail ? shown_text(h->detail, detail) : "", h->detail ? ")" : "");
    }
  }
}

/* Print the queues, and without a queue the health after them. */
static int print_stats(sqlq_db *db, const sqlq_queue_stats *st, size_t n, int json, int health,
                       const warn_limit *w, size_t n_w) {
  sqlq_health_item *items = NULL;
  size_t n_items = 0;
  int code, rc = health ? sqlq_health(db, &items, &n_items) : SQLQ_OK;
  if (rc != SQLQ_OK) {
    /* The counts are still worth having. */
    fprintf(stderr, "sqlq: warning: stats: cannot read the health: %s\n", sqlq_errmsg(db));
    health = 0;
  }
  apply_warn(items, n_items, w, n_w);
  if (json) {
    json_t *out = json_pack("{s:o}", "queues", cli_stats_json(st, n));
    if (out != NULL && health) {
      json_object_set_new(out, "health", cli_health_json(items, n_items));
    }
    code = cli_print_json(out);
  } else {
    code = print_stats_table(st, n);
    if (code == 0 && health) {
      code = print_health_table(items, n_items);
    }
  }
  if (health) {
    warn_health(items, n_items);
  }
  sqlq_health_items_free(items, n_items);
  return code;
}

int cmd_stats(const cli_global *g, int argc, char **argv) {
  static const struct option options[] = {
    {"json", no_argument, NULL, 'j'},
    {"warn", required_argument, NULL, 'w'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  sqlq_queue_stats *st = NULL, zero;
  warn_limit *warns;
  const char *queue;
  size_t n = 0, n_warns = 0;
  sqlq_db *db;
  int c, json = 0, code, rc;

  /* At most one --warn per word of the command line. */
  if ((warns = calloc((size_t)argc + 1, sizeof *warns)) == NULL) {
    fputs("sqlq: stats: out of memory\n", stderr);
    return EXIT_SOFTWARE;
  }
  while ((c = cli_getopt("stats", argc, argv, ":jw:h", options)) != -1) {
    if (c == 'j') {
      json = 1;
    } else if (c == 'w') {
      if ((code = parse_warn(optarg, &warns[n_warns++])) != 0) {
        free(warns);
        return code;
      }
    } else if (c == 'h') {
      fputs(stats_usage, stdout);
      free(warns);
      return 0;
    } else {
      free(warns);
      return EXIT_USAGE;
    }
  }
  if ((code = check_args("stats", argc, argv, 0, 1, "[QUEUE]")) != 0) {
    free(warns);
    return code;
  }
  queue = optind < argc ? argv[optind] : NULL;
  if (queue != NULL && n_warns > 0) {
    free(warns);
    return cli_usage_error("stats", "--warn is for the health, which stats shows without QUEUE");
  }
  if ((db = cli_open(g, &code)) == NULL) {
    free(warns);
    return code;
  }
  rc = sqlq_stats(db, queue, &st, &n);
  if (rc != SQLQ_OK) {
    code = cli_fail(db, rc, "stats");
  } else if (queue != NULL && n == 0) {
    /* A queue without jobs is a queue with zero of each. */
    memset(&zero, 0, sizeof zero);
    snprintf(zero.queue, sizeof zero.queue, "%s", queue);
    code = print_stats(db, &zero, 1, json, 0, NULL, 0);
  } else {
    code = print_stats(db, st, n, json, queue == NULL, warns, n_warns);
  }
  sqlq_queue_stats_free(st, n);
  sqlq_close(db);
  free(warns);
  return code;
}

/* ---------------------------------------------------------------------
** jobs
*/

static int print_jobs_json(const sqlq_job_info *jobs, size_t n) {
  json_t *array = json_array();
  size_t i;
  for (i = 0; array != NULL && i < n; i++) {
    json_array_append_new(array, cli_job_json(&jobs[i]));
  }
  return cli_print_json(array);
}

static int add_job_row(cli_table *t, const sqlq_job_info *j) {
  char id[24], priority[16], attempts[32], run_at[CLI_TIME_SIZE];
  char error[PREVIEW_MAX + 4], payload[PREVIEW_MAX + 4];
  const char *row[7];
  snprintf(id, sizeof id, "%" PRId64, j->id);
  snprintf(priority, sizeof priority, "%d", j->priority);
  snprintf(attempts, sizeof attempts, "%d/%d", j->attempts, j->max_attempts);
  if (j->run_at_us != 0) {
    cli_format_time(j->run_at_us, 0, run_at);
  } else {
    strcpy(run_at, "-"); /* waiting: no time yet */
  }
  if (j->last_error != NULL) {
    cli_escape((const unsigned char *)j->last_error, strlen(j->last_error), PREVIEW_MAX, error);
  }
  cli_escape(j->payload, j->payload_len, PREVIEW_MAX, payload);
  row[0] = id;
  row[1] = cli_state_name(j->state);
  row[2] = priority;
  row[3] = attempts;
  row[4] = run_at;
  row[5] = j->last_error != NULL ? error : "-";
  row[6] = payload;
  return cli_table_add(t, row);
}

static int print_jobs_table(const sqlq_job_info *jobs, size_t n, int state) {
  const char *const header[] = {
    "id",    "state",  "priority", "attempts", state == SQLQ_STATE_DONE ? "finished_at" : "run_at",
    "error", "payload"};
  cli_table t;
  size_t i;
  int ok = cli_table_init(&t, 7, header) == 0;
  for (i = 0; ok && i < n; i++) {
    ok = add_job_row(&t, &jobs[i]) == 0;
  }
  return cli_table_finish(&t, ok, "jobs");
}

int cmd_jobs(const cli_global *g, int argc, char **argv) {
  static const struct option options[] = {
    {"state", required_argument, NULL, 's'},
    {"limit", required_argument, NULL, 'n'},
    {"json", no_argument, NULL, 'j'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  sqlq_job_info *jobs = NULL;
  size_t n = 0;
  sqlq_db *db;
  long long limit = 0;
  int c, json = 0, state = 0, code, rc;

  while ((c = cli_getopt("jobs", argc, argv, ":s:n:jh", options)) != -1) {
    switch (c) {
    case 's':
      if ((state = cli_parse_state(optarg)) < 0) {
        return cli_usage_error(
          "jobs", "unknown state '%.40s' (ready, scheduled, running, dead, done)", optarg);
      }
      break;
    case 'n':
      if (cli_parse_limit("jobs", optarg, &limit) != 0) {
        return EXIT_USAGE;
      }
      break;
    case 'j':
      json = 1;
      break;
    case 'h':
      fputs(jobs_usage, stdout);
      return 0;
    default:
      return EXIT_USAGE;
    }
  }
  if ((code = check_args("jobs", argc, argv, 1, 1, "QUEUE")) != 0) {
    return code;
  }
  if ((db = cli_open(g, &code)) == NULL) {
    return code;
  }
  rc = sqlq_list(db, argv[optind], state, (size_t)limit, &jobs, &n);
  if (rc != SQLQ_OK) {
    code = cli_fail(db, rc, "jobs");
  } else {
    code = json ? print_jobs_json(jobs, n) : print_jobs_table(jobs, n, state);
  }
  sqlq_job_infos_free(jobs, n);
  sqlq_close(db);
  return code;
}

/* ---------------------------------------------------------------------
** retry
*/

int cmd_retry(const cli_global *g, int argc, char **argv) {
  static const struct option options[] = {
    {"dead", no_argument, NULL, 'd'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  int64_t *ids = NULL;
  size_t count = 0;
  sqlq_db *db;
  int c, dead = 0, code, rc, n_ids;

  while ((c = cli_getopt("retry", argc, argv, ":dh", options)) != -1) {
    if (c == 'd') {
      dead = 1;
    } else if (c == 'h') {
      fputs(retry_usage, stdout);
      return 0;
    } else {
      return EXIT_USAGE;
    }
  }
  if ((code = check_args("retry", argc, argv, 1, -1, "QUEUE ID... or --dead QUEUE")) != 0) {
    return code;
  }
  n_ids = argc - optind - 1;
  if (dead == (n_ids > 0)) {
    return cli_usage_error("retry", "give either job ids or --dead");
  }
  if (n_ids > 0 && (code = cli_parse_ids("retry", argv + optind + 1, n_ids, &ids)) != 0) {
    return code;
  }
  if ((db = cli_open(g, &code)) != NULL) {
    rc = sqlq_retry(db, argv[optind], ids, (size_t)n_ids, &count);
    if (rc == SQLQ_OK) {
      printf("%zu jobs retried\n", count);
    } else {
      code = cli_fail(db, rc, "retry");
    }
    sqlq_close(db);
  }
  free(ids);
  return code;
}
