# tests/cli/fb_lanes.sh -- Firebird's claims by lanes see every job that
# becomes ready below their floors (the scenarios are in lanes.bash): a
# commit later than its jobs' run_at by more than the margin, a plain-SQL
# run_at long past and a lease taken back count a rewind (sqlq_commit).
#
# Needs SQLQ_TEST_FB_URL (tests/CMakeLists.txt) and isql-fb.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/fb_database.bash"

lanes_sql() { fb_sql "$1"; }
# isql-fb runs each statement as it reads it, in one transaction that the
# COMMIT two seconds later ends.
late_insert() {
  {
    echo "INSERT INTO sqlq_jobs (queue, payload) VALUES ('$1', 'late');"
    sleep 2
    echo "COMMIT;"
  } | fb_isql "$fb_database"
}
lane_of() { echo "claim_rank = -$1"; }

source "$(dirname "${BASH_SOURCE[0]}")/lanes.bash"
