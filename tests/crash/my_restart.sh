# tests/crash/my_restart.sh -- restart the MariaDB server under load
# (restart_under_load in lib.sh): a clean shutdown, which ends every
# session, then a start on the same data.
#
# Needs SQLQ_TEST_MY_URL, SQLQ_TEST_MY_SERVER and SQLQ_TEST_MY_PORT (set by
# tests/CMakeLists.txt for the mariadb fixture).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ -n "${SQLQ_TEST_MY_URL:-}" ] || die "SQLQ_TEST_MY_URL is not set"
# shellcheck disable=SC2086 # the server command is "bash SCRIPT"
restart_under_load "$SQLQ_TEST_MY_URL" $SQLQ_TEST_MY_SERVER restart "$SQLQ_TEST_MY_PORT"
