"""Persistence across a clean restart (SIGTERM, then start over the same
data directory): schema, every type, deletes, statics, counters.  A table
digest must be the same before and after each restart.
"""

import glob
import os
import random

import pytest
from cassandra import ReadFailure

import cassette_harness as H
from typedata import SCALAR_TYPES, VALUES, same

KS = "ks_restart"


def create_and_fill(s):
    s.execute("CREATE KEYSPACE %s WITH replication = "
              "{'class': 'SimpleStrategy', 'replication_factor': 1}" % KS)
    cols = ", ".join("c_%s %s" % (t, t) for t in SCALAR_TYPES)
    s.execute("CREATE TABLE %s.all_types (k int PRIMARY KEY, %s) WITH comment = 'kept'" % (KS, cols))
    s.execute("CREATE TABLE %s.ev (a text, b int, ts int, s text static, v blob, "
              "PRIMARY KEY ((a, b), ts)) WITH CLUSTERING ORDER BY (ts DESC)" % KS)
    s.execute("CREATE TABLE %s.cnt (k int PRIMARY KEY, c counter)" % KS)
    names = ["c_" + t for t in SCALAR_TYPES]
    ins = s.prepare("INSERT INTO %s.all_types (k, %s) VALUES (?, %s)"
                    % (KS, ", ".join(names), ", ".join("?" * len(names))))
    n = max(len(v) for v in VALUES.values())
    for i in range(n):
        s.execute(ins, [i] + [VALUES[t][i % len(VALUES[t])] for t in SCALAR_TYPES])
    s.execute("INSERT INTO %s.all_types (k) VALUES (1000)" % KS)            # all nulls
    ins = s.prepare("INSERT INTO %s.ev (a, b, ts, v) VALUES (?, ?, ?, ?)" % KS)
    futs = [s.execute_async(ins, ("t%d" % (i % 7), i % 3, i, bytes([i % 256]) * (i % 50)))
            for i in range(3000)]
    for f in futs:
        f.result()
    s.execute("UPDATE %s.ev SET s = 'static!' WHERE a = 't1' AND b = 1" % KS)
    s.execute("DELETE FROM %s.ev WHERE a = 't2' AND b = 2" % KS)
    s.execute("DELETE FROM %s.ev WHERE a = 't3' AND b = 0 AND ts > 100" % KS)
    s.execute("DELETE c_text FROM %s.all_types WHERE k = 1" % KS)
    for i in range(10):
        s.execute("UPDATE %s.cnt SET c = c + %d WHERE k = %d" % (KS, i, i % 3))


def digest(s):
    out = {}
    out["all_types"] = sorted((tuple(r) for r in s.execute("SELECT * FROM %s.all_types" % KS)),
                              key=lambda r: r[0])
    out["ev"] = [tuple(r) for r in s.execute("SELECT * FROM %s.ev" % KS)]
    out["cnt"] = sorted(tuple(r) for r in s.execute("SELECT * FROM %s.cnt" % KS))
    return out


def assert_same_digest(a, b):
    assert a.keys() == b.keys()
    for t in a:
        assert len(a[t]) == len(b[t]), t
        for ra, rb in zip(a[t], b[t]):
            assert len(ra) == len(rb)
            for x, y in zip(ra, rb):
                assert (x is None and y is None) or same(x, y), (t, ra, rb)


def check_schema(cluster):
    m = cluster.metadata.keyspaces[KS]
    t = m.tables["ev"]
    assert [c.name for c in t.partition_key] == ["a", "b"]
    assert [c.name for c in t.clustering_key] == ["ts"]
    assert t.clustering_key[0].is_reversed
    assert t.columns["s"].is_static
    assert m.tables["all_types"].options["comment"] == "kept"
    for ty in SCALAR_TYPES:
        assert m.tables["all_types"].columns["c_" + ty].cql_type == ty
    assert m.tables["cnt"].columns["c"].cql_type == "counter"


def test_restart_keeps_everything(fresh_server):
    if not H.is_cassette():
        pytest.skip("restarts the server")
    c, s = H.connect(fresh_server.host, fresh_server.port)
    try:
        create_and_fill(s)
        before = digest(s)
        assert len(before["all_types"]) == max(len(v) for v in VALUES.values()) + 1
        live = [i for i in range(3000) if not (i % 7 == 2 and i % 3 == 2)
                and not (i % 7 == 3 and i % 3 == 0 and i > 100)]
        assert len(before["ev"]) == len(live)
    finally:
        c.shutdown()

    fresh_server.restart()
    c, s = H.connect(fresh_server.host, fresh_server.port)
    try:
        check_schema(c)
        assert_same_digest(before, digest(s))
        # Write more after the restart, then restart again: old and new data.
        s.execute("INSERT INTO %s.ev (a, b, ts, v) VALUES ('new', 0, 1, 0x01)" % KS)
        s.execute("UPDATE %s.cnt SET c = c + 1000 WHERE k = 0" % KS)
        s.execute("CREATE TABLE %s.after (k int PRIMARY KEY)" % KS)
        s.execute("INSERT INTO %s.after (k) VALUES (42)" % KS)
        before2 = digest(s)
    finally:
        c.shutdown()

    fresh_server.restart()
    c, s = H.connect(fresh_server.host, fresh_server.port)
    try:
        check_schema(c)
        assert_same_digest(before2, digest(s))
        assert s.execute("SELECT k FROM %s.after" % KS).one().k == 42
    finally:
        c.shutdown()


def test_restart_after_drop(fresh_server):
    """Dropped tables and keyspaces stay dropped; a re-created table with
    the same name starts empty."""
    if not H.is_cassette():
        pytest.skip("restarts the server")
    c, s = H.connect(fresh_server.host, fresh_server.port)
    try:
        s.execute("CREATE KEYSPACE kd WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE KEYSPACE kgone WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE kd.t (k int PRIMARY KEY, v int)")
        s.execute("INSERT INTO kd.t (k, v) VALUES (1, 1)")
        s.execute("DROP TABLE kd.t")
        s.execute("CREATE TABLE kd.t (k int PRIMARY KEY, w text)")
        s.execute("INSERT INTO kd.t (k, w) VALUES (2, 'two')")
        s.execute("CREATE TABLE kd.trunc (k int PRIMARY KEY)")
        s.execute("INSERT INTO kd.trunc (k) VALUES (1)")
        s.execute("TRUNCATE kd.trunc")
        s.execute("DROP KEYSPACE kgone")
    finally:
        c.shutdown()
    fresh_server.restart()
    c, s = H.connect(fresh_server.host, fresh_server.port)
    try:
        assert "kgone" not in c.metadata.keyspaces
        assert set(c.metadata.keyspaces["kd"].tables["t"].columns) == {"k", "w"}
        assert [tuple(r) for r in s.execute("SELECT k, w FROM kd.t")] == [(2, "two")]
        assert list(s.execute("SELECT * FROM kd.trunc")) == []
    finally:
        c.shutdown()


def test_digest_stable_across_flush_compact_restart(fresh_server):
    """Writes, overwrites and deletes spread over several flushed sstables:
    the table reads the same after each flush, after a major compaction and
    after a restart, and matches a model kept in Python."""
    if not H.is_cassette():
        pytest.skip("uses cassette's admin endpoint")
    srv = fresh_server
    c, s = H.connect(srv.host, srv.port)
    model = {}
    try:
        s.execute("CREATE KEYSPACE kf WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE kf.t (p int, c int, v text, s int static, PRIMARY KEY (p, c)) "
                  "WITH CLUSTERING ORDER BY (c DESC)")
        ins = s.prepare("INSERT INTO kf.t (p, c, v) VALUES (?, ?, ?)")
        dele = s.prepare("DELETE FROM kf.t WHERE p = ? AND c = ?")

        def read():
            return sorted((r.p, r.c, r.v) for r in s.execute("SELECT p, c, v FROM kf.t") if r.c is not None)

        def expect():
            return sorted((p, c, v) for (p, c), v in model.items())

        for rnd in range(4):
            for i in range(400):
                p, cc = i % 13, (i * 7 + rnd) % 97
                if (i + rnd) % 5 == 0 and (p, cc) in model:
                    s.execute(dele, (p, cc))
                    del model[(p, cc)]
                else:
                    v = "r%d-%d" % (rnd, i)
                    s.execute(ins, (p, cc, v))
                    model[(p, cc)] = v
            if rnd == 2:
                s.execute("DELETE FROM kf.t WHERE p = 5")
                model = {k: v for k, v in model.items() if k[0] != 5}
                s.execute("DELETE FROM kf.t WHERE p = 6 AND c > 50")
                model = {k: v for k, v in model.items() if not (k[0] == 6 and k[1] > 50)}
            st, body = srv.admin("POST", "/flush?ks=kf&table=t")
            assert st == 200, (st, body)
            assert read() == expect(), "after flush %d" % rnd
        st, body = srv.admin("POST", "/compact?ks=kf&table=t")
        assert st == 200, (st, body)
        assert read() == expect(), "after compaction"
    finally:
        c.shutdown()
    srv.restart()
    c, s = H.connect(srv.host, srv.port)
    try:
        got = sorted((r.p, r.c, r.v) for r in s.execute("SELECT p, c, v FROM kf.t") if r.c is not None)
        assert got == sorted((p, cc, v) for (p, cc), v in model.items()), "after restart"
    finally:
        c.shutdown()


def test_prepared_statements_across_restart(fresh_server):
    """A driver keeps its prepared statements across a server restart on the
    same port: EXECUTE of an id the server no longer knows gets UNPREPARED
    (0x2500), the driver prepares again and retries, transparently."""
    if not H.is_cassette():
        pytest.skip("restarts the server")
    srv = fresh_server
    c, s = H.connect(srv.host, srv.port)
    try:
        s.execute("CREATE KEYSPACE kp WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE kp.t (k int PRIMARY KEY, v text)")
        ins = s.prepare("INSERT INTO kp.t (k, v) VALUES (?, ?)")
        sel = s.prepare("SELECT v FROM kp.t WHERE k = ?")
        s.execute(ins, (1, "before"))
        srv.restart()
        H.wait_for(lambda: s.execute("SELECT key FROM system.local").one(), timeout=60, interval=0.5,
                   what="the driver to reconnect")
        s.execute(ins, (2, "after"))
        assert s.execute(sel, (1,)).one().v == "before"
        assert s.execute(sel, (2,)).one().v == "after"
    finally:
        c.shutdown()


def test_point_reads_newest_first_across_sstables(fresh_server):
    """Point reads of a table without clustering read the sstables newest
    first and may stop early (storage st_read_spec.cover_cols): with
    client timestamps out of write order, UPDATEs without a row marker, an
    older DELETE and a partition deletion spread over the memtable and
    several sstables, every read returns what the full merge returns, after
    each flush, after a major compaction and after a restart."""
    if not H.is_cassette():
        pytest.skip("uses cassette's admin endpoint")
    srv = fresh_server
    c, s = H.connect(srv.host, srv.port)
    steps = [
        # (statement, flush after)
        ("INSERT INTO kn.t (k, a, b, n) VALUES (1, 'a10', 'b10', 10) USING TIMESTAMP 10", True),
        ("INSERT INTO kn.t (k, a, b, n) VALUES (1, 'a20', 'b20', 20) USING TIMESTAMP 20", True),
        ("INSERT INTO kn.t (k, a) VALUES (1, 'a15') USING TIMESTAMP 15", False),
        ("INSERT INTO kn.t (k, a, b, n) VALUES (2, 'a10', 'b10', 10) USING TIMESTAMP 10", True),
        ("UPDATE kn.t USING TIMESTAMP 30 SET b = 'u30' WHERE k = 2", False),
        ("INSERT INTO kn.t (k, a, b, n) VALUES (3, 'a50', 'b50', 50) USING TIMESTAMP 50", True),
        ("DELETE b FROM kn.t USING TIMESTAMP 40 WHERE k = 3", False),
        ("INSERT INTO kn.t (k, a, b, n) VALUES (4, 'a10', 'b10', 10) USING TIMESTAMP 10", True),
        ("DELETE FROM kn.t USING TIMESTAMP 15 WHERE k = 4", True),
        ("INSERT INTO kn.t (k, a) VALUES (4, 'a20') USING TIMESTAMP 20", False),
        ("INSERT INTO kn.t (k, a, b, n) VALUES (5, 'a30', 'b30', 30) USING TIMESTAMP 30", True),
        ("INSERT INTO kn.t (k, a, b, n) VALUES (5, 'a20', 'b20', 20) USING TIMESTAMP 20", True),
        ("INSERT INTO kn.t (k, a, b, n) VALUES (5, 'a10', 'b10', 10) USING TIMESTAMP 10", False),
        ("INSERT INTO kn.t (k, a, b, n) VALUES (6, 'a10', 'b10', 10) USING TIMESTAMP 10", True),
        ("INSERT INTO kn.t (k, a, b, n) VALUES (6, 'a60', 'b60', 60) USING TIMESTAMP 60", False),
        ("DELETE n FROM kn.t USING TIMESTAMP 70 WHERE k = 6", False),
    ]
    want = {
        1: ("a20", "b20", 20, 20),
        2: ("a10", "u30", 10, 10),
        3: ("a50", "b50", 50, 50),
        4: ("a20", None, None, 20),
        5: ("a30", "b30", 30, 30),
        6: ("a60", "b60", None, 60),
    }

    def read_all(sess):
        sel = sess.prepare("SELECT a, b, n, writetime(a) FROM kn.t WHERE k = ?")
        return {k: tuple(sess.execute(sel, (k,)).one()) for k in want}

    try:
        s.execute("CREATE KEYSPACE kn WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE kn.t (k int PRIMARY KEY, a text, b text, n int)")
        for stmt, flush in steps:
            s.execute(stmt)
            if flush:
                st, body = srv.admin("POST", "/flush?ks=kn&table=t")
                assert st == 200, (st, body)
        assert read_all(s) == want
        st, body = srv.admin("POST", "/flush?ks=kn&table=t")
        assert st == 200, (st, body)
        assert read_all(s) == want, "after the last flush"
        st, body = srv.admin("POST", "/compact?ks=kn&table=t")
        assert st == 200, (st, body)
        assert read_all(s) == want, "after compaction"
    finally:
        c.shutdown()
    srv.restart()
    c, s = H.connect(srv.host, srv.port)
    try:
        assert read_all(s) == want, "after restart"
    finally:
        c.shutdown()


def test_data_file_truncated_under_running_server(fresh_server):
    """A Data.db shortened while the server has it open (mapped): reads of
    blocks past the new end fail as Cassandra fails a local read that
    throws (ReadFailure, 1 failure, reason UNKNOWN) with a log line naming
    the file, reads of the blocks still there succeed, and the server stays
    up (the mapping's SIGBUS used to kill it)."""
    if not H.is_cassette():
        pytest.skip("truncates cassette's sstable files in place")
    def val(k, i):                    # incompressible: the file spans many blocks
        return random.Random(k * 1000 + i).randbytes(200)
    srv = fresh_server
    c, s = H.connect(srv.host, srv.port)
    try:
        s.execute("CREATE KEYSPACE kt WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE kt.t (k int, c int, v blob, PRIMARY KEY (k, c))")
        ins = s.prepare("INSERT INTO kt.t (k, c, v) VALUES (?, ?, ?)")
        futs = [s.execute_async(ins, (k, i, val(k, i))) for k in range(40) for i in range(100)]
        for f in futs:
            f.result()
        st, body = srv.admin("POST", "/flush?ks=kt&table=t")
        assert st == 200, (st, body)
    finally:
        c.shutdown()
    srv.restart()                     # readers opened afresh, nothing cached
    files = glob.glob(os.path.join(srv.data_dir, "data", "kt", "t-*", "cs-*-Data.db"))
    assert len(files) == 1, files
    size = os.path.getsize(files[0])
    assert size > 3 * 65536, size
    os.truncate(files[0], size // 3 // 4096 * 4096)
    c, s = H.connect(srv.host, srv.port)
    try:
        sel = s.prepare("SELECT c, v FROM kt.t WHERE k = ?")
        ok, failed = 0, []
        for k in range(40):
            try:
                rows = list(s.execute(sel, (k,)))
                assert [r.c for r in rows] == list(range(100)), k
                assert all(r.v == val(k, r.c) for r in rows), k
                ok += 1
            except ReadFailure as e:
                assert e.failures == 1 and e.received_responses == 0, e
                assert "received 0 responses and 1 failures: UNKNOWN from localhost/127.0.0.1:7000" in str(e), e
                failed.append((k, str(e)))
        assert ok > 0 and failed, (ok, failed)
        assert srv.alive()
        assert s.execute("SELECT release_version FROM system.local").one()[0]
    finally:
        c.shutdown()
    log = srv.run_log().decode(errors="replace")
    assert "corruption: block past the end of the file (truncated while open)" in log, srv.log_tail()
    assert os.path.basename(files[0]) in log
    print("reads: %d ok, %d failed, first %r" % (ok, len(failed), failed[0]))
