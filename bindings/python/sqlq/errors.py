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


BY_STATUS = {}


def _status_class(name, status, doc, *bases):
    """The subclass of Error for one status code (also a subclass of bases)."""
    cls = type(name, (Error, *bases), {"status": status, "__doc__": doc,
                                       "__module__": __name__})
    BY_STATUS[status] = cls
    return cls


InternalError = _status_class("InternalError", _ffi.ERROR,
                              "SQLQ_ERROR: an internal or unexpected database error.")
Misuse = _status_class("Misuse", _ffi.MISUSE, "SQLQ_MISUSE: a bad argument (empty or over-long "
                       "name, bad URL), or a closed handle.", ValueError)
TooBig = _status_class("TooBig", _ffi.TOOBIG, "SQLQ_TOOBIG: a payload or a name is over its "
                       "limit.", ValueError)
NotFound = _status_class("NotFound", _ffi.NOTFOUND, "SQLQ_NOTFOUND: no such job, lock, queue, "
                         "ring, pool item or subscription.", LookupError)
Stale = _status_class("Stale", _ffi.STALE, "SQLQ_STALE: the claim token is no longer the job's.")
Busy = _status_class("Busy", _ffi.BUSY, "SQLQ_BUSY: a lock is held elsewhere, every pool item "
                     "is held, or the database is busy.")
Timeout = _status_class("Timeout", _ffi.TIMEOUT, "SQLQ_TIMEOUT: a wait reached its timeout.",
                        TimeoutError)
Interrupted = _status_class("Interrupted", _ffi.INTERRUPTED,
                            "SQLQ_INTERRUPTED: a wait was cut short by Database.interrupt().")
Unavailable = _status_class("Unavailable", _ffi.UNAVAILABLE, "SQLQ_UNAVAILABLE: the database "
                            "cannot be reached, or its backend is not built.", ConnectionError)
NoMemory = _status_class("NoMemory", _ffi.NOMEM, "SQLQ_NOMEM: out of memory.", MemoryError)
SchemaError = _status_class("SchemaError", _ffi.SCHEMA, "SQLQ_SCHEMA: the schema is missing "
                            "(run Database.init()) or newer than the library.")
Paused = _status_class("Paused", _ffi.PAUSED, "SQLQ_PAUSED: the queue is paused.")
LockLost = _status_class("LockLost", _ffi.LOCK_LOST, "SQLQ_LOCK_LOST: a held lock is lost, or "
                         "could not be confirmed in time.")


def from_status(status, message):
    """The exception for status (an unknown code of a newer library gives the base Error)."""
    cls = BY_STATUS.get(status)
    if cls is None:
        return Error(message, status)
    return cls(message)
