/*
** cmd_pool.c -- `sqlq pool`: add, remove, list, hand out and release the
** items of a pool, the fair rotation of sqlq_pool_*().
*/
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char usage[] =
  "usage: sqlq [--url URL] pool add NAME ITEM...\n"
  "       sqlq [--url URL] pool remove NAME ITEM\n"
  "       sqlq [--url URL] pool list [--json] NAME\n"
  "       sqlq [--url URL] pool list [--after NAME] [--limit N] [--json]\n"
  "       sqlq [--url URL] pool next [--hold SECONDS] [--json] NAME\n"
  "       sqlq [--url URL] pool release --token TOKEN NAME ITEM\n"
  "\n"
  "A pool hands out its items in turn: next prints the free item used least\n"
  "recently and stamps it with the database's clock in microseconds.\n"
  "\n"
  "  add      add ITEMs, all or none (UTF-8 text, 1 to 1024 bytes; one\n"
  "           already there is left as it is)\n"
  "  remove   remove ITEM\n"
  "  list     print the items in the order next hands them out; without\n"
  "           NAME, the pools by name: items, held, last use (--after NAME:\n"
  "           those after NAME; --limit N: at most N, 1 to 10000, default\n"
  "           1000; --json: [{\"name\":..,\"items\":..,\"held\":..,\n"
  "           \"last_used\":..},...])\n"
  "  next     print the next item; with --hold SECONDS no one else gets it\n"
  "           until it is released or the time is up, and ITEM TAB TOKEN is\n"
  "           printed (--json: {\"item\":..,\"id\":..,\"uses\":..,\"last_used\":..,\n"
  "           \"held_until\":..,\"token\":..}); exit 75 when every item is held\n"
  "  release  end the hold of ITEM taken with TOKEN (exit 75 when the hold\n"
  "           is no longer TOKEN's)\n";

/* The flags of a pool subcommand. */
typedef struct pool_flags {
  int json;        /* --json */
  double hold;     /* --hold SECONDS, 0 without */
  long long token; /* --token TOKEN */
  int has_token;
} pool_flags;

/* Parse the flags of subcommand cmd into *f: --help always, the others
** when their letter is in allowed ("j" --json, "H" --hold, "t" --token).
** Then check that between min and max (-1: any) arguments follow.  Returns
** -1 to go on, else the exit code (0 after printing the help). */
static int parse_flags(const char *cmd, const char *allowed, int argc, char **argv, pool_flags *f,
                       int min, int max, const char *expected) {
  static const struct option options[] = {
    {"json", no_argument, NULL, 'j'},
    {"hold", required_argument, NULL, 'H'},
    {"token", required_argument, NULL, 't'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  int c, code = 0;
  memset(f, 0, sizeof *f);
  while ((c = cli_getopt_allowed(cmd, usage, allowed, argc, argv, ":jH:t:h", options, &code)) !=
         -1) {
    if (c == 0) {
      return code;
    }
    if (c == 'j') {
      f->json = 1;
    } else if (c == 'H' && cli_parse_seconds(optarg, &f->hold) != 0) {
      return cli_usage_error(cmd, "hold '%.40s' is not a number of seconds >= 0", optarg);
    } else if (c == 't') {
      if (cli_parse_int(optarg, 1, INT64_MAX, &f->token) != 0) {
        return cli_usage_error(cmd, "token '%.40s' is not a whole number >= 1", optarg);
      }
      f->has_token = 1;
    }
  }
  if (argc - optind < min || (max >= 0 && argc - optind > max)) {
    return cli_usage_error(cmd, "expected %s", expected);
  }
  return -1;
}

static int pool_add(const cli_global *g, int argc, char **argv) {
  pool_flags f;
  sqlq_db *db;
  int i, rc = SQLQ_OK, code = parse_flags("pool add", "", argc, argv, &f, 2, -1, "NAME ITEM...");
  if (code >= 0) {
    return code;
  }
  if ((db = cli_open(g, &code)) == NULL) {
    return code;
  }
  /* All the items or none. */
  rc = argc - optind > 2 ? sqlq_begin(db) : SQLQ_OK;
  for (i = optind + 1; i < argc && rc == SQLQ_OK; i++) {
    rc = sqlq_pool_add(db, argv[optind], argv[i], NULL);
  }
  if (argc - optind > 2 && rc == SQLQ_OK) {
    rc = sqlq_commit(db);
  }
  return cli_done(db, rc, "pool add");
}

static int pool_remove(const cli_global *g, int argc, char **argv) {
  pool_flags f;
  sqlq_db *db;
  int code = parse_flags("pool remove", "", argc, argv, &f, 2, 2, "NAME ITEM");
  if (code >= 0) {
    return code;
  }
  if ((db = cli_open(g, &code)) == NULL) {
    return code;
  }
  return cli_done(db, sqlq_pool_remove(db, argv[optind], argv[optind + 1]), "pool remove");
}

static int pool_release(const cli_global *g, int argc, char **argv) {
  pool_flags f;
  sqlq_db *db;
  int code = parse_flags("pool release", "t", argc, argv, &f, 2, 2, "NAME ITEM");
  if (code >= 0) {
    return code;
  }
  if (!f.has_token) {
    return cli_usage_error("pool release", "needs --token TOKEN (printed by pool next --hold)");
  }
  if ((db = cli_open(g, &code)) == NULL) {
    return code;
  }
  return cli_done(db, sqlq_pool_release(db, argv[optind], argv[optind + 1], f.token),
                  "pool release");
}

/* ---------------------------------------------------------------------
** list and next
*/

static int print_table(const sqlq_pool_item *items, size_t n) {
  static const char *const header[] = {"item", "uses", "last_used", "held_until"};
  cli_table t;
  size_t i;
  int ok = cli_table_init(&t, 4, header) == 0;
  for (i = 0; ok && i < n; i++) {
    char uses[24], last[CLI_TIME_SIZE], held[CLI_TIME_SIZE];
    const char *row[4];
    snprintf(uses, sizeof uses, "%" PRId64, items[i].uses);
    cli_format_time(items[i].last_used_at_us, 1, last);
    cli_format_time(items[i].held_until_us, 1, held);
    row[0] = items[i].item;
    row[1] = uses;
    row[2] = items[i].last_used_at_us ? last : "-";
    row[3] = items[i].held_until_us ? held : "-";
    ok = cli_table_add(&t, row) == 0;
  }
  return cli_table_finish(&t, ok, "pool list");
}

static int pool_list(const cli_global *g, int argc, char **argv) {
  sqlq_pool_item *items = NULL;
  size_t i, n = 0;
  cli_list_flags f;
  sqlq_db *db;
  int rc, code = cli_list_args("pool list", usage, argc, argv, &f);
  if (code >= 0) {
    return code;
  }
  if (argc - optind == 0) {
    return cli_list_pools(g, f.after, f.limit, f.json);
  }
  if (argc - optind > 1) {
    return cli_usage_error("pool list", "expected NAME, or no NAME to list the pools");
  }
  if (f.paged) {
    return cli_usage_error("pool list", "--after and --limit list the pools: give no NAME");
  }
  if ((db = cli_open(g, &code)) == NULL) {
    return code;
  }
  rc = sqlq_pool_list(db, argv[optind], &items, &n);
  if (rc != SQLQ_OK) {
    code = cli_fail(db, rc, "pool list");
  } else if (f.json) {
    json_t *array = json_array();
    for (i = 0; array != NULL && i < n; i++) {
      json_array_append_new(array, cli_pool_item_json(&items[i], 0));
    }
    code = cli_print_json(array);
  } else {
    code = print_table(items, n);
  }
  sqlq_pool_items_free(items, n);
  sqlq_close(db);
  return code;
}

static int pool_next(const cli_global *g, int argc, char **argv) {
  sqlq_pool_item *it = NULL;
  pool_flags f;
  sqlq_db *db;
  int rc, code = parse_flags("pool next", "jH", argc, argv, &f, 1, 1, "NAME");
  if (code >= 0) {
    return code;
  }
  if ((db = cli_open(g, &code)) == NULL) {
    return code;
  }
  rc = sqlq_pool_next(db, argv[optind], f.hold, &it);
  if (rc != SQLQ_OK) {
    code = cli_fail(db, rc, "pool next");
  } else if (f.json) {
    code = cli_print_json(cli_pool_item_json(it, 1));
  } else {
    code = 0;
    if (it->token != 0) {
      printf("%s\t%" PRId64 "\n", it->item, it->token);
    } else {
      printf("%s\n", it->item);
    }
  }
  sqlq_pool_items_free(it, it ? 1 : 0);
  sqlq_close(db);
  return code;
}

int cmd_pool(const cli_global *g, int argc, char **argv) {
  static const cli_sub subs[] = {
    {"add", pool_add},   {"remove", pool_remove},   {"list", pool_list},
    {"next", pool_next}, {"release", pool_release},
  };
  return cli_subcommand(g, "pool", usage, subs, sizeof subs / sizeof subs[0], argc, argv);
}
