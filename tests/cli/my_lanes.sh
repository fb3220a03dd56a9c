# tests/cli/my_lanes.sh -- MariaDB's claims by lanes see every job that
# becomes ready below their floors (the shared scenarios are in
# lanes.bash), and, with the worker still up:
# - a job made due by an UPDATE whose transaction stayed open while other
#   jobs ran (the lane's count of moves, sqlq_lane_moves);
# - a job that failed once, made ready again by its failure.
# Plain-SQL writes wake no waiter on MariaDB: the worker sees them when its
# wait looks again (wake_interval, 2 s).
#
# Needs SQLQ_TEST_MY_URL (tests/CMakeLists.txt) and the mariadb client.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/my_database.bash"

lanes_sql() { my_sql "$1"; }
late_insert() {
  my_sql "BEGIN; INSERT INTO sqlq_jobs (queue, payload) VALUES ('$1', 'late'); DO SLEEP(2); COMMIT"
}
lane_of() { echo "priority = $1"; }
# expect_ran NAME PAYLOAD: one more job, PAYLOAD, ran.
expect_ran() {
  n=$((n + 1))
  wait_for_lines "$tmp/done" "$n"
  expect_eq "$1" "$(grep -c "^$2\$" "$tmp/done")" 1
}
lanes_more() {
  run "another delayed job" 0 sq push --delay 3600 "$q" "released"
  run "a job due in a second" 0 sq push --delay 1 "$q" "soon"
  my_sql "BEGIN; UPDATE sqlq_jobs SET run_at = 0 WHERE queue = '$q' AND payload = 'released';
    DO SLEEP(3); COMMIT" &
  local mover=$!
  expect_ran "the job due in a second ran" soon
  push_some 2
  wait "$mover" || fail "the mover's transaction failed"
  expect_ran "the job made due late ran" released
  run "a failing job" 0 sq push "$q" "failonce"
  expect_ran "the failed job ran again" failonce
  expect_eq "the moves are counted" "$(my_sql "SELECT SUM(moved) > 0 FROM sqlq_lane_moves
    WHERE queue = '$q'")" 1
}

source "$(dirname "${BASH_SOURCE[0]}")/lanes.bash"
