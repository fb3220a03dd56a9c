/*
** list_sql.h -- SQLQ__SQL_LIST (sqlq_list()) as PostgreSQL and SQLite write
** it: a branch per listed state, each read in claim order from that
** state's partial index (a range of sqlq_jobs_due for the ready jobs that
** are not due) and cut at the limit, so that a queue's first jobs cost what
** the limit says, not a sort of the queue or a read of the whole table.
** The dialect defines LIST_BRANCH(st, cond): the jobs of queue $1 that cond
** keeps, listed as state st (SQLQ_STATE_*), in claim order, at most $3
** (-1: all), and none unless $2 asks for st or for every state (0).
*/
#ifndef SQLQ_LIST_SQL_H
#define SQLQ_LIST_SQL_H

#include "sqlq_int.h"

#define LIST_DUE LIST_BRANCH("1", "state = 'ready' AND run_at <= sqlq_now()")
#define LIST_SCHEDULED \
  LIST_BRANCH("4", "state = 'ready' AND run_at > sqlq_now() AND run_at < " SQLQ__WAITING_SQL)
#define LIST_WAITING LIST_BRANCH("6", "state = 'ready' AND run_at >= " SQLQ__WAITING_SQL)
#define LIST_RUNNING LIST_BRANCH("2", "state = 'running'")
#define LIST_DEAD LIST_BRANCH("3", "state = 'dead'")
/* The five branches, as a FROM item; the dialect orders and limits it. */
#define LIST_JOBS \
  "(" LIST_DUE " UNION ALL " LIST_SCHEDULED " UNION ALL " LIST_WAITING " UNION ALL " LIST_RUNNING \
  " UNION ALL " LIST_DEAD ") AS jobs"

#endif
