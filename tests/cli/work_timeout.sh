# tests/cli/work_timeout.sh -- the timeout tests of sqlq work
# (work_timeout.bash) on a SQLite database.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/work_timeout.bash"
finish
