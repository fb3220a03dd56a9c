/*
** serve_metrics.c -- GET /metrics of `sqlq serve`, in Prometheus' text
** exposition format (version 0.0.4), as `promtool check metrics` accepts
** it: per queue, its jobs by state, whether it is paused and the age of its
** oldest due job; the database's health items (sqlq_health()); whether
** the database answered; and the server's own request counters.  One
** sqlq_summary() and one sqlq_health() per scrape (docs/serve.md).  The counters of jobs enqueued,
** finished, failed and dead, the claim and lag histograms and the lock
** counters come from the rows of sqlq_counts that the handles using the
** database write (serve_counts.c): one sqlq_counts() more.
*/
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "serve.h"

/* A growing text; on memory running out it keeps failed set and drops what
** follows. */
typedef struct text {
  char *p;
  size_t len, cap;
  int failed;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *fmt, ...) {
  va_list ap;
  int n;
  if (t->failed) {
    return;
  }
  for (;;) {
    va_start(ap, fmt);
    n = vsnprintf(t->p ? t->p + t->len : NULL, t->p ? t->cap - t->len : 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
      t->failed = 1;
      return;
    }
    if (t->p != NULL && (size_t)n < t->cap - t->len) {
      t->len += (size_t)n;
      return;
    }
    size_t cap = (t->cap + (size_t)n + 1) * 2;
    char *p = realloc(t->p, cap);
    if (p == NULL) {
      t->failed = 1;
      return;
    }
    t->p = p;
    t->cap = cap;
  }
}

/* Length of the valid UTF-8 sequence at s (of at most n bytes), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n) {
  size_t len, i;
  uint32_t c;
  if (s[0] < 0x80) {
    return 1;
  } else if (s[0] >= 0xc2 && s[0] <= 0xdf) {
    len = 2, c = s[0] & 0x1f;
  } else if (s[0] >= 0xe0 && s[0] <= 0xef) {
    len = 3, c = s[0] & 0x0f;
  } else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
    len = 4, c = s[0] & 0x07;
  } else {
    return 0;
  }
  if (len > n) {
    return 0;
  }
  for (i = 1; i < len; i++) {
    if ((s[i] & 0xc0) != 0x80) {
      return 0;
    }
    c = (c << 6) | (s[i] & 0x3f);
  }
  if ((len == 3 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff))) ||
      (len == 4 && (c < 0x10000 || c > 0x10ffff))) {
    return 0;
  }
  return len;
}

/* Put s as a label value: backslash, double quote and newline escaped as
** the format says; other control characters and bytes that are not UTF-8
** written as the text \xHH, so that the value is always valid UTF-8. */
static void put_label(text *t, const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  size_t n = strlen(s), i = 0;
  while (i < n) {
    size_t len = utf8_len(p + i, n - i);
    if (p[i] == '\\' || p[i] == '"') {
      put(t, "\\%c", p[i]);
    } else if (p[i] == '\n') {
      put(t, "\\n");
    } else if (len == 0 || p[i] < 0x20 || p[i] == 0x7f) {
      put(t, "\\\\x%02x", p[i]);
    } else {
      put(t, "%.*s", (int)len, s + i);
      i += len;
      continue;
    }
    i++;
  }
}

/* Put the HELP and TYPE lines of the gauge name. */
static void put_gauge(text *t, const char *name, const char *help) {
  put(t, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

/* Put one sample "name{label="value"" of a family, its other labels and
** value still to come. */
static void put_sample(text *t, const char *name, const char *label, const char *value) {
  put(t, "%s{%s=\"", name, label);
  put_label(t, value);
  put(t, "\"");
}

static void put_queue_metrics(text *t, const sqlq_queue_summary *st, size_t n) {
  static const char *const states[] = {"ready", "scheduled", "running", "dead"};
  size_t i, k;
  put_gauge(t, "sqlq_queue_jobs", "Jobs of a queue by state (scheduled includes waiting).");
  for (i = 0; i < n; i++) {
    const int64_t counts[] = {st[i].ready, st[i].scheduled, st[i].running, st[i].dead};
    for (k = 0; k < 4; k++) {
      put_sample(t, "sqlq_queue_jobs", "queue", st[i].queue);
      put(t, ",state=\"%s\"} %" PRId64 "\n", states[k], counts[k]);
    }
  }
  put_gauge(t, "sqlq_queue_paused", "Whether a queue is paused (1) or not (0).");
  for (i = 0; i < n; i++) {
    put_sample(t, "sqlq_queue_paused", "queue", st[i].queue);
    put(t, "} %d\n", st[i].paused ? 1 : 0);
  }
  put_gauge(t, "sqlq_queue_oldest_ready_age_seconds",
            "Seconds the longest-waiting due job has been due (0 when none is due).");
  for (i = 0; i < n; i++) {
    put_sample(t, "sqlq_queue_oldest_ready_age_seconds", "queue", st[i].queue);
    put(t, "} %.6f\n",
        st[i].oldest_ready_age_us >= 0 ? (double)st[i].oldest_ready_age_us / 1e6 : 0.0);
  }
}

static void put_health_metrics(text *t, const sqlq_health_item *h, size_t n) {
  static const char *const names[] = {"sqlq_health_value", "sqlq_health_threshold",
                                      "sqlq_health_over"};
  static const char *const helps[] = {
    "A health item of the database (docs/health.md), in its unit.",
    "A health item's default threshold (0: none).", "Whether a health item is over its threshold."};
  size_t i, k;
  for (k = 0; k < 3; k++) {
    put_gauge(t, names[k], helps[k]);
    for (i = 0; i < n; i++) {
      put_sample(t, names[k], "item", h[i].name);
      if (k == 0) {
        put(t, ",unit=\"");
        put_label(t, h[i].unit);
        put(t, "\"");
      }
      put(t, "} %" PRId64 "\n", k == 0 ? h[i].value : k == 1 ? h[i].threshold : h[i].over);
    }
  }
}

/* Put the HELP and TYPE lines of the counter or histogram name. */
static void put_type(text *t, const char *name, const char *type, const char *help) {
  put(t, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Put a histogram's samples for queue: buckets b[] (not cumulative) and
** sum_us, with the bounds of sqlq_latency_bound(). */
static void put_histogram(text *t, const char *name, const char *queue, const int64_t *b,
                          int64_t sum_us) {
  int64_t count = 0;
  int i;
  for (i = 0; i < SQLQ_LATENCY_BUCKETS; i++) {
    count += b[i];
    put(t, "%s_bucket{queue=\"", name);
    put_label(t, queue);
    if (i < SQLQ_LATENCY_BUCKETS - 1) {
      put(t, "\",le=\"%g\"} %" PRId64 "\n", sqlq_latency_bound(i), count);
    } else {
      put(t, "\",le=\"+Inf\"} %" PRId64 "\n", count);
    }
  }
  put(t, "%s_sum{queue=\"", name);
  put_label(t, queue);
  put(t, "\"} %.6f\n", (double)sum_us / 1e6);
  put(t, "%s_count{queue=\"", name);
  put_label(t, queue);
  put(t, "\"} %" PRId64 "\n", count);
}

static void put_count_metrics(text *t, const serve_counts *c) {
  static const char *const names[] = {"sqlq_jobs_enqueued_total", "sqlq_jobs_finished_total",
                                      "sqlq_jobs_failed_total", "sqlq_jobs_dead_total"};
  static const char *const helps[] = {
    "Jobs enqueued through libsqlq (not by plain SQL), by queue.",
    "Jobs acked by the handle that claimed them, by queue.",
    "Attempts that failed with attempts left (the job runs again), by queue.",
    "Jobs that became dead (last attempt failed, failed dead, or cancelled), by queue."};
  int64_t locks = 0, busy = 0, lock_us = 0;
  size_t i, k;
  for (k = 0; k < 4; k++) {
    put_type(t, names[k], "counter", helps[k]);
    for (i = 0; i < c->n_totals; i++) {
      const sqlq_minute_counts *q = &c->totals[i];
      const int64_t v[] = {q->enqueued, q->finished, q->failed, q->dead};
      if (q->queue[0] != '\0') {
        put_sample(t, names[k], "queue", q->queue);
        put(t, "} %" PRId64 "\n", v[k]);
      }
    }
  }
  put_type(t, "sqlq_claim_duration_seconds", "histogram",
           "How long the claims of workers took (sqlq_claim() calls that succeeded), by queue.");
  for (i = 0; i < c->n_totals; i++) {
    if (c->totals[i].queue[0] != '\0') {
      put_histogram(t, "sqlq_claim_duration_seconds", c->totals[i].queue, c->totals[i].claims,
                    c->totals[i].claim_us);
    }
  }
  put_type(t, "sqlq_job_lag_seconds", "histogram",
           "Wake-up latency: from when a job was due (enqueued, retried or released) to its "
           "claim, by the database's clock, by queue.");
  for (i = 0; i < c->n_totals; i++) {
    if (c->totals[i].queue[0] != '\0') {
      put_histogram(t, "sqlq_job_lag_seconds", c->totals[i].queue, c->totals[i].lags,
                    c->totals[i].lag_us);
    }
  }
  for (i = 0; i < c->n_totals; i++) {
    locks += c->totals[i].locks;
    busy += c->totals[i].lock_busy;
    lock_us += c->totals[i].lock_us;
  }
  put_type(t, "sqlq_lock_acquires_total", "counter",
           "Named-lock acquisitions, by result (busy: not had in time).");
  put(t, "sqlq_lock_acquires_total{result=\"ok\"} %" PRId64 "\n", locks - busy);
  put(t, "sqlq_lock_acquires_total{result=\"busy\"} %" PRId64 "\n", busy);
  put_type(t, "sqlq_lock_wait_seconds_total", "counter",
           "Seconds spent acquiring named locks (waiting for them included).");
  put(t, "sqlq_lock_wait_seconds_total %.6f\n", (double)lock_us / 1e6);
}

void serve_metrics(serve_ctx *ctx, serve_reply *r) {
  sqlq_queue_summary *st = NULL;
  sqlq_health_item *items = NULL;
  size_t n = 0, n_items = 0;
  text t = {0};
  int64_t start = cli_monotonic_ns();
  /* Exact counts (the largest limit): a scrape is not a page polled by
  ** people, and a gauge that stops at a limit would mislead an alert. */
  int rc = sqlq_summary(ctx->db, NULL, SQLQ_SUMMARY_LIMIT_MAX, &st, &n), up, counted = 0;
  int64_t last_id = 0;
  if (rc == SQLQ_OK) {
    rc = sqlq_health(ctx->db, &items, &n_items);
  }
  /* A database without sqlq_counts (below schema version 13) has no
  ** counters; it is up all the same. */
  if (rc == SQLQ_OK && (counted = serve_counts_read(ctx)) == SQLQ_SCHEMA) {
    counted = 0;
  } else if (rc == SQLQ_OK) {
    rc = counted;
    counted = 1;
  }
  up = rc == SQLQ_OK;
  put_gauge(&t, "sqlq_up", "Whether the database answered this scrape (1) or not (0).");
  put(&t, "sqlq_up %d\n", up);
  if (up) {
    put_queue_metrics(&t, st, n);
    put_health_metrics(&t, items, n_items);
    if (counted) {
      put_count_metrics(&t, &ctx->counts);
    }
    /* Left out where the id sequence cannot be read (no right to it). */
    if (sqlq_last_job_id(ctx->db, &last_id) == SQLQ_OK) {
      put_type(&t, "sqlq_job_ids_total", "counter",
               "Job ids the database handed out: every job inserted, plain SQL included, on "
               "every queue.");
      put(&t, "sqlq_job_ids_total %" PRId64 "\n", last_id);
    }
  }
  put(&t,
      "# HELP sqlq_serve_requests_total Requests this sqlq serve answered, by class.\n"
      "# TYPE sqlq_serve_requests_total counter\n"
      "sqlq_serve_requests_total{class=\"ok\"} %" PRIu64 "\n"
      "sqlq_serve_requests_total{class=\"refused\"} %" PRIu64 "\n"
      "sqlq_serve_requests_total{class=\"failed\"} %" PRIu64 "\n"
      "# HELP sqlq_scrape_duration_seconds How long reading the database took for this "
      "scrape.\n"
      "# TYPE sqlq_scrape_duration_seconds gauge\n"
      "sqlq_scrape_duration_seconds %.6f\n",
      ctx->requests - ctx->refused - ctx->failed, ctx->refused, ctx->failed,
      (double)(cli_monotonic_ns() - start) / 1e9);
  sqlq_health_items_free(items, n_items);
  sqlq_queue_summaries_free(st, n);
  if (t.failed) {
    free(t.p);
    serve_reply_error(r, 500, "out of memory");
    return;
  }
  /* 200 also when the database did not answer: sqlq_up says so, and a
  ** scrape that fails would say nothing more. */
  r->status = 200;
  r->content_type = "text/plain; version=0.0.4; charset=utf-8";
  r->body = t.p;
  r->len = t.len;
}
