# tests/cli/push.sh -- sqlq init, push (arguments, stdin, --lines, dedupe)
# and the jobs and stats views of what was pushed.
. "$(dirname "$0")/lib.sh"

run "init" 0 sq init
expect_out "init prints the version" "schema version 15"
run "init again" 0 sq init
expect_out "init again changes nothing" "schema version 15"

run "push" 0 sq push q hello
expect_out "push prints the id" "1"
run "push -p" 0 sq push -p 5 q urgent
expect_out "push -p id" "2"
run "push -d" 0 sq push -d 3600 --max-attempts 3 q later
expect_out "push -d id" "3"
run "push -g" 0 sq push -g grp --priority=-1 q grouped
run "push -k" 0 sq push -k key-1 q first
first=$(cat "$tmp/out")
run "push -k again" 0 sq push -k key-1 q second
expect_out "a dedupe hit prints the first id" "$first"
expect_eq "a dedupe hit is silent on stderr" "$(cat "$tmp/err")" ""

run "stats" 0 sq stats
queues_only
golden "stats table" push_stats.txt
run "stats --json" 0 sq stats --json
queues_only
expect_out "stats --json" '{"queues":[{"queue":"q","ready":4,"scheduled":1,"running":0,"dead":0,"paused":false}]}'
run "stats --json QUEUE" 0 sq stats --json nothing-here
expect_out "stats of an empty queue" '{"queues":[{"queue":"nothing-here","ready":0,"scheduled":0,"running":0,"dead":0,"paused":false}]}'

run "jobs" 0 sq jobs q
mask_times
golden "jobs table" push_jobs.txt
run "jobs --json" 0 sq jobs --json q
mask_times
golden "jobs json" push_jobs.json
run "jobs --state scheduled" 0 sq jobs --state scheduled --json q
expect_eq "only the scheduled job" "$(grep -o '"id":[0-9]*' "$tmp/out")" '"id":3'
run "jobs --limit" 0 sq jobs --limit 2 q
expect_eq "jobs --limit 2 prints a header and 2 rows" "$(wc -l <"$tmp/out")" 3

# A payload from stdin is taken byte for byte, NUL and non-UTF-8 included.
printf 'a\0b\377\n' >"$tmp/binary"
run "push from stdin" 0 sq push bin <"$tmp/binary"
run "jobs of a binary payload" 0 sq jobs --json bin
expect_eq "binary payload is base64" "$(grep -o '"payload_base64":"[^"]*"' "$tmp/out")" '"payload_base64":"YQBi/wo="'
run "jobs table escapes the payload" 0 sq jobs bin
expect_eq "escaped preview" "$(tail -n 1 "$tmp/out" | awk '{print $NF}')" 'a\x00b\xff\n'
run "push an empty stdin" 0 sq push bin </dev/null
run "push a UTF-8 payload" 0 sq push utf "é ü"
run "jobs of a UTF-8 payload" 0 sq jobs --json utf
expect_eq "UTF-8 payload is a string" "$(grep -o '"payload":"[^"]*"' "$tmp/out")" '"payload":"é ü"'

# --lines: one job per line, blank lines included, the last line with or
# without its newline.
run "push --lines" 0 sq push --lines lines < <(printf 'l1\nl2\n\nl4')
expect_out "push --lines prints the count" "4 jobs"
run "jobs of --lines" 0 sq jobs --json lines
expect_eq "line payloads" "$(grep -o '"payload":"[^"]*"' "$tmp/out" | tr '\n' ' ')" \
  '"payload":"l1" "payload":"l2" "payload":"" "payload":"l4" '
run "push --lines in batches" 0 sq push --lines -p 2 many < <(seq 1 1234)
expect_out "1234 lines" "1234 jobs"
run "stats of --lines" 0 sq stats --json many
expect_out "all lines stored" '{"queues":[{"queue":"many","ready":1234,"scheduled":0,"running":0,"dead":0,"paused":false}]}'
run "push --lines of nothing" 0 sq push --lines none </dev/null
expect_out "no lines" "0 jobs"

# A queue name of exactly 128 bytes is fine.
q128=$(printf 'q%.0s' $(seq 128))
run "128-byte queue name" 0 sq push "$q128" x

finish
