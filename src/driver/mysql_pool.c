/*
** mysql_pool.c -- a pool's next item in five steps, in one transaction.
**
** 1. The turn (MY_SQL_POOL_TURN): SELECT ... FOR UPDATE of the pool's
**    first item by name.  Callers of one pool wait for each other there
**    and so take turns.  (With SKIP LOCKED alone, a caller that finds the
**    least recently used item locked takes the next one, and under
**    contention the items' turns drift apart.)
** 2. The pick (sql[SQLQ__SQL_POOL_NEXT]): the free item least recently
**    used, ties to the lowest id.
** 3. The pool's newest stamp (MY_SQL_POOL_NEWEST).
** 4. The stamp (MY_SQL_POOL_STAMP): an UPDATE of the item picked, by its
**    id, with the clock or one microsecond past the newest stamp.
** 5. The read (MY_SQL_POOL_PICKED) of the row as stamped, whose row the
**    statement then shows.
**
** Steps 1 to 3 are locking reads, which read the newest committed rows
** whatever the transaction's snapshot: the stamps of the callers before.
** The UPDATE names its row by id and gets the newest stamp as a value; it
** holds no LIMIT, SKIP LOCKED or clock of the client, so it replays
** identically under statement-based replication.  A pick outside a
** transaction (SQLQ__TX_SINGLE) opens its own, as the claim does.  No free
** item: the statement shows no row.
*/
#include "mysql_int.h"

/* Run driver statement id with n parameters (see sqlq__my_run) and read the
** integer of its first row into *out; SQLQ__DONE when it has no row. */
static int run_for_int(sqlq_db *db, int id, int n, const char *const *params, const long long *ints,
                       long long *out) {
  sqlq__stmt *st;
  int rc = sqlq__my_run(db, id, n, params, ints, &st);
  if (rc == SQLQ_OK) rc = sqlq__my_fetch(db, st);
  if (rc == SQLQ__ROW) *out = db->driver->column_int64(st, 0);
  db->driver->reset(st);
  return rc;
}

/* Steps 1 to 5 inside the open transaction, which they leave to the
** caller to commit. */
static int pick_and_stamp(sqlq_db *db, sqlq__stmt *st, int commit, int *committed) {
  (void)commit;
  (void)committed;
  const sqlq__driver *d = db->driver;
  const char *params[4] = {st->params[0].buffer, NULL, NULL, NULL};
  long long ints[4] = {0, st->ints[1], st->ints[2], 0}, ignored = 0;
  int rc = run_for_int(db, MY_SQL_POOL_TURN, 1, params, NULL, &ignored);
  if (rc == SQLQ__ROW || rc == SQLQ__DONE) rc = sqlq__my_execute(db, st);
  if (rc == SQLQ_OK) rc = sqlq__my_fetch(db, st);
  if (rc != SQLQ__ROW) return rc == SQLQ__DONE ? SQLQ_OK : rc;
  ints[3] = d->column_int64(st, 0);
  rc = run_for_int(db, MY_SQL_POOL_NEWEST, 1, params, NULL, &ints[0]);
  if (rc == SQLQ__DONE) return sqlq__error(db, SQLQ_ERROR, "mysql: the pool lost its items");
  if (rc != SQLQ__ROW) return rc;
  params[0] = NULL;
  sqlq__stmt *out;
  rc = sqlq__my_run(db, MY_SQL_POOL_STAMP, 4, params, ints, &out);
  d->reset(out);
  ints[0] = ints[3];
  if (rc == SQLQ_OK) rc = sqlq__my_run(db, MY_SQL_POOL_PICKED, 1, params, ints, &out);
  if (rc == SQLQ_OK) st->view = out;
  return rc;
}

int sqlq__my_pool_next(sqlq_db *db, sqlq__stmt *st) {
  return sqlq__my_in_own_tx(db, st, "START TRANSACTION", pick_and_stamp);
}
