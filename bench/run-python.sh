#!/usr/bin/env bash
# run-python.sh -- the Python worker loop beside `sqlq bench`, docs/benchmarks.md
# ("The Python package").
#
# Usage: bench/run-python.sh [BUILD_DIR]
#
# BUILD_DIR (default build) holds sqlq and the shared library the package loads:
# BUILD_DIR/libsqlq.so.1 (-DBUILD_SHARED_LIBS=ON), else the tests' copy
# BUILD_DIR/tests/python/libsqlq.so.1.  On SQLite (a fresh temporary file per
# run) and on a throwaway PostgreSQL server (tests/servers/postgres.sh on
# PG_PORT, default 27120, stopped at the end), RUNS times each (default 3),
# alternating:
#   sqlq bench --jobs $JOBS --workers 2 --batch 100 --json --latency-samples 0
#   python3 bench/python_worker.py --jobs $JOBS --workers 2 --batch 100 (threads)
#   the same with --mode asyncio
# then, on PostgreSQL, the wake-up from a plain INSERT (psycopg) to the Python
# handler (python_worker.py --latency-samples $LATENCY_SAMPLES) beside sqlq
# bench's own (from sqlq_enqueue to the claim).  Prints a Markdown table of the
# medians after the machine.  JOBS default 100000, LATENCY_SAMPLES 200.
# Python is /usr/bin/python3 (Debian's, where python3-psycopg installs).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${1:-build}
RUNS=${RUNS:-3}
JOBS=${JOBS:-100000}
LATENCY_SAMPLES=${LATENCY_SAMPLES:-200}
PG_PORT=${PG_PORT:-27120}
PY=/usr/bin/python3
SQLQ=$build/sqlq
server="$here/../tests/servers/postgres.sh"
if [[ -z ${SQLQ_LIBRARY:-} ]]; then
  for lib in "$build/libsqlq.so.1" "$build/tests/python/libsqlq.so.1"; do
    if [[ -e $lib ]]; then SQLQ_LIBRARY=$(realpath "$lib"); fi
  done
fi
if [[ ! -x $SQLQ || -z ${SQLQ_LIBRARY:-} ]]; then
  echo "run-python.sh: no sqlq and libsqlq.so.1 in '$build' (build it with the tests)" >&2
  exit 64
fi
export SQLQ_LIBRARY PYTHONPATH="$here/../bindings/python" PYTHONDONTWRITEBYTECODE=1
# shellcheck source=bench/lib.sh
source "$here/lib.sh"
bench_name=run-python.sh

common=(--jobs "$JOBS" --workers 2 --batch 100)
c_args=(bench "${common[@]}" --json --latency-samples 0)
py=("$PY" "$here/python_worker.py" "${common[@]}")

# side_by_side: RUNS rounds of the C bench, the Python threads and asyncio
# loops, one after the other; sets c, t and a to the runs' JSON lines.
side_by_side() {
  local i
  c="" t="" a=""
  for ((i = 1; i <= RUNS; i++)); do
    say "  round $i/$RUNS on ${SQLQ_URL:-a temporary SQLite file}"
    if declare -F before_run >/dev/null; then before_run; fi
    c+=$("$SQLQ" "${c_args[@]}")$'\n'
    if declare -F before_run >/dev/null; then before_run; fi
    t+=$("${py[@]}" ${SQLQ_URL:+--url "$SQLQ_URL"})$'\n'
    if declare -F before_run >/dev/null; then before_run; fi
    a+=$("${py[@]}" --mode asyncio ${SQLQ_URL:+--url "$SQLQ_URL"})$'\n'
  done
}

# row BACKEND: the table's rows of one backend from c, t and a.
row() {
  local cm tm am
  cm=$(median "$c" jobs_per_s)
  tm=$(median "$t" jobs_per_s)
  am=$(median "$a" jobs_per_s)
  echo "| $1 | \`sqlq ${c_args[*]}\` | **$cm** jobs/s | |"
  echo "| $1 | \`python3 bench/python_worker.py ${common[*]}\` (threads) | **$tm** jobs/s |" \
    "$(python3 -c "print(f'{$(num "$tm")/$(num "$cm"):.2f}x')") |"
  echo "| $1 | same, \`--mode asyncio\` | **$am** jobs/s |" \
    "$(python3 -c "print(f'{$(num "$am")/$(num "$cm"):.2f}x')") |"
}

machine "- Python: $($PY --version 2>&1), libsqlq $("$SQLQ" --version | head -1)" \
  "- PostgreSQL: $(postgres --version 2>/dev/null || /usr/lib/postgresql/*/bin/postgres --version)"
unset SQLQ_URL
export TMPDIR=${BENCH_TMPDIR:-${TMPDIR:-/tmp}}
say "SQLite"
side_by_side
sqlite_rows=$(row SQLite)

say "PostgreSQL on port $PG_PORT"
bash "$server" start "$PG_PORT" >&2
trap 'bash "$server" stop "$PG_PORT" >&2' EXIT
SQLQ_URL=$(bash "$server" url "$PG_PORT")
export SQLQ_URL
"$SQLQ" init >/dev/null
before_run() { psql -XAtq "$SQLQ_URL" -c "VACUUM sqlq_jobs"; }
side_by_side
pg_rows=$(row PostgreSQL)
say "wake-up latency on PostgreSQL"
lat_py=$(repeat "$PY" "$here/python_worker.py" --jobs 1000 --workers 2 --batch 100 \
  --url "$SQLQ_URL" --latency-samples "$LATENCY_SAMPLES")
lat_c=$(repeat "$SQLQ" bench --jobs 1000 --workers 2 --batch 100 --json \
  --latency-samples "$LATENCY_SAMPLES")

echo "| Backend | Command | Jobs/s (median of $RUNS) | vs sqlq bench |"
echo "|---|---|---|---|"
echo "$sqlite_rows"
echo "$pg_rows"
echo
echo "| Wake-up on PostgreSQL, 2 idle workers | p50 | p90 | p99 |"
echo "|---|---|---|---|"
echo "| plain INSERT (psycopg, autocommit) to the Python handler: \`python3 bench/python_worker.py --jobs 1000 --workers 2 --batch 100 --latency-samples $LATENCY_SAMPLES\` |" \
  "$(median "$lat_py" latency_ms.p50 3) ms | $(median "$lat_py" latency_ms.p90 3) ms |" \
  "$(median "$lat_py" latency_ms.p99 3) ms |"
echo "| sqlq_enqueue to the claim (C): \`sqlq bench --jobs 1000 --workers 2 --batch 100 --latency-samples $LATENCY_SAMPLES\` |" \
  "$(median "$lat_c" latency_ms.p50 3) ms | $(median "$lat_c" latency_ms.p90 3) ms |" \
  "$(median "$lat_c" latency_ms.p99 3) ms |"
