# tests/crash/worker_kill_many.bash -- kill -9 a busy worker of four slots,
# then drain the queue with a second worker and count: no job is lost, and
# a job ran twice only when its lease expired (its second run is attempt 2
# or later).
#
# The body of worker_kill_many.sh (SQLite) and fb_worker_kill_many.sh (Firebird),
# sourced after lib.sh with $url a database without the schema yet.

jobs=40
# Each command appends "PAYLOAD ATTEMPT" to started, works a little, and
# appends PAYLOAD to done.
job_cmd='n=$(cat); echo "$n $SQLQ_ATTEMPT" >> "$0/started"; sleep 0.2; echo "$n" >> "$0/done"'

sq init >/dev/null || die "init"
seq "$jobs" | sq push --lines q >/dev/null || die "push"

"$SQLQ" --url "$url" work -c 4 --lease 1 q -- sh -c "$job_cmd" "$tmp" \
  >"$tmp/worker1.log" 2>&1 &
worker=$!
bg_pids+=("$worker")
tries=100
while [ "$(cat "$tmp/done" 2>/dev/null | wc -l)" -lt 8 ] && [ "$tries" -gt 0 ]; do
  sleep 0.1
  tries=$((tries - 1))
done
[ "$tries" -gt 0 ] || die "the first worker finished no jobs"
{ kill -9 "$worker"; wait "$worker"; } 2>/dev/null
before=$(wc -l < "$tmp/done")

timeout 120 "$SQLQ" --url "$url" work -c 4 --lease 5 --drain q -- sh -c "$job_cmd" "$tmp" \
  >"$tmp/worker2.log" 2>&1 || die "the second worker failed: $(cat "$tmp/worker2.log")"
expect_counts q 0 0 0 0

missing=$(seq "$jobs" | sort | comm -23 - <(sort -u "$tmp/done"))
[ -z "$missing" ] || die "jobs lost: $(echo $missing)"
pass "all $jobs jobs ran ($before before the kill)"

for n in $(sort "$tmp/done" | uniq -d); do
  grep -Eq "^$n ([2-9]|[1-9][0-9]+)\$" "$tmp/started" ||
    die "job $n ran twice without a second attempt"
done
pass "$(( $(wc -l < "$tmp/done") - jobs )) duplicate run(s), each a retry after an expired lease"
