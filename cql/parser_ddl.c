/*
 * parser_ddl.c: schema statements (owner: parser): CREATE/ALTER/DROP of
 * KEYSPACE, TABLE, TYPE, INDEX, MATERIALIZED VIEW, FUNCTION, AGGREGATE;
 * and DESCRIBE in all its forms (auth statements: parser_auth.c).  Grammar
 * as Cassandra 4.1's Parser.g.
 *
 * CREATE FUNCTION / AGGREGATE and DROP FUNCTION / AGGREGATE have no AST
 * of their own: the name goes in u.drop.name (the executor refuses them).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cql/lexer_int.h"

static bool if_not_exists(cql__parser *p)
{
    if (!cql__accept_kw(p, KW_IF))
        return false;
    cql__expect_kw(p, KW_NOT);
    cql__expect_kw(p, KW_EXISTS);
    return true;
}

static bool if_exists(cql__parser *p)
{
    if (!cql__accept_kw(p, KW_IF))
        return false;
    cql__expect_kw(p, KW_EXISTS);
    return true;
}

static void push_str(cql__parser *p, char ***arr, int *n, char *s)
{
    cql__push(p, arr, n, sizeof(char *), &s);
}

/* ---------------------------------------------------------------- KEYSPACE */

static void keyspace_def(cql__parser *p, cql_stmt *st, cql_stmt_kind kind)
{
    ast_keyspace_def *k = &st->u.keyspace;
    st->kind = kind;
    cql__next(p);   /* KEYSPACE */
    if (kind == STMT_CREATE_KEYSPACE)
        k->if_not_exists = if_not_exists(p);
    else
        k->if_exists = if_exists(p);
    k->name = cql__ks_name(p);
    if (kind == STMT_DROP_KEYSPACE)
        return;
    cql__expect_kw(p, KW_WITH);
    cql__props(p, &k->props);
}

/* ---------------------------------------------------------------- TABLE */

/* WITH cfamProperty (AND cfamProperty)*: properties, CLUSTERING ORDER BY,
 * COMPACT STORAGE.  With co/compact NULL (ALTER ... WITH) only properties,
 * as in Parser.g. */
static void table_props(cql__parser *p, ast_props *props, ast_order **co, int *n_co, bool *compact)
{
    do {
        if (compact && cql__is_kw(p, KW_COMPACT) && cql__is_kw_at(p, 2, KW_STORAGE)) {
            cql__next(p);
            cql__next(p);
            *compact = true;
        } else if (co && cql__is_kw(p, KW_CLUSTERING) && cql__is_kw_at(p, 2, KW_ORDER)) {
            cql__next(p);
            cql__next(p);
            cql__expect_kw(p, KW_BY);
            cql__expect(p, TK_LPAREN);
            do {
                ast_order o = { NULL, false };
                o.column = cql__ident(p);
                if (cql__accept_kw(p, KW_DESC))
                    o.desc = true;
                else if (!cql__accept_kw(p, KW_ASC))
                    cql__fail_noviable(p, 1, 1);
                cql__push(p, co, n_co, sizeof(ast_order), &o);
            } while (cql__accept(p, TK_COMMA));
            cql__expect(p, TK_RPAREN);
        } else {
            cql__prop(p, props);
        }
    } while (cql__accept_kw(p, KW_AND));
}

/* PRIMARY KEY '(' (pk | '(' pk, ... ')') (',' ck)* ')' after PRIMARY KEY. */
static void primary_key(cql__parser *p, char ***pk, int *n_pk, char ***ck, int *n_ck)
{
    cql__expect(p, TK_LPAREN);
    if (cql__accept(p, TK_LPAREN)) {
        do
            push_str(p, pk, n_pk, cql__ident(p));
        while (cql__accept(p, TK_COMMA));
        cql__expect(p, TK_RPAREN);
    } else {
        push_str(p, pk, n_pk, cql__ident(p));
    }
    while (cql__accept(p, TK_COMMA))
        push_str(p, ck, n_ck, cql__ident(p));
    cql__expect(p, TK_RPAREN);
}

static void create_table(cql__parser *p, cql_stmt *st)
{
    ast_create_table *t = &st->u.create_table;
    st->kind = STMT_CREATE_TABLE;
    cql__next(p);   /* TABLE | COLUMNFAMILY */
    t->if_not_exists = if_not_exists(p);
    t->table = cql__qname(p);
    cql__expect(p, TK_LPAREN);
    do {
        if (cql__is(p, TK_RPAREN))
            break;   /* trailing comma, as Cassandra allows */
        if (cql__accept_kw(p, KW_PRIMARY)) {
            cql__expect_kw(p, KW_KEY);
            primary_key(p, &t->pk, &t->n_pk, &t->ck, &t->n_ck);
            continue;
        }
        ast_coldef c;
        memset(&c, 0, sizeof(c));
        c.name = cql__ident(p);
        c.type = cql__type(p);
        if (cql__accept_kw(p, KW_STATIC))
            c.is_static = true;
        if (cql__accept_kw(p, KW_PRIMARY)) {
            cql__expect_kw(p, KW_KEY);
            c.primary_key = true;
        }
        cql__push(p, &t->cols, &t->n_cols, sizeof(c), &c);
    } while (cql__accept(p, TK_COMMA));
    cql__expect(p, TK_RPAREN);
    if (cql__accept_kw(p, KW_WITH))
        table_props(p, &t->props, &t->clustering_order, &t->n_clustering_order, &t->compact_storage);
}

static void coldef_list(cql__parser *p, ast_alter_table *a, bool with_type)
{
    bool paren = cql__accept(p, TK_LPAREN);
    do {
        ast_coldef c;
        memset(&c, 0, sizeof(c));
        c.name = cql__ident(p);
        if (with_type) {
            c.type = cql__type(p);
            c.is_static = cql__accept_kw(p, KW_STATIC);
        }
        cql__push(p, &a->cols, &a->n_cols, sizeof(c), &c);
    } while (paren && cql__accept(p, TK_COMMA));
    if (paren)
        cql__expect(p, TK_RPAREN);
}

static void rename_list(cql__parser *p, char ***from, char ***to, int *n)
{
    int n2 = 0;
    do {
        push_str(p, from, n, cql__ident(p));
        cql__expect_kw(p, KW_TO);
        push_str(p, to, &n2, cql__ident(p));
    } while (cql__accept_kw(p, KW_AND));
}

static void alter_table(cql__parser *p, cql_stmt *st)
{
    ast_alter_table *a = &st->u.alter_table;
    st->kind = STMT_ALTER_TABLE;
    a->drop_timestamp = INT64_MIN;
    cql__next(p);   /* TABLE | COLUMNFAMILY */
    a->if_exists = if_exists(p);
    a->table = cql__qname(p);
    if (cql__accept_kw(p, KW_ALTER)) {
        a->kind = ALTER_TYPE_CHANGE;
        ast_coldef c;
        memset(&c, 0, sizeof(c));
        c.name = cql__ident(p);
        cql__expect_kw(p, KW_TYPE);
        c.type = cql__type(p);
        cql__push(p, &a->cols, &a->n_cols, sizeof(c), &c);
    } else if (cql__accept_kw(p, KW_ADD)) {
        a->kind = ALTER_ADD;
        a->if_col_not_exists = if_not_exists(p);
        coldef_list(p, a, true);
    } else if (cql__accept_kw(p, KW_DROP)) {
        if (cql__is_kw(p, KW_COMPACT) && cql__is_kw_at(p, 2, KW_STORAGE)) {
            cql__next(p);
            cql__next(p);
            a->kind = ALTER_DROP_COMPACT;
            return;
        }
        a->kind = ALTER_DROP;
        a->if_col_exists = if_exists(p);
        coldef_list(p, a, false);
        if (cql__accept_kw(p, KW_USING)) {
            cql__expect_kw(p, KW_TIMESTAMP);
            cql__tok *t = cql__peek(p, 1);
            if (t->type != TK_INTEGER)
                cql__fail_mismatch(p, "INTEGER");
            char *txt = cql__tok_text(p, t);
            a->drop_timestamp = strtoll(txt, NULL, 10);
            cql__next(p);
        }
    } else if (cql__accept_kw(p, KW_WITH)) {
        a->kind = ALTER_WITH;
        table_props(p, &a->props, NULL, NULL, NULL);
    } else if (cql__accept_kw(p, KW_RENAME)) {
        a->kind = ALTER_RENAME;
        a->if_col_exists = if_exists(p);
        rename_list(p, &a->rename_from, &a->rename_to, &a->n_renames);
    } else {
        cql__fail_noviable(p, 1, 1);
    }
}

/* ---------------------------------------------------------------- TYPE */

static void create_type(cql__parser *p, cql_stmt *st)
{
    ast_type_def *t = &st->u.type_def;
    st->kind = STMT_CREATE_TYPE;
    cql__next(p);   /* TYPE */
    t->if_not_exists = if_not_exists(p);
    t->name = cql__qname(p);
    cql__expect(p, TK_LPAREN);
    int n2 = 0;
    do {
        if (cql__is(p, TK_RPAREN) && t->n_fields > 0)
            break;
        push_str(p, &t->field_names, &t->n_fields, cql__ident(p));
        push_str(p, &t->field_types, &n2, cql__type(p));
    } while (cql__accept(p, TK_COMMA));
    cql__expect(p, TK_RPAREN);
}

static void alter_type(cql__parser *p, cql_stmt *st)
{
    ast_type_def *t = &st->u.type_def;
    st->kind = STMT_ALTER_TYPE;
    cql__next(p);   /* TYPE */
    t->if_exists = if_exists(p);
    t->name = cql__qname(p);
    if (cql__accept_kw(p, KW_ADD)) {
        t->alter_add = true;
        t->if_not_exists = if_not_exists(p);
        int n2 = 0;
        push_str(p, &t->field_names, &t->n_fields, cql__ident(p));
        push_str(p, &t->field_types, &n2, cql__type(p));
    } else if (cql__accept_kw(p, KW_RENAME)) {
        t->alter_rename = true;
        if (if_exists(p))
            t->if_exists = true;
        rename_list(p, &t->rename_from, &t->rename_to, &t->n_renames);
    } else if (cql__accept_kw(p, KW_ALTER)) {
        /* ALTER TYPE t ALTER f TYPE x: parsed, refused as in Cassandra 4 */
        int n2 = 0;
        push_str(p, &t->field_names, &t->n_fields, cql__ident(p));
        cql__expect_kw(p, KW_TYPE);
        push_str(p, &t->field_types, &n2, cql__type(p));
    } else {
        cql__fail_noviable(p, 1, 1);
    }
}

/* ---------------------------------------------------------------- INDEX */

static void create_index(cql__parser *p, cql_stmt *st, bool custom)
{
    ast_create_index *ix = &st->u.create_index;
    st->kind = STMT_CREATE_INDEX;
    cql__expect_kw(p, KW_INDEX);
    ix->if_not_exists = if_not_exists(p);
    if (!cql__is_kw(p, KW_ON)) {
        if (cql__is(p, TK_QMARK))
            cql__fail_msg(p, "Bind variables cannot be used for index names");
        ix->name = cql__ident(p);
    }
    cql__expect_kw(p, KW_ON);
    ix->table = cql__qname(p);
    cql__expect(p, TK_LPAREN);
    int n_targets = 0;
    if (!cql__is(p, TK_RPAREN)) {
        do {
            const char *kind = "";
            cql__tok *t = cql__peek(p, 1);
            if (t->type == TK_KEYWORD && cql__peek(p, 2)->type == TK_LPAREN &&
                (t->kw == KW_KEYS || t->kw == KW_VALUES || t->kw == KW_ENTRIES || t->kw == KW_FULL)) {
                kind = t->kw == KW_KEYS ? "keys" : t->kw == KW_VALUES ? "values"
                     : t->kw == KW_ENTRIES ? "entries" : "full";
                cql__next(p);
                cql__next(p);
                char *c = cql__ident(p);
                cql__expect(p, TK_RPAREN);
                if (!n_targets) {
                    ix->target_kind = cql__strndup(p, kind, strlen(kind));
                    ix->target_column = c;
                }
            } else {
                char *c = cql__ident(p);
                if (!n_targets) {
                    ix->target_kind = cql__strndup(p, "", 0);
                    ix->target_column = c;
                }
            }
            n_targets++;
        } while (cql__accept(p, TK_COMMA));
    }
    cql__expect(p, TK_RPAREN);
    if (cql__accept_kw(p, KW_USING)) {
        cql__tok *t = cql__peek(p, 1);
        if (t->type != TK_STRING)
            cql__fail_mismatch(p, "STRING_LITERAL");
        ast_term *lit = cql__literal(p);
        ix->using_class = lit->lit.text;
    }
    if (cql__accept_kw(p, KW_WITH))
        cql__props(p, &ix->props);
    if (custom && !ix->using_class)
        cql__fail_msg(p, "CUSTOM index requires specifying the index class");
}

/* ---------------------------------------------------------------- VIEW */

static void create_view(cql__parser *p, cql_stmt *st)
{
    ast_create_view *v = &st->u.create_view;
    st->kind = STMT_CREATE_VIEW;
    cql__next(p);   /* MATERIALIZED */
    cql__expect_kw(p, KW_VIEW);
    v->if_not_exists = if_not_exists(p);
    v->view = cql__qname(p);
    cql__expect_kw(p, KW_AS);
    v->select = cql__alloc(p, sizeof(*v->select));
    cql__parse_select(p, v->select, true);
    v->base = v->select->table;
    if (cql__accept_kw(p, KW_WHERE)) {
        int start = cql__peek_index(p, 1);
        cql__parse_where(p, &v->select->where, &v->select->n_where);
        v->where_text = cql__src_text(p, start, cql__last_index(p));
    }
    cql__expect_kw(p, KW_PRIMARY);
    cql__expect_kw(p, KW_KEY);
    primary_key(p, &v->pk, &v->n_pk, &v->ck, &v->n_ck);
    if (cql__accept_kw(p, KW_WITH)) {
        bool compact = false;
        table_props(p, &v->props, &v->clustering_order, &v->n_clustering_order, &compact);
        if (compact)
            cql__fail_msg(p, "COMPACT STORAGE tables are not allowed starting with version 4.0");
    }
}

/* ---------------------------------------------------------------- FUNCTION / AGGREGATE */

static void create_function(cql__parser *p, cql_stmt *st, bool aggregate)
{
    st->kind = aggregate ? STMT_CREATE_AGGREGATE : STMT_CREATE_FUNCTION;
    cql__next(p);   /* FUNCTION | AGGREGATE */
    st->u.drop.if_exists = if_not_exists(p);
    st->u.drop.name = cql__func_name(p);
    cql__expect(p, TK_LPAREN);
    if (!cql__is(p, TK_RPAREN)) {
        do {
            if (!aggregate)
                (void)cql__ident(p);
            (void)cql__type(p);
        } while (cql__accept(p, TK_COMMA));
    }
    cql__expect(p, TK_RPAREN);
    if (aggregate) {
        cql__expect_kw(p, KW_SFUNC);
        (void)cql__ident(p);
        cql__expect_kw(p, KW_STYPE);
        (void)cql__type(p);
        if (cql__accept_kw(p, KW_FINALFUNC))
            (void)cql__ident(p);
        if (cql__accept_kw(p, KW_INITCOND))
            (void)cql__term(p);
        return;
    }
    if (cql__accept_kw(p, KW_RETURNS)) {
        cql__expect_kw(p, KW_NULL);
    } else if (!cql__accept_kw(p, KW_CALLED)) {
        cql__fail_noviable(p, 1, 1);
    }
    cql__expect_kw(p, KW_ON);
    cql__expect_kw(p, KW_NULL);
    cql__expect_kw(p, KW_INPUT);
    cql__expect_kw(p, KW_RETURNS);
    (void)cql__type(p);
    cql__expect_kw(p, KW_LANGUAGE);
    if (!cql__is(p, TK_IDENT))
        cql__fail_mismatch(p, "IDENT");
    cql__next(p);
    cql__expect_kw(p, KW_AS);
    if (!cql__is(p, TK_STRING))
        cql__fail_mismatch(p, "STRING_LITERAL");
    cql__next(p);
}

/* ---------------------------------------------------------------- CREATE / ALTER / DROP */

void cql__parse_create(cql__parser *p, cql_stmt *st)
{
    cql__expect_kw(p, KW_CREATE);
    cql__tok *t = cql__peek(p, 1);
    int kw = t->type == TK_KEYWORD ? t->kw : KW_NONE;
    switch (kw) {
    case KW_KEYSPACE: case KW_SCHEMA: keyspace_def(p, st, STMT_CREATE_KEYSPACE); return;
    case KW_TABLE: case KW_COLUMNFAMILY: create_table(p, st); return;
    case KW_TYPE: create_type(p, st); return;
    case KW_INDEX: create_index(p, st, false); return;
    case KW_CUSTOM:
        if (!cql__is_kw_at(p, 2, KW_INDEX))
            cql__fail_noviable(p, 2, 0);
        cql__next(p);
        create_index(p, st, true);
        return;
    case KW_MATERIALIZED: create_view(p, st); return;
    case KW_OR:
        cql__next(p);
        cql__expect_kw(p, KW_REPLACE);
        if (cql__is_kw(p, KW_FUNCTION))
            create_function(p, st, false);
        else if (cql__is_kw(p, KW_AGGREGATE))
            create_function(p, st, true);
        else
            cql__fail_noviable(p, 1, 1);
        return;
    case KW_FUNCTION: create_function(p, st, false); return;
    case KW_AGGREGATE: create_function(p, st, true); return;
    case KW_ROLE: case KW_USER:
        p->pos--;   /* back to CREATE for the verb text */
        cql__parse_auth(p, st);
        return;
    default:
        cql__fail_noviable(p, 1, 0);
    }
}

void cql__parse_alter(cql__parser *p, cql_stmt *st)
{
    cql__expect_kw(p, KW_ALTER);
    cql__tok *t = cql__peek(p, 1);
    int kw = t->type == TK_KEYWORD ? t->kw : KW_NONE;
    switch (kw) {
    case KW_KEYSPACE: case KW_SCHEMA: keyspace_def(p, st, STMT_ALTER_KEYSPACE); return;
    case KW_TABLE: case KW_COLUMNFAMILY: alter_table(p, st); return;
    case KW_TYPE: alter_type(p, st); return;
    case KW_MATERIALIZED: {
        ast_alter_table *a = &st->u.alter_view;
        st->kind = STMT_ALTER_VIEW;
        a->kind = ALTER_WITH;
        a->drop_timestamp = INT64_MIN;
        cql__next(p);
        cql__expect_kw(p, KW_VIEW);
        a->if_exists = if_exists(p);
        a->table = cql__qname(p);
        cql__expect_kw(p, KW_WITH);
        table_props(p, &a->props, NULL, NULL, NULL);
        return;
    }
    case KW_ROLE: case KW_USER:
        p->pos--;
        cql__parse_auth(p, st);
        return;
    default:
        cql__fail_noviable(p, 1, 0);
    }
}

void cql__parse_drop(cql__parser *p, cql_stmt *st)
{
    cql__expect_kw(p, KW_DROP);
    cql__tok *t = cql__peek(p, 1);
    int kw = t->type == TK_KEYWORD ? t->kw : KW_NONE;
    ast_drop *d = &st->u.drop;
    switch (kw) {
    case KW_KEYSPACE: case KW_SCHEMA:
        keyspace_def(p, st, STMT_DROP_KEYSPACE);
        return;
    case KW_TABLE: case KW_COLUMNFAMILY: st->kind = STMT_DROP_TABLE; break;
    case KW_TYPE: st->kind = STMT_DROP_TYPE; break;
    case KW_INDEX: st->kind = STMT_DROP_INDEX; break;
    case KW_MATERIALIZED:
        st->kind = STMT_DROP_VIEW;
        cql__next(p);
        if (!cql__is_kw(p, KW_VIEW))
            cql__fail_mismatch(p, "K_VIEW");
        break;
    case KW_FUNCTION: case KW_AGGREGATE:
        st->kind = kw == KW_FUNCTION ? STMT_DROP_FUNCTION : STMT_DROP_AGGREGATE;
        cql__next(p);
        d->if_exists = if_exists(p);
        d->name = cql__func_name(p);
        if (cql__accept(p, TK_LPAREN)) {
            char args[512];   /* the types as CQL3Type.Raw prints them, for messages */
            size_t off = 0;
            args[0] = 0;
            if (!cql__is(p, TK_RPAREN)) {
                do {
                    const char *ty = cql__type(p);
                    off += (size_t)snprintf(args + off, off < sizeof args ? sizeof args - off : 0, "%s%s",
                                            off ? ", " : "", ty ? ty : "");
                } while (cql__accept(p, TK_COMMA));
            }
            cql__expect(p, TK_RPAREN);
            d->fn_args = cql__strndup(p, args, strlen(args));
        }
        return;
    case KW_ROLE: case KW_USER:
        p->pos--;
        cql__parse_auth(p, st);
        return;
    default:
        cql__fail_noviable(p, 1, 0);
    }
    cql__next(p);
    d->if_exists = if_exists(p);
    d->name = cql__qname(p);
}

/* ---------------------------------------------------------------- DESCRIBE */

static bool desc_end(cql__parser *p)
{
    cql__tok *t = cql__peek(p, 1);
    return t->type == TK_EOF || t->type == TK_SEMI || (t->type == TK_KEYWORD && t->kw == KW_WITH);
}

void cql__parse_describe(cql__parser *p, cql_stmt *st)
{
    ast_describe *d = &st->u.describe;
    st->kind = STMT_DESCRIBE;
    cql__next(p);   /* DESCRIBE | DESC */
    cql__tok *t = cql__peek(p, 1);
    int kw = t->type == TK_KEYWORD ? t->kw : KW_NONE;
    bool alone = cql__peek(p, 2)->type == TK_EOF || cql__peek(p, 2)->type == TK_SEMI ||
                 cql__is_kw_at(p, 2, KW_WITH);
    switch (kw) {
    case KW_CLUSTER: if (!alone) goto generic; d->kind = DESC_CLUSTER; cql__next(p); break;
    case KW_KEYSPACES: if (!alone) goto generic; d->kind = DESC_KEYSPACES; cql__next(p); break;
    case KW_TABLES: if (!alone) goto generic; d->kind = DESC_TABLES; cql__next(p); break;
    case KW_TYPES: if (!alone) goto generic; d->kind = DESC_TYPES; cql__next(p); break;
    case KW_FUNCTIONS: if (!alone) goto generic; d->kind = DESC_FUNCTIONS; cql__next(p); break;
    case KW_AGGREGATES: if (!alone) goto generic; d->kind = DESC_AGGREGATES; cql__next(p); break;
    case KW_SCHEMA: d->kind = DESC_SCHEMA; cql__next(p); break;
    case KW_FULL:
        cql__next(p);
        cql__expect_kw(p, KW_SCHEMA);
        d->kind = DESC_FULL_SCHEMA;
        break;
    case KW_ONLY:
        if (!cql__is_kw_at(p, 2, KW_KEYSPACE))
            goto generic;   /* ONLY as a name; ONLY is for KEYSPACE alone */
        cql__next(p);
        d->only = true;
        /* fall through */
    case KW_KEYSPACE:
        cql__next(p);
        d->kind = DESC_KEYSPACE;
        if (!desc_end(p))
            d->name.name = cql__ks_name(p);
        break;
    case KW_TABLE: case KW_COLUMNFAMILY:
        cql__next(p);
        d->kind = DESC_TABLE;
        d->name = cql__qname(p);
        break;
    case KW_INDEX:
        cql__next(p);
        d->kind = DESC_INDEX;
        d->name = cql__qname(p);
        break;
    case KW_MATERIALIZED:
        cql__next(p);
        cql__expect_kw(p, KW_VIEW);
        d->kind = DESC_MATERIALIZED_VIEW;
        d->name = cql__qname(p);
        break;
    case KW_TYPE:
        if (alone)
            goto generic;
        cql__next(p);
        d->kind = DESC_TYPE;
        d->name = cql__qname(p);
        break;
    case KW_FUNCTION: case KW_AGGREGATE:
        if (alone)
            goto generic;
        cql__next(p);
        d->kind = kw == KW_FUNCTION ? DESC_FUNCTION : DESC_AGGREGATE;
        d->name = cql__func_name(p);
        break;
    default:
    generic:
        d->kind = DESC_GENERIC;
        d->name = cql__qname(p);
        break;
    }
    if (cql__accept_kw(p, KW_WITH)) {
        cql__expect_kw(p, KW_INTERNALS);
        d->with_internals = true;
    }
}
