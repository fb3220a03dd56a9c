#!/usr/bin/env bash
# tests/servers/postgres.sh -- a throwaway PostgreSQL server for the tests.
#
#   postgres.sh start PORT     (re)create and start a server on 127.0.0.1:PORT
#   postgres.sh stop PORT      stop it and remove its data (0 when none runs)
#   postgres.sh restart PORT   pg_ctl restart -m fast (start, when the server
#                              was killed), then wait until it is ready
#   postgres.sh url PORT       print the URL the tests use
#
# For the failover test (tests/cli/pg_failover.sh) and bench/run-failover.sh:
#   postgres.sh standby PORT PRIMARY_PORT
#                              (re)create a streaming standby of the server
#                              on PRIMARY_PORT (pg_basebackup -R) and start
#                              it on PORT; returns once it streams
#   postgres.sh sync PORT on|off
#                              synchronous replication on the server on PORT
#                              (synchronous_standby_names '*' or ''); with on,
#                              returns once a standby replicates synchronously
#   postgres.sh kill PORT      SIGKILL the server and all its processes, as a
#                              crash of its machine would (data kept)
#   postgres.sh promote PORT   promote the standby on PORT (pg_ctl promote)
#                              and wait until it takes writes
#   postgres.sh sql PORT SQL   run SQL as the superuser in database sqlq and
#                              print its rows (unaligned, '|' between fields)
#
# The data directory is /tmp/sqlq-test-pg-PORT, so that separate runs find
# it; it is also the server's unix socket directory and holds its log
# (server.log).  `start` first stops and removes whatever a previous run left
# there.  The binaries are those of the highest version in
# /usr/lib/postgresql/*/bin (Debian's layout; SQLQ_TEST_PG_BINDIR overrides).
# initdb and pg_ctl refuse to run as root: as root the server runs as the
# "postgres" system user, otherwise as the current user.
#
# The server listens on 127.0.0.1 only (and on the address in
# SQLQ_TEST_PG_LISTEN_ALSO when set, trusted like 127.0.0.1: the host's end
# of the network namespace of tests/crash/pg_netns.sh), keeps PostgreSQL's durable defaults
# (fsync, synchronous_commit) because benchmarks run against it too, and has:
#   role sqlq      LOGIN CREATEDB, owner of database sqlq; trusted
#   role sqlq_pw   LOGIN PASSWORD 'sqlq-secret', member of sqlq; always
#                  authenticated with scram-sha-256 (the wrong-password test)
#   role sqlq_writer  LOGIN and nothing else: an application role, which
#                  pg_subscribe_hostile.sh lets write a subscribed table
#   role sqlq_owner   LOGIN and nothing else: an application role that owns
#                  a subscribed table and tries to run code as the
#                  subscriber (pg_subscribe_owner.sh)
#   every other role is trusted, on 127.0.0.1 and on the unix socket;
#   max_prepared_transactions = 4, so that pg_health.sh can hold a prepared
#   transaction.
#
# Exits 0 on success; on an error prints one line "postgres.sh: ..." on stderr
# (after the tail of the server log when the server would not start) and
# exits 1, or 2 for a usage error.
set -euo pipefail

prog=postgres.sh
timeout_s=30

usage() {
  echo "usage: $prog start|stop|restart|url|kill|promote PORT | standby PORT PRIMARY_PORT | sync PORT on|off | sql PORT SQL" >&2
  exit 2
}

# shellcheck source=tests/servers/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ "$#" -ge 2 ] || usage
command=$1
port=$2
check_port "$port"
case "$command" in
  standby | sync | sql) [ "$#" -eq 3 ] || usage ;;
  *) [ "$#" -eq 2 ] || usage ;;
esac
arg=${3:-}

dir=/tmp/sqlq-test-pg-$port
log=$dir/server.log
url="postgres://sqlq@127.0.0.1:$port/sqlq"

case "$command" in
  url)
    echo "$url"
    exit 0
    ;;
  start | stop | restart | standby | sync | kill | promote | sql) ;;
  *) usage ;;
esac

# The server's binaries: the highest version installed.
bindir=${SQLQ_TEST_PG_BINDIR:-}
if [ -z "$bindir" ]; then
  bindir=$(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
fi
[ -x "$bindir/pg_ctl" ] || die "no PostgreSQL server binaries in /usr/lib/postgresql/*/bin (bash scripts/install-deps.sh installs them)"

run_servers_as postgres postgresql-common

# server_pids: the processes of the server in $dir (the postmaster and its
# children all run in the data directory), from /proc.
server_pids() {
  # find fails on processes that end while it reads /proc: not an error.
  { find /proc -mindepth 2 -maxdepth 2 -name cwd \( -lname "$dir" -o -lname "$dir (deleted)" \) \
    2>/dev/null || true; } | sed 's|^/proc/||; s|/cwd$||'
}

# remove_stale_shm: after a SIGKILL the postmaster leaves its (small) System
# V shared memory segment behind; remove it when nothing is attached.  The
# key and id are line 7 of postmaster.pid.
remove_stale_shm() {
  local key id
  [ -f "$dir/postmaster.pid" ] || return 0
  read -r key id < <(sed -n 7p "$dir/postmaster.pid") || return 0
  case "$key$id" in
    '' | *[!0-9]*) return 0 ;;
  esac
  key=$(printf '0x%08x' "$key")
  # ipcs -m: key shmid owner perms bytes nattch [status]
  if ipcs -m 2>/dev/null | awk -v k="$key" -v i="$id" '$1 == k && $2 == i && $6 == 0 { f = 1 } END { exit !f }'; then
    ipcrm -m "$id" 2>/dev/null || true
  fi
}

# postmaster_alive: the postmaster named in postmaster.pid runs.  One killed
# but not yet reaped (a zombie) does not: it has no cwd in /proc.
postmaster_alive() {
  local pid
  [ -f "$dir/postmaster.pid" ] || return 1
  pid=$(head -n 1 "$dir/postmaster.pid")
  case "$pid" in
    '' | *[!0-9]*) return 1 ;;
  esac
  [ "$(readlink "/proc/$pid/cwd" 2>/dev/null)" = "$dir" ]
}

# kill_leftovers: SIGKILL what is left of the server in $dir and wait until
# it is gone, then remove its shared memory, pid file and socket (with its
# lock file), which would stop a new postmaster from starting there while
# the old one is an unreaped zombie.
kill_leftovers() {
  local pids tries
  pids=$(server_pids)
  if [ -n "$pids" ]; then
    # shellcheck disable=SC2086 # one pid a word
    kill -9 $pids 2>/dev/null || true
    tries=$((timeout_s * 10))
    while [ -n "$(server_pids)" ] && [ "$tries" -gt 0 ]; do
      sleep 0.1
      tries=$((tries - 1))
    done
    [ -z "$(server_pids)" ] || die "the server in $dir survives SIGKILL"
  fi
  remove_stale_shm
  rm -f "$dir/postmaster.pid" "$dir/.s.PGSQL.$port" "$dir/.s.PGSQL.$port.lock"
}

# stop_server: stop the server in $dir if one runs (pg_ctl stop -m fast,
# else SIGKILL), then remove $dir.
stop_server() {
  [ -e "$dir" ] || return 0
  if [ -L "$dir" ] || [ ! -d "$dir" ]; then
    die "$dir is not a directory; remove it"
  fi
  if [ -f "$dir/postmaster.pid" ]; then
    # Killed halfway before, or not stopping in time: kill what is left.
    if ! postmaster_alive ||
      ! as_owner "$bindir/pg_ctl" -D "$dir" -m fast -w -t "$timeout_s" stop >/dev/null 2>&1; then
      kill_leftovers
    fi
  fi
  rm -rf "$dir" || die "cannot remove $dir"
}

# start_failed WHAT PG_CTL_OUTPUT: report a server that did not come up,
# with the end of its log (or pg_ctl's output when there is no log).
start_failed() {
  if [ -s "$log" ]; then
    echo "--- last lines of $log:" >&2
    tail -n 20 "$log" >&2
  elif [ -n "$2" ]; then
    printf '%s\n' "$2" >&2
  fi
  die "the server on port $port did not $1 (within ${timeout_s}s)"
}

# wait_ready: the server accepts TCP connections within the timeout.
wait_ready() {
  "$bindir/pg_isready" -q -h 127.0.0.1 -p "$port" -U postgres -d postgres -t "$timeout_s"
}

# psql_admin -c SQL...: run each SQL as the superuser over the unix socket.
psql_admin() {
  "$bindir/psql" -X -q -v ON_ERROR_STOP=1 -h "$dir" -p "$port" -U postgres -d postgres "$@" >/dev/null
}

start_server() {
  local out

  stop_server
  mkdir -m 700 "$dir" || die "cannot create $dir"
  if [ "$owner" != "$(id -un)" ]; then
    chown "$owner:" "$dir" || die "cannot give $dir to $owner"
  fi

  # --no-sync only skips flushing initdb's own files; the running server
  # keeps fsync = on.
  if ! out=$(as_owner "$bindir/initdb" -D "$dir" -U postgres --encoding=UTF8 --locale=C \
    --auth-local=trust --auth-host=trust --no-sync 2>&1); then
    printf '%s\n' "$out" | tail -n 20 >&2
    die "initdb failed in $dir"
  fi

  as_owner tee -a "$dir/postgresql.conf" >/dev/null <<CONF

# tests/servers/postgres.sh
listen_addresses = '127.0.0.1${SQLQ_TEST_PG_LISTEN_ALSO:+, $SQLQ_TEST_PG_LISTEN_ALSO}'
port = $port
unix_socket_directories = '$dir'
max_connections = 200
max_prepared_transactions = 4
shared_buffers = 128MB
password_encryption = 'scram-sha-256'
log_min_messages = warning
CONF

  as_owner tee "$dir/pg_hba.conf" >/dev/null <<'HBA'
# tests/servers/postgres.sh: sqlq_pw needs its password; the rest is trusted.
# TYPE  DATABASE  USER     ADDRESS        METHOD
local   all       sqlq_pw                 scram-sha-256
host    all       sqlq_pw  127.0.0.1/32   scram-sha-256
local   all       all                     trust
host    all       all      127.0.0.1/32   trust
host    replication all    127.0.0.1/32   trust
HBA
  if [ -n "${SQLQ_TEST_PG_LISTEN_ALSO:-}" ]; then
    echo "host    all       all      $SQLQ_TEST_PG_LISTEN_ALSO/24 trust" |
      as_owner tee -a "$dir/pg_hba.conf" >/dev/null
  fi

  if ! out=$(as_owner "$bindir/pg_ctl" -D "$dir" -l "$log" -w -t "$timeout_s" start 2>&1) ||
    ! wait_ready; then
    start_failed start "$out"
  fi

  psql_admin -c "CREATE ROLE sqlq LOGIN CREATEDB" \
    -c "CREATE DATABASE sqlq OWNER sqlq" \
    -c "CREATE ROLE sqlq_pw LOGIN PASSWORD 'sqlq-secret' IN ROLE sqlq" \
    -c "GRANT CONNECT ON DATABASE sqlq TO sqlq_pw" \
    -c "CREATE ROLE sqlq_writer LOGIN" \
    -c "CREATE ROLE sqlq_owner LOGIN" ||
    die "cannot create the roles and database sqlq on port $port"
}

restart_server() {
  local out action=restart
  [ -d "$dir" ] || die "no server on port $port ($dir does not exist)"
  if ! postmaster_alive; then
    # Killed (a crash test's doing): start it again from what it left.
    kill_leftovers
    action=start
  fi
  if ! out=$(as_owner "$bindir/pg_ctl" -D "$dir" -l "$log" -m fast -w -t "$timeout_s" "$action" 2>&1) ||
    ! wait_ready; then
    start_failed restart "$out"
  fi
}

# sql_in_sqlq SQL: run SQL as the superuser in database sqlq, printing rows.
sql_in_sqlq() {
  "$bindir/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h "$dir" -p "$port" -U postgres -d sqlq -c "$1"
}

# wait_for SQL: wait until SQL (run in database postgres) prints t.
wait_for() {
  local tries=$((timeout_s * 10))
  until [ "$("$bindir/psql" -X -q -A -t -h "$dir" -p "$port" -U postgres -d postgres -c "$1" 2>/dev/null)" = t ]; do
    tries=$((tries - 1))
    [ "$tries" -gt 0 ] || return 1
    sleep 0.1
  done
}

# start_standby PRIMARY_PORT: a standby of the server on PRIMARY_PORT, on
# $port.  The base backup carries the primary's configuration: the port
# and socket directory are set anew after it.
start_standby() {
  local out primary=$1
  check_port "$primary"
  stop_server
  if ! out=$(as_owner "$bindir/pg_basebackup" -h 127.0.0.1 -p "$primary" -U postgres -D "$dir" \
    -R -X stream --no-sync --checkpoint=fast 2>&1); then
    printf '%s\n' "$out" | tail -n 20 >&2
    die "pg_basebackup from port $primary failed"
  fi
  chmod 700 "$dir"
  rm -f "$dir/server.log"
  as_owner tee -a "$dir/postgresql.conf" >/dev/null <<CONF

# tests/servers/postgres.sh standby of port $primary
port = $port
unix_socket_directories = '$dir'
CONF
  if ! out=$(as_owner "$bindir/pg_ctl" -D "$dir" -l "$log" -w -t "$timeout_s" start 2>&1) ||
    ! wait_ready; then
    start_failed start "$out"
  fi
  wait_for "SELECT status = 'streaming' FROM pg_stat_wal_receiver" ||
    die "the standby on port $port does not stream from port $primary"
}

# set_sync on|off: synchronous replication on the server of $port.
set_sync() {
  local names
  case "$1" in
    on) names='*' ;;
    off) names='' ;;
    *) usage ;;
  esac
  psql_admin -c "ALTER SYSTEM SET synchronous_standby_names = '$names'" \
    -c "SELECT pg_reload_conf()" || die "cannot set synchronous_standby_names on port $port"
  if [ "$1" = on ]; then
    wait_for "SELECT count(*) > 0 FROM pg_stat_replication WHERE sync_state = 'sync'" ||
      die "no standby replicates synchronously from port $port"
  fi
}

promote_standby() {
  local out
  if ! out=$(as_owner "$bindir/pg_ctl" -D "$dir" -w -t "$timeout_s" promote 2>&1); then
    printf '%s\n' "$out" >&2
    die "cannot promote the standby on port $port"
  fi
  wait_for "SELECT NOT pg_is_in_recovery()" || die "the server on port $port is still a standby"
}

case "$command" in
  start) start_server ;;
  stop) stop_server ;;
  restart) restart_server ;;
  standby) start_standby "$arg" ;;
  sync) set_sync "$arg" ;;
  kill) kill_leftovers ;;
  promote) promote_standby ;;
  sql) sql_in_sqlq "$arg" ;;
esac
