# tests/cli/pg_lock.sh -- the lock tests (lock.bash) on a PostgreSQL
# database of its own (pg_database.bash): locks are session advisory locks
# on the lock session of each handle.  Needs SQLQ_TEST_PG_URL (set by
# tests/CMakeLists.txt for the postgres fixture) and psql.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg_database.bash"
. "$(dirname "$0")/lock.bash"
