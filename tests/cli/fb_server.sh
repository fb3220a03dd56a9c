# tests/cli/fb_server.sh -- the Firebird test infrastructure itself
# (tests/servers/firebird.sh), before any driver uses it:
#   - the server accepts the URL's user and password on the URL's
#     127.0.0.1:PORT and absolute database path, over TCP, and that user can
#     create a table and insert into it;
#   - an embedded connection (no server: the engine in the client's own
#     process) creates and uses a database file of its own, under the
#     instance's $FIREBIRD configuration;
#   - a file that the server has open is refused to an embedded connection.
#
# Needs SQLQ_TEST_FB_URL, SQLQ_TEST_FB_SERVER and SQLQ_TEST_FB_PORT (set by
# tests/CMakeLists.txt for the firebird fixture) and isql-fb.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ -n "${SQLQ_TEST_FB_URL:-}" ] || { echo "FAIL: SQLQ_TEST_FB_URL is not set"; exit 1; }
# shellcheck disable=SC2086 # the server command is "bash SCRIPT"
eval "$($SQLQ_TEST_FB_SERVER env "$SQLQ_TEST_FB_PORT" | sed 's/^/export /')"

# The URL's parts: firebird://USER:PASSWORD@HOST:PORT//ABSOLUTE/PATH.
if ! [[ $SQLQ_TEST_FB_URL =~ ^firebird://([^:@/]+):([^@/]*)@([^:/]+):([0-9]+)/(/.+)$ ]]; then
  echo "FAIL: unexpected URL form: $SQLQ_TEST_FB_URL"
  exit 1
fi
user=${BASH_REMATCH[1]} password=${BASH_REMATCH[2]} host=${BASH_REMATCH[3]}
port=${BASH_REMATCH[4]} path=${BASH_REMATCH[5]}
expect_eq "the URL's port is the fixture's" "$port" "$SQLQ_TEST_FB_PORT"
remote="$host/$port:$path"
table="fb_server_$$"

# isql DATABASE [ARGS...] <SQL: isql-fb as the URL's user, stopping at the
# first error, output and errors on standard output.
isql() {
  local database=$1
  shift
  isql-fb -q -b -m -user "$user" -password "$password" "$@" "$database"
}

# Over TCP, as the URL's user: a table, a row, and where the connection
# comes from.
run "create and insert through the server" 0 isql "$remote" < <(cat <<SQL
CREATE TABLE $table (id INTEGER NOT NULL PRIMARY KEY, payload BLOB SUB_TYPE TEXT);
COMMIT;
INSERT INTO $table VALUES (1, 'through the server');
COMMIT;
SET LIST ON;
SELECT payload, CURRENT_USER AS who, MON\$REMOTE_PROTOCOL AS protocol,
       MON\$REMOTE_ADDRESS AS address
  FROM $table, MON\$ATTACHMENTS WHERE MON\$ATTACHMENT_ID = CURRENT_CONNECTION;
SQL
)
expect_out_has "the row is read back" "through the server"
expect_out_has "as the URL's user" "$(tr '[:lower:]' '[:upper:]' <<<"$user")"
expect_out_has "over TCP" "TCPv4"
expect_out_has "from 127.0.0.1" "127.0.0.1/"

# A wrong password is refused.
run "a wrong password" 1 isql-fb -q -b -m -user "$user" -password "not-$password" "$remote" \
  < <(echo "SELECT 1 FROM RDB\$DATABASE;")
expect_out_has "a wrong password" "Your user name and password are not defined"

# Embedded: a file of its own, created and used in this process, with no
# remote protocol.
embedded=$tmp/embedded.fdb
run "create and use an embedded database" 0 isql-fb -q -b -m -user "$user" < <(cat <<SQL
CREATE DATABASE '$embedded';
CREATE TABLE $table (id INTEGER NOT NULL PRIMARY KEY);
INSERT INTO $table VALUES (7);
COMMIT;
SET LIST ON;
SELECT id, COALESCE(MON\$REMOTE_PROTOCOL, 'none') AS protocol
  FROM $table, MON\$ATTACHMENTS WHERE MON\$ATTACHMENT_ID = CURRENT_CONNECTION;
SQL
)
expect_out_has "the embedded row is read back" "ID                              7"
expect_out_has "with no remote protocol" "PROTOCOL                        none"

# While the server holds the test database (a connection is open on it),
# an embedded connection to the same file is refused.
mkfifo "$tmp/hold"
isql "$remote" <"$tmp/hold" >"$tmp/held" 2>&1 &
holder=$!
bg_pids+=("$holder")
exec 3>"$tmp/hold"
echo "SELECT 'held' FROM RDB\$DATABASE;" >&3
# The holder has answered once it printed "held": it is attached.
tries=100
until grep -q '^held' "$tmp/held" || [ "$tries" -eq 0 ]; do
  sleep 0.1
  tries=$((tries - 1))
done
expect_eq "the holder is attached" "$(grep -c '^held' "$tmp/held")" 1
run "embedded on the server's open file" 1 isql-fb -q -b -m -user "$user" "$path" \
  < <(echo "SELECT 1 FROM RDB\$DATABASE;")
expect_out_has "embedded on the server's open file" "Database already opened with engine instance"
exec 3>&-
wait "$holder"

finish
