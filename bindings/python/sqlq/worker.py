"""The worker loop: claim jobs in batches, call a handler per job, ack in batches.

    w = sqlq.Worker("sqlite:app.db", "emails", concurrency=2, batch=100)

    @w.handler
    def handle(job):
        send(job.payload)

    w.run()            # threads; or: asyncio.run(w.run_async())

A handler that returns acks its job (in one sqlq_ack_batch per batch); one that
raises fails it with the exception's text, and the library retries it after a
backoff or makes it dead as its attempts say.  Raise Release(delay) to give it
back without counting the attempt, Fail(...) to choose the backoff or make it
dead at once.  stop(), SIGTERM and SIGINT stop claiming, let the running
handlers finish, ack what they finished and release the jobs of the batch that
had not started: nothing is lost.
"""

import asyncio
import functools
import inspect
import logging
import signal
import threading
import time

from ._core import Database
from .errors import Error, Interrupted, Paused, Unavailable

log = logging.getLogger("sqlq.worker")


class Release(Exception):
    """Raised by a handler: give the job back without counting the attempt; it is ready
    again after delay seconds."""

    def __init__(self, delay=0.0):
        super().__init__(f"released for {delay} s")
        self.delay = delay


class Fail(Exception):
    """Raised by a handler: fail the job with message; backoff (seconds, the base of the
    exponential backoff; None: the worker's), retry_now, or dead (no more attempts)."""

    def __init__(self, message, *, backoff=None, retry_now=False, dead=False):
        super().__init__(message)
        self.backoff = backoff
        self.retry_now = retry_now
        self.dead = dead


# The first and the longest pause after a wait said a job was due but the claim
# found none (due jobs whose group is busy), in seconds, as `sqlq work` has them.
IDLE_FIRST = 0.05
IDLE_MAX = 1.0


class _Slot:
    """What one slot remembers between claims."""

    __slots__ = ("expect_job", "idle")

    def __init__(self):
        self.expect_job = False  # the last wait said a job was due
        self.idle = 0.0  # the current back-off pause


def _error_text(exc):
    """The text a failed attempt keeps: the exception's type and message."""
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class Worker:
    """Handles the jobs of one queue with a handler.

    url and db_options open each slot's own connection (sqlq.open()).  concurrency
    is the number of slots (threads, or asyncio tasks each with a thread for its
    database calls), each claiming up to batch jobs at a time with a lease of lease
    seconds; backoff is the base of the retry backoff of failed jobs (seconds, 0:
    the library's 1 s).  idle_wait bounds one sqlq_wait in seconds (the loop waits
    again after it).
    """

    def __init__(self, url, queue, handler=None, *, concurrency=2, batch=100, lease=30.0,
                 backoff=0.0, idle_wait=60.0, **db_options):
        if not isinstance(queue, str) or not queue:
            raise TypeError("queue must be a non-empty str")
        if not isinstance(concurrency, int) or concurrency < 1:
            raise ValueError("concurrency must be an int >= 1")
        if not isinstance(batch, int) or not 1 <= batch <= 100000:
            raise ValueError("batch must be an int from 1 to 100000")
        self.url = url
        self.queue = queue
        self.concurrency = concurrency
        self.batch = batch
        self.lease = float(lease)
        self.backoff = float(backoff)
        self.idle_wait = float(idle_wait)
        self.db_options = db_options
        self._handler = handler
        self._stopping = False
        self._dbs = []
        self._dbs_lock = threading.Lock()
        self._opened = 0  # slots that opened their connection in this run
        self._counts_lock = threading.Lock()
        self.acked = 0
        self.failed = 0
        self.released = 0
        self.backoffs = 0  # pauses after a wait said a job was due that no claim got

    def handler(self, fn):
        """Decorator: fn(job) handles each job (a plain or an async function)."""
        self._handler = fn
        return fn

    @property
    def stopping(self):
        return self._stopping

    def stop(self):
        """Stop claiming; running handlers finish, unstarted jobs are released.  Safe to
        call from any thread, a handler or a signal handler."""
        self._stopping = True
        for db in list(self._dbs):
            db.interrupt()

    # ----- shared by both modes ----------------------------------------------
    def _open(self):
        db = Database(self.url, **self.db_options)
        with self._dbs_lock:
            self._dbs.append(db)
            self._opened += 1
        if self._stopping:
            db.interrupt()
        return db

    def _close(self, db):
        with self._dbs_lock:
            self._dbs.remove(db)
        db.close()

    def _claim(self, db, slot):
        """Up to batch jobs, or [] after waiting for work (or a stop) when none is due."""
        try:
            jobs = db.claim(self.queue, self.batch, lease=self.lease)
            if jobs:
                slot.expect_job = False
                slot.idle = 0.0
                return jobs
            if slot.expect_job:
                # Woken for a due job that could not be claimed: a due job whose
                # group is busy keeps wait() returning at once, so back off.
                slot.expect_job = False
                slot.idle = min(slot.idle * 2, IDLE_MAX) if slot.idle else IDLE_FIRST
                self._count("backoffs")
                self._pause(db, slot.idle)
            elif not self._stopping:
                slot.expect_job = db.wait(self.queue, self.idle_wait)
        except (Interrupted, Paused):
            if not self._stopping:
                self._pause(db)
        except Unavailable as exc:
            log.warning("sqlq worker: %s", exc)
            self._pause(db)
        return []

    def _pause(self, db, seconds=0.5):
        """Sleep a little (a paused queue, a lost server) unless stopping."""
        deadline = time.monotonic() + seconds
        while not self._stopping and time.monotonic() < deadline:
            time.sleep(0.05)

    def _count(self, what, n=1):
        """Add n to the counter what (acked, failed, released) of every slot."""
        with self._counts_lock:
            setattr(self, what, getattr(self, what) + n)

    def _settle(self, db, job, exc):
        """Finish a job whose handler raised exc: release or fail it as exc says."""
        try:
            if isinstance(exc, Release):
                db.release(job, exc.delay)
                self._count("released")
                return
            if isinstance(exc, Fail):
                db.fail(job, str(exc), backoff=self.backoff if exc.backoff is None
                        else exc.backoff, retry_now=exc.retry_now, dead=exc.dead)
            else:
                db.fail(job, _error_text(exc), backoff=self.backoff)
            self._count("failed")
        except Error as err:
            log.warning("sqlq worker: job %d: %s (its lease will run out)", job.id, err)

    def _ack(self, db, done):
        if not done:
            return
        try:
            self._count("acked", db.ack_batch(done))
        except Error as err:
            log.warning("sqlq worker: acking %d jobs: %s (their leases will run out)",
                        len(done), err)

    def _release_rest(self, db, jobs):
        for job in jobs:
            try:
                db.release(job, 0.0)
                self._count("released")
            except Error as err:
                log.warning("sqlq worker: releasing job %d: %s", job.id, err)

    def _need_handler(self):
        if self._handler is None:
            raise TypeError("no handler: decorate a function with @worker.handler")

    # ----- threads -----------------------------------------------------------
    def _slot(self):
        db = self._open()
        slot = _Slot()
        try:
            handler = self._handler
            flush_every = self.lease / 3
            while not self._stopping:
                jobs = self._claim(db, slot)
                if not jobs:
                    continue
                done = []
                flush_at = time.monotonic() + flush_every
                for i, job in enumerate(jobs):
                    if self._stopping:
                        self._release_rest(db, jobs[i:])
                        break
                    try:
                        handler(job)
                    except Exception as exc:  # noqa: BLE001 - a handler's failure is the job's
                        self._settle(db, job, exc)
                    else:
                        done.append(job)
                    if time.monotonic() > flush_at:
                        self._ack(db, done)
                        done = []
                        flush_at = time.monotonic() + flush_every
                self._ack(db, done)
        finally:
            self._close(db)

    def run(self, *, signals=True):
        """Handle jobs on concurrency threads until stop() (or SIGTERM/SIGINT, when signals
        and called from the main thread).  Returns when every slot has finished."""
        self._need_handler()
        if inspect.iscoroutinefunction(self._handler):
            raise TypeError("an async handler needs run_async()")
        self._stopping = False
        errors = []

        def slot():
            try:
                self._slot()
            except BaseException as exc:  # noqa: BLE001 - reported by run()
                errors.append(exc)
                self.stop()

        threads = [threading.Thread(target=slot, name=f"sqlq-worker-{i}", daemon=True)
                   for i in range(self.concurrency)]
        self._opened = 0
        restore = self._install_signals() if signals else {}
        try:
            for t in threads:
                t.start()
            if signals:
                while self._opened < self.concurrency and any(t.is_alive() for t in threads):
                    threads[0].join(0.01)
                self._install_signals()  # again: see _install_signals
            try:
                self._join(threads)
            except BaseException:  # KeyboardInterrupt without our handler: stop, then go on
                self.stop()
                self._join(threads)
                raise
        finally:
            for signum, old in restore.items():
                signal.signal(signum, old)
        if errors:
            raise errors[0]

    @staticmethod
    def _join(threads):
        """Wait for threads in short joins, so that signal handlers run meanwhile."""
        for t in threads:
            while t.is_alive():
                t.join(0.5)

    def _install_signals(self):
        """Stop on SIGTERM and SIGINT; returns the handlers replaced.  Called again once
        the slots have connected: a client library loaded on the first connection may
        install its own (Firebird's libfbclient shuts every attachment down on SIGTERM
        and SIGINT, which would leave the running jobs unacked)."""
        if threading.current_thread() is not threading.main_thread():
            return {}
        restore = {}
        for signum in (signal.SIGTERM, signal.SIGINT):
            restore[signum] = signal.signal(signum, lambda *_: self.stop())
        return restore

    # ----- asyncio -----------------------------------------------------------
    def _ack_then_claim(self, db, slot, done):
        """Ack done, then claim the next batch unless stopping: one trip to the slot's
        thread per batch."""
        self._ack(db, done)
        return [] if self._stopping else self._claim(db, slot)

    async def _slot_async(self):
        loop = asyncio.get_running_loop()
        pool = _SingleThread()
        call = functools.partial(_in_thread, loop, pool)
        db = await call(self._open)
        slot = _Slot()
        try:
            handler = self._handler
            flush_every = self.lease / 3
            done = []
            while True:
                jobs = await call(self._ack_then_claim, db, slot, done)
                done = []
                if not jobs:
                    if self._stopping:
                        break
                    continue
                flush_at = time.monotonic() + flush_every
                for i, job in enumerate(jobs):
                    if self._stopping:
                        await call(self._release_rest, db, jobs[i:])
                        break
                    try:
                        result = handler(job)
                        if inspect.isawaitable(result):
                            await result
                    except Exception as exc:  # noqa: BLE001
                        await call(self._settle, db, job, exc)
                    else:
                        done.append(job)
                    if time.monotonic() > flush_at:
                        await call(self._ack, db, done)
                        done = []
                        flush_at = time.monotonic() + flush_every
        finally:
            await call(self._close, db)
            pool.shutdown()

    async def run_async(self, *, signals=True):
        """Handle jobs on the running event loop until stop() (or SIGTERM/SIGINT when
        signals): concurrency tasks, each with its own connection whose blocking calls
        run in a thread of its own.  The handler may be async; a plain one runs on the
        loop (keep it short, or hand its work to an executor)."""
        self._need_handler()
        self._stopping = False
        loop = asyncio.get_running_loop()
        installed = []
        if signals and threading.current_thread() is threading.main_thread():
            installed = [signal.SIGTERM, signal.SIGINT]
        for signum in installed:
            loop.add_signal_handler(signum, self.stop)
        self._opened = 0
        try:
            tasks = [asyncio.ensure_future(self._slot_async()) for _ in range(self.concurrency)]
            while installed and self._opened < self.concurrency and not all(
                    t.done() for t in tasks):
                await asyncio.sleep(0.01)
            for signum in installed:  # again, as run() does (see _install_signals)
                loop.remove_signal_handler(signum)
                loop.add_signal_handler(signum, self.stop)
            try:
                await asyncio.gather(*tasks)
            except BaseException:
                self.stop()
                await asyncio.gather(*tasks, return_exceptions=True)
                raise
        finally:
            for signum in installed:
                loop.remove_signal_handler(signum)


class _SingleThread:
    """One thread for one slot's database calls (a sqlq handle is used by one thread at a
    time; this keeps it on one)."""

    def __init__(self):
        from concurrent.futures import ThreadPoolExecutor
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlq-async")

    def shutdown(self):
        self.executor.shutdown(wait=False)


def _in_thread(loop, pool, fn, *args):
    return loop.run_in_executor(pool.executor, fn, *args)
