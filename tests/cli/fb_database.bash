# tests/cli/fb_database.bash -- sourced after lib.sh by Firebird tests that
# need a database of their own (without sqlq's schema yet, its ids counted
# from 1): creates a new file beside the fixture's database through the
# server, as `sqlq init` would (UTF8, 16 KiB pages), points $url at it, and
# drops it at exit.  Defines
# `fb_sql SQL`, which runs SQL (statements ended by ';') on that database
# with isql-fb as the URL's user, in UTF8, printing each row's values
# without a header, trimmed; `BEGIN;` is dropped (isql-fb starts a
# transaction by itself), the last ';' may be left out, and the end of the
# input commits.  Needs
# SQLQ_TEST_FB_URL (set by tests/CMakeLists.txt for the firebird fixture)
# and isql-fb.

[ -n "${SQLQ_TEST_FB_URL:-}" ] || { echo "FAIL: SQLQ_TEST_FB_URL is not set"; exit 1; }
if ! [[ $SQLQ_TEST_FB_URL =~ ^firebird://([^:@/]+):([^@/]*)@([^:/]+):([0-9]+)/(/.+)/[^/]+$ ]]; then
  echo "FAIL: unexpected URL form: $SQLQ_TEST_FB_URL"
  exit 1
fi
fb_user=${BASH_REMATCH[1]} fb_password=${BASH_REMATCH[2]}
fb_database="${BASH_REMATCH[3]}/${BASH_REMATCH[4]}:${BASH_REMATCH[5]}/sqlq_test_$$.fdb"
url="${SQLQ_TEST_FB_URL%/*}/sqlq_test_$$.fdb"

fb_isql() {
  isql-fb -q -b -m -ch UTF8 -user "$fb_user" -password "$fb_password" "$@"
}

fb_isql >/dev/null <<<"CREATE DATABASE '$fb_database' PAGE_SIZE 16384 DEFAULT CHARACTER SET UTF8;" ||
  { echo "FAIL: cannot create database $fb_database"; exit 1; }

fb_sql() {
  local out sql=${1//BEGIN;/}
  [[ $sql =~ \;[[:space:]]*$ ]] || sql+=";"
  out=$(fb_isql "$fb_database" <<<"SET HEADING OFF; $sql") || { printf '%s\n' "$out" >&2; return 1; }
  printf '%s\n' "$out" | sed -E 's/^[[:space:]]+//; s/[[:space:]]+$//; /^$/d'
}

fb_database_drop() {
  cleanup
  fb_isql >/dev/null 2>&1 <<<"CONNECT '$fb_database'; DROP DATABASE;"
}
trap fb_database_drop EXIT
