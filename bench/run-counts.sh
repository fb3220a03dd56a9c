#!/usr/bin/env bash
# run-counts.sh -- what counting costs the hot path (docs/benchmarks.md,
# "Counts and their flush (schema version 13)").
#
# Usage: bench/run-counts.sh BEFORE_SQLQ AFTER_SQLQ
#
# Runs `sqlq bench` with each binary back to back and alternating, RUNS
# times (default 5) per figure, on a SQLite file under BENCH_TMPDIR
# (default /tmp) and on a throwaway PostgreSQL server (port PG_PORT,
# default 25440; each run on a vacuumed sqlq_jobs): BEFORE (a build
# without counts), AFTER as it comes (counts on, written every 5 s), AFTER
# with counts_flush=0.1 (fifty times as many flushes, to make their cost
# show) and AFTER with counts=off (ORDER=reverse: in the opposite order).
# Prints the medians (jobs/s end to end) as a Markdown table on stdout.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bench_name=run-counts.sh
# shellcheck source=bench/lib.sh
source "$here/lib.sh"
ab_start "$@"

# The URL option of each side of AFTER.
declare -A option=([after]="" [often]=counts_flush=0.1 [off]=counts=off)

ab_side() {
  local side=$1 url=$2 url_before=$3
  shift 3
  if [ "$side" = before ]; then
    "$BEFORE" --url "$url_before" "$@"
  elif [ -z "${option[$side]}" ]; then
    "$AFTER" --url "$url" "$@"
  else
    case $url in
    *\?*) "$AFTER" --url "$url&${option[$side]}" "$@" ;;
    *) "$AFTER" --url "$url?${option[$side]}" "$@" ;;
    esac
  fi
}

# ORDER=reverse runs the sides the other way round, so that an advantage of
# coming first or last shows.
if [ "${ORDER:-}" = reverse ]; then
  sides="off:before often:before after:before before"
  echo "| backend | command | after, counts=off (/before) | after, counts_flush=0.1 (/before) | after (/before) | before |"
else
  sides="before after:before often:before off:before"
  echo "| backend | command | before | after (/before) | after, counts_flush=0.1 (/before) | after, counts=off (/before) |"
fi
echo "|---|---|---:|---:|---:|---:|"
ab_figures "$sides"
