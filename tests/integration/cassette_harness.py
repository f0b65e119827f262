"""cassette_harness: start, stop, restart and kill the real server binary.

Shared by tests/integration (conftest.py) and tests/crash (conftest.py).

The server is started as
    BINARY --listen 127.0.0.1 --port 0 --data-dir DIR
and prints "cassette listening on 127.0.0.1:PORT" on stdout once it accepts
connections.  Its stdout and stderr go to DIR/../server.log; after a stop the
log is scanned for sanitizer reports, so an ASan/UBSan build fails the test
that stopped it.

Environment:
    CASSETTE_BIN      the binary (default: <repo>/build/cassette)
    CASSETTE_CONTACT  host:port of an already running server (for instance
                      Apache Cassandra 4.1): no binary is started, and tests
                      that need restart/kill are skipped.
    CASSETTE_ARGS     extra server arguments (split on whitespace)

Owner: infra.
"""

import os
import re
import shlex
import signal
import socket
import subprocess
import threading
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
LISTEN_RE = re.compile(rb"cassette listening on ([0-9.]+|\[[0-9a-fA-F:]+\]):([0-9]+)")
ADMIN_RE = re.compile(rb"cassette admin on ([0-9.]+):([0-9]+)")
SANITIZER_RE = re.compile(rb"(ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:|"
                          rb"SUMMARY: UndefinedBehaviorSanitizer|AddressSanitizer:DEADLYSIGNAL)")
START_TIMEOUT_S = float(os.environ.get("CASSETTE_START_TIMEOUT", "60"))
STOP_TIMEOUT_S = float(os.environ.get("CASSETTE_STOP_TIMEOUT", "60"))


def binary_path():
    """The server binary the tests run (CASSETTE_BIN or build/cassette)."""
    return os.environ.get("CASSETTE_BIN") or os.path.join(REPO, "build", "cassette")


def external_contact():
    """(host, port) from CASSETTE_CONTACT, or None when tests start the binary."""
    c = os.environ.get("CASSETTE_CONTACT")
    if not c:
        return None
    host, _, port = c.rpartition(":")
    return (host or "127.0.0.1", int(port))


def is_cassette():
    """True when the tests run against cassette (not an external Cassandra)."""
    return external_contact() is None


def wait_for(pred, timeout=10.0, interval=0.05, what="condition"):
    """Poll pred() until it returns a true value; return it or raise."""
    deadline = time.monotonic() + timeout
    last_exc = None
    while time.monotonic() < deadline:
        try:
            v = pred()
            if v:
                return v
        except Exception as e:  # noqa: BLE001 - retried until the deadline
            last_exc = e
        time.sleep(interval)
    raise AssertionError("timed out after %.1fs waiting for %s (last error: %r)"
                         % (timeout, what, last_exc))


def port_open(host, port, timeout=0.5):
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


class ServerError(AssertionError):
    pass


class Server:
    """One server process over one data directory.

    start() may be called again after stop()/kill9() (same data directory):
    that is a restart.  By default a restart asks for the port the previous
    run had, so connected drivers find the node again; pass port=0 for any.
    """

    def __init__(self, workdir, binary=None, extra_args=None):
        self.workdir = str(workdir)
        self.data_dir = os.path.join(self.workdir, "data")
        self.log_path = os.path.join(self.workdir, "server.log")
        self.binary = binary or binary_path()
        env_args = shlex.split(os.environ.get("CASSETTE_ARGS", ""))
        self.extra_args = list(extra_args or []) + env_args
        self.host = "127.0.0.1"
        self.port = None
        self.admin_port = None
        self.proc = None
        self.starts = 0
        self._reader = None
        self._log_offset = 0
        os.makedirs(self.data_dir, exist_ok=True)

    # -- lifecycle ---------------------------------------------------------
    def start(self, port=None, extra_args=None):
        """Start the server; return (host, port) once it accepts connections."""
        if self.proc is not None and self.proc.poll() is None:
            raise ServerError("server already running")
        if not os.access(self.binary, os.X_OK):
            raise ServerError("server binary %s not found (build it first)" % self.binary)
        if port is None:
            port = self.port or 0
        args = [self.binary, "--listen", self.host, "--port", str(port),
                "--data-dir", self.data_dir] + self.extra_args + list(extra_args or [])
        # This run's "cassette admin on" line sets it: a restarted server
        # usually gets another admin port, and the old one must not be used.
        self.admin_port = None
        with open(self.log_path, "ab") as log:
            log.write(("\n==== start #%d: %s\n" % (self.starts + 1, " ".join(args))).encode())
            self._log_offset = log.tell()
        logf = open(self.log_path, "ab")
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=logf,
                                     stdin=subprocess.DEVNULL, cwd=self.workdir)
        logf.close()
        self.starts += 1
        found = threading.Event()
        result = {}

        def reader(proc=self.proc):
            # Copy stdout into the log; note the listening line.
            with open(self.log_path, "ab", buffering=0) as out:
                for line in iter(proc.stdout.readline, b""):
                    out.write(line)
                    a = ADMIN_RE.search(line)
                    if a:
                        self.admin_port = int(a.group(2))
                    m = LISTEN_RE.search(line)
                    if m and not found.is_set():
                        result["host"] = m.group(1).decode().strip("[]")
                        result["port"] = int(m.group(2))
                        found.set()
            found.set()

        self._reader = threading.Thread(target=reader, daemon=True)
        self._reader.start()
        if not found.wait(START_TIMEOUT_S) or "port" not in result:
            rc = self.proc.poll()
            if rc is None:
                self.proc.kill()
                self.proc.wait()
            raise ServerError("server did not print its listening line (exit %s)\n%s"
                              % (rc, self.log_tail()))
        self.port = result["port"]
        wait_for(lambda: port_open(self.host, self.port) or self._died(),
                 timeout=START_TIMEOUT_S, what="port %d to open" % self.port)
        if self.proc.poll() is not None:
            raise ServerError("server exited (%s) right after start\n%s"
                              % (self.proc.returncode, self.log_tail()))
        return (self.host, self.port)

    def _died(self):
        if self.proc.poll() is not None:
            raise ServerError("server exited with %s while starting\n%s"
                              % (self.proc.returncode, self.log_tail()))
        return False

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, check=True):
        """SIGTERM and wait.  With check, a non-zero exit or a sanitizer
        report in this run's log raises ServerError.  Returns the exit code."""
        if self.proc is None:
            return None
        rc = self.proc.poll()
        timed_out = False
        if rc is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                rc = self.proc.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                timed_out = True
                self.proc.kill()
                rc = self.proc.wait()
        self._join_reader()
        self.proc = None
        if check:
            problems = []
            if timed_out:
                problems.append("did not exit within %.0fs of SIGTERM" % STOP_TIMEOUT_S)
            elif rc != 0:
                problems.append("exit status %s after SIGTERM" % rc)
            if self.sanitizer_report():
                problems.append("sanitizer report in server log")
            if problems:
                raise ServerError("server: %s\n%s" % ("; ".join(problems), self.log_tail()))
        return rc

    def kill9(self):
        """SIGKILL (a crash: nothing flushed, no clean shutdown)."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        rc = self.proc.wait()
        self._join_reader()
        self.proc = None
        return rc

    def restart(self, kill=False, port=None):
        """Stop (SIGTERM, or SIGKILL with kill=True) and start again over the
        same data directory.  Returns the new (host, port)."""
        if kill:
            self.kill9()
        else:
            self.stop()
        return self.start(port=port)

    def _join_reader(self):
        if self._reader is not None:
            self._reader.join(5)
            self._reader = None

    # -- logs --------------------------------------------------------------
    def run_log(self):
        """This run's part of the log (bytes)."""
        try:
            with open(self.log_path, "rb") as f:
                f.seek(self._log_offset)
                return f.read()
        except OSError:
            return b""

    def sanitizer_report(self):
        return SANITIZER_RE.search(self.run_log()) is not None

    def log_tail(self, n=60):
        """The end of this run's log; with a sanitizer report, the report's
        first lines (where the faulting access is) instead."""
        text = self.run_log()
        m = SANITIZER_RE.search(text)
        lines = text.decode("utf-8", "replace").splitlines()
        if m:
            start = text[:m.start()].count(b"\n")
            return "---- server log (%s), sanitizer report from line %d ----\n%s" % (
                self.log_path, start + 1, "\n".join(lines[max(0, start - 2):start + n]))
        return "---- server log (%s), last %d lines ----\n%s" % (
            self.log_path, min(n, len(lines)), "\n".join(lines[-n:]))

    def admin(self, method, path, timeout=120):
        """One request to the admin endpoint (server/admin.h), e.g.
        admin("POST", "/flush?ks=k&table=t"); returns (status, body)."""
        import http.client
        deadline = time.monotonic() + 10
        while not self.admin_port and time.monotonic() < deadline:
            time.sleep(0.05)     # the line follows the listening line
        if not self.admin_port:
            raise ServerError("no 'cassette admin on' line in the server output")
        c = http.client.HTTPConnection(self.host, self.admin_port, timeout=timeout)
        try:
            c.request(method, path)
            r = c.getresponse()
            return r.status, r.read().decode("utf-8", "replace")
        finally:
            c.close()

    def rss_kb(self):
        """Resident set size (VmRSS) in KiB, from /proc."""
        with open("/proc/%d/status" % self.proc.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return None


class ExternalServer:
    """Stands in for Server when CASSETTE_CONTACT names a running node."""

    def __init__(self, contact):
        self.host, self.port = contact
        self.proc = None

    def start(self, port=None, extra_args=None):
        return (self.host, self.port)

    def alive(self):
        return True

    def stop(self, check=True):
        return 0

    def sanitizer_report(self):
        return False

    def log_tail(self, n=60):
        return "(external server: no log)"

    def kill9(self):
        import pytest
        pytest.skip("needs to kill the server: not possible with CASSETTE_CONTACT")

    def restart(self, kill=False, port=None):
        import pytest
        pytest.skip("needs to restart the server: not possible with CASSETTE_CONTACT")


def new_server(workdir, extra_args=None):
    """A started Server (or the external one); caller stops it."""
    c = external_contact()
    if c:
        return ExternalServer(c)
    s = Server(workdir, extra_args=extra_args)
    s.start()
    return s


def connect(host, port, **kw):
    """A Python-driver Cluster and Session with default settings (no
    protocol_version: negotiation is part of what is tested)."""
    from cassandra.cluster import Cluster
    kw.setdefault("connect_timeout", 10)
    cluster = Cluster([host], port=port, **kw)
    session = cluster.connect()
    session.default_timeout = 30
    return cluster, session
