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
** claim barely moves), more than SQLQ__SLOW_CLAIM_NS and more than
** SLOW_FACTOR times the fastest claim it has seen (the round trip), then
** by lanes from then on, its first claim scanning every lane from its
** start.  (Going back to plain claims would step over everything once: a
** stall of tens of milliseconds while the snapshot is still held.)  The
** URL option lanes=on makes every claim go by lanes, lanes=off none.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sqlq_int.h"

/* A plain claim slower than this, and than SLOW_FACTOR times the fastest,
** was slowed down by what it had to step over. */
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
  sqlq__cursor *c = sqlq__lanes(db) ? find(db, queue) : NULL;
  /* With lanes=on, every claim goes by lanes.  (An entry taken over by
  ** another queue, the handle's fifth, starts afresh.) */
  if (c == NULL && sqlq__lanes(db) && db->lanes_mode == SQLQ__LANES_ON) c = start(db, queue);
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

void sqlq__claim_took(sqlq_db *db, const char *queue, int64_t took_ns) {
  if (!sqlq__lanes(db) || db->lanes_mode != SQLQ__LANES_AUTO) return;
  if (db->claim_fastest_ns == 0 || took_ns < db->claim_fastest_ns) db->claim_fastest_ns = took_ns;
  /* The average of the last 16 or so. */
  db->claim_average_ns += (took_ns - db->claim_average_ns) / 16;
  int64_t average = db->claim_average_ns;
  if (average > SQLQ__SLOW_CLAIM_NS && average > SLOW_FACTOR * db->claim_fastest_ns &&
      find(db, queue) == NULL) {
    start(db, queue);
    db->claim_average_ns = 0;
  }
}

void sqlq__cursors_free(sqlq_db *db) {
  for (int i = 0; i < SQLQ__CURSORS; i++) {
    free(db->cursors[i].text);
    memset(&db->cursors[i], 0, sizeof db->cursors[i]);
  }
}
