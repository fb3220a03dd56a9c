# tests/cli/my_lanes.sh -- a worker's claims scan each priority lane from
# the floors of its cursor (docs/mysql.md, "Claims under a long-held
# snapshot"), and still see every job that becomes ready below them:
# - a job whose INSERT ran before the worker's last claims but committed
#   after them (a producer's transaction that stayed open);
# - a job INSERTed by plain SQL with a run_at long past;
# - a job at a priority no job of the queue had before (a new lane);
# - the next job of a FIFO group, held back while its head ran;
# - a job moved to another priority and made due by a plain-SQL UPDATE;
# - a job made due by an UPDATE whose transaction stayed open;
# - a job that failed once, made ready again by its failure;
# - the job of a killed worker, once its lease ended, taken by a worker
#   that waits with a cursor;
# - the jobs of a queue with more lanes (70) than a cursor keeps (64),
#   highest priority first.
# Each must run within seconds.  The workers claim by lanes from their
# first claim (lanes=on).  The worker stays up from
# the first job to the last, so that its cursor is in use throughout.
# Plain-SQL writes wake no waiter: the worker sees them when its wait
# looks again (wake_interval, 2 s).
#
# Needs SQLQ_TEST_MY_URL (tests/CMakeLists.txt) and the mariadb client.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/my_database.bash"

lanes_sql() { my_sql "$@"; }
source "$(dirname "${BASH_SOURCE[0]}")/lanes.bash"

push_some 3

# A producer's transaction inserts, stays open for three seconds, then
# commits; meanwhile the worker claims a job that came due, which moves
# its floors past the run_at of the job not yet committed.  (Inserting
# producers take turns: the job ids follow the commits.)
run "a job due in a second" 0 sq push --delay 1 "$q" "soon"
my_sql "BEGIN; INSERT INTO sqlq_jobs (queue, payload) VALUES ('$q', 'late');
  DO SLEEP(3); COMMIT" &
producer=$!
wait "$producer" || fail "the producer's transaction failed"
expect_ran "the job due in a second ran" soon
expect_ran "the late commit ran" late

# A plain-SQL INSERT with a run_at long past.
run "an old run_at" 0 my_sql "INSERT INTO sqlq_jobs (queue, payload, run_at) VALUES ('$q', 'old', 5)"
expect_ran "the job with an old run_at ran" old

# A new lane.
run "a new priority" 0 my_sql "INSERT INTO sqlq_jobs (queue, payload, priority) VALUES ('$q', 'p7', 7)"
expect_ran "the job of a new lane ran" p7
lanes_recorded "its lane is recorded" 7

lanes_group_and_move

# A delayed job made due by an UPDATE whose transaction stays open while
# other jobs run.
run "another delayed job" 0 sq push --delay 3600 "$q" "released"
run "a job due in a second" 0 sq push --delay 1 "$q" "soon2"
my_sql "BEGIN; UPDATE sqlq_jobs SET run_at = 0 WHERE queue = '$q' AND payload = 'released';
  DO SLEEP(3); COMMIT" &
mover=$!
expect_ran "the other job due in a second ran" soon2
push_some 2
wait "$mover" || fail "the mover's transaction failed"
expect_ran "the job made due late ran" released

# A job that fails once runs again after its backoff.
run "a failing job" 0 sq push "$q" "failonce"
expect_ran "the failed job ran again" failonce
expect_eq "the moves are counted" "$(my_sql "SELECT SUM(moved) > 0 FROM sqlq_lane_moves
  WHERE queue = '$q'")" 1

lanes_finish
