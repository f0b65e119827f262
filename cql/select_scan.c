/*
 * select_scan.c: the storage side of SELECT.  Owner: exec-read.
 * Caller: exec_select.c.
 *
 * Reads partitions through st_scan_* (a list of partition keys, or a token
 * range in ring order; a key of a table without clustering columns through
 * st_read_point when no tombstone budget can be reached, see
 * point_read_ok), virtual tables through sch_table.vtable_rows, and
 * turns each storage row into an xrow: partition key components, decoded
 * clustering values, simple cells (value, write time, TTL) and non-frozen
 * collections / UDTs rebuilt from their complex cells (path conventions in
 * collections.c).  Rows passing the WHERE filters go to cql__select_emit.
 * Tombstones counted by the scans feed the warn / fail thresholds.
 * Paged reads also give each page a tombstone budget: when a page has
 * scanned that many, it ends early (maybe with no rows) and its paging
 * state resumes right after the last position scanned (not returned), so
 * long tombstone runs never reach tombstone_failure_threshold.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cql/select_int.h"
#include "cql/metrics.h"
#include "common/alloc.h"
#include "common/hash.h"
#include "common/log.h"
#include "common/util.h"

/* ---------------------------------------------------------------- row materialization */

static int idmap_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Column index of storage column id (sorted id map built on first use). */
static int col_by_id(cql_sx *x, uint32_t id)
{
    const sch_table *t = x->t;
    if (!x->idmap) {
        x->idmap = cs_arena_alloc(&x->arena, sizeof(uint32_t) * 2 * (size_t)(t->n_cols + 1));
        if (!x->idmap) {
            for (int i = 0; i < t->n_cols; i++)
                if (t->cols[i].id == id)
                    return i;
            return -1;
        }
        for (int i = 0; i < t->n_cols; i++) {
            x->idmap[2 * i] = t->cols[i].id;
            x->idmap[2 * i + 1] = (uint32_t)i;
        }
        qsort(x->idmap, (size_t)t->n_cols, 2 * sizeof(uint32_t), idmap_cmp);
    }
    int lo = 0, hi = t->n_cols - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        uint32_t v = x->idmap[2 * mid];
        if (v == id)
            return (int)x->idmap[2 * mid + 1];
        if (v < id)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
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

/* Write time at or before which cells of column ci were dropped (ALTER
 * TABLE DROP then ADD of the same name): those cells stay invisible, as in
 * Cassandra.  INT64_MIN when the column was never dropped. */
static int64_t dropped_before(cql_sx *x, int ci)
{
    const sch_table *t = x->t;
    if (t->n_dropped == 0)
        return INT64_MIN;
    if (!x->drop_us) {
        x->drop_us = cs_arena_alloc(&x->arena, sizeof(int64_t) * (size_t)(t->n_cols + 1));
        if (!x->drop_us)
            return INT64_MIN;
        for (int i = 0; i < t->n_cols; i++) {
            x->drop_us[i] = INT64_MIN;
            for (int d = 0; d < t->n_dropped; d++)
                if (!strcmp(t->dropped[d].name, t->cols[i].name) && t->dropped[d].dropped_us > x->drop_us[i])
                    x->drop_us[i] = t->dropped[d].dropped_us;
        }
    }
    return x->drop_us[ci];
}

static int cells_to_row(cql_sx *x, const st_cell *cells, int n, xrow *row, cs_arena *a)
{
    const sch_table *t = x->t;
    if (!x->now_s)
        x->now_s = cs_now_s();
    int32_t now = x->now_s;
    for (int i = 0; i < n;) {
        int j = i + 1;
        while (j < n && cells[j].col == cells[i].col)
            j++;
        int ci = col_by_id(x, cells[i].col);
        int64_t drop = ci >= 0 ? dropped_before(x, ci) : INT64_MIN;
        if (ci >= 0 && drop != INT64_MIN) {
            /* keep only cells written after the drop */
            int k = i;
            st_cell *kept = cs_arena_alloc(a, sizeof(st_cell) * (size_t)(j - i));
            if (!kept)
                return CS_ENOMEM;
            int m = 0;
            for (k = i; k < j; k++)
                if (cells[k].ts_us > drop)
                    kept[m++] = cells[k];
            const sch_column *col = &t->cols[ci];
            if (m > 0 && ctype_is_multicell(col->type)) {
                int rc = complex_value(col, kept, m, a, &row->vals[ci]);
                if (rc)
                    return rc;
            } else if (m > 0) {
                const st_cell *c = &kept[m - 1];
                row->vals[ci].p = c->val ? c->val : (const uint8_t *)"";
                row->vals[ci].len = (int32_t)c->val_len;
                row->wt[ci] = c->ts_us;
                row->ttl[ci] = (c->flags & ST_CELL_EXPIRING) && c->ldt_s > now ? c->ldt_s - now : 0;
            }
        } else if (ci >= 0) {
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

static int build_row(cql_sx *x, const uint8_t *ck, uint32_t ck_len, const st_cell *cells, int n_cells,
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
        cs_buf *store = &x->ck_store;
        cs_buf_reset(store);
        size_t off[64];
        int32_t len[64];
        if (t->n_ck > 64 || sch_clustering_decode(t, ck, ck_len, store, off, len) != 0)
            return CS_ECORRUPT;
        uint8_t *copy = cs_arena_memdup(a, store->p ? store->p : (const uint8_t *)"", store->len ? store->len : 1);
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

static bool filters_pass(cql_sx *x, const xrow *row)
{
    for (int i = 0; i < x->w.n_filters; i++) {
        if (!cql__filter_match_row(&x->w.filters[i], x->t, row->vals))
            return false;
    }
    return true;
}

/* One storage row (or static-only content when ck is NULL). */
static int on_row(cql_sx *x, const uint8_t *ck, uint32_t ck_len, const st_cell *cells, int n,
                  bool static_only)
{
    cs_arena *ra = &x->row_arena;       /* per-row scratch, recycled in bulk */
    cs_arena *saved = x->ev.arena;
    x->ev.arena = ra;
    xrow row;
    int rc = build_row(x, ck, ck_len, cells, n, &row, ra);
    if (rc)
        rc = cs_error_set(x->e, CS_ERR_SERVER, "Failed to read row (%s)", cs_strerror(rc));
    row.is_static_only = static_only;
    if (rc == 0 && filters_pass(x, &row))
        rc = cql__select_emit(x, &row);
    x->ev.arena = saved;
    if (ra->used > 256 * 1024) {
        cs_arena_destroy(ra);
        cs_arena_init(ra);
    }
    return rc;
}

/* ---------------------------------------------------------------- scanning */

int cql__read_failure(cql_sx *x, uint16_t code, const char *name)
{
    const char *addr = x->ctx->cfg.listen_address ? x->ctx->cfg.listen_address : "127.0.0.1";
    /* InetAddressAndPort's text: host name (reverse lookup) / address : storage port */
    int rc = cs_error_set(x->e, CS_ERR_READ_FAILURE,
                          "Operation failed - received 0 responses and 1 failures: %s from %s/%s:7000",
                          name, strcmp(addr, "127.0.0.1") == 0 ? "localhost" : "", addr);
    x->e->cl = x->p ? x->p->consistency : 1;
    x->e->received = 0;
    x->e->blockfor = 1;
    x->e->numfailures = 1;
    x->e->data_present = 0;
    snprintf(x->e->failure_endpoint, sizeof x->e->failure_endpoint, "%s", addr);
    x->e->failure_reason = code;
    return rc;
}

int cql__read_timeout(cql_sx *x)
{
    int rc = cs_error_set(x->e, CS_ERR_READ_TIMEOUT, "Operation timed out - received only 0 responses.");
    x->e->cl = x->p ? x->p->consistency : 1;
    x->e->received = 0;
    x->e->blockfor = 1;
    x->e->data_present = 0;
    cql_node_metrics *nm = cql_node_metrics_get(x->ctx);
    if (nm) {
        if (x->w.pk_all)
            nm->read_timeouts++;
        else
            nm->range_timeouts++;
    }
    return rc;
}

static int check_tombstones_stats(cql_sx *x, const st_scan_stats *stt)
{
    uint64_t tomb = x->tombstones + (stt ? stt->tombstones : 0);
    int fail = x->ctx->cfg.tombstone_failure_threshold;
    if (fail > 0 && tomb > (uint64_t)fail) return cql__read_failure(x, 1, "READ_TOO_MANY_TOMBSTONES");
    return 0;
}

/* A storage error under a read (corrupt sstable, I/O error, no memory):
 * logged by storage with the file; the client gets Cassandra's read
 * failure, reason UNKNOWN. */
static int storage_read_failure(cql_sx *x, int rc)
{
    CS_DEBUG("read of %s.%s failed: %s", x->t->ks->name, x->t->name, cs_strerror(rc));
    return cql__read_failure(x, 0, "UNKNOWN");
}

static int check_tombstones(cql_sx *x, const st_scan *sc)
{
    return check_tombstones_stats(x, st_scan_stats_get(sc));
}

/*
 * Tombstone budgets of a page (0 = unlimited, for unpaged reads):
 *   soft: max(page_size * 10, 1000), capped at half of
 *         tombstone_failure_threshold: a page holding a row ends once it has
 *         scanned that many tombstones;
 *   hard: 90% of tombstone_failure_threshold (100 * soft when the threshold
 *         is off): a page with no row yet keeps scanning up to that, since
 *         an empty page that is not the last stops the iteration of some
 *         drivers (Python driver before 3.26, PYTHON-1283's fix; JAVA-2934);
 *         past it the page is returned empty rather than failing.
 * Both stay below tombstone_failure_threshold, so paged reads never fail.
 */
void cql__tombstone_budget(int32_t page_size, int fail_threshold, uint64_t *soft, uint64_t *hard)
{
    *soft = *hard = 0;
    if (page_size <= 0 || page_size == INT32_MAX)
        return;
    uint64_t b = (uint64_t)page_size * 10;
    if (b < 1000)
        b = 1000;
    uint64_t h = b * 100;
    if (fail_threshold > 0) {
        if (b > (uint64_t)fail_threshold / 2)
            b = (uint64_t)fail_threshold / 2;
        h = (uint64_t)fail_threshold - (uint64_t)fail_threshold / 10;
    }
    *soft = b ? b : 1;
    *hard = h > *soft ? h : *soft;
}

/* The scan's budget: what is left of the page's (soft once the page holds
 * a row, hard before), counting the scans already closed for this page. */
static uint64_t scan_budget(const cql_sx *x)
{
    uint64_t b = x->page_emitted > 0 ? x->tomb_budget : x->tomb_hard;
    return x->tombstones < b ? b - x->tombstones : 1;
}

/* The scan spent the page's tombstone budget: end the page, resuming after
 * the last position the scan reached.  part_emitted: rows already returned
 * from that position's partition (PER PARTITION LIMIT). */
static int budget_stop(cql_sx *x, st_scan *sc, int32_t part_emitted, bool after_current)
{
    int64_t tok;
    const uint8_t *pk, *ck;
    uint32_t pk_len, ck_len;
    if (st_scan_budget_pos(sc, &tok, &pk, &pk_len, &ck, &ck_len) != 0)
        return cs_error_set(x->e, CS_ERR_SERVER, "Read failed: no budget position");
    /* Stopped inside the partition the caller has finished with (DISTINCT,
     * PER PARTITION LIMIT): resume after that partition. */
    if (after_current && x->pk && x->pk_len == pk_len && !memcmp(x->pk, pk, pk_len))
        ck = NULL;
    cs_buf_reset(&x->last_pk);
    cs_buf_put(&x->last_pk, pk, pk_len);
    cs_buf_reset(&x->last_ck);
    if (ck)
        cs_buf_put(&x->last_ck, ck, ck_len);
    x->last_has_ck = ck != NULL;
    x->last_part_done = ck == NULL;
    x->last_part_emitted = ck ? part_emitted : 0;
    x->more = true;
    x->stop = true;
    return 0;
}

/* n bytes of p and a terminating 0 (the source may end right after p[n-1]:
 * a point read's copies do). */
static uint8_t *dup_z(cs_arena *a, const uint8_t *p, size_t n)
{
    uint8_t *d = cs_arena_alloc(a, n + 1);
    if (d) {
        if (n)
            memcpy(d, p, n);
        d[n] = 0;
    }
    return d;
}

/* The rows of one partition: from an open scan, or from a point read. */
typedef struct row_src {
    st_scan *sc;                       /* NULL: pt */
    const st_point *pt;
    int next;
} row_src;

static int next_row(row_src *src, st_row_view *rv)
{
    if (src->sc)
        return st_scan_next_row(src->sc, rv);
    if (src->next >= src->pt->n_rows)
        return 0;
    *rv = src->pt->rows[src->next++];
    return 1;
}

static int process_rows(cql_sx *x, row_src *src, const st_partition_view *pv, int32_t part_emitted)
{
    st_scan *sc = src->sc;
    cs_arena_destroy(&x->part_arena);
    cs_arena_init(&x->part_arena);
    /* pk_len bytes plus a terminator: the source (a scan's key buffer or
     * st_read_point's arena copy) holds exactly pk_len bytes. */
    x->pk = dup_z(&x->part_arena, pv->pk, pv->pk_len);
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
    int rc = cql__deadline_tick(x), n = 0;
    if (rc)
        return rc;
    while (!x->stop && !x->part_skip && (rc = next_row(src, &rv)) == 1) {
        if ((rc = cql__deadline_tick(x)))
            return rc;
        if (rv.flags & ST_ROW_STATIC) {
            x->scells = cs_arena_alloc(&x->part_arena, sizeof(st_cell) * (size_t)(rv.n_cells + 1));
            if (!x->scells)
                return cs_error_set(x->e, CS_ERR_SERVER, "out of memory");
            for (int i = 0; i < rv.n_cells; i++) {
                x->scells[i] = rv.cells[i];
                x->scells[i].path = dup_z(&x->part_arena, rv.cells[i].path, rv.cells[i].path_len);
                x->scells[i].val = dup_z(&x->part_arena, rv.cells[i].val, rv.cells[i].val_len);
            }
            x->n_scells = rv.n_cells;
            continue;
        }
        had_rows = true;
        x->live_rows++;
        if (x->distinct)
            break;
        bool was_empty = x->page_emitted == 0;
        if ((rc = on_row(x, rv.ck, rv.ck_len, rv.cells, rv.n_cells, false)))
            return rc;
        if (sc && x->tomb_budget && was_empty && x->page_emitted > 0)
            st_scan_set_max_tombstones(sc, scan_budget(x));   /* the page has a row: soft budget */
        if ((++n & 1023) == 0 &&
            (rc = sc ? check_tombstones(x, sc) : check_tombstones_stats(x, &src->pt->stats)))
            return rc;
    }
    if (rc < 0)
        return storage_read_failure(x, rc);
    if (rc == ST_SCAN_BUDGET && sc)
        return budget_stop(x, sc, x->part_emitted, false);
    if (x->stop || x->part_skip)
        return 0;
    if (x->distinct && (had_rows || x->n_scells > 0))
        return on_row(x, NULL, 0, NULL, 0, true);
    /* Cassandra's returnStaticContentOnPartitionWithNoRows: full-partition
     * queries (no clustering or regular-column restriction) return the
     * static content of a partition without rows, nulls elsewhere. */
    if (!had_rows && x->n_scells > 0 && !x->w.ck_restricted && !x->regular_filter && x->part_emitted == 0)
        return on_row(x, NULL, 0, NULL, 0, true);
    return 0;
}

static int process_partition(cql_sx *x, st_scan *sc, const st_partition_view *pv, int32_t part_emitted)
{
    row_src src = { sc, NULL, 0 };
    return process_rows(x, &src, pv, part_emitted);
}

/*
 * Can one partition key be read with st_read_point instead of a scan, with
 * the same outcome?  The point read has no tombstone budget, so only when
 * the page's budget cannot be reached by one partition: no clustering (one
 * row), no multi-cell column (element tombstones are unbounded), and a
 * budget above every tombstone such a partition can hold (partition and
 * row deletion, row marker, one per cell, dropped columns' cells too).
 */
static bool point_read_ok(const cql_sx *x)
{
    const sch_table *t = x->t;
    if (t->n_ck != 0 || !t->st)
        return false;
    for (int i = 0; i < t->n_cols; i++)
        if (ctype_is_multicell(t->cols[i].type))
            return false;
    if (x->tomb_budget) {
        uint64_t bound = 2 * (uint64_t)(t->n_cols + t->n_dropped) + 8;
        uint64_t b = x->tomb_budget < x->tomb_hard ? x->tomb_budget : x->tomb_hard;
        if (b <= x->tombstones || b - x->tombstones <= bound)
            return false;
    }
    return true;
}

/* One partition by key through st_read_point (point_read_ok): what
 * run_scan does for it, without a scan object. */
static int run_point(cql_sx *x, st_read_spec *spec, int32_t first_part_emitted)
{
    cql_metrics_sample(x->ctx, x->t, false, spec->pk, spec->pk_len);   /* nodetool toppartitions */
    if (x->stop)
        return 0;
    /* Every regular column (whatever the selection and filters use) is
     * simple here (point_read_ok); without counters storage may read the
     * sstables newest first and stop early (st_read_spec.cover_cols). */
    const sch_table *t = x->t;
    uint32_t cover[64];
    int n_cover = 0;
    if (!t->is_counter) {
        for (int i = 0; i < t->n_cols; i++)
            if (t->cols[i].kind == COL_REGULAR) {
                if (n_cover == 64) { n_cover = 0; break; }   /* more than storage takes: a full read */
                cover[n_cover++] = t->cols[i].id;
            }
        spec->cover_cols = cover; spec->n_cover = n_cover;   /* 0: off */
    }
    st_point pt;
    int rc = st_read_point(x->t->st, spec, &x->arena, &pt);
    spec->cover_cols = NULL; spec->n_cover = 0;
    if (rc < 0)
        return storage_read_failure(x, rc);
    if (rc == 1) {
        row_src src = { NULL, &pt, 0 };
        rc = process_rows(x, &src, &pt.part, first_part_emitted);
        if (rc == 0)
            rc = check_tombstones_stats(x, &pt.stats);
        if (rc < 0 && rc != CS_EUSER)
            rc = storage_read_failure(x, rc);
    } else {
        /* no live row: its tombstones were scanned all the same (a
         * partition of deleted rows fails the read as in Cassandra) */
        rc = check_tombstones_stats(x, &pt.stats);
    }
    x->tombstones += pt.stats.tombstones;
    x->sstables_read += pt.stats.sstables_read;
    return rc > 0 ? 0 : rc;
}

static int run_scan(cql_sx *x, st_read_spec *spec, int32_t first_part_emitted)
{
    if (!x->t->st)
        return cs_error_set(x->e, CS_ERR_SERVER, "Table %s.%s has no storage", x->t->ks->name, x->t->name);
    st_scan *sc = NULL;
    if (x->tomb_budget) {
        spec->max_tombstones = scan_budget(x);
        /* Without row filters or PER PARTITION LIMIT every live row storage
         * finds is a page row: let storage itself switch to the soft budget
         * at the first one. */
        if (x->page_emitted == 0 && x->w.n_filters == 0 && x->pp_limit == INT32_MAX)
            spec->max_tombstones_live = x->tombstones < x->tomb_budget ? x->tomb_budget - x->tombstones : 1;
    }
    int rc = st_scan_open(x->t->st, spec, &sc);
    if (rc)
        return cs_error_set(x->e, CS_ERR_SERVER, "Cannot open scan: %s", cs_strerror(rc));
    if (spec->pk)   /* nodetool toppartitions (cql/metrics.c) */
        cql_metrics_sample(x->ctx, x->t, false, spec->pk, spec->pk_len);
    st_partition_view pv;
    int32_t pe = first_part_emitted;
    bool processed = false;
    while (!x->stop && (rc = st_scan_next_partition(sc, &pv)) == 1) {
        rc = process_partition(x, sc, &pv, pe);
        pe = 0;
        processed = true;
        if (rc == 0)
            rc = check_tombstones(x, sc);
        if (rc)
            break;
    }
    if (rc == 0)   /* partitions without a live row, skipped above, scanned tombstones too */
        rc = check_tombstones(x, sc);
    if (rc == ST_SCAN_BUDGET)
        rc = budget_stop(x, sc, pe, processed);   /* pe: the resumed partition's count until one is processed */
    if (rc < 0 && rc != CS_EUSER)
        rc = storage_read_failure(x, rc);
    const st_scan_stats *stt = st_scan_stats_get(sc);
    if (stt) {
        x->tombstones += stt->tombstones;
        x->sstables_read += stt->sstables_read;
    }
    st_scan_close(sc);
    return rc > 0 ? 0 : rc;
}

/*
 * Whether the read needs the partitions' static rows: Cassandra's fetched
 * static columns (ColumnFilter): all of them for `SELECT *` and for a
 * partition-level query (no clustering or regular-column restriction:
 * returnStaticContentOnPartitionWithNoRows, a partition with only static
 * content is a row), else those the selection or a filter reads.  Without
 * the static row, storage may skip the sstables whose clustering bounds
 * miss the slices (SinglePartitionReadCommand.shouldInclude includes every
 * sstable when statics are fetched: their bounds do not cover the static
 * row).
 */
static bool needs_static(const cql_sx *x)
{
    bool any = false;
    for (int i = 0; i < x->t->n_cols && !any; i++)
        any = x->t->cols[i].kind == COL_STATIC;
    if (!any)
        return false;
    if (x->sel.star || x->sel.selects_static || x->distinct)
        return true;
    if (!x->w.ck_restricted && !x->regular_filter)
        return true;
    for (int i = 0; i < x->w.n_filters; i++)
        if (x->w.filters[i].col->kind == COL_STATIC)
            return true;
    return false;
}

static void base_spec(cql_sx *x, st_read_spec *sp, const st_slice *sl, int n)
{
    memset(sp, 0, sizeof(*sp));
    if (!x->now_s)
        x->now_s = cs_now_s();
    sp->now_s = x->now_s;               /* one clock read for storage and cells_to_row */
    sp->slices = sl;
    sp->n_slices = n;
    sp->reversed = x->reversed;
    sp->include_static = needs_static(x);
}

/* Whether Cassandra reads these partitions by clustering names, in
 * timestamp order (queryMemtableAndSSTablesInTimestampOrder, traced
 * "Merging memtable contents"), rather than by slices (traced "Merged data
 * from memtables and N sstables"): every clustering column given by = or
 * IN (or none to give), not a counter table, no multi-cell column fetched
 * (a SELECT fetches every column). */
static bool names_read(const cql_sx *x)
{
    if (x->t->n_ck > 0 && !x->w.ck_all)
        return false;
    if (x->t->is_counter)
        return false;
    for (int i = 0; i < x->t->n_cols; i++)
        if (ctype_is_multicell(x->t->cols[i].type))
            return false;
    return true;
}

void cql__trace_read_counts(const cql_sx *x, uint64_t live, uint64_t tombstones)
{
    int warn = x->ctx->cfg.tombstone_warn_threshold;
    cql__trace(CQL_TRACE_READ, "Read %llu live rows and %llu tombstone cells%s", (unsigned long long)live,
               (unsigned long long)tombstones, warn > 0 && tombstones > (uint64_t)warn ? " (see tombstone_warn_threshold)" : "");
}

/* What a traced single-partition read did with the sstables holding its
 * key, in Cassandra's words and order (SinglePartitionReadCommand, the
 * sstable reader's getPosition): newest first by max timestamp; by slices,
 * the sstables that may hold tombstones are opened while the sstables are
 * selected, before the line counting the non-intersecting ones, the others
 * as the merge opens them after it. */
static void trace_probe_line(const st_sst_probe *p)
{
    unsigned long long g = (unsigned long long)p->gen;
    switch (p->outcome) {
    case ST_PROBE_BLOOM:
        cql__trace(CQL_TRACE_READ, "Bloom filter allows skipping sstable %llu", g);
        break;
    case ST_PROBE_INDEX_MISS:
        cql__trace(CQL_TRACE_READ, "Partition index lookup complete (bloom filter false positive) for sstable %llu", g);
        break;
    case ST_PROBE_FOUND:
        cql__trace(CQL_TRACE_READ, "Partition index with %u entries found for sstable %llu", p->index_entries, g);
        break;
    default:   /* not opened */
        break;
    }
}

static void trace_sstables(const cql_sx *x, st_read_trace *tr)
{
    int n = tr->n;
    st_sst_probe *p = tr->probes;
    for (int i = 1; i < n; i++) {   /* newest first (maxTimestampDescending), stable */
        st_sst_probe v = p[i];
        int j = i;
        for (; j > 0 && p[j - 1].max_ts < v.max_ts; j--) p[j] = p[j - 1];
        p[j] = v;
    }
    if (names_read(x)) {   /* timestamp order: each sstable opened in turn */
        for (int i = 0; i < n; i++)
            trace_probe_line(&p[i]);
        return;
    }
    int skipped = 0, included = 0;
    for (int i = 0; i < n; i++) {
        if (p[i].slice_miss) {
            skipped++;
            included += p[i].outcome == ST_PROBE_FOUND && p[i].deleted;
        }
        if (p[i].tombstones && p[i].outcome != ST_PROBE_SLICE)
            trace_probe_line(&p[i]);
    }
    cql__trace(CQL_TRACE_READ, "Skipped %d/%d non-slice-intersecting sstables, included %d due to tombstones",
               skipped, tr->n_ssts, included);
    for (int i = 0; i < n; i++)
        if (!p[i].tombstones && !p[i].slice_miss)
            trace_probe_line(&p[i]);
}

/* Partition keys from = / IN, optionally resuming inside one of them. */
int cql__scan_keys(cql_sx *x, const cql_pstate *ps)
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
        /* Cassandra reads each key of an IN as its own command
         * (SinglePartitionReadCommand), each traced in full; an index
         * read's base partitions as queryMemtableAndDisk does, without
         * the command's row counts */
        bool traced = cql__tracing();
        st_read_trace tr;
        uint64_t live0 = x->live_rows, tomb0 = x->tombstones, ssts0 = x->sstables_read;
        if (traced) {
            cql__trace(CQL_TRACE_READ, "Executing single-partition query on %s", x->t->name);
            cql__trace(CQL_TRACE_READ, "Acquiring sstable references");
            if (names_read(x))
                cql__trace(CQL_TRACE_READ, "Merging memtable contents");
            memset(&tr, 0, sizeof tr);
            sp.trace = &tr;
        }
        int rc = point_read_ok(x) ? run_point(x, &sp, pe) : run_scan(x, &sp, pe);
        if (rc)
            return rc;
        if (traced) {
            trace_sstables(x, &tr);
            if (!names_read(x))
                cql__trace(CQL_TRACE_READ, "Merged data from memtables and %llu sstables",
                           (unsigned long long)(x->sstables_read - ssts0));
            if (x->w.pk_all)   /* an index read's base partitions: counted once, by the read */
                cql__trace_read_counts(x, x->live_rows - live0, x->tombstones - tomb0);
        }
    }
    return 0;
}

/* Token-ordered scan (full ring or token range), optionally resuming. */
int cql__scan_range(cql_sx *x, const cql_pstate *ps)
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

typedef cql_vrow vrow;
typedef cql_vcollect vcollect;

int cql__vrow_add(void *arg, const uint8_t **vals, const int32_t *lens)
{
    vcollect *vc = arg;
    cql_sx *x = vc->x;
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
        if (lens[i] < 0) {
            r->vals[i].p = NULL;
            continue;
        }
        /* a copy of exactly len bytes, NUL-terminated for callers that print it */
        uint8_t *cp = cs_arena_alloc(&x->arena, (size_t)lens[i] + 1);
        if (!cp)
            return vc->err = CS_ENOMEM;
        if (lens[i])
            memcpy(cp, vals[i], (size_t)lens[i]);
        cp[lens[i]] = 0;
        r->vals[i].p = cp;
    }
    cql_value kv[64];
    cs_buf b;
    cs_buf_init(&b);
    for (int i = 0; i < t->n_pk && i < 64; i++)
        kv[i] = r->vals[t->pk[i] - t->cols];
    sch_partition_key(t, kv, &b);
    r->pk_len = (uint32_t)b.len;
    r->pk = cs_arena_memdup0(&x->arena, b.p, b.len);   /* (b holds exactly len bytes) */
    cs_buf_reset(&b);
    for (int i = 0; i < t->n_ck && i < 64; i++)
        kv[i] = r->vals[t->ck[i] - t->cols];
    sch_clustering_key(t, kv, t->n_ck, &b);
    r->ck_len = (uint32_t)b.len;
    r->ck = cs_arena_memdup0(&x->arena, b.p, b.len);
    cs_buf_destroy(&b);
    if (!r->pk || !r->ck)
        return vc->err = CS_ENOMEM;
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

bool cql__in_slices(const cql_where *w, const uint8_t *ck, uint32_t n)
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

static int vrow_token_cmp(const void *a, const void *b)
{
    const vrow *x = a, *y = b;
    int64_t tx = cs_murmur3_token(x->pk, x->pk_len), ty = cs_murmur3_token(y->pk, y->pk_len);
    if (tx != ty)
        return tx < ty ? -1 : 1;
    size_t n = x->pk_len < y->pk_len ? x->pk_len : y->pk_len;
    int c = memcmp(x->pk, y->pk, n);
    if (c || x->pk_len != y->pk_len)
        return c ? c : (x->pk_len < y->pk_len ? -1 : 1);
    n = x->ck_len < y->ck_len ? x->ck_len : y->ck_len;
    c = memcmp(x->ck, y->ck, n);
    return c ? c : (x->ck_len < y->ck_len ? -1 : x->ck_len > y->ck_len);
}

int cql__scan_virtual(cql_sx *x, const cql_pstate *ps)
{
    vcollect vc;
    memset(&vc, 0, sizeof(vc));
    vc.x = x;
    int rc = x->t->vtable_rows ? x->t->vtable_rows(x->ctx, (sch_table *)x->t, cql__vrow_add, &vc) : 0;
    if (rc == 0 && vc.err)
        rc = vc.err;
    if (rc) {
        cs_free(vc.rows);
        return cs_error_isset(x->e) ? CS_EUSER : cs_error_set(x->e, CS_ERR_SERVER, "virtual table read failed");
    }
    /* the computed tables of system_auth, system_traces and
     * system_distributed stand for Murmur3-partitioned tables in
     * Cassandra: ring order; `system` (LocalPartitioner) and the virtual
     * keyspaces: key order */
    bool ring = !x->t->ks->is_virtual && strcmp(x->t->ks->name, "system") != 0;
    return cql__emit_vrows(x, &vc, ps, ring);
}

/*
 * Apply the query to rows materialized in memory (virtual tables, views):
 * sort (by key value for virtual tables, Cassandra's LocalPartitioner; in
 * ring order otherwise), skip to the paging position, check the partition
 * / token / clustering restrictions and filters, emit.  Frees vc->rows.
 */
int cql__emit_vrows(cql_sx *x, cql_vcollect *pvc, const cql_pstate *ps, bool token_order)
{
    vcollect vc = *pvc;
    int rc = 0;
    g_vt = x->t;
    if (vc.n > 1)
        qsort(vc.rows, vc.n, sizeof(vrow), token_order ? vrow_token_cmp : vrow_cmp);
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
        if (x->t->n_ck && !cql__in_slices(&x->w, r->ck, r->ck_len))
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
            rc = cql__select_emit(x, &row);
    }
    cs_free(vc.rows);
    return rc;
}

