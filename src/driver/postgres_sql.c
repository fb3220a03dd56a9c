/*
** postgres_sql.c -- the SQL text of the PostgreSQL dialect and its
** migrations.
**
** sqlq_now() is the server's clock in microseconds since the epoch, fixed
** for the length of a statement (statement_timestamp(), so that it can
** bound an index scan).  Parameters carry explicit casts: the driver
** prepares every statement without declaring types.  Every ordering ends
** with the unique id, so claims are deterministic.
**
** Wake-ups: sqlq_channel(queue) names the channel a queue's waiters LISTEN
** on.  The library sends one NOTIFY per queue per transaction, right after
** its COMMIT, with the number of jobs made ready as its payload.  A trigger
** does the same for rows other clients INSERT with plain SQL: one NOTIFY
** per queue per statement.  The library's own INSERTs set sqlq.library for
** their transaction, which keeps the trigger quiet, so that they are not
** announced twice.  Two more triggers announce that a FIFO group may run
** its next job (its head was deleted, or went dead).
*/
#include "cancel_sql.h"
#include "counts_sql.h"
#include "list_sql.h"
#include "summary_sql.h"
#include "deps_sql.h"
#include "fair_sql.h"
#include "postgres_int.h"

/* A job of a group may run only when fewer than the group limit of its
** queue (1 unless set: a FIFO group) of the earlier jobs of its group are
** unfinished, counted by a search that stops at the n-th (GROUP_ROOM;
** the limit is an InitPlan, read once per statement).  GROUP_HEAD is the
** test of a database without per-group limits (below schema version
** 10). */
#define GROUP_EARLIER(then) \
  "SELECT 1 FROM sqlq_jobs g WHERE g.queue = j.queue AND g.group_key = j.group_key" \
  " AND g.state IN ('ready','running') AND g.id < j.id" then
#define GROUP_HEAD "(j.group_key IS NULL OR NOT EXISTS (" GROUP_EARLIER("") "))"
#define GROUP_N "(SELECT coalesce(max(group_running), 1) FROM sqlq_queues WHERE queue = $1::text)"
#define GROUP_ROOM \
  "(j.group_key IS NULL OR NOT EXISTS (" GROUP_EARLIER(" LIMIT 1 OFFSET " GROUP_N " - 1") "))"

/* A FROM item that marks the transaction as the library's (see above). */
#define LIBRARY_TX "(SELECT set_config('sqlq.library', 'on', true)) AS library_tx"
/* LIBRARY_TX for a statement that inserts jobs of queue $1 at priority $2
** only: it names their lane in sqlq.lane (a key the INSERT trigger of
** schema version 12 can look up in the lanes its session has seen, and
** clears; see migration_12). */
#define LIBRARY_LANE_TX \
  "(SELECT set_config('sqlq.library', 'on', true), set_config('sqlq.lane'," \
  " chr(2) || $1::text || chr(1) || $2::int || chr(2), true)) AS library_tx"

/* LIST_BRANCH of list_sql.h. */
/* LIST_DUE_FROM of list_sql.h: PostgreSQL finds the claim index itself;
** LIST_NOW: sqlq_now() is the statement's time, one value throughout. */
#define LIST_DUE_FROM "sqlq_jobs"
#define LIST_NOW "sqlq_now()"
#define LIST_BRANCH(st, from, cond) \
  "(SELECT " LIST_COLUMNS(st) " FROM " from " WHERE queue = $1::text AND " cond \
                              " AND $2::int IN (0, " st ")" \
                              " ORDER BY priority DESC, run_at, id LIMIT nullif($3::int8, -1))"

/* A recursive CTE named cte: the queues that have jobs in state s, from
** the first up, each found from the one before it in one descent of the
** state's partial index; none when $1 names a queue. */
#define SUMMARY_QUEUES(cte, s) \
  cte "(queue) AS (SELECT min(queue) FROM sqlq_jobs WHERE state = '" s "' AND $1::text IS NULL" \
      " UNION ALL SELECT (SELECT min(j.queue) FROM sqlq_jobs j WHERE j.state = '" s "'" \
      " AND j.queue > r.queue) FROM " cte " r WHERE r.queue IS NOT NULL)"
/* The jobs of queue n.queue that meet cond, counted up to $2 + 1. */
#define SUMMARY_COUNT(cond) \
  "(SELECT count(*) FROM (SELECT 1 FROM sqlq_jobs j WHERE j.queue = n.queue AND " cond \
  " LIMIT $2::int8 + 1) AS x)"

/* A CTE that records the queue's name (parameter p), so that stats list
** it even when it is empty. */
#define REGISTER_AS(p) \
  "WITH registered AS (INSERT INTO sqlq_queues (queue) VALUES (" p "::text)" \
  " ON CONFLICT (queue) DO NOTHING) "
#define REGISTER REGISTER_AS("$1")

/* A condition that takes a transaction-scoped advisory lock on the
** subscriptions of the table $1 (a class of two-int keys of its own, as
** the pools have, then 32 bits of the name's md5) and is true.  SUB_REMOVE
** takes it before it locks any row; a subscribe and an unsubscribe both
** run SUB_REMOVE before they read the table's actions (SUB_ACTIONS), so
** changes to one table's subscriptions take turns: each reads the actions
** after the one before it committed, and no subscribe rebuilds the
** triggers from a list that lacks another's new action.  (Listing the
** subscriptions takes no lock.)  The sub-select is an InitPlan, run once
** before the scan whether or not a row matches; inside EXISTS the planner
** would drop the call. */
#define SUB_TABLE_LOCK \
  "(SELECT pg_advisory_xact_lock(1936813171," \
  " ('x' || left(md5($1::text), 8))::bit(32)::int)) IS NOT NULL"

/* The oid of the default schema, where sqlq's tables and the subscribed
** tables are. */
#define DEFAULT_SCHEMA "(SELECT oid FROM pg_namespace WHERE nspname = current_schema())"

/* The claim's test of the queue's row (parameter $5: counted): paused,
** or limited while the claim did not count its running jobs. */
#define PAUSED_IF(limited) \
  "EXISTS (SELECT 1 FROM sqlq_queues WHERE queue = $1::text" \
  " AND (paused OR ((" limited ") AND $5::int = 0)))"
/* The queue's row names a concurrency limit; or a rate limit too (schema
** version 8); or is fair too (schema version 10), as a fair queue's
** claims also take turns on its row. */
#define LIMITED "max_running IS NOT NULL"
#define LIMITED_RATES LIMITED " OR rate_max IS NOT NULL"
#define LIMITED_GROUPS LIMITED_RATES " OR fair IS NOT NULL"
#define PAUSED PAUSED_IF(LIMITED)
/* The same test on a database without concurrency limits (schema version
** 5 or below). */
#define PAUSED_UNLIMITED "EXISTS (SELECT 1 FROM sqlq_queues WHERE queue = $1::text AND paused)"
/* PAUSED's row test as a statement: paused, limited. */
#define PAUSED_ROW(limited) "SELECT paused, " limited " FROM sqlq_queues WHERE queue = $1::text"

/* The queue $1 has a concurrency limit and as many jobs running (with
** their leases current) as it allows: its ready jobs wait. */
#define FULL \
  "EXISTS (SELECT 1 FROM sqlq_queues q WHERE q.queue = $1::text AND q.max_running IS NOT NULL" \
  " AND q.max_running <= (SELECT count(*) FROM sqlq_jobs r WHERE r.queue = $1::text" \
  "  AND r.state = 'running' AND r.lease_until > sqlq_now()))"

/* A job this claim holds: its id and token, while it runs.  (A token is
** set only while its job runs, but a plain-SQL writer may break that
** rule, as the other dialects' statements assume too.)  The state is
** tested as `(...) IS TRUE`, which the predicate of the partial index
** sqlq_jobs_lease (`state = 'running'`) does not match: that test would
** let the planner read the whole partial index instead of looking the id
** up, which it did with the statistics of a table VACUUM saw empty. */
#define RUNNING "(state = 'running') IS TRUE"
#define HELD "id = $1::int8 AND token = $2::int8 AND " RUNNING

#define DEDUPE_FREE(j) \
  "(" j ".dedupe_key IS NULL OR NOT EXISTS (SELECT 1 FROM sqlq_jobs o" \
  " WHERE o.queue = " j ".queue AND o.dedupe_key = " j ".dedupe_key" \
  " AND o.state IN ('ready','running') AND o.id <> " j ".id))"

#define RETRY_SET \
  "UPDATE sqlq_jobs j SET state = 'ready', attempts = 0, run_at = sqlq_now()," \
  " token = NULL, lease_until = NULL"

#define ACK_ARRAY_DELETE \
  "DELETE FROM sqlq_jobs WHERE id = ANY($1::int8[]) AND " RUNNING \
  " AND (id, token) IN (SELECT * FROM unnest($1::int8[], $2::int8[]))"

/* The parts both claims share.  BURIED_IF: jobs out of attempts whose
** lease ended (and that pass the test since, "" or " AND ...") are dead.
** EXPIRED_IF ... EXPIRED_ORDER: the jobs whose lease ended (and that pass
** since) that may run again, unless the test between the two holds.  TAKE_PICKED: the jobs of picked run, with a
** new token and lease; returned as the driver reads a claim. */
#define BURIED_IF(since) \
  " buried AS (UPDATE sqlq_jobs SET state = 'dead'," \
  "  last_error = 'lease expired during attempt ' || attempts," \
  "  token = NULL, lease_until = NULL" \
  "  WHERE id = ANY(ARRAY(SELECT id FROM sqlq_jobs WHERE queue = $1::text" \
  "   AND state = 'running' AND lease_until <= sqlq_now()" since \
  "   AND attempts >= max_attempts FOR UPDATE SKIP LOCKED)))"
#define EXPIRED_IF(since) \
  " expired AS (SELECT j.id, j.priority, j.run_at FROM sqlq_jobs j" \
  "  WHERE j.queue = $1::text AND j.state = 'running' AND j.lease_until <= sqlq_now()" \
  "  " since " AND j.attempts < j.max_attempts AND NOT "
#define EXPIRED_ORDER \
  "  ORDER BY j.priority DESC, j.run_at, j.id LIMIT $4::int8 FOR UPDATE SKIP LOCKED)"
#define TAKE_PICKED \
  "UPDATE sqlq_jobs j SET state = 'running', attempts = j.attempts + 1," \
  " token = $2::int8, lease_until = sqlq_now() + $3::int8," \
  " last_error = CASE WHEN j.state = 'running'" \
  "  THEN 'lease expired during attempt ' || j.attempts ELSE j.last_error END" \
  " WHERE j.id = ANY(ARRAY(SELECT id FROM picked))" \
  " RETURNING j.id, j.priority, j.run_at, j.attempts, j.max_attempts, j.created_at," \
  " j.lease_until, j.group_key, j.dedupe_key, j.payload"

/* The claim (see CLAIM below), with paused as its test of the queue's
** row and head as its test of a job's group.  Its scans start at the
** oldest key. */
#define CLAIM_BURIED BURIED_IF("")
#define CLAIM_EXPIRED EXPIRED_IF("")
#define CLAIM(paused, head) \
  "WITH" CLAIM_BURIED "," \
  " ready AS (SELECT j.id, j.priority, j.run_at FROM sqlq_jobs j" \
  "  WHERE j.queue = $1::text AND j.state = 'ready' AND j.run_at <= sqlq_now()" \
  "  AND " head " AND NOT " paused \
  "  ORDER BY j.priority DESC, j.run_at, j.id LIMIT $4::int8 FOR UPDATE SKIP LOCKED)," CLAIM_EXPIRED \
    paused EXPIRED_ORDER "," \
  " picked AS (SELECT id FROM (SELECT * FROM ready UNION ALL SELECT * FROM expired) AS due" \
  "  ORDER BY priority DESC, run_at, id LIMIT $4::int8) " TAKE_PICKED

/* Claim cursors (schema version 11; cursor.c).  The
** cursor of a queue is an int8[] that each claim returns and the next
** claim of the queue through the same handle passes back (as text; NULL:
** none yet, or dropped by the core to scan everything again):
**   [1] safe: no transaction yet to commit can make a job ready with an
**       earlier run_at: the clock of an earlier claim, less MARGIN, once
**       every transaction that had an id then has ended (a transaction
**       that gets its id later makes its jobs ready with its statements'
**       clock, later than that);
**   [2] then, [3] then_xid: that earlier claim's clock and the first
**       transaction id not yet given out at the time, until they settle;
**   [4] the lease floor: every lease that ended before it was seen by a
**       claim through this handle, and taken or buried (it stays at the
**       first expired lease a claim saw and did not take: held by an ack
**       that may yet roll back);
**   [5] the count of sqlq_rewinds when the cursor was made: a job made
**       ready with a run_at older than its statement's clock less MARGIN
**       (a plain-SQL INSERT that names an old run_at, a slow INSERT ...
**       SELECT, an UPDATE that moves a job), or a lease set into the past,
**       counts one, and every cursor made before it is dropped: the next
**       claim scans every lane and lease from its start.  So is a cursor
**       whose [2] is later than the clock (the server's clock went back);
**   [6], [7], ...: pairs of a lane's priority and its floor: the lane has
**       no ready job with an earlier run_at that was not seen either.
** Each scan starts at its floor, so that it steps only over the entries
** of the jobs taken since the last claim, not over every job a
** long-held snapshot keeps visible.  A floor never passes a ready job
** the claim saw and did not take (held by another claim, a group's
** later job, beyond the claim's limit), nor the safe time. */
#define NO_FLOOR "(-9223372036854775807)::int8"
#define MARGIN "100000"
/* The cursor c (an int8[] expression) when it was made after the last
** rewind and the clock has not gone back since, else NULL. */
#define CURSOR_VALID(c) \
  "(SELECT CASE WHEN (" c ")[5] = r.last_value AND (" c ")[2] <= sqlq_now() THEN (" c ") END" \
  " FROM sqlq_rewinds r)"
/* The floor of lane p in c, a valid cursor or NULL. */
#define LANE_FLOOR(c, p) \
  "coalesce((SELECT (" c ")[i + 1] FROM generate_subscripts(" c ", 1) AS i" \
  " WHERE i >= 6 AND i % 2 = 0 AND (" c ")[i] = " p "), " NO_FLOOR ")"
/* The earliest run_at a ready job of any lane may have unseen by c. */
#define DUE_FLOOR(c) \
  "coalesce((SELECT least(min(u.x), (" c ")[1])" \
  " FROM unnest((" c ")[6:]) WITH ORDINALITY AS u(x, k) WHERE k % 2 = 0)," \
  " (" c ")[1], " NO_FLOOR ")"
/* A waiter with a cursor (NEXT_DUE_LANES) does not look ahead for the end
** of a lease: that scan would step over every acked job whose lease would
** have ended by then, the last lease's worth of them.  It looks only for
** a lease that has ended, no further back than LEASE_BACK (one that ended
** before its handle's last claim was seen by that claim), and looks again
** every LEASE_AHEAD. */
#define LEASE_AHEAD "1000000"
#define LEASE_BACK "2000000"

/* The most lanes a queue's claims scan one by one; a queue with more is
** claimed in one scan of every priority, as below schema version 11. */
#define LANES_MAX "64"
/* CLAIM_LANES's parts: the cursor passed when valid, the floor of lane
** l.priority in it, the test of the queue's row. */
#define CLAIM_CURSOR CURSOR_VALID("$6::text::int8[]")
#define CLAIM_LANE_FLOOR LANE_FLOOR("cur.c", "l.priority")
#define CLAIM_HALTED PAUSED_IF(LIMITED_GROUPS)
#define SINCE_LEASE_FLOOR " AND lease_until >= (SELECT lease_floor FROM cur)"
#define LANES_BURIED BURIED_IF(SINCE_LEASE_FLOOR)
#define LANES_EXPIRED EXPIRED_IF(SINCE_LEASE_FLOOR) "(SELECT h FROM halted)" EXPIRED_ORDER
#define CLAIM_LANES \
  "WITH clock AS MATERIALIZED (SELECT sqlq_now() AS now," \
  "  pg_snapshot_xmin(s)::text::int8 AS xmin, pg_snapshot_xmax(s)::text::int8 AS xmax," \
  "  (SELECT last_value FROM sqlq_rewinds) AS rewinds FROM pg_current_snapshot() AS s)," \
  " valid AS MATERIALIZED (SELECT " CLAIM_CURSOR " AS c)," \
  " cur AS MATERIALIZED (SELECT c, coalesce(c[4], " NO_FLOOR ") AS lease_floor FROM valid)," \
  " halted AS MATERIALIZED (SELECT " CLAIM_HALTED " AS h)," \
  " lanes AS MATERIALIZED (SELECT l.priority AS p, " CLAIM_LANE_FLOOR " AS f" \
  "  FROM sqlq_lanes l, cur WHERE l.queue = $1::text" \
  "  ORDER BY l.priority DESC LIMIT " LANES_MAX " + 1)," \
  " many AS MATERIALIZED (SELECT count(*) > " LANES_MAX " AS m FROM lanes)," LANES_BURIED "," \
  " by_lane AS (SELECT r.id, r.priority, r.run_at FROM lanes AS l CROSS JOIN LATERAL" \
  "  (SELECT j.id, j.priority, j.run_at FROM sqlq_jobs j" \
  "   WHERE j.queue = $1::text AND j.state = 'ready' AND j.priority = l.p" \
  "   AND j.run_at >= l.f AND j.run_at <= sqlq_now()" \
  "   AND " GROUP_ROOM " AND NOT (SELECT h FROM halted)" \
  "   ORDER BY j.run_at, j.id LIMIT $4::int8 FOR UPDATE SKIP LOCKED) AS r" \
  "  WHERE NOT (SELECT m FROM many) LIMIT $4::int8)," \
  " at_once AS (SELECT j.id, j.priority, j.run_at FROM sqlq_jobs j" \
  "  WHERE (SELECT m FROM many) AND j.queue = $1::text AND j.state = 'ready'" \
  "  AND j.run_at <= sqlq_now() AND " GROUP_ROOM " AND NOT (SELECT h FROM halted)" \
  "  ORDER BY j.priority DESC, j.run_at, j.id LIMIT $4::int8 FOR UPDATE SKIP LOCKED)," LANES_EXPIRED \
  "," \
  " picked AS (SELECT id FROM (SELECT * FROM by_lane UNION ALL SELECT * FROM at_once" \
  "  UNION ALL SELECT * FROM expired) AS due ORDER BY priority DESC, run_at, id LIMIT $4::int8)," \
  " taken AS (" TAKE_PICKED ")," \
  " settled AS (SELECT coalesce(c[1], " NO_FLOOR ") AS safe, c[2] AS then_at," \
  "  c[3] AS then_xid, lease_floor, clock.*, coalesce(c[3] <= clock.xmin, false) AS ok" \
  "  FROM cur, clock)," \
  " next AS (SELECT CASE WHEN ok THEN then_at - " MARGIN " ELSE safe END AS safe," \
  "  CASE WHEN ok OR then_at IS NULL THEN now ELSE then_at END AS then_at," \
  "  CASE WHEN ok OR then_at IS NULL THEN xmax ELSE then_xid END AS then_xid," \
  "  CASE WHEN (SELECT h FROM halted) OR (SELECT count(*) FROM expired) >= $4::int8" \
  "   THEN lease_floor ELSE least(now - " MARGIN ", (SELECT min(r.lease_until) FROM sqlq_jobs r" \
  "    WHERE r.queue = $1::text AND r.state = 'running' AND r.lease_until >= lease_floor" \
  "    AND r.lease_until <= now AND r.id <> ALL(ARRAY(SELECT id FROM picked))))" \
  "   END AS lease_floor, rewinds FROM settled)" \
  " SELECT t.*, NULL::text FROM taken AS t" \
  " UNION ALL SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL," \
  "  (ARRAY[n.safe, n.then_at, n.then_xid, n.lease_floor, n.rewinds] || ARRAY(SELECT x FROM" \
  "   (SELECT l.p, CASE WHEN (SELECT h FROM halted) THEN l.f ELSE least(n.safe," \
  "    coalesce((SELECT j.run_at FROM sqlq_jobs j WHERE j.queue = $1::text" \
  "     AND j.state = 'ready' AND j.priority = l.p AND j.run_at >= l.f AND j.run_at < n.safe" \
  "     AND j.id <> ALL(ARRAY(SELECT id FROM picked)) ORDER BY j.run_at, j.id LIMIT 1)," \
  "    n.safe)) END AS f FROM lanes AS l WHERE NOT (SELECT m FROM many)) AS lf," \
  "   LATERAL unnest(ARRAY[lf.p::int8, lf.f]) AS x))::text FROM next AS n"

/* The parts of the waits' statements (NEXT_DUE and NEXT_DUE_LANES):
** whether the queue is paused; how long until the first ready job that
** passes tests is due, at the expression at of its run_at j.run_at; how
** long until the first lease ends. */
#define PAUSED_NOW "SELECT (SELECT paused FROM sqlq_queues WHERE queue = $1::text),"
#define FIRST_DUE(at, tests) \
  " (SELECT " at " FROM sqlq_jobs j WHERE j.queue = $1::text AND j.state = 'ready'" \
  "  AND " tests " ORDER BY j.run_at LIMIT 1) - sqlq_now(),"
#define FIRST_LEASE_END \
  "(SELECT min(lease_until) FROM sqlq_jobs" \
  "  WHERE queue = $1::text AND state = 'running') - sqlq_now()"

/* NEXT_DUE_GROUPS with the floors of the cursor $2 (see CLAIM_LANES):
** the first due job looked for from the lowest floor; for leases, 0 when
** one has ended (see LEASE_AHEAD), else LEASE_AHEAD. */
#define WAIT_CURSOR CURSOR_VALID("$2::text::int8[]")
#define WAIT_DUE_FLOOR DUE_FLOOR("cur.c")
#define WAIT_DUE \
  FIRST_DUE(RATE_DUE, "j.run_at >= " WAIT_DUE_FLOOR " AND " GROUP_ROOM " AND NOT " FULL)
#define NEXT_DUE_LANES \
  PAUSED_NOW WAIT_DUE \
    " CASE WHEN cur.c IS NULL THEN " FIRST_LEASE_END \
    "  WHEN EXISTS (SELECT 1 FROM sqlq_jobs WHERE queue = $1::text AND state = 'running'" \
    "   AND lease_until >= greatest(cur.lease_floor, sqlq_now() - " LEASE_BACK ")" \
    "   AND lease_until <= sqlq_now()) THEN 0 ELSE " LEASE_AHEAD " END" \
    " FROM (SELECT c, coalesce(c[4], " NO_FLOOR ") AS lease_floor" \
    "  FROM (SELECT " WAIT_CURSOR " AS c) AS valid) AS cur"

/* NEXT_DUE, whose due jobs are those that pass the tests head and waits
** too, and whose first due job is due at the expression at of its run_at
** j.run_at. */
#define NEXT_DUE_AT(head, waits, at) PAUSED_NOW FIRST_DUE(at, head waits) " " FIRST_LEASE_END
#define NEXT_DUE(head, waits) NEXT_DUE_AT(head, waits, "j.run_at")
/* A job is due no sooner than the queue's rate frees its oldest slot. */
#define RATE_DUE \
  "greatest(j.run_at, coalesce((SELECT min(s.started_at) FROM sqlq_rate_starts s" \
  " WHERE s.queue = $1::text) + (SELECT rate_period FROM sqlq_queues WHERE queue = $1::text), 0))"
/* The slots up to ($2, $3) in slot order. */
#define SLOTS_UPTO(cmp) "queue = $1::text AND (started_at, slot) " cmp " ($2::int8, $3::int8)"
#define ACK "DELETE FROM sqlq_jobs WHERE " HELD
#define HISTORY_COPY DEPS_SQL_HISTORY_COPY("sqlq_now()", HELD)
/* The array ack that copies to history, of the jobs that also meet guard. */
#define ACK_HISTORY_ARRAY(guard) \
  "WITH done AS (" ACK_ARRAY_DELETE guard " RETURNING id, queue, priority, attempts," \
  " max_attempts, dedupe_key, group_key, payload, created_at)" \
  " INSERT INTO sqlq_jobs_history (id, queue, priority, attempts, max_attempts," \
  " dedupe_key, group_key, payload, created_at, finished_at)" \
  " SELECT id, queue, priority, attempts, max_attempts, dedupe_key, group_key," \
  " payload, created_at, sqlq_now() FROM done RETURNING id"

const char *const sqlq__postgres_sql[PG_SQL_COUNT] = {
  /* Concurrent `sqlq init`s take turns: the first creates, the others see. */
  [SQLQ__SQL_SCHEMA_TABLE] = "SELECT pg_advisory_xact_lock(7451983142365528113);"
                             "CREATE TABLE IF NOT EXISTS sqlq_schema ("
                             " version integer PRIMARY KEY, applied_at bigint NOT NULL)",
  [SQLQ__SQL_SCHEMA_VERSION] = "SELECT max(version) FROM sqlq_schema",
  [SQLQ__SQL_SCHEMA_RECORD] =
    "INSERT INTO sqlq_schema (version, applied_at) VALUES ($1::int, sqlq_now())",

  [SQLQ__SQL_ENQUEUE] =
    REGISTER "INSERT INTO sqlq_jobs (queue, priority, run_at, max_attempts, dedupe_key,"
             " group_key, payload, created_at)"
             " SELECT $1::text, $2::int, sqlq_now() + $3::int8, $4::int, $5::text, $6::text,"
             " $7::bytea, sqlq_now() FROM " LIBRARY_LANE_TX
             " ON CONFLICT (queue, dedupe_key) WHERE dedupe_key IS NOT NULL"
             " AND state IN ('ready','running') DO NOTHING RETURNING id",
  [SQLQ__SQL_DEDUPE_LOOKUP] =
    "SELECT id FROM sqlq_jobs WHERE queue = $1::text AND dedupe_key = $2::text"
    " AND state IN ('ready','running')",

  /* No QUEUE_REGISTER: the ENQUEUE statements register their queue. */
  /* No REAP: the claim does it (below). */
  [SQLQ__SQL_PAUSED] = PAUSED_ROW(LIMITED),
  /* One statement: lock the first due jobs no other claimer holds, then
  ** mark them running.  A job locked by a concurrent claim is skipped, so
  ** two workers never get the same job.  A job whose lease expired is
  ** taken again like a due one (with its error saying so) while it has
  ** attempts left, and buried as dead when it has none.  The rows to
  ** update are found by `id = ANY(ARRAY(...))`, never by a join: with the
  ** statistics of a table VACUUM saw empty, the planner joined by reading
  ** the whole table once per picked job. */
  [SQLQ__SQL_CLAIM] = CLAIM(PAUSED, GROUP_HEAD),

  [SQLQ__SQL_ACK] = ACK,
  [SQLQ__SQL_HISTORY_COPY] = HISTORY_COPY,
  [SQLQ__SQL_FAIL_PEEK] = "SELECT attempts, max_attempts, queue FROM sqlq_jobs WHERE " HELD,
  [SQLQ__SQL_FAIL] = "UPDATE sqlq_jobs SET"
                     " state = CASE WHEN $3::int <> 0 THEN 'dead' ELSE 'ready' END,"
                     " run_at = CASE WHEN $3::int <> 0 THEN run_at ELSE sqlq_now() + $4::int8 END,"
                     " last_error = $5::text, token = NULL, lease_until = NULL WHERE " HELD,
  [SQLQ__SQL_RELEASE] =
    "UPDATE sqlq_jobs SET state = 'ready', attempts = greatest(attempts - 1, 0),"
    " run_at = sqlq_now() + $3::int8, token = NULL, lease_until = NULL"
    " WHERE " HELD " RETURNING queue",
  [SQLQ__SQL_TOUCH] =
    "UPDATE sqlq_jobs SET lease_until = sqlq_now() + $3::int8 WHERE " HELD " RETURNING lease_until",

  [SQLQ__SQL_NEXT_DUE] = NEXT_DUE(GROUP_HEAD, " AND NOT " FULL),
  [SQLQ__SQL_PAUSE_SET] = "INSERT INTO sqlq_queues (queue, paused) VALUES ($1::text, $2::int <> 0)"
                          " ON CONFLICT (queue) DO UPDATE SET paused = excluded.paused",
  [SQLQ__SQL_STATS] =
    "WITH clock(now) AS (SELECT sqlq_now())"
    " SELECT queue, sum(ready), sum(scheduled), sum(running), sum(dead), bool_or(paused)"
    " FROM (SELECT queue, (state = 'ready' AND run_at <= now)::int AS ready,"
    "  (state = 'ready' AND run_at > now)::int AS scheduled,"
    "  (state = 'running')::int AS running, (state = 'dead')::int AS dead,"
    "  false AS paused FROM sqlq_jobs, clock"
    "  WHERE $1::text IS NULL OR queue = $1::text"
    "  UNION ALL SELECT queue, 0, 0, 0, 0, paused FROM sqlq_queues"
    "  WHERE $1::text IS NULL OR queue = $1::text) AS counts"
    " GROUP BY queue ORDER BY queue COLLATE \"C\"",
  /* Every queue's bounded counts in one statement: the queues come from
  ** loose index scans (one descent of a state's partial index per queue:
  ** SUMMARY_QUEUES), each count reads at most $2 entries of an index,
  ** and the oldest due job is the first entry of sqlq_jobs_due.  The names
  ** go through an array because unnest() is estimated at ten rows: the
  ** recursive CTEs' estimate of a hundred each would put the plan's cost
  ** past jit_above_cost, and JIT compiling takes ten times what the
  ** statement does (24 ms against 2 with 10^6 jobs).  OFFSET 0 keeps the
  ** counts from being computed twice by the WHERE that drops a queue of
  ** nothing. */
  [SQLQ__SQL_SUMMARY] =
    "WITH RECURSIVE clock(now) AS (SELECT sqlq_now()), " SUMMARY_QUEUES("ready_q", "ready") ", " SUMMARY_QUEUES(
      "running_q",
      "running") ", " SUMMARY_QUEUES("dead_q",
                                     "dead") ","
                                             " names(a) AS (SELECT array_agg(queue) FROM (SELECT queue FROM ready_q"
                                             "  UNION SELECT queue FROM running_q UNION SELECT queue FROM dead_q"
                                             "  UNION SELECT queue FROM sqlq_queues WHERE $1::text IS NULL UNION SELECT $1::text) AS q)"
                                             " SELECT queue, ready, scheduled, running, dead, coalesce(paused, false)::int, age"
                                             " FROM (SELECT n.queue, " SUMMARY_COUNTS
                                             ", " SUMMARY_PAUSED_AGE(
                                               "") "  FROM unnest((SELECT a FROM names)) AS n(queue), clock c WHERE n.queue IS NOT NULL"
                                                   "  OFFSET 0) AS counts WHERE " SUMMARY_KEPT
                                                   " ORDER BY queue COLLATE \"C\"",
  [SQLQ__SQL_LIST] = "SELECT * FROM " LIST_JOBS " ORDER BY priority DESC, run_at, id"
                     " LIMIT nullif($3::int8, -1)",
  /* A job whose dedupe key an unfinished job holds stays where it is; of
  ** several dead jobs with one key, the oldest is retried. */
  [SQLQ__SQL_RETRY_ID] = RETRY_SET " WHERE j.queue = $1::text AND j.id = $2::int8"
                                   " AND j.state IN ('dead','ready') AND " DEDUPE_FREE("j"),
  [SQLQ__SQL_RETRY_DEAD] =
    RETRY_SET " WHERE j.queue = $1::text AND j.state = 'dead' AND " DEDUPE_FREE(
      "j") " AND (j.dedupe_key IS NULL OR j.id = (SELECT min(d.id) FROM sqlq_jobs d"
           "  WHERE d.queue = j.queue AND d.dedupe_key = j.dedupe_key AND d.state = 'dead'))",
  [SQLQ__SQL_PURGE] = "DELETE FROM sqlq_jobs WHERE queue = $1::text",
  [SQLQ__SQL_DELETE_DEAD_ID] = "DELETE FROM sqlq_jobs WHERE queue = $1::text AND id = $2::int8"
                               " AND state = 'dead' AND awaited IS NULL",

  [SQLQ__SQL_ENQUEUE_ARRAY] =
    REGISTER "INSERT INTO sqlq_jobs (queue, priority, run_at, max_attempts, group_key,"
             " payload, created_at)"
             " SELECT $1::text, t.p, sqlq_now() + t.d, t.m, t.g, t.b, sqlq_now()"
             " FROM " LIBRARY_TX ", unnest($2::int8[], $3::int8[], $4::int8[], $5::text[],"
             " $6::bytea[]) WITH ORDINALITY AS t(p, d, m, g, b, ord)"
             " ORDER BY t.ord RETURNING id",
  [SQLQ__SQL_ACK_ARRAY] = ACK_ARRAY_DELETE " RETURNING id",
  [SQLQ__SQL_ACK_HISTORY_ARRAY] = ACK_HISTORY_ARRAY(""),
  /* Dependencies (schema version 7). */
  [SQLQ__SQL_ACK_FREE] = ACK DEPS_SQL_FREE,
  [SQLQ__SQL_HISTORY_COPY_FREE] = HISTORY_COPY DEPS_SQL_FREE,
  [SQLQ__SQL_ACK_ARRAY_FREE] = ACK_ARRAY_DELETE DEPS_SQL_FREE " RETURNING id",
  [SQLQ__SQL_ACK_HISTORY_ARRAY_FREE] = ACK_HISTORY_ARRAY(DEPS_SQL_FREE),
  DEPS_SQL_ENTRIES("sqlq_now()", "$1::text", DEPS_SQL_PIPES),
  /* Cancellation (schema version 9). */
  CANCEL_SQL_ENTRIES("sqlq_now()"),

  /* Rings.  The UPDATE of the ring's row takes its next numbers and keeps
  ** the row locked until the transaction ends, so concurrent pushes take
  ** turns; a push that waited reads the row as its predecessor left it. */
  [SQLQ__SQL_RING_CREATE] = "INSERT INTO sqlq_rings (name, capacity) VALUES ($1::text, $2::int8)"
                            " ON CONFLICT (name) DO NOTHING",
  [SQLQ__SQL_RING_INFO] = "SELECT capacity, next_seq - 1 FROM sqlq_rings WHERE name = $1::text",
  [SQLQ__SQL_RING_ADVANCE] =
    "UPDATE sqlq_rings SET next_seq = next_seq + $2::int8 WHERE name = $1::text"
    " RETURNING next_seq - $2::int8, capacity",
  [SQLQ__SQL_RING_STORE] =
    "INSERT INTO sqlq_ring_entries (ring, slot, seq, at, payload)"
    " VALUES ($1::text, $2::int8 % $3::int8, $2::int8, sqlq_now(), $4::bytea)"
    " ON CONFLICT (ring, slot) DO UPDATE"
    " SET seq = excluded.seq, at = excluded.at, payload = excluded.payload",
  [SQLQ__SQL_RING_PUSH] =
    "WITH taken AS (UPDATE sqlq_rings SET next_seq = next_seq + 1 WHERE name = $1::text"
    " RETURNING next_seq - 1 AS seq, capacity)"
    " INSERT INTO sqlq_ring_entries (ring, slot, seq, at, payload)"
    " SELECT $1::text, seq % capacity, seq, sqlq_now(), $2::bytea FROM taken"
    " ON CONFLICT (ring, slot) DO UPDATE"
    " SET seq = excluded.seq, at = excluded.at, payload = excluded.payload"
    " RETURNING seq",
  [SQLQ__SQL_RING_READ] = "SELECT seq, at, payload FROM sqlq_ring_entries WHERE ring = $1::text"
                          " AND seq > $2::int8 ORDER BY seq LIMIT nullif($3::int8, -1)",
  [SQLQ__SQL_RING_CLEAR] = "DELETE FROM sqlq_ring_entries WHERE ring = $1::text",
  [SQLQ__SQL_RING_DROP] = "DELETE FROM sqlq_rings WHERE name = $1::text",

  /* Pools: sqlq_pool_next() (below) picks and stamps. */
  [SQLQ__SQL_POOL_ADD] = "INSERT INTO sqlq_pool_items (pool, item) VALUES ($1::text, $2::text)"
                         " ON CONFLICT (pool, item) DO NOTHING",
  [SQLQ__SQL_POOL_REMOVE] = "DELETE FROM sqlq_pool_items WHERE pool = $1::text AND item = $2::text",
  [SQLQ__SQL_POOL_LIST] = "SELECT id, item, last_used, uses,"
                          " CASE WHEN held_until > sqlq_now() THEN held_until END"
                          " FROM sqlq_pool_items WHERE pool = $1::text ORDER BY last_used, id",
  [SQLQ__SQL_POOL_NEXT] = "SELECT * FROM sqlq_pool_next($1::text, $2::int8, $3::int8)",
  [SQLQ__SQL_POOL_COUNT] = "SELECT count(*) FROM sqlq_pool_items WHERE pool = $1::text"
                           " AND ($2::text IS NULL OR item = $2::text)",
  [SQLQ__SQL_POOL_RELEASE] = "UPDATE sqlq_pool_items SET held_until = NULL, token = NULL"
                             " WHERE pool = $1::text AND item = $2::text AND token = $3::int8",

  /* Subscriptions (postgres_sub.c makes the triggers).  Only ordinary
  ** and partitioned tables are subscribed to; a column's place in the
  ** primary key comes from the key's index, whose int2vector of columns
  ** is read as a 1-based array.  A domain over bytea is binary too. */
  [SQLQ__SQL_SUB_COLUMNS] =
    "SELECT a.attname::text,"
    " coalesce(array_position(string_to_array(i.indkey::text, ' ')::int2[], a.attnum), 0)::int,"
    " (CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE t.oid END = 'bytea'::regtype)::int"
    " FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0"
    " AND NOT a.attisdropped JOIN pg_type t ON t.oid = a.atttypid"
    " LEFT JOIN pg_index i ON i.indrelid = c.oid AND i.indisprimary"
    " WHERE c.relname = $1::text AND c.relnamespace = " DEFAULT_SCHEMA
    " AND c.relkind IN ('r', 'p') ORDER BY a.attnum",
  /* There is no QUEUE_REGISTER statement: this registers the tag. */
  [SQLQ__SQL_SUB_ADD] = REGISTER_AS(
    "$3") "INSERT INTO sqlq_subscriptions (table_name, action, tag, with_rows,"
          " created_at) VALUES ($1::text, $2::text, $3::text, $4::int <> 0, sqlq_now())"
          " ON CONFLICT (table_name, action, tag) DO UPDATE SET with_rows = excluded.with_rows",
  [SQLQ__SQL_SUB_REMOVE] =
    "DELETE FROM sqlq_subscriptions WHERE table_name = $1::text AND tag = $2::text"
    " AND " SUB_TABLE_LOCK,
  [SQLQ__SQL_SUB_ACTIONS] =
    "SELECT action, with_rows::int FROM sqlq_subscriptions WHERE table_name = $1::text",
  [SQLQ__SQL_SUB_LIST] =
    "SELECT table_name, tag, action, with_rows::int, created_at FROM sqlq_subscriptions"
    " ORDER BY table_name, tag, action",
  [SQLQ__SQL_SUB_TRIGGERS] =
    "SELECT t.tgname::text, c.relname::text FROM pg_trigger t"
    " JOIN pg_class c ON c.oid = t.tgrelid WHERE NOT t.tgisinternal"
    " AND c.relnamespace = " DEFAULT_SCHEMA " AND left(t.tgname, length($1::text)) = $1::text",

  /* Concurrency limits.  LIMIT_LOCK ends its statement holding the
  ** queue's row: LIMIT_RUNNING, the next statement, reads with a snapshot
  ** taken after the lock was granted (READ COMMITTED), which shows the
  ** claims of the transaction that held it before. */
  [SQLQ__SQL_LIMIT_SET] = "INSERT INTO sqlq_queues (queue, max_running)"
                          " VALUES ($1::text, nullif($2::int8, 0))"
                          " ON CONFLICT (queue) DO UPDATE SET max_running = excluded.max_running",
  [SQLQ__SQL_LIMIT_GET] = "SELECT max_running FROM sqlq_queues WHERE queue = $1::text",
  [SQLQ__SQL_LIMIT_LOCK] = "SELECT max_running FROM sqlq_queues"
                           " WHERE queue = $1::text AND max_running IS NOT NULL FOR NO KEY UPDATE",
  [SQLQ__SQL_CLAIM_UNLIMITED] = CLAIM(PAUSED_UNLIMITED, GROUP_HEAD),
  [SQLQ__SQL_PAUSED_UNLIMITED] = PAUSED_ROW("false"),
  [SQLQ__SQL_NEXT_DUE_UNLIMITED] = NEXT_DUE(GROUP_HEAD, ""),
  [SQLQ__SQL_LIMIT_RUNNING] = "SELECT count(*) FROM sqlq_jobs WHERE queue = $1::text"
                              " AND state = 'running' AND lease_until > sqlq_now()",
  /* Rate limits (schema version 8).  RATE_FREE, after LIMIT_LOCK_RATES,
  ** reads with a snapshot taken after the lock was granted, as
  ** LIMIT_RUNNING does; RATE_STAMP's clock is its own statement's, later
  ** than RATE_FREE's. */
  [SQLQ__SQL_RATE_SET] = "INSERT INTO sqlq_queues (queue, rate_max, rate_period)"
                         " VALUES ($1::text, nullif($2::int8, 0), nullif($3::int8, 0))"
                         " ON CONFLICT (queue) DO UPDATE SET rate_max = excluded.rate_max,"
                         " rate_period = excluded.rate_period",
  [SQLQ__SQL_RATE_GET] = "SELECT rate_max, rate_period,"
                         " (SELECT count(*) FROM sqlq_rate_starts WHERE queue = $1::text)"
                         " FROM sqlq_queues WHERE queue = $1::text",
  [SQLQ__SQL_RATE_GROW] =
    "INSERT INTO sqlq_rate_starts (queue, slot, started_at) SELECT $1::text, b.first + i, b.first + i"
    " FROM generate_series(0, $2::int8 - 1) AS i, (SELECT coalesce(max(slot), -1) + 1 AS first"
    "  FROM sqlq_rate_starts WHERE queue = $1::text) AS b",
  [SQLQ__SQL_RATE_NEWEST] = "SELECT started_at, slot FROM sqlq_rate_starts WHERE queue = $1::text"
                            " ORDER BY started_at DESC, slot DESC LIMIT 1 OFFSET $2::int8",
  [SQLQ__SQL_RATE_PRUNE] = "DELETE FROM sqlq_rate_starts WHERE " SLOTS_UPTO("<"),
  [SQLQ__SQL_RATE_FREE] =
    "SELECT started_at, slot FROM sqlq_rate_starts WHERE queue = $1::text"
    " AND started_at <= sqlq_now() - $2::int8 ORDER BY started_at, slot LIMIT $3::int8",
  [SQLQ__SQL_RATE_STAMP] =
    "UPDATE sqlq_rate_starts SET started_at = sqlq_now() WHERE " SLOTS_UPTO("<="),
  [SQLQ__SQL_CLAIM_RATES] = CLAIM(PAUSED_IF(LIMITED_RATES), GROUP_HEAD),
  [SQLQ__SQL_PAUSED_RATES] = PAUSED_ROW(LIMITED_RATES),
  [SQLQ__SQL_NEXT_DUE_RATES] = NEXT_DUE_AT(GROUP_HEAD, " AND NOT " FULL, RATE_DUE),
  [SQLQ__SQL_LIMIT_LOCK_RATES] = "SELECT max_running, rate_max, rate_period FROM sqlq_queues"
                                 " WHERE queue = $1::text AND (" LIMITED_RATES ")"
                                 " FOR NO KEY UPDATE",
  /* Per-group limits (schema version 10). */
  [SQLQ__SQL_GROUP_LIMIT_SET] =
    "INSERT INTO sqlq_queues (queue, group_running)"
    " VALUES ($1::text, nullif($2::int8, 1))"
    " ON CONFLICT (queue) DO UPDATE SET group_running = excluded.group_running",
  [SQLQ__SQL_GROUP_LIMIT_GET] =
    "SELECT coalesce(group_running, 1) FROM sqlq_queues WHERE queue = $1::text",
  [SQLQ__SQL_CLAIM_GROUPS] = CLAIM(PAUSED_IF(LIMITED_GROUPS), GROUP_ROOM),
  [SQLQ__SQL_PAUSED_GROUPS] = PAUSED_ROW(LIMITED_GROUPS),
  [SQLQ__SQL_NEXT_DUE_GROUPS] = NEXT_DUE_AT(GROUP_ROOM, " AND NOT " FULL, RATE_DUE),
  /* Claim lanes (schema version 11): the claim of CLAIM_GROUPS, each
  ** lane scanned from its floor in the cursor (see CLAIM_LANES); the wait
  ** of NEXT_DUE_GROUPS, with its scans started at the cursor's floors and
  ** its look for the end of a lease bounded (LEASE_AHEAD). */
  [SQLQ__SQL_CLAIM_LANES] = CLAIM_LANES,
  [SQLQ__SQL_NEXT_DUE_LANES] = NEXT_DUE_LANES,
  /* Fair queues (schema version 10).  FAIR_LOCK holds the queue's row as LIMIT_LOCK does; the
  ** statements after it read with snapshots taken after it was granted. */
  [SQLQ__SQL_FAIR_SET] = "INSERT INTO sqlq_queues (queue, fair)"
                         " VALUES ($1::text, nullif($2::int, 0))"
                         " ON CONFLICT (queue) DO UPDATE SET fair = excluded.fair",
  [SQLQ__SQL_FAIR_FORGET] = "DELETE FROM sqlq_groups WHERE queue = $1::text",
  [SQLQ__SQL_FAIR_GET] = "SELECT (fair IS NOT NULL)::int FROM sqlq_queues WHERE queue = $1::text",
  [SQLQ__SQL_FAIR_LOCK] =
    "SELECT coalesce(fair_served, 0), coalesce(group_running, 1) FROM sqlq_queues"
    " WHERE queue = $1::text AND fair IS NOT NULL AND NOT paused FOR NO KEY UPDATE",
  [SQLQ__SQL_FAIR_REAP] =
    "UPDATE sqlq_jobs SET"
    " state = CASE WHEN attempts >= max_attempts THEN 'dead' ELSE 'ready' END,"
    " last_error = 'lease expired during attempt ' || attempts,"
    " token = NULL, lease_until = NULL"
    " WHERE queue = $1::text AND state = 'running' AND lease_until <= sqlq_now()",
  [SQLQ__SQL_FAIR_TENANTS] = FAIR_SQL_TENANTS("sqlq_now()", "''", " COLLATE \"C\""),
  [SQLQ__SQL_FAIR_PICK_GROUP] = FAIR_SQL_PICK_GROUP("sqlq_now()", FAIR_SQL_LIMIT),
  [SQLQ__SQL_FAIR_PICK_FREE] = FAIR_SQL_PICK_FREE("sqlq_now()", FAIR_SQL_LIMIT),
  [SQLQ__SQL_FAIR_TAKE] = "UPDATE sqlq_jobs SET state = 'running', attempts = attempts + 1,"
                          " token = $2::int8, lease_until = sqlq_now() + $3::int8"
                          " WHERE id = $1::int8 AND (state = 'ready') IS TRUE"
                          " RETURNING " FAIR_SQL_COLUMNS,
  [SQLQ__SQL_FAIR_SERVE] =
    "INSERT INTO sqlq_groups (queue, grouped, group_key, served)"
    " VALUES ($1::text, $2::int, $3::text, $4::int8)"
    " ON CONFLICT (queue, grouped, group_key) DO UPDATE SET served = excluded.served",
  [SQLQ__SQL_FAIR_SERVED] = "UPDATE sqlq_queues SET fair_served = $2::int8 WHERE queue = $1::text",

  /* Health (docs/health.md): whatever holds back the oldest xmin that
  ** vacuum must keep row versions for in this database (a snapshot of a
  ** backend or a prepared transaction of this database, a replication
  ** slot), and what sqlq's tables carry.  This session's own snapshot is
  ** left out. */
  [SQLQ__SQL_HEALTH] =
    "WITH held(kind, x, holder, t) AS ("
    "  SELECT 'backend snapshot', backend_xmin, 'pid ' || pid"
    "   || coalesce(' user ' || usename, '')"
    "   || coalesce(' application ' || nullif(application_name, ''), '')"
    "   || coalesce(' client ' || host(client_addr), ''), xact_start"
    "  FROM pg_stat_activity WHERE backend_xmin IS NOT NULL AND pid <> pg_backend_pid()"
    "  AND datname = current_database()"
    "  UNION ALL SELECT 'prepared transaction', transaction,"
    "   'prepared ' || gid || ' owner ' || owner, prepared FROM pg_prepared_xacts"
    "  WHERE database = current_database()"
    "  UNION ALL SELECT 'replication slot', xmin, 'slot ' || slot_name, NULL"
    "  FROM pg_replication_slots WHERE xmin IS NOT NULL"
    "  UNION ALL SELECT 'replication slot catalog_xmin', catalog_xmin, 'slot ' || slot_name, NULL"
    "  FROM pg_replication_slots WHERE catalog_xmin IS NOT NULL),"
    " oldest AS (SELECT kind, age(x)::int8 AS xacts, holder, t FROM held"
    "  ORDER BY age(x) DESC, t NULLS LAST LIMIT 1),"
    " oldest1 AS (SELECT o.* FROM (SELECT 1) AS one LEFT JOIN oldest AS o ON true),"
    " tables AS (SELECT coalesce(sum(n_dead_tup), 0)::int8 AS dead,"
    "  coalesce(sum(pg_total_relation_size(relid)), 0)::int8 AS bytes FROM pg_stat_user_tables"
    "  WHERE schemaname = current_schema() AND relname LIKE 'sqlq\\_%')"
    " SELECT 'oldest_xmin_age'::text, coalesce(extract(epoch FROM statement_timestamp() - t), 0)::int8,"
    "  's'::text, 60::int8, holder, (extract(epoch FROM t) * 1000000)::int8,"
    "  kind || ', ' || xacts || ' transactions old' FROM oldest1"
    " UNION ALL SELECT 'oldest_xmin_xacts', coalesce(xacts, 0), 'transactions', 100000, holder,"
    "  (extract(epoch FROM t) * 1000000)::int8, kind FROM oldest1"
    " UNION ALL SELECT 'dead_rows', dead, 'rows', 100000, NULL, NULL, NULL FROM tables"
    " UNION ALL SELECT 'table_bytes', bytes, 'bytes', 1073741824, NULL, NULL, NULL FROM tables",

  /* A notification is its own transaction, sent after the COMMIT of the
  ** jobs it announces (see postgres.c): nothing is lost if a crash forgets
  ** it, so its commit does not wait for the disk. */
  [PG_SQL_NOTIFY] = "SELECT set_config('synchronous_commit', 'off', true),"
                    " pg_notify(sqlq_channel($1::text), $2::text)",
  [PG_SQL_LAZY] = "SELECT set_config('synchronous_commit', 'off', true)",
  [PG_SQL_CHANNEL] = "SELECT sqlq_channel($1::text)",
  [PG_SQL_NOTIFY_TX] = "SELECT pg_notify(sqlq_channel($1::text), $2::text)",

  /* Leases (schema version 14): see lease.c.  A released lease keeps its
  ** row (holder 0), so that its fence keeps growing. */
  [SQLQ__SQL_LEASE_TAKE] =
    "INSERT INTO sqlq_leases AS l (key, holder, fence, expires_at)"
    " VALUES ($1::bigint, $2::bigint, 1, sqlq_now() + $3::bigint)"
    " ON CONFLICT (key) DO UPDATE SET holder = EXCLUDED.holder, fence = l.fence + 1,"
    " expires_at = EXCLUDED.expires_at"
    " WHERE l.holder = 0 OR l.expires_at <= sqlq_now() RETURNING l.fence",
  [SQLQ__SQL_LEASE_RENEW] = "UPDATE sqlq_leases SET expires_at = sqlq_now() + $3::bigint"
                            " WHERE key = $1::bigint AND holder = $2::bigint RETURNING fence",
  [SQLQ__SQL_LEASE_RELEASE] = "UPDATE sqlq_leases SET holder = 0, expires_at = 0"
                              " WHERE key = $1::bigint AND holder = $2::bigint",

  /* Listing (list.c).  A named lock is a session advisory lock on the
  ** 64-bit key (postgres_lock.c), which pg_locks shows as its high and low
  ** 32 bits; the server keeps no name.  Another user's session shows no
  ** application or address to a reader outside pg_read_all_stats.  Names
  ** sort as bytes (COLLATE "C"). */
  [SQLQ__SQL_LOCK_LIST] =
    "SELECT NULL::bytea, (l.classid::int8 << 32) | l.objid::int8, l.pid,"
    " concat_ws(' ', nullif(a.application_name, ''), 'user ' || a.usename,"
    "  'from ' || host(a.client_addr)),"
    " (extract(epoch FROM a.backend_start) * 1000000)::int8"
    " FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid"
    " WHERE l.locktype = 'advisory' AND l.objsubid = 1 AND l.granted"
    " AND l.mode = 'ExclusiveLock'"
    " AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
    " ORDER BY 2 LIMIT $1::int8",
  [SQLQ__SQL_LEASE_LIST] =
    "SELECT key, expires_at, fence FROM sqlq_leases"
    " WHERE holder <> 0 AND expires_at > sqlq_now() ORDER BY key LIMIT $1::int8",
  [SQLQ__SQL_RING_LIST] = "SELECT name, capacity, next_seq - 1, created_at FROM sqlq_rings"
                          " WHERE $1::text IS NULL OR name COLLATE \"C\" > $1::text"
                          " ORDER BY name COLLATE \"C\" LIMIT $2::int8",
  [SQLQ__SQL_POOL_LIST_ALL] =
    "SELECT pool, count(*), count(*) FILTER (WHERE held_until > sqlq_now()), max(last_used)"
    " FROM sqlq_pool_items WHERE $1::text IS NULL OR pool COLLATE \"C\" > $1::text"
    " GROUP BY pool ORDER BY pool COLLATE \"C\" LIMIT $2::int8",

  /* Schedules (schema version 4). */
  [SQLQ__SQL_CRON_NOW] = "SELECT sqlq_now()",
  [SQLQ__SQL_CRON_ADD] =
    "INSERT INTO sqlq_schedules (name, spec, time_zone, queue, payload, missed, next_run)"
    " VALUES ($1::text, $2::text, $3::text, $4::text, $5::bytea, $6::int, $7::int8)",
  [SQLQ__SQL_CRON_REMOVE] = "DELETE FROM sqlq_schedules WHERE name = $1::text",
  [SQLQ__SQL_CRON_PAUSE] = "UPDATE sqlq_schedules SET paused = true WHERE name = $1::text",
  [SQLQ__SQL_CRON_RESUME] =
    "UPDATE sqlq_schedules SET paused = false, next_run = $2::int8 WHERE name = $1::text",
  [SQLQ__SQL_CRON_LIST] =
    "SELECT name, spec, time_zone, queue, payload, missed, paused::int, next_run, last_run"
    " FROM sqlq_schedules WHERE $1::text IS NULL OR name = $1::text"
    " ORDER BY name",
  [SQLQ__SQL_CRON_DUE] =
    "SELECT name, spec, time_zone, queue, payload, missed, paused::int, next_run, last_run"
    " FROM sqlq_schedules WHERE NOT paused AND next_run <= $1::int8"
    " ORDER BY next_run, name",
  [SQLQ__SQL_CRON_ADVANCE] =
    "UPDATE sqlq_schedules SET next_run = $3::int8, last_run = coalesce(nullif($4::int8, 0), last_run)"
    " WHERE name = $1::text AND next_run = $2::int8",
  [SQLQ__SQL_CRON_NEXT] = "SELECT min(next_run) FROM sqlq_schedules WHERE NOT paused",
  /* Retention.  Each reads or deletes a range of sqlq_jobs_history_age. */
  [SQLQ__SQL_RETENTION_SET] = "INSERT INTO sqlq_queues (queue, keep_for, keep_count)"
                              " VALUES ($1::text, nullif($2::int8, 0), nullif($3::int8, 0))"
                              " ON CONFLICT (queue) DO UPDATE SET keep_for = excluded.keep_for,"
                              " keep_count = excluded.keep_count",
  [SQLQ__SQL_RETENTION_GET] =
    "SELECT keep_for, keep_count, sqlq_now() FROM sqlq_queues WHERE queue = $1::text",
  [SQLQ__SQL_HISTORY_NEWEST] =
    "SELECT finished_at, id FROM sqlq_jobs_history WHERE queue = $1::text"
    " ORDER BY finished_at DESC, id DESC LIMIT 1 OFFSET $2::int8",
  [SQLQ__SQL_HISTORY_OLDEST] =
    "SELECT finished_at, id FROM sqlq_jobs_history WHERE queue = $1::text"
    " ORDER BY finished_at, id LIMIT 1 OFFSET $2::int8",
  [SQLQ__SQL_HISTORY_PRUNE] =
    "DELETE FROM sqlq_jobs_history WHERE queue = $1::text"
    " AND finished_at <= $2::int8 AND (finished_at < $2::int8 OR id <= $3::int8)",
  [SQLQ__SQL_HISTORY_LIST] =
    "SELECT id, $2::int, priority, attempts, max_attempts, finished_at, created_at, NULL::int8,"
    " dedupe_key, group_key, NULL::text, payload FROM sqlq_jobs_history WHERE queue = $1::text"
    " ORDER BY finished_at DESC, id DESC LIMIT nullif($3::int8, -1)",
  /* Counts (schema version 13). */
  COUNTS_SQL_ENTRIES(" ON CONFLICT DO NOTHING", "$1::text"),
  /* The identity column's sequence: NULL until its first nextval(). */
  [SQLQ__SQL_COUNTS_IDS] = "SELECT coalesce(pg_sequence_last_value("
                           "pg_get_serial_sequence('sqlq_jobs', 'id')::regclass), 0)",
};

/* Version 1: jobs, queues, history, the clock, the wake-up triggers.
** docs/schema.md documents each column. */
/* The body of the INSERT trigger that announces plain-SQL producers'
** jobs: one NOTIFY per queue per statement, unless the library inserted
** them (it announces its own after its commit). */
#define NOTIFY_PLAIN_INSERTS \
  "  IF coalesce(current_setting('sqlq.library', true), '') <> 'on' THEN" \
  "    PERFORM pg_notify(sqlq_channel(n.queue), count(*)::text)" \
  "      FROM sqlq_inserted n GROUP BY n.queue;" \
  "  END IF;"

static const char migration_1[] =
  "CREATE FUNCTION sqlq_now() RETURNS bigint LANGUAGE sql STABLE PARALLEL SAFE AS"
  " $$SELECT (extract(epoch FROM statement_timestamp()) * 1000000)::bigint$$;"
  "CREATE FUNCTION sqlq_channel(queue text) RETURNS text LANGUAGE sql IMMUTABLE"
  " PARALLEL SAFE AS $$SELECT 'sqlq_' || md5(queue)$$;"
  "CREATE TABLE sqlq_jobs ("
  " id           bigint   GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
  " queue        text     NOT NULL CHECK (octet_length(queue) BETWEEN 1 AND 128),"
  " state        text     NOT NULL DEFAULT 'ready'"
  "                       CHECK (state IN ('ready', 'running', 'dead')),"
  " priority     integer  NOT NULL DEFAULT 0,"
  " run_at       bigint   NOT NULL DEFAULT sqlq_now(),"
  " attempts     integer  NOT NULL DEFAULT 0,"
  " max_attempts integer  NOT NULL DEFAULT 25 CHECK (max_attempts >= 0),"
  " lease_until  bigint,"
  " token        bigint,"
  " dedupe_key   text,"
  " group_key    text,"
  " payload      bytea    NOT NULL DEFAULT '\\x',"
  " last_error   text,"
  " created_at   bigint   NOT NULL DEFAULT sqlq_now());"
  "CREATE INDEX sqlq_jobs_claim ON sqlq_jobs (queue, priority DESC, run_at, id)"
  " WHERE state = 'ready';"
  "CREATE INDEX sqlq_jobs_due ON sqlq_jobs (queue, run_at) WHERE state = 'ready';"
  "CREATE INDEX sqlq_jobs_lease ON sqlq_jobs (queue, lease_until) WHERE state = 'running';"
  "CREATE UNIQUE INDEX sqlq_jobs_dedupe ON sqlq_jobs (queue, dedupe_key)"
  " WHERE dedupe_key IS NOT NULL AND state IN ('ready', 'running');"
  "CREATE INDEX sqlq_jobs_group ON sqlq_jobs (queue, group_key, id)"
  " WHERE group_key IS NOT NULL AND state IN ('ready', 'running');"
  "CREATE TABLE sqlq_queues ("
  " queue  text    PRIMARY KEY CHECK (octet_length(queue) BETWEEN 1 AND 128),"
  " paused boolean NOT NULL DEFAULT false);"
  "CREATE TABLE sqlq_jobs_history ("
  " id           bigint  PRIMARY KEY,"
  " queue        text    NOT NULL,"
  " priority     integer NOT NULL,"
  " attempts     integer NOT NULL,"
  " max_attempts integer NOT NULL,"
  " dedupe_key   text,"
  " group_key    text,"
  " payload      bytea   NOT NULL,"
  " created_at   bigint  NOT NULL,"
  " finished_at  bigint  NOT NULL);"
  /* Plain-SQL producers: one NOTIFY per queue per INSERT statement. */
  "CREATE FUNCTION sqlq_jobs_inserted() RETURNS trigger LANGUAGE plpgsql AS $$"
  "BEGIN" NOTIFY_PLAIN_INSERTS "  RETURN NULL;"
  "END$$;"
  "CREATE TRIGGER sqlq_jobs_inserted AFTER INSERT ON sqlq_jobs"
  " REFERENCING NEW TABLE AS sqlq_inserted"
  " FOR EACH STATEMENT EXECUTE FUNCTION sqlq_jobs_inserted();"
  /* The head of a FIFO group finished: its next job may run. */
  "CREATE FUNCTION sqlq_jobs_group_moved() RETURNS trigger LANGUAGE plpgsql AS $$"
  "BEGIN"
  "  PERFORM pg_notify(sqlq_channel(OLD.queue), '1');"
  "  RETURN NULL;"
  "END$$;"
  "CREATE TRIGGER sqlq_jobs_group_deleted AFTER DELETE ON sqlq_jobs"
  " FOR EACH ROW WHEN (OLD.group_key IS NOT NULL)"
  " EXECUTE FUNCTION sqlq_jobs_group_moved();"
  "CREATE TRIGGER sqlq_jobs_group_dead AFTER UPDATE OF state ON sqlq_jobs"
  " FOR EACH ROW WHEN (OLD.group_key IS NOT NULL AND NEW.state = 'dead'"
  " AND OLD.state <> 'dead')"
  " EXECUTE FUNCTION sqlq_jobs_group_moved();";

/* Version 2: rings and pools.  docs/schema.md documents each column.
**
** sqlq_pool_next() hands out the least recently used free item of a pool.
** Its callers take turns on a transaction-scoped advisory lock of the pool
** (two 32-bit keys, a space apart from the 64-bit keys of named locks),
** and it looks for the item only once it has the lock: each statement of a
** PL/pgSQL function takes a new snapshot, so it sees the stamp of the
** caller before it.  (With SKIP LOCKED alone, a caller that finds the
** least recently used item locked takes the next one, and turns drift
** apart under contention.)  The stamp is the clock at that moment, or one
** past the pool's newest stamp, so turns follow the order of calls. */
static const char migration_2[] =
  "CREATE TABLE sqlq_rings ("
  " name       text    PRIMARY KEY CHECK (octet_length(name) BETWEEN 1 AND 128),"
  " capacity   bigint  NOT NULL CHECK (capacity BETWEEN 1 AND 1000000000),"
  " next_seq   bigint  NOT NULL DEFAULT 1,"
  " created_at bigint  NOT NULL DEFAULT sqlq_now());"
  "CREATE TABLE sqlq_ring_entries ("
  " ring    text    NOT NULL,"
  " slot    bigint  NOT NULL,"
  " seq     bigint  NOT NULL,"
  " at      bigint  NOT NULL,"
  " payload bytea   NOT NULL,"
  " PRIMARY KEY (ring, slot));"
  "CREATE UNIQUE INDEX sqlq_ring_entries_seq ON sqlq_ring_entries (ring, seq);"
  "CREATE TABLE sqlq_pool_items ("
  " id         bigint  GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
  " pool       text    NOT NULL CHECK (octet_length(pool) BETWEEN 1 AND 128),"
  " item       text    NOT NULL CHECK (octet_length(item) BETWEEN 1 AND 1024),"
  " last_used  bigint  NOT NULL DEFAULT 0,"
  " uses       bigint  NOT NULL DEFAULT 0,"
  " held_until bigint,"
  " token      bigint,"
  " UNIQUE (pool, item));"
  "CREATE INDEX sqlq_pool_items_lru ON sqlq_pool_items (pool, last_used, id);"
  "CREATE FUNCTION sqlq_pool_next(p_pool text, p_hold bigint, p_token bigint)"
  " RETURNS TABLE (r_id bigint, r_item text, r_last_used bigint, r_uses bigint,"
  "  r_held_until bigint) LANGUAGE plpgsql AS $$"
  "DECLARE"
  "  v_now bigint;"
  "BEGIN"
  "  PERFORM pg_advisory_xact_lock(1936813169, ('x' || left(md5(p_pool), 8))::bit(32)::int);"
  "  v_now := (extract(epoch FROM clock_timestamp()) * 1000000)::bigint;"
  "  RETURN QUERY UPDATE sqlq_pool_items AS i SET"
  "    last_used = greatest(v_now, (SELECT max(m.last_used) + 1 FROM sqlq_pool_items m"
  "      WHERE m.pool = p_pool)),"
  "    uses = i.uses + 1,"
  "    held_until = CASE WHEN p_hold > 0 THEN v_now + p_hold END,"
  "    token = CASE WHEN p_hold > 0 THEN p_token END"
  "  WHERE i.id = (SELECT f.id FROM sqlq_pool_items f WHERE f.pool = p_pool"
  "    AND (f.held_until IS NULL OR f.held_until <= v_now)"
  "    ORDER BY f.last_used, f.id LIMIT 1 FOR UPDATE SKIP LOCKED)"
  "  RETURNING i.id, i.item, i.last_used, i.uses, i.held_until;"
  "END$$;"
  /* Every claim leaves a dead entry at the head of sqlq_jobs_claim, and
  ** each later claim walks over all of them until VACUUM removes them
  ** (50,000 jobs after a VACUUM, a claim of one job read 1,100 pages).
  ** So the queue table is vacuumed at autovacuum's every round once it
  ** has 1,000 dead rows, whatever its size, and at full speed. */
  "ALTER TABLE sqlq_jobs SET (autovacuum_vacuum_scale_factor = 0,"
  " autovacuum_vacuum_threshold = 1000, autovacuum_vacuum_cost_delay = 0);";

/* Version 3: table subscriptions, one row per (table, action, tag).
** Names compare and sort byte by byte (COLLATE "C"), as on the other
** backends: the triggers enqueue in the order of the tags. */
static const char migration_3[] =
  "CREATE TABLE sqlq_subscriptions ("
  " table_name text    COLLATE \"C\" NOT NULL"
  "                    CHECK (octet_length(table_name) BETWEEN 1 AND 63),"
  " action     text    NOT NULL CHECK (action IN ('insert', 'update', 'delete')),"
  " tag        text    COLLATE \"C\" NOT NULL CHECK (octet_length(tag) BETWEEN 1 AND 128),"
  " with_rows  boolean NOT NULL DEFAULT false,"
  " created_at bigint  NOT NULL DEFAULT sqlq_now(),"
  " PRIMARY KEY (table_name, action, tag));";

/* Version 4: schedules of periodic jobs, one row each. */
static const char migration_4[] =
  "CREATE TABLE sqlq_schedules ("
  " name       text    COLLATE \"C\" PRIMARY KEY CHECK (octet_length(name) BETWEEN 1 AND 128),"
  " spec       text    NOT NULL CHECK (octet_length(spec) BETWEEN 1 AND 256),"
  " time_zone  text    NOT NULL DEFAULT 'UTC' CHECK (octet_length(time_zone) BETWEEN 1 AND 64),"
  " queue      text    NOT NULL CHECK (octet_length(queue) BETWEEN 1 AND 128),"
  " payload    bytea   NOT NULL DEFAULT '\\x',"
  " missed     integer NOT NULL DEFAULT 0 CHECK (missed >= -1),"
  " paused     boolean NOT NULL DEFAULT false,"
  " next_run   bigint  NOT NULL,"
  " last_run   bigint,"
  " created_at bigint  NOT NULL DEFAULT sqlq_now());";
/* Version 5: retention of finished jobs.  A queue's limits (NULL: none)
** and the index that prunes and lists its history in finishing order. */
static const char migration_5[] =
  "ALTER TABLE sqlq_queues ADD COLUMN keep_for bigint, ADD COLUMN keep_count bigint;"
  "CREATE INDEX sqlq_jobs_history_age ON sqlq_jobs_history (queue, finished_at, id);";

/* Version 6: concurrency limits, a column of the queue's row. */
static const char migration_6[] = "ALTER TABLE sqlq_queues ADD COLUMN max_running bigint;";
/* Version 7: dependencies (docs/schema.md). */
static const char migration_7[] =
  "ALTER TABLE sqlq_jobs ADD COLUMN awaited integer, ADD COLUMN waits integer;"
  "CREATE TABLE sqlq_deps ("
  " job_id   bigint NOT NULL,"
  " after_id bigint NOT NULL,"
  " PRIMARY KEY (job_id, after_id));"
  "CREATE INDEX sqlq_deps_after ON sqlq_deps (after_id, job_id);";

/* Version 8: rate limits: the rate in the queue's row, and its slots, the
** latest starts (docs/schema.md, "Rate limits"). */
static const char migration_8[] =
  "ALTER TABLE sqlq_queues ADD COLUMN rate_max bigint, ADD COLUMN rate_period bigint;"
  "CREATE TABLE sqlq_rate_starts ("
  " queue      text   NOT NULL,"
  " slot       bigint NOT NULL,"
  " started_at bigint NOT NULL,"
  " PRIMARY KEY (queue, slot));"
  "CREATE INDEX sqlq_rate_starts_age ON sqlq_rate_starts (queue, started_at, slot);";
/* Version 9: cancellation: when a dead job was cancelled (docs/schema.md). */
static const char migration_9[] = "ALTER TABLE sqlq_jobs ADD COLUMN cancelled_at bigint;";
/* Version 10: per-group limits, a column of the queue's row (NULL: 1);
** fair queues, two more, and their tenants' turns. */
static const char migration_10[] =
  "ALTER TABLE sqlq_queues ADD COLUMN group_running bigint, ADD COLUMN fair integer,"
  " ADD COLUMN fair_served bigint;"
  "CREATE TABLE sqlq_groups ("
  " queue     text    NOT NULL,"
  " grouped   integer NOT NULL,"
  " group_key text    NOT NULL,"
  " served    bigint  NOT NULL,"
  " PRIMARY KEY (queue, grouped, group_key));";

/* Version 11: claim lanes, each (queue, priority) that sqlq_jobs has
** held a job at, and the count of rewinds: the claim scans each lane from
** where its last scan left off (CLAIM_LANES).  The trigger on INSERT that
** announces plain-SQL jobs now records their lanes too, for every INSERT,
** and counts a rewind for a late job; another does the same for an UPDATE
** that makes a job ready.  The table is locked while the triggers change
** and the lanes of the jobs already there are copied, so that no INSERT
** slips between the two. */
static const char migration_11[] =
  "LOCK TABLE sqlq_jobs IN SHARE MODE;"
  "CREATE TABLE sqlq_lanes ("
  " queue    text    NOT NULL,"
  " priority integer NOT NULL,"
  " PRIMARY KEY (queue, priority));"
  "CREATE SEQUENCE sqlq_rewinds;"
  "SELECT nextval('sqlq_rewinds');"
  /* Whether a job made ready with run_at is late: older than the clock
  ** less the cursors' margin (see CLAIM_LANES). */
  "CREATE FUNCTION sqlq_late(run_at bigint) RETURNS boolean LANGUAGE sql AS $$"
  "  SELECT run_at < (extract(epoch FROM clock_timestamp()) * 1000000)::bigint - " MARGIN "$$;"
  /* The triggers run as the schema's owner: a plain-SQL producer needs
  ** only INSERT on sqlq_jobs (docs/postgres.md), not rights on what they
  ** keep. */
  "CREATE OR REPLACE FUNCTION sqlq_jobs_inserted() RETURNS trigger LANGUAGE plpgsql"
  " SECURITY DEFINER SET search_path FROM CURRENT AS $$"
  "BEGIN"
  "  IF EXISTS (SELECT 1 FROM (SELECT DISTINCT n.queue, n.priority FROM sqlq_inserted n) AS n"
  "      WHERE NOT EXISTS (SELECT 1 FROM sqlq_lanes l"
  "        WHERE l.queue = n.queue AND l.priority = n.priority)) THEN"
  "    INSERT INTO sqlq_lanes (queue, priority)"
  "      SELECT DISTINCT n.queue, n.priority FROM sqlq_inserted n ON CONFLICT DO NOTHING;"
  "  END IF;"
  /* The library's own INSERTs set run_at from their statement's clock. */
  "  IF coalesce(current_setting('sqlq.library', true), '') <> 'on' AND EXISTS (SELECT 1"
  "      FROM sqlq_inserted n WHERE n.state = 'ready' AND sqlq_late(n.run_at)) THEN"
  "    PERFORM nextval('sqlq_rewinds');"
  "  END IF;" NOTIFY_PLAIN_INSERTS "  RETURN NULL;"
  "END$$;"
  /* A job made ready again, or moved to another lane or to an earlier
  ** run_at, or a lease cut short, by an UPDATE. */
  "CREATE FUNCTION sqlq_jobs_made_ready() RETURNS trigger LANGUAGE plpgsql"
  " SECURITY DEFINER SET search_path FROM CURRENT AS $$"
  "BEGIN"
  "  IF NEW.state = 'running' THEN"
  "    IF sqlq_late(NEW.lease_until) THEN"
  "      PERFORM nextval('sqlq_rewinds');"
  "    END IF;"
  "    RETURN NULL;"
  "  END IF;"
  "  INSERT INTO sqlq_lanes (queue, priority) VALUES (NEW.queue, NEW.priority)"
  "    ON CONFLICT DO NOTHING;"
  "  IF sqlq_late(NEW.run_at) THEN"
  "    PERFORM nextval('sqlq_rewinds');"
  "  END IF;"
  "  RETURN NULL;"
  "END$$;"
  "CREATE TRIGGER sqlq_jobs_made_ready"
  " AFTER UPDATE OF queue, priority, run_at, state, lease_until ON sqlq_jobs FOR EACH ROW"
  " WHEN ((NEW.state = 'ready' AND (OLD.state <> 'ready' OR OLD.queue <> NEW.queue"
  " OR OLD.priority <> NEW.priority OR NEW.run_at < OLD.run_at))"
  " OR (NEW.state = 'running' AND NEW.lease_until < OLD.lease_until))"
  " EXECUTE FUNCTION sqlq_jobs_made_ready();"
  "INSERT INTO sqlq_lanes (queue, priority) SELECT DISTINCT queue, priority FROM sqlq_jobs;";

/* Version 12: the INSERT trigger of version 11 looked every statement's
** lanes up in sqlq_lanes, which tripled its cost (30 against 6 us of
** server time for the library's enqueue of one job: a query, and a
** SECURITY DEFINER function with its own search_path).  Lanes are never
** removed, so a session can remember the lanes it has seen exist: the
** trigger keeps them in the session setting sqlq.lanes_seen (a setting
** made in a transaction that rolls back is undone with it, as the lane it
** inserted).  The library's one-job enqueue names its lane in sqlq.lane
** (LIBRARY_LANE_TX); the trigger clears it, so that a later plain-SQL
** INSERT of the transaction is looked up as before.  Only the writes run
** as the schema's owner (sqlq_add_lanes, sqlq_rewind), so a producer
** still needs only INSERT on sqlq_jobs; the trigger itself runs as the
** producer, as version 1 made it. */
static const char migration_12[] =
  "CREATE FUNCTION sqlq_add_lanes(queues text[], priorities integer[]) RETURNS void"
  " LANGUAGE sql SECURITY DEFINER SET search_path FROM CURRENT AS $$"
  "  INSERT INTO sqlq_lanes (queue, priority) SELECT q, p FROM unnest(queues, priorities) AS u(q, p)"
  "  WHERE NOT EXISTS (SELECT 1 FROM sqlq_lanes l WHERE l.queue = u.q AND l.priority = u.p)"
  "  ON CONFLICT DO NOTHING $$;"
  "CREATE FUNCTION sqlq_rewind() RETURNS void"
  " LANGUAGE sql SECURITY DEFINER SET search_path FROM CURRENT AS $$"
  "  SELECT nextval('sqlq_rewinds') $$;"
  "CREATE OR REPLACE FUNCTION sqlq_jobs_inserted() RETURNS trigger LANGUAGE plpgsql AS $$"
  "DECLARE"
  "  lane text := coalesce(current_setting('sqlq.lane', true), '');"
  "  seen text;"
  "BEGIN"
  "  IF lane = '' OR strpos(coalesce(current_setting('sqlq.lanes_seen', true), ''), lane) = 0 THEN"
  "    PERFORM sqlq_add_lanes(array_agg(n.queue), array_agg(n.priority))"
  "      FROM (SELECT DISTINCT queue, priority FROM sqlq_inserted) AS n;"
  "    IF lane <> '' THEN"
  "      seen := coalesce(current_setting('sqlq.lanes_seen', true), '');"
  "      IF length(seen) > 8000 THEN"
  "        seen := '';"
  "      END IF;"
  "      seen := set_config('sqlq.lanes_seen', seen || lane, false);"
  "    END IF;"
  "  END IF;"
  "  IF lane <> '' THEN"
  "    lane := set_config('sqlq.lane', '', true);"
  "  END IF;"
  "  IF coalesce(current_setting('sqlq.library', true), '') <> 'on' THEN"
  /* The library's own INSERTs set run_at from their statement's clock. */
  "    IF EXISTS (SELECT 1 FROM sqlq_inserted n WHERE n.state = 'ready' AND sqlq_late(n.run_at)) THEN"
  "      PERFORM sqlq_rewind();"
  "    END IF;"
  "    PERFORM pg_notify(sqlq_channel(n.queue), count(*)::text)"
  "      FROM sqlq_inserted n GROUP BY n.queue;"
  "  END IF;"
  "  RETURN NULL;"
  "END$$;";

/* Version 13: the counts of what handles did, per queue, writer and
** minute (src/counts.c).  Their UPDATEs change no indexed column, so
** that they stay HOT updates. */
static const char migration_13[] =
  COUNTS_SQL_TABLE("CREATE TABLE", "bigint", "text", "text",
                   ";") "CREATE INDEX sqlq_counts_age ON sqlq_counts (minute_at);";

/* Version 14: named locks as leases (lease.c), for handles whose sessions
** cannot hold a lock (a transaction pooler between them and the server):
** one row per lock key that was ever taken so, its holder's token (0:
** free), its fence (one more at each taking) and when its lease runs out
** (sqlq_now() microseconds). */
static const char migration_14[] = "CREATE TABLE sqlq_leases ("
                                   " key        bigint PRIMARY KEY,"
                                   " holder     bigint NOT NULL,"
                                   " fence      bigint NOT NULL,"
                                   " expires_at bigint NOT NULL)";

/* Version 15: an index of the dead jobs, so that sqlq_summary() counts a
** queue's dead jobs, and finds the queues that have some, without reading
** its other jobs.  Only dead rows enter it: claims and acks never touch it. */
static const char migration_15[] =
  "CREATE INDEX sqlq_jobs_dead ON sqlq_jobs (queue, id) WHERE state = 'dead'";

const char *const sqlq__postgres_migrations[SQLQ_SCHEMA_VERSION] = {
  migration_1,  migration_2,  migration_3,  migration_4,  migration_5,
  migration_6,  migration_7,  migration_8,  migration_9,  migration_10,
  migration_11, migration_12, migration_13, migration_14, migration_15,
};
