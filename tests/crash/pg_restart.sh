# tests/crash/pg_restart.sh -- restart the PostgreSQL server under load.
#
# Two producers push 300 jobs one `sqlq push` at a time (a push that fails
# while the server is away is tried again), three `sqlq work` workers run
# them, and the server is restarted with `pg_ctl restart -m fast` while
# both sides are busy.  Every job must be run at least once (a job whose
# commit or ack was cut off may run twice), and the queue must end empty,
# with the workers still running: they reconnect by themselves.
#
# Needs SQLQ_TEST_PG_URL, SQLQ_TEST_PG_SERVER and SQLQ_TEST_PG_PORT (set by
# tests/CMakeLists.txt for the postgres fixture).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ -n "${SQLQ_TEST_PG_URL:-}" ] || die "SQLQ_TEST_PG_URL is not set"
url=$SQLQ_TEST_PG_URL
q="restart-$$"
jobs=300

sq init >/dev/null || die "init"
sq purge "$q" >/dev/null 2>&1

# produce FIRST STEP: push jobs FIRST, FIRST+STEP, ... up to $jobs, each
# until it is stored.
produce() {
  local i=$1 tries
  while [ "$i" -le "$jobs" ]; do
    tries=0
    until "$SQLQ" --url "$url" push "$q" "job-$i" >/dev/null 2>>"$tmp/producer.log"; do
      tries=$((tries + 1))
      [ "$tries" -lt 300 ] || { echo "job-$i never stored" >>"$tmp/producer.log"; return 1; }
      sleep 0.1
    done
    i=$((i + $2))
  done
}

for w in 1 2 3; do
  "$SQLQ" --url "$url" work --lease 5 --backoff 0 "$q" -- \
    sh -c 'cat >> "$0"; echo >> "$0"' "$tmp/done.$w" >"$tmp/worker.$w.log" 2>&1 &
  bg_pids+=("$!")
  workers+=("$!")
done
produce 1 2 &
p1=$!
produce 2 2 &
p2=$!
bg_pids+=("$p1" "$p2")

# Restart once the workers have run some jobs, while the producers go on.
tries=0
until [ "$(cat "$tmp"/done.* 2>/dev/null | wc -l)" -ge 60 ]; do
  tries=$((tries + 1))
  [ "$tries" -lt 600 ] || die "the workers ran no jobs in 60 s: $(cat "$tmp"/worker.*.log)"
  sleep 0.1
done
$SQLQ_TEST_PG_SERVER restart "$SQLQ_TEST_PG_PORT" || die "the server did not restart"
before=$(cat "$tmp"/done.* | wc -l)
pass "restarted the server after $before jobs had run"

wait "$p1" || die "producer 1: $(tail -n 3 "$tmp/producer.log")"
wait "$p2" || die "producer 2: $(tail -n 3 "$tmp/producer.log")"
pass "both producers stored all their jobs"

# Every job runs: wait until the set of jobs run is complete.
tries=0
while :; do
  ran=$(cat "$tmp"/done.* | sort -u | grep -c '^job-')
  [ "$ran" -ge "$jobs" ] && break
  tries=$((tries + 1))
  [ "$tries" -lt 1200 ] || die "only $ran of $jobs jobs ran in 120 s; logs: $(tail -n 5 "$tmp"/worker.*.log)"
  sleep 0.1
done
expected=$(seq 1 "$jobs" | sed 's/^/job-/' | sort)
[ "$(cat "$tmp"/done.* | sort -u)" = "$expected" ] || die "the jobs run are not jobs 1..$jobs"
total=$(cat "$tmp"/done.* | grep -c '^job-')
pass "all $jobs jobs ran ($((total - jobs)) ran twice after the restart cut them off)"

for pid in "${workers[@]}"; do
  alive "$pid" || die "worker $pid died: $(cat "$tmp"/worker.*.log)"
done
pass "the workers outlived the restart"

# Nothing is left: no job ready, running or dead.
tries=0
until sq stats --json "$q" 2>/dev/null | grep -q '"ready":0,"scheduled":0,"running":0,"dead":0'; do
  tries=$((tries + 1))
  [ "$tries" -lt 100 ] || die "the queue is not empty: $(sq stats --json "$q")"
  sleep 0.1
done
pass "the queue is empty"
sq purge "$q" >/dev/null
