"""Request tracing (frame flag 0x02): the driver's trace API and cqlsh's
TRACING ON read system_traces.sessions and events for the returned id."""

import time

from cassandra.query import SimpleStatement


def test_trace_of_a_query(session, ks):
    session.execute("CREATE TABLE %s.tr (k int PRIMARY KEY, v text)" % ks)
    rs = session.execute(SimpleStatement("INSERT INTO %s.tr (k, v) VALUES (1, 'a')" % ks), trace=True)
    trace = rs.get_query_trace(max_wait_sec=5)
    assert trace.duration is not None and trace.duration.total_seconds() >= 0
    assert trace.started_at is not None
    assert trace.coordinator in ("127.0.0.1",)
    assert trace.parameters["consistency_level"]
    activities = [e.description for e in trace.events]
    assert any(a.startswith("Parsing INSERT INTO") for a in activities), activities
    assert all(e.source_elapsed is not None for e in trace.events)


def test_untraced_requests_leave_no_session(session, ks):
    session.execute("CREATE TABLE IF NOT EXISTS %s.tr (k int PRIMARY KEY, v text)" % ks)
    count = lambda: len(list(session.execute("SELECT session_id FROM system_traces.sessions")))
    before = count()
    for _ in range(3):
        session.execute("SELECT * FROM %s.tr WHERE k = 1" % ks)
    assert count() == before
    session.execute(SimpleStatement("SELECT * FROM %s.tr WHERE k = 1" % ks), trace=True)
    assert count() == before + 1


def test_prepared_and_failed_requests_are_traced(session, ks):
    session.execute("CREATE TABLE IF NOT EXISTS %s.tr (k int PRIMARY KEY, v text)" % ks)
    ps = session.prepare("SELECT v FROM %s.tr WHERE k = ?" % ks)
    rs = session.execute(ps, (1,), trace=True)
    t = rs.get_query_trace(max_wait_sec=5)
    assert t.request_type == "Execute CQL3 prepared query"


def _events(session, stmt, *args):
    rs = session.execute(stmt, *args, trace=True)
    t = rs.get_query_trace(max_wait_sec=5)
    return t, [(e.description, e.thread_name, e.source_elapsed.total_seconds() * 1e6) for e in t.events]


def _events_once_built(session, stmt):
    """_events of a read through an index, retried while the index builds
    (its reads fail with INDEX_NOT_AVAILABLE until then)."""
    import time
    deadline = time.time() + 20
    while True:
        try:
            return _events(session, stmt)
        except Exception:
            if time.time() > deadline:
                raise
            time.sleep(0.1)


def test_events_are_what_the_request_did(session, ks):
    """The events Cassandra's code traces, with what this request did: a
    single-partition read's sstables merged and its live rows and tombstone
    cells, a write's commit log append and memtable add, a range read's
    seq scan and an index read's index, each on its thread pool, in order
    of their real elapsed times."""
    session.execute("CREATE TABLE %s.te (k int, c int, v text, PRIMARY KEY (k, c))" % ks)
    _, ev = _events(session, SimpleStatement("INSERT INTO %s.te (k, c, v) VALUES (1, 1, 'a')" % ks))
    names = [e[0] for e in ev]
    assert names == ["Parsing INSERT INTO %s.te (k, c, v) VALUES (1, 1, 'a')" % ks, "Preparing statement",
                     "Determining replicas for mutation", "Appending to commitlog", "Adding to te memtable"], names
    assert [e[1] for e in ev] == ["Native-Transport-Requests-1"] * 3 + ["MutationStage-1"] * 2
    for c in (2, 3):
        session.execute("INSERT INTO %s.te (k, c, v) VALUES (1, %d, 'x')" % (ks, c))
    session.execute("DELETE FROM %s.te WHERE k = 1 AND c = 3" % ks)
    t, ev = _events(session, SimpleStatement("SELECT * FROM %s.te WHERE k = 1" % ks))
    names = [e[0] for e in ev]
    assert names[2:] == ["Executing single-partition query on te", "Acquiring sstable references",
                         "Skipped 0/0 non-slice-intersecting sstables, included 0 due to tombstones",
                         "Merged data from memtables and 0 sstables",
                         "Read 2 live rows and 1 tombstone cells"], names
    assert [e[1] for e in ev][2:] == ["ReadStage-1"] * 5
    elapsed = [e[2] for e in ev]
    assert elapsed == sorted(elapsed) and elapsed[-1] <= t.duration.total_seconds() * 1e6 + 1000, ev
    # every clustering column given: read by names in timestamp order
    _, ev = _events(session, SimpleStatement("SELECT * FROM %s.te WHERE k = 1 AND c = 2" % ks))
    assert [e[0] for e in ev][2:] == ["Executing single-partition query on te", "Acquiring sstable references",
                                      "Merging memtable contents", "Read 1 live rows and 0 tombstone cells"], ev
    # a counter update: CounterMutation's locks and current values, on its stage
    session.execute("CREATE TABLE %s.tc (k int PRIMARY KEY, a counter, b counter)" % ks)
    _, ev = _events(session, SimpleStatement("UPDATE %s.tc SET a = a + 1, b = b - 2 WHERE k = 1" % ks))
    assert [(e[0], e[1]) for e in ev][2:] == [
        ("Determining replicas for mutation", "Native-Transport-Requests-1"),
        ("Acquiring counter locks", "CounterMutationStage-1"),
        ("Reading 2 counter values from the CF", "CounterMutationStage-1"),
        ("Appending to commitlog", "CounterMutationStage-1"),
        ("Adding to tc memtable", "CounterMutationStage-1")], ev
    ps = session.prepare("SELECT * FROM %s.te WHERE k = ?" % ks)
    _, ev = _events(session, ps, (1,))
    assert [e[0] for e in ev][0] == "Executing single-partition query on te", ev   # no parsing when prepared
    _, ev = _events(session, SimpleStatement("SELECT * FROM %s.te" % ks))
    names = [e[0] for e in ev]
    # RangeCommands: the ring's 16 tokens cut the whole ring into 17 ranges,
    # one request on this node; nothing in sstables: 0.0 rows expected
    assert names[2:5] == ["Computing ranges to query",
                          "Submitting range requests on 17 ranges with a concurrency of 1 (0.0 rows per range expected)",
                          "Submitted 1 concurrent range requests"], names
    assert [e[1] for e in ev][2:5] == ["Native-Transport-Requests-1"] * 3, ev
    assert names[5].startswith("Executing seq scan across ") and \
        names[5].endswith(" sstables for (min(-9223372036854775808), min(-9223372036854775808)]"), names
    assert names[6] == "Read 2 live rows and 1 tombstone cells", names
    _, ev = _events(session, SimpleStatement("SELECT * FROM %s.te WHERE token(k) > 0" % ks))
    tokens = session.execute("SELECT tokens FROM system.local").one().tokens
    above = sum(1 for t in tokens if int(t) > 0)
    assert [e[0] for e in ev][3] == "Submitting range requests on %d ranges with a concurrency of 1 " \
        "(0.0 rows per range expected)" % (above + 1), ev
    assert [e[0] for e in ev][5].endswith("sstables for (max(0), min(-9223372036854775808)]"), ev
    session.execute("CREATE INDEX te_v ON %s.te (v)" % ks)
    _, ev = _events_once_built(session, SimpleStatement("SELECT k FROM %s.te WHERE v = 'x'" % ks))
    assert "Executing read on %s.te using index te_v" % ks in [e[0] for e in ev], ev
    # a logged batch of two partitions goes through mutateAtomically; of one
    # partition, or unlogged, through mutate
    for kind, keys, first in (("", (5, 6), "Determining replicas for atomic batch"),
                              ("", (5, 5), "Determining replicas for mutation"),
                              ("UNLOGGED ", (5, 6), "Determining replicas for mutation")):
        q = "BEGIN %sBATCH INSERT INTO %s.te (k, c, v) VALUES (%d, 1, 'b') " \
            "INSERT INTO %s.te (k, c, v) VALUES (%d, 2, 'b') APPLY BATCH" % (kind, ks, keys[0], ks, keys[1])
        _, ev = _events(session, SimpleStatement(q))
        assert [e[0] for e in ev][2] == first, (q, ev)


def test_sstables_merged_after_flushes(session, ks, server):
    """A read over a partition written across two flushes and the memtable
    merges two sstables; a range read scans the table's sstables."""
    import cassette_harness as H
    if not H.is_cassette():
        return
    session.execute("CREATE TABLE %s.tf (k int, c int, v int, PRIMARY KEY (k, c))" % ks)
    for c in range(3):
        session.execute("INSERT INTO %s.tf (k, c, v) VALUES (1, %d, 0)" % (ks, c))
        if c < 2:
            assert server.admin("POST", "/flush?ks=%s&table=tf" % ks)[0] == 200
    _, ev = _events(session, SimpleStatement("SELECT * FROM %s.tf WHERE k = 1" % ks))
    names = [e[0] for e in ev]
    assert "Merged data from memtables and 2 sstables" in names and \
        "Read 3 live rows and 0 tombstone cells" in names, names
    _, ev = _events(session, SimpleStatement("SELECT * FROM %s.tf" % ks))
    assert any(e[0].startswith("Executing seq scan across 2 sstables for ") for e in ev), ev
    # rows expected per range (DataLimits.estimateTotalResults): 2 sstables
    # of one partition, 1 and 1 cells: 1 cell per partition over 1 regular
    # column times 2 keys, over 16 tokens, less 10%: 0.1125; concurrency
    # ceil(5000 / 0.1125) capped at the 17 ranges
    assert "Submitting range requests on 17 ranges with a concurrency of 17 (0.1125 rows per range expected)" \
        in [e[0] for e in ev], ev
    # the sstables whose partitions reach into the token range (View.select)
    for rel, n in ((">", 0), (">=", 2), ("<", 0), ("<=", 2)):
        _, ev = _events(session, SimpleStatement("SELECT * FROM %s.tf WHERE token(k) %s token(1)" % (ks, rel)))
        assert [e[0] for e in ev][5].startswith("Executing seq scan across %d sstables for " % n), (rel, ev)
    _, ev = _events(session, SimpleStatement("SELECT * FROM %s.tf LIMIT 1" % ks))
    assert "Submitting range requests on 17 ranges with a concurrency of 9 (0.1125 rows per range expected)" \
        in [e[0] for e in ev], ev


def _gens(server, ks, table):
    import glob
    import os
    import re
    files = glob.glob(os.path.join(server.data_dir, "data", ks, table + "-*", "cs-*-Data.db"))
    return sorted(int(re.search(r"cs-(\d+)-Data.db$", f).group(1)) for f in files)


def test_sstables_skipped_and_read(session, ks, server):
    """Per sstable, what a single-partition read did, in Cassandra's words
    and order: the sstables whose key range holds the key, newest first;
    the bloom filter's skips, the partition index's finds, the sstables a
    clustering slice misses (read anyway when they hold a partition
    deletion: included due to tombstones), each key of an IN on its own."""
    import cassette_harness as H
    from cassandra.metadata import Murmur3Token
    if not H.is_cassette():
        return
    session.execute("CREATE TABLE %s.tk (k int, c int, v int, PRIMARY KEY (k, c)) "
                    "WITH compaction = {'class': 'SizeTieredCompactionStrategy', 'min_threshold': 32}" % ks)

    def token(k):
        return Murmur3Token.from_key(k.to_bytes(4, "big", signed=True)).value

    def flush():
        assert server.admin("POST", "/flush?ks=%s&table=tk" % ks)[0] == 200

    toks = sorted(token(k) for k in range(50))
    # keys inside the key range of sstable a (keys 0..49): one written, one never
    inside = [k for k in range(1000, 2000) if toks[0] < token(k) < toks[-1]]
    probe, absent = inside[0], inside[1]
    for k in list(range(50)) + [probe]:
        session.execute("INSERT INTO %s.tk (k, c, v) VALUES (%d, 1, 0)" % (ks, k))
    flush()
    session.execute("INSERT INTO %s.tk (k, c, v) VALUES (%d, 5, 0)" % (ks, probe))
    flush()
    a, b = _gens(server, ks, "tk")
    read = ["Executing single-partition query on tk", "Acquiring sstable references"]

    def lines(q):
        _, ev = _events(session, SimpleStatement(q % ks))
        assert all(e[1] == "ReadStage-1" for e in ev[2:]), ev
        return [e[0] for e in ev][2:]

    assert lines("SELECT * FROM %%s.tk WHERE k = %d" % probe) == read + [
        "Skipped 0/2 non-slice-intersecting sstables, included 0 due to tombstones",
        "Partition index with 0 entries found for sstable %d" % b,
        "Partition index with 0 entries found for sstable %d" % a,
        "Merged data from memtables and 2 sstables", "Read 2 live rows and 0 tombstone cells"]
    assert lines("SELECT * FROM %%s.tk WHERE k = %d AND c > 3" % probe) == read + [
        "Skipped 1/2 non-slice-intersecting sstables, included 0 due to tombstones",
        "Partition index with 0 entries found for sstable %d" % b,
        "Merged data from memtables and 1 sstables", "Read 1 live rows and 0 tombstone cells"]
    got = lines("SELECT * FROM %%s.tk WHERE k = %d" % absent)
    assert got[:3] == read + ["Skipped 0/1 non-slice-intersecting sstables, included 0 due to tombstones"], got
    assert got[3] in ("Bloom filter allows skipping sstable %d" % a,
                      "Partition index lookup complete (bloom filter false positive) for sstable %d" % a), got
    assert got[4:] == ["Merged data from memtables and 0 sstables", "Read 0 live rows and 0 tombstone cells"], got
    # an IN: each key read and traced as its own command
    got = lines("SELECT * FROM %%s.tk WHERE k IN (%d, %d)" % (probe, absent))
    assert got.count("Executing single-partition query on tk") == 2, got
    assert "Read 2 live rows and 0 tombstone cells" in got and "Read 0 live rows and 0 tombstone cells" in got, got
    # by names (every clustering column given): timestamp order, no slice
    # line; b's clustering bounds miss c = 1 and it holds no tombstone
    assert lines("SELECT * FROM %%s.tk WHERE k = %d AND c = 1" % probe) == read + [
        "Merging memtable contents", "Partition index with 0 entries found for sstable %d" % a,
        "Read 1 live rows and 0 tombstone cells"]
    # with a static column every sstable is read (its static row may be
    # there: Cassandra's shouldInclude when statics are fetched)
    session.execute("CREATE TABLE %s.ts2 (k int, c int, s int static, v int, PRIMARY KEY (k, c))" % ks)
    session.execute("INSERT INTO %s.ts2 (k, c, s, v) VALUES (1, 1, 7, 0)" % ks)
    assert server.admin("POST", "/flush?ks=%s&table=ts2" % ks)[0] == 200
    session.execute("INSERT INTO %s.ts2 (k, c, v) VALUES (1, 5, 0)" % ks)
    assert server.admin("POST", "/flush?ks=%s&table=ts2" % ks)[0] == 200
    _, ev = _events(session, SimpleStatement("SELECT * FROM %s.ts2 WHERE k = 1 AND c > 3" % ks))
    got = [e[0] for e in ev]
    assert "Skipped 0/2 non-slice-intersecting sstables, included 0 due to tombstones" in got and \
        "Merged data from memtables and 2 sstables" in got, got
    assert [tuple(r) for r in session.execute("SELECT c, s FROM %s.ts2 WHERE k = 1 AND c > 3" % ks)] == [(5, 7)]
    # selecting no static column with a clustering restriction fetches no
    # static (ColumnFilter's fetched statics are the queried ones): the
    # sstable whose bounds miss the slice is skipped; a static column in
    # the selection, in a function or in a filter reads it again
    for q, n in (("SELECT c, v FROM %s.ts2 WHERE k = 1 AND c > 3", 1),
                 ("SELECT count(*) FROM %s.ts2 WHERE k = 1 AND c > 3", 1),
                 ("SELECT c, writetime(s) FROM %s.ts2 WHERE k = 1 AND c > 3", 2),
                 ("SELECT c, blobAsInt(intAsBlob(s)) FROM %s.ts2 WHERE k = 1 AND c > 3", 2),
                 ("SELECT c FROM %s.ts2 WHERE k = 1 AND c > 3 AND s = 7 ALLOW FILTERING", 2),
                 ("SELECT c, v FROM %s.ts2 WHERE k = 1", 2)):
        _, ev = _events(session, SimpleStatement(q % ks))
        got = [e[0] for e in ev]
        assert "Skipped %d/2 non-slice-intersecting sstables, included 0 due to tombstones" % (2 - n) in got and \
            "Merged data from memtables and %d sstables" % n in got, (q, got)
    assert [tuple(r) for r in session.execute("SELECT c, v FROM %s.ts2 WHERE k = 1 AND c > 3" % ks)] == [(5, 0)]
    assert [tuple(r) for r in session.execute(
        "SELECT c FROM %s.ts2 WHERE k = 1 AND c > 3 AND s = 7 ALLOW FILTERING" % ks)] == [(5,)]
    # a partition deletion misses every slice but is read all the same, and
    # the sstables older than it are passed (the loop stops there)
    session.execute("DELETE FROM %s.tk WHERE k = %d" % (ks, probe))
    flush()
    d = _gens(server, ks, "tk")[-1]
    got = lines("SELECT * FROM %%s.tk WHERE k = %d AND c > 3" % probe)
    assert got == read + [
        "Partition index with 0 entries found for sstable %d" % d,
        "Skipped 1/3 non-slice-intersecting sstables, included 1 due to tombstones",
        "Merged data from memtables and 1 sstables", "Read 0 live rows and 1 tombstone cells"], got


def test_index_choice_and_view_writes(session, ks, server):
    """getBestIndexFor's trace: each index serving a restriction with its
    expected rows per indexed value, the most selective one scanned;
    filters no index serves; a write to a table with a view."""
    import cassette_harness as H
    if not H.is_cassette():
        return
    session.execute("CREATE TABLE %s.ti (k int PRIMARY KEY, a int, b int, c int)" % ks)
    session.execute("CREATE INDEX ti_a ON %s.ti (a)" % ks)
    session.execute("CREATE INDEX ti_b ON %s.ti (b)" % ks)
    for k in range(40):   # a: 2 values of 20 rows, b: 10 values of 4 rows
        session.execute("INSERT INTO %s.ti (k, a, b, c) VALUES (%d, %d, %d, 1)" % (ks, k, k % 2, k % 10))
    assert server.admin("POST", "/flush?ks=%s" % ks)[0] == 200
    _, ev = _events_once_built(session, SimpleStatement("SELECT k FROM %s.ti WHERE a = 1 AND b = 3 ALLOW FILTERING" % ks))
    import re
    names = [e[0] for e in ev]
    # rows per indexed value, estimated from the index table's rows per
    # partition (a value's entries spread over 16 token buckets): near 20
    # and 4; the more selective index is scanned
    m = re.match(r"Index mean cardinalities are ti_a:(\d+),ti_b:(\d+)\. Scanning with ti_b\.$", names[2])
    assert m and 10 <= int(m.group(1)) <= 30 and 1 <= int(m.group(2)) <= 6, names
    assert ev[2][1] == "Native-Transport-Requests-1" and names[3] == "Computing ranges to query", ev
    per = int(m.group(2)) / 16 * 0.9
    assert re.match(r"Submitting range requests on 17 ranges with a concurrency of 17 \(([0-9.]+) rows per range "
                    r"expected\)$", names[4]), names
    assert abs(float(names[4].split("(")[1].split()[0]) - per) < 1e-6, (names[4], per)
    assert "Executing read on %s.ti using index ti_b" % ks in names, names
    assert names[-1] == "Read 4 live rows and 0 tombstone cells", names
    rows = session.execute("SELECT k FROM %s.ti WHERE a = 1 AND b = 3 ALLOW FILTERING" % ks)
    assert sorted(r.k for r in rows) == [3, 13, 23, 33]
    _, ev = _events(session, SimpleStatement("SELECT k FROM %s.ti WHERE c = 1 ALLOW FILTERING" % ks))
    assert [e[0] for e in ev][2:4] == ["No applicable indexes found", "Computing ranges to query"], ev
    session.execute("CREATE MATERIALIZED VIEW %s.ti_by_a AS SELECT * FROM %s.ti "
                    "WHERE a IS NOT NULL AND k IS NOT NULL PRIMARY KEY (a, k)" % (ks, ks))
    _, ev = _events(session, SimpleStatement("INSERT INTO %s.ti (k, a, b, c) VALUES (100, 1, 1, 1)" % ks))
    assert [(e[0], e[1]) for e in ev][3:] == [
        ("Appending to commitlog", "MutationStage-1"),
        ("Creating materialized view mutations from base table replica", "MutationStage-1"),
        ("Adding to ti memtable", "MutationStage-1")], ev


def test_lwt_paxos_round(session, ks):
    """A conditional write traces the Paxos round Cassandra 4.1 runs
    (paxos_variant v1, StorageProxy.legacyCas): a ballot prepared and
    promised, the CAS read, the proposal accepted and, when it applies,
    committed (its mutation appended and added); when it does not, the
    current values and an empty proposal.  A SERIAL read runs a round with
    an empty update before reading."""
    import re
    from cassandra import ConsistencyLevel
    session.execute("CREATE TABLE %s.tl (k int, c int, s int static, v text, PRIMARY KEY (k, c))" % ks)
    ntr, mut, rd = "Native-Transport-Requests-1", "MutationStage-1", "ReadStage-1"
    uuid = r"[0-9a-f]{8}-[0-9a-f]{4}-1[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}"

    def round_of(q, cl=None):
        st = SimpleStatement(q % ks) if cl is None else SimpleStatement(q % ks, consistency_level=cl)
        rs = session.execute(st, trace=True)
        ev = [(e.description, e.thread_name) for e in rs.get_query_trace(max_wait_sec=5).events][2:]
        m = re.match(r"Preparing (%s)$" % uuid, ev[0][0])
        assert m and ev[0][1] == ntr, ev
        return rs, m.group(1), ev

    rs, b, ev = round_of("INSERT INTO %s.tl (k, c, s, v) VALUES (1, 2, 3, 'x') IF NOT EXISTS")
    assert rs.one()[0] is True
    t = int(re.search(r"Accepted\((\d+):", ev[8][0]).group(1))
    assert abs((t - 0x01B21DD213814000) / 1e7 - time.time()) < 60   # the ballot's 100 ns time
    proposal = r"\(%d:%s, (\d+):key=1\n    Row: STATIC \| s=3\n    Row: c=2 \| v=x\)$" % (t, b)
    got = [(d if not d.startswith(("Accepting", "Committing")) else d.split(" ", 2)[0], th) for d, th in ev]
    assert got == [
        ("Preparing %s" % b, ntr), ("Promising ballot %s" % b, mut),
        ("Reading existing values for CAS precondition", ntr),
        ("Executing single-partition query on tl", rd), ("Acquiring sstable references", rd),
        ("Merging memtable contents", rd), ("Read 0 live rows and 0 tombstone cells", rd),
        ("CAS precondition is met; proposing client-requested updates for %s" % b, ntr),
        ("Accepting", mut), ("Committing", mut),
        ("Appending to commitlog", mut), ("Adding to tl memtable", mut), ("CAS applied successfully", ntr)], ev
    m = re.match(r"Accepting proposal Accepted" + proposal, ev[8][0])
    assert m and re.match(r"Committing proposal Committed" + proposal, ev[9][0]), ev
    wt = session.execute("SELECT writetime(v) FROM %s.tl WHERE k = 1 AND c = 2" % ks).one()[0]
    assert int(m.group(1)) == wt   # the update's timestamp

    rs, b, ev = round_of("UPDATE %s.tl SET v = 'y' WHERE k = 1 AND c = 2 IF v = 'z'")
    assert tuple(rs.one()) == (False, "x")
    descs = [d for d, _ in ev]
    assert descs[5:7] == ["Merging memtable contents", "Read 1 live rows and 0 tombstone cells"], ev   # no static fetched
    assert re.match(r"CAS precondition does not match current values \[%s\.tl\] key=1 partition_deletion="
                    r"deletedAt=-9223372036854775808, localDeletion=2147483647 columns=\[\[\] \| \[v\]\]\n"
                    r"    Row\[info=\[ts=%d\] \]: c=2 \| \[v=x ts=%d\]$" % (ks, wt, wt), descs[7]), descs[7]
    assert descs[8:] == ["CAS precondition is met; proposing client-requested updates for %s" % b,
                         "Accepting proposal Accepted(%d:%s, 1442880000000000:key=1)" % (
                             int(re.search(r"Accepted\((\d+):", descs[9]).group(1)), b),
                         "CAS did not apply"], ev
    assert "Determining replicas for mutation" not in descs

    # a SERIAL read: the empty round, then the read as at any consistency
    rs, b, ev = round_of("SELECT v FROM %s.tl WHERE k = 1 AND c = 2", ConsistencyLevel.SERIAL)
    assert rs.one()[0] == "x"
    descs = [d for d, _ in ev]
    assert descs[1:4] == ["Promising ballot %s" % b,
                          "CAS precondition is met; proposing client-requested updates for %s" % b,
                          descs[3]] and descs[3].endswith(":key=1)"), ev
    assert descs[4:6] == ["CAS applied successfully", "Executing single-partition query on tl"], ev
