# tests/cli/pg_lanes.sh -- PostgreSQL's claims by lanes see every job that
# becomes ready below their floors (the scenarios are in lanes.bash).
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

source "$(dirname "${BASH_SOURCE[0]}")/lanes.bash"
