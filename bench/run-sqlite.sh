#!/usr/bin/env bash
# run-sqlite.sh -- the SQLite measurements of docs/benchmarks.md.
#
# Usage: bench/run-sqlite.sh [PATH/TO/sqlq]
#
# Runs, on SQLite, each measurement RUNS times (default 3) and prints the
# median of each figure as a Markdown table on stdout, after a short
# description of the machine:
#   (a) sqlq bench: 100000 jobs, batch 100, 2 worker threads
#   (b) bench/sqlite_plain.py with the same settings (and with --sqlq-extras)
#   (c) wake-up latency of idle workers: threads, then --processes
#   (d) throughput with a backlog of 1000 and of 1000000 jobs
#
# The binary is the first argument, else $SQLQ, else build/sqlq.  Every run
# works on a fresh database in a temporary directory under $BENCH_TMPDIR
# (default $TMPDIR, else /tmp): put it on the disk you mean to measure.
# Environment knobs: RUNS, JOBS (default 100000), BACKLOG_BIG (default
# 1000000), LATENCY_SAMPLES (default 200).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SQLQ=${1:-${SQLQ:-build/sqlq}}
RUNS=${RUNS:-3}
JOBS=${JOBS:-100000}
BACKLOG_BIG=${BACKLOG_BIG:-1000000}
LATENCY_SAMPLES=${LATENCY_SAMPLES:-200}
PLAIN="$here/sqlite_plain.py"

if [[ ! -x $SQLQ ]]; then
  echo "run-sqlite.sh: no sqlq binary at '$SQLQ' (build it, or pass its path)" >&2
  exit 64
fi
# The default URL makes `sqlq bench` use a fresh temporary SQLite file.
unset SQLQ_URL
export TMPDIR=${BENCH_TMPDIR:-${TMPDIR:-/tmp}}

# shellcheck source=bench/lib.sh
source "$here/lib.sh"
bench_name=run-sqlite.sh


# The exact argument lists of each measurement, printed in the table too.
common=(--jobs "$JOBS" --workers 2 --batch 100 --json)
a_args=(bench "${common[@]}" --latency-samples 0)
lat_args=(bench --jobs 1000 --workers 2 --batch 100 --json --latency-samples "$LATENCY_SAMPLES")
d1_args=("${a_args[@]}" --backlog 1000)
d2_args=("${a_args[@]}" --backlog "$BACKLOG_BIG")

sqlite_version=$(pkg-config --modversion sqlite3 2>/dev/null ||
  python3 -c 'import sqlite3; print(sqlite3.sqlite_version)')
machine "- SQLite: $sqlite_version" \
  "- Database directory: $TMPDIR ($(df -PT "$TMPDIR" | awk 'NR == 2 {print $2 " on " $1}'))"

say "(a) sqlq bench, $JOBS jobs, batch 100, 2 workers"
a=$(repeat "$SQLQ" "${a_args[@]}")
say "(b) plain SQLite (Python), same settings"
b=$(repeat python3 "$PLAIN" "${common[@]}")
b_extras=$(repeat python3 "$PLAIN" "${common[@]}" --sqlq-extras)
say "(c) idle wake-up latency, threads and processes"
c_thr=$(repeat "$SQLQ" "${lat_args[@]}")
c_proc=$(repeat "$SQLQ" "${lat_args[@]}" --processes)
say "(d) backlog 1000 and $BACKLOG_BIG"
d_small=$(repeat "$SQLQ" "${d1_args[@]}")
d_big=$(repeat "$SQLQ" "${d2_args[@]}")

a_jobs=$(median "$a" jobs_per_s)
a_enq=$(median "$a" enqueue_per_s)
b_jobs=$(median "$b" jobs_per_s)
b_enq=$(median "$b" enqueue_per_s)
bx_jobs=$(median "$b_extras" jobs_per_s)
bx_enq=$(median "$b_extras" enqueue_per_s)
d1=$(median "$d_small" jobs_per_s)
d2=$(median "$d_big" jobs_per_s)
lat() { echo "$(median "$1" latency_ms.p50 3) / $(median "$1" latency_ms.p90 3) / $(median "$1" latency_ms.p99 3) ms"; }
load_after=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
ratio=$(python3 -c "print(f'{$(num "$d2") / $(num "$d1"):.2f}')")

echo "## Results (SQLite)"
echo
echo "Load average after the runs: $load_after (other processes on the machine skew the figures)."
echo
echo "| | Measurement | Command | Median of $RUNS | Target | Result |"
echo "|---|---|---|---|---|---|"
echo "| a | sqlq, $JOBS jobs, batch 100, 2 worker threads | \`sqlq ${a_args[*]}\` | $a_jobs jobs/s end to end (enqueue $a_enq jobs/s) | >= 50,000 jobs/s | $(check "$(num "$a_jobs") >= 50000") |"
echo "| b | plain SQLite from Python, same settings | \`bench/sqlite_plain.py ${common[*]}\` | $b_jobs jobs/s end to end (enqueue $b_enq jobs/s) | reference | |"
echo "| b | plain SQLite, plus the statements of sqlq's other features | \`bench/sqlite_plain.py ${common[*]} --sqlq-extras\` | $bx_jobs jobs/s end to end (enqueue $bx_enq jobs/s) | reference | |"
echo "| c | idle wake-up latency, worker threads (p50 / p90 / p99) | \`sqlq ${lat_args[*]}\` | $(lat "$c_thr") | p50 < 1 ms | $(check "$(num "$(median "$c_thr" latency_ms.p50 3)") < 1") |"
echo "| c | idle wake-up latency, worker processes (p50 / p90 / p99) | \`sqlq ${lat_args[*]} --processes\` | $(lat "$c_proc") | p50 < 10 ms | $(check "$(num "$(median "$c_proc" latency_ms.p50 3)") < 10") |"
echo "| d | backlog of 1000 jobs | \`sqlq ${d1_args[*]}\` | $d1 jobs/s | | |"
echo "| d | backlog of $BACKLOG_BIG jobs | \`sqlq ${d2_args[*]}\` | $d2 jobs/s (x$ratio) | within 20% of backlog 1000 | $(check "0.8 <= $ratio <= 1.2") |"
