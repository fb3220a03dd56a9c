/*
** mysql_sql.c -- the SQL text of the MySQL/MariaDB dialect and its
** migrations.
**
** NOW_US (mysql_int.h) is the server's clock in microseconds since the epoch, fixed for
** the length of a statement: UNIX_TIMESTAMP() and NOW(6) read the
** statement's start time, which the binary log carries, so a replica
** computes the same value (UTC_TIMESTAMP() would be logged as unsafe).  The
** whole seconds come from UNIX_TIMESTAMP(), which no time zone affects;
** only the microseconds come from NOW(6).
**
** Every writing statement is deterministic under statement-based
** replication (binlog_format=STATEMENT): no LIMIT in an UPDATE or DELETE,
** no UUID(), no SKIP LOCKED in a writing statement, no trigger that reads
** a table or writes one with an AUTO_INCREMENT column (migration 3,
** mysql_sub.c), job ids from a counter row held until commit.  The claim
** picks its jobs with a SELECT ... FOR UPDATE SKIP LOCKED and marks them
** with an UPDATE ... WHERE id IN (...) of the ids picked (mysql_claim.c);
** every ordering ends with the unique id.  No REAP: the claim takes back
** expired leases itself, and only when its pick saw that there are some.
**
** The jobs table keeps transient statistics (STATS_PERSISTENT=0), which
** InnoDB updates as the table changes, rather than persistent ones, updated
** in the background: with the statistics of a table that just grew from
** nothing, the optimizer scans a whole table for a DELETE of a list of ids,
** locking every row (DELETE takes no index hint; the UPDATEs name theirs).
**
** InnoDB has no partial indexes: the dedupe key's uniqueness among
** unfinished jobs is a unique index on a generated column that is NULL for
** finished jobs.  A duplicate is refused with error 1062, which the driver
** reads as "no row stored" (mysql.c).
**
** Wake-ups (mysql_wait.c): a waiting worker runs a SELECT that waits on
** the server, marked with a comment naming its queue's tag; the procedure
** sqlq_wake(queue, n) interrupts up to n of those waits with KILL QUERY ID,
** which writes nothing and so replicates nothing.
*/
#include "cancel_sql.h"
#include "counts_sql.h"
#include "summary_sql.h"
#include "deps_sql.h"
#include "fair_sql.h"
#include "mysql_int.h"
#include "schedules_sql.h"

/* A job of a FIFO group may run only when no earlier job of its group is
** unfinished.  (A subquery of a locking read reads without locking.)  The
** subquery names its index: given the choice, the optimizer looked the
** earlier jobs up by queue alone, reading every job of the queue for each
** job of a group, so that a queue of 20,000 table events (each its own
** group) drained at 1,000 jobs/s instead of 10,000. */
#define GROUP_HEAD_OF(j) \
  "(" j \
  ".group_key IS NULL OR NOT EXISTS (SELECT 1 FROM sqlq_jobs g FORCE INDEX (sqlq_jobs_group)" \
  " WHERE g.queue = " j ".queue AND g.group_key = " j ".group_key" \
  " AND g.state IN ('ready','running') AND g.id < " j ".id))"
#define GROUP_HEAD GROUP_HEAD_OF("j")

/* With per-group limits (schema version 10), a job of a group may run
** while fewer than the group limit of its queue (1 unless set) of the
** earlier jobs of its group are unfinished: the head of its group may, and
** the function sqlq_group_room (migration 10) counts for the others, with a
** search that stops at the n-th (LIMIT takes no expression outside a
** stored program).  The function runs only for the queues that have a
** per-group limit, q being the expression of the queue's name: a stored
** function that runs in the claim's locking read makes MariaDB log the
** read as unsafe under binlog_format=STATEMENT (a warning in the server's
** log, once a claim), though the read writes nothing to the binary log. */
#define GROUP_ROOM_OF(q) \
  "(" GROUP_HEAD " OR (EXISTS (SELECT 1 FROM sqlq_queues gr WHERE gr.queue = " q \
  " AND gr.group_running IS NOT NULL) AND sqlq_group_room(j.queue, j.group_key, j.id)))"
#define GROUP_ROOM GROUP_ROOM_OF("$1")

/* The claim's test of the queue's row (parameter $5: counted): neither
** paused nor limited while the claim did not count its running jobs. */
#define NOT_PAUSED_IF(limited) \
  "NOT EXISTS (SELECT 1 FROM sqlq_queues q WHERE q.queue = $1" \
  " AND (q.paused OR ((" limited ") AND $5 = 0)))"
/* The queue's row names a concurrency limit; or a rate limit too (schema
** version 8); or is fair too (schema version 10), as a fair queue's
** claims also take turns on its row. */
#define LIMITED "max_running IS NOT NULL"
#define LIMITED_RATES LIMITED " OR rate_max IS NOT NULL"
#define LIMITED_GROUPS LIMITED_RATES " OR fair IS NOT NULL"
#define NOT_PAUSED NOT_PAUSED_IF(LIMITED)
/* The row test as a statement: paused, limited. */
#define PAUSED_ROW(limited) "SELECT paused, " limited " FROM sqlq_queues WHERE queue = $1"

/* The queue named by the expression q has a concurrency limit and as many
** jobs running (with their leases current) as it allows: its ready jobs
** wait. */
#define FULL(q) \
  "EXISTS (SELECT 1 FROM sqlq_queues l WHERE l.queue = " q " AND l.max_running IS NOT NULL" \
  " AND l.max_running <= (SELECT count(*) FROM sqlq_jobs r FORCE INDEX (sqlq_jobs_lease)" \
  "  WHERE r.queue = " q " AND r.state = 'running' AND r.lease_until > " NOW_US "))"

/* The same test as NOT_PAUSED on a database without concurrency limits
** (schema version 5 or below). */
#define NOT_PAUSED_UNLIMITED \
  "NOT EXISTS (SELECT 1 FROM sqlq_queues q WHERE q.queue = $1 AND q.paused)"

/* The claim's pick (see CLAIM below), with not_paused as its test of the
** queue's row and head as its test of a job's group. */
#define CLAIM(not_paused, head) \
  "SELECT j.id, j.priority, j.run_at, j.attempts + 1, j.max_attempts, j.created_at," \
  " " NOW_US " + $3, j.group_key, j.dedupe_key, j.payload," \
  " EXISTS (SELECT 1 FROM sqlq_jobs FORCE INDEX (sqlq_jobs_lease) WHERE " EXPIRED ")" \
  " FROM sqlq_jobs j FORCE INDEX (sqlq_jobs_claim)" \
  " WHERE j.queue = $1 AND j.state = 'ready' AND j.run_at <= " NOW_US " AND " head \
  " AND " not_paused " ORDER BY j.priority DESC, j.run_at, j.id LIMIT $4 FOR UPDATE SKIP LOCKED"

/* NEXT_DUE, whose due jobs are those that pass the tests head and waits
** too, and whose first due job is due at the expression at of its run_at
** j.run_at. */
#define NEXT_DUE_AT(head, waits, at) \
  "SELECT (SELECT paused FROM sqlq_queues WHERE queue = $1)," \
  " (SELECT " at " FROM sqlq_jobs j WHERE j.queue = $1 AND j.state = 'ready'" \
  "  AND " head waits " ORDER BY j.run_at LIMIT 1) - " NOW_US "," \
  " (SELECT min(lease_until) FROM sqlq_jobs" \
  "  WHERE queue = $1 AND state = 'running') - " NOW_US
#define NEXT_DUE(head, waits) NEXT_DUE_AT(head, waits, "j.run_at")
/* When the rate of the queue named by the expression q frees its oldest
** slot (NULL: it has no rate). */
#define RATE_FREE_AT(q) \
  "((SELECT min(s.started_at) FROM sqlq_rate_starts s WHERE s.queue = " q ")" \
  " + (SELECT rate_period FROM sqlq_queues WHERE queue = " q "))"
/* A job is due no sooner than the queue's rate frees its oldest slot. */
#define RATE_DUE "GREATEST(j.run_at, COALESCE(" RATE_FREE_AT("$1") ", 0))"
/* The slots up to ($2, $3) in slot order, with the range of
** sqlq_rate_starts_age that holds them named first. */
#define SLOTS_UPTO(cmp) "queue = $1 AND started_at <= $2 AND (started_at < $2 OR slot " cmp " $3)"

#define HELD "id = $1 AND token = $2 AND state = 'running'"

/* Expired leases of queue $1.  Readers name the index sqlq_jobs_lease:
** given the choice, the optimizer read every job of the queue through
** another index that starts with the queue, 100 ms for 20,000 jobs, in
** every claim. */
#define EXPIRED "queue = $1 AND state = 'running' AND lease_until <= " NOW_US

/* Claim cursors (schema version 12; docs/mysql.md, "Claims under a
** long-held snapshot").  While a read view stays open, InnoDB keeps the
** delete-marked index entries of every job taken since, and a scan from
** the start of the queue's ready jobs (or of its running ones, for the
** expired leases) steps over all of them.  So each claim scans each
** priority lane from a floor in its queue's cursor, which the claim
** before it through the same handle returned (mysql_claim.c keeps it):
** the text "M L K D C p1 f1 p2 f2 ...", integers:
**   M  sqlq_job_ids.last_id as that claim read it: every job inserted
**      since, whenever its statement ran and whatever its run_at, has a
**      larger id, and a scan of the primary key from M finds them (see
**      "Late commits" below);
**   L  the lease floor: every expired lease that ended before it was
**      seen by a claim through this handle;
**   K  the queue's count of moves (sqlq_lane_moves): an UPDATE that makes
**      a job ready (a failure, a release, a retry, an expired lease taken
**      back, a dependency met, a plain-SQL UPDATE) counts one in the same
**      transaction, and a claim that reads another count than its
**      cursor's starts every lane from its start again;
**   D  the least of the floors, where the wait's scan starts;
**   C  the server's clock at that claim: a claim whose clock is earlier
**      (the clock went back) starts every lane and the leases from their
**      start;
**   pairs of a lane's priority and its floor, highest priority first: the
**      lane had no ready job with an earlier run_at that the claim's read
**      did not see, apart from those of M and K.
** A lane's next floor is the earliest of: its first ready job from its
** floor, visible to the claim's read (which may be one the claim took),
** the claim's clock less MARGIN (so that a job inserted meanwhile, as
** most are, is within it), and the earliest run_at of the ready jobs with
** ids past M (LOW).  mysql_claim.c computes them from the column
** LANES_NEXT, which reads them all in the claim's own statement: the
** subqueries of a locking read read without locks, from one read view.
**
** Late commits.  Job ids are not AUTO_INCREMENT values (which are given
** at the INSERT, so that a transaction holding id 100 may commit after id
** 105 was seen): since version 3 every id comes from the one row of
** sqlq_job_ids, updated in the inserting transaction (the trigger
** sqlq_jobs_id, or MY_SQL_TAKE_IDS for a batch), whose row lock it holds
** until it ends.  So if a claim's read view sees the counter at M, the
** transaction that set it committed before that view was made, and every
** transaction that took an id up to M had ended before it could (it
** waited for their locks): each job with an id up to M is in the view,
** or was rolled back.  A job the view does not see has an id past M, and
** the next claim's LOW, a scan of the primary key past M, finds it
** however long its transaction stayed open and whatever its run_at.  No
** information_schema.INNODB_TRX is needed (it takes the PROCESS
** privilege).  What escapes this: an INSERT that gives its own id (the
** trigger then leaves the counter alone); the contract asks for none.
** The cost is the one producers already pay: an open inserting
** transaction makes the others wait at the counter until it ends. */
#define NO_FLOOR "-9223372036854775807"
#define NONE_YET "9000000000000000000"
/* How far ahead a waiter with a cursor looks for the end of a lease: that
** scan steps over the acked jobs whose leases would have ended by then,
** so it looks two seconds ahead, the wait's default longest sleep
** (wake_interval), and looks again: an idle worker sends no more
** statements than it did. */
#define LEASE_AHEAD "2000000"
/* Field n (1-based) of the cursor text p, NULL without one. */
#define CURSOR_FIELD(p, n) \
  "CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(" p ", ' ', " #n "), ' ', -1) AS SIGNED)"
/* The fields of the pick's cursor ($6) and of the wait's ($2). */
#define PICK_ID CURSOR_FIELD("$6", 1)
#define PICK_LEASE CURSOR_FIELD("$6", 2)
#define DUE_ID CURSOR_FIELD("$2", 1)
#define DUE_LEASE CURSOR_FIELD("$2", 2)
#define DUE_MOVES CURSOR_FIELD("$2", 3)
#define DUE_FLOOR CURSOR_FIELD("$2", 4)
/* The count of moves of queue $1 (the sum over its lanes), and of the
** wait statement's queue. */
#define MOVES_OF(q) "(SELECT COALESCE(SUM(moved), 0) FROM sqlq_lane_moves WHERE queue = " q ")"
#define QUEUE_MOVES MOVES_OF("$1")
#define WAIT_MOVES MOVES_OF("@sqlq_wait_queue")
/* The expired leases of queue $1 that ended from the pick's lease floor
** on. */
#define EXPIRED_SINCE EXPIRED " AND lease_until >= COALESCE(" PICK_LEASE ", " NO_FLOOR ")"
/* The claim's tests of the queue's row and of a job's group. */
#define LANES_NOT_PAUSED NOT_PAUSED_IF(LIMITED_GROUPS)
#define LANES_NOT_FULL " AND NOT " FULL("$1")
/* The text from which mysql_claim.c makes the next cursor: M, the clock,
** K, LOW (NONE_YET: none), then for each lane of the arrays $7 (the
** priorities) and $8 (their floors) its priority and the run_at of its
** first ready job from its floor (NONE_YET: none; ORDER BY and LIMIT,
** not MIN(), which MariaDB computes by reading the whole range of an
** index with a descending part), then "|" and the lanes of sqlq_lanes the
** arrays lack. */
#define LANES_NEXT \
  "CONCAT_WS(' ', COALESCE((SELECT last_id FROM sqlq_job_ids WHERE one = 1), 0), " NOW_US "," \
  " " QUEUE_MOVES "," \
  " COALESCE((SELECT MIN(n.run_at) FROM sqlq_jobs n FORCE INDEX (PRIMARY)" \
  "  WHERE n.id > " PICK_ID " AND n.queue = $1 AND n.state = 'ready'), " NONE_YET ")," \
  " [[$7, COALESCE((SELECT f.run_at FROM sqlq_jobs f FORCE INDEX (sqlq_jobs_claim)" \
  "  WHERE f.queue = $1 AND f.state = 'ready' AND f.priority = $7 AND f.run_at >= $8" \
  "  ORDER BY f.run_at LIMIT 1), " NONE_YET ")]]," \
  " '|', (SELECT GROUP_CONCAT(l.priority SEPARATOR ' ') FROM sqlq_lanes l" \
  "  WHERE l.queue = $1 AND l.priority NOT IN ([[$7]])))"
/* The lanes pick (see SQLQ__SQL_CLAIM_LANES below), in two steps in one
** statement: the first $10 candidates, read without locks from the
** lanes' ranges of sqlq_jobs_claim (a derived table, which MariaDB
** materializes in that order), then each locked by its primary key, in
** the derived table's order, until $4 are had: no ORDER BY outside, which
** sorted the joined rows (locking every candidate) or their payloads in a
** temporary table; STRAIGHT_JOIN, since with a plain JOIN the optimizer
** may read sqlq_jobs first, in id order, and look each row up in the
** candidates (seen in my_lanes: a claim of one job took the lowest
** priority).  The core sorts the jobs it gets.  A locking scan of the
** ranges themselves stepped,
** past the end of its range, over every delete-marked entry a read view
** keeps (it locks each before it looks at its key: 25 ms against 1 ms
** after 30 s at 800 jobs/s), which a read without locks does not. */
#define CLAIM_LANES \
  "SELECT t.id, t.priority, t.run_at, t.attempts + 1, t.max_attempts, t.created_at," \
  " " NOW_US " + $3, t.group_key, t.dedupe_key, t.payload," \
  " EXISTS (SELECT 1 FROM sqlq_jobs FORCE INDEX (sqlq_jobs_lease) WHERE " EXPIRED_SINCE ")," \
  " " LANES_NEXT " FROM (SELECT j.id, j.priority, j.run_at FROM sqlq_jobs j" \
  "  FORCE INDEX (sqlq_jobs_claim) WHERE j.queue = $1 AND j.state = 'ready'" \
  "  AND j.run_at <= " NOW_US \
  "  AND ([[|(j.priority = $7 AND j.run_at >= $8) OR (j.priority < $7 AND j.priority > $9)]])" \
  "  AND " GROUP_ROOM " AND " LANES_NOT_PAUSED \
  "  ORDER BY j.priority DESC, j.run_at, j.id LIMIT $10) AS c" \
  " STRAIGHT_JOIN sqlq_jobs t FORCE INDEX (PRIMARY) ON t.id = c.id" \
  " WHERE t.queue = $1 AND t.state = 'ready' AND t.run_at <= " NOW_US \
  " LIMIT $4 FOR UPDATE SKIP LOCKED"
/* The first due job of queue $1 from the wait's cursor's due floor, and
** of those inserted since its id. */
#define DUE_FROM_FLOOR \
  "(SELECT " RATE_DUE " FROM sqlq_jobs j FORCE INDEX (sqlq_jobs_due)" \
  " WHERE j.queue = $1 AND j.state = 'ready' AND j.run_at >= COALESCE(" DUE_FLOOR ", " NO_FLOOR \
  ")" \
  " AND " GROUP_ROOM LANES_NOT_FULL " ORDER BY j.run_at LIMIT 1)"
#define DUE_SINCE_ID \
  "(SELECT " RATE_DUE " FROM sqlq_jobs j FORCE INDEX (PRIMARY)" \
  " WHERE j.id > " DUE_ID " AND j.queue = $1 AND j.state = 'ready'" \
  " AND " GROUP_ROOM LANES_NOT_FULL " ORDER BY j.run_at LIMIT 1)"
/* Due at once when the count of moves is not the cursor's. */
#define DUE_MOVED "IF($2 IS NULL OR " DUE_MOVES " = " QUEUE_MOVES ", " NONE_YET ", " NOW_US ")"
/* The first end of a lease from the cursor's lease floor, up to
** LEASE_AHEAD (when it has a cursor, LEASE_AHEAD when none is found). */
#define LEASE_FROM_FLOOR \
  "(SELECT COALESCE(MIN(lease_until), IF($2 IS NULL, NULL, " NOW_US " + " LEASE_AHEAD "))" \
  " FROM sqlq_jobs FORCE INDEX (sqlq_jobs_lease) WHERE queue = $1 AND state = 'running'" \
  " AND lease_until >= COALESCE(" DUE_LEASE ", " NO_FLOOR ")" \
  " AND ($2 IS NULL OR lease_until <= " NOW_US " + " LEASE_AHEAD "))"
#define NEXT_DUE_LANES \
  "SELECT (SELECT paused FROM sqlq_queues WHERE queue = $1)," \
  " NULLIF(LEAST(COALESCE(" DUE_FROM_FLOOR ", " NONE_YET "), COALESCE(" DUE_SINCE_ID ", " NONE_YET \
  "), " DUE_MOVED "), " NONE_YET ") - " NOW_US ", " LEASE_FROM_FLOOR " - " NOW_US

#define DEDUPE_FREE(j) \
  "(" j ".dedupe_key IS NULL OR NOT EXISTS (SELECT 1 FROM sqlq_jobs o" \
  " WHERE o.queue = " j ".queue AND o.dedupe_key = " j ".dedupe_key" \
  " AND o.state IN ('ready','running') AND o.id <> " j ".id))"

#define RETRY_SET \
  "UPDATE sqlq_jobs j SET j.state = 'ready', j.attempts = 0, j.run_at = " NOW_US "," \
  " j.token = NULL, j.lease_until = NULL"

/* The seconds until queue @sqlq_wait_queue next needs a worker (a due job
** that passes the tests head and waits, or an expired lease), NULL when
** never; for the wait statement. */
#define WAIT_DUE(head, waits) WAIT_DUE_AFTER(head, waits, "0")
/* WAIT_DUE, whose jobs are due no sooner than after (an expression: the
** time the queue's rate frees a slot, NULL when it has no rate, or 0).
** GREATEST() of a NULL is NULL in MariaDB: without the COALESCE, a queue
** without a rate had no due job, and a waiting worker never saw a job
** inserted with plain SQL. */
#define WAIT_DUE_AFTER(head, waits, after) \
  "(SELECT IF(EXISTS (SELECT 1 FROM sqlq_queues WHERE queue = @sqlq_wait_queue AND paused), NULL," \
  " (LEAST(COALESCE(GREATEST((SELECT min(j.run_at) FROM sqlq_jobs j" \
  "   WHERE j.queue = @sqlq_wait_queue AND j.state = 'ready' AND " head waits ")," \
  "   COALESCE(" after ", 0)), 9e18)," \
  "  COALESCE((SELECT min(lease_until) FROM sqlq_jobs WHERE queue = @sqlq_wait_queue" \
  "   AND state = 'running'), 9e18)) - " NOW_US ") / 1e6))"

#define ACK "DELETE FROM sqlq_jobs WHERE " HELD
#define HISTORY_COPY DEPS_SQL_HISTORY_COPY(NOW_US, HELD)
/* The array ack of the jobs that also meet guard. */
#define ACK_ARRAY(guard) \
  "DELETE FROM sqlq_jobs WHERE id IN ([[$1]]) AND state = 'running'" \
  " AND (id, token) IN ([[($1, $2)]])" guard " RETURNING id"

/* SUMMARY_COUNT of summary_sql.h, which reads sqlq_jobs_due (queue, state,
** run_at): MariaDB refuses a derived table that names an outer column. */
#define SUMMARY_WHERE(cond) \
  " FROM sqlq_jobs j FORCE INDEX (sqlq_jobs_due) WHERE j.queue = n.queue AND " cond
#define SUMMARY_PROBE(cond) "(SELECT 1" SUMMARY_WHERE(cond) " LIMIT $2, 1)"
#define SUMMARY_LIMIT "$2"
#define SUMMARY_COUNT(cond) SUMMARY_PROBED(cond)

const char *const sqlq__mysql_sql[MY_SQL_COUNT] = {
  /* Concurrent `sqlq init`s take turns (the lock is the session's, freed
  ** when init's transaction ends: see mysql.c). */
  [SQLQ__SQL_SCHEMA_TABLE] = "CREATE TABLE IF NOT EXISTS sqlq_schema ("
                             " version INT PRIMARY KEY, applied_at BIGINT NOT NULL) ENGINE=InnoDB",
  [SQLQ__SQL_SCHEMA_VERSION] = "SELECT max(version) FROM sqlq_schema",
  [SQLQ__SQL_SCHEMA_RECORD] =
    "INSERT INTO sqlq_schema (version, applied_at) VALUES ($1, " NOW_US ")",

  [SQLQ__SQL_ENQUEUE] =
    "INSERT INTO sqlq_jobs (queue, priority, run_at, max_attempts, dedupe_key,"
    " group_key, payload, created_at)"
    " VALUES ($1, $2, " NOW_US " + $3, $4, $5, $6, $7, " NOW_US ") RETURNING id",
  [SQLQ__SQL_DEDUPE_LOOKUP] = "SELECT id FROM sqlq_jobs WHERE queue = $1 AND dedupe_live = $2",
  [SQLQ__SQL_QUEUE_REGISTER] = "INSERT IGNORE INTO sqlq_queues (queue) VALUES ($1)",
  [SQLQ__SQL_PAUSED] = PAUSED_ROW(LIMITED),
  /* The claim's pick: the first $4 due jobs no other claimer holds.  The
  ** locking reads name their index: a scan of another would lock rows
  ** other claimers need (see mysql_claim.c).
  ** Columns: those of the core's CLAIM as the claim's UPDATE leaves them
  ** (the attempt counted, the new lease), then whether the queue has
  ** expired leases (read without locking). */
  [SQLQ__SQL_CLAIM] = CLAIM(NOT_PAUSED, GROUP_HEAD),

  [SQLQ__SQL_ACK] = ACK,
  [SQLQ__SQL_HISTORY_COPY] = HISTORY_COPY,
  [SQLQ__SQL_FAIL_PEEK] = "SELECT attempts, max_attempts, queue FROM sqlq_jobs WHERE " HELD,
  /* Single-table UPDATEs assign from left to right: run_at reads the old
  ** state before state changes. */
  [SQLQ__SQL_FAIL] = "UPDATE sqlq_jobs SET"
                     " run_at = IF($3 <> 0, run_at, " NOW_US " + $4),"
                     " state = IF($3 <> 0, 'dead', 'ready'),"
                     " last_error = $5, token = NULL, lease_until = NULL WHERE " HELD,
  /* RELEASE and TOUCH cannot return their rows: *_ROW read them. */
  [SQLQ__SQL_RELEASE] =
    "UPDATE sqlq_jobs SET state = 'ready', attempts = GREATEST(attempts - 1, 0),"
    " run_at = " NOW_US " + $3, token = NULL, lease_until = NULL WHERE " HELD,
  [SQLQ__SQL_TOUCH] = "UPDATE sqlq_jobs SET lease_until = " NOW_US " + $3 WHERE " HELD,

  [SQLQ__SQL_NEXT_DUE] = NEXT_DUE(GROUP_HEAD, " AND NOT " FULL("$1")),
  [SQLQ__SQL_PAUSE_SET] = "INSERT INTO sqlq_queues (queue, paused) VALUES ($1, $2 <> 0)"
                          " ON DUPLICATE KEY UPDATE paused = VALUES(paused)",
  [SQLQ__SQL_STATS] = "SELECT queue, CAST(sum(ready) AS SIGNED), CAST(sum(scheduled) AS SIGNED),"
                      " CAST(sum(running) AS SIGNED), CAST(sum(dead) AS SIGNED), max(paused)"
                      " FROM (SELECT queue, state = 'ready' AND run_at <= now AS ready,"
                      "  state = 'ready' AND run_at > now AS scheduled,"
                      "  state = 'running' AS running, state = 'dead' AS dead,"
                      "  0 AS paused FROM sqlq_jobs, (SELECT " NOW_US " AS now) AS clock"
                      "  WHERE $1 IS NULL OR queue = $1"
                      "  UNION ALL SELECT queue, 0, 0, 0, 0, paused FROM sqlq_queues"
                      "  WHERE $1 IS NULL OR queue = $1) AS counts"
                      " GROUP BY queue ORDER BY queue",
  /* The queues come from one loose index scan of sqlq_jobs_due (queue,
  ** state, run_at): each next name is a MIN() the optimizer answers with
  ** one descent.  MariaDB 10.11 runs it once, then answers "Unknown
  ** column 'n.queue'" when the prepared statement runs again if this
  ** select is wrapped in a derived table: HAVING drops the empty queues
  ** instead, and a NULL paused reads as 0. */
  [SQLQ__SQL_SUMMARY] =
    "WITH RECURSIVE names(queue) AS (SELECT min(queue) FROM sqlq_jobs WHERE $1 IS NULL"
    " UNION ALL SELECT (SELECT min(j.queue) FROM sqlq_jobs j WHERE j.queue > r.queue)"
    " FROM names r WHERE r.queue IS NOT NULL)"
    " SELECT n.queue, " SUMMARY_COUNTS ", " SUMMARY_PAUSED_AGE(
      " FORCE INDEX (sqlq_jobs_due)") " FROM (SELECT queue FROM names UNION SELECT queue FROM sqlq_queues WHERE $1 IS NULL"
                                      "  UNION SELECT $1) AS n, (SELECT " NOW_US
                                      " AS now) AS c WHERE n.queue IS NOT NULL"
                                      " HAVING " SUMMARY_KEPT " ORDER BY queue",
  [SQLQ__SQL_LIST] =
    "SELECT * FROM (SELECT id, CASE state WHEN 'running' THEN 2 WHEN 'dead' THEN 3"
    "  ELSE IF(run_at >= " SQLQ__WAITING_SQL ", 6, IF(run_at > " NOW_US ", 4, 1)) END AS st,"
    " priority, attempts, max_attempts, run_at, created_at, lease_until,"
    " dedupe_key, group_key, last_error, payload"
    " FROM sqlq_jobs WHERE queue = $1) AS jobs"
    " WHERE $2 = 0 OR st = $2"
    " ORDER BY priority DESC, run_at, id"
    " LIMIT $3",
  /* A job whose dedupe key an unfinished job holds stays where it is; of
  ** several dead jobs with one key, the oldest is retried. */
  [SQLQ__SQL_RETRY_ID] = RETRY_SET " WHERE j.queue = $1 AND j.id = $2"
                                   " AND j.state IN ('dead','ready') AND " DEDUPE_FREE("j"),
  [SQLQ__SQL_RETRY_DEAD] = RETRY_SET " WHERE j.queue = $1 AND j.state = 'dead' AND " DEDUPE_FREE(
    "j") " AND (j.dedupe_key IS NULL OR j.id = (SELECT min(d.id) FROM sqlq_jobs d"
         "  WHERE d.queue = j.queue AND d.dedupe_key = j.dedupe_key AND d.state = 'dead'))",
  [SQLQ__SQL_PURGE] = "DELETE FROM sqlq_jobs WHERE queue = $1",
  [SQLQ__SQL_DELETE_DEAD_ID] = "DELETE FROM sqlq_jobs WHERE queue = $1 AND id = $2"
                               " AND state = 'dead' AND awaited IS NULL",

  /* Batches (MariaDB's INSERT and DELETE ... RETURNING): a section
  ** [[...]] is repeated once per element of the arrays (mysql_bind.c).
  ** ENQUEUE_ARRAY's ids, $7, are taken from the counter by the driver
  ** before it runs (MY_SQL_TAKE_IDS, mysql_ids.c).  No ACK_HISTORY_ARRAY: a DELETE cannot copy
  ** its rows elsewhere, so keeping history acks one job at a time. */
  [SQLQ__SQL_ENQUEUE_ARRAY] =
    "INSERT INTO sqlq_jobs (id, queue, priority, run_at, max_attempts, group_key, payload,"
    " created_at) VALUES [[($7, $1, $2, " NOW_US " + $3, $4, $5, $6, " NOW_US ")]] RETURNING id",
  [SQLQ__SQL_ACK_ARRAY] = ACK_ARRAY(""),
  /* Dependencies (schema version 7).  The UPDATEs that read sqlq_jobs in
  ** a subquery (DEPS_KILL) need MariaDB 10.3.2 or later. */
  [SQLQ__SQL_ACK_FREE] = ACK DEPS_SQL_FREE,
  [SQLQ__SQL_HISTORY_COPY_FREE] = HISTORY_COPY DEPS_SQL_FREE,
  [SQLQ__SQL_ACK_ARRAY_FREE] = ACK_ARRAY(DEPS_SQL_FREE),
  DEPS_SQL_ENTRIES(NOW_US, "$1", DEPS_SQL_CONCAT),
  /* Cancellation (schema version 9). */
  CANCEL_SQL_ENTRIES(NOW_US),

  /* The driver's own statements. */
  [MY_SQL_EXPIRED_EXIST] =
    "SELECT EXISTS (SELECT 1 FROM sqlq_jobs FORCE INDEX (sqlq_jobs_lease) WHERE " EXPIRED ")",
  [MY_SQL_EXPIRED] =
    "SELECT id, attempts >= max_attempts FROM sqlq_jobs FORCE INDEX (sqlq_jobs_lease)"
    " WHERE " EXPIRED " ORDER BY id FOR UPDATE SKIP LOCKED",
  [MY_SQL_LANES_IDLE] = "SELECT EXISTS (SELECT 1 FROM sqlq_jobs FORCE INDEX (sqlq_jobs_lease)"
                        " WHERE " EXPIRED_SINCE "), " LANES_NEXT,
  [MY_SQL_EXPIRED_FROM] =
    "SELECT id, attempts >= max_attempts FROM sqlq_jobs FORCE INDEX (sqlq_jobs_lease)"
    " WHERE " EXPIRED " AND lease_until >= $2 ORDER BY id FOR UPDATE SKIP LOCKED",
  [SQLQ__SQL_RELEASE_ROW] = "SELECT queue FROM sqlq_jobs WHERE id = $1",
  [SQLQ__SQL_TOUCH_ROW] = "SELECT lease_until FROM sqlq_jobs WHERE " HELD,
  [MY_SQL_WAIT_QUEUE] = "SET @sqlq_wait_queue = $1, @sqlq_wait_block = $2",
  [MY_SQL_WAIT_TAG] = "SELECT MD5(CONCAT(DATABASE(), '/', $1))",
  [MY_SQL_WAKE] = "CALL sqlq_wake($1, $2)",

  /* Rings (schema version 2).  RING_ADVANCE's UPDATE takes the next
  ** numbers and keeps the ring's row locked until the transaction ends, so
  ** concurrent pushes take turns; RING_ADVANCE_ROW (run by the core once
  ** the UPDATE matched the row) reads the row as the
  ** UPDATE left it, since a transaction sees its own changes.  The ring
  ** entries have one unique key only, so that STORE's upsert is safe under
  ** statement-based replication. */
  [SQLQ__SQL_RING_CREATE] =
    "INSERT INTO sqlq_rings (name, capacity, created_at) VALUES ($1, $2, " NOW_US ")"
    " ON DUPLICATE KEY UPDATE name = name",
  [SQLQ__SQL_RING_INFO] = "SELECT capacity, next_seq - 1 FROM sqlq_rings WHERE name = $1",
  [SQLQ__SQL_RING_ADVANCE] = "UPDATE sqlq_rings SET next_seq = next_seq + $2 WHERE name = $1",
  [SQLQ__SQL_RING_ADVANCE_ROW] = "SELECT next_seq - $2, capacity FROM sqlq_rings WHERE name = $1",
  [SQLQ__SQL_RING_STORE] = "INSERT INTO sqlq_ring_entries (ring, slot, seq, at, payload)"
                           " VALUES ($1, $2 % $3, $2, " NOW_US ", $4) ON DUPLICATE KEY UPDATE"
                           " seq = VALUES(seq), at = VALUES(at), payload = VALUES(payload)",
  [SQLQ__SQL_RING_READ] =
    "SELECT seq, at, payload FROM sqlq_ring_entries WHERE ring = $1 AND seq > $2"
    " ORDER BY seq LIMIT $3",
  [SQLQ__SQL_RING_CLEAR] = "DELETE FROM sqlq_ring_entries WHERE ring = $1",
  [SQLQ__SQL_RING_DROP] = "DELETE FROM sqlq_rings WHERE name = $1",
  /* A ring follower's mark (see sqlq__mysql_ring_wait_sql). */
  [MY_SQL_WAIT_MARK] = "SET @sqlq_wait_mark = (SELECT next_seq FROM sqlq_rings"
                       " WHERE name = SUBSTRING(@sqlq_wait_queue, 7))",

  /* Pools (schema version 2).  POOL_NEXT is the pick of mysql_pool.c, which
  ** first takes the pool's turn (MY_SQL_POOL_TURN), then reads the newest
  ** stamp (MY_SQL_POOL_NEWEST), stamps the item picked (MY_SQL_POOL_STAMP)
  ** and reads it back (MY_SQL_POOL_PICKED).  The reads before the UPDATE
  ** lock what they read, and so read the newest committed rows. */
  [SQLQ__SQL_POOL_ADD] = "INSERT IGNORE INTO sqlq_pool_items (pool, item) VALUES ($1, $2)",
  [SQLQ__SQL_POOL_REMOVE] = "DELETE FROM sqlq_pool_items WHERE pool = $1 AND item = $2",
  [SQLQ__SQL_POOL_LIST] =
    "SELECT id, item, last_used, uses, IF(held_until > " NOW_US ", held_until, NULL)"
    " FROM sqlq_pool_items WHERE pool = $1 ORDER BY last_used, id",
  [MY_SQL_POOL_TURN] =
    "SELECT id FROM sqlq_pool_items FORCE INDEX (sqlq_pool_items_item) WHERE pool = $1"
    " ORDER BY item LIMIT 1 FOR UPDATE",
  [SQLQ__SQL_POOL_NEXT] =
    "SELECT id FROM sqlq_pool_items FORCE INDEX (sqlq_pool_items_lru) WHERE pool = $1"
    " AND (held_until IS NULL OR held_until <= " NOW_US ")"
    " ORDER BY last_used, id LIMIT 1 FOR UPDATE",
  [MY_SQL_POOL_NEWEST] =
    "SELECT last_used FROM sqlq_pool_items FORCE INDEX (sqlq_pool_items_lru) WHERE pool = $1"
    " ORDER BY last_used DESC, id DESC LIMIT 1 FOR UPDATE",
  /* The newest stamp comes as a value, $1: an UPDATE that reads it from
  ** the table (a table with an AUTO_INCREMENT column) is logged as unsafe
  ** for statement-based replication. */
  [MY_SQL_POOL_STAMP] =
    "UPDATE sqlq_pool_items SET last_used = GREATEST(" NOW_US ", $1 + 1), uses = uses + 1,"
    " held_until = IF($2 > 0, " NOW_US " + $2, NULL), token = IF($2 > 0, $3, NULL)"
    " WHERE id = $4",
  [MY_SQL_POOL_PICKED] =
    "SELECT id, item, last_used, uses, held_until FROM sqlq_pool_items WHERE id = $1",
  [SQLQ__SQL_POOL_COUNT] =
    "SELECT count(*) FROM sqlq_pool_items WHERE pool = $1 AND ($2 IS NULL OR item = $2)",
  [SQLQ__SQL_POOL_RELEASE] = "UPDATE sqlq_pool_items SET held_until = NULL, token = NULL"
                             " WHERE pool = $1 AND item = $2 AND token = $3",

  /* Listing (list.c).  Named locks are GET_LOCK locks of the whole server
  ** (mysql_lock.c), which information_schema.METADATA_LOCK_INFO shows
  ** (the lock's name in TABLE_SCHEMA) once the server's metadata_lock_info
  ** plugin is loaded.  A name sqlq hashed is "sqlq:" and the key's 16 hex
  ** digits; the driver's own locks ("sqlq-wait:...", "sqlq:init:...", a
  ** subscription's "sqlq:sqlq_...") are left out.  Names sort as bytes
  ** (the tables' names are VARBINARY). */
  [SQLQ__SQL_LOCK_LIST_CHECK] =
    "SELECT 'the server has no metadata_lock_info plugin loaded"
    " (INSTALL SONAME ''metadata_lock_info''; docs/mysql.md)' FROM DUAL WHERE NOT EXISTS"
    " (SELECT 1 FROM information_schema.PLUGINS WHERE PLUGIN_NAME = 'METADATA_LOCK_INFO'"
    "  AND PLUGIN_STATUS = 'ACTIVE')",
  [SQLQ__SQL_LOCK_LIST] =
    "SELECT IF(k.hashed, NULL, CAST(k.name AS BINARY)),"
    " IF(k.hashed, CAST(CAST(CONV(SUBSTRING(k.name, 6), 16, 10) AS UNSIGNED) AS SIGNED), NULL),"
    " k.THREAD_ID, CONCAT_WS(' ', CONCAT('user ', p.USER), CONCAT('from ', p.HOST)), NULL"
    " FROM (SELECT m.THREAD_ID, m.TABLE_SCHEMA AS name,"
    "  m.TABLE_SCHEMA REGEXP '^sqlq:[0-9a-f]{16}$' AS hashed"
    "  FROM information_schema.METADATA_LOCK_INFO m WHERE m.LOCK_TYPE = 'User lock') k"
    " LEFT JOIN information_schema.PROCESSLIST p ON p.ID = k.THREAD_ID"
    " WHERE k.hashed OR k.name NOT LIKE 'sqlq%' ORDER BY k.name LIMIT $1",
  [SQLQ__SQL_RING_LIST] = "SELECT name, capacity, next_seq - 1, created_at FROM sqlq_rings"
                          " WHERE $1 IS NULL OR name > $1 ORDER BY name LIMIT $2",
  [SQLQ__SQL_POOL_LIST_ALL] =
    "SELECT pool, count(*), sum(held_until > " NOW_US "), max(last_used) FROM sqlq_pool_items"
    " WHERE $1 IS NULL OR pool > $1 GROUP BY pool ORDER BY pool LIMIT $2",

  /* Subscriptions (schema version 3).  Tables are those of the default
  ** database (DATABASE()); a name compares byte for byte (BINARY), since
  ** information_schema's columns compare without regard to case.  A column
  ** holds bytes when its type is binary, varbinary or a blob, or its
  ** character set is binary.  SUB_ACTIONS reads with locks, so that
  ** concurrent subscribers of one table see each other's committed rows
  ** (mysql_sub.c). */
  [SQLQ__SQL_SUB_COLUMNS] =
    "SELECT c.COLUMN_NAME, COALESCE(k.SEQ_IN_INDEX, 0),"
    " c.DATA_TYPE IN ('binary','varbinary','tinyblob','blob','mediumblob','longblob')"
    "  OR c.CHARACTER_SET_NAME <=> 'binary'"
    " FROM information_schema.TABLES t JOIN information_schema.COLUMNS c"
    "  ON c.TABLE_SCHEMA = t.TABLE_SCHEMA AND c.TABLE_NAME = t.TABLE_NAME"
    " LEFT JOIN information_schema.STATISTICS k ON k.TABLE_SCHEMA = c.TABLE_SCHEMA"
    "  AND k.TABLE_NAME = c.TABLE_NAME AND k.COLUMN_NAME = c.COLUMN_NAME"
    "  AND k.INDEX_NAME = 'PRIMARY'"
    " WHERE t.TABLE_SCHEMA = DATABASE() AND t.TABLE_NAME = $1"
    " AND BINARY t.TABLE_NAME = $1 AND t.TABLE_TYPE = 'BASE TABLE'"
    " ORDER BY c.ORDINAL_POSITION",
  [SQLQ__SQL_SUB_ADD] =
    "INSERT INTO sqlq_subscriptions (table_name, action, tag, with_rows, created_at)"
    " VALUES ($1, $2, $3, $4 <> 0, " NOW_US ")"
    " ON DUPLICATE KEY UPDATE with_rows = VALUES(with_rows)",
  [SQLQ__SQL_SUB_REMOVE] = "DELETE FROM sqlq_subscriptions WHERE table_name = $1 AND tag = $2",
  [SQLQ__SQL_SUB_ACTIONS] = "SELECT action, with_rows FROM sqlq_subscriptions WHERE table_name = $1"
                            " ORDER BY action, tag FOR UPDATE",
  [SQLQ__SQL_SUB_LIST] =
    "SELECT table_name, tag, action, with_rows, created_at FROM sqlq_subscriptions"
    " ORDER BY table_name, tag, action",
  [MY_SQL_TAKE_IDS] =
    "UPDATE sqlq_job_ids SET last_id = LAST_INSERT_ID(last_id + $1) WHERE one = 1",
  [MY_SQL_SUB_TAGS] = "SELECT action, tag, with_rows FROM sqlq_subscriptions WHERE table_name = $1"
                      " ORDER BY action, tag FOR UPDATE",
  [SQLQ__SQL_SUB_TRIGGERS] =
    "SELECT TRIGGER_NAME, EVENT_OBJECT_TABLE FROM information_schema.TRIGGERS"
    " WHERE TRIGGER_SCHEMA = DATABASE() AND LEFT(TRIGGER_NAME, CHAR_LENGTH($1)) = $1",

  /* Schedules (schema version 4). */
  [SQLQ__SQL_CRON_NOW] = "SELECT " NOW_US,
  SCHEDULES_SQL_ENTRIES,
  /* Retention.  Each reads or deletes a range of sqlq_jobs_history_age;
  ** the DELETE has no LIMIT (the core bounds its range). */
  [SQLQ__SQL_RETENTION_SET] =
    "INSERT INTO sqlq_queues (queue, keep_for, keep_count) VALUES ($1, NULLIF($2, 0), NULLIF($3, 0))"
    " ON DUPLICATE KEY UPDATE keep_for = VALUES(keep_for), keep_count = VALUES(keep_count)",
  [SQLQ__SQL_RETENTION_GET] =
    "SELECT keep_for, keep_count, " NOW_US " FROM sqlq_queues WHERE queue = $1",
  [SQLQ__SQL_HISTORY_NEWEST] =
    "SELECT finished_at, id FROM sqlq_jobs_history FORCE INDEX (sqlq_jobs_history_age)"
    " WHERE queue = $1 ORDER BY finished_at DESC, id DESC LIMIT 1 OFFSET $2",
  [SQLQ__SQL_HISTORY_OLDEST] =
    "SELECT finished_at, id FROM sqlq_jobs_history FORCE INDEX (sqlq_jobs_history_age)"
    " WHERE queue = $1 ORDER BY finished_at, id LIMIT 1 OFFSET $2",
  [SQLQ__SQL_HISTORY_PRUNE] = "DELETE FROM sqlq_jobs_history WHERE queue = $1"
                              " AND finished_at <= $2 AND (finished_at < $2 OR id <= $3)",
  [SQLQ__SQL_HISTORY_LIST] =
    "SELECT id, CAST($2 AS SIGNED), priority, attempts, max_attempts, finished_at, created_at,"
    " CAST(NULL AS SIGNED), dedupe_key, group_key, CAST(NULL AS CHAR), payload"
    " FROM sqlq_jobs_history FORCE INDEX (sqlq_jobs_history_age) WHERE queue = $1"
    " ORDER BY finished_at DESC, id DESC LIMIT $3",
  /* Concurrency limits.  The count is a locking read, which reads the
  ** newest committed rows whatever the transaction's snapshot (a caller's
  ** REPEATABLE READ transaction may have read before the lock). */
  [SQLQ__SQL_LIMIT_SET] = "INSERT INTO sqlq_queues (queue, max_running) VALUES ($1, NULLIF($2, 0))"
                          " ON DUPLICATE KEY UPDATE max_running = VALUES(max_running)",
  [SQLQ__SQL_LIMIT_GET] = "SELECT max_running FROM sqlq_queues WHERE queue = $1",
  [SQLQ__SQL_LIMIT_LOCK] =
    "SELECT max_running FROM sqlq_queues WHERE queue = $1 AND max_running IS NOT NULL FOR UPDATE",
  [SQLQ__SQL_CLAIM_UNLIMITED] = CLAIM(NOT_PAUSED_UNLIMITED, GROUP_HEAD),
  [SQLQ__SQL_PAUSED_UNLIMITED] = PAUSED_ROW("0"),
  [SQLQ__SQL_NEXT_DUE_UNLIMITED] = NEXT_DUE(GROUP_HEAD, ""),
  [SQLQ__SQL_LIMIT_RUNNING] =
    "SELECT count(*) FROM sqlq_jobs FORCE INDEX (sqlq_jobs_lease)"
    " WHERE queue = $1 AND state = 'running' AND lease_until > " NOW_US " LOCK IN SHARE MODE",
  /* Rate limits (schema version 8).  RATE_FREE is a locking read, as
  ** LIMIT_RUNNING is; the writes name their rows by range, without LIMIT,
  ** for statement-based replication. */
  [SQLQ__SQL_RATE_SET] =
    "INSERT INTO sqlq_queues (queue, rate_max, rate_period) VALUES ($1, NULLIF($2, 0), NULLIF($3, 0))"
    " ON DUPLICATE KEY UPDATE rate_max = VALUES(rate_max), rate_period = VALUES(rate_period)",
  [SQLQ__SQL_RATE_GET] = "SELECT rate_max, rate_period,"
                         " (SELECT count(*) FROM sqlq_rate_starts WHERE queue = $1)"
                         " FROM sqlq_queues WHERE queue = $1",
  [SQLQ__SQL_RATE_GROW] =
    "INSERT INTO sqlq_rate_starts (queue, slot, started_at)"
    " WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < $2)"
    " SELECT $1, b.first + n.i, b.first + n.i FROM n, (SELECT COALESCE(MAX(slot), -1) + 1 AS first"
    "  FROM sqlq_rate_starts WHERE queue = $1) AS b",
  [SQLQ__SQL_RATE_NEWEST] = "SELECT started_at, slot FROM sqlq_rate_starts WHERE queue = $1"
                            " ORDER BY started_at DESC, slot DESC LIMIT 1 OFFSET $2",
  [SQLQ__SQL_RATE_PRUNE] = "DELETE FROM sqlq_rate_starts WHERE " SLOTS_UPTO("<"),
  [SQLQ__SQL_RATE_FREE] = "SELECT started_at, slot FROM sqlq_rate_starts"
                          " FORCE INDEX (sqlq_rate_starts_age) WHERE queue = $1"
                          " AND started_at <= " NOW_US " - $2 ORDER BY started_at, slot LIMIT $3"
                          " LOCK IN SHARE MODE",
  [SQLQ__SQL_RATE_STAMP] =
    "UPDATE sqlq_rate_starts FORCE INDEX (sqlq_rate_starts_age) SET started_at = " NOW_US
    " WHERE " SLOTS_UPTO("<="),
  [SQLQ__SQL_CLAIM_RATES] = CLAIM(NOT_PAUSED_IF(LIMITED_RATES), GROUP_HEAD),
  [SQLQ__SQL_PAUSED_RATES] = PAUSED_ROW(LIMITED_RATES),
  [SQLQ__SQL_NEXT_DUE_RATES] = NEXT_DUE_AT(GROUP_HEAD, " AND NOT " FULL("$1"), RATE_DUE),
  [SQLQ__SQL_LIMIT_LOCK_RATES] = "SELECT max_running, rate_max, rate_period FROM sqlq_queues"
                                 " WHERE queue = $1 AND (" LIMITED_RATES ") FOR UPDATE",
  /* Per-group limits (schema version 10). */
  [SQLQ__SQL_GROUP_LIMIT_SET] =
    "INSERT INTO sqlq_queues (queue, group_running) VALUES ($1, NULLIF($2, 1))"
    " ON DUPLICATE KEY UPDATE group_running = VALUES(group_running)",
  [SQLQ__SQL_GROUP_LIMIT_GET] =
    "SELECT COALESCE(group_running, 1) FROM sqlq_queues WHERE queue = $1",
  [SQLQ__SQL_CLAIM_GROUPS] = CLAIM(NOT_PAUSED_IF(LIMITED_GROUPS), GROUP_ROOM),
  [SQLQ__SQL_PAUSED_GROUPS] = PAUSED_ROW(LIMITED_GROUPS),
  [SQLQ__SQL_NEXT_DUE_GROUPS] = NEXT_DUE_AT(GROUP_ROOM, " AND NOT " FULL("$1"), RATE_DUE),
  /* Claim lanes (schema version 12; see "Claim cursors" above).  The pick
  ** of CLAIM_GROUPS, whose range is, for each lane of the arrays $7, $8
  ** and $9 (mysql_claim.c binds them from the cursor $6, highest priority
  ** first, after a first element above every priority), the lane from its
  ** floor and the priorities between it and the next lane, $9, which no
  ** lane of the cursor has: a new lane is scanned from its start.  Column
  ** 10 is whether the queue has expired leases since the lease floor,
  ** column 11 LANES_NEXT. */
  [SQLQ__SQL_CLAIM_LANES] = CLAIM_LANES,
  /* The wait of NEXT_DUE_GROUPS, its scans started at the floors of the
  ** cursor $2: the due floor D, the jobs inserted since M, and due at
  ** once when the queue's count of moves is not K; its look for the end
  ** of a lease bounded (LEASE_AHEAD). */
  [SQLQ__SQL_NEXT_DUE_LANES] = NEXT_DUE_LANES,
  /* Fair queues (schema version 10).  FAIR_LOCK holds the queue's row as LIMIT_LOCK does, and
  ** the claim's reads are of the newest commits (READ COMMITTED, see
  ** mysql_claim.c), whose writes name their rows (FAIR_TAKE by id). */
  [SQLQ__SQL_FAIR_SET] = "INSERT INTO sqlq_queues (queue, fair) VALUES ($1, NULLIF($2, 0))"
                         " ON DUPLICATE KEY UPDATE fair = VALUES(fair)",
  [SQLQ__SQL_FAIR_FORGET] = FAIR_SQL_FORGET,
  [SQLQ__SQL_FAIR_GET] = "SELECT fair IS NOT NULL FROM sqlq_queues WHERE queue = $1",
  [SQLQ__SQL_FAIR_LOCK] = "SELECT COALESCE(fair_served, 0), COALESCE(group_running, 1)"
                          " FROM sqlq_queues WHERE queue = $1 AND fair IS NOT NULL AND NOT paused"
                          " FOR UPDATE",
  [SQLQ__SQL_FAIR_REAP] = "UPDATE sqlq_jobs FORCE INDEX (sqlq_jobs_lease) SET"
                          " state = IF(attempts >= max_attempts, 'dead', 'ready'),"
                          " last_error = CONCAT('lease expired during attempt ', attempts),"
                          " token = NULL, lease_until = NULL WHERE " EXPIRED,
  [SQLQ__SQL_FAIR_TENANTS] = FAIR_SQL_TENANTS(NOW_US, "''", ""),
  [SQLQ__SQL_FAIR_PICK_GROUP] = FAIR_SQL_PICK_GROUP(NOW_US, FAIR_SQL_LIMIT),
  [SQLQ__SQL_FAIR_PICK_FREE] = FAIR_SQL_PICK_FREE(NOW_US, FAIR_SQL_LIMIT),
  [SQLQ__SQL_FAIR_TAKE] = "UPDATE sqlq_jobs FORCE INDEX (PRIMARY) SET state = 'running',"
                          " attempts = attempts + 1, token = $2, lease_until = " NOW_US " + $3"
                          " WHERE id = $1 AND state = 'ready'",
  [SQLQ__SQL_FAIR_TAKE_ROW] = "SELECT " FAIR_SQL_COLUMNS " FROM sqlq_jobs WHERE " HELD,
  [SQLQ__SQL_FAIR_SERVE] =
    "INSERT INTO sqlq_groups (queue, grouped, group_key, served) VALUES ($1, $2, $3, $4)"
    " ON DUPLICATE KEY UPDATE served = VALUES(served)",
  [SQLQ__SQL_FAIR_SERVED] = FAIR_SQL_SERVED,

  /* Health (docs/health.md): InnoDB's history list (undo that purge cannot
  ** free while an old read view lives), the oldest transaction of another
  ** connection, and the size of sqlq's tables. */
  [SQLQ__SQL_HEALTH] =
    "SELECT 'history_list_length', CAST(`COUNT` AS SIGNED), 'transactions', 100000,"
    "  NULL, NULL, NULL FROM information_schema.INNODB_METRICS"
    "  WHERE NAME = 'trx_rseg_history_len'"
    " UNION ALL SELECT 'oldest_transaction_age',"
    "  CAST(COALESCE(TIMESTAMPDIFF(SECOND, t.trx_started, NOW()), 0) AS SIGNED), 's', 60,"
    "  CONCAT('thread ', t.trx_mysql_thread_id, COALESCE(CONCAT(' user ', p.USER), ''),"
    "   COALESCE(CONCAT(' host ', p.HOST), '')),"
    "  CAST(UNIX_TIMESTAMP(t.trx_started) * 1000000 AS SIGNED),"
    "  CONCAT(t.trx_state, COALESCE(CONCAT(', ', t.trx_isolation_level), ''), ', ',"
    "   t.trx_rows_modified, ' rows modified')"
    "  FROM (SELECT 1) AS one LEFT JOIN (SELECT trx_started, trx_mysql_thread_id, trx_state,"
    "   trx_isolation_level, trx_rows_modified FROM information_schema.INNODB_TRX"
    "   WHERE trx_mysql_thread_id <> CONNECTION_ID() ORDER BY trx_started, trx_id LIMIT 1) AS t"
    "  ON TRUE LEFT JOIN information_schema.PROCESSLIST AS p ON p.ID = t.trx_mysql_thread_id"
    " UNION ALL SELECT 'table_bytes', CAST(COALESCE(SUM(DATA_LENGTH + INDEX_LENGTH), 0) AS SIGNED),"
    "  'bytes', 1073741824, NULL, NULL, NULL FROM information_schema.TABLES"
    "  WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE 'sqlq\\_%'",
  /* Counts (schema version 13). */
  COUNTS_SQL_ENTRIES("", "$1"),
  /* The counter the trigger sqlq_jobs_id takes ids from (version 3). */
  [SQLQ__SQL_COUNTS_IDS] = "SELECT coalesce((SELECT last_id FROM sqlq_job_ids WHERE one = 1), 0)",
};

/* The body of the wait statement after its "SELECT /\*sqlq-wait:TAG*\/ ",
** with two %s: the longest wait, in seconds, as a literal.  It waits for
** the lock @sqlq_wait_block, which the handle's second session holds
** (mysql_wait.c): 2 when the wait ran out, 3 when the lock was had. */
#define WAIT_BODY(due) \
  "IF(d <= 0, 1, 2 + GET_LOCK(@sqlq_wait_block, LEAST(COALESCE(d, %s), %s)))" \
  " FROM (SELECT " due " AS d) AS due"
const char sqlq__mysql_wait_sql[] =
  WAIT_BODY(WAIT_DUE(GROUP_HEAD, " AND NOT " FULL("@sqlq_wait_queue")));
const char sqlq__mysql_wait_unlimited_sql[] = WAIT_BODY(WAIT_DUE(GROUP_HEAD, ""));
const char sqlq__mysql_wait_rates_sql[] = WAIT_BODY(WAIT_DUE_AFTER(
  GROUP_HEAD, " AND NOT " FULL("@sqlq_wait_queue"), RATE_FREE_AT("@sqlq_wait_queue")));
const char sqlq__mysql_wait_groups_sql[] =
  WAIT_BODY(WAIT_DUE_AFTER(GROUP_ROOM_OF("@sqlq_wait_queue"), " AND NOT " FULL("@sqlq_wait_queue"),
                           RATE_FREE_AT("@sqlq_wait_queue")));

/* The wait of a queue with a claim cursor (schema version 12): the
** scans of WAIT_DUE_AFTER started at the cursor's floors, as
** NEXT_DUE_LANES's are (its due floor, job id, count of moves and lease
** floor are written into the text as integers, in that order). */
#define WAIT_DUE_LANES(head, waits, after) \
  "(SELECT IF(EXISTS (SELECT 1 FROM sqlq_queues WHERE queue = @sqlq_wait_queue AND paused), NULL," \
  " (LEAST(COALESCE(GREATEST(LEAST(" \
  "   COALESCE((SELECT min(j.run_at) FROM sqlq_jobs j FORCE INDEX (sqlq_jobs_due)" \
  "    WHERE j.queue = @sqlq_wait_queue AND j.state = 'ready' AND j.run_at >= %lld" \
  "    AND " head waits "), 9e18)," \
  "   COALESCE((SELECT min(j.run_at) FROM sqlq_jobs j FORCE INDEX (PRIMARY)" \
  "    WHERE j.id > %lld AND j.queue = @sqlq_wait_queue AND j.state = 'ready'" \
  "    AND " head waits "), 9e18)," \
  "   IF(" WAIT_MOVES " = %lld, 9e18, " NOW_US "))," \
  "   COALESCE(" after ", 0)), 9e18)," \
  "  COALESCE((SELECT COALESCE(min(lease_until), " NOW_US " + " LEASE_AHEAD ")" \
  "   FROM sqlq_jobs FORCE INDEX (sqlq_jobs_lease) WHERE queue = @sqlq_wait_queue" \
  "   AND state = 'running' AND lease_until >= %lld" \
  "   AND lease_until <= " NOW_US " + " LEASE_AHEAD "), 9e18)) - " NOW_US ") / 1e6))"
const char sqlq__mysql_wait_lanes_sql[] =
  WAIT_BODY(WAIT_DUE_LANES(GROUP_ROOM_OF("@sqlq_wait_queue"), " AND NOT " FULL("@sqlq_wait_queue"),
                           RATE_FREE_AT("@sqlq_wait_queue")));

/* The same for a ring's followers: due now when the ring's counter is not
** the mark MY_SQL_WAIT_MARK took (the ring is named after the channel's
** 6 characters "\x1Ering:"), else only a push's KILL QUERY ends it. */
const char sqlq__mysql_ring_wait_sql[] =
  WAIT_BODY("IF((SELECT next_seq FROM sqlq_rings WHERE name = SUBSTRING(@sqlq_wait_queue, 7))"
            " <=> @sqlq_wait_mark, NULL, 0)");

/* Interrupt up to n waiting waiters of channel wake_queue (mysql_wait.c):
** their statements start with the comment sqlq-wait and the channel's tag.
** A waiter that finished in the meantime is not there to kill: KILL QUERY
** ID names the statement, never what its session runs next.  width is the
** longest channel, in characters. */
#define WAKE_PROCEDURE(width) \
  "CREATE PROCEDURE sqlq_wake(IN wake_queue VARCHAR(" width "), IN n INT)" \
  " SQL SECURITY DEFINER MODIFIES SQL DATA" \
  " BEGIN" \
  "  DECLARE done INT DEFAULT 0;" \
  "  DECLARE qid BIGINT;" \
  "  DECLARE waits CURSOR FOR SELECT query_id FROM information_schema.processlist" \
  "   WHERE command = 'Query' AND info LIKE CONCAT('SELECT /*sqlq-wait:'," \
  "    MD5(CONCAT(DATABASE(), '/', wake_queue)), '*/%')" \
  "   ORDER BY time_ms DESC, id LIMIT n;" \
  "  DECLARE CONTINUE HANDLER FOR NOT FOUND SET done = 1;" \
  "  DECLARE CONTINUE HANDLER FOR SQLEXCEPTION BEGIN END;" \
  "  OPEN waits;" \
  "  fetching: LOOP" \
  "   FETCH waits INTO qid;" \
  "   IF done THEN LEAVE fetching; END IF;" \
  "   KILL QUERY ID qid;" \
  "  END LOOP;" \
  "  CLOSE waits;" \
  " END"

/* Version 1: jobs, queues, history, the wake-up procedure.  docs/schema.md
** documents each column; docs/mysql.md the procedure. */
static const char migration_1[] =
  "CREATE TABLE sqlq_jobs ("
  " id           BIGINT       NOT NULL AUTO_INCREMENT PRIMARY KEY,"
  " queue        VARCHAR(128) NOT NULL,"
  " state        VARCHAR(8)   NOT NULL DEFAULT 'ready',"
  " priority     INT          NOT NULL DEFAULT 0,"
  " run_at       BIGINT       NOT NULL DEFAULT (" NOW_US "),"
  " attempts     INT          NOT NULL DEFAULT 0,"
  " max_attempts INT          NOT NULL DEFAULT 25,"
  " lease_until  BIGINT,"
  " token        BIGINT,"
  " dedupe_key   VARCHAR(255),"
  " group_key    VARCHAR(255),"
  " payload      LONGBLOB     NOT NULL DEFAULT '',"
  " last_error   TEXT,"
  " created_at   BIGINT       NOT NULL DEFAULT (" NOW_US "),"
  " dedupe_live  VARCHAR(255) AS (IF(state IN ('ready','running'), dedupe_key, NULL)) VIRTUAL,"
  " CONSTRAINT sqlq_jobs_queue CHECK (octet_length(queue) BETWEEN 1 AND 128),"
  " CONSTRAINT sqlq_jobs_state CHECK (state IN ('ready','running','dead')),"
  " CONSTRAINT sqlq_jobs_attempts CHECK (max_attempts >= 0),"
  " KEY sqlq_jobs_claim (queue, state, priority DESC, run_at, id),"
  " KEY sqlq_jobs_due (queue, state, run_at),"
  " KEY sqlq_jobs_lease (queue, state, lease_until),"
  " UNIQUE KEY sqlq_jobs_dedupe (queue, dedupe_live),"
  " KEY sqlq_jobs_group (queue, group_key, id)"
  ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin STATS_PERSISTENT=0;"
  "CREATE TABLE sqlq_queues ("
  " queue  VARCHAR(128) NOT NULL PRIMARY KEY,"
  " paused BOOLEAN      NOT NULL DEFAULT FALSE"
  ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;"
  "CREATE TABLE sqlq_jobs_history ("
  " id           BIGINT       NOT NULL PRIMARY KEY,"
  " queue        VARCHAR(128) NOT NULL,"
  " priority     INT          NOT NULL,"
  " attempts     INT          NOT NULL,"
  " max_attempts INT          NOT NULL,"
  " dedupe_key   VARCHAR(255),"
  " group_key    VARCHAR(255),"
  " payload      LONGBLOB     NOT NULL,"
  " created_at   BIGINT       NOT NULL,"
  " finished_at  BIGINT       NOT NULL"
  ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;" WAKE_PROCEDURE("128");

/* Version 2: rings and pools.  docs/schema.md documents each column.
** Names and items are VARBINARY: compared byte for byte like the other
** dialects' text (utf8mb4_bin pads with spaces), and an item's 1024 bytes
** fit the unique key (InnoDB keys hold at most 3072 bytes). */
static const char migration_2[] =
  "CREATE TABLE sqlq_rings ("
  " name       VARBINARY(128) NOT NULL PRIMARY KEY,"
  " capacity   BIGINT         NOT NULL,"
  " next_seq   BIGINT         NOT NULL DEFAULT 1,"
  " created_at BIGINT         NOT NULL DEFAULT (" NOW_US "),"
  " CONSTRAINT sqlq_rings_name CHECK (octet_length(name) BETWEEN 1 AND 128),"
  " CONSTRAINT sqlq_rings_capacity CHECK (capacity BETWEEN 1 AND 1000000000)"
  ") ENGINE=InnoDB;"
  "CREATE TABLE sqlq_ring_entries ("
  " ring    VARBINARY(128) NOT NULL,"
  " slot    BIGINT         NOT NULL,"
  " seq     BIGINT         NOT NULL,"
  " at      BIGINT         NOT NULL,"
  " payload LONGBLOB       NOT NULL,"
  " PRIMARY KEY (ring, slot),"
  " KEY sqlq_ring_entries_seq (ring, seq)"
  ") ENGINE=InnoDB;"
  "CREATE TABLE sqlq_pool_items ("
  " id         BIGINT          NOT NULL AUTO_INCREMENT PRIMARY KEY,"
  " pool       VARBINARY(128)  NOT NULL,"
  " item       VARBINARY(1024) NOT NULL,"
  " last_used  BIGINT          NOT NULL DEFAULT 0,"
  " uses       BIGINT          NOT NULL DEFAULT 0,"
  " held_until BIGINT,"
  " token      BIGINT,"
  " CONSTRAINT sqlq_pool_items_pool_size CHECK (octet_length(pool) BETWEEN 1 AND 128),"
  " CONSTRAINT sqlq_pool_items_item_size CHECK (octet_length(item) BETWEEN 1 AND 1024),"
  " UNIQUE KEY sqlq_pool_items_item (pool, item),"
  " KEY sqlq_pool_items_lru (pool, last_used, id)"
  ") ENGINE=InnoDB;"
  /* A ring's channel ("\x1Ering:NAME") is longer than a queue's name. */
  "DROP PROCEDURE sqlq_wake;" WAKE_PROCEDURE("134");

/* Version 3: table subscriptions, and job ids without AUTO_INCREMENT.
**
** Under statement-based replication, a trigger that inserts into a table
** with an AUTO_INCREMENT column is logged as unsafe, even when it gives the
** id.  So the subscription triggers' jobs, and every other job, take their
** ids from the one row of sqlq_job_ids: the trigger sqlq_jobs_id gives an
** INSERT that leaves id out (its default, 0) or gives 0 or NULL the next
** number.  It reads the number back with LAST_INSERT_ID(), never with a
** SELECT: a statement that writes a table with an AUTO_INCREMENT column (an
** application's subscribed table) and reads another table, in a trigger
** too, is logged as unsafe.  (A trigger's LAST_INSERT_ID() is restored
** when the trigger ends.)  The counter's row stays locked until the inserting transaction
** ends, so that concurrent producers take turns and the ids follow the
** order of the commits, which a replica replays (docs/mysql.md, "Job
** ids").
**
** The upgrade keeps every job and its id.  The counter starts after the
** largest id the table handed out (its AUTO_INCREMENT) or stores; the
** trigger takes over while the column still numbers rows itself, the
** counter then catches up with any row numbered meanwhile, and only then
** does the column lose its AUTO_INCREMENT.  Each step may run again after
** a failure part way (DDL commits as it goes): `sqlq init` completes it. */
#define JOB_IDS_CATCH_UP \
  "GREATEST(COALESCE((SELECT max(id) FROM sqlq_jobs), 0)," \
  " COALESCE((SELECT max(id) FROM sqlq_jobs_history), 0))"
static const char migration_3[] =
  "CREATE TABLE IF NOT EXISTS sqlq_subscriptions ("
  " table_name VARCHAR(64)  NOT NULL,"
  " action     VARCHAR(6)   NOT NULL,"
  " tag        VARCHAR(128) NOT NULL,"
  " with_rows  BOOLEAN      NOT NULL DEFAULT FALSE,"
  " created_at BIGINT       NOT NULL DEFAULT (" NOW_US "),"
  " CONSTRAINT sqlq_subscriptions_table CHECK (char_length(table_name) BETWEEN 1 AND 63),"
  " CONSTRAINT sqlq_subscriptions_action CHECK (action IN ('insert','update','delete')),"
  " CONSTRAINT sqlq_subscriptions_tag CHECK (octet_length(tag) BETWEEN 1 AND 128),"
  " PRIMARY KEY (table_name, action, tag)"
  ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;"
  "CREATE TABLE IF NOT EXISTS sqlq_job_ids ("
  " one     TINYINT NOT NULL PRIMARY KEY,"
  " last_id BIGINT  NOT NULL,"
  " CONSTRAINT sqlq_job_ids_one CHECK (one = 1)"
  ") ENGINE=InnoDB;"
  "SET @sqlq_next_id = (SELECT AUTO_INCREMENT FROM information_schema.TABLES"
  " WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'sqlq_jobs');"
  "INSERT INTO sqlq_job_ids (one, last_id)"
  " VALUES (1, GREATEST(COALESCE(@sqlq_next_id - 1, 0), " JOB_IDS_CATCH_UP "))"
  " ON DUPLICATE KEY UPDATE last_id = GREATEST(last_id, VALUES(last_id));"
  "CREATE OR REPLACE TRIGGER sqlq_jobs_id BEFORE INSERT ON sqlq_jobs FOR EACH ROW"
  " IF NEW.id IS NULL OR NEW.id = 0 THEN"
  "  UPDATE sqlq_job_ids SET last_id = LAST_INSERT_ID(last_id + 1) WHERE one = 1;"
  "  SET NEW.id = LAST_INSERT_ID();"
  " END IF;"
  "UPDATE sqlq_job_ids SET last_id = GREATEST(last_id, " JOB_IDS_CATCH_UP ") WHERE one = 1;"
  "ALTER TABLE sqlq_jobs MODIFY id BIGINT NOT NULL DEFAULT 0";

/* Version 4: schedules of periodic jobs, one row each. */
static const char migration_4[] =
  "CREATE TABLE IF NOT EXISTS sqlq_schedules ("
  " name       VARCHAR(128) NOT NULL PRIMARY KEY,"
  " spec       VARCHAR(256) NOT NULL,"
  " time_zone  VARCHAR(64)  NOT NULL DEFAULT 'UTC',"
  " queue      VARCHAR(128) NOT NULL,"
  " payload    LONGBLOB     NOT NULL,"
  " missed     INT          NOT NULL DEFAULT 0,"
  " paused     BOOLEAN      NOT NULL DEFAULT FALSE,"
  " next_run   BIGINT       NOT NULL,"
  " last_run   BIGINT,"
  " created_at BIGINT       NOT NULL DEFAULT (" NOW_US "),"
  " CONSTRAINT sqlq_schedules_name CHECK (octet_length(name) BETWEEN 1 AND 128),"
  " CONSTRAINT sqlq_schedules_spec CHECK (octet_length(spec) BETWEEN 1 AND 256),"
  " CONSTRAINT sqlq_schedules_zone CHECK (octet_length(time_zone) BETWEEN 1 AND 64),"
  " CONSTRAINT sqlq_schedules_queue CHECK (octet_length(queue) BETWEEN 1 AND 128),"
  " CONSTRAINT sqlq_schedules_missed CHECK (missed >= -1)"
  ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin";
/* Version 5: retention of finished jobs.  A queue's limits (NULL: none)
** and the index that prunes and lists its history in finishing order.
** DDL commits as it goes: each step may run again. */
static const char migration_5[] =
  "ALTER TABLE sqlq_queues ADD COLUMN IF NOT EXISTS keep_for BIGINT,"
  " ADD COLUMN IF NOT EXISTS keep_count BIGINT;"
  "CREATE INDEX IF NOT EXISTS sqlq_jobs_history_age"
  " ON sqlq_jobs_history (queue, finished_at, id)";

/* Version 6: concurrency limits, a column of the queue's row. */
static const char migration_6[] =
  "ALTER TABLE sqlq_queues ADD COLUMN IF NOT EXISTS max_running BIGINT";
/* Version 7: dependencies (docs/schema.md).  DDL commits as it goes:
** each step may run again. */
static const char migration_7[] = "ALTER TABLE sqlq_jobs ADD COLUMN IF NOT EXISTS awaited INT,"
                                  " ADD COLUMN IF NOT EXISTS waits INT;"
                                  "CREATE TABLE IF NOT EXISTS sqlq_deps ("
                                  " job_id   BIGINT NOT NULL,"
                                  " after_id BIGINT NOT NULL,"
                                  " PRIMARY KEY (job_id, after_id),"
                                  " KEY sqlq_deps_after (after_id, job_id)"
                                  ") ENGINE=InnoDB";

/* Version 8: rate limits: the rate in the queue's row, and its slots, the
** latest starts (docs/schema.md, "Rate limits").  DDL commits as it goes:
** each step may run again. */
static const char migration_8[] =
  "ALTER TABLE sqlq_queues ADD COLUMN IF NOT EXISTS rate_max BIGINT,"
  " ADD COLUMN IF NOT EXISTS rate_period BIGINT;"
  "CREATE TABLE IF NOT EXISTS sqlq_rate_starts ("
  " queue      VARCHAR(128) NOT NULL,"
  " slot       BIGINT       NOT NULL,"
  " started_at BIGINT       NOT NULL,"
  " PRIMARY KEY (queue, slot),"
  " KEY sqlq_rate_starts_age (queue, started_at, slot)"
  ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin";
/* Version 9: cancellation: when a dead job was cancelled (docs/schema.md). */
static const char migration_9[] =
  "ALTER TABLE sqlq_jobs ADD COLUMN IF NOT EXISTS cancelled_at BIGINT;";
/* Version 10: per-group limits, a column of the queue's row (NULL: 1);
** fair queues, two more, and their tenants' turns; and the function that
** counts, for a job of group g of queue q with id
** before, whether fewer than the queue's limit of the group's earlier jobs
** are unfinished (see GROUP_ROOM).  Its reads are consistent reads, as a
** subquery of the claim's locking read makes. */
static const char migration_10[] =
  "ALTER TABLE sqlq_queues ADD COLUMN IF NOT EXISTS group_running BIGINT,"
  " ADD COLUMN IF NOT EXISTS fair INT, ADD COLUMN IF NOT EXISTS fair_served BIGINT;"
  "CREATE TABLE IF NOT EXISTS sqlq_groups ("
  " queue     VARCHAR(128) NOT NULL,"
  " grouped   INT          NOT NULL,"
  " group_key VARCHAR(255) NOT NULL,"
  " served    BIGINT       NOT NULL,"
  " PRIMARY KEY (queue, grouped, group_key)"
  ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;"
  "DROP FUNCTION IF EXISTS sqlq_group_room;"
  "CREATE FUNCTION sqlq_group_room(q VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,"
  " g VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin, before_id BIGINT)"
  " RETURNS INT NOT DETERMINISTIC READS SQL DATA"
  " BEGIN"
  "  DECLARE n BIGINT DEFAULT 1;"
  "  DECLARE k BIGINT DEFAULT 0;"
  "  SELECT COALESCE(MAX(group_running), 1) INTO n FROM sqlq_queues WHERE queue = q;"
  "  SELECT COUNT(*) INTO k FROM (SELECT 1 FROM sqlq_jobs FORCE INDEX (sqlq_jobs_group)"
  "   WHERE queue = q AND group_key = g AND state IN ('ready','running') AND id < before_id"
  "   LIMIT n) AS earlier;"
  "  RETURN k < n;"
  " END";

/* Version 11 adds nothing on MariaDB: its lanes came with version 12
** (version 11's trigger, made with CREATE OR REPLACE TRIGGER by every
** `sqlq init` that found version 10, was removed from main after a CI
** failure; a database upgraded while main had it keeps sqlq_lanes and
** sqlq_jobs_lane as version 12 makes them, which version 12 leaves as
** they are). */
static const char migration_11[] = "DO 0";

/* Version 12: claim lanes, each (queue, priority) that sqlq_jobs has held
** a job at (docs/schema.md, "Lanes").  The trigger sqlq_jobs_lane records
** the lane of every job inserted, by the library or by plain SQL, with an
** INSERT IGNORE of the row's values, which reads no table and writes none
** with an AUTO_INCREMENT column (statement-based replication, migration
** 3); a lane already there costs one lookup of its key.  The trigger is
** made before the lanes of the jobs already there are copied: making it
** waits for every transaction that inserted into sqlq_jobs to end, so each
** job is either seen by the copy or recorded by the trigger.  The copy
** inserts the lanes one at a time, with INSERT IGNORE: a trigger may be
** recording the same lane meanwhile, and an INSERT IGNORE ... SELECT is
** logged as unsafe.
**
** The claim's cursors (see "Claim cursors") also count the moves of each
** lane in sqlq_lane_moves: the trigger sqlq_jobs_moved counts one for an
** UPDATE that makes a job ready, or moves a ready job to another lane or
** to an earlier run_at, and records its lane; an INSERT ... ON DUPLICATE
** KEY UPDATE of a table with one unique key, of the row's values, is safe
** for statement-based replication too.  Its row stays locked until the
** transaction ends, so that the count and the job it counts are seen
** together: two transactions that make jobs of one lane ready take turns
** at their commits; producers, which write sqlq_lanes only, wait for them
** only when a move made the lane new.  DDL commits as it goes: each step
** may run again.
**
** The triggers are made with CREATE TRIGGER IF NOT EXISTS, never OR
** REPLACE: a trigger is made once, by the one `sqlq init` that finds
** version 11 under the init lock (mysql.c, my_init), and a step run again
** leaves it alone.  Sessions that prepared a statement on sqlq_jobs before
** the triggers were made see it fail once (1146 or 1064, a MariaDB bug
** that failed a claim in CI), and run it again (sqlq__my_execute). */
static const char migration_12[] =
  "CREATE TABLE IF NOT EXISTS sqlq_lanes ("
  " queue    VARCHAR(128) NOT NULL,"
  " priority INT          NOT NULL,"
  " PRIMARY KEY (queue, priority)"
  ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;"
  "CREATE TABLE IF NOT EXISTS sqlq_lane_moves ("
  " queue    VARCHAR(128) NOT NULL,"
  " priority INT          NOT NULL,"
  " moved    BIGINT       NOT NULL,"
  " PRIMARY KEY (queue, priority)"
  ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;"
  "CREATE TRIGGER IF NOT EXISTS sqlq_jobs_moved AFTER UPDATE ON sqlq_jobs FOR EACH ROW"
  " IF NEW.state = 'ready' AND (OLD.state <> 'ready' OR OLD.queue <> NEW.queue"
  "  OR OLD.priority <> NEW.priority OR NEW.run_at < OLD.run_at) THEN"
  "  INSERT IGNORE INTO sqlq_lanes (queue, priority) VALUES (NEW.queue, NEW.priority);"
  "  INSERT INTO sqlq_lane_moves (queue, priority, moved) VALUES (NEW.queue, NEW.priority, 1)"
  "   ON DUPLICATE KEY UPDATE moved = moved + 1;"
  " END IF;"
  "CREATE TRIGGER IF NOT EXISTS sqlq_jobs_lane AFTER INSERT ON sqlq_jobs FOR EACH ROW"
  " INSERT IGNORE INTO sqlq_lanes (queue, priority) VALUES (NEW.queue, NEW.priority);"
  "BEGIN NOT ATOMIC"
  " DECLARE done INT DEFAULT 0;"
  " DECLARE q VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;"
  " DECLARE p INT;"
  " DECLARE lanes CURSOR FOR SELECT DISTINCT queue, priority FROM sqlq_jobs;"
  " DECLARE CONTINUE HANDLER FOR NOT FOUND SET done = 1;"
  " OPEN lanes;"
  " copying: LOOP"
  "  FETCH lanes INTO q, p;"
  "  IF done THEN LEAVE copying; END IF;"
  "  INSERT IGNORE INTO sqlq_lanes (queue, priority) VALUES (q, p);"
  " END LOOP;"
  " CLOSE lanes;"
  "END";


/* Version 13: the counts of what handles did, per queue, writer and
** minute (src/counts.c). */
static const char migration_13[] = COUNTS_SQL_TABLE(
  "CREATE TABLE IF NOT EXISTS", "BIGINT", "VARCHAR(128)", "VARCHAR(1000)",
  " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;") "CREATE INDEX IF NOT EXISTS sqlq_counts_age ON sqlq_counts (minute_at)";

/* Version 14 (leases, which only PostgreSQL behind a transaction pooler
** uses) adds nothing on this backend.  The version is recorded all the
** same. */
static const char migration_14[] = "DO 0";

/* Version 15 (an index of the dead jobs, which PostgreSQL and SQLite need
** for sqlq_summary()) adds nothing here: sqlq_jobs_due (queue, state,
** run_at) already finds them.  The version is recorded all the same. */
static const char migration_15[] = "DO 0";

const char *const sqlq__mysql_migrations[SQLQ_SCHEMA_VERSION] = {
  migration_1,  migration_2,  migration_3,  migration_4,  migration_5,
  migration_6,  migration_7,  migration_8,  migration_9,  migration_10,
  migration_11, migration_12, migration_13, migration_14, migration_15,
};
