# tests/cli/list.sh -- the listing tests (list.bash) on a SQLite database.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/list.bash"
