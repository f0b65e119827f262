/*
 * parser_auth.c: the auth statements (owner: parser): CREATE/ALTER/DROP
 * ROLE and USER, GRANT/REVOKE of permissions and roles, LIST ROLES/USERS/
 * PERMISSIONS.  They are checked against Cassandra 4.1's Parser.g grammar
 * (createRoleStatement, grantPermissionsStatement, resource, ...) and
 * become STMT_AUTH with the verb in auth_text ("CREATE ROLE", "GRANT",
 * "LIST PERMISSIONS" ...); the executor decides what to do with them.
 */
#include <string.h>
#include "cql/lexer_int.h"

/* roleName: IDENT | STRING_LITERAL | QUOTED_NAME | unreserved keyword. */
static void role_name(cql__parser *p)
{
    if (cql__is(p, TK_QMARK))
        cql__fail_msg(p, "Bind variables cannot be used for role names");
    if (cql__is(p, TK_STRING)) {
        cql__next(p);
        return;
    }
    (void)cql__ident(p);
}

/* username (CREATE/ALTER/DROP USER): IDENT | STRING_LITERAL. */
static void user_name(cql__parser *p)
{
    if (cql__is(p, TK_QUOTED_NAME))
        cql__fail_msg(p, "Quoted strings are are not supported for user names and USER is deprecated, please use ROLE");
    if (!cql__is(p, TK_IDENT) && !cql__is(p, TK_STRING))
        cql__fail_noviable(p, 1, 1);
    cql__next(p);
}

static void expect_string(cql__parser *p)
{
    if (!cql__is(p, TK_STRING))
        cql__fail_mismatch(p, "STRING_LITERAL");
    cql__next(p);
}

static void expect_boolean(cql__parser *p)
{
    if (!cql__is(p, TK_BOOLEAN))
        cql__fail_mismatch(p, "BOOLEAN");
    cql__next(p);
}

/* roleOption (AND roleOption)* */
static void role_options(cql__parser *p)
{
    do {
        if (cql__accept_kw(p, KW_PASSWORD)) {
            cql__expect(p, TK_EQ);
            expect_string(p);
        } else if (cql__accept_kw(p, KW_HASHED)) {
            cql__expect_kw(p, KW_PASSWORD);
            cql__expect(p, TK_EQ);
            expect_string(p);
        } else if (cql__is_kw(p, KW_OPTIONS)) {
            ast_props tmp = { NULL, 0 };
            cql__prop(p, &tmp);
            if (tmp.items[0].kind != PROP_MAP)
                cql__fail_msg(p, "Invalid value for property OPTIONS");
        } else if (cql__accept_kw(p, KW_SUPERUSER) || cql__accept_kw(p, KW_LOGIN)) {
            cql__expect(p, TK_EQ);
            expect_boolean(p);
        } else if (cql__accept_kw(p, KW_ACCESS)) {
            cql__expect_kw(p, KW_TO);
            if (cql__accept_kw(p, KW_ALL)) {
                cql__expect_kw(p, KW_DATACENTERS);
            } else {
                cql__expect_kw(p, KW_DATACENTERS);
                cql__expect(p, TK_LBRACE);
                do
                    expect_string(p);
                while (cql__accept(p, TK_COMMA));
                cql__expect(p, TK_RBRACE);
            }
        } else {
            cql__fail_noviable(p, 1, 1);
        }
    } while (cql__accept_kw(p, KW_AND));
}

static bool is_permission(cql__parser *p, int k)
{
    cql__tok *t = cql__peek(p, k);
    if (t->type != TK_KEYWORD)
        return false;
    switch (t->kw) {
    case KW_CREATE: case KW_ALTER: case KW_DROP: case KW_SELECT: case KW_MODIFY:
    case KW_AUTHORIZE: case KW_DESCRIBE: case KW_EXECUTE:
        return true;
    default:
        return false;
    }
}

/* permissionOrAll: ALL [PERMISSIONS] | permission [PERMISSION] (, ...)* */
static void permission_or_all(cql__parser *p)
{
    if (cql__accept_kw(p, KW_ALL)) {
        cql__accept_kw(p, KW_PERMISSIONS);
        return;
    }
    do {
        if (!is_permission(p, 1))
            cql__fail_noviable(p, 1, 1);
        cql__next(p);
        cql__accept_kw(p, KW_PERMISSION);
    } while (cql__accept(p, TK_COMMA));
}

/* resource: data, role, function or JMX resource. */
static void resource(cql__parser *p)
{
    if (cql__is_kw(p, KW_ALL)) {
        cql__next(p);
        if (cql__accept_kw(p, KW_KEYSPACES) || cql__accept_kw(p, KW_ROLES) || cql__accept_kw(p, KW_MBEANS))
            return;
        if (cql__accept_kw(p, KW_TABLES)) {
            cql__expect_kw(p, KW_IN);
            cql__expect_kw(p, KW_KEYSPACE);
            (void)cql__ks_name(p);
            return;
        }
        if (cql__accept_kw(p, KW_FUNCTIONS)) {
            if (cql__accept_kw(p, KW_IN)) {
                cql__expect_kw(p, KW_KEYSPACE);
                (void)cql__ks_name(p);
            }
            return;
        }
        cql__fail_noviable(p, 1, 1);
    }
    if (cql__accept_kw(p, KW_KEYSPACE)) {
        (void)cql__ks_name(p);
    } else if (cql__accept_kw(p, KW_ROLE)) {
        role_name(p);
    } else if (cql__is_kw(p, KW_FUNCTION) && !(cql__peek(p, 2)->type == TK_DOT) &&
               cql__peek(p, 2)->type != TK_EOF && cql__peek(p, 2)->type != TK_SEMI &&
               !cql__is_kw_at(p, 2, KW_TO) && !cql__is_kw_at(p, 2, KW_FROM) && !cql__is_kw_at(p, 2, KW_OF)) {
        cql__next(p);
        (void)cql__func_name(p);
        cql__expect(p, TK_LPAREN);
        if (!cql__is(p, TK_RPAREN)) {
            do
                (void)cql__type(p);
            while (cql__accept(p, TK_COMMA));
        }
        cql__expect(p, TK_RPAREN);
    } else if ((cql__is_kw(p, KW_MBEAN) || cql__is_kw(p, KW_MBEANS)) && cql__peek(p, 2)->type == TK_STRING) {
        cql__next(p);
        cql__next(p);
    } else {
        cql__accept_kw(p, KW_TABLE);
        (void)cql__qname(p);
    }
}

static void if_exists(cql__parser *p, bool not)
{
    if (!cql__accept_kw(p, KW_IF))
        return;
    if (not)
        cql__expect_kw(p, KW_NOT);
    cql__expect_kw(p, KW_EXISTS);
}

static void set_verb(cql__parser *p, cql_stmt *st, const char *verb)
{
    st->kind = STMT_AUTH;
    st->u.auth_text = cql__strndup(p, verb, strlen(verb));
}

/* CREATE|ALTER|DROP ROLE|USER ... (current token: the verb). */
static void role_statement(cql__parser *p, cql_stmt *st)
{
    int verb = cql__peek(p, 1)->kw;
    cql__next(p);
    bool role = cql__is_kw(p, KW_ROLE);
    cql__next(p);   /* ROLE | USER (checked by the caller) */
    set_verb(p, st, verb == KW_CREATE ? (role ? "CREATE ROLE" : "CREATE USER")
                  : verb == KW_ALTER ? (role ? "ALTER ROLE" : "ALTER USER")
                  : (role ? "DROP ROLE" : "DROP USER"));
    if_exists(p, verb == KW_CREATE);
    if (role)
        role_name(p);
    else
        user_name(p);
    if (verb == KW_DROP)
        return;
    if (role) {
        if (cql__accept_kw(p, KW_WITH))
            role_options(p);
        return;
    }
    if (cql__accept_kw(p, KW_WITH)) {
        cql__accept_kw(p, KW_HASHED);
        cql__expect_kw(p, KW_PASSWORD);
        expect_string(p);
    }
    if (!cql__accept_kw(p, KW_SUPERUSER))
        cql__accept_kw(p, KW_NOSUPERUSER);
}

/* GRANT/REVOKE permissions ON resource TO/FROM role, or GRANT/REVOKE role TO/FROM role. */
static void grant_revoke(cql__parser *p, cql_stmt *st)
{
    bool grant = cql__is_kw(p, KW_GRANT);
    cql__next(p);
    set_verb(p, st, grant ? "GRANT" : "REVOKE");
    bool perms = is_permission(p, 1) ||
                 (cql__is_kw(p, KW_ALL) && (cql__is_kw_at(p, 2, KW_PERMISSIONS) || cql__is_kw_at(p, 2, KW_ON)));
    if (perms) {
        permission_or_all(p);
        cql__expect_kw(p, KW_ON);
        resource(p);
    } else {
        role_name(p);
    }
    cql__expect_kw(p, grant ? KW_TO : KW_FROM);
    role_name(p);
}

/* LIST USERS | LIST ROLES [OF r] [NORECURSIVE] |
 * LIST perms [ON resource] [OF r] [NORECURSIVE] */
static void list_statement(cql__parser *p, cql_stmt *st)
{
    cql__next(p);   /* LIST */
    if (cql__accept_kw(p, KW_USERS)) {
        set_verb(p, st, "LIST USERS");
        return;
    }
    if (cql__accept_kw(p, KW_ROLES)) {
        set_verb(p, st, "LIST ROLES");
    } else {
        set_verb(p, st, "LIST PERMISSIONS");
        permission_or_all(p);
        if (cql__accept_kw(p, KW_ON))
            resource(p);
    }
    if (cql__accept_kw(p, KW_OF))
        role_name(p);
    cql__accept_kw(p, KW_NORECURSIVE);
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
