"""Secondary indexes through the Python driver (issue 5; owner: index).

Written to pass on Apache Cassandra 4.1; cassette-only checks (flush
through the admin endpoint, restart of a private server) are guarded.
"""

import re
import urllib.request

import pytest
from cassandra import InvalidRequest
from cassandra.query import SimpleStatement

import cassette_harness as H
from conftest import cassette_only


def admin_port(server):
    """The admin port of the server's current run (printed just after the
    listening line, so it may take a moment to reach the log)."""
    import time
    deadline = time.time() + 10
    while True:
        with open(server.log_path, "rb") as f:
            m = re.findall(rb"cassette admin on 127\.0\.0\.1:(\d+)", f.read())
        if len(m) >= getattr(server, "starts", 1) or time.time() > deadline:
            break
        time.sleep(0.05)
    assert m, "server did not print its admin port"
    return int(m[-1])


def flush(server, ks, table=None):
    """nodetool flush through the admin endpoint (cassette only)."""
    if not H.is_cassette():
        return
    url = "http://127.0.0.1:%d/flush?ks=%s" % (admin_port(server), ks)
    if table:
        url += "&table=" + table
    urllib.request.urlopen(urllib.request.Request(url, data=b"", method="POST"), timeout=30).read()


def rows(session, q, *args):
    return sorted(tuple(r) for r in session.execute(q, args or None))


@pytest.fixture
def t(session, ks, request):
    name = re.sub(r"[^a-z0-9_]", "_", request.node.name.lower())[:40]
    session.execute("DROP TABLE IF EXISTS %s.%s" % (ks, name))
    session.execute("CREATE TABLE %s.%s (k int, c int, v int, s int static, t text, "
                    "l list<int>, st set<text>, m map<text,int>, f frozen<list<int>>, "
                    "PRIMARY KEY (k, c))" % (ks, name))
    return "%s.%s" % (ks, name)


def test_create_default_name_and_schema_rows(session, ks, t):
    session.execute("CREATE INDEX ON %s (v)" % t)
    tbl = t.split(".")[1]
    r = session.execute("SELECT index_name, kind, options FROM system_schema.indexes "
                        "WHERE keyspace_name = %s AND table_name = %s", (ks, tbl)).one()
    assert r.index_name == tbl + "_v_idx"
    assert r.kind == "COMPOSITES"
    assert r.options == {"target": "v"}
    session.execute("CREATE INDEX IF NOT EXISTS %s_v_idx ON %s (v)" % (tbl, t))
    with pytest.raises(InvalidRequest, match="already exists"):
        session.execute("CREATE INDEX %s_v_idx ON %s (v)" % (tbl, t))
    session.execute("DROP INDEX %s.%s_v_idx" % (ks, tbl))
    assert session.execute("SELECT * FROM system_schema.indexes WHERE keyspace_name = %s "
                           "AND table_name = %s", (ks, tbl)).one() is None


def test_eq_regular_and_updates(session, t):
    session.execute("CREATE INDEX ON %s (v)" % t)
    for k in range(5):
        for c in range(3):
            session.execute("INSERT INTO %s (k, c, v) VALUES (%%s, %%s, %%s)" % t, (k, c, (k + c) % 3))
    exp = sorted((k, c) for k in range(5) for c in range(3) if (k + c) % 3 == 1)
    assert rows(session, "SELECT k, c FROM %s WHERE v = 1" % t) == exp
    # update changes the indexed value: old entry gone, new one found
    session.execute("UPDATE %s SET v = 7 WHERE k = 0 AND c = 1" % t)
    assert (0, 1) not in rows(session, "SELECT k, c FROM %s WHERE v = 1" % t)
    assert rows(session, "SELECT k, c FROM %s WHERE v = 7" % t) == [(0, 1)]
    # null / delete column / delete row / delete partition
    session.execute("UPDATE %s SET v = null WHERE k = 0 AND c = 1" % t)
    assert rows(session, "SELECT k, c FROM %s WHERE v = 7" % t) == []
    session.execute("DELETE FROM %s WHERE k = 1 AND c = 0" % t)
    session.execute("DELETE FROM %s WHERE k = 2" % t)
    session.execute("DELETE v FROM %s WHERE k = 3 AND c = 1" % t)
    exp = [(k, c) for (k, c) in exp if (k, c) not in ((0, 1), (1, 0), (3, 1)) and k != 2]
    assert rows(session, "SELECT k, c FROM %s WHERE v = 1" % t) == sorted(exp)
    # range deletion
    session.execute("DELETE FROM %s WHERE k = 4 AND c >= 0" % t)
    exp = [(k, c) for (k, c) in exp if k != 4]
    assert rows(session, "SELECT k, c FROM %s WHERE v = 1" % t) == sorted(exp)


def test_with_partition_key_and_filtering(session, t):
    session.execute("CREATE INDEX ON %s (v)" % t)
    for k in range(3):
        for c in range(4):
            session.execute("INSERT INTO %s (k, c, v, t) VALUES (%%s, %%s, %%s, %%s)" % t,
                            (k, c, c % 2, "x%d" % c))
    assert rows(session, "SELECT c FROM %s WHERE k = 1 AND v = 1" % t) == [(1,), (3,)]
    with pytest.raises(InvalidRequest, match="ALLOW FILTERING"):
        session.execute("SELECT * FROM %s WHERE v = 1 AND t = 'x1'" % t)
    assert rows(session, "SELECT k, c FROM %s WHERE v = 1 AND t = 'x1' ALLOW FILTERING" % t) == \
        [(k, 1) for k in range(3)]


def test_order_by_refused(session, t):
    session.execute("CREATE INDEX ON %s (v)" % t)
    with pytest.raises(InvalidRequest, match="ORDER BY with 2ndary indexes is not supported."):
        session.execute("SELECT * FROM %s WHERE v = 1 ORDER BY c DESC" % t)
    with pytest.raises(InvalidRequest, match="ORDER BY with 2ndary indexes is not supported."):
        session.execute("SELECT * FROM %s WHERE k = 1 AND v = 1 ORDER BY c DESC" % t)


def test_static_clustering_and_pk_component(session, ks):
    session.execute("CREATE TABLE %s.spk (a int, b int, c int, s int static, v int, "
                    "PRIMARY KEY ((a, b), c))" % ks)
    session.execute("CREATE INDEX ON %s.spk (s)" % ks)
    session.execute("CREATE INDEX ON %s.spk (c)" % ks)
    session.execute("CREATE INDEX ON %s.spk (b)" % ks)
    for a in range(3):
        for b in range(2):
            session.execute("INSERT INTO %s.spk (a, b, s) VALUES (%%s, %%s, %%s)" % ks, (a, b, a))
            for c in range(3):
                session.execute("INSERT INTO %s.spk (a, b, c, v) VALUES (%%s, %%s, %%s, 0)" % ks, (a, b, c))
    assert rows(session, "SELECT a, b, c FROM %s.spk WHERE s = 1" % ks) == \
        sorted((1, b, c) for b in range(2) for c in range(3))
    assert rows(session, "SELECT a, b FROM %s.spk WHERE c = 2" % ks) == \
        sorted((a, b) for a in range(3) for b in range(2))
    assert rows(session, "SELECT c FROM %s.spk WHERE a = 1 AND b = 1 AND c = 2" % ks) == [(2,)]
    assert rows(session, "SELECT a, b FROM %s.spk WHERE c = 2 ALLOW FILTERING" % ks) == \
        sorted((a, b) for a in range(3) for b in range(2))
    assert rows(session, "SELECT a, c FROM %s.spk WHERE b = 1" % ks) == \
        sorted((a, c) for a in range(3) for c in range(3))
    session.execute("UPDATE %s.spk SET s = 9 WHERE a = 1 AND b = 0" % ks)
    assert rows(session, "SELECT a, b, c FROM %s.spk WHERE s = 1" % ks) == \
        sorted((1, 1, c) for c in range(3))
    session.execute("DELETE FROM %s.spk WHERE a = 0 AND b = 1" % ks)
    assert (0, 2) not in rows(session, "SELECT a, c FROM %s.spk WHERE b = 1" % ks)
    with pytest.raises(InvalidRequest, match="ALLOW FILTERING"):
        session.execute("SELECT * FROM %s.spk WHERE b = 1 AND v = 0" % ks)


def test_collections(session, t):
    session.execute("CREATE INDEX ON %s (values(l))" % t)
    session.execute("CREATE INDEX ON %s (st)" % t)
    session.execute("CREATE INDEX ON %s (keys(m))" % t)
    session.execute("CREATE INDEX ON %s (full(f))" % t)
    session.execute("INSERT INTO %s (k, c, l, st, m, f) VALUES (1, 1, [1, 2], {'a', 'b'}, "
                    "{'x': 1, 'y': 2}, [1, 2])" % t)
    session.execute("INSERT INTO %s (k, c, l, st, m, f) VALUES (2, 1, [2, 3], {'b'}, "
                    "{'y': 5}, [3])" % t)
    assert rows(session, "SELECT k FROM %s WHERE l CONTAINS 2" % t) == [(1,), (2,)]
    assert rows(session, "SELECT k FROM %s WHERE l CONTAINS 1" % t) == [(1,)]
    assert rows(session, "SELECT k FROM %s WHERE st CONTAINS 'b'" % t) == [(1,), (2,)]
    assert rows(session, "SELECT k FROM %s WHERE m CONTAINS KEY 'x'" % t) == [(1,)]
    assert rows(session, "SELECT k FROM %s WHERE f = [3]" % t) == [(2,)]
    session.execute("UPDATE %s SET st = st - {'b'}, m = m - {'x'} WHERE k = 1 AND c = 1" % t)
    assert rows(session, "SELECT k FROM %s WHERE st CONTAINS 'b'" % t) == [(2,)]
    assert rows(session, "SELECT k FROM %s WHERE m CONTAINS KEY 'x'" % t) == []
    session.execute("UPDATE %s SET l = [9] WHERE k = 2 AND c = 1" % t)
    assert rows(session, "SELECT k FROM %s WHERE l CONTAINS 2" % t) == [(1,)]
    assert rows(session, "SELECT k FROM %s WHERE l CONTAINS 9" % t) == [(2,)]


def test_entries_and_values_of_map(session, t):
    session.execute("CREATE INDEX ON %s (entries(m))" % t)
    session.execute("INSERT INTO %s (k, c, m) VALUES (1, 1, {'x': 1})" % t)
    session.execute("INSERT INTO %s (k, c, m) VALUES (2, 1, {'x': 2})" % t)
    assert rows(session, "SELECT k FROM %s WHERE m['x'] = 2" % t) == [(2,)]
    session.execute("UPDATE %s SET m['x'] = 2 WHERE k = 1 AND c = 1" % t)
    assert rows(session, "SELECT k FROM %s WHERE m['x'] = 2" % t) == [(1,), (2,)]
    assert rows(session, "SELECT k FROM %s WHERE m['x'] = 1" % t) == []


def test_build_on_existing_data(session, t):
    for k in range(50):
        session.execute("INSERT INTO %s (k, c, v) VALUES (%%s, 0, %%s)" % t, (k, k % 5))
    session.execute("CREATE INDEX ON %s (v)" % t)
    assert rows(session, "SELECT k FROM %s WHERE v = 3" % t) == [(k,) for k in range(50) if k % 5 == 3]


def test_paging(session, t):
    session.execute("CREATE INDEX ON %s (v)" % t)
    exp = []
    for k in range(40):
        for c in range(3):
            v = (k * 3 + c) % 2
            session.execute("INSERT INTO %s (k, c, v) VALUES (%%s, %%s, %%s)" % t, (k, c, v))
            if v == 0:
                exp.append((k, c))
    for fetch in (1, 2, 7, 100):
        st = SimpleStatement("SELECT k, c FROM %s WHERE v = 0" % t, fetch_size=fetch)
        got = [tuple(r) for r in session.execute(st)]
        assert sorted(got) == sorted(exp)
        assert len(got) == len(set(got))
    assert len(list(session.execute("SELECT k FROM %s WHERE v = 0 LIMIT 5" % t))) == 5


def test_ttl(session, t):
    session.execute("CREATE INDEX ON %s (v)" % t)
    session.execute("INSERT INTO %s (k, c, v) VALUES (1, 1, 5) USING TTL 1" % t)
    session.execute("INSERT INTO %s (k, c, v) VALUES (2, 1, 5)" % t)
    assert rows(session, "SELECT k FROM %s WHERE v = 5" % t) == [(1,), (2,)]
    import time
    time.sleep(2.2)
    assert rows(session, "SELECT k FROM %s WHERE v = 5" % t) == [(2,)]


def test_batch_and_timestamps(session, t):
    session.execute("CREATE INDEX ON %s (v)" % t)
    session.execute("BEGIN BATCH INSERT INTO %s (k, c, v) VALUES (1, 1, 1); "
                    "UPDATE %s SET v = 2 WHERE k = 1 AND c = 1; APPLY BATCH" % (t, t))
    assert rows(session, "SELECT k FROM %s WHERE v = 2" % t) == [(1,)]
    assert rows(session, "SELECT k FROM %s WHERE v = 1" % t) == []
    # an older write does not win
    session.execute("UPDATE %s USING TIMESTAMP 1 SET v = 3 WHERE k = 1 AND c = 1" % t)
    assert rows(session, "SELECT k FROM %s WHERE v = 3" % t) == []
    assert rows(session, "SELECT k FROM %s WHERE v = 2" % t) == [(1,)]


def test_refusals(session, t):
    with pytest.raises(InvalidRequest, match="ALLOW FILTERING"):
        session.execute("SELECT * FROM %s WHERE v = 1" % t)
    with pytest.raises(InvalidRequest, match="Cannot create secondary index on the only partition key"):
        session.execute("CREATE INDEX ON %s (k)" % t)
    with pytest.raises(InvalidRequest, match="full"):
        session.execute("CREATE INDEX ON %s (f)" % t)


@cassette_only("admin flush endpoint")
def test_flush_and_compaction(session, server, t):
    ks, tbl = t.split(".")
    session.execute("CREATE INDEX ON %s (v)" % t)
    for k in range(20):
        session.execute("INSERT INTO %s (k, c, v) VALUES (%%s, 0, %%s)" % t, (k, k % 2))
    flush(server, ks)
    for k in range(0, 20, 4):
        session.execute("UPDATE %s SET v = 5 WHERE k = %%s AND c = 0" % t, (k,))
    flush(server, ks)
    exp = [(k,) for k in range(20) if k % 2 == 0 and k % 4 != 0]
    assert rows(session, "SELECT k FROM %s WHERE v = 0" % t) == exp
    assert rows(session, "SELECT k FROM %s WHERE v = 5" % t) == [(k,) for k in range(0, 20, 4)]


@cassette_only("private server restart")
def test_restart(fresh_server):
    c, s = H.connect(fresh_server.host, fresh_server.port)
    try:
        s.execute("CREATE KEYSPACE r WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE r.t (k int, c int, v int, PRIMARY KEY (k, c))")
        for k in range(10):
            s.execute("INSERT INTO r.t (k, c, v) VALUES (%s, 0, %s)", (k, k % 2))
        s.execute("CREATE INDEX ON r.t (v)")
        for k in range(10, 20):
            s.execute("INSERT INTO r.t (k, c, v) VALUES (%s, 0, %s)", (k, k % 2))
        s.execute("UPDATE r.t SET v = 7 WHERE k = 0 AND c = 0")
    finally:
        c.shutdown()
    fresh_server.stop()
    fresh_server.start()
    c, s = H.connect(fresh_server.host, fresh_server.port)
    try:
        got = sorted(r.k for r in s.execute("SELECT k FROM r.t WHERE v = 0"))
        assert got == [k for k in range(2, 20, 2)]
        assert [r.k for r in s.execute("SELECT k FROM r.t WHERE v = 7")] == [0]
    finally:
        c.shutdown()


@cassette_only("flushes and restarts of a private server")
def test_randomized_against_base_scan(fresh_server):
    """Random base mutations, flushes and restarts; afterwards every index
    query and every view read must equal what a scan of the base implies."""
    import os
    import random
    import time
    seed = int(os.environ.get("INDEX_SEED", str(int(time.time() * 1000) % 100000)))
    print("seed", seed)
    rnd = random.Random(seed)
    c, s = H.connect(fresh_server.host, fresh_server.port)
    s.execute("CREATE KEYSPACE rr WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
    s.execute("CREATE TABLE rr.t (k int, c int, v int, w int, s int static, st set<int>, "
              "PRIMARY KEY (k, c))")
    s.execute("CREATE INDEX ON rr.t (v)")
    s.execute("CREATE INDEX ON rr.t (s)")
    s.execute("CREATE INDEX ON rr.t (st)")
    s.execute("CREATE MATERIALIZED VIEW rr.mv AS SELECT k, c, v, w FROM rr.t WHERE v IS NOT NULL "
              "AND k IS NOT NULL AND c IS NOT NULL PRIMARY KEY (v, k, c)")
    deadline = time.time() + 4
    ops = 0
    while time.time() < deadline:
        k, cc, val = rnd.randrange(6), rnd.randrange(5), rnd.randrange(4)
        r = rnd.random()
        if r < 0.3:
            s.execute("INSERT INTO rr.t (k, c, v, w) VALUES (%s, %s, %s, %s)", (k, cc, val, rnd.randrange(9)))
        elif r < 0.45:
            s.execute("UPDATE rr.t SET v = %s WHERE k = %s AND c = %s", (val, k, cc))
        elif r < 0.5:
            s.execute("UPDATE rr.t SET v = null WHERE k = %s AND c = %s", (k, cc))
        elif r < 0.55:
            s.execute("UPDATE rr.t SET w = %s WHERE k = %s AND c = %s", (val, k, cc))
        elif r < 0.62:
            s.execute("UPDATE rr.t SET s = %s WHERE k = %s", (val, k))
        elif r < 0.7:
            s.execute("UPDATE rr.t SET st = st + {%s} WHERE k = %s AND c = %s" % (val, k, cc))
        elif r < 0.74:
            s.execute("UPDATE rr.t SET st = st - {%s} WHERE k = %s AND c = %s" % (val, k, cc))
        elif r < 0.8:
            s.execute("DELETE FROM rr.t WHERE k = %s AND c = %s", (k, cc))
        elif r < 0.84:
            q = rnd.choice(["DELETE FROM rr.t WHERE k = %s AND c >= %s",
                            "DELETE FROM rr.t WHERE k = %s AND c < %s",
                            "DELETE FROM rr.t WHERE k = %s AND c > %s AND c <= 3"])
            s.execute(q, (k, cc))
        elif r < 0.87:
            s.execute("DELETE FROM rr.t WHERE k = %s", (k,))
        elif r < 0.9:
            s.execute("BEGIN BATCH UPDATE rr.t SET v = %s WHERE k = %s AND c = %s; "
                      "DELETE FROM rr.t WHERE k = %s AND c = %s; APPLY BATCH" % (val, k, cc, k, (cc + 1) % 5))
        elif r < 0.915:
            s.execute("INSERT INTO rr.t (k, c, v, st) VALUES (%s, %s, %s, {%s}) USING TTL 3600"
                      % (k, cc, val, rnd.randrange(4)))
        elif r < 0.925:
            s.execute("UPDATE rr.t SET st = {%s, %s} WHERE k = %s AND c = %s"
                      % (val, rnd.randrange(4), k, cc))
        elif r < 0.93:
            fresh_server_flush(fresh_server, "compact" if rnd.random() < 0.3 else "flush")
        elif r < 0.94:
            c.shutdown()
            fresh_server.stop()
            fresh_server.start(port=0)   # a fixed port would also ask for admin port 7199
            c, s = H.connect(fresh_server.host, fresh_server.port)
        ops += 1
    base = list(s.execute("SELECT k, c, v, w, s, st FROM rr.t"))
    try:
        for val in range(4):
            exp = sorted((r.k, r.c) for r in base if r.v == val and r.c is not None)
            got = sorted((r.k, r.c) for r in s.execute("SELECT k, c FROM rr.t WHERE v = %s", (val,)))
            assert got == exp, ("v", val, seed)
            paged = [(r.k, r.c) for r in s.execute(SimpleStatement(
                "SELECT k, c FROM rr.t WHERE v = %d" % val, fetch_size=2))]
            assert sorted(paged) == exp and len(paged) == len(set(paged)), ("paged", val, seed)
            exp = sorted((r.k, r.c) for r in base if r.s == val)
            got = sorted((r.k, r.c) for r in s.execute("SELECT k, c FROM rr.t WHERE s = %s", (val,)))
            assert got == exp, ("s", val, seed)
            exp = sorted((r.k, r.c) for r in base if r.st and val in r.st)
            got = sorted((r.k, r.c) for r in s.execute("SELECT k, c FROM rr.t WHERE st CONTAINS %s", (val,)))
            assert got == exp, ("st", val, seed)
        exp = sorted((r.v, r.k, r.c, r.w) for r in base if r.v is not None and r.c is not None)
        got = sorted(tuple(r) for r in s.execute("SELECT v, k, c, w FROM rr.mv"))
        assert got == exp, ("view", seed, ops)
    finally:
        c.shutdown()


def fresh_server_flush(server, verb="flush"):
    url = "http://127.0.0.1:%d/%s?ks=rr" % (admin_port(server), verb)
    urllib.request.urlopen(urllib.request.Request(url, data=b"", method="POST"), timeout=30).read()


@cassette_only("kill -9 of a private server during CREATE INDEX")
def test_kill_during_build(fresh_server):
    """A crash in the middle of CREATE INDEX leaves either no index (then
    CREATE INDEX again) or one whose build resumes after the restart and ends
    complete; never a partial one that answers queries."""
    import time
    from cassandra.concurrent import execute_concurrent_with_args
    c, s = H.connect(fresh_server.host, fresh_server.port)
    s.execute("CREATE KEYSPACE kb WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
    s.execute("CREATE TABLE kb.t (k int PRIMARY KEY, v int)")
    ps = s.prepare("INSERT INTO kb.t (k, v) VALUES (?, ?)")
    execute_concurrent_with_args(s, ps, [(k, k % 7) for k in range(20000)], concurrency=64)
    expected = sorted(k for k in range(20000) if k % 7 == 3)
    for delay in (0.0, 0.005, 0.02, 0.2):
        s.execute("DROP INDEX IF EXISTS kb.t_v_idx")
        s.execute_async("CREATE INDEX ON kb.t (v)")
        time.sleep(delay)
        c.shutdown()
        fresh_server.kill9()
        fresh_server.start(port=0)
        c, s = H.connect(fresh_server.host, fresh_server.port)
        if s.execute("SELECT * FROM system_schema.indexes WHERE keyspace_name = 'kb'").one() is None:
            s.execute("CREATE INDEX ON kb.t (v)")
        assert sorted(r.k for r in query_when_built(s, "SELECT k FROM kb.t WHERE v = 3")) == expected, delay
    c.shutdown()


def query_when_built(s, q, timeout=60):
    """Run q, retrying while the index it needs is being built (Cassandra's
    read failure INDEX_NOT_AVAILABLE); returns the rows.  Also returns how
    many refusals were seen, as .refusals on the list."""
    import time
    from cassandra import ReadFailure
    deadline = time.time() + timeout
    refusals = 0
    while True:
        try:
            out = list(s.execute(q))
            break
        except ReadFailure as e:
            assert "INDEX_NOT_AVAILABLE" in str(e), e
            refusals += 1
            assert time.time() < deadline, "index never became available"
            time.sleep(0.05)
    res = RowList(out)
    res.refusals = refusals
    return res


class RowList(list):
    refusals = 0


def slow_builds(server, monkeypatch, rows_per_step):
    """Restart the private server with small build slices (cassette knob:
    CASSETTE_INDEX_BUILD_STEP_ROWS), so a build lasts long enough to watch."""
    if not H.is_cassette():
        return
    server.stop()
    monkeypatch.setenv("CASSETTE_INDEX_BUILD_STEP_ROWS", str(rows_per_step))
    server.start(port=0)


def test_background_build_large_table(fresh_server, monkeypatch):
    """CREATE INDEX on a 50k-row table returns at once; queries needing the
    index fail with INDEX_NOT_AVAILABLE until the build is done; writes
    during the build are indexed; the result is then exact."""
    import time
    from cassandra.concurrent import execute_concurrent_with_args
    slow_builds(fresh_server, monkeypatch, 20)
    c, s = H.connect(fresh_server.host, fresh_server.port)
    s.execute("CREATE KEYSPACE bg WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
    s.execute("CREATE TABLE bg.t (k int PRIMARY KEY, v int)")
    ps = s.prepare("INSERT INTO bg.t (k, v) VALUES (?, ?)")
    n = 50000
    execute_concurrent_with_args(s, ps, [(k, k % 11) for k in range(n)], concurrency=64)
    exp = {k for k in range(n) if k % 11 == 3}
    t0 = time.time()
    s.execute("CREATE INDEX t_v_idx ON bg.t (v)")
    took = time.time() - t0
    assert took < 5, took
    # writes during the build are maintained at once
    for k in range(3, 3000, 11):          # v 3 -> 4
        s.execute("UPDATE bg.t SET v = 4 WHERE k = %s", (k,))
        exp.discard(k)
    for k in range(n, n + 50):             # new rows with v = 3
        s.execute("INSERT INTO bg.t (k, v) VALUES (%s, 3)", (k,))
        exp.add(k)
    for k in range(n - 3000 + 3, n, 11):   # deletions (rows the build may not have reached)
        if k % 11 == 3:
            s.execute("DELETE FROM bg.t WHERE k = %s", (k,))
            exp.discard(k)
    got = query_when_built(s, "SELECT k FROM bg.t WHERE v = 3")
    if H.is_cassette():
        assert got.refusals > 0
    # Cassandra's record of built indexes (table_name holds the keyspace)
    assert [tuple(r) for r in s.execute('SELECT table_name, index_name FROM system."IndexInfo" '
                                        "WHERE table_name = 'bg'")] == [("bg", "t_v_idx")]
    assert sorted(r.k for r in got) == sorted(exp)
    assert sorted(r.k for r in s.execute("SELECT k FROM bg.t WHERE v = 4")) == \
        sorted(k for k in range(n) if k % 11 == 4 or (k % 11 == 3 and k < 3000))
    c.shutdown()


@cassette_only("kill -9 of a private server; build slice knob")
def test_restart_mid_build_resumes(fresh_server, monkeypatch):
    """kill -9 in the middle of a background index build and of a view
    build: after the restart both builds resume and end complete."""
    import time
    from cassandra.concurrent import execute_concurrent_with_args
    slow_builds(fresh_server, monkeypatch, 20)
    c, s = H.connect(fresh_server.host, fresh_server.port)
    s.execute("CREATE KEYSPACE rb WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
    s.execute("CREATE TABLE rb.t (k int PRIMARY KEY, v int)")
    ps = s.prepare("INSERT INTO rb.t (k, v) VALUES (?, ?)")
    n = 30000
    execute_concurrent_with_args(s, ps, [(k, k % 13) for k in range(n)], concurrency=64)
    s.execute("CREATE INDEX t_v_idx ON rb.t (v)")
    s.execute("CREATE MATERIALIZED VIEW rb.mv AS SELECT k, v FROM rb.t WHERE v IS NOT NULL AND k IS NOT NULL "
              "PRIMARY KEY (v, k)")
    time.sleep(0.5)
    assert s.execute('SELECT * FROM system."IndexInfo" WHERE table_name = \'rb\'').one() is None
    r = s.execute("SELECT * FROM system.view_builds_in_progress WHERE keyspace_name = 'rb'").one()
    assert r is not None and r.view_name == "mv"
    # a view serves what is built so far
    part = list(s.execute("SELECT k FROM rb.mv WHERE v = 5"))
    assert len(part) < n // 13 + 1
    s.execute("INSERT INTO rb.t (k, v) VALUES (%s, 5)", (n + 1,))
    c.shutdown()
    fresh_server.kill9()
    fresh_server.start(port=0)
    c, s = H.connect(fresh_server.host, fresh_server.port)
    with open(fresh_server.log_path, "rb") as f:
        assert b"resuming the build" in f.read()
    exp = sorted([k for k in range(n) if k % 13 == 5] + [n + 1])
    assert sorted(r.k for r in query_when_built(s, "SELECT k FROM rb.t WHERE v = 5", timeout=90)) == exp
    deadline = time.time() + 90
    while sorted(r.k for r in s.execute("SELECT k FROM rb.mv WHERE v = 5")) != exp:
        assert time.time() < deadline, "view build did not finish"
        time.sleep(0.2)
    assert s.execute("SELECT count(*) FROM rb.mv").one()[0] == n + 1
    deadline = time.time() + 30
    while s.execute("SELECT * FROM system.built_views WHERE keyspace_name = 'rb'").one() is None:
        assert time.time() < deadline
        time.sleep(0.1)
    assert s.execute("SELECT * FROM system.view_builds_in_progress WHERE keyspace_name = 'rb'").one() is None
    assert [tuple(r) for r in s.execute("SELECT view_name, status_replicated FROM system.built_views "
                                        "WHERE keyspace_name = 'rb'")] == [("mv", True)]
    c.shutdown()


@cassette_only("kill -9 of a private server")
def test_kill9_after_writes(fresh_server):
    """Base rows, index entries and view rows share one commit log record per
    write: after kill -9 and replay, index queries and the view match the base."""
    c, s = H.connect(fresh_server.host, fresh_server.port)
    s.execute("CREATE KEYSPACE kw WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
    s.execute("CREATE TABLE kw.t (k int, c int, v int, PRIMARY KEY (k, c))")
    s.execute("CREATE INDEX ON kw.t (v)")
    s.execute("CREATE MATERIALIZED VIEW kw.mv AS SELECT * FROM kw.t WHERE v IS NOT NULL AND k IS NOT NULL "
              "AND c IS NOT NULL PRIMARY KEY (v, k, c)")
    for i in range(300):
        s.execute("INSERT INTO kw.t (k, c, v) VALUES (%s, %s, %s)", (i % 17, i % 5, i % 4))
        if i % 7 == 0:
            s.execute("DELETE FROM kw.t WHERE k = %s AND c = %s", (i % 13, i % 5))
    c.shutdown()
    fresh_server.kill9()
    fresh_server.start(port=0)
    c, s = H.connect(fresh_server.host, fresh_server.port)
    try:
        base = list(s.execute("SELECT k, c, v FROM kw.t"))
        for val in range(4):
            exp = sorted((r.k, r.c) for r in base if r.v == val)
            assert sorted((r.k, r.c) for r in s.execute("SELECT k, c FROM kw.t WHERE v = %s", (val,))) == exp
        assert sorted(tuple(r) for r in s.execute("SELECT v, k, c FROM kw.mv")) == \
            sorted((r.v, r.k, r.c) for r in base)
    finally:
        c.shutdown()


def test_sasi_disabled_by_default(session, ks):
    """4.1's default sasi_indexes_enabled: false refuses a SASI index in
    SASIIndex's words."""
    session.execute("CREATE TABLE %s.sasi (k int PRIMARY KEY, name text)" % ks)
    with pytest.raises(InvalidRequest) as ei:
        session.execute("CREATE CUSTOM INDEX ON %s.sasi (name) USING 'org.apache.cassandra.index.sasi.SASIIndex' "
                        "WITH OPTIONS = {'mode': 'CONTAINS'}" % ks)
    assert "SASI indexes are disabled. Enable in cassandra.yaml to use." in str(ei.value)
    assert session.execute("SELECT value FROM system_views.settings WHERE name = 'sasi_indexes_enabled'") \
        .one().value == "false"


@cassette_only("cassette has no SASI: enabling it in cassandra.yaml gets its own refusal")
def test_sasi_enabled_in_the_config_is_refused_plainly(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("sasi_indexes_enabled: true\n")
    srv = H.new_server(tmp_path / "d", extra_args=["--config", str(cfg)])
    try:
        c, s = H.connect(srv.host, srv.port)
        assert s.execute("SELECT value FROM system_views.settings WHERE name = 'sasi_indexes_enabled'") \
            .one().value == "true"
        s.execute("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE ks.sasi (k int PRIMARY KEY, name text)")
        with pytest.raises(InvalidRequest) as ei:
            s.execute("CREATE CUSTOM INDEX ON ks.sasi (name) USING 'org.apache.cassandra.index.sasi.SASIIndex'")
        assert "SASI indexes are not supported by cassette" in str(ei.value)
        assert b"unknown key" not in open(srv.log_path, "rb").read()
        c.shutdown()
    finally:
        srv.stop()
