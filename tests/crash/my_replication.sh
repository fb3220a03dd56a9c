# tests/crash/my_replication.sh -- statement-based replication stays in
# step with sqlq's writes.
#
# Starts a MariaDB primary and a replica with binlog_format=STATEMENT on two
# loopback ports (tests/servers/mariadb.sh start-replica).  On the primary,
# 1,200 jobs of three priorities and one FIFO group (so, many equal
# priorities) are claimed concurrently by two `sqlq work -c 4` workers while
# `sqlq bench`'s four threads claim 2,000 more; one job in seven fails its
# first attempt and is retried, one in thirteen fails until it is dead;
# acked jobs are kept in the history table, which a retention of 100
# then prunes in batches.  Meanwhile three plain SQL
# clients insert, update and delete rows of an application table with an
# AUTO_INCREMENT key, to which two tags subscribe (one with row images):
# their events are drained by workers after them.  Then four processes push into
# a ring of 50 (one push per call, and `sqlq bench --ring`'s four threads)
# and three take from a pool of four items, some with holds they release
# (and `sqlq bench --pool`'s four threads).  Once the replica has applied
# the whole binary log, every sqlq table (rings and pools too) checksums the
# same on both servers, the replica reports no SQL error, and the primary
# logged no statement as unsafe for statement-based replication.  A server
# that does not start fails the test.
#
# Needs SQLQ_TEST_MY_SERVER and SQLQ_TEST_MY_REPLICATION_PORT (the
# primary's port; the replica takes the next), set by tests/CMakeLists.txt.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ -n "${SQLQ_TEST_MY_REPLICATION_PORT:-}" ] || die "SQLQ_TEST_MY_REPLICATION_PORT is not set"
server=($SQLQ_TEST_MY_SERVER)
primary=$SQLQ_TEST_MY_REPLICATION_PORT
replica=$((primary + 1))
url="mysql://sqlq@127.0.0.1:$primary/sqlq?history=1"
q="replicated"
tables="sqlq_schema sqlq_queues sqlq_jobs sqlq_jobs_history sqlq_rings sqlq_ring_entries sqlq_pool_items
  sqlq_subscriptions sqlq_job_ids sqlq_lanes sqlq_lane_moves languages"

stop_servers() {
  "${server[@]}" stop "$replica" >/dev/null 2>&1
  "${server[@]}" stop "$primary" >/dev/null 2>&1
}
trap 'cleanup; stop_servers' EXIT

"${server[@]}" start-replica "$primary" "$replica" || die "the primary and replica did not start"
pass "started a primary on $primary and a replica on $replica"

sql() {
  "${server[@]}" sql "$1" "$2"
}

sq init >/dev/null || die "init"
sql "$primary" "CREATE TABLE sqlq.languages (language_id INT AUTO_INCREMENT PRIMARY KEY,
  name VARCHAR(20), year_released INT, logo VARBINARY(8))" || die "create languages"
sq subscribe languages --on insert,update,delete --tag send_email --rows >/dev/null &&
  sq subscribe languages --on insert,delete --tag ring_bell >/dev/null || die "subscribe"
for prio in 0 1 2; do
  seq $((prio * 300 + 1)) $((prio * 300 + 300)) | sq push --lines -p "$prio" "$q" >/dev/null ||
    die "push of priority $prio"
done
seq 1 300 | sq push --lines -g g1 "$q" >/dev/null || die "push of a group"
pass "pushed 1,200 jobs"

# Fail 1 job in 7 on its first attempt, and 1 in 13 for ever (dead after 3).
cmd='read -r n; [ "$((n % 13))" -ne 0 ] || exit 1; [ "$((n % 7))" -ne 0 ] || [ "$SQLQ_ATTEMPT" -gt 1 ] || exit 1'
# Each side gets 800 s: a hang fails the test with the logs, within
# ctest's 1,200 s (the drain took over 400 s under AddressSanitizer at
# load 20 in CI).
for w in 1 2; do
  timeout 800 "$SQLQ" --url "$url" work -c 4 --backoff 0 --drain "$q" -- sh -c "$cmd" \
    >"$tmp/worker.$w.log" 2>&1 &
  workers+=("$!")
  bg_pids+=("$!")
done
# The application's writers: 3 x 60 transactions of an insert, an update
# and a delete (which may match no row), as root, whom the triggers serve
# with their definer's rights.  Writers of a subscribed table take turns at
# the job counter (docs/mysql.md, "Job ids"), after their own row locks:
# InnoDB may roll one back as a deadlock's victim (error 1213), and it runs
# again, as an application would.
writers=()
for c in 1 2 3; do
  (for i in $(seq 60); do
    for try in $(seq 20) fail; do
      [ "$try" != fail ] || exit 1
      sql "$primary" "START TRANSACTION;
        INSERT INTO sqlq.languages (name, year_released, logo) VALUES ('w$c', $i, X'00ff$c$c');
        UPDATE sqlq.languages SET year_released = year_released + 1 WHERE language_id = $((i * 3 - c));
        DELETE FROM sqlq.languages WHERE language_id = $((i * 5 - c * 7)); COMMIT" \
        >/dev/null 2>>"$tmp/writers.err" && break
      grep -q "ERROR 1213" "$tmp/writers.err" || exit 1
    done
  done) &
  writers+=("$!")
done
bg_pids+=("${writers[@]}")
timeout 800 "$SQLQ" --url "$url" bench --jobs 2000 --workers 4 --batch 10 >"$tmp/bench.log" 2>&1 ||
  die "bench failed or hung: $(tail -n 3 "$tmp/bench.log"); stats: $(sq stats --json 2>&1)"
for pid in "${workers[@]}"; do
  wait "$pid" || die "a worker failed or hung: $(tail -n 3 "$tmp"/worker.*.log); stats: $(sq stats --json 2>&1)"
done
pass "two workers and the bench's threads drained the queue"
for pid in "${writers[@]}"; do
  wait "$pid" || die "an application writer failed: $(grep ERROR "$tmp/writers.err" | sort | uniq -c)"
done
for tag in send_email ring_bell; do
  timeout 300 "$SQLQ" --url "$url" work -c 4 --drain "$tag" -- true >"$tmp/work-$tag.log" 2>&1 ||
    die "draining $tag failed: $(tail -n 3 "$tmp/work-$tag.log")"
done
inserted=$(sql "$primary" "SELECT count(*) FROM sqlq.sqlq_jobs_history WHERE queue = 'ring_bell'
  AND JSON_VALUE(payload, '$.action') = 'insert'")
[ "$inserted" = 180 ] || die "ring_bell ran $inserted insert events, not 180"
pass "three plain SQL writers made 180 inserts' events and more, run by their workers ($(grep -c "ERROR 1213" "$tmp/writers.err") deadlocks retried)"

# Rings and pools: concurrent pushes and picks, holds and releases.
sq ring create "$q" 50 >/dev/null || die "ring create"
sq pool add "$q" a b c d >/dev/null || die "pool add"
clients=()
for c in 1 2 3 4; do
  (for i in $(seq 60); do sq ring push "$q" "$c.$i" >/dev/null || exit 1; done) &
  clients+=("$!")
done
for c in 1 2 3; do
  (for i in $(seq 40); do
    if [ "$((i % 5))" = 0 ]; then
      IFS=$'\t' read -r item token < <(sq pool next --hold 60 "$q") &&
        sq pool release --token "$token" "$q" "$item" >/dev/null || exit 1
    else
      sq pool next "$q" >/dev/null || exit 1
    fi
  done) &
  clients+=("$!")
done
bg_pids+=("${clients[@]}")
for mode in ring pool; do
  "$SQLQ" --url "$url" bench --$mode --jobs 1000 --workers 4 >"$tmp/bench-$mode.log" 2>&1 ||
    die "bench --$mode failed: $(tail -n 3 "$tmp/bench-$mode.log")"
done
for pid in "${clients[@]}"; do
  wait "$pid" || die "a ring or pool client failed"
done
seqs=$(sq ring read --json "$q" | grep -o '"seq":[0-9]*' | cut -d: -f2 | tr '\n' ' ')
[ "$seqs" = "$(seq -s ' ' 191 240) " ] || die "the ring holds $seqs, not the newest 50 of 240 pushes"
pass "four processes pushed 240 entries, three took 120 items"

dead=$(sql "$primary" "SELECT count(*) FROM sqlq.sqlq_jobs WHERE state = 'dead'")
done_jobs=$(sql "$primary" "SELECT count(*) FROM sqlq.sqlq_jobs_history")
[ "$dead" -gt 0 ] && [ "$done_jobs" -gt 0 ] || die "expected dead and finished jobs, got $dead and $done_jobs"
pass "$done_jobs jobs finished, $dead dead"

# Retention prunes in batches of DELETEs without LIMIT, which replicate.
sq retention --keep-count 100 "$q" >/dev/null && sq prune --batch 250 "$q" >/dev/null ||
  die "retention and prune"
kept=$(sql "$primary" "SELECT count(*) FROM sqlq.sqlq_jobs_history WHERE queue = '$q'")
[ "$kept" = 100 ] || die "the prune kept $kept finished jobs of $q, not 100"
pass "pruned the history of $q to its newest 100, in batches of 250"

# The replica applies everything the primary logged.
read -r file pos < <(sql "$primary" "SHOW MASTER STATUS" | cut -f1,2)
waited=$(sql "$replica" "SELECT MASTER_POS_WAIT('$file', $pos, 120)")
[ "$waited" != "NULL" ] && [ "$waited" -ge 0 ] 2>/dev/null || die "the replica did not catch up ($waited)"
pass "the replica caught up with $file:$pos"

"${server[@]}" replica-status "$replica" >"$tmp/replica" || die "no status from the replica"
errno=$(awk '$1 == "Last_SQL_Errno:" { print $2 }' "$tmp/replica")
running=$(awk '$1 == "Slave_SQL_Running:" { print $2 }' "$tmp/replica")
[ "$errno" = 0 ] && [ "$running" = Yes ] ||
  die "the replica's SQL thread: running=$running, error $errno: $(grep Last_SQL_Error "$tmp/replica")"
pass "the replica has no SQL error"

for t in $tables; do
  a=$(sql "$primary" "CHECKSUM TABLE sqlq.$t EXTENDED" | cut -f2)
  b=$(sql "$replica" "CHECKSUM TABLE sqlq.$t EXTENDED" | cut -f2)
  [ -n "$a" ] && [ "$a" = "$b" ] || die "$t differs: primary $a, replica $b"
done
pass "every sqlq table is identical on both ($tables)"

if grep -i "unsafe" "/tmp/sqlq-test-my-$primary/server.log" >"$tmp/unsafe"; then
  die "the primary logged unsafe statements: $(head -n 3 "$tmp/unsafe")"
fi
pass "no statement was logged as unsafe"
