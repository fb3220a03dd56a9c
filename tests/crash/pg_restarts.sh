# tests/crash/pg_restarts.sh -- restart the PostgreSQL server five times in a
# row with `pg_ctl restart -m fast` (restarts_in_a_row in lib.sh) under an
# idle and a busy `sqlq work`: neither may exit, whatever the server answers
# while it stops and starts (refused connections, SQLSTATE 57P01 "terminating
# connection due to administrator command", 57P03 "the database system is
# starting up" or "shutting down", lost sessions and their LISTEN), and no
# job is lost.
#
# Needs SQLQ_TEST_PG_URL, SQLQ_TEST_PG_SERVER and SQLQ_TEST_PG_PORT (set by
# tests/CMakeLists.txt for the postgres fixture).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ -n "${SQLQ_TEST_PG_URL:-}" ] || die "SQLQ_TEST_PG_URL is not set"
# shellcheck disable=SC2086 # the server command is "bash SCRIPT"
restarts_in_a_row "$SQLQ_TEST_PG_URL" 5 $SQLQ_TEST_PG_SERVER restart "$SQLQ_TEST_PG_PORT"
