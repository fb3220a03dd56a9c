# tests/cli/pg_upgrade.sh -- a PostgreSQL database of schema version 1 is
# upgraded by `sqlq init` to version 2 (rings and pools) with its jobs
# intact; a newer schema is refused.  Needs SQLQ_TEST_PG_URL (set by
# tests/CMakeLists.txt for the postgres fixture) and psql.  The other tests
# of that server hold its resource lock meanwhile, so the downgrade of its
# shared database disturbs none of them.
. "$(dirname "$0")/lib.sh"

[ -n "${SQLQ_TEST_PG_URL:-}" ] || { echo "FAIL: SQLQ_TEST_PG_URL is not set"; exit 1; }
url=$SQLQ_TEST_PG_URL
sql() {
  psql -X -q -v ON_ERROR_STOP=1 "$url" -c "$1" >/dev/null || fail "psql: $1"
}
downgrade() {
  sql "DROP FUNCTION sqlq_pool_next(text, bigint, bigint);
       DROP TABLE sqlq_rings, sqlq_ring_entries, sqlq_pool_items;
       DELETE FROM sqlq_schema WHERE version = 2;"
}

. "$(dirname "$0")/upgrade.bash"
