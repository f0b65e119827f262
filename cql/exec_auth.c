/*
 * exec_auth.c: role and permission statements (STMT_AUTH), as Cassandra
 * 4.1 runs them with its default role manager (CassandraRoleManager), the
 * configured authenticator (AllowAllAuthenticator: every session anonymous;
 * PasswordAuthenticator: the role logged in) and authorizer
 * (AllowAllAuthorizer, or CassandraAuthorizer with the permissions kept in
 * the role store, cql/roles.h).  Owner: catalog.  Called by cql_exec_ddl.
 *
 * Each statement runs Cassandra's three steps in its order: authorize
 * (superuser rules), validate (options, then "logged in and not anonymous",
 * then existence), execute.  Roles live in the role store (cql/roles.h).
 * AllowAllAuthorizer keeps no permissions: GRANT and REVOKE of permissions
 * end, after their checks, in the ServerError Cassandra gives
 * (UnsupportedOperationException), LIST PERMISSIONS in its InvalidRequest.
 * Under CassandraAuthorizer they change and list the role store's
 * permissions, and every role statement first checks the permission
 * Cassandra's checkPermission asks for (authz.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cql/cql_int.h"
#include "cql/roles.h"
#include "cql/schema.h"
#include "common/alloc.h"
#include "common/buf.h"

#define ROLE_MANAGER "org.apache.cassandra.auth.CassandraRoleManager"

typedef struct auth_run {
    cql_ctx *ctx;
    cql_session *s;
    const ast_auth *a;
    cql_roles *roles;
    const char *user;                  /* NULL: anonymous */
    bool password_auth;
    cs_error *e;
} auth_run;

static bool user_is_super(const auth_run *x) { return x->user && cql_roles_has_super(x->roles, x->user); }

static bool role_exists(const auth_run *x, const char *name) { return cql_roles_get(x->roles, name).exists; }

/* ClientState.ensureNotAnonymous. */
static int ensure_not_anonymous(const auth_run *x)
{
    if (!x->user)
        return cs_error_set(x->e, CS_ERR_UNAUTHORIZED, "You have to be logged in and not anonymous to perform this request");
    return 0;
}

/* AuthenticationStatement.checkPermission: ensurePermission on a role
 * resource, its refusal reworded. */
static int check_permission(const auth_run *x, unsigned perm, const char *role)
{
    ast_resource res = { .kind = role ? RES_ROLE : RES_ALL_ROLES, .name = (char *)role };
    cs_error ignore;
    cs_error_init(&ignore);
    if (!cql__authz_ensure(x->ctx, x->s, perm, &res, &ignore))
        return 0;
    return cs_error_set(x->e, CS_ERR_UNAUTHORIZED,
                        "User %s does not have sufficient privileges to perform the requested operation",
                        x->user ? x->user : "anonymous");
}

/* IRoleManager.Option, in its declaration order (the order options are
 * checked in here). */
static const struct { unsigned bit; const char *name; } opt_names[] = {
    { ROLEOPT_SUPERUSER, "SUPERUSER" }, { ROLEOPT_PASSWORD, "PASSWORD" }, { ROLEOPT_LOGIN, "LOGIN" },
    { ROLEOPT_OPTIONS, "OPTIONS" }, { ROLEOPT_HASHED, "HASHED_PASSWORD" },
};

/* RoleOptions.validate. */
static int validate_options(const auth_run *x)
{
    unsigned supported = ROLEOPT_SUPERUSER | ROLEOPT_LOGIN | (x->password_auth ? ROLEOPT_PASSWORD | ROLEOPT_HASHED : 0);
    for (size_t i = 0; i < CS_ARRAY_LEN(opt_names); i++) {
        if (!(x->a->opts & opt_names[i].bit))
            continue;
        if (!(supported & opt_names[i].bit))
            return cs_error_set(x->e, CS_ERR_INVALID, "%s doesn't support %s", ROLE_MANAGER, opt_names[i].name);
        if (opt_names[i].bit == ROLEOPT_HASHED && !cql_roles_valid_hash(x->a->password))
            return cs_error_set(x->e, CS_ERR_INVALID, "Invalid hashed password value. Please use jBcrypt.");
    }
    return 0;
}

/* The salted hash the options give (a new bcrypt of PASSWORD, or HASHED
 * PASSWORD as is) into out; "" if neither. */
static int options_hash(const auth_run *x, char *out, size_t cap)
{
    out[0] = 0;
    if (x->a->opts & ROLEOPT_HASHED) {
        snprintf(out, cap, "%s", x->a->password);
    } else if (x->a->opts & ROLEOPT_PASSWORD) {
        if (cql_roles_hashpw(x->a->password, strlen(x->a->password), out, cap))
            return cs_error_set(x->e, CS_ERR_SERVER, "cannot hash the password (bcrypt failed)");
    }
    return 0;
}

/* ---------------------------------------------------------------- CREATE / ALTER / DROP */

static int create_role(auth_run *x, cql_result *r)
{
    const ast_auth *a = x->a;
    int rc = check_permission(x, PERM_CREATE, NULL);
    if (rc)
        return rc;
    if ((a->opts & ROLEOPT_SUPERUSER) && a->superuser && !user_is_super(x))
        return cs_error_set(x->e, CS_ERR_UNAUTHORIZED, "Only superusers can create a role with superuser status");
    rc = validate_options(x);
    if (rc)
        return rc;
    if (!a->role[0])
        return cs_error_set(x->e, CS_ERR_INVALID, "Role name can't be an empty string");
    if ((rc = ensure_not_anonymous(x)))
        return rc;
    if (role_exists(x, a->role)) {
        if (!a->if_exists)
            return cs_error_set(x->e, CS_ERR_INVALID, "%s already exists", a->role);
        cql_result_void(r);
        return 0;
    }
    char hash[128];
    if ((rc = options_hash(x, hash, sizeof hash)))
        return rc;
    if ((rc = cql_roles_create(x->roles, a->role, a->superuser, a->login, hash[0] ? hash : NULL, x->e)))
        return rc;
    if (cql__authz_enabled(x->ctx) && x->user) {
        /* CreateRoleStatement.grantPermissionsToCreator */
        char name[600];
        unsigned changed;
        cs_error ignore;
        cs_error_init(&ignore);
        snprintf(name, sizeof name, "roles/%s", a->role);
        (void)cql_perms_modify(x->roles, x->user, name, cql_resource_permissions(RES_ROLE), true, &changed, &ignore);
    }
    cql_result_void(r);
    return 0;
}

static int alter_role(auth_run *x, cql_result *r)
{
    const ast_auth *a = x->a;
    /* authorize */
    if ((a->opts & ROLEOPT_SUPERUSER) && x->user && cql_roles_granted(x->roles, x->user, a->role))
        return cs_error_set(x->e, CS_ERR_UNAUTHORIZED,
                            "You aren't allowed to alter your own superuser status or that of a role granted to you");
    bool super = user_is_super(x);
    if ((a->opts & ROLEOPT_SUPERUSER) && !super)
        return cs_error_set(x->e, CS_ERR_UNAUTHORIZED, "Only superusers are allowed to alter superuser status");
    if (!super && x->user && !strcmp(x->user, a->role)) {
        unsigned alterable = x->password_auth ? ROLEOPT_PASSWORD | ROLEOPT_HASHED : 0;
        for (size_t i = 0; i < CS_ARRAY_LEN(opt_names); i++)
            if ((a->opts & opt_names[i].bit) && !(alterable & opt_names[i].bit))
                return cs_error_set(x->e, CS_ERR_UNAUTHORIZED, "You aren't allowed to alter %s", opt_names[i].name);
    }
    int rc = 0;
    if (!super && !(x->user && !strcmp(x->user, a->role)) && (rc = check_permission(x, PERM_ALTER, a->role)))
        return rc;
    /* validate */
    rc = validate_options(x);
    if (rc)
        return rc;
    if (!a->opts && !a->has_dcs)
        return cs_error_set(x->e, CS_ERR_INVALID, "ALTER [ROLE|USER] can't be empty");
    if ((rc = ensure_not_anonymous(x)))
        return rc;
    if (!role_exists(x, a->role)) {
        if (!a->if_exists)
            return cs_error_set(x->e, CS_ERR_INVALID, "Role %s doesn't exist", a->role);
        cql_result_void(r);
        return 0;
    }
    if (a->opts & (ROLEOPT_SUPERUSER | ROLEOPT_LOGIN | ROLEOPT_PASSWORD | ROLEOPT_HASHED)) {
        char hash[128];
        if ((rc = options_hash(x, hash, sizeof hash)))
            return rc;
        if ((rc = cql_roles_alter(x->roles, a->role, a->opts, a->superuser, a->login, hash, x->e)))
            return rc;
    }
    cql_result_void(r);
    return 0;
}

static int drop_role(auth_run *x, cql_result *r)
{
    const ast_auth *a = x->a;
    int rc = check_permission(x, PERM_DROP, a->role);
    if (rc)
        return rc;
    bool exists = role_exists(x, a->role);
    if (exists && cql_roles_has_super(x->roles, a->role) && !user_is_super(x))
        return cs_error_set(x->e, CS_ERR_UNAUTHORIZED, "Only superusers can drop a role with superuser status");
    rc = ensure_not_anonymous(x);
    if (rc)
        return rc;
    if (!exists && !a->if_exists)
        return cs_error_set(x->e, CS_ERR_INVALID, "%s doesn't exist", a->role);
    if (!strcmp(x->user, a->role))
        return cs_error_set(x->e, CS_ERR_INVALID, "Cannot DROP primary role for current login");
    if (exists && (rc = cql_roles_drop(x->roles, a->role, x->e)))
        return rc;
    cql_result_void(r);
    return 0;
}

/* ---------------------------------------------------------------- GRANT / REVOKE role */

static int grant_revoke_role(auth_run *x, cql_result *r)
{
    const ast_auth *a = x->a;
    int rc = check_permission(x, PERM_AUTHORIZE, a->role);
    if (rc || (rc = ensure_not_anonymous(x)))
        return rc;
    if (!role_exists(x, a->role))
        return cs_error_set(x->e, CS_ERR_INVALID, "%s doesn't exist", a->role);
    if (!role_exists(x, a->grantee))
        return cs_error_set(x->e, CS_ERR_INVALID, "%s doesn't exist", a->grantee);
    if (a->kind == AUTH_GRANT_ROLE) {
        /* CassandraRoleManager.grantRole: no cycles, no repeats */
        if (cql_roles_granted(x->roles, a->grantee, a->role))
            return cs_error_set(x->e, CS_ERR_INVALID, "%s is a member of %s", a->grantee, a->role);
        if (cql_roles_granted(x->roles, a->role, a->grantee))
            return cs_error_set(x->e, CS_ERR_INVALID, "%s is a member of %s", a->role, a->grantee);
        rc = cql_roles_grant(x->roles, a->role, a->grantee, x->e);
    } else if (strcmp(a->role, a->grantee) != 0) {
        /* a role counts among its own roles (getRoles), so revoking a role
         * from itself passes the check and changes nothing */
        rc = cql_roles_revoke(x->roles, a->role, a->grantee, x->e);
    }
    if (!rc)
        cql_result_void(r);
    return rc;
}

/* ---------------------------------------------------------------- LIST ROLES / USERS */

static int list_roles(auth_run *x, cql_result *r)
{
    const ast_auth *a = x->a;
    int rc = ensure_not_anonymous(x);
    if (rc)
        return rc;
    if (a->role && !role_exists(x, a->role))
        return cs_error_set(x->e, CS_ERR_INVALID, "<role %s> doesn't exist", a->role);
    /* DESCRIBE on <all roles> (AllowAllAuthorizer: everyone; a superuser)
     * shows all roles or those of the role named; without it, one's own
     * roles, or those of a role one has */
    ast_resource root = { .kind = RES_ALL_ROLES };
    bool describe = !cql__authz_enabled(x->ctx) || (cql__authz_perms_on(x->ctx, x->s, &root) & PERM_DESCRIBE);
    if (!describe && a->role && !cql_roles_granted(x->roles, x->user, a->role))
        return cs_error_set(x->e, CS_ERR_UNAUTHORIZED, "You are not authorized to view roles granted to %s ", a->role);
    char **names;
    int n;
    const char *of = a->role ? a->role : describe ? NULL : x->user;
    rc = of ? cql_roles_of(x->roles, of, a->recursive, &names, &n) : cql_roles_all(x->roles, &names, &n);
    if (rc)
        return cs_error_set(x->e, CS_ERR_SERVER, "out of memory");
    if (n == 0) {
        cql_result_void(r);
        return 0;
    }
    cs_error pe;
    cs_error_init(&pe);
    ctype *text = ctype_parse("text", NULL, NULL, NULL, &pe);
    ctype *boolean = ctype_parse("boolean", NULL, NULL, NULL, &pe);
    ctype *map = ctype_parse("map<text, text>", NULL, NULL, NULL, &pe);
    if (!text || !boolean || !map) {
        ctype_unref(text);
        ctype_unref(boolean);
        ctype_unref(map);
        cql_roles_names_free(names, n);
        return cs_error_set(x->e, CS_ERR_SERVER, "out of memory");
    }
    bool users = a->kind == AUTH_LIST_USERS;
    cql_rows w;
    cql_rows_begin(&w, r, x->s->protocol_version, "system_auth", users ? "users" : "roles", users ? 3 : 5, false);
    cql_rows_col(&w, users ? "name" : "role", text);
    cql_rows_col(&w, "super", boolean);
    if (!users) {
        cql_rows_col(&w, "login", boolean);
        cql_rows_col(&w, "options", map);
    }
    cql_rows_col(&w, "datacenters", text);
    static const uint8_t empty_map[4] = { 0, 0, 0, 0 };
    for (int i = 0; i < n; i++) {
        cql_role_info info = cql_roles_get(x->roles, names[i]);
        if (users && !info.login)
            continue;
        /* LIST USERS shows inherited superuser status (Roles.hasSuperuserStatus) */
        uint8_t sup = users ? cql_roles_has_super(x->roles, names[i]) : info.super;
        uint8_t login = info.login;
        cql_rows_value(&w, (const uint8_t *)names[i], (int32_t)strlen(names[i]));
        cql_rows_value(&w, &sup, 1);
        if (!users) {
            cql_rows_value(&w, &login, 1);
            cql_rows_value(&w, empty_map, 4);
        }
        cql_rows_value(&w, (const uint8_t *)"ALL", 3);   /* AllowAllNetworkAuthorizer */
    }
    cql_rows_end(&w, NULL, -1);
    ctype_unref(text);
    ctype_unref(boolean);
    ctype_unref(map);
    cql_roles_names_free(names, n);
    return 0;
}

/* ---------------------------------------------------------------- permissions */

/* IResource.exists (functions: cassette has no user functions). */
static bool resource_exists(const auth_run *x, const ast_resource *res, const char *ks)
{
    sch_catalog *c = x->ctx->cat;
    switch (res->kind) {
    case RES_KEYSPACE: case RES_ALL_TABLES: case RES_FUNCTIONS_IN_KS: return sch_keyspace_find(c, res->ks) != NULL;
    case RES_TABLE: return sch_table_find(c, ks, res->name) != NULL;
    case RES_ROLE: return role_exists(x, res->name);
    case RES_FUNCTION: return false;
    default: return true;
    }
}

/* maybeCorrectResource: a table without a keyspace takes the session's.
 * Sets *ks; an error when there is none. */
static int resource_keyspace(const auth_run *x, const ast_resource *res, const char **ks)
{
    *ks = res->ks;
    if (res->kind != RES_TABLE || res->ks)
        return 0;
    if (!x->s->keyspace[0])
        return cs_error_set(x->e, CS_ERR_INVALID,
                            "No keyspace has been specified. USE a keyspace, or explicitly specify keyspace.tablename");
    *ks = x->s->keyspace;
    return 0;
}

/* The statement's resource with the session's keyspace filled in
 * (maybeCorrectResource). */
static ast_resource corrected(const ast_resource *res, const char *ks)
{
    ast_resource c = *res;
    if (c.kind == RES_TABLE)
        c.ks = (char *)ks;
    return c;
}

static void perm_list(unsigned perms, char *out, size_t cap)
{
    size_t off = 0;
    out[0] = 0;
    for (unsigned bit = 1; bit <= PERM_EXECUTE; bit <<= 1)
        if ((perms & bit) && off < cap)
            off += (size_t)snprintf(out + off, cap - off, "%s%s", off ? ", " : "", cql_perm_name(bit));
}

static int grant_revoke_perms(auth_run *x, cql_result *r)
{
    const ast_auth *a = x->a;
    bool grant = a->kind == AUTH_GRANT_PERMS;
    const char *ks;
    int rc = resource_keyspace(x, &a->res, &ks);
    if (rc)
        return rc;
    ast_resource res = corrected(&a->res, ks);
    /* authorize: AUTHORIZE on the resource, and each permission given */
    if ((rc = cql__authz_ensure(x->ctx, x->s, PERM_AUTHORIZE, &res, x->e)))
        return rc;
    for (unsigned bit = 1; bit <= PERM_EXECUTE; bit <<= 1)
        if ((a->perms & bit) && (rc = cql__authz_ensure(x->ctx, x->s, bit, &res, x->e)))
            return rc;
    /* validate */
    if ((rc = ensure_not_anonymous(x)))
        return rc;
    if (!role_exists(x, a->grantee))
        return cs_error_set(x->e, CS_ERR_INVALID, "Role %s doesn't exist", a->grantee);
    if (res.kind == RES_FUNCTION && res.ks && !strcmp(res.ks, "system"))
        return cs_error_set(x->e, CS_ERR_INVALID, "Altering permissions on builtin functions is not supported");
    char text[700];
    cql__res_text(&res, text, sizeof text);
    if (!resource_exists(x, &res, ks))
        return cs_error_set(x->e, CS_ERR_INVALID, "Resource %s doesn't exist", text);
    if (!cql__authz_enabled(x->ctx))
        return cs_error_set(x->e, CS_ERR_SERVER,
                            "java.lang.UnsupportedOperationException: %s operation is not supported by AllowAllAuthorizer",
                            grant ? "GRANT" : "REVOKE");
    /* execute (CassandraAuthorizer.grant / revoke) */
    char name[700];
    cql__res_name(&res, name, sizeof name);
    unsigned changed;
    if ((rc = cql_perms_modify(x->roles, a->grantee, name, a->perms, grant, &changed, x->e)))
        return rc;
    cql_result_void(r);
    if (changed != a->perms && a->perms != PERM_ALL) {
        char missing[200];
        perm_list(a->perms & ~changed, missing, sizeof missing);
        cql_result_warn(r, grant ? "Role '%s' was already granted %s on %s" : "Role '%s' was not granted %s on %s",
                        a->grantee, missing, text);
    }
    return 0;
}

/* A LIST PERMISSIONS row (PermissionDetails). */
typedef struct perm_detail { const char *role, *resource; unsigned bit; } perm_detail;

static int detail_cmp(const void *pa, const void *pb)
{
    const perm_detail *a = pa, *b = pb;
    int c = strcmp(a->role, b->role);
    if (!c) c = strcmp(a->resource, b->resource);
    return c ? c : (a->bit > b->bit) - (a->bit < b->bit);
}

static int list_perms(auth_run *x, cql_result *r)
{
    const ast_auth *a = x->a;
    int rc = ensure_not_anonymous(x);
    if (rc)
        return rc;
    const char *ks = NULL;
    ast_resource res = { .kind = RES_NONE };
    char text[700];
    if (a->res.kind != RES_NONE) {
        if ((rc = resource_keyspace(x, &a->res, &ks)))
            return rc;
        res = corrected(&a->res, ks);
        cql__res_text(&res, text, sizeof text);
        if (!resource_exists(x, &res, ks))
            return cs_error_set(x->e, CS_ERR_INVALID, "%s doesn't exist", text);
    }
    if (a->role && !role_exists(x, a->role))
        return cs_error_set(x->e, CS_ERR_INVALID, "<role %s> doesn't exist", a->role);
    if (!cql__authz_enabled(x->ctx))
        return cs_error_set(x->e, CS_ERR_INVALID, "LIST PERMISSIONS operation is not supported by AllowAllAuthorizer");
    /* CassandraAuthorizer.list: who may look */
    ast_resource roles_root = { .kind = RES_ALL_ROLES }, grantee = { .kind = RES_ROLE, .name = a->role };
    if (!cql__authz_is_super(x->ctx, x->s) && !(a->role && cql_roles_granted(x->roles, x->user, a->role)) &&
        !(cql__authz_perms_on(x->ctx, x->s, &roles_root) & PERM_DESCRIBE) &&
        (!a->role || !(cql__authz_perms_on(x->ctx, x->s, &grantee) & PERM_DESCRIBE)))
        return cs_error_set(x->e, CS_ERR_UNAUTHORIZED, "You are not authorized to view %s's permissions",
                            a->role ? a->role : "everyone");
    /* the resources asked for (the chain unless NORECURSIVE), the roles
     * asked for (the grantee's, recursively), the permissions asked for */
    char names[4][700];
    int n_res = 0;
    if (res.kind != RES_NONE) {
        ast_resource chain[4];
        int n = a->recursive ? cql__res_chain(&res, chain) : 1;
        if (!a->recursive)
            chain[0] = res;
        for (int i = 0; i < n; i++)
            cql__res_name(&chain[i], names[n_res++], sizeof names[0]);
    }
    char **roles = NULL;
    int n_roles = 0;
    if (a->role && cql_roles_of(x->roles, a->role, true, &roles, &n_roles))
        return cs_error_set(x->e, CS_ERR_SERVER, "out of memory");
    cql_perm_row *rows;
    int n_rows;
    if (cql_perms_list(x->roles, &rows, &n_rows)) {
        cql_roles_names_free(roles, n_roles);
        return cs_error_set(x->e, CS_ERR_SERVER, "out of memory");
    }
    perm_detail *d = cs_calloc((size_t)n_rows * 8 + 1, sizeof *d);
    int nd = 0;
    for (int i = 0; d && i < n_rows; i++) {
        bool res_ok = n_res == 0, role_ok = !a->role;
        for (int k = 0; k < n_res && !res_ok; k++)
            res_ok = !strcmp(rows[i].resource, names[k]);
        for (int k = 0; k < n_roles && !role_ok; k++)
            role_ok = !strcmp(rows[i].role, roles[k]);
        if (!res_ok || !role_ok)
            continue;
        for (unsigned bit = 1; bit <= PERM_EXECUTE; bit <<= 1)
            if (rows[i].perms & a->perms & bit)
                d[nd++] = (perm_detail){ rows[i].role, rows[i].resource, bit };
    }
    rc = d ? 0 : cs_error_set(x->e, CS_ERR_SERVER, "out of memory");
    if (!rc && nd == 0)
        cql_result_void(r);
    if (!rc && nd > 0) {
        qsort(d, (size_t)nd, sizeof *d, detail_cmp);
        cs_error pe;
        cs_error_init(&pe);
        ctype *textt = ctype_parse("text", NULL, NULL, NULL, &pe);
        if (!textt) {
            rc = cs_error_set(x->e, CS_ERR_SERVER, "out of memory");
        } else {
            cql_rows w;
            cql_rows_begin(&w, r, x->s->protocol_version, "system_auth", "permissions", 4, false);
            cql_rows_col(&w, "role", textt);
            cql_rows_col(&w, "username", textt);
            cql_rows_col(&w, "resource", textt);
            cql_rows_col(&w, "permission", textt);
            for (int i = 0; i < nd; i++) {
                ast_resource rr;
                char buf[700], shown[700];
                if (cql__res_from_name(d[i].resource, &rr, buf, sizeof buf))
                    cql__res_text(&rr, shown, sizeof shown);
                else
                    snprintf(shown, sizeof shown, "%s", d[i].resource);
                const char *pn = cql_perm_name(d[i].bit);
                cql_rows_value(&w, (const uint8_t *)d[i].role, (int32_t)strlen(d[i].role));
                cql_rows_value(&w, (const uint8_t *)d[i].role, (int32_t)strlen(d[i].role));
                cql_rows_value(&w, (const uint8_t *)shown, (int32_t)strlen(shown));
                cql_rows_value(&w, (const uint8_t *)pn, (int32_t)strlen(pn));
            }
            cql_rows_end(&w, NULL, -1);
            ctype_unref(textt);
        }
    }
    cs_free(d);
    cql_perms_rows_free(rows, n_rows);
    cql_roles_names_free(roles, n_roles);
    return rc;
}

/* ---------------------------------------------------------------- entry */

int cql__exec_auth(cql_ctx *ctx, cql_session *s, const cql_stmt *st, cql_result *r, cs_error *e)
{
    auth_run x = {
        .ctx = ctx, .s = s, .a = &st->u.auth, .roles = ctx->roles,
        .user = ctx->cfg.password_authenticator && s->user[0] ? s->user : NULL,
        .password_auth = ctx->cfg.password_authenticator, .e = e,
    };
    switch (x.a->kind) {
    case AUTH_CREATE_ROLE: return create_role(&x, r);
    case AUTH_ALTER_ROLE: return alter_role(&x, r);
    case AUTH_DROP_ROLE: return drop_role(&x, r);
    case AUTH_GRANT_ROLE: case AUTH_REVOKE_ROLE: return grant_revoke_role(&x, r);
    case AUTH_LIST_ROLES: case AUTH_LIST_USERS: return list_roles(&x, r);
    case AUTH_GRANT_PERMS: case AUTH_REVOKE_PERMS: return grant_revoke_perms(&x, r);
    case AUTH_LIST_PERMS: return list_perms(&x, r);
    }
    return cs_error_set(e, CS_ERR_SERVER, "unknown role statement");
}
