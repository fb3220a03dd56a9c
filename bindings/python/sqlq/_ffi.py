"""The C library, loaded with ctypes: its structs and the prototypes of its calls.

Everything here mirrors include/sqlq.h (libsqlq 1.x, frozen by docs/api.md).
The library is found, in this order, at the path in the environment
variable SQLQ_LIBRARY, as libsqlq.so.1 on the system's library path, then
by ctypes.util.find_library("sqlq").  ctypes releases the GIL around every
call, so a thread blocked in sqlq_wait() does not hold up the others.
"""

import ctypes
import ctypes.util
import os

from ctypes import (POINTER, Structure, c_char, c_char_p, c_double, c_int, c_int64,
                    c_size_t, c_ubyte, c_uint, c_void_p)

SONAME = "libsqlq.so.1"
REQUIRED_MAJOR = 1

# Status codes (SQLQ_OK ... SQLQ_LOCK_LOST).
OK, ERROR, MISUSE, TOOBIG, NOTFOUND, STALE, BUSY, TIMEOUT, INTERRUPTED, \
    UNAVAILABLE, NOMEM, SCHEMA, PAUSED, LOCK_LOST = range(14)

QUEUE_NAME_MAX = 128


class Options(Structure):
    _fields_ = [("size", c_size_t), ("payload_limit", c_size_t),
                ("keep_history", c_int), ("busy_timeout", c_double)]


class ClaimOptions(Structure):
    _fields_ = [("size", c_size_t), ("lease", c_double)]


class FailOptions(Structure):
    _fields_ = [("size", c_size_t), ("backoff", c_double), ("retry_now", c_int),
                ("dead", c_int)]


def options(struct_type, **fields):
    """An options struct with size set to its ctypes size (SQLQ_OPTIONS_INIT) and fields."""
    value = struct_type(**fields)
    value.size = ctypes.sizeof(struct_type)
    return value


class JobSpec(Structure):
    _fields_ = [("payload", c_void_p), ("payload_len", c_size_t), ("priority", c_int),
                ("delay", c_double), ("max_attempts", c_int), ("dedupe_key", c_char_p),
                ("group_key", c_char_p)]


class Job(Structure):
    _fields_ = [("id", c_int64), ("token", c_int64), ("queue", c_char_p),
                ("payload", POINTER(c_ubyte)), ("payload_len", c_size_t), ("priority", c_int),
                ("attempts", c_int), ("max_attempts", c_int), ("run_at_us", c_int64),
                ("created_at_us", c_int64), ("lease_until_us", c_int64),
                ("group_key", c_char_p), ("dedupe_key", c_char_p)]


class JobRef(Structure):
    _fields_ = [("id", c_int64), ("token", c_int64)]


class QueueStats(Structure):
    _fields_ = [("queue", c_char * (QUEUE_NAME_MAX + 1)), ("ready", c_int64),
                ("scheduled", c_int64), ("running", c_int64), ("dead", c_int64),
                ("paused", c_int)]


class QueueSummary(Structure):
    _fields_ = [("queue", c_char * (QUEUE_NAME_MAX + 1)), ("ready", c_int64),
                ("scheduled", c_int64), ("running", c_int64), ("dead", c_int64),
                ("more", c_uint), ("paused", c_int), ("oldest_ready_age_us", c_int64)]


# The bits of QueueSummary.more (SQLQ_MORE_*): the counts that stopped at the limit.
MORE_BITS = (("ready", 1), ("scheduled", 2), ("running", 4), ("dead", 8))


class LockInfo(Structure):
    _fields_ = [("name", POINTER(c_ubyte)), ("name_len", c_size_t), ("key", c_int64),
                ("pid", c_int64), ("holder", c_char_p), ("since_at_us", c_int64),
                ("expires_at_us", c_int64), ("fence", c_int64)]


class RingInfo(Structure):
    _fields_ = [("name", c_char_p), ("capacity", c_int64), ("entries", c_int64),
                ("last_seq", c_int64), ("created_at_us", c_int64)]


class PoolInfo(Structure):
    _fields_ = [("name", c_char_p), ("items", c_int64), ("held", c_int64),
                ("last_used_at_us", c_int64)]


class JobInfo(Structure):
    _fields_ = [("id", c_int64), ("state", c_int), ("priority", c_int), ("attempts", c_int),
                ("max_attempts", c_int), ("run_at_us", c_int64), ("created_at_us", c_int64),
                ("lease_until_us", c_int64), ("dedupe_key", c_char_p), ("group_key", c_char_p),
                ("last_error", c_char_p), ("payload", POINTER(c_ubyte)),
                ("payload_len", c_size_t)]


class RingEntry(Structure):
    _fields_ = [("seq", c_int64), ("pushed_at_us", c_int64), ("payload", POINTER(c_ubyte)),
                ("payload_len", c_size_t)]


class PoolItem(Structure):
    _fields_ = [("id", c_int64), ("item", c_char_p), ("last_used_at_us", c_int64),
                ("uses", c_int64), ("held_until_us", c_int64), ("token", c_int64)]


class Subscription(Structure):
    _fields_ = [("table", c_char_p), ("tag", c_char_p), ("actions", c_uint), ("flags", c_uint),
                ("created_at_us", c_int64), ("status", c_int)]


class HealthItem(Structure):
    _fields_ = [("name", c_char_p), ("value", c_int64), ("unit", c_char_p),
                ("threshold", c_int64), ("over", c_int), ("holder", c_char_p),
                ("started_at_us", c_int64), ("detail", c_char_p)]


class Schedule(Structure):
    _fields_ = [("name", c_char_p), ("spec", c_char_p), ("zone", c_char_p), ("queue", c_char_p),
                ("payload", c_void_p), ("payload_len", c_size_t), ("missed", c_int),
                ("paused", c_int), ("next_at_us", c_int64), ("last_at_us", c_int64)]


# What a late scheduling pass does with missed ticks (SQLQ_CRON_*).
CRON_SKIP, CRON_ONCE, CRON_ALL, CRON_MISSED_MAX = 0, 1, -1, 1000


_db = c_void_p
_lock = c_void_p
_p = POINTER

# name: (return type, argument types), as declared in include/sqlq.h.
PROTOTYPES = {
    "sqlq_version": (c_char_p, []),
    "sqlq_version_number": (c_int, []),
    "sqlq_status_name": (c_char_p, [c_int]),
    "sqlq_open": (c_int, [c_char_p, _p(Options), _p(_db)]),
    "sqlq_close": (None, [_db]),
    "sqlq_errmsg": (c_char_p, [_db]),
    "sqlq_errcode": (c_int, [_db]),
    "sqlq_payload_limit": (c_size_t, [_db]),
    "sqlq_backend": (c_char_p, [_db]),
    "sqlq_url_redacted": (c_char_p, [_db]),
    "sqlq_init": (c_int, [_db, _p(c_int)]),
    "sqlq_enqueue": (c_int, [_db, c_char_p, _p(JobSpec), _p(c_int64), _p(c_int)]),
    "sqlq_enqueue_batch": (c_int, [_db, c_char_p, _p(JobSpec), c_size_t, _p(c_int64)]),
    "sqlq_claim": (c_int, [_db, c_char_p, c_size_t, _p(ClaimOptions), _p(_p(Job)),
                           _p(c_size_t)]),
    "sqlq_jobs_free": (None, [_p(Job), c_size_t]),
    "sqlq_ack": (c_int, [_db, c_int64, c_int64]),
    "sqlq_ack_batch": (c_int, [_db, _p(JobRef), c_size_t, _p(c_size_t)]),
    "sqlq_fail": (c_int, [_db, c_int64, c_int64, c_char_p, _p(FailOptions)]),
    "sqlq_release": (c_int, [_db, c_int64, c_int64, c_double]),
    "sqlq_touch": (c_int, [_db, c_int64, c_int64, c_double, _p(c_int64)]),
    "sqlq_wait": (c_int, [_db, c_char_p, c_double]),
    "sqlq_interrupt": (None, [_db]),
    "sqlq_pause": (c_int, [_db, c_char_p]),
    "sqlq_resume": (c_int, [_db, c_char_p]),
    "sqlq_stats": (c_int, [_db, c_char_p, _p(_p(QueueStats)), _p(c_size_t)]),
    "sqlq_queue_stats_free": (None, [_p(QueueStats), c_size_t]),
    "sqlq_list": (c_int, [_db, c_char_p, c_int, c_size_t, _p(_p(JobInfo)), _p(c_size_t)]),
    "sqlq_job_infos_free": (None, [_p(JobInfo), c_size_t]),
    "sqlq_retry": (c_int, [_db, c_char_p, _p(c_int64), c_size_t, _p(c_size_t)]),
    "sqlq_purge": (c_int, [_db, c_char_p, _p(c_size_t)]),
    "sqlq_begin": (c_int, [_db]),
    "sqlq_commit": (c_int, [_db]),
    "sqlq_rollback": (c_int, [_db]),
    "sqlq_native_handle": (c_void_p, [_db]),
    "sqlq_lock_acquire": (c_int, [_db, c_char_p, c_size_t, c_double, _p(_lock)]),
    "sqlq_lock_xact": (c_int, [_db, c_char_p, c_size_t, c_double]),
    "sqlq_lock_check": (c_int, [_lock, c_double]),
    "sqlq_unlock": (None, [_lock]),
    "sqlq_ring_create": (c_int, [_db, c_char_p, c_size_t]),
    "sqlq_ring_push": (c_int, [_db, c_char_p, c_char_p, c_size_t, _p(c_int64)]),
    "sqlq_ring_push_batch": (c_int, [_db, c_char_p, _p(c_char_p), _p(c_size_t), c_size_t,
                                     _p(c_int64)]),
    "sqlq_ring_read": (c_int, [_db, c_char_p, c_int64, c_size_t, _p(_p(RingEntry)),
                               _p(c_size_t)]),
    "sqlq_ring_entries_free": (None, [_p(RingEntry), c_size_t]),
    "sqlq_ring_wait": (c_int, [_db, c_char_p, c_int64, c_double]),
    "sqlq_ring_drop": (c_int, [_db, c_char_p]),
    "sqlq_pool_add": (c_int, [_db, c_char_p, c_char_p, _p(c_int)]),
    "sqlq_pool_remove": (c_int, [_db, c_char_p, c_char_p]),
    "sqlq_pool_list": (c_int, [_db, c_char_p, _p(_p(PoolItem)), _p(c_size_t)]),
    "sqlq_pool_next": (c_int, [_db, c_char_p, c_double, _p(_p(PoolItem))]),
    "sqlq_pool_release": (c_int, [_db, c_char_p, c_char_p, c_int64]),
    "sqlq_pool_items_free": (None, [_p(PoolItem), c_size_t]),
    "sqlq_subscribe": (c_int, [_db, c_char_p, c_uint, c_char_p, c_uint]),
    "sqlq_unsubscribe": (c_int, [_db, c_char_p, c_char_p]),
    "sqlq_subscriptions": (c_int, [_db, _p(_p(Subscription)), _p(c_size_t)]),
    "sqlq_subscriptions_free": (None, [_p(Subscription), c_size_t]),
}

# The calls libsqlq 1.1 added (docs/api.md, "What each 1.x added").  A 1.0
# library lacks them, and a 1.1 library built before an addition lacks that
# one: each is declared when present, and the methods that need one raise
# Unavailable ("needs libsqlq 1.1") otherwise.
PROTOTYPES_1_1 = {
    "sqlq_cron_add": (c_int, [_db, _p(Schedule)]),
    "sqlq_cron_remove": (c_int, [_db, c_char_p]),
    "sqlq_cron_pause": (c_int, [_db, c_char_p]),
    "sqlq_cron_resume": (c_int, [_db, c_char_p]),
    "sqlq_cron_list": (c_int, [_db, _p(_p(Schedule)), _p(c_size_t)]),
    "sqlq_schedules_free": (None, [_p(Schedule), c_size_t]),
    "sqlq_cron_tick": (c_int, [_db, c_int64, _p(c_size_t), _p(c_int64)]),
    "sqlq_retention_set": (c_int, [_db, c_char_p, c_double, c_int64]),
    "sqlq_retention_get": (c_int, [_db, c_char_p, _p(c_double), _p(c_int64)]),
    "sqlq_history_prune": (c_int, [_db, c_char_p, c_size_t, _p(c_size_t)]),
    "sqlq_concurrency_set": (c_int, [_db, c_char_p, c_int64]),
    "sqlq_concurrency_get": (c_int, [_db, c_char_p, _p(c_int64)]),
    "sqlq_group_limit_set": (c_int, [_db, c_char_p, c_int64]),
    "sqlq_group_limit_get": (c_int, [_db, c_char_p, _p(c_int64)]),
    "sqlq_fair_set": (c_int, [_db, c_char_p, c_int]),
    "sqlq_fair_get": (c_int, [_db, c_char_p, _p(c_int)]),
    "sqlq_enqueue_after": (c_int, [_db, c_char_p, _p(JobSpec), c_size_t, _p(c_int64), c_size_t,
                                   _p(c_int64)]),
    "sqlq_rate_set": (c_int, [_db, c_char_p, c_int64, c_int64]),
    "sqlq_rate_get": (c_int, [_db, c_char_p, _p(c_int64), _p(c_int64)]),
    "sqlq_cancel": (c_int, [_db, _p(c_int64), c_size_t, _p(c_size_t)]),
    "sqlq_health": (c_int, [_db, _p(_p(HealthItem)), _p(c_size_t)]),
    "sqlq_health_items_free": (None, [_p(HealthItem), c_size_t]),
    "sqlq_summary": (c_int, [_db, c_char_p, c_int64, _p(_p(QueueSummary)), _p(c_size_t)]),
    "sqlq_queue_summaries_free": (None, [_p(QueueSummary), c_size_t]),
    "sqlq_locks": (c_int, [_db, c_size_t, _p(_p(LockInfo)), _p(c_size_t)]),
    "sqlq_lock_infos_free": (None, [_p(LockInfo), c_size_t]),
    "sqlq_lock_key": (c_int, [_db, c_char_p, c_size_t, _p(c_int64)]),
    "sqlq_rings": (c_int, [_db, c_char_p, c_size_t, _p(_p(RingInfo)), _p(c_size_t)]),
    "sqlq_ring_infos_free": (None, [_p(RingInfo), c_size_t]),
    "sqlq_pools": (c_int, [_db, c_char_p, c_size_t, _p(_p(PoolInfo)), _p(c_size_t)]),
    "sqlq_pool_infos_free": (None, [_p(PoolInfo), c_size_t]),
}

INSTALL_HINT = ("install libsqlq 1.x (build the sqlq tree with "
                "`cmake -B build -DBUILD_SHARED_LIBS=ON && cmake --build build && "
                "sudo cmake --install build`), or set SQLQ_LIBRARY to the path of libsqlq.so.1")


def _candidates():
    """The names to try, in order: $SQLQ_LIBRARY, the soname, then find_library's answer."""
    explicit = os.environ.get("SQLQ_LIBRARY")
    if explicit:
        return [explicit]
    names = [SONAME]
    found = ctypes.util.find_library("sqlq")
    if found and found != SONAME:
        names.append(found)
    return names


# The names of the calls declared on the loaded library.
declared = set()


def _declare(lib, prototypes):
    for fname, (restype, argtypes) in prototypes.items():
        func = getattr(lib, fname)
        func.restype = restype
        func.argtypes = argtypes
    declared.update(prototypes)


def load():
    """Load libsqlq and declare its calls; ImportError naming what to install when missing."""
    errors = []
    for name in _candidates():
        try:
            lib = ctypes.CDLL(name)
        except OSError as exc:
            errors.append(str(exc))
            continue
        try:
            _declare(lib, PROTOTYPES)
        except AttributeError as exc:
            raise ImportError(f"sqlq: {name} is not libsqlq 1.x ({exc}): {INSTALL_HINT}") from None
        if lib.sqlq_version_number() >= 1001000:  # libsqlq 1.1
            _declare(lib, {f: p for f, p in PROTOTYPES_1_1.items() if hasattr(lib, f)})
        major = lib.sqlq_version_number() // 1000000
        if major != REQUIRED_MAJOR:
            raise ImportError(f"sqlq: {name} is libsqlq {lib.sqlq_version().decode()}, "
                              f"this package needs {REQUIRED_MAJOR}.x: {INSTALL_HINT}")
        return lib
    raise ImportError(f"sqlq: cannot load libsqlq ({'; '.join(errors)}): {INSTALL_HINT}")


lib = load()
