# tests/cli/fb_wake.sh -- a waiting `sqlq work` on Firebird wakes by event
# (POST_EVENT, isc_que_events), not by looking again:
#   - a job that isql-fb inserts with plain SQL, committed (the insert
#     trigger's event); a rolled-back insert runs nothing;
#   - a job that `sqlq push` enqueues from another process;
#   - `sqlq resume` of a paused queue (the trigger on sqlq_queues);
#   - the end of the head of a FIFO group (the delete trigger): a job held
#     by a foreign "worker" (plain SQL) is deleted, and the next job of its
#     group runs.
#
# The worker's URL says poll_interval=60, and the driver looks again by
# itself at most every 30 s, while each wake-up must come within 10 s: a
# wake-up that did not come by event fails the test.  (Its job's lease
# holds the group's head for 600 s, beyond the wait too.)
#
# Needs SQLQ_TEST_FB_URL and SQLQ_TEST_FB_PORT (set by tests/CMakeLists.txt
# for the firebird fixture) and isql-fb.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ -n "${SQLQ_TEST_FB_URL:-}" ] || { echo "FAIL: SQLQ_TEST_FB_URL is not set"; exit 1; }
url="$SQLQ_TEST_FB_URL?poll_interval=60"
q="wake-$$"

# The URL's parts: firebird://USER:PASSWORD@HOST:PORT//ABSOLUTE/PATH.
if ! [[ $SQLQ_TEST_FB_URL =~ ^firebird://([^:@/]+):([^@/]*)@([^:/]+):([0-9]+)/(/.+)$ ]]; then
  echo "FAIL: unexpected URL form: $SQLQ_TEST_FB_URL"
  exit 1
fi
user=${BASH_REMATCH[1]} password=${BASH_REMATCH[2]}
remote="${BASH_REMATCH[3]}/${BASH_REMATCH[4]}:${BASH_REMATCH[5]}"
expect_eq "the URL's port is the fixture's" "${BASH_REMATCH[4]}" "$SQLQ_TEST_FB_PORT"

# isql_run <SQL: isql-fb as the URL's user, stopping at the first error.
isql_run() {
  isql-fb -q -b -m -user "$user" -password "$password" "$remote"
}

# attachments PID: the attachments of process PID (MON$ shows the user's own).
attachments() {
  isql_run <<SQL | awk '/^ *[0-9]+ *$/ { print $1 }'
SET HEADING OFF;
SELECT count(*) FROM MON\$ATTACHMENTS WHERE MON\$REMOTE_PID = $1;
SQL
}

# wait_registered PID LOG: a worker registers its event on an attachment of
# its own, just before its first look at the queue: wait for that third
# attachment of process PID (the first two are the worker's and its watch
# of cancels', both made before its first look; LOG: its output, shown on
# failure), then give the look a moment to end in sleep.
wait_registered() {
  local tries=0
  until [ "$(attachments "$1")" = 3 ]; do
    tries=$((tries + 1))
    [ "$tries" -lt 100 ] || { fail "the worker never registered its event: $(cat "$2")"; return; }
    sleep 0.1
  done
  sleep 0.5
}

run "init" 0 sq init

# --no-cron: the scheduling thread's attachment would be a fourth one, before
# or after the event's (wait_registered counts three).
"$SQLQ" --url "$url" work --no-cron "$q" -- sh -c 'cat >> "$0"; echo >> "$0"' "$tmp/done" \
  >"$tmp/worker.log" 2>&1 &
worker=$!
bg_pids+=("$worker")

wait_registered "$worker" "$tmp/worker.log"

run "committed plain insert" 0 isql_run <<SQL
INSERT INTO sqlq_jobs (queue, payload) VALUES ('$q', 'job 1');
COMMIT;
SQL
wait_for_lines "$tmp/done" 1
expect_eq "a plain insert wakes the worker" "$(tr '\n' , <"$tmp/done")" "job 1,"

run "rolled-back plain insert" 0 isql_run <<SQL
INSERT INTO sqlq_jobs (queue, payload) VALUES ('$q', 'job 2');
ROLLBACK;
SQL
run "push from another process" 0 sq push "$q" "job 3"
wait_for_lines "$tmp/done" 2
expect_eq "sqlq push wakes the worker" "$(tr '\n' , <"$tmp/done")" "job 1,job 3,"

run "pause" 0 sq pause "$q"
run "push to the paused queue" 0 sq push "$q" "job 4"
sleep 0.5
expect_eq "a paused queue runs nothing" "$(tr '\n' , <"$tmp/done")" "job 1,job 3,"
run "resume" 0 sq resume "$q"
wait_for_lines "$tmp/done" 3
expect_eq "sqlq resume wakes the worker" "$(tr '\n' , <"$tmp/done")" "job 1,job 3,job 4,"

# A foreign worker holds the head of group g; the next job of g waits.
run "a held group head and the next job" 0 isql_run <<SQL
INSERT INTO sqlq_jobs (queue, payload, group_key, state, token, lease_until, attempts)
  VALUES ('$q', 'job 5', 'g', 'running', 7, 9000000000000000, 1);
INSERT INTO sqlq_jobs (queue, payload, group_key) VALUES ('$q', 'job 6', 'g');
COMMIT;
SQL
sleep 0.5
expect_eq "the group's next job waits for its head" "$(tr '\n' , <"$tmp/done")" \
  "job 1,job 3,job 4,"
run "the foreign worker acks the head" 0 isql_run <<SQL
DELETE FROM sqlq_jobs WHERE queue = '$q' AND token = 7;
COMMIT;
SQL
wait_for_lines "$tmp/done" 4
expect_eq "the end of a group's head wakes the worker" "$(tr '\n' , <"$tmp/done")" \
  "job 1,job 3,job 4,job 6,"

kill "$worker" 2>/dev/null
wait "$worker" 2>/dev/null

# A command that a waiting worker runs inherits none of its descriptors,
# not even the connection to the server's auxiliary port that the event
# registration opens (libfbclient opens it without close-on-exec): it sees
# the same descriptor numbers as when started directly.
sh -c 'ls /proc/$$/fd >"$0/fds-direct"' "$tmp" </dev/null
"$SQLQ" --url "$url" work --no-cron "$q-fds" -- sh -c 'ls /proc/$$/fd >"$0/fds-work"' "$tmp" \
  >"$tmp/fds-worker.log" 2>&1 &
worker=$!
bg_pids+=("$worker")
wait_registered "$worker" "$tmp/fds-worker.log"
run "push for the descriptor check" 0 sq push "$q-fds" x
wait_for_file "$tmp/fds-work" 10
sleep 0.2
expect_eq "no descriptors leak to the command" "$(cat "$tmp/fds-work")" "$(cat "$tmp/fds-direct")"
kill "$worker" 2>/dev/null
wait "$worker" 2>/dev/null
sq purge "$q" >/dev/null
sq purge "$q-fds" >/dev/null
finish
