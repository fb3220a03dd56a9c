# tests/cli/ring.sh -- the ring tests (ring.bash) on a SQLite database.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ring.bash"
