# tests/cli/my_database.bash -- sourced after lib.sh by MariaDB tests that
# need a database of their own (ids counted from 1, names no other test
# used): creates a fresh database on the server of SQLQ_TEST_MY_URL, points
# $url at it, and drops it at exit.  Defines `my_sql SQL`, which runs SQL on
# that database with the mariadb client (utf8mb4) and prints its rows as
# tab-separated lines without a header.  Needs SQLQ_TEST_MY_URL,
# SQLQ_TEST_MY_PORT and the mariadb client.

[ -n "${SQLQ_TEST_MY_URL:-}" ] || { echo "FAIL: SQLQ_TEST_MY_URL is not set"; exit 1; }
[ -n "${SQLQ_TEST_MY_PORT:-}" ] || { echo "FAIL: SQLQ_TEST_MY_PORT is not set"; exit 1; }

my_database="sqlq_test_$$"
my_admin() {
  mariadb --no-defaults -h 127.0.0.1 -P "$SQLQ_TEST_MY_PORT" -u sqlq -N -B -e "$1"
}
my_admin "CREATE DATABASE $my_database" || { echo "FAIL: cannot create database $my_database"; exit 1; }
url="${SQLQ_TEST_MY_URL%/*}/$my_database"

my_sql() {
  mariadb --no-defaults --default-character-set=utf8mb4 -h 127.0.0.1 -P "$SQLQ_TEST_MY_PORT" \
    -u sqlq -N -B -D "$my_database" -e "$1"
}

my_database_cleanup() {
  cleanup
  my_admin "DROP DATABASE IF EXISTS $my_database"
}
trap my_database_cleanup EXIT
