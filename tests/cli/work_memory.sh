# tests/cli/work_memory.sh -- sqlq work keeps its own memory flat: over
# 10,000 jobs after a warm-up of 2,000, its VmRSS and VmData (from
# /proc/PID/status) grow by less than 256 KiB, so a leak of 27 bytes a job
# or more fails.  (It once grew by about 63 bytes a job, setting the job's
# variables in its own environment.)  Each job is a process: 10,000 keep
# the test's time in bounds (20,000 took 340 s on a loaded CI machine).  The
# jobs come in rounds of 1,000, each pushed once the last is done, so that
# the database stays small: SQLite's page cache, up to 2 MB, would
# otherwise grow with it.
. "$(dirname "$0")/lib.sh"

# Under AddressSanitizer the figures are its allocator's (freed memory is
# held in quarantine): nothing to measure.
if ldd "$SQLQ" 2>/dev/null | grep -q libasan; then
  echo "skipped: $SQLQ is built with AddressSanitizer"
  exit 0
fi

sq init >/dev/null

# vm PID FIELD: FIELD (VmRSS, VmData) of the process's status, in KiB.
vm() {
  awk -v field="$2:" '$1 == field {print $2}' "/proc/$1/status"
}

# rounds N: push N rounds of 1,000 jobs, each once queue m has no ready or
# running job, and wait for the last (10 minutes a round at most).
rounds() {
  local round tries
  for ((round = 0; round < $1; round++)); do
    seq 1 1000 | sq push --lines m >/dev/null
    tries=600
    until sq stats --json m | grep -q '"ready":0,"scheduled":0,"running":0,' || [ "$tries" -le 0 ]; do
      tries=$((tries - 1))
      sleep 1
    done
    [ "$tries" -gt 0 ] || return 1
  done
}

"$SQLQ" --url "$url" work -c 4 m -- true 2>"$tmp/work.err" &
worker=$!
bg_pids+=("$worker")
rounds 2 || fail "the warm-up jobs did not run"
rss=$(vm "$worker" VmRSS) data=$(vm "$worker" VmData)
rounds 10 || fail "the jobs did not run"
checks=$((checks + 1))
alive "$worker" || fail "the worker died"
grown_rss=$(($(vm "$worker" VmRSS) - rss)) grown_data=$(($(vm "$worker" VmData) - data))
echo "over 10,000 jobs: VmRSS grew by $grown_rss KiB, VmData by $grown_data KiB"
checks=$((checks + 2))
[ "$grown_rss" -lt 256 ] || fail "VmRSS grew by $grown_rss KiB over 10,000 jobs"
[ "$grown_data" -lt 256 ] || fail "VmData grew by $grown_data KiB over 10,000 jobs"
kill -TERM "$worker"
wait_gone 20 "$worker" || fail "the worker did not exit after SIGTERM"
wait "$worker"
expect_eq "the worker exits 0" $? 0
expect_eq "the worker said nothing" "$(cat "$tmp/work.err")" ""

finish
