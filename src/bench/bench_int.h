/*
** bench_int.h -- declarations shared by the files of `sqlq bench`.
**
** The benchmark is part of the sqlq tool (the tool's dispatch calls
** cmd_bench()) but lives in this folder of its own.  It uses the public
** API (sqlq.h) and the tool's shared helpers (src/cli/cli.h) only.
**
** cmd_bench.c parses the flags, prepares the database and prints the
** result; bench_run.c runs the producers and the workers (threads or
** processes) of the two measured phases; bench_ops.c runs the ring, pool
** and drain modes on the same workers; bench_report.c turns the raw
** measurements into figures, text, JSON and a progress bar.
*/
#ifndef SQLQ_BENCH_INT_H
#define SQLQ_BENCH_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "../cli/cli.h"

/* The number of bytes at the start of a payload that carry its enqueue
** time (microseconds since the epoch, CLOCK_REALTIME, little-endian). */
#define BENCH_STAMP_BYTES 8

/* What is measured. */
enum bench_mode {
  BENCH_MODE_JOBS = 0,  /* enqueue, claim and ack jobs */
  BENCH_MODE_RING = 1,  /* W clients push N entries into a ring */
  BENCH_MODE_POOL = 2,  /* W clients take N items from a pool */
  BENCH_MODE_DRAIN = 3, /* W workers claim and ack the jobs already queued */
  BENCH_MODE_STEADY = 4 /* one producer at a steady rate, W workers, a line a
                           second (bench_steady.c) */
};

/* What the user asked for. */
typedef struct bench_config {
  int mode;               /* enum bench_mode */
  const char *url;        /* the database actually benched */
  const char *queue;      /* the dedicated queue, purged before and after */
  long long jobs;         /* N: jobs of the throughput phase */
  long long workers;      /* W */
  long long producers;    /* P: threads enqueueing the throughput phase */
  long long batch;        /* B: enqueue and claim batch size */
  long long payload;      /* payload size in bytes, >= BENCH_STAMP_BYTES */
  long long backlog;      /* M: low-priority jobs left queued meanwhile */
  long long samples;      /* K: jobs of the latency phase */
  long long work_us;      /* U: --drain's work per claimed job, slept */
  long long limit;        /* L: the queue's concurrency limit meanwhile (0: none) */
  int64_t rate_max;       /* --rate N/PERIOD: the queue's rate limit meanwhile */
  int64_t rate_period_us; /* (N 0: none); workers record each start */
  long long tenants;      /* T: the throughput phase's jobs spread over T group
                             keys of a fair queue (0: no keys, not fair) */
  int processes;          /* workers are forked processes, not threads */
  int keep_backlog;       /* reuse a backlog of M left by a run before, and
                             leave it queued at the end (needs K = 0) */
  int json;               /* print one JSON object instead of text */
  long long steady_rate;  /* --steady RATE: jobs a second, one a commit */
  long long seconds;      /* --seconds S: how long the steady producer runs */
  int mix;                /* --mix: the steady run's jobs are delayed, fail
                             and die too (bench_steady.c) */
} bench_config;

/* The phases the workers go through, in order. */
enum bench_phase { BENCH_PHASE_THROUGHPUT = 0, BENCH_PHASE_LATENCY = 1, BENCH_PHASE_STOP = 2 };

/*
** The state every worker and producer shares.  It lives in one
** anonymous shared mapping, so that forked workers see the same counters
** as threads would; the atomics used are lock-free, which makes them work
** across processes.
*/
typedef struct bench_shared {
  atomic_int phase;         /* enum bench_phase */
  atomic_int status;        /* first failure (SQLQ_*), else SQLQ_OK */
  atomic_int ready;         /* workers that have opened their handle */
  atomic_int go;            /* ring and pool modes: clients may start */
  atomic_llong enqueued;    /* throughput jobs committed so far */
  atomic_llong reserved;    /* throughput jobs workers set out to claim */
  atomic_llong done;        /* throughput jobs acked so far */
  atomic_llong last_ack_ns; /* CLOCK_MONOTONIC of the latest such ack */
  atomic_llong lat_claimed; /* latency jobs claimed (samples taken) */
  atomic_llong lat_acked;   /* latency jobs acked */
  atomic_llong claim_ns;    /* throughput phase: time in non-empty claims */
  atomic_llong claims;      /* throughput phase: non-empty claims */
  atomic_llong strays;      /* backlog jobs claimed, and given back */
  atomic_llong busy;        /* calls answered SQLQ_BUSY, and made again */
  long long n_samples;      /* room in lat_us */
  atomic_llong n_starts;    /* with --rate: throughput jobs' starts taken */
  long long room_starts;    /* room for starts, after lat_us (see
                               bench_starts) */
  double lat_us[];          /* enqueue-to-claim latencies, microseconds */
} bench_shared;

/* The starts of the throughput jobs on the database's clock (their
** lease_until less the lease), microseconds, room_starts of them, in the
** same mapping after lat_us. */
#define bench_starts(sh) ((int64_t *)((sh)->lat_us + (sh)->n_samples))

/* The raw outcome of a run. */
typedef struct bench_result {
  const char *backend;           /* sqlq_backend() */
  double enqueue_s;              /* first producer start to last end */
  double total_s;                /* first enqueue to last ack */
  double p50_ms, p90_ms, p99_ms; /* latency percentiles; NAN when no samples */
  long long n_samples;
  double claim_ms;  /* mean non-empty throughput claim; NAN if none */
  long long strays; /* backlog jobs claimed, and given back */
  long long busy;   /* calls answered SQLQ_BUSY, and made again */
  /* With --rate: the starts recorded, the time from the first to the
  ** last, and the most in any window of the period (sliding). */
  long long starts;
  double starts_span_s;
  long long most_in_window;
} bench_result;

/*
** Enqueue total jobs of cfg's payload size at the given priority on cfg's
** queue, in batches of batch jobs, each batch stamped with the time it was
** built.  When sh is not NULL, add each committed batch to sh->enqueued,
** stop early once anyone has failed (sh->status), and record a failed
** enqueue there, reporting it only if it is the first.  label names the
** progress bar, NULL for none; with sh the bar shows the acked jobs of all
** N.  Threads may fill at once on handles of their own, but at most one of
** them may draw the bar.  Returns SQLQ_OK (also when stopped early) or the
** failing status (one line printed, unless sh had a failure already).
*/
int bench_fill(const bench_config *cfg, sqlq_db *db, long long total, long long batch, int priority,
               bench_shared *sh, const char *label);

/*
** Run both measured phases against a database whose bench queue holds
** nothing but the backlog: start the workers, enqueue and drain the N
** jobs with the P producers, drop the backlog, take the K latency
** samples with the first producer alone, stop the workers.  The producers
** open their handles after the workers are started, so that no handle is
** open across fork().  Fills res (all but backend) and returns an exit
** code (0 on success); on failure one line was printed.
*/
int bench_run(const bench_config *cfg, bench_result *res);

/* Write the current time (CLOCK_REALTIME, microseconds) into the first
** BENCH_STAMP_BYTES of payload; bench_stamp_read() reads it back. */
void bench_stamp(unsigned char *payload);
/* Stamp payload with the time us (microseconds since the epoch) instead. */
void bench_stamp_at(unsigned char *payload, int64_t us);
int64_t bench_stamp_read(const unsigned char *payload);

/* A payload buffer of cfg's size, stamp space followed by padding, which
** the caller frees; NULL when out of memory. */
unsigned char *bench_payload_new(const bench_config *cfg);

/* Copy the id and token of each of the n jobs into refs[0..n), for
** sqlq_ack_batch(). */
void bench_refs(const sqlq_job *jobs, size_t n, sqlq_job_ref *refs);

/* Store status in *first unless a failure is there already, and then
** report it in one line (what, and db's message): of failures that come
** together from several threads, only the first is reported. */
void bench_report_first(atomic_int *first, sqlq_db *db, int status, const char *what);

/* Record the failure of a call on db, and report it in one line if it is
** the first: every failure recorded before was reported already, so a run
** prints one line however many workers and producers fail together. */
void bench_fail_call(bench_shared *sh, sqlq_db *db, int status, const char *what);

/* Whether a call that returned rc should be made again: it was SQLQ_BUSY
** (a conflict the library's own retries did not get past, as on a Galera
** cluster under writes from every node: a worker tries again, and so does
** the bench) and *tries is below BENCH_BUSY_TRIES.  Then sleeps 1 to 16 ms
** at random, counts it in sh->busy (sh may be NULL) and *tries, and
** returns 1; else 0. */
int bench_again(bench_shared *sh, int rc, int *tries);
#define BENCH_BUSY_TRIES 200

/* Wait until *counter reaches target, drawing progress under label.
** Returns SQLQ_OK, the recorded failure, or SQLQ_ERROR when the counter
** stalls (one line printed). */
int bench_await(bench_shared *sh, atomic_llong *counter, long long target, const char *label,
                long long total);

/* Wait until `workers` workers have opened their handle. */
int bench_await_ready(bench_shared *sh, int workers);

/* The share of worker i of p in n: n / p, and one more for each of the
** first n % p workers. */
long long bench_share(long long n, long long p, long long i);

/* The W workers of a run, threads or processes (cfg->processes), each
** running body(cfg, sh) until it returns; a process dies with its parent. */
typedef struct bench_pool {
  const bench_config *cfg;
  bench_shared *sh;
  void (*body)(const bench_config *cfg, bench_shared *sh);
  pthread_t *threads;
  pid_t *pids;
  int started;
} bench_pool;

/* Start the W workers.  Returns 0, or -1 with a line printed. */
int bench_pool_start(bench_pool *pool);
/* Set the phase to BENCH_PHASE_STOP and wait for each worker to finish;
** free what bench_pool_start() allocated. */
void bench_pool_stop(bench_pool *pool);

/* The number of items of the pool of the pool mode. */
#define BENCH_POOL_ITEMS 16
/* The capacity of the ring of the ring mode. */
#define BENCH_RING_CAPACITY 1000

/*
** Run the ring or pool mode of cfg: make the ring (capacity
** BENCH_RING_CAPACITY) or the pool (BENCH_POOL_ITEMS items) named
** cfg->queue, let W clients, each with its own handle, push or take their
** share of N one call at a time, timed from when all are ready to the last
** one's end, then drop the ring or the items and print the rate.  Returns
** an exit code (0 on success; on failure one line was printed).
*/
int bench_ops_main(const bench_config *cfg);

/*
** Run the steady mode of cfg: one producer enqueues cfg->steady_rate jobs
** a second, one a commit, for cfg->seconds, while W workers claim up to B
** and ack them; print a line a second (text, or a JSON object per line)
** with what was enqueued, acked and claimed in it, the claim's time, the
** enqueue-to-claim lag, the backlog and, from sqlq_health(), what piles
** up; then a summary line.  Returns an exit code (0 on success; on failure
** one line was printed).
*/
int bench_steady_main(const bench_config *cfg);

/* Sort the samples and fill the percentiles of res (NAN when n is 0). */
void bench_percentiles(double *lat_us, long long n, bench_result *res);

/* Sort starts[0..n) and set res's figures of the rate from them: the span
** and the most starts that any window of period_us holds. */
void bench_rate_figures(int64_t *starts, long long n, int64_t period_us, bench_result *res);

/* Print obj (which this takes; NULL reports out of memory) as one line
** of JSON on stdout.  Returns an exit code. */
struct json_t;
int bench_write_json(struct json_t *obj);

/* Print the result as aligned text, or as one JSON object, on stdout.
** Returns an exit code. */
int bench_print_text(const bench_config *cfg, const bench_result *res);
int bench_print_json(const bench_config *cfg, const bench_result *res);

/* Print the rate of a ring or pool run that took wall_s seconds on
** backend, as text or (cfg->json) one JSON object.  Returns an exit code. */
/* What one op of the ring, pool or drain mode is called ("pushes"). */
const char *bench_ops_unit(const bench_config *cfg);
int bench_print_ops(const bench_config *cfg, const char *backend, double wall_s, long long busy);

/* Draw "label done/total" as a bar on stderr when stderr is a terminal;
** bench_progress_end() clears it.  Both do nothing otherwise. */
void bench_progress(const char *label, long long done, long long total);
void bench_progress_end(void);

#endif /* SQLQ_BENCH_INT_H */
