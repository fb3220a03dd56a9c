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
