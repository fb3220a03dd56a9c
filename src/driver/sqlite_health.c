/*
** sqlite_health.c -- the health method of the SQLite driver: the size of
** the database file and of its WAL, and the frames of the WAL that a
** checkpoint cannot copy back because a reader holds an old snapshot, with
** that reader's process id.  Read from the files, without a transaction
** and without a checkpoint: nothing here waits for a lock.
**
** The WAL-index (the -shm file) starts with two copies of a 48-byte header
** whose mxFrame (offset 16) is the last valid frame of the WAL, and then
** the checkpoint information: nBackfill (offset 96, frames already copied
** back) and aReadMark[0..4] (offset 100).  A reader that took read mark i
** holds a shared fcntl lock on byte 123 + i of the -shm file for as long
** as its transaction lasts, and sees the WAL up to aReadMark[i] only (mark
** 0: none of it, the database file alone): a checkpoint can copy frames
** back no further than the least read mark in use (none at all while mark
** 0 is in use), and the WAL cannot start over while any reader uses it.  See
** https://sqlite.org/walformat.html.
*/
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sqlite_int.h"

#define SHM_HEADER 136     /* two headers and the checkpoint information */
#define SHM_MX_FRAME 16    /* mxFrame in the first header */
#define SHM_BACKFILL 96    /* nBackfill */
#define SHM_READ_MARKS 100 /* aReadMark[0] */
#define SHM_READ_LOCK0 123 /* the lock byte of read mark 0 */
#define SHM_READ_MARK_N 5  /* read marks */
#define READ_MARK_UNUSED 0xffffffffu

/* Default thresholds (docs/health.md). */
#define WAL_BYTES_MAX (256LL * 1024 * 1024)
#define STARVED_FRAMES_MAX 16384 /* 64 MiB of 4 KiB pages */
#define DATABASE_BYTES_MAX (1024LL * 1024 * 1024)

/* The size of the file at path + suffix, or 0 when it is missing. */
static int64_t file_bytes(const char *path, const char *suffix) {
  char name[4096];
  struct stat sb;
  if (snprintf(name, sizeof name, "%s%s", path, suffix) >= (int)sizeof name) return 0;
  return stat(name, &sb) == 0 ? (int64_t)sb.st_size : 0;
}

/* What a reader of another process keeps from the checkpoint: the frames
** past the least read mark in use (for mark 0, past nBackfill), the
** process that holds it (0: none) and the mark. */
struct starved {
  int64_t frames;
  pid_t pid;
  int mark;
};

static void read_starved(const char *path, struct starved *s) {
  char name[4096];
  unsigned char hdr[SHM_HEADER];
  uint32_t mx, mark;
  memset(s, 0, sizeof *s);
  if (snprintf(name, sizeof name, "%s-shm", path) >= (int)sizeof name) return;
  int fd = open(name, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return; /* no WAL-index: no reader in WAL mode */
  if (pread(fd, hdr, sizeof hdr, 0) != (ssize_t)sizeof hdr) {
    close(fd);
    return;
  }
  memcpy(&mx, hdr + SHM_MX_FRAME, sizeof mx);
  for (int i = 0; i < SHM_READ_MARK_N; i++) {
    /* A reader of mark 0 reads the database file alone: no frame may be
    ** copied into it past those already there (nBackfill). */
    memcpy(&mark, hdr + (i == 0 ? SHM_BACKFILL : SHM_READ_MARKS + 4 * i), sizeof mark);
    if (mark == READ_MARK_UNUSED || mark >= mx) continue;
    /* F_GETLK names the process of a lock that would conflict with an
    ** exclusive one: a reader's shared lock on the mark's byte.  Locks of
    ** this process conflict with none, and it holds no read transaction
    ** here. */
    struct flock fl = {
      .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = SHM_READ_LOCK0 + i, .l_len = 1};
    if (fcntl(fd, F_GETLK, &fl) != 0 || fl.l_type == F_UNLCK) continue;
    if ((int64_t)(mx - mark) > s->frames) {
      s->frames = (int64_t)(mx - mark);
      s->pid = fl.l_pid;
      s->mark = i;
    }
  }
  close(fd);
}

int sqlq__sqlite_health(sqlq_db *db, sqlq__health *h) {
  const char *path = SQLITE_CONN(db)->path;
  struct starved s = {0};
  char holder[32], detail[96];
  if (path != NULL) read_starved(path, &s);
  int rc = sqlq__health_add(db, h, "wal_bytes", path ? file_bytes(path, "-wal") : 0, "bytes",
                            WAL_BYTES_MAX, NULL, 0, NULL);
  snprintf(holder, sizeof holder, "pid %ld", (long)s.pid);
  snprintf(detail, sizeof detail, "a reader's snapshot (read mark %d) ends that many frames back",
           s.mark);
  if (rc == SQLQ_OK)
    rc =
      sqlq__health_add(db, h, "checkpoint_starved_frames", s.frames, "frames", STARVED_FRAMES_MAX,
                       s.pid > 0 ? holder : NULL, 0, s.frames > 0 ? detail : NULL);
  if (rc == SQLQ_OK)
    rc = sqlq__health_add(db, h, "database_bytes", path ? file_bytes(path, "") : 0, "bytes",
                          DATABASE_BYTES_MAX, NULL, 0, NULL);
  return rc;
}
