/*
** cmd_ring.c -- `sqlq ring`: create, push into, read, follow and drop
** rings, the capped FIFO logs of sqlq_ring_*().
*/
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char usage[] =
  "usage: sqlq [--url URL] ring create NAME CAPACITY\n"
  "       sqlq [--url URL] ring push NAME [PAYLOAD]\n"
  "       sqlq [--url URL] ring read [--since SEQ] [--limit N] [--follow] [--json] NAME\n"
  "       sqlq [--url URL] ring drop NAME\n"
  "       sqlq [--url URL] ring list [--after NAME] [--limit N] [--json]\n"
  "\n"
  "A ring keeps the newest CAPACITY entries pushed into it; once it is full,\n"
  "each push overwrites the oldest entry.  Entries are numbered from 1.\n"
  "\n"
  "  create   make ring NAME for CAPACITY entries (again with the same\n"
  "           capacity: nothing changes)\n"
  "  push     push PAYLOAD, or all of stdin (any bytes), and print its number\n"
  "  read     print the entries, oldest first, one payload per line\n"
  "  drop     delete the ring and its entries\n"
  "  list     print the rings, by name: capacity, entries held, last number\n"
  "           (--after NAME: those after NAME; --limit N: at most N, 1 to\n"
  "           10000, default 1000; --json: [{\"name\":..,\"capacity\":..,\n"
  "           \"entries\":..,\"last_seq\":..,\"created_at\":..},...])\n"
  "\n"
  "Run 'sqlq ring SUBCOMMAND --help' for a subcommand's options.\n";

static const char read_usage[] =
  "usage: sqlq [--url URL] ring read [--since SEQ] [--limit N] [--follow] [--json] NAME\n"
  "\n"
  "Print the entries of ring NAME, oldest first, each payload followed by a\n"
  "newline.\n"
  "\n"
  "  -s, --since SEQ   only entries numbered above SEQ\n"
  "  -n, --limit N     at most N entries (with --follow: per look)\n"
  "  -f, --follow      then wait for new entries and print them as they come,\n"
  "                    until interrupted (SIGINT or SIGTERM: exit 0)\n"
  "  -j, --json        print [{\"seq\":N,\"at\":TIME,\"payload\":TEXT},...] (a\n"
  "                    payload that is not UTF-8 is \"payload_base64\"); with\n"
  "                    --follow, one such object per line\n"
  "  -h, --help        print this help\n";

/* Parse the flags of a subcommand that takes none but --help, and check
** that it has between min and max arguments.  Returns -1 to go on, else
** the exit code (0 after printing the help). */
static int plain_args(const char *cmd, int argc, char **argv, int min, int max,
                      const char *expected) {
  static const struct option options[] = {
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  int c = cli_getopt(cmd, argc, argv, ":h", options);
  if (c == 'h') {
    fputs(usage, stdout);
    return 0;
  }
  if (c != -1) {
    return EXIT_USAGE;
  }
  if (argc - optind < min || argc - optind > max) {
    return cli_usage_error(cmd, "expected %s", expected);
  }
  return -1;
}

static int ring_create(const cli_global *g, int argc, char **argv) {
  long long capacity;
  sqlq_db *db;
  int code = plain_args("ring create", argc, argv, 2, 2, "NAME CAPACITY");
  if (code >= 0) {
    return code;
  }
  if (cli_parse_int(argv[optind + 1], 1, SQLQ_RING_CAPACITY_MAX, &capacity) != 0) {
    return cli_usage_error("ring create", "capacity '%.40s' is not a whole number from 1 to %d",
                           argv[optind + 1], SQLQ_RING_CAPACITY_MAX);
  }
  if ((db = cli_open(g, &code)) == NULL) {
    return code;
  }
  return cli_done(db, sqlq_ring_create(db, argv[optind], (size_t)capacity), "ring create");
}

static int ring_drop(const cli_global *g, int argc, char **argv) {
  sqlq_db *db;
  int code = plain_args("ring drop", argc, argv, 1, 1, "NAME");
  if (code >= 0) {
    return code;
  }
  if ((db = cli_open(g, &code)) == NULL) {
    return code;
  }
  return cli_done(db, sqlq_ring_drop(db, argv[optind]), "ring drop");
}

static int ring_push(const cli_global *g, int argc, char **argv) {
  unsigned char *stdin_payload = NULL;
  const void *payload;
  size_t len, limit;
  int64_t seq;
  sqlq_db *db;
  int rc, code = plain_args("ring push", argc, argv, 1, 2, "NAME [PAYLOAD]");
  if (code >= 0) {
    return code;
  }
  if ((db = cli_open(g, &code)) == NULL) {
    return code;
  }
  if (argc - optind == 2) {
    payload = argv[optind + 1];
    len = strlen(argv[optind + 1]);
  } else {
    limit = sqlq_payload_limit(db);
    payload = stdin_payload = cli_read_stdin(limit, &len);
    if (payload == NULL) {
      if (len > limit) {
        cli_error("ring push: the payload on stdin is over the limit of %zu bytes", limit);
      } else {
        cli_error("ring push: cannot read stdin: %s", strerror(errno));
      }
      sqlq_close(db);
      return len > limit ? EXIT_DATAERR : EXIT_SOFTWARE;
    }
  }
  rc = sqlq_ring_push(db, argv[optind], payload, len, &seq);
  if (rc == SQLQ_OK) {
    printf("%" PRId64 "\n", seq);
    code = 0;
  } else {
    code = cli_fail(db, rc, "ring push");
  }
  free(stdin_payload);
  sqlq_close(db);
  return code;
}

/* ---------------------------------------------------------------------
** read
*/

/* The handle a following read waits on, for the signal handler. */
static sqlq_db *volatile following;

static void stop_following(int sig) {
  (void)sig;
  sqlq_interrupt(following);
}

/* Print n entries: as lines of payload, as one JSON array, or (lines_json)
** as one JSON object per line.  Returns the exit code. */
static int print_entries(const sqlq_ring_entry *e, size_t n, int json, int lines_json) {
  size_t i;
  int code = 0;
  if (json && !lines_json) {
    json_t *array = json_array();
    for (i = 0; array != NULL && i < n; i++) {
      json_array_append_new(array, cli_ring_entry_json(&e[i]));
    }
    return cli_print_json(array);
  }
  for (i = 0; code == 0 && i < n; i++) {
    if (json) {
      code = cli_print_json(cli_ring_entry_json(&e[i]));
    } else {
      fwrite(e[i].payload, 1, e[i].payload_len, stdout);
      putchar('\n');
    }
  }
  return fflush(stdout) == 0 ? code : EXIT_SOFTWARE;
}

/* Read from *since on, print, and move *since past what was printed. */
static int read_once(sqlq_db *db, const char *ring, int64_t *since, int limit, int json,
                     int follow) {
  sqlq_ring_entry *entries = NULL;
  size_t n = 0;
  int code, rc = sqlq_ring_read(db, ring, *since, (size_t)limit, &entries, &n);
  if (rc != SQLQ_OK) {
    return cli_fail(db, rc, "ring read");
  }
  if (follow && n == 0) {
    return 0;
  }
  code = print_entries(entries, n, json, follow);
  if (n > 0) {
    *since = entries[n - 1].seq;
  }
  sqlq_ring_entries_free(entries, n);
  return code;
}

/* Print what comes, until interrupted. */
static int follow_ring(sqlq_db *db, const char *ring, int64_t since, int limit, int json) {
  struct sigaction sa;
  int code = 0, rc = SQLQ_OK;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = stop_following;
  following = db;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  while (code == 0) {
    int64_t before = since;
    code = read_once(db, ring, &since, limit, json, 1);
    if (code != 0 || since != before) {
      continue;
    }
    rc = sqlq_ring_wait(db, ring, since, -1);
    if (rc == SQLQ_INTERRUPTED) {
      break;
    }
    if (rc != SQLQ_OK) {
      code = cli_fail(db, rc, "ring read");
    }
  }
  return code;
}

static int ring_read(const cli_global *g, int argc, char **argv) {
  static const struct option options[] = {
    {"since", required_argument, NULL, 's'}, {"limit", required_argument, NULL, 'n'},
    {"follow", no_argument, NULL, 'f'},      {"json", no_argument, NULL, 'j'},
    {"help", no_argument, NULL, 'h'},        {NULL, 0, NULL, 0},
  };
  long long since = 0, limit = 0;
  int c, json = 0, follow = 0, code;
  int64_t from;
  sqlq_db *db;
  while ((c = cli_getopt("ring read", argc, argv, ":s:n:fjh", options)) != -1) {
    switch (c) {
    case 's':
      if (cli_parse_int(optarg, 0, INT64_MAX, &since) != 0) {
        return cli_usage_error("ring read", "since '%.40s' is not a whole number >= 0", optarg);
      }
      break;
    case 'n':
      if (cli_parse_limit("ring read", optarg, &limit) != 0) {
        return EXIT_USAGE;
      }
      break;
    case 'f':
      follow = 1;
      break;
    case 'j':
      json = 1;
      break;
    case 'h':
      fputs(read_usage, stdout);
      return 0;
    default:
      return EXIT_USAGE;
    }
  }
  if (argc - optind != 1) {
    return cli_usage_error("ring read", "expected NAME");
  }
  if ((db = cli_open(g, &code)) == NULL) {
    return code;
  }
  from = since;
  code = follow ? follow_ring(db, argv[optind], from, (int)limit, json)
                : read_once(db, argv[optind], &from, (int)limit, json, 0);
  sqlq_close(db);
  return code;
}

static int ring_list(const cli_global *g, int argc, char **argv) {
  cli_list_flags f;
  int code = cli_list_args("ring list", usage, argc, argv, &f);
  if (code >= 0) {
    return code;
  }
  if (optind < argc) {
    return cli_usage_error("ring list", "takes no NAME (read NAME prints a ring's entries)");
  }
  return cli_list_rings(g, f.after, f.limit, f.json);
}

int cmd_ring(const cli_global *g, int argc, char **argv) {
  static const cli_sub subs[] = {
    {"create", ring_create}, {"push", ring_push}, {"read", ring_read},
    {"drop", ring_drop},     {"list", ring_list},
  };
  return cli_subcommand(g, "ring", usage, subs, sizeof subs / sizeof subs[0], argc, argv);
}
