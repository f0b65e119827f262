"""Protocol v5 (native_protocol_v5.spec): the Python driver 3.25 and cqlsh
take it whenever the server offers it, as with Cassandra 4.1.  After the
STARTUP exchange both directions are CRC-protected segments (section 2),
lz4-compressed per segment when STARTUP asked for it; v5 message fields
(QUERY/EXECUTE [int] flags, result_metadata_id, METADATA_CHANGED).

The driver runs pinned at v5, with and without lz4, through what a test
suite does; a raw client then checks what a corrupt segment gets.
"""

import struct
import zlib

import pytest
from cassandra import InvalidRequest
from cassandra.cluster import Cluster
from cassandra.query import BatchStatement, SimpleStatement

import rawcql


@pytest.fixture(params=["lz4", False], ids=["lz4", "uncompressed"])
def v5(request, contact):
    c = Cluster([contact[0]], port=contact[1], protocol_version=5, compression=request.param,
                connect_timeout=10)
    s = c.connect()
    yield c, s, request.param
    c.shutdown()


def test_driver_settles_on_v5_by_default(contact):
    c = Cluster([contact[0]], port=contact[1], connect_timeout=10)
    try:
        s = c.connect()
        assert c.protocol_version == 5
        conn = c.control_connection._connection
        assert conn._is_checksumming_enabled
        rows = list(s.execute("SELECT protocol_version FROM system_views.clients"))
        assert 5 in {r.protocol_version for r in rows}
    finally:
        c.shutdown()


def test_v5_session_end_to_end(v5, ks):
    c, s, comp = v5
    conn = c.control_connection._connection
    assert conn._is_checksumming_enabled
    assert (conn.compressor is not None) == (comp == "lz4")
    t = "%s.v5_%s" % (ks, comp or "plain")
    s.execute("CREATE TABLE %s (k int, c int, v text, b blob, PRIMARY KEY (k, c))" % t)
    # the driver saw the schema change event (framed) and refreshed
    assert c.metadata.keyspaces[ks].tables["v5_%s" % (comp or "plain")]
    ins = s.prepare("INSERT INTO %s (k, c, v) VALUES (?, ?, ?)" % t)
    for i in range(300):
        s.execute(ins, (1, i, "row %d" % i))
    # paging across segments: 300 rows, 7 per page
    st = SimpleStatement("SELECT c, v FROM %s WHERE k = 1" % t, fetch_size=7)
    got = [(r.c, r.v) for r in s.execute(st)]
    assert got == [(i, "row %d" % i) for i in range(300)]
    # values over one segment payload (128 KiB - 1): several segments each way
    big = bytes(range(256)) * 2000                      # 512,000 bytes, poorly compressible
    text = "cassette " * 40000                          # 360,000 bytes, compressible
    s.execute("INSERT INTO %s (k, c, b, v) VALUES (2, 0, %%s, %%s)" % t, (big, text))
    row = s.execute("SELECT b, v FROM %s WHERE k = 2 AND c = 0" % t).one()
    assert row.b == big and row.v == text
    # a batch, and many requests in flight on one connection
    b = BatchStatement()
    for i in range(20):
        b.add(ins, (3, i, "b%d" % i))
    s.execute(b)
    futs = [s.execute_async("SELECT v FROM %s WHERE k = 3 AND c = %d" % (t, i)) for i in range(20)]
    assert [f.result().one().v for f in futs] == ["b%d" % i for i in range(20)]
    # an error keeps the connection
    with pytest.raises(InvalidRequest):
        s.execute("SELECT * FROM %s WHERE v = 'x'" % t)
    assert s.execute("SELECT count(*) FROM %s WHERE k = 3" % t).one()[0] == 20


def test_v5_prepared_select_sees_a_new_column(v5, ks):
    """v5 EXECUTE carries the result_metadata_id; after ALTER TABLE the
    ROWS result says METADATA_CHANGED with the new id and columns."""
    c, s, comp = v5
    t = "%s.meta_%s" % (ks, comp or "plain")
    s.execute("CREATE TABLE %s (k int PRIMARY KEY, a int)" % t)
    s.execute("INSERT INTO %s (k, a) VALUES (1, 10)" % t)
    sel = s.prepare("SELECT * FROM %s WHERE k = ?" % t)
    first_id = sel.result_metadata_id
    assert first_id
    assert list(s.execute(sel, (1,)).one()._fields) == ["k", "a"]
    s.execute("ALTER TABLE %s ADD z text" % t)
    s.execute("UPDATE %s SET z = 'new' WHERE k = 1" % t)
    row = s.execute(sel, (1,)).one()
    assert list(row._fields) == ["k", "a", "z"] and row.z == "new"
    assert sel.result_metadata_id != first_id


# -- a raw v5 client: segments built as Cassandra's FrameEncoderCrc does ---

def crc24(v, n):
    crc = 0x875060
    for _ in range(n):
        crc ^= (v & 0xFF) << 16
        v >>= 8
        for _ in range(8):
            crc <<= 1
            if crc & 0x1000000:
                crc ^= 0x1974F0B
    return crc & 0xFFFFFF


def segment(payload, self_contained=True):
    h = len(payload) | (1 << 17 if self_contained else 0)
    crc = zlib.crc32(payload, zlib.crc32(b"\xfa\x2d\x55\xca"))
    return (h.to_bytes(3, "little") + crc24(h, 3).to_bytes(3, "little") + payload +
            crc.to_bytes(4, "little"))


def v5_startup(contact):
    c = rawcql.Conn(*contact)
    body = rawcql.string_map({"CQL_VERSION": "3.4.6"})
    f = c.request(rawcql.OP_STARTUP, body, version=5)
    assert f.opcode == rawcql.OP_READY and f.version == 5, f
    return c


def take(c, n):
    c._fill(n)
    b, c.buf = c.buf[:n], c.buf[n:]
    return b


def read_segment(c):
    hdr = take(c, 6)
    h = int.from_bytes(hdr[:3], "little")
    assert int.from_bytes(hdr[3:6], "little") == crc24(h, 3)
    n = h & 0x1FFFF
    rest = take(c, n + 4)
    payload, crc = rest[:n], int.from_bytes(rest[n:], "little")
    assert crc == zlib.crc32(payload, zlib.crc32(b"\xfa\x2d\x55\xca"))
    return payload, bool(h & (1 << 17))


def v5_query_body(cql):
    # v5 QUERY: <query><consistency><flags [int]>
    return rawcql.long_string(cql) + rawcql.short(rawcql.CL_ONE) + struct.pack(">I", 0)


def envelope_reply(payload):
    ver, flags, stream, op, n = struct.unpack_from(">BBhBI", payload, 0)
    return rawcql.Frame(ver & 0x7F, flags, stream, op, payload[9:9 + n])


def test_raw_v5_query_and_corrupt_crc(contact):
    c = v5_startup(contact)
    try:
        c.send(segment(rawcql.frame(rawcql.OP_QUERY, v5_query_body(
            "SELECT key FROM system.local"), stream=3, version=5)))
        payload, sc = read_segment(c)
        f = envelope_reply(payload)
        assert sc and f.stream == 3 and f.opcode == rawcql.OP_RESULT, f
        bad = bytearray(segment(rawcql.frame(rawcql.OP_QUERY, v5_query_body("SELECT 1"),
                                              stream=4, version=5)))
        bad[-1] ^= 0xFF                                  # the payload's CRC32
        c.send(bytes(bad))
        payload, sc = read_segment(c)
        f = envelope_reply(payload)
        code, msg = f.error()
        assert f.stream == 0 and code == rawcql.ERR_PROTOCOL
        assert "invalid, unrecoverable CRC mismatch detected in frame body" in msg, msg
        assert c.closed_within(2.0)
    finally:
        c.close()
    # the server is fine
    c = v5_startup(contact)
    try:
        c.send(segment(rawcql.frame(rawcql.OP_QUERY, v5_query_body(
            "SELECT key FROM system.local"), stream=5, version=5)))
        f = envelope_reply(read_segment(c)[0])
        assert f.opcode == rawcql.OP_RESULT
    finally:
        c.close()


def test_raw_v5_corrupt_header_closes(contact):
    c = v5_startup(contact)
    try:
        seg = bytearray(segment(rawcql.frame(rawcql.OP_OPTIONS, b"", stream=2, version=5)))
        seg[4] ^= 0x01                                   # the header's CRC24
        c.send(bytes(seg))
        f = envelope_reply(read_segment(c)[0])
        code, msg = f.error()
        assert code == rawcql.ERR_PROTOCOL and f.stream == 0
        assert "invalid, unrecoverable CRC mismatch detected in frame header" in msg, msg
        assert c.closed_within(2.0)
    finally:
        c.close()


def test_v6_without_beta_flag(contact):
    with rawcql.Conn(*contact) as c:
        c.send(rawcql.frame(rawcql.OP_OPTIONS, stream=7, version=6))
        f = c.recv()
        code, msg = f.error()
        assert code == rawcql.ERR_PROTOCOL and f.stream == 7
        assert msg == "Beta version of the protocol used (6/v6-beta), but USE_BETA flag is unset"
