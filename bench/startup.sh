#!/usr/bin/env bash
# startup.sh -- what it costs to start sqlq (docs/benchmarks.md, "Start-up").
#
# Usage: bench/startup.sh [PATH/TO/sqlq]
#
# Times two pairs, each as a loop of LOOP runs (default 200) of one process
# after another, and prints the loops' wall-clock and CPU times (user and
# system, of every process of the loop) as a Markdown table:
#   (a) `sqlq --version` against bench/startup/hello_sqlite.c, a program
#       that links only libsqlite3 (built here with cc);
#   (b) `sqlq lock -n x -- true` on a SQLite database against
#       `flock -n FILE true` (util-linux).
# The two loops of a pair alternate, ROUNDS times (default 5), and the
# table gives the median loop of each (per run) and the median of the
# round-by-round ratios, so that a drift of the machine's speed hits both
# sides alike.
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

# loop_ms CMD...: "WALL CPU", the milliseconds of wall-clock time and of
# CPU time (user and system, of every process) that LOOP runs of CMD take,
# one after another.  On a shared machine the CPU time is the steadier.
loop_ms() {
  local i TIMEFORMAT='%R %U %S' t wall user sys
  t=$({ time for ((i = 0; i < LOOP; i++)); do "$@" >/dev/null; done; } 2>&1)
  read -r wall user sys <<<"$t"
  python3 -c 'import sys; w, u, s = map(float, sys.argv[1:]); print(round(w * 1000), round((u + s) * 1000))' "$wall" "$user" "$sys"
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
  python3 - "$name" "$LOOP" "$(printf '%s,' "${as[@]}")" "$(printf '%s,' "${bs[@]}")" <<'PY'
import statistics, sys
name, loop = sys.argv[1], int(sys.argv[2])
a = [tuple(map(int, x.split())) for x in sys.argv[3].split(",") if x]
b = [tuple(map(int, x.split())) for x in sys.argv[4].split(",") if x]
cells = []
for k in (0, 1):  # wall, then CPU
    ratio = statistics.median(x[k] / y[k] for x, y in zip(a, b))
    cells += [f"{statistics.median(x[k] for x in a) / loop:.2f}",
              f"{statistics.median(y[k] for y in b) / loop:.2f}", f"{ratio:.2f}"]
print(f"| {name} | " + " | ".join(cells) + " |")
PY
}

echo "Machine: $(nproc) CPUs, $(uname -sr), load $(cut -d' ' -f1-3 /proc/loadavg); $LOOP runs a loop, $ROUNDS rounds"
echo
echo "| pair (A vs B) | A wall ms/run | B wall ms/run | A/B wall | A CPU ms/run | B CPU ms/run | A/B CPU |"
echo "|---|---:|---:|---:|---:|---:|---:|"
pair "sqlq --version vs hello_sqlite" :: "$SQLQ" --version :: "$tmp/hello_sqlite"
pair "sqlq lock -n x -- true vs flock -n FILE true" :: \
  "$SQLQ" --url "sqlite:$tmp/lock.db" lock -n x -- true :: flock -n "$tmp/flock" true
