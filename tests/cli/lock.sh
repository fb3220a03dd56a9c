# tests/cli/lock.sh -- the lock tests (lock.bash) on a SQLite database.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lock.bash"
