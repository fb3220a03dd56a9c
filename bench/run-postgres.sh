#!/usr/bin/env bash
# run-postgres.sh -- the PostgreSQL measurements of docs/benchmarks.md.
#
# Usage: bench/run-postgres.sh [PATH/TO/sqlq]
#
# Starts a throwaway PostgreSQL server (tests/servers/postgres.sh, on port
# $PG_PORT, default 25440, with PostgreSQL's durable defaults: fsync and
# synchronous_commit on), then runs each measurement RUNS times (default 3)
# and prints the median of each figure as a Markdown table on stdout:
#   (a) sqlq bench: JOBS jobs (default 50000), batch 100, 4 worker threads
#   (b) batch 1: JOBS_B1 jobs (default 10000), 4 workers, 4 producers
#   (c) wake-up latency of idle workers: threads, then --processes
#   (d) what an idle `sqlq work` costs the server: the database's committed
#       and rolled-back transactions over IDLE_S seconds (default 60) with
#       one idle worker, less those of as long a window without it
# The server is stopped at the end.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SQLQ=${1:-${SQLQ:-build/sqlq}}
RUNS=${RUNS:-3}
JOBS=${JOBS:-50000}
JOBS_B1=${JOBS_B1:-10000}
IDLE_S=${IDLE_S:-60}
LATENCY_SAMPLES=${LATENCY_SAMPLES:-200}
PG_PORT=${PG_PORT:-25440}
server="$here/../tests/servers/postgres.sh"

if [[ ! -x $SQLQ ]]; then
  echo "run-postgres.sh: no sqlq binary at '$SQLQ' (build it, or pass its path)" >&2
  exit 64
fi
# shellcheck source=bench/lib.sh
source "$here/lib.sh"
bench_name=run-postgres.sh

bash "$server" start "$PG_PORT" >&2
trap 'bash "$server" stop "$PG_PORT" >&2' EXIT
SQLQ_URL=$(bash "$server" url "$PG_PORT")
export SQLQ_URL
"$SQLQ" init >/dev/null

# transactions: the database's transactions so far.
transactions() {
  psql -XAt "$SQLQ_URL" -c "SELECT xact_commit + xact_rollback FROM pg_stat_database
                            WHERE datname = current_database()"
}

# idle_cost: the transactions per second one idle `sqlq work` adds over
# IDLE_S s (its look every 30 s included), less those of as long a window
# without it.  The tables are vacuumed and analyzed first, so that
# autovacuum has nothing left to do in either window.
idle_cost() {
  local t0 t1 t2 t3 worker
  psql -XAtq "$SQLQ_URL" -c "VACUUM ANALYZE sqlq_jobs, sqlq_queues, sqlq_jobs_history"
  t0=$(transactions)
  sleep "$IDLE_S"
  t1=$(transactions)
  "$SQLQ" work bench-idle -- true 2>/dev/null &
  worker=$!
  sleep 2
  t2=$(transactions)
  sleep "$IDLE_S"
  t3=$(transactions)
  kill "$worker"
  wait "$worker" 2>/dev/null || true
  python3 -c "print(f'{max(0, ($t3 - $t2) - ($t1 - $t0)) / $IDLE_S:.3f}')"
}

# Each run starts, as pgbench's do, on a vacuumed table: the dead index
# entries the runs before left would otherwise slow its claims down, by as
# much as the jobs those runs ran (see docs/postgres.md, "VACUUM").
before_run() { psql -XAtq "$SQLQ_URL" -c "VACUUM sqlq_jobs"; }

pg_setting() { psql -XAt "$SQLQ_URL" -c "SHOW $1"; }

a_args=(bench --jobs "$JOBS" --workers 4 --batch 100 --json --latency-samples 0)
b_args=(bench --jobs "$JOBS_B1" --workers 4 --producers 4 --batch 1 --json --latency-samples 0)
lat_args=(bench --jobs 1000 --workers 4 --batch 100 --json --latency-samples "$LATENCY_SAMPLES")

machine "- PostgreSQL: $(pg_setting server_version), fsync $(pg_setting fsync), synchronous_commit $(pg_setting synchronous_commit), on 127.0.0.1"
say "(a) $JOBS jobs, batch 100, 4 workers"
a=$(repeat "$SQLQ" "${a_args[@]}")
say "(b) $JOBS_B1 jobs, batch 1, 4 workers, 4 producers"
b=$(repeat "$SQLQ" "${b_args[@]}")
say "(c) idle wake-up latency, threads and processes"
c_thr=$(repeat "$SQLQ" "${lat_args[@]}")
c_proc=$(repeat "$SQLQ" "${lat_args[@]}" --processes)
say "(d) an idle worker, ${IDLE_S} s with and without it"
idle_tx=$(idle_cost)

a_jobs=$(median "$a" jobs_per_s)
b_jobs=$(median "$b" jobs_per_s)
lat() { echo "$(median "$1" latency_ms.p50 3) / $(median "$1" latency_ms.p90 3) / $(median "$1" latency_ms.p99 3) ms"; }
p50=$(num "$(median "$c_thr" latency_ms.p50 3)")
p99=$(num "$(median "$c_thr" latency_ms.p99 3)")

echo "## Results (PostgreSQL)"
echo
echo "Load average after the runs: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)."
echo
echo "| | Measurement | Command | Median of $RUNS | Target | Result |"
echo "|---|---|---|---|---|---|"
echo "| a | $JOBS jobs, batch 100, 4 worker threads | \`sqlq ${a_args[*]}\` | $a_jobs jobs/s end to end (enqueue $(median "$a" enqueue_per_s) jobs/s) | >= 20,000 jobs/s | $(check "$(num "$a_jobs") >= 20000") |"
echo "| b | $JOBS_B1 jobs, batch 1, 4 worker threads, 4 producers | \`sqlq ${b_args[*]}\` | $b_jobs jobs/s end to end (enqueue $(median "$b" enqueue_per_s) jobs/s) | >= 3,000 jobs/s | $(check "$(num "$b_jobs") >= 3000") |"
echo "| c | idle wake-up latency, worker threads (p50 / p90 / p99) | \`sqlq ${lat_args[*]}\` | $(lat "$c_thr") | p50 < 2 ms, p99 < 10 ms | $(check "$p50 < 2 and $p99 < 10") |"
echo "| c | idle wake-up latency, worker processes (p50 / p90 / p99) | \`sqlq ${lat_args[*]} --processes\` | $(lat "$c_proc") | | |"
echo "| d | server transactions per second of one idle \`sqlq work\` | \`sqlq work bench-idle -- true\`, ${IDLE_S} s | $idle_tx tx/s | < 0.2 tx/s | $(check "$idle_tx < 0.2") |"
