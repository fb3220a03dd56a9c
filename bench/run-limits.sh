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
bench_name=run-limits.sh
LIMIT_BINDS=${LIMIT_BINDS:-100}
# shellcheck source=bench/lib.sh
source "$here/lib.sh"
ab_start "$@"

ab_side() {
  local side=$1 url=$2 url_before=$3
  shift 3
  case $side in
  before) "$BEFORE" --url "$url_before" "$@" ;;
  after) "$AFTER" --url "$url" "$@" ;;
  after-unbound) "$AFTER" --url "$url" "$@" --limit 100000 ;;
  after-bound) "$AFTER" --url "$url" "$@" --limit "$LIMIT_BINDS" ;;
  esac
}

sides="before after:before after-unbound:after after-bound:after"
echo "| backend | command | before | after, no limit (/before) | after, --limit 100000 (/after) | after, --limit $LIMIT_BINDS (/after) |"
echo "|---|---|---:|---:|---:|---:|"
ab_figures "$sides"
