/*
 * parser_dml.c: SELECT, INSERT, UPDATE, DELETE and BATCH (owner: parser),
 * with their selectors, WHERE relations, LWT conditions and USING clauses.
 * Grammar as Cassandra 4.1's Parser.g (selectStatement, insertStatement,
 * updateStatement, deleteStatement, batchStatement, relation,
 * columnCondition, columnOperation).
 */
#include <string.h>
#include "cql/lexer_int.h"

/* ---------------------------------------------------------------- selectors */

static ast_selector *new_sel(cql__parser *p, ast_selector_kind k)
{
    ast_selector *s = cql__alloc(p, sizeof(*s));
    s->kind = k;
    s->pos = cql__pos(p);
    return s;
}

static void push_arg(cql__parser *p, ast_selector *s, ast_selector *a)
{
    cql__push(p, &s->args, &s->n_args, sizeof(ast_selector *), &a);
}

static ast_selector *unaliased_selector(cql__parser *p);

/* Function arguments: '(' (selector (',' selector)*)? ')'. */
static void sel_args(cql__parser *p, ast_selector *s)
{
    cql__expect(p, TK_LPAREN);
    if (cql__accept(p, TK_RPAREN))
        return;
    do
        push_arg(p, s, unaliased_selector(p));
    while (cql__accept(p, TK_COMMA));
    cql__expect(p, TK_RPAREN);
}

static bool at_term_start(cql__parser *p)
{
    cql__tok *t = cql__peek(p, 1);
    switch (t->type) {
    case TK_STRING: case TK_INTEGER: case TK_FLOAT: case TK_BOOLEAN: case TK_DURATION:
    case TK_UUID: case TK_HEX: case TK_QMARK: case TK_COLON: case TK_LBRACKET:
    case TK_LBRACE: case TK_LPAREN:
        return true;
    case TK_KEYWORD:
        return t->kw == KW_NULL || t->kw == KW_NAN || t->kw == KW_INFINITY;
    default:
        return false;
    }
}

/* '(' selector (',' selector)* ')' (selectionTupleOrNestedSelector): one
 * selector in parentheses is that selector; a tuple of terms is a tuple
 * literal; a tuple of other selectors has no AST node and is refused. */
static ast_selector *paren_selector(cql__parser *p)
{
    ast_pos pos = cql__pos(p);
    cql__next(p);
    ast_selector *first = unaliased_selector(p);
    if (cql__accept(p, TK_RPAREN))
        return first;
    ast_term *tuple = cql__alloc(p, sizeof(*tuple));
    tuple->kind = TERM_TUPLE;
    tuple->pos = pos;
    ast_selector *e = first;
    for (;;) {
        if (e->kind != SEL_TERM)
            cql__fail_msg(p, "line %d:%d tuples of selectors are not supported", e->pos.line, e->pos.col - 1);
        cql__push(p, &tuple->elems, &tuple->n_elems, sizeof(ast_term *), &e->term);
        if (!cql__accept(p, TK_COMMA))
            break;
        e = unaliased_selector(p);
    }
    cql__expect(p, TK_RPAREN);
    ast_selector *s = cql__alloc(p, sizeof(*s));
    s->kind = SEL_TERM;
    s->pos = pos;
    s->term = tuple;
    return s;
}

static ast_selector *simple_selector(cql__parser *p)
{
    ast_selector *s;
    cql__tok *t = cql__peek(p, 1);
    if (!cql__is_ident_tok(p, 1) && !at_term_start(p) && !cql__is_kw(p, KW_TOKEN))
        cql__fail_noviable(p, 1, 1);
    bool call = cql__peek(p, 2)->type == TK_LPAREN;
    if (t->type == TK_KEYWORD && call) {
        switch (t->kw) {
        case KW_COUNT: {
            cql__tok *a = cql__peek(p, 3);
            if ((a->type == TK_STAR || (a->type == TK_INTEGER && a->len == 1 && a->start[0] == '1')) &&
                cql__peek(p, 4)->type == TK_RPAREN) {
                s = new_sel(p, SEL_COUNT_STAR);
                cql__next(p);
                cql__next(p);
                cql__next(p);
                cql__next(p);
                return s;
            }
            break;
        }
        case KW_WRITETIME:
        case KW_TTL:
        case KW_MAXWRITETIME:
            s = new_sel(p, t->kw == KW_TTL ? SEL_TTL : t->kw == KW_WRITETIME ? SEL_WRITETIME : SEL_FUNC);
            if (t->kw == KW_MAXWRITETIME)
                s->func.name = cql__strndup(p, "maxwritetime", 12);
            cql__next(p);
            cql__next(p);
            s->column = cql__ident(p);
            if (s->kind == SEL_FUNC) {
                ast_selector *c = new_sel(p, SEL_COLUMN);
                c->column = s->column;
                c->text = s->column;
                push_arg(p, s, c);
            }
            cql__expect(p, TK_RPAREN);
            return s;
        case KW_CAST:
            s = new_sel(p, SEL_CAST);
            cql__next(p);
            cql__next(p);
            push_arg(p, s, unaliased_selector(p));
            cql__expect_kw(p, KW_AS);
            if (!cql__at_type_start(p, 1) || cql__is(p, TK_STRING))
                cql__fail_noviable(p, 1, 1);
            s->cast_type = cql__type(p);
            cql__expect(p, TK_RPAREN);
            return s;
        default:
            break;
        }
    }
    if (cql__at_function(p, 1)) {
        s = new_sel(p, SEL_FUNC);
        s->func = cql__func_name(p);
        sel_args(p, s);
        return s;
    }
    if (cql__is_ident_tok(p, 1)) {
        s = new_sel(p, SEL_COLUMN);
        s->column = cql__ident(p);
        return s;
    }
    if (cql__is(p, TK_LPAREN) && !cql__at_cast(p))
        return paren_selector(p);
    if (at_term_start(p)) {
        s = new_sel(p, SEL_TERM);
        s->term = cql__simple_term(p);
        return s;
    }
    cql__fail_noviable(p, 1, 1);
}

/* simple selector followed by .field / [key] / [from..to] */
static ast_selector *unaliased_inner(cql__parser *p)
{
    int start = cql__peek_index(p, 1);
    ast_selector *s = simple_selector(p);
    s->text = cql__src_text(p, start, cql__last_index(p));
    for (;;) {
        if (cql__is(p, TK_DOT)) {
            ast_selector *f = new_sel(p, SEL_FIELD);
            cql__next(p);
            f->field = cql__ident(p);
            push_arg(p, f, s);
            s = f;
        } else if (cql__is(p, TK_LBRACKET)) {
            ast_selector *e = new_sel(p, SEL_ELEMENT);
            cql__next(p);
            if (!cql__is(p, TK_RANGE))
                e->term = cql__term(p);
            if (cql__accept(p, TK_RANGE)) {
                e->kind = SEL_SLICE;
                if (!cql__is(p, TK_RBRACKET))
                    e->term2 = cql__term(p);
            } else if (!e->term) {
                cql__fail_noviable(p, 1, 1);
            }
            cql__expect(p, TK_RBRACKET);
            push_arg(p, e, s);
            s = e;
        } else {
            break;
        }
        s->text = cql__src_text(p, start, cql__last_index(p));
    }
    return s;
}

/* Arithmetic on selectors becomes Cassandra's operator functions
 * (system._add ...), negation system._negate (Selectable.WithFunction). */
static ast_selector *sel_operation(cql__parser *p, const char *fn, int start, ast_selector *l, ast_selector *r)
{
    ast_selector *s = cql__alloc(p, sizeof(*s));
    s->kind = SEL_FUNC;
    s->pos = l->pos;
    s->func.ks = cql__strndup(p, "system", 6);
    s->func.name = cql__strndup(p, fn, strlen(fn));
    push_arg(p, s, l);
    if (r)
        push_arg(p, s, r);
    s->text = cql__src_text(p, start, cql__last_index(p));
    return s;
}

/* selectionGroup: '-' selectionGroup | selector with field/element modifiers */
static ast_selector *sel_group(cql__parser *p)
{
    if (cql__is(p, TK_MINUS)) {
        int start = cql__peek_index(p, 1);
        ast_pos pos = cql__pos(p);
        cql__next(p);
        cql__enter(p);
        ast_selector *g = sel_group(p);
        cql__leave(p);
        ast_selector *s = sel_operation(p, "_negate", start, g, NULL);
        s->pos = pos;
        return s;
    }
    return unaliased_inner(p);
}

static ast_selector *sel_mult(cql__parser *p)
{
    int start = cql__peek_index(p, 1);
    ast_selector *l = sel_group(p);
    for (;;) {
        cql__tok_type op = cql__peek(p, 1)->type;
        if (op != TK_STAR && op != TK_SLASH && op != TK_PERCENT)
            return l;
        cql__next(p);
        ast_selector *r = sel_group(p);
        l = sel_operation(p, cql__operator_function(op), start, l, r);
    }
}

/* selectionAddition: selectionMultiplication (('+' | '-') ...)* */
static ast_selector *unaliased_selector(cql__parser *p)
{
    cql__enter(p);
    int start = cql__peek_index(p, 1);
    ast_selector *l = sel_mult(p);
    for (;;) {
        cql__tok_type op = cql__peek(p, 1)->type;
        if (op != TK_PLUS && op != TK_MINUS)
            break;
        cql__next(p);
        ast_selector *r = sel_mult(p);
        l = sel_operation(p, cql__operator_function(op), start, l, r);
    }
    cql__leave(p);
    return l;
}

static ast_selector *selector(cql__parser *p)
{
    ast_selector *s = unaliased_selector(p);
    if (cql__accept_kw(p, KW_AS))
        s->alias = cql__ident(p);
    return s;
}

/* ---------------------------------------------------------------- WHERE */

static ast_relation *new_rel(cql__parser *p, ast_relation_kind k)
{
    ast_relation *r = cql__alloc(p, sizeof(*r));
    r->kind = k;
    r->pos = cql__pos(p);
    return r;
}

static bool rel_op(cql__parser *p, ast_op *op)
{
    switch (cql__peek(p, 1)->type) {
    case TK_EQ: *op = OP_EQ; break;
    case TK_LT: *op = OP_LT; break;
    case TK_LTE: *op = OP_LTE; break;
    case TK_GT: *op = OP_GT; break;
    case TK_GTE: *op = OP_GTE; break;
    case TK_NEQ: *op = OP_NEQ; break;
    default: return false;
    }
    cql__next(p);
    return true;
}

static void add_col(cql__parser *p, ast_relation *r, char *c)
{
    cql__push(p, &r->columns, &r->n_columns, sizeof(char *), &c);
}

/* IN list: '(' (term (',' term)*)? ')' | bind marker. */
static void in_values(cql__parser *p, ast_term **value, ast_term ***in, int *n_in, bool *in_marker)
{
    if (cql__at_bind(p)) {
        *value = cql__bind(p);
        *in_marker = true;
        return;
    }
    cql__expect(p, TK_LPAREN);
    if (cql__accept(p, TK_RPAREN))
        return;
    do {
        ast_term *t = cql__term(p);
        cql__push(p, in, n_in, sizeof(ast_term *), &t);
    } while (cql__accept(p, TK_COMMA));
    cql__expect(p, TK_RPAREN);
}

static ast_relation *relation(cql__parser *p);

static ast_relation *multi_relation(cql__parser *p)
{
    ast_relation *r = new_rel(p, REL_MULTI);
    cql__expect(p, TK_LPAREN);
    do
        add_col(p, r, cql__ident(p));
    while (cql__accept(p, TK_COMMA));
    cql__expect(p, TK_RPAREN);
    if (cql__accept_kw(p, KW_IN)) {
        r->op = OP_IN;
        in_values(p, &r->value, &r->in, &r->n_in, &r->in_marker);
        return r;
    }
    if (!rel_op(p, &r->op))
        cql__fail_noviable(p, 1, 1);
    if (cql__at_bind(p))
        r->value = cql__bind(p);
    else if (cql__is(p, TK_LPAREN))
        r->value = cql__term(p);
    else
        cql__fail_noviable(p, 1, 1);
    return r;
}

static ast_relation *relation_inner(cql__parser *p)
{
    if (cql__is(p, TK_LPAREN)) {
        if (cql__is_ident_tok(p, 2) &&
            (cql__peek(p, 3)->type == TK_COMMA || cql__peek(p, 3)->type == TK_RPAREN))
            return multi_relation(p);
        cql__next(p);
        ast_relation *r = relation(p);
        cql__expect(p, TK_RPAREN);
        return r;
    }
    if (cql__is_kw(p, KW_TOKEN) && cql__peek(p, 2)->type == TK_LPAREN) {
        ast_relation *r = new_rel(p, REL_TOKEN);
        cql__next(p);
        cql__next(p);
        if (!cql__is(p, TK_RPAREN)) {
            do
                add_col(p, r, cql__ident(p));
            while (cql__accept(p, TK_COMMA));
        }
        cql__expect(p, TK_RPAREN);
        if (!rel_op(p, &r->op))
            cql__fail_noviable(p, 1, 1);
        r->value = cql__term(p);
        return r;
    }
    ast_relation *r = new_rel(p, REL_COLUMN);
    add_col(p, r, cql__ident(p));
    if (cql__accept(p, TK_LBRACKET)) {
        r->kind = REL_ELEMENT;
        r->key = cql__term(p);
        cql__expect(p, TK_RBRACKET);
        if (!rel_op(p, &r->op))
            cql__fail_noviable(p, 1, 1);
        r->value = cql__term(p);
        return r;
    }
    if (cql__accept_kw(p, KW_IN)) {
        r->op = OP_IN;
        in_values(p, &r->value, &r->in, &r->n_in, &r->in_marker);
    } else if (cql__accept_kw(p, KW_CONTAINS)) {
        r->op = cql__accept_kw(p, KW_KEY) ? OP_CONTAINS_KEY : OP_CONTAINS;
        r->value = cql__term(p);
    } else if (cql__accept_kw(p, KW_IS)) {
        cql__expect_kw(p, KW_NOT);
        cql__expect_kw(p, KW_NULL);
        r->op = OP_IS_NOT_NULL;
    } else if (cql__accept_kw(p, KW_LIKE)) {
        r->op = OP_LIKE;
        r->value = cql__term(p);
    } else if (rel_op(p, &r->op)) {
        r->value = cql__term(p);
    } else {
        /* ANTLR predicts the relation form from the column on: the snippet
         * marks the column, the message names the token that failed */
        cql__fail_noviable(p, 1, 0);
    }
    return r;
}

static ast_relation *relation(cql__parser *p)
{
    cql__enter(p);
    ast_relation *r = relation_inner(p);
    cql__leave(p);
    return r;
}

void cql__parse_where(cql__parser *p, ast_relation ***rels, int *n)
{
    do {
        ast_relation *r = relation(p);
        cql__push(p, rels, n, sizeof(ast_relation *), &r);
    } while (cql__accept_kw(p, KW_AND));
}

/* ---------------------------------------------------------------- SELECT */

/* JSON / DISTINCT are unreserved: they are modifiers unless what follows
 * makes them a column name. */
static bool modifier_kw(cql__parser *p, int kw)
{
    if (!cql__is_kw(p, kw))
        return false;
    cql__tok *n = cql__peek(p, 2);
    if (n->type == TK_COMMA || n->type == TK_DOT || n->type == TK_LBRACKET || n->type == TK_LPAREN)
        return false;
    if (n->type == TK_KEYWORD && (n->kw == KW_FROM || n->kw == KW_AS))
        return false;
    return true;
}

static void order_by(cql__parser *p, ast_order **out, int *n)
{
    do {
        ast_order o = { NULL, false };
        o.column = cql__ident(p);
        if (cql__accept_kw(p, KW_DESC))
            o.desc = true;
        else
            cql__accept_kw(p, KW_ASC);
        cql__push(p, out, n, sizeof(ast_order), &o);
    } while (cql__accept(p, TK_COMMA));
}

/* SELECT [JSON] [DISTINCT] (* | selectors) FROM cf [WHERE ...] [GROUP BY]
 * [ORDER BY] [PER PARTITION LIMIT] [LIMIT] [ALLOW FILTERING].  For a
 * materialized view (in_view) only up to FROM cf: the caller parses WHERE. */
void cql__parse_select(cql__parser *p, ast_select *s, bool in_view)
{
    cql__expect_kw(p, KW_SELECT);
    if (!in_view && modifier_kw(p, KW_JSON)) {
        cql__next(p);
        s->json = true;
    }
    if (!in_view && modifier_kw(p, KW_DISTINCT)) {
        cql__next(p);
        s->distinct = true;
    }
    if (cql__accept(p, TK_STAR)) {
        s->star = true;
    } else {
        do {
            ast_selector *sel = selector(p);
            cql__push(p, &s->sels, &s->n_sels, sizeof(ast_selector *), &sel);
        } while (cql__accept(p, TK_COMMA));
    }
    cql__expect_kw(p, KW_FROM);
    s->table = cql__qname(p);
    if (in_view)
        return;
    if (cql__accept_kw(p, KW_WHERE))
        cql__parse_where(p, &s->where, &s->n_where);
    if (cql__accept_kw(p, KW_GROUP)) {
        cql__expect_kw(p, KW_BY);
        do {   /* groupByClause: an unaliased selector (a column, or a function of one: floor(ts, 1h)) */
            ast_selector *g = unaliased_selector(p);
            char *c = g->kind == SEL_COLUMN ? g->column : NULL;
            int n = s->n_group_by;
            cql__push(p, &s->group_by, &s->n_group_by, sizeof(char *), &c);
            cql__push(p, &s->group_sels, &n, sizeof(ast_selector *), &g);
        } while (cql__accept(p, TK_COMMA));
    }
    if (cql__accept_kw(p, KW_ORDER)) {
        cql__expect_kw(p, KW_BY);
        order_by(p, &s->order, &s->n_order);
    }
    if (cql__accept_kw(p, KW_PER)) {
        cql__expect_kw(p, KW_PARTITION);
        cql__expect_kw(p, KW_LIMIT);
        s->per_partition_limit = cql__int_value(p);
    }
    if (cql__accept_kw(p, KW_LIMIT))
        s->limit = cql__int_value(p);
    if (cql__accept_kw(p, KW_ALLOW)) {
        cql__expect_kw(p, KW_FILTERING);
        s->allow_filtering = true;
    }
}

/* ---------------------------------------------------------------- USING / IF */

static void using_clause(cql__parser *p, ast_using *u, bool delete_only)
{
    if (!cql__accept_kw(p, KW_USING))
        return;
    do {
        if (cql__accept_kw(p, KW_TIMESTAMP)) {
            u->timestamp = cql__int_value(p);
        } else if (!delete_only && cql__accept_kw(p, KW_TTL)) {
            u->ttl = cql__int_value(p);
        } else if (delete_only) {
            cql__fail_mismatch(p, "K_TIMESTAMP");
        } else {
            cql__fail_noviable(p, 1, 1);
        }
    } while (!delete_only && cql__accept_kw(p, KW_AND));
}

static bool cond_op(cql__parser *p, ast_condition *c)
{
    ast_op op;
    if (rel_op(p, &op)) {
        c->op = op;
        c->value = cql__term(p);
        return true;
    }
    if (cql__accept_kw(p, KW_IN)) {
        c->op = OP_IN;
        in_values(p, &c->value, &c->in, &c->n_in, &c->in_marker);
        return true;
    }
    if (cql__accept_kw(p, KW_CONTAINS)) {
        c->op = cql__accept_kw(p, KW_KEY) ? OP_CONTAINS_KEY : OP_CONTAINS;
        c->value = cql__term(p);
        return true;
    }
    return false;
}

/* IF EXISTS | IF cond (AND cond)* */
static void if_clause(cql__parser *p, bool *if_exists, ast_condition **conds, int *n)
{
    if (!cql__accept_kw(p, KW_IF))
        return;
    if (cql__is_kw(p, KW_EXISTS) && !cql__is_ident_tok(p, 2) &&
        cql__peek(p, 2)->type != TK_EQ && cql__peek(p, 2)->type != TK_LBRACKET &&
        cql__peek(p, 2)->type != TK_DOT) {
        cql__next(p);
        *if_exists = true;
        return;
    }
    do {
        ast_condition c;
        memset(&c, 0, sizeof(c));
        c.column = cql__ident(p);
        if (cql__accept(p, TK_LBRACKET)) {
            c.elem = cql__term(p);
            cql__expect(p, TK_RBRACKET);
        } else if (cql__accept(p, TK_DOT)) {
            c.field = cql__ident(p);
        }
        if (!cond_op(p, &c))
            cql__fail_noviable(p, 1, 1);
        cql__push(p, conds, n, sizeof(ast_condition), &c);
    } while (cql__accept_kw(p, KW_AND));
}

/* ---------------------------------------------------------------- INSERT */

void cql__parse_insert(cql__parser *p, cql_stmt *st)
{
    ast_insert *in = &st->u.insert;
    st->kind = STMT_INSERT;
    cql__expect_kw(p, KW_INSERT);
    cql__expect_kw(p, KW_INTO);
    in->table = cql__qname(p);
    if (cql__accept_kw(p, KW_JSON)) {
        if (cql__is(p, TK_STRING))
            in->json = cql__literal(p);
        else if (cql__at_bind(p))
            in->json = cql__bind(p);
        else
            cql__fail_noviable(p, 1, 1);
        if (cql__accept_kw(p, KW_DEFAULT)) {
            if (cql__accept_kw(p, KW_UNSET))
                in->json_default_unset = true;
            else if (!cql__accept_kw(p, KW_NULL))
                cql__fail_noviable(p, 1, 1);
        }
    } else {
        if (!cql__is(p, TK_LPAREN))
            cql__fail_noviable(p, 1, 1);
        cql__next(p);
        do {
            char *c = cql__ident(p);
            cql__push(p, &in->columns, &in->n_columns, sizeof(char *), &c);
        } while (cql__accept(p, TK_COMMA));
        cql__expect(p, TK_RPAREN);
        cql__expect_kw(p, KW_VALUES);
        cql__expect(p, TK_LPAREN);
        do {
            ast_term *t = cql__term(p);
            cql__push(p, &in->values, &in->n_values, sizeof(ast_term *), &t);
        } while (cql__accept(p, TK_COMMA));
        cql__expect(p, TK_RPAREN);
    }
    if (cql__accept_kw(p, KW_IF)) {
        cql__expect_kw(p, KW_NOT);
        cql__expect_kw(p, KW_EXISTS);
        in->if_not_exists = true;
    }
    using_clause(p, &in->using, false);
}

/* ---------------------------------------------------------------- UPDATE */

static void column_operation(cql__parser *p, ast_set_op *op)
{
    op->pos = cql__pos(p);
    op->column = cql__ident(p);
    if (cql__is(p, TK_PLUS_EQ) || cql__is(p, TK_MINUS_EQ)) {
        op->kind = cql__is(p, TK_PLUS_EQ) ? SET_ADD_ASSIGN : SET_SUB_ASSIGN;
        cql__next(p);
        op->value = cql__term(p);
        return;
    }
    if (cql__accept(p, TK_LBRACKET)) {
        op->kind = SET_ELEMENT;
        op->key = cql__term(p);
        cql__expect(p, TK_RBRACKET);
        cql__expect(p, TK_EQ);
        op->value = cql__term(p);
        return;
    }
    if (cql__accept(p, TK_DOT)) {
        op->kind = SET_FIELD;
        op->field = cql__ident(p);
        cql__expect(p, TK_EQ);
        op->value = cql__term(p);
        return;
    }
    if (!cql__accept(p, TK_EQ))
        cql__fail_noviable(p, 1, 1);   /* columnOperationDifferentiator */
    /* col = col + v | col = col - v | col = col -1 */
    if (cql__is_ident_tok(p, 1) && !cql__at_function(p, 1)) {
        char *c = cql__ident(p);
        if (strcmp(c, op->column) != 0)
            cql__fail_msg(p, "Only expressions of the form X = X %s<value> are supported.",
                          cql__is(p, TK_MINUS) ? "-" : "+");
        if (cql__is(p, TK_INTEGER) && cql__peek(p, 1)->start[0] == '-') {
            op->kind = SET_ADD;
            op->value = cql__term(p);
            return;
        }
        if (cql__accept(p, TK_PLUS))
            op->kind = SET_ADD;
        else if (cql__accept(p, TK_MINUS))
            op->kind = SET_SUB;
        else
            cql__fail_noviable(p, 1, 1);
        op->value = cql__term(p);
        return;
    }
    op->kind = SET_ASSIGN;
    op->value = cql__term(p);
    if (cql__accept(p, TK_PLUS)) {
        char *c = cql__ident(p);
        if (strcmp(c, op->column) != 0)
            cql__fail_msg(p, "Only expressions of the form X = <value> + X are supported.");
        op->kind = SET_PREPEND;
    }
}

void cql__parse_update(cql__parser *p, cql_stmt *st)
{
    ast_update *u = &st->u.update;
    st->kind = STMT_UPDATE;
    cql__expect_kw(p, KW_UPDATE);
    u->table = cql__qname(p);
    using_clause(p, &u->using, false);
    cql__expect_kw(p, KW_SET);
    do {
        ast_set_op op;
        memset(&op, 0, sizeof(op));
        column_operation(p, &op);
        cql__push(p, &u->sets, &u->n_sets, sizeof(ast_set_op), &op);
    } while (cql__accept(p, TK_COMMA));
    cql__expect_kw(p, KW_WHERE);
    cql__parse_where(p, &u->where, &u->n_where);
    if_clause(p, &u->if_exists, &u->conds, &u->n_conds);
}

/* ---------------------------------------------------------------- DELETE */

void cql__parse_delete(cql__parser *p, cql_stmt *st)
{
    ast_delete *d = &st->u.del;
    st->kind = STMT_DELETE;
    cql__expect_kw(p, KW_DELETE);
    if (!cql__is_kw(p, KW_FROM)) {
        do {
            ast_delete_target t;
            memset(&t, 0, sizeof(t));
            t.column = cql__ident(p);
            if (cql__accept(p, TK_LBRACKET)) {
                t.key = cql__term(p);
                cql__expect(p, TK_RBRACKET);
            } else if (cql__accept(p, TK_DOT)) {
                t.field = cql__ident(p);
            }
            cql__push(p, &d->targets, &d->n_targets, sizeof(t), &t);
        } while (cql__accept(p, TK_COMMA));
    }
    cql__expect_kw(p, KW_FROM);
    d->table = cql__qname(p);
    using_clause(p, &d->using, true);
    cql__expect_kw(p, KW_WHERE);
    cql__parse_where(p, &d->where, &d->n_where);
    if_clause(p, &d->if_exists, &d->conds, &d->n_conds);
}

/* ---------------------------------------------------------------- BATCH */

/* BEGIN [UNLOGGED|COUNTER] BATCH [USING TIMESTAMP x] (dml [;])* APPLY BATCH.
 * Children are cql_stmt nodes in the batch's arena (their own arena field
 * unused); their bind markers are numbered across the whole batch, and
 * their bind_names point into the batch's array (fixed up by cql_parse). */
void cql__parse_batch(cql__parser *p, cql_stmt *st)
{
    ast_batch *b = &st->u.batch;
    st->kind = STMT_BATCH;
    cql__expect_kw(p, KW_BEGIN);
    if (cql__accept_kw(p, KW_UNLOGGED))
        b->kind = BATCH_UNLOGGED;
    else if (cql__accept_kw(p, KW_COUNTER))
        b->kind = BATCH_COUNTER;
    else
        b->kind = BATCH_LOGGED;
    cql__expect_kw(p, KW_BATCH);
    using_clause(p, &b->using, false);
    for (;;) {
        if (cql__is_kw(p, KW_APPLY))
            break;
        cql_stmt *c = cql__alloc(p, sizeof(*c));
        int first = p->n_binds;
        int start = cql__peek_index(p, 1);
        if (cql__is_kw(p, KW_INSERT))
            cql__parse_insert(p, c);
        else if (cql__is_kw(p, KW_UPDATE))
            cql__parse_update(p, c);
        else if (cql__is_kw(p, KW_DELETE))
            cql__parse_delete(p, c);
        else
            cql__fail_noviable(p, 1, 1);
        c->text = cql__src_text(p, start, cql__last_index(p));
        c->text_len = strlen(c->text);
        c->n_binds = p->n_binds - first;
        c->bind_names = (char **)(intptr_t)first;   /* fixed up at the end */
        cql__push(p, &b->stmts, &b->n_stmts, sizeof(cql_stmt *), &c);
        cql__accept(p, TK_SEMI);
    }
    cql__expect_kw(p, KW_APPLY);
    cql__expect_kw(p, KW_BATCH);
}
