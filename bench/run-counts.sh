#!/usr/bin/env bash
# run-counts.sh -- what counting costs the hot path (docs/benchmarks.md,
# "Counts and their flush (schema version 13)").
#
# Usage: bench/run-counts.sh BEFORE_SQLQ AFTER_SQLQ
#
# Runs `sqlq bench` with each binary back to back and alternating, RUNS
# times (default 5) per figure, on a SQLite file under BENCH_TMPDIR
# (default /tmp) and on a throwaway PostgreSQL server (port PG_PORT,
# default 25440; each run on a vacuumed sqlq_jobs, as run-postgres.sh
# does): BEFORE (a build without counts), AFTER as it comes (counts on,
# written every 5 s), AFTER with counts_flush=0.1 (fifty times as many
# flushes, to make their cost show) and AFTER with counts=off.  Prints the
# medians (jobs/s end to end) as a Markdown table on stdout.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BEFORE=${1:?usage: run-counts.sh BEFORE_SQLQ AFTER_SQLQ}
AFTER=${2:?usage: run-counts.sh BEFORE_SQLQ AFTER_SQLQ}
RUNS=${RUNS:-5}
PG_PORT=${PG_PORT:-25440}
server="$here/../tests/servers/postgres.sh"
# shellcheck source=bench/lib.sh
source "$here/lib.sh"
bench_name=run-counts.sh

dir=$(mktemp -d "${BENCH_TMPDIR:-/tmp}/sqlq-counts.XXXXXX")
bash "$server" start "$PG_PORT" >&2
trap 'bash "$server" stop "$PG_PORT" >&2; rm -rf "$dir"' EXIT
pg_url=$(bash "$server" url "$PG_PORT")
# BEFORE's library refuses the newer schema AFTER's makes: each side has a
# database of its own (a file; on the server, a second database).
psql -XAtq "$pg_url" -c "CREATE DATABASE sqlq_before"
pg_before=${pg_url%/*}/sqlq_before

# with URL OPTION: URL with one more option.
with() {
  case $1 in
  *\?*) echo "$1&$2" ;;
  *) echo "$1?$2" ;;
  esac
}

# one URL URL_BEFORE ARGS...: the four sides of one figure, alternating,
# RUNS times; prints one line per side (its median).
one() {
  local url=$1 url_before=$2 i side
  shift 2
  local -A out=()
  for ((i = 1; i <= RUNS; i++)); do
    for side in before after after-often after-off; do
      say "  run $i/$RUNS $side: $*"
      if [[ $url == postgres* ]]; then
        psql -XAtq "$url" -c "VACUUM sqlq_jobs" 2>/dev/null || true
        psql -XAtq "$url_before" -c "VACUUM sqlq_jobs" 2>/dev/null || true
      fi
      case $side in
      before) out[$side]+=$("$BEFORE" --url "$url_before" "$@")$'\n' ;;
      after) out[$side]+=$("$AFTER" --url "$url" "$@")$'\n' ;;
      after-often) out[$side]+=$("$AFTER" --url "$(with "$url" counts_flush=0.1)" "$@")$'\n' ;;
      after-off) out[$side]+=$("$AFTER" --url "$(with "$url" counts=off)" "$@")$'\n' ;;
      esac
    done
  done
  for side in before after after-often after-off; do
    echo "$side $(num "$(median "${out[$side]}" jobs_per_s)")"
  done
}

row() {
  local backend=$1 url=$2 url_before=$3
  shift 3
  local -A m=()
  while read -r side v; do m[$side]=$v; done < <(one "$url" "$url_before" "$@")
  python3 - "$backend" "$*" "${m[before]}" "${m[after]}" "${m[after-often]}" "${m[after-off]}" <<'PY'
import sys
b, cmd, before, after, often, off = sys.argv[1:]
before, after, often, off = map(float, (before, after, often, off))
print(f"| {b} | `sqlq {cmd}` | {before:,.0f} | {after:,.0f} ({after/before:.2f}) "
      f"| {often:,.0f} ({often/before:.2f}) | {off:,.0f} ({off/before:.2f}) |")
PY
}

echo "| backend | command | before | after (/before) | after, counts_flush=0.1 (/before) | after, counts=off (/before) |"
echo "|---|---|---:|---:|---:|---:|"
row SQLite "sqlite:$dir/a.db" "sqlite:$dir/b.db" bench --jobs 100000 --workers 2 --batch 100 --latency-samples 0 --json
row SQLite "sqlite:$dir/a.db" "sqlite:$dir/b.db" bench --jobs 10000 --workers 2 --producers 2 --batch 1 --latency-samples 0 --json
row PostgreSQL "$pg_url" "$pg_before" bench --jobs 50000 --workers 4 --batch 100 --latency-samples 0 --json
row PostgreSQL "$pg_url" "$pg_before" bench --jobs 5000 --workers 4 --producers 4 --batch 1 --latency-samples 0 --json
