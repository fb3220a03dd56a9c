# tests/cli/lock.bash -- the body of the lock tests, sourced by lock.sh
# (SQLite), fb_lock.sh (a Firebird server) and fb_lock_embedded.sh
# (Firebird embedded) after lib.sh, with $url a database without the schema
# yet.  sqlq lock: exit codes, conflicts (-n, -w, -E, --tempfail), signal
# forwarding, and that the lock and the command die together.

sq init >/dev/null

run "lock runs the command" 0 sq lock L -- echo held
expect_out "the command's output" "held"
run "lock returns the command's code" 7 sq lock L -- sh -c 'exit 7'
run "a killed command gives 128+N" 137 sq lock L -- sh -c 'kill -9 $$'
run "a missing command gives 127" 127 sq lock L -- "$tmp/no-such-program"
expect_error_line "a missing command is one line"
run "lock without --" 0 sq lock L true
run "names are any bytes" 0 sq lock "$(printf 'a "q\x01\xff b')" -- true
run "a 10 kB name" 0 sq lock "$(head -c 10000 /dev/zero | tr '\0' n)" -- true

# The command does not inherit the lock's descriptors: it sees the same
# descriptor numbers as when started directly.  (A wrapper whose backend
# still leaks them sets lock_fds_leak: see my_lock.sh.)
if [ -z "${lock_fds_leak:-}" ]; then
  sh -c 'ls /proc/$$/fd >"$0/fds-direct"' "$tmp"
  sq lock L -- sh -c 'ls /proc/$$/fd >"$0/fds-lock"' "$tmp"
  expect_eq "no leaked descriptors" "$(cat "$tmp/fds-lock")" "$(cat "$tmp/fds-direct")"
fi

# While a holder runs, others do not get the lock.
"$SQLQ" --url "$url" lock L -- sh -c 'echo $$ >"$0/holder"; while [ ! -e "$0/release" ]; do sleep 0.05; done' "$tmp" &
holder=$!
bg_pids+=("$holder")
wait_for_file "$tmp/holder" || fail "the holder did not start"
run "-n on a held lock" 75 sq lock -n L -- true
expect_error_line "-n conflict is one line"
run "-E 9" 9 sq lock -n -E 9 L -- true
run "another name is free" 0 sq lock -n other -- true
run "--tempfail on a held lock" 75 sq lock -n --tempfail L -- true
run "--tempfail -E 9 on a held lock" 9 sq lock -n --tempfail -E 9 L -- true
start=$(now_ms)
run "-w 0.3 on a held lock" 75 sq lock -w 0.3 L -- true
checks=$((checks + 1))
[ $(($(now_ms) - start)) -lt 5000 ] || fail "-w 0.3 took over 5 s"
: >"$tmp/release"
wait "$holder"
expect_eq "the holder's exit code" $? 0
run "-n after the holder ended" 0 sq lock -n L -- true
run "-w waits for a release" 0 sq lock -w 10 L -- true

# A huge wait (-w 1e10, -w 1e300) waits like any other, however long its
# deadline: it neither gives up at once (the deadline once overflowed) nor
# fails; it gets the lock when the holder lets it go, and a waiter can be
# killed meanwhile.
"$SQLQ" --url "$url" lock L -- sh -c 'echo $$ >"$0/holder2"; while [ ! -e "$0/release2" ]; do sleep 0.05; done' "$tmp" &
holder=$!
bg_pids+=("$holder")
wait_for_file "$tmp/holder2" || fail "the holder did not start"
"$SQLQ" --url "$url" lock -w 1e300 L -- sh -c 'echo got >"$0/got-1e300"' "$tmp" 2>"$tmp/err-1e300" &
doomed=$!
"$SQLQ" --url "$url" lock -w 1e10 L -- sh -c 'echo got >"$0/got-1e10"' "$tmp" 2>"$tmp/err-1e10" &
waiter=$!
bg_pids+=("$doomed" "$waiter")
# Give a waiter that would give up at once the time to do so: passing does
# not depend on this pause, only seeing the bug does.
wait_gone 2 "$doomed" "$waiter"
checks=$((checks + 1))
alive "$doomed" && alive "$waiter" ||
  fail "a waiter with a huge -w gave up while the lock was held: $(cat "$tmp/err-1e300" "$tmp/err-1e10" | tr '\n' '|')"
kill -TERM "$doomed"
wait_gone 10 "$doomed" || fail "a waiter with -w 1e300 did not end after SIGTERM"
wait "$doomed"
expect_eq "a waiter with -w 1e300 dies by SIGTERM" $? 143
: >"$tmp/release2"
wait "$holder"
wait_gone 30 "$waiter" || fail "the waiter with -w 1e10 did not get the lock once free"
wait "$waiter"
expect_eq "a waiter with -w 1e10 gets the lock once free" $? 0
expect_eq "... and runs its command" "$(cat "$tmp/got-1e10" 2>/dev/null)" got

# SIGTERM to sqlq lock reaches the command, whose code is returned.
"$SQLQ" --url "$url" lock L -- sh -c 'trap "exit 5" TERM; echo $$ >"$0/term"; while :; do sleep 0.05; done' "$tmp" &
holder=$!
bg_pids+=("$holder")
wait_for_file "$tmp/term" || fail "the command did not start"
kill -TERM "$holder"
wait_gone 10 "$holder" || fail "sqlq lock did not end after SIGTERM"
wait "$holder"
expect_eq "SIGTERM is forwarded" $? 5
run "free after SIGTERM" 0 sq lock -n L -- true

# SIGKILL of sqlq lock kills the command, and the lock is free only once the
# command is gone.
"$SQLQ" --url "$url" lock L -- sh -c 'echo $$ >"$0/victim"; exec sleep 30' "$tmp" &
holder=$!
bg_pids+=("$holder")
wait_for_file "$tmp/victim" || fail "the command did not start"
victim=$(cat "$tmp/victim")
bg_pids+=("$victim")
kill -9 "$holder"
wait "$holder" 2>/dev/null
code=75
for i in $(seq 100); do
  "$SQLQ" --url "$url" lock -n L -- sh -c '! kill -0 "$0" 2>/dev/null' "$victim" 2>/dev/null
  code=$?
  [ "$code" != 75 ] && break
  sleep 0.05
done
expect_eq "the lock is had again, and only after the command died" "$code" 0
checks=$((checks + 1))
kill -0 "$victim" 2>/dev/null && fail "the command outlived sqlq lock"

# --tempfail: every failure to take the lock exits with the conflict code,
# so that a mail filter defers: a database that cannot be opened, a URL
# that cannot be parsed.  Errors in the flags stay usage errors.
nodb="sqlite:$tmp/no-such-dir/q.db"
run "an unopenable database" 69 "$SQLQ" --url "$nodb" lock L -- true
run "an unopenable database, --tempfail" 75 "$SQLQ" --url "$nodb" lock --tempfail L -- true
expect_error_line "an unopenable database, --tempfail: one line"
run "an unopenable database, --tempfail -E 9" 9 "$SQLQ" --url "$nodb" lock --tempfail -E 9 L -- true
run "a malformed URL" 64 "$SQLQ" --url "postgres://h:99999999/db" lock L -- true
run "a malformed URL, --tempfail" 75 "$SQLQ" --url "postgres://h:99999999/db" lock --tempfail L -- true
run "a bad flag stays 64 with --tempfail" 64 sq lock --tempfail --no-such-flag L -- true
run "a bad wait stays 64 with --tempfail" 64 sq lock --tempfail -w soon L -- true
run "no command stays 64 with --tempfail" 64 sq lock --tempfail L
run "--tempfail takes no value" 64 sq lock --tempfail=1 L -- true

finish
