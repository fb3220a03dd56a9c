/*
** cmd_bench.c -- `sqlq bench`: measure throughput and wake-up latency.
**
**   sqlq bench [--jobs N] [--workers W] [--producers P] [--batch B]
**              [--payload BYTES] [--backlog M] [--processes]
**              [--latency-samples K] [--queue NAME] [--json]
**              [--keep-backlog]
**   sqlq bench --ring | --pool [--jobs N] [--workers W] [--payload BYTES]
**              [--processes] [--queue NAME] [--json]
**   sqlq bench --drain --queue NAME [--workers W] [--batch B] [--work-us U]
**              [--processes] [--json]
**
** With --ring or --pool, W clients push N entries into a ring of
** BENCH_RING_CAPACITY, or take N items from a pool of BENCH_POOL_ITEMS,
** one call at a time (bench_ops.c); the ring or the pool is named after the
** queue and made anew.  With --drain, W workers claim B jobs at a time and
** ack them until the jobs that were ready in queue NAME at the start are
** done (bench_ops.c): the queue is neither purged nor filled, so that jobs
** made by others (the events of a table subscription) are measured.
** With --work-us U, each worker spends U microseconds per job it claimed,
** asleep like a handler waiting on the network, before it acks the batch.
**
** The run uses a dedicated queue (default "bench"), purged before and
** after.  When the URL is the built-in default (sqlite:sqlq.db), the bench
** works on a fresh SQLite file in a temporary directory ($TMPDIR, else
** /tmp) that is removed at the end, so that it never touches the queue file
** of the current directory and works from any directory; give another URL
** to bench that database.
**
** With --producers P, the N jobs of the throughput phase are split as
** evenly as possible between P threads, each enqueueing its share in
** batches of B through a handle of its own: on a server, one producer
** committing small batches is bound by the cost of one durable commit,
** while concurrent ones can share it (group commit).  The latency phase
** always has one producer.
**
** With --backlog M, M jobs of priority -1 are enqueued first and stay
** queued below the measured jobs during the throughput phase; they are
** dropped before the latency phase (a due backlog would keep idle workers
** from ever waiting) and the queue is purged at the end.
**
** With --keep-backlog as well (and --latency-samples 0), a queue whose
** first ready job in claim order is a backlog job -- the backlog a run
** before left, taken to hold M jobs -- is neither purged nor filled, and
** the queue is not purged at the end, so that the backlog stays for the
** next run.  A series of runs
** over one large backlog then fills it once, and what a run costs the
** server is the cost of its measured jobs alone.
*/
#include <ftw.h>
#include <getopt.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_int.h"

/* The URL the tool uses when none is given. */
#define BENCH_DEFAULT_URL "sqlite:sqlq.db"
/* The batch size used to fill the backlog. */
#define BENCH_BACKLOG_BATCH 5000

static void bench_usage(FILE *f) {
  fputs("usage: sqlq bench [--jobs N] [--workers W] [--producers P] "
        "[--batch B]\n"
        "                  [--payload BYTES] [--backlog M] [--processes]\n"
        "                  [--latency-samples K] [--limit L] [--rate N/PERIOD]\n"
        "                  [--tenants T] [--queue NAME] [--json]\n"
        "       sqlq bench --ring | --pool [--jobs N] [--workers W] "
        "[--payload BYTES]\n"
        "                  [--processes] [--queue NAME] [--json]\n"
        "       sqlq bench --drain --queue NAME [--workers W] [--batch B] "
        "[--work-us U]\n"
        "                  [--processes] [--json]\n"
        "       sqlq bench --steady RATE [--seconds S] [--workers W] [--batch B]\n"
        "                  [--mix] [--payload BYTES] [--queue NAME] [--json]\n"
        "  --steady RATE        one producer enqueues RATE jobs a second (1..1000000),\n"
        "                       one a commit, while W worker threads claim up to B and\n"
        "                       ack them; a line a second (with --json: a JSON object\n"
        "                       a line, the database's health included), then a summary\n"
        "  --seconds S          how long the --steady producer runs (default 60)\n"
        "  --mix                with --steady: one job in ten is delayed 1 to 3 s, one\n"
        "                       in twenty fails its first attempt (retried after 0.5 s),\n"
        "                       one in a thousand fails for good (dead)\n"
        "  --drain              W workers claim and ack the jobs ready in "
        "queue NAME\n"
        "  --ring               W clients push N entries into a ring of 1000, "
        "one per call\n"
        "  --pool               W clients take N items from a pool of 16, one "
        "per call\n"
        "  --jobs N             jobs of the throughput phase (default 10000)\n"
        "  --workers W          workers, 1..64 (default 2)\n"
        "  --producers P        threads enqueueing those jobs, each with its "
        "own\n"
        "                       connection, 1..64 (default 1)\n"
        "  --batch B            enqueue, claim and ack batch size, 1..10000 "
        "(default 100)\n"
        "  --work-us U          with --drain: microseconds of work per job, "
        "slept\n"
        "                       before the ack, 0..1000000 (default 0)\n"
        "  --payload BYTES      payload size, at least 8 (default 16)\n"
        "  --backlog M          low-priority jobs kept queued meanwhile "
        "(default 0)\n"
        "  --processes          forked worker processes instead of threads\n"
        "  --limit L            the queue's concurrency limit during the run, 0..1000000\n"
        "                       (default 0: none; see sqlq limit)\n"
        "  --rate N/PERIOD      the queue's rate limit during the run (see sqlq limit):\n"
        "                       report the starts' rate and the most in any window\n"
        "                       of PERIOD, on the database's clock\n"
        "  --tenants T          spread the jobs over T group keys of a fair queue with\n"
        "                       a per-group limit of 1000000, 0..100000 (default 0:\n"
        "                       no keys, not fair; see sqlq limit --fair)\n"
        "  --latency-samples K  single jobs timed from enqueue to claim "
        "(default 200)\n"
        "  --queue NAME         the queue used, purged before and after "
        "(default bench)\n"
        "  --json               print one JSON object\n"
        "  --keep-backlog       the queue holds the M backlog jobs already "
        "(priority < 0):\n"
        "                       neither purge nor fill it, before or after "
        "(needs\n"
        "                       --latency-samples 0)\n",
        f);
}

/* A flag taking a whole number: its option value, its name, its range and
** where it goes in bench_config. */
typedef struct bench_num_flag {
  int key;
  const char *name;
  long long min, max;
  size_t offset;
} bench_num_flag;

static const bench_num_flag bench_num_flags[] = {
  {'n', "jobs", 1, 1000000000LL, offsetof(bench_config, jobs)},
  {'w', "workers", 1, 64, offsetof(bench_config, workers)},
  {'r', "producers", 1, 64, offsetof(bench_config, producers)},
  {'b', "batch", 1, 10000, offsetof(bench_config, batch)},
  {'p', "payload", BENCH_STAMP_BYTES, 1048576, offsetof(bench_config, payload)},
  {'m', "backlog", 0, 1000000000LL, offsetof(bench_config, backlog)},
  {'k', "latency-samples", 0, 1000000, offsetof(bench_config, samples)},
  {'u', "work-us", 0, 1000000, offsetof(bench_config, work_us)},
  {'L', "limit", 0, SQLQ_MAX_RUNNING_MAX, offsetof(bench_config, limit)},
  {'T', "tenants", 0, 100000, offsetof(bench_config, tenants)},
  {'S', "steady", 1, 1000000, offsetof(bench_config, steady_rate)},
  {'s', "seconds", 1, 86400, offsetof(bench_config, seconds)},
};

static const struct option bench_options[] = {
  {"jobs", required_argument, NULL, 'n'},
  {"workers", required_argument, NULL, 'w'},
  {"producers", required_argument, NULL, 'r'},
  {"batch", required_argument, NULL, 'b'},
  {"payload", required_argument, NULL, 'p'},
  {"backlog", required_argument, NULL, 'm'},
  {"latency-samples", required_argument, NULL, 'k'},
  {"work-us", required_argument, NULL, 'u'},
  {"limit", required_argument, NULL, 'L'},
  {"rate", required_argument, NULL, 'A'},
  {"tenants", required_argument, NULL, 'T'},
  {"steady", required_argument, NULL, 'S'},
  {"seconds", required_argument, NULL, 's'},
  {"mix", no_argument, NULL, 'X'},
  {"processes", no_argument, NULL, 'P'},
  {"ring", no_argument, NULL, 'R'},
  {"pool", no_argument, NULL, 'O'},
  {"drain", no_argument, NULL, 'D'},
  {"queue", required_argument, NULL, 'q'},
  {"json", no_argument, NULL, 'j'},
  {"keep-backlog", no_argument, NULL, 'K'},
  {"help", no_argument, NULL, 'h'},
  {NULL, 0, NULL, 0},
};

/* Store the number of a numeric flag.  Returns 0, or -1 with a line
** printed. */
static int bench_set_number(bench_config *cfg, int key, const char *arg) {
  for (size_t i = 0; i < sizeof bench_num_flags / sizeof *bench_num_flags; i++) {
    const bench_num_flag *f = &bench_num_flags[i];
    if (f->key != key) continue;
    long long *dst = (long long *)((char *)cfg + f->offset);
    if (cli_parse_int(arg, f->min, f->max, dst) == 0) return 0;
    cli_error("bench: --%s wants a whole number from %lld to %lld, not '%s'", f->name, f->min,
              f->max, arg);
    return -1;
  }
  return -1;
}

/* Name the option getopt_long() just refused. */
static void bench_bad_option(int argc, char **argv, int missing_arg) {
  const char *opt = optind > 0 && optind <= argc ? argv[optind - 1] : "?";
  if (missing_arg)
    cli_error("bench: option '%s' needs a value", opt);
  else
    cli_error("bench: unknown option '%s' (see sqlq bench --help)", opt);
}

/* Parse the flags into cfg.  Returns -1 to go on, else an exit code. */
static int bench_parse(bench_config *cfg, int argc, char **argv) {
  int c, queue_given = 0;
  optind = 0;
  opterr = 0;
  while ((c = getopt_long(argc, argv, "+:h", bench_options, NULL)) != -1) {
    switch (c) {
    case 'P':
      cfg->processes = 1;
      break;
    case 'R':
    case 'O':
    case 'D':
      if (cfg->mode != BENCH_MODE_JOBS) {
        cli_error("bench: give one of --ring, --pool, --drain and --steady");
        return EXIT_USAGE;
      }
      cfg->mode = c == 'R' ? BENCH_MODE_RING : c == 'O' ? BENCH_MODE_POOL : BENCH_MODE_DRAIN;
      break;
    case 'j':
      cfg->json = 1;
      break;
    case 'X':
      cfg->mix = 1;
      break;
    case 'K':
      cfg->keep_backlog = 1;
      break;
    case 'A':
      if (cli_parse_rate(optarg, &cfg->rate_max, &cfg->rate_period_us) != 0 || cfg->rate_max == 0) {
        cli_error("bench: --rate wants N/PERIOD (N 1 to %d, PERIOD 1us to a year, like 100/1s),"
                  " not '%s'",
                  SQLQ_RATE_MAX_STARTS_MAX, optarg);
        return EXIT_USAGE;
      }
      break;
    case 'q':
      cfg->queue = optarg;
      queue_given = 1;
      break;
    case 'h':
      bench_usage(stdout);
      return 0;
    case ':':
    case '?':
      bench_bad_option(argc, argv, c == ':');
      return EXIT_USAGE;
    case 'S':
      if (cfg->mode != BENCH_MODE_JOBS) {
        cli_error("bench: give one of --ring, --pool, --drain and --steady");
        return EXIT_USAGE;
      }
      cfg->mode = BENCH_MODE_STEADY;
      if (bench_set_number(cfg, c, optarg) != 0) return EXIT_USAGE;
      break;
    default:
      if (bench_set_number(cfg, c, optarg) != 0) return EXIT_USAGE;
    }
  }
  if (optind < argc) {
    cli_error("bench: unexpected argument '%s'", argv[optind]);
    return EXIT_USAGE;
  }
  if (cfg->mode == BENCH_MODE_DRAIN && !queue_given) {
    cli_error("bench: --drain needs --queue NAME (the queue to drain)");
    return EXIT_USAGE;
  }
  if (cfg->seconds && cfg->mode != BENCH_MODE_STEADY) {
    cli_error("bench: --seconds goes with --steady");
    return EXIT_USAGE;
  }
  if (cfg->mode == BENCH_MODE_STEADY && cfg->processes) {
    cli_error("bench: --steady runs its workers as threads (no --processes)");
    return EXIT_USAGE;
  }
  if (cfg->mode == BENCH_MODE_STEADY && cfg->seconds == 0) cfg->seconds = 60;
  if (cfg->mix && cfg->mode != BENCH_MODE_STEADY) {
    cli_error("bench: --mix goes with --steady");
    return EXIT_USAGE;
  }
  if (cfg->mix && cfg->payload <= BENCH_STAMP_BYTES) {
    cli_error("bench: --mix needs a payload of at least %d bytes", BENCH_STAMP_BYTES + 1);
    return EXIT_USAGE;
  }
  if (cfg->work_us && cfg->mode != BENCH_MODE_DRAIN) {
    cli_error("bench: --work-us goes with --drain");
    return EXIT_USAGE;
  }
  if (cfg->keep_backlog &&
      (cfg->backlog == 0 || cfg->samples != 0 || cfg->mode != BENCH_MODE_JOBS)) {
    cli_error("bench: --keep-backlog needs --backlog M and --latency-samples 0");
    return EXIT_USAGE;
  }
  return -1;
}

/* ---------------------------------------------------------------------
** The temporary database used for the default URL.
*/

static int bench_rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw) {
  (void)st;
  (void)type;
  (void)ftw;
  return remove(path);
}

/* Remove the temporary directory and everything in it. */
static void bench_tempdir_remove(const char *dir) {
  if (dir[0] != '\0') nftw(dir, bench_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Make a temporary directory in dir (PATH_MAX bytes) and write the URL of
** a database file inside it in url (url_size bytes).  Returns 0, or -1
** with a line printed. */
static int bench_tempdir_make(char *dir, char *url, size_t url_size) {
  const char *tmp = getenv("TMPDIR");
  if (!tmp || !*tmp) tmp = "/tmp";
  int n = snprintf(dir, PATH_MAX, "%s/sqlq-bench-XXXXXX", tmp);
  if (n < 0 || n >= PATH_MAX || !mkdtemp(dir)) {
    cli_error("bench: cannot make a temporary directory in %s", tmp);
    dir[0] = '\0';
    return -1;
  }
  n = snprintf(url, url_size, "sqlite:%s/bench.db", dir);
  if (n < 0 || (size_t)n >= url_size) {
    cli_error("bench: temporary path too long");
    return -1;
  }
  return 0;
}

/* ---------------------------------------------------------------------
** Setting up and tearing down the queue.
*/

/* Open the bench URL.  Returns the handle, or NULL with *ec set. */
static sqlq_db *bench_open(const bench_config *cfg, int *ec) {
  cli_global g = {.url = cfg->url};
  return cli_open(&g, ec);
}

/* Make queue fair with a per-group limit of SQLQ_MAX_RUNNING_MAX (on 1),
** or neither (on 0).  Returns 0 or an exit code. */
static int bench_fair(sqlq_db *db, const char *queue, int on) {
  int rc = sqlq_fair_set(db, queue, on);
  if (rc == SQLQ_OK) rc = sqlq_group_limit_set(db, queue, on ? SQLQ_MAX_RUNNING_MAX : 1);
  return rc == SQLQ_OK ? 0 : cli_fail(db, rc, "bench: tenants");
}

/* Create the schema, empty the queue and fill the backlog; note the
** backend, and set *touched once the queue was emptied (from then on it
** must be purged at the end), unless the backlog is to be kept.  With
** --keep-backlog, the backlog already queued is used as it is.  The handle is closed again so that no
** handle is open when worker processes are forked.  Returns 0 or an exit
** code. */
static int bench_setup(const bench_config *cfg, bench_result *res, int *touched) {
  int ec = 0;
  sqlq_db *db = bench_open(cfg, &ec);
  if (!db) return ec;
  res->backend = sqlq_backend(db);
  int rc = sqlq_init(db, NULL);
  if (rc != SQLQ_OK) ec = cli_fail(db, rc, "bench: init");
  int reuse = cfg->keep_backlog;
  if (ec == 0 && !reuse && (rc = sqlq_purge(db, cfg->queue, NULL)) != SQLQ_OK)
    ec = cli_fail(db, rc, "bench: purge");
  *touched = ec == 0 && !cfg->keep_backlog;
  if (ec == 0 && cfg->limit > 0 &&
      (rc = sqlq_concurrency_set(db, cfg->queue, cfg->limit)) != SQLQ_OK)
    ec = cli_fail(db, rc, "bench: limit");
  if (ec == 0 && cfg->rate_max > 0 &&
      (rc = sqlq_rate_set(db, cfg->queue, cfg->rate_max, cfg->rate_period_us)) != SQLQ_OK)
    ec = cli_fail(db, rc, "bench: rate");
  if (ec == 0 && cfg->tenants > 0) ec = bench_fair(db, cfg->queue, 1);
  if (ec == 0 && cfg->backlog > 0 && !reuse) {
    rc = bench_fill(cfg, db, cfg->backlog, BENCH_BACKLOG_BATCH, -1, NULL, "backlog");
    bench_progress_end();
    if (rc != SQLQ_OK) ec = cli_exit_code(rc);
  }
  sqlq_close(db);
  return ec;
}

/* Purge the queue at the end, and lift its limits.  Returns 0 or an exit
** code. */
static int bench_teardown(const bench_config *cfg) {
  int ec = 0;
  sqlq_db *db = bench_open(cfg, &ec);
  if (!db) return ec;
  int rc = sqlq_purge(db, cfg->queue, NULL);
  if (rc != SQLQ_OK) ec = cli_fail(db, rc, "bench: purge");
  if (ec == 0 && cfg->limit > 0 && (rc = sqlq_concurrency_set(db, cfg->queue, 0)) != SQLQ_OK)
    ec = cli_fail(db, rc, "bench: limit");
  if (ec == 0 && cfg->rate_max > 0 && (rc = sqlq_rate_set(db, cfg->queue, 0, 0)) != SQLQ_OK)
    ec = cli_fail(db, rc, "bench: rate");
  if (ec == 0 && cfg->tenants > 0) ec = bench_fair(db, cfg->queue, 0);
  sqlq_close(db);
  return ec;
}

/* Set up, run, tear down and print.  Returns the exit code. */
static int bench_main(const bench_config *cfg) {
  bench_result res = {0};
  int touched = 0;
  int ec = bench_setup(cfg, &res, &touched);
  if (ec == 0) ec = bench_run(cfg, &res);
  int ec_down = touched ? bench_teardown(cfg) : 0;
  if (ec == 0) ec = ec_down;
  if (ec == 0) ec = cfg->json ? bench_print_json(cfg, &res) : bench_print_text(cfg, &res);
  return ec;
}

int cmd_bench(const cli_global *g, int argc, char **argv) {
  bench_config cfg = {
    .url = g->url,
    .queue = "bench",
    .jobs = 10000,
    .workers = 2,
    .producers = 1,
    .batch = 100,
    .payload = 16,
    .backlog = 0,
    .samples = 200,
  };
  int ec = bench_parse(&cfg, argc, argv);
  if (ec >= 0) return ec;
  char dir[PATH_MAX] = "";
  char url[PATH_MAX + 32];
  if (strcmp(cfg.url, BENCH_DEFAULT_URL) == 0) {
    if (bench_tempdir_make(dir, url, sizeof url) != 0) {
      bench_tempdir_remove(dir);
      return EXIT_SOFTWARE;
    }
    cfg.url = url;
  }
  ec = cfg.mode == BENCH_MODE_JOBS     ? bench_main(&cfg)
       : cfg.mode == BENCH_MODE_STEADY ? bench_steady_main(&cfg)
                                       : bench_ops_main(&cfg);
  bench_tempdir_remove(dir);
  return ec;
}
