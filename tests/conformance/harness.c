/*
** harness.c -- shared fixtures and helpers of the conformance suite.
*/
#include "harness.h"

#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A counter that makes queue names unique within this process. */
static unsigned fx_serial;

/* The URL under test, or NULL when each test makes its own SQLite file. */
static const char *fx_env_url(void) {
  const char *url = getenv("SQLQ_TEST_URL");
  return (url != NULL && url[0] != '\0') ? url : NULL;
}

const char *fx_backend_label(void) {
  const char *url = fx_env_url();
  static char label[32];
  size_t n;
  if (url == NULL) return "sqlite (temporary files)";
  n = strcspn(url, ":");
  if (n >= sizeof label) n = sizeof label - 1;
  memcpy(label, url, n);
  label[n] = '\0';
  return label;
}

int fx_run_group(const char *group, const struct CMUnitTest *tests, size_t n) {
  char name[128];
  snprintf(name, sizeof name, "%s: %s", group, fx_backend_label());
  printf("[==========] group %s\n", name);
  fflush(stdout);
  return _cmocka_run_group_tests(name, tests, n, NULL, NULL);
}

int fx_run_group_from(const char *group, int version, const struct CMUnitTest *tests, size_t n) {
  const char *url = fx_env_url();
  sqlq_db *db = NULL;
  int have = version;
  /* A failure to open or init is left to the tests to report. */
  if (url != NULL && sqlq_open(url, NULL, &db) == SQLQ_OK && sqlq_init(db, &have) != SQLQ_OK)
    have = version;
  sqlq_close(db);
  if (have >= version) return fx_run_group(group, tests, n);
  printf("[  SKIPPED ] group %s: %s: the backend's dialect stops at schema version %d, "
         "these tests need %d\n",
         group, fx_backend_label(), have, version);
  return 0;
}

void fx_check_status(const sqlq_db *db, int status, int expected, const char *call,
                     const char *file, int line) {
  if (status == expected) return;
  print_error("%s returned %s, expected %s (errmsg: %s)\n", call, sqlq_status_name(status),
              sqlq_status_name(expected), sqlq_errmsg(db));
  _fail(file, line);
}

/* Remove one entry of a temporary directory tree (callback of nftw). */
static int fx_remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st;
  (void)flag;
  (void)ftw;
  return remove(path);
}

/* Make the private temporary directory and SQLite URL of one test. */
static int fx_make_sqlite_url(fixture *f) {
  const char *tmp = getenv("TMPDIR");
  snprintf(f->dir, sizeof f->dir, "%s/sqlq-test-XXXXXX",
           (tmp != NULL && tmp[0] != '\0') ? tmp : "/tmp");
  if (mkdtemp(f->dir) == NULL) {
    print_error("mkdtemp(%s): %s\n", f->dir, strerror(errno));
    f->dir[0] = '\0';
    return -1;
  }
  snprintf(f->url, sizeof f->url, "sqlite:%s/test.db", f->dir);
  return 0;
}

int fx_setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  const char *url = fx_env_url();
  int version = 0, rc;
  if (f == NULL) return -1;
  *state = f;
  if (url != NULL) {
    snprintf(f->url, sizeof f->url, "%s", url);
  } else if (fx_make_sqlite_url(f) != 0) {
    return -1;
  }
  snprintf(f->queue, sizeof f->queue, "t%ld_%u_%ld", (long)getpid(), ++fx_serial,
           (long)(time(NULL) % 1000000));
  rc = sqlq_open(f->url, NULL, &f->db);
  if (rc == SQLQ_OK) rc = sqlq_init(f->db, &version);
  if (rc != SQLQ_OK) {
    print_error("fixture: cannot open and init %s: %s: %s\n", f->url, sqlq_status_name(rc),
                sqlq_errmsg(f->db));
    return -1;
  }
  /* A leftover of an earlier run on a shared database must not leak in. */
  sqlq_purge(f->db, f->queue, NULL);
  return 0;
}

int fx_teardown(void **state) {
  fixture *f = *state;
  if (f == NULL) return 0;
  if (f->db != NULL) {
    sqlq_purge(f->db, f->queue, NULL);
    sqlq_resume(f->db, f->queue);
    sqlq_close(f->db);
  }
  if (f->dir[0] != '\0') nftw(f->dir, fx_remove_entry, 8, FTW_DEPTH | FTW_PHYS);
  free(f);
  *state = NULL;
  return 0;
}

int fx_open_with(const fixture *f, const char *url_options, const sqlq_options *opts,
                 sqlq_db **out) {
  char url[sizeof f->url + 256];
  if (url_options == NULL || url_options[0] == '\0') {
    snprintf(url, sizeof url, "%s", f->url);
  } else {
    snprintf(url, sizeof url, "%s%c%s", f->url, strchr(f->url, '?') != NULL ? '&' : '?',
             url_options);
  }
  return sqlq_open(url, opts, out);
}

sqlq_db *fx_open(const fixture *f) {
  sqlq_db *db = NULL;
  int rc = sqlq_open(f->url, NULL, &db);
  if (rc != SQLQ_OK) {
    print_error("fx_open(%s): %s: %s\n", f->url, sqlq_status_name(rc), sqlq_errmsg(db));
    sqlq_close(db);
    fail();
  }
  return db;
}

int64_t fx_push_spec(sqlq_db *db, const fixture *f, const sqlq_job_spec *spec) {
  int64_t id = 0;
  int dup = -1;
  assert_ok(db, sqlq_enqueue(db, f->queue, spec, &id, &dup));
  assert_true(id > 0);
  return id;
}

int64_t fx_push(sqlq_db *db, const fixture *f, const char *payload, int priority) {
  sqlq_job_spec spec = {0};
  spec.payload = payload;
  spec.payload_len = payload != NULL ? strlen(payload) : 0;
  spec.priority = priority;
  return fx_push_spec(db, f, &spec);
}

int fx_claim_ids(sqlq_db *db, const fixture *f, int max, double lease, int64_t *ids) {
  sqlq_claim_options co = SQLQ_OPTIONS_INIT(sqlq_claim_options);
  sqlq_job *jobs = NULL;
  size_t n = SIZE_MAX, i;
  co.lease = lease;
  assert_ok(db, sqlq_claim(db, f->queue, (size_t)max, &co, &jobs, &n));
  assert_true(n <= (size_t)max);
  if (n == 0) assert_null(jobs);
  for (i = 0; i < n; i++) ids[i] = jobs[i].id;
  sqlq_jobs_free(jobs, n);
  return (int)n;
}

claimed fx_claim_one(sqlq_db *db, const fixture *f, double lease) {
  sqlq_claim_options co = SQLQ_OPTIONS_INIT(sqlq_claim_options);
  sqlq_job *jobs = NULL;
  claimed c = {0};
  size_t n = SIZE_MAX;
  co.lease = lease;
  assert_ok(db, sqlq_claim(db, f->queue, 1, &co, &jobs, &n));
  assert_true(n == 0 || n == 1);
  if (n == 1) {
    c.id = jobs[0].id;
    c.token = jobs[0].token;
    c.attempt = jobs[0].attempts;
    c.lease_until_us = jobs[0].lease_until_us;
  } else {
    assert_null(jobs);
  }
  sqlq_jobs_free(jobs, n);
  return c;
}

claimed fx_wait_claim(sqlq_db *db, const fixture *f, double budget) {
  double deadline = fx_now() + budget;
  claimed c = fx_claim_one(db, f, 30);
  while (c.id == 0 && fx_now() < deadline) {
    int rc = sqlq_wait(db, f->queue, deadline - fx_now());
    if (rc != SQLQ_TIMEOUT) assert_ok(db, rc);
    c = fx_claim_one(db, f, 30);
  }
  return c;
}

sqlq_queue_stats fx_stats(sqlq_db *db, const fixture *f) {
  sqlq_queue_stats *st = NULL, out;
  size_t n = 99;
  memset(&out, 0, sizeof out);
  assert_ok(db, sqlq_stats(db, f->queue, &st, &n));
  assert_true(n <= 1);
  if (n == 1) {
    assert_string_equal(st[0].queue, f->queue);
    out = st[0];
  }
  sqlq_queue_stats_free(st, n);
  return out;
}

void fx_assert_counts(sqlq_db *db, const fixture *f, int64_t ready, int64_t scheduled,
                      int64_t running, int64_t dead) {
  sqlq_queue_stats st = fx_stats(db, f);
  if (st.ready != ready || st.scheduled != scheduled || st.running != running || st.dead != dead) {
    print_error("counts ready/scheduled/running/dead are %lld/%lld/%lld/%lld, "
                "expected %lld/%lld/%lld/%lld\n",
                (long long)st.ready, (long long)st.scheduled, (long long)st.running,
                (long long)st.dead, (long long)ready, (long long)scheduled, (long long)running,
                (long long)dead);
    fail();
  }
}

size_t fx_count(sqlq_db *db, const fixture *f, int state) {
  sqlq_job_info *jobs = NULL;
  size_t n = 0;
  assert_ok(db, sqlq_list(db, f->queue, state, 0, &jobs, &n));
  sqlq_job_infos_free(jobs, n);
  return n;
}

found fx_find(sqlq_db *db, const fixture *f, int64_t id) {
  found fd = {0};
  size_t i;
  assert_ok(db, sqlq_list(db, f->queue, 0, 0, &fd.all, &fd.n));
  for (i = 0; i < fd.n; i++) {
    if (fd.all[i].id == id) fd.job = &fd.all[i];
  }
  return fd;
}

void fx_found_free(found *fd) {
  sqlq_job_infos_free(fd->all, fd->n);
  memset(fd, 0, sizeof *fd);
}

const char *fx_name(const fixture *f, const char *suffix, char *buf, size_t size) {
  snprintf(buf, size, "%s-%s", f->queue, suffix);
  return buf;
}

unsigned char *fx_pattern(size_t n) {
  unsigned char *p = malloc(n > 0 ? n : 1);
  size_t i;
  assert_non_null(p);
  for (i = 0; i < n; i++) p[i] = (unsigned char)((i * 131u + i / 256u) & 0xffu);
  return p;
}

double fx_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void fx_sleep(double seconds) {
  struct timespec ts;
  ts.tv_sec = (time_t)seconds;
  ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

void fx_need_fork(void) {
  const char *no_fork = getenv("SQLQ_TEST_NO_FORK");
  if (no_fork != NULL && strcmp(no_fork, "1") == 0) {
    printf("[  SKIPPED ] %s: no fork() with this backend (SQLQ_TEST_NO_FORK=1)\n",
           fx_backend_label());
    skip();
  }
}

fx_child fx_fork(int (*fn)(const fixture *f, void *arg), const fixture *f, void *arg) {
  fx_child child = {0};
  int fds[2];
  fx_need_fork();
  assert_int_equal(pipe(fds), 0);
  fflush(stdout);
  fflush(stderr);
  child.pid = fork();
  assert_true(child.pid >= 0);
  if (child.pid == 0) {
    int result;
    close(fds[0]);
    result = fn(f, arg);
    _exit(write(fds[1], &result, sizeof result) == sizeof result ? 0 : 1);
  }
  close(fds[1]);
  child.result_fd = fds[0];
  return child;
}

int fx_reap(fx_child *child) {
  int status = 0, result = -1;
  ssize_t got;
  do got = read(child->result_fd, &result, sizeof result);
  while (got < 0 && errno == EINTR);
  close(child->result_fd);
  child->result_fd = -1;
  while (waitpid(child->pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  if (got == (ssize_t)sizeof result) return result;
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}
