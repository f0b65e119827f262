"""Polling while replies wait for a commit log sync
(commitlog_sync_wait_poll_us, server/conn.h srv_loop_run): a request loop
with durable replies pending polls instead of sleeping, for at most that
long after its last activity; with nothing pending, or in periodic mode, it
sleeps as before.

cassette-only.  CPU time is read from /proc/PID/stat (utime + stime); the
bounds are wide (a polling loop takes most of a CPU, a sleeping one almost
none), so a busy machine does not decide the result.  Group mode with a
long window makes a write wait for most of a second, which is what the
polling is observed over.
"""

import contextlib
import os
import subprocess
import time

import pytest

import cassette_harness as H
import rawcql as R
from test_request_loops import rows

pytestmark = pytest.mark.skipif(not H.is_cassette(), reason="cassette setting")

TICK = os.sysconf("SC_CLK_TCK")
WINDOW_MS = 800


def cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK   # utime, stime


def setting(conn, name):
    return rows(conn.query("SELECT value FROM system_views.settings WHERE name = '%s'" % name))


@contextlib.contextmanager
def running(tmp_path, yaml):
    """A private server with `yaml` as its configuration and table k.t,
    and a raw connection to it."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml)
    s = H.Server(tmp_path)
    s.start(extra_args=["--config", str(cfg)])
    c = R.connect(s.host, s.port)
    try:
        for q in ("CREATE KEYSPACE k WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
                  "CREATE TABLE k.t (id int PRIMARY KEY, v text)"):
            f = c.query(q)
            assert f.opcode == R.OP_RESULT, f
        yield s, c
    finally:
        c.close()
        s.stop()


def group_mode(poll_us):
    return ("commitlog_sync: group\ncommitlog_sync_group_window: %dms\n"
            "commitlog_sync_wait_poll_us: %d\n" % (WINDOW_MS, poll_us))


def write(c, i):
    f = c.query("INSERT INTO k.t (id, v) VALUES (%d, 'x')" % i)
    assert f.result_kind() == 1, f


def slow_write_cpu(s, c):
    """CPU the server spends while a group-mode write waits for its sync:
    the first write syncs at once, the second waits for the window."""
    write(c, 1)
    before, t0 = cpu_s(s.proc.pid), time.monotonic()
    write(c, 2)
    waited = time.monotonic() - t0
    assert waited > 0.3, "the write did not wait for the group window (%.3f s)" % waited
    return cpu_s(s.proc.pid) - before, waited


def idle_cpu(s, seconds=1.0):
    before = cpu_s(s.proc.pid)
    time.sleep(seconds)
    return cpu_s(s.proc.pid) - before


def test_default_shown_in_settings(tmp_path):
    with running(tmp_path, "") as (s, c):
        assert setting(c, "commitlog_sync_wait_poll_us") == [(b"200",)]


def test_polls_while_a_sync_is_pending(tmp_path):
    with running(tmp_path, group_mode(1000000)) as (s, c):
        assert setting(c, "commitlog_sync_wait_poll_us") == [(b"1000000",)]
        used, waited = slow_write_cpu(s, c)
        assert used > 0.3 * waited, "no polling: %.2f s of CPU while a write waited %.2f s" % (used, waited)
        time.sleep(0.2)
        used = idle_cpu(s)
        assert used < 0.15, "polling with nothing pending: %.2f s of CPU in 1 s" % used


def test_zero_never_polls(tmp_path):
    with running(tmp_path, group_mode(0)) as (s, c):
        assert setting(c, "commitlog_sync_wait_poll_us") == [(b"0",)]
        used, waited = slow_write_cpu(s, c)
        assert used < 0.15, "polling turned off, yet %.2f s of CPU while a write waited %.2f s" % (used, waited)


def test_periodic_mode_does_not_poll(tmp_path):
    """Periodic mode acknowledges before the sync: nothing is pending, so
    even a long poll window leaves the loop sleeping between requests."""
    with running(tmp_path, "commitlog_sync_wait_poll_us: 1000000\n") as (s, c):
        for i in range(50):
            write(c, i)
        used = idle_cpu(s)
        assert used < 0.15, "periodic mode polled: %.2f s of CPU in 1 s" % used


@pytest.mark.parametrize("value", ["-1", "1000001", "fast"])
def test_bad_value_refused(tmp_path, value):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("commitlog_sync_wait_poll_us: %s\n" % value)
    p = subprocess.run([H.binary_path(), "--config", str(cfg), "--port", "0", "--data-dir", str(tmp_path / "d")],
                       capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert p.returncode > 0, p
    assert "commitlog_sync_wait_poll_us" in p.stderr + p.stdout, p.stderr
