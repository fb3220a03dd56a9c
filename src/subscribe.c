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
  if (db == NULL) return SQLQ_MISUSE;
  sqlq__clear_error(db);
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

/* A malloc'ed, NUL-terminated copy of text column i of st's row, or NULL
** when memory ran out. */
static char *copy_column(const sqlq__driver *d, sqlq__stmt *st, int i) {
  size_t len = 0;
  const char *p = d->column_blob(st, i, &len);
  char *s = malloc(len + 1);
  if (s == NULL) return NULL;
  if (len) memcpy(s, p, len);
  s[len] = '\0';
  return s;
}

/* ---------------------------------------------------------------------
** The columns of a table.
*/

struct columns {
  sqlq__sub_column *cols;
  size_t n;
  int has_pk;
};

static void columns_free(struct columns *c) {
  for (size_t i = 0; i < c->n; i++) free((char *)c->cols[i].name);
  free(c->cols);
  memset(c, 0, sizeof *c);
}

/* Read the columns of table into *c (none when it does not exist). */
static int read_columns(sqlq_db *db, const char *table, struct columns *c) {
  const sqlq__driver *d = db->driver;
  sqlq__stmt *st;
  columns_free(c);
  int rc = sqlq__prepare(db, SQLQ__SQL_SUB_COLUMNS, &st);
  if (rc != SQLQ_OK) return rc;
  d->bind_text(st, 1, table);
  size_t cap = 0;
  while ((rc = d->step(db, st)) == SQLQ__ROW) {
    if (c->n == cap) {
      size_t ncap = cap ? 2 * cap : 16;
      sqlq__sub_column *n = realloc(c->cols, ncap * sizeof *n);
      if (n == NULL) {
        rc = SQLQ_NOMEM;
        break;
      }
      c->cols = n;
      cap = ncap;
    }
    char *copy = copy_column(d, st, 0);
    if (copy == NULL) {
      rc = SQLQ_NOMEM;
      break;
    }
    sqlq__sub_column *col = &c->cols[c->n++];
    col->name = copy;
    col->pk = (int)d->column_int64(st, 1);
    col->binary = d->column_int64(st, 2) != 0;
    if (col->pk > 0) c->has_pk = 1;
  }
  d->reset(st);
  if (rc == SQLQ_NOMEM) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  return rc == SQLQ__DONE ? SQLQ_OK : rc;
}

/* ---------------------------------------------------------------------
** Installing the triggers a table needs.
*/

/* The actions that have subscribers on table, and whether any wants rows. */
static int table_actions(sqlq_db *db, const char *table, unsigned *acts, int *rows) {
  const sqlq__driver *d = db->driver;
  sqlq__stmt *st;
  *acts = 0;
  *rows = 0;
  int rc = sqlq__prepare(db, SQLQ__SQL_SUB_ACTIONS, &st);
  if (rc != SQLQ_OK) return rc;
  d->bind_text(st, 1, table);
  while ((rc = d->step(db, st)) == SQLQ__ROW) {
    size_t len = 0;
    const void *name = d->column_blob(st, 0, &len);
    *acts |= action_bit(name, len);
    if (d->column_int64(st, 1)) *rows = 1;
  }
  d->reset(st);
  return rc == SQLQ__DONE ? SQLQ_OK : rc;
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
static int moved_to(sqlq_db *db, const char *table, char **moved) {
  const sqlq__driver *d = db->driver;
  sqlq__stmt *st;
  char base[32];
  *moved = NULL;
  trigger_base(table, base);
  int rc = sqlq__prepare(db, SQLQ__SQL_SUB_TRIGGERS, &st);
  if (rc != SQLQ_OK) return rc;
  d->bind_text(st, 1, base);
  while (*moved == NULL && (rc = d->step(db, st)) == SQLQ__ROW) {
    char *on = copy_column(d, st, 1);
    if (on == NULL) {
      rc = SQLQ_NOMEM;
      break;
    }
    if (strcmp(on, table) != 0)
      *moved = on;
    else
      free(on);
  }
  d->reset(st);
  if (rc == SQLQ_NOMEM) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  return rc == SQLQ__DONE || rc == SQLQ__ROW ? SQLQ_OK : rc;
}

/* Refuse to subscribe to table, which has no subscription yet, while a
** trigger with a name its triggers would take sits on another table:
** that is no trigger of table's, gone along with a rename, but the
** trigger of a table whose name hashes alike (the names hold 64 bits of
** the table name's hash), or not sqlq's, and making table's triggers
** would drop it. */
static int check_names_free(sqlq_db *db, const char *table) {
  const sqlq__driver *d = db->driver;
  char base[32];
  trigger_base(table, base);
  sqlq__stmt *st;
  int rc = sqlq__prepare(db, SQLQ__SQL_SUB_TRIGGERS, &st);
  if (rc != SQLQ_OK) return rc;
  d->bind_text(st, 1, base);
  while ((rc = d->step(db, st)) == SQLQ__ROW) {
    size_t nlen = 0, tlen = 0;
    const char *name = d->column_blob(st, 0, &nlen);
    const char *on = d->column_blob(st, 1, &tlen);
    if (trigger_action(name, nlen, base) == 0 ||
        (tlen == strlen(table) && memcmp(on, table, tlen) == 0))
      continue;
    rc = sqlq__error(
      db, SQLQ_MISUSE,
      "the trigger %.*s on table '%.*s' has a name that the triggers of '%s' would take"
      " (a table whose name hashes alike, or a trigger of someone else's): drop it first",
      (int)nlen, name, (int)(tlen > 200 ? 200 : tlen), on, table);
    break;
  }
  d->reset(st);
  return rc == SQLQ__DONE ? SQLQ_OK : rc;
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
  const sqlq__driver *d = db->driver;
  sqlq__stmt *st;
  int rc = sqlq__prepare(db, sql, &st);
  if (rc != SQLQ_OK) return rc;
  d->bind_text(st, 1, a);
  d->bind_text(st, 2, b);
  rc = d->step(db, st);
  if (rc == SQLQ__DONE && changes) *changes += d->changes(db, st);
  d->reset(st);
  return rc == SQLQ__DONE ? SQLQ_OK : rc;
}

static int add_action(sqlq_db *db, const struct change *ch, const char *action) {
  const sqlq__driver *d = db->driver;
  sqlq__stmt *st;
  int rc = sqlq__prepare(db, SQLQ__SQL_SUB_ADD, &st);
  if (rc != SQLQ_OK) return rc;
  d->bind_text(st, 1, ch->table);
  d->bind_text(st, 2, action);
  d->bind_text(st, 3, ch->tag);
  d->bind_int64(st, 4, (ch->flags & SQLQ_SUB_ROWS) != 0);
  rc = d->step(db, st);
  d->reset(st);
  return rc == SQLQ__DONE ? SQLQ_OK : rc;
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
  struct change ch = {table, tag, acts, flags, {NULL, 0, 0}, 0, NULL};
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
  struct change ch = {table, tag, 0, 0, {NULL, 0, 0}, 0, NULL};
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
  size_t n;
};

static void listing_free(struct listing *l) {
  sqlq_subscriptions_free(l->subs, l->n);
  l->subs = NULL;
  l->n = 0;
}

/* Read the rows of SUB_LIST into one entry per (table, tag). */
static int read_list(sqlq_db *db, struct listing *l) {
  const sqlq__driver *d = db->driver;
  sqlq__stmt *st;
  int rc = sqlq__prepare(db, SQLQ__SQL_SUB_LIST, &st);
  if (rc != SQLQ_OK) return rc;
  size_t cap = 0;
  while ((rc = d->step(db, st)) == SQLQ__ROW) {
    char *table = copy_column(d, st, 0), *tag = copy_column(d, st, 1);
    size_t alen = 0;
    const void *action = d->column_blob(st, 2, &alen);
    unsigned bit = action_bit(action, alen);
    sqlq_subscription *last = l->n ? &l->subs[l->n - 1] : NULL;
    if (table && tag && last && strcmp(last->table, table) == 0 && strcmp(last->tag, tag) == 0) {
      last->actions |= bit;
      free(table);
      free(tag);
      continue;
    }
    if (table && tag && l->n == cap) {
      size_t ncap = cap ? 2 * cap : 8;
      sqlq_subscription *n = realloc(l->subs, ncap * sizeof *n);
      if (n) {
        l->subs = n;
        cap = ncap;
      }
    }
    if (table == NULL || tag == NULL || l->n == cap) {
      free(table);
      free(tag);
      rc = SQLQ_NOMEM;
      break;
    }
    sqlq_subscription *s = &l->subs[l->n++];
    s->table = table;
    s->tag = tag;
    s->actions = bit;
    s->flags = d->column_int64(st, 3) ? SQLQ_SUB_ROWS : 0;
    s->created_us = d->column_int64(st, 4);
    s->status = SQLQ_SUB_ACTIVE;
  }
  d->reset(st);
  if (rc == SQLQ_NOMEM) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  return rc == SQLQ__DONE ? SQLQ_OK : rc;
}

/* The SQLQ_SUB_* status of the subscriptions of table, which need the
** triggers of the actions acts. */
static int table_status(sqlq_db *db, const char *table, unsigned acts, int *status) {
  const sqlq__driver *d = db->driver;
  struct columns c = {NULL, 0, 0};
  int rc = read_columns(db, table, &c);
  int exists = c.n > 0;
  columns_free(&c);
  if (rc != SQLQ_OK) return rc;
  char base[32];
  trigger_base(table, base);
  sqlq__stmt *st;
  if ((rc = sqlq__prepare(db, SQLQ__SQL_SUB_TRIGGERS, &st)) != SQLQ_OK) return rc;
  d->bind_text(st, 1, base);
  unsigned here = 0, elsewhere = 0;
  while ((rc = d->step(db, st)) == SQLQ__ROW) {
    size_t nlen = 0, tlen = 0;
    const char *name = d->column_blob(st, 0, &nlen);
    const char *on = d->column_blob(st, 1, &tlen);
    unsigned bit = trigger_action(name, nlen, base);
    if (bit == 0) continue;
    if (tlen == strlen(table) && memcmp(on, table, tlen) == 0)
      here |= bit;
    else
      elsewhere |= bit;
  }
  d->reset(st);
  if (rc != SQLQ__DONE) return rc;
  if (exists && (here & acts) == acts)
    *status = SQLQ_SUB_ACTIVE;
  else if (elsewhere & acts)
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
  struct listing l = {NULL, 0};
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
