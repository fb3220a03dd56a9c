/*
** health.c -- sqlq_health(): what holds a database's queues back.  The
** items are data of each backend: one statement (SQLQ__SQL_HEALTH) whose
** rows are the items, or the driver's health method where the answer is
** not in SQL (SQLite's WAL).  docs/health.md says what each item means.
*/
#include <stdlib.h>
#include <string.h>

#include "sqlq_int.h"

/* A malloc'ed copy of s, or NULL for NULL; *ok cleared when memory runs
** out. */
static char *dup_or_null(const char *s, int *ok) {
  if (s == NULL) return NULL;
  char *d = strdup(s);
  if (d == NULL) *ok = 0;
  return d;
}

int sqlq__health_add(sqlq_db *db, sqlq__health *h, const char *name, int64_t value,
                     const char *unit, int64_t threshold, const char *holder, int64_t started_at_us,
                     const char *detail) {
  int rc = sqlq__grow(db, (void **)&h->items, &h->cap, h->n, sizeof *h->items);
  if (rc != SQLQ_OK) return rc;
  sqlq_health_item *it = &h->items[h->n++];
  int ok = 1;
  memset(it, 0, sizeof *it);
  it->name = dup_or_null(name ? name : "", &ok);
  it->unit = dup_or_null(unit ? unit : "", &ok);
  it->holder = dup_or_null(holder && *holder ? holder : NULL, &ok);
  it->detail = dup_or_null(detail && *detail ? detail : NULL, &ok);
  it->value = value;
  it->threshold = threshold;
  it->over = threshold > 0 && value > threshold;
  it->started_at_us = started_at_us;
  return ok ? SQLQ_OK : sqlq__error(db, SQLQ_NOMEM, "out of memory");
}

/* The text of column i, or NULL for SQL NULL, into *out (malloc'ed). */
static int text_or_null(sqlq_db *db, sqlq__stmt *st, int i, char **out) {
  *out = NULL;
  if (db->driver->column_is_null(st, i)) return SQLQ_OK;
  return sqlq__column_text(db, st, i, out, NULL);
}

static int health_row(sqlq_db *db, sqlq__stmt *st, void *arg) {
  const sqlq__driver *d = db->driver;
  char *name = NULL, *unit = NULL, *holder = NULL, *detail = NULL;
  int rc = text_or_null(db, st, 0, &name);
  if (rc == SQLQ_OK) rc = text_or_null(db, st, 2, &unit);
  if (rc == SQLQ_OK) rc = text_or_null(db, st, 4, &holder);
  if (rc == SQLQ_OK) rc = text_or_null(db, st, 6, &detail);
  if (rc == SQLQ_OK)
    rc = sqlq__health_add(db, arg, name, d->column_int64(st, 1), unit, d->column_int64(st, 3),
                          holder, d->column_is_null(st, 5) ? 0 : d->column_int64(st, 5), detail);
  free(name);
  free(unit);
  free(holder);
  free(detail);
  return rc;
}

static int health_tx(sqlq_db *db, void *arg) {
  sqlq__query q = {.sql = SQLQ__SQL_HEALTH, .row = health_row, .arg = arg};
  return sqlq__query_run(db, &q, NULL, 0);
}

SQLQ__API int sqlq_health(sqlq_db *db, sqlq_health_item **items_out, size_t *n_out) {
  if (items_out) *items_out = NULL;
  if (n_out) *n_out = 0;
  int rc = sqlq__enter(db);
  if (rc != SQLQ_OK) return rc;
  if (items_out == NULL || n_out == NULL)
    return sqlq__error(db, SQLQ_MISUSE, "sqlq_health() needs somewhere to put the items");
  sqlq__health h = {0};
  if (db->driver->health)
    rc = db->driver->health(db, &h);
  else
    rc = sqlq__in_tx(db, SQLQ__TX_READ, health_tx, &h);
  if (rc != SQLQ_OK) {
    sqlq_health_items_free(h.items, h.n);
    return rc;
  }
  *items_out = h.items;
  *n_out = h.n;
  return SQLQ_OK;
}

SQLQ__API void sqlq_health_items_free(sqlq_health_item *items, size_t n) {
  if (items == NULL) return;
  for (size_t i = 0; i < n; i++) {
    free(items[i].name);
    free(items[i].unit);
    free(items[i].holder);
    free(items[i].detail);
  }
  free(items);
}
