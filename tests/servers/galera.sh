#!/usr/bin/env bash
# tests/servers/galera.sh -- a throwaway three-node MariaDB Galera cluster
# for the tests, on loopback ports.
#
#   galera.sh start PORT     (re)create the three nodes and start them, the
#                            first bootstrapping the cluster; returns when
#                            wsrep_cluster_size is 3 and every node is Synced
#   galera.sh stop PORT      stop the nodes and remove their data (0 when
#                            none runs)
#   galera.sh url PORT       print the URLs of the three nodes, one a line
#   galera.sh sql PORT N SQL run SQL as root over node N's unix socket (N 1
#                            to 3; batch output, no column names)
#
# PORT is the first of twelve consecutive ports: node N (1 to 3) takes
# PORT+N-1 for SQL, PORT+2+N for replication (gcomm), PORT+5+N for
# incremental state transfers (IST) and PORT+8+N for full state transfers
# (SST, rsync).  All listen on 127.0.0.1 only.
#
# Node N's directory is /tmp/sqlq-test-ga-PORT/N: its data (data/), its
# unix socket (mysqld.sock), configuration (my.cnf) and log (server.log).
# `start` first stops and removes whatever a previous run left there.  The
# binaries are Debian's: mariadbd of mariadb-server
# (SQLQ_TEST_MY_BINDIR overrides its directory), the provider
# /usr/lib/galera/libgalera_smm.so of galera-4 (SQLQ_TEST_GALERA_PROVIDER
# overrides it) and rsync for the state transfers.  As root, the servers
# run as the "mysql" system user, otherwise as the current user.
#
# Galera's own settings are the ones it requires: binlog_format = ROW,
# innodb_autoinc_lock_mode = 2, and InnoDB tables (sqlq's are).  The first
# node starts with --wsrep-new-cluster; the others join it and copy its data
# with rsync (wsrep_sst_method = rsync), so the users and the database exist
# once, made on the first node:
#   user sqlq      no password, every privilege (its database sqlq)
#   user root      no password, over the unix socket
#
# Every wait is bounded (timeout_s); a node that fails to start or join
# stops the whole cluster.  Exits 0 on success; on an error prints one line
# "galera.sh: ..." on stderr (after the tail of the node's log when it
# would not start) and exits 1, or 2 for a usage error.
set -euo pipefail

prog=galera.sh
timeout_s=120

usage() {
  echo "usage: $prog start|stop|url PORT | sql PORT N SQL" >&2
  exit 2
}

# shellcheck source=tests/servers/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=tests/servers/mariadb_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/mariadb_lib.sh"

[ "$#" -ge 2 ] || usage
command=$1
case "$command" in
  start | stop | url) [ "$#" -eq 2 ] || usage ;;
  sql) [ "$#" -eq 4 ] && [[ $3 =~ ^[123]$ ]] || usage ;;
  *) usage ;;
esac
check_port "$2"
[ "$2" -le 65524 ] || usage
base=$2
top=/tmp/sqlq-test-ga-$base

sbindir=${SQLQ_TEST_MY_BINDIR:-/usr/sbin}
provider=${SQLQ_TEST_GALERA_PROVIDER:-/usr/lib/galera/libgalera_smm.so}
[ -x "$sbindir/mariadbd" ] ||
  die "no $sbindir/mariadbd (bash scripts/install-deps.sh installs mariadb-server)"
[ -f "$provider" ] || die "no $provider (bash scripts/install-deps.sh installs galera-4)"
for tool in mariadb mariadb-install-db rsync wsrep_sst_rsync; do
  command -v "$tool" >/dev/null ||
    die "no $tool (bash scripts/install-deps.sh installs mariadb-server, galera-4 and rsync)"
done

run_servers_as mysql mariadb-server

# set_node N: node N's ports and paths.
set_node() {
  node=$1
  port=$((base + node - 1))
  gcomm_port=$((base + 2 + node))
  ist_port=$((base + 5 + node))
  sst_port=$((base + 8 + node))
  dir=$top/$node
  log=$dir/server.log
  sock=$dir/mysqld.sock
  cnf=$dir/my.cnf
}

# status NAME: the node's wsrep status variable NAME, or nothing.
status() {
  admin -N -B -e "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS
    WHERE VARIABLE_NAME = '$1'" 2>/dev/null || true
}

# halt: stop the node's server, if it runs: SIGTERM, else SIGKILL.  (Its
# rsync daemon of a state transfer, if any, ends with it.)
halt() {
  local pid
  pid=$(server_pid) || return 0
  kill -TERM "$pid" 2>/dev/null || true
  if ! wait_gone "$pid"; then
    kill -9 "$pid" 2>/dev/null || true
    wait_gone "$pid" || die "the node in $dir survives SIGKILL"
  fi
}

# stop_cluster: stop the nodes, the last first (the first stops last, so
# the others leave a cluster that still has a primary component), and
# remove their directories.
stop_cluster() {
  [ -e "$top" ] || return 0
  if [ -L "$top" ] || [ ! -d "$top" ]; then
    die "$top is not a directory; remove it"
  fi
  local n
  for n in 3 2 1; do
    set_node "$n"
    [ -d "$dir" ] && halt
  done
  rm -rf "$top" || die "cannot remove $top"
}

# fail MESSAGE: stop the cluster (whatever runs of it), then die.
fail() {
  local message=$1
  ( stop_cluster ) >/dev/null 2>&1 || true
  die "$message"
}

# write_node N: node N's directory and configuration.
write_node() {
  set_node "$1"
  mkdir -m 700 "$dir" "$dir/tmp" "$dir/data" || die "cannot create $dir"
  local members="gcomm://127.0.0.1:$((base + 3)),127.0.0.1:$((base + 4)),127.0.0.1:$((base + 5))"
  cat >"$cnf" <<CNF
# tests/servers/galera.sh, node $node
[mariadbd]
datadir = $dir/data
tmpdir = $dir/tmp
socket = $sock
port = $port
bind-address = 127.0.0.1
pid-file = $dir/mariadbd.pid
log-error = $log
skip-name-resolve
max_connections = 400
innodb_buffer_pool_size = 64M
innodb_log_file_size = 64M
character-set-server = utf8mb4
collation-server = utf8mb4_bin
server-id = $node
binlog_format = ROW
default_storage_engine = InnoDB
innodb_autoinc_lock_mode = 2
wsrep_on = ON
wsrep_provider = $provider
wsrep_cluster_name = sqlq-test-$base
wsrep_cluster_address = $members
wsrep_node_name = node$node
wsrep_node_address = 127.0.0.1:$gcomm_port
wsrep_provider_options = "gmcast.listen_addr=tcp://127.0.0.1:$gcomm_port;ist.recv_addr=127.0.0.1:$ist_port;gcache.size=64M;evs.suspect_timeout=PT10S;evs.inactive_timeout=PT30S"
wsrep_sst_method = rsync
wsrep_sst_receive_address = 127.0.0.1:$sst_port
wsrep_slave_threads = 2
CNF
  if [ "$owner" != "$(id -un)" ]; then
    chown -R "$owner:" "$dir" || die "cannot give $dir to $owner"
  fi
}

# launch N [--wsrep-new-cluster]: start node N and wait until it answers
# and is Synced.
launch() {
  set_node "$1"
  shift
  rm -f "$sock" "$dir/mariadbd.pid"
  as_owner setsid "$sbindir/mariadbd" --defaults-file="$cnf" "$@" </dev/null >>"$log" 2>&1 &
  local launcher=$! tries=$((timeout_s * 10))
  until [ "$(status wsrep_local_state_comment)" = Synced ]; do
    tries=$((tries - 1))
    # The launcher ends when the server does.
    if [ "$tries" -le 0 ] || ! kill -0 "$launcher" 2>/dev/null; then
      ( start_failed "start node $node" "$log" ) || true
      fail "node $node (port $port) did not start and sync (within ${timeout_s}s)"
    fi
    sleep 0.1
  done
}

start_cluster() {
  local n
  stop_cluster
  mkdir -m 700 "$top" || die "cannot create $top"
  [ "$owner" = "$(id -un)" ] || chown "$owner:" "$top" || die "cannot give $top to $owner"
  for n in 1 2 3; do write_node "$n"; done
  set_node 1
  install_db "$cnf" --wsrep-on=OFF || fail "mariadb-install-db failed in $dir"
  launch 1 --wsrep-new-cluster
  admin -e "CREATE DATABASE sqlq;
    CREATE USER sqlq@'127.0.0.1', sqlq@localhost;
    GRANT ALL ON *.* TO sqlq@'127.0.0.1', sqlq@localhost;" ||
    fail "cannot create the user and database sqlq on node 1"
  # The joiners take the first node's data by rsync: one at a time, as a
  # donor serves one transfer at once.
  launch 2
  launch 3
  local tries=$((timeout_s * 10))
  for n in 1 2 3; do
    set_node "$n"
    until [ "$(status wsrep_cluster_size)" = 3 ]; do
      tries=$((tries - 1))
      [ "$tries" -gt 0 ] || fail "node $n does not see three nodes (within ${timeout_s}s)"
      sleep 0.1
    done
  done
}

case "$command" in
  url)
    for n in 1 2 3; do
      set_node "$n"
      echo "mysql://sqlq@127.0.0.1:$port/sqlq"
    done
    ;;
  start) start_cluster ;;
  stop) stop_cluster ;;
  sql)
    set_node "$3"
    admin -N -B -e "$4"
    ;;
esac
