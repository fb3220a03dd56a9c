# tests/cli/fds.sh -- the descriptor tests (fds.bash) on a SQLite database.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fds.bash"
