/*
 * wread.c: reads done by the write side (owner: exec-write): list
 * operations that need the current list, counter totals, and the current
 * row of lightweight transactions.  Reads one row straight from the engine
 * with st_scan and copies it (cql_rowcopy), then assembles column values in
 * the protocol form from the cells (path conventions: collections.c).
 */
#include <string.h>
#include "cql/modify_int.h"
#include "common/alloc.h"

void cql__rowcopy_free(cql_rowcopy *rc)
{
    cs_buf_destroy(&rc->store);
    cs_free(rc->cells);
    rc->cells = NULL;
    rc->n_cells = 0;
}

/* Copy a row view's cells into rc (offsets first, pointers fixed at the end). */
static int copy_row(cql_rowcopy *rc, const st_row_view *v)
{
    rc->cells = cs_calloc((size_t)(v->n_cells ? v->n_cells : 1), sizeof *rc->cells);
    if (!rc->cells)
        return CS_ENOMEM;
    size_t *off = cs_calloc((size_t)(v->n_cells ? v->n_cells : 1), sizeof *off);
    if (!off)
        return CS_ENOMEM;
    for (int i = 0; i < v->n_cells; i++) {
        rc->cells[i] = v->cells[i];
        off[i] = rc->store.len;
        cs_buf_put(&rc->store, v->cells[i].path, v->cells[i].path_len);
        cs_buf_put(&rc->store, v->cells[i].val, v->cells[i].val_len);
    }
    rc->n_cells = v->n_cells;
    int err = rc->store.err;
    for (int i = 0; i < v->n_cells && !err; i++) {
        st_cell *c = &rc->cells[i];
        c->path = c->path_len ? rc->store.p + off[i] : NULL;
        c->val = c->val_len ? rc->store.p + off[i] + c->path_len : NULL;
    }
    cs_free(off);
    return err;
}

int cql__read_row(const sch_table *t, const uint8_t *pk, uint32_t pk_len,
                  const uint8_t *ck, uint32_t ck_len, bool is_static, int32_t now_s,
                  cql_rowcopy *out)
{
    return cql__read_row_ex(t, pk, pk_len, ck, ck_len, is_static, now_s, false, out);
}

static _Thread_local cql_wread_stats g_wread_stats;

void cql__wread_stats_reset(void)
{
    memset(&g_wread_stats, 0, sizeof g_wread_stats);
}

const cql_wread_stats *cql__wread_stats(void)
{
    return &g_wread_stats;
}

int cql__read_row_ex(const sch_table *t, const uint8_t *pk, uint32_t pk_len,
                     const uint8_t *ck, uint32_t ck_len, bool is_static, int32_t now_s,
                     bool tombstones, cql_rowcopy *out)
{
    memset(out, 0, sizeof *out);
    cs_buf_init(&out->store);
    out->liveness.ts_us = INT64_MIN;
    if (!t->st)
        return 0;
    cs_buf end;
    cs_buf_init(&end);
    st_slice sl;
    static const uint8_t none[1] = { 0 };
    if (is_static) {
        /* A slice matching no clustering (every key starts with 0x40). */
        sl.start = (st_bound){ none, 1, true };
        sl.end = (st_bound){ none, 1, true };
    } else {
        cs_buf_put(&end, ck, ck_len);
        cs_buf_put_u8(&end, CK_AFTER);
        sl.start = (st_bound){ ck, ck_len, true };
        sl.end = (st_bound){ end.p, (uint32_t)end.len, true };
    }
    st_read_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.pk = pk;
    spec.pk_len = pk_len;
    spec.slices = &sl;
    spec.n_slices = (!is_static && ck_len == 0) ? 0 : 1;   /* no clustering: the only row */
    spec.include_static = is_static;
    spec.now_s = now_s;
    spec.with_tombstones = tombstones;
    st_scan *s = NULL;
    int rc = st_scan_open(t->st, &spec, &s);
    if (rc < 0) {
        cs_buf_destroy(&end);
        return rc;
    }
    st_partition_view pv;
    rc = st_scan_next_partition(s, &pv);
    while (rc == 1) {
        st_row_view rv;
        rc = st_scan_next_row(s, &rv);
        if (rc != 1)
            break;
        bool st_row = (rv.flags & ST_ROW_STATIC) != 0;
        if (st_row != is_static)
            continue;
        if (!is_static && (rv.ck_len != ck_len || (ck_len && memcmp(rv.ck, ck, ck_len) != 0)))
            continue;
        out->liveness = rv.liveness;
        rc = copy_row(out, &rv);
        if (rc == 0) {
            out->exists = rv.liveness.ts_us != INT64_MIN;
            for (int i = 0; i < rv.n_cells && !out->exists; i++) {
                const st_cell *c = &rv.cells[i];
                out->exists = !(c->flags & ST_CELL_TOMBSTONE) &&
                              !((c->flags & ST_CELL_EXPIRING) && now_s > 0 && c->ldt_s <= now_s);
            }
        }
        break;
    }
    const st_scan_stats *stt = st_scan_stats_get(s);
    if (stt) {
        g_wread_stats.sstables += stt->sstables_read;
        g_wread_stats.tombstones += stt->tombstones;
    }
    st_scan_close(s);
    cs_buf_destroy(&end);
    if (rc < 0)
        return rc;
    return out->exists ? 1 : 0;
}

/* Append [i32 len][bytes]. */
static void put_elem(cs_buf *out, const uint8_t *p, uint32_t n)
{
    cs_buf_put_u32(out, n);
    cs_buf_put(out, p, n);
}

/* Decode a bc path back to the serialized element and append it as an element. */
static int put_path_elem(cs_buf *out, const ctype *t, const st_cell *c)
{
    cs_buf tmp;
    cs_buf_init(&tmp);
    cs_rd r;
    cs_rd_init(&r, c->path, c->path_len);
    int rc = ctype_bc_decode(t, &r, false, &tmp);
    if (rc == 0 && !tmp.err)
        put_elem(out, tmp.p, (uint32_t)tmp.len);
    else if (rc == 0)
        rc = tmp.err;
    cs_buf_destroy(&tmp);
    return rc;
}

int cql__rowcopy_value(const cql_rowcopy *rc, const sch_column *c, cs_buf *out)
{
    int first = -1, n = 0;
    for (int i = 0; i < rc->n_cells; i++) {
        if (rc->cells[i].col != c->id)
            continue;
        if (first < 0)
            first = i;
        n++;
    }
    if (n == 0)
        return 0;
    const ctype *t = c->type;
    if (!ctype_is_multicell(t)) {
        const st_cell *cell = &rc->cells[first];
        cs_buf_put(out, cell->val, cell->val_len);
        return 1;
    }
    if (t->kind == CT_UDT) {
        /* Fields in order; missing -> null; trailing nulls kept. */
        for (int f = 0; f < t->n_sub; f++) {
            const st_cell *hit = NULL;
            for (int i = first; i < first + n; i++)
                if (rc->cells[i].path_len == 2 && cs_be16(rc->cells[i].path) == f)
                    hit = &rc->cells[i];
            if (hit)
                put_elem(out, hit->val, hit->val_len);
            else
                cs_buf_put_u32(out, 0xFFFFFFFFu);
        }
        return 1;
    }
    cs_buf_put_u32(out, (uint32_t)n);
    for (int i = first; i < first + n; i++) {
        const st_cell *cell = &rc->cells[i];
        int r = 0;
        if (t->kind == CT_LIST)
            put_elem(out, cell->val, cell->val_len);
        else if (t->kind == CT_SET)
            r = put_path_elem(out, t->sub[0], cell);
        else {
            r = put_path_elem(out, t->sub[0], cell);
            put_elem(out, cell->val, cell->val_len);
        }
        if (r < 0)
            return r;
    }
    return out->err ? out->err : 1;
}

/* Open a scan of partition pk positioned on it: 1 (then *s is open and
 * next_row gives its rows), 0 if it has nothing, <0 error. */
static int scan_partition(const sch_table *t, const uint8_t *pk, uint32_t pk_len, int32_t now_s, bool with_static,
                          st_scan **s)
{
    st_read_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.pk = pk;
    spec.pk_len = pk_len;
    spec.include_static = with_static;
    spec.now_s = now_s;
    *s = NULL;
    int rc = st_scan_open(t->st, &spec, s);
    if (rc < 0)
        return rc;
    st_partition_view pv;
    rc = st_scan_next_partition(*s, &pv);
    if (rc != 1) {
        st_scan_close(*s);
        *s = NULL;
    }
    return rc;
}

int cql__partition_exists(const sch_table *t, const uint8_t *pk, uint32_t pk_len, int32_t now_s)
{
    if (!t->st)
        return 0;
    st_scan *s;
    int rc = scan_partition(t, pk, pk_len, now_s, true, &s);
    if (rc == 1) {
        st_row_view rv;
        rc = st_scan_next_row(s, &rv);
        st_scan_close(s);
    }
    return rc < 0 ? rc : rc == 1;
}

int cql__first_row_ck(const sch_table *t, const uint8_t *pk, uint32_t pk_len, int32_t now_s, cs_buf *ck)
{
    if (!t->st || t->n_ck == 0)
        return 0;
    st_scan *s;
    int rc = scan_partition(t, pk, pk_len, now_s, false, &s);
    int found = 0;
    st_row_view rv;
    while (rc == 1 && (rc = st_scan_next_row(s, &rv)) == 1) {
        if ((rv.flags & ST_ROW_STATIC) || (rv.liveness.ts_us == INT64_MIN && rv.n_cells == 0))
            continue;
        cs_buf_reset(ck);
        cs_buf_put(ck, rv.ck, rv.ck_len);
        found = ck->err ? CS_ENOMEM : 1;
        break;
    }
    if (s)
        st_scan_close(s);
    return rc < 0 ? rc : found;
}
