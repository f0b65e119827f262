/*
 * parser_term.c: the shared value grammar of the CQL parser (owner:
 * parser): types (comparatorType -> normalized type text), terms
 * (constants, collections, UDT and tuple literals, bind markers, function
 * calls, casts, arithmetic as Cassandra's operator functions) and WITH
 * properties.  Parser.g rules: comparatorType, constant, value, term,
 * termAddition, simpleTerm, function, properties, propertyValue.
 */
#include <stdio.h>
#include <string.h>
#include "cql/lexer_int.h"
#include "common/arena.h"
#include "common/buf.h"

/* ---------------------------------------------------------------- types */

static bool is_native_type_kw(int kw)
{
    switch (kw) {
    case KW_ASCII: case KW_BIGINT: case KW_BLOB: case KW_BOOLEAN: case KW_COUNTER:
    case KW_DECIMAL: case KW_DOUBLE: case KW_DURATION: case KW_FLOAT: case KW_INET:
    case KW_INT: case KW_SMALLINT: case KW_TEXT: case KW_TIMESTAMP: case KW_TINYINT:
    case KW_UUID: case KW_VARCHAR: case KW_VARINT: case KW_TIMEUUID: case KW_DATE:
    case KW_TIME:
        return true;
    default:
        return false;
    }
}

bool cql__at_type_start(cql__parser *p, int k)
{
    cql__tok *t = cql__peek(p, k);
    if (t->type == TK_STRING)
        return true;
    if (t->type == TK_KEYWORD && is_native_type_kw(t->kw))
        return true;
    if ((t->type == TK_KEYWORD && (t->kw == KW_FROZEN || t->kw == KW_LIST || t->kw == KW_MAP ||
                                   t->kw == KW_SET || t->kw == KW_TUPLE)) ||
        (t->type == TK_IDENT && t->len == 6 && strncasecmp(t->start, "vector", 6) == 0))
        return cql__peek(p, k + 1)->type == TK_LT;
    return false;
}

/* A name as CQL type text: quoted when needed so ctype_parse reads it back. */
static char *quoted_name(cql__parser *p, const char *name)
{
    cs_buf b;
    cs_buf_init(&b);
    cql_quote_ident(name, &b);
    char *r = b.err ? NULL : cs_arena_strndup(p->a, (const char *)b.p, b.len);
    cs_buf_destroy(&b);
    if (!r)
        cql__fail_oom(p);
    return r;
}

/* comparatorType: native | list<T> | set<T> | map<K, V> | tuple<...> |
 * frozen<T> | vector<T, n> | [ks.]udt | 'custom.Class'.  Returns normalized
 * text ("map<text, frozen<list<int>>>"). */
static char *type_inner(cql__parser *p)
{
    cql__tok *t = cql__peek(p, 1);
    if (t->type == TK_STRING) {
        char *c = cql__unquote(p, t, NULL);
        cql__next(p);
        return cql__printf(p, "'%s'", c);
    }
    if (t->type == TK_KEYWORD && is_native_type_kw(t->kw)) {
        char *r = cql__lower(p, t);
        cql__next(p);
        return r;
    }
    bool is_vector = t->type == TK_IDENT && t->len == 6 && strncasecmp(t->start, "vector", 6) == 0 &&
                     cql__peek(p, 2)->type == TK_LT;
    if (t->type == TK_KEYWORD && (t->kw == KW_LIST || t->kw == KW_SET || t->kw == KW_FROZEN)) {
        const char *nm = t->kw == KW_LIST ? "list" : t->kw == KW_SET ? "set" : "frozen";
        cql__next(p);
        cql__expect(p, TK_LT);
        char *inner = cql__type(p);
        cql__expect(p, TK_GT);
        return cql__printf(p, "%s<%s>", nm, inner);
    }
    if (t->type == TK_KEYWORD && t->kw == KW_MAP) {
        cql__next(p);
        cql__expect(p, TK_LT);
        char *k = cql__type(p);
        cql__expect(p, TK_COMMA);
        char *v = cql__type(p);
        cql__expect(p, TK_GT);
        return cql__printf(p, "map<%s, %s>", k, v);
    }
    if ((t->type == TK_KEYWORD && t->kw == KW_TUPLE) || is_vector) {
        cql__next(p);
        cql__expect(p, TK_LT);
        char *acc = cql__type(p);
        if (is_vector) {
            cql__expect(p, TK_COMMA);
            cql__tok *d = cql__peek(p, 1);
            if (d->type != TK_INTEGER)
                cql__fail_mismatch(p, "INTEGER");
            acc = cql__printf(p, "%s, %.*s", acc, (int)d->len, d->start);
            cql__next(p);
        } else {
            while (cql__accept(p, TK_COMMA))
                acc = cql__printf(p, "%s, %s", acc, cql__type(p));
        }
        cql__expect(p, TK_GT);
        return cql__printf(p, "%s<%s>", is_vector ? "vector" : "tuple", acc);
    }
    if (cql__is_ident_tok(p, 1)) {
        ast_qname q = cql__qname(p);
        if (q.ks)
            return cql__printf(p, "%s.%s", quoted_name(p, q.ks), quoted_name(p, q.name));
        return quoted_name(p, q.name);
    }
    cql__fail_noviable(p, 1, 1);
}

/* ---------------------------------------------------------------- terms */

static ast_term *new_term(cql__parser *p, ast_term_kind k)
{
    ast_term *t = cql__alloc(p, sizeof(*t));
    t->kind = k;
    t->pos = cql__pos(p);
    return t;
}

static void push_term(cql__parser *p, ast_term *t, ast_term *e)
{
    cql__push(p, &t->elems, &t->n_elems, sizeof(ast_term *), &e);
}

ast_term *cql__bind(cql__parser *p)
{
    ast_term *t = new_term(p, TERM_BIND);
    if (cql__accept(p, TK_QMARK)) {
        t->bind.name = NULL;
    } else {
        cql__expect(p, TK_COLON);
        t->bind.name = cql__ident(p);
    }
    t->bind.index = p->n_binds;
    cql__push(p, &p->bind_names, &p->n_binds, sizeof(char *), &t->bind.name);
    return t;
}

bool cql__at_bind(cql__parser *p) { return cql__is(p, TK_QMARK) || cql__is(p, TK_COLON); }

/* intValue: INTEGER | ? | :name (USING TTL, LIMIT, ...). */
ast_term *cql__int_value(cql__parser *p)
{
    if (cql__at_bind(p))
        return cql__bind(p);
    cql__tok *k = cql__peek(p, 1);
    if (k->type != TK_INTEGER)
        cql__fail_noviable(p, 1, 1);
    ast_term *t = new_term(p, TERM_LITERAL);
    t->lit.kind = LIT_INTEGER;
    t->lit.text = cql__tok_text(p, k);
    t->lit.len = k->len;
    cql__next(p);
    return t;
}

static bool literal_kind(cql__tok *k, lit_kind *out)
{
    switch (k->type) {
    case TK_STRING: *out = LIT_STRING; return true;
    case TK_INTEGER: *out = LIT_INTEGER; return true;
    case TK_FLOAT: *out = LIT_FLOAT; return true;
    case TK_BOOLEAN: *out = LIT_BOOLEAN; return true;
    case TK_DURATION: *out = LIT_DURATION; return true;
    case TK_UUID: *out = LIT_UUID; return true;
    case TK_HEX: *out = LIT_HEX; return true;
    case TK_KEYWORD:
        if (k->kw == KW_NAN || k->kw == KW_INFINITY) {
            *out = LIT_FLOAT;
            return true;
        }
        return false;
    default: return false;
    }
}

/* A constant literal at the current token (consumed), or NULL. */
ast_term *cql__literal(cql__parser *p)
{
    cql__tok *k = cql__peek(p, 1);
    lit_kind lk;
    if (!literal_kind(k, &lk))
        return NULL;
    ast_term *t = new_term(p, TERM_LITERAL);
    t->lit.kind = lk;
    if (k->type == TK_STRING) {
        t->lit.text = cql__unquote(p, k, &t->lit.len);
    } else if (k->type == TK_KEYWORD) {
        /* -NaN is NaN; -Infinity keeps its sign (Parser.g constant) */
        const char *s = k->kw == KW_NAN ? "NaN" : k->start[0] == '-' ? "-Infinity" : "Infinity";
        t->lit.text = cql__strndup(p, s, strlen(s));
        t->lit.len = strlen(s);
    } else {
        t->lit.text = k->type == TK_BOOLEAN ? cql__lower(p, k) : cql__tok_text(p, k);
        t->lit.len = k->len;
    }
    cql__next(p);
    return t;
}

/* Is token k the start of a function call: name '(' or ks '.' name '('? */
bool cql__at_function(cql__parser *p, int k)
{
    bool name_ok = cql__is_ident_tok(p, k) || cql__is_kw_at(p, k, KW_TOKEN) || cql__is_kw_at(p, k, KW_COUNT);
    if (!name_ok)
        return false;
    if (cql__peek(p, k + 1)->type == TK_LPAREN)
        return true;
    return cql__peek(p, k + 1)->type == TK_DOT &&
           (cql__is_ident_tok(p, k + 2) || cql__is_kw_at(p, k + 2, KW_TOKEN)) &&
           cql__peek(p, k + 3)->type == TK_LPAREN;
}

/* functionName: [ks.]name, where name may also be TOKEN or COUNT. */
ast_qname cql__func_name(cql__parser *p)
{
    ast_qname q = { NULL, NULL };
    if (cql__peek(p, 2)->type == TK_DOT) {
        q.ks = cql__ident(p);
        cql__next(p);
    }
    if (cql__is_kw(p, KW_TOKEN) || cql__is_kw(p, KW_COUNT)) {
        q.name = cql__lower(p, cql__peek(p, 1));
        cql__next(p);
    } else {
        q.name = cql__ident(p);
    }
    return q;
}

static ast_term *collection(cql__parser *p)
{
    if (cql__accept(p, TK_LBRACKET)) {
        ast_term *t = new_term(p, TERM_LIST);
        if (!cql__accept(p, TK_RBRACKET)) {
            do
                push_term(p, t, cql__term(p));
            while (cql__accept(p, TK_COMMA));
            cql__expect(p, TK_RBRACKET);
        }
        return t;
    }
    cql__expect(p, TK_LBRACE);
    if (cql__accept(p, TK_RBRACE))
        return new_term(p, TERM_SET);
    if (cql__is_ident_tok(p, 1) && cql__peek(p, 2)->type == TK_COLON) {
        ast_term *t = new_term(p, TERM_UDT);
        int nf = 0;
        do {
            char *f = cql__ident(p);
            cql__push(p, &t->field_names, &nf, sizeof(char *), &f);
            cql__expect(p, TK_COLON);
            push_term(p, t, cql__term(p));
        } while (cql__accept(p, TK_COMMA));
        cql__expect(p, TK_RBRACE);
        return t;
    }
    ast_term *first = cql__term(p);
    if (cql__accept(p, TK_COLON)) {
        ast_term *t = new_term(p, TERM_MAP);
        push_term(p, t, first);
        push_term(p, t, cql__term(p));
        while (cql__accept(p, TK_COMMA)) {
            push_term(p, t, cql__term(p));
            cql__expect(p, TK_COLON);
            push_term(p, t, cql__term(p));
        }
        cql__expect(p, TK_RBRACE);
        return t;
    }
    ast_term *t = new_term(p, TERM_SET);
    push_term(p, t, first);
    while (cql__accept(p, TK_COMMA))
        push_term(p, t, cql__term(p));
    cql__expect(p, TK_RBRACE);
    return t;
}

/* '(' starts a cast when a type follows and is closed by ')'. */
bool cql__at_cast(cql__parser *p)
{
    cql__tok *t = cql__peek(p, 2);
    int close = 0;
    if (t->type == TK_KEYWORD && is_native_type_kw(t->kw))
        close = 3;
    else if (cql__at_type_start(p, 2) && t->type != TK_STRING)
        return true;
    else if ((t->type == TK_IDENT || t->type == TK_QUOTED_NAME || t->type == TK_KEYWORD) &&
             cql__is_ident_tok(p, 2))
        close = cql__peek(p, 3)->type == TK_DOT && cql__is_ident_tok(p, 4) ? 5 : 3;
    if (!close || cql__peek(p, close)->type != TK_RPAREN)
        return false;
    /* Like ANTLR's syntactic predicate: a type hint only if something it can
     * apply to follows, else "(name)" is a parenthesized selector. */
    return cql__at_simple_term(p, close + 1);
}

/* term: constant | collection | UDT literal | tuple | null | bind marker |
 * function call | (type) term | -term. */
static ast_term *simple_inner(cql__parser *p)
{
    cql__tok *k = cql__peek(p, 1);
    ast_term *t = cql__literal(p);
    if (t)
        return t;
    switch (k->type) {
    case TK_QMARK:
    case TK_COLON:
        return cql__bind(p);
    case TK_LBRACKET:
    case TK_LBRACE:
        return collection(p);
    case TK_LPAREN:
        if (cql__at_cast(p)) {
            t = new_term(p, TERM_CAST);
            cql__next(p);
            t->cast_type = cql__type(p);
            cql__expect(p, TK_RPAREN);
            push_term(p, t, cql__simple_term(p));
            return t;
        }
        t = new_term(p, TERM_TUPLE);
        cql__next(p);
        do
            push_term(p, t, cql__term(p));
        while (cql__accept(p, TK_COMMA));
        cql__expect(p, TK_RPAREN);
        return t;
    case TK_KEYWORD:
        if (k->kw == KW_NULL) {
            t = new_term(p, TERM_NULL);
            cql__next(p);
            return t;
        }
        break;
    default:
        break;
    }
    if (k->type == TK_KEYWORD && k->kw == KW_CAST && cql__peek(p, 2)->type == TK_LPAREN) {
        /* CAST(term AS native_type): Cassandra's cast functions, system.castas<type> */
        t = new_term(p, TERM_FUNC);
        cql__next(p);
        cql__next(p);
        push_term(p, t, cql__simple_term(p));
        cql__expect_kw(p, KW_AS);
        cql__tok *ty = cql__peek(p, 1);
        if (ty->type != TK_KEYWORD || !is_native_type_kw(ty->kw))
            cql__fail_noviable(p, 1, 1);
        t->func.ks = cql__strndup(p, "system", 6);
        t->func.name = cql__printf(p, "castas%s", cql__lower(p, ty));
        cql__next(p);
        cql__expect(p, TK_RPAREN);
        return t;
    }
    if (cql__at_function(p, 1)) {
        t = new_term(p, TERM_FUNC);
        t->func = cql__func_name(p);
        cql__expect(p, TK_LPAREN);
        if (!cql__accept(p, TK_RPAREN)) {
            do
                push_term(p, t, cql__term(p));
            while (cql__accept(p, TK_COMMA));
            cql__expect(p, TK_RPAREN);
        }
        return t;
    }
    cql__fail_noviable(p, 1, 1);
}

char *cql__type(cql__parser *p)
{
    cql__enter(p);
    char *r = type_inner(p);
    cql__leave(p);
    return r;
}

ast_term *cql__simple_term(cql__parser *p)
{
    cql__enter(p);
    ast_term *t = simple_inner(p);
    cql__leave(p);
    return t;
}

/* Can a simpleTerm start at token k?  (Decides whether an operator after a
 * term continues an arithmetic expression, as ANTLR's lookahead does: in
 * `SET l = [1] + l` the '+' is the prepend form, not an addition.) */
bool cql__at_simple_term(cql__parser *p, int k)
{
    cql__tok *t = cql__peek(p, k);
    lit_kind lk;
    if (literal_kind(t, &lk))
        return true;
    switch (t->type) {
    case TK_QMARK: case TK_COLON: case TK_LBRACKET: case TK_LBRACE: case TK_LPAREN:
        return true;
    case TK_KEYWORD:
        if (t->kw == KW_NULL)
            return true;
        if (t->kw == KW_CAST && cql__peek(p, k + 1)->type == TK_LPAREN)
            return true;
        break;
    default:
        break;
    }
    return cql__at_function(p, k);
}

/* An operator function call, as Cassandra represents arithmetic
 * (OperationFcts: system._add, _substract, _multiply, _divide, _modulo). */
static ast_term *operation(cql__parser *p, cql__tok_type op, ast_term *l, ast_term *r)
{
    ast_term *t = cql__alloc(p, sizeof(*t));
    t->kind = TERM_FUNC;
    t->pos = l->pos;
    t->func.ks = cql__strndup(p, "system", 6);
    const char *n = cql__operator_function(op);
    t->func.name = cql__strndup(p, n, strlen(n));
    push_term(p, t, l);
    push_term(p, t, r);
    return t;
}

const char *cql__operator_function(cql__tok_type op)
{
    switch (op) {
    case TK_PLUS: return "_add";
    case TK_MINUS: return "_substract";
    case TK_STAR: return "_multiply";
    case TK_SLASH: return "_divide";
    default: return "_modulo";
    }
}

/* termGroup: '-' simpleTerm (TERM_NEG) | simpleTerm */
static ast_term *term_group(cql__parser *p)
{
    if (cql__is(p, TK_MINUS)) {
        ast_term *t = new_term(p, TERM_NEG);
        cql__next(p);
        push_term(p, t, cql__simple_term(p));
        return t;
    }
    return cql__simple_term(p);
}

/* Does an operator at token 1 continue the expression? */
static bool continues(cql__parser *p)
{
    return cql__at_simple_term(p, 2) || (cql__peek(p, 2)->type == TK_MINUS && cql__at_simple_term(p, 3));
}

static ast_term *term_mult(cql__parser *p)
{
    ast_term *l = term_group(p);
    for (;;) {
        cql__tok_type op = cql__peek(p, 1)->type;
        if ((op != TK_STAR && op != TK_SLASH && op != TK_PERCENT) || !continues(p))
            return l;
        cql__next(p);
        l = operation(p, op, l, term_group(p));
    }
}

/* term: termMultiplication (('+' | '-') termMultiplication)* */
ast_term *cql__term(cql__parser *p)
{
    cql__enter(p);
    ast_term *l = term_mult(p);
    for (;;) {
        cql__tok_type op = cql__peek(p, 1)->type;
        if ((op != TK_PLUS && op != TK_MINUS) || !continues(p))
            break;
        cql__next(p);
        l = operation(p, op, l, term_mult(p));
    }
    cql__leave(p);
    return l;
}

/* ---------------------------------------------------------------- properties */

/* propertyValue: a constant (raw text) or an unreserved keyword. */
static void prop_value_text(cql__parser *p, ast_prop *pr, bool *ok)
{
    cql__tok *k = cql__peek(p, 1);
    ast_term *t = cql__literal(p);
    *ok = true;
    if (t) {
        pr->kind = t->lit.kind == LIT_STRING ? PROP_STRING
                 : (t->lit.kind == LIT_INTEGER || t->lit.kind == LIT_FLOAT) ? PROP_NUMBER
                 : t->lit.kind == LIT_BOOLEAN ? PROP_BOOL : PROP_STRING;
        pr->value = t->lit.text;
        return;
    }
    if (k->type == TK_KEYWORD && !cql__kw_reserved(k->kw)) {
        pr->kind = PROP_IDENT;
        pr->value = cql__lower(p, k);
        cql__next(p);
        return;
    }
    *ok = false;
}

/* A term inside a property map and its source text; constants only
 * (Parser.g convertPropertyMap). */
static ast_term *prop_term(cql__parser *p, char **src)
{
    int start = cql__peek_index(p, 1);
    ast_term *t = cql__term(p);
    *src = cql__src_text(p, start, cql__last_index(p));
    return t;
}

void cql__prop(cql__parser *p, ast_props *props)
{
    ast_prop pr;
    memset(&pr, 0, sizeof(pr));
    pr.pos = cql__pos(p);
    pr.name = cql__ident(p);
    cql__expect(p, TK_EQ);
    if (cql__is(p, TK_LBRACE)) {
        cql__next(p);
        pr.kind = PROP_MAP;
        int nv = 0;
        if (!cql__accept(p, TK_RBRACE)) {
            do {
                char *ks, *vs;
                ast_term *kt = prop_term(p, &ks);
                cql__expect(p, TK_COLON);
                ast_term *vt = prop_term(p, &vs);
                if (kt->kind != TERM_LITERAL)
                    cql__fail_msg(p, "Invalid property name: %s%s", ks,
                                  kt->kind == TERM_BIND ? " (bind variables are not supported in DDL queries)" : "");
                if (vt->kind != TERM_LITERAL)
                    cql__fail_msg(p, "Invalid property value: %s for property: %s%s", vs, ks,
                                  vt->kind == TERM_BIND ? " (bind variables are not supported in DDL queries)" : "");
                char *k = kt->lit.text, *v = vt->lit.text;
                for (int i = 0; i < pr.n_map; i++)
                    if (strcmp(pr.map_keys[i], k) == 0)
                        cql__fail_msg(p, "Multiple definition for property %s", k);
                cql__push(p, &pr.map_keys, &pr.n_map, sizeof(char *), &k);
                cql__push(p, &pr.map_values, &nv, sizeof(char *), &v);
            } while (cql__accept(p, TK_COMMA));
            cql__expect(p, TK_RBRACE);
        }
    } else {
        bool ok;
        prop_value_text(p, &pr, &ok);
        if (!ok)
            cql__fail_noviable(p, 1, 1);
    }
    for (int i = 0; i < props->n; i++)
        if (strcmp(props->items[i].name, pr.name) == 0)
            cql__fail_msg(p, "Multiple definition for property %s", pr.name);
    cql__push(p, &props->items, &props->n, sizeof(ast_prop), &pr);
}

void cql__props(cql__parser *p, ast_props *props)
{
    do
        cql__prop(p, props);
    while (cql__accept_kw(p, KW_AND));
}
