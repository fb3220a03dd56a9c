# tests/cli/wal_limit.sh -- on SQLite, a WAL that grew while a reader held
# an old snapshot is cut back to 64 MiB (journal_size_limit) once the
# reader has gone and a checkpoint has copied it back.  Needs sqlite3.
. "$(dirname "$0")/lib.sh"

db_file=$tmp/t.db
wal_bytes() { stat -c %s "$db_file-wal" 2>/dev/null || echo 0; }
limit=67108864

sq init >/dev/null
sq push wal-q first >/dev/null

# A connection that stays open, as a worker's would: without one, the last
# connection to close checkpoints and removes the WAL.
mkfifo "$tmp/keep"
sqlite3 "$db_file" <"$tmp/keep" >"$tmp/keep.out" 2>&1 &
keep_pid=$!
exec 8>"$tmp/keep"
printf 'SELECT count(*) FROM sqlq_queues;\n' >&8

# The reader: a read transaction of another process, kept open.
mkfifo "$tmp/hold"
sqlite3 "$db_file" <"$tmp/hold" >"$tmp/hold.out" 2>&1 &
hold_pid=$!
exec 7>"$tmp/hold"
printf 'BEGIN; SELECT count(*) FROM sqlq_jobs;\n' >&7
tries=100
until [ -s "$tmp/hold.out" ] || [ $tries -le 0 ]; do
  sleep 0.1
  tries=$((tries - 1))
done
expect_eq "the reader read" "$(cat "$tmp/hold.out")" "1"

# One job a commit, claimed and acked one at a time, until the WAL is
# well over the limit (bounded: at most 20 rounds).
rounds=0
while [ "$(wal_bytes)" -le $((limit + limit / 2)) ] && [ $rounds -lt 20 ]; do
  sq bench --jobs 1000 --workers 1 --batch 1 --latency-samples 1 --queue wal-b >/dev/null
  rounds=$((rounds + 1))
done
grown=$(wal_bytes)
checks=$((checks + 1))
[ "$grown" -gt $((limit + limit / 2)) ] || fail "the WAL did not grow past 96 MiB under the reader: $grown bytes"

# The reader goes; a commit checkpoints (the automatic checkpoint, now
# complete), the next starts the WAL over and cuts the file back.
exec 7>&-
wait "$hold_pid" 2>/dev/null
for i in 1 2 3; do
  run "push $i after the reader" 0 sq push wal-q "after $i"
done
after=$(wal_bytes)
checks=$((checks + 1))
[ "$after" -gt 0 ] && [ "$after" -le $limit ] || fail "the WAL is still $after bytes (was $grown) after the reader went"
run "every job is still there" 0 sq stats --json wal-q
expect_out_has "four ready" '"ready":4'

exec 8>&-
wait "$keep_pid" 2>/dev/null
finish
