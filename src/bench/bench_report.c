/*
** bench_report.c -- figures, text, JSON and progress bar of `sqlq bench`.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <jansson.h>

#include "bench_int.h"

/* The width of the progress bar, in characters. */
#define BENCH_BAR_WIDTH 30
/* The shortest time between two redraws of the bar, in nanoseconds. */
#define BENCH_BAR_PERIOD_NS 100000000LL

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The p-th percentile of n sorted values by the nearest-rank method. */
static double nearest_rank(const double *sorted, long long n, double p) {
  long long rank = (long long)ceil(p / 100.0 * (double)n);
  if (rank < 1) rank = 1;
  return sorted[rank - 1];
}

void bench_percentiles(double *lat_us, long long n, bench_result *res) {
  res->n_samples = n;
  if (n == 0) {
    res->p50_ms = res->p90_ms = res->p99_ms = NAN;
    return;
  }
  qsort(lat_us, (size_t)n, sizeof *lat_us, cmp_double);
  res->p50_ms = nearest_rank(lat_us, n, 50) / 1000.0;
  res->p90_ms = nearest_rank(lat_us, n, 90) / 1000.0;
  res->p99_ms = nearest_rank(lat_us, n, 99) / 1000.0;
}

static int cmp_int64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

void bench_rate_figures(int64_t *starts, long long n, int64_t period_us, bench_result *res) {
  res->starts = n;
  res->most_in_window = 0;
  res->starts_span_s = 0;
  if (n == 0) return;
  qsort(starts, (size_t)n, sizeof *starts, cmp_int64);
  res->starts_span_s = (double)(starts[n - 1] - starts[0]) / 1e6;
  /* The window [starts[i], starts[i] + period_us) for each i: every
  ** window holding the most has one that begins at a start. */
  for (long long i = 0, j = 0; i < n; i++) {
    while (j < n && starts[j] - starts[i] < period_us) j++;
    if (j - i > res->most_in_window) res->most_in_window = j - i;
  }
}

/* The achieved rate of starts, per second: over the span from the first
** start to the last and one period more, the time that a rate of exactly
** N per period takes for them (its first N start at once). */
static double bench_starts_per_s(const bench_config *cfg, const bench_result *res) {
  return (double)res->starts / (res->starts_span_s + (double)cfg->rate_period_us / 1e6);
}

/* Jobs per second over a duration, 0 when the duration is not positive. */
static double bench_rate(long long jobs, double seconds) {
  return seconds > 0 ? (double)jobs / seconds : 0;
}

int bench_print_text(const bench_config *cfg, const bench_result *res) {
  printf("backend      %s\n", res->backend);
  printf("jobs         %lld (batch %lld, payload %lld B, backlog %lld)\n", cfg->jobs, cfg->batch,
         cfg->payload, cfg->backlog);
  printf("workers      %lld %s\n", cfg->workers, cfg->processes ? "processes" : "threads");
  printf("producers    %lld\n", cfg->producers);
  printf("enqueue      %.0f jobs/s\n", bench_rate(cfg->jobs, res->enqueue_s));
  printf("end to end   %.0f jobs/s (wall %.3f s)\n", bench_rate(cfg->jobs, res->total_s),
         res->total_s);
  if (res->busy) printf("busy         %lld calls answered SQLQ_BUSY, made again\n", res->busy);
  if (res->n_samples == 0)
    printf("latency      not measured (--latency-samples 0)\n");
  else
    printf("latency      p50 %.3f ms  p90 %.3f ms  p99 %.3f ms (%lld samples, "
           "idle %s)\n",
           res->p50_ms, res->p90_ms, res->p99_ms, res->n_samples,
           cfg->processes ? "processes" : "threads");
  if (cfg->rate_max) {
    char rate[96];
    cli_format_rate(cfg->rate_max, cfg->rate_period_us, rate, sizeof rate);
    printf("rate         %s: %lld starts in %.3f s, %.1f/s; at most %lld in any window of"
           " the period (bound %lld)\n",
           rate, res->starts, res->starts_span_s, bench_starts_per_s(cfg, res), res->most_in_window,
           (long long)cfg->rate_max);
  }
  return fflush(stdout) == 0 ? 0 : EXIT_SOFTWARE;
}

/* A latency figure in milliseconds rounded to the microsecond, or null. */
static json_t *bench_json_ms(double ms) {
  return isnan(ms) ? json_null() : json_real(round(ms * 1000.0) / 1000.0);
}

/* Build the JSON object: the contract keys first, then the extras. */
static json_t *bench_json(const bench_config *cfg, const bench_result *res) {
  json_t *lat = json_pack("{s:o, s:o, s:o}", "p50", bench_json_ms(res->p50_ms), "p90",
                          bench_json_ms(res->p90_ms), "p99", bench_json_ms(res->p99_ms));
  if (!lat) return NULL;
  json_t *o = json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:o, s:I, s:I, s:b, s:I, s:o, s:I, s:I}",
                        "backend", res->backend, "jobs", (json_int_t)cfg->jobs, "workers",
                        (json_int_t)cfg->workers, "batch", (json_int_t)cfg->batch, "enqueue_per_s",
                        (json_int_t)llround(bench_rate(cfg->jobs, res->enqueue_s)), "jobs_per_s",
                        (json_int_t)llround(bench_rate(cfg->jobs, res->total_s)), "latency_ms", lat,
                        "payload", (json_int_t)cfg->payload, "backlog", (json_int_t)cfg->backlog,
                        "processes", cfg->processes, "producers", (json_int_t)cfg->producers,
                        "claim_ms", bench_json_ms(res->claim_ms), "backlog_claimed",
                        (json_int_t)res->strays, "busy_retries", (json_int_t)res->busy);
  if (o && cfg->rate_max &&
      json_object_set_new(
        o, "rate",
        json_pack("{s:I, s:I, s:I, s:f, s:f, s:I}", "max_starts", (json_int_t)cfg->rate_max,
                  "period_us", (json_int_t)cfg->rate_period_us, "starts", (json_int_t)res->starts,
                  "span_s", res->starts_span_s, "per_s", bench_starts_per_s(cfg, res),
                  "most_in_window", (json_int_t)res->most_in_window)) != 0) {
    json_decref(o);
    return NULL;
  }
  return o;
}

int bench_write_json(json_t *obj) {
  if (!obj) {
    cli_error("bench: out of memory");
    return EXIT_SOFTWARE;
  }
  int rc = json_dumpf(obj, stdout, JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9));
  json_decref(obj);
  if (rc != 0 || fputc('\n', stdout) == EOF || fflush(stdout) != 0) {
    cli_error("bench: cannot write the result");
    return EXIT_SOFTWARE;
  }
  return 0;
}

int bench_print_json(const bench_config *cfg, const bench_result *res) {
  return bench_write_json(bench_json(cfg, res));
}

/* Whether the bar is drawn at all, decided once. */
static int bench_bar_enabled(void) {
  static int enabled = -1;
  if (enabled < 0) enabled = isatty(STDERR_FILENO) ? 1 : 0;
  return enabled;
}

/* When the bar was drawn last, and whether it is on screen.  Only the
** producer draws it, from one thread. */
static int64_t bar_drawn_ns;
static int bar_shown;

void bench_progress(const char *label, long long done, long long total) {
  if (!bench_bar_enabled() || total <= 0) return;
  int64_t now = cli_monotonic_ns();
  if (done < total && now - bar_drawn_ns < BENCH_BAR_PERIOD_NS) return;
  bar_drawn_ns = now;
  int filled = (int)(done * BENCH_BAR_WIDTH / total);
  char bar[BENCH_BAR_WIDTH + 1];
  for (int i = 0; i < BENCH_BAR_WIDTH; i++) bar[i] = i < filled ? '#' : '.';
  bar[BENCH_BAR_WIDTH] = '\0';
  fprintf(stderr, "\r%-8s [%s] %lld/%lld\033[K", label, bar, done, total);
  fflush(stderr);
  bar_shown = 1;
}

void bench_progress_end(void) {
  if (!bar_shown) return;
  fputs("\r\033[K", stderr);
  fflush(stderr);
  bar_shown = 0;
}

const char *bench_ops_unit(const bench_config *cfg) {
  return cfg->mode == BENCH_MODE_RING ? "pushes" : cfg->mode == BENCH_MODE_POOL ? "picks" : "jobs";
}

int bench_print_ops(const bench_config *cfg, const char *backend, double wall_s, long long busy) {
  static const char *const modes[] = {"jobs", "ring", "pool", "drain"};
  int ring = cfg->mode == BENCH_MODE_RING, drain = cfg->mode == BENCH_MODE_DRAIN;
  double rate = bench_rate(cfg->jobs, wall_s);
  if (cfg->json) {
    json_t *obj = json_pack(
      "{s:s, s:s, s:I, s:I, s:b, s:I, s:I, s:I, s:I, s:f, s:I}", "backend", backend, "mode",
      modes[cfg->mode], "ops", (json_int_t)cfg->jobs, "clients", (json_int_t)cfg->workers,
      "processes", cfg->processes, "payload", (json_int_t)(ring ? cfg->payload : 0), "size",
      (json_int_t)(ring    ? BENCH_RING_CAPACITY
                   : drain ? cfg->batch
                           : BENCH_POOL_ITEMS),
      "work_us", (json_int_t)cfg->work_us, "per_s", (json_int_t)llround(rate), "wall_s",
      round(wall_s * 1000.0) / 1000.0, "busy_retries", (json_int_t)busy);
    return bench_write_json(obj);
  }
  printf("backend      %s\n", backend);
  if (ring)
    printf("mode         ring pushes (capacity %d, payload %lld B)\n", BENCH_RING_CAPACITY,
           cfg->payload);
  else if (drain)
    printf("mode         drain queue %s (claim and ack %lld at a time, %lld us of work per job)\n",
           cfg->queue, cfg->batch, cfg->work_us);
  else
    printf("mode         pool picks (%d items)\n", BENCH_POOL_ITEMS);
  printf("clients      %lld %s\n", cfg->workers, cfg->processes ? "processes" : "threads");
  printf("throughput   %.0f %s/s (%lld in %.3f s)\n", rate, bench_ops_unit(cfg), cfg->jobs, wall_s);
  if (busy) printf("busy         %lld calls answered SQLQ_BUSY, made again\n", busy);
  return fflush(stdout) == 0 ? 0 : EXIT_SOFTWARE;
}
