"""One exception class per status code of libsqlq, all under sqlq.Error."""

from . import _ffi


class Error(Exception):
    """A call of libsqlq failed: .status is its SQLQ_ code, .status_name its name
    ("SQLQ_BUSY"), str() the library's error text (sqlq_errmsg)."""

    status = _ffi.ERROR

    def __init__(self, message, status=None):
        super().__init__(message)
        if status is not None:
            self.status = status

    @property
    def status_name(self):
        return _ffi.lib.sqlq_status_name(self.status).decode()

    @property
    def message(self):
        return self.args[0] if self.args else ""


class InternalError(Error):
    """SQLQ_ERROR: an internal or unexpected database error."""
    status = _ffi.ERROR


class Misuse(Error, ValueError):
    """SQLQ_MISUSE: a bad argument (empty or over-long name, bad URL), or a closed handle."""
    status = _ffi.MISUSE


class TooBig(Error, ValueError):
    """SQLQ_TOOBIG: a payload or a name is over its limit."""
    status = _ffi.TOOBIG


class NotFound(Error, LookupError):
    """SQLQ_NOTFOUND: no such job, lock, queue, ring, pool item or subscription."""
    status = _ffi.NOTFOUND


class Stale(Error):
    """SQLQ_STALE: the claim token is no longer the job's."""
    status = _ffi.STALE


class Busy(Error):
    """SQLQ_BUSY: a lock is held elsewhere, every pool item is held, or the database is busy."""
    status = _ffi.BUSY


class Timeout(Error, TimeoutError):
    """SQLQ_TIMEOUT: a wait reached its timeout."""
    status = _ffi.TIMEOUT


class Interrupted(Error):
    """SQLQ_INTERRUPTED: a wait was cut short by Database.interrupt()."""
    status = _ffi.INTERRUPTED


class Unavailable(Error, ConnectionError):
    """SQLQ_UNAVAILABLE: the database cannot be reached, or its backend is not built."""
    status = _ffi.UNAVAILABLE


class NoMemory(Error, MemoryError):
    """SQLQ_NOMEM: out of memory."""
    status = _ffi.NOMEM


class SchemaError(Error):
    """SQLQ_SCHEMA: the schema is missing (run Database.init()) or newer than the library."""
    status = _ffi.SCHEMA


class Paused(Error):
    """SQLQ_PAUSED: the queue is paused."""
    status = _ffi.PAUSED


class LockLost(Error):
    """SQLQ_LOCK_LOST: a held lock is lost, or could not be confirmed in time."""
    status = _ffi.LOCK_LOST


BY_STATUS = {cls.status: cls for cls in (
    InternalError, Misuse, TooBig, NotFound, Stale, Busy, Timeout, Interrupted, Unavailable,
    NoMemory, SchemaError, Paused, LockLost)}


def from_status(status, message):
    """The exception for status (an unknown code of a newer library gives the base Error)."""
    cls = BY_STATUS.get(status)
    if cls is None:
        return Error(message, status)
    return cls(message)
