# tests/cli/pg_lanes.sh -- PostgreSQL's claims by lanes see every job that
# becomes ready below their floors (the scenarios are in lanes.bash), and
# its INSERT trigger records the lanes of plain-SQL INSERTs.
#
# Needs SQLQ_TEST_PG_URL (tests/CMakeLists.txt) and psql.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/pg_database.bash"

lanes_sql() { pg_sql "$1"; }
bytes() { echo "convert_to('$1', 'UTF8')"; }
late_insert() {
  psql -X -q -v ON_ERROR_STOP=1 "$url" <<SQL
BEGIN;
INSERT INTO sqlq_jobs (queue, payload) VALUES ('$1', convert_to('late', 'UTF8'));
SELECT pg_sleep(2);
COMMIT;
SQL
}
lane_of() { echo "priority = $1"; }

# The INSERT trigger (schema version 12) skips the lookup of a lane its
# session has seen when the statement names it in sqlq.lane, as the
# library's one-job enqueue does (LIBRARY_LANE_TX in postgres_sql.c), and
# clears that name: a plain-SQL INSERT later in the same transaction, at a
# new priority, still records its lane.  A lane recorded by a transaction
# that rolled back is not remembered by the session either.
run "init" 0 "$SQLQ" --url "$url" init
lib_insert() { # QUEUE PRIORITY: a one-job INSERT that names its lane
  printf "INSERT INTO sqlq_jobs (queue, priority, payload) SELECT '%s', %s, 'lib' FROM
    (SELECT set_config('sqlq.library', 'on', true), set_config('sqlq.lane',
     chr(2) || '%s' || chr(1) || %s || chr(2), true)) AS library_tx;\n" "$1" "$2" "$1" "$2"
}
recorded() { pg_sql "SELECT count(*) FROM sqlq_lanes WHERE queue = '$1' AND priority = $2"; }
run "named lane, then a plain INSERT at a new priority, in one transaction" 0 \
  psql -X -q -v ON_ERROR_STOP=1 "$url" -c "$(lib_insert tx 1)" -c "BEGIN" -c "$(lib_insert tx 1)" \
  -c "INSERT INTO sqlq_jobs (queue, priority, payload) VALUES ('tx', 2, 'plain')" -c "COMMIT"
expect_eq "the named lane is recorded" "$(recorded tx 1)" "1"
expect_eq "the plain INSERT's lane too" "$(recorded tx 2)" "1"
run "a named lane rolled back, then named again in the same session" 0 \
  psql -X -q -v ON_ERROR_STOP=1 "$url" -c "BEGIN" -c "$(lib_insert tx 5)" -c "ROLLBACK" \
  -c "$(lib_insert tx 5)"
expect_eq "the lane is recorded" "$(recorded tx 5)" "1"
run "forget the queue" 0 pg_sql "DELETE FROM sqlq_jobs WHERE queue = 'tx'"

source "$(dirname "${BASH_SOURCE[0]}")/lanes.bash"
