"""nodetool import and refresh (Cassandra 4.1's SSTableImporter): a
snapshot's sstables loaded back into a table, from its directory or after
being placed in the table's own; verification, the failed-directory
report and exit codes; secondary indexes built again; the data surviving
kill -9 and the table's other sstables untouched by the imported ones'
compaction history.
"""

import glob
import os
import shutil
import subprocess

import pytest

import cassette_harness as H

TOOL = os.path.join(os.path.dirname(H.binary_path()), "cassette-tool")

pytestmark = pytest.mark.skipif(not H.is_cassette(), reason="needs cassette-tool and the admin endpoint")

BAD_USE = "\nSee 'nodetool help' or 'nodetool help <command>'.\n"
DEPRECATED = "nodetool refresh is deprecated, use nodetool import instead\n"


def tool(server, *args):
    H.wait_for(lambda: server.admin_port, timeout=10, what="the admin port line")
    return subprocess.run([TOOL, "-p", str(server.admin_port)] + list(args), capture_output=True, text=True,
                          timeout=120)


def ok(server, *args):
    r = tool(server, *args)
    assert r.returncode == 0, (args, r.stdout, r.stderr)
    return r


def table_dir(server, ks, table):
    (d,) = glob.glob(os.path.join(server.data_dir, "data", ks, table + "-*"))
    return d


def sstable_files(d):
    return sorted(f for f in os.listdir(d) if f.startswith("cs-"))


def rows(session, ks, table):
    return sorted(tuple(r) for r in session.execute("SELECT * FROM %s.%s" % (ks, table)))


def fill(session, ks, table, lo, hi):
    for i in range(lo, hi):
        session.execute("INSERT INTO %s.%s (k, c, v) VALUES (%d, %d, 'v%d')" % (ks, table, i % 7, i, i))


def snapshot(server, ks, table, tag):
    ok(server, "snapshot", "-t", tag, "-cf", table, ks)
    return os.path.join(table_dir(server, ks, table), "snapshots", tag)


def test_import_a_snapshot_back(fresh_server):
    """snapshot, TRUNCATE, import from the snapshot directory: every row
    back, the index answers again, the snapshot's sstable files moved out
    (manifest.json stays); after kill -9 and a restart the rows are still
    there."""
    srv = fresh_server
    c, s = H.connect(srv.host, srv.port)
    try:
        s.execute("CREATE KEYSPACE ki WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE ki.t (k int, c int, v text, PRIMARY KEY (k, c))")
        s.execute("CREATE INDEX t_v ON ki.t (v)")
        fill(s, "ki", "t", 0, 300)
        want = rows(s, "ki", "t")
        snap = snapshot(srv, "ki", "t", "s1")
        assert any(f.endswith("-Data.db") for f in os.listdir(snap))
        s.execute("TRUNCATE ki.t")
        assert rows(s, "ki", "t") == []
        assert list(s.execute("SELECT * FROM ki.t WHERE v = 'v42'")) == []
        r = ok(srv, "import", "ki", "t", snap)
        assert r.stdout == "" and r.stderr == ""
        assert rows(s, "ki", "t") == want
        assert [tuple(x) for x in s.execute("SELECT k, c FROM ki.t WHERE v = 'v42'")] == [(0, 42)]
        assert os.listdir(snap) == ["manifest.json"]
        srv.restart(kill=True)
        c.shutdown()
        c, s = H.connect(srv.host, srv.port)
        assert rows(s, "ki", "t") == want
        assert [tuple(x) for x in s.execute("SELECT k, c FROM ki.t WHERE v = 'v299'")] == [(5, 299)]
    finally:
        c.shutdown()


def test_import_options_and_failed_directories(server, session, ks):
    """--copy-data leaves the source; a directory with a corrupt sstable
    fails whole (nodetool's 'Some directories failed to import' on stderr,
    exit 1) while the others load; --quick skips the verification."""
    session.execute("CREATE TABLE %s.o (k int, c int, v text, PRIMARY KEY (k, c))" % ks)
    fill(session, ks, "o", 0, 50)
    snap = snapshot(server, ks, "o", "o1")
    fill(session, ks, "o", 50, 80)
    snap2 = snapshot(server, ks, "o", "o2")
    want = rows(session, ks, "o")
    work = os.path.join(server.workdir, "import_o")
    good, bad = os.path.join(work, "good"), os.path.join(work, "bad")
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(snap, good)
    shutil.copytree(snap2, bad)
    (data,) = sorted(glob.glob(os.path.join(bad, "cs-*-Data.db")))[-1:]
    with open(data, "r+b") as f:
        f.seek(40)
        b = f.read(1)
        f.seek(40)
        f.write(bytes([b[0] ^ 0xFF]))
    session.execute("TRUNCATE %s.o" % ks)
    before = sorted(os.listdir(bad))
    r = tool(server, "import", "--copy-data", ks, "o", good, bad)
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert r.stderr == "Some directories failed to import, check server logs for details:\n%s\n" % bad
    assert sorted(os.listdir(bad)) == before                     # untouched
    assert any(f.endswith("-Data.db") for f in os.listdir(good))   # copied, not moved
    got = rows(session, ks, "o")
    assert got == sorted(x for x in want if x[1] < 50)
    # the same directory again: the same cells twice read once
    ok(server, "import", "-p", ks, "o", good)
    assert rows(session, ks, "o") == got
    r = ok(server, "import", "-q", ks, "o", snap2)
    assert r.stdout == "Doing a quick import - skipping sstable verification and row cache invalidation\n"
    assert rows(session, ks, "o") == want


def test_import_refusals(server, session, ks):
    session.execute("CREATE TABLE %s.rf (k int PRIMARY KEY)" % ks)
    r = tool(server, "import", ks, "rf")
    assert r.returncode == 1 and r.stdout == "nodetool: import requires keyspace, table name and directories" + BAD_USE
    r = tool(server, "import", ks, "nope", "/tmp")
    assert r.returncode == 1 and r.stderr == "ColumnFamilyStore for %s/nope not found.\n" % ks
    r = tool(server, "import", ks, "rf", "/no/such/dir")
    assert r.returncode == 2 and "error: Directory /no/such/dir does not exist" in r.stderr, (r.stdout, r.stderr)
    r = tool(server, "import", "--bogus", ks, "rf", "/tmp")
    assert r.returncode == 1 and "Found unexpected parameters: [--bogus]" in r.stdout
    # every directory counts, however many: the 100th is checked too
    many = os.path.join(server.workdir, "import_many")
    dirs = [os.path.join(many, "d%03d" % i) for i in range(100)]
    for d in dirs[:-1]:
        os.makedirs(d, exist_ok=True)
    r = tool(server, "import", ks, "rf", *dirs)
    assert r.returncode == 2 and "error: Directory %s does not exist" % dirs[-1] in r.stderr, (r.stdout, r.stderr)
    os.makedirs(dirs[-1], exist_ok=True)
    r = tool(server, "import", ks, "rf", *dirs)
    assert r.returncode == 0 and r.stderr == "", r.stderr


def test_refresh(server, session, ks):
    """refresh: sstables placed in the table's own directory, under any
    generation (one the table would hand out next included), are loaded
    under new ones; the table's own sstables are not loaded twice."""
    session.execute("CREATE TABLE %s.rs (k int, c int, v text, PRIMARY KEY (k, c))" % ks)
    fill(session, ks, "rs", 0, 40)
    snap = snapshot(server, ks, "rs", "r1")
    want = rows(session, ks, "rs")
    d = table_dir(server, ks, "rs")
    r = ok(server, "refresh", ks, "rs")              # nothing new: nothing loaded
    assert r.stdout == DEPRECATED
    assert rows(session, ks, "rs") == want
    session.execute("TRUNCATE %s.rs" % ks)
    assert sstable_files(d) == []
    for gen in ("900", "1"):                        # far ahead, and the next the table would use
        for f in os.listdir(snap):
            if f.startswith("cs-"):
                shutil.copy(os.path.join(snap, f), os.path.join(d, "cs-%s-%s" % (gen, f.split("-", 2)[2])))
    # an import meanwhile takes a generation past the placed files, not theirs
    ok(server, "import", "-p", ks, "rs", snap)
    placed = [f for f in sstable_files(d) if f.startswith(("cs-900-", "cs-1-"))]
    assert len(placed) == 10, sstable_files(d)
    assert rows(session, ks, "rs") == want
    r = ok(server, "refresh", ks, "rs")
    assert r.stdout == DEPRECATED
    assert rows(session, ks, "rs") == want
    files = sstable_files(d)
    assert not any(f.startswith(("cs-900-", "cs-1-")) for f in files), files
    assert len([f for f in files if f.endswith("-TOC.txt")]) == 3
    assert min(int(f.split("-")[1]) for f in files) > 900, files
    ok(server, "flush", ks, "rs")
    session.execute("INSERT INTO %s.rs (k, c, v) VALUES (100, 1, 'new')" % ks)
    ok(server, "flush", ks, "rs")                    # a new generation past the placed ones
    assert rows(session, ks, "rs") == sorted(want + [(100, 1, "new")])
    r = tool(server, "refresh", ks)
    assert r.returncode == 1 and r.stdout == DEPRECATED + "nodetool: refresh requires ks and cf args" + BAD_USE
    r = tool(server, "refresh", ks, "nope")
    assert r.returncode == 1 and "nodetool: Unknown keyspace/cf pair (%s.nope)" % ks in r.stdout
    r = tool(server, "refresh", "no_such_ks", "rs")
    assert r.returncode == 2 and "error: Unknown keyspace no_such_ks" in r.stderr


def test_imported_history_leaves_the_table_alone(fresh_server):
    """An sstable out of a compaction names its inputs' generations as
    ancestors, and the engine deletes named ancestors when it opens a
    table; imported into a table whose own sstables have those
    generations, it must not take them with it at the next start."""
    srv = fresh_server
    c, s = H.connect(srv.host, srv.port)
    try:
        s.execute("CREATE KEYSPACE kh WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        for t in ("a", "b"):
            s.execute("CREATE TABLE kh.%s (k int, c int, v text, PRIMARY KEY (k, c))" % t)
        for lo in (0, 10, 20):
            fill(s, "kh", "a", lo, lo + 10)
            ok(srv, "flush", "kh", "a")
        ok(srv, "compact", "kh", "a")
        snap = snapshot(srv, "kh", "a", "h")
        meta = subprocess.run([TOOL, "sstable", "metadata", glob.glob(os.path.join(snap, "cs-*-Data.db"))[0]],
                              capture_output=True, text=True)
        anc = [l for l in meta.stdout.splitlines() if l.startswith("Ancestors:")]
        assert anc and set(anc[0].split()[1:]) == {"1", "2", "3"}, meta.stdout
        for lo in (100, 110, 120):
            fill(s, "kh", "b", lo, lo + 10)
            ok(srv, "flush", "kh", "b")
        ok(srv, "disableautocompaction", "kh", "b")
        want = sorted(rows(s, "kh", "a") + rows(s, "kh", "b"))
        ok(srv, "import", "kh", "b", snap)
        assert rows(s, "kh", "b") == want
        d = table_dir(srv, "kh", "b")
        imported = max(glob.glob(os.path.join(d, "cs-*-Data.db")), key=lambda p: int(os.path.basename(p).split("-")[1]))
        meta = subprocess.run([TOOL, "sstable", "metadata", imported], capture_output=True, text=True)
        assert "SSTable level: 0" in meta.stdout and "Commit log position: 0:0" in meta.stdout, meta.stdout
        assert [l for l in meta.stdout.splitlines() if l.startswith("Ancestors:")] == ["Ancestors:"], meta.stdout
        srv.restart(kill=True)
        c.shutdown()
        c, s = H.connect(srv.host, srv.port)
        assert rows(s, "kh", "b") == want
        assert len(glob.glob(os.path.join(d, "cs-*-TOC.txt"))) == 4
    finally:
        c.shutdown()


def test_quick_import_of_a_corrupt_sstable_fails_the_index_build(server, session, ks):
    """--quick skips verification: a corrupt sstable comes in, and the
    index build over it fails; the verb answers with the failure (it used
    to wait for the failed build for ever), as does rebuild_index."""
    session.execute("CREATE TABLE %s.q (k int, c int, v text, PRIMARY KEY (k, c))" % ks)
    session.execute("CREATE INDEX q_v ON %s.q (v)" % ks)
    fill(session, ks, "q", 0, 20)
    snap = snapshot(server, ks, "q", "q1")
    session.execute("TRUNCATE %s.q" % ks)
    (data,) = glob.glob(os.path.join(snap, "cs-*-Data.db"))
    with open(data, "r+b") as f:
        f.seek(40)
        b = f.read(1)
        f.seek(40)
        f.write(bytes([b[0] ^ 0xFF]))
    r = tool(server, "import", "-q", ks, "q", snap)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "error: Failed to build index q_v of %s.q" % ks in r.stderr
    r = tool(server, "rebuild_index", ks, "q", "q_v")
    assert r.returncode == 2 and "error: Failed to build index q_v" in r.stderr, (r.stdout, r.stderr)
    r = tool(server, "verify", "-f", ks, "q")
    assert r.returncode == 2 and "error: Corrupted SSTable" in r.stderr
    session.execute("DROP TABLE %s.q" % ks)
