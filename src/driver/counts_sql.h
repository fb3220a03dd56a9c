/*
** counts_sql.h -- the SQL text of sqlq_counts (schema version 13), which
** the dialects share word for word but for how a NULL queue parameter is
** typed, what an INSERT says when the row is there, and the types of the
** table's columns.  See SQLQ__SQL_COUNTS_* in sqlq_int.h, src/counts.c
** and docs/schema.md, "Counts".
*/
#ifndef SQLQ_COUNTS_SQL_H
#define SQLQ_COUNTS_SQL_H

#include "sqlq_int.h"

#define COUNTS_SQL_COLUMNS "minute_at, queue, writer, enqueued, finished, failed, dead, detail"

/* The table, made by create ("CREATE TABLE", or with IF NOT EXISTS where
** DDL commits at once and a migration cut short runs again), in a
** dialect whose column types are big (integers), queue (a queue's name)
** and text (the detail: up to 1000 ASCII bytes); tail ends the statement
** (a MariaDB engine). */
#define COUNTS_SQL_TABLE(create, big, queue, text, tail) \
  create " sqlq_counts (" \
         " minute_at  " big " NOT NULL," \
         " queue      " queue " NOT NULL," \
         " writer     " big " NOT NULL," \
         " enqueued   " big " NOT NULL," \
         " finished   " big " NOT NULL," \
         " failed     " big " NOT NULL," \
         " dead       " big " NOT NULL," \
         " detail     " text " NOT NULL," \
         " CONSTRAINT sqlq_counts_pk PRIMARY KEY (queue, minute_at, writer))" tail

/* The entries of a dialect whose INSERT ends in on_conflict when the row
** may be there ("": it fails with a unique key violation, which the
** database undoes alone) and whose queue parameter $1 is written qparam. */
#define COUNTS_SQL_ENTRIES(on_conflict, qparam) \
  [SQLQ__SQL_COUNTS_INSERT] = "INSERT INTO sqlq_counts (" COUNTS_SQL_COLUMNS ")" \
                              " VALUES ($1, $2, $3, $4, $5, $6, $7, $8)" on_conflict, \
  [SQLQ__SQL_COUNTS_UPDATE] = "UPDATE sqlq_counts SET enqueued = $4, finished = $5, failed = $6," \
                              " dead = $7, detail = $8" \
                              " WHERE queue = $2 AND minute_at = $1 AND writer = $3", \
  [SQLQ__SQL_COUNTS_PRUNE] = "DELETE FROM sqlq_counts WHERE minute_at < $1", \
  [SQLQ__SQL_COUNTS_READ] = \
    "SELECT " COUNTS_SQL_COLUMNS " FROM sqlq_counts" \
    " WHERE minute_at >= $2 AND (" qparam " IS NULL OR queue = " qparam ")"

#endif /* SQLQ_COUNTS_SQL_H */
