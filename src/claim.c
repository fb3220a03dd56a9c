/*
** claim.c -- claiming jobs and finishing them: ack, fail, release, touch.
**
** Every finishing call presents the claim token.  The SQL of each matches
** "id = $1 AND token = $2 AND state = running", so a stale token changes no
** row, and the call reports SQLQ_STALE.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "sqlq_int.h"

#define DEFAULT_LEASE 30.0
#define DEFAULT_BACKOFF 1.0
#define MAX_BACKOFF 86400.0
#define ERROR_TEXT_MAX 4096

/* A uniform double in [0, 1) from the kernel's random source. */
static double random_unit(void) {
  uint64_t r = 0;
  if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r) r = (uint64_t)sqlq__monotonic_ns();
  return (double)(r >> 11) / 9007199254740992.0;
}

/* ---------------------------------------------------------------------
** Claim.
*/

struct claim {
  const char *queue;
  int max;
  int64_t lease_us;
  int64_t token;
  int counted;      /* claim under the queue's limit (LIMIT_LOCK first) */
  int limited;      /* out: the queue was found to have a concurrency or rate
                  limit */
  int rated;        /* the counted claim found a rate limit: its jobs take the
                  first of the free slots */
  sqlq__slots free; /* the free slots of the queue's rate */
  sqlq_job *jobs;
  int n;
  size_t cap;
  int lanes;          /* the claim goes by lanes (cursor.c) */
  const char *cursor; /* the cursor it passes (NULL: none) */
  char *cursor_out;   /* the one it returned (owned; NULL: none) */
};

/* Copy n bytes and a NUL to *p, advance *p past them, return the copy. */
static char *put_bytes(char **p, const void *src, size_t n) {
  char *at = *p;
  if (n) memcpy(at, src, n);
  at[n] = '\0';
  *p += n + 1;
  return at;
}

/* Copy one RETURNING row into job.  One block holds the payload, the queue
** name and the keys; job->payload points at its start. */
static int copy_row(sqlq_db *db, sqlq__stmt *st, const char *queue, int64_t token, sqlq_job *job) {
  const sqlq__driver *d = db->driver;
  size_t plen = 0, glen = 0, klen = 0, qlen = strlen(queue);
  const void *payload = d->column_blob(st, 9, &plen);
  const void *group = d->column_blob(st, 7, &glen);
  const void *dedupe = d->column_blob(st, 8, &klen);
  char *block = malloc(plen + 1 + qlen + 1 + glen + 1 + klen + 1);
  if (block == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  char *p = block;
  job->payload = (unsigned char *)put_bytes(&p, payload ? payload : "", plen);
  job->payload_len = plen;
  job->queue = put_bytes(&p, queue, qlen);
  job->group_key = group ? put_bytes(&p, group, glen) : NULL;
  job->dedupe_key = dedupe ? put_bytes(&p, dedupe, klen) : NULL;
  job->id = d->column_int64(st, 0);
  job->token = token;
  job->priority = (int)d->column_int64(st, 1);
  job->run_at_us = d->column_int64(st, 2);
  job->attempts = (int)d->column_int64(st, 3);
  job->max_attempts = (int)d->column_int64(st, 4);
  job->created_at_us = d->column_int64(st, 5);
  job->lease_until_us = d->column_int64(st, 6);
  return SQLQ_OK;
}

/* The row of PAUSED. */
struct queue_flags {
  int paused, limited;
};

static int read_flags(sqlq_db *db, sqlq__stmt *st, void *arg) {
  struct queue_flags *f = arg;
  f->paused = db->driver->column_int64(st, 0) != 0;
  f->limited = db->driver->column_int64(st, 1) != 0;
  return SQLQ__DONE;
}

static int job_order(const void *a, const void *b) {
  const sqlq_job *x = a, *y = b;
  if (x->priority != y->priority) return x->priority > y->priority ? -1 : 1;
  if (x->run_at_us != y->run_at_us) return x->run_at_us < y->run_at_us ? -1 : 1;
  return (x->id > y->id) - (x->id < y->id);
}

/* Add the job of a CLAIM row to c; keep the cursor of CLAIM_LANES's last
** row, whose id is NULL. */
static int add_job(sqlq_db *db, sqlq__stmt *st, void *arg) {
  struct claim *c = arg;
  if (db->driver->column_is_null(st, 0)) {
    free(c->cursor_out);
    c->cursor_out = NULL;
    return sqlq__column_text(db, st, 10, &c->cursor_out, NULL);
  }
  int rc = sqlq__grow(db, (void **)&c->jobs, &c->cap, (size_t)c->n, sizeof *c->jobs);
  if (rc == SQLQ_OK) rc = copy_row(db, st, c->queue, c->token, &c->jobs[c->n]);
  if (rc == SQLQ_OK) c->n++;
  return rc;
}

/* The row of LIMIT_LOCK (rates 0) or LIMIT_LOCK_RATES (rates 1); a limit
** not set is -1 (cap) or 0 (rate_max). */
struct limits {
  int rates;
  int64_t cap, rate_max, rate_period;
};

static int read_limits(sqlq_db *db, sqlq__stmt *st, void *arg) {
  struct limits *l = arg;
  const sqlq__driver *d = db->driver;
  l->cap = d->column_is_null(st, 0) ? -1 : d->column_int64(st, 0);
  if (l->rates && !d->column_is_null(st, 1)) {
    l->rate_max = d->column_int64(st, 1);
    l->rate_period = d->column_int64(st, 2);
  }
  return SQLQ__DONE;
}

/* Lower *max to the free slots of c's queue when it has a concurrency
** limit, and to the starts its rate has left in the window when it has a
** rate limit, holding the queue's row until the transaction ends.  Every
** claim of a limited queue holds that row while it counts and claims, so
** each counts the jobs of the claims committed before it, and none of
** them overtakes another (docs/schema.md, "Concurrency limits", "Rate
** limits"). */
static int free_slots(sqlq_db *db, struct claim *c, int *max) {
  struct limits l = {.rates = db->limits_schema >= SQLQ__LIMITS_RATES, .cap = -1};
  int64_t running = 0;
  sqlq__query lock = {.sql = l.rates ? SQLQ__SQL_LIMIT_LOCK_RATES : SQLQ__SQL_LIMIT_LOCK,
                      .row = read_limits,
                      .arg = &l};
  int rc = sqlq__run(db, &lock, SQLQ__TEXT(c->queue));
  if (rc != SQLQ_OK || lock.rows == 0) return rc;
  c->limited = 1;
  sqlq__query count = {.sql = SQLQ__SQL_LIMIT_RUNNING, .row = sqlq__read_int64, .arg = &running};
  if (l.cap >= 0) rc = sqlq__run(db, &count, SQLQ__TEXT(c->queue));
  if (rc == SQLQ_OK && l.cap >= 0 && l.cap - running < *max)
    *max = l.cap > running ? (int)(l.cap - running) : 0;
  if (rc != SQLQ_OK || l.rate_max <= 0 || *max == 0) return rc;
  c->rated = 1;
  rc = sqlq__rate_free(db, c->queue, l.rate_period, *max, &c->free);
  if (rc == SQLQ_OK && c->free.n < (size_t)*max) *max = (int)c->free.n;
  return rc;
}

static int claim_tx(sqlq_db *db, void *arg) {
  struct claim *c = arg;
  const sqlq__driver *d = db->driver;
  int rc, max = c->max;
  /* A run again after a deadlock forgets what the first run copied. */
  for (int i = 0; i < c->n; i++) free((void *)c->jobs[i].payload);
  c->n = 0;
  free(c->cursor_out);
  c->cursor_out = NULL;
  c->limited = 0;
  c->rated = 0;
  if (d->sql[SQLQ__SQL_REAP] &&
      (rc = sqlq__run_for_queue(db, SQLQ__SQL_REAP, c->queue, NULL, NULL)) != SQLQ_OK)
    return rc;
  /* A fair queue's claim locks its row first (and counts as limited). */
  sqlq__fair fair = {0};
  if (c->counted && db->limits_schema == SQLQ__LIMITS_GROUPS &&
      (rc = sqlq__fair_lock(db, c->queue, &fair)) != SQLQ_OK)
    return rc;
  c->limited = fair.fair;
  if (c->counted && (rc = free_slots(db, c, &max)) != SQLQ_OK) return rc;
  c->token = sqlq__new_token();
  /* CLAIM_UNLIMITED takes no $5, only CLAIM_LANES a $6. */
  c->lanes = sqlq__cursor_get(db, c->queue, &c->cursor);
  size_t nargs = c->lanes ? 6 : db->limits_schema != SQLQ__LIMITS_NONE ? 5 : 4;
  sqlq__arg args[] = {SQLQ__TEXT(c->queue), SQLQ__INT(c->token),   SQLQ__INT(c->lease_us),
                      SQLQ__INT(max),       SQLQ__INT(c->counted), SQLQ__TEXT(c->cursor)};
  sqlq__query q = {.sql = c->lanes
                            ? SQLQ__SQL_CLAIM_LANES
                            : sqlq__limits_sql(db, SQLQ__SQL_CLAIM_UNLIMITED, SQLQ__SQL_CLAIM,
                                               SQLQ__SQL_CLAIM_RATES, SQLQ__SQL_CLAIM_GROUPS),
                   .row = add_job,
                   .arg = c,
                   .start = d->claim};
  sqlq__fair_take take = {c->token, c->lease_us, add_job, c};
  int taken = 0;
  if (max == 0)
    rc = SQLQ_OK;
  else if (fair.fair)
    rc = sqlq__fair_claim(db, c->queue, &fair, max, &take, &taken);
  else {
    int64_t t0 = sqlq__monotonic_ns();
    int n0 = c->n;
    rc = sqlq__query_run(db, &q, args, nargs);
    if (rc == SQLQ_OK && !c->lanes)
      sqlq__claim_took(db, c->queue, c->n - n0, sqlq__monotonic_ns() - t0);
  }
  /* Its jobs started in the oldest of the free slots. */
  if (rc == SQLQ_OK && c->rated && c->n > 0)
    rc = sqlq__rate_stamp(db, c->queue, &c->free.v[c->n - 1]);
  if (rc != SQLQ_OK) return rc;
  /* A fair claim's jobs come in the order of turns; the others in the
  ** queue's order. */
  if (c->n > 1 && !fair.fair) qsort(c->jobs, (size_t)c->n, sizeof *c->jobs, job_order);
  /* A paused queue gives no jobs; say why.  A limited one gave none
  ** without counting: the caller claims again, counting. */
  struct queue_flags flags = {0};
  sqlq__query pq = {.sql = sqlq__limits_sql(db, SQLQ__SQL_PAUSED_UNLIMITED, SQLQ__SQL_PAUSED,
                                            SQLQ__SQL_PAUSED_RATES, SQLQ__SQL_PAUSED_GROUPS),
                    .row = read_flags,
                    .arg = &flags};
  if (c->n == 0 && (rc = sqlq__run(db, &pq, SQLQ__TEXT(c->queue))) != SQLQ_OK) return rc;
  if (flags.paused) return sqlq__error(db, SQLQ_PAUSED, "queue '%s' is paused", c->queue);
  c->limited |= flags.limited;
  return SQLQ_OK;
}

static int limits_schema_tx(sqlq_db *db, void *unused) {
  (void)unused;
  return sqlq__limits_schema(db);
}

/* Claim into c: first without counting unless the handle's hint says that
** the queue is limited, then, when the queue turned out to be, counting.
** A queue without a limit costs its claims nothing more than the test of
** its sqlq_queues row that the claim makes for pausing anyway. */
static int claim_in_tx(sqlq_db *db, struct claim *c) {
  /* Without a separate reap, the claim statement is the one write.  (Should
  ** copying its rows run out of memory, the jobs it took wait out their
  ** lease.) */
  unsigned kind = SQLQ__TX_WRITE | SQLQ__TX_LAZY;
  unsigned single = db->driver->sql[SQLQ__SQL_REAP] ? 0 : SQLQ__TX_SINGLE;
  int rc =
    sqlq__limits_known(db) ? SQLQ_OK : sqlq__in_tx(db, SQLQ__TX_READ, limits_schema_tx, NULL);
  if (rc != SQLQ_OK) return rc;
  c->counted = strcmp(db->limited_queue, c->queue) == 0;
  rc = sqlq__in_tx(db, kind | (c->counted ? SQLQ__TX_WAITS : single), claim_tx, c);
  if (rc == SQLQ_OK && c->n == 0 && c->limited && !c->counted) {
    c->counted = 1;
    rc = sqlq__in_tx(db, kind | SQLQ__TX_WAITS, claim_tx, c);
  }
  if (rc == SQLQ_OK && c->cursor_out) {
    sqlq__cursor_put(db, c->queue, c->cursor_out);
    c->cursor_out = NULL;
  }
  if (rc == SQLQ_OK && c->limited)
    snprintf(db->limited_queue, sizeof db->limited_queue, "%s", c->queue);
  else if (rc == SQLQ_OK && c->counted)
    db->limited_queue[0] = '\0';
  return rc;
}

SQLQ__API int sqlq_claim(sqlq_db *db, const char *queue, size_t max, const sqlq_claim_options *opts,
                         sqlq_job **jobs_out, size_t *n_out) {
  if (jobs_out) *jobs_out = NULL;
  if (n_out) *n_out = 0;
  sqlq_claim_options o;
  int rc = sqlq__enter(db);
  if (rc == SQLQ_OK) rc = sqlq__read_options(db, opts, sizeof o, &o, "sqlq_claim_options");
  if (rc == SQLQ_OK) rc = sqlq__check_queue(db, queue);
  if (rc != SQLQ_OK) return rc;
  if (jobs_out == NULL || n_out == NULL)
    return sqlq__error(db, SQLQ_MISUSE, "sqlq_claim() needs somewhere to put the jobs");
  if (max < 1 || max > 100000)
    return sqlq__error(db, SQLQ_MISUSE, "claim count must be 1 to 100000, not %zu", max);
  double lease = o.lease == 0 ? DEFAULT_LEASE : o.lease;
  if ((rc = sqlq__check_seconds(db, lease, 0, "lease")) != SQLQ_OK) return rc;
  /* Whoever fills history prunes it (see Retention in sqlq.h). */
  if (db->keep_history) sqlq__prune_due(db, queue);
  struct claim c = {.queue = queue, .max = (int)max, .lease_us = sqlq__seconds_to_us(lease)};
  int64_t t0 = sqlq__monotonic_ns();
  rc = claim_in_tx(db, &c);
  free(c.free.v);
  free(c.cursor_out);
  if (rc != SQLQ_OK) {
    sqlq_jobs_free(c.jobs, (size_t)c.n);
    return rc;
  }
  sqlq__count_claim(db, queue, c.jobs, (size_t)c.n, sqlq__monotonic_ns() - t0, c.lease_us);
  sqlq__counts_flush_due(db);
  if (c.n == 0) {
    free(c.jobs);
    c.jobs = NULL;
  }
  *jobs_out = c.jobs;
  *n_out = (size_t)c.n;
  return SQLQ_OK;
}

SQLQ__API void sqlq_jobs_free(sqlq_job *jobs, size_t n) {
  if (jobs == NULL) return;
  for (size_t i = 0; i < n; i++) free((void *)jobs[i].payload);
  free(jobs);
}

/* ---------------------------------------------------------------------
** Finishing calls.
*/

/* What a statement keyed by ($1 id, $2 token) did: whether it changed the
** job, and column 0 of the row it returned, as an integer and as text (the
** caller frees it) when asked for. */
struct held {
  int changed;
  int64_t col0;
  char **text0;
};

static int read_held(sqlq_db *db, sqlq__stmt *st, void *arg) {
  struct held *h = arg;
  const sqlq__driver *d = db->driver;
  h->col0 = d->column_int64(st, 0);
  return h->text0 == NULL || *h->text0 ? SQLQ_OK : sqlq__column_text(db, st, 0, h->text0, NULL);
}

/* Run sql with args, reading into h; then (its *_ROW statement) reads the
** row of a dialect whose sql returns none. */
static int run_held(sqlq_db *db, int sql, int then, const sqlq__arg *args, size_t n,
                    struct held *h) {
  sqlq__query q = {.sql = sql, .row = read_held, .arg = h, .flags = SQLQ__Q_CHANGES, .then = then};
  int rc = sqlq__query_run(db, &q, args, n);
  h->changed = q.rows > 0 || q.changes > 0;
  return rc;
}

static int stale(sqlq_db *db, int64_t id) {
  return sqlq__error(
    db, SQLQ_STALE,
    "job %lld is not held with this token (its lease expired, or it was finished or purged)",
    (long long)id);
}

/* One pass of sqlq_ack_batch() over refs[0..n).  The first pass, with
** guard set on a database that has dependencies, acks only the jobs no
** other job waits for (the *_FREE statements); the refs it leaves, whose
** jobs others wait for or whose tokens are stale, go through a second
** pass, release set, which acks them one at a time and lets their
** dependents run.  So an ack of a job nobody waits for runs the statements
** it ran before dependencies existed, and no more. */
struct acks {
  const sqlq_job_ref *refs;
  size_t n;
  int by_array; /* with the array statement (see sqlq_ack_batch) */
  int guard;    /* the *_FREE statements */
  int release;  /* sqlq__deps_release each job acked */
  size_t acked;
  sqlq_job_ref *left; /* room for n: the refs not acked, in refs' order */
  size_t n_left;
};

/* Ids read from rows into ids[0..max): n of them. */
struct ids_read {
  int64_t *ids;
  size_t max, n;
};

static int read_id(sqlq_db *db, sqlq__stmt *st, void *arg) {
  struct ids_read *r = arg;
  if (r->n < r->max) r->ids[r->n++] = db->driver->column_int64(st, 0);
  return SQLQ_OK;
}

/* The statement sql (ACK, HISTORY_COPY, ACK_ARRAY, ACK_HISTORY_ARRAY), or
** its *_FREE twin when a->guard is set. */
static int ack_sql(const struct acks *a, int sql) {
  if (!a->guard) return sql;
  switch (sql) {
  case SQLQ__SQL_ACK:
    return SQLQ__SQL_ACK_FREE;
  case SQLQ__SQL_HISTORY_COPY:
    return SQLQ__SQL_HISTORY_COPY_FREE;
  case SQLQ__SQL_ACK_ARRAY:
    return SQLQ__SQL_ACK_ARRAY_FREE;
  default:
    return SQLQ__SQL_ACK_HISTORY_ARRAY_FREE;
  }
}

/* Ack refs[0..n), a part of a->refs, with one array statement, adding
** the jobs acked to a->acked and the refs not acked to a->left. */
static int ack_array(sqlq_db *db, struct acks *a, const sqlq_job_ref *refs, size_t n) {
  int64_t *v = malloc(n * 2 * sizeof *v);
  if (v == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  for (size_t i = 0; i < n; i++) {
    v[i] = refs[i].id;
    v[n + i] = refs[i].token;
  }
  /* The acked ids overwrite the front of v, which the driver has copied. */
  struct ids_read acked = {v, n, 0};
  sqlq__query q = {
    .sql = ack_sql(a, db->keep_history ? SQLQ__SQL_ACK_HISTORY_ARRAY : SQLQ__SQL_ACK_ARRAY),
    .row = read_id,
    .arg = &acked};
  int rc = sqlq__run(db, &q, SQLQ__INTS(v, n), SQLQ__INTS(v + n, n));
  if (rc == SQLQ_OK) {
    a->acked += acked.n;
    qsort(v, acked.n, sizeof *v, sqlq__id_order);
    for (size_t i = 0; i < n && acked.n < n; i++)
      if (!bsearch(&refs[i].id, v, acked.n, sizeof *v, sqlq__id_order))
        a->left[a->n_left++] = refs[i];
  }
  free(v);
  return rc;
}

/* Does the dialect have the array ack this handle needs (with or without
** history)? */
static int has_ack_array(const sqlq_db *db) {
  const char *const *sql = db->driver->sql;
  return sql[db->keep_history ? SQLQ__SQL_ACK_HISTORY_ARRAY : SQLQ__SQL_ACK_ARRAY] != NULL;
}

/* Ack one job, copying it to history first when the handle keeps it. */
static int ack_one(sqlq_db *db, struct acks *a, const sqlq_job_ref *r) {
  struct held h = {0};
  int rc = SQLQ_OK;
  sqlq__arg key[] = {SQLQ__INT(r->id), SQLQ__INT(r->token)};
  if (db->keep_history &&
      (rc = run_held(db, ack_sql(a, SQLQ__SQL_HISTORY_COPY), 0, key, 2, &h)) != SQLQ_OK)
    return rc;
  if ((rc = run_held(db, ack_sql(a, SQLQ__SQL_ACK), 0, key, 2, &h)) != SQLQ_OK) return rc;
  if (!h.changed) {
    a->left[a->n_left++] = *r;
    return SQLQ_OK;
  }
  a->acked++;
  return a->release ? sqlq__deps_release(db, r->id) : SQLQ_OK;
}

static int ack_tx(sqlq_db *db, void *arg) {
  struct acks *a = arg;
  a->acked = 0;
  a->n_left = 0;
  int rc = SQLQ_OK;
  if (a->by_array) {
    size_t chunk = sqlq__array_rows(db, a->n);
    for (size_t at = 0; at < a->n && rc == SQLQ_OK; at += chunk)
      rc = ack_array(db, a, a->refs + at, a->n - at < chunk ? a->n - at : chunk);
  } else {
    for (size_t i = 0; i < a->n && rc == SQLQ_OK; i++) rc = ack_one(db, a, &a->refs[i]);
  }
  if (rc == SQLQ_OK && a->acked)
    sqlq__owe_local_wake(db); /* the next job of a FIFO group may run */
  /* A limited queue's slots freed: its waiters elsewhere may claim. */
  if (rc == SQLQ_OK && a->acked && db->limited_queue[0])
    sqlq__owe_wake(db, db->limited_queue, (int)a->acked);
  return rc;
}

/* The status of a batch of n acks that left a->left not held. */
static int ack_status(sqlq_db *db, const struct acks *a, size_t n) {
  int64_t first = a->n_left ? a->left[0].id : 0;
  if (a->n_left == 1) return stale(db, first);
  if (a->n_left > 1)
    return sqlq__error(db, SQLQ_STALE,
                       "%zu of %zu jobs were not held with their tokens (first: job %lld)",
                       a->n_left, n, (long long)first);
  return SQLQ_OK;
}

/* Count the acks of refs[0..n) but those a left not held (counts.c). */
static void count_acks(sqlq_db *db, const sqlq_job_ref *refs, size_t n, const struct acks *a) {
  if (db->counts.off || a->n_left == n) return;
  int64_t *left = a->n_left ? malloc(a->n_left * sizeof *left) : NULL;
  if (a->n_left && left == NULL) return;
  for (size_t k = 0; k < a->n_left; k++) left[k] = a->left[k].id;
  if (left) qsort(left, a->n_left, sizeof *left, sqlq__id_order);
  for (size_t i = 0; i < n; i++)
    if (!a->n_left || !bsearch(&refs[i].id, left, a->n_left, sizeof *left, sqlq__id_order))
      sqlq__count_finished(db, refs[i].id);
  free(left);
}

SQLQ__API int sqlq_ack_batch(sqlq_db *db, const sqlq_job_ref *refs, size_t n, size_t *acked_out) {
  if (acked_out) *acked_out = 0;
  int guard = 0;
  int rc = sqlq__enter(db);
  if (rc != SQLQ_OK || n == 0) return rc;
  if (refs == NULL) return sqlq__error(db, SQLQ_MISUSE, "refs is NULL");
  if ((rc = sqlq__deps_on(db, &guard)) != SQLQ_OK) return rc;
  /* Room for what each pass leaves: the first's refs are the second's. */
  sqlq_job_ref two[2], *left = n == 1 ? two : malloc(2 * n * sizeof *left);
  if (left == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  struct acks a = {.refs = refs, .n = n, .guard = guard, .left = left};
  /* The array statement acks several jobs at once, or one whose history
  ** is kept (one statement instead of two), when the dialect has it.  One
  ** statement acks them all when they fit one array statement, or when a
  ** single job's ack keeps no history. */
  a.by_array = has_ack_array(db) && (n > 1 || db->keep_history);
  unsigned kind = SQLQ__TX_WRITE | SQLQ__TX_LAZY;
  if (a.by_array ? sqlq__array_rows(db, n) == n : n == 1 && !db->keep_history)
    kind |= SQLQ__TX_SINGLE;
  rc = sqlq__in_tx(db, kind, ack_tx, &a);
  size_t acked = a.acked;
  if (rc == SQLQ_OK && guard && a.n_left) {
    /* The jobs others wait for, or stale: acked again by the plain
    ** statements, which leave only the stale. */
    a = (struct acks){.refs = left, .n = a.n_left, .release = 1, .left = left + n};
    rc = sqlq__in_tx(db, SQLQ__TX_WRITE | SQLQ__TX_LAZY, ack_tx, &a);
    acked += a.acked;
  }
  if (rc == SQLQ_OK) rc = ack_status(db, &a, n);
  if (rc == SQLQ_OK || rc == SQLQ_STALE) count_acks(db, refs, n, &a);
  if (acked_out) *acked_out = (rc == SQLQ_OK || rc == SQLQ_STALE) ? acked : 0;
  if (left != two) free(left);
  sqlq__counts_flush_due(db);
  return rc;
}

SQLQ__API int sqlq_ack(sqlq_db *db, int64_t id, int64_t token) {
  sqlq_job_ref r = {id, token};
  return sqlq_ack_batch(db, &r, 1, NULL);
}

struct finish {
  int64_t id, token;
  char *queue;   /* fail: the job's queue, once it failed (freed by the caller) */
  int went_dead; /* fail: it became dead */
  const char *error;
  int dead;
  double backoff;
  double delay; /* release */
  double lease; /* touch */
  int64_t lease_until;
};

/* The retry delay after attempt number `attempt` failed. */
static double backoff_delay(double base, int attempt) {
  if (base <= 0) return 0;
  double d = base * pow(2.0, attempt > 1 ? attempt - 1 : 0);
  d *= 0.75 + 0.5 * random_unit();
  return d > MAX_BACKOFF ? MAX_BACKOFF : d;
}

/* Copy error text, cut to ERROR_TEXT_MAX bytes, with bytes that are not
** valid UTF-8 text replaced by '?' so that every backend stores it. */
static char *clean_error(const char *error) {
  size_t n = strnlen(error ? error : "", ERROR_TEXT_MAX);
  char *out = malloc(n + 1);
  if (out == NULL) return NULL;
  const unsigned char *s = (const unsigned char *)(error ? error : "");
  size_t i = 0;
  while (i < n) {
    size_t len = sqlq__utf8_seq(s + i, n - i);
    int control = s[i] < 0x20 && s[i] != '\n' && s[i] != '\t';
    if (len == 0 || control) {
      out[i++] = '?';
      continue;
    }
    memcpy(out + i, s + i, len);
    i += len;
  }
  out[n] = '\0';
  return out;
}

/* The row of FAIL_PEEK. */
struct peek {
  int attempts, max_attempts;
  char *queue; /* the caller frees it */
};

static int read_peek(sqlq_db *db, sqlq__stmt *st, void *arg) {
  struct peek *p = arg;
  const sqlq__driver *d = db->driver;
  p->attempts = (int)d->column_int64(st, 0);
  p->max_attempts = (int)d->column_int64(st, 1);
  return p->queue ? SQLQ_OK : sqlq__column_text(db, st, 2, &p->queue, NULL);
}

static int fail_tx(sqlq_db *db, void *arg) {
  struct finish *f = arg;
  struct peek p = {0};
  sqlq__query q = {.sql = SQLQ__SQL_FAIL_PEEK, .row = read_peek, .arg = &p};
  int rc = sqlq__run(db, &q, SQLQ__INT(f->id), SQLQ__INT(f->token));
  char *queue = p.queue;
  if (rc != SQLQ_OK || q.rows == 0) {
    free(queue);
    return rc == SQLQ_OK ? stale(db, f->id) : rc;
  }
  int attempts = p.attempts;
  int dead = f->dead || attempts >= p.max_attempts;
  int64_t delay_us = sqlq__seconds_to_us(dead ? 0 : backoff_delay(f->backoff, attempts));
  struct held h = {0};
  rc = run_held(db, SQLQ__SQL_FAIL, 0,
                SQLQ__ARGS(SQLQ__INT(f->id), SQLQ__INT(f->token), SQLQ__INT(dead),
                           SQLQ__INT(delay_us), SQLQ__TEXT(f->error)),
                &h);
  if (rc == SQLQ_OK && !h.changed) rc = stale(db, f->id);
  /* A retry now is a ready job; a later one moves the queue's next due time. */
  else if (rc == SQLQ_OK && !dead)
    sqlq__owe_wake(db, queue, delay_us == 0);
  free(f->queue);
  f->queue = NULL;
  if (rc == SQLQ_OK) {
    f->queue = queue;
    f->went_dead = dead;
  } else
    free(queue);
  return rc;
}

SQLQ__API int sqlq_fail(sqlq_db *db, int64_t id, int64_t token, const char *error,
                        const sqlq_fail_options *opts) {
  sqlq_fail_options o;
  int rc = sqlq__enter(db);
  if (rc == SQLQ_OK) rc = sqlq__read_options(db, opts, sizeof o, &o, "sqlq_fail_options");
  if (rc != SQLQ_OK) return rc;
  if (!(o.backoff >= 0)) return sqlq__error(db, SQLQ_MISUSE, "backoff must be 0 or more seconds");
  struct finish f = {.id = id, .token = token, .dead = o.dead, .backoff = DEFAULT_BACKOFF};
  if (o.retry_now)
    f.backoff = 0;
  else if (o.backoff > 0)
    f.backoff = o.backoff < MAX_BACKOFF ? o.backoff : MAX_BACKOFF;
  char *text = clean_error(error);
  if (text == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  f.error = text;
  rc = sqlq__in_tx(db, SQLQ__TX_WRITE | SQLQ__TX_LAZY, fail_tx, &f);
  if (rc == SQLQ_OK && f.queue) sqlq__count_failed(db, id, f.queue, f.went_dead);
  free(f.queue);
  free(text);
  sqlq__counts_flush_due(db);
  return rc;
}

static int release_tx(sqlq_db *db, void *arg) {
  struct finish *f = arg;
  char *queue = NULL;
  struct held h = {.text0 = &queue};
  int rc = run_held(
    db, SQLQ__SQL_RELEASE, SQLQ__SQL_RELEASE_ROW,
    SQLQ__ARGS(SQLQ__INT(f->id), SQLQ__INT(f->token), SQLQ__INT(sqlq__seconds_to_us(f->delay))),
    &h);
  if (rc == SQLQ_OK && !h.changed)
    rc = stale(db, f->id);
  else if (rc == SQLQ_OK)
    sqlq__owe_wake(db, queue, f->delay <= 0);
  free(queue);
  return rc;
}

SQLQ__API int sqlq_release(sqlq_db *db, int64_t id, int64_t token, double delay) {
  int rc = sqlq__enter(db);
  if (rc == SQLQ_OK) rc = sqlq__check_seconds(db, delay, 1, "release delay");
  if (rc != SQLQ_OK) return rc;
  struct finish f = {.id = id, .token = token, .delay = delay};
  rc = sqlq__in_tx(db, SQLQ__TX_WRITE | SQLQ__TX_LAZY | SQLQ__TX_SINGLE, release_tx, &f);
  if (rc == SQLQ_OK) sqlq__count_forget(db, id);
  return rc;
}

static int touch_tx(sqlq_db *db, void *arg) {
  struct finish *f = arg;
  struct held h = {0};
  int rc = run_held(
    db, SQLQ__SQL_TOUCH, SQLQ__SQL_TOUCH_ROW,
    SQLQ__ARGS(SQLQ__INT(f->id), SQLQ__INT(f->token), SQLQ__INT(sqlq__seconds_to_us(f->lease))),
    &h);
  if (rc == SQLQ_OK && !h.changed) return stale(db, f->id);
  f->lease_until = h.col0;
  return rc;
}

SQLQ__API int sqlq_touch(sqlq_db *db, int64_t id, int64_t token, double lease,
                         int64_t *lease_until_out) {
  int rc = sqlq__enter(db);
  if (rc == SQLQ_OK) rc = sqlq__check_seconds(db, lease, 0, "lease");
  if (rc != SQLQ_OK) return rc;
  struct finish f = {.id = id, .token = token, .lease = lease};
  rc = sqlq__in_tx(db, SQLQ__TX_WRITE | SQLQ__TX_SINGLE, touch_tx, &f);
  if (rc == SQLQ_OK && lease_until_out) *lease_until_out = f.lease_until;
  return rc;
}
