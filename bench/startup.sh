#!/usr/bin/env bash
# startup.sh -- what it costs to start sqlq (docs/benchmarks.md, "Start-up").
#
# Usage: bench/startup.sh [PATH/TO/sqlq]
#
# Times two pairs, each as a loop of LOOP runs (default 200) of one process
# after another, and prints the loops' wall times as a Markdown table:
#   (a) `sqlq --version` against bench/startup/hello_sqlite.c, a program
#       that links only libsqlite3 (built here with cc);
#   (b) `sqlq lock -n x -- true` on a SQLite database against
#       `flock -n FILE true` (util-linux).
# The two loops of a pair alternate, ROUNDS times (default 5), and the
# table gives the median loop of each and the median of the round-by-round
# ratios, so that a drift of the machine's speed hits both sides alike.
# The binary is the first argument, else $SQLQ, else build/sqlq.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SQLQ=${1:-${SQLQ:-build/sqlq}}
LOOP=${LOOP:-200}
ROUNDS=${ROUNDS:-5}
if [[ ! -x $SQLQ ]]; then
  echo "startup.sh: no sqlq binary at '$SQLQ' (build it, or pass its path)" >&2
  exit 66
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -o "$tmp/hello_sqlite" "$here/startup/hello_sqlite.c" \
  $(pkg-config --cflags --libs sqlite3)
"$SQLQ" --url "sqlite:$tmp/lock.db" init >/dev/null

# loop_ms CMD...: milliseconds that LOOP runs of CMD take, one after another.
loop_ms() {
  local i start end
  start=$(date +%s%N)
  for ((i = 0; i < LOOP; i++)); do "$@" >/dev/null; done
  end=$(date +%s%N)
  echo $(((end - start) / 1000000))
}

# pair NAME :: A... :: B...: ROUNDS alternating loops of A and of B (after
# one warm-up run each); prints a table row with the median loop of each
# (as ms per run) and the median ratio A/B.
pair() {
  local name=$1 a=() b=() as=() bs=() r
  shift 2
  while [[ $1 != :: ]]; do a+=("$1"); shift; done
  shift
  b=("$@")
  "${a[@]}" >/dev/null
  "${b[@]}" >/dev/null
  for ((r = 0; r < ROUNDS; r++)); do
    as+=("$(loop_ms "${a[@]}")")
    bs+=("$(loop_ms "${b[@]}")")
  done
  python3 - "$name" "$LOOP" "${as[*]}" "${bs[*]}" <<'PY'
import statistics, sys
name, loop = sys.argv[1], int(sys.argv[2])
a = [int(x) for x in sys.argv[3].split()]
b = [int(x) for x in sys.argv[4].split()]
ratio = statistics.median(x / y for x, y in zip(a, b))
print(f"| {name} | {statistics.median(a) / loop:.2f} | {statistics.median(b) / loop:.2f} "
      f"| {ratio:.2f} |")
PY
}

echo "Machine: $(nproc) CPUs, $(uname -sr), load $(cut -d' ' -f1-3 /proc/loadavg); $LOOP runs a loop, $ROUNDS rounds"
echo
echo "| pair (A vs B) | A ms/run | B ms/run | A/B |"
echo "|---|---:|---:|---:|"
pair "sqlq --version vs hello_sqlite" :: "$SQLQ" --version :: "$tmp/hello_sqlite"
pair "sqlq lock -n x -- true vs flock -n FILE true" :: \
  "$SQLQ" --url "sqlite:$tmp/lock.db" lock -n x -- true :: flock -n "$tmp/flock" true
