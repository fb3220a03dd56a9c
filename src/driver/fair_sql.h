/*
** fair_sql.h -- the SQL text of fair claiming (schema version 10) that
** several dialects share: now is the dialect's clock, empty its empty
** key (of the type of group_key), collate what makes its ORDER BY of keys
** compare bytes, first_n(n) its clause that keeps the first n rows.  See
** docs/schema.md, "Fair claiming".
*/
#ifndef SQLQ_FAIR_SQL_H
#define SQLQ_FAIR_SQL_H

/* $1 queue -> grouped, key, served of every tenant with a due ready job
** (served 0: never), in the order of turns.  It reads every due ready job
** of the queue once. */
#define FAIR_SQL_TENANTS(now, empty, collate) \
  "SELECT t.grouped, t.gkey, coalesce(s.served, 0) AS turn FROM" \
  " (SELECT DISTINCT CASE WHEN group_key IS NULL THEN 0 ELSE 1 END AS grouped," \
  "  coalesce(group_key, " empty ") AS gkey FROM sqlq_jobs" \
  "  WHERE queue = $1 AND state = 'ready' AND run_at <= " now ") t" \
  " LEFT JOIN sqlq_groups s ON s.queue = $1 AND s.grouped = t.grouped AND s.group_key = t.gkey" \
  " ORDER BY turn, t.grouped, t.gkey" collate

/* $1 queue $2 key $3 group_running $4 n -> the ids of the group's first
** n due ready jobs by (priority DESC, run_at, id) among its first
** group_running unfinished jobs by id (those that per-group limits let
** start): a read of at most group_running rows of sqlq_jobs_group and a
** sort of them. */
#define FAIR_SQL_PICK_GROUP(now, first_n) \
  "SELECT w.id FROM (SELECT id, state, run_at, priority FROM sqlq_jobs" \
  "  WHERE queue = $1 AND group_key = $2 AND state IN ('ready','running') ORDER BY id" first_n( \
    "$3") ") w WHERE w.state = 'ready' AND w.run_at <= " now \
          " ORDER BY w.priority DESC, w.run_at, w.id" first_n("$4")

/* $1 queue $2 n -> the ids of the first n due ready jobs without a group
** key. */
#define FAIR_SQL_PICK_FREE(now, first_n) \
  "SELECT id FROM sqlq_jobs WHERE queue = $1 AND group_key IS NULL AND state = 'ready'" \
  " AND run_at <= " now " ORDER BY priority DESC, run_at, id" first_n("$2")

/* $1 id $2 token $3 lease_us: the claim of one job, without its RETURNING
** clause. */
#define FAIR_SQL_TAKE(now) \
  "UPDATE sqlq_jobs SET state = 'running', attempts = attempts + 1," \
  " token = $2, lease_until = " now " + $3 WHERE id = $1 AND state = 'ready'"

/* The columns of a claimed job, in CLAIM's order. */
#define FAIR_SQL_COLUMNS \
  "id, priority, run_at, attempts, max_attempts, created_at, lease_until, group_key," \
  " dedupe_key, payload"

#define FAIR_SQL_FORGET "DELETE FROM sqlq_groups WHERE queue = $1"
#define FAIR_SQL_SERVED "UPDATE sqlq_queues SET fair_served = $2 WHERE queue = $1"

/* LIMIT n, for the dialects that have it. */
#define FAIR_SQL_LIMIT(n) " LIMIT " n

#endif
