# tests/cli/fb_lock.sh -- the lock tests (lock.bash) on a Firebird database
# of its own through the server (fb_database.bash): a held lock makes
# `sqlq lock -n` exit 75, and a holder killed with SIGKILL loses its lock
# when the server rolls back its attachment's transactions.  Needs
# SQLQ_TEST_FB_URL (set by tests/CMakeLists.txt for the firebird fixture)
# and isql-fb.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fb_database.bash"
. "$(dirname "$0")/lock.bash"
