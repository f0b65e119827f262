"""Materialized views through the Python driver (issue 5; owner: index).

Written to pass on Apache Cassandra 4.1 with materialized_views_enabled
(cassette enables views by default); cassette-only parts are guarded.
"""

import re
import time

import pytest
from cassandra import InvalidRequest

import cassette_harness as H
from conftest import cassette_only
from test_indexes import flush


def rows(session, q, *args):
    return sorted(tuple(r) for r in session.execute(q, args or None))


@pytest.fixture
def base(session, ks, request):
    name = re.sub(r"[^a-z0-9_]", "_", request.node.name.lower())[:30]
    session.execute("DROP MATERIALIZED VIEW IF EXISTS %s.%s_mv" % (ks, name))
    session.execute("DROP TABLE IF EXISTS %s.%s" % (ks, name))
    session.execute("CREATE TABLE %s.%s (k int, c int, v int, w text, s int static, "
                    "PRIMARY KEY (k, c))" % (ks, name))
    return ks, name


def mv(session, ks, name, key="(v, k, c)", cols="*"):
    session.execute("CREATE MATERIALIZED VIEW %s.%s_mv AS SELECT %s FROM %s.%s "
                    "WHERE v IS NOT NULL AND k IS NOT NULL AND c IS NOT NULL "
                    "PRIMARY KEY %s" % (ks, name, cols, ks, name, key))
    return "%s.%s_mv" % (ks, name)


def test_rules(session, base):
    ks, t = base
    with pytest.raises(InvalidRequest, match="without primary key columns"):
        session.execute("CREATE MATERIALIZED VIEW %s.bad AS SELECT * FROM %s.%s WHERE v IS NOT NULL "
                        "AND k IS NOT NULL PRIMARY KEY (v, k)" % (ks, ks, t))
    with pytest.raises(InvalidRequest, match="more than one non-primary key column"):
        session.execute("CREATE MATERIALIZED VIEW %s.bad AS SELECT * FROM %s.%s WHERE v IS NOT NULL "
                        "AND k IS NOT NULL AND c IS NOT NULL AND w IS NOT NULL "
                        "PRIMARY KEY ((v, w), k, c)" % (ks, ks, t))
    with pytest.raises(InvalidRequest, match="must be restricted with 'IS NOT NULL'"):
        session.execute("CREATE MATERIALIZED VIEW %s.bad AS SELECT * FROM %s.%s WHERE k IS NOT NULL "
                        "AND c IS NOT NULL PRIMARY KEY (v, k, c)" % (ks, ks, t))
    with pytest.raises(InvalidRequest, match="static column"):
        session.execute("CREATE MATERIALIZED VIEW %s.bad AS SELECT k, c, s FROM %s.%s WHERE v IS NOT NULL "
                        "AND k IS NOT NULL AND c IS NOT NULL PRIMARY KEY (v, k, c)" % (ks, ks, t))
    v = mv(session, ks, t)
    with pytest.raises(InvalidRequest, match="Cannot directly modify a materialized view"):
        session.execute("INSERT INTO %s (v, k, c) VALUES (1, 1, 1)" % v)
    r = session.execute("SELECT base_table_name, include_all_columns FROM system_schema.views "
                        "WHERE keyspace_name = %s AND view_name = %s", (ks, t + "_mv")).one()
    assert r.base_table_name == t and r.include_all_columns
    cols = {c.column_name: c.kind for c in session.execute(
        "SELECT column_name, kind FROM system_schema.columns WHERE keyspace_name = %s "
        "AND table_name = %s", (ks, t + "_mv"))}
    assert cols == {"v": "partition_key", "k": "clustering", "c": "clustering", "w": "regular"}
    session.execute("ALTER MATERIALIZED VIEW %s WITH comment = 'hello'" % v)
    assert session.execute("SELECT comment FROM system_schema.views WHERE keyspace_name = %s "
                           "AND view_name = %s", (ks, t + "_mv")).one().comment == "hello"
    session.execute("DROP MATERIALIZED VIEW %s" % v)


def test_follows_base_changes(session, base):
    ks, t = base
    v = mv(session, ks, t)
    bt = "%s.%s" % (ks, t)
    session.execute("INSERT INTO %s (k, c, v, w) VALUES (1, 1, 10, 'a')" % bt)
    session.execute("INSERT INTO %s (k, c, v, w) VALUES (1, 2, 20, 'b')" % bt)
    session.execute("INSERT INTO %s (k, c, w) VALUES (1, 3, 'no v')" % bt)
    assert rows(session, "SELECT v, k, c, w FROM %s" % v) == [(10, 1, 1, "a"), (20, 1, 2, "b")]
    # update of a non-key column
    session.execute("UPDATE %s SET w = 'z' WHERE k = 1 AND c = 1" % bt)
    assert rows(session, "SELECT w FROM %s WHERE v = 10" % v) == [("z",)]
    # update of the view key column: old view row deleted, new one written
    session.execute("UPDATE %s SET v = 11 WHERE k = 1 AND c = 1" % bt)
    assert rows(session, "SELECT v, k, c, w FROM %s" % v) == [(11, 1, 1, "z"), (20, 1, 2, "b")]
    # set back to the old value: the row comes back whole
    session.execute("UPDATE %s SET v = 10 WHERE k = 1 AND c = 1" % bt)
    assert rows(session, "SELECT v, k, c, w FROM %s" % v) == [(10, 1, 1, "z"), (20, 1, 2, "b")]
    # row gets a view key later
    session.execute("UPDATE %s SET v = 30 WHERE k = 1 AND c = 3" % bt)
    assert (30, 1, 3, "no v") in rows(session, "SELECT v, k, c, w FROM %s" % v)
    # null the key column, delete a column, a row, a range, a partition
    session.execute("UPDATE %s SET v = null WHERE k = 1 AND c = 3" % bt)
    session.execute("DELETE w FROM %s WHERE k = 1 AND c = 2" % bt)
    assert rows(session, "SELECT v, k, c, w FROM %s" % v) == [(10, 1, 1, "z"), (20, 1, 2, None)]
    session.execute("DELETE FROM %s WHERE k = 1 AND c = 1" % bt)
    assert rows(session, "SELECT v, k, c FROM %s" % v) == [(20, 1, 2)]
    for c in range(5):
        session.execute("INSERT INTO %s (k, c, v) VALUES (2, %%s, %%s)" % bt, (c, c))
    session.execute("DELETE FROM %s WHERE k = 2 AND c >= 3" % bt)
    assert rows(session, "SELECT k, c FROM %s WHERE v IN (0, 1, 2, 3, 4)" % v) == [(2, 0), (2, 1), (2, 2)]
    session.execute("DELETE FROM %s WHERE k = 2" % bt)
    session.execute("DELETE FROM %s WHERE k = 1" % bt)
    assert rows(session, "SELECT * FROM %s" % v) == []


def test_ttl_and_batch(session, base):
    ks, t = base
    v = mv(session, ks, t)
    bt = "%s.%s" % (ks, t)
    session.execute("INSERT INTO %s (k, c, v, w) VALUES (1, 1, 1, 'x') USING TTL 1" % bt)
    session.execute("BEGIN BATCH INSERT INTO %s (k, c, v) VALUES (2, 1, 2); "
                    "UPDATE %s SET v = 3 WHERE k = 2 AND c = 1; APPLY BATCH" % (bt, bt))
    assert rows(session, "SELECT v, k FROM %s" % v) == [(1, 1), (3, 2)]
    time.sleep(2.2)
    assert rows(session, "SELECT v, k FROM %s" % v) == [(3, 2)]


def test_build_existing_and_select_subset(session, base):
    ks, t = base
    bt = "%s.%s" % (ks, t)
    for k in range(30):
        session.execute("INSERT INTO %s (k, c, v, w) VALUES (%%s, 0, %%s, 'w')" % bt, (k, k % 3))
    v = mv(session, ks, t, key="((v), k, c)", cols="k, c, v")
    assert rows(session, "SELECT k FROM %s WHERE v = 2" % v) == [(k,) for k in range(30) if k % 3 == 2]
    assert list(session.execute("SELECT * FROM %s LIMIT 1" % v).column_names) == ["v", "k", "c"]


def test_where_restrictions_on_key_columns(session, base):
    ks, t = base
    bt = "%s.%s" % (ks, t)
    for k in range(3):
        for c in range(4):
            session.execute("INSERT INTO %s (k, c, v) VALUES (%%s, %%s, %%s)" % bt, (k, c, k * 10 + c))
    session.execute("CREATE MATERIALIZED VIEW %s.%s_mv AS SELECT * FROM %s WHERE v IS NOT NULL "
                    "AND k = 1 AND c > 1 PRIMARY KEY (v, k, c)" % (ks, t, bt))
    v = "%s.%s_mv" % (ks, t)
    assert rows(session, "SELECT k, c FROM %s" % v) == [(1, 2), (1, 3)]
    session.execute("INSERT INTO %s (k, c, v) VALUES (1, 5, 99)" % bt)
    session.execute("INSERT INTO %s (k, c, v) VALUES (2, 5, 98)" % bt)
    session.execute("INSERT INTO %s (k, c, v) VALUES (1, 0, 97)" % bt)
    assert rows(session, "SELECT k, c, v FROM %s" % v) == [(1, 2, 12), (1, 3, 13), (1, 5, 99)]


def test_drop_base_refused(session, base):
    ks, t = base
    mv(session, ks, t)
    with pytest.raises(InvalidRequest, match="materialized views still depend on it"):
        session.execute("DROP TABLE %s.%s" % (ks, t))


@cassette_only("admin flush endpoint")
def test_flush(session, server, base):
    ks, t = base
    v = mv(session, ks, t)
    bt = "%s.%s" % (ks, t)
    for k in range(10):
        session.execute("INSERT INTO %s (k, c, v) VALUES (%%s, 0, %%s)" % bt, (k, k))
    flush(server, ks)
    for k in range(0, 10, 2):
        session.execute("UPDATE %s SET v = %%s WHERE k = %%s AND c = 0" % bt, (k + 100, k))
    flush(server, ks)
    exp = sorted((k + 100 if k % 2 == 0 else k, k) for k in range(10))
    assert rows(session, "SELECT v, k FROM %s" % v) == exp


@cassette_only("private server restart")
def test_restart(fresh_server):
    c, s = H.connect(fresh_server.host, fresh_server.port)
    try:
        s.execute("CREATE KEYSPACE r WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE r.t (k int, c int, v int, PRIMARY KEY (k, c))")
        for k in range(10):
            s.execute("INSERT INTO r.t (k, c, v) VALUES (%s, 0, %s)", (k, k))
        s.execute("CREATE MATERIALIZED VIEW r.mv AS SELECT * FROM r.t WHERE v IS NOT NULL AND k IS NOT NULL "
                  "AND c IS NOT NULL PRIMARY KEY (v, k, c)")
        s.execute("UPDATE r.t SET v = 50 WHERE k = 0 AND c = 0")
        s.execute("DELETE FROM r.t WHERE k = 1")
    finally:
        c.shutdown()
    fresh_server.stop()
    fresh_server.start()
    c, s = H.connect(fresh_server.host, fresh_server.port)
    try:
        got = sorted((r.v, r.k) for r in s.execute("SELECT v, k FROM r.mv"))
        assert got == sorted([(50, 0)] + [(k, k) for k in range(2, 10)])
        out = "\n".join(r[3] if len(r) > 3 else str(r) for r in s.execute("DESCRIBE MATERIALIZED VIEW r.mv"))
        assert "CREATE MATERIALIZED VIEW r.mv AS" in out
    finally:
        c.shutdown()
