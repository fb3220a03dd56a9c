# tests/cli/work_lease.sh -- the lease tests of sqlq work (work_lease.bash)
# on a SQLite database, written by the sqlite3 command-line client; then a
# lease that runs out while no extension can reach the database (another
# process holds the write lock) stops the command too, and the attempt,
# still held, is recorded as failed once the database answers again.
. "$(dirname "$0")/lib.sh"

app_sql() {
  sqlite3 -batch -cmd '.timeout 10000' -separator $'\t' "${url#sqlite:}" "$1"
}

. "$(dirname "$0")/work_lease.bash"

# hold_write_lock: hold the database's write lock from another process
# (its pid in $holder) until $tmp/unlock exists, 60 s at most; returns once
# the lock is held.
hold_write_lock() {
  python3 -c '
import os, sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("BEGIN IMMEDIATE")
open(sys.argv[2], "w").write("held")
deadline = time.monotonic() + 60
while not os.path.exists(sys.argv[3]) and time.monotonic() < deadline:
    time.sleep(0.05)
c.execute("COMMIT")' "${url#sqlite:}" "$tmp/locked" "$tmp/unlock" &
  holder=$!
  bg_pids+=("$holder")
  wait_for_file "$tmp/locked" 20 || fail "the write lock was not taken"
}

id=$(sq push -a 1 away one)
"$SQLQ" --url "$url?busy_timeout=0.1" work --lease 2 away -- sh -c '
  trap "echo term >\"\$0/away-term\"; while [ ! -e \"\$0/released\" ]; do sleep 0.05; done; exit 0" TERM
  echo started >"$0/away-started"
  while :; do sleep 0.05; done' "$tmp" 2>"$tmp/away.err" &
worker=$!
bg_pids+=("$worker")
wait_for_file "$tmp/away-started" 20 || fail "the command did not start"
hold_write_lock
checks=$((checks + 1))
wait_for_file "$tmp/away-term" 20 || fail "the command got no SIGTERM when its lease ran out"
: >"$tmp/unlock"
wait "$holder"
# Only now may the command end: its result must find the database free.
: >"$tmp/released"
stop_worker "$worker"
expect_eq "the loss is said" "$(grep -c "job $id: lease lost (it ran out before an extension reached the database)" "$tmp/away.err")" 1
expect_eq "the attempt is recorded" \
  "$(grep -c "job $id: exit status 0 after its lease was lost; the attempt is recorded as failed" "$tmp/away.err")" 1
run "jobs of the lost lease" 0 sq jobs --json away
expect_eq "the job is dead with the reason" "$(grep -o '"state":"[a-z]*"\|"last_error":"[^"]*"' "$tmp/out" | tr '\n' ' ')" \
  '"state":"dead" "last_error":"lease lost, then exit status 0" '

finish
