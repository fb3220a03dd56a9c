#!/usr/bin/env bash
# run-stdio.sh -- the `sqlq work --stdio` measurements of docs/benchmarks.md:
# jobs through the Python example handler (examples/handler.py, its handle()
# a no-op), beside a process per job (`sqlq work -- CMD`).
#
# Usage: BACKENDS="sqlite postgres" bench/run-stdio.sh [PATH/TO/sqlq]
#
# For each backend (SQLite on a file in a temporary directory; PostgreSQL on
# a throwaway server, tests/servers/postgres.sh, on port $PG_PORT, default
# 27020, stopped at the end), RUNS times (default 3):
#   1. JOBS jobs (default 100000) of 16 bytes are pushed (sqlq push --lines);
#   2. `sqlq work --stdio -c HANDLERS --window WINDOW [--batch BATCH] --drain`
#      (defaults 1, 256, none) runs them through the Python example handler;
#      the figure is JOBS over the wall time of that command, its start-up
#      and the handler's included;
#   3. PER_JOB jobs (default 2000) run through `sqlq work -c HANDLERS --drain`
#      with a process per job: the no-op Python handler
#      (python3 -c 'import sys; sys.stdin.buffer.read()'), and `true`.
# Prints the medians as a Markdown table on stdout.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SQLQ=$(realpath "${1:-${SQLQ:-build/sqlq}}")
RUNS=${RUNS:-3}
JOBS=${JOBS:-100000}
PER_JOB=${PER_JOB:-2000}
HANDLERS=${HANDLERS:-1}
WINDOW=${WINDOW:-256}
BATCH=${BATCH:-}
BACKENDS=${BACKENDS:-sqlite postgres}
PG_PORT=${PG_PORT:-27020}
bench_name=run-stdio
source "$here/lib.sh"
handler=(python3 "$here/../examples/handler.py")
batch=()
[ -n "$BATCH" ] && batch=(--batch "$BATCH")

tmp=$(mktemp -d)
pg_started=0
cleanup() {
  [ "$pg_started" = 1 ] && bash "$here/../tests/servers/postgres.sh" stop "$PG_PORT" >/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

# rate N CMD...: run CMD, print N / its wall time in seconds.
rate() {
  local n=$1 start end
  shift
  start=$(date +%s.%N)
  "$@" >/dev/null
  end=$(date +%s.%N)
  python3 -c "print(round($n / ($end - $start)))"
}

# one_run URL: one JSON line of the three figures on URL.
one_run() {
  local url=$1 stdio per_py per_true
  "$SQLQ" --url "$url" purge bench >/dev/null
  seq -f "%016g" 1 "$JOBS" | "$SQLQ" --url "$url" push --lines bench >/dev/null
  stdio=$(rate "$JOBS" "$SQLQ" --url "$url" work --stdio -c "$HANDLERS" --window "$WINDOW" \
    "${batch[@]}" --drain bench -- "${handler[@]}")
  seq -f "%016g" 1 "$PER_JOB" | "$SQLQ" --url "$url" push --lines bench >/dev/null
  per_py=$(rate "$PER_JOB" "$SQLQ" --url "$url" work -c "$HANDLERS" --drain bench -- \
    python3 -c 'import sys; sys.stdin.buffer.read()')
  seq -f "%016g" 1 "$PER_JOB" | "$SQLQ" --url "$url" push --lines bench >/dev/null
  per_true=$(rate "$PER_JOB" "$SQLQ" --url "$url" work -c "$HANDLERS" --drain bench -- true)
  echo "{\"stdio\":$stdio,\"per_py\":$per_py,\"per_true\":$per_true}"
}

machine "- sqlq: $("$SQLQ" --version)" "- Python: $(python3 --version)"
echo "| backend | \`sqlq work --stdio\`, Python handler (jobs/s) | process per job, Python (jobs/s) | process per job, \`true\` (jobs/s) |"
echo "| --- | ---: | ---: | ---: |"
for backend in $BACKENDS; do
  case $backend in
    sqlite) url="sqlite:$tmp/bench.db" ;;
    postgres)
      bash "$here/../tests/servers/postgres.sh" start "$PG_PORT" >/dev/null
      pg_started=1
      url=$(bash "$here/../tests/servers/postgres.sh" url "$PG_PORT")
      ;;
    *) echo "run-stdio.sh: unknown backend $backend" >&2; exit 64 ;;
  esac
  "$SQLQ" --url "$url" init >/dev/null
  say "$backend: $JOBS jobs through --stdio, $PER_JOB per job, $RUNS runs"
  runs=$(repeat one_run "$url")
  echo "| $backend | $(median "$runs" stdio) | $(median "$runs" per_py) | $(median "$runs" per_true) |"
done
echo
echo "Settings: $JOBS jobs of 16 bytes, --stdio -c $HANDLERS --window $WINDOW ${BATCH:+--batch $BATCH} (claims of up to the free window, acks batched per read), lease 30 s; per job: $PER_JOB jobs, -c $HANDLERS."
