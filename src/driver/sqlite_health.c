/*
** sqlite_health.c -- the health method of the SQLite driver: the size of
** the database file and of its WAL, and the frames of the WAL that a
** checkpoint cannot copy back because a reader holds an old snapshot, with
** that reader's process id.  Nothing here runs a checkpoint, opens a
** transaction or waits for a lock of SQLite's.
**
** The WAL-index (the -shm file) starts with two copies of a 48-byte header
** whose mxFrame (offset 16) is the last valid frame of the WAL, and then
** the checkpoint information: nBackfill (offset 96, frames already copied
** back) and aReadMark[0..4] (offset 100).  A reader that took read mark i
** holds a shared fcntl lock on byte 123 + i of the -shm file for as long
** as its transaction lasts, and sees the WAL up to aReadMark[i] only (mark
** 0: none of it, the database file alone): a checkpoint can copy frames
** back no further than the least read mark in use (none at all while mark
** 0 is in use), and the WAL cannot start over while any reader uses it.
** See https://sqlite.org/walformat.html.
**
** The header is read through the connection's own mapping of the -shm
** file (sqlq__sqlite_shm_read); the locks, with their process ids, from
** Linux's /proc/locks, which needs no file descriptor on the -shm file
** (closing one would drop this process's locks on it).  Elsewhere the
** read marks in use are not known, and the item stays 0.
*/
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "sqlite_int.h"

#define SHM_HEADER 136     /* two headers and the checkpoint information */
#define SHM_HEADER_COPY 48 /* one copy of the header */
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

/* The processes holding the lock bytes of the read marks of the -shm file
** at path, from /proc/locks: pids[i] for mark i (0: none seen). */
static void read_mark_holders(const char *path, long pids[SHM_READ_MARK_N]) {
  char name[4096], line[256];
  struct stat sb;
  memset(pids, 0, SHM_READ_MARK_N * sizeof pids[0]);
  if (snprintf(name, sizeof name, "%s-shm", path) >= (int)sizeof name) return;
  if (stat(name, &sb) != 0) return;
  FILE *locks = fopen("/proc/locks", "re");
  if (locks == NULL) return;
  while (fgets(line, sizeof line, locks)) {
    /* "1: POSIX  ADVISORY  READ 4242 fe:00:1093 123 123"; a waiter's line
    ** has "->" after the number, and is no holder. */
    char kind[16], mode[16], rw[16];
    unsigned maj, min;
    unsigned long long ino, start, end;
    long pid;
    const char *p = strchr(line, ':');
    if (p == NULL || strstr(line, "->") != NULL) continue;
    if (sscanf(p + 1, "%15s %15s %15s %ld %x:%x:%llu %llu %llu", kind, mode, rw, &pid, &maj, &min,
               &ino, &start, &end) != 9)
      continue;
    if (ino != (unsigned long long)sb.st_ino || maj != major(sb.st_dev) ||
        min != minor(sb.st_dev) || pid <= 0)
      continue;
    for (int i = 0; i < SHM_READ_MARK_N; i++)
      if (start <= SHM_READ_LOCK0 + (unsigned)i && end >= SHM_READ_LOCK0 + (unsigned)i)
        pids[i] = pid;
  }
  fclose(locks);
}

/* What a reader keeps from the checkpoint: the frames past the least read
** mark in use (for mark 0, past nBackfill), the process that holds it (0:
** none) and the mark. */
struct starved {
  int64_t frames;
  long pid;
  int mark;
};

static void read_starved(sqlq_db *db, const char *path, struct starved *s) {
  unsigned char hdr[SHM_HEADER];
  long pids[SHM_READ_MARK_N];
  uint32_t mx, mark;
  int tries = 0;
  memset(s, 0, sizeof *s);
  /* A writer may be changing the header: its two copies agree once it is
  ** done. */
  do {
    if (!sqlq__sqlite_shm_read(db, hdr, sizeof hdr)) return;
  } while (memcmp(hdr, hdr + SHM_HEADER_COPY, SHM_HEADER_COPY) != 0 && ++tries < 10);
  read_mark_holders(path, pids);
  memcpy(&mx, hdr + SHM_MX_FRAME, sizeof mx);
  for (int i = 0; i < SHM_READ_MARK_N; i++) {
    /* A reader of mark 0 reads the database file alone: no frame may be
    ** copied into it past those already there (nBackfill). */
    memcpy(&mark, hdr + (i == 0 ? SHM_BACKFILL : SHM_READ_MARKS + 4 * i), sizeof mark);
    if (pids[i] == 0 || mark == READ_MARK_UNUSED || mark >= mx) continue;
    if ((int64_t)(mx - mark) > s->frames) {
      s->frames = (int64_t)(mx - mark);
      s->pid = pids[i];
      s->mark = i;
    }
  }
}

int sqlq__sqlite_health(sqlq_db *db, sqlq__health *h) {
  const char *path = SQLITE_CONN(db)->path;
  struct starved s = {0};
  char holder[32], detail[96];
  if (path != NULL) read_starved(db, path, &s);
  int rc = sqlq__health_add(db, h, "wal_bytes", path ? file_bytes(path, "-wal") : 0, "bytes",
                            WAL_BYTES_MAX, NULL, 0, NULL);
  snprintf(holder, sizeof holder, "pid %ld", s.pid);
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
