#!/usr/bin/env bash
# run-soak.sh -- weeks of a queue in an hour (issue 21, item 4): a steady
# rate for MINUTES with delayed jobs, retries and dead jobs mixed in
# (sqlq bench --steady RATE --mix), and what the queue does per minute:
# jobs finished, claim time, lag, and the size of its tables on disk.
#
# Usage: bench/run-soak.sh BACKEND [PATH/TO/sqlq]
#   BACKEND   sqlite, postgres, mariadb or firebird
#
# Settings (environment):
#   RATE=800      jobs a second, one a commit
#   MINUTES=60    how long the producer runs
#   WORKERS=2 BATCH=100
#   OUT=bench-soak  where the per-second lines and the table go
#   PORT          the throwaway server's port (default 25483-25485)
#
# The servers are throwaway ones (tests/servers/*.sh) with their settings
# as the tests use them (PostgreSQL's autovacuum on, as by default); SQLite
# uses a file in a temporary directory.  Writes OUT/soak-BACKEND.jsonl (a
# line a second) and prints, as Markdown, a line a minute and the two
# figures of issue 21: the jobs finished a minute in the last WINDOW
# minutes against the first (at least 0.9x), and the size at the end
# against the size after WINDOW minutes (at most 2x); WINDOW is 10, or a
# third of a shorter run.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib.sh
source "$here/lib.sh"
backend=${1:-}
SQLQ=${2:-${SQLQ:-build/sqlq}}
RATE=${RATE:-800}
MINUTES=${MINUTES:-60}
WORKERS=${WORKERS:-2}
BATCH=${BATCH:-100}
OUT=${OUT:-bench-soak}

[[ $backend =~ ^(sqlite|postgres|mariadb|firebird)$ ]] || {
  echo "usage: bench/run-soak.sh sqlite|postgres|mariadb|firebird [PATH/TO/sqlq]" >&2
  exit 64
}
[[ -x $SQLQ ]] || {
  echo "run-soak.sh: no sqlq binary at '$SQLQ' (build it, or pass its path)" >&2
  exit 64
}
for v in RATE MINUTES WORKERS BATCH; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || {
    echo "run-soak.sh: $v wants a whole number above 0, not '${!v}'" >&2
    exit 64
  }
done
mkdir -p "$OUT"
tmp=$(mktemp -d)
port=
trap 'throwaway_stop; rm -rf "$tmp"' EXIT

# The URL and the item of sqlq_health() that is the queue's size on disk.
case $backend in
  sqlite) size=database_bytes ;;
  postgres) port=${PORT:-25483} size=table_bytes ;;
  mariadb) port=${PORT:-25484} size=table_bytes ;;
  firebird) port=${PORT:-25485} size=database_bytes ;;
esac
throwaway_start "$backend"
"$SQLQ" --url "$url" init >/dev/null

jsonl="$OUT/soak-$backend.jsonl"
echo "run-soak.sh: $backend, $RATE jobs/s for $MINUTES min, $WORKERS workers, batch $BATCH" >&2
"$SQLQ" --url "$url" bench --steady "$RATE" --seconds $((MINUTES * 60)) --workers "$WORKERS" \
  --batch "$BATCH" --queue soak --mix --json >"$jsonl"

python3 - "$jsonl" "$size" "$backend" "$RATE" <<'PY'
import json, sys
path, size, backend, rate = sys.argv[1:]
rows = [json.loads(l) for l in open(path)]
secs = [r for r in rows if "t" in r]
summary = rows[-1]
minutes = []
for m in range(len(secs) // 60):
    part = secs[m * 60:(m + 1) * 60]
    claims = sum(s["claims"] for s in part)
    claim_ms = sum(s["claim_ms"] * s["claims"] for s in part if s["claims"]) / claims if claims else float("nan")
    minutes.append({
        "m": m + 1,
        "done": sum(s["acked"] + s["died"] for s in part),
        "retried": sum(s["retried"] for s in part),
        "claim_ms": claim_ms,
        "lag_p99": max((s["lag_p99_ms"] or 0) for s in part),
        "backlog": max(s["backlog"] for s in part),
        "size": part[-1]["health"].get(size, 0),
    })
print("| minute | jobs finished | retried | claim mean | lag p99, worst second | backlog, most | %s |" % size)
print("|---|---|---|---|---|---|---|")
for x in minutes:
    print("| %d | %s | %s | %.3f ms | %.1f ms | %d | %s |" % (x["m"], f"{x['done']:,}", f"{x['retried']:,}",
          x["claim_ms"], x["lag_p99"], x["backlog"], f"{x['size']:,}"))
w = min(10, len(minutes) // 3)
if w:
    first = sum(x["done"] for x in minutes[:w]) / w
    last = sum(x["done"] for x in minutes[-w:]) / w
    print()
    print("%s, %s jobs/s, %d min: jobs finished a minute, last %d min against the first %d: %s / %s = %.2fx (target: at least 0.9x); "
          "size at the end against after %d min: %s / %s = %.2fx (target: at most 2x); enqueued %s, acked %s, dead %s"
          % (backend, rate, len(minutes), w, w, f"{last:,.0f}", f"{first:,.0f}", last / first if first else float("nan"),
             w, f"{minutes[-1]['size']:,}", f"{minutes[w - 1]['size']:,}",
             minutes[-1]["size"] / minutes[w - 1]["size"] if minutes[w - 1]["size"] else float("nan"),
             f"{summary['enqueued']:,}", f"{summary['acked']:,}", f"{summary.get('died', 0):,}"))
PY
