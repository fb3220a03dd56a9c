# tests/cli/fb_upgrade.sh -- a Firebird database of schema version 11 is
# upgraded by `sqlq init` to version 13 (claim lanes of version 12: the table sqlq_lanes,
# the sequence sqlq_rewinds, the triggers sqlq_jobs_lanes and sqlq_commit;
# the table sqlq_counts of version 13)
# with its jobs intact.  Before the upgrade a worker asked for lanes claims
# plainly; after it, the first claim by lanes records the lanes of the jobs
# that were there, and a plain-SQL INSERT records its job's; a late one
# counts a rewind.  A user who neither owns the database nor may ALTER it
# cannot upgrade it (the database trigger).  A newer schema is refused.  Runs on a database of its
# own (fb_database.bash); needs isql-fb.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fb_database.bash"

q="upgrade-$$"
sq() { "$SQLQ" --url "$url" "$@"; }
lanes() {
  fb_sql "SELECT CAST(queue AS VARCHAR(128) CHARACTER SET UTF8) || '	' || -claim_rank FROM sqlq_lanes WHERE queue <> '' ORDER BY queue, claim_rank"
}
# Undo versions 15, 14, 13 and 12.
undo_12() {
  fb_sql "DELETE FROM sqlq_schema WHERE version >= 14; DROP TABLE sqlq_counts; COMMIT; DELETE FROM sqlq_schema WHERE version = 13;
    DROP TRIGGER sqlq_commit; DROP TRIGGER sqlq_jobs_lanes; DROP TABLE sqlq_lanes;
    DROP SEQUENCE sqlq_rewinds; COMMIT; DELETE FROM sqlq_schema WHERE version = 12;" ||
    fail "undo version 12"
}

run "init" 0 sq init
expect_out "init makes version 15" "schema version 15"
undo_12
run "version 11" 0 fb_sql "SELECT max(version) FROM sqlq_schema"
expect_out "is what is left" "11"
run "a job on version 11" 0 sq push "$q" "from version 11"
run "a job at another priority" 0 sq push -p 7 "$q-p" "at priority 7"
sq push "$q-w" "worked on version 11" >/dev/null
run "a worker that asks for lanes claims plainly on version 11" 0 timeout 20 \
  "$SQLQ" --url "$url?lanes=on" work --drain "$q-w" -- true
expect_eq "and says nothing" "$(cat "$tmp/err")" ""

run "upgrade" 0 sq init
expect_out "the upgrade reaches version 15" "schema version 15"
run "upgrade again" 0 sq init
expect_out "again changes nothing" "schema version 15"
run "no lanes yet" 0 lanes
expect_out "before the first claim by lanes" ""
run "the jobs from version 11 run by lanes" 0 timeout 20 \
  "$SQLQ" --url "$url?lanes=on" work --drain "$q" -- true
run "the lanes after the first claim by lanes" 0 lanes
expect_out "are those of the jobs that were there" "$q	0
$q-p	7"
run "the job at priority 7 runs by lanes" 0 timeout 20 \
  "$SQLQ" --url "$url?lanes=on" work --drain "$q-p" -- true
run "a plain-SQL INSERT at a new priority" 0 \
  fb_sql "INSERT INTO sqlq_jobs (queue, priority, payload) VALUES ('$q-p', 3, 'plain SQL')"
run "the lanes after it" 0 lanes
expect_out "have its lane too" "$q	0
$q-p	7
$q-p	3"
run "rewinds" 0 fb_sql "SELECT GEN_ID(sqlq_rewinds, 0) FROM RDB\$DATABASE"
before=$(cat "$tmp/out")
run "a plain-SQL INSERT with a run_at long past" 0 \
  fb_sql "INSERT INTO sqlq_jobs (queue, run_at, payload) VALUES ('$q-p', 5, 'old')"
run "rewinds after it" 0 fb_sql "SELECT GEN_ID(sqlq_rewinds, 0) FROM RDB\$DATABASE"
expect_out "count one more" "$((before + 1))"
run "the plain-SQL jobs run by lanes" 0 timeout 20 \
  "$SQLQ" --url "$url?lanes=on" work --drain "$q-p" -- true
run "stats" 0 sq stats --json "$q-p"
expect_out_has "the queue is empty" '"ready":0,"scheduled":0,"running":0,"dead":0'

# A database that SYSDBA owns (tests/servers/firebird.sh: password
# sqlq-sysdba), at version 11, which user sqlq may use and change but not
# ALTER: the upgrade makes a database trigger, which takes the owner or
# ALTER DATABASE.  It fails (exit 70, as any error of the server that is
# not one sqlq names), says why in one line, and changes nothing;
# claims stay plain; with ALTER DATABASE granted it goes through.
own_database="${fb_database%.fdb}_sysdba.fdb"
own_url="${url%.fdb}_sysdba.fdb"
sysdba_url=${own_url/$fb_user:$fb_password@/SYSDBA:sqlq-sysdba@}
as_sysdba() {
  isql-fb -q -b -m -ch UTF8 -user SYSDBA -password sqlq-sysdba "$@" >/dev/null
}
drop_both() {
  fb_database_drop
  as_sysdba <<<"CONNECT '$own_database'; DROP DATABASE;" 2>/dev/null
}
trap drop_both EXIT
as_sysdba <<<"CREATE DATABASE '$own_database' PAGE_SIZE 16384 DEFAULT CHARACTER SET UTF8;" ||
  fail "create a database as SYSDBA"
run "init by the owner" 0 "$SQLQ" --url "$sysdba_url" init
as_sysdba "$own_database" <<SQL || fail "undo versions 13 and 12 as SYSDBA"
DROP TABLE sqlq_counts; COMMIT; DELETE FROM sqlq_schema WHERE version = 13;
DROP TRIGGER sqlq_commit; DROP TRIGGER sqlq_jobs_lanes; DROP TABLE sqlq_lanes;
DROP SEQUENCE sqlq_rewinds; COMMIT; DELETE FROM sqlq_schema WHERE version >= 12;
GRANT ALL ON sqlq_schema TO USER $fb_user; GRANT ALL ON sqlq_jobs TO USER $fb_user;
GRANT ALL ON sqlq_queues TO USER $fb_user; GRANT ALL ON sqlq_groups TO USER $fb_user;
GRANT ALL ON sqlq_rate_starts TO USER $fb_user;
GRANT CREATE TABLE TO USER $fb_user; GRANT CREATE SEQUENCE TO USER $fb_user;
GRANT ALTER ANY TABLE TO USER $fb_user;
SQL
own() { "$SQLQ" --url "$own_url" "$@"; }
run "a job on the database of SYSDBA" 0 own push "$q" "not the owner's"
run "an upgrade by a user who may not ALTER the database" 70 own init
expect_error_line "an upgrade by a user who may not ALTER the database"
expect_err_has "says why" "ALTER access to DATABASE"
expect_eq "the version stays 11" "$(isql-fb -q -b -m -user SYSDBA -password sqlq-sysdba "$own_database" \
  <<<"SET HEADING OFF; SELECT max(version) FROM sqlq_schema;" | tr -d ' \n')" "11"
run "claims by lanes stay plain at version 11" 0 timeout 20 \
  "$SQLQ" --url "$own_url?lanes=on" work --drain "$q" -- true
run "the job ran" 0 own stats --json "$q"
expect_out_has "the queue is empty" '"ready":0,"scheduled":0,"running":0,"dead":0'
as_sysdba "$own_database" <<<"GRANT ALTER DATABASE TO USER $fb_user;" || fail "grant ALTER DATABASE"
run "the upgrade with ALTER DATABASE" 0 own init
expect_out "reaches version 15" "schema version 15"

fb_sql "INSERT INTO sqlq_schema (version, applied_at) VALUES (16, 0)" || fail "set version 16"
run "a newer schema is refused" 69 sq init
expect_error_line "a newer schema is refused"
expect_err_has "the error names the versions" "version 16"
finish
