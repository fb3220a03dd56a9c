"""Fixtures of the sqlq package's tests.

The backend comes from SQLQ_TEST_BACKEND (sqlite, postgres, mariadb, firebird;
default sqlite) and the server's URL from SQLQ_TEST_PG_URL, SQLQ_TEST_MY_URL or
SQLQ_TEST_FB_URL, as tests/CMakeLists.txt sets them for the ctest tests
python_<backend> (which start the throwaway servers).  Each test gets a queue
of its own, so that tests on one server never see each other's jobs.
"""

import os
import time
import uuid

import pytest

import sqlq

BACKEND = os.environ.get("SQLQ_TEST_BACKEND", "sqlite")
SERVER_URL_VARS = {"postgres": "SQLQ_TEST_PG_URL", "mariadb": "SQLQ_TEST_MY_URL",
                   "firebird": "SQLQ_TEST_FB_URL"}


@pytest.fixture
def url(tmp_path):
    if BACKEND == "sqlite":
        return f"sqlite:{tmp_path}/q.db"
    value = os.environ.get(SERVER_URL_VARS[BACKEND])
    if not value:
        pytest.fail(f"SQLQ_TEST_BACKEND={BACKEND} needs {SERVER_URL_VARS[BACKEND]}")
    return value


@pytest.fixture
def db(url):
    with sqlq.open(url) as handle:
        handle.init()
        yield handle


@pytest.fixture
def queue(db):
    name = f"py_{uuid.uuid4().hex[:12]}"
    yield name
    if not db.closed:
        db.purge(name)


def wait_for(condition, timeout=60.0, what="the condition"):
    """Poll condition() until it is true; fail after timeout seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.02)
