"""Request timeouts: a read still scanning at read_request_timeout (a read
of partition keys) or range_request_timeout (a range, filtering or index
read) ends with Cassandra's ReadTimeout (0x1200, "Operation timed out -
received only 0 responses.", the request's consistency, 0 of 1 responses,
no data), counted in the node's ClientRequest timeouts; the server goes
on serving, and the timeouts set live (settimeout) or in cassandra.yaml
are the ones applied.  A write whose commit log sync (group or batch
mode) comes after write_request_timeout (counter_write_request_timeout for
counters) ends with WriteTimeout (0x1100) and its WriteType; the write is
applied and is durable once the sync comes.
"""

import os
import re
import subprocess

import pytest

import cassette_harness as H

TOOL = os.path.join(os.path.dirname(H.binary_path()), "cassette-tool")

pytestmark = pytest.mark.skipif(not H.is_cassette(), reason="sets timeouts through cassette-tool")

ROWS = 60000


def tool(server, *args):
    H.wait_for(lambda: server.admin_port, timeout=10, what="the admin port line")
    return subprocess.run([TOOL, "-p", str(server.admin_port)] + list(args), capture_output=True, text=True,
                          timeout=120)


def timeouts(server):
    status, body = server.admin("GET", "/metrics")
    assert status == 200
    text = body.decode() if isinstance(body, bytes) else body
    return {k: int(v) for k, v in re.findall(r'cassette_request_timeouts_total\{request="(\w+)"\} (\d+)', text)}


def fill(s, ks, wide_rows=ROWS, kv_rows=ROWS):
    s.execute("CREATE TABLE %s.wide (p int, c int, v int, PRIMARY KEY (p, c))" % ks)
    s.execute("CREATE TABLE %s.kv (k int PRIMARY KEY, v int)" % ks)
    s.execute("CREATE INDEX ON %s.kv (v)" % ks)
    # unlogged batches of 250 rows: a few hundred requests
    wide = ["BEGIN UNLOGGED BATCH " + " ".join(
        "INSERT INTO %s.wide (p, c, v) VALUES (0, %d, %d);" % (ks, c, c % 7) for c in range(b, b + 250))
        + " APPLY BATCH" for b in range(0, wide_rows, 250)]
    kv = ["BEGIN UNLOGGED BATCH " + " ".join(
        "INSERT INTO %s.kv (k, v) VALUES (%d, 1);" % (ks, k) for k in range(b, b + 250))
        + " APPLY BATCH" for b in range(0, kv_rows, 250)]
    for q in wide + kv:
        s.execute(q, timeout=60)


def assert_read_timeout(s, q, cl_name="LOCAL_ONE"):
    from cassandra import ReadTimeout
    with pytest.raises(ReadTimeout) as ei:
        s.execute(q, timeout=60)
    e = ei.value
    assert "Operation timed out - received only 0 responses." in str(e), str(e)
    assert e.received_responses == 0 and e.required_responses == 1, str(e)
    assert e.data_retrieved is False
    from cassandra import ConsistencyLevel
    assert e.consistency == getattr(ConsistencyLevel, cl_name), e.consistency


def test_reads_end_at_their_timeouts(tmp_path):
    srv = H.new_server(tmp_path)
    try:
        c, s = H.connect(srv.host, srv.port)
        s.execute("CREATE KEYSPACE kt WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        fill(s, "kt")
        assert s.execute("SELECT count(*) FROM kt.wide WHERE p = 0", timeout=60).one()[0] == ROWS
        assert timeouts(srv) == {"read": 0, "range": 0, "write": 0}

        # read_request_timeout: single-partition reads; range reads keep theirs
        assert tool(srv, "settimeout", "read", "1").returncode == 0
        assert_read_timeout(s, "SELECT count(*) FROM kt.wide WHERE p = 0")
        assert_read_timeout(s, "SELECT * FROM kt.wide WHERE p IN (0, 1)")
        from cassandra import ConsistencyLevel
        from cassandra.query import SimpleStatement
        st = SimpleStatement("SELECT sum(v) FROM kt.wide WHERE p = 0", consistency_level=ConsistencyLevel.QUORUM)
        assert_read_timeout(s, st, "QUORUM")
        # a short read answers; so does a paged one (each page its own request)
        assert s.execute("SELECT v FROM kt.wide WHERE p = 0 AND c = 7").one().v == 0
        st = SimpleStatement("SELECT c FROM kt.wide WHERE p = 0 AND c < 1000", fetch_size=100)
        assert [r.c for r in s.execute(st)] == list(range(1000))
        assert s.execute("SELECT count(*) FROM kt.kv", timeout=60).one()[0] == ROWS
        assert timeouts(srv) == {"read": 3, "range": 0, "write": 0}

        # range_request_timeout: a range scan, ALLOW FILTERING, an index read
        assert tool(srv, "settimeout", "read", "5000").returncode == 0
        assert tool(srv, "settimeout", "range", "1").returncode == 0
        assert_read_timeout(s, "SELECT count(*) FROM kt.kv")
        assert_read_timeout(s, "SELECT k FROM kt.kv WHERE v = 1")
        assert_read_timeout(s, "SELECT count(*) FROM kt.wide WHERE v = 3 ALLOW FILTERING")
        assert s.execute("SELECT count(*) FROM kt.wide WHERE p = 0", timeout=60).one()[0] == ROWS
        assert timeouts(srv) == {"read": 3, "range": 3, "write": 0}

        # the same reads once the timeouts are back: nothing was lost
        assert tool(srv, "settimeout", "range", "10000").returncode == 0
        assert s.execute("SELECT count(*) FROM kt.kv", timeout=60).one()[0] == ROWS
        assert s.execute("SELECT count(*) FROM kt.kv WHERE v = 1", timeout=60).one()[0] == ROWS
        c.shutdown()
    finally:
        srv.stop()


def test_timeouts_from_the_config_file(tmp_path):
    """cassandra.yaml's read_request_timeout applies from the start, raised
    to Cassandra's lowest accepted 10 ms (checkForLowestAcceptedTimeouts)
    when set under it; settimeout is not floored."""
    cfg = tmp_path / "c.yaml"
    cfg.write_text("read_request_timeout: 1ms\nrange_request_timeout: 25ms\n")
    srv = H.new_server(tmp_path / "d", extra_args=["--config", str(cfg)])
    wide_rows = 4 * ROWS      # a count of them takes well over 10 ms
    try:
        c, s = H.connect(srv.host, srv.port)
        settings = {r.name: r.value for r in s.execute("SELECT name, value FROM system_views.settings")}
        assert settings["read_request_timeout"] == "10ms", settings["read_request_timeout"]
        assert settings["range_request_timeout"] == "25ms"
        assert "found read_request_timeout::1ms less than lowest acceptable value 10ms, continuing with 10ms" \
            in open(srv.log_path, errors="replace").read()
        s.execute("CREATE KEYSPACE kt WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        fill(s, "kt", wide_rows=wide_rows, kv_rows=0)
        assert_read_timeout(s, "SELECT count(*) FROM kt.wide WHERE p = 0")
        assert s.execute("SELECT v FROM kt.wide WHERE p = 0 AND c = 7").one().v == 0
        srv.kill9()
        srv.start()
        c.shutdown()
        c, s = H.connect(srv.host, srv.port)
        assert_read_timeout(s, "SELECT count(*) FROM kt.wide WHERE p = 0")
        assert s.execute("SELECT c FROM kt.wide WHERE p = 0 AND c = %d" % (wide_rows - 1)).one().c == wide_rows - 1
        # nodetool settimeout takes 1 ms as it is
        assert tool(srv, "settimeout", "read", "1").returncode == 0
        assert s.execute("SELECT value FROM system_views.settings WHERE name = 'read_request_timeout'").one().value \
            == "1ms"
        c.shutdown()
    finally:
        srv.stop()


def assert_write_timeout(s, q, write_type, cl_name="QUORUM"):
    from cassandra import ConsistencyLevel, WriteTimeout
    from cassandra.query import SimpleStatement
    with pytest.raises(WriteTimeout) as ei:
        s.execute(SimpleStatement(q, consistency_level=getattr(ConsistencyLevel, cl_name)), timeout=60)
    e = ei.value
    assert "Operation timed out - received only 0 responses." in str(e), str(e)
    assert e.received_responses == 0 and e.required_responses == 1, str(e)
    assert e.consistency == getattr(ConsistencyLevel, cl_name), e.consistency
    assert e.write_type == write_type, (q, e.write_type)


def test_writes_end_at_their_timeout(tmp_path):
    """Group commit with a 3 s window and write_request_timeout 100ms: each
    write waits for the window's sync and gets WriteTimeout at 100 ms, with
    StorageProxy's WriteType; counters wait for their own timeout; the
    writes are there, and survive kill -9 once the window's sync is past."""
    import time
    from cassandra import WriteType
    cfg = tmp_path / "c.yaml"
    cfg.write_text("commitlog_sync: group\ncommitlog_sync_group_window: 3000ms\nwrite_request_timeout: 100ms\n")
    srv = H.new_server(tmp_path / "d", extra_args=["--config", str(cfg)])
    try:
        c, s = H.connect(srv.host, srv.port)
        s.execute("CREATE KEYSPACE kw WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
                  timeout=60)
        s.execute("CREATE TABLE kw.t (k int PRIMARY KEY, v int)", timeout=60)
        s.execute("CREATE TABLE kw.u (k int PRIMARY KEY, v int)", timeout=60)
        s.execute("CREATE TABLE kw.c (k int PRIMARY KEY, n counter)", timeout=60)
        t0 = time.monotonic()
        assert_write_timeout(s, "INSERT INTO kw.t (k, v) VALUES (1, 1)", WriteType.SIMPLE)
        assert_write_timeout(s, "UPDATE kw.t SET v = 2 WHERE k = 2", WriteType.SIMPLE, "ONE")
        assert_write_timeout(s, "BEGIN BATCH INSERT INTO kw.t (k, v) VALUES (3, 3); "
                                "INSERT INTO kw.t (k, v) VALUES (4, 4); APPLY BATCH", WriteType.BATCH)
        # one partition in two tables of a keyspace is one mutation
        assert_write_timeout(s, "BEGIN BATCH INSERT INTO kw.t (k, v) VALUES (5, 5); "
                                "INSERT INTO kw.u (k, v) VALUES (5, 5); APPLY BATCH", WriteType.SIMPLE)
        assert_write_timeout(s, "BEGIN UNLOGGED BATCH INSERT INTO kw.t (k, v) VALUES (6, 6); "
                                "INSERT INTO kw.t (k, v) VALUES (7, 7); APPLY BATCH", WriteType.UNLOGGED_BATCH)
        assert_write_timeout(s, "UPDATE kw.t SET v = 8 WHERE k IN (8, 9)", WriteType.UNLOGGED_BATCH)
        # an applied LWT waits for its commit as commitPaxos does: SIMPLE, the commit consistency
        assert_write_timeout(s, "INSERT INTO kw.u (k, v) VALUES (12, 12) IF NOT EXISTS", WriteType.SIMPLE)
        assert time.monotonic() - t0 < 2.5   # each at its 100 ms, not at the sync
        assert timeouts(srv)["write"] == 7
        # counter writes have counter_write_request_timeout (5 s): they wait
        s.execute("UPDATE kw.c SET n = n + 1 WHERE k = 1", timeout=60)
        assert tool(srv, "settimeout", "counterwrite", "100").returncode == 0
        assert_write_timeout(s, "UPDATE kw.c SET n = n + 1 WHERE k = 1", WriteType.COUNTER)
        # a prepared write, and the timeout set back live: the write waits
        ins = s.prepare("INSERT INTO kw.t (k, v) VALUES (?, ?)")
        from cassandra import WriteTimeout
        with pytest.raises(WriteTimeout):
            s.execute(ins, (10, 10), timeout=60)
        assert tool(srv, "settimeout", "write", "10000").returncode == 0
        s.execute(ins, (11, 11), timeout=60)
        assert timeouts(srv)["write"] == 9
        # the LWT was applied: not again
        assert s.execute("INSERT INTO kw.u (k, v) VALUES (12, 13) IF NOT EXISTS", timeout=60).one()[0] is False
        rows = {r.k: r.v for r in s.execute("SELECT k, v FROM kw.t")}
        assert rows == {1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 7, 8: 8, 9: 8, 10: 10, 11: 11}, rows
        assert s.execute("SELECT n FROM kw.c WHERE k = 1").one().n == 2
        # the timed-out writes were applied; the last ack'd write's sync covers them
        srv.kill9()
        srv.start()
        c.shutdown()
        c, s = H.connect(srv.host, srv.port)
        rows = {r.k: r.v for r in s.execute("SELECT k, v FROM kw.t")}
        assert rows == {1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 7, 8: 8, 9: 8, 10: 10, 11: 11}, rows
        assert sorted(s.execute("SELECT k, v FROM kw.u")) == [(5, 5), (12, 12)]
        assert s.execute("SELECT n FROM kw.c WHERE k = 1").one().n == 2
        c.shutdown()
    finally:
        srv.stop()
