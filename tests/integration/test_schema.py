"""Keyspaces and tables: DDL, the driver's schema metadata (which it reads
from system_schema.*), schema change events pushed to other connections,
and the data semantics of partition keys, clustering order and static
columns.
"""

import pytest
from cassandra import AlreadyExists, InvalidRequest
from cassandra.cluster import Cluster

import cassette_harness as H


def table_meta(cluster, ks, t):
    return cluster.metadata.keyspaces[ks].tables[t]


def test_create_keyspace_strategies(cluster, session):
    session.execute("DROP KEYSPACE IF EXISTS ks_simple")
    session.execute("DROP KEYSPACE IF EXISTS ks_nts")
    session.execute("CREATE KEYSPACE ks_simple WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    session.execute("CREATE KEYSPACE ks_nts WITH replication = "
                    "{'class': 'NetworkTopologyStrategy', 'datacenter1': 1} AND durable_writes = false")
    try:
        m = cluster.metadata.keyspaces
        assert m["ks_simple"].replication_strategy.name == "SimpleStrategy"
        assert m["ks_simple"].durable_writes is True
        assert m["ks_nts"].replication_strategy.name == "NetworkTopologyStrategy"
        assert m["ks_nts"].durable_writes is False
        row = session.execute("SELECT * FROM system_schema.keyspaces WHERE keyspace_name = 'ks_simple'").one()
        assert row.replication["class"] == "org.apache.cassandra.locator.SimpleStrategy"
        assert row.replication["replication_factor"] == "1"
        with pytest.raises(AlreadyExists):
            session.execute("CREATE KEYSPACE ks_simple WITH replication = "
                            "{'class': 'SimpleStrategy', 'replication_factor': 1}")
        session.execute("CREATE KEYSPACE IF NOT EXISTS ks_simple WITH replication = "
                        "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    finally:
        session.execute("DROP KEYSPACE IF EXISTS ks_simple")
        session.execute("DROP KEYSPACE IF EXISTS ks_nts")
    assert "ks_simple" not in cluster.metadata.keyspaces
    with pytest.raises(InvalidRequest):
        session.execute("DROP KEYSPACE ks_simple")


def test_keyspace_errors(session):
    with pytest.raises(Exception):   # ConfigurationException (0x2300) in Cassandra
        session.execute("CREATE KEYSPACE ks_bad WITH replication = {'class': 'NoSuchStrategy'}")
    # Cassandra 4.1 (CASSANDRA-14303) takes default_keyspace_rf (1) when
    # SimpleStrategy has no replication_factor.
    session.execute("CREATE KEYSPACE ks_rf_default WITH replication = {'class': 'SimpleStrategy'}")
    row = session.execute("SELECT replication FROM system_schema.keyspaces "
                          "WHERE keyspace_name = 'ks_rf_default'").one()
    assert row.replication["replication_factor"] == "1"
    session.execute("DROP KEYSPACE ks_rf_default")
    with pytest.raises(InvalidRequest):
        session.execute("CREATE TABLE no_such_ks.t (k int PRIMARY KEY)")


def test_single_partition_key_metadata(cluster, session, ks):
    session.execute("CREATE TABLE %s.users (id uuid PRIMARY KEY, name text, age int, "
                    "emails text, score double) WITH comment = 'people' "
                    "AND default_time_to_live = 3600 AND gc_grace_seconds = 7200" % ks)
    t = table_meta(cluster, ks, "users")
    assert [c.name for c in t.partition_key] == ["id"]
    assert t.clustering_key == []
    assert t.columns["id"].cql_type == "uuid"
    assert t.columns["name"].cql_type == "text"
    assert t.columns["age"].cql_type == "int"
    assert t.columns["score"].cql_type == "double"
    assert t.options["comment"] == "people"
    assert t.options["default_time_to_live"] == 3600
    assert t.options["gc_grace_seconds"] == 7200
    assert "compaction" in t.options and "class" in t.options["compaction"]
    assert t.is_cql_compatible
    cql = t.export_as_string()
    assert "CREATE TABLE %s.users" % ks in cql
    assert "id uuid PRIMARY KEY" in cql


def test_composite_partition_key_and_clustering_desc(cluster, session, ks):
    session.execute("CREATE TABLE %s.events (tenant text, day date, bucket int, ts timeuuid, "
                    "seq int, payload blob, PRIMARY KEY ((tenant, day, bucket), ts, seq)) "
                    "WITH CLUSTERING ORDER BY (ts DESC, seq ASC)" % ks)
    t = table_meta(cluster, ks, "events")
    assert [c.name for c in t.partition_key] == ["tenant", "day", "bucket"]
    assert [c.name for c in t.clustering_key] == ["ts", "seq"]
    assert t.clustering_key[0].is_reversed is True
    assert t.clustering_key[1].is_reversed is False
    assert "CLUSTERING ORDER BY (ts DESC, seq ASC)" in t.export_as_string()
    rows = {r.column_name: r for r in session.execute(
        "SELECT column_name, kind, position, clustering_order, type FROM system_schema.columns "
        "WHERE keyspace_name = %s AND table_name = 'events'", (ks,))}
    assert rows["tenant"].kind == "partition_key" and rows["tenant"].position == 0
    assert rows["bucket"].kind == "partition_key" and rows["bucket"].position == 2
    assert rows["ts"].kind == "clustering" and rows["ts"].clustering_order == "desc"
    assert rows["seq"].clustering_order == "asc" and rows["seq"].position == 1
    assert rows["payload"].kind == "regular" and rows["payload"].position == -1
    assert rows["payload"].clustering_order == "none"
    assert rows["day"].type == "date"
    flags = session.execute("SELECT flags FROM system_schema.tables WHERE keyspace_name = %s "
                            "AND table_name = 'events'", (ks,)).one().flags
    assert set(flags) == {"compound"}


def test_composite_partition_key_queries(session, ks):
    session.execute("CREATE TABLE %s.cpk (a int, b text, c int, v int, PRIMARY KEY ((a, b), c))" % ks)
    ins = session.prepare("INSERT INTO %s.cpk (a, b, c, v) VALUES (?, ?, ?, ?)" % ks)
    for a in range(3):
        for b in ("x", "y"):
            for c in range(4):
                session.execute(ins, (a, b, c, a * 100 + c))
    rows = list(session.execute("SELECT c, v FROM %s.cpk WHERE a = 1 AND b = 'y'" % ks))
    assert [r.c for r in rows] == [0, 1, 2, 3]
    assert [r.v for r in rows] == [100, 101, 102, 103]
    rows = list(session.execute("SELECT c FROM %s.cpk WHERE a = 2 AND b = 'x' AND c > 1" % ks))
    assert [r.c for r in rows] == [2, 3]
    assert len(list(session.execute("SELECT * FROM %s.cpk" % ks))) == 24
    # Only part of the partition key: needs ALLOW FILTERING.
    with pytest.raises(InvalidRequest):
        session.execute("SELECT * FROM %s.cpk WHERE a = 1" % ks)
    rows = list(session.execute("SELECT * FROM %s.cpk WHERE a = 1 ALLOW FILTERING" % ks))
    assert len(rows) == 8
    # The token of a composite key covers all its parts.
    toks = list(session.execute("SELECT token(a, b) AS t FROM %s.cpk" % ks))
    assert len(toks) == 24


def test_clustering_desc_semantics(session, ks):
    session.execute("CREATE TABLE %s.feed (user int, id int, body text, PRIMARY KEY (user, id)) "
                    "WITH CLUSTERING ORDER BY (id DESC)" % ks)
    ins = session.prepare("INSERT INTO %s.feed (user, id, body) VALUES (?, ?, ?)" % ks)
    for i in range(50):
        session.execute(ins, (1, i, "n%d" % i))
    ids = [r.id for r in session.execute("SELECT id FROM %s.feed WHERE user = 1" % ks)]
    assert ids == list(range(49, -1, -1))
    ids = [r.id for r in session.execute(
        "SELECT id FROM %s.feed WHERE user = 1 AND id < 30 ORDER BY id DESC LIMIT 5" % ks)]
    assert ids == [29, 28, 27, 26, 25]
    ids = [r.id for r in session.execute(
        "SELECT id FROM %s.feed WHERE user = 1 AND id >= 45 ORDER BY id ASC" % ks)]
    assert ids == [45, 46, 47, 48, 49]
    assert session.execute("SELECT body FROM %s.feed WHERE user = 1 LIMIT 1" % ks).one().body == "n49"


def test_multi_column_clustering_slices(session, ks):
    session.execute("CREATE TABLE %s.mc (p int, c1 int, c2 text, v int, PRIMARY KEY (p, c1, c2)) "
                    "WITH CLUSTERING ORDER BY (c1 ASC, c2 DESC)" % ks)
    for c1 in range(3):
        for c2 in "abc":
            session.execute("INSERT INTO %s.mc (p, c1, c2, v) VALUES (0, %d, '%s', 1)" % (ks, c1, c2))
    got = [(r.c1, r.c2) for r in session.execute("SELECT c1, c2 FROM %s.mc WHERE p = 0" % ks)]
    assert got == [(c1, c2) for c1 in range(3) for c2 in "cba"]
    got = [(r.c1, r.c2) for r in session.execute(
        "SELECT c1, c2 FROM %s.mc WHERE p = 0 AND c1 = 1 AND c2 < 'c'" % ks)]
    assert got == [(1, "b"), (1, "a")]
    got = [(r.c1, r.c2) for r in session.execute(
        "SELECT c1, c2 FROM %s.mc WHERE p = 0 AND (c1, c2) > (1, 'b')" % ks)]
    # Tuple comparison compares values (CASSANDRA-7281), results come in
    # clustering order.
    assert got == [(1, "c"), (2, "c"), (2, "b"), (2, "a")]


def test_static_columns(cluster, session, ks):
    session.execute("CREATE TABLE %s.st (p int, c int, s text static, v int, PRIMARY KEY (p, c))" % ks)
    t = table_meta(cluster, ks, "st")
    assert t.columns["s"].is_static
    session.execute("INSERT INTO %s.st (p, c, s, v) VALUES (1, 1, 'first', 10)" % ks)
    session.execute("INSERT INTO %s.st (p, c, v) VALUES (1, 2, 20)" % ks)
    session.execute("UPDATE %s.st SET s = 'shared' WHERE p = 1" % ks)
    rows = list(session.execute("SELECT p, c, s, v FROM %s.st WHERE p = 1" % ks))
    assert [(r.c, r.s, r.v) for r in rows] == [(1, "shared", 10), (2, "shared", 20)]
    # A partition with only the static row: one row, clustering null.
    session.execute("INSERT INTO %s.st (p, s) VALUES (2, 'alone')" % ks)
    rows = list(session.execute("SELECT p, c, s, v FROM %s.st WHERE p = 2" % ks))
    assert [(r.c, r.s, r.v) for r in rows] == [(None, "alone", None)]
    assert session.execute("SELECT DISTINCT p, s FROM %s.st WHERE p = 1" % ks).one().s == "shared"
    with pytest.raises(InvalidRequest):
        session.execute("CREATE TABLE %s.st_bad (p int PRIMARY KEY, s int static)" % ks)


def test_alter_and_drop_table(cluster, session, ks):
    session.execute("CREATE TABLE %s.alt (k int PRIMARY KEY, a int)" % ks)
    session.execute("INSERT INTO %s.alt (k, a) VALUES (1, 1)" % ks)
    session.execute("ALTER TABLE %s.alt ADD b text" % ks)
    assert table_meta(cluster, ks, "alt").columns["b"].cql_type == "text"
    session.execute("INSERT INTO %s.alt (k, a, b) VALUES (2, 2, 'two')" % ks)
    rows = {r.k: r for r in session.execute("SELECT k, a, b FROM %s.alt" % ks)}
    assert rows[1].b is None and rows[2].b == "two"
    session.execute("ALTER TABLE %s.alt DROP a" % ks)
    assert "a" not in table_meta(cluster, ks, "alt").columns
    with pytest.raises(InvalidRequest):
        session.execute("SELECT a FROM %s.alt" % ks)
    session.execute("ALTER TABLE %s.alt WITH comment = 'altered'" % ks)
    assert table_meta(cluster, ks, "alt").options["comment"] == "altered"
    with pytest.raises(AlreadyExists):
        session.execute("CREATE TABLE %s.alt (k int PRIMARY KEY)" % ks)
    session.execute("CREATE TABLE IF NOT EXISTS %s.alt (k int PRIMARY KEY)" % ks)
    session.execute("DROP TABLE %s.alt" % ks)
    assert "alt" not in cluster.metadata.keyspaces[ks].tables
    with pytest.raises(InvalidRequest):
        session.execute("SELECT * FROM %s.alt" % ks)
    session.execute("DROP TABLE IF EXISTS %s.alt" % ks)
    # Re-created under the same name: empty.
    session.execute("CREATE TABLE %s.alt (k int PRIMARY KEY, a int)" % ks)
    assert list(session.execute("SELECT * FROM %s.alt" % ks)) == []


def test_truncate(session, ks):
    session.execute("CREATE TABLE %s.tr (k int PRIMARY KEY, v int)" % ks)
    for i in range(20):
        session.execute("INSERT INTO %s.tr (k, v) VALUES (%d, %d)" % (ks, i, i))
    session.execute("TRUNCATE %s.tr" % ks)
    assert list(session.execute("SELECT * FROM %s.tr" % ks)) == []
    session.execute("INSERT INTO %s.tr (k, v) VALUES (1, 1)" % ks)
    assert session.execute("SELECT v FROM %s.tr WHERE k = 1" % ks).one().v == 1
    session.execute("TRUNCATE TABLE %s.tr" % ks)
    assert list(session.execute("SELECT * FROM %s.tr" % ks)) == []


def test_schema_change_pushed_to_other_clients(contact, session, ks):
    """A second driver sees DDL made by the first without any manual
    refresh: the server pushes EVENT SCHEMA_CHANGE to registered
    connections and the driver refreshes (debounced, about 2 s)."""
    other = Cluster([contact[0]], port=contact[1], connect_timeout=10)
    try:
        other.connect()
        assert "pushed" not in other.metadata.keyspaces[ks].tables
        session.execute("CREATE TABLE %s.pushed (k int PRIMARY KEY, v text)" % ks)
        H.wait_for(lambda: "pushed" in other.metadata.keyspaces[ks].tables, timeout=20,
                   what="table creation event")
        session.execute("ALTER TABLE %s.pushed ADD w int" % ks)
        H.wait_for(lambda: "w" in other.metadata.keyspaces[ks].tables["pushed"].columns,
                   timeout=20, what="table update event")
        session.execute("DROP TABLE %s.pushed" % ks)
        H.wait_for(lambda: "pushed" not in other.metadata.keyspaces[ks].tables, timeout=20,
                   what="table drop event")
        session.execute("CREATE KEYSPACE ks_pushed WITH replication = "
                        "{'class': 'SimpleStrategy', 'replication_factor': 1}")
        H.wait_for(lambda: "ks_pushed" in other.metadata.keyspaces, timeout=20,
                   what="keyspace creation event")
        session.execute("DROP KEYSPACE ks_pushed")
        H.wait_for(lambda: "ks_pushed" not in other.metadata.keyspaces, timeout=20,
                   what="keyspace drop event")
    finally:
        other.shutdown()


def test_schema_version_changes(session, ks):
    v1 = session.execute("SELECT schema_version FROM system.local WHERE key='local'").one().schema_version
    session.execute("CREATE TABLE %s.sv (k int PRIMARY KEY)" % ks)
    v2 = session.execute("SELECT schema_version FROM system.local WHERE key='local'").one().schema_version
    assert v1 != v2


def test_quoted_identifiers(cluster, session, ks):
    session.execute('CREATE TABLE %s."MixedCase" ("Key" int PRIMARY KEY, "select" text, "a b" int)' % ks)
    assert "MixedCase" in cluster.metadata.keyspaces[ks].tables
    session.execute('INSERT INTO %s."MixedCase" ("Key", "select", "a b") VALUES (1, \'x\', 2)' % ks)
    row = session.execute('SELECT "Key", "select", "a b" FROM %s."MixedCase"' % ks).one()
    assert tuple(row) == (1, "x", 2)
    with pytest.raises(InvalidRequest):
        session.execute("SELECT * FROM %s.MixedCase" % ks)   # unquoted folds to lower case


def test_delete_semantics(session, ks):
    session.execute("CREATE TABLE %s.del (p int, c int, v int, w int, PRIMARY KEY (p, c))" % ks)
    for c in range(5):
        session.execute("INSERT INTO %s.del (p, c, v, w) VALUES (1, %d, %d, %d)" % (ks, c, c, c))
    session.execute("DELETE v FROM %s.del WHERE p = 1 AND c = 0" % ks)
    session.execute("DELETE FROM %s.del WHERE p = 1 AND c = 1" % ks)
    session.execute("DELETE FROM %s.del WHERE p = 1 AND c >= 3" % ks)
    rows = [(r.c, r.v, r.w) for r in session.execute("SELECT c, v, w FROM %s.del WHERE p = 1" % ks)]
    assert rows == [(0, None, 0), (2, 2, 2)]
    session.execute("DELETE FROM %s.del WHERE p = 1" % ks)
    assert list(session.execute("SELECT * FROM %s.del WHERE p = 1" % ks)) == []
    # Newer write after a partition delete is visible again.
    session.execute("INSERT INTO %s.del (p, c, v) VALUES (1, 9, 9)" % ks)
    assert [r.c for r in session.execute("SELECT c FROM %s.del WHERE p = 1" % ks)] == [9]


def test_batch_and_lwt(session, ks):
    session.execute("CREATE TABLE %s.acct (id int PRIMARY KEY, bal int)" % ks)
    session.execute("BEGIN BATCH INSERT INTO %s.acct (id, bal) VALUES (1, 10); "
                    "INSERT INTO %s.acct (id, bal) VALUES (2, 20); APPLY BATCH" % (ks, ks))
    assert sorted(r.bal for r in session.execute("SELECT bal FROM %s.acct" % ks)) == [10, 20]
    r = session.execute("INSERT INTO %s.acct (id, bal) VALUES (1, 99) IF NOT EXISTS" % ks).one()
    assert r[0] is False
    r = session.execute("UPDATE %s.acct SET bal = 11 WHERE id = 1 IF bal = 10" % ks).one()
    assert r[0] is True
    assert session.execute("SELECT bal FROM %s.acct WHERE id = 1" % ks).one().bal == 11
