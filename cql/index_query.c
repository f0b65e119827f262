/*
 * index_query.c: SELECT through a secondary index (owner: index).
 * Hook: exec_select.c run_select calls cql_index_select when the partition
 * key is not fully restricted.
 *
 * The restriction an index serves (v = x, CONTAINS, CONTAINS KEY, m[k] = v,
 * full(f) = x) gives the index value; its entries are read bucket by bucket
 * (buckets follow token order, entries inside are ordered by token, key,
 * clustering), so the candidate partitions come in ring order, exactly the
 * order of a range scan.  Each candidate partition is then read through the
 * executor's own single-partition path (cql__scan_keys) with every WHERE
 * filter applied, so an entry that is stale (value since changed, row
 * deleted, written with an older timestamp) never produces a row, and paging
 * state is the same as for a range scan.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "cql/index.h"
#include "cql/select_int.h"
#include "common/alloc.h"
#include "common/hash.h"

/* Index value that filter f looks up in index ix, if ix serves f. */
static bool serves(const sch_index *ix, const cql_filter *f, cs_buf *out)
{
    cql_index_target tg;
    if (ix->class_name || cql_index_target_parse(ix, &tg) || tg.col != f->col)
        return false;
    const ctype *ty = f->col->type;
    cs_buf_reset(out);
    if (f->val.len < 0)
        return false;
    switch (tg.kind) {
    case IDX_SIMPLE:
    case IDX_FULL:
        if (f->op != OP_EQ || f->element)
            return false;
        return cql_index_value(ty, f->val.p, f->val.len, out) == 0;
    case IDX_VALUES:
        if (f->op != OP_CONTAINS)
            return false;
        return cql_index_value(ty->kind == CT_MAP ? ty->sub[1] : ty->sub[0], f->val.p, f->val.len, out) == 0;
    case IDX_KEYS:
        if (f->op != OP_CONTAINS_KEY || ty->kind != CT_MAP)
            return false;
        return cql_index_value(ty->sub[0], f->val.p, f->val.len, out) == 0;
    case IDX_ENTRIES:
        if (f->op != OP_EQ || !f->element || f->key.len < 0 || ty->kind != CT_MAP)
            return false;
        return cql_index_value(ty->sub[0], f->key.p, f->key.len, out) == 0 &&
               cql_index_value(ty->sub[1], f->val.p, f->val.len, out) == 0;
    }
    return false;
}

/* Partition key of an entry's clustering (token, escaped key, base ck). */
static int entry_pk(const uint8_t *ck, uint32_t n, cs_buf *pk)
{
    cs_buf_reset(pk);
    if (n < 8)
        return CS_ECORRUPT;
    for (uint32_t i = 8; i < n; i++) {
        if (ck[i] != 0) {
            cs_buf_put_u8(pk, ck[i]);
            continue;
        }
        if (i + 1 >= n)
            return CS_ECORRUPT;
        if (ck[i + 1] == 0)
            return pk->err ? CS_ENOMEM : 0;
        cs_buf_put_u8(pk, 0);
        i++;
    }
    return CS_ECORRUPT;
}

static bool simple_index_on(const sch_table *t, const sch_column *c);

/* `c = x` on a leading clustering column with an index (the WHERE analysis
 * made it a clustering prefix, not a filter): that index and value. */
static sch_index *clustering_index(cql_sx *x, cs_buf *iv)
{
    const cql_where *w = &x->w;
    const uint8_t *key = NULL;
    uint32_t kl = 0;
    if (w->ck_eq_prefix <= 0 || x->t->n_ck > 64)
        return NULL;
    if (w->ck_all && w->n_cks == 1 && w->cks[0].len > 0) {
        key = w->cks[0].p;
        kl = (uint32_t)w->cks[0].len;
    } else if (!w->ck_all && w->n_slices == 1) {
        key = w->slices[0].start.key;
        kl = w->slices[0].start.len;
    }
    if (!key)
        return NULL;
    cs_buf store;
    cs_buf_init(&store);
    size_t off[64];
    int32_t len[64];
    sch_index *found = NULL;
    if (sch_clustering_decode(x->t, key, kl, &store, off, len) == 0)
        for (int pos = 0; pos < w->ck_eq_prefix && !found; pos++) {
            const sch_column *c = x->t->ck[pos];
            if (len[pos] < 0 || !simple_index_on(x->t, c))
                continue;
            for (int i = 0; i < x->t->n_indexes && !found; i++) {
                cql_index_target tg;
                if (!x->t->indexes[i]->class_name && cql_index_target_parse(x->t->indexes[i], &tg) == 0 &&
                    tg.col == c && (tg.kind == IDX_SIMPLE || tg.kind == IDX_FULL)) {
                    cs_buf_reset(iv);
                    if (cql_index_value(c->type, store.p + off[pos], len[pos], iv) == 0)
                        found = x->t->indexes[i];
                }
            }
        }
    cs_buf_destroy(&store);
    return found;
}

/* An index's expected rows (CassandraIndex.getEstimatedResultRows: its
 * table's mean rows per partition in sstables, the rows of one indexed
 * value; 0 with nothing flushed).  Here an indexed value's entries are
 * spread over CQL_INDEX_BUCKETS partitions by token: n rows fill
 * B(n) = 16 (1 - (15/16)^n) of them on average, so the mean rows per
 * partition r = n / B(n) is turned back into n. */
static int64_t index_rows_estimate(cql_sx *x, const sch_index *ix)
{
    st_table *ist = cql_index_storage(x->ctx->eng, (sch_index *)ix);
    st_table_stats st;
    if (!ist || st_table_stats_get(ist, &st))
        return 0;
    uint64_t parts = st.partitions_estimate - st.memtable_partitions;
    if (!parts)
        return 0;
    double r = (double)st.sstable_rows / (double)parts, lo = 1, hi = r * CQL_INDEX_BUCKETS + 1;
    if (r <= 1)
        return (int64_t)r;
    const double q = 1.0 - 1.0 / CQL_INDEX_BUCKETS;
    for (int i = 0; i < 60; i++) {   /* n / B(n) grows with n */
        double mid = (lo + hi) / 2;
        if (mid / (CQL_INDEX_BUCKETS * (1 - pow(q, mid))) < r)
            lo = mid;
        else
            hi = mid;
    }
    return lo > INT32_MAX ? INT32_MAX : (int64_t)lo;
}

/* SecondaryIndexManager.getBestIndexFor: of the indexes serving a
 * restriction, the one expecting the fewest rows, the first on a tie (its
 * value into iv); else the index of a clustering restriction.  Traced as
 * Cassandra does: "Index mean cardinalities are a:1,b:7. Scanning with
 * a.", or "No applicable indexes found" for filters no index serves. */
static sch_index *choose_index(cql_sx *x, cs_buf *iv, bool trace)
{
    enum { MAX_CAND = 16 };
    sch_index *cand[MAX_CAND];
    int n = 0;
    for (int i = 0; i < x->w.n_filters; i++)
        for (int j = 0; j < x->t->n_indexes; j++) {
            sch_index *ix = x->t->indexes[j];
            bool seen = false;
            for (int k = 0; k < n && !seen; k++)
                seen = cand[k] == ix;
            if (!seen && n < MAX_CAND && serves(ix, &x->w.filters[i], iv))
                cand[n++] = ix;
        }
    sch_index *best = n == 1 ? cand[0] : NULL;
    int64_t best_est = 0;
    for (int k = 0; n > 1 && k < n; k++) {   /* the stats only to choose between several */
        int64_t e = index_rows_estimate(x, cand[k]);
        if (!best || e < best_est) {
            best = cand[k];
            best_est = e;
        }
    }
    bool by_filter = best != NULL;
    if (!best) {
        best = clustering_index(x, iv);
        if (best)
            cand[n++] = best;
    }
    if (trace && n > 0) {
        cs_buf b;
        cs_buf_init(&b);
        for (int k = 0; k < n; k++) {
            char num[24];
            snprintf(num, sizeof num, ":%lld", (long long)index_rows_estimate(x, cand[k]));
            if (k)
                cs_buf_put_u8(&b, ',');
            cs_buf_put(&b, cand[k]->name, strlen(cand[k]->name));
            cs_buf_put(&b, num, strlen(num));
        }
        cql__trace(CQL_TRACE_NTR, "Index mean cardinalities are %.*s. Scanning with %s.", (int)b.len,
                   b.p ? (const char *)b.p : "", best->name);
        cs_buf_destroy(&b);
    } else if (trace && x->w.n_filters > 0) {
        cql__trace(CQL_TRACE_NTR, "No applicable indexes found");
    }
    if (by_filter)   /* its value (the last candidate tried wrote iv) */
        for (int i = 0; i < x->w.n_filters; i++)
            if (serves(best, &x->w.filters[i], iv))
                break;
    return best;
}

void cql_index_trace_choice(cql_sx *x)
{
    if (x->w.pk_all || x->w.token_range || x->t->is_virtual || x->t->n_indexes == 0)
        return;
    cs_buf iv;
    cs_buf_init(&iv);
    choose_index(x, &iv, true);
    cs_buf_destroy(&iv);
}

int cql_index_select(cql_sx *x, const cql_pstate *ps, bool *handled)
{
    *handled = false;
    if (x->w.pk_all || x->w.token_range || x->t->is_virtual || x->t->n_indexes == 0)
        return 0;
    cs_buf iv, pk, last, sck;
    cs_buf_init(&iv);
    sch_index *ix = choose_index(x, &iv, false);
    st_table *ist = ix ? cql_index_storage(x->ctx->eng, ix) : NULL;
    if (!ist) {
        cs_buf_destroy(&iv);
        return 0;
    }
    *handled = true;
    if (cql__tracing())
        cql__trace_range_requests(x, index_rows_estimate(x, ix));
    cql__trace(CQL_TRACE_READ, "Executing read on %s.%s using index %s", x->t->ks->name, x->t->name, ix->name);
    if (cql_index_is_building(x->ctx, ix)) {
        /* Cassandra 4.1: IndexNotAvailableException -> read failure */
        cs_buf_destroy(&iv);
        return cql__read_failure(x, 6, "INDEX_NOT_AVAILABLE");
    }
    cs_buf_init(&pk);
    cs_buf_init(&last);
    cs_buf_init(&sck);
    cql_value *saved = x->w.pks;
    int saved_n = x->w.n_pks;
    cql_value one;
    int b0 = 0;
    if (ps) {
        int64_t tok = cs_murmur3_token(ps->pk, ps->pk_len);
        b0 = cql_index_bucket(tok);
        cql_index_entry_ck(tok, ps->pk, ps->pk_len, NULL, 0, &sck);
        sck.len -= 2;          /* prefix: the key without its terminator */
    }
    int rc = 0;
    bool resumed = false, have_last = false;
    for (int b = b0; b < CQL_INDEX_BUCKETS && !x->stop && rc == 0; b++) {
        cs_buf ipk;
        cs_buf_init(&ipk);
        cs_buf_put_u8(&ipk, (uint8_t)b);
        cs_buf_put(&ipk, iv.p, iv.len);
        st_read_spec sp;
        memset(&sp, 0, sizeof sp);
        sp.pk = ipk.p;
        sp.pk_len = (uint32_t)ipk.len;
        st_slice sl;
        if (ps && b == b0) {
            sl.start = (st_bound){ sck.p, (uint32_t)sck.len, true };
            sl.end = (st_bound){ NULL, 0, true };
            sp.slices = &sl;
            sp.n_slices = 1;
        }
        st_scan *sc = NULL;
        rc = ipk.err ? CS_ENOMEM : st_scan_open(ist, &sp, &sc);
        st_partition_view pv;
        int pr = rc == 0 ? st_scan_next_partition(sc, &pv) : 0;
        if (pr < 0)
            rc = pr;
        if (pr == 1) {
            st_row_view rv;
            while (!x->stop && (rc = st_scan_next_row(sc, &rv)) == 1) {
                if ((rc = cql__deadline_tick(x)))
                    break;
                int er = entry_pk(rv.ck, rv.ck_len, &pk);
                if (er == CS_ENOMEM) {
                    rc = er;
                    break;
                }
                rc = 0;
                if (er)
                    continue;      /* not an entry of ours: skip */
                if (have_last && last.len == pk.len && (pk.len == 0 || !memcmp(last.p, pk.p, pk.len)))
                    continue;
                cs_buf_reset(&last);
                if (pk.len)
                    cs_buf_put(&last, pk.p, pk.len);
                if (last.err) {
                    rc = CS_ENOMEM;
                    break;
                }
                have_last = true;
                one.p = cs_arena_memdup0(&x->arena, pk.p, pk.len);
                one.len = (int32_t)pk.len;
                if (!one.p) {
                    rc = CS_ENOMEM;
                    break;
                }
                x->w.pks = &one;
                x->w.n_pks = 1;
                bool here = ps && !resumed && pk.len == ps->pk_len && !memcmp(pk.p, ps->pk, pk.len);
                resumed = resumed || here;
                rc = cql__scan_keys(x, here ? ps : NULL);
                if (rc)
                    break;
            }
            if (rc == 0 || rc == 1)
                rc = 0;
        }
        if (sc)
            st_scan_close(sc);
        cs_buf_destroy(&ipk);
    }
    x->w.pks = saved;
    x->w.n_pks = saved_n;
    cs_buf_destroy(&iv);
    cs_buf_destroy(&pk);
    cs_buf_destroy(&last);
    cs_buf_destroy(&sck);
    if (rc < 0 && rc != CS_EUSER)
        rc = cs_error_set(x->e, CS_ERR_SERVER, "Index read failed: %s", cs_strerror(rc));
    return rc;
}

int cql_index_check_select(cql_sx *x)
{
    if (x->as->n_order == 0 || x->t->n_indexes == 0)
        return 0;
    cs_buf iv;
    cs_buf_init(&iv);
    bool indexed = false;
    for (int i = 0; i < x->w.n_filters && !indexed; i++)
        for (int j = 0; j < x->t->n_indexes && !indexed; j++)
            indexed = serves(x->t->indexes[j], &x->w.filters[i], &iv);
    cs_buf_destroy(&iv);
    if (indexed)
        return cs_error_set(x->e, CS_ERR_INVALID, "ORDER BY with 2ndary indexes is not supported.");
    return 0;
}

/* Has column c a plain (simple) index, or full() on a frozen collection? */
static bool simple_index_on(const sch_table *t, const sch_column *c)
{
    for (int i = 0; i < t->n_indexes; i++) {
        cql_index_target tg;
        if (!t->indexes[i]->class_name && cql_index_target_parse(t->indexes[i], &tg) == 0 &&
            tg.col == c && (tg.kind == IDX_SIMPLE || tg.kind == IDX_FULL))   /* full(): a frozen collection's equality */
            return true;
    }
    return false;
}

int cql_index_grants_key_filtering(const sch_table *t, ast_relation **rels, int n)
{
    if (t->n_indexes == 0 || n == 0)
        return 0;
    int pk_eq = 0, key_rel = 0, n_key = n;
    const sch_column *ixc = NULL;
    for (int i = 0; i < n; i++)   /* a token range only narrows the scan (TokenFilter) */
        n_key -= rels[i]->kind == REL_TOKEN;
    for (int i = 0; i < n; i++) {
        const ast_relation *r = rels[i];
        if (r->kind == REL_TOKEN)
            continue;
        /* (b) = (x) is b = x for the index (MultiColumnRestriction.EQRestriction.isSupportedBy) */
        if ((r->kind != REL_COLUMN && r->kind != REL_MULTI) || r->op != OP_EQ || r->n_columns != 1)
            return 0;
        const sch_column *c = sch_column_find(t, r->columns[0]);
        if (!c)
            return 0;
        if (c->kind == COL_PARTITION_KEY)
            pk_eq++;
        if (c->kind == COL_REGULAR || c->kind == COL_STATIC)
            return 0;
        if (c->kind == COL_CLUSTERING || (c->kind == COL_PARTITION_KEY && n_key == 1)) {
            if (key_rel++ || !simple_index_on(t, c))
                return 0;
            ixc = c;
        }
    }
    if (!ixc)
        return 0;
    if (n_key == 1)
        return ixc->kind == COL_CLUSTERING || t->n_pk > 1;
    return ixc->kind == COL_CLUSTERING && pk_eq == t->n_pk && n_key == t->n_pk + 1;
}
