/*
** test_late_commit.c -- a plain-SQL SQLite writer whose commit is published
** late still wakes a waiting worker.
**
** In WAL mode a writer appends its commit frame to the WAL (the last event
** inotify sees) and publishes the commit in the shared-memory index only
** after that: after its fsync with synchronous=FULL, or after the scheduler
** lets it run again on a busy machine.  The waiter's hint comes with the
** write; until the publish, PRAGMA data_version has not moved.  Here a
** writer process (the plain sqlite3 API, as Python's sqlite3 or the shell
** would) makes that gap long on purpose: its WAL writes go through a
** pwrite64() (or pwrite()) override, installed with SQLite's own xSetSystemCall, that
** sleeps after each write to the WAL.  The writer keeps its connection open
** afterwards, so that no later file event (a checkpoint at close) wakes
** the waiter by chance: only the waiter's own re-checks of the hint can.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "sqlq.h"

/* How long the writer sleeps after each write to the WAL, in ms: longer
** than the waiter's first re-checks (1 ms and 10 ms after the hint). */
#define LATE_MS 300

typedef ssize_t (*pwrite_fn)(int, const void *, size_t, off_t);
static pwrite_fn real_pwrite;

/* Whether fd is open on a file whose name ends in "-wal". */
static int is_wal(int fd) {
  char link[64], target[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, target, sizeof target - 1);
  if (n < 4) return 0;
  target[n] = '\0';
  return strcmp(target + n - 4, "-wal") == 0;
}

static ssize_t late_pwrite(int fd, const void *buf, size_t len, off_t off) {
  ssize_t r = real_pwrite(fd, buf, len, off);
  if (is_wal(fd)) {
    struct timespec ts = {0, LATE_MS * 1000000L};
    nanosleep(&ts, NULL);
  }
  return r;
}

/* The writer process: insert one job with plain SQL, its WAL writes late,
** then keep the connection open until killed.  Exits 1 on an error. */
static void writer(const char *path) {
  sqlite3_vfs *vfs = sqlite3_vfs_find(NULL);
  const char *name = "pwrite64"; /* what Debian's build calls; else pwrite */
  if ((real_pwrite = (pwrite_fn)vfs->xGetSystemCall(vfs, name)) == NULL)
    real_pwrite = (pwrite_fn)vfs->xGetSystemCall(vfs, name = "pwrite");
  if (real_pwrite == NULL ||
      vfs->xSetSystemCall(vfs, name, (sqlite3_syscall_ptr)late_pwrite) != SQLITE_OK)
    _exit(1);
  sqlite3 *conn = NULL;
  if (sqlite3_open(path, &conn) != SQLITE_OK) _exit(1);
  sqlite3_busy_timeout(conn, 10000);
  if (sqlite3_exec(conn, "PRAGMA synchronous=FULL", NULL, NULL, NULL) != SQLITE_OK) _exit(1);
  /* Let the parent enter its wait first: if it has not, it finds the job
  ** due at once and the test passes without testing, never fails. */
  struct timespec ts = {0, 500 * 1000000L};
  nanosleep(&ts, NULL);
  if (sqlite3_exec(conn, "INSERT INTO sqlq_jobs (queue, payload) VALUES ('late', 'x')", NULL, NULL,
                   NULL) != SQLITE_OK)
    _exit(1);
  pause();
  _exit(0);
}

static sqlq_db *alarm_db;

static void on_alarm(int sig) {
  (void)sig;
  sqlq_interrupt(alarm_db);
}

static void late_commit_wakes_waiter(void **state) {
  (void)state;
  char dir[] = "/tmp/sqlq-late-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[64], url[80];
  snprintf(path, sizeof path, "%s/q.db", dir);
  snprintf(url, sizeof url, "sqlite:%s", path);
  sqlq_db *db = NULL;
  assert_int_equal(sqlq_open(url, NULL, &db), SQLQ_OK);
  assert_int_equal(sqlq_init(db, NULL), SQLQ_OK);
  /* Nothing is due: a wait returns only when woken or at its timeout. */
  assert_int_equal(sqlq_wait(db, "late", 0.01), SQLQ_TIMEOUT);

  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) writer(path);
  /* The wait has no timeout (one would end it with SQLQ_OK, the job being
  ** due by then): woken, it ends with SQLQ_OK; a missed commit leaves it
  ** waiting until the alarm, far longer than the writer's delays,
  ** interrupts it (SQLQ_INTERRUPTED). */
  alarm_db = db;
  signal(SIGALRM, on_alarm);
  alarm(30);
  int rc = sqlq_wait(db, "late", -1);
  alarm(0);
  int status = 0;
  int exited = waitpid(pid, &status, WNOHANG);
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  assert_int_equal(exited, 0); /* the writer did not fail */
  assert_int_equal(rc, SQLQ_OK);

  sqlq_job *jobs = NULL;
  size_t n = 0;
  assert_int_equal(sqlq_claim(db, "late", 1, NULL, &jobs, &n), SQLQ_OK);
  assert_int_equal(n, 1);
  sqlq_jobs_free(jobs, n);
  sqlq_close(db);
  char cmd[96];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  assert_int_equal(system(cmd), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(late_commit_wakes_waiter),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
