"""The batch size behind batch_size_warn_threshold / batch_size_fail_threshold,
exactly as Cassandra 4.1 computes it (BatchStatement.verifyBatchSize:
IMutation.dataSize of the batch's mutations, statements on one row merged):
the N of "Batch for [ks.t] is of size N, exceeding specified threshold of W
by D." and the boundary at which "Batch too large" starts.

cassette runs on its own server with the thresholds lowered to 1 KiB and
2 KiB; against an external Cassandra (CASSETTE_CONTACT) the thresholds are
whatever it has, read from system_views.settings, and the batches are sized
from them.  The arithmetic (cql/batch_size.c, tests/unit/test_cql_batch_size.c):
a partition update is its rows + its static row (21 when empty) + 8; a row
is its clustering bytes + 8 (16 with a TTL on INSERT) + 13 + its cells
(16 + value + path each) + 12 per collection column.
"""

import pytest
from cassandra import InvalidRequest
from cassandra.query import BatchStatement, BatchType, SimpleStatement

import cassette_harness as H

KS = "ks_batch_size"


def kib(text):
    assert text.endswith("KiB"), text
    return int(text[:-3]) * 1024


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """(session, warn, fail): a session on a server whose batch thresholds
    are warn and fail bytes, with keyspace KS."""
    srv = None
    if H.is_cassette():
        d = tmp_path_factory.mktemp("batchsize")
        conf = d / "cassandra.yaml"
        conf.write_text("batch_size_warn_threshold: 1KiB\nbatch_size_fail_threshold: 2KiB\n")
        srv = H.Server(d, extra_args=["--config", str(conf)])
        srv.start(port=0)
        host, port = srv.host, srv.port
    else:
        host, port = H.external_contact()
    cluster, sess = H.connect(host, port)
    setting = lambda n: sess.execute("SELECT value FROM system_views.settings WHERE name = %s", (n,)).one().value
    warn, fail = kib(setting("batch_size_warn_threshold")), kib(setting("batch_size_fail_threshold"))
    if srv is not None:
        assert (warn, fail) == (1024, 2048)
    sess.execute("DROP KEYSPACE IF EXISTS %s" % KS)
    sess.execute("CREATE KEYSPACE %s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}" % KS)
    sess.execute("CREATE TABLE %s.kv (k int PRIMARY KEY, v text)" % KS)
    yield sess, warn, fail
    sess.execute("DROP KEYSPACE IF EXISTS %s" % KS)
    cluster.shutdown()
    if srv is not None:
        srv.stop()


def size_warnings(rs):
    return [w for w in (rs.response_future.warnings or []) if w.startswith("Batch for ")]


def warning(table, n, warn):
    return "Batch for [%s.%s] is of size %d, exceeding specified threshold of %d by %d." % (KS, table, n, warn, n - warn)


def kv_batch(sess, key, l1, l2):
    """Two INSERTs into kv, values of l1 and l2 bytes: each partition update
    8 + 13 + (16 + len) + 21 + 8 = 66 + len, so 132 + l1 + l2 in all."""
    ins = sess.prepare("INSERT INTO %s.kv (k, v) VALUES (?, ?)" % KS)
    b = BatchStatement(batch_type=BatchType.LOGGED)
    b.add(ins, (key, "x" * l1))
    b.add(ins, (key + 1, "y" * l2))
    return b


def test_warning_threshold_boundary(small):
    sess, warn, fail = small
    n = warn - 132
    rs = sess.execute(kv_batch(sess, 0, n // 2, n - n // 2))            # exactly warn: no warning
    assert size_warnings(rs) == []
    rs = sess.execute(kv_batch(sess, 10, n // 2, n - n // 2 + 1))       # warn + 1
    assert size_warnings(rs) == [warning("kv", warn + 1, warn)]


def test_failure_threshold_boundary(small):
    sess, warn, fail = small
    n = fail - 132
    rs = sess.execute(kv_batch(sess, 20, n // 2, n - n // 2))           # exactly fail: a warning only
    assert size_warnings(rs) == [warning("kv", fail, warn)]
    with pytest.raises(InvalidRequest, match="Batch too large"):
        sess.execute(kv_batch(sess, 30, n // 2, n - n // 2 + 1))        # fail + 1: refused
    assert sess.execute("SELECT k FROM %s.kv WHERE k IN (30, 31)" % KS).one() is None


def test_statement_shapes_merged(small):
    """One batch of several shapes, statements on one row merged."""
    sess, warn, fail = small
    sess.execute("CREATE TABLE %s.shapes (k int, c int, v text, l list<int>, s int STATIC, "
                 "PRIMARY KEY (k, c))" % KS)
    ins = sess.prepare("INSERT INTO %s.shapes (k, c, v) VALUES (?, ?, ?) USING TIMESTAMP ?" % KS)
    pad = "p" * warn
    b = BatchStatement(batch_type=BatchType.UNLOGGED)
    # k=1, c=1: INSERT at 10, UPDATE at 20 of the same v, a list append:
    # one row, v the later 'bb': 4 + 8 + 13 + (16 + 2) + 12 + (16 + 4 + 16) = 91
    b.add(ins, (1, 1, "aaaaaaaa", 10))
    b.add(SimpleStatement("UPDATE %s.shapes USING TIMESTAMP 20 SET v = 'bb', l = l + [7] "
                          "WHERE k = 1 AND c = 1" % KS))
    # the static row: 8 + 13 + (16 + 4) = 41 instead of 21
    b.add(SimpleStatement("UPDATE %s.shapes USING TIMESTAMP 20 SET s = 5 WHERE k = 1" % KS))
    # k=1, c=2: a row deletion: 4 + 8 + 13 = 25
    b.add(SimpleStatement("DELETE FROM %s.shapes USING TIMESTAMP 20 WHERE k = 1 AND c = 2" % KS))
    # a range: 4 + (4 + 0 + 12) = 20
    b.add(SimpleStatement("DELETE FROM %s.shapes USING TIMESTAMP 20 WHERE k = 1 AND c > 5" % KS))
    # partition 1: 91 + 41 + 25 + 8 + 20 = 185
    # k=2: an INSERT of the pad: 4 + 8 + 13 + (16 + warn) = 41 + warn, PU 70 + warn
    b.add(ins, (2, 1, pad, 30))
    rs = sess.execute(b)
    assert size_warnings(rs) == [warning("shapes", 185 + 70 + warn, warn)]
    row = sess.execute("SELECT v, l, s FROM %s.shapes WHERE k = 1 AND c = 1" % KS).one()
    assert (row.v, row.l, row.s) == ("bb", [7], 5)


def test_counter_batch(small):
    """Counter updates count as counter update cells: 16 + 36 bytes."""
    sess, warn, fail = small
    sess.execute("CREATE TABLE %s.ctr (k int PRIMARY KEY, n counter)" % KS)
    upd = sess.prepare("UPDATE %s.ctr SET n = n + ? WHERE k = ?" % KS)
    count = warn // 102 + 1                  # each partition update 8 + 13 + 52 + 21 + 8 = 102
    b = BatchStatement(batch_type=BatchType.COUNTER)
    for k in range(count):
        b.add(upd, (1, k))
        b.add(upd, (2, k))                   # the same counter again: one merged update
    rs = sess.execute(b)
    assert size_warnings(rs) == [warning("ctr", 102 * count, warn)]
    assert sess.execute("SELECT n FROM %s.ctr WHERE k = 0" % KS).one().n == 3


def test_one_key_two_tables_is_one_mutation(small):
    """Two tables under one key in one keyspace are one mutation: the batch
    is not checked at all, however large."""
    sess, warn, fail = small
    sess.execute("CREATE TABLE IF NOT EXISTS %s.other (k int PRIMARY KEY, v text)" % KS)
    b = BatchStatement(batch_type=BatchType.LOGGED)
    b.add(sess.prepare("INSERT INTO %s.kv (k, v) VALUES (?, ?)" % KS), (100, "x" * fail))
    b.add(sess.prepare("INSERT INTO %s.other (k, v) VALUES (?, ?)" % KS), (100, "y" * fail))
    rs = sess.execute(b)
    assert size_warnings(rs) == []
    assert sess.execute("SELECT v FROM %s.other WHERE k = 100" % KS).one().v == "y" * fail


def test_tables_in_cassandras_order(small):
    """The tables come as Cassandra's HashSet<String> iterates them (by the
    Java hash's bucket: ks_batch_size.other 3, ks_batch_size.kv 14), not in
    the batch's order."""
    sess, warn, fail = small
    sess.execute("CREATE TABLE IF NOT EXISTS %s.other (k int PRIMARY KEY, v text)" % KS)
    b = BatchStatement(batch_type=BatchType.LOGGED)
    b.add(sess.prepare("INSERT INTO %s.kv (k, v) VALUES (?, ?)" % KS), (200, "x" * warn))   # 66 + warn
    b.add(sess.prepare("INSERT INTO %s.other (k, v) VALUES (?, ?)" % KS), (201, "y"))       # 67
    rs = sess.execute(b)
    n = 133 + warn
    assert size_warnings(rs) == ["Batch for [%s.other, %s.kv] is of size %d, exceeding specified threshold "
                                 "of %d by %d." % (KS, KS, n, warn, n - warn)]


@pytest.fixture(scope="module")
def tiny_segments(tmp_path_factory):
    """A session on a cassette server with 1 MiB commit log segments (so
    mutations over 512 KiB are refused)."""
    if not H.is_cassette():
        pytest.skip("sets commitlog_segment_size on its own server")
    d = tmp_path_factory.mktemp("tinyseg")
    conf = d / "cassandra.yaml"
    conf.write_text("commitlog_segment_size: 1MiB\nbatch_size_warn_threshold: 4096KiB\n"
                    "batch_size_fail_threshold: 4096KiB\n")
    srv = H.Server(d, extra_args=["--config", str(conf)])
    srv.start(port=0)
    cluster, sess = H.connect(srv.host, srv.port)
    sess.execute("CREATE KEYSPACE big WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
    sess.execute("CREATE TABLE big.b (k int, c text, v blob, PRIMARY KEY ((k, c)))")
    yield sess
    cluster.shutdown()
    srv.stop()


def test_oversized_mutation_message(tiny_segments):
    """A mutation over max_mutation_size (half a segment) is refused with
    MutationExceededMaxSizeException's message: size/limit, the keyspace and
    "table.key" of its partitions (composite keys joined by ':'); the server
    goes on and the table holds none of it."""
    sess = tiny_segments
    ins = sess.prepare("INSERT INTO big.b (k, c, v) VALUES (?, ?, ?)")
    with pytest.raises(InvalidRequest) as ei:
        sess.execute(ins, (1, "x", b"\0" * 600000))
    msg = str(ei.value)
    assert "Rejected an oversized mutation (" in msg and "/524288) for keyspace: big. Top keys are: b.1:x" in msg, msg
    b = BatchStatement(batch_type=BatchType.UNLOGGED)
    for k in range(3):
        b.add(ins, (k, "y", b"\0" * 200000))
    with pytest.raises(InvalidRequest, match=r"Top keys are: b\.0:y, b\.1:y, b\.2:y"):
        sess.execute(b)
    sess.execute(ins, (7, "z", b"ok"))
    assert sess.execute("SELECT count(*) FROM big.b").one()[0] == 1
