/*
** pool.c -- pools: fair rotation over a set of items (sqlq_pool_*).
**
** A pool is the rows of sqlq_pool_items that carry its name.  Handing out
** an item is one statement of the dialect (POOL_NEXT): it picks the free
** item least recently used, ties to the lowest id, and stamps it in the
** same statement, so that two callers never get the same item while
** another is free.  The stamp is the database's clock in microseconds, or
** one microsecond past the pool's newest stamp when the clock has not
** moved on (or went back), so the order of turns is the order of calls.
** A hold is a deadline and a random token on the row: a held item is not
** free until its hold ends or its holder releases it with the token.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sqlq_int.h"

static int check_pool(sqlq_db *db, const char *pool) {
  int rc = sqlq__enter(db);
  if (rc != SQLQ_OK) return rc;
  return sqlq__check_text(db, pool, SQLQ_QUEUE_NAME_MAX, "pool name");
}

static int check_item(sqlq_db *db, const char *pool, const char *item) {
  int rc = check_pool(db, pool);
  return rc == SQLQ_OK ? sqlq__check_text(db, item, SQLQ_POOL_ITEM_MAX, "pool item") : rc;
}

/* What one call works on, and what it found. */
struct pool_op {
  const char *pool;
  const char *item;
  int64_t hold_us;
  int64_t token;
  int64_t changed;
  sqlq_pool_item *items;
  size_t n, cap;
};

/* How many items pool has (only item, when not NULL). */
static int count_items(sqlq_db *db, const char *pool, const char *item, int64_t *count) {
  *count = 0;
  sqlq__query q = {.sql = SQLQ__SQL_POOL_COUNT, .row = sqlq__read_int64, .arg = count};
  return sqlq__run(db, &q, SQLQ__TEXT(pool), SQLQ__TEXT(item));
}

/* Run statement sql, which takes $1 pool $2 item, and $3 token when
** n_args is 3, and returns no rows, adding the rows it changed to
** o->changed; flags are the run's (SQLQ__Q_TAKEN: an item already there
** changed none). */
static int run_on_item(sqlq_db *db, int sql, struct pool_op *o, size_t n_args, unsigned flags) {
  sqlq__query q = {.sql = sql, .flags = SQLQ__Q_CHANGES | flags};
  sqlq__arg args[] = {SQLQ__TEXT(o->pool), SQLQ__TEXT(o->item), SQLQ__INT(o->token)};
  int rc = sqlq__query_run(db, &q, args, n_args);
  o->changed += q.changes;
  return rc;
}

static int no_item(sqlq_db *db, const struct pool_op *o) {
  return sqlq__error(db, SQLQ_NOTFOUND, "pool '%s' has no item '%s'", o->pool, o->item);
}

/* ---------------------------------------------------------------------
** Add, remove, release.
*/

static int add_tx(sqlq_db *db, void *arg) {
  return run_on_item(db, SQLQ__SQL_POOL_ADD, arg, 2, SQLQ__Q_TAKEN);
}

SQLQ__API int sqlq_pool_add(sqlq_db *db, const char *pool, const char *item, int *added_out) {
  if (added_out) *added_out = 0;
  int rc = check_item(db, pool, item);
  if (rc != SQLQ_OK) return rc;
  struct pool_op o = {.pool = pool, .item = item};
  rc = sqlq__in_tx(db, SQLQ__TX_WRITE | SQLQ__TX_SINGLE, add_tx, &o);
  if (rc == SQLQ_OK && added_out) *added_out = o.changed > 0;
  return rc;
}

static int remove_tx(sqlq_db *db, void *arg) {
  struct pool_op *o = arg;
  int rc = run_on_item(db, SQLQ__SQL_POOL_REMOVE, o, 2, 0);
  return rc == SQLQ_OK && o->changed == 0 ? no_item(db, o) : rc;
}

SQLQ__API int sqlq_pool_remove(sqlq_db *db, const char *pool, const char *item) {
  int rc = check_item(db, pool, item);
  if (rc != SQLQ_OK) return rc;
  struct pool_op o = {.pool = pool, .item = item};
  return sqlq__in_tx(db, SQLQ__TX_WRITE | SQLQ__TX_SINGLE, remove_tx, &o);
}

static int release_tx(sqlq_db *db, void *arg) {
  struct pool_op *o = arg;
  int64_t count = 0;
  int rc = run_on_item(db, SQLQ__SQL_POOL_RELEASE, o, 3, 0);
  if (rc != SQLQ_OK || o->changed > 0) return rc;
  if ((rc = count_items(db, o->pool, o->item, &count)) != SQLQ_OK) return rc;
  if (count == 0) return no_item(db, o);
  return sqlq__error(db, SQLQ_STALE,
                     "item '%s' of pool '%s' is not held with this token (it was released, or "
                     "its hold ended)",
                     o->item, o->pool);
}

SQLQ__API int sqlq_pool_release(sqlq_db *db, const char *pool, const char *item, int64_t token) {
  int rc = check_item(db, pool, item);
  if (rc != SQLQ_OK) return rc;
  struct pool_op o = {.pool = pool, .item = item, .token = token};
  return sqlq__in_tx(db, SQLQ__TX_WRITE | SQLQ__TX_SINGLE, release_tx, &o);
}

/* ---------------------------------------------------------------------
** List and next: rows of id, item, last_used, uses, held_until.
*/

SQLQ__API void sqlq_pool_items_free(sqlq_pool_item *items, size_t n) {
  if (items == NULL) return;
  for (size_t i = 0; i < n; i++) free((void *)items[i].item);
  free(items);
}

/* Append the current row of st to o->items. */
static int add_item(sqlq_db *db, sqlq__stmt *st, void *arg) {
  struct pool_op *o = arg;
  const sqlq__driver *d = db->driver;
  char *copy = NULL;
  int rc = sqlq__grow(db, (void **)&o->items, &o->cap, o->n, sizeof *o->items);
  if (rc == SQLQ_OK) rc = sqlq__column_text(db, st, 1, &copy, NULL);
  if (rc != SQLQ_OK) return rc;
  sqlq_pool_item *it = &o->items[o->n++];
  it->id = d->column_int64(st, 0);
  it->item = copy;
  it->last_used_at_us = d->column_int64(st, 2);
  it->uses = d->column_int64(st, 3);
  it->held_until_us = d->column_is_null(st, 4) ? 0 : d->column_int64(st, 4);
  it->token = it->held_until_us ? o->token : 0;
  return SQLQ_OK;
}

static int no_pool(sqlq_db *db, const char *pool) {
  return sqlq__error(db, SQLQ_NOTFOUND, "pool '%s' has no items (add some with sqlq pool add)",
                     pool);
}

static int list_tx(sqlq_db *db, void *arg) {
  struct pool_op *o = arg;
  sqlq__query q = {.sql = SQLQ__SQL_POOL_LIST, .row = add_item, .arg = o};
  int rc = sqlq__run(db, &q, SQLQ__TEXT(o->pool));
  return rc == SQLQ_OK && o->n == 0 ? no_pool(db, o->pool) : rc;
}

static int next_tx(sqlq_db *db, void *arg) {
  struct pool_op *o = arg;
  int64_t count = 0;
  sqlq__query q = {
    .sql = SQLQ__SQL_POOL_NEXT, .row = add_item, .arg = o, .start = db->driver->pool_next};
  int rc = sqlq__run(db, &q, SQLQ__TEXT(o->pool), SQLQ__INT(o->hold_us), SQLQ__INT(o->token));
  if (rc != SQLQ_OK || o->n > 0) return rc;
  if ((rc = count_items(db, o->pool, NULL, &count)) != SQLQ_OK) return rc;
  if (count == 0) return no_pool(db, o->pool);
  return sqlq__error(db, SQLQ_BUSY, "every item of pool '%s' is held", o->pool);
}

/* Run fn in a transaction of kind and hand its items to the caller. */
static int items_call(sqlq_db *db, unsigned kind, int (*fn)(sqlq_db *, void *), struct pool_op *o,
                      sqlq_pool_item **items_out, size_t *n_out) {
  int rc = sqlq__in_tx(db, kind, fn, o);
  if (rc != SQLQ_OK) {
    sqlq_pool_items_free(o->items, o->n);
    return rc;
  }
  *items_out = o->items;
  if (n_out) *n_out = o->n;
  return SQLQ_OK;
}

SQLQ__API int sqlq_pool_list(sqlq_db *db, const char *pool, sqlq_pool_item **items_out,
                             size_t *n_out) {
  *items_out = NULL;
  *n_out = 0;
  int rc = check_pool(db, pool);
  if (rc != SQLQ_OK) return rc;
  struct pool_op o = {.pool = pool};
  return items_call(db, SQLQ__TX_READ, list_tx, &o, items_out, n_out);
}

SQLQ__API int sqlq_pool_next(sqlq_db *db, const char *pool, double hold,
                             sqlq_pool_item **item_out) {
  *item_out = NULL;
  int rc = check_pool(db, pool);
  if (rc != SQLQ_OK) return rc;
  if (!(hold >= 0) || !isfinite(hold))
    return sqlq__error(db, SQLQ_MISUSE, "hold must be 0 or more seconds");
  struct pool_op o = {.pool = pool, .hold_us = sqlq__seconds_to_us(hold)};
  o.token = o.hold_us > 0 ? sqlq__new_token() : 0;
  /* The pick is the only write; counting the items after an empty one
  ** only reads.  Losing its commit in a crash of the server only hands
  ** the item out again sooner (its stamp or hold is forgotten), as a lost
  ** claim only runs a job again: the commit need not wait for the disk. */
  return items_call(db, SQLQ__TX_WRITE | SQLQ__TX_SINGLE | SQLQ__TX_LAZY, next_tx, &o, item_out,
                    NULL);
}
