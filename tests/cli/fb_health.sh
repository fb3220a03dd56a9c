# tests/cli/fb_health.sh -- sqlq stats' health on Firebird: an isql-fb
# session holding a SNAPSHOT transaction is named as the holder of
# oldest_snapshot_gap (its attachment, user, address, process and pid),
# which grows as jobs are pushed.  Needs SQLQ_TEST_FB_URL and isql-fb.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fb_database.bash"
. "$(dirname "$0")/health.bash"

health_items oldest_transaction_gap oldest_active_gap oldest_snapshot_gap database_bytes

hold_client() {
  exec isql-fb -q -m -user "$fb_user" -password "$fb_password" "$fb_database"
}
hold_sql="SET HEADING OFF; SET TRANSACTION SNAPSHOT; SELECT CURRENT_CONNECTION FROM RDB\$DATABASE;"
item=oldest_snapshot_gap
hold_start
health_check "^attachment $holder_id user [^ ]+ address [^ ]+ process [^ ]*isql-fb pid $hold_pid\$"

finish
