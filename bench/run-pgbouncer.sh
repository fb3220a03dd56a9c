#!/usr/bin/env bash
# run-pgbouncer.sh -- PostgreSQL through PgBouncer in transaction mode,
# beside PostgreSQL itself (docs/benchmarks.md, docs/scale.md).
#
# Usage: bench/run-pgbouncer.sh [PATH/TO/sqlq]
#
# Starts a throwaway PostgreSQL server (tests/servers/postgres.sh, on port
# $PG_PORT, default 25440) and a PgBouncer in front of it
# (tests/servers/pgbouncer.sh: pool_mode transaction, default_pool_size
# $POOL, default 20, on $PGB_PORT, default PG_PORT + 10), then runs RUNS rounds (default 3).  Each round runs every
# measurement once on each path, one after the other (direct, then through
# PgBouncer), so that a change in the machine's load falls on both; the
# medians are printed as a Markdown table on stdout:
#   (a) sqlq bench: JOBS jobs (default 20000), batch 100, 4 worker threads
#   (b) batch 1: JOBS_B1 jobs (default 5000), 4 workers, 4 producers
#   (both through PgBouncer with listen_port: waiting workers hear
#   notifications on a session of their own on the server)
#   (c) wake-up latency of idle workers (LATENCY_SAMPLES, default 200):
#       direct, and through PgBouncer with the direct listening session
#       (listen_port); then through PgBouncer polling (no listening
#       session), with poll_interval 1 (the default) and 0.1, POLL_SAMPLES
#       samples each (default 40)
# Both servers are stopped at the end.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SQLQ=${1:-${SQLQ:-build/sqlq}}
RUNS=${RUNS:-3}
JOBS=${JOBS:-20000}
JOBS_B1=${JOBS_B1:-5000}
LATENCY_SAMPLES=${LATENCY_SAMPLES:-200}
POLL_SAMPLES=${POLL_SAMPLES:-40}
PG_PORT=${PG_PORT:-25440}
PGB_PORT=${PGB_PORT:-$((PG_PORT + 10))}
POOL=${POOL:-20}
server="$here/../tests/servers/postgres.sh"

if [[ ! -x $SQLQ ]]; then
  echo "run-pgbouncer.sh: no sqlq binary at '$SQLQ' (build it, or pass its path)" >&2
  exit 64
fi
command -v pgbouncer >/dev/null || {
  echo "run-pgbouncer.sh: pgbouncer is not installed" >&2
  exit 69
}
# shellcheck source=bench/lib.sh
source "$here/lib.sh"
bench_name=run-pgbouncer.sh

pgb_server="$here/../tests/servers/pgbouncer.sh"
stop_all() {
  bash "$pgb_server" stop "$PGB_PORT" >&2
  bash "$server" stop "$PG_PORT" >&2
}
bash "$server" start "$PG_PORT" >&2
trap stop_all EXIT
bash "$pgb_server" start "$PGB_PORT" "$PG_PORT" "$POOL" >&2

direct=$(bash "$server" url "$PG_PORT")
pooled="postgres://sqlq@127.0.0.1:$PGB_PORT/sqlq"
"$SQLQ" --url "$direct" init >/dev/null

# bench URL ARGS...: one sqlq bench run as JSON.
bench() {
  local url=$1
  shift
  "$SQLQ" --url "$url" bench --json "$@"
}

a_direct="" a_pooled="" b_direct="" b_pooled="" c_direct="" c_pooled="" p1="" p01=""
for ((i = 1; i <= RUNS; i++)); do
  say "round $i/$RUNS"
  a_direct+=$(bench "$direct" --jobs "$JOBS" --workers 4 --batch 100 --latency-samples 0)$'\n'
  a_pooled+=$(bench "$pooled?listen_port=$PG_PORT" --jobs "$JOBS" --workers 4 --batch 100 --latency-samples 0)$'\n'
  b_direct+=$(bench "$direct" --jobs "$JOBS_B1" --workers 4 --producers 4 --batch 1 \
    --latency-samples 0)$'\n'
  b_pooled+=$(bench "$pooled?listen_port=$PG_PORT" --jobs "$JOBS_B1" --workers 4 --producers 4 --batch 1 \
    --latency-samples 0)$'\n'
  c_direct+=$(bench "$direct" --jobs 100 --latency-samples "$LATENCY_SAMPLES")$'\n'
  c_pooled+=$(bench "$pooled?listen_port=$PG_PORT" --jobs 100 \
    --latency-samples "$LATENCY_SAMPLES")$'\n'
  p1+=$(bench "$pooled" --jobs 100 --latency-samples "$POLL_SAMPLES")$'\n'
  p01+=$(bench "$pooled?poll_interval=0.1" --jobs 100 --latency-samples "$POLL_SAMPLES")$'\n'
done
printf '%s' "$a_direct$a_pooled$b_direct$b_pooled$c_direct$c_pooled$p1$p01" >&2

machine "- PostgreSQL: $(psql -XAtq "$direct" -c 'SHOW server_version'), PgBouncer: $(pgbouncer --version | head -1)"
echo "| measurement | direct | through PgBouncer |"
echo "|---|---|---|"
echo "| (a) batch 100, 4 workers: enqueue jobs/s | $(median "$a_direct" enqueue_per_s) | $(median "$a_pooled" enqueue_per_s) |"
echo "| (a) end to end jobs/s | $(median "$a_direct" jobs_per_s) | $(median "$a_pooled" jobs_per_s) |"
echo "| (a) claim ms | $(median "$a_direct" claim_ms 3) | $(median "$a_pooled" claim_ms 3) |"
echo "| (b) batch 1, 4 producers, 4 workers: enqueue jobs/s | $(median "$b_direct" enqueue_per_s) | $(median "$b_pooled" enqueue_per_s) |"
echo "| (b) end to end jobs/s | $(median "$b_direct" jobs_per_s) | $(median "$b_pooled" jobs_per_s) |"
echo "| (c) wake-up p50 / p90 / p99 ms (listen_port for PgBouncer) | $(median "$c_direct" latency_ms.p50 3) / $(median "$c_direct" latency_ms.p90 3) / $(median "$c_direct" latency_ms.p99 3) | $(median "$c_pooled" latency_ms.p50 3) / $(median "$c_pooled" latency_ms.p90 3) / $(median "$c_pooled" latency_ms.p99 3) |"
echo "| (c) polling, poll_interval=1: p50 / p90 / p99 ms | - | $(median "$p1" latency_ms.p50 1) / $(median "$p1" latency_ms.p90 1) / $(median "$p1" latency_ms.p99 1) |"
echo "| (c) polling, poll_interval=0.1: p50 / p90 / p99 ms | - | $(median "$p01" latency_ms.p50 1) / $(median "$p01" latency_ms.p90 1) / $(median "$p01" latency_ms.p99 1) |"
