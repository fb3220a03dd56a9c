#!/usr/bin/env bash
# run-firebird.sh -- the Firebird measurements of docs/benchmarks.md.
#
# Usage: bench/run-firebird.sh [PATH/TO/sqlq]
#
# Starts a throwaway Firebird 3 server (tests/servers/firebird.sh, on port
# $FB_PORT, default 25476, events on the next port; forced writes on, the
# durable default), then runs each measurement RUNS times (default 3) and
# prints the median of each figure as a Markdown table on stdout:
#   (a) sqlq bench: JOBS jobs (default 50000), batch 100, 4 worker threads,
#       and the same with 1 and 2 workers
#   (b) batch 1: JOBS_B1 jobs (default 5000), 4 workers, 4 producers
#   (c) wake-up latency of idle workers: threads, then --processes
# The server is stopped at the end.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SQLQ=${1:-${SQLQ:-build/sqlq}}
RUNS=${RUNS:-3}
JOBS=${JOBS:-50000}
JOBS_B1=${JOBS_B1:-5000}
LATENCY_SAMPLES=${LATENCY_SAMPLES:-200}
FB_PORT=${FB_PORT:-25476}

if [[ ! -x $SQLQ ]]; then
  echo "run-firebird.sh: no sqlq binary at '$SQLQ' (build it, or pass its path)" >&2
  exit 64
fi
# shellcheck source=bench/lib.sh
source "$here/lib.sh"
bench_name=run-firebird.sh

server="$here/../tests/servers/firebird.sh"
bash "$server" start "$FB_PORT" >&2
trap 'bash "$server" stop "$FB_PORT" >&2' EXIT
SQLQ_URL=$(bash "$server" url "$FB_PORT")
export SQLQ_URL
"$SQLQ" init >/dev/null

a_args=(bench --jobs "$JOBS" --workers 4 --batch 100 --json --latency-samples 0)
b_args=(bench --jobs "$JOBS_B1" --workers 4 --producers 4 --batch 1 --json --latency-samples 0)
lat_args=(bench --jobs 1000 --workers 4 --batch 100 --json --latency-samples "$LATENCY_SAMPLES")

machine "- Firebird: $(bash "$server" sql "$FB_PORT" "SELECT RDB\$GET_CONTEXT('SYSTEM','ENGINE_VERSION') FROM RDB\$DATABASE;" | tr -d ' ' | grep -E '^[0-9]' | head -1) SuperServer, forced writes on, on 127.0.0.1"
say "(a) $JOBS jobs, batch 100, 4 workers (then 1 and 2)"
a=$(repeat "$SQLQ" "${a_args[@]}")
a1=$(repeat "$SQLQ" bench --jobs "$JOBS" --workers 1 --batch 100 --json --latency-samples 0)
a2=$(repeat "$SQLQ" bench --jobs "$JOBS" --workers 2 --batch 100 --json --latency-samples 0)
say "(b) $JOBS_B1 jobs, batch 1, 4 workers, 4 producers"
b=$(repeat "$SQLQ" "${b_args[@]}")
say "(c) idle wake-up latency, threads and processes"
c_thr=$(repeat "$SQLQ" "${lat_args[@]}")
c_proc=$(repeat "$SQLQ" "${lat_args[@]}" --processes)

a_jobs=$(median "$a" jobs_per_s)
lat() { echo "$(median "$1" latency_ms.p50 3) / $(median "$1" latency_ms.p90 3) / $(median "$1" latency_ms.p99 3) ms"; }
p50=$(num "$(median "$c_thr" latency_ms.p50 3)")
p50_proc=$(num "$(median "$c_proc" latency_ms.p50 3)")

echo "## Results (Firebird)"
echo
echo "Load average after the runs: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)."
echo
echo "| | Measurement | Command | Median of $RUNS | Target | Result |"
echo "|---|---|---|---|---|---|"
echo "| a | $JOBS jobs, batch 100, 4 worker threads | \`sqlq ${a_args[*]}\` | $a_jobs jobs/s end to end (enqueue $(median "$a" enqueue_per_s) jobs/s) | >= 5,000 jobs/s | $(check "$(num "$a_jobs") >= 5000") |"
echo "| a | the same, 1 and 2 worker threads | \`--workers 1\`, \`--workers 2\` | $(median "$a1" jobs_per_s) and $(median "$a2" jobs_per_s) jobs/s | | |"
echo "| b | $JOBS_B1 jobs, batch 1, 4 worker threads, 4 producers | \`sqlq ${b_args[*]}\` | $(median "$b" jobs_per_s) jobs/s end to end (enqueue $(median "$b" enqueue_per_s) jobs/s) | | |"
echo "| c | idle wake-up latency, worker threads (p50 / p90 / p99) | \`sqlq ${lat_args[*]}\` | $(lat "$c_thr") | p50 < 10 ms | $(check "$p50 < 10") |"
echo "| c | idle wake-up latency, worker processes (p50 / p90 / p99) | \`sqlq ${lat_args[*]} --processes\` | $(lat "$c_proc") | p50 < 10 ms | $(check "$p50_proc < 10") |"
