# tests/cli/my_subscribe.sh -- the table-subscription tests (subscribe.bash)
# on a fresh MariaDB database (my_database.bash), written by the mariadb
# command-line client; the application's key is AUTO_INCREMENT, as the
# replication-safe triggers must allow.  Needs SQLQ_TEST_MY_URL and
# SQLQ_TEST_MY_PORT (set by tests/CMakeLists.txt for the mariadb fixture)
# and the mariadb client.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/my_database.bash"

app_sql() {
  my_sql "$1"
}
app_bin() {
  echo "X'$1'"
}
auto_pk="integer PRIMARY KEY AUTO_INCREMENT"
bytes_type="varbinary(16)"

# A table and a column whose names hold a backquote, both quotes and a
# backslash, written by a client whose sql_mode reads quotes and
# backslashes differently from the session that made the triggers: the
# names reach the payload intact and nothing breaks out.
sq init >/dev/null
table='we`ird'"'"'"\name'
app_sql 'CREATE TABLE `we``ird'"'"'"\name` (`k``ey'"'"'\` integer PRIMARY KEY, `v"al` varchar(10))'
run "subscribe a hostile table" 0 sq subscribe "$table" --on insert,update --tag hostile --rows
app_sql 'SET SESSION sql_mode = '"'"'ANSI_QUOTES,NO_BACKSLASH_ESCAPES'"'"';
INSERT INTO `we``ird'"'"'"\name` VALUES (1, '"'"'a\b'"'"');
UPDATE `we``ird'"'"'"\name` SET `v"al` = NULL'
run "the hostile table's events" 0 sq jobs --json hostile
expect_eq "names and values intact" "$(python3 -c '
import json, sys
for j in json.load(sys.stdin):
    p = json.loads(j["payload"]); del p["at"]
    print(json.dumps(p, sort_keys=True, separators=(",", ":")))' <"$tmp/out")" \
'{"action":"insert","new":{"k`ey'"'"'\\":1,"v\"al":"a\\b"},"pk":{"k`ey'"'"'\\":1},"table":"we`ird'"'"'\"\\name"}
{"action":"update","new":{"k`ey'"'"'\\":1,"v\"al":null},"old":{"k`ey'"'"'\\":1,"v\"al":"a\\b"},"pk":{"k`ey'"'"'\\":1},"table":"we`ird'"'"'\"\\name"}'
sq purge hostile >/dev/null
run "unsubscribe the hostile table" 0 sq unsubscribe "$table" --tag hostile
expect_eq "its triggers are gone" "$(app_sql "SELECT count(*) FROM information_schema.TRIGGERS
  WHERE TRIGGER_SCHEMA = DATABASE() AND EVENT_OBJECT_TABLE <> 'sqlq_jobs'")" 0

. "$(dirname "$0")/subscribe.bash"
