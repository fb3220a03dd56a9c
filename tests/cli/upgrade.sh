# tests/cli/upgrade.sh -- a SQLite database of schema version 1 is upgraded
# by `sqlq init` to version 13 (counts, rings and pools, subscriptions, schedules,
# retention, concurrency limits, dependencies, rate limits, cancellation,
# per-group limits, fair queues; versions 11 and 12 add nothing on SQLite) with
# its jobs intact; a newer schema is refused.  Needs the
# sqlite3 shell.
. "$(dirname "$0")/lib.sh"

db_file=$tmp/t.db
sql() {
  sqlite3 -bail "$db_file" "$1" || fail "sqlite3: $1"
}
undo_11() {
  sql "DELETE FROM sqlq_schema WHERE version = 11;"
}
undo_10() {
  sql "DROP TABLE sqlq_groups; ALTER TABLE sqlq_queues DROP COLUMN group_running;
       ALTER TABLE sqlq_queues DROP COLUMN fair; ALTER TABLE sqlq_queues DROP COLUMN fair_served;
       DELETE FROM sqlq_schema WHERE version = 10;"
}
downgrade() {
  undo_11
  undo_10
  sql "DROP TABLE sqlq_rate_starts; ALTER TABLE sqlq_queues DROP COLUMN rate_max;
       ALTER TABLE sqlq_queues DROP COLUMN rate_period; ALTER TABLE sqlq_jobs DROP COLUMN cancelled_at;
       DROP TABLE sqlq_deps; ALTER TABLE sqlq_jobs DROP COLUMN awaited; ALTER TABLE sqlq_jobs DROP COLUMN waits;
       DROP INDEX IF EXISTS sqlq_jobs_history_age; ALTER TABLE sqlq_queues DROP COLUMN keep_for;
       ALTER TABLE sqlq_queues DROP COLUMN max_running;
       ALTER TABLE sqlq_queues DROP COLUMN keep_count;
       DROP TABLE sqlq_schedules; DROP TABLE sqlq_subscriptions; DROP TABLE sqlq_rings; DROP TABLE sqlq_ring_entries;
       DROP TABLE sqlq_pool_items; DELETE FROM sqlq_schema WHERE version IN (2, 3, 4, 5, 6, 7, 8, 9);"
}

. "$(dirname "$0")/upgrade.bash"
