"""Several request loops (request_loops, server/conn.h): connections are
handed round-robin to the loops, each loop serves its own connections, and
what must be server-wide stays so: schema change events reach registered
connections on every loop, system_views.clients lists every connection,
writes from all loops land in one table.

cassette-only (a private server with --request-loops 2); the rest of the
suite runs with 2 loops too under CASSETTE_ARGS="--request-loops 2".
"""

import re
import struct
import threading

import pytest

import cassette_harness as H
import rawcql as R

pytestmark = pytest.mark.skipif(not H.is_cassette(), reason="cassette setting")

LOOPS = 2


@pytest.fixture
def loops_server(tmp_path):
    s = H.Server(tmp_path)
    s.start(extra_args=["--request-loops", str(LOOPS)])   # after CASSETTE_ARGS: wins
    yield s
    s.stop()


def loop_metrics(server):
    """{loop index: (connections, requests)} from /metrics."""
    status, body = server.admin("GET", "/metrics")
    assert status == 200, body
    conns = {int(m.group(1)): int(m.group(2))
             for m in re.finditer(r'^cassette_loop_connections\{loop="(\d+)"\} (\d+)$', body, re.M)}
    reqs = {int(m.group(1)): int(m.group(2))
            for m in re.finditer(r'^cassette_loop_requests_total\{loop="(\d+)"\} (\d+)$', body, re.M)}
    return {i: (conns[i], reqs.get(i, 0)) for i in conns}


def register_body(*events):
    body = R.short(len(events))
    for e in events:
        body += R.string(e)
    return body


def rows(frame):
    """Decode a RESULT Rows body into a list of tuples of raw bytes (None
    for null); column types are not interpreted."""
    b = frame.body
    if frame.flags & 0x08:                    # warning list before the body
        off = 2
        for _ in range(struct.unpack_from(">H", b, 0)[0]):
            off += 2 + struct.unpack_from(">H", b, off)[0]
        b = b[off:]
    assert frame.opcode == R.OP_RESULT and struct.unpack_from(">i", b, 0)[0] == 2, frame
    flags, ncols = struct.unpack_from(">ii", b, 4)
    off = 12
    if flags & 0x0002:                        # has_more_pages: paging state
        n = struct.unpack_from(">i", b, off)[0]
        off += 4 + max(n, 0)
    if not flags & 0x0004:                    # metadata present
        def skip_string(o):
            return o + 2 + struct.unpack_from(">H", b, o)[0]

        def skip_type(o):
            t = struct.unpack_from(">H", b, o)[0]
            o += 2
            if t == 0x0000:                   # custom: class name
                return skip_string(o)
            if t in (0x0020, 0x0022):         # list, set
                return skip_type(o)
            if t == 0x0021:                   # map
                return skip_type(skip_type(o))
            assert t < 0x0020, "type 0x%x not handled" % t
            return o
        if flags & 0x0001:
            off = skip_string(skip_string(off))
        for _ in range(ncols):
            if not flags & 0x0001:
                off = skip_string(skip_string(off))
            off = skip_type(skip_string(off))
    nrows = struct.unpack_from(">i", b, off)[0]
    off += 4
    out = []
    for _ in range(nrows):
        row = []
        for _ in range(ncols):
            n = struct.unpack_from(">i", b, off)[0]
            off += 4
            row.append(None if n < 0 else b[off:off + n])
            off += max(n, 0)
        out.append(tuple(row))
    return out


def test_connections_spread_and_served(loops_server):
    host, port = loops_server.host, loops_server.port
    conns = [R.connect(host, port) for _ in range(10)]
    try:
        for c in conns:
            f = c.query("SELECT release_version FROM system.local")
            assert f.result_kind() == 2, f
        m = loop_metrics(loops_server)
        assert sorted(m) == list(range(LOOPS)), m
        # round-robin: 10 connections over 2 loops, 5 each
        assert [m[i][0] for i in range(LOOPS)] == [5] * LOOPS, m
        assert all(m[i][1] >= 10 for i in range(LOOPS)), m
        st = conns[0].query("SELECT value FROM system_views.settings WHERE name = 'request_loops'")
        assert rows(st) == [(str(LOOPS).encode(),)]
    finally:
        for c in conns:
            c.close()
    H.wait_for(lambda: all(v[0] == 0 for v in loop_metrics(loops_server).values()),
               timeout=10, what="every loop to see its connections closed")


def test_schema_events_reach_every_loop(loops_server):
    host, port = loops_server.host, loops_server.port
    conns = [R.connect(host, port) for _ in range(2 * LOOPS)]
    try:
        for c in conns:
            f = c.request(R.OP_REGISTER, register_body("SCHEMA_CHANGE"))
            assert f.opcode == R.OP_READY, f
        assert all(v[0] >= 2 for v in loop_metrics(loops_server).values())
        # the DDL runs on each loop in turn: its events must reach all
        for i, ddl_conn in enumerate(conns[:LOOPS]):
            f = ddl_conn.query("CREATE KEYSPACE ev%d WITH replication = "
                               "{'class': 'SimpleStrategy', 'replication_factor': 1}" % i)
            assert f.result_kind() == 5, f     # SCHEMA_CHANGE result
            name = R.string("ev%d" % i)
            for c in conns:
                if c is ddl_conn:
                    continue                   # request() may have skipped its event
                # the DDL connection of the previous round may still hold
                # its own event, read after that round's RESULT
                ev = c.recv()
                while ev.opcode == R.OP_EVENT and not ev.body.endswith(name) and c in conns[:i]:
                    ev = c.recv()
                assert ev.opcode == R.OP_EVENT and ev.stream == -1, ev
                assert ev.body.startswith(R.string("SCHEMA_CHANGE")) and ev.body.endswith(name), ev.body
    finally:
        for c in conns:
            c.close()


def test_clients_lists_every_connection(loops_server):
    host, port = loops_server.host, loops_server.port
    conns = [R.connect(host, port) for _ in range(7)]
    try:
        mine = {c.sock.getsockname()[1] for c in conns}
        f = conns[3].query("SELECT port FROM system_views.clients")
        listed = {struct.unpack(">i", r[0])[0] for r in rows(f)}
        assert mine <= listed, (mine, listed)
    finally:
        for c in conns:
            c.close()


def test_concurrent_writes_from_every_loop(loops_server):
    host, port = loops_server.host, loops_server.port
    with R.connect(host, port) as c:
        assert c.query("CREATE KEYSPACE w WITH replication = "
                       "{'class': 'SimpleStrategy', 'replication_factor': 1}").result_kind() == 5
        assert c.query("CREATE TABLE w.t (k int PRIMARY KEY, v int)").result_kind() == 5
    n_threads, per_thread = 6, 300
    errors = []

    def writer(t):
        try:
            with R.connect(host, port) as c:
                pid = c.prepare("INSERT INTO w.t (k, v) VALUES (?, ?)")
                # pipelined: everything in flight, then every reply
                for i in range(per_thread):
                    k = t * per_thread + i
                    c.stream = (c.stream + 1) % 32768
                    c.send(R.frame(R.OP_EXECUTE, R.execute_body(pid, (R.int32(k), R.int32(k))),
                                   stream=c.stream))
                for _ in range(per_thread):
                    f = c.recv()
                    assert f.result_kind() == 1, f
        except Exception as e:   # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    with R.connect(host, port) as c:
        f = c.query("SELECT count(*) FROM w.t")
        assert struct.unpack(">q", rows(f)[0][0])[0] == n_threads * per_thread
    m = loop_metrics(loops_server)
    assert all(v[1] > per_thread for v in m.values()), m
