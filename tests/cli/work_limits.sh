# tests/cli/work_limits.sh -- sqlq work at the edges: a job due near the
# end of time (run_at near INT64_MAX, written by plain SQL) does not
# overflow the wait's timeout arithmetic (the sanitizers' build aborted on
# it), and signals that arrive while the worker exits never reach its
# closed database handle (AddressSanitizer saw a use after free).
. "$(dirname "$0")/lib.sh"

sq init >/dev/null

# A job due near INT64_MAX microseconds: the worker runs a job before it,
# then waits beside the far one, and runs a job pushed meanwhile.
sq push far first >/dev/null
far=$(sq push far never)
sqlite3 "${url#sqlite:}" "UPDATE sqlq_jobs SET run_at = 9223372036854775000 WHERE id = $far" ||
  fail "cannot move job $far to the end of time"
"$SQLQ" --url "$url" work far -- sh -c 'cat >>"$0/ran"; echo >>"$0/ran"' "$tmp" 2>"$tmp/far.err" &
worker=$!
bg_pids+=("$worker")
wait_for_file "$tmp/ran" 20 || fail "the first job did not run"
sq push far second >/dev/null
wait_for_lines "$tmp/ran" 2
expect_eq "the jobs run, the far one not" "$(tr '\n' ' ' <"$tmp/ran")" "first second "
checks=$((checks + 1))
alive "$worker" || fail "the worker died waiting beside a job due at the end of time: $(head -c 300 "$tmp/far.err")"
kill -TERM "$worker"
wait "$worker"
expect_eq "the worker exits 0" $? 0

# Signals while the worker exits: twenty workers that find nothing to do
# (--drain) get SIGCHLD, which they handle, as fast as the shell can send
# it (builtins only), until they are zombies, which kill still reaches (at
# most 100,000 signals each).
for i in $(seq 20); do
  "$SQLQ" --url "$url" work --drain idle -- true 2>"$tmp/exit.err" &
  worker=$!
  bg_pids+=("$worker")
  sent=0
  while [ "$sent" -lt 100000 ] && read -r stat <"/proc/$worker/stat" 2>/dev/null &&
    [[ $stat != *") Z "* ]]; do
    kill -CHLD "$worker" 2>/dev/null
    sent=$((sent + 1))
  done
  if ! wait_gone 30 "$worker"; then
    fail "worker $i, sent SIGCHLD while it exited, did not exit"
    kill -9 "$worker"
  fi
  wait "$worker"
  code=$?
  if [ "$code" != 0 ]; then
    fail "worker $i, sent SIGCHLD while it exited, exits $code: $(head -c 600 "$tmp/exit.err")"
    break
  fi
done
checks=$((checks + 1))

finish
