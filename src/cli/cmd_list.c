/*
** cmd_list.c -- listing what is there: `sqlq locks` (the named locks held
** now), `sqlq ring list` and `sqlq pool list` without a NAME (the rings
** and the pools), as tables or JSON; and the JSON of each entry, which
** `sqlq serve`'s API serves as well.
*/
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char locks_usage[] =
  "usage: sqlq [--url URL] locks [--limit N] [--json] [NAME...]\n"
  "\n"
  "Print the named locks held now in the database, by any process: the name\n"
  "where the backend keeps it, else the key (docs/serve.md), and who holds it\n"
  "where the backend says (PostgreSQL: the session's pid, application, user,\n"
  "address and start; MariaDB: the connection, user and host; SQLite: only\n"
  "the key). A lock whose key is that of a NAME given is shown with that name.\n"
  "Exit 69 when the backend cannot list its locks (Firebird; MariaDB without\n"
  "its metadata_lock_info plugin).\n"
  "\n"
  "  -n, --limit N   at most N locks (1 to 10000; default 1000)\n"
  "  -j, --json      print [{\"name\":..,\"key\":\"..\",\"pid\":..,\"holder\":..,\n"
  "                  \"since\":..,\"expires\":..,\"fence\":..},...]\n"
  "  -h, --help      print this help\n";

/* The default of --limit. */
#define DEFAULT_LIMIT 1000

int cli_parse_list_limit(const char *cmd, const char *s, size_t *out) {
  long long v;
  if (cli_parse_int(s, 1, SQLQ_LIST_MAX, &v) != 0) {
    return cli_usage_error(cmd, "limit '%.40s' is not a whole number from 1 to %d", s,
                           SQLQ_LIST_MAX);
  }
  *out = (size_t)v;
  return 0;
}

int cli_list_args(const char *cmd, const char *usage, int argc, char **argv, cli_list_flags *f) {
  static const struct option options[] = {
    {"after", required_argument, NULL, 'a'},
    {"limit", required_argument, NULL, 'n'},
    {"json", no_argument, NULL, 'j'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  int c;
  memset(f, 0, sizeof *f);
  f->limit = DEFAULT_LIMIT;
  while ((c = cli_getopt(cmd, argc, argv, ":a:n:jh", options)) != -1) {
    if (c == 'h') {
      fputs(usage, stdout);
      return 0;
    } else if (c == 'j') {
      f->json = 1;
    } else if (c == 'a') {
      if (cli_check_queue(cmd, optarg) != 0) return EXIT_USAGE;
      f->after = optarg;
      f->paged = 1;
    } else if (c == 'n') {
      if (cli_parse_list_limit(cmd, optarg, &f->limit) != 0) return EXIT_USAGE;
      f->paged = 1;
    } else {
      return EXIT_USAGE;
    }
  }
  return -1;
}

/* ---------------------------------------------------------------------
** JSON.
*/

json_t *cli_lock_info_json(const sqlq_lock_info *l, const char *known_name) {
  json_t *o = json_object();
  char key[24];
  snprintf(key, sizeof key, "%" PRId64, l->key);
  if (l->name) {
    json_t *text = json_stringn((const char *)l->name, l->name_len);
    if (text != NULL) {
      json_object_set_new(o, "name", text);
    } else {
      json_object_set_new(o, "name", json_null());
      json_object_set_new(o, "name_base64", cli_json_base64(l->name, l->name_len));
    }
  } else {
    json_object_set_new(o, "name", cli_json_text(known_name));
  }
  /* As text: a key is 64 bits, past what a JavaScript number holds. */
  json_object_set_new(o, "key", json_string(key));
  json_object_set_new(o, "pid", l->pid ? json_integer(l->pid) : json_null());
  json_object_set_new(o, "holder", cli_json_text(l->holder));
  json_object_set_new(o, "since", cli_json_time(l->since_at_us, 0));
  json_object_set_new(o, "expires", cli_json_time(l->expires_at_us, 1));
  json_object_set_new(o, "fence", l->fence ? json_integer(l->fence) : json_null());
  return o;
}

json_t *cli_ring_info_json(const sqlq_ring_info *r) {
  json_t *o = json_object();
  json_object_set_new(o, "name", cli_json_text(r->name));
  json_object_set_new(o, "capacity", json_integer(r->capacity));
  json_object_set_new(o, "entries", json_integer(r->entries));
  json_object_set_new(o, "last_seq", json_integer(r->last_seq));
  json_object_set_new(o, "created_at", cli_json_time(r->created_at_us, 0));
  return o;
}

json_t *cli_pool_info_json(const sqlq_pool_info *p) {
  json_t *o = json_object();
  json_object_set_new(o, "name", cli_json_text(p->name));
  json_object_set_new(o, "items", json_integer(p->items));
  json_object_set_new(o, "held", json_integer(p->held));
  json_object_set_new(o, "last_used", cli_json_time(p->last_used_at_us, 1));
  return o;
}

/* ---------------------------------------------------------------------
** sqlq locks
*/

/* The NAME of names[0..n) whose key on db is key, or NULL. */
static const char *known(sqlq_db *db, char **names, int n, int64_t key) {
  for (int i = 0; i < n; i++) {
    int64_t k = 0;
    if (sqlq_lock_key(db, names[i], strlen(names[i]), &k) == SQLQ_OK && k == key) {
      return names[i];
    }
  }
  return NULL;
}

/* name as text for a table cell, with \xHH for a byte that is not
** printable ASCII; malloc'ed (NULL when memory ran out). */
static char *printable(const unsigned char *name, size_t len) {
  char *out = malloc(len * 4 + 1), *p = out;
  for (size_t i = 0; out != NULL && i < len; i++) {
    if (name[i] >= 0x20 && name[i] < 0x7f && name[i] != '\\') {
      *p++ = (char)name[i];
    } else {
      p += sprintf(p, "\\x%02x", name[i]);
    }
  }
  if (p != NULL) *p = '\0';
  return out;
}

static int print_locks(sqlq_db *db, const sqlq_lock_info *locks, size_t n, char **names,
                       int n_names) {
  static const char *const header[] = {"name", "key", "pid", "holder", "since", "expires"};
  cli_table t;
  int ok = cli_table_init(&t, 6, header) == 0;
  for (size_t i = 0; ok && i < n; i++) {
    const sqlq_lock_info *l = &locks[i];
    char key[24], pid[24], since[CLI_TIME_SIZE], expires[CLI_TIME_SIZE];
    char *name = l->name ? printable(l->name, l->name_len) : NULL;
    const char *given = l->name ? NULL : known(db, names, n_names, l->key);
    snprintf(key, sizeof key, "%" PRId64, l->key);
    snprintf(pid, sizeof pid, "%" PRId64, l->pid);
    cli_format_time(l->since_at_us, 0, since);
    cli_format_time(l->expires_at_us, 1, expires);
    const char *row[6] = {name    ? name
                          : given ? given
                                  : "-",
                          key,
                          l->pid ? pid : "-",
                          l->holder ? l->holder : "-",
                          l->since_at_us ? since : "-",
                          l->expires_at_us ? expires : "-"};
    ok = (l->name == NULL || name != NULL) && cli_table_add(&t, row) == 0;
    free(name);
  }
  return cli_table_finish(&t, ok, "locks");
}

int cmd_locks(const cli_global *g, int argc, char **argv) {
  static const struct option options[] = {
    {"limit", required_argument, NULL, 'n'},
    {"json", no_argument, NULL, 'j'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  size_t limit = DEFAULT_LIMIT, n = 0;
  int c, json = 0, code;
  while ((c = cli_getopt("locks", argc, argv, ":n:jh", options)) != -1) {
    if (c == 'h') {
      fputs(locks_usage, stdout);
      return 0;
    } else if (c == 'j') {
      json = 1;
    } else if (c == 'n') {
      if (cli_parse_list_limit("locks", optarg, &limit) != 0) return EXIT_USAGE;
    } else {
      return EXIT_USAGE;
    }
  }
  for (int i = optind; i < argc; i++) {
    if (argv[i][0] == '\0') return cli_usage_error("locks", "a lock NAME is 1 byte or more");
  }
  sqlq_db *db = cli_open(g, &code);
  if (db == NULL) return code;
  sqlq_lock_info *locks = NULL;
  int rc = sqlq_locks(db, limit, &locks, &n);
  if (rc != SQLQ_OK) {
    code = cli_fail(db, rc, "locks");
  } else if (json) {
    json_t *array = json_array();
    for (size_t i = 0; array != NULL && i < n; i++) {
      const char *given =
        locks[i].name ? NULL : known(db, argv + optind, argc - optind, locks[i].key);
      json_array_append_new(array, cli_lock_info_json(&locks[i], given));
    }
    code = cli_print_json(array);
  } else {
    code = print_locks(db, locks, n, argv + optind, argc - optind);
  }
  sqlq_lock_infos_free(locks, n);
  sqlq_close(db);
  return code;
}

/* ---------------------------------------------------------------------
** sqlq ring list, sqlq pool list (without NAME)
*/

int cli_list_rings(const cli_global *g, const char *after, size_t limit, int json) {
  sqlq_ring_info *rings = NULL;
  size_t n = 0;
  int code;
  sqlq_db *db = cli_open(g, &code);
  if (db == NULL) return code;
  int rc = sqlq_rings(db, after, limit, &rings, &n);
  if (rc != SQLQ_OK) {
    code = cli_fail(db, rc, "ring list");
  } else if (json) {
    json_t *array = json_array();
    for (size_t i = 0; array != NULL && i < n; i++) {
      json_array_append_new(array, cli_ring_info_json(&rings[i]));
    }
    code = cli_print_json(array);
  } else {
    static const char *const header[] = {"ring", "capacity", "entries", "last_seq", "created_at"};
    cli_table t;
    int ok = cli_table_init(&t, 5, header) == 0;
    for (size_t i = 0; ok && i < n; i++) {
      char cap[24], entries[24], last[24], at[CLI_TIME_SIZE];
      snprintf(cap, sizeof cap, "%" PRId64, rings[i].capacity);
      snprintf(entries, sizeof entries, "%" PRId64, rings[i].entries);
      snprintf(last, sizeof last, "%" PRId64, rings[i].last_seq);
      cli_format_time(rings[i].created_at_us, 0, at);
      const char *row[5] = {rings[i].name, cap, entries, last, at};
      ok = cli_table_add(&t, row) == 0;
    }
    code = cli_table_finish(&t, ok, "ring list");
  }
  sqlq_ring_infos_free(rings, n);
  sqlq_close(db);
  return code;
}

int cli_list_pools(const cli_global *g, const char *after, size_t limit, int json) {
  sqlq_pool_info *pools = NULL;
  size_t n = 0;
  int code;
  sqlq_db *db = cli_open(g, &code);
  if (db == NULL) return code;
  int rc = sqlq_pools(db, after, limit, &pools, &n);
  if (rc != SQLQ_OK) {
    code = cli_fail(db, rc, "pool list");
  } else if (json) {
    json_t *array = json_array();
    for (size_t i = 0; array != NULL && i < n; i++) {
      json_array_append_new(array, cli_pool_info_json(&pools[i]));
    }
    code = cli_print_json(array);
  } else {
    static const char *const header[] = {"pool", "items", "held", "last_used"};
    cli_table t;
    int ok = cli_table_init(&t, 4, header) == 0;
    for (size_t i = 0; ok && i < n; i++) {
      char items[24], held[24], last[CLI_TIME_SIZE];
      snprintf(items, sizeof items, "%" PRId64, pools[i].items);
      snprintf(held, sizeof held, "%" PRId64, pools[i].held);
      cli_format_time(pools[i].last_used_at_us, 1, last);
      const char *row[4] = {pools[i].name, items, held, pools[i].last_used_at_us ? last : "-"};
      ok = cli_table_add(&t, row) == 0;
    }
    code = cli_table_finish(&t, ok, "pool list");
  }
  sqlq_pool_infos_free(pools, n);
  sqlq_close(db);
  return code;
}
