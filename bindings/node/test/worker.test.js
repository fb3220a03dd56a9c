// test/worker.test.js -- the worker loop: it drains a queue in batches, a
// handler that throws fails the job until it is dead, stop() and SIGTERM
// finish what runs and give back the rest, losing nothing.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const { spawn } = require("node:child_process");
const path = require("node:path");
const { sqlq, url, withQueue, until } = require("./helper");

const totals = async (db, q) => {
  const s = (await db.stats(q))[0] || { ready: 0, scheduled: 0, running: 0, dead: 0 };
  return s;
};

test("the worker drains a queue, each job handled once", async () => {
  await withQueue(async (db, q) => {
    const N = 1000;
    await db.enqueueBatch(q, Array.from({ length: N }, (_, i) => `job ${i}`));
    const seen = new Map();
    const w = new sqlq.Worker(url(), q, { batch: 50, concurrency: 10, handleSignals: false });
    w.handle(async (job) => {
      seen.set(job.payload.toString(), (seen.get(job.payload.toString()) || 0) + 1);
      if (job.id % 3 === 0) await new Promise((r) => setImmediate(r));
    });
    await w.start();
    await until(() => w.counts.acked === N, 60000, "every job to be acked");
    await w.stop();
    assert.equal(seen.size, N);
    for (const [, k] of seen) assert.equal(k, 1);
    assert.equal(w.counts.acked, N);
    const t = await totals(db, q);
    assert.equal(t.ready + t.running + t.dead, 0);
  });
});

test("a job whose handler throws is retried, then dead as its attempts say", async () => {
  await withQueue(async (db, q) => {
    const { id } = await db.enqueue(q, "bad", { maxAttempts: 3 });
    await db.enqueue(q, "good");
    const calls = [];
    const w = new sqlq.Worker(url(), q, { batch: 10, backoff: 0.01, handleSignals: false, waitTimeout: 0.2 });
    w.handle(async (job) => {
      calls.push(`${job.payload} ${job.attempts}`);
      if (job.payload.toString() === "bad") throw new Error(`boom ${job.attempts}`);
    });
    await w.start();
    await until(async () => (await totals(db, q)).dead === 1, 60000, "the job to be dead");
    await w.stop();
    assert.deepEqual(calls.filter((c) => c.startsWith("bad")), ["bad 1", "bad 2", "bad 3"]);
    assert.deepEqual(calls.filter((c) => c.startsWith("good")), ["good 1"]);
    const [dead] = await db.list(q, { state: sqlq.state.DEAD });
    assert.equal(dead.id, id);
    assert.equal(dead.attempts, 3);
    assert.equal(dead.lastError, "boom 3");
    assert.equal(w.counts.failed, 3);
    assert.equal(w.counts.acked, 1);
  });
});

test("a handler that throws a non-Error fails the job with its text", async () => {
  await withQueue(async (db, q) => {
    await db.enqueue(q, "x", { maxAttempts: 1 });
    const w = new sqlq.Worker(url(), q, { handleSignals: false });
    w.handle(() => {
      throw "plain string"; // eslint-disable-line no-throw-literal
    });
    await w.start();
    await until(async () => (await totals(db, q)).dead === 1, 60000, "the job to be dead");
    await w.stop();
    assert.equal((await db.list(q))[0].lastError, "plain string");
  });
});

test("a due job held back by its busy FIFO group does not make the worker spin", async () => {
  await withQueue(async (db, q) => {
    await db.enqueueBatch(q, [
      { payload: "first", groupKey: "g" },
      { payload: "second", groupKey: "g" },
    ]);
    let release;
    const gate = new Promise((r) => (release = r));
    const order = [];
    const w = new sqlq.Worker(url(), q, { batch: 10, handleSignals: false });
    w.handle(async (job) => {
      order.push(job.payload.toString());
      if (order.length === 1) await gate;
    });
    await w.start();
    let claims = 0;
    const claim = w._claimDb.claim.bind(w._claimDb);
    w._claimDb.claim = (...a) => (claims++, claim(...a));
    await until(() => order.length === 1, 60000, "the first job");
    // While the group is busy, the second job is due but not claimable:
    // give the worker 50 claims' worth of a busy loop's time.
    const t0 = Date.now();
    await until(() => claims >= 3 || Date.now() - t0 > 2000, 60000, "a few claims");
    const seen = claims;
    await new Promise((r) => setTimeout(r, 300));
    assert.ok(claims - seen < 50, `${claims - seen} claims in 300 ms while the group was busy`);
    release();
    await until(() => w.counts.acked === 2, 60000, "both jobs");
    await w.stop();
    assert.deepEqual(order, ["first", "second"]);
  });
});

test("stop() lets running handlers finish and gives back the claimed rest", async () => {
  await withQueue(async (db, q) => {
    const N = 200;
    await db.enqueueBatch(q, Array.from({ length: N }, (_, i) => `${i}`));
    let handled = 0;
    let started = 0;
    const w = new sqlq.Worker(url(), q, { batch: 100, concurrency: 5, handleSignals: false });
    w.handle(async () => {
      started++;
      await new Promise((r) => setTimeout(r, 30));
      handled++;
    });
    await w.start();
    await until(() => started >= 5, 60000, "handlers to start");
    await w.stop();
    assert.equal(handled, started, "every started handler finished");
    assert.equal(w.counts.acked, handled);
    const t = await totals(db, q);
    assert.equal(t.running, 0, "nothing left running");
    assert.equal(t.ready, N - handled, "every other job is ready again");
    assert.equal(w.counts.released > 0, true);
  });
});

test("SIGTERM stops a worker process gracefully, losing nothing", async () => {
  await withQueue(async (db, q) => {
    const N = 300;
    await db.enqueueBatch(q, Array.from({ length: N }, (_, i) => `${i}`));
    const child = spawn(process.execPath, [path.join(__dirname, "sigterm-child.js"), q, url()], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    const exited = new Promise((r) => child.on("exit", (code, signal) => r({ code, signal })));
    await until(() => (out.match(/^handled /gm) || []).length >= 10, 60000, "the child to handle jobs");
    child.kill("SIGTERM");
    const { code, signal } = await exited;
    assert.equal(signal, null);
    assert.equal(code, 0);
    assert.match(out, /^stopped /m);
    const handled = new Set(out.match(/^handled \d+/gm).map((l) => Number(l.split(" ")[1])));
    assert.ok(handled.size < N, "stopped before the end");
    const t = await totals(db, q);
    assert.equal(t.running, 0, "no job left leased to the dead worker");
    assert.equal(t.ready, N - handled.size, "every job not handled is ready again");
    const left = (await db.list(q)).map((j) => j.id);
    for (const id of left) assert.ok(!handled.has(id), `job ${id} handled and still there`);
  });
});
