// bench/peers/pgboss.mjs -- pg-boss through its public API, in the
// measurement of harness.mjs.
//
// Usage: node pgboss.mjs --url URL --jobs N --workers W --batch B --samples K
// (run from a directory whose node_modules holds pg-boss).
//
// pg-boss's work() polls: each worker fetches at most once per polling
// interval, and the interval cannot be set below 0.5 s, which caps it at
// 2 * B jobs/s per worker.  The documented way past that is the
// fetch/complete API, which this uses: each of W workers loops on
// fetch(queue, {batchSize: B}) and complete(queue, ids); after an empty
// fetch it naps NAP_MS (env PGBOSS_NAP_MS, default 2 ms), since pg-boss
// has no wake-up.  Jobs are enqueued with send() (B = 1) or insert()
// (batches of B).  The queue is a "standard" queue with the defaults
// (retries, retention, archiving, maintenance), all in PostgreSQL.
import PgBoss from "pg-boss";
import { measure, parseArgs } from "./harness.mjs";

const o = parseArgs(process.argv.slice(2));
const QUEUE = "cmp";
const NAP_MS = Number(process.env.PGBOSS_NAP_MS || 2);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const boss = new PgBoss({ connectionString: o.url, max: Math.max(10, o.workers + 2) });
boss.on("error", (e) => console.error("pg-boss:", e.message));
let running = true;
let loops = [];

/** One worker: fetch up to batch jobs, run them, complete them. */
async function workLoop(batch, onJob) {
  while (running) {
    const jobs = await boss.fetch(QUEUE, { batchSize: batch });
    if (!jobs || jobs.length === 0) {
      await sleep(NAP_MS);
      continue;
    }
    for (const j of jobs) await onJob(j.data);
    await boss.complete(QUEUE, jobs.map((j) => j.id));
  }
}

const peer = {
  async start({ workers, batch, onJob }) {
    await boss.start();
    await boss.deleteQueue(QUEUE).catch(() => {});
    await boss.createQueue(QUEUE);
    loops = Array.from({ length: workers }, () => workLoop(batch, onJob));
  },
  async enqueue(payloads) {
    if (payloads.length === 1) await boss.send(QUEUE, payloads[0]);
    else await boss.insert(payloads.map((data) => ({ name: QUEUE, data })));
  },
  // A job's complete() has committed by the time its loop fetches again.
  async drained() {
    const r = await boss.getQueueSize(QUEUE, { before: "completed" });
    return r === 0;
  },
  async stop() {
    running = false;
    await Promise.all(loops);
    await boss.stop({ graceful: false, wait: true });
  },
};

await measure(peer, "pg-boss", o);
