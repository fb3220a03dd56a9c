# tests/cli/fb_list.sh -- the listing tests (list.bash) on a fresh Firebird
# database (fb_database.bash).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fb_database.bash"
. "$(dirname "$0")/list.bash"
