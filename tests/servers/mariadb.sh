#!/usr/bin/env bash
# tests/servers/mariadb.sh -- throwaway MariaDB servers for the tests.
#
#   mariadb.sh start PORT      (re)create and start a server on 127.0.0.1:PORT
#   mariadb.sh stop PORT       stop it and remove its data (0 when none runs)
#   mariadb.sh restart PORT    stop it (SIGKILL when it does not stop in time,
#                              or was killed) and start it again on its data
#   mariadb.sh url PORT        print the URL the tests use
#   mariadb.sh pids PORT       print the pid of the running server (tests
#                              stop it with SIGSTOP to see a server that
#                              does not answer)
#   mariadb.sh start-replica PRIMARY_PORT REPLICA_PORT
#                              (re)create a primary and a replica with
#                              binlog_format=STATEMENT, the replica following
#                              the primary from its first binlog event
#   mariadb.sh sql PORT SQL    run SQL as root over the unix socket (batch
#                              output, no column names)
#   mariadb.sh replica-status PORT
#                              the replica's SHOW SLAVE STATUS, "Name: value"
#                              lines
#
# The data directory is /tmp/sqlq-test-my-PORT (data/ inside it); it also
# holds the server's unix socket (mysqld.sock), its configuration (my.cnf)
# and its log (server.log).  `start` first stops and removes whatever a
# previous run left there.  The binaries are Debian's (package
# mariadb-server: /usr/sbin/mariadbd; SQLQ_TEST_MY_BINDIR overrides the
# directory of mariadbd).  As root, the server runs as the "mysql" system
# user, otherwise as the current user.
#
# The server listens on 127.0.0.1 only (and on the address in
# SQLQ_TEST_MY_LISTEN_ALSO when set, where user sqlq connects from the /24
# around it as from 127.0.0.1: the host's end of the network namespace of
# tests/crash/my_netns.sh), keeps InnoDB's durable defaults
# (innodb_flush_log_at_trx_commit = 1) because benchmarks run against it too,
# and has:
#   user sqlq      no password, every privilege (its database sqlq)
#   user sqlq_pw   password 'sqlq-secret', every privilege on sqlq (the
#                  wrong-password test)
#   user root      no password, over the unix socket
#
# Exits 0 on success; on an error prints one line "mariadb.sh: ..." on stderr
# (after the tail of the server log when the server would not start) and
# exits 1, or 2 for a usage error.
set -euo pipefail

prog=mariadb.sh
timeout_s=60

usage() {
  echo "usage: $prog start|stop|restart|url|pids|replica-status PORT | start-replica PORT PORT | sql PORT SQL" >&2
  exit 2
}

# shellcheck source=tests/servers/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=tests/servers/mariadb_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/mariadb_lib.sh"

[ "$#" -ge 2 ] || usage
command=$1
case "$command" in
  start | stop | restart | url | pids | replica-status) [ "$#" -eq 2 ] || usage ;;
  start-replica | sql) [ "$#" -eq 3 ] || usage ;;
  *) usage ;;
esac
check_port "$2"
[ "$command" != start-replica ] || check_port "$3"

sbindir=${SQLQ_TEST_MY_BINDIR:-/usr/sbin}
[ -x "$sbindir/mariadbd" ] ||
  die "no $sbindir/mariadbd (bash scripts/install-deps.sh installs mariadb-server)"
for tool in mariadb mariadb-admin mariadb-install-db; do
  command -v "$tool" >/dev/null || die "no $tool (bash scripts/install-deps.sh installs mariadb-server)"
done

run_servers_as mysql mariadb-server

# Per-port paths: set_port PORT.
set_port() {
  port=$1
  dir=/tmp/sqlq-test-my-$port
  log=$dir/server.log
  sock=$dir/mysqld.sock
  cnf=$dir/my.cnf
}

# halt: stop the server of $dir, if it runs: shutdown, else SIGKILL.
halt() {
  local pid
  pid=$(server_pid) || return 0
  admin -e "SHUTDOWN" >/dev/null 2>&1 || kill -TERM "$pid" 2>/dev/null || true
  if ! wait_gone "$pid"; then
    kill -9 "$pid" 2>/dev/null || true
    wait_gone "$pid" || die "the server in $dir survives SIGKILL"
  fi
}

# launch: start mariadbd on $dir's data and wait until it answers.
launch() {
  rm -f "$sock" "$dir/mariadbd.pid"
  as_owner setsid "$sbindir/mariadbd" --defaults-file="$cnf" </dev/null >>"$log" 2>&1 &
  local launcher=$! tries=$((timeout_s * 10))
  until admin -e "SELECT 1" >/dev/null 2>&1; do
    tries=$((tries - 1))
    # The launcher ends when the server does.
    if [ "$tries" -le 0 ] || ! kill -0 "$launcher" 2>/dev/null; then
      start_failed "$1" "$log"
    fi
    sleep 0.1
  done
}

# create_server [EXTRA_CNF_LINES]: a fresh data directory and a running
# server with the test users.
create_server() {
  stop_server
  mkdir -m 700 "$dir" "$dir/tmp" || die "cannot create $dir"
  # A tmpdir of its own: servers sharing /tmp delete each other's temporary
  # tables ("Error on delete of '/tmp/#sql-temptable-...'", seen in CI with
  # other sessions' servers running beside it).
  cat >"$cnf" <<CNF
# tests/servers/mariadb.sh
[mariadbd]
datadir = $dir/data
tmpdir = $dir/tmp
socket = $sock
port = $port
bind-address = 127.0.0.1${SQLQ_TEST_MY_LISTEN_ALSO:+,$SQLQ_TEST_MY_LISTEN_ALSO}
pid-file = $dir/mariadbd.pid
log-error = $log
skip-name-resolve
max_connections = 400
innodb_buffer_pool_size = 128M
innodb_log_file_size = 128M
character-set-server = utf8mb4
collation-server = utf8mb4_bin
# information_schema.METADATA_LOCK_INFO, from which sqlq_locks() lists the
# GET_LOCK locks held (docs/mysql.md).
plugin-load-add = metadata_lock_info.so
${1:-}
CNF
  if [ "$owner" != "$(id -un)" ]; then
    chown -R "$owner:" "$dir" || die "cannot give $dir to $owner"
  fi
  install_db "$cnf" || die "mariadb-install-db failed in $dir"
  launch start
  admin -e "CREATE DATABASE sqlq;
    CREATE USER sqlq@'127.0.0.1', sqlq@localhost;
    GRANT ALL ON *.* TO sqlq@'127.0.0.1', sqlq@localhost;
    CREATE USER sqlq_pw@'127.0.0.1' IDENTIFIED BY 'sqlq-secret';
    CREATE USER sqlq_pw@localhost IDENTIFIED BY 'sqlq-secret';
    GRANT ALL ON sqlq.* TO sqlq_pw@'127.0.0.1', sqlq_pw@localhost;" ||
    die "cannot create the users and database sqlq on port $port"
  if [ -n "${SQLQ_TEST_MY_LISTEN_ALSO:-}" ]; then
    admin -e "CREATE USER sqlq@'${SQLQ_TEST_MY_LISTEN_ALSO%.*}.%';
      GRANT ALL ON *.* TO sqlq@'${SQLQ_TEST_MY_LISTEN_ALSO%.*}.%';" ||
      die "cannot let sqlq in from $SQLQ_TEST_MY_LISTEN_ALSO/24 on port $port"
  fi
}

restart_server() {
  [ -d "$dir/data" ] || die "no server on port $port ($dir/data does not exist)"
  halt
  launch restart
}

# start_replica PRIMARY REPLICA: two servers with statement-based binary
# logging; the replica follows the primary from its first event.
start_replica() {
  local primary=$1 replica=$2
  set_port "$primary"
  create_server "server-id = 1
log-bin = $dir/binlog
binlog_format = STATEMENT"
  admin -e "CREATE USER IF NOT EXISTS root@'127.0.0.1'; GRANT ALL ON *.* TO root@'127.0.0.1' WITH GRANT OPTION" ||
    die "cannot let the replica in on port $primary"
  # The users and database come to the replica from the binary log.
  local first
  first=$(admin -N -e "SHOW BINARY LOGS" | head -n 1 | cut -f1)
  set_port "$replica"
  create_server "server-id = 2
log-bin = $dir/binlog
binlog_format = STATEMENT
read_only = 1"
  admin -e "DROP DATABASE sqlq; DROP USER sqlq@'127.0.0.1', sqlq@localhost,
      sqlq_pw@'127.0.0.1', sqlq_pw@localhost;
    CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = $primary,
      MASTER_USER = 'root', MASTER_LOG_FILE = '$first', MASTER_LOG_POS = 4,
      MASTER_CONNECT_RETRY = 1;
    START SLAVE;" || die "cannot start the replica on port $replica"
}

set_port "$2"
case "$command" in
  url) echo "mysql://sqlq@127.0.0.1:$port/sqlq" ;;
  start) create_server ;;
  stop) stop_server ;;
  restart) restart_server ;;
  pids) server_pid || true ;;
  start-replica) start_replica "$2" "$3" ;;
  sql) admin -N -B -e "$3" ;;
  replica-status) admin -e "SHOW SLAVE STATUS\G" | sed 's/^ *//' ;;
esac
