/*
 * exec_select.c: SELECT execution.  Owner: exec-read.  Caller: exec.c.
 *
 *   cql__exec_select
 *     -> resolve table, compile selection (select_sel.c), analyse WHERE
 *        (restrict.c), evaluate LIMIT / PER PARTITION LIMIT, ORDER BY
 *     -> scan: a list of partition keys (= / IN) read one by one, or a token
 *        range scan in ring order; virtual tables through vtable_rows
 *     -> per row: materialize (xrow), filter, then select / aggregate / group
 *     -> Rows result with paging state (paging.c) when the page is full and
 *        another row qualifies.
 *
 * Page boundaries: a page ends after page_size rows; the state records the
 * last returned row (partition key + clustering key) and the counts used by
 * LIMIT and PER PARTITION LIMIT, so the next page resumes right after it.
 * Aggregates and GROUP BY return everything in one page.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cql/select_int.h"
#include "common/alloc.h"
#include "common/hash.h"
#include "common/util.h"

typedef struct brow { uint8_t *ck; uint32_t ck_len; uint8_t *vals; size_t vals_len; size_t seq; } brow;

typedef struct sx {
    cql_ctx *ctx; cql_session *s; const sch_table *t; const ast_select *as; const cql_stmt *st;
    const cql_params *p; cs_error *e;
    cs_arena arena;                    /* request lifetime */
    cql_eval ev;
    cql_where w;
    xselection sel;
    cql_result *r; cql_rows out;
    bool reversed, distinct, regular_filter;
    int32_t limit, pp_limit, page_size;
    int32_t emitted, page_emitted, part_emitted;
    bool page_full, stop, more, part_skip;
    /* current partition */
    cs_arena part_arena;
    const uint8_t *pk; uint32_t pk_len; int64_t token;
    cql_value *pkvals;
    st_cell *scells; int n_scells;
    /* last returned row */
    cs_buf last_pk, last_ck; bool last_has_ck, last_part_done; int32_t last_part_emitted;
    /* GROUP BY */
    int group_cols[64]; int n_group;
    cs_buf group_key; bool group_open;
    /* ORDER BY with IN over several partitions: sort in memory */
    bool buffer; brow *brows; size_t n_brows, cap_brows;
    uint64_t tombstones, live_rows;
} sx;

/* ---------------------------------------------------------------- row materialization */

static int col_by_id(const sch_table *t, uint32_t id)
{
    for (int i = 0; i < t->n_cols; i++)
        if (t->cols[i].id == id)
            return i;
    return -1;
}

/* Serialize the complex cells [c, c+n) of multi-cell column col. */
static int complex_value(const sch_column *col, const st_cell *c, int n, cs_arena *a, cql_value *out)
{
    const ctype *t = col->type;
    cs_buf b;
    cs_buf_init(&b);
    if (t->kind == CT_UDT) {
        for (int f = 0; f < t->n_sub; f++) {
            const st_cell *found = NULL;
            for (int i = 0; i < n; i++)
                if (c[i].path_len == 2 && cs_be16(c[i].path) == f)
                    found = &c[i];
            if (found) {
                cs_buf_put_u32(&b, found->val_len);
                cs_buf_put(&b, found->val, found->val_len);
            } else
                cs_buf_put_u32(&b, 0xFFFFFFFFu);
        }
    } else {
        cs_buf_put_u32(&b, (uint32_t)n);
        for (int i = 0; i < n; i++) {
            if (t->kind == CT_SET || t->kind == CT_MAP) {
                cs_buf key;
                cs_buf_init(&key);
                cs_rd r;
                cs_rd_init(&r, c[i].path, c[i].path_len);
                if (ctype_bc_decode(t->sub[0], &r, false, &key) != 0) {
                    cs_buf_destroy(&key);
                    cs_buf_destroy(&b);
                    return CS_ECORRUPT;
                }
                cs_buf_put_u32(&b, (uint32_t)key.len);
                cs_buf_put(&b, key.p, key.len);
                cs_buf_destroy(&key);
            }
            if (t->kind != CT_SET) {
                cs_buf_put_u32(&b, c[i].val_len);
                cs_buf_put(&b, c[i].val, c[i].val_len);
            }
        }
    }
    if (b.err) {
        cs_buf_destroy(&b);
        return CS_ENOMEM;
    }
    out->len = (int32_t)b.len;
    out->p = cs_arena_memdup(a, b.p ? b.p : (const uint8_t *)"", b.len ? b.len : 1);
    cs_buf_destroy(&b);
    return out->p ? 0 : CS_ENOMEM;
}

static int cells_to_row(sx *x, const st_cell *cells, int n, xrow *row, cs_arena *a)
{
    const sch_table *t = x->t;
    int32_t now = cs_now_s();
    for (int i = 0; i < n;) {
        int j = i + 1;
        while (j < n && cells[j].col == cells[i].col)
            j++;
        int ci = col_by_id(t, cells[i].col);
        if (ci >= 0) {
            const sch_column *col = &t->cols[ci];
            if (ctype_is_multicell(col->type)) {
                int rc = complex_value(col, &cells[i], j - i, a, &row->vals[ci]);
                if (rc)
                    return rc;
            } else {
                const st_cell *c = &cells[j - 1];
                row->vals[ci].p = c->val ? c->val : (const uint8_t *)"";
                row->vals[ci].len = (int32_t)c->val_len;
                row->wt[ci] = c->ts_us;
                row->ttl[ci] = (c->flags & ST_CELL_EXPIRING) && c->ldt_s > now ? c->ldt_s - now : 0;
            }
        }
        i = j;
    }
    return 0;
}

static int build_row(sx *x, const uint8_t *ck, uint32_t ck_len, const st_cell *cells, int n_cells,
                     xrow *row, cs_arena *a)
{
    const sch_table *t = x->t;
    int nc = t->n_cols;
    memset(row, 0, sizeof(*row));
    row->vals = cs_arena_alloc(a, sizeof(cql_value) * (size_t)nc);
    row->wt = cs_arena_alloc(a, sizeof(int64_t) * (size_t)nc);
    row->ttl = cs_arena_zalloc(a, sizeof(int32_t) * (size_t)nc);
    if (!row->vals || !row->wt || !row->ttl)
        return CS_ENOMEM;
    for (int i = 0; i < nc; i++) {
        row->vals[i].p = NULL;
        row->vals[i].len = CQL_NULL;
        row->wt[i] = INT64_MIN;
    }
    for (int i = 0; i < t->n_pk; i++)
        row->vals[t->pk[i] - t->cols] = x->pkvals[i];
    row->pk = x->pk;
    row->pk_len = x->pk_len;
    row->token = x->token;
    row->ck = ck;
    row->ck_len = ck_len;
    if (ck_len > 0 && t->n_ck > 0) {
        cs_buf store;
        cs_buf_init(&store);
        size_t off[64];
        int32_t len[64];
        if (t->n_ck > 64 || sch_clustering_decode(t, ck, ck_len, &store, off, len) != 0) {
            cs_buf_destroy(&store);
            return CS_ECORRUPT;
        }
        uint8_t *copy = cs_arena_memdup(a, store.p ? store.p : (const uint8_t *)"", store.len ? store.len : 1);
        cs_buf_destroy(&store);
        if (!copy)
            return CS_ENOMEM;
        for (int i = 0; i < t->n_ck; i++) {
            row->vals[t->ck[i] - t->cols].p = copy + off[i];
            row->vals[t->ck[i] - t->cols].len = len[i];
        }
    }
    int rc = cells_to_row(x, x->scells, x->n_scells, row, a);
    if (rc == 0 && cells)
        rc = cells_to_row(x, cells, n_cells, row, a);
    return rc;
}

/* ---------------------------------------------------------------- output */

static bool filters_pass(sx *x, const xrow *row)
{
    for (int i = 0; i < x->w.n_filters; i++) {
        if (!cql__filter_match_row(&x->w.filters[i], x->t, row->vals))
            return false;
    }
    return true;
}

/* Evaluate the selection for a row (or the aggregate results: row NULL). */
static int row_values(sx *x, const xrow *row, cql_value *vals)
{
    for (int i = 0; i < x->sel.n; i++) {
        int rc = row ? cql__sel_eval(&x->ev, x->t, x->sel.sels[i], row, &vals[i], x->e)
                     : cql__sel_agg_result(&x->ev, x->sel.sels[i], &vals[i], x->e);
        if (rc)
            return rc;
    }
    return 0;
}

static int write_values(sx *x, const cql_value *vals)
{
    if (x->sel.json) {
        cs_buf b;
        cs_buf_init(&b);
        int rc = cql__sel_json_row(&x->sel, vals, &b);
        if (rc == 0)
            cql_rows_value(&x->out, b.p, (int32_t)b.len);
        cs_buf_destroy(&b);
        return rc ? cs_error_set(x->e, CS_ERR_SERVER, "cannot format JSON row") : 0;
    }
    for (int i = 0; i < x->sel.n; i++)
        cql_rows_value(&x->out, vals[i].p, vals[i].len);
    return 0;
}

/* Keep a selected row for the in-memory ORDER BY sort. */
static int buffer_row(sx *x, const xrow *row, const cql_value *vals)
{
    if (x->n_brows == x->cap_brows) {
        size_t nc = x->cap_brows ? x->cap_brows * 2 : 64;
        brow *nb = cs_realloc(x->brows, sizeof(brow) * nc);
        if (!nb)
            return cs_error_set(x->e, CS_ERR_SERVER, "out of memory");
        x->brows = nb;
        x->cap_brows = nc;
    }
    cs_buf b;
    cs_buf_init(&b);
    for (int i = 0; i < x->sel.n; i++)
        cs_buf_put_bytes(&b, vals[i].p, vals[i].len);
    brow *br = &x->brows[x->n_brows];
    br->ck = cs_arena_memdup(&x->arena, row->ck_len ? row->ck : (const uint8_t *)"", row->ck_len + 1);
    br->ck_len = row->ck_len;
    br->vals = cs_arena_memdup(&x->arena, b.p ? b.p : (const uint8_t *)"", b.len + 1);
    br->vals_len = b.len;
    br->seq = x->n_brows;
    cs_buf_destroy(&b);
    if (!br->ck || !br->vals)
        return cs_error_set(x->e, CS_ERR_SERVER, "out of memory");
    x->n_brows++;
    return 0;
}

static int flush_group(sx *x)
{
    if (!x->group_open)
        return 0;
    x->group_open = false;
    if (x->emitted >= x->limit)
        return 0;
    cql_value *vals = cs_arena_zalloc(&x->arena, sizeof(cql_value) * (size_t)(x->sel.n + 1));
    if (!vals)
        return cs_error_set(x->e, CS_ERR_SERVER, "out of memory");
    int rc = row_values(x, NULL, vals);
    if (rc == 0)
        rc = write_values(x, vals);
    x->emitted++;
    cql__sel_agg_reset(&x->sel);
    if (x->emitted >= x->limit)
        x->stop = true;
    return rc;
}

/* A row that passed the filters: select, aggregate or group it. */
static int emit(sx *x, const xrow *row)
{
    int rc;
    if ((x->n_group || x->sel.has_agg) && x->pp_limit != INT32_MAX) {
        /* PER PARTITION LIMIT applies to the rows fed to aggregation */
        if (x->part_emitted >= x->pp_limit) {
            x->part_skip = true;
            return 0;
        }
        x->part_emitted++;
    }
    if (x->n_group) {
        cs_buf key;
        cs_buf_init(&key);
        for (int i = 0; i < x->n_group; i++)
            cs_buf_put_bytes(&key, row->vals[x->group_cols[i]].p, row->vals[x->group_cols[i]].len);
        bool same = x->group_open && key.len == x->group_key.len &&
                    !memcmp(key.p, x->group_key.p, key.len);
        if (!same) {
            if ((rc = flush_group(x))) {
                cs_buf_destroy(&key);
                return rc;
            }
            if (x->stop) {
                cs_buf_destroy(&key);
                return 0;
            }
            cs_buf_reset(&x->group_key);
            cs_buf_put(&x->group_key, key.p, key.len);
            x->group_open = true;
        }
        cs_buf_destroy(&key);
        return cql__sel_agg_add(&x->ev, x->t, &x->sel, row, x->e);
    }
    if (x->sel.has_agg)
        return cql__sel_agg_add(&x->ev, x->t, &x->sel, row, x->e);
    if (x->part_emitted >= x->pp_limit) {
        x->part_skip = true;
        return 0;
    }
    if (x->page_full) {
        x->more = true;
        x->stop = true;
        return 0;
    }
    cql_value *vals = cs_arena_zalloc(x->ev.arena, sizeof(cql_value) * (size_t)(x->sel.n + 1));
    if (!vals)
        return cs_error_set(x->e, CS_ERR_SERVER, "out of memory");
    if ((rc = row_values(x, row, vals)))
        return rc;
    x->part_emitted++;
    if (x->buffer)
        return buffer_row(x, row, vals);
    if ((rc = write_values(x, vals)))
        return rc;
    x->emitted++;
    x->page_emitted++;
    cs_buf_reset(&x->last_pk);
    cs_buf_put(&x->last_pk, row->pk, row->pk_len);
    cs_buf_reset(&x->last_ck);
    cs_buf_put(&x->last_ck, row->ck, row->ck_len);
    x->last_has_ck = !row->is_static_only && !x->distinct;
    x->last_part_done = row->is_static_only || x->distinct;
    x->last_part_emitted = x->part_emitted;
    if (x->emitted >= x->limit)
        x->stop = true;
    else if (x->page_emitted >= x->page_size)
        x->page_full = true;
    if (x->part_emitted >= x->pp_limit)
        x->part_skip = true;
    return 0;
}

/* One storage row (or static-only content when ck is NULL). */
static int on_row(sx *x, const uint8_t *ck, uint32_t ck_len, const st_cell *cells, int n,
                  bool static_only)
{
    cs_arena ra;
    cs_arena_init(&ra);
    cs_arena *saved = x->ev.arena;
    x->ev.arena = &ra;
    xrow row;
    int rc = build_row(x, ck, ck_len, cells, n, &row, &ra);
    if (rc)
        rc = cs_error_set(x->e, CS_ERR_SERVER, "Failed to read row (%s)", cs_strerror(rc));
    row.is_static_only = static_only;
    if (rc == 0 && filters_pass(x, &row))
        rc = emit(x, &row);
    x->ev.arena = saved;
    cs_arena_destroy(&ra);
    return rc;
}

/* ---------------------------------------------------------------- scanning */

static int check_tombstones(sx *x, const st_scan *sc)
{
    const st_scan_stats *stt = st_scan_stats_get(sc);
    uint64_t tomb = x->tombstones + (stt ? stt->tombstones : 0);
    int fail = x->ctx->cfg.tombstone_failure_threshold;
    if (fail > 0 && tomb > (uint64_t)fail) {
        int rc = cs_error_set(x->e, CS_ERR_READ_FAILURE,
                              "Operation failed - received 0 responses and 1 failures: "
                              "READ_TOO_MANY_TOMBSTONES from localhost/127.0.0.1:7000");
        x->e->cl = x->p ? x->p->consistency : 1;
        x->e->received = 0;
        x->e->blockfor = 1;
        x->e->numfailures = 1;
        x->e->data_present = 0;
        return rc;
    }
    return 0;
}

static int process_partition(sx *x, st_scan *sc, const st_partition_view *pv, int32_t part_emitted)
{
    cs_arena_destroy(&x->part_arena);
    cs_arena_init(&x->part_arena);
    x->pk = cs_arena_memdup(&x->part_arena, pv->pk_len ? pv->pk : (const uint8_t *)"", pv->pk_len + 1);
    x->pk_len = pv->pk_len;
    x->token = pv->token;
    x->pkvals = cs_arena_zalloc(&x->part_arena, sizeof(cql_value) * (size_t)(x->t->n_pk + 1));
    if (!x->pk || !x->pkvals)
        return cs_error_set(x->e, CS_ERR_SERVER, "out of memory");
    if (sch_partition_key_split(x->t, x->pk, x->pk_len, x->pkvals) != 0)
        return cs_error_set(x->e, CS_ERR_SERVER, "Corrupt partition key");
    x->n_scells = 0;
    x->scells = NULL;
    x->part_emitted = part_emitted;
    x->part_skip = x->part_emitted >= x->pp_limit;
    bool had_rows = false;
    st_row_view rv;
    int rc = 0, n = 0;
    while (!x->stop && !x->part_skip && (rc = st_scan_next_row(sc, &rv)) == 1) {
        if (rv.flags & ST_ROW_STATIC) {
            x->scells = cs_arena_alloc(&x->part_arena, sizeof(st_cell) * (size_t)(rv.n_cells + 1));
            if (!x->scells)
                return cs_error_set(x->e, CS_ERR_SERVER, "out of memory");
            for (int i = 0; i < rv.n_cells; i++) {
                x->scells[i] = rv.cells[i];
                x->scells[i].path = cs_arena_memdup(&x->part_arena, rv.cells[i].path_len ? rv.cells[i].path : (const uint8_t *)"", rv.cells[i].path_len + 1);
                x->scells[i].val = cs_arena_memdup(&x->part_arena, rv.cells[i].val_len ? rv.cells[i].val : (const uint8_t *)"", rv.cells[i].val_len + 1);
            }
            x->n_scells = rv.n_cells;
            continue;
        }
        had_rows = true;
        x->live_rows++;
        if (x->distinct)
            break;
        if ((rc = on_row(x, rv.ck, rv.ck_len, rv.cells, rv.n_cells, false)))
            return rc;
        if ((++n & 1023) == 0 && (rc = check_tombstones(x, sc)))
            return rc;
    }
    if (rc < 0)
        return cs_error_set(x->e, CS_ERR_SERVER, "Read failed: %s", cs_strerror(rc));
    if (x->stop || x->part_skip)
        return 0;
    if (x->distinct && (had_rows || x->n_scells > 0))
        return on_row(x, NULL, 0, NULL, 0, true);
    /* Cassandra's returnStaticContentOnPartitionWithNoRows: full-partition
     * queries (no clustering or regular-column restriction) return the
     * static content of a partition without rows, nulls elsewhere. */
    if (!had_rows && x->n_scells > 0 && !x->w.ck_restricted && !x->regular_filter)
        return on_row(x, NULL, 0, NULL, 0, true);
    return 0;
}

static int run_scan(sx *x, st_read_spec *spec, int32_t first_part_emitted)
{
    if (!x->t->st)
        return cs_error_set(x->e, CS_ERR_SERVER, "Table %s.%s has no storage", x->t->ks->name, x->t->name);
    st_scan *sc = NULL;
    int rc = st_scan_open(x->t->st, spec, &sc);
    if (rc)
        return cs_error_set(x->e, CS_ERR_SERVER, "Cannot open scan: %s", cs_strerror(rc));
    st_partition_view pv;
    int32_t pe = first_part_emitted;
    while (!x->stop && (rc = st_scan_next_partition(sc, &pv)) == 1) {
        rc = process_partition(x, sc, &pv, pe);
        pe = 0;
        if (rc == 0)
            rc = check_tombstones(x, sc);
        if (rc)
            break;
    }
    if (rc < 0 && rc != CS_EUSER)
        rc = cs_error_set(x->e, CS_ERR_SERVER, "Read failed: %s", cs_strerror(rc));
    const st_scan_stats *stt = st_scan_stats_get(sc);
    if (stt)
        x->tombstones += stt->tombstones;
    st_scan_close(sc);
    return rc > 0 ? 0 : rc;
}

static void base_spec(sx *x, st_read_spec *sp, const st_slice *sl, int n)
{
    memset(sp, 0, sizeof(*sp));
    sp->slices = sl;
    sp->n_slices = n;
    sp->reversed = x->reversed;
    sp->include_static = true;
}

/* Partition keys from = / IN, optionally resuming inside one of them. */
static int scan_keys(sx *x, const cql_pstate *ps)
{
    int start = 0;
    if (ps) {
        start = -1;
        for (int i = 0; i < x->w.n_pks; i++)
            if ((uint32_t)x->w.pks[i].len == ps->pk_len && !memcmp(x->w.pks[i].p, ps->pk, ps->pk_len))
                start = i;
        if (start < 0)
            return 0;                   /* state from another query: nothing left */
    }
    for (int i = start; i < x->w.n_pks && !x->stop; i++) {
        st_read_spec sp;
        const st_slice *sl = x->w.slices;
        int n = x->w.n_slices;
        int32_t pe = 0;
        if (ps && i == start) {
            if (ps->part_done)
                continue;
            st_slice *ns;
            int nn;
            bool empty;
            if (cql__slices_after(&x->arena, sl, n, ps->ck, ps->ck_len, x->reversed, &ns, &nn, &empty))
                return cs_error_set(x->e, CS_ERR_SERVER, "out of memory");
            if (empty)
                continue;
            sl = ns;
            n = nn;
            pe = ps->part_emitted;
        }
        base_spec(x, &sp, sl, n);
        sp.pk = x->w.pks[i].p;
        sp.pk_len = (uint32_t)x->w.pks[i].len;
        int rc = run_scan(x, &sp, pe);
        if (rc)
            return rc;
    }
    return 0;
}

/* Token-ordered scan (full ring or token range), optionally resuming. */
static int scan_range(sx *x, const cql_pstate *ps)
{
    int64_t lo = INT64_MIN, hi = INT64_MAX;
    if (x->w.token_range) {
        lo = x->w.tok_start;
        hi = x->w.tok_end;
        if (!x->w.tok_start_incl) {
            if (lo == INT64_MAX)
                return 0;
            lo++;
        }
        if (!x->w.tok_end_incl) {
            if (hi == INT64_MIN)
                return 0;
            hi--;
        }
        if (lo > hi)
            return 0;
    }
    st_read_spec sp;
    if (ps) {
        int64_t tok = cs_murmur3_token(ps->pk, ps->pk_len);
        if (!ps->part_done) {
            st_slice *ns;
            int nn;
            bool empty;
            if (cql__slices_after(&x->arena, x->w.slices, x->w.n_slices, ps->ck, ps->ck_len,
                                  x->reversed, &ns, &nn, &empty))
                return cs_error_set(x->e, CS_ERR_SERVER, "out of memory");
            if (!empty) {
                base_spec(x, &sp, ns, nn);
                sp.pk = ps->pk;
                sp.pk_len = ps->pk_len;
                int rc = run_scan(x, &sp, ps->part_emitted);
                if (rc || x->stop)
                    return rc;
            }
        }
        base_spec(x, &sp, x->w.slices, x->w.n_slices);
        sp.start_token = tok;
        sp.start_key = ps->pk;
        sp.start_key_len = ps->pk_len;
        sp.start_inclusive = false;
        sp.end_token = hi;
        return run_scan(x, &sp, 0);
    }
    base_spec(x, &sp, x->w.slices, x->w.n_slices);
    sp.start_token = lo;
    sp.start_key = NULL;
    sp.start_inclusive = true;
    sp.end_token = hi;
    return run_scan(x, &sp, 0);
}

/* ---------------------------------------------------------------- virtual tables */

typedef struct vrow { cql_value *vals; uint8_t *pk; uint32_t pk_len; uint8_t *ck; uint32_t ck_len; } vrow;
typedef struct vcollect { sx *x; vrow *rows; size_t n, cap; int err; } vcollect;

static int vt_emit(void *arg, const uint8_t **vals, const int32_t *lens)
{
    vcollect *vc = arg;
    sx *x = vc->x;
    const sch_table *t = x->t;
    if (vc->n == vc->cap) {
        size_t nc = vc->cap ? vc->cap * 2 : 32;
        vrow *nr = cs_realloc(vc->rows, sizeof(vrow) * nc);
        if (!nr)
            return vc->err = CS_ENOMEM;
        vc->rows = nr;
        vc->cap = nc;
    }
    vrow *r = &vc->rows[vc->n];
    r->vals = cs_arena_zalloc(&x->arena, sizeof(cql_value) * (size_t)(t->n_cols + 1));
    if (!r->vals)
        return vc->err = CS_ENOMEM;
    for (int i = 0; i < t->n_cols; i++) {
        r->vals[i].len = lens[i] < 0 ? CQL_NULL : lens[i];
        r->vals[i].p = lens[i] >= 0 ? cs_arena_memdup(&x->arena, lens[i] ? vals[i] : (const uint8_t *)"", (size_t)lens[i] + 1) : NULL;
    }
    cql_value kv[64];
    cs_buf b;
    cs_buf_init(&b);
    for (int i = 0; i < t->n_pk && i < 64; i++)
        kv[i] = r->vals[t->pk[i] - t->cols];
    sch_partition_key(t, kv, &b);
    r->pk_len = (uint32_t)b.len;
    r->pk = cs_arena_memdup(&x->arena, b.p ? b.p : (const uint8_t *)"", b.len + 1);
    cs_buf_reset(&b);
    for (int i = 0; i < t->n_ck && i < 64; i++)
        kv[i] = r->vals[t->ck[i] - t->cols];
    sch_clustering_key(t, kv, t->n_ck, &b);
    r->ck_len = (uint32_t)b.len;
    r->ck = cs_arena_memdup(&x->arena, b.p ? b.p : (const uint8_t *)"", b.len + 1);
    cs_buf_destroy(&b);
    vc->n++;
    return 0;
}

static _Thread_local const sch_table *g_vt;
static int vrow_cmp(const void *a, const void *b)
{
    const vrow *x = a, *y = b;
    for (int i = 0; i < g_vt->n_pk; i++) {
        int ci = (int)(g_vt->pk[i] - g_vt->cols);
        const cql_value *u = &x->vals[ci], *v = &y->vals[ci];
        int c = ctype_compare(g_vt->cols[ci].type, u->p, u->len < 0 ? 0 : (size_t)u->len, v->p,
                              v->len < 0 ? 0 : (size_t)v->len);
        if (c)
            return c;
    }
    size_t n = x->ck_len < y->ck_len ? x->ck_len : y->ck_len;
    int c = memcmp(x->ck, y->ck, n);
    return c ? c : (x->ck_len < y->ck_len ? -1 : x->ck_len > y->ck_len);
}

static bool in_slices(const cql_where *w, const uint8_t *ck, uint32_t n)
{
    if (w->n_slices == 0)
        return !w->empty;
    for (int i = 0; i < w->n_slices; i++) {
        const st_slice *s = &w->slices[i];
        size_t m;
        if (s->start.len) {
            m = s->start.len < n ? s->start.len : n;
            int c = memcmp(ck, s->start.key, m);
            if (c < 0 || (c == 0 && n < s->start.len))
                continue;
        }
        if (s->end.len) {
            m = s->end.len < n ? s->end.len : n;
            int c = memcmp(ck, s->end.key, m);
            if (c > 0 || (c == 0 && n >= s->end.len))
                continue;
        }
        return true;
    }
    return false;
}

static int scan_virtual(sx *x, const cql_pstate *ps)
{
    vcollect vc;
    memset(&vc, 0, sizeof(vc));
    vc.x = x;
    int rc = x->t->vtable_rows ? x->t->vtable_rows(x->ctx, (sch_table *)x->t, vt_emit, &vc) : 0;
    if (rc == 0 && vc.err)
        rc = vc.err;
    if (rc) {
        cs_free(vc.rows);
        return cs_error_isset(x->e) ? CS_EUSER : cs_error_set(x->e, CS_ERR_SERVER, "virtual table read failed");
    }
    g_vt = x->t;
    qsort(vc.rows, vc.n, sizeof(vrow), vrow_cmp);
    if (x->reversed) {
        for (size_t i = 0, j = vc.n ? vc.n - 1 : 0; i < j; i++, j--) {
            vrow tmp = vc.rows[i];
            vc.rows[i] = vc.rows[j];
            vc.rows[j] = tmp;
        }
    }
    size_t start = 0;
    if (ps) {
        for (size_t i = 0; i < vc.n; i++)
            if (vc.rows[i].pk_len == ps->pk_len && !memcmp(vc.rows[i].pk, ps->pk, ps->pk_len) &&
                (!ps->ck || (vc.rows[i].ck_len == ps->ck_len && !memcmp(vc.rows[i].ck, ps->ck, ps->ck_len))))
                start = i + 1;
    }
    const uint8_t *cur_pk = NULL;
    uint32_t cur_len = 0;
    for (size_t i = start; i < vc.n && !x->stop && rc == 0; i++) {
        vrow *r = &vc.rows[i];
        if (x->w.pk_all) {
            bool found = false;
            for (int k = 0; k < x->w.n_pks && !found; k++)
                found = (uint32_t)x->w.pks[k].len == r->pk_len && !memcmp(x->w.pks[k].p, r->pk, r->pk_len);
            if (!found)
                continue;
        }
        int64_t tok = cs_murmur3_token(r->pk, r->pk_len);
        if (x->w.token_range &&
            (tok < x->w.tok_start || (tok == x->w.tok_start && !x->w.tok_start_incl) ||
             tok > x->w.tok_end || (tok == x->w.tok_end && !x->w.tok_end_incl)))
            continue;
        if (x->t->n_ck && !in_slices(&x->w, r->ck, r->ck_len))
            continue;
        if (!cur_pk || cur_len != r->pk_len || memcmp(cur_pk, r->pk, cur_len)) {
            cur_pk = r->pk;
            cur_len = r->pk_len;
            x->part_emitted = 0;
            x->part_skip = false;
        }
        if (x->part_skip)
            continue;
        xrow row;
        memset(&row, 0, sizeof(row));
        row.vals = r->vals;
        int64_t *wt = cs_arena_alloc(&x->arena, sizeof(int64_t) * (size_t)(x->t->n_cols + 1));
        int32_t *ttl = cs_arena_zalloc(&x->arena, sizeof(int32_t) * (size_t)(x->t->n_cols + 1));
        if (!wt || !ttl) {
            rc = cs_error_set(x->e, CS_ERR_SERVER, "out of memory");
            break;
        }
        for (int k = 0; k < x->t->n_cols; k++)
            wt[k] = INT64_MIN;
        row.wt = wt;
        row.ttl = ttl;
        row.pk = r->pk;
        row.pk_len = r->pk_len;
        row.ck = r->ck;
        row.ck_len = r->ck_len;
        row.token = tok;
        if (filters_pass(x, &row))
            rc = emit(x, &row);
    }
    cs_free(vc.rows);
    return rc;
}

/* ---------------------------------------------------------------- ORDER BY / GROUP BY / DISTINCT */

static int check_order(sx *x)
{
    const ast_select *as = x->as;
    if (as->n_order == 0)
        return 0;
    int rev = -1;
    for (int i = 0; i < as->n_order; i++) {
        const sch_column *c = sch_column_find(x->t, as->order[i].column);
        if (!c)
            return cs_error_set(x->e, CS_ERR_INVALID, "Undefined column name %s", as->order[i].column);
        if (c->kind != COL_CLUSTERING)
            return cs_error_set(x->e, CS_ERR_INVALID,
                                "Order by is currently only supported on the clustered columns of the PRIMARY KEY, got %s",
                                c->name);
        if (c->position != i)
            return cs_error_set(x->e, CS_ERR_INVALID,
                                "Order by currently only supports the ordering of columns following their declared order in the PRIMARY KEY");
        int r = as->order[i].desc != c->desc;
        if (rev >= 0 && r != rev)
            return cs_error_set(x->e, CS_ERR_INVALID, "Unsupported order by relation");
        rev = r;
    }
    if (!x->w.pk_all)
        return cs_error_set(x->e, CS_ERR_INVALID,
                            "ORDER BY is only supported when the partition key is restricted by an EQ or an IN.");
    x->reversed = rev == 1;
    if (x->w.n_pks > 1) {
        if (x->p && x->p->page_size > 0 && !x->sel.has_agg)
            return cs_error_set(x->e, CS_ERR_INVALID,
                                "Cannot page queries with both ORDER BY and a IN restriction on the partition key; "
                                "you must either remove the ORDER BY or the IN and sort client side, or disable "
                                "paging for this query");
        x->buffer = !x->sel.has_agg;
    }
    return 0;
}

static int check_group_by(sx *x)
{
    const ast_select *as = x->as;
    const sch_table *t = x->t;
    if (as->n_group_by > 64)
        return cs_error_set(x->e, CS_ERR_INVALID, "Too many GROUP BY columns");
    for (int i = 0; i < as->n_group_by; i++) {
        const sch_column *c = sch_column_find(t, as->group_by[i]);
        if (!c)
            return cs_error_set(x->e, CS_ERR_INVALID, "Undefined column name %s", as->group_by[i]);
        if (c->kind != COL_PARTITION_KEY && c->kind != COL_CLUSTERING)
            return cs_error_set(x->e, CS_ERR_INVALID,
                                "Group by is currently only supported on the columns of the PRIMARY KEY, got %s",
                                c->name);
        const sch_column *want = i < t->n_pk ? t->pk[i] : (i - t->n_pk < t->n_ck ? t->ck[i - t->n_pk] : NULL);
        if (c != want)
            return cs_error_set(x->e, CS_ERR_INVALID,
                                "Group by currently only support groups of columns following their declared order in the PRIMARY KEY");
        x->group_cols[i] = (int)(c - t->cols);
    }
    x->n_group = as->n_group_by;
    return 0;
}

static int check_distinct(sx *x)
{
    if (!x->as->distinct)
        return 0;
    x->distinct = true;
    const sch_table *t = x->t;
    if (x->sel.star)
        return cs_error_set(x->e, CS_ERR_INVALID, "SELECT DISTINCT queries must only request partition key columns and/or static columns (not %s)",
                            t->n_ck ? t->ck[0]->name : (t->n_cols > t->n_pk ? t->cols[t->n_pk].name : "*"));
    bool *has = cs_arena_zalloc(&x->arena, sizeof(bool) * (size_t)(t->n_cols + 1));
    if (!has)
        return cs_error_set(x->e, CS_ERR_SERVER, "out of memory");
    for (int i = 0; i < x->sel.n; i++) {
        const xsel *s = x->sel.sels[i];
        if (s->kind != SEL_COLUMN)
            continue;
        const sch_column *c = &t->cols[s->col];
        if (c->kind != COL_PARTITION_KEY && c->kind != COL_STATIC)
            return cs_error_set(x->e, CS_ERR_INVALID,
                                "SELECT DISTINCT queries must only request partition key columns and/or static columns (not %s)",
                                c->name);
        has[s->col] = true;
    }
    if (!x->sel.has_agg)
        for (int i = 0; i < t->n_pk; i++)
            if (!has[t->pk[i] - t->cols])
                return cs_error_set(x->e, CS_ERR_INVALID,
                                    "SELECT DISTINCT queries must request all the partition key columns (missing %s)",
                                    t->pk[i]->name);
    if (x->w.ck_restricted)
        return cs_error_set(x->e, CS_ERR_INVALID,
                            "SELECT DISTINCT with WHERE clause only supports restriction by partition key and/or static columns.");
    return 0;
}

static _Thread_local bool g_rev;
static int brow_cmp(const void *a, const void *b)
{
    const brow *x = a, *y = b;
    size_t n = x->ck_len < y->ck_len ? x->ck_len : y->ck_len;
    int c = memcmp(x->ck, y->ck, n);
    if (!c)
        c = x->ck_len < y->ck_len ? -1 : x->ck_len > y->ck_len;
    if (g_rev)
        c = -c;
    if (!c)
        c = x->seq < y->seq ? -1 : 1;
    return c;
}

static void flush_buffer(sx *x)
{
    g_rev = x->reversed;
    qsort(x->brows, x->n_brows, sizeof(brow), brow_cmp);
    for (size_t i = 0; i < x->n_brows && x->emitted < x->limit; i++) {
        cs_rd r;
        cs_rd_init(&r, x->brows[i].vals, x->brows[i].vals_len);
        for (int k = 0; k < x->sel.n; k++) {
            const uint8_t *p = NULL;
            int32_t l = cs_rd_bytes(&r, &p);
            cql_rows_value(&x->out, p, l);
        }
        x->emitted++;
    }
}

/* ---------------------------------------------------------------- entry points */

static int sx_init(sx *x, cql_ctx *ctx, cql_session *s, cql_stmt *st, const cql_params *p,
                   cs_error *e)
{
    memset(x, 0, sizeof(*x));
    x->ctx = ctx;
    x->s = s;
    x->st = st;
    x->as = &st->u.select;
    x->p = p;
    x->e = e;
    cs_arena_init(&x->arena);
    cs_arena_init(&x->part_arena);
    cs_buf_init(&x->last_pk);
    cs_buf_init(&x->last_ck);
    cs_buf_init(&x->group_key);
    x->t = sch_resolve_table(ctx->cat, x->as->table.ks, x->as->table.name, s->keyspace, e);
    if (!x->t)
        return CS_EUSER;
    cql__eval_init(&x->ev, ctx, s, x->t->ks->name, p ? p->values : NULL, p ? p->n_values : 0, &x->arena);
    return cql__sel_compile(&x->ev, x->t, x->as, &x->sel, e);
}

static void sx_destroy(sx *x)
{
    cql__sel_destroy(&x->sel);
    cs_free(x->brows);
    cs_buf_destroy(&x->last_pk);
    cs_buf_destroy(&x->last_ck);
    cs_buf_destroy(&x->group_key);
    cs_arena_destroy(&x->part_arena);
    cs_arena_destroy(&x->arena);
}

int cql__select_metadata(cql_ctx *ctx, cql_session *s, cql_stmt *st, cs_buf *out, cs_error *e)
{
    sx x;
    int rc = sx_init(&x, ctx, s, st, NULL, e);
    int ver = s->protocol_version ? s->protocol_version : 4;
    if (rc == 0) {
        int n = x.sel.json ? 1 : x.sel.n;
        cs_buf_put_u32(out, 0x0001);
        cs_buf_put_u32(out, (uint32_t)n);
        cs_buf_put_string(out, x.t->ks->name);
        cs_buf_put_string(out, x.t->name);
        if (x.sel.json) {
            cs_buf_put_string(out, "[json]");
            ctype_encode_option_v(ctype_scalar(CT_VARCHAR), ver, out);
        } else
            for (int i = 0; i < x.sel.n; i++) {
                cs_buf_put_string(out, x.sel.sels[i]->name);
                ctype_encode_option_v(x.sel.sels[i]->type, ver, out);
            }
    }
    sx_destroy(&x);
    return rc;
}

static int eval_limit(sx *x, const ast_term *t, const char *name, const char *what, int32_t *out)
{
    *out = INT32_MAX;
    if (!t)
        return 0;
    bool set;
    int32_t v;
    int rc = cql__term_eval_i32(&x->ev, t, name, &v, &set, x->e);
    if (rc)
        return rc;
    if (!set) {
        cql_value raw;
        cql__term_eval(&x->ev, t, ctype_scalar(CT_INT), name, &raw, x->e);
        if (raw.len == CQL_NULL)
            return cs_error_set(x->e, CS_ERR_INVALID, "Invalid null value of %s", what);
        return 0;
    }
    if (v <= 0)
        return cs_error_set(x->e, CS_ERR_INVALID, "%s must be strictly positive",
                            !strcmp(what, "limit") ? "LIMIT" : "PER PARTITION LIMIT");
    *out = v;
    return 0;
}

static int run_select(sx *x, cql_result *r)
{
    const cql_params *p = x->p;
    int flags = x->as->allow_filtering ? CQL_WHERE_ALLOW_FILTERING : 0;
    int rc = cql__where_analyze(&x->ev, x->t, x->as->where, x->as->n_where, CQL_WHERE_SELECT, flags,
                                &x->w, x->e);
    if (rc)
        return rc;
    for (int i = 0; i < x->w.n_filters; i++)
        if (x->w.filters[i].col->kind == COL_REGULAR)
            x->regular_filter = true;
    if (p && (p->consistency == 0x0008 || p->consistency == 0x0009) &&
        (!x->w.pk_all || x->w.n_pks != 1) && !x->t->is_virtual)
        return cs_error_set(x->e, CS_ERR_INVALID,
                            "SERIAL/LOCAL_SERIAL consistency may only be requested for one partition at a time");
    if ((rc = eval_limit(x, x->as->limit, "[limit]", "limit", &x->limit)) ||
        (rc = eval_limit(x, x->as->per_partition_limit, "[per_partition_limit]", "per partition limit",
                         &x->pp_limit)) ||
        (rc = check_group_by(x)) || (rc = check_distinct(x)) || (rc = check_order(x)))
        return rc;
    bool single_page = x->sel.has_agg || x->n_group || x->buffer;
    x->page_size = (!single_page && p && p->page_size > 0) ? p->page_size : INT32_MAX;
    cql_pstate ps, *pps = NULL;
    if (!single_page && p && p->paging_state && p->paging_state_len >= 0) {
        if ((rc = cql__pstate_decode(p->paging_state, p->paging_state_len, &ps, x->e)))
            return rc;
        pps = &ps;
        x->emitted = ps.emitted;
        if (x->emitted >= x->limit)
            x->stop = true;
    }
    int n_cols = x->sel.json ? 1 : x->sel.n;
    cql_rows_begin(&x->out, r, x->s->protocol_version ? x->s->protocol_version : 4, x->t->ks->name,
                   x->t->name, n_cols, p ? p->skip_metadata : false);
    cql__sel_columns(&x->sel, &x->out);
    if (!x->w.empty && !x->stop) {
        if (x->t->is_virtual)
            rc = scan_virtual(x, pps);
        else if (x->w.pk_all)
            rc = scan_keys(x, pps);
        else
            rc = scan_range(x, pps);
    }
    if (rc)
        return rc;
    if (x->buffer)
        flush_buffer(x);
    if (x->n_group)
        rc = flush_group(x);
    else if (x->sel.has_agg && !x->distinct) {
        x->group_open = true;
        rc = flush_group(x);
    }
    if (rc)
        return rc;
    int warn = x->ctx->cfg.tombstone_warn_threshold;
    if (warn > 0 && x->tombstones > (uint64_t)warn) {
        if (x->w.pk_all && x->w.n_pks == 1)
            cql_result_warn(r, "Read %llu live rows and %llu tombstone cells for query %.*s; token %lld (see tombstone_warn_threshold)",
                            (unsigned long long)x->live_rows, (unsigned long long)x->tombstones,
                            (int)x->st->text_len, x->st->text,
                            (long long)cs_murmur3_token(x->w.pks[0].p, (size_t)x->w.pks[0].len));
        else
            cql_result_warn(r, "Read %llu live rows and %llu tombstone cells for query %.*s (see tombstone_warn_threshold)",
                            (unsigned long long)x->live_rows, (unsigned long long)x->tombstones,
                            (int)x->st->text_len, x->st->text);
    }
    if (x->more) {
        cql_pstate np;
        memset(&np, 0, sizeof(np));
        np.pk = x->last_pk.p ? x->last_pk.p : (const uint8_t *)"";
        np.pk_len = (uint32_t)x->last_pk.len;
        np.ck = x->last_has_ck ? (x->last_ck.p ? x->last_ck.p : (const uint8_t *)"") : NULL;
        np.ck_len = (uint32_t)x->last_ck.len;
        np.part_done = x->last_part_done;
        np.emitted = x->emitted;
        np.part_emitted = x->last_part_emitted;
        cs_buf b;
        cs_buf_init(&b);
        cql__pstate_encode(&np, &b);
        cql_rows_end(&x->out, b.p, (int32_t)b.len);
        cs_buf_destroy(&b);
    } else
        cql_rows_end(&x->out, NULL, -1);
    if (r->body.err)
        return cs_error_set(x->e, CS_ERR_SERVER, "out of memory");
    return 0;
}

int cql__exec_select(cql_ctx *ctx, cql_session *s, cql_stmt *st, const cql_params *p,
                     cql_result *r, cs_error *e)
{
    sx x;
    int rc = sx_init(&x, ctx, s, st, p, e);
    if (rc == 0)
        rc = run_select(&x, r);
    sx_destroy(&x);
    return rc;
}
