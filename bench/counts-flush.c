/*
** counts-flush.c -- what one flush of a handle's counts costs
** (docs/benchmarks.md, "Counts and their flush (schema version 13)").
**
** Usage: counts-flush URL [ROUNDS]
**
** Opens URL (making the schema), then ROUNDS times (default 200) enqueues
** one job on the queue "flushcost" (counted, not timed) and times
** sqlq_counts_flush(), which then writes that queue's row of sqlq_counts;
** prints the median, the 90th percentile and the longest, in
** microseconds.  Build it against the library of a build directory:
**   cc -O2 -Iinclude bench/counts-flush.c build/libsqlq.a \
**      -lsqlite3 -lpthread -ldl -lm -o /tmp/counts-flush
*/
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sqlq.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int order(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  sqlq_db *db = NULL;
  int n = argc > 2 ? atoi(argv[2]) : 200;
  double *took = malloc((size_t)(n > 0 ? n : 1) * sizeof *took);
  sqlq_job_spec spec = {0};
  if (argc < 2 || n < 1 || took == NULL) {
    fprintf(stderr, "usage: counts-flush URL [ROUNDS]\n");
    return 64;
  }
  if (sqlq_open(argv[1], NULL, &db) != SQLQ_OK || sqlq_init(db, NULL) != SQLQ_OK) {
    fprintf(stderr, "counts-flush: %s\n", sqlq_errmsg(db));
    return 69;
  }
  spec.payload = "x";
  spec.payload_len = 1;
  for (int i = 0; i < n; i++) {
    double t0;
    if (sqlq_enqueue(db, "flushcost", &spec, NULL, NULL) != SQLQ_OK) break;
    t0 = now();
    if (sqlq_counts_flush(db) != SQLQ_OK) break;
    took[i] = now() - t0;
    if (i == n - 1) {
      qsort(took, (size_t)n, sizeof *took, order);
      printf("flush of one queue, %d rounds: median %.0f us, p90 %.0f us, max %.0f us\n", n,
             took[n / 2] * 1e6, took[n * 9 / 10] * 1e6, took[n - 1] * 1e6);
      sqlq_purge(db, "flushcost", NULL);
      sqlq_close(db);
      free(took);
      return 0;
    }
  }
  fprintf(stderr, "counts-flush: %s\n", sqlq_errmsg(db));
  sqlq_close(db);
  free(took);
  return 70;
}
