# tests/cli/pg_work_lease.sh -- the lease tests of sqlq work
# (work_lease.bash) on a PostgreSQL database of its own, written by psql as
# a plain client.  Needs SQLQ_TEST_PG_URL (set by tests/CMakeLists.txt for
# the postgres fixture) and psql.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg_database.bash"

app_sql() {
  pg_sql "$1"
}

. "$(dirname "$0")/work_lease.bash"
finish
