/*
** pg-sub-wake.c -- how soon a worker waiting in sqlq_wait() wakes for an
** event of a subscribed PostgreSQL table written by a plain client.
**
**   cc -O2 -Iinclude -o /tmp/pg-sub-wake bench/pg-sub-wake.c build/libsqlq.a \
**      $(pkg-config --cflags --libs libpq sqlite3 libmariadb) -lpthread -lm
**   /tmp/pg-sub-wake postgres://sqlq@127.0.0.1:PORT/sqlq [ROUNDS]
**
** (Link what the library was built with: drop sqlite3 or libmariadb when
** the build had no such backend.)  Makes the table bench_wake_events
** (dropped at the end), subscribes the tag sqlq_bench_wake to its inserts,
** then ROUNDS times (default 100): a thread of its own waits on the tag in
** sqlq_wait() (and claims and acks each event it finds); once it has slept
** for 100 ms, the main thread sends one `INSERT ... DEFAULT VALUES` on a
** plain libpq session in autocommit.  Prints the median and 90th
** percentile of (a) the INSERT's round trip, commit included, and (b) the
** time from sending the INSERT to the waiter's sqlq_wait() returning; (b)
** minus (a) is what the wake-up adds to the commit.
*/
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "sqlq.h"

#define TAG "sqlq_bench_wake"

static const char *url;
static atomic_llong woke_ns;  /* when sqlq_wait() last returned; 0: not yet */
static atomic_int asleep;     /* the waiter is about to wait */

static long long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void die(const char *what, const char *why) {
  fprintf(stderr, "pg-sub-wake: %s: %s\n", what, why);
  exit(1);
}

/* Take `rounds` events, waiting for each. */
static void *waiter(void *arg) {
  int rounds = *(int *)arg;
  sqlq_db *db = NULL;
  if (sqlq_open(url, NULL, &db) != SQLQ_OK) die("waiter open", sqlq_errmsg(db));
  for (int taken = 0; taken < rounds;) {
    sqlq_job *jobs = NULL;
    size_t n = 0;
    if (sqlq_claim(db, TAG, 10, NULL, &jobs, &n) != SQLQ_OK) die("claim", sqlq_errmsg(db));
    for (size_t i = 0; i < n; i++) sqlq_ack(db, jobs[i].id, jobs[i].token);
    sqlq_jobs_free(jobs, n);
    taken += (int)n;
    if (n > 0) continue;
    atomic_store(&asleep, 1);
    sqlq_wait(db, TAG, 5.0);
    atomic_store(&woke_ns, now_ns());
  }
  sqlq_close(db);
  return NULL;
}

static void exec_ok(PGconn *c, const char *sql) {
  PGresult *r = PQexec(c, sql);
  if (PQresultStatus(r) != PGRES_COMMAND_OK) die(sql, PQerrorMessage(c));
  PQclear(r);
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  if (argc < 2) die("usage", "pg-sub-wake URL [ROUNDS]");
  url = argv[1];
  int rounds = argc > 2 ? atoi(argv[2]) : 100;
  if (rounds < 1) die("usage", "ROUNDS must be at least 1");
  PGconn *c = PQconnectdb(url);
  if (PQstatus(c) != CONNECTION_OK) die("connect", PQerrorMessage(c));
  exec_ok(c, "SET client_min_messages = warning; DROP TABLE IF EXISTS bench_wake_events;"
             " CREATE TABLE bench_wake_events (id serial PRIMARY KEY)");
  sqlq_db *db = NULL;
  if (sqlq_open(url, NULL, &db) != SQLQ_OK || sqlq_init(db, NULL) != SQLQ_OK ||
      sqlq_subscribe(db, "bench_wake_events", SQLQ_ON_INSERT, TAG, 0) != SQLQ_OK ||
      sqlq_purge(db, TAG, NULL) != SQLQ_OK)
    die("setup", sqlq_errmsg(db));

  pthread_t th;
  pthread_create(&th, NULL, waiter, &rounds);
  double *commit = calloc((size_t)rounds, sizeof *commit);
  double *wake = calloc((size_t)rounds, sizeof *wake);
  for (int i = 0; i < rounds; i++) {
    while (!atomic_load(&asleep)) usleep(1000);
    usleep(100000); /* the waiter is in sqlq_wait() by now */
    atomic_store(&asleep, 0);
    atomic_store(&woke_ns, 0);
    long long t0 = now_ns();
    exec_ok(c, "INSERT INTO bench_wake_events DEFAULT VALUES");
    commit[i] = (now_ns() - t0) / 1e6;
    while (atomic_load(&woke_ns) == 0) usleep(50);
    wake[i] = (atomic_load(&woke_ns) - t0) / 1e6;
  }
  pthread_join(th, NULL);
  qsort(commit, (size_t)rounds, sizeof *commit, by_value);
  qsort(wake, (size_t)rounds, sizeof *wake, by_value);
  printf("rounds %d: INSERT and commit p50 %.3f ms, p90 %.3f ms;"
         " INSERT sent to sqlq_wait() returned p50 %.3f ms, p90 %.3f ms\n",
         rounds, commit[rounds / 2], commit[rounds * 9 / 10], wake[rounds / 2],
         wake[rounds * 9 / 10]);
  sqlq_unsubscribe(db, "bench_wake_events", TAG);
  sqlq_purge(db, TAG, NULL);
  sqlq_close(db);
  exec_ok(c, "DROP TABLE bench_wake_events");
  PQfinish(c);
  free(commit);
  free(wake);
  return 0;
}
