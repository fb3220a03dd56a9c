# tests/cli/fb_subscribe_names.sh -- the hostile table and column names of
# subscribe_names.bash on a Firebird database of their own
# (fb_database.bash), written by isql-fb as a plain client; the names are
# quoted identifiers, stored as written; the events name a column stored
# in upper case in lower case (NULLS as nulls), as for a column made
# without quotes.  Needs SQLQ_TEST_FB_URL (set by
# tests/CMakeLists.txt for the firebird fixture) and isql-fb.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fb_database.bash"

app_sql() {
  fb_sql "$1"
}
qi() {
  printf '"%s"' "${1//\"/\"\"}"
}
fold_upper=1

. "$(dirname "$0")/subscribe_names.bash"
