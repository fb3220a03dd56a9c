/*
** cursor.c -- the claim cursors a handle keeps (see the dialects' CLAIM_LANES
** and docs/postgres.md and docs/firebird.md, "Claims under a long-held
** snapshot"): for each of the last few queues whose claims go by lanes,
** the text its dialect's CLAIM_LANES returned, passed back to the next
** claim and wait of the queue.  The text is the dialect's own; the core
** only keeps it.
**
** Claims by lanes cost more than a plain claim (a larger statement), and
** gain only when old row versions pile up in the claim's way, which makes
** the plain claim slow.  So a handle claims a queue plainly until its
** plain claims take, on average (a moving average that a single slow
** claim barely moves), more than SQLQ__SLOW_CLAIM_NS beyond the fastest
** claim it has seen of as many jobs (within a factor of two), and more
** than SLOW_FACTOR times that fastest claim (the round trip), then
** by lanes from then on, its first claim scanning every lane from its
** start.  (Going back to plain claims would step over everything once: a
** stall of tens of milliseconds while the snapshot is still held.)  The
** URL option lanes=on makes every claim go by lanes, lanes=off none.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sqlq_int.h"

/* A plain claim slower by this than the fastest of its size class, and by
** SLOW_FACTOR times that fastest claim, was slowed down by what it had to
** step over. */
#define SQLQ__SLOW_CLAIM_NS 2000000LL
#define SLOW_FACTOR 4

int sqlq__lanes(const sqlq_db *db) {
  return db->lanes && db->lanes_mode != SQLQ__LANES_OFF &&
         db->driver->sql[SQLQ__SQL_CLAIM_LANES] != NULL;
}

/* The queue's entry while its claims go by lanes, else NULL. */
static sqlq__cursor *find(sqlq_db *db, const char *queue) {
  for (int i = 0; i < SQLQ__CURSORS; i++) {
    sqlq__cursor *c = &db->cursors[i];
    if (c->started_ns && strcmp(c->queue, queue) == 0) return c;
  }
  return NULL;
}

/* Make queue's entry, in a free place or the one started longest ago. */
static sqlq__cursor *start(sqlq_db *db, const char *queue) {
  sqlq__cursor *c = &db->cursors[0];
  for (int i = 0; i < SQLQ__CURSORS && c->started_ns; i++)
    if (db->cursors[i].started_ns == 0 || db->cursors[i].started_ns < c->started_ns)
      c = &db->cursors[i];
  free(c->text);
  memset(c, 0, sizeof *c);
  snprintf(c->queue, sizeof c->queue, "%s", queue);
  c->started_ns = sqlq__monotonic_ns();
  return c;
}

int sqlq__cursor_get(sqlq_db *db, const char *queue, const char **text) {
  sqlq__cursor *c = NULL;
  if (sqlq__lanes(db)) {
    c = find(db, queue);
    /* With lanes=on, every claim goes by lanes.  (An entry taken over by
    ** another queue, the handle's fifth, starts afresh.) */
    if (c == NULL && db->lanes_mode == SQLQ__LANES_ON) c = start(db, queue);
  }
  *text = c ? c->text : NULL;
  return c != NULL;
}

void sqlq__cursor_put(sqlq_db *db, const char *queue, char *text) {
  sqlq__cursor *c = find(db, queue);
  if (c == NULL) {
    free(text);
    return;
  }
  free(c->text);
  c->text = text;
}

/* The size class of a claim that took jobs jobs: 0 or 1, 2-3, 4-7, ...,
** up to SQLQ__CLAIM_SIZES - 1 (128 and more). */
static int size_class(int jobs) {
  int k = 0;
  for (; jobs > 1 && k < SQLQ__CLAIM_SIZES - 1; jobs >>= 1) k++;
  return k;
}

void sqlq__claim_took(sqlq_db *db, const char *queue, int jobs, int64_t took_ns) {
  if (!sqlq__lanes(db) || db->lanes_mode != SQLQ__LANES_AUTO) return;
  int64_t *fastest = &db->claim_fastest_ns[size_class(jobs)];
  if (*fastest == 0 || took_ns < *fastest) *fastest = took_ns;
  /* The average of the last 16 or so of what each took beyond the
  ** fastest claim of its size class: a claim that took a hundred jobs is
  ** slower than one that took one for what it wrote, not for what it
  ** stepped over. */
  db->claim_excess_ns += (took_ns - *fastest - db->claim_excess_ns) / 16;
  int64_t excess = db->claim_excess_ns;
  if (excess > SQLQ__SLOW_CLAIM_NS && excess > SLOW_FACTOR * *fastest && find(db, queue) == NULL) {
    start(db, queue);
    db->claim_excess_ns = 0;
  }
}

void sqlq__cursors_free(sqlq_db *db) {
  for (int i = 0; i < SQLQ__CURSORS; i++) {
    free(db->cursors[i].text);
    memset(&db->cursors[i], 0, sizeof db->cursors[i]);
  }
}
