/*
 * parser_auth.c: the auth statements (owner: parser): CREATE/ALTER/DROP
 * ROLE and USER, GRANT/REVOKE of permissions and roles, LIST ROLES/USERS/
 * PERMISSIONS.  They are checked against Cassandra 4.1's Parser.g grammar
 * (createRoleStatement, grantPermissionsStatement, resource, ...) and
 * become STMT_AUTH with an ast_auth (kind, names, role options, permissions,
 * resource); cql/exec_auth.c executes them.
 */
#include <string.h>
#include "cql/lexer_int.h"

/* roleName: IDENT (folded) | STRING_LITERAL | QUOTED_NAME | unreserved keyword. */
static char *role_name(cql__parser *p)
{
    if (cql__is(p, TK_QMARK))
        cql__fail_msg(p, "Bind variables cannot be used for role names");
    if (cql__is(p, TK_STRING)) {
        char *s = cql__unquote(p, cql__peek(p, 1), NULL);
        cql__next(p);
        return s;
    }
    return cql__ident(p);
}

/* username (CREATE/ALTER/DROP USER): IDENT | STRING_LITERAL, its case kept
 * (RoleName.setName(text, true)). */
static char *user_name(cql__parser *p)
{
    if (cql__is(p, TK_QUOTED_NAME))
        cql__fail_msg(p, "Quoted strings are are not supported for user names and USER is deprecated, please use ROLE");
    if (!cql__is(p, TK_IDENT) && !cql__is(p, TK_STRING))
        cql__fail_noviable(p, 1, 1);
    cql__tok *t = cql__peek(p, 1);
    char *s = t->type == TK_STRING ? cql__unquote(p, t, NULL) : cql__tok_text(p, t);
    cql__next(p);
    return s;
}

static char *expect_string(cql__parser *p)
{
    if (!cql__is(p, TK_STRING))
        cql__fail_mismatch(p, "STRING_LITERAL");
    char *s = cql__unquote(p, cql__peek(p, 1), NULL);
    cql__next(p);
    return s;
}

static bool expect_boolean(cql__parser *p)
{
    if (!cql__is(p, TK_BOOLEAN))
        cql__fail_mismatch(p, "BOOLEAN");
    bool v = cql__peek(p, 1)->len == 4;    /* "true" in any case; "false" is 5 */
    cql__next(p);
    return v;
}

/* RoleOptions.setOption: each option once. */
static void set_opt(cql__parser *p, ast_auth *a, unsigned opt, const char *name)
{
    if (a->opts & opt)
        cql__fail_msg(p, "Multiple definition for property '%s'", name);
    a->opts |= opt;
}

/* roleOption (AND roleOption)* */
static void role_options(cql__parser *p, ast_auth *a)
{
    do {
        if (cql__accept_kw(p, KW_PASSWORD)) {
            cql__expect(p, TK_EQ);
            a->password = expect_string(p);
            set_opt(p, a, ROLEOPT_PASSWORD, "PASSWORD");
        } else if (cql__accept_kw(p, KW_HASHED)) {
            cql__expect_kw(p, KW_PASSWORD);
            cql__expect(p, TK_EQ);
            a->password = expect_string(p);
            set_opt(p, a, ROLEOPT_HASHED, "HASHED_PASSWORD");
        } else if (cql__is_kw(p, KW_OPTIONS)) {
            ast_props tmp = { NULL, 0 };
            cql__prop(p, &tmp);
            if (tmp.items[0].kind != PROP_MAP)
                cql__fail_msg(p, "Invalid value for property OPTIONS");
            set_opt(p, a, ROLEOPT_OPTIONS, "OPTIONS");
        } else if (cql__accept_kw(p, KW_SUPERUSER)) {
            cql__expect(p, TK_EQ);
            a->superuser = expect_boolean(p);
            set_opt(p, a, ROLEOPT_SUPERUSER, "SUPERUSER");
        } else if (cql__accept_kw(p, KW_LOGIN)) {
            cql__expect(p, TK_EQ);
            a->login = expect_boolean(p);
            set_opt(p, a, ROLEOPT_LOGIN, "LOGIN");
        } else if (cql__accept_kw(p, KW_ACCESS)) {
            cql__expect_kw(p, KW_TO);
            if (cql__accept_kw(p, KW_ALL)) {
                cql__expect_kw(p, KW_DATACENTERS);
            } else {
                cql__expect_kw(p, KW_DATACENTERS);
                cql__expect(p, TK_LBRACE);
                do
                    (void)expect_string(p);
                while (cql__accept(p, TK_COMMA));
                cql__expect(p, TK_RBRACE);
            }
            a->has_dcs = true;
        } else {
            cql__fail_noviable(p, 1, 1);
        }
    } while (cql__accept_kw(p, KW_AND));
}

/* The permission at token k, as a PERM_* bit; 0 if none. */
static unsigned permission_at(cql__parser *p, int k)
{
    cql__tok *t = cql__peek(p, k);
    if (t->type != TK_KEYWORD)
        return 0;
    switch (t->kw) {
    case KW_CREATE: return PERM_CREATE;
    case KW_ALTER: return PERM_ALTER;
    case KW_DROP: return PERM_DROP;
    case KW_SELECT: return PERM_SELECT;
    case KW_MODIFY: return PERM_MODIFY;
    case KW_AUTHORIZE: return PERM_AUTHORIZE;
    case KW_DESCRIBE: return PERM_DESCRIBE;
    case KW_EXECUTE: return PERM_EXECUTE;
    default: return 0;
    }
}

/* permissionOrAll: ALL [PERMISSIONS] | permission [PERMISSION] (, ...)* */
static unsigned permission_or_all(cql__parser *p)
{
    if (cql__accept_kw(p, KW_ALL)) {
        cql__accept_kw(p, KW_PERMISSIONS);
        return PERM_ALL;
    }
    unsigned perms = 0;
    do {
        unsigned one = permission_at(p, 1);
        if (!one)
            cql__fail_noviable(p, 1, 1);
        perms |= one;
        cql__next(p);
        cql__accept_kw(p, KW_PERMISSION);
    } while (cql__accept(p, TK_COMMA));
    return perms;
}

/* resource: data, role, function or JMX resource. */
static void resource(cql__parser *p, ast_resource *r)
{
    if (cql__is_kw(p, KW_ALL)) {
        cql__next(p);
        if (cql__accept_kw(p, KW_KEYSPACES)) {
            r->kind = RES_ALL_KEYSPACES;
            return;
        }
        if (cql__accept_kw(p, KW_ROLES)) {
            r->kind = RES_ALL_ROLES;
            return;
        }
        if (cql__accept_kw(p, KW_MBEANS)) {
            r->kind = RES_ALL_MBEANS;
            return;
        }
        if (cql__accept_kw(p, KW_TABLES)) {
            cql__expect_kw(p, KW_IN);
            cql__expect_kw(p, KW_KEYSPACE);
            r->kind = RES_ALL_TABLES;
            r->ks = cql__ks_name(p);
            return;
        }
        if (cql__accept_kw(p, KW_FUNCTIONS)) {
            r->kind = RES_ALL_FUNCTIONS;
            if (cql__accept_kw(p, KW_IN)) {
                cql__expect_kw(p, KW_KEYSPACE);
                r->kind = RES_FUNCTIONS_IN_KS;
                r->ks = cql__ks_name(p);
            }
            return;
        }
        cql__fail_noviable(p, 1, 1);
    }
    if (cql__accept_kw(p, KW_KEYSPACE)) {
        r->kind = RES_KEYSPACE;
        r->ks = cql__ks_name(p);
    } else if (cql__accept_kw(p, KW_ROLE)) {
        r->kind = RES_ROLE;
        r->name = role_name(p);
    } else if (cql__is_kw(p, KW_FUNCTION) && !(cql__peek(p, 2)->type == TK_DOT) &&
               cql__peek(p, 2)->type != TK_EOF && cql__peek(p, 2)->type != TK_SEMI &&
               !cql__is_kw_at(p, 2, KW_TO) && !cql__is_kw_at(p, 2, KW_FROM) && !cql__is_kw_at(p, 2, KW_OF)) {
        cql__next(p);
        ast_qname fn = cql__func_name(p);
        r->kind = RES_FUNCTION;
        r->ks = fn.ks;
        r->name = fn.name;
        cql__expect(p, TK_LPAREN);
        if (!cql__is(p, TK_RPAREN)) {
            do
                (void)cql__type(p);
            while (cql__accept(p, TK_COMMA));
        }
        cql__expect(p, TK_RPAREN);
    } else if ((cql__is_kw(p, KW_MBEAN) || cql__is_kw(p, KW_MBEANS)) && cql__peek(p, 2)->type == TK_STRING) {
        cql__next(p);
        r->kind = RES_MBEAN;
        r->name = expect_string(p);
    } else {
        cql__accept_kw(p, KW_TABLE);
        ast_qname q = cql__qname(p);
        r->kind = RES_TABLE;
        r->ks = q.ks;
        r->name = q.name;
    }
}

/* applicablePermissions of each IResource kind. */
unsigned cql_resource_permissions(ast_resource_kind k)
{
    switch (k) {
    case RES_ALL_KEYSPACES: case RES_KEYSPACE: case RES_ALL_TABLES:
        return PERM_CREATE | PERM_ALTER | PERM_DROP | PERM_SELECT | PERM_MODIFY | PERM_AUTHORIZE;
    case RES_TABLE: return PERM_ALTER | PERM_DROP | PERM_SELECT | PERM_MODIFY | PERM_AUTHORIZE;
    case RES_ALL_ROLES: return PERM_CREATE | PERM_ALTER | PERM_DROP | PERM_AUTHORIZE | PERM_DESCRIBE;
    case RES_ROLE: return PERM_ALTER | PERM_DROP | PERM_AUTHORIZE;
    case RES_ALL_FUNCTIONS: case RES_FUNCTIONS_IN_KS:
        return PERM_CREATE | PERM_ALTER | PERM_DROP | PERM_AUTHORIZE | PERM_EXECUTE;
    case RES_FUNCTION: return PERM_ALTER | PERM_DROP | PERM_AUTHORIZE | PERM_EXECUTE;
    case RES_ALL_MBEANS: case RES_MBEAN:
        return PERM_SELECT | PERM_MODIFY | PERM_AUTHORIZE | PERM_DESCRIBE | PERM_EXECUTE;
    default: return 0;
    }
}

const char *cql_resource_class(ast_resource_kind k)
{
    switch (k) {
    case RES_ALL_ROLES: case RES_ROLE: return "RoleResource";
    case RES_ALL_FUNCTIONS: case RES_FUNCTIONS_IN_KS: case RES_FUNCTION: return "FunctionResource";
    case RES_ALL_MBEANS: case RES_MBEAN: return "JMXResource";
    default: return "DataResource";
    }
}

static bool if_exists(cql__parser *p, bool not)
{
    if (!cql__accept_kw(p, KW_IF))
        return false;
    if (not)
        cql__expect_kw(p, KW_NOT);
    cql__expect_kw(p, KW_EXISTS);
    return true;
}

static ast_auth *begin(cql_stmt *st, ast_auth_kind kind, const char *verb)
{
    st->kind = STMT_AUTH;
    ast_auth *a = &st->u.auth;
    memset(a, 0, sizeof *a);
    a->kind = kind;
    a->verb = verb;
    a->recursive = true;
    return a;
}

/* CREATE|ALTER|DROP ROLE|USER ... (current token: the verb). */
static void role_statement(cql__parser *p, cql_stmt *st)
{
    int verb = cql__peek(p, 1)->kw;
    cql__next(p);
    bool role = cql__is_kw(p, KW_ROLE);
    cql__next(p);   /* ROLE | USER (checked by the caller) */
    ast_auth *a = begin(st, verb == KW_CREATE ? AUTH_CREATE_ROLE : verb == KW_ALTER ? AUTH_ALTER_ROLE : AUTH_DROP_ROLE,
                        verb == KW_CREATE ? (role ? "CREATE ROLE" : "CREATE USER")
                        : verb == KW_ALTER ? (role ? "ALTER ROLE" : "ALTER USER")
                        : (role ? "DROP ROLE" : "DROP USER"));
    a->user_form = !role;
    a->if_exists = if_exists(p, verb == KW_CREATE);
    a->role = role ? role_name(p) : user_name(p);
    if (verb == KW_DROP)
        return;
    if (role) {
        if (cql__accept_kw(p, KW_WITH))
            role_options(p, a);
    } else {
        if (cql__accept_kw(p, KW_WITH)) {
            bool hashed = cql__accept_kw(p, KW_HASHED);
            cql__expect_kw(p, KW_PASSWORD);
            a->password = expect_string(p);
            a->opts |= hashed ? ROLEOPT_HASHED : ROLEOPT_PASSWORD;
        }
        if (cql__accept_kw(p, KW_SUPERUSER)) {
            a->opts |= ROLEOPT_SUPERUSER;
            a->superuser = true;
        } else if (cql__accept_kw(p, KW_NOSUPERUSER)) {
            a->opts |= ROLEOPT_SUPERUSER;
        }
    }
    if (verb == KW_CREATE) {
        /* defaults the grammar sets: LOGIN false for a role, true for a
         * user; SUPERUSER false */
        if (!(a->opts & ROLEOPT_LOGIN)) {
            a->opts |= ROLEOPT_LOGIN;
            a->login = !role;
        }
        a->opts |= ROLEOPT_SUPERUSER;
    }
    if ((a->opts & ROLEOPT_PASSWORD) && (a->opts & ROLEOPT_HASHED))
        cql__fail_msg(p, "Options 'password' and 'hashed password' are mutually exclusive");
}

/* GRANT/REVOKE permissions ON resource TO/FROM role, or GRANT/REVOKE role TO/FROM role. */
static void grant_revoke(cql__parser *p, cql_stmt *st)
{
    bool grant = cql__is_kw(p, KW_GRANT);
    cql__next(p);
    bool perms = permission_at(p, 1) ||
                 (cql__is_kw(p, KW_ALL) && (cql__is_kw_at(p, 2, KW_PERMISSIONS) || cql__is_kw_at(p, 2, KW_ON)));
    ast_auth *a;
    if (perms) {
        a = begin(st, grant ? AUTH_GRANT_PERMS : AUTH_REVOKE_PERMS, grant ? "GRANT" : "REVOKE");
        a->perms = permission_or_all(p);
        cql__expect_kw(p, KW_ON);
        resource(p, &a->res);
        /* Parser.g's filterPermissions: only those the resource takes */
        unsigned applicable = a->perms & cql_resource_permissions(a->res.kind);
        if (!applicable)
            cql__fail_msg(p, "Resource type %s does not support any of the requested permissions",
                          cql_resource_class(a->res.kind));
        a->perms = applicable;
    } else {
        a = begin(st, grant ? AUTH_GRANT_ROLE : AUTH_REVOKE_ROLE, grant ? "GRANT" : "REVOKE");
        a->role = role_name(p);
    }
    cql__expect_kw(p, grant ? KW_TO : KW_FROM);
    a->grantee = role_name(p);
}

/* LIST USERS | LIST ROLES [OF r] [NORECURSIVE] |
 * LIST perms [ON resource] [OF r] [NORECURSIVE] */
static void list_statement(cql__parser *p, cql_stmt *st)
{
    cql__next(p);   /* LIST */
    if (cql__accept_kw(p, KW_USERS)) {
        ast_auth *a = begin(st, AUTH_LIST_USERS, "LIST USERS");
        a->user_form = true;
        return;
    }
    ast_auth *a;
    if (cql__accept_kw(p, KW_ROLES)) {
        a = begin(st, AUTH_LIST_ROLES, "LIST ROLES");
    } else {
        a = begin(st, AUTH_LIST_PERMS, "LIST PERMISSIONS");
        a->perms = permission_or_all(p);
        if (cql__accept_kw(p, KW_ON))
            resource(p, &a->res);
    }
    if (cql__accept_kw(p, KW_OF))
        a->role = role_name(p);
    if (cql__accept_kw(p, KW_NORECURSIVE))
        a->recursive = false;
}

void cql__parse_auth(cql__parser *p, cql_stmt *st)
{
    cql__tok *t = cql__peek(p, 1);
    int kw = t->type == TK_KEYWORD ? t->kw : KW_NONE;
    switch (kw) {
    case KW_CREATE: case KW_ALTER: case KW_DROP:
        if (!cql__is_kw_at(p, 2, KW_ROLE) && !cql__is_kw_at(p, 2, KW_USER))
            cql__fail_noviable(p, 2, 1);
        role_statement(p, st);
        return;
    case KW_GRANT: case KW_REVOKE:
        grant_revoke(p, st);
        return;
    case KW_LIST:
        list_statement(p, st);
        return;
    default:
        cql__fail_noviable(p, 1, 1);
    }
}
