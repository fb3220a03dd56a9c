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
** Wake-ups: the triggers post the event "sqlq_" || HASH(queue) when a job
** becomes ready, which waiting workers receive at commit
** (firebird_wait.c).
**
** A script's statements are separated by FB_SEP, because PSQL bodies hold
** semicolons; a table made in a transaction cannot be written in it, so
** every migration is DDL only.
*/
#include "firebird_int.h"

#define NOW FB_NOW_US
#define TEXT(n) "VARCHAR(" #n ") CHARACTER SET OCTETS"
/* A state, as a VARCHAR: the literals 'dead' and 'ready' of one IIF() make a
** CHAR(5), and 'dead ' would be stored. */
#define STATE(s) "CAST('" s "' AS " TEXT(8) ")"
#define QUEUE_PARAM(p) "CAST(" p " AS " TEXT(128) ")"

/* A job of a FIFO group may run only when no earlier job of its group is
** unfinished.  The look-up must take the index sqlq_jobs_group: left to
** itself, Firebird 3 took sqlq_jobs_lease (queue, state) for the IN list,
** or the primary key for the id range, and read every ready job of the
** queue for each candidate (89,480 page fetches for the first 5 of 9,000
** table-subscription events, each with a group key of its own; 7,599
** with this form).  `|| ''` and `+ 0` keep those columns off any index. */
#define GROUP_HEAD \
  "(j.group_key IS NULL OR NOT EXISTS (SELECT 1 FROM sqlq_jobs g" \
  " WHERE g.queue = j.queue AND g.group_key = j.group_key" \
  " AND g.state || '' IN ('ready','running') AND g.id + 0 < j.id))"

/* The key of the unique index on dedupe keys: NULL when the job is
** finished or has none.  Queue names hold no control character, so the
** byte 0x01 separates the two parts unambiguously. */
#define DEDUPE_EXPR \
  "(CASE WHEN dedupe_key IS NOT NULL AND state IN ('ready','running')" \
  " THEN queue || x'01' || dedupe_key END)"

#define HELD "id = $1 AND token = $2 AND state = 'running'"

#define DEDUPE_FREE \
  "(j.dedupe_key IS NULL OR NOT EXISTS (SELECT 1 FROM sqlq_jobs o" \
  " WHERE o.queue = j.queue AND o.dedupe_key = j.dedupe_key" \
  " AND o.state IN ('ready','running') AND o.id <> j.id))"

#define RETRY_SET \
  "UPDATE sqlq_jobs j SET state = 'ready', attempts = 0, run_at = " NOW "," \
  " token = NULL, lease_until = NULL"

/* The lock conflicts a claim steps over. */
#define CONFLICTS \
  "WHEN GDSCODE deadlock, GDSCODE update_conflict, GDSCODE lock_conflict," \
  " GDSCODE read_conflict DO BEGIN END"


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
  "  AND " USER_TABLE("r") ")," \
  " (SELECT r.RDB$RELATION_NAME FROM RDB$RELATIONS r WHERE r.RDB$RELATION_NAME = UPPER(" n ")" \
  "  AND " n " SIMILAR TO '[A-Za-z][A-Za-z0-9_$]*'" \
  "  AND OCTET_LENGTH(TRIM(TRAILING FROM r.RDB$RELATION_NAME)) = OCTET_LENGTH(" n ")" \
  "  AND " USER_TABLE("r") "))"

/* Whether the column type t (RDB$FIELDS) holds bytes: a BLOB other than
** text, or text in CHARACTER SET OCTETS. */
#define BYTES_TYPE(t) \
  "((" t ".RDB$FIELD_TYPE = 261 AND " t ".RDB$FIELD_SUB_TYPE <> 1)" \
  " OR (" t ".RDB$FIELD_TYPE IN (14, 37, 261) AND " t ".RDB$CHARACTER_SET_ID = 1))"

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
    " END" FB_SEP
    "EXECUTE BLOCK AS BEGIN"
    " EXECUTE STATEMENT 'INSERT INTO sqlq_schema (version, applied_at) VALUES (0, 0)'"
    " WITH AUTONOMOUS TRANSACTION;"
    " WHEN ANY DO BEGIN END"
    " END" FB_SEP
    "UPDATE sqlq_schema SET applied_at = applied_at WHERE version = 0",
  [SQLQ__SQL_SCHEMA_VERSION] = "SELECT max(version) FROM sqlq_schema",
  [SQLQ__SQL_SCHEMA_RECORD] =
    "INSERT INTO sqlq_schema (version, applied_at) VALUES ($1, " NOW ")",

  [SQLQ__SQL_ENQUEUE] =
    "INSERT INTO sqlq_jobs (queue, priority, run_at, max_attempts, dedupe_key,"
    " group_key, payload, created_at)"
    " VALUES ($1, $2, " NOW " + $3, $4, $5, $6, $7, " NOW ") RETURNING id",
  [SQLQ__SQL_DEDUPE_LOOKUP] =
    "SELECT id FROM sqlq_jobs WHERE " DEDUPE_EXPR " = " QUEUE_PARAM("$1")
    " || x'01' || CAST($2 AS " TEXT(255) ")",
  [SQLQ__SQL_QUEUE_REGISTER] =
    "MERGE INTO sqlq_queues q USING RDB$DATABASE ON q.queue = " QUEUE_PARAM("$1")
    " WHEN NOT MATCHED THEN INSERT (queue) VALUES (" QUEUE_PARAM("$1") ")",
  [SQLQ__SQL_PAUSED] = "SELECT paused FROM sqlq_queues WHERE queue = $1",
  [SQLQ__SQL_CLAIM] =
    "EXECUTE BLOCK (q " TEXT(128) " = $1, tok BIGINT = $2, lease BIGINT = $3, lim INTEGER = $4)"
    " RETURNS (id BIGINT, priority INTEGER, run_at BIGINT, attempts INTEGER,"
    "  max_attempts INTEGER, created_at BIGINT, lease_until BIGINT,"
    "  group_key " TEXT(255) ", dedupe_key " TEXT(255) ", payload BLOB SUB_TYPE BINARY)"
    " AS"
    " DECLARE now BIGINT;"
    " DECLARE n INTEGER = 0;"
    " DECLARE cand BIGINT;"
    " BEGIN"
    "  now = " NOW ";"
    "  IF (EXISTS (SELECT 1 FROM sqlq_queues WHERE queue = :q AND paused <> 0)) THEN EXIT;"
    "  FOR SELECT id FROM sqlq_jobs WHERE queue = :q AND state = 'running'"
    "   AND lease_until <= :now INTO :cand DO"
    "  BEGIN"
    "   UPDATE sqlq_jobs SET"
    "    state = IIF(attempts >= max_attempts, " STATE("dead") ", " STATE("ready") "),"
    "    last_error = 'lease expired during attempt ' || attempts,"
    "    token = NULL, lease_until = NULL"
    "    WHERE id = :cand AND state = 'running' AND lease_until <= :now;"
    "   " CONFLICTS
    "  END"
    "  FOR SELECT j.id FROM sqlq_jobs j WHERE j.queue = :q AND j.state = 'ready'"
    "   AND j.run_at <= :now AND " GROUP_HEAD
    "   ORDER BY j.queue, j.state, j.claim_rank, j.run_at, j.id INTO :cand DO"
    "  BEGIN"
    "   UPDATE sqlq_jobs SET state = 'running', attempts = attempts + 1,"
    "    token = :tok, lease_until = :now + :lease"
    "    WHERE id = :cand AND state = 'ready'"
    "    RETURNING id, priority, run_at, attempts, max_attempts, created_at,"
    "     lease_until, group_key, dedupe_key, payload"
    "    INTO :id, :priority, :run_at, :attempts, :max_attempts, :created_at,"
    "     :lease_until, :group_key, :dedupe_key, :payload;"
    "   IF (ROW_COUNT > 0) THEN"
    "   BEGIN"
    "    n = n + 1;"
    "    SUSPEND;"
    "    IF (n >= lim) THEN LEAVE;"
    "   END"
    "   " CONFLICTS
    "  END"
    " END",

  [SQLQ__SQL_ACK] = "DELETE FROM sqlq_jobs WHERE " HELD " RETURNING id",
  [SQLQ__SQL_HISTORY_COPY] =
    "INSERT INTO sqlq_jobs_history (id, queue, priority, attempts, max_attempts,"
    " dedupe_key, group_key, payload, created_at, finished_at)"
    " SELECT id, queue, priority, attempts, max_attempts, dedupe_key, group_key,"
    " payload, created_at, " NOW " FROM sqlq_jobs WHERE " HELD,
  [SQLQ__SQL_FAIL_PEEK] =
    "SELECT attempts, max_attempts, queue FROM sqlq_jobs WHERE " HELD,
  [SQLQ__SQL_FAIL] =
    "UPDATE sqlq_jobs SET"
    " run_at = IIF(CAST($3 AS INTEGER) <> 0, run_at, " NOW " + $4),"
    " state = IIF(CAST($3 AS INTEGER) <> 0, " STATE("dead") ", " STATE("ready") "),"
    " last_error = $5, token = NULL, lease_until = NULL WHERE " HELD " RETURNING id",
  [SQLQ__SQL_RELEASE] =
    "UPDATE sqlq_jobs SET state = 'ready', attempts = maxvalue(attempts - 1, 0),"
    " run_at = " NOW " + $3, token = NULL, lease_until = NULL WHERE " HELD
    " RETURNING queue",
  [SQLQ__SQL_TOUCH] =
    "UPDATE sqlq_jobs SET lease_until = " NOW " + $3 WHERE " HELD " RETURNING lease_until",

  [SQLQ__SQL_NEXT_DUE] =
    "SELECT (SELECT paused FROM sqlq_queues WHERE queue = " QUEUE_PARAM("$1") "),"
    " (SELECT FIRST 1 j.run_at FROM sqlq_jobs j WHERE j.queue = " QUEUE_PARAM("$1")
    "  AND j.state = 'ready' AND " GROUP_HEAD " ORDER BY j.queue, j.state, j.run_at) - " NOW ","
    " (SELECT min(lease_until) FROM sqlq_jobs"
    "  WHERE queue = " QUEUE_PARAM("$1") " AND state = 'running') - " NOW
    " FROM RDB$DATABASE",
  [SQLQ__SQL_PAUSE_SET] =
    "UPDATE OR INSERT INTO sqlq_queues (queue, paused) VALUES ($1, $2) MATCHING (queue)",
  [SQLQ__SQL_STATS] =
    "SELECT queue, sum(ready), sum(scheduled), sum(running), sum(dead), max(paused)"
    " FROM (SELECT queue, IIF(state = 'ready' AND run_at <= c.now, 1, 0) AS ready,"
    "  IIF(state = 'ready' AND run_at > c.now, 1, 0) AS scheduled,"
    "  IIF(state = 'running', 1, 0) AS running, IIF(state = 'dead', 1, 0) AS dead,"
    "  0 AS paused FROM sqlq_jobs, (SELECT " NOW " AS now FROM RDB$DATABASE) c"
    "  WHERE " QUEUE_PARAM("$1") " IS NULL OR queue = " QUEUE_PARAM("$1")
    "  UNION ALL SELECT queue, 0, 0, 0, 0, paused FROM sqlq_queues"
    "  WHERE " QUEUE_PARAM("$1") " IS NULL OR queue = " QUEUE_PARAM("$1") ")"
    " GROUP BY queue ORDER BY queue",
  [SQLQ__SQL_LIST] =
    "SELECT * FROM (SELECT id, CASE state WHEN 'running' THEN 2 WHEN 'dead' THEN 3"
    "  ELSE IIF(run_at > " NOW ", 4, 1) END AS st,"
    " priority, attempts, max_attempts, run_at, created_at, lease_until,"
    " dedupe_key, group_key, last_error, payload"
    " FROM sqlq_jobs WHERE queue = " QUEUE_PARAM("$1") ") AS jobs"
    " WHERE CAST($2 AS INTEGER) = 0 OR st = CAST($2 AS INTEGER)"
    " ORDER BY priority DESC, run_at, id"
    " ROWS IIF(CAST($3 AS BIGINT) < 0, 9223372036854775807, CAST($3 AS BIGINT))",
  [SQLQ__SQL_RETRY_ID] =
    RETRY_SET " WHERE j.queue = $1 AND j.id = $2"
    " AND j.state IN ('dead','ready') AND " DEDUPE_FREE,
  [SQLQ__SQL_RETRY_DEAD] =
    RETRY_SET " WHERE j.queue = $1 AND j.state = 'dead' AND " DEDUPE_FREE
    " AND (j.dedupe_key IS NULL OR j.id = (SELECT min(d.id) FROM sqlq_jobs d"
    "  WHERE d.queue = j.queue AND d.dedupe_key = j.dedupe_key AND d.state = 'dead'))",
  [SQLQ__SQL_PURGE] = "DELETE FROM sqlq_jobs WHERE queue = $1",

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
    " IIF(" BYTES_TYPE("t") ", 1, 0),"
    " CASE WHEN " BYTES_TYPE("t") " THEN 'x'"
    "  WHEN t.RDB$FIELD_TYPE IN (7, 8, 10, 11, 16, 27) THEN 'n'"
    "  WHEN t.RDB$FIELD_TYPE = 23 THEN 'b'"
    "  WHEN t.RDB$FIELD_TYPE IN (14, 37, 261) THEN 's' ELSE 't' END,"
    " TRIM(TRAILING FROM f.RDB$RELATION_NAME)"
    " FROM RDB$RELATION_FIELDS f JOIN RDB$FIELDS t ON t.RDB$FIELD_NAME = f.RDB$FIELD_SOURCE"
    " WHERE f.RDB$RELATION_NAME = " RELATION_OF(NAME_PARAM("$1"))
    " ORDER BY f.RDB$FIELD_POSITION",
  [SQLQ__SQL_SUB_ADD] =
    "MERGE INTO sqlq_subscriptions s USING RDB$DATABASE"
    " ON s.table_name = " TABLE_PARAM("$1") " AND s.action = CAST($2 AS " TEXT(8) ")"
    " AND s.tag = " QUEUE_PARAM("$3")
    " WHEN MATCHED THEN UPDATE SET with_rows = CAST($4 AS SMALLINT)"
    " WHEN NOT MATCHED THEN INSERT (table_name, action, tag, with_rows, created_at)"
    " VALUES (" TABLE_PARAM("$1") ", CAST($2 AS " TEXT(8) "), " QUEUE_PARAM("$3") ","
    " CAST($4 AS SMALLINT), " NOW ")",
  /* The table's row of sqlq_sub_locks is made (and committed at once, by
  ** a statement of its own, whose insert changes() does not count) when
  ** missing, then locked until the transaction ends: the changes of one
  ** table's subscriptions take turns from here on (see sub_triggers in
  ** sqlq_int.h).  A sub-block's WHEN undoes nothing of the transaction. */
  [SQLQ__SQL_SUB_REMOVE] =
    "EXECUTE BLOCK (t " TEXT(63) " = $1, g " TEXT(128) " = $2) AS"
    " DECLARE k " TEXT(63) ";"
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
    " IIF(" RELATION_OF("t.d") " = t.RDB$RELATION_NAME, t.d, TRIM(TRAILING FROM t.RDB$RELATION_NAME))"
    " FROM (SELECT RDB$TRIGGER_NAME, RDB$RELATION_NAME,"
    "  CAST(SUBSTRING(RDB$DESCRIPTION FROM 1 FOR 63) AS VARCHAR(63) CHARACTER SET UTF8) AS d"
    "  FROM RDB$TRIGGERS WHERE RDB$TRIGGER_NAME STARTING WITH CAST($1 AS VARCHAR(31) CHARACTER SET UTF8)) t",

  /* The driver's own statements. */
  [FB_SQL_EVENT_NAME] =
    "SELECT 'sqlq_' || HASH(" "CAST($1 AS VARCHAR(200) CHARACTER SET OCTETS)) FROM RDB$DATABASE",
  [FB_SQL_POST] =
    "EXECUTE BLOCK (e VARCHAR(64) = $1) AS BEGIN POST_EVENT :e; END",
  [FB_SQL_LOCK_ROW] = NULL,
  [FB_SQL_LOCK_TAKE] = NULL,
};

/* Version 1: jobs, queues, history, and the triggers that keep claim_rank,
** fill the times in and post wake-ups.  docs/schema.md documents each
** column; docs/firebird.md the rest. */
static const char migration_1[] =
  "CREATE TABLE sqlq_jobs ("
  " id           BIGINT GENERATED BY DEFAULT AS IDENTITY NOT NULL PRIMARY KEY,"
  " queue        " TEXT(128) " NOT NULL,"
  " state        " TEXT(8) " DEFAULT 'ready' NOT NULL,"
  " priority     INTEGER DEFAULT 0 NOT NULL,"
  " run_at       BIGINT NOT NULL,"
  " attempts     INTEGER DEFAULT 0 NOT NULL,"
  " max_attempts INTEGER DEFAULT 25 NOT NULL,"
  " lease_until  BIGINT,"
  " token        BIGINT,"
  " dedupe_key   " TEXT(255) ","
  " group_key    " TEXT(255) ","
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
  "CREATE UNIQUE INDEX sqlq_jobs_dedupe ON sqlq_jobs COMPUTED BY " DEDUPE_EXPR FB_SEP
  "CREATE TRIGGER sqlq_jobs_set FOR sqlq_jobs ACTIVE BEFORE INSERT OR UPDATE POSITION 0 AS"
  " DECLARE now BIGINT;"
  " BEGIN"
  "  now = " NOW ";"
  "  IF (NEW.run_at IS NULL) THEN NEW.run_at = now;"
  "  IF (NEW.created_at IS NULL) THEN NEW.created_at = now;"
  "  NEW.claim_rank = -NEW.priority;"
  " END" FB_SEP
  "CREATE TRIGGER sqlq_jobs_wake FOR sqlq_jobs ACTIVE AFTER INSERT OR UPDATE POSITION 0 AS"
  " BEGIN"
  "  IF (NEW.state = 'ready' AND (INSERTING OR OLD.state <> 'ready' OR OLD.run_at <> NEW.run_at))"
  "  THEN POST_EVENT 'sqlq_' || HASH(NEW.queue);"
  " END" FB_SEP
  "CREATE TABLE sqlq_queues ("
  " queue  " TEXT(128) " NOT NULL PRIMARY KEY,"
  " paused SMALLINT DEFAULT 0 NOT NULL)" FB_SEP
  "CREATE TABLE sqlq_jobs_history ("
  " id           BIGINT NOT NULL PRIMARY KEY,"
  " queue        " TEXT(128) " NOT NULL,"
  " priority     INTEGER NOT NULL,"
  " attempts     INTEGER NOT NULL,"
  " max_attempts INTEGER NOT NULL,"
  " dedupe_key   " TEXT(255) ","
  " group_key    " TEXT(255) ","
  " payload      BLOB SUB_TYPE BINARY NOT NULL,"
  " created_at   BIGINT NOT NULL,"
  " finished_at  BIGINT NOT NULL)" FB_SEP
  /* Named locks: one row per lock ever taken, keyed by the name's hash;
  ** a holder keeps its row locked (firebird_lock.c). */
  "CREATE TABLE sqlq_locks ("
  " lock_key BIGINT NOT NULL PRIMARY KEY)";

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
  " table_name " TEXT(63) " NOT NULL,"
  " action     " TEXT(8) " NOT NULL,"
  " tag        " TEXT(128) " NOT NULL,"
  " with_rows  SMALLINT DEFAULT 0 NOT NULL,"
  " created_at BIGINT NOT NULL,"
  " CONSTRAINT sqlq_subscriptions_pk PRIMARY KEY (table_name, action, tag),"
  " CONSTRAINT sqlq_subscriptions_table CHECK (octet_length(table_name) BETWEEN 1 AND 63),"
  " CONSTRAINT sqlq_subscriptions_action CHECK (action IN ('insert','update','delete')),"
  " CONSTRAINT sqlq_subscriptions_tag CHECK (octet_length(tag) BETWEEN 1 AND 128))" FB_SEP
  "CREATE TRIGGER sqlq_subscriptions_set FOR sqlq_subscriptions ACTIVE BEFORE INSERT POSITION 0 AS"
  " BEGIN"
  "  IF (NEW.created_at IS NULL) THEN NEW.created_at = " NOW ";"
  " END" FB_SEP
  "CREATE TABLE sqlq_sub_locks ("
  " table_name " TEXT(63) " NOT NULL PRIMARY KEY)" FB_SEP
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
  " END" FB_SEP
  "CREATE FUNCTION sqlq_json_bytes (b BLOB SUB_TYPE BINARY)"
  " RETURNS BLOB SUB_TYPE TEXT CHARACTER SET UTF8 AS"
  " DECLARE n INTEGER;"
  " DECLARE i INTEGER = 1;"
  " DECLARE j INTEGER;"
  " DECLARE v INTEGER;"
  " DECLARE chunk " TEXT(1024) ";"
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
  " RETURNS " TEXT(255) " AS"
  " DECLARE b " TEXT(1020) ";"
  " DECLARE n INTEGER = 255;"
  " BEGIN"
  "  b = CAST(SUBSTRING(s FROM 1 FOR 255) AS VARCHAR(255) CHARACTER SET UTF8);"
  "  IF (OCTET_LENGTH(b) <= n) THEN RETURN b;"
  "  WHILE (n > 0 AND BIN_AND(ASCII_VAL(SUBSTRING(b FROM n + 1 FOR 1)), 192) = 128) DO n = n - 1;"
  "  RETURN SUBSTRING(b FROM 1 FOR n);"
  " END";

const char *const sqlq__firebird_migrations[SQLQ_SCHEMA_VERSION] = {
  migration_1,
  NULL, /* migration 2 (rings and pools) comes from branch fb-rings */
  migration_3,
};
