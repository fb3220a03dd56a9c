# tests/cli/bench.sh -- sqlq bench: bad flags are usage errors with one
# error line; small runs (threads, several producers, processes, text and
# JSON) succeed, report what was asked and leave the bench queue empty; so
# do the ring and pool modes.
. "$(dirname "$0")/lib.sh"

run "init" 0 sq init

# Usage errors: 64, one line naming the flag, and no run.
for flags in "--workers 0" "--workers 65" "--workers x" \
  "--producers 0" "--producers 65" "--producers x" "--producers -1" \
  "--producers 1.5" "--producers=" "--batch 0" "--jobs 0" "--payload 7" \
  "--latency-samples -1" "--nonsense" "--producers"; do
  # shellcheck disable=SC2086
  run "bench $flags" 64 sq bench $flags
  expect_error_line "bench $flags"
done
run "bench --producers 65 is named" 64 sq bench --producers 65
expect_err_has "bench --producers 65 is named" "--producers wants a whole number from 1 to 64, not '65'"
run "bench --queue ''" 64 sq bench --queue ""
expect_error_line "bench --queue ''"

# has NAME TEXT: stdout of the last run contains TEXT.
has() {
  checks=$((checks + 1))
  grep -qF -- "$2" "$tmp/out" || fail "$1: stdout lacks '$2': $(tr '\n' '|' <"$tmp/out")"
}

run "two producers" 0 sq bench --jobs 2000 --workers 2 --producers 2 --batch 10 \
  --latency-samples 5 --json
has "two producers: producers" '"producers": 2'
has "two producers: jobs" '"jobs": 2000'
has "two producers: workers" '"workers": 2'

run "more producers than jobs" 0 sq bench --jobs 3 --workers 1 --producers 8 \
  --latency-samples 2 --json
has "more producers than jobs: producers" '"producers": 8'

run "producers with a backlog" 0 sq bench --jobs 500 --workers 2 --producers 3 \
  --batch 7 --backlog 200 --latency-samples 2 --json
has "producers with a backlog: backlog" '"backlog": 200'

run "processes" 0 sq bench --jobs 500 --workers 2 --processes --producers 2 \
  --batch 1 --latency-samples 3 --json
has "processes: producers" '"producers": 2'
has "processes: flag" '"processes": true'

run "default producers" 0 sq bench --jobs 100 --latency-samples 0 --json
has "default producers" '"producers": 1'

run "text" 0 sq bench --jobs 300 --workers 4 --producers 3 --latency-samples 0
has "text: workers line" "workers      4 threads"
has "text: producers line" "producers    3"
checks=$((checks + 1))
grep -A1 '^workers ' "$tmp/out" | grep -q '^producers    3$' ||
  fail "text: the producers line does not follow the workers line: $(tr '\n' '|' <"$tmp/out")"

# A failing enqueue (payloads over the limit) stops the run: one line, 65.
run "failing producers" 65 "$SQLQ" --url "$url?payload_limit=10" bench \
  --jobs 1000 --workers 2 --producers 4 --batch 10
expect_error_line "failing producers"
expect_err_has "failing producers: the cause" "over the limit"

# --ring and --pool: W clients push into a ring or take from a pool; the
# ring and the pool's items are gone afterwards.
run "bench --ring --pool" 64 sq bench --ring --pool
expect_error_line "bench --ring --pool"
run "ring" 0 sq bench --ring --jobs 300 --workers 3 --json
has "ring: mode" '"mode": "ring"'
has "ring: ops" '"ops": 300'
has "ring: clients" '"clients": 3'
run "ring, processes, text" 0 sq bench --ring --jobs 200 --workers 2 --processes
has "ring text: mode" "mode         ring pushes (capacity 1000, payload 16 B)"
has "ring text: clients" "clients      2 processes"
run "pool" 0 sq bench --pool --jobs 300 --workers 4 --json
has "pool: mode" '"mode": "pool"'
has "pool: clients" '"clients": 4'
run "the bench ring is gone" 65 sq ring read bench
run "the bench pool is gone" 65 sq pool list bench
run "ring over the payload limit" 65 "$SQLQ" --url "$url?payload_limit=10" bench --ring \
  --jobs 100 --workers 2
expect_error_line "ring over the payload limit"

# --drain: W workers claim and ack what is ready in a queue of others'
# (here 250 jobs pushed before), leaving it empty and the others alone.
run "drain without a queue" 64 sq bench --drain
expect_error_line "drain without a queue"
run "drain and ring" 64 sq bench --drain --ring --queue d
expect_error_line "drain and ring"
run "drain an empty queue" 65 sq bench --drain --queue nothing-here
expect_error_line "drain an empty queue"
seq 250 >"$tmp/lines"
sq push --lines drained <"$tmp/lines" >/dev/null
sq push untouched "stays" >/dev/null
run "drain" 0 sq bench --drain --queue drained --workers 3 --batch 7 --json
has "drain: mode" '"mode": "drain"'
has "drain: ops" '"ops": 250'
has "drain: batch" '"size": 7'
run "drained" 0 sq stats --json drained
expect_out "the drained queue is empty" \
  '{"queues":[{"queue":"drained","ready":0,"scheduled":0,"running":0,"dead":0,"paused":false}]}'
# --work-us: time slept per claimed job before the ack, with --drain only.
for bad in -1 x 1000001 1e3 ""; do
  run "drain --work-us '$bad'" 64 sq bench --drain --queue drained --work-us "$bad"
  expect_error_line "drain --work-us '$bad'"
done
run "--work-us without --drain" 64 sq bench --ring --work-us 5
expect_error_line "--work-us without --drain"
sq push --lines drained <"$tmp/lines" >/dev/null
run "drain with work" 0 sq bench --drain --queue drained --workers 2 --batch 50 --work-us 200 --json
has "drain with work: ops" '"ops": 250'
has "drain with work: work" '"work_us": 200'
sq push --lines drained <"$tmp/lines" >/dev/null
run "drain with work, text" 0 sq bench --drain --queue drained --batch 100 --work-us 20
has "drain with work, text: mode" \
  "mode         drain queue drained (claim and ack 100 at a time, 20 us of work per job)"
run "untouched" 0 sq stats --json untouched
expect_out "another queue is untouched" \
  '{"queues":[{"queue":"untouched","ready":1,"scheduled":0,"running":0,"dead":0,"paused":false}]}'

# --keep-backlog: a backlog made with push (priority -1) is used as it is
# and left queued, run after run; usage errors without a backlog or with
# latency samples.
for flags in "--keep-backlog" "--keep-backlog --backlog 10" \
  "--keep-backlog --latency-samples 0"; do
  # shellcheck disable=SC2086
  run "bench $flags" 64 sq bench $flags
  expect_error_line "bench $flags"
done
kept='{"queues":[{"queue":"kept","ready":300,"scheduled":0,"running":0,"dead":0,"paused":false}]}'
run "make a backlog" 0 sh -c "seq 300 | \"\$0\" --url \"\$1\" push --lines -p -1 kept" "$SQLQ" "$url"
run "keep a backlog" 0 sq bench --queue kept --jobs 200 --backlog 300 --keep-backlog \
  --latency-samples 0 --json
has "keep a backlog: claim_ms" '"claim_ms": '
has "keep a backlog: backlog_claimed" '"backlog_claimed": '
run "stats after keeping" 0 sq stats --json kept
expect_out "the backlog stays" "$kept"
run "keep it again" 0 sq bench --queue kept --jobs 200 --workers 3 --backlog 300 \
  --keep-backlog --latency-samples 0
run "stats after keeping again" 0 sq stats --json kept
expect_out "the backlog is used, not added to" "$kept"
run "purge kept" 0 sq purge kept

# The benchmark's queue is left empty.
run "stats" 0 sq stats --json bench
expect_out "the bench queue is empty" \
  '{"queues":[{"queue":"bench","ready":0,"scheduled":0,"running":0,"dead":0,"paused":false}]}'

finish
