// test/garbage.test.js -- wrong types, bad URLs, closed handles: each is a
// TypeError thrown at once or a rejected promise, never a crash.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const { sqlq, url, name, openDb } = require("./helper");

test("open refuses wrong types and bad URLs", async () => {
  for (const bad of [undefined, null, 42, {}, ["sqlite:x"], Buffer.from("sqlite:x")]) {
    await assert.rejects(sqlq.open(bad), TypeError);
  }
  await assert.rejects(sqlq.open("sqlite:\0x"), TypeError);
  await assert.rejects(sqlq.open("nosuch://x"), (e) => e instanceof sqlq.UnavailableError && e.status === 9);
  await assert.rejects(sqlq.open("postgres://"), sqlq.SqlqError);
  await assert.rejects(sqlq.open("postgres://u:secret@127.0.0.1:1/db"), (e) => {
    assert.ok(e instanceof sqlq.UnavailableError);
    assert.ok(!e.message.includes("secret"), "no password in the message");
    return true;
  });
  await assert.rejects(sqlq.open(url(), { payloadLimit: -1 }), TypeError);
  await assert.rejects(sqlq.open(url(), { busyTimeout: "soon" }), TypeError);
  await assert.rejects(sqlq.open(url(), 7), TypeError);
});

test("calls refuse wrong types with a TypeError", async () => {
  const db = await openDb();
  try {
    const q = name("q");
    const wrong = [
      () => db.enqueue(42, "x"),
      () => db.enqueue(q, 42),
      () => db.enqueue(q, { toString: () => "x" }),
      () => db.enqueue(q, "x", { priority: 1.5 }),
      () => db.enqueue(q, "x", { priority: "high" }),
      () => db.enqueue(q, "x", { dedupeKey: 5 }),
      () => db.enqueue(q, "x", 5),
      () => db.enqueue("a\0b", "x"),
      () => db.enqueueBatch(q, "x"),
      () => db.enqueueBatch(q, [1, 2]),
      () => db.claim(q, "ten"),
      () => db.claim(q, -1),
      () => db.claim(q, 2 ** 80),
      () => db.claim(q, NaN),
      () => db.claim(q, 1, { lease: "long" }),
      () => db.ack("one", 1n),
      () => db.ack(1, "token"),
      () => db.ack(1, 2n ** 70n),
      () => db.ack({}),
      () => db.ackBatch([{ id: 1 }]),
      () => db.ackBatch(5),
      () => db.fail(1, 1n, 42),
      () => db.release(1, 1n, "soon"),
      () => db.touch(1, 1n),
      () => db.wait(5),
      () => db.lockAcquire(5),
      () => db.ringCreate("r", "big"),
      () => db.ringPushBatch("r", [5]),
      () => db.poolAdd("p", 5),
      () => db.subscribe("t", "insert", "tag"),
      () => db.retry(q, "all"),
      () => db.retry(q, ["x"]),
      () => db.summary(5),
      () => db.summary({ queue: 5 }),
      () => db.summary({ queue: "a\0b" }),
      () => db.summary({ limit: "10" }),
      () => db.summary({ limit: 1.5 }),
      () => db.summary({ limit: -1 }),
      () => db.summary({ limit: 2 ** 80 }),
      () => db.locks({ limit: -1 }),
      () => db.locks({ limit: NaN }),
      () => db.locks("all"),
      () => db.lockKey(5),
      () => db.lockKey(null),
      () => db.rings({ after: 5 }),
      () => db.rings({ limit: "100" }),
      () => db.pools({ limit: -1 }),
      () => db.pools({ after: {} }),
    ];
    for (const f of wrong) assert.throws(f, TypeError, f.toString());
    assert.throws(() => new sqlq.Database({}).claim(q, 1), TypeError);
    assert.throws(() => new sqlq.NativeLock(), TypeError);
  } finally {
    await db.close();
  }
});

test("bad values reject with the library's status", async () => {
  const db = await openDb();
  try {
    const q = name("q");
    await assert.rejects(db.claim(q, 0), sqlq.MisuseError);
    await assert.rejects(db.claim("", 1), sqlq.MisuseError);
    await assert.rejects(db.enqueue("x".repeat(500), "x"), sqlq.MisuseError);
    await assert.rejects(db.enqueue(q, Buffer.alloc(db.payloadLimit + 1)), sqlq.TooBigError);
    await assert.rejects(db.fail(1, 1n, "e", { backoff: -1 }), sqlq.MisuseError);
    await assert.rejects(db.ack(123456789, 1n), sqlq.StaleError);
    await assert.rejects(db.commit(), sqlq.SqlqError);
    await assert.rejects(db.ringCreate(name("r"), 0), sqlq.MisuseError);
    await assert.rejects(db.lockXact("l", 0), sqlq.MisuseError);
    await assert.rejects(db.withLock("l", 0, "not a function"), TypeError);
    await assert.rejects(db.transaction(null), TypeError);
    for (const limit of [0, 1e9 + 1, 2 ** 53 - 1, 2n ** 62n]) await assert.rejects(db.summary({ limit }), sqlq.MisuseError, `${limit}`);
    for (const limit of [0, 10001, 2 ** 53 - 1]) {
      await assert.rejects(db.locks({ limit }), sqlq.MisuseError, `${limit}`);
      await assert.rejects(db.rings({ limit }), sqlq.MisuseError, `${limit}`);
      await assert.rejects(db.pools({ limit }), sqlq.MisuseError, `${limit}`);
    }
    await assert.rejects(db.summary({ queue: "" }), sqlq.MisuseError);
    await assert.rejects(db.lockKey(""), sqlq.MisuseError);
    await assert.rejects(db.lockKey(Buffer.alloc(1024 * 1024 + 1)), sqlq.TooBigError);
    // The handle still works after all of that.
    await db.enqueue(q, "ok");
    assert.equal((await db.claim(q, 1)).length, 1);
    await db.purge(q);
  } finally {
    await db.close();
  }
});

test("a closed handle rejects every call", async () => {
  const db = await openDb();
  const lock = await db.lockAcquire(name("lock"), 5);
  const pending = db.wait(name("q"), -1);
  await db.close();
  assert.equal(await pending, "interrupted", "close cuts a wait short");
  assert.equal(db.closed, true);
  await db.close();
  db.interrupt();
  for (const p of [db.claim("q", 1), db.enqueue("q", "x"), db.init(), db.stats(), db.wait("q", 0), lock.check(1),
                   db.summary(), db.locks(), db.lockKey("l"), db.rings(), db.pools()]) {
    await assert.rejects(p, (e) => e instanceof sqlq.MisuseError && e.code === "SQLQ_MISUSE");
  }
  await lock.unlock();
});

test("handles left open are closed by the garbage collector", { skip: !global.gc && "needs --expose-gc" }, async () => {
  for (let i = 0; i < 20; i++) await sqlq.open(url());
  global.gc();
  await new Promise((r) => setTimeout(r, 10));
  global.gc();
});

test("the worker refuses bad options", async () => {
  assert.throws(() => new sqlq.Worker(5, "q"), TypeError);
  assert.throws(() => new sqlq.Worker(url(), 5), TypeError);
  assert.throws(() => new sqlq.Worker(url(), "q", { batch: 0 }), TypeError);
  assert.throws(() => new sqlq.Worker(url(), "q", { lease: "long" }), TypeError);
  assert.throws(() => new sqlq.Worker(url(), "q", { backoff: -1 }), TypeError);
  assert.throws(() => new sqlq.Worker(url(), "q", { waitTimeout: NaN }), TypeError);
  assert.throws(() => new sqlq.Worker(url(), "q", { concurrency: 1.5 }), TypeError);
  assert.throws(() => new sqlq.Worker(url(), "q").handle("nope"), TypeError);
  await assert.rejects(new sqlq.Worker(url(), "q").start(), TypeError);
  const w = new sqlq.Worker("nosuch://x", "q", { handleSignals: false }).handle(async () => {});
  await assert.rejects(w.start(), sqlq.UnavailableError);
});
