-- bench/peers/raw-schema.sql -- the table of the raw-SQL queue that
-- bench/peers/raw.sh drives with pgbench: the least a durable job queue
-- needs (an ordered id, a payload, and a claim mark so that a claimed job
-- is not handed out again before it is deleted).
SET client_min_messages = warning;
DROP TABLE IF EXISTS cmp_raw;
CREATE TABLE cmp_raw (
  id bigserial PRIMARY KEY,
  payload bytea NOT NULL,
  claimed_at timestamptz
);
