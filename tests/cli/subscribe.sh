# tests/cli/subscribe.sh -- the table-subscription tests (subscribe.bash) on
# a SQLite database, written by the sqlite3 command-line client.
. "$(dirname "$0")/lib.sh"

app_sql() {
  sqlite3 -batch -cmd '.timeout 10000' -separator $'\t' "${url#sqlite:}" "$1"
}
app_bin() {
  echo "x'$1'"
}
app_trigger() {
  app_sql "CREATE TRIGGER \"$1\" AFTER INSERT ON $2 BEGIN INSERT INTO $3 (id) VALUES (NEW.id); END"
}
auto_pk="integer PRIMARY KEY"
bytes_type=blob

. "$(dirname "$0")/subscribe.bash"
