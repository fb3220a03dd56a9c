# tests/cli/health.sh -- sqlq stats' health on SQLite: a reader process
# holding a read transaction keeps the checkpoint from the WAL's frames
# written after it began (checkpoint_starved_frames grows, its holder is
# the reader's pid); and --warn garbage.  Needs sqlite3.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/health.bash"

db_file=$tmp/t.db
sq init >/dev/null
sq push health-q first >/dev/null

run "stats without a queue has the health" 0 sq stats
expect_out_has "wal_bytes" "wal_bytes"
expect_out_has "checkpoint_starved_frames" "checkpoint_starved_frames"
expect_out_has "database_bytes" "database_bytes"
run "stats --json has the health under its key" 0 sq stats --json
expect_out_has "the queues come first" '{"queues":[{"queue":"health-q"'
expect_out_has "then the health" '],"health":[{"name":"wal_bytes","value":'
run "stats of a queue has no health" 0 sq stats --json health-q
expect_out "only the queue" '{"queues":[{"queue":"health-q","ready":1,"scheduled":0,"running":0,"dead":0,"paused":false}]}'
run "nothing over its threshold: no warning" 0 sq stats
expect_eq "stderr is empty" "$(cat "$tmp/err")" ""

# --warn garbage: 64 and one line.
for bad in "" x "=1" "x=" "x=-1" "x=1.5" "x=abc" "X=1" "x y=1" "x=99999999999999999999"; do
  run "--warn '$bad'" 64 sq stats --warn "$bad"
  expect_error_line "--warn '$bad'"
done
run "--warn with a queue" 64 sq stats --warn wal_bytes=1 health-q
expect_error_line "--warn with a queue"
run "--warn without its value" 64 sq stats --warn
expect_error_line "--warn without its value"

hold_client() { exec sqlite3 "$db_file"; }
hold_sql="BEGIN; SELECT count(*) FROM sqlq_jobs;"
item=checkpoint_starved_frames
hold_start
health_check "^pid $hold_pid\$"

finish
