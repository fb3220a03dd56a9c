# tests/crash/my_netns.sh -- worker hosts cut off by the network
# (netns.bash) on MariaDB: a server of its own on SQLQ_TEST_MY_NETNS_PORT,
# listening on the host's end of the namespace's veth pair too
# (SQLQ_TEST_MY_LISTEN_ALSO of tests/servers/mariadb.sh).  MariaDB has no
# per-session setting for the server's side of TCP keepalives: a lock of a
# holder cut off stays held (by the server, for nobody) until the link
# returns.
#
# Needs SQLQ_TEST_MY_SERVER and SQLQ_TEST_MY_NETNS_PORT (set by
# tests/CMakeLists.txt), root, ip and nft.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

netns_port=${SQLQ_TEST_MY_NETNS_PORT:?set SQLQ_TEST_MY_NETNS_PORT}
server_script=$SQLQ_TEST_MY_SERVER
listen_also=SQLQ_TEST_MY_LISTEN_ALSO
scheme=mysql
locks_freed_while_cut=0

source "$(dirname "${BASH_SOURCE[0]}")/netns.bash"
