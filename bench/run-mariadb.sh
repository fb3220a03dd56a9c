#!/usr/bin/env bash
# run-mariadb.sh -- the MariaDB measurements of docs/benchmarks.md.
#
# Usage: bench/run-mariadb.sh [PATH/TO/sqlq]
#
# Starts a throwaway MariaDB server (bench/mariadb.sh, on port $MY_PORT,
# default 25468, with InnoDB's durable defaults), then runs each
# measurement RUNS times (default 3) and prints the median of each figure
# as a Markdown table on stdout:
#   (a) sqlq bench: JOBS jobs (default 50000), batch 100, 4 worker threads
#   (b) batch 1: JOBS_B1 jobs (default 10000), 4 workers, 4 producers
#   (c) wake-up latency of idle workers: threads, then --processes
#   (d) what an idle `sqlq work` costs the server: the statements per
#       second of WAITERS (default 4) idle workers over IDLE_S seconds
#       (default 60), per worker, less those of as long a window without
# The server is stopped at the end.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SQLQ=${1:-${SQLQ:-build/sqlq}}
RUNS=${RUNS:-3}
JOBS=${JOBS:-50000}
JOBS_B1=${JOBS_B1:-10000}
IDLE_S=${IDLE_S:-60}
WAITERS=${WAITERS:-4}
LATENCY_SAMPLES=${LATENCY_SAMPLES:-200}
MY_PORT=${MY_PORT:-25468}

if [[ ! -x $SQLQ ]]; then
  echo "run-mariadb.sh: no sqlq binary at '$SQLQ' (build it, or pass its path)" >&2
  exit 64
fi
# shellcheck source=bench/lib.sh
source "$here/lib.sh"
bench_name=run-mariadb.sh
# shellcheck source=bench/mariadb.sh
source "$here/mariadb.sh"

a_args=(bench --jobs "$JOBS" --workers 4 --batch 100 --json --latency-samples 0)
b_args=(bench --jobs "$JOBS_B1" --workers 4 --producers 4 --batch 1 --json --latency-samples 0)
lat_args=(bench --jobs 1000 --workers 4 --batch 100 --json --latency-samples "$LATENCY_SAMPLES")

machine "- MariaDB: $(my_sql "SELECT VERSION()"), innodb_flush_log_at_trx_commit $(my_sql "SELECT @@innodb_flush_log_at_trx_commit"), binlog off, on 127.0.0.1"
say "(a) $JOBS jobs, batch 100, 4 workers"
a=$(repeat "$SQLQ" "${a_args[@]}")
say "(b) $JOBS_B1 jobs, batch 1, 4 workers, 4 producers"
b=$(repeat "$SQLQ" "${b_args[@]}")
say "(c) idle wake-up latency, threads and processes"
c_thr=$(repeat "$SQLQ" "${lat_args[@]}")
c_proc=$(repeat "$SQLQ" "${lat_args[@]}" --processes)
say "(d) $WAITERS idle workers, ${IDLE_S} s with and without them"
idle=$(idle_cost "$WAITERS")

a_jobs=$(median "$a" jobs_per_s)
b_jobs=$(median "$b" jobs_per_s)
lat() { echo "$(median "$1" latency_ms.p50 3) / $(median "$1" latency_ms.p90 3) / $(median "$1" latency_ms.p99 3) ms"; }
p50=$(num "$(median "$c_thr" latency_ms.p50 3)")
p50_proc=$(num "$(median "$c_proc" latency_ms.p50 3)")

echo "## Results (MariaDB)"
echo
echo "Load average after the runs: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)."
echo
echo "| | Measurement | Command | Median of $RUNS | Target | Result |"
echo "|---|---|---|---|---|---|"
echo "| a | $JOBS jobs, batch 100, 4 worker threads | \`sqlq ${a_args[*]}\` | $a_jobs jobs/s end to end (enqueue $(median "$a" enqueue_per_s) jobs/s) | >= 10,000 jobs/s | $(check "$(num "$a_jobs") >= 10000") |"
echo "| b | $JOBS_B1 jobs, batch 1, 4 worker threads, 4 producers | \`sqlq ${b_args[*]}\` | $b_jobs jobs/s end to end (enqueue $(median "$b" enqueue_per_s) jobs/s) | | |"
echo "| c | idle wake-up latency, worker threads (p50 / p90 / p99) | \`sqlq ${lat_args[*]}\` | $(lat "$c_thr") | p50 < 5 ms | $(check "$p50 < 5") |"
echo "| c | idle wake-up latency, worker processes (p50 / p90 / p99) | \`sqlq ${lat_args[*]} --processes\` | $(lat "$c_proc") | p50 < 5 ms | $(check "$p50_proc < 5") |"
echo "| d | statements per second of one idle \`sqlq work\` | $WAITERS x \`sqlq work bench-idle -- true\`, ${IDLE_S} s | $idle stmt/s | < 1 stmt/s | $(check "$idle < 1") |"
