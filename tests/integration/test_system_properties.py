"""system_views.system_properties, as Cassandra 4.1's SystemPropertiesTable:
the environment variables (and, in Cassandra, JVM system properties) that
concern the node, as name and value, in name order.  cassette has no JVM:
it lists the variables of Cassandra's rule (a "cassandra." prefix,
CassandraRelevantProperties' names, JAVA_HOME) and the CASSETTE_ ones it
reads, when they are set.
"""

import os
import re

import pytest

import cassette_harness as H

pytestmark = pytest.mark.skipif(not H.is_cassette(), reason="starts a server with its own environment")


def own_variables():
    """The CASSETTE_ variables cql/vtables.c lists (env_own)."""
    src = open(os.path.join(H.REPO, "cql", "vtables.c")).read()
    block = re.search(r"env_own\[\] = \{(.*?)\};", src, re.S).group(1)
    return set(re.findall(r'"(CASSETTE_[A-Z0-9_]+)"', block))


def test_every_variable_read_is_listed():
    """Each getenv("CASSETTE_...") in the server's sources names a variable
    the table knows (so a new one cannot be forgotten)."""
    read = set()
    for d in ("common", "storage", "cql", "server", "tools"):
        for root, _, files in os.walk(os.path.join(H.REPO, d)):
            for f in files:
                if f.endswith(".c"):
                    read |= set(re.findall(r'getenv\("(CASSETTE_[A-Z0-9_]+)"\)', open(os.path.join(root, f)).read()))
    assert read, "no getenv found: the pattern is stale"
    assert read <= own_variables(), read - own_variables()


def test_system_properties_lists_relevant_environment(tmp_path, monkeypatch):
    srv = H.Server(tmp_path)    # reads CASSETTE_BIN / CASSETTE_ARGS before the environment is trimmed
    for k in list(os.environ):
        if k.startswith(("CASSETTE_", "cassandra.")) or k == "JAVA_HOME":
            monkeypatch.delenv(k)
    want = {
        "CASSETTE_LOG": "info",
        "CASSETTE_INDEX_BUILD_STEP_ROWS": "1000",
        "CASSETTE_SNAPSHOT_MIN_ALLOWED_TTL_SECONDS": "60",
        "JAVA_HOME": "/opt/no-such-jdk",
        "cassandra.test.property": "a=b c",     # Config.PROPERTY_PREFIX
    }
    for k, v in want.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("CASSETTE_NOT_READ_BY_CASSETTE", "1")
    monkeypatch.setenv("CASSANDRA_CONF", "/etc/cassandra")   # not in Cassandra's relevant list either
    host, port = srv.start()
    cluster, session = H.connect(host, port)
    try:
        rows = list(session.execute("SELECT name, value FROM system_views.system_properties"))
        assert [(r.name, r.value) for r in rows] == sorted(want.items(), key=lambda kv: kv[0].encode())
        r = session.execute("SELECT value FROM system_views.system_properties WHERE name = 'CASSETTE_LOG'").one()
        assert r.value == "info"
        assert not list(session.execute("SELECT * FROM system_views.system_properties WHERE name = 'HOME'"))
    finally:
        cluster.shutdown()
        srv.stop()
