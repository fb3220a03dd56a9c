/*
** wait.c -- sqlq_wait(), sqlq_interrupt() and the wake-ups of this process.
**
** A waiting handle sleeps in its driver's wait method, which watches the
** handle's eventfd as well as the backend's own signal of other processes'
** commits.  Enqueues committed through any handle of this process write to
** the eventfd of every handle waiting on the same database, found in a
** process-wide list; sqlq_interrupt() writes to it too.  Between sleeps, one
** query tells whether a job is due and, if not, when the next one will be
** (a delayed job's run_at or a lease's end), which bounds the next sleep:
** there is no fixed poll interval.
*/
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sqlq_int.h"

/* How long a wait for a job lets a server that is away stay away before
** looking again (the driver paces its reconnections itself). */
#define UNAVAILABLE_PAUSE_NS 100000000LL

struct waiter {
  sqlq_db *db;
  const char *queue;  /* the caller's string, valid while it waits */
  int woken;          /* signalled since it last went to sleep */
  struct waiter *next;
};

static pthread_mutex_t waiters_lock = PTHREAD_MUTEX_INITIALIZER;
static struct waiter *waiters;

static void signal_fd(int fd) {
  uint64_t one = 1;
  ssize_t r;
  do r = write(fd, &one, sizeof one);
  while (r < 0 && errno == EINTR);
}

static void drain_fd(int fd) {
  uint64_t v;
  while (read(fd, &v, sizeof v) > 0) {}
}

void sqlq__wake_local(const char *ident, const char *queue, int n) {
  int left = n > 1 ? n : 1;
  pthread_mutex_lock(&waiters_lock);
  for (struct waiter *w = waiters; w && (queue == NULL || left > 0); w = w->next) {
    if (strcmp(w->db->ident, ident) != 0 || (queue && strcmp(w->queue, queue) != 0)) continue;
    /* A waiter already woken and not yet back to sleep takes no wake-up. */
    if (queue && w->woken) continue;
    w->woken = 1;
    signal_fd(w->db->wake_fd);
    left--;
  }
  pthread_mutex_unlock(&waiters_lock);
}

static int waiter_add(struct waiter *w) {
  pthread_mutex_lock(&waiters_lock);
  w->next = waiters;
  waiters = w;
  pthread_mutex_unlock(&waiters_lock);
  return SQLQ_OK;
}

static void waiter_remove(struct waiter *w) {
  pthread_mutex_lock(&waiters_lock);
  for (struct waiter **p = &waiters; *p; p = &(*p)->next)
    if (*p == w) {
      *p = w->next;
      break;
    }
  pthread_mutex_unlock(&waiters_lock);
}

SQLQ__API void sqlq_interrupt(sqlq_db *db) {
  if (db == NULL || db->wake_fd < 0) return;
  atomic_store(&db->interrupted, 1);
  signal_fd(db->wake_fd);
}

/* When the queue next needs a worker, from the database's point of view. */
struct due {
  const char *queue;
  int paused;
  int has_run, has_lease;
  int64_t run_in_us, lease_in_us;
};

static int due_tx(sqlq_db *db, void *arg) {
  struct due *u = arg;
  const sqlq_driver *d = db->drv_methods;
  sqlq__stmt *st;
  int rc = sqlq__prepare(db, SQLQ__SQL_NEXT_DUE, &st);
  if (rc != SQLQ_OK) return rc;
  d->bind_text(st, 1, u->queue);
  rc = d->step(db, st);
  if (rc == SQLQ__ROW) {
    u->paused = !d->column_is_null(st, 0) && d->column_int64(st, 0) != 0;
    u->has_run = !d->column_is_null(st, 1);
    u->run_in_us = u->has_run ? d->column_int64(st, 1) : 0;
    u->has_lease = !d->column_is_null(st, 2);
    u->lease_in_us = u->has_lease ? d->column_int64(st, 2) : 0;
    rc = SQLQ__DONE;
  }
  d->reset(st);
  return rc == SQLQ__DONE ? SQLQ_OK : rc;
}

static int64_t earlier(int64_t a, int64_t b) {
  if (a < 0) return b;
  if (b < 0) return a;
  return a < b ? a : b;
}

/* The monotonic time at which a job of u comes due, or -1 for never. */
static int64_t due_at_ns(const struct due *u, int64_t now) {
  if (u->paused) return -1;
  int64_t at = -1;
  if (u->has_run) at = earlier(at, now + (u->run_in_us > 0 ? u->run_in_us * 1000 : 0));
  if (u->has_lease) at = earlier(at, now + (u->lease_in_us > 0 ? u->lease_in_us * 1000 : 0));
  return at;
}

static int wait_loop(sqlq_db *db, struct waiter *w, int64_t deadline) {
  const sqlq_driver *d = db->drv_methods;
  const char *queue = w->queue;
  for (;;) {
    pthread_mutex_lock(&waiters_lock);
    w->woken = 0;
    pthread_mutex_unlock(&waiters_lock);
    drain_fd(db->wake_fd);
    if (atomic_exchange(&db->interrupted, 0))
      return sqlq__error(db, SQLQ_INTERRUPTED, "the wait was interrupted");
    struct due u = {.queue = queue};
    int rc = d->wait_prepare(db, queue);
    if (rc == SQLQ_OK) rc = sqlq__in_tx(db, SQLQ__TX_READ, due_tx, &u);
    int64_t now = sqlq__monotonic_ns();
    if (rc == SQLQ_UNAVAILABLE && (deadline < 0 || now < deadline)) {
      /* The server is away: wait for it to come back, as for a job. */
      rc = d->wait(db, queue, db->wake_fd, earlier(deadline, now + UNAVAILABLE_PAUSE_NS));
      if (rc != SQLQ_OK && rc != SQLQ_TIMEOUT) return rc;
      continue;
    }
    if (rc != SQLQ_OK) return rc;
    int64_t due = due_at_ns(&u, now);
    if (due >= 0 && due <= now) return SQLQ_OK;
    if (deadline >= 0 && now >= deadline)
      return sqlq__error(db, SQLQ_TIMEOUT, "no job came due on queue '%s' in time", queue);
    rc = d->wait(db, queue, db->wake_fd, earlier(deadline, due));
    if (rc != SQLQ_OK && rc != SQLQ_TIMEOUT) return rc;
  }
}

SQLQ__API int sqlq_wait(sqlq_db *db, const char *queue, double timeout) {
  if (db == NULL) return SQLQ_MISUSE;
  sqlq__clear_error(db);
  int rc = sqlq__check_queue(db, queue);
  if (rc != SQLQ_OK) return rc;
  if (db->drv_methods == NULL) return sqlq__error(db, SQLQ_MISUSE, "the database handle failed to open");
  if (db->in_user_tx) return sqlq__error(db, SQLQ_MISUSE, "cannot wait inside a transaction");
  if (timeout != timeout) return sqlq__error(db, SQLQ_MISUSE, "timeout is not a number");
  int64_t deadline = -1;
  if (timeout >= 0) deadline = sqlq__monotonic_ns() + (timeout > 3.2e9 ? (int64_t)3.2e18 : (int64_t)(timeout * 1e9));
  struct waiter w = {db, queue, 0, NULL};
  waiter_add(&w);
  rc = wait_loop(db, &w, deadline);
  waiter_remove(&w);
  if (rc == SQLQ_OK) sqlq__clear_error(db);
  return rc;
}
