# tests/crash/lock_lost.bash -- `sqlq lock` whose lock is lost while its
# command runs.
#
# The lock's session ends behind the holder's back (or the lock file goes,
# on SQLite); the holder notices at its next check, says so in one line,
# sends SIGTERM to the command (a command that ignores it is killed with
# SIGKILL, with all it started, after --kill-after), exits 75, and the lock
# can be had again.  The same when the session stops answering (a hung
# server: the check's timeout bounds the wait) and when the server restarts.
#
# The body of lock_lost.sh (SQLite), pg_lock_lost.sh, my_lock_lost.sh and
# fb_lock_lost.sh, sourced after lib.sh with $url a database without the
# schema yet, this function defined:
#   end_session PID   end the lock session of the holder PID (sqlq lock)
#                     behind its back (SQLite: remove the lock file)
# and for a server, these variables set:
#   server_script     the command of its tests/servers script ("bash PATH")
#   server_port       its port
# with which the server is restarted and, unless the wrapper defines
#   hang_session PID  make the holder's lock session stop answering (with
#                     stop_processes)
# itself, stopped whole (the script's `pids`).

sq init >/dev/null || die "init"

name=lost-lock

# stop_processes PID...: stop the processes (of a server) with SIGSTOP, for
# resume_session to continue.
stop_processes() {
  [ "$#" -gt 0 ] || die "no server process to stop"
  stopped=("$@")
  kill -STOP "$@"
}

# resume_session: continue the stopped processes, and their parents: runuser
# (which runs the test servers as their system users) stops itself when its
# child stops, and would not reap the server when it exits later.
resume_session() {
  local pid line fields
  for pid in "${stopped[@]}"; do
    read -r line <"/proc/$pid/stat" 2>/dev/null || continue
    read -r -a fields <<<"${line##*) }"
    kill -CONT "${fields[1]}" "$pid" 2>/dev/null
  done
}

if [ -n "${server_script:-}" ]; then
  restart_server() {
    # shellcheck disable=SC2086 # the command is "bash SCRIPT"
    $server_script restart "$server_port" >/dev/null
  }
  declare -F hang_session >/dev/null || hang_session() {
    # shellcheck disable=SC2046,SC2086 # a list of pids; "bash SCRIPT"
    stop_processes $($server_script pids "$server_port")
  }
fi

# held_elsewhere: the lock is held by another holder (sqlq lock -n gives 75).
held_elsewhere() {
  "$SQLQ" --url "$url" lock -n "$name" -- true 2>/dev/null
  [ $? = 75 ]
}

# free_again: the lock can be had (sqlq lock -n runs its command).
free_again() {
  "$SQLQ" --url "$url" lock -n "$name" -- true 2>/dev/null
}

# A command that records its pid in $tmp/cmd and, on SIGTERM, writes
# $tmp/term and exits 3.
obedient='trap "echo term >\"$0/term\"; exit 3" TERM; echo $$ >"$0/cmd"; while :; do sleep 0.05; done'
# A command that ignores SIGTERM and has a child of its own ($tmp/child).
stubborn='trap "" TERM; sleep 300 & echo $! >"$0/child"; echo $$ >"$0/cmd"; while :; do sleep 0.05; done'

# start_holder CMD [OPTION...]: sqlq lock $name with these options (and a
# check every 0.2 s) running `sh -c CMD $tmp`, in the background ($holder);
# returns once the command runs and the lock is seen held.
start_holder() {
  local cmd=$1
  shift
  rm -f "$tmp/cmd" "$tmp/term" "$tmp/child"
  "$SQLQ" --url "$url" lock --check-interval 0.2 "$@" "$name" -- sh -c "$cmd" "$tmp" \
    2>"$tmp/holder.err" &
  holder=$!
  bg_pids+=("$holder")
  wait_for_file "$tmp/cmd" 30 || die "the holder's command did not start: $(cat "$tmp/holder.err")"
  bg_pids+=("$(cat "$tmp/cmd")")
  held_elsewhere || die "the lock is not held while the holder runs"
}

# expect_lost WHAT [REASON]: the holder ends (within 60 s), exits 75 and
# says in one line that the lock was lost (for REASON, when given); then
# the lock can be had again (within 60 s).
expect_lost() {
  local what=$1 reason=${2:-} code
  wait_gone 60 "$holder" || die "$what: sqlq lock still runs after its lock was lost"
  wait "$holder"
  code=$?
  [ "$code" = 75 ] || die "$what: sqlq lock exited $code, expected 75: $(cat "$tmp/holder.err")"
  [ "$(wc -l <"$tmp/holder.err")" = 1 ] &&
    grep -q "^sqlq: lock: the lock '$name' was lost: .*; stopping the command\$" "$tmp/holder.err" ||
    die "$what: not one line saying the lock was lost: $(cat "$tmp/holder.err")"
  [ -z "$reason" ] || grep -qF -- "$reason" "$tmp/holder.err" ||
    die "$what: the line does not say '$reason': $(cat "$tmp/holder.err")"
  wait_until 60 free_again || die "$what: the lock cannot be had again"
}

# The lock's session ends: the command gets SIGTERM.
start_holder "$obedient" --kill-after 30
end_session "$holder"
expect_lost "an ended session"
[ "$(cat "$tmp/term" 2>/dev/null)" = term ] || die "the command did not get SIGTERM"
pass "an ended session: SIGTERM to the command, one line, exit 75, the lock free again"

# A command that ignores SIGTERM is killed with SIGKILL after --kill-after,
# and so is what it started.
start_holder "$stubborn" --kill-after 1
command_pids=("$(cat "$tmp/cmd")" "$(cat "$tmp/child")")
bg_pids+=("${command_pids[@]}")
end_session "$holder"
expect_lost "a command that ignores SIGTERM"
wait_gone 10 "${command_pids[@]}" || die "the command (pids ${command_pids[*]}) outlived --kill-after"
pass "a command that ignores SIGTERM: SIGKILL to it and its child after --kill-after, exit 75"

# A session that stops answering: the check gives up after --check-timeout.
if declare -F hang_session >/dev/null; then
  start_holder "$obedient" --check-timeout 2 --kill-after 30
  hang_session "$holder"
  wait_gone 60 "$holder"
  resume_session
  expect_lost "a session that does not answer" "gave no answer in time"
  [ "$(cat "$tmp/term" 2>/dev/null)" = term ] || die "the command did not get SIGTERM"
  pass "a session that does not answer: lost after --check-timeout, SIGTERM, exit 75"
fi

# The server restarts under the holder.
if declare -F restart_server >/dev/null; then
  start_holder "$obedient" --kill-after 30
  restart_server || die "the server did not restart"
  expect_lost "a server restart"
  [ "$(cat "$tmp/term" 2>/dev/null)" = term ] || die "the command did not get SIGTERM"
  pass "a server restart: SIGTERM to the command, exit 75, the lock free again"
fi
