"""The worker loop: threads and asyncio, failures and retries, graceful shutdown."""

import asyncio
import os
import signal
import subprocess
import sys
import threading

import pytest

import sqlq
from conftest import wait_for

HERE = os.path.dirname(os.path.abspath(__file__))


def run_in_thread(worker):
    errors = []

    def target():
        try:
            worker.run(signals=False)
        except BaseException as exc:  # noqa: BLE001 - reported to the test
            errors.append(exc)

    t = threading.Thread(target=target, daemon=True)
    t.start()
    return t, errors


def stop_and_join(worker, thread, errors):
    worker.stop()
    thread.join(60)
    assert not thread.is_alive(), "the worker did not stop"
    assert not errors, errors


def test_threads_handle_every_job_once(db, url, queue):
    ids = db.enqueue_batch(queue, [f"job {i}" for i in range(500)])
    seen = []
    lock = threading.Lock()
    worker = sqlq.Worker(url, queue, concurrency=2, batch=50)

    @worker.handler
    def handle(job):
        with lock:
            seen.append(job.id)

    thread, errors = run_in_thread(worker)
    try:
        wait_for(lambda: len(seen) >= 500, what="500 jobs handled")
        # A job enqueued while the workers wait wakes them.
        late = db.enqueue(queue, b"late")
        wait_for(lambda: late in seen, what="the late job")
    finally:
        stop_and_join(worker, thread, errors)
    assert sorted(seen) == sorted(ids + [late])
    assert worker.acked == 501
    assert db.list(queue) == []


def test_asyncio_async_handler(db, url, queue):
    ids = db.enqueue_batch(queue, [b"x"] * 200)
    seen = []
    worker = sqlq.Worker(url, queue, concurrency=3, batch=20)

    @worker.handler
    async def handle(job):
        await asyncio.sleep(0)
        seen.append(job.id)
        if len(seen) == len(ids):
            worker.stop()

    async def main():
        await asyncio.wait_for(worker.run_async(signals=False), 60)

    asyncio.run(main())
    assert sorted(seen) == sorted(ids)
    wait_for(lambda: db.list(queue) == [], what="every job acked")


def test_handler_exception_retries_then_dead(db, url, queue):
    jid = db.enqueue(queue, b"bad", max_attempts=3)
    good = db.enqueue(queue, b"good")
    calls = []
    worker = sqlq.Worker(url, queue, concurrency=1, batch=10, backoff=0.01)

    @worker.handler
    def handle(job):
        calls.append((job.id, job.attempts))
        if job.payload == b"bad":
            raise ValueError("boom")

    thread, errors = run_in_thread(worker)
    try:
        wait_for(lambda: db.list(queue, "dead"), what="the failing job to be dead")
    finally:
        stop_and_join(worker, thread, errors)
    dead = db.list(queue, "dead")
    assert [d.id for d in dead] == [jid]
    assert dead[0].attempts == 3 and dead[0].last_error == "ValueError: boom"
    assert [c for c in calls if c[0] == jid] == [(jid, 1), (jid, 2), (jid, 3)]
    assert (good, 1) in calls and worker.failed == 3 and worker.acked == 1
    assert db.list(queue, "ready") == [] and db.list(queue, "running") == []


def test_release_and_fail_from_handler(db, url, queue):
    released = db.enqueue(queue, b"release")
    killed = db.enqueue(queue, b"kill")
    calls = []
    worker = sqlq.Worker(url, queue, concurrency=1, batch=10)

    @worker.handler
    def handle(job):
        calls.append(job.id)
        if job.payload == b"release" and job.attempts == 1 and calls.count(job.id) == 1:
            raise sqlq.Release(0)
        if job.payload == b"kill":
            raise sqlq.Fail("no use", dead=True)

    thread, errors = run_in_thread(worker)
    try:
        wait_for(lambda: calls.count(released) == 2 and db.list(queue, "dead"),
                 what="the released job handled again and the other dead")
    finally:
        stop_and_join(worker, thread, errors)
    dead = db.list(queue, "dead")
    assert [d.id for d in dead] == [killed] and dead[0].attempts == 1
    assert dead[0].last_error == "no use"
    wait_for(lambda: [j.id for j in db.list(queue)] == [killed], what="the released job acked")


def test_stop_releases_unstarted_jobs(db, url, queue):
    db.enqueue_batch(queue, [b"x"] * 50)
    seen = []
    worker = sqlq.Worker(url, queue, concurrency=1, batch=50)

    @worker.handler
    def handle(job):
        seen.append(job.id)
        if len(seen) == 5:
            worker.stop()

    worker.run(signals=False)
    assert len(seen) == 5 and worker.acked == 5 and worker.released == 45
    jobs = db.list(queue)
    assert len(jobs) == 45 and all(j.state == "ready" and j.attempts == 0 for j in jobs)


def test_worker_bad_arguments(url, queue):
    with pytest.raises(TypeError):
        sqlq.Worker(url, None)
    with pytest.raises(ValueError):
        sqlq.Worker(url, queue, batch=0)
    with pytest.raises(ValueError):
        sqlq.Worker(url, queue, concurrency=0)
    with pytest.raises(TypeError):
        sqlq.Worker(url, queue).run()  # no handler
    worker = sqlq.Worker("nosuch://x", queue, handler=lambda job: None)
    with pytest.raises(sqlq.Unavailable):
        worker.run(signals=False)


@pytest.mark.parametrize("mode", ["threads", "asyncio"])
def test_sigterm_loses_nothing(db, url, queue, tmp_path, mode):
    ids = set(db.enqueue_batch(queue, [b"x"] * 300))
    out = tmp_path / "handled"
    out.write_text("")
    proc = subprocess.Popen([sys.executable, os.path.join(HERE, "sigterm_worker.py"), url,
                             queue, str(out), mode], stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: len(out.read_text().split()) >= 30 or proc.poll() is not None,
                 what="the worker process to handle 30 jobs")
        assert proc.poll() is None, proc.stderr.read()
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert "stopped" in err
    handled = [int(x) for x in out.read_text().split()]
    assert len(handled) == len(set(handled)) and set(handled) <= ids
    left = db.list(queue)
    # Every job was either handled (and acked) or is ready again: none running, none lost.
    assert all(j.state == "ready" for j in left), ([j for j in left if j.state != "ready"], err)
    assert {j.id for j in left} == ids - set(handled)
    assert len(handled) < len(ids)


def test_busy_group_is_waited_for(db, url, queue):
    """Two slots, one FIFO group: the second job waits for the first, and the slot that
    finds the group busy backs off instead of spinning (wait() keeps saying a job is
    due); both are handled, in order."""
    ids = [db.enqueue(queue, b"1", group_key="g"), db.enqueue(queue, b"2", group_key="g")]
    seen = []
    release = threading.Event()
    worker = sqlq.Worker(url, queue, concurrency=2, batch=1)

    @worker.handler
    def handle(job):
        seen.append(job.id)
        if job.id == ids[0]:
            release.wait(30)

    thread, errors = run_in_thread(worker)
    try:
        wait_for(lambda: seen == ids[:1], what="the group's first job to start")
        release.set()
        wait_for(lambda: seen == ids, what="the group's second job")
    finally:
        stop_and_join(worker, thread, errors)


def test_no_back_off_after_a_claimed_job(db, url, queue):
    """A slot whose wait said a job was due, and whose claim got it, waits again when the
    queue is empty; it backs off only when a claim after such a wait comes back empty
    (a busy group).  Before the fix it backed off 50 ms after every woken claim."""
    seen = []
    worker = sqlq.Worker(url, queue, concurrency=1, batch=10)
    worker.handler(lambda job: seen.append(job.id))
    thread, errors = run_in_thread(worker)
    try:
        for i in range(5):
            jid = db.enqueue(queue, b"x")
            wait_for(lambda: jid in seen, what=f"job {i} handled")
            wait_for(lambda: worker.acked == i + 1, what=f"job {i} acked")
    finally:
        stop_and_join(worker, thread, errors)
    assert worker.backoffs == 0
