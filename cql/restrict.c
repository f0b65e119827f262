/*
 * restrict.c: WHERE clause analysis for SELECT, UPDATE and DELETE.
 * Owner: exec-read.  Callers: exec_select.c, and the write side through
 * exec_int.h (cql__where_analyze).
 *
 * Relations are sorted into three families (Cassandra's
 * cql3/restrictions/StatementRestrictions):
 *   partition key:  = / IN per component (cartesian product -> serialized
 *                   keys), or token(...) ranges;
 *   clustering:     groups fixing a prefix by = / IN (single- or
 *                   multi-column), then at most one slice (single- or
 *                   multi-column) -> byte-comparable slices for storage;
 *   the rest:       row filters (ALLOW FILTERING).
 *
 * Clustering bounds use the conventions of types.h: a start bound is a key
 * compared with `row >= start` (exclusive start P = P ++ 0xFF); an end bound
 * is compared with `row < end` (inclusive end P = P ++ 0xFF).  Starts are
 * passed to storage with inclusive=true, ends with inclusive=false; an
 * unbounded side is len 0, inclusive=true.  DESC columns are stored inverted,
 * so a value-space lower bound on a DESC column becomes a byte-space end.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cql/restrict_int.h"
#include "cql/index.h"   /* index hook (issue 5) */
#include "common/alloc.h"
#include "common/hash.h"

static const char *op_text(ast_op op)
{
    switch (op) {
    case OP_EQ: return "=";
    case OP_LT: return "<";
    case OP_LTE: return "<=";
    case OP_GT: return ">";
    case OP_GTE: return ">=";
    case OP_NEQ: return "!=";
    case OP_IN: return "IN";
    case OP_CONTAINS: return "CONTAINS";
    case OP_CONTAINS_KEY: return "CONTAINS KEY";
    case OP_IS_NOT_NULL: return "IS NOT";
    case OP_LIKE: return "LIKE";
    }
    return "?";
}

static bool is_slice(ast_op op)
{
    return op == OP_LT || op == OP_LTE || op == OP_GT || op == OP_GTE;
}

static void put_s(cs_buf *b, const char *s) { cs_buf_put(b, s, strlen(s)); }

/* A relation's columns, comma-separated between open and close: "(b, c)", "[b, c]". */
static void put_cols(cs_buf *b, const ast_relation *r, const char *open, const char *close)
{
    put_s(b, open);
    for (int i = 0; i < r->n_columns; i++) {
        if (i) put_s(b, ", ");
        put_s(b, r->columns[i]);
    }
    put_s(b, close);
}

/* Cassandra's message for `col != term` (and LIKE without an index). */
static int refuse_relation(cql_wan *a, const char *fmt, const char *col, const char *op, const ast_term *v)
{
    cs_buf b;
    cs_buf_init(&b);
    cql__term_text(v, &b);
    cs_buf_put_u8(&b, 0);
    int rc = cs_error_set(a->e, CS_ERR_INVALID, fmt, col, op, b.err ? "..." : (const char *)b.p);
    cs_buf_destroy(&b);
    return rc;
}

/* Evaluate a relation operand; refuses null and unset like Cassandra. */
static int eval_nn(cql_wan *a, const ast_term *t, const ctype *ty, const char *name, cql_value *out)
{
    int rc = cql__term_eval(a->ev, t, ty, name, out, a->e);
    if (rc)
        return rc;
    if (out->len == CQL_UNSET)
        return cs_error_set(a->e, CS_ERR_INVALID, "Invalid unset value for column %s", name);
    if (out->len == CQL_NULL)
        return cs_error_set(a->e, CS_ERR_INVALID, "Invalid null value in condition for column %s", name);
    return 0;
}

/* Split a serialized list (IN ? value) into elements. */
static int split_list(cql_wan *a, const cql_value *lv, cql_value **out, int *n, const char *name)
{
    cs_rd r;
    cs_rd_init(&r, lv->p, (size_t)lv->len);
    int32_t cnt = (int32_t)cs_rd_u32(&r);
    if (r.err || cnt < 0 || cnt > CQL__MAX_KEYS)
        return cs_error_set(a->e, CS_ERR_INVALID, "Invalid list value for %s", name);
    cql_value *v = cs_arena_zalloc(a->ev->arena, sizeof(cql_value) * (size_t)(cnt + 1));
    if (!v)
        return cs_error_set(a->e, CS_ERR_SERVER, "out of memory");
    for (int i = 0; i < cnt; i++) {
        const uint8_t *p;
        int32_t l = cs_rd_bytes(&r, &p);
        if (r.err || l < 0)
            return cs_error_set(a->e, CS_ERR_INVALID, "Invalid null value in condition for column %s", name);
        v[i].p = p;
        v[i].len = l;
    }
    *out = v;
    *n = cnt;
    return 0;
}

/* Evaluate the right side of an IN (list of terms, or one list marker). */
static int eval_in(cql_wan *a, const ast_relation *r, const ctype *ty, const char *name,
                   cql_value **out, int *n)
{
    if (r->in_marker) {
        ctype *lt = ctype_new_collection(CT_LIST, ctype_ref(ty), NULL, false);
        cql_value lv;
        int rc = cql__term_eval(a->ev, r->value, lt, name, &lv, a->e);
        ctype_unref(lt);
        if (rc)
            return rc;
        if (lv.len == CQL_UNSET)
            return cs_error_set(a->e, CS_ERR_INVALID, "Invalid unset value for column %s", name);
        if (lv.len < 0)
            return cs_error_set(a->e, CS_ERR_INVALID, "Invalid null value for column %s", name);
        return split_list(a, &lv, out, n, name);
    }
    cql_value *v = cs_arena_zalloc(a->ev->arena, sizeof(cql_value) * (size_t)(r->n_in + 1));
    if (!v)
        return cs_error_set(a->e, CS_ERR_SERVER, "out of memory");
    for (int i = 0; i < r->n_in; i++) {
        int rc = eval_nn(a, r->in[i], ty, name, &v[i]);
        if (rc)
            return rc;
    }
    *out = v;
    *n = r->n_in;
    return 0;
}

static _Thread_local const ctype *g_cmp_type;
static int val_cmp(const void *x, const void *y)
{
    const cql_value *a = x, *b = y;
    return ctype_compare(g_cmp_type, a->p, (size_t)a->len, b->p, (size_t)b->len);
}

/* Sort and deduplicate single-column values. */
static int sort_dedup(const ctype *t, cql_value *v, int n)
{
    g_cmp_type = t;
    qsort(v, (size_t)n, sizeof(*v), val_cmp);
    int m = 0;
    for (int i = 0; i < n; i++)
        if (m == 0 || val_cmp(&v[m - 1], &v[i]) != 0)
            v[m++] = v[i];
    return m;
}

cql_filter *cql__wan_new_filter(cql_wan *a, const sch_column *c, ast_op op)
{
    if (a->n_filters == a->cap_filters) {
        int nc = a->cap_filters ? a->cap_filters * 2 : 8;
        cql_filter *nf = cs_arena_zalloc(a->ev->arena, sizeof(cql_filter) * (size_t)nc);
        if (!nf)
            return NULL;
        if (a->n_filters)
            memcpy(nf, a->filters, sizeof(cql_filter) * (size_t)a->n_filters);
        a->filters = nf;
        a->cap_filters = nc;
    }
    cql_filter *f = &a->filters[a->n_filters++];
    memset(f, 0, sizeof(*f));
    f->col = c;
    f->op = op;
    f->key.len = CQL_NULL;
    f->val.len = CQL_NULL;
    return f;
}

/* Evaluate a row filter's operand.  A null is refused as Cassandra's row
 * filter refuses it, when the query runs, so after the ALLOW FILTERING
 * check: noted here (the first one), reported by cql__where_analyze.
 * Key columns keep the restriction's own message (eval_nn). */
static int eval_filter(cql_wan *a, const sch_column *c, const ast_term *t, const ctype *ty, const char *name,
                       const char *null_fmt, cql_value *out)
{
    if (c->kind != COL_REGULAR && c->kind != COL_STATIC)
        return eval_nn(a, t, ty, name, out);
    int rc = cql__term_eval(a->ev, t, ty, name, out, a->e);
    if (rc)
        return rc;
    if (out->len == CQL_UNSET)
        return cs_error_set(a->e, CS_ERR_INVALID, "Invalid unset value for column %s", name);
    if (out->len == CQL_NULL && !a->null_fmt) {
        a->null_fmt = null_fmt;
        a->null_col = c->name;
    }
    return 0;
}

/* A relation kept as a row filter (any column).  Checks in Cassandra's
 * order (SingleColumnRelation: a slice's duration check, then the
 * receivers, then the term). */
static int add_filter(cql_wan *a, const sch_column *c, const ast_relation *r)
{
    const ctype *ty = c->type;
    if (is_slice(r->op) && r->kind != REL_ELEMENT && ctype_refs_duration(ty)) {
        const char *holder = ctype_duration_holder(ty);
        if (holder)
            return cs_error_set(a->e, CS_ERR_INVALID, "Slice restrictions are not supported on %s containing durations", holder);
        return cs_error_set(a->e, CS_ERR_INVALID, "Slice restrictions are not supported on duration columns");
    }
    /* a null literal for a counter fails as the term is prepared */
    if (ty->kind == CT_COUNTER && r->value && r->value->kind == TERM_NULL)
        return cs_error_set(a->e, CS_ERR_INVALID, "Invalid null value for counter increment/decrement");
    cql_filter *f = cql__wan_new_filter(a, c, r->op);
    if (!f)
        return cs_error_set(a->e, CS_ERR_SERVER, "out of memory");
    char nb[300];
    if (r->kind == REL_ELEMENT) {
        f->element = true;
        if (ty->kind == CT_LIST)
            return cs_error_set(a->e, CS_ERR_INVALID,
                                "Indexes on list entries (%s[index] = value) are not currently supported.", c->name);
        if (ty->kind != CT_MAP)
            return cs_error_set(a->e, CS_ERR_INVALID, "Column %s cannot be used as a map", c->name);
        if (!ctype_is_multicell(ty))
            return cs_error_set(a->e, CS_ERR_INVALID,
                                "Map-entry equality predicates on frozen map column %s are not supported", c->name);
        if (r->op != OP_EQ)
            return cs_error_set(a->e, CS_ERR_INVALID, "Only EQ relations are supported on map entries");
        snprintf(nb, sizeof(nb), "key(%s)", c->name);
        int rc = eval_filter(a, c, r->key, ty->sub[0], nb, "Unsupported null map key for column %s", &f->key);
        if (rc)
            return rc;
        snprintf(nb, sizeof(nb), "value(%s)", c->name);
        return eval_filter(a, c, r->value, ty->sub[1], nb, "Unsupported null map value for column %s", &f->val);
    }
    switch (r->op) {
    case OP_IS_NOT_NULL:
        return 0;
    case OP_IN:
        return eval_in(a, r, ty, c->name, &f->in, &f->n_in);
    case OP_CONTAINS:
        if (!ctype_is_collection(ty))
            return cs_error_set(a->e, CS_ERR_INVALID,
                                "Cannot use CONTAINS on non-collection column %s", c->name);
        snprintf(nb, sizeof(nb), "value(%s)", c->name);
        return eval_filter(a, c, r->value, ty->kind == CT_MAP ? ty->sub[1] : ty->sub[0], nb,
                           "Unsupported null value for column %s", &f->val);
    case OP_CONTAINS_KEY:
        if (ty->kind != CT_MAP)
            return cs_error_set(a->e, CS_ERR_INVALID,
                                "Cannot use CONTAINS KEY on non-map column %s", c->name);
        snprintf(nb, sizeof(nb), "key(%s)", c->name);
        return eval_filter(a, c, r->value, ty->sub[0], nb, "Unsupported null value for column %s", &f->val);
    default:
        return eval_filter(a, c, r->value, ty, c->name, "Unsupported null value for column %s", &f->val);
    }
}

/* ---------------------------------------------------------------- collect */

/* The partition key's column names, comma-separated ("k1, k2"). */
static void pk_names(const sch_table *t, char *lst, size_t cap)
{
    size_t off = 0;
    lst[0] = 0;
    for (int i = 0; i < t->n_pk && off < cap; i++)
        off += (size_t)snprintf(lst + off, cap - off, "%s%s", i ? ", " : "", t->pk[i]->name);
}

static int collect_token(cql_wan *a, const ast_relation *r)
{
    const sch_table *t = a->t;
    if (a->kind != CQL_WHERE_SELECT)
        return cs_error_set(a->e, CS_ERR_INVALID,
                            "The token function cannot be used in WHERE clauses for %s statements",
                            a->kind == CQL_WHERE_UPDATE ? "UPDATE" : "DELETE");
    bool ok = r->n_columns == t->n_pk;
    for (int i = 0; ok && i < r->n_columns; i++)
        ok = !strcmp(r->columns[i], t->pk[i]->name);
    if (!ok) {
        for (int i = 0; i < r->n_columns; i++)
            if (!sch_column_find(t, r->columns[i]))
                return sch_undefined_column(t, r->columns[i], a->e);
        /* Cassandra's order (TokenRelation): every component, no
         * duplicates, nothing else, then the order */
        for (int i = 0; i < t->n_pk; i++) {
            bool found = false;
            for (int j = 0; !found && j < r->n_columns; j++)
                found = !strcmp(r->columns[j], t->pk[i]->name);
            if (!found)
                return cs_error_set(a->e, CS_ERR_INVALID,
                                    "The token() function must be applied to all partition key components or none of them");
        }
        for (int i = 0; i < r->n_columns; i++)
            for (int j = 0; j < i; j++)
                if (!strcmp(r->columns[i], r->columns[j]))
                    return cs_error_set(a->e, CS_ERR_INVALID,
                                        "The token() function contains duplicate partition key components");
        for (int i = 0; i < r->n_columns; i++) {
            const sch_column *c = sch_column_find(t, r->columns[i]);
            if (c->kind != COL_PARTITION_KEY)
                return cs_error_set(a->e, CS_ERR_INVALID,
                                    "The token() function must contains only partition key components");
        }
        char lst[600];
        pk_names(t, lst, sizeof lst);
        return cs_error_set(a->e, CS_ERR_INVALID,
                            "The token function arguments must be in the partition key order: %s", lst);
    }
    cql_value v;
    int rc;
    if (r->value && r->value->kind == TERM_FUNC &&
        (!strcmp(r->value->func.name, "token") || !strcmp(r->value->func.name, "system.token"))) {
        /* token(k) > token(5): the token of the given partition key */
        const ast_term *ft = r->value;
        if (ft->n_elems != t->n_pk)
            return cs_error_set(a->e, CS_ERR_INVALID,
                                "Invalid number of arguments in call to function system.token: %d required but %d provided",
                                t->n_pk, ft->n_elems);
        cql_value kv[16];
        for (int i = 0; i < t->n_pk; i++)
            if ((rc = eval_nn(a, ft->elems[i], t->pk[i]->type, t->pk[i]->name, &kv[i])))
                return rc;
        cs_buf kb;
        cs_buf_init(&kb);
        sch_partition_key(t, kv, &kb);
        uint8_t *tb = cs_arena_alloc(a->ev->arena, 8);
        if (!tb || kb.err) {
            cs_buf_destroy(&kb);
            return cs_error_set(a->e, CS_ERR_SERVER, "out of memory");
        }
        cs_st64(tb, (uint64_t)cs_murmur3_token(kb.p ? kb.p : (const uint8_t *)"", kb.len));
        cs_buf_destroy(&kb);
        v.p = tb;
        v.len = 8;
    } else if ((rc = eval_nn(a, r->value, ctype_scalar(CT_BIGINT), "partition key token", &v)))
        return rc;
    if (v.len != 8)
        return cs_error_set(a->e, CS_ERR_INVALID, "Invalid token value");
    int64_t tok = (int64_t)cs_be64(v.p);
    cql_where *w = a->w;
    if (!a->token_seen) {
        w->token_range = true;
        w->tok_start = INT64_MIN;
        w->tok_start_incl = true;
        w->tok_end = INT64_MAX;
        w->tok_end_incl = true;
        a->token_seen = true;
    }
    /* TokenRestriction's merge rules, with the partition key's names */
    if (a->tok_eq || (r->op == OP_EQ && (a->tok_lo || a->tok_hi)) ||
        ((r->op == OP_GT || r->op == OP_GTE) && a->tok_lo) || ((r->op == OP_LT || r->op == OP_LTE) && a->tok_hi)) {
        char lst[600];
        pk_names(t, lst, sizeof lst);
        if (a->tok_eq)
            return cs_error_set(a->e, CS_ERR_INVALID, "%s cannot be restricted by more than one relation if it includes an Equal", lst);
        if (r->op == OP_EQ)
            return cs_error_set(a->e, CS_ERR_INVALID,
                                "Columns \"%s\" cannot be restricted by both an equality and an inequality relation", lst);
        return cs_error_set(a->e, CS_ERR_INVALID, "More than one restriction was found for the %s bound on %s",
                            r->op == OP_GT || r->op == OP_GTE ? "start" : "end", lst);
    }
    a->tok_eq |= r->op == OP_EQ;
    a->tok_lo |= r->op == OP_GT || r->op == OP_GTE;
    a->tok_hi |= r->op == OP_LT || r->op == OP_LTE;
    switch (r->op) {
    case OP_EQ:
        w->tok_start = w->tok_end = tok;
        w->tok_start_incl = w->tok_end_incl = true;
        break;
    case OP_GT: case OP_GTE:
        w->tok_start = tok;
        w->tok_start_incl = r->op == OP_GTE;
        break;
    case OP_LT: case OP_LTE:
        w->tok_end = tok;
        w->tok_end_incl = r->op == OP_LTE;
        break;
    default:
        return cs_error_set(a->e, CS_ERR_INVALID, "Unsupported \"%s\" relation: token(...)", op_text(r->op));
    }
    return 0;
}

/* A multi-column relation as Cassandra prints it in messages:
 * "(b, c) > (1, 2)", "(b, c) IN ((1, 2), (3, 4))". */
static void multi_text(const ast_relation *r, cs_buf *b)
{
    put_cols(b, r, "(", ") ");
    put_s(b, op_text(r->op));
    put_s(b, " ");
    if (r->op == OP_IN && !r->in_marker) {
        put_s(b, "(");
        for (int i = 0; i < r->n_in; i++) {
            if (i) put_s(b, ", ");
            cql__term_text(r->in[i], b);
        }
        put_s(b, ")");
    } else
        cql__term_text(r->value, b);
    cs_buf_put_u8(b, 0);
}

/* fmt's last %s: the relation's text (multi_text). */
static int refuse_multi(cql_wan *a, const ast_relation *r, const char *fmt, const char *arg)
{
    cs_buf b;
    cs_buf_init(&b);
    multi_text(r, &b);
    const char *txt = b.err ? "(...)" : (const char *)b.p;
    int rc = arg ? cs_error_set(a->e, CS_ERR_INVALID, fmt, arg, txt) : cs_error_set(a->e, CS_ERR_INVALID, fmt, txt);
    cs_buf_destroy(&b);
    return rc;
}

/* A literal tuple on the right of a multi-column relation must have one
 * element per column (Tuples.Literal, "Expected 2 elements ..."). */
static int tuple_arity(cql_wan *a, const ast_term *t, int n)
{
    if (!t || t->kind != TERM_TUPLE || t->n_elems == n)
        return 0;
    cs_buf b;
    cs_buf_init(&b);
    cql__term_text(t, &b);
    cs_buf_put_u8(&b, 0);
    int rc = cs_error_set(a->e, CS_ERR_INVALID, "Expected %d elements in value tuple, but got %d: %s", n, t->n_elems,
                          b.err ? "(...)" : (const char *)b.p);
    cs_buf_destroy(&b);
    return rc;
}

static int ck_add(cql_wan *a, int first, int n, int kind, bool multi, bool lo, bool hi);

static int collect_multi(cql_wan *a, const ast_relation *r)
{
    const sch_table *t = a->t;
    int first = -1;
    ctype *sub[32];
    int n = r->n_columns;
    if (n > 32)
        return cs_error_set(a->e, CS_ERR_INVALID, "Too many columns in multi-column relation");
    if (r->op == OP_NEQ) {   /* refused before the columns are looked at (Relation.toRestriction) */
        cs_buf b;
        cs_buf_init(&b);
        put_cols(&b, r, "(", ")");
        cs_buf_put_u8(&b, 0);
        int rc = refuse_relation(a, "Unsupported \"!=\" relation: %s %s %s", b.err ? "(...)" : (const char *)b.p, "!=",
                                 r->value);
        cs_buf_destroy(&b);
        return rc;
    }
    for (int i = 0; i < n; i++) {
        const sch_column *c = sch_column_find(t, r->columns[i]);
        if (!c)
            return sch_undefined_column(t, r->columns[i], a->e);
        if (c->kind != COL_CLUSTERING)
            return cs_error_set(a->e, CS_ERR_INVALID,
                                "Multi-column relations can only be applied to clustering columns but was applied to: %s",
                                c->name);
        for (int j = 0; j < i; j++)
            if (!strcmp(r->columns[j], c->name))
                return refuse_multi(a, r, "Column \"%s\" appeared twice in a relation: %s", c->name);
        if (i == 0) {
            first = c->position;
        } else if (c->position != first + i)
            return refuse_multi(a, r, "Clustering columns must appear in the PRIMARY KEY order in multi-column relations: %s",
                                NULL);
        sub[i] = c->type;
    }
    int arc = 0;
    if (r->op == OP_IN && !r->in_marker)
        for (int j = 0; !arc && j < r->n_in; j++)
            arc = tuple_arity(a, r->in[j], n);
    else if (r->op != OP_IN)
        arc = tuple_arity(a, r->value, n);
    if (arc)
        return arc;
    if (!is_slice(r->op) && r->op != OP_EQ && r->op != OP_IN)
        return cs_error_set(a->e, CS_ERR_INVALID, "Unsupported \"%s\" relation", op_text(r->op));
    int rc = ck_add(a, first, n, is_slice(r->op) ? CQL__CKR_SLICE : r->op == OP_IN ? CQL__CKR_IN : CQL__CKR_EQ, true,
                    r->op == OP_GT || r->op == OP_GTE, r->op == OP_LT || r->op == OP_LTE);
    if (rc)
        return rc;
    /* a tuple type over the columns, to evaluate the right side */
    ctype *refs[32];
    for (int i = 0; i < n; i++)
        refs[i] = ctype_ref(sub[i]);
    ctype *tt = ctype_new_tuple(refs, n);
    char nb[300];
    snprintf(nb, sizeof(nb), "(%s...)", r->columns[0]);
    cql_value *tv = NULL;
    int k = 0;
    if (r->op == OP_IN)
        rc = eval_in(a, r, tt, nb, &tv, &k);
    else {
        tv = cs_arena_zalloc(a->ev->arena, sizeof(cql_value));
        k = 1;
        rc = tv ? eval_nn(a, r->value, tt, nb, tv) : cs_error_set(a->e, CS_ERR_SERVER, "out of memory");
    }
    ctype_unref(tt);
    if (rc)
        return rc;
    /* split each tuple into n component values */
    cql_value *vals = cs_arena_zalloc(a->ev->arena, sizeof(cql_value) * (size_t)(k * n + 1));
    if (!vals)
        return cs_error_set(a->e, CS_ERR_SERVER, "out of memory");
    for (int j = 0; j < k; j++) {
        cs_rd rd;
        cs_rd_init(&rd, tv[j].p, (size_t)tv[j].len);
        for (int i = 0; i < n; i++) {
            const uint8_t *p = NULL;
            int32_t l = cs_rd_left(&rd) ? cs_rd_bytes(&rd, &p) : -1;
            if (l < 0 && r->op == OP_IN && k > 1) {   /* MultiColumnRestriction.InRestriction */
                cs_buf b;
                cs_buf_init(&b);
                put_cols(&b, r, "[", "]");
                cs_buf_put_u8(&b, 0);
                int erc = cs_error_set(a->e, CS_ERR_INVALID, "Invalid null value in condition for columns: %s",
                                       b.err ? "[...]" : (const char *)b.p);
                cs_buf_destroy(&b);
                return erc;
            }
            if (l < 0)
                return cs_error_set(a->e, CS_ERR_INVALID,
                                    is_slice(r->op) ? "Invalid null value in condition for column %s"
                                                    : "Invalid null value for column %s", r->columns[i]);
            vals[j * n + i].p = p;
            vals[j * n + i].len = l;
        }
    }
    int raw = k;   /* in_select_cartesian_product counts the values as written */
    if (r->op == OP_IN && k > 1) {   /* the same tuple twice selects its rows once (a set of clusterings) */
        int m = 0;
        for (int j = 0; j < k; j++) {
            bool dup = false;
            for (int q = 0; q < m && !dup; q++) {
                dup = true;
                for (int i = 0; i < n && dup; i++) {
                    const cql_value *x = &vals[j * n + i], *y = &vals[q * n + i];
                    dup = x->len == y->len && (x->len <= 0 || memcmp(x->p, y->p, (size_t)x->len) == 0);
                }
            }
            if (!dup) {
                if (m != j)
                    memmove(&vals[m * n], &vals[j * n], sizeof(cql_value) * (size_t)n);
                m++;
            }
        }
        k = m;
    }
    if (r->op == OP_EQ || r->op == OP_IN) {
        cql_eqgroup *g = &a->ck_eq[first];
        g->first = first;
        g->n = n;
        g->k = k;
        g->raw = raw;
        g->tuples = vals;
        g->in = r->op == OP_IN;
        for (int i = 0; i < n; i++)
            a->ck_used[first + i] = true;
        if (r->op == OP_IN)
            a->w->has_in_ck = true;
        return 0;
    }
    cql_slicer *s = &a->ck_sl[first];   /* ck_add merged the bounds: one per side */
    s->first = first;
    s->multi = true;
    if (n > s->n)
        s->n = n;
    if (r->op == OP_GT || r->op == OP_GTE) {
        s->lo = vals;
        s->lo_n = n;
        s->lo_set = true;
        s->lo_incl = r->op == OP_GTE;
    } else {
        s->hi = vals;
        s->hi_n = n;
        s->hi_set = true;
        s->hi_incl = r->op == OP_LTE;
    }
    for (int i = 0; i < n; i++)
        a->ck_used[first + i] = true;
    return 0;
}

/* The columns two clustering restrictions share, as getColumnsInCommons
 * prints them (joined with " ,"; Cassandra's order is a hash set's, here
 * it is the clustering order). */
static void ck_commons(const cql_wan *a, const cql_ckrel *x, const cql_ckrel *y, char *out, size_t cap)
{
    size_t off = 0;
    int lo = x->first > y->first ? x->first : y->first;
    int hi = x->first + x->n < y->first + y->n ? x->first + x->n : y->first + y->n;
    out[0] = 0;
    for (int p = lo; p < hi && off < cap; p++)
        off += (size_t)snprintf(out + off, cap - off, "%s%s", off ? " ," : "", a->t->ck[p]->name);
}

/* One merge of Single/MultiColumnRestriction.mergeWith: the existing
 * restriction e with the new relation r, the result in *out.  A
 * single-column restriction meeting a multi-column one is converted first
 * (toMultiColumnRestriction), so the multi-column rules and messages
 * apply. */
static int ck_rel_merge(cql_wan *a, const cql_ckrel *e, const cql_ckrel *r, cql_ckrel *out)
{
    char cm[600];
    bool multi = e->multi || r->multi;
    if (multi)
        ck_commons(a, e, r, cm, sizeof cm);
    else
        snprintf(cm, sizeof cm, "%s", a->t->ck[e->first]->name);
    if (e->kind == CQL__CKR_EQ)
        return cs_error_set(a->e, CS_ERR_INVALID, "%s cannot be restricted by more than one relation if it includes an Equal", cm);
    if (e->kind == CQL__CKR_IN)
        return cs_error_set(a->e, CS_ERR_INVALID, "%s cannot be restricted by more than one relation if it includes a IN", cm);
    if (r->kind != CQL__CKR_SLICE)
        return cs_error_set(a->e, CS_ERR_INVALID,
                            "Column \"%s\" cannot be restricted by both an equality and an inequality relation", cm);
    if (e->first != r->first)
        return cs_error_set(a->e, CS_ERR_INVALID,
                            "Column \"%s\" cannot be restricted by two inequalities not starting with the same column",
                            a->t->ck[e->first > r->first ? e->first : r->first]->name);
    if (e->lo && r->lo)
        return cs_error_set(a->e, CS_ERR_INVALID, "More than one restriction was found for the start bound on %s", cm);
    if (e->hi && r->hi)
        return cs_error_set(a->e, CS_ERR_INVALID, "More than one restriction was found for the end bound on %s", cm);
    *out = *e;
    out->id = r->id;
    out->n = e->n >= r->n ? e->n : r->n;   /* the longer column list */
    out->multi = multi;
    out->lo = e->lo || r->lo;
    out->hi = e->hi || r->hi;
    return 0;
}

/* Cassandra's ClusteringColumnRestrictions.mergeWith checks, against the
 * restrictions before the new one (start: its first column): without
 * ALLOW FILTERING, nothing after a slice, and no slice before what is
 * restricted already. */
static int ck_merge_check(cql_wan *a, int start, bool slice)
{
    if (a->flags & CQL_WHERE_ALLOW_FILTERING)
        return 0;
    const sch_table *t = a->t;
    int last = -1;
    for (int i = 0; i < t->n_ck; i++)
        if (a->ck_rel[i].id)
            last = i;
    if (last < 0)
        return 0;
    const cql_ckrel *lr = &a->ck_rel[last];   /* RestrictionSet.lastRestriction */
    if (lr->kind == CQL__CKR_SLICE && start > lr->first)
        return cs_error_set(a->e, CS_ERR_INVALID,
                            "Clustering column \"%s\" cannot be restricted (preceding column \"%s\" is restricted by a non-EQ relation)",
                            t->ck[start]->name, t->ck[lr->first]->name);
    if (start < lr->first && slice) {
        int next = start + 1;   /* RestrictionSet.nextColumn: the next restricted one */
        while (!a->ck_rel[next].id)
            next++;
        return cs_error_set(a->e, CS_ERR_INVALID,
                            "PRIMARY KEY column \"%s\" cannot be restricted (preceding column \"%s\" is restricted by a non-EQ relation)",
                            t->ck[next]->name, t->ck[start]->name);
    }
    return 0;
}

/* A clustering restriction over [first, first+n) joins the others, as
 * ClusteringColumnRestrictions.mergeWith adds it: merged with each
 * distinct restriction on its columns (RestrictionSet.addRestriction;
 * each merge takes the new relation as it came, the last one is kept),
 * then the position checks against the earlier ones.  Only the column
 * map changes here; the caller stores the values (ck_eq / ck_sl). */
static int ck_add(cql_wan *a, int first, int n, int kind, bool multi, bool lo, bool hi)
{
    cql_ckrel r = { ++a->ck_rel_ids, first, n, kind, multi, lo, hi };
    cql_ckrel merged = r;
    int done[32], n_done = 0;
    for (int p = first; p < first + n; p++) {
        const cql_ckrel *e = &a->ck_rel[p];
        bool seen = !e->id;
        for (int j = 0; j < n_done && !seen; j++)
            seen = done[j] == e->id;
        if (seen || n_done == 32)
            continue;
        done[n_done++] = e->id;
        int rc = ck_rel_merge(a, e, &r, &merged);
        if (rc)
            return rc;
    }
    int rc = ck_merge_check(a, first, kind == CQL__CKR_SLICE);
    if (rc)
        return rc;
    for (int p = first; p < first + n; p++)
        a->ck_rel[p] = merged;
    return 0;
}

/* pk or ck column restricted by a single-column relation. */
static int collect_key_col(cql_wan *a, const sch_column *c, const ast_relation *r)
{
    bool pk = c->kind == COL_PARTITION_KEY;
    int pos = c->position;
    if (r->op == OP_EQ || r->op == OP_IN) {
        cql_eqgroup *g = pk ? &a->pk_eq[pos] : &a->ck_eq[pos];
        if (pk && a->pk_has[pos])
            return cs_error_set(a->e, CS_ERR_INVALID,
                                "%s cannot be restricted by more than one relation if it includes %s",
                                c->name, g->in ? "a IN" : "an Equal");
        if (!pk) {
            int rc = ck_add(a, pos, 1, r->op == OP_IN ? CQL__CKR_IN : CQL__CKR_EQ, false, false, false);
            if (rc)
                return rc;
        }
        int k = 1, raw = 1;
        cql_value *v;
        if (r->op == OP_IN) {
            int rc = eval_in(a, r, c->type, c->name, &v, &k);
            if (rc)
                return rc;
            raw = k;
            k = sort_dedup(c->type, v, k);
        } else {
            v = cs_arena_zalloc(a->ev->arena, sizeof(cql_value));
            if (!v)
                return cs_error_set(a->e, CS_ERR_SERVER, "out of memory");
            int rc = eval_nn(a, r->value, c->type, c->name, v);
            if (rc)
                return rc;
        }
        g->first = pos;
        g->n = 1;
        g->k = k;
        g->raw = raw;
        g->tuples = v;
        g->in = r->op == OP_IN;
        if (pk) {
            a->pk_has[pos] = true;
            if (g->in)
                a->w->has_in_pk = true;
        } else {
            a->ck_used[pos] = true;
            if (g->in)
                a->w->has_in_ck = true;
        }
        return 0;
    }
    if (is_slice(r->op)) {
        if (pk) {
            /* Judged with the other key restrictions (cql__wan_build_pks),
             * as Cassandra does after reading every relation: a SELECT
             * filters (ALLOW FILTERING), an UPDATE or DELETE is refused. */
            a->pk_slice = true;
            a->pk_sliced[pos] = true;
            return add_filter(a, c, r);
        }
        if (a->kind == CQL_WHERE_UPDATE)
            return cs_error_set(a->e, CS_ERR_INVALID,
                                "Slice restrictions are not supported on the clustering columns in UPDATE statements");
        bool lower = r->op == OP_GT || r->op == OP_GTE;
        int rc = ck_add(a, pos, 1, CQL__CKR_SLICE, false, lower, !lower);
        if (rc)
            return rc;
        cql_value *v = cs_arena_zalloc(a->ev->arena, sizeof(cql_value));
        if (!v)
            return cs_error_set(a->e, CS_ERR_SERVER, "out of memory");
        if ((rc = eval_nn(a, r->value, c->type, c->name, v)))
            return rc;
        cql_slicer *s = &a->ck_sl[pos];   /* ck_add merged the bounds: one per side */
        s->first = pos;
        if (s->n < 1)
            s->n = 1;
        if (lower) {
            s->lo = v;
            s->lo_n = 1;
            s->lo_set = true;
            s->lo_incl = r->op == OP_GTE;
        } else {
            s->hi = v;
            s->hi_n = 1;
            s->hi_set = true;
            s->hi_incl = r->op == OP_LTE;
        }
        a->ck_used[pos] = true;
        return 0;
    }
    if (r->op == OP_NEQ)
        return refuse_relation(a, "Unsupported \"!=\" relation: %s %s %s", c->name, "!=", r->value);
    if (pk && a->kind != CQL_WHERE_SELECT)
        return cs_error_set(a->e, CS_ERR_INVALID, "Invalid operator %s for PRIMARY KEY part %s",
                            op_text(r->op), c->name);
    if (r->op == OP_IS_NOT_NULL)
        return cs_error_set(a->e, CS_ERR_INVALID, "Unsupported restriction: %s IS NOT NULL", c->name);
    /* CONTAINS on a key column: the receiver's checks first (toReceivers),
     * then filtering */
    if (r->op == OP_CONTAINS_KEY && c->type->kind != CT_MAP)
        return cs_error_set(a->e, CS_ERR_INVALID, "Cannot use CONTAINS KEY on non-map column %s", c->name);
    if (r->op == OP_CONTAINS && !ctype_is_collection(c->type))
        return cs_error_set(a->e, CS_ERR_INVALID, "Cannot use CONTAINS on non-collection column %s", c->name);
    if (!(a->flags & CQL_WHERE_ALLOW_FILTERING))
        return cs_error_set(a->e, CS_ERR_INVALID,
                            "Clustering columns can only be restricted with CONTAINS with a secondary index or filtering");
    return add_filter(a, c, r);
}

static int collect(cql_wan *a, ast_relation **rels, int n)
{
    const sch_table *t = a->t;
    for (int i = 0; i < n; i++) {
        const ast_relation *r = rels[i];
        int rc = 0;
        if ((r->op == OP_CONTAINS || r->op == OP_CONTAINS_KEY) && a->kind != CQL_WHERE_SELECT)
            return cs_error_set(a->e, CS_ERR_INVALID, "Cannot use %s with %s",
                                a->kind == CQL_WHERE_UPDATE ? "UPDATE" : "DELETE", op_text(r->op));
        if (r->kind == REL_TOKEN)
            rc = collect_token(a, r);
        else if (r->kind == REL_MULTI)
            rc = collect_multi(a, r);
        else {
            const sch_column *c = sch_column_find(t, r->columns[0]);
            if (!c)
                return sch_undefined_column(t, r->columns[0], a->e);
            if (r->op == OP_LIKE)
                return refuse_relation(a, "LIKE restriction is only supported on properly indexed columns. %s %s %s is not valid.",
                                       c->name, "LIKE", r->value);
            if (r->kind == REL_ELEMENT || c->kind == COL_REGULAR || c->kind == COL_STATIC) {
                if (a->kind != CQL_WHERE_SELECT)
                    return cs_error_set(a->e, CS_ERR_INVALID,
                                        "Non PRIMARY KEY columns found in where clause: %s", c->name);
                if (r->op == OP_NEQ)
                    return refuse_relation(a, "Unsupported \"!=\" relation: %s %s %s", c->name, "!=", r->value);
                if (r->op == OP_IS_NOT_NULL)
                    return cs_error_set(a->e, CS_ERR_INVALID, "Unsupported restriction: %s IS NOT NULL", c->name);
                a->w->needs_filtering = true;
                rc = add_filter(a, c, r);
            } else {
                /* = IN and slices are checked as they merge (ck_add) */
                rc = c->kind == COL_CLUSTERING && (r->op == OP_CONTAINS || r->op == OP_CONTAINS_KEY)
                         ? ck_merge_check(a, c->position, false) : 0;
                if (!rc)
                    rc = collect_key_col(a, c, r);
            }
        }
        if (rc)
            return rc;
    }
    return 0;
}

/* ---------------------------------------------------------------- entry point */

int cql__where_analyze(cql_eval *ev, const sch_table *t, ast_relation **rels, int n_rels,
                       cql_where_kind kind, int flags, cql_where *out, cs_error *e)
{
    memset(out, 0, sizeof(*out));
    /* index hook (issue 5, cql/index_query.c): `col = x` on an indexed
     * partition key component or clustering column is served by the index
     * (Cassandra needs no ALLOW FILTERING there); rows are still filtered */
    if (kind == CQL_WHERE_SELECT && !(flags & CQL_WHERE_ALLOW_FILTERING) &&
        cql_index_grants_key_filtering(t, rels, n_rels))
        flags |= CQL_WHERE_ALLOW_FILTERING;
    if (t->n_pk > 16)
        return cs_error_set(e, CS_ERR_INVALID, "Too many partition key columns");
    cql_wan a;
    /* zero all but the pk groups past the table's pk columns (never read) */
    memset(&a, 0, offsetof(cql_wan, pk_eq));
    memset(a.pk_eq, 0, sizeof(a.pk_eq[0]) * (size_t)t->n_pk);
    memset(a.pk_has, 0, sizeof(a) - offsetof(cql_wan, pk_has));
    a.ev = ev;
    a.t = t;
    a.w = out;
    a.kind = kind;
    a.flags = flags;
    a.e = e;
    int nck = t->n_ck > 0 ? t->n_ck : 1;
    /* one zeroed block: groups, slicers, the column map, then the used flags */
    size_t eq_sz = sizeof(cql_eqgroup) * (size_t)nck, sl_sz = sizeof(cql_slicer) * (size_t)nck;
    size_t rel_sz = sizeof(cql_ckrel) * (size_t)nck;
    uint8_t *blk = cs_arena_zalloc(ev->arena, eq_sz + sl_sz + rel_sz + sizeof(bool) * (size_t)nck);
    if (!blk)
        return cs_error_set(e, CS_ERR_SERVER, "out of memory");
    a.ck_eq = (cql_eqgroup *)blk;
    a.ck_sl = (cql_slicer *)(blk + eq_sz);
    a.ck_rel = (cql_ckrel *)(blk + eq_sz + sl_sz);
    a.ck_used = (bool *)(blk + eq_sz + sl_sz + rel_sz);
    int rc = collect(&a, rels, n_rels);
    if (rc == 0)
        rc = cql__wan_build_pks(&a);
    if (rc == 0)
        rc = cql__wan_build_ck(&a);
    if (rc)
        return rc;
    if (a.token_seen) {
        int64_t s = out->tok_start, en = out->tok_end;
        if ((!out->tok_start_incl && s == INT64_MAX) || (!out->tok_end_incl && en == INT64_MIN) ||
            s > en || (s == en && !(out->tok_start_incl && out->tok_end_incl)))
            out->empty = true;
    }
    if (kind == CQL_WHERE_SELECT && !(flags & CQL_WHERE_ALLOW_FILTERING)) {
        /* a range query with clustering or row restrictions filters, unless
         * one restriction is served by a secondary index (then the index
         * implementation is a scan with that filter) */
        bool range = !out->pk_all;
        bool indexed = a.n_filters == 1 && cql__index_serves(t, &a.filters[0]);
        if (!indexed && (out->needs_filtering || (range && out->ck_restricted)))
            return cs_error_set(e, CS_ERR_INVALID, "%s", CQL__ALLOW_FILTERING_MSG);
        out->uses_index = indexed;
    }
    if (a.null_fmt)   /* the row filter's refusal, once the query may filter */
        return cs_error_set(e, CS_ERR_INVALID, a.null_fmt, a.null_col);
    if (kind == CQL_WHERE_SELECT && !out->pk_all && out->ck_restricted)
        out->needs_filtering = true;
    out->filters = a.filters;
    out->n_filters = a.n_filters;
    return 0;
}

/* ---------------------------------------------------------------- point restrictions */

int cql__where_point_keys(const sch_table *t, ast_relation *const *rels, int n_rels,
                          cql_where_kind kind, cql_keyterm *out)
{
    if (t->n_pk > 16 || t->n_ck > CQL_POINT_MAX_CK)
        return -1;
    uint32_t pk_seen = 0;
    uint64_t ck_seen = 0;
    int n_pk = 0, n_ck = 0;
    for (int i = 0; i < n_rels; i++) {
        const ast_relation *r = rels[i];
        if (r->kind != REL_COLUMN || r->op != OP_EQ || r->n_columns != 1 || r->in_marker || !r->value)
            return -1;
        const sch_column *c = sch_column_find(t, r->columns[0]);
        if (!c || c->position < 0)
            return -1;
        if (c->kind == COL_PARTITION_KEY) {
            if (c->position >= 16 || (pk_seen >> c->position & 1))
                return -1;
            pk_seen |= 1u << c->position;
            n_pk++;
        } else if (c->kind == COL_CLUSTERING) {
            if (c->position >= CQL_POINT_MAX_CK || (ck_seen >> c->position & 1))
                return -1;
            ck_seen |= 1ull << c->position;
            n_ck++;
        } else
            return -1;
        out[i].col = c;
        out[i].term = r->value;
    }
    if (n_pk != t->n_pk || ck_seen != (n_ck ? (1ull << n_ck) - 1 : 0))
        return -1;   /* a partition key column missing, or the clustering ones not a prefix */
    if (kind != CQL_WHERE_SELECT && n_ck != t->n_ck)
        return -1;
    return n_ck;
}
