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


# only_transient_failures LOG...: the workers that wrote the logs took every
# failure of the database for what it was, the database going away: each
# said so ("...; retrying", or a finish given up after a whole lease), and
# none was reported as final by a call that does not stop the worker (the
# calls that do stop it leave a dead worker, checked with alive).
only_transient_failures() {
  local final
  final=$(grep -hE '^sqlq: (ack|release|fail|touch): ' "$@")
  [ -z "$final" ] || die "a worker took a failure for final: $final"
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
  only_transient_failures "$tmp"/worker.*.log
  pass "the workers outlived the restart"

  # Nothing is left: no job ready, running or dead.
  wait_empty "$q"
  pass "the queue is empty"
  sq purge "$q" >/dev/null
}

# restarts_in_a_row URL RESTARTS RESTART_CMD...: restart a database server
# RESTARTS times in a row, each restart as soon as the last one returned
# (the server takes connections again, but may not be done starting), under
# two `sqlq work` workers, neither of which may exit:
#  - an idle one, waiting on an empty queue the whole time: it must run a
#    job pushed after the last restart, within 90 s;
#  - a busy one (4 commands at once, each 1 s) on a queue that a producer
#    keeps pushing to through the restarts, each push tried until it is
#    stored; each restart begins while one of its commands runs.
# Each run of a command is recorded as "PAYLOAD ID ATTEMPT".  Every job
# pushed runs; no job runs twice in one attempt (a job whose lease ran out
# while the server was away runs again, with a higher attempt: those are
# counted); a payload is stored under two ids only when its push was tried
# again.  Both queues end empty: nothing ready, scheduled, running or dead.
restarts_in_a_row() {
  local url=$1 restarts=$2 qi="idle-$$" qb="busy-$$" i tries pushed ran reruns idle_pid busy_pid p
  # The command of both: FILE.running.ID exists while it runs.
  local run='touch "$0.running.$SQLQ_JOB_ID"; p=$(cat); sleep "$1"
    echo "$p $SQLQ_JOB_ID $SQLQ_ATTEMPT" >>"$0"; rm -f "$0.running.$SQLQ_JOB_ID"'
  shift 2
  sq init >/dev/null || die "init"
  sq purge "$qi" >/dev/null 2>&1
  sq purge "$qb" >/dev/null 2>&1

  # wait_ran FILE PAYLOAD SECONDS: wait until FILE records a run of PAYLOAD.
  wait_ran() {
    local tries=$(($3 * 10))
    until grep -q "^$2 " "$1" 2>/dev/null; do
      tries=$((tries - 1))
      [ "$tries" -gt 0 ] || return 1
      sleep 0.1
    done
  }
  # produce: push job-1, job-2, ... to the busy queue until $tmp/stop
  # exists, then write how many to $tmp/pushed.
  produce() {
    local n=0
    while [ ! -e "$tmp/stop" ]; do
      n=$((n + 1))
      push_until_stored "$url" "$qb" "job-$n" || return 1
      sleep 0.05
    done
    echo "$n" >"$tmp/pushed"
  }
  workers_alive() {
    alive "$idle_pid" || die "the idle worker died $1: $(tail -n 5 "$tmp/idle.log")"
    alive "$busy_pid" || die "the busy worker died $1: $(tail -n 5 "$tmp/busy.log")"
  }

  "$SQLQ" --url "$url" work --lease 5 "$qi" -- sh -c "$run" "$tmp/idle.runs" 0 \
    >"$tmp/idle.log" 2>&1 &
  idle_pid=$!
  "$SQLQ" --url "$url" work --lease 5 -c 4 "$qb" -- sh -c "$run" "$tmp/busy.runs" 1 \
    >"$tmp/busy.log" 2>&1 &
  busy_pid=$!
  bg_pids+=("$idle_pid" "$busy_pid")
  # The idle worker has run a job, and waits for the next.
  sq push "$qi" warm-up >/dev/null || die "push warm-up"
  wait_ran "$tmp/idle.runs" warm-up 60 || die "the idle worker ran no job in 60 s: $(cat "$tmp/idle.log")"
  produce &
  p=$!
  bg_pids+=("$p")
  # The busy worker is busy.
  tries=0
  until [ "$(cat "$tmp/busy.runs" 2>/dev/null | wc -l)" -ge 4 ]; do
    tries=$((tries + 1))
    [ "$tries" -lt 600 ] || die "the busy worker ran no jobs in 60 s: $(cat "$tmp/busy.log")"
    sleep 0.1
  done

  for i in $(seq "$restarts"); do
    tries=0
    until compgen -G "$tmp/busy.runs.running.*" >/dev/null; do
      tries=$((tries + 1))
      [ "$tries" -lt 600 ] || die "restart $i: the busy worker ran nothing for 60 s: $(tail -n 5 "$tmp/busy.log")"
      sleep 0.1
    done
    "$@" || die "restart $i: the server did not restart"
    workers_alive "at restart $i"
    echo "restart $i done at ${SECONDS}s"
  done
  pass "restarted the server $restarts times in a row (at ${SECONDS}s); both workers are running"

  # The idle worker runs a job pushed now.
  push_until_stored "$url" "$qi" after-restarts || die "cannot push: $(tail -n 3 "$tmp/producer.log")"
  wait_ran "$tmp/idle.runs" after-restarts 90 ||
    die "the idle worker did not run the job pushed after the restarts in 90 s: $(tail -n 5 "$tmp/idle.log")"
  pass "the idle worker ran the job pushed after the restarts (at ${SECONDS}s)"

  touch "$tmp/stop"
  wait "$p" || die "the producer failed: $(tail -n 3 "$tmp/producer.log")"
  pushed=$(cat "$tmp/pushed")
  # Every payload ran (wait for the backlog: 120 s at most).
  tries=0
  while :; do
    ran=$(cut -d' ' -f1 "$tmp/busy.runs" | sort -u | grep -c '^job-')
    [ "$ran" -ge "$pushed" ] && break
    tries=$((tries + 1))
    [ "$tries" -lt 1200 ] || die "only $ran of $pushed jobs ran in 120 s: $(tail -n 5 "$tmp/busy.log")"
    sleep 0.1
  done
  [ "$(cut -d' ' -f1 "$tmp/busy.runs" | sort -u)" = "$(seq 1 "$pushed" | sed 's/^/job-/' | sort)" ] ||
    die "the jobs run are not jobs 1..$pushed"
  workers_alive "after the restarts"
  only_transient_failures "$tmp/idle.log" "$tmp/busy.log"
  # No job ran twice in one attempt.
  p=$(cut -d' ' -f2,3 "$tmp/busy.runs" "$tmp/idle.runs" | sort | uniq -d)
  [ -z "$p" ] || die "ran twice in one attempt (job id, attempt): $p"
  # A payload under two ids: only when its push was tried again.
  for p in $(sort -u "$tmp/busy.runs" | cut -d' ' -f1,2 | sort -u | cut -d' ' -f1 | uniq -d); do
    grep -qx "$p" "$tmp/retried" 2>/dev/null || die "$p was stored twice, yet pushed once"
  done
  reruns=$(awk '$3 > 1' "$tmp/busy.runs" | wc -l)
  pass "all $pushed jobs ran (at ${SECONDS}s), none twice in one attempt; $reruns runs were retries after a lease ran out"

  wait_empty "$qi"
  wait_empty "$qb"
  pass "both queues are empty"
  kill -TERM "$idle_pid" "$busy_pid"
  wait "$idle_pid" || die "the idle worker exited $? on SIGTERM: $(tail -n 5 "$tmp/idle.log")"
  wait "$busy_pid" || die "the busy worker exited $? on SIGTERM: $(tail -n 5 "$tmp/busy.log")"
  pass "both workers exit 0 on SIGTERM"
  sq purge "$qi" >/dev/null
  sq purge "$qb" >/dev/null
}
