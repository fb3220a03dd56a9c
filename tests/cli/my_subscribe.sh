# tests/cli/my_subscribe.sh -- the table-subscription tests (subscribe.bash)
# on a fresh MariaDB database (my_database.bash), written by the mariadb
# command-line client; the application's key is AUTO_INCREMENT, as the
# replication-safe triggers must allow.  Needs SQLQ_TEST_MY_URL and
# SQLQ_TEST_MY_PORT (set by tests/CMakeLists.txt for the mariadb fixture)
# and the mariadb client.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/my_database.bash"

app_sql() {
  mariadb --no-defaults --default-character-set=utf8mb4 -h 127.0.0.1 -P "$SQLQ_TEST_MY_PORT" \
    -u sqlq -N -B -D "$my_database" -e "$1"
}
app_bin() {
  echo "X'$1'"
}
auto_pk="integer PRIMARY KEY AUTO_INCREMENT"
bytes_type="varbinary(16)"

. "$(dirname "$0")/subscribe.bash"
