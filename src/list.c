/*
** list.c -- listing what is there: the named locks held now (sqlq_locks),
** the rings (sqlq_rings) and the pools (sqlq_pools), for dashboards and
** operators.
**
** The locks are data of each backend: the rows of one statement
** (SQLQ__SQL_LOCK_LIST, after SQLQ__SQL_LOCK_LIST_CHECK when the dialect
** has it, and SQLQ__SQL_LEASE_LIST for the leases of a database that has
** them), or the driver's lock_list method where they are not in SQL
** (SQLite: bytes of a file).  A backend with neither cannot list its
** locks.  Rings and pools are one statement each, ordered by name as
** bytes and bounded by the caller's limit, with the name to list after so
** that a caller can page through them.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sqlq_int.h"

/* Check what every listing call takes: somewhere to put the list, and a
** limit from 1 to SQLQ_LIST_MAX. */
static int check_list(sqlq_db *db, const void *out, const size_t *n_out, size_t limit,
                      const char *call) {
  if (out == NULL || n_out == NULL)
    return sqlq__error(db, SQLQ_MISUSE, "%s() needs somewhere to put the list", call);
  if (limit < 1 || limit > SQLQ_LIST_MAX)
    return sqlq__error(db, SQLQ_MISUSE, "%s(): the limit must be 1 to %d, not %zu", call,
                       SQLQ_LIST_MAX, limit);
  return SQLQ_OK;
}

/* ---------------------------------------------------------------------
** Named locks.
*/

int sqlq__lock_list_add(sqlq_db *db, sqlq__lock_list *l, const void *name, size_t name_len,
                        int64_t key, int64_t pid, const char *holder, int64_t since_at_us,
                        int64_t expires_at_us, int64_t fence) {
  int rc = sqlq__grow(db, (void **)&l->items, &l->cap, l->n, sizeof *l->items);
  if (rc != SQLQ_OK) return rc;
  sqlq_lock_info *it = &l->items[l->n];
  memset(it, 0, sizeof *it);
  if (name) {
    unsigned char *copy = malloc(name_len + 1);
    if (copy == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
    memcpy(copy, name, name_len);
    copy[name_len] = '\0';
    it->name = copy;
    it->name_len = name_len;
  }
  if (holder && *holder && (it->holder = strdup(holder)) == NULL) {
    free((void *)it->name);
    return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  }
  it->key = key;
  it->pid = pid;
  it->since_at_us = since_at_us;
  it->expires_at_us = expires_at_us;
  it->fence = fence;
  l->n++;
  return SQLQ_OK;
}

/* Column i of st as an integer, 0 for SQL NULL. */
static int64_t int_or_0(sqlq_db *db, sqlq__stmt *st, int i) {
  return db->driver->column_is_null(st, i) ? 0 : db->driver->column_int64(st, i);
}

/* A row of LOCK_LIST: name, key, pid, holder, since_at. */
static int lock_row(sqlq_db *db, sqlq__stmt *st, void *arg) {
  const sqlq__driver *d = db->driver;
  char *name = NULL, *holder = NULL;
  size_t name_len = 0;
  int rc = SQLQ_OK, named = !d->column_is_null(st, 0);
  if (named) rc = sqlq__column_text(db, st, 0, &name, &name_len);
  if (rc == SQLQ_OK && !d->column_is_null(st, 3)) rc = sqlq__column_text(db, st, 3, &holder, NULL);
  if (rc == SQLQ_OK) {
    int64_t key = d->column_is_null(st, 1) && named ? (int64_t)sqlq__hash64(name, name_len)
                                                    : int_or_0(db, st, 1);
    rc = sqlq__lock_list_add(db, arg, named ? name : NULL, name_len, key, int_or_0(db, st, 2),
                             holder, int_or_0(db, st, 4), 0, 0);
  }
  free(name);
  free(holder);
  return rc;
}

/* A row of LEASE_LIST: key, expires_at, fence. */
static int lease_row(sqlq_db *db, sqlq__stmt *st, void *arg) {
  return sqlq__lock_list_add(db, arg, NULL, 0, int_or_0(db, st, 0), 0, NULL, 0, int_or_0(db, st, 1),
                             int_or_0(db, st, 2));
}

/* A row of LOCK_LIST_CHECK: the reason, copied into the char[] at arg. */
static int reason_row(sqlq_db *db, sqlq__stmt *st, void *arg) {
  char *text = NULL;
  int rc = sqlq__column_text(db, st, 0, &text, NULL);
  if (rc == SQLQ_OK) snprintf(arg, SQLQ__ERRMSG_SIZE, "%s", text);
  free(text);
  return rc;
}

static int locks_tx(sqlq_db *db, void *arg) {
  sqlq__lock_list *l = arg;
  sqlq_lock_infos_free(l->items, l->n);
  l->items = NULL;
  l->n = l->cap = 0;
  int64_t limit = (int64_t)l->limit;
  int rc = SQLQ_OK;
  if (db->driver->sql[SQLQ__SQL_LOCK_LIST_CHECK]) {
    char reason[SQLQ__ERRMSG_SIZE] = "";
    sqlq__query q = {.sql = SQLQ__SQL_LOCK_LIST_CHECK, .row = reason_row, .arg = reason};
    rc = sqlq__query_run(db, &q, NULL, 0);
    if (rc == SQLQ_OK && q.rows > 0)
      return sqlq__error(db, SQLQ_UNAVAILABLE, "cannot list the named locks: %s", reason);
  }
  sqlq__query q = {.sql = SQLQ__SQL_LOCK_LIST, .row = lock_row, .arg = l};
  if (rc == SQLQ_OK) rc = sqlq__run(db, &q, SQLQ__INT(limit));
  int version = 0;
  if (rc == SQLQ_OK && db->driver->sql[SQLQ__SQL_LEASE_LIST])
    rc = sqlq__schema_version(db, &version);
  if (rc == SQLQ_OK && version >= SQLQ__LEASES_VERSION) {
    sqlq__query lq = {.sql = SQLQ__SQL_LEASE_LIST, .row = lease_row, .arg = l};
    rc = sqlq__run(db, &lq, SQLQ__INT(limit));
  }
  return rc;
}

/* Named locks first, by name as bytes, then the others; then by key. */
static int by_name_then_key(const void *pa, const void *pb) {
  const sqlq_lock_info *a = pa, *b = pb;
  if ((a->name == NULL) != (b->name == NULL)) return a->name == NULL ? 1 : -1;
  if (a->name) {
    size_t n = a->name_len < b->name_len ? a->name_len : b->name_len;
    int c = memcmp(a->name, b->name, n);
    if (c != 0) return c;
    if (a->name_len != b->name_len) return a->name_len < b->name_len ? -1 : 1;
  }
  return a->key < b->key ? -1 : a->key > b->key;
}

SQLQ__API int sqlq_locks(sqlq_db *db, size_t limit, sqlq_lock_info **locks_out, size_t *n_out) {
  if (locks_out) *locks_out = NULL;
  if (n_out) *n_out = 0;
  int rc = sqlq__enter(db);
  if (rc == SQLQ_OK) rc = check_list(db, locks_out, n_out, limit, "sqlq_locks");
  if (rc != SQLQ_OK) return rc;
  const sqlq__driver *d = db->driver;
  sqlq__lock_list l = {.limit = limit};
  if (d->lock_list)
    rc = d->lock_list(db, &l);
  else if (d->sql[SQLQ__SQL_LOCK_LIST] == NULL)
    rc = sqlq__error(db, SQLQ_UNAVAILABLE,
                     "the %s backend cannot list its named locks (docs/serve.md)", d->name);
  else
    rc = sqlq__in_tx(db, SQLQ__TX_READ, locks_tx, &l);
  if (rc != SQLQ_OK) {
    sqlq_lock_infos_free(l.items, l.n);
    return rc;
  }
  if (l.n > 1) qsort(l.items, l.n, sizeof *l.items, by_name_then_key);
  while (l.n > limit) { /* a lock list and a lease list of limit each */
    l.n--;
    free((void *)l.items[l.n].name);
    free((void *)l.items[l.n].holder);
  }
  *locks_out = l.items;
  *n_out = l.n;
  return SQLQ_OK;
}

SQLQ__API void sqlq_lock_infos_free(sqlq_lock_info *locks, size_t n) {
  if (locks == NULL) return;
  for (size_t i = 0; i < n; i++) {
    free((void *)locks[i].name);
    free((void *)locks[i].holder);
  }
  free(locks);
}

SQLQ__API int sqlq_lock_key(sqlq_db *db, const void *name, size_t name_len, int64_t *key_out) {
  if (key_out) *key_out = 0;
  int rc = sqlq__enter(db);
  if (rc != SQLQ_OK) return rc;
  if (key_out == NULL) return sqlq__error(db, SQLQ_MISUSE, "sqlq_lock_key() needs key_out");
  if (name == NULL || name_len == 0) return sqlq__error(db, SQLQ_MISUSE, "lock name is empty");
  if (name_len > SQLQ_LOCK_NAME_MAX)
    return sqlq__error(db, SQLQ_TOOBIG, "lock name of %zu bytes is longer than %d bytes", name_len,
                       SQLQ_LOCK_NAME_MAX);
  uint64_t key = sqlq__hash64(name, name_len);
  *key_out = db->driver->lock_key ? db->driver->lock_key(key) : (int64_t)key;
  return SQLQ_OK;
}

/* ---------------------------------------------------------------------
** Rings and pools: one statement each, $1 the name to list after, $2 the
** limit.
*/

/* A listing of rings or pools under way. */
struct listing {
  int sql; /* RING_LIST or POOL_LIST_ALL */
  const char *after;
  int64_t limit;
  void *items; /* sqlq_ring_info or sqlq_pool_info */
  size_t n, cap, size;
  void (*free_items)(void *items, size_t n);
  /* Fill the element at item from the row of st, its name given. */
  void (*fill)(sqlq_db *db, sqlq__stmt *st, void *item, char *name);
};

static int listing_row(sqlq_db *db, sqlq__stmt *st, void *arg) {
  struct listing *g = arg;
  char *name = NULL;
  int rc = sqlq__grow(db, &g->items, &g->cap, g->n, g->size);
  if (rc == SQLQ_OK) rc = sqlq__column_text(db, st, 0, &name, NULL);
  if (rc != SQLQ_OK) return rc;
  void *item = (char *)g->items + g->n * g->size;
  memset(item, 0, g->size);
  g->fill(db, st, item, name);
  g->n++;
  return SQLQ_OK;
}

static int listing_tx(sqlq_db *db, void *arg) {
  struct listing *g = arg;
  g->free_items(g->items, g->n);
  g->items = NULL;
  g->n = g->cap = 0;
  int version = 0;
  int rc = sqlq__schema_version(db, &version);
  if (rc != SQLQ_OK || version < 2) return rc; /* no rings nor pools yet */
  sqlq__query q = {.sql = g->sql, .row = listing_row, .arg = g};
  return sqlq__run(db, &q, SQLQ__TEXT(g->after), SQLQ__INT(g->limit));
}

static int list_named(sqlq_db *db, struct listing *g, const char *after, size_t limit, void **out,
                      size_t *n_out, const char *call, const char *what) {
  if (out) *out = NULL;
  if (n_out) *n_out = 0;
  int rc = sqlq__enter(db);
  if (rc == SQLQ_OK) rc = check_list(db, out, n_out, limit, call);
  if (rc == SQLQ_OK && after && *after) rc = sqlq__check_text(db, after, SQLQ_QUEUE_NAME_MAX, what);
  if (rc != SQLQ_OK) return rc;
  g->after = after && *after ? after : NULL;
  g->limit = (int64_t)limit;
  rc = sqlq__in_tx(db, SQLQ__TX_READ, listing_tx, g);
  if (rc != SQLQ_OK) {
    g->free_items(g->items, g->n);
    return rc;
  }
  *out = g->items;
  *n_out = g->n;
  return SQLQ_OK;
}

/* A row of RING_LIST: name, capacity, last seq, created_at. */
static void fill_ring(sqlq_db *db, sqlq__stmt *st, void *item, char *name) {
  sqlq_ring_info *r = item;
  r->name = name;
  r->capacity = int_or_0(db, st, 1);
  r->last_seq = int_or_0(db, st, 2);
  r->entries = r->last_seq < r->capacity ? r->last_seq : r->capacity;
  r->created_at_us = int_or_0(db, st, 3);
}

static void free_rings(void *items, size_t n) {
  sqlq_ring_infos_free(items, n);
}

SQLQ__API int sqlq_rings(sqlq_db *db, const char *after, size_t limit, sqlq_ring_info **rings_out,
                         size_t *n_out) {
  struct listing g = {.sql = SQLQ__SQL_RING_LIST,
                      .size = sizeof(sqlq_ring_info),
                      .free_items = free_rings,
                      .fill = fill_ring};
  return list_named(db, &g, after, limit, (void **)rings_out, n_out, "sqlq_rings", "ring name");
}

SQLQ__API void sqlq_ring_infos_free(sqlq_ring_info *rings, size_t n) {
  if (rings == NULL) return;
  for (size_t i = 0; i < n; i++) free((void *)rings[i].name);
  free(rings);
}

/* A row of POOL_LIST_ALL: pool, items, held, newest last_used. */
static void fill_pool(sqlq_db *db, sqlq__stmt *st, void *item, char *name) {
  sqlq_pool_info *p = item;
  p->name = name;
  p->items = int_or_0(db, st, 1);
  p->held = int_or_0(db, st, 2);
  p->last_used_at_us = int_or_0(db, st, 3);
}

static void free_pools(void *items, size_t n) {
  sqlq_pool_infos_free(items, n);
}

SQLQ__API int sqlq_pools(sqlq_db *db, const char *after, size_t limit, sqlq_pool_info **pools_out,
                         size_t *n_out) {
  struct listing g = {.sql = SQLQ__SQL_POOL_LIST_ALL,
                      .size = sizeof(sqlq_pool_info),
                      .free_items = free_pools,
                      .fill = fill_pool};
  return list_named(db, &g, after, limit, (void **)pools_out, n_out, "sqlq_pools", "pool name");
}

SQLQ__API void sqlq_pool_infos_free(sqlq_pool_info *pools, size_t n) {
  if (pools == NULL) return;
  for (size_t i = 0; i < n; i++) free((void *)pools[i].name);
  free(pools);
}
