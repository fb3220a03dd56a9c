# tests/cli/pg_work_timeout.sh -- the timeout tests of sqlq work
# (work_timeout.bash) on a PostgreSQL database of its own.  Needs
# SQLQ_TEST_PG_URL (set by tests/CMakeLists.txt for the postgres fixture)
# and psql.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg_database.bash"
. "$(dirname "$0")/work_timeout.bash"
finish
