/*
** test_list.c -- listing what is there: the named locks held now
** (sqlq_locks), the rings (sqlq_rings) and the pools (sqlq_pools), with
** their limits, their order and their garbage arguments.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* Whether db's backend can list its locks: every one but Firebird, which
** answers SQLQ_UNAVAILABLE (a held lock is a row locked by a transaction,
** which the server does not show). */
static int lists_locks(sqlq_db *db) {
  return strcmp(sqlq_backend(db), "firebird") != 0;
}

/* The entry of locks[0..n) whose key is key, or NULL. */
static const sqlq_lock_info *find_key(const sqlq_lock_info *locks, size_t n, int64_t key) {
  for (size_t i = 0; i < n; i++)
    if (locks[i].key == key) return &locks[i];
  return NULL;
}

/* List the locks of db and return the entry of the lock called name (NULL
** when not held), asserting what every entry must be; *list_out keeps
** the list for the caller to free. */
static const sqlq_lock_info *listed(sqlq_db *db, const void *name, size_t len,
                                    sqlq_lock_info **list_out, size_t *n_out) {
  int64_t key = 0;
  assert_ok(db, sqlq_lock_key(db, name, len, &key));
  assert_ok(db, sqlq_locks(db, SQLQ_LIST_MAX, list_out, n_out));
  const sqlq_lock_info *e = find_key(*list_out, *n_out, key);
  if (e && e->name) {
    assert_int_equal(e->name_len, len);
    assert_memory_equal(e->name, name, len);
    assert_int_equal(e->name[len], '\0');
  }
  return e;
}

/* A lock held through another handle is listed, with its holder where the
** backend says who; released, it is gone.  Names are bytes: one with a
** NUL and capital letters is listed by its key too. */
static void locks_lists_lock_of_other_handle(void **state) {
  fixture *f = *state;
  sqlq_db *other = fx_open(f);
  char plain[128];
  const unsigned char odd[] = {'L', 'o', 0, 'c', 'K', 0xff};
  const struct {
    const void *name;
    size_t len;
  } names[] = {{fx_name(f, "listed", plain, sizeof plain), strlen(plain)}, {odd, sizeof odd}};
  for (size_t i = 0; i < 2; i++) {
    sqlq_lock *held = NULL;
    sqlq_lock_info *list = NULL;
    size_t n = 0;
    assert_ok(other, sqlq_lock_acquire(other, names[i].name, names[i].len, 0, &held));
    if (!lists_locks(f->db)) {
      assert_status(f->db, sqlq_locks(f->db, 10, &list, &n), SQLQ_UNAVAILABLE);
      assert_null(list);
      assert_int_equal(n, 0);
      sqlq_unlock(held);
      break;
    }
    const sqlq_lock_info *e = listed(f->db, names[i].name, names[i].len, &list, &n);
    assert_non_null(e);
    if (sqlq_lock_lease(held) > 0) {
      /* A lease (through a transaction pooler): its expiry and fence. */
      assert_true(e->expires_at_us > 0);
      assert_int_equal(e->fence, sqlq_lock_fence(held));
    } else {
      assert_int_equal(e->expires_at_us, 0); /* a session's lock */
      assert_int_equal(e->fence, 0);
    }
    if (sqlq_lock_lease(held) == 0 && strcmp(sqlq_backend(f->db), "sqlite") != 0) {
      /* A server says which session holds it. */
      assert_true(e->pid > 0);
      assert_non_null(e->holder);
    }
    if (sqlq_lock_lease(held) == 0 && strcmp(sqlq_backend(f->db), "postgres") == 0)
      assert_true(e->since_at_us > 0);
    if (strcmp(sqlq_backend(f->db), "mysql") == 0 && i == 0) {
      assert_non_null(e->name); /* a plain name is GET_LOCK's own */
    }
    sqlq_lock_infos_free(list, n);
    sqlq_unlock(held);
    assert_null(listed(f->db, names[i].name, names[i].len, &list, &n));
    sqlq_lock_infos_free(list, n);
  }
  sqlq_close(other);
}

/* A lock of the reading handle itself is listed too, and the limit bounds
** the list. */
static void locks_limit_bounds_the_list(void **state) {
  fixture *f = *state;
  if (!lists_locks(f->db)) skip();
  sqlq_db *other = fx_open(f);
  sqlq_lock *held[3] = {NULL, NULL, NULL};
  char name[128];
  for (int i = 0; i < 3; i++) {
    char suffix[16];
    snprintf(suffix, sizeof suffix, "limit%d", i);
    fx_name(f, suffix, name, sizeof name);
    assert_ok(other, sqlq_lock_acquire(i == 2 ? f->db : other, name, strlen(name), 0, &held[i]));
  }
  sqlq_lock_info *list = NULL;
  size_t n = 0;
  assert_ok(f->db, sqlq_locks(f->db, 1, &list, &n));
  assert_int_equal(n, 1);
  sqlq_lock_infos_free(list, n);
  assert_non_null(listed(f->db, name, strlen(name), &list, &n)); /* f->db's own */
  assert_true(n >= 3);
  for (size_t i = 1; i < n; i++) /* named first, by name; then by key */
    if (list[i - 1].name && list[i].name) {
      size_t m = list[i - 1].name_len < list[i].name_len ? list[i - 1].name_len : list[i].name_len;
      int c = memcmp(list[i - 1].name, list[i].name, m);
      assert_true(c < 0 || (c == 0 && list[i - 1].name_len <= list[i].name_len));
    } else if (!list[i - 1].name && !list[i].name) {
      assert_true(list[i - 1].key <= list[i].key);
    } else {
      assert_non_null(list[i - 1].name);
    }
  sqlq_lock_infos_free(list, n);
  for (int i = 0; i < 3; i++) sqlq_unlock(held[i]);
  sqlq_close(other);
}

/* Garbage: NULL out pointers, limits out of range, bad names for the key. */
static void locks_refuse_garbage(void **state) {
  fixture *f = *state;
  sqlq_lock_info *list = (sqlq_lock_info *)&list;
  size_t n = 99;
  int64_t key = 7;
  assert_status(f->db, sqlq_locks(f->db, 10, NULL, &n), SQLQ_MISUSE);
  assert_int_equal(n, 0);
  assert_status(f->db, sqlq_locks(f->db, 10, &list, NULL), SQLQ_MISUSE);
  assert_null(list);
  assert_status(f->db, sqlq_locks(f->db, 0, &list, &n), SQLQ_MISUSE);
  assert_status(f->db, sqlq_locks(f->db, SQLQ_LIST_MAX + 1, &list, &n), SQLQ_MISUSE);
  assert_status(f->db, sqlq_locks(f->db, (size_t)-1, &list, &n), SQLQ_MISUSE);
  assert_status(NULL, sqlq_locks(NULL, 10, &list, &n), SQLQ_MISUSE);
  assert_status(f->db, sqlq_lock_key(f->db, "a", 1, NULL), SQLQ_MISUSE);
  assert_status(f->db, sqlq_lock_key(f->db, NULL, 1, &key), SQLQ_MISUSE);
  assert_int_equal(key, 0);
  assert_status(f->db, sqlq_lock_key(f->db, "a", 0, &key), SQLQ_MISUSE);
  assert_status(f->db, sqlq_lock_key(f->db, "a", SQLQ_LOCK_NAME_MAX + 1, &key), SQLQ_TOOBIG);
  int64_t k2 = 0;
  assert_ok(f->db, sqlq_lock_key(f->db, "a\0b", 3, &key));
  assert_ok(f->db, sqlq_lock_key(f->db, "a\0c", 3, &k2));
  assert_true(key != k2);
  sqlq_lock_infos_free(NULL, 0);
  sqlq_lock_infos_free(NULL, 5);
}

/* Create the rings prefix-r1..r3 with capacities 1..3 and push i + 1
** entries into ring i. */
static void make_rings(fixture *f) {
  char name[128];
  for (int i = 1; i <= 3; i++) {
    char suffix[8];
    snprintf(suffix, sizeof suffix, "r%d", i);
    fx_name(f, suffix, name, sizeof name);
    assert_ok(f->db, sqlq_ring_create(f->db, name, (size_t)i));
    for (int k = 0; k <= i; k++) assert_ok(f->db, sqlq_ring_push(f->db, name, "x", 1, NULL));
  }
}

/* Rings are listed by name after the name given, at most limit of them,
** with capacity, entries held and last sequence number. */
static void rings_are_listed_in_pages(void **state) {
  fixture *f = *state;
  char after[128], name[128];
  make_rings(f);
  sqlq_ring_info *rings = NULL;
  size_t n = 0;
  assert_ok(f->db, sqlq_rings(f->db, fx_name(f, "r0", after, sizeof after), 2, &rings, &n));
  assert_int_equal(n, 2);
  assert_string_equal(rings[0].name, fx_name(f, "r1", name, sizeof name));
  assert_int_equal(rings[0].capacity, 1);
  assert_int_equal(rings[0].last_seq, 2);
  assert_int_equal(rings[0].entries, 1);
  assert_true(rings[0].created_at_us > 0);
  assert_string_equal(rings[1].name, fx_name(f, "r2", name, sizeof name));
  assert_int_equal(rings[1].entries, 2);
  assert_int_equal(rings[1].last_seq, 3);
  sqlq_ring_infos_free(rings, n);
  assert_ok(f->db, sqlq_rings(f->db, name, 1, &rings, &n)); /* after r2 */
  assert_int_equal(n, 1);
  assert_string_equal(rings[0].name, fx_name(f, "r3", name, sizeof name));
  assert_int_equal(rings[0].capacity, 3);
  assert_int_equal(rings[0].entries, 3);
  assert_int_equal(rings[0].last_seq, 4);
  sqlq_ring_infos_free(rings, n);
  /* From the first: every ring, in byte order, ours among them. */
  assert_ok(f->db, sqlq_rings(f->db, NULL, SQLQ_LIST_MAX, &rings, &n));
  assert_true(n >= 3);
  for (size_t i = 1; i < n; i++) assert_true(strcmp(rings[i - 1].name, rings[i].name) < 0);
  sqlq_ring_infos_free(rings, n);
  assert_ok(f->db, sqlq_rings(f->db, "", 1, &rings, &n));
  assert_int_equal(n, 1);
  sqlq_ring_infos_free(rings, n);
  /* Dropped: gone from the list. */
  assert_ok(f->db, sqlq_ring_drop(f->db, name));
  assert_ok(f->db, sqlq_rings(f->db, fx_name(f, "r2", after, sizeof after), 1, &rings, &n));
  assert_true(n == 0 || strcmp(rings[0].name, name) != 0);
  sqlq_ring_infos_free(rings, n);
}

/* Pools are listed by name after the name given, at most limit of them,
** with their items, those held and the last use. */
static void pools_are_listed_in_pages(void **state) {
  fixture *f = *state;
  char p1[128], p2[128], after[128];
  fx_name(f, "p1", p1, sizeof p1);
  fx_name(f, "p2", p2, sizeof p2);
  assert_ok(f->db, sqlq_pool_add(f->db, p1, "a", NULL));
  assert_ok(f->db, sqlq_pool_add(f->db, p2, "a", NULL));
  assert_ok(f->db, sqlq_pool_add(f->db, p2, "b", NULL));
  assert_ok(f->db, sqlq_pool_add(f->db, p2, "c", NULL));
  sqlq_pool_item *item = NULL;
  assert_ok(f->db, sqlq_pool_next(f->db, p2, 60, &item));
  sqlq_pool_items_free(item, 1);
  sqlq_pool_info *pools = NULL;
  size_t n = 0;
  assert_ok(f->db, sqlq_pools(f->db, fx_name(f, "p0", after, sizeof after), 2, &pools, &n));
  assert_true(n >= 2);
  assert_string_equal(pools[0].name, p1);
  assert_int_equal(pools[0].items, 1);
  assert_int_equal(pools[0].held, 0);
  assert_int_equal(pools[0].last_used_at_us, 0);
  assert_string_equal(pools[1].name, p2);
  assert_int_equal(pools[1].items, 3);
  assert_int_equal(pools[1].held, 1);
  assert_true(pools[1].last_used_at_us > 0);
  sqlq_pool_infos_free(pools, n);
  assert_ok(f->db, sqlq_pools(f->db, p1, 1, &pools, &n));
  assert_int_equal(n, 1);
  assert_string_equal(pools[0].name, p2);
  sqlq_pool_infos_free(pools, n);
  assert_ok(f->db, sqlq_pools(f->db, NULL, SQLQ_LIST_MAX, &pools, &n));
  for (size_t i = 1; i < n; i++) assert_true(strcmp(pools[i - 1].name, pools[i].name) < 0);
  sqlq_pool_infos_free(pools, n);
  /* A pool without items is no pool. */
  assert_ok(f->db, sqlq_pool_remove(f->db, p1, "a"));
  assert_ok(f->db, sqlq_pools(f->db, after, 1, &pools, &n));
  assert_int_equal(n, 1);
  assert_string_equal(pools[0].name, p2);
  sqlq_pool_infos_free(pools, n);
}

/* Garbage: NULL out pointers, limits out of range, bad names to list
** after. */
static void rings_and_pools_refuse_garbage(void **state) {
  fixture *f = *state;
  sqlq_ring_info *rings = (sqlq_ring_info *)&rings;
  sqlq_pool_info *pools = (sqlq_pool_info *)&pools;
  size_t n = 99;
  char long_name[SQLQ_QUEUE_NAME_MAX + 2];
  memset(long_name, 'a', sizeof long_name - 1);
  long_name[sizeof long_name - 1] = '\0';
  const char *bad_after[] = {"a\x01", "\xff\xfe", long_name};
  assert_status(f->db, sqlq_rings(f->db, NULL, 10, NULL, &n), SQLQ_MISUSE);
  assert_int_equal(n, 0);
  assert_status(f->db, sqlq_rings(f->db, NULL, 10, &rings, NULL), SQLQ_MISUSE);
  assert_null(rings);
  assert_status(f->db, sqlq_pools(f->db, NULL, 10, NULL, &n), SQLQ_MISUSE);
  assert_status(f->db, sqlq_pools(f->db, NULL, 10, &pools, NULL), SQLQ_MISUSE);
  assert_null(pools);
  assert_status(f->db, sqlq_rings(f->db, NULL, 0, &rings, &n), SQLQ_MISUSE);
  assert_status(f->db, sqlq_pools(f->db, NULL, 0, &pools, &n), SQLQ_MISUSE);
  assert_status(f->db, sqlq_rings(f->db, NULL, SQLQ_LIST_MAX + 1, &rings, &n), SQLQ_MISUSE);
  assert_status(f->db, sqlq_pools(f->db, NULL, SQLQ_LIST_MAX + 1, &pools, &n), SQLQ_MISUSE);
  for (size_t i = 0; i < sizeof bad_after / sizeof bad_after[0]; i++) {
    assert_status(f->db, sqlq_rings(f->db, bad_after[i], 10, &rings, &n), SQLQ_MISUSE);
    assert_status(f->db, sqlq_pools(f->db, bad_after[i], 10, &pools, &n), SQLQ_MISUSE);
  }
  assert_null(rings);
  assert_null(pools);
  assert_int_equal(n, 0);
  assert_status(NULL, sqlq_rings(NULL, NULL, 10, &rings, &n), SQLQ_MISUSE);
  assert_status(NULL, sqlq_pools(NULL, NULL, 10, &pools, &n), SQLQ_MISUSE);
  sqlq_ring_infos_free(NULL, 0);
  sqlq_ring_infos_free(NULL, 3);
  sqlq_pool_infos_free(NULL, 0);
  sqlq_pool_infos_free(NULL, 3);
}

int run_list_tests(void) {
  const struct CMUnitTest lock_tests[] = {
    FX_TEST(locks_lists_lock_of_other_handle),
    FX_TEST(locks_limit_bounds_the_list),
    FX_TEST(locks_refuse_garbage),
  };
  const struct CMUnitTest tests[] = {
    FX_TEST(rings_are_listed_in_pages),
    FX_TEST(pools_are_listed_in_pages),
    FX_TEST(rings_and_pools_refuse_garbage),
  };
  return FX_RUN_GROUP("lock listing", lock_tests) +
         fx_run_group_from("ring and pool listing", 2, tests, sizeof tests / sizeof tests[0]);
}
