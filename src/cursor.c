/*
** cursor.c -- the claim cursors a handle keeps (see claim.c, "Claim
** cursors"): for each of the last few queues it claimed, the text its
** dialect's CLAIM_LANES returned, passed back to the next claim and wait
** of the queue.  The text is the dialect's own; the core only keeps it,
** and drops it once it is SQLQ__CURSOR_LIFE_NS old so that a claim scans
** everything again now and then.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sqlq_int.h"

/* How long a cursor is used before a claim starts one afresh. */
#define SQLQ__CURSOR_LIFE_NS 300000000000LL

int sqlq__lanes(const sqlq_db *db) {
  return db->lanes && db->driver->sql[SQLQ__SQL_CLAIM_LANES] != NULL;
}

static sqlq__cursor *find(sqlq_db *db, const char *queue) {
  for (int i = 0; i < SQLQ__CURSORS; i++)
    if (db->cursors[i].text && strcmp(db->cursors[i].queue, queue) == 0) return &db->cursors[i];
  return NULL;
}

const char *sqlq__cursor_get(sqlq_db *db, const char *queue) {
  sqlq__cursor *c = find(db, queue);
  if (c == NULL || sqlq__monotonic_ns() - c->started_ns > SQLQ__CURSOR_LIFE_NS) return NULL;
  return c->text;
}

void sqlq__cursor_put(sqlq_db *db, const char *queue, int fresh, char *text) {
  sqlq__cursor *c = find(db, queue);
  if (c == NULL) {
    /* A free place, else the one started longest ago. */
    c = &db->cursors[0];
    for (int i = 0; i < SQLQ__CURSORS && c->text; i++)
      if (db->cursors[i].text == NULL || db->cursors[i].started_ns < c->started_ns)
        c = &db->cursors[i];
    free(c->text);
    c->text = NULL;
    snprintf(c->queue, sizeof c->queue, "%s", queue);
    fresh = 1;
  }
  free(c->text);
  c->text = text;
  if (fresh) c->started_ns = sqlq__monotonic_ns();
}

void sqlq__cursors_free(sqlq_db *db) {
  for (int i = 0; i < SQLQ__CURSORS; i++) {
    free(db->cursors[i].text);
    db->cursors[i].text = NULL;
  }
}
