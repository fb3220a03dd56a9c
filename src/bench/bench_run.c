/*
** bench_run.c -- the producers and the workers of `sqlq bench`.
**
** Workers are threads or forked processes, each with its own handle.  They
** loop: claim up to B jobs, ack them in one batch, and when nothing is
** claimable wait on the queue with sqlq_wait().  All coordination goes
** through a bench_shared block in an anonymous shared mapping, so the same
** code serves both kinds of worker.
**
** The N jobs of the throughput phase are enqueued by P producer threads of
** the main process, each with its own handle, so that on a server their
** commits can share WAL flushes (group commit).  The latency phase has one
** producer, the first.
**
** While a backlog of low-priority jobs sits in the queue, "nothing
** claimable" cannot be told by the database: the backlog is always due, so
** a claim would take backlog jobs and sqlq_wait() would return at once.
** Workers then reserve the jobs they claim from the count of measured jobs
** the producers have committed, so that each claim takes measured jobs
** only, and sleep briefly when there is nothing to reserve.  The backlog is
** dropped before the latency phase, which measures sqlq_wait() wake-ups.
*/
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "bench_int.h"

/* How long an idle worker waits on the queue before looking at the phase
** again, in seconds. */
#define BENCH_WAIT_S 0.1
/* How long a worker sleeps when a backlog hides whether work is due. */
#define BENCH_BACKLOG_NAP_US 100
/* How long the producer polls the shared counters between looks. */
#define BENCH_POLL_US 50
/* The pause between two latency samples, so each finds idle workers. */
#define BENCH_SAMPLE_PAUSE_US 1000
/* The lease of the workers' claims; a job's start is its lease_until less
** it. */
#define BENCH_LEASE_S 30
/* A phase that makes no progress for this long is reported as stuck. */
#define BENCH_STALL_NS (60LL * 1000000000LL)

void bench_report_first(atomic_int *first, sqlq_db *db, int status, const char *what) {
  int expected = SQLQ_OK;
  if (atomic_compare_exchange_strong(first, &expected, status)) cli_fail(db, status, what);
}

/* Record the first failure and tell everyone to stop.  Returns 1 when
** this is the first failure, else 0. */
static int bench_fail(bench_shared *sh, int status) {
  int expected = SQLQ_OK;
  int first = atomic_compare_exchange_strong(&sh->status, &expected, status);
  atomic_store(&sh->phase, BENCH_PHASE_STOP);
  return first;
}

void bench_fail_call(bench_shared *sh, sqlq_db *db, int status, const char *what) {
  atomic_store(&sh->phase, BENCH_PHASE_STOP);
  bench_report_first(&sh->status, db, status, what);
}

int bench_again(bench_shared *sh, int rc, int *tries) {
  if (rc != SQLQ_BUSY || *tries >= BENCH_BUSY_TRIES) return 0;
  (*tries)++;
  if (sh) atomic_fetch_add(&sh->busy, 1);
  cli_sleep_us(1000 + (long)(cli_monotonic_ns() % 15000));
  return 1;
}

void bench_stamp_at(unsigned char *payload, int64_t us) {
  for (int i = 0; i < BENCH_STAMP_BYTES; i++) payload[i] = (unsigned char)((uint64_t)us >> (8 * i));
}

void bench_stamp(unsigned char *payload) {
  bench_stamp_at(payload, cli_realtime_us());
}

int64_t bench_stamp_read(const unsigned char *payload) {
  uint64_t t = 0;
  for (int i = 0; i < BENCH_STAMP_BYTES; i++) t |= (uint64_t)payload[i] << (8 * i);
  return (int64_t)t;
}

unsigned char *bench_payload_new(const bench_config *cfg) {
  unsigned char *p = malloc((size_t)cfg->payload);
  if (p) memset(p, 'x', (size_t)cfg->payload);
  return p;
}

int bench_fill(const bench_config *cfg, sqlq_db *db, long long total, long long batch, int priority,
               bench_shared *sh, const char *label) {
  unsigned char *payload = bench_payload_new(cfg);
  sqlq_job_spec *specs = calloc((size_t)batch, sizeof *specs);
  /* The throughput phase's jobs take the tenants' keys in turn. */
  long long tenants = sh ? cfg->tenants : 0;
  char(*keys)[24] = tenants ? calloc((size_t)batch, sizeof *keys) : NULL;
  int rc = SQLQ_OK;
  if (!payload || !specs || (tenants && !keys)) {
    cli_error("bench: out of memory");
    rc = SQLQ_NOMEM;
  }
  /* Every job of a batch shares the one payload buffer: they carry the
  ** same stamp, the time the batch was built. */
  for (long long i = 0; rc == SQLQ_OK && i < batch; i++) {
    specs[i].payload = payload;
    specs[i].payload_len = (size_t)cfg->payload;
    specs[i].priority = priority;
  }
  for (long long sent = 0; rc == SQLQ_OK && sent < total;) {
    long long k = total - sent < batch ? total - sent : batch;
    if (sh && atomic_load(&sh->status) != SQLQ_OK) break;
    bench_stamp(payload);
    for (long long i = 0; tenants && i < k; i++) {
      snprintf(keys[i], sizeof keys[i], "t%lld", (sent + i) % tenants);
      specs[i].group_key = keys[i];
    }
    int tries = 0;
    do rc = sqlq_enqueue_batch(db, cfg->queue, specs, (size_t)k, NULL);
    while (bench_again(sh, rc, &tries));
    if (rc != SQLQ_OK) {
      if (sh)
        bench_fail_call(sh, db, rc, "bench: enqueue");
      else
        cli_fail(db, rc, "bench: enqueue");
      break;
    }
    sent += k;
    if (sh) atomic_fetch_add(&sh->enqueued, k);
    if (label) bench_progress(label, sh ? atomic_load(&sh->done) : sent, sh ? cfg->jobs : total);
  }
  free(keys);
  free(specs);
  free(payload);
  return rc;
}

/* ---------------------------------------------------------------------
** Workers.
*/

/* Raise *target to value unless it is already larger. */
static void bench_atomic_max(atomic_llong *target, long long value) {
  long long cur = atomic_load(target);
  while (cur < value && !atomic_compare_exchange_weak(target, &cur, value)) {}
}

/* How many jobs the next claim asks for: B, or with a backlog in the
** throughput phase the number of committed measured jobs this worker could
** reserve (0: none). */
static int bench_claim_size(const bench_config *cfg, bench_shared *sh, int phase) {
  if (phase != BENCH_PHASE_THROUGHPUT || cfg->backlog == 0) return (int)cfg->batch;
  long long r = atomic_load(&sh->reserved);
  for (;;) {
    long long avail = atomic_load(&sh->enqueued) - r;
    long long k = avail < cfg->batch ? avail : cfg->batch;
    if (k <= 0) return 0;
    if (atomic_compare_exchange_weak(&sh->reserved, &r, r + k)) return (int)k;
  }
}

/* Wait until work may be due: on the queue, or by a short nap while a
** backlog makes the queue look busy.  Returns SQLQ_OK or a recorded
** failure. */
static int bench_idle(const bench_config *cfg, bench_shared *sh, sqlq_db *db, int phase) {
  if (phase == BENCH_PHASE_THROUGHPUT && cfg->backlog > 0) {
    cli_sleep_us(BENCH_BACKLOG_NAP_US);
    return SQLQ_OK;
  }
  int rc = sqlq_wait(db, cfg->queue, BENCH_WAIT_S);
  if (rc == SQLQ_TIMEOUT) return SQLQ_OK;
  if (rc != SQLQ_OK) bench_fail_call(sh, db, rc, "bench: wait");
  return rc;
}

/* Take one latency sample per claimed job: now minus its stamp. */
static void bench_record_latency(bench_shared *sh, const sqlq_job *jobs, int n, int64_t now_us) {
  for (int i = 0; i < n; i++) {
    long long slot = atomic_fetch_add(&sh->lat_claimed, 1);
    if (slot < sh->n_samples)
      sh->lat_us[slot] = (double)(now_us - bench_stamp_read(jobs[i].payload));
  }
}

/* Check that every claimed job is a measured one carrying a stamp: a
** backlog job (priority below 0) here means the claim order was broken. */
static int bench_check_claimed(const sqlq_job *jobs, int n) {
  for (int i = 0; i < n; i++) {
    if (jobs[i].priority < 0 || jobs[i].payload_len < BENCH_STAMP_BYTES) {
      cli_error("bench: claimed job %lld is not a measured job (priority %d)",
                (long long)jobs[i].id, jobs[i].priority);
      return SQLQ_ERROR;
    }
  }
  return SQLQ_OK;
}

/*
** With a backlog, move the measured jobs of a throughput claim to the front
** of jobs and give each backlog job (priority below 0) back to the queue
** at once with sqlq_release(), counting it in sh->strays.  A claim should
** take measured jobs only, since a worker asks for no more than are
** committed and not set out for; yet on PostgreSQL, with several workers,
** one now and then comes back with backlog jobs while as many measured
** jobs are ready (docs/benchmarks.md, "Side by side").  Sets *measured to
** the number of measured jobs.  Returns a status (a failure recorded).
*/
static int bench_give_back(bench_shared *sh, sqlq_db *db, sqlq_job *jobs, int n, int *measured) {
  int m = 0;
  for (int i = 0; i < n; i++) {
    if (jobs[i].priority >= 0) {
      sqlq_job t = jobs[m];
      jobs[m++] = jobs[i];
      jobs[i] = t;
    }
  }
  for (int i = m; i < n; i++) {
    int rc = sqlq_release(db, jobs[i].id, jobs[i].token, 0);
    if (rc != SQLQ_OK) {
      bench_fail_call(sh, db, rc, "bench: release");
      return rc;
    }
    atomic_fetch_add(&sh->strays, 1);
  }
  *measured = m;
  return SQLQ_OK;
}

void bench_refs(const sqlq_job *jobs, size_t n, sqlq_job_ref *refs) {
  for (size_t i = 0; i < n; i++) {
    refs[i].id = jobs[i].id;
    refs[i].token = jobs[i].token;
  }
}

/* Ack the n claimed jobs in one batch and count them for their phase. */
static int bench_ack(bench_shared *sh, sqlq_db *db, const sqlq_job *jobs, int n, sqlq_job_ref *refs,
                     int phase) {
  bench_refs(jobs, (size_t)n, refs);
  int rc, tries = 0;
  do rc = sqlq_ack_batch(db, refs, (size_t)n, NULL);
  while (bench_again(sh, rc, &tries));
  if (rc != SQLQ_OK) {
    bench_fail_call(sh, db, rc, "bench: ack");
    return rc;
  }
  if (phase == BENCH_PHASE_LATENCY) {
    atomic_fetch_add(&sh->lat_acked, n);
  } else {
    bench_atomic_max(&sh->last_ack_ns, cli_monotonic_ns());
    atomic_fetch_add(&sh->done, n);
  }
  return SQLQ_OK;
}

/* With --rate, record the starts of the n jobs just claimed. */
static void bench_record_starts(bench_shared *sh, const sqlq_job *jobs, int n) {
  for (int i = 0; i < n && sh->room_starts > 0; i++) {
    long long at = atomic_fetch_add(&sh->n_starts, 1);
    if (at < sh->room_starts)
      bench_starts(sh)[at] = jobs[i].lease_until_us - BENCH_LEASE_S * INT64_C(1000000);
  }
}

/*
** One round of a worker: claim, then ack or idle.  The phase is read again
** after the claim returns: the producer switches to the latency phase only
** once every throughput job is acked and the backlog is gone, so a job
** claimed after that switch is a latency job.
*/
static int bench_worker_round(const bench_config *cfg, bench_shared *sh, sqlq_db *db,
                              sqlq_job_ref *refs) {
  int phase = atomic_load(&sh->phase);
  int max = bench_claim_size(cfg, sh, phase);
  if (max == 0) return bench_idle(cfg, sh, db, phase);
  sqlq_job *jobs = NULL;
  size_t got = 0;
  int64_t t0 = cli_monotonic_ns();
  sqlq_claim_options co = SQLQ_OPTIONS_INIT(sqlq_claim_options);
  co.lease = BENCH_LEASE_S;
  int rc, tries = 0;
  do rc = sqlq_claim(db, cfg->queue, (size_t)max, &co, &jobs, &got);
  while (bench_again(sh, rc, &tries));
  int n = (int)got;
  if (rc == SQLQ_OK && phase == BENCH_PHASE_THROUGHPUT) bench_record_starts(sh, jobs, n);
  int64_t now_us = cli_realtime_us();
  if (rc == SQLQ_OK && n > 0 && phase == BENCH_PHASE_THROUGHPUT) {
    atomic_fetch_add(&sh->claim_ns, cli_monotonic_ns() - t0);
    atomic_fetch_add(&sh->claims, 1);
  }
  if (rc != SQLQ_OK) {
    bench_fail_call(sh, db, rc, "bench: claim");
    return rc;
  }
  int claimed = n;
  if (phase == BENCH_PHASE_THROUGHPUT && cfg->backlog > 0) {
    rc = bench_give_back(sh, db, jobs, claimed, &n);
    if (n < max) atomic_fetch_sub(&sh->reserved, max - n);
  }
  phase = atomic_load(&sh->phase);
  if (rc == SQLQ_OK && (rc = bench_check_claimed(jobs, n)) != SQLQ_OK)
    bench_fail(sh, rc);
  else if (rc == SQLQ_OK && n == 0)
    rc = bench_idle(cfg, sh, db, phase);
  else if (rc == SQLQ_OK) {
    if (phase == BENCH_PHASE_LATENCY) bench_record_latency(sh, jobs, n, now_us);
    rc = bench_ack(sh, db, jobs, n, refs, phase);
  }
  sqlq_jobs_free(jobs, got);
  return rc;
}

/* The body of every worker: open a handle, say so, work until told to
** stop or until something fails. */
static void bench_worker_main(const bench_config *cfg, bench_shared *sh) {
  sqlq_db *db = NULL;
  sqlq_job_ref *refs = malloc((size_t)cfg->batch * sizeof *refs);
  int rc = refs ? sqlq_open(cfg->url, NULL, &db) : SQLQ_NOMEM;
  if (rc != SQLQ_OK) {
    bench_fail_call(sh, db, rc, "bench: worker open");
  } else {
    atomic_fetch_add(&sh->ready, 1);
    while (rc == SQLQ_OK && atomic_load(&sh->phase) != BENCH_PHASE_STOP)
      rc = bench_worker_round(cfg, sh, db, refs);
  }
  sqlq_close(db);
  free(refs);
}

static void *bench_worker_thread(void *arg) {
  bench_pool *pool = arg;
  pool->body(pool->cfg, pool->sh);
  return NULL;
}

/* Fork one worker process.  It dies with its parent. */
static int bench_fork_worker(bench_pool *pool) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
    pool->body(pool->cfg, pool->sh);
    _exit(atomic_load(&pool->sh->status) == SQLQ_OK ? 0 : 1);
  }
  pool->pids[pool->started] = pid;
  return 0;
}

int bench_pool_start(bench_pool *pool) {
  int w = (int)pool->cfg->workers;
  pool->threads = calloc((size_t)w, sizeof *pool->threads);
  pool->pids = calloc((size_t)w, sizeof *pool->pids);
  if (!pool->threads || !pool->pids) {
    cli_error("bench: out of memory");
    return -1;
  }
  for (; pool->started < w; pool->started++) {
    int err = pool->cfg->processes
                ? (bench_fork_worker(pool) ? errno : 0)
                : pthread_create(&pool->threads[pool->started], NULL, bench_worker_thread, pool);
    if (err) {
      cli_error("bench: cannot start a worker: %s", strerror(err));
      return -1;
    }
  }
  return 0;
}

void bench_pool_stop(bench_pool *pool) {
  atomic_store(&pool->sh->phase, BENCH_PHASE_STOP);
  for (int i = 0; i < pool->started; i++) {
    if (pool->cfg->processes)
      while (waitpid(pool->pids[i], NULL, 0) < 0 && errno == EINTR) {}
    else
      pthread_join(pool->threads[i], NULL);
  }
  free(pool->threads);
  free(pool->pids);
}

/* ---------------------------------------------------------------------
** Waiting on the workers.
*/

int bench_await(bench_shared *sh, atomic_llong *counter, long long target, const char *label,
                long long total) {
  long long seen = atomic_load(counter);
  int64_t last_move = cli_monotonic_ns();
  while (seen < target) {
    int status = atomic_load(&sh->status);
    if (status != SQLQ_OK) return status;
    if (cli_monotonic_ns() - last_move > BENCH_STALL_NS) {
      cli_error("bench: %s made no progress for 60 s (%lld of %lld)", label, seen, target);
      bench_fail(sh, SQLQ_ERROR);
      return SQLQ_ERROR;
    }
    cli_sleep_us(BENCH_POLL_US);
    long long now = atomic_load(counter);
    if (now != seen) last_move = cli_monotonic_ns();
    seen = now;
    if (total > 0) bench_progress(label, seen, total);
  }
  return SQLQ_OK;
}

int bench_await_ready(bench_shared *sh, int workers) {
  int64_t start = cli_monotonic_ns();
  while (atomic_load(&sh->ready) < workers) {
    if (atomic_load(&sh->status) != SQLQ_OK) return atomic_load(&sh->status);
    if (cli_monotonic_ns() - start > BENCH_STALL_NS) {
      cli_error("bench: the workers did not start within 60 s");
      return SQLQ_ERROR;
    }
    cli_sleep_us(1000);
  }
  return SQLQ_OK;
}

/* ---------------------------------------------------------------------
** The producers of the throughput phase.
*/

/* One producer: its share of the N jobs and its own handle.  The first
** runs on the calling thread with the main handle and alone draws the
** progress bar; the others are threads with handles of their own. */
typedef struct bench_producer {
  const bench_config *cfg;
  bench_shared *sh;
  sqlq_db *db;       /* its handle; closed by bench_producers_close() */
  long long jobs;    /* its share of N */
  const char *label; /* the progress bar's label, or NULL */
  pthread_t thread;  /* valid once started */
  int started;       /* runs on a thread of its own */
} bench_producer;

/* The P producers of a run. */
typedef struct bench_producers {
  bench_producer *list;
  int n; /* entries of list with a handle */
} bench_producers;

long long bench_share(long long n, long long p, long long i) {
  return n / p + (i < n % p ? 1 : 0);
}

/* Close the handles of producers 1.. (the first borrows the main one) and
** free the list. */
static void bench_producers_close(bench_producers *ps) {
  for (int i = 1; i < ps->n; i++) sqlq_close(ps->list[i].db);
  free(ps->list);
  ps->list = NULL;
  ps->n = 0;
}

/* Set up cfg->producers producers: the first on db, each other one with a
** handle of its own, opened here so that connecting is not timed.
** Returns SQLQ_OK, or the failing status with one line printed and
** everything set up so far closed again. */
static int bench_producers_open(const bench_config *cfg, bench_shared *sh, sqlq_db *db,
                                bench_producers *ps) {
  int p = (int)cfg->producers;
  ps->n = 0;
  ps->list = calloc((size_t)p, sizeof *ps->list);
  if (!ps->list) {
    cli_error("bench: out of memory");
    return SQLQ_NOMEM;
  }
  for (int i = 0; i < p; i++) {
    bench_producer *pr = &ps->list[i];
    *pr = (bench_producer){.cfg = cfg,
                           .sh = sh,
                           .db = db,
                           .jobs = bench_share(cfg->jobs, p, i),
                           .label = i == 0 ? "jobs" : NULL};
    if (i > 0) {
      pr->db = NULL;
      int rc = sqlq_open(cfg->url, NULL, &pr->db);
      if (rc != SQLQ_OK) {
        cli_fail(pr->db, rc, "bench: producer open");
        sqlq_close(pr->db);
        bench_producers_close(ps);
        return rc;
      }
    }
    ps->n = i + 1;
  }
  return SQLQ_OK;
}

/* The body of every producer: enqueue its share in batches of B.  A
** failure is recorded in sh->status, so that the workers and the other
** producers stop. */
static void *bench_producer_main(void *arg) {
  bench_producer *pr = arg;
  int rc = bench_fill(pr->cfg, pr->db, pr->jobs, pr->cfg->batch, 0, pr->sh, pr->label);
  if (rc != SQLQ_OK) bench_fail(pr->sh, rc);
  return NULL;
}

/* Run every producer to its end: start producers 1.. on threads, run the
** first on this one, join them all.  Returns SQLQ_OK once all N jobs are
** committed, else the first failure recorded (one line printed). */
static int bench_producers_run(bench_producers *ps, bench_shared *sh) {
  for (int i = 1; i < ps->n; i++) {
    bench_producer *pr = &ps->list[i];
    int err = pthread_create(&pr->thread, NULL, bench_producer_main, pr);
    if (err) {
      if (bench_fail(sh, SQLQ_ERROR))
        cli_error("bench: cannot start a producer: %s", strerror(err));
      break;
    }
    pr->started = 1;
  }
  /* After a failure the first producer stops before its first batch. */
  bench_producer_main(&ps->list[0]);
  for (int i = 1; i < ps->n; i++)
    if (ps->list[i].started) pthread_join(ps->list[i].thread, NULL);
  return atomic_load(&sh->status);
}

/* The throughput phase: the producers enqueue the N jobs in batches while
** the workers drain them; time the producers (first start to last end)
** and the whole. */
static int bench_throughput(const bench_config *cfg, bench_shared *sh, bench_producers *ps,
                            bench_result *res) {
  int64_t t0 = cli_monotonic_ns();
  int rc = bench_producers_run(ps, sh);
  int64_t t1 = cli_monotonic_ns();
  if (rc != SQLQ_OK) return rc;
  rc = bench_await(sh, &sh->done, cfg->jobs, "jobs", cfg->jobs);
  if (rc != SQLQ_OK) return rc;
  res->enqueue_s = (double)(t1 - t0) / 1e9;
  res->total_s = (double)(atomic_load(&sh->last_ack_ns) - t0) / 1e9;
  long long claims = atomic_load(&sh->claims);
  res->claim_ms = claims > 0 ? (double)atomic_load(&sh->claim_ns) / 1e6 / (double)claims : NAN;
  res->strays = atomic_load(&sh->strays);
  res->busy = atomic_load(&sh->busy);
  return SQLQ_OK;
}

/* ---------------------------------------------------------------------
** The latency phase and the run.
*/

/* Enqueue one latency job and wait until a worker has claimed and acked
** it. */
static int bench_one_sample(const bench_config *cfg, bench_shared *sh, sqlq_db *db,
                            unsigned char *payload, long long i) {
  sqlq_job_spec spec = {.payload = payload, .payload_len = (size_t)cfg->payload};
  bench_stamp(payload);
  int rc = sqlq_enqueue(db, cfg->queue, &spec, NULL, NULL);
  if (rc != SQLQ_OK) {
    bench_fail_call(sh, db, rc, "bench: enqueue");
    return rc;
  }
  rc = bench_await(sh, &sh->lat_acked, i + 1, "latency", 0);
  bench_progress("latency", i + 1, cfg->samples);
  return rc;
}

/* The latency phase: drop the backlog so that idle workers really wait,
** then enqueue K jobs one at a time, each once the previous is done. */
static int bench_latency(const bench_config *cfg, bench_shared *sh, sqlq_db *db) {
  /* A kept backlog stays due: workers in the latency phase would claim it.
  ** --keep-backlog comes with no samples, so the run ends here instead. */
  if (cfg->keep_backlog) return SQLQ_OK;
  int rc = cfg->backlog > 0 && !cfg->keep_backlog ? sqlq_purge(db, cfg->queue, NULL) : SQLQ_OK;
  if (rc != SQLQ_OK) {
    bench_fail_call(sh, db, rc, "bench: purge");
    return rc;
  }
  atomic_store(&sh->phase, BENCH_PHASE_LATENCY);
  unsigned char *payload = bench_payload_new(cfg);
  if (!payload) {
    cli_error("bench: out of memory");
    return SQLQ_NOMEM;
  }
  for (long long i = 0; rc == SQLQ_OK && i < cfg->samples; i++) {
    cli_sleep_us(BENCH_SAMPLE_PAUSE_US);
    rc = bench_one_sample(cfg, sh, db, payload, i);
  }
  free(payload);
  return rc;
}

/* Both phases: the throughput phase with the P producers, the first of
** them on the main handle, then the latency phase on the main handle
** alone. */
static int bench_produce(const bench_config *cfg, bench_shared *sh, bench_result *res) {
  sqlq_db *db = NULL;
  int rc = bench_await_ready(sh, (int)cfg->workers);
  if (rc == SQLQ_OK) {
    rc = sqlq_open(cfg->url, NULL, &db);
    if (rc != SQLQ_OK) cli_fail(db, rc, "bench: open");
  }
  if (rc == SQLQ_OK) {
    bench_producers ps;
    rc = bench_producers_open(cfg, sh, db, &ps);
    if (rc == SQLQ_OK) {
      rc = bench_throughput(cfg, sh, &ps, res);
      bench_producers_close(&ps);
    }
  }
  if (rc == SQLQ_OK) rc = bench_latency(cfg, sh, db);
  bench_progress_end();
  sqlq_close(db);
  return rc;
}

int bench_run(const bench_config *cfg, bench_result *res) {
  long long room_starts = cfg->rate_max ? cfg->jobs : 0;
  size_t size = sizeof(bench_shared) + (size_t)cfg->samples * sizeof(double) +
                (size_t)room_starts * sizeof(int64_t);
  bench_shared *sh = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (sh == MAP_FAILED) {
    cli_error("bench: cannot map shared memory: %s", strerror(errno));
    return EXIT_SOFTWARE;
  }
  sh->n_samples = cfg->samples;
  sh->room_starts = room_starts;
  bench_pool pool = {.cfg = cfg, .sh = sh, .body = bench_worker_main};
  int rc = bench_pool_start(&pool) == 0 ? SQLQ_OK : SQLQ_ERROR;
  if (rc == SQLQ_OK)
    rc = bench_produce(cfg, sh, res);
  else
    bench_fail(sh, rc);
  bench_pool_stop(&pool);
  if (rc == SQLQ_OK) rc = atomic_load(&sh->status);
  if (rc == SQLQ_OK) {
    long long n = atomic_load(&sh->lat_claimed);
    bench_percentiles(sh->lat_us, n < cfg->samples ? n : cfg->samples, res);
    long long starts = atomic_load(&sh->n_starts);
    bench_rate_figures(bench_starts(sh), starts < room_starts ? starts : room_starts,
                       cfg->rate_period_us, res);
  }
  munmap(sh, size);
  return rc == SQLQ_OK ? 0 : cli_exit_code(rc);
}
