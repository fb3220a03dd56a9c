# tests/cli/pool.sh -- the pool tests (pool.bash) on a SQLite database.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pool.bash"
