# tests/cli/fb_fds.sh -- the descriptor tests (fds.bash) on a Firebird
# database of its own through the server (fb_database.bash).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fb_database.bash"
. "$(dirname "$0")/fds.bash"
