"""sqlq: a durable job queue, named locks, wake-ups, rings and pools inside the SQL
database an application already runs (SQLite, PostgreSQL, MariaDB, Firebird).

A binding of libsqlq 1.x with ctypes; see docs/python.md.
"""

from ._core import (ON_DELETE, ON_INSERT, ON_UPDATE, Database, HealthItem, Job, JobInfo, JobSpec,
                    Lock, LockInfo, PoolInfo, PoolItem, QueueStats, QueueSummary, RingEntry,
                    RingInfo, Schedule, Subscription, open, status_name, version,
                    version_number)
from .errors import (Busy, Error, InternalError, Interrupted, LockLost, Misuse, NoMemory,
                     NotFound, Paused, SchemaError, Stale, Timeout, TooBig, Unavailable)
from . import sql
from .worker import Fail, Release, Worker

__version__ = "1.1.0"

__all__ = [
    "open", "sql", "Database", "HealthItem", "Job", "JobInfo", "JobSpec", "Lock", "LockInfo",
    "PoolInfo", "PoolItem", "QueueStats", "QueueSummary", "RingEntry", "RingInfo", "Schedule",
    "Subscription", "Worker", "Release", "Fail", "version", "version_number",
    "status_name", "ON_INSERT", "ON_UPDATE", "ON_DELETE", "Error", "InternalError", "Misuse",
    "TooBig", "NotFound", "Stale", "Busy", "Timeout", "Interrupted", "Unavailable", "NoMemory",
    "SchemaError", "Paused", "LockLost",
]
