# tests/cli/lib.sh -- helpers shared by the CLI tests, sourced by each
# tests/cli/NAME.sh.
#
# Each test runs as `SQLQ=/path/to/sqlq bash tests/cli/NAME.sh`.  It gets a
# private temporary directory ($tmp, removed at exit) and a database URL
# ($url, sqlite:$tmp/t.db); `sq ARGS` runs the tool on it.  Checks print one
# line per failure ("FAIL: ...") and `finish` exits non-zero if any failed.
# Golden files live in tests/cli/golden/; SQLQ_UPDATE_GOLDEN=1 rewrites them
# from the current output instead of comparing.

. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"

golden_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/golden
failures=0
checks=0

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# run NAME CODE CMD [ARGS...]: run CMD with stdout in $tmp/out and stderr in
# $tmp/err, and check that it exits with CODE.  stdin is the caller's: feed
# it with `run ... < <(printf ...)`, never `printf ... | run ...`, whose
# subshell would lose the count of failures.
run() {
  local name=$1 want=$2 got
  shift 2
  checks=$((checks + 1))
  "$@" >"$tmp/out" 2>"$tmp/err"
  got=$?
  if [ "$got" != "$want" ]; then
    fail "$name: exit $got, expected $want; stderr: $(head -c 300 "$tmp/err" | tr '\n' '|')"
  fi
}

# refused NAME CODE CMD [ARGS...]: run CMD, which must fail with CODE and
# one error line, and check that the output of the test's function
# `stored` is still $baseline: a refusal changed nothing.
refused() {
  local name=$1
  run "$@"
  expect_error_line "$name"
  expect_eq "$name: what is stored is intact" "$(stored)" "$baseline"
}

# expect_eq NAME GOT WANT
expect_eq() {
  checks=$((checks + 1))
  if [ "$2" != "$3" ]; then
    fail "$1: got '$2', expected '$3'"
  fi
}

# expect_out NAME TEXT: stdout of the last run is TEXT (plus a newline).
expect_out() {
  expect_eq "$1" "$(cat "$tmp/out")" "$2"
}

# expect_out_has NAME TEXT: stdout of the last run contains TEXT.
expect_out_has() {
  checks=$((checks + 1))
  grep -qF -- "$2" "$tmp/out" || fail "$1: stdout lacks '$2': $(head -c 300 "$tmp/out" | tr '\n' '|')"
}

# expect_error_line NAME: stderr of the last run is one line, "sqlq: ...".
expect_error_line() {
  checks=$((checks + 1))
  if [ "$(wc -l <"$tmp/err")" != 1 ] || ! head -n 1 "$tmp/err" | grep -q '^sqlq: .'; then
    fail "$1: stderr is not one 'sqlq: ' line: $(head -c 300 "$tmp/err" | tr '\n' '|')"
  fi
}

# expect_err_has NAME TEXT / expect_err_lacks NAME TEXT: on the last stderr.
expect_err_has() {
  checks=$((checks + 1))
  grep -qF -- "$2" "$tmp/err" || fail "$1: stderr lacks '$2': $(head -c 300 "$tmp/err" | tr '\n' '|')"
}
expect_err_lacks() {
  checks=$((checks + 1))
  ! grep -qF -- "$2" "$tmp/err" || fail "$1: stderr has '$2'"
}

# expect_password_hidden SCHEME REASON: with a wrong password for the user
# sqlq_pw (whose password is sqlq-secret), the server on 127.0.0.1:$port
# refuses with REASON in one line that shows the URL with the password
# hidden; with the right one, stats of queue $q succeeds.
expect_password_hidden() {
  local scheme=$1 reason=$2
  run "wrong password" 69 "$SQLQ" --url "$scheme://sqlq_pw:not-the-secret@127.0.0.1:$port/sqlq" stats
  expect_error_line "wrong password"
  expect_err_has "wrong password" "$reason"
  expect_err_has "wrong password" "$scheme://sqlq_pw:***@127.0.0.1:$port/sqlq"
  expect_err_lacks "wrong password" "not-the-secret"
  run "right password" 0 "$SQLQ" --url "$scheme://sqlq_pw:sqlq-secret@127.0.0.1:$port/sqlq" stats "$q"
}

# wait_for_lines PATH N: wait until PATH has N whole lines (20 s at most).
wait_for_lines() {
  local tries=200
  until [ "$(cat "$1" 2>/dev/null | wc -l)" -ge "$2" ] || [ "$tries" -le 0 ]; do
    tries=$((tries - 1))
    sleep 0.1
  done
}

# Replace ISO-8601 times in $tmp/out with TIME.
mask_times() {
  sed -E -i 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z/TIME/g' "$tmp/out"
}

# queues_only: keep in stdout of the last run only what `sqlq stats`
# prints of the queues, without the health that it prints after them when
# given no QUEUE (a table after an empty line; in JSON the key "health",
# which comes last), whose sizes vary from run to run.
queues_only() {
  sed -i -e '/^$/,$d' -e 's/,"health":\[.*\]}$/}/' "$tmp/out"
}

# queue_stats: `sqlq stats --json` of the database, without the health.
queue_stats() {
  sq stats --json | sed 's/,"health":\[.*\]}$/}/'
}

# golden NAME FILE: stdout of the last run equals tests/cli/golden/FILE.
golden() {
  checks=$((checks + 1))
  if [ "${SQLQ_UPDATE_GOLDEN:-0}" = 1 ]; then
    cp "$tmp/out" "$golden_dir/$2"
    return
  fi
  if ! diff -u "$golden_dir/$2" "$tmp/out" >"$tmp/diff"; then
    fail "$1: output differs from golden/$2:"
    sed 's/^/    /' "$tmp/diff"
  fi
}

# stop_worker PID: SIGTERM the worker, which must exit 0 (it is killed,
# with its commands, when it has not exited 20 s later).
stop_worker() {
  kill -TERM "$1"
  if ! wait_gone 20 "$1"; then
    fail "the worker did not exit after SIGTERM"
    kill -9 "$1"
  fi
  wait "$1"
  expect_eq "the worker exits 0" $? 0
}

# start_worker ERR ARGS...: run `sqlq work ARGS` on $url in the background,
# with its stderr in ERR and its pid in $worker (killed at exit).
start_worker() {
  local err=$1
  shift
  "$SQLQ" --url "$url" work "$@" 2>"$err" &
  worker=$!
  bg_pids+=("$worker")
}

# start_retried ERR OPTIONS...: start_worker ERR OPTIONS... -- CMD, where
# CMD's first attempt writes its SQLQ_JOB_TOKEN to $tmp/token and runs
# until SIGTERM, then writes $tmp/term and exits 0 (a result that must not
# be acked), and a later attempt writes its number to $tmp/again and exits
# 0.  Returns once the first attempt runs.
start_retried() {
  local err=$1
  shift
  start_worker "$err" "$@" -- sh -c '
    if [ "$SQLQ_ATTEMPT" != 1 ]; then echo "$SQLQ_ATTEMPT" >"$0/again"; exit 0; fi
    trap "echo term >\"\$0/term\"; exit 0" TERM
    echo "$SQLQ_JOB_TOKEN" >"$0/token"
    while :; do sleep 0.05; done' "$tmp"
  wait_for_file "$tmp/token" 20 || fail "the command did not start"
}

# expect_retried WHEN: the first attempt of start_retried's command got
# SIGTERM (WHEN says when it should have), and its job ran again, the
# attempt counted; then stop_worker.
expect_retried() {
  checks=$((checks + 1))
  wait_for_file "$tmp/term" 20 || fail "the command got no SIGTERM $1"
  checks=$((checks + 1))
  wait_for_file "$tmp/again" 30 || fail "the job did not run again after SIGTERM $1"
  expect_eq "the attempt stopped $1 was counted" "$(cat "$tmp/again" 2>/dev/null)" 2
  stop_worker "$worker"
}

# start_stubborn ERR OPTIONS...: start_worker ERR OPTIONS... -- CMD, where
# CMD ignores SIGTERM (it writes $tmp/ignored when it gets one) and starts a
# sleep of its own; once CMD runs, $victims holds the pids of both (killed
# at exit).
start_stubborn() {
  local err=$1
  shift
  start_worker "$err" "$@" -- sh -c '
    trap "echo term >\"\$0/ignored\"" TERM
    sleep 300 &
    echo "$$ $!" >"$0/victims"
    while :; do sleep 0.05; done' "$tmp"
  wait_for_file "$tmp/victims" 20 || fail "the command did not start"
  read -r -a victims <"$tmp/victims"
  bg_pids+=("${victims[@]}")
}

# now_ms: milliseconds on the wall clock.
now_ms() {
  echo $(($(date +%s%N) / 1000000))
}

# finish: exit 0 if every check passed, else 1.
finish() {
  if [ "$failures" -gt 0 ]; then
    echo "$failures of $checks checks failed"
    exit 1
  fi
  echo "ok: $checks checks"
  exit 0
}
