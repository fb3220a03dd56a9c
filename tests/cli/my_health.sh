# tests/cli/my_health.sh -- sqlq stats' health on MariaDB: a client holding
# START TRANSACTION WITH CONSISTENT SNAPSHOT is named as the holder of
# oldest_transaction_age (its thread id, user and host), which grows while
# it holds (INFORMATION_SCHEMA.INNODB_TRX may lag: every wait polls).
# Needs SQLQ_TEST_MY_URL, SQLQ_TEST_MY_PORT and the mariadb client.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/my_database.bash"
. "$(dirname "$0")/health.bash"

health_items history_list_length oldest_transaction_age table_bytes

hold_client() {
  exec mariadb --no-defaults --unbuffered -h 127.0.0.1 -P "$SQLQ_TEST_MY_PORT" -u sqlq -N -B \
    -D "$my_database"
}
hold_sql="START TRANSACTION WITH CONSISTENT SNAPSHOT; SELECT count(*) FROM sqlq_jobs;
SELECT CONNECTION_ID();"
item=oldest_transaction_age
hold_start
# The first line is the count: the id is on the second.
holder_id=""
tries=100
until [ -n "$holder_id" ] || [ $tries -le 0 ]; do
  holder_id=$(sed -n 2p "$tmp/hold.out")
  [ -n "$holder_id" ] || sleep 0.1
  tries=$((tries - 1))
done
health_check "^thread $holder_id user sqlq host 127\.0\.0\.1:[0-9]+\$"

finish
