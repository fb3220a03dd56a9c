# tests/cli/pg_urls.sh -- PostgreSQL URLs: the socket-directory forms, a
# wrong password, a server that is not there, and bad driver options.  Each
# failure is one line on stderr with exit 69 (unavailable) or 64 (usage),
# and no message shows a password.
#
# Needs SQLQ_TEST_PG_URL and SQLQ_TEST_PG_PORT (set by tests/CMakeLists.txt
# for the postgres fixture); the server's socket directory is its data
# directory, /tmp/sqlq-test-pg-PORT (tests/servers/postgres.sh).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ -n "${SQLQ_TEST_PG_URL:-}" ] || { echo "FAIL: SQLQ_TEST_PG_URL is not set"; exit 1; }
port=$SQLQ_TEST_PG_PORT
socket_dir=/tmp/sqlq-test-pg-$port
q="urls-$$"

run "init over TCP" 0 "$SQLQ" --url "$SQLQ_TEST_PG_URL" init

# libpq's socket-directory forms: the directory as the host, percent-encoded,
# or as the host option.
run "push over the socket" 0 "$SQLQ" --url "postgres://sqlq@${socket_dir//\//%2F}:$port/sqlq" push "$q" one
run "push, host option" 0 "$SQLQ" --url "postgresql:///sqlq?host=$socket_dir&port=$port&user=sqlq" push "$q" two
run "stats over TCP" 0 "$SQLQ" --url "$SQLQ_TEST_PG_URL" stats --json "$q"
expect_out_has "both pushes are there" '"ready":2,'

# A wrong password: the server's reason, the password hidden.
expect_password_hidden postgres "password authentication failed"

# Nobody listening.
run "no server" 69 "$SQLQ" --url "postgres://sqlq:pw-123@127.0.0.1:1/sqlq?connect_timeout=2" push "$q" x
expect_error_line "no server"
expect_err_lacks "no server" "pw-123"

# Bad options of the driver's own are usage errors.
run "bad notify" 64 "$SQLQ" --url "$SQLQ_TEST_PG_URL?notify=maybe" stats
expect_error_line "bad notify"
expect_err_has "bad notify" "notify must be on or off"
run "bad poll_interval" 64 "$SQLQ" --url "$SQLQ_TEST_PG_URL?notify=off&poll_interval=0" stats
expect_error_line "bad poll_interval"
run "bad worker_synchronous_commit" 64 "$SQLQ" --url "$SQLQ_TEST_PG_URL?worker_synchronous_commit=1" stats
expect_error_line "bad worker_synchronous_commit"
expect_err_has "bad worker_synchronous_commit" "worker_synchronous_commit must be on or off"
for v in "" maybe ON autox 1; do
  run "bad lanes '$v'" 64 "$SQLQ" --url "$SQLQ_TEST_PG_URL?lanes=$v" stats
  expect_error_line "bad lanes '$v'"
  expect_err_has "bad lanes '$v'" "lanes must be auto, on or off"
done
for v in auto on off; do run "lanes=$v" 0 "$SQLQ" --url "$SQLQ_TEST_PG_URL?lanes=$v" stats; done
run "unknown option" 64 "$SQLQ" --url "$SQLQ_TEST_PG_URL?colour=blue" stats
expect_error_line "unknown option"
expect_err_has "unknown option" "unknown URL option 'colour'"

# notify=off still works: a worker polls and drains the queue.
run "drain with polling" 0 timeout 30 "$SQLQ" --url "$SQLQ_TEST_PG_URL?notify=off&poll_interval=0.05" \
  work --drain "$q" -- sh -c 'cat >/dev/null'
# Claims and acks that wait for the disk work the same.
printf 'a\nb\nc\n' | "$SQLQ" --url "$SQLQ_TEST_PG_URL" push --lines "$q" >/dev/null
run "drain with synchronous claims" 0 timeout 30 "$SQLQ" \
  --url "$SQLQ_TEST_PG_URL?worker_synchronous_commit=on" work --drain "$q" -- sh -c 'cat >/dev/null'
run "stats after drain" 0 "$SQLQ" --url "$SQLQ_TEST_PG_URL" stats --json "$q"
expect_out_has "the queue is drained" '"ready":0,"scheduled":0,"running":0,"dead":0'
"$SQLQ" --url "$SQLQ_TEST_PG_URL" purge "$q" >/dev/null
finish
