# tests/crash/pg_lock_lost.sh -- sqlq lock whose lock is lost
# (lock_lost.bash) on PostgreSQL, in a database of its own: the lock
# session is ended with pg_terminate_backend(), stopped with SIGSTOP, and
# the server restarted.  Then idle_session_timeout, which ends idle
# sessions with their locks, must spare the lock session.
#
# Needs SQLQ_TEST_PG_URL, SQLQ_TEST_PG_SERVER and SQLQ_TEST_PG_PORT (set by
# tests/CMakeLists.txt for the postgres fixture) and psql.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../cli/pg_database.bash"

# The backend of the one session holding an advisory lock in the database.
lock_backend() {
  pg_sql "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted
            AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
}

end_session() {
  [ "$(pg_sql "SELECT pg_terminate_backend($(lock_backend))")" = t ] || die "no lock session to end"
}

hang_session() {
  # shellcheck disable=SC2046 # a pid, or nothing
  stop_processes $(lock_backend)
}

server_script=$SQLQ_TEST_PG_SERVER
server_port=$SQLQ_TEST_PG_PORT

source "$(dirname "${BASH_SOURCE[0]}")/lock_lost.bash"

# idle_session_timeout ends the sessions of the database idle for 1 s.  The
# holder checks its lock only every 1000 s here, so that its session has to
# survive by its own settings.
idle_for() {
  [ "$(pg_sql "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
                 AND state = 'idle' AND now() - state_change > interval '$1 s'")" -ge 1 ]
}
pg_sql "ALTER DATABASE $pg_database SET idle_session_timeout = '1s'" >/dev/null
start_holder "$obedient" --check-interval 1000
wait_until 60 idle_for 4 || die "no session outlived idle_session_timeout (1 s) by 4 s"
held_elsewhere || die "the lock was lost to idle_session_timeout"
pg_sql "ALTER DATABASE $pg_database RESET idle_session_timeout" >/dev/null
pass "the lock session outlives idle_session_timeout"
