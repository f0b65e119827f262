"""What cqlsh needs: the queries it sends (verbatim, trailing ';' and all),
server-side DESCRIBE, and (when a cqlsh 6.1 checkout is present, see
README "Developer notes") real cqlsh sessions with -e.
"""

import os
import subprocess

import pytest
from cassandra import InvalidRequest
from cassandra.query import SimpleStatement

CQLSH = os.environ.get("CQLSH", "/work/cqlsh/bin/cqlsh.py")


@pytest.fixture(scope="module")
def shop(session, ks):
    session.execute("CREATE TABLE %s.items (id int, cat text, name text, price decimal, "
                    "PRIMARY KEY (cat, id)) WITH CLUSTERING ORDER BY (id DESC)" % ks)
    for i in range(5):
        session.execute("INSERT INTO %s.items (id, cat, name, price) VALUES (%d, 'tools', 'item%d', %d.5)"
                        % (ks, i, i, i))
    return ks


def test_cqlsh_connect_queries(session):
    row = session.execute("select * from system.local where key = 'local'").one()
    assert row.release_version and row.cql_version
    for part in row.cql_version.split("."):
        int(part)


def test_trailing_semicolon_and_comments(session, shop):
    st = SimpleStatement("SELECT name FROM %s.items WHERE cat = 'tools' AND id = 1;" % shop,
                         fetch_size=100)
    assert session.execute(st).one().name == "item1"
    st = SimpleStatement("-- a comment\nSELECT /* inline */ name FROM %s.items // tail\n"
                         "WHERE cat = 'tools' AND id = 2;" % shop)
    assert session.execute(st).one().name == "item2"


def test_describe_keyspaces(session, shop):
    rs = session.execute(SimpleStatement("describe keyspaces;", fetch_size=100))
    assert rs.column_names[:3] == ["keyspace_name", "type", "name"]
    names = [r.name for r in rs]
    assert shop in names and "system" in names and "system_schema" in names


def test_describe_tables(session, shop):
    rs = list(session.execute("DESCRIBE TABLES"))
    assert (shop, "items") in [(r.keyspace_name, r.name) for r in rs]


def test_describe_table(session, shop):
    rs = list(session.execute("DESCRIBE TABLE %s.items;" % shop))
    assert len(rs) == 1
    r = rs[0]
    assert (r.keyspace_name, r.type, r.name) == (shop, "table", "items")
    cs = r.create_statement
    assert cs.startswith("CREATE TABLE %s.items (" % shop)
    assert "PRIMARY KEY (cat, id)" in cs
    assert "CLUSTERING ORDER BY (id DESC)" in cs
    # The statement can be replayed under another name.
    session.execute(cs.replace("%s.items" % shop, "%s.items_copy" % shop))
    cols = session.execute("SELECT column_name FROM system_schema.columns WHERE keyspace_name = %s "
                           "AND table_name = 'items_copy'", (shop,))
    assert sorted(r.column_name for r in cols) == ["cat", "id", "name", "price"]


def test_describe_keyspace(session, shop):
    rs = list(session.execute("DESCRIBE KEYSPACE %s" % shop))
    assert rs[0].type == "keyspace"
    assert rs[0].create_statement.startswith("CREATE KEYSPACE %s WITH replication" % shop)
    assert "items" in [r.name for r in rs if r.type == "table"]


def test_describe_cluster(session):
    r = session.execute("DESCRIBE CLUSTER").one()
    assert r.cluster
    assert r.partitioner == "Murmur3Partitioner"     # Cassandra trims the package name


def test_describe_missing(session):
    with pytest.raises(InvalidRequest):
        session.execute("DESCRIBE TABLE no_such_ks.no_such_table")


def test_virtual_schema(session):
    try:
        rows = list(session.execute("SELECT * from system_virtual_schema.keyspaces"))
    except InvalidRequest:
        return   # tolerated by the drivers
    assert all(r.keyspace_name for r in rows)


# -- real cqlsh ---------------------------------------------------------------
def cqlsh(contact, *cmds, timeout=60):
    if not os.path.exists(CQLSH):
        pytest.skip("cqlsh not installed at %s (see README)" % CQLSH)
    env = dict(os.environ)
    env.setdefault("HOME", "/tmp")
    p = subprocess.run(["/usr/bin/python3", CQLSH, contact[0], str(contact[1]),
                        "-e", "; ".join(cmds)], capture_output=True, text=True,
                       timeout=timeout, env=env)
    return p.returncode, p.stdout, p.stderr


def test_cqlsh_describe_and_select(contact, shop):
    rc, out, err = cqlsh(contact, "DESCRIBE KEYSPACES")
    assert rc == 0, err
    assert shop in out and "system_schema" in out
    rc, out, err = cqlsh(contact, "SELECT cat, id, name, price FROM %s.items WHERE cat = 'tools'" % shop)
    assert rc == 0, err
    assert "item4" in out and "(5 rows)" in out
    assert out.index("item4") < out.index("item0")     # DESC clustering
    rc, out, err = cqlsh(contact, "DESCRIBE TABLE %s.items" % shop)
    assert rc == 0, err
    assert "CREATE TABLE %s.items" % shop in out


def test_cqlsh_ddl_and_dml(contact, ks):
    rc, out, err = cqlsh(contact,
                         "CREATE TABLE %s.shell (k int PRIMARY KEY, v text)" % ks,
                         "INSERT INTO %s.shell (k, v) VALUES (1, 'one')" % ks,
                         "SELECT * FROM %s.shell" % ks)
    assert rc == 0, err
    assert "one" in out and "(1 rows)" in out
    rc, out, err = cqlsh(contact, "SELEC oops")
    assert "syntax" in (err + out).lower()


def test_cqlsh_copy_to_and_from(contact, session, ks, tmp_path):
    """COPY TO splits the export by token ranges (needs tokens in
    system.local); COPY FROM loads with prepared INSERTs in batches."""
    session.execute("CREATE TABLE %s.src (k int PRIMARY KEY, v text, n double)" % ks)
    session.execute("CREATE TABLE %s.dst (k int PRIMARY KEY, v text, n double)" % ks)
    ins = session.prepare("INSERT INTO %s.src (k, v, n) VALUES (?, ?, ?)" % ks)
    for i in range(500):
        session.execute(ins, (i, "v, \"%d\"" % i, i / 4))
    csv = tmp_path / "src.csv"
    rc, out, err = cqlsh(contact, "COPY %s.src TO '%s'" % (ks, csv), timeout=120)
    assert rc == 0, err
    assert "500 rows exported" in out, out
    rc, out, err = cqlsh(contact, "COPY %s.dst FROM '%s'" % (ks, csv), timeout=120)
    assert rc == 0, err
    assert "500 rows imported" in out, out
    src = sorted(tuple(r) for r in session.execute("SELECT k, v, n FROM %s.src" % ks))
    dst = sorted(tuple(r) for r in session.execute("SELECT k, v, n FROM %s.dst" % ks))
    assert src == dst and len(dst) == 500


def test_cqlsh_speaks_v5(contact):
    """cqlsh 6.1 on the Python driver 3.25 settles on protocol v5, as with
    Cassandra 4.1, and says so."""
    rc, out, err = cqlsh(contact, "SHOW VERSION")
    assert rc == 0, err
    assert "Native protocol v5" in out, out
