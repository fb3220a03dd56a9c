# tests/crash/fb_restart.sh -- restart the Firebird server under load
# (restart_under_load in lib.sh): SIGTERM, which ends every attachment
# (SIGKILL when it does not stop in time), then a start on the same files.
# The workers and producers must attach again by themselves.
#
# Needs SQLQ_TEST_FB_URL, SQLQ_TEST_FB_SERVER and SQLQ_TEST_FB_PORT (set by
# tests/CMakeLists.txt for the firebird fixture) and isql-fb.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../cli/fb_database.bash"

# shellcheck disable=SC2086 # the server command is "bash SCRIPT"
restart_under_load "$url" $SQLQ_TEST_FB_SERVER restart "$SQLQ_TEST_FB_PORT"
