# tests/cli/pgbouncer.bash -- sourced after lib.sh and pg_database.bash by
# the tests of PostgreSQL through PgBouncer: starts a PgBouncer (Debian's
# pgbouncer, 1.18 on Debian 12) in transaction mode with
# tests/servers/pgbouncer.sh on 127.0.0.1, port $pgb_port (the PostgreSQL
# test server's port + 10), in front of the test server, with a pool of 3
# server sessions per database and user (so that its clients do share
# server sessions); stops it at exit, before the database is dropped.
# Sets
#   pg_port     the PostgreSQL server's port
#   pgb_port    PgBouncer's
#   pooled_url  $url's database through PgBouncer
#   pgb_sql     a function that runs SQL on it through PgBouncer (psql)

pg_port=${SQLQ_TEST_PG_PORT:?SQLQ_TEST_PG_PORT is not set}
pgb_port=$((pg_port + 10))
pgb_server="bash $(dirname "${BASH_SOURCE[0]}")/../servers/pgbouncer.sh"

pgbouncer_stop() {
  $pgb_server stop "$pgb_port"
}
trap 'pgbouncer_stop; pg_database_drop' EXIT
$pgb_server start "$pgb_port" "$pg_port" 3 || { echo "FAIL: pgbouncer would not start on port $pgb_port"; exit 1; }
pooled_url="postgres://sqlq@127.0.0.1:$pgb_port/$pg_database"
pgb_sql() {
  psql -X -q -At -F $'\t' -v ON_ERROR_STOP=1 "$pooled_url" -c "$1"
}
