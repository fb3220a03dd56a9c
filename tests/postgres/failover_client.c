/*
** failover_client.c -- a producer or a worker for tests/cli/pg_failover.sh
** and bench/run-failover.sh, which kill a PostgreSQL primary under it and
** promote its standby.  Each keeps one handle open for its whole run, so
** that what is tested is the library reconnecting (to whichever host of the
** URL is the primary now), not a new process connecting.
**
**   failover_client produce URL QUEUE STOPFILE
**     Enqueue the payloads p-1, p-2, ... one at a time, 2 ms apart, until
**     STOPFILE exists.  A failed enqueue is tried again (same payload) after 20 ms.
**     Prints "A N ID T" once payload N is acknowledged with id ID, and
**     "E N STATUS D T" for each failure, D 1 when the message says that
**     the enqueue may have committed (its answer was lost), else 0.
**
**   failover_client work URL QUEUE LEASE STOPFILE
**     Claim up to 4 jobs at a time with a lease of LEASE seconds, "run"
**     each for 5 ms and ack it; every 25th job runs 1.5 leases instead, so
**     that another worker takes it back and this one's late ack must be
**     refused (SQLQ_STALE).  An ack that meets an unreachable database is
**     tried again until the lease would have run out.  With no job due it
**     waits (sqlq_wait) up to 3600 s: only a wake-up (LISTEN/NOTIFY) or a
**     due job ends the wait, so a worker whose LISTEN did not come back
**     after a failover never runs a job pushed later.  Stops once STOPFILE
**     exists (looked at between claims: a waiting worker is killed).  Prints "C ID TOKEN ATTEMPT T0 T1" for each job claimed (T0
**     before the claim was asked for, T1 when it returned), "K ID TOKEN
**     STATUS T" for each ack's final answer and "U STATUS T" for each claim
**     or wait that failed.
**
**   failover_client lock URL NAME STOPFILE
**     Hold the named lock NAME, checking it every 200 ms; when it is lost,
**     release it and take it again (waiting 1 s at a time), until STOPFILE
**     exists.  Prints "L had T" each time the lock is taken and "L lost
**     STATUS T" each time a check finds it lost.
**
** Times T are microseconds of CLOCK_REALTIME, comparable between the
** processes of one machine.  Lines are flushed at once.  Exits 0 when
** STOPFILE appears, 64 on a usage error, 69 when the URL cannot be opened.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sqlq.h"

static int64_t now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void sleep_s(double s) {
  struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  nanosleep(&ts, NULL);
}

static int stopped(const char *stopfile) {
  return access(stopfile, F_OK) == 0;
}

static int produce(sqlq_db *db, const char *queue, const char *stopfile) {
  char payload[32];
  for (long n = 1; !stopped(stopfile); n++) {
    snprintf(payload, sizeof payload, "p-%ld", n);
    sqlq_job_spec spec = {.payload = payload, .payload_len = strlen(payload)};
    int64_t id;
    int rc;
    while ((rc = sqlq_enqueue(db, queue, &spec, &id, NULL)) != SQLQ_OK) {
      printf("E %ld %s %d %lld\n", n, sqlq_status_name(rc),
             strstr(sqlq_errmsg(db), "may have committed") != NULL, (long long)now_us());
      fflush(stdout);
      if (stopped(stopfile)) return 0;
      sleep_s(0.02);
    }
    printf("A %ld %lld %lld\n", n, (long long)id, (long long)now_us());
    fflush(stdout);
    sleep_s(0.002);
  }
  return 0;
}

/* Ack job, trying again while the database is away, until the lease
** (claimed at t0 for lease seconds) would have run out. */
static int ack(sqlq_db *db, const sqlq_job *job, int64_t t0, double lease) {
  double pause = 0.05;
  int rc;
  while ((rc = sqlq_ack(db, job->id, job->token)) == SQLQ_UNAVAILABLE &&
         now_us() < t0 + (int64_t)(lease * 1e6)) {
    sleep_s(pause);
    pause = pause * 2 > 0.5 ? 0.5 : pause * 2;
  }
  return rc;
}

static int work(sqlq_db *db, const char *queue, double lease, const char *stopfile) {
  sqlq_claim_options o = SQLQ_OPTIONS_INIT(sqlq_claim_options);
  o.lease = lease;
  long claimed = 0;
  while (!stopped(stopfile)) {
    sqlq_job *jobs;
    size_t n;
    int64_t t0 = now_us();
    int rc = sqlq_claim(db, queue, 4, &o, &jobs, &n);
    int64_t t1 = now_us();
    if (rc != SQLQ_OK) {
      printf("U %s %lld\n", sqlq_status_name(rc), (long long)t1);
      fflush(stdout);
      sleep_s(0.05);
      continue;
    }
    for (size_t i = 0; i < n; i++)
      printf("C %lld %lld %d %lld %lld\n", (long long)jobs[i].id, (long long)jobs[i].token,
             jobs[i].attempts, (long long)t0, (long long)t1);
    fflush(stdout);
    for (size_t i = 0; i < n; i++) {
      sleep_s(++claimed % 25 == 0 ? lease * 1.5 : 0.005);
      rc = ack(db, &jobs[i], t0, lease);
      printf("K %lld %lld %s %lld\n", (long long)jobs[i].id, (long long)jobs[i].token,
             sqlq_status_name(rc), (long long)now_us());
      fflush(stdout);
    }
    sqlq_jobs_free(jobs, n);
    if (n == 0 && (rc = sqlq_wait(db, queue, 3600)) != SQLQ_OK && rc != SQLQ_TIMEOUT) {
      printf("U %s %lld\n", sqlq_status_name(rc), (long long)now_us());
      fflush(stdout);
      sleep_s(0.05);
    }
  }
  return 0;
}

static int hold_lock(sqlq_db *db, const char *name, const char *stopfile) {
  sqlq_lock *lock = NULL;
  while (!stopped(stopfile)) {
    if (lock == NULL) {
      if (sqlq_lock_acquire(db, name, strlen(name), 1.0, &lock) != SQLQ_OK) {
        lock = NULL;
        sleep_s(0.05);
        continue;
      }
      printf("L had %lld\n", (long long)now_us());
      fflush(stdout);
    }
    int rc = sqlq_lock_check(lock, 1.0);
    if (rc != SQLQ_OK) {
      printf("L lost %s %lld\n", sqlq_status_name(rc), (long long)now_us());
      fflush(stdout);
      sqlq_unlock(lock);
      lock = NULL;
      continue;
    }
    sleep_s(0.2);
  }
  if (lock) sqlq_unlock(lock);
  return 0;
}

int main(int argc, char **argv) {
  int producing = argc == 5 && strcmp(argv[1], "produce") == 0;
  int working = argc == 6 && strcmp(argv[1], "work") == 0;
  int locking = argc == 5 && strcmp(argv[1], "lock") == 0;
  double lease = working ? strtod(argv[4], NULL) : 0;
  if (!producing && !working && !locking) {
    fprintf(stderr, "usage: failover_client produce URL QUEUE STOPFILE\n"
                    "       failover_client work URL QUEUE LEASE STOPFILE\n"
                    "       failover_client lock URL NAME STOPFILE\n");
    return 64;
  }
  if (working && !(lease >= 1 && lease <= 3600)) {
    fprintf(stderr, "failover_client: LEASE must be 1 to 3600 seconds\n");
    return 64;
  }
  sqlq_db *db;
  if (sqlq_open(argv[2], NULL, &db) != SQLQ_OK) {
    fprintf(stderr, "failover_client: %s\n", sqlq_errmsg(db));
    sqlq_close(db);
    return 69;
  }
  int rc = producing ? produce(db, argv[3], argv[4])
           : locking ? hold_lock(db, argv[3], argv[4])
                     : work(db, argv[3], lease, argv[5]);
  sqlq_close(db);
  return rc;
}
