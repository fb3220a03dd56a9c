# tests/cli/work_timeout.bash -- the body of the timeout tests of sqlq
# work, sourced after lib.sh by work_timeout.sh (SQLite), pg_work_timeout.sh,
# my_work_timeout.sh and fb_work_timeout.sh, with $url a database without
# the schema yet.
#
# A command that runs past --timeout gets SIGTERM, and SIGKILL --kill-after
# later when it ignores SIGTERM (with what it started); its attempt fails
# whatever it exits with, and the job runs again after the backoff, or is
# dead after its last attempt, with the reason.  A --stdio handler that
# leaves a job unanswered past --timeout (far shorter than the lease) is
# stopped and restarted, and the job fails and runs again.

sq init >/dev/null

# A command that honours SIGTERM (start_retried).  Its first attempt runs
# until the timeout stops it, and exits 0 then: a result that must not be
# acked.  The job runs again at once (--backoff 0), and is acked.  The
# timeout leaves the second attempt, which only starts sh, ample time on a
# loaded machine (one that took more than 1 s made a third attempt).
id=$(sq push slow one)
start_retried "$tmp/slow.err" --timeout 5 --backoff 0 slow
expect_retried "at its timeout"
expect_eq "the timeout is said" \
  "$(grep -c "job $id: ran past its timeout of 5 s; its command gets SIGTERM" "$tmp/slow.err")" 1
expect_eq "the failed attempt is said" \
  "$(grep -c "job $id: timed out after 5 s, then exit status 0$" "$tmp/slow.err")" 1
run "stats after the retry" 0 sq stats --json slow
expect_out "the retry acked the job" '{"queues":[{"queue":"slow","ready":0,"scheduled":0,"running":0,"dead":0,"paused":false}]}'

# A command that ignores SIGTERM is killed, with what it started, after
# --kill-after; on its last attempt its job is dead, with the reason.
id=$(sq push -a 1 stubborn one)
start_stubborn "$tmp/stubborn.err" --timeout 1 --kill-after 1 stubborn
checks=$((checks + 1))
wait_for_file "$tmp/ignored" 20 || fail "the command got no SIGTERM at its timeout"
checks=$((checks + 1))
wait_gone 20 "${victims[@]}" || fail "a command that ignores SIGTERM outlived its timeout"
stop_worker "$worker"
expect_eq "SIGKILL is said" \
  "$(grep -c "job $id: its command outlived SIGTERM by 1 s; SIGKILL" "$tmp/stubborn.err")" 1
run "jobs of the timed-out job" 0 sq jobs --json stubborn
expect_eq "the job is dead with the reason" \
  "$(grep -o '"state":"[a-z]*"\|"last_error":"[^"]*"' "$tmp/out" | tr '\n' ' ')" \
  '"state":"dead" "last_error":"timed out after 1 s, then killed by signal 9" '

# A command that ends in time is acked as without a timeout; 0 is none.
sq push fast one >/dev/null
sq push fast two >/dev/null
run "a command within its timeout" 0 timeout 60 "$SQLQ" --url "$url" work --timeout 60 --drain \
  fast -- true
run "no timeout" 0 timeout 60 "$SQLQ" --url "$url" work --timeout 0 --drain fast -- true
run "stats of the fast jobs" 0 sq stats --json fast
expect_out_has "both were acked" '"ready":0,"scheduled":0,"running":0,"dead":0'

# --stdio: a handler that leaves its first attempt unanswered is stopped
# at the timeout, not at the end of the job's 60 s lease; the job fails,
# the handler is restarted, and a later attempt is acked (the second, but
# for a bash handler that took more than the timeout to answer it on a
# loaded machine).
examples=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../examples" && pwd)
# The first attempt waits in bash itself, on a FIFO that nobody writes to,
# so that the handler leaves no process behind when SIGTERM ends it.
mkfifo "$tmp/hung.fifo"
sed 's|^  :$|  [ "$2" != 1 ] \|\| { echo "$1" >"$HUNG"; read -r -t 300 <>"$HUNG.fifo"; }|
  s|^read -r line \|\| exit 0$|&; echo "$line" >>"$HUNG.hello"|' "$examples/handler.sh" >"$tmp/hang.sh"
id=$(sq push hung one)
run "a --stdio job past its timeout" 0 env HUNG="$tmp/hung" timeout 45 "$SQLQ" --url "$url" work \
  --stdio --lease 60 --timeout 5 --backoff 0 --kill-after 1 --drain hung -- bash "$tmp/hang.sh"
expect_eq "the first attempt hung" "$(cat "$tmp/hung" 2>/dev/null)" "$id"
expect_err_has "the timeout is said" "no answer for job $id by its timeout (5 s)"
hellos=$(wc -l <"$tmp/hung.hello")
expect_eq "a restart after the timeout" "$((hellos >= 2))" 1
expect_eq "each hello gives the timeout" "$(grep -c '"lease":60,"timeout":5}$' "$tmp/hung.hello")" \
  "$hellos"
run "stats of the hung job" 0 sq stats --json hung
expect_out_has "its second attempt was acked" '"ready":0,"scheduled":0,"running":0,"dead":0'
