/*
** cmd_cron.c -- `sqlq cron`: add, list, remove, pause and resume the
** schedules of periodic jobs, and run scheduling passes (sqlq_cron_*()).
*/
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char usage[] =
  "usage: sqlq [--url URL] cron add [--tz ZONE] [--missed POLICY] NAME SPEC QUEUE [PAYLOAD]\n"
  "       sqlq [--url URL] cron list [--json]\n"
  "       sqlq [--url URL] cron remove|pause|resume NAME\n"
  "       sqlq [--url URL] cron run [--once]\n"
  "\n"
  "A schedule enqueues one job (PAYLOAD, empty without it) on QUEUE at each\n"
  "tick of SPEC: five crontab fields \"MIN HOUR DAY MONTH WEEKDAY\" (lists,\n"
  "ranges, steps, names such as MON and JAN), a macro (@hourly, @daily,\n"
  "@weekly, @monthly, @yearly) or an interval (\"@every 30s\", units s m h d).\n"
  "Exactly one job per tick, however many schedulers run: every `sqlq work`\n"
  "runs scheduling passes (unless --no-cron), and so does `cron run`.\n"
  "\n"
  "  add      add NAME, or replace it (its next tick counts from now)\n"
  "           --tz ZONE       the time zone of SPEC, a name of the tz\n"
  "                           database (default UTC)\n"
  "           --missed POLICY what a late pass does with the ticks it\n"
  "                           missed: skip (default: only a tick at most\n"
  "                           60 s late runs), once (the latest), all, or N\n"
  "                           (the latest N, 1 to 1000)\n"
  "  list     print the schedules (--json: an array of objects)\n"
  "  remove   remove NAME\n"
  "  pause    stop NAME's ticks\n"
  "  resume   start them again from now (the ticks missed are not run)\n"
  "  run      run scheduling passes until SIGTERM or SIGINT; --once: one\n"
  "           pass, and print how many jobs it enqueued\n";

/* The flags of a cron subcommand. */
typedef struct cron_flags {
  int json;         /* --json */
  int once;         /* --once */
  const char *zone; /* --tz, NULL without */
  int missed;       /* --missed, SQLQ_CRON_SKIP without */
} cron_flags;

/* Parse the POLICY of --missed into *missed; 0, or -1 on garbage. */
static int parse_policy(const char *s, int *missed) {
  static const struct {
    const char *name;
    int missed;
  } names[] = {{"skip", SQLQ_CRON_SKIP}, {"once", SQLQ_CRON_ONCE}, {"all", SQLQ_CRON_ALL}};
  long long n;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(s, names[i].name) == 0) {
      *missed = names[i].missed;
      return 0;
    }
  if (cli_parse_int(s, 1, SQLQ_CRON_MISSED_MAX, &n) != 0) return -1;
  *missed = (int)n;
  return 0;
}

/* Parse the flags of subcommand cmd into *f: --help always, the others
** when their letter is in allowed ("j" --json, "o" --once, "z" --tz, "m"
** --missed).  Then check that between min and max arguments follow.
** Returns -1 to go on, else the exit code (0 after printing the help). */
static int parse_flags(const char *cmd, const char *allowed, int argc, char **argv, cron_flags *f,
                       int min, int max, const char *expected) {
  static const struct option options[] = {
    {"json", no_argument, NULL, 'j'},     {"once", no_argument, NULL, 'o'},
    {"tz", required_argument, NULL, 'z'}, {"missed", required_argument, NULL, 'm'},
    {"help", no_argument, NULL, 'h'},     {NULL, 0, NULL, 0},
  };
  int c, code = 0;
  memset(f, 0, sizeof *f);
  while ((c = cli_getopt_allowed(cmd, usage, allowed, argc, argv, ":joz:m:h", options, &code)) !=
         -1) {
    if (c == 0) {
      return code;
    }
    if (c == 'j') {
      f->json = 1;
    } else if (c == 'o') {
      f->once = 1;
    } else if (c == 'z') {
      f->zone = optarg;
    } else if (c == 'm' && parse_policy(optarg, &f->missed) != 0) {
      return cli_usage_error(cmd,
                             "missed '%.40s' is not skip, once, all or a number of ticks from 1 "
                             "to %d",
                             optarg, SQLQ_CRON_MISSED_MAX);
    }
  }
  if (argc - optind < min || argc - optind > max) {
    return cli_usage_error(cmd, "expected %s", expected);
  }
  return -1;
}

static int cron_add(const cli_global *g, int argc, char **argv) {
  cron_flags f;
  sqlq_db *db;
  int code = parse_flags("cron add", "zm", argc, argv, &f, 3, 4, "NAME SPEC QUEUE [PAYLOAD]");
  if (code >= 0) {
    return code;
  }
  if ((code = cli_check_queue("cron add", argv[optind + 2])) != 0) {
    return code;
  }
  sqlq_schedule s = {.name = argv[optind],
                     .spec = argv[optind + 1],
                     .zone = f.zone,
                     .queue = argv[optind + 2],
                     .payload = argc - optind > 3 ? argv[optind + 3] : NULL,
                     .payload_len = argc - optind > 3 ? strlen(argv[optind + 3]) : 0,
                     .missed = f.missed};
  if ((db = cli_open(g, &code)) == NULL) {
    return code;
  }
  return cli_done(db, sqlq_cron_add(db, &s), "cron add");
}

/* remove, pause and resume: one call on NAME. */
static int on_name(const cli_global *g, int argc, char **argv, const char *cmd,
                   int (*call)(sqlq_db *, const char *)) {
  cron_flags f;
  sqlq_db *db;
  int code = parse_flags(cmd, "", argc, argv, &f, 1, 1, "NAME");
  if (code >= 0) {
    return code;
  }
  if ((db = cli_open(g, &code)) == NULL) {
    return code;
  }
  return cli_done(db, call(db, argv[optind]), cmd);
}

static int cron_remove(const cli_global *g, int argc, char **argv) {
  return on_name(g, argc, argv, "cron remove", sqlq_cron_remove);
}

static int cron_pause(const cli_global *g, int argc, char **argv) {
  return on_name(g, argc, argv, "cron pause", sqlq_cron_pause);
}

static int cron_resume(const cli_global *g, int argc, char **argv) {
  return on_name(g, argc, argv, "cron resume", sqlq_cron_resume);
}

/* ---------------------------------------------------------------------
** list
*/

static int print_table(const sqlq_schedule *all, size_t n) {
  static const char *const header[] = {"name", "spec", "zone", "queue", "missed", "next", "last"};
  cli_table t;
  int ok = cli_table_init(&t, 7, header) == 0;
  for (size_t i = 0; ok && i < n; i++) {
    char name[CLI_NAME_SIZE], queue[CLI_NAME_SIZE], spec[CLI_NAME_SIZE * 2 + 4],
      zone[CLI_NAME_SIZE];
    char policy[16], next[CLI_TIME_SIZE], last[CLI_TIME_SIZE];
    const char *row[7];
    cli_escape((const unsigned char *)all[i].spec, strlen(all[i].spec), sizeof spec - 4, spec);
    cli_format_time(all[i].next_at_us, 0, next);
    cli_format_time(all[i].last_at_us, 0, last);
    row[0] = cli_name(all[i].name, name);
    row[1] = spec;
    row[2] = cli_name(all[i].zone, zone);
    row[3] = cli_name(all[i].queue, queue);
    row[4] = cli_cron_policy_text(all[i].missed, policy);
    row[5] = all[i].paused ? "paused" : next;
    row[6] = all[i].last_at_us ? last : "-";
    ok = cli_table_add(&t, row) == 0;
  }
  return cli_table_finish(&t, ok, "cron list");
}

static int cron_list(const cli_global *g, int argc, char **argv) {
  sqlq_schedule *all = NULL;
  size_t n = 0;
  cron_flags f;
  sqlq_db *db;
  int rc, code = parse_flags("cron list", "j", argc, argv, &f, 0, 0, "no arguments");
  if (code >= 0) {
    return code;
  }
  if ((db = cli_open(g, &code)) == NULL) {
    return code;
  }
  rc = sqlq_cron_list(db, &all, &n);
  if (rc != SQLQ_OK) {
    code = cli_fail(db, rc, "cron list");
  } else if (f.json) {
    json_t *array = json_array();
    for (size_t i = 0; array != NULL && i < n; i++) {
      json_array_append_new(array, cli_schedule_json(&all[i]));
    }
    code = cli_print_json(array);
  } else {
    code = print_table(all, n);
  }
  sqlq_schedules_free(all, n);
  sqlq_close(db);
  return code;
}

/* ---------------------------------------------------------------------
** run
*/

/* Passes in a thread until SIGTERM or SIGINT, which this thread waits
** for with sigwait(). */
static int run_until_signal(const cli_global *g) {
  sigset_t stop, old;
  int code = 0, sig;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, &old);
  cli_cron *c = cli_cron_start(g, "cron run", 0, &code);
  if (c != NULL) {
    sigwait(&stop, &sig);
    cli_cron_stop(c);
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return code;
}

static int cron_run(const cli_global *g, int argc, char **argv) {
  cron_flags f;
  sqlq_db *db;
  size_t enqueued = 0;
  int rc, code = parse_flags("cron run", "o", argc, argv, &f, 0, 0, "no arguments");
  if (code >= 0) {
    return code;
  }
  /* A first pass here, so that a database that cannot run them says so in
  ** the exit code. */
  if ((db = cli_open(g, &code)) == NULL) {
    return code;
  }
  rc = sqlq_cron_tick(db, 0, &enqueued, NULL);
  if (rc != SQLQ_OK || f.once) {
    if (rc == SQLQ_OK) {
      printf("%zu\n", enqueued);
    }
    return cli_done(db, rc, "cron run");
  }
  sqlq_close(db);
  return run_until_signal(g);
}

int cmd_cron(const cli_global *g, int argc, char **argv) {
  static const cli_sub subs[] = {
    {"add", cron_add},     {"list", cron_list},     {"remove", cron_remove},
    {"pause", cron_pause}, {"resume", cron_resume}, {"run", cron_run},
  };
  return cli_subcommand(g, "cron", usage, subs, sizeof subs / sizeof subs[0], argc, argv);
}
