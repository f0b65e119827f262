"""PasswordAuthenticator (config `authenticator: PasswordAuthenticator`)
and the role statements through the Python driver: the default superuser
cassandra/cassandra logs in, roles are created, altered, granted, listed
and dropped as Cassandra 4.1's CassandraRoleManager does, log in with their
passwords and survive kill -9; permission statements end as they do under
AllowAllAuthorizer.  Each auth_server test runs its own server (cassette
only: it needs a config file)."""

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


def test_role_option_checks_come_before_the_anonymous_refusal(session):
    # Cassandra checks superuser rules (authorize) and the role manager's
    # options (validate) before ensureNotAnonymous.
    from cassandra import InvalidRequest, Unauthorized
    with pytest.raises(Unauthorized) as ei:
        session.execute("CREATE ROLE r WITH SUPERUSER = true")
    assert "Only superusers can create a role with superuser status" in str(ei.value)
    with pytest.raises(InvalidRequest) as ei:
        session.execute("CREATE ROLE r WITH PASSWORD = 'x'")
    assert "org.apache.cassandra.auth.CassandraRoleManager doesn't support PASSWORD" in str(ei.value)
    with pytest.raises(InvalidRequest) as ei:
        session.execute("CREATE ROLE r WITH OPTIONS = {'a': 'b'}")
    assert "org.apache.cassandra.auth.CassandraRoleManager doesn't support OPTIONS" in str(ei.value)
    with pytest.raises(Unauthorized) as ei:
        session.execute("ALTER ROLE r WITH SUPERUSER = false")
    assert "Only superusers are allowed to alter superuser status" in str(ei.value)


def login(s, user, password):
    c = connect(s, PlainTextAuthProvider(user, password))
    return c, c.connect()


def auth_error(s, user, password):
    c = connect(s, PlainTextAuthProvider(user, password))
    try:
        with pytest.raises(NoHostAvailable) as ei:
            c.connect()
        errs = list(ei.value.errors.values())
        assert errs and isinstance(errs[0], AuthenticationFailed), errs
        return str(errs[0])
    finally:
        c.shutdown()


def test_roles_created_log_in_and_persist(auth_server):
    from cassandra import InvalidRequest
    c, sess = login(auth_server, "cassandra", "cassandra")
    try:
        sess.execute("CREATE ROLE alice WITH PASSWORD = 'wonder land' AND LOGIN = true")
        sess.execute("CREATE ROLE IF NOT EXISTS alice WITH LOGIN = false")      # no change
        sess.execute("CREATE ROLE ops")
        sess.execute("CREATE USER 'Bob' WITH PASSWORD 'b0b' SUPERUSER")
        with pytest.raises(InvalidRequest) as ei:
            sess.execute("CREATE ROLE alice")
        assert "alice already exists" in str(ei.value)
        with pytest.raises(InvalidRequest) as ei:
            sess.execute("CREATE ROLE ''")
        assert "Role name can't be an empty string" in str(ei.value)
        with pytest.raises(InvalidRequest) as ei:
            sess.execute("CREATE ROLE h WITH HASHED PASSWORD = 'not-bcrypt'")
        assert "Invalid hashed password value. Please use jBcrypt." in str(ei.value)

        rows = {r.role: r for r in sess.execute("LIST ROLES")}
        assert sorted(rows) == ["Bob", "alice", "cassandra", "ops"]
        assert (rows["alice"].super, rows["alice"].login) == (False, True)
        assert (rows["ops"].super, rows["ops"].login) == (False, False)
        assert (rows["Bob"].super, rows["Bob"].login) == (True, True)
        assert rows["alice"].options == {} or rows["alice"].options is None
        assert rows["alice"].datacenters == "ALL"
        users = [(r.name, r.super) for r in sess.execute("LIST USERS")]
        assert users == [("Bob", True), ("alice", False), ("cassandra", True)]

        stored = {r.role: r for r in sess.execute("SELECT * FROM system_auth.roles")}
        assert stored["alice"].salted_hash.startswith("$2a$10$")
        assert stored["alice"].can_login and not stored["alice"].is_superuser
        assert stored["ops"].salted_hash is None
    finally:
        c.shutdown()

    c, sess = login(auth_server, "alice", "wonder land")
    try:
        assert sess.execute("SELECT key FROM system.local").one().key == "local"
    finally:
        c.shutdown()
    assert "Provided username alice and/or password are incorrect" in auth_error(auth_server, "alice", "wrong")
    assert "Provided username ops and/or password are incorrect" in auth_error(auth_server, "ops", "x")
    assert "Provided username nobody and/or password are incorrect" in auth_error(auth_server, "nobody", "x")

    # acknowledged role changes survive kill -9
    auth_server.restart(kill=True)
    c, sess = login(auth_server, "Bob", "b0b")
    try:
        names = [r.role for r in sess.execute("LIST ROLES")]
        assert names == ["Bob", "alice", "cassandra", "ops"]
        sess.execute("ALTER ROLE alice WITH LOGIN = false")
    finally:
        c.shutdown()
    assert "alice is not permitted to log in" in auth_error(auth_server, "alice", "wonder land")


def test_alter_and_drop_rules(auth_server):
    from cassandra import InvalidRequest, Unauthorized
    c, sess = login(auth_server, "cassandra", "cassandra")
    try:
        sess.execute("CREATE ROLE carol WITH PASSWORD = 'one' AND LOGIN = true")
        sess.execute("CREATE ROLE admin WITH SUPERUSER = true")
        with pytest.raises(InvalidRequest) as ei:
            sess.execute("ALTER ROLE nobody WITH LOGIN = true")
        assert "Role nobody doesn't exist" in str(ei.value)
        sess.execute("ALTER ROLE IF EXISTS nobody WITH LOGIN = true")
        with pytest.raises(InvalidRequest) as ei:
            sess.execute("DROP ROLE nobody")
        assert "nobody doesn't exist" in str(ei.value)
        sess.execute("DROP ROLE IF EXISTS nobody")
        with pytest.raises(InvalidRequest) as ei:
            sess.execute("DROP ROLE cassandra")
        assert "Cannot DROP primary role for current login" in str(ei.value)
        with pytest.raises(Unauthorized) as ei:
            sess.execute("ALTER ROLE cassandra WITH SUPERUSER = false")
        assert "You aren't allowed to alter your own superuser status" in str(ei.value)
    finally:
        c.shutdown()

    c, sess = login(auth_server, "carol", "one")
    try:
        # a role may change its own password, nothing else
        sess.execute("ALTER ROLE carol WITH PASSWORD = 'two'")
        with pytest.raises(Unauthorized) as ei:
            sess.execute("ALTER ROLE carol WITH LOGIN = false")
        assert "You aren't allowed to alter LOGIN" in str(ei.value)
        with pytest.raises(Unauthorized) as ei:
            sess.execute("CREATE ROLE x WITH SUPERUSER = true")
        assert "Only superusers can create a role with superuser status" in str(ei.value)
        with pytest.raises(Unauthorized) as ei:
            sess.execute("DROP ROLE admin")
        assert "Only superusers can drop a role with superuser status" in str(ei.value)
    finally:
        c.shutdown()
    assert "Provided username carol" in auth_error(auth_server, "carol", "one")
    c, sess = login(auth_server, "carol", "two")
    c.shutdown()

    c, sess = login(auth_server, "cassandra", "cassandra")
    try:
        sess.execute("DROP ROLE carol")
        assert [r.role for r in sess.execute("LIST ROLES")] == ["admin", "cassandra"]
    finally:
        c.shutdown()
    assert "Provided username carol" in auth_error(auth_server, "carol", "two")


def test_granted_roles(auth_server):
    from cassandra import InvalidRequest
    c, sess = login(auth_server, "cassandra", "cassandra")
    try:
        for r in ("a", "b", "c"):
            sess.execute("CREATE ROLE %s WITH PASSWORD = 'pw' AND LOGIN = true" % r)
        sess.execute("CREATE ROLE admins WITH SUPERUSER = true")
        sess.execute("GRANT b TO a")
        sess.execute("GRANT c TO b")
        with pytest.raises(InvalidRequest) as ei:
            sess.execute("GRANT a TO c")
        assert "a is a member of c" in str(ei.value)
        with pytest.raises(InvalidRequest) as ei:
            sess.execute("GRANT c TO a")
        assert "a is a member of c" in str(ei.value)
        with pytest.raises(InvalidRequest) as ei:
            sess.execute("GRANT nobody TO a")
        assert "nobody doesn't exist" in str(ei.value)
        assert [r.role for r in sess.execute("LIST ROLES OF a")] == ["a", "b", "c"]
        assert [r.role for r in sess.execute("LIST ROLES OF a NORECURSIVE")] == ["a", "b"]
        with pytest.raises(InvalidRequest) as ei:
            sess.execute("LIST ROLES OF nobody")
        assert "<role nobody> doesn't exist" in str(ei.value)
        members = sorted((r.role, r.member) for r in sess.execute("SELECT * FROM system_auth.role_members"))
        assert members == [("b", "a"), ("c", "b")]
        assert sess.execute("SELECT member_of FROM system_auth.roles WHERE role = 'a'").one().member_of == {"b"}

        # superuser status is inherited (LIST USERS shows it)
        sess.execute("GRANT admins TO c")
        users = {r.name: r.super for r in sess.execute("LIST USERS")}
        assert users == {"a": True, "b": True, "c": True, "cassandra": True}
        with pytest.raises(InvalidRequest) as ei:
            sess.execute("REVOKE c FROM a")
        assert "a is not a member of c" in str(ei.value)
        sess.execute("REVOKE c FROM b")
        assert [r.role for r in sess.execute("LIST ROLES OF a")] == ["a", "b"]
        sess.execute("DROP ROLE b")
        assert sess.execute("SELECT member_of FROM system_auth.roles WHERE role = 'a'").one().member_of is None
    finally:
        c.shutdown()


def test_permission_statements_with_allow_all_authorizer(auth_server):
    # cassette's authorizer is AllowAllAuthorizer (as Cassandra's default):
    # the statements are checked, then end as Cassandra's do.
    from cassandra import InvalidRequest
    from cassandra.protocol import ServerError
    c, sess = login(auth_server, "cassandra", "cassandra")
    try:
        sess.execute("CREATE KEYSPACE kp WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        sess.execute("CREATE TABLE kp.t (k int PRIMARY KEY)")
        sess.execute("CREATE ROLE r")
        with pytest.raises(InvalidRequest) as ei:
            sess.execute("GRANT SELECT ON ALL KEYSPACES TO nobody")
        assert "Role nobody doesn't exist" in str(ei.value)
        with pytest.raises(InvalidRequest) as ei:
            sess.execute("GRANT SELECT ON KEYSPACE nope TO r")
        assert "Resource <keyspace nope> doesn't exist" in str(ei.value)
        with pytest.raises(InvalidRequest) as ei:
            sess.execute("GRANT SELECT ON TABLE kp.nope TO r")
        assert "Resource <table kp.nope> doesn't exist" in str(ei.value)
        with pytest.raises(InvalidRequest) as ei:
            sess.execute("GRANT SELECT ON t TO r")
        assert "No keyspace has been specified" in str(ei.value)
        # a ServerError (the driver gives up on the only host: NoHostAvailable)
        for q, verb in (("GRANT SELECT ON TABLE kp.t TO r", "GRANT"), ("REVOKE ALL ON KEYSPACE kp FROM r", "REVOKE")):
            with pytest.raises(NoHostAvailable) as ei:
                sess.execute(q)
            errs = list(ei.value.errors.values())
            assert errs and isinstance(errs[0], ServerError), errs
            assert ("java.lang.UnsupportedOperationException: %s operation is not supported by AllowAllAuthorizer"
                    % verb) in str(errs[0])
        with pytest.raises(InvalidRequest) as ei:
            sess.execute("LIST ALL PERMISSIONS OF r")
        assert "LIST PERMISSIONS operation is not supported by AllowAllAuthorizer" in str(ei.value)
        with pytest.raises(InvalidRequest) as ei:
            sess.execute("LIST ALL PERMISSIONS ON KEYSPACE nope")
        assert "<keyspace nope> doesn't exist" in str(ei.value)
        assert sess.execute("SELECT key FROM system.local").one().key == "local"
    finally:
        c.shutdown()
