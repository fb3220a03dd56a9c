# tests/cli/work_lease.bash -- the body of the lease tests of sqlq work,
# sourced after lib.sh by work_lease.sh (SQLite), pg_work_lease.sh,
# my_work_lease.sh and fb_work_lease.sh, with $url a database without the
# schema yet and app_sql SQL set by the caller: it runs SQL as a plain
# client of the same database and prints rows as tab-separated lines
# without a header.
#
# A lease that another party takes away (the job's token changed by plain
# SQL) stops the command: SIGTERM within about a lease extension's
# interval, then SIGKILL after --kill-after for a command that ignores
# SIGTERM; the worker does not ack the job with its stale token, and the
# attempt is counted.  The command's SQLQ_JOB_TOKEN is the token in the
# table.

sq init >/dev/null

# take_away ID: change the token of job ID, as another party would (again
# when the database reports a conflict with the worker's lease extension of
# the same row, as Firebird does).
take_away() {
  local tries=50
  until app_sql "UPDATE sqlq_jobs SET token = token + 1 WHERE id = $1" 2>"$tmp/update.err"; do
    tries=$((tries - 1))
    if [ "$tries" -le 0 ]; then
      fail "the token of job $1 cannot be changed: $(head -c 300 "$tmp/update.err")"
      return
    fi
    sleep 0.1
  done
}

# A command that honours SIGTERM.  Its first attempt runs until SIGTERM,
# which it records, and exits 0 then: a result that must not be acked.  The
# job comes back when the lease the test took away runs out, counted: the
# second attempt records its number and exits 0.
id=$(sq push lost one)
start_retried "$tmp/lost.err" --lease 2 lost
expect_eq "SQLQ_JOB_TOKEN is the claim's token" "$(cat "$tmp/token")" \
  "$(app_sql "SELECT token FROM sqlq_jobs WHERE id = $id")"
take_away "$id"
expect_retried "when its lease was lost"
# The loss is found by a lease extension, or by the watch of cancels
# (whose wait sees every commit on SQLite), whichever looks first.
expect_eq "the loss is said once" "$(grep -c "job $id: lease lost (the job" "$tmp/lost.err")" 1
expect_eq "the stale result is not recorded" \
  "$(grep -c "job $id: exit status 0 after its lease was lost; the job was cancelled or taken back" "$tmp/lost.err")" 1
run "stats after the second attempt" 0 sq stats --json lost
expect_out "the second attempt acked the job" '{"queues":[{"queue":"lost","ready":0,"scheduled":0,"running":0,"dead":0,"paused":false}]}'

# A command that ignores SIGTERM is killed, with what it started, after
# --kill-after.
id=$(sq push -a 1 ignore one)
start_stubborn "$tmp/ignore.err" --lease 2 --kill-after 1 ignore
take_away "$id"
checks=$((checks + 1))
wait_for_file "$tmp/ignored" 20 || fail "the command got no SIGTERM"
checks=$((checks + 1))
wait_gone 20 "${victims[@]}" || fail "a command that ignores SIGTERM outlived its lost lease"
stop_worker "$worker"
expect_eq "SIGKILL is said" "$(grep -c "job $id: its command outlived SIGTERM by 1 s; SIGKILL" "$tmp/ignore.err")" 1
expect_eq "the end is said" \
  "$(grep -c "job $id: killed by signal 9 after its lease was lost" "$tmp/ignore.err")" 1
