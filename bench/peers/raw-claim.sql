-- bench/peers/raw-claim.sql -- pgbench: one worker round of the raw queue,
-- as sqlq does it: claim up to :batch jobs (SKIP LOCKED) in one
-- transaction, then delete them by id in a second, the ack.  After an
-- empty claim the client naps 100 us, as sqlq bench's workers do when a
-- backlog keeps them from waiting.
WITH c AS (
  SELECT id FROM cmp_raw WHERE claimed_at IS NULL
  ORDER BY id LIMIT :batch FOR UPDATE SKIP LOCKED
), u AS (
  UPDATE cmp_raw r SET claimed_at = now() FROM c WHERE r.id = c.id RETURNING r.id
)
SELECT count(*) AS got, quote_literal(coalesce(array_agg(id), '{}')::text) AS ids FROM u \gset
\if :got > 0
DELETE FROM cmp_raw WHERE id = ANY (:ids::bigint[]);
\else
\sleep 100 us
\endif
