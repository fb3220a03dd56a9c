# tests/cli/fb_pool.sh -- the pool tests (pool.bash) on a fresh Firebird
# database (fb_database.bash).  Needs SQLQ_TEST_FB_URL
# (set by tests/CMakeLists.txt for the firebird fixture) and isql-fb.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fb_database.bash"
. "$(dirname "$0")/pool.bash"
