# tests/cli/lanes.bash -- the body of the claim lanes tests, sourced by
# pg_lanes.sh (PostgreSQL), my_lanes.sh (MariaDB) and fb_lanes.sh
# (Firebird) after lib.sh and the backend's database file, with
#   $url          a database of its own
#   lanes_sql     a function that runs the SQL text $1 on it and prints the
#                 values of each row, trimmed
#   bytes         (optional) a function that prints the SQL expression of
#                 the payload text $1 (default: the text quoted)
#   late_insert   a function that INSERTs a job with payload 'late' into
#                 queue $1 in a transaction that stays open for two seconds
#                 before it commits
#   lane_of       a function that prints how sqlq_lanes writes priority $1
#   lanes_more    (optional) a function run after the shared scenarios,
#                 with the worker still up
# A worker's claims scan each priority lane from the floors of its cursor
# (docs/postgres.md and docs/firebird.md, "Claims under a long-held
# snapshot"), and still see every job that becomes ready below them:
# - a job whose INSERT ran before the worker's last claims but committed
#   after them (a producer's transaction that stayed open);
# - a job INSERTed by plain SQL with a run_at long past (a rewind);
# - a job at a priority no job of the queue had before (a new lane);
# - the next job of a FIFO group, held back while its head ran;
# - a delayed job moved to another lane and made due by a plain-SQL UPDATE;
# - a job whose lease ended after its worker was killed, taken by a worker
#   that waits by lanes;
# - the jobs of a queue with more lanes than a claim scans one by one.
# Each must run within seconds, long before anything else would make the
# worker scan everything again.  The worker stays up from the first job to
# the last, so that its cursor is in use throughout.

declare -F bytes >/dev/null || bytes() { echo "'$1'"; }
q=lanes
sq() { "$SQLQ" --url "$url" "$@"; }
case $url in
*\?*) lanes_url="$url&lanes=on" ;;
*) lanes_url="$url?lanes=on" ;;
esac

run "init" 0 sq init
# Each command appends its payload and a newline, in one write (two run at
# once: a claim takes up to two jobs); a job "failonce" fails its first
# attempt.
"$SQLQ" --url "$lanes_url" work -c 2 "$q" -- sh -c '
  x=$(cat)
  if [ "$x" = failonce ] && [ ! -e "$0.failed" ]; then : >"$0.failed"; exit 3; fi
  echo "$x" >> "$0"' "$tmp/done" >"$tmp/worker.log" 2>&1 &
worker=$!
bg_pids+=("$worker")

done_count() { cat "$tmp/done" 2>/dev/null | wc -l; }
# push_some N: N jobs through the worker, so that its cursor moves on.
n=0
push_some() {
  for i in $(seq "$1"); do
    sq push "$q" "filler" >/dev/null || fail "push filler"
    n=$((n + 1))
  done
  wait_for_lines "$tmp/done" "$n"
  [ "$(done_count)" -ge "$n" ] || fail "the worker ran $(done_count) of $n jobs"
}

push_some 3

# A producer's transaction inserts, stays open while the worker claims
# other jobs for two seconds, then commits.
late_insert "$q" >/dev/null 2>&1 &
producer=$!
for i in 1 2 3 4; do
  push_some 2
  sleep 0.5
done
wait "$producer" || fail "the producer's transaction failed"
n=$((n + 1))
wait_for_lines "$tmp/done" "$n"
expect_eq "the late commit ran" "$(grep -c '^late$' "$tmp/done")" 1

# A plain-SQL INSERT with a run_at long past.
run "an old run_at" 0 lanes_sql "INSERT INTO sqlq_jobs (queue, payload, run_at)
  VALUES ('$q', $(bytes old), 5)"
n=$((n + 1))
wait_for_lines "$tmp/done" "$n"
expect_eq "the job with an old run_at ran" "$(grep -c '^old$' "$tmp/done")" 1

# A new lane.
run "a new priority" 0 lanes_sql "INSERT INTO sqlq_jobs (queue, payload, priority)
  VALUES ('$q', $(bytes p7), 7)"
n=$((n + 1))
wait_for_lines "$tmp/done" "$n"
expect_eq "the job of a new lane ran" "$(grep -c '^p7$' "$tmp/done")" 1
expect_eq "its lane is recorded" "$(lanes_sql "SELECT count(*) FROM sqlq_lanes
  WHERE queue = '$q' AND $(lane_of 7)")" 1

# A FIFO group: the second job waits until the first is done.  The two
# are inserted while the queue is paused, so that the claim after the
# resume (of two jobs: the worker runs two at once) sees both, takes the
# first and keeps its lane's floor at the second, whose run_at is then
# older than the claim's clock less the margin.
run "pause" 0 sq pause "$q"
run "a group of two" 0 lanes_sql "INSERT INTO sqlq_jobs (queue, payload, group_key)
  VALUES ('$q', $(bytes g1), 'g'); INSERT INTO sqlq_jobs (queue, payload, group_key)
  VALUES ('$q', $(bytes g2), 'g')"
sleep 0.5
run "resume" 0 sq resume "$q"
n=$((n + 2))
wait_for_lines "$tmp/done" "$n"
expect_eq "the group's jobs ran in order" "$(grep '^g' "$tmp/done" | tr '\n' ,)" "g1,g2,"

# A delayed job moved to the lane of priority 7, whose floor has moved on,
# and made due by plain SQL.
run "a delayed job" 0 sq push --delay 3600 "$q" "moved"
run "moved and made due" 0 lanes_sql "UPDATE sqlq_jobs SET priority = 7, run_at = 0
  WHERE queue = '$q' AND state = 'ready'"
# The UPDATE sends no wake-up on every backend: the next job does.
push_some 1
n=$((n + 1))
wait_for_lines "$tmp/done" "$n"
expect_eq "the moved job ran" "$(grep -c '^moved$' "$tmp/done")" 1

# A lease that ends while a worker whose claims go by lanes waits: another
# worker took the job with a lease of a second and was killed.
run "a job to lose" 0 sq push "$q-lease" "lost"
"$SQLQ" --url "$url" work --lease 1 "$q-lease" -- sleep 30 >/dev/null 2>&1 &
loser=$!
bg_pids+=("$loser")
tries=0
until [ "$(lanes_sql "SELECT count(*) FROM sqlq_jobs WHERE queue = '$q-lease' AND state = 'running'")" = 1 ]; do
  tries=$((tries + 1))
  [ "$tries" -lt 100 ] || { fail "the first worker never took the job"; break; }
  sleep 0.1
done
"$SQLQ" --url "$lanes_url" work "$q-lease" -- sh -c 'cat >> "$0"; echo >> "$0"' "$tmp/lease" \
  >/dev/null 2>&1 &
bg_pids+=("$!")
sleep 0.5
kill -9 "$loser"
wait_for_lines "$tmp/lease" 1
expect_eq "the waiting worker took the job whose lease ended" "$(cat "$tmp/lease" 2>/dev/null)" "lost"

# A queue with more lanes than a claim scans one by one (64) is claimed in
# one scan of all its priorities, still highest first.
for p in $(seq 70); do sq push --priority "$p" "$q-many" "$p" >/dev/null || fail "push $p"; done
run "drain the queue of many lanes" 0 timeout 30 "$SQLQ" --url "$lanes_url" work --drain "$q-many" -- \
  sh -c 'cat >> "$0"; echo >> "$0"' "$tmp/many"
expect_eq "its jobs ran highest first" "$(tr '\n' , < "$tmp/many")" "$(seq 70 -1 1 | tr '\n' ,)"

# The backend's own scenarios, with the worker still up (lanes_more, when
# the test defines it).
if declare -F lanes_more >/dev/null; then lanes_more; fi

run "stats" 0 sq stats --json "$q"
expect_out_has "the queue is empty" '"ready":0,"scheduled":0,"running":0,"dead":0'
kill "$worker" 2>/dev/null
wait "$worker" 2>/dev/null
finish
