/*
** stmt.c -- running a statement: prepare, bind a typed argument list, step
** through the rows, reset.  Every statement of the core runs here.
*/
#include <stdlib.h>
#include <string.h>

#include "sqlq_int.h"

int sqlq__prepare(sqlq_db *db, int id, sqlq__stmt **out) {
  const sqlq__driver *d = db->driver;
  if (d->sql[id] == NULL)
    return sqlq__error(db, SQLQ_UNAVAILABLE, "the %s backend cannot do this yet (statement %d)",
                       d->name, id);
  return d->prepare(db, id, out);
}

static int bind_one(const sqlq__driver *d, sqlq__stmt *st, int i, const sqlq__arg *a) {
  switch (a->type) {
  case SQLQ__ARG_INT:
    return d->bind_int64(st, i, a->i);
  case SQLQ__ARG_TEXT:
    return d->bind_text(st, i, a->p);
  case SQLQ__ARG_BLOB:
    return d->bind_blob(st, i, a->p, a->n);
  case SQLQ__ARG_INTS:
    return d->bind_int64_array(st, i, a->p, a->n);
  case SQLQ__ARG_TEXTS:
    return d->bind_text_array(st, i, a->p, a->n);
  case SQLQ__ARG_BLOBS:
    return d->bind_blob_array(st, i, a->p, a->lens, a->n);
  }
  return SQLQ_MISUSE;
}

/* Step st to its end, handing each row to q->row. */
static int read_rows(sqlq_db *db, sqlq__stmt *st, sqlq__query *q) {
  const sqlq__driver *d = db->driver;
  int rc;
  while ((rc = d->step(db, st)) == SQLQ__ROW) {
    q->rows++;
    if (q->row && (rc = q->row(db, st, q->arg)) != SQLQ_OK) return rc == SQLQ__DONE ? SQLQ_OK : rc;
  }
  if (rc == SQLQ__DONE) {
    if ((q->flags & SQLQ__Q_CHANGES) && q->rows == 0) q->changes = d->changes(db, st);
    return SQLQ_OK;
  }
  if (rc != SQLQ__CONSTRAINT) return rc;
  if (!(q->flags & SQLQ__Q_TAKEN)) return db->errcode;
  sqlq__clear_error(db);
  q->taken = 1;
  return SQLQ_OK;
}

int sqlq__query_run(sqlq_db *db, sqlq__query *q, const sqlq__arg *args, size_t n) {
  const sqlq__driver *d = db->driver;
  q->rows = 0;
  q->changes = 0;
  q->taken = 0;
  if (q->then) q->flags |= SQLQ__Q_CHANGES;
  sqlq__stmt *st;
  int rc = sqlq__prepare(db, q->sql, &st);
  if (rc != SQLQ_OK) return rc;
  for (size_t i = 0; rc == SQLQ_OK && i < n; i++)
    if ((rc = bind_one(d, st, (int)i + 1, &args[i])) != SQLQ_OK)
      rc = sqlq__error(db, rc, "cannot bind parameter %zu of statement %d (%s)", i + 1, q->sql,
                       rc == SQLQ_NOMEM ? "out of memory" : "bad value");
  if (rc == SQLQ_OK && q->start) rc = q->start(db, st);
  if (rc == SQLQ_OK) rc = read_rows(db, st, q);
  d->reset(st);
  if (rc != SQLQ_OK || q->then == 0 || d->sql[q->then] == NULL || q->rows || !q->changes) return rc;
  sqlq__query then = {.sql = q->then, .row = q->row, .arg = q->arg};
  rc = sqlq__query_run(db, &then, args, n);
  q->rows = then.rows;
  return rc;
}

int sqlq__read_int64(sqlq_db *db, sqlq__stmt *st, void *arg) {
  *(int64_t *)arg = db->driver->column_is_null(st, 0) ? 0 : db->driver->column_int64(st, 0);
  return SQLQ_OK;
}

int sqlq__column_text(sqlq_db *db, sqlq__stmt *st, int i, char **out, size_t *len_out) {
  size_t len = 0;
  const void *p = db->driver->column_blob(st, i, &len);
  if ((*out = malloc(len + 1)) == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  if (len) memcpy(*out, p, len);
  (*out)[len] = '\0';
  if (len_out) *len_out = len;
  return SQLQ_OK;
}

void sqlq__column_queue(sqlq_db *db, sqlq__stmt *st, int i, char *queue) {
  size_t len = 0;
  const void *name = db->driver->column_blob(st, i, &len);
  if (len > SQLQ_QUEUE_NAME_MAX) len = SQLQ_QUEUE_NAME_MAX; /* a foreign producer's long name */
  if (name) memcpy(queue, name, len);
  queue[len] = '\0';
}

int sqlq__grow(sqlq_db *db, void **items, size_t *cap, size_t n, size_t size) {
  if (n < *cap) return SQLQ_OK;
  size_t ncap = *cap ? *cap * 2 : 8;
  void *p = realloc(*items, ncap * size);
  if (p == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  *items = p;
  *cap = ncap;
  return SQLQ_OK;
}

int sqlq__run_for_queue(sqlq_db *db, int sql, const char *queue, const int64_t *id,
                        int64_t *changes) {
  sqlq__query q = {.sql = sql, .flags = changes ? SQLQ__Q_CHANGES : 0};
  int rc = id ? sqlq__run(db, &q, SQLQ__TEXT(queue), SQLQ__INT(*id))
              : sqlq__run(db, &q, SQLQ__TEXT(queue));
  if (rc == SQLQ_OK && changes) *changes += q.changes;
  return rc;
}
