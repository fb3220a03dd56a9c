# tests/cli/pg_pgbouncer_lock.sh -- named locks through PgBouncer in
# transaction mode (pgbouncer.bash), where they are leases (src/lease.c)
# of 2 s (lock_lease=2): four `sqlq lock -w 20` on one name never run
# their commands at once (each command creates a file with O_EXCL, and
# logs its start, with its SQLQ_LOCK_FENCE, and its end); a holder killed with SIGKILL has its command
# killed at once and its lock taken over once its lease runs out; then
# the shared lock tests (lock.bash) through the pooler.  Session advisory
# locks through the same pooler let holders overlap (issue 23).  Needs
# SQLQ_TEST_PG_URL (the postgres fixture), psql and pgbouncer.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg_database.bash"
. "$(dirname "$0")/pgbouncer.bash"

direct_url=$url
pg_sql() {
  psql -X -q -At -F $'\t' -v ON_ERROR_STOP=1 "$direct_url" -c "$1"
}
url="$pooled_url?lock_lease=2"
run "init through pgbouncer" 0 sq init

# Four holders in turn: with `set -C` the shell creates "held" with
# O_EXCL, which fails while another command holds it.
mkdir "$tmp/excl"
holders=()
for i in 1 2 3 4; do
  "$SQLQ" --url "$url" lock -w 20 four -- sh -c '
    set -C
    if ! : >"$0/held"; then echo "overlap $1" >>"$0/log"; exit 9; fi
    echo "$(date +%s.%N) start $1 $SQLQ_LOCK_FENCE" >>"$0/log"
    sleep 0.3
    echo "$(date +%s.%N) end $1" >>"$0/log"
    rm "$0/held"' "$tmp/excl" "$i" 2>"$tmp/holder-$i.err" &
  holders+=($!)
  bg_pids+=($!)
done
for i in 1 2 3 4; do
  wait "${holders[$((i - 1))]}"
  expect_eq "holder $i ran its command ($(head -c 200 "$tmp/holder-$i.err" | tr '\n' '|'))" $? 0
done
expect_eq "no two commands overlapped" "$(grep -c overlap "$tmp/excl/log")" 0
expect_eq "each command started and ended once" "$(grep -c 'start\|end' "$tmp/excl/log")" 8
# In the log, each start is followed by its own end.
checks=$((checks + 1))
awk '$2 == "start" { if (open != "") bad = 1; open = $3 }
     $2 == "end" { if (open != $3) bad = 1; open = "" }
     END { exit bad }' "$tmp/excl/log" || fail "the log interleaves: $(tr '\n' '|' <"$tmp/excl/log")"
expect_eq "each holder's command got a higher fence" \
  "$(awk '$2 == "start" { print $4 }' "$tmp/excl/log" | tr '\n' ' ')" "1 2 3 4 "
expect_eq "the lease's fence counts the four holders" \
  "$(pg_sql "SELECT fence FROM sqlq_leases WHERE holder = 0 ORDER BY fence DESC LIMIT 1")" 4

# SIGKILL of a holder: its guardian kills the command at once; the lock is
# free when the lease runs out (2 s after the last renewal), not before a
# waiter must wait for it, and the waiter's command runs after the
# victim's is gone.
"$SQLQ" --url "$url" lock crash -- sh -c 'echo $$ >"$0/victim"; exec sleep 60' "$tmp" &
holder=$!
bg_pids+=("$holder")
wait_for_file "$tmp/victim" || fail "the command did not start"
victim=$(cat "$tmp/victim")
bg_pids+=("$victim")
run "the lock is held" 75 sq lock -n crash -- true
kill -9 "$holder"
wait "$holder" 2>/dev/null
run "a waiter gets the lock after the lease" 0 sq lock -w 20 crash -- \
  sh -c '! kill -0 "$0" 2>/dev/null && echo taken' "$victim"
expect_out "the victim's command was gone when the waiter ran" taken
checks=$((checks + 1))
kill -0 "$victim" 2>/dev/null && fail "the command outlived sqlq lock"
expect_eq "the lock is free again" "$(pg_sql "SELECT count(*) FROM sqlq_leases WHERE holder <> 0")" 0

# A holder whose lease is taken over (here: by hand, as if it had stopped
# renewing past its lease) finds it lost at its next check and stops its
# command: exit 75, one line.
"$SQLQ" --url "$url" lock --check-interval 0.1 --check-timeout 0.2 --kill-after 0.5 stolen -- \
  sh -c 'echo $$ >"$0/stolen"; exec sleep 60' "$tmp" 2>"$tmp/stolen.err" &
holder=$!
bg_pids+=("$holder")
wait_for_file "$tmp/stolen" || fail "the command did not start"
pg_sql "UPDATE sqlq_leases SET holder = 1, fence = fence + 1 WHERE holder <> 0" >/dev/null
wait_gone 20 "$holder" || fail "the holder whose lease was taken did not stop"
wait "$holder"
expect_eq "a taken lease exits 75" $? 75
expect_eq "one line" "$(wc -l <"$tmp/stolen.err")" 1
checks=$((checks + 1))
grep -q "another holder took the lock" "$tmp/stolen.err" || fail "the line says why: $(cat "$tmp/stolen.err")"
pg_sql "UPDATE sqlq_leases SET holder = 0" >/dev/null

. "$(dirname "$0")/lock.bash"
