#!/usr/bin/env bash
# run-dash.sh -- the dashboard's figures of docs/benchmarks.md ("sqlq serve:
# the dashboard's cost"): how long the API that its pages poll takes with
# JOBS jobs queued on PostgreSQL, and how many queries one open page costs
# the server per second.
#
# Usage: bench/run-dash.sh [PATH/TO/sqlq]
#
# On a throwaway PostgreSQL server (tests/servers/postgres.sh on port
# $PG_PORT, default 25476, PostgreSQL's defaults), queue "big" gets JOBS
# (default 1000000) ready jobs with `sqlq push --lines`, "small" 3 ready
# jobs and "dying" 3 dead ones; then `sqlq serve` runs and:
#   1. curl times each API answer the pages poll, REQS times (default 20):
#      the overview's GET /api/v1/queues, a queue page's GET
#      /api/v1/queues/Q and its job listings; median and largest;
#   2. headless Chromium keeps one page open for OPEN_S seconds (default
#      120), and the statements the server receives meanwhile are counted
#      from its log (log_statement = 'all'); first with no page open.
# Needs curl, psql, chromium.  Prints Markdown on stdout.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SQLQ=${1:-${SQLQ:-build/sqlq}}
PG_PORT=${PG_PORT:-25476}
JOBS=${JOBS:-1000000}
REQS=${REQS:-20}
OPEN_S=${OPEN_S:-120}
LISTEN_PORT=${LISTEN_PORT:-$((PG_PORT + 100))}
server="$here/../tests/servers/postgres.sh"
[[ -x $SQLQ ]] || { echo "run-dash.sh: no sqlq binary at '$SQLQ'" >&2; exit 64; }
say() { echo "run-dash.sh: $*" >&2; }

bash "$server" start "$PG_PORT" >/dev/null
url=$(bash "$server" url "$PG_PORT")
psql_q() { psql -X -q -t -A -h 127.0.0.1 -p "$PG_PORT" -U sqlq sqlq -c "$1"; }
serve_pid=
cleanup() {
  [[ -n $serve_pid ]] && kill "$serve_pid" 2>/dev/null && wait "$serve_pid" 2>/dev/null
  bash "$server" stop "$PG_PORT" >/dev/null || true
}
trap cleanup EXIT

"$SQLQ" --url "$url" init >/dev/null
say "queueing $JOBS jobs"
seq 1 "$JOBS" | "$SQLQ" --url "$url" push --lines big >/dev/null
for i in 1 2 3; do
  "$SQLQ" --url "$url" push small "small $i" >/dev/null
  "$SQLQ" --url "$url" push -a 1 dying "dying $i" >/dev/null
done
"$SQLQ" --url "$url" work --drain dying -- false 2>/dev/null || true
psql_q "VACUUM ANALYZE sqlq_jobs" >/dev/null

"$SQLQ" --url "$url" serve --listen "127.0.0.1:$LISTEN_PORT" >/dev/null &
serve_pid=$!
until curl -s -o /dev/null "http://127.0.0.1:$LISTEN_PORT/api/v1/server"; do sleep 0.1; done
base="http://127.0.0.1:$LISTEN_PORT"

# timing PATH: "median ms | largest ms" over REQS GETs.
timing() {
  for ((i = 0; i < REQS; i++)); do
    curl -s -o /dev/null -w '%{time_total}\n' "$base$1"
  done | python3 -c '
import statistics, sys
v = [float(x) * 1000 for x in sys.stdin if x.strip()]
print("%.0f | %.0f" % (statistics.median(v), max(v)))'
}

echo "Machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at the start;" \
  "PostgreSQL $(psql_q 'SHOW server_version'); $JOBS jobs ready in queue big."
echo
echo "| GET | median ms | largest ms |"
echo "| --- | ---: | ---: |"
for path in /api/v1/queues /api/v1/queues/big '/api/v1/queues/big/jobs?limit=100' \
  '/api/v1/queues/big/jobs?state=dead&limit=100' /api/v1/queues/small \
  '/api/v1/queues/small/jobs?limit=100'; do
  say "timing $path"
  echo "| \`$path\` | $(timing "$path") |"
done

# The page phase counts what the server receives: log_statement = 'all'
# (set by the superuser postgres, which the test server trusts), and the
# lines the server logs while a page is open: "statement:" (simple
# queries: BEGIN, COMMIT, ...) and "execute" (libsqlq's prepared
# statements, the queries that read).
pg_log=/tmp/sqlq-test-pg-$PG_PORT/server.log
psql -X -q -h 127.0.0.1 -p "$PG_PORT" -U postgres sqlq \
  -c "ALTER SYSTEM SET log_statement = 'all'" -c "SELECT pg_reload_conf()" >/dev/null
sleep 1
profile=$(mktemp -d)
echo
echo "| page open $OPEN_S s | queries (execute) | per second | all statements | per second |"
echo "| --- | ---: | ---: | ---: | ---: |"
for page in '' '#/' '#/queue/big' '#/queue/small'; do
  from=$(stat -c %s "$pg_log")
  if [[ -n $page ]]; then
    say "page $page open for $OPEN_S s"
    chromium --headless=new --no-sandbox --disable-gpu --no-first-run --disable-extensions \
      --disable-background-networking --disable-component-update --disable-sync \
      --user-data-dir="$profile" "$base/$page" >/dev/null 2>&1 &
    browser=$!
    sleep "$OPEN_S"
    kill "$browser"
    wait "$browser" 2>/dev/null || true
  else
    say "no page open for $OPEN_S s"
    sleep "$OPEN_S"
  fi
  tail -c +"$((from + 1))" "$pg_log" >"$profile.log"
  queries=$(grep -c 'LOG:  execute' "$profile.log" || true)
  statements=$(grep -cE 'LOG:  (execute|statement:)' "$profile.log" || true)
  rate() { python3 -c "print('%.2f' % ($1 / $OPEN_S))"; }
  echo "| \`${page:-none}\` | $queries | $(rate "$queries") | $statements | $(rate "$statements") |"
done
rm -rf "$profile" "$profile.log"
