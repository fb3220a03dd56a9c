# tests/cli/work_limits.sh -- sqlq work at the edges: a job due near the
# end of time (run_at near INT64_MAX, written by plain SQL) does not
# overflow the wait's timeout arithmetic (the sanitizers' build aborted on
# it).
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

finish
