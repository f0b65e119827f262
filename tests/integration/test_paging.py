"""Paging (spec v4 section 8): fetch_size, paging_state resumption, pages
across partitions in token order, and paging that stays correct while rows
are inserted between pages.
"""

import pytest
from cassandra.metadata import Murmur3Token
from cassandra.query import SimpleStatement


@pytest.fixture(scope="module")
def data(session, ks):
    session.execute("CREATE TABLE %s.wide (p int, c int, v text, PRIMARY KEY (p, c))" % ks)
    session.execute("CREATE TABLE %s.skinny (k int PRIMARY KEY, v int)" % ks)
    ins = session.prepare("INSERT INTO %s.wide (p, c, v) VALUES (?, ?, ?)" % ks)
    futures = [session.execute_async(ins, (p, c, "v%d" % c)) for p in range(3) for c in range(1000)]
    for f in futures:
        f.result()
    ins2 = session.prepare("INSERT INTO %s.skinny (k, v) VALUES (?, ?)" % ks)
    futures = [session.execute_async(ins2, (k, k * 2)) for k in range(500)]
    for f in futures:
        f.result()
    return ks


@pytest.mark.parametrize("fetch_size", [1, 7, 100, 999, 1000, 1001, 5000])
def test_wide_partition_pages(session, data, fetch_size):
    st = SimpleStatement("SELECT c, v FROM %s.wide WHERE p = 1" % data, fetch_size=fetch_size)
    rs = session.execute(st)
    first_page = list(rs.current_rows)
    assert len(first_page) == min(fetch_size, 1000)
    if fetch_size < 1000:
        assert rs.has_more_pages
    elif fetch_size > 1000:
        assert not rs.has_more_pages
    # (fetch_size == 1000: a full last page may or may not say "more")
    got = [r.c for r in session.execute(st)]
    assert got == list(range(1000))


def test_prepared_paging(session, data):
    ps = session.prepare("SELECT c FROM %s.wide WHERE p = ?" % data)
    ps.fetch_size = 64
    assert [r.c for r in session.execute(ps, (2,))] == list(range(1000))


def test_paging_state_resume(session, data):
    st = SimpleStatement("SELECT c FROM %s.wide WHERE p = 0" % data, fetch_size=300)
    rs = session.execute(st)
    page1 = [r.c for r in rs.current_rows]
    assert page1 == list(range(300))
    state = rs.paging_state
    assert state
    rs2 = session.execute(st, paging_state=state)
    assert [r.c for r in rs2.current_rows] == list(range(300, 600))
    # The same state can be used again (it is stateless on the server).
    rs3 = session.execute(st, paging_state=state)
    assert [r.c for r in rs3.current_rows] == list(range(300, 600))


def test_full_scan_pages_in_token_order(session, data):
    st = SimpleStatement("SELECT k, token(k) AS t FROM %s.skinny" % data, fetch_size=37)
    rows = list(session.execute(st))
    assert sorted(r.k for r in rows) == list(range(500))
    toks = [r.t for r in rows]
    assert toks == sorted(toks)
    for r in rows[:20]:
        assert r.t == Murmur3Token.hash_fn(r.k.to_bytes(4, "big", signed=True))


def test_multi_partition_scan_pages(session, data):
    st = SimpleStatement("SELECT p, c FROM %s.wide" % data, fetch_size=250)
    rows = [(r.p, r.c) for r in session.execute(st)]
    assert len(rows) == 3000
    assert len(set(rows)) == 3000
    # Within each partition, clustering order; partitions contiguous.
    seen = []
    for p, c in rows:
        if not seen or seen[-1] != p:
            seen.append(p)
    assert sorted(seen) == [0, 1, 2]


def test_in_query_pages(session, data):
    st = SimpleStatement("SELECT p, c FROM %s.wide WHERE p IN (0, 2) AND c < 10" % data, fetch_size=3)
    rows = [(r.p, r.c) for r in session.execute(st)]
    assert rows == [(0, c) for c in range(10)] + [(2, c) for c in range(10)]


def test_limit_with_paging(session, data):
    st = SimpleStatement("SELECT c FROM %s.wide WHERE p = 1 LIMIT 150" % data, fetch_size=40)
    assert [r.c for r in session.execute(st)] == list(range(150))
    st = SimpleStatement("SELECT k FROM %s.skinny LIMIT 77" % data, fetch_size=10)
    assert len(list(session.execute(st))) == 77


def test_inserts_between_pages(session, data):
    """Rows inserted after the current position appear; rows before it do not
    disturb the remaining pages (no row is skipped or repeated)."""
    session.execute("CREATE TABLE %s.live (p int, c int, PRIMARY KEY (p, c))" % data)
    ins = session.prepare("INSERT INTO %s.live (p, c) VALUES (0, ?)" % data)
    for c in range(0, 200, 2):
        session.execute(ins, (c,))
    st = SimpleStatement("SELECT c FROM %s.live WHERE p = 0" % data, fetch_size=50)
    rs = session.execute(st)
    got = [r.c for r in rs.current_rows]
    assert got == list(range(0, 100, 2))
    session.execute(ins, (1,))       # behind the cursor
    session.execute(ins, (151,))     # ahead of the cursor
    while rs.has_more_pages:
        rs.fetch_next_page()
        got += [r.c for r in rs.current_rows]
    assert got == list(range(0, 100, 2)) + sorted(list(range(100, 200, 2)) + [151])


def test_empty_result_paging(session, data):
    st = SimpleStatement("SELECT c FROM %s.wide WHERE p = 999" % data, fetch_size=10)
    rs = session.execute(st)
    assert list(rs) == []
    assert not rs.has_more_pages
