# tests/cli/fb_cancel.sh -- the cancellation tests of the CLI (cancel.bash)
# on a Firebird database of its own (fb_database.bash).  Needs
# SQLQ_TEST_FB_URL (set by tests/CMakeLists.txt for the firebird fixture)
# and isql-fb.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fb_database.bash"
. "$(dirname "$0")/cancel.bash"
finish
