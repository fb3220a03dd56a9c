# tests/cli/my_urls.sh -- MySQL/MariaDB URLs: both schemes, the unix socket
# form, a wrong password, a server that is not there, and bad driver
# options.  Each failure is one line on stderr with exit 69 (unavailable)
# or 64 (usage), and no message shows a password.
#
# Needs SQLQ_TEST_MY_URL and SQLQ_TEST_MY_PORT (set by tests/CMakeLists.txt
# for the mariadb fixture); the server's socket is in its data directory,
# /tmp/sqlq-test-my-PORT/mysqld.sock (tests/servers/mariadb.sh).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ -n "${SQLQ_TEST_MY_URL:-}" ] || { echo "FAIL: SQLQ_TEST_MY_URL is not set"; exit 1; }
port=$SQLQ_TEST_MY_PORT
socket=/tmp/sqlq-test-my-$port/mysqld.sock
q="urls-$$"

run "init over TCP" 0 "$SQLQ" --url "$SQLQ_TEST_MY_URL" init
run "push, mariadb scheme" 0 "$SQLQ" --url "mariadb://sqlq@127.0.0.1:$port/sqlq" push "$q" one
run "push over the socket" 0 "$SQLQ" --url "mysql://sqlq@localhost/sqlq?socket=$socket" push "$q" two
run "push, socket without host" 0 "$SQLQ" --url "mariadb://sqlq@/sqlq?socket=${socket//\//%2F}" push "$q" three
run "stats over TCP" 0 "$SQLQ" --url "$SQLQ_TEST_MY_URL" stats --json "$q"
expect_out_has "the three pushes are there" '"ready":3,'

# A wrong password: the server's reason, the password hidden.
expect_password_hidden mysql "Access denied"

# Nobody listening, on a port or a socket.
run "no server" 69 "$SQLQ" --url "mariadb://sqlq:pw-123@127.0.0.1:1/sqlq?connect_timeout=2" push "$q" x
expect_error_line "no server"
expect_err_has "no server" "cannot connect"
expect_err_lacks "no server" "pw-123"
run "no socket" 69 "$SQLQ" --url "mariadb://sqlq:pw-123@localhost/sqlq?socket=$tmp/none.sock" push "$q" x
expect_error_line "no socket"
expect_err_lacks "no socket" "pw-123"
run "unknown database" 69 "$SQLQ" --url "mysql://sqlq@127.0.0.1:$port/no_such_db_$$" stats
expect_error_line "unknown database"

# Bad options of the driver's own, and a URL without a database, are
# usage errors.
run "no database" 64 "$SQLQ" --url "mysql://sqlq@127.0.0.1:$port" stats
expect_error_line "no database"
expect_err_has "no database" "names its database"
run "bad wake_interval" 64 "$SQLQ" --url "$SQLQ_TEST_MY_URL?wake_interval=0" stats
expect_error_line "bad wake_interval"
expect_err_has "bad wake_interval" "wake_interval must be"
run "bad wake" 64 "$SQLQ" --url "$SQLQ_TEST_MY_URL?wake=shout" stats
expect_error_line "bad wake"
expect_err_has "bad wake" "wake must be kill or poll"
run "relative socket" 64 "$SQLQ" --url "mysql://sqlq@localhost/sqlq?socket=mysqld.sock" stats
expect_error_line "relative socket"
run "bad connect_timeout" 64 "$SQLQ" --url "$SQLQ_TEST_MY_URL?connect_timeout=soon" stats
expect_error_line "bad connect_timeout"
run "unknown option" 64 "$SQLQ" --url "$SQLQ_TEST_MY_URL?colour=blue" stats
expect_error_line "unknown option"
expect_err_has "unknown option" "unknown URL option 'colour'"

# A short wake interval still drains the queue, and so does polling.
run "drain" 0 timeout 30 "$SQLQ" --url "$SQLQ_TEST_MY_URL?wake_interval=0.05" \
  work --drain "$q" -- sh -c 'cat >/dev/null'
printf 'a\nb\nc\n' | "$SQLQ" --url "$SQLQ_TEST_MY_URL" push --lines "$q" >/dev/null
run "drain, polling" 0 timeout 30 "$SQLQ" --url "$SQLQ_TEST_MY_URL?wake=poll&wake_interval=0.05" \
  work --drain "$q" -- sh -c 'cat >/dev/null'
# Claims by lanes, always or never (docs/mysql.md): the queue drains
# either way; a value other than auto, on or off is refused.
for v in on off; do
  printf 'a\nb\nc\n' | "$SQLQ" --url "$SQLQ_TEST_MY_URL" push --lines "$q" >/dev/null
  run "drain, lanes=$v" 0 timeout 30 "$SQLQ" --url "$SQLQ_TEST_MY_URL?lanes=$v" \
    work --drain "$q" -- sh -c 'cat >/dev/null'
done
for v in "" maybe ON; do
  run "lanes '$v'" 64 "$SQLQ" --url "$SQLQ_TEST_MY_URL?lanes=$v" stats
  expect_err_has "lanes '$v' is refused" "lanes must be auto, on or off"
done
run "stats after drain" 0 "$SQLQ" --url "$SQLQ_TEST_MY_URL" stats --json "$q"
expect_out_has "the queue is drained" '"ready":0,"scheduled":0,"running":0,"dead":0'
"$SQLQ" --url "$SQLQ_TEST_MY_URL" purge "$q" >/dev/null
finish
