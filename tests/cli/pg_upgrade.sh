# tests/cli/pg_upgrade.sh -- a PostgreSQL database of schema version 1 is
# upgraded by `sqlq init` to version 13 (counts, cancellation, rings and pools, subscriptions, schedules, retention,
# concurrency limits, dependencies, rate limits, per-group limits, fair queues,
# claim lanes) with its jobs intact; a newer schema is refused.  Runs on a database of
# its own (pg_database.bash); needs psql.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg_database.bash"

sql() {
  pg_sql "$1" >/dev/null || fail "psql: $1"
}
# The end of the INSERT trigger's function of versions 1 and 11: the NOTIFY
# of plain-SQL producers' jobs.
notify_end="IF coalesce(current_setting('sqlq.library', true), '') <> 'on' THEN
           PERFORM pg_notify(sqlq_channel(n.queue), count(*)::text)
             FROM sqlq_inserted n GROUP BY n.queue;
         END IF;
         RETURN NULL;
       END\$\$;"
# Version 12 made sqlq_add_lanes() and sqlq_rewind() and rewrote the INSERT
# trigger's function: it goes back to what version 11 made.
undo_12() {
  sql "CREATE OR REPLACE FUNCTION sqlq_jobs_inserted() RETURNS trigger LANGUAGE plpgsql
       SECURITY DEFINER SET search_path FROM CURRENT AS \$\$
       BEGIN
         IF EXISTS (SELECT 1 FROM (SELECT DISTINCT n.queue, n.priority FROM sqlq_inserted n) AS n
             WHERE NOT EXISTS (SELECT 1 FROM sqlq_lanes l
               WHERE l.queue = n.queue AND l.priority = n.priority)) THEN
           INSERT INTO sqlq_lanes (queue, priority)
             SELECT DISTINCT n.queue, n.priority FROM sqlq_inserted n ON CONFLICT DO NOTHING;
         END IF;
         IF coalesce(current_setting('sqlq.library', true), '') <> 'on' AND EXISTS (SELECT 1
             FROM sqlq_inserted n WHERE n.state = 'ready' AND sqlq_late(n.run_at)) THEN
           PERFORM nextval('sqlq_rewinds');
         END IF;
         $notify_end
       DROP FUNCTION sqlq_add_lanes(text[], integer[]); DROP FUNCTION sqlq_rewind();
       DROP TABLE IF EXISTS sqlq_leases;
       DELETE FROM sqlq_schema WHERE version >= 12;"
}
# Version 11 made sqlq_lanes, sqlq_rewinds, sqlq_late() and the trigger
# sqlq_jobs_made_ready, and taught the INSERT trigger's function to record
# lanes and rewinds: the function goes back to what version 1 made.
undo_11() {
  sql "DROP TRIGGER sqlq_jobs_made_ready ON sqlq_jobs; DROP FUNCTION sqlq_jobs_made_ready();
       DROP TABLE sqlq_lanes; DROP SEQUENCE sqlq_rewinds;
       CREATE OR REPLACE FUNCTION sqlq_jobs_inserted() RETURNS trigger LANGUAGE plpgsql AS \$\$
       BEGIN
         $notify_end
       DROP FUNCTION sqlq_late(bigint);
       DELETE FROM sqlq_schema WHERE version = 11;"
}
lanes() {
  pg_sql "SELECT queue, priority FROM sqlq_lanes ORDER BY queue, priority"
}
undo_10() {
  sql "DROP TABLE sqlq_groups;
       ALTER TABLE sqlq_queues DROP COLUMN group_running, DROP COLUMN fair, DROP COLUMN fair_served;
       DELETE FROM sqlq_schema WHERE version = 10;"
}
downgrade() {
  undo_11
  undo_10
  sql "DROP TABLE sqlq_rate_starts; ALTER TABLE sqlq_queues DROP COLUMN rate_max, DROP COLUMN rate_period;
       DROP TABLE sqlq_deps; ALTER TABLE sqlq_jobs DROP COLUMN awaited, DROP COLUMN waits,
         DROP COLUMN cancelled_at;
       DROP INDEX sqlq_jobs_history_age;
       ALTER TABLE sqlq_queues DROP COLUMN keep_for, DROP COLUMN keep_count, DROP COLUMN max_running;
       DROP TABLE sqlq_schedules; DROP TABLE sqlq_subscriptions;
       DROP FUNCTION sqlq_pool_next(text, bigint, bigint);
       DROP TABLE sqlq_rings, sqlq_ring_entries, sqlq_pool_items;
       ALTER TABLE sqlq_jobs RESET (autovacuum_vacuum_scale_factor,
         autovacuum_vacuum_threshold, autovacuum_vacuum_cost_delay);
       DELETE FROM sqlq_schema WHERE version IN (2, 3, 4, 5, 6, 7, 8, 9);"
}

. "$(dirname "$0")/upgrade.bash"
