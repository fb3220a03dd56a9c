# tests/crash/fb_stdio_handlers.sh -- handlers of `sqlq work --stdio` that
# die, hang or break the protocol (stdio_handlers.bash), on a fresh Firebird
# database (tests/cli/fb_database.bash).  Needs SQLQ_TEST_FB_URL (set by tests/CMakeLists.txt for its fixture).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../cli/fb_database.bash"
source "$(dirname "${BASH_SOURCE[0]}")/stdio_handlers.bash"
