# tests/cli/pg_cancel.sh -- the cancellation tests of the CLI (cancel.bash)
# on a PostgreSQL database of its own.  Needs SQLQ_TEST_PG_URL (set by
# tests/CMakeLists.txt for the postgres fixture) and psql.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg_database.bash"
. "$(dirname "$0")/cancel.bash"
finish
