"""The Python driver's object mapper (cassandra.cqlengine) against the server,
the way an application's test suite uses it: sync_table creates and then
alters the table from the model (reading system_schema to diff it), models
with clustering order, static, collection, counter, UDT and indexed
columns, QuerySet filters, ordering, limits and paging, LWT (if_not_exists,
iff, if_exists), TTL and timestamps, batches, and drop_table.

cqlengine sets its session's row_factory to dict_factory, so the module has
its own Cluster: the shared session keeps the default named tuples.
"""

import datetime
import uuid
from decimal import Decimal

import pytest

import cassette_harness as H

from cassandra.cqlengine import columns, connection, management, models, query
from cassandra.cqlengine import usertype
from cassandra.cqlengine.query import BatchQuery, LWTException

CONN = "cqe"


@pytest.fixture(scope="module")
def cqe(contact, ks):
    cluster, sess = H.connect(*contact)
    connection.register_connection(CONN, session=sess, default=True)
    yield sess
    connection.unregister_connection(CONN)
    cluster.shutdown()


def _model(ks, name, attrs):
    attrs = dict(attrs)
    attrs["__keyspace__"] = ks
    attrs["__table_name__"] = name
    attrs["__connection__"] = CONN
    return type(name, (models.Model,), attrs)


def test_sync_table_creates_then_alters(cqe, ks):
    V1 = _model(ks, "evolving", {
        "id": columns.UUID(primary_key=True, default=uuid.uuid4),
        "name": columns.Text(),
    })
    management.sync_table(V1, keyspaces=[ks], connections=[CONN])
    cols = {r["column_name"]: r["type"] for r in cqe.execute(
        "SELECT column_name, type FROM system_schema.columns "
        "WHERE keyspace_name = %s AND table_name = 'evolving'", (ks,))}
    assert cols == {"id": "uuid", "name": "text"}
    a = V1.create(name="first")

    # The model grows a column and an index: sync_table diffs the model
    # against system_schema and issues ALTER TABLE ADD and CREATE INDEX.
    V2 = _model(ks, "evolving", {
        "id": columns.UUID(primary_key=True, default=uuid.uuid4),
        "name": columns.Text(),
        "age": columns.Integer(index=True),
    })
    management.sync_table(V2, keyspaces=[ks], connections=[CONN])
    cols = {r["column_name"]: r["type"] for r in cqe.execute(
        "SELECT column_name, type FROM system_schema.columns "
        "WHERE keyspace_name = %s AND table_name = 'evolving'", (ks,))}
    assert cols == {"id": "uuid", "name": "text", "age": "int"}
    idx = [r["index_name"] for r in cqe.execute(
        "SELECT index_name FROM system_schema.indexes "
        "WHERE keyspace_name = %s AND table_name = 'evolving'", (ks,))]
    assert len(idx) == 1
    # Syncing again is a no-op (nothing to alter, the index exists).
    management.sync_table(V2, keyspaces=[ks], connections=[CONN])

    got = V2.objects(id=a.id).get()
    assert got.name == "first" and got.age is None
    V2.objects(id=a.id).update(age=41)
    V2.create(name="second", age=7)
    H.wait_for(lambda: [m.name for m in V2.objects(age=41)] == ["first"],
               timeout=30, what="the index to answer")
    assert V2.objects.count() == 2


def test_clustering_order_filters_paging(cqe, ks):
    Reading = _model(ks, "readings", {
        "sensor": columns.Text(partition_key=True),
        "day": columns.Date(partition_key=True),
        "ts": columns.DateTime(primary_key=True, clustering_order="DESC"),
        "value": columns.Double(),
        "note": columns.Text(),
    })
    management.sync_table(Reading, keyspaces=[ks], connections=[CONN])
    day = datetime.date(2026, 12, 1)
    t0 = datetime.datetime(2026, 12, 1, 0, 0, 0)
    for i in range(250):
        Reading.create(sensor="s1", day=day, ts=t0 + datetime.timedelta(minutes=i),
                       value=i * 0.5, note="n%d" % i)
    Reading.create(sensor="s2", day=day, ts=t0, value=-1.0)

    qs = Reading.objects(sensor="s1", day=day)
    # Newest first (the table's clustering order), paged by the driver.
    rows = list(qs.fetch_size(40))
    assert len(rows) == 250
    assert [r.value for r in rows[:3]] == [124.5, 124.0, 123.5]
    assert rows[-1].ts == t0
    # order_by on the clustering column reverses; limit applies after.
    asc = list(qs.order_by("ts").limit(5))
    assert [r.value for r in asc] == [0.0, 0.5, 1.0, 1.5, 2.0]
    # Range on the clustering column.
    since = t0 + datetime.timedelta(minutes=245)
    assert [r.note for r in qs.filter(ts__gte=since)] == ["n249", "n248", "n247", "n246", "n245"]
    assert qs.filter(ts__gt=since, ts__lt=since + datetime.timedelta(minutes=3)).count() == 2
    # IN on the last partition key component.
    both = Reading.objects(sensor__in=["s1", "s2"], day=day)
    assert both.count() == 251
    # A filter on a regular column needs ALLOW FILTERING, as on Cassandra.
    from cassandra import InvalidRequest
    with pytest.raises(InvalidRequest) as e:
        list(Reading.objects(sensor="s1", day=day, note="n7"))
    assert "ALLOW FILTERING" in str(e.value)
    got = list(Reading.objects(sensor="s1", day=day, note="n7").allow_filtering())
    assert len(got) == 1 and got[0].value == 3.5
    # values_list and only()
    assert Reading.objects(sensor="s2", day=day).values_list("value", flat=True)[0] == -1.0
    first = Reading.objects(sensor="s1", day=day).only(["ts"]).first()
    assert first.ts == t0 + datetime.timedelta(minutes=249)


def test_collections_static_and_updates(cqe, ks):
    Profile = _model(ks, "profiles", {
        "team": columns.Text(partition_key=True),
        "user": columns.Text(primary_key=True),
        "motto": columns.Text(static=True),
        "tags": columns.Set(columns.Text),
        "history": columns.List(columns.Integer),
        "prefs": columns.Map(columns.Text, columns.Text),
        "balance": columns.Decimal(),
        "frozen_list": columns.Tuple(columns.Integer, columns.Text),
    })
    management.sync_table(Profile, keyspaces=[ks], connections=[CONN])
    Profile.create(team="red", user="ann", motto="go", tags={"a"}, history=[1],
                   prefs={"k": "v"}, balance=Decimal("10.25"), frozen_list=(1, "x"))
    Profile.create(team="red", user="bob", tags=set(), history=[])
    # The static column is shared by the partition.
    assert {p.motto for p in Profile.objects(team="red")} == {"go"}
    # As on Cassandra, an UPDATE of static columns only names no clustering
    # column; the partition key alone addresses the static row.
    from cassandra import InvalidRequest
    with pytest.raises(InvalidRequest) as e:
        Profile.objects(team="red", user="bob").update(motto="stop")
    assert "modifies only static columns" in str(e.value)
    Profile.objects(team="red").update(motto="stop")
    assert Profile.get(team="red", user="ann").motto == "stop"

    # A QuerySet caches its result once read: every read below is a fresh
    # Profile.get(), so it reaches the server.
    q = Profile.objects(team="red", user="ann")
    q.update(tags__add={"b", "c"}, history__append=[2, 3], prefs__update={"z": "26"})
    q.update(history__prepend=[0], tags__remove={"a"}, prefs__remove={"k"})
    p = Profile.get(team="red", user="ann")
    assert p.tags == {"b", "c"}
    assert p.history == [0, 1, 2, 3]
    assert p.prefs == {"z": "26"}
    assert p.balance == Decimal("10.25")
    assert p.frozen_list == (1, "x")
    # Model-instance save with changed fields only.
    p.balance = Decimal("-0.5")
    p.history = p.history + [4]
    p.save()
    again = Profile.get(team="red", user="ann")
    assert again.balance == Decimal("-0.5") and again.history == [0, 1, 2, 3, 4]
    # An empty collection reads back as empty (null on the wire).
    bob = Profile.get(team="red", user="bob")
    assert bob.tags == set() and bob.history == []
    # Delete one column, then the row.
    q.update(prefs=None)
    assert Profile.get(team="red", user="ann").prefs == {}
    q.delete()
    assert Profile.objects(team="red").count() == 1
    with pytest.raises(Profile.DoesNotExist):
        Profile.get(team="red", user="ann")


def test_lwt_ttl_timestamp(cqe, ks):
    Account = _model(ks, "accounts", {
        "name": columns.Text(primary_key=True),
        "email": columns.Text(),
        "version": columns.Integer(),
    })
    management.sync_table(Account, keyspaces=[ks], connections=[CONN])
    Account.if_not_exists().create(name="kim", email="kim@a", version=1)
    with pytest.raises(LWTException) as e:
        Account.if_not_exists().create(name="kim", email="other", version=9)
    # The exception carries the existing row, as Cassandra returns it.
    assert e.value.existing["email"] == "kim@a"
    assert e.value.existing["[applied]"] is False

    Account.objects(name="kim").iff(version=1).update(email="kim@b", version=2)
    with pytest.raises(LWTException):
        Account.objects(name="kim").iff(version=1).update(email="stale")
    assert Account.get(name="kim").email == "kim@b"
    with pytest.raises(LWTException):
        Account.objects(name="nobody").if_exists().update(email="x")
    Account.objects(name="kim").if_exists().update(email="kim@c")
    assert Account.get(name="kim").email == "kim@c"

    # TTL: the cell's ttl() shows it; an expired row disappears.
    Account.ttl(3600).create(name="tmp", email="t", version=0)
    ttl = cqe.execute("SELECT ttl(email) AS t FROM %s.accounts WHERE name = 'tmp'" % ks).one()["t"]
    assert 3590 <= ttl <= 3600
    Account.ttl(1).create(name="gone", email="g", version=0)
    H.wait_for(lambda: Account.objects(name="gone").count() == 0, timeout=10,
               what="the 1 s TTL to expire")
    # USING TIMESTAMP: an older write loses to a newer one.
    Account.timestamp(datetime.timedelta(seconds=0)).create(name="ts", email="new", version=5)
    old = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=1)
    Account.objects(name="ts").timestamp(old).update(email="old")
    assert Account.get(name="ts").email == "new"


def test_batch_counters_udt_and_drop(cqe, ks):
    class Address(usertype.UserType):
        __type_name__ = "address"
        __keyspace__ = ks
        __connection__ = CONN
        street = columns.Text()
        zip = columns.Integer()

    Person = _model(ks, "people", {
        "id": columns.Integer(primary_key=True),
        "home": columns.UserDefinedType(Address),
        "others": columns.List(columns.UserDefinedType(Address)),
    })
    Hits = _model(ks, "hits", {
        "page": columns.Text(primary_key=True),
        "views": columns.Counter(),
        "likes": columns.Counter(),
    })
    management.sync_type(ks, Address, connection=CONN)
    management.sync_table(Person, keyspaces=[ks], connections=[CONN])
    management.sync_table(Hits, keyspaces=[ks], connections=[CONN])

    with BatchQuery() as b:
        for i in range(20):
            Person.batch(b).create(id=i, home=Address(street="s%d" % i, zip=1000 + i),
                                   others=[Address(street="o", zip=i)])
    assert Person.objects.count() == 20
    p = Person.get(id=7)
    assert p.home.street == "s7" and p.home.zip == 1007
    assert [a.zip for a in p.others] == [7]

    for _ in range(5):
        Hits.objects(page="/").update(views=1)
    Hits.objects(page="/").update(likes=3, views=-2)
    h = Hits.get(page="/")
    assert (h.views, h.likes) == (3, 3)
    # Counter batches are their own batch type.
    with BatchQuery(batch_type=query.BatchType.Counter) as b:
        Hits.objects(page="/a").batch(b).update(views=10)
        Hits.objects(page="/b").batch(b).update(views=20)
    assert {x.page: x.views for x in Hits.objects.all()} == {"/": 3, "/a": 10, "/b": 20}

    management.drop_table(Person, keyspaces=[ks], connections=[CONN])
    management.drop_table(Hits, keyspaces=[ks], connections=[CONN])
    left = {r["table_name"] for r in cqe.execute(
        "SELECT table_name FROM system_schema.tables WHERE keyspace_name = %s", (ks,))}
    assert "people" not in left and "hits" not in left
