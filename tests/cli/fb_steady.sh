# tests/cli/fb_steady.sh -- the steady benchmark's tests (steady.bash) on a
# Firebird database of its own (fb_database.bash).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fb_database.bash"
. "$(dirname "$0")/steady.bash"
