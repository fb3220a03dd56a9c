# tests/cli/cancel.sh -- the cancellation tests of the CLI (cancel.bash) on
# a SQLite database.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cancel.bash"
finish
