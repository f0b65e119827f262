"""Bad input over raw sockets: malformed frames (tests/badinput/frames/*.hex,
regenerate with tests/badinput/make_corpus.py), invalid CQL
(tests/badinput/cql_errors.txt), seeded random mutations of valid frames,
and slow or silent clients.  After each case the server must still be up
and a separate driver connection must keep working.

Error codes (spec v4 section 9): 0x000A protocol error, 0x2000 syntax
error, 0x2200 invalid request, 0x2400 already exists, 0x2500 unprepared.
"""

import os
import random
import socket
import time

import pytest
from cassandra import InvalidRequest

import cassette_harness as H
import rawcql

HERE = os.path.dirname(os.path.abspath(__file__))
BAD = os.path.join(HERE, "..", "badinput")


def load_frames():
    d = os.path.join(BAD, "frames")
    out = []
    for name in sorted(os.listdir(d)):
        if not name.endswith(".hex"):
            continue
        meta, hexdata = {}, ""
        with open(os.path.join(d, name)) as f:
            for line in f:
                line = line.strip()
                if line.startswith("#"):
                    k, sep, v = line[1:].partition(":")
                    if sep:
                        meta[k.strip()] = v.strip()
                elif line:
                    hexdata += line
        out.append(pytest.param(name[:-4], bytes.fromhex(hexdata), meta, id=name[:-4]))
    return out


def load_cql_errors():
    out = []
    with open(os.path.join(BAD, "cql_errors.txt")) as f:
        for i, line in enumerate(f):
            if line.startswith("#") or "|" not in line:
                continue
            code, _, stmt = line.rstrip("\n").partition("|")
            out.append(pytest.param(int(code.strip(), 16), stmt.strip(), id="line%d" % (i + 1)))
    return out


def assert_healthy(server, session):
    if server.proc is not None:
        assert server.alive(), "server died\n" + server.log_tail()
    assert session.execute("SELECT key FROM system.local").one().key == "local"


@pytest.fixture(scope="module")
def tables(session, ks):
    session.execute("CREATE TABLE IF NOT EXISTS %s.t (k int PRIMARY KEY, v text)" % ks)
    session.execute("CREATE TABLE IF NOT EXISTS %s.c (p int, ck int, v int, PRIMARY KEY (p, ck))" % ks)
    return ks


@pytest.mark.parametrize("name,data,meta", load_frames())
def test_malformed_frame(contact, server, session, name, data, meta):
    with rawcql.Conn(*contact, timeout=5) as c:
        if meta.get("startup") == "yes":
            c.startup()
        c.send(data)
        if meta.get("half_close") == "yes":
            c.sock.shutdown(socket.SHUT_WR)
        expect = meta.get("expect", "any")
        try:
            f = c.recv()
        except rawcql.Closed:
            f = None
        except socket.timeout:
            f = "timeout"
        if expect.startswith("0x"):
            assert f is not None and f != "timeout", \
                "%s: expected ERROR %s, got %s" % (name, expect, "close" if f is None else "nothing")
            err = f.error()
            assert err is not None, "%s: expected ERROR %s, got %r" % (name, expect, f)
            assert err[0] == int(expect, 16), "%s: expected %s, got 0x%04x %r" % (name, expect, err[0], err[1])
            assert f.stream == 1, "%s: error on stream %d, request was on stream 1" % (name, f.stream)
        elif expect == "close":
            assert f is None or c.closed_within(5)
    assert_healthy(server, session)


@pytest.mark.parametrize("code,stmt", load_cql_errors())
def test_invalid_cql_raw(contact, server, session, tables, code, stmt):
    with rawcql.connect(*contact) as c:
        f = c.query(stmt.replace("{ks}", tables))
        err = f.error()
        assert err is not None, "%r: expected error 0x%04x, got %r" % (stmt, code, f)
        assert err[0] == code, "%r: expected 0x%04x, got 0x%04x %r" % (stmt, code, err[0], err[1])
        assert err[1], "error without a message"
        # The connection stays usable after a request error.
        ok = c.query("SELECT key FROM system.local")
        assert ok.opcode == rawcql.OP_RESULT, ok
    assert_healthy(server, session)


def test_invalid_cql_driver_exceptions(session, tables):
    from cassandra.protocol import SyntaxException
    with pytest.raises(SyntaxException):
        session.execute("SELEC * FROM %s.t" % tables)
    with pytest.raises(InvalidRequest) as ei:
        session.execute("SELECT * FROM %s.no_such_table" % tables)
    assert "no_such_table" in str(ei.value)
    with pytest.raises(InvalidRequest):
        session.prepare("SELECT * FROM %s.t WHERE nope = ?" % tables)
    ps = session.prepare("INSERT INTO %s.t (k, v) VALUES (?, ?)" % tables)
    with pytest.raises(Exception):
        session.execute(ps, ("not an int", "x"))      # driver-side type check
    session.execute(ps, (1, "fine"))


def test_markers_inside_collection_literals_are_refused(session, tables):
    # Cassandra 4.1 (Lists/Sets/Maps.Literal.prepare): no bind markers inside
    # a collection literal, however deep; a tuple or a whole collection may
    # be bound.  Refused as the statement is prepared.
    session.execute("CREATE TABLE IF NOT EXISTS %s.coll (k int PRIMARY KEY, l list<int>, m map<int, text>, "
                    "t tuple<int, text>)" % tables)
    for q, args, msg in (("INSERT INTO %s.coll (k, l) VALUES (?, [?, 2])", (1, 5),
                          "Invalid list literal for l: bind variables are not supported inside collection literals"),
                         ("UPDATE %s.coll SET m = {1: ?} WHERE k = ?", ("x", 1),
                          "Invalid map literal for m: bind variables are not supported inside collection literals")):
        with pytest.raises(InvalidRequest) as ei:
            session.prepare(q % tables)
        assert msg in str(ei.value)
    with pytest.raises(InvalidRequest) as ei:
        session.prepare("UPDATE %s.coll SET l = [?] WHERE k = 1" % tables)
    assert "Invalid list literal for l: bind variables are not supported inside collection literals" in str(ei.value)
    session.execute(session.prepare("UPDATE %s.coll SET t = (?, ?), l = ? WHERE k = ?" % tables), (1, "x", [1, 2], 1))
    row = session.execute("SELECT t, l FROM %s.coll WHERE k = 1" % tables).one()
    assert tuple(row.t) == (1, "x") and list(row.l) == [1, 2]


def test_bound_value_wrong_size(contact, server, session, tables):
    """A 3-byte value for an int marker is rejected with 0x2200."""
    with rawcql.connect(*contact) as c:
        pid = c.prepare("INSERT INTO %s.t (k, v) VALUES (?, ?)" % tables)
        f = c.execute(pid, [b"\x00\x00\x01", b"x"])
        assert f.error() and f.error()[0] == rawcql.ERR_INVALID, f
        f = c.execute(pid, [b"\x00\x00\x00\x01"])             # too few values
        assert f.error() and f.error()[0] == rawcql.ERR_INVALID, f
        f = c.execute(pid, [b"\x00\x00\x00\x01", b"\xff\xfe"])   # text not UTF-8
        assert f.error() and f.error()[0] == rawcql.ERR_INVALID, f
        f = c.execute(pid, [b"\x00\x00\x00\x01", b"ok"])
        assert f.opcode == rawcql.OP_RESULT, f
    assert_healthy(server, session)


def test_errors_keep_stream_ids(contact, tables):
    """Pipelined requests: each answer carries its request's stream id."""
    with rawcql.connect(*contact) as c:
        reqs = {}
        for s in range(1, 40):
            cql = "SELEC x" if s % 3 == 0 else "SELECT key FROM system.local"
            reqs[s] = cql
            c.send(rawcql.frame(rawcql.OP_QUERY, rawcql.query_body(cql), stream=s))
        seen = {}
        while len(seen) < len(reqs):
            f = c.recv()
            seen[f.stream] = f
        for s, cql in reqs.items():
            if cql.startswith("SELEC "):
                assert seen[s].error()[0] == rawcql.ERR_SYNTAX
            else:
                assert seen[s].opcode == rawcql.OP_RESULT


def valid_frames(ks):
    q = rawcql.query_body("SELECT k, v FROM %s.t WHERE k = 1" % ks)
    return [
        rawcql.frame(rawcql.OP_OPTIONS, stream=3),
        rawcql.frame(rawcql.OP_QUERY, q, stream=4),
        rawcql.frame(rawcql.OP_QUERY, rawcql.query_body("INSERT INTO %s.t (k, v) VALUES (?, ?)" % ks,
                                                        values=[b"\x00\x00\x00\x07", b"seven"],
                                                        page_size=10), stream=5),
        rawcql.frame(rawcql.OP_PREPARE, rawcql.long_string("SELECT * FROM %s.t WHERE k = ?" % ks), stream=6),
        rawcql.frame(rawcql.OP_REGISTER, rawcql.short(1) + rawcql.string("SCHEMA_CHANGE"), stream=7),
        rawcql.frame(rawcql.OP_BATCH, b"\x01" + rawcql.short(1) + b"\x00" +
                     rawcql.long_string("INSERT INTO %s.t (k, v) VALUES (9, 'b')" % ks) + rawcql.short(0) +
                     rawcql.short(1) + b"\x00", stream=8),
    ]


def mutate(rng, data):
    b = bytearray(data)
    op = rng.randrange(5)
    if op == 0 and b:                     # flip bits
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(b))
            b[i] ^= 1 << rng.randrange(8)
    elif op == 1 and b:                   # random byte values
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(len(b))] = rng.randrange(256)
    elif op == 2:                         # truncate, fixing the header length
        n = rng.randint(9, max(9, len(b)))
        b = b[:n]
        b[5:9] = (n - 9).to_bytes(4, "big")
    elif op == 3 and len(b) > 9:          # body length field off by a little
        n = int.from_bytes(b[5:9], "big") + rng.choice([-3, -1, 1, 2, 100])
        b[5:9] = (n & 0xFFFFFFFF).to_bytes(4, "big")
    else:                                 # insert junk in the body
        i = rng.randint(9, len(b))
        junk = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        b[i:i] = junk
        b[5:9] = (len(b) - 9).to_bytes(4, "big")
    return bytes(b)


def test_mutated_frames(contact, server, session, tables):
    """Seeded random mutations of valid requests, sent after STARTUP.  Any
    answer or a close is fine; a crash or a hang is not."""
    seed = int(os.environ.get("CASSETTE_FUZZ_SEED", "20261121"))
    n = int(os.environ.get("CASSETTE_FUZZ_N", "300"))
    rng = random.Random(seed)
    base = valid_frames(tables)
    c = None
    sent = 0
    try:
        for i in range(n):
            if c is None:
                c = rawcql.connect(*contact, timeout=5)
            data = mutate(rng, rng.choice(base))
            try:
                c.send(data)
                c.sock.settimeout(0.2)
                try:
                    while True:
                        c.recv()
                except socket.timeout:
                    pass
                c.sock.settimeout(5)
            except (rawcql.Closed, OSError):
                c.close()
                c = None
            sent += 1
            if i % 50 == 49:
                assert server.alive() if server.proc is not None else True, \
                    "server died (seed %d, case %d)\n%s" % (seed, i, server.log_tail())
    finally:
        if c is not None:
            c.close()
    assert sent == n
    assert_healthy(server, session)


def test_silent_and_slow_clients_do_not_block(contact, server, session):
    """A client that sends half a header, or one byte a second, must not
    stall the request loop for everyone else."""
    socks = []
    try:
        for _ in range(5):
            s = socket.create_connection(contact, timeout=5)
            s.sendall(rawcql.frame(rawcql.OP_OPTIONS, stream=1)[:4])
            socks.append(s)
        slow = socket.create_connection(contact, timeout=5)
        socks.append(slow)
        data = rawcql.frame(rawcql.OP_STARTUP, rawcql.STARTUP_BODY, stream=1)
        t0 = time.monotonic()
        for i, byte in enumerate(data[:12]):
            slow.sendall(bytes([byte]))
            assert session.execute("SELECT key FROM system.local").one().key == "local"
        assert time.monotonic() - t0 < 30
        slow.sendall(data[12:])
        with rawcql.Conn.__new__(rawcql.Conn) as c:
            c.sock, c.buf, c.stream = slow, b"", 1
            f = c.recv()
            assert f.opcode == rawcql.OP_READY
    finally:
        for s in socks:
            s.close()
    assert_healthy(server, session)


def test_client_disconnects_mid_request(contact, server, session, tables):
    """Clients that vanish with requests in flight (or half sent)."""
    for i in range(20):
        c = rawcql.connect(*contact)
        body = rawcql.query_body("SELECT * FROM %s.t" % tables)
        full = rawcql.frame(rawcql.OP_QUERY, body, stream=2)
        c.send(full * 5 + full[:i + 3])
        c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        c.close()     # RST
    assert_healthy(server, session)


def test_large_valid_value(session, tables):
    """A 4 MiB text value: a big frame that is still within limits."""
    big = "x" * (4 * 1024 * 1024)
    ps = session.prepare("INSERT INTO %s.t (k, v) VALUES (?, ?)" % tables)
    session.execute(ps, (424242, big))
    assert session.execute("SELECT v FROM %s.t WHERE k = 424242" % tables).one().v == big


def test_oversize_request_is_invalid_request(contact, session, tables):
    """A request over native_transport_max_frame_size (16 MiB) is refused
    with InvalidRequest "Request is too big", and the connection that sent
    it goes on serving (Cassandra skips the frame, as here)."""
    big = "x" * ((16 << 20) + 1)
    with pytest.raises(InvalidRequest) as ei:
        session.execute("INSERT INTO %s.t (k, v) VALUES (987654, %%s)" % tables, [big])
    # The driver compresses with lz4 when it can: then the decompressed body
    # is what is too big (Cassandra, which has no such limit, refuses the
    # mutation instead: also InvalidRequest, another message).
    if H.is_cassette():
        assert "Request is too big" in str(ei.value), ei.value
        assert "exceeds maximum allowed length 16777216" in str(ei.value), ei.value
    assert session.execute("SELECT count(*) FROM %s.t WHERE k = 987654" % tables).one()[0] == 0
    # The same socket: the error comes on the request's stream, then the
    # next request on the connection is answered.
    with rawcql.connect(*contact) as c:
        c.send(rawcql.frame(rawcql.OP_QUERY, rawcql.query_body(b"SELECT key FROM system.local"),
                            stream=7, length=(16 << 20) + 1))
        c.send(b"\0" * ((16 << 20) + 1 - len(rawcql.query_body(b"SELECT key FROM system.local"))))
        f = c.recv()
        err = f.error()
        assert err is not None and err[0] == 0x2200 and f.stream == 7, (f, err)
        ok = c.query("SELECT key FROM system.local")
        assert ok.opcode == rawcql.OP_RESULT, ok
