"""PasswordAuthenticator (config `authenticator: PasswordAuthenticator`)
through the Python driver: the default superuser cassandra/cassandra logs
in, a wrong password or no credentials do not.  Each test runs its own
server (cassette only: it needs a config file)."""

import pytest
from cassandra import AuthenticationFailed
from cassandra.auth import PlainTextAuthProvider
from cassandra.cluster import Cluster, NoHostAvailable

import cassette_harness as H

pytestmark = pytest.mark.skipif(not H.is_cassette(), reason="starts a server with a config file")


@pytest.fixture
def auth_server(tmp_path):
    cfg = tmp_path / "cassette.yaml"
    cfg.write_text("authenticator: PasswordAuthenticator\n")
    s = H.Server(tmp_path / "srv", extra_args=["--config", str(cfg)])
    s.start()
    yield s
    s.stop()


def connect(s, provider):
    return Cluster([s.host], port=s.port, auth_provider=provider, connect_timeout=10)


def test_login_with_default_superuser(auth_server):
    c = connect(auth_server, PlainTextAuthProvider("cassandra", "cassandra"))
    try:
        sess = c.connect()
        assert sess.execute("SELECT key FROM system.local").one().key == "local"
        sess.execute("CREATE KEYSPACE ka WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
    finally:
        c.shutdown()


def test_wrong_password_refused(auth_server):
    c = connect(auth_server, PlainTextAuthProvider("cassandra", "nope"))
    try:
        with pytest.raises(NoHostAvailable) as ei:
            c.connect()
        errs = list(ei.value.errors.values())
        assert errs and isinstance(errs[0], AuthenticationFailed)
        assert "Provided username cassandra and/or password are incorrect" in str(errs[0])
    finally:
        c.shutdown()


def test_no_credentials_refused(auth_server):
    c = connect(auth_server, None)
    try:
        with pytest.raises(NoHostAvailable):
            c.connect()
    finally:
        c.shutdown()
    assert auth_server.alive()


ROLE_STATEMENTS = [
    "CREATE ROLE r WITH LOGIN = true",
    "CREATE USER u",
    "ALTER ROLE r WITH LOGIN = false",
    "DROP ROLE r",
    "DROP USER IF EXISTS u",
    "GRANT SELECT ON ALL KEYSPACES TO r",
    "REVOKE SELECT ON KEYSPACE system FROM r",
    "GRANT r TO s",
    "LIST ROLES",
    "LIST USERS",
    "LIST ALL PERMISSIONS",
]


def test_role_statements_anonymous(session):
    # AllowAllAuthenticator (the default): every session is anonymous, and
    # Cassandra 4.1 refuses role and permission statements as Unauthorized
    # (ClientState.ensureNotAnonymous), not as a server error.
    from cassandra import Unauthorized
    for q in ROLE_STATEMENTS:
        with pytest.raises(Unauthorized) as ei:
            session.execute(q)
        assert "You have to be logged in and not anonymous to perform this request" in str(ei.value), q


def test_role_statements_with_password_authenticator(auth_server):
    # Logged in, cassette has no role store: a clear InvalidRequest naming
    # the statement (docs/cql.md), never a server error.
    from cassandra import InvalidRequest
    c = connect(auth_server, PlainTextAuthProvider("cassandra", "cassandra"))
    try:
        sess = c.connect()
        for q in ROLE_STATEMENTS:
            with pytest.raises(InvalidRequest) as ei:
                sess.execute(q)
            assert "is not supported: cassette keeps no roles or permissions" in str(ei.value), q
        assert sess.execute("SELECT key FROM system.local").one().key == "local"
    finally:
        c.shutdown()
