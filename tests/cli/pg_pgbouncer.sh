# tests/cli/pg_pgbouncer.sh -- the queue through PgBouncer in transaction
# mode (pgbouncer.bash): the pooler is detected (pooler=auto), several
# workers drain a queue with no job lost or run twice, wake-ups arrive
# through the direct listening session (listen_port) and by polling
# without it, nothing the driver sets stays on the shared server sessions,
# and garbage in the new URL options is refused.  Needs SQLQ_TEST_PG_URL
# (the postgres fixture), psql and pgbouncer.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg_database.bash"
. "$(dirname "$0")/pgbouncer.bash"

direct_url=$url
url=$pooled_url
run "init through pgbouncer" 0 sq init
expect_out "reaches the latest version" "schema version 15"

# Detection: a lock through the pooler is a lease (a row of sqlq_leases),
# one taken directly is a session advisory lock (no row).
run "a lock through pgbouncer" 0 env SQLQ_LOCK_FENCE=stale "$SQLQ" --url "$url" lock -n detect -- \
  sh -c 'echo "$SQLQ_LOCK_FENCE"'
expect_out "gives its command the fence (not the inherited one)" 1
expect_eq "is a lease" "$(pg_sql "SELECT count(*) FROM sqlq_leases")" 1
run "a lock with pooler=none" 0 "$SQLQ" --url "$direct_url?pooler=none" lock -n detect-direct -- true
run "a lock on the server itself" 0 "$SQLQ" --url "$direct_url" lock -n detect-direct -- \
  sh -c 'echo "${SQLQ_LOCK_FENCE-none}"'
expect_out "has no fence" none
expect_eq "are session locks" "$(pg_sql "SELECT count(*) FROM sqlq_leases")" 1
run "pooler=transaction on the server itself" 0 "$SQLQ" --url "$direct_url?pooler=transaction" \
  lock -n forced -- true
expect_eq "is a lease too" "$(pg_sql "SELECT count(*) FROM sqlq_leases")" 2
expect_eq "released leases are free" "$(pg_sql "SELECT count(*) FROM sqlq_leases WHERE holder <> 0")" 0

# Several workers drain one queue through the pooler: each job runs once.
n=400
run "push $n jobs" 0 sq push --lines drain < <(seq 1 "$n")
pids=()
for i in 1 2 3 4; do
  "$SQLQ" --url "$url" work --drain -c 2 drain -- sh -c 'echo "$SQLQ_JOB_ID" >>"$0/ran"' "$tmp" \
    2>"$tmp/worker-$i.err" &
  pids+=($!)
  bg_pids+=($!)
done
for i in 1 2 3 4; do
  wait "${pids[$((i - 1))]}"
  expect_eq "worker $i exits 0 ($(head -c 200 "$tmp/worker-$i.err" | tr '\n' '|'))" $? 0
done
expect_eq "every job ran" "$(sort -u "$tmp/ran" | wc -l)" "$n"
expect_eq "none ran twice" "$(wc -l <"$tmp/ran")" "$n"
run "the queue is empty" 0 sq stats --json drain
expect_out "nothing left, nothing dead" \
  '{"queues":[{"queue":"drain","ready":0,"scheduled":0,"running":0,"dead":0,"paused":false}]}'

# Nothing the driver sets stays on a shared server session (the direct
# driver turns enable_seqscan off for its own sessions).
expect_eq "no setting left on the pool's sessions" \
  "$(for _ in 1 2 3 4 5 6; do pgb_sql "SHOW enable_seqscan"; done | sort -u)" on

# Wake-ups through the listening session on the server itself: with a
# poll interval of an hour, only a notification can start the job.
wake_url="$url?listen_port=$pg_port&poll_interval=3600"
"$SQLQ" --url "$wake_url" work wake -- sh -c 'cat >"$0/woken"' "$tmp" 2>"$tmp/wake.err" &
worker=$!
bg_pids+=("$worker")
for _ in $(seq 100); do
  [ "$(pg_sql "SELECT count(*) FROM pg_stat_activity WHERE datname = '$pg_database'
               AND query LIKE 'LISTEN %'")" -ge 1 ] && break
  sleep 0.1
done
run "push while it waits" 0 sq push wake "woken up"
checks=$((checks + 1))
wait_for_file "$tmp/woken" 20 || fail "the waiting worker was not woken (stderr: $(cat "$tmp/wake.err"))"
expect_eq "it ran the job" "$(cat "$tmp/woken" 2>/dev/null)" "woken up"
stop_worker "$worker"

# expect_polled QUEUE OPTIONS WHAT: a worker on $url?OPTIONS, waiting on
# QUEUE (an empty queue) with a poll interval of 0.2 s, runs a job pushed
# meanwhile; WHAT says how it waits.
expect_polled() {
  "$SQLQ" --url "$url?$2&poll_interval=0.2" work "$1" -- sh -c 'cat >"$0/$1"' "$tmp" "$1" \
    2>"$tmp/$1.err" &
  worker=$!
  bg_pids+=("$worker")
  sleep 0.5
  run "push while a worker $3" 0 sq push "$1" "$1"
  checks=$((checks + 1))
  wait_for_file "$tmp/$1" 20 || fail "a worker $3 did not run the job (stderr: $(cat "$tmp/$1.err"))"
  stop_worker "$worker"
}
expect_polled poll notify=on "polls without a listening session"
expect_polled nolisten listen_port=1 "polls when its listening session is refused"

# Garbage in the new URL options: one line, exit 64.
for bad in pooler=bogus pooler= "pooler=TRANSACTION" listen_port=0 listen_port=65536 \
  listen_port=abc listen_port=-1 listen_port= listen_host= "listen_host=a%20b" "listen_host=a%01b" \
  lock_lease=0.1 lock_lease=abc lock_lease= lock_lease=-1 lock_lease=nan lock_lease=1e9; do
  run "URL option $bad" 64 "$SQLQ" --url "$url?$bad" stats
  expect_error_line "URL option $bad: one line"
done
run "lock flags that do not fit the lease" 64 "$SQLQ" --url "$url?lock_lease=2" lock \
  --check-interval 1 --check-timeout 1 L -- true
expect_error_line "lock flags that do not fit the lease: one line"
expect_err_has "it names the lease" "lease of 2 s"
run "flags that fit a session lock" 0 "$SQLQ" --url "$direct_url?lock_lease=2" lock \
  --check-interval 1 --check-timeout 1 L -- true

finish
