/*
** counts.c -- what each handle did, counted in memory and written every
** few seconds into its own rows of sqlq_counts (schema version 13), and
** the reading of those rows (sqlq_counts()).
**
** Why rows of their own: a counter row that every ack updated would be
** the hot row of issue 21 (every worker's commit waiting on one row lock,
** a dead row version per job).  Here a handle adds its counts in memory,
** keyed by queue, and writes them at most once per flush interval, as
** one UPDATE of its own row per queue (minute, queue, writer), an INSERT
** when a minute starts.  No two handles write one row, so a flush waits
** for no other writer, and the table has at most (handles x queues x
** minutes kept) rows.  Readers (`sqlq serve`) add the rows up.
**
** A row holds absolute counts of its minute: the handle keeps its last
** written row in memory (row) and writes row + pending, so that a flush
** that failed is simply done again later.  The job counts are columns (the
** history charts them); the lock counts and the histograms are one text
** column, detail ("locks=...;claims=...;lags=...", see detail_text): their
** 37 numbers would be 37 columns in four dialects, and 37 parameters where
** the drivers bind at most 8 (PostgreSQL's PG_MAX_PARAMS); only the writer
** adds to them.
*/
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sqlq_int.h"

/* How long rows are kept: the last hour that `sqlq serve` charts, and as
** long again for scrapes that come late. */
#define KEEP_S 7200
/* The most jobs a handle remembers as claimed, so that their acks are
** counted for their queue; past it (jobs claimed and never finished
** through this handle) it forgets them all. */
#define CLAIMED_MAX 65536
/* The room of the detail column's text: three sections, 39 numbers of up
** to 20 digits, and their names. */
#define DETAIL_TEXT 1000

static const double bounds[SQLQ_LATENCY_BUCKETS - 1] = {
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300};

SQLQ__API double sqlq_latency_bound(int i) {
  return i >= 0 && i < SQLQ_LATENCY_BUCKETS - 1 ? bounds[i] : INFINITY;
}

/* The bucket of a duration of us microseconds. */
static int bucket_of(int64_t us) {
  int i = 0;
  while (i < SQLQ_LATENCY_BUCKETS - 1 && (double)us > bounds[i] * 1e6) i++;
  return i;
}

/* ---------------------------------------------------------------------
** Counting.
*/

/* The counts of queue on db ("" for none), added when missing; NULL when
** memory ran out or counting is off. */
static sqlq__counted *counted(sqlq_db *db, const char *queue) {
  sqlq__counts *c = &db->counts;
  if (c->off) return NULL;
  if (c->last < c->n && strcmp(c->queues[c->last].queue, queue) == 0) return &c->queues[c->last];
  for (size_t i = 0; i < c->n; i++)
    if (strcmp(c->queues[i].queue, queue) == 0) {
      c->last = i;
      return &c->queues[i];
    }
  if (c->n == c->cap) {
    size_t cap = c->cap ? 2 * c->cap : 4;
    sqlq__counted *q = realloc(c->queues, cap * sizeof *q);
    if (q == NULL) return NULL;
    c->queues = q;
    c->cap = cap;
  }
  sqlq__counted *q = &c->queues[c->n];
  memset(q, 0, sizeof *q);
  if ((q->queue = strdup(queue)) == NULL) return NULL;
  c->last = c->n++;
  return q;
}

/* Where a count of q goes now: the caller's transaction's, or pending;
** marks it owed. */
static sqlq__tally *tally(sqlq_db *db, sqlq__counted *q) {
  if (db->in_user_tx) {
    q->tx_dirty = 1;
    return &q->tx;
  }
  q->dirty = 1;
  if (db->counts.flush_at_ns == 0)
    db->counts.flush_at_ns = sqlq__monotonic_ns() + db->counts.every_ns;
  return &q->pending;
}

static void add(sqlq__tally *to, const sqlq__tally *t) {
  to->enqueued += t->enqueued;
  to->finished += t->finished;
  to->failed += t->failed;
  to->dead += t->dead;
  to->locks += t->locks;
  to->lock_busy += t->lock_busy;
  to->lock_us += t->lock_us;
  to->claim_us += t->claim_us;
  to->lag_us += t->lag_us;
  for (int i = 0; i < SQLQ_LATENCY_BUCKETS; i++) {
    to->claims[i] += t->claims[i];
    to->lags[i] += t->lags[i];
  }
}

void sqlq__count_enqueued(sqlq_db *db, const char *queue, size_t n) {
  sqlq__counted *q = n ? counted(db, queue) : NULL;
  if (q) tally(db, q)->enqueued += (int64_t)n;
}

void sqlq__count_dead(sqlq_db *db, const char *queue, size_t n) {
  sqlq__counted *q = n ? counted(db, queue) : NULL;
  if (q) tally(db, q)->dead += (int64_t)n;
}

void sqlq__count_lock(sqlq_db *db, int64_t took_ns, int rc) {
  sqlq__counted *q = counted(db, "");
  if (q == NULL) return;
  sqlq__tally *t = tally(db, q);
  t->locks++;
  t->lock_busy += rc == SQLQ_BUSY;
  t->lock_us += took_ns / 1000;
}

/* The slot of id in the claimed table (free or id's); the table has a
** free slot. */
static size_t slot_of(const sqlq__counts *c, int64_t id) {
  size_t mask = c->cap_claimed - 1;
  size_t i = (size_t)((uint64_t)id * 0x9E3779B97F4A7C15ull >> 20) & mask;
  while (c->claimed[i].id && c->claimed[i].id != id) i = (i + 1) & mask;
  return i;
}

/* Remember that job id was claimed for queue number qi. */
static void remember(sqlq__counts *c, int64_t id, size_t qi) {
  if (c->n_claimed + 1 > c->cap_claimed / 2) {
    size_t cap = c->cap_claimed ? 2 * c->cap_claimed : 64;
    if (c->n_claimed >= CLAIMED_MAX) cap = c->cap_claimed; /* forget them all */
    sqlq__claimed *old = c->claimed, *t = calloc(cap, sizeof *t);
    if (t == NULL) return;
    size_t old_cap = c->cap_claimed;
    c->claimed = t;
    c->cap_claimed = cap;
    size_t kept = 0;
    for (size_t i = 0; old && cap != old_cap && i < old_cap; i++)
      if (old[i].id) {
        t[slot_of(c, old[i].id)] = old[i];
        kept++;
      }
    c->n_claimed = kept;
    free(old);
  }
  size_t s = slot_of(c, id);
  if (c->claimed[s].id == 0) c->n_claimed++;
  c->claimed[s] = (sqlq__claimed){id, (uint32_t)qi};
}

/* Forget job id; its queue's number into *qi (1), or 0 when unknown. */
static int forget(sqlq__counts *c, int64_t id, size_t *qi) {
  if (c->n_claimed == 0 || id == 0) return 0;
  size_t mask = c->cap_claimed - 1, i = slot_of(c, id);
  if (c->claimed[i].id == 0) return 0;
  *qi = c->claimed[i].queue;
  c->claimed[i].id = 0;
  c->n_claimed--;
  /* Move back the entries of the run after it that probed past i. */
  for (size_t j = (i + 1) & mask; c->claimed[j].id; j = (j + 1) & mask) {
    size_t home = (size_t)((uint64_t)c->claimed[j].id * 0x9E3779B97F4A7C15ull >> 20) & mask;
    if (((j - home) & mask) >= ((j - i) & mask)) {
      c->claimed[i] = c->claimed[j];
      c->claimed[j].id = 0;
      i = j;
    }
  }
  return 1;
}

void sqlq__count_claim(sqlq_db *db, const char *queue, const sqlq_job *jobs, size_t n,
                       int64_t took_ns, int64_t lease_us) {
  sqlq__counted *q = counted(db, queue);
  if (q == NULL) return;
  size_t qi = (size_t)(q - db->counts.queues);
  sqlq__tally *t = tally(db, q);
  int64_t took_us = took_ns / 1000;
  t->claim_us += took_us;
  t->claims[bucket_of(took_us)]++;
  for (size_t i = 0; i < n; i++) {
    int64_t now = jobs[i].lease_until_us - lease_us;
    int64_t due =
      jobs[i].run_at_us > jobs[i].created_at_us ? jobs[i].run_at_us : jobs[i].created_at_us;
    int64_t lag = now > due ? now - due : 0;
    t->lag_us += lag;
    t->lags[bucket_of(lag)]++;
    remember(&db->counts, jobs[i].id, qi);
  }
}

void sqlq__count_finished(sqlq_db *db, int64_t id) {
  size_t qi;
  if (!db->counts.off && forget(&db->counts, id, &qi) && qi < db->counts.n)
    tally(db, &db->counts.queues[qi])->finished++;
}

void sqlq__count_forget(sqlq_db *db, int64_t id) {
  size_t qi;
  forget(&db->counts, id, &qi);
}

void sqlq__count_failed(sqlq_db *db, int64_t id, const char *queue, int dead) {
  sqlq__count_forget(db, id);
  sqlq__counted *q = counted(db, queue);
  if (q == NULL) return;
  sqlq__tally *t = tally(db, q);
  if (dead)
    t->dead++;
  else
    t->failed++;
}

void sqlq__counts_end_tx(sqlq_db *db, int committed) {
  sqlq__counts *c = &db->counts;
  for (size_t i = 0; i < c->n; i++) {
    sqlq__counted *q = &c->queues[i];
    if (!q->tx_dirty) continue;
    if (committed) {
      add(&q->pending, &q->tx);
      q->dirty = 1;
      if (c->flush_at_ns == 0) c->flush_at_ns = sqlq__monotonic_ns() + c->every_ns;
    }
    memset(&q->tx, 0, sizeof q->tx);
    q->tx_dirty = 0;
  }
}

/* ---------------------------------------------------------------------
** Flushing.
*/

/* Append to out (of DETAIL_TEXT bytes, *len used) the section
** "name=V0,V1,...": the n values v, without their trailing zeros after the
** first; nothing when they are all 0. */
static void put_section(char *out, size_t *len, const char *name, const int64_t *v, int n) {
  while (n > 1 && v[n - 1] == 0) n--;
  if (n == 1 && v[0] == 0) return;
  *len += (size_t)snprintf(out + *len, DETAIL_TEXT - *len, "%s%s=", *len ? ";" : "", name);
  for (int i = 0; i < n && *len < DETAIL_TEXT; i++)
    *len += (size_t)snprintf(out + *len, DETAIL_TEXT - *len, "%s%" PRId64, i ? "," : "", v[i]);
}

/* The detail column of t: "locks=CALLS,BUSY,US;claims=SUM_US,B0,B1,...;
** lags=SUM_US,B0,...", each section only when not all zero. */
static void detail_text(char *out, const sqlq__tally *t) {
  int64_t v[SQLQ_LATENCY_BUCKETS + 1];
  size_t len = 0;
  out[0] = '\0';
  v[0] = t->locks, v[1] = t->lock_busy, v[2] = t->lock_us;
  put_section(out, &len, "locks", v, 3);
  v[0] = t->claim_us;
  memcpy(v + 1, t->claims, sizeof t->claims);
  put_section(out, &len, "claims", v, SQLQ_LATENCY_BUCKETS + 1);
  v[0] = t->lag_us;
  memcpy(v + 1, t->lags, sizeof t->lags);
  put_section(out, &len, "lags", v, SQLQ_LATENCY_BUCKETS + 1);
}

/* Read the values of section name of detail into v[0..n) (0 for each one
** missing): what does not parse as a count of 0 or more is 0, so that a
** row written by anyone reads. */
static void section_read(const char *detail, const char *name, int64_t *v, int n) {
  size_t len = strlen(name);
  const char *s = detail;
  memset(v, 0, (size_t)n * sizeof *v);
  while (s && *s && !(strncmp(s, name, len) == 0 && s[len] == '=')) {
    s = strchr(s, ';');
    if (s) s++;
  }
  if (s == NULL || *s == '\0') return;
  s += len + 1;
  for (int i = 0; i < n; i++) {
    char *end;
    long long x = strtoll(s, &end, 10);
    if (end == s || (*end && *end != ',' && *end != ';')) return;
    v[i] = x > 0 ? x : 0;
    if (*end != ',') return;
    s = end + 1;
  }
}

/* Read the detail column into m. */
static void detail_read(const char *detail, sqlq_minute_counts *m) {
  int64_t v[SQLQ_LATENCY_BUCKETS + 1];
  section_read(detail, "locks", v, 3);
  m->locks = v[0], m->lock_busy = v[1], m->lock_us = v[2];
  section_read(detail, "claims", v, SQLQ_LATENCY_BUCKETS + 1);
  m->claim_us = v[0];
  memcpy(m->claims, v + 1, sizeof m->claims);
  section_read(detail, "lags", v, SQLQ_LATENCY_BUCKETS + 1);
  m->lag_us = v[0];
  memcpy(m->lags, v + 1, sizeof m->lags);
}

/* The flush's transaction: the rows of every queue owed, as of minute. */
struct flush {
  int64_t minute;
  int skipped; /* the database has no sqlq_counts */
};

/* The row queue q writes at minute f->minute: its row then, plus pending. */
static sqlq__tally next_row(const sqlq__counted *q, int64_t minute) {
  sqlq__tally t = {0};
  if (q->minute == minute) t = q->row;
  add(&t, &q->pending);
  return t;
}

static int write_row(sqlq_db *db, const sqlq__counts *c, const sqlq__counted *q, int64_t minute) {
  sqlq__tally t = next_row(q, minute);
  char detail[DETAIL_TEXT];
  detail_text(detail, &t);
  sqlq__arg args[] = {SQLQ__INT(minute),     SQLQ__TEXT(q->queue),  SQLQ__INT(c->writer),
                      SQLQ__INT(t.enqueued), SQLQ__INT(t.finished), SQLQ__INT(t.failed),
                      SQLQ__INT(t.dead),     SQLQ__TEXT(detail)};
  size_t n = sizeof args / sizeof *args;
  /* The row is there when it was stored this minute; if it is gone, or
  ** there unexpectedly, the other statement writes it. */
  int stored = q->stored && q->minute == minute;
  sqlq__query first = {.sql = stored ? SQLQ__SQL_COUNTS_UPDATE : SQLQ__SQL_COUNTS_INSERT,
                       .flags = SQLQ__Q_CHANGES | SQLQ__Q_TAKEN};
  int rc = sqlq__query_run(db, &first, args, n);
  if (rc != SQLQ_OK || first.changes > 0) return rc;
  sqlq__query second = {.sql = stored ? SQLQ__SQL_COUNTS_INSERT : SQLQ__SQL_COUNTS_UPDATE,
                        .flags = SQLQ__Q_CHANGES | SQLQ__Q_TAKEN};
  return sqlq__query_run(db, &second, args, n);
}

static int flush_tx(sqlq_db *db, void *arg) {
  struct flush *f = arg;
  int version = 0;
  int rc = sqlq__schema_version(db, &version);
  f->skipped = rc == SQLQ_OK &&
               (version < SQLQ__COUNTS_VERSION || db->driver->sql[SQLQ__SQL_COUNTS_INSERT] == NULL);
  if (rc != SQLQ_OK || f->skipped) return rc;
  const sqlq__counts *c = &db->counts;
  for (size_t i = 0; i < c->n && rc == SQLQ_OK; i++)
    if (c->queues[i].dirty) rc = write_row(db, c, &c->queues[i], f->minute);
  return rc;
}

static int prune_tx(sqlq_db *db, void *arg) {
  sqlq__query q = {.sql = SQLQ__SQL_COUNTS_PRUNE};
  return sqlq__run(db, &q, SQLQ__INT(*(int64_t *)arg - KEEP_S));
}

/* Write what is owed; the caller has checked that no transaction of its
** own is open. */
static int flush(sqlq_db *db) {
  sqlq__counts *c = &db->counts;
  if (c->flush_at_ns == 0) return SQLQ_OK;
  struct flush f = {.minute = (int64_t)time(NULL) / 60 * 60};
  int rc = sqlq__in_tx(db, SQLQ__TX_WRITE | SQLQ__TX_LAZY, flush_tx, &f);
  if (rc != SQLQ_OK) {
    c->flush_at_ns = sqlq__monotonic_ns() + c->every_ns;
    return rc;
  }
  for (size_t i = 0; i < c->n; i++) {
    sqlq__counted *q = &c->queues[i];
    if (!q->dirty) continue;
    if (!f.skipped) {
      q->row = next_row(q, f.minute);
      q->stored = 1;
      q->minute = f.minute;
    }
    memset(&q->pending, 0, sizeof q->pending);
    q->dirty = 0;
  }
  c->flush_at_ns = 0;
  /* Once a minute, the rows past KEEP_S go (anyone's: a handle that
  ** stopped leaves its rows behind).  Its failure (another handle
  ** deleting the same rows) is no matter: a later minute's prune does it. */
  if (!f.skipped && f.minute != c->pruned_minute) {
    c->pruned_minute = f.minute;
    sqlq__in_tx(db, SQLQ__TX_WRITE | SQLQ__TX_LAZY, prune_tx, &f.minute);
  }
  return SQLQ_OK;
}

void sqlq__counts_flush_due(sqlq_db *db) {
  int64_t at = db->counts.flush_at_ns;
  if (at == 0 || db->in_user_tx || db->driver == NULL || sqlq__monotonic_ns() < at) return;
  sqlq__saved_error saved;
  sqlq__save_error(db, &saved);
  flush(db);
  sqlq__restore_error(db, &saved);
}

int64_t sqlq__counts_due_ns(const sqlq_db *db) {
  return db->counts.flush_at_ns ? db->counts.flush_at_ns : -1;
}

void sqlq__counts_open(sqlq_db *db, int off, double flush_s) {
  db->counts.off = off;
  db->counts.writer = sqlq__new_token();
  db->counts.every_ns = (int64_t)(flush_s * 1e9);
}

void sqlq__counts_close(sqlq_db *db) {
  sqlq__counts *c = &db->counts;
  if (db->driver && !db->in_user_tx) {
    sqlq__saved_error saved;
    sqlq__save_error(db, &saved);
    flush(db);
    sqlq__restore_error(db, &saved);
  }
  for (size_t i = 0; i < c->n; i++) free(c->queues[i].queue);
  free(c->queues);
  free(c->claimed);
  memset(c, 0, sizeof *c);
}

SQLQ__API int sqlq_counts_flush(sqlq_db *db) {
  int rc = sqlq__enter(db);
  if (rc != SQLQ_OK) return rc;
  if (db->in_user_tx)
    return sqlq__error(db, SQLQ_MISUSE, "sqlq_counts_flush cannot run inside a transaction");
  return flush(db);
}

/* ---------------------------------------------------------------------
** Reading.
*/

struct rows {
  sqlq_minute_counts *v;
  size_t n, cap;
};

static int read_row(sqlq_db *db, sqlq__stmt *st, void *arg) {
  struct rows *r = arg;
  const sqlq__driver *d = db->driver;
  int rc = sqlq__grow(db, (void **)&r->v, &r->cap, r->n, sizeof *r->v);
  if (rc != SQLQ_OK) return rc;
  sqlq_minute_counts *m = &r->v[r->n];
  memset(m, 0, sizeof *m);
  if ((rc = sqlq__column_text(db, st, 1, &m->queue, NULL)) != SQLQ_OK) return rc;
  r->n++;
  m->minute_at = d->column_int64(st, 0);
  m->writer = d->column_int64(st, 2);
  m->enqueued = d->column_int64(st, 3);
  m->finished = d->column_int64(st, 4);
  m->failed = d->column_int64(st, 5);
  m->dead = d->column_int64(st, 6);
  char *text = NULL;
  if ((rc = sqlq__column_text(db, st, 7, &text, NULL)) != SQLQ_OK) return rc;
  detail_read(text, m);
  free(text);
  return SQLQ_OK;
}

struct read {
  const char *queue;
  int64_t since;
  struct rows rows;
};

static int read_tx(sqlq_db *db, void *arg) {
  struct read *r = arg;
  int version = 0;
  int rc = sqlq__schema_version(db, &version);
  if (rc == SQLQ_OK && (version < SQLQ__COUNTS_VERSION || !db->driver->sql[SQLQ__SQL_COUNTS_READ]))
    rc = sqlq__error(db, SQLQ_SCHEMA,
                     "the database's schema is older than version %d, which has sqlq_counts:"
                     " run `sqlq init`",
                     SQLQ__COUNTS_VERSION);
  sqlq_minute_counts_free(r->rows.v, r->rows.n);
  r->rows = (struct rows){0};
  sqlq__query q = {.sql = SQLQ__SQL_COUNTS_READ, .row = read_row, .arg = &r->rows};
  if (rc == SQLQ_OK) rc = sqlq__run(db, &q, SQLQ__TEXT(r->queue), SQLQ__INT(r->since));
  return rc;
}

static int row_order(const void *a, const void *b) {
  const sqlq_minute_counts *x = a, *y = b;
  int c = strcmp(x->queue, y->queue);
  if (c) return c;
  if (x->minute_at != y->minute_at) return x->minute_at < y->minute_at ? -1 : 1;
  return x->writer < y->writer ? -1 : x->writer > y->writer;
}

SQLQ__API int sqlq_counts(sqlq_db *db, const char *queue, int64_t since_s,
                          sqlq_minute_counts **counts_out, size_t *n_out) {
  if (counts_out) *counts_out = NULL;
  if (n_out) *n_out = 0;
  int rc = sqlq__enter(db);
  if (rc == SQLQ_OK && queue) rc = sqlq__check_stored_queue(db, queue);
  if (rc != SQLQ_OK) return rc;
  if (counts_out == NULL || n_out == NULL)
    return sqlq__error(db, SQLQ_MISUSE, "sqlq_counts() needs somewhere to put the rows");
  struct read r = {.queue = queue, .since = since_s};
  rc = sqlq__in_tx(db, SQLQ__TX_READ, read_tx, &r);
  if (rc != SQLQ_OK) {
    sqlq_minute_counts_free(r.rows.v, r.rows.n);
    return rc;
  }
  if (r.rows.n > 1) qsort(r.rows.v, r.rows.n, sizeof *r.rows.v, row_order);
  *counts_out = r.rows.v;
  *n_out = r.rows.n;
  return SQLQ_OK;
}

static int ids_tx(sqlq_db *db, void *arg) {
  sqlq__query q = {.sql = SQLQ__SQL_COUNTS_IDS, .row = sqlq__read_int64, .arg = arg};
  return sqlq__query_run(db, &q, NULL, 0);
}

SQLQ__API int sqlq_last_job_id(sqlq_db *db, int64_t *id_out) {
  int64_t id = 0;
  if (id_out) *id_out = 0;
  int rc = sqlq__enter(db);
  if (rc != SQLQ_OK) return rc;
  if (id_out == NULL) return sqlq__error(db, SQLQ_MISUSE, "sqlq_last_job_id() needs id_out");
  rc = sqlq__in_tx(db, SQLQ__TX_READ, ids_tx, &id);
  if (rc == SQLQ_OK) *id_out = id;
  return rc;
}

SQLQ__API void sqlq_minute_counts_free(sqlq_minute_counts *counts, size_t n) {
  if (counts == NULL) return;
  for (size_t i = 0; i < n; i++) free(counts[i].queue);
  free(counts);
}
