# tests/cli/pg_health.sh -- sqlq stats' health on PostgreSQL: a psql
# session holding a REPEATABLE READ snapshot is named as the holder of
# oldest_xmin_* (its pid, user and application), whose age in transactions
# grows as jobs are pushed; then a prepared transaction is.  Needs
# SQLQ_TEST_PG_URL, psql and a server with max_prepared_transactions > 0
# (tests/servers/postgres.sh).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg_database.bash"
. "$(dirname "$0")/health.bash"

gid="sqlq_health_$$"
pg_health_cleanup() {
  psql -X -q "$url" -c "ROLLBACK PREPARED '$gid'" >/dev/null 2>&1
  pg_database_drop
}
trap pg_health_cleanup EXIT

health_items oldest_xmin_age oldest_xmin_xacts dead_rows table_bytes

hold_client() { PGAPPNAME=sqlq_health_holder exec psql -X -q -At "$url"; }
hold_sql="BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT pg_backend_pid();"
item=oldest_xmin_xacts
hold_start
health_check "^pid $holder_id user [^ ]+ application sqlq_health_holder client 127\.0\.0\.1\$"

# A prepared transaction holds the xmin as long as it is neither committed
# nor rolled back, without any session.
# (An insert of a job notifies, which PREPARE TRANSACTION refuses.)
pg_sql "BEGIN; SELECT txid_current(); PREPARE TRANSACTION '$gid';" >/dev/null
got="" tries=100
until printf '%s' "$got" | grep -q "\"holder\":\"prepared $gid owner "; do
  [ $tries -gt 0 ] || break
  sleep 0.1
  tries=$((tries - 1))
  got=$(health_item oldest_xmin_age)
done
expect_eq "the prepared transaction is the holder" \
  "$(printf '%s' "$got" | grep -o "\"holder\":\"prepared $gid owner [^\"]*\"" | wc -l)" 1
expect_eq "detail says what kind" \
  "$(printf '%s' "$got" | grep -o '"detail":"prepared transaction, [0-9]* transactions old"' | wc -l)" 1
pg_sql "ROLLBACK PREPARED '$gid'"

finish
