#!/usr/bin/env python3
"""sqlite_plain.py -- the work of `sqlq bench`, done by hand on plain SQLite.

A baseline for docs/benchmarks.md: one producer thread enqueues N jobs in
batches of B (one transaction per batch), W worker threads each claim up to
B jobs with one UPDATE ... RETURNING and delete them by id and token in a
second transaction: the two write transactions a sqlq worker makes per
round.  Every thread has its own connection.  The table, its indexes, the
statements, WAL mode, temp_store=MEMORY, the synchronous setting (NORMAL,
sqlq's default) and
the way a writer waits for the write lock (BEGIN IMMEDIATE, retried after
20 us, 40 us, ... up to 2 ms steps for at most 5 s) are those of sqlq's
SQLite backend (src/driver/sqlite.c, sqlite_sql.c), so that the difference
between this script and `sqlq bench` is the cost of the library -- and of
Python here, which counts against this script, not for it.

By default the statements are those a hand-written queue needs: a plain
INSERT, one UPDATE ... RETURNING per claim, a plain DELETE per ack.  sqlq
does more, for features this script lacks: its INSERT has ON CONFLICT ...
DO NOTHING RETURNING id (dedupe keys), each claim transaction first checks
the queue's paused flag and returns expired leases to the queue, the claim
tests the FIFO-group condition, and its DELETE has RETURNING (groups).
--sqlq-extras adds all of those, to compare like with like.

Usage: sqlite_plain.py [--jobs N] [--workers W] [--batch B]
                       [--payload BYTES] [--db PATH] [--sync MODE]
                       [--sqlq-extras] [--json]
Standard library only.
"""

import argparse
import json
import os
import random
import shutil
import sqlite3
import struct
import sys
import tempfile
import threading
import time

# The schema of sqlq's SQLite backend, reduced to the jobs and queues tables
# the measured path touches, with the same columns, indexes and pragmas.
SCHEMA = """
CREATE TABLE IF NOT EXISTS sqlq_jobs (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  queue        TEXT    NOT NULL CHECK (length(queue) BETWEEN 1 AND 128),
  state        TEXT    NOT NULL DEFAULT 'ready'
                       CHECK (state IN ('ready','running','dead')),
  priority     INTEGER NOT NULL DEFAULT 0,
  run_at       INTEGER NOT NULL DEFAULT (CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER)),
  attempts     INTEGER NOT NULL DEFAULT 0,
  max_attempts INTEGER NOT NULL DEFAULT 25 CHECK (max_attempts >= 0),
  lease_until  INTEGER,
  token        INTEGER,
  dedupe_key   TEXT,
  group_key    TEXT,
  payload      BLOB    NOT NULL DEFAULT x'',
  last_error   TEXT,
  created_at   INTEGER NOT NULL DEFAULT (CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER))
);
CREATE INDEX IF NOT EXISTS sqlq_jobs_claim ON sqlq_jobs (queue, priority DESC, run_at, id)
  WHERE state = 'ready';
CREATE INDEX IF NOT EXISTS sqlq_jobs_due ON sqlq_jobs (queue, run_at) WHERE state = 'ready';
CREATE INDEX IF NOT EXISTS sqlq_jobs_lease ON sqlq_jobs (queue, lease_until) WHERE state = 'running';
CREATE UNIQUE INDEX IF NOT EXISTS sqlq_jobs_dedupe ON sqlq_jobs (queue, dedupe_key)
  WHERE dedupe_key IS NOT NULL AND state IN ('ready','running');
CREATE INDEX IF NOT EXISTS sqlq_jobs_group ON sqlq_jobs (queue, group_key, id)
  WHERE group_key IS NOT NULL AND state IN ('ready','running');
CREATE TABLE IF NOT EXISTS sqlq_queues (
  queue  TEXT PRIMARY KEY CHECK (length(queue) BETWEEN 1 AND 128),
  paused INTEGER NOT NULL DEFAULT 0
);
"""

# sqlq's SQL clock (the function sqlq_now() it registers) in plain SQL:
# integer microseconds since the epoch, at millisecond resolution.
NOW_US = "CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER)"

# The claim condition sqlq adds for FIFO groups (GROUP_HEAD in sqlite_sql.c).
GROUP_HEAD = (
    " AND (j.group_key IS NULL OR NOT EXISTS (SELECT 1 FROM sqlq_jobs g"
    " WHERE g.queue = j.queue AND g.group_key = j.group_key"
    " AND g.state IN ('ready','running') AND g.id < j.id))"
)

ENQUEUE = (
    "INSERT INTO sqlq_jobs (queue, priority, run_at, max_attempts, dedupe_key,"
    " group_key, payload, created_at)"
    f" VALUES (?, 0, {NOW_US} + 0, 25, NULL, NULL, ?, {NOW_US})"
)
ENQUEUE_EXTRAS = (
    ENQUEUE + " ON CONFLICT (queue, dedupe_key) WHERE dedupe_key IS NOT NULL"
    " AND state IN ('ready','running') DO NOTHING RETURNING id"
)
PAUSED = "SELECT paused FROM sqlq_queues WHERE queue = ?"
REAP = (
    "UPDATE sqlq_jobs SET"
    " state = CASE WHEN attempts >= max_attempts THEN 'dead' ELSE 'ready' END,"
    " last_error = 'lease expired during attempt ' || attempts,"
    " token = NULL, lease_until = NULL"
    f" WHERE queue = ? AND state = 'running' AND lease_until <= {NOW_US}"
)


def claim_sql(extras):
    """The claim statement; with extras, sqlq's FIFO-group condition too."""
    return (
        "UPDATE sqlq_jobs SET state = 'running', attempts = attempts + 1,"
        f" token = ?, lease_until = {NOW_US} + ?"
        " WHERE id IN (SELECT j.id FROM sqlq_jobs j"
        f" WHERE j.queue = ? AND j.state = 'ready' AND j.run_at <= {NOW_US}"
        + (GROUP_HEAD if extras else "")
        + " ORDER BY j.priority DESC, j.run_at, j.id LIMIT ?)"
        " RETURNING id, priority, run_at, attempts, max_attempts, created_at,"
        " lease_until, group_key, dedupe_key, payload"
    )


ACK = "DELETE FROM sqlq_jobs WHERE id = ? AND token = ? AND state = 'running'"
ACK_EXTRAS = ACK + " RETURNING group_key IS NOT NULL"


def run_rows(con, sql, rows, returning):
    """Run sql once per row: with executemany, or one by one when it returns rows."""
    if not returning:
        con.executemany(sql, rows)
        return
    for row in rows:
        con.execute(sql, row).fetchall()

LEASE_US = 30 * 1000000


# How long a writer waits for the write lock, and its sleeps meanwhile,
# as sqlq's busy handler does.
BUSY_TIMEOUT_S = 5.0
BUSY_STEPS_S = [20e-6 * (1 << i) for i in range(7)] + [2e-3]


def connect(path, sync):
    """A connection like sqlq's: autocommit (explicit BEGIN), WAL, sync as given."""
    con = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None,
                          check_same_thread=False)
    con.execute("PRAGMA journal_mode = WAL")
    con.execute(f"PRAGMA synchronous = {sync}")
    con.execute("PRAGMA temp_store = MEMORY")
    # From here on, writers wait for the lock in begin_immediate().
    con.execute("PRAGMA busy_timeout = 0")
    return con


def begin_immediate(con):
    """BEGIN IMMEDIATE, retried while the database is locked, like sqlq's busy handler."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    step = 0
    while True:
        try:
            con.execute("BEGIN IMMEDIATE")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
        time.sleep(BUSY_STEPS_S[min(step, len(BUSY_STEPS_S) - 1)])
        step += 1


def write_tx(con, fn):
    """Run fn(con) in a write transaction; commit, or roll back and re-raise."""
    begin_immediate(con)
    try:
        result = fn(con)
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")
    return result


class Shared:
    """Counters and the wake-up the threads share (sqlq wakes in-process waiters the same way)."""

    def __init__(self, jobs, workers):
        self.jobs = jobs
        self.ready = threading.Barrier(workers + 1, timeout=60)
        self.done = 0
        self.last_ack = 0.0
        self.stop = False
        self.error = None
        self.lock = threading.Lock()
        self.work = threading.Condition(self.lock)

    def notify(self):
        with self.work:
            self.work.notify_all()

    def acked(self, n):
        with self.lock:
            self.done += n
            self.last_ack = time.monotonic()
            if self.done >= self.jobs:
                self.stop = True
                self.work.notify_all()

    def fail(self, exc):
        self.ready.abort()
        with self.work:
            self.error = self.error or exc
            self.stop = True
            self.work.notify_all()


def produce(args, path, shared, times):
    pad = b"x" * (args.payload - 8)
    enqueue = ENQUEUE_EXTRAS if args.sqlq_extras else ENQUEUE
    sent = 0
    con = None
    try:
        con = connect(path, args.sync)
        shared.ready.wait()  # like sqlq bench: start once every worker is connected
        times["t0"] = time.monotonic()
        while sent < args.jobs and not shared.stop:
            k = min(args.batch, args.jobs - sent)
            # Like sqlq bench: the first 8 bytes carry the enqueue time in µs.
            payload = struct.pack("<q", time.time_ns() // 1000) + pad
            rows = [(args.queue, payload)] * k
            write_tx(con, lambda c: run_rows(c, enqueue, rows, args.sqlq_extras))
            sent += k
            shared.notify()
    except (sqlite3.Error, threading.BrokenBarrierError) as exc:
        shared.fail(exc)
    times["t1"] = time.monotonic()
    if con:
        con.close()


def claim(con, args, sql):
    """One claim transaction; with --sqlq-extras, sqlq's paused check and reaping first."""
    def tx(c):
        if args.sqlq_extras:
            row = c.execute(PAUSED, (args.queue,)).fetchone()
            if row and row[0]:
                return []
            c.execute(REAP, (args.queue,))
        token = random.getrandbits(63) or 1
        rows = c.execute(sql, (token, LEASE_US, args.queue, args.batch)).fetchall()
        return [(r[0], token) for r in rows]
    return write_tx(con, tx)


def work(args, path, shared):
    sql = claim_sql(args.sqlq_extras)
    ack = ACK_EXTRAS if args.sqlq_extras else ACK
    con = None
    try:
        con = connect(path, args.sync)
        shared.ready.wait()
        while not shared.stop:
            refs = claim(con, args, sql)
            if not refs:
                with shared.work:
                    if not shared.stop:
                        shared.work.wait(0.1)
                continue
            write_tx(con, lambda c: run_rows(c, ack, refs, args.sqlq_extras))
            shared.acked(len(refs))
    except (sqlite3.Error, threading.BrokenBarrierError) as exc:
        shared.fail(exc)
    if con:
        con.close()


def run(args, path):
    con = connect(path, args.sync)
    con.executescript(SCHEMA)
    con.execute("DELETE FROM sqlq_jobs WHERE queue = ?", (args.queue,))
    con.close()
    shared = Shared(args.jobs, args.workers)
    times = {}
    workers = [threading.Thread(target=work, args=(args, path, shared))
               for _ in range(args.workers)]
    for w in workers:
        w.start()
    producer = threading.Thread(target=produce, args=(args, path, shared, times))
    producer.start()
    producer.join()
    for w in workers:
        w.join()
    if shared.error:
        raise shared.error
    return {
        "backend": "sqlite-plain-python",
        "jobs": args.jobs,
        "workers": args.workers,
        "batch": args.batch,
        "enqueue_per_s": round(args.jobs / (times["t1"] - times["t0"])),
        "jobs_per_s": round(args.jobs / (shared.last_ack - times["t0"])),
        "payload": args.payload,
        "sqlq_extras": args.sqlq_extras,
        "sync": args.sync,
        "wall_s": round(shared.last_ack - times["t0"], 3),
    }


def positive(lo, hi):
    def parse(text):
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}")
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"must be {lo} to {hi}")
        return v
    return parse


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--jobs", type=positive(1, 10**9), default=10000)
    p.add_argument("--workers", type=positive(1, 64), default=2)
    p.add_argument("--batch", type=positive(1, 10000), default=100)
    p.add_argument("--payload", type=positive(8, 1 << 20), default=16)
    p.add_argument("--queue", default="bench")
    p.add_argument("--db", help="SQLite file to use (default: a temporary one)")
    p.add_argument("--sync", default="NORMAL", choices=["OFF", "NORMAL", "FULL"],
                   help="PRAGMA synchronous (default: sqlq's default, NORMAL)")
    p.add_argument("--sqlq-extras", action="store_true",
                   help="also run what sqlq runs for its other features (see above)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    args = p.parse_args()

    tmpdir = None
    path = args.db
    if path is None:
        tmpdir = tempfile.mkdtemp(prefix="sqlq-plain-")
        path = os.path.join(tmpdir, "plain.db")
    try:
        res = run(args, path)
    except sqlite3.Error as exc:
        print(f"sqlite_plain: {exc}", file=sys.stderr)
        return 1
    finally:
        if tmpdir:
            shutil.rmtree(tmpdir, ignore_errors=True)
    if args.json:
        print(json.dumps(res))
    else:
        extras = "with" if args.sqlq_extras else "without"
        print(f"backend      {res['backend']} (sync {args.sync}, {extras} sqlq extras)")
        print(f"jobs         {args.jobs} (batch {args.batch}, payload {args.payload} B)")
        print(f"workers      {args.workers} threads")
        print(f"enqueue      {res['enqueue_per_s']} jobs/s")
        print(f"end to end   {res['jobs_per_s']} jobs/s (wall {res['wall_s']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
