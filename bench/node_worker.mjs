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
// wake-up from a plain INSERT to the handler being called.  With
// SQLQ_BENCH_PRODUCER=psycopg, each latency sample's INSERT is made instead
// by another process, Debian's python3 with psycopg (autocommit), which
// stamps the payload with its wall clock right before the INSERT: the
// wake-up as a producer in another service sees it, without the cost of
// node-postgres' own round trip on the worker's event loop.
import { createRequire } from "node:module";
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
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
let producer = null; // the psycopg process, with its answers as lines

// A Python process that, for each line it reads, INSERTs one job stamped
// with its wall clock (the harness's nowMs() is the same clock) and
// answers a line.
const PRODUCER = `
import struct, sys, time, psycopg
c = psycopg.connect(sys.argv[1], autocommit=True)
for _ in sys.stdin:
    c.execute("INSERT INTO sqlq_jobs (queue, payload) VALUES (%s, %s)",
              (sys.argv[2], struct.pack("<d", time.time() * 1000) + bytes(8)))
    print("ok", flush=True)
`;
function startProducer() {
  const child = spawn("/usr/bin/python3", ["-c", PRODUCER, o.url, QUEUE], { stdio: ["pipe", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  return {
    async insert() {
      child.stdin.write("\n");
      const r = await lines.next();
      if (r.done) throw new Error("the psycopg producer ended");
    },
    end() {
      child.stdin.end();
    },
  };
}

const peer = {
  async start({ workers, batch, onJob }) {
    db = await sqlq.open(o.url);
    await db.init();
    await db.purge(QUEUE);
    client = new pg.Client({ connectionString: o.url });
    await client.connect();
    worker = new sqlq.Worker(o.url, QUEUE, { batch, concurrency: workers, handleSignals: false });
    worker.handle((job) => onJob({ t: job.payload.readDoubleLE(0) }));
    if (process.env.SQLQ_BENCH_PRODUCER === "psycopg") producer = startProducer();
    await worker.start();
  },
  async enqueue(payloads) {
    enqueued += payloads.length;
    if (payloads.length === 1 && producer) {
      await producer.insert();
    } else if (payloads.length === 1) {
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
    if (producer) producer.end();
    await client.end();
    await db.close();
  },
};

await measure(peer, "sqlq-node", o);
