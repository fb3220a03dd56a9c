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

/* A tenant of the claim, while it may still give a job. */
struct tenant {
  int grouped;
  char *key; /* owned: "" for the jobs without a group key */
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
  x->grouped = db->driver->column_int64(st, 0) != 0;
  x->key = NULL;
  rc = sqlq__column_text(db, st, 1, &x->key, NULL);
  if (rc == SQLQ_OK) t->n++;
  return rc;
}

static void tenants_free(struct tenants *t) {
  for (size_t i = 0; i < t->n; i++) free(t->v[i].key);
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

/* The id of tenant x's next job into *id (0: it has none that may start). */
static int pick(sqlq_db *db, const char *queue, const sqlq__fair *f, const struct tenant *x,
                int64_t *id) {
  *id = 0;
  sqlq__query q = {.sql = x->grouped ? SQLQ__SQL_FAIR_PICK_GROUP : SQLQ__SQL_FAIR_PICK_FREE,
                   .row = sqlq__read_int64,
                   .arg = id};
  if (!x->grouped) return sqlq__run(db, &q, SQLQ__TEXT(queue));
  return sqlq__run(db, &q, SQLQ__TEXT(queue), SQLQ__TEXT(x->key), SQLQ__INT(f->group_running));
}

/* Take job id for tenant x, handing its row to row(arg); *taken says
** whether it was there to take. */
static int take(sqlq_db *db, const char *queue, sqlq__fair *f, const struct tenant *x, int64_t id,
                const sqlq__fair_take *t, int *taken) {
  sqlq__query q = {
    .sql = SQLQ__SQL_FAIR_TAKE, .row = t->row, .arg = t->arg, .then = SQLQ__SQL_FAIR_TAKE_ROW};
  int rc = sqlq__run(db, &q, SQLQ__INT(id), SQLQ__INT(t->token), SQLQ__INT(t->lease_us));
  *taken = rc == SQLQ_OK && q.rows > 0;
  if (!*taken) return rc;
  sqlq__query serve = {.sql = SQLQ__SQL_FAIR_SERVE};
  return sqlq__run(db, &serve, SQLQ__TEXT(queue), SQLQ__INT(x->grouped), SQLQ__TEXT(x->key),
                   SQLQ__INT(++f->served));
}

/* Take up to max jobs from the tenants t, in turns: round after round over
** the tenants in their order, dropping each that has no job left to give.
** (A tenant served goes behind every tenant not yet served in this claim,
** in the order they were served, which is their order in t.) */
static int take_turns(sqlq_db *db, const char *queue, sqlq__fair *f, struct tenants *t, int max,
                      const sqlq__fair_take *tk, int *n_out) {
  int rc = SQLQ_OK, n = 0;
  while (rc == SQLQ_OK && n < max && t->n > 0) {
    size_t kept = 0;
    for (size_t i = 0; i < t->n; i++) {
      int64_t id = 0;
      int asked = rc == SQLQ_OK && n < max, taken = 0;
      if (asked && (rc = pick(db, queue, f, &t->v[i], &id)) == SQLQ_OK && id != 0)
        rc = take(db, queue, f, &t->v[i], id, tk, &taken);
      n += taken;
      if (taken || !asked)
        t->v[kept++] = t->v[i];
      else
        free(t->v[i].key);
    }
    t->n = kept;
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
