"""Guardrails (Cassandra 4.1's db/guardrails) set in cassandra.yaml: they
bind ordinary users only (PasswordAuthenticator, a role that is not a
superuser), so the superuser cassandra goes past every one of them while a
plain role gets Cassandra's warnings and InvalidRequest failures, each
"Guardrail <name> violated: <message>"."""

import pytest
from cassandra import ConsistencyLevel, InvalidRequest
from cassandra.auth import PlainTextAuthProvider
from cassandra.cluster import Cluster
from cassandra.query import SimpleStatement

import cassette_harness as H

pytestmark = pytest.mark.skipif(not H.is_cassette(), reason="starts a server with a config file")

CONFIG = """authenticator: PasswordAuthenticator
keyspaces_warn_threshold: 1
keyspaces_fail_threshold: 2
tables_warn_threshold: 2
tables_fail_threshold: 3
columns_per_table_warn_threshold: 3
columns_per_table_fail_threshold: 4
secondary_indexes_per_table_fail_threshold: 1
materialized_views_per_table_warn_threshold: 1
fields_per_udt_fail_threshold: 2
page_size_warn_threshold: 6000
page_size_fail_threshold: 10000
partition_keys_in_select_warn_threshold: 2
partition_keys_in_select_fail_threshold: 3
allow_filtering_enabled: false
user_timestamps_enabled: false
group_by_enabled: false
drop_truncate_table_enabled: false
read_before_write_list_operations_enabled: false
compact_tables_enabled: false
read_consistency_levels_disallowed: [ALL, EACH_QUORUM]
read_consistency_levels_warned: [QUORUM]
write_consistency_levels_disallowed:
  - ANY
"""


@pytest.fixture
def guarded(tmp_path):
    cfg = tmp_path / "cassette.yaml"
    cfg.write_text(CONFIG)
    s = H.Server(tmp_path / "srv", extra_args=["--config", str(cfg)])
    s.start()
    yield s
    s.stop()


def session_of(s, user, password):
    c = Cluster([s.host], port=s.port, auth_provider=PlainTextAuthProvider(user, password), connect_timeout=10)
    return c, c.connect()


def refused(sess, q, msg, **kw):
    with pytest.raises(InvalidRequest) as ei:
        sess.execute(SimpleStatement(q, **kw) if kw else q)
    assert msg in str(ei.value), str(ei.value)


def warned(sess, q, **kw):
    f = sess.execute_async(SimpleStatement(q, **kw))
    f.result()
    return f.warnings or []


def test_guardrails_bind_ordinary_users(guarded):
    ca, sup = session_of(guarded, "cassandra", "cassandra")
    try:
        sup.execute("CREATE ROLE app WITH PASSWORD = 'pw' AND LOGIN = true")
        sup.execute("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        sup.execute("CREATE TABLE ks.t (k int, c int, v int, l list<int>, PRIMARY KEY (k, c))")
        for k in range(5):
            sup.execute("INSERT INTO ks.t (k, c, v, l) VALUES (%d, 1, 1, [1, 2])" % k)
        # the superuser is not bound
        assert sup.execute("SELECT * FROM ks.t WHERE v = 1 ALLOW FILTERING").all()
        sup.execute("INSERT INTO ks.t (k, c, v) VALUES (9, 9, 9) USING TIMESTAMP 5")
        cu, app = session_of(guarded, "app", "pw")
        try:
            refused(app, "SELECT * FROM ks.t WHERE v = 1 ALLOW FILTERING",
                    "Guardrail allow_filtering violated: Querying with ALLOW FILTERING is not allowed")
            refused(app, "SELECT k, count(*) FROM ks.t GROUP BY k",
                    "Guardrail group_by violated: GROUP BY functionality is not allowed")
            refused(app, "INSERT INTO ks.t (k, c, v) VALUES (1, 1, 1) USING TIMESTAMP 5",
                    "Guardrail user_timestamps violated: User provided timestamps (USING TIMESTAMP) is not allowed")
            refused(app, "UPDATE ks.t SET l[0] = 5 WHERE k = 1 AND c = 1",
                    "Guardrail read_before_write_list_operations violated: Setting of list items by index "
                    "requiring read before write is not allowed")
            refused(app, "UPDATE ks.t SET l = l - [1] WHERE k = 1 AND c = 1",
                    "Removal of list items requiring read before write is not allowed")
            refused(app, "DELETE l[0] FROM ks.t WHERE k = 1 AND c = 1",
                    "Removal of list items by index requiring read before write is not allowed")
            app.execute("UPDATE ks.t SET l = l + [3] WHERE k = 1 AND c = 1")   # no read needed
            refused(app, "TRUNCATE ks.t",
                    "Guardrail drop_truncate_table_enabled violated: DROP and TRUNCATE TABLE functionality is not allowed")
            refused(app, "DROP TABLE IF EXISTS ks.nope", "DROP and TRUNCATE TABLE functionality is not allowed")
            # consistency levels: disallowed, warned, the write's serial consistency too
            refused(app, "SELECT * FROM ks.t WHERE k = 1", "Guardrail read_consistency_levels violated: Provided "
                    "values [ALL] are not allowed for read consistency levels (disallowed values are: [ALL, EACH_QUORUM])",
                    consistency_level=ConsistencyLevel.ALL)
            w = warned(app, "SELECT * FROM ks.t WHERE k = 1", consistency_level=ConsistencyLevel.QUORUM)
            assert w == ["Guardrail read_consistency_levels violated: Provided values [QUORUM] are not recommended "
                         "for read consistency levels (warned values are: [QUORUM])"], w
            refused(app, "INSERT INTO ks.t (k, c, v) VALUES (1, 1, 2)",
                    "Guardrail write_consistency_levels violated: Provided values [ANY] are not allowed for write "
                    "consistency levels (disallowed values are: [ANY])", consistency_level=ConsistencyLevel.ANY)
            # partition keys in an IN, page size of a paged read
            w = warned(app, "SELECT * FROM ks.t WHERE k IN (1, 2, 3)")
            assert w == ["Guardrail partition_keys_in_select violated: Query with partition keys in IN clause on "
                         "table t, with number of partition keys 3 exceeds warning threshold of 2."], w
            refused(app, "SELECT * FROM ks.t WHERE k IN (1, 2, 3, 4)", "Guardrail partition_keys_in_select violated: "
                    "Aborting query with partition keys in IN clause on table t, number of partition keys 4 exceeds "
                    "fail threshold of 3.")
            w = warned(app, "SELECT * FROM ks.t", fetch_size=7000)
            assert w == ["Guardrail page_size violated: Query for table t with page size 7000 exceeds warning "
                         "threshold of 6000."], w
            refused(app, "SELECT * FROM ks.t", "Guardrail page_size violated: Aborting query for table t, page size "
                    "20000 exceeds fail threshold of 10000.", fetch_size=20000)
            assert warned(app, "SELECT * FROM ks.t LIMIT 5", fetch_size=20000) == []   # one page: not paged
            assert warned(app, "SELECT * FROM system_schema.tables", fetch_size=7000)   # system tables too
            # schema: keyspaces (user ones), tables, columns, indexes, views, types, compact storage
            w = warned(app, "CREATE KEYSPACE k2 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
            assert w == ["Guardrail keyspaces violated: Creating keyspace k2, current number of keyspaces 2 exceeds "
                         "warning threshold of 1."], w
            refused(app, "CREATE KEYSPACE k3 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
                    "Guardrail keyspaces violated: Cannot have more than 2 keyspaces, aborting the creation of keyspace k3")
            sup.execute("CREATE TABLE ks.u (k int PRIMARY KEY, a int)")
            refused(app, "CREATE TABLE ks.w (k int PRIMARY KEY, a int, b int, c int, d int)",
                    "Guardrail columns_per_table violated: Tables cannot have more than 4 columns, but 5 provided for table w")
            w = app.execute_async("CREATE TABLE ks.w (k int PRIMARY KEY, a int, b int, c int)")
            w.result()
            assert "Guardrail columns_per_table violated: The table w has 4 columns, this exceeds the warning threshold of 3." in w.warnings
            assert "Guardrail tables violated: Creating table w, current number of tables 3 exceeds warning threshold of 2." in w.warnings
            refused(app, "CREATE TABLE ks.x (k int PRIMARY KEY)",
                    "Guardrail tables violated: Cannot have more than 3 tables, aborting the creation of table x")
            refused(app, "ALTER TABLE ks.w ADD e int",
                    "Guardrail columns_per_table violated: Tables cannot have more than 4 columns, but 5 provided for table w")
            app.execute("CREATE INDEX i1 ON ks.u (a)")
            refused(app, "CREATE INDEX i3 ON ks.u (k)", "Guardrail secondary_indexes_per_table violated: Tables cannot "
                    "have more than 1 secondary indexes, aborting the creation of secondary index i3 on table u")
            refused(app, "CREATE TYPE ks.ty (a int, b int, c int)",
                    "Guardrail fields_per_udt violated: User types cannot have more than 2 columns, but 3 provided for user type ty.")
            app.execute("CREATE TYPE ks.ty (a int, b int)")
            refused(app, "ALTER TYPE ks.ty ADD c int", "User types cannot have more than 2 columns, but 3 provided for user type ty.")
            # the superuser still can
            sup.execute("TRUNCATE ks.t")
            sup.execute("ALTER TYPE ks.ty ADD c int")
            assert sup.execute("SELECT * FROM ks.t", timeout=30).all() == []
        finally:
            cu.shutdown()
    finally:
        ca.shutdown()


def test_guardrail_config_errors(tmp_path):
    """GuardrailsOptions' checks refuse a bad config at startup."""
    import subprocess
    for text, msg in (("keyspaces_warn_threshold: 5\nkeyspaces_fail_threshold: 2\n",
                       "The warn threshold 5 for keyspaces_warn_threshold should be lower than the fail threshold 2"),
                      ("tables_fail_threshold: 0\n",
                       "Invalid value for tables_fail_threshold: 0 is not allowed; if attempting to disable use -1"),
                      ("page_size_warn_threshold: -5\n", "Invalid value -5 for page_size_warn_threshold: negative "
                       "values are not allowed, outside of -1 which disables the guardrail"),
                      ("read_consistency_levels_disallowed: [ALL, SOMETIMES]\n", "read_consistency_levels_disallowed"),
                      ("minimum_replication_factor_warn_threshold: 2\nminimum_replication_factor_fail_threshold: 3\n",
                       "The warn threshold 2 for minimum_replication_factor_warn_threshold should be greater than the "
                       "fail threshold 3"),
                      ("minimum_replication_factor_fail_threshold: 2\n", "minimum_replication_factor_fail_threshold "
                       "to be set (2) cannot be greater than default_keyspace_rf (1)"),
                      ("collection_size_warn_threshold: 2MiB\ncollection_size_fail_threshold: 1MiB\n",
                       "The warn threshold 2MiB for collection_size_warn_threshold should be lower than the fail "
                       "threshold 1MiB"),
                      ("collection_size_fail_threshold: 0B\n", "Invalid value for collection_size_fail_threshold: 0 "
                       "is not allowed; if attempting to disable use an empty value"),
                      ("table_properties_warned: [comment, nonsense]\n", "Invalid value for table_properties_warned: "
                       "'[nonsense]' do not parse as valid table properties")):
        cfg = tmp_path / "bad.yaml"
        cfg.write_text(text)
        p = subprocess.run([H.binary_path(), "--listen", "127.0.0.1", "--port", "0", "--data-dir",
                            str(tmp_path / "d"), "--config", str(cfg)], capture_output=True, text=True, timeout=30)
        assert p.returncode != 0
        assert msg in p.stderr + p.stdout, p.stderr + p.stdout


CONFIG2 = """authenticator: PasswordAuthenticator
minimum_replication_factor_warn_threshold: 3
items_per_collection_warn_threshold: 2
items_per_collection_fail_threshold: 3
collection_size_warn_threshold: 100B
collection_size_fail_threshold: 1KiB
uncompressed_tables_enabled: false
in_select_cartesian_product_warn_threshold: 4
in_select_cartesian_product_fail_threshold: 20
table_properties_warned: [comment, gc_grace_seconds]
table_properties_ignored: [CDC]
table_properties_disallowed:
  - default_time_to_live
  - caching
"""


def test_replication_collections_and_compression(tmp_path):
    """minimum_replication_factor (each datacenter), items_per_collection (the
    elements a setter or appender writes; a prepend is not counted, as in
    Cassandra), uncompressed_tables_enabled (CREATE and ALTER)."""
    cfg = tmp_path / "cassette.yaml"
    cfg.write_text(CONFIG2)
    srv = H.Server(tmp_path / "srv", extra_args=["--config", str(cfg)])
    srv.start()
    try:
        ca, sup = session_of(srv, "cassandra", "cassandra")
        sup.execute("CREATE ROLE app WITH PASSWORD = 'pw' AND LOGIN = true")
        cu, app = session_of(srv, "app", "pw")
        w = warned(app, "CREATE KEYSPACE k1 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        assert w == ["Guardrail minimum_replication_factor violated: The keyspace k1 has a replication factor of 1, "
                     "below the warning threshold of 3."], w
        w = warned(app, "CREATE KEYSPACE k2 WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 2}")
        assert "Guardrail minimum_replication_factor violated: The keyspace k2 has a replication factor of 2, " \
               "below the warning threshold of 3." in w, w
        w = warned(app, "ALTER KEYSPACE k2 WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 3}")
        assert not any("minimum_replication_factor" in x for x in w), w
        assert warned(sup, "CREATE KEYSPACE k3 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}") == []
        app.execute("CREATE TABLE k1.t (k int PRIMARY KEY, l list<int>, s set<int>, m map<int, int>, f frozen<list<int>>)")
        w = warned(app, "UPDATE k1.t SET l = [1, 2, 3] WHERE k = 1")
        assert w == ["Guardrail items_per_collection violated: Detected collection l with 3 items, this exceeds the "
                     "warning threshold of 2.",
                     # Cell.dataSize: 16 bytes of timestamp, TTL, deletion time + the 16-byte path + the int
                     "Guardrail collection_size violated: Detected collection l of size 108, this exceeds the "
                     "warning threshold of 100."], w
        refused(app, "UPDATE k1.t SET l = l + [1, 2, 3, 4] WHERE k = 1", "Guardrail items_per_collection violated: "
                "Detected collection l with 4 items, this exceeds the failure threshold of 3.")
        refused(app, "UPDATE k1.t SET m = {1: 1, 2: 2, 3: 3, 4: 4} WHERE k = 1", "collection m with 4 items")
        refused(app, "INSERT INTO k1.t (k, f) VALUES (1, [1, 2, 3, 4])", "collection f with 4 items")
        app.execute("UPDATE k1.t SET l = [0, 0, 0, 0] + l WHERE k = 1")   # a prepend: not guarded
        app.execute("CREATE TABLE k1.c (k int PRIMARY KEY, s set<text>, m map<int, text>, f frozen<list<int>>)")
        refused(app, "UPDATE k1.c SET s = s + {'%s', '%s'} WHERE k = 1" % ("x" * 600, "y" * 600),
                "Guardrail collection_size violated: Detected collection s of size 1232, this exceeds the failure "
                "threshold of 1024.")
        assert warned(app, "UPDATE k1.c SET m = m + {1: '%s'} WHERE k = 1" % ("a" * 90)) == [
            "Guardrail collection_size violated: Detected collection m of size 110, this exceeds the warning "
            "threshold of 100."]
        assert warned(app, "UPDATE k1.c SET f = [1, 2] WHERE k = 1") == []   # 16 + 20 bytes

        assert warned(app, "UPDATE k1.t SET s = s + {1, 2} WHERE k = 1") == []
        assert app.execute("SELECT l, s FROM k1.t WHERE k = 1").one() == ([0, 0, 0, 0, 1, 2, 3], {1, 2})
        sup.execute("UPDATE k1.t SET l = l + [5, 6, 7, 8] WHERE k = 1")
        refused(app, "CREATE TABLE k1.u (k int PRIMARY KEY) WITH compression = {'enabled': 'false'}",
                "Guardrail uncompressed_tables_enabled violated: Uncompressed table is not allowed")
        refused(app, "ALTER TABLE k1.t WITH compression = {'enabled': 'false'}", "Uncompressed table is not allowed")
        app.execute("ALTER TABLE k1.t WITH compression = {'class': 'LZ4Compressor'}")
        sup.execute("CREATE TABLE k1.u (k int PRIMARY KEY) WITH compression = {'enabled': 'false'}")
        # in_select_cartesian_product: the product of the IN values as written, after each restriction
        sup.execute("CREATE TABLE k1.ip (a int, b int, c int, PRIMARY KEY ((a, b), c))")
        w = warned(app, "SELECT * FROM k1.ip WHERE a IN (1, 2) AND b IN (1, 2, 2) AND c IN (1, 2)")
        assert w == ["Guardrail in_select_cartesian_product violated: The cartesian product of the IN restrictions "
                     "on partition key produces 6 values, this exceeds warning threshold of 4."], w
        refused(app, "SELECT * FROM k1.ip WHERE a IN (1, 2, 3) AND b IN (1, 2, 3, 4, 5, 6, 7)",
                "Guardrail in_select_cartesian_product violated: Aborting query because the cartesian product of the "
                "IN restrictions on partition key produces 21 values, this exceeds fail threshold of 20.")
        w = warned(app, "SELECT * FROM k1.ip WHERE a = 1 AND b = 1 AND c IN (1, 2, 3, 4, 5)")
        assert w == ["Guardrail in_select_cartesian_product violated: The cartesian product of the IN restrictions "
                     "on clustering key produces 5 values, this exceeds warning threshold of 4."], w
        assert warned(app, "SELECT * FROM k1.ip WHERE a = 1 AND b = 1 AND c > 1") == []
        # and on writes, where the keys and clusterings are built from the same restrictions
        refused(app, "DELETE FROM k1.ip WHERE a IN (1, 2, 3) AND b IN (1, 2, 3, 4, 5, 6, 7) AND c = 1",
                "Aborting query because the cartesian product of the IN restrictions on partition key produces 21 "
                "values, this exceeds fail threshold of 20.")
        w = warned(app, "DELETE FROM k1.ip WHERE a = 1 AND b = 1 AND c IN (1, 2, 3, 4, 5)")
        assert w == ["Guardrail in_select_cartesian_product violated: The cartesian product of the IN restrictions "
                     "on clustering key produces 5 values, this exceeds warning threshold of 4."], w
        # table_properties: disallowed, ignored (left out, with a warning), warned; sets print as Java HashSets
        refused(app, "CREATE TABLE k1.tp (k int PRIMARY KEY) WITH default_time_to_live = 5 AND comment = 'x'",
                "Guardrail table_properties violated: Provided values [default_time_to_live] are not allowed for "
                "Table Properties (disallowed values are: [caching, default_time_to_live])")
        w = warned(app, "CREATE TABLE k1.tp (k int PRIMARY KEY) WITH comment = 'x' AND gc_grace_seconds = 5 AND cdc = true")
        assert w == ["Guardrail table_properties violated: Ignoring provided values [cdc] as they are not supported "
                     "for Table Properties (ignored values are: [cdc])",
                     "Guardrail table_properties violated: Provided values [comment, gc_grace_seconds] are not "
                     "recommended for Table Properties (warned values are: [gc_grace_seconds, comment])"], w
        row = sup.execute("SELECT comment, gc_grace_seconds, cdc FROM system_schema.tables "
                          "WHERE keyspace_name = 'k1' AND table_name = 'tp'").one()
        assert (row.comment, row.gc_grace_seconds, row.cdc) == ("x", 5, None), row   # cdc only when true
        w = warned(app, "ALTER TABLE k1.tp WITH cdc = true")
        assert w == ["Guardrail table_properties violated: Ignoring provided values [cdc] as they are not supported "
                     "for Table Properties (ignored values are: [cdc])"], w
        assert sup.execute("SELECT cdc FROM system_schema.tables WHERE keyspace_name = 'k1' AND table_name = 'tp'").one().cdc is None
        refused(app, "ALTER TABLE k1.tp WITH caching = {'keys': 'NONE'}", "Provided values [caching] are not allowed")
        sup.execute("ALTER TABLE k1.tp WITH default_time_to_live = 7")
        assert sup.execute("SELECT value FROM system_views.settings WHERE name = 'table_properties_disallowed'").one().value == \
            "[caching, default_time_to_live]"
        cu.shutdown()
        ca.shutdown()
    finally:
        srv.stop()
