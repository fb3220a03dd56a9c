# tests/crash/pg_restart.sh -- restart the PostgreSQL server under load
# (restart_under_load in lib.sh), with `pg_ctl restart -m fast`.
#
# Needs SQLQ_TEST_PG_URL, SQLQ_TEST_PG_SERVER and SQLQ_TEST_PG_PORT (set by
# tests/CMakeLists.txt for the postgres fixture).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ -n "${SQLQ_TEST_PG_URL:-}" ] || die "SQLQ_TEST_PG_URL is not set"
# shellcheck disable=SC2086 # the server command is "bash SCRIPT"
restart_under_load "$SQLQ_TEST_PG_URL" $SQLQ_TEST_PG_SERVER restart "$SQLQ_TEST_PG_PORT"
