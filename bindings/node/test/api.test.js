// test/api.test.js -- the whole public API through the package, on the
// database of SQLQ_TEST_URL (else SQLite).
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const { sqlq, url, name, openDb, withQueue } = require("./helper");

test("version and status names", () => {
  assert.match(sqlq.version, /^\d+\.\d+\.\d+$/);
  assert.ok(sqlq.versionNumber >= 1000000);
  assert.equal(sqlq.statusName(sqlq.status.STALE), "SQLQ_STALE");
});

test("enqueue, claim and ack keep binary payloads intact", async () => {
  await withQueue(async (db, q) => {
    const bytes = Buffer.from([0, 1, 2, 255, 0, 10, 13]);
    const a = await db.enqueue(q, bytes, { priority: 5 });
    const b = await db.enqueue(q, "héllo");
    assert.equal(a.duplicate, false);
    assert.ok(b.id > a.id);
    const jobs = await db.claim(q, 10, { lease: 60 });
    assert.equal(jobs.length, 2);
    assert.deepEqual(jobs[0].payload, bytes);
    assert.equal(jobs[0].priority, 5);
    assert.equal(jobs[1].payload.toString("utf8"), "héllo");
    assert.equal(typeof jobs[0].token, "bigint");
    assert.equal(jobs[0].queue, q);
    assert.equal(jobs[0].attempts, 1);
    await db.ack(jobs[0]);
    await db.ack(jobs[1].id, jobs[1].token);
    await assert.rejects(db.ack(jobs[0]), sqlq.StaleError);
    assert.deepEqual(await db.claim(q, 10), []);
  });
});

test("enqueueBatch, dedupe keys, ackBatch with a stale token", async () => {
  await withQueue(async (db, q) => {
    const ids = await db.enqueueBatch(q, ["a", Buffer.from("b"), { payload: "c", dedupeKey: "k" }]);
    assert.equal(ids.length, 3);
    const dup = await db.enqueue(q, "d", { dedupeKey: "k" });
    assert.deepEqual(dup, { id: ids[2], duplicate: true });
    const jobs = await db.claim(q, 3);
    assert.deepEqual(jobs.map((j) => j.payload.toString()), ["a", "b", "c"]);
    const refs = jobs.map((j) => ({ id: j.id, token: j.token }));
    refs[1].token = 12345n;
    assert.equal(await db.ackBatch(refs), 2);
    assert.equal((await db.stats(q))[0].running, 1);
  });
});

test("fail, release, touch, list, retry", async () => {
  await withQueue(async (db, q) => {
    await db.enqueue(q, "x", { maxAttempts: 1 });
    let [job] = await db.claim(q, 1);
    const until = await db.touch(job, 120);
    assert.ok(until >= job.leaseUntilUs);
    await db.release(job, 0);
    [job] = await db.claim(q, 1);
    assert.equal(job.attempts, 1, "release does not count the attempt");
    await db.fail(job, "it broke", { backoff: 0.5 });
    const dead = await db.list(q, { state: sqlq.state.DEAD });
    assert.equal(dead.length, 1);
    assert.equal(dead[0].lastError, "it broke");
    assert.equal(dead[0].state, sqlq.state.DEAD);
    assert.equal(await db.retry(q), 1);
    [job] = await db.claim(q, 1);
    await db.fail(job.id, job.token, null, { dead: true });
    assert.equal((await db.stats(q))[0].dead, 1);
    assert.equal(await db.retry(q, [job.id]), 1);
    assert.equal((await db.list(q, { limit: 10 })).length, 1);
  });
});

test("pause and resume", async () => {
  await withQueue(async (db, q) => {
    await db.enqueue(q, "x");
    await db.pause(q);
    try {
      await assert.rejects(db.claim(q, 1), (e) => e instanceof sqlq.PausedError && e.code === "SQLQ_PAUSED");
      assert.equal((await db.stats(q))[0].paused, true);
    } finally {
      await db.resume(q);
    }
    assert.equal((await db.claim(q, 1)).length, 1);
  });
});

test("transactions commit or roll back", async () => {
  await withQueue(async (db, q) => {
    const r = await db.transaction(async (tx) => {
      await tx.enqueue(q, "kept");
      return 42;
    });
    assert.equal(r, 42);
    await assert.rejects(
      db.transaction(async (tx) => {
        await tx.enqueue(q, "dropped");
        throw new Error("no");
      }),
      /no/,
    );
    const jobs = await db.claim(q, 10);
    assert.deepEqual(jobs.map((j) => j.payload.toString()), ["kept"]);
    await db.begin();
    await assert.rejects(db.begin(), sqlq.MisuseError);
    await db.rollback();
  });
});

test("locks exclude other handles and are released", async () => {
  const a = await openDb();
  const b = await sqlq.open(url());
  const lockName = Buffer.from(`${name("lock")}\0bytes`);
  try {
    const l = await a.lockAcquire(lockName, 0);
    assert.equal(l.held(), true);
    await l.check(5);
    await assert.rejects(b.lockAcquire(lockName, 0), sqlq.BusyError);
    await l.unlock();
    assert.equal(l.held(), false);
    await assert.rejects(l.check(1), sqlq.MisuseError);
    await l.unlock();
    const got = await b.withLock(lockName, 5, async (lk) => lk.held());
    assert.equal(got, true);
    await a.transaction(async (tx) => {
      await tx.lockXact(lockName, 0);
      await assert.rejects(b.lockAcquire(lockName, 0), sqlq.BusyError);
    });
    const again = await b.lockAcquire(lockName, 5);
    await b.close();
    assert.equal(again.held(), false, "closing the handle releases its locks");
    await assert.rejects(again.check(1), sqlq.MisuseError);
  } finally {
    await a.close();
    await b.close();
  }
});

test("rings", async () => {
  const db = await openDb();
  const ring = name("ring");
  try {
    await db.ringCreate(ring, 3);
    assert.equal(await db.ringPush(ring, "one"), 1);
    assert.equal(await db.ringPushBatch(ring, ["two", Buffer.from([0]), "four"]), 2);
    const all = await db.ringRead(ring);
    assert.deepEqual(all.map((e) => e.seq), [2, 3, 4]);
    assert.deepEqual(all[1].payload, Buffer.from([0]));
    assert.equal((await db.ringRead(ring, 3, 10)).length, 1);
    assert.equal(await db.ringWait(ring, 3, 0), "ready");
    assert.equal(await db.ringWait(ring, 4, 0.05), "timeout");
    await db.ringDrop(ring);
    await assert.rejects(db.ringRead(ring), sqlq.NotFoundError);
  } finally {
    await db.close();
  }
});

test("pools", async () => {
  const db = await openDb();
  const pool = name("pool");
  try {
    assert.equal(await db.poolAdd(pool, "k1"), true);
    assert.equal(await db.poolAdd(pool, "k1"), false);
    await db.poolAdd(pool, "k2");
    assert.deepEqual((await db.poolList(pool)).map((i) => i.item), ["k1", "k2"]);
    const a = await db.poolNext(pool, 60);
    const b = await db.poolNext(pool, 60);
    assert.notEqual(a.item, b.item);
    await assert.rejects(db.poolNext(pool, 60), sqlq.BusyError);
    await db.poolRelease(pool, a);
    await assert.rejects(db.poolRelease(pool, a.item, a.token), sqlq.StaleError);
    assert.equal((await db.poolNext(pool, 0)).item, a.item);
    await db.poolRemove(pool, "k1");
    await db.poolRemove(pool, "k2");
    await assert.rejects(db.poolList(pool), sqlq.NotFoundError);
  } finally {
    await db.close();
  }
});

test("subscriptions of a missing table", async () => {
  const db = await openDb();
  try {
    await assert.rejects(db.subscribe("no_such_table_node", sqlq.ON_INSERT, name("tag")), sqlq.NotFoundError);
    assert.ok(Array.isArray(await db.subscriptions()));
  } finally {
    await db.close();
  }
});

test("wait is woken by an enqueue and by interrupt, without blocking the event loop", async () => {
  const a = await openDb();
  const b = await sqlq.open(url());
  const q = name("q");
  try {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    const w = a.wait(q, 30);
    await new Promise((r) => setTimeout(r, 100));
    assert.ok(ticks > 0, "the event loop ran while the wait was on");
    await b.enqueue(q, "x");
    assert.equal(await w, "ready");
    clearInterval(timer);
    await a.purge(q);
    const w2 = a.wait(q, 30);
    await new Promise((r) => setTimeout(r, 50));
    a.interrupt();
    assert.equal(await w2, "interrupted");
  } finally {
    await a.close();
    await b.close();
  }
});

test("health lists the backend's items", async () => {
  await withQueue(async (db, q) => {
    await db.enqueue(q, "x");
    const names = {
      sqlite: ["wal_bytes", "checkpoint_starved_frames", "database_bytes"],
      postgres: ["oldest_xmin_age", "oldest_xmin_xacts", "dead_rows", "table_bytes"],
      mysql: ["history_list_length", "oldest_transaction_age", "table_bytes"],
      firebird: ["oldest_transaction_gap", "oldest_active_gap", "oldest_snapshot_gap", "database_bytes"],
    };
    const items = await db.health();
    assert.deepEqual(
      items.map((h) => h.name),
      names[db.backend],
    );
    for (const h of items) {
      assert.ok(h.value >= 0 && h.threshold > 0 && h.unit.length > 0);
      assert.equal(h.over, h.value > h.threshold);
      assert.ok(h.holder === null || typeof h.holder === "string");
    }
  });
});

test("summary counts each state up to its limit", async () => {
  await withQueue(async (db, q) => {
    for (let i = 0; i < 4; i++) await db.enqueue(q, "r");
    await db.enqueue(q, "s", { delay: 3600 });
    await db.fail((await db.claim(q, 1))[0], "boom", { dead: true });
    await db.claim(q, 1);
    let [s] = await db.summary({ queue: q });
    assert.deepEqual(
      { ...s, oldestReadyAge: 0 },
      { queue: q, ready: 2, scheduled: 1, running: 1, dead: 1, more: [], paused: false, oldestReadyAge: 0 },
    );
    assert.ok(typeof s.oldestReadyAge === "number" && s.oldestReadyAge >= 0);
    [s] = await db.summary({ queue: q, limit: 1 });
    assert.deepEqual([s.ready, s.scheduled, s.running, s.dead, s.more], [1, 1, 1, 1, ["ready"]]);
    assert.ok((await db.summary()).some((x) => x.queue === q));
    await db.purge(q);
    await db.pause(q);
    [s] = await db.summary({ queue: q, limit: 10 });
    assert.equal(s.paused, true);
    assert.equal(s.oldestReadyAge, null, "nothing is due");
    await db.resume(q);
  });
});

test("locks lists a lock held by another handle under its lockKey", async () => {
  const db = await openDb();
  const other = await sqlq.open(url());
  const plain = name("listed");
  const odd = Buffer.concat([Buffer.from(plain), Buffer.from([0, 0xff])]);
  try {
    assert.equal(await db.lockKey(plain), await db.lockKey(Buffer.from(plain)));
    assert.notEqual(await db.lockKey(odd), await db.lockKey(plain));
    for (const lockName of [plain, odd]) {
      const key = await db.lockKey(lockName);
      assert.equal(typeof key, "bigint");
      const held = await other.lockAcquire(lockName, 5);
      if (db.backend === "firebird") {
        await assert.rejects(db.locks(), sqlq.UnavailableError);
        await held.unlock();
        return;
      }
      const found = (await db.locks({ limit: 10000 })).filter((e) => e.key === key);
      assert.equal(found.length, 1);
      const [e] = found;
      const raw = Buffer.from(lockName);
      assert.ok(e.name === null || e.name.equals(raw));
      if (db.backend === "mysql" && lockName === plain) assert.ok(e.name.equals(raw), "a plain name is GET_LOCK's own");
      if (e.expiresAtUs === 0) {
        assert.equal(e.fence, 0n);
        if (db.backend !== "sqlite") assert.ok(e.pid > 0 && typeof e.holder === "string");
      }
      await held.unlock();
      assert.equal((await db.locks({ limit: 10000 })).filter((x) => x.key === key).length, 0);
    }
    const three = [];
    for (let i = 0; i < 3; i++) three.push(await other.lockAcquire(`${plain}-${i}`, 5));
    assert.equal((await db.locks({ limit: 1 })).length, 1);
    assert.ok((await db.locks({ limit: 10000 })).length >= 3);
    for (const l of three) await l.unlock();
  } finally {
    await other.close();
    await db.close();
  }
});

test("rings and pools are listed by name after a name", async () => {
  const db = await openDb();
  const prefix = name("list");
  const rings = [1, 2, 3].map((i) => `${prefix}-r${i}`);
  const pool = `${prefix}-p`;
  try {
    for (let i = 1; i <= 3; i++) {
      await db.ringCreate(rings[i - 1], i);
      await db.ringPushBatch(rings[i - 1], Array(i + 1).fill("x"));
    }
    const page = await db.rings({ after: prefix, limit: 2 });
    assert.deepEqual(page.map((r) => r.name), rings.slice(0, 2));
    assert.deepEqual([page[0].capacity, page[0].entries, page[0].lastSeq], [1, 1, 2]);
    assert.ok(page[0].createdAtUs > 0);
    const [last] = await db.rings({ after: page[1].name, limit: 1 });
    assert.deepEqual([last.name, last.capacity, last.entries, last.lastSeq], [rings[2], 3, 3, 4]);
    const names = (await db.rings({ limit: 10000 })).map((r) => r.name);
    assert.ok(rings.every((r) => names.includes(r)));
    for (let i = 1; i < names.length; i++) assert.ok(Buffer.compare(Buffer.from(names[i - 1]), Buffer.from(names[i])) < 0);
    for (const r of rings) await db.ringDrop(r);
    assert.equal((await db.rings({ after: prefix })).filter((r) => r.name.startsWith(prefix)).length, 0);

    await db.poolAdd(pool, "a");
    await db.poolAdd(pool, "b");
    const item = await db.poolNext(pool, 60);
    const [p] = await db.pools({ after: prefix, limit: 1 });
    assert.deepEqual([p.name, p.items, p.held], [pool, 2, 1]);
    assert.ok(p.lastUsedAtUs > 0);
    await db.poolRelease(pool, item);
    assert.equal((await db.pools({ after: prefix, limit: 1 }))[0].held, 0);
    await db.poolRemove(pool, "a");
    await db.poolRemove(pool, "b");
    assert.equal((await db.pools({ after: prefix })).filter((x) => x.name === pool).length, 0);
  } finally {
    await db.close();
  }
});
