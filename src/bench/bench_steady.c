/*
** bench_steady.c -- the steady mode of `sqlq bench` (--steady RATE): a
** queue run the way production runs one, not drained as fast as it can be.
**
** One producer enqueues RATE jobs a second, one job a commit, paced by the
** monotonic clock: a producer that fell behind catches up, but never by
** more than a second's worth, so a stall does not turn into a burst.  W
** workers, each on its own handle, claim up to B jobs, ack them in one
** call and, finding none, wait for the queue's wake-up.  Each job's payload
** carries the time it was enqueued, so a worker knows each job's lag.
**
** Every second the main thread prints what that second saw: jobs
** enqueued and acked, claims that returned jobs and their mean and longest
** time, the lag's mean, 99th percentile and maximum, the backlog (jobs
** enqueued and not yet acked) and, read with sqlq_health(), what piles up
** in the database (dead rows, a history list, a WAL, a transaction gap).
** That is the measure of issue 21: a reader that holds an old snapshot
** (bench/run-hold.sh starts one) must not make the claim slow down.
**
** With --mix the jobs are not all alike, as in a queue that runs for
** months (bench/run-soak.sh): one in ten is enqueued with a delay of 1 to
** 3 s, one in twenty fails its first attempt and runs again after a
** backoff of 0.5 s, one in a thousand fails for good and stays dead.  The
** kind is the payload's byte after the stamp; a delayed job's stamp is its
** due time, and only first attempts count for the lag.
*/
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_int.h"

/* How long an idle worker waits for the wake-up before it looks again. */
#define STEADY_WAIT_S 0.1
/* How long the workers may take to finish the backlog after the producer
** stopped. */
#define STEADY_DRAIN_S 30.0
/* The backoff of a --mix job that fails once. */
#define MIX_BACKOFF_S 0.5

/* The kinds of job of --mix, in the payload's byte after the stamp. */
enum { MIX_PLAIN = 'x', MIX_DELAYED = 'd', MIX_FAILS_ONCE = 'f', MIX_DIES = 'k' };

/* The kind of the i-th job of a --mix run. */
static int mix_kind(long long i) {
  if (i % 1000 == 999) return MIX_DIES;
  if (i % 20 == 7) return MIX_FAILS_ONCE;
  if (i % 10 == 3) return MIX_DELAYED;
  return MIX_PLAIN;
}

/* What one second saw, added to by the workers under the lock. */
typedef struct steady_second {
  long long acked;
  long long retried; /* --mix: first attempts failed, to run again */
  long long died;    /* --mix: jobs failed for good */
  long long claims;  /* claims that returned jobs */
  int64_t claim_ns;  /* their total time */
  int64_t claim_max_ns;
  double *lag_us; /* the lags of the jobs claimed */
  long long n_lag, cap_lag;
} steady_second;

/* The state the producer, the workers and the main thread share. */
typedef struct steady {
  const bench_config *cfg;
  pthread_mutex_t lock; /* guards now, total_lag and the counts below */
  steady_second now;    /* the second being counted */
  double *total_lag;    /* every lag of the run (for the summary) */
  long long n_total, cap_total;
  int64_t total_claim_ns;
  long long total_claims;
  atomic_llong enqueued; /* jobs committed so far */
  atomic_llong acked;    /* jobs acked so far */
  atomic_llong died;     /* jobs failed for good so far (--mix) */
  atomic_int producing;  /* 1 while the producer runs */
  atomic_int stop;       /* the workers stop */
  atomic_int status;     /* first failure (SQLQ_*), else SQLQ_OK */
} steady;

/* Record the failure of a call, reporting it if it is the first. */
static void steady_fail(steady *s, sqlq_db *db, int rc, const char *what) {
  bench_report_first(&s->status, db, rc, what);
  atomic_store(&s->stop, 1);
  atomic_store(&s->producing, 0);
}

/* Append v to the array *a of *n values with room for *cap.  Returns 0,
** or -1 when out of memory. */
static int push_double(double **a, long long *n, long long *cap, double v) {
  if (*n == *cap) {
    long long cap2 = *cap ? *cap * 2 : 1024;
    double *a2 = realloc(*a, (size_t)cap2 * sizeof *a2);
    if (!a2) return -1;
    *a = a2;
    *cap = cap2;
  }
  (*a)[(*n)++] = v;
  return 0;
}

/* The producer: one job a commit, RATE a second, until the run's end. */
static void *steady_producer(void *arg) {
  steady *s = arg;
  const bench_config *cfg = s->cfg;
  sqlq_db *db = NULL;
  unsigned char *payload = bench_payload_new(cfg);
  int rc = payload ? sqlq_open(cfg->url, NULL, &db) : SQLQ_NOMEM;
  if (rc != SQLQ_OK) {
    steady_fail(s, db, rc, "bench: producer open");
  } else {
    int64_t start = cli_monotonic_ns(), period = 1000000000LL / cfg->steady_rate;
    int64_t end = start + cfg->seconds * 1000000000LL, next = start;
    for (long long i = 0; atomic_load(&s->producing); i++) {
      int64_t now = cli_monotonic_ns();
      if (now >= end) break;
      if (next > now) {
        cli_sleep_us((long)((next - now) / 1000));
        i--;
        continue;
      }
      if (now - next > 1000000000LL) next = now - 1000000000LL;
      int kind = cfg->mix ? mix_kind(i) : MIX_PLAIN;
      double delay = kind == MIX_DELAYED ? (double)(1 + i % 3) : 0;
      bench_stamp_at(payload, cli_realtime_us() + (int64_t)(delay * 1e6));
      if (cfg->mix) payload[BENCH_STAMP_BYTES] = (unsigned char)kind;
      sqlq_job_spec spec = {
        .payload = payload, .payload_len = (size_t)cfg->payload, .delay = delay};
      if ((rc = sqlq_enqueue(db, cfg->queue, &spec, NULL, NULL)) != SQLQ_OK) {
        steady_fail(s, db, rc, "bench: enqueue");
        break;
      }
      atomic_fetch_add(&s->enqueued, 1);
      next += period;
    }
  }
  atomic_store(&s->producing, 0);
  sqlq_close(db);
  free(payload);
  return NULL;
}

/* Count one claim of n jobs that took ns, with the lags of its jobs'
** first attempts. */
static int steady_count(steady *s, const sqlq_job *jobs, size_t n, int64_t ns) {
  int64_t now_us = cli_realtime_us();
  int bad = 0;
  pthread_mutex_lock(&s->lock);
  steady_second *sec = &s->now;
  sec->claims++;
  sec->claim_ns += ns;
  if (ns > sec->claim_max_ns) sec->claim_max_ns = ns;
  s->total_claims++;
  s->total_claim_ns += ns;
  for (size_t i = 0; i < n && !bad; i++) {
    if (jobs[i].attempts > 1) continue;
    double lag = (double)(now_us - bench_stamp_read(jobs[i].payload));
    bad = push_double(&sec->lag_us, &sec->n_lag, &sec->cap_lag, lag) != 0 ||
          push_double(&s->total_lag, &s->n_total, &s->cap_total, lag) != 0;
  }
  pthread_mutex_unlock(&s->lock);
  return bad ? -1 : 0;
}

/* Fail the jobs[0..n) of --mix that fail now, and put the others in
** refs[0..*k) to be acked. */
static int steady_sort(steady *s, sqlq_db *db, const sqlq_job *jobs, size_t n, sqlq_job_ref *refs,
                       size_t *k) {
  sqlq_fail_options once = SQLQ_OPTIONS_INIT(sqlq_fail_options), dies = once;
  once.backoff = MIX_BACKOFF_S;
  dies.dead = 1;
  long long retried = 0, died = 0;
  int rc = SQLQ_OK;
  for (size_t i = 0; i < n && rc == SQLQ_OK; i++) {
    int kind = s->cfg->mix ? jobs[i].payload[BENCH_STAMP_BYTES] : MIX_PLAIN;
    if (kind == MIX_DIES) {
      rc = sqlq_fail(db, jobs[i].id, jobs[i].token, "bench --mix: dies", &dies);
      died++;
    } else if (kind == MIX_FAILS_ONCE && jobs[i].attempts == 1) {
      rc = sqlq_fail(db, jobs[i].id, jobs[i].token, "bench --mix: fails once", &once);
      retried++;
    } else {
      refs[*k].id = jobs[i].id;
      refs[(*k)++].token = jobs[i].token;
    }
  }
  if (rc != SQLQ_OK) return rc;
  atomic_fetch_add(&s->died, died);
  pthread_mutex_lock(&s->lock);
  s->now.retried += retried;
  s->now.died += died;
  pthread_mutex_unlock(&s->lock);
  return SQLQ_OK;
}

/* A worker: claim up to B, ack them in one call; wait when none is due. */
static void *steady_worker(void *arg) {
  steady *s = arg;
  const bench_config *cfg = s->cfg;
  sqlq_db *db = NULL;
  sqlq_job_ref *refs = calloc((size_t)cfg->batch, sizeof *refs);
  int rc = refs ? sqlq_open(cfg->url, NULL, &db) : SQLQ_NOMEM;
  if (rc != SQLQ_OK) steady_fail(s, db, rc, "bench: worker open");
  while (rc == SQLQ_OK && !atomic_load(&s->stop)) {
    sqlq_job *jobs = NULL;
    size_t n = 0, acked = 0;
    int64_t t0 = cli_monotonic_ns();
    if ((rc = sqlq_claim(db, cfg->queue, (size_t)cfg->batch, NULL, &jobs, &n)) != SQLQ_OK) {
      steady_fail(s, db, rc, "bench: claim");
      break;
    }
    int64_t ns = cli_monotonic_ns() - t0;
    if (n == 0) {
      rc = sqlq_wait(db, cfg->queue, STEADY_WAIT_S);
      if (rc == SQLQ_TIMEOUT) rc = SQLQ_OK;
      if (rc != SQLQ_OK) steady_fail(s, db, rc, "bench: wait");
      continue;
    }
    if (steady_count(s, jobs, n, ns) != 0) {
      sqlq_jobs_free(jobs, n);
      steady_fail(s, db, SQLQ_NOMEM, "bench: out of memory");
      break;
    }
    size_t k = 0;
    rc = steady_sort(s, db, jobs, n, refs, &k);
    sqlq_jobs_free(jobs, n);
    if (rc != SQLQ_OK) {
      steady_fail(s, db, rc, "bench: fail");
      break;
    }
    if ((rc = sqlq_ack_batch(db, refs, k, &acked)) != SQLQ_OK) {
      steady_fail(s, db, rc, "bench: ack");
      break;
    }
    atomic_fetch_add(&s->acked, (long long)acked);
    pthread_mutex_lock(&s->lock);
    s->now.acked += (long long)acked;
    pthread_mutex_unlock(&s->lock);
  }
  sqlq_close(db);
  free(refs);
  return NULL;
}

/* A duration in milliseconds as JSON, rounded to the microsecond; null
** when there was nothing to measure. */
static json_t *ms_json(double ms) {
  return isnan(ms) ? json_null() : json_real(round(ms * 1000.0) / 1000.0);
}

/* Print a duration in milliseconds as text, "-" when there was nothing to
** measure. */
static void ms_text(double ms) {
  if (isnan(ms))
    printf(" %9s", "-");
  else
    printf(" %9.3f", ms);
}

/* What sqlq_health() says now, as an object of name: value; an empty
** object when it cannot say. */
static json_t *health_json(sqlq_db *db) {
  json_t *o = json_object();
  sqlq_health_item *items = NULL;
  size_t n = 0;
  if (o && db && sqlq_health(db, &items, &n) == SQLQ_OK)
    for (size_t i = 0; i < n; i++)
      json_object_set_new(o, items[i].name, json_integer((json_int_t)items[i].value));
  sqlq_health_items_free(items, n);
  return o;
}

/* The jobs enqueued and not yet acked or dead. */
static long long steady_backlog(const steady *s) {
  return atomic_load(&s->enqueued) - atomic_load(&s->acked) - atomic_load(&s->died);
}

/* Print the line of second t from sec (whose lags this sorts) with the
** backlog sampled for it, and take the health read on db. */
static int steady_print_second(const steady *s, long long t, steady_second *sec, long long enqueued,
                               long long backlog, sqlq_db *db) {
  bench_result lag = {0};
  bench_percentiles(sec->lag_us, sec->n_lag, &lag);
  double sum = 0;
  for (long long i = 0; i < sec->n_lag; i++) sum += sec->lag_us[i];
  double lag_mean = sec->n_lag ? sum / (double)sec->n_lag / 1000.0 : NAN;
  double lag_max = sec->n_lag ? sec->lag_us[sec->n_lag - 1] / 1000.0 : NAN;
  double claim_ms = sec->claims ? (double)sec->claim_ns / (double)sec->claims / 1e6 : NAN;
  double claim_max = sec->claims ? (double)sec->claim_max_ns / 1e6 : NAN;
  if (s->cfg->json) {
    json_t *o = json_pack(
      "{s:I, s:I, s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:I, s:o}", "t", (json_int_t)t, "enqueued",
      (json_int_t)enqueued, "acked", (json_int_t)sec->acked, "claims", (json_int_t)sec->claims,
      "claim_ms", ms_json(claim_ms), "claim_max_ms", ms_json(claim_max), "lag_ms",
      ms_json(lag_mean), "lag_p99_ms", ms_json(lag.p99_ms), "lag_max_ms", ms_json(lag_max),
      "backlog", (json_int_t)backlog, "health", health_json(db));
    if (o && s->cfg->mix) {
      json_object_set_new(o, "retried", json_integer((json_int_t)sec->retried));
      json_object_set_new(o, "died", json_integer((json_int_t)sec->died));
    }
    return bench_write_json(o);
  }
  if (t == 1)
    printf("%5s %8s %8s %7s %9s %9s %9s %9s %9s %8s\n", "t", "enqueued", "acked", "claims",
           "claim_ms", "claim_max", "lag_ms", "lag_p99", "lag_max", "backlog");
  printf("%5lld %8lld %8lld %7lld", t, enqueued, sec->acked, sec->claims);
  ms_text(claim_ms);
  ms_text(claim_max);
  ms_text(lag_mean);
  ms_text(lag.p99_ms);
  ms_text(lag_max);
  printf(" %8lld\n", backlog);
  return fflush(stdout) == 0 ? 0 : EXIT_SOFTWARE;
}

/* Print the summary of the whole run (sorting its lags). */
static int steady_print_summary(steady *s, const char *backend) {
  bench_result lag = {0};
  bench_percentiles(s->total_lag, s->n_total, &lag);
  double claim_ms =
    s->total_claims ? (double)s->total_claim_ns / (double)s->total_claims / 1e6 : NAN;
  long long enq = atomic_load(&s->enqueued), acked = atomic_load(&s->acked);
  const bench_config *cfg = s->cfg;
  if (cfg->json) {
    json_t *o =
      json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:o, s:o}", "summary", "steady",
                "backend", backend, "rate", (json_int_t)cfg->steady_rate, "seconds",
                (json_int_t)cfg->seconds, "workers", (json_int_t)cfg->workers, "batch",
                (json_int_t)cfg->batch, "enqueued", (json_int_t)enq, "acked", (json_int_t)acked,
                "claims", (json_int_t)s->total_claims, "claim_ms", ms_json(claim_ms), "lag_p50_ms",
                ms_json(lag.p50_ms), "lag_p99_ms", ms_json(lag.p99_ms));
    if (o && cfg->mix) json_object_set_new(o, "died", json_integer(atomic_load(&s->died)));
    return bench_write_json(o);
  }
  printf("steady: %s, %lld jobs/s for %lld s, %lld workers, batch %lld: enqueued %lld, acked %lld,"
         " %lld claims, claim mean",
         backend, cfg->steady_rate, cfg->seconds, cfg->workers, cfg->batch, enq, acked,
         s->total_claims);
  ms_text(claim_ms);
  printf(" ms, lag p50");
  ms_text(lag.p50_ms);
  printf(" ms, p99");
  ms_text(lag.p99_ms);
  printf(" ms\n");
  return fflush(stdout) == 0 ? 0 : EXIT_SOFTWARE;
}

/* Take the second counted so far out of s, leaving a fresh one. */
static steady_second steady_take(steady *s) {
  pthread_mutex_lock(&s->lock);
  steady_second sec = s->now;
  memset(&s->now, 0, sizeof s->now);
  pthread_mutex_unlock(&s->lock);
  return sec;
}

/* Print a line a second until the producer is done and the workers have
** acked what it enqueued (or STEADY_DRAIN_S passed).  Returns an exit
** code. */
static int steady_report(steady *s, sqlq_db *db) {
  int ec = 0;
  long long t = 0, enq_before = 0;
  int64_t start = cli_monotonic_ns(), drain_end = 0;
  while (ec == 0 && atomic_load(&s->status) == SQLQ_OK) {
    int64_t next = start + (t + 1) * 1000000000LL, now = cli_monotonic_ns();
    if (next > now) cli_sleep_us((long)((next - now) / 1000));
    t++;
    /* The line that ends the run is the one that saw the backlog gone:
    ** whether the producer is done is read before the backlog, and the
    ** backlog printed is the one the loop decides on. */
    int producing = atomic_load(&s->producing);
    long long backlog = steady_backlog(s);
    steady_second sec = steady_take(s);
    long long enq = atomic_load(&s->enqueued);
    ec = steady_print_second(s, t, &sec, enq - enq_before, backlog, db);
    free(sec.lag_us);
    enq_before = enq;
    if (producing) continue;
    if (backlog <= 0) break;
    if (!drain_end) drain_end = cli_monotonic_ns() + (int64_t)(STEADY_DRAIN_S * 1e9);
    if (cli_monotonic_ns() >= drain_end) {
      cli_error("bench: the workers did not finish the backlog within %.0f s", STEADY_DRAIN_S);
      ec = EXIT_TEMPFAIL;
    }
  }
  return ec;
}

int bench_steady_main(const bench_config *cfg) {
  steady s = {.cfg = cfg};
  pthread_mutex_init(&s.lock, NULL);
  atomic_store(&s.producing, 1);
  int ec = 0, rc;
  sqlq_db *db = NULL;
  cli_global g = {.url = cfg->url};
  if (!(db = cli_open(&g, &ec))) return ec;
  const char *backend = sqlq_backend(db);
  if ((rc = sqlq_init(db, NULL)) != SQLQ_OK) ec = cli_fail(db, rc, "bench: init");
  if (ec == 0 && (rc = sqlq_purge(db, cfg->queue, NULL)) != SQLQ_OK)
    ec = cli_fail(db, rc, "bench: purge");
  pthread_t producer, *workers = calloc((size_t)cfg->workers, sizeof *workers);
  int started = 0, producer_started = 0;
  if (ec == 0 && !workers) ec = cli_fail(db, SQLQ_NOMEM, "bench");
  for (; ec == 0 && started < cfg->workers; started++)
    if (pthread_create(&workers[started], NULL, steady_worker, &s) != 0) {
      cli_error("bench: cannot start a worker thread: %s", strerror(errno));
      ec = EXIT_SOFTWARE;
      break;
    }
  if (ec == 0 && pthread_create(&producer, NULL, steady_producer, &s) != 0) {
    cli_error("bench: cannot start the producer thread: %s", strerror(errno));
    ec = EXIT_SOFTWARE;
  } else if (ec == 0) {
    producer_started = 1;
  }
  if (ec == 0) ec = steady_report(&s, db);
  atomic_store(&s.producing, 0);
  atomic_store(&s.stop, 1);
  if (producer_started) pthread_join(producer, NULL);
  for (int i = 0; i < started; i++) pthread_join(workers[i], NULL);
  rc = atomic_load(&s.status);
  if (ec == 0 && rc != SQLQ_OK) ec = cli_exit_code(rc);
  if (ec == 0) ec = steady_print_summary(&s, backend);
  if ((rc = sqlq_purge(db, cfg->queue, NULL)) != SQLQ_OK && ec == 0)
    ec = cli_fail(db, rc, "bench: purge");
  free(s.now.lag_us);
  free(s.total_lag);
  free(workers);
  pthread_mutex_destroy(&s.lock);
  sqlq_close(db);
  return ec;
}
