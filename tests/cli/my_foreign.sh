# tests/cli/my_foreign.sh -- a foreign producer: the mariadb client enqueues
# with a plain INSERT, in the same transaction as an application row, under
# the schema contract (docs/schema.md).
#
# A waiting `sqlq work` runs the job: a plain INSERT calls no wake-up, so
# the worker sees it when its wait statement looks again, within the
# wake interval (docs/mysql.md).  A transaction that rolls back leaves
# neither the application row nor a job.
#
# Needs SQLQ_TEST_MY_URL and SQLQ_TEST_MY_PORT (set by tests/CMakeLists.txt
# for the mariadb fixture) and the mariadb client.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ -n "${SQLQ_TEST_MY_URL:-}" ] || { echo "FAIL: SQLQ_TEST_MY_URL is not set"; exit 1; }
url=$SQLQ_TEST_MY_URL
q="foreign-$$"
orders="app_orders_$$"

sql() {
  mariadb --no-defaults -h 127.0.0.1 -P "$SQLQ_TEST_MY_PORT" -u sqlq -N -B sqlq "$@"
}

run "init" 0 sq init
run "app table" 0 sql -e "CREATE TABLE $orders (id INT AUTO_INCREMENT PRIMARY KEY, note TEXT NOT NULL) ENGINE=InnoDB"

"$SQLQ" --url "$url" work "$q" -- sh -c 'cat >> "$0"; echo >> "$0"' "$tmp/done" \
  >"$tmp/worker.log" 2>&1 &
worker=$!
bg_pids+=("$worker")

# Wait until the worker sleeps in its wait statement.
tries=0
until [ "$(sql -e "SELECT count(*) FROM information_schema.processlist
          WHERE info LIKE 'SELECT /*sqlq-wait:%'")" -ge 1 ]; do
  tries=$((tries + 1))
  [ "$tries" -lt 100 ] || { fail "the worker never went to sleep: $(cat "$tmp/worker.log")"; break; }
  sleep 0.1
done

run "committed insert" 0 sql <<SQL
START TRANSACTION;
INSERT INTO $orders (note) VALUES ('order 1');
INSERT INTO sqlq_jobs (queue, payload) VALUES ('$q', 'order 1');
COMMIT;
SQL
wait_for_file "$tmp/done" 20 || fail "the worker did not run the job of a plain INSERT"
expect_eq "payload of the foreign job" "$(cat "$tmp/done" 2>/dev/null)" "order 1"

run "rolled-back insert" 0 sql <<SQL
START TRANSACTION;
INSERT INTO $orders (note) VALUES ('order 2');
INSERT INTO sqlq_jobs (queue, payload) VALUES ('$q', 'order 2');
ROLLBACK;
SQL
# A later committed job shows the worker has looked at the queue since.
run "second committed insert" 0 sql <<SQL
START TRANSACTION;
INSERT INTO $orders (note) VALUES ('order 3');
INSERT INTO sqlq_jobs (queue, payload, priority) VALUES ('$q', 'order 3', 5);
COMMIT;
SQL
# Each job's command appends its payload and then a newline.
wait_for_lines "$tmp/done" 2
expect_eq "jobs run" "$(cat "$tmp/done" 2>/dev/null | tr '\n' ',')" "order 1,order 3,"
expect_eq "application rows" "$(sql -e "SELECT GROUP_CONCAT(note ORDER BY id) FROM $orders")" \
  "order 1,order 3"
run "stats" 0 sq stats --json "$q"
expect_out_has "the queue is empty" '"ready":0,"scheduled":0,"running":0,"dead":0'

# Bad input from the foreign side is refused by the schema, not stored.
run "empty queue name refused" 1 sql -e "INSERT INTO sqlq_jobs (queue) VALUES ('')"
run "unknown state refused" 1 sql -e "INSERT INTO sqlq_jobs (queue, state) VALUES ('$q', 'odd')"

# Jobs with the widest ids a plain INSERT can give (the claim writes them
# into the text of its UPDATE: a buffer 2 bytes short cut its COMMIT off).
run "jobs with the widest ids" 0 sql -e "INSERT INTO sqlq_jobs (id, queue, payload)
  VALUES (-9223372036854775808, '$q-wide', 'w1'), (-9223372036854775807, '$q-wide', 'w2')"
run "the widest ids are claimed and acked" 0 sq work --drain "$q-wide" -- sh -c 'cat >> "$0"' "$tmp/wide"
expect_eq "both jobs ran" "$(cat "$tmp/wide" 2>/dev/null)" "w1w2"

kill "$worker" 2>/dev/null
wait "$worker" 2>/dev/null
sql -e "DROP TABLE $orders"
sq purge "$q" >/dev/null
sq purge "$q-wide" >/dev/null
finish
