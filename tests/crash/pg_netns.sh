# tests/crash/pg_netns.sh -- worker hosts cut off by the network
# (netns.bash) on PostgreSQL: a server of its own on SQLQ_TEST_PG_NETNS_PORT,
# listening on the host's end of the namespace's veth pair too.
#
# Needs SQLQ_TEST_PG_SERVER and SQLQ_TEST_PG_NETNS_PORT (set by
# tests/CMakeLists.txt), root, ip and nft.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

netns_port=${SQLQ_TEST_PG_NETNS_PORT:?set SQLQ_TEST_PG_NETNS_PORT}

server_start() {
  # shellcheck disable=SC2086 # "bash SCRIPT"
  SQLQ_TEST_PG_LISTEN_ALSO=$1 $SQLQ_TEST_PG_SERVER start "$netns_port"
}

server_stop() {
  # shellcheck disable=SC2086 # "bash SCRIPT"
  $SQLQ_TEST_PG_SERVER stop "$netns_port"
}

server_url() {
  echo "postgres://sqlq@$1:$netns_port/sqlq"
}

source "$(dirname "${BASH_SOURCE[0]}")/netns.bash"
