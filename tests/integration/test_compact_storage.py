"""COMPACT STORAGE tables, as Cassandra 4.1 creates them by default
(compact_tables_enabled: true): the three shapes of
CreateTableStatement.fixupCompactTable and what CQL sees of them.

- static (no clustering): the declared columns are static inside, with a
  hidden text clustering `column1` and a hidden blob `value`; flags {}.
- dense (clustering, at most one other column): flags {dense}, and
  {compound, dense} with two or more clustering columns; with no other
  column a hidden `value` of type empty.
- rows carry no row marker: a row lives while its cell does.
"""

import pytest
from cassandra import InvalidRequest
from cassandra.query import SimpleStatement

import cassette_harness as H


def invalid(s, q, msg):
    with pytest.raises(InvalidRequest) as ei:
        s.execute(q)
    assert msg in str(ei.value), str(ei.value)


@pytest.fixture(scope="module")
def cks(session, ks):
    s = session
    s.execute("CREATE TABLE %s.st (k int PRIMARY KEY, a int, b text) WITH COMPACT STORAGE" % ks)
    s.execute("CREATE TABLE %s.dv (k int, c int, v text, PRIMARY KEY (k, c)) WITH COMPACT STORAGE" % ks)
    s.execute("CREATE TABLE %s.de (k int, c text, PRIMARY KEY (k, c)) WITH COMPACT STORAGE" % ks)
    s.execute("CREATE TABLE %s.dc (k int, c1 int, c2 int, v int, PRIMARY KEY (k, c1, c2)) "
              "WITH COMPACT STORAGE AND CLUSTERING ORDER BY (c1 DESC, c2 ASC)" % ks)
    s.execute("CREATE TABLE %s.cn (k int PRIMARY KEY, n counter) WITH COMPACT STORAGE" % ks)
    return ks


def test_create_validation(session, ks):
    s = session
    invalid(s, "CREATE TABLE %s.b1 (k int, c int, v text, w text, PRIMARY KEY (k, c)) WITH COMPACT STORAGE" % ks,
            "COMPACT STORAGE with composite PRIMARY KEY allows no more than one column not part of the "
            "PRIMARY KEY (got: v, w)")
    invalid(s, "CREATE TABLE %s.b2 (k int PRIMARY KEY) WITH COMPACT STORAGE" % ks,
            "No definition found that is not part of the PRIMARY KEY")
    invalid(s, "CREATE TABLE %s.b3 (k int, c int, s int static, v int, PRIMARY KEY (k, c)) WITH COMPACT STORAGE" % ks,
            "Static columns are not supported in COMPACT STORAGE tables")
    invalid(s, "CREATE TABLE %s.b4 (k int PRIMARY KEY, l list<int>) WITH COMPACT STORAGE" % ks,
            "Non-frozen collections and UDTs are not supported with COMPACT STORAGE")
    invalid(s, "CREATE TABLE %s.b5 (k int PRIMARY KEY, a int, n counter) WITH COMPACT STORAGE" % ks,
            "Cannot mix counter and non counter columns in the same table")
    s.execute("CREATE TABLE %s.ok1 (k int PRIMARY KEY, l frozen<list<int>>) WITH COMPACT STORAGE" % ks)


def test_system_schema_flags_and_hidden_columns(session, cks):
    s = session
    flags = {r.table_name: set(r.flags or ()) for r in s.execute(
        "SELECT table_name, flags FROM system_schema.tables WHERE keyspace_name = %s", (cks,))}
    assert flags["st"] == set() and flags["dv"] == {"dense"} and flags["de"] == {"dense"}
    assert flags["dc"] == {"compound", "dense"} and flags["cn"] == {"counter"}
    cols = {(r.table_name, r.column_name): (r.kind, r.type, r.position) for r in s.execute(
        "SELECT table_name, column_name, kind, type, position FROM system_schema.columns "
        "WHERE keyspace_name = %s", (cks,))}
    assert cols[("st", "a")] == ("static", "int", -1) and cols[("st", "b")] == ("static", "text", -1)
    assert cols[("st", "column1")] == ("clustering", "text", 0)
    assert cols[("st", "value")] == ("regular", "blob", -1)
    assert cols[("de", "value")] == ("regular", "empty", -1)
    assert cols[("dv", "v")] == ("regular", "text", -1) and ("dv", "value") not in cols
    assert cols[("cn", "value")] == ("regular", "counter", -1)


def test_driver_metadata(cluster, cks):
    cluster.refresh_schema_metadata()
    t = cluster.metadata.keyspaces[cks].tables
    assert all(t[n].is_compact_storage for n in ("st", "dv", "de", "dc", "cn"))
    assert list(t["st"].columns) == ["k", "a", "b"] and t["st"].clustering_key == []
    assert list(t["de"].columns) == ["k", "c"]
    assert [c.name for c in t["dc"].clustering_key] == ["c1", "c2"]


def test_static_compact_rows(session, cks):
    s = session
    s.execute("INSERT INTO %s.st (k, a, b) VALUES (1, 10, 'x')" % cks)
    s.execute("UPDATE %s.st SET a = 30 WHERE k = 3" % cks)
    s.execute("""INSERT INTO %s.st JSON '{"k": 4, "b": "json"}'""" % cks)
    assert sorted(tuple(r) for r in s.execute("SELECT * FROM %s.st" % cks)) == \
        [(1, 10, "x"), (3, 30, None), (4, None, "json")]
    assert s.execute("SELECT JSON * FROM %s.st WHERE k = 4" % cks).one()[0] == '{"k": 4, "a": null, "b": "json"}'
    # the hidden columns are not CQL's
    invalid(s, "SELECT column1 FROM %s.st" % cks, "Undefined column name column1")
    invalid(s, "SELECT value FROM %s.st" % cks, "Undefined column name value")
    invalid(s, "INSERT INTO %s.st (k) VALUES (2)" % cks, "Some clustering keys are missing: column1")
    # no row marker: the row goes with its last cell
    s.execute("DELETE a FROM %s.st WHERE k = 3" % cks)
    assert s.execute("SELECT * FROM %s.st WHERE k = 3" % cks).one() is None
    assert s.execute("SELECT count(*) FROM %s.st" % cks).one()[0] == 2
    assert [r.k for r in s.execute("SELECT k FROM %s.st WHERE a > 5 ALLOW FILTERING" % cks)] == [1]
    for i in range(20):
        s.execute("INSERT INTO %s.st (k, a) VALUES (%d, %d)" % (cks, 100 + i, i))
    paged = list(s.execute(SimpleStatement("SELECT k FROM %s.st" % cks, fetch_size=3)))
    assert len(paged) == 22 and len({r.k for r in paged}) == 22
    assert sorted(r.k for r in s.execute("SELECT DISTINCT k FROM %s.st" % cks))[:2] == [1, 4]
    r = s.execute("INSERT INTO %s.st (k, a) VALUES (1, 99) IF NOT EXISTS" % cks).one()
    assert not r.applied and r._fields == ("applied", "k", "a", "b") and r.a == 10
    s.execute("UPDATE %s.cn SET n = n + 3 WHERE k = 1" % cks)
    s.execute("UPDATE %s.cn SET n = n - 1 WHERE k = 1" % cks)
    assert tuple(s.execute("SELECT * FROM %s.cn" % cks).one()) == (1, 2)


def test_dense_compact_rows(session, cks):
    s = session
    s.execute("INSERT INTO %s.dv (k, c, v) VALUES (1, 1, 'a')" % cks)
    s.execute("INSERT INTO %s.dv (k, c, v) VALUES (1, 2, 'b')" % cks)
    invalid(s, "INSERT INTO %s.dv (k, c) VALUES (1, 3)" % cks, "Column v is mandatory for this COMPACT STORAGE table")
    s.execute("UPDATE %s.dv SET v = null WHERE k = 1 AND c = 1" % cks)     # no row marker to keep it
    assert [tuple(r) for r in s.execute("SELECT * FROM %s.dv WHERE k = 1" % cks)] == [(1, 2, "b")]
    # the hidden empty value: the key alone makes the row
    s.execute("INSERT INTO %s.de (k, c) VALUES (1, 'x')" % cks)
    s.execute("""INSERT INTO %s.de JSON '{"k": 1, "c": "y"}'""" % cks)
    ins = s.prepare("INSERT INTO %s.de (k, c) VALUES (?, ?)" % cks)
    s.execute(ins, (1, "z"))
    assert [r.c for r in s.execute("SELECT * FROM %s.de WHERE k = 1" % cks)] == ["x", "y", "z"]
    assert list(s.execute("SELECT * FROM %s.de WHERE k = 1" % cks).one()._fields) == ["k", "c"]
    invalid(s, "INSERT INTO %s.de (k, c) VALUES (1, '')" % cks, "Invalid empty or null value for column c")
    with pytest.raises(InvalidRequest, match="Invalid empty or null value for column c"):
        s.execute(ins, (1, ""))
    invalid(s, "SELECT value FROM %s.de" % cks, "Undefined column name value")
    s.execute("DELETE FROM %s.de WHERE k = 1 AND c = 'y'" % cks)
    assert [r.c for r in s.execute("SELECT c FROM %s.de WHERE k = 1" % cks)] == ["x", "z"]
    # compound dense, in its clustering order; LWT and TTL
    for c1 in range(3):
        for c2 in range(2):
            s.execute("INSERT INTO %s.dc (k, c1, c2, v) VALUES (1, %d, %d, %d)" % (cks, c1, c2, c1 * 10 + c2))
    assert [(r.c1, r.c2) for r in s.execute("SELECT * FROM %s.dc WHERE k = 1 AND c1 >= 1" % cks)] == \
        [(2, 0), (2, 1), (1, 0), (1, 1)]
    s.execute("INSERT INTO %s.de (k, c) VALUES (2, 'a') IF NOT EXISTS" % cks)
    r = s.execute("INSERT INTO %s.de (k, c) VALUES (2, 'a') IF NOT EXISTS" % cks).one()
    assert not r.applied and r._fields == ("applied", "k", "c")         # no hidden value
    r = s.execute("INSERT INTO %s.dv (k, c, v) VALUES (2, 1, 'x') IF NOT EXISTS" % cks).one()
    assert r.applied
    r = s.execute("INSERT INTO %s.dv (k, c, v) VALUES (2, 1, 'y') IF NOT EXISTS" % cks).one()
    assert not r.applied and r.v == "x"
    s.execute("INSERT INTO %s.dv (k, c, v) VALUES (3, 1, 'x') USING TTL 100" % cks)
    assert 0 < s.execute("SELECT ttl(v) FROM %s.dv WHERE k = 3 AND c = 1" % cks).one()[0] <= 100


def test_describe_and_refusals(session, cks):
    s = session
    st = s.execute("DESCRIBE TABLE %s.st" % cks).one().create_statement
    assert st.startswith("/*\nWarning: Table %s.st omitted because it has constructs not compatible with CQL "
                         "(was created via legacy API).\nApproximate structure, for reference:\n"
                         "(this should not be used to reproduce this schema)\n\nCREATE TABLE %s.st (\n"
                         "    k int,\n    a int,\n    b text,\n    PRIMARY KEY (k)\n) WITH COMPACT STORAGE\n"
                         "    AND CLUSTERING ORDER BY (column1 ASC)\n    AND additional_write_policy" % (cks, cks)), st
    assert st.endswith(";\n*/")
    de = s.execute("DESCRIBE TABLE %s.de" % cks).one().create_statement
    assert "CREATE TABLE %s.de (\n    k int,\n    c text,\n    PRIMARY KEY (k, c)\n) WITH COMPACT STORAGE\n" \
           "    AND CLUSTERING ORDER BY (c ASC)\n" % cks in de
    dc = s.execute("DESCRIBE TABLE %s.dc" % cks).one().create_statement
    assert "PRIMARY KEY (k, c1, c2)\n) WITH COMPACT STORAGE\n    AND CLUSTERING ORDER BY (c1 DESC, c2 ASC)" in dc
    invalid(s, "ALTER TABLE %s.st ADD z int" % cks, "Cannot add new column to a COMPACT STORAGE table")
    invalid(s, "ALTER TABLE %s.dv DROP COMPACT STORAGE" % cks, "DROP COMPACT STORAGE is disabled. Enable in cassandra.yaml to use.")
    invalid(s, "CREATE INDEX ON %s.dv (v)" % cks,
            "Secondary indexes are not supported on compact value column of COMPACT STORAGE tables")
    invalid(s, "CREATE INDEX ON %s.dv (c)" % cks,
            "Secondary indexes are not supported on PRIMARY KEY columns in COMPACT STORAGE tables")
    s.execute("CREATE INDEX st_a ON %s.st (a)" % cks)
    H.wait_for(lambda: sorted(r.k for r in s.execute("SELECT k FROM %s.st WHERE a = 10" % cks)) == [1, 110],
               timeout=30, what="index on a static compact column")


def test_compact_tables_survive_restart(fresh_server):
    if not H.is_cassette():
        pytest.skip("restarts the server")
    c, s = H.connect(fresh_server.host, fresh_server.port)
    try:
        s.execute("CREATE KEYSPACE kc WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE kc.st (k int PRIMARY KEY, a int) WITH COMPACT STORAGE")
        s.execute("CREATE TABLE kc.de (k int, c int, PRIMARY KEY (k, c)) WITH COMPACT STORAGE")
        s.execute("CREATE TABLE kc.dc (k int, c1 int, c2 int, v int, PRIMARY KEY (k, c1, c2)) WITH COMPACT STORAGE")
        s.execute("INSERT INTO kc.st (k, a) VALUES (1, 1)")
        s.execute("INSERT INTO kc.de (k, c) VALUES (1, 1)")
        s.execute("INSERT INTO kc.dc (k, c1, c2, v) VALUES (1, 1, 1, 1)")
        before = [s.execute("DESCRIBE TABLE kc.%s" % t).one().create_statement for t in ("st", "de", "dc")]
    finally:
        c.shutdown()
    fresh_server.restart()
    c, s = H.connect(fresh_server.host, fresh_server.port)
    try:
        assert [s.execute("DESCRIBE TABLE kc.%s" % t).one().create_statement for t in ("st", "de", "dc")] == before
        assert tuple(s.execute("SELECT * FROM kc.st").one()) == (1, 1)
        assert tuple(s.execute("SELECT * FROM kc.de").one()) == (1, 1)
        s.execute("UPDATE kc.dc SET v = null WHERE k = 1 AND c1 = 1 AND c2 = 1")
        assert s.execute("SELECT * FROM kc.dc").one() is None          # still no row marker
        invalid(s, "SELECT column1 FROM kc.st", "Undefined column name column1")
    finally:
        c.shutdown()
