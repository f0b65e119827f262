"""Every CQL scalar type, round-tripped through the Python driver:
prepared statements (binary values), simple statements with parameters
(the driver formats CQL literals), literal CQL text, nulls and unset
values, bad literals, the type as partition key and as clustering key
(sort order, ASC and DESC), and counters.
"""

import datetime
import uuid

import pytest
from cassandra import InvalidRequest
from cassandra.query import SimpleStatement, UNSET_VALUE

from typedata import BAD_LITERALS, LITERALS, SCALAR_TYPES, VALUES, same


@pytest.fixture(scope="module")
def tables(session, ks):
    for t in SCALAR_TYPES:
        session.execute("CREATE TABLE %s.t_%s (k int PRIMARY KEY, v %s)" % (ks, t, t))
    cols = ", ".join("c_%s %s" % (t, t) for t in SCALAR_TYPES)
    session.execute("CREATE TABLE %s.all_types (k int PRIMARY KEY, %s)" % (ks, cols))
    return ks


def check_rows(rows, expected, t):
    got = {r.k: r.v for r in rows}
    for k, v in expected.items():
        assert k in got, "row %d missing (%s)" % (k, t)
        assert same(got[k], v), "%s k=%d: wrote %r, read %r" % (t, k, v, got[k])


@pytest.mark.parametrize("t", SCALAR_TYPES)
def test_prepared_roundtrip(session, tables, t):
    ins = session.prepare("INSERT INTO %s.t_%s (k, v) VALUES (?, ?)" % (tables, t))
    sel = session.prepare("SELECT k, v FROM %s.t_%s WHERE k = ?" % (tables, t))
    expected = {}
    for i, v in enumerate(VALUES[t]):
        session.execute(ins, (i, v))
        expected[i] = v
    for k, v in expected.items():
        check_rows(session.execute(sel, (k,)), {k: v}, t)
    # Unprepared read of the same rows, and the type in the result metadata.
    rs = session.execute("SELECT k, v FROM %s.t_%s WHERE k IN (%s)"
                         % (tables, t, ",".join(str(k) for k in expected)))
    # Cassandra sends text as varchar (0x000D), which the driver names so.
    assert rs.column_types[1].cql_parameterized_type() in ((t, "varchar") if t == "text" else (t,))
    check_rows(rs, expected, t)


@pytest.mark.parametrize("t", SCALAR_TYPES)
def test_simple_statement_params(session, tables, t):
    expected = {}
    for i, v in enumerate(VALUES[t]):
        k = 100 + i
        session.execute("INSERT INTO %s.t_%s (k, v) VALUES (%%s, %%s)" % (tables, t), (k, v))
        expected[k] = v
    rows = session.execute("SELECT k, v FROM %s.t_%s WHERE k IN (%s)"
                           % (tables, t, ",".join(str(k) for k in expected)))
    check_rows(rows, expected, t)


@pytest.mark.parametrize("t", SCALAR_TYPES)
def test_literals(session, tables, t):
    expected = {}
    for i, (lit, v) in enumerate(LITERALS.get(t, [])):
        k = 200 + i
        session.execute("INSERT INTO %s.t_%s (k, v) VALUES (%d, %s)" % (tables, t, k, lit))
        expected[k] = v
    for k, v in expected.items():
        check_rows(session.execute("SELECT k, v FROM %s.t_%s WHERE k = %d" % (tables, t, k)), {k: v}, t)


@pytest.mark.parametrize("t", SCALAR_TYPES)
def test_nulls_and_unset(session, tables, t):
    ins = session.prepare("INSERT INTO %s.t_%s (k, v) VALUES (?, ?)" % (tables, t))
    session.execute(ins, (300, None))
    session.execute("INSERT INTO %s.t_%s (k, v) VALUES (301, null)" % (tables, t))
    session.execute("INSERT INTO %s.t_%s (k) VALUES (302)" % (tables, t))
    v = VALUES[t][1]
    session.execute(ins, (303, v))
    session.execute(ins, (303, UNSET_VALUE))       # unset leaves the value alone
    session.execute(ins, (304, v))
    session.execute(ins, (304, None))              # null deletes it
    session.execute("UPDATE %s.t_%s SET v = null WHERE k = 305" % (tables, t))
    rows = {r.k: r for r in session.execute(
        "SELECT k, v FROM %s.t_%s WHERE k IN (300, 301, 302, 303, 304, 305)" % (tables, t))}
    assert rows[300].v is None and rows[301].v is None and rows[302].v is None
    assert same(rows[303].v, v)
    assert rows[304].v is None
    # UPDATE ... SET v = null on a missing row creates no row (no row marker).
    assert 305 not in rows


@pytest.mark.parametrize("t", sorted(BAD_LITERALS))
def test_bad_literals_rejected(session, tables, t):
    for lit in BAD_LITERALS[t]:
        with pytest.raises(InvalidRequest):
            session.execute("INSERT INTO %s.t_%s (k, v) VALUES (400, %s)" % (tables, t, lit))
    assert session.execute("SELECT v FROM %s.t_%s WHERE k = 400" % (tables, t)).one() is None


def test_all_types_one_row(session, tables):
    cols = ["c_" + t for t in SCALAR_TYPES]
    ins = session.prepare("INSERT INTO %s.all_types (k, %s) VALUES (?, %s)"
                          % (tables, ", ".join(cols), ", ".join("?" * len(cols))))
    for k, idx in ((1, 0), (2, 1), (3, -1)):
        session.execute(ins, [k] + [VALUES[t][idx] for t in SCALAR_TYPES])
    rs = session.execute("SELECT * FROM %s.all_types" % tables)
    # SELECT *: partition key first, then regular columns by name.
    assert rs.column_names == ["k"] + sorted(cols)
    rows = {r.k: r for r in rs}
    assert sorted(rows) == [1, 2, 3]
    for k, idx in ((1, 0), (2, 1), (3, -1)):
        for t in SCALAR_TYPES:
            assert same(getattr(rows[k], "c_" + t), VALUES[t][idx]), (k, t)


# -- the type as a key --------------------------------------------------------
KEY_TYPES = [t for t in SCALAR_TYPES if t != "duration"]


def sort_key(t, v):
    import ipaddress
    if t == "inet":
        return ipaddress.ip_address(v).packed
    if t == "date":
        return v.days_from_epoch
    if t == "time":
        return v.nanosecond_time
    if t == "timeuuid":
        return v.time
    if t == "uuid":
        return (v.int >> 76) & 0xF, v.int     # version first, then unsigned bytes
    if t in ("text", "ascii"):
        return v.encode()
    return v


def distinct_sorted(t):
    """VALUES[t] without NaN and values equal under the type's comparator,
    in the type's order."""
    out = []
    seen = set()
    for v in VALUES[t]:
        if isinstance(v, float) and v != v:
            continue
        key = sort_key(t, v)
        h = repr(float(key)) if t in ("decimal",) else repr(key)
        if h in seen:
            continue
        seen.add(h)
        out.append(v)
    return sorted(out, key=lambda v: sort_key(t, v))


@pytest.mark.parametrize("t", KEY_TYPES)
def test_type_as_partition_key(session, ks, t):
    session.execute("CREATE TABLE %s.pk_%s (k %s PRIMARY KEY, n int)" % (ks, t, t))
    ins = session.prepare("INSERT INTO %s.pk_%s (k, n) VALUES (?, ?)" % (ks, t))
    sel = session.prepare("SELECT k, n FROM %s.pk_%s WHERE k = ?" % (ks, t))
    # An empty partition key is refused ("Key may not be empty").
    vals = [v for v in VALUES[t] if v not in ("", b"")]
    for i, v in enumerate(vals):
        session.execute(ins, (v, i))
    for i, v in enumerate(vals):
        row = session.execute(sel, (v,)).one()
        assert row is not None, "%s: key %r not found" % (t, v)
        assert same(row.k, v)
    n = len(list(session.execute("SELECT k FROM %s.pk_%s" % (ks, t))))
    assert n == len(set(repr(v) for v in vals))


@pytest.mark.parametrize("order", ["ASC", "DESC"])
@pytest.mark.parametrize("t", KEY_TYPES)
def test_type_as_clustering_key_order(session, ks, t, order):
    tbl = "ck_%s_%s" % (t, order.lower())
    session.execute("CREATE TABLE %s.%s (p int, c %s, n int, PRIMARY KEY (p, c)) "
                    "WITH CLUSTERING ORDER BY (c %s)" % (ks, tbl, t, order))
    vals = distinct_sorted(t)
    ins = session.prepare("INSERT INTO %s.%s (p, c, n) VALUES (0, ?, ?)" % (ks, tbl))
    for i, v in enumerate(reversed(vals)):   # insert out of order
        session.execute(ins, (v, i))
    got = [r.c for r in session.execute("SELECT c FROM %s.%s WHERE p = 0" % (ks, tbl))]
    want = vals if order == "ASC" else list(reversed(vals))
    assert len(got) == len(want), (got, want)
    for g, w in zip(got, want):
        assert same(g, w), "%s %s order: got %r want %r" % (t, order, got, want)
    # ORDER BY the other way reverses the result.
    other = "DESC" if order == "ASC" else "ASC"
    rev = [r.c for r in session.execute("SELECT c FROM %s.%s WHERE p = 0 ORDER BY c %s"
                                        % (ks, tbl, other))]
    assert [sort_key(t, v) for v in rev] == [sort_key(t, v) for v in reversed(got)]
    # A slice between the second and the second-to-last value.
    if len(want) >= 4:
        lo, hi = vals[1], vals[-2]
        sel = session.prepare("SELECT c FROM %s.%s WHERE p = 0 AND c >= ? AND c < ?" % (ks, tbl))
        sl = [sort_key(t, r.c) for r in session.execute(sel, (lo, hi))]
        exp = [sort_key(t, v) for v in vals[1:-2]]
        assert sl == (exp if order == "ASC" else list(reversed(exp)))


def test_empty_partition_key_refused(session, ks):
    session.execute("CREATE TABLE %s.pk_empty (k text PRIMARY KEY, n int)" % ks)
    with pytest.raises(InvalidRequest, match="Key may not be empty"):
        session.execute("INSERT INTO %s.pk_empty (k, n) VALUES ('', 1)" % ks)


def test_duration_not_allowed_in_primary_key(session, ks):
    with pytest.raises(InvalidRequest):
        session.execute("CREATE TABLE %s.dur_pk (k duration PRIMARY KEY, v int)" % ks)
    with pytest.raises(InvalidRequest):
        session.execute("CREATE TABLE %s.dur_ck (k int, c duration, PRIMARY KEY (k, c))" % ks)


# -- counters -----------------------------------------------------------------
def test_counter_updates(session, ks):
    session.execute("CREATE TABLE %s.cnt (k int PRIMARY KEY, c counter, d counter)" % ks)
    for _ in range(3):
        session.execute("UPDATE %s.cnt SET c = c + 1 WHERE k = 1" % ks)
    session.execute("UPDATE %s.cnt SET c = c - 5, d = d + 9223372036854775807 WHERE k = 1" % ks)
    upd = session.prepare("UPDATE %s.cnt SET c = c + ? WHERE k = ?" % ks)
    session.execute(upd, (100, 1))
    session.execute(upd, (-2**63, 2))
    row = session.execute("SELECT c, d FROM %s.cnt WHERE k = 1" % ks).one()
    assert row.c == 98 and row.d == 2**63 - 1
    assert session.execute("SELECT c, d FROM %s.cnt WHERE k = 2" % ks).one().c == -2**63
    rs = session.execute("SELECT c FROM %s.cnt WHERE k = 1" % ks)
    assert rs.column_types[0].cql_parameterized_type() == "counter"
    sel = session.prepare("SELECT c FROM %s.cnt WHERE k = ?" % ks)
    assert session.execute(sel, (1,)).one().c == 98
    assert session.execute(sel, (3,)).one() is None


def test_counter_rules(session, ks):
    session.execute("CREATE TABLE IF NOT EXISTS %s.cnt2 (k int PRIMARY KEY, c counter)" % ks)
    with pytest.raises(InvalidRequest):
        session.execute("INSERT INTO %s.cnt2 (k, c) VALUES (1, 1)" % ks)
    with pytest.raises(InvalidRequest):
        session.execute("UPDATE %s.cnt2 SET c = 5 WHERE k = 1" % ks)
    with pytest.raises(InvalidRequest):
        session.execute("CREATE TABLE %s.cnt_mixed (k int PRIMARY KEY, c counter, v int)" % ks)


def test_writetime_and_ttl(session, tables):
    session.execute("INSERT INTO %s.t_int (k, v) VALUES (500, 1) USING TIMESTAMP 1234567 AND TTL 1000"
                    % tables)
    row = session.execute("SELECT writetime(v) AS wt, ttl(v) AS tl FROM %s.t_int WHERE k = 500"
                          % tables).one()
    assert row.wt == 1234567
    assert 990 <= row.tl <= 1000


def test_now_and_uuid_functions(session, tables):
    session.execute("INSERT INTO %s.t_timeuuid (k, v) VALUES (600, now())" % tables)
    session.execute("INSERT INTO %s.t_uuid (k, v) VALUES (600, uuid())" % tables)
    tu = session.execute("SELECT v FROM %s.t_timeuuid WHERE k = 600" % tables).one().v
    u = session.execute("SELECT v FROM %s.t_uuid WHERE k = 600" % tables).one().v
    assert isinstance(tu, uuid.UUID) and tu.version == 1
    assert isinstance(u, uuid.UUID) and u.version == 4
    when = datetime.datetime(1582, 10, 15) + datetime.timedelta(microseconds=tu.time // 10)
    assert abs((when - datetime.datetime.utcnow()).total_seconds()) < 600


def test_paged_simple_statement_types(session, tables):
    # Values come back identically when the result is paged.
    st = SimpleStatement("SELECT k, v FROM %s.t_varint" % tables, fetch_size=3)
    got = {r.k: r.v for r in session.execute(st)}
    for i, v in enumerate(VALUES["varint"]):
        assert got[i] == v


def test_ttl_expiry(session, ks):
    """Cells written with a TTL disappear when it runs out; a table's
    default_time_to_live applies to writes without USING TTL.  Expiry has
    one-second granularity (local deletion time in seconds), so the checks
    leave a second of slack either way."""
    import time
    session.execute("CREATE TABLE %s.ttl_t (k int PRIMARY KEY, a int, b int) WITH default_time_to_live = 5" % ks)
    t0 = time.monotonic()
    session.execute("INSERT INTO %s.ttl_t (k, a) VALUES (1, 1) USING TTL 1" % ks)
    session.execute("INSERT INTO %s.ttl_t (k, a) VALUES (2, 2)" % ks)               # table default: 5 s
    session.execute("INSERT INTO %s.ttl_t (k, a) VALUES (3, 3) USING TTL 0" % ks)   # 0: never expires
    session.execute("UPDATE %s.ttl_t USING TTL 100 SET b = 9 WHERE k = 3" % ks)
    assert session.execute("SELECT ttl(a) AS t FROM %s.ttl_t WHERE k = 2" % ks).one().t in (4, 5)
    time.sleep(max(0.0, 2.1 - (time.monotonic() - t0)))
    assert session.execute("SELECT a FROM %s.ttl_t WHERE k = 1" % ks).one() is None
    if time.monotonic() - t0 < 3.5:
        assert session.execute("SELECT a FROM %s.ttl_t WHERE k = 2" % ks).one().a == 2
    time.sleep(max(0.0, 6.1 - (time.monotonic() - t0)))
    assert session.execute("SELECT a FROM %s.ttl_t WHERE k = 2" % ks).one() is None
    row = session.execute("SELECT a, b, ttl(b) AS tb FROM %s.ttl_t WHERE k = 3" % ks).one()
    assert row.a == 3 and row.b == 9 and 90 <= row.tb <= 100


def test_temporal_arithmetic(session, ks):
    """timestamp / date +/- duration (Cassandra 4.0+): in the selection, in
    WHERE (a time window from currentTimestamp()), in INSERT values and with
    bound markers, which take the receiver's type (timestamp, date) and a
    duration; months clamp to the end of the month; precision refusals."""
    from cassandra.util import Date, Duration
    session.execute("CREATE TABLE %s.ev (p int, ts timestamp, d date, v int, PRIMARY KEY (p, ts))" % ks)
    session.execute("INSERT INTO %s.ev (p, ts, d, v) VALUES (1, '2024-01-31 10:00:00+0000', '2024-03-31', 1)" % ks)
    r = session.execute("SELECT ts + 1mo AS a, d - 1mo AS b, ts - 1h30m AS c, d + 1y AS e FROM %s.ev WHERE p = 1"
                        % ks).one()
    assert r.a == datetime.datetime(2024, 2, 29, 10, 0)
    assert r.b == Date(datetime.date(2024, 2, 29))
    assert r.c == datetime.datetime(2024, 1, 31, 8, 30)
    assert r.e == Date(datetime.date(2025, 3, 31))
    # a window relative to now, as time-series queries write it
    session.execute("INSERT INTO %s.ev (p, ts, d, v) VALUES (2, currentTimestamp() - 30m, currentDate() - 1d, 2)"
                    % ks)
    session.execute("INSERT INTO %s.ev (p, ts, d, v) VALUES (2, currentTimestamp() - 3h, currentDate() - 1d, 3)"
                    % ks)
    got = [x.v for x in session.execute(
        "SELECT v FROM %s.ev WHERE p = 2 AND ts > currentTimestamp() - 1h" % ks)]
    assert got == [2]
    # bound markers: typed by the receiver
    sel = session.prepare("SELECT v FROM %s.ev WHERE p = ? AND ts >= ? - 1h AND ts < ? + 1d" % ks)
    names = [(c.name, c.type.typename) for c in sel.column_metadata]
    assert names == [("p", "int"), ("arg0(system._substract)", "timestamp"), ("arg0(system._add)", "timestamp")]
    assert [x.v for x in session.execute(sel, (1, datetime.datetime(2024, 1, 31, 11, 0),
                                              datetime.datetime(2024, 1, 31, 0, 0)))] == [1]
    ins = session.prepare("INSERT INTO %s.ev (p, ts, d, v) VALUES (?, ? + ?, ?, ?)" % ks)
    assert [c.type.typename for c in ins.column_metadata][1:3] == ["timestamp", "duration"]
    session.execute(ins, (3, datetime.datetime(2024, 2, 29, 0, 0), Duration(12, 0, 0), Date(0), 9))
    assert session.execute("SELECT ts FROM %s.ev WHERE p = 3" % ks).one().ts == datetime.datetime(2025, 2, 28)
    for q, msg in (("SELECT d + 1h FROM %s.ev WHERE p = 1", "The duration must have a day precision. Was: 1h"),
                   ("SELECT ts + 1ms1us FROM %s.ev WHERE p = 1",
                    "The duration must have a millisecond precision. Was: 1ms1us"),
                   ("SELECT 1d + ts FROM %s.ev WHERE p = 1", "the '+' operation is not supported between 1d and ts")):
        with pytest.raises(InvalidRequest) as ei:
            session.execute(q % ks)
        assert msg in str(ei.value)


def test_floor_and_group_by_time(session, ks):
    """floor() and GROUP BY floor(ts, 1h) (Cassandra 4.0+): hourly rollups
    of a day-bucketed time series, the same through every page size and a
    prepared statement; the refusals."""
    from cassandra.query import SimpleStatement
    session.execute("CREATE TABLE %s.ts (sensor int, day date, ts timestamp, v int, "
                    "PRIMARY KEY ((sensor, day), ts))" % ks)
    ins = session.prepare("INSERT INTO %s.ts (sensor, day, ts, v) VALUES (?, '2024-05-01', ?, ?)" % ks)
    base = datetime.datetime(2024, 5, 1)
    for sensor in range(3):
        for i in range(0, 300, 7):   # every 7 minutes for 5 hours
            session.execute(ins, (sensor, base + datetime.timedelta(minutes=i), i))
    q = ("SELECT sensor, floor(ts, 1h) AS hour, count(*) AS n, min(v) AS lo, max(v) AS hi FROM %s.ts "
         "GROUP BY sensor, day, floor(ts, 1h)" % ks)
    full = list(session.execute(q))
    assert len(full) == 15
    for r in full:
        minutes = [i for i in range(0, 300, 7) if (base + datetime.timedelta(minutes=i)).hour == r.hour.hour]
        assert (r.n, r.lo, r.hi) == (len(minutes), minutes[0], minutes[-1]), r
    for fs in (1, 2, 4, 100):
        assert list(session.execute(SimpleStatement(q, fetch_size=fs))) == full, fs
    p = session.prepare("SELECT floor(ts, 2h) AS h, sum(v) AS s FROM %s.ts WHERE sensor = ? AND day = ? "
                        "GROUP BY floor(ts, 2h)" % ks)
    from cassandra.util import Date
    got = list(session.execute(p, (1, Date(datetime.date(2024, 5, 1)))))
    assert [r.h for r in got] == [base, base + datetime.timedelta(hours=2), base + datetime.timedelta(hours=4)]
    assert sum(r.s for r in got) == sum(range(0, 300, 7))
    # bound markers as function arguments in the selection and in GROUP BY
    from cassandra.util import Duration
    p = session.prepare("SELECT floor(ts, ?) AS h, count(*) AS n FROM %s.ts WHERE sensor = ? AND day = ? "
                        "GROUP BY floor(ts, ?)" % ks)
    assert [(c.name, c.type.typename) for c in p.column_metadata] == [
        ("[selection]", "duration"), ("sensor", "int"), ("day", "date"), ("[selection]", "duration")]
    three_h = Duration(0, 0, 3 * 3600 * 10 ** 9)
    got = list(session.execute(p, (three_h, 2, Date(datetime.date(2024, 5, 1)), three_h)))
    assert [(r.h, r.n) for r in got] == [(base, len(range(0, 180, 7))),
                                         (base + datetime.timedelta(hours=3), len(range(182, 300, 7)))]
    assert session.execute("SELECT floor(ts, 1d, '2024-04-30 12:00:00+0000') AS f FROM %s.ts LIMIT 1"
                           % ks).one().f == datetime.datetime(2024, 4, 30, 12, 0)
    for q, msg in (
            ("SELECT count(*) FROM %s.ts GROUP BY sensor, day, max(ts)",
             "Aggregate functions are not supported within the GROUP BY clause, got: system.max"),
            ("SELECT count(*) FROM %s.ts GROUP BY sensor, floor(ts, 1h)",
             "Group by currently only support groups of columns following their declared order in the PRIMARY KEY"),
            ("SELECT floor(ts, -1h) FROM %s.ts", "Negative durations are not supported by the floor function"),
            ("SELECT floor(v, 1h) FROM %s.ts", "Invalid call to function floor, none of its type signatures match")):
        with pytest.raises(InvalidRequest) as ei:
            session.execute(q % ks)
        assert msg in str(ei.value), str(ei.value)


def test_varint_and_decimal_operators(session, ks):
    """+ - * / % and negation on varint and decimal (OperationFcts with
    IntegerType's and DecimalType's arithmetic), with the wider type as the
    result, through the driver's Decimal and int; a number literal takes
    int, bigint or varint by its size, double or decimal by whether a double
    holds it (Constants.Type.getPreferedTypeFor); failures are 0x1400."""
    from decimal import Decimal
    from cassandra import FunctionFailure
    session.execute("CREATE TABLE %s.ops (k int PRIMARY KEY, vi varint, de decimal, f float)" % ks)
    session.execute("INSERT INTO %s.ops (k, vi, de, f) VALUES (1, %%s, %%s, 1.5)" % ks,
                    (12345678901234567890, Decimal("3.14159")))
    r = session.execute("SELECT vi + 1 AS a, vi * vi AS b, vi / 7 AS c, vi %% 7 AS d, -vi AS e, vi + f AS g, "
                        "de * 2 AS h, de / 3 AS i, de %% 1 AS j, vi * de AS l FROM %s.ops WHERE k = 1" % ks).one()
    assert r.a == 12345678901234567891 and r.b == 12345678901234567890 ** 2
    assert r.c == 12345678901234567890 // 7 and r.d == 12345678901234567890 % 7 and r.e == -12345678901234567890
    assert r.g == Decimal("12345678901234567891.5")
    assert r.h == Decimal("6.283180") and str(r.h) == "6.283180"        # de * 2.0
    assert str(r.i) == "1.04719666666666666666666666666667"
    assert r.j == Decimal("0.14159") and r.l == Decimal("38785061379329506137.54510")
    r = session.execute("SELECT k + 12345678901234567 AS a, k + 123456789012345678901 AS b, "
                        "k + 1.23456789012345678 AS c FROM %s.ops WHERE k = 1" % ks)
    cols = {c: t for c, t in zip(r.column_names, r.column_types)}
    row = r.one()
    assert row.a == 12345678901234568 and cols["a"].typename == "bigint"
    assert row.b == 123456789012345678902 and cols["b"].typename == "varint"
    assert row.c == Decimal("2.23456789012345678") and cols["c"].typename == "decimal"
    for q, msg in (("vi / 0", "the operation 'varint / int' failed: BigInteger divide by zero"),
                   ("de %% 0", "the operation 'decimal %% int' failed: Division by zero"),
                   ("k / 0", "the operation 'int / int' failed: / by zero")):
        with pytest.raises(FunctionFailure) as ei:
            session.execute(("SELECT " + q + " FROM %s.ops WHERE k = 1") % ks)
        assert msg.replace("%%", "%") in str(ei.value), str(ei.value)


def test_functions_over_aggregates(session, ks):
    """Scalar functions, operators and casts over aggregates (`max(v) - min(v)`,
    `CAST(count(*) AS int)`), per group and through every page size, as
    Cassandra's FunctionSelector applies them to its aggregate arguments;
    an empty selection still answers count(*) + 1 = 1."""
    from cassandra.query import SimpleStatement
    session.execute("CREATE TABLE %s.fa (k int, c int, v int, PRIMARY KEY (k, c))" % ks)
    ins = session.prepare("INSERT INTO %s.fa (k, c, v) VALUES (?, ?, ?)" % ks)
    for k in range(4):
        for c in range(10):
            session.execute(ins, (k, c, k * 100 + c * c))
    q = ("SELECT k, max(v) - min(v) AS spread, CAST(count(*) AS int) AS n, sum(v) / count(*) AS mean, "
         "count(*) + 1 AS n1 FROM %s.fa GROUP BY k" % ks)
    full = sorted(session.execute(q))
    assert [(r.k, r.spread, r.n, r.mean, r.n1) for r in full] == [
        (k, 81, 10, (sum(k * 100 + c * c for c in range(10))) // 10, 11) for k in range(4)]
    for fs in (1, 3, 100):
        assert sorted(session.execute(SimpleStatement(q, fetch_size=fs))) == full, fs
    p = session.prepare("SELECT max(v) + 1000 AS m FROM %s.fa WHERE k = ?" % ks)
    assert session.execute(p, (2,)).one().m == 1281
    assert session.execute("SELECT count(*) + 1 AS n FROM %s.fa WHERE k = 99" % ks).one().n == 1
    assert session.execute("SELECT max(v) + 1 AS m FROM %s.fa WHERE k = 99" % ks).one().m is None
    for q, msg in (("SELECT count(max(v)) FROM %s.fa", "aggregate functions cannot be used as arguments of aggregate functions"),
                   ("SELECT fromJson('1') FROM %s.fa", "fromJson() cannot be used in the selection clause of a SELECT statement"),
                   ("SELECT * FROM %s.fa WHERE k = 1 AND c = toJson(1)",
                    "toJson() may only be used within the selection clause of SELECT statements")):
        with pytest.raises(InvalidRequest) as ei:
            session.execute(q % ks)
        assert msg in str(ei.value), str(ei.value)
