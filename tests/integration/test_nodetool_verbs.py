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
