# tests/cli/fb_fds_embedded.sh -- the descriptor tests (fds.bash) on an
# embedded Firebird database (fb_embedded.bash), whose files the engine
# opens in each sqlq process.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fb_embedded.bash"
. "$(dirname "$0")/fds.bash"
