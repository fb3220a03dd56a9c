# tests/cli/steady.sh -- the steady benchmark's tests (steady.bash) on a
# SQLite database.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/steady.bash"
