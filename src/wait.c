/*
** wait.c -- waiting without polling: sqlq__wait_on() under sqlq_wait() and
** sqlq_ring_wait(), sqlq_interrupt() and the wake-ups of this process.
**
** A waiting handle sleeps in its driver's wait method, which watches the
** handle's eventfd as well as the backend's own signal of other processes'
** commits.  Commits through any handle of this process that owe a channel
** (a queue, a ring) a wake-up write to the eventfd of handles waiting on
** that channel of the same database, found in a process-wide list;
** sqlq_interrupt() writes to it too.  Between sleeps, one check tells
** whether what is waited for is there and, if not, when it will be (a
** delayed job's run_at or a lease's end), which bounds the next sleep:
** there is no fixed poll interval.
*/
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sqlq_int.h"

/* How long a wait lets a server that is away stay away before looking
** again (the driver paces its reconnections itself). */
#define UNAVAILABLE_PAUSE_NS 100000000LL

struct waiter {
  sqlq_db *db;
  const char *channel; /* the caller's string, valid while it waits */
  int woken;           /* signalled since it last went to sleep */
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

void sqlq__wake_local(const char *ident, const char *channel, int n) {
  int every = channel == NULL || n == SQLQ__WAKE_ALL;
  int left = n > 1 ? n : 1;
  pthread_mutex_lock(&waiters_lock);
  for (struct waiter *w = waiters; w && (every || left > 0); w = w->next) {
    if (strcmp(w->db->ident, ident) != 0 || (channel && strcmp(w->channel, channel) != 0)) continue;
    /* A waiter already woken and not yet back to sleep takes no wake-up. */
    if (channel && w->woken) continue;
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

static int due_row(sqlq_db *db, sqlq__stmt *st, void *arg) {
  int64_t *due_in_us = arg;
  const sqlq__driver *d = db->driver;
  /* A paused queue has no timer: sqlq_resume() wakes it. */
  int paused = !d->column_is_null(st, 0) && d->column_int64(st, 0) != 0;
  for (int col = 1; col <= 2 && !paused; col++) {
    if (d->column_is_null(st, col)) continue;
    int64_t in = d->column_int64(st, col);
    if (in < 0) in = 0;
    if (*due_in_us < 0 || in < *due_in_us) *due_in_us = in;
  }
  return SQLQ__DONE;
}

/* When the queue next needs a worker, from the database's point of view. */
static int job_due(sqlq_db *db, void *arg, int64_t *due_in_us) {
  *due_in_us = -1;
  int rc = sqlq__limits_schema(db);
  if (rc != SQLQ_OK) return rc;
  const char *queue = arg;
  sqlq__query q = {.sql = sqlq__limits_sql(db, SQLQ__SQL_NEXT_DUE_UNLIMITED, SQLQ__SQL_NEXT_DUE,
                                           SQLQ__SQL_NEXT_DUE_RATES, SQLQ__SQL_NEXT_DUE_GROUPS),
                   .row = due_row,
                   .arg = due_in_us};
  const char *cursor;
  if (!sqlq__cursor_get(db, queue, &cursor)) return sqlq__run(db, &q, SQLQ__TEXT(queue));
  /* Its scans start where the queue's claims left off (cursor.c). */
  q.sql = SQLQ__SQL_NEXT_DUE_LANES;
  return sqlq__run(db, &q, SQLQ__TEXT(queue), SQLQ__TEXT(cursor));
}

/* The longest a wait sleeps before it looks again, in microseconds (about
** a century, like sqlq__deadline()'s bound): a run_at or lease_until near
** INT64_MAX, which plain SQL can store, overflowed the sleep's deadline. */
#define MAX_DUE_IN_US 3200000000000000LL

static int64_t earlier(int64_t a, int64_t b) {
  if (a < 0) return b;
  if (b < 0) return a;
  return a < b ? a : b;
}

/* The check of a wait, as a transaction's work. */
struct check {
  sqlq__wait_check fn;
  void *arg;
  int64_t due_in_us;
};

static int check_tx(sqlq_db *db, void *arg) {
  struct check *c = arg;
  return c->fn(db, c->arg, &c->due_in_us);
}

static int wait_loop(sqlq_db *db, struct waiter *w, struct check *c, int64_t deadline) {
  const sqlq__driver *d = db->driver;
  for (;;) {
    pthread_mutex_lock(&waiters_lock);
    w->woken = 0;
    pthread_mutex_unlock(&waiters_lock);
    drain_fd(db->wake_fd);
    if (atomic_exchange(&db->interrupted, 0))
      return sqlq__error(db, SQLQ_INTERRUPTED, "the wait was interrupted");
    /* A handle that waits long still writes its counts in time. */
    sqlq__counts_flush_due(db);
    int rc = d->wait_prepare(db, w->channel);
    if (rc == SQLQ_OK) rc = sqlq__in_tx(db, SQLQ__TX_READ, check_tx, c);
    int64_t now = sqlq__monotonic_ns();
    if (rc == SQLQ_UNAVAILABLE && (deadline < 0 || now < deadline)) {
      /* The server is away: wait for it to come back, as for a change. */
      rc = d->wait(db, w->channel, db->wake_fd, earlier(deadline, now + UNAVAILABLE_PAUSE_NS));
      if (rc != SQLQ_OK && rc != SQLQ_TIMEOUT) return rc;
      continue;
    }
    if (rc != SQLQ_OK) return rc;
    if (c->due_in_us == 0) return SQLQ_OK;
    if (deadline >= 0 && now >= deadline) return SQLQ_TIMEOUT;
    int64_t in_us = c->due_in_us < MAX_DUE_IN_US ? c->due_in_us : MAX_DUE_IN_US;
    int64_t due = c->due_in_us < 0 ? -1 : now + in_us * 1000;
    rc = d->wait(db, w->channel, db->wake_fd,
                 earlier(earlier(deadline, due), sqlq__counts_due_ns(db)));
    if (rc != SQLQ_OK && rc != SQLQ_TIMEOUT) return rc;
  }
}

int sqlq__deadline(sqlq_db *db, double timeout, int64_t *deadline_ns) {
  if (timeout != timeout) return sqlq__error(db, SQLQ_MISUSE, "timeout is not a number");
  *deadline_ns = -1;
  if (timeout >= 0) *deadline_ns = sqlq__monotonic_after(timeout);
  return SQLQ_OK;
}

int sqlq__wait_on(sqlq_db *db, const char *channel, sqlq__wait_check check, void *arg,
                  int64_t deadline_ns) {
  if (db->in_user_tx) return sqlq__error(db, SQLQ_MISUSE, "cannot wait inside a transaction");
  struct waiter w = {db, channel, 0, NULL};
  struct check c = {check, arg, -1};
  waiter_add(&w);
  int rc = wait_loop(db, &w, &c, deadline_ns);
  waiter_remove(&w);
  if (rc == SQLQ_OK) sqlq__clear_error(db);
  return rc;
}

SQLQ__API int sqlq_wait(sqlq_db *db, const char *queue, double timeout) {
  int64_t deadline = -1;
  int rc = sqlq__enter(db);
  if (rc == SQLQ_OK) rc = sqlq__check_queue(db, queue);
  if (rc == SQLQ_OK) rc = sqlq__deadline(db, timeout, &deadline);
  if (rc == SQLQ_OK) rc = sqlq__wait_on(db, queue, job_due, (void *)queue, deadline);
  if (rc == SQLQ_TIMEOUT)
    return sqlq__error(db, SQLQ_TIMEOUT, "no job came due on queue '%s' in time", queue);
  return rc;
}
