/*
 * select_sel.c: the selection clause of SELECT: compile selectors, evaluate
 * them on materialized rows, aggregates (count/min/max/sum/avg), CAST, and
 * the JSON row of SELECT JSON.  Owner: exec-read.  Caller: exec_select.c.
 *
 * Result column names follow Cassandra 4: the column name, "count" for
 * count(*), "writetime(v)", "ttl(v)", "system.fn(args)" for functions and
 * aggregates, "cast(v as type)"; an alias replaces the name.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <ctype.h>
#include "cql/select_int.h"
#include "common/alloc.h"
#include "common/hash.h"

static char *adup(cql_eval *ev, const char *s)
{
    return cs_arena_strdup(ev->arena, s ? s : "");
}

static const char *lower_name(cql_eval *ev, const char *s)
{
    if (!strncmp(s, "system.", 7))
        s += 7;
    char *d = adup(ev, s);
    for (char *p = d; p && *p; p++)
        *p = (char)tolower((unsigned char)*p);
    return d;
}

static int col_index(const sch_table *t, const sch_column *c)
{
    return (int)(c - t->cols);
}

static const char *type_name(const ctype *t, char *buf, size_t n)
{
    cs_buf b;
    cs_buf_init(&b);
    ctype_to_cql(t, &b);
    snprintf(buf, n, "%.*s", (int)b.len, b.p ? (const char *)b.p : "");
    cs_buf_destroy(&b);
    return buf;
}

static xsel *compile(cql_eval *ev, const sch_table *t, const ast_selector *as, bool top, cs_error *e);
static int sel_compile(cql_eval *ev, const sch_table *t, const ast_select *as, xselection *out,
                       cs_error *e);

/* ---------------------------------------------------------------- CAST (CastFcts) */

/* The input types of Cassandra's castAs<to> functions, in the order
 * CastFcts.all() declares them (so FunctionResolver's messages list them
 * alike); 0 when there is no such function (castAsBlob, castAsBoolean...). */
static int cast_inputs(ctype_kind to, ctype_kind *in)
{
    static const ctype_kind num[] = { CT_TINYINT, CT_SMALLINT, CT_INT, CT_BIGINT, CT_FLOAT, CT_DOUBLE,
                                      CT_DECIMAL, CT_COUNTER, CT_VARINT };
    int n = 0;
    switch (to) {
    case CT_TINYINT: case CT_SMALLINT: case CT_INT: case CT_BIGINT: case CT_FLOAT: case CT_DOUBLE:
    case CT_DECIMAL: case CT_VARINT:
        for (size_t i = 0; i < CS_ARRAY_LEN(num); i++)
            if (num[i] != to)
                in[n++] = num[i];
        return n;
    case CT_ASCII: case CT_VARCHAR: {
        for (size_t i = 0; i < CS_ARRAY_LEN(num); i++)
            in[n++] = num[i];
        if (to == CT_VARCHAR)
            in[n++] = CT_ASCII;
        static const ctype_kind more[] = { CT_INET, CT_BOOLEAN, CT_TIMEUUID, CT_TIMESTAMP, CT_DATE, CT_TIME, CT_UUID };
        for (size_t i = 0; i < CS_ARRAY_LEN(more); i++)
            in[n++] = more[i];
        return n;
    }
    case CT_DATE: in[0] = CT_TIMEUUID; in[1] = CT_TIMESTAMP; return 2;
    case CT_TIMESTAMP: in[0] = CT_TIMEUUID; in[1] = CT_DATE; return 2;
    default: return 0;
    }
}

/* "castAsText": CastFcts.getFunctionName (castAs + the capitalized type). */
static void cast_fn_name(ctype_kind to, char *out, size_t n)
{
    const char *k = ctype_kind_name(to);
    snprintf(out, n, "castAs%c%s", k ? (char)toupper((unsigned char)k[0]) : '?', k ? k + 1 : "");
}

static void cast_signatures(ctype_kind to, const ctype_kind *in, const int *pick, int n, char *out, size_t cap)
{
    char fn[64];
    cast_fn_name(to, fn, sizeof fn);
    ctype_kind ret[32];
    for (int i = 0; i < n; i++)
        ret[i] = to;
    cql__fn_sig_list(fn, in, ret, pick, n, out, cap);
}

/* FunctionResolver for CAST(arg AS to) (Selectable.WithCast): the same type
 * is no cast; no castAs<to> function: "x cannot be cast to to"; an exact
 * input wins, else the one input that takes the argument's values (two:
 * ambiguous; none: no signature matches).  *from: the input type. */
static int resolve_cast(const xsel *arg, const ctype *to, const ctype **from, cs_error *e)
{
    const ctype *at = arg->type;
    *from = at;
    if (!at || ctype_equal(at, to))
        return 0;
    ctype_kind in[32];
    int n = cast_inputs(to->kind, in);
    char tb[64];
    if (n == 0)
        return cs_error_set(e, CS_ERR_INVALID, "%s cannot be cast to %s", arg->name ? arg->name : "?",
                            type_name(to, tb, sizeof tb));
    int weak[32] = { 0 }, n_weak = 0, one = -1;
    for (int i = 0; i < n; i++) {   /* the inputs are native scalars: a collection, tuple or UDT matches none */
        if (in[i] == at->kind) {
            *from = ctype_scalar(in[i]);
            return 0;                      /* EXACT_MATCH */
        }
        if (cql__fn_accepts(in[i], at->kind) == 1) {   /* isValueCompatibleWith */
            weak[i] = 1;
            n_weak++;
            one = i;
        }
    }
    char fn[64], sigs[2048];
    cast_fn_name(to->kind, fn, sizeof fn);
    if (n_weak == 1) {
        *from = ctype_scalar(in[one]);
        return 0;
    }
    if (n_weak > 1) {
        cast_signatures(to->kind, in, weak, n, sigs, sizeof sigs);
        return cs_error_set(e, CS_ERR_INVALID,
                            "Ambiguous call to function system.%s (can be matched by following signatures: %s): use type casts to disambiguate",
                            fn, sigs);
    }
    cast_signatures(to->kind, in, NULL, n, sigs, sizeof sigs);
    return cs_error_set(e, CS_ERR_INVALID,
                        "Invalid call to function system.%s, none of its type signatures match (known type signatures: %s)",
                        fn, sigs);
}

static int compile_args(cql_eval *ev, const sch_table *t, xsel *x, const ast_selector *as,
                        char *names, size_t nn, cs_error *e)
{
    x->n_args = as->n_args;
    x->args = cs_arena_zalloc(ev->arena, sizeof(xsel *) * (size_t)(as->n_args + 1));
    if (!x->args)
        return cs_error_set(e, CS_ERR_SERVER, "out of memory");
    size_t off = 0;
    names[0] = 0;
    for (int i = 0; i < as->n_args; i++) {
        const ast_selector *a = as->args[i];
        const ctype *pt = as->kind == SEL_FUNC && a->kind == SEL_TERM && a->term && a->term->kind == TERM_BIND
                              ? cql__fn_sel_param_type(as->func.name, i, as->n_args, i ? x->args[0]->type : NULL)
                              : NULL;
        if (pt) {   /* Selectable.WithTerm: a marker takes the function's parameter type */
            xsel *m = cs_arena_zalloc(ev->arena, sizeof(xsel));
            if (!m)
                return cs_error_set(e, CS_ERR_SERVER, "out of memory");
            m->kind = SEL_TERM;
            m->col = -1;
            cs_buf_init(&m->first);
            cs_buf_init(&m->acc);
            m->elem_from = a->term;
            m->name = a->text ? a->text : "?";
            m->type = pt;
            x->args[i] = m;
        } else
            x->args[i] = compile(ev, t, a, false, e);
        if (!x->args[i])
            return CS_EUSER;
        if (x->args[i]->contains_agg || x->args[i]->agg)
            x->contains_agg = true;
        off += (size_t)snprintf(names + off, nn > off ? nn - off : 0, "%s%s", i ? ", " : "",
                                x->args[i]->name);
    }
    return 0;
}

/* token(...) in a selection: Cassandra's TokenFct, a function whose
 * arguments have the partition key's types (FunctionCall.validateTypes:
 * the count, then each argument's assignability).  Over the partition key
 * columns in order it is the row's token; otherwise computed from the
 * argument values. */
static int compile_token(const sch_table *t, xsel *x, cs_error *e)
{
    if (x->n_args != t->n_pk)
        return cs_error_set(e, CS_ERR_INVALID,
                            "Invalid number of arguments in call to function system.token: %d required but %d provided",
                            t->n_pk, x->n_args);
    bool same = true;
    for (int i = 0; i < x->n_args; i++) {
        xsel *a = x->args[i];
        const ctype *pt = t->pk[i]->type;
        const ast_term *tm = a->kind == SEL_TERM ? a->elem_from : NULL;
        bool ok = tm && tm->kind == TERM_LITERAL ? ctype_literal_assignable(pt, tm->lit.kind)
                                                 : ctype_value_compatible(pt, a->type);
        if (!ok) {
            char tb[128];
            return cs_error_set(e, CS_ERR_INVALID, "Type error: %s cannot be passed as argument %d of function system.token of type %s",
                                a->name, i, type_name(pt, tb, sizeof(tb)));
        }
        if (tm && tm->kind == TERM_LITERAL)
            a->type = pt;   /* the literal is read as the receiver's type */
        same = same && a->kind == SEL_COLUMN && a->col == col_index(t, t->pk[i]);
    }
    x->is_token = same;
    x->token_of_args = !same;
    x->type = ctype_scalar(CT_BIGINT);
    return 0;
}

static int compile_func(cql_eval *ev, const sch_table *t, xsel *x, const ast_selector *as, cs_error *e)
{
    char an[512], nb[700];
    const char *fn = lower_name(ev, as->func.name);
    if (!fn)
        return cs_error_set(e, CS_ERR_SERVER, "out of memory");
    x->fname = fn;
    if (!strcmp(fn, "fromjson") && (!as->func.ks || !strcasecmp(as->func.ks, "system")))   /* FunctionResolver.get */
        return cs_error_set(e, CS_ERR_INVALID, "fromJson() cannot be used in the selection clause of a SELECT statement");
    if (compile_args(ev, t, x, as, an, sizeof(an), e))
        return CS_EUSER;
    snprintf(nb, sizeof(nb), "system.%s(%s)", fn, an);
    x->name = adup(ev, nb);
    if (!strcmp(fn, "token"))
        return compile_token(t, x, e);
    int agg = !strcmp(fn, "count") ? AGG_COUNT : !strcmp(fn, "min") ? AGG_MIN
            : !strcmp(fn, "max") ? AGG_MAX : !strcmp(fn, "sum") ? AGG_SUM
            : !strcmp(fn, "avg") ? AGG_AVG : AGG_NONE;
    if (agg) {
        if (x->n_args != 1)
            return cs_error_set(e, CS_ERR_INVALID,
                                "Invalid number of arguments in call to function system.%s: 1 required but %d provided",
                                fn, x->n_args);
        if (x->args[0]->agg || x->args[0]->contains_agg)
            return cs_error_set(e, CS_ERR_INVALID, "aggregate functions cannot be used as arguments of aggregate functions");
        x->agg = agg;
        x->contains_agg = true;
        const ctype *at = x->args[0]->type;
        if (agg == AGG_COUNT)
            x->type = ctype_scalar(CT_BIGINT);
        else if ((agg == AGG_SUM || agg == AGG_AVG) && !ctype_is_numeric(at)) {
            char tb[128];
            return cs_error_set(e, CS_ERR_INVALID,
                                "Invalid call to function %s, none of its type signatures match (argument of type %s)",
                                fn, type_name(at, tb, sizeof(tb)));
        } else
            x->type = at->kind == CT_COUNTER ? ctype_scalar(CT_BIGINT) : at;
        cs_buf_init(&x->acc);
        return 0;
    }
    if (!strcmp(fn, "floor") && x->n_args == 3 && x->args[0]->type && x->args[2]->kind == SEL_TERM &&
        x->args[2]->elem_from && x->args[2]->elem_from->kind == TERM_LITERAL &&
        x->args[2]->elem_from->lit.kind == LIT_STRING)   /* the start: a string literal takes the time's kind */
        x->args[2]->type = ctype_scalar(x->args[0]->type->kind == CT_DATE ? CT_DATE : CT_TIMESTAMP);
    if (x->n_args <= 8) {   /* the native functions of fixed signatures: FunctionResolver's choice and messages */
        cql_fn_arg fa[8];
        for (int i = 0; i < x->n_args; i++) {
            const xsel *a = x->args[i];
            const ast_term *tm = a->kind == SEL_TERM ? a->elem_from : NULL;
            fa[i] = (cql_fn_arg){ .type = tm ? NULL : a->type, .lit = tm && tm->kind == TERM_LITERAL ? (int)tm->lit.kind : -1,
                                  .marker = tm && tm->kind == TERM_BIND, .null = tm && tm->kind == TERM_NULL,
                                  .text = a->name };
        }
        ctype_kind params[8], ret;
        int r = cql__fn_resolve(as->func.ks, fn, fa, x->n_args, params, &ret, e);
        if (r < 0)
            return r;
        if (r == 0) {   /* each argument read as its parameter's type (value-compatible bytes) */
            for (int i = 0; i < x->n_args; i++)
                x->args[i]->type = ctype_scalar(params[i]);
            x->type = ctype_scalar(ret);
            return 0;
        }
    }
    const ctype *at[32];
    for (int i = 0; i < x->n_args && i < 32; i++)
        at[i] = x->args[i]->type;
    x->type = cql__fn_return_type(fn, at, x->n_args, NULL);
    if (!x->type && cql__fn_signatures(fn))
        return cs_error_set(e, CS_ERR_INVALID,
                            "Invalid call to function %s, none of its type signatures match (known type signatures: %s)",
                            fn, cql__fn_signatures(fn));
    if (fn[0] == '_' && as->text)
        x->name = adup(ev, as->text);    /* operators keep their source text: "v + 1" */
    if (!x->type && cql__fn_operator(fn) && x->n_args == 2)   /* FunctionResolver: the operator, the arguments' text */
        return cs_error_set(e, CS_ERR_INVALID, "the '%s' operation is not supported between %s and %s",
                            cql__fn_operator(fn), x->args[0]->name ? x->args[0]->name : "?",
                            x->args[1]->name ? x->args[1]->name : "?");
    if (!x->type)
        return cs_error_set(e, CS_ERR_INVALID, "Unknown function '%s'", as->func.name);
    return 0;
}

static xsel *compile(cql_eval *ev, const sch_table *t, const ast_selector *as, bool top, cs_error *e)
{
    char nb[700];
    xsel *x = cs_arena_zalloc(ev->arena, sizeof(xsel));
    if (!x) {
        cs_error_set(e, CS_ERR_SERVER, "out of memory");
        return NULL;
    }
    x->kind = as->kind;
    x->col = -1;
    cs_buf_init(&x->first);
    cs_buf_init(&x->acc);
    switch (as->kind) {
    case SEL_COLUMN:
    case SEL_WRITETIME:
    case SEL_TTL: {
        const sch_column *c = sch_column_find(t, as->column);
        if (!c) {
            sch_undefined_column(t, as->column, e);
            return NULL;
        }
        x->col = col_index(t, c);
        if (as->kind == SEL_COLUMN) {
            x->type = c->type;
            x->name = c->name;
            break;
        }
        const char *fnn = as->kind == SEL_WRITETIME ? "writetime" : "ttl";
        if (c->kind == COL_PARTITION_KEY || c->kind == COL_CLUSTERING) {
            cs_error_set(e, CS_ERR_INVALID, "Cannot use selection function %s on PRIMARY KEY part %s",
                         as->kind == SEL_WRITETIME ? "writeTime" : "ttl", c->name);
            return NULL;
        }
        if (ctype_is_multicell(c->type)) {
            cs_error_set(e, CS_ERR_INVALID, "Cannot use selection function %s on non-frozen %s %s",
                         as->kind == SEL_WRITETIME ? "writeTime" : "ttl",
                         c->type->kind == CT_UDT ? "UDT" : "collection", c->name);
            return NULL;
        }
        x->type = ctype_scalar(as->kind == SEL_WRITETIME ? CT_BIGINT : CT_INT);
        snprintf(nb, sizeof(nb), "%s(%s)", fnn, c->name);
        x->name = adup(ev, nb);
        break;
    }
    case SEL_COUNT_STAR:
        x->agg = AGG_COUNT_STAR;
        x->contains_agg = true;
        x->type = ctype_scalar(CT_BIGINT);
        x->name = "count";
        break;
    case SEL_FUNC:
        if (compile_func(ev, t, x, as, e))
            return NULL;
        break;
    case SEL_CAST: {
        char an[512], tb[128];
        if (compile_args(ev, t, x, as, an, sizeof(an), e))
            return NULL;
        ctype *ct = ctype_parse(as->cast_type, t->ks->name, NULL, NULL, e);
        if (!ct)
            return NULL;
        x->own_type = ct;
        x->type = ct;
        if (resolve_cast(x->args[0], ct, &x->cast_from, e))
            return NULL;
        snprintf(nb, sizeof(nb), "cast(%s as %s)", an, type_name(ct, tb, sizeof(tb)));
        x->name = adup(ev, nb);
        break;
    }
    case SEL_TERM: {
        const ast_term *tm = as->term;
        x->elem_from = tm;               /* evaluated per row (cheap) */
        x->name = adup(ev, as->text ? as->text : "term");
        if (tm->kind == TERM_CAST) {
            ctype *ct = ctype_parse(tm->cast_type, t->ks->name, NULL, NULL, e);
            if (!ct)
                return NULL;
            x->own_type = ct;
            x->type = ct;
            break;
        }
        if (tm->kind != TERM_LITERAL) {
            cs_error_set(e, CS_ERR_INVALID,
                         "Cannot infer type for term %s in selection clause (try using a cast to force a type)",
                         x->name);
            return NULL;
        }
        x->type = ctype_literal_preferred(tm->lit.kind, tm->lit.text, tm->lit.len);
        break;
    }
    case SEL_FIELD: {
        char an[512];
        if (compile_args(ev, t, x, as, an, sizeof(an), e))
            return NULL;
        const ctype *ut = x->args[0]->type;
        x->field = -1;
        for (int i = 0; ut->kind == CT_UDT && i < ut->n_sub; i++)
            if (!strcmp(ut->field_names[i], as->field))
                x->field = i;
        if (x->field < 0) {
            cs_error_set(e, CS_ERR_INVALID, "Invalid field selection: %s of type %s is not a user type",
                         x->args[0]->name, "value");
            return NULL;
        }
        x->type = ut->sub[x->field];
        snprintf(nb, sizeof(nb), "%s.%s", an, as->field);
        x->name = adup(ev, nb);
        break;
    }
    case SEL_ELEMENT:
    case SEL_SLICE: {
        char an[512];
        if (compile_args(ev, t, x, as, an, sizeof(an), e))
            return NULL;
        const ctype *ct = x->args[0]->type;
        if (ct->kind == CT_LIST) {
            cs_error_set(e, CS_ERR_INVALID, "%s selection is only allowed on sets and maps, but %s is a list",
                         as->kind == SEL_ELEMENT ? "Element" : "Slice", an);
            return NULL;
        }
        if (ct->kind != CT_MAP && ct->kind != CT_SET) {
            char tb[128];
            cs_error_set(e, CS_ERR_INVALID, "Invalid %s selection: %s is of type %s is not a collection",
                         as->kind == SEL_ELEMENT ? "element" : "slice", an, type_name(ct, tb, sizeof(tb)));
            return NULL;
        }
        x->elem_from = as->term;
        x->elem_to = as->term2;
        x->type = as->kind == SEL_SLICE ? ct : (ct->kind == CT_MAP ? ct->sub[1] : ct->sub[0]);
        x->name = adup(ev, as->text ? as->text : an);
        break;
    }
    default:
        cs_error_set(e, CS_ERR_INVALID, "Unsupported selector %s", as->text ? as->text : "");
        return NULL;
    }
    if (top && as->alias)
        x->name = adup(ev, as->alias);
    return x;
}

/* Memo of plain column selections (`SELECT a, b FROM ...`, no alias, no
 * function): the column indexes per statement, checked against the catalog
 * version (any DDL invalidates), the table and the names (another statement
 * may be allocated where a freed one was), so a prepared SELECT does not
 * look its columns up by name on every execution. */
#define SEL_MEMO_SIZE 64
#define SEL_MEMO_COLS 16
typedef struct sel_memo_ent {
    const ast_select *as;
    const sch_table *t;
    uint8_t ver[16];
    int n;
    int16_t cols[SEL_MEMO_COLS];
} sel_memo_ent;

void cql__sel_memo_free(cql_ctx *ctx)
{
    cs_free(ctx->sel_memo);
    ctx->sel_memo = NULL;
}

static bool plain_sel(const ast_selector *a)
{
    return a->kind == SEL_COLUMN && !a->alias;
}

/* The memo entry for `as` when it is a plain column selection that fits. */
static sel_memo_ent *memo_slot(cql_eval *ev, const ast_select *as)
{
    if (!ev->ctx || as->star || as->n_sels <= 0 || as->n_sels > SEL_MEMO_COLS)
        return NULL;
    for (int i = 0; i < as->n_sels; i++)
        if (!plain_sel(as->sels[i]))
            return NULL;
    if (!ev->ctx->sel_memo && !(ev->ctx->sel_memo = cs_calloc(SEL_MEMO_SIZE, sizeof(sel_memo_ent))))
        return NULL;
    return &((sel_memo_ent *)ev->ctx->sel_memo)[((uintptr_t)as >> 4) % SEL_MEMO_SIZE];
}

static bool memo_hit(const sel_memo_ent *m, const ast_select *as, const sch_table *t,
                     const uint8_t ver[16])
{
    if (m->as != as || m->t != t || m->n != as->n_sels || memcmp(m->ver, ver, 16))
        return false;
    for (int i = 0; i < m->n; i++)
        if (m->cols[i] >= t->n_cols || strcmp(t->cols[m->cols[i]].name, as->sels[i]->column))
            return false;
    return true;
}

int cql__sel_compile(cql_eval *ev, const sch_table *t, const ast_select *as, xselection *out,
                     cs_error *e)
{
    memset(out, 0, sizeof(*out));
    out->json = as->json;
    out->star = as->star || as->n_sels == 0;
    uint8_t ver[16];
    sel_memo_ent *memo = memo_slot(ev, as);
    if (memo) {
        sch_version(ev->ctx->cat, ver);
        if (memo_hit(memo, as, t, ver)) {
            int n = memo->n;
            out->sels = cs_arena_alloc(ev->arena, sizeof(xsel *) * (size_t)(n + 1));
            xsel *xs = cs_arena_zalloc(ev->arena, sizeof(xsel) * (size_t)n);
            if (!out->sels || !xs)
                return cs_error_set(e, CS_ERR_SERVER, "out of memory");
            for (int i = 0; i < n; i++) {
                xsel *x = &xs[i];   /* as compile() makes a SEL_COLUMN (the bufs zeroed = initialized) */
                const sch_column *c = &t->cols[memo->cols[i]];
                x->kind = SEL_COLUMN;
                x->col = memo->cols[i];
                x->type = c->type;
                x->name = c->name;
                out->sels[i] = x;
                if (c->kind == COL_STATIC)
                    out->selects_static = true;
            }
            out->sels[n] = NULL;
            out->n = n;
            return 0;
        }
    }
    int rc = sel_compile(ev, t, as, out, e);
    if (rc == 0 && memo) {
        memo->as = as;
        memo->t = t;
        memcpy(memo->ver, ver, 16);
        memo->n = out->n;
        for (int i = 0; i < out->n; i++)
            memo->cols[i] = (int16_t)out->sels[i]->col;
    }
    return rc;
}

/* Whether a selector reads a static column, at any depth (a column,
 * writetime/ttl of one, a function or cast of one). */
static bool refs_static(const sch_table *t, const xsel *x)
{
    if (x->col >= 0 && t->cols[x->col].kind == COL_STATIC)
        return true;
    for (int i = 0; i < x->n_args; i++)
        if (x->args[i] && refs_static(t, x->args[i]))
            return true;
    return false;
}

static int sel_compile(cql_eval *ev, const sch_table *t, const ast_select *as, xselection *out,
                       cs_error *e)
{
    int n = as->n_sels, col = 0;
    if (out->star) {                 /* every column but COMPACT STORAGE's hidden ones */
        n = 0;
        for (int i = 0; i < t->n_cols; i++)
            n += !t->cols[i].hidden;
    }
    out->sels = cs_arena_zalloc(ev->arena, sizeof(xsel *) * (size_t)(n + 1));
    if (!out->sels)
        return cs_error_set(e, CS_ERR_SERVER, "out of memory");
    for (int i = 0; i < n; i++) {
        xsel *x;
        if (out->star) {
            x = cs_arena_zalloc(ev->arena, sizeof(xsel));
            if (!x)
                return cs_error_set(e, CS_ERR_SERVER, "out of memory");
            while (t->cols[col].hidden)
                col++;
            cs_buf_init(&x->first);
            cs_buf_init(&x->acc);
            x->kind = SEL_COLUMN;
            x->col = col;
            x->type = t->cols[col].type;
            x->name = t->cols[col].name;
            col++;
        } else {
            x = compile(ev, t, as->sels[i], true, e);
            if (!x) {
                out->n = i;
                return CS_EUSER;
            }
        }
        out->sels[i] = x;
        out->n = i + 1;
        if (x->agg || x->contains_agg)
            out->has_agg = true;
        if (refs_static(t, x))
            out->selects_static = true;
    }
    if (out->star)
        for (int i = 0; i < t->n_cols; i++)
            if (t->cols[i].kind == COL_STATIC)
                out->selects_static = true;
    return 0;
}

static void destroy_sel(xsel *x)
{
    if (!x)
        return;
    for (int i = 0; i < x->n_args; i++)
        destroy_sel(x->args[i]);
    cs_buf_destroy(&x->acc);
    cs_buf_destroy(&x->first);
    if (x->own_type)
        ctype_unref(x->own_type);
    x->own_type = NULL;
}

xsel *cql__sel_compile_one(cql_eval *ev, const sch_table *t, const ast_selector *as, cs_error *e)
{
    return compile(ev, t, as, false, e);
}

void cql__sel_destroy_one(xsel *x)
{
    if (x)
        destroy_sel(x);
}

void cql__sel_destroy(xselection *x)
{
    if (x->borrowed) {
        x->n = 0;
        return;
    }
    for (int i = 0; i < x->n; i++)
        destroy_sel(x->sels[i]);
    x->n = 0;
}

/* ---------------------------------------------------------------- statement memo */

/* Layout in the memo: the xselection, its pointer array (n + 1, NULL
 * last, as sel_compile leaves it) and the xsel entries. */
size_t cql__sel_memo_size(const ast_select *as, const xselection *sel)
{
    if (as->n_group_by || sel->has_agg || sel->n <= 0)
        return 0;
    for (int i = 0; i < sel->n; i++) {
        const xsel *x = sel->sels[i];
        if (x->kind != SEL_COLUMN || x->own_type || x->n_args || x->agg || x->contains_agg ||
            (!sel->star && as->sels[i]->alias))
            return 0;
    }
    return sizeof(xselection) + sizeof(xsel *) * (size_t)(sel->n + 1) + sizeof(xsel) * (size_t)sel->n;
}

void cql__sel_memo_put(const xselection *sel, void *mem)
{
    xselection *h = mem;
    xsel **ptrs = (xsel **)(h + 1);
    xsel *xs = (xsel *)(ptrs + sel->n + 1);
    *h = *sel;
    h->borrowed = true;
    h->sels = ptrs;
    for (int i = 0; i < sel->n; i++) {
        xs[i] = *sel->sels[i];   /* a plain column: its bufs are empty, it owns nothing */
        ptrs[i] = &xs[i];
    }
    ptrs[sel->n] = NULL;
}

void cql__sel_memo_get(const void *mem, xselection *out)
{
    *out = *(const xselection *)mem;
}

/* ---------------------------------------------------------------- evaluation */

static int put(cql_eval *ev, const void *p, size_t n, cql_value *out, cs_error *e)
{
    if (n && !p)
        return cs_error_set(e, CS_ERR_SERVER, "out of memory");
    out->len = (int32_t)n;
    out->p = cs_arena_memdup(ev->arena, n ? p : "", n ? n : 1);
    return out->p ? 0 : cs_error_set(e, CS_ERR_SERVER, "out of memory");
}

/* TokenFct.execute: null if an argument is null, else the Murmur3 token
 * of the partition key the arguments make. */
static int token_value(cql_eval *ev, const sch_table *t, const cql_value *args, int n, cql_value *out,
                       cs_error *e)
{
    out->len = CQL_NULL;
    for (int i = 0; i < n; i++)
        if (args[i].len < 0)
            return 0;
    cs_buf kb;
    cs_buf_init(&kb);
    int rc = sch_partition_key(t, args, &kb);
    if (rc || kb.err) {
        bool oom = kb.err || rc == CS_ENOMEM;
        cs_buf_destroy(&kb);
        return oom ? cs_error_set(e, CS_ERR_SERVER, "out of memory")
                   : cs_error_set(e, CS_ERR_INVALID, "Invalid partition key value");
    }
    uint8_t b[8];
    cs_st64(b, (uint64_t)cs_murmur3_token(kb.p ? kb.p : (const uint8_t *)"", kb.len));
    cs_buf_destroy(&kb);
    return put(ev, b, 8, out, e);
}

/* CAST(v AS to): numeric conversions, anything to text/ascii. */
static int cast_value(cql_eval *ev, const ctype *from, const ctype *to, const cql_value *v,
                      cql_value *out, cs_error *e)
{
    *out = *v;
    if (v->len <= 0 || ctype_equal(from, to))
        return 0;
    cs_buf b;
    cs_buf_init(&b);
    int rc = 0;
    if (to->kind == CT_VARCHAR || to->kind == CT_ASCII) {
        rc = ctype_format_cql(from, v->p, (size_t)v->len, &b);
        size_t s = 0, n = b.len;
        if (rc == 0 && n >= 2 && b.p[0] == '\'' && b.p[n - 1] == '\'') {
            s = 1;
            n -= 2;
        }
        if (rc == 0)
            rc = put(ev, b.p + s, n, out, e);
    } else if (ctype_is_numeric(from) && ctype_is_numeric(to)) {
        /* CastFcts' Number conversions (ctype_num_cast) */
        rc = ctype_num_cast(from, to, v->p, (size_t)v->len, &b);
        if (rc == 0)
            rc = put(ev, b.p, b.len, out, e);
        else if (rc == CS_EINVAL) {   /* NaN or an infinity to decimal: BigDecimal(Float.toString(x)) throws */
            char fn[64];
            cast_fn_name(to->kind, fn, sizeof fn);
            double d = ctype_num_to_double(from, v->p, (size_t)v->len);
            rc = cs_error_set(e, CS_ERR_FUNCTION_FAILURE, "execution of 'system.%s[%s]' failed: "
                              "java.lang.NumberFormatException: Character %c is neither a decimal digit number, "
                              "decimal point, nor \"e\" notation exponential mark.",
                              fn, ctype_kind_name(from->kind), d != d ? 'N' : 'I');
            snprintf(e->keyspace, sizeof e->keyspace, "system");
            snprintf(e->table, sizeof e->table, "%s", fn);
            snprintf(e->arg_types, sizeof e->arg_types, "%s", ctype_kind_name(from->kind));
        }
    } else {
        const char *fn = to->kind == CT_TIMESTAMP ? "totimestamp" : to->kind == CT_DATE ? "todate" : NULL;
        if (!fn) {
            char a[64], c[64];
            cs_buf_destroy(&b);
            return cs_error_set(e, CS_ERR_INVALID, "%s cannot be cast to %s",
                                type_name(from, a, sizeof(a)), type_name(to, c, sizeof(c)));
        }
        const ctype *rt;
        rc = cql__fn_call(ev, fn, &from, v, 1, NULL, &rt, out, e);
    }
    cs_buf_destroy(&b);
    if (rc > 0)
        rc = 0;
    if (rc && !cs_error_isset(e))
        rc = cs_error_set(e, CS_ERR_INVALID, "Cannot cast value");
    return rc;
}

/* m[k], s[k], m[a..b], s[a..b] on a serialized map/set (C* 4.0 selectors). */
static int elem_select(cql_eval *ev, xsel *s, const cql_value *c, cql_value *out, cs_error *e)
{
    const ctype *ct = s->args[0]->type;
    const ctype *kt = ct->sub[0];
    bool is_map = ct->kind == CT_MAP;
    cql_value from = { NULL, CQL_NULL }, to = { NULL, CQL_NULL };
    int rc;
    if (s->elem_from && (rc = cql__term_eval(ev, s->elem_from, kt, "key", &from, e)))
        return rc;
    if (s->elem_to && (rc = cql__term_eval(ev, s->elem_to, kt, "key", &to, e)))
        return rc;
    if (s->kind == SEL_ELEMENT && from.len < 0)
        return 0;
    cs_rd r;
    cs_rd_init(&r, c->p, (size_t)c->len);
    int32_t n = (int32_t)cs_rd_u32(&r);
    cs_buf b;
    cs_buf_init(&b);
    int32_t kept = 0;
    cs_buf_put_u32(&b, 0);
    for (int32_t i = 0; i < n && !r.err; i++) {
        const uint8_t *kp = NULL, *vp = NULL;
        int32_t kl = cs_rd_bytes(&r, &kp), vl = -1;
        if (is_map)
            vl = cs_rd_bytes(&r, &vp);
        if (r.err || kl < 0)
            break;
        if (s->kind == SEL_ELEMENT) {
            if (ctype_compare(kt, kp, (size_t)kl, from.p, (size_t)from.len) == 0) {
                cs_buf_destroy(&b);
                out->p = is_map ? vp : kp;
                out->len = is_map ? vl : kl;
                return 0;
            }
            continue;
        }
        if (from.len >= 0 && ctype_compare(kt, kp, (size_t)kl, from.p, (size_t)from.len) < 0)
            continue;
        if (to.len >= 0 && ctype_compare(kt, kp, (size_t)kl, to.p, (size_t)to.len) > 0)
            continue;
        kept++;
        cs_buf_put_bytes(&b, kp, kl);
        if (is_map)
            cs_buf_put_bytes(&b, vp, vl);
    }
    if (s->kind == SEL_ELEMENT) {
        cs_buf_destroy(&b);
        return 0;
    }
    if (b.err) {
        cs_buf_destroy(&b);
        return cs_error_set(e, CS_ERR_SERVER, "out of memory");
    }
    cs_st32(b.p, (uint32_t)kept);
    rc = put(ev, b.p, b.len, out, e);
    cs_buf_destroy(&b);
    return rc;
}

/* A function, cast or field selector applied to its arguments' values
 * (args[0..n)): from a row (cql__sel_eval) or from the arguments' results
 * over a group when an aggregate is inside it (cql__sel_agg_result). */
static int sel_apply(cql_eval *ev, const sch_table *t, xsel *s, cql_value *args, int n, cql_value *out, cs_error *e)
{
    const ctype *types[32];
    for (int i = 0; i < n; i++)
        types[i] = s->args[i]->type;
    if (s->kind == SEL_ELEMENT || s->kind == SEL_SLICE)
        return n < 1 || args[0].len < 0 ? 0 : elem_select(ev, s, &args[0], out, e);
    if (s->kind == SEL_CAST)
        return cast_value(ev, s->cast_from ? s->cast_from : types[0], s->type, &args[0], out, e);
    if (s->token_of_args)
        return token_value(ev, t, args, n, out, e);
    if (s->kind == SEL_FIELD) {
        if (args[0].len < 0)
            return 0;
        cs_rd r;
        cs_rd_init(&r, args[0].p, (size_t)args[0].len);
        for (int i = 0; i <= s->field; i++) {
            if (cs_rd_left(&r) == 0)
                return 0;
            const uint8_t *p = NULL;
            int32_t l = cs_rd_bytes(&r, &p);
            if (r.err)
                return 0;
            if (i == s->field) {
                out->p = p;
                out->len = l < 0 ? CQL_NULL : l;
            }
        }
        return 0;
    }
    const ctype *rt;
    return cql__fn_call(ev, s->fname, types, args, n, NULL, &rt, out, e);
}

int cql__sel_eval(cql_eval *ev, const sch_table *t, xsel *s, const xrow *row, cql_value *out,
                  cs_error *e)
{
    out->p = NULL;
    out->len = CQL_NULL;
    switch (s->kind) {
    case SEL_COLUMN:
        *out = row->vals[s->col];
        return 0;
    case SEL_WRITETIME:
        if (row->vals[s->col].len >= 0 && row->wt[s->col] != INT64_MIN) {
            uint8_t b[8];
            cs_st64(b, (uint64_t)row->wt[s->col]);
            return put(ev, b, 8, out, e);
        }
        return 0;
    case SEL_TTL:
        if (row->vals[s->col].len >= 0 && row->ttl[s->col] > 0) {
            uint8_t b[4];
            cs_st32(b, (uint32_t)row->ttl[s->col]);
            return put(ev, b, 4, out, e);
        }
        return 0;
    case SEL_TERM:
        return cql__term_eval(ev, s->elem_from, s->type, "selector", out, e);
    case SEL_ELEMENT:
    case SEL_SLICE: {
        cql_value c;
        int rc = cql__sel_eval(ev, t, s->args[0], row, &c, e);
        if (rc || c.len < 0)
            return rc;
        return elem_select(ev, s, &c, out, e);
    }
    case SEL_FUNC:
    case SEL_CAST:
    case SEL_FIELD: {
        if (s->is_token) {
            uint8_t b[8];
            cs_st64(b, (uint64_t)row->token);
            return put(ev, b, 8, out, e);
        }
        cql_value args[32];
        int n = s->n_args < 32 ? s->n_args : 32;
        for (int i = 0; i < n; i++) {
            int rc = cql__sel_eval(ev, t, s->args[i], row, &args[i], e);
            if (rc)
                return rc;
        }
        return sel_apply(ev, t, s, args, n, out, e);
    }
    default:
        return 0;
    }
}

/* ---------------------------------------------------------------- aggregates */

/* A selector over a group's rows: an aggregate accumulates; a function,
 * cast, field or element over an aggregate (`max(c) + 1`, `CAST(count(*)
 * AS int)`) passes the row to its arguments, as Cassandra's FunctionSelector
 * and friends do, and is applied to their results at the group's end; any
 * other selector keeps its value of the group's first row. */
static int agg_add_checked(cql_eval *ev, const sch_table *t, xsel *s, const xrow *row, cs_error *e);

static int agg_add_one(cql_eval *ev, const sch_table *t, xsel *s, const xrow *row, cs_error *e)
{
    if (!s->agg && s->contains_agg) {
        for (int i = 0; i < s->n_args; i++) {
            int rc = agg_add_checked(ev, t, s->args[i], row, e);
            if (rc)
                return rc;
        }
        return 0;
    }
    if (!s->agg) {
        if (s->first_set)
            return 0;
        cql_value v;
        int rc = cql__sel_eval(ev, t, s, row, &v, e);
        if (rc)
            return rc;
        s->first_set = true;
        s->first_len = v.len;
        cs_buf_reset(&s->first);
        if (v.len > 0)
            cs_buf_put(&s->first, v.p, (size_t)v.len);
        return 0;
    }
    if (s->agg == AGG_COUNT_STAR) {
        s->count++;
        return 0;
    }
    cql_value v;
    int rc = cql__sel_eval(ev, t, s->args[0], row, &v, e);
    if (rc)
        return rc;
    if (v.len < 0)
        return 0;
    const ctype *ty = s->args[0]->type;
    switch (s->agg) {
    case AGG_COUNT:
        s->count++;
        break;
    case AGG_MIN:
    case AGG_MAX: {
        if (v.len == 0 && ctype_is_numeric(ty))
            break;
        int c = s->acc_set ? ctype_compare(ty, v.p, (size_t)v.len, s->acc.p, s->acc.len) : 0;
        if (!s->acc_set || (s->agg == AGG_MIN ? c < 0 : c > 0)) {
            cs_buf_reset(&s->acc);
            cs_buf_put(&s->acc, v.p, (size_t)v.len);
            s->acc_set = true;
        }
        break;
    }
    case AGG_SUM:
    case AGG_AVG: {
        if (v.len == 0)
            break;
        const ctype *nt = ty->kind == CT_COUNTER ? ctype_scalar(CT_BIGINT) : ty;
        s->count++;
        if (!s->acc_set) {
            cs_buf_reset(&s->acc);
            cs_buf_put(&s->acc, v.p, (size_t)v.len);
            s->acc_set = true;
            break;
        }
        cs_buf nb;
        cs_buf_init(&nb);
        if (ctype_num_add(nt, s->acc.p, s->acc.len, v.p, (size_t)v.len, &nb) == 0) {
            cs_buf_reset(&s->acc);
            cs_buf_put(&s->acc, nb.p, nb.len);
        }
        cs_buf_destroy(&nb);
        break;
    }
    }
    return 0;
}

static int agg_add_checked(cql_eval *ev, const sch_table *t, xsel *s, const xrow *row, cs_error *e)
{
    int rc = agg_add_one(ev, t, s, row, e);
    if (rc == 0 && (s->acc.err || s->first.err))
        rc = cs_error_set(e, CS_ERR_SERVER, "out of memory");
    return rc;
}

int cql__sel_agg_add(cql_eval *ev, const sch_table *t, xselection *x, const xrow *row, cs_error *e)
{
    for (int i = 0; i < x->n; i++) {
        int rc = agg_add_checked(ev, t, x->sels[i], row, e);
        if (rc)
            return rc;
    }
    return 0;
}

/* A selector of terms only (`1`, `intAsBlob(1)`): Cassandra's terminal
 * selectors, whose value needs no row, so a group without rows has it too. */
static bool sel_const(const xsel *s)
{
    if (s->kind == SEL_TERM)
        return true;
    if ((s->kind != SEL_FUNC && s->kind != SEL_CAST) || s->agg || s->is_token)
        return false;
    for (int i = 0; i < s->n_args; i++)
        if (!sel_const(s->args[i]))
            return false;
    return true;
}

int cql__sel_agg_result(cql_eval *ev, const sch_table *t, xsel *s, cql_value *out, cs_error *e)
{
    out->p = NULL;
    out->len = CQL_NULL;
    if (sel_const(s))
        return cql__sel_eval(ev, t, s, NULL, out, e);
    if (!s->agg && s->contains_agg) {
        cql_value args[32];
        int n = s->n_args < 32 ? s->n_args : 32;
        for (int i = 0; i < n; i++) {
            int rc = cql__sel_agg_result(ev, t, s->args[i], &args[i], e);
            if (rc)
                return rc;
        }
        return sel_apply(ev, t, s, args, n, out, e);
    }
    if (!s->agg) {
        if (s->first_set && s->first_len >= 0)
            return put(ev, s->first.p, (size_t)s->first_len, out, e);
        return 0;
    }
    if (s->agg == AGG_COUNT || s->agg == AGG_COUNT_STAR) {
        uint8_t b[8];
        cs_st64(b, (uint64_t)s->count);
        return put(ev, b, 8, out, e);
    }
    if (s->agg == AGG_MIN || s->agg == AGG_MAX) {
        if (s->acc_set)
            return put(ev, s->acc.p, s->acc.len, out, e);
        return 0;
    }
    cs_buf b;
    cs_buf_init(&b);
    int rc;
    if (!s->acc_set)
        rc = ctype_num_from_int64(s->type, 0, &b);
    else if (s->agg == AGG_SUM)
        rc = (cs_buf_put(&b, s->acc.p, s->acc.len), 0);
    else
        rc = ctype_num_div_int(s->type, s->acc.p, s->acc.len, s->count, &b);
    if (rc == 0)
        rc = put(ev, b.p, b.len, out, e);
    else
        rc = cs_error_set(e, CS_ERR_INVALID, "Cannot compute aggregate %s", s->name);
    cs_buf_destroy(&b);
    return rc;
}

static void reset_one(xsel *s)
{
    if (!s->agg && s->contains_agg)
        for (int i = 0; i < s->n_args; i++)
            reset_one(s->args[i]);
    s->count = 0;
    s->acc_set = false;
    s->first_set = false;
    cs_buf_reset(&s->acc);
    cs_buf_reset(&s->first);
}

void cql__sel_agg_reset(xselection *x)
{
    for (int i = 0; i < x->n; i++)
        reset_one(x->sels[i]);
}

/* ---------------------------------------------------------------- metadata and JSON */

void cql__sel_columns(const xselection *x, cql_rows *w)
{
    if (x->json) {
        cql_rows_col(w, "[json]", ctype_scalar(CT_VARCHAR));
        return;
    }
    for (int i = 0; i < x->n; i++)
        cql_rows_col(w, x->sels[i]->name, x->sels[i]->type);
}

static void json_string(cs_buf *out, const char *s)
{
    cs_buf_put_u8(out, '"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            cs_buf_put_u8(out, '\\');
            cs_buf_put_u8(out, c);
        } else if (c < 0x20) {
            char tmp[8];
            snprintf(tmp, sizeof(tmp), "\\u%04x", c);
            cs_buf_put(out, tmp, 6);
        } else
            cs_buf_put_u8(out, c);
    }
    cs_buf_put_u8(out, '"');
}

int cql__sel_json_row(const xselection *x, const cql_value *vals, cs_buf *out)
{
    cs_buf_put_u8(out, '{');
    for (int i = 0; i < x->n; i++) {
        if (i)
            cs_buf_put(out, ", ", 2);
        /* Cassandra (Selection.rowToJson) double-quotes names with upper case */
        const char *name = x->sels[i]->name ? x->sels[i]->name : "";
        bool upper = false;
        for (const char *c = name; *c; c++)
            upper |= (*c >= 'A' && *c <= 'Z');
        if (upper) {
            size_t nl = strlen(name);
            char *q = cs_malloc(nl + 3);
            if (!q)
                return CS_ENOMEM;
            q[0] = '"';
            memcpy(q + 1, name, nl);
            q[nl + 1] = '"';
            q[nl + 2] = 0;
            json_string(out, q);
            cs_free(q);
        } else
            json_string(out, name);
        cs_buf_put(out, ": ", 2);
        if (vals[i].len < 0)
            cs_buf_put(out, "null", 4);
        else if (ctype_format_json(x->sels[i]->type, vals[i].p, (size_t)vals[i].len, out))
            return CS_EINVAL;
    }
    cs_buf_put_u8(out, '}');
    return out->err;
}
