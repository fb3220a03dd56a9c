"""A worker process for test_worker.py's SIGTERM test: handles the jobs of a queue,
appending each handled job's id to a file and sleeping a little per job, until a
SIGTERM stops it.  Usage: sigterm_worker.py URL QUEUE OUTFILE MODE (threads|asyncio)."""

import asyncio
import os
import sys
import time

import sqlq

url, queue, outfile, mode = sys.argv[1:5]
out = open(outfile, "a", buffering=1)
worker = sqlq.Worker(url, queue, concurrency=2, batch=10)

if mode == "asyncio":
    @worker.handler
    async def handle(job):
        await asyncio.sleep(0.005)
        out.write(f"{job.id}\n")
        out.flush()
        os.fsync(out.fileno())

    asyncio.run(worker.run_async())
else:
    @worker.handler
    def handle(job):
        time.sleep(0.005)
        out.write(f"{job.id}\n")
        out.flush()
        os.fsync(out.fileno())

    worker.run()
print(f"stopped: acked {worker.acked} released {worker.released}", file=sys.stderr)
