/*
** test_locks.c -- named locks: exclusion between handles and processes,
** timeouts, byte-string names, release on close and on the holder's death.
*/
#include <float.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

/* A lock name of len bytes: the fixture's unique prefix, then fill bytes,
** then last as the final byte.  The caller frees it. */
static unsigned char *make_name(const fixture *f, size_t len, unsigned char fill,
                                unsigned char last) {
  unsigned char *name = malloc(len);
  size_t prefix = strlen(f->queue);
  assert_non_null(name);
  assert_true(len > prefix + 1);
  memset(name, fill, len);
  memcpy(name, f->queue, prefix);
  name[len - 1] = last;
  return name;
}

/* Try name on db once and return the status; a lock had is released. */
static int try_once(sqlq_db *db, const void *name, size_t len) {
  sqlq_lock *lock = NULL;
  int rc = sqlq_lock_acquire(db, name, len, 0, &lock);
  if (rc != SQLQ_OK) assert_null(lock);
  sqlq_unlock(lock);
  return rc;
}

/* Hold a on db1 and check that db2 cannot take a but can take b. */
static void assert_excludes_only_same(sqlq_db *db1, sqlq_db *db2, const void *a, const void *b,
                                      size_t len) {
  sqlq_lock *held = NULL;
  assert_ok(db1, sqlq_lock_acquire(db1, a, len, 0, &held));
  assert_non_null(held);
  assert_status(db2, try_once(db2, a, len), SQLQ_BUSY);
  assert_ok(db2, try_once(db2, b, len));
  sqlq_unlock(held);
  assert_ok(db2, try_once(db2, a, len));
}

/* A lock held through one handle is refused to another, at once with
** timeout 0 and after the timeout otherwise; once unlocked it is free. */
static void lock_excludes_other_handle(void **state) {
  fixture *f = *state;
  sqlq_db *other = fx_open(f);
  sqlq_lock *held = NULL, *lock = (sqlq_lock *)&lock;
  char name[128];
  size_t len = strlen(fx_name(f, "mutex", name, sizeof name));
  double t0;
  assert_ok(f->db, sqlq_lock_acquire(f->db, name, len, 0, &held));
  assert_status(other, sqlq_lock_acquire(other, name, len, 0, &lock), SQLQ_BUSY);
  assert_null(lock);
  t0 = fx_now();
  assert_status(other, sqlq_lock_acquire(other, name, len, 0.2, &lock), SQLQ_BUSY);
  assert_true(fx_now() - t0 >= 0.19);
  assert_true(fx_now() - t0 < 10);
  sqlq_unlock(held);
  assert_ok(other, try_once(other, name, len));
  sqlq_close(other);
}

/* Names are byte strings: NUL bytes count, and names that differ only
** after a NUL are different locks. */
static void lock_names_with_nul_bytes(void **state) {
  fixture *f = *state;
  sqlq_db *other = fx_open(f);
  unsigned char *a = make_name(f, 40, '\0', 'a'), *b = make_name(f, 40, '\0', 'b');
  assert_excludes_only_same(f->db, other, a, b, 40);
  free(a);
  free(b);
  sqlq_close(other);
}

/* 64 KiB names that differ in their last byte are different locks. */
static void lock_names_of_64k(void **state) {
  fixture *f = *state;
  sqlq_db *other = fx_open(f);
  size_t len = 64 * 1024;
  unsigned char *a = make_name(f, len, 'n', 'a'), *b = make_name(f, len, 'n', 'b');
  assert_excludes_only_same(f->db, other, a, b, len);
  free(a);
  free(b);
  sqlq_close(other);
}

/* Names that differ only in case are different locks (MySQL would
** compare them without regard to case). */
static void lock_names_differ_in_case(void **state) {
  fixture *f = *state;
  sqlq_db *other = fx_open(f);
  char lower[128], upper[128];
  size_t len = strlen(fx_name(f, "case", lower, sizeof lower));
  for (size_t i = 0; i <= len; i++)
    upper[i] = lower[i] >= 'a' && lower[i] <= 'z' ? (char)(lower[i] - 'a' + 'A') : lower[i];
  assert_excludes_only_same(f->db, other, upper, lower, len);
  assert_excludes_only_same(f->db, other, lower, upper, len);
  sqlq_close(other);
}

/* One-byte names work and are distinct from each other. */
static void lock_names_of_one_byte(void **state) {
  fixture *f = *state;
  sqlq_db *other = fx_open(f);
  assert_excludes_only_same(f->db, other, "\x01", "\x02", 1);
  sqlq_close(other);
}

/* A name of exactly SQLQ_LOCK_NAME_MAX bytes is accepted; one more byte is
** refused with SQLQ_TOOBIG; an empty or NULL name is SQLQ_MISUSE. */
static void lock_name_limits(void **state) {
  fixture *f = *state;
  unsigned char *name = make_name(f, SQLQ_LOCK_NAME_MAX + 1, 'm', 'm');
  sqlq_lock *lock = (sqlq_lock *)&lock;
  assert_ok(f->db, try_once(f->db, name, SQLQ_LOCK_NAME_MAX));
  assert_status(f->db, try_once(f->db, name, SQLQ_LOCK_NAME_MAX + 1), SQLQ_TOOBIG);
  assert_status(f->db, sqlq_lock_acquire(f->db, "x", 0, 0, &lock), SQLQ_MISUSE);
  assert_null(lock);
  assert_status(f->db, try_once(f->db, NULL, 3), SQLQ_MISUSE);
  assert_status(f->db, try_once(f->db, NULL, 0), SQLQ_MISUSE);
  free(name);
}

/* What a lock-holding child process is told. */
typedef struct holder_orders {
  const char *name; /* the lock's name, NUL-terminated */
  int ready_fd;     /* write end of a pipe: one byte once the lock is held */
  double hold_for;  /* seconds to hold the lock before exiting; < 0: for ever */
} holder_orders;

/* In a child process: take the lock, tell the parent, hold it for a while
** (or until killed), then unlock, close and exit 0. */
static int child_hold_lock(const fixture *f, void *arg) {
  holder_orders *o = arg;
  sqlq_db *db = NULL;
  sqlq_lock *lock = NULL;
  int rc = sqlq_open(f->url, NULL, &db);
  if (rc == SQLQ_OK) rc = sqlq_lock_acquire(db, o->name, strlen(o->name), 10, &lock);
  if (rc != SQLQ_OK) return 10 + rc;
  if (write(o->ready_fd, "L", 1) != 1) return 2;
  while (o->hold_for < 0) pause();
  fx_sleep(o->hold_for);
  sqlq_unlock(lock);
  sqlq_close(db);
  return 0;
}

/* Start a child process that holds the lock name for hold_for seconds
** (< 0: until killed), and return once it holds it. */
static fx_child start_holder(const fixture *f, const char *name, double hold_for) {
  holder_orders o;
  int fds[2];
  char byte = 0;
  fx_child child;
  o.name = name;
  o.hold_for = hold_for;
  assert_int_equal(pipe(fds), 0);
  o.ready_fd = fds[1];
  child = fx_fork(child_hold_lock, f, &o);
  close(fds[1]);
  assert_int_equal(read(fds[0], &byte, 1), 1);
  close(fds[0]);
  return child;
}

/* A lock whose holder is killed with SIGKILL becomes free. */
static void lock_released_when_holder_killed(void **state) {
  fixture *f = *state;
  char name[128];
  sqlq_lock *lock = NULL;
  fx_child holder = start_holder(f, fx_name(f, "killed", name, sizeof name), -1);
  assert_status(f->db, try_once(f->db, name, strlen(name)), SQLQ_BUSY);
  assert_int_equal(kill(holder.pid, SIGKILL), 0);
  assert_int_equal(fx_reap(&holder), 128 + SIGKILL);
  assert_ok(f->db, sqlq_lock_acquire(f->db, name, strlen(name), 10, &lock));
  sqlq_unlock(lock);
}

/* A negative timeout waits until the holder (another process) unlocks.
** (The holder is a process, not a thread: valgrind 3.19 does not know that
** F_OFD_SETLKW blocks, and would stop every other thread while it waits.) */
static void lock_waits_for_ever_until_released(void **state) {
  fixture *f = *state;
  char name[128];
  sqlq_lock *lock = NULL;
  double t0 = fx_now();
  fx_child holder = start_holder(f, fx_name(f, "forever", name, sizeof name), 0.2);
  assert_ok(f->db, sqlq_lock_acquire(f->db, name, strlen(name), -1, &lock));
  assert_int_equal(fx_reap(&holder), 0);
  assert_true(fx_now() - t0 < 10);
  sqlq_unlock(lock);
}

/* A timeout so long that its deadline overflows 64 bits of nanoseconds
** (or microseconds) waits like any other: until the holder lets go. */
static void lock_waits_with_huge_timeouts(void **state) {
  fixture *f = *state;
  const double timeouts[] = {1e10, 1e300, DBL_MAX};
  char name[128];
  fx_name(f, "huge", name, sizeof name);
  for (size_t i = 0; i < sizeof timeouts / sizeof timeouts[0]; i++) {
    sqlq_lock *lock = NULL;
    fx_child holder = start_holder(f, name, 0.3);
    assert_ok(f->db, sqlq_lock_acquire(f->db, name, strlen(name), timeouts[i], &lock));
    assert_int_equal(fx_reap(&holder), 0);
    sqlq_unlock(lock);
  }
}

/* A held lock checks out as held, each time; so does each of two locks of
** one handle, and the one left after the other is unlocked.  A check's
** timeout must be a number above 0; a huge one is fine. */
static void lock_check_while_held(void **state) {
  fixture *f = *state;
  sqlq_lock *a = NULL, *b = NULL;
  char name_a[128], name_b[128];
  size_t len_a = strlen(fx_name(f, "check-a", name_a, sizeof name_a));
  size_t len_b = strlen(fx_name(f, "check-b", name_b, sizeof name_b));
  assert_ok(f->db, sqlq_lock_acquire(f->db, name_a, len_a, 0, &a));
  assert_ok(f->db, sqlq_lock_check(a, 10));
  assert_ok(f->db, sqlq_lock_check(a, 1e300));
  assert_ok(f->db, sqlq_lock_acquire(f->db, name_b, len_b, 0, &b));
  assert_ok(f->db, sqlq_lock_check(a, 10));
  assert_ok(f->db, sqlq_lock_check(b, 10));
  assert_status(f->db, sqlq_lock_check(a, 0), SQLQ_MISUSE);
  assert_status(f->db, sqlq_lock_check(a, -1), SQLQ_MISUSE);
  assert_status(f->db, sqlq_lock_check(a, NAN), SQLQ_MISUSE);
  assert_int_equal(sqlq_lock_check(NULL, 10), SQLQ_MISUSE);
  sqlq_unlock(b);
  assert_ok(f->db, sqlq_lock_check(a, 10));
  /* Still held for others too. */
  sqlq_db *other = fx_open(f);
  assert_status(other, try_once(other, name_a, len_a), SQLQ_BUSY);
  assert_ok(other, try_once(other, name_b, len_b));
  sqlq_close(other);
  sqlq_unlock(a);
}

/* In a child process: do nothing and exit. */
static int child_exit_at_once(const fixture *f, void *arg) {
  (void)f;
  (void)arg;
  return 0;
}

/* A forked child shares its parent's hold: the child's exit does not
** release the parent's lock. */
static void lock_kept_when_forked_child_exits(void **state) {
  fixture *f = *state;
  fx_need_fork(); /* before it makes anything of its own */
  sqlq_db *other = fx_open(f);
  sqlq_lock *held = NULL;
  char name[128];
  size_t len = strlen(fx_name(f, "shared", name, sizeof name));
  assert_ok(f->db, sqlq_lock_acquire(f->db, name, len, 0, &held));
  fx_child child = fx_fork(child_exit_at_once, f, NULL);
  assert_int_equal(fx_reap(&child), 0);
  assert_status(other, try_once(other, name, len), SQLQ_BUSY);
  sqlq_unlock(held);
  assert_ok(other, try_once(other, name, len));
  sqlq_close(other);
}

/* sqlq_unlock(NULL) is harmless, and closing a handle that holds a lock
** releases it. */
static void close_with_held_lock_releases_it(void **state) {
  fixture *f = *state;
  sqlq_db *db = fx_open(f);
  sqlq_lock *held = NULL;
  char name[128];
  size_t len = strlen(fx_name(f, "closed", name, sizeof name));
  sqlq_unlock(NULL);
  assert_ok(db, sqlq_lock_acquire(db, name, len, 0, &held));
  assert_status(f->db, try_once(f->db, name, len), SQLQ_BUSY);
  sqlq_close(db);
  assert_ok(f->db, try_once(f->db, name, len));
}

/* A transaction lock is held until the transaction commits, and a
** handle's lock call outside a transaction is refused. */
static void xact_lock_held_until_commit(void **state) {
  fixture *f = *state;
  sqlq_db *other = fx_open(f);
  char name[128];
  size_t len = strlen(fx_name(f, "xact", name, sizeof name));
  assert_status(f->db, sqlq_lock_xact(f->db, name, len, 0), SQLQ_MISUSE);
  assert_ok(f->db, sqlq_begin(f->db));
  assert_ok(f->db, sqlq_lock_xact(f->db, name, len, 0));
  assert_status(other, try_once(other, name, len), SQLQ_BUSY);
  fx_push(f->db, f, "in the locked transaction", 0);
  assert_ok(f->db, sqlq_commit(f->db));
  assert_ok(other, try_once(other, name, len));
  assert_int_equal(fx_count(f->db, f, 0), 1);
  /* Rolled back: released too, and the job is gone with it. */
  assert_ok(f->db, sqlq_begin(f->db));
  assert_ok(f->db, sqlq_lock_xact(f->db, name, len, -1));
  fx_push(f->db, f, "rolled back", 0);
  assert_status(other, try_once(other, name, len), SQLQ_BUSY);
  assert_ok(f->db, sqlq_rollback(f->db));
  assert_ok(other, try_once(other, name, len));
  assert_int_equal(fx_count(f->db, f, 0), 1);
  sqlq_close(other);
}

/* A transaction lock not had in time is SQLQ_BUSY, and the transaction
** goes on: what it wrote before and after commits. */
static void xact_lock_timeout_keeps_transaction(void **state) {
  fixture *f = *state;
  sqlq_db *other = fx_open(f);
  sqlq_lock *held = NULL;
  char name[128];
  size_t len = strlen(fx_name(f, "xact-busy", name, sizeof name));
  double t0;
  assert_ok(other, sqlq_lock_acquire(other, name, len, 0, &held));
  assert_ok(f->db, sqlq_begin(f->db));
  fx_push(f->db, f, "before", 0);
  assert_status(f->db, sqlq_lock_xact(f->db, name, len, 0), SQLQ_BUSY);
  t0 = fx_now();
  assert_status(f->db, sqlq_lock_xact(f->db, name, len, 0.2), SQLQ_BUSY);
  assert_true(fx_now() - t0 >= 0.19);
  fx_push(f->db, f, "after", 0);
  assert_ok(f->db, sqlq_commit(f->db));
  assert_int_equal(fx_count(f->db, f, 0), 2);
  sqlq_unlock(held);
  sqlq_close(other);
}

int run_lock_tests(void) {
  const struct CMUnitTest tests[] = {
    FX_TEST(lock_excludes_other_handle),
    FX_TEST(lock_waits_for_ever_until_released),
    FX_TEST(lock_waits_with_huge_timeouts),
    FX_TEST(lock_check_while_held),
    FX_TEST(lock_names_with_nul_bytes),
    FX_TEST(lock_names_of_64k),
    FX_TEST(lock_names_of_one_byte),
    FX_TEST(lock_names_differ_in_case),
    FX_TEST(lock_name_limits),
    FX_TEST(lock_released_when_holder_killed),
    FX_TEST(lock_kept_when_forked_child_exits),
    FX_TEST(close_with_held_lock_releases_it),
    FX_TEST(xact_lock_held_until_commit),
    FX_TEST(xact_lock_timeout_keeps_transaction),
  };
  return FX_RUN_GROUP("locks", tests);
}
