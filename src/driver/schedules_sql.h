/*
** schedules_sql.h -- the SQL text of schedules (schema version 4) that
** several dialects share word for word: SQLite, MariaDB and Firebird take
** the writes as they are, SQLite and MariaDB the reads too.  A dialect
** that needs other words (PostgreSQL's casts and booleans, Firebird's
** typed NULL test) writes its own entry instead.
*/
#ifndef SQLQ_SCHEDULES_SQL_H
#define SQLQ_SCHEDULES_SQL_H

/* $1 name $2 spec $3 zone $4 queue $5 payload $6 missed $7 next_run. */
#define SCHEDULES_SQL_ADD \
  "INSERT INTO sqlq_schedules (name, spec, time_zone, queue, payload, missed, next_run)" \
  " VALUES ($1, $2, $3, $4, $5, $6, $7)"
#define SCHEDULES_SQL_REMOVE "DELETE FROM sqlq_schedules WHERE name = $1"
#define SCHEDULES_SQL_PAUSE "UPDATE sqlq_schedules SET paused = 1 WHERE name = $1"
#define SCHEDULES_SQL_RESUME "UPDATE sqlq_schedules SET paused = 0, next_run = $2 WHERE name = $1"

/* The columns every listing reads, in sqlq__sql_id's order. */
#define SCHEDULES_SQL_COLUMNS \
  "SELECT name, spec, time_zone, queue, payload, missed, paused, next_run, last_run" \
  " FROM sqlq_schedules"
#define SCHEDULES_SQL_LIST SCHEDULES_SQL_COLUMNS " WHERE $1 IS NULL OR name = $1 ORDER BY name"
#define SCHEDULES_SQL_DUE \
  SCHEDULES_SQL_COLUMNS " WHERE NOT paused AND next_run <= $1 ORDER BY next_run, name"
#define SCHEDULES_SQL_ADVANCE \
  "UPDATE sqlq_schedules SET next_run = $3, last_run = coalesce(nullif($4, 0), last_run)" \
  " WHERE name = $1 AND next_run = $2"
#define SCHEDULES_SQL_NEXT "SELECT min(next_run) FROM sqlq_schedules WHERE NOT paused"

/* The entries of a dialect's sql array: the writes alone (Firebird), or
** all of them but SQLQ__SQL_CRON_NOW (SQLite, MariaDB). */
#define SCHEDULES_SQL_WRITES \
  [SQLQ__SQL_CRON_ADD] = SCHEDULES_SQL_ADD, [SQLQ__SQL_CRON_REMOVE] = SCHEDULES_SQL_REMOVE, \
  [SQLQ__SQL_CRON_PAUSE] = SCHEDULES_SQL_PAUSE, [SQLQ__SQL_CRON_RESUME] = SCHEDULES_SQL_RESUME
#define SCHEDULES_SQL_ENTRIES \
  SCHEDULES_SQL_WRITES, \
    [SQLQ__SQL_CRON_LIST] = SCHEDULES_SQL_LIST, [SQLQ__SQL_CRON_DUE] = SCHEDULES_SQL_DUE, \
    [SQLQ__SQL_CRON_ADVANCE] = SCHEDULES_SQL_ADVANCE, [SQLQ__SQL_CRON_NEXT] = SCHEDULES_SQL_NEXT

#endif /* SQLQ_SCHEDULES_SQL_H */
