# tests/cli/pg_list.sh -- the listing tests (list.bash) on a fresh PostgreSQL
# database (pg_database.bash).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg_database.bash"
. "$(dirname "$0")/list.bash"
