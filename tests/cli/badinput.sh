# tests/cli/badinput.sh -- bad commands, flags, names, payloads and URLs:
# each gets one "sqlq: " line on stderr and its sysexits code, and the jobs
# already stored stay as they were.
. "$(dirname "$0")/lib.sh"

sq init >/dev/null
sq push q one >/dev/null
sq push -d 3600 q two >/dev/null
printf 'a\0b' | sq push q >/dev/null
baseline=$(queue_stats)
payload_baseline=$(sq jobs --json q)

# bad NAME CODE CMD...: CMD fails with CODE and one error line, and the
# stored jobs are intact.
bad() {
  local name=$1
  run "$@"
  expect_error_line "$name"
  expect_eq "$name: stats intact" "$(queue_stats)" "$baseline"
}

# Usage errors: 64.
bad "no command" 64 "$SQLQ" --url "$url"
bad "unknown command" 64 sq frobnicate
expect_err_has "unknown command is named" "frobnicate"
bad "unknown global flag" 64 "$SQLQ" --bogus stats
bad "--url without a value" 64 "$SQLQ" --url
bad "help of an unknown command" 64 sq help frobnicate
bad "unknown flag" 64 sq push --bogus q x
expect_err_has "the flag is named" "--bogus"
bad "unknown short flag" 64 sq push -z q x
expect_err_has "the short flag is named" "-z"
bad "flag without its value" 64 sq push q -p
bad "non-numeric priority" 64 sq push -p abc q x
bad "fractional priority" 64 sq push -p 1.5 q x
bad "priority out of range" 64 sq push -p 99999999999 q x
bad "negative delay" 64 sq push -d -1 q x
bad "non-numeric delay" 64 sq push -d soon q x
bad "infinite delay" 64 sq push -d inf q x
bad "zero max attempts" 64 sq push -a 0 q x
bad "push without a queue" 64 sq push
bad "push with too many arguments" 64 sq push q x y
bad "push --lines with a payload" 64 sq push --lines q x
bad "empty queue name" 64 sq push "" x
q129=$(printf 'q%.0s' $(seq 129))
bad "129-byte queue name" 64 sq push "$q129" x
bad "129-byte queue name for work" 64 sq work "$q129" -- true
bad "129-byte queue name for stats" 64 sq stats "$q129"
bad "empty queue name for jobs" 64 sq jobs ""
bad "work -c 0" 64 sq work -c 0 q -- true
bad "work --lease 0" 64 sq work --lease 0 q -- true
bad "work --backoff x" 64 sq work --backoff x q -- true
bad "work --backoff past a day" 64 sq work --drain --backoff 4e9 empty -- true
bad "work --lease past 3.2e9" 64 sq work --drain --lease 4e9 empty -- true
bad "work --kill-after -1" 64 sq work --drain --kill-after -1 empty -- true
bad "work --kill-after x" 64 sq work --drain --kill-after x empty -- true
bad "work --timeout -1" 64 sq work --drain --timeout -1 empty -- true
bad "work --timeout x" 64 sq work --drain --timeout x empty -- true
bad "work --timeout with a unit" 64 sq work --drain --timeout 5s empty -- true
expect_err_has "the timeout is named" "timeout '5s' is not a number of seconds"
bad "work --timeout empty" 64 sq work --drain --timeout "" empty -- true
bad "work --timeout past 3.2e9" 64 sq work --drain --timeout 4e9 empty -- true
bad "work --timeout overflowing" 64 sq work --drain --timeout 1e999 empty -- true
bad "work --timeout nan" 64 sq work --drain --timeout nan empty -- true
bad "work --stdio --timeout -1" 64 sq work --stdio --drain --timeout -1 empty -- cat
bad "work without a command" 64 sq work q
bad "work without a command after --" 64 sq work q --
bad "lock -w abc" 64 sq lock -w abc L -- true
bad "lock -E 300" 64 sq lock -E 300 L -- true
bad "lock without a command" 64 sq lock L
bad "lock with an empty name" 64 sq lock "" -- true
bad "jobs --state bogus" 64 sq jobs --state bogus q
bad "jobs --limit 0" 64 sq jobs --limit 0 q
bad "retry without ids or --dead" 64 sq retry q
bad "retry with ids and --dead" 64 sq retry --dead q 1
bad "retry a non-numeric id" 64 sq retry q abc
bad "pause without a queue" 64 sq pause
bad "purge with two queues" 64 sq purge q r
bad "stats with two queues" 64 sq stats q r
bad "init with an argument" 64 sq init now
bad "a newline in an argument stays one line" 64 sq push -p "$(printf '1\n2')" q x

# Data errors: 65.
small="sqlite:$tmp/t.db?payload_limit=10"
bad "payload argument over the limit" 65 "$SQLQ" --url "$small" push q 12345678901
expect_err_has "the limit is stated" "limit"
bad "stdin payload over the limit" 65 "$SQLQ" --url "$small" push q < <(head -c 11 /dev/zero)
bad "a line over the limit" 65 "$SQLQ" --url "$small" push --lines q < <(printf 'ok\n12345678901\n')
run "a payload at the limit" 0 "$SQLQ" --url "$small" push at-limit 1234567890
baseline=$(queue_stats)

# The database is unavailable: 69.
bad "unknown URL scheme" 69 "$SQLQ" --url foo://x stats
bad "backend not built" 69 "$SQLQ" --url postgres://u:secret@h/db stats
expect_err_lacks "the password is not shown" "secret"
bad "mysql server unreachable, or backend not built" 69 "$SQLQ" --url "mysql://u:secret@h:3306/db" push q x
expect_err_lacks "the mysql password is not shown" "secret"
bad "a directory that cannot be created" 69 "$SQLQ" --url "sqlite:$tmp/no/such/dir/t.db" stats
bad "no schema" 69 "$SQLQ" --url "sqlite:$tmp/empty.db" stats
expect_err_has "no schema says to run init" "sqlq init"
SQLQ_URL="sqlite:$tmp/no/such/dir/t.db" bad "SQLQ_URL is used" 69 "$SQLQ" stats
bad "URL without a scheme" 64 "$SQLQ" --url nourl stats
# An empty password once made the redaction loop write past its buffer.
for u in "mysql://root:@127.0.0.1:1/db?connect_timeout=1" "postgres://u:@127.0.0.1:1/db" \
         "sqlite://u:@$tmp/no/such/dir/t.db"; do
  bad "empty password in $u" 69 "$SQLQ" --url "$u" stats
done
# Secrets stay out of messages however the URL spells them.
for u in "postgres://u@127.0.0.1:1/db?pass%77ord=hunter2" \
         "postgres://u@127.0.0.1:1/db?connect_timeout=1&password=hunter2"; do
  bad "a secret option in $u" 69 "$SQLQ" --url "$u" stats
  expect_err_lacks "the secret option of $u is not shown" "hunter2"
done
for u in "postgres://u:12/hunter2@127.0.0.1:1/db" "postgres://u:12?hunter2@127.0.0.1:1/db" \
         "mysql://u:12?x&hunter2@127.0.0.1:1/db"; do
  bad "an unencoded password in $u" 64 "$SQLQ" --url "$u" stats
  expect_err_lacks "the unencoded password of $u is not shown" "hunter2"
done
bad "bad URL option" 64 "$SQLQ" --url "sqlite:$tmp/t.db?bogus=1" stats

# A command given --help, or `help COMMAND`, prints its usage to stdout.
for cmd in init push work stats jobs retry pause resume purge lock; do
  run "$cmd --help" 0 sq "$cmd" --help
  cp "$tmp/out" "$tmp/help1"
  checks=$((checks + 1))
  head -n 1 "$tmp/out" | grep -q "^usage: sqlq .*$cmd" || fail "$cmd --help: no usage line"
  run "help $cmd" 0 sq help "$cmd"
  checks=$((checks + 1))
  cmp -s "$tmp/out" "$tmp/help1" || fail "help $cmd differs from $cmd --help"
done
run "--help" 0 "$SQLQ" --help
checks=$((checks + 1))
grep -q "^usage: sqlq" "$tmp/out" || fail "--help: no usage line"
run "--version" 0 "$SQLQ" --version
expect_out "--version" "sqlq 1.1.0"

expect_eq "payloads intact" "$(sq jobs --json q)" "$payload_baseline"

finish
