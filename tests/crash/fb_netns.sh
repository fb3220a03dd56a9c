# tests/crash/fb_netns.sh -- worker hosts cut off by the network
# (netns.bash) on Firebird: a server of its own on SQLQ_TEST_FB_NETNS_PORT
# (and the next port, its events), listening on the host's end of the
# namespace's veth pair only (SQLQ_TEST_FB_LISTEN_ON of
# tests/servers/firebird.sh: Firebird binds one address), which the host
# reaches too.  The server keeps the attachment of a lock's holder cut off,
# and the transaction that holds its lock, until the link returns (its
# socket has the system's keepalives), like MariaDB.
#
# Needs SQLQ_TEST_FB_SERVER and SQLQ_TEST_FB_NETNS_PORT (set by
# tests/CMakeLists.txt), root, ip and nft.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

netns_port=${SQLQ_TEST_FB_NETNS_PORT:?set SQLQ_TEST_FB_NETNS_PORT}
server_script=$SQLQ_TEST_FB_SERVER
listen_also=SQLQ_TEST_FB_LISTEN_ON
listens_there_only=1
scheme=firebird
url_user=sqlq:sqlq-secret
url_path=//tmp/sqlq-test-fb-$netns_port/db/sqlq.fdb
locks_freed_while_cut=0

source "$(dirname "${BASH_SOURCE[0]}")/netns.bash"
