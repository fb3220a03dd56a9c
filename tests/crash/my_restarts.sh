# tests/crash/my_restarts.sh -- restart the MariaDB server five times in a
# row (restarts_in_a_row in lib.sh; each a clean shutdown, then a start on
# the same data) under an idle and a busy `sqlq work`: neither may exit,
# whatever the server answers while it stops and starts (refused
# connections, 1053 "server shutdown in progress", 1927 "connection was
# killed", 2006 and 2013 on lost sessions, the second session that holds
# the wait lock gone), and no job is lost.
#
# Needs SQLQ_TEST_MY_URL, SQLQ_TEST_MY_SERVER and SQLQ_TEST_MY_PORT (set by
# tests/CMakeLists.txt for the mariadb fixture).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ -n "${SQLQ_TEST_MY_URL:-}" ] || die "SQLQ_TEST_MY_URL is not set"
# shellcheck disable=SC2086 # the server command is "bash SCRIPT"
restarts_in_a_row "$SQLQ_TEST_MY_URL" 5 $SQLQ_TEST_MY_SERVER restart "$SQLQ_TEST_MY_PORT"
