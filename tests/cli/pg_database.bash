# tests/cli/pg_database.bash -- sourced after lib.sh by PostgreSQL tests
# that need a database of their own (without sqlq's schema yet, its ids
# counted from 1): creates one on the server of SQLQ_TEST_PG_URL (the role
# sqlq may create databases), points $url at it, and drops it at exit,
# along with any session a killed worker left there.  Defines `pg_sql SQL`,
# which runs SQL on that database with psql and prints its rows as
# tab-separated lines without a header.

[ -n "${SQLQ_TEST_PG_URL:-}" ] || { echo "FAIL: SQLQ_TEST_PG_URL is not set"; exit 1; }

pg_database="sqlq_test_$$"
psql -X -q -v ON_ERROR_STOP=1 "$SQLQ_TEST_PG_URL" -c "CREATE DATABASE $pg_database" >/dev/null ||
  { echo "FAIL: cannot create database $pg_database"; exit 1; }
url="${SQLQ_TEST_PG_URL%/*}/$pg_database"

pg_sql() {
  psql -X -q -At -F $'\t' -v ON_ERROR_STOP=1 "$url" -c "$1"
}

pg_database_drop() {
  cleanup
  psql -X -q "$SQLQ_TEST_PG_URL" -c "DROP DATABASE IF EXISTS $pg_database WITH (FORCE)" >/dev/null
}
trap pg_database_drop EXIT
