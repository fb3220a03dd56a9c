#!/usr/bin/env bash
# run-hold.sh -- a queue at a steady rate while a reader holds an old
# snapshot (issue 21; docs/benchmarks.md, "A queue under a held snapshot").
#
# Usage: bench/run-hold.sh BACKEND [PATH/TO/sqlq]
#   BACKEND   sqlite, postgres, mariadb or firebird
#
# Settings (environment):
#   RATE=800        jobs a second, one a commit (sqlq bench --steady)
#   SECONDS_RUN=180 how long the producer runs
#   HOLD_FROM=40    when the reader takes its snapshot (s from the start)
#   HOLD_TO=160     when it lets it go
#   WORKERS=1 BATCH=100
#   OUT=bench-hold  where the per-second lines, the table and the plot go
#   PORT            the throwaway server's port (default 25480-25482)
#   URL_OPTIONS     options for the benchmark's URL, e.g. lanes=on (none)
#
# The reader reads sqlq_jobs in a transaction and keeps it open: on
# PostgreSQL a REPEATABLE READ transaction (psql), on MariaDB START
# TRANSACTION WITH CONSISTENT SNAPSHOT (mariadb), on Firebird a SNAPSHOT
# transaction (isql-fb), on SQLite a read transaction (python3's sqlite3).
# A server backend runs on a throwaway server (tests/servers/*.sh), started
# and stopped here; SQLite uses a file in a temporary directory.
#
# Writes OUT/hold-BACKEND.jsonl (sqlq bench --steady --json: a line a
# second, with the database's health), OUT/hold-BACKEND.tsv and, when
# gnuplot is installed (gnuplot-nox), OUT/hold-BACKEND.png (bench/hold.gp);
# prints a Markdown table of the figures issue 21 asks for on stdout.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib.sh
source "$here/lib.sh"
backend=${1:-}
SQLQ=${2:-${SQLQ:-build/sqlq}}
RATE=${RATE:-800}
SECONDS_RUN=${SECONDS_RUN:-180}
HOLD_FROM=${HOLD_FROM:-40}
HOLD_TO=${HOLD_TO:-160}
WORKERS=${WORKERS:-1}
BATCH=${BATCH:-100}
OUT=${OUT:-bench-hold}

usage() {
  echo "usage: bench/run-hold.sh sqlite|postgres|mariadb|firebird [PATH/TO/sqlq]" >&2
  exit 64
}
[[ $backend =~ ^(sqlite|postgres|mariadb|firebird)$ ]] || usage
[[ -x $SQLQ ]] || {
  echo "run-hold.sh: no sqlq binary at '$SQLQ' (build it, or pass its path)" >&2
  exit 64
}
for v in RATE SECONDS_RUN HOLD_FROM HOLD_TO WORKERS BATCH; do
  [[ ${!v} =~ ^[0-9]+$ ]] || {
    echo "run-hold.sh: $v wants a whole number, not '${!v}'" >&2
    exit 64
  }
done
((HOLD_FROM < HOLD_TO && HOLD_TO <= SECONDS_RUN)) || {
  echo "run-hold.sh: want HOLD_FROM < HOLD_TO <= SECONDS_RUN" >&2
  exit 64
}
mkdir -p "$OUT"
tmp=$(mktemp -d)
port=
cleanup() {
  jobs -p | xargs -r kill 2>/dev/null || true
  throwaway_stop
  rm -rf "$tmp"
}
trap cleanup EXIT

# The URL, the reader's command (reading SQL on its stdin) and the item of
# sqlq_health() that shows what piles up.
case $backend in
  sqlite)
    reader=(python3 -c '
import sqlite3, sys
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("BEGIN")
c.execute("SELECT count(*) FROM sqlq_jobs").fetchone()
sys.stdin.read()
c.execute("COMMIT")' "$tmp/bench.db")
    pileup=wal_bytes
    ;;
  postgres)
    port=${PORT:-25480}
    reader=(psql -X -q "$(bash "$here/../tests/servers/postgres.sh" url "$port")")
    begin="BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM sqlq_jobs;"
    pileup=dead_rows
    ;;
  mariadb)
    port=${PORT:-25481}
    reader=(mariadb -h 127.0.0.1 -P "$port" -u sqlq sqlq)
    begin="START TRANSACTION WITH CONSISTENT SNAPSHOT; SELECT count(*) FROM sqlq_jobs;"
    pileup=history_list_length
    ;;
  firebird)
    port=${PORT:-25482}
    reader=(isql-fb -q -user sqlq -password sqlq-secret "127.0.0.1/$port:/tmp/sqlq-test-fb-$port/db/sqlq.fdb")
    begin="SET TRANSACTION SNAPSHOT; SELECT count(*) FROM sqlq_jobs;"
    pileup=oldest_snapshot_gap
    ;;
esac
throwaway_start "$backend"
"$SQLQ" --url "$url" init >/dev/null

# The reader: takes its snapshot at HOLD_FROM, lets it go at HOLD_TO (its
# stdin ends).
(
  sleep "$HOLD_FROM"
  {
    echo "${begin:-}"
    sleep $((HOLD_TO - HOLD_FROM))
  } | "${reader[@]}" >/dev/null
) &

jsonl="$OUT/hold-$backend.jsonl"
echo "run-hold.sh: $backend, $RATE jobs/s for $SECONDS_RUN s, hold $HOLD_FROM-$HOLD_TO s" >&2
bench_url=$url
[[ -z ${URL_OPTIONS:-} ]] || bench_url="$url?$URL_OPTIONS"
"$SQLQ" --url "$bench_url" bench --steady "$RATE" --seconds "$SECONDS_RUN" --workers "$WORKERS" \
  --batch "$BATCH" --queue hold --json >"$jsonl"
wait

python3 - "$jsonl" "$OUT/hold-$backend.tsv" "$pileup" "$HOLD_FROM" "$HOLD_TO" "$backend" \
  "$RATE" <<'PY'
import json, statistics, sys
path, tsv, pileup, t0, t1, backend, rate = sys.argv[1:]
t0, t1 = int(t0), int(t1)
rows = [json.loads(l) for l in open(path)]
secs = [r for r in rows if "t" in r]
with open(tsv, "w") as f:
    f.write("t\tclaim_ms\tlag_p99_ms\tbacklog\tpileup\n")
    for s in secs:
        f.write("%d\t%s\t%s\t%d\t%d\n" % (s["t"], s["claim_ms"] if s["claim_ms"] is not None else "",
                s["lag_p99_ms"] if s["lag_p99_ms"] is not None else "", s["backlog"],
                s["health"].get(pileup, 0)))
def mean_claim(lo, hi):
    xs = [s["claim_ms"] for s in secs if lo < s["t"] <= hi and s["claim_ms"] is not None]
    return statistics.mean(xs) if xs else float("nan")
last = min(60, (t1 - t0) // 2)
before = mean_claim(5, t0)
during = mean_claim(t1 - last, t1)
p99 = max((s["lag_p99_ms"] or 0) for s in secs if s["t"] <= t1)
backlog = max(s["backlog"] for s in secs if s["t"] <= t1)
pile = max(s["health"].get(pileup, 0) for s in secs)
print("| backend | rate | hold | claim mean before -> last %d s of the hold | x | lag p99 max | backlog max | %s max |" % (last, pileup))
print("|---|---|---|---|---|---|---|---|")
print("| %s | %s/s | %d-%d s | %.3f -> %.3f ms | %.1f | %.1f ms | %d | %s |" % (
    backend, rate, t0, t1, before, during, during / before, p99, backlog, f"{pile:,}"))
PY
if command -v gnuplot >/dev/null; then
  gnuplot -e "tsv='$OUT/hold-$backend.tsv'; png='$OUT/hold-$backend.png'; t0=$HOLD_FROM; t1=$HOLD_TO; title='$backend, $RATE jobs/s'" \
    "$here/hold.gp"
  echo "run-hold.sh: plot in $OUT/hold-$backend.png" >&2
fi
