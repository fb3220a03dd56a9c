# tests/crash/fb_worker_kill.sh -- kill -9 a worker in the middle of a job
# (worker_kill.bash), on a fresh Firebird database through the server
# (tests/cli/fb_database.bash).  Needs SQLQ_TEST_FB_URL (set by
# tests/CMakeLists.txt for the firebird fixture) and isql-fb.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../cli/fb_database.bash"
source "$(dirname "${BASH_SOURCE[0]}")/worker_kill.bash"
