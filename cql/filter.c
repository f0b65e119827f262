/*
 * filter.c: row filters of SELECT (ALLOW FILTERING, CONTAINS, map entries,
 * tuple comparisons) and whether a secondary index can serve one.
 * Owner: exec-read.  Callers: restrict.c, select_scan.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cql/restrict_int.h"
#include "common/alloc.h"
#include "common/hash.h"

/* Is there a secondary index able to answer filter f (Cassandra: EQ on a
 * regular/static column, CONTAINS on values(c), CONTAINS KEY on keys(c),
 * c[k] = v on entries(c))? */
bool cql__index_serves(const sch_table *t, const cql_filter *f)
{
    const char *want = NULL;
    if (f->element && f->op == OP_EQ)
        want = "entries";
    else if (f->op == OP_CONTAINS)
        want = "values";
    else if (f->op == OP_CONTAINS_KEY)
        want = "keys";
    else if (f->op != OP_EQ)
        return false;
    const char *name = f->col->name;
    size_t nl = strlen(name);
    for (int i = 0; i < t->n_indexes; i++) {
        const char *tg = t->indexes[i]->target;
        if (!tg)
            continue;
        if (tg[0] == '"') {                 /* quoted column name */
            tg++;
        }
        const char *open = strchr(tg, '(');
        if (!open) {
            if (!strncmp(tg, name, nl) && (tg[nl] == 0 || tg[nl] == '"'))
                return !want || (want && !strcmp(want, "values") && !ctype_is_multicell(f->col->type)) ||
                       (want && !strcmp(want, "values") && f->col->type->kind != CT_MAP);
            continue;
        }
        size_t kl = (size_t)(open - tg);
        const char *arg = open + 1;
        if (*arg == '"')
            arg++;
        if (strncmp(arg, name, nl) || (arg[nl] != ')' && arg[nl] != '"'))
            continue;
        if (want && strlen(want) == kl && !strncmp(tg, want, kl))
            return true;
        if (!want && kl == 4 && !strncmp(tg, "full", 4))
            return true;
    }
    return false;
}

/* ---------------------------------------------------------------- filter evaluation */

static bool op_holds(ast_op op, int c)
{
    switch (op) {
    case OP_EQ: return c == 0;
    case OP_NEQ: return c != 0;
    case OP_LT: return c < 0;
    case OP_LTE: return c <= 0;
    case OP_GT: return c > 0;
    case OP_GTE: return c >= 0;
    default: return false;
    }
}

bool cql__filter_match_row(const cql_filter *f, const sch_table *t, const cql_value *vals)
{
    const cql_value *v = &vals[f->col - t->cols];
    return cql__filter_match(f, v->p, v->len);
}

bool cql__filter_match(const cql_filter *f, const uint8_t *v, int32_t len)
{
    const ctype *t = f->col->type;
    if (f->op == OP_IS_NOT_NULL)
        return len >= 0;
    if (len < 0)
        return false;
    if (f->element || f->op == OP_CONTAINS || f->op == OP_CONTAINS_KEY) {
        if (!ctype_is_collection(t))
            return false;
        cs_rd r;
        cs_rd_init(&r, v, (size_t)len);
        int32_t n = (int32_t)cs_rd_u32(&r);
        bool is_map = t->kind == CT_MAP;
        for (int32_t i = 0; i < n && !r.err; i++) {
            const uint8_t *kp = NULL, *vp = NULL;
            int32_t kl = cs_rd_bytes(&r, &kp), vl = -1;
            if (is_map)
                vl = cs_rd_bytes(&r, &vp);
            if (r.err)
                return false;
            if (f->element) {
                if (is_map) {
                    if (ctype_compare(t->sub[0], kp, (size_t)kl, f->key.p, (size_t)f->key.len) == 0)
                        return vl >= 0 && op_holds(f->op == OP_IN ? OP_EQ : f->op,
                                                   ctype_compare(t->sub[1], vp, (size_t)vl, f->val.p,
                                                                 (size_t)f->val.len));
                } else if (t->kind == CT_LIST && f->key.len == 4 && (int32_t)cs_be32(f->key.p) == i) {
                    return op_holds(f->op, ctype_compare(t->sub[0], kp, (size_t)kl, f->val.p,
                                                         (size_t)f->val.len));
                }
                continue;
            }
            if (f->op == OP_CONTAINS_KEY) {
                if (is_map && ctype_compare(t->sub[0], kp, (size_t)kl, f->val.p, (size_t)f->val.len) == 0)
                    return true;
            } else {
                const ctype *et = is_map ? t->sub[1] : t->sub[0];
                const uint8_t *ep = is_map ? vp : kp;
                int32_t el = is_map ? vl : kl;
                if (el >= 0 && ctype_compare(et, ep, (size_t)el, f->val.p, (size_t)f->val.len) == 0)
                    return true;
            }
        }
        return false;
    }
    if (f->op == OP_IN) {
        for (int i = 0; i < f->n_in; i++)
            if (ctype_compare(t, v, (size_t)len, f->in[i].p, (size_t)f->in[i].len) == 0)
                return true;
        return false;
    }
    return op_holds(f->op, ctype_compare(t, v, (size_t)len, f->val.p, (size_t)f->val.len));
}

