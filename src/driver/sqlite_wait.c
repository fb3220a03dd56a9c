/*
** sqlite_wait.c -- wake-ups for SQLite without polling.
**
** SQLite has no notification channel, so other processes' commits are seen
** through the file system: inotify watches the database's directory, and
** a change to the database file, its WAL, its rollback journal or the
** sidecar file (PATH-sqlq) is a hint.  PRAGMA data_version, which changes
** only when another connection committed, confirms it.
**
** One race needs care: a writer in WAL mode writes its commit frame to the
** WAL (the last inotify event) a moment before it publishes the commit in
** the shared-memory index, which makes no inotify event.  The gap is its
** fsync with synchronous=FULL (a slow disk's milliseconds) or as long as
** the scheduler keeps the writer off a busy CPU.  A hint whose
** data_version has not changed yet is therefore checked again 1 ms, 10 ms,
** 100 ms and 1 s later (RECHECKS), a PRAGMA each: a longer gap waits
** for the next event or timer.  sqlq's own producers also write one byte
** to the sidecar after each commit that makes jobs ready (notify below),
** an event that always follows the published commit.
*/
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "sqlite_int.h"

/* How many times a hint is checked again; the first check waits
** FIRST_RECHECK_NS, each later one ten times as long. */
#define RECHECKS 4
#define FIRST_RECHECK_NS 1000000

#define WATCH_MASK (IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE)

/* Does an event about file `name` concern this database? */
static int relevant(const sqlite_conn *c, const char *name) {
  size_t bl = strlen(c->base);
  if (strncmp(name, c->base, bl) != 0) return 0;
  const char *suffix = name + bl;
  return *suffix == '\0' || strcmp(suffix, "-wal") == 0 || strcmp(suffix, "-journal") == 0 ||
         strcmp(suffix, "-sqlq") == 0;
}

/* Read the pending events; return 1 if one concerns the database. */
static int read_events(const sqlite_conn *c) {
  char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
  int hit = 0;
  for (;;) {
    ssize_t n = read(c->inotify_fd, buf, sizeof buf);
    if (n <= 0) return hit;
    for (char *p = buf; p < buf + n;) {
      struct inotify_event *ev = (struct inotify_event *)p;
      if (ev->mask & IN_Q_OVERFLOW)
        hit = 1;
      else if (ev->len && relevant(c, ev->name))
        hit = 1;
      p += sizeof *ev + ev->len;
    }
  }
}

int sqlq__sqlite_wait_prepare(sqlq_db *db, const char *queue) {
  (void)queue;
  sqlite_conn *c = SQLITE_CONN(db);
  if (c->path == NULL) return SQLQ_OK; /* in memory: only this handle writes */
  if (c->inotify_fd < 0) {
    c->inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (c->inotify_fd < 0)
      return sqlq__error(db, SQLQ_ERROR, "cannot watch for commits: inotify_init1: %s",
                         strerror(errno));
    if (inotify_add_watch(c->inotify_fd, c->dir, WATCH_MASK) < 0) {
      int e = errno;
      close(c->inotify_fd);
      c->inotify_fd = -1;
      return sqlq__error(db, SQLQ_ERROR, "cannot watch directory '%s' for commits: %s", c->dir,
                         strerror(e));
    }
  }
  read_events(c);
  c->data_version = sqlq__sqlite_data_version(db);
  return SQLQ_OK;
}

static int changed(sqlq_db *db) {
  return sqlq__sqlite_data_version(db) != SQLITE_CONN(db)->data_version;
}

int sqlq__sqlite_wait(sqlq_db *db, const char *queue, int wake_fd, int64_t deadline_ns) {
  (void)queue;
  sqlite_conn *c = SQLITE_CONN(db);
  struct pollfd fds[2] = {{wake_fd, POLLIN, 0}, {c->inotify_fd, POLLIN, 0}};
  int nfds = c->inotify_fd >= 0 ? 2 : 1;
  int64_t recheck_at = -1; /* a hint waiting for its commit to be published */
  int64_t recheck_ns = 0;  /* how long the next check waits */
  int rechecks = 0;        /* checks made of the latest hint */
  for (;;) {
    int64_t until = deadline_ns;
    if (recheck_at >= 0 && (until < 0 || recheck_at < until)) until = recheck_at;
    int r = poll(fds, (nfds_t)nfds, sqlq__poll_ms(until));
    if (r < 0 && errno != EINTR)
      return sqlq__error(db, SQLQ_ERROR, "cannot wait: poll: %s", strerror(errno));
    if (r > 0 && (fds[0].revents & POLLIN)) return SQLQ_OK;
    if (r > 0 && nfds == 2 && (fds[1].revents & POLLIN) && read_events(c)) {
      if (changed(db)) return SQLQ_OK;
      rechecks = 0;
      recheck_ns = FIRST_RECHECK_NS;
      recheck_at = sqlq__monotonic_ns() + recheck_ns;
      continue;
    }
    int64_t now = sqlq__monotonic_ns();
    if (recheck_at >= 0 && now >= recheck_at) {
      if (changed(db)) return SQLQ_OK;
      recheck_ns *= 10;
      recheck_at = ++rechecks < RECHECKS ? now + recheck_ns : -1;
    }
    if (deadline_ns >= 0 && now >= deadline_ns) return SQLQ_TIMEOUT;
  }
}

int sqlq__sqlite_notify(sqlq_db *db, const char *queue, int n) {
  (void)queue;
  (void)n;
  sqlite_conn *c = SQLITE_CONN(db);
  if (c->sidecar == NULL) return SQLQ_OK;
  if (c->sidecar_fd < 0) {
    sqlq__saved_error saved;
    sqlq__save_error(db, &saved);
    if (sqlq__sqlite_sidecar_open(db, &c->sidecar_fd) != SQLQ_OK) {
      sqlq__restore_error(db, &saved); /* waiters still see the WAL's events */
      return SQLQ_OK;
    }
  }
  ssize_t w = pwrite(c->sidecar_fd, "w", 1, 0);
  (void)w;
  return SQLQ_OK;
}

void sqlq__sqlite_wait_close(sqlite_conn *c) {
  if (c->inotify_fd >= 0) close(c->inotify_fd);
  if (c->sidecar_fd >= 0) close(c->sidecar_fd);
  c->inotify_fd = c->sidecar_fd = -1;
}
