/*
** sqlite_sql.c -- the SQL text of the SQLite dialect and its migrations.
**
** sqlq_now() is a function the driver registers on its connections: the
** host's clock in microseconds since the epoch (for an embedded database
** the host's clock is the database's clock).  Producers writing plain SQL
** get the same clock, at millisecond resolution, from the column defaults.
** Every ordering ends with the unique id, so claims are deterministic.
** SQLite builds a temporary B-tree for a RETURNING clause and for an IN list
** of three or more constants, so the hot statements avoid both: the enqueue
** reads its id from sqlite3_last_insert_rowid() (a taken dedupe key fails
** the INSERT on the unique index, which undoes only that statement: the
** driver's step says SQLQ__CONSTRAINT), and the state CHECK is
** written with OR.  The claim names its index: without statistics the planner would rather
** take the range run_at <= now on sqlq_jobs_due and sort every due job,
** which costs time in proportion to the queue's length.
*/
#include "cancel_sql.h"
#include "counts_sql.h"
#include "list_sql.h"
#include "summary_sql.h"
#include "deps_sql.h"
#include "fair_sql.h"
#include "schedules_sql.h"
#include "sqlite_int.h"

/* A job of a group may run only when fewer than the group limit of its
** queue (1 unless set: a FIFO group) of the earlier jobs of its group are
** unfinished, counted by a search that stops at the n-th.  GROUP_HEAD
** is the test of a database without per-group limits (below schema
** version 10). */
#define GROUP_EARLIER(then) \
  "SELECT 1 FROM sqlq_jobs g WHERE g.queue = j.queue AND g.group_key = j.group_key" \
  " AND g.state IN ('ready','running') AND g.id < j.id" then
#define GROUP_HEAD "(j.group_key IS NULL OR NOT EXISTS (" GROUP_EARLIER("") "))"
#define GROUP_N "(SELECT coalesce(max(group_running), 1) FROM sqlq_queues WHERE queue = $1)"
#define GROUP_ROOM \
  "(j.group_key IS NULL OR NOT EXISTS (" GROUP_EARLIER(" LIMIT 1 OFFSET " GROUP_N " - 1") "))"

/* The queue $1 has a concurrency limit and as many jobs running (with
** their leases current) as it allows: its ready jobs wait. */
#define FULL \
  "EXISTS (SELECT 1 FROM sqlq_queues q WHERE q.queue = $1 AND q.max_running IS NOT NULL" \
  " AND q.max_running <= (SELECT count(*) FROM sqlq_jobs r WHERE r.queue = $1" \
  "  AND r.state = 'running' AND r.lease_until > sqlq_now()))"

/* The claim's test of the queue's row (parameter $5: counted): paused,
** or limited (the test limited) while the claim did not count; and the
** same test on a database without concurrency limits (schema version 5 or
** below). */
#define PAUSED_IF(limited) \
  "EXISTS (SELECT 1 FROM sqlq_queues WHERE queue = $1" \
  " AND (paused OR ((" limited ") AND $5 = 0)))"
/* The queue's row names a concurrency limit; or a rate limit too (schema
** version 8); or is fair too (schema version 10), as a fair queue's
** claims also take turns on its row. */
#define LIMITED "max_running IS NOT NULL"
#define LIMITED_RATES LIMITED " OR rate_max IS NOT NULL"
#define LIMITED_GROUPS LIMITED_RATES " OR fair IS NOT NULL"
#define PAUSED PAUSED_IF(LIMITED)
/* PAUSED's row test as a statement: paused, limited. */
#define PAUSED_ROW(limited) "SELECT paused, " limited " FROM sqlq_queues WHERE queue = $1"
#define PAUSED_UNLIMITED "EXISTS (SELECT 1 FROM sqlq_queues WHERE queue = $1 AND paused)"

/* The claim, with paused as its test of the queue's row and head as its
** test of a job's group. */
#define CLAIM(paused, head) \
  "UPDATE sqlq_jobs SET state = 'running', attempts = attempts + 1," \
  " token = $2, lease_until = sqlq_now() + $3" \
  " WHERE id IN (SELECT j.id FROM sqlq_jobs j INDEXED BY sqlq_jobs_claim" \
  "  WHERE j.queue = $1 AND j.state = 'ready' AND j.run_at <= sqlq_now()" \
  "  AND " head " AND NOT " paused "  ORDER BY j.priority DESC, j.run_at, j.id LIMIT $4)" \
  " RETURNING id, priority, run_at, attempts, max_attempts, created_at," \
  " lease_until, group_key, dedupe_key, payload"

/* NEXT_DUE, whose due jobs are those that pass the tests head and waits
** too, and whose first due job is due at the expression at of its run_at
** j.run_at. */
#define NEXT_DUE_AT(head, waits, at) \
  "SELECT (SELECT paused FROM sqlq_queues WHERE queue = $1)," \
  " (SELECT " at " FROM sqlq_jobs j WHERE j.queue = $1 AND j.state = 'ready'" \
  "  AND " head waits " ORDER BY j.run_at LIMIT 1) - sqlq_now()," \
  " (SELECT min(lease_until) FROM sqlq_jobs" \
  "  WHERE queue = $1 AND state = 'running') - sqlq_now()"
#define NEXT_DUE(head, waits) NEXT_DUE_AT(head, waits, "j.run_at")
/* A job is due no sooner than the queue's rate frees its oldest slot. */
#define RATE_DUE \
  "max(j.run_at, coalesce((SELECT min(s.started_at) FROM sqlq_rate_starts s WHERE s.queue = $1)" \
  " + (SELECT rate_period FROM sqlq_queues WHERE queue = $1), 0))"
/* The slots up to ($2, $3) in slot order. */
#define SLOTS_UPTO(cmp) "queue = $1 AND (started_at, slot) " cmp " ($2, $3)"

#define NOW_DEFAULT "(CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER))"

#define HELD "id = $1 AND token = $2 AND state = 'running'"
#define ACK "DELETE FROM sqlq_jobs WHERE " HELD
#define HISTORY_COPY DEPS_SQL_HISTORY_COPY("sqlq_now()", HELD)

/* LIST_BRANCH of list_sql.h; a member of a compound select takes no
** ORDER BY of its own, hence the subquery. */
/* LIST_DUE_FROM of list_sql.h: left to itself, SQLite reads the due jobs
** from sqlq_jobs_due (queue, run_at) and sorts them all (75 ms for 300,000);
** the claim index gives them in order.  LIST_NOW: sqlq_now() reads the
** host's clock at each call, so the statement reads it once, into the
** materialized CTE list_clock (SQLQ__SQL_LIST). */
#define LIST_DUE_FROM "sqlq_jobs INDEXED BY sqlq_jobs_claim"
#define LIST_NOW "(SELECT now FROM list_clock)"
#define LIST_BRANCH(st, from, cond) \
  "SELECT * FROM (SELECT " LIST_COLUMNS(st) " FROM " from " WHERE queue = $1 AND " cond \
                                            " AND $2 IN (0, " st ")" \
                                            " ORDER BY priority DESC, run_at, id LIMIT $3)"

/* A recursive CTE named cte: the queues that have jobs in state s, from
** the first up, each found from the one before it in one descent of the
** state's partial index; none when $1 names a queue. */
#define SUMMARY_QUEUES(cte, s) \
  cte "(queue) AS (SELECT (SELECT queue FROM sqlq_jobs WHERE state = '" s "' ORDER BY queue" \
      " LIMIT 1) WHERE $1 IS NULL UNION ALL SELECT (SELECT j.queue FROM sqlq_jobs j" \
      " WHERE j.state = '" s "' AND j.queue > r.queue ORDER BY j.queue LIMIT 1)" \
      " FROM " cte " r WHERE r.queue IS NOT NULL)"
/* The jobs of queue n.queue that meet cond, counted up to $2 + 1. */
#define SUMMARY_COUNT(cond) \
  "(SELECT count(*) FROM (SELECT 1 FROM sqlq_jobs j WHERE j.queue = n.queue AND " cond \
  " LIMIT $2 + 1))"

const char *const sqlq__sqlite_sql[SQLQ__SQL_COUNT] = {
  [SQLQ__SQL_SCHEMA_TABLE] = "CREATE TABLE IF NOT EXISTS sqlq_schema ("
                             " version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)",
  [SQLQ__SQL_SCHEMA_VERSION] = "SELECT max(version) FROM sqlq_schema",
  [SQLQ__SQL_SCHEMA_RECORD] =
    "INSERT INTO sqlq_schema (version, applied_at) VALUES ($1, sqlq_now())",

  [SQLQ__SQL_ENQUEUE] =
    "INSERT INTO sqlq_jobs (queue, priority, run_at, max_attempts, dedupe_key,"
    " group_key, payload, created_at)"
    " SELECT $1, $2, now + $3, $4, $5, $6, $7, now FROM (SELECT sqlq_now() AS now)",
  [SQLQ__SQL_DEDUPE_LOOKUP] = "SELECT id FROM sqlq_jobs WHERE queue = $1 AND dedupe_key = $2"
                              " AND state IN ('ready','running')",

  [SQLQ__SQL_QUEUE_REGISTER] =
    "INSERT INTO sqlq_queues (queue) VALUES ($1) ON CONFLICT (queue) DO NOTHING",

  [SQLQ__SQL_REAP] = "UPDATE sqlq_jobs SET"
                     " state = CASE WHEN attempts >= max_attempts THEN 'dead' ELSE 'ready' END,"
                     " last_error = 'lease expired during attempt ' || attempts,"
                     " token = NULL, lease_until = NULL"
                     " WHERE queue = $1 AND state = 'running' AND lease_until <= sqlq_now()",
  [SQLQ__SQL_PAUSED] = PAUSED_ROW(LIMITED),
  [SQLQ__SQL_CLAIM] = CLAIM(PAUSED, GROUP_HEAD),

  [SQLQ__SQL_ACK] = ACK,
  [SQLQ__SQL_HISTORY_COPY] = HISTORY_COPY,
  [SQLQ__SQL_FAIL_PEEK] = "SELECT attempts, max_attempts, queue FROM sqlq_jobs"
                          " WHERE id = $1 AND token = $2 AND state = 'running'",
  [SQLQ__SQL_FAIL] = "UPDATE sqlq_jobs SET"
                     " state = CASE WHEN $3 THEN 'dead' ELSE 'ready' END,"
                     " run_at = CASE WHEN $3 THEN run_at ELSE sqlq_now() + $4 END,"
                     " last_error = $5, token = NULL, lease_until = NULL"
                     " WHERE id = $1 AND token = $2 AND state = 'running'",
  [SQLQ__SQL_RELEASE] = "UPDATE sqlq_jobs SET state = 'ready', attempts = max(attempts - 1, 0),"
                        " run_at = sqlq_now() + $3, token = NULL, lease_until = NULL"
                        " WHERE id = $1 AND token = $2 AND state = 'running' RETURNING queue",
  [SQLQ__SQL_TOUCH] = "UPDATE sqlq_jobs SET lease_until = sqlq_now() + $3"
                      " WHERE id = $1 AND token = $2 AND state = 'running' RETURNING lease_until",

  [SQLQ__SQL_NEXT_DUE] = NEXT_DUE(GROUP_HEAD, " AND NOT " FULL),
  [SQLQ__SQL_PAUSE_SET] = "INSERT INTO sqlq_queues (queue, paused) VALUES ($1, $2)"
                          " ON CONFLICT (queue) DO UPDATE SET paused = excluded.paused",
  [SQLQ__SQL_STATS] =
    "WITH clock(now) AS (SELECT sqlq_now())"
    " SELECT queue, sum(ready), sum(scheduled), sum(running), sum(dead), max(paused)"
    " FROM (SELECT queue, state = 'ready' AND run_at <= now AS ready,"
    "  state = 'ready' AND run_at > now AS scheduled, state = 'running' AS running,"
    "  state = 'dead' AS dead, 0 AS paused FROM sqlq_jobs, clock"
    "  WHERE $1 IS NULL OR queue = $1"
    "  UNION ALL SELECT queue, 0, 0, 0, 0, paused FROM sqlq_queues"
    "  WHERE $1 IS NULL OR queue = $1)"
    " GROUP BY queue ORDER BY queue",
  /* As PostgreSQL's (see there): queues from walks of the states' partial
  ** indexes, each count reading at most $2 entries of one. */
  [SQLQ__SQL_SUMMARY] =
    "WITH RECURSIVE clock(now) AS (SELECT sqlq_now()), " SUMMARY_QUEUES("ready_q", "ready") ", " SUMMARY_QUEUES(
      "running_q",
      "running") ", " SUMMARY_QUEUES("dead_q",
                                     "dead") ","
                                             " names(queue) AS (SELECT queue FROM ready_q UNION SELECT queue FROM running_q"
                                             "  UNION SELECT queue FROM dead_q UNION SELECT queue FROM sqlq_queues WHERE $1 IS NULL"
                                             "  UNION SELECT $1)"
                                             " SELECT queue, ready, scheduled, running, dead, coalesce(paused, 0), age"
                                             " FROM (SELECT n.queue, " SUMMARY_COUNTS
                                             ", " SUMMARY_PAUSED_AGE(
                                               "") "  FROM names n, clock c WHERE n.queue IS NOT NULL) WHERE " SUMMARY_KEPT
                                                   " ORDER BY queue",
  [SQLQ__SQL_LIST] = "WITH list_clock(now) AS MATERIALIZED (SELECT sqlq_now())"
                     " SELECT * FROM " LIST_JOBS " ORDER BY priority DESC, run_at, id LIMIT $3",
  [SQLQ__SQL_RETRY_ID] = "UPDATE OR IGNORE sqlq_jobs SET state = 'ready', attempts = 0,"
                         " run_at = sqlq_now(), token = NULL, lease_until = NULL"
                         " WHERE queue = $1 AND id = $2 AND state IN ('dead','ready')",
  [SQLQ__SQL_RETRY_DEAD] = "UPDATE OR IGNORE sqlq_jobs SET state = 'ready', attempts = 0,"
                           " run_at = sqlq_now(), token = NULL, lease_until = NULL"
                           " WHERE queue = $1 AND state = 'dead'",
  [SQLQ__SQL_PURGE] = "DELETE FROM sqlq_jobs WHERE queue = $1",
  [SQLQ__SQL_DELETE_DEAD_ID] = "DELETE FROM sqlq_jobs WHERE queue = $1 AND id = $2"
                               " AND state = 'dead' AND awaited IS NULL",

  /* Rings.  Writers take turns (BEGIN IMMEDIATE), so the counter needs no
  ** more care; there is no one-statement RING_PUSH, since a statement here
  ** cannot both update the counter and insert. */
  [SQLQ__SQL_RING_CREATE] = "INSERT INTO sqlq_rings (name, capacity, next_seq, created_at)"
                            " VALUES ($1, $2, 1, sqlq_now()) ON CONFLICT (name) DO NOTHING",
  [SQLQ__SQL_RING_INFO] = "SELECT capacity, next_seq - 1 FROM sqlq_rings WHERE name = $1",
  [SQLQ__SQL_RING_ADVANCE] = "UPDATE sqlq_rings SET next_seq = next_seq + $2 WHERE name = $1"
                             " RETURNING next_seq - $2, capacity",
  [SQLQ__SQL_RING_STORE] =
    "INSERT INTO sqlq_ring_entries (ring, slot, seq, at, payload)"
    " VALUES ($1, $2 % $3, $2, sqlq_now(), $4) ON CONFLICT (ring, slot) DO UPDATE"
    " SET seq = excluded.seq, at = excluded.at, payload = excluded.payload",
  [SQLQ__SQL_RING_READ] =
    "SELECT seq, at, payload FROM sqlq_ring_entries WHERE ring = $1 AND seq > $2"
    " ORDER BY seq LIMIT $3",
  [SQLQ__SQL_RING_CLEAR] = "DELETE FROM sqlq_ring_entries WHERE ring = $1",
  [SQLQ__SQL_RING_DROP] = "DELETE FROM sqlq_rings WHERE name = $1",

  /* Pools.  Writers take turns, so the least recently used free item is
  ** simply the first of the index. */
  [SQLQ__SQL_POOL_ADD] = "INSERT INTO sqlq_pool_items (pool, item) VALUES ($1, $2)"
                         " ON CONFLICT (pool, item) DO NOTHING",
  [SQLQ__SQL_POOL_REMOVE] = "DELETE FROM sqlq_pool_items WHERE pool = $1 AND item = $2",
  [SQLQ__SQL_POOL_LIST] = "SELECT id, item, last_used, uses,"
                          " CASE WHEN held_until > sqlq_now() THEN held_until END"
                          " FROM sqlq_pool_items WHERE pool = $1 ORDER BY last_used, id",
  [SQLQ__SQL_POOL_NEXT] =
    "UPDATE sqlq_pool_items SET"
    " last_used = max(clock.now, (SELECT max(m.last_used) + 1 FROM sqlq_pool_items m"
    "  WHERE m.pool = $1)),"
    " uses = uses + 1,"
    " held_until = CASE WHEN $2 > 0 THEN clock.now + $2 END,"
    " token = CASE WHEN $2 > 0 THEN $3 END"
    " FROM (SELECT sqlq_now() AS now) AS clock"
    " WHERE id = (SELECT f.id FROM sqlq_pool_items f WHERE f.pool = $1"
    "  AND (f.held_until IS NULL OR f.held_until <= clock.now)"
    "  ORDER BY f.last_used, f.id LIMIT 1)"
    " RETURNING id, item, last_used, uses, held_until",
  [SQLQ__SQL_POOL_COUNT] =
    "SELECT count(*) FROM sqlq_pool_items WHERE pool = $1 AND ($2 IS NULL OR item = $2)",
  [SQLQ__SQL_POOL_RELEASE] = "UPDATE sqlq_pool_items SET held_until = NULL, token = NULL"
                             " WHERE pool = $1 AND item = $2 AND token = $3",

  /* Listing (list.c; the named locks are sqlite_lock.c's lock_list). */
  [SQLQ__SQL_RING_LIST] = "SELECT name, capacity, next_seq - 1, created_at FROM sqlq_rings"
                          " WHERE $1 IS NULL OR name > $1 ORDER BY name LIMIT $2",
  [SQLQ__SQL_POOL_LIST_ALL] =
    "SELECT pool, count(*), sum(held_until > sqlq_now()), max(last_used) FROM sqlq_pool_items"
    " WHERE $1 IS NULL OR pool > $1 GROUP BY pool ORDER BY pool LIMIT $2",

  /* Subscriptions.  Only tables of the main database count. */
  [SQLQ__SQL_SUB_COLUMNS] =
    "SELECT p.name, p.pk, 0 FROM sqlite_master m JOIN pragma_table_info(m.name) p"
    " WHERE m.type = 'table' AND m.name = $1 ORDER BY p.cid",
  [SQLQ__SQL_SUB_ADD] =
    "INSERT INTO sqlq_subscriptions (table_name, action, tag, with_rows, created_at)"
    " VALUES ($1, $2, $3, $4, sqlq_now()) ON CONFLICT (table_name, action, tag)"
    " DO UPDATE SET with_rows = excluded.with_rows",
  [SQLQ__SQL_SUB_REMOVE] = "DELETE FROM sqlq_subscriptions WHERE table_name = $1 AND tag = $2",
  [SQLQ__SQL_SUB_ACTIONS] =
    "SELECT action, with_rows FROM sqlq_subscriptions WHERE table_name = $1",
  [SQLQ__SQL_SUB_LIST] =
    "SELECT table_name, tag, action, with_rows, created_at FROM sqlq_subscriptions"
    " ORDER BY table_name, tag, action",
  [SQLQ__SQL_SUB_TRIGGERS] = "SELECT name, tbl_name FROM sqlite_master WHERE type = 'trigger'"
                             " AND substr(name, 1, length($1)) = $1",

  /* Schedules (schema version 4). */
  [SQLQ__SQL_CRON_NOW] = "SELECT sqlq_now()",
  SCHEDULES_SQL_ENTRIES,
  /* Retention.  Each reads or deletes a range of sqlq_jobs_history_age,
  ** which the first retention set makes: its upkeep cost acks that keep
  ** history a quarter of their rate (sqlq bench, history=1). */
  [SQLQ__SQL_RETENTION_SET] =
    "INSERT INTO sqlq_queues (queue, keep_for, keep_count) VALUES ($1, nullif($2, 0), nullif($3, 0))"
    " ON CONFLICT (queue) DO UPDATE SET keep_for = excluded.keep_for,"
    " keep_count = excluded.keep_count",
  [SQLQ__SQL_RETENTION_GET] =
    "SELECT keep_for, keep_count, sqlq_now() FROM sqlq_queues WHERE queue = $1",
  [SQLQ__SQL_HISTORY_NEWEST] = "SELECT finished_at, id FROM sqlq_jobs_history WHERE queue = $1"
                               " ORDER BY finished_at DESC, id DESC LIMIT 1 OFFSET $2",
  [SQLQ__SQL_HISTORY_OLDEST] = "SELECT finished_at, id FROM sqlq_jobs_history WHERE queue = $1"
                               " ORDER BY finished_at, id LIMIT 1 OFFSET $2",
  [SQLQ__SQL_HISTORY_PRUNE] = "DELETE FROM sqlq_jobs_history WHERE queue = $1"
                              " AND finished_at <= $2 AND (finished_at < $2 OR id <= $3)",
  [SQLQ__SQL_HISTORY_INDEX] = "CREATE INDEX IF NOT EXISTS sqlq_jobs_history_age"
                              " ON sqlq_jobs_history (queue, finished_at, id)",
  [SQLQ__SQL_HISTORY_LIST] =
    "SELECT id, $2, priority, attempts, max_attempts, finished_at, created_at, NULL,"
    " dedupe_key, group_key, NULL, payload FROM sqlq_jobs_history WHERE queue = $1"
    " ORDER BY finished_at DESC, id DESC LIMIT $3",
  /* Concurrency limits.  A claim that writes holds the database's one
  ** write lock (BEGIN IMMEDIATE) from its start: LIMIT_LOCK needs no lock
  ** of its own. */
  [SQLQ__SQL_LIMIT_SET] = "INSERT INTO sqlq_queues (queue, max_running) VALUES ($1, nullif($2, 0))"
                          " ON CONFLICT (queue) DO UPDATE SET max_running = excluded.max_running",
  [SQLQ__SQL_LIMIT_GET] = "SELECT max_running FROM sqlq_queues WHERE queue = $1",
  [SQLQ__SQL_LIMIT_LOCK] =
    "SELECT max_running FROM sqlq_queues WHERE queue = $1 AND max_running IS NOT NULL",
  [SQLQ__SQL_CLAIM_UNLIMITED] = CLAIM(PAUSED_UNLIMITED, GROUP_HEAD),
  [SQLQ__SQL_PAUSED_UNLIMITED] = PAUSED_ROW("0"),
  [SQLQ__SQL_NEXT_DUE_UNLIMITED] = NEXT_DUE(GROUP_HEAD, ""),
  [SQLQ__SQL_LIMIT_RUNNING] = "SELECT count(*) FROM sqlq_jobs WHERE queue = $1"
                              " AND state = 'running' AND lease_until > sqlq_now()",
  /* Dependencies (schema version 7). */
  [SQLQ__SQL_ACK_FREE] = ACK DEPS_SQL_FREE,
  [SQLQ__SQL_HISTORY_COPY_FREE] = HISTORY_COPY DEPS_SQL_FREE,
  DEPS_SQL_ENTRIES("sqlq_now()", "$1", DEPS_SQL_PIPES),
  /* Rate limits (schema version 8).  The claim holds the write lock, as
  ** for concurrency limits. */
  [SQLQ__SQL_RATE_SET] =
    "INSERT INTO sqlq_queues (queue, rate_max, rate_period) VALUES ($1, nullif($2, 0), nullif($3, 0))"
    " ON CONFLICT (queue) DO UPDATE SET rate_max = excluded.rate_max,"
    " rate_period = excluded.rate_period",
  [SQLQ__SQL_RATE_GET] = "SELECT rate_max, rate_period,"
                         " (SELECT count(*) FROM sqlq_rate_starts WHERE queue = $1)"
                         " FROM sqlq_queues WHERE queue = $1",
  [SQLQ__SQL_RATE_GROW] =
    "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < $2)"
    " INSERT INTO sqlq_rate_starts (queue, slot, started_at) SELECT $1, b.first + n.i, b.first + n.i"
    " FROM n, (SELECT coalesce(max(slot), -1) + 1 AS first FROM sqlq_rate_starts"
    "  WHERE queue = $1) AS b",
  [SQLQ__SQL_RATE_NEWEST] = "SELECT started_at, slot FROM sqlq_rate_starts WHERE queue = $1"
                            " ORDER BY started_at DESC, slot DESC LIMIT 1 OFFSET $2",
  [SQLQ__SQL_RATE_PRUNE] = "DELETE FROM sqlq_rate_starts WHERE " SLOTS_UPTO("<"),
  [SQLQ__SQL_RATE_FREE] = "SELECT started_at, slot FROM sqlq_rate_starts WHERE queue = $1"
                          " AND started_at <= sqlq_now() - $2 ORDER BY started_at, slot LIMIT $3",
  [SQLQ__SQL_RATE_STAMP] =
    "UPDATE sqlq_rate_starts SET started_at = (SELECT sqlq_now()) WHERE " SLOTS_UPTO("<="),
  [SQLQ__SQL_CLAIM_RATES] = CLAIM(PAUSED_IF(LIMITED_RATES), GROUP_HEAD),
  [SQLQ__SQL_PAUSED_RATES] = PAUSED_ROW(LIMITED_RATES),
  [SQLQ__SQL_NEXT_DUE_RATES] = NEXT_DUE_AT(GROUP_HEAD, " AND NOT " FULL, RATE_DUE),
  [SQLQ__SQL_LIMIT_LOCK_RATES] = "SELECT max_running, rate_max, rate_period FROM sqlq_queues"
                                 " WHERE queue = $1 AND (" LIMITED_RATES ")",
  /* Cancellation (schema version 9). */
  CANCEL_SQL_ENTRIES("sqlq_now()"),
  /* Per-group limits (schema version 10). */
  [SQLQ__SQL_GROUP_LIMIT_SET] =
    "INSERT INTO sqlq_queues (queue, group_running) VALUES ($1, nullif($2, 1))"
    " ON CONFLICT (queue) DO UPDATE SET group_running = excluded.group_running",
  [SQLQ__SQL_GROUP_LIMIT_GET] =
    "SELECT coalesce(group_running, 1) FROM sqlq_queues WHERE queue = $1",
  [SQLQ__SQL_CLAIM_GROUPS] = CLAIM(PAUSED_IF(LIMITED_GROUPS), GROUP_ROOM),
  [SQLQ__SQL_PAUSED_GROUPS] = PAUSED_ROW(LIMITED_GROUPS),
  [SQLQ__SQL_NEXT_DUE_GROUPS] = NEXT_DUE_AT(GROUP_ROOM, " AND NOT " FULL, RATE_DUE),
  /* Fair queues (schema version 10).  A claim that writes holds the database's one write lock:
  ** FAIR_LOCK needs no lock of its own, and the claim's REAP reaps. */
  [SQLQ__SQL_FAIR_SET] = "INSERT INTO sqlq_queues (queue, fair) VALUES ($1, nullif($2, 0))"
                         " ON CONFLICT (queue) DO UPDATE SET fair = excluded.fair",
  [SQLQ__SQL_FAIR_FORGET] = FAIR_SQL_FORGET,
  [SQLQ__SQL_FAIR_GET] = "SELECT fair IS NOT NULL FROM sqlq_queues WHERE queue = $1",
  [SQLQ__SQL_FAIR_LOCK] = "SELECT coalesce(fair_served, 0), coalesce(group_running, 1)"
                          " FROM sqlq_queues WHERE queue = $1 AND fair IS NOT NULL AND NOT paused",
  [SQLQ__SQL_FAIR_TENANTS] = FAIR_SQL_TENANTS("sqlq_now()", "''", ""),
  [SQLQ__SQL_FAIR_PICK_GROUP] = FAIR_SQL_PICK_GROUP("sqlq_now()", FAIR_SQL_LIMIT),
  [SQLQ__SQL_FAIR_PICK_FREE] = FAIR_SQL_PICK_FREE("sqlq_now()", FAIR_SQL_LIMIT),
  [SQLQ__SQL_FAIR_TAKE] = FAIR_SQL_TAKE("sqlq_now()") " RETURNING " FAIR_SQL_COLUMNS,
  [SQLQ__SQL_FAIR_SERVE] =
    "INSERT INTO sqlq_groups (queue, grouped, group_key, served) VALUES ($1, $2, $3, $4)"
    " ON CONFLICT (queue, grouped, group_key) DO UPDATE SET served = excluded.served",
  [SQLQ__SQL_FAIR_SERVED] = FAIR_SQL_SERVED,
  /* Counts (schema version 13). */
  COUNTS_SQL_ENTRIES("", "$1"),
  /* AUTOINCREMENT keeps the highest id ever used in sqlite_sequence. */
  [SQLQ__SQL_COUNTS_IDS] =
    "SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'sqlq_jobs'), 0)",
};

/* Version 1: jobs, queues, history.  docs/schema.md documents each column. */
static const char migration_1[] =
  "CREATE TABLE sqlq_jobs ("
  " id           INTEGER PRIMARY KEY AUTOINCREMENT,"
  " queue        TEXT    NOT NULL CHECK (length(queue) BETWEEN 1 AND 128),"
  " state        TEXT    NOT NULL DEFAULT 'ready'"
  "                      CHECK (state = 'ready' OR state = 'running' OR state = 'dead'),"
  " priority     INTEGER NOT NULL DEFAULT 0,"
  " run_at       INTEGER NOT NULL DEFAULT " NOW_DEFAULT ","
  " attempts     INTEGER NOT NULL DEFAULT 0,"
  " max_attempts INTEGER NOT NULL DEFAULT 25 CHECK (max_attempts >= 0),"
  " lease_until  INTEGER,"
  " token        INTEGER,"
  " dedupe_key   TEXT,"
  " group_key    TEXT,"
  " payload      BLOB    NOT NULL DEFAULT x'',"
  " last_error   TEXT,"
  " created_at   INTEGER NOT NULL DEFAULT " NOW_DEFAULT ");"
  "CREATE INDEX sqlq_jobs_claim ON sqlq_jobs (queue, priority DESC, run_at, id)"
  " WHERE state = 'ready';"
  "CREATE INDEX sqlq_jobs_due ON sqlq_jobs (queue, run_at) WHERE state = 'ready';"
  "CREATE INDEX sqlq_jobs_lease ON sqlq_jobs (queue, lease_until) WHERE state = 'running';"
  "CREATE UNIQUE INDEX sqlq_jobs_dedupe ON sqlq_jobs (queue, dedupe_key)"
  " WHERE dedupe_key IS NOT NULL AND state IN ('ready','running');"
  "CREATE INDEX sqlq_jobs_group ON sqlq_jobs (queue, group_key, id)"
  " WHERE group_key IS NOT NULL AND state IN ('ready','running');"
  "CREATE TABLE sqlq_queues ("
  " queue  TEXT PRIMARY KEY CHECK (length(queue) BETWEEN 1 AND 128),"
  " paused INTEGER NOT NULL DEFAULT 0);"
  "CREATE TABLE sqlq_jobs_history ("
  " id           INTEGER PRIMARY KEY,"
  " queue        TEXT    NOT NULL,"
  " priority     INTEGER NOT NULL,"
  " attempts     INTEGER NOT NULL,"
  " max_attempts INTEGER NOT NULL,"
  " dedupe_key   TEXT,"
  " group_key    TEXT,"
  " payload      BLOB    NOT NULL,"
  " created_at   INTEGER NOT NULL,"
  " finished_at  INTEGER NOT NULL);";

/* Version 2: rings and pools. */
static const char migration_2[] =
  "CREATE TABLE sqlq_rings ("
  " name       TEXT    PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 128),"
  " capacity   INTEGER NOT NULL CHECK (capacity BETWEEN 1 AND 1000000000),"
  " next_seq   INTEGER NOT NULL DEFAULT 1,"
  " created_at INTEGER NOT NULL DEFAULT " NOW_DEFAULT ");"
  "CREATE TABLE sqlq_ring_entries ("
  " ring    TEXT    NOT NULL,"
  " slot    INTEGER NOT NULL,"
  " seq     INTEGER NOT NULL,"
  " at      INTEGER NOT NULL,"
  " payload BLOB    NOT NULL,"
  " PRIMARY KEY (ring, slot));"
  "CREATE UNIQUE INDEX sqlq_ring_entries_seq ON sqlq_ring_entries (ring, seq);"
  "CREATE TABLE sqlq_pool_items ("
  " id         INTEGER PRIMARY KEY AUTOINCREMENT,"
  " pool       TEXT    NOT NULL CHECK (length(pool) BETWEEN 1 AND 128),"
  " item       TEXT    NOT NULL CHECK (length(item) BETWEEN 1 AND 1024),"
  " last_used  INTEGER NOT NULL DEFAULT 0,"
  " uses       INTEGER NOT NULL DEFAULT 0,"
  " held_until INTEGER,"
  " token      INTEGER,"
  " UNIQUE (pool, item));"
  "CREATE INDEX sqlq_pool_items_lru ON sqlq_pool_items (pool, last_used, id);";

/* Version 3: table subscriptions.  One row per table, action and tag;
** the triggers look a table's action up as they fire. */
static const char migration_3[] =
  "CREATE TABLE sqlq_subscriptions ("
  " table_name TEXT    NOT NULL CHECK (length(table_name) BETWEEN 1 AND 63),"
  " action     TEXT    NOT NULL"
  "                    CHECK (action = 'insert' OR action = 'update' OR action = 'delete'),"
  " tag        TEXT    NOT NULL CHECK (length(tag) BETWEEN 1 AND 128),"
  " with_rows  INTEGER NOT NULL DEFAULT 0,"
  " created_at INTEGER NOT NULL DEFAULT " NOW_DEFAULT ","
  " PRIMARY KEY (table_name, action, tag));";

/* Version 4: schedules of periodic jobs, one row each. */
static const char migration_4[] =
  "CREATE TABLE sqlq_schedules ("
  " name       TEXT    PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 128),"
  " spec       TEXT    NOT NULL CHECK (length(spec) BETWEEN 1 AND 256),"
  " time_zone  TEXT    NOT NULL DEFAULT 'UTC' CHECK (length(time_zone) BETWEEN 1 AND 64),"
  " queue      TEXT    NOT NULL CHECK (length(queue) BETWEEN 1 AND 128),"
  " payload    BLOB    NOT NULL DEFAULT x'',"
  " missed     INTEGER NOT NULL DEFAULT 0 CHECK (missed >= -1),"
  " paused     INTEGER NOT NULL DEFAULT 0,"
  " next_run   INTEGER NOT NULL,"
  " last_run   INTEGER,"
  " created_at INTEGER NOT NULL DEFAULT " NOW_DEFAULT ");";
/* Version 5: retention of finished jobs: a queue's limits (NULL: none).
** The index that prunes its history comes with the first retention set
** (HISTORY_INDEX). */
static const char migration_5[] = "ALTER TABLE sqlq_queues ADD COLUMN keep_for INTEGER;"
                                  "ALTER TABLE sqlq_queues ADD COLUMN keep_count INTEGER;";

/* Version 6: concurrency limits, a column of the queue's row. */
static const char migration_6[] = "ALTER TABLE sqlq_queues ADD COLUMN max_running INTEGER;";
/* Version 7: dependencies.  A job's awaited and waits are NULL until a
** dependent is enqueued after it, or it is one (docs/schema.md). */
static const char migration_7[] = "ALTER TABLE sqlq_jobs ADD COLUMN awaited INTEGER;"
                                  "ALTER TABLE sqlq_jobs ADD COLUMN waits INTEGER;"
                                  "CREATE TABLE sqlq_deps ("
                                  " job_id   INTEGER NOT NULL,"
                                  " after_id INTEGER NOT NULL,"
                                  " PRIMARY KEY (job_id, after_id)) WITHOUT ROWID;"
                                  "CREATE INDEX sqlq_deps_after ON sqlq_deps (after_id, job_id);";

/* Version 8: rate limits: the rate in the queue's row, and its slots, the
** latest starts (docs/schema.md, "Rate limits"). */
static const char migration_8[] =
  "ALTER TABLE sqlq_queues ADD COLUMN rate_max INTEGER;"
  "ALTER TABLE sqlq_queues ADD COLUMN rate_period INTEGER;"
  "CREATE TABLE sqlq_rate_starts ("
  " queue      TEXT    NOT NULL,"
  " slot       INTEGER NOT NULL,"
  " started_at INTEGER NOT NULL,"
  " PRIMARY KEY (queue, slot)) WITHOUT ROWID;"
  "CREATE INDEX sqlq_rate_starts_age ON sqlq_rate_starts (queue, started_at, slot);";
/* Version 9: cancellation: when a dead job was cancelled (docs/schema.md). */
static const char migration_9[] = "ALTER TABLE sqlq_jobs ADD COLUMN cancelled_at INTEGER;";
/* Version 10: per-group limits, a column of the queue's row (NULL: 1);
** fair queues, two more, and their tenants' turns. */
static const char migration_10[] = "ALTER TABLE sqlq_queues ADD COLUMN group_running INTEGER;"
                                   "ALTER TABLE sqlq_queues ADD COLUMN fair INTEGER;"
                                   "ALTER TABLE sqlq_queues ADD COLUMN fair_served INTEGER;"
                                   "CREATE TABLE sqlq_groups ("
                                   " queue     TEXT    NOT NULL,"
                                   " grouped   INTEGER NOT NULL,"
                                   " group_key TEXT    NOT NULL,"
                                   " served    INTEGER NOT NULL,"
                                   " PRIMARY KEY (queue, grouped, group_key)) WITHOUT ROWID;";

/* Version 11 adds nothing on this backend: its claim does not walk old row
** versions (sqlq_lanes is for the backends whose claims do).  The version
** is recorded all the same, by a statement that reads nothing. */
static const char migration_11[] = "SELECT 1;";

/* Version 12 adds nothing on this backend: it brought Firebird's claim
** lanes and a cheaper PostgreSQL INSERT trigger.  The version is recorded all the same. */
static const char migration_12[] = "SELECT 1;";

/* Version 13: the counts of what handles did, per queue, writer and
** minute (src/counts.c). */
static const char migration_13[] =
  COUNTS_SQL_TABLE("CREATE TABLE", "INTEGER", "TEXT", "TEXT",
                   " WITHOUT ROWID;") "CREATE INDEX sqlq_counts_age ON sqlq_counts (minute_at);";

/* Version 14 (leases, which only PostgreSQL behind a transaction pooler
** uses) adds nothing on this backend.  The version is recorded all the
** same. */
static const char migration_14[] = "SELECT 1;";

/* Version 15: an index of the dead jobs, so that sqlq_summary() counts a
** queue's dead jobs, and finds the queues that have some, without reading
** its other jobs.  Only dead rows enter it: claims and acks never touch it. */
static const char migration_15[] =
  "CREATE INDEX sqlq_jobs_dead ON sqlq_jobs (queue, id) WHERE state = 'dead';";

const char *const sqlq__sqlite_migrations[SQLQ_SCHEMA_VERSION] = {
  migration_1,  migration_2,  migration_3,  migration_4,  migration_5,
  migration_6,  migration_7,  migration_8,  migration_9,  migration_10,
  migration_11, migration_12, migration_13, migration_14, migration_15,
};
