/*
** sqlite_sidecar.c -- opening the sidecar file PATH-sqlq, which holds the
** named locks (sqlite_lock.c) and receives the wake-up byte (sqlite_wait.c).
**
** Every user of a database must be able to open its sidecar for writing,
** whoever created it and under whatever umask (a mail delivery agent runs
** commands with umask 077).  So the sidecar is created the way SQLite
** creates a database's -wal and -shm files (robust_open() and robustFchown()
** in its unix VFS): with the permission bits of the database file, and, when
** the process runs as root, with its owner and group.  Unlike SQLite, which
** creates the file and then changes its mode, sqlq makes the file complete
** under a temporary name beside it (PATH-sqlq.XXXXXX) and links it into
** place, so that no other process ever opens it with the umask's mode.  A
** process that dies between the two steps leaves that temporary file behind;
** nothing reads it.
**
** A symbolic link at the sidecar's path is never followed (O_NOFOLLOW) and
** anything but a regular file is refused: a link planted there cannot make
** sqlq, perhaps running as root, write to the file it points to.
*/
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sqlite_int.h"

/* Refuse fd unless it is a regular file; close it then. */
static int check_regular(sqlq_db *db, const char *sidecar, int fd, int *out) {
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    *out = fd;
    return SQLQ_OK;
  }
  close(fd);
  return sqlq__error(db, SQLQ_UNAVAILABLE, "the sidecar file '%s' is not a regular file: remove it",
                     sidecar);
}

/* Give the new file fd the mode of the database file st, and its owner and
** group when running as root.  Returns 0, or -1 with errno set. */
static int copy_ownership(int fd, const struct stat *st) {
  if (geteuid() == 0 && fchown(fd, st->st_uid, st->st_gid) < 0) return -1;
  return fchmod(fd, st->st_mode & 0777);
}

/* Create the sidecar as described at the top.  Sets *out to the new file's
** descriptor, or to -1 when another process created the sidecar first (the
** caller then opens that one). */
static int create(sqlq_db *db, const sqlite_conn *c, int *out) {
  struct stat st;
  if (stat(c->path, &st) < 0)
    return sqlq__error(db, SQLQ_UNAVAILABLE,
                       "cannot create the sidecar file '%s': database file: %s", c->sidecar,
                       strerror(errno));
  size_t n = strlen(c->sidecar);
  char *tmp = malloc(n + sizeof ".XXXXXX");
  if (tmp == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  memcpy(tmp, c->sidecar, n);
  memcpy(tmp + n, ".XXXXXX", sizeof ".XXXXXX");
  int fd = mkostemp(tmp, O_CLOEXEC);
  int e = errno;
  if (fd >= 0) {
    int linked = copy_ownership(fd, &st) == 0 && link(tmp, c->sidecar) == 0;
    e = errno;
    unlink(tmp);
    if (!linked) {
      close(fd);
      fd = -1;
    }
  }
  free(tmp);
  *out = fd;
  if (fd >= 0 || e == EEXIST) return SQLQ_OK;
  return sqlq__error(db, SQLQ_UNAVAILABLE, "cannot create the sidecar file '%s': %s", c->sidecar,
                     strerror(e));
}

int sqlq__sqlite_sidecar_open(sqlq_db *db, int *out) {
  const sqlite_conn *c = SQLITE_CONN(db);
  *out = -1;
  /* Each round either opens the file or sees it missing and creates it; a
  ** file removed again between the two makes another round. */
  for (int round = 0; round < 8; round++) {
    int fd = open(c->sidecar, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) return check_regular(db, c->sidecar, fd, out);
    if (errno == ELOOP)
      return sqlq__error(
        db, SQLQ_UNAVAILABLE,
        "the sidecar file '%s' is a symbolic link, which sqlq does not follow: remove it",
        c->sidecar);
    if (errno != ENOENT)
      return sqlq__error(db, SQLQ_UNAVAILABLE, "cannot open the sidecar file '%s': %s", c->sidecar,
                         strerror(errno));
    int rc = create(db, c, &fd);
    if (rc != SQLQ_OK || fd >= 0) {
      *out = fd;
      return rc;
    }
  }
  return sqlq__error(db, SQLQ_UNAVAILABLE,
                     "cannot open the sidecar file '%s': it keeps disappearing", c->sidecar);
}
