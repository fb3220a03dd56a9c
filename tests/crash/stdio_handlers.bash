# tests/crash/stdio_handlers.bash -- handlers of `sqlq work --stdio` that
# die, hang or break the protocol lose no job; binary payloads pass intact;
# SIGTERM lets the job in flight finish, or releases it after --grace.
#
# The body of stdio_handlers.sh (SQLite), pg_stdio_handlers.sh,
# my_stdio_handlers.sh and fb_stdio_handlers.sh, sourced after lib.sh with
# $url a database without the schema yet.  The handler is
# tests/crash/stdio_handler.py (examples/handler.py with a handle() that
# misbehaves as each job's payload says), one job in flight at a time
# (--window 1), so that each misbehaviour fails exactly its own job.

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
examples=$(cd "$here/../../examples" && pwd)
# The interpreter itself, not a version manager's shim, which takes seconds
# to start on a loaded machine (and the handler is started again and again).
python=$(python3 -c 'import sys; print(sys.executable)')
handler=("$python" "$here/stdio_handler.py" "$examples" "$tmp/log" "$tmp/out")
mkdir -p "$tmp/out"

sq init >/dev/null || die "init"
push() {
  "$SQLQ" --url "$url" push "$@" || die "push $*"
}

# Every byte value, NUL, newlines, invalid UTF-8.
python3 -c 'import sys; sys.stdout.buffer.write(bytes(range(256)) + b"\n\0\n\xff\xfe\xc3(" * 3)' >"$tmp/binary"
declare -A ids
ids[binary]=$(push -a 1 q <"$tmp/binary")
for p in ok-1 ok-2 ok-3; do ids[$p]=$(push -a 1 q "$p"); done
for p in kill-once kill-always garbage-once garbage-always hang-once hang-always unknown-id \
  wrong-token long-line; do
  ids[$p]=$(push -a 2 q "$p")
done
ids[fail-3]=$(push -a 3 q fail-3)
total=${#ids[@]}

timeout 180 "$SQLQ" --url "$url" work --stdio --window 1 --lease 2 --backoff 0 --kill-after 2 \
  --drain q -- "${handler[@]}" >"$tmp/worker.out" 2>"$tmp/worker.err"
code=$?
[ "$code" = 0 ] || die "the worker exited $code: $(tail -n 5 "$tmp/worker.err")"
pass "the worker drained the queue"

# Nothing lost: the three jobs that misbehave on every attempt are dead
# after their two attempts, every other job was acked.
expect_counts q 0 0 0 3
sq jobs --json q >"$tmp/dead" || die "jobs"
for p in kill-always garbage-always hang-always; do
  grep -q "\"id\":${ids[$p]},.*\"attempts\":2,.*\"last_error\":\"handler 1" "$tmp/dead" ||
    die "job $p is not dead after 2 attempts with the handler's failure: $(cat "$tmp/dead")"
done
acked=0
for p in "${!ids[@]}"; do
  case $p in *-always) continue ;; esac
  [ -e "$tmp/out/${ids[$p]}" ] || die "job $p (${ids[$p]}) was never handled to the end"
  acked=$((acked + 1))
done
[ $((acked + 3)) = "$total" ] || die "$acked acked + 3 dead is not the $total jobs pushed"
pass "all $total jobs are accounted for: $acked acked, 3 dead after their attempts"

# Each misbehaviour was retried as its attempts say, and said in one line.
attempts() { awk -v id="$1" '$1 == id { n = $2 } END { print n + 0 }' "$tmp/log"; }
for p in kill-once garbage-once hang-once unknown-id wrong-token long-line kill-always \
  garbage-always hang-always; do
  [ "$(attempts "${ids[$p]}")" = 2 ] || die "job $p ran $(attempts "${ids[$p]}") attempts, expected 2"
done
[ "$(attempts "${ids[fail-3]}")" = 3 ] || die "job fail-3 ran $(attempts "${ids[fail-3]}") attempts"
for line in "ended (killed by signal 9) with 1 jobs in flight" "not a JSON object" \
  "no answer for job ${ids[hang-once]} by its deadline" \
  "an answer for job $((ids[unknown-id] + 1000000)), which it does not hold" \
  "the wrong token for job ${ids[wrong-token]}" "a line longer than 65536 bytes"; do
  grep -q "^sqlq: work: handler 1 (${python//./\\.})[: ].*$line" "$tmp/worker.err" ||
    die "stderr does not say '$line': $(cat "$tmp/worker.err")"
done
pass "each failure was retried or made dead as its attempts say, and said on stderr"

cmp -s "$tmp/binary" "$tmp/out/${ids[binary]}" || die "the binary payload changed on its way"
pass "a binary payload of every byte value passed intact"

# sigterm_while PAYLOAD OPTION...: push a job of PAYLOAD (its id in $job),
# start a worker with the OPTIONs, SIGTERM it once the handler has the job,
# and check that it exits 0.
sigterm_while() {
  local payload=$1 tries=0 worker code
  shift
  job=$(push q "$payload")
  "$SQLQ" --url "$url" work --stdio "$@" q -- "${handler[@]}" 2>"$tmp/term.err" &
  worker=$!
  bg_pids+=("$worker")
  until grep -q "^$job 1 $payload" "$tmp/log"; do
    tries=$((tries + 1))
    [ "$tries" -lt 300 ] || die "job $payload did not start in 30 s: $(cat "$tmp/term.err")"
    sleep 0.1
  done
  kill -TERM "$worker"
  wait "$worker"
  code=$?
  [ "$code" = 0 ] || die "after SIGTERM the worker exited $code: $(cat "$tmp/term.err")"
}

# SIGTERM: the job in flight finishes, the worker exits 0.
sigterm_while slow
[ -e "$tmp/out/$job" ] || die "the job in flight at SIGTERM did not finish"
expect_counts q 0 0 0 3
pass "SIGTERM let the job in flight finish, and the worker exited 0"

# SIGTERM with a job that outlives --grace: released, its attempt not counted.
sigterm_while hang-once --grace 0.5 --kill-after 1
expect_counts q 1 0 0 3
sq jobs --json --state ready q >"$tmp/ready" || die "jobs"
grep -q "\"id\":$job,.*\"attempts\":0" "$tmp/ready" ||
  die "the released job counts an attempt: $(cat "$tmp/ready")"
pass "SIGTERM released the job that outlived --grace, its attempt not counted"
