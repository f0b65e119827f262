"""Paging across tombstone-heavy ranges (issue 4): a paged read ends a page
early once it has scanned its tombstone budget (max(page_size * 10, 1000),
below tombstone_failure_threshold), returning the rows found so far (maybe
none) with a paging state after the last position scanned; the driver keeps
fetching and gets every live row exactly once, never ReadFailure.  The same
query unpaged still fails past tombstone_failure_threshold (100,000) with
ReadFailure (0x1300), as Cassandra does.
"""

import time

import pytest
from cassandra import ReadFailure
from cassandra.query import BatchStatement, BatchType, SimpleStatement

import cassette_harness as H

N_DELETED = 150000
LIVE = [-5, 0, 37, 50001, 99998, 100003, 149999, N_DELETED + 10]


def _batched(session, prepared, params, size=1000):
    """Execute prepared with every params tuple, single-partition unlogged
    batches of `size` (exempt from the batch size limits), a few in flight."""
    futures = []
    for i in range(0, len(params), size):
        b = BatchStatement(batch_type=BatchType.UNLOGGED)
        for p in params[i:i + size]:
            b.add(prepared, p)
        futures.append(session.execute_async(b))
        if len(futures) >= 8:
            futures.pop(0).result()
    for f in futures:
        f.result()


@pytest.fixture(scope="module")
def wide(session, ks):
    if not H.is_cassette():
        pytest.skip("budgeted short pages are cassette's behaviour")
    session.execute("CREATE TABLE %s.tp (p int, c int, v int, PRIMARY KEY (p, c))" % ks)
    ins = session.prepare("INSERT INTO %s.tp (p, c, v) VALUES (0, ?, ?)" % ks)
    dele = session.prepare("DELETE FROM %s.tp WHERE p = 0 AND c = ?" % ks)
    live = set(LIVE)
    t0 = time.time()
    _batched(session, dele, [(c,) for c in range(N_DELETED + 10) if c not in live])
    for c in LIVE:
        session.execute(ins, (c, c * 2))
    assert time.time() - t0 < 60
    return ks


def test_paged_partition_returns_every_live_row_once(session, wide):
    st = SimpleStatement("SELECT c, v FROM %s.tp WHERE p = 0" % wide, fetch_size=100)
    got = [(r.c, r.v) for r in session.execute(st)]
    assert got == [(c, c * 2) for c in sorted(LIVE)]


def test_paged_partition_reversed(session, wide):
    st = SimpleStatement("SELECT c FROM %s.tp WHERE p = 0 ORDER BY c DESC" % wide, fetch_size=100)
    assert [r.c for r in session.execute(st)] == sorted(LIVE, reverse=True)


def test_short_pages_with_state(session, wide):
    # Page by page: some pages are short (even empty) yet carry a state.
    st = SimpleStatement("SELECT c FROM %s.tp WHERE p = 0" % wide, fetch_size=100)
    rs = session.execute(st)
    seen, pages, short = [], 0, 0
    while True:
        rows = [r.c for r in rs.current_rows]
        seen.extend(rows)
        pages += 1
        if not rs.has_more_pages:
            break
        if len(rows) < 100:
            short += 1
        rs = session.execute(st, paging_state=rs.paging_state)
    assert seen == sorted(LIVE)
    assert short > 0
    # one page per run of ~50,000 tombstones between live rows at least
    assert pages >= 5


def test_paged_with_filtering(session, wide):
    st = SimpleStatement("SELECT c FROM %s.tp WHERE p = 0 AND v > -100 ALLOW FILTERING" % wide,
                         fetch_size=100)
    assert [r.c for r in session.execute(st)] == sorted(LIVE)


def test_empty_page_past_the_hard_budget(session, wide):
    # 95,000 consecutive tombstones: more than an empty page may scan (90% of
    # tombstone_failure_threshold), so one page comes back empty with a state.
    ks = wide
    dele = session.prepare("DELETE FROM %s.tp WHERE p = 1 AND c = ?" % ks)
    _batched(session, dele, [(c,) for c in range(1, 95001)])
    session.execute("INSERT INTO %s.tp (p, c, v) VALUES (1, 0, 0)" % ks)
    session.execute("INSERT INTO %s.tp (p, c, v) VALUES (1, 95001, 1)" % ks)
    st = SimpleStatement("SELECT c FROM %s.tp WHERE p = 1" % ks, fetch_size=100)
    rs = session.execute(st)
    seen, empty = [], 0
    while True:
        rows = [r.c for r in rs.current_rows]
        seen.extend(rows)
        if not rs.has_more_pages:
            break
        empty += not rows
        rs = session.execute(st, paging_state=rs.paging_state)
    assert seen == [0, 95001]
    assert empty >= 1


def test_paged_slice_and_limit(session, wide):
    st = SimpleStatement("SELECT c FROM %s.tp WHERE p = 0 AND c > 0 AND c < 149999 LIMIT 3" % wide,
                         fetch_size=2)
    assert [r.c for r in session.execute(st)] == [37, 50001, 99998]


def test_unpaged_fails_with_read_failure(session, wide):
    st = SimpleStatement("SELECT c FROM %s.tp WHERE p = 0" % wide, fetch_size=None)
    with pytest.raises(ReadFailure) as ei:
        session.execute(st)
    assert "code=1300" in str(ei.value)


def test_unpaged_partition_of_deleted_rows_fails(session, wide):
    """A partition holding only deleted rows: each row deletion is a
    tombstone scanned (Cassandra's ReadCommand counts it), so unpaged the
    read fails past tombstone_failure_threshold, by key and by token range;
    it used to return no row, the check being made only for partitions
    with a live row.  Paged, it is short pages as above."""
    dele = session.prepare("DELETE FROM %s.tp WHERE p = 1 AND c = ?" % wide)
    _batched(session, dele, [(c,) for c in range(100050)])
    for q in ("SELECT c FROM %s.tp WHERE p = 1" % wide,
              "SELECT c FROM %s.tp WHERE token(p) = token(1)" % wide):
        with pytest.raises(ReadFailure) as ei:
            session.execute(SimpleStatement(q, fetch_size=None))
        assert "READ_TOO_MANY_TOMBSTONES" in str(ei.value)
    st = SimpleStatement("SELECT c FROM %s.tp WHERE p = 1" % wide, fetch_size=100)
    assert list(session.execute(st)) == []


def test_token_range_over_deleted_partitions(session, wide):
    ks = wide
    session.execute("CREATE TABLE %s.tr (k int PRIMARY KEY, v int)" % ks)
    ins = session.prepare("INSERT INTO %s.tr (k, v) VALUES (?, ?)" % ks)
    dele = session.prepare("DELETE FROM %s.tr WHERE k = ?" % ks)
    n = 6000
    live = set(range(0, n, 997))
    futures = []
    for k in range(n):
        futures.append(session.execute_async(ins if k in live else dele, (k, k) if k in live else (k,)))
        if len(futures) >= 256:
            for f in futures:
                f.result()
            futures = []
    for f in futures:
        f.result()
    st = SimpleStatement("SELECT k, v FROM %s.tr" % ks, fetch_size=100)
    rs = session.execute(st)
    first = list(rs.current_rows)
    assert len(first) < 100 and rs.has_more_pages
    got = [r.k for r in session.execute(st)]
    assert sorted(got) == sorted(live) and len(got) == len(live)
    st = SimpleStatement("SELECT k FROM %s.tr WHERE token(k) > -4611686018427387904 "
                         "AND token(k) <= 4611686018427387904" % ks, fetch_size=100)
    got = [r.k for r in session.execute(st)]
    assert len(got) == len(set(got))
    full = {r.k for r in session.execute(SimpleStatement("SELECT k FROM %s.tr" % ks, fetch_size=None))}
    assert full == live
