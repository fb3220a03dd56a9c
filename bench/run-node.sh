#!/usr/bin/env bash
# bench/run-node.sh -- the Node.js package's worker loop on PostgreSQL,
# side by side in one run with `sqlq bench` and graphile-worker, on one
# throwaway server (docs/benchmarks.md, "The Node.js package").
#
# Usage: bench/run-node.sh   (from the repository, after cmake --build build)
# Environment: PG_PORT [27220], RUNS [3], JOBS [100000], SAMPLES [200],
# BATCH [500], CONCURRENCY ["24 500"]: the Node worker's concurrencies,
# GRAPHILE_VERSIONS ["0.17.3 0.18.0"]: 0.17.3 is the newest whose engines
# accept Node.js 20, 0.18.0 (engines: node >= 22.18) installs and runs
# on it with a warning; SQLQ [build/sqlq], LIBDIR [build].
# Each run measures, in this order: sqlq bench (1 and 2 workers, batch
# BATCH), the Node worker (batch BATCH, each concurrency), graphile-worker
# (concurrency 24, localQueue.size BATCH, completeJobBatchDelay 0); the
# runs are interleaved so that load from elsewhere falls on all alike.
# One more run of the Node worker measures the wake-up from INSERTs made by
# another process (SQLQ_BENCH_PRODUCER=psycopg, bench/node_worker.mjs), and
# one of bench/python_worker.py the Python worker's, from psycopg INSERTs
# too (when LIBDIR, or LIBDIR/tests/python, has libsqlq.so.1).
# Prints the machine, one JSON line per measurement, then the medians.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
PG_PORT=${PG_PORT:-27220}
RUNS=${RUNS:-3}
JOBS=${JOBS:-100000}
SAMPLES=${SAMPLES:-200}
BATCH=${BATCH:-500}
CONCURRENCY=${CONCURRENCY:-24 500}
GRAPHILE_VERSIONS=${GRAPHILE_VERSIONS:-0.17.3 0.18.0}
PG_VERSION=8.16.3
SQLQ=${SQLQ:-$root/build/sqlq}
LIBDIR=${LIBDIR:-$root/build}
pg_server=$root/tests/servers/postgres.sh

tmp=$(mktemp -d "${TMPDIR:-/tmp}/sqlq-bench-node.XXXXXX")
cleanup() {
  bash "$pg_server" stop "$PG_PORT" >&2 || true
  rm -rf "$tmp"
}
trap cleanup EXIT

say() { echo "run-node: $*" >&2; }
cp "$SQLQ" "$tmp/sqlq"
say "building the addon against $LIBDIR"
(cd "$root/bindings/node" && { [[ -d node_modules ]] || npm ci --ignore-scripts --no-audit --no-fund >&2; })
# (node-gyp takes JOBS as make -j: not the bench's count.)
env -u JOBS SQLQ_INCLUDE_DIR=$root/include SQLQ_LIB_DIR=$LIBDIR node "$root/bindings/node/scripts/build.js" \
  "--out=$tmp/addon" >/dev/null
export SQLQ_NODE_PACKAGE=$root/bindings/node SQLQ_NODE_ADDON=$tmp/addon/build/Release/sqlq.node
# The shared libsqlq the Python package loads, for its wake-up beside the
# Node worker's: LIBDIR's own, else the tests' copy (none: no Python row).
py_lib=""
for lib in "$LIBDIR/libsqlq.so.1" "$LIBDIR/tests/python/libsqlq.so.1"; do
  if [[ -e $lib ]]; then py_lib=$(realpath "$lib"); fi
done
# One directory per graphile-worker version, each with pg and the peers;
# the Node worker runs from the first.
for v in $GRAPHILE_VERSIONS; do
  say "installing graphile-worker@$v and pg@$PG_VERSION (npm) into $tmp/g-$v"
  mkdir "$tmp/g-$v"
  cp "$root/bench/peers/harness.mjs" "$root/bench/peers/graphile.mjs" "$root/bench/node_worker.mjs" "$tmp/g-$v/"
  echo '{"name": "sqlq-bench-node", "private": true, "type": "module"}' >"$tmp/g-$v/package.json"
  (cd "$tmp/g-$v" && npm install --no-audit --no-fund --loglevel=error \
    "graphile-worker@$v" "pg@$PG_VERSION" >/dev/null)
done
first=$(echo $GRAPHILE_VERSIONS | cut -d' ' -f1)

say "starting PostgreSQL on $PG_PORT"
bash "$pg_server" start "$PG_PORT" >&2
url=$(bash "$pg_server" url "$PG_PORT")
"$tmp/sqlq" --url "$url" init >/dev/null
# Each graphile-worker version gets a database of its own on the server,
# since each migrates its schema to its own version.
gurl() { echo "${url%/*}/graphile_${1//./_}"; }
for v in $GRAPHILE_VERSIONS; do psql -XAtq "$url" -c "CREATE DATABASE graphile_${v//./_}" >/dev/null; done
# Every database is vacuumed before each run, as pgbench does.
vacuum() {
  local u
  for u in "$url" $(for v in $GRAPHILE_VERSIONS; do gurl "$v"; done); do
    psql -XAtq "$u" -c VACUUM >/dev/null 2>&1 || true
  done
}

echo "machine: $(nproc) CPUs, $(lscpu | sed -n 's/^Model name: *//p'), $(uname -sr)"
echo "date: $(date -u +%FT%TZ)"
echo "node: $(node --version), graphile-worker: $GRAPHILE_VERSIONS"
echo "postgres: $(psql -XAtq "$url" -c 'SHOW server_version')"
results=$tmp/results
: >"$results"
run() {
  local name=$1 json
  shift
  vacuum
  local load
  load=$(cut -d' ' -f1 /proc/loadavg)
  json=$("$@")
  printf '%s\t%s\t%s\n' "$name" "$load" "$json" | tee -a "$results"
}
node_args=(--url "$url" --jobs "$JOBS" --batch "$BATCH" --samples "$SAMPLES")
for ((r = 1; r <= RUNS; r++)); do
  say "run $r of $RUNS"
  for w in 1 2; do
    run "sqlq-bench-w$w" "$tmp/sqlq" --url "$url" bench --jobs "$JOBS" --workers "$w" --batch "$BATCH" \
      --json --latency-samples "$SAMPLES"
  done
  for c in $CONCURRENCY; do
    run "node-worker-c$c" bash -c 'cd "$0" && exec node node_worker.mjs "$@"' "$tmp/g-$first" "${node_args[@]}" --workers "$c"
  done
  # The wake-up again, each INSERT made by a psycopg process instead of
  # node-postgres on the worker's event loop, and the Python package's
  # worker woken the same way, in the same run (throughput: 1000 jobs only).
  run "node-worker-c24-psycopg-insert" env SQLQ_BENCH_PRODUCER=psycopg \
    bash -c 'cd "$0" && exec node node_worker.mjs "$@"' "$tmp/g-$first" "${node_args[@]}" --workers 24 --jobs 1000
  if [[ -n $py_lib ]]; then
    run "python-worker-psycopg-insert" env SQLQ_LIBRARY="$py_lib" PYTHONPATH="$root/bindings/python" \
      /usr/bin/python3 "$root/bench/python_worker.py" --url "$url" --jobs 1000 --workers 2 --batch 100 \
      --latency-samples "$SAMPLES"
  fi
  for v in $GRAPHILE_VERSIONS; do
    run "graphile-$v-c24" bash -c 'cd "$0" && exec node graphile.mjs "$@"' "$tmp/g-$v" "${node_args[@]}" \
      --workers 24 --url "$(gurl "$v")"
  done
done

echo "medians (jobs/s, enqueue/s, latency p50 ms, p99 ms, the Python producer's INSERT p50 ms where"
echo "measured; load average before each run):"
python3 - "$results" <<'PY'
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, load, js = line.rstrip("\n").split("\t", 2)
    rows.setdefault(name, []).append((float(load), json.loads(js)))
for name, rs in rows.items():
    med = lambda f: statistics.median(f(j) for _, j in rs)
    print(f"{name:30} jobs/s {med(lambda j: j['jobs_per_s']):>8.0f}  enqueue/s {med(lambda j: j['enqueue_per_s']):>8.0f}"
          f"  p50 {med(lambda j: j['latency_ms']['p50']):.3f}  p99 {med(lambda j: j['latency_ms']['p99']):.3f}"
          + (f"  insert p50 {med(lambda j: j['insert_ms']['p50']):.3f}" if rs[0][1].get("insert_ms") else "")
          + f"  loads {' '.join(str(l) for l, _ in rs)}")
PY
