/*
 * index_maint.c: index entries and view rows follow every base write, in
 * the same st_mutation (one commit log record, atomic on replay).
 * Owner: index.  Called from cql__wbatch_commit (exec_batch.c) just before
 * st_write.
 *
 * For each base partition of the write group whose table has indexes or
 * views: the affected rows (those the group writes, or every row of the
 * partition when it carries a partition or range deletion) are read as they
 * are now ("before"), the group's ops are reconciled on top with storage's
 * rules ("after"), and the difference becomes index/view mutations:
 *   index  new value (or a newer cell for it): entry with the cell's
 *          timestamp and TTL; value gone: entry row deletion at the old
 *          cell's timestamp (shadows exactly that entry, never a later one).
 *          Reads re-check the base row, so an entry left stale (e.g. by a
 *          write with an older USING TIMESTAMP) is never returned.
 *   view   the view row is rewritten whole at W = max(every timestamp of the
 *          row before and after, the group's timestamps); a view key change
 *          or the base row's disappearance deletes the old view row at W.
 * Single-threaded executor: nothing can write between the read and st_write.
 */
#include <string.h>
#include <stdlib.h>
#include "cql/index.h"
#include "common/util.h"
#include "cql/modify_int.h"
#include "common/alloc.h"
#include "common/hash.h"

/* ---------------------------------------------------------------- collected ops */

typedef struct mcdel { uint32_t col; st_deletion d; } mcdel;
typedef struct mrow {
    bool is_static;
    const uint8_t *ck; uint32_t ck_len;
    st_liveness lv;
    st_deletion del;
    mcdel *cdels; int n_cdels, cap_cdels;
    st_cell *cells; int n_cells, cap_cells;
} mrow;
typedef struct mrt { st_bound s, e; st_deletion d; } mrt;
typedef struct mpart {
    sch_table *t;
    const uint8_t *pk; uint32_t pk_len;
    st_deletion pdel;
    mrt *rts; int n_rts, cap_rts;
    mrow *rows; int n_rows, cap_rows;
} mpart;

/* A row's state: live liveness and live cells, sorted by (col, path). */
typedef struct rstate {
    bool is_static;
    const uint8_t *ck; uint32_t ck_len;
    st_liveness lv;
    st_cell *cells; int n;
} rstate;

typedef struct maint {
    cql_ctx *ctx;
    st_mutation *m;
    int32_t now_s;
    cs_arena a;
    mpart *parts; int n_parts, cap_parts;
    cs_error *e;
} maint;

static int grow(cs_arena *a, void **arr, int *cap, int need, size_t el)
{
    if (need <= *cap)
        return 0;
    int nc = *cap ? *cap * 2 : 8;
    while (nc < need)
        nc *= 2;
    void *n = cs_arena_alloc(a, (size_t)nc * el);
    if (!n)
        return CS_ENOMEM;
    if (*cap)
        memcpy(n, *arr, (size_t)*cap * el);
    *arr = n;
    *cap = nc;
    return 0;
}

static const uint8_t *dup(cs_arena *a, const uint8_t *p, uint32_t n)
{
    return cs_arena_memdup(a, n ? p : (const uint8_t *)"", n + 1);
}

static int cell_order(const st_cell *a, const st_cell *b)
{
    if (a->col != b->col)
        return a->col < b->col ? -1 : 1;
    return cs_bytes_cmp(a->path, a->path_len, b->path, b->path_len);
}

static bool has_work(const sch_table *t)
{
    return t && !t->is_view && (t->n_indexes > 0 || t->n_views > 0);
}

/* Walk m (up to its current end) and group the ops of indexed/viewed tables. */
static int collect(maint *x)
{
    size_t pos = 0, end = st_mutation_len(x->m);
    st_mut_op op;
    int rc;
    mpart *cur = NULL;
    mrow *row = NULL;
    while ((rc = st_mutation_next_op(x->m, &pos, end, &op)) == 1) {
        if (op.kind == ST_MOP_PARTITION) {
            row = NULL;
            cur = NULL;
            sch_table *t = sch_table_by_id(x->ctx->cat, op.table_id);
            if (!has_work(t))
                continue;
            for (int i = 0; i < x->n_parts && !cur; i++)
                if (x->parts[i].t == t && !cs_bytes_cmp(x->parts[i].pk, x->parts[i].pk_len, op.pk, op.pk_len))
                    cur = &x->parts[i];
            if (!cur) {
                if (grow(&x->a, (void **)&x->parts, &x->cap_parts, x->n_parts + 1, sizeof(mpart)))
                    return CS_ENOMEM;
                cur = &x->parts[x->n_parts++];
                memset(cur, 0, sizeof *cur);
                cur->t = t;
                cur->pk = dup(&x->a, op.pk, op.pk_len);
                cur->pk_len = op.pk_len;
                cur->pdel = ST_NO_DELETION;
            }
            continue;
        }
        if (!cur)
            continue;
        switch (op.kind) {
        case ST_MOP_PDEL:
            if (st_deletion_supersedes(op.d, cur->pdel))
                cur->pdel = op.d;
            break;
        case ST_MOP_RT: {
            if (grow(&x->a, (void **)&cur->rts, &cur->cap_rts, cur->n_rts + 1, sizeof(mrt)))
                return CS_ENOMEM;
            mrt *r = &cur->rts[cur->n_rts++];
            r->s = op.start;
            r->s.key = dup(&x->a, op.start.key, op.start.len);
            r->e = op.end;
            r->e.key = dup(&x->a, op.end.key, op.end.len);
            r->d = op.d;
            break;
        }
        case ST_MOP_ROW: {
            bool st = op.row_flags & ST_ROW_STATIC;
            row = NULL;
            for (int i = 0; i < cur->n_rows && !row; i++)
                if (cur->rows[i].is_static == st &&
                    !cs_bytes_cmp(cur->rows[i].ck, cur->rows[i].ck_len, op.ck, op.ck_len))
                    row = &cur->rows[i];
            if (!row) {
                if (grow(&x->a, (void **)&cur->rows, &cur->cap_rows, cur->n_rows + 1, sizeof(mrow)))
                    return CS_ENOMEM;
                row = &cur->rows[cur->n_rows++];
                memset(row, 0, sizeof *row);
                row->is_static = st;
                row->ck = dup(&x->a, op.ck, op.ck_len);
                row->ck_len = op.ck_len;
                row->lv.ts_us = INT64_MIN;
                row->del = ST_NO_DELETION;
            }
            break;
        }
        case ST_MOP_LIVENESS:
            if (row && (row->lv.ts_us == INT64_MIN || st_liveness_supersedes(op.lv, row->lv)))
                row->lv = op.lv;
            break;
        case ST_MOP_ROWDEL:
            if (row && st_deletion_supersedes(op.d, row->del))
                row->del = op.d;
            break;
        case ST_MOP_CDEL:
            if (!row)
                break;
            if (grow(&x->a, (void **)&row->cdels, &row->cap_cdels, row->n_cdels + 1, sizeof(mcdel)))
                return CS_ENOMEM;
            row->cdels[row->n_cdels++] = (mcdel){ op.col, op.d };
            break;
        case ST_MOP_CELL: {
            if (!row)
                break;
            if (grow(&x->a, (void **)&row->cells, &row->cap_cells, row->n_cells + 1, sizeof(st_cell)))
                return CS_ENOMEM;
            st_cell c = op.cell;
            c.path = c.path_len ? dup(&x->a, c.path, c.path_len) : NULL;
            c.val = c.val_len ? dup(&x->a, c.val, c.val_len) : NULL;
            row->cells[row->n_cells++] = c;
            break;
        }
        default:
            break;
        }
    }
    return rc < 0 ? rc : 0;
}

/* ---------------------------------------------------------------- before / after */

static int copy_cells(cs_arena *a, const st_cell *in, int n, st_cell **out)
{
    *out = cs_arena_alloc(a, sizeof(st_cell) * (size_t)(n ? n : 1));
    if (!*out)
        return CS_ENOMEM;
    for (int i = 0; i < n; i++) {
        (*out)[i] = in[i];
        (*out)[i].path = in[i].path_len ? dup(a, in[i].path, in[i].path_len) : NULL;
        (*out)[i].val = in[i].val_len ? dup(a, in[i].val, in[i].val_len) : NULL;
    }
    return 0;
}

/* Read rows of partition p as they are now: the whole partition (all=true)
 * or one row.  Appends to *rows. */
static int read_rows(maint *x, const mpart *p, const mrow *only, rstate **rows, int *n, int *cap)
{
    st_read_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.pk = p->pk;
    sp.pk_len = p->pk_len;
    sp.include_static = !only || only->is_static;
    sp.now_s = x->now_s;
    st_slice sl;
    if (only && !only->is_static) {
        sl.start = (st_bound){ only->ck, only->ck_len, true };
        sl.end = (st_bound){ only->ck, only->ck_len, true };
        sp.slices = &sl;
        sp.n_slices = 1;
    }
    st_scan *sc = NULL;
    int rc = st_scan_open(p->t->st, &sp, &sc);
    if (rc)
        return rc;
    st_partition_view pv;
    rc = st_scan_next_partition(sc, &pv);
    while (rc == 1) {
        st_row_view rv;
        rc = st_scan_next_row(sc, &rv);
        if (rc != 1)
            break;
        bool is_st = rv.flags & ST_ROW_STATIC;
        if (only && (is_st != only->is_static ||
                     (!is_st && cs_bytes_cmp(rv.ck, rv.ck_len, only->ck, only->ck_len))))
            continue;
        if (grow(&x->a, (void **)rows, cap, *n + 1, sizeof(rstate))) {
            rc = CS_ENOMEM;
            break;
        }
        rstate *r = &(*rows)[(*n)++];
        r->is_static = is_st;
        r->ck = dup(&x->a, rv.ck, rv.ck_len);
        r->ck_len = rv.ck_len;
        r->lv = rv.liveness;
        r->n = rv.n_cells;
        if (copy_cells(&x->a, rv.cells, rv.n_cells, &r->cells)) {
            rc = CS_ENOMEM;
            break;
        }
    }
    st_scan_close(sc);
    return rc < 0 ? rc : 0;
}

static int cmp_cell_q(const void *a, const void *b)
{
    int c = cell_order(a, b);
    if (c)
        return c;
    /* keep the later-added op last among equals for a stable reduce */
    return (a > b) - (a < b);
}

/* after = before + the group's ops for that row, reconciled. */
static int apply_ops(maint *x, const mpart *p, const rstate *b, const mrow *mr, rstate *out)
{
    bool is_st = b ? b->is_static : mr->is_static;
    const uint8_t *ck = b ? b->ck : mr->ck;
    uint32_t ck_len = b ? b->ck_len : mr->ck_len;
    out->is_static = is_st;
    out->ck = ck;
    out->ck_len = ck_len;
    st_deletion d = p->pdel;
    for (int i = 0; !is_st && i < p->n_rts; i++) {
        /* same bound tests as storage (st__after_start / st__before_end) */
        const mrt *r = &p->rts[i];
        bool in = true;
        if (r->s.len) {
            int c = cs_bytes_cmp(ck, ck_len, r->s.key, r->s.len);
            in = r->s.inclusive ? c >= 0 : c > 0;
        }
        if (in && r->e.len) {
            int c = cs_bytes_cmp(ck, ck_len, r->e.key, r->e.len);
            in = r->e.inclusive ? c <= 0 : c < 0;
        }
        if (in && st_deletion_supersedes(r->d, d))
            d = r->d;
    }
    if (mr && st_deletion_supersedes(mr->del, d))
        d = mr->del;
    st_liveness lv = b ? b->lv : (st_liveness){ INT64_MIN, 0, 0 };
    if (mr && mr->lv.ts_us != INT64_MIN && (lv.ts_us == INT64_MIN || st_liveness_supersedes(mr->lv, lv)))
        lv = mr->lv;
    if (lv.ts_us != INT64_MIN && (lv.ts_us <= d.ts_us || (lv.ttl_s > 0 && lv.ldt_s <= x->now_s)))
        lv.ts_us = INT64_MIN;
    out->lv = lv;
    int nb = b ? b->n : 0, nm = mr ? mr->n_cells : 0;
    st_cell *all = cs_arena_alloc(&x->a, sizeof(st_cell) * (size_t)(nb + nm + 1));
    if (!all)
        return CS_ENOMEM;
    if (nb)
        memcpy(all, b->cells, sizeof(st_cell) * (size_t)nb);
    if (nm)
        memcpy(all + nb, mr->cells, sizeof(st_cell) * (size_t)nm);
    qsort(all, (size_t)(nb + nm), sizeof(st_cell), cmp_cell_q);
    int n = 0;
    for (int i = 0; i < nb + nm; i++) {
        if (n > 0 && cell_order(&all[n - 1], &all[i]) == 0) {
            all[n - 1] = *st_cell_reconcile(&all[n - 1], &all[i]);
            continue;
        }
        all[n++] = all[i];
    }
    int k = 0;
    for (int i = 0; i < n; i++) {
        st_cell *c = &all[i];
        if (c->flags & ST_CELL_TOMBSTONE)
            continue;
        if ((c->flags & ST_CELL_EXPIRING) && c->ldt_s <= x->now_s)
            continue;
        if (c->ts_us <= d.ts_us)
            continue;
        bool gone = false;
        for (int j = 0; mr && j < mr->n_cdels && !gone; j++)
            gone = mr->cdels[j].col == c->col && c->path_len > 0 && c->ts_us <= mr->cdels[j].d.ts_us;
        if (!gone)
            all[k++] = *c;
    }
    out->cells = all;
    out->n = k;
    return 0;
}

static bool exists(const rstate *r)
{
    return r && (r->lv.ts_us != INT64_MIN || r->n > 0);
}

static int64_t max_ts(const rstate *r)
{
    int64_t m = INT64_MIN;
    if (!r)
        return m;
    if (r->lv.ts_us > m)
        m = r->lv.ts_us;
    for (int i = 0; i < r->n; i++)
        if (r->cells[i].ts_us > m)
            m = r->cells[i].ts_us;
    return m;
}

static int64_t ops_ts(const mpart *p, const mrow *mr)
{
    int64_t m = p->pdel.ts_us;
    for (int i = 0; i < p->n_rts; i++)
        if (p->rts[i].d.ts_us > m)
            m = p->rts[i].d.ts_us;
    if (!mr)
        return m;
    if (mr->del.ts_us > m) m = mr->del.ts_us;
    if (mr->lv.ts_us > m) m = mr->lv.ts_us;
    for (int i = 0; i < mr->n_cdels; i++)
        if (mr->cdels[i].d.ts_us > m) m = mr->cdels[i].d.ts_us;
    for (int i = 0; i < mr->n_cells; i++)
        if (mr->cells[i].ts_us > m) m = mr->cells[i].ts_us;
    return m;
}

static const st_cell *find_cell(const rstate *r, uint32_t col)
{
    for (int i = 0; r && i < r->n; i++)
        if (r->cells[i].col == col && r->cells[i].path_len == 0)
            return &r->cells[i];
    return NULL;
}

/* ---------------------------------------------------------------- indexes */

typedef struct ival {             /* one index value of a row */
    const uint8_t *v; uint32_t n;
    st_liveness lv;               /* timestamp / TTL of what provides it */
} ival;

static st_liveness cell_lv(const st_cell *c)
{
    st_liveness l = { c->ts_us, 0, 0 };
    if (c->flags & ST_CELL_EXPIRING) {
        l.ttl_s = c->ttl_s;
        l.ldt_s = c->ldt_s;
    }
    return l;
}

/* Liveness of a row as a whole: its marker, else its newest cell. */
static st_liveness row_lv(const rstate *r)
{
    if (r->lv.ts_us != INT64_MIN)
        return r->lv;
    const st_cell *best = NULL;
    for (int i = 0; i < r->n; i++)
        if (!best || r->cells[i].ts_us > best->ts_us)
            best = &r->cells[i];
    return best ? cell_lv(best) : (st_liveness){ INT64_MIN, 0, 0 };
}

static int add_ival(maint *x, ival **out, int *n, int *cap, cs_buf *b, st_liveness lv)
{
    if (b->err)
        return CS_ENOMEM;
    if (grow(&x->a, (void **)out, cap, *n + 1, sizeof(ival)))
        return CS_ENOMEM;
    (*out)[*n].v = dup(&x->a, b->p, (uint32_t)b->len);
    (*out)[*n].n = (uint32_t)b->len;
    (*out)[*n].lv = lv;
    (*n)++;
    return 0;
}

/* The values row r contributes to index tg (ck values decoded in ckv). */
static int index_values(maint *x, const sch_table *t, const cql_index_target *tg, const rstate *r,
                        const cql_value *pkv, const cql_value *ckv, ival **out, int *n)
{
    *out = NULL;
    *n = 0;
    int cap = 0;
    if (!exists(r))
        return 0;
    const sch_column *c = tg->col;
    cs_buf b;
    cs_buf_init(&b);
    int rc = 0;
    if (c->kind == COL_CLUSTERING || c->kind == COL_PARTITION_KEY) {
        const cql_value *v = c->kind == COL_CLUSTERING ? &ckv[c->position] : &pkv[c->position];
        /* a partition key component is indexed by the static row too: a
         * partition with only static content is found (Cassandra's
         * SecondaryIndexTest.testIndexOnPartitionKeyWithStaticColumnAndNoRows) */
        if ((!r->is_static || c->kind == COL_PARTITION_KEY) && v->len >= 0) {
            int vr = cql_index_value(c->type, v->p, v->len, &b);
            rc = vr == CS_ENOMEM ? vr : vr == 0 ? add_ival(x, out, n, &cap, &b, row_lv(r)) : 0;
        }
        cs_buf_destroy(&b);
        (void)t;
        return rc;
    }
    if ((c->kind == COL_STATIC) != r->is_static) {
        cs_buf_destroy(&b);
        return 0;
    }
    const ctype *ty = c->type;
    for (int i = 0; i < r->n && rc == 0; i++) {
        const st_cell *ce = &r->cells[i];
        if (ce->col != c->id)
            continue;
        cs_buf_reset(&b);
        if (tg->kind == IDX_SIMPLE || tg->kind == IDX_FULL) {
            if (ce->path_len)
                continue;
            if ((rc = cql_index_value(ty, ce->val, (int32_t)ce->val_len, &b)))
                goto skip;
        } else if (tg->kind == IDX_KEYS || (tg->kind == IDX_VALUES && ty->kind == CT_SET)) {
            cs_buf_put(&b, ce->path, ce->path_len);      /* already byte-comparable */
        } else if (tg->kind == IDX_VALUES) {
            const ctype *et = ty->kind == CT_MAP ? ty->sub[1] : ty->sub[0];
            if ((rc = cql_index_value(et, ce->val, (int32_t)ce->val_len, &b)))
                goto skip;
        } else if (tg->kind == IDX_ENTRIES) {
            cs_buf_put(&b, ce->path, ce->path_len);
            if ((rc = cql_index_value(ty->sub[1], ce->val, (int32_t)ce->val_len, &b)))
                goto skip;
        }
        rc = add_ival(x, out, n, &cap, &b, cell_lv(ce));
        continue;
    skip:
        if (rc != CS_ENOMEM)
            rc = 0;            /* a value the index cannot hold: skipped */
    }
    cs_buf_destroy(&b);
    return rc;
}

static void entry_key(const uint8_t *v, uint32_t n, int64_t token, cs_buf *pk)
{
    cs_buf_reset(pk);
    cs_buf_put_u8(pk, (uint8_t)cql_index_bucket(token));
    cs_buf_put(pk, v, n);
}

static int maint_index(maint *x, const mpart *p, sch_index *ix, const rstate *bef, const rstate *aft,
                       const cql_value *pkv, const cql_value *ckv_b, const cql_value *ckv_a)
{
    cql_index_target tg;
    if (cql_index_target_parse(ix, &tg) || !tg.col)
        return 0;
    st_table *ist = cql_index_storage(x->ctx->eng, ix);
    if (!ist)
        return CS_EIO;
    ival *bv, *av;
    int nb, na;
    int rc = index_values(x, p->t, &tg, bef, pkv, ckv_b, &bv, &nb);
    if (rc == 0)
        rc = index_values(x, p->t, &tg, aft, pkv, ckv_a, &av, &na);
    if (rc)
        return rc;
    int64_t token = cs_murmur3_token(p->pk, p->pk_len);
    bool part_level = tg.col->kind == COL_PARTITION_KEY || tg.col->kind == COL_STATIC;
    const rstate *r = aft ? aft : bef;
    cs_buf ipk, ick;
    cs_buf_init(&ipk);
    cs_buf_init(&ick);
    cql_index_entry_ck(token, p->pk, p->pk_len, part_level ? NULL : r->ck, part_level ? 0 : r->ck_len, &ick);
    for (int i = 0; i < na; i++) {
        bool same = false;
        for (int j = 0; j < nb && !same; j++)
            same = !cs_bytes_cmp(av[i].v, av[i].n, bv[j].v, bv[j].n) && av[i].lv.ts_us == bv[j].lv.ts_us &&
                   av[i].lv.ttl_s == bv[j].lv.ttl_s && av[i].lv.ldt_s == bv[j].lv.ldt_s;
        if (same)
            continue;
        entry_key(av[i].v, av[i].n, token, &ipk);
        st_mut_partition(x->m, ist, ipk.p, (uint32_t)ipk.len);
        st_mut_row(x->m, ick.p, (uint32_t)ick.len, 0);
        st_mut_row_liveness(x->m, av[i].lv);
    }
    /* partition-level entries (pk component, static column) are only removed
     * by partition deletions; reads re-check them anyway */
    for (int j = 0; j < nb; j++) {
        bool kept = false;
        for (int i = 0; i < na && !kept; i++)
            kept = !cs_bytes_cmp(av[i].v, av[i].n, bv[j].v, bv[j].n);
        if (kept || (tg.col->kind == COL_PARTITION_KEY && p->pdel.ts_us == INT64_MIN))
            continue;
        entry_key(bv[j].v, bv[j].n, token, &ipk);
        st_mut_partition(x->m, ist, ipk.p, (uint32_t)ipk.len);
        st_mut_row(x->m, ick.p, (uint32_t)ick.len, 0);
        st_mut_row_delete(x->m, (st_deletion){ bv[j].lv.ts_us, x->now_s });
    }
    rc = ipk.err || ick.err ? CS_ENOMEM : 0;
    cs_buf_destroy(&ipk);
    cs_buf_destroy(&ick);
    return rc;
}

/* ---------------------------------------------------------------- views */

/* View key (pk bytes, ck bytes) of a base row state: 1, 0 if a key column
 * is null or the view's WHERE excludes the row, <0 on error (OOM). */
static int view_key(maint *x, const mpart *p, const sch_table *v, const rstate *r, const cql_value *pkv,
                     const cql_value *ckv, cs_buf *vpk, cs_buf *vck, const st_cell **keycell)
{
    const sch_table *t = p->t;
    cql_value pv[64], cv[64];
    *keycell = NULL;
    if (!exists(r) || r->is_static || v->n_pk > 64 || v->n_ck > 64)
        return 0;
    for (int i = 0; i < v->n_pk + v->n_ck; i++) {
        const sch_column *vc = i < v->n_pk ? v->pk[i] : v->ck[i - v->n_pk];
        const sch_column *bc = sch_column_find(t, vc->name);
        if (!bc)
            return 0;
        cql_value val = { NULL, CQL_NULL };
        if (bc->kind == COL_PARTITION_KEY)
            val = pkv[bc->position];
        else if (bc->kind == COL_CLUSTERING)
            val = ckv[bc->position];
        else {
            const st_cell *c = find_cell(r, bc->id);
            if (c) {
                val.p = c->val;
                val.len = (int32_t)c->val_len;
                *keycell = c;
            }
        }
        if (val.len < 0)
            return 0;
        if (i < v->n_pk) pv[i] = val; else cv[i - v->n_pk] = val;
    }
    if (v->view_where && *v->view_where) {
        /* restrictions beyond IS NOT NULL (view_where.c) */
        cql_value *vals = cs_arena_alloc(&x->a, sizeof(cql_value) * (size_t)(t->n_cols + 1));
        if (!vals)
            return CS_ENOMEM;
        for (int i = 0; i < t->n_cols; i++) {
            const sch_column *c = &t->cols[i];
            vals[i] = (cql_value){ NULL, CQL_NULL };
            if (c->kind == COL_PARTITION_KEY)
                vals[i] = pkv[c->position];
            else if (c->kind == COL_CLUSTERING)
                vals[i] = ckv[c->position];
            else {
                const st_cell *ce = find_cell(r, c->id);
                if (ce)
                    vals[i] = (cql_value){ ce->val, (int32_t)ce->val_len };
            }
        }
        bool match = true;
        int rc = cql_view_where_match(x->ctx, v, vals, p->pk, p->pk_len, r->ck, r->ck_len, &match);
        if (rc < 0)
            return rc;
        if (!match)
            return 0;
    }
    cs_buf_reset(vpk);
    cs_buf_reset(vck);
    int rc = sch_partition_key(v, pv, vpk);
    if (rc == 0)
        rc = sch_clustering_key(v, cv, v->n_ck, vck);
    if (rc == CS_ENOMEM || vpk->err || vck->err)
        return CS_ENOMEM;
    if (rc)
        return 0;              /* e.g. an empty partition key: no view row */
    return vpk->len > 0 ? 1 : 0;
}

static bool view_has_col(const sch_table *v, uint32_t col)
{
    for (int i = 0; i < v->n_cols; i++)
        if (v->cols[i].id == col)
            return v->cols[i].kind == COL_REGULAR;
    return false;
}

/* Does view v's primary key hold a regular column of base table t?  (Then
 * the view key of a base row can change, and view cells take the row's
 * timestamp W; see maint_view.) */
static bool view_key_has_regular(const sch_table *t, const sch_table *v)
{
    for (int i = 0; i < v->n_pk + v->n_ck; i++) {
        const sch_column *vc = i < v->n_pk ? v->pk[i] : v->ck[i - v->n_pk];
        const sch_column *bc = sch_column_find(t, vc->name);
        if (bc && bc->kind == COL_REGULAR)
            return true;
    }
    return false;
}

/*
 * View cells' timestamps: when the view key is made of base primary key
 * columns only, a base row always maps to the same view row, so every view
 * cell keeps its base cell's own timestamp (writetime() as in Cassandra)
 * and only the row marker carries W.  When the key holds a regular column,
 * the row can move away and come back: the view row is rewritten whole at W
 * so that it wins over the row tombstone of the move (what Cassandra's
 * shadowable tombstones do; the engine has none), and writetime() of its
 * cells is the base row's newest timestamp.
 */
static int maint_view(maint *x, const mpart *p, sch_table *v, const rstate *bef, const rstate *aft,
                      const mrow *mr, const cql_value *pkv, const cql_value *ckv)
{
    if (!v->st)
        return 0;
    bool own_ts = !view_key_has_regular(p->t, v);
    cs_buf bpk, bck, apk, ack;
    cs_buf_init(&bpk); cs_buf_init(&bck); cs_buf_init(&apk); cs_buf_init(&ack);
    const st_cell *bkc, *akc;
    int hbr = view_key(x, p, v, bef, pkv, ckv, &bpk, &bck, &bkc);
    int har = hbr < 0 ? hbr : view_key(x, p, v, aft, pkv, ckv, &apk, &ack, &akc);
    if (har < 0) {
        cs_buf_destroy(&bpk); cs_buf_destroy(&bck); cs_buf_destroy(&apk); cs_buf_destroy(&ack);
        return har;
    }
    bool hb = hbr > 0, ha = har > 0;
    int64_t w = ops_ts(p, mr);
    if (max_ts(bef) > w) w = max_ts(bef);
    if (max_ts(aft) > w) w = max_ts(aft);
    bool same = hb && ha && !cs_bytes_cmp(bpk.p, (uint32_t)bpk.len, apk.p, (uint32_t)apk.len) &&
                !cs_bytes_cmp(bck.p, (uint32_t)bck.len, ack.p, (uint32_t)ack.len);
    if (hb && !same) {
        st_mut_partition(x->m, v->st, bpk.p, (uint32_t)bpk.len);
        st_mut_row(x->m, bck.p, (uint32_t)bck.len, 0);
        st_mut_row_delete(x->m, (st_deletion){ w, x->now_s });
    }
    if (ha) {
        st_mut_partition(x->m, v->st, apk.p, (uint32_t)apk.len);
        st_mut_row(x->m, ack.p, (uint32_t)ack.len, 0);
        /* liveness: the base row's, else the view key cell's, else the newest cell's TTL */
        st_liveness lv = aft->lv.ts_us != INT64_MIN ? aft->lv : row_lv(aft);
        int32_t kttl = 0, kldt = INT32_MAX;
        if (akc && (akc->flags & ST_CELL_EXPIRING)) {
            kttl = akc->ttl_s;
            kldt = akc->ldt_s;
            if (lv.ttl_s == 0 || lv.ldt_s > kldt) {
                lv.ttl_s = kttl;
                lv.ldt_s = kldt;
            }
        }
        lv.ts_us = w;
        st_mut_row_liveness(x->m, lv);
        for (int i = 0; i < aft->n; i++) {
            st_cell c = aft->cells[i];
            if (!view_has_col(v, c.col))
                continue;
            if (!own_ts)
                c.ts_us = w;
            if (kttl && (!(c.flags & ST_CELL_EXPIRING) || c.ldt_s > kldt)) {
                c.flags |= ST_CELL_EXPIRING;
                c.ttl_s = kttl;
                c.ldt_s = kldt;
            }
            st_mut_cell(x->m, &c);
        }
        for (int i = 0; same && i < bef->n; i++) {
            const st_cell *o = &bef->cells[i];
            if (!view_has_col(v, o->col))
                continue;
            bool kept = false;
            for (int j = 0; j < aft->n && !kept; j++)
                kept = cell_order(o, &aft->cells[j]) == 0;
            if (kept)
                continue;
            int64_t tts = w;
            if (own_ts) {          /* just over the view cell it removes */
                tts = ops_ts(p, mr);
                if (o->ts_us > tts)
                    tts = o->ts_us;
            }
            st_cell t = { o->col, ST_CELL_TOMBSTONE, tts, 0, x->now_s, o->path, o->path_len, NULL, 0 };
            st_mut_cell(x->m, &t);
        }
    }
    int rc = bpk.err || bck.err || apk.err || ack.err ? CS_ENOMEM : 0;
    cs_buf_destroy(&bpk); cs_buf_destroy(&bck); cs_buf_destroy(&apk); cs_buf_destroy(&ack);
    return rc;
}

/* ---------------------------------------------------------------- driver */

static int decode_ck(maint *x, const sch_table *t, const rstate *r, cql_value **out)
{
    *out = cs_arena_zalloc(&x->a, sizeof(cql_value) * (size_t)(t->n_ck + 1));
    if (!*out)
        return CS_ENOMEM;
    for (int i = 0; i < t->n_ck; i++)
        (*out)[i].len = CQL_NULL;
    if (!r || r->is_static || t->n_ck == 0)
        return 0;
    cs_buf store;
    cs_buf_init(&store);
    size_t off[64];
    int32_t len[64];
    int drc = t->n_ck > 64 ? CS_EINVAL : sch_clustering_decode(t, r->ck, r->ck_len, &store, off, len);
    if (drc) {
        cs_buf_destroy(&store);
        return drc == CS_ENOMEM ? drc : 0;   /* undecodable: key columns read as null */
    }
    const uint8_t *base = dup(&x->a, store.p, (uint32_t)store.len);
    if (!base) {
        cs_buf_destroy(&store);
        return CS_ENOMEM;
    }
    for (int i = 0; i < t->n_ck; i++) {
        (*out)[i].p = len[i] >= 0 ? base + off[i] : NULL;
        (*out)[i].len = len[i] >= 0 ? len[i] : CQL_NULL;
    }
    cs_buf_destroy(&store);
    return 0;
}

static int maint_row(maint *x, const mpart *p, const rstate *bef, const mrow *mr, const cql_value *pkv)
{
    rstate aft;
    int rc = apply_ops(x, p, bef, mr, &aft);
    if (rc)
        return rc;
    cql_value *ckv;
    if ((rc = decode_ck(x, p->t, &aft, &ckv)))
        return rc;
    for (int i = 0; rc == 0 && i < p->t->n_indexes; i++)
        rc = maint_index(x, p, p->t->indexes[i], bef, &aft, pkv, ckv, ckv);
    for (int i = 0; rc == 0 && !aft.is_static && i < p->t->n_views; i++)
        rc = maint_view(x, p, p->t->views[i], bef, &aft, mr, pkv, ckv);
    return rc;
}

static int maint_part(maint *x, mpart *p)
{
    if (!p->t->st)
        return 0;
    cql_value pkv[64];
    if (p->t->n_pk > 64 || sch_partition_key_split(p->t, p->pk, p->pk_len, pkv))
        return 0;
    rstate *rows = NULL;
    int n = 0, cap = 0, rc = 0;
    bool whole = p->pdel.ts_us != INT64_MIN || p->n_rts > 0;
    if (whole)
        rc = read_rows(x, p, NULL, &rows, &n, &cap);
    else
        for (int i = 0; rc == 0 && i < p->n_rows; i++)
            rc = read_rows(x, p, &p->rows[i], &rows, &n, &cap);
    if (rc)
        return rc;
    /* rows the group writes, with their before state (or none) */
    bool *used = cs_arena_zalloc(&x->a, (size_t)(n + 1));
    if (!used)
        return CS_ENOMEM;
    for (int i = 0; rc == 0 && i < p->n_rows; i++) {
        const mrow *mr = &p->rows[i];
        const rstate *b = NULL;
        for (int j = 0; j < n && !b; j++)
            if (rows[j].is_static == mr->is_static && !cs_bytes_cmp(rows[j].ck, rows[j].ck_len, mr->ck, mr->ck_len)) {
                b = &rows[j];
                used[j] = true;
            }
        rc = maint_row(x, p, b, mr, pkv);
    }
    /* other rows hit by partition / range deletions */
    for (int j = 0; rc == 0 && j < n; j++)
        if (!used[j])
            rc = maint_row(x, p, &rows[j], NULL, pkv);
    return rc;
}

int cql_index_maintain(cql_ctx *ctx, st_mutation *m, int32_t now_s, cs_error *e)
{
    maint x;
    memset(&x, 0, sizeof x);
    x.ctx = ctx;
    x.m = m;
    x.now_s = now_s;
    x.e = e;
    cs_arena_init(&x.a);
    int rc = collect(&x);
    for (int i = 0; rc == 0 && i < x.n_parts; i++)
        rc = maint_part(&x, &x.parts[i]);
    cs_arena_destroy(&x.a);
    if (rc)
        return cs_error_set(e, CS_ERR_SERVER, "Index/view maintenance failed: %s", cs_strerror(rc));
    return 0;
}

/* ---------------------------------------------------------------- initial builds */

static int build_flush(maint *x)
{
    if (st_mutation_empty(x->m))
        return 0;
    int rc = st_write(x->ctx->eng, x->m, NULL);
    st_mutation_free(x->m);
    x->m = st_mutation_new();
    cs_arena_destroy(&x->a);
    cs_arena_init(&x->a);
    return rc ? rc : (x->m ? 0 : CS_ENOMEM);
}

/*
 * Index (ix) or view (v) the rows base table t holds now: a scan of t whose
 * rows go through the same code as writes (before = nothing), written in
 * groups of a few hundred rows.  Entries/view rows carry the base cells'
 * timestamps and TTLs (views: the row's newest timestamp), so replaying the
 * build after a later write can never undo that write.
 */
int cql__index_build(cql_ctx *ctx, sch_table *t, sch_index *ix, sch_table *v, cs_error *e)
{
    if (!t->st)
        return 0;
    maint x;
    memset(&x, 0, sizeof x);
    x.ctx = ctx;
    x.now_s = cs_now_s();
    x.e = e;
    cs_arena_init(&x.a);
    x.m = st_mutation_new();
    if (!x.m)
        return cs_error_set(e, CS_ERR_SERVER, "out of memory");
    st_read_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.start_token = INT64_MIN;
    sp.start_inclusive = true;
    sp.end_token = INT64_MAX;
    sp.include_static = true;
    st_scan *sc = NULL;
    int rc = st_scan_open(t->st, &sp, &sc);
    st_partition_view pv;
    int pending = 0;
    while (rc == 0 && (rc = st_scan_next_partition(sc, &pv)) == 1) {
        rc = 0;
        mpart p;
        memset(&p, 0, sizeof p);
        p.t = t;
        p.pk = dup(&x.a, pv.pk, pv.pk_len);
        p.pk_len = pv.pk_len;
        p.pdel = ST_NO_DELETION;
        cql_value pkv[64];
        if (t->n_pk > 64 || sch_partition_key_split(t, p.pk, p.pk_len, pkv))
            continue;
        st_row_view rv;
        while (rc == 0 && (rc = st_scan_next_row(sc, &rv)) == 1) {
            rstate r;
            r.is_static = rv.flags & ST_ROW_STATIC;
            r.ck = dup(&x.a, rv.ck, rv.ck_len);
            r.ck_len = rv.ck_len;
            r.lv = rv.liveness;
            r.n = rv.n_cells;
            rc = copy_cells(&x.a, rv.cells, rv.n_cells, &r.cells);
            cql_value *ckv;
            if (rc == 0)
                rc = decode_ck(&x, t, &r, &ckv);
            if (rc == 0 && ix)
                rc = maint_index(&x, &p, ix, NULL, &r, pkv, ckv, ckv);
            if (rc == 0 && v && !r.is_static)
                rc = maint_view(&x, &p, v, NULL, &r, NULL, pkv, ckv);
            if (rc == 0 && ++pending >= 256) {
                pending = 0;
                rc = build_flush(&x);
                /* partition key bytes were in the arena: keep a fresh copy */
                if (rc == 0) {
                    p.pk = dup(&x.a, pv.pk, pv.pk_len);
                    if (sch_partition_key_split(t, p.pk, p.pk_len, pkv))
                        rc = CS_ECORRUPT;
                }
            }
        }
    }
    if (sc)
        st_scan_close(sc);
    if (rc >= 0)
        rc = build_flush(&x);
    st_mutation_free(x.m);
    cs_arena_destroy(&x.a);
    if (rc < 0)
        return cs_error_set(e, CS_ERR_SERVER, "Index/view build failed: %s", cs_strerror(rc));
    return 0;
}

/*
 * One slice of a background build (index_build.c): index (ix) or view (v)
 * the partitions of t after `after` (ring order; all from the start when
 * !have_after) until about max_rows rows are done.  The entries go to *out
 * (a new mutation the caller completes with its progress row and writes);
 * a partition bigger than a few thousand rows is written in pieces meanwhile
 * (a resumed build redoes that partition: entries are idempotent).  *last
 * receives the last partition key done; *done true when the scan reached the
 * end of the ring.
 */
int cql__index_build_step(cql_ctx *ctx, sch_table *t, sch_index *ix, sch_table *v, const uint8_t *after,
                          uint32_t after_len, bool have_after, int max_rows, st_mutation **out,
                          cs_buf *last, bool *done, int64_t *n_rows)
{
    *out = NULL;
    *done = false;
    maint x;
    memset(&x, 0, sizeof x);
    x.ctx = ctx;
    x.now_s = cs_now_s();
    cs_arena_init(&x.a);
    x.m = st_mutation_new();
    if (!x.m)
        return CS_ENOMEM;
    if (!t->st) {
        *done = true;
        *out = x.m;
        return 0;
    }
    st_read_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.start_token = have_after ? cs_murmur3_token(after, after_len) : INT64_MIN;
    sp.start_key = have_after ? after : NULL;
    sp.start_key_len = have_after ? after_len : 0;
    sp.start_inclusive = !have_after;
    sp.end_token = INT64_MAX;
    sp.include_static = true;
    st_scan *sc = NULL;
    int rc = st_scan_open(t->st, &sp, &sc);
    st_partition_view pv;
    int pending = 0, rows = 0;
    while (rc == 0 && rows < max_rows) {
        rc = st_scan_next_partition(sc, &pv);
        if (rc == 0) {
            *done = true;
            break;
        }
        if (rc < 0)
            break;
        rc = 0;
        cs_buf_reset(last);
        cs_buf_put(last, pv.pk, pv.pk_len);
        if (last->err) {
            rc = CS_ENOMEM;
            break;
        }
        mpart p;
        memset(&p, 0, sizeof p);
        p.t = t;
        p.pk = dup(&x.a, pv.pk, pv.pk_len);
        p.pk_len = pv.pk_len;
        p.pdel = ST_NO_DELETION;
        cql_value pkv[64];
        if (!p.pk || t->n_pk > 64 || sch_partition_key_split(t, p.pk, p.pk_len, pkv))
            continue;
        st_row_view rv;
        while (rc == 0 && (rc = st_scan_next_row(sc, &rv)) == 1) {
            rc = 0;
            rows++;
            (*n_rows)++;
            rstate r;
            r.is_static = rv.flags & ST_ROW_STATIC;
            r.ck = dup(&x.a, rv.ck, rv.ck_len);
            r.ck_len = rv.ck_len;
            r.lv = rv.liveness;
            r.n = rv.n_cells;
            rc = copy_cells(&x.a, rv.cells, rv.n_cells, &r.cells);
            cql_value *ckv;
            if (rc == 0)
                rc = decode_ck(&x, t, &r, &ckv);
            if (rc == 0 && ix)
                rc = maint_index(&x, &p, ix, NULL, &r, pkv, ckv, ckv);
            if (rc == 0 && v && !r.is_static)
                rc = maint_view(&x, &p, v, NULL, &r, NULL, pkv, ckv);
            if (rc == 0 && ++pending >= 4096) {
                pending = 0;
                rc = build_flush(&x);
                if (rc == 0) {
                    p.pk = dup(&x.a, pv.pk, pv.pk_len);
                    if (!p.pk || sch_partition_key_split(t, p.pk, p.pk_len, pkv))
                        rc = CS_ECORRUPT;
                }
            }
        }
    }
    if (sc)
        st_scan_close(sc);
    cs_arena_destroy(&x.a);
    if (rc < 0) {
        st_mutation_free(x.m);
        return rc;
    }
    *out = x.m;
    return 0;
}
