"""Transactional enqueue on the application's own connection (sqlq.sql), per driver:
the stdlib sqlite3 (SQLite), psycopg (PostgreSQL), MySQLdb (MariaDB); and Firebird,
which has no Python driver in Debian, through the package's own transaction.

A job enqueued in a transaction that rolls back never appears; one that commits
is handled by the package's worker.  Table subscriptions turn the application's
own writes into jobs the same way."""

import threading
import urllib.parse
import uuid

import pytest

import sqlq
from conftest import BACKEND, wait_for


def connect(url):
    """A DB-API connection of the backend's Python driver to the test database."""
    if BACKEND == "sqlite":
        import sqlite3
        return sqlite3.connect(url[len("sqlite:"):], timeout=30)
    if BACKEND == "postgres":
        import psycopg
        return psycopg.connect(url)
    if BACKEND == "mariadb":
        import MySQLdb
        u = urllib.parse.urlsplit(url)
        return MySQLdb.connect(host=u.hostname, port=u.port, user=u.username,
                               password=u.password or "", database=u.path.lstrip("/"))
    pytest.skip("no Python driver for Firebird in Debian")


def handled_by_worker(url, queue, count):
    """Run a worker until it handled count jobs; returns their payloads."""
    seen = []
    worker = sqlq.Worker(url, queue, concurrency=1, batch=10)

    @worker.handler
    def handle(job):
        seen.append(job.payload)
        if len(seen) >= count:
            worker.stop()

    t = threading.Thread(target=worker.run, kwargs={"signals": False}, daemon=True)
    t.start()
    t.join(60)
    assert not t.is_alive(), f"the worker handled {len(seen)} of {count} jobs"
    return seen


def test_plain_sql_enqueue_in_the_applications_transaction(db, url, queue):
    if BACKEND == "firebird":
        pytest.skip("Firebird: see test_firebird_transaction")
    table = f"orders_{uuid.uuid4().hex[:8]}"
    conn = connect(url)
    try:
        cur = conn.cursor()
        cur.execute(f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, total INTEGER)")
        conn.commit()
        # Rolled back: neither the order nor the job exist.
        cur.execute(f"INSERT INTO {table} (id, total) VALUES (1, 10)")
        sqlq.sql.enqueue(conn, queue, b"order 1")
        conn.rollback()
        assert db.list(queue) == []
        # Committed: both exist, and a worker handles the job.
        cur.execute(f"INSERT INTO {table} (id, total) VALUES (2, 20)")
        jid = sqlq.sql.enqueue(conn, queue, b"order 2\0\xff", priority=3, max_attempts=4,
                               group_key="customer-7")
        sqlq.sql.enqueue(conn, queue, "later", delay=3600)
        conn.commit()
        sqlq.sql.wake(conn, queue)
        conn.commit()
        infos = db.list(queue)
        assert [i.payload for i in infos] == [b"order 2\0\xff", b"later"]
        assert infos[0].priority == 3 and infos[0].max_attempts == 4
        assert infos[0].group_key == "customer-7" and infos[1].state == "scheduled"
        if jid is not None:
            assert jid == infos[0].id
        assert handled_by_worker(url, queue, 1) == [b"order 2\0\xff"]
        cur.execute(f"SELECT id FROM {table}")
        assert [r[0] for r in cur.fetchall()] == [2]
        conn.commit()
    finally:
        cur = conn.cursor()
        cur.execute(f"DROP TABLE {table}")
        conn.commit()
        conn.close()


def test_worker_wakes_on_plain_sql_insert(db, url, queue):
    if BACKEND == "firebird":
        pytest.skip("no Python driver for Firebird in Debian")
    conn = connect(url)
    seen = []
    # A missed wake-up leaves the job to the worker's next look, 60 s later
    # (idle_wait): the job must be handled well before that.
    worker = sqlq.Worker(url, queue, concurrency=1, batch=10, idle_wait=60)
    worker.handler(lambda job: seen.append(job.payload))
    t = threading.Thread(target=worker.run, kwargs={"signals": False}, daemon=True)
    t.start()
    try:
        sqlq.sql.enqueue(conn, queue, b"wake")
        conn.commit()
        sqlq.sql.wake(conn, queue)
        conn.commit()
        wait_for(lambda: seen == [b"wake"], timeout=20,
                 what="the worker to handle the inserted job")
    finally:
        worker.stop()
        t.join(60)
        conn.close()
    assert not t.is_alive()


def test_plain_sql_enqueue_with_a_dedupe_key(db, url, queue):
    """A second INSERT with the dedupe key of an unfinished job inserts nothing, and
    does not break the application's transaction; once the job is finished the key is
    free again."""
    if BACKEND == "firebird":
        pytest.skip("no Python driver for Firebird in Debian")
    conn = connect(url)
    try:
        first = sqlq.sql.enqueue(conn, queue, b"one", dedupe_key="user-9")
        again = sqlq.sql.enqueue(conn, queue, b"two", dedupe_key="user-9")
        other = sqlq.sql.enqueue(conn, queue, b"three", dedupe_key="user-10")
        conn.commit()
        infos = db.list(queue)
        assert [(i.payload, i.dedupe_key) for i in infos] == [(b"one", "user-9"),
                                                              (b"three", "user-10")]
        assert again is None
        if BACKEND != "mariadb":
            assert [first, other] == [i.id for i in infos]
        assert handled_by_worker(url, queue, 2) == [b"one", b"three"]
        assert sqlq.sql.enqueue(conn, queue, b"four", dedupe_key="user-9") is not None \
            or BACKEND == "mariadb"
        conn.commit()
        assert [i.payload for i in db.list(queue)] == [b"four"]
    finally:
        conn.close()


def test_firebird_transaction(db, url, queue):
    """Firebird's handlers and producers use the package itself: enqueue in a transaction
    of sqlq.Database; a rollback leaves no job, a commit is handled."""
    with pytest.raises(RuntimeError):
        with db.transaction():
            db.enqueue(queue, b"rolled back")
            raise RuntimeError("roll back")
    assert db.list(queue) == []
    with db.transaction():
        db.enqueue(queue, b"committed")
    assert handled_by_worker(url, queue, 1) == [b"committed"]


def test_unknown_connection_type():
    with pytest.raises(TypeError):
        sqlq.sql.enqueue(object(), "q", b"x")


def test_table_subscription(db, url, queue):
    if BACKEND == "firebird":
        pytest.skip("no Python driver for Firebird in Debian to write the table")
    table = f"langs_{uuid.uuid4().hex[:8]}"
    conn = connect(url)
    cur = conn.cursor()
    try:
        cur.execute(f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, name VARCHAR(20))")
        conn.commit()
        db.subscribe(table, queue, sqlq.ON_INSERT | sqlq.ON_DELETE, rows=True)
        subs = [s for s in db.subscriptions() if s.tag == queue]
        assert len(subs) == 1 and subs[0].table == table and subs[0].status == "active"
        assert subs[0].actions == sqlq.ON_INSERT | sqlq.ON_DELETE
        cur.execute(f"INSERT INTO {table} (id, name) VALUES (1, 'C')")
        conn.rollback()
        cur.execute(f"INSERT INTO {table} (id, name) VALUES (2, 'Python')")
        conn.commit()
        jobs = db.list(queue)
        assert len(jobs) == 1 and b'"action":"insert"' in jobs[0].payload.replace(b" ", b"")
        assert b"Python" in jobs[0].payload
        db.unsubscribe(table, queue)
        with pytest.raises(sqlq.NotFound):
            db.unsubscribe(table, queue)
    finally:
        cur.execute(f"DROP TABLE {table}")
        conn.commit()
        conn.close()
