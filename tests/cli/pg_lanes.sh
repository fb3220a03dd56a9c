# tests/cli/pg_lanes.sh -- a worker's claims scan each priority lane from
# the floors of its cursor (docs/postgres.md, "Claims under a long-held
# snapshot"), and still see every job that becomes ready below them:
# - a job whose INSERT ran before the worker's last claims but committed
#   after them (a producer's transaction that stayed open);
# - a job INSERTed by plain SQL with a run_at long past (a rewind);
# - a job at a priority no job of the queue had before (a new lane);
# - the next job of a FIFO group, held back while its head ran;
# - a job moved to another priority by a plain-SQL UPDATE.
# - the job of a killed worker, once its lease ended, taken by a worker
#   that waits with a cursor;
# - the jobs of a queue with more than 64 lanes, highest priority first.
# Each must run within seconds.  The worker stays up from the first job to
# the last, so that its cursor is in use throughout.  The scenarios shared
# with my_lanes.sh are in lanes.bash.
#
# Needs SQLQ_TEST_PG_URL (tests/CMakeLists.txt) and psql.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/pg_database.bash"

lanes_sql() { pg_sql "$@"; }
source "$(dirname "${BASH_SOURCE[0]}")/lanes.bash"

push_some 3

# A producer's transaction inserts, stays open while the worker claims
# other jobs for two seconds, then commits.
psql -X -q -v ON_ERROR_STOP=1 "$url" >/dev/null 2>&1 <<SQL &
BEGIN;
INSERT INTO sqlq_jobs (queue, payload) VALUES ('$q', convert_to('late', 'UTF8'));
SELECT pg_sleep(2);
COMMIT;
SQL
producer=$!
for i in 1 2 3 4; do
  push_some 2
  sleep 0.5
done
wait "$producer" || fail "the producer's transaction failed"
n=$((n + 1))
wait_for_lines "$tmp/done" "$n"
expect_eq "the late commit ran" "$(grep -c '^late$' "$tmp/done")" 1

# A plain-SQL INSERT with a run_at long past.
run "an old run_at" 0 pg_sql "INSERT INTO sqlq_jobs (queue, payload, run_at)
  VALUES ('$q', convert_to('old', 'UTF8'), 5)"
n=$((n + 1))
wait_for_lines "$tmp/done" "$n"
expect_eq "the job with an old run_at ran" "$(grep -c '^old$' "$tmp/done")" 1

# A new lane.
run "a new priority" 0 pg_sql "INSERT INTO sqlq_jobs (queue, payload, priority)
  VALUES ('$q', convert_to('p7', 'UTF8'), 7)"
expect_ran "the job of a new lane ran" p7
lanes_recorded "its lane is recorded" 7

lanes_group_and_move
lanes_finish
