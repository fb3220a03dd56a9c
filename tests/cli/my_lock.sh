# tests/cli/my_lock.sh -- the lock tests (lock.bash) on a MariaDB database
# of its own (my_database.bash): locks are GET_LOCK on the second session of
# each handle.  Needs SQLQ_TEST_MY_URL and SQLQ_TEST_MY_PORT (set by
# tests/CMakeLists.txt for the mariadb fixture) and the mariadb client.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/my_database.bash"
# libmariadb opens its sockets without close-on-exec (issue 17, item 4): the
# descriptor check of lock.bash is left to that fix.
lock_fds_leak=1
. "$(dirname "$0")/lock.bash"
