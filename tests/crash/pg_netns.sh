# tests/crash/pg_netns.sh -- worker hosts cut off by the network
# (netns.bash) on PostgreSQL: a server of its own on SQLQ_TEST_PG_NETNS_PORT,
# listening on the host's end of the namespace's veth pair too
# (SQLQ_TEST_PG_LISTEN_ALSO of tests/servers/postgres.sh).
#
# Needs SQLQ_TEST_PG_SERVER and SQLQ_TEST_PG_NETNS_PORT (set by
# tests/CMakeLists.txt), root, ip and nft.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

netns_port=${SQLQ_TEST_PG_NETNS_PORT:?set SQLQ_TEST_PG_NETNS_PORT}
server_script=$SQLQ_TEST_PG_SERVER
listen_also=SQLQ_TEST_PG_LISTEN_ALSO
scheme=postgres

source "$(dirname "${BASH_SOURCE[0]}")/netns.bash"
