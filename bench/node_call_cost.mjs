// bench/node_call_cost.mjs -- the per-call cost of the Node.js package's
// addon (node-addon-api) against the FFI package koffi, on the same calls
// of the same libsqlq, to choose how to bind it.
//
// Usage: node bench/node_call_cost.mjs LIBSQLQ_SO [N]
// (koffi and the sqlq package resolvable: NODE_PATH=DIR/node_modules with
// koffi installed there; SQLQ_NODE_PACKAGE names bindings/node.)
//
// Measured, N times each, one call at a time, on a private in-memory
// SQLite database (sqlite::memory:):
//   sync    sqlq_status_name(5): the bare crossing, on the main thread;
//   async   sqlq_resume(db, "q") (one small write transaction) awaited
//           from the thread pool: the addon's Database.resume() against
//           koffi's fn.async() wrapped in a promise.
// Prints one line per figure and round: nanoseconds per call (the first
// round warms up).
import { createRequire } from "node:module";
const require = createRequire(import.meta.url);
const koffi = require("koffi");
const sqlq = require(process.env.SQLQ_NODE_PACKAGE || "../bindings/node");

const so = process.argv[2];
const N = Number(process.argv[3] || 100000);
const lib = koffi.load(so);
const statusName = lib.func("const char *sqlq_status_name(int)");
const open = lib.func("int sqlq_open(const char *, void *, _Out_ void **)");
const init = lib.func("int sqlq_init(void *, void *)");
const resume = lib.func("int sqlq_resume(void *, const char *)");
const close = lib.func("void sqlq_close(void *)");

const ns = (t0, n) => Math.round((Number(process.hrtime.bigint() - t0) / n) * 10) / 10;

function syncCost(f) {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < N; i++) f(5);
  return ns(t0, N);
}

async function asyncCost(call) {
  const n = Math.max(1, N / 10);
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await call();
  return ns(t0, n);
}

const out = [];
// Two rounds of each: the first warms up the JIT and both bindings.
for (let round = 0; round < 2; round++) {
  out.push([`sync  status_name  addon (round ${round + 1})`, syncCost(sqlq.statusName)]);
  out.push([`sync  status_name  koffi (round ${round + 1})`, syncCost(statusName)]);
}

const db = await sqlq.open("sqlite::memory:");
await db.init();
const h = [null];
if (open("sqlite::memory:", null, h) !== 0) throw new Error("koffi: open failed");
init(h[0], null);
const kresume = () =>
  new Promise((res, rej) => resume.async(h[0], "q", (e, rc) => (e || rc ? rej(e || new Error(`rc ${rc}`)) : res())));
for (let round = 0; round < 2; round++) {
  out.push([`async resume       addon (round ${round + 1})`, await asyncCost(() => db.resume("q"))]);
  out.push([`async resume       koffi (round ${round + 1})`, await asyncCost(kresume)]);
}
await db.close();
close(h[0]);
for (const [k, v] of out) console.log(`${k}  ${v} ns/call`);
