# tests/cli/my_work_lease.sh -- the lease tests of sqlq work
# (work_lease.bash) on a fresh MariaDB database (my_database.bash), written
# by the mariadb command-line client.  Needs SQLQ_TEST_MY_URL and
# SQLQ_TEST_MY_PORT (set by tests/CMakeLists.txt for the mariadb fixture)
# and the mariadb client.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/my_database.bash"

app_sql() {
  mariadb --no-defaults -h 127.0.0.1 -P "$SQLQ_TEST_MY_PORT" -u sqlq -N -B -D "$my_database" -e "$1"
}

. "$(dirname "$0")/work_lease.bash"
finish
