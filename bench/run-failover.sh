#!/usr/bin/env bash
# run-failover.sh -- what a PostgreSQL failover costs (issue 23; docs/scale.md,
# "PostgreSQL failover"; docs/benchmarks.md): the scenario of
# tests/cli/pg_failover.sh (tests/cli/failover.bash: a primary killed with
# SIGKILL under a producer and four workers, its standby promoted 0.5 s
# later), run RUNS times for each setting of
#   SYNC          synchronous replication (synchronous_standby_names '*')
#   WORKER_SYNC   the URL option worker_synchronous_commit
# and counted: acknowledged enqueues lost, acks accepted with a stale token,
# jobs handed out twice within a lease, jobs run again after an accepted ack,
# and how long after the promotion the first claim, ack and enqueue came.
#
# Then the cost of the settings without a failover: `sqlq bench --jobs 5000
# --workers 4 --producers 4 --batch 1` (one job a commit) on the same pair of
# servers and URL, RUNS times each, with and without synchronous
# replication and worker_synchronous_commit.
#
# Usage: bench/run-failover.sh [BUILD_DIR]     (default: build)
# Settings (environment):
#   RUNS=5                   runs per setting
#   SETTINGS="on:on off:off on:off"   SYNC:WORKER_SYNC pairs
#   PORT=25490               the primary's port (the standby: PORT+1)
#   OUT=bench-failover       where each run's logs and counts go
# Prints a Markdown table (one line a run) on stdout.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${1:-build}
RUNS=${RUNS:-5}
SETTINGS=${SETTINGS:-on:on off:off on:off}
PORT=${PORT:-25490}
OUT=${OUT:-bench-failover}

usage() {
  echo "run-failover.sh: $*" >&2
  exit 64
}
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || usage "RUNS wants a whole number, not '$RUNS'"
[[ $PORT =~ ^[1-9][0-9]*$ ]] && ((PORT < 65535)) || usage "PORT wants a port, not '$PORT'"
for s in $SETTINGS; do
  [[ $s =~ ^(on|off):(on|off)$ ]] || usage "SETTINGS wants SYNC:WORKER_SYNC pairs of on|off, not '$s'"
done
export SQLQ=$build/sqlq SQLQ_TEST_PG_FAILOVER_CLIENT=$build/tests/sqlq_pg_failover_client
[[ -x $SQLQ && -x $SQLQ_TEST_PG_FAILOVER_CLIENT ]] ||
  usage "no $SQLQ or $SQLQ_TEST_PG_FAILOVER_CLIENT: build with -DSQLQ_TESTS=ON"
SQLQ=$(realpath "$SQLQ")
SQLQ_TEST_PG_FAILOVER_CLIENT=$(realpath "$SQLQ_TEST_PG_FAILOVER_CLIENT")
mkdir -p "$OUT"
OUT=$(realpath "$OUT")

set +eu
# shellcheck source=tests/common.sh
source "$here/../tests/common.sh"
# shellcheck source=tests/cli/failover.bash
source "$here/../tests/cli/failover.bash"
trap 'failover_stop "$PORT"; cleanup' EXIT

echo "| sync rep | worker sync | run | acked enqueues | lost | loss window ms | in doubt | stored twice | acks ok | stale refused | stale accepted | twice in a lease | run after ack | kill to promote ms | first claim ms | first ack ms | first enqueue ms |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for s in $SETTINGS; do
  sync=${s%:*} worker_sync=${s#*:}
  for ((i = 1; i <= RUNS; i++)); do
    echo "run-failover: sync $sync, worker_synchronous_commit $worker_sync, run $i/$RUNS" >&2
    if failover_run "$PORT" "$sync" "$worker_sync"; then
      echo "| $sync | $worker_sync | $i | $fo_acked | $fo_lost | $fo_loss_ms | $fo_indoubt | $fo_dup | $fo_acks_ok |" \
        "$fo_acks_stale | $fo_stale_ok | $fo_overlap | $fo_after_ack | $fo_kill_to_promote |" \
        "$fo_resume_claim | $fo_resume_ack | $fo_resume_push |"
    else
      echo "| $sync | $worker_sync | $i | (did not run: see $OUT) |"
    fi
    failover_stop "$PORT"
    rm -rf "$OUT/$sync-$worker_sync-$i"
    cp -r "$fo" "$OUT/$sync-$worker_sync-$i" 2>/dev/null
  done
done

echo
echo "| sync rep | worker sync | run | jobs/s end to end | enqueues/s |"
echo "|---|---|---|---|---|"
fo_server start "$PORT" >/dev/null && fo_server standby "$((PORT + 1))" "$PORT" >/dev/null || exit 1
for sync in on off; do
  fo_server sync "$PORT" "$sync" >/dev/null || exit 1
  for worker_sync in on off; do
    url="postgres://sqlq@127.0.0.1:$PORT,127.0.0.1:$((PORT + 1))/sqlq?target_session_attrs=read-write"
    url="$url&worker_synchronous_commit=$worker_sync"
    for ((i = 1; i <= RUNS; i++)); do
      echo "run-failover: bench, sync $sync, worker_synchronous_commit $worker_sync, run $i/$RUNS" >&2
      "$SQLQ" --url "$url" init >/dev/null
      fo_server sql "$PORT" "VACUUM sqlq_jobs" >/dev/null
      "$SQLQ" --url "$url" bench --jobs 5000 --workers 4 --producers 4 --batch 1 --json \
        --latency-samples 0 | python3 -c '
import json, sys
r = json.load(sys.stdin)
print("| %s | %s | %s | {:,} | {:,} |".format(r["jobs_per_s"], r["enqueue_per_s"]) % tuple(sys.argv[1:4]))
' "$sync" "$worker_sync" "$i"
    done
  done
done
