/*
** sqlite_lock.c -- named locks for SQLite: open-file-description locks
** (fcntl F_OFD_SETLK) on one byte of the sidecar file PATH-sqlq, at an
** offset given by the name's 64-bit key.
**
** The kernel drops such a lock when the last descriptor of its open file
** description closes, so a lock dies with its holder however it dies.
** Each lock opens the file anew: two handles, even in one process, hold
** different descriptions and exclude each other.  The descriptor is
** close-on-exec, so programs started with exec() never inherit a lock; a
** child made by fork() shares it until it exits or closes it.
**
** A wait for ever blocks in the kernel (F_OFD_SETLKW) and is handed the lock
** the moment it is free.  A wait with a timeout retries F_OFD_SETLK with
** sleeps growing from 0.5 ms to 10 ms.
**
** Nothing can take a lock away from a descriptor that stays open, but the
** file can be removed or replaced under it (by hand, by a clean-up job):
** then the next holder locks another file, and both run.  So a lock is
** held only while the sidecar's path still names the file locked, which
** the check compares (device and inode).
**
** Listing (sqlq_locks): F_OFD_GETLK over the sidecar's bytes from 1 on
** finds a lock held through another open file description, so a
** description of its own, made for the listing, finds them all.  The
** kernel answers with any one lock of the range asked about, not the
** first, so the listing asks again below and above each lock found.  It
** gives the byte (sqlq_lock_key()); the kernel does not say who holds an
** open-file-description lock.
*/
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sqlite_int.h"

struct sqlq__lockstate {
  int fd;
};

static int try_lock(int fd, off_t offset, int wait) {
  struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = offset, .l_len = 1};
  int r;
  do r = fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &fl);
  while (r < 0 && errno == EINTR);
  return r;
}

int64_t sqlq__sqlite_lock_key(uint64_t key) {
  return (int64_t)((key >> 2) | 1); /* 1 .. 2^62-1: byte 0 carries wake-ups */
}

int sqlq__sqlite_lock(sqlq_db *db, uint64_t key, const void *name, size_t name_len,
                      double timeout_s, sqlq__lockstate **out) {
  (void)name;
  (void)name_len;
  sqlite_conn *c = SQLITE_CONN(db);
  if (c->sidecar == NULL)
    return sqlq__error(db, SQLQ_MISUSE, "named locks need a database file, not sqlite::memory:");
  int fd;
  int rc = sqlq__sqlite_sidecar_open(db, &fd);
  if (rc != SQLQ_OK) return rc;
  off_t offset = (off_t)sqlq__sqlite_lock_key(key);
  int64_t deadline = timeout_s > 0 ? sqlq__monotonic_after(timeout_s) : 0;
  long sleep_us = 500;
  int r;
  while ((r = try_lock(fd, offset, timeout_s < 0)) < 0 && (errno == EAGAIN || errno == EACCES)) {
    int64_t left = deadline - sqlq__monotonic_ns();
    if (timeout_s == 0 || left <= 0) {
      close(fd);
      return sqlq__error(db, SQLQ_BUSY, "the lock is held by another holder");
    }
    long us = left / 1000 < sleep_us ? (long)(left / 1000) + 1 : sleep_us;
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
    if (sleep_us < 10000) sleep_us *= 2;
  }
  if (r < 0) {
    int e = errno;
    close(fd);
    return sqlq__error(db, SQLQ_ERROR, "cannot lock '%s': %s", c->sidecar, strerror(e));
  }
  sqlq__lockstate *ls = malloc(sizeof *ls);
  if (ls == NULL) {
    close(fd);
    return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  }
  ls->fd = fd;
  *out = ls;
  return SQLQ_OK;
}

int sqlq__sqlite_lock_check(sqlq_db *db, sqlq__lockstate *ls, int64_t deadline_ns) {
  (void)deadline_ns; /* two system calls on local files */
  const char *path = SQLITE_CONN(db)->sidecar;
  struct stat held, named;
  if (fstat(ls->fd, &held) != 0)
    return sqlq__error(db, SQLQ_LOCK_LOST, "cannot look at the lock file: %s", strerror(errno));
  if (stat(path, &named) != 0)
    return sqlq__error(db, SQLQ_LOCK_LOST, "the lock file '%s' is gone: %s", path, strerror(errno));
  if (named.st_dev != held.st_dev || named.st_ino != held.st_ino)
    return sqlq__error(db, SQLQ_LOCK_LOST, "the lock file '%s' was replaced by another file", path);
  return SQLQ_OK;
}

void sqlq__sqlite_unlock(sqlq_db *db, sqlq__lockstate *ls) {
  (void)db;
  close(ls->fd); /* drops the lock unless a forked child still shares it */
  free(ls);
}

/* A range of bytes still to look at (hi -1: to the end), or, with emit
** set, a lock found at lo to add once the bytes below it are done. */
struct pending {
  off_t lo, hi;
  int emit;
};

/* Add the locks held on the bytes from 1 on of fd's file to l, in the
** order of their bytes, until l is full: a stack of the ranges left, the
** lowest on top (no recursion: a listing may run on a small stack). */
static int list_bytes(sqlq_db *db, int fd, sqlq__lock_list *l) {
  struct pending *stack = NULL;
  size_t n = 0, cap = 0;
  int rc = sqlq__grow(db, (void **)&stack, &cap, n, sizeof *stack);
  if (rc == SQLQ_OK) stack[n++] = (struct pending){1, -1, 0};
  while (rc == SQLQ_OK && n > 0 && l->n < l->limit) {
    struct pending p = stack[--n];
    if (p.emit) {
      rc = sqlq__lock_list_add(db, l, NULL, 0, (int64_t)p.lo, 0, NULL, 0, 0, 0);
      continue;
    }
    if (p.hi >= 0 && p.hi < p.lo) continue;
    struct flock fl = {.l_type = F_WRLCK,
                       .l_whence = SEEK_SET,
                       .l_start = p.lo,
                       .l_len = p.hi < 0 ? 0 : p.hi - p.lo + 1};
    if (fcntl(fd, F_OFD_GETLK, &fl) != 0) {
      rc = sqlq__error(db, SQLQ_ERROR, "cannot list the locks of '%s': %s",
                       SQLITE_CONN(db)->sidecar, strerror(errno));
      break;
    }
    if (fl.l_type == F_UNLCK) continue;
    /* A lock is one byte; a longer range (not sqlq's) counts as its first. */
    off_t first = fl.l_start, last = fl.l_len == 0 ? -1 : fl.l_start + fl.l_len - 1;
    for (int k = 0; k < 3 && rc == SQLQ_OK; k++)
      rc = sqlq__grow(db, (void **)&stack, &cap, n + k, sizeof *stack);
    if (rc != SQLQ_OK) break;
    if (last >= 0) stack[n++] = (struct pending){last + 1, p.hi, 0};
    stack[n++] = (struct pending){first, first, 1};
    stack[n++] = (struct pending){p.lo, first - 1, 0};
  }
  free(stack);
  return rc;
}

int sqlq__sqlite_lock_list(sqlq_db *db, sqlq__lock_list *l) {
  const char *path = SQLITE_CONN(db)->sidecar;
  if (path == NULL) return SQLQ_OK; /* sqlite::memory: has no locks */
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) return SQLQ_OK; /* no lock was ever taken */
  if (fd < 0)
    return sqlq__error(db, SQLQ_ERROR, "cannot open the lock file '%s': %s", path, strerror(errno));
  struct stat sb;
  int rc = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode)
             ? list_bytes(db, fd, l)
             : sqlq__error(db, SQLQ_ERROR, "the lock file '%s' is not a regular file", path);
  close(fd);
  return rc;
}
