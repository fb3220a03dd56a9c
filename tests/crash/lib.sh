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

# wait_for_file PATH SECONDS: wait until PATH exists and is not empty.
wait_for_file() {
  local path=$1 tries=$(($2 * 10))
  while [ ! -s "$path" ] && [ "$tries" -gt 0 ]; do
    sleep 0.1
    tries=$((tries - 1))
  done
  [ -s "$path" ]
}

# alive PID: the process exists and is not a zombie (a zombie has died; it
# only waits for a parent that may never reap it).
alive() {
  local state
  [ -r "/proc/$1/stat" ] || return 1
  state=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)
  [ -n "$state" ] && [ "$state" != "Z" ]
}

# descendants PID: PID's children, grandchildren, ... (from /proc, so that
# no procps is needed).
descendants() {
  local stat pid ppid
  for stat in /proc/[0-9]*/stat; do
    pid=${stat#/proc/}
    pid=${pid%/stat}
    ppid=$(sed 's/^.*) //' "$stat" 2>/dev/null | cut -d' ' -f2)
    if [ "$ppid" = "$1" ]; then
      echo "$pid"
      descendants "$pid"
    fi
  done
}

# wait_gone SECONDS PID...: wait until none of the processes is alive.
wait_gone() {
  local tries=$(($1 * 10)) pid any
  shift
  while [ "$tries" -gt 0 ]; do
    any=0
    for pid in "$@"; do
      if alive "$pid"; then any=1; fi
    done
    [ "$any" = 0 ] && return 0
    sleep 0.1
    tries=$((tries - 1))
  done
  return 1
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
