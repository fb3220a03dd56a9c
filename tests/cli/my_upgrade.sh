# tests/cli/my_upgrade.sh -- a MariaDB database of schema version 1 is
# upgraded by `sqlq init` to version 13 (counts, claim lanes, per-group limits, fair queues, cancellation, rate limits, dependencies, concurrency limits, rings and pools, subscriptions, job
# ids from a counter instead of AUTO_INCREMENT, schedules, retention) with its jobs and their ids
# intact; a newer schema is refused.  Runs on a database of its own
# (my_database.bash); needs the mariadb client.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/my_database.bash"

sql() {
  mariadb --no-defaults -h 127.0.0.1 -P "$SQLQ_TEST_MY_PORT" -u sqlq -N -B "$my_database" \
    -e "$1" >/dev/null || fail "mariadb: $1"
}
# Version 15 adds nothing on MariaDB but its number.
undo_15() {
  sql "DELETE FROM sqlq_schema WHERE version = 15;"
}
# Version 12 made the lanes' tables and triggers.
undo_12() {
  sql "DROP TRIGGER sqlq_jobs_lane; DROP TRIGGER sqlq_jobs_moved;
       DROP TABLE sqlq_lanes, sqlq_lane_moves;
       DELETE FROM sqlq_schema WHERE version >= 12;"
}
lanes() {
  my_sql "SELECT queue, priority FROM sqlq_lanes ORDER BY queue, priority"
}
undo_11() {
  sql "DELETE FROM sqlq_schema WHERE version = 11;"
}
undo_10() {
  sql "DROP TABLE sqlq_groups; DROP FUNCTION sqlq_group_room;
       ALTER TABLE sqlq_queues DROP COLUMN group_running, DROP COLUMN fair, DROP COLUMN fair_served;
       DELETE FROM sqlq_schema WHERE version = 10;"
}
downgrade() {
  undo_11
  undo_10
  sql "DROP TABLE sqlq_rate_starts; ALTER TABLE sqlq_queues DROP COLUMN rate_max, DROP COLUMN rate_period;
       DROP TABLE sqlq_deps; ALTER TABLE sqlq_jobs DROP COLUMN awaited, DROP COLUMN waits,
         DROP COLUMN cancelled_at;
       DROP INDEX sqlq_jobs_history_age ON sqlq_jobs_history;
       ALTER TABLE sqlq_queues DROP COLUMN keep_for, DROP COLUMN keep_count, DROP COLUMN max_running;
       DROP TABLE sqlq_schedules, sqlq_subscriptions, sqlq_job_ids;
       DROP TRIGGER sqlq_jobs_id;
       ALTER TABLE sqlq_jobs MODIFY id BIGINT NOT NULL AUTO_INCREMENT;
       DROP TABLE sqlq_rings, sqlq_ring_entries, sqlq_pool_items;
       DELETE FROM sqlq_schema WHERE version IN (2, 3, 4, 5, 6, 7, 8, 9);"
}

# Ids are never handed out twice: a version 1 table whose AUTO_INCREMENT is
# past its rows (jobs acked without history) numbers on from there after
# the upgrade.  Then the database starts afresh for upgrade.bash.
sq init >/dev/null
downgrade
sql "INSERT INTO sqlq_jobs (queue, payload) VALUES ('kept', 'c'), ('gone', 'a'), ('gone', 'b');
     DELETE FROM sqlq_jobs WHERE queue = 'gone'"
run "upgrade a table numbered past its rows" 0 sq init
run "a job after the upgrade" 0 sq push kept "after"
expect_out "takes the id after the last one handed out" "4"
my_admin "DROP DATABASE $my_database; CREATE DATABASE $my_database"

. "$(dirname "$0")/upgrade.bash"
