#!/usr/bin/env python3
"""python_worker.py -- the Python package's worker loop, measured as `sqlq bench` measures.

Usage: SQLQ_LIBRARY=build/tests/python/libsqlq.so.1 PYTHONPATH=bindings/python \\
       python3 bench/python_worker.py [--url URL] [--jobs N] [--workers W] [--batch B]
                                      [--payload BYTES] [--mode threads|asyncio]
                                      [--latency-samples K] [--queue NAME]

Throughput (as `sqlq bench`'s jobs_per_s): a sqlq.Worker with W slots (threads, or
asyncio tasks), each claiming B jobs at a time and acking them with one
sqlq_ack_batch, runs a no-op handler; once its slots wait, a producer thread with
its own handle enqueues N jobs of BYTES bytes, B per enqueue_batch.  jobs_per_s is
N / (first enqueue to the last ack).

Latency (--latency-samples K, default 0): the W slots are idle; the producer inserts
one job with a plain SQL INSERT on its own connection of the backend's Python driver
(sqlite3, psycopg, MySQLdb: sqlq.sql.enqueue, autocommit), and the time runs from
just before that INSERT to the handler being called.  It waits for the handler,
pauses 1 ms, and does it again, K times; p50, p90 and p99 by nearest rank.

The URL defaults to a fresh SQLite file in a temporary directory.  Prints one JSON
object: backend, jobs, workers, batch, mode, enqueue_per_s, jobs_per_s, latency_ms,
and insert_ms (the INSERT's own time, its durable commit included, p50/p90/p99).
"""

import argparse
import asyncio
import json
import sys
import tempfile
import threading
import time
import urllib.parse

import sqlq


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--url")
    p.add_argument("--jobs", type=int, default=100000)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--batch", type=int, default=100)
    p.add_argument("--payload", type=int, default=16)
    p.add_argument("--mode", choices=("threads", "asyncio"), default="threads")
    p.add_argument("--latency-samples", type=int, default=0)
    p.add_argument("--queue", default="pybench")
    return p.parse_args()


def start(worker, mode):
    """Run worker in a thread of its own (its event loop too, in asyncio mode)."""
    def target():
        if mode == "asyncio":
            asyncio.run(worker.run_async(signals=False))
        else:
            worker.run(signals=False)
    t = threading.Thread(target=target, daemon=True)
    t.start()
    deadline = time.monotonic() + 30
    while len(worker._dbs) < worker.concurrency:  # every slot connected
        if time.monotonic() > deadline or not t.is_alive():
            sys.exit("python_worker.py: the worker did not start")
        time.sleep(0.01)
    time.sleep(0.2)  # and waiting
    return t


def throughput(args, producer):
    worker = sqlq.Worker(args.url, args.queue, lambda job: None, concurrency=args.workers,
                         batch=args.batch)
    t = start(worker, args.mode)
    payload = b"x" * args.payload
    chunk = [payload] * args.batch
    t0 = time.perf_counter()
    left = args.jobs
    while left > 0:
        producer.enqueue_batch(args.queue, chunk if left >= args.batch else chunk[:left])
        left -= args.batch
    t_enq = time.perf_counter()
    while worker.acked < args.jobs:
        if not t.is_alive():
            sys.exit("python_worker.py: the worker stopped early")
        time.sleep(0.0005)
    t1 = time.perf_counter()
    worker.stop()
    t.join(60)
    return args.jobs / (t_enq - t0), args.jobs / (t1 - t0)


def driver_connection(url):
    """An autocommit DB-API connection of the backend's Python driver."""
    if url.startswith("sqlite:"):
        import sqlite3
        return sqlite3.connect(url[len("sqlite:"):], isolation_level=None)
    if url.startswith(("postgres://", "postgresql://")):
        import psycopg
        return psycopg.connect(url, autocommit=True)
    if url.startswith(("mysql://", "mariadb://")):
        import MySQLdb
        u = urllib.parse.urlsplit(url)
        conn = MySQLdb.connect(host=u.hostname, port=u.port, user=u.username,
                               password=u.password or "", database=u.path.lstrip("/"))
        conn.autocommit(True)
        return conn
    sys.exit(f"python_worker.py: no Python driver for {url.split(':')[0]}")


def latency(args):
    called = threading.Event()
    stamp = [0.0]

    def handler(job):
        stamp[0] = time.perf_counter()
        called.set()

    worker = sqlq.Worker(args.url, args.queue, handler, concurrency=args.workers,
                         batch=args.batch)
    t = start(worker, args.mode)
    conn = driver_connection(args.url)
    samples = []
    inserts = []
    for _ in range(args.latency_samples):
        called.clear()
        t0 = time.perf_counter()
        sqlq.sql.enqueue(conn, args.queue, b"x" * args.payload)
        inserts.append((time.perf_counter() - t0) * 1000)
        if not called.wait(30):
            sys.exit("python_worker.py: a job was not handled within 30 s")
        samples.append((stamp[0] - t0) * 1000)
        time.sleep(0.001)
    conn.close()
    worker.stop()
    t.join(60)
    return percentiles(samples), percentiles(inserts)


def percentiles(samples):
    """p50, p90 and p99 of samples by nearest rank."""
    samples = sorted(samples)

    def rank(p):
        return round(samples[max(0, -(-len(samples) * p // 100) - 1)], 3)
    return {"p50": rank(50), "p90": rank(90), "p99": rank(99)}


def main():
    args = parse_args()
    tmp = None
    if not args.url:
        tmp = tempfile.TemporaryDirectory(prefix="sqlq-pybench-")
        args.url = f"sqlite:{tmp.name}/bench.db"
    with sqlq.open(args.url) as producer:
        producer.init()
        producer.purge(args.queue)
        enq, jobs = throughput(args, producer)
        lat, insert = latency(args) if args.latency_samples else (None, None)
        producer.purge(args.queue)
        backend = producer.backend
    print(json.dumps({"backend": backend, "jobs": args.jobs, "workers": args.workers,
                      "batch": args.batch, "mode": args.mode, "enqueue_per_s": round(enq),
                      "jobs_per_s": round(jobs), "latency_ms": lat, "insert_ms": insert,
                      "payload": args.payload, "python": sys.version.split()[0]}))
    if tmp:
        tmp.cleanup()


if __name__ == "__main__":
    main()
