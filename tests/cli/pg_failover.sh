# tests/cli/pg_failover.sh -- PostgreSQL failover: a primary killed under
# load (SIGKILL) and its synchronous standby promoted, with producers and
# workers on one URL naming both hosts with target_session_attrs=read-write
# (the scenario is tests/cli/failover.bash).  Then:
#   - every enqueue the producer saw acknowledged is on the new primary, and
#     was run and finished once the queue drained;
#   - a payload is stored twice only when an enqueue of it failed saying
#     that it may have committed (its answer was lost) and was tried again;
#   - no job was acked twice, no ack was accepted with a token older than a
#     claim of the job already handed out (fencing), no job was handed out
#     while an earlier claim's lease ran, and none ran again after an ack of
#     it was accepted (worker_synchronous_commit=on: claims and acks reach
#     the standby before they are answered);
#   - the workers' LISTEN came back: a job pushed after the drain starts
#     within 10 s while they wait on it (they look again unasked only after
#     30 s);
#   - the `sqlq lock` holding a lock saw its session end and exited 75, and
#     the lock is had on the new primary; a handle holding another lock
#     found it lost and had it again on the new primary.
# Then the URL's host list is checked with bad input (exit 64, one line).
#
# Needs SQLQ_TEST_PG_FAILOVER_PORT (the primary; the standby takes the next
# port) and SQLQ_TEST_PG_FAILOVER_CLIENT (tests/postgres/failover_client.c),
# set by tests/CMakeLists.txt.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/failover.bash"

port=${SQLQ_TEST_PG_FAILOVER_PORT:?}
[ -x "${SQLQ_TEST_PG_FAILOVER_CLIENT:-}" ] || {
  echo "FAIL: SQLQ_TEST_PG_FAILOVER_CLIENT is not set"
  exit 1
}
trap 'failover_stop "$port"; cleanup' EXIT

if failover_run "$port" on on; then
  echo "acknowledged enqueues: $fo_acked ($fo_retried tried again, $fo_indoubt answers in doubt," \
    "$fo_dup stored twice);" \
    "acks: $fo_acks_ok ok, $fo_acks_stale refused as stale;" \
    "after the promotion (${fo_kill_to_promote} ms after the kill): first claim ${fo_resume_claim} ms," \
    "first ack ${fo_resume_ack} ms, first enqueue ${fo_resume_push} ms; wake-up ${fo_wake_ms} ms"
  expect_eq "acknowledged enqueues lost" "$fo_lost" 0
  expect_eq "acknowledged enqueues not run to the end" "$fo_not_done" 0
  expect_eq "payloads stored twice without a retry" "$fo_dup_bad" 0
  expect_eq "jobs acked twice" "$fo_double_ack" 0
  expect_eq "acks accepted with a stale token" "$fo_stale_ok" 0
  expect_eq "jobs handed out twice within a lease" "$fo_overlap" 0
  expect_eq "jobs run again after their ack" "$fo_after_ack" 0
  checks=$((checks + 1))
  [ "$fo_acks_stale" -gt 0 ] || fail "no late ack was refused: the fencing was not exercised"
  checks=$((checks + 1))
  [ "$fo_resume_claim" -ge 0 ] && [ "$fo_resume_ack" -ge 0 ] && [ "$fo_resume_push" -ge 0 ] ||
    fail "the workers or the producer did not carry on after the promotion"
  checks=$((checks + 1))
  [ "$fo_wake_ms" -ge 0 ] || fail "the job pushed after the drain did not start within 10 s"
  expect_eq "the lock holder's exit code" "$fo_lock_rc" 75
  expect_eq "the lock on the new primary" "$fo_lock_after" 0
  checks=$((checks + 1))
  [ "$fo_relocked" -ge 1 ] || fail "the lock holding handle did not have its lock again: $(cat "$fo/locker")"
  for w in "$fo"/worker.* "$fo/cli.log"; do
    checks=$((checks + 1))
    if grep -qv '^[CKU] \|^sqlq: work: ' "$w"; then
      fail "unexpected output in $w: $(grep -v '^[CKU] \|^sqlq: work: ' "$w" | head -n 3)"
    fi
  done
else
  fail "the scenario did not run"
fi

# A primary fenced read-only (default_transaction_read_only, as failover
# tools fence an old primary): a write is unavailable (69, not 70), and a
# producer that kept its handle carries on once writes are taken again.
new_primary=$((port + 1))
ro_url="postgres://sqlq@127.0.0.1:$new_primary/sqlq?target_session_attrs=read-write"
read_only() {
  fo_server sql "$new_primary" "ALTER SYSTEM SET default_transaction_read_only = $1" >/dev/null &&
    fo_server sql "$new_primary" "SELECT pg_reload_conf()" >/dev/null
}
produced() { [ "$(grep -c "^$1 " "$tmp/ro.producer")" -gt "$2" ]; }
rm -f "$tmp/ro.stop"
"$SQLQ_TEST_PG_FAILOVER_CLIENT" produce "$ro_url" read-only "$tmp/ro.stop" >"$tmp/ro.producer" 2>&1 &
ro_pid=$!
bg_pids+=("$ro_pid")
wait_until 30 produced A 10 || fail "the producer on the new primary stored nothing"
read_only on || fail "cannot make the new primary read-only"
# Without target_session_attrs the session opens, and the INSERT is refused.
run "push to a read-only primary" 69 "$SQLQ" --url "${ro_url%%\?*}" push read-only x
expect_error_line "push to a read-only primary"
expect_err_has "push to a read-only primary" "SQLSTATE 25006"
wait_until 30 produced E 0 || fail "the producer saw no failure while the primary was read-only"
acked=$(grep -c '^A ' "$tmp/ro.producer")
read_only off || fail "cannot make the new primary writable again"
wait_until 30 produced A $((acked + 10)) || fail "the producer did not carry on: $(tail -n 2 "$tmp/ro.producer")"
touch "$tmp/ro.stop"
run "push once writable again" 0 "$SQLQ" --url "$ro_url" push read-only y

# Host lists: bad entries are refused with one line, and never reach a
# server; other backends refuse a list.
for bad in "postgres://sqlq@127.0.0.1:$port,/sqlq" "postgres://sqlq@,127.0.0.1/sqlq" \
  "postgres://sqlq@h1:1,h2:0/sqlq" "postgres://sqlq@h1,h2:x/sqlq" "postgres://sqlq@h1,[::1/sqlq" \
  "postgres://sqlq@h1,[::1]x/sqlq" "postgres://sqlq@h1,h%2C2/sqlq" "postgres://sqlq@h1,h%zz/sqlq" \
  "mysql://sqlq@h1,h2/sqlq" "firebird://sqlq@h1,h2//tmp/x.fdb"; do
  run "host list $bad" 64 "$SQLQ" --url "$bad" stats
  expect_error_line "host list $bad"
done
# A list whose first host is down and whose second is the (new) primary.
run "host list, the first host down" 0 "$SQLQ" --url \
  "postgres://sqlq@127.0.0.1:$port,[127.0.0.1]:$((port + 1))/sqlq?target_session_attrs=read-write" \
  stats failover
run "host list as libpq's options, the first host down" 0 "$SQLQ" --url \
  "postgres://sqlq@/sqlq?host=127.0.0.1,127.0.0.1&port=$port,$((port + 1))&target_session_attrs=read-write" \
  stats failover

finish
