"""Schedules of periodic jobs, retention of finished jobs, concurrency and rate limits,
dependencies, per-group limits and fair queues (libsqlq 1.1) through the package, on the
backend the fixtures name."""

import pytest

import sqlq

MINUTE_US = 60 * 1000000


def test_cron_add_list_pause_resume_remove(db, queue):
    name = f"{queue}-s"
    db.cron_add(name, "*/5 * * * *", queue, b"\x00tick\xff", zone="Europe/Paris", missed=3)
    (s,) = [s for s in db.cron_list() if s.name == name]
    assert (s.spec, s.zone, s.queue, s.payload, s.missed, s.paused, s.last_at_us) == \
        ("*/5 * * * *", "Europe/Paris", queue, b"\x00tick\xff", 3, False, 0)
    assert s.next_at_us % (5 * MINUTE_US) == 0
    db.cron_pause(name)
    assert [s.paused for s in db.cron_list() if s.name == name] == [True]
    db.cron_resume(name)
    assert [s.paused for s in db.cron_list() if s.name == name] == [False]
    db.cron_add(name, "@every 90s", queue, missed="all")
    assert [(s.spec, s.zone, s.missed) for s in db.cron_list() if s.name == name] == \
        [("@every 90s", "UTC", "all")]
    db.cron_remove(name)
    assert [s for s in db.cron_list() if s.name == name] == []
    with pytest.raises(sqlq.NotFound):
        db.cron_remove(name)


def test_cron_tick_enqueues_one_job_per_tick(db, queue):
    name = f"{queue}-t"
    db.cron_add(name, "@every 1m", queue, b"p", missed="once")
    try:
        (s,) = [s for s in db.cron_list() if s.name == name]
        tick = s.next_at_us
        assert db.cron_tick(tick - 1)[0] == 0
        enqueued, next_at = db.cron_tick(tick)
        assert enqueued == 1 and next_at > 0
        assert db.cron_tick(tick)[0] == 0  # the same tick again: nothing
        (job,) = db.claim(queue, 10)
        assert job.payload == b"p" and job.dedupe_key == f"cron:{name}:{tick}"
        job.ack()
        assert [s.last_at_us for s in db.cron_list() if s.name == name] == [tick]
    finally:
        db.cron_remove(name)


@pytest.mark.parametrize("spec, zone, missed", [
    ("61 * * * *", "UTC", "skip"),          # a minute that does not exist
    ("0 0 30 2 *", "UTC", "skip"),          # never ticks
    ("* * * *", "UTC", "skip"),             # four fields
    ("@every 0s", "UTC", "skip"),
    ("@daily", "Mars/Olympus_Mons", "skip"),
    ("@daily", "../../etc/passwd", "skip"),
    ("@daily", "UTC", 1001),
    ("@daily", "UTC", -2),
])
def test_cron_add_refuses_garbage(db, queue, spec, zone, missed):
    with pytest.raises(sqlq.Misuse):
        db.cron_add(f"{queue}-g", spec, queue, zone=zone, missed=missed)
    assert [s for s in db.cron_list() if s.name == f"{queue}-g"] == []


def test_cron_add_wrong_types(db, queue):
    with pytest.raises(sqlq.Misuse):
        db.cron_add(f"{queue}-g", "@daily", queue, missed="sometimes")
    with pytest.raises(TypeError):
        db.cron_add(f"{queue}-g", "@daily", queue, missed=1.5)
    with pytest.raises(TypeError):
        db.cron_add(f"{queue}-g", 5, queue)
    with pytest.raises(sqlq.Misuse):
        db.cron_add(f"{queue}-g", None, queue)
    with pytest.raises(sqlq.Misuse):
        db.cron_add(f"{queue}-g", "@daily\0* * * * *", queue)
    assert [s for s in db.cron_list() if s.name == f"{queue}-g"] == []


def test_retention_set_get_and_prune(url, queue):
    with sqlq.open(url, keep_history=True) as db:
        db.init()
        assert db.retention_get(queue) == (0.0, 0)
        db.enqueue_batch(queue, [b"a", b"b", b"c", b"d"])
        db.ack_batch(db.claim(queue, 10))
        assert len(db.list(queue, "done")) == 4
        db.retention_set(queue, keep_count=1)
        assert db.retention_get(queue) == (0.0, 1)
        assert db.history_prune(queue, 2) == 2
        assert db.history_prune(queue) == 1
        assert db.history_prune(queue) == 0
        assert [j.payload for j in db.list(queue, "done")] == [b"d"]
        db.retention_set(queue, keep_for=3600.5)
        assert db.retention_get(queue) == (3600.5, 0)
        db.retention_set(queue)
        assert db.retention_get(queue) == (0.0, 0)


@pytest.mark.parametrize("keep_for, keep_count", [(-1.0, 0), (float("nan"), 0), (0.0, -1),
                                                  (1e12, 0), (0.0, 10**10)])
def test_retention_refuses_garbage(db, queue, keep_for, keep_count):
    with pytest.raises(sqlq.Misuse):
        db.retention_set(queue, keep_for=keep_for, keep_count=keep_count)
    assert db.retention_get(queue) == (0.0, 0)


def test_prune_refuses_an_oversized_batch(db, queue):
    with pytest.raises(sqlq.Misuse):
        db.history_prune(queue, 10**9)


def test_concurrency_limit(db, queue):
    assert db.concurrency_get(queue) == 0
    db.enqueue_batch(queue, [b"1", b"2", b"3"])
    db.concurrency_set(queue, 2)
    assert db.concurrency_get(queue) == 2
    assert len(db.claim(queue, 10)) == 2
    assert db.claim(queue, 10) == []
    for bad in (-1, 1000001):
        with pytest.raises(sqlq.Misuse):
            db.concurrency_set(queue, bad)
    with pytest.raises(TypeError):
        db.concurrency_set(queue, "3")
    assert db.concurrency_get(queue) == 2
    db.concurrency_set(queue, 0)
    assert len(db.claim(queue, 10)) == 1


def test_rate_limit(db, queue):
    assert db.rate_get(queue) == (0, 0.0)
    db.enqueue_batch(queue, [b"1", b"2", b"3", b"4"])
    db.rate_set(queue, 2, 60)
    assert db.rate_get(queue) == (2, 60.0)
    assert len(db.claim(queue, 10)) == 2
    assert db.claim(queue, 10) == []
    for bad_n, bad_period in ((-1, 1), (100001, 1), (1, 0), (1, -1), (1, 1e9),
                              (1, float("nan")), (1, float("inf"))):
        with pytest.raises(sqlq.Misuse):
            db.rate_set(queue, bad_n, bad_period)
    with pytest.raises(TypeError):
        db.rate_set(queue, "3", 1)
    with pytest.raises(TypeError):
        db.rate_set(queue, 3, "1s")
    assert db.rate_get(queue) == (2, 60.0)
    db.rate_set(queue, 3, 0.5)
    assert db.rate_get(queue) == (3, 0.5)
    db.rate_set(queue, 0)
    assert db.rate_get(queue) == (0, 0.0)
    assert len(db.claim(queue, 10)) == 2


def test_group_limit(db, queue):
    assert db.group_limit_get(queue) == 1
    ids = [db.enqueue(queue, str(i), group_key="g") for i in range(4)]
    assert [j.id for j in db.claim(queue, 10)] == ids[:1]
    db.group_limit_set(queue, 3)
    assert db.group_limit_get(queue) == 3
    assert [j.id for j in db.claim(queue, 10)] == ids[1:3]
    for bad in (0, -1, 1000001):
        with pytest.raises(sqlq.Misuse):
            db.group_limit_set(queue, bad)
    with pytest.raises(TypeError):
        db.group_limit_set(queue, "3")
    assert db.group_limit_get(queue) == 3


def test_fair_queue(db, queue):
    assert db.fair_get(queue) is False
    for i in range(5):
        db.enqueue(queue, f"a{i}", group_key="a")
    db.enqueue(queue, "b0", group_key="b")
    db.group_limit_set(queue, 1000)
    db.fair_set(queue, True)
    assert db.fair_get(queue) is True
    assert [j.payload for j in db.claim(queue, 3)] == [b"a0", b"b0", b"a1"]
    with pytest.raises(TypeError):
        db.fair_set(queue, 1)
    db.fair_set(queue, False)
    assert db.fair_get(queue) is False


def test_fan_out_fan_in(db, queue):
    batch = db.enqueue_batch(queue, [b"a", b"b"])
    (last,) = db.enqueue_batch(queue, [b"fan-in"], after=batch)
    assert [j.state for j in db.list(queue) if j.id == last] == ["waiting"]
    jobs = db.claim(queue, 10)
    assert sorted(j.payload for j in jobs) == [b"a", b"b"]
    jobs[0].ack()
    assert db.claim(queue, 10) == []
    jobs[1].ack()
    (job,) = db.claim(queue, 10)
    assert job.id == last and job.payload == b"fan-in"
    job.ack()
    for bad in ([], [0], [-3]):
        with pytest.raises(sqlq.Misuse):
            db.enqueue_batch(queue, [b"x"], after=bad)
    with pytest.raises(sqlq.NotFound):
        db.enqueue_batch(queue, [b"x"], after=[last + 10**6])
    with pytest.raises(TypeError):
        db.enqueue_batch(queue, [b"x"], after=["1"])
    assert db.list(queue) == []


def test_cancel(db, queue):
    done, running, ready = db.enqueue_batch(queue, [b"done", b"running", b"ready"])
    (job,) = db.claim(queue, 1)
    assert job.id == done
    job.ack()
    (job,) = db.claim(queue, 1)
    assert job.id == running
    assert db.cancel([ready, done, running, running, 10**12]) == 2
    with pytest.raises(sqlq.Stale):
        job.ack()
    assert sorted((j.id, j.state, j.last_error) for j in db.list(queue)) == \
        [(running, "dead", "cancelled"), (ready, "dead", "cancelled")]
    assert db.cancel([running, ready]) == 0 and db.cancel([]) == 0
    assert db.claim(queue, 10) == []
    with pytest.raises(TypeError):
        db.cancel(["1"])
