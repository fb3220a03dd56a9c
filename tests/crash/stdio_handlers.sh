# tests/crash/stdio_handlers.sh -- handlers of `sqlq work --stdio` that die,
# hang or break the protocol (stdio_handlers.bash), on SQLite.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/stdio_handlers.bash"
