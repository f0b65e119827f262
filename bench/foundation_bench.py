#!/usr/bin/env python3
"""Foundation benchmarks over a raw-socket CQL v4 client (no driver), so the
figures measure the server, not a driver's startup or scheduling.

    foundation_bench.py startup BIN [--runs N]   exec -> first answered query,
                                                 empty data dir; idle RSS
    foundation_bench.py ddl HOST PORT [--runs N] CREATE TABLE / TRUNCATE /
                                                 DROP TABLE round trips
    foundation_bench.py insert HOST PORT [--n N] serial prepared INSERT on one
                                                 connection: p50/p99 latency
    foundation_bench.py all BIN                  all of the above against a
                                                 fresh server

Each run prints one line per figure, "name: value unit (details)".  The
bench/*.sh scripts wrap these; docs/performance.md records the results.
Works against any CQL server (Apache Cassandra included) for ddl/insert.
Owner: infra.
"""

import argparse
import os
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
import rawcql  # noqa: E402


def pct(samples, p):
    s = sorted(samples)
    if not s:
        return float("nan")
    k = min(len(s) - 1, max(0, int(round(p / 100.0 * (len(s) - 1)))))
    return s[k]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return None


def first_query(host, port, deadline):
    """Connect as soon as the port accepts, then OPTIONS, STARTUP and a
    QUERY; return when the RESULT arrives."""
    while True:
        try:
            c = rawcql.Conn(host, port, timeout=10)
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.0005)
    try:
        f = c.request(rawcql.OP_OPTIONS)
        assert f.opcode == rawcql.OP_SUPPORTED, f
        c.startup()
        f = c.query("SELECT release_version FROM system.local WHERE key='local'")
        assert f.opcode == rawcql.OP_RESULT, f
    finally:
        c.close()


class Proc:
    """A server process over a fresh, empty data directory."""

    def __init__(self, binary):
        self.dir = tempfile.mkdtemp(prefix="cassette-bench-")
        self.port = free_port()
        self.t0 = time.monotonic()
        self.p = subprocess.Popen([binary, "--listen", "127.0.0.1", "--port", str(self.port),
                                   "--data-dir", os.path.join(self.dir, "data")],
                                  stdout=subprocess.DEVNULL, stderr=open(os.path.join(self.dir, "log"), "w"))

    def stop(self):
        self.p.send_signal(signal.SIGTERM)
        try:
            self.p.wait(30)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def bench_startup(binary, runs):
    times, rss = [], []
    for _ in range(runs):
        pr = Proc(binary)
        try:
            first_query("127.0.0.1", pr.port, pr.t0 + 60)
            times.append((time.monotonic() - pr.t0) * 1000.0)
            time.sleep(2.0)            # idle: background threads settle
            rss.append(rss_kb(pr.p.pid))
        finally:
            pr.stop()
    print("startup_to_first_query: %.1f ms median (min %.1f, max %.1f, %d runs, empty data dir)"
          % (statistics.median(times), min(times), max(times), runs))
    print("idle_rss: %.1f MiB median (min %.1f, max %.1f; VmRSS 2 s after the first query)"
          % (statistics.median(rss) / 1024.0, min(rss) / 1024.0, max(rss) / 1024.0))
    return times, rss


def timed(c, cql):
    t = time.perf_counter_ns()
    f = c.query(cql)
    dt = (time.perf_counter_ns() - t) / 1e6
    if f.opcode != rawcql.OP_RESULT:
        raise RuntimeError("%s -> %r" % (cql, f))
    return dt


def bench_ddl(host, port, runs):
    c = rawcql.connect(host, port)
    ks = "bench_ddl"
    c.query("DROP KEYSPACE IF EXISTS %s" % ks)
    f = c.query("CREATE KEYSPACE %s WITH replication = {'class': 'SimpleStrategy', "
                "'replication_factor': 1}" % ks)
    assert f.opcode == rawcql.OP_RESULT, f
    create, trunc_empty, trunc, drop = [], [], [], []
    for i in range(runs):
        create.append(timed(c, "CREATE TABLE %s.t%d (k int, c int, v text, s int static, "
                               "PRIMARY KEY (k, c)) WITH CLUSTERING ORDER BY (c DESC)" % (ks, i)))
        trunc_empty.append(timed(c, "TRUNCATE %s.t%d" % (ks, i)))   # test suites truncate empty tables
        c.query("INSERT INTO %s.t%d (k, c, v) VALUES (1, 1, 'x')" % (ks, i))
        trunc.append(timed(c, "TRUNCATE %s.t%d" % (ks, i)))
        drop.append(timed(c, "DROP TABLE %s.t%d" % (ks, i)))
    c.query("DROP KEYSPACE %s" % ks)
    c.close()
    for name, s in (("create_table", create), ("truncate_empty", trunc_empty), ("truncate", trunc),
                    ("drop_table", drop)):
        print("%s: %.2f ms p50 (p90 %.2f, max %.2f, %d runs)"
              % (name, pct(s, 50), pct(s, 90), max(s), len(s)))
    return create, trunc_empty, trunc, drop


def bench_insert(host, port, n):
    c = rawcql.connect(host, port)
    ks = "bench_ins"
    c.query("DROP KEYSPACE IF EXISTS %s" % ks)
    c.query("CREATE KEYSPACE %s WITH replication = {'class': 'SimpleStrategy', "
            "'replication_factor': 1}" % ks)
    f = c.query("CREATE TABLE %s.kv (k int PRIMARY KEY, v blob)" % ks)
    assert f.opcode == rawcql.OP_RESULT, f
    pid = c.prepare("INSERT INTO %s.kv (k, v) VALUES (?, ?)" % ks)
    val = os.urandom(100)
    warm = min(1000, n // 5)
    for i in range(warm):
        c.execute(pid, [struct.pack(">i", -1 - i), val])
    lat = []
    send, recv = c.send, c.recv
    t_all = time.perf_counter()
    for i in range(n):
        req = rawcql.frame(rawcql.OP_EXECUTE, rawcql.execute_body(pid, [struct.pack(">i", i), val]),
                           stream=1)
        t = time.perf_counter_ns()
        send(req)
        f = recv()
        lat.append((time.perf_counter_ns() - t) / 1000.0)
        if f.opcode != rawcql.OP_RESULT:
            raise RuntimeError("insert %d -> %r" % (i, f))
    total = time.perf_counter() - t_all
    # Client overhead floor: an OPTIONS round trip does no CQL work.
    floor = []
    for _ in range(min(2000, n)):
        t = time.perf_counter_ns()
        c.request(rawcql.OP_OPTIONS)
        floor.append((time.perf_counter_ns() - t) / 1000.0)
    c.query("DROP KEYSPACE %s" % ks)
    c.close()
    print("prepared_insert_serial: p50 %.0f us, p99 %.0f us, p99.9 %.0f us, mean %.0f us "
          "(%d inserts, one connection, 100-byte blob, %.0f ops/s)"
          % (pct(lat, 50), pct(lat, 99), pct(lat, 99.9), statistics.mean(lat), n, n / total))
    print("options_round_trip: p50 %.0f us, p99 %.0f us (client + loopback floor)"
          % (pct(floor, 50), pct(floor, 99)))
    return lat


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("startup")
    p.add_argument("binary")
    p.add_argument("--runs", type=int, default=5)
    for name in ("ddl", "insert"):
        p = sub.add_parser(name)
        p.add_argument("host")
        p.add_argument("port", type=int)
        p.add_argument("--runs", type=int, default=20)
        p.add_argument("--n", type=int, default=10000)
    p = sub.add_parser("all")
    p.add_argument("binary")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--n", type=int, default=10000)
    a = ap.parse_args()
    if a.cmd == "startup":
        bench_startup(a.binary, a.runs)
    elif a.cmd == "ddl":
        bench_ddl(a.host, a.port, a.runs)
    elif a.cmd == "insert":
        bench_insert(a.host, a.port, a.n)
    else:
        bench_startup(a.binary, a.runs)
        pr = Proc(a.binary)
        try:
            first_query("127.0.0.1", pr.port, pr.t0 + 60)
            bench_ddl("127.0.0.1", pr.port, 20)
            bench_insert("127.0.0.1", pr.port, a.n)
        finally:
            pr.stop()


if __name__ == "__main__":
    main()
