"""nodetool verbs that test suites written for Cassandra call on a single
node: repair, cleanup, disableautocompaction / enableautocompaction, with
nodetool's arguments ([options] [keyspace [tables...]]) and Cassandra
4.1's answers for one node.
"""

import os
import re
import subprocess
import time

import pytest

import cassette_harness as H

TOOL = os.path.join(os.path.dirname(H.binary_path()), "cassette-tool")

pytestmark = pytest.mark.skipif(not H.is_cassette(), reason="needs cassette-tool and the admin endpoint")

STAMP = r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] "


def tool(server, *args):
    H.wait_for(lambda: server.admin_port, timeout=10, what="the admin port line")
    return subprocess.run([TOOL, "-p", str(server.admin_port)] + list(args), capture_output=True, text=True,
                          timeout=120)


def sstables(server, ks, table):
    r = tool(server, "tablestats", "%s.%s" % (ks, table))
    assert r.returncode == 0, r.stderr
    return int(re.search(r"SSTable count: (\d+)", r.stdout).group(1))


def test_repair_single_replica_keyspaces(server, session, ks):
    """RF 1: 'No repair is needed' per keyspace, exit 0; options accepted."""
    session.execute("CREATE TABLE %s.r (k int PRIMARY KEY)" % ks)
    for args in ([ks], ["-full", ks], ["-pr", "-j", "2", ks, "r"]):
        r = tool(server, "repair", *args)
        assert r.returncode == 0, r.stderr
        assert re.fullmatch(STAMP + r"Replication factor is 1\. No repair is needed for keyspace '%s'\n" % ks,
                            r.stdout), r.stdout
    r = tool(server, "repair", "no_such_ks")
    assert r.returncode != 0 and "Keyspace [no_such_ks] does not exist." in r.stdout
    r = tool(server, "repair", ks, "no_such_table")
    assert r.returncode != 0 and "no_such_table" in r.stderr


def test_repair_more_replicas_than_nodes(server, session):
    """RF 3 on one node: every range lacks its other replicas, so
    Cassandra's repair aborts ('Nothing to repair for <range> in ks'), or
    skips the keyspace with --ignore-unreplicated-keyspaces."""
    session.execute("CREATE KEYSPACE IF NOT EXISTS ks_rf3 WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 3}")
    try:
        r = tool(server, "repair", "ks_rf3")
        assert r.returncode == 2, (r.stdout, r.stderr)
        assert re.search(r"Nothing to repair for \(-?\d+,-?\d+\] in ks_rf3 - aborting", r.stderr), r.stderr
        assert "error: Repair job has failed with the error message" in r.stderr
        r = tool(server, "repair", "-iuk", "ks_rf3")
        assert r.returncode == 0, r.stderr
        assert "unreplicated keyspace is ignored" in r.stdout
    finally:
        session.execute("DROP KEYSPACE ks_rf3")


def test_repair_without_keyspace(server):
    """No keyspace: every keyspace but LocalStrategy ones, system_distributed
    only when named; on a fresh node system_traces (RF 2) makes it fail, as
    on a single-node Cassandra 4.1; with -iuk it goes through."""
    r = tool(server, "repair", "-iuk")
    assert r.returncode == 0, r.stderr
    assert "keyspace 'system_auth'" in r.stdout
    assert "in system_traces - unreplicated keyspace is ignored" in r.stdout
    assert "system_distributed" not in r.stdout and "system_schema" not in r.stdout
    assert "'system'" not in r.stdout


def test_cleanup(server, session, ks):
    session.execute("CREATE TABLE %s.cl (k int PRIMARY KEY)" % ks)
    for args in ([], [ks], [ks, "cl"], ["-j", "2", ks]):
        r = tool(server, "cleanup", *args)
        assert r.returncode == 0 and r.stdout == "", (args, r.stdout, r.stderr)
    assert tool(server, "cleanup", "nope").returncode != 0


def test_disable_and_enable_autocompaction(server, session, ks):
    """Disabled: flushed sstables pile up past min_threshold; an explicit
    compact still runs; enabled again: the background compaction catches up."""
    session.execute("CREATE TABLE %s.ac (k int PRIMARY KEY, v int)" % ks)
    r = tool(server, "disableautocompaction", ks, "ac")
    assert r.returncode == 0 and r.stdout == "", r.stderr
    for i in range(6):
        session.execute("INSERT INTO %s.ac (k, v) VALUES (%d, %d)" % (ks, i, i))
        assert tool(server, "flush", ks, "ac").returncode == 0
    time.sleep(0.5)                              # time for a compaction that should not start
    assert sstables(server, ks, "ac") == 6
    assert tool(server, "enableautocompaction", ks, "ac").returncode == 0
    H.wait_for(lambda: sstables(server, ks, "ac") < 6, timeout=60, what="background compaction")
    assert session.execute("SELECT count(*) FROM %s.ac" % ks).one()[0] == 6
    # explicit compaction while disabled
    assert tool(server, "disableautocompaction", ks).returncode == 0
    for i in range(6, 10):
        session.execute("INSERT INTO %s.ac (k, v) VALUES (%d, %d)" % (ks, i, i))
        assert tool(server, "flush", ks, "ac").returncode == 0
    assert sstables(server, ks, "ac") > 1
    assert tool(server, "compact", ks, "ac").returncode == 0
    assert sstables(server, ks, "ac") == 1
    assert tool(server, "enableautocompaction").returncode == 0
    assert tool(server, "disableautocompaction", ks, "nope").returncode != 0


def closed_by_server(c, timeout=10):
    """The raw connection c sees EOF (or a reset) within timeout."""
    import socket as so
    c.sock.settimeout(timeout)
    try:
        return c.sock.recv(1) == b""
    except (ConnectionResetError, so.timeout):
        return False


@pytest.mark.parametrize("loops", [1, 2])
def test_disablebinary_and_enablebinary(tmp_path, loops):
    """disablebinary closes the listener and every client connection, on
    every request loop; statusbinary and info say so; enablebinary listens
    again on the same port and the data is still there."""
    import rawcql
    srv = H.new_server(tmp_path, extra_args=["--request-loops", str(loops)])
    try:
        c, s = H.connect(srv.host, srv.port)
        s.execute("CREATE KEYSPACE kb WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE kb.t (k int PRIMARY KEY, v int)")
        s.execute("INSERT INTO kb.t (k, v) VALUES (1, 1)")
        c.shutdown()
        raws = [rawcql.connect(srv.host, srv.port) for _ in range(4)]   # spread over the loops
        assert tool(srv, "statusbinary").stdout == "running\n"
        r = tool(srv, "disablebinary")
        assert r.returncode == 0 and r.stdout == "", r.stderr
        assert all(closed_by_server(x) for x in raws)
        assert tool(srv, "statusbinary").stdout == "not running\n"
        assert "Native Transport active: false" in tool(srv, "info").stdout
        assert not H.port_open(srv.host, srv.port)
        H.wait_for(lambda: tool(srv, "enablebinary").returncode == 0, timeout=10, what="enablebinary")
        assert tool(srv, "statusbinary").stdout == "running\n"
        c, s = H.connect(srv.host, srv.port)
        assert s.execute("SELECT v FROM kb.t WHERE k = 1").one().v == 1
        c.shutdown()
        assert tool(srv, "enablebinary").returncode == 0                 # already running: fine
    finally:
        srv.stop()


def test_drain(tmp_path):
    """drain: the native transport stops, every memtable is flushed (the
    rows are in sstables), the node refuses to start the transport again
    ('because the node was drained'), a second drain is a no-op, and after
    a restart the data is there."""
    import glob
    srv = H.new_server(tmp_path)
    try:
        c, s = H.connect(srv.host, srv.port)
        s.execute("CREATE KEYSPACE kd WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE kd.t (k int PRIMARY KEY, v int)")
        for i in range(50):
            s.execute("INSERT INTO kd.t (k, v) VALUES (%d, %d)" % (i, i))
        c.shutdown()
        assert glob.glob(os.path.join(srv.data_dir, "data", "kd", "t-*", "cs-*-Data.db")) == []
        r = tool(srv, "drain")
        assert r.returncode == 0 and r.stdout == "", r.stderr
        assert len(glob.glob(os.path.join(srv.data_dir, "data", "kd", "t-*", "cs-*-Data.db"))) == 1
        assert tool(srv, "statusbinary").stdout == "not running\n"
        info = tool(srv, "info").stdout
        assert "Native Transport active: false" in info and "Gossip active          : false" in info
        r = tool(srv, "enablebinary")
        assert r.returncode != 0
        assert "Unable to start native transport because the node was drained." in r.stderr
        assert tool(srv, "drain").returncode == 0
        assert tool(srv, "flush").returncode == 0                        # nodetool still works
        srv.restart()
        c, s = H.connect(srv.host, srv.port)
        assert s.execute("SELECT count(*) FROM kd.t").one()[0] == 50
        c.shutdown()
    finally:
        srv.stop()


def test_tpstats_and_thread_pools(server, session, ks):
    """tpstats and system_views.thread_pools list the same pools with
    figures that move with the work: writes, reads, flushes done; through
    CQL the asking request is the one active Native-Transport-Requests task."""
    def pools():
        r = tool(server, "tpstats")
        assert r.returncode == 0, r.stderr
        lines = r.stdout.splitlines()
        assert lines[0].split() == ["Pool", "Name", "Active", "Pending", "Completed", "Blocked", "All", "time",
                                    "blocked"], r.stdout
        out = {}
        for l in lines[1:]:
            if not l.strip():
                break
            f = l.split()
            out[f[0]] = [int(x) for x in f[1:]]
        assert "Latencies waiting in queue (micros) per dropped message types" in r.stdout
        return out

    session.execute("CREATE TABLE %s.tp (k int PRIMARY KEY, v int)" % ks)
    before = pools()
    assert sorted(before) == ["CompactionExecutor", "MemtableFlushWriter", "MutationStage",
                              "Native-Transport-Requests", "ReadStage"]
    for i in range(30):
        session.execute("INSERT INTO %s.tp (k, v) VALUES (%d, %d)" % (ks, i, i))
    for i in range(20):
        session.execute("SELECT v FROM %s.tp WHERE k = %d" % (ks, i))
    r = subprocess.run([TOOL, "-p", str(server.admin_port), "flush", ks, "tp"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    after = pools()
    assert after["MutationStage"][2] - before["MutationStage"][2] >= 30
    assert after["ReadStage"][2] - before["ReadStage"][2] >= 20
    assert after["MemtableFlushWriter"][2] - before["MemtableFlushWriter"][2] >= 1
    assert after["Native-Transport-Requests"][2] - before["Native-Transport-Requests"][2] >= 50
    rows = {r.name: r for r in session.execute("SELECT * FROM system_views.thread_pools")}
    assert sorted(rows) == sorted(after)
    assert rows["Native-Transport-Requests"].active_tasks == 1
    assert rows["MutationStage"].completed_tasks >= after["MutationStage"][2]
    assert rows["CompactionExecutor"].active_tasks_limit >= 1


def test_caches_chunk_cache(server, session, ks):
    """system_views.caches: the block cache as Cassandra's chunk cache
    ('chunks'): its lookups and hits move with reads of flushed data; no
    key, row or counter cache rows (cassette keeps none)."""
    session.execute("CREATE TABLE %s.cc (k int PRIMARY KEY, v text)" % ks)
    for i in range(100):
        session.execute("INSERT INTO %s.cc (k, v) VALUES (%d, 'v%d')" % (ks, i, i))
    r = subprocess.run([TOOL, "-p", str(server.admin_port), "flush", ks, "cc"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    rows = list(session.execute("SELECT * FROM system_views.caches"))
    assert [x.name for x in rows] == ["chunks"]
    before = rows[0]
    assert before.capacity_bytes > 0 and before.request_count >= before.hit_count
    for _ in range(2):
        for i in range(100):
            assert session.execute("SELECT v FROM %s.cc WHERE k = %d" % (ks, i)).one().v == "v%d" % i
    after = session.execute("SELECT * FROM system_views.caches").one()
    assert after.request_count - before.request_count >= 200
    assert after.hit_count - before.hit_count >= 100          # the second pass finds the blocks cached
    assert 0 <= after.hit_ratio <= 1 and after.entry_count >= 1 and after.size_bytes > 0


def test_info_caches_and_memory(server, session, ks):
    """info: the cache lines of nodetool 4.1 (no key/row/counter cache:
    sized 0; the block cache as the Chunk Cache with its lookups), off-heap
    memory from the tables' filters and indexes, sizes as
    FileUtils.stringifyFileSize."""
    session.execute("CREATE TABLE %s.inf (k int PRIMARY KEY, v int)" % ks)
    session.execute("INSERT INTO %s.inf (k, v) VALUES (1, 1)" % ks)
    assert tool(server, "flush", ks, "inf").returncode == 0
    session.execute("SELECT v FROM %s.inf WHERE k = 1" % ks)
    r = tool(server, "info")
    assert r.returncode == 0, r.stderr
    lines = {l.split(":", 1)[0].strip(): l.split(":", 1)[1].strip() for l in r.stdout.splitlines()}
    for name in ("Key Cache", "Row Cache", "Counter Cache"):
        assert lines[name].startswith("entries 0, size 0 bytes, capacity 0 bytes, 0 hits, 0 requests"), lines[name]
    m = re.fullmatch(r"entries (\d+), size ([\d.]+ (?:bytes|KiB|MiB|GiB)), capacity ([\d.]+ (?:KiB|MiB|GiB)), "
                     r"(\d+) misses, (\d+) requests, ([\d.]+|NaN) recent hit rate, ([\d.]+|NaN) microseconds miss latency",
                     lines["Chunk Cache"])
    assert m and int(m.group(5)) >= int(m.group(4)) and int(m.group(5)) >= 1, lines["Chunk Cache"]
    assert float(lines["Off Heap Memory (MB)"]) > 0
    assert re.fullmatch(r"\d+(\.\d{1,2})? (bytes|KiB|MiB|GiB)", lines["Load"]), lines["Load"]
    assert not re.search(r"\.\d*0 ", lines["Load"]), lines["Load"]        # "#.##": no trailing zero


def test_info_chunk_cache_misses_timed(tmp_path):
    """info's Chunk Cache line: a flush leaves the blocks it wrote cached
    (no miss reading them back); after a restart the first read of the
    sstable misses, and its load is timed (miss latency)."""
    srv = H.new_server(tmp_path)
    try:
        c, s = H.connect(srv.host, srv.port)
        s.execute("CREATE KEYSPACE kc WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE kc.t (k int PRIMARY KEY, v int)")
        s.execute("INSERT INTO kc.t (k, v) VALUES (1, 1)")
        assert tool(srv, "flush", "kc", "t").returncode == 0
        c.shutdown()

        def chunk_cache():
            r = tool(srv, "info")
            assert r.returncode == 0, r.stderr
            line = [l for l in r.stdout.splitlines() if l.startswith("Chunk Cache")][0]
            m = re.search(r"(\d+) misses, (\d+) requests, .* ([\d.]+|NaN) microseconds miss latency", line)
            assert m, line
            return int(m.group(1)), int(m.group(2)), m.group(3), line
        for restart in (False, True):
            if restart:
                srv.restart()
            c, s = H.connect(srv.host, srv.port)
            assert s.execute("SELECT v FROM kc.t WHERE k = 1").one().v == 1
            c.shutdown()
            misses, requests, latency, line = chunk_cache()
            assert requests >= 1, line
            if not restart:
                assert misses == 0 and latency == "NaN", line
            else:
                assert misses >= 1 and float(latency) > 0, line
    finally:
        srv.stop()


def test_info_percent_repaired(tmp_path):
    """Percent Repaired (TableMetrics.globalPercentRepaired): 100.0% while
    no keyspace replicated more than once holds an sstable, 0.0% once one
    does (nothing is ever repaired on one node)."""
    srv = H.new_server(tmp_path)
    try:
        def pct():
            r = tool(srv, "info")
            assert r.returncode == 0, r.stderr
            return re.search(r"Percent Repaired\s+: (\S+)", r.stdout).group(1)
        assert pct() == "100.0%"
        c, s = H.connect(srv.host, srv.port)
        s.execute("CREATE KEYSPACE k1 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE k1.t (k int PRIMARY KEY)")
        s.execute("INSERT INTO k1.t (k) VALUES (1)")
        assert tool(srv, "flush", "k1").returncode == 0
        assert pct() == "100.0%"                     # RF 1: left out
        s.execute("CREATE KEYSPACE k3 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}")
        s.execute("CREATE TABLE k3.t (k int PRIMARY KEY)")
        s.execute("INSERT INTO k3.t (k) VALUES (1)")
        assert pct() == "100.0%"                     # memtable only
        assert tool(srv, "flush", "k3").returncode == 0
        assert pct() == "0.0%"
        c.shutdown()
    finally:
        srv.stop()


def test_snapshots(server, session, ks):
    """snapshot / listsnapshots / clearsnapshot with nodetool 4.1's
    arguments and messages: the snapshot flushes first and hard-links the
    sstables (with a manifest.json), a taken name is an error, the true
    size grows once the live sstables are compacted away, tablestats'
    'Space used by snapshots' follows, and clearing removes them."""
    import glob
    session.execute("CREATE TABLE %s.sn (k int PRIMARY KEY, v text)" % ks)
    for i in range(100):
        session.execute("INSERT INTO %s.sn (k, v) VALUES (%d, 'value %d')" % (ks, i, i))
    r = tool(server, "snapshot", "-t", "before", "-cf", "sn", ks)
    assert r.returncode == 0, r.stderr
    assert r.stdout == ("Requested creating snapshot(s) for [%s] with snapshot name [before] and options "
                        "{skipFlush=false}\nSnapshot directory: before\n" % ks)
    snapdir = glob.glob(os.path.join(server.data_dir, "data", ks, "sn-*", "snapshots", "before"))
    assert len(snapdir) == 1
    files = sorted(os.listdir(snapdir[0]))
    assert "manifest.json" in files and any(f.endswith("-Data.db") for f in files), files
    r = tool(server, "snapshot", "-t", "before", ks)
    # nodetool's err(): "error: ..." and exit 2 (a bad command line, badUse, exits 1)
    assert r.returncode == 2 and "Snapshot before for %s already exists." % ks in r.stderr
    assert tool(server, "snapshot", "-t", "a:b", ks).returncode == 2
    r = tool(server, "snapshot", "-t", "", ks)
    assert r.returncode == 2 and "error: You must supply a snapshot name." in r.stderr, (r.stdout, r.stderr)
    for opt, title in (("-t", "tag"), ("--table", "table"), ("-kt", "ktlist")):
        r = tool(server, "snapshot", ks, opt)
        assert r.returncode != 0 and "nodetool: Required values for option '%s' not provided" % title in r.stdout, \
            (opt, r.stdout, r.stderr)
    r = tool(server, "snapshot", "-t", "x", "no_such_ks")
    assert r.returncode == 2 and "error: Keyspace no_such_ks does not exist" in r.stderr, (r.stdout, r.stderr)
    r = tool(server, "listsnapshots")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "Snapshot Details: "
    assert lines[1].split() == ["Snapshot", "name", "Keyspace", "name", "Column", "family", "name", "True", "size",
                                "Size", "on", "disk", "Creation", "time", "Expiration", "time"]
    row = [l for l in lines if l.startswith("before ") and " %s " % ks in l]
    assert len(row) == 1 and re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z", row[0]), r.stdout
    assert re.search(r"Total TrueDiskSpaceUsed: [\d.]+ (bytes|KiB|MiB)", r.stdout)

    def snap_space():
        st = tool(server, "tablestats", "%s.sn" % ks).stdout
        return int(re.search(r"Space used by snapshots \(total\): (\d+)", st).group(1))
    small = snap_space()
    assert small == 0                             # shares its sstables with the live set; no manifest
    for i in range(100, 200):
        session.execute("INSERT INTO %s.sn (k, v) VALUES (%d, 'value %d')" % (ks, i, i))
    assert tool(server, "flush", ks, "sn").returncode == 0
    assert tool(server, "compact", ks, "sn").returncode == 0
    assert snap_space() > small + 1000            # its sstables are now only the snapshot's
    assert session.execute("SELECT count(*) FROM %s.sn" % ks).one()[0] == 200
    r = tool(server, "clearsnapshot", ks)
    assert r.returncode == 2 and "Specify snapshot name or --all" in r.stderr
    r = tool(server, "clearsnapshot", ks, "-t")     # airline: a value-taking option at the end
    assert r.returncode != 0 and "nodetool: Required values for option 'snapshot_name' not provided" in r.stdout, \
        (r.stdout, r.stderr)
    r = tool(server, "clearsnapshot", "-t", "before", ks)
    assert r.returncode == 0 and r.stdout == ("Requested clearing snapshot(s) for [%s] with snapshot name "
                                              "[before]\n" % ks), r.stdout
    assert not glob.glob(os.path.join(server.data_dir, "data", ks, "sn-*", "snapshots", "before"))
    assert snap_space() == 0


def test_listsnapshots_every_row_and_whole_names(server, session, ks):
    """snapshot keeps the whole tag and listsnapshots prints every snapshot
    with its whole name: nodetool has no limit on either (cassette once cut
    tags to 63 characters when snapshotting, and listed 256 rows at most).
    300 snapshots with 120-character tags; a tag too long for a directory
    name is an error (Cassandra's mkdir fails with ENAMETOOLONG)."""
    session.execute("CREATE TABLE %s.many (k int PRIMARY KEY)" % ks)
    session.execute("INSERT INTO %s.many (k) VALUES (1)" % ks)
    tags = ["t%03d_" % i + "x" * 115 for i in range(300)]
    for t in tags:
        r = tool(server, "snapshot", "-t", t, "-cf", "many", "--skip-flush", ks)
        assert r.returncode == 0, (t, r.stderr)
    listed = [k[0] for k in snapshot_rows(server) if k[1] == ks and k[2] == "many"]
    assert sorted(listed) == tags
    r = tool(server, "snapshot", "-t", "y" * 256, "-cf", "many", ks)
    assert r.returncode == 2 and "Snapshot name is longer than a directory name may be (255 bytes)" in r.stderr, \
        (r.stdout, r.stderr)
    assert tool(server, "clearsnapshot", "--all", ks).returncode == 0


SNAP_BAD_USE = "\nSee 'nodetool help' or 'nodetool help <command>'.\n"
NS_UNITS = "[NANOSECONDS, MICROSECONDS, MILLISECONDS, SECONDS, MINUTES, HOURS, DAYS]"


def snapshot_rows(server, *args):
    """listsnapshots' rows as {(tag, ks, table): (created, expires or '')}."""
    r = tool(server, "listsnapshots", *args)
    assert r.returncode == 0, r.stderr
    rows = {}
    for line in r.stdout.splitlines()[2:]:
        f = line.split()
        if len(f) >= 8 and re.fullmatch(r"\d{4}-\d\d-\d\dT[\d:.]+Z", f[-1]) and re.fullmatch(
                r"\d{4}-\d\d-\d\dT[\d:.]+Z", f[-2]):
            rows[(f[0], f[1], f[2])] = (f[-2], f[-1])
        elif len(f) >= 7 and re.fullmatch(r"\d{4}-\d\d-\d\dT[\d:.]+Z", f[-1]):
            rows[(f[0], f[1], f[2])] = (f[-1], "")
    return rows


def instant(s):
    import datetime
    return datetime.datetime.strptime(s.replace("Z", "+0000"),
                                      "%Y-%m-%dT%H:%M:%S.%f%z" if "." in s else "%Y-%m-%dT%H:%M:%S%z")


def test_snapshot_ttl(server, session, ks):
    """snapshot --ttl as nodetool 4.1 (Snapshot, StorageService.takeSnapshot,
    SnapshotManifest, ListSnapshots): the TTL shows in the options, the
    manifest's expires_at is created_at + TTL and listsnapshots prints it
    as "Expiration time" (a snapshot without one: empty, never expires; -nt
    leaves the TTL'd ones out); it goes with -sf, -kt and -cf.  A bad
    duration, one in ms, or one under 60 s is a badUse (exit 1) worded as
    Cassandra's DurationSpec / takeSnapshot, and nothing is snapshotted."""
    import glob
    import json
    session.execute("CREATE TABLE %s.snt (k int PRIMARY KEY, v text)" % ks)
    session.execute("INSERT INTO %s.snt (k, v) VALUES (1, 'one')" % ks)
    r = tool(server, "snapshot", "-t", "ttl_h", "--ttl", "1h", "-cf", "snt", ks)
    assert r.returncode == 0, r.stderr
    assert r.stdout == ("Requested creating snapshot(s) for [%s] with snapshot name [ttl_h] and options "
                        "{skipFlush=false, ttl=1h}\nSnapshot directory: ttl_h\n" % ks)
    r = tool(server, "snapshot", "-t", "ttl_d", "-sf", "--ttl", "2d", "-kt", "%s.snt" % ks)
    assert r.returncode == 0, r.stderr
    assert r.stdout == ("Requested creating snapshot(s) for [%s.snt] with snapshot name [ttl_d] and options "
                        "{skipFlush=true, ttl=2d}\nSnapshot directory: ttl_d\n" % ks)
    assert tool(server, "snapshot", "-t", "plain", "-cf", "snt", ks).returncode == 0

    snaps = os.path.join(server.data_dir, "data", ks, "snt-*", "snapshots")
    man = json.load(open(glob.glob(os.path.join(snaps, "ttl_h", "manifest.json"))[0]))
    assert (instant(man["expires_at"]) - instant(man["created_at"])).total_seconds() == 3600
    man_d = json.load(open(glob.glob(os.path.join(snaps, "ttl_d", "manifest.json"))[0]))
    assert (instant(man_d["expires_at"]) - instant(man_d["created_at"])).total_seconds() == 2 * 86400
    assert json.load(open(glob.glob(os.path.join(snaps, "plain", "manifest.json"))[0]))["expires_at"] is None

    rows = snapshot_rows(server)
    assert rows[("ttl_h", ks, "snt")] == (man["created_at"], man["expires_at"])
    assert rows[("ttl_d", ks, "snt")] == (man_d["created_at"], man_d["expires_at"])
    assert rows[("plain", ks, "snt")][1] == ""
    rows = snapshot_rows(server, "-nt")
    assert ("plain", ks, "snt") in rows
    assert not [k for k in rows if k[0] in ("ttl_h", "ttl_d")], rows

    bad = [(["--ttl", "1x"], "Invalid duration: 1x Accepted units:%s where case matters and only non-negative "
                             "values." % NS_UNITS),
           (["--ttl", "-5m"], "Invalid duration: -5m Accepted units:%s where case matters and only non-negative "
                              "values." % NS_UNITS),
           (["--ttl", "500ms"], "Invalid duration: 500ms Accepted units:[SECONDS, MINUTES, HOURS, DAYS]"),
           (["--ttl", "30000d"], "Invalid duration: 30000d. It shouldn't be more than 2147483646 in seconds"),
           (["--ttl", "59s"], "ttl for snapshot must be at least 60 seconds"),
           (["--ttl"], "Required values for option 'ttl' not provided")]
    for args, msg in bad:
        r = tool(server, "snapshot", "-t", "nope", "-cf", "snt", ks, *args)
        assert r.returncode == 1, (args, r.stdout, r.stderr)
        assert r.stdout.endswith("nodetool: " + msg + SNAP_BAD_USE), (args, r.stdout)
    assert not glob.glob(os.path.join(snaps, "nope"))
    r = tool(server, "snapshot", "-t", "min", "--ttl", "1m", "-cf", "snt", ks)   # exactly the minimum
    assert r.returncode == 0, r.stderr
    assert tool(server, "clearsnapshot", "--all", ks).returncode == 0
    assert not glob.glob(os.path.join(snaps, "*"))


def test_snapshot_ttl_expiry(tmp_path, monkeypatch):
    """An expired snapshot disappears, as Cassandra's SnapshotManager clears
    them: while the node runs (here every second) and when it starts.  The
    minimum TTL and the check period are lowered through
    CASSETTE_SNAPSHOT_MIN_ALLOWED_TTL_SECONDS and
    CASSETTE_SNAPSHOT_TTL_CLEANUP_PERIOD_SECONDS, cassette's spellings of
    Cassandra's cassandra.snapshot.min_allowed_ttl_seconds and
    cassandra.snapshot.ttl_cleanup_period_seconds system properties."""
    monkeypatch.setenv("CASSETTE_SNAPSHOT_MIN_ALLOWED_TTL_SECONDS", "1")
    monkeypatch.setenv("CASSETTE_SNAPSHOT_TTL_CLEANUP_PERIOD_SECONDS", "1")
    srv = H.Server(tmp_path)
    srv.start()
    try:
        def tags():
            return {k[0] for k in snapshot_rows(srv)}
        for tag, ttl in (("short", ["--ttl", "1s"]), ("long", ["--ttl", "1h"]), ("forever", [])):
            r = tool(srv, "snapshot", "-t", tag, *ttl, "system_schema")
            assert r.returncode == 0, r.stderr
        assert {"short", "long", "forever"} <= tags()
        H.wait_for(lambda: "short" not in tags(), timeout=8, interval=0.2,
                   what="the 1 s snapshot to be removed by the periodic check")
        assert {"long", "forever"} <= tags()

        # Expiring while the node is down: gone at the next start, before
        # the periodic check (an hour away now) could run.
        srv.stop()
        monkeypatch.setenv("CASSETTE_SNAPSHOT_TTL_CLEANUP_PERIOD_SECONDS", "3600")
        srv.start()
        r = tool(srv, "snapshot", "-t", "down", "--ttl", "1s", "system_schema")
        assert r.returncode == 0, r.stderr
        t0 = time.time()
        srv.stop()
        time.sleep(max(0.0, 1.2 - (time.time() - t0)))
        srv.start()
        assert tags() == {"long", "forever"}
        assert b"expired snapshot" in srv.run_log()
    finally:
        srv.stop()


def listsnapshots_rows(server, *args):
    """listsnapshots' rows in print order as (tag, ks, table, true size,
    size on disk), and its Total TrueDiskSpaceUsed."""
    r = tool(server, "listsnapshots", *args)
    assert r.returncode == 0, r.stderr
    rows = []
    for line in r.stdout.splitlines()[2:]:
        f = line.split()
        if len(f) >= 8 and re.fullmatch(r"\d{4}-\d\d-\d\dT[\d:.]+Z", f[7]):
            rows.append((f[0], f[1], f[2], " ".join(f[3:5]), " ".join(f[5:7])))
    total = re.search(r"\nTotal TrueDiskSpaceUsed: (.*)\n\n$", r.stdout)
    return rows, total.group(1) if total else None


def file_size_text(n):
    """FileUtils.stringifyFileSize: '#.##' of the largest unit reached."""
    units = ["bytes", "KiB", "MiB", "GiB"]
    u, v = 0, float(n)
    while u < 3 and v >= 1024:
        v, u = v / 1024, u + 1
    return ("%.2f" % v).rstrip("0").rstrip(".") + " " + units[u]


def test_listsnapshots_dropped_tables_and_order(tmp_path):
    """listsnapshots as 4.1's (StorageService.getSnapshotDetails over
    SnapshotLoader, ListSnapshots).  Tags come in the iteration order of
    the HashMap nodetool receives over JMX: the orders below are what
    java.util.HashMap gives for these keys after a serialization round trip
    (13 keys: 32 buckets; 5 keys: 16), with no two in one bucket, where
    Cassandra's order would depend on its paths; one tag's rows by table.
    A dropped table's snapshot is still listed: Cassandra's DROP removes the
    sstables and keeps the table's snapshots directory (this server runs
    with auto_snapshot off, cassette's default, so the manual snapshot is
    the only one).  Total TrueDiskSpaceUsed (trueSnapshotsSize) adds the
    snapshot sstables of existing tables only that no live sstable shares:
    a dropped table's are listed but not counted."""
    import glob
    srv = H.new_server(tmp_path)
    try:
        c, s = H.connect(srv.host, srv.port)
        s.execute("CREATE KEYSPACE k1 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        for t in ("gone", "kept"):
            s.execute("CREATE TABLE k1.%s (k int PRIMARY KEY, v text)" % t)
            for i in range(50):
                s.execute("INSERT INTO k1.%s (k, v) VALUES (%d, 'value %d')" % (t, i, i))
        assert tool(srv, "flush", "k1").returncode == 0
        assert listsnapshots_rows(srv) == ([], None)

        tags = "alpha bravo charlie delta echo foxtrot golf hotel india juliett kilo november papa".split()
        for tag in tags:
            assert tool(srv, "snapshot", "-sf", "-t", tag, "k1").returncode == 0
        rows, total = listsnapshots_rows(srv)
        want = "november juliett foxtrot delta echo india bravo golf kilo papa alpha hotel charlie".split()
        assert [(r[0], r[2]) for r in rows] == [(t, tb) for t in want for tb in ("gone", "kept")], rows
        assert total == "0 bytes"                        # every file still shared with the live sstables
        assert tool(srv, "clearsnapshot", "--all", "k1").returncode == 0
        for tag in tags[:5]:
            assert tool(srv, "snapshot", "-sf", "-t", tag, "-cf", "kept", "k1").returncode == 0
        rows, _ = listsnapshots_rows(srv)
        assert [r[0] for r in rows] == "bravo alpha delta echo charlie".split(), rows
        assert tool(srv, "clearsnapshot", "--all", "k1").returncode == 0

        assert tool(srv, "snapshot", "-t", "before_drop", "-cf", "gone", "k1").returncode == 0
        assert tool(srv, "snapshot", "-t", "live", "-cf", "kept", "k1").returncode == 0
        for i in range(50, 100):
            s.execute("INSERT INTO k1.kept (k, v) VALUES (%d, 'value %d')" % (i, i))
        assert tool(srv, "flush", "k1", "kept").returncode == 0
        assert tool(srv, "compact", "k1", "kept").returncode == 0   # the live snapshot's sstables are its own now
        s.execute("DROP TABLE k1.gone")
        snaps = glob.glob(os.path.join(srv.data_dir, "data", "k1", "gone-*", "snapshots", "*"))
        assert [os.path.basename(p) for p in snaps] == ["before_drop"], snaps
        rows, total = listsnapshots_rows(srv)
        byname = {(r[0], r[2]): r for r in rows}
        assert set(byname) == {("before_drop", "gone"), ("live", "kept")}, rows
        gone = byname[("before_drop", "gone")]
        assert gone[1] == "k1" and gone[3] == gone[4], gone       # nothing shared: true size is all of it
        live_sst = sum(os.path.getsize(p) for p in glob.glob(os.path.join(
            srv.data_dir, "data", "k1", "kept-*", "snapshots", "live", "cs-*")))
        assert live_sst > 0 and total == file_size_text(live_sst), (total, live_sst)
        r = tool(srv, "listsnapshots", "-nt")
        assert r.returncode == 0 and "before_drop" in r.stdout
        c.shutdown()
    finally:
        srv.stop()


def test_clearsnapshot_dropped_tables(tmp_path):
    """clearsnapshot as 4.1's StorageService.clearSnapshot, which walks the
    keyspace directories on disk: a dropped table's snapshot is removed by
    its tag or by --all (its emptied directory goes too, here), only in the
    keyspaces named, and a keyspace name without a directory is no error.
    An empty -t is no name."""
    import glob
    srv = H.new_server(tmp_path)
    try:
        c, s = H.connect(srv.host, srv.port)
        for k in ("k1", "k2"):
            s.execute("CREATE KEYSPACE %s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}" % k)
            s.execute("CREATE TABLE %s.gone (k int PRIMARY KEY)" % k)
            s.execute("INSERT INTO %s.gone (k) VALUES (1)" % k)
            for tag in ("one", "two"):
                assert tool(srv, "snapshot", "-t", tag, k).returncode == 0
            s.execute("DROP TABLE %s.gone" % k)

        def tags(k):
            return sorted(os.path.basename(p) for p in glob.glob(os.path.join(
                srv.data_dir, "data", k, "gone-*", "snapshots", "*")))
        assert tags("k1") == tags("k2") == ["one", "two"]
        r = tool(srv, "clearsnapshot", "-t", "", "k1")
        assert r.returncode == 2 and "error: Specify snapshot name or --all" in r.stderr, (r.stdout, r.stderr)
        r = tool(srv, "clearsnapshot", "-t", "one", "k1", "no_such_ks")
        assert r.returncode == 0 and r.stdout == ("Requested clearing snapshot(s) for [k1, no_such_ks] with "
                                                  "snapshot name [one]\n"), (r.stdout, r.stderr)
        assert tags("k1") == ["two"] and tags("k2") == ["one", "two"]
        assert {(r[0], r[1]) for r in listsnapshots_rows(srv)[0]} == {("two", "k1"), ("one", "k2"), ("two", "k2")}
        assert tool(srv, "clearsnapshot", "--all", "k1").returncode == 0
        assert tags("k1") == [] and not glob.glob(os.path.join(srv.data_dir, "data", "k1", "gone-*"))
        assert tool(srv, "clearsnapshot", "--all").returncode == 0
        assert tags("k2") == [] and listsnapshots_rows(srv) == ([], None)
        c.shutdown()
    finally:
        srv.stop()


def test_ring(server, session):
    """ring as nodetool 4.1: one line per token of the node, sorted, under
    the last token; the same tokens system.local lists."""
    r = tool(server, "ring")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.split("\n")
    assert lines[0] == "" and lines[1] == "Datacenter: datacenter1" and lines[2] == "=========="
    assert lines[3].split() == ["Address", "Rack", "Status", "State", "Load", "Owns", "Token"]
    rows = [l.split() for l in lines[5:] if l.startswith("127.0.0.1 ")]
    tokens = [int(x[-1]) for x in rows]
    local = sorted(int(t) for t in session.execute("SELECT tokens FROM system.local").one().tokens)
    assert tokens == local
    assert int(lines[4].split()[0]) == local[-1]
    assert all(x[1:4] == ["rack1", "Up", "Normal"] and x[-2] == "100.00%" for x in rows)
    assert '"nodetool ring" is used to output all the tokens of a node.' in r.stdout


def test_describering(server, session, ks):
    """describering as nodetool 4.1: the schema version system.local shows,
    then one TokenRange per range of the node's tokens ((previous, token],
    the first wrapping around from the last), this node the only endpoint;
    unknown and LocalStrategy keyspaces fail as err() (exit 2), a missing
    argument as badUse (exit 1)."""
    r = tool(server, "describering", ks)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    local = session.execute("SELECT schema_version, tokens FROM system.local").one()
    assert lines[0] == "Schema Version:%s" % local.schema_version
    assert lines[1] == "TokenRange: "
    tokens = sorted(int(t) for t in local.tokens)
    want = ["\tTokenRange(start_token:%d, end_token:%d, endpoints:[127.0.0.1], rpc_endpoints:[127.0.0.1], "
            "endpoint_details:[EndpointDetails(host:127.0.0.1, datacenter:datacenter1, rack:rack1)])"
            % (tokens[i - 1], tokens[i]) for i in range(len(tokens))]
    assert lines[2:] == want, lines[2:4]
    r = tool(server, "describering", "no_such_ks")
    assert r.returncode == 2 and "error: No such keyspace: no_such_ks" in r.stderr, (r.stdout, r.stderr)
    r = tool(server, "describering", "system")
    assert r.returncode == 2 and "error: There is no ring for the keyspace: system" in r.stderr
    assert tool(server, "describering").returncode == 1


def test_gossipinfo(server, session):
    """gossipinfo as nodetool 4.1 on one node: the endpoint, generation and
    heartbeat, then NAME:version:value states in ApplicationState order,
    values from the node (schema version, host id, tokens as system.local
    shows them), TOKENS hidden."""
    r = tool(server, "gossipinfo")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "/127.0.0.1"
    assert re.fullmatch(r"  generation:\d{10}", lines[1]) and re.fullmatch(r"  heartbeat:\d+", lines[2]), lines[:3]
    states = [l.strip().split(":", 2) for l in lines[3:] if l.strip()]
    names = [x[0] for x in states]
    assert names == ["STATUS", "LOAD", "SCHEMA", "DC", "RACK", "RELEASE_VERSION", "RPC_ADDRESS", "NET_VERSION",
                     "HOST_ID", "RPC_READY", "NATIVE_ADDRESS_AND_PORT", "STATUS_WITH_PORT", "SSTABLE_VERSIONS",
                     "TOKENS"], names
    assert all(x[1].isdigit() for x in states)
    v = {x[0]: x[2] for x in states}
    local = session.execute("SELECT schema_version, host_id, tokens, release_version FROM system.local").one()
    assert v["SCHEMA"] == str(local.schema_version) and v["HOST_ID"] == str(local.host_id)
    assert v["RELEASE_VERSION"] == local.release_version
    assert v["STATUS"] == v["STATUS_WITH_PORT"] == "NORMAL,%d" % min(int(t) for t in local.tokens)
    assert v["DC"] == "datacenter1" and v["RACK"] == "rack1" and v["RPC_READY"] == "true"
    assert v["NATIVE_ADDRESS_AND_PORT"] == "127.0.0.1:%d" % server.port
    assert float(v["LOAD"]) >= 0 and v["TOKENS"] == "<hidden>"


def setting(session, name):
    return session.execute("SELECT value FROM system_views.settings WHERE name = %s", (name,)).one().value


def test_compaction_throughput(tmp_path):
    """compaction_throughput: Cassandra 4.1's default 64MiB/s, the config
    key in both spellings, nodetool getcompactionthroughput [-d] and
    setcompactionthroughput (0 unthrottled; errors as nodetool's), and
    system_views.settings following the live value."""
    srv = H.new_server(tmp_path / "a")
    try:
        c, s = H.connect(srv.host, srv.port)
        assert setting(s, "compaction_throughput") == "64MiB/s"
        assert tool(srv, "getcompactionthroughput").stdout == "Current compaction throughput: 64 MB/s\n"
        assert tool(srv, "getcompactionthroughput", "-d").stdout == "Current compaction throughput: 64.0 MiB/s\n"
        r = tool(srv, "setcompactionthroughput", "16")
        assert r.returncode == 0 and r.stdout == "", r.stderr
        assert tool(srv, "getcompactionthroughput").stdout == "Current compaction throughput: 16 MB/s\n"
        assert setting(s, "compaction_throughput") == "16MiB/s"
        r = tool(srv, "setcompactionthroughput", "-1")            # nodetool's err: exit 2
        assert r.returncode == 2 and r.stderr == "error: Invalid data rate: value must be non-negative\n"
        r = tool(srv, "setcompactionthroughput", "fast")          # nodetool's badUse: exit 1
        assert r.returncode == 1 and 'compaction_throughput: can not convert "fast" to a Integer' in r.stdout
        r = tool(srv, "setcompactionthroughput")
        assert r.returncode == 1 and "Required parameters are missing: compaction_throughput" in r.stdout
        assert tool(srv, "getcompactionthroughput").stdout == "Current compaction throughput: 16 MB/s\n"
        assert tool(srv, "setcompactionthroughput", "0").returncode == 0
        assert tool(srv, "getcompactionthroughput", "--precise-mib").stdout == \
            "Current compaction throughput: 0.0 MiB/s\n"
        assert setting(s, "compaction_throughput") == "0MiB/s"
        # Throttled to 1 MiB/s, a major compaction of ~3 MB of incompressible
        # rows runs for seconds; compactionstats gives its remaining time from
        # the cap (nodetool's h/m/s), and lifting the cap lets it finish.
        from cassandra.concurrent import execute_concurrent_with_args
        s.execute("CREATE KEYSPACE kt WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE kt.t (k int PRIMARY KEY, v blob)")
        ins = s.prepare("INSERT INTO kt.t (k, v) VALUES (?, ?)")
        for part in range(2):
            execute_concurrent_with_args(s, ins, [(k, os.urandom(1000)) for k in range(part * 1500, part * 1500 + 1500)])
            assert tool(srv, "flush", "kt", "t").returncode == 0
        assert tool(srv, "setcompactionthroughput", "1").returncode == 0
        import threading
        done = []
        th = threading.Thread(target=lambda: done.append(tool(srv, "compact", "kt", "t")))
        th.start()
        seen = []

        def running():
            out = tool(srv, "compactionstats").stdout
            if "Active compaction remaining time" in out:
                seen.append(out)
            return seen or done
        H.wait_for(running, timeout=30, what="a running compaction in compactionstats")
        assert seen, "the compaction finished before compactionstats saw it: %s" % done
        assert re.search(r"Active compaction remaining time :\s+\d+h\d\dm\d\ds\n", seen[0]), seen[0]
        assert tool(srv, "setcompactionthroughput", "0").returncode == 0
        th.join(60)
        assert done and done[0].returncode == 0, done
        assert s.execute("SELECT count(*) FROM kt.t").one()[0] == 3000
        c.shutdown()
    finally:
        srv.stop()
    for i, (text, want) in enumerate((("compaction_throughput: 8MiB/s\n", "8MiB/s"),
                                      ("compaction_throughput: 1536KiB/s\n", "1536KiB/s"),
                                      ("compaction_throughput_mb_per_sec: 4\n", "4MiB/s"))):
        cfg = tmp_path / ("c%d.yaml" % i)
        cfg.write_text(text)
        srv = H.new_server(tmp_path / ("b%d" % i), extra_args=["--config", str(cfg)])
        try:
            c, s = H.connect(srv.host, srv.port)
            assert setting(s, "compaction_throughput") == want, text
            c.shutdown()
        finally:
            srv.stop()


# ---------------------------------------------------------------- sstables: getsstables, garbagecollect, ...

def table_dir(srv, ks, table):
    import glob
    dirs = glob.glob(os.path.join(srv.data_dir, "data", ks, table + "-*"))
    assert len(dirs) == 1, dirs
    return os.path.realpath(dirs[0])


def data_files(srv, ks, table):
    import glob
    return sorted(glob.glob(os.path.join(table_dir(srv, ks, table), "cs-*-Data.db")),
                  key=lambda p: int(os.path.basename(p).split("-")[1]))


def sstable_meta(path):
    """cassette-tool sstable metadata FILE as a dict of its 'Name: value' lines."""
    r = subprocess.run([TOOL, "sstable", "metadata", path], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return {l.split(":", 1)[0]: l.split(":", 1)[1].strip() for l in r.stdout.splitlines() if ":" in l}


def test_getsstables(server, session, ks):
    """getsstables: the Data.db paths (absolute, in the table directory) of
    the sstables whose index holds the key: three after three flushes of one
    partition, one for a key written once, none for a key never written;
    -hf takes the key in hex, a composite key is components joined by ':'
    ('\\:' inside one); nodetool's messages and exit codes otherwise."""
    session.execute("CREATE TABLE %s.gs (k int, c int, v text, PRIMARY KEY (k, c))" % ks)
    session.execute("CREATE TABLE %s.gs2 (a int, b text, v int, PRIMARY KEY ((a, b)))" % ks)
    assert tool(server, "disableautocompaction", ks, "gs").returncode == 0
    for i in range(3):
        session.execute("INSERT INTO %s.gs (k, c, v) VALUES (1, %d, 'x')" % (ks, i))
        session.execute("INSERT INTO %s.gs2 (a, b, v) VALUES (7, 'x:y', %d)" % (ks, i))
        if i == 1:
            session.execute("INSERT INTO %s.gs (k, c, v) VALUES (2, 0, 'y')" % ks)
        assert tool(server, "flush", ks).returncode == 0
    files = data_files(server, ks, "gs")
    assert len(files) == 3
    r = tool(server, "getsstables", ks, "gs", "1")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == files
    assert all(os.path.isabs(p) and p.endswith("-Data.db") for p in r.stdout.splitlines())
    assert tool(server, "getsstables", ks, "gs", "2").stdout.splitlines() == [files[1]]
    assert tool(server, "getsstables", ks, "gs", "3").stdout == ""
    assert tool(server, "getsstables", "-hf", ks, "gs", "00000001").stdout.splitlines() == files
    assert tool(server, "getsstables", ks, "gs", "--hex-format", "00000002").stdout.splitlines() == [files[1]]
    assert len(tool(server, "getsstables", ks, "gs2", "7:x\\:y").stdout.splitlines()) == 3
    assert tool(server, "getsstables", ks, "gs2", "7:x").stdout == ""
    # the memtable is not an sstable: a key only there is in none
    session.execute("INSERT INTO %s.gs (k, c, v) VALUES (9, 0, 'm')" % ks)
    assert tool(server, "getsstables", ks, "gs", "9").stdout == ""
    # a compaction puts the partition in one sstable
    assert tool(server, "compact", ks, "gs").returncode == 0
    assert len(tool(server, "getsstables", ks, "gs", "1").stdout.splitlines()) == 1

    r = tool(server, "getsstables", ks, "gs")
    assert r.returncode == 1 and "nodetool: getsstables requires ks, cf and key args" in r.stdout
    r = tool(server, "getsstables", ks, "nope", "1")
    assert r.returncode == 1 and r.stderr == "ColumnFamilyStore for %s/nope not found.\n" % ks
    r = tool(server, "getsstables", ks, "gs", "one")
    assert r.returncode == 2 and r.stderr == "error: Unable to make int from 'one'\n"
    r = tool(server, "getsstables", "-hf", ks, "gs", "123")
    assert r.returncode == 2 and "error: An hex string representing bytes must have an even length" in r.stderr


def test_garbagecollect_row_granularity(tmp_path):
    """garbagecollect (ROW, the default): each sstable is rewritten alone,
    losing the rows and partitions that deletions in the other sstables
    shadow; the deletions themselves stay until gc_grace_seconds has
    passed, then go too.  The data read through CQL never changes."""
    srv = H.new_server(tmp_path)
    try:
        c, s = H.connect(srv.host, srv.port)
        s.execute("CREATE KEYSPACE kg WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE kg.t (k int, c int, v text, PRIMARY KEY (k, c))")
        assert tool(srv, "disableautocompaction", "kg", "t").returncode == 0
        for k in range(10):
            for cc in range(5):
                s.execute("INSERT INTO kg.t (k, c, v) VALUES (%d, %d, 'v')" % (k, cc))
        assert tool(srv, "flush", "kg", "t").returncode == 0
        s.execute("DELETE FROM kg.t WHERE k = 1")                    # a partition deletion
        s.execute("DELETE FROM kg.t WHERE k = 2 AND c = 3")          # a row deletion
        assert tool(srv, "flush", "kg", "t").returncode == 0
        old, tomb = data_files(srv, "kg", "t")
        assert sstable_meta(old)["Rows"] == "50" and sstable_meta(old)["Partitions"] == "10"
        before = sorted(s.execute("SELECT k, c FROM kg.t"))
        r = tool(srv, "garbagecollect", "kg", "t")
        assert r.returncode == 0 and r.stdout == "" and r.stderr == "", (r.stdout, r.stderr)
        new = data_files(srv, "kg", "t")
        assert len(new) == 2 and old not in new and tomb not in new
        data, tombs = sorted(new, key=lambda p: int(sstable_meta(p)["Tombstones"]))
        m = sstable_meta(data)
        assert (m["Partitions"], m["Rows"], m["Tombstones"]) == ("9", "44", "0"), m
        m = sstable_meta(tombs)
        assert (m["Partitions"], m["Tombstones"]) == ("2", "2"), m   # gc_grace_seconds not passed: kept
        assert sorted(s.execute("SELECT k, c FROM kg.t")) == before and len(before) == 44
        assert tool(srv, "getsstables", "kg", "t", "1").stdout.splitlines() == [tombs]
        # Past gc_grace_seconds (0), a tombstone goes where no other sstable
        # holds its partition (the purge limit is the key's, as Cassandra's
        # getPurgeEvaluator): k = 1's; k = 2's row tombstone stays, the data
        # sstable still holding older rows of k = 2.
        s.execute("ALTER TABLE kg.t WITH gc_grace_seconds = 0")
        time.sleep(1.1)                                              # deletion times are in seconds
        assert tool(srv, "garbagecollect", "kg").returncode == 0
        files = data_files(srv, "kg", "t")
        assert len(files) == 2
        assert sorted(sstable_meta(p)["Tombstones"] for p in files) == ["0", "1"]
        assert tool(srv, "getsstables", "kg", "t", "1").stdout == ""
        assert len(tool(srv, "getsstables", "kg", "t", "2").stdout.splitlines()) == 2
        assert sorted(s.execute("SELECT k, c FROM kg.t")) == before
        assert re.search(r"SSTable count: 2\n", tool(srv, "tablestats", "kg.t").stdout)
        c.shutdown()
    finally:
        srv.stop()


def test_garbagecollect_cell_granularity(tmp_path):
    """-g CELL also drops the cells a newer write in another sstable
    overwrote (ROW keeps them); -j takes a job count."""
    srv = H.new_server(tmp_path)
    try:
        c, s = H.connect(srv.host, srv.port)
        s.execute("CREATE KEYSPACE kc WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE kc.t (k int PRIMARY KEY, a text, b text)")
        assert tool(srv, "disableautocompaction", "kc", "t").returncode == 0
        for k in range(20):
            s.execute("INSERT INTO kc.t (k, a, b) VALUES (%d, 'a0', 'b0')" % k)
        assert tool(srv, "flush", "kc", "t").returncode == 0
        for k in range(10):
            s.execute("UPDATE kc.t SET a = 'a1' WHERE k = %d" % k)
        assert tool(srv, "flush", "kc", "t").returncode == 0

        def cells():
            return sorted(int(sstable_meta(p)["Cells"]) for p in data_files(srv, "kc", "t"))
        assert cells() == [10, 40]
        assert tool(srv, "garbagecollect", "-g", "ROW", "kc", "t").returncode == 0
        assert cells() == [10, 40]                                   # no deletion: nothing to drop
        r = tool(srv, "garbagecollect", "-g", "CELL", "-j", "1", "kc", "t")
        assert r.returncode == 0 and r.stdout == "", r.stderr
        assert cells() == [10, 30]                                   # the ten overwritten 'a0' cells
        rows = {x.k: (x.a, x.b) for x in s.execute("SELECT k, a, b FROM kc.t")}
        assert rows == {k: ("a1" if k < 10 else "a0", "b0") for k in range(20)}
        c.shutdown()
    finally:
        srv.stop()


def test_garbagecollect_arguments(server, session, ks):
    session.execute("CREATE TABLE %s.gca (k int PRIMARY KEY)" % ks)
    for args in ([], [ks], [ks, "gca"], ["--granularity", "CELL", "--jobs", "2", ks, "gca"]):
        r = tool(server, "garbagecollect", *args)
        assert r.returncode == 0 and r.stdout == "", (args, r.stderr)
    r = tool(server, "garbagecollect", "-g", "ROWS", ks)
    assert r.returncode == 2 and r.stderr == ("error: Value for option 'granularity' was given as 'ROWS' which is "
                                              "not in the list of allowed values: [ROW, CELL]\n")
    r = tool(server, "garbagecollect", "-j", "many", ks)
    assert r.returncode == 1 and 'nodetool: jobs: can not convert "many" to a int' in r.stdout
    r = tool(server, "garbagecollect", "-g")
    assert r.returncode == 1 and "Required values for option 'granularity' not provided" in r.stdout
    r = tool(server, "garbagecollect", "nope")
    assert r.returncode == 1 and "nodetool: Keyspace [nope] does not exist." in r.stdout
    r = tool(server, "garbagecollect", ks, "nope")                  # the server's IllegalArgumentException
    assert r.returncode == 2 and r.stderr == "error: Unknown keyspace/cf pair (%s.nope)\n" % ks
    r = tool(server, "garbagecollect", "-x", ks)
    assert r.returncode == 1 and "Found unexpected parameters: [-x]" in r.stdout


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def stats_to_v1(path):
    """Rewrite a Statistics.db (version 2 or 3) as version 1 wrote it
    (docs/format/sstable.md: 96 buckets a histogram, no overflow bucket,
    local deletion times by day), as an sstable written before the format
    moved on reads."""
    import struct
    b = open(path, "rb").read()
    version = struct.unpack(">I", b[4:8])[0]
    assert version in (2, 3), version

    def uvarint(p):
        v = shift = 0
        while True:
            x = b[p]
            p += 1
            v |= (x & 0x7F) << shift
            shift += 7
            if x < 0x80:
                return v, p

    def put_uvarint(v):
        out = bytearray()
        while v >= 0x80:
            out.append((v & 0x7F) | 0x80)
            v >>= 7
        out.append(v)
        return bytes(out)
    pos = 16 + 8 + 8 + 4 + 8 * 5 + 8 + 8 + 4 + 8 + 8 + 8 + 1
    for _ in range(2):                                               # min and max clustering
        pos += 4 + struct.unpack(">I", b[pos:pos + 4])[0]
    out = bytearray(b[:pos])
    out[4:8] = struct.pack(">I", 1)
    p = pos
    for want in (151, 119):
        n, p = uvarint(p)
        assert n == want
        h = []
        for _ in range(n):
            v, p = uvarint(p)
            h.append(v)
        out += b"".join(put_uvarint(v) for v in h[:95]) + put_uvarint(sum(h[95:]))
    n, p = uvarint(p)                                                # ancestors, as they are
    anc = []
    for _ in range(n):
        v, p = uvarint(p)
        anc.append(v)
    out += put_uvarint(n) + b"".join(put_uvarint(v) for v in anc)
    n, p = uvarint(p)                                                # drop times: version 3's points to days
    days = {}
    for _ in range(n):
        t, p = uvarint(p)
        c, p = uvarint(p)
        d = t // 86400 if version == 3 else t
        days[d] = days.get(d, 0) + c
    out += put_uvarint(len(days)) + b"".join(put_uvarint(d) + put_uvarint(c) for d, c in sorted(days.items()))
    assert p == len(b) - 4
    out += struct.pack(">I", crc32c(bytes(out)))
    open(path, "wb").write(bytes(out))


def test_verify_and_upgradesstables(tmp_path):
    """verify -f checks every sstable's checksums (nothing printed, exit 0);
    -c also wants the current format: sstables written at Statistics.db
    version 1 fail it until upgradesstables rewrites them (and only them;
    -a rewrites every sstable); a flipped byte in a Data.db block fails
    verify as nodetool reports a corrupt sstable."""
    srv = H.new_server(tmp_path)
    try:
        c, s = H.connect(srv.host, srv.port)
        s.execute("CREATE KEYSPACE kv WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE kv.t (k int PRIMARY KEY, v text)")
        s.execute("CREATE TABLE kv.u (k int PRIMARY KEY, v text)")
        for t in ("t", "u"):
            assert tool(srv, "disableautocompaction", "kv", t).returncode == 0
        for i in range(2):
            for k in range(100):
                s.execute("INSERT INTO kv.t (k, v) VALUES (%d, 'value %d %d')" % (k + 100 * i, k, i))
            s.execute("INSERT INTO kv.u (k, v) VALUES (%d, 'u')" % i)
            assert tool(srv, "flush", "kv").returncode == 0
        c.shutdown()
        r = tool(srv, "verify", "kv")
        assert r.returncode == 1 and r.stdout == (
            "verify is disabled unless a [-f|--force] override flag is provided. See CASSANDRA-9947 and "
            "CASSANDRA-17017 for details.\n")
        for args in (["-f"], ["-f", "kv"], ["-f", "-e", "-c", "kv", "t", "u"], ["--force", "-q", "-e", "-t", "kv"]):
            r = tool(srv, "verify", *args)
            assert r.returncode == 0 and r.stdout == "" and r.stderr == "", (args, r.stderr)
        r = tool(srv, "verify", "-f", "-t", "kv")
        assert r.returncode == 1 and "Token verification requires --extended-verify" in r.stdout
        r = tool(srv, "verify", "-f", "kv", "nope")
        assert r.returncode == 2 and r.stderr == "error: Unknown keyspace/cf pair (kv.nope)\n"
        r = tool(srv, "upgradesstables", "-j", "1", "kv")               # all at the current version: none
        assert r.returncode == 0 and r.stdout == "", r.stderr
        assert len(data_files(srv, "kv", "t")) == 2

        # sstables of the previous format, as an older build wrote them
        srv.stop()
        olds = data_files(srv, "kv", "t")
        for p in olds:
            stats_to_v1(p.replace("-Data.db", "-Statistics.db"))
        srv.start()
        for p in olds:
            assert sstable_meta(p)["Format version"] == "1 (Statistics.db 1)"
        r = tool(srv, "verify", "-f", "kv", "u")
        assert r.returncode == 0, r.stderr
        r = tool(srv, "verify", "-f", "-c", "kv", "t")
        m = re.fullmatch(r"error: BigTableReader\(path='(.*)'\) is not the latest version, run upgradesstables\n",
                         r.stderr)
        assert r.returncode == 2 and m and m.group(1) in olds, r.stderr
        u_before = data_files(srv, "kv", "u")
        r = tool(srv, "upgradesstables", "kv")
        assert r.returncode == 0, r.stderr
        assert r.stdout == "jobs (2) is bigger than configured concurrent_compactors (1) on the host, using at most " \
                           "1 threads\n"
        news = data_files(srv, "kv", "t")
        assert len(news) == 2 and not set(news) & set(olds)
        assert all(sstable_meta(p)["Format version"] == "1 (Statistics.db 3)" for p in news)
        assert data_files(srv, "kv", "u") == u_before                   # already current: left alone
        assert tool(srv, "verify", "-f", "-c", "kv").returncode == 0
        assert tool(srv, "upgradesstables", "-a", "kv", "u").returncode == 0
        assert not set(data_files(srv, "kv", "u")) & set(u_before)      # -a: rewritten anyway
        c, s = H.connect(srv.host, srv.port)
        assert s.execute("SELECT count(*) FROM kv.t").one()[0] == 200
        c.shutdown()
        r = tool(srv, "upgradesstables", "-t", "soon", "kv")
        assert r.returncode == 1 and 'max_timestamp: can not convert "soon" to a long' in r.stdout

        # a flipped byte in a data block
        victim = data_files(srv, "kv", "t")[0]
        with open(victim, "r+b") as f:
            f.seek(100)
            x = f.read(1)
            f.seek(100)
            f.write(bytes([x[0] ^ 0xFF]))
        r = tool(srv, "verify", "-f", "kv")
        assert r.returncode == 2 and r.stderr == "error: Corrupted SSTable : %s\n" % victim, r.stderr
    finally:
        srv.stop()


def test_scrub(tmp_path):
    """scrub rewrites every sstable: a sound one keeps every row, and one
    with a corrupt block loses the partitions that block held and nothing
    else; verify passes afterwards; a pre-scrub snapshot is taken unless
    -ns; a counter table stops at corruption unless -s."""
    srv = H.new_server(tmp_path)
    try:
        c, s = H.connect(srv.host, srv.port)
        s.execute("CREATE KEYSPACE ksc WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE ksc.t (k int PRIMARY KEY, v blob)")
        s.execute("CREATE TABLE ksc.n (k int PRIMARY KEY, n counter)")
        assert tool(srv, "disableautocompaction", "ksc").returncode == 0
        ins = s.prepare("INSERT INTO ksc.t (k, v) VALUES (?, ?)")
        for k in range(400):
            s.execute(ins, (k, os.urandom(200)))                   # ~20 blocks of 4 KiB
        for k in range(400):
            s.execute("UPDATE ksc.n SET n = n + 1 WHERE k = %d" % k)
        assert tool(srv, "flush", "ksc").returncode == 0
        r = tool(srv, "scrub", "-ns", "ksc")
        assert r.returncode == 0 and r.stderr == "", r.stderr
        assert s.execute("SELECT count(*) FROM ksc.t").one()[0] == 400
        assert tool(srv, "listsnapshots").stdout == "Snapshot Details: \nThere are no snapshots\n"
        r = tool(srv, "scrub", "ksc", "t")
        assert r.returncode == 0, r.stderr
        assert "pre-scrub-" in tool(srv, "listsnapshots").stdout
        c.shutdown()

        srv.stop()                                                   # corrupt a block in the middle
        for t in ("t", "n"):
            victim = data_files(srv, "ksc", t)[0]
            size = os.path.getsize(victim)
            with open(victim, "r+b") as f:
                f.seek(size // 2)
                x = f.read(1)
                f.seek(size // 2)
                f.write(bytes([x[0] ^ 0xFF]))
        srv.start()
        assert tool(srv, "verify", "-f", "ksc", "t").returncode == 2
        r = tool(srv, "scrub", "-ns", "ksc", "n")                   # counters: undercounting needs -s
        assert r.returncode == 2 and "re-run the scrub with the --skip-corrupted option" in r.stderr
        assert tool(srv, "verify", "-f", "ksc", "n").returncode == 2
        assert tool(srv, "scrub", "-ns", "-s", "ksc", "n").returncode == 0
        r = tool(srv, "scrub", "--no-snapshot", "-j", "1", "ksc", "t")
        assert r.returncode == 0 and r.stdout == "", r.stderr
        r = tool(srv, "verify", "-f", "ksc")
        assert r.returncode == 0, r.stderr
        c, s = H.connect(srv.host, srv.port)
        left = s.execute("SELECT count(*) FROM ksc.t").one()[0]
        assert 300 < left < 400, left                               # one block's partitions went
        assert 0 < s.execute("SELECT count(*) FROM ksc.n").one()[0] < 400    # smaller rows: more a block
        c.shutdown()
        r = tool(srv, "scrub", "ksc", "nope")                       # scrub rethrows it: a badUse
        assert r.returncode == 1 and "nodetool: Unknown keyspace/cf pair (ksc.nope)" in r.stdout
    finally:
        srv.stop()


def test_compaction_threshold(tmp_path):
    """getcompactionthreshold / setcompactionthreshold: the table's live
    min/max thresholds; set ones drive background compaction at once, stay
    across ALTER TABLE, and leave the schema as it was (as Cassandra's
    ColumnFamilyStore.setCompactionThresholds); nodetool's checks."""
    srv = H.new_server(tmp_path)
    try:
        c, s = H.connect(srv.host, srv.port)
        s.execute("CREATE KEYSPACE kth WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE kth.t (k int PRIMARY KEY, v int)")
        r = tool(srv, "getcompactionthreshold", "kth", "t")
        assert r.returncode == 0 and r.stdout == "Current compaction thresholds for kth/t: \n min = 4,  max = 32\n"
        for i in range(2):
            s.execute("INSERT INTO kth.t (k, v) VALUES (%d, %d)" % (i, i))
            assert tool(srv, "flush", "kth", "t").returncode == 0
        time.sleep(0.5)                                              # room for a compaction that must not run
        assert sstables(srv, "kth", "t") == 2
        r = tool(srv, "setcompactionthreshold", "kth", "t", "2", "8")
        assert r.returncode == 0 and r.stdout == "", r.stderr
        H.wait_for(lambda: sstables(srv, "kth", "t") == 1, timeout=30, what="compaction at the new threshold")
        assert tool(srv, "getcompactionthreshold", "kth", "t").stdout.endswith(" min = 2,  max = 8\n")
        comp = dict(s.execute("SELECT compaction FROM system_schema.tables WHERE keyspace_name = 'kth' "
                              "AND table_name = 't'").one().compaction)
        assert comp.get("min_threshold", "4") == "4" and comp.get("max_threshold", "32") == "32", comp
        s.execute("ALTER TABLE kth.t WITH comment = 'still 2'")
        assert tool(srv, "getcompactionthreshold", "kth", "t").stdout.endswith(" min = 2,  max = 8\n")
        for args, code, msg in (
                ([], 1, "Required parameters are missing: <keyspace> <table> <minthreshold> <maxthreshold>"),
                (["kth", "t", "2"], 1, "setcompactionthreshold requires ks, cf, min, and max threshold args."),
                (["kth", "t", "two", "8"], 1, 'nodetool: For input string: "two"'),
                (["kth", "t", "-2", "8"], 1, "nodetool: Thresholds must be positive integers"),
                (["kth", "t", "9", "8"], 1, "nodetool: Min threshold cannot be greater than max."),
                (["kth", "t", "1", "8"], 1, "nodetool: Min threshold must be at least 2"),
                (["kth", "t", "0", "0"], 2, "error: Disabling compaction by setting min_compaction_threshold or "
                                            "max_compaction_threshold to 0 is deprecated"),
                (["kth", "nope", "2", "8"], 1, "ColumnFamilyStore for kth/nope not found.")):
            r = tool(srv, "setcompactionthreshold", *args)
            out = r.stdout if code == 1 and not msg.startswith("ColumnFamilyStore") else r.stderr   # badUse: stdout
            assert r.returncode == code and msg in out, (args, r.returncode, r.stdout, r.stderr)
        r = tool(srv, "getcompactionthreshold", "kth")
        assert r.returncode == 1 and "nodetool: getcompactionthreshold requires ks and cf args" in r.stdout
        r = tool(srv, "getcompactionthreshold", "kth", "nope")
        assert r.returncode == 1 and r.stderr == "ColumnFamilyStore for kth/nope not found.\n"
        assert tool(srv, "getcompactionthreshold", "kth", "t").stdout.endswith(" min = 2,  max = 8\n")
        c.shutdown()
        srv.restart()                                                # not in the schema: gone after a restart
        assert tool(srv, "getcompactionthreshold", "kth", "t").stdout.endswith(" min = 4,  max = 32\n")
    finally:
        srv.stop()


def fill_incompressible(srv, s, ks, table, parts, rows=1500):
    """parts flushed sstables of rows incompressible rows of 1 KB each."""
    from cassandra.concurrent import execute_concurrent_with_args
    ins = s.prepare("INSERT INTO %s.%s (k, v) VALUES (?, ?)" % (ks, table))
    for part in range(parts):
        execute_concurrent_with_args(s, ins, [(k, os.urandom(1000)) for k in range(part * rows, (part + 1) * rows)])
        assert tool(srv, "flush", ks, table).returncode == 0


def running_kinds(srv):
    """The 'compaction type' column of compactionstats' running rows."""
    out = tool(srv, "compactionstats").stdout
    lines = out.split("\n\n", 1)[1].splitlines() if "\n\n" in out else []
    return [l.split()[1] if l.split()[1] != "Remove" else "Remove deleted data"
            for l in lines[1:] if l.strip() and not l.startswith("Active compaction")]


def test_stop_compaction(tmp_path):
    """stop COMPACTION ends a running compaction (throttled to 1 MiB/s here):
    compactionstats shows none, the inputs stay, the data is whole; stop
    GARBAGE_COLLECT ends a garbagecollect the same way (nodetool's error,
    exit 2); a type nothing of runs stops nothing; a bad type is nodetool's
    conversion error."""
    import threading
    srv = H.new_server(tmp_path)
    try:
        c, s = H.connect(srv.host, srv.port)
        s.execute("CREATE KEYSPACE kst WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE kst.t (k int PRIMARY KEY, v blob)")
        assert tool(srv, "disableautocompaction", "kst", "t").returncode == 0
        fill_incompressible(srv, s, "kst", "t", 2)
        assert tool(srv, "setcompactionthroughput", "1").returncode == 0
        for verb, kind, stop_type in (("compact", "Compaction", "COMPACTION"),
                                      ("garbagecollect", "Remove deleted data", "GARBAGE_COLLECT")):
            before = data_files(srv, "kst", "t")
            done = []
            th = threading.Thread(target=lambda: done.append(tool(srv, verb, "kst", "t")))
            th.start()
            H.wait_for(lambda: kind in running_kinds(srv) or done, timeout=30, what="the %s running" % verb)
            assert not done, done
            assert tool(srv, "stop", "VALIDATION").returncode == 0          # nothing of that type runs
            assert tool(srv, "stop", "SCRUB").returncode == 0
            assert kind in running_kinds(srv)
            r = tool(srv, "stop", stop_type)
            assert r.returncode == 0 and r.stdout == "", r.stderr
            th.join(30)
            assert done, "the %s did not stop" % verb
            assert done[0].returncode == 2, (done[0].stdout, done[0].stderr)
            assert running_kinds(srv) == []
            assert data_files(srv, "kst", "t") == before
            assert s.execute("SELECT count(*) FROM kst.t").one()[0] == 3000
        r = tool(srv, "stop", "COMPACTIONS")
        assert r.returncode == 1 and 'compaction_type: can not convert "COMPACTIONS" to a OperationType' in r.stdout
        assert tool(srv, "stop").returncode == 0                              # UNKNOWN: stops nothing
        assert tool(srv, "stop", "-id", "00000000-0000-0000-0000-000000000000").returncode == 0
        r = tool(srv, "stop", "-id")
        assert r.returncode == 1 and "Required values for option 'compactionId' not provided" in r.stdout
        # unthrottled, the same compaction completes
        assert tool(srv, "setcompactionthroughput", "0").returncode == 0
        assert tool(srv, "compact", "kst", "t").returncode == 0
        assert len(data_files(srv, "kst", "t")) == 1
        c.shutdown()
    finally:
        srv.stop()


def test_concurrent_compactors(tmp_path):
    """getconcurrentcompactors / setconcurrentcompactors: concurrent_compactors
    (cassandra.yaml) as nodetool prints it; the value set is the limit
    system_views.thread_pools and settings show, and compactions of
    different tables then run side by side."""
    cfg = tmp_path / "c.yaml"
    cfg.write_text("concurrent_compactors: 2\n")
    srv = H.new_server(tmp_path / "d", extra_args=["--config", str(cfg)])
    try:
        c, s = H.connect(srv.host, srv.port)
        r = tool(srv, "getconcurrentcompactors")
        assert r.returncode == 0 and r.stdout == "Current concurrent compactors in the system is: \n2\n"

        def limit():
            return s.execute("SELECT active_tasks_limit FROM system_views.thread_pools "
                             "WHERE name = 'CompactionExecutor'").one().active_tasks_limit
        assert limit() == 2
        assert tool(srv, "setconcurrentcompactors", "1").returncode == 0
        assert tool(srv, "getconcurrentcompactors").stdout.endswith("\n1\n")
        assert limit() == 1 and setting(s, "concurrent_compactors") == "1"
        r = tool(srv, "setconcurrentcompactors", "3")
        assert r.returncode == 0 and r.stdout == "", r.stderr
        assert limit() == 3 and setting(s, "concurrent_compactors") == "3"
        # three tables compacting at once, throttled so they overlap
        s.execute("CREATE KEYSPACE kcc WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        for t in ("a", "b", "d"):
            s.execute("CREATE TABLE kcc.%s (k int PRIMARY KEY, v blob)" % t)
            assert tool(srv, "disableautocompaction", "kcc", t).returncode == 0
            fill_incompressible(srv, s, "kcc", t, 2, rows=600)
        assert tool(srv, "setcompactionthroughput", "1").returncode == 0
        for t in ("a", "b", "d"):
            assert tool(srv, "enableautocompaction", "kcc", t).returncode == 0
            assert tool(srv, "setcompactionthreshold", "kcc", t, "2", "32").returncode == 0
        H.wait_for(lambda: running_kinds(srv).count("Compaction") == 3, timeout=30,
                   what="three compactions running together")
        assert tool(srv, "setcompactionthroughput", "0").returncode == 0
        for args, msg in (([], "Required parameters are missing: concurrent_compactors"),
                          (["0"], "concurrent_compactors should be great than 0."),
                          (["two"], 'concurrent_compactors: can not convert "two" to a Integer'),
                          (["1", "2"], "Found unexpected parameters: [2]")):
            r = tool(srv, "setconcurrentcompactors", *args)
            assert r.returncode == 1 and msg in r.stdout, (args, r.stdout)
        c.shutdown()
    finally:
        srv.stop()


def test_timeouts(tmp_path):
    """gettimeout / settimeout: cassandra.yaml's timeouts (4.1's defaults, or
    the file's in either spelling), set live; system_views.settings follows;
    nodetool's messages for bad types and values (all badUse, exit 1)."""
    cfg = tmp_path / "c.yaml"
    cfg.write_text("read_request_timeout: 7s\nwrite_request_timeout_in_ms: 3000\n")
    srv = H.new_server(tmp_path / "d", extra_args=["--config", str(cfg)])
    try:
        c, s = H.connect(srv.host, srv.port)
        want = {"read": 7000, "range": 10000, "write": 3000, "counterwrite": 5000, "cascontention": 1000,
                "truncate": 60000, "misc": 10000, "internodeconnect": 2000, "internodeuser": 30000,
                "internodestreaminguser": 300000}
        for t, ms in want.items():
            r = tool(srv, "gettimeout", t)
            assert r.returncode == 0 and r.stdout == "Current timeout for type %s: %d ms\n" % (t, ms), r.stdout
        assert setting(s, "read_request_timeout") == "7000ms"
        assert setting(s, "cas_contention_timeout") == "1000ms"
        r = tool(srv, "settimeout", "range", "12345")
        assert r.returncode == 0 and r.stdout == "", r.stderr
        assert tool(srv, "gettimeout", "range").stdout == "Current timeout for type range: 12345 ms\n"
        assert setting(s, "range_request_timeout") == "12345ms"
        assert tool(srv, "settimeout", "misc", "0").returncode == 0
        assert tool(srv, "gettimeout", "misc").stdout == "Current timeout for type misc: 0 ms\n"
        types = ("read, range, write, counterwrite, cascontention, truncate, internodeconnect, internodeuser, "
                 "internodestreaminguser, misc (general rpc_timeout_in_ms)")
        for verb, args, msg in (
                ("gettimeout", [], "gettimeout requires a timeout type, one of (%s)" % types),
                ("gettimeout", ["reads"], "Timeout type requires one of (%s)" % types),
                ("settimeout", [], "Required parameters are missing: args"),
                ("settimeout", ["read"], "Timeout type followed by value in ms (0 disables socket streaming "
                                         "timeout). Type should be one of (%s)" % types),
                ("settimeout", ["read", "soon"], 'For input string: "soon"'),
                ("settimeout", ["read", "-5"], "timeout must be non-negative"),
                ("settimeout", ["reads", "5"], "Timeout type requires one of (%s)" % types)):
            r = tool(srv, verb, *args)
            assert r.returncode == 1 and "nodetool: " + msg + "\n" in r.stdout, (verb, args, r.stdout)
        c.shutdown()
    finally:
        srv.stop()


def test_trace_probability(tmp_path):
    """settraceprobability 1: requests the client did not trace are traced
    anyway (system_traces.sessions grows) and their results carry no trace
    id; 0 stops it; gettraceprobability prints Java's double."""
    srv = H.new_server(tmp_path)
    try:
        c, s = H.connect(srv.host, srv.port)
        r = tool(srv, "gettraceprobability")
        assert r.returncode == 0 and r.stdout == "Current trace probability: 0.0\n"

        def sessions():
            return len(list(s.execute("SELECT session_id FROM system_traces.sessions")))
        n0 = sessions()
        for _ in range(3):
            s.execute("SELECT key FROM system.local")
        assert sessions() == n0
        assert tool(srv, "settraceprobability", "1").returncode == 0
        assert tool(srv, "gettraceprobability").stdout == "Current trace probability: 1.0\n"

        def trace_ids(rs):
            try:
                return rs.response_future.get_query_trace_ids()
            except TypeError:                     # this driver's answer for a result without one
                return []
        rs = s.execute("SELECT release_version FROM system.local WHERE key = 'local'")
        assert trace_ids(rs) == []
        assert len(trace_ids(s.execute("SELECT key FROM system.local", trace=True))) == 1
        n1 = sessions()
        assert n1 >= n0 + 2                        # the SELECT, and the sessions query itself
        assert tool(srv, "settraceprobability", "0.25").returncode == 0
        assert tool(srv, "gettraceprobability").stdout == "Current trace probability: 0.25\n"
        assert tool(srv, "settraceprobability", "0").returncode == 0
        n2 = sessions()
        for _ in range(5):
            s.execute("SELECT key FROM system.local")
        assert sessions() == n2
        for args, msg in (([], "Required parameters are missing: trace_probability"),
                          (["1.5"], "Trace probability must be between 0 and 1"),
                          (["-0.1"], "Trace probability must be between 0 and 1"),
                          (["often"], 'trace_probability: can not convert "often" to a Double')):
            r = tool(srv, "settraceprobability", *args)
            assert r.returncode == 1 and msg in r.stdout, (args, r.stdout)
        c.shutdown()
    finally:
        srv.stop()


def test_proxyhistograms(server, session, ks):
    """proxyhistograms: 4.1's layout; Read, Write and Range Latency are the
    node's reads, writes and scans of every table (bucket offsets in
    microseconds, Max at least the 99th percentile); CAS and view writes
    have no timer of their own here and print zeros."""
    session.execute("CREATE TABLE %s.ph (k int PRIMARY KEY, v int)" % ks)
    for i in range(20):
        session.execute("INSERT INTO %s.ph (k, v) VALUES (%d, %d)" % (ks, i, i))
        session.execute("SELECT v FROM %s.ph WHERE k = %d" % (ks, i))
    session.execute("SELECT * FROM %s.ph" % ks)
    r = tool(server, "proxyhistograms")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.split("\n")
    assert lines[0] == "proxy histograms"
    assert lines[1] == "%-10s%19s%19s%19s%19s%19s%19s" % ("Percentile", "Read Latency", "Write Latency",
                                                       "Range Latency", "CAS Read Latency", "CAS Write Latency",
                                                       "View Write Latency")
    assert lines[2] == "%-10s%19s%19s%19s%19s%19s%19s" % ("", "(micros)", "(micros)", "(micros)", "(micros)",
                                                       "(micros)", "(micros)")
    names = ["50%", "75%", "95%", "98%", "99%", "Min", "Max"]
    cols = []
    for name, line in zip(names, lines[3:10]):
        assert len(line) == 10 + 6 * 19 and line[:10].rstrip() == name, line
        cols.append([float(line[10 + 19 * i:10 + 19 * (i + 1)]) for i in range(6)])
    assert lines[10:] == ["", ""]
    for i in range(3):                              # read, write, range
        assert cols[0][i] > 0 and cols[6][i] >= cols[4][i] >= cols[0][i] >= cols[5][i], (i, cols)
    assert all(cols[r][i] == 0.0 for r in range(7) for i in range(3, 6))


def test_node_status_verbs(tmp_path):
    """netstats, gcstats, statusgossip, statushandoff, getlogginglevels on a
    single node: nodetool's layouts with the node's true figures (no
    streams, read repairs, internode messages or garbage collections);
    after drain netstats says DRAINED and gossip is not running."""
    cfg = tmp_path / "c.yaml"
    cfg.write_text("hinted_handoff_enabled: false\n")
    srv = H.new_server(tmp_path / "d", extra_args=["--config", str(cfg)])
    try:
        r = tool(srv, "netstats")
        assert r.returncode == 0 and r.stdout == (
            "Mode: NORMAL\nNot sending any streams.\nRead Repair Statistics:\nAttempted: 0\n"
            "Mismatch (Blocking): 0\nMismatch (Background): 0\n"
            "Pool Name                    Active   Pending      Completed   Dropped\n"
            "Large messages                  n/a         0              0         0\n"
            "Small messages                  n/a         0              0         0\n"
            "Gossip messages                 n/a         0              0         0\n"), r.stdout
        assert tool(srv, "netstats", "-H").returncode == 0
        r = tool(srv, "gcstats")
        assert r.returncode == 0
        head, row = r.stdout.splitlines()
        assert head == "%20s%20s%20s%20s%20s%20s%25s" % ("Interval (ms)", "Max GC Elapsed (ms)",
                                                          "Total GC Elapsed (ms)", "Stdev GC Elapsed (ms)",
                                                          "GC Reclaimed (MB)", "Collections", "Direct Memory Bytes")
        f = row.split()
        assert int(f[0]) >= 0 and f[1:6] == ["0", "0", "NaN", "0", "0"] and int(f[6]) > 0, row
        time.sleep(0.3)
        assert int(tool(srv, "gcstats").stdout.splitlines()[1].split()[0]) >= 300   # since the last gcstats
        assert tool(srv, "statusgossip").stdout == "running\n"
        assert tool(srv, "statushandoff").stdout == "Hinted handoff is not running\n"
        r = tool(srv, "getlogginglevels")
        assert r.returncode == 0 and r.stdout == "\n%-50s%10s\n%-50s%10s\n" % ("Logger Name", "Log Level",
                                                                             "ROOT", "INFO")
        assert tool(srv, "drain").returncode == 0
        assert tool(srv, "netstats").stdout.startswith("Mode: DRAINED\n")
        assert tool(srv, "statusgossip").stdout == "not running\n"
    finally:
        srv.stop()
    srv = H.new_server(tmp_path / "e")
    try:
        assert tool(srv, "statushandoff").stdout == "Hinted handoff is running\n"   # 4.1's default
    finally:
        srv.stop()


def test_help():
    """help: every verb in nodetool's help layout; help VERB its synopsis."""
    r = subprocess.run([TOOL, "help"], capture_output=True, text=True)
    assert r.returncode == 0
    assert "The most commonly used nodetool commands are:" in r.stdout
    listed = re.findall(r"^    (\S+) +\S", r.stdout, re.M)
    assert listed == sorted(listed)
    for v in ("getsstables", "garbagecollect", "scrub", "verify", "upgradesstables", "getcompactionthreshold",
              "setcompactionthreshold", "stop", "getconcurrentcompactors", "setconcurrentcompactors", "gettimeout",
              "settimeout", "gettraceprobability", "settraceprobability", "proxyhistograms", "netstats", "gcstats",
              "statusgossip", "statushandoff", "getlogginglevels", "rebuild_index", "tablestats", "snapshot"):
        assert v in listed, v
    bare = subprocess.run([TOOL], capture_output=True, text=True)    # no command: help, as nodetool
    assert bare.returncode == 0 and bare.stdout == r.stdout and bare.stderr == ""
    r = subprocess.run([TOOL, "help", "getsstables"], capture_output=True, text=True)
    assert r.returncode == 0 and "getsstables [-hf] keyspace table key" in r.stdout
    r = subprocess.run([TOOL, "help", "nosuchverb"], capture_output=True, text=True)
    assert r.returncode == 1 and "Unknown command nosuchverb" in r.stdout


def test_rebuild_index(tmp_path, monkeypatch):
    """rebuild_index ks table idx...: the index storage emptied and built
    again from the table (in slices between requests; the verb returns once
    it is done), so after it the index answers from new sstables; an
    unknown index is skipped, an unknown table is nodetool's badUse, an
    unknown keyspace Cassandra's assertion (exit 2)."""
    import glob
    monkeypatch.setenv("CASSETTE_INDEX_BUILD_STEP_ROWS", "50")   # a rebuild of many slices
    srv = H.new_server(tmp_path)
    try:
        c, s = H.connect(srv.host, srv.port)
        s.execute("CREATE KEYSPACE kri WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE kri.t (k int PRIMARY KEY, v int)")
        s.execute("CREATE INDEX t_v ON kri.t (v)")
        for k in range(500):
            s.execute("INSERT INTO kri.t (k, v) VALUES (%d, %d)" % (k, k % 10))
        H.wait_for(lambda: len(list(s.execute("SELECT k FROM kri.t WHERE v = 3"))) == 50, timeout=30,
                   what="the index built")
        assert tool(srv, "flush", "kri", "t").returncode == 0
        idx_dir = glob.glob(os.path.join(srv.data_dir, "data", "kri", "t.t_v-*"))
        assert len(idx_dir) == 1, glob.glob(os.path.join(srv.data_dir, "data", "kri", "*"))
        before = glob.glob(os.path.join(idx_dir[0], "cs-*-Data.db"))
        assert before
        r = tool(srv, "rebuild_index", "kri", "t", "t_v")
        assert r.returncode == 0 and r.stdout == "" and r.stderr == "", (r.stdout, r.stderr)
        assert sorted(x.k for x in s.execute("SELECT k FROM kri.t WHERE v = 3")) == list(range(3, 500, 10))
        assert not set(glob.glob(os.path.join(idx_dir[0], "cs-*-Data.db"))) & set(before)   # emptied first
        assert tool(srv, "flush", "kri", "t").returncode == 0
        assert glob.glob(os.path.join(idx_dir[0], "cs-*-Data.db"))                          # and built again
        assert "rebuild_index: rebuilding kri.t.t_v" in srv.log_tail()
        assert tool(srv, "rebuild_index", "kri", "t", "t.t_v", "nosuch").returncode == 0     # index table name
        r = tool(srv, "rebuild_index", "kri", "t")
        assert r.returncode == 1 and "nodetool: rebuild_index requires ks, cf and idx args" in r.stdout
        r = tool(srv, "rebuild_index", "kri", "nope", "t_v")
        assert r.returncode == 1 and "nodetool: Unknown keyspace/cf pair (kri.nope)" in r.stdout
        r = tool(srv, "rebuild_index", "nope", "t", "t_v")
        assert r.returncode == 2 and r.stderr == "error: Unknown keyspace nope\n"
        c.shutdown()
    finally:
        srv.stop()


def test_many_names_none_dropped(server, session, ks):
    """Every name given is used: 40 tables to flush and to
    disableautocompaction, 35 keyspaces to snapshot (the admin endpoint kept
    32 arguments and dropped the rest, snapshot 512 tables); arguments that
    do not fit in one admin request are refused, not cut."""
    names = ["many%d" % i for i in range(40)]
    for n in names:
        session.execute("CREATE TABLE %s.%s (k int PRIMARY KEY, v int)" % (ks, n))
        session.execute("INSERT INTO %s.%s (k, v) VALUES (1, 1)" % (ks, n))
    r = tool(server, "disableautocompaction", ks, *names)
    assert r.returncode == 0, r.stderr
    r = tool(server, "flush", ks, *names)
    assert r.returncode == 0, r.stderr
    assert [len(data_files(server, ks, n)) for n in names] == [1] * 40
    r = tool(server, "flush", ks, *(names + ["nope"]))                # the 41st name is checked too
    assert r.returncode == 2 and r.stderr == "error: Unknown keyspace/cf pair (%s.nope)\n" % ks, r.stderr
    kss = ["manyks%d" % i for i in range(35)]
    for k in kss:
        session.execute("CREATE KEYSPACE %s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}" % k)
        session.execute("CREATE TABLE %s.t (k int PRIMARY KEY)" % k)
    r = tool(server, "snapshot", "-t", "many", *kss)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("Requested creating snapshot(s) for [%s] with snapshot name [many]" % ", ".join(kss))
    r = tool(server, "listsnapshots")
    assert sum(1 for l in r.stdout.splitlines() if l.startswith("many ")) == 35, r.stdout
    assert tool(server, "clearsnapshot", "-t", "many", *kss).returncode == 0
    assert "many " not in tool(server, "listsnapshots").stdout
    for k in kss:
        session.execute("DROP KEYSPACE %s" % k)
    r = tool(server, "flush", ks, "x" * 70000)
    assert r.returncode == 1 and "do not fit in one admin request" in r.stderr, r.stderr
    r = tool(server, "tablestats", "y" * 70000)
    assert r.returncode == 1 and "do not fit in one admin request" in r.stderr, r.stderr


def test_getendpoints_bad_key_is_the_servers_error(server, session, ks):
    """A key that does not parse as the partition key's type is the
    server's MarshalException: nodetool's "error: ...", exit 2."""
    session.execute("CREATE TABLE %s.ge (k int PRIMARY KEY)" % ks)
    r = tool(server, "getendpoints", ks, "ge", "zz")
    assert r.returncode == 2 and r.stderr.startswith("error: ") and "zz" in r.stderr, (r.returncode, r.stderr)
    r = tool(server, "getendpoints", ks, "ge", "12")
    assert r.returncode == 0 and r.stdout.strip() == "127.0.0.1", r.stderr
