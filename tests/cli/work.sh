# tests/cli/work.sh -- sqlq work: payload and environment of the command,
# what each exit status does to the job, --drain, leases, pause, SIGTERM
# and SIGKILL of the worker.
. "$(dirname "$0")/lib.sh"

sq init >/dev/null

# The payload reaches the command byte for byte on stdin, with the job's
# id, queue and attempt in the environment.
printf 'x\0y\377\n\0' >"$tmp/payload"
id=$(sq push bin <"$tmp/payload")
run "work on a binary payload" 0 timeout 20 "$SQLQ" --url "$url" work --drain bin -- \
  sh -c 'cat >"$0/got"; echo "$SQLQ_JOB_ID $SQLQ_QUEUE $SQLQ_ATTEMPT" >"$0/env"' "$tmp"
checks=$((checks + 1))
cmp -s "$tmp/payload" "$tmp/got" || fail "the command did not get the payload bytes"
expect_eq "environment of the command" "$(cat "$tmp/env")" "$id bin 1"
run "an acked job is gone" 0 sq stats --json bin
expect_out "bin is empty" '{"queues":[{"queue":"bin","ready":0,"scheduled":0,"running":0,"dead":0,"paused":false}]}'

# A large payload never blocks the worker, whether or not it is read.
head -c 3000000 /dev/zero | sq push -p 1 big >/dev/null 2>&1 ||
  true # over the default payload limit: refused, see badinput.sh
head -c 1000000 /dev/zero | sq push big >/dev/null
run "work on a large unread payload" 0 timeout 20 "$SQLQ" --url "$url" work --drain big -- true

# Exit 0 acks, exit 75 gives the job back without counting the attempt,
# other exits fail the attempt until the job is dead.
sq push -a 2 exits fails >/dev/null
sq push -a 2 exits again >/dev/null
sq push -a 2 exits fine >/dev/null
run "work --drain with failing commands" 0 timeout 20 "$SQLQ" --url "$url" work --drain \
  --backoff 0 exits -- sh -c '
    p=$(cat)
    echo "$p $SQLQ_ATTEMPT" >>"$0/log"
    case $p in
      fails) exit 3 ;;
      again) [ -e "$0/released" ] && exit 0; : >"$0/released"; exit 75 ;;
    esac' "$tmp"
expect_eq "attempts seen" "$(sort "$tmp/log" | tr '\n' ' ')" "again 1 again 1 fails 1 fails 2 fine 1 "
expect_eq "a failure is logged on stderr" "$(grep -c 'job [0-9]*: exit status 3' "$tmp/err")" 2
run "stats after failures" 0 sq stats --json exits
expect_out "one dead job" '{"queues":[{"queue":"exits","ready":0,"scheduled":0,"running":0,"dead":1,"paused":false}]}'
run "jobs of the dead" 0 sq jobs exits
mask_times
golden "dead job table" work_dead.txt

# A command killed by a signal fails its attempt.
sq push -a 1 sig x >/dev/null
run "work on a killed command" 0 timeout 20 "$SQLQ" --url "$url" work --drain sig -- sh -c 'kill -9 $$'
run "jobs of the killed" 0 sq jobs --json sig
expect_eq "the error says which signal" "$(grep -o '"last_error":"[^"]*"' "$tmp/out")" '"last_error":"killed by signal 9"'

# A command that cannot be run fails the attempt with 127.
sq push -a 1 norun x >/dev/null
run "work on a missing command" 0 timeout 20 "$SQLQ" --url "$url" work --drain norun -- "$tmp/no-such-program"
expect_err_has "the missing command is named" "no-such-program"
run "jobs of the missing" 0 sq jobs --json norun
expect_eq "exit 127" "$(grep -o '"last_error":"[^"]*"' "$tmp/out")" '"last_error":"exit status 127"'

# --drain on an empty queue exits at once; with -c 4 every job runs once.
run "--drain on nothing" 0 timeout 20 "$SQLQ" --url "$url" work --drain empty -- true
seq 1 40 | sq push --lines many >/dev/null
run "work -c 4" 0 timeout 30 "$SQLQ" --url "$url" work -c 4 --drain many -- sh -c 'echo "$(cat)" >>"$0/many"' "$tmp"
expect_eq "40 jobs ran once each" "$(sort -n "$tmp/many" | uniq | wc -l)" 40
expect_eq "no job ran twice" "$(wc -l <"$tmp/many")" 40

# A command that outlives several lease periods keeps its job: the worker
# extends the lease, so the ack is accepted.
sq push lease x >/dev/null
run "work --lease 1 on a 2.5 s command" 0 timeout 20 "$SQLQ" --url "$url" work --lease 1 --drain lease -- sleep 2.5
expect_err_lacks "the lease was kept" "lease lost"
run "the long job was acked" 0 sq stats --json lease
expect_out "lease is empty" '{"queues":[{"queue":"lease","ready":0,"scheduled":0,"running":0,"dead":0,"paused":false}]}'

# The command does not inherit the worker's descriptors: it sees the same
# descriptor numbers as when started directly.
sh -c 'ls /proc/$$/fd >"$0/fds-direct"' "$tmp" </dev/null
sq push fds x >/dev/null
"$SQLQ" --url "$url" work --drain fds -- sh -c 'ls /proc/$$/fd >"$0/fds-work"' "$tmp" 2>/dev/null
expect_eq "no leaked descriptors" "$(cat "$tmp/fds-work")" "$(cat "$tmp/fds-direct")"

# A paused queue is waited on, not worked; resuming it lets the worker go on.
sq push paused x >/dev/null
sq pause paused
"$SQLQ" --url "$url" work --drain paused -- sh -c ': >"$0/ran-paused"' "$tmp" 2>"$tmp/paused.err" &
worker=$!
bg_pids+=("$worker")
sleep 0.5
checks=$((checks + 1))
[ ! -e "$tmp/ran-paused" ] && kill -0 "$worker" 2>/dev/null || fail "a paused queue was worked or the worker left"
sq resume paused
wait_gone 10 "$worker" || fail "the worker did not finish the resumed queue"
wait "$worker"
expect_eq "worker on a resumed queue exits 0" $? 0
checks=$((checks + 1))
[ -e "$tmp/ran-paused" ] || fail "the job of the resumed queue did not run"

# SIGTERM: claim nothing more, let the running command finish, ack it and
# exit 0.
sq push term one >/dev/null
sq push term two >/dev/null
"$SQLQ" --url "$url" work term -- sh -c 'echo $$ >"$0/term-started"; sleep 1; echo done >>"$0/term-done"' "$tmp" 2>"$tmp/term.err" &
worker=$!
bg_pids+=("$worker")
wait_for_file "$tmp/term-started" || fail "the command did not start"
kill -TERM "$worker"
wait_gone 10 "$worker" || fail "the worker did not exit after SIGTERM"
wait "$worker"
expect_eq "SIGTERM exit code" $? 0
expect_eq "the running command finished" "$(cat "$tmp/term-done" 2>/dev/null)" "done"
run "stats after SIGTERM" 0 sq stats --json term
expect_out "one job acked, one left" '{"queues":[{"queue":"term","ready":1,"scheduled":0,"running":0,"dead":0,"paused":false}]}'

# SIGKILL of the worker kills its command too.
sq push kill x >/dev/null
"$SQLQ" --url "$url" work kill -- sh -c 'echo $$ >"$0/kill-pid"; exec sleep 30' "$tmp" 2>/dev/null &
worker=$!
bg_pids+=("$worker")
wait_for_file "$tmp/kill-pid" || fail "the command did not start"
child=$(cat "$tmp/kill-pid")
bg_pids+=("$child")
kill -9 "$worker"
wait "$worker" 2>/dev/null
wait_gone 10 "$child" || fail "the command outlived its killed worker"

finish
