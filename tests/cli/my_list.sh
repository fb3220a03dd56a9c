# tests/cli/my_list.sh -- the listing tests (list.bash) on a fresh MariaDB
# database (my_database.bash).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/my_database.bash"
. "$(dirname "$0")/list.bash"
