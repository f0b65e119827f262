"""cassette-tool tablestats prints Cassandra 4.1's nodetool tablestats
layout (TableStatsPrinter): the same lines in the same order, doubles as
Java prints them (NaN before any request), and every figure taken from the
table: compression ratio of its sstables, memtable switches, bloom filter
and index memory, live rows and tombstones per read over the last five
minutes, droppable tombstone ratio.
"""

import os
import re
import subprocess

import pytest

import cassette_harness as H

TOOL = os.path.join(os.path.dirname(H.binary_path()), "cassette-tool")

pytestmark = pytest.mark.skipif(not H.is_cassette(), reason="needs cassette-tool and the admin endpoint")

# Cassandra 4.1 TableStatsPrinter, one table without leveled compaction.
TABLE_LINES = [
    "Table", "SSTable count", "Old SSTable count", "Space used (live)", "Space used (total)",
    "Space used by snapshots (total)", "Off heap memory used (total)", "SSTable Compression Ratio",
    "Number of partitions (estimate)", "Memtable cell count", "Memtable data size",
    "Memtable off heap memory used", "Memtable switch count", "Speculative retries",
    "Local read count", "Local read latency", "Local write count", "Local write latency",
    "Pending flushes", "Percent repaired", "Bytes repaired", "Bytes unrepaired", "Bytes pending repair",
    "Bloom filter false positives", "Bloom filter false ratio", "Bloom filter space used",
    "Bloom filter off heap memory used", "Index summary off heap memory used",
    "Compression metadata off heap memory used", "Compacted partition minimum bytes",
    "Compacted partition maximum bytes", "Compacted partition mean bytes",
    "Average live cells per slice (last five minutes)", "Maximum live cells per slice (last five minutes)",
    "Average tombstones per slice (last five minutes)", "Maximum tombstones per slice (last five minutes)",
    "Dropped Mutations", "Droppable tombstone ratio",
]
KEYSPACE_LINES = ["Read Count", "Read Latency", "Write Count", "Write Latency", "Pending Flushes"]


def tablestats(server, what):
    H.wait_for(lambda: server.admin_port, timeout=10, what="the admin port line")
    r = subprocess.run([TOOL, "-p", str(server.admin_port), "tablestats", what], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "Total number of tables: 1" and lines[1] == "----------------", r.stdout
    assert lines[2].startswith("Keyspace : "), r.stdout
    ks_part = [l for l in lines if l.startswith("\t") and not l.startswith("\t\t")]
    tb_part = [l for l in lines if l.startswith("\t\t")]
    assert [l.strip().split(":")[0] for l in ks_part] == KEYSPACE_LINES, r.stdout
    return {l.strip().split(": ", 1)[0]: l.strip().split(": ", 1)[1] for l in ks_part + tb_part}, \
        [l.strip().split(":")[0] for l in tb_part]


def flush(server, ks, table):
    r = subprocess.run([TOOL, "-p", str(server.admin_port), "flush", ks, table], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def test_layout_and_figures(server, session, ks):
    session.execute("CREATE TABLE %s.ts (k int, c int, v text, PRIMARY KEY (k, c))" % ks)
    st, labels = tablestats(server, "%s.ts" % ks)
    assert labels == TABLE_LINES
    assert st["Read Latency"] == "NaN ms" and st["Local read latency"] == "NaN ms"
    assert st["Local write latency"] == "NaN ms"
    assert st["SSTable Compression Ratio"] == "-1.0"                    # no sstable yet
    assert st["Memtable switch count"] == "0"
    assert st["Percent repaired"] == "100.0"                             # TableMetrics: no sstable
    assert st["Average live cells per slice (last five minutes)"] == "NaN"
    assert st["Maximum live cells per slice (last five minutes)"] == "0"

    ins = session.prepare("INSERT INTO %s.ts (k, c, v) VALUES (?, ?, ?)" % ks)
    for k in range(20):
        for c in range(10):
            session.execute(ins, (k, c, "value %d %d " % (k, c) * 5))
    for c in range(0, 10, 2):
        session.execute("DELETE FROM %s.ts WHERE k = 0 AND c = %d" % (ks, c))
    flush(server, ks, "ts")
    st, labels = tablestats(server, "%s.ts" % ks)
    assert labels == TABLE_LINES
    assert st["SSTable count"] == "1" and st["Memtable switch count"] == "1"
    ratio = float(st["SSTable Compression Ratio"])
    assert 0 < ratio < 1, ratio                                          # repetitive values compress
    assert int(st["Bloom filter space used"]) > int(st["Bloom filter off heap memory used"]) > 0
    off = int(st["Off heap memory used (total)"])
    assert off == (int(st["Bloom filter off heap memory used"]) + int(st["Index summary off heap memory used"])
                   + int(st["Compression metadata off heap memory used"])), st
    assert re.fullmatch(r"\d+\.\d{3}KiB", st["Bytes unrepaired"]), st["Bytes unrepaired"]
    assert st["Bytes repaired"] == "0.000KiB" and st["Percent repaired"] == "0.0"
    assert st["Local write count"] == "205"
    assert re.fullmatch(r"\d+\.\d{3} ms", st["Local write latency"])

    # reads: live rows and tombstones scanned per read, Cassandra's decaying
    # histograms' mean and max (bucket offsets: 5 and 10 are offsets)
    for k in range(1, 5):
        assert len(list(session.execute("SELECT * FROM %s.ts WHERE k = %d" % (ks, k)))) == 10
    assert len(list(session.execute("SELECT * FROM %s.ts WHERE k = 0" % ks))) == 5
    st, _ = tablestats(server, "%s.ts" % ks)
    assert st["Local read count"] == "5"
    assert float(st["Average live cells per slice (last five minutes)"]) == pytest.approx(9.0)   # (4*10+5)/5
    assert st["Maximum live cells per slice (last five minutes)"] == "10"
    # TombstoneScannedHistogram keeps no bucket for 0: a read without
    # tombstones counts in the first one, offset 1: (4*1+5)/5
    assert float(st["Average tombstones per slice (last five minutes)"]) == pytest.approx(1.8)
    assert st["Maximum tombstones per slice (last five minutes)"] == "5"
    assert re.fullmatch(r"\d+\.\d+(E-?\d+)?", st["Read Latency"].split()[0]), st["Read Latency"]
    assert st["Droppable tombstone ratio"] == "0.00000"                  # gc_grace not over


def test_leveled_table_prints_levels(server, session, ks):
    session.execute("CREATE TABLE %s.lv (k int PRIMARY KEY, v int) WITH compaction = "
                    "{'class': 'LeveledCompactionStrategy'}" % ks)
    session.execute("INSERT INTO %s.lv (k, v) VALUES (1, 1)" % ks)
    flush(server, ks, "lv")
    st, labels = tablestats(server, "%s.lv" % ks)
    i = labels.index("Old SSTable count")
    assert labels[i + 1:i + 3] == ["SSTables in each level", "SSTable bytes in each level"]
    assert labels[:i + 1] + labels[i + 3:] == TABLE_LINES
    assert re.fullmatch(r"\[\d+(, \d+(/\d+)?){7}\]", st["SSTables in each level"]), st["SSTables in each level"]
    assert sum(int(x.split("/")[0]) for x in st["SSTables in each level"].strip("[]").split(", ")) == 1


def test_compactionstats_layout(server, session, ks):
    """compactionstats as nodetool 4.1: 'pending tasks: N' (the tables'
    estimated remaining compactions), one '- ks.table: n' line per table with
    any (their sum is N), then a blank line.  A table whose compaction is
    disabled estimates nothing, as Cassandra's size-tiered strategy (its
    estimate is updated only when it looks for work)."""
    session.execute("CREATE TABLE %s.cs (k int PRIMARY KEY, v int) WITH compaction = "
                    "{'class': 'SizeTieredCompactionStrategy', 'enabled': 'false'}" % ks)
    for i in range(4):
        session.execute("INSERT INTO %s.cs (k, v) VALUES (%d, %d)" % (ks, i, i))
        flush(server, ks, "cs")
    r = subprocess.run([TOOL, "-p", str(server.admin_port), "compactionstats"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.split("\n")
    m = re.fullmatch(r"pending tasks: (\d+)", lines[0])
    assert m, r.stdout
    per = [l for l in lines[1:] if l.startswith("- ")]
    assert all(re.fullmatch(r"- \w+\.\w+: [1-9]\d*", l) for l in per), r.stdout
    assert "- %s.cs: " % ks not in r.stdout, r.stdout
    assert sum(int(l.rsplit(": ", 1)[1]) for l in per) == int(m.group(1)), r.stdout
    assert lines[1 + len(per)] == "", r.stdout


def test_tablehistograms_sstables_per_read(server, session, ks):
    """tablehistograms' SSTables column: sstables a single-partition read
    consulted (Cassandra's SSTablesPerReadHistogram), 0 for reads answered
    by the memtable; it used to print 0.00 always."""
    session.execute("CREATE TABLE %s.hs (k int, c int, v int, PRIMARY KEY (k, c))" % ks)
    for i in range(3):                        # partition 1 in three sstables
        session.execute("INSERT INTO %s.hs (k, c, v) VALUES (1, %d, %d)" % (ks, i, i))
        flush(server, ks, "hs")
    session.execute("INSERT INTO %s.hs (k, c, v) VALUES (2, 0, 0)" % ks)   # memtable only
    for _ in range(3):
        assert len(list(session.execute("SELECT * FROM %s.hs WHERE k = 1" % ks))) == 3
    assert len(list(session.execute("SELECT * FROM %s.hs WHERE k = 2" % ks))) == 1
    r = subprocess.run([TOOL, "-p", str(server.admin_port), "tablehistograms", ks, "hs"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    rows = {l.split()[0]: l.split() for l in r.stdout.splitlines()[3:] if l.strip()}
    assert float(rows["Min"][3]) == 0.0, r.stdout              # the memtable-only read
    assert float(rows["Max"][3]) == 3.0, r.stdout
    assert float(rows["50%"][3]) == 3.0, r.stdout


def offsets(n, zeros=False):
    """EstimatedHistogram.newOffsets: 1, 2, ... each the last * 1.2, rounded
    half up, bumped by one when equal (0 first with zeros)."""
    out, last = ([0] if zeros else []) + [1], 1
    while len(out) < n + zeros:
        nxt = int(last * 1.2 + 0.5)
        last = nxt if nxt != last else nxt + 1
        out.append(last)
    return out


def test_tablehistograms_prints_bucket_offsets(server, session, ks):
    """tablehistograms as 4.1 computes it: latency percentiles are offsets of
    the Timer's buckets (microseconds), Min one past the offset below the
    first bucket used, Max the offset of the last one, so never below 99%;
    partition size and cell count are offsets of the sstables' buckets."""
    session.execute("CREATE TABLE %s.hb (k int, c int, v text, PRIMARY KEY (k, c))" % ks)
    ins = session.prepare("INSERT INTO %s.hb (k, c, v) VALUES (?, ?, ?)" % ks)
    for k in range(40):
        for c in range(k % 7 + 1):
            session.execute(ins, (k, c, "v" * (10 * k)))
    r = subprocess.run([TOOL, "-p", str(server.admin_port), "tablehistograms", ks, "hb"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("No SSTables exists, unable to calculate 'Partition Size' and 'Cell Count' "
                               "percentiles\n%s/hb histograms\n" % ks), r.stdout
    rows = {l.split()[0]: l.split()[1:] for l in r.stdout.splitlines()[4:] if l.strip()}
    assert rows["Max"][3:] == ["NaN", "NaN"]
    flush(server, ks, "hb")
    for k in range(0, 40, 3):
        list(session.execute("SELECT * FROM %s.hb WHERE k = %d" % (ks, k)))
    r = subprocess.run([TOOL, "-p", str(server.admin_port), "tablehistograms", "%s.hb" % ks], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "%s/hb histograms" % ks, r.stdout
    rows = {l.split()[0]: [float(x) for x in l.split()[1:]] for l in lines[3:] if l.strip()}
    assert list(rows) == ["50%", "75%", "95%", "98%", "99%", "Min", "Max"]
    timer, big = set(offsets(127)), set(offsets(150))
    for col in (0, 1):                                  # read, write latency (micros)
        vals = [rows[p][col] for p in ("50%", "75%", "95%", "98%", "99%")]
        assert vals == sorted(vals), r.stdout
        assert all(v in timer for v in vals + [rows["Max"][col]]), r.stdout
        assert rows["Max"][col] >= rows["99%"][col], r.stdout
        assert rows["Min"][col] == 0 or rows["Min"][col] - 1 in timer, r.stdout
        assert rows["Min"][col] <= rows["50%"][col], r.stdout
    for col in (3, 4):                                  # partition size (bytes), cell count
        vals = [rows[p][col] for p in ("50%", "75%", "95%", "98%", "99%", "Max")]
        assert all(v in big for v in vals) and vals == sorted(vals), r.stdout
        assert rows["Min"][col] == 0 or rows["Min"][col] - 1 in big, r.stdout
    assert rows["Max"][4] == 7.0 and rows["Min"][4] == 0   # 1 to 7 cells: the first bucket is (0, 1]
    bad = subprocess.run([TOOL, "-p", str(server.admin_port), "tablehistograms", ks, "nope"], capture_output=True,
                         text=True, timeout=60)
    assert bad.returncode == 1 and bad.stderr == "" and bad.stdout.startswith("nodetool: Unknown table %s.nope\n" % ks)


def test_write_count_per_partition_update(server, session, ks):
    """A table's Local write count counts partition updates as
    ColumnFamilyStore.apply does: a protocol BATCH of three partitions is
    three writes (it counted none), a CQL BATCH of two statements on one
    partition one, UPDATE ... WHERE k IN (1, 2, 3) three; a batch over two
    tables counts in each; an LWT that does not apply counts nothing."""
    from cassandra.query import BatchStatement
    session.execute("CREATE TABLE %s.wc (k int, c int, v int, PRIMARY KEY (k, c))" % ks)
    session.execute("CREATE TABLE %s.wc2 (k int PRIMARY KEY, v int)" % ks)
    ins = session.prepare("INSERT INTO %s.wc (k, c, v) VALUES (?, ?, ?)" % ks)

    def count(table):
        return int(tablestats(server, "%s.%s" % (ks, table))[0]["Local write count"])

    b = BatchStatement()
    for k in range(3):
        b.add(ins, (k, 0, 0))
    b.add(ins, (0, 1, 0))
    session.execute(b)
    assert count("wc") == 3
    session.execute("BEGIN BATCH INSERT INTO %s.wc (k, c, v) VALUES (5, 0, 0); "
                    "INSERT INTO %s.wc (k, c, v) VALUES (5, 1, 0); APPLY BATCH" % (ks, ks))
    assert count("wc") == 4
    session.execute("UPDATE %s.wc SET v = 1 WHERE k IN (1, 2, 3) AND c = 0" % ks)
    assert count("wc") == 7
    session.execute("BEGIN BATCH INSERT INTO %s.wc (k, c, v) VALUES (9, 0, 0); "
                    "INSERT INTO %s.wc2 (k, v) VALUES (9, 0); APPLY BATCH" % (ks, ks))
    assert count("wc") == 8 and count("wc2") == 1
    r = session.execute("INSERT INTO %s.wc2 (k, v) VALUES (9, 1) IF NOT EXISTS" % ks).one()
    assert not r[0]
    assert count("wc2") == 1
    session.execute("DELETE FROM %s.wc2 WHERE k = 9" % ks)
    assert count("wc2") == 2


def test_partition_sizes_past_75_mb(server, session, ks):
    """Partition sizes are counted in Cassandra's 150 buckets (cells per
    partition in 118), so an 84 MB partition is reported in its own bucket
    (89970660) by tablehistograms, tablestats and system_views, not in the
    74975550 one the 96 buckets before stopped at; tablestats' minimum is
    EstimatedHistogram.min(), one past the offset below the smallest
    partition's bucket, and the mean ceil(mean) as TableMetrics has it."""
    session.execute("CREATE TABLE %s.huge (k int, c int, v blob, PRIMARY KEY (k, c))" % ks)
    ins = session.prepare("INSERT INTO %s.huge (k, c, v) VALUES (?, ?, ?)" % ks)
    chunk = os.urandom(1 << 20)
    for c in range(80):                                  # partition 1: 80 x 1 MiB
        session.execute(ins, (1, c, chunk))
    session.execute(ins, (2, 0, b"x" * 100))             # partition 2: ~120 bytes
    flush(server, ks, "huge")
    r = subprocess.run([TOOL, "-p", str(server.admin_port), "tablehistograms", ks, "huge"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "%s/huge histograms" % ks, r.stdout
    rows = {l.split()[0]: [float(x) for x in l.split()[1:]] for l in lines[3:] if l.strip()}
    off = offsets(150)
    assert rows["Max"][3] == 89970660.0 and rows["99%"][3] == 89970660.0, r.stdout
    small = rows["50%"][3]
    assert small in off and small < 200, r.stdout
    assert rows["Min"][3] == off[off.index(small) - 1] + 1, r.stdout
    assert rows["Max"][4] == 86.0 and rows["50%"][4] == 1.0, r.stdout   # cells: 80 (bucket 73..86) and 1
    st, _ = tablestats(server, "%s.huge" % ks)
    assert st["Compacted partition maximum bytes"] == "89970660", st
    assert st["Compacted partition minimum bytes"] == str(off[off.index(small) - 1] + 1), st
    assert st["Compacted partition mean bytes"] == str(-(-(int(small) + 89970660) // 2)), st
    mib = session.execute("SELECT mebibytes FROM system_views.max_partition_size "
                          "WHERE keyspace_name = %s AND table_name = 'huge'", (ks,)).one()
    assert mib.mebibytes == -(-89970660 // (1024 * 1024)), mib   # rounded up, as 4.1's view


def test_size_estimates(server, session, ks):
    """system.size_estimates and system.table_estimates as Cassandra's
    SizeEstimatesRecorder fills them (the Spark connector splits its scans
    by them): per table, one row per range of the node's tokens with the
    wrap-around range unwrapped at the minimum token, partitions counted in
    the sstables (the memtable is not), the sstables' mean partition size;
    table_estimates once per range_type; no LocalStrategy keyspace."""
    session.execute("CREATE TABLE %s.est (k int PRIMARY KEY, v text)" % ks)
    ins = session.prepare("INSERT INTO %s.est (k, v) VALUES (?, ?)" % ks)
    for k in range(500):
        session.execute(ins, (k, "x" * 100))
    assert subprocess.run([TOOL, "-p", str(server.admin_port), "flush", ks, "est"], timeout=60).returncode == 0
    for k in range(500, 600):                      # in the memtable only
        session.execute(ins, (k, "y"))
    tokens = sorted(int(t) for t in session.execute("SELECT tokens FROM system.local").one().tokens)
    rows = list(session.execute("SELECT range_start, range_end, mean_partition_size, partitions_count "
                                "FROM system.size_estimates WHERE keyspace_name = %s AND table_name = 'est'", (ks,)))
    lo = -2 ** 63
    want = [(str(a), str(b)) for a, b in zip(tokens, tokens[1:])] + [(str(tokens[-1]), str(lo)), (str(lo), str(tokens[0]))]
    assert sorted((r.range_start, r.range_end) for r in rows) == sorted(want)
    assert sum(r.partitions_count for r in rows) == 500
    assert all(100 < r.mean_partition_size < 400 for r in rows), [r.mean_partition_size for r in rows]
    # The counts follow the tokens of the keys.
    key_tokens = [r.t for r in session.execute("SELECT k, token(k) AS t FROM %s.est" % ks) if r.k < 500]
    for r in rows:
        a, b = int(r.range_start), int(r.range_end)
        b = 2 ** 63 - 1 if b == lo else b
        assert r.partitions_count == sum(1 for t in key_tokens if a < t <= b), (a, b)
    te = list(session.execute("SELECT range_type, range_start, range_end, partitions_count FROM system.table_estimates "
                              "WHERE keyspace_name = %s AND table_name = 'est'", (ks,)))
    assert sorted(r.range_type for r in te) == sorted(["local_primary", "primary"] * len(want))
    assert sum(r.partitions_count for r in te if r.range_type == "primary") == 500
    assert not list(session.execute("SELECT * FROM system.size_estimates WHERE keyspace_name = 'system'"))
    assert not list(session.execute("SELECT * FROM system.size_estimates WHERE keyspace_name = 'system_schema'"))
