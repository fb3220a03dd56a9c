# tests/cli/ring.bash -- the body of the ring tests, sourced by ring.sh
# (SQLite) and my_ring.sh (MariaDB) after lib.sh, with $url a database
# without the schema yet.  sqlq ring: create, push (arguments and stdin),
# read (lines, --json, --since, --limit, --follow), drop; and garbage input,
# each refused with one "sqlq: " line and its sysexits code, leaving the
# ring as it was.

sq init >/dev/null

run "create" 0 sq ring create log 3
expect_out "create prints nothing" ""
run "create again" 0 sq ring create log 3
for i in 1 2 3 4; do
  run "push $i" 0 sq ring push log "entry $i"
  expect_out "push $i prints its number" "$i"
done
run "read" 0 sq ring read log
expect_out "read keeps the newest 3, oldest first" "entry 2
entry 3
entry 4"
run "read --since" 0 sq ring read --since 3 log
expect_out "read --since 3" "entry 4"
run "read --limit" 0 sq ring read --limit 1 log
expect_out "read --limit 1" "entry 2"
run "read --json" 0 sq ring read --json log
mask_times
expect_out "read --json" '[{"seq":2,"at":"TIME","payload":"entry 2"},{"seq":3,"at":"TIME","payload":"entry 3"},{"seq":4,"at":"TIME","payload":"entry 4"}]'

# A payload from stdin is taken byte for byte; JSON gives it in base64.
printf 'a\0b\377' >"$tmp/binary"
run "push from stdin" 0 sq ring push log <"$tmp/binary"
expect_out "stdin push number" "5"
run "read --json --since 4" 0 sq ring read --json --since 4 log
expect_eq "binary payload is base64" "$(grep -o '"payload_base64":"[^"]*"' "$tmp/out")" '"payload_base64":"YQBi/w=="'
run "read raw bytes" 0 sq ring read --since 4 log
expect_eq "raw bytes and a newline" "$(od -An -tx1 "$tmp/out" | tr -d ' \n')" "610062ff0a"
run "push an empty stdin" 0 sq ring push log </dev/null
run "read an empty ring" 0 sq ring read --json --since 6 log
expect_out "nothing above 6" "[]"

# --follow prints what is there, then what comes, until SIGTERM (exit 0).
"$SQLQ" --url "$url" ring read --follow --since 5 log >"$tmp/follow" 2>"$tmp/follow.err" &
follower=$!
bg_pids+=("$follower")
sq ring push log "while following" >/dev/null
for _ in $(seq 100); do
  grep -q "while following" "$tmp/follow" && break
  sleep 0.1
done
expect_eq "follow prints the new entry" "$(cat "$tmp/follow")" "
while following"
kill -TERM "$follower"
wait "$follower"
expect_eq "follow ends with 0 on SIGTERM" "$?" 0
expect_eq "follow says nothing on stderr" "$(cat "$tmp/follow.err")" ""

run "drop" 0 sq ring drop log
run "read a dropped ring" 65 sq ring read log
expect_error_line "read a dropped ring"

# Garbage: one error line, the sysexits code, and the ring as it was.
sq ring create keep 2 >/dev/null
sq ring push keep one >/dev/null
sq ring push keep two >/dev/null
baseline=$(sq ring read --json keep)
stored() {
  sq ring read --json keep
}
refused "ring without a subcommand" 64 sq ring
refused "unknown subcommand" 64 sq ring frob
refused "capacity 0" 64 sq ring create zero 0
refused "negative capacity" 64 sq ring create neg -5
refused "capacity not a number" 64 sq ring create nan abc
refused "capacity too large" 64 sq ring create big 1000000001
refused "create without capacity" 64 sq ring create keep
refused "create an existing ring with another capacity" 64 sq ring create keep 5
refused "empty ring name" 64 sq ring create "" 5
refused "ring name with a newline" 64 sq ring push "$(printf 'a\nb')" x
q129=$(printf 'r%.0s' $(seq 129))
refused "129-byte ring name" 64 sq ring push "$q129" x
refused "push to an unknown ring" 65 sq ring push nope x
refused "read an unknown ring" 65 sq ring read nope
refused "drop an unknown ring" 65 sq ring drop nope
refused "read --since -1" 64 sq ring read --since -1 keep
refused "read --limit 0" 64 sq ring read --limit 0 keep
refused "read --bogus" 64 sq ring read --bogus keep
refused "push with too many arguments" 64 sq ring push keep a b
head -c 2000 /dev/zero >"$tmp/big"
refused "payload over the limit (stdin)" 65 "$SQLQ" --url "$url?payload_limit=1000" ring push keep <"$tmp/big"
refused "payload over the limit (argument)" 65 "$SQLQ" --url "$url?payload_limit=4" ring push keep 12345
refused "database unavailable" 69 "$SQLQ" --url "postgres://nobody@127.0.0.1:1/none" ring push keep x
run "a ring's numbering survives refusals" 0 sq ring push keep three
expect_out "no number was lost" "3"

finish
