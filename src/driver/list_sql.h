/*
** list_sql.h -- SQLQ__SQL_LIST (sqlq_list()) as PostgreSQL and SQLite write
** it: a branch per listed state, each read in claim order from that
** state's partial index (a range of sqlq_jobs_due for the ready jobs that
** are not due) and cut at the limit, so that a queue's first jobs cost what
** the limit says, not a sort of the queue or a read of the whole table.
** The dialect defines LIST_BRANCH(st, from, cond): the jobs of queue $1
** that cond keeps, read from the FROM item from (sqlq_jobs, perhaps with a
** hint), listed as state st (SQLQ_STATE_*), in claim order, at most $3
** (-1: all), and none unless $2 asks for st or for every state (0); and
** LIST_DUE_FROM, the FROM item of the due jobs (whose order is the claim
** index's); and LIST_NOW, the clock every branch compares run_at with,
** one value for the whole statement, so that a job becoming due while the
** statement runs is listed by exactly one of the due and scheduled
** branches.
*/
#ifndef SQLQ_LIST_SQL_H
#define SQLQ_LIST_SQL_H

#include "sqlq_int.h"

/* The columns a listed job is read with, st its listed state. */
#define LIST_COLUMNS(st) \
  "id, " st " AS st, priority, attempts, max_attempts, run_at, created_at, lease_until," \
  " dedupe_key, group_key, last_error, payload"

#define LIST_DUE LIST_BRANCH("1", LIST_DUE_FROM, "state = 'ready' AND run_at <= " LIST_NOW)
#define LIST_SCHEDULED \
  LIST_BRANCH("4", "sqlq_jobs", \
              "state = 'ready' AND run_at > " LIST_NOW " AND run_at < " SQLQ__WAITING_SQL)
#define LIST_WAITING \
  LIST_BRANCH("6", "sqlq_jobs", "state = 'ready' AND run_at >= " SQLQ__WAITING_SQL)
#define LIST_RUNNING LIST_BRANCH("2", "sqlq_jobs", "state = 'running'")
#define LIST_DEAD LIST_BRANCH("3", "sqlq_jobs", "state = 'dead'")
/* The five branches, as a FROM item; the dialect orders and limits it. */
#define LIST_JOBS \
  "(" LIST_DUE " UNION ALL " LIST_SCHEDULED " UNION ALL " LIST_WAITING " UNION ALL " LIST_RUNNING \
  " UNION ALL " LIST_DEAD ") AS jobs"

#endif
