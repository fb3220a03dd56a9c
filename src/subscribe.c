/*
** subscribe.c -- table subscriptions (sqlq_subscribe() and friends).
**
** A subscription is rows of sqlq_subscriptions, one per (table, action,
** tag).  A table with subscriptions has one trigger per action that some
** tag subscribes to; each trigger looks the action's subscriptions up when
** it fires and enqueues one job per subscription, so adding a tag to an
** action that has its trigger changes no trigger.  The core keeps the
** rows, works out which triggers a table needs (a sqlq__sub_plan) and
** leaves the dialect's trigger text to the driver's sub_triggers method.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sqlq_int.h"

static const struct {
  unsigned bit;
  const char *name;
  char suffix;
} actions[] = {
  {SQLQ_ON_INSERT, "insert", 'i'},
  {SQLQ_ON_UPDATE, "update", 'u'},
  {SQLQ_ON_DELETE, "delete", 'd'},
};
#define N_ACTIONS (sizeof actions / sizeof actions[0])
#define ALL_ACTIONS (SQLQ_ON_INSERT | SQLQ_ON_UPDATE | SQLQ_ON_DELETE)

/* The SQLQ_ON_* bit of an action's name, or 0. */
static unsigned action_bit(const void *name, size_t len) {
  for (size_t i = 0; i < N_ACTIONS; i++)
    if (strlen(actions[i].name) == len && memcmp(actions[i].name, name, len) == 0)
      return actions[i].bit;
  return 0;
}

/* The common checks of every call; SQLQ_UNAVAILABLE when the dialect has
** no subscriptions (its schema stops below version 3). */
static int check_db(sqlq_db *db) {
  int rc = sqlq__enter(db);
  if (rc != SQLQ_OK) return rc;
  if (db->driver->sub_triggers == NULL || db->driver->sql[SQLQ__SQL_SUB_ADD] == NULL)
    return sqlq__error(db, SQLQ_UNAVAILABLE, "the %s backend has no table subscriptions",
                       db->driver->name);
  return SQLQ_OK;
}

static int check_table(sqlq_db *db, const char *table) {
  int rc = sqlq__check_text(db, table, SQLQ_TABLE_NAME_MAX, "table name");
  if (rc != SQLQ_OK) return rc;
  /* A trigger on a table of sqlq's would enqueue into itself. */
  if (strncasecmp(table, "sqlq_", 5) == 0)
    return sqlq__error(db, SQLQ_MISUSE, "table '%s' is sqlq's own: it cannot be subscribed to",
                       table);
  return SQLQ_OK;
}

/* The name every trigger of table starts with, into base. */
static void trigger_base(const char *table, char base[32]) {
  snprintf(base, 32, SQLQ__SUB_TRIGGER_BASE "%016llx",
           (unsigned long long)sqlq__hash64(table, strlen(table)));
}

/* The SQLQ_ON_* bit of the trigger called name (len bytes) when it has
** the name of a trigger whose names start with base; else 0. */
static unsigned trigger_action(const char *name, size_t len, const char *base) {
  size_t base_len = strlen(base);
  if (len != base_len + 2 || memcmp(name, base, base_len) != 0 || name[base_len] != '_') return 0;
  for (size_t i = 0; i < N_ACTIONS; i++)
    if (name[base_len + 1] == actions[i].suffix) return actions[i].bit;
  return 0;
}

/* ---------------------------------------------------------------------
** The columns of a table.
*/

struct columns {
  sqlq__sub_column *cols;
  size_t n, cap;
  int has_pk;
};

static void columns_free(struct columns *c) {
  for (size_t i = 0; i < c->n; i++) free((char *)c->cols[i].name);
  free(c->cols);
  memset(c, 0, sizeof *c);
}

static int column_row(sqlq_db *db, sqlq__stmt *st, void *arg) {
  struct columns *c = arg;
  const sqlq__driver *d = db->driver;
  char *copy = NULL;
  int rc = sqlq__grow(db, (void **)&c->cols, &c->cap, c->n, sizeof *c->cols);
  if (rc == SQLQ_OK) rc = sqlq__column_text(db, st, 0, &copy, NULL);
  if (rc != SQLQ_OK) return rc;
  sqlq__sub_column *col = &c->cols[c->n++];
  col->name = copy;
  col->pk = (int)d->column_int64(st, 1);
  col->binary = d->column_int64(st, 2) != 0;
  if (col->pk > 0) c->has_pk = 1;
  return SQLQ_OK;
}

/* Read the columns of table into *c (none when it does not exist). */
static int read_columns(sqlq_db *db, const char *table, struct columns *c) {
  columns_free(c);
  sqlq__query q = {.sql = SQLQ__SQL_SUB_COLUMNS, .row = column_row, .arg = c};
  return sqlq__run(db, &q, SQLQ__TEXT(table));
}

/* ---------------------------------------------------------------------
** Installing the triggers a table needs.
*/

/* What the subscriptions of a table want. */
struct wants {
  unsigned acts;
  int rows;
};

static int action_row(sqlq_db *db, sqlq__stmt *st, void *arg) {
  struct wants *w = arg;
  const sqlq__driver *d = db->driver;
  size_t len = 0;
  const void *name = d->column_blob(st, 0, &len);
  w->acts |= action_bit(name, len);
  if (d->column_int64(st, 1)) w->rows = 1;
  return SQLQ_OK;
}

/* The actions that have subscribers on table, and whether any wants rows. */
static int table_actions(sqlq_db *db, const char *table, unsigned *acts, int *rows) {
  struct wants w = {0, 0};
  sqlq__query q = {.sql = SQLQ__SQL_SUB_ACTIONS, .row = action_row, .arg = &w};
  int rc = sqlq__run(db, &q, SQLQ__TEXT(table));
  *acts = w.acts;
  *rows = w.rows;
  return rc;
}

/* A look at the triggers whose names start with the trigger base of
** table (SUB_TRIGGERS), one row reader per use. */
struct trigger_scan {
  const char *table;
  char base[32];
  unsigned here, elsewhere; /* actions of sqlq's triggers on table, on others */
  char *moved;              /* moved_to's */
};

static int scan_triggers(sqlq_db *db, struct trigger_scan *t, sqlq__row_fn row) {
  trigger_base(t->table, t->base);
  sqlq__query q = {.sql = SQLQ__SQL_SUB_TRIGGERS, .row = row, .arg = t};
  return sqlq__run(db, &q, SQLQ__TEXT(t->base));
}

/* Is the trigger of st's row on t->table? */
static int on_table(sqlq_db *db, sqlq__stmt *st, const struct trigger_scan *t) {
  size_t tlen = 0;
  const char *on = db->driver->column_blob(st, 1, &tlen);
  return tlen == strlen(t->table) && memcmp(on, t->table, tlen) == 0;
}

/* The action of the trigger of st's row (0: not one of sqlq's names). */
static unsigned row_action(sqlq_db *db, sqlq__stmt *st, const struct trigger_scan *t) {
  size_t nlen = 0;
  const char *name = db->driver->column_blob(st, 0, &nlen);
  return trigger_action(name, nlen, t->base);
}

/* Give table the triggers its subscriptions need, on table on (the table
** itself, or the table it was renamed to), given on's columns (none when
** it is gone: then the triggers are only dropped). */
static int install(sqlq_db *db, const char *table, const char *on, const struct columns *c) {
  sqlq__sub_plan plan;
  memset(&plan, 0, sizeof plan);
  plan.table = table;
  plan.on = on;
  trigger_base(table, plan.base);
  int rc = table_actions(db, table, &plan.actions, &plan.rows);
  if (rc != SQLQ_OK) return rc;
  if (c->n == 0) {
    plan.actions = 0;
    plan.rows = 0;
  } else {
    plan.cols = c->cols;
    plan.n_cols = c->n;
  }
  return db->driver->sub_triggers(db, &plan);
}

/* The table that table's triggers are on when that is another one (table
** was renamed), malloc'ed into *moved; else *moved is NULL. */
static int moved_row(sqlq_db *db, sqlq__stmt *st, void *arg) {
  struct trigger_scan *t = arg;
  if (on_table(db, st, t)) return SQLQ_OK;
  int rc = sqlq__column_text(db, st, 1, &t->moved, NULL);
  return rc == SQLQ_OK ? SQLQ__DONE : rc;
}

static int moved_to(sqlq_db *db, const char *table, char **moved) {
  struct trigger_scan t = {.table = table};
  int rc = scan_triggers(db, &t, moved_row);
  *moved = t.moved;
  return rc;
}

/* Refuse to subscribe to table, which has no subscription yet, while a
** trigger with a name its triggers would take sits on another table:
** that is no trigger of table's, gone along with a rename, but the
** trigger of a table whose name hashes alike (the names hold 64 bits of
** the table name's hash), or not sqlq's, and making table's triggers
** would drop it. */
static int taken_row(sqlq_db *db, sqlq__stmt *st, void *arg) {
  struct trigger_scan *t = arg;
  if (row_action(db, st, t) == 0 || on_table(db, st, t)) return SQLQ_OK;
  size_t nlen = 0, tlen = 0;
  const char *name = db->driver->column_blob(st, 0, &nlen);
  const char *on = db->driver->column_blob(st, 1, &tlen);
  return sqlq__error(
    db, SQLQ_MISUSE,
    "the trigger %.*s on table '%.*s' has a name that the triggers of '%s' would take"
    " (a table whose name hashes alike, or a trigger of someone else's): drop it first",
    (int)nlen, name, (int)(tlen > 200 ? 200 : tlen), on, t->table);
}

static int check_names_free(sqlq_db *db, const char *table) {
  struct trigger_scan t = {.table = table};
  return scan_triggers(db, &t, taken_row);
}

/* A backend whose DDL commits cannot keep it inside the caller's
** transaction. */
static int check_ddl_tx(sqlq_db *db, const char *what) {
  if ((db->driver->traits & SQLQ__TRAIT_DDL_COMMITS) && db->in_user_tx)
    return sqlq__error(db, SQLQ_MISUSE,
                       "%s cannot run inside sqlq_begin() on %s: its triggers commit", what,
                       db->driver->name);
  return SQLQ_OK;
}

/* ---------------------------------------------------------------------
** Subscribe and unsubscribe.
*/

struct change {
  const char *table;
  const char *tag;
  unsigned actions;
  unsigned flags;
  struct columns cols;
  int64_t removed;
  char *moved; /* unsubscribe: the table's new name after a rename */
};

/* Run statement sql with text parameters $1 a and $2 b, adding the rows
** it changed to *changes when not NULL. */
static int run_pair(sqlq_db *db, int sql, const char *a, const char *b, int64_t *changes) {
  sqlq__query q = {.sql = sql, .flags = changes ? SQLQ__Q_CHANGES : 0};
  int rc = sqlq__run(db, &q, SQLQ__TEXT(a), SQLQ__TEXT(b));
  if (changes) *changes += q.changes;
  return rc;
}

static int add_action(sqlq_db *db, const struct change *ch, const char *action) {
  sqlq__query q = {.sql = SQLQ__SQL_SUB_ADD};
  return sqlq__run(db, &q, SQLQ__TEXT(ch->table), SQLQ__TEXT(action), SQLQ__TEXT(ch->tag),
                   SQLQ__INT((ch->flags & SQLQ_SUB_ROWS) != 0));
}

static int subscribe_tx(sqlq_db *db, void *arg) {
  struct change *ch = arg;
  int rc = read_columns(db, ch->table, &ch->cols);
  if (rc != SQLQ_OK) return rc;
  if (ch->cols.n == 0)
    return sqlq__error(db, SQLQ_NOTFOUND, "no table called '%s' in the default schema", ch->table);
  if (!ch->cols.has_pk)
    return sqlq__error(db, SQLQ_MISUSE,
                       "table '%s' has no primary key: events name rows by their key", ch->table);
  /* The table's subscriptions before this one: the tag's own (removed,
  ** to be made anew) and the other tags'. */
  int64_t removed = 0;
  unsigned others = 0;
  int rows = 0;
  rc = run_pair(db, SQLQ__SQL_SUB_REMOVE, ch->table, ch->tag, &removed);
  if (rc == SQLQ_OK) rc = table_actions(db, ch->table, &others, &rows);
  if (rc == SQLQ_OK && removed == 0 && others == 0) rc = check_names_free(db, ch->table);
  for (size_t i = 0; rc == SQLQ_OK && i < N_ACTIONS; i++)
    if (ch->actions & actions[i].bit) rc = add_action(db, ch, actions[i].name);
  if (rc == SQLQ_OK) rc = sqlq__register_queue(db, ch->tag);
  if (rc == SQLQ_OK) rc = install(db, ch->table, ch->table, &ch->cols);
  return rc;
}

SQLQ__API int sqlq_subscribe(sqlq_db *db, const char *table, unsigned acts, const char *tag,
                             unsigned flags) {
  int rc = check_db(db);
  if (rc == SQLQ_OK) rc = check_table(db, table);
  if (rc == SQLQ_OK) rc = sqlq__check_queue(db, tag);
  if (rc != SQLQ_OK) return rc;
  if (acts == 0 || (acts & ~(unsigned)ALL_ACTIONS))
    return sqlq__error(db, SQLQ_MISUSE, "subscribe to insert, update or delete (bits 0x%x)", acts);
  if (flags & ~(unsigned)SQLQ_SUB_ROWS)
    return sqlq__error(db, SQLQ_MISUSE, "unknown subscription flags 0x%x", flags);
  if ((rc = check_ddl_tx(db, "sqlq_subscribe()")) != SQLQ_OK) return rc;
  struct change ch = {.table = table, .tag = tag, .actions = acts, .flags = flags};
  rc = sqlq__in_tx(db, SQLQ__TX_WRITE, subscribe_tx, &ch);
  columns_free(&ch.cols);
  return rc;
}

static int unsubscribe_tx(sqlq_db *db, void *arg) {
  struct change *ch = arg;
  ch->removed = 0;
  int rc = run_pair(db, SQLQ__SQL_SUB_REMOVE, ch->table, ch->tag, &ch->removed);
  if (rc != SQLQ_OK) return rc;
  if (ch->removed == 0)
    return sqlq__error(db, SQLQ_NOTFOUND, "'%s' does not subscribe to table '%s'", ch->tag,
                       ch->table);
  if ((rc = read_columns(db, ch->table, &ch->cols)) != SQLQ_OK) return rc;
  /* The triggers of a renamed table are made anew where they are, for the
  ** subscriptions that remain. */
  free(ch->moved);
  ch->moved = NULL;
  if (ch->cols.n == 0 && (rc = moved_to(db, ch->table, &ch->moved)) != SQLQ_OK) return rc;
  if (ch->moved && (rc = read_columns(db, ch->moved, &ch->cols)) != SQLQ_OK) return rc;
  return install(db, ch->table, ch->moved ? ch->moved : ch->table, &ch->cols);
}

SQLQ__API int sqlq_unsubscribe(sqlq_db *db, const char *table, const char *tag) {
  int rc = check_db(db);
  if (rc == SQLQ_OK) rc = check_table(db, table);
  if (rc == SQLQ_OK) rc = sqlq__check_queue(db, tag);
  if (rc == SQLQ_OK) rc = check_ddl_tx(db, "sqlq_unsubscribe()");
  if (rc != SQLQ_OK) return rc;
  struct change ch = {.table = table, .tag = tag};
  rc = sqlq__in_tx(db, SQLQ__TX_WRITE, unsubscribe_tx, &ch);
  columns_free(&ch.cols);
  free(ch.moved);
  return rc;
}

/* ---------------------------------------------------------------------
** Listing.
*/

struct listing {
  sqlq_subscription *subs;
  size_t n, cap;
};

static void listing_free(struct listing *l) {
  sqlq_subscriptions_free(l->subs, l->n);
  l->subs = NULL;
  l->n = 0;
}

static int list_row(sqlq_db *db, sqlq__stmt *st, void *arg) {
  struct listing *l = arg;
  const sqlq__driver *d = db->driver;
  char *table = NULL, *tag = NULL;
  size_t alen = 0;
  const void *action = d->column_blob(st, 2, &alen);
  unsigned bit = action_bit(action, alen);
  int rc = sqlq__column_text(db, st, 0, &table, NULL);
  if (rc == SQLQ_OK) rc = sqlq__column_text(db, st, 1, &tag, NULL);
  sqlq_subscription *last = l->n ? &l->subs[l->n - 1] : NULL;
  if (rc == SQLQ_OK && last && strcmp(last->table, table) == 0 && strcmp(last->tag, tag) == 0) {
    last->actions |= bit;
    rc = SQLQ__DONE; /* no new entry */
  }
  if (rc == SQLQ_OK) rc = sqlq__grow(db, (void **)&l->subs, &l->cap, l->n, sizeof *l->subs);
  if (rc != SQLQ_OK) {
    free(table);
    free(tag);
    return rc == SQLQ__DONE ? SQLQ_OK : rc;
  }
  sqlq_subscription *s = &l->subs[l->n++];
  s->table = table;
  s->tag = tag;
  s->actions = bit;
  s->flags = d->column_int64(st, 3) ? SQLQ_SUB_ROWS : 0;
  s->created_at_us = d->column_int64(st, 4);
  s->status = SQLQ_SUB_ACTIVE;
  return SQLQ_OK;
}

/* Read the rows of SUB_LIST into one entry per (table, tag). */
static int read_list(sqlq_db *db, struct listing *l) {
  sqlq__query q = {.sql = SQLQ__SQL_SUB_LIST, .row = list_row, .arg = l};
  return sqlq__query_run(db, &q, NULL, 0);
}

static int where_row(sqlq_db *db, sqlq__stmt *st, void *arg) {
  struct trigger_scan *t = arg;
  unsigned bit = row_action(db, st, t);
  if (on_table(db, st, t))
    t->here |= bit;
  else
    t->elsewhere |= bit;
  return SQLQ_OK;
}

/* The SQLQ_SUB_* status of the subscriptions of table, which need the
** triggers of the actions acts. */
static int table_status(sqlq_db *db, const char *table, unsigned acts, int *status) {
  struct columns c = {0};
  int rc = read_columns(db, table, &c);
  int exists = c.n > 0;
  columns_free(&c);
  if (rc != SQLQ_OK) return rc;
  struct trigger_scan t = {.table = table};
  if ((rc = scan_triggers(db, &t, where_row)) != SQLQ_OK) return rc;
  if (exists && (t.here & acts) == acts)
    *status = SQLQ_SUB_ACTIVE;
  else if (t.elsewhere & acts)
    *status = SQLQ_SUB_MOVED;
  else
    *status = exists ? SQLQ_SUB_NO_TRIGGER : SQLQ_SUB_NO_TABLE;
  return SQLQ_OK;
}

static int list_tx(sqlq_db *db, void *arg) {
  struct listing *l = arg;
  listing_free(l);
  int rc = read_list(db, l);
  /* The subscriptions of one table are adjacent: each table's status is
  ** worked out once, for the union of their actions. */
  for (size_t i = 0; rc == SQLQ_OK && i < l->n;) {
    size_t j = i;
    unsigned acts = 0;
    while (j < l->n && strcmp(l->subs[j].table, l->subs[i].table) == 0)
      acts |= l->subs[j++].actions;
    int status = SQLQ_SUB_ACTIVE;
    rc = table_status(db, l->subs[i].table, acts, &status);
    for (; i < j; i++) l->subs[i].status = status;
  }
  return rc;
}

SQLQ__API int sqlq_subscriptions(sqlq_db *db, sqlq_subscription **subs_out, size_t *n_out) {
  if (subs_out) *subs_out = NULL;
  if (n_out) *n_out = 0;
  int rc = check_db(db);
  if (rc != SQLQ_OK) return rc;
  if (subs_out == NULL || n_out == NULL)
    return sqlq__error(db, SQLQ_MISUSE, "sqlq_subscriptions() needs somewhere to put them");
  struct listing l = {0};
  rc = sqlq__in_tx(db, SQLQ__TX_READ, list_tx, &l);
  if (rc != SQLQ_OK) {
    listing_free(&l);
    return rc;
  }
  *subs_out = l.subs;
  *n_out = l.n;
  return SQLQ_OK;
}

SQLQ__API void sqlq_subscriptions_free(sqlq_subscription *subs, size_t n) {
  if (subs == NULL) return;
  for (size_t i = 0; i < n; i++) {
    free((char *)subs[i].table);
    free((char *)subs[i].tag);
  }
  free(subs);
}
