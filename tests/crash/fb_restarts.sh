# tests/crash/fb_restarts.sh -- restart the Firebird server five times in a
# row (restarts_in_a_row in lib.sh) under an idle and a busy `sqlq work`:
# neither may exit, whatever the server answers while it stops and starts
# (refused connections, "Error occurred during login" while the security
# database is not open yet, lost attachments, the events connection gone),
# and no job is lost.
#
# Needs SQLQ_TEST_FB_URL, SQLQ_TEST_FB_SERVER and SQLQ_TEST_FB_PORT (set by
# tests/CMakeLists.txt for the firebird fixture) and isql-fb.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../cli/fb_database.bash"

# shellcheck disable=SC2086 # the server command is "bash SCRIPT"
restarts_in_a_row "$url" 5 $SQLQ_TEST_FB_SERVER restart "$SQLQ_TEST_FB_PORT"
