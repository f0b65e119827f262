/*
 * test_cql_roles.c: the role store (cql/roles.h): the default superuser,
 * logins and their messages, changes kept across a reopen, memberships,
 * and a damaged file refused with its name and line.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "common/vfs.h"
#include "cql/ast.h"
#include "cql/roles.h"

static char dir[64], path[128];

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/cassette-roles-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/roles.cassette", dir);
}

static void teardown(void)
{
    unlink(path);
    rmdir(dir);
}

TestSuite(cql_roles, .init = setup, .fini = teardown);

static cql_roles *open_ok(void)
{
    cs_error e;
    cs_error_init(&e);
    cql_roles *r = NULL;
    cr_assert_eq(cql_roles_open(path, &r, &e), 0, "%s", e.msg);
    return r;
}

static int login(cql_roles *r, const char *u, const char *p, cs_error *e)
{
    cs_error_init(e);
    return cql_roles_login(r, u, strlen(u), p, strlen(p), e);
}

Test(cql_roles, default_superuser_and_logins)
{
    cql_roles *r = open_ok();
    cql_role_info i = cql_roles_get(r, "cassandra");
    cr_assert(i.exists && i.super && i.login && i.has_hash);
    cs_error e;
    cr_assert_eq(login(r, "cassandra", "cassandra", &e), 0);
    cr_assert_eq(login(r, "cassandra", "cassandra", &e), 0);     /* remembered */
    cr_assert_eq(login(r, "cassandra", "wrong", &e), CS_EUSER);
    cr_assert_eq(e.code, CS_ERR_BAD_CREDENTIALS);
    cr_assert_str_eq(e.msg, "Provided username cassandra and/or password are incorrect");
    cr_assert_eq(login(r, "nobody", "x", &e), CS_EUSER);
    cr_assert_str_eq(e.msg, "Provided username nobody and/or password are incorrect");
    cr_assert_eq(login(r, "Cassandra", "cassandra", &e), CS_EUSER);  /* names are case-sensitive */
    cql_roles_free(r);
    cr_assert_lt(vfs_file_size(path), 0, "nothing written until a change");
}

Test(cql_roles, changes_survive_a_reopen)
{
    cql_roles *r = open_ok();
    cs_error e;
    cs_error_init(&e);
    char h[128];
    cr_assert_eq(cql_roles_hashpw("s3cret", 6, h, sizeof h), 0);
    cr_assert(cql_roles_valid_hash(h), "%s", h);
    cr_assert_eq(cql_roles_create(r, "alice", false, true, h, &e), 0);
    cr_assert_eq(cql_roles_create(r, "ops team,%x", false, false, NULL, &e), 0);   /* escaped in the file */
    cr_assert_eq(cql_roles_create(r, "alice", false, true, NULL, &e), CS_EUSER);
    cr_assert_str_eq(e.msg, "alice already exists");
    cs_error_init(&e);
    cr_assert_eq(cql_roles_create(r, "bob", false, false, NULL, &e), 0);
    cr_assert_eq(cql_roles_grant(r, "ops team,%x", "alice", &e), 0);
    cr_assert_eq(cql_roles_alter(r, "ops team,%x", ROLEOPT_SUPERUSER, true, false, NULL, &e), 0);
    cql_roles_free(r);

    r = open_ok();
    cr_assert(cql_roles_get(r, "alice").login);
    cr_assert(!cql_roles_get(r, "alice").super);
    cr_assert(cql_roles_has_super(r, "alice"), "inherited from ops team");
    cr_assert(cql_roles_granted(r, "alice", "ops team,%x"));
    cr_assert_eq(login(r, "alice", "s3cret", &e), 0);
    cr_assert_eq(login(r, "bob", "x", &e), CS_EUSER);              /* no password */
    char **names;
    int n;
    cr_assert_eq(cql_roles_all(r, &names, &n), 0);
    cr_assert_eq(n, 4);
    cr_assert_str_eq(names[0], "alice");
    cr_assert_str_eq(names[1], "bob");
    cr_assert_str_eq(names[2], "cassandra");
    cr_assert_str_eq(names[3], "ops team,%x");
    cql_roles_names_free(names, n);

    /* login = false: the password is right but the role may not log in */
    cr_assert_eq(cql_roles_alter(r, "alice", ROLEOPT_LOGIN, false, false, NULL, &e), 0);
    cr_assert_eq(login(r, "alice", "s3cret", &e), CS_EUSER);
    cr_assert_str_eq(e.msg, "alice is not permitted to log in");

    /* dropping a role takes it from those it was granted to */
    cs_error_init(&e);
    cr_assert_eq(cql_roles_drop(r, "ops team,%x", &e), 0);
    cr_assert(!cql_roles_has_super(r, "alice"));
    cr_assert_eq(cql_roles_member_of(r, "alice", &names, &n), 0);
    cr_assert_eq(n, 0);
    cql_roles_names_free(names, n);
    cql_roles_free(r);
    r = open_ok();
    cr_assert(!cql_roles_get(r, "ops team,%x").exists);
    cr_assert(cql_roles_get(r, "bob").exists);
    cql_roles_free(r);
}

Test(cql_roles, memberships)
{
    cql_roles *r = open_ok();
    cs_error e;
    cs_error_init(&e);
    cr_assert_eq(cql_roles_create(r, "a", false, false, NULL, &e), 0);
    cr_assert_eq(cql_roles_create(r, "b", false, false, NULL, &e), 0);
    cr_assert_eq(cql_roles_create(r, "c", false, false, NULL, &e), 0);
    cr_assert_eq(cql_roles_grant(r, "b", "a", &e), 0);   /* a is a member of b */
    cr_assert_eq(cql_roles_grant(r, "c", "b", &e), 0);   /* b of c */
    char **names;
    int n;
    cr_assert_eq(cql_roles_of(r, "a", true, &names, &n), 0);
    cr_assert_eq(n, 3);
    cql_roles_names_free(names, n);
    cr_assert_eq(cql_roles_of(r, "a", false, &names, &n), 0);
    cr_assert_eq(n, 2);
    cql_roles_names_free(names, n);
    cr_assert(cql_roles_granted(r, "a", "c"));
    cr_assert(!cql_roles_granted(r, "c", "a"));
    char **rs, **ms;
    cr_assert_eq(cql_roles_members(r, &rs, &ms, &n), 0);
    cr_assert_eq(n, 2);
    cr_assert_str_eq(rs[0], "b");
    cr_assert_str_eq(ms[0], "a");
    cr_assert_str_eq(rs[1], "c");
    cr_assert_str_eq(ms[1], "b");
    cql_roles_names_free(rs, n);
    cql_roles_names_free(ms, n);
    cr_assert_eq(cql_roles_revoke(r, "c", "a", &e), CS_EUSER);
    cr_assert_str_eq(e.msg, "a is not a member of c");
    cs_error_init(&e);
    cr_assert_eq(cql_roles_revoke(r, "b", "a", &e), 0);
    cr_assert(!cql_roles_granted(r, "a", "c"));
    cql_roles_free(r);
}

Test(cql_roles, hashes)
{
    cr_assert(cql_roles_valid_hash("$2a$10$wBlxANf4tR1ump1/ZB8WWuVum9HiuiS8K5S0fV8VvFfFQjVBB8YsW"));
    cr_assert(!cql_roles_valid_hash("$2y$10$wBlxANf4tR1ump1/ZB8WWuVum9HiuiS8K5S0fV8VvFfFQjVBB8YsW"));
    cr_assert(!cql_roles_valid_hash("$2a$10$short"));
    cr_assert(!cql_roles_valid_hash("plain text"));
    cr_assert(!cql_roles_valid_hash("$2a$03$wBlxANf4tR1ump1/ZB8WWuVum9HiuiS8K5S0fV8VvFfFQjVBB8YsW"));
}

Test(cql_roles, damaged_file_named_with_its_line)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("cassette-roles 1\ncassandra 1 1 - -\nbob 2 0 - -\n", f);
    fclose(f);
    cs_error e;
    cs_error_init(&e);
    cql_roles *r = NULL;
    cr_assert_eq(cql_roles_open(path, &r, &e), CS_EUSER);
    cr_assert_null(r);
    cr_assert(strstr(e.msg, path) && strstr(e.msg, "line 3 is malformed"), "%s", e.msg);

    f = fopen(path, "w");
    fputs("something else\n", f);
    fclose(f);
    cs_error_init(&e);
    cr_assert_eq(cql_roles_open(path, &r, &e), CS_EUSER);
    cr_assert(strstr(e.msg, "not a cassette role file"), "%s", e.msg);

    f = fopen(path, "w");
    fputs("cassette-roles 1\ncassandra 1 1 - -", f);   /* cut short */
    fclose(f);
    cs_error_init(&e);
    cr_assert_eq(cql_roles_open(path, &r, &e), CS_EUSER);
    cr_assert(strstr(e.msg, "line 2 is cut short"), "%s", e.msg);
}

/* CassandraAuthorizer's permissions: granted, revoked, read back after a
 * reopen (the file's permission section), taken away with a dropped role
 * and by revokeAllOn, and a damaged permission line refused. */
Test(cql_roles, permissions)
{
    cql_roles *r = open_ok();
    cs_error e;
    cs_error_init(&e);
    unsigned changed;
    cr_assert_eq(cql_roles_create(r, "bob", false, true, NULL, &e), 0);
    cr_assert_eq(cql_roles_create(r, "readers", false, false, NULL, &e), 0);
    cr_assert_eq(cql_roles_grant(r, "readers", "bob", &e), 0);
    cr_assert_eq(cql_perms_modify(r, "bob", "data/ks", PERM_SELECT | PERM_MODIFY, true, &changed, &e), 0);
    cr_assert_eq(changed, PERM_SELECT | PERM_MODIFY);
    cr_assert_eq(cql_perms_modify(r, "bob", "data/ks", PERM_SELECT | PERM_DROP, true, &changed, &e), 0);
    cr_assert_eq(changed, PERM_DROP);                                   /* SELECT was there */
    cr_assert_eq(cql_perms_modify(r, "bob", "data/ks", PERM_ALTER | PERM_DROP, false, &changed, &e), 0);
    cr_assert_eq(changed, PERM_DROP);                                   /* ALTER was not */
    cr_assert_eq(cql_perms_modify(r, "readers", "data", PERM_SELECT, true, &changed, &e), 0);
    cr_assert_eq(cql_perms_modify(r, "readers", "data/ks/t", PERM_ALTER, true, &changed, &e), 0);
    cr_assert_eq(cql_perms_modify(r, "bob", "roles/readers", PERM_AUTHORIZE, true, &changed, &e), 0);
    /* authorize: the user's own and its roles', on exactly the resource */
    cr_assert_eq(cql_perms_authorize(r, "bob", "data/ks"), PERM_SELECT | PERM_MODIFY);
    cr_assert_eq(cql_perms_authorize(r, "bob", "data"), PERM_SELECT);
    cr_assert_eq(cql_perms_authorize(r, "bob", "data/ks/t"), PERM_ALTER);
    cr_assert_eq(cql_perms_authorize(r, "readers", "data/ks"), 0);
    cql_roles_free(r);

    r = open_ok();
    cql_perm_row *rows;
    int n;
    cr_assert_eq(cql_perms_list(r, &rows, &n), 0);
    cr_assert_eq(n, 4);
    cr_assert_str_eq(rows[0].role, "bob");
    cr_assert_str_eq(rows[0].resource, "data/ks");
    cr_assert_eq(rows[0].perms, PERM_SELECT | PERM_MODIFY);
    cr_assert_str_eq(rows[1].resource, "roles/readers");
    cr_assert_str_eq(rows[2].role, "readers");
    cr_assert_str_eq(rows[2].resource, "data");
    cr_assert_str_eq(rows[3].resource, "data/ks/t");
    cql_perms_rows_free(rows, n);

    /* revokeAllOn "data/ks" and below; a dropped role's own and those on it */
    cr_assert_eq(cql_perms_revoke_on(r, "data/ks", true, &e), 0);
    cr_assert_eq(cql_perms_authorize(r, "bob", "data/ks"), 0);
    cr_assert_eq(cql_perms_authorize(r, "readers", "data/ks/t"), 0);
    cr_assert_eq(cql_perms_authorize(r, "readers", "data"), PERM_SELECT);
    cr_assert_eq(cql_roles_drop(r, "readers", &e), 0);
    cr_assert_eq(cql_perms_list(r, &rows, &n), 0);
    cr_assert_eq(n, 0, "%d entries left", n);
    cql_perms_rows_free(rows, n);
    cql_roles_free(r);

    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("cassette-roles 2\ncassandra 1 1 - -\n%permissions\ncassandra data SELECT,READ\n", f);
    fclose(f);
    cs_error_init(&e);
    cr_assert_eq(cql_roles_open(path, &r, &e), CS_EUSER);
    cr_assert(strstr(e.msg, "line 4 is malformed"), "%s", e.msg);
    f = fopen(path, "w");
    fputs("cassette-roles 2\ncassandra 1 1 - -\n%permissions\ncassandra data SELECT\ncassandra data MODIFY\n", f);
    fclose(f);
    cs_error_init(&e);
    cr_assert_eq(cql_roles_open(path, &r, &e), CS_EUSER);
    cr_assert(strstr(e.msg, "line 5 is malformed"), "%s", e.msg);
    /* a store written before permissions (version 1) still opens */
    f = fopen(path, "w");
    fputs("cassette-roles 1\ncassandra 1 1 - -\n", f);
    fclose(f);
    r = open_ok();
    cr_assert(cql_roles_get(r, "cassandra").exists);
    cql_roles_free(r);
}
