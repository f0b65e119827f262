"""The write side through the Python driver (owner: exec-write): INSERT /
UPDATE / DELETE with TTL and timestamps, collections, counters, protocol
BATCH messages (logged, unlogged, counter) with their warnings and refusals,
lightweight transactions and their [applied] results, unset values.
Written to pass on Apache Cassandra 4.1 too.
"""

import pytest
from cassandra import InvalidRequest
from cassandra.query import BatchStatement, BatchType, SimpleStatement, UNSET_VALUE


@pytest.fixture(scope="module")
def t(session, ks):
    session.execute("CREATE TABLE %s.w (k int, c int, s int STATIC, v int, "
                    "l list<int>, m map<text, int>, st set<text>, PRIMARY KEY (k, c))" % ks)
    session.execute("CREATE TABLE %s.cnt (k int PRIMARY KEY, a counter, b counter)" % ks)
    session.execute("CREATE TABLE %s.kv (k int PRIMARY KEY, v text)" % ks)
    return ks


def test_insert_ttl_timestamp(session, t):
    session.execute("INSERT INTO %s.w (k, c, v) VALUES (1, 1, 1) USING TTL 1000 AND TIMESTAMP 12345" % t)
    row = session.execute("SELECT ttl(v), writetime(v) FROM %s.w WHERE k = 1 AND c = 1" % t).one()
    assert 990 < row[0] <= 1000
    assert row[1] == 12345
    with pytest.raises(InvalidRequest, match=r"ttl is too large. requested \(630720001\) maximum \(630720000\)"):
        session.execute("INSERT INTO %s.w (k, c, v) VALUES (1, 1, 1) USING TTL 630720001" % t)


def test_timestamp_tie_expiring_beats_plain(session, t):
    """Cassandra 4.1's reconciliation of two cells with one timestamp: the
    expiring one wins over the plain one whatever their values
    (CASSANDRA-14592), in a batch (one timestamp) and across writes with the
    same USING TIMESTAMP; a tombstone beats both."""
    session.execute("BEGIN BATCH INSERT INTO %s.kv (k, v) VALUES (40, 'aaaa') USING TTL 1000; "
                    "UPDATE %s.kv SET v = 'bbbbbbbb' WHERE k = 40; APPLY BATCH" % (t, t))
    row = session.execute("SELECT v, ttl(v) FROM %s.kv WHERE k = 40" % t).one()
    assert row[0] == "aaaa" and 990 < row[1] <= 1000, row
    session.execute("INSERT INTO %s.kv (k, v) VALUES (41, 'zzzz') USING TIMESTAMP 777" % t)
    session.execute("INSERT INTO %s.kv (k, v) VALUES (41, 'aaaa') USING TTL 1000 AND TIMESTAMP 777" % t)
    assert session.execute("SELECT v FROM %s.kv WHERE k = 41" % t).one()[0] == "aaaa"
    session.execute("DELETE v FROM %s.kv USING TIMESTAMP 777 WHERE k = 41" % t)
    assert session.execute("SELECT v FROM %s.kv WHERE k = 41" % t).one()[0] is None   # the row marker stays


def test_ttl_past_2038_refused(session, t):
    """A TTL under the maximum whose expiry is past 2038-01-19 (the 32-bit
    local deletion time): Cassandra 4.1 refuses it (ExpirationDateOverflow-
    Handling, default REJECT policy); found by fuzz_cql, where it overflowed
    into an already expired write."""
    msg = (r"Request on table %s.w with ttl of 630720000 seconds exceeds maximum supported expiration "
           r"date of 2038-01-19T03:14:06\+00:00" % t)
    with pytest.raises(InvalidRequest, match=msg):
        session.execute("INSERT INTO %s.w (k, c, v) VALUES (9, 9, 1) USING TTL 630720000" % t)
    ins = session.prepare("UPDATE %s.w USING TTL ? SET v = ? WHERE k = ? AND c = ?" % t)
    with pytest.raises(InvalidRequest, match=msg):
        session.execute(ins, (630720000, 1, 9, 9))
    assert session.execute("SELECT v FROM %s.w WHERE k = 9" % t).one() is None
    session.execute(ins, (86400, 1, 9, 9))
    assert session.execute("SELECT v FROM %s.w WHERE k = 9" % t).one().v == 1


def test_prepared_unset_and_null(session, t):
    ins = session.prepare("INSERT INTO %s.w (k, c, v, l) VALUES (?, ?, ?, ?)" % t)
    session.execute(ins, (2, 1, 5, [1, 2]))
    session.execute(ins, (2, 1, UNSET_VALUE, UNSET_VALUE))
    row = session.execute("SELECT v, l FROM %s.w WHERE k = 2 AND c = 1" % t).one()
    assert row.v == 5 and row.l == [1, 2]
    session.execute(ins, (2, 1, None, None))
    row = session.execute("SELECT v, l FROM %s.w WHERE k = 2 AND c = 1" % t).one()
    assert row.v is None and row.l is None
    with pytest.raises(InvalidRequest, match="Invalid null value"):
        session.execute(ins, (None, 1, 1, None))


def test_collections(session, t):
    q = "UPDATE %s.w SET l = l + [3], m = m + {'a': 1}, st = st + {'x'} WHERE k = 3 AND c = 1" % t
    session.execute(q)
    session.execute(q)
    session.execute("UPDATE %s.w SET l = [0] + l, m['b'] = 2 WHERE k = 3 AND c = 1" % t)
    session.execute("UPDATE %s.w SET l[1] = 9 WHERE k = 3 AND c = 1" % t)
    row = session.execute("SELECT l, m, st FROM %s.w WHERE k = 3 AND c = 1" % t).one()
    assert row.l == [0, 9, 3]
    assert row.m == {'a': 1, 'b': 2}
    assert row.st == {'x'}
    session.execute("DELETE l[0], m['a'] FROM %s.w WHERE k = 3 AND c = 1" % t)
    row = session.execute("SELECT l, m FROM %s.w WHERE k = 3 AND c = 1" % t).one()
    assert row.l == [9, 3] and row.m == {'b': 2}


def test_counters(session, t):
    session.execute("UPDATE %s.cnt SET a = a + 3, b = b - 1 WHERE k = 1" % t)
    b = BatchStatement(batch_type=BatchType.COUNTER)
    b.add(SimpleStatement("UPDATE %s.cnt SET a = a + 1 WHERE k = 1" % t))
    b.add(SimpleStatement("UPDATE %s.cnt SET a = a + 1 WHERE k = 1" % t))
    session.execute(b)
    row = session.execute("SELECT a, b FROM %s.cnt WHERE k = 1" % t).one()
    assert row.a == 5 and row.b == -1
    with pytest.raises(InvalidRequest, match="INSERT statements are not allowed on counter tables"):
        session.execute("INSERT INTO %s.cnt (k, a) VALUES (1, 1)" % t)
    lb = BatchStatement(batch_type=BatchType.LOGGED)
    lb.add(SimpleStatement("UPDATE %s.cnt SET a = a + 1 WHERE k = 1" % t))
    with pytest.raises(InvalidRequest, match="Cannot include a counter statement in a logged batch"):
        session.execute(lb)


def test_batches(session, t):
    b = BatchStatement(batch_type=BatchType.LOGGED)
    ins = session.prepare("INSERT INTO %s.kv (k, v) VALUES (?, ?)" % t)
    for i in range(5):
        b.add(ins, (i, "v%d" % i))
    b.add(SimpleStatement("DELETE FROM %s.kv WHERE k = 4" % t))
    session.execute(b)
    rows = sorted(session.execute("SELECT k, v FROM %s.kv WHERE k IN (0, 1, 2, 3, 4)" % t))
    assert [r.k for r in rows] == [0, 1, 2, 3]
    ub = BatchStatement(batch_type=BatchType.UNLOGGED)
    for i in range(20):
        ub.add(ins, (100 + i, "x"))
    rs = session.execute(ub)
    warnings = rs.response_future.warnings or []
    assert any("Unlogged batch covering 20 partitions detected against table [%s.kv]" % t in w
               for w in warnings), warnings
    big = BatchStatement(batch_type=BatchType.LOGGED)
    for i in range(3):
        big.add(ins, (200 + i, "y" * 3000))
    rs = session.execute(big)
    warnings = rs.response_future.warnings or []
    assert any(w.startswith("Batch for [%s.kv] is of size" % t) for w in warnings), warnings
    huge = BatchStatement(batch_type=BatchType.LOGGED)
    for i in range(30):
        huge.add(ins, (300 + i, "z" * 3000))
    with pytest.raises(InvalidRequest, match="Batch too large"):
        session.execute(huge)


def test_lwt(session, t):
    rs = session.execute("INSERT INTO %s.w (k, c, v) VALUES (10, 1, 1) IF NOT EXISTS" % t)
    assert rs.was_applied
    rs = session.execute("INSERT INTO %s.w (k, c, v) VALUES (10, 1, 2) IF NOT EXISTS" % t)
    assert not rs.was_applied
    row = rs.one()
    assert row.k == 10 and row.c == 1 and row.v == 1
    rs = session.execute("UPDATE %s.w SET v = 3 WHERE k = 10 AND c = 1 IF v = 2" % t)
    assert not rs.was_applied
    assert rs.one().v == 1
    assert rs.column_names == ["[applied]", "v"]
    rs = session.execute("UPDATE %s.w SET v = 3 WHERE k = 10 AND c = 1 IF v = 1" % t)
    assert rs.was_applied
    rs = session.execute("DELETE FROM %s.w WHERE k = 10 AND c = 2 IF EXISTS" % t)
    assert not rs.was_applied
    b = BatchStatement()
    b.add(SimpleStatement("UPDATE %s.w SET v = 4 WHERE k = 10 AND c = 1 IF v = 3" % t))
    b.add(SimpleStatement("INSERT INTO %s.w (k, c, v) VALUES (10, 2, 2)" % t))
    rs = session.execute(b)
    assert rs.was_applied
    rows = list(session.execute("SELECT c, v FROM %s.w WHERE k = 10" % t))
    assert [(r.c, r.v) for r in rows] == [(1, 4), (2, 2)]
