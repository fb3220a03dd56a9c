/*
** bench_ops.c -- the ring, pool and drain modes of `sqlq bench`: W
** clients, each with its own handle, push N entries into a ring or take N
** items from a pool, one call (one transaction) at a time, or drain the N
** jobs that were ready in a queue, claiming and acking B at a time.  The clients are the
** workers of bench_run.c (threads, or processes with --processes); they
** open their handles, then wait for the start signal, so that the timing
** covers the calls only.
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bench_int.h"

/* Push or take one: the call a client repeats. */
static int bench_op(const bench_config *cfg, sqlq_db *db, const unsigned char *payload) {
  if (cfg->mode == BENCH_MODE_RING)
    return sqlq_ring_push(db, cfg->queue, payload, (size_t)cfg->payload, NULL);
  sqlq_pool_item *item = NULL;
  int rc = sqlq_pool_next(db, cfg->queue, 0, &item);
  sqlq_pool_items_free(item, item ? 1 : 0);
  return rc;
}

/* The body of a client: open a handle, say so, wait for the start, do
** this client's share of N, counting each call in sh->done. */
static void bench_client_main(const bench_config *cfg, bench_shared *sh) {
  sqlq_db *db = NULL;
  unsigned char *payload = calloc(1, (size_t)cfg->payload);
  int rc = payload ? sqlq_open(cfg->url, NULL, &db) : SQLQ_NOMEM;
  if (rc != SQLQ_OK) {
    bench_fail_call(sh, db, rc, "bench: client open");
  } else {
    long long mine = bench_share(cfg->jobs, cfg->workers, atomic_fetch_add(&sh->ready, 1));
    while (!atomic_load(&sh->go) && atomic_load(&sh->phase) != BENCH_PHASE_STOP) cli_sleep_us(100);
    for (long long i = 0; i < mine && atomic_load(&sh->phase) != BENCH_PHASE_STOP; i++) {
      if ((rc = bench_op(cfg, db, payload)) != SQLQ_OK) {
        bench_fail_call(sh, db, rc,
                        cfg->mode == BENCH_MODE_RING ? "bench: ring push" : "bench: pool next");
        break;
      }
      atomic_fetch_add(&sh->done, 1);
    }
  }
  sqlq_close(db);
  free(payload);
}

/* The body of a draining worker: claim up to B jobs, sleep U us for each
** (their work), and ack them, until the N jobs are done.  An empty claim
** while jobs are left (the rest held by other workers, or waiting for
** their FIFO group) naps 100 us. */
static void bench_drainer_main(const bench_config *cfg, bench_shared *sh) {
  sqlq_db *db = NULL;
  sqlq_job_ref *refs = calloc((size_t)cfg->batch, sizeof *refs);
  int rc = refs ? sqlq_open(cfg->url, NULL, &db) : SQLQ_NOMEM;
  if (rc != SQLQ_OK) {
    bench_fail_call(sh, db, rc, "bench: worker open");
  } else {
    atomic_fetch_add(&sh->ready, 1);
    while (!atomic_load(&sh->go) && atomic_load(&sh->phase) != BENCH_PHASE_STOP) cli_sleep_us(100);
    while (atomic_load(&sh->done) < cfg->jobs && atomic_load(&sh->phase) != BENCH_PHASE_STOP) {
      sqlq_job *jobs = NULL;
      size_t n = 0;
      int tries = 0;
      do rc = sqlq_claim(db, cfg->queue, (size_t)cfg->batch, NULL, &jobs, &n);
      while (bench_again(sh, rc, &tries));
      if (rc != SQLQ_OK) {
        bench_fail_call(sh, db, rc, "bench: claim");
        break;
      }
      bench_refs(jobs, n, refs);
      sqlq_jobs_free(jobs, n);
      if (n == 0) {
        cli_sleep_us(100);
        continue;
      }
      if (cfg->work_us) cli_sleep_us((long)(cfg->work_us * n));
      tries = 0;
      do rc = sqlq_ack_batch(db, refs, n, NULL);
      while (bench_again(sh, rc, &tries));
      if (rc != SQLQ_OK) {
        bench_fail_call(sh, db, rc, "bench: ack");
        break;
      }
      atomic_fetch_add(&sh->done, n);
    }
  }
  sqlq_close(db);
  free(refs);
}

/* The jobs ready in the queue to drain, into cfg->jobs.  Returns a status
** (failures reported). */
static int bench_count_ready(bench_config *cfg, sqlq_db *db) {
  sqlq_queue_stats *stats = NULL;
  size_t n = 0;
  int rc = sqlq_stats(db, cfg->queue, &stats, &n);
  cfg->jobs = rc == SQLQ_OK && n == 1 ? stats[0].ready : 0;
  sqlq_queue_stats_free(stats, n);
  if (rc != SQLQ_OK) {
    cli_fail(db, rc, "bench: stats");
  } else if (cfg->jobs == 0) {
    cli_error("bench: queue '%s' has no ready job to drain", cfg->queue);
    rc = SQLQ_NOTFOUND;
  }
  return rc;
}

/* Make the ring or the pool, anew.  Returns a status (failures reported). */
static int bench_make(bench_config *cfg, sqlq_db *db) {
  int rc = sqlq_init(db, NULL);
  if (rc != SQLQ_OK) {
    cli_fail(db, rc, "bench: init");
    return rc;
  }
  if (cfg->mode == BENCH_MODE_DRAIN) return bench_count_ready(cfg, db);
  if (cfg->mode == BENCH_MODE_RING) {
    rc = sqlq_ring_drop(db, cfg->queue);
    if (rc == SQLQ_OK || rc == SQLQ_NOTFOUND)
      rc = sqlq_ring_create(db, cfg->queue, BENCH_RING_CAPACITY);
  }
  for (int i = 0; cfg->mode == BENCH_MODE_POOL && rc == SQLQ_OK && i < BENCH_POOL_ITEMS; i++) {
    char item[32];
    snprintf(item, sizeof item, "item-%02d", i);
    rc = sqlq_pool_add(db, cfg->queue, item, NULL);
  }
  if (rc != SQLQ_OK) cli_fail(db, rc, "bench: setup");
  return rc;
}

/* Drop the ring or the pool's items.  Returns a status (failures reported). */
static int bench_unmake(const bench_config *cfg, sqlq_db *db) {
  int rc = SQLQ_OK;
  if (cfg->mode == BENCH_MODE_RING) rc = sqlq_ring_drop(db, cfg->queue);
  for (int i = 0; cfg->mode == BENCH_MODE_POOL && rc == SQLQ_OK && i < BENCH_POOL_ITEMS; i++) {
    char item[32];
    snprintf(item, sizeof item, "item-%02d", i);
    rc = sqlq_pool_remove(db, cfg->queue, item);
  }
  if (rc != SQLQ_OK) cli_fail(db, rc, "bench: teardown");
  return rc;
}

/* Start the clients, time their calls, stop them. */
static int bench_ops_time(const bench_config *cfg, bench_shared *sh, double *wall_s) {
  bench_pool pool = {
    .cfg = cfg,
    .sh = sh,
    .body = cfg->mode == BENCH_MODE_DRAIN ? bench_drainer_main : bench_client_main};
  int rc = bench_pool_start(&pool) == 0 ? SQLQ_OK : SQLQ_ERROR;
  if (rc == SQLQ_OK) rc = bench_await_ready(sh, (int)cfg->workers);
  int64_t t0 = cli_monotonic_ns();
  atomic_store(&sh->go, 1);
  if (rc == SQLQ_OK) rc = bench_await(sh, &sh->done, cfg->jobs, bench_ops_unit(cfg), cfg->jobs);
  *wall_s = (double)(cli_monotonic_ns() - t0) / 1e9;
  bench_progress_end();
  bench_pool_stop(&pool);
  return rc == SQLQ_OK ? atomic_load(&sh->status) : rc;
}

/* Time the clients on a fresh shared block.  Returns a status. */
static int bench_ops_shared(const bench_config *cfg, double *wall_s, long long *busy) {
  bench_shared *sh =
    mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (sh == MAP_FAILED) {
    cli_error("bench: cannot map shared memory: %s", strerror(errno));
    return SQLQ_ERROR;
  }
  int rc = bench_ops_time(cfg, sh, wall_s);
  *busy = atomic_load(&sh->busy);
  munmap(sh, sizeof *sh);
  return rc;
}

int bench_ops_main(const bench_config *config) {
  bench_config copy = *config, *cfg = &copy;
  cli_global g = {.url = cfg->url};
  int ec = 0;
  sqlq_db *db = cli_open(&g, &ec);
  if (!db) return ec;
  const char *backend = sqlq_backend(db); /* static */
  int rc = bench_make(cfg, db);
  /* No handle stays open across the fork of client processes. */
  sqlq_close(db);
  if (rc != SQLQ_OK) return cli_exit_code(rc);
  double wall_s = 0;
  long long busy = 0;
  rc = bench_ops_shared(cfg, &wall_s, &busy);
  if ((db = cli_open(&g, &ec)) == NULL) return ec;
  int rc_down = bench_unmake(cfg, db);
  sqlq_close(db);
  if (rc == SQLQ_OK) rc = rc_down;
  if (rc != SQLQ_OK) return cli_exit_code(rc);
  return bench_print_ops(cfg, backend, wall_s, busy);
}
