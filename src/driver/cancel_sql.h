/*
** cancel_sql.h -- the SQL text of cancellation (schema version 9), which
** the dialects share word for word but for their clock.  See
** SQLQ__SQL_CANCEL* in sqlq_int.h and docs/schema.md, "Cancellation".
*/
#ifndef SQLQ_CANCEL_SQL_H
#define SQLQ_CANCEL_SQL_H

#include "sqlq_int.h"

/* A job that a cancel can still stop: ready (due, scheduled or waiting
** for others) or running. */
#define CANCEL_SQL_LIVE "id = $1 AND state IN ('ready', 'running')"

/* The entries of a dialect whose clock (integer microseconds) is now. */
#define CANCEL_SQL_ENTRIES(now) \
  [SQLQ__SQL_CANCEL_PEEK] = "SELECT queue FROM sqlq_jobs WHERE " CANCEL_SQL_LIVE, \
  [SQLQ__SQL_CANCEL] = "UPDATE sqlq_jobs SET state = 'dead', last_error = 'cancelled'," \
                       " cancelled_at = " now ", token = NULL, lease_until = NULL" \
                       " WHERE " CANCEL_SQL_LIVE, \
  [SQLQ__SQL_UNCANCEL_ID] = "UPDATE sqlq_jobs SET cancelled_at = NULL WHERE queue = $1" \
                            " AND id = $2 AND state = 'ready' AND cancelled_at IS NOT NULL", \
  [SQLQ__SQL_UNCANCEL_DEAD] = "UPDATE sqlq_jobs SET cancelled_at = NULL WHERE queue = $1" \
                              " AND state = 'dead' AND cancelled_at IS NOT NULL"

#endif /* SQLQ_CANCEL_SQL_H */
