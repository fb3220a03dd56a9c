# tests/cli/cron.sh -- `sqlq cron`: schedules added, listed (as a table and
# as JSON), paused, resumed and removed; `cron run --once` and `cron run`
# until SIGTERM enqueue their ticks, and so does every `sqlq work` unless
# --no-cron; bad specs, zones, policies and arguments get one line and
# exit 64 (65 for a schedule that is not there) and change nothing.
# Needs the sqlite3 shell.
. "$(dirname "$0")/lib.sh"

sq init >/dev/null
db_file=$tmp/t.db

run "add" 0 sq cron add nightly '30 2 * * MON-FRI' reports '{"k":1}' --tz Europe/Paris --missed 3
run "add without a payload" 0 sq cron add --missed all tick '@every 1h' q
run "list" 0 sq cron list
mask_times
expect_out "the table" "name     spec              zone          queue    missed  next                  last
nightly  30 2 * * MON-FRI  Europe/Paris  reports  3       TIME  -
tick     @every 1h         UTC           q        all     TIME  -"
run "list --json" 0 sq cron list --json
mask_times
expect_out "the JSON" '[{"name":"nightly","spec":"30 2 * * MON-FRI","zone":"Europe/Paris","queue":"reports","payload":"{\"k\":1}","missed":"3","paused":false,"next":"TIME","last":null},{"name":"tick","spec":"@every 1h","zone":"UTC","queue":"q","payload":"","missed":"all","paused":false,"next":"TIME","last":null}]'
run "next tick in Paris" 0 sq cron list --json
expect_out_has "02:30 in Paris is 01:30 UTC in winter" 'T01:30:00Z'
run "replace" 0 sq cron add tick '@every 2h' q
run "pause" 0 sq cron pause tick
run "list paused" 0 sq cron list
expect_out_has "paused" "tick     @every 2h         UTC           q        skip    paused"
run "resume" 0 sq cron resume tick
run "remove" 0 sq cron remove tick
run "list after remove" 0 sq cron list --json
expect_out_has "one left" '"name":"nightly"'
expect_eq "tick is gone" "$(grep -c '"name":"tick"' "$tmp/out")" "0"

# Bad input: one line, exit 64, nothing changed.
baseline=$(sq cron list --json)
bad() {
  local name=$1
  run "$@"
  expect_error_line "$name"
  expect_eq "$name: schedules intact" "$(sq cron list --json)" "$baseline"
}
bad "a spec of four fields" 64 sq cron add x '* * * *' q
expect_err_has "it says why" "five fields"
bad "a minute out of range" 64 sq cron add x '61 * * * *' q
bad "a backwards range" 64 sq cron add x '5-1 * * * *' q
bad "an unknown name" 64 sq cron add x '* * * FOO *' q
bad "a spec that never ticks" 64 sq cron add x '0 0 30 2 *' q
expect_err_has "it says so" "never ticks"
bad "a bad interval" 64 sq cron add x '@every 10y' q
bad "an unknown macro" 64 sq cron add x '@reboot' q
bad "an empty spec" 64 sq cron add x '' q
bad "a zone that does not exist" 64 sq cron add x '* * * * *' q --tz Mars/Olympus
expect_err_has "the zone is named" "Mars/Olympus"
bad "a zone outside the database" 64 sq cron add x '* * * * *' q --tz ../../../etc/passwd
bad "a bad policy" 64 sq cron add x '* * * * *' q --missed sometimes
bad "a zero policy" 64 sq cron add x '* * * * *' q --missed 0
bad "a policy too big" 64 sq cron add x '* * * * *' q --missed 1001
bad "a negative policy" 64 sq cron add x '* * * * *' q --missed -1
bad "a bad queue name" 64 sq cron add x '* * * * *' ''
bad "an empty name" 64 sq cron add '' '* * * * *' q
bad "too few arguments" 64 sq cron add x '* * * * *'
bad "too many arguments" 64 sq cron add x '* * * * *' q p extra
bad "--tz without a value" 64 sq cron add x '* * * * *' q --tz
bad "a flag of another subcommand" 64 sq cron list --tz UTC
bad "list takes no arguments" 64 sq cron list x
bad "an unknown subcommand" 64 sq cron frob
bad "no subcommand" 64 sq cron
bad "remove without a name" 64 sq cron remove
bad "run takes no arguments" 64 sq cron run x
bad "remove a schedule that is not there" 65 sq cron remove nope
bad "pause a schedule that is not there" 65 sq cron pause nope
bad "resume a schedule that is not there" 65 sq cron resume nope

# run --once: ticks of a second come; one job per tick.
sq cron add every-second '@every 1s' sec >/dev/null
tries=100
until [ "$(sq stats --json sec | grep -o '"ready":[0-9]*')" = '"ready":1' ] || [ $tries -le 0 ]; do
  sq cron run --once >/dev/null
  tries=$((tries - 1))
  sleep 0.1
done
expect_eq "run --once enqueued a tick's job" "$(sq stats --json sec | grep -o '"ready":[0-9]*')" '"ready":1'
run "the job's dedupe key names the schedule" 0 sq jobs --json sec
expect_out_has "the key" '"dedupe_key":"cron:every-second:'

# A schedule whose next tick is long past: run --once enqueues what its
# policy says (once: one job), and prints how many.
sq cron add late '@every 1h' late --missed once >/dev/null
sqlite3 "$db_file" "UPDATE sqlq_schedules SET next_run = 3600000000 WHERE name = 'late'" ||
  fail "sqlite3"
run "run --once" 0 sq cron run --once
expect_eq "at least the late tick" "$([ "$(cat "$tmp/out")" -ge 1 ] && echo yes)" "yes"
run "one job for the missed ticks" 0 sq stats --json late
expect_out_has "one" '"ready":1,'

# work --no-cron runs no pass: the overdue schedule stays as it is.
sq cron add overdue '@every 1h' overdue --missed once >/dev/null
sqlite3 "$db_file" "UPDATE sqlq_schedules SET next_run = 3600000000 WHERE name = 'overdue'" ||
  fail "sqlite3"
run "work --no-cron" 0 sq work --no-cron --drain empty -- true
run "no job" 0 sq stats --json overdue
expect_out_has "nothing enqueued" '"ready":0,'
expect_eq "the schedule did not move" \
  "$(sqlite3 "$db_file" "SELECT next_run FROM sqlq_schedules WHERE name = 'overdue'")" "3600000000"
sq cron remove overdue >/dev/null

# cron run until SIGTERM, then exit 0.
sq purge sec >/dev/null
"$SQLQ" --url "$url" cron run 2>"$tmp/run.err" &
pid=$!
tries=200
until [ "$(sq stats --json sec | grep -o '"ready":[0-9]*')" != '"ready":0' ] &&
  [ -n "$(sq stats --json sec | grep -o '"ready":[1-9]')" ] || [ $tries -le 0 ]; do
  tries=$((tries - 1))
  sleep 0.1
done
expect_eq "cron run enqueued ticks" "$([ $tries -gt 0 ] && echo yes)" "yes"
kill -TERM "$pid"
wait "$pid"
expect_eq "cron run exits 0 on SIGTERM" "$?" "0"
expect_eq "cron run said nothing" "$(cat "$tmp/run.err")" ""

# Every worker runs the passes: the schedule's jobs run.
sq cron add work-tick '@every 1s' wq tick >/dev/null
"$SQLQ" --url "$url" work wq -- sh -c "cat >> '$tmp/ran'; echo >> '$tmp/ran'" 2>"$tmp/work.err" &
pid=$!
wait_for_lines "$tmp/ran" 2
expect_eq "the worker ran the ticks' jobs" "$(head -n 1 "$tmp/ran")" "tick"
kill -TERM "$pid"
wait "$pid"
expect_eq "work exits 0 on SIGTERM" "$?" "0"
expect_eq "work said nothing" "$(cat "$tmp/work.err")" ""

finish
