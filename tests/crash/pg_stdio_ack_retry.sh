# tests/crash/pg_stdio_ack_retry.sh -- `sqlq work --stdio` keeps the acks
# that failed because the database was away and tries them again once it
# answers, within the jobs' leases, as `sqlq work` does: a handler that
# answered while the PostgreSQL server was down does not see its job again.
#
# The server is killed (SIGKILL to the postmaster) while the handler holds
# its job; the handler then acks; the server is started again.  Without the
# retry the ack was lost, and the job ran a second time once its lease
# ended.  Needs SQLQ_TEST_PG_URL, SQLQ_TEST_PG_SERVER and SQLQ_TEST_PG_PORT.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../cli/pg_database.bash"

examples=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../examples" && pwd)
pidfile=/tmp/sqlq-test-pg-$SQLQ_TEST_PG_PORT/postmaster.pid
[ -r "$pidfile" ] || die "no $pidfile: is the test server running?"

# The handler logs each run of a job, waits (30 s at most) until $tmp/go
# exists, acks, and logs that it answered.
sed "s|^  :\$|  echo \"\$1\" >>'$tmp/runs'; for i in \$(seq 600); do [ -e '$tmp/go' ] \\&\\& break; sleep 0.05; done; echo \"\$1\" >>'$tmp/answered'|" \
  "$examples/handler.sh" >"$tmp/handler.sh"
grep -q "$tmp/go" "$tmp/handler.sh" || die "could not make the handler"

lines() { [ "$(cat "$1" 2>/dev/null | wc -l)" -ge "$2" ]; }

sq init >/dev/null || die "init"
id=$(sq push q job) || die "push"
"$SQLQ" --url "$url" work --stdio --lease 30 --backoff 0 --drain q -- bash "$tmp/handler.sh" \
  >"$tmp/worker.out" 2>"$tmp/worker.err" &
worker=$!
bg_pids+=("$worker")
wait_until 60 lines "$tmp/runs" 1 || die "the handler got no job in 60 s: $(cat "$tmp/worker.err")"
# The claim committed without waiting for the disk (docs/postgres.md,
# "Durability"): a durable commit after it, an enqueue, flushes it, so that
# the crash below cannot forget the claim (which would make the job run
# again whatever the worker does with the ack).
sq push flush x >/dev/null || die "push"
pass "the handler holds job $id"

kill -KILL "$(head -n 1 "$pidfile")" || die "cannot kill the server"
wait_until 30 eval '! pg_isready -q -h 127.0.0.1 -p "$SQLQ_TEST_PG_PORT"' || die "the server still answers"
touch "$tmp/go"
wait_until 30 lines "$tmp/answered" 1 || die "the handler did not answer"
wait_until 30 grep -q "ack of 1 jobs failed" "$tmp/worker.err" ||
  die "the worker did not try the ack while the server was down: $(cat "$tmp/worker.err")"
pass "the handler acked while the server was down, and the ack failed"

# shellcheck disable=SC2086 # the server command is "bash SCRIPT"
$SQLQ_TEST_PG_SERVER restart "$SQLQ_TEST_PG_PORT" || die "the server did not start again"
wait_gone 90 "$worker" || die "the worker did not drain the queue in 90 s: $(cat "$tmp/worker.err")"
wait "$worker" || die "the worker exited $?: $(cat "$tmp/worker.err")"
[ "$(wc -l <"$tmp/runs")" = 1 ] || die "the job ran $(wc -l <"$tmp/runs") times: $(cat "$tmp/worker.err")"
grep -q "the acks kept went through" "$tmp/worker.err" ||
  die "the kept ack was not tried again: $(cat "$tmp/worker.err")"
expect_counts q 0 0 0 0
pass "the ack went through once the server was back: the job ran once, and the queue is empty"
