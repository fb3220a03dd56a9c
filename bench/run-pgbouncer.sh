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
#   (c) wake-up latency of idle worker processes (--processes: a wake-up
#       crosses processes, as between hosts; LATENCY_SAMPLES, default 200):
#       direct, and through PgBouncer with the direct listening session
#       (listen_port)
#   (d) from `sqlq push` to the start of the job's command under an idle
#       `sqlq work` (another process; POLL_SAMPLES samples, default 40, a
#       random pause of up to 1 s apart): direct, through PgBouncer with
#       listen_port, and through PgBouncer polling (no listening session)
#       with poll_interval 1 (the default) and 0.1.  (sqlq bench cannot
#       show polling: its idle workers look again every 0.1 s.)
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

# push_to_start URL: POLL_SAMPLES times, the milliseconds from just
# before a `sqlq push` to the start of the job's command under an idle
# `sqlq work` on URL, as one JSON object of latency_ms p50, p90, p99.
push_to_start() {
  local url=$1 dir k worker t0
  dir=$(mktemp -d)
  "$SQLQ" --url "$url" work pts -- sh -c 'date +%s%N >>"$0/ran"' "$dir" 2>/dev/null &
  worker=$!
  sleep 1
  for ((k = 1; k <= POLL_SAMPLES; k++)); do
    sleep "0.$((RANDOM % 1000))"
    t0=$(date +%s%N)
    "$SQLQ" --url "$direct" push pts x >/dev/null
    while [ "$(wc -l <"$dir/ran" 2>/dev/null || echo 0)" -lt "$k" ]; do sleep 0.005; done
    echo "$t0 $(sed -n "${k}p" "$dir/ran")" >>"$dir/samples"
  done
  kill -TERM "$worker"
  wait "$worker" 2>/dev/null || true
  python3 -c '
import json, statistics, sys
v = sorted((int(b) - int(a)) / 1e6 for a, b in (l.split() for l in open(sys.argv[1])))
q = lambda p: v[min(len(v) - 1, int(p * len(v)))]
print(json.dumps({"latency_ms": {"p50": statistics.median(v), "p90": q(0.9), "p99": q(0.99)}}))
' "$dir/samples"
  rm -rf "$dir"
}

a_direct="" a_pooled="" b_direct="" b_pooled="" c_direct="" c_pooled=""
d_direct="" d_listen="" p1="" p01=""
for ((i = 1; i <= RUNS; i++)); do
  say "round $i/$RUNS"
  a_direct+=$(bench "$direct" --jobs "$JOBS" --workers 4 --batch 100 --latency-samples 0)$'\n'
  a_pooled+=$(bench "$pooled?listen_port=$PG_PORT" --jobs "$JOBS" --workers 4 --batch 100 --latency-samples 0)$'\n'
  b_direct+=$(bench "$direct" --jobs "$JOBS_B1" --workers 4 --producers 4 --batch 1 \
    --latency-samples 0)$'\n'
  b_pooled+=$(bench "$pooled?listen_port=$PG_PORT" --jobs "$JOBS_B1" --workers 4 --producers 4 --batch 1 \
    --latency-samples 0)$'\n'
  c_direct+=$(bench "$direct" --processes --jobs 100 --latency-samples "$LATENCY_SAMPLES")$'\n'
  c_pooled+=$(bench "$pooled?listen_port=$PG_PORT" --processes --jobs 100 \
    --latency-samples "$LATENCY_SAMPLES")$'\n'
  d_direct+=$(push_to_start "$direct")$'\n'
  d_listen+=$(push_to_start "$pooled?listen_port=$PG_PORT")$'\n'
  p1+=$(push_to_start "$pooled")$'\n'
  p01+=$(push_to_start "$pooled?poll_interval=0.1")$'\n'
done
printf '%s' "$a_direct$a_pooled$b_direct$b_pooled$c_direct$c_pooled$d_direct$d_listen$p1$p01" >&2

machine "- PostgreSQL: $(psql -XAtq "$direct" -c 'SHOW server_version'), PgBouncer: $(pgbouncer --version | head -1)"
echo "| measurement | direct | through PgBouncer |"
echo "|---|---|---|"
echo "| (a) batch 100, 4 workers: enqueue jobs/s | $(median "$a_direct" enqueue_per_s) | $(median "$a_pooled" enqueue_per_s) |"
echo "| (a) end to end jobs/s | $(median "$a_direct" jobs_per_s) | $(median "$a_pooled" jobs_per_s) |"
echo "| (a) claim ms | $(median "$a_direct" claim_ms 3) | $(median "$a_pooled" claim_ms 3) |"
echo "| (b) batch 1, 4 producers, 4 workers: enqueue jobs/s | $(median "$b_direct" enqueue_per_s) | $(median "$b_pooled" enqueue_per_s) |"
echo "| (b) end to end jobs/s | $(median "$b_direct" jobs_per_s) | $(median "$b_pooled" jobs_per_s) |"
echo "| (c) wake-up p50 / p90 / p99 ms (listen_port for PgBouncer) | $(median "$c_direct" latency_ms.p50 3) / $(median "$c_direct" latency_ms.p90 3) / $(median "$c_direct" latency_ms.p99 3) | $(median "$c_pooled" latency_ms.p50 3) / $(median "$c_pooled" latency_ms.p90 3) / $(median "$c_pooled" latency_ms.p99 3) |"
# figure RUNS_JSON: "p50 / p90 / p99" of latency_ms, medians over the runs.
figure() {
  echo "$(median "$1" latency_ms.p50 1) / $(median "$1" latency_ms.p90 1) / $(median "$1" latency_ms.p99 1)"
}
echo "| (d) push to start, p50 / p90 / p99 ms (listen_port for PgBouncer) | $(figure "$d_direct") | $(figure "$d_listen") |"
echo "| (d) polling, poll_interval=1 | - | $(figure "$p1") |"
echo "| (d) polling, poll_interval=0.1 | - | $(figure "$p01") |"
