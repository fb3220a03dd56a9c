/*
** enqueue.c -- sqlq_enqueue(), sqlq_enqueue_batch() and sqlq_enqueue_after().
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sqlq_int.h"

/* Check one job spec against the handle's limits.  index and n place it
** in a batch for the message. */
static int check_spec(sqlq_db *db, const sqlq_job_spec *spec, size_t index, size_t n) {
  char where[48] = "", delay[64];
  if (n > 1) snprintf(where, sizeof where, "job %zu of the batch: ", index);
  snprintf(delay, sizeof delay, "%sdelay", where);
  if (spec->payload == NULL && spec->payload_len > 0)
    return sqlq__error(db, SQLQ_MISUSE, "%spayload is NULL but its length is %zu", where,
                       spec->payload_len);
  if (spec->payload_len > db->payload_limit)
    return sqlq__error(db, SQLQ_TOOBIG, "%spayload of %zu bytes is over the limit of %zu bytes",
                       where, spec->payload_len, db->payload_limit);
  if (spec->max_attempts < 0)
    return sqlq__error(db, SQLQ_MISUSE, "%smax_attempts is negative", where);
  int rc = sqlq__check_seconds(db, spec->delay, 1, delay);
  if (rc == SQLQ_OK) rc = sqlq__check_key(db, spec->dedupe_key, "dedupe key");
  if (rc == SQLQ_OK) rc = sqlq__check_key(db, spec->group_key, "group key");
  return rc;
}

/* Store one job; the caller holds a write transaction. */
static int insert_one(sqlq_db *db, const char *queue, const sqlq_job_spec *spec, int64_t *id,
                      int *duplicate) {
  const sqlq__driver *d = db->driver;
  /* Without a row, the dialect's last_insert_id() gives the id; without
  ** that either, the dedupe key was taken (see SQLQ__SQL_ENQUEUE). */
  sqlq__query q = {
    .sql = SQLQ__SQL_ENQUEUE, .row = sqlq__read_int64, .arg = id, .flags = SQLQ__Q_TAKEN};
  int rc = sqlq__run(db, &q, SQLQ__TEXT(queue), SQLQ__INT(spec->priority),
                     SQLQ__INT(sqlq__seconds_to_us(spec->delay)),
                     SQLQ__INT(spec->max_attempts ? spec->max_attempts : SQLQ_DEFAULT_MAX_ATTEMPTS),
                     SQLQ__TEXT(spec->dedupe_key), SQLQ__TEXT(spec->group_key),
                     SQLQ__BLOB(spec->payload ? spec->payload : "", spec->payload_len));
  if (rc != SQLQ_OK) return rc;
  *duplicate = q.taken || (q.rows == 0 && d->last_insert_id == NULL);
  if (!*duplicate && q.rows == 0) *id = d->last_insert_id(db);
  if (!*duplicate) return SQLQ_OK;
  q = (sqlq__query){.sql = SQLQ__SQL_DEDUPE_LOOKUP, .row = sqlq__read_int64, .arg = id};
  rc = sqlq__run(db, &q, SQLQ__TEXT(queue), SQLQ__TEXT(spec->dedupe_key));
  if (rc == SQLQ_OK && q.rows == 0)
    return sqlq__error(db, SQLQ_ERROR,
                       "a job was refused as a duplicate but no job holds its dedupe key");
  return rc;
}

/* The ids an array statement returns, into ids[0..n) when ids is set. */
struct got_ids {
  int64_t *ids;
  size_t n;
};

static int read_ids(sqlq_db *db, sqlq__stmt *st, void *arg) {
  struct got_ids *g = arg;
  if (g->ids && g->n) {
    *g->ids++ = db->driver->column_int64(st, 0);
    g->n--;
  }
  return SQLQ_OK;
}

/* Store specs[0..n) with one array statement (no dedupe keys among them);
** ids receives their ids when not NULL. */
static int insert_array(sqlq_db *db, const char *queue, const sqlq_job_spec *specs, size_t n,
                        int64_t *ids) {
  int64_t *ints = malloc(n * 3 * sizeof *ints);
  const char **groups = malloc(n * sizeof *groups);
  const void **payloads = malloc(n * sizeof *payloads);
  size_t *lens = malloc(n * sizeof *lens);
  int rc = SQLQ_OK;
  if (ints && groups && payloads && lens) {
    for (size_t i = 0; i < n; i++) {
      ints[i] = specs[i].priority;
      ints[n + i] = sqlq__seconds_to_us(specs[i].delay);
      ints[2 * n + i] = specs[i].max_attempts ? specs[i].max_attempts : SQLQ_DEFAULT_MAX_ATTEMPTS;
      groups[i] = specs[i].group_key;
      payloads[i] = specs[i].payload ? specs[i].payload : "";
      lens[i] = specs[i].payload_len;
    }
    struct got_ids g = {ids, n};
    sqlq__query q = {
      .sql = SQLQ__SQL_ENQUEUE_ARRAY, .row = read_ids, .arg = &g, .start = db->driver->take_ids};
    rc = sqlq__run(db, &q, SQLQ__TEXT(queue), SQLQ__INTS(ints, n), SQLQ__INTS(ints + n, n),
                   SQLQ__INTS(ints + 2 * n, n), SQLQ__TEXTS(groups, n),
                   SQLQ__BLOBS(payloads, lens, n));
    /* Ids grow in the order the rows were stored, whatever order the
    ** statement returns them in. */
    if (rc == SQLQ_OK && q.rows != n)
      rc = sqlq__error(db, SQLQ_ERROR, "stored %zu of %zu jobs", q.rows, n);
    else if (rc == SQLQ_OK && ids)
      qsort(ids, n, sizeof *ids, sqlq__id_order);
  } else {
    rc = sqlq__error(db, SQLQ_NOMEM, "out of memory");
  }
  free(ints);
  free(groups);
  free(payloads);
  free(lens);
  return rc;
}

/* Can specs[0..n) go through the array statement?  (Each chunk of
** sqlq__array_rows() jobs is one statement, within the driver's byte
** limit.) */
static int fits_array(sqlq_db *db, const sqlq_job_spec *specs, size_t n) {
  const sqlq__driver *d = db->driver;
  if (n < 2 || d->sql[SQLQ__SQL_ENQUEUE_ARRAY] == NULL) return 0;
  size_t bytes = 0, chunk = sqlq__array_rows(db, n);
  for (size_t i = 0; i < n; i++) {
    if (specs[i].dedupe_key) return 0; /* duplicates need the one-row path */
    bytes += specs[i].payload_len + (specs[i].group_key ? strlen(specs[i].group_key) : 0);
    if (d->array_bytes_max && bytes > d->array_bytes_max) return 0;
    if (i % chunk == chunk - 1) bytes = 0;
  }
  return 1;
}

int sqlq__register_queue(sqlq_db *db, const char *queue) {
  sqlq__query q = {.sql = SQLQ__SQL_QUEUE_REGISTER, .flags = SQLQ__Q_TAKEN};
  return db->driver->sql[q.sql] ? sqlq__run(db, &q, SQLQ__TEXT(queue)) : SQLQ_OK;
}

struct batch {
  const char *queue;
  const sqlq_job_spec *specs;
  size_t n;
  int64_t *ids;
  const int64_t *after; /* the jobs each waits for, sorted, no repeats */
  size_t n_after;       /* 0: none */
  int by_array;         /* with the array statement (fits_array) */
  int duplicate;        /* for a single job */
  size_t fresh;         /* jobs stored (not duplicates) */
};

static int insert_batch(sqlq_db *db, void *arg) {
  struct batch *b = arg;
  size_t fresh = 0;
  b->fresh = 0;
  /* Record the queue's name, so that stats list it even when it is empty. */
  int rc = SQLQ_OK;
  if ((rc = sqlq__register_queue(db, b->queue)) != SQLQ_OK) return rc;
  if (b->by_array) {
    size_t chunk = sqlq__array_rows(db, b->n);
    for (size_t at = 0; at < b->n; at += chunk) {
      size_t k = b->n - at < chunk ? b->n - at : chunk;
      if ((rc = insert_array(db, b->queue, b->specs + at, k, b->ids ? b->ids + at : NULL)) !=
          SQLQ_OK)
        return rc;
    }
    sqlq__owe_wake(db, b->queue, b->n > 1000000 ? 1000000 : (int)b->n);
    b->fresh = b->n;
    return SQLQ_OK;
  }
  for (size_t i = 0; i < b->n; i++) {
    int64_t id = 0;
    int dup = 0;
    if ((rc = insert_one(db, b->queue, &b->specs[i], &id, &dup)) != SQLQ_OK) return rc;
    if (b->n_after && !dup &&
        (rc = sqlq__deps_wait(db, id, b->after, b->n_after,
                              sqlq__seconds_to_us(b->specs[i].delay))) != SQLQ_OK)
      return rc;
    if (b->ids) b->ids[i] = id;
    b->duplicate = dup;
    fresh += !dup;
  }
  if (fresh) sqlq__owe_wake(db, b->queue, fresh > 1000000 ? 1000000 : (int)fresh);
  b->fresh = fresh;
  return SQLQ_OK;
}

int sqlq__enqueue_in_tx(sqlq_db *db, const char *queue, const sqlq_job_spec *spec, int64_t *id,
                        int *duplicate) {
  struct batch b = {.queue = queue, .specs = spec, .n = 1, .ids = id};
  int rc = insert_batch(db, &b);
  *duplicate = b.duplicate;
  return rc;
}

/* Check n job specs on queue. */
static int check_specs(sqlq_db *db, const char *queue, const sqlq_job_spec *specs, size_t n) {
  int rc = sqlq__check_queue(db, queue);
  if (rc != SQLQ_OK) return rc;
  if (n > 0 && specs == NULL) return sqlq__error(db, SQLQ_MISUSE, "job spec is NULL");
  for (size_t i = 0; i < n && rc == SQLQ_OK; i++) rc = check_spec(db, &specs[i], i, n);
  return rc;
}

/* Store n checked jobs in one transaction; *duplicate receives whether
** the last one was folded into an unfinished job with its dedupe key. */
static int enqueue(sqlq_db *db, const char *queue, const sqlq_job_spec *specs, size_t n,
                   int64_t *ids, int *duplicate) {
  int rc = sqlq__enter(db);
  if (rc == SQLQ_OK) rc = check_specs(db, queue, specs, n);
  if (rc != SQLQ_OK || n == 0) return rc;
  struct batch b = {.queue = queue, .specs = specs, .n = n, .ids = ids};
  b.by_array = fits_array(db, specs, n);
  /* One statement stores them when the dialect registers the queue in it
  ** and they fit one array statement, or when there is one job (whose
  ** duplicate, if any, is then only looked up). */
  const sqlq__driver *d = db->driver;
  unsigned kind = SQLQ__TX_WRITE;
  if (d->sql[SQLQ__SQL_QUEUE_REGISTER] == NULL &&
      (n == 1 || (b.by_array && sqlq__array_rows(db, n) == n)))
    kind |= SQLQ__TX_SINGLE;
  rc = sqlq__in_tx(db, kind, insert_batch, &b);
  *duplicate = b.duplicate;
  if (rc == SQLQ_OK) sqlq__count_enqueued(db, queue, b.fresh);
  sqlq__counts_flush_due(db);
  return rc;
}

SQLQ__API int sqlq_enqueue_batch(sqlq_db *db, const char *queue, const sqlq_job_spec *specs,
                                 size_t n, int64_t *ids) {
  int duplicate;
  return enqueue(db, queue, specs, n, ids, &duplicate);
}

SQLQ__API int sqlq_enqueue(sqlq_db *db, const char *queue, const sqlq_job_spec *spec,
                           int64_t *id_out, int *duplicate_out) {
  int64_t id = 0;
  int duplicate = 0;
  int rc = enqueue(db, queue, spec, 1, &id, &duplicate);
  if (rc == SQLQ_OK) {
    if (id_out) *id_out = id;
    if (duplicate_out) *duplicate_out = duplicate;
  }
  return rc;
}

/* Copy after[0..n) into *out, sorted, without repeats, into *n_out ids;
** SQLQ_MISUSE for an id below 1 or too many. */
static int sorted_ids(sqlq_db *db, const int64_t *after, size_t n, int64_t **out, size_t *n_out) {
  if (after == NULL || n == 0) return sqlq__error(db, SQLQ_MISUSE, "no jobs to wait for");
  if (n > SQLQ_AFTER_MAX)
    return sqlq__error(db, SQLQ_MISUSE, "a job may wait for at most %d jobs, not %zu",
                       SQLQ_AFTER_MAX, n);
  for (size_t i = 0; i < n; i++)
    if (after[i] < 1)
      return sqlq__error(db, SQLQ_MISUSE, "job id %lld is not a job id (1 or more)",
                         (long long)after[i]);
  return sqlq__id_set(db, after, n, out, n_out);
}

SQLQ__API int sqlq_enqueue_after(sqlq_db *db, const char *queue, const sqlq_job_spec *specs,
                                 size_t n, const int64_t *after, size_t n_after, int64_t *ids) {
  int64_t *sorted = NULL;
  int on = 0, rc = sqlq__enter(db);
  if (rc == SQLQ_OK) rc = check_specs(db, queue, specs, n);
  if (rc == SQLQ_OK) rc = sorted_ids(db, after, n_after, &sorted, &n_after);
  if (rc == SQLQ_OK) rc = sqlq__deps_on(db, &on);
  if (rc == SQLQ_OK && !on)
    rc = sqlq__error(db, SQLQ_SCHEMA,
                     "the database's schema is older than version %d, which has dependencies:"
                     " run `sqlq init`",
                     SQLQ__DEPS_VERSION);
  if (rc == SQLQ_OK && n > 0) {
    struct batch b = {
      .queue = queue, .specs = specs, .n = n, .ids = ids, .after = sorted, .n_after = n_after};
    rc = sqlq__in_tx(db, SQLQ__TX_WRITE, insert_batch, &b);
    if (rc == SQLQ_OK) sqlq__count_enqueued(db, queue, b.fresh);
  }
  free(sorted);
  return rc;
}
