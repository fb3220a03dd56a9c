/*
** harness.h -- shared fixtures and helpers of the conformance suite.
**
** The conformance suite is one set of test functions that every backend
** must pass.  It uses the public API (sqlq.h) only.  The database comes from
** the environment variable SQLQ_TEST_URL; when it is unset or empty, every
** test gets a fresh SQLite file in its own temporary directory.
**
** Because a server database is shared by every test, each test works in a
** queue (and with lock names) of its own, made unique by the fixture, and
** never asserts anything about other queues.
*/
#ifndef SQLQ_TEST_HARNESS_H
#define SQLQ_TEST_HARNESS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include <cmocka.h>

#include "sqlq.h"

/* The state of one test, made by fx_setup() and freed by fx_teardown(). */
typedef struct fixture {
  char url[4096]; /* the database URL every handle of this test opens */
  char dir[256];  /* the temporary directory of a private SQLite file, or "" */
  char queue[64]; /* a queue name no other test uses */
  sqlq_db *db;    /* a handle on url, schema initialised */
} fixture;

/* cmocka setup and teardown of one test: *state becomes the fixture. */
int fx_setup(void **state);
int fx_teardown(void **state);

/* Shorthand for a cmocka test entry that uses the fixture. */
#define FX_TEST(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

/* The name of the backend under test ("sqlite (temporary files)"). */
const char *fx_backend_label(void);

/* Announce and run a group of n tests; returns the number that failed. */
int fx_run_group(const char *group, const struct CMUnitTest *tests, size_t n);
#define FX_RUN_GROUP(group, tests) \
  fx_run_group((group), (tests), sizeof(tests) / sizeof((tests)[0]))

/* As fx_run_group(), for a group of tests of what schema version `version`
** brought: a backend whose dialect stops below it (its driver has no
** migration to it yet) skips the group, saying so, instead of failing. */
int fx_run_group_from(const char *group, int version, const struct CMUnitTest *tests, size_t n);

/* Check that status equals expected; on mismatch fail the test with both
** status names and the handle's error message.  Use through assert_status. */
void fx_check_status(const sqlq_db *db, int status, int expected, const char *call,
                     const char *file, int line);
#define assert_status(db, call, expected) \
  fx_check_status((db), (call), (expected), #call, __FILE__, __LINE__)
#define assert_ok(db, call) assert_status((db), (call), SQLQ_OK)

/* Open another handle on the fixture's database.  The caller closes it. */
sqlq_db *fx_open(const fixture *f);

/* Open a handle on the fixture's URL with extra URL options appended
** ("payload_limit=16"), or with opts, and return the status; *out is set
** as sqlq_open() sets it. */
int fx_open_with(const fixture *f, const char *url_options, const sqlq_options *opts,
                 sqlq_db **out);

/* Enqueue one job with this text payload (may be NULL: empty) and
** priority on the fixture's queue through db, asserting success; returns
** the id. */
int64_t fx_push(sqlq_db *db, const fixture *f, const char *payload, int priority);

/* Enqueue spec on the fixture's queue through db, asserting success;
** returns the id. */
int64_t fx_push_spec(sqlq_db *db, const fixture *f, const sqlq_job_spec *spec);

/* The parts of a claimed job the tests look at after the claim array is
** freed. */
typedef struct claimed {
  int64_t id; /* 0 when the claim returned no job */
  int64_t token;
  int attempt;
  int64_t lease_until_us;
} claimed;

/* Claim at most one job of the fixture's queue with this lease (seconds),
** asserting SQLQ_OK; returns id 0 when there was none. */
claimed fx_claim_one(sqlq_db *db, const fixture *f, double lease);

/* Alternate sqlq_wait() and claims (lease 30 s) until a job of the
** fixture's queue is claimed or budget seconds have passed; returns the
** job (id 0 when none came). */
claimed fx_wait_claim(sqlq_db *db, const fixture *f, double budget);

/* Claim up to max jobs, asserting SQLQ_OK; fills ids (room for max) and
** returns how many were claimed. */
int fx_claim_ids(sqlq_db *db, const fixture *f, int max, double lease, int64_t *ids);

/* Counts of the fixture's queue (all zero when the queue is unknown). */
sqlq_queue_stats fx_stats(sqlq_db *db, const fixture *f);

/* Assert the counts of the fixture's queue. */
void fx_assert_counts(sqlq_db *db, const fixture *f, int64_t ready, int64_t scheduled,
                      int64_t running, int64_t dead);

/* The number of jobs of the fixture's queue in state (0: any state). */
size_t fx_count(sqlq_db *db, const fixture *f, int state);

/* One job looked up by id through sqlq_list(): job points into the list
** (NULL when the queue has no such job); free with fx_found_free(). */
typedef struct found {
  sqlq_job_info *all;
  size_t n;
  sqlq_job_info *job;
} found;
found fx_find(sqlq_db *db, const fixture *f, int64_t id);
void fx_found_free(found *fd);

/* A name unique to this test ("<queue>-<suffix>"), for locks and second
** queues; buf must hold at least 128 bytes. */
const char *fx_name(const fixture *f, const char *suffix, char *buf, size_t size);

/* The payload limit of a default handle: 1 MiB. */
#define FX_MIB ((size_t)1048576)

/* A malloc'ed buffer of n bytes of a fixed pattern that holds every byte
** value, NUL included; the caller frees it. */
unsigned char *fx_pattern(size_t n);

/* Seconds on the monotonic clock. */
double fx_now(void);

/* Sleep for seconds (fractions allowed). */
void fx_sleep(double seconds);

/* A child process made by fx_fork(). */
typedef struct fx_child {
  pid_t pid;
  int result_fd; /* read end of the pipe that carries fn's return value */
} fx_child;

/* Run fn(arg) in a child process made by fork().  The child sends fn's
** return value to the parent through a pipe and leaves with _exit(), so
** that nothing of the test runner runs twice.  (The value travels by pipe
** and not only as the exit code because valgrind changes the exit code of
** a child that inherited a leak from an earlier failed test.)
**
** With SQLQ_TEST_NO_FORK=1 in the environment it skips the test instead:
** for a backend whose client library cannot be used in a forked child
** (Firebird's embedded engine: its threads stay behind in the parent, and
** the child's first attachment waits for ever on a lock one of them held).
** A test that makes anything of its own before it forks (memory, a second
** handle) calls fx_need_fork() first, so that the skip leaks nothing. */
fx_child fx_fork(int (*fn)(const fixture *f, void *arg), const fixture *f, void *arg);

/* Skip the test when SQLQ_TEST_NO_FORK=1 (see fx_fork). */
void fx_need_fork(void);

/* Wait for a child made by fx_fork() and return fn's value, or 128 + the
** signal that killed the child before fn returned. */
int fx_reap(fx_child *child);

/* A race (race.c): worker threads in forked processes, each with its own
** handle, claim jobs of the fixture's queue and hand them to handle, until
** goal jobs are done.  It lives in memory shared across the fork (mmap
** MAP_SHARED), first in the test's own shared struct. */
typedef struct fx_race {
  const fixture *f;
  int goal;      /* jobs to finish */
  int claim_max; /* jobs per claim */
  double lease;  /* each claim's lease */
  /* Handle jobs[0..n) just claimed through db: ack them, counting each
  ** acked in done.  Returns SQLQ_OK or the failing status. */
  int (*handle)(sqlq_db *db, struct fx_race *r, const sqlq_job *jobs, size_t n);
  atomic_int done;   /* jobs finished */
  atomic_int status; /* the first failing status */
  atomic_int stop;   /* give up (the deadline passed) */
  int threads;       /* workers per process (fx_race_run sets it) */
} fx_race;

/* Run r with procs processes of threads workers each (a worker whose
** claim comes back empty waits up to a second for the queue); returns
** SQLQ_OK or the first failing status.  The test calls fx_need_fork()
** before it makes anything. */
int fx_race_run(fx_race *r, int procs, int threads);

/* The groups of the suite; each returns the number of failed tests. */
int run_schema_tests(void);
int run_limit_tests(void);
int run_rate_tests(void);
int run_enqueue_tests(void);
int run_claim_tests(void);
int run_admin_tests(void);
int run_counts_tests(void);
int run_wait_tests(void);
int run_concurrency_tests(void);
int run_lock_tests(void);
int run_input_tests(void);
int run_ring_tests(void);
int run_pool_tests(void);
int run_subscription_tests(void);
int run_batch_tests(void);
int run_cron_tests(void);
int run_retention_tests(void);
int run_deps_tests(void);
int run_cancel_tests(void);
int run_fair_tests(void);
int run_list_tests(void);

#endif /* SQLQ_TEST_HARNESS_H */
