# tests/cli/my_fds.sh -- the descriptor tests (fds.bash) on a MariaDB
# database of its own (my_database.bash).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/my_database.bash"
. "$(dirname "$0")/fds.bash"
