#!/usr/bin/env bash
# tests/servers/firebird.sh -- a throwaway Firebird 3 server for the tests.
#
#   firebird.sh start PORT     (re)create and start a server on 127.0.0.1:PORT
#   firebird.sh stop PORT      stop it and remove its files (0 when none runs)
#   firebird.sh restart PORT   stop it (SIGKILL when it does not stop in time)
#                              and start it again on the same files
#   firebird.sh url PORT       print the URL the tests use
#   firebird.sh sql PORT SQL   run SQL with isql-fb as sqlq on the test
#                              database, through the server
#   firebird.sh pids PORT      print the pids of the running server, one a
#                              line (tests stop it with SIGSTOP to see a
#                              server that does not answer)
#   firebird.sh env PORT       print the environment (FIREBIRD=...,
#                              FIREBIRD_LOCK=..., FIREBIRD_TMP=..., one a
#                              line) under which the instance's configuration
#                              is used, also for embedded (firebird:PATH) use
#
# Everything lives in /tmp/sqlq-test-fb-PORT, so that separate runs find it:
#   root/       the instance's $FIREBIRD: its own firebird.conf (below),
#               databases.conf and security3.fdb, and links to Debian's
#               plugins/ (libEngine12.so, the embedded engine, and libSrp.so),
#               intl/, UDF/, firebird.msg and plugins.conf
#   lock/, tmp/ its FIREBIRD_LOCK and FIREBIRD_TMP
#   db/sqlq.fdb the test database, owned by user sqlq
#   server.log  the server's standard output and error; Firebird's own log
#               is Debian's, shared by every instance:
#               /var/log/firebird/firebird3.0.log (SQLQ_TEST_FB_LOG)
# `start` first stops and removes whatever a previous run left there.  The
# server is Debian's /usr/sbin/firebird (package firebird3.0-server;
# SQLQ_TEST_FB_BINDIR overrides the directory of firebird, and
# SQLQ_TEST_FB_ROOT Debian's root directory, the one holding plugins/).  As
# root it runs as the "firebird" system user, otherwise as the current user.
#
# The server (SuperServer) listens on 127.0.0.1:PORT only, and sends events
# (POST_EVENT) through 127.0.0.1:PORT+1 (RemoteAuxPort); with
# SQLQ_TEST_FB_LISTEN_ON set to an address, on that address instead, in
# `start` and `url` (Firebird binds one address: tests/crash/fb_netns.sh
# gives the host's end of its network namespace, which the host reaches
# too).  Its security
# database has:
#   SYSDBA   password 'sqlq-sysdba'
#   sqlq     password 'sqlq-secret', allowed to create databases, owner of
#            db/sqlq.fdb
#
# A database file the server has open cannot be opened embedded (SuperServer
# holds it exclusively): embedded tests use files of their own, under the
# environment that `env` prints.
#
# Exits 0 on success; on an error prints one line "firebird.sh: ..." on
# stderr (after the tail of the server's logs when it would not start) and
# exits 1, or 2 for a usage error.
set -euo pipefail

prog=firebird.sh
timeout_s=30
sysdba_password=sqlq-sysdba
sqlq_password=sqlq-secret

usage() {
  echo "usage: $prog start|stop|restart|url|env|pids PORT | sql PORT SQL" >&2
  exit 2
}

# shellcheck source=tests/servers/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ "$#" -ge 2 ] || usage
command=$1
case "$command" in
  start | stop | restart | url | env | pids) [ "$#" -eq 2 ] || usage ;;
  sql) [ "$#" -eq 3 ] || usage ;;
  *) usage ;;
esac
port=$2
check_port "$port"
[ "$port" -lt 65535 ] || die "port $port leaves no room for the events port PORT+1"

dir=/tmp/sqlq-test-fb-$port
root=$dir/root
database=$dir/db/sqlq.fdb
log=$dir/server.log
addr=${SQLQ_TEST_FB_LISTEN_ON:-127.0.0.1}
url="firebird://sqlq:$sqlq_password@$addr:$port/$database"
export FIREBIRD=$root FIREBIRD_LOCK=$dir/lock FIREBIRD_TMP=$dir/tmp

case "$command" in
  url)
    echo "$url"
    exit 0
    ;;
  env)
    printf 'FIREBIRD=%s\nFIREBIRD_LOCK=%s\nFIREBIRD_TMP=%s\n' "$FIREBIRD" "$FIREBIRD_LOCK" "$FIREBIRD_TMP"
    exit 0
    ;;
esac

bindir=${SQLQ_TEST_FB_BINDIR:-/usr/sbin}
fb_log=${SQLQ_TEST_FB_LOG:-/var/log/firebird/firebird3.0.log}
fb_root=${SQLQ_TEST_FB_ROOT:-$(printf '%s\n' /usr/lib/*/firebird/3.0 | head -n 1)}
[ -x "$bindir/firebird" ] ||
  die "no $bindir/firebird (bash scripts/install-deps.sh installs firebird3.0-server)"
[ -f "$fb_root/plugins/libEngine12.so" ] ||
  die "no $fb_root/plugins/libEngine12.so (bash scripts/install-deps.sh installs firebird3.0-server)"
command -v isql-fb >/dev/null || die "no isql-fb (bash scripts/install-deps.sh installs firebird3.0-utils)"

# isql_run ARGS... <SQL: isql-fb, stopping at the first error; its output
# (errors included) on standard output.
isql_run() {
  isql-fb -q -b -m "$@"
}

case "$command" in
  sql)
    isql_run -user sqlq -password "$sqlq_password" "$addr/$port:$database" <<<"$3"
    exit 0
    ;;
esac

run_servers_as firebird firebird3.0-server

# server_pids: the pids of the servers that run with this instance's
# FIREBIRD_LOCK, one a line, from /proc (Firebird changes its working
# directory, and keeps no pid file).  Shell builtins only: a readlink, tr
# and grep per process made one scan take 16 s on a loaded machine, and a
# restart twice that.
server_pids() {
  local proc var
  local -a environ
  for proc in /proc/[0-9]*; do
    [ "$proc/exe" -ef "$bindir/firebird" ] || continue
    mapfile -d '' -t environ 2>/dev/null <"$proc/environ" || continue
    for var in "${environ[@]}"; do
      if [ "$var" = "FIREBIRD_LOCK=$FIREBIRD_LOCK" ]; then
        echo "${proc#/proc/}"
        break
      fi
    done
  done
}

# halt: stop the server if it runs: SIGTERM, then SIGKILL after timeout_s
# seconds (Firebird 3 may ignore SIGTERM while it is starting up).
halt() {
  local pid
  for pid in $(server_pids); do
    kill -TERM "$pid" 2>/dev/null || true
    if ! wait_gone "$pid"; then
      echo "$prog: the server (pid $pid) ignored SIGTERM for ${timeout_s}s: SIGKILL" >&2
      kill -KILL "$pid" 2>/dev/null || true
      wait_gone "$pid" || die "the server in $dir survives SIGKILL"
    fi
  done
}

# make_root: the instance's $FIREBIRD directory, lock and temporary
# directories, and its security database with SYSDBA and sqlq, made
# embedded (as the owner, so that the server can open them).
make_root() {
  local entry out
  as_owner mkdir -p "$root" "$FIREBIRD_LOCK" "$FIREBIRD_TMP" "$dir/db"
  for entry in plugins intl UDF firebird.msg plugins.conf; do
    as_owner ln -s "$fb_root/$entry" "$root/$entry"
  done
  as_owner tee "$root/firebird.conf" >/dev/null <<CONF
# tests/servers/firebird.sh
ServerMode = Super
RemoteServicePort = $port
RemoteAuxPort = $((port + 1))
RemoteBindAddress = $addr
SecurityDatabase = $root/security3.fdb
TempDirectories = $FIREBIRD_TMP
DatabaseAccess = Full
UdfAccess = None
CONF
  as_owner tee "$root/databases.conf" >/dev/null <<CONF
# tests/servers/firebird.sh: the test database as alias "sqlq".
sqlq = $database
CONF
  # As Debian's postinst does: an empty database that security.sql turns
  # into a security database, then the users.  FIREBIRD, FIREBIRD_LOCK and
  # FIREBIRD_TMP are exported, and as_owner keeps them.
  if ! out=$({
    echo "CREATE DATABASE '$root/security3.fdb';" | as_owner isql-fb -q -b -m -user SYSDBA &&
      as_owner isql-fb -q -b -m -user SYSDBA -i /usr/share/firebird/3.0/security.sql "$root/security3.fdb" &&
      as_owner isql-fb -q -b -m -user SYSDBA "$root/security3.fdb" <<SQL
CREATE OR ALTER USER SYSDBA PASSWORD '$sysdba_password';
CREATE USER sqlq PASSWORD '$sqlq_password';
GRANT CREATE DATABASE TO USER sqlq;
COMMIT;
SQL
  } 2>&1); then
    printf '%s\n' "$out" | tail -n 20 >&2
    die "cannot create the security database in $root"
  fi
}

# listening: something accepts TCP connections on $addr:$port.
listening() {
  (exec 3<>"/dev/tcp/$addr/$port") 2>/dev/null
}

# launch WHAT: start the server on the instance and wait until it listens
# (WHAT, start or restart, names it in a failure).
launch() {
  local launcher tries
  # A server that is not ours on the port would pass for ours below.
  ! listening || die "something already listens on $addr:$port"
  # The server runs in a session of its own, so that the test that started
  # it may end first; server_pids finds it by its environment.
  as_owner setsid "$bindir/firebird" </dev/null >>"$log" 2>&1 &
  launcher=$!
  tries=$((timeout_s * 10))
  until listening; do
    tries=$((tries - 1))
    # The launcher ends when the server does.
    if [ "$tries" -le 0 ] || ! kill -0 "$launcher" 2>/dev/null; then
      start_failed "$1" "$log" "$fb_log"
    fi
    sleep 0.1
  done
}

restart_server() {
  [ -f "$database" ] || die "no server on port $port ($database does not exist)"
  halt
  launch restart
}

start_server() {
  stop_server
  mkdir -m 700 "$dir" || die "cannot create $dir"
  if [ "$owner" != "$(id -un)" ]; then
    chown "$owner:" "$dir" || die "cannot give $dir to $owner"
  fi
  make_root
  launch start

  # The test database, created through the server so that sqlq owns it.
  isql_run -user sqlq -password "$sqlq_password" >/dev/null <<SQL ||
CREATE DATABASE '$addr/$port:$database' DEFAULT CHARACTER SET UTF8;
SQL
    die "cannot create $database through the server on port $port"
}

case "$command" in
  start) start_server ;;
  stop) stop_server ;;
  restart) restart_server ;;
  pids) server_pids ;;
esac
