# tests/cli/my_cancel.sh -- the cancellation tests of the CLI (cancel.bash)
# on a fresh MariaDB database (my_database.bash).  Needs SQLQ_TEST_MY_URL and
# SQLQ_TEST_MY_PORT (set by tests/CMakeLists.txt for the mariadb fixture)
# and the mariadb client.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/my_database.bash"
. "$(dirname "$0")/cancel.bash"
finish
