# tests/crash/my_stdio_handlers.sh -- handlers of `sqlq work --stdio` that
# die, hang or break the protocol (stdio_handlers.bash), on a fresh MariaDB
# database (tests/cli/my_database.bash).  Needs SQLQ_TEST_MY_URL and SQLQ_TEST_MY_PORT (set by tests/CMakeLists.txt for its fixture).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../cli/my_database.bash"
source "$(dirname "${BASH_SOURCE[0]}")/stdio_handlers.bash"
