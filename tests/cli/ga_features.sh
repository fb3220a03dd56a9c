# tests/cli/ga_features.sh -- what sqlq's features do on a Galera cluster
# (docs/scale.md, "MariaDB Galera").  GET_LOCK is not replicated, so the
# features whose exclusion is a GET_LOCK are refused on every node with one
# line and exit 69: named locks (`sqlq lock`, and `sqlq locks`, their
# listing) and subscriptions (a
# refused subscribe leaves no subscription row).  Rings, pools and
# wake-ups, whose exclusion is rows, work across the nodes: pushes into
# one ring from three nodes get distinct numbers, holds of one pool's items
# taken from three nodes at once never hand out an item twice, and a
# worker waiting on node 2 runs a job pushed on node 1 (woken by its
# bounded wait, the URL option wake_interval: a producer's KILL reaches
# only its own node's sessions).  Needs the fixture "galera"
# (tests/CMakeLists.txt).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ga_database.bash"

run "init on node 1" 0 sq init

# Named locks: refused on every node, one line naming Galera.
for n in 0 1 2; do
  run "lock on node $((n + 1))" 69 "$SQLQ" --url "${urls[$n]}" lock -w 1 guard -- true
  expect_error_line "lock on node $((n + 1))"
  expect_err_has "lock on node $((n + 1)) names Galera" "Galera cluster"
done
# Listing them too: a node's GET_LOCK locks are its own.
run "locks on node 3" 69 "$SQLQ" --url "${urls[2]}" locks
expect_error_line "locks on node 3"
expect_err_has "locks names Galera" "Galera cluster"

# Subscriptions: refused, and nothing is left of the attempt.
ga_sql 1 "CREATE TABLE things (id INT PRIMARY KEY, name VARCHAR(20)) ENGINE=InnoDB"
run "subscribe on node 2" 69 "$SQLQ" --url "${urls[1]}" subscribe things --on insert --tag t
expect_error_line "subscribe on node 2"
expect_err_has "subscribe names Galera" "Galera cluster"
run "subscriptions after the refusal" 0 sq subscriptions
expect_eq "no subscription row" "$(ga_sql 3 "SELECT COUNT(*) FROM sqlq_subscriptions")" 0
expect_eq "no trigger" "$(ga_sql 3 "SELECT COUNT(*) FROM information_schema.TRIGGERS
  WHERE TRIGGER_SCHEMA = DATABASE() AND EVENT_OBJECT_TABLE = 'things'")" 0

# A ring pushed into from three nodes at once: 90 entries, numbered 1 to 90.
run "ring create" 0 sq ring create log 1000
for n in 0 1 2; do
  (
    for k in $(seq 1 30); do
      "$SQLQ" --url "${urls[$n]}" ring push log "n$n-$k" >>"$tmp/ring$n" ||
        echo "node $n push $k: exit $?" >>"$tmp/ring_errors"
    done
  ) &
  bg_pids+=($!)
done
wait "${bg_pids[@]}"
bg_pids=()
expect_eq "no push failed" "$(cat "$tmp/ring_errors" 2>/dev/null)" ""
expect_eq "the pushes' numbers are 1 to 90" "$(sort -n "$tmp"/ring? | tr '\n' ' ')" \
  "$(seq 1 90 | tr '\n' ' ')"
# A read on another node sees the last commits once they are applied there
# (wsrep_sync_wait is 0): wait for them, bounded.
tries=100
until [ "$(ga_sql 3 "SELECT COUNT(*) FROM sqlq_ring_entries")" = 90 ] || [ "$tries" -le 0 ]; do
  sleep 0.1
  tries=$((tries - 1))
done
run "ring read on node 3" 0 "$SQLQ" --url "${urls[2]}" ring read log
expect_eq "node 3 reads 90 distinct entries" "$(sort -u "$tmp/out" | wc -l)" 90

# Holds of a pool's three items, six takers on three nodes at once: three
# get distinct items, the others find every item held (exit 75).  (Before
# the driver checked that its transaction was still open, one round in 25
# gave one item twice.)
run "pool add" 0 sq pool add workers a b c
for k in 0 1 2 3 4 5; do
  (
    "$SQLQ" --url "${urls[$((k % 3))]}" pool next --hold 120 workers >"$tmp/hold$k" 2>"$tmp/hold$k.err"
    echo $? >"$tmp/hold$k.code"
  ) &
  bg_pids+=($!)
done
wait "${bg_pids[@]}"
bg_pids=()
expect_eq "three holds, three refusals" "$(cat "$tmp"/hold?.code | sort | tr '\n' ' ')" "0 0 0 75 75 75 "
expect_eq "the holds are of distinct items" "$(cut -f1 "$tmp"/hold? | sort | tr '\n' ' ')" "a b c "

# A worker waiting on node 2 runs a job pushed on node 1.
"$SQLQ" --url "${urls[1]}?wake_interval=0.5" work wq -- sh -c 'cat >"$0"' "$tmp/woken" \
  2>"$tmp/waiter.err" &
bg_pids+=($!)
sleep 1
run "push on node 1" 0 sq push wq hello
if wait_for_file "$tmp/woken" 30; then
  expect_eq "the job ran on node 2's worker" "$(cat "$tmp/woken")" hello
else
  fail "the worker on node 2 did not run the job pushed on node 1 within 30 s"
fi

# The fixture's own garbage: usage errors exit 2 with one line.
for args in "" "start" "start 0" "start 65530" "sql $SQLQ_TEST_GA_PORT 4 SELECT" "frob 1"; do
  # shellcheck disable=SC2086
  run "galera.sh $args" 2 $SQLQ_TEST_GA_SERVER $args
  expect_eq "galera.sh $args: one line" "$(wc -l <"$tmp/err")" 1
done
finish
