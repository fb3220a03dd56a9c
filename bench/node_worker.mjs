// bench/node_worker.mjs -- the Node.js package's Worker (bindings/node)
// through the measurement of bench/peers/harness.mjs, as the peers of
// bench/compare are measured.
//
// Usage: node node_worker.mjs --url URL --jobs N --workers C --batch B --samples K
// (from a directory holding harness.mjs and, in node_modules, pg;
// SQLQ_NODE_PACKAGE names bindings/node, SQLQ_NODE_ADDON its addon).
//
// One Worker with batch B and concurrency C (its handlers, no-ops apart
// from the harness's stamp reading).  Payloads are 16 bytes: the enqueue
// time as a double, then zeros.  The throughput phase enqueues through the
// package (enqueueBatch, B a call, on a connection of its own); each
// latency sample is a plain SQL INSERT through node-postgres on a
// connection of its own (docs/schema.md), so that its figure is the
// wake-up from a plain INSERT to the handler being called.
import { createRequire } from "node:module";
import pg from "pg";
import { measure, parseArgs } from "./harness.mjs";

const require = createRequire(import.meta.url);
const sqlq = require(process.env.SQLQ_NODE_PACKAGE);
const o = parseArgs(process.argv.slice(2));
const QUEUE = "bench_node";

const stamp = (t) => {
  const b = Buffer.alloc(16);
  b.writeDoubleLE(t, 0);
  return b;
};

let db = null;
let worker = null;
let client = null;
let enqueued = 0;

const peer = {
  async start({ workers, batch, onJob }) {
    db = await sqlq.open(o.url);
    await db.init();
    await db.purge(QUEUE);
    client = new pg.Client({ connectionString: o.url });
    await client.connect();
    worker = new sqlq.Worker(o.url, QUEUE, { batch, concurrency: workers, handleSignals: false });
    worker.handle((job) => onJob({ t: job.payload.readDoubleLE(0) }));
    await worker.start();
  },
  async enqueue(payloads) {
    enqueued += payloads.length;
    if (payloads.length === 1) {
      await client.query("INSERT INTO sqlq_jobs (queue, payload) VALUES ($1, $2)", [QUEUE, stamp(payloads[0].t)]);
    } else {
      await db.enqueueBatch(QUEUE, payloads.map((p) => stamp(p.t)));
    }
  },
  async drained() {
    return worker.counts.acked >= enqueued;
  },
  async stop() {
    await worker.stop();
    await client.end();
    await db.close();
  },
};

await measure(peer, "sqlq-node", o);
