/*
** firebird_sql.c -- the SQL text of the Firebird 3 dialect and its
** migrations.
**
** FB_NOW_US (firebird_int.h) is the server's clock.  Names, queue names
** and keys are VARCHAR CHARACTER SET OCTETS: Firebird's text collations
** ignore trailing spaces ('a' = 'a '), and sqlq compares names byte for
** byte.  Payloads are BLOB SUB_TYPE BINARY.
**
** Firebird 3 has neither SKIP LOCKED nor an UPDATE ... RETURNING of several
** rows, nor indexes of mixed direction.  So:
** - The claim is an EXECUTE BLOCK that walks the due jobs in claim order
**   and takes them one at a time with an UPDATE ... WHERE state = 'ready',
**   in a NO WAIT transaction (firebird.c): a job another claimer holds
**   fails that UPDATE with a lock conflict, which the block catches (its
**   WHEN undoes that one UPDATE) and goes on to the next job.  Expired
**   leases are taken back the same way, first.
** - The order priority DESC, run_at, id comes from an ascending index on
**   claim_rank (-priority, kept by the trigger sqlq_jobs_set), run_at, id,
**   which the walk follows without sorting.
** - Firebird has no partial index: the dedupe key's uniqueness among
**   unfinished jobs is a unique index on an expression that is NULL for
**   finished jobs (NULLs never collide).
** - Column defaults cannot compute: the trigger sqlq_jobs_set fills run_at
**   and created_at in when a plain INSERT leaves them out.
**
** Wake-ups: the triggers post a queue's event, EVENT("queue"), when a job
** becomes ready (an insert, or an update to ready or to another run_at), when
** the queue is resumed, and when the head of a FIFO group finishes (deleted,
** or dead), so that plain-SQL producers and administrators wake workers too.
** Waiting workers receive it at commit (firebird_wait.c).  The library posts
** only the events of channels that are not queue names (FB_SQL_POST).
**
** A script's statements are separated by FB_SEP, because PSQL bodies hold
** semicolons; a table made in a transaction cannot be written in it, so
** every migration is DDL only.
*/
#include "cancel_sql.h"
#include "counts_sql.h"
#include "deps_sql.h"
#include "fair_sql.h"
#include "firebird_int.h"
#include "schedules_sql.h"
#include "summary_sql.h"

#define NOW FB_NOW_US
#define TEXT(n) "VARCHAR(" #n ") CHARACTER SET OCTETS"
/* A state, as a VARCHAR: the literals 'dead' and 'ready' of one IIF() make a
** CHAR(5), and 'dead ' would be stored. */
#define STATE(s) "CAST('" s "' AS " TEXT(8) ")"
#define QUEUE_PARAM(p) "CAST(" p " AS " TEXT(128) ")"
#define ITEM_PARAM(p) "CAST(" p " AS " TEXT(1024) ")"
/* The name of the event of channel c (an expression of bytes): the same for
** the same bytes, whatever the declared length.  Up to 25 characters. */
#define EVENT(c) "'sqlq_' || HASH(" c ")"

/* A job of a FIFO group may run only when no earlier job of its group is
** unfinished.
**
** The hot reads name their plans: index selectivity is computed when an
** index is made (on an empty table) and by SET STATISTICS, so the optimizer
** would look the group up in a whole queue's leases, and sort every due
** job of the queue for each claim instead of walking the claim index. */
#define GROUP_EARLIER(then) \
  "SELECT 1 FROM sqlq_jobs g WHERE g.queue = j.queue AND g.group_key = j.group_key" \
  " AND g.state IN ('ready','running') AND g.id < j.id PLAN (G INDEX (SQLQ_JOBS_GROUP))" then
#define GROUP_HEAD "(j.group_key IS NULL OR NOT EXISTS (" GROUP_EARLIER("") "))"

/* With per-group limits (schema version 10), a job of a group may run
** while fewer than the group limit n of its queue (1 unless set) of the
** earlier jobs of its group are unfinished, counted by a search that stops
** at the n-th. */
#define GROUP_N(q) "(SELECT COALESCE(MAX(group_running), 1) FROM sqlq_queues WHERE queue = " q ")"
#define GROUP_ROOM(n) "(j.group_key IS NULL OR NOT EXISTS (" GROUP_EARLIER(" ROWS " n " TO " n) "))"

/* The key of the unique index on dedupe keys: NULL when the job is
** finished or has none.  Queue names hold no control character, so the
** byte 0x01 separates the two parts unambiguously. */
#define DEDUPE_EXPR \
  "(CASE WHEN dedupe_key IS NOT NULL AND state IN ('ready','running')" \
  " THEN queue || x'01' || dedupe_key END)"

/* Payloads up to this many bytes come with the claimed job as a VARCHAR,
** in the row itself (column payload_inline, see firebird_stmt.c); a longer
** one is read as a blob. */
#define INLINE_MAX "2000"

#define HELD "id = $1 AND token = $2 AND state = 'running'"
/* The ack of a job held that also meets guard. */
#define ACK(guard) "DELETE FROM sqlq_jobs WHERE " HELD guard " RETURNING id"
#define HISTORY_COPY DEPS_SQL_HISTORY_COPY(NOW, HELD)

#define DEDUPE_FREE \
  "(j.dedupe_key IS NULL OR NOT EXISTS (SELECT 1 FROM sqlq_jobs o" \
  " WHERE o.queue = j.queue AND o.dedupe_key = j.dedupe_key" \
  " AND o.state IN ('ready','running') AND o.id <> j.id))"

#define RETRY_SET \
  "UPDATE sqlq_jobs j SET state = 'ready', attempts = 0, run_at = " NOW "," \
  " token = NULL, lease_until = NULL"

/* Pieces of the blocks that take packed arrays apart (see firebird_stmt.c
** for the packing).  TAKE_INT moves position p of the list s past its next
** integer, which goes into v; TAKE_BYTES moves position hp of the lengths
** ahead of the ';' of s, and position dp of the bytes after it, past the
** next element, which goes into v (NULL for "-").  They use the block's
** variables e, k and t. */
#define TAKE_INT(s, p, v) \
  " e = POSITION(',', " s ", " p ");" \
  " " v " = CAST(SUBSTRING(" s " FROM " p " FOR e - " p ") AS BIGINT);" \
  " " p " = e + 1;"
#define TAKE_BYTES(s, hp, dp, v) \
  " e = POSITION(',', " s ", " hp ");" \
  " t = SUBSTRING(" s " FROM " hp " FOR e - " hp ");" \
  " " hp " = e + 1;" \
  " IF (t = '-') THEN " v " = NULL; ELSE BEGIN" \
  "  k = CAST(t AS INTEGER);" \
  "  " v " = SUBSTRING(" s " FROM " dp " FOR k);" \
  "  " dp " = " dp " + k;" \
  " END"
#define PACKED "BLOB SUB_TYPE BINARY"
#define UNPACKED "VARCHAR(32765) CHARACTER SET OCTETS"
#define TAKE_VARS \
  " DECLARE e INTEGER; DECLARE k INTEGER; DECLARE t VARCHAR(24) CHARACTER SET OCTETS;"

/* Ack the packed ids $1 with their tokens $2 of the jobs that also meet
** guard, copying each to history first when copy is set: one row per job
** acked. */
#define HELD_VAR "id = :vi AND token = :vt AND state = 'running'"
#define COPY_HELD(guard) \
  "   INSERT INTO sqlq_jobs_history (id, queue, priority, attempts, max_attempts," \
  "    dedupe_key, group_key, payload, created_at, finished_at)" \
  "    SELECT id, queue, priority, attempts, max_attempts, dedupe_key, group_key," \
  "    payload, created_at, " NOW " FROM sqlq_jobs WHERE " HELD_VAR guard ";"
#define ACK_ARRAY(copy, guard) \
  "EXECUTE BLOCK (ids " PACKED " = $1, toks " PACKED " = $2) RETURNS (id BIGINT) AS" \
  " DECLARE s " UNPACKED "; DECLARE u " UNPACKED ";" \
  " DECLARE sp INTEGER = 1; DECLARE up INTEGER = 1; DECLARE vi BIGINT; DECLARE vt BIGINT;" TAKE_VARS \
  " BEGIN" \
  "  s = ids; u = toks;" \
  "  WHILE (sp <= CHAR_LENGTH(s)) DO" \
  "  BEGIN" TAKE_INT("s", "sp", "vi") TAKE_INT("u", "up", "vt") copy \
    "   id = NULL;" \
    "   DELETE FROM sqlq_jobs WHERE " HELD_VAR guard " RETURNING id INTO :id;" \
    "   IF (id IS NOT NULL) THEN SUSPEND;" \
    "  END" \
    " END"

/* The lock conflicts a claim steps over: a job that another claimer is
** taking.  That claimer takes its jobs in claim order too, so the next
** ones are most likely its own: the walk skips as many as a claim takes
** (they stay ready for the next claim if that claimer did not take them),
** rather than failing on each in turn, which made four workers slower than
** two.  GDSCODE random is the engine's "cannot update erased record": the
** job was claimed, finished and deleted since the walk read it (seen
** embedded, with several workers; PSQL cannot tell it from other errors of
** that code, which an UPDATE of a job by its id does not otherwise give). */
#define CONFLICT_GDSCODES \
  "WHEN GDSCODE deadlock, GDSCODE update_conflict, GDSCODE lock_conflict," \
  " GDSCODE read_conflict, GDSCODE random"
#define CONFLICTS CONFLICT_GDSCODES " DO BEGIN END"
#define CONFLICT_SKIPS CONFLICT_GDSCODES " DO skip = lim - 1;"

/* The body of a block that runs step, a statement that locks a row (and
** may read it into the block's variables), then, when it locked one, runs
** then.  Firebird 3's READ COMMITTED waits for a row's lock, but when other
** writers changed the row meanwhile, the statement that waited may fail
** with an update conflict (ran: four ring pushers at once) or "no current
** record for fetch" (no_cur_rec), or change no row although the row is
** there, as the condition there says (both seen with eight pushers at
** once).  Then the block tries again (the WHEN undoes the failed attempt),
** each try waiting its turn.  A conflict goes on to the caller once the
** transaction's lock timeout (MON$LOCK_TIMEOUT: -1 for ever, 0 none) has
** passed since the block started. */
#define TURN(step, there, then) \
  " DECLARE started TIMESTAMP;" \
  " DECLARE waits INTEGER;" \
  " DECLARE again SMALLINT = 1;" \
  " BEGIN" \
  "  started = CAST('NOW' AS TIMESTAMP);" \
  "  WHILE (again = 1) DO" \
  "  BEGIN" \
  "   again = 0;" \
  "   " step "   IF (ROW_COUNT > 0) THEN" \
  "   BEGIN " then " END" \
  "   ELSE IF (" there ") THEN again = 1;" \
  "   WHEN GDSCODE deadlock, GDSCODE update_conflict, GDSCODE no_cur_rec DO" \
  "   BEGIN" \
  "    SELECT MON$LOCK_TIMEOUT FROM MON$TRANSACTIONS" \
  "     WHERE MON$TRANSACTION_ID = CURRENT_TRANSACTION INTO :waits;" \
  "    IF (COALESCE(waits, 0) = 0 OR (waits > 0 AND DATEDIFF(MILLISECOND FROM started" \
  "     TO CAST('NOW' AS TIMESTAMP)) >= waits * 1000)) THEN EXCEPTION;" \
  "    again = 1;" \
  "   END" \
  "  END" \
  " END"

/* TURN on ring :r, taking its next n numbers into :seq (the first) and
** :cap (its capacity). */
#define RING_TURN(n, then) \
  TURN("UPDATE sqlq_rings SET next_seq = next_seq + " n " WHERE name = :r" \
       " RETURNING next_seq - " n ", capacity INTO :seq, :cap;", \
       "EXISTS (SELECT 1 FROM sqlq_rings WHERE name = :r)", then)

/* The outputs of a claim block: the columns of CLAIM, with extra (the
** cursor of CLAIM_LANES) before payload_inline. */
#define CLAIM_RETURNS(extra) \
  " RETURNS (id BIGINT, priority INTEGER, run_at BIGINT, attempts INTEGER," \
  "  max_attempts INTEGER, created_at BIGINT, lease_until BIGINT," \
  "  group_key " TEXT(255) ", dedupe_key " TEXT(255) ", payload BLOB SUB_TYPE BINARY," extra \
                                                     "  payload_inline VARCHAR(" INLINE_MAX \
                                                     ") CHARACTER SET OCTETS)"
/* The variables of a claim block. */
#define CLAIM_VARS \
  " DECLARE now BIGINT;" \
  " DECLARE n INTEGER = 0;" \
  " DECLARE cand BIGINT;" \
  " DECLARE skip INTEGER = 0;" \
  " DECLARE ended BIGINT;" \
  " DECLARE was BIGINT;" \
  " DECLARE st " TEXT(8) ";"
/* Take back every expired lease of :q that also meets range (text that
** starts with AND, or ""): the job is ready again, or dead after its last
** attempt.  Then runs reaped (:st is the job's new state, :was its
** run_at); a job that another claimer holds runs missed (:ended is its
** lease's end). */
#define REAP(range, reaped, missed) \
  "  FOR SELECT id, lease_until FROM sqlq_jobs WHERE queue = :q AND state = 'running'" \
  "   AND lease_until <= :now" range " PLAN (SQLQ_JOBS INDEX (SQLQ_JOBS_LEASE))" \
  "   INTO :cand, :ended DO" \
  "  BEGIN" \
  "   UPDATE sqlq_jobs SET" \
  "    state = IIF(attempts >= max_attempts, " STATE("dead") ", " STATE( \
    "ready") ")," \
             "    last_error = 'lease expired during attempt ' || attempts," \
             "    token = NULL, lease_until = NULL" \
             "    WHERE id = :cand AND state = 'running' AND lease_until <= :now" \
             "    RETURNING state, run_at INTO :st, :was;" reaped "   " CONFLICT_GDSCODES \
             " DO BEGIN " missed " END" \
             "  END"
/* Take the job :cand when it is still ready, and return it; after the
** lim-th job, run full and leave the loop. */
#define TAKE(full) \
  "   UPDATE sqlq_jobs SET state = 'running', attempts = attempts + 1," \
  "    token = :tok, lease_until = :now + :lease" \
  "    WHERE id = :cand AND state = 'ready'" \
  "    RETURNING id, priority, run_at, attempts, max_attempts, created_at," \
  "     lease_until, group_key, dedupe_key, payload" \
  "    INTO :id, :priority, :run_at, :attempts, :max_attempts, :created_at," \
  "     :lease_until, :group_key, :dedupe_key, :payload;" \
  "   IF (ROW_COUNT > 0) THEN" \
  "   BEGIN" \
  "    payload_inline = NULL;" \
  "    IF (octet_length(payload) <= " INLINE_MAX ") THEN" \
  "    BEGIN" \
  "     payload_inline = payload;" \
  "     payload = NULL;" \
  "    END" \
  "    n = n + 1;" \
  "    SUSPEND;" \
  "    IF (n >= lim) THEN BEGIN " full " LEAVE; END" \
  "   END"
/* Walk the due jobs of :q that pass head in claim order, taking them. */
#define WALK(head) \
  "  FOR SELECT j.id FROM sqlq_jobs j WHERE j.queue = :q AND j.state = 'ready'" \
  "   AND j.run_at <= :now AND " head "   PLAN (J ORDER SQLQ_JOBS_CLAIM)" \
  "   ORDER BY j.queue, j.state, j.claim_rank, j.run_at, j.id INTO :cand DO" \
  "  IF (skip > 0) THEN skip = skip - 1; ELSE" \
  "  BEGIN" TAKE("") "   " CONFLICT_SKIPS "  END"

/* The claim (see CLAIM below): counted declares the block's parameters
** after lim, and stop is the test of the queue's row that makes the claim
** take nothing. */
#define CLAIM(counted, stop, head) \
  "EXECUTE BLOCK (q " TEXT( \
    128) " = $1, tok BIGINT = $2, lease BIGINT = $3, lim INTEGER = $4" counted \
         ")" CLAIM_RETURNS( \
           "") " AS" CLAIM_VARS " BEGIN" \
               "  now = " NOW ";" \
               "  IF (EXISTS (SELECT 1 FROM sqlq_queues WHERE queue = :q AND " stop \
               ")) THEN EXIT;" REAP("", "", "") WALK(head) " END"

/* The claim's parameter counted ($5), and its test of the queue's row:
** paused, or limited (the test row) while the claim did not count. */
#define COUNTED ", counted INTEGER = $5"
#define PAUSED_IF(row) "(paused <> 0 OR (" row " AND :counted = 0))"

/* NEXT_DUE, whose due jobs are those that pass the tests head and waits
** too, and whose first due job is due at the expression at of its run_at
** j.run_at. */
#define NEXT_DUE_AT(head, waits, at) \
  "SELECT (SELECT paused FROM sqlq_queues WHERE queue = " QUEUE_PARAM( \
    "$1") ")," \
          " (SELECT FIRST 1 " at " FROM sqlq_jobs j WHERE j.queue = " QUEUE_PARAM( \
            "$1") "  AND j.state = 'ready' AND " head waits " PLAN (J ORDER SQLQ_JOBS_DUE)" \
                  "  ORDER BY j.queue, j.state, j.run_at) - " NOW "," \
                  " (SELECT min(lease_until) FROM sqlq_jobs" \
                  "  WHERE queue = " QUEUE_PARAM("$1") " AND state = 'running') - " NOW \
                                                       " FROM RDB$DATABASE"

#define NEXT_DUE(head, waits) NEXT_DUE_AT(head, waits, "j.run_at")
/* A job is due no sooner than the queue's rate frees its oldest slot. */
#define RATE_DUE RATE_DUE_OF(QUEUE_PARAM("$1"))
#define RATE_DUE_OF(q) \
  "MAXVALUE(j.run_at, COALESCE((SELECT min(s.started_at) FROM sqlq_rate_starts s" \
  " WHERE s.queue = " q ") + (SELECT rate_period FROM sqlq_queues WHERE queue = " q "), 0))"
/* The slots up to ($2, $3) in slot order, with the range of
** sqlq_rate_starts_age that holds them named first. */
#define SLOTS_UPTO(cmp) \
  "queue = $1 AND started_at <= CAST($2 AS BIGINT) AND (started_at < CAST($2 AS BIGINT)" \
  " OR slot " cmp " CAST($3 AS BIGINT))"

/* The queue's row names a concurrency limit; or a rate limit too (schema
** version 8); or is fair too (schema version 10), as a fair queue's
** claims also take turns on its row. */
#define ROW_LIMITED "max_running IS NOT NULL"
#define ROW_LIMITED_RATES "(max_running IS NOT NULL OR rate_max IS NOT NULL)"
#define ROW_LIMITED_GROUPS "(max_running IS NOT NULL OR rate_max IS NOT NULL OR fair IS NOT NULL)"
/* The queue :q has a limit (its row passes the test row). */
#define LIMITED_IF(row) "EXISTS (SELECT 1 FROM sqlq_queues WHERE queue = :q AND " row ")"
#define LIMITED LIMITED_IF(ROW_LIMITED)
/* The row test as a statement: paused, limited (0/1). */
#define PAUSED_ROW(row) "SELECT paused, IIF(" row ", 1, 0) FROM sqlq_queues WHERE queue = $1"
/* The row of a fair queue that is not paused. */
#define FAIR_ROW "fair IS NOT NULL AND paused = 0"

/* The first n rows (FAIR_SQL_*). */
#define FB_ROWS(n) " ROWS " n

/* The queue $1 has a concurrency limit and as many jobs running (with
** their leases current) as it allows: its ready jobs wait. */
#define FULL FULL_OF(QUEUE_PARAM("$1"))
#define FULL_OF(q) \
  "EXISTS (SELECT 1 FROM sqlq_queues l WHERE l.queue = " q " AND l.max_running IS NOT NULL" \
  " AND l.max_running <= (SELECT count(*) FROM sqlq_jobs r" \
  "  WHERE r.queue = " q " AND r.state = 'running' AND r.lease_until > " NOW "))"

/* A subscribed table's name as a parameter: as text, to compare with the
** RDB$ tables' names, and as bytes, as sqlq_subscriptions keeps it. */
#define NAME_PARAM(p) "CAST(" p " AS VARCHAR(63) CHARACTER SET UTF8)"
#define TABLE_PARAM(p) "CAST(" p " AS " TEXT(63) ")"

/* The stored name (CHAR, padded) of the table that the name n (an
** expression of type NAME_PARAM) means: the user table stored under
** exactly that name, else, when n is a regular identifier (as typed
** without quotes), the one stored under its upper-case form.  So
** `languages` finds the table LANGUAGES that `CREATE TABLE languages` made,
** and "languages" made with quotes when there is one.  A CHAR comparison
** ignores trailing spaces: the lengths must match too. */
#define USER_TABLE(r) "COALESCE(" r ".RDB$SYSTEM_FLAG, 0) = 0 AND " r ".RDB$VIEW_BLR IS NULL"
#define RELATION_OF(n) \
  "COALESCE((SELECT r.RDB$RELATION_NAME FROM RDB$RELATIONS r WHERE r.RDB$RELATION_NAME = " n \
  "  AND OCTET_LENGTH(TRIM(TRAILING FROM r.RDB$RELATION_NAME)) = OCTET_LENGTH(" n ")" \
  "  AND " USER_TABLE( \
    "r") ")," \
         " (SELECT r.RDB$RELATION_NAME FROM RDB$RELATIONS r WHERE r.RDB$RELATION_NAME = UPPER(" n \
         ")" \
         "  AND " n " SIMILAR TO '[A-Za-z][A-Za-z0-9_$]*'" \
         "  AND OCTET_LENGTH(TRIM(TRAILING FROM r.RDB$RELATION_NAME)) = OCTET_LENGTH(" n ")" \
         "  AND " USER_TABLE("r") "))"

/* Whether the column type t (RDB$FIELDS) holds bytes: a BLOB other than
** text, or text in CHARACTER SET OCTETS. */
#define BYTES_TYPE(t) \
  "((" t ".RDB$FIELD_TYPE = 261 AND " t ".RDB$FIELD_SUB_TYPE <> 1)" \
  " OR (" t ".RDB$FIELD_TYPE IN (14, 37, 261) AND " t ".RDB$CHARACTER_SET_ID = 1))"

/* The attachment of the oldest open transaction of another connection (any
** in MON$TRANSACTIONS: MON$STATE says only whether it runs a statement),
** for SQLQ__SQL_HEALTH: holder (in words) and started (microseconds). */
#define FB_HEALTH_HOLDER \
  "(SELECT FIRST 1 CAST('attachment ' || a.MON$ATTACHMENT_ID || ' user ' || TRIM(a.MON$USER)" \
  "  || COALESCE(' address ' || a.MON$REMOTE_ADDRESS, '')" \
  "  || COALESCE(' process ' || a.MON$REMOTE_PROCESS, '')" \
  "  || COALESCE(' pid ' || a.MON$REMOTE_PID, '') AS VARCHAR(400)) AS holder," \
  "  CAST(DATEDIFF(MILLISECOND FROM TIMESTAMP '1970-01-01 00:00:00' TO t.MON$TIMESTAMP) * 1000" \
  "   AS BIGINT) AS started" \
  "  FROM MON$TRANSACTIONS t JOIN MON$ATTACHMENTS a ON a.MON$ATTACHMENT_ID = t.MON$ATTACHMENT_ID" \
  "  WHERE t.MON$ATTACHMENT_ID <> CURRENT_CONNECTION" \
  "  ORDER BY t.MON$TRANSACTION_ID)"

/* Claim cursors (schema version 12; cursor.c, docs/firebird.md "Claims
** under a long-held snapshot").  A snapshot held open keeps every old
** version of the jobs it may see, and the claim's walk of SQLQ_JOBS_CLAIM
** steps over the index entries of each of them.  So a claim by lanes
** (CLAIM_LANES) walks each lane (a claim_rank of the queue, from
** sqlq_lanes) from a floor that its handle's previous claim of the queue
** returned, and steps only over the entries of the jobs taken since.  The
** cursor is text, packed as the TAKE_INT lists are (each number followed
** by a comma):
**   rewinds     GEN_ID(sqlq_rewinds, 0) when the claim started: a cursor
**               made before the last rewind is dropped (no cursor: every
**               lane is walked from its start);
**   made        the claim's clock: a cursor made later than the clock
**               (the server's clock went back) is dropped too;
**   lease floor every lease that ended before it was seen by that claim
**               and taken back (it stays at the first expired lease the
**               claim saw and did not take: held by an ack that may yet
**               roll back);
**   many        1 when the cursor has no floors: the queue had more than
**               LANES_MAX lanes, and the claim walked every lane at once,
**               or the rewinds count was not settled (below);
**   seen        the clock of the first claim through the handle that read
**               this rewinds count;
**   lane, floor for each lane walked: it has no ready job with an earlier
**               run_at that the claim did not see, or saw and did not take.
** A lane's new floor is the least of the claim's clock less MARGIN, the
** run_at of the first ready job it saw and did not take (held by another
** claim, a group's later job, skipped after a conflict), and, when it
** stopped at lim, the run_at of the last job it took.
**
** Why the clock less MARGIN is safe without knowing which transactions
** are open (Firebird 3 cannot tell which active transactions have
** written, and the held reader is one of them): a job the claim did not
** see was made ready by a transaction that had not committed when the
** claim's walk passed its place, so that commits after the claim's clock.
** Every trigger that makes a job ready (sqlq_jobs_lanes) records the least
** such run_at in the transaction's context, and the commit trigger
** sqlq_commit counts a rewind, before the commit is visible, when that
** run_at is older than the commit's clock less COMMIT_MARGIN.  So either
** the job's run_at is at least its commit's clock less COMMIT_MARGIN,
** which is later than the claim's clock less MARGIN as long as the commit
** becomes visible within MARGIN - COMMIT_MARGIN (50 ms) of its commit
** trigger, or every cursor made before the job could be seen is dropped.
** A claim that reads the count after the commit trigger counted the rewind
** but before the commit is visible cannot see the job either: so the
** floors of the claims that read a count stay unset (many is 1, the lease
** floor NO_FLOOR) until SETTLE after the first of them, by when every
** commit that counted up to it is visible.
** A plain-SQL INSERT with an old run_at, an UPDATE that moves a job to an
** earlier run_at or another lane, a lease taken back by a claim (the job
** is ready at its old run_at) and a lease set into the past are late in
** the same way. */
#define NO_FLOOR "-9223372036854775807"
#define MARGIN "100000"
#define COMMIT_MARGIN "50000"
#define SETTLE "100000"
/* The most lanes a claim walks one by one; a queue with more is walked at
** once, as a plain claim does. */
#define LANES_MAX "64"
/* The room for a cursor: six numbers of up to 20 characters and a comma
** for the header, and two for each lane. */
#define CURSOR_TEXT "VARCHAR(2800) CHARACTER SET OCTETS"
/* Read the header of the cursor :cur at :cp, rewinds and made into :v and
** :made, and drop it (set it to NULL) when it was made before the last
** rewind or later than :now; else read the lease floor and many too. */
#define CURSOR_READ \
  "  IF (cur IS NOT NULL) THEN" \
  "  BEGIN" TAKE_INT("cur", "cp", "v") TAKE_INT( \
    "cur", "cp", "made") "   IF (v <> GEN_ID(sqlq_rewinds, 0) OR made > now) THEN cur = NULL;" \
                         "   ELSE BEGIN" TAKE_INT("cur", "cp", "lease_floor") \
                           TAKE_INT("cur", "cp", "many") TAKE_INT("cur", "cp", "seen") " END" \
                                                                                       "  END"
#define CURSOR_VARS \
  " DECLARE cp INTEGER = 1; DECLARE v BIGINT; DECLARE made BIGINT;" \
  " DECLARE lease_floor BIGINT = " NO_FLOOR "; DECLARE many BIGINT = 0;" \
  " DECLARE seen BIGINT;" TAKE_VARS
/* The next (lane, floor) pair of the cursor into :cr and :cf, or NULL. */
#define CURSOR_PAIR \
  " cr = NULL;" \
  " IF (cur IS NOT NULL AND cp <= CHAR_LENGTH(cur)) THEN" \
  " BEGIN" TAKE_INT("cur", "cp", "cr") TAKE_INT("cur", "cp", "cf") " END"
#define LANES_HEAD GROUP_ROOM(GROUP_N(":q"))
#define CLAIM_LANES \
  "EXECUTE BLOCK (q " TEXT( \
    128) " = $1, tok BIGINT = $2, lease BIGINT = $3, lim INTEGER = $4," \
         " counted INTEGER = $5, cur " CURSOR_TEXT " = $6)" CLAIM_RETURNS( \
           " lanes_cursor " CURSOR_TEXT \
           ",") " AS" CLAIM_VARS CURSOR_VARS \
                " DECLARE rewinds BIGINT; DECLARE next_lease BIGINT; DECLARE back BIGINT;" \
                " DECLARE lanes INTEGER; DECLARE r BIGINT; DECLARE cr BIGINT; DECLARE cf BIGINT;" \
                " DECLARE f BIGINT; DECLARE nf BIGINT; DECLARE room SMALLINT; DECLARE lq " TEXT( \
                  128) ";" \
                       " DECLARE pairs " CURSOR_TEXT " = '';" \
                       " BEGIN" \
                       "  now = " NOW ";" \
                       "  rewinds = GEN_ID(sqlq_rewinds, 0);" /* The lanes of the jobs that were there before version 12, once (a \
  ** migration cannot write the table it makes). */ \
                       "  IF (NOT EXISTS (SELECT 1 FROM sqlq_lanes WHERE queue = '' AND claim_rank = 0)) THEN" \
                       "   IN AUTONOMOUS TRANSACTION DO" \
                       "   BEGIN" \
                       "    FOR SELECT DISTINCT queue, claim_rank FROM sqlq_jobs INTO :lq, :r DO" \
                       "    BEGIN" \
                       "     INSERT INTO sqlq_lanes (queue, claim_rank) VALUES (:lq, :r);" \
                       "     WHEN ANY DO BEGIN END" \
                       "    END" \
                       "    INSERT INTO sqlq_lanes (queue, claim_rank) VALUES ('', 0);" \
                       "    WHEN ANY DO BEGIN END" \
                       "   END" CURSOR_READ "  IF (cur IS NULL) THEN seen = now;" \
                       "  IF (EXISTS (SELECT 1 FROM sqlq_queues WHERE queue = :q AND " PAUSED_IF( \
                         ROW_LIMITED_GROUPS) ")) THEN" \
                                             "  BEGIN" \
                                             "   lanes_cursor = cur;" \
                                             "   SUSPEND;" \
                                             "   EXIT;" \
                                             "  END" \
                                             "  next_lease = now - " MARGIN ";" REAP( \
                                               " AND lease_until >= :lease_floor", \
                                               " IF (ROW_COUNT > 0 AND st = 'ready') THEN back = MINVALUE(COALESCE(back, was), was);", \
                                               "next_lease = MINVALUE(next_lease, ended);") "  SELECT count(*) FROM (SELECT FIRST (" LANES_MAX \
                                                                                            " + 1) 1 AS x FROM sqlq_lanes WHERE queue = :q)" \
                                                                                            "   INTO :lanes;" \
                                                                                            "  IF (lanes > " LANES_MAX \
                                                                                            ") THEN" \
                                                                                            "  BEGIN" \
                                                                                            "   many = 1;" WALK( \
                                                                                              LANES_HEAD) "  END" \
                                                                                                          "  ELSE" \
                                                                                                          "  BEGIN" \
                                                                                                          "   many = 0;" CURSOR_PAIR \
                                                                                                          "   FOR SELECT claim_rank FROM sqlq_lanes WHERE queue = :q" \
                                                                                                          "    PLAN (SQLQ_LANES ORDER SQLQ_LANES_PK) ORDER BY queue, claim_rank INTO :r DO" \
                                                                                                          "   BEGIN" \
                                                                                                          "    WHILE (cr < r) DO" \
                                                                                                          "    BEGIN" CURSOR_PAIR \
                                                                                                          " END" \
                                                                                                          "    f = IIF(cr = r, cf, " NO_FLOOR \
                                                                                                          ");" \
                                                                                                          "    nf = f;" \
                                                                                                          "    IF (n < lim) THEN" \
                                                                                                          "    BEGIN" \
                                                                                                          "     nf = now - " MARGIN \
                                                                                                          ";" \
                                                                                                          "     IF (back IS NOT NULL) THEN f = MINVALUE(f, back);" \
                                                                                                          "     FOR SELECT j.id, j.run_at, IIF(" LANES_HEAD \
                                                                                                          ", 1, 0) FROM sqlq_jobs j" \
                                                                                                          "      WHERE j.queue = :q AND j.state = 'ready' AND j.claim_rank = :r" \
                                                                                                          "      AND j.run_at >= :f AND j.run_at <= :now PLAN (J ORDER SQLQ_JOBS_CLAIM)" \
                                                                                                          "      ORDER BY j.queue, j.state, j.claim_rank, j.run_at, j.id INTO :cand, :was, :room DO" \
                                                                                                          "     IF (skip > 0 OR room = 0) THEN" \
                                                                                                          "     BEGIN" \
                                                                                                          "      IF (room = 1) THEN skip = skip - 1;" \
                                                                                                          "      nf = MINVALUE(nf, was);" \
                                                                                                          "     END" \
                                                                                                          "     ELSE" \
                                                                                                          "     BEGIN" TAKE( \
                                                                                                            "nf = MINVALUE(nf, was);") "      " CONFLICT_GDSCODES \
                                                                                                                                       " DO BEGIN skip = lim - 1; nf = MINVALUE(nf, was); END" \
                                                                                                                                       "     END" \
                                                                                                                                       "    END" \
                                                                                                                                       "    pairs = pairs || r || ',' || nf || ',';" \
                                                                                                                                       "   END" \
                                                                                                                                       "  END" \
                                                                                                                                       "  id = NULL;" \
                                                                                                                                       "  payload = NULL;" \
                                                                                                                                       "  payload_inline = NULL;" \
                                                                                                                                       "  IF (now < seen + " SETTLE \
                                                                                                                                       ") THEN" \
                                                                                                                                       "   lanes_cursor = rewinds || ',' || now || '," NO_FLOOR \
                                                                                                                                       ",1,' || seen || ',';" \
                                                                                                                                       "  ELSE lanes_cursor = rewinds || ',' || now || ',' || next_lease || ',' || many || ','" \
                                                                                                                                       "   || seen || ',' || pairs;" \
                                                                                                                                       "  SUSPEND;" \
                                                                                                                                       " END"

/* NEXT_DUE_GROUPS with the floors of the cursor $2 (see CLAIM_LANES): the
** first due job looked for from the lowest floor; for leases, 0 when one
** has ended since the lease floor (no further back than LEASE_BACK: one
** that ended before the handle's last claim was seen by that claim), else
** LEASE_AHEAD, rather than a look ahead for the next lease's end that
** would step over every acked job whose lease would have ended by then. */
#define LEASE_AHEAD "1000000"
#define LEASE_BACK "2000000"
#define NEXT_DUE_LANES \
  "EXECUTE BLOCK (q " TEXT( \
    128) " = $1, cur " CURSOR_TEXT " = $2)" \
         " RETURNS (paused INTEGER, due_in BIGINT, lease_in BIGINT) AS" \
         " DECLARE now BIGINT; DECLARE low BIGINT; DECLARE cr BIGINT; DECLARE cf BIGINT;" CURSOR_VARS \
         " BEGIN" \
         "  now = " NOW ";" \
         "  SELECT paused FROM sqlq_queues WHERE queue = :q INTO :paused;" CURSOR_READ \
         "  low = " NO_FLOOR ";" \
         "  IF (cur IS NOT NULL AND many = 0) THEN" \
         "  BEGIN" \
         "   low = made - " MARGIN ";" \
         "   WHILE (cp <= CHAR_LENGTH(cur)) DO" \
         "   BEGIN" TAKE_INT("cur", "cp", "cr") TAKE_INT( \
           "cur", "cp", \
           "cf") "    low = MINVALUE(low, cf);" \
                 "   END" \
                 "  END" \
                 "  due_in = (SELECT FIRST 1 " RATE_DUE_OF( \
                   ":q") " FROM sqlq_jobs j WHERE j.queue = :q" \
                         "   AND j.state = 'ready' AND j.run_at >= :low AND " LANES_HEAD \
                         " AND NOT " FULL_OF( \
                           ":q") "   PLAN (J ORDER SQLQ_JOBS_DUE) ORDER BY j.queue, j.state, j.run_at) - now;" \
                                 "  IF (cur IS NULL) THEN" \
                                 "   lease_in = (SELECT min(lease_until) FROM sqlq_jobs WHERE queue = :q AND state = 'running')" \
                                 "    - now;" \
                                 "  ELSE IF (EXISTS (SELECT 1 FROM sqlq_jobs WHERE queue = :q AND state = 'running'" \
                                 "   AND lease_until >= MAXVALUE(:lease_floor, :now - " LEASE_BACK \
                                 ") AND lease_until <= :now" \
                                 "   PLAN (SQLQ_JOBS INDEX (SQLQ_JOBS_LEASE)))) THEN" \
                                 "   lease_in = 0;" \
                                 "  ELSE lease_in = " LEASE_AHEAD ";" \
                                 "  SUSPEND;" \
                                 " END"

/* SUMMARY_COUNT of summary_sql.h: Firebird 3 has no derived table that
** names an outer column, so no count of a limited select. */
#define SUMMARY_WHERE(cond) " FROM sqlq_jobs j WHERE j.queue = n.queue AND " cond
#define SUMMARY_PROBE(cond) "(SELECT FIRST 1 SKIP (" SUMMARY_LIMIT ") 1" SUMMARY_WHERE(cond) ")"
#define SUMMARY_LIMIT "CAST($2 AS BIGINT)"
#define SUMMARY_COUNT(cond) SUMMARY_PROBED(cond)

const char *const sqlq__firebird_sql[FB_SQL_COUNT] = {
  /* The version table, made (and committed, by an autonomous transaction)
  ** when missing; concurrent makers lose quietly.  Its row 0 is the lock
  ** that concurrent `sqlq init`s take turns on: the UPDATE holds it until
  ** the migrating transaction ends. */
  [SQLQ__SQL_SCHEMA_TABLE] =
    "EXECUTE BLOCK AS BEGIN"
    " IF (NOT EXISTS (SELECT 1 FROM RDB$RELATIONS WHERE RDB$RELATION_NAME = 'SQLQ_SCHEMA')) THEN"
    " BEGIN"
    "  EXECUTE STATEMENT 'CREATE TABLE sqlq_schema (version INTEGER NOT NULL PRIMARY KEY,"
    " applied_at BIGINT NOT NULL)' WITH AUTONOMOUS TRANSACTION;"
    "  WHEN ANY DO BEGIN END"
    " END"
    " END" FB_SEP "EXECUTE BLOCK AS BEGIN"
    " EXECUTE STATEMENT 'INSERT INTO sqlq_schema (version, applied_at) VALUES (0, 0)'"
    " WITH AUTONOMOUS TRANSACTION;"
    " WHEN ANY DO BEGIN END"
    " END" FB_SEP "UPDATE sqlq_schema SET applied_at = applied_at WHERE version = 0",
  [SQLQ__SQL_SCHEMA_VERSION] = "SELECT max(version) FROM sqlq_schema",
  [SQLQ__SQL_SCHEMA_RECORD] = "INSERT INTO sqlq_schema (version, applied_at) VALUES ($1, " NOW ")",

  [SQLQ__SQL_ENQUEUE] = "INSERT INTO sqlq_jobs (queue, priority, run_at, max_attempts, dedupe_key,"
                        " group_key, payload, created_at)"
                        " VALUES ($1, $2, " NOW " + $3, $4, $5, $6, $7, " NOW ") RETURNING id",
  [SQLQ__SQL_DEDUPE_LOOKUP] = "SELECT id FROM sqlq_jobs WHERE " DEDUPE_EXPR
                              " = " QUEUE_PARAM("$1") " || x'01' || CAST($2 AS " TEXT(255) ")",
  [SQLQ__SQL_QUEUE_REGISTER] =
    "MERGE INTO sqlq_queues q USING RDB$DATABASE ON q.queue = " QUEUE_PARAM(
      "$1") " WHEN NOT MATCHED THEN INSERT (queue) VALUES (" QUEUE_PARAM("$1") ")",
  [SQLQ__SQL_PAUSED] = PAUSED_ROW(ROW_LIMITED),
  [SQLQ__SQL_CLAIM] = CLAIM(COUNTED, PAUSED_IF(ROW_LIMITED), GROUP_HEAD),

  [SQLQ__SQL_ACK] = ACK(""),
  [SQLQ__SQL_HISTORY_COPY] = HISTORY_COPY,
  [SQLQ__SQL_FAIL_PEEK] = "SELECT attempts, max_attempts, queue FROM sqlq_jobs WHERE " HELD,
  [SQLQ__SQL_FAIL] =
    "UPDATE sqlq_jobs SET"
    " run_at = IIF(CAST($3 AS INTEGER) <> 0, run_at, " NOW " + $4),"
    " state = IIF(CAST($3 AS INTEGER) <> 0, " STATE("dead") ", " STATE(
      "ready") "),"
               " last_error = $5, token = NULL, lease_until = NULL WHERE " HELD " RETURNING id",
  [SQLQ__SQL_RELEASE] =
    "UPDATE sqlq_jobs SET state = 'ready', attempts = maxvalue(attempts - 1, 0),"
    " run_at = " NOW " + $3, token = NULL, lease_until = NULL WHERE " HELD " RETURNING queue",
  [SQLQ__SQL_TOUCH] =
    "UPDATE sqlq_jobs SET lease_until = " NOW " + $3 WHERE " HELD " RETURNING lease_until",

  [SQLQ__SQL_NEXT_DUE] = NEXT_DUE(GROUP_HEAD, " AND NOT " FULL),
  [SQLQ__SQL_PAUSE_SET] =
    "UPDATE OR INSERT INTO sqlq_queues (queue, paused) VALUES ($1, $2) MATCHING (queue)",
  [SQLQ__SQL_STATS] =
    "SELECT queue, sum(ready), sum(scheduled), sum(running), sum(dead), max(paused)"
    " FROM (SELECT queue, IIF(state = 'ready' AND run_at <= c.now, 1, 0) AS ready,"
    "  IIF(state = 'ready' AND run_at > c.now, 1, 0) AS scheduled,"
    "  IIF(state = 'running', 1, 0) AS running, IIF(state = 'dead', 1, 0) AS dead,"
    "  0 AS paused FROM sqlq_jobs, (SELECT " NOW " AS now FROM RDB$DATABASE) c"
    "  WHERE " QUEUE_PARAM("$1") " IS NULL OR queue = " QUEUE_PARAM(
      "$1") "  UNION ALL SELECT queue, 0, 0, 0, 0, paused FROM sqlq_queues"
            "  WHERE " QUEUE_PARAM("$1") " IS NULL OR queue = " QUEUE_PARAM(
              "$1") ")"
                    " GROUP BY queue ORDER BY queue",
  /* The queues come from one loose index scan (each next name a MIN()
  ** read from the front of an index on queue); see SUMMARY_COUNT. */
  [SQLQ__SQL_SUMMARY] =
    "WITH RECURSIVE names(queue) AS (SELECT min(queue) FROM sqlq_jobs"
    "  WHERE " QUEUE_PARAM(
      "$1") " IS NULL"
            " UNION ALL SELECT (SELECT min(j.queue) FROM sqlq_jobs j WHERE j.queue > r.queue)"
            " FROM names r WHERE r.queue IS NOT NULL),"
            " known(queue) AS (SELECT queue FROM names UNION SELECT queue FROM sqlq_queues"
            "  WHERE " QUEUE_PARAM("$1") " IS NULL UNION SELECT " QUEUE_PARAM(
              "$1") " FROM RDB$DATABASE)"
                    " SELECT queue, ready, scheduled, running, dead, COALESCE(paused, 0), age"
                    " FROM (SELECT n.queue, " SUMMARY_COUNTS ", " SUMMARY_PAUSED_AGE(
                      "") "  FROM known n CROSS JOIN (SELECT " NOW " AS now FROM RDB$DATABASE) c"
                          "  WHERE n.queue IS NOT NULL) s WHERE " SUMMARY_KEPT " ORDER BY queue",
  [SQLQ__SQL_LIST] =
    "SELECT * FROM (SELECT id, CASE state WHEN 'running' THEN 2 WHEN 'dead' THEN 3"
    "  ELSE IIF(run_at >= " SQLQ__WAITING_SQL ", 6, IIF(run_at > " NOW ", 4, 1)) END AS st,"
    " priority, attempts, max_attempts, run_at, created_at, lease_until,"
    " dedupe_key, group_key, last_error, payload"
    " FROM sqlq_jobs WHERE queue = " QUEUE_PARAM(
      "$1") ") AS jobs"
            " WHERE CAST($2 AS INTEGER) = 0 OR st = CAST($2 AS INTEGER)"
            " ORDER BY priority DESC, run_at, id"
            " ROWS IIF(CAST($3 AS BIGINT) < 0, 9223372036854775807, CAST($3 AS BIGINT))",
  [SQLQ__SQL_RETRY_ID] = RETRY_SET " WHERE j.queue = $1 AND j.id = $2"
                                   " AND j.state IN ('dead','ready') AND " DEDUPE_FREE,
  [SQLQ__SQL_RETRY_DEAD] =
    RETRY_SET " WHERE j.queue = $1 AND j.state = 'dead' AND " DEDUPE_FREE
              " AND (j.dedupe_key IS NULL OR j.id = (SELECT min(d.id) FROM sqlq_jobs d"
              "  WHERE d.queue = j.queue AND d.dedupe_key = j.dedupe_key AND d.state = 'dead'))",
  [SQLQ__SQL_PURGE] = "DELETE FROM sqlq_jobs WHERE queue = $1",
  [SQLQ__SQL_DELETE_DEAD_ID] = "DELETE FROM sqlq_jobs WHERE queue = $1 AND id = $2"
                               " AND state = 'dead' AND awaited IS NULL",

  /* Batches: each array comes packed in one parameter and is taken apart
  ** by the block, one INSERT or DELETE per job, in one round trip. */
  [SQLQ__SQL_ENQUEUE_ARRAY] = "EXECUTE BLOCK (q " TEXT(
    128) " = $1, pr " PACKED " = $2, dl " PACKED " = $3,"
         " ma " PACKED " = $4, gk " PACKED " = $5, pl " PACKED " = $6) RETURNS (id BIGINT) AS"
         " DECLARE prs " UNPACKED "; DECLARE dls " UNPACKED "; DECLARE mas " UNPACKED ";"
         " DECLARE gks " UNPACKED "; DECLARE pls " UNPACKED ";"
         " DECLARE pp INTEGER = 1; DECLARE dp INTEGER = 1; DECLARE mp INTEGER = 1;"
         " DECLARE gh INTEGER = 1; DECLARE gd INTEGER; DECLARE ph INTEGER = 1; DECLARE pd INTEGER;"
         " DECLARE vp BIGINT; DECLARE vd BIGINT; DECLARE vm BIGINT;"
         " DECLARE vg " TEXT(
           255) "; DECLARE vl " UNPACKED ";"
                " DECLARE now BIGINT;" TAKE_VARS " BEGIN"
                "  now = " NOW ";"
                "  prs = pr; dls = dl; mas = ma; gks = gk; pls = pl;"
                "  gd = POSITION(';', gks) + 1; pd = POSITION(';', pls) + 1;"
                "  WHILE (pp <= CHAR_LENGTH(prs)) DO"
                "  BEGIN" TAKE_INT("prs", "pp", "vp") TAKE_INT("dls", "dp", "vd")
                  TAKE_INT("mas", "mp", "vm") TAKE_BYTES("gks", "gh", "gd", "vg") TAKE_BYTES(
                    "pls", "ph", "pd",
                    "vl") "   INSERT INTO sqlq_jobs (queue, priority, run_at, max_attempts, group_key, payload,"
                          "    created_at) VALUES (:q, :vp, :now + :vd, :vm, :vg, :vl, :now) RETURNING id INTO :id;"
                          "   SUSPEND;"
                          "  END"
                          " END",
  [SQLQ__SQL_ACK_ARRAY] = ACK_ARRAY("", ""),
  [SQLQ__SQL_ACK_HISTORY_ARRAY] = ACK_ARRAY(COPY_HELD(""), ""),
  /* Dependencies (schema version 7). */
  [SQLQ__SQL_ACK_FREE] = ACK(DEPS_SQL_FREE),
  [SQLQ__SQL_HISTORY_COPY_FREE] = HISTORY_COPY DEPS_SQL_FREE,
  [SQLQ__SQL_ACK_ARRAY_FREE] = ACK_ARRAY("", DEPS_SQL_FREE),
  [SQLQ__SQL_ACK_HISTORY_ARRAY_FREE] = ACK_ARRAY(COPY_HELD(DEPS_SQL_FREE), DEPS_SQL_FREE),
  DEPS_SQL_ENTRIES(NOW, QUEUE_PARAM("$1"), DEPS_SQL_PIPES),
  /* Cancellation (schema version 9). */
  CANCEL_SQL_ENTRIES(NOW),

  /* Rings (schema version 2).  ADVANCE takes the next numbers with an
  ** UPDATE that keeps the ring's row locked until the transaction ends, so
  ** that concurrent pushes take turns; PUSH does the same for one entry and
  ** stores it.  Both are blocks (RING_TURN) that show their one row only
  ** when the ring is there.  STORE writes the slot over what was there
  ** (UPDATE OR INSERT MATCHING the primary key). */
  [SQLQ__SQL_RING_CREATE] = "MERGE INTO sqlq_rings r USING RDB$DATABASE ON r.name = " QUEUE_PARAM(
    "$1") " WHEN NOT MATCHED THEN INSERT (name, capacity, created_at)"
          " VALUES (" QUEUE_PARAM("$1") ", CAST($2 AS BIGINT), " NOW ")",
  [SQLQ__SQL_RING_INFO] = "SELECT capacity, next_seq - 1 FROM sqlq_rings WHERE name = $1",
  [SQLQ__SQL_RING_ADVANCE] = "EXECUTE BLOCK (r " TEXT(
    128) " = $1, n BIGINT = $2)"
         " RETURNS (seq BIGINT, cap BIGINT) AS" RING_TURN(":n", "SUSPEND;"),
  [SQLQ__SQL_RING_STORE] =
    "UPDATE OR INSERT INTO sqlq_ring_entries (ring, slot, seq, \"AT\", payload)"
    " VALUES ($1, MOD(CAST($2 AS BIGINT), CAST($3 AS BIGINT)), $2, " NOW ", $4)"
    " MATCHING (ring, slot)",
  [SQLQ__SQL_RING_PUSH] = "EXECUTE BLOCK (r " TEXT(
    128) " = $1, p BLOB SUB_TYPE BINARY = $2)"
         " RETURNS (seq BIGINT) AS"
         " DECLARE cap BIGINT;" RING_TURN(
           "1", "UPDATE OR INSERT INTO sqlq_ring_entries (ring, slot, seq, \"AT\", payload)"
                " VALUES (:r, MOD(:seq, :cap), :seq, " NOW ", :p) MATCHING (ring, slot);"
                " SUSPEND;"),
  [SQLQ__SQL_RING_READ] =
    "SELECT seq, \"AT\", payload FROM sqlq_ring_entries WHERE ring = $1 AND seq > $2"
    " ORDER BY ring, seq"
    " ROWS IIF(CAST($3 AS BIGINT) < 0, 9223372036854775807, CAST($3 AS BIGINT))",
  [SQLQ__SQL_RING_CLEAR] = "DELETE FROM sqlq_ring_entries WHERE ring = $1",
  [SQLQ__SQL_RING_DROP] = "DELETE FROM sqlq_rings WHERE name = $1",

  /* Pools (schema version 2).  POOL_NEXT runs in a NO WAIT transaction
  ** (SQLQ__TX_LAZY): it walks the pool's free items in LRU order and
  ** stamps the first one it can.  The UPDATE asks that the item be as the
  ** walk read it: an item that another caller stamped (and committed)
  ** meanwhile is now more recently used.  When an item changed, or another
  ** caller is stamping it (a lock conflict, which the block catches; or "no
  ** current record for fetch", see RING_TURN), the walk goes on to the next
  ** item, and when it found none, walks again, for up to a second: an
  ** item being stamped is free again once its caller commits, a
  ** millisecond later, and NO WAIT cannot wait for it.  So concurrent
  ** callers get different items, in LRU order, and "none free" means
  ** held.  The walk sorts what it read (ORDER BY an expression) rather
  ** than following the index: a READ COMMITTED cursor on an index reaches
  ** a row just stamped by another caller through its old key and sees its
  ** new version, which would hand it out again.  The stamp is the clock or
  ** one past the pool's newest committed stamp.  The clock has millisecond
  ** resolution; its microseconds come from a sequence (sqlq_pool_ticks),
  ** so that concurrent callers in one millisecond get different stamps in
  ** the order of their calls instead of ties that always favour the
  ** lowest id. */
  [SQLQ__SQL_POOL_ADD] = "MERGE INTO sqlq_pool_items i USING RDB$DATABASE"
                         " ON i.pool = " QUEUE_PARAM("$1") " AND i.item = " ITEM_PARAM(
                           "$2") " WHEN NOT MATCHED THEN INSERT (pool, item)"
                                 " VALUES (" QUEUE_PARAM("$1") ", " ITEM_PARAM("$2") ")",
  [SQLQ__SQL_POOL_REMOVE] = "DELETE FROM sqlq_pool_items WHERE pool = $1 AND item = $2",
  [SQLQ__SQL_POOL_LIST] =
    "SELECT id, item, last_used, uses, IIF(held_until > " NOW ", held_until, NULL)"
    " FROM sqlq_pool_items WHERE pool = $1 ORDER BY pool, last_used, id",
  [SQLQ__SQL_POOL_NEXT] = "EXECUTE BLOCK (p " TEXT(
    128) " = $1, hold BIGINT = $2, tok BIGINT = $3)"
         " RETURNS (id BIGINT, item " TEXT(
           1024) ", last_used BIGINT, uses BIGINT,"
                 "  held_until BIGINT)"
                 " AS"
                 " DECLARE now BIGINT;"
                 " DECLARE cand BIGINT;"
                 " DECLARE seen BIGINT;"
                 " DECLARE started TIMESTAMP;"
                 " DECLARE changed SMALLINT = 1;"
                 " BEGIN"
                 "  now = " NOW " + MOD(NEXT VALUE FOR sqlq_pool_ticks, 1000);"
                 "  started = CAST('NOW' AS TIMESTAMP);"
                 "  WHILE (changed = 1 AND DATEDIFF(MILLISECOND FROM started"
                 "   TO CAST('NOW' AS TIMESTAMP)) < 1000) DO"
                 "  BEGIN"
                 "   changed = 0;"
                 "   FOR SELECT id, last_used FROM sqlq_pool_items WHERE pool = :p"
                 "    AND (held_until IS NULL OR held_until <= :now)"
                 "    ORDER BY last_used + 0, id INTO :cand, :seen DO"
                 "   BEGIN"
                 "    UPDATE sqlq_pool_items SET"
                 "     last_used = maxvalue(:now, (SELECT max(m.last_used) + 1 FROM sqlq_pool_items m"
                 "      WHERE m.pool = :p)),"
                 "     uses = uses + 1,"
                 "     held_until = IIF(:hold > 0, :now + :hold, NULL),"
                 "     token = IIF(:hold > 0, :tok, NULL)"
                 "     WHERE id = :cand AND last_used = :seen"
                 "     AND (held_until IS NULL OR held_until <= :now)"
                 "     RETURNING id, item, last_used, uses, held_until"
                 "     INTO :id, :item, :last_used, :uses, :held_until;"
                 "    IF (ROW_COUNT > 0) THEN"
                 "    BEGIN"
                 "     SUSPEND;"
                 "     EXIT;"
                 "    END"
                 "    changed = 1;"
                 "    LEAVE;"
                 "    " CONFLICT_GDSCODES ", GDSCODE no_cur_rec DO changed = 1;"
                 "   END"
                 "  END"
                 " END",
  [SQLQ__SQL_POOL_COUNT] = "SELECT count(*) FROM sqlq_pool_items WHERE pool = $1"
                           " AND (" ITEM_PARAM("$2") " IS NULL OR item = $2)",
  [SQLQ__SQL_POOL_RELEASE] = "UPDATE sqlq_pool_items SET held_until = NULL, token = NULL"
                             " WHERE pool = $1 AND item = $2 AND token = $3",
  /* Listing (list.c).  A held lock is a row that a transaction keeps
  ** locked (firebird_lock.c), which the server does not show: no
  ** LOCK_LIST.  Names sort as bytes (OCTETS). */
  [SQLQ__SQL_RING_LIST] = "SELECT name, capacity, next_seq - 1, created_at FROM sqlq_rings"
                          " WHERE " QUEUE_PARAM("$1") " IS NULL OR name > " QUEUE_PARAM(
                            "$1") " ORDER BY name ROWS CAST($2 AS BIGINT)",
  [SQLQ__SQL_POOL_LIST_ALL] =
    "SELECT pool, count(*), sum(IIF(held_until > " NOW ", 1, 0)), max(last_used)"
    " FROM sqlq_pool_items WHERE " QUEUE_PARAM("$1") " IS NULL OR pool > " QUEUE_PARAM(
      "$1") " GROUP BY pool ORDER BY pool ROWS CAST($2 AS BIGINT)",
  /* Subscriptions (firebird_sub.c makes the triggers).  A table name is
  ** looked up as RELATION_OF says; names come out of the RDB$ tables
  ** without their CHAR padding.  SUB_COLUMNS gives firebird_sub.c two more
  ** columns: the JSON kind of each column's values ('x' bytes, 'n' number,
  ** 'b' boolean, 's' text, 't' anything else, cast to text) and the
  ** table's stored name. */
  [SQLQ__SQL_SUB_COLUMNS] =
    "SELECT TRIM(TRAILING FROM f.RDB$FIELD_NAME),"
    " COALESCE((SELECT s.RDB$FIELD_POSITION + 1 FROM RDB$RELATION_CONSTRAINTS c"
    "  JOIN RDB$INDEX_SEGMENTS s ON s.RDB$INDEX_NAME = c.RDB$INDEX_NAME"
    "  WHERE c.RDB$RELATION_NAME = f.RDB$RELATION_NAME AND c.RDB$CONSTRAINT_TYPE = 'PRIMARY KEY'"
    "  AND s.RDB$FIELD_NAME = f.RDB$FIELD_NAME), 0),"
    " IIF(" BYTES_TYPE(
      "t") ", 1, 0),"
           " CASE WHEN " BYTES_TYPE(
             "t") " THEN 'x'"
                  "  WHEN t.RDB$FIELD_TYPE IN (7, 8, 10, 11, 16, 27) THEN 'n'"
                  "  WHEN t.RDB$FIELD_TYPE = 23 THEN 'b'"
                  "  WHEN t.RDB$FIELD_TYPE IN (14, 37, 261) THEN 's' ELSE 't' END,"
                  " TRIM(TRAILING FROM f.RDB$RELATION_NAME)"
                  " FROM RDB$RELATION_FIELDS f JOIN RDB$FIELDS t ON t.RDB$FIELD_NAME = f.RDB$FIELD_SOURCE"
                  " WHERE f.RDB$RELATION_NAME = " RELATION_OF(
                    NAME_PARAM("$1")) " ORDER BY f.RDB$FIELD_POSITION",
  [SQLQ__SQL_SUB_ADD] =
    "MERGE INTO sqlq_subscriptions s USING RDB$DATABASE"
    " ON s.table_name = " TABLE_PARAM("$1") " AND s.action = CAST($2 AS " TEXT(
      8) ")"
         " AND s.tag = " QUEUE_PARAM(
           "$3") " WHEN MATCHED THEN UPDATE SET with_rows = CAST($4 AS SMALLINT)"
                 " WHEN NOT MATCHED THEN INSERT (table_name, action, tag, with_rows, created_at)"
                 " VALUES (" TABLE_PARAM("$1") ", CAST($2 AS " TEXT(8) "), " QUEUE_PARAM(
                   "$3") ","
                         " CAST($4 AS SMALLINT), " NOW ")",
  /* The table's row of sqlq_sub_locks is made (and committed at once, by
  ** a statement of its own, whose insert changes() does not count) when
  ** missing, then locked until the transaction ends: the changes of one
  ** table's subscriptions take turns from here on (see sub_triggers in
  ** sqlq_int.h).  A sub-block's WHEN undoes nothing of the transaction. */
  [SQLQ__SQL_SUB_REMOVE] = "EXECUTE BLOCK (t " TEXT(63) " = $1, g " TEXT(
    128) " = $2) AS"
         " DECLARE k " TEXT(
           63) ";"
               " BEGIN"
               "  IF (NOT EXISTS (SELECT 1 FROM sqlq_sub_locks WHERE table_name = :t)) THEN"
               "  BEGIN"
               "   EXECUTE STATEMENT ('INSERT INTO sqlq_sub_locks (table_name) VALUES (?)') (:t)"
               "    WITH AUTONOMOUS TRANSACTION;"
               "   WHEN GDSCODE unique_key_violation, GDSCODE no_dup DO BEGIN END"
               "  END"
               "  SELECT table_name FROM sqlq_sub_locks WHERE table_name = :t WITH LOCK INTO :k;"
               "  DELETE FROM sqlq_subscriptions WHERE table_name = :t AND tag = :g;"
               " END",
  [SQLQ__SQL_SUB_ACTIONS] =
    "SELECT action, with_rows FROM sqlq_subscriptions WHERE table_name = " TABLE_PARAM("$1"),
  [SQLQ__SQL_SUB_LIST] =
    "SELECT table_name, tag, action, with_rows, created_at FROM sqlq_subscriptions"
    " ORDER BY table_name, tag, action",
  /* A trigger's description is the table name it was made for
  ** (firebird_sub.c): the trigger's table is reported by that name while
  ** the name still means that table. */
  [SQLQ__SQL_SUB_TRIGGERS] =
    "SELECT TRIM(TRAILING FROM t.RDB$TRIGGER_NAME),"
    " IIF(" RELATION_OF(
      "t.d") " = t.RDB$RELATION_NAME, t.d, TRIM(TRAILING FROM t.RDB$RELATION_NAME))"
             " FROM (SELECT RDB$TRIGGER_NAME, RDB$RELATION_NAME,"
             "  CAST(SUBSTRING(RDB$DESCRIPTION FROM 1 FOR 63) AS VARCHAR(63) CHARACTER SET UTF8) AS d"
             "  FROM RDB$TRIGGERS WHERE RDB$TRIGGER_NAME STARTING WITH CAST($1 AS VARCHAR(31) CHARACTER SET UTF8)) t",

  /* The driver's own statements. */
  [FB_SQL_EVENT_NAME] = "SELECT " EVENT("CAST($1 AS " TEXT(200) ")") " FROM RDB$DATABASE",
  [FB_SQL_POST] = "EXECUTE BLOCK (c " TEXT(200) " = $1) AS BEGIN POST_EVENT " EVENT(":c") "; END",

  /* Schedules (schema version 4). */
  [SQLQ__SQL_CRON_NOW] = "SELECT " NOW " FROM RDB$DATABASE",
  SCHEDULES_SQL_WRITES,
  [SQLQ__SQL_CRON_LIST] =
    SCHEDULES_SQL_COLUMNS " WHERE " QUEUE_PARAM("$1") " IS NULL OR name = $1 ORDER BY name",
  [SQLQ__SQL_CRON_DUE] =
    SCHEDULES_SQL_COLUMNS " WHERE paused = 0 AND next_run <= $1 ORDER BY next_run, name",
  [SQLQ__SQL_CRON_ADVANCE] =
    "UPDATE sqlq_schedules SET next_run = $3, last_run = COALESCE(NULLIF(CAST($4 AS BIGINT), 0), last_run)"
    " WHERE name = $1 AND next_run = $2",
  [SQLQ__SQL_CRON_NEXT] = "SELECT min(next_run) FROM sqlq_schedules WHERE paused = 0",
  /* Retention.  The orderings begin with the queue, which the WHERE fixes,
  ** so that they follow sqlq_jobs_history_age (ascending) and
  ** sqlq_jobs_history_new (descending) without sorting. */
  [SQLQ__SQL_RETENTION_SET] =
    "UPDATE OR INSERT INTO sqlq_queues (queue, keep_for, keep_count)"
    " VALUES ($1, NULLIF(CAST($2 AS BIGINT), 0), NULLIF(CAST($3 AS BIGINT), 0)) MATCHING (queue)",
  [SQLQ__SQL_RETENTION_GET] =
    "SELECT keep_for, keep_count, " NOW " FROM sqlq_queues WHERE queue = $1",
  [SQLQ__SQL_HISTORY_NEWEST] = "SELECT finished_at, id FROM sqlq_jobs_history WHERE queue = $1"
                               " ORDER BY queue DESC, finished_at DESC, id DESC"
                               " ROWS CAST($2 AS BIGINT) + 1 TO CAST($2 AS BIGINT) + 1",
  [SQLQ__SQL_HISTORY_OLDEST] =
    "SELECT finished_at, id FROM sqlq_jobs_history WHERE queue = $1"
    " ORDER BY queue, finished_at, id ROWS CAST($2 AS BIGINT) + 1 TO CAST($2 AS BIGINT) + 1",
  [SQLQ__SQL_HISTORY_PRUNE] =
    "DELETE FROM sqlq_jobs_history WHERE queue = $1 AND finished_at <= CAST($2 AS BIGINT)"
    " AND (finished_at < CAST($2 AS BIGINT) OR id <= CAST($3 AS BIGINT))",
  [SQLQ__SQL_HISTORY_LIST] =
    "SELECT id, CAST($2 AS INTEGER), priority, attempts, max_attempts, finished_at, created_at,"
    " CAST(NULL AS BIGINT), dedupe_key, group_key, CAST(NULL AS " TEXT(
      1) "), payload"
         " FROM sqlq_jobs_history WHERE queue = " QUEUE_PARAM(
           "$1") " ORDER BY queue DESC, finished_at DESC, id DESC"
                 " ROWS IIF(CAST($3 AS BIGINT) < 0, 9223372036854775807, CAST($3 AS BIGINT))",
  /* Concurrency limits.  The lock is a TURN (each statement of READ
  ** COMMITTED then reads the newest commits, LIMIT_RUNNING too); the core
  ** runs it in a transaction that waits (SQLQ__TX_WAITS). */
  [SQLQ__SQL_LIMIT_SET] = "UPDATE OR INSERT INTO sqlq_queues (queue, max_running)"
                          " VALUES ($1, NULLIF(CAST($2 AS BIGINT), 0)) MATCHING (queue)",
  [SQLQ__SQL_LIMIT_GET] = "SELECT max_running FROM sqlq_queues WHERE queue = $1",
  [SQLQ__SQL_LIMIT_LOCK] = "EXECUTE BLOCK (q " TEXT(128) " = $1) RETURNS (cap BIGINT) AS" TURN(
    "SELECT max_running FROM sqlq_queues WHERE queue = :q AND max_running IS NOT NULL"
    " WITH LOCK INTO :cap;",
    LIMITED, "SUSPEND;"),
  [SQLQ__SQL_CLAIM_UNLIMITED] = CLAIM("", "paused <> 0", GROUP_HEAD),
  [SQLQ__SQL_PAUSED_UNLIMITED] = "SELECT paused, 0 FROM sqlq_queues WHERE queue = $1",
  [SQLQ__SQL_NEXT_DUE_UNLIMITED] = NEXT_DUE(GROUP_HEAD, ""),
  [SQLQ__SQL_LIMIT_RUNNING] = "SELECT count(*) FROM sqlq_jobs WHERE queue = $1"
                              " AND state = 'running' AND lease_until > " NOW,
  /* Rate limits (schema version 8).  RATE_FREE runs after
  ** LIMIT_LOCK_RATES's TURN, and READ COMMITTED reads the newest commits;
  ** RATE_GROW adds its slots one by one (a recursive query goes at most
  ** 1024 deep). */
  [SQLQ__SQL_RATE_SET] =
    "UPDATE OR INSERT INTO sqlq_queues (queue, rate_max, rate_period)"
    " VALUES ($1, NULLIF(CAST($2 AS BIGINT), 0), NULLIF(CAST($3 AS BIGINT), 0))"
    " MATCHING (queue)",
  [SQLQ__SQL_RATE_GET] =
    "SELECT rate_max, rate_period, (SELECT count(*) FROM sqlq_rate_starts"
    "  WHERE queue = " QUEUE_PARAM("$1") ")"
                                         " FROM sqlq_queues WHERE queue = " QUEUE_PARAM("$1"),
  [SQLQ__SQL_RATE_GROW] =
    "EXECUTE BLOCK (q " TEXT(128) " = $1, n BIGINT = $2) AS"
                                  " DECLARE base BIGINT;"
                                  " DECLARE i BIGINT = 0;"
                                  " BEGIN"
                                  "  SELECT COALESCE(MAX(slot), -1) + 1 FROM sqlq_rate_starts"
                                  "   WHERE queue = :q INTO :base;"
                                  "  WHILE (i < n) DO"
                                  "  BEGIN"
                                  "   INSERT INTO sqlq_rate_starts (queue, slot, started_at)"
                                  "    VALUES (:q, :base + :i, :base + :i);"
                                  "   i = i + 1;"
                                  "  END"
                                  " END",
  [SQLQ__SQL_RATE_NEWEST] = "SELECT started_at, slot FROM sqlq_rate_starts WHERE queue = $1"
                            " ORDER BY queue DESC, started_at DESC, slot DESC"
                            " ROWS CAST($2 AS BIGINT) + 1 TO CAST($2 AS BIGINT) + 1",
  [SQLQ__SQL_RATE_PRUNE] = "DELETE FROM sqlq_rate_starts WHERE " SLOTS_UPTO("<"),
  [SQLQ__SQL_RATE_FREE] = "SELECT started_at, slot FROM sqlq_rate_starts WHERE queue = $1"
                          " AND started_at <= " NOW " - CAST($2 AS BIGINT)"
                          " PLAN (SQLQ_RATE_STARTS ORDER SQLQ_RATE_STARTS_AGE)"
                          " ORDER BY queue, started_at, slot ROWS CAST($3 AS BIGINT)",
  [SQLQ__SQL_RATE_STAMP] = "UPDATE sqlq_rate_starts SET started_at = " NOW " WHERE " SLOTS_UPTO(
    "<=") " PLAN (SQLQ_RATE_STARTS INDEX (SQLQ_RATE_STARTS_AGE))",
  [SQLQ__SQL_CLAIM_RATES] = CLAIM(COUNTED, PAUSED_IF(ROW_LIMITED_RATES), GROUP_HEAD),
  [SQLQ__SQL_PAUSED_RATES] = PAUSED_ROW(ROW_LIMITED_RATES),
  [SQLQ__SQL_NEXT_DUE_RATES] = NEXT_DUE_AT(GROUP_HEAD, " AND NOT " FULL, RATE_DUE),
  [SQLQ__SQL_LIMIT_LOCK_RATES] = "EXECUTE BLOCK (q " TEXT(
    128) " = $1)"
         " RETURNS (cap BIGINT, rate_max BIGINT, rate_period BIGINT) AS" TURN(
           "SELECT max_running, rate_max, rate_period FROM sqlq_queues WHERE queue = :q"
           " AND " ROW_LIMITED_RATES " WITH LOCK INTO :cap, :rate_max, :rate_period;",
           LIMITED_IF(ROW_LIMITED_RATES), "SUSPEND;"),
  /* Per-group limits (schema version 10). */
  [SQLQ__SQL_GROUP_LIMIT_SET] = "UPDATE OR INSERT INTO sqlq_queues (queue, group_running)"
                                " VALUES ($1, NULLIF(CAST($2 AS BIGINT), 1)) MATCHING (queue)",
  [SQLQ__SQL_GROUP_LIMIT_GET] =
    "SELECT COALESCE(group_running, 1) FROM sqlq_queues WHERE queue = $1",
  [SQLQ__SQL_CLAIM_GROUPS] =
    CLAIM(COUNTED, PAUSED_IF(ROW_LIMITED_GROUPS), GROUP_ROOM(GROUP_N(":q"))),
  [SQLQ__SQL_PAUSED_GROUPS] = PAUSED_ROW(ROW_LIMITED_GROUPS),
  [SQLQ__SQL_NEXT_DUE_GROUPS] =
    NEXT_DUE_AT(GROUP_ROOM(GROUP_N(QUEUE_PARAM("$1"))), " AND NOT " FULL, RATE_DUE),
  /* Claim lanes (schema version 12): the claim of CLAIM_GROUPS, each lane
  ** walked from its floor in the cursor; the wait of NEXT_DUE_GROUPS, its
  ** look started at the lowest floor. */
  [SQLQ__SQL_CLAIM_LANES] = CLAIM_LANES,
  [SQLQ__SQL_NEXT_DUE_LANES] = NEXT_DUE_LANES,
  /* Fair queues (schema version 10).  FAIR_LOCK takes the queue's row as LIMIT_LOCK does. */
  [SQLQ__SQL_FAIR_SET] = "UPDATE OR INSERT INTO sqlq_queues (queue, fair)"
                         " VALUES ($1, NULLIF(CAST($2 AS INTEGER), 0)) MATCHING (queue)",
  [SQLQ__SQL_FAIR_FORGET] = FAIR_SQL_FORGET,
  [SQLQ__SQL_FAIR_GET] = "SELECT IIF(fair IS NULL, 0, 1) FROM sqlq_queues WHERE queue = $1",
  [SQLQ__SQL_FAIR_LOCK] =
    "EXECUTE BLOCK (q " TEXT(128) " = $1) RETURNS (served BIGINT, per_group BIGINT) AS" TURN(
      "SELECT COALESCE(fair_served, 0), COALESCE(group_running, 1) FROM sqlq_queues"
      " WHERE queue = :q AND " FAIR_ROW " WITH LOCK INTO :served, :per_group;",
      LIMITED_IF(FAIR_ROW), "SUSPEND;"),
  [SQLQ__SQL_FAIR_REAP] = "UPDATE sqlq_jobs SET state = IIF(attempts >= max_attempts, " STATE(
    "dead") ", " STATE("ready") "), last_error = 'lease expired during attempt ' || attempts,"
                                " token = NULL, lease_until = NULL"
                                " WHERE queue = $1 AND state = 'running' AND lease_until <= " NOW,
  [SQLQ__SQL_FAIR_TENANTS] = FAIR_SQL_TENANTS(NOW, "CAST('' AS " TEXT(255) ")", ""),
  [SQLQ__SQL_FAIR_PICK_GROUP] = FAIR_SQL_PICK_GROUP(NOW, FB_ROWS),
  [SQLQ__SQL_FAIR_PICK_FREE] = FAIR_SQL_PICK_FREE(NOW, FB_ROWS),
  [SQLQ__SQL_FAIR_TAKE] = FAIR_SQL_TAKE(NOW) " RETURNING " FAIR_SQL_COLUMNS,
  [SQLQ__SQL_FAIR_SERVE] = "UPDATE OR INSERT INTO sqlq_groups (queue, grouped, group_key, served)"
                           " VALUES ($1, $2, $3, $4) MATCHING (queue, grouped, group_key)",
  [SQLQ__SQL_FAIR_SERVED] = FAIR_SQL_SERVED,

  /* Health (docs/health.md): the gaps between the next transaction and the
  ** oldest interesting, oldest active and oldest snapshot ones (garbage
  ** collection stops at the oldest snapshot), the attachment of the oldest
  ** active transaction of another connection, and the database's size. */
  [SQLQ__SQL_HEALTH] =
    "SELECT CAST('oldest_transaction_gap' AS VARCHAR(32)),"
    "  CAST(d.MON$NEXT_TRANSACTION - d.MON$OLDEST_TRANSACTION AS BIGINT),"
    "  CAST('transactions' AS VARCHAR(16)), CAST(100000 AS BIGINT), CAST(NULL AS VARCHAR(400)),"
    "  CAST(NULL AS BIGINT), CAST('oldest interesting ' || d.MON$OLDEST_TRANSACTION AS VARCHAR(400))"
    "  FROM MON$DATABASE d"
    " UNION ALL SELECT 'oldest_active_gap', d.MON$NEXT_TRANSACTION - d.MON$OLDEST_ACTIVE,"
    "  'transactions', 100000, h.holder, h.started, 'oldest active ' || d.MON$OLDEST_ACTIVE"
    "  FROM MON$DATABASE d LEFT JOIN " FB_HEALTH_HOLDER " h ON 1 = 1"
    " UNION ALL SELECT 'oldest_snapshot_gap', d.MON$NEXT_TRANSACTION - d.MON$OLDEST_SNAPSHOT,"
    "  'transactions', 100000, h.holder, h.started, 'oldest snapshot ' || d.MON$OLDEST_SNAPSHOT"
    "  FROM MON$DATABASE d LEFT JOIN " FB_HEALTH_HOLDER " h ON 1 = 1"
    " UNION ALL SELECT 'database_bytes', CAST(d.MON$PAGES * d.MON$PAGE_SIZE AS BIGINT), 'bytes',"
    "  1073741824, NULL, NULL, NULL FROM MON$DATABASE d",
  /* Counts (schema version 13). */
  COUNTS_SQL_ENTRIES("", QUEUE_PARAM("$1")),
  /* The identity column's generator, whose name the system tables hold. */
  [SQLQ__SQL_COUNTS_IDS] =
    "EXECUTE BLOCK RETURNS (n BIGINT) AS DECLARE g VARCHAR(63); BEGIN"
    " n = 0;"
    " SELECT TRIM(RDB$GENERATOR_NAME) FROM RDB$RELATION_FIELDS"
    "  WHERE RDB$RELATION_NAME = 'SQLQ_JOBS' AND RDB$FIELD_NAME = 'ID' INTO g;"
    " IF (g IS NOT NULL) THEN"
    "  EXECUTE STATEMENT 'SELECT GEN_ID(\"' || g || '\", 0) FROM RDB$DATABASE' INTO n;"
    " SUSPEND;"
    " END",
};

/* Version 1: jobs, queues, history, and the triggers that keep claim_rank,
** fill the times in and post wake-ups.  docs/schema.md documents each
** column; docs/firebird.md the rest. */
static const char migration_1[] =
  "CREATE TABLE sqlq_jobs ("
  " id           BIGINT GENERATED BY DEFAULT AS IDENTITY NOT NULL PRIMARY KEY,"
  " queue        " TEXT(
    128) " NOT NULL,"
         " state        " TEXT(
           8) " DEFAULT 'ready' NOT NULL,"
              " priority     INTEGER DEFAULT 0 NOT NULL,"
              " run_at       BIGINT NOT NULL,"
              " attempts     INTEGER DEFAULT 0 NOT NULL,"
              " max_attempts INTEGER DEFAULT 25 NOT NULL,"
              " lease_until  BIGINT,"
              " token        BIGINT,"
              " dedupe_key   " TEXT(
                255) ","
                     " group_key    " TEXT(
                       255) ","
                            " payload      BLOB SUB_TYPE BINARY DEFAULT '' NOT NULL,"
                            " last_error   BLOB SUB_TYPE BINARY,"
                            " created_at   BIGINT NOT NULL,"
                            " claim_rank   BIGINT NOT NULL,"
                            " CONSTRAINT sqlq_jobs_queue CHECK (octet_length(queue) BETWEEN 1 AND 128),"
                            " CONSTRAINT sqlq_jobs_state CHECK (state IN ('ready','running','dead')),"
                            " CONSTRAINT sqlq_jobs_attempts CHECK (max_attempts >= 0))" FB_SEP
                            "CREATE INDEX sqlq_jobs_claim ON sqlq_jobs (queue, state, claim_rank, run_at, id)" FB_SEP
                            "CREATE INDEX sqlq_jobs_due ON sqlq_jobs (queue, state, run_at)" FB_SEP
                            "CREATE INDEX sqlq_jobs_lease ON sqlq_jobs (queue, state, lease_until)" FB_SEP
                            "CREATE INDEX sqlq_jobs_group ON sqlq_jobs (queue, group_key, id)" FB_SEP
                            "CREATE UNIQUE INDEX sqlq_jobs_dedupe ON sqlq_jobs COMPUTED BY " DEDUPE_EXPR
                              FB_SEP
                            "CREATE TRIGGER sqlq_jobs_set FOR sqlq_jobs ACTIVE BEFORE INSERT OR UPDATE POSITION 0 AS"
                            " DECLARE now BIGINT;"
                            " BEGIN"
                            "  IF (NEW.run_at IS NULL OR NEW.created_at IS NULL) THEN"
                            "  BEGIN"
                            "   now = " NOW ";"
                            "   IF (NEW.run_at IS NULL) THEN NEW.run_at = now;"
                            "   IF (NEW.created_at IS NULL) THEN NEW.created_at = now;"
                            "  END"
                            "  NEW.claim_rank = -NEW.priority;"
                            " END" FB_SEP
                            /* A job became ready, or the head of its FIFO group finished. */
                            "CREATE TRIGGER sqlq_jobs_wake FOR sqlq_jobs ACTIVE AFTER INSERT OR UPDATE OR DELETE"
                            " POSITION 0 AS"
                            " BEGIN"
                            "  IF (NOT DELETING AND NEW.state = 'ready'"
                            "   AND (INSERTING OR OLD.state <> 'ready' OR OLD.run_at <> NEW.run_at))"
                            "  THEN POST_EVENT " EVENT(
                              "NEW.queue") ";"
                                           "  ELSE IF (NOT INSERTING AND OLD.group_key IS NOT NULL"
                                           "   AND (DELETING OR (NEW.state = 'dead' AND OLD.state <> 'dead')))"
                                           "  THEN POST_EVENT " EVENT(
                                             "OLD.queue") ";"
                                                          " END" FB_SEP "CREATE TABLE sqlq_queues ("
                                                          " queue  " TEXT(
                                                            128) " NOT NULL PRIMARY KEY,"
                                                                 " paused SMALLINT DEFAULT 0 NOT NULL)" FB_SEP
                                                                 /* A resumed queue's jobs may run again. */
                                                                 "CREATE TRIGGER sqlq_queues_wake FOR sqlq_queues ACTIVE AFTER UPDATE POSITION 0 AS"
                                                                 " BEGIN"
                                                                 "  IF (OLD.paused <> 0 AND NEW.paused = 0) THEN POST_EVENT " EVENT(
                                                                   "NEW.queue") ";"
                                                                                " END" FB_SEP
                                                                                "CREATE TABLE sqlq_jobs_history ("
                                                                                " id           BIGINT NOT NULL PRIMARY KEY,"
                                                                                " queue        " TEXT(
                                                                                  128) " NOT NULL,"
                                                                                       " priority     INTEGER NOT NULL,"
                                                                                       " attempts     INTEGER NOT NULL,"
                                                                                       " max_attempts INTEGER NOT NULL,"
                                                                                       " dedupe_key   " TEXT(
                                                                                         255) ","
                                                                                              " group_key    " TEXT(
                                                                                                255) ","
                                                                                                     " payload      BLOB SUB_TYPE BINARY NOT NULL,"
                                                                                                     " created_at   BIGINT NOT NULL,"
                                                                                                     " finished_at  BIGINT NOT NULL)" FB_SEP
                                                                                                     /* Named locks: one row per lock ever taken, keyed by the name's hash;
  ** a holder keeps its row locked (firebird_lock.c). */
                                                                                                     "CREATE TABLE sqlq_locks ("
                                                                                                     " lock_key BIGINT NOT NULL PRIMARY KEY)";

/* Version 2: rings and pools (docs/schema.md).  The capacity and a ring's
** created_at have no computed default: RING_CREATE gives them. */
static const char migration_2[] =
  "CREATE TABLE sqlq_rings ("
  " name       " TEXT(
    128) " NOT NULL PRIMARY KEY,"
         " capacity   BIGINT NOT NULL,"
         " next_seq   BIGINT DEFAULT 1 NOT NULL,"
         " created_at BIGINT NOT NULL,"
         " CONSTRAINT sqlq_rings_name CHECK (octet_length(name) BETWEEN 1 AND 128),"
         " CONSTRAINT sqlq_rings_capacity CHECK (capacity BETWEEN 1 AND 1000000000))" FB_SEP
         "CREATE TABLE sqlq_ring_entries ("
         " ring    " TEXT(
           128) " NOT NULL,"
                " slot    BIGINT NOT NULL,"
                " seq     BIGINT NOT NULL,"
                " \"AT\"    BIGINT NOT NULL,"
                " payload BLOB SUB_TYPE BINARY NOT NULL,"
                " CONSTRAINT sqlq_ring_entries_pk PRIMARY KEY (ring, slot))" FB_SEP
                "CREATE UNIQUE INDEX sqlq_ring_entries_seq ON sqlq_ring_entries (ring, seq)" FB_SEP
                "CREATE TABLE sqlq_pool_items ("
                " id         BIGINT GENERATED BY DEFAULT AS IDENTITY NOT NULL PRIMARY KEY,"
                " pool       " TEXT(
                  128) " NOT NULL,"
                       " item       " TEXT(
                         1024) " NOT NULL,"
                               " last_used  BIGINT DEFAULT 0 NOT NULL,"
                               " uses       BIGINT DEFAULT 0 NOT NULL,"
                               " held_until BIGINT,"
                               " token      BIGINT,"
                               " CONSTRAINT sqlq_pool_items_pool CHECK (octet_length(pool) BETWEEN 1 AND 128),"
                               " CONSTRAINT sqlq_pool_items_item CHECK (octet_length(item) BETWEEN 1 AND 1024),"
                               " CONSTRAINT sqlq_pool_items_unique UNIQUE (pool, item))" FB_SEP
                               "CREATE INDEX sqlq_pool_items_lru ON sqlq_pool_items (pool, last_used, id)" FB_SEP
                               /* The microseconds of POOL_NEXT's clock (see there). */
                               "CREATE SEQUENCE sqlq_pool_ticks";

/* Version 3: table subscriptions (docs/schema.md), the rows that make one
** table's subscription changes take turns (SUB_REMOVE), and the functions
** the triggers of firebird_sub.c build their JSON with:
** - sqlq_json_text(s): s as a JSON string (quote, backslash and control
**   characters escaped; other characters as they are), or null;
** - sqlq_json_bytes(b): the JSON string "\\x" and b's bytes in lower-case
**   hex, or null;
** - sqlq_json_key(s): s cut to at most 255 bytes of UTF-8 (a group key),
**   never inside a character. */
static const char migration_3[] =
  "CREATE TABLE sqlq_subscriptions ("
  " table_name " TEXT(
    63) " NOT NULL,"
        " action     " TEXT(
          8) " NOT NULL,"
             " tag        " TEXT(
               128) " NOT NULL,"
                    " with_rows  SMALLINT DEFAULT 0 NOT NULL,"
                    " created_at BIGINT NOT NULL,"
                    " CONSTRAINT sqlq_subscriptions_pk PRIMARY KEY (table_name, action, tag),"
                    " CONSTRAINT sqlq_subscriptions_table CHECK (octet_length(table_name) BETWEEN 1 AND 63),"
                    " CONSTRAINT sqlq_subscriptions_action CHECK (action IN ('insert','update','delete')),"
                    " CONSTRAINT sqlq_subscriptions_tag CHECK (octet_length(tag) BETWEEN 1 AND 128))" FB_SEP
                    "CREATE TRIGGER sqlq_subscriptions_set FOR sqlq_subscriptions ACTIVE BEFORE INSERT POSITION 0 AS"
                    " BEGIN"
                    "  IF (NEW.created_at IS NULL) THEN NEW.created_at = " NOW ";"
                    " END" FB_SEP "CREATE TABLE sqlq_sub_locks ("
                    " table_name " TEXT(
                      63) " NOT NULL PRIMARY KEY)" FB_SEP
                          "CREATE FUNCTION sqlq_json_text (s BLOB SUB_TYPE TEXT CHARACTER SET UTF8)"
                          " RETURNS BLOB SUB_TYPE TEXT CHARACTER SET UTF8 AS"
                          " DECLARE c INTEGER = 0;"
                          " BEGIN"
                          "  IF (s IS NULL) THEN RETURN 'null';"
                          "  s = REPLACE(REPLACE(s, '\\', '\\\\'), '\"', '\\\"');"
                          "  WHILE (c < 32) DO"
                          "  BEGIN"
                          "   IF (POSITION(ASCII_CHAR(c) IN s) > 0) THEN"
                          "    s = REPLACE(s, ASCII_CHAR(c), DECODE(c, 8, CAST('\\b' AS VARCHAR(6)),"
                          "     9, CAST('\\t' AS VARCHAR(6)), 10, CAST('\\n' AS VARCHAR(6)),"
                          "     12, CAST('\\f' AS VARCHAR(6)), 13, CAST('\\r' AS VARCHAR(6)),"
                          "     '\\u00' || SUBSTRING('0123456789abcdef' FROM BIN_SHR(c, 4) + 1 FOR 1)"
                          "     || SUBSTRING('0123456789abcdef' FROM BIN_AND(c, 15) + 1 FOR 1)));"
                          "   c = c + 1;"
                          "  END"
                          "  RETURN '\"' || s || '\"';"
                          " END" FB_SEP "CREATE FUNCTION sqlq_json_bytes (b BLOB SUB_TYPE BINARY)"
                          " RETURNS BLOB SUB_TYPE TEXT CHARACTER SET UTF8 AS"
                          " DECLARE n INTEGER;"
                          " DECLARE i INTEGER = 1;"
                          " DECLARE j INTEGER;"
                          " DECLARE v INTEGER;"
                          " DECLARE chunk " TEXT(
                            1024) ";"
                                  " DECLARE hex VARCHAR(2048) CHARACTER SET UTF8;"
                                  " DECLARE r BLOB SUB_TYPE TEXT CHARACTER SET UTF8 = '\"\\\\x';"
                                  " BEGIN"
                                  "  IF (b IS NULL) THEN RETURN 'null';"
                                  "  n = OCTET_LENGTH(b);"
                                  "  WHILE (i <= n) DO"
                                  "  BEGIN"
                                  "   chunk = SUBSTRING(b FROM i FOR 1024);"
                                  "   hex = '';"
                                  "   j = 1;"
                                  "   WHILE (j <= OCTET_LENGTH(chunk)) DO"
                                  "   BEGIN"
                                  "    v = ASCII_VAL(SUBSTRING(chunk FROM j FOR 1));"
                                  "    hex = hex || SUBSTRING('0123456789abcdef' FROM BIN_SHR(v, 4) + 1 FOR 1)"
                                  "     || SUBSTRING('0123456789abcdef' FROM BIN_AND(v, 15) + 1 FOR 1);"
                                  "    j = j + 1;"
                                  "   END"
                                  "   r = r || hex;"
                                  "   i = i + 1024;"
                                  "  END"
                                  "  RETURN r || '\"';"
                                  " END" FB_SEP
                                  "CREATE FUNCTION sqlq_json_key (s BLOB SUB_TYPE TEXT CHARACTER SET UTF8)"
                                  " RETURNS " TEXT(
                                    255) " AS"
                                         " DECLARE b " TEXT(
                                           1020) ";"
                                                 " DECLARE n INTEGER = 255;"
                                                 " BEGIN"
                                                 "  b = CAST(SUBSTRING(s FROM 1 FOR 255) AS VARCHAR(255) CHARACTER SET UTF8);"
                                                 "  IF (OCTET_LENGTH(b) <= n) THEN RETURN b;"
                                                 "  WHILE (n > 0 AND BIN_AND(ASCII_VAL(SUBSTRING(b FROM n + 1 FOR 1)), 192) = 128) DO n = n - 1;"
                                                 "  RETURN SUBSTRING(b FROM 1 FOR n);"
                                                 " END";

/* Version 4: schedules of periodic jobs, one row each. */
static const char migration_4[] =
  "CREATE TABLE sqlq_schedules ("
  " name       " TEXT(
    128) " NOT NULL,"
         " spec       " TEXT(
           256) " NOT NULL,"
                " time_zone  " TEXT(
                  64) " DEFAULT 'UTC' NOT NULL,"
                      " queue      " TEXT(
                        128) " NOT NULL,"
                             " payload    BLOB SUB_TYPE BINARY NOT NULL,"
                             " missed     INTEGER DEFAULT 0 NOT NULL,"
                             " paused     SMALLINT DEFAULT 0 NOT NULL,"
                             " next_run   BIGINT NOT NULL,"
                             " last_run   BIGINT,"
                             " created_at BIGINT NOT NULL,"
                             " CONSTRAINT sqlq_schedules_pk PRIMARY KEY (name),"
                             " CONSTRAINT sqlq_schedules_name CHECK (octet_length(name) BETWEEN 1 AND 128),"
                             " CONSTRAINT sqlq_schedules_spec CHECK (octet_length(spec) BETWEEN 1 AND 256),"
                             " CONSTRAINT sqlq_schedules_zone CHECK (octet_length(time_zone) BETWEEN 1 AND 64),"
                             " CONSTRAINT sqlq_schedules_queue CHECK (octet_length(queue) BETWEEN 1 AND 128),"
                             " CONSTRAINT sqlq_schedules_missed CHECK (missed >= -1))" FB_SEP
                             "CREATE TRIGGER sqlq_schedules_set FOR sqlq_schedules ACTIVE BEFORE INSERT POSITION 0 AS"
                             " BEGIN"
                             "  IF (NEW.created_at IS NULL) THEN NEW.created_at = " NOW ";"
                             " END";
/* Version 5: retention of finished jobs.  A queue's limits (NULL: none)
** and the indexes that prune and list its history in finishing order, one
** each way (an index is read in one direction only). */
static const char migration_5[] =
  "ALTER TABLE sqlq_queues ADD keep_for BIGINT, ADD keep_count BIGINT" FB_SEP
  "CREATE INDEX sqlq_jobs_history_age ON sqlq_jobs_history (queue, finished_at, id)" FB_SEP
  "CREATE DESCENDING INDEX sqlq_jobs_history_new ON sqlq_jobs_history (queue, finished_at, id)";

/* Version 6: concurrency limits, a column of the queue's row. */
static const char migration_6[] = "ALTER TABLE sqlq_queues ADD max_running BIGINT";
/* Version 7: dependencies (docs/schema.md). */
static const char migration_7[] =
  "ALTER TABLE sqlq_jobs ADD awaited INTEGER, ADD waits INTEGER" FB_SEP "CREATE TABLE sqlq_deps ("
  " job_id   BIGINT NOT NULL,"
  " after_id BIGINT NOT NULL,"
  " CONSTRAINT sqlq_deps_pk PRIMARY KEY (job_id, after_id))" FB_SEP
  "CREATE INDEX sqlq_deps_after ON sqlq_deps (after_id, job_id)";

/* Version 8: rate limits: the rate in the queue's row, and its slots, the
** latest starts (docs/schema.md, "Rate limits"). */
static const char migration_8[] =
  "ALTER TABLE sqlq_queues ADD rate_max BIGINT, ADD rate_period BIGINT" FB_SEP
  "CREATE TABLE sqlq_rate_starts ("
  " queue      " TEXT(
    128) " NOT NULL,"
         " slot       BIGINT NOT NULL,"
         " started_at BIGINT NOT NULL,"
         " CONSTRAINT sqlq_rate_starts_pk PRIMARY KEY (queue, slot))" FB_SEP
         "CREATE INDEX sqlq_rate_starts_age ON sqlq_rate_starts (queue, started_at, slot)";
/* Version 9: cancellation: when a dead job was cancelled (docs/schema.md). */
static const char migration_9[] = "ALTER TABLE sqlq_jobs ADD cancelled_at BIGINT";
/* Version 10: per-group limits, a column of the queue's row (NULL: 1);
** fair queues, two more, and their tenants' turns. */
static const char migration_10[] =
  "ALTER TABLE sqlq_queues ADD group_running BIGINT, ADD fair INTEGER,"
  " ADD fair_served BIGINT" FB_SEP "CREATE TABLE sqlq_groups ("
  " queue     " TEXT(
    128) " NOT NULL,"
         " grouped   INTEGER NOT NULL,"
         " group_key " TEXT(
           255) " NOT NULL,"
                " served    BIGINT  NOT NULL,"
                " CONSTRAINT sqlq_groups_pk PRIMARY KEY (queue, grouped, group_key))";

/* Version 11 adds nothing on this backend: its claim does not walk old row
** versions (sqlq_lanes is for the backends whose claims do).  The version
** is recorded all the same, by a block that does nothing. */
static const char migration_11[] = "EXECUTE BLOCK AS BEGIN END";

/* Version 12: claim lanes (see CLAIM_LANES).  sqlq_lanes holds each lane
** (queue, claim_rank) that a job has been made ready in; the row with the
** empty queue and claim_rank 0 says that the lanes of the jobs that were
** there before this version have been copied (by the first claim by lanes:
** a migration cannot write the table it makes).  The trigger
** sqlq_jobs_lanes records a new lane in an autonomous transaction (so a
** producer never holds a lock on it, and the lane is there before the job
** can be seen), and in the transaction's context SQLQ_DUE the least
** run_at it made ready (an insert as ready, an update to ready, to another
** lane or to an earlier run_at) or the least lease it cut short.  The
** database trigger sqlq_commit counts a rewind when that is older than the
** commit's clock less COMMIT_MARGIN.  The triggers are granted what they
** read and write, so that a user with rights on an application's table
** only may write it while it has subscriptions (firebird_sub.c), and commit
** anything.  A database trigger takes the owner of
** the database, SYSDBA, or a user granted ALTER DATABASE (docs/firebird.md). */
static const char migration_12[] =
  "CREATE TABLE sqlq_lanes ("
  " queue      " TEXT(
    128) " NOT NULL,"
         " claim_rank BIGINT NOT NULL,"
         " CONSTRAINT sqlq_lanes_pk PRIMARY KEY (queue, claim_rank))" FB_SEP
         "CREATE SEQUENCE sqlq_rewinds" FB_SEP
         "CREATE TRIGGER sqlq_jobs_lanes FOR sqlq_jobs ACTIVE AFTER INSERT OR UPDATE POSITION 1 AS"
         " DECLARE due BIGINT;"
         " DECLARE was_due " TEXT(
           24) ";"
               " BEGIN"
               "  IF (NEW.state = 'ready' AND (INSERTING OR OLD.state <> 'ready' OR OLD.queue <> NEW.queue"
               "   OR OLD.claim_rank <> NEW.claim_rank OR NEW.run_at < OLD.run_at)) THEN"
               "  BEGIN"
               "   due = NEW.run_at;"
               "   IF (NOT EXISTS (SELECT 1 FROM sqlq_lanes WHERE queue = NEW.queue"
               "    AND claim_rank = NEW.claim_rank)) THEN"
               "    IN AUTONOMOUS TRANSACTION DO"
               "    BEGIN"
               "     INSERT INTO sqlq_lanes (queue, claim_rank) VALUES (NEW.queue, NEW.claim_rank);"
               /* Another transaction recorded it first (or is recording it). */
               "     WHEN GDSCODE unique_key_violation, GDSCODE lock_conflict, GDSCODE deadlock,"
               "      GDSCODE update_conflict DO BEGIN END"
               "    END"
               "  END"
               "  ELSE IF (UPDATING AND NEW.state = 'running' AND NEW.lease_until < OLD.lease_until) THEN"
               "   due = NEW.lease_until;"
               "  IF (due IS NOT NULL) THEN"
               "  BEGIN"
               "   was_due = RDB$GET_CONTEXT('USER_TRANSACTION', 'SQLQ_DUE');"
               "   IF (was_due IS NULL OR due < CAST(was_due AS BIGINT)) THEN"
               "    was_due = RDB$SET_CONTEXT('USER_TRANSACTION', 'SQLQ_DUE', due);"
               "  END"
               " END" FB_SEP "GRANT SELECT, INSERT ON sqlq_lanes TO TRIGGER sqlq_jobs_lanes" FB_SEP
               "CREATE TRIGGER sqlq_commit ACTIVE ON TRANSACTION COMMIT POSITION 0 AS"
               " DECLARE due " TEXT(
                 24) ";"
                     " DECLARE n BIGINT;"
                     " BEGIN"
                     "  due = RDB$GET_CONTEXT('USER_TRANSACTION', 'SQLQ_DUE');"
                     "  IF (due IS NOT NULL) THEN"
                     "   IF (CAST(due AS BIGINT) < " NOW " - " COMMIT_MARGIN
                     ") THEN n = GEN_ID(sqlq_rewinds, 1);"
                     " END" FB_SEP "GRANT USAGE ON SEQUENCE sqlq_rewinds TO TRIGGER sqlq_commit";

/* Version 13: the counts of what handles did, per queue, writer and
** minute (src/counts.c). */
static const char migration_13[] =
  COUNTS_SQL_TABLE("CREATE TABLE", "BIGINT", TEXT(128), TEXT(1000),
                   FB_SEP) "CREATE INDEX sqlq_counts_age ON sqlq_counts (minute_at)";

/* Version 14 (leases, which only PostgreSQL behind a transaction pooler
** uses) adds nothing on this backend.  The version is recorded all the
** same. */
static const char migration_14[] = "EXECUTE BLOCK AS BEGIN END";

/* Version 15 (an index of the dead jobs, which PostgreSQL and SQLite need
** for sqlq_summary()) adds nothing here: sqlq_jobs_due (queue, state,
** run_at) already finds them.  The version is recorded all the same. */
static const char migration_15[] = "EXECUTE BLOCK AS BEGIN END";

const char *const sqlq__firebird_migrations[SQLQ_SCHEMA_VERSION] = {
  migration_1,  migration_2,  migration_3,  migration_4,  migration_5,
  migration_6,  migration_7,  migration_8,  migration_9,  migration_10,
  migration_11, migration_12, migration_13, migration_14, migration_15,
};
