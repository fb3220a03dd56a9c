# tests/common.sh -- the setup every shell test shares, sourced by
# tests/cli/lib.sh and tests/crash/lib.sh.
#
# It checks that $SQLQ names the sqlq binary (else exits 2), makes a private
# temporary directory ($tmp, removed at exit) with a database URL
# ($url, sqlite:$tmp/t.db), kills the background processes listed in
# bg_pids at exit, and defines `sq ARGS`, the tool on that database.  (Run
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
