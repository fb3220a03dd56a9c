# tests/cli/pg_fds.sh -- the descriptor tests (fds.bash) on a PostgreSQL
# database of its own (pg_database.bash).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg_database.bash"
. "$(dirname "$0")/fds.bash"
