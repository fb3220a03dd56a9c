// bench/peers/graphile.mjs -- graphile-worker through its public API, in the
// measurement of harness.mjs.
//
// Usage: node graphile.mjs --url URL --jobs N --workers W --batch B --samples K
// (run from a directory whose node_modules holds graphile-worker and pg).
//
// W is graphile-worker's concurrency (W jobs run at once in one runner).
// B > 1 turns on its documented throughput settings for batches
// (worker.graphile.org, "Performance"): jobs are enqueued with addJobs in
// batches of B, fetched B at a time into the local queue (localQueue.size
// = B), and completed in batches (completeJobBatchDelay = 0).  B = 1 is
// addJob and the defaults.  Everything else is left at its default: jobs
// are durable rows, and idle workers wake on LISTEN/NOTIFY.
import { run, makeWorkerUtils, Logger } from "graphile-worker";
import pg from "pg";
import { measure, parseArgs } from "./harness.mjs";

const o = parseArgs(process.argv.slice(2));
const quiet = new Logger(() => () => {});
const TASK = "cmp";

const pool = new pg.Pool({ connectionString: o.url, max: 2 });
let runner = null;
let utils = null;

const peer = {
  async start({ workers, batch, onJob }) {
    const worker = batch > 1 ? { localQueue: { size: batch }, completeJobBatchDelay: 0 } : {};
    runner = await run({
      connectionString: o.url,
      concurrency: workers,
      maxPoolSize: Math.max(10, workers + 2),
      noHandleSignals: true,
      logger: quiet,
      taskList: { [TASK]: async (payload) => onJob(payload) },
      preset: { worker },
    });
    utils = await makeWorkerUtils({ connectionString: o.url, logger: quiet });
    await pool.query("DELETE FROM graphile_worker._private_jobs");
  },
  async enqueue(payloads) {
    if (payloads.length === 1) await utils.addJob(TASK, payloads[0]);
    else await utils.addJobs(payloads.map((payload) => ({ identifier: TASK, payload })));
  },
  async drained() {
    const r = await pool.query("SELECT NOT EXISTS (SELECT 1 FROM graphile_worker._private_jobs) AS e");
    return r.rows[0].e;
  },
  async stop() {
    await runner.stop();
    await utils.release();
    await pool.end();
  },
};

await measure(peer, "graphile-worker", o);
