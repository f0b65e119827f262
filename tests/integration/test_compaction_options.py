"""Compaction sub-options and memtable_flush_period_in_ms as Cassandra 4.1
honours them: a queue-like table's tombstones go by a background
single-sstable tombstone compaction once tombstone_compaction_interval has
passed (no flush or compact asked for), the option values are validated
with Cassandra's messages as ConfigurationException, and a memtable with
data is flushed once it is memtable_flush_period_in_ms old.

Cassandra keeps local deletion times rounded up to a minute
(TombstoneHistogram), so a tombstone counts as droppable up to a minute
after its gc_grace_seconds; the queue test waits for that.
"""

import glob
import os
import re
import subprocess
import time

import pytest
from cassandra.protocol import ConfigurationException

import cassette_harness as H

TOOL = os.path.join(os.path.dirname(H.binary_path()), "cassette-tool")
needs_tool = pytest.mark.skipif(not H.is_cassette(), reason="needs cassette-tool and the admin endpoint")


def tool(server, *args):
    H.wait_for(lambda: server.admin_port, timeout=10, what="the admin port line")
    r = subprocess.run([TOOL, "-p", str(server.admin_port)] + list(args), capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, (args, r.stdout, r.stderr)
    return r.stdout


def stats(server, ks, table):
    out = tool(server, "tablestats", "%s.%s" % (ks, table))
    return {m.group(1): m.group(2) for m in re.finditer(r"^\t\t([^:\n]+): (.*)$", out, re.M)}


def data_files(server, ks, table):
    return sorted(glob.glob(os.path.join(server.data_dir, "data", ks, table + "-*", "cs-*-Data.db")))


def metadata(path):
    r = subprocess.run([TOOL, "sstable", "metadata", path], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return {m.group(1): m.group(2) for m in re.finditer(r"^([^:\n]+): (.*)$", r.stdout, re.M)}


def rewritten(server, ks, table, before):
    """One sstable, not the one before: the rewrite's output is in and its
    input gone (between the two both are listed, and the old one vanishes
    under a reader)."""
    files = data_files(server, ks, table)
    return len(files) == 1 and files != before


QUEUE = ("CREATE TABLE %s.%s (k int, c int, v text, PRIMARY KEY (k, c)) WITH gc_grace_seconds = 0 AND "
         "compaction = {'class': 'SizeTieredCompactionStrategy', 'tombstone_compaction_interval': 1, "
         "'tombstone_threshold': 0.2}")


def fill_queue(session, ks, table):
    """10 partitions of 10 entries; 8 of each consumed (deleted)."""
    ins = session.prepare("INSERT INTO %s.%s (k, c, v) VALUES (?, ?, ?)" % (ks, table))
    dele = session.prepare("DELETE FROM %s.%s WHERE k = ? AND c = ?" % (ks, table))
    for k in range(10):
        for c in range(10):
            session.execute(ins, (k, c, "job %d/%d" % (k, c)))
    for k in range(10):
        for c in range(8):
            session.execute(dele, (k, c))


@needs_tool
def test_queue_tombstones_go_by_background_tombstone_compaction(server, session, ks):
    """Two queue tables, one with autocompaction off: once its tombstones
    are past gc_grace in the drop-time histogram (within a minute) its
    droppable ratio is above the threshold, while the other's sstable has
    been rewritten without them by the background compaction alone;
    turning autocompaction on rewrites the first the same way."""
    for t in ("qa", "qb"):
        session.execute(QUEUE % (ks, t))
    tool(server, "disableautocompaction", ks, "qb")
    for t in ("qa", "qb"):
        fill_queue(session, ks, t)
        tool(server, "flush", ks, t)
    before = {t: data_files(server, ks, t) for t in ("qa", "qb")}
    for t in ("qa", "qb"):
        assert len(before[t]) == 1, before
        assert metadata(before[t][0])["Tombstones"] == "80"
    # qb: the ratio rises once the deletions' minute is over (gc_grace 0)
    ratio = H.wait_for(lambda: float(stats(server, ks, "qb")["Droppable tombstone ratio"]) or None,
                       timeout=90, interval=0.5, what="qb's tombstones to be droppable")
    assert ratio > 0.2, ratio
    assert data_files(server, ks, "qb") == before["qb"], "autocompaction off: not rewritten"
    # qa: rewritten in the background, nothing asked for
    H.wait_for(lambda: rewritten(server, ks, "qa", before["qa"]), timeout=30, interval=0.2,
               what="qa's sstable to be rewritten")
    after = data_files(server, ks, "qa")
    assert len(after) == 1, after
    md = metadata(after[0])
    assert md["Tombstones"] == "0", md
    assert md["Ancestors"].split() == [re.search(r"cs-(\d+)-Data", before["qa"][0]).group(1)], md
    st = stats(server, ks, "qa")
    assert st["Droppable tombstone ratio"] == "0.00000", st
    assert st["SSTable count"] == "1"
    tool(server, "enableautocompaction", ks, "qb")
    H.wait_for(lambda: rewritten(server, ks, "qb", before["qb"]), timeout=30, interval=0.2,
               what="qb's sstable to be rewritten")
    assert metadata(data_files(server, ks, "qb")[0])["Tombstones"] == "0"
    assert stats(server, ks, "qb")["Droppable tombstone ratio"] == "0.00000"
    for t in ("qa", "qb"):
        rows = sorted((r.k, r.c) for r in session.execute("SELECT k, c FROM %s.%s" % (ks, t)))
        assert rows == [(k, c) for k in range(10) for c in (8, 9)], t


@needs_tool
def test_tombstone_threshold_and_interval_hold_back(server, session, ks):
    """A tombstone_threshold above the ratio, or an interval not yet over,
    leaves the sstable alone."""
    session.execute("CREATE TABLE %s.qh (k int, c int, v text, PRIMARY KEY (k, c)) WITH gc_grace_seconds = 0 AND "
                    "compaction = {'class': 'SizeTieredCompactionStrategy', 'tombstone_compaction_interval': 1, "
                    "'tombstone_threshold': 100}" % ks)
    session.execute("CREATE TABLE %s.qi (k int, c int, v text, PRIMARY KEY (k, c)) WITH gc_grace_seconds = 0 AND "
                    "compaction = {'class': 'SizeTieredCompactionStrategy', 'tombstone_compaction_interval': 3600}"
                    % ks)
    for t in ("qh", "qi"):
        fill_queue(session, ks, t)
        tool(server, "flush", ks, t)
    before = {t: data_files(server, ks, t) for t in ("qh", "qi")}
    for t in ("qh", "qi"):
        H.wait_for(lambda: float(stats(server, ks, t)["Droppable tombstone ratio"]) > 0.2, timeout=90, interval=0.5,
                   what="%s's tombstones to be droppable" % t)
    time.sleep(3)
    for t in ("qh", "qi"):
        assert data_files(server, ks, t) == before[t], t
        assert stats(server, ks, t)["SSTable count"] == "1"


def config_error(session, stmt, msg):
    with pytest.raises(ConfigurationException) as ei:
        session.execute(stmt)
    assert 'message="%s"' % msg in str(ei.value), str(ei.value)


STCS = "CREATE TABLE %s.bad (k int PRIMARY KEY) WITH compaction = {'class': 'SizeTieredCompactionStrategy', %s}"
LCS = "CREATE TABLE %s.bad (k int PRIMARY KEY) WITH compaction = {'class': 'LeveledCompactionStrategy', %s}"
TWCS = "CREATE TABLE %s.bad (k int PRIMARY KEY) WITH compaction = {'class': 'TimeWindowCompactionStrategy', %s}"


@pytest.mark.parametrize("form,opts,msg", [
    (STCS, "'tombstone_threshold': '-1'", "tombstone_threshold must be greater than 0, but was -1.000000"),
    (STCS, "'tombstone_threshold': 'lots'", "lots is not a parsable int (base10) for tombstone_threshold"),
    (STCS, "'tombstone_compaction_interval': '-1'", "tombstone_compaction_interval must be greater than 0, but was -1"),
    (STCS, "'unchecked_tombstone_compaction': 'maybe'",
     "'unchecked_tombstone_compaction' should be either 'true' or 'false', not 'maybe'"),
    (STCS, "'bucket_low': '0.8', 'bucket_high': '0.6'",
     "bucket_high value (0.6) is less than or equal to the bucket_low value (0.8)"),
    (STCS, "'min_sstable_size': '-10'", "min_sstable_size must be non negative: -10"),
    (STCS, "'min_threshold': '1'", "Min compaction threshold cannot be less than 2 (got 1)"),
    (STCS, "'min_threshold': '8', 'max_threshold': '6'",
     "Min compaction threshold (got 8) cannot be greater than max compaction threshold (got 6)"),
    (LCS, "'sstable_size_in_mb': '0'", "sstable_size_in_mb must be larger than 0, but was 0"),
    (LCS, "'fanout_size': '0'", "fanout_size must be larger than 0, but was 0"),
    (TWCS, "'compaction_window_size': '0'", "0 must be greater than 1 for compaction_window_size"),
    (TWCS, "'compaction_window_unit': 'WEEKS'", "WEEKS is not valid for compaction_window_unit"),
    (TWCS, "'expired_sstable_check_frequency_seconds': '-1'",
     "expired_sstable_check_frequency_seconds must not be negative, but was -1"),
])
def test_option_values_validated(session, ks, form, opts, msg):
    config_error(session, form % (ks, opts), msg)


def test_alter_validates_and_keeps_the_old_options(session, ks):
    session.execute("CREATE TABLE %s.alt (k int PRIMARY KEY) WITH compaction = "
                    "{'class': 'LeveledCompactionStrategy', 'fanout_size': '4'}" % ks)
    config_error(session, "ALTER TABLE %s.alt WITH compaction = {'class': 'LeveledCompactionStrategy', "
                          "'fanout_size': '-1'}" % ks, "fanout_size must be larger than 0, but was -1")
    row = session.execute("SELECT compaction FROM system_schema.tables WHERE keyspace_name = %s "
                          "AND table_name = 'alt'", (ks,)).one()
    assert row.compaction["fanout_size"] == "4"
    session.execute("ALTER TABLE %s.alt WITH compaction = {'class': 'SizeTieredCompactionStrategy', "
                    "'bucket_low': '0.3', 'bucket_high': '2.5', 'min_sstable_size': '1048576', "
                    "'tombstone_threshold': '0.5', 'unchecked_tombstone_compaction': 'true'}" % ks)
    row = session.execute("SELECT compaction FROM system_schema.tables WHERE keyspace_name = %s "
                          "AND table_name = 'alt'", (ks,)).one()
    assert row.compaction["bucket_high"] == "2.5" and row.compaction["unchecked_tombstone_compaction"] == "true"


@needs_tool
def test_memtable_flush_period(server, session, ks):
    """memtable_flush_period_in_ms: the memtable is flushed once it is that
    old, without a flush asked for; a clean one stays as it is."""
    session.execute("CREATE TABLE %s.fp (k int PRIMARY KEY, v int) WITH memtable_flush_period_in_ms = 500" % ks)
    session.execute("INSERT INTO %s.fp (k, v) VALUES (1, 1)" % ks)
    H.wait_for(lambda: stats(server, ks, "fp")["SSTable count"] == "1", timeout=20, interval=0.1,
               what="the periodic flush")
    st = stats(server, ks, "fp")
    assert st["Memtable switch count"] == "1" and st["Memtable cell count"] == "0", st
    time.sleep(1.5)
    assert stats(server, ks, "fp")["Memtable switch count"] == "1", "a clean memtable is not flushed"
    session.execute("ALTER TABLE %s.fp WITH memtable_flush_period_in_ms = 0" % ks)
    session.execute("INSERT INTO %s.fp (k, v) VALUES (2, 2)" % ks)
    time.sleep(1.5)
    assert stats(server, ks, "fp")["SSTable count"] == "1"
    assert sorted(r.k for r in session.execute("SELECT k FROM %s.fp" % ks)) == [1, 2]
