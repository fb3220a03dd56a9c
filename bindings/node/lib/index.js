// sqlq -- the Node.js package of libsqlq: a durable job queue, named locks,
// wake-ups, rings and pools inside SQLite, PostgreSQL, MariaDB or Firebird.
//
// Every call that talks to the database returns a promise and runs on the
// libuv thread pool (see docs/node.md, "Threading model"); the calls of one
// Database run one at a time, in the order they were made.  A failed call
// rejects with a SqlqError subclass of its status; an argument of the wrong
// type throws a TypeError at once.
"use strict";

const { EventEmitter } = require("node:events");
const path = require("node:path");

const native = require(process.env.SQLQ_NODE_ADDON ||
  path.join(__dirname, "..", "build", "Release", "sqlq.node"));

/** Status codes of include/sqlq.h. */
const status = Object.freeze({
  OK: 0,
  ERROR: 1,
  MISUSE: 2,
  TOOBIG: 3,
  NOTFOUND: 4,
  STALE: 5,
  BUSY: 6,
  TIMEOUT: 7,
  INTERRUPTED: 8,
  UNAVAILABLE: 9,
  NOMEM: 10,
  SCHEMA: 11,
  PAUSED: 12,
  LOCK_LOST: 13,
});

/** Job states (sqlq_list's state filter and each row's state). */
const state = Object.freeze({ READY: 1, RUNNING: 2, DEAD: 3, SCHEDULED: 4, DONE: 5, WAITING: 6 });

/** Actions and flags of subscribe(), and the status of a subscription. */
const ON_INSERT = 0x1;
const ON_UPDATE = 0x2;
const ON_DELETE = 0x4;
const SUB_ROWS = 0x1;
const subscription = Object.freeze({ ACTIVE: 0, NO_TABLE: 1, NO_TRIGGER: 2, MOVED: 3 });

/** What a late scheduling pass does with missed ticks (cronAdd's missed), by name. */
const missed = Object.freeze({ skip: 0, once: 1, all: -1 });

/** The error of a failed call: .status is the code, .code its name. */
class SqlqError extends Error {
  constructor(message, code = status.ERROR) {
    super(message);
    this.status = code;
    this.code = native.statusName(code);
  }
}
SqlqError.prototype.name = "SqlqError";

const errors = { SqlqError };
const classes = [SqlqError];
for (const [key, code] of Object.entries(status)) {
  if (code === status.OK || code === status.ERROR) continue;
  const name = key
    .toLowerCase()
    .split("_")
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join("") + "Error";
  const cls = {
    [name]: class extends SqlqError {
      constructor(message, c = code) {
        super(message, c);
      }
    },
  }[name];
  cls.prototype.name = name;
  errors[name] = cls;
  classes[code] = cls;
}
classes[status.ERROR] = SqlqError;
native.setErrorClasses(classes);

/** The arguments of a call on one job, given as (job, ...rest) or (id, token, ...rest). */
function jobArgs(args) {
  const job = args[0];
  if (job !== null && typeof job === "object") return [job.id, job.token, ...args.slice(1)];
  return args;
}

/** An open database: one connection, see sqlq.open(). */
class Database {
  constructor(n) {
    this._n = n;
    /** The backend's name ("sqlite", "postgres", "mysql", "firebird"). */
    this.backend = n.backend;
    /** The URL with any password replaced by "***". */
    this.url = n.urlRedacted;
    /** The largest payload enqueue() accepts, in bytes. */
    this.payloadLimit = n.payloadLimit;
  }
  get closed() {
    return this._n.closed();
  }
  close() {
    return this._n.close();
  }
  interrupt() {
    this._n.interrupt();
  }
  init() {
    return this._n.init();
  }
  enqueue(queue, payload, options) {
    return this._n.enqueue(queue, payload, options);
  }
  /** Enqueue many jobs in one transaction; with options.after (job ids, libsqlq 1.1) each waits until all of those succeeded. */
  enqueueBatch(queue, jobs, options = {}) {
    return this._n.enqueueBatch(queue, jobs, options.after);
  }
  claim(queue, max = 1, options) {
    return this._n.claim(queue, max, options);
  }
  ack(...args) {
    return this._n.ack(...jobArgs(args));
  }
  ackBatch(jobs) {
    return this._n.ackBatch(jobs);
  }
  fail(...args) {
    return this._n.fail(...jobArgs(args));
  }
  release(...args) {
    return this._n.release(...jobArgs(args));
  }
  touch(...args) {
    return this._n.touch(...jobArgs(args));
  }
  wait(queue, timeout = -1) {
    return this._n.wait(queue, timeout);
  }
  pause(queue) {
    return this._n.pause(queue);
  }
  resume(queue) {
    return this._n.resume(queue);
  }
  stats(queue) {
    return this._n.stats(queue);
  }
  /** What holds the queues back (libsqlq 1.1, docs/health.md). */
  health() {
    return this._n.health();
  }
  /**
   * Counts per queue (libsqlq 1.1), or of options.queue, each stopping at
   * options.limit (default 10,000): more names the counts that stopped.
   */
  summary(options) {
    return this._n.summary(options);
  }
  list(queue, options) {
    return this._n.list(queue, options);
  }
  retry(queue, ids) {
    return this._n.retry(queue, ids);
  }

  // Cancel the jobs ids (libsqlq 1.1): each ready or running one becomes
  // dead, marked cancelled; resolves to how many.  The worker running one
  // finds out at its next call for it (ack, fail, touch reject with Stale).
  cancel(ids) {
    return this._n.cancel(ids);
  }
  purge(queue) {
    return this._n.purge(queue);
  }
  begin() {
    return this._n.begin();
  }
  commit() {
    return this._n.commit();
  }
  rollback() {
    return this._n.rollback();
  }
  /**
   * Run fn(db) inside a transaction: commit when its promise resolves,
   * roll back when it rejects (and reject with its error).  The handle
   * belongs to the transaction until then: calls made on it meanwhile from
   * elsewhere join the transaction.
   */
  async transaction(fn) {
    if (typeof fn !== "function") throw new TypeError("fn must be a function");
    await this._n.begin();
    let result;
    try {
      result = await fn(this);
    } catch (e) {
      await this._n.rollback().catch(() => {});
      throw e;
    }
    await this._n.commit();
    return result;
  }
  /** Take a lock; resolves with a Lock (check(), unlock()). */
  lockAcquire(name, timeout = -1) {
    return this._n.lockAcquire(name, timeout);
  }
  /** Hold the lock name while fn(lock) runs, then release it. */
  async withLock(name, timeout, fn) {
    if (typeof fn !== "function") throw new TypeError("fn must be a function");
    const lock = await this._n.lockAcquire(name, timeout);
    try {
      return await fn(lock);
    } finally {
      await lock.unlock();
    }
  }
  lockXact(name, timeout = -1) {
    return this._n.lockXact(name, timeout);
  }
  /** The named locks held now, by any process (libsqlq 1.1), at most options.limit (default 100). */
  locks(options) {
    return this._n.locks(options);
  }
  /** The key (a BigInt) that locks() lists the lock name by. */
  lockKey(name) {
    return this._n.lockKey(name);
  }
  ringCreate(ring, capacity) {
    return this._n.ringCreate(ring, capacity);
  }
  ringPush(ring, payload) {
    return this._n.ringPush(ring, payload);
  }
  ringPushBatch(ring, payloads) {
    return this._n.ringPushBatch(ring, payloads);
  }
  ringRead(ring, since = 0, limit = 0) {
    return this._n.ringRead(ring, since, limit);
  }
  ringWait(ring, since = 0, timeout = -1) {
    return this._n.ringWait(ring, since, timeout);
  }
  ringDrop(ring) {
    return this._n.ringDrop(ring);
  }
  /** The rings named after options.after (default: from the first), at most options.limit (default 100). */
  rings(options) {
    return this._n.rings(options);
  }
  poolAdd(pool, item) {
    return this._n.poolAdd(pool, item);
  }
  poolRemove(pool, item) {
    return this._n.poolRemove(pool, item);
  }
  poolList(pool) {
    return this._n.poolList(pool);
  }
  poolNext(pool, hold = 0) {
    return this._n.poolNext(pool, hold);
  }
  poolRelease(pool, item, token) {
    if (item !== null && typeof item === "object") return this._n.poolRelease(pool, item.item, item.token);
    return this._n.poolRelease(pool, item, token);
  }
  /** The pools named after options.after, as rings() lists rings. */
  pools(options) {
    return this._n.pools(options);
  }
  subscribe(table, actions, tag, flags = 0) {
    return this._n.subscribe(table, actions, tag, flags);
  }
  unsubscribe(table, tag) {
    return this._n.unsubscribe(table, tag);
  }
  subscriptions() {
    return this._n.subscriptions();
  }
  /**
   * Add (or replace) the schedule name (libsqlq 1.1): a job of payload on
   * queue at each tick of spec, in options.zone (a tz name, "UTC" by
   * default); options.missed is "skip" (the default), "once", "all" or the
   * most missed ticks a late pass enqueues.
   */
  cronAdd(name, spec, queue, payload = "", options = {}) {
    const { zone = "UTC", missed: m = "skip" } = options;
    if (typeof m === "string" && !Object.hasOwn(missed, m)) {
      return Promise.reject(new errors.MisuseError(`missed must be skip, once, all or a count, not '${m}'`));
    }
    return this._n.cronAdd(name, spec, queue, payload, zone, typeof m === "string" ? missed[m] : m);
  }
  cronRemove(name) {
    return this._n.cronRemove(name);
  }
  cronPause(name) {
    return this._n.cronPause(name);
  }
  cronResume(name) {
    return this._n.cronResume(name);
  }
  /** Every schedule by name; missed as a name ("skip", "once", "all") or a count. */
  async cronList() {
    const names = Object.fromEntries(Object.entries(missed).map(([k, v]) => [v, k]));
    return (await this._n.cronList()).map((s) => ({ ...s, missed: names[s.missed] ?? s.missed }));
  }
  /** One scheduling pass: {enqueued, nextAtUs}; nowAtUs 0 is the database's clock. */
  cronTick(nowAtUs = 0) {
    return this._n.cronTick(nowAtUs);
  }
  /** Keep queue's finished jobs keepFor seconds and/or the newest keepCount (0: no limit). */
  retentionSet(queue, { keepFor = 0, keepCount = 0 } = {}) {
    return this._n.retentionSet(queue, keepFor, keepCount);
  }
  /** {keepFor, keepCount} of queue, 0 where there is no limit. */
  retentionGet(queue) {
    return this._n.retentionGet(queue);
  }
  /** Delete one batch (at most max, 0: the default) of history rows past retention; resolves with how many. */
  historyPrune(queue, max = 0) {
    return this._n.historyPrune(queue, max);
  }
  /** Let at most maxRunning jobs of queue run at once, on every host (0: no limit). */
  concurrencySet(queue, maxRunning) {
    return this._n.concurrencySet(queue, maxRunning);
  }
  /** The concurrency limit of queue; 0 when it has none. */
  concurrencyGet(queue) {
    return this._n.concurrencyGet(queue);
  }
  /**
   * Let at most maxStarts jobs of queue start (be claimed) in any period of `period`
   * seconds (a sliding window, exact), on every host; maxStarts 0: no rate limit.
   */
  rateSet(queue, maxStarts, period = 0) {
    return this._n.rateSet(queue, maxStarts, period);
  }
  /** {maxStarts, period} (seconds) of queue's rate limit; 0 and 0 when it has none. */
  rateGet(queue) {
    return this._n.rateGet(queue);
  }
  /** Let at most perGroup jobs of one group key of queue run at once (1, the default: FIFO groups). */
  groupLimitSet(queue, perGroup) {
    return this._n.groupLimitSet(queue, perGroup);
  }
  /** The per-group limit of queue; 1 unless set. */
  groupLimitGet(queue) {
    return this._n.groupLimitGet(queue);
  }
  /** Make queue's claims take jobs round-robin across tenants (group keys), or not. */
  fairSet(queue, fair) {
    return this._n.fairSet(queue, fair);
  }
  /** Whether queue is fair; false unless set. */
  fairGet(queue) {
    return this._n.fairGet(queue);
  }
}

/** Open the database named by url; resolves with a Database. */
async function open(url, options) {
  return new Database(await native.open(url, options));
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * A worker loop on the event loop: claims jobs of one queue in batches,
 * calls the handler for each (at most `concurrency` at once), acks the
 * finished ones in batches and fails a job whose handler threw or
 * rejected, with the error's message.  Waiting for work (sqlq_wait) runs
 * on the thread pool, never on the event loop.  See docs/node.md.
 */
class Worker extends EventEmitter {
  constructor(url, queue, options = {}) {
    super();
    if (typeof url !== "string") throw new TypeError("url must be a string");
    if (typeof queue !== "string") throw new TypeError("queue must be a string");
    if (options === null || typeof options !== "object") throw new TypeError("options must be an object");
    const int = (v, name, dflt, lo, hi) => {
      if (v === undefined) return dflt;
      if (!Number.isInteger(v) || v < lo || v > hi) throw new TypeError(`${name} must be an integer from ${lo} to ${hi}`);
      return v;
    };
    this.url = url;
    this.queue = queue;
    this.batch = int(options.batch, "batch", 100, 1, 100000);
    this.concurrency = int(options.concurrency, "concurrency", this.batch, 1, 1000000);
    const seconds = (v, name, dflt, lo = 0) => {
      if (v === undefined) return dflt;
      if (typeof v !== "number" || !Number.isFinite(v) || v < lo) throw new TypeError(`${name} must be a number of seconds`);
      return v;
    };
    this.lease = seconds(options.lease, "lease", 30);
    this.backoff = seconds(options.backoff, "backoff", 0);
    this.waitTimeout = seconds(options.waitTimeout, "waitTimeout", 60, -Infinity);
    this.handleSignals = options.handleSignals ?? true;
    this.openOptions = options.open;
    this.ackConnections = int(options.ackConnections, "ackConnections", 2, 1, 64);
    /** Counts since start: jobs acked, failed and released at stop. */
    this.counts = { acked: 0, failed: 0, released: 0 };
    this._handler = null;
    this._local = []; // claimed jobs not yet started, from _head on
    this._head = 0;
    this._running = 0;
    this._acks = [];
    this._ackFree = []; // ack connections with no ackBatch in flight
    this._acking = new Set(); // the ackBatch calls in flight
    this._fails = new Set(); // fail() calls in flight
    this._kick = null; // resolves the claim loop's wait for room
    this._stopping = false;
    this._stopped = null;
    this._onSignal = () => this.stop().catch((e) => this._error(e));
  }

  /** Set the handler: fn(job) returning a promise (or throwing). */
  handle(fn) {
    if (typeof fn !== "function") throw new TypeError("the handler must be a function");
    this._handler = fn;
    return this;
  }

  /** Open the worker's connections and start claiming. */
  async start() {
    if (!this._handler) throw new TypeError("set a handler with handle() before start()");
    if (this._loop) throw new SqlqError("the worker was started already", status.MISUSE);
    const dbs = await Promise.all(
      Array.from({ length: 1 + this.ackConnections }, () => open(this.url, this.openOptions).catch((e) => e)),
    );
    const failed = dbs.find((d) => d instanceof Error);
    if (failed) {
      for (const d of dbs) if (d instanceof Database) await d.close();
      throw failed;
    }
    this._dbs = dbs;
    this._claimDb = dbs[0];
    this._ackDb = dbs[1];
    this._ackFree = dbs.slice(1);
    if (this.handleSignals) {
      process.once("SIGTERM", this._onSignal);
      process.once("SIGINT", this._onSignal);
    }
    this._loop = this._claimLoop();
  }

  /**
   * Stop: claim no more, give back the claimed jobs not yet started,
   * let the running handlers finish, ack them, close the connections.
   */
  stop() {
    if (!this._stopped) this._stopped = this._shutdown();
    return this._stopped;
  }

  _error(e) {
    if (this.listenerCount("error") > 0) this.emit("error", e);
    else console.error(`sqlq worker (${this.queue}): ${e && e.message}`);
  }

  _room() {
    return new Promise((resolve) => {
      this._kick = resolve;
    });
  }

  _wake() {
    const k = this._kick;
    if (k) {
      this._kick = null;
      k();
    }
  }

  /** Sleep ms, or less when _wake() is called. */
  _nap(ms) {
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        if (this._kick === done) this._kick = null;
        resolve();
      }, ms);
      const done = () => {
        clearTimeout(t);
        resolve();
      };
      this._kick = done;
    });
  }

  async _claimLoop() {
    const db = this._claimDb;
    const options = { lease: this.lease };
    let pause = 0; // after a failed claim, ms
    let idle = 0; // after a wait said "ready" but the claim found nothing, ms
    while (!this._stopping) {
      // At most one batch claimed ahead of the handlers.
      if (this._local.length - this._head >= this.batch) {
        await this._room();
        continue;
      }
      let jobs;
      try {
        jobs = await db.claim(this.queue, this.batch, options);
        if (jobs.length === 0 && !this._stopping) {
          // Nothing due: wait, and claim on the waiting thread the moment
          // something is.
          const r = await db._n.waitClaim(this.queue, this.waitTimeout, this.batch, options);
          jobs = r.jobs;
          if (jobs.length === 0 && r.state === "ready") {
            // A due job that cannot be claimed (its FIFO group is busy)
            // keeps the wait returning at once: back off, until a handler
            // finishes.
            idle = Math.min(1000, idle ? idle * 2 : 50);
            await this._nap(idle);
            continue;
          }
        }
        pause = 0;
      } catch (e) {
        if (e.status !== status.PAUSED) this._error(e);
        // Paused, or the database is away: try again later.
        pause = Math.min(1000, pause ? pause * 2 : 50);
        await this._nap(pause);
        continue;
      }
      if (jobs.length === 0) continue;
      idle = 0;
      if (this._head > 0 && this._head === this._local.length) {
        this._local = [];
        this._head = 0;
      }
      for (const j of jobs) this._local.push(j);
      this._dispatch();
    }
  }

  _dispatch() {
    while (this._running < this.concurrency && this._head < this._local.length && !this._stopping) {
      const job = this._local[this._head];
      this._local[this._head++] = undefined;
      this._run(job);
    }
  }

  _run(job) {
    this._running++;
    let p;
    try {
      p = Promise.resolve(this._handler(job));
    } catch (e) {
      p = Promise.reject(e);
    }
    p.then(
      () => this._finished(job, null),
      (e) => this._finished(job, e === undefined || e === null ? new Error(String(e)) : e),
    );
  }

  _finished(job, err) {
    this._running--;
    if (err === null) {
      this._acks.push(job);
      this._flushAcks();
    } else {
      const text = err instanceof Error ? err.message : String(err);
      const f = this._ackDb
        .fail(job.id, job.token, text, { backoff: this.backoff })
        .then(() => this.counts.failed++, (e) => this._error(e))
        .finally(() => this._fails.delete(f));
      this._fails.add(f);
    }
    this._dispatch();
    this._wake();
  }

  /** Send the finished jobs to ack on every ack connection that is free. */
  _flushAcks() {
    while (this._ackFree.length > 0 && this._acks.length > 0) {
      // At most one batch an ack: a DELETE of thousands of rows costs more
      // per row than several of a batch each.
      let refs = this._acks;
      if (refs.length > this.batch) {
        refs = this._acks.slice(0, this.batch);
        this._acks = this._acks.slice(this.batch);
      } else {
        this._acks = [];
      }
      const db = this._ackFree.pop();
      const p = db
        .ackBatch(refs)
        .then((n) => {
          this.counts.acked += n;
        }, (e) => this._error(e))
        .finally(() => {
          this._acking.delete(p);
          this._ackFree.push(db);
          this._flushAcks();
          this._wake();
        });
      this._acking.add(p);
    }
  }

  async _shutdown() {
    if (!this._loop) return;
    this._stopping = true;
    process.removeListener("SIGTERM", this._onSignal);
    process.removeListener("SIGINT", this._onSignal);
    this._claimDb.interrupt();
    this._wake();
    await this._loop;
    // Give back what was claimed but not started, for other workers.
    const rest = this._local.slice(this._head);
    this._local = [];
    this._head = 0;
    for (const job of rest) {
      try {
        await this._claimDb.release(job.id, job.token, 0);
        this.counts.released++;
      } catch (e) {
        this._error(e);
      }
    }
    // Let the running handlers finish, then the acks and fails they made.
    while (this._running > 0 || this._acking.size > 0 || this._acks.length > 0 || this._fails.size > 0) {
      if (this._acking.size > 0) await Promise.all([...this._acking]);
      else if (this._fails.size > 0) await Promise.all([...this._fails]);
      else if (this._acks.length > 0) this._flushAcks();
      else await this._room();
    }
    await Promise.all(this._dbs.map((d) => d.close()));
    this.emit("stopped");
  }
}

module.exports = {
  open,
  Database,
  Worker,
  status,
  state,
  subscription,
  ON_INSERT,
  ON_UPDATE,
  ON_DELETE,
  SUB_ROWS,
  statusName: native.statusName,
  version: native.version,
  versionNumber: native.versionNumber,
  NativeLock: native.NativeLock,
  ...errors,
};
