# tests/cli/fb_lock_embedded.sh -- the lock tests (lock.bash) on an
# embedded Firebird database that several processes share
# (fb_embedded.bash: the engine in Classic mode).  A holder killed with
# SIGKILL loses its lock: the engine's lock manager finds its dead owner.
# Needs SQLQ_TEST_FB_SERVER and SQLQ_TEST_FB_PORT (set by
# tests/CMakeLists.txt for the firebird fixture).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fb_embedded.bash"
. "$(dirname "$0")/lock.bash"
