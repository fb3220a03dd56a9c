/*
** cmd_push.c -- `sqlq push`: enqueue one job (payload from the command
** line or, binary-safe, from stdin), or with --lines one job per line of
** stdin.
*/
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char usage[] =
  "usage: sqlq [--url URL] push [OPTIONS] QUEUE [PAYLOAD]\n"
  "       sqlq [--url URL] push --lines [OPTIONS] QUEUE\n"
  "\n"
  "Enqueue a job and print its id.  Without PAYLOAD the payload is all of\n"
  "stdin, any bytes.  With --lines every line of stdin (without its newline)\n"
  "is one job, and the number of jobs is printed as \"N jobs\".\n"
  "\n"
  "  -p, --priority PRIO          higher runs first (default 0)\n"
  "  -d, --delay SECONDS          run no sooner than this from now\n"
  "  -a, --max-attempts N         attempts before the job is dead (default 25)\n"
  "  -k, --dedupe-key KEY         return the id of an unfinished job with KEY\n"
  "                               instead of enqueueing another\n"
  "  -g, --group GROUP            jobs of one group run one at a time, in order\n"
  "  -A, --after ID[,ID...]       the job (with --lines, each job) waits until\n"
  "                               every job ID has succeeded; a job that dies\n"
  "                               keeps it waiting (until `sqlq retry` of it\n"
  "                               succeeds), one purged kills it\n"
  "  -l, --lines                  one job per line of stdin\n"
  "  -h, --help                   print this help\n";

/* Jobs enqueued per transaction with --lines. */
#define LINES_BATCH 500

/* The jobs every job pushed waits for (--after): n ids, none when n is 0. */
typedef struct after_ids {
  int64_t ids[SQLQ_AFTER_MAX];
  size_t n;
} after_ids;

/* Parse the list of --after into a: whole numbers from 1, comma-separated,
** at most SQLQ_AFTER_MAX.  Returns 0, or the exit code after saying why. */
static int parse_after(const char *list, after_ids *a) {
  const char *p = list;
  char id[32];
  for (;;) {
    size_t len = strcspn(p, ",");
    long long v;
    if (a->n == SQLQ_AFTER_MAX) {
      return cli_usage_error("push", "--after takes at most %d job ids", SQLQ_AFTER_MAX);
    }
    if (len == 0 || len >= sizeof id) {
      return cli_usage_error("push", "--after '%s' is not a list of job ids", list);
    }
    memcpy(id, p, len);
    id[len] = '\0';
    if (cli_parse_int(id, 1, INT64_MAX, &v) != 0) {
      return cli_usage_error("push", "--after: '%s' is not a job id (a whole number >= 1)", id);
    }
    a->ids[a->n++] = v;
    if (p[len] == '\0') {
      return 0;
    }
    p += len + 1;
  }
}

/* Enqueue specs[0..n) in one transaction, after the jobs of a. */
static int enqueue(sqlq_db *db, const char *queue, const sqlq_job_spec *specs, size_t n,
                   const after_ids *a, int64_t *ids) {
  if (a->n == 0) {
    return sqlq_enqueue_batch(db, queue, specs, n, ids);
  }
  return sqlq_enqueue_after(db, queue, specs, n, a->ids, a->n, ids);
}

/* Enqueue the job spec describes and print its id. */
static int push_one(sqlq_db *db, const char *queue, const sqlq_job_spec *spec, const after_ids *a) {
  int64_t id;
  int rc = enqueue(db, queue, spec, 1, a, &id);
  if (rc != SQLQ_OK) {
    return cli_fail(db, rc, "push");
  }
  printf("%" PRId64 "\n", id);
  return 0;
}

static void free_payloads(sqlq_job_spec *specs, size_t n) {
  size_t i;
  for (i = 0; i < n; i++) {
    free((void *)specs[i].payload);
  }
}

/* Enqueue the n (> 0) jobs of specs in one transaction and free their
** payloads.  *total counts the jobs stored so far, for the report. */
static int push_batch(sqlq_db *db, const char *queue, sqlq_job_spec *specs, size_t n,
                      const after_ids *a, size_t *total) {
  int rc = enqueue(db, queue, specs, n, a, NULL);
  free_payloads(specs, n);
  if (rc != SQLQ_OK) {
    char what[64];
    snprintf(what, sizeof what, "push (after %zu jobs)", *total);
    return cli_fail(db, rc, what);
  }
  *total += n;
  return 0;
}

/* Enqueue one job per line of stdin, each a copy of tmpl with the line as
** payload, LINES_BATCH per transaction, and print the number of jobs. */
static int push_lines(sqlq_db *db, const char *queue, const sqlq_job_spec *tmpl,
                      const after_ids *a) {
  sqlq_job_spec specs[LINES_BATCH];
  size_t n = 0, total = 0, cap = 0;
  char *line = NULL;
  ssize_t len;
  int code = 0;
  while (code == 0 && (len = getline(&line, &cap, stdin)) >= 0) {
    if (len > 0 && line[len - 1] == '\n') {
      line[--len] = '\0';
    }
    specs[n] = *tmpl;
    specs[n].payload = line;
    specs[n].payload_len = (size_t)len;
    line = NULL;
    cap = 0;
    if (++n == LINES_BATCH) {
      code = push_batch(db, queue, specs, n, a, &total);
      n = 0;
    }
  }
  free(line);
  if (code == 0 && ferror(stdin)) {
    cli_error("push: cannot read stdin: %s", strerror(errno));
    code = EXIT_SOFTWARE;
  }
  if (code != 0) {
    free_payloads(specs, n);
    return code;
  }
  if (n > 0 && (code = push_batch(db, queue, specs, n, a, &total)) != 0) {
    return code;
  }
  printf("%zu jobs\n", total);
  return 0;
}

/* Enqueue one job whose payload is all of stdin. */
static int push_stdin(sqlq_db *db, const char *queue, sqlq_job_spec *spec, const after_ids *a) {
  size_t len, limit = sqlq_payload_limit(db);
  unsigned char *payload = cli_read_stdin(limit, &len);
  int code;
  if (payload == NULL && len > limit) {
    cli_error("push: the payload on stdin is over the limit of %zu bytes", limit);
    return EXIT_DATAERR;
  }
  if (payload == NULL) {
    cli_error("push: cannot read stdin: %s", strerror(errno));
    return EXIT_SOFTWARE;
  }
  spec->payload = payload;
  spec->payload_len = len;
  code = push_one(db, queue, spec, a);
  free(payload);
  return code;
}

int cmd_push(const cli_global *g, int argc, char **argv) {
  static const struct option options[] = {
    {"priority", required_argument, NULL, 'p'},
    {"delay", required_argument, NULL, 'd'},
    {"max-attempts", required_argument, NULL, 'a'},
    {"dedupe-key", required_argument, NULL, 'k'},
    {"group", required_argument, NULL, 'g'},
    {"after", required_argument, NULL, 'A'},
    {"lines", no_argument, NULL, 'l'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  sqlq_job_spec spec;
  static after_ids after; /* 80 kB: not on the stack */
  sqlq_db *db;
  const char *queue;
  long long n;
  int c, lines = 0, code;

  memset(&spec, 0, sizeof spec);
  while ((c = cli_getopt("push", argc, argv, ":p:d:a:k:g:A:lh", options)) != -1) {
    switch (c) {
    case 'p':
      if (cli_parse_int(optarg, INT_MIN, INT_MAX, &n) != 0) {
        return cli_usage_error("push", "priority '%s' is not a whole number", optarg);
      }
      spec.priority = (int)n;
      break;
    case 'd':
      if (cli_parse_seconds(optarg, &spec.delay) != 0) {
        return cli_usage_error("push", "delay '%s' is not a number of seconds", optarg);
      }
      break;
    case 'a':
      if (cli_parse_int(optarg, 1, INT_MAX, &n) != 0) {
        return cli_usage_error("push", "max attempts '%s' is not a whole number >= 1", optarg);
      }
      spec.max_attempts = (int)n;
      break;
    case 'k':
      spec.dedupe_key = optarg;
      break;
    case 'g':
      spec.group_key = optarg;
      break;
    case 'A':
      after.n = 0; /* the last --after counts */
      if ((code = parse_after(optarg, &after)) != 0) {
        return code;
      }
      break;
    case 'l':
      lines = 1;
      break;
    case 'h':
      fputs(usage, stdout);
      return 0;
    default:
      return EXIT_USAGE;
    }
  }
  if (optind >= argc || argc - optind > (lines ? 1 : 2)) {
    return cli_usage_error("push", lines ? "expected QUEUE" : "expected QUEUE [PAYLOAD]");
  }
  queue = argv[optind];
  if ((code = cli_check_queue("push", queue)) != 0) {
    return code;
  }
  db = cli_open(g, &code);
  if (db == NULL) {
    return code;
  }
  if (lines) {
    code = push_lines(db, queue, &spec, &after);
  } else if (optind + 2 == argc) {
    spec.payload = argv[optind + 1];
    spec.payload_len = strlen(argv[optind + 1]);
    code = push_one(db, queue, &spec, &after);
  } else {
    code = push_stdin(db, queue, &spec, &after);
  }
  sqlq_close(db);
  return code;
}
