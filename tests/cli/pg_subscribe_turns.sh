# tests/cli/pg_subscribe_turns.sh -- concurrent changes to the
# subscriptions of one PostgreSQL table take turns, so that none rebuilds
# the table's triggers from a list of actions that lacks another's.
#
# A psql session holds the table's ACCESS EXCLUSIVE lock for two seconds,
# so that two `sqlq subscribe`s (or a subscribe and an unsubscribe) started
# meanwhile both get as far as they can before the other commits.  Without
# the advisory lock of postgres_sql.c (SUB_TABLE_LOCK), the second one
# dropped the first one's new trigger.  Runs on a database of its own
# (pg_database.bash); needs psql.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg_database.bash"

# hold_table SECONDS: lock the table race in the background for SECONDS.
hold_table() {
  pg_sql "BEGIN; LOCK TABLE race IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep($1); COMMIT" \
    >/dev/null &
  bg_pids+=("$!")
  local tries=50
  until [ "$(pg_sql "SELECT count(*) FROM pg_locks WHERE relation = 'race'::regclass
              AND mode = 'AccessExclusiveLock' AND granted")" = 1 ] || [ "$tries" -le 0 ]; do
    tries=$((tries - 1))
    sleep 0.05
  done
}

# triggers: the suffixes of the table's subscription triggers, sorted.
triggers() {
  pg_sql "SELECT string_agg(right(tgname, 1), ',' ORDER BY right(tgname, 1))
          FROM pg_trigger WHERE tgrelid = 'race'::regclass AND tgname LIKE 'sqlq\_sub\_%'"
}

sq init >/dev/null
pg_sql "CREATE TABLE race (id integer PRIMARY KEY)"
run "a first subscription" 0 sq subscribe race --on insert,update --tag tag0

hold_table 2
sq subscribe race --on delete --tag tag1 >"$tmp/a.out" 2>&1 &
first=$!
sleep 0.3
run "a second subscribe while the first waits" 0 sq subscribe race --on insert --tag tag2
wait "$first"
expect_eq "the first subscribe" "$?" 0
expect_eq "every action has its trigger" "$(triggers)" "d,i,u"
run "subscriptions" 0 sq subscriptions
expect_eq "all active" "$(grep -c ' active$' "$tmp/out")" 3

hold_table 2
sq unsubscribe race --tag tag1 >"$tmp/a.out" 2>&1 &
first=$!
sleep 0.3
run "a subscribe beside an unsubscribe of the same tag" 0 \
  sq subscribe race --on update --tag tag1
wait "$first"
expect_eq "the unsubscribe" "$?" 0
expect_eq "the delete trigger went with its last subscriber" "$(triggers)" "i,u"
run "subscriptions" 0 sq subscriptions
expect_eq "every subscription is active (only the header line is not)" "$(grep -vc ' active$' "$tmp/out")" 1

pg_sql "INSERT INTO race (id) VALUES (1); UPDATE race SET id = 2; DELETE FROM race"
expect_eq "the events" "$(pg_sql "SELECT string_agg(queue || ':' || \
  (convert_from(payload, 'UTF8')::json ->> 'action'), ' ' ORDER BY id) FROM sqlq_jobs")" \
  "tag0:insert tag2:insert tag0:update$( [ "$(pg_sql "SELECT count(*) FROM sqlq_subscriptions WHERE tag = 'tag1'")" = 1 ] && echo ' tag1:update')"

finish
