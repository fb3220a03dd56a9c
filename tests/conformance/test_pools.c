/*
** test_pools.c -- pools: items handed out least recently used first,
** stamped in the same transaction, never two callers on one item while
** another is free, holds with tokens; and their refusals of bad input.
** Each test's pool is named after the fixture's queue.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* Add the n items to the fixture's pool, asserting that each is new. */
static void add_items(const fixture *f, const char *const *items, int n) {
  int i, added = 0;
  for (i = 0; i < n; i++) {
    assert_ok(f->db, sqlq_pool_add(f->db, f->queue, items[i], &added));
    assert_int_equal(added, 1);
  }
}

/* Hand out the next item through db and copy it; returns its token. */
static int64_t next_item(sqlq_db *db, const fixture *f, double hold, char *out, size_t size) {
  sqlq_pool_item *it = NULL;
  int64_t token;
  assert_ok(db, sqlq_pool_next(db, f->queue, hold, &it));
  assert_non_null(it);
  snprintf(out, size, "%s", it->item);
  token = it->token;
  assert_true(it->last_used_at_us > 0);
  assert_true(hold > 0 ? token != 0 && it->held_until_us > it->last_used_at_us
                       : token == 0 && it->held_until_us == 0);
  sqlq_pool_items_free(it, 1);
  return token;
}

/* Three items come out in turn, the order of adding breaking the first
** ties; the list shows the order of the next turns and the use counts. */
static void pool_rotates(void **state) {
  fixture *f = *state;
  static const char *const items[] = {"a", "b", "c"};
  static const char *const order = "abcabca";
  sqlq_pool_item *list = NULL;
  char got[16];
  size_t n = 0, i;
  int added = 1;
  add_items(f, items, 3);
  assert_ok(f->db, sqlq_pool_add(f->db, f->queue, "b", &added));
  assert_int_equal(added, 0);
  for (i = 0; order[i]; i++) {
    next_item(f->db, f, 0, got, sizeof got);
    assert_int_equal(got[0], order[i]);
    assert_int_equal(got[1], '\0');
  }
  assert_ok(f->db, sqlq_pool_list(f->db, f->queue, &list, &n));
  assert_int_equal(n, 3);
  assert_string_equal(list[0].item, "b");
  assert_string_equal(list[1].item, "c");
  assert_string_equal(list[2].item, "a");
  assert_int_equal(list[0].uses, 2);
  assert_int_equal(list[2].uses, 3);
  assert_true(list[0].last_used_at_us < list[1].last_used_at_us);
  assert_true(list[1].last_used_at_us < list[2].last_used_at_us);
  sqlq_pool_items_free(list, n);
  assert_ok(f->db, sqlq_pool_remove(f->db, f->queue, "b"));
  next_item(f->db, f, 0, got, sizeof got);
  assert_string_equal(got, "c");
}

/* A held item is no one else's until released with its token or until
** its hold ends; with every item held, next is SQLQ_BUSY. */
static void pool_holds(void **state) {
  fixture *f = *state;
  static const char *const items[] = {"x", "y"};
  sqlq_pool_item *it = NULL;
  char first[16], second[16];
  int64_t t1, t2;
  add_items(f, items, 2);
  t1 = next_item(f->db, f, 60, first, sizeof first);
  t2 = next_item(f->db, f, 0.3, second, sizeof second);
  assert_string_equal(first, "x");
  assert_string_equal(second, "y");
  assert_status(f->db, sqlq_pool_next(f->db, f->queue, 0, &it), SQLQ_BUSY);
  assert_null(it);
  assert_status(f->db, sqlq_pool_release(f->db, f->queue, "x", t1 + 1), SQLQ_STALE);
  assert_ok(f->db, sqlq_pool_release(f->db, f->queue, "x", t1));
  assert_status(f->db, sqlq_pool_release(f->db, f->queue, "x", t1), SQLQ_STALE);
  next_item(f->db, f, 0, first, sizeof first);
  assert_string_equal(first, "x");
  /* y's hold of 0.3 s ends; then it is the least recently used. */
  fx_sleep(0.4);
  next_item(f->db, f, 0, second, sizeof second);
  assert_string_equal(second, "y");
  /* Its holder comes too late: the hold is gone. */
  assert_status(f->db, sqlq_pool_release(f->db, f->queue, "y", t2), SQLQ_STALE);
}

/* Bad input is refused with a clear status: unknown pools and items, bad
** names and items, bad holds. */
static void pool_bad_input(void **state) {
  fixture *f = *state;
  sqlq_pool_item *it = NULL;
  size_t n = 0;
  char *long_item = malloc(SQLQ_POOL_ITEM_MAX + 2);
  assert_non_null(long_item);
  memset(long_item, 'i', SQLQ_POOL_ITEM_MAX + 1);
  long_item[SQLQ_POOL_ITEM_MAX + 1] = '\0';
  assert_status(f->db, sqlq_pool_next(f->db, f->queue, 0, &it), SQLQ_NOTFOUND);
  assert_null(it);
  assert_status(f->db, sqlq_pool_list(f->db, f->queue, &it, &n), SQLQ_NOTFOUND);
  assert_status(f->db, sqlq_pool_remove(f->db, f->queue, "a"), SQLQ_NOTFOUND);
  assert_status(f->db, sqlq_pool_release(f->db, f->queue, "a", 1), SQLQ_NOTFOUND);
  assert_status(f->db, sqlq_pool_add(f->db, f->queue, "", NULL), SQLQ_MISUSE);
  assert_status(f->db, sqlq_pool_add(f->db, f->queue, NULL, NULL), SQLQ_MISUSE);
  assert_status(f->db, sqlq_pool_add(f->db, f->queue, "tab\there", NULL), SQLQ_MISUSE);
  assert_status(f->db, sqlq_pool_add(f->db, f->queue, "\xff", NULL), SQLQ_MISUSE);
  assert_status(f->db, sqlq_pool_add(f->db, f->queue, long_item, NULL), SQLQ_MISUSE);
  long_item[SQLQ_POOL_ITEM_MAX] = '\0';
  assert_ok(f->db, sqlq_pool_add(f->db, f->queue, long_item, NULL));
  assert_status(f->db, sqlq_pool_add(f->db, "", "a", NULL), SQLQ_MISUSE);
  assert_status(f->db, sqlq_pool_next(f->db, f->queue, -1, &it), SQLQ_MISUSE);
  assert_status(f->db, sqlq_pool_next(f->db, f->queue, 0.0 / 0.0, &it), SQLQ_MISUSE);
  assert_ok(f->db, sqlq_pool_list(f->db, f->queue, &it, &n));
  assert_int_equal(n, 1);
  assert_int_equal(strlen(it[0].item), SQLQ_POOL_ITEM_MAX);
  sqlq_pool_items_free(it, n);
  free(long_item);
}

/* ---------------------------------------------------------------------
** Concurrency: processes picking at once.
*/

enum { PICKERS = 3, PICKS = 40, ITEMS = 4, HOLDERS = 4 };

/* A child's picks on a handle of its own; returns the status. */
static int pick_in_child(const fixture *f, void *arg) {
  sqlq_options opts = SQLQ_OPTIONS_INIT(sqlq_options);
  sqlq_db *db = NULL;
  int i, rc;
  (void)arg;
  opts.busy_timeout = 60;
  rc = sqlq_open(f->url, &opts, &db);
  for (i = 0; rc == SQLQ_OK && i < PICKS; i++) {
    sqlq_pool_item *it = NULL;
    rc = sqlq_pool_next(db, f->queue, 0, &it);
    sqlq_pool_items_free(it, 1);
  }
  sqlq_close(db);
  return rc;
}

/* Three processes pick 40 times each from four items at once: every pick
** counts, and no item is used more than 3 times more than another. */
static void pool_concurrent_fairness(void **state) {
  fixture *f = *state;
  static const char *const items[ITEMS] = {"k1", "k2", "k3", "k4"};
  fx_child children[PICKERS];
  sqlq_pool_item *list = NULL;
  int64_t lo = INT64_MAX, hi = 0, total = 0;
  size_t n = 0, i;
  int p;
  add_items(f, items, ITEMS);
  for (p = 0; p < PICKERS; p++) children[p] = fx_fork(pick_in_child, f, NULL);
  for (p = 0; p < PICKERS; p++) assert_int_equal(fx_reap(&children[p]), SQLQ_OK);
  assert_ok(f->db, sqlq_pool_list(f->db, f->queue, &list, &n));
  assert_int_equal(n, ITEMS);
  for (i = 0; i < n; i++) {
    total += list[i].uses;
    if (list[i].uses < lo) lo = list[i].uses;
    if (list[i].uses > hi) hi = list[i].uses;
  }
  sqlq_pool_items_free(list, n);
  assert_int_equal(total, PICKERS * PICKS);
  assert_true(hi - lo <= 3);
}

/* A child that takes one item with a long hold; returns the item's
** number (1..ITEMS), or 100 + the failing status. */
static int hold_in_child(const fixture *f, void *arg) {
  sqlq_options opts = SQLQ_OPTIONS_INIT(sqlq_options);
  sqlq_pool_item *it = NULL;
  sqlq_db *db = NULL;
  int rc, got = 0;
  (void)arg;
  opts.busy_timeout = 60;
  rc = sqlq_open(f->url, &opts, &db);
  if (rc == SQLQ_OK) rc = sqlq_pool_next(db, f->queue, 600, &it);
  if (rc == SQLQ_OK) got = it->item[1] - '0';
  sqlq_pool_items_free(it, 1);
  sqlq_close(db);
  return rc == SQLQ_OK ? got : 100 + rc;
}

/* Four processes each take one of four items with a hold at once: they
** get four different items, and a fifth caller finds them all held. */
static void pool_concurrent_holds_differ(void **state) {
  fixture *f = *state;
  static const char *const items[HOLDERS] = {"k1", "k2", "k3", "k4"};
  fx_child children[HOLDERS];
  sqlq_pool_item *it = NULL;
  int seen[HOLDERS + 1] = {0};
  int p;
  add_items(f, items, HOLDERS);
  for (p = 0; p < HOLDERS; p++) children[p] = fx_fork(hold_in_child, f, NULL);
  for (p = 0; p < HOLDERS; p++) {
    int got = fx_reap(&children[p]);
    assert_in_range(got, 1, HOLDERS);
    seen[got]++;
  }
  for (p = 1; p <= HOLDERS; p++) assert_int_equal(seen[p], 1);
  assert_status(f->db, sqlq_pool_next(f->db, f->queue, 0, &it), SQLQ_BUSY);
}

int run_pool_tests(void) {
  const struct CMUnitTest tests[] = {
    FX_TEST(pool_rotates),
    FX_TEST(pool_holds),
    FX_TEST(pool_bad_input),
    FX_TEST(pool_concurrent_fairness),
    FX_TEST(pool_concurrent_holds_differ),
  };
  return fx_run_group_from("pools", 2, tests, sizeof tests / sizeof tests[0]);
}
