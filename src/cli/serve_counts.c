/*
** serve_counts.c -- what `sqlq serve` makes of the rows of sqlq_counts
** (sqlq_counts(), docs/serve.md): the counters and histograms of /metrics,
** and GET /api/v1/queues/Q/history.
**
** Counters: a row of sqlq_counts is one handle's counts of one queue in
** one minute, rewritten (growing) by that handle every few seconds and
** deleted after two hours, so a sum over the rows would fall when rows go.
** Instead each scrape reads the rows of the last few minutes
** (SERVE_COUNTS_WINDOW_S) and adds to this server's totals what each row
** grew by since the scrape before: the totals only grow, from what the
** window held at the first scrape.  A Prometheus counter restarts with the
** process anyway, which rate() expects.
*/
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "serve.h"

/* How far back each scrape reads: a row keeps growing until its minute is
** over and its writer flushed once more (5 s), and a scrape may come
** minutes after the one before. */
#define SERVE_COUNTS_WINDOW_S 600

/* The minutes of a queue's history. */
#define HISTORY_MINUTES 60

static int key_order(const sqlq_minute_counts *x, const sqlq_minute_counts *y) {
  int c = strcmp(x->queue, y->queue);
  if (c != 0) {
    return c;
  }
  if (x->minute_at != y->minute_at) {
    return x->minute_at < y->minute_at ? -1 : 1;
  }
  return x->writer < y->writer ? -1 : x->writer > y->writer;
}

/* A count's growth from was to now (0 when it fell: a row rewritten by
** something else than its writer). */
static int64_t grown(int64_t now, int64_t was) {
  return now > was ? now - was : 0;
}

/* Add to total what row grew by since was (NULL: since nothing). */
static void add_growth(sqlq_minute_counts *total, const sqlq_minute_counts *row,
                       const sqlq_minute_counts *was) {
  static const sqlq_minute_counts zero;
  int i;
  if (was == NULL) {
    was = &zero;
  }
  total->enqueued += grown(row->enqueued, was->enqueued);
  total->finished += grown(row->finished, was->finished);
  total->failed += grown(row->failed, was->failed);
  total->dead += grown(row->dead, was->dead);
  total->locks += grown(row->locks, was->locks);
  total->lock_busy += grown(row->lock_busy, was->lock_busy);
  total->lock_us += grown(row->lock_us, was->lock_us);
  total->claim_us += grown(row->claim_us, was->claim_us);
  total->lag_us += grown(row->lag_us, was->lag_us);
  for (i = 0; i < SQLQ_LATENCY_BUCKETS; i++) {
    total->claims[i] += grown(row->claims[i], was->claims[i]);
    total->lags[i] += grown(row->lags[i], was->lags[i]);
  }
}

/* The total of queue in c, added (zero) when missing; NULL when memory ran
** out. */
static sqlq_minute_counts *total_of(serve_counts *c, const char *queue) {
  size_t i;
  sqlq_minute_counts *t;
  for (i = 0; i < c->n_totals; i++) {
    if (strcmp(c->totals[i].queue, queue) == 0) {
      return &c->totals[i];
    }
  }
  t = realloc(c->totals, (c->n_totals + 1) * sizeof *t);
  if (t == NULL) {
    return NULL;
  }
  c->totals = t;
  t = &c->totals[c->n_totals];
  memset(t, 0, sizeof *t);
  if ((t->queue = strdup(queue)) == NULL) {
    return NULL;
  }
  c->n_totals++;
  return t;
}

static int total_order(const void *a, const void *b) {
  return strcmp(((const sqlq_minute_counts *)a)->queue, ((const sqlq_minute_counts *)b)->queue);
}

int serve_counts_read(serve_ctx *ctx) {
  serve_counts *c = &ctx->counts;
  sqlq_minute_counts *rows = NULL;
  size_t n = 0, i, k = 0;
  int64_t since = (int64_t)time(NULL) - SERVE_COUNTS_WINDOW_S;
  int rc;
  /* This server's own counts first (its cancels); a failure to write
  ** them leaves them for a later scrape. */
  sqlq_counts_flush(ctx->db);
  rc = sqlq_counts(ctx->db, NULL, since, &rows, &n);
  if (rc != SQLQ_OK) {
    return rc;
  }
  /* Both lists are in key order: walk them side by side. */
  for (i = 0; i < n; i++) {
    sqlq_minute_counts *t = total_of(c, rows[i].queue);
    int cmp = -1;
    while (k < c->n_seen && (cmp = key_order(&c->seen[k], &rows[i])) < 0) {
      k++;
    }
    if (t != NULL) {
      add_growth(t, &rows[i], k < c->n_seen && cmp == 0 ? &c->seen[k] : NULL);
    }
  }
  if (c->n_totals > 1) {
    qsort(c->totals, c->n_totals, sizeof *c->totals, total_order);
  }
  sqlq_minute_counts_free(c->seen, c->n_seen);
  c->seen = rows;
  c->n_seen = n;
  return SQLQ_OK;
}

void serve_counts_free(serve_counts *c) {
  sqlq_minute_counts_free(c->seen, c->n_seen);
  sqlq_minute_counts_free(c->totals, c->n_totals);
  memset(c, 0, sizeof *c);
}

/* GET /api/v1/queues/Q/history: the queue's counts of each of the last
** HISTORY_MINUTES minutes, the current one last, every writer's added. */
void serve_history(serve_ctx *ctx, const char *queue, serve_reply *r) {
  sqlq_minute_counts *rows = NULL;
  size_t n = 0, i;
  int64_t now = (int64_t)time(NULL) / 60 * 60;
  int64_t first = now - (HISTORY_MINUTES - 1) * 60;
  int64_t sums[HISTORY_MINUTES][4];
  int rc = sqlq_counts(ctx->db, queue, first, &rows, &n);
  json_t *minutes;
  if (rc != SQLQ_OK) {
    char message[512];
    snprintf(message, sizeof message, "counts: %s", sqlq_errmsg(ctx->db));
    serve_reply_error(r, serve_http_status(rc), message);
    return;
  }
  memset(sums, 0, sizeof sums);
  for (i = 0; i < n; i++) {
    int64_t m = (rows[i].minute_at - first) / 60;
    /* A writer whose clock runs ahead may have written a later minute. */
    if (m >= 0 && m < HISTORY_MINUTES) {
      sums[m][0] += rows[i].finished;
      sums[m][1] += rows[i].failed;
      sums[m][2] += rows[i].dead;
      sums[m][3] += rows[i].enqueued;
    }
  }
  sqlq_minute_counts_free(rows, n);
  minutes = json_array();
  for (i = 0; minutes != NULL && i < HISTORY_MINUTES; i++) {
    json_array_append_new(
      minutes, json_pack("{s:I,s:I,s:I,s:I,s:I}", "t", (json_int_t)(first + (int64_t)i * 60),
                         "finished", (json_int_t)sums[i][0], "failed", (json_int_t)sums[i][1],
                         "dead", (json_int_t)sums[i][2], "enqueued", (json_int_t)sums[i][3]));
  }
  serve_reply_json(r, json_pack("{s:o,s:o}", "queue", cli_json_text(queue), "minutes", minutes));
}
