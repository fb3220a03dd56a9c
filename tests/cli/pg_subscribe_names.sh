# tests/cli/pg_subscribe_names.sh -- the hostile table and column names of
# subscribe_names.bash on a PostgreSQL database of their own, written by
# psql as a plain client.  Needs SQLQ_TEST_PG_URL (set by
# tests/CMakeLists.txt for the postgres fixture) and psql.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg_database.bash"

app_sql() {
  pg_sql "$1"
}
qi() {
  printf '"%s"' "${1//\"/\"\"}"
}

. "$(dirname "$0")/subscribe_names.bash"
