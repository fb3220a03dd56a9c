# tests/crash/worker_kill.bash -- kill -9 a worker in the middle of a job.
#
# The job's command must die with the worker; the job is not lost: it stays
# running until its lease (1 s) ends, then comes back with attempt 2 and a
# second worker runs it to completion.
#
# The body of worker_kill.sh (SQLite) and fb_worker_kill.sh (Firebird),
# sourced after lib.sh with $url a database without the schema yet.

sq init >/dev/null || die "init"
sq push q "the payload" >/dev/null || die "push"

# The first worker's command records its pid and sleeps far past the test.
"$SQLQ" --url "$url" work --lease 1 q -- sh -c 'echo $$ > "$0"; sleep 30' "$tmp/pidfile" \
  >"$tmp/worker1.log" 2>&1 &
worker=$!
bg_pids+=("$worker")
wait_for_file "$tmp/pidfile" 10 || die "the first worker never started the command"
cmd_pid=$(cat "$tmp/pidfile")
victims=("$cmd_pid" $(descendants "$cmd_pid"))
bg_pids+=("${victims[@]}")
alive "$cmd_pid" || die "the command is not running"

{ kill -9 "$worker"; wait "$worker"; } 2>/dev/null
wait_gone 10 "${victims[@]}" || die "the command (pids ${victims[*]}) outlived its killed worker"
pass "the command died with its worker"

# The job is not lost: it is still held by the dead worker's lease.
expect_counts q 0 0 1 0
pass "the job is still running after the kill"

# A second worker gets it once the lease ends, as attempt 2, and finishes.
timeout 60 "$SQLQ" --url "$url" work --lease 5 --drain q -- \
  sh -c 'echo "$SQLQ_ATTEMPT" > "$0.attempt"; cat > "$0.payload"' "$tmp/second" \
  >"$tmp/worker2.log" 2>&1 || die "the second worker failed: $(cat "$tmp/worker2.log")"
[ "$(cat "$tmp/second.attempt" 2>/dev/null)" = 2 ] ||
  die "the second run was attempt '$(cat "$tmp/second.attempt" 2>/dev/null)', expected 2"
[ "$(cat "$tmp/second.payload")" = "the payload" ] || die "the payload changed"
expect_counts q 0 0 0 0
pass "the job came back as attempt 2 and completed"
