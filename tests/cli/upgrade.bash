# tests/cli/upgrade.bash -- the body of the schema upgrade tests, sourced by
# upgrade.sh (SQLite), pg_upgrade.sh (PostgreSQL) and my_upgrade.sh
# (MariaDB) after lib.sh, with
#   $url          the database
#   sql           a function that runs the SQL text $1 on it
#   undo_15       (optional) a function that turns a database of the
#                 current version into version 14 by undoing what migration
#                 15 does (default: drop the index sqlq_jobs_dead, forget the
#                 version)
#   undo_14       (optional) a function that turns a database of version
#                 14 into version 13 by undoing what migration
#                 14 does (default: drop sqlq_leases where it is, forget the
#                 version)
#   undo_13       (optional) a function that turns a database of version
#                 13 into version 12 by undoing what migration 13 does
#                 (default: drop sqlq_counts, forget the version)
#   undo_12       (optional) a function that turns a database of version
#                 12 into version 11 by undoing what migration
#                 12 does (default: forget the version, where it adds nothing)
#   undo_11       a function that turns a database of version 11 into
#                 version 10 by undoing what migration 11 does
#   undo_10       a function that turns a database of version 10 into
#                 version 9 by undoing what migration 10 does
#   downgrade     a function that turns a database of version 11 into
#                 version 1 by undoing what migrations 2 to 11 do
#                 (migration 1 is as it was, so this is the schema a
#                 version 1 sqlq made)
#   lanes         on the backends with claim lanes (version 11) only: a
#                 function that prints the rows of sqlq_lanes in key
#                 order, a tab between queue and priority
# On version 9, rate and concurrency limits work, with claims and waits of
# the statements of that version, and per-group limits and fair queues
# need the upgrade.
# A job of version 1 survives the upgrade; rings, pools, subscriptions,
# schedules, retention, concurrency and rate limits, dependencies,
# cancellation, per-group limits and fair queues work after it,
# and a worker keeping history works before it (without pruning), its
# claims without the limits' column.  Where there are claim lanes, the
# upgrade records the lanes of the jobs already there, and a plain-SQL
# INSERT after it records its job's.

set_version() {
  sql "INSERT INTO sqlq_schema (version, applied_at) VALUES ($1, 0)"
}
unset_version() {
  sql "DELETE FROM sqlq_schema WHERE version = $1"
}
if ! declare -F undo_12 >/dev/null; then
  undo_12() { unset_version 12; }
fi
if ! declare -F undo_15 >/dev/null; then
  undo_15() {
    sql "DROP INDEX IF EXISTS sqlq_jobs_dead"
    unset_version 15
  }
fi
if ! declare -F undo_14 >/dev/null; then
  undo_14() {
    sql "DROP TABLE IF EXISTS sqlq_leases"
    unset_version 14
  }
fi
if ! declare -F undo_13 >/dev/null; then
  undo_13() {
    sql "DROP TABLE sqlq_counts"
    unset_version 13
  }
fi

q="upgrade-$$"
case $url in
*\?*) hurl="$url&history=1" ;;
*) hurl="$url?history=1" ;;
esac
run "init" 0 sq init
expect_out "init makes version 15" "schema version 15"
run "push a job" 0 sq push "$q" "from version 1"
undo_15
undo_14
undo_13
undo_12
downgrade

run "stats on version 1" 0 sq stats --json "$q"
expect_out "the job is there" "{\"queues\":[{\"queue\":\"$q\",\"ready\":1,\"scheduled\":0,\"running\":0,\"dead\":0,\"paused\":false}]}"
run "rings need the upgrade" 69 sq ring create "$q" 5
expect_error_line "rings need the upgrade"
expect_err_has "the error says what to do" "run \`sqlq init\`"
run "pools need the upgrade" 69 sq pool add "$q" item
expect_error_line "pools need the upgrade"
run "subscriptions need the upgrade" 69 sq subscriptions
expect_error_line "subscriptions need the upgrade"
run "schedules need the upgrade" 69 sq cron list
expect_error_line "schedules need the upgrade"
run "retention needs the upgrade" 69 sq retention --keep 1d "$q"
expect_error_line "retention needs the upgrade"
expect_err_has "retention: the error says what to do" "run \`sqlq init\`"
run "limits need the upgrade" 69 sq limit --concurrency 1 "$q"
expect_error_line "limits need the upgrade"
expect_err_has "limits: the error says what to do" "run \`sqlq init\`"
run "rate limits need the upgrade" 69 sq limit --rate 1/1s "$q"
expect_error_line "rate limits need the upgrade"
expect_err_has "rate limits: the error says what to do" "run \`sqlq init\`"
run "per-group limits need the upgrade" 69 sq limit --per-group 2 "$q"
expect_error_line "per-group limits need the upgrade"
run "fair queues need the upgrade" 69 sq limit --fair "$q"
expect_error_line "fair queues need the upgrade"
run "dependencies need the upgrade" 69 sq push --after 1 "$q" x
expect_error_line "dependencies need the upgrade"
expect_err_has "dependencies: the error says what to do" "run \`sqlq init\`"
run "cancellation needs the upgrade" 69 sq cancel 1
expect_error_line "cancellation needs the upgrade"
expect_err_has "cancel: the error says what to do" "run \`sqlq init\`"
sq push "$q-h" "kept in history" >/dev/null
run "a worker keeping history works on version 1" 0 timeout 20 "$SQLQ" --url "$hurl" work --drain "$q-h" -- true
expect_eq "and says nothing" "$(cat "$tmp/err")" ""
run "a job at another priority on version 1" 0 sq push -p 7 "$q-p" "at priority 7"

run "upgrade" 0 sq init
expect_out "the upgrade reaches version 15" "schema version 15"
run "upgrade again" 0 sq init
expect_out "again changes nothing" "schema version 15"
run "the job survived" 0 sq jobs --json "$q"
expect_eq "its payload" "$(grep -o '"payload":"[^"]*"' "$tmp/out")" '"payload":"from version 1"'
expect_eq "its id" "$(grep -o '"id":[0-9]*' "$tmp/out")" '"id":1'
run "a job after the upgrade" 0 sq push "$q" "from version 5"
expect_out "gets the next id (the history worker's job took 2, the job at priority 7 took 3)" "4"
if declare -F lanes >/dev/null; then
  run "the lanes after the upgrade" 0 lanes
  expect_out "are those of the jobs there (the history worker's job is gone)" "$q	0
$q-p	7"
  sql "INSERT INTO sqlq_jobs (queue, priority, payload) VALUES ('$q-p', 3, 'plain SQL')"
  run "the lanes after a plain-SQL INSERT at a new priority" 0 lanes
  expect_out "have its lane too" "$q	0
$q-p	3
$q-p	7"
fi
sq purge "$q-p" >/dev/null
run "subscriptions after the upgrade" 0 sq subscriptions
expect_out "none yet" "table  tag  on  rows  status"
run "a schedule after the upgrade" 0 sq cron add "$q" '@every 1h' "$q"
run "cron remove" 0 sq cron remove "$q"
run "ring create" 0 sq ring create "$q" 5
run "ring push" 0 sq ring push "$q" entry
expect_out "the first entry" "1"
run "pool add" 0 sq pool add "$q" item
run "pool next" 0 sq pool next "$q"
expect_out "the item" "item"
run "retention after the upgrade" 0 sq retention --keep-count 1 --json "$q-h"
expect_out "is set" "{\"queue\":\"$q-h\",\"keep_seconds\":null,\"keep_count\":1}"
run "a limit after the upgrade" 0 sq limit --concurrency 1 --json "$q-h"
expect_out "is set" "{\"queue\":\"$q-h\",\"concurrency\":1,\"rate\":null,\"per_group\":1,\"fair\":false}"
run "a rate after the upgrade" 0 sq limit --rate 10/1s --json "$q-h"
expect_out "the rate is set" \
  "{\"queue\":\"$q-h\",\"concurrency\":1,\"rate\":{\"max_starts\":10,\"period_us\":1000000},\"per_group\":1,\"fair\":false}"
run "a per-group limit and fairness after the upgrade" 0 sq limit --per-group 2 --fair --json "$q-h"
expect_out "they are set" \
  "{\"queue\":\"$q-h\",\"concurrency\":1,\"rate\":{\"max_starts\":10,\"period_us\":1000000},\"per_group\":2,\"fair\":true}"
sq push "$q-h" "under the limit" >/dev/null
run "a worker claims under it" 0 timeout 20 "$SQLQ" --url "$url" work --drain "$q-h" -- true
sq limit --concurrency 0 --rate 0 --per-group 1 --no-fair "$q-h" >/dev/null
run "history from version 1 is listed" 0 sq jobs --state done --json "$q-h"
expect_out_has "the job" '"payload":"kept in history"'
run "a job after the first after the upgrade" 0 sq push --after 1 "$q-d" "after 1"
run "it waits" 0 sq jobs --state waiting --json "$q-d"
expect_out_has "waiting" '"state":"waiting"'
run "the first runs" 0 timeout 20 "$SQLQ" --url "$url" work --drain "$q" -- true
run "then the one after it is ready" 0 sq jobs --json "$q-d"
expect_out_has "ready" '"state":"ready"'
sq purge "$q-d" >/dev/null
cid=$(sq push "$q-c" "to cancel")
run "a cancel after the upgrade" 0 sq cancel "$cid"
expect_out "cancels the job" "1 jobs cancelled"
sq purge "$q-c" >/dev/null
sq push "$q" "from version 6" >/dev/null
sq retention --keep-count 0 "$q-h" >/dev/null
sq ring drop "$q" >/dev/null
sq pool remove "$q" item >/dev/null
sq purge "$q" >/dev/null

undo_15
undo_14
undo_13
undo_12
undo_11
undo_10
run "limits on version 9" 0 sq limit -j -c 2 -r 10/1s "$q-9"
expect_out "show no per-group limit and no fairness" \
  "{\"queue\":\"$q-9\",\"concurrency\":2,\"rate\":{\"max_starts\":10,\"period_us\":1000000},\"per_group\":1,\"fair\":false}"
run "per-group limits need version 10" 69 sq limit --per-group 2 "$q-9"
expect_error_line "per-group limits need version 10"
expect_err_has "per-group limits: the error says what to do" "run \`sqlq init\`"
run "fair queues need version 10" 69 sq limit --fair "$q-9"
expect_error_line "fair queues need version 10"
sq push --group g "$q-9" "one" >/dev/null
sq push --group g "$q-9" "two" >/dev/null
run "a worker claims under both limits on version 9" 0 timeout 20 "$SQLQ" --url "$url" work --drain "$q-9" -- true
run "and drains the queue" 0 sq stats --json "$q-9"
expect_out_has "drained" '"ready":0,"scheduled":0,"running":0'
run "back to version 15" 0 sq init
expect_out "back to version 15" "schema version 15"
sq limit -c 0 -r 0 "$q-9" >/dev/null

# Counts (version 13): a worker on version 12 writes none and says
# nothing of them; after the upgrade it works as before.
undo_15
undo_14
undo_13
sq push "$q-n" "on version 12" >/dev/null
run "a worker on version 12" 0 timeout 20 "$SQLQ" --url "$url" work --drain "$q-n" -- true
expect_eq "says nothing of counts" "$(cat "$tmp/err")" ""
run "and drains the queue on version 12" 0 sq stats --json "$q-n"
expect_out_has "drained on version 12" '"ready":0,"scheduled":0,"running":0,"dead":0'
run "up to version 15" 0 sq init
expect_out "up to version 15" "schema version 15"
sq push "$q-n" "on version 15" >/dev/null
run "a worker on version 15" 0 timeout 20 "$SQLQ" --url "$url" work --drain "$q-n" -- true
expect_eq "says nothing either" "$(cat "$tmp/err")" ""

set_version 16
run "a newer schema is refused" 69 sq init
expect_error_line "a newer schema is refused"
expect_err_has "the error names the versions" "version 16"
unset_version 16
run "init after the newer one is gone" 0 sq init

finish
