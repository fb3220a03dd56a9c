# tests/cli/my_steady.sh -- the steady benchmark's tests (steady.bash) on a
# MariaDB database of its own (my_database.bash).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/my_database.bash"
. "$(dirname "$0")/steady.bash"
