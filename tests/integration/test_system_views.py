"""system_views as Cassandra 4.1's SystemViewsKeyspace has it: every table
with its columns, types and keys (as system_virtual_schema lists them for
drivers and DESCRIBE), and what each holds on a single node: the metric
tables from the table and statement metrics (values as 4.1 computes them:
bucket offsets of decaying histograms), gossip_info's one row, the
running query, the auth cache keys, and nothing where one node has no peers.
"""

import os
import re
import subprocess

import pytest
from cassandra.auth import PlainTextAuthProvider
from cassandra.cluster import Cluster

import cassette_harness as H
from conftest import cassette_only

LAT = {"count": "bigint", "max_ms": "double", "p50th_ms": "double", "p99th_ms": "double", "per_second": "double"}
HIST = {"count": "bigint", "max": "double", "p50th": "double", "p99th": "double"}
PER_TABLE = (["keyspace_name", "table_name"], [])
REPAIR_STD = {"last_updated_at": "timestamp", "completed": "boolean", "duration_millis": "bigint",
              "failure_cause": "text", "success_message": "text", "state_init_timestamp": "timestamp",
              "state_success_timestamp": "timestamp", "state_skipped_timestamp": "timestamp",
              "state_failure_timestamp": "timestamp"}
STATES = ("STATUS LOAD SCHEMA DC RACK RELEASE_VERSION REMOVAL_COORDINATOR INTERNAL_IP RPC_ADDRESS X_11_PADDING "
          "SEVERITY NET_VERSION HOST_ID TOKENS RPC_READY INTERNAL_ADDRESS_AND_PORT NATIVE_ADDRESS_AND_PORT "
          "STATUS_WITH_PORT SSTABLE_VERSIONS DISK_USAGE X1 X2 X3 X4 X5 X6 X7 X8 X9 X10").lower().split()
GOSSIP = {"hostname": "text", "generation": "int", "heartbeat": "int"}
GOSSIP.update({s: "text" for s in STATES if s != "tokens"})
GOSSIP.update({s + "_version": "int" for s in STATES})
INTERNODE_KEY = (["address", "port"], ["dc", "rack"])
ROLE_KEY = (["role"], [])

# table: (partition key, clustering, {regular column: type}), Cassandra 4.1
# (db/virtual/*Table.java, LocalRepairTables, TableMetricTables)
SCHEMA = {
    "local_read_latency": PER_TABLE + (LAT,), "local_scan_latency": PER_TABLE + (LAT,),
    "local_write_latency": PER_TABLE + (LAT,), "coordinator_read_latency": PER_TABLE + (LAT,),
    "coordinator_scan_latency": PER_TABLE + (LAT,), "coordinator_write_latency": PER_TABLE + (LAT,),
    "tombstones_per_read": PER_TABLE + (HIST,), "rows_per_read": PER_TABLE + (HIST,),
    "disk_usage": PER_TABLE + ({"mebibytes": "bigint"},),
    "max_partition_size": PER_TABLE + ({"mebibytes": "bigint"},),
    "internode_outbound": INTERNODE_KEY + ({c: "bigint" for c in (
        "using_bytes using_reserve_bytes pending_count pending_bytes sent_count sent_bytes expired_count "
        "expired_bytes error_count error_bytes overload_count overload_bytes active_connections "
        "connection_attempts successful_connection_attempts").split()},),
    "internode_inbound": INTERNODE_KEY + ({c: "bigint" for c in (
        "using_bytes using_reserve_bytes corrupt_frames_recovered corrupt_frames_unrecovered error_bytes "
        "error_count expired_bytes expired_count scheduled_bytes scheduled_count processed_bytes "
        "processed_count received_bytes received_count throttled_count throttled_nanos").split()},),
    "pending_hints": (["host_id"], [], {"address": "inet", "port": "int", "rack": "text", "dc": "text",
                                        "status": "text", "files": "int", "newest": "timestamp",
                                        "oldest": "timestamp"}),
    "credentials_cache_keys": ROLE_KEY + ({},), "jmx_permissions_cache_keys": ROLE_KEY + ({},),
    "network_permissions_cache_keys": ROLE_KEY + ({},), "roles_cache_keys": ROLE_KEY + ({},),
    "permissions_cache_keys": (["role", "resource"], [], {}),
    "cql_metrics": (["name"], [], {"value": "double"}),
    "batch_metrics": (["name"], [], {"p50th": "double", "p99th": "double", "p999th": "double", "max": "bigint"}),
    "streaming": (["id"], [], dict({"follower": "boolean", "operation": "text", "peers": "frozen<list<text>>",
                                    "status": "text", "progress_percentage": "float", "last_updated_at": "timestamp",
                                    "duration_millis": "bigint", "failure_cause": "text", "success_message": "text"},
                                   **{c: "bigint" for c in ("bytes_to_receive bytes_received bytes_to_send bytes_sent "
                                                             "files_to_receive files_received files_to_send "
                                                             "files_sent").split()},
                                   **{"status_%s_timestamp" % s: "timestamp"
                                      for s in ("init", "start", "success", "failure")})),
    "gossip_info": (["address"], ["port"], GOSSIP),
    "queries": (["thread_id"], [], {"queued_micros": "bigint", "running_micros": "bigint", "task": "text"}),
    "repairs": (["id"], [], dict(REPAIR_STD, status="text", command_id="int", keyspace_name="text", type="text",
                                 sessions="frozen<set<timeuuid>>", options_parallelism="text",
                                 options_primary_range="boolean", options_incremental="boolean",
                                 options_trace="boolean", options_job_threads="int",
                                 options_subrange_repair="boolean", options_pull_repair="boolean",
                                 options_force_repair="boolean", options_preview_kind="text",
                                 options_optimise_streams="boolean", options_ignore_unreplicated_keyspaces="boolean",
                                 options_column_families="frozen<set<text>>",
                                 options_data_centers="frozen<set<text>>", options_hosts="frozen<set<text>>",
                                 options_ranges="frozen<set<text>>", table_names="frozen<list<text>>",
                                 ranges="frozen<list<frozen<list<text>>>>",
                                 unfiltered_ranges="frozen<list<frozen<list<text>>>>",
                                 participants="frozen<list<text>>",
                                 **{"state_%s_timestamp" % s: "timestamp" for s in (
                                     "setup", "start", "prepare_start", "prepare_complete", "repair_start",
                                     "repair_complete")})),
    "repair_sessions": (["id"], [], dict(REPAIR_STD, status="text", repair_id="timeuuid", keyspace_name="text",
                                         table_names="frozen<list<text>>", ranges="frozen<list<text>>",
                                         participants="frozen<list<text>>", jobs="frozen<set<uuid>>",
                                         state_start_timestamp="timestamp",
                                         state_jobs_start_timestamp="timestamp")),
    "repair_jobs": (["id"], [], dict(REPAIR_STD, status="text", participants="frozen<list<text>>",
                                     repair_id="timeuuid", session_id="timeuuid", keyspace_name="text",
                                     table_name="text", ranges="frozen<list<text>>",
                                     **{"state_%s_timestamp" % s: "timestamp" for s in (
                                         "start", "snapshot_start", "snapshot_complete", "validation_start",
                                         "validation_complete", "stream_start")})),
    "repair_participates": (["id"], [], dict(REPAIR_STD, initiator="text", tables="frozen<set<text>>",
                                             ranges="frozen<list<text>>", incremental="boolean", **{"global": "boolean"},
                                             preview_kind="text", repaired_at="timestamp",
                                             validations="frozen<set<uuid>>")),
    "repair_validations": (["id"], [], dict(REPAIR_STD, status="text", repair_id="timeuuid", session_id="timeuuid",
                                            keyspace_name="text", table_name="text", ranges="frozen<list<text>>",
                                            initiator="text", estimated_partitions="bigint",
                                            estimated_total_bytes="bigint", partitions_processed="bigint",
                                            bytes_read="bigint", progress_percentage="float",
                                            state_start_timestamp="timestamp",
                                            state_sending_trees_timestamp="timestamp")),
}
ID_TYPE = {"repairs": "timeuuid", "repair_sessions": "timeuuid", "repair_participates": "timeuuid",
           "repair_jobs": "uuid", "repair_validations": "uuid", "streaming": "timeuuid"}
KEY_TYPES = {"keyspace_name": "text", "table_name": "text", "address": "inet", "port": "int", "dc": "text",
             "rack": "text", "host_id": "uuid", "role": "text", "resource": "text", "name": "text",
             "thread_id": "text"}
TOOL = os.path.join(os.path.dirname(H.binary_path()), "cassette-tool")
OLDER = {"caches", "clients", "settings", "system_properties", "sstable_tasks", "thread_pools"}


def test_tables_and_columns_as_cassandra(session):
    tables = {r.table_name: r.comment for r in session.execute(
        "SELECT table_name, comment FROM system_virtual_schema.tables WHERE keyspace_name = 'system_views'")}
    assert set(tables) == set(SCHEMA) | OLDER
    assert tables["gossip_info"] == "lists the gossip information for the cluster"
    assert tables["queries"] == "Lists currently running queries"
    assert tables["repairs"] == "Repair summary" and tables["local_read_latency"] == ""
    for name, (pk, ck, regular) in SCHEMA.items():
        cols = {r.column_name: r for r in session.execute(
            "SELECT column_name, kind, position, type FROM system_virtual_schema.columns "
            "WHERE keyspace_name = 'system_views' AND table_name = %s", (name,))}
        want = dict(regular)
        for c in pk + ck:
            want[c] = ID_TYPE.get(name, KEY_TYPES.get(c))
        assert {c: r.type for c, r in cols.items()} == want, name
        assert [c for c in sorted(cols, key=lambda c: cols[c].position) if cols[c].kind == "partition_key"] == pk
        assert [c for c in sorted(cols, key=lambda c: cols[c].position) if cols[c].kind == "clustering"] == ck
    # the driver builds its metadata from these and prints Cassandra's DESCRIBE
    meta = session.cluster.metadata.keyspaces["system_views"].tables["local_read_latency"]
    assert "PRIMARY KEY ((keyspace_name, table_name))" in meta.export_as_string()


def test_latency_tables(session, ks, server):
    """Counts are the requests; the _ms columns hold what 4.1 puts there:
    its microsecond snapshots times 1e-6 (rounded to 3 places), so 0.0 for
    anything under half a millisecond."""
    session.execute("CREATE TABLE %s.lat (k int, c int, v int, PRIMARY KEY (k, c))" % ks)
    for i in range(7):
        session.execute("INSERT INTO %s.lat (k, c, v) VALUES (%d, 0, 0)" % (ks, i))
    for i in range(3):
        list(session.execute("SELECT * FROM %s.lat WHERE k = %d" % (ks, i)))
    list(session.execute("SELECT * FROM %s.lat" % ks))
    where = "WHERE keyspace_name = %s AND table_name = 'lat'"
    w = session.execute("SELECT * FROM system_views.local_write_latency " + where, (ks,)).one()
    r = session.execute("SELECT * FROM system_views.local_read_latency " + where, (ks,)).one()
    s = session.execute("SELECT * FROM system_views.local_scan_latency " + where, (ks,)).one()
    assert (w.count, r.count, s.count) == (7, 3, 1)
    for row in (w, r, s):
        assert 0 <= row.p50th_ms <= row.p99th_ms <= row.max_ms
        assert row.max_ms == round(row.max_ms, 3) and row.per_second >= 0
    cr = session.execute("SELECT count FROM system_views.coordinator_read_latency " + where, (ks,)).one()
    assert cr.count == 3
    # every table has a row, also those never read
    names = {(x.keyspace_name, x.table_name) for x in session.execute(
        "SELECT keyspace_name, table_name FROM system_views.local_read_latency")}
    assert (ks, "lat") in names and ("system_schema", "tables") in names
    assert not any(k in ("system_views", "system_virtual_schema") for k, _ in names)


def test_rows_and_tombstones_per_read(session, ks):
    """Per SELECT: live rows and tombstones scanned, in Cassandra's buckets;
    a read without tombstones counts in the first bucket, offset 1."""
    session.execute("CREATE TABLE %s.rt (k int, c int, v int, PRIMARY KEY (k, c))" % ks)
    for c in range(12):
        session.execute("INSERT INTO %s.rt (k, c, v) VALUES (1, %d, 0)" % (ks, c))
    for c in range(3):
        session.execute("INSERT INTO %s.rt (k, c, v) VALUES (2, %d, 0)" % (ks, c))
    session.execute("DELETE FROM %s.rt WHERE k = 2 AND c = 0" % ks)
    session.execute("DELETE FROM %s.rt WHERE k = 2 AND c = 1" % ks)
    for _ in range(3):
        assert len(list(session.execute("SELECT * FROM %s.rt WHERE k = 1" % ks))) == 12
    assert len(list(session.execute("SELECT * FROM %s.rt WHERE k = 2" % ks))) == 1
    where = "WHERE keyspace_name = %s AND table_name = 'rt'"
    rows = session.execute("SELECT * FROM system_views.rows_per_read " + where, (ks,)).one()
    assert (rows.count, rows.p50th, rows.p99th, rows.max) == (4, 12.0, 12.0, 12.0)
    tomb = session.execute("SELECT * FROM system_views.tombstones_per_read " + where, (ks,)).one()
    assert (tomb.count, tomb.p50th, tomb.p99th, tomb.max) == (4, 1.0, 2.0, 2.0)


def test_storage_tables(session, ks, server):
    session.execute("CREATE TABLE %s.st (k int PRIMARY KEY, v text)" % ks)
    session.execute("INSERT INTO %s.st (k, v) VALUES (1, 'x')" % ks)
    where = "WHERE keyspace_name = %s AND table_name = 'st'"
    assert session.execute("SELECT mebibytes FROM system_views.disk_usage " + where, (ks,)).one().mebibytes == 0
    if H.is_cassette():
        H.wait_for(lambda: server.admin_port, timeout=10, what="the admin port line")
        assert subprocess.run([TOOL, "-p", str(server.admin_port), "flush", ks, "st"], timeout=60).returncode == 0
        # rounded up to whole MiB, as StorageTableMetric does
        assert session.execute("SELECT mebibytes FROM system_views.disk_usage " + where, (ks,)).one().mebibytes == 1
        assert session.execute("SELECT mebibytes FROM system_views.max_partition_size " + where,
                               (ks,)).one().mebibytes == 1


def test_cql_metrics(session, ks):
    def metrics():
        return {r.name: r.value for r in session.execute("SELECT * FROM system_views.cql_metrics")}
    session.execute("CREATE TABLE IF NOT EXISTS %s.cm (k int PRIMARY KEY)" % ks)
    before = metrics()
    assert list(before) == ["prepared_statements_count", "prepared_statements_evicted",
                            "prepared_statements_executed", "prepared_statements_ratio",
                            "regular_statements_executed"]
    ps = session.prepare("SELECT * FROM %s.cm WHERE k = ?" % ks)
    for i in range(3):
        list(session.execute(ps, (i,)))
    list(session.execute("SELECT * FROM %s.cm" % ks))
    after = metrics()
    assert after["prepared_statements_executed"] - before["prepared_statements_executed"] == 3
    assert after["regular_statements_executed"] - before["regular_statements_executed"] >= 2   # and this read
    assert after["prepared_statements_count"] >= 1
    prep, reg = after["prepared_statements_executed"], after["regular_statements_executed"]
    assert after["prepared_statements_ratio"] == pytest.approx(prep / (prep + reg))


def test_batch_metrics(fresh_server):
    """Partitions per batch, by kind; conditional batches are not counted."""
    c, s = H.connect(fresh_server.host, fresh_server.port)
    try:
        s.execute("CREATE KEYSPACE kb WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE kb.t (k int, c int, v int, PRIMARY KEY (k, c))")
        s.execute("CREATE TABLE kb.n (k int PRIMARY KEY, n counter)")
        s.execute("BEGIN BATCH INSERT INTO kb.t (k, c, v) VALUES (1, 0, 0); INSERT INTO kb.t (k, c, v) VALUES (2, 0, 0); "
                  "INSERT INTO kb.t (k, c, v) VALUES (3, 0, 0); INSERT INTO kb.t (k, c, v) VALUES (3, 1, 0); APPLY BATCH")
        for _ in range(2):
            s.execute("BEGIN UNLOGGED BATCH INSERT INTO kb.t (k, c, v) VALUES (1, 0, 1); "
                      "INSERT INTO kb.t (k, c, v) VALUES (2, 0, 1); APPLY BATCH")
        s.execute("BEGIN COUNTER BATCH UPDATE kb.n SET n = n + 1 WHERE k = 1; APPLY BATCH")
        s.execute("BEGIN BATCH INSERT INTO kb.t (k, c, v) VALUES (9, 0, 0) IF NOT EXISTS; "
                  "INSERT INTO kb.t (k, c, v) VALUES (9, 1, 0); APPLY BATCH")
        rows = {r.name: r for r in s.execute("SELECT * FROM system_views.batch_metrics")}
        assert list(rows) == ["partitions_per_counter_batch", "partitions_per_logged_batch",
                              "partitions_per_unlogged_batch"]
        got = {n: (r.p50th, r.p99th, r.p999th, r.max) for n, r in rows.items()}
        if H.is_cassette():   # a fresh node: only these batches
            assert got == {"partitions_per_logged_batch": (3.0, 3.0, 3.0, 3),
                           "partitions_per_unlogged_batch": (2.0, 2.0, 2.0, 2),
                           "partitions_per_counter_batch": (1.0, 1.0, 1.0, 1)}
    finally:
        c.shutdown()


def test_gossip_info_one_row(session):
    local = session.execute("SELECT * FROM system.local").one()
    rows = list(session.execute("SELECT * FROM system_views.gossip_info"))
    assert len(rows) == 1
    g = rows[0]
    assert g.port == 7000 and g.generation > 0 and g.heartbeat > 0
    assert g.host_id == str(local.host_id) and g.schema == str(local.schema_version)
    assert g.dc == local.data_center and g.rack == local.rack and g.release_version == local.release_version
    assert g.status.startswith("NORMAL,") and g.status_with_port == g.status and g.rpc_ready == "true"
    assert g.tokens_version is not None and g.status_version is not None
    assert float(g.load) >= 0 and g.hostname
    assert not hasattr(g, "tokens")                         # TOKENS: a version, no value column


@cassette_only("compares with cassette-tool gossipinfo")
def test_gossip_info_matches_gossipinfo(session, server):
    H.wait_for(lambda: server.admin_port, timeout=10, what="the admin port line")
    out = subprocess.run([TOOL, "-p", str(server.admin_port), "gossipinfo"], capture_output=True, text=True,
                         timeout=60).stdout
    g = session.execute("SELECT * FROM system_views.gossip_info").one()
    states = dict(re.findall(r"^  ([A-Z_0-9]+):(\d+):", out, re.M))
    assert int(states["HOST_ID"]) == g.host_id_version and int(states["TOKENS"]) == g.tokens_version
    assert "  HOST_ID:%d:%s\n" % (g.host_id_version, g.host_id) in out
    assert "  generation:%d\n" % g.generation in out


def test_queries_lists_the_running_request(session):
    rows = list(session.execute("SELECT * FROM system_views.queries"))
    assert len(rows) == 1, rows
    q = rows[0]
    assert re.fullmatch(r"Native-Transport-Requests-\d+", q.thread_id)
    assert q.task == "QUERY SELECT * FROM system_views.queries [pageSize = 5000] at consistency LOCAL_ONE"
    assert q.queued_micros >= 0 and q.running_micros >= 0
    ps = session.prepare("SELECT task FROM system_views.queries")
    assert session.execute(ps).one().task == \
        "EXECUTE %s with 0 values at consistency LOCAL_ONE" % ps.query_id.hex()


def _host_name(ip):
    """What Java's InetSocketAddress.getHostName gives: the reverse lookup's
    name, or the address itself."""
    import socket
    try:
        return socket.gethostbyaddr(ip)[0]
    except OSError:
        return ip


def test_clients_options_request_count_and_hostname(session, server):
    """A connection's row as 4.1's ClientsTable fills it: client_options
    (STARTUP's options, keys upper-cased, any case accepted), request_count
    (every request once valid in its state, counted before it runs; a
    request refused by the state machine is not), hostname (the reverse
    lookup of the address), username anonymous without authentication."""
    import rawcql
    c = rawcql.Conn(server.host, server.port)
    try:
        # refused before STARTUP: not counted
        assert c.request(rawcql.OP_QUERY, rawcql.query_body("SELECT key FROM system.local")).opcode == rawcql.OP_ERROR
        assert c.request(rawcql.OP_OPTIONS).opcode == rawcql.OP_SUPPORTED
        f = c.request(rawcql.OP_STARTUP, rawcql.string_map({
            "cql_version": "3.0.0", "DRIVER_NAME": "raw test", "driver_version": "9.1",
            "Application_Name": "TestApp", "CLIENT_ID": "55b3efbd-c56b-469d-8cca-016b860b2f03"}))
        assert f.opcode == rawcql.OP_READY, f
        assert c.query("SELECT key FROM system.local").opcode == rawcql.OP_RESULT
        assert c.query("SELEC nothing").opcode == rawcql.OP_ERROR     # counted: it was decoded and run
        assert c.query("SELECT key FROM system.local").opcode == rawcql.OP_RESULT
        port = c.sock.getsockname()[1]
        q = "SELECT * FROM system_views.clients WHERE address = %s AND port = %s"
        row = session.execute(q, (c.sock.getsockname()[0], port)).one()
        assert row is not None
        assert row.request_count == 5, row.request_count     # OPTIONS, STARTUP, three QUERYs
        assert list(row.client_options.items()) == [
            ("APPLICATION_NAME", "TestApp"), ("CLIENT_ID", "55b3efbd-c56b-469d-8cca-016b860b2f03"),
            ("CQL_VERSION", "3.0.0"), ("DRIVER_NAME", "raw test"), ("DRIVER_VERSION", "9.1")]
        assert row.driver_name == "raw test" and row.driver_version == "9.1"
        assert row.hostname == _host_name(server.host)
        assert row.username == "anonymous" and row.connection_stage == "ready"
        assert c.query("SELECT key FROM system.local").opcode == rawcql.OP_RESULT
        assert session.execute(q, (server.host, port)).one().request_count == 6
    finally:
        c.close()
    # the driver's own connections: its STARTUP options
    rows = list(session.execute("SELECT client_options, driver_name, request_count FROM system_views.clients"))
    assert rows and all(r.client_options["DRIVER_NAME"] == r.driver_name == "DataStax Python Driver" and
                        r.client_options["CQL_VERSION"] == "3.4.6" and r.request_count >= 1 for r in rows
                        if r.client_options and "DRIVER_NAME" in r.client_options), rows


def test_single_node_tables_are_empty(session):
    for t in ("internode_inbound", "internode_outbound", "pending_hints", "streaming", "repair_sessions",
              "repair_jobs", "repair_participates", "repair_validations", "roles_cache_keys",
              "permissions_cache_keys", "network_permissions_cache_keys", "jmx_permissions_cache_keys",
              "credentials_cache_keys"):
        assert not list(session.execute("SELECT * FROM system_views.%s" % t)), t


@cassette_only("starts a server with PasswordAuthenticator")
def test_credentials_cache_keys(tmp_path):
    """The roles whose login the role store remembers; a changed password
    forgets it."""
    cfg = tmp_path / "cassette.yaml"
    cfg.write_text("authenticator: PasswordAuthenticator\n")
    s = H.Server(tmp_path / "srv", extra_args=["--config", str(cfg)])
    s.start()
    try:
        su = Cluster([s.host], port=s.port, auth_provider=PlainTextAuthProvider("cassandra", "cassandra"),
                     connect_timeout=10)
        sess = su.connect()
        keys = lambda: [r.role for r in sess.execute("SELECT role FROM system_views.credentials_cache_keys")]
        assert keys() == ["cassandra"]
        sess.execute("CREATE ROLE bob WITH PASSWORD = 'pw' AND LOGIN = true")
        bob = Cluster([s.host], port=s.port, auth_provider=PlainTextAuthProvider("bob", "pw"), connect_timeout=10)
        bs = bob.connect()
        bs.execute("SELECT key FROM system.local")
        # ClientState's user: the role each connection logged in as
        users = {r.username for r in bs.execute("SELECT username FROM system_views.clients")}
        assert users == {"bob", "cassandra"}, users
        bob.shutdown()
        assert keys() == ["bob", "cassandra"]
        sess.execute("ALTER ROLE bob WITH PASSWORD = 'other'")
        assert keys() == ["cassandra"]
        su.shutdown()
    finally:
        s.stop()
