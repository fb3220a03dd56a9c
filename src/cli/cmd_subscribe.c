/*
** cmd_subscribe.c -- `sqlq subscribe`, `sqlq unsubscribe` and `sqlq
** subscriptions`: table subscriptions (sqlq_subscribe() and friends).
*/
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char subscribe_usage[] =
  "usage: sqlq [--url URL] subscribe TABLE --on ACTIONS --tag TAG [--rows]\n"
  "\n"
  "Turn the row changes of TABLE (of the database's default schema, named as\n"
  "it is stored) into jobs of queue TAG, whoever makes them, plain SQL too:\n"
  "one job per changed row, in the writer's transaction.  Run `sqlq work TAG`\n"
  "to handle them.  The payload is JSON:\n"
  "  {\"table\":\"T\",\"action\":\"insert\",\"pk\":{\"id\":1},\"at\":\"...Z\"}\n"
  "\n"
  "  --on ACTIONS   insert, update, delete, or several of them joined by\n"
  "                 commas (a tag already subscribed gets exactly these)\n"
  "  --tag TAG      the queue the jobs go to\n"
  "  --rows         payloads also carry the row: \"new\" (insert, update) and\n"
  "                 \"old\" (update, delete)\n"
  "\n"
  "Exit 65 when there is no such table, 64 when it has no primary key.\n";

static const char unsubscribe_usage[] =
  "usage: sqlq [--url URL] unsubscribe TABLE --tag TAG\n"
  "\n"
  "End TAG's subscription to TABLE; the last one removes TABLE's triggers.\n"
  "Jobs already queued stay.  Exit 65 when TAG does not subscribe to TABLE.\n";

static const char subscriptions_usage[] =
  "usage: sqlq [--url URL] subscriptions [--json]\n"
  "\n"
  "List the subscriptions: table, tag, actions, rows, status.  The status is\n"
  "active, no-table (the table was dropped), no-trigger (the table was made\n"
  "again: subscribe again) or moved (the table was renamed; its changes still\n"
  "come under the old name).  Bytes of names outside printable ASCII are shown\n"
  "escaped (\\xHH).\n";

static const struct option options[] = {
  {"on", required_argument, NULL, 'o'}, {"tag", required_argument, NULL, 't'},
  {"rows", no_argument, NULL, 'r'},     {"json", no_argument, NULL, 'j'},
  {"help", no_argument, NULL, 'h'},     {NULL, 0, NULL, 0},
};

/* The flags of the three commands. */
typedef struct sub_flags {
  const char *on;  /* --on */
  const char *tag; /* --tag */
  int rows;        /* --rows */
  int json;        /* --json */
} sub_flags;

/* Parse the flags of cmd into *f, accepting those whose letter is in
** allowed, then check that exactly nargs arguments follow.  Returns -1 to
** go on, else the exit code (0 after printing usage). */
static int parse_flags(const char *cmd, const char *usage, const char *allowed, int nargs,
                       const char *expected, int argc, char **argv, sub_flags *f) {
  int c, code = 0;
  memset(f, 0, sizeof *f);
  while ((c = cli_getopt_allowed(cmd, usage, allowed, argc, argv, ":o:t:rjh", options, &code)) !=
         -1) {
    if (c == 0) return code;
    if (c == 'o') f->on = optarg;
    if (c == 't') f->tag = optarg;
    if (c == 'r') f->rows = 1;
    if (c == 'j') f->json = 1;
  }
  if (argc - optind != nargs) return cli_usage_error(cmd, "expected %s", expected);
  if (strchr(allowed, 't') && f->tag == NULL) return cli_usage_error(cmd, "needs --tag TAG");
  if (f->tag && cli_check_queue(cmd, f->tag) != 0) return EXIT_USAGE;
  return -1;
}

static const struct {
  const char *name;
  unsigned bit;
} action_names[] = {
  {"insert", SQLQ_ON_INSERT},
  {"update", SQLQ_ON_UPDATE},
  {"delete", SQLQ_ON_DELETE},
};
#define N_ACTION_NAMES (sizeof action_names / sizeof action_names[0])

/* Parse "insert,update" into SQLQ_ON_* bits.  Returns 0, or prints one line
** and returns EXIT_USAGE. */
static int parse_actions(const char *text, unsigned *out) {
  *out = 0;
  for (const char *p = text;;) {
    size_t len = strcspn(p, ",");
    unsigned bit = 0;
    for (size_t i = 0; i < N_ACTION_NAMES; i++)
      if (strlen(action_names[i].name) == len && strncmp(action_names[i].name, p, len) == 0)
        bit = action_names[i].bit;
    if (bit == 0)
      return cli_usage_error("subscribe", "--on takes insert, update and delete, not '%.*s'",
                             (int)(len > 40 ? 40 : len), p);
    *out |= bit;
    if (p[len] == '\0') return 0;
    p += len + 1;
  }
}

int cmd_subscribe(const cli_global *g, int argc, char **argv) {
  sub_flags f;
  unsigned acts = 0;
  sqlq_db *db;
  int code = parse_flags("subscribe", subscribe_usage, "otr", 1, "TABLE", argc, argv, &f);
  if (code >= 0) return code;
  if (f.on == NULL) return cli_usage_error("subscribe", "needs --on ACTIONS");
  if ((code = parse_actions(f.on, &acts)) != 0) return code;
  if ((db = cli_open(g, &code)) == NULL) return code;
  return cli_done(db, sqlq_subscribe(db, argv[optind], acts, f.tag, f.rows ? SQLQ_SUB_ROWS : 0),
                  "subscribe");
}

int cmd_unsubscribe(const cli_global *g, int argc, char **argv) {
  sub_flags f;
  sqlq_db *db;
  int code = parse_flags("unsubscribe", unsubscribe_usage, "t", 1, "TABLE", argc, argv, &f);
  if (code >= 0) return code;
  if ((db = cli_open(g, &code)) == NULL) return code;
  return cli_done(db, sqlq_unsubscribe(db, argv[optind], f.tag), "unsubscribe");
}

/* ---------------------------------------------------------------------
** subscriptions
*/

static const char *const status_names[] = {"active", "no-table", "no-trigger", "moved"};

static const char *status_name(int status) {
  return status >= 0 && (size_t)status < sizeof status_names / sizeof status_names[0]
           ? status_names[status]
           : "unknown";
}

/* "insert,update" for the bits acts, into out (32 bytes). */
static const char *actions_text(unsigned acts, char *out) {
  out[0] = '\0';
  for (size_t i = 0; i < N_ACTION_NAMES; i++) {
    if (!(acts & action_names[i].bit)) continue;
    if (out[0]) strcat(out, ",");
    strcat(out, action_names[i].name);
  }
  return out;
}

json_t *cli_subscription_json(const sqlq_subscription *s) {
  char created[CLI_TIME_SIZE];
  json_t *o = json_object(), *on = json_array();
  for (size_t i = 0; on && i < N_ACTION_NAMES; i++)
    if (s->actions & action_names[i].bit)
      json_array_append_new(on, json_string(action_names[i].name));
  cli_format_time(s->created_at_us, 1, created);
  json_object_set_new(o, "table", cli_json_text(s->table));
  json_object_set_new(o, "tag", cli_json_text(s->tag));
  json_object_set_new(o, "on", on);
  json_object_set_new(o, "rows", json_boolean(s->flags & SQLQ_SUB_ROWS));
  json_object_set_new(o, "created", json_string(created));
  json_object_set_new(o, "status", json_string(status_name(s->status)));
  return o;
}

static int print_table(const sqlq_subscription *subs, size_t n) {
  static const char *const header[] = {"table", "tag", "on", "rows", "status"};
  cli_table t;
  int ok = cli_table_init(&t, 5, header) == 0;
  for (size_t i = 0; ok && i < n; i++) {
    char acts[32], table[CLI_NAME_SIZE], tag[CLI_NAME_SIZE];
    const char *row[5] = {cli_name(subs[i].table, table), cli_name(subs[i].tag, tag),
                          actions_text(subs[i].actions, acts),
                          subs[i].flags & SQLQ_SUB_ROWS ? "yes" : "no",
                          status_name(subs[i].status)};
    ok = cli_table_add(&t, row) == 0;
  }
  return cli_table_finish(&t, ok, "subscriptions");
}

int cmd_subscriptions(const cli_global *g, int argc, char **argv) {
  sqlq_subscription *subs = NULL;
  size_t n = 0;
  sub_flags f;
  sqlq_db *db;
  int rc, code = parse_flags("subscriptions", subscriptions_usage, "j", 0, "no arguments", argc,
                             argv, &f);
  if (code >= 0) return code;
  if ((db = cli_open(g, &code)) == NULL) return code;
  rc = sqlq_subscriptions(db, &subs, &n);
  if (rc != SQLQ_OK) {
    code = cli_fail(db, rc, "subscriptions");
  } else if (f.json) {
    json_t *array = json_array();
    for (size_t i = 0; array != NULL && i < n; i++)
      json_array_append_new(array, cli_subscription_json(&subs[i]));
    code = cli_print_json(array);
  } else {
    code = print_table(subs, n);
  }
  sqlq_subscriptions_free(subs, n);
  sqlq_close(db);
  return code;
}
