-- bench/peers/raw-insert.sql -- pgbench: enqueue :batch jobs of 16 bytes
-- in one statement (one transaction).
INSERT INTO cmp_raw (payload)
SELECT '\x00000000000000007878787878787878'::bytea FROM generate_series(1, :batch);
