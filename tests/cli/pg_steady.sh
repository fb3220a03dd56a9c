# tests/cli/pg_steady.sh -- the steady benchmark's tests (steady.bash) on a
# PostgreSQL database of its own (pg_database.bash).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg_database.bash"
. "$(dirname "$0")/steady.bash"
