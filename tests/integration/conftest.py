"""pytest fixtures for the integration tests (owner: infra).

    server      the session's Server (cassette_harness.Server), started once
    contact     its (host, port)
    cluster     a Python-driver Cluster connected with default settings
    session     that cluster's Session
    ks          a fresh keyspace per test module (SimpleStrategy, RF 1)
    fresh_server  a private server per test (restart/kill tests)

Every test runs under a time limit (CASSETTE_TEST_TIMEOUT, default 120 s),
and after every test the shared server must still be alive: if it died the
test fails with the server log, and the server is restarted on the same port
for the tests after it.

Tests are written to pass on Apache Cassandra 4.1 too (CASSETTE_CONTACT=
host:port); known differences are guarded by is_cassette().
"""

import logging
import os
import re
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cassette_harness as H  # noqa: E402

# Per-test time limit (CASSETTE_TEST_TIMEOUT, default 120 s).
from conftest_common import pytest_runtest_call  # noqa: E402,F401


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    s = H.new_server(tmp_path_factory.mktemp("cassette"))
    yield s
    s.stop()


@pytest.fixture(scope="session")
def contact(server):
    return (server.host, server.port)


@pytest.fixture(autouse=True)
def _server_survives(request):
    """Fail a test during which the shared server died; restart it."""
    yield
    if "server" not in request.fixturenames:
        return
    s = request.getfixturevalue("server")
    if s.proc is not None and not s.alive():
        rc = s.proc.returncode
        tail = s.log_tail()
        s.proc = None
        s.start()   # same port: the shared cluster reconnects
        if "_driver" in request.fixturenames:
            sess = request.getfixturevalue("_driver")[1]
            try:
                H.wait_for(lambda: sess.execute("SELECT key FROM system.local").one(),
                           timeout=60, interval=0.5, what="the shared driver to reconnect")
            except AssertionError:
                pass
        pytest.fail("server died during this test (exit %s)\n%s" % (rc, tail))


@pytest.fixture(scope="session")
def _driver(server, contact):
    try:
        c, sess = H.connect(*contact)
    except Exception as e:
        raise H.ServerError("driver could not connect: %r\n%s" % (e, server.log_tail())) from None
    yield c, sess
    c.shutdown()


@pytest.fixture(scope="session")
def cluster(_driver):
    return _driver[0]


@pytest.fixture(scope="session")
def session(_driver):
    return _driver[1]


def _ks_name(nodeid):
    base = re.sub(r"[^a-z0-9_]", "_", os.path.basename(nodeid).split(".py")[0].lower())
    return ("ks_" + base)[:40]


@pytest.fixture(scope="module")
def ks(request, session):
    """A fresh keyspace named after the test module; dropped afterwards."""
    name = _ks_name(request.module.__name__)
    session.execute("DROP KEYSPACE IF EXISTS %s" % name)
    session.execute("CREATE KEYSPACE %s WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}" % name)
    yield name
    try:
        session.execute("DROP KEYSPACE IF EXISTS %s" % name)
    except Exception:  # noqa: BLE001 - the server may be the thing under test
        pass


@pytest.fixture
def fresh_server(tmp_path):
    """A private server for one test (restart, kill -9); stopped afterwards."""
    s = H.new_server(tmp_path)
    yield s
    if s.proc is not None:
        s.stop()


def cassette_only(reason):
    """Mark a check that differs on Apache Cassandra 4.1."""
    return pytest.mark.skipif(not H.is_cassette(), reason="cassette-specific: " + reason)
