"""Client warnings and guard rails, as Cassandra 4.1 sends them in the
frame's warning list: batch size (warn 5 KiB, fail 50 KiB), unlogged
batches across many partitions, tombstones scanned (warn at 1,000).
"""

import pytest
from cassandra import InvalidRequest
from cassandra.query import BatchStatement, BatchType


def warnings_of(rs):
    return rs.response_future.warnings or []


def test_batch_size_warning_and_failure(session, ks):
    session.execute("CREATE TABLE %s.big (k int, c int, v text, PRIMARY KEY (k, c))" % ks)
    ins = session.prepare("INSERT INTO %s.big (k, c, v) VALUES (?, ?, ?)" % ks)
    # Single-partition batches are exempt (CASSANDRA-10876): spread the rows.
    b = BatchStatement(batch_type=BatchType.LOGGED)
    for i in range(8):
        b.add(ins, (i, i, "x" * 1024))                 # ~8 KiB: over the 5 KiB warning
    rs = session.execute(b)
    w = warnings_of(rs)
    assert any("Batch" in m and "size" in m for m in w), w
    b = BatchStatement(batch_type=BatchType.LOGGED)
    for i in range(60):
        b.add(ins, (i, 100 + i, "x" * 1024))           # ~60 KiB: over the 50 KiB limit
    with pytest.raises(InvalidRequest, match="Batch too large"):
        session.execute(b)
    assert session.execute("SELECT v FROM %s.big WHERE k = 5 AND c = 105" % ks).one() is None
    # One partition, the same size: no warning, no failure.
    b = BatchStatement(batch_type=BatchType.LOGGED)
    for i in range(60):
        b.add(ins, (1000, i, "x" * 1024))
    rs = session.execute(b)
    assert not any("Batch" in m for m in warnings_of(rs))


def test_unlogged_batch_across_partitions_warning(session, ks):
    session.execute("CREATE TABLE IF NOT EXISTS %s.ub (k int PRIMARY KEY, v int)" % ks)
    ins = session.prepare("INSERT INTO %s.ub (k, v) VALUES (?, ?)" % ks)
    b = BatchStatement(batch_type=BatchType.UNLOGGED)
    for k in range(12):                                # over the threshold of 10 partitions
        b.add(ins, (k, k))
    rs = session.execute(b)
    w = warnings_of(rs)
    assert any("Unlogged batch covering 12 partitions" in m for m in w), w


def test_tombstone_warning(session, ks):
    session.execute("CREATE TABLE %s.tomb (p int, c int, v int, PRIMARY KEY (p, c))" % ks)
    ins = session.prepare("INSERT INTO %s.tomb (p, c, v) VALUES (0, ?, 1)" % ks)
    dele = session.prepare("DELETE FROM %s.tomb WHERE p = 0 AND c = ?" % ks)
    for c in range(1100):
        session.execute(ins, (c,))
    for c in range(1050):
        session.execute(dele, (c,))
    rs = session.execute("SELECT c FROM %s.tomb WHERE p = 0" % ks)
    assert [r.c for r in rs] == list(range(1050, 1100))
    w = warnings_of(rs)
    assert any("tombstone" in m for m in w), w
