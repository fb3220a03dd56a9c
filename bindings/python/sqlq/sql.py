"""Enqueue with plain SQL on the application's own connection, in its own transaction.

The schema is a public contract (docs/schema.md): a job is a row inserted into
sqlq_jobs, and it exists only if the inserting transaction commits.  enqueue()
writes that row through a DB-API connection of the standard sqlite3 module,
psycopg (3) or psycopg2 (PostgreSQL), or MySQLdb or PyMySQL (MariaDB/MySQL),
without committing: the caller commits or rolls back with its own writes.

    with conn:                                  # sqlite3: commits or rolls back
        conn.execute("INSERT INTO orders ...")
        sqlq.sql.enqueue(conn, "emails", b"order 42")
"""

from ._core import _bytes, _int, _seconds, _text


class _Dialect:
    """How one driver writes the row: its placeholder, the database's clock in
    microseconds, how the new job's id comes back, and how an INSERT whose dedupe
    key an unfinished job holds becomes a no-op (docs/schema.md)."""

    def __init__(self, mark, now_us, returning, skip_duplicate):
        self.mark = mark
        self.now_us = now_us
        self.returning = returning  # " RETURNING id", or "" to read cursor.lastrowid
        self.skip_duplicate = skip_duplicate


# The unique partial index of SQLite and PostgreSQL that holds dedupe keys.
_ON_DEDUPE_INDEX = (" ON CONFLICT (queue, dedupe_key) WHERE dedupe_key IS NOT NULL"
                    " AND state IN ('ready','running') DO NOTHING")
SQLITE = _Dialect("?", "CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER)", "",
                  _ON_DEDUPE_INDEX)
POSTGRES = _Dialect("%s", "sqlq_now()", " RETURNING id", _ON_DEDUPE_INDEX)
# MariaDB's unique key is on the generated column dedupe_live (docs/mysql.md).
MYSQL = _Dialect("%s", "UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6))", None,
                 " ON DUPLICATE KEY UPDATE id = id")

# The top-level module of a connection's class -> its dialect.
DIALECTS = {"sqlite3": SQLITE, "psycopg": POSTGRES, "psycopg2": POSTGRES, "MySQLdb": MYSQL,
            "pymysql": MYSQL}


def dialect_of(conn):
    """The dialect of a DB-API connection, by the module its class comes from."""
    module = type(conn).__module__.split(".")[0]
    try:
        return DIALECTS[module]
    except KeyError:
        raise TypeError(f"sqlq.sql: no dialect for connections of {module!r}; write the "
                        f"INSERT of docs/schema.md yourself") from None


def enqueue(conn, queue, payload=b"", *, priority=None, delay=0.0, max_attempts=None,
            group_key=None, dedupe_key=None):
    """Insert one job into sqlq_jobs through conn, in its open transaction (not committed
    here).  Returns the job's id, or None when an unfinished job of the queue has the
    same dedupe_key (then nothing is inserted) and always None on MariaDB, whose ids a
    trigger assigns."""
    d = dialect_of(conn)
    q = _text(queue, "queue")
    if not q:
        raise TypeError("queue must be a non-empty str")
    columns = ["queue", "payload"]
    values = [d.mark, d.mark]
    params = [q.decode("utf-8", "surrogateescape"), _bytes(payload)]
    for column, value in (("priority", priority), ("max_attempts", max_attempts)):
        if value is not None:
            columns.append(column)
            values.append(d.mark)
            params.append(_int(value, column))
    for column, value in (("group_key", group_key), ("dedupe_key", dedupe_key)):
        if value is not None:
            columns.append(column)
            values.append(d.mark)
            params.append(_text(value, column).decode("utf-8", "surrogateescape"))
    if delay:
        columns.append("run_at")
        values.append(f"{d.now_us} + {d.mark}")
        params.append(int(_seconds(delay, "delay") * 1e6))
    sql = (f"INSERT INTO sqlq_jobs ({', '.join(columns)}) VALUES ({', '.join(values)})"
           f"{d.skip_duplicate if dedupe_key is not None else ''}{d.returning or ''}")
    cur = conn.cursor()
    try:
        cur.execute(sql, params)
        if d.returning:
            row = cur.fetchone()
            return row[0] if row is not None else None
        return cur.lastrowid if d.returning == "" and cur.rowcount == 1 else None
    finally:
        cur.close()


def wake(conn, queue):
    """After the commit, on MariaDB: wake the queue's waiting workers now rather than
    within their wake_interval (CALL sqlq_wake, docs/mysql.md).  Elsewhere a commit
    wakes them by itself and this does nothing."""
    if dialect_of(conn) is MYSQL:
        cur = conn.cursor()
        try:
            cur.execute("CALL sqlq_wake(%s, 1)", [_text(queue, "queue").decode()])
        finally:
            cur.close()
