#!/usr/bin/env bash
# run-rings-pools.sh -- the ring and pool measurements of docs/benchmarks.md.
#
# Usage: bench/run-rings-pools.sh [PATH/TO/sqlq]
#
# Runs `sqlq bench --ring` (pushes of 16 bytes into a ring of 1000, one per
# call) and `sqlq bench --pool` (picks from a pool of 16 items, one per
# call) with 1 client, 4 client threads and 4 client processes, each RUNS
# times (default 3), on SQLite (a fresh temporary file per run, under
# $BENCH_TMPDIR, default $TMPDIR, else /tmp), on a throwaway PostgreSQL
# server (tests/servers/postgres.sh on port $PG_PORT, default 25474, with
# PostgreSQL's durable defaults) and on a throwaway MariaDB server
# (tests/servers/mariadb.sh on port $MY_PORT, default 25475, with InnoDB's
# durable defaults), and prints the median rate of each as a Markdown table
# on stdout, after a short description of the machine.  Every call is its
# own transaction.  Environment knobs: RUNS, OPS (calls per run, default
# 20000), PG_PORT, MY_PORT, BACKENDS (which to run, default
# "sqlite postgres mariadb"; only their servers are started).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SQLQ=${1:-${SQLQ:-build/sqlq}}
RUNS=${RUNS:-3}
OPS=${OPS:-20000}
PG_PORT=${PG_PORT:-25474}
MY_PORT=${MY_PORT:-25475}
BACKENDS=${BACKENDS:-sqlite postgres mariadb}
server="$here/../tests/servers/postgres.sh"
my_server="$here/../tests/servers/mariadb.sh"

if [[ ! -x $SQLQ ]]; then
  echo "run-rings-pools.sh: no sqlq binary at '$SQLQ' (build it, or pass its path)" >&2
  exit 64
fi
# shellcheck source=bench/lib.sh
source "$here/lib.sh"
bench_name=run-rings-pools.sh
export TMPDIR=${BENCH_TMPDIR:-${TMPDIR:-/tmp}}

# Each backend run: its URL and a line describing it.  The default URL
# makes `sqlq bench` use a fresh temporary SQLite file.
urls=()
lines=()
stops=()
trap 'for stop in "${stops[@]}"; do eval "$stop" >&2; done' EXIT
for backend in $BACKENDS; do
  case $backend in
  sqlite)
    urls+=("sqlite:sqlq.db")
    lines+=("- SQLite: $(sqlite3 --version 2>/dev/null | cut -d' ' -f1) (WAL, synchronous=NORMAL), files under $TMPDIR")
    ;;
  postgres)
    bash "$server" start "$PG_PORT" >&2
    stops+=("bash '$server' stop '$PG_PORT'")
    pg_url=$(bash "$server" url "$PG_PORT")
    pg_setting() { psql -XAt "$pg_url" -c "SHOW $1"; }
    urls+=("$pg_url")
    lines+=("- PostgreSQL: $(pg_setting server_version), fsync $(pg_setting fsync), synchronous_commit $(pg_setting synchronous_commit), on 127.0.0.1")
    ;;
  mariadb)
    bash "$my_server" start "$MY_PORT" >&2
    stops+=("bash '$my_server' stop '$MY_PORT'")
    my_setting() { bash "$my_server" sql "$MY_PORT" "SELECT @@$1"; }
    urls+=("$(bash "$my_server" url "$MY_PORT")")
    lines+=("- MariaDB: $(my_setting version), innodb_flush_log_at_trx_commit $(my_setting innodb_flush_log_at_trx_commit), on 127.0.0.1")
    ;;
  *)
    echo "run-rings-pools.sh: unknown backend '$backend' in BACKENDS" >&2
    exit 64
    ;;
  esac
done
clients=("--workers 1" "--workers 4" "--workers 4 --processes")

machine "${lines[@]}"

echo "## Results (rings and pools)"
echo
echo "| Backend | Measurement | 1 client | 4 client threads | 4 client processes |"
echo "|---|---|---|---|---|"
for url in "${urls[@]}"; do
  backend=${url%%:*}
  for mode in ring pool; do
    unit=$([[ $mode == ring ]] && echo pushes || echo picks)
    row="| $backend | $unit/s, \`sqlq bench --$mode --jobs $OPS\` |"
    for c in "${clients[@]}"; do
      say "$backend $mode $c"
      # shellcheck disable=SC2086
      runs=$(repeat "$SQLQ" --url "$url" bench --$mode --jobs "$OPS" $c --json)
      row="$row $(median "$runs" per_s) |"
    done
    echo "$row"
  done
done
echo
echo "Load average after the runs: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)."
