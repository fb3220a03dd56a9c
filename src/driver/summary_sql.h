/*
** summary_sql.h -- the parts of SQLQ__SQL_SUMMARY (sqlq_summary(), see
** src/summary.c) that the dialects share.  Each dialect's statement finds
** its queues its own way, names each n.queue and the clock c.now, and
** defines SUMMARY_COUNT(cond): the jobs of n.queue that meet cond (on
** j.state and j.run_at), counted up to $2 + 1 whatever their number.
*/
#ifndef SQLQ_SUMMARY_SQL_H
#define SQLQ_SUMMARY_SQL_H

/* The four bounded counts, as the columns ready, scheduled, running and
** dead. */
#define SUMMARY_READY SUMMARY_COUNT("j.state = 'ready' AND j.run_at <= c.now") " AS ready, "
#define SUMMARY_SCHEDULED SUMMARY_COUNT("j.state = 'ready' AND j.run_at > c.now") " AS scheduled, "
#define SUMMARY_RUNNING SUMMARY_COUNT("j.state = 'running'") " AS running, "
#define SUMMARY_COUNTS \
  SUMMARY_READY SUMMARY_SCHEDULED SUMMARY_RUNNING SUMMARY_COUNT("j.state = 'dead'") " AS dead"

/* The columns paused (NULL when the queue has no row in sqlq_queues) and
** age (how long the oldest due job has been due, NULL when none), the
** second read from index (a dialect's hint, or ""). */
#define SUMMARY_PAUSED_AGE(index) \
  "(SELECT p.paused FROM sqlq_queues p WHERE p.queue = n.queue) AS paused," \
  " (SELECT c.now - min(j.run_at) FROM sqlq_jobs j" index " WHERE j.queue = n.queue" \
  " AND j.state = 'ready' AND j.run_at <= c.now) AS age"

/* A SUMMARY_COUNT for a dialect whose derived tables cannot name an outer
** column (so no count of a limited select): a probe for the ($2 + 1)-th
** job, SUMMARY_PROBE(cond), and only when it is not there (there are at
** most $2), a count of them all, from SUMMARY_WHERE(cond); SUMMARY_LIMIT
** is $2 as the dialect types it. */
#define SUMMARY_PROBED(cond) \
  "CASE WHEN " SUMMARY_PROBE(cond) " IS NULL THEN (SELECT count(*)" SUMMARY_WHERE( \
    cond) ") ELSE " SUMMARY_LIMIT " + 1 END"

/* The condition that keeps a queue: it has jobs, or a row in sqlq_queues. */
#define SUMMARY_KEPT "paused IS NOT NULL OR ready + scheduled + running + dead > 0"

#endif
