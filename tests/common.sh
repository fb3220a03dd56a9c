# tests/common.sh -- the setup every shell test shares, sourced by
# tests/cli/lib.sh and tests/crash/lib.sh.
#
# It checks that $SQLQ names the sqlq binary (else exits 2), makes a private
# temporary directory ($tmp, removed at exit) with a database URL
# ($url, sqlite:$tmp/t.db), kills the background processes listed in
# bg_pids at exit, and defines `sq ARGS`, the tool on that database, and the
# waiting helpers wait_until, wait_for_file, alive and wait_gone.  (Run
# "$SQLQ" --url "$url" directly for a background process whose pid is
# needed: `sq ... &` would be a subshell.)

set -u

if [ -z "${SQLQ:-}" ] || [ ! -x "$SQLQ" ]; then
  echo "FAIL: set SQLQ to the sqlq binary" >&2
  exit 2
fi

tmp=$(mktemp -d)
url="sqlite:$tmp/t.db"
bg_pids=()

cleanup() {
  local pid
  for pid in "${bg_pids[@]}"; do
    kill -9 "$pid" 2>/dev/null
  done
  wait 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

sq() {
  "$SQLQ" --url "$url" "$@"
}

# wait_until SECONDS CMD...: run CMD every 0.1 s until it succeeds; 1 when
# it never did within SECONDS.
wait_until() {
  local tries=$(($1 * 10))
  shift
  until "$@"; do
    tries=$((tries - 1))
    [ "$tries" -gt 0 ] || return 1
    sleep 0.1
  done
}

# wait_for_file PATH [SECONDS]: wait until PATH exists and is not empty (10 s
# at most by default).
wait_for_file() {
  local path=$1 tries=$((${2:-10} * 10))
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
