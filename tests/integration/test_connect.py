"""Connecting with default driver settings: protocol negotiation, the
handshake, system.local, and the driver's view of the node.

As with Apache Cassandra 4.1, the Python driver 3.25 steps down
0x42 -> 0x41 -> 5 and settles on v5 (test_protocol_v5.py has the v5
framing); the Node.js driver settles on v4.
"""

import uuid

import pytest
from cassandra.cluster import Cluster
from cassandra.metadata import Murmur3Token

import cassette_harness as H


def test_default_settings_negotiate_v5(contact):
    # No protocol_version: the driver starts at 0x42 and steps down.
    c = Cluster([contact[0]], port=contact[1], connect_timeout=10)
    try:
        s = c.connect()
        row = s.execute("SELECT release_version FROM system.local WHERE key='local'").one()
        assert row.release_version.startswith("4")
        assert c.protocol_version == 5
    finally:
        c.shutdown()


def test_explicit_v4(contact):
    c = Cluster([contact[0]], port=contact[1], protocol_version=4, connect_timeout=10)
    try:
        s = c.connect()
        assert s.execute("SELECT key FROM system.local").one().key == "local"
    finally:
        c.shutdown()


def test_without_compression(contact):
    c = Cluster([contact[0]], port=contact[1], compression=False, connect_timeout=10)
    try:
        s = c.connect()
        assert s.execute("SELECT key FROM system.local").one().key == "local"
    finally:
        c.shutdown()


@pytest.mark.parametrize("compression,version", [("lz4", 4), ("snappy", 4), ("snappy", 3)])
def test_body_compression(contact, compression, version):
    """lz4 and snappy bodies (the SUPPORTED list offers both, as Cassandra
    4.1 with its native snappy): the driver uses what it asked for, both
    ways, on requests and results large enough to compress."""
    import cassandra.connection as conn_mod
    if compression not in conn_mod.locally_supported_compressions:
        pytest.skip("the Python driver here has no %s (python3-%s)" % (compression, compression))
    c = Cluster([contact[0]], port=contact[1], protocol_version=version, compression=compression,
                connect_timeout=10)
    try:
        s = c.connect()
        host = list(c.metadata.all_hosts())[0]
        conn = s._pools[host]._connection
        assert conn.compressor is conn_mod.locally_supported_compressions[compression][0]
        ks = "ks_compression_%s_%d" % (compression, version)
        s.execute("CREATE KEYSPACE IF NOT EXISTS %s WITH replication = "
                  "{'class': 'SimpleStrategy', 'replication_factor': 1}" % ks)
        s.execute("CREATE TABLE IF NOT EXISTS %s.t (k int PRIMARY KEY, v text)" % ks)
        big = "".join(chr(ord("a") + (i * 7) % 26) for i in range(200000))
        ins = s.prepare("INSERT INTO %s.t (k, v) VALUES (?, ?)" % ks)
        for k in range(20):
            s.execute(ins, (k, big[k:]))
        got = {r.k: r.v for r in s.execute("SELECT k, v FROM %s.t" % ks)}
        assert got == {k: big[k:] for k in range(20)}
        s.execute("DROP KEYSPACE %s" % ks)
    finally:
        c.shutdown()


def test_system_local_columns(session):
    row = session.execute("SELECT * FROM system.local WHERE key='local'").one()
    assert row.key == "local"
    assert row.cluster_name
    assert row.data_center == "datacenter1"
    assert row.rack == "rack1"
    assert row.partitioner == "org.apache.cassandra.dht.Murmur3Partitioner"
    assert isinstance(row.host_id, uuid.UUID)
    assert isinstance(row.schema_version, uuid.UUID)
    # Cassandra 4.1's values: its release, CQL 3.4.6, and the newest
    # protocol version it speaks (ProtocolVersion.CURRENT, v5), whatever
    # the connection negotiated
    assert row.release_version == "4.1.8"
    assert row.cql_version == "3.4.6"
    assert row.native_protocol_version == "5"
    assert row.bootstrapped == "COMPLETED"
    assert row.listen_port == 7000 and row.broadcast_port == 7000
    assert row.tokens
    for t in row.tokens:
        assert -2**63 <= int(t) < 2**63


def test_peers_empty(session):
    assert list(session.execute("SELECT * FROM system.peers")) == []
    assert list(session.execute("SELECT * FROM system.peers_v2")) == []


def test_driver_sees_one_host_and_token_ring(cluster):
    hosts = cluster.metadata.all_hosts()
    assert len(hosts) == 1
    h = hosts[0]
    assert h.datacenter == "datacenter1"
    assert h.rack == "rack1"
    assert h.is_up
    assert cluster.metadata.partitioner == "org.apache.cassandra.dht.Murmur3Partitioner"
    tm = cluster.metadata.token_map
    assert tm is not None and len(tm.ring) >= 1


def test_cluster_name(cluster, session):
    row = session.execute("SELECT cluster_name FROM system.local").one()
    assert cluster.metadata.cluster_name == row.cluster_name


def test_system_keyspaces_in_metadata(cluster):
    ks = cluster.metadata.keyspaces
    for name in ("system", "system_schema"):
        assert name in ks, sorted(ks)
    assert "local" in ks["system"].tables
    assert "tables" in ks["system_schema"].tables
    assert "columns" in ks["system_schema"].tables


def test_use_keyspace(contact, session, ks):
    c, s = H.connect(*contact)
    try:
        s.set_keyspace(ks)
        s.execute("CREATE TABLE IF NOT EXISTS use_t (k int PRIMARY KEY, v int)")
        s.execute("INSERT INTO use_t (k, v) VALUES (1, 2)")
        assert s.execute("SELECT v FROM use_t WHERE k = 1").one().v == 2
        s.execute('USE "%s"' % ks)
        assert s.execute("SELECT v FROM use_t WHERE k = 1").one().v == 2
    finally:
        c.shutdown()


def test_token_function_matches_murmur3(session, ks):
    # Partition tokens must be Cassandra's Murmur3 so token-aware routing works.
    session.execute("CREATE TABLE %s.tok (k int PRIMARY KEY)" % ks)
    for k in (1, 2, -1, 123456789):
        session.execute("INSERT INTO %s.tok (k) VALUES (%d)" % (ks, k))
    rows = session.execute("SELECT k, token(k) AS t FROM %s.tok" % ks)
    got = {r.k: r.t for r in rows}
    assert len(got) == 4
    for k, t in got.items():
        assert t == Murmur3Token.hash_fn(k.to_bytes(4, "big", signed=True)), k
    assert got[1] == -4069959284402364209
    # Full scans come back in token order.
    toks = [r.t for r in session.execute("SELECT token(k) AS t FROM %s.tok" % ks)]
    assert toks == sorted(toks)


def test_many_connections(contact):
    import rawcql
    conns = [rawcql.connect(*contact) for _ in range(50)]
    try:
        for c in conns:
            f = c.query("SELECT key FROM system.local")
            assert f.opcode == rawcql.OP_RESULT, f
    finally:
        for c in conns:
            c.close()


@pytest.mark.parametrize("version", [0x42, 0x41])
def test_unsupported_version_message(contact, version):
    """The drivers step down only on this exact error (clients.md section 1)."""
    import rawcql
    with rawcql.Conn(*contact) as c:
        c.send(rawcql.frame(rawcql.OP_OPTIONS, stream=7, version=version))
        f = c.recv()
        code, msg = f.error()
        assert code == rawcql.ERR_PROTOCOL
        assert f.stream == 7
        assert "Invalid or unsupported protocol version (%d)" % version in msg


def test_options_supported(contact):
    import rawcql
    import struct
    with rawcql.Conn(*contact) as c:
        f = c.request(rawcql.OP_OPTIONS)
        assert f.opcode == rawcql.OP_SUPPORTED
        body = f.body
        n = struct.unpack_from(">H", body, 0)[0]
        off, opts = 2, {}
        for _ in range(n):
            kl = struct.unpack_from(">H", body, off)[0]
            k = body[off + 2:off + 2 + kl].decode()
            off += 2 + kl
            m = struct.unpack_from(">H", body, off)[0]
            off += 2
            vals = []
            for _ in range(m):
                vl = struct.unpack_from(">H", body, off)[0]
                vals.append(body[off + 2:off + 2 + vl].decode())
                off += 2 + vl
            opts[k] = vals
        assert "CQL_VERSION" in opts and opts["CQL_VERSION"]
        assert "COMPRESSION" in opts


def test_lz4_negotiated_by_default(contact):
    """python3-lz4 is installed and the server offers lz4, so the driver
    compresses; a large result still decodes."""
    c = Cluster([contact[0]], port=contact[1], connect_timeout=10)
    try:
        s = c.connect()
        conn = c.control_connection._connection
        assert conn.compressor is not None and conn.decompressor is not None
        rows = list(s.execute("SELECT * FROM system_schema.columns"))
        assert len(rows) > 50
    finally:
        c.shutdown()


def test_virtual_tables(session):
    """system_views (Cassandra 4.x virtual tables): our own connections are
    listed with the driver's name; settings are readable."""
    rows = list(session.execute("SELECT * FROM system_views.clients"))
    assert rows, "no clients listed"
    assert any((r.driver_name or "").startswith("DataStax Python Driver") for r in rows), \
        [(r.address, r.driver_name) for r in rows]
    assert all(r.protocol_version in (4, 5) for r in rows)
    settings = {r.name: r.value for r in session.execute("SELECT name, value FROM system_views.settings")}
    assert settings, "no settings"
    ks = {r.keyspace_name for r in session.execute("SELECT keyspace_name FROM system_virtual_schema.keyspaces")}
    assert "system_views" in ks and "system_virtual_schema" in ks


def test_protocol_v3(contact, ks):
    """Older drivers pin protocol v3: queries, prepared statements, paging."""
    from cassandra.query import SimpleStatement
    c = Cluster([contact[0]], port=contact[1], protocol_version=3, connect_timeout=10)
    try:
        s = c.connect()
        assert c.protocol_version == 3
        s.execute("CREATE TABLE IF NOT EXISTS %s.v3t (k int, c int, v text, PRIMARY KEY (k, c))" % ks)
        ins = s.prepare("INSERT INTO %s.v3t (k, c, v) VALUES (?, ?, ?)" % ks)
        for i in range(30):
            s.execute(ins, (1, i, "x%d" % i))
        rows = list(s.execute(SimpleStatement("SELECT c, v FROM %s.v3t WHERE k = 1" % ks, fetch_size=7)))
        assert [r.c for r in rows] == list(range(30))
    finally:
        c.shutdown()
