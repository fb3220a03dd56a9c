# tests/crash/fb_worker_kill_embedded.sh -- kill -9 a worker in the middle of a job
# (worker_kill.bash), on an embedded Firebird database that several processes
# share (tests/cli/fb_embedded.bash: the engine in Classic mode), where the
# killed worker leaves its attachment behind in the engine's lock table.
# Needs SQLQ_TEST_FB_SERVER and SQLQ_TEST_FB_PORT (set by
# tests/CMakeLists.txt for the firebird fixture).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../cli/fb_embedded.bash"
source "$(dirname "${BASH_SOURCE[0]}")/worker_kill.bash"
