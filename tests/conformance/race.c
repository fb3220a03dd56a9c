/*
** race.c -- races of worker threads in forked processes (fx_race_run): the
** part that the races of concurrency, rate and per-group limits share.
*/
#include <pthread.h>
#include <stdio.h>

#include "harness.h"

/* The longest a race runs before its workers give up. */
#define RACE_DEADLINE_S 240

static void note_status(fx_race *r, int rc) {
  int ok = SQLQ_OK;
  if (rc != SQLQ_OK) atomic_compare_exchange_strong(&r->status, &ok, rc);
}

/* A worker thread: claim and handle until goal jobs are done; wait (not
** spin) after an empty claim. */
static void *work(void *arg) {
  fx_race *r = arg;
  sqlq_options opts = SQLQ_OPTIONS_INIT(sqlq_options);
  sqlq_claim_options co = SQLQ_OPTIONS_INIT(sqlq_claim_options);
  sqlq_db *db = NULL;
  opts.busy_timeout = 60;
  co.lease = r->lease;
  int rc = sqlq_open(r->f->url, &opts, &db);
  while (rc == SQLQ_OK && atomic_load(&r->done) < r->goal && !atomic_load(&r->stop)) {
    sqlq_job *jobs = NULL;
    size_t n = 0;
    rc = sqlq_claim(db, r->f->queue, (size_t)r->claim_max, &co, &jobs, &n);
    if (rc == SQLQ_OK && n > 0) rc = r->handle(db, r, jobs, n);
    sqlq_jobs_free(jobs, n);
    if (rc == SQLQ_OK && n == 0) {
      rc = sqlq_wait(db, r->f->queue, 1);
      if (rc == SQLQ_TIMEOUT) rc = SQLQ_OK;
    }
  }
  if (rc != SQLQ_OK) print_error("worker: %s\n", sqlq_errmsg(db));
  note_status(r, rc);
  sqlq_close(db);
  return NULL;
}

/* One process of the race: threads workers; stops them all at the
** deadline. */
static int run_threads(const fixture *f, void *arg) {
  (void)f;
  fx_race *r = arg;
  pthread_t threads[64];
  int n = 0;
  while (n < r->threads && n < 64 && pthread_create(&threads[n], NULL, work, r) == 0) n++;
  if (n < r->threads) note_status(r, SQLQ_ERROR);
  double deadline = fx_now() + RACE_DEADLINE_S;
  while (atomic_load(&r->done) < r->goal && fx_now() < deadline && atomic_load(&r->status) == 0)
    fx_sleep(0.05);
  atomic_store(&r->stop, 1);
  for (int i = 0; i < n; i++) pthread_join(threads[i], NULL);
  return atomic_load(&r->status);
}

int fx_race_run(fx_race *r, int procs, int threads) {
  fx_child children[16];
  int rc = SQLQ_OK;
  r->threads = threads;
  for (int i = 0; i < procs && i < 16; i++) children[i] = fx_fork(run_threads, r->f, r);
  for (int i = 0; i < procs && i < 16; i++) {
    int got = fx_reap(&children[i]);
    if (rc == SQLQ_OK) rc = got;
  }
  return rc;
}
