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
    assert r.returncode != 0 and "Keyspace [no_such_ks] does not exist." in r.stderr
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
        assert r.returncode != 0 and "nodetool: Required values for option '%s' not provided" % title in r.stderr, \
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
    assert r.returncode != 0 and "nodetool: Required values for option 'snapshot_name' not provided" in r.stderr, \
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
        assert r.stderr.endswith("nodetool: " + msg + SNAP_BAD_USE), (args, r.stderr)
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
        assert r.returncode == 1 and 'compaction_throughput: can not convert "fast" to a Integer' in r.stderr
        r = tool(srv, "setcompactionthroughput")
        assert r.returncode == 1 and "Required parameters are missing: compaction_throughput" in r.stderr
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
