"""Request tracing (frame flag 0x02): the driver's trace API and cqlsh's
TRACING ON read system_traces.sessions and events for the returned id."""

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
                         "Merged data from memtables and 0 sstables",
                         "Read 2 live rows and 1 tombstone cells"], names
    assert [e[1] for e in ev][2:] == ["ReadStage-1"] * 4
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
    assert names[2] == "Computing ranges to query" and ev[2][1] == "Native-Transport-Requests-1", names
    assert names[3].startswith("Executing seq scan across ") and \
        names[3].endswith(" sstables for (min(-9223372036854775808), min(-9223372036854775808)]"), names
    assert names[4] == "Read 2 live rows and 1 tombstone cells", names
    _, ev = _events(session, SimpleStatement("SELECT * FROM %s.te WHERE token(k) > 0" % ks))
    assert [e[0] for e in ev][3].endswith("sstables for (max(0), min(-9223372036854775808)]"), ev
    session.execute("CREATE INDEX te_v ON %s.te (v)" % ks)
    import time
    deadline = time.time() + 20
    while True:
        try:
            _, ev = _events(session, SimpleStatement("SELECT k FROM %s.te WHERE v = 'x'" % ks))
            break
        except Exception:
            if time.time() > deadline:
                raise
            time.sleep(0.1)
    assert "Executing read on %s.te using index te_v" % ks in [e[0] for e in ev], ev


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
