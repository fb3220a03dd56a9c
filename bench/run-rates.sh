#!/usr/bin/env bash
# run-rates.sh -- what a rate limit holds and costs (docs/benchmarks.md,
# "Rate limits").
#
# Usage: bench/run-rates.sh SQLQ URL...
#
# For each database URL (its bench queue is purged before and after):
# 1. the bound: `sqlq bench --rate R/1s` with R*SECONDS jobs (default 100/s
#    over 60 s) and WORKERS worker processes (default 4), which reports the
#    starts, their span, the achieved rate and the most starts that any
#    window of 1 s held, from the jobs' start times on the database's clock;
# 2. the cost: `sqlq bench` without a rate, and with a rate that never binds
#    (--rate 100000/1s: every claim takes the rate's turn), alternating,
#    RUNS times each (default 5), batch 100 and batch 1; medians, jobs/s end
#    to end.
# Prints Markdown tables on stdout.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SQLQ=${1:?usage: run-rates.sh SQLQ URL...}
shift
[[ $# -gt 0 ]] || { echo "usage: run-rates.sh SQLQ URL..." >&2; exit 64; }
RUNS=${RUNS:-5}
R=${R:-100}
SECONDS_RUN=${SECONDS_RUN:-60}
WORKERS=${WORKERS:-4}
# shellcheck source=bench/lib.sh
source "$here/lib.sh"
bench_name=run-rates.sh

echo "| database | rate | workers | starts | span (s) | achieved (/s) | most in any 1 s window | bound |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
for url in "$@"; do
  say "bound: $url, $R/1s over $SECONDS_RUN s"
  json=$("$SQLQ" --url "$url" bench --rate "$R/1s" --jobs $((R * SECONDS_RUN)) \
    --workers "$WORKERS" --processes --latency-samples 0 --json)
  python3 - "${url%%:*}" "$WORKERS" "$json" <<'PY'
import json, sys
db, workers, out = sys.argv[1:]
r = json.loads(out)["rate"]
print(f"| {db} | {r['max_starts']}/{r['period_us'] / 1e6:g}s | {workers} | {r['starts']} "
      f"| {r['span_s']:.3f} | {r['per_s']:.1f} | {r['most_in_window']} | {r['max_starts']} |")
PY
done

# cost URL ARGS...: no rate and a rate that never binds, alternating.
cost() {
  local url=$1 i side
  shift
  local -A out=()
  for ((i = 1; i <= RUNS; i++)); do
    for side in none unbound; do
      say "  cost run $i/$RUNS $side: $url $*"
      case $side in
      none) out[$side]+=$("$SQLQ" --url "$url" "$@")$'\n' ;;
      unbound) out[$side]+=$("$SQLQ" --url "$url" "$@" --rate 100000/1s)$'\n' ;;
      esac
    done
  done
  python3 - "${url%%:*}" "$*" "$(num "$(median "${out[none]}" jobs_per_s)")" \
    "$(num "$(median "${out[unbound]}" jobs_per_s)")" <<'PY'
import sys
db, cmd, none, unbound = sys.argv[1:]
none, unbound = float(none), float(unbound)
print(f"| {db} | `sqlq {cmd}` | {none:,.0f} | {unbound:,.0f} ({unbound / none:.2f}) |")
PY
}

echo
echo "| database | command | no rate | --rate 100000/1s (/no rate) |"
echo "|---|---|---:|---:|"
for url in "$@"; do
  cost "$url" bench --jobs 20000 --workers 2 --batch 100 --latency-samples 0 --json
  cost "$url" bench --jobs 3000 --workers 2 --batch 1 --latency-samples 0 --json
done
