# tests/crash/lib.sh -- helpers shared by the crash tests, sourced by each
# tests/crash/NAME.sh.
#
# Each test runs as `SQLQ=/path/to/sqlq bash tests/crash/NAME.sh` and gets a
# private temporary directory ($tmp, removed at exit) holding its SQLite
# database ($url).  `sq ARGS` runs the tool on it.  A failed check prints
# "FAIL: ..." and ends the test with exit code 1.

. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"


die() {
  echo "FAIL: $*" >&2
  exit 1
}

pass() {
  echo "PASS: $*"
}

# descendants PID: PID's children, grandchildren, ... (from /proc, so that
# no procps is needed).  Shell builtins only: a fork per process listed
# made one scan take seconds on a loaded machine, long enough for the
# command under test to end by itself before it was looked at.
descendants() {
  local stat pid line fields
  for stat in /proc/[0-9]*/stat; do
    read -r line 2>/dev/null <"$stat" || continue
    # After the command name's closing ") ": the state, then the parent.
    read -r -a fields <<<"${line##*) }"
    if [ "${fields[1]:-}" = "$1" ]; then
      pid=${stat#/proc/}
      pid=${pid%/stat}
      echo "$pid"
      descendants "$pid"
    fi
  done
}


# wait_empty QUEUE: wait (10 s at most) until QUEUE has no job ready,
# scheduled, running or dead.
wait_empty() {
  local tries=0
  until sq stats --json "$1" 2>/dev/null | grep -q '"ready":0,"scheduled":0,"running":0,"dead":0'; do
    tries=$((tries + 1))
    [ "$tries" -lt 100 ] || die "queue $1 is not empty: $(sq stats --json "$1")"
    sleep 0.1
  done
}

# push_until_stored URL QUEUE PAYLOAD: push, trying again for 90 s (a
# restart on a loaded machine took over 30), the failures logged in
# $tmp/producer.log; a payload tried again goes to $tmp/retried (its first
# try may have been stored).
push_until_stored() {
  local tries=0
  until "$SQLQ" --url "$1" push "$2" "$3" >/dev/null 2>>"$tmp/producer.log"; do
    echo "$3" >>"$tmp/retried"
    tries=$((tries + 1))
    [ "$tries" -lt 900 ] || { echo "$3 never stored" >>"$tmp/producer.log"; return 1; }
    sleep 0.1
  done
}

# expect_counts QUEUE READY SCHEDULED RUNNING DEAD: sqlq stats agrees.
expect_counts() {
  local got want
  got=$(sq stats --json "$1") || die "stats $1 failed"
  want="\"ready\":$2,\"scheduled\":$3,\"running\":$4,\"dead\":$5"
  case "$got" in
    *"$want"*) ;;
    *) die "stats of $1: $got, expected $want" ;;
  esac
}

# restart_under_load URL RESTART_CMD...: restart a database server under
# load.  Two producers push 300 jobs one `sqlq push` at a time (each with
# push_until_stored), three `sqlq work` workers
# run them, and RESTART_CMD restarts the server while both sides are busy.
# Every job must be run at least once (a job whose commit or ack was cut
# off may run twice), and the queue must end empty, with the workers still
# running: they reconnect by themselves.
restart_under_load() {
  local url=$1 q="restart-$$" jobs=300 tries before ran expected total pid p1 p2 w
  local -a workers=()
  shift
  sq init >/dev/null || die "init"
  sq purge "$q" >/dev/null 2>&1

  # produce FIRST STEP: push jobs FIRST, FIRST+STEP, ... up to $jobs, each
  # until it is stored.
  produce() {
    local i=$1
    while [ "$i" -le "$jobs" ]; do
      push_until_stored "$url" "$q" "job-$i" || return 1
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
  "$@" || die "the server did not restart"
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
  wait_empty "$q"
  pass "the queue is empty"
  sq purge "$q" >/dev/null
}
