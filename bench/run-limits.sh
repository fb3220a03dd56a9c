#!/usr/bin/env bash
# run-limits.sh -- what concurrency limits cost the claim (docs/benchmarks.md,
# "Concurrency limits: the bench before and after").
#
# Usage: bench/run-limits.sh BEFORE_SQLQ AFTER_SQLQ
#
# Runs `sqlq bench` with each binary back to back and alternating, RUNS
# times (default 5) per figure, on a SQLite file under BENCH_TMPDIR
# (default /tmp) and on a throwaway PostgreSQL server (port PG_PORT,
# default 25440; each run on a vacuumed sqlq_jobs, as run-postgres.sh
# does): BEFORE without a limit, AFTER without a limit, AFTER with a limit
# that never binds (--limit 100000: every claim counts) and AFTER with one
# that binds (--limit LIMIT_BINDS, default 100).  Prints the medians (jobs/s
# end to end) as a Markdown table on stdout.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BEFORE=${1:?usage: run-limits.sh BEFORE_SQLQ AFTER_SQLQ}
AFTER=${2:?usage: run-limits.sh BEFORE_SQLQ AFTER_SQLQ}
RUNS=${RUNS:-5}
PG_PORT=${PG_PORT:-25440}
LIMIT_BINDS=${LIMIT_BINDS:-100}
server="$here/../tests/servers/postgres.sh"
# shellcheck source=bench/lib.sh
source "$here/lib.sh"
bench_name=run-limits.sh

dir=$(mktemp -d "${BENCH_TMPDIR:-/tmp}/sqlq-limits.XXXXXX")
bash "$server" start "$PG_PORT" >&2
trap 'bash "$server" stop "$PG_PORT" >&2; rm -rf "$dir"' EXIT
pg_url=$(bash "$server" url "$PG_PORT")
# BEFORE's library refuses the newer schema AFTER's makes: each side has a
# database of its own (a file; on the server, a second database).
psql -XAtq "$pg_url" -c "CREATE DATABASE sqlq_before"
pg_before=${pg_url%/*}/sqlq_before

# one URL URL_BEFORE ARGS...: the four sides of one figure, alternating,
# RUNS times; prints one table row per side (its median).
one() {
  local url=$1 url_before=$2 i side
  shift 2
  local -A out=()
  for ((i = 1; i <= RUNS; i++)); do
    for side in before after after-unbound after-bound; do
      say "  run $i/$RUNS $side: $*"
      if [[ $url == postgres* ]]; then
        psql -XAtq "$url" -c "VACUUM sqlq_jobs" 2>/dev/null || true
        psql -XAtq "$url_before" -c "VACUUM sqlq_jobs" 2>/dev/null || true
      fi
      case $side in
      before) out[$side]+=$("$BEFORE" --url "$url_before" "$@")$'\n' ;;
      after) out[$side]+=$("$AFTER" --url "$url" "$@")$'\n' ;;
      after-unbound) out[$side]+=$("$AFTER" --url "$url" "$@" --limit 100000)$'\n' ;;
      after-bound) out[$side]+=$("$AFTER" --url "$url" "$@" --limit "$LIMIT_BINDS")$'\n' ;;
      esac
    done
  done
  for side in before after after-unbound after-bound; do
    echo "$side $(num "$(median "${out[$side]}" jobs_per_s)")"
  done
}

row() {
  local backend=$1 url=$2 url_before=$3
  shift 3
  local -A m=()
  while read -r side v; do m[$side]=$v; done < <(one "$url" "$url_before" "$@")
  python3 - "$backend" "$*" "${m[before]}" "${m[after]}" "${m[after-unbound]}" "${m[after-bound]}" "$LIMIT_BINDS" <<'PY'
import sys
b, cmd, before, after, unbound, bound, lim = sys.argv[1:]
before, after, unbound, bound = map(float, (before, after, unbound, bound))
print(f"| {b} | `sqlq {cmd}` | {before:,.0f} | {after:,.0f} ({after/before:.2f}) "
      f"| {unbound:,.0f} ({unbound/after:.2f}) | {bound:,.0f} ({bound/after:.2f}) |")
PY
}

echo "| backend | command | before | after, no limit (/before) | after, --limit 100000 (/after) | after, --limit $LIMIT_BINDS (/after) |"
echo "|---|---|---:|---:|---:|---:|"
row SQLite "sqlite:$dir/a.db" "sqlite:$dir/b.db" bench --jobs 100000 --workers 2 --batch 100 --latency-samples 0 --json
row SQLite "sqlite:$dir/a.db" "sqlite:$dir/b.db" bench --jobs 10000 --workers 2 --producers 2 --batch 1 --latency-samples 0 --json
row PostgreSQL "$pg_url" "$pg_before" bench --jobs 50000 --workers 4 --batch 100 --latency-samples 0 --json
row PostgreSQL "$pg_url" "$pg_before" bench --jobs 10000 --workers 4 --producers 4 --batch 1 --latency-samples 0 --json
