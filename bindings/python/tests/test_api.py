"""The whole public API through the package, on the backend of SQLQ_TEST_BACKEND."""

import threading

import pytest

import sqlq
from conftest import BACKEND


def test_version():
    assert sqlq.version().startswith("1.")
    assert sqlq.version_number() // 1000000 == 1
    assert sqlq.status_name(6) == "SQLQ_BUSY"


def test_handle_properties(db, url):
    assert db.backend in {"sqlite": ("sqlite",), "postgres": ("postgres",),
                          "mariadb": ("mysql",), "firebird": ("firebird",)}[BACKEND]
    assert "secret" not in db.url
    assert db.payload_limit == 1048576
    assert db.init() == 14
    assert "Database" in repr(db)


def test_enqueue_claim_ack_bytes_and_text(db, queue):
    payload = bytes(range(256)) + b"\0end"
    first = db.enqueue(queue, payload, priority=5)
    second = db.enqueue(queue, "héllo")
    jobs = db.claim(queue, 10, lease=60)
    assert [j.id for j in jobs] == [first, second]
    assert jobs[0].payload == payload
    assert jobs[1].payload == "héllo".encode() and jobs[1].text == "héllo"
    assert jobs[0].priority == 5 and jobs[0].attempts == 1 and jobs[0].queue == queue
    assert jobs[0].max_attempts == 25 and jobs[0].deadline > 0
    jobs[0].ack()
    assert db.ack_batch([jobs[1]]) == 1
    assert db.list(queue) == []


def test_enqueue_options_and_batch(db, queue):
    jid, dup = db.enqueue(queue, b"x", dedupe_key="k", return_duplicate=True)
    again, dup2 = db.enqueue(queue, b"y", dedupe_key="k", return_duplicate=True)
    assert (dup, dup2, again) == (False, True, jid)
    ids = db.enqueue_batch(queue, [b"a", "b", sqlq.JobSpec(b"c", group_key="g", priority=-1)],
                           max_attempts=3)
    assert len(ids) == 3
    infos = {i.id: i for i in db.list(queue)}
    assert infos[ids[0]].max_attempts == 3 and infos[ids[2]].group_key == "g"
    assert infos[ids[2]].priority == -1 and infos[jid].dedupe_key == "k"
    later = db.enqueue(queue, b"later", delay=3600)
    assert db.list(queue, "scheduled")[0].id == later
    assert db.enqueue_batch(queue, []) == []


def test_fail_retry_dead_and_purge(db, queue):
    jid = db.enqueue(queue, b"p", max_attempts=2)
    job = db.claim(queue)[0]
    job.fail("first", retry_now=True)
    job = db.claim(queue)[0]
    assert job.attempts == 2
    db.fail(job, "second")
    info = db.list(queue, "dead")[0]
    assert info.id == jid and info.last_error == "second"
    assert db.stats(queue)[0].dead == 1
    assert db.retry(queue) == 1
    assert db.list(queue, "ready")[0].attempts == 0
    job = db.claim(queue)[0]
    job.fail("dead now", dead=True)
    assert db.retry(queue, [jid]) == 1
    assert db.purge(queue) == 1


def test_stale_release_touch(db, queue):
    db.enqueue(queue, b"p")
    job = db.claim(queue, lease=30)[0]
    until = job.touch(120)
    assert until == job.lease_until_us and job.deadline > 0
    job.release()
    with pytest.raises(sqlq.Stale) as info:
        job.ack()
    assert info.value.status == 5 and info.value.status_name == "SQLQ_STALE"
    again = db.claim(queue)[0]
    assert again.id == job.id and again.attempts == 1  # the release did not count
    assert db.ack_batch([job, again]) == 1  # the first token is stale


def test_done_jobs_from_history(url, db, queue):
    with sqlq.open(url, keep_history=True) as h:
        h.enqueue(queue, b"first")
        h.enqueue(queue, b"second")
        for job in h.claim(queue, 2):
            job.ack()
    done = db.list(queue, "done")
    assert sorted(j.payload for j in done) == [b"first", b"second"]
    assert all(j.state == "done" for j in done)
    assert db.list(queue, "done", limit=1)[0].run_at_us >= done[1].run_at_us


def test_transaction(db, queue):
    with db.transaction():
        db.enqueue(queue, b"kept")
    with pytest.raises(RuntimeError):
        with db.transaction():
            db.enqueue(queue, b"dropped")
            raise RuntimeError("roll back")
    assert [j.payload for j in db.list(queue)] == [b"kept"]
    db.begin()
    with pytest.raises(sqlq.Misuse):
        db.begin()
    db.rollback()


def test_stats_pause_resume(db, queue):
    db.enqueue(queue, b"p")
    db.pause(queue)
    with pytest.raises(sqlq.Paused):
        db.claim(queue)
    stats = db.stats(queue)[0]
    assert stats.paused and stats.ready == 1 and stats.queue == queue
    db.resume(queue)
    assert len(db.claim(queue)) == 1
    assert any(s.queue == queue for s in db.stats())


HEALTH_ITEMS = {
    "sqlite": ["wal_bytes", "checkpoint_starved_frames", "database_bytes"],
    "postgres": ["oldest_xmin_age", "oldest_xmin_xacts", "dead_rows", "table_bytes"],
    "mysql": ["history_list_length", "oldest_transaction_age", "table_bytes"],
    "firebird": ["oldest_transaction_gap", "oldest_active_gap", "oldest_snapshot_gap",
                 "database_bytes"],
}


def test_health(db, queue):
    db.enqueue(queue, b"p")
    items = db.health()
    assert [h.name for h in items] == HEALTH_ITEMS[db.backend]
    for h in items:
        assert isinstance(h, sqlq.HealthItem)
        assert h.value >= 0 and h.threshold > 0 and h.unit
        assert h.over == (h.value > h.threshold)
        assert h.holder is None or isinstance(h.holder, str)
    if db.backend == "sqlite":
        assert items[2].value > 0  # the database file


def test_wait_timeout_and_interrupt(db, queue):
    assert db.wait(queue, 0.05) is False
    timer = threading.Timer(0.2, db.interrupt)
    timer.start()
    try:
        with pytest.raises(sqlq.Interrupted):
            db.wait(queue, 60)
    finally:
        timer.cancel()
    db.enqueue(queue, b"p")
    assert db.wait(queue, 5) is True


def test_locks(db, url, queue):
    name = f"lock-{queue}".encode() + b"\0\xff"
    with sqlq.open(url) as other:
        with db.lock(name, timeout=5) as lock:
            assert lock.held
            lock.check(5)
            with pytest.raises(sqlq.Busy):
                other.lock(name, timeout=0)
        assert not lock.held
        lock.unlock()  # again: nothing
        with pytest.raises(sqlq.Misuse):
            lock.check(1)
        other.lock(name).unlock()
        held = db.lock(name)
    db.close()  # releases held; its handle must not be touched after
    assert not held.held
    held.unlock()
    with sqlq.open(url) as third:
        third.lock(name, timeout=5).unlock()


def test_lock_xact(db, url, queue):
    name = f"xact-{queue}"
    with pytest.raises(sqlq.Misuse):
        db.lock_xact(name)
    with db.transaction():
        db.lock_xact(name, 5)


def test_rings(db, queue):
    ring = queue
    db.ring_create(ring, 3)
    assert db.ring_push(ring, b"a\0") == 1
    assert db.ring_push_batch(ring, [b"b", "c", b"d"]) == 2
    entries = db.ring_read(ring)
    assert [e.payload for e in entries] == [b"b", b"c", b"d"]
    assert [e.seq for e in db.ring_read(ring, since=2, limit=1)] == [3]
    assert db.ring_wait(ring, since=3, timeout=5) is True
    assert db.ring_wait(ring, since=10, timeout=0.05) is False
    db.ring_drop(ring)
    with pytest.raises(sqlq.NotFound):
        db.ring_read(ring)


def test_pools(db, queue):
    pool = queue
    assert db.pool_add(pool, "k1") is True
    assert db.pool_add(pool, "k1") is False
    db.pool_add(pool, "k2")
    first = db.pool_next(pool, hold=60)
    second = db.pool_next(pool, hold=60)
    assert {first.item, second.item} == {"k1", "k2"}
    with pytest.raises(sqlq.Busy):
        db.pool_next(pool, hold=60)
    db.pool_release(pool, first)
    with pytest.raises(sqlq.Stale):
        db.pool_release(pool, first.item, first.token)
    assert [p.item for p in db.pool_list(pool)][0] == first.item
    for item in ("k1", "k2"):
        db.pool_remove(pool, item)
    with pytest.raises(sqlq.NotFound):
        db.pool_list(pool)


# ----- garbage in: clear exceptions, never a crash ---------------------------

def test_bad_urls():
    for bad in ("", "nosuch://x", "postgres://", "sqlite:"):
        with pytest.raises(sqlq.Error) as info:
            sqlq.open(bad)
        assert info.value.status in (2, 9) and str(info.value)
    for wrong in (None, 42, 3.5, ["sqlite:x"]):
        with pytest.raises(TypeError):
            sqlq.open(wrong)
    with pytest.raises(sqlq.Misuse):
        sqlq.open("sqlite:/tmp/x\0y")
    with pytest.raises(TypeError):
        sqlq.open("sqlite::memory:", payload_limit="big")
    with pytest.raises(sqlq.Misuse):
        sqlq.open("sqlite::memory:", payload_limit=-1)
    with pytest.raises(TypeError):
        sqlq.open("sqlite::memory:", nosuch=1)


def test_wrong_types(db, queue):
    for call in (lambda: db.enqueue(42, b"x"),
                 lambda: db.enqueue(queue, 42),
                 lambda: db.enqueue(queue, object()),
                 lambda: db.enqueue(queue, b"x", priority="high"),
                 lambda: db.enqueue(queue, b"x", delay="soon"),
                 lambda: db.enqueue(queue, b"x", dedupe_key=5),
                 lambda: db.enqueue_batch(queue, [b"x", 3]),
                 lambda: db.claim(queue, "ten"),
                 lambda: db.claim(queue, 1, lease=None),
                 lambda: db.ack(5),
                 lambda: db.wait(queue, "long"),
                 lambda: db.lock(None),
                 lambda: db.ring_push(queue, None),
                 lambda: db.pool_add(queue, 7)):
        with pytest.raises(TypeError):
            call()


def test_bad_values(db, queue):
    for call, exc in ((lambda: db.enqueue("", b"x"), sqlq.Misuse),
                      (lambda: db.enqueue("a\0b", b"x"), sqlq.Misuse),
                      (lambda: db.enqueue("x" * 129, b"x"), sqlq.Misuse),
                      (lambda: db.enqueue(queue, b"x" * (1048576 + 1)), sqlq.TooBig),
                      (lambda: db.enqueue(queue, b"x", delay=float("nan")), sqlq.Misuse),
                      (lambda: db.claim(queue, 0), sqlq.Misuse),
                      (lambda: db.claim(queue, 100001), sqlq.Misuse),
                      (lambda: db.list(queue, "gone"), sqlq.Misuse),
                      (lambda: db.list(queue, limit=-1), sqlq.Misuse),
                      (lambda: db.ack(123456789, 1), sqlq.Stale),
                      (lambda: db.fail(123456789, "x", token=1, backoff=-1), sqlq.Misuse),
                      (lambda: db.lock(b""), sqlq.Misuse),
                      (lambda: db.ring_create(queue, 0), sqlq.Misuse),
                      (lambda: db.ring_read("no_such_ring_" + queue), sqlq.NotFound)):
        with pytest.raises(exc):
            call()
    assert isinstance(sqlq.Misuse("x"), ValueError)  # usable as ValueError too
    assert db.list(queue) == []


def test_closed_handle(url, queue):
    db = sqlq.open(url)
    db.close()
    db.close()
    assert db.closed and "closed" in repr(db)
    for call in (lambda: db.enqueue(queue, b"x"), lambda: db.claim(queue), db.init,
                 lambda: db.stats(), lambda: db.backend, lambda: db.lock("n"), db.begin):
        with pytest.raises(sqlq.Misuse):
            call()
    db.interrupt()  # nothing to interrupt: no error


def test_unreachable_server():
    with pytest.raises(sqlq.Unavailable):
        sqlq.open("postgres://nobody@127.0.0.1:1/none").init()


def test_an_exception_class_per_status():
    from sqlq.errors import from_status
    classes = set()
    for code in range(1, 14):
        exc = from_status(code, "text")
        assert isinstance(exc, sqlq.Error) and exc.status == code and str(exc) == "text"
        assert exc.status_name == sqlq.status_name(code) and exc.status_name.startswith("SQLQ_")
        classes.add(type(exc))
    assert len(classes) == 13
    unknown = from_status(99, "newer")
    assert type(unknown) is sqlq.Error and unknown.status == 99
    assert issubclass(sqlq.Timeout, TimeoutError) and issubclass(sqlq.NotFound, LookupError)


def test_out_of_range_numbers(db, queue):
    for call in (lambda: db.enqueue(queue, b"x", priority=2**31),
                 lambda: db.enqueue(queue, b"x", max_attempts=-1),
                 lambda: db.enqueue(queue, b"x", max_attempts=2**40),
                 lambda: db.enqueue_batch(queue, [b"x"], priority=-2**31 - 1),
                 lambda: db.claim(queue, 2**70),
                 lambda: db.claim(queue, -1),
                 lambda: db.ack(2**63, 1),
                 lambda: db.ack_batch([(1, 2**64)]),
                 lambda: db.retry(queue, [2**63]),
                 lambda: db.ring_read(queue, since=2**63),
                 lambda: db.pool_release(queue, "item", 2**64),
                 lambda: db.subscribe("t", queue, 2**32)):
        with pytest.raises(sqlq.Misuse):
            call()
    assert db.list(queue) == []


def test_job_of_a_closed_handle(url, queue):
    with sqlq.open(url) as db:
        db.init()
        db.enqueue(queue, b"x")
        job = db.claim(queue)[0]
    with pytest.raises(sqlq.Misuse):
        job.ack()
    with sqlq.open(url) as db:
        db.purge(queue)
