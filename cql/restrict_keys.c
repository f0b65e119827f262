/*
 * restrict_keys.c: from collected restrictions to what storage reads:
 * serialized partition keys (cartesian product of = / IN per component) and
 * byte-comparable clustering slices (prefix groups x optional slice, DESC
 * columns inverted, a mixed-order multi-column slice as the exact slices of
 * its tuple comparison).  Owner: exec-read.  Caller: restrict.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cql/restrict_int.h"
#include "common/util.h"
#include "common/alloc.h"
#include "common/hash.h"

/* ---------------------------------------------------------------- partition keys */

/* Turn a pk/ck = / IN group into an equivalent row filter. */
static int group_to_filter(cql_wan *a, const sch_column *c, const cql_eqgroup *g)
{
    cql_filter *f = cql__wan_new_filter(a, c, g->k == 1 ? OP_EQ : OP_IN);
    if (!f)
        return cs_error_set(a->e, CS_ERR_SERVER, "out of memory");
    if (g->k == 1)
        f->val = g->tuples[0];
    else {
        f->in = g->tuples;
        f->n_in = g->k;
    }
    return 0;
}

/* The serialized partition key of vals (one per pk column) as an arena copy
 * in *out; b is scratch. */
static int pk_serialize(cs_arena *ar, const sch_table *t, const cql_value *vals, cs_buf *b,
                        cql_value *out, cs_error *e)
{
    if (t->n_pk == 1 && vals[0].len >= 0) {
        /* a single component is serialized as itself (sch_partition_key) */
        out->len = vals[0].len;
        out->p = cs_arena_memdup(ar, vals[0].p ? vals[0].p : (const uint8_t *)"",
                                 vals[0].len ? (size_t)vals[0].len : 1);
    } else {
        cs_buf_reset(b);
        int krc = sch_partition_key(t, vals, b);
        if (krc != 0 || b->err) {
            bool oom = b->err || krc == CS_ENOMEM;
            return oom ? cs_error_set(e, CS_ERR_SERVER, "out of memory")
                       : cs_error_set(e, CS_ERR_INVALID, "Invalid partition key value");
        }
        out->len = (int32_t)b->len;
        out->p = cs_arena_memdup(ar, b->p ? b->p : (const uint8_t *)"", b->len ? b->len : 1);
    }
    return out->p ? 0 : cs_error_set(e, CS_ERR_SERVER, "out of memory");
}

int cql__wan_build_pks(cql_wan *a)
{
    const sch_table *t = a->t;
    cql_where *w = a->w;
    bool all = true, any = false;
    for (int i = 0; i < t->n_pk; i++) {
        all &= a->pk_has[i];
        any |= a->pk_has[i];
    }
    if (a->kind != CQL_WHERE_SELECT && (!all || a->pk_slice)) {
        /* Cassandra's order: parts with no restriction at all first, then
         * a slice on one */
        char lst[600];
        size_t off = 0;
        lst[0] = 0;
        for (int i = 0; i < t->n_pk; i++)
            if (!a->pk_has[i] && !a->pk_sliced[i])
                off += (size_t)snprintf(lst + off, sizeof(lst) - off, "%s%s", off ? ", " : "", t->pk[i]->name);
        if (off)
            return cs_error_set(a->e, CS_ERR_INVALID, "Some partition key parts are missing: %s", lst);
        return cs_error_set(a->e, CS_ERR_INVALID,
                            "Only EQ and IN relation are supported on the partition key (unless you use the token() "
                            "function) for %s statements", a->kind == CQL_WHERE_UPDATE ? "UPDATE" : "DELETE");
    }
    if (!all) {
        /* some components (with or without a token range: TokenFilter
         * then keeps the range and filters on them) */
        if (any || a->pk_slice) {
            if (!(a->flags & CQL_WHERE_ALLOW_FILTERING))
                return cs_error_set(a->e, CS_ERR_INVALID, "%s", CQL__ALLOW_FILTERING_MSG);
            w->needs_filtering = true;
            for (int i = 0; i < t->n_pk; i++)
                if (a->pk_has[i]) {
                    int rc = group_to_filter(a, t->pk[i], &a->pk_eq[i]);
                    if (rc)
                        return rc;
                }
        }
        return 0;
    }
    if (a->pk_slice) {   /* = on every component plus a slice: just filter */
        w->needs_filtering = true;
    }
    w->pk_all = true;
    long total = 1;
    w->n_pk_raw = 0;
    for (int i = 0; i < t->n_pk && i < 16; i++)
        w->pk_raw[w->n_pk_raw++] = a->pk_eq[i].raw;
    for (int i = 0; i < t->n_pk; i++) {
        total *= a->pk_eq[i].k;
        if (total > CQL__MAX_KEYS)
            return cs_error_set(a->e, CS_ERR_INVALID,
                                "Select query cannot be completed because it selects too many partitions keys (more than %d)",
                                CQL__MAX_KEYS);
    }
    w->pks = cs_arena_zalloc(a->ev->arena, sizeof(cql_value) * (size_t)(total + 1));
    if (!w->pks)
        return cs_error_set(a->e, CS_ERR_SERVER, "out of memory");
    cql_value vals[16];
    int idx[16] = {0};
    cs_buf b;
    cs_buf_init(&b);
    for (long n = 0; n < total; n++) {
        for (int i = 0; i < t->n_pk; i++)
            vals[i] = a->pk_eq[i].tuples[idx[i]];
        int rc = pk_serialize(a->ev->arena, t, vals, &b, &w->pks[w->n_pks], a->e);
        if (rc) {
            cs_buf_destroy(&b);
            return rc;
        }
        w->n_pks++;
        for (int i = t->n_pk - 1; i >= 0; i--) {   /* odometer */
            if (++idx[i] < a->pk_eq[i].k)
                break;
            idx[i] = 0;
        }
    }
    cs_buf_destroy(&b);
    if (a->token_seen) {
        /* k = x AND token(k) > y: the keys whose token is in range (TokenFilter) */
        int m = 0;
        for (int i = 0; i < w->n_pks; i++) {
            int64_t tok = cs_murmur3_token(w->pks[i].p, (size_t)w->pks[i].len);
            bool lo_ok = tok > w->tok_start || (tok == w->tok_start && w->tok_start_incl);
            bool hi_ok = tok < w->tok_end || (tok == w->tok_end && w->tok_end_incl);
            if (lo_ok && hi_ok)
                w->pks[m++] = w->pks[i];
        }
        w->n_pks = m;
        if (m == 0)
            w->empty = true;
    }
    if (total == 0)
        w->empty = true;
    return 0;
}

/* ---------------------------------------------------------------- clustering */

/* Arena copy of a clustering key for vals[0..n), optionally ++ 0xFF. */
static int ck_key_in(cs_arena *ar, const sch_table *t, const cql_value *vals, int n, bool after,
                     st_bound *out, bool start, cs_error *e)
{
    cs_buf b;
    cs_buf_init(&b);
    int krc = sch_clustering_key(t, vals, n, &b);
    if (krc != 0 || b.err) {
        bool oom = b.err || krc == CS_ENOMEM;
        cs_buf_destroy(&b);
        return oom ? cs_error_set(e, CS_ERR_SERVER, "out of memory")
                   : cs_error_set(e, CS_ERR_INVALID, "Invalid clustering key value");
    }
    if (after)
        cs_buf_put_u8(&b, CK_AFTER);
    out->len = (uint32_t)b.len;
    out->key = cs_arena_memdup(ar, b.p ? b.p : (const uint8_t *)"", b.len ? b.len : 1);
    out->inclusive = start;
    cs_buf_destroy(&b);
    if (n == 0 && !after)
        out->inclusive = true;   /* empty prefix = unbounded */
    return out->key ? 0 : cs_error_set(e, CS_ERR_SERVER, "out of memory");
}

static int ck_key(cql_wan *a, const cql_value *vals, int n, bool after, st_bound *out, bool start)
{
    return ck_key_in(a->ev->arena, a->t, vals, n, after, out, start, a->e);
}

static int key_cmp(const void *x, const void *y)
{
    const cql_value *a = x, *b = y;
    return cs_bytes_cmp(a->p, (size_t)a->len, b->p, (size_t)b->len);
}

static int slice_cmp(const void *x, const void *y)
{
    const st_slice *a = x, *b = y;
    return cs_bytes_cmp(a->start.key, a->start.len, b->start.key, b->start.len);
}

/* A multi-column slice over columns of mixed clustering order. */
static bool slicer_mixed(const sch_table *t, const cql_slicer *sl)
{
    for (int i = 1; i < sl->n; i++)
        if (t->ck[sl->first + i]->desc != t->ck[sl->first]->desc)
            return true;
    return false;
}

/* The slice for prefix P (m values) and the optional slicer. */
static int make_slice(cql_wan *a, cql_value *vals, int m, const cql_slicer *sl, st_slice *out, bool *empty)
{
    *empty = false;
    st_bound unb = { (const uint8_t *)"", 0, true };
    int rc;
    if (!sl) {
        if (m == 0) {
            out->start = unb;
            out->end = unb;
            return 0;
        }
        if ((rc = ck_key(a, vals, m, false, &out->start, true)))
            return rc;
        return ck_key(a, vals, m, true, &out->end, false);
    }
    bool desc = a->t->ck[sl->first]->desc;
    st_bound lo, hi;        /* value-space bounds as byte keys */
    bool lo_have = sl->lo_set, hi_have = sl->hi_set;
    if (lo_have) {
        memcpy(vals + m, sl->lo, sizeof(cql_value) * (size_t)sl->lo_n);
        /* byte-space: ASC lower -> start; DESC lower -> end */
        if (!desc)
            rc = ck_key(a, vals, m + sl->lo_n, !sl->lo_incl, &lo, true);
        else
            rc = ck_key(a, vals, m + sl->lo_n, sl->lo_incl, &lo, false);
        if (rc)
            return rc;
    }
    if (hi_have) {
        memcpy(vals + m, sl->hi, sizeof(cql_value) * (size_t)sl->hi_n);
        if (!desc)
            rc = ck_key(a, vals, m + sl->hi_n, sl->hi_incl, &hi, false);
        else
            rc = ck_key(a, vals, m + sl->hi_n, !sl->hi_incl, &hi, true);
        if (rc)
            return rc;
    }
    st_bound pstart = unb, pend = unb;
    if (m > 0) {
        if ((rc = ck_key(a, vals, m, false, &pstart, true)))
            return rc;
        if ((rc = ck_key(a, vals, m, true, &pend, false)))
            return rc;
    }
    if (!desc) {
        out->start = lo_have ? lo : pstart;
        out->end = hi_have ? hi : pend;
    } else {
        out->start = hi_have ? hi : pstart;
        out->end = lo_have ? lo : pend;
    }
    if (out->start.len && out->end.len &&
        cs_bytes_cmp(out->start.key, out->start.len, out->end.key, out->end.len) >= 0)
        *empty = true;
    return 0;
}

/* Start-inclusive, end-exclusive byte ranges (a zero length: unbounded). */
static int bound_end_cmp(const st_bound *x, const st_bound *y)
{
    if (!x->len || !y->len)
        return (x->len == 0) - (y->len == 0);   /* unbounded: past every key */
    return cs_bytes_cmp(x->key, x->len, y->key, y->len);
}

/* One side of a multi-column slice over mixed clustering orders, as the
 * disjoint slices of its disjunction: (c1..cn) > (v1..vk) is c1 > v1, or
 * c1 = v1 and c2 > v2, ..., or c1..ck-1 = v1..vk-1 and ck > vk (>= when
 * inclusive): each a prefix and one column's bound, so one byte range
 * whatever that column's order (Cassandra's appendBoundTo cuts the same
 * slices where the order changes).  No side: the prefix's whole range. */
static int side_slices(cql_wan *a, cql_value *vals, int m, const cql_slicer *sl, bool lo, st_slice *out,
                       int *n_out)
{
    *n_out = 0;
    bool set = lo ? sl->lo_set : sl->hi_set;
    if (!set) {
        bool empty;
        int rc = make_slice(a, vals, m, NULL, &out[0], &empty);
        if (rc == 0 && !empty)
            *n_out = 1;
        return rc;
    }
    int k = lo ? sl->lo_n : sl->hi_n;
    const cql_value *v = lo ? sl->lo : sl->hi;
    for (int i = 0; i < k; i++) {
        memcpy(vals + m, v, sizeof(cql_value) * (size_t)i);
        cql_slicer one = { .first = sl->first + i, .n = 1 };
        if (lo) {
            one.lo_set = true; one.lo_n = 1; one.lo = (cql_value *)&v[i];
            one.lo_incl = i == k - 1 && sl->lo_incl;
        } else {
            one.hi_set = true; one.hi_n = 1; one.hi = (cql_value *)&v[i];
            one.hi_incl = i == k - 1 && sl->hi_incl;
        }
        bool empty;
        int rc = make_slice(a, vals, m + i, &one, &out[*n_out], &empty);
        if (rc)
            return rc;
        if (!empty)
            (*n_out)++;
    }
    return 0;
}

/* The exact slices of a mixed-order multi-column slicer after prefix P (m
 * values): its lower side's slices intersected with its upper side's, at
 * most 2 * sl->n, appended at out[*n]. */
static int mixed_slices(cql_wan *a, cql_value *vals, int m, const cql_slicer *sl, st_slice *out, int *n)
{
    st_slice *los = cs_arena_zalloc(a->ev->arena, sizeof(st_slice) * (size_t)(2 * sl->n + 2));
    st_slice *his = los ? los + sl->n + 1 : NULL;
    if (!los)
        return cs_error_set(a->e, CS_ERR_SERVER, "out of memory");
    int nl, nh, rc;
    if ((rc = side_slices(a, vals, m, sl, true, los, &nl)) || (rc = side_slices(a, vals, m, sl, false, his, &nh)))
        return rc;
    for (int i = 0; i < nl; i++)
        for (int j = 0; j < nh; j++) {
            st_slice r;
            r.start = cs_bytes_cmp(los[i].start.key, los[i].start.len, his[j].start.key, his[j].start.len) >= 0
                          ? los[i].start : his[j].start;
            r.end = bound_end_cmp(&los[i].end, &his[j].end) <= 0 ? los[i].end : his[j].end;
            if (r.end.len && cs_bytes_cmp(r.start.key, r.start.len, r.end.key, r.end.len) >= 0)
                continue;
            out[(*n)++] = r;
        }
    return 0;
}

static int ck_filter_from(cql_wan *a, int j)
{
    const sch_column *c = a->t->ck[j];
    const cql_eqgroup *g = &a->ck_eq[j];
    if (g->n && g->in) {
        if (g->n != 1)   /* MultiColumnRestriction.InRestriction.addRowFilterTo */
            return cs_error_set(a->e, CS_ERR_INVALID, "Multicolumn IN filters are not supported");
        return group_to_filter(a, c, g);
    }
    if (g->n) {   /* (c, d) = (1, 2): one = filter per column (EQRestriction.addRowFilterTo) */
        for (int i = 0; i < g->n; i++) {
            cql_filter *f = cql__wan_new_filter(a, a->t->ck[j + i], OP_EQ);
            if (!f)
                return cs_error_set(a->e, CS_ERR_SERVER, "out of memory");
            f->val = g->tuples[i];
        }
        return 0;
    }
    const cql_slicer *s = &a->ck_sl[j];
    if (s->multi)   /* MultiColumnRestriction.SliceRestriction.addRowFilterTo */
        return cs_error_set(a->e, CS_ERR_INVALID, "Multi-column slice restrictions cannot be used for filtering.");
    if (s->lo_set) {
        cql_filter *f = cql__wan_new_filter(a, c, s->lo_incl ? OP_GTE : OP_GT);
        if (!f)
            return cs_error_set(a->e, CS_ERR_SERVER, "out of memory");
        f->val = s->lo[0];
    }
    if (s->hi_set) {
        cql_filter *f = cql__wan_new_filter(a, c, s->hi_incl ? OP_LTE : OP_LT);
        if (!f)
            return cs_error_set(a->e, CS_ERR_SERVER, "out of memory");
        f->val = s->hi[0];
    }
    return 0;
}

int cql__wan_build_ck(cql_wan *a)
{
    const sch_table *t = a->t;
    cql_where *w = a->w;
    int n_ck = t->n_ck;
    bool any = false;
    for (int i = 0; i < n_ck; i++)
        any |= a->ck_used[i];
    w->ck_restricted = any;
    const char *verb = a->kind == CQL_WHERE_UPDATE ? "UPDATE" : "DELETE";
    if (a->flags & CQL_WHERE_STATIC_ONLY) {
        if (any)
            return cs_error_set(a->e, CS_ERR_INVALID,
                                "Invalid restrictions on clustering columns since the %s statement modifies only static columns",
                                verb);
        return 0;
    }
    if (a->kind == CQL_WHERE_UPDATE) {
        char lst[600];
        size_t off = 0;
        lst[0] = 0;
        for (int i = 0; i < n_ck; i++)
            if (!a->ck_used[i])
                off += (size_t)snprintf(lst + off, sizeof(lst) - off, "%s%s", off ? ", " : "", t->ck[i]->name);
        if (off)
            return cs_error_set(a->e, CS_ERR_INVALID, "Some clustering keys are missing: %s", lst);
    }
    int pos = 0;
    cql_eqgroup *groups[64];
    int ng = 0;
    while (pos < n_ck && a->ck_eq[pos].n && ng < 64) {
        groups[ng++] = &a->ck_eq[pos];
        pos += a->ck_eq[pos].n;
    }
    int m = pos;
    const cql_slicer *sl = NULL;
    if (pos < n_ck && a->ck_sl[pos].n) {
        sl = &a->ck_sl[pos];
        pos += sl->n;
    }
    for (int j = pos; j < n_ck; j++) {
        if (!a->ck_used[j])
            continue;
        if (a->kind == CQL_WHERE_SELECT && (a->flags & CQL_WHERE_ALLOW_FILTERING)) {
            w->needs_filtering = true;
            int rc = ck_filter_from(a, j);
            if (rc)
                return rc;
            continue;
        }
        if (sl)
            return cs_error_set(a->e, CS_ERR_INVALID,
                                "Clustering column \"%s\" cannot be restricted (preceding column \"%s\" is restricted by a non-EQ relation)",
                                t->ck[j]->name, t->ck[sl->first]->name);
        if (a->kind == CQL_WHERE_SELECT)
            return cs_error_set(a->e, CS_ERR_INVALID,
                                "PRIMARY KEY column \"%s\" cannot be restricted as preceding column \"%s\" is not restricted",
                                t->ck[j]->name, t->ck[pos]->name);
        return cs_error_set(a->e, CS_ERR_INVALID,
                            "Clustering column \"%s\" cannot be restricted (preceding column \"%s\" is not restricted)",
                            t->ck[j]->name, t->ck[pos]->name);
    }
    w->ck_eq_prefix = m;
    if (m == 0 && !sl)
        return 0;
    bool mixed = sl && slicer_mixed(t, sl);
    long total = 1;
    for (int i = 0; i < ng; i++) {
        total *= groups[i]->k;
        if (total > CQL__MAX_KEYS)
            return cs_error_set(a->e, CS_ERR_INVALID,
                                "Cartesian product of clustering columns values exceeds the maximum of %d", CQL__MAX_KEYS);
    }
    bool full = m == n_ck && !sl;
    w->ck_all = full;
    w->n_ck_raw = 0;
    for (int i = 0; full && i < ng && i < 16; i++)
        w->ck_raw[w->n_ck_raw++] = groups[i]->raw;
    if (full && a->kind != CQL_WHERE_SELECT) {
        w->cks = cs_arena_zalloc(a->ev->arena, sizeof(cql_value) * (size_t)(total + 1));
        if (!w->cks)
            return cs_error_set(a->e, CS_ERR_SERVER, "out of memory");
    } else {
        size_t per = mixed ? (size_t)(2 * sl->n) : 1;   /* mixed_slices: up to 2n each */
        w->slices = cs_arena_zalloc(a->ev->arena, sizeof(st_slice) * ((size_t)total * per + 1));
        if (!w->slices)
            return cs_error_set(a->e, CS_ERR_SERVER, "out of memory");
    }
    cql_value *vals = cs_arena_zalloc(a->ev->arena, sizeof(cql_value) * (size_t)(n_ck + 1));
    int idx[64] = {0};
    if (!vals)
        return cs_error_set(a->e, CS_ERR_SERVER, "out of memory");
    for (long n = 0; n < total; n++) {
        for (int g = 0; g < ng; g++)
            memcpy(vals + groups[g]->first, groups[g]->tuples + (size_t)idx[g] * (size_t)groups[g]->n,
                   sizeof(cql_value) * (size_t)groups[g]->n);
        if (w->cks) {
            st_bound k;
            int rc = ck_key(a, vals, m, false, &k, true);
            if (rc)
                return rc;
            w->cks[w->n_cks].p = k.key;
            w->cks[w->n_cks].len = (int32_t)k.len;
            w->n_cks++;
        } else if (mixed) {
            int rc = mixed_slices(a, vals, m, sl, w->slices, &w->n_slices);
            if (rc)
                return rc;
        } else {
            bool empty;
            int rc = make_slice(a, vals, m, sl, &w->slices[w->n_slices], &empty);
            if (rc)
                return rc;
            if (!empty)
                w->n_slices++;
        }
        for (int g = ng - 1; g >= 0; g--) {
            if (++idx[g] < groups[g]->k)
                break;
            idx[g] = 0;
        }
    }
    if (w->cks) {
        qsort(w->cks, (size_t)w->n_cks, sizeof(cql_value), key_cmp);
        if (w->n_cks == 0)
            w->empty = true;
    } else {
        qsort(w->slices, (size_t)w->n_slices, sizeof(st_slice), slice_cmp);
        if (w->n_slices == 0)
            w->empty = true;
    }
    return 0;
}


/* ---------------------------------------------------------------- point restrictions */

/*
 * What collect() and the two builders above make of a point restriction
 * (exec_int.h): the terms evaluated in relation order with eval_nn's checks,
 * then one partition key and, when clustering columns are fixed, one exact
 * key (UPDATE/DELETE) or the slice [P, P ++ 0xFF) (SELECT).
 */
int cql__where_bind_point(cql_eval *ev, const sch_table *t, const cql_keyterm *keys, int n,
                          int n_ck, cql_where_kind kind, cql_where *out, cs_error *e)
{
    memset(out, 0, sizeof(*out));
    cql_value pk[16], ck[CQL_POINT_MAX_CK];
    for (int i = 0; i < n; i++) {
        const sch_column *c = keys[i].col;
        cql_value *v = c->kind == COL_PARTITION_KEY ? &pk[c->position] : &ck[c->position];
        if (cql__term_eval(ev, keys[i].term, c->type, c->name, v, e))
            return CS_EUSER;
        if (v->len == CQL_UNSET)
            return cs_error_set(e, CS_ERR_INVALID, "Invalid unset value for column %s", c->name);
        if (v->len == CQL_NULL)
            return cs_error_set(e, CS_ERR_INVALID, "Invalid null value in condition for column %s", c->name);
    }
    out->pk_all = true;
    out->pks = cs_arena_zalloc(ev->arena, sizeof(cql_value) * 2);
    if (!out->pks)
        return cs_error_set(e, CS_ERR_SERVER, "out of memory");
    cs_buf b;
    cs_buf_init(&b);
    int rc = pk_serialize(ev->arena, t, pk, &b, &out->pks[0], e);
    cs_buf_destroy(&b);
    if (rc)
        return rc;
    out->n_pks = 1;
    out->ck_restricted = n_ck > 0;
    if (n_ck == 0)
        return 0;
    out->ck_eq_prefix = n_ck;
    out->ck_all = n_ck == t->n_ck;
    if (kind != CQL_WHERE_SELECT) {
        out->cks = cs_arena_zalloc(ev->arena, sizeof(cql_value) * 2);
        if (!out->cks)
            return cs_error_set(e, CS_ERR_SERVER, "out of memory");
        st_bound k;
        if ((rc = ck_key_in(ev->arena, t, ck, n_ck, false, &k, true, e)))
            return rc;
        out->cks[0].p = k.key;
        out->cks[0].len = (int32_t)k.len;
        out->n_cks = 1;
        return 0;
    }
    out->slices = cs_arena_zalloc(ev->arena, sizeof(st_slice) * 2);
    if (!out->slices)
        return cs_error_set(e, CS_ERR_SERVER, "out of memory");
    if ((rc = ck_key_in(ev->arena, t, ck, n_ck, false, &out->slices[0].start, true, e)) ||
        (rc = ck_key_in(ev->arena, t, ck, n_ck, true, &out->slices[0].end, false, e)))
        return rc;
    out->n_slices = 1;
    return 0;
}
