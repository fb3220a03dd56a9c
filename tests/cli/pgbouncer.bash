# tests/cli/pgbouncer.bash -- sourced after lib.sh and pg_database.bash by
# the tests of PostgreSQL through PgBouncer: starts a PgBouncer (Debian's
# pgbouncer, 1.18 on Debian 12) in transaction mode on 127.0.0.1, port
# $pgb_port (the PostgreSQL test server's port + 10), in a directory of its
# own, in front of the test server, with a pool of 3 server sessions per
# database and user (so that its clients do share server sessions); stops
# it at exit, before the database is dropped.  As root it runs as the
# "postgres" system user (PgBouncer refuses root).  Sets
#   pg_port     the PostgreSQL server's port
#   pgb_port    PgBouncer's
#   pooled_url  $url's database through PgBouncer
#   pgb_sql     a function that runs SQL on it through PgBouncer (psql)

command -v pgbouncer >/dev/null || {
  echo "FAIL: pgbouncer is not installed (bash scripts/install-deps.sh)"
  exit 1
}
pg_port=${SQLQ_TEST_PG_URL##*:}
pg_port=${pg_port%%/*}
pgb_port=$((pg_port + 10))
pgb_dir=$(mktemp -d /tmp/sqlq-test-pgb.XXXXXX)
cat >"$pgb_dir/pgbouncer.ini" <<EOF
[databases]
* = host=127.0.0.1 port=$pg_port
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $pgb_port
unix_socket_dir =
auth_type = trust
auth_file = $pgb_dir/userlist.txt
pool_mode = transaction
default_pool_size = 3
max_client_conn = 200
logfile = $pgb_dir/pgbouncer.log
pidfile = $pgb_dir/pgbouncer.pid
EOF
printf '"sqlq" ""\n' >"$pgb_dir/userlist.txt"
pgb_as=()
if [ "$(id -u)" -eq 0 ]; then
  chown -R postgres "$pgb_dir"
  pgb_as=(runuser -u postgres --)
fi

pgbouncer_stop() {
  local pid
  pid=$(cat "$pgb_dir/pgbouncer.pid" 2>/dev/null)
  if [ -n "$pid" ]; then
    kill -TERM "$pid" 2>/dev/null
    wait_gone 10 "$pid" || kill -9 "$pid" 2>/dev/null
  fi
  rm -rf "$pgb_dir"
}
trap 'pgbouncer_stop; pg_database_drop' EXIT

"${pgb_as[@]}" pgbouncer -d -q "$pgb_dir/pgbouncer.ini" ||
  { echo "FAIL: pgbouncer would not start on port $pgb_port"; exit 1; }
pooled_url="postgres://sqlq@127.0.0.1:$pgb_port/$pg_database"
pgb_sql() {
  psql -X -q -At -F $'\t' -v ON_ERROR_STOP=1 "$pooled_url" -c "$1"
}
for _ in $(seq 100); do
  pgb_sql "SELECT 1" >/dev/null 2>&1 && break
  sleep 0.1
done
pgb_pid=$(cat "$pgb_dir/pgbouncer.pid" 2>/dev/null)
{ [ -n "$pgb_pid" ] && alive "$pgb_pid" && pgb_sql "SELECT 1" >/dev/null; } || {
  echo "FAIL: pgbouncer does not answer on port $pgb_port: $(tail -n 3 "$pgb_dir/pgbouncer.log" | tr '\n' '|')"
  exit 1
}
