"""Many requests in flight: the driver pipelines up to hundreds of requests
per connection and several connections write to the same partitions.
Nothing may be lost, duplicated or answered on the wrong stream.
"""

import threading

from cassandra.concurrent import execute_concurrent_with_args

import cassette_harness as H


def test_concurrent_inserts_then_reads(session, ks):
    session.execute("CREATE TABLE %s.conc (p int, c int, v text, PRIMARY KEY (p, c))" % ks)
    ins = session.prepare("INSERT INTO %s.conc (p, c, v) VALUES (?, ?, ?)" % ks)
    args = [(i % 50, i, "v%d" % i) for i in range(5000)]
    res = execute_concurrent_with_args(session, ins, args, concurrency=128, raise_on_first_error=True)
    assert all(ok for ok, _ in res)
    sel = session.prepare("SELECT c, v FROM %s.conc WHERE p = ?" % ks)
    res = execute_concurrent_with_args(session, sel, [(p,) for p in range(50)], concurrency=50)
    total = 0
    for (ok, rows), p in zip(res, range(50)):
        assert ok
        rows = list(rows)
        assert [r.c for r in rows] == list(range(p, 5000, 50))
        assert all(r.v == "v%d" % r.c for r in rows)
        total += len(rows)
    assert total == 5000


def test_several_clients_same_partition(contact, session, ks):
    session.execute("CREATE TABLE %s.shared (p int, c int, who int, PRIMARY KEY (p, c))" % ks)
    session.execute("CREATE TABLE %s.hits (p int PRIMARY KEY, n counter)" % ks)
    errors = []

    def worker(w):
        try:
            c, s = H.connect(*contact)
            try:
                ins = s.prepare("INSERT INTO %s.shared (p, c, who) VALUES (0, ?, ?)" % ks)
                upd = s.prepare("UPDATE %s.hits SET n = n + 1 WHERE p = 0" % ks)
                futs = []
                for i in range(300):
                    futs.append(s.execute_async(ins, (w * 1000 + i, w)))
                    futs.append(s.execute_async(upd))
                for f in futs:
                    f.result()
                # Read your own writes on this connection.
                mine = s.execute("SELECT count(*) FROM %s.shared WHERE p = 0 AND c >= %d AND c < %d"
                                 % (ks, w * 1000, w * 1000 + 300)).one()[0]
                assert mine == 300
            finally:
                c.shutdown()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append((w, repr(e)))

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    rows = list(session.execute("SELECT c, who FROM %s.shared WHERE p = 0" % ks))
    assert len(rows) == 1200
    assert all(r.c // 1000 == r.who for r in rows)
    assert session.execute("SELECT n FROM %s.hits WHERE p = 0" % ks).one().n == 1200


def test_reads_during_writes_see_whole_rows(session, ks):
    """A row written in one statement is never seen half-written."""
    session.execute("CREATE TABLE %s.whole (k int PRIMARY KEY, a int, b int, c int)" % ks)
    ins = session.prepare("INSERT INTO %s.whole (k, a, b, c) VALUES (?, ?, ?, ?)" % ks)
    sel = session.prepare("SELECT a, b, c FROM %s.whole WHERE k = ?" % ks)
    for gen in range(30):
        futs = [session.execute_async(ins, (k, gen, gen, gen)) for k in range(20)]
        reads = [session.execute_async(sel, (k,)) for k in range(20)]
        for f in futs:
            f.result()
        for f in reads:
            row = f.result().one()
            if row is not None:
                assert row.a == row.b == row.c, row
