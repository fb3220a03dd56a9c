-- bench/peers/raw-delete.sql -- pgbench: one worker round of the raw queue
-- in its cheapest form: take up to :batch jobs and delete them in one
-- statement (SKIP LOCKED), one commit.  A job is gone before it is run, so
-- a crash loses it (at most once): the bound on what any durable
-- PostgreSQL queue can do with one commit a batch.  After an empty take
-- the client naps 100 us.
WITH c AS (
  SELECT id FROM cmp_raw ORDER BY id LIMIT :batch FOR UPDATE SKIP LOCKED
), d AS (
  DELETE FROM cmp_raw r USING c WHERE r.id = c.id RETURNING r.payload
)
SELECT count(*) AS got FROM d \gset
\if :got = 0
\sleep 100 us
\endif
