/*
** test_rings.c -- rings: capped FIFO logs numbered from 1 without gaps or
** repeats, overwriting their oldest entry once full, read in one snapshot,
** followed with the wake-ups of jobs; and their refusals of bad input.
** Each test's ring is named after the fixture's queue.
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

/* Push the text payload into the fixture's ring, asserting success;
** returns its sequence number. */
static int64_t push_text(sqlq_db *db, const fixture *f, const char *text) {
  int64_t seq = 0;
  assert_ok(db, sqlq_ring_push(db, f->queue, text, strlen(text), &seq));
  return seq;
}

/* Read the whole ring above since, asserting success. */
static sqlq_ring_entry *read_all(sqlq_db *db, const fixture *f, int64_t since, size_t *n) {
  sqlq_ring_entry *e = NULL;
  assert_ok(db, sqlq_ring_read(db, f->queue, since, 0, &e, n));
  return e;
}

/* Assert that the entries hold the text payloads want, in order, numbered
** from first on. */
static void assert_entries(const sqlq_ring_entry *e, size_t n, int64_t first,
                           const char *const *want, size_t n_want) {
  size_t i;
  assert_int_equal(n, n_want);
  for (i = 0; i < n; i++) {
    assert_int_equal(e[i].seq, first + (int64_t)i);
    assert_int_equal(e[i].payload_len, strlen(want[i]));
    assert_memory_equal(e[i].payload, want[i], e[i].payload_len);
    assert_int_equal(e[i].payload[e[i].payload_len], '\0');
    assert_true(e[i].pushed_at_us > 0);
    if (i > 0) assert_true(e[i].pushed_at_us >= e[i - 1].pushed_at_us);
  }
}

/* Five pushes into a ring of three: numbers 1 to 5, and the ring keeps
** 3, 4 and 5, oldest first; --since and the limit cut the read. */
static void ring_keeps_the_newest(void **state) {
  fixture *f = *state;
  static const char *const p[] = {"one", "two", "three", "four", "five"};
  sqlq_ring_entry *e;
  size_t n, i;
  assert_ok(f->db, sqlq_ring_create(f->db, f->queue, 3));
  e = read_all(f->db, f, 0, &n);
  assert_int_equal(n, 0);
  assert_null(e);
  for (i = 0; i < 5; i++) assert_int_equal(push_text(f->db, f, p[i]), (int64_t)i + 1);
  e = read_all(f->db, f, 0, &n);
  assert_entries(e, n, 3, p + 2, 3);
  sqlq_ring_entries_free(e, n);
  e = read_all(f->db, f, 4, &n);
  assert_entries(e, n, 5, p + 4, 1);
  sqlq_ring_entries_free(e, n);
  assert_ok(f->db, sqlq_ring_read(f->db, f->queue, 0, 2, &e, &n));
  assert_entries(e, n, 3, p + 2, 2);
  sqlq_ring_entries_free(e, n);
  assert_ok(f->db, sqlq_ring_drop(f->db, f->queue));
}

/* A batch takes consecutive numbers; one longer than the ring leaves its
** newest entries, as if pushed one by one. */
static void ring_batch(void **state) {
  fixture *f = *state;
  static const char *const p[] = {"a", "b", "c", "d", "e", "f", "g"};
  const void *payloads[7];
  size_t lens[7], n, i;
  int64_t first = 0;
  sqlq_ring_entry *e;
  for (i = 0; i < 7; i++) {
    payloads[i] = p[i];
    lens[i] = 1;
  }
  assert_ok(f->db, sqlq_ring_create(f->db, f->queue, 5));
  assert_ok(f->db, sqlq_ring_push_batch(f->db, f->queue, payloads, lens, 2, &first));
  assert_int_equal(first, 1);
  assert_ok(f->db, sqlq_ring_push_batch(f->db, f->queue, payloads, lens, 7, &first));
  assert_int_equal(first, 3);
  e = read_all(f->db, f, 0, &n);
  assert_entries(e, n, 5, p + 2, 5);
  sqlq_ring_entries_free(e, n);
  assert_int_equal(push_text(f->db, f, "h"), 10);
  assert_ok(f->db, sqlq_ring_drop(f->db, f->queue));
}

/* Payloads are bytes: NUL and every other value, and the empty payload,
** come back as they went in. */
static void ring_binary_payloads(void **state) {
  fixture *f = *state;
  unsigned char *bytes = fx_pattern(1000);
  sqlq_ring_entry *e;
  size_t n;
  assert_ok(f->db, sqlq_ring_create(f->db, f->queue, 2));
  assert_ok(f->db, sqlq_ring_push(f->db, f->queue, bytes, 1000, NULL));
  assert_ok(f->db, sqlq_ring_push(f->db, f->queue, NULL, 0, NULL));
  e = read_all(f->db, f, 0, &n);
  assert_int_equal(n, 2);
  assert_int_equal(e[0].payload_len, 1000);
  assert_memory_equal(e[0].payload, bytes, 1000);
  assert_int_equal(e[1].payload_len, 0);
  sqlq_ring_entries_free(e, n);
  free(bytes);
  assert_ok(f->db, sqlq_ring_drop(f->db, f->queue));
}

/* A push rolled back with its transaction gives its number back: the next
** push takes it, so numbers never skip; a committed one stays. */
static void ring_rollback_skips_nothing(void **state) {
  fixture *f = *state;
  sqlq_ring_entry *e;
  int64_t seq = 0;
  size_t n;
  assert_ok(f->db, sqlq_ring_create(f->db, f->queue, 10));
  assert_ok(f->db, sqlq_begin(f->db));
  assert_ok(f->db, sqlq_ring_push(f->db, f->queue, "gone", 4, &seq));
  assert_int_equal(seq, 1);
  assert_ok(f->db, sqlq_rollback(f->db));
  assert_ok(f->db, sqlq_begin(f->db));
  assert_ok(f->db, sqlq_ring_push(f->db, f->queue, "kept", 4, &seq));
  assert_ok(f->db, sqlq_commit(f->db));
  assert_int_equal(seq, 1);
  e = read_all(f->db, f, 0, &n);
  assert_int_equal(n, 1);
  assert_memory_equal(e[0].payload, "kept", 4);
  sqlq_ring_entries_free(e, n);
  assert_ok(f->db, sqlq_ring_drop(f->db, f->queue));
}

/* Creating again with the same capacity is fine; with another it is
** refused and the ring keeps its capacity and entries. */
static void ring_create_again(void **state) {
  fixture *f = *state;
  sqlq_ring_entry *e;
  size_t n;
  assert_ok(f->db, sqlq_ring_create(f->db, f->queue, 2));
  push_text(f->db, f, "x");
  assert_ok(f->db, sqlq_ring_create(f->db, f->queue, 2));
  assert_status(f->db, sqlq_ring_create(f->db, f->queue, 3), SQLQ_MISUSE);
  push_text(f->db, f, "y");
  push_text(f->db, f, "z");
  e = read_all(f->db, f, 0, &n);
  assert_int_equal(n, 2);
  assert_int_equal(e[0].seq, 2);
  sqlq_ring_entries_free(e, n);
  assert_ok(f->db, sqlq_ring_drop(f->db, f->queue));
  assert_status(f->db, sqlq_ring_drop(f->db, f->queue), SQLQ_NOTFOUND);
}

/* Bad input is refused with a clear status and stores nothing: capacities
** of 0, -1 and past the maximum, bad names, an unknown ring, a payload over
** the limit (the ring keeps its entries and its numbering). */
static void ring_bad_input(void **state) {
  fixture *f = *state;
  char name[200];
  sqlq_ring_entry *e = NULL;
  sqlq_db *small = NULL;
  size_t n = 0;
  int64_t seq = 0;
  assert_status(f->db, sqlq_ring_create(f->db, f->queue, 0), SQLQ_MISUSE);
  assert_status(f->db, sqlq_ring_create(f->db, f->queue, -1), SQLQ_MISUSE);
  assert_status(f->db, sqlq_ring_create(f->db, f->queue, (int64_t)SQLQ_RING_CAPACITY_MAX + 1),
                SQLQ_MISUSE);
  assert_status(f->db, sqlq_ring_create(f->db, "", 5), SQLQ_MISUSE);
  assert_status(f->db, sqlq_ring_create(f->db, NULL, 5), SQLQ_MISUSE);
  assert_status(f->db, sqlq_ring_create(f->db, "a\nb", 5), SQLQ_MISUSE);
  memset(name, 'r', 129);
  name[129] = '\0';
  assert_status(f->db, sqlq_ring_create(f->db, name, 5), SQLQ_MISUSE);
  /* Nothing was created by the refusals. */
  assert_status(f->db, sqlq_ring_push(f->db, f->queue, "x", 1, NULL), SQLQ_NOTFOUND);
  assert_status(f->db, sqlq_ring_read(f->db, f->queue, 0, 0, &e, &n), SQLQ_NOTFOUND);
  assert_null(e);
  assert_status(f->db, sqlq_ring_wait(f->db, f->queue, 0, 0.01), SQLQ_NOTFOUND);
  assert_status(f->db, sqlq_ring_drop(f->db, f->queue), SQLQ_NOTFOUND);
  assert_status(f->db, sqlq_ring_push_batch(f->db, f->queue, NULL, NULL, 0, NULL), SQLQ_MISUSE);

  assert_ok(f->db, sqlq_ring_create(f->db, f->queue, 3));
  push_text(f->db, f, "kept");
  assert_int_equal(fx_open_with(f, "payload_limit=16", NULL, &small), SQLQ_OK);
  assert_ok(small, sqlq_ring_push(small, f->queue, "0123456789abcdef", 16, &seq));
  assert_int_equal(seq, 2);
  assert_status(small, sqlq_ring_push(small, f->queue, "0123456789abcdefg", 17, &seq), SQLQ_TOOBIG);
  assert_int_equal(seq, 0);
  sqlq_close(small);
  assert_int_equal(push_text(f->db, f, "next"), 3);
  e = read_all(f->db, f, 0, &n);
  assert_int_equal(n, 3);
  assert_memory_equal(e[0].payload, "kept", 4);
  sqlq_ring_entries_free(e, n);
  assert_ok(f->db, sqlq_ring_drop(f->db, f->queue));
}

/* ---------------------------------------------------------------------
** Concurrency: processes pushing at once.
*/

enum { PUSHERS = 4, PUSHES = 50, CAPACITY = 50 };

/* A child's pushes: PUSHES entries "P:I" on a handle of its own. */
static int push_in_child(const fixture *f, void *arg) {
  int p = (int)(intptr_t)arg, i, rc;
  sqlq_options opts = SQLQ_OPTIONS_INIT(sqlq_options);
  sqlq_db *db = NULL;
  opts.busy_timeout = 60;
  rc = sqlq_open(f->url, &opts, &db);
  for (i = 0; rc == SQLQ_OK && i < PUSHES; i++) {
    char text[32];
    snprintf(text, sizeof text, "%d:%d", p, i);
    rc = sqlq_ring_push(db, f->queue, text, strlen(text), NULL);
  }
  sqlq_close(db);
  return rc;
}

/* Read the ring once and check that the snapshot is whole: consecutive
** numbers, no more than the capacity, and a full ring once it wrapped. */
static void assert_whole(const fixture *f) {
  sqlq_ring_entry *e;
  size_t n, i;
  e = read_all(f->db, f, 0, &n);
  assert_true(n <= CAPACITY);
  for (i = 1; i < n; i++) assert_int_equal(e[i].seq, e[i - 1].seq + 1);
  if (n > 0 && e[n - 1].seq > CAPACITY) assert_int_equal(n, CAPACITY);
  if (n > 0 && e[n - 1].seq <= CAPACITY) assert_int_equal(e[0].seq, 1);
  sqlq_ring_entries_free(e, n);
}

/* Four processes push 50 entries each into a ring of 50 at once, while
** this one reads it and never sees it torn: the ring ends with exactly the
** newest 50, numbered 151 to 200, and each process's entries are in the
** order it pushed them. */
static void ring_concurrent_pushes(void **state) {
  fixture *f = *state;
  fx_child children[PUSHERS];
  sqlq_ring_entry *e;
  int last[PUSHERS];
  size_t n, i;
  int p;
  assert_ok(f->db, sqlq_ring_create(f->db, f->queue, CAPACITY));
  for (p = 0; p < PUSHERS; p++) children[p] = fx_fork(push_in_child, f, (void *)(intptr_t)p);
  for (i = 0; i < 100; i++) assert_whole(f);
  for (p = 0; p < PUSHERS; p++) assert_int_equal(fx_reap(&children[p]), SQLQ_OK);
  e = read_all(f->db, f, 0, &n);
  assert_int_equal(n, CAPACITY);
  for (p = 0; p < PUSHERS; p++) last[p] = -1;
  for (i = 0; i < n; i++) {
    int who = -1, k = -1;
    assert_int_equal(e[i].seq, PUSHERS * PUSHES - CAPACITY + 1 + (int64_t)i);
    assert_int_equal(sscanf((const char *)e[i].payload, "%d:%d", &who, &k), 2);
    assert_in_range(who, 0, PUSHERS - 1);
    assert_true(k > last[who]);
    last[who] = k;
  }
  sqlq_ring_entries_free(e, n);
  assert_int_equal(push_text(f->db, f, "after"), PUSHERS * PUSHES + 1);
  assert_ok(f->db, sqlq_ring_drop(f->db, f->queue));
}

/* ---------------------------------------------------------------------
** Following: waits end with a push, never by polling.  As in
** test_wait.c, timing assertions are generous upper bounds only: the
** wake-up must come well before the long timeout.
*/

#define LONG_TIMEOUT 20.0
#define WOKEN_WITHIN 10.0

/* A child that pushes one entry after a pause. */
static int push_later(const fixture *f, void *arg) {
  sqlq_db *db = NULL;
  int rc;
  (void)arg;
  fx_sleep(0.2);
  rc = sqlq_open(f->url, NULL, &db);
  if (rc == SQLQ_OK) rc = sqlq_ring_push(db, f->queue, "late", 4, NULL);
  sqlq_close(db);
  return rc;
}

/* A wait on an entry already there returns at once; on one to come it
** times out, or returns once another process pushes it. */
static void ring_wait_other_process(void **state) {
  fixture *f = *state;
  fx_child child;
  double t0;
  assert_ok(f->db, sqlq_ring_create(f->db, f->queue, 4));
  push_text(f->db, f, "first");
  assert_ok(f->db, sqlq_ring_wait(f->db, f->queue, 0, 0));
  assert_status(f->db, sqlq_ring_wait(f->db, f->queue, 1, 0.05), SQLQ_TIMEOUT);
  child = fx_fork(push_later, f, NULL);
  t0 = fx_now();
  assert_ok(f->db, sqlq_ring_wait(f->db, f->queue, 1, LONG_TIMEOUT));
  assert_true(fx_now() - t0 < WOKEN_WITHIN);
  assert_int_equal(fx_reap(&child), SQLQ_OK);
  assert_ok(f->db, sqlq_ring_drop(f->db, f->queue));
}

/* A follower thread of this process, on a handle of its own. */
typedef struct follower {
  const fixture *f;
  int64_t since;
  int status;
  double took; /* seconds the wait took */
} follower;

static void *follow_thread(void *arg) {
  follower *w = arg;
  sqlq_db *db = NULL;
  double t0 = fx_now();
  w->status = sqlq_open(w->f->url, NULL, &db);
  if (w->status == SQLQ_OK) w->status = sqlq_ring_wait(db, w->f->queue, w->since, LONG_TIMEOUT);
  w->took = fx_now() - t0;
  sqlq_close(db);
  return NULL;
}

/* Two followers in this process both wake for one push (a ring wakes all
** of its followers, not one per entry); a drop wakes them with
** SQLQ_NOTFOUND. */
static void ring_wait_wakes_every_follower(void **state) {
  fixture *f = *state;
  follower w[3];
  pthread_t t[3];
  int i;
  assert_ok(f->db, sqlq_ring_create(f->db, f->queue, 4));
  for (i = 0; i < 3; i++) {
    w[i].f = f;
    w[i].since = 0;
    w[i].status = -1;
    assert_int_equal(pthread_create(&t[i], NULL, follow_thread, &w[i]), 0);
  }
  fx_sleep(0.2);
  push_text(f->db, f, "for all");
  for (i = 0; i < 3; i++) {
    assert_int_equal(pthread_join(t[i], NULL), 0);
    assert_ok(NULL, w[i].status);
    assert_true(w[i].took < WOKEN_WITHIN);
  }
  w[0].since = 1;
  assert_int_equal(pthread_create(&t[0], NULL, follow_thread, &w[0]), 0);
  fx_sleep(0.2);
  assert_ok(f->db, sqlq_ring_drop(f->db, f->queue));
  assert_int_equal(pthread_join(t[0], NULL), 0);
  assert_int_equal(w[0].status, SQLQ_NOTFOUND);
  assert_true(w[0].took < WOKEN_WITHIN);
}

/* A child with two follower threads: returns 0 when both woke in time,
** else the number that did not. */
static int two_followers(const fixture *f, void *arg) {
  follower w[2];
  pthread_t t[2];
  int i, late = 0;
  (void)arg;
  for (i = 0; i < 2; i++) {
    w[i].f = f;
    w[i].since = 0;
    w[i].status = -1;
    if (pthread_create(&t[i], NULL, follow_thread, &w[i]) != 0) return 2;
  }
  for (i = 0; i < 2; i++) {
    pthread_join(t[i], NULL);
    if (w[i].status == SQLQ_OK && w[i].took < WOKEN_WITHIN) continue;
    /* Say why, for a failure seen once under load (CI, Firebird). */
    fprintf(stderr, "follower %d: status %d after %.3f s\n", i, w[i].status, w[i].took);
    late++;
  }
  return late;
}

/* A push wakes every follower of another process too, not one per
** process (on PostgreSQL its NOTIFY carries no count). */
static void ring_wait_wakes_followers_elsewhere(void **state) {
  fixture *f = *state;
  fx_child child;
  assert_ok(f->db, sqlq_ring_create(f->db, f->queue, 4));
  child = fx_fork(two_followers, f, NULL);
  fx_sleep(0.3);
  push_text(f->db, f, "for both");
  assert_int_equal(fx_reap(&child), 0);
  assert_ok(f->db, sqlq_ring_drop(f->db, f->queue));
}

int run_ring_tests(void) {
  const struct CMUnitTest tests[] = {
    FX_TEST(ring_keeps_the_newest),
    FX_TEST(ring_batch),
    FX_TEST(ring_binary_payloads),
    FX_TEST(ring_rollback_skips_nothing),
    FX_TEST(ring_create_again),
    FX_TEST(ring_bad_input),
    FX_TEST(ring_concurrent_pushes),
    FX_TEST(ring_wait_other_process),
    FX_TEST(ring_wait_wakes_every_follower),
    FX_TEST(ring_wait_wakes_followers_elsewhere),
  };
  return fx_run_group_from("rings", 2, tests, sizeof tests / sizeof tests[0]);
}
