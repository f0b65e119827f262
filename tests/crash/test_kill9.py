"""Crash tests: acknowledged writes survive kill -9 (owner: infra).

Every write the server acknowledged before SIGKILL must be readable after a
restart, in each commitlog_sync mode.  A process kill (not a power cut)
loses nothing that was write()n to the commit log, which is what Cassandra
also guarantees in periodic mode, so all three modes are held to it.
"""

import glob
import os
import threading
import time

import pytest

import cassette_harness as H

KS = "crash"
SYNC_MODES = {
    "periodic": "commitlog_sync: periodic\ncommitlog_sync_period: 10000ms\n",
    "batch": "commitlog_sync: batch\n",
    "group": "commitlog_sync: group\ncommitlog_sync_group_window: 15ms\n",
}


def setup_schema(s):
    s.execute("CREATE KEYSPACE %s WITH replication = "
              "{'class': 'SimpleStrategy', 'replication_factor': 1}" % KS)
    s.execute("CREATE TABLE %s.kv (k int PRIMARY KEY, v text)" % KS)
    s.execute("CREATE TABLE %s.wide (p int, c int, v blob, PRIMARY KEY (p, c))" % KS)


def read_kv(s):
    return {r.k: r.v for r in s.execute("SELECT k, v FROM %s.kv" % KS)}


@pytest.mark.parametrize("mode", sorted(SYNC_MODES))
def test_acked_writes_survive_kill9(make_server, mode):
    srv = make_server(SYNC_MODES[mode])
    c, s = H.connect(srv.host, srv.port)
    try:
        setup_schema(s)
        ins = s.prepare("INSERT INTO %s.kv (k, v) VALUES (?, ?)" % KS)
        for k in range(500):
            s.execute(ins, (k, "v%d" % k))
        s.execute("DELETE FROM %s.kv WHERE k = 7" % KS)
        s.execute("UPDATE %s.kv SET v = 'updated' WHERE k = 8" % KS)
    finally:
        c.shutdown()
    srv.kill9()
    srv.start()
    c, s = H.connect(srv.host, srv.port)
    try:
        got = read_kv(s)
        want = {k: "v%d" % k for k in range(500) if k != 7}
        want[8] = "updated"
        missing = sorted(set(want) - set(got))
        assert not missing, "%s: %d acked writes lost, e.g. %s" % (mode, len(missing), missing[:10])
        assert got == want
    finally:
        c.shutdown()


def kill9_while_writing(srv, s, first, n, parts, size, pause, min_acked):
    """Write rows (c, p = c % parts) from c = first on, async, with `size`
    random bytes, pausing `pause` s every 200; once more than min_acked are
    acknowledged, kill -9 the server.  Returns the keys acknowledged before
    the kill."""
    ins = s.prepare("INSERT INTO %s.wide (p, c, v) VALUES (?, ?, ?)" % KS)
    acked = set()
    lock = threading.Lock()
    stop = threading.Event()

    def on_ok(_, key):
        with lock:
            acked.add(key)

    def writer():
        i = first
        while not stop.is_set() and i < first + n:
            key = (i % parts, i)
            f = s.execute_async(ins, (key[0], key[1], os.urandom(size)))
            f.add_callbacks(on_ok, lambda e: None, callback_args=(key,))
            i += 1
            if i % 200 == 0:
                time.sleep(pause)

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    H.wait_for(lambda: len(acked) > min_acked, timeout=60, what="%d acked writes" % min_acked)
    with lock:
        snapshot = set(acked)
    srv.kill9()
    stop.set()
    t.join(10)
    return snapshot


def restart_holding(srv, acked):
    """Start the killed server; every key in acked must be in wide.  Returns
    the keys there."""
    srv.start()
    c, s = H.connect(srv.host, srv.port)
    try:
        present = {(r.p, r.c) for r in s.execute("SELECT p, c FROM %s.wide" % KS)}
    finally:
        c.shutdown()
    lost = acked - present
    assert not lost, "%d of %d acked writes lost, e.g. %s" % (len(lost), len(acked), sorted(lost)[:5])
    return present


def test_kill9_with_writes_in_flight(make_server):
    """Kill while many async writes are outstanding: every write whose
    future succeeded before the kill is there afterwards."""
    srv = make_server(SYNC_MODES["group"])
    c, s = H.connect(srv.host, srv.port)
    try:
        setup_schema(s)
        snapshot = kill9_while_writing(srv, s, 0, 200000, 17, 64, 0.01, 2000)
    finally:
        c.shutdown()
    restart_holding(srv, snapshot)


def test_schema_survives_kill9(make_server):
    srv = make_server()
    c, s = H.connect(srv.host, srv.port)
    try:
        setup_schema(s)
        s.execute("ALTER TABLE %s.kv ADD extra int" % KS)
        s.execute("CREATE TABLE %s.dropped (k int PRIMARY KEY)" % KS)
        s.execute("DROP TABLE %s.dropped" % KS)
    finally:
        c.shutdown()
    srv.kill9()
    srv.start()
    c, s = H.connect(srv.host, srv.port)
    try:
        tables = c.metadata.keyspaces[KS].tables
        assert "kv" in tables and "wide" in tables and "dropped" not in tables
        assert "extra" in tables["kv"].columns
        s.execute("INSERT INTO %s.kv (k, v, extra) VALUES (1, 'a', 2)" % KS)
        assert s.execute("SELECT extra FROM %s.kv WHERE k = 1" % KS).one().extra == 2
    finally:
        c.shutdown()


def test_kill9_across_flushes(make_server):
    """Enough data to flush memtables (small memtable space) before the
    kill: the result mixes sstables and commit log replay."""
    srv = make_server("commitlog_sync: batch\nmemtable_heap_space: 2MiB\n")
    c, s = H.connect(srv.host, srv.port)
    try:
        setup_schema(s)
        ins = s.prepare("INSERT INTO %s.wide (p, c, v) VALUES (?, ?, ?)" % KS)
        blob = b"x" * 1000
        for start in range(0, 8000, 400):
            futs = [s.execute_async(ins, (i % 10, i, blob)) for i in range(start, start + 400)]
            for f in futs:
                f.result()
        s.execute("DELETE FROM %s.wide WHERE p = 3" % KS)
    finally:
        c.shutdown()
    srv.kill9()
    srv.start()
    c, s = H.connect(srv.host, srv.port)
    try:
        rows = {(r.p, r.c) for r in s.execute("SELECT p, c FROM %s.wide" % KS)}
        want = {(i % 10, i) for i in range(8000) if i % 10 != 3}
        assert rows == want, "lost %d, extra %d" % (len(want - rows), len(rows - want))
    finally:
        c.shutdown()


def test_repeated_kills(make_server):
    """Five kill -9 / restart cycles, writing between each."""
    srv = make_server(SYNC_MODES["batch"])
    want = {}
    for cycle in range(5):
        c, s = H.connect(srv.host, srv.port)
        try:
            if cycle == 0:
                setup_schema(s)
            ins = s.prepare("INSERT INTO %s.kv (k, v) VALUES (?, ?)" % KS)
            for k in range(cycle * 100, cycle * 100 + 100):
                s.execute(ins, (k, "c%d" % cycle))
                want[k] = "c%d" % cycle
            assert read_kv(s) == want
        finally:
            c.shutdown()
        srv.kill9()
        srv.start()
    c, s = H.connect(srv.host, srv.port)
    try:
        assert read_kv(s) == want
    finally:
        c.shutdown()


def test_garbage_after_commitlog_tail(make_server):
    """Junk after the last record of the last segment (a torn write) must not
    stop the server from starting; acknowledged data is all there."""
    srv = make_server(SYNC_MODES["batch"])
    c, s = H.connect(srv.host, srv.port)
    try:
        setup_schema(s)
        ins = s.prepare("INSERT INTO %s.kv (k, v) VALUES (?, ?)" % KS)
        for k in range(100):
            s.execute(ins, (k, "g"))
    finally:
        c.shutdown()
    srv.kill9()
    segs = sorted(glob.glob(os.path.join(srv.data_dir, "commitlog", "*")), key=os.path.getmtime)
    assert segs, "no commit log segment under %s/commitlog" % srv.data_dir
    with open(segs[-1], "ab") as f:
        f.write(os.urandom(3000))
    srv.start()
    c, s = H.connect(srv.host, srv.port)
    try:
        assert read_kv(s) == {k: "g" for k in range(100)}
        s.execute("INSERT INTO %s.kv (k, v) VALUES (1000, 'after')" % KS)
    finally:
        c.shutdown()
    srv.restart()
    c, s = H.connect(srv.host, srv.port)
    try:
        assert s.execute("SELECT v FROM %s.kv WHERE k = 1000" % KS).one().v == "after"
    finally:
        c.shutdown()


def reused_files(srv):
    """Spare segment files, and segments whose header says the file was reused
    (format: docs/format/commitlog.md)."""
    d = os.path.join(srv.data_dir, "commitlog")
    n = 0
    for name in os.listdir(d):
        if name.startswith("CommitLogSpare-"):
            n += 1
        elif name.startswith("CommitLog-2-"):
            with open(os.path.join(d, name), "rb") as f:
                h = f.read(24)
            n += len(h) == 24 and (h[19] & 1) == 1
    return n


@pytest.mark.parametrize("mode", ["periodic", "batch"])
def test_kill9_with_reused_segments(make_server, mode):
    """Small segments and memtables, so flushed segments become spares and
    new segments reuse them (their old records still in the file): after a
    TRUNCATE, new rows, then writes in flight during flushes and a kill -9,
    the restart holds every acknowledged new row and nothing written before
    the TRUNCATE, and replay warns about nothing."""
    srv = make_server(SYNC_MODES[mode] + "commitlog_segment_size: 1MiB\nmemtable_heap_space: 1MiB\n")
    c, s = H.connect(srv.host, srv.port)
    try:
        setup_schema(s)
        ins = s.prepare("INSERT INTO %s.wide (p, c, v) VALUES (?, ?, ?)" % KS)
        blob = b"o" * 1000
        for start in range(0, 4000, 400):   # ~4 MiB of log: flushes, spares
            for f in [s.execute_async(ins, (i % 10, i, blob)) for i in range(start, start + 400)]:
                f.result()
        assert reused_files(srv), "no segment file reused: %s" % os.listdir(os.path.join(srv.data_dir, "commitlog"))
        s.execute("TRUNCATE %s.wide" % KS)
        snapshot = kill9_while_writing(srv, s, 100000, 40000, 7, 300, 0.005, 6000)
    finally:
        c.shutdown()
    present = restart_holding(srv, snapshot)
    old = [k for k in present if k[1] < 100000]
    assert not old, "%d rows from before the TRUNCATE are back, e.g. %s" % (len(old), old[:5])
    log = srv.run_log().decode("utf-8", "replace")
    assert "WARN  commitlog" not in log, log
