"""The user scenarios of the five articles cassette was seeded from
(/work/shared/seeds/README.md), as driver-level tests:

  000  paging through multi-column range queries without missing rows
       inserted while paging
  001  likes by object with IN on a partition key component; notifications
       per (user, day) with timeuuid DESC and `id < ? ORDER BY id DESC
       LIMIT 20`; sub-partitions tracked by a counter; usernames claimed with
       LWT; the queue anti-pattern (many deleted rows) still reads right
  002  a hand-built index table kept consistent with a logged batch;
       a native secondary index
  003  ad network: latest rate with LIMIT 1 over DESC clustering, clicks by
       (reseller, day), daily sums, counters, upserts
  004  time series with application buckets and a bucket dictionary, reads
       fanned out with IN over buckets
"""

import datetime
import uuid

import pytest
from cassandra.query import BatchStatement, BatchType, SimpleStatement
from cassandra.util import max_uuid_from_time, min_uuid_from_time


def test_000_multi_column_range_paging(session, ks):
    session.execute("CREATE TABLE %s.cities (country text, pop_bucket int, name text, pop int, "
                    "PRIMARY KEY (country, pop_bucket, name))" % ks)
    ins = session.prepare("INSERT INTO %s.cities (country, pop_bucket, name, pop) VALUES (?, ?, ?, ?)" % ks)
    names = ["city%03d" % i for i in range(120)]
    for i, n in enumerate(names):
        session.execute(ins, ("it", i % 6, n, i))
    q = SimpleStatement("SELECT pop_bucket, name FROM %s.cities WHERE country = 'it' "
                        "AND (pop_bucket, name) >= (1, 'city050') AND (pop_bucket, name) <= (4, 'city020')"
                        % ks, fetch_size=7)
    rs = session.execute(q)
    got = [(r.pop_bucket, r.name) for r in rs.current_rows]
    # Insert while paging: one row ahead of the cursor, one behind it.
    session.execute(ins, ("it", 3, "zz-new", 0))
    session.execute(ins, ("it", 1, "city000x", 0))
    while rs.has_more_pages:
        rs.fetch_next_page()
        got += [(r.pop_bucket, r.name) for r in rs.current_rows]
    rows = [(i % 6, n) for i, n in enumerate(names)] + [(3, "zz-new")]
    want = sorted(r for r in rows if (1, "city050") <= r <= (4, "city020"))
    assert got[:7] == want[:7]
    assert got == want
    assert len(got) == len(set(got))


def test_001_likes_in_on_partition_component(session, ks):
    session.execute("CREATE TABLE %s.likes_by_object (object_id int, shard int, user_id int, "
                    "PRIMARY KEY ((object_id, shard), user_id))" % ks)
    ins = session.prepare("INSERT INTO %s.likes_by_object (object_id, shard, user_id) VALUES (?, ?, ?)" % ks)
    for u in range(60):
        session.execute(ins, (7, u % 4, u))
    rows = list(session.execute("SELECT user_id FROM %s.likes_by_object WHERE object_id = 7 "
                                "AND shard IN (0, 1, 2, 3)" % ks))
    assert sorted(r.user_id for r in rows) == list(range(60))
    rows = list(session.execute("SELECT user_id FROM %s.likes_by_object WHERE object_id = 7 AND shard IN (1, 3)"
                                % ks))
    assert sorted(r.user_id for r in rows) == [u for u in range(60) if u % 4 in (1, 3)]
    n = session.execute("SELECT count(*) FROM %s.likes_by_object WHERE object_id = 7 AND shard = 2" % ks).one()
    assert n[0] == 15


def test_001_notifications_timeuuid_desc(session, ks):
    session.execute("CREATE TABLE %s.notifications (user_id int, day date, id timeuuid, body text, "
                    "PRIMARY KEY ((user_id, day), id)) WITH CLUSTERING ORDER BY (id DESC)" % ks)
    ins = session.prepare("INSERT INTO %s.notifications (user_id, day, id, body) VALUES (?, ?, ?, ?)" % ks)
    day = datetime.date(2024, 5, 1)
    base = datetime.datetime(2024, 5, 1, 8, 0, 0)
    ids = []
    for i in range(100):
        t = base + datetime.timedelta(seconds=i)
        tid = min_uuid_from_time(t)
        ids.append(tid)
        session.execute(ins, (42, day, tid, "n%d" % i))
    page1 = list(session.execute("SELECT id, body FROM %s.notifications WHERE user_id = 42 AND day = '2024-05-01' "
                                 "LIMIT 20" % ks))
    assert [r.body for r in page1] == ["n%d" % i for i in range(99, 79, -1)]
    sel = session.prepare("SELECT id, body FROM %s.notifications WHERE user_id = ? AND day = ? AND id < ? "
                          "ORDER BY id DESC LIMIT 20" % ks)
    page2 = list(session.execute(sel, (42, day, page1[-1].id)))
    assert [r.body for r in page2] == ["n%d" % i for i in range(79, 59, -1)]
    # maxTimeuuid/minTimeuuid bounds.
    rows = list(session.execute(
        "SELECT body FROM %s.notifications WHERE user_id = 42 AND day = '2024-05-01' "
        "AND id > maxTimeuuid('2024-05-01 08:01:00+0000') AND id < minTimeuuid('2024-05-01 08:01:05+0000')" % ks))
    assert [r.body for r in rows] == ["n64", "n63", "n62", "n61"]
    assert max_uuid_from_time(base) != ids[0]


def test_001_subpartitions_counter_and_lwt(session, ks):
    session.execute("CREATE TABLE %s.subparts (key text PRIMARY KEY, n counter)" % ks)
    session.execute("CREATE TABLE %s.usernames (name text PRIMARY KEY, owner uuid)" % ks)
    for _ in range(3):
        session.execute("UPDATE %s.subparts SET n = n + 1 WHERE key = 'feed:9'" % ks)
    assert session.execute("SELECT n FROM %s.subparts WHERE key = 'feed:9'" % ks).one().n == 3
    me, other = uuid.uuid4(), uuid.uuid4()
    r = session.execute("INSERT INTO %s.usernames (name, owner) VALUES ('neo', %s) IF NOT EXISTS" % (ks, me)).one()
    assert r[0] is True
    r = session.execute("INSERT INTO %s.usernames (name, owner) VALUES ('neo', %s) IF NOT EXISTS"
                        % (ks, other)).one()
    assert r[0] is False and r.owner == me
    r = session.execute("UPDATE %s.usernames SET owner = %s WHERE name = 'neo' IF owner = %s"
                        % (ks, other, me)).one()
    assert r[0] is True
    r = session.execute("DELETE FROM %s.usernames WHERE name = 'neo' IF owner = %s" % (ks, me)).one()
    assert r[0] is False
    assert session.execute("SELECT owner FROM %s.usernames WHERE name = 'neo'" % ks).one().owner == other


def test_001_queue_antipattern_reads_right(session, ks):
    session.execute("CREATE TABLE %s.queue (q text, id int, payload text, PRIMARY KEY (q, id))" % ks)
    ins = session.prepare("INSERT INTO %s.queue (q, id, payload) VALUES ('jobs', ?, 'x')" % ks)
    dele = session.prepare("DELETE FROM %s.queue WHERE q = 'jobs' AND id = ?" % ks)
    for i in range(900):
        session.execute(ins, (i,))
    for i in range(850):
        session.execute(dele, (i,))
    rows = [r.id for r in session.execute("SELECT id FROM %s.queue WHERE q = 'jobs' LIMIT 10" % ks)]
    assert rows == list(range(850, 860))


def test_002_manual_index_with_logged_batch_and_native_index(session, ks):
    session.execute("CREATE TABLE %s.users (id int PRIMARY KEY, email text, city text)" % ks)
    session.execute("CREATE TABLE %s.users_by_email (email text PRIMARY KEY, id int)" % ks)
    ins_u = session.prepare("INSERT INTO %s.users (id, email, city) VALUES (?, ?, ?)" % ks)
    ins_e = session.prepare("INSERT INTO %s.users_by_email (email, id) VALUES (?, ?)" % ks)
    del_e = session.prepare("DELETE FROM %s.users_by_email WHERE email = ?" % ks)
    b = BatchStatement(batch_type=BatchType.LOGGED)
    b.add(ins_u, (1, "a@x.org", "Oslo"))
    b.add(ins_e, ("a@x.org", 1))
    session.execute(b)
    # Change the email: old index entry deleted, new one written, atomically.
    b = BatchStatement(batch_type=BatchType.LOGGED)
    b.add(ins_u, (1, "b@x.org", "Oslo"))
    b.add(del_e, ("a@x.org",))
    b.add(ins_e, ("b@x.org", 1))
    session.execute(b)
    assert session.execute("SELECT id FROM %s.users_by_email WHERE email = 'a@x.org'" % ks).one() is None
    assert session.execute("SELECT id FROM %s.users_by_email WHERE email = 'b@x.org'" % ks).one().id == 1
    # Native secondary index.
    session.execute("CREATE INDEX users_city ON %s.users (city)" % ks)
    session.execute(ins_u, (2, "c@x.org", "Rome"))
    session.execute(ins_u, (3, "d@x.org", "Oslo"))
    got = sorted(r.id for r in session.execute("SELECT id FROM %s.users WHERE city = 'Oslo'" % ks))
    assert got == [1, 3]


def test_003_ad_network(session, ks):
    session.execute("CREATE TABLE %s.reseller_rates (reseller text, since timestamp, rate decimal, "
                    "PRIMARY KEY (reseller, since)) WITH CLUSTERING ORDER BY (since DESC)" % ks)
    session.execute("CREATE TABLE %s.clicks (reseller text, day date, ts timeuuid, cost decimal, "
                    "PRIMARY KEY ((reseller, day), ts))" % ks)
    session.execute("CREATE TABLE %s.click_counts (reseller text, day date, n counter, "
                    "PRIMARY KEY (reseller, day))" % ks)
    for m, rate in ((1, "0.10"), (3, "0.12"), (6, "0.15")):
        session.execute("INSERT INTO %s.reseller_rates (reseller, since, rate) VALUES ('acme', '2024-%02d-01', %s)"
                        % (ks, m, rate))
    latest = session.execute("SELECT rate FROM %s.reseller_rates WHERE reseller = 'acme' LIMIT 1" % ks).one()
    assert str(latest.rate) == "0.15"
    at = session.execute("SELECT rate FROM %s.reseller_rates WHERE reseller = 'acme' AND since <= '2024-04-15' "
                         "LIMIT 1" % ks).one()
    assert str(at.rate) == "0.12"
    ins = session.prepare("INSERT INTO %s.clicks (reseller, day, ts, cost) VALUES ('acme', '2024-06-02', now(), ?)"
                          % ks)
    cnt = session.prepare("UPDATE %s.click_counts SET n = n + 1 WHERE reseller = 'acme' AND day = '2024-06-02'" % ks)
    import decimal
    for i in range(25):
        session.execute(ins, (decimal.Decimal("0.15"),))
        session.execute(cnt)
    s = session.execute("SELECT sum(cost) AS total, count(*) AS n FROM %s.clicks WHERE reseller = 'acme' "
                        "AND day = '2024-06-02'" % ks).one()
    assert s.total == decimal.Decimal("3.75") and s.n == 25
    assert session.execute("SELECT n FROM %s.click_counts WHERE reseller = 'acme' AND day = '2024-06-02'"
                           % ks).one().n == 25
    # Upsert: INSERT over an existing row replaces its values.
    session.execute("INSERT INTO %s.reseller_rates (reseller, since, rate) VALUES ('acme', '2024-06-01', 0.2)" % ks)
    assert str(session.execute("SELECT rate FROM %s.reseller_rates WHERE reseller = 'acme' LIMIT 1"
                               % ks).one().rate) == "0.2"
    b = BatchStatement(batch_type=BatchType.UNLOGGED)
    for i in range(3):
        b.add(SimpleStatement("INSERT INTO %s.reseller_rates (reseller, since, rate) VALUES ('r%d', "
                              "'2024-01-01', 1)" % (ks, i)))
    session.execute(b)
    assert len(list(session.execute("SELECT reseller FROM %s.reseller_rates WHERE reseller IN ('r0', 'r1', 'r2')"
                                    % ks))) == 3


def test_004_time_series_buckets(session, ks):
    session.execute("CREATE TABLE %s.readings (sensor text, bucket int, ts timestamp, v double, "
                    "PRIMARY KEY ((sensor, bucket), ts)) WITH CLUSTERING ORDER BY (ts DESC)" % ks)
    session.execute("CREATE TABLE %s.buckets (sensor text, day date, bucket int, PRIMARY KEY ((sensor, day), bucket))"
                    % ks)
    ins = session.prepare("INSERT INTO %s.readings (sensor, bucket, ts, v) VALUES (?, ?, ?, ?)" % ks)
    insb = session.prepare("INSERT INTO %s.buckets (sensor, day, bucket) VALUES (?, ?, ?)" % ks)
    base = datetime.datetime(2024, 3, 1)
    for i in range(240):                         # every 6 minutes for a day
        ts = base + datetime.timedelta(minutes=6 * i)
        bucket = ts.hour // 6
        session.execute(ins, ("s1", bucket, ts, float(i)))
        session.execute(insb, ("s1", ts.date(), bucket))
    buckets = [r.bucket for r in session.execute(
        "SELECT bucket FROM %s.buckets WHERE sensor = 's1' AND day = '2024-03-01'" % ks)]
    assert buckets == [0, 1, 2, 3]
    sel = session.prepare("SELECT ts, v FROM %s.readings WHERE sensor = ? AND bucket IN ? "
                          "AND ts >= ? AND ts < ?" % ks)
    rows = list(session.execute(sel, ("s1", buckets, base + datetime.timedelta(hours=5),
                                      base + datetime.timedelta(hours=13))))
    assert sorted(r.v for r in rows) == [float(i) for i in range(50, 130)]
    # Within one bucket the newest come first.
    rows = list(session.execute("SELECT v FROM %s.readings WHERE sensor = 's1' AND bucket = 2 LIMIT 3" % ks))
    assert [r.v for r in rows] == [179.0, 178.0, 177.0]
