# tests/cli/pg_foreign.sh -- a foreign producer: psql enqueues with a plain
# INSERT, in the same transaction as an application row, under the schema
# contract (docs/schema.md).
#
# A waiting `sqlq work` runs the job: the insert trigger's NOTIFY wakes it,
# as the worker does not poll.  A transaction that rolls back leaves
# neither the application row nor a job.
#
# Needs SQLQ_TEST_PG_URL (set by tests/CMakeLists.txt for the postgres
# fixture) and psql.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ -n "${SQLQ_TEST_PG_URL:-}" ] || { echo "FAIL: SQLQ_TEST_PG_URL is not set"; exit 1; }
url=$SQLQ_TEST_PG_URL
q="foreign-$$"
orders="app_orders_$$"

psql_run() {
  psql -X -q -v ON_ERROR_STOP=1 "$url" "$@"
}

run "init" 0 sq init
run "app table" 0 psql_run -c "CREATE TABLE $orders (id serial PRIMARY KEY, note text NOT NULL)"

"$SQLQ" --url "$url" work "$q" -- sh -c 'cat >> "$0"; echo >> "$0"' "$tmp/done" \
  >"$tmp/worker.log" 2>&1 &
worker=$!
bg_pids+=("$worker")

# Wait until the worker sleeps in sqlq_wait(): its session's last statement
# is the look at when the next job is due.
tries=0
until [ "$(psql_run -At -c "SELECT count(*) FROM pg_stat_activity
          WHERE state = 'idle' AND query LIKE 'SELECT (SELECT paused FROM sqlq_queues%'")" -ge 1 ]; do
  tries=$((tries + 1))
  [ "$tries" -lt 100 ] || { fail "the worker never went to sleep: $(cat "$tmp/worker.log")"; break; }
  sleep 0.1
done

run "committed insert" 0 psql_run <<SQL
BEGIN;
INSERT INTO $orders (note) VALUES ('order 1');
INSERT INTO sqlq_jobs (queue, payload) VALUES ('$q', convert_to('order 1', 'UTF8'));
COMMIT;
SQL
wait_for_file "$tmp/done" 10 || fail "the worker did not run the job of a plain INSERT"
expect_eq "payload of the foreign job" "$(cat "$tmp/done" 2>/dev/null)" "order 1"

run "rolled-back insert" 0 psql_run <<SQL
BEGIN;
INSERT INTO $orders (note) VALUES ('order 2');
INSERT INTO sqlq_jobs (queue, payload) VALUES ('$q', convert_to('order 2', 'UTF8'));
ROLLBACK;
SQL
# A later committed job shows the worker has looked at the queue since.
run "second committed insert" 0 psql_run <<SQL
BEGIN;
INSERT INTO $orders (note) VALUES ('order 3');
INSERT INTO sqlq_jobs (queue, payload, priority) VALUES ('$q', convert_to('order 3', 'UTF8'), 5);
COMMIT;
SQL
# Each job's command appends its payload and then a newline.
wait_for_lines "$tmp/done" 2
expect_eq "jobs run" "$(cat "$tmp/done" 2>/dev/null | tr '\n' ',')" "order 1,order 3,"
expect_eq "application rows" "$(psql_run -At -c "SELECT string_agg(note, ',' ORDER BY id) FROM $orders")" \
  "order 1,order 3"
run "stats" 0 sq stats --json "$q"
expect_out_has "the queue is empty" '"ready":0,"scheduled":0,"running":0,"dead":0'

# Bad input from the foreign side is refused by the schema, not stored.
run "empty queue name refused" 1 psql_run -c "INSERT INTO sqlq_jobs (queue) VALUES ('')"
run "unknown state refused" 1 psql_run -c "INSERT INTO sqlq_jobs (queue, state) VALUES ('$q', 'odd')"

kill "$worker" 2>/dev/null
wait "$worker" 2>/dev/null
psql_run -c "DROP TABLE $orders"
sq purge "$q" >/dev/null
finish
