# tests/cli/fds.bash -- the body of the descriptor tests, sourced after
# lib.sh by fds.sh (SQLite), pg_fds.sh, my_fds.sh, fb_fds.sh and
# fb_fds_embedded.sh with $url a database without the schema yet.
#
# A command that `sqlq work` or `sqlq lock` runs inherits no descriptor of
# the tool: no socket of a client library (the worker's session, its
# wake-up connections, the lock's session) and no database file.  The
# command lists /proc/self/fd; beyond stdin, stdout and stderr it may only
# have what the test itself passed down to the tool (the same as when the
# test starts it directly).

sq init >/dev/null

# The command: find, which inherits the shell's descriptors, lists its own
# as "FD TARGET" lines into the file "$0", whole once it exists.
probe=(sh -c 'find /proc/self/fd -mindepth 1 -maxdepth 1 -printf "%f %l\n" >"$0.part" && mv "$0.part" "$0"')

# extra FILE: the descriptors of a listing above 2 (but find's own, on
# /proc) that the command started directly did not have, one per line.
extra() {
  awk '$1 > 2 && $2 !~ /^\/proc\//' "$1" | sort >"$1.above"
  comm -23 "$1.above" "$tmp/fd-direct.above"
}

# expect_no_extra NAME FILE: FILE exists and lists nothing extra.
expect_no_extra() {
  checks=$((checks + 1))
  if [ ! -s "$2" ]; then
    fail "$1: the command did not run"
  else
    expect_eq "$1: descriptors the command inherited" "$(extra "$2" | tr '\n' ' ')" ""
  fi
}

"${probe[@]}" "$tmp/fd-direct" </dev/null
extra "$tmp/fd-direct" >/dev/null

# A waiting worker with two slots: the first job comes while it waits (its
# wake-up connections open), the second once it has run a command.
"$SQLQ" --url "$url" work -c 2 fds -- "${probe[@]}" "$tmp/fd-work" >"$tmp/fd-worker.log" 2>&1 &
worker=$!
bg_pids+=("$worker")
for job in 1 2; do
  rm -f "$tmp/fd-work"
  run "push job $job" 0 sq push fds x
  wait_for_file "$tmp/fd-work" 20 || fail "job $job did not run: $(cat "$tmp/fd-worker.log")"
  cp "$tmp/fd-work" "$tmp/fd-work-$job"
  expect_no_extra "sqlq work, job $job" "$tmp/fd-work-$job"
done
kill -TERM "$worker"
wait_gone 20 "$worker" || fail "the worker did not end after SIGTERM"

# A draining worker, which claims without waiting.
run "push for --drain" 0 sq push fds x
run "work --drain" 0 sq work --drain fds -- "${probe[@]}" "$tmp/fd-drain"
expect_no_extra "sqlq work --drain" "$tmp/fd-drain"

# sqlq lock: the handle's session and the lock's own.
run "lock" 0 sq lock L -- "${probe[@]}" "$tmp/fd-lock"
expect_no_extra "sqlq lock" "$tmp/fd-lock"
run "lock -w" 0 sq lock -w 5 L -- "${probe[@]}" "$tmp/fd-lock-w"
expect_no_extra "sqlq lock -w" "$tmp/fd-lock-w"

finish
