"""The handles of libsqlq as Python objects: Database, Lock, and the records calls return.

A Database is one connection (sqlq_db).  Like the C handle it may be used by
one thread at a time; interrupt() is the exception and may be called from any
thread.  Every record a call returns (Job, JobInfo, QueueStats, ...) is a
copy: the C arrays are freed before the call returns.
"""

import ctypes
import math
import struct
from contextlib import contextmanager
from ctypes import byref, c_char_p, c_int, c_int64, c_size_t, c_void_p

from . import _ffi
from ._ffi import lib
from .errors import Misuse, from_status

_string_at = ctypes.string_at

# sqlq_job as laid out by the C compiler, read in one pass by struct
# (much faster than a ctypes field access per member and job).
_JOB = struct.Struct("@qqPPNiiiqqqPP")
if _JOB.size != ctypes.sizeof(_ffi.Job):  # pragma: no cover - a layout this module does not know
    raise ImportError("sqlq: sqlq_job's layout differs between struct and ctypes")

# sqlq_job_spec, packed by struct for the batches of plain payloads.
_SPEC = struct.Struct("@PNidiPP")
if _SPEC.size != ctypes.sizeof(_ffi.JobSpec):  # pragma: no cover
    raise ImportError("sqlq: sqlq_job_spec's layout differs between struct and ctypes")

# Job states (SQLQ_STATE_*) by name, for Database.list().
STATES = {"ready": 1, "running": 2, "dead": 3, "scheduled": 4, "done": 5, "waiting": 6}
STATE_NAMES = {v: k for k, v in STATES.items()}

# The policies for missed ticks of Database.cron_add() by name (SQLQ_CRON_*).
MISSED = {"skip": _ffi.CRON_SKIP, "once": _ffi.CRON_ONCE, "all": _ffi.CRON_ALL}
MISSED_NAMES = {v: k for k, v in MISSED.items()}

# Actions and flags of Database.subscribe().
ON_INSERT, ON_UPDATE, ON_DELETE = 0x1, 0x2, 0x4
SUB_ROWS = 0x1
SUB_STATUS = {0: "active", 1: "no_table", 2: "no_trigger", 3: "moved"}


def version():
    """The version of the loaded libsqlq, e.g. "1.0.0"."""
    return lib.sqlq_version().decode()


def version_number():
    """The version of the loaded libsqlq as major*1000000 + minor*1000 + patch."""
    return lib.sqlq_version_number()


def status_name(status):
    """The name of a status code, e.g. status_name(6) == "SQLQ_BUSY"."""
    return lib.sqlq_status_name(int(status)).decode()


def _text(value, what):
    """value (str, or bytes of UTF-8) as NUL-free bytes for a C string; None stays None."""
    if value is None:
        return None
    if isinstance(value, str):
        value = value.encode("utf-8", "surrogateescape")
    elif not isinstance(value, (bytes, bytearray)):
        raise TypeError(f"{what} must be str, not {type(value).__name__}")
    if b"\0" in value:
        raise Misuse(f"{what} contains a NUL character")
    return bytes(value)


def _bytes(value, what="payload"):
    """value as bytes: bytes-like objects as they are, str encoded as UTF-8."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"{what} must be bytes or str, not {type(value).__name__}")


def _seconds(value, what):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{what} must be a number of seconds, not {type(value).__name__}")
    return float(value)


INT_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
SIZE_MAX = 2**64 - 1


def _int(value, what, lo=-INT_MAX - 1, hi=INT_MAX):
    """value as an int of C type int (by default) between lo and hi; Misuse outside."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int, not {type(value).__name__}")
    if not lo <= value <= hi:
        raise Misuse(f"{what} is out of range ({lo} to {hi})")
    return value


def _count(value, what, hi=SIZE_MAX):
    """value as a size_t (or, with hi=INT_MAX, a non-negative int)."""
    return _int(value, what, 0, hi)


def _id(value, what):
    """value as an int64_t: a job id, a token, a sequence number."""
    return _int(value, what, -INT64_MAX - 1, INT64_MAX)


def _str_or_none(raw):
    return None if raw is None else raw.decode("utf-8", "surrogateescape")


class Job:
    """A claimed job: its fields as sqlq_job has them, and the calls that finish it.

    payload is bytes (text is payload.decode()); times are microseconds since the
    epoch (deadline is the lease's end in seconds, as time.time() counts).
    """

    __slots__ = ("id", "token", "queue", "payload", "priority", "attempts", "max_attempts",
                 "run_at_us", "created_at_us", "lease_until_us", "group_key", "dedupe_key",
                 "db")

    @property
    def deadline(self):
        """When the lease ends unless touched, in seconds since the epoch."""
        return self.lease_until_us / 1e6

    @property
    def text(self):
        """The payload decoded as UTF-8."""
        return self.payload.decode("utf-8")

    def ack(self):
        """Finish the job (sqlq_ack).  Stale when the token is no longer the job's."""
        self.db.ack(self)

    def fail(self, error=None, **options):
        """Record a failed attempt (sqlq_fail); options as Database.fail()."""
        self.db.fail(self, error, **options)

    def release(self, delay=0.0):
        """Give the job back without counting the attempt (sqlq_release)."""
        self.db.release(self, delay)

    def touch(self, lease):
        """Extend the lease to lease seconds from now; returns the new lease_until_us."""
        self.lease_until_us = self.db.touch(self, lease)
        return self.lease_until_us

    def __repr__(self):
        return (f"<sqlq.Job id={self.id} queue={self.queue!r} attempts={self.attempts}/"
                f"{self.max_attempts} payload={self.payload[:32]!r}>")


class _Record:
    """A plain record: the fields given to the constructor, a repr, and equality."""

    __slots__ = ()

    def __init__(self, **fields):
        for name in self.__slots__:
            setattr(self, name, fields[name])

    def __repr__(self):
        inner = " ".join(f"{n}={getattr(self, n)!r}" for n in self.__slots__)
        return f"<sqlq.{type(self).__name__} {inner}>"

    def __eq__(self, other):
        return type(self) is type(other) and all(
            getattr(self, n) == getattr(other, n) for n in self.__slots__)


class JobSpec(_Record):
    """One job for Database.enqueue_batch() with settings of its own."""

    __slots__ = ("payload", "priority", "delay", "max_attempts", "dedupe_key", "group_key")

    def __init__(self, payload=b"", *, priority=0, delay=0.0, max_attempts=0, dedupe_key=None,
                 group_key=None):
        super().__init__(payload=payload, priority=priority, delay=delay,
                         max_attempts=max_attempts, dedupe_key=dedupe_key, group_key=group_key)


class JobInfo(_Record):
    """One row of Database.list(); state is "ready", "scheduled", "running" or "dead"."""
    __slots__ = ("id", "state", "priority", "attempts", "max_attempts", "run_at_us",
                 "created_at_us", "lease_until_us", "dedupe_key", "group_key", "last_error",
                 "payload")


class QueueStats(_Record):
    """The counts of one queue (Database.stats())."""
    __slots__ = ("queue", "ready", "scheduled", "running", "dead", "paused")


class QueueSummary(_Record):
    """The counts of one queue (Database.summary()), each stopping at the call's limit:
    more is the frozenset of the names ("ready", "scheduled", "running", "dead") of
    the counts that reached it (there are at least that many); oldest_ready_age is
    how long the longest-waiting ready job has been due, in seconds of the
    database's clock, or None when no job is due."""
    __slots__ = ("queue", "ready", "scheduled", "running", "dead", "more", "paused",
                 "oldest_ready_age")


class LockInfo(_Record):
    """One named lock held now (Database.locks()): name is bytes, or None where the
    backend keeps only the key (PostgreSQL, SQLite); key is what Database.lock_key()
    gives for the name; pid the holder's session (0: unknown), holder who it is in
    words (None: unknown), since_at_us when its session began (0: unknown);
    expires_at_us and fence a lease's (0 for a session's lock)."""
    __slots__ = ("name", "key", "pid", "holder", "since_at_us", "expires_at_us", "fence")


class RingInfo(_Record):
    """One ring (Database.rings()): entries it holds now, at most capacity."""
    __slots__ = ("name", "capacity", "entries", "last_seq", "created_at_us")


class PoolInfo(_Record):
    """One pool (Database.pools()): items, of which held now; last_used_at_us 0: never."""
    __slots__ = ("name", "items", "held", "last_used_at_us")


class HealthItem(_Record):
    """One item of Database.health() (docs/health.md): value and threshold in unit,
    over when value is past threshold, holder (None: unknown or nobody) since
    started_at_us (0: unknown), detail in words (or None)."""
    __slots__ = ("name", "value", "unit", "threshold", "over", "holder", "started_at_us",
                 "detail")


class RingEntry(_Record):
    """One entry of a ring (Database.ring_read())."""
    __slots__ = ("seq", "pushed_at_us", "payload")


class PoolItem(_Record):
    """One item of a pool (Database.pool_list(), Database.pool_next())."""
    __slots__ = ("id", "item", "last_used_at_us", "uses", "held_until_us", "token")


class Subscription(_Record):
    """One table subscription; status is "active", "no_table", "no_trigger" or "moved"."""
    __slots__ = ("table", "tag", "actions", "flags", "created_at_us", "status")


class Schedule(_Record):
    """One schedule of periodic jobs (Database.cron_list()); missed is "skip", "once",
    "all" or the most missed ticks a late pass enqueues; last_at_us 0: none yet."""
    __slots__ = ("name", "spec", "zone", "queue", "payload", "missed", "paused", "next_at_us",
                 "last_at_us")


def _ref(job, token):
    """(id, token) of a Job, or of an id and the token given beside it."""
    if isinstance(job, Job):
        return job.id, job.token
    if token is None:
        raise TypeError("give a Job, or a job id and its token")
    return _id(job, "job id"), _id(token, "token")


class Lock:
    """A held named lock (sqlq_lock).  A context manager: leaving the block unlocks it.

    Closing its Database releases it too; after that unlock() does nothing.
    """

    __slots__ = ("_handle", "_db", "name", "__weakref__")

    def __init__(self, db, handle, name):
        self._db = db
        self._handle = handle
        self.name = name

    @property
    def held(self):
        """False once unlocked (or its Database closed)."""
        return self._handle is not None

    def check(self, timeout=5.0):
        """Confirm the lock is still held within timeout seconds; LockLost when it may not be."""
        if self._handle is None:
            raise Misuse("the lock was released")
        status = lib.sqlq_lock_check(self._handle, _seconds(timeout, "timeout"))
        if status:
            raise self._db._error(status)

    def unlock(self):
        """Release the lock (sqlq_unlock).  Calling it again does nothing."""
        handle, self._handle = self._handle, None
        if handle is not None:
            self._db._locks.discard(self)
            lib.sqlq_unlock(handle)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.unlock()

    def __repr__(self):
        state = "held" if self._handle is not None else "released"
        return f"<sqlq.Lock {self.name!r} {state}>"


class Database:
    """One connection to a database (sqlq_db); see sqlq.open()."""

    _h = None  # the sqlq_db address while open (a class default for a failed __init__)

    def __init__(self, url, *, payload_limit=0, keep_history=False, busy_timeout=0.0):
        url_bytes = _text(url, "url")
        if url_bytes is None:
            raise TypeError("url must be str, not None")
        opts = _ffi.options(_ffi.Options, payload_limit=_count(payload_limit, "payload_limit"),
                            keep_history=1 if keep_history else 0,
                            busy_timeout=_seconds(busy_timeout, "busy_timeout"))
        self._locks = set()
        handle = c_void_p()
        status = lib.sqlq_open(url_bytes, byref(opts), byref(handle))
        if status:
            message = lib.sqlq_errmsg(handle).decode("utf-8", "replace")
            lib.sqlq_close(handle)
            raise from_status(status, message)
        self._h = handle.value
        self._queues = {}

    # ----- the handle --------------------------------------------------------
    def _handle(self):
        h = self._h
        if h is None:
            raise Misuse("the database handle is closed")
        return h

    def _error(self, status):
        """The exception for status, with the handle's error text."""
        h = self._h
        message = lib.sqlq_errmsg(h).decode("utf-8", "replace") if h else "handle closed"
        return from_status(status, message)

    def _check(self, status):
        if status:
            raise self._error(status)

    def close(self):
        """Close the connection, releasing its locks.  Closing twice does nothing."""
        h = self._h
        if h is not None:
            self._h = None
            for lock in list(self._locks):
                lock._handle = None
            self._locks.clear()
            lib.sqlq_close(h)

    @property
    def closed(self):
        return self._h is None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        # A handle nobody closed is closed when collected; at interpreter exit the
        # module's globals may be gone already, and the process's end closes it.
        try:
            self.close()
        except Exception:  # noqa: BLE001
            pass

    def __repr__(self):
        if self._h is None:
            return "<sqlq.Database closed>"
        return f"<sqlq.Database {self.url}>"

    @property
    def backend(self):
        """"sqlite", "postgres", "mysql" or "firebird"."""
        return lib.sqlq_backend(self._handle()).decode()

    @property
    def url(self):
        """The URL, with any password replaced by "***"."""
        return lib.sqlq_url_redacted(self._handle()).decode("utf-8", "replace")

    @property
    def payload_limit(self):
        return lib.sqlq_payload_limit(self._handle())

    def native_handle(self):
        """The client library's connection (sqlite3 *, PGconn *, ...) as an int address."""
        return lib.sqlq_native_handle(self._handle())

    def init(self):
        """Create or upgrade the schema; returns the schema version now in place."""
        v = c_int()
        self._check(lib.sqlq_init(self._handle(), byref(v)))
        return v.value

    # ----- enqueueing --------------------------------------------------------
    def _queue(self, queue):
        """A queue name as bytes, cached (workers pass the same name again and again)."""
        b = self._queues.get(queue)
        if b is None:
            b = _text(queue, "queue")
            if b is None:
                raise TypeError("queue must be str, not None")
            if len(self._queues) < 256:
                self._queues[queue] = b
        return b

    @staticmethod
    def _spec(spec, payload, priority, delay, max_attempts, dedupe_key, group_key, keep):
        data = _bytes(payload)
        keep.append(data)
        spec.payload = ctypes.cast(c_char_p(data), c_void_p)
        spec.payload_len = len(data)
        spec.priority = _int(priority, "priority")
        spec.delay = _seconds(delay, "delay")
        spec.max_attempts = _count(max_attempts, "max_attempts", INT_MAX)
        spec.dedupe_key = _text(dedupe_key, "dedupe_key")
        spec.group_key = _text(group_key, "group_key")

    def enqueue(self, queue, payload=b"", *, priority=0, delay=0.0, max_attempts=0,
                dedupe_key=None, group_key=None, return_duplicate=False):
        """Enqueue one job; returns its id (with return_duplicate: (id, duplicate)).

        Inside transaction() the job commits with it.  payload is bytes, or str
        stored as UTF-8.  A zero max_attempts is the default (25).
        """
        h = self._handle()
        q = self._queue(queue)
        spec = _ffi.JobSpec()
        keep = []
        self._spec(spec, payload, priority, delay, max_attempts, dedupe_key, group_key, keep)
        job_id = c_int64()
        dup = c_int()
        self._check(lib.sqlq_enqueue(h, q, byref(spec), byref(job_id), byref(dup)))
        return (job_id.value, bool(dup.value)) if return_duplicate else job_id.value

    def enqueue_batch(self, queue, payloads, *, priority=0, delay=0.0, max_attempts=0,
                      after=None):
        """Enqueue many jobs in one transaction; returns their ids in order.

        Each item is a payload (bytes or str), taking the keyword settings, or a
        JobSpec with settings of its own.  With after, ids of other jobs (libsqlq
        1.1), each job waits until all of those have succeeded (a fan-in).
        """
        h = self._handle()
        q = self._queue(queue)
        items = list(payloads)
        n = len(items)
        if any(isinstance(item, JobSpec) for item in items):
            specs, keep = self._specs(items, priority, delay, max_attempts)
        else:
            specs, keep = self._plain_specs(items, priority, delay, max_attempts)
        ids = (c_int64 * max(n, 1))()
        if after is None:
            self._check(lib.sqlq_enqueue_batch(h, q, specs, n, ids))
        else:
            waits = [_id(i, "job id") for i in after]
            arr = (c_int64 * max(len(waits), 1))(*waits)
            self._call_1_1("sqlq_enqueue_after", q, specs, n, arr, len(waits), ids)
        del keep
        return list(ids[:n])

    def _specs(self, items, priority, delay, max_attempts):
        """sqlq_job_spec[] of items (payloads or JobSpec), and the buffers it points into."""
        specs = (_ffi.JobSpec * max(len(items), 1))()
        keep = []
        for spec, item in zip(specs, items):
            if isinstance(item, JobSpec):
                self._spec(spec, item.payload, item.priority, item.delay, item.max_attempts,
                           item.dedupe_key, item.group_key, keep)
            else:
                self._spec(spec, item, priority, delay, max_attempts, None, None, keep)
        return specs, keep

    @staticmethod
    def _plain_specs(items, priority, delay, max_attempts):
        """The same for payloads that share their settings, packed in one pass: every
        payload is copied into one buffer, and the specs point into it."""
        datas = [_bytes(item) for item in items]
        joined = b"".join(datas) or b"\0"
        blob = (ctypes.c_char * len(joined)).from_buffer_copy(joined)
        base = ctypes.addressof(blob)
        prio = _int(priority, "priority")
        secs = _seconds(delay, "delay")
        attempts = _count(max_attempts, "max_attempts", INT_MAX)
        pack = _SPEC.pack
        parts = []
        offset = 0
        for data in datas:
            size = len(data)
            parts.append(pack(base + offset, size, prio, secs, attempts, 0, 0))
            offset += size
        packed = b"".join(parts) or bytes(_SPEC.size)
        specs = (_ffi.JobSpec * max(len(datas), 1)).from_buffer_copy(packed)
        return specs, blob

    # ----- claiming and finishing --------------------------------------------
    def claim(self, queue, max=1, *, lease=0.0):
        """Claim up to max due jobs and lease them for lease seconds (0: 30 s).

        Returns a list of Job, empty when none is due; Paused when the queue is.
        """
        h = self._handle()
        q = self._queue(queue)
        _count(max, "max")
        opts = _ffi.options(_ffi.ClaimOptions, lease=_seconds(lease, "lease"))
        arr = ctypes.POINTER(_ffi.Job)()
        n = c_size_t()
        if max < 1:
            raise Misuse("max must be 1 to 100000")
        self._check(lib.sqlq_claim(h, q, max, byref(opts), byref(arr), byref(n)))
        return self._jobs(arr, n.value)

    def _jobs(self, arr, n):
        """Copy n sqlq_job of arr into Job objects, then free arr."""
        if not n:
            return []
        try:
            raw = _string_at(arr, n * _JOB.size)
            jobs = []
            names = {}
            new = Job.__new__
            for (jid, token, qp, pp, plen, prio, att, maxatt, run_at, created, lease, gp,
                 dp) in _JOB.iter_unpack(raw):
                job = new(Job)
                job.id = jid
                job.token = token
                name = names.get(qp)
                if name is None:
                    name = names[qp] = _string_at(qp).decode("utf-8", "surrogateescape")
                job.queue = name
                job.payload = _string_at(pp, plen) if plen else b""
                job.priority = prio
                job.attempts = att
                job.max_attempts = maxatt
                job.run_at_us = run_at
                job.created_at_us = created
                job.lease_until_us = lease
                job.group_key = _string_at(gp).decode("utf-8", "surrogateescape") if gp else None
                job.dedupe_key = _string_at(dp).decode("utf-8", "surrogateescape") if dp else None
                job.db = self
                jobs.append(job)
            return jobs
        finally:
            lib.sqlq_jobs_free(arr, n)

    def ack(self, job, token=None):
        """Finish a job (a Job, or an id and its token)."""
        jid, tok = _ref(job, token)
        self._check(lib.sqlq_ack(self._handle(), jid, tok))

    def ack_batch(self, jobs):
        """Ack many jobs (Job objects or (id, token) pairs) in one transaction.

        Returns how many were acked; the others' tokens were stale (they are left as
        they are).  Other failures raise.
        """
        h = self._handle()
        flat = []
        for job in jobs:
            if isinstance(job, Job):
                flat.append(job.id)
                flat.append(job.token)
            else:
                jid, tok = job
                flat.append(_id(jid, "job id"))
                flat.append(_id(tok, "token"))
        n = len(flat) // 2
        if not n:
            return 0
        refs = (_ffi.JobRef * n).from_buffer_copy(struct.pack(f"={2 * n}q", *flat))
        acked = c_size_t()
        status = lib.sqlq_ack_batch(h, refs, n, byref(acked))
        if status and status != _ffi.STALE:
            raise self._error(status)
        return acked.value

    def fail(self, job, error=None, *, token=None, backoff=0.0, retry_now=False, dead=False):
        """Record a failed attempt; error is kept with the job.

        backoff is the base of the exponential retry backoff in seconds (0: 1 s);
        retry_now makes it ready at once, dead makes it dead now.
        """
        jid, tok = _ref(job, token)
        opts = _ffi.options(_ffi.FailOptions, backoff=_seconds(backoff, "backoff"),
                            retry_now=1 if retry_now else 0, dead=1 if dead else 0)
        err = None if error is None else _text(str(error).replace("\0", "\\0"), "error")
        self._check(lib.sqlq_fail(self._handle(), jid, tok, err, byref(opts)))

    def release(self, job, delay=0.0, *, token=None):
        """Give a job back without counting the attempt; ready again after delay seconds."""
        jid, tok = _ref(job, token)
        self._check(lib.sqlq_release(self._handle(), jid, tok, _seconds(delay, "delay")))

    def touch(self, job, lease, *, token=None):
        """Extend a job's lease to lease seconds from now; returns the new lease_until_us."""
        jid, tok = _ref(job, token)
        until = c_int64()
        self._check(lib.sqlq_touch(self._handle(), jid, tok, _seconds(lease, "lease"),
                                   byref(until)))
        return until.value

    # ----- waiting -----------------------------------------------------------
    def wait(self, queue, timeout=-1.0):
        """Block until queue may have a due job: True; False at the timeout (seconds,
        negative: for ever).  Interrupted when interrupt() is called."""
        h = self._handle()
        q = self._queue(queue)
        status = lib.sqlq_wait(h, q, _seconds(timeout, "timeout"))
        if status == _ffi.TIMEOUT:
            return False
        self._check(status)
        return True

    def interrupt(self):
        """Make the current or next wait return Interrupted.  Safe from any thread."""
        h = self._h
        if h is not None:
            lib.sqlq_interrupt(h)

    # ----- administration ----------------------------------------------------
    def pause(self, queue):
        self._check(lib.sqlq_pause(self._handle(), self._queue(queue)))

    def resume(self, queue):
        self._check(lib.sqlq_resume(self._handle(), self._queue(queue)))

    def stats(self, queue=None):
        """Counts per queue (every queue when queue is None), sorted by name."""
        h = self._handle()
        q = None if queue is None else self._queue(queue)
        arr = ctypes.POINTER(_ffi.QueueStats)()
        n = c_size_t()
        self._check(lib.sqlq_stats(h, q, byref(arr), byref(n)))
        try:
            return [QueueStats(queue=s.queue.decode("utf-8", "surrogateescape"), ready=s.ready,
                               scheduled=s.scheduled, running=s.running, dead=s.dead,
                               paused=bool(s.paused)) for s in arr[:n.value]]
        finally:
            lib.sqlq_queue_stats_free(arr, n.value)

    def health(self):
        """What holds the database's queues back (libsqlq 1.1, docs/health.md): a list of
        HealthItem, in a fixed order per backend."""
        arr = ctypes.POINTER(_ffi.HealthItem)()
        n = c_size_t()
        self._call_1_1("sqlq_health", byref(arr), byref(n))

        def text(b):
            return None if b is None else b.decode("utf-8", "replace")
        try:
            return [HealthItem(name=h.name.decode(), value=h.value, unit=h.unit.decode(),
                               threshold=h.threshold, over=bool(h.over), holder=text(h.holder),
                               started_at_us=h.started_at_us, detail=text(h.detail))
                    for h in arr[:n.value]]
        finally:
            lib.sqlq_health_items_free(arr, n.value)

    def summary(self, queue=None, limit=10000):
        """Counts per queue (every queue when queue is None), sorted by name, each
        stopping at limit (1 to 10^9; libsqlq 1.1): a list of QueueSummary.  Its cost
        does not grow with the queues' length: what a dashboard should poll."""
        q = None if queue is None else self._queue(queue)
        arr = ctypes.POINTER(_ffi.QueueSummary)()
        n = c_size_t()
        self._call_1_1("sqlq_summary", q, _count(limit, "limit", INT64_MAX), byref(arr),
                       byref(n))
        try:
            return [QueueSummary(queue=s.queue.decode("utf-8", "surrogateescape"),
                                 ready=s.ready, scheduled=s.scheduled, running=s.running,
                                 dead=s.dead,
                                 more=frozenset(name for name, bit in _ffi.MORE_BITS
                                                if s.more & bit),
                                 paused=bool(s.paused),
                                 oldest_ready_age=None if s.oldest_ready_age_us < 0
                                 else s.oldest_ready_age_us / 1e6)
                    for s in arr[:n.value]]
        finally:
            lib.sqlq_queue_summaries_free(arr, n.value)

    def list(self, queue, state=None, limit=0):
        """Jobs of queue in claim order (state: "ready", "scheduled", "running", "dead"
        or None for all), at most limit (0: all).  State "done" (libsqlq 1.1): the
        finished jobs kept in history, newest first, with run_at_us when each
        finished.  State "waiting" (libsqlq 1.1): jobs waiting for others to
        succeed (enqueued after them in C or with `sqlq push --after`)."""
        h = self._handle()
        q = self._queue(queue)
        if state is None:
            code = 0
        elif state in STATES:
            code = STATES[state]
        else:
            raise Misuse(f"state must be one of {', '.join(STATES)} or None, not {state!r}")
        arr = ctypes.POINTER(_ffi.JobInfo)()
        n = c_size_t()
        self._check(lib.sqlq_list(h, q, code, _count(limit, "limit"), byref(arr), byref(n)))
        try:
            return [JobInfo(id=j.id, state=STATE_NAMES.get(j.state, j.state),
                            priority=j.priority, attempts=j.attempts,
                            max_attempts=j.max_attempts, run_at_us=j.run_at_us,
                            created_at_us=j.created_at_us, lease_until_us=j.lease_until_us,
                            dedupe_key=_str_or_none(j.dedupe_key),
                            group_key=_str_or_none(j.group_key),
                            last_error=_str_or_none(j.last_error),
                            payload=_string_at(j.payload, j.payload_len) if j.payload_len
                            else b"") for j in arr[:n.value]]
        finally:
            lib.sqlq_job_infos_free(arr, n.value)

    def retry(self, queue, ids=None):
        """Make jobs ready now with fresh attempts: the given ids, or every dead job of
        queue when ids is None.  Returns how many changed."""
        h = self._handle()
        q = self._queue(queue)
        count = c_size_t()
        if ids is None:
            self._check(lib.sqlq_retry(h, q, None, 0, byref(count)))
        else:
            values = [_id(i, "job id") for i in ids]
            arr = (c_int64 * max(len(values), 1))(*values)
            self._check(lib.sqlq_retry(h, q, arr, len(values), byref(count)))
        return count.value

    def cancel(self, ids):
        """Cancel the jobs ids (libsqlq 1.1): each ready or running one becomes dead,
        marked cancelled, in one transaction; returns how many.  Jobs done, dead or
        unknown are left alone.  The worker running a cancelled job finds out at its
        next call for it (ack, fail, touch... raise Stale), or at once with `sqlq work`."""
        values = [_id(i, "job id") for i in ids]
        arr = (c_int64 * max(len(values), 1))(*values)
        count = c_size_t()
        self._call_1_1("sqlq_cancel", arr, len(values), byref(count))
        return count.value

    def purge(self, queue):
        """Delete every job of queue, in every state; returns how many."""
        count = c_size_t()
        self._check(lib.sqlq_purge(self._handle(), _text(queue, "queue"), byref(count)))
        return count.value

    # ----- transactions ------------------------------------------------------
    def begin(self):
        self._check(lib.sqlq_begin(self._handle()))

    def commit(self):
        self._check(lib.sqlq_commit(self._handle()))

    def rollback(self):
        self._check(lib.sqlq_rollback(self._handle()))

    @contextmanager
    def transaction(self):
        """with db.transaction(): ... commits at the end of the block, rolls back on an
        exception (which goes on)."""
        self.begin()
        try:
            yield self
        except BaseException:
            if self._h is not None:
                lib.sqlq_rollback(self._h)
            raise
        self.commit()

    # ----- locks -------------------------------------------------------------
    def lock(self, name, timeout=0.0):
        """Take the named lock (str or bytes); timeout in seconds, 0 tries once, negative
        waits for ever.  Busy when not had in time.  Returns a Lock (a context manager)."""
        h = self._handle()
        raw = _bytes(name, "lock name")
        handle = c_void_p()
        self._check(lib.sqlq_lock_acquire(h, raw, len(raw), _seconds(timeout, "timeout"),
                                          byref(handle)))
        lock = Lock(self, handle.value, name)
        self._locks.add(lock)
        return lock

    def lock_xact(self, name, timeout=0.0):
        """Take the named lock until the open transaction ends."""
        raw = _bytes(name, "lock name")
        self._check(lib.sqlq_lock_xact(self._handle(), raw, len(raw),
                                       _seconds(timeout, "timeout")))

    def locks(self, limit=100):
        """The named locks held now in the database, by any process (libsqlq 1.1): a list
        of LockInfo, at most limit (1 to 10000), by name then key.  What each backend
        can say differs (docs/serve.md); Unavailable on Firebird, and on MariaDB
        without the metadata_lock_info plugin."""
        arr = ctypes.POINTER(_ffi.LockInfo)()
        n = c_size_t()
        self._call_1_1("sqlq_locks", _count(limit, "limit"), byref(arr), byref(n))

        def text(b):
            return None if b is None else b.decode("utf-8", "replace")
        try:
            return [LockInfo(name=_string_at(e.name, e.name_len) if e.name else None,
                             key=e.key, pid=e.pid, holder=text(e.holder),
                             since_at_us=e.since_at_us, expires_at_us=e.expires_at_us,
                             fence=e.fence) for e in arr[:n.value]]
        finally:
            lib.sqlq_lock_infos_free(arr, n.value)

    def lock_key(self, name):
        """The key the backend locks for the lock name (str or bytes; libsqlq 1.1): the
        LockInfo.key that Database.locks() lists it by.  No database access."""
        raw = _bytes(name, "lock name")
        key = c_int64()
        self._call_1_1("sqlq_lock_key", raw, len(raw), byref(key))
        return key.value

    # ----- rings -------------------------------------------------------------
    def ring_create(self, ring, capacity):
        self._check(lib.sqlq_ring_create(self._handle(), self._queue(ring),
                                         _count(capacity, "capacity")))

    def ring_push(self, ring, payload):
        """Push one entry; returns its sequence number."""
        data = _bytes(payload)
        seq = c_int64()
        self._check(lib.sqlq_ring_push(self._handle(), self._queue(ring), data, len(data),
                                       byref(seq)))
        return seq.value

    def ring_push_batch(self, ring, payloads):
        """Push many entries in one transaction; returns the first one's sequence number."""
        items = [_bytes(p) for p in payloads]
        n = len(items)
        ptrs = (c_char_p * max(n, 1))(*items)
        lens = (c_size_t * max(n, 1))(*[len(p) for p in items])
        seq = c_int64()
        self._check(lib.sqlq_ring_push_batch(self._handle(), self._queue(ring), ptrs, lens, n,
                                             byref(seq)))
        return seq.value

    def ring_read(self, ring, since=0, limit=0):
        """Entries above sequence number since, oldest first, at most limit (0: all)."""
        h = self._handle()
        arr = ctypes.POINTER(_ffi.RingEntry)()
        n = c_size_t()
        self._check(lib.sqlq_ring_read(h, self._queue(ring), _id(since, "since"),
                                       _count(limit, "limit"), byref(arr), byref(n)))
        try:
            return [RingEntry(seq=e.seq, pushed_at_us=e.pushed_at_us,
                              payload=_string_at(e.payload, e.payload_len) if e.payload_len
                              else b"") for e in arr[:n.value]]
        finally:
            lib.sqlq_ring_entries_free(arr, n.value)

    def ring_wait(self, ring, since=0, timeout=-1.0):
        """Block until ring has an entry above since: True; False at the timeout."""
        status = lib.sqlq_ring_wait(self._handle(), self._queue(ring), _id(since, "since"),
                                    _seconds(timeout, "timeout"))
        if status == _ffi.TIMEOUT:
            return False
        self._check(status)
        return True

    def ring_drop(self, ring):
        self._check(lib.sqlq_ring_drop(self._handle(), self._queue(ring)))

    def rings(self, after=None, limit=100):
        """The rings whose names sort after after (None: from the first), at most limit
        (1 to 10000), by name (libsqlq 1.1): a list of RingInfo.  For every ring, call
        again with the last name until fewer than limit come back."""
        arr = ctypes.POINTER(_ffi.RingInfo)()
        n = c_size_t()
        self._call_1_1("sqlq_rings", _text(after, "after"), _count(limit, "limit"), byref(arr),
                       byref(n))
        try:
            return [RingInfo(name=r.name.decode("utf-8", "surrogateescape"),
                             capacity=r.capacity, entries=r.entries, last_seq=r.last_seq,
                             created_at_us=r.created_at_us) for r in arr[:n.value]]
        finally:
            lib.sqlq_ring_infos_free(arr, n.value)

    # ----- pools -------------------------------------------------------------
    def pool_add(self, pool, item):
        """Add item; True when added, False when the pool had it already."""
        added = c_int()
        self._check(lib.sqlq_pool_add(self._handle(), self._queue(pool), _text(item, "item"),
                                      byref(added)))
        return bool(added.value)

    def pool_remove(self, pool, item):
        self._check(lib.sqlq_pool_remove(self._handle(), self._queue(pool), _text(item, "item")))

    @staticmethod
    def _pool_items(arr, n):
        try:
            return [PoolItem(id=p.id, item=p.item.decode("utf-8", "surrogateescape"),
                             last_used_at_us=p.last_used_at_us, uses=p.uses,
                             held_until_us=p.held_until_us, token=p.token) for p in arr[:n]]
        finally:
            lib.sqlq_pool_items_free(arr, n)

    def pool_list(self, pool):
        h = self._handle()
        arr = ctypes.POINTER(_ffi.PoolItem)()
        n = c_size_t()
        self._check(lib.sqlq_pool_list(h, self._queue(pool), byref(arr), byref(n)))
        return self._pool_items(arr, n.value)

    def pool_next(self, pool, hold=0.0):
        """Hand out the least recently used free item (held for hold seconds when > 0)."""
        h = self._handle()
        arr = ctypes.POINTER(_ffi.PoolItem)()
        self._check(lib.sqlq_pool_next(h, self._queue(pool), _seconds(hold, "hold"), byref(arr)))
        return self._pool_items(arr, 1)[0]

    def pool_release(self, pool, item, token=None):
        """End the hold of item (a PoolItem, or its text and token)."""
        if isinstance(item, PoolItem):
            item, token = item.item, item.token
        if token is None:
            raise TypeError("give a PoolItem, or an item and its token")
        self._check(lib.sqlq_pool_release(self._handle(), self._queue(pool), _text(item, "item"),
                                          _id(token, "token")))

    def pools(self, after=None, limit=100):
        """The pools whose names sort after after, as rings() lists rings: a list of
        PoolInfo (libsqlq 1.1)."""
        arr = ctypes.POINTER(_ffi.PoolInfo)()
        n = c_size_t()
        self._call_1_1("sqlq_pools", _text(after, "after"), _count(limit, "limit"), byref(arr),
                       byref(n))
        try:
            return [PoolInfo(name=p.name.decode("utf-8", "surrogateescape"), items=p.items,
                             held=p.held, last_used_at_us=p.last_used_at_us)
                    for p in arr[:n.value]]
        finally:
            lib.sqlq_pool_infos_free(arr, n.value)

    # ----- subscriptions -----------------------------------------------------
    def subscribe(self, table, tag, actions=ON_INSERT | ON_UPDATE | ON_DELETE, *, rows=False):
        """Turn row changes of table into jobs on queue tag (actions: ON_* or'ed)."""
        self._check(lib.sqlq_subscribe(self._handle(), _text(table, "table"),
                                       _count(actions, "actions", 2**32 - 1), self._queue(tag),
                                       SUB_ROWS if rows else 0))

    def unsubscribe(self, table, tag):
        self._check(lib.sqlq_unsubscribe(self._handle(), _text(table, "table"), self._queue(tag)))

    def subscriptions(self):
        h = self._handle()
        arr = ctypes.POINTER(_ffi.Subscription)()
        n = c_size_t()
        self._check(lib.sqlq_subscriptions(h, byref(arr), byref(n)))
        try:
            return [Subscription(table=s.table.decode(), tag=s.tag.decode(), actions=s.actions,
                                 flags=s.flags, created_at_us=s.created_at_us,
                                 status=SUB_STATUS.get(s.status, s.status))
                    for s in arr[:n.value]]
        finally:
            lib.sqlq_subscriptions_free(arr, n.value)


    # ----- schedules, retention and limits (libsqlq 1.1) ----------------------
    def _call_1_1(self, fname, *args):
        """lib.fname(handle, *args), checked; Unavailable when the library is 1.0."""
        if fname not in _ffi.declared:
            raise from_status(_ffi.UNAVAILABLE, f"{fname}() needs libsqlq 1.1, this is "
                              f"{version()}")
        self._check(getattr(lib, fname)(self._handle(), *args))

    def cron_add(self, name, spec, queue, payload=b"", *, zone="UTC", missed="skip"):
        """Add (or replace) the schedule name: a job of payload on queue at each tick of
        spec (five crontab fields, @daily..., or "@every 30s"), in the tz zone; missed
        is "skip", "once", "all" or the most missed ticks a late pass enqueues."""
        if isinstance(missed, str):
            if missed not in MISSED:
                raise Misuse(f"missed must be one of {', '.join(MISSED)} or a count, "
                              f"not {missed!r}")
            missed = MISSED[missed]
        data = _bytes(payload)
        s = _ffi.Schedule(name=_text(name, "schedule name"), spec=_text(spec, "spec"),
                          zone=_text(zone, "zone"), queue=self._queue(queue),
                          payload=ctypes.cast(c_char_p(data), c_void_p), payload_len=len(data),
                          missed=_int(missed, "missed"))
        self._call_1_1("sqlq_cron_add", byref(s))

    def cron_remove(self, name):
        self._call_1_1("sqlq_cron_remove", _text(name, "schedule name"))

    def cron_pause(self, name):
        self._call_1_1("sqlq_cron_pause", _text(name, "schedule name"))

    def cron_resume(self, name):
        """Resume the schedule name; it ticks from now on (missed ticks are not run)."""
        self._call_1_1("sqlq_cron_resume", _text(name, "schedule name"))

    def cron_list(self):
        """Every schedule, by name."""
        arr = ctypes.POINTER(_ffi.Schedule)()
        n = c_size_t()
        self._call_1_1("sqlq_cron_list", byref(arr), byref(n))
        try:
            return [Schedule(name=c.name.decode(), spec=c.spec.decode(), zone=c.zone.decode(),
                             queue=c.queue.decode("utf-8", "surrogateescape"),
                             payload=_string_at(c.payload, c.payload_len) if c.payload_len
                             else b"", missed=MISSED_NAMES.get(c.missed, c.missed),
                             paused=bool(c.paused), next_at_us=c.next_at_us,
                             last_at_us=c.last_at_us) for c in arr[:n.value]]
        finally:
            lib.sqlq_schedules_free(arr, n.value)

    def cron_tick(self, now_at_us=0):
        """One scheduling pass (at the database's clock, or at now_at_us for tests):
        (jobs enqueued, the earliest next tick in microseconds since the epoch or 0)."""
        enqueued = c_size_t()
        next_at = c_int64()
        self._call_1_1("sqlq_cron_tick", _id(now_at_us, "now_at_us"), byref(enqueued),
                       byref(next_at))
        return enqueued.value, next_at.value

    def retention_set(self, queue, keep_for=0.0, keep_count=0):
        """Keep queue's finished jobs in history keep_for seconds and/or the newest
        keep_count of them (0: no limit of that kind; both 0: keep all)."""
        self._call_1_1("sqlq_retention_set", self._queue(queue), _seconds(keep_for, "keep_for"),
                       _id(keep_count, "keep_count"))

    def retention_get(self, queue):
        """(keep_for seconds, keep_count) of queue, 0 where there is no limit."""
        keep_for = ctypes.c_double()
        keep_count = c_int64()
        self._call_1_1("sqlq_retention_get", self._queue(queue), byref(keep_for),
                       byref(keep_count))
        return keep_for.value, keep_count.value

    def history_prune(self, queue, max=0):  # noqa: A002 - the C call's name
        """Delete one batch (at most max, 0: the default batch) of queue's history rows
        its retention no longer keeps; returns how many (max: call again)."""
        pruned = c_size_t()
        self._call_1_1("sqlq_history_prune", self._queue(queue), _count(max, "max"),
                       byref(pruned))
        return pruned.value

    def concurrency_set(self, queue, max_running):
        """Let at most max_running jobs of queue run at once, across every worker of
        every host (0: no limit)."""
        self._call_1_1("sqlq_concurrency_set", self._queue(queue),
                       _id(max_running, "max_running"))

    def concurrency_get(self, queue):
        """The concurrency limit of queue; 0 when it has none."""
        value = c_int64()
        self._call_1_1("sqlq_concurrency_get", self._queue(queue), byref(value))
        return value.value

    def rate_set(self, queue, max_starts, period=0.0):
        """Let at most max_starts jobs of queue start (be claimed) in any period seconds
        (a sliding window, exact), across every worker of every host; max_starts 0:
        no rate limit (period is then ignored)."""
        seconds = _seconds(period, "period")
        if not math.isfinite(seconds) or abs(seconds) > 1e12:
            raise Misuse(f"period is out of range: {period}")
        self._call_1_1("sqlq_rate_set", self._queue(queue), _id(max_starts, "max_starts"),
                       round(seconds * 1e6))

    def rate_get(self, queue):
        """(max_starts, period seconds) of queue's rate limit; (0, 0.0) when it has none."""
        max_starts = c_int64()
        period_us = c_int64()
        self._call_1_1("sqlq_rate_get", self._queue(queue), byref(max_starts), byref(period_us))
        return max_starts.value, period_us.value / 1e6

    def group_limit_set(self, queue, per_group):
        """Let at most per_group jobs of one group key of queue run at once (1, the
        default: FIFO groups), still starting in id order."""
        self._call_1_1("sqlq_group_limit_set", self._queue(queue), _id(per_group, "per_group"))

    def group_limit_get(self, queue):
        """The per-group limit of queue; 1 unless set."""
        value = c_int64()
        self._call_1_1("sqlq_group_limit_get", self._queue(queue), byref(value))
        return value.value

    def fair_set(self, queue, fair):
        """Make queue's claims take jobs round-robin across tenants (group keys)
        when fair is True, or in the queue's order when False."""
        if not isinstance(fair, bool):
            raise TypeError("fair must be True or False")
        self._call_1_1("sqlq_fair_set", self._queue(queue), int(fair))

    def fair_get(self, queue):
        """Whether queue is fair; False unless set."""
        value = c_int()
        self._call_1_1("sqlq_fair_get", self._queue(queue), byref(value))
        return value.value != 0


def open(url, **options):  # noqa: A001 - sqlq.open(), like sqlite3.connect()
    """Open the database named by url (sqlite:PATH, postgres://..., mysql://...,
    firebird://...); keyword options payload_limit, keep_history, busy_timeout.
    The Database is a context manager that closes it."""
    return Database(url, **options)
