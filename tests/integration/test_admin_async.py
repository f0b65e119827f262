"""nodetool flush / compact through the admin endpoint run off the request
loop (server/admin.c: libuv's thread pool), yet still reply only once the
work is done.

Ordering is made deterministic with the server's test hook
CASSETTE_TEST_ADMIN_HOLD=PATH: an admin flush/compact worker creates
PATH.held, then waits until PATH exists.  So "a query is answered while a
flush is in progress" is checked by order of events, never by durations:
the query is answered while the worker is provably still held.
"""

import glob
import os
import re
import subprocess

import pytest

import cassette_harness as H

BUILD = os.path.dirname(H.binary_path())
TOOL = os.path.join(BUILD, "cassette-tool")

pytestmark = pytest.mark.skipif(not H.is_cassette(), reason="needs the cassette binaries and test hook")


def tool(server, *args, timeout=120):
    return subprocess.run([TOOL, "-p", str(server.admin_port)] + list(args), capture_output=True,
                          text=True, timeout=timeout)


def tool_bg(server, *args):
    return subprocess.Popen([TOOL, "-p", str(server.admin_port)] + list(args), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def data_files(server, ks, table):
    return glob.glob(os.path.join(server.data_dir, "data", ks, table + "-*", "cs-*-Data.db"))


def sstable_count(server, ks, table):
    r = tool(server, "tablestats", "%s.%s" % (ks, table))
    assert r.returncode == 0, r.stderr
    m = re.search(r"SSTable count: (\d+)", r.stdout)
    assert m, r.stdout
    return int(m.group(1))


def wait_admin_port(server):
    H.wait_for(lambda: server.admin_port, timeout=10, what="the admin port line")


class Held:
    """A server started with the hold hook; hold()/release() per test."""

    def __init__(self, workdir):
        self.path = os.path.join(str(workdir), "admin-hold")
        old = os.environ.get("CASSETTE_TEST_ADMIN_HOLD")
        os.environ["CASSETTE_TEST_ADMIN_HOLD"] = self.path
        try:
            self.server = H.new_server(workdir)
        finally:
            if old is None:
                del os.environ["CASSETTE_TEST_ADMIN_HOLD"]
            else:
                os.environ["CASSETTE_TEST_ADMIN_HOLD"] = old
        wait_admin_port(self.server)
        self.cluster, self.session = H.connect(self.server.host, self.server.port)

    def hold(self):
        """Admin workers wait from now on (until release)."""
        for p in (self.path, self.path + ".held"):
            if os.path.exists(p):
                os.unlink(p)

    def wait_held(self, proc):
        H.wait_for(lambda: os.path.exists(self.path + ".held") or proc.poll() is not None,
                   timeout=60, what="the admin worker to reach its hold")
        assert proc.poll() is None, "the admin request ended without reaching the hold: %r" % (
            proc.communicate(),)

    def release(self):
        open(self.path, "w").close()

    def close(self):
        self.release()
        self.cluster.shutdown()
        self.server.stop()


@pytest.fixture(scope="module")
def held(tmp_path_factory):
    h = Held(tmp_path_factory.mktemp("adminhold"))
    h.session.execute("CREATE KEYSPACE ah WITH replication = "
                      "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    yield h
    h.close()


def make_table(session, name, rows=100):
    session.execute("DROP TABLE IF EXISTS ah.%s" % name)
    session.execute("CREATE TABLE ah.%s (k int PRIMARY KEY, v text)" % name)
    ins = session.prepare("INSERT INTO ah.%s (k, v) VALUES (?, ?)" % name)
    for i in range(rows):
        session.execute(ins, (i, "v%d" % i))


def test_flush_returns_with_data_on_disk(server, session, ks):
    """As before: the reply comes once the sstable is written."""
    wait_admin_port(server)
    session.execute("CREATE TABLE %s.fl (k int PRIMARY KEY, v text)" % ks)
    for i in range(200):
        session.execute("INSERT INTO %s.fl (k, v) VALUES (%d, 'x%d')" % (ks, i, i))
    assert data_files(server, ks, "fl") == []
    r = tool(server, "flush", ks, "fl")
    assert r.returncode == 0, r.stderr
    assert r.stdout == ""                                      # like nodetool: silent on success
    assert len(data_files(server, ks, "fl")) == 1
    assert sstable_count(server, ks, "fl") == 1
    for i in range(200, 300):
        session.execute("INSERT INTO %s.fl (k, v) VALUES (%d, 'x%d')" % (ks, i, i))
    assert tool(server, "flush", ks).returncode == 0          # the whole keyspace
    assert sstable_count(server, ks, "fl") == 2
    r = tool(server, "compact", ks, "fl")
    assert r.returncode == 0, r.stderr
    assert r.stdout == ""
    assert sstable_count(server, ks, "fl") == 1
    assert len(data_files(server, ks, "fl")) == 1
    assert session.execute("SELECT count(*) FROM %s.fl" % ks).one()[0] == 300


def test_unknown_names_are_errors(server, ks):
    """nodetool's answers to names that do not exist: a keyspace is
    parseOptionalKeyspace's (and TableStatsHolder's) badUse, exit 1 with
    the help hint, on stdout as nodetool prints it; a table is the server's IllegalArgumentException from
    getColumnFamilyStore, "error: ...", exit 2."""
    wait_admin_port(server)
    hint = "\nSee 'nodetool help' or 'nodetool help <command>'.\n"
    for verb in ("flush", "compact", "repair", "cleanup", "disableautocompaction"):
        r = tool(server, verb, ks, "no_such_table")
        assert r.returncode == 2 and r.stderr == "error: Unknown keyspace/cf pair (%s.no_such_table)\n" % ks, \
            (verb, r.returncode, r.stderr)
        r = tool(server, verb, "no_such_keyspace")
        assert r.returncode == 1 and r.stdout == "nodetool: Keyspace [no_such_keyspace] does not exist." + hint, \
            (verb, r.returncode, r.stdout)
    r = tool(server, "getendpoints", ks, "no_such_table", "1")
    assert r.returncode == 2 and r.stderr == "error: Unknown table 'no_such_table' in keyspace '%s'\n" % ks, r.stderr
    r = tool(server, "getendpoints", ks)
    assert r.returncode == 1 and r.stdout == ("nodetool: getendpoints requires keyspace, table and partition key "
                                              "arguments" + hint), r.stdout
    r = tool(server, "tablestats", "no_such_keyspace")
    assert r.returncode == 1 and r.stdout == "nodetool: Unknown keyspace: no_such_keyspace" + hint, r.stdout
    r = tool(server, "tablestats", "%s.no_such_table" % ks)
    assert r.returncode == 1 and r.stdout == "nodetool: Unknown tables: [no_such_table] in keyspace: %s" % ks + hint


@pytest.mark.parametrize("verb", ["flush", "compact"])
def test_requests_answered_while_held(held, verb):
    """A CQL read and write are answered while the flush/compact worker is
    held, i.e. before the admin request returns."""
    s = held.session
    make_table(s, "busy_" + verb)
    if verb == "compact":       # two sstables to compact into one
        assert tool(held.server, "flush", "ah", "busy_" + verb).returncode == 0
        s.execute("INSERT INTO ah.busy_compact (k, v) VALUES (0, 'again')")
        assert tool(held.server, "flush", "ah", "busy_" + verb).returncode == 0
        assert sstable_count(held.server, "ah", "busy_" + verb) == 2
    held.hold()
    p = tool_bg(held.server, verb, "ah", "busy_" + verb)
    try:
        held.wait_held(p)
        s.execute("INSERT INTO ah.busy_%s (k, v) VALUES (1000, 'during')" % verb)
        row = s.execute("SELECT v FROM ah.busy_%s WHERE k = 1000" % verb).one()
        assert row.v == "during"
        assert s.execute("SELECT count(*) FROM ah.busy_%s" % verb).one()[0] == 101
        # Another admin request (not a flush) is answered meanwhile too.
        r = tool(held.server, "compactionstats")
        assert r.returncode == 0, r.stderr
        assert p.poll() is None, "the %s returned before it was released" % verb
    finally:
        held.release()
    out, err = p.communicate(timeout=120)
    assert p.returncode == 0, err
    assert data_files(held.server, "ah", "busy_" + verb), "no sstable after %s" % verb
    assert sstable_count(held.server, "ah", "busy_" + verb) == 1


def test_flush_held_then_data_on_disk(held):
    """The flush reply still means "on disk": released, it returns with
    every row written before it in an sstable."""
    s = held.session
    make_table(s, "ondisk", rows=50)
    held.hold()
    p = tool_bg(held.server, "flush", "ah", "ondisk")
    held.wait_held(p)
    assert data_files(held.server, "ah", "ondisk") == []
    held.release()
    _, err = p.communicate(timeout=120)
    assert p.returncode == 0, err
    assert len(data_files(held.server, "ah", "ondisk")) == 1
    r = tool(held.server, "tablestats", "ah.ondisk")
    assert "Memtable cell count: 0" in r.stdout, r.stdout


@pytest.mark.parametrize("verb", ["flush", "compact"])
@pytest.mark.parametrize("ddl", ["DROP TABLE ah.{t}", "TRUNCATE ah.{t}"])
def test_ddl_while_held(held, verb, ddl):
    """DROP TABLE / TRUNCATE of the table a flush/compact is working on: no
    crash, the DDL is answered at once, the nodetool command succeeds as a
    no-op on what is gone (Cassandra), and the server keeps serving."""
    s = held.session
    t = "ddl_%s_%s" % (verb, ddl.split()[0].lower())
    make_table(s, t)
    if verb == "compact":
        assert tool(held.server, "flush", "ah", t).returncode == 0
        for i in range(100, 150):
            s.execute("INSERT INTO ah.%s (k, v) VALUES (%d, 'b')" % (t, i))
        assert tool(held.server, "flush", "ah", t).returncode == 0
    held.hold()
    p = tool_bg(held.server, verb, "ah", t)
    try:
        held.wait_held(p)
        s.execute(ddl.format(t=t))
        assert p.poll() is None
    finally:
        held.release()
    _, err = p.communicate(timeout=120)
    assert p.returncode == 0, err
    if ddl.startswith("TRUNCATE"):
        assert s.execute("SELECT count(*) FROM ah.%s" % t).one()[0] == 0
        s.execute("INSERT INTO ah.%s (k, v) VALUES (1, 'after')" % t)
        assert tool(held.server, "flush", "ah", t).returncode == 0
        assert s.execute("SELECT v FROM ah.%s WHERE k = 1" % t).one().v == "after"
        assert sstable_count(held.server, "ah", t) == 1
    else:
        assert data_files(held.server, "ah", t) == []
        r = tool(held.server, "flush", "ah", t)
        assert r.returncode != 0 and "error: Unknown keyspace/cf pair (" in r.stderr
        make_table(s, t, rows=10)                       # the name is reusable
        assert tool(held.server, "flush", "ah", t).returncode == 0
        assert s.execute("SELECT count(*) FROM ah.%s" % t).one()[0] == 10
    assert held.server.alive()


def test_drop_keyspace_while_held(held):
    s = held.session
    s.execute("CREATE KEYSPACE ahx WITH replication = "
              "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    for t in ("a", "b"):
        s.execute("CREATE TABLE ahx.%s (k int PRIMARY KEY, v int)" % t)
        for i in range(20):
            s.execute("INSERT INTO ahx.%s (k, v) VALUES (%d, %d)" % (t, i, i))
    s.execute("CREATE INDEX ON ahx.a (v)")
    held.hold()
    p1 = tool_bg(held.server, "flush", "ahx")
    p2 = tool_bg(held.server, "compact", "ahx", "a")
    try:
        held.wait_held(p1)
        s.execute("DROP KEYSPACE ahx")
    finally:
        held.release()
    for p in (p1, p2):
        out, err = p.communicate(timeout=120)
        # p2 may have been resolved after the DROP (unknown keyspace: badUse,
        # on stdout) or before (a no-op on the dropped tables): either way no
        # crash, a clean reply.
        assert p.returncode == 0 or "does not exist" in out, (out, err)
    assert held.server.alive()
    assert s.execute("SELECT count(*) FROM system_schema.tables WHERE keyspace_name = 'ahx'").one()[0] == 0


def test_shutdown_with_admin_work_in_flight(tmp_path):
    """SIGTERM while two flushes are held: both requests get a reply, the
    server exits cleanly (0, no sanitizer report) and the data is there
    after a restart."""
    h = Held(tmp_path)
    try:
        s = h.session
        s.execute("CREATE KEYSPACE sd WITH replication = "
                  "{'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE sd.t (k int PRIMARY KEY, v int)")
        for i in range(30):
            s.execute("INSERT INTO sd.t (k, v) VALUES (%d, %d)" % (i, i))
        h.hold()
        p1 = tool_bg(h.server, "flush", "sd", "t")
        p2 = tool_bg(h.server, "flush", "sd")
        h.wait_held(p1)
        h.cluster.shutdown()
        assert h.server.stop() == 0          # raises on a bad exit or a sanitizer report
        for p in (p1, p2):
            out, err = p.communicate(timeout=120)
            assert p.returncode == 0 or "shutting down" in err or "bad response" in err, (out, err)
        h.server.start()
        h.cluster, h.session = H.connect(h.server.host, h.server.port)
        assert h.session.execute("SELECT count(*) FROM sd.t").one()[0] == 30
    finally:
        h.close()
