"""Crash-test fixtures (owner: infra): each test gets its own server over a
private data directory and may kill -9 and restart it at will."""

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import cassette_harness as H  # noqa: E402

# Same per-test time limit as the integration tests.
from conftest_common import pytest_runtest_call  # noqa: E402,F401


@pytest.fixture
def make_server(tmp_path):
    """make_server(config_text=None) -> started Server; all stopped at the end."""
    if not H.is_cassette():
        pytest.skip("crash tests need to kill the server")
    servers = []

    def make(config_text=None):
        args = []
        if config_text:
            p = tmp_path / ("cassette-%d.yaml" % len(servers))
            p.write_text(config_text)
            args = ["--config", str(p)]
        s = H.Server(tmp_path / ("srv%d" % len(servers)), extra_args=args)
        s.start()
        servers.append(s)
        return s

    yield make
    for s in servers:
        if s.proc is not None:
            s.stop()
