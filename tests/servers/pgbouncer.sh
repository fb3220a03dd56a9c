#!/usr/bin/env bash
# tests/servers/pgbouncer.sh -- a throwaway PgBouncer in transaction mode in
# front of a PostgreSQL server on 127.0.0.1, for the tests and benchmarks.
#
#   pgbouncer.sh start PORT PG_PORT [POOL]   (re)create and start it on
#                                            127.0.0.1:PORT, in front of the
#                                            server on 127.0.0.1:PG_PORT, with
#                                            POOL server sessions per database
#                                            and user (default 3)
#   pgbouncer.sh stop PORT                   stop it and remove its directory
#                                            (0 when none runs)
#
# The directory is /tmp/sqlq-test-pgb-PORT: its configuration, log
# (pgbouncer.log) and pid file.  pool_mode is transaction, auth_type trust
# (the user sqlq, which the test server trusts), no unix socket.  PgBouncer
# refuses to run as root: as root it runs as the "postgres" system user.
# `start` first stops whatever a previous run left there, and returns once
# PgBouncer answers a query.
#
# Exits 0 on success; on an error prints one line "pgbouncer.sh: ..." on
# stderr (after the tail of the log when it would not start) and exits 1,
# or 2 for a usage error.
set -euo pipefail

prog=pgbouncer.sh
timeout_s=10

usage() {
  echo "usage: $prog start PORT PG_PORT [POOL] | stop PORT" >&2
  exit 2
}

# shellcheck source=tests/servers/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ "$#" -ge 2 ] || usage
command=$1
port=$2
check_port "$port"
dir=/tmp/sqlq-test-pgb-$port
case "$command" in
  start)
    [ "$#" -ge 3 ] && [ "$#" -le 4 ] || usage
    pg_port=$3
    check_port "$pg_port"
    pool=${4:-3}
    case "$pool" in '' | *[!0-9]* | 0*) usage ;; esac
    ;;
  stop) [ "$#" -eq 2 ] || usage ;;
  *) usage ;;
esac

command -v pgbouncer >/dev/null || die "pgbouncer is not installed (bash scripts/install-deps.sh)"
run_servers_as postgres postgresql-common

pid_of() { cat "$dir/pgbouncer.pid" 2>/dev/null || true; }

# halt: stop the PgBouncer of $dir, if one runs (SIGTERM, then SIGKILL).
halt() {
  local pid
  pid=$(pid_of)
  case "$pid" in
    '' | *[!0-9]*) return 0 ;;
  esac
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = pgbouncer ] || return 0
  kill -TERM "$pid" 2>/dev/null || true
  wait_gone "$pid" || { kill -9 "$pid" 2>/dev/null || true; wait_gone "$pid" || die "PgBouncer $pid survives SIGKILL"; }
}

stop_server
[ "$command" = stop ] && exit 0

mkdir -p "$dir"
cat >"$dir/pgbouncer.ini" <<EOF
[databases]
* = host=127.0.0.1 port=$pg_port
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir =
auth_type = trust
auth_file = $dir/userlist.txt
pool_mode = transaction
default_pool_size = $pool
max_client_conn = 200
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
EOF
printf '"sqlq" ""\n' >"$dir/userlist.txt"
[ "$owner" = "$(id -un)" ] || chown -R "$owner" "$dir"
as_owner pgbouncer -d -q "$dir/pgbouncer.ini" || start_failed start "$dir/pgbouncer.log"
tries=$((timeout_s * 10))
until [ -n "$(pid_of)" ] && [ -d "/proc/$(pid_of)" ] &&
  psql -X -q -At "postgres://sqlq@127.0.0.1:$port/postgres" -c "SELECT 1" >/dev/null 2>&1; do
  tries=$((tries - 1))
  [ "$tries" -gt 0 ] || start_failed start "$dir/pgbouncer.log"
  sleep 0.1
done
