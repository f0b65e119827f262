"""Collections, tuples and user-defined types through the Python driver:
round trips (prepared and literal), element updates, frozen values as keys,
nulls and empties, and the driver's metadata for them.
"""

import pytest
from cassandra import InvalidRequest
from cassandra.util import OrderedMapSerializedKey, SortedSet


@pytest.fixture(scope="module")
def ct(session, ks):
    session.execute("CREATE TYPE %s.address (street text, zip int, tags frozen<set<text>>)" % ks)
    session.execute("CREATE TABLE %s.coll (k int PRIMARY KEY, l list<int>, s set<text>, m map<text, int>, "
                    "fl frozen<list<text>>, tu tuple<int, text, boolean>, addr address, "
                    "addrs list<frozen<address>>, nested map<text, frozen<set<int>>>)" % ks)
    return ks


def test_roundtrip_prepared(session, ct):
    ins = session.prepare("INSERT INTO %s.coll (k, l, s, m, fl, tu, nested) VALUES (?, ?, ?, ?, ?, ?, ?)" % ct)
    session.execute(ins, (1, [3, 1, 2, 1], {"b", "a", "c"}, {"z": 26, "a": 1}, ["x", "y"], (7, "seven", True),
                          {"evens": {2, 4}, "odds": {3, 1}}))
    r = session.execute("SELECT l, s, m, fl, tu, nested FROM %s.coll WHERE k = 1" % ct).one()
    assert r.l == [3, 1, 2, 1]                      # lists keep order and duplicates
    assert list(r.s) == ["a", "b", "c"]             # sets sorted
    assert list(r.m.items()) == [("a", 1), ("z", 26)]   # maps sorted by key
    assert r.fl == ["x", "y"]
    assert r.tu == (7, "seven", True)
    assert {k: set(v) for k, v in r.nested.items()} == {"evens": {2, 4}, "odds": {1, 3}}


def test_roundtrip_literals(session, ct):
    session.execute("INSERT INTO %s.coll (k, l, s, m, tu) VALUES (2, [1, 2], {'q'}, {'k': 5}, (1, 'one', false))"
                    % ct)
    r = session.execute("SELECT l, s, m, tu FROM %s.coll WHERE k = 2" % ct).one()
    assert r.l == [1, 2] and set(r.s) == {"q"} and dict(r.m) == {"k": 5} and r.tu == (1, "one", False)


def test_element_updates(session, ct):
    session.execute("INSERT INTO %s.coll (k, l, s, m) VALUES (3, [1, 2, 3], {'a', 'b'}, {'x': 1})" % ct)
    session.execute("UPDATE %s.coll SET l = l + [4], s = s + {'c'}, m = m + {'y': 2} WHERE k = 3" % ct)
    session.execute("UPDATE %s.coll SET l = [0] + l, s = s - {'a'}, m['x'] = 10 WHERE k = 3" % ct)
    session.execute("UPDATE %s.coll SET l[1] = 100 WHERE k = 3" % ct)
    session.execute("DELETE m['y'], l[0] FROM %s.coll WHERE k = 3" % ct)
    session.execute("UPDATE %s.coll SET l = l - [3] WHERE k = 3" % ct)
    r = session.execute("SELECT l, s, m FROM %s.coll WHERE k = 3" % ct).one()
    assert r.l == [100, 2, 4]
    assert set(r.s) == {"b", "c"}
    assert dict(r.m) == {"x": 10}
    with pytest.raises(InvalidRequest):
        session.execute("UPDATE %s.coll SET l[10] = 1 WHERE k = 3" % ct)   # index out of bound


def test_empty_and_null_collections(session, ct):
    session.execute("INSERT INTO %s.coll (k, l, s, m) VALUES (4, [], {}, {})" % ct)
    r = session.execute("SELECT l, s, m FROM %s.coll WHERE k = 4" % ct).one()
    assert r.l is None and r.s is None and r.m is None   # empty non-frozen collection = null
    session.execute("INSERT INTO %s.coll (k, s) VALUES (5, {'a'})" % ct)
    session.execute("UPDATE %s.coll SET s = s - {'a'} WHERE k = 5" % ct)
    assert session.execute("SELECT s FROM %s.coll WHERE k = 5" % ct).one().s is None


def test_udt(cluster, session, ct):
    ins = session.prepare("INSERT INTO %s.coll (k, addr, addrs) VALUES (?, ?, ?)" % ct)
    session.execute("INSERT INTO %s.coll (k, addr) VALUES (6, {street: 'Main', zip: 12345, tags: {'home'}})" % ct)
    r = session.execute("SELECT addr FROM %s.coll WHERE k = 6" % ct).one()
    assert r.addr.street == "Main" and r.addr.zip == 12345 and set(r.addr.tags) == {"home"}
    session.execute("UPDATE %s.coll SET addr.zip = 999 WHERE k = 6" % ct)
    assert session.execute("SELECT addr.zip FROM %s.coll WHERE k = 6" % ct).one()[0] == 999
    Addr = r.addr.__class__
    session.execute(ins, (7, Addr("Side", 1, None), [Addr("A", 2, {"x"}), Addr("B", 3, None)]))
    r = session.execute("SELECT addr, addrs FROM %s.coll WHERE k = 7" % ct).one()
    assert r.addr.street == "Side" and [a.street for a in r.addrs] == ["A", "B"]
    ut = cluster.metadata.keyspaces[ct].user_types["address"]
    assert ut.field_names == ["street", "zip", "tags"]
    assert ut.field_types == ["text", "int", "frozen<set<text>>"]
    cols = cluster.metadata.keyspaces[ct].tables["coll"].columns
    assert cols["addr"].cql_type == "address"
    assert cols["addrs"].cql_type == "list<frozen<address>>"
    assert cols["nested"].cql_type == "map<text, frozen<set<int>>>"


def test_frozen_collections_as_keys(session, ct):
    session.execute("CREATE TABLE %s.fk (p frozen<list<int>>, c frozen<set<text>>, v int, PRIMARY KEY (p, c))" % ct)
    ins = session.prepare("INSERT INTO %s.fk (p, c, v) VALUES (?, ?, ?)" % ct)
    for i, c in enumerate([{"b"}, {"a", "z"}, {"a"}, set()]):
        session.execute(ins, ([1, 2], c, i))
    rows = list(session.execute("SELECT c, v FROM %s.fk WHERE p = [1, 2]" % ct))
    # frozen sets order element by element, shorter prefix first
    assert [sorted(r.c) if r.c else [] for r in rows] == [[], ["a"], ["a", "z"], ["b"]]
    assert session.execute("SELECT v FROM %s.fk WHERE p = [1, 2] AND c = {'a', 'z'}" % ct).one().v == 1


def test_collection_filters(session, ct):
    session.execute("CREATE TABLE %s.cf (k int, c int, tags set<text>, PRIMARY KEY (k, c))" % ct)
    for c, tags in enumerate([{"red"}, {"blue"}, {"red", "blue"}]):
        session.execute("INSERT INTO %s.cf (k, c, tags) VALUES (1, %d, %s)" % (ct, c, "{" + ", ".join(
            "'%s'" % t for t in sorted(tags)) + "}"))
    rows = list(session.execute("SELECT c FROM %s.cf WHERE k = 1 AND tags CONTAINS 'red' ALLOW FILTERING" % ct))
    assert [r.c for r in rows] == [0, 2]


def test_prepared_marker_types(session, ks):
    # The bound variables' metadata a driver serializes by (Cassandra 4.1:
    # Sets/Maps.valueSpecOf/keySpecOf, FunctionResolver.makeArgSpec):
    # CONTAINS takes the element type, CONTAINS KEY and m[?] the key type,
    # token(?) the partition key column's type.
    session.execute("CREATE TABLE IF NOT EXISTS %s.marks (k int, c int, st set<int>, m map<text, int>, "
                    "PRIMARY KEY (k, c))" % ks)
    session.execute("INSERT INTO %s.marks (k, c, st, m) VALUES (1, 1, {1, 2}, {'a': 7})" % ks)

    def meta(q):
        return [(cm.name, cm.type.typename) for cm in session.prepare(q % ks).column_metadata]

    assert meta("SELECT c FROM %s.marks WHERE k = 1 AND st CONTAINS ? ALLOW FILTERING") == [("value(st)", "int")]
    assert meta("SELECT c FROM %s.marks WHERE m CONTAINS KEY ? ALLOW FILTERING") == [("key(m)", "varchar")]
    assert meta("SELECT m[?] FROM %s.marks WHERE k = ?") == [("key(m)", "varchar"), ("k", "int")]
    assert meta("SELECT k FROM %s.marks WHERE token(k) > token(?)") == [("arg0(system.token)", "int")]
    ps = session.prepare("SELECT c FROM %s.marks WHERE k = 1 AND st CONTAINS ? ALLOW FILTERING" % ks)
    assert [r.c for r in session.execute(ps, [2])] == [1]
    ps = session.prepare("SELECT m[?] FROM %s.marks WHERE k = ?" % ks)
    assert [tuple(r) for r in session.execute(ps, ["a", 1])] == [(7,)]
    ps = session.prepare("SELECT k FROM %s.marks WHERE token(k) >= token(?)" % ks)
    assert [r.k for r in session.execute(ps, [1])] == [1]
