"""Hooks shared by tests/integration and tests/crash (owner: infra)."""

import os
import signal

import pytest

TEST_TIMEOUT_S = int(os.environ.get("CASSETTE_TEST_TIMEOUT", "120"))


class TestTimeout(Exception):
    pass


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    """Fail a test that runs longer than CASSETTE_TEST_TIMEOUT seconds."""
    def on_alarm(signum, frame):
        raise TestTimeout("test exceeded %d s" % TEST_TIMEOUT_S)
    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(TEST_TIMEOUT_S)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
