# tests/cli/lanes.bash -- what pg_lanes.sh and my_lanes.sh share: sourced
# after lib.sh and the database's file by a test that has set $url and
# lanes_sql (its SQL client).  Defines sq (the CLI on the database), makes
# the schema, and starts a worker of the queue $q, with lanes=on, that
# appends each job's payload and a newline to $tmp/done, two at a time (a
# payload "failonce" fails its first attempt, "g1" takes 1.5 s); counts
# the jobs run in $n.

q=lanes
sq() { "$SQLQ" --url "$url" "$@"; }

run "init" 0 sq init
"$SQLQ" --url "$url?lanes=on" work -c 2 "$q" -- sh -c '
  p=$(cat)
  if [ "$p" = failonce ] && [ ! -e "$0.failed" ]; then : >"$0.failed"; exit 3; fi
  if [ "$p" = g1 ]; then sleep 1.5; fi
  printf "%s\n" "$p" >>"$0"' "$tmp/done" >"$tmp/worker.log" 2>&1 &
worker=$!
bg_pids+=("$worker")

n=0
done_count() { cat "$tmp/done" 2>/dev/null | wc -l; }
# push_some N: N jobs through the worker, so that its cursor moves on.
push_some() {
  for i in $(seq "$1"); do
    sq push "$q" "filler" >/dev/null || fail "push filler"
    n=$((n + 1))
  done
  wait_for_lines "$tmp/done" "$n"
  [ "$(done_count)" -ge "$n" ] || fail "the worker ran $(done_count) of $n jobs"
}
# expect_ran NAME PAYLOAD: one more job, PAYLOAD, ran.
expect_ran() {
  n=$((n + 1))
  wait_for_lines "$tmp/done" "$n"
  expect_eq "$1" "$(grep -c "^$2\$" "$tmp/done")" 1
}
# lanes_recorded NAME PRIORITY: sqlq_lanes has the lane ($q, PRIORITY).
lanes_recorded() {
  expect_eq "$1" "$(lanes_sql "SELECT count(*) FROM sqlq_lanes
    WHERE queue = '$q' AND priority = $2")" 1
}

# A FIFO group: the second job waits until the first is done, while the
# worker's other slot claims other jobs (whose claims must not move the
# lane's floor past the held-back job).  Then a delayed job moved to a
# new priority and made due by plain SQL (which sends no wake-up: the
# next job does).
lanes_group_and_move() {
  run "group head" 0 sq push --group g "$q" "g1"
  run "group next" 0 sq push --group g "$q" "g2"
  sleep 0.3
  push_some 3
  n=$((n + 2))
  wait_for_lines "$tmp/done" "$n"
  expect_eq "the group's jobs ran in order" "$(grep '^g' "$tmp/done" | tr '\n' ,)" "g1,g2,"

  run "a delayed job" 0 sq push --delay 3600 "$q" "moved"
  run "moved and made due" 0 lanes_sql "UPDATE sqlq_jobs SET priority = -3, run_at = 0
    WHERE queue = '$q' AND state = 'ready'"
  push_some 1
  expect_ran "the moved job ran" moved
  lanes_recorded "its new lane is recorded" -3
}

# A lease that ends while a worker whose claims go by lanes waits: another
# worker took the job with a lease of a second and was killed.
lanes_lost_lease() {
  run "a job to lose" 0 sq push "$q-lease" "lost"
  "$SQLQ" --url "$url" work --lease 1 "$q-lease" -- sleep 30 >/dev/null 2>&1 &
  local loser=$! tries=0
  bg_pids+=("$loser")
  until [ "$(lanes_sql "SELECT count(*) FROM sqlq_jobs
      WHERE queue = '$q-lease' AND state = 'running'")" = 1 ]; do
    tries=$((tries + 1))
    [ "$tries" -lt 100 ] || { fail "the first worker never took the job"; break; }
    sleep 0.1
  done
  "$SQLQ" --url "$url?lanes=on" work "$q-lease" -- sh -c 'cat >> "$0"; echo >> "$0"' "$tmp/lease" \
    >/dev/null 2>&1 &
  bg_pids+=("$!")
  sleep 0.5
  kill -9 "$loser"
  wait_for_lines "$tmp/lease" 1
  expect_eq "the waiting worker took the job whose lease ended" "$(cat "$tmp/lease" 2>/dev/null)" "lost"
}

# A queue with more lanes than a cursor keeps one by one (64) is still
# claimed highest first.
lanes_many() {
  for p in $(seq 70); do sq push --priority "$p" "$q-many" "$p" >/dev/null || fail "push $p"; done
  run "drain the queue of many lanes" 0 timeout 30 "$SQLQ" --url "$url?lanes=on" work --drain "$q-many" -- \
    sh -c 'cat >> "$0"; echo >> "$0"' "$tmp/many"
  expect_eq "its jobs ran highest first" "$(tr '\n' , < "$tmp/many")" "$(seq 70 -1 1 | tr '\n' ,)"
}

# The end: the lease and many-lanes scenarios, the queue empty, the worker
# stopped.
lanes_finish() {
  lanes_lost_lease
  lanes_many
  run "stats" 0 sq stats --json "$q"
  expect_out_has "the queue is empty" '"ready":0,"scheduled":0,"running":0,"dead":0'
  kill "$worker" 2>/dev/null
  wait "$worker" 2>/dev/null
  finish
}
