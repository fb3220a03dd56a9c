# tests/cli/work_stdio.sh -- `sqlq work --stdio`: bad command lines, and
# real jobs through each example handler of examples/ (Python, Node.js,
# bash), on SQLite.  The failures of handlers are tests/crash/*stdio_handlers*.
. "$(dirname "$0")/lib.sh"

examples=$(cd "$(dirname "$0")/../../examples" && pwd)
sq init >/dev/null

# Bad command lines: exit 64 with one line, before touching the database.
run "window without --stdio" 64 sq work --window 4 q -- cat
expect_error_line "window without --stdio"
run "bad window" 64 sq work --stdio --window 0 q -- cat
expect_error_line "bad window"
run "bad batch" 64 sq work --stdio --batch x q -- cat
expect_error_line "bad batch"
run "bad grace" 64 sq work --stdio --grace -1 q -- cat
expect_error_line "bad grace"
run "no command" 64 sq work --stdio q
expect_error_line "no command"
run "queue name not UTF-8" 64 sq work --stdio "$(printf 'q\210')" -- cat
expect_error_line "queue name not UTF-8"
run "help" 0 sq work --help
expect_out_has "help names --stdio" "--stdio"
expect_out_has "help names --window" "--window"

# drain_through NAME N CMD...: push N text jobs and drain them through the
# handler CMD with two handler processes; every job is acked.
drain_through() {
  local name=$1 n=$2
  shift 2
  seq -f "$name job %g" 1 "$n" | sq push --lines "ex-$name" >/dev/null
  run "$name handler" 0 timeout 120 "$SQLQ" --url "$url" work --stdio -c 2 --window 8 --drain \
    "ex-$name" -- "$@"
  run "$name stats" 0 sq stats --json "ex-$name"
  expect_out_has "$name: every job was acked" '"ready":0,"scheduled":0,"running":0,"dead":0'
}
drain_through python 500 python3 "$examples/handler.py"
drain_through node 500 node "$examples/handler.js"
drain_through bash 50 bash "$examples/handler.sh"

# The examples' handle() is what runs: a Python handle() that fails sends
# the job back with its error, and one that releases gives it back.
run "python fail" 0 sq push -a 1 ex-fail boom
run "python fail handler" 0 timeout 60 "$SQLQ" --url "$url" work --stdio --drain ex-fail -- \
  python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import handler
def h(job): raise ValueError(job["payload"].decode())
handler.handle = h; sys.exit(handler.main())' "$examples"
run "python fail jobs" 0 sq jobs --json ex-fail
expect_out_has "the failure is recorded" '"last_error":"ValueError('"'"'boom'"'"')"'
run "bash release" 0 sq push ex-release again
sed 's|^  :$|  echo x >>"$RELEASED"; return 75|' "$examples/handler.sh" >"$tmp/release.sh"
RELEASED=$tmp/released "$SQLQ" --url "$url" work --stdio --window 1 ex-release -- \
  bash "$tmp/release.sh" 2>"$tmp/release.err" &
worker=$!
bg_pids+=("$worker")
wait_for_file "$tmp/released" 60 || fail "the bash handler never released the job: $(cat "$tmp/release.err")"
kill -TERM "$worker"
wait "$worker"
expect_eq "the worker exits 0 on SIGTERM" "$?" 0
run "bash release jobs" 0 sq jobs --json ex-release
expect_out_has "the released job is ready, its attempt not counted" '"state":"ready","priority":0,"attempts":0'
finish
