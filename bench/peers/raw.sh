#!/usr/bin/env bash
# bench/peers/raw.sh -- the raw-SQL limit: pgbench drives the minimal queue
# of raw-schema.sql in the measurement of harness.mjs, as far as pgbench
# can take part in it.
#
# Usage: raw.sh URL JOBS WORKERS BATCH [claim|delete]
#
# W pgbench clients loop on raw-claim.sql (claim up to B, then delete
# them: two commits a batch, as sqlq's claim and ack; the default) or on
# raw-delete.sql (take and delete in one statement: one commit) while one pgbench client runs raw-insert.sql JOBS/B times (B jobs
# a statement).  enqueue_per_s = JOBS / the producer's time (pgbench's own
# figure, without its connection time); jobs_per_s = JOBS / (the
# producer's start to the moment the table is seen empty, polled every
# 2 ms on one psql session).  pgbench takes no latency sample: its clients
# poll, with no wake-up, so latency_ms is null.  Prints one JSON line with
# the keys of `sqlq bench --json`.  JOBS must be a multiple of B.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
url=$1 jobs=$2 workers=$3 batch=$4 mode=${5:-claim}
case $mode in
  claim | delete) ;;
  *)
    echo "raw.sh: the mode is claim or delete, not '$mode'" >&2
    exit 64
    ;;
esac
if ((jobs % batch != 0)); then
  echo "raw.sh: JOBS ($jobs) must be a multiple of BATCH ($batch)" >&2
  exit 64
fi

psql -XAtq -v ON_ERROR_STOP=1 "$url" -f "$here/raw-schema.sql" >/dev/null

pgbench -n -c "$workers" -j "$workers" -T 600 -D batch="$batch" \
  -f "$here/raw-$mode.sql" "$url" >/dev/null 2>&1 &
consumers=$!
coproc POLL { psql -XAtq "$url"; }
trap 'kill "$consumers" "$POLL_PID" 2>/dev/null || true' EXIT
sleep 0.3

t0=$EPOCHREALTIME
out=$(pgbench -n -c 1 -t $((jobs / batch)) -D batch="$batch" -f "$here/raw-insert.sql" "$url" 2>&1)
tps=$(sed -n 's/^tps = \([0-9.]*\).*without initial connection time.*/\1/p' <<<"$out")
left=1
while ((left > 0)); do
  echo "SELECT count(*) FROM cmp_raw;" >&"${POLL[1]}"
  read -r left <&"${POLL[0]}"
  t2=$EPOCHREALTIME
  ((left > 0)) && sleep 0.002
done
if ! kill -0 "$consumers" 2>/dev/null; then
  echo "raw.sh: the consumers' pgbench ended early" >&2
  exit 1
fi
python3 -c '
import json, sys
jobs, workers, batch, tps, t0, t2, mode = sys.argv[1:]
print(json.dumps({"backend": "pgbench-" + mode, "jobs": int(jobs), "workers": int(workers),
                  "batch": int(batch), "enqueue_per_s": round(float(tps) * int(batch)),
                  "jobs_per_s": round(int(jobs) / (float(t2) - float(t0))),
                  "latency_ms": {"p50": None, "p90": None, "p99": None}}))
' "$jobs" "$workers" "$batch" "$tps" "$t0" "$t2" "$mode"
