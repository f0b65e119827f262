"""CassandraAuthorizer (config `authorizer: CassandraAuthorizer` with
PasswordAuthenticator) through the Python driver: permissions are granted,
revoked, listed, enforced on every statement as Cassandra 4.1 checks them,
given to the creator of a keyspace, table or role, taken away with what
they name, and survive kill -9.  Also the checks every configuration runs
before a schema change (system keyspaces)."""

import pytest
from cassandra import InvalidRequest, Unauthorized
from cassandra.auth import PlainTextAuthProvider
from cassandra.cluster import Cluster
from cassandra.protocol import SyntaxException

import cassette_harness as H

KS = "{'class': 'SimpleStrategy', 'replication_factor': 1}"


@pytest.fixture
def authz_server(tmp_path):
    if not H.is_cassette():
        pytest.skip("starts a server with a config file")
    cfg = tmp_path / "cassette.yaml"
    cfg.write_text("authenticator: PasswordAuthenticator\nauthorizer: CassandraAuthorizer\n")
    s = H.Server(tmp_path / "srv", extra_args=["--config", str(cfg)])
    s.start()
    yield s
    s.stop()


class Login:
    def __init__(self, s, user, password):
        self.cluster = Cluster([s.host], port=s.port, auth_provider=PlainTextAuthProvider(user, password),
                               connect_timeout=10)
        self.session = self.cluster.connect()

    def close(self):
        self.cluster.shutdown()


@pytest.fixture
def logins(authz_server):
    opened = []

    def login(user, password):
        lg = Login(authz_server, user, password)
        opened.append(lg)
        return lg.session

    yield login
    for lg in opened:
        lg.close()


def refused(sess, q, msg, cls=Unauthorized):
    with pytest.raises(cls) as ei:
        sess.execute(q)
    assert msg in str(ei.value), (q, str(ei.value))


def perms_of(sess, q):
    return [(r.role, r.username, r.resource, r.permission) for r in sess.execute(q)]


def setup_bob(admin):
    admin.execute("CREATE ROLE bob WITH PASSWORD = 'b' AND LOGIN = true")
    admin.execute("CREATE KEYSPACE ka WITH replication = " + KS)
    admin.execute("CREATE TABLE ka.t (k int PRIMARY KEY, v int)")
    admin.execute("INSERT INTO ka.t (k, v) VALUES (1, 1)")


def test_statements_need_permissions(logins):
    admin = logins("cassandra", "cassandra")
    setup_bob(admin)
    bob = logins("bob", "b")
    refused(bob, "SELECT * FROM ka.t", "User bob has no SELECT permission on <table ka.t> or any of its parents")
    refused(bob, "INSERT INTO ka.t (k, v) VALUES (2, 2)",
            "User bob has no MODIFY permission on <table ka.t> or any of its parents")
    refused(bob, "TRUNCATE ka.t", "User bob has no MODIFY permission on <table ka.t> or any of its parents")
    refused(bob, "CREATE KEYSPACE kb WITH replication = " + KS,
            "User bob has no CREATE permission on <all keyspaces> or any of its parents")
    refused(bob, "CREATE TABLE ka.u (k int PRIMARY KEY)",
            "User bob has no CREATE permission on <all tables in ka> or any of its parents")
    refused(bob, "ALTER TABLE ka.t ADD w int", "User bob has no ALTER permission on <table ka.t> or any of its parents")
    refused(bob, "DROP TABLE ka.t", "User bob has no DROP permission on <table ka.t> or any of its parents")
    refused(bob, "CREATE INDEX ON ka.t (v)", "User bob has no ALTER permission on <table ka.t> or any of its parents")
    # what drivers read on connect stays readable; other system tables do not
    assert bob.execute("SELECT key FROM system.local").one().key == "local"
    assert bob.execute("SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name = 'ka'").one()
    refused(bob, "SELECT * FROM system_views.settings",
            "User bob has no SELECT permission on <table system_views.settings> or any of its parents")
    refused(bob, "SELECT * FROM system_auth.roles",
            "User bob has no SELECT permission on <table system_auth.roles> or any of its parents")

    # a permission on a parent covers the table; each permission separately
    admin.execute("GRANT SELECT ON KEYSPACE ka TO bob")
    assert [tuple(r) for r in bob.execute("SELECT k, v FROM ka.t")] == [(1, 1)]
    refused(bob, "UPDATE ka.t SET v = 3 WHERE k = 1", "has no MODIFY permission on <table ka.t>")
    admin.execute("GRANT MODIFY ON ALL TABLES IN KEYSPACE ka TO bob")
    bob.execute("UPDATE ka.t SET v = 3 WHERE k = 1")
    bob.execute("BEGIN BATCH INSERT INTO ka.t (k, v) VALUES (5, 5); DELETE FROM ka.t WHERE k = 5; APPLY BATCH")
    # prepared statements are checked at each EXECUTE
    ps = bob.prepare("SELECT v FROM ka.t WHERE k = ?")
    assert bob.execute(ps, [1]).one().v == 3
    admin.execute("REVOKE SELECT ON KEYSPACE ka FROM bob")
    refused(bob, ps.bind([1]), "User bob has no SELECT permission on <table ka.t> or any of its parents")
    # a conditional update reads too
    refused(bob, "UPDATE ka.t SET v = 4 WHERE k = 1 IF v = 3",
            "User bob has no SELECT permission on <table ka.t> or any of its parents")


def test_permissions_through_roles(logins):
    admin = logins("cassandra", "cassandra")
    setup_bob(admin)
    admin.execute("CREATE ROLE readers")
    admin.execute("GRANT SELECT ON ALL KEYSPACES TO readers")
    bob = logins("bob", "b")
    refused(bob, "SELECT * FROM ka.t", "has no SELECT permission")
    admin.execute("GRANT readers TO bob")
    assert bob.execute("SELECT v FROM ka.t WHERE k = 1").one().v == 1
    assert perms_of(admin, "LIST ALL PERMISSIONS OF bob") == [("readers", "readers", "<all keyspaces>", "SELECT")]
    admin.execute("REVOKE readers FROM bob")
    refused(bob, "SELECT * FROM ka.t", "has no SELECT permission")


def test_grant_revoke_list(logins):
    admin = logins("cassandra", "cassandra")
    setup_bob(admin)
    admin.execute("CREATE ROLE carol")
    admin.execute("GRANT SELECT ON KEYSPACE ka TO bob")
    rs = admin.execute("GRANT SELECT, MODIFY ON KEYSPACE ka TO bob")
    assert rs.response_future.warnings == ["Role 'bob' was already granted SELECT on <keyspace ka>"]
    rs = admin.execute("REVOKE MODIFY, DROP ON KEYSPACE ka FROM bob")
    assert rs.response_future.warnings == ["Role 'bob' was not granted DROP on <keyspace ka>"]
    admin.execute("GRANT ALL PERMISSIONS ON TABLE ka.t TO bob")
    admin.execute("GRANT DESCRIBE ON ALL ROLES TO carol")
    # ALL means the permissions the resource takes; none that fits is a syntax error
    refused(admin, "GRANT EXECUTE ON KEYSPACE ka TO bob",
            "Resource type DataResource does not support any of the requested permissions", SyntaxException)
    refused(admin, "GRANT SELECT ON ALL ROLES TO bob",
            "Resource type RoleResource does not support any of the requested permissions", SyntaxException)
    refused(admin, "GRANT SELECT ON TABLE ka.nope TO bob", "Resource <table ka.nope> doesn't exist", InvalidRequest)
    refused(admin, "GRANT SELECT ON KEYSPACE ka TO nobody", "Role nobody doesn't exist", InvalidRequest)

    table = [("bob", "bob", "<table ka.t>", p) for p in ("ALTER", "DROP", "SELECT", "MODIFY", "AUTHORIZE")]
    assert perms_of(admin, "LIST ALL PERMISSIONS OF bob") == [("bob", "bob", "<keyspace ka>", "SELECT")] + table
    # ON a resource: it and its parents, or with NORECURSIVE only it (the
    # creator, cassandra, holds permissions on ka too)
    assert perms_of(admin, "LIST ALL ON TABLE ka.t OF bob") == [("bob", "bob", "<keyspace ka>", "SELECT")] + table
    assert perms_of(admin, "LIST ALL ON TABLE ka.t OF bob NORECURSIVE") == table
    assert perms_of(admin, "LIST SELECT ON KEYSPACE ka OF bob") == [("bob", "bob", "<keyspace ka>", "SELECT")]
    assert perms_of(admin, "LIST ALL PERMISSIONS OF carol") == [("carol", "carol", "<all roles>", "DESCRIBE")]
    assert admin.execute("LIST ALL PERMISSIONS ON KEYSPACE system").one() is None
    refused(admin, "LIST ALL ON KEYSPACE nope", "<keyspace nope> doesn't exist", InvalidRequest)
    refused(admin, "LIST ALL OF nobody", "<role nobody> doesn't exist", InvalidRequest)

    # system_auth's tables show the same
    rows = {(r.role, r.resource): set(r.permissions) for r in admin.execute("SELECT * FROM system_auth.role_permissions")}
    assert rows[("bob", "data/ka")] == {"SELECT"}
    assert rows[("bob", "data/ka/t")] == {"ALTER", "DROP", "SELECT", "MODIFY", "AUTHORIZE"}
    assert rows[("carol", "roles")] == {"DESCRIBE"}
    idx = {(r.resource, r.role) for r in admin.execute("SELECT * FROM system_auth.resource_role_permissons_index")}
    assert ("data/ka/t", "bob") in idx and ("roles", "carol") in idx

    # who may list: one's own, or with DESCRIBE on all roles
    bob = logins("bob", "b")
    assert len(perms_of(bob, "LIST ALL PERMISSIONS OF bob")) == 6
    refused(bob, "LIST ALL PERMISSIONS", "You are not authorized to view everyone's permissions")
    refused(bob, "LIST ALL PERMISSIONS OF carol", "You are not authorized to view carol's permissions")
    admin.execute("ALTER ROLE carol WITH PASSWORD = 'c' AND LOGIN = true")
    carol = logins("carol", "c")
    assert len(perms_of(carol, "LIST ALL PERMISSIONS")) >= 7

    # granting needs AUTHORIZE and the permission itself
    refused(bob, "GRANT SELECT ON KEYSPACE ka TO carol",
            "User bob has no AUTHORIZE permission on <keyspace ka> or any of its parents")
    bob.execute("GRANT SELECT ON TABLE ka.t TO carol")
    assert perms_of(admin, "LIST SELECT ON TABLE ka.t OF carol NORECURSIVE") == [("carol", "carol", "<table ka.t>", "SELECT")]


def test_creator_gets_permissions_and_drop_takes_them(logins):
    admin = logins("cassandra", "cassandra")
    admin.execute("CREATE ROLE bob WITH PASSWORD = 'b' AND LOGIN = true")
    admin.execute("GRANT CREATE ON ALL KEYSPACES TO bob")
    bob = logins("bob", "b")
    bob.execute("CREATE KEYSPACE kb WITH replication = " + KS)
    bob.execute("CREATE TABLE kb.t (k int PRIMARY KEY, v int)")
    bob.execute("INSERT INTO kb.t (k, v) VALUES (1, 1)")
    assert bob.execute("SELECT v FROM kb.t WHERE k = 1").one().v == 1
    resources = {r.resource for r in bob.execute("LIST ALL PERMISSIONS OF bob")}
    assert resources == {"<all keyspaces>", "<keyspace kb>", "<all functions in kb>", "<table kb.t>"}
    bob.execute("DROP TABLE kb.t")
    resources = {r.resource for r in bob.execute("LIST ALL PERMISSIONS OF bob")}
    assert "<table kb.t>" not in resources
    bob.execute("DROP KEYSPACE kb")
    assert perms_of(bob, "LIST ALL PERMISSIONS OF bob") == [("bob", "bob", "<all keyspaces>", "CREATE")]
    # a table created again does not find old grants
    admin.execute("CREATE KEYSPACE kc WITH replication = " + KS)
    admin.execute("CREATE TABLE kc.t (k int PRIMARY KEY)")
    admin.execute("GRANT SELECT ON TABLE kc.t TO bob")
    admin.execute("DROP TABLE kc.t")
    admin.execute("CREATE TABLE kc.t (k int PRIMARY KEY)")
    refused(bob, "SELECT * FROM kc.t", "User bob has no SELECT permission on <table kc.t> or any of its parents")


def test_role_statements_need_role_permissions(logins):
    admin = logins("cassandra", "cassandra")
    admin.execute("CREATE ROLE bob WITH PASSWORD = 'b' AND LOGIN = true")
    admin.execute("CREATE ROLE other")
    bob = logins("bob", "b")
    denied = "User bob does not have sufficient privileges to perform the requested operation"
    refused(bob, "CREATE ROLE x", denied)
    refused(bob, "ALTER ROLE other WITH LOGIN = true", denied)
    refused(bob, "DROP ROLE other", denied)
    refused(bob, "GRANT other TO bob", denied)
    bob.execute("ALTER ROLE bob WITH PASSWORD = 'b2'")            # one's own password needs nothing
    # LIST ROLES without DESCRIBE: one's own roles
    assert [r.role for r in bob.execute("LIST ROLES")] == ["bob"]
    refused(bob, "LIST ROLES OF other", "You are not authorized to view roles granted to other ")
    admin.execute("GRANT CREATE ON ALL ROLES TO bob")
    bob.execute("CREATE ROLE mine")
    # the creator of a role may alter, drop and grant it
    assert {r.permission for r in bob.execute("LIST ALL ON ROLE mine OF bob NORECURSIVE")} == {"ALTER", "DROP", "AUTHORIZE"}
    bob.execute("ALTER ROLE mine WITH LOGIN = false")
    bob.execute("GRANT mine TO other")
    bob.execute("DROP ROLE mine")
    # dropping a role takes its permissions and those on it
    admin.execute("GRANT SELECT ON ALL KEYSPACES TO other")
    admin.execute("DROP ROLE other")
    assert all(r.role != "other" and r.resource != "roles/other"
               for r in admin.execute("SELECT * FROM system_auth.role_permissions"))


def test_permissions_survive_kill9(authz_server):
    lg = Login(authz_server, "cassandra", "cassandra")
    try:
        admin = lg.session
        setup_bob(admin)
        admin.execute("GRANT SELECT ON TABLE ka.t TO bob")
    finally:
        lg.close()
    authz_server.restart(kill=True)
    lg = Login(authz_server, "bob", "b")
    try:
        assert lg.session.execute("SELECT v FROM ka.t WHERE k = 1").one().v == 1
        refused(lg.session, "INSERT INTO ka.t (k, v) VALUES (2, 2)", "has no MODIFY permission")
    finally:
        lg.close()


def test_schema_changes_on_system_keyspaces(session):
    # Every configuration (ClientState.preventSystemKSSchemaModification):
    # the authorize step refuses them before the statement runs.
    refused(session, "CREATE TABLE system.x (k int PRIMARY KEY)", "system keyspace is not user-modifiable.")
    refused(session, "CREATE TABLE system_schema.x (k int PRIMARY KEY)", "system_schema keyspace is not user-modifiable.")
    refused(session, "ALTER TABLE system.local ADD x int", "system keyspace is not user-modifiable.")
    refused(session, "DROP KEYSPACE system_views", "system_views keyspace is not user-modifiable.")
    refused(session, "CREATE TYPE system.ty (a int)", "system keyspace is not user-modifiable.")
    refused(session, "ALTER TABLE system_auth.roles ADD x int", "Cannot ALTER <table system_auth.roles>")
    refused(session, "DROP TABLE system_traces.sessions", "Cannot DROP <table system_traces.sessions>")
    refused(session, "DROP KEYSPACE system_distributed", "Cannot DROP <keyspace system_distributed>")
    refused(session, "CREATE TABLE system_auth.x (k int PRIMARY KEY)", "Cannot CREATE <all tables in system_auth>")
    # their replication may change
    session.execute("ALTER KEYSPACE system_auth WITH replication = " + KS)
