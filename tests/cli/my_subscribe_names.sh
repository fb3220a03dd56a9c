# tests/cli/my_subscribe_names.sh -- the hostile table and column names of
# subscribe_names.bash on a fresh MariaDB database (my_database.bash),
# written by the mariadb command-line client.  Needs SQLQ_TEST_MY_URL and
# SQLQ_TEST_MY_PORT (set by tests/CMakeLists.txt for the mariadb fixture)
# and the mariadb client.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/my_database.bash"

app_sql() {
  my_sql "$1"
}
qi() {
  printf '`%s`' "${1//\`/\`\`}"
}

. "$(dirname "$0")/subscribe_names.bash"
