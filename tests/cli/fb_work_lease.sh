# tests/cli/fb_work_lease.sh -- the lease tests of sqlq work
# (work_lease.bash) on a Firebird database of its own (fb_database.bash),
# written by isql-fb as a plain client.  Needs SQLQ_TEST_FB_URL (set by
# tests/CMakeLists.txt for the firebird fixture) and isql-fb.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fb_database.bash"

app_sql() {
  fb_sql "$1"
}

. "$(dirname "$0")/work_lease.bash"
finish
