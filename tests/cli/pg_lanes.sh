# tests/cli/pg_lanes.sh -- a worker's claims scan each priority lane from
# the floors of its cursor (docs/postgres.md, "Claims under a long-held
# snapshot"), and still see every job that becomes ready below them:
# - a job whose INSERT ran before the worker's last claims but committed
#   after them (a producer's transaction that stayed open);
# - a job INSERTed by plain SQL with a run_at long past (a rewind);
# - a job at a priority no job of the queue had before (a new lane);
# - the next job of a FIFO group, held back while its head ran;
# - a job moved to another priority by a plain-SQL UPDATE.
# Each must run within seconds, long before the worker would drop its
# cursor and scan everything again (five minutes).  The worker stays up from
# the first job to the last, so that its cursor is in use throughout.
#
# Needs SQLQ_TEST_PG_URL (tests/CMakeLists.txt) and psql.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/pg_database.bash"

q=lanes
sq() { "$SQLQ" --url "$url" "$@"; }

run "init" 0 sq init
# Each command appends its payload and a newline.
"$SQLQ" --url "$url?lanes=on" work "$q" -- sh -c 'cat >> "$0"; echo >> "$0"' "$tmp/done" \
  >"$tmp/worker.log" 2>&1 &
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
psql -X -q -v ON_ERROR_STOP=1 "$url" >/dev/null 2>&1 <<SQL &
BEGIN;
INSERT INTO sqlq_jobs (queue, payload) VALUES ('$q', convert_to('late', 'UTF8'));
SELECT pg_sleep(2);
COMMIT;
SQL
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
run "an old run_at" 0 pg_sql "INSERT INTO sqlq_jobs (queue, payload, run_at)
  VALUES ('$q', convert_to('old', 'UTF8'), 5)"
n=$((n + 1))
wait_for_lines "$tmp/done" "$n"
expect_eq "the job with an old run_at ran" "$(grep -c '^old$' "$tmp/done")" 1

# A new lane.
run "a new priority" 0 pg_sql "INSERT INTO sqlq_jobs (queue, payload, priority)
  VALUES ('$q', convert_to('p7', 'UTF8'), 7)"
n=$((n + 1))
wait_for_lines "$tmp/done" "$n"
expect_eq "the job of a new lane ran" "$(grep -c '^p7$' "$tmp/done")" 1
expect_eq "its lane is recorded" "$(pg_sql "SELECT count(*) FROM sqlq_lanes
  WHERE queue = '$q' AND priority = 7")" 1

# A FIFO group: the second job waits until the first is done.
run "group head" 0 sq push --group g "$q" "g1"
run "group next" 0 sq push --group g "$q" "g2"
n=$((n + 2))
wait_for_lines "$tmp/done" "$n"
expect_eq "the group's jobs ran in order" "$(grep '^g' "$tmp/done" | tr '\n' ,)" "g1,g2,"

# A delayed job moved to a new priority and made due by plain SQL.
run "a delayed job" 0 sq push --delay 3600 "$q" "moved"
run "moved and made due" 0 pg_sql "UPDATE sqlq_jobs SET priority = -3, run_at = 0
  WHERE queue = '$q' AND state = 'ready'"
# The UPDATE sends no wake-up: the next job does.
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
until [ "$(pg_sql "SELECT count(*) FROM sqlq_jobs WHERE queue = '$q-lease' AND state = 'running'")" = 1 ]; do
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

# A queue with more lanes than a claim scans one by one (64) is claimed in
# one scan of all its priorities, still highest first.
for p in $(seq 70); do sq push --priority "$p" "$q-many" "$p" >/dev/null || fail "push $p"; done
run "drain the queue of many lanes" 0 timeout 30 "$SQLQ" --url "$url?lanes=on" work --drain "$q-many" -- \
  sh -c 'cat >> "$0"; echo >> "$0"' "$tmp/many"
expect_eq "its jobs ran highest first" "$(tr '\n' , < "$tmp/many")" "$(seq 70 -1 1 | tr '\n' ,)"

# The INSERT trigger (schema version 12) skips the lookup of a lane its
# session has seen when the statement names it in sqlq.lane, as the
# library's one-job enqueue does (LIBRARY_LANE_TX in postgres_sql.c), and
# clears that name: a plain-SQL INSERT later in the same transaction, at a
# new priority, still records its lane.  A lane recorded by a transaction
# that rolled back is not remembered by the session either.
lib_insert() { # QUEUE PRIORITY: a one-job INSERT that names its lane
  printf "INSERT INTO sqlq_jobs (queue, priority, payload) SELECT '%s', %s, 'lib' FROM
    (SELECT set_config('sqlq.library', 'on', true), set_config('sqlq.lane',
     chr(2) || '%s' || chr(1) || %s || chr(2), true)) AS library_tx;\n" "$1" "$2" "$1" "$2"
}
lane_of() { pg_sql "SELECT count(*) FROM sqlq_lanes WHERE queue = '$1' AND priority = $2"; }
run "named lane, then a plain INSERT at a new priority, in one transaction" 0 \
  psql -X -q -v ON_ERROR_STOP=1 "$url" -c "$(lib_insert "$q-tx" 1)" -c "BEGIN" \
  -c "$(lib_insert "$q-tx" 1)" \
  -c "INSERT INTO sqlq_jobs (queue, priority, payload) VALUES ('$q-tx', 2, 'plain')" -c "COMMIT"
expect_eq "the named lane is recorded" "$(lane_of "$q-tx" 1)" "1"
expect_eq "the plain INSERT's lane too" "$(lane_of "$q-tx" 2)" "1"
run "a named lane rolled back, then named again in the same session" 0 \
  psql -X -q -v ON_ERROR_STOP=1 "$url" -c "BEGIN" -c "$(lib_insert "$q-tx" 5)" -c "ROLLBACK" \
  -c "$(lib_insert "$q-tx" 5)"
expect_eq "the lane is recorded" "$(lane_of "$q-tx" 5)" "1"
sq purge "$q-tx" >/dev/null

run "stats" 0 sq stats --json "$q"
expect_out_has "the queue is empty" '"ready":0,"scheduled":0,"running":0,"dead":0'
kill "$worker" 2>/dev/null
wait "$worker" 2>/dev/null
finish
