# tests/cli/subscribe_names.sh -- the hostile table and column names of
# subscribe_names.bash on a SQLite database, written by the sqlite3
# command-line client.
. "$(dirname "$0")/lib.sh"

app_sql() {
  sqlite3 -batch -cmd '.timeout 10000' -separator ' ' "${url#sqlite:}" "$1"
}
qi() {
  printf '"%s"' "${1//\"/\"\"}"
}

. "$(dirname "$0")/subscribe_names.bash"
