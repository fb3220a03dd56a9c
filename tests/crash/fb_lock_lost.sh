# tests/crash/fb_lock_lost.sh -- sqlq lock whose lock is lost
# (lock_lost.bash) on a Firebird database of its own, through the server:
# the holder's attachments are deleted from MON$ATTACHMENTS, the server
# stopped with SIGSTOP (the check's watchdog must end the wait), and
# restarted.
#
# Needs SQLQ_TEST_FB_URL, SQLQ_TEST_FB_SERVER and SQLQ_TEST_FB_PORT (set by
# tests/CMakeLists.txt for the firebird fixture) and isql-fb.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../cli/fb_database.bash"

end_session() {
  fb_sql "DELETE FROM MON\$ATTACHMENTS WHERE MON\$REMOTE_PID = $1; COMMIT;" >/dev/null ||
    die "cannot delete the holder's attachments"
}

server_script=$SQLQ_TEST_FB_SERVER
server_port=$SQLQ_TEST_FB_PORT

source "$(dirname "${BASH_SOURCE[0]}")/lock_lost.bash"
