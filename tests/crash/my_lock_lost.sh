# tests/crash/my_lock_lost.sh -- sqlq lock whose lock is lost
# (lock_lost.bash) on MariaDB, in a database of its own: the lock session
# is ended with KILL, the server stopped with SIGSTOP, and restarted.  Then
# wait_timeout, which ends idle sessions with their locks, must spare the
# lock session.
#
# Needs SQLQ_TEST_MY_URL, SQLQ_TEST_MY_SERVER and SQLQ_TEST_MY_PORT (set by
# tests/CMakeLists.txt for the mariadb fixture) and the mariadb client.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../cli/my_database.bash"

# lock_lost.bash's lock name is plain ASCII without capitals: GET_LOCK takes
# it as it is.
end_session() {
  local id
  id=$(my_admin "SELECT IS_USED_LOCK('lost-lock')")
  [[ $id =~ ^[0-9]+$ ]] || die "no lock session to end"
  my_admin "KILL $id"
}

server_script=$SQLQ_TEST_MY_SERVER
server_port=$SQLQ_TEST_MY_PORT

source "$(dirname "${BASH_SOURCE[0]}")/lock_lost.bash"

# wait_timeout, the server's (2 s here) when a session starts, ends sessions
# idle for longer.  The holder checks its lock only every 1000 s here, so
# that its session has to survive by its own settings.
wait_timeout=$(my_admin "SELECT @@GLOBAL.wait_timeout")
trap 'my_admin "SET GLOBAL wait_timeout = $wait_timeout"; my_database_cleanup' EXIT
idle_for() {
  [ "$(my_admin "SELECT count(*) FROM information_schema.processlist
                  WHERE db = '$my_database' AND command = 'Sleep' AND time >= $1")" -ge 1 ]
}
my_admin "SET GLOBAL wait_timeout = 2"
start_holder "$obedient" --check-interval 1000
wait_until 60 idle_for 5 || die "no session outlived wait_timeout (2 s) by 3 s"
held_elsewhere || die "the lock was lost to wait_timeout"
my_admin "SET GLOBAL wait_timeout = $wait_timeout"
pass "the lock session outlives wait_timeout"
