# tests/cli/ga_drain.sh -- workers on the three nodes of a Galera cluster
# drain one queue that producers on the three nodes fill meanwhile: every
# job runs once, none is lost.  Two nodes' claims can pick the same job
# (SKIP LOCKED sees only its own node's row locks); one of them then loses
# its certification at COMMIT (error 1213), and the library claims again.
# The same for acks, and for the producers' takes of the id counter row
# sqlq_job_ids.  The conflicts are counted and printed (no figure is
# asserted: the machine's load decides them).  Needs the fixture "galera"
# (tests/CMakeLists.txt).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ga_database.bash"

producers_batches=12
batch=25
per_node=$((producers_batches * batch))
total=$((3 * per_node))

run "init on node 1" 0 sq init
conflicts_before=$(ga_conflicts)

# Producers: on each node, batches of $batch jobs, each payload unique
# (pN-bB-K); workers: 4 commands at once on each node, each appending
# "id payload" to the log (one write(2) of a short line with O_APPEND).
# A batch whose every attempt lost its certification exits 75 having
# enqueued nothing (its transaction rolled back): the producer sends it
# again, as an application would, up to 5 times.  (Seen once in 3 runs
# before this: 1 batch of 36.)  A batch enqueued twice would show as a
# payload run twice.
for n in 0 1 2; do
  (
    for b in $(seq 1 "$producers_batches"); do
      for try in 1 2 3 4 5 6; do
        seq 1 "$batch" | sed "s/^/p$n-b$b-/" | "$SQLQ" --url "${urls[$n]}" push --lines q >/dev/null \
          2>>"$tmp/producer$n.err"
        code=$?
        [ "$code" = 75 ] && [ "$try" -lt 6 ] || break
        echo "producer $n batch $b: busy, sent again" >>"$tmp/producer_retries"
      done
      [ "$code" = 0 ] || echo "producer $n batch $b: exit $code" >>"$tmp/producer_errors"
    done
  ) &
  bg_pids+=($!)
done
started=$(date +%s%N)
# A worker that finds the queue empty exits: they start once node 1 holds a
# job (and an early exit between two batches is made up for below).
tries=300
until [ "$(ga_sql 1 "SELECT COUNT(*) > 0 FROM sqlq_jobs")" = 1 ] || [ "$tries" -le 0 ]; do
  sleep 0.1
  tries=$((tries - 1))
done
for n in 0 1 2; do
  "$SQLQ" --url "${urls[$n]}" work --drain --lease 20 -c 4 q -- \
    sh -c 'p=$(cat); echo "$SQLQ_JOB_ID $p" >>"$0"' "$tmp/log" 2>"$tmp/worker$n.err" &
  bg_pids+=($!)
  worker_pids[n]=$!
done
wait "${bg_pids[@]:0:3}"
# Producers done: whatever the workers exited with, one more drain per node
# takes what an early exit (an empty queue between two batches) left.
for n in 0 1 2; do
  wait "${worker_pids[$n]}"
  code=$?
  expect_eq "worker on node $((n + 1)) exits 0" "$code" 0
  [ "$code" -eq 0 ] || echo "worker on node $((n + 1)) said: $(tail -n 3 "$tmp/worker$n.err" | tr '\n' '|')"
done
for n in 0 1 2; do
  "$SQLQ" --url "${urls[$n]}" work --drain --lease 20 -c 4 q -- \
    sh -c 'p=$(cat); echo "$SQLQ_JOB_ID $p" >>"$0"' "$tmp/log" 2>>"$tmp/worker$n.err" &
  worker_pids[n]=$!
done
for n in 0 1 2; do
  wait "${worker_pids[$n]}"
  expect_eq "second drain on node $((n + 1)) exits 0" "$?" 0
done
elapsed_ms=$((($(date +%s%N) - started) / 1000000))

expect_eq "no producer failed" "$(cat "$tmp/producer_errors" 2>/dev/null)" ""
expect_eq "every job ran" "$(cut -d' ' -f2 "$tmp/log" | sort -u | wc -l)" "$total"
expect_eq "no job ran twice" "$(wc -l <"$tmp/log")" "$total"
expect_eq "no id ran twice" "$(cut -d' ' -f1 "$tmp/log" | sort | uniq -d | head -3)" ""
for n in 1 2 3; do
  expect_eq "node $n holds no job" "$(ga_sql "$n" "SELECT COUNT(*) FROM sqlq_jobs")" 0
done
# A worker reports each job whose ack it gave up: there must be none.
expect_eq "no ack given up" "$(grep -h ': ack' "$tmp"/worker*.err | head -3)" ""

conflicts=$(($(ga_conflicts) - conflicts_before))
echo "ga_drain: $total jobs from 3 nodes drained by 3 nodes in $elapsed_ms ms;" \
  "$conflicts certification conflicts (cert failures + BF aborts), retried;" \
  "$(cat "$tmp/producer_retries" 2>/dev/null | wc -l) batches sent again after exit 75"
finish
