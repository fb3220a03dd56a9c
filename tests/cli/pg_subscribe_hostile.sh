# tests/cli/pg_subscribe_hostile.sh -- subscriptions to a PostgreSQL table
# whose own name and column names are hostile, written by a role that has
# only the rights the trigger needs on sqlq's tables and whose session
# tries to mislead the trigger.
#
# - The table's name holds quotes, a backslash, SQL and the dollar-quote tag
#   of the function's body; a key column's name holds quotes, a backslash,
#   "$$", a newline, a control character and non-ASCII text.  `sqlq
#   subscribe` and the writer run with standard_conforming_strings off.
#   The events must name the table and columns exactly, and nothing else
#   may happen.
# - The writer (role sqlq_writer, tests/servers/postgres.sh) may write the
#   table, and only insert into sqlq_jobs and read sqlq_subscriptions (the
#   trigger runs as the writer), sets bytea_output = escape and
#   standard_conforming_strings off (the function's body is compiled in
#   the writer's session), and has
#   temporary tables named sqlq_jobs and sqlq_subscriptions first on its
#   search_path: the events still go to sqlq's queue, with bytea as "\\x"
#   hex.
# - The last unsubscribe leaves no function and no trigger behind.
#
# Runs on a database of its own (pg_database.bash); needs psql and python3.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg_database.bash"

table=$'ev\'il"$sqlq_body0$\\x\'); DROP TABLE bystander; --'
column=$'k"e\'y\\$$\n\x01é'
export table column

# psql_as ROLE [PSQL ARGS...]: psql on the test database as ROLE, with the
# table and column names as the variables t and c (:"t" quotes them).
psql_as() {
  local role=$1
  shift
  psql -X -q -At -v ON_ERROR_STOP=1 -v t="$table" -v c="$column" \
    "${url/:\/\/sqlq@/://$role@}" "$@"
}

run "init" 0 sq init
run "tables" 0 psql_as sqlq <<'SQL'
CREATE TABLE bystander (id int PRIMARY KEY);
CREATE TABLE :"t" (:"c" text, "$sqlq_body0$" int, data bytea, PRIMARY KEY (:"c", "$sqlq_body0$"));
GRANT INSERT, UPDATE, DELETE, SELECT ON :"t" TO sqlq_writer;
GRANT INSERT ON sqlq_jobs TO sqlq_writer;
GRANT SELECT ON sqlq_subscriptions TO sqlq_writer;
SQL
PGOPTIONS="-c standard_conforming_strings=off" \
  run "subscribe with standard_conforming_strings off" 0 \
  sq subscribe "$table" --on insert,update,delete --tag hostile --rows
run "subscriptions" 0 sq subscriptions --json
expect_out_has "the subscription is active" '"status":"active"'

run "the writer" 0 psql_as sqlq_writer <<'SQL'
SET bytea_output = escape;
SET standard_conforming_strings = off;
CREATE TEMP TABLE sqlq_jobs (queue text, group_key text, payload bytea);
CREATE TEMP TABLE sqlq_subscriptions (table_name text, action text, tag text, with_rows boolean);
SET search_path = pg_temp, public;
BEGIN;
INSERT INTO public.:"t" VALUES (E'v\'"\\\n☃', 3, decode('00ff', 'hex'));
UPDATE public.:"t" SET "$sqlq_body0$" = 4;
DELETE FROM public.:"t";
COMMIT;
SELECT count(*) FROM pg_temp.sqlq_jobs;
SQL
expect_out "the writer's own sqlq_jobs got nothing" 0
run "the writer may not read sqlq's jobs" 1 psql_as sqlq_writer -c "SELECT count(*) FROM public.sqlq_jobs"
expect_err_has "permission denied" "permission denied"

run "jobs" 0 sq jobs --json hostile
expect_eq "the events" "$(python3 -c '
import json, os, sys
table, column = os.environ["table"], os.environ["column"]
value = "v'"'"'\"\\\n☃"
row = lambda n: {column: value, "$sqlq_body0$": n, "data": "\\x00ff"}
want = [("insert", 3, {"new": row(3)}), ("update", 4, {"new": row(4), "old": row(3)}),
        ("delete", 4, {"old": row(4)})]
jobs = sorted(json.load(sys.stdin), key=lambda j: j["id"])
for job, (action, n, images) in zip(jobs, want):
    p = json.loads(job["payload"])
    p.pop("at")
    w = {"table": table, "action": action, "pk": {column: value, "$sqlq_body0$": n}, **images}
    print("ok" if p == w else "got %r, expected %r" % (p, w))
print(len(jobs))' <"$tmp/out")" "ok
ok
ok
3"
expect_eq "the bystander is intact" "$(psql_as sqlq -c "SELECT count(*) FROM bystander")" 0

run "unsubscribe" 0 sq unsubscribe "$table" --tag hostile
expect_eq "no function or trigger is left" "$(psql_as sqlq -c "
  SELECT (SELECT count(*) FROM pg_proc WHERE proname LIKE 'sqlq\_sub\_%')
       + (SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'sqlq\_sub\_%')")" 0

finish
