#!/usr/bin/env bash
# run-mariadb-wake.sh -- the measurements behind the choice of wake-up in
# docs/mariadb-wakeups.md.
#
# Usage: bench/run-mariadb-wake.sh [PATH/TO/sqlq]
#
# Starts a throwaway MariaDB server (bench/mariadb.sh, port $MY_PORT,
# default 25469) and prints Markdown tables on stdout:
#   1. What a KILL QUERY ID costs the killer, by what the killed statement
#      waits in: SLEEP() or GET_LOCK() on a lock another session holds.
#      Four waiters that keep their sessions, one `CALL sqlq_wake(queue,
#      4)` per round, KILLS rounds (default 10): bench/mariadb-kill-probe.c,
#      built here with cc and pkg-config libmariadb.
#   2. For each wake-up mode (URL options): the wake-up latency of idle
#      worker threads and processes (sqlq bench, median of RUNS, default 3)
#      and the statements per second of one idle `sqlq work` (WAITERS idle
#      workers, default 4, over IDLE_S seconds, default 30).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SQLQ=${1:-${SQLQ:-build/sqlq}}
RUNS=${RUNS:-3}
KILLS=${KILLS:-10}
IDLE_S=${IDLE_S:-30}
WAITERS=${WAITERS:-4}
LATENCY_SAMPLES=${LATENCY_SAMPLES:-200}
MY_PORT=${MY_PORT:-25469}

if [[ ! -x $SQLQ ]]; then
  echo "run-mariadb-wake.sh: no sqlq binary at '$SQLQ' (build it, or pass its path)" >&2
  exit 64
fi
# shellcheck source=bench/lib.sh
source "$here/lib.sh"
bench_name=run-mariadb-wake.sh
# shellcheck source=bench/mariadb.sh
source "$here/mariadb.sh"

# kill_row NAME MODE: a table row of KILLS rounds of bench/mariadb-kill-probe.c.
kill_row() {
  "$probe" "$MY_PORT" "$2" "$KILLS" | python3 -c '
import statistics, sys
name = sys.argv[1]
calls = sorted(float(line.split()[0]) for line in sys.stdin)
slow = sum(1 for x in calls if x >= 100)
print(f"| {name} | {statistics.median(calls):.2f} ms | {calls[-1]:.1f} ms | {slow} of {len(calls)} |")
' "$1"
}

probe_dir=$(mktemp -d)
probe=$probe_dir/mariadb-kill-probe
trap 'rm -rf "$probe_dir"; bash "$server" stop "$MY_PORT" >&2' EXIT
# shellcheck disable=SC2046 # pkg-config prints several flags
cc -O2 -o "$probe" "$here/mariadb-kill-probe.c" $(pkg-config --cflags --libs libmariadb)

machine "- MariaDB: $(my_sql "SELECT VERSION()"), on 127.0.0.1"
say "1. KILL of SLEEP() and of GET_LOCK() waits, $KILLS rounds each"
echo "## 1. What interrupting four waiting statements costs the killer"
echo
echo "| the waiters wait in | CALL, median | slowest | rounds of 100 ms or more |"
echo "|---|---|---|---|"
kill_row "SLEEP(5)" sleep
kill_row "GET_LOCK(name, 5), the lock held by another session" lock
echo

say "2. latency and idle statements per wake-up mode"
echo "## 2. Wake-up modes"
echo
echo "| URL options | latency, threads (p50 / p99) | latency, processes (p50 / p99) | statements/s per idle worker |"
echo "|---|---|---|---|"
base=$SQLQ_URL
for opts in "" "wake=poll&wake_interval=0.05" "wake=poll&wake_interval=0.5"; do
  SQLQ_URL="$base${opts:+?$opts}"
  lat_args=(bench --jobs 1000 --workers 4 --batch 100 --json --latency-samples "$LATENCY_SAMPLES")
  thr=$(repeat "$SQLQ" "${lat_args[@]}")
  proc=$(repeat "$SQLQ" "${lat_args[@]}" --processes)
  SQLQ_URL=$base
  idle=$(idle_cost "$WAITERS" "$opts")
  echo "| ${opts:-(defaults: wake=kill, wake_interval=2)} | $(median "$thr" latency_ms.p50 3) / $(median "$thr" latency_ms.p99 3) ms | $(median "$proc" latency_ms.p50 3) / $(median "$proc" latency_ms.p99 3) ms | $idle |"
done
