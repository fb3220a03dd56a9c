// test/helper.js -- what every test file shares: the database under test
// (SQLQ_TEST_URL, else a fresh SQLite file) and unique queue names, so
// that the files may run one after another on one server.
"use strict";
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const sqlq = require("..");

let dir = null;
/** The URL of the database under test. */
function url() {
  if (process.env.SQLQ_TEST_URL) return process.env.SQLQ_TEST_URL;
  if (!dir) {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "sqlq-node-"));
    process.on("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
  }
  return `sqlite:${path.join(dir, "test.db")}`;
}

let n = 0;
/** A queue (or ring, pool, lock) name no other test uses. */
function name(what) {
  return `node_${what}_${process.pid}_${++n}`;
}

/** Open the database under test with its schema in place. */
async function openDb() {
  const db = await sqlq.open(url());
  await db.init();
  return db;
}

/** Run fn(db, queue) on the database under test with a fresh queue, which
 * is purged afterwards, and close the handle. */
async function withQueue(fn) {
  const db = await openDb();
  const q = name("q");
  try {
    return await fn(db, q);
  } finally {
    await db.purge(q);
    await db.close();
  }
}

/** Poll fn() until it resolves truthy; fail after limitMs. */
async function until(fn, limitMs, what) {
  const end = Date.now() + limitMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

module.exports = { sqlq, url, name, openDb, withQueue, until };
