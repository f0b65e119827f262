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
