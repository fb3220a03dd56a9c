# tests/cli/limit.sh -- sqlq limit: the concurrency, rate and per-group
# limits and the fairness of a queue read back, in a table and in JSON; bad
# values (of sqlq limit and of sqlq bench --limit, --rate and --tenants) get
# one line and exit 64 and change nothing; and two `sqlq work -c 4` processes on a queue limited to
# 2 never run more than 2 commands at once (the commands count themselves
# under flock) and drain the queue.
. "$(dirname "$0")/lib.sh"

sq init >/dev/null

run "no limit yet" 0 sq limit q
expect_out "no limit yet" "$(printf 'queue  concurrency  rate  per_group  fair\nq      -            -     1          no')"
run "no limit yet, json" 0 sq limit --json q
expect_out "no limit yet, json" '{"queue":"q","concurrency":null,"rate":null,"per_group":1,"fair":false}'
run "set" 0 sq limit --concurrency 2 q
expect_out "set" "$(printf 'queue  concurrency  rate  per_group  fair\nq      2            -     1          no')"
run "reads back" 0 sq limit -j q
expect_out "reads back" '{"queue":"q","concurrency":2,"rate":null,"per_group":1,"fair":false}'
run "a rate" 0 sq limit --rate 100/1s r
expect_out "a rate" "$(printf 'queue  concurrency  rate    per_group  fair\nr      -            100/1s  1          no')"
run "a rate, json" 0 sq limit -j --rate 10/m r
expect_out "a rate, json" '{"queue":"r","concurrency":null,"rate":{"max_starts":10,"period_us":60000000},"per_group":1,"fair":false}'
run "a bare unit, a fraction" 0 sq limit -j -r 5/s r
expect_out "a bare unit" '{"queue":"r","concurrency":null,"rate":{"max_starts":5,"period_us":1000000},"per_group":1,"fair":false}'
run "a fraction of a second" 0 sq limit -r 3/0.25s r
expect_out "a fraction of a second" "$(printf 'queue  concurrency  rate     per_group  fair\nr      -            3/0.25s  1          no')"
run "both at once" 0 sq limit -j -c 4 -r 3/2h r
expect_out "both at once" '{"queue":"r","concurrency":4,"rate":{"max_starts":3,"period_us":7200000000},"per_group":1,"fair":false}'
run "the longest period" 0 sq limit -j -r 100000/366d r
expect_out "the longest period" '{"queue":"r","concurrency":4,"rate":{"max_starts":100000,"period_us":31622400000000},"per_group":1,"fair":false}'
run "no rate" 0 sq limit -j -r 0 r
expect_out "no rate" '{"queue":"r","concurrency":4,"rate":null,"per_group":1,"fair":false}'
sq limit -r 3/2h r >/dev/null
run "per group" 0 sq limit --per-group 3 --json q
expect_out "per group" '{"queue":"q","concurrency":2,"rate":null,"per_group":3,"fair":false}'
run "fair" 0 sq limit --fair -g 5 -c 2 q
expect_out "fair" "$(printf 'queue  concurrency  rate  per_group  fair\nq      2            -     5          yes')"
run "not fair" 0 sq limit --no-fair --json q
expect_out "not fair" '{"queue":"q","concurrency":2,"rate":null,"per_group":5,"fair":false}'
run "fair, short" 0 sq limit -f -j q
expect_out "fair, short" '{"queue":"q","concurrency":2,"rate":null,"per_group":5,"fair":true}'
run "every limit at once" 0 sq limit -j -c 3 -r 10/1s -g 2 --fair s
expect_out "every limit at once" '{"queue":"s","concurrency":3,"rate":{"max_starts":10,"period_us":1000000},"per_group":2,"fair":true}'

stored() { sq limit --json q; }
baseline=$(stored)
refused "negative" 64 sq limit -c -1 q
refused "not a number" 64 sq limit -c two q
refused "fraction" 64 sq limit -c 1.5 q
refused "empty" 64 sq limit -c '' q
refused "overflow" 64 sq limit -c 99999999999999999999 q
refused "past the most" 64 sq limit -c 1000001 q
refused "per group: zero" 64 sq limit --per-group 0 q
refused "per group: negative" 64 sq limit --per-group -3 q
refused "per group: not a number" 64 sq limit -g many q
refused "per group: fraction" 64 sq limit -g 2.5 q
refused "per group: empty" 64 sq limit -g '' q
refused "per group: overflow" 64 sq limit -g 99999999999999999999 q
refused "per group: past the most" 64 sq limit -g 1000001 q
refused "fair and not" 64 sq limit --fair --no-fair q
refused "fair with a value" 64 sq limit --fair=yes q
refused "fair, short, with a value" 64 sq limit -F0 q
refused "no queue" 64 sq limit -c 1
refused "two queues" 64 sq limit q r
refused "bad queue name" 64 sq limit -c 1 ''
refused "unknown flag" 64 sq limit --burst 1 q
rate_stored() { sq limit --json r; }
rate_baseline=$(rate_stored)
for bad in 1 -1/1s 1/0 1/0s 1/-1s x/1s 1/ /1s 1/x 1/5y 1/2h3 1/0.0000001s 1/367d 1/1e400 1/nan 100001/1s \
  99999999999999999999/1s 1.5/1s '' 1/1s/1s 0x10/1s; do
  refused "rate '$bad'" 64 sq limit --rate "$bad" r
done
expect_eq "bad rates changed nothing" "$(rate_stored)" "$rate_baseline"
refused "bench: rate not N/PERIOD" 64 sq bench --rate 10
refused "bench: rate negative" 64 sq bench --rate -1/1s
refused "bench: rate of 0" 64 sq bench --rate 0/1s
refused "bench: negative limit" 64 sq bench --limit -1
refused "bench: limit not a number" 64 sq bench --limit many
refused "bench: limit overflow" 64 sq bench --limit 99999999999999999999
refused "bench: negative tenants" 64 sq bench --tenants -1
refused "bench: tenants not a number" 64 sq bench --tenants many
refused "bench: too many tenants" 64 sq bench --tenants 100001

# The race: 40 jobs, two workers of 4 commands each, a limit of 2.  Each
# command counts itself in and out of $tmp/running under flock and keeps
# the most it saw in $tmp/most.
for i in $(seq 40); do sq push q "$i" >/dev/null; done
echo 0 >"$tmp/running"
echo 0 >"$tmp/most"
handler='flock "$0/lock" sh -c '\''n=$(($(cat "$0/running") + 1)); echo $n >"$0/running";
  [ $n -gt $(cat "$0/most") ] && echo $n >"$0/most"; true'\'' "$0"
  sleep 0.02
  flock "$0/lock" sh -c '\''echo $(($(cat "$0/running") - 1)) >"$0/running"'\'' "$0"
  echo done >>"$0/done"'
for w in 1 2; do
  "$SQLQ" --url "$url" work -c 4 --drain q -- sh -c "$handler" "$tmp" 2>"$tmp/work$w.err" &
  bg_pids+=("$!")
done
wait_gone 120 "${bg_pids[@]}" || fail "the workers did not drain the queue"
for pid in "${bg_pids[@]}"; do wait "$pid" || fail "a worker failed: $(cat "$tmp"/work*.err)"; done
bg_pids=()
expect_eq "every job done" "$(wc -l <"$tmp/done")" 40
expect_eq "at most 2 commands at once" "$(cat "$tmp/most")" 2
run "drained" 0 sq stats --json q
expect_out_has "drained" '"ready":0,"scheduled":0,"running":0'

finish
