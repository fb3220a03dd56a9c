// test/schedules.test.js -- schedules of periodic jobs, retention of
// finished jobs, concurrency and rate limits, dependencies, per-group limits and fair queues (libsqlq 1.1) through the package, on the database of
// SQLQ_TEST_URL (else SQLite).
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const { sqlq, url, name, openDb, withQueue } = require("./helper");

const find = async (db, n) => (await db.cronList()).filter((s) => s.name === n);

test("cronAdd, cronList, cronPause, cronResume, cronRemove", async () => {
  await withQueue(async (db, q) => {
    const n = name("cron");
    await db.cronAdd(n, "*/5 * * * *", q, Buffer.from([0, 116, 255]), { zone: "Europe/Paris", missed: 3 });
    const [s] = await find(db, n);
    assert.deepEqual([s.spec, s.zone, s.queue, s.missed, s.paused, s.lastAtUs], ["*/5 * * * *", "Europe/Paris", q, 3, false, 0]);
    assert.deepEqual(s.payload, Buffer.from([0, 116, 255]));
    assert.equal(s.nextAtUs % (5 * 60e6), 0);
    await db.cronPause(n);
    assert.equal((await find(db, n))[0].paused, true);
    await db.cronResume(n);
    assert.equal((await find(db, n))[0].paused, false);
    await db.cronAdd(n, "@every 90s", q, "", { missed: "all" });
    assert.deepEqual((await find(db, n)).map((x) => [x.spec, x.zone, x.missed]), [["@every 90s", "UTC", "all"]]);
    await db.cronRemove(n);
    assert.deepEqual(await find(db, n), []);
    await assert.rejects(db.cronRemove(n), sqlq.NotfoundError);
  });
});

test("cronTick enqueues one job per tick", async () => {
  await withQueue(async (db, q) => {
    const n = name("cron");
    await db.cronAdd(n, "@every 1m", q, "p", { missed: "once" });
    try {
      const tick = (await find(db, n))[0].nextAtUs;
      assert.equal((await db.cronTick(tick - 1)).enqueued, 0);
      const r = await db.cronTick(tick);
      assert.equal(r.enqueued, 1);
      assert.ok(r.nextAtUs > tick);
      assert.equal((await db.cronTick(tick)).enqueued, 0);
      const [job] = await db.claim(q, 10);
      assert.equal(job.payload.toString(), "p");
      assert.equal(job.dedupeKey, `cron:${n}:${tick}`);
      await db.ack(job);
      assert.equal((await find(db, n))[0].lastAtUs, tick);
    } finally {
      await db.cronRemove(n);
    }
  });
});

test("cronAdd refuses garbage with MisuseError or TypeError, and stores nothing", async () => {
  await withQueue(async (db, q) => {
    const n = name("cron");
    for (const [spec, zone, missed] of [
      ["61 * * * *", "UTC", "skip"],
      ["0 0 30 2 *", "UTC", "skip"],
      ["* * * *", "UTC", "skip"],
      ["@every 0s", "UTC", "skip"],
      ["@daily", "Mars/Olympus_Mons", "skip"],
      ["@daily", "../../etc/passwd", "skip"],
      ["@daily", "UTC", 1001],
      ["@daily", "UTC", -2],
      ["@daily", "UTC", "sometimes"],
    ]) {
      await assert.rejects(db.cronAdd(n, spec, q, "", { zone, missed }), sqlq.MisuseError, `${spec} ${zone} ${missed}`);
    }
    assert.throws(() => db.cronAdd(n, 5, q), TypeError);
    assert.throws(() => db.cronAdd(n, "@daily", q, "", { missed: 1.5 }), TypeError);
    assert.throws(() => db.cronAdd(n, "@daily\0* * * * *", q), TypeError);
    assert.deepEqual(await find(db, n), []);
  });
});

test("retentionSet, retentionGet and historyPrune", async () => {
  const db = await sqlq.open(url(), { keepHistory: true });
  const q = name("q");
  try {
    await db.init();
    assert.deepEqual(await db.retentionGet(q), { keepFor: 0, keepCount: 0 });
    await db.enqueueBatch(q, ["a", "b", "c", "d"]);
    await db.ackBatch(await db.claim(q, 10));
    assert.equal((await db.list(q, { state: sqlq.state.DONE })).length, 4);
    await db.retentionSet(q, { keepCount: 1 });
    assert.deepEqual(await db.retentionGet(q), { keepFor: 0, keepCount: 1 });
    assert.equal(await db.historyPrune(q, 2), 2);
    assert.equal(await db.historyPrune(q), 1);
    assert.equal(await db.historyPrune(q), 0);
    const done = await db.list(q, { state: sqlq.state.DONE });
    assert.deepEqual(done.map((j) => j.payload.toString()), ["d"]);
    await db.retentionSet(q, { keepFor: 3600.5 });
    assert.deepEqual(await db.retentionGet(q), { keepFor: 3600.5, keepCount: 0 });
    for (const [keepFor, keepCount] of [[-1, 0], [NaN, 0], [0, -1], [1e12, 0], [0, 1e10]]) {
      await assert.rejects(db.retentionSet(q, { keepFor, keepCount }), sqlq.MisuseError, `${keepFor} ${keepCount}`);
    }
    assert.deepEqual(await db.retentionGet(q), { keepFor: 3600.5, keepCount: 0 });
    await assert.rejects(db.historyPrune(q, 1e9), sqlq.MisuseError);
    assert.throws(() => db.retentionSet(q, { keepCount: "all" }), TypeError);
  } finally {
    await db.retentionSet(q);
    await db.close();
  }
});

test("concurrencySet and concurrencyGet", async () => {
  await withQueue(async (db, q) => {
    assert.equal(await db.concurrencyGet(q), 0);
    await db.enqueueBatch(q, ["1", "2", "3"]);
    await db.concurrencySet(q, 2);
    assert.equal(await db.concurrencyGet(q), 2);
    assert.equal((await db.claim(q, 10)).length, 2);
    assert.deepEqual(await db.claim(q, 10), []);
    for (const bad of [-1, 1000001]) await assert.rejects(db.concurrencySet(q, bad), sqlq.MisuseError);
    assert.throws(() => db.concurrencySet(q, "3"), TypeError);
    assert.equal(await db.concurrencyGet(q), 2);
    await db.concurrencySet(q, 0);
    assert.equal((await db.claim(q, 10)).length, 1);
  });
});

test("rateSet and rateGet", async () => {
  await withQueue(async (db, q) => {
    assert.deepEqual(await db.rateGet(q), { maxStarts: 0, period: 0 });
    await db.enqueueBatch(q, ["1", "2", "3", "4"]);
    await db.rateSet(q, 2, 60);
    assert.deepEqual(await db.rateGet(q), { maxStarts: 2, period: 60 });
    assert.equal((await db.claim(q, 10)).length, 2);
    assert.deepEqual(await db.claim(q, 10), []);
    for (const [n, period] of [[-1, 1], [100001, 1], [1, 0], [1, -1], [1, 1e9], [1, NaN], [1, Infinity]]) {
      await assert.rejects(db.rateSet(q, n, period), sqlq.MisuseError);
    }
    assert.throws(() => db.rateSet(q, "3", 1), TypeError);
    assert.throws(() => db.rateSet(q, 3, "1s"), TypeError);
    assert.deepEqual(await db.rateGet(q), { maxStarts: 2, period: 60 });
    await db.rateSet(q, 3, 0.5);
    assert.deepEqual(await db.rateGet(q), { maxStarts: 3, period: 0.5 });
    await db.rateSet(q, 0);
    assert.deepEqual(await db.rateGet(q), { maxStarts: 0, period: 0 });
    assert.equal((await db.claim(q, 10)).length, 2);
  });
});

test("groupLimitSet and groupLimitGet", async () => {
  await withQueue(async (db, q) => {
    assert.equal(await db.groupLimitGet(q), 1);
    const ids = [];
    for (let i = 0; i < 4; i++) ids.push((await db.enqueue(q, String(i), { groupKey: "g" })).id);
    assert.deepEqual((await db.claim(q, 10)).map((j) => j.id), ids.slice(0, 1));
    await db.groupLimitSet(q, 3);
    assert.equal(await db.groupLimitGet(q), 3);
    assert.deepEqual((await db.claim(q, 10)).map((j) => j.id), ids.slice(1, 3));
    for (const bad of [0, -1, 1000001]) await assert.rejects(db.groupLimitSet(q, bad), sqlq.MisuseError);
    assert.throws(() => db.groupLimitSet(q, "3"), TypeError);
    assert.equal(await db.groupLimitGet(q), 3);
  });
});

test("fairSet and fairGet", async () => {
  await withQueue(async (db, q) => {
    assert.equal(await db.fairGet(q), false);
    for (let i = 0; i < 5; i++) await db.enqueue(q, `a${i}`, { groupKey: "a" });
    await db.enqueue(q, "b0", { groupKey: "b" });
    await db.groupLimitSet(q, 1000);
    await db.fairSet(q, true);
    assert.equal(await db.fairGet(q), true);
    const jobs = await db.claim(q, 3);
    assert.deepEqual(jobs.map((j) => j.payload.toString()), ["a0", "b0", "a1"]);
    assert.throws(() => db.fairSet(q, 1), TypeError);
    await db.fairSet(q, false);
    assert.equal(await db.fairGet(q), false);
  });
});

test("enqueueBatch with after: a fan-out and its fan-in", async () => {
  await withQueue(async (db, q) => {
    const batch = await db.enqueueBatch(q, ["a", "b"]);
    const [last] = await db.enqueueBatch(q, ["fan-in"], { after: batch });
    const listed = (await db.list(q)).filter((j) => j.id === last);
    assert.equal(listed[0].state, sqlq.state.WAITING);
    const jobs = await db.claim(q, 10);
    assert.deepEqual(jobs.map((j) => j.payload.toString()).sort(), ["a", "b"]);
    await db.ack(jobs[0]);
    assert.deepEqual(await db.claim(q, 10), []);
    await db.ack(jobs[1]);
    const [job] = await db.claim(q, 10);
    assert.equal(job.id, last);
    await db.ack(job);
    for (const bad of [[], [0], [-3]]) await assert.rejects(db.enqueueBatch(q, ["x"], { after: bad }), sqlq.MisuseError);
    await assert.rejects(db.enqueueBatch(q, ["x"], { after: [last + 1e6] }), sqlq.NotfoundError);
    assert.throws(() => db.enqueueBatch(q, ["x"], { after: ["1"] }), TypeError);
    assert.throws(() => db.enqueueBatch(q, ["x"], { after: 5 }), TypeError);
    assert.deepEqual(await db.list(q), []);
  });
});

test("cancel: ready and running jobs become dead, cancelled; the holder's ack is stale", async () => {
  await withQueue(async (db, q) => {
    const [done, running, ready] = await db.enqueueBatch(q, ["done", "running", "ready"]);
    const [first] = await db.claim(q, 1);
    assert.equal(first.id, done);
    await db.ack(first);
    const [job] = await db.claim(q, 1);
    assert.equal(job.id, running);
    assert.equal(await db.cancel([ready, done, running, running, 1e12]), 2);
    await assert.rejects(db.ack(job), sqlq.StaleError);
    const dead = (await db.list(q)).map((j) => [j.id, j.state, j.lastError]).sort((a, b) => a[0] - b[0]);
    assert.deepEqual(dead, [[running, sqlq.state.DEAD, "cancelled"], [ready, sqlq.state.DEAD, "cancelled"]]);
    assert.equal(await db.cancel([running, ready]), 0);
    assert.equal(await db.cancel([]), 0);
    assert.deepEqual(await db.claim(q, 10), []);
    assert.throws(() => db.cancel(["1"]), TypeError);
    assert.throws(() => db.cancel(5), TypeError);
  });
});
