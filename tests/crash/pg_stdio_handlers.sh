# tests/crash/pg_stdio_handlers.sh -- handlers of `sqlq work --stdio` that
# die, hang or break the protocol (stdio_handlers.bash), on a fresh PostgreSQL
# database (tests/cli/pg_database.bash).  Needs SQLQ_TEST_PG_URL (set by tests/CMakeLists.txt for its fixture).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../cli/pg_database.bash"
source "$(dirname "${BASH_SOURCE[0]}")/stdio_handlers.bash"
