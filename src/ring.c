/*
** ring.c -- rings: fixed-size FIFO logs (sqlq_ring_*).
**
** A ring is one row of sqlq_rings (its capacity and the next sequence
** number) and up to `capacity` rows of sqlq_ring_entries, one per slot.  A
** push advances the ring's counter by the number of entries it brings,
** then writes each entry into slot seq % capacity over whatever was there,
** all in one transaction.  The counter's row stays locked until that
** transaction ends (on SQLite the write lock does the same), so concurrent
** pushes take their turns: sequence numbers never repeat, and a rolled
** back push gives its numbers back, so none is skipped either.  A reader
** reads the entries in one statement, a consistent snapshot.
**
** Followers of a ring wait on the channel "\x1Ering:NAME" (no queue name
** holds a control character, so it is no queue's), and every push or drop
** wakes all of them.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sqlq_int.h"

#define CHANNEL_SIZE (SQLQ_QUEUE_NAME_MAX + 8)

/* The wake-up channel of ring, written into buf (CHANNEL_SIZE bytes). */
static const char *ring_channel(const char *ring, char *buf) {
  snprintf(buf, CHANNEL_SIZE, "\x1Ering:%s", ring);
  return buf;
}

static int check_ring(sqlq_db *db, const char *ring) {
  int rc = sqlq__enter(db);
  if (rc != SQLQ_OK) return rc;
  return sqlq__check_text(db, ring, SQLQ_QUEUE_NAME_MAX, "ring name");
}

static int no_ring(sqlq_db *db, const char *ring) {
  return sqlq__error(db, SQLQ_NOTFOUND, "no ring called '%s' (create it with sqlq ring create)",
                     ring);
}

/* Read the row of two integers at st into the int64_t[2] at arg. */
static int read_pair(sqlq_db *db, sqlq__stmt *st, void *arg) {
  int64_t *pair = arg;
  pair[0] = db->driver->column_int64(st, 0);
  pair[1] = db->driver->column_int64(st, 1);
  return SQLQ_OK;
}

/* The ring's capacity and last sequence number (both 0 on failure);
** SQLQ_NOTFOUND recorded when there is no such ring. */
static int ring_info(sqlq_db *db, const char *ring, int64_t *capacity, int64_t *last) {
  int64_t pair[2] = {0, 0};
  sqlq__query q = {.sql = SQLQ__SQL_RING_INFO, .row = read_pair, .arg = pair};
  int rc = sqlq__run(db, &q, SQLQ__TEXT(ring));
  *capacity = pair[0];
  *last = pair[1];
  if (rc == SQLQ_OK && q.rows == 0) return no_ring(db, ring);
  return rc;
}

/* ---------------------------------------------------------------------
** Create and drop.
*/

struct create {
  const char *ring;
  int64_t capacity;
};

static int create_tx(sqlq_db *db, void *arg) {
  struct create *c = arg;
  /* A ring already there is checked below. */
  sqlq__query q = {.sql = SQLQ__SQL_RING_CREATE, .flags = SQLQ__Q_TAKEN};
  int rc = sqlq__run(db, &q, SQLQ__TEXT(c->ring), SQLQ__INT(c->capacity));
  if (rc != SQLQ_OK) return rc;
  int64_t capacity = 0, last = 0;
  if ((rc = ring_info(db, c->ring, &capacity, &last)) != SQLQ_OK) return rc;
  if (capacity != c->capacity)
    return sqlq__error(db, SQLQ_MISUSE, "ring '%s' exists with capacity %lld", c->ring,
                       (long long)capacity);
  return SQLQ_OK;
}

SQLQ__API int sqlq_ring_create(sqlq_db *db, const char *ring, size_t capacity) {
  int rc = check_ring(db, ring);
  if (rc != SQLQ_OK) return rc;
  if (capacity < 1 || capacity > SQLQ_RING_CAPACITY_MAX)
    return sqlq__error(db, SQLQ_MISUSE, "ring capacity must be 1 to %d entries, not %zu",
                       SQLQ_RING_CAPACITY_MAX, capacity);
  struct create c = {ring, (int64_t)capacity};
  return sqlq__in_tx(db, SQLQ__TX_WRITE, create_tx, &c);
}

/* The ring's row goes first: deleting it waits for the pushes that hold
** it, so that the entries they wrote are committed, and seen, when the
** entries are deleted next; pushes after it find no ring. */
static int drop_tx(sqlq_db *db, void *arg) {
  const char *ring = arg;
  int64_t gone = 0;
  int rc = sqlq__run_for_queue(db, SQLQ__SQL_RING_DROP, ring, NULL, &gone);
  if (rc == SQLQ_OK && gone == 0) return no_ring(db, ring);
  if (rc == SQLQ_OK) rc = sqlq__run_for_queue(db, SQLQ__SQL_RING_CLEAR, ring, NULL, NULL);
  char channel[CHANNEL_SIZE];
  if (rc == SQLQ_OK) sqlq__owe_wake(db, ring_channel(ring, channel), SQLQ__WAKE_ALL);
  return rc;
}

SQLQ__API int sqlq_ring_drop(sqlq_db *db, const char *ring) {
  int rc = check_ring(db, ring);
  if (rc != SQLQ_OK) return rc;
  return sqlq__in_tx(db, SQLQ__TX_WRITE, drop_tx, (void *)ring);
}

/* ---------------------------------------------------------------------
** Push.
*/

struct push {
  const char *ring;
  const void *const *payloads;
  const size_t *lens;
  size_t n;
  int64_t first;
};

/* One entry in one statement, for dialects that have it. */
static int push_one(sqlq_db *db, struct push *p) {
  sqlq__query q = {.sql = SQLQ__SQL_RING_PUSH, .row = sqlq__read_int64, .arg = &p->first};
  int rc = sqlq__run(db, &q, SQLQ__TEXT(p->ring),
                     SQLQ__BLOB(p->lens[0] ? p->payloads[0] : "", p->lens[0]));
  if (rc == SQLQ_OK && q.rows == 0) return no_ring(db, p->ring);
  return rc;
}

/* Take n sequence numbers: the first and the ring's capacity. */
static int advance(sqlq_db *db, struct push *p, int64_t *capacity) {
  int64_t pair[2] = {0, 0};
  sqlq__query q = {.sql = SQLQ__SQL_RING_ADVANCE,
                   .row = read_pair,
                   .arg = pair,
                   .then = SQLQ__SQL_RING_ADVANCE_ROW};
  int rc = sqlq__run(db, &q, SQLQ__TEXT(p->ring), SQLQ__INT((int64_t)p->n));
  p->first = pair[0];
  *capacity = pair[1];
  if (rc == SQLQ_OK && q.rows == 0) return no_ring(db, p->ring);
  return rc;
}

static int push_tx(sqlq_db *db, void *arg) {
  struct push *p = arg;
  const sqlq__driver *d = db->driver;
  int rc;
  if (p->n == 1 && d->sql[SQLQ__SQL_RING_PUSH]) {
    rc = push_one(db, p);
  } else {
    int64_t capacity = 0;
    rc = advance(db, p, &capacity);
    /* Entries a later one of the batch would overwrite are not stored. */
    size_t from = (int64_t)p->n > capacity ? p->n - (size_t)capacity : 0;
    sqlq__query q = {.sql = SQLQ__SQL_RING_STORE};
    for (size_t i = from; rc == SQLQ_OK && i < p->n; i++)
      rc = sqlq__run(db, &q, SQLQ__TEXT(p->ring), SQLQ__INT(p->first + (int64_t)i),
                     SQLQ__INT(capacity), SQLQ__BLOB(p->lens[i] ? p->payloads[i] : "", p->lens[i]));
  }
  char channel[CHANNEL_SIZE];
  if (rc == SQLQ_OK) sqlq__owe_wake(db, ring_channel(p->ring, channel), SQLQ__WAKE_ALL);
  return rc;
}

SQLQ__API int sqlq_ring_push_batch(sqlq_db *db, const char *ring, const void *const *payloads,
                                   const size_t *lens, size_t n, int64_t *first_seq_out) {
  int rc = check_ring(db, ring);
  if (first_seq_out) *first_seq_out = 0;
  if (rc != SQLQ_OK) return rc;
  if (n == 0 || payloads == NULL || lens == NULL)
    return sqlq__error(db, SQLQ_MISUSE, "nothing to push");
  for (size_t i = 0; i < n; i++) {
    if (payloads[i] == NULL && lens[i] > 0)
      return sqlq__error(db, SQLQ_MISUSE, "entry %zu has no payload but a length", i);
    if (lens[i] > db->payload_limit)
      return sqlq__error(db, SQLQ_TOOBIG, "entry of %zu bytes is over the payload limit of %zu",
                         lens[i], db->payload_limit);
  }
  struct push p = {ring, payloads, lens, n, 0};
  unsigned kind = SQLQ__TX_WRITE;
  if (n == 1 && db->driver && db->driver->sql[SQLQ__SQL_RING_PUSH]) kind |= SQLQ__TX_SINGLE;
  rc = sqlq__in_tx(db, kind, push_tx, &p);
  if (rc == SQLQ_OK && first_seq_out) *first_seq_out = p.first;
  return rc;
}

SQLQ__API int sqlq_ring_push(sqlq_db *db, const char *ring, const void *payload, size_t payload_len,
                             int64_t *seq_out) {
  const void *payloads[1] = {payload};
  size_t lens[1] = {payload_len};
  return sqlq_ring_push_batch(db, ring, payloads, lens, 1, seq_out);
}

/* ---------------------------------------------------------------------
** Read and wait.
*/

struct read {
  const char *ring;
  int64_t since;
  int limit;
  sqlq_ring_entry *entries;
  size_t n, cap;
};

/* Append the current row of st (seq, at, payload) to r->entries. */
static int add_entry(sqlq_db *db, sqlq__stmt *st, void *arg) {
  struct read *r = arg;
  const sqlq__driver *d = db->driver;
  char *copy = NULL;
  size_t len = 0;
  int rc = sqlq__grow(db, (void **)&r->entries, &r->cap, r->n, sizeof *r->entries);
  if (rc == SQLQ_OK) rc = sqlq__column_text(db, st, 2, &copy, &len);
  if (rc != SQLQ_OK) return rc;
  sqlq_ring_entry *e = &r->entries[r->n++];
  e->seq = d->column_int64(st, 0);
  e->pushed_at_us = d->column_int64(st, 1);
  e->payload = (unsigned char *)copy;
  e->payload_len = len;
  return SQLQ_OK;
}

static int read_tx(sqlq_db *db, void *arg) {
  struct read *r = arg;
  int64_t capacity, last;
  int rc = ring_info(db, r->ring, &capacity, &last);
  sqlq__query q = {.sql = SQLQ__SQL_RING_READ, .row = add_entry, .arg = r};
  if (rc == SQLQ_OK)
    rc = sqlq__run(db, &q, SQLQ__TEXT(r->ring), SQLQ__INT(r->since),
                   SQLQ__INT(r->limit > 0 ? r->limit : -1));
  return rc;
}

SQLQ__API void sqlq_ring_entries_free(sqlq_ring_entry *entries, size_t n) {
  if (entries == NULL) return;
  for (size_t i = 0; i < n; i++) free((void *)entries[i].payload);
  free(entries);
}

SQLQ__API int sqlq_ring_read(sqlq_db *db, const char *ring, int64_t since, size_t limit,
                             sqlq_ring_entry **entries_out, size_t *n_out) {
  if (entries_out) *entries_out = NULL;
  if (n_out) *n_out = 0;
  int rc = check_ring(db, ring);
  if (rc != SQLQ_OK) return rc;
  if (entries_out == NULL || n_out == NULL)
    return sqlq__error(db, SQLQ_MISUSE, "sqlq_ring_read() needs somewhere to put the entries");
  struct read r = {.ring = ring, .since = since < 0 ? 0 : since, .limit = sqlq__limit(limit)};
  rc = sqlq__in_tx(db, SQLQ__TX_READ, read_tx, &r);
  if (rc != SQLQ_OK) {
    sqlq_ring_entries_free(r.entries, r.n);
    return rc;
  }
  *entries_out = r.entries;
  *n_out = r.n;
  return SQLQ_OK;
}

struct follow {
  const char *ring;
  int64_t since;
};

/* Is there an entry above since?  Only a push can bring one. */
static int entry_due(sqlq_db *db, void *arg, int64_t *due_in_us) {
  struct follow *f = arg;
  int64_t capacity, last;
  int rc = ring_info(db, f->ring, &capacity, &last);
  *due_in_us = rc == SQLQ_OK && last > f->since ? 0 : -1;
  return rc;
}

SQLQ__API int sqlq_ring_wait(sqlq_db *db, const char *ring, int64_t since, double timeout) {
  int rc = check_ring(db, ring);
  int64_t deadline = -1;
  if (rc == SQLQ_OK) rc = sqlq__deadline(db, timeout, &deadline);
  if (rc != SQLQ_OK) return rc;
  struct follow f = {ring, since};
  char channel[CHANNEL_SIZE];
  rc = sqlq__wait_on(db, ring_channel(ring, channel), entry_due, &f, deadline);
  if (rc == SQLQ_TIMEOUT)
    return sqlq__error(db, SQLQ_TIMEOUT, "no entry came to ring '%s' in time", ring);
  return rc;
}
