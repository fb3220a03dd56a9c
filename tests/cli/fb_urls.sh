# tests/cli/fb_urls.sh -- Firebird URLs: an alias and an absolute path
# through the server, an embedded file, `sqlq init` creating a missing
# database both ways, a wrong password, a server that is not there, and
# garbage URLs and options.  Each failure is one line on stderr with exit
# 69 (unavailable) or 64 (usage), and no message shows a password.
#
# Needs SQLQ_TEST_FB_URL and SQLQ_TEST_FB_PORT (set by tests/CMakeLists.txt
# for the firebird fixture): the server's databases.conf has the alias
# "sqlq" for the test database (tests/servers/firebird.sh), and isql-fb.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ -n "${SQLQ_TEST_FB_URL:-}" ] || { echo "FAIL: SQLQ_TEST_FB_URL is not set"; exit 1; }
port=$SQLQ_TEST_FB_PORT
embedded="firebird:$tmp/embedded.fdb"
# A file beside the fixture's database that does not exist yet: sqlq init
# makes it through the server, and the exit drops it.
fb_dir=${SQLQ_TEST_FB_URL#*:"$port"/}
fb_file="${fb_dir%/*}/sqlq_urls_$$.fdb"
url="${SQLQ_TEST_FB_URL%/*}/sqlq_urls_$$.fdb"
drop_database() {
  cleanup
  [ ! -e "$fb_file" ] || isql-fb -q -user sqlq -password sqlq-secret "127.0.0.1/$port:$fb_file" \
    <<<"DROP DATABASE;" >/dev/null 2>&1
}
trap drop_database EXIT

alias_url="firebird://sqlq:sqlq-secret@127.0.0.1:$port/sqlq"
q="urls-$$"

# The alias and the absolute path name the same database.
run "init by path" 0 "$SQLQ" --url "$SQLQ_TEST_FB_URL" init
run "push by alias" 0 "$SQLQ" --url "$alias_url" push "$q" one
run "push by path" 0 "$SQLQ" --url "$SQLQ_TEST_FB_URL" push "$q" two
run "stats by alias" 0 "$SQLQ" --url "$alias_url" stats --json "$q"
expect_out_has "both pushes are there" '"ready":2,'
"$SQLQ" --url "$alias_url" purge "$q" >/dev/null

# A database file that does not exist: queue calls say so and name init;
# init creates it through the server, and then it works.
run "before init, through the server" 69 sq stats
expect_error_line "before init, through the server"
expect_err_has "before init, through the server" "does not exist: \`sqlq init\` creates it"
expect_err_lacks "before init, through the server" "sqlq-secret"
run "init creates it through the server" 0 sq init
expect_out_has "init through the server" "schema version"
expect_eq "the file is there" "$([ -f "$fb_file" ] && echo yes)" yes
run "init again" 0 sq init
run "push to the new database" 0 sq push "$q" x
expect_out "the first id of a new database" "1"

# Embedded: the same, on a file of this test's own.
run "before init, embedded" 69 "$SQLQ" --url "$embedded" stats
expect_error_line "before init, embedded"
expect_err_has "before init, embedded" "does not exist: \`sqlq init\` creates it"
run "init creates it embedded" 0 "$SQLQ" --url "$embedded" init
expect_eq "the embedded file is there" "$([ -f "$tmp/embedded.fdb" ] && echo yes)" yes
run "push embedded" 0 "$SQLQ" --url "$embedded" push "$q" y
run "stats embedded" 0 "$SQLQ" --url "$embedded" stats --json "$q"
expect_out_has "the embedded push is there" '"ready":1,'
run "init in a missing directory" 69 "$SQLQ" --url "firebird:$tmp/none/e.fdb" init
expect_error_line "init in a missing directory"

# A wrong password: the server's reason, the URL with the password hidden.
run "wrong password" 69 "$SQLQ" --url "firebird://sqlq:not-the-secret@127.0.0.1:$port/sqlq" stats
expect_error_line "wrong password"
expect_err_has "wrong password" "user name and password are not defined"
expect_err_has "wrong password" "firebird://sqlq:***@127.0.0.1:$port/sqlq"
expect_err_lacks "wrong password" "not-the-secret"
run "unknown user" 69 "$SQLQ" --url "firebird://nobody_$$:pw-123@127.0.0.1:$port/sqlq" stats
expect_error_line "unknown user"
expect_err_lacks "unknown user" "pw-123"

# Nobody listening.
run "no server" 69 "$SQLQ" --url "firebird://sqlq:pw-123@127.0.0.1:1/sqlq?connect_timeout=2" push "$q" x
expect_error_line "no server"
expect_err_has "no server" "cannot attach"
expect_err_lacks "no server" "pw-123"
# An alias the server does not know is a file it cannot open.
run "unknown alias" 69 "$SQLQ" --url "firebird://sqlq:sqlq-secret@127.0.0.1:$port/no_such_alias_$$" stats
expect_error_line "unknown alias"
expect_err_lacks "unknown alias" "sqlq-secret"

# Garbage URLs and bad options are usage errors.
run "no database" 64 "$SQLQ" --url "firebird://sqlq:pw-123@127.0.0.1:$port" stats
expect_error_line "no database"
expect_err_has "no database" "no database"
expect_err_lacks "no database" "pw-123"
run "no database file" 64 "$SQLQ" --url "firebird:" stats
expect_error_line "no database file"
run "no host" 64 "$SQLQ" --url "firebird://sqlq:pw-123@/sqlq" stats
expect_error_line "no host"
run "bad port" 64 "$SQLQ" --url "firebird://sqlq:pw-123@127.0.0.1:port/sqlq" stats
expect_error_line "bad port"
expect_err_lacks "bad port" "pw-123"
run "unclosed bracket" 64 "$SQLQ" --url "firebird://[::1:$port/sqlq" stats
expect_error_line "unclosed bracket"
run "bad connect_timeout" 64 "$SQLQ" --url "$SQLQ_TEST_FB_URL?connect_timeout=soon" stats
expect_error_line "bad connect_timeout"
expect_err_has "bad connect_timeout" "connect_timeout must be"
run "bad poll_interval" 64 "$SQLQ" --url "$SQLQ_TEST_FB_URL?poll_interval=0" stats
expect_error_line "bad poll_interval"
expect_err_has "bad poll_interval" "poll_interval must be"
run "bad events" 64 "$SQLQ" --url "$SQLQ_TEST_FB_URL?events=maybe" stats
expect_error_line "bad events"
expect_err_has "bad events" "events must be on or off"
run "unknown option" 64 "$SQLQ" --url "$SQLQ_TEST_FB_URL?colour=blue" stats
expect_error_line "unknown option"
expect_err_has "unknown option" "unknown URL option 'colour'"
expect_err_lacks "unknown option" "sqlq-secret"

# A short poll interval still drains the queue.
printf 'a\nb\nc\n' | sq push --lines "$q" >/dev/null
run "drain" 0 timeout 60 "$SQLQ" --url "$url?poll_interval=0.05" work --drain "$q" -- sh -c 'cat >/dev/null'
run "stats after drain" 0 sq stats --json "$q"
expect_out_has "the queue is drained" '"ready":0,"scheduled":0,"running":0,"dead":0'
finish
