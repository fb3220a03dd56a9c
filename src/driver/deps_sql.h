/*
** deps_sql.h -- the SQL text of dependencies (schema version 7) that the
** dialects share word for word; a dialect that needs other words
** (PostgreSQL's casts, each dialect's clock and string concatenation)
** writes its own entry instead.  See SQLQ__SQL_DEPS_* in sqlq_int.h.
*/
#ifndef SQLQ_DEPS_SQL_H
#define SQLQ_DEPS_SQL_H

#include "sqlq_int.h"

/* The condition a *_FREE ack statement adds: no job waits for this one. */
#define DEPS_SQL_FREE " AND awaited IS NULL"

/* The history copy of the job that the dialect's condition held ($1 id,
** $2 token) picks, with now the dialect's clock: the statement whose
** *_FREE twin each dialect needs, written once. */
#define DEPS_SQL_HISTORY_COPY(now, held) \
  "INSERT INTO sqlq_jobs_history (id, queue, priority, attempts, max_attempts," \
  " dedupe_key, group_key, payload, created_at, finished_at)" \
  " SELECT id, queue, priority, attempts, max_attempts, dedupe_key, group_key," \
  " payload, created_at, " now " FROM sqlq_jobs WHERE " held

/* A ready job that waits for others. */
#define DEPS_SQL_WAITING "state = 'ready' AND run_at >= " SQLQ__WAITING_SQL

#define DEPS_SQL_AWAIT "UPDATE sqlq_jobs SET awaited = coalesce(awaited, 0) + 1 WHERE id = $1"
#define DEPS_SQL_ADD "INSERT INTO sqlq_deps (job_id, after_id) VALUES ($1, $2)"
#define DEPS_SQL_HOLD \
  "UPDATE sqlq_jobs SET run_at = " SQLQ__WAITING_SQL " + $3, waits = $2 WHERE id = $1"

/* now: the dialect's clock in microseconds.  run_at is assigned before
** waits, so that it reads the old count on MariaDB too (whose single-table
** UPDATE assigns from left to right). */
#define DEPS_SQL_RELEASE(now) \
  "UPDATE sqlq_jobs SET run_at = CASE WHEN waits = 1 AND " DEPS_SQL_WAITING " THEN " now \
  " + (run_at - " SQLQ__WAITING_SQL ") ELSE run_at END, waits = waits - 1" \
  " WHERE id IN (SELECT job_id FROM sqlq_deps WHERE after_id = $1)"
#define DEPS_SQL_READY \
  "SELECT j.queue, count(*) FROM sqlq_deps d JOIN sqlq_jobs j ON j.id = d.job_id" \
  " WHERE d.after_id = $1 AND j.waits = 0 AND j.state = 'ready'" \
  " AND j.run_at < " SQLQ__WAITING_SQL " GROUP BY j.queue"
#define DEPS_SQL_DONE "DELETE FROM sqlq_deps WHERE after_id = $1"

/* The dependents of the jobs of queue q. */
#define DEPS_SQL_OF_QUEUE(q) \
  "SELECT d.job_id FROM sqlq_deps d JOIN sqlq_jobs a ON a.id = d.after_id WHERE a.queue = " q
/* The waiting dependents of the jobs of queue $1 die; concat(a, b, c) is
** the dialect's concatenation of a number between two strings. */
#define DEPS_SQL_KILL(q, concat) \
  "UPDATE sqlq_jobs SET state = 'dead', last_error = " concat( \
    "'dependency '", \
    "(SELECT min(d.after_id) FROM sqlq_deps d JOIN sqlq_jobs a ON a.id = d.after_id" \
    " WHERE d.job_id = sqlq_jobs.id AND a.queue = " q ")", \
    "' was purged before it succeeded'") " WHERE " DEPS_SQL_WAITING \
                                         " AND id IN (" DEPS_SQL_OF_QUEUE(q) ")"
#define DEPS_SQL_FORGET(q) \
  "DELETE FROM sqlq_deps WHERE after_id IN (SELECT id FROM sqlq_jobs WHERE queue = " q \
  " AND awaited IS NOT NULL) OR job_id IN (SELECT id FROM sqlq_jobs WHERE queue = " q \
  " AND waits IS NOT NULL)"

/* The entries of a dialect whose clock is now, whose concatenation is
** concat, and whose queue parameter is written q. */
#define DEPS_SQL_ENTRIES(now, q, concat) \
  [SQLQ__SQL_DEPS_AWAIT] = DEPS_SQL_AWAIT, [SQLQ__SQL_DEPS_ADD] = DEPS_SQL_ADD, \
  [SQLQ__SQL_DEPS_HOLD] = DEPS_SQL_HOLD, [SQLQ__SQL_DEPS_RELEASE] = DEPS_SQL_RELEASE(now), \
  [SQLQ__SQL_DEPS_READY] = DEPS_SQL_READY, [SQLQ__SQL_DEPS_DONE] = DEPS_SQL_DONE, \
  [SQLQ__SQL_DEPS_KILL] = DEPS_SQL_KILL(q, concat), [SQLQ__SQL_DEPS_FORGET] = DEPS_SQL_FORGET(q)

/* a || b || c, the standard concatenation (SQLite, PostgreSQL, Firebird). */
#define DEPS_SQL_PIPES(a, b, c) a " || " b " || " c
/* MariaDB's. */
#define DEPS_SQL_CONCAT(a, b, c) "concat(" a ", " b ", " c ")"

#endif /* SQLQ_DEPS_SQL_H */
