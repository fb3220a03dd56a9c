/*
** fair.c -- fair claiming: a fair queue's claims take its jobs round-robin
** across tenants (group keys; the jobs without one are a tenant too),
** instead of in the queue's order.  See docs/schema.md, "Fair claiming".
**
** A fair queue counts as limited (PAUSED, CLAIM), so its claims hold its
** sqlq_queues row (FAIR_LOCK) and take turns: each reads the turns
** (sqlq_groups) as the claim before it left them.  The claim takes its jobs
** one at a time: each time, the tenant with the lowest (served, grouped,
** key) among those with a job that may start, and that tenant's first such
** job by (priority DESC, run_at, id); the tenant's served becomes the
** queue's next sequence number.
*/
#include <stdlib.h>

#include "sqlq_int.h"

/* A tenant of the claim: its key, the ids of its next jobs as its last
** pick read them (ids[at..n_ids)), whether that pick read all it has, and
** the sequence number of its last job taken (0: none in this claim). */
struct tenant {
  int grouped;
  char *key; /* owned: "" for the jobs without a group key */
  int64_t *ids;
  size_t n_ids, at, cap;
  int all_read;
  int64_t served;
};

struct tenants {
  sqlq_db *db;
  struct tenant *v;
  size_t n, cap;
};

static int read_tenant(sqlq_db *db, sqlq__stmt *st, void *arg) {
  struct tenants *t = arg;
  int rc = sqlq__grow(db, (void **)&t->v, &t->cap, t->n, sizeof *t->v);
  if (rc != SQLQ_OK) return rc;
  struct tenant *x = &t->v[t->n];
  *x = (struct tenant){.grouped = db->driver->column_int64(st, 0) != 0};
  rc = sqlq__column_text(db, st, 1, &x->key, NULL);
  if (rc == SQLQ_OK) t->n++;
  return rc;
}

static void tenants_free(struct tenants *t) {
  for (size_t i = 0; i < t->n; i++) {
    free(t->v[i].key);
    free(t->v[i].ids);
  }
  free(t->v);
}

static int read_lock(sqlq_db *db, sqlq__stmt *st, void *arg) {
  sqlq__fair *f = arg;
  f->served = db->driver->column_int64(st, 0);
  f->group_running = db->driver->column_int64(st, 1);
  return SQLQ_OK;
}

int sqlq__fair_lock(sqlq_db *db, const char *queue, sqlq__fair *f) {
  sqlq__query q = {.sql = SQLQ__SQL_FAIR_LOCK, .row = read_lock, .arg = f};
  f->fair = 0;
  int rc = sqlq__run(db, &q, SQLQ__TEXT(queue));
  if (rc == SQLQ_OK) f->fair = q.rows > 0;
  return rc;
}

/* Read the ids of the tenant *arg's jobs. */
static int read_id(sqlq_db *db, sqlq__stmt *st, void *arg) {
  struct tenant *x = arg;
  int rc = sqlq__grow(db, (void **)&x->ids, &x->cap, x->n_ids, sizeof *x->ids);
  if (rc == SQLQ_OK) x->ids[x->n_ids++] = db->driver->column_int64(st, 0);
  return rc;
}

/* Read the ids of up to want next jobs of tenant x that may start, in its
** order, into x->ids.  (The jobs this claim took are running now: a pick
** after them reads the ones after them.) */
static int pick(sqlq_db *db, const char *queue, const sqlq__fair *f, struct tenant *x,
                int64_t want) {
  x->n_ids = x->at = 0;
  sqlq__query q = {.sql = x->grouped ? SQLQ__SQL_FAIR_PICK_GROUP : SQLQ__SQL_FAIR_PICK_FREE,
                   .row = read_id,
                   .arg = x};
  int rc = x->grouped ? sqlq__run(db, &q, SQLQ__TEXT(queue), SQLQ__TEXT(x->key),
                                  SQLQ__INT(f->group_running), SQLQ__INT(want))
                      : sqlq__run(db, &q, SQLQ__TEXT(queue), SQLQ__INT(want));
  x->all_read = (int64_t)x->n_ids < want;
  return rc;
}

/* Take tenant x's next job, if it has one, handing its row to t->row;
** *taken says whether it did. */
static int take(sqlq_db *db, const char *queue, sqlq__fair *f, struct tenant *x, int64_t want,
                const sqlq__fair_take *t, int *taken) {
  *taken = 0;
  int rc = SQLQ_OK;
  while (rc == SQLQ_OK && !*taken) {
    if (x->at == x->n_ids && (x->all_read || (rc = pick(db, queue, f, x, want)) != SQLQ_OK))
      return rc;
    if (x->at == x->n_ids) return SQLQ_OK;
    sqlq__query q = {
      .sql = SQLQ__SQL_FAIR_TAKE, .row = t->row, .arg = t->arg, .then = SQLQ__SQL_FAIR_TAKE_ROW};
    rc = sqlq__run(db, &q, SQLQ__INT(x->ids[x->at++]), SQLQ__INT(t->token), SQLQ__INT(t->lease_us));
    *taken = rc == SQLQ_OK && q.rows > 0;
  }
  if (*taken) x->served = ++f->served;
  return rc;
}

/* Take up to max jobs from the tenants t, in turns: round after round over
** the tenants in their order, dropping each that has no job left to give.
** (A tenant served goes behind every tenant not yet served in this claim,
** in the order they were served, which is their order in t.)  A tenant's
** pick reads as many ids as the rounds left may take from it. */
static int take_turns(sqlq_db *db, const char *queue, sqlq__fair *f, struct tenants *t, int max,
                      const sqlq__fair_take *tk, int *n_out) {
  int rc = SQLQ_OK, n = 0;
  struct tenant **live = malloc(t->n * sizeof *live + 1);
  if (live == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  size_t n_live = t->n;
  for (size_t i = 0; i < n_live; i++) live[i] = &t->v[i];
  while (rc == SQLQ_OK && n < max && n_live > 0) {
    int64_t want = (max - n + (int64_t)n_live - 1) / (int64_t)n_live;
    size_t kept = 0;
    for (size_t i = 0; i < n_live; i++) {
      int asked = rc == SQLQ_OK && n < max, taken = 0;
      if (asked) rc = take(db, queue, f, live[i], want, tk, &taken);
      n += taken;
      if (taken || !asked) live[kept++] = live[i];
    }
    n_live = kept;
  }
  free(live);
  /* Each tenant served keeps the number of its last job. */
  for (size_t i = 0; i < t->n && rc == SQLQ_OK; i++) {
    sqlq__query serve = {.sql = SQLQ__SQL_FAIR_SERVE};
    if (t->v[i].served)
      rc = sqlq__run(db, &serve, SQLQ__TEXT(queue), SQLQ__INT(t->v[i].grouped),
                     SQLQ__TEXT(t->v[i].key), SQLQ__INT(t->v[i].served));
  }
  *n_out = n;
  return rc;
}

int sqlq__fair_claim(sqlq_db *db, const char *queue, sqlq__fair *f, int max,
                     const sqlq__fair_take *tk, int *n_out) {
  *n_out = 0;
  const sqlq__driver *d = db->driver;
  int rc = d->sql[SQLQ__SQL_FAIR_REAP]
             ? sqlq__run_for_queue(db, SQLQ__SQL_FAIR_REAP, queue, NULL, NULL)
             : SQLQ_OK;
  struct tenants t = {db, NULL, 0, 0};
  sqlq__query q = {.sql = SQLQ__SQL_FAIR_TENANTS, .row = read_tenant, .arg = &t};
  if (rc == SQLQ_OK) rc = sqlq__run(db, &q, SQLQ__TEXT(queue));
  int64_t before = f->served;
  if (rc == SQLQ_OK) rc = take_turns(db, queue, f, &t, max, tk, n_out);
  tenants_free(&t);
  sqlq__query served = {.sql = SQLQ__SQL_FAIR_SERVED};
  if (rc == SQLQ_OK && f->served != before)
    rc = sqlq__run(db, &served, SQLQ__TEXT(queue), SQLQ__INT(f->served));
  return rc;
}
