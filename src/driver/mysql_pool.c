/*
** mysql_pool.c -- a pool's next item in four steps, in one transaction.
**
** 1. The turn (MY_SQL_POOL_TURN): SELECT ... FOR UPDATE of the pool's
**    first item by name.  Callers of one pool wait for each other there
**    and so take turns.  (With SKIP LOCKED alone, a caller that finds the
**    least recently used item locked takes the next one, and under
**    contention the items' turns drift apart.)
** 2. The pick (sql[SQLQ__SQL_POOL_NEXT]): the free item least recently
**    used, ties to the lowest id, by a locking read, which reads the newest
**    committed rows: the stamps of the callers before.
** 3. The stamp (MY_SQL_POOL_STAMP): an UPDATE of that one row by its id,
**    with the clock or one microsecond past the pool's newest stamp.
** 4. The read (MY_SQL_POOL_PICKED) of the row as stamped, whose row the
**    statement then shows.
**
** The UPDATE names its row by id and holds no LIMIT, SKIP LOCKED or clock
** of the client, so it replays identically under statement-based
** replication.  A pick outside a transaction (SQLQ__TX_SINGLE) opens its
** own, as the claim does.  No free item: the statement shows no row.
*/
#include <stdlib.h>

#include "mysql_int.h"

/* Steps 1 to 4 inside the open transaction. */
static int pick_and_stamp(sqlq_db *db, sqlq__stmt *st) {
  const sqlq_driver *d = db->drv_methods;
  const char *pool = st->params[0].buffer;
  const char *params[4] = {pool, NULL, NULL, NULL};
  long long ints[4] = {0, st->ints[1], st->ints[2], 0};
  sqlq__stmt *turn, *stamp, *picked;
  int rc = sqlq__my_run(db, MY_SQL_POOL_TURN, 1, params, NULL, &turn);
  d->reset(turn);
  if (rc == SQLQ_OK) rc = sqlq__my_execute(db, st);
  if (rc == SQLQ_OK) rc = sqlq__my_fetch(db, st);
  if (rc != SQLQ__ROW) return rc == SQLQ__DONE ? SQLQ_OK : rc;
  ints[3] = d->column_int64(st, 0);
  rc = sqlq__my_run(db, MY_SQL_POOL_STAMP, 4, params, ints, &stamp);
  d->reset(stamp);
  if (rc != SQLQ_OK) return rc;
  params[0] = NULL;
  ints[0] = ints[3];
  rc = sqlq__my_run(db, MY_SQL_POOL_PICKED, 1, params, ints, &picked);
  if (rc == SQLQ_OK) st->view = picked;
  return rc;
}

int sqlq__my_pool_next(sqlq_db *db, sqlq__stmt *st) {
  return sqlq__my_in_own_tx(db, st, pick_and_stamp);
}
