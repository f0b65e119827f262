/*
 * mutation.c: the mutation builder (st_mutation_*), its op-stream encoding
 * (which is also the commit log record payload, docs/format/commitlog.md),
 * and the reconciliation rules shared by memtables, reads and compaction
 * (docs/data-model.md; Cassandra db/rows/Cells.java, db/LivenessInfo.java).
 */
#include "storage/storage_int.h"
#include "common/alloc.h"
#include "common/err.h"

#include <string.h>

/* ---------------------------------------------------------------- ordering */

int st__bytes_cmp(const uint8_t *a, uint32_t al, const uint8_t *b, uint32_t bl)
{
    uint32_t n = al < bl ? al : bl;
    int c = n ? memcmp(a, b, n) : 0;
    if (c) return c;
    return al < bl ? -1 : al > bl ? 1 : 0;
}

int st__key_cmp(int64_t t1, const uint8_t *k1, uint32_t l1, int64_t t2, const uint8_t *k2, uint32_t l2)
{
    if (t1 != t2) return t1 < t2 ? -1 : 1;
    return st__bytes_cmp(k1, l1, k2, l2);
}

int st__cell_order(const st_cell *a, const st_cell *b)
{
    if (a->col != b->col) return a->col < b->col ? -1 : 1;
    return st__bytes_cmp(a->path, a->path_len, b->path, b->path_len);
}

/* Cassandra 4.1's Cells.reconcile (resolveRegular): the higher timestamp;
 * on a tie a tombstone or an expiring cell beats a plain live one (an
 * expiring cell too, CASSANDRA-14592, so the winner does not depend on
 * when it is reconciled), a tombstone beats an expiring cell, then the
 * later local deletion time; last the greater value. */
const st_cell *st__cell_reconcile(const st_cell *a, const st_cell *b)
{
    if (a->ts_us != b->ts_us) return a->ts_us > b->ts_us ? a : b;
    bool ad = a->flags & (ST_CELL_TOMBSTONE | ST_CELL_EXPIRING), bd = b->flags & (ST_CELL_TOMBSTONE | ST_CELL_EXPIRING);
    if (ad || bd) {
        if (ad != bd) return ad ? a : b;
        bool at = a->flags & ST_CELL_TOMBSTONE, bt = b->flags & ST_CELL_TOMBSTONE;
        if (at != bt) return at ? a : b;
        if (a->ldt_s != b->ldt_s) return a->ldt_s > b->ldt_s ? a : b;
    }
    return st__bytes_cmp(a->val, a->val_len, b->val, b->val_len) >= 0 ? a : b;
}

const st_cell *st_cell_reconcile(const st_cell *a, const st_cell *b)
{
    return st__cell_reconcile(a, b);
}

bool st_liveness_supersedes(st_liveness a, st_liveness b) { return st__lv_supersedes(a, b); }
bool st_deletion_supersedes(st_deletion a, st_deletion b) { return st__del_supersedes(a, b); }

bool st__del_supersedes(st_deletion a, st_deletion b)
{
    if (a.ts_us != b.ts_us) return a.ts_us > b.ts_us;
    return a.ldt_s > b.ldt_s;
}

st_deletion st__del_max(st_deletion a, st_deletion b)
{
    return st__del_supersedes(b, a) ? b : a;
}

/* Cassandra LivenessInfo.supersedes (simplified: expiring beats plain on a
 * tie, later expiry beats earlier). */
bool st__lv_supersedes(st_liveness a, st_liveness b)
{
    if (a.ts_us != b.ts_us) return a.ts_us > b.ts_us;
    bool ae = a.ttl_s > 0, be = b.ttl_s > 0;
    if (ae != be) return ae;
    return ae && a.ldt_s > b.ldt_s;
}

bool st__after_start(const uint8_t *ck, uint32_t n, const uint8_t *s, uint32_t sl, bool incl)
{
    if (sl == 0) return true;
    int c = st__bytes_cmp(ck, n, s, sl);
    return incl ? c >= 0 : c > 0;
}

bool st__before_end(const uint8_t *ck, uint32_t n, const uint8_t *e, uint32_t el, bool incl)
{
    if (el == 0) return true;
    int c = st__bytes_cmp(ck, n, e, el);
    return incl ? c <= 0 : c < 0;
}

bool st__rt_covers(const st__rt *rt, const uint8_t *ck, uint32_t n)
{
    return st__after_start(ck, n, rt->start, rt->start_len, rt->start_incl) &&
           st__before_end(ck, n, rt->end, rt->end_len, rt->end_incl);
}

/* ---------------------------------------------------------------- rows */

static void *xalloc(cs_arena *a, size_t n, size_t *mem)
{
    if (a) return cs_arena_alloc(a, n ? n : 1);
    if (mem) *mem += n;
    return cs_malloc(n ? n : 1);
}

static void *xdup(cs_arena *a, const void *p, size_t n, size_t *mem)
{
    if (n == 0) return NULL;
    void *q = xalloc(a, n, mem);
    if (q) memcpy(q, p, n);
    return q;
}

/* Grow an array held in a row/partition; heap or arena. */
static int grow(void **arr, int *cap, int need, size_t elsz, cs_arena *a, size_t *mem)
{
    if (need <= *cap) return 0;
    int nc = *cap ? *cap * 2 : 4;
    while (nc < need) nc *= 2;
    void *n = xalloc(a, (size_t)nc * elsz, mem);
    if (!n) return CS_ENOMEM;
    if (*cap) memcpy(n, *arr, (size_t)*cap * elsz);
    if (!a) { if (mem) *mem -= (size_t)*cap * elsz; cs_free(*arr); }
    *arr = n; *cap = nc;
    return 0;
}

/* Copy a cell's path and value into one allocation. */
static int cell_own(st_cell *dst, const st_cell *src, cs_arena *a, size_t *mem)
{
    *dst = *src;
    size_t n = (size_t)src->path_len + src->val_len;
    if (n == 0) { dst->path = NULL; dst->val = NULL; return 0; }
    uint8_t *p = xalloc(a, n, mem);
    if (!p) return CS_ENOMEM;
    if (src->path_len) memcpy(p, src->path, src->path_len);
    if (src->val_len) memcpy(p + src->path_len, src->val, src->val_len);
    dst->path = src->path_len ? p : NULL;
    dst->val = src->val_len ? p + src->path_len : NULL;
    if (!dst->path && dst->val == NULL) cs_free(p);
    return 0;
}

static void cell_unown(st_cell *c, size_t *mem)
{
    void *p = c->path ? (void *)c->path : (void *)c->val;
    if (mem) *mem -= (size_t)c->path_len + c->val_len;
    cs_free(p);
}

/* Insert or reconcile one cell into a row (cells sorted by (col, path)). */
static int row_put_cell(st__row *r, const st_cell *c, cs_arena *a, size_t *mem)
{
    int lo = 0, hi = r->n_cells;
    if (hi > 0 && st__cell_order(&r->cells[hi - 1], c) < 0) lo = hi;   /* append fast path */
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        int o = st__cell_order(&r->cells[mid], c);
        if (o == 0) {
            if (st__cell_reconcile(&r->cells[mid], c) == &r->cells[mid]) return 0;
            st_cell nc;
            if (cell_own(&nc, c, a, mem)) return CS_ENOMEM;
            if (!a) cell_unown(&r->cells[mid], mem);
            r->cells[mid] = nc;
            return 0;
        }
        if (o < 0) lo = mid + 1; else hi = mid;
    }
    if (grow((void **)&r->cells, &r->cap_cells, r->n_cells + 1, sizeof(st_cell), a, mem)) return CS_ENOMEM;
    st_cell nc;
    if (cell_own(&nc, c, a, mem)) return CS_ENOMEM;
    memmove(&r->cells[lo + 1], &r->cells[lo], (size_t)(r->n_cells - lo) * sizeof(st_cell));
    r->cells[lo] = nc;
    r->n_cells++;
    return 0;
}

static int row_put_cdel(st__row *r, uint32_t col, st_deletion d, cs_arena *a, size_t *mem)
{
    for (int i = 0; i < r->n_cdels; i++)
        if (r->cdels[i].col == col) { r->cdels[i].d = st__del_max(r->cdels[i].d, d); return 0; }
    if (grow((void **)&r->cdels, &r->cap_cdels, r->n_cdels + 1, sizeof(st__cdel), a, mem)) return CS_ENOMEM;
    r->cdels[r->n_cdels].col = col;
    r->cdels[r->n_cdels].d = d;
    r->n_cdels++;
    return 0;
}

int st__row_merge(st__row *dst, const st__row *src, cs_arena *a, size_t *mem)
{
    if (src->lv.ts_us != INT64_MIN && (dst->lv.ts_us == INT64_MIN || st__lv_supersedes(src->lv, dst->lv)))
        dst->lv = src->lv;
    if (src->del.ts_us != INT64_MIN) dst->del = st__del_max(dst->del, src->del);
    for (int i = 0; i < src->n_cdels; i++)
        if (row_put_cdel(dst, src->cdels[i].col, src->cdels[i].d, a, mem)) return CS_ENOMEM;
    for (int i = 0; i < src->n_cells; i++)
        if (row_put_cell(dst, &src->cells[i], a, mem)) return CS_ENOMEM;
    return 0;
}

st__row *st__row_copy(const st__row *src, cs_arena *a)
{
    st__row *r = cs_arena_zalloc(a, sizeof *r);
    if (!r) return NULL;
    r->ck = src->ck_len ? cs_arena_memdup(a, src->ck, src->ck_len) : NULL;
    r->ck_len = src->ck_len;
    r->flags = src->flags;
    r->lv = src->lv;
    r->del = src->del;
    if (src->n_cdels) {
        r->cdels = cs_arena_memdup(a, src->cdels, (size_t)src->n_cdels * sizeof(st__cdel));
        r->n_cdels = r->cap_cdels = src->n_cdels;
    }
    if (src->n_cells) {
        r->cells = cs_arena_alloc(a, (size_t)src->n_cells * sizeof(st_cell));
        if (!r->cells) return NULL;
        for (int i = 0; i < src->n_cells; i++)
            if (cell_own(&r->cells[i], &src->cells[i], a, NULL)) return NULL;
        r->n_cells = r->cap_cells = src->n_cells;
    }
    return a->err ? NULL : r;
}

void st__row_free_heap(st__row *r)
{
    if (!r) return;
    for (int i = 0; i < r->n_cells; i++) cell_unown(&r->cells[i], NULL);
    cs_free(r->cells);
    cs_free(r->cdels);
    cs_free(r);   /* ck is allocated inline after the struct */
}

int st__part_add_rt(st__part *p, const st__rt *rt, cs_arena *a)
{
    if (grow((void **)&p->rts, &p->cap_rts, p->n_rts + 1, sizeof(st__rt), a, NULL)) return CS_ENOMEM;
    st__rt *d = &p->rts[p->n_rts];
    *d = *rt;
    d->start = xdup(a, rt->start, rt->start_len, NULL);
    d->end = xdup(a, rt->end, rt->end_len, NULL);
    if (a->err) return CS_ENOMEM;
    p->n_rts++;
    return 0;
}

int st__part_add_row(st__part *p, st__row *r, cs_arena *a)
{
    if (grow((void **)&p->rows, &p->cap_rows, p->n_rows + 1, sizeof(st__row *), a, NULL)) return CS_ENOMEM;
    p->rows[p->n_rows++] = r;
    return 0;
}

/* ---------------------------------------------------------------- builder */

st_mutation *st_mutation_new(void)
{
    st_mutation *m = cs_calloc(1, sizeof *m);
    if (!m) return NULL;
    cs_buf_init(&m->ops);
    cs_buf_reserve(&m->ops, 256);   /* one allocation for a typical row, not 64 -> 128 -> 256 */
    return m;
}

void st_mutation_free(st_mutation *m)
{
    if (!m) return;
    cs_buf_destroy(&m->ops);
    cs_free(m->tables);
    cs_free(m->parts);
    cs_free(m->rows);
    cs_free(m);
}

void st_mutation_reset(st_mutation *m)
{
    if (!m) return;
    if (m->ops.cap > 65536 || m->ops.err) {   /* a big batch's buffer is not kept */
        cs_buf_destroy(&m->ops);
        cs_buf_init(&m->ops);
        cs_buf_reserve(&m->ops, 256);
    }
    m->ops.len = 0;
    if (m->cap_tables > 64) {
        cs_free(m->tables);
        m->tables = NULL;
        m->cap_tables = 0;
    }
    m->n_tables = 0;
    m->err = 0;
    m->in_part = m->in_row = false;
    m->n_ops = 0;
    if (m->cap_parts > 1024) { cs_free(m->parts); m->parts = NULL; m->cap_parts = 0; }
    if (m->cap_rows > 1024) { cs_free(m->rows); m->rows = NULL; m->cap_rows = 0; }
    m->n_parts = m->n_rows = 0;
    m->in_run = m->side_off = false;
}

bool st_mutation_empty(const st_mutation *m) { return !m || m->n_ops == 0; }

static void put_del(cs_buf *b, st_deletion d)
{
    cs_buf_put_svarint(b, d.ts_us);
    cs_buf_put_svarint(b, d.ldt_s);
}

static void put_bytes(cs_buf *b, const uint8_t *p, uint32_t n)
{
    cs_buf_put_uvarint(b, n);
    if (n) cs_buf_put(b, p, n);
}

/* Side info (storage_int.h st__mrow): an entry per PARTITION and ROW op,
 * and each ROW op's run measured as its ops are written.  Without memory
 * for an entry the side info is dropped (side_off) and apply decodes. */
static bool side_grow(void **arr, uint32_t *cap, uint32_t n, size_t elsz)
{
    if (n < *cap) return true;
    uint32_t nc = *cap ? *cap * 2 : 4;
    void *p = cs_realloc(*arr, (size_t)nc * elsz);
    if (!p) return false;
    *arr = p;
    *cap = nc;
    return true;
}

/* The PARTITION op (key pk_len bytes) was just written. */
static void side_part(st_mutation *m, st_table *t, uint32_t pk_len)
{
    m->in_run = false;
    if (m->side_off) return;
    if (m->ops.len > UINT32_MAX ||
        !side_grow((void **)&m->parts, &m->cap_parts, m->n_parts, sizeof *m->parts)) { m->side_off = true; return; }
    m->parts[m->n_parts++] = (st__mpart){ .t = t, .body = (uint32_t)m->ops.len, .pk_len = pk_len,
                                          .row0 = m->n_rows, .n_rows = 0 };
}

/* The ROW op (clustering ck_len bytes) was just written. */
static void side_row(st_mutation *m, uint32_t ck_len, uint8_t flags)
{
    m->in_run = false;
    if (m->side_off) return;
    if (m->ops.len > UINT32_MAX ||
        !side_grow((void **)&m->rows, &m->cap_rows, m->n_rows, sizeof *m->rows)) { m->side_off = true; return; }
    m->rows[m->n_rows++] = (st__mrow){ .run0 = (uint32_t)m->ops.len, .ck_len = ck_len, .flags = flags,
                                       .min_ts = INT64_MAX };
    m->parts[m->n_parts - 1].n_rows++;
    m->in_run = true;
}

/* A row-level op with timestamp ts (INT64_MIN: none) was just written. */
static inline __attribute__((always_inline)) void side_run(st_mutation *m, int64_t ts, bool cell)
{
    if (!m->in_run) return;
    st__mrow *r = &m->rows[m->n_rows - 1];
    size_t len = m->ops.len - r->run0;
    if (len > UINT32_MAX - 1) { m->side_off = true; m->in_run = false; return; }
    r->ops_len = (uint32_t)len;
    r->n_cells += cell;
    if (ts != INT64_MIN && ts < r->min_ts) r->min_ts = ts;
}

void st_mut_partition(st_mutation *m, st_table *t, const uint8_t *pk, uint32_t pk_len)
{
    if (!m || m->err) return;
    if (!t || (!pk && pk_len)) { m->err = CS_EINVAL; return; }
    if (m->n_tables == 0 || m->tables[m->n_tables - 1] != t) {
        if (m->n_tables == m->cap_tables) {
            int nc = m->cap_tables ? m->cap_tables * 2 : 4;
            st_table **n = cs_realloc(m->tables, (size_t)nc * sizeof *n);
            if (!n) { m->err = CS_ENOMEM; return; }
            m->tables = n; m->cap_tables = nc;
        }
        m->tables[m->n_tables++] = t;
    }
    cs_buf_put_u8(&m->ops, ST__OP_PARTITION);
    cs_buf_put(&m->ops, t->id, 16);
    put_bytes(&m->ops, pk, pk_len);
    m->in_part = true; m->in_row = false;
    m->n_ops++;
    side_part(m, t, pk_len);
}

void st_mut_partition_delete(st_mutation *m, st_deletion d)
{
    if (!m || m->err) return;
    if (!m->in_part) { m->err = CS_EINVAL; return; }
    cs_buf_put_u8(&m->ops, ST__OP_PDEL);
    put_del(&m->ops, d);
    m->n_ops++;
    m->in_run = false;
}

void st_mut_range_delete(st_mutation *m, st_bound start, st_bound end, st_deletion d)
{
    if (!m || m->err) return;
    if (!m->in_part || (!start.key && start.len) || (!end.key && end.len)) { m->err = CS_EINVAL; return; }
    cs_buf_put_u8(&m->ops, ST__OP_RT);
    cs_buf_put_u8(&m->ops, (uint8_t)((start.inclusive ? 1 : 0) | (end.inclusive ? 2 : 0)));
    put_bytes(&m->ops, start.key, start.len);
    put_bytes(&m->ops, end.key, end.len);
    put_del(&m->ops, d);
    m->n_ops++;
    m->in_run = false;
}

void st_mut_row(st_mutation *m, const uint8_t *ck, uint32_t ck_len, uint8_t flags)
{
    if (!m || m->err) return;
    if (!m->in_part || (!ck && ck_len) || ((flags & ST_ROW_STATIC) && ck_len)) { m->err = CS_EINVAL; return; }
    cs_buf_put_u8(&m->ops, ST__OP_ROW);
    cs_buf_put_u8(&m->ops, flags);
    put_bytes(&m->ops, ck, ck_len);
    m->in_row = true;
    m->n_ops++;
    side_row(m, ck_len, flags);
}

void st_mut_row_liveness(st_mutation *m, st_liveness l)
{
    if (!m || m->err) return;
    if (!m->in_row) { m->err = CS_EINVAL; return; }
    cs_buf_put_u8(&m->ops, ST__OP_LIVENESS);
    cs_buf_put_svarint(&m->ops, l.ts_us);
    cs_buf_put_svarint(&m->ops, l.ttl_s);
    cs_buf_put_svarint(&m->ops, l.ldt_s);
    m->n_ops++;
    side_run(m, l.ts_us, false);
}

void st_mut_row_delete(st_mutation *m, st_deletion d)
{
    if (!m || m->err) return;
    if (!m->in_row) { m->err = CS_EINVAL; return; }
    cs_buf_put_u8(&m->ops, ST__OP_ROWDEL);
    put_del(&m->ops, d);
    m->n_ops++;
    side_run(m, d.ts_us, false);
}

void st_mut_complex_delete(st_mutation *m, uint32_t col, st_deletion d)
{
    if (!m || m->err) return;
    if (!m->in_row) { m->err = CS_EINVAL; return; }
    cs_buf_put_u8(&m->ops, ST__OP_CDEL);
    cs_buf_put_uvarint(&m->ops, col);
    put_del(&m->ops, d);
    m->n_ops++;
    side_run(m, d.ts_us, false);
}

void st_mut_cell(st_mutation *m, const st_cell *c)
{
    if (!m || m->err) return;
    if (!m->in_row || !c || (!c->val && c->val_len) || (!c->path && c->path_len)) { m->err = CS_EINVAL; return; }
    cs_buf_put_u8(&m->ops, ST__OP_CELL);
    cs_buf_put_uvarint(&m->ops, c->col);
    cs_buf_put_u8(&m->ops, c->flags);
    cs_buf_put_svarint(&m->ops, c->ts_us);
    cs_buf_put_svarint(&m->ops, c->ttl_s);
    cs_buf_put_svarint(&m->ops, c->ldt_s);
    put_bytes(&m->ops, c->path, c->path_len);
    put_bytes(&m->ops, c->val, c->val_len);
    m->n_ops++;
    side_run(m, c->ts_us, true);
}

/* ---------------------------------------------------------------- decoding */

/* Inline readers for the op stream's hot path (every write decodes its ops
 * at least once): same results and errors as cs_rd_u8 / cs_rd_uvarint /
 * cs_rd_svarint, without a call per byte. */
static inline uint8_t rd_u8(cs_rd *r)
{
    if (r->err || r->pos >= r->len) { r->err = CS_ECORRUPT; return 0; }
    return r->p[r->pos++];
}

static inline uint64_t rd_uv(cs_rd *r)
{
    if (r->err) return 0;
    const uint8_t *p = r->p + r->pos, *end = r->p + r->len;
    uint64_t v = 0;
    for (int shift = 0; shift < 70 && p < end; shift += 7) {
        uint8_t b = *p++;
        if (shift == 63 && (b & 0x7E)) break;
        v |= (uint64_t)(b & 0x7F) << shift;
        if (!(b & 0x80)) {
            r->pos = (size_t)(p - r->p);
            return v;
        }
    }
    r->err = CS_ECORRUPT;
    return 0;
}

static inline int64_t rd_sv(cs_rd *r)
{
    uint64_t u = rd_uv(r);
    return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

#define RD_INLINE static inline __attribute__((always_inline))

RD_INLINE const uint8_t *rd_bytes(cs_rd *r, uint32_t *n)
{
    uint64_t l = rd_uv(r);
    if (r->err || l > cs_rd_left(r)) { r->err = CS_ECORRUPT; *n = 0; return NULL; }
    *n = (uint32_t)l;
    if (!l) return NULL;
    const uint8_t *q = r->p + r->pos;
    r->pos += (size_t)l;
    return q;
}

RD_INLINE st_deletion rd_del(cs_rd *r)
{
    st_deletion d;
    d.ts_us = rd_sv(r);
    int64_t l = rd_sv(r);
    if (l < INT32_MIN || l > INT32_MAX) r->err = CS_ECORRUPT;
    d.ldt_s = (int32_t)l;
    return d;
}

RD_INLINE int32_t rd_i32(cs_rd *r)
{
    int64_t v = rd_sv(r);
    if (v < INT32_MIN || v > INT32_MAX) r->err = CS_ECORRUPT;
    return (int32_t)v;
}

/* Only the fields of op->kind are written (every write decodes its ops at
 * least once: zeroing the whole ~200-byte op each time cost more than
 * decoding a small op); callers read those alone. */
int st__op_next(cs_rd *r, st__op *op)
{
    if (cs_rd_left(r) == 0) return r->err ? CS_ECORRUPT : 0;
    op->kind = rd_u8(r);
    switch (op->kind) {
    case ST__OP_PARTITION:
        op->id = cs_rd_take(r, 16);
        op->pk = rd_bytes(r, &op->pk_len);
        break;
    case ST__OP_PDEL:
    case ST__OP_ROWDEL:
        op->d = rd_del(r);
        break;
    case ST__OP_RT: {
        uint8_t f = rd_u8(r);
        op->rt.start_incl = f & 1;
        op->rt.end_incl = (f & 2) != 0;
        op->rt.start = rd_bytes(r, &op->rt.start_len);
        op->rt.end = rd_bytes(r, &op->rt.end_len);
        op->rt.d = rd_del(r);
        break;
    }
    case ST__OP_ROW:
        op->rflags = rd_u8(r);
        op->ck = rd_bytes(r, &op->ck_len);
        /* ST_ROW_STATIC is the only flag, and a static row has no
         * clustering: anything else no writer made (the memtable would keep
         * bits a flush drops). */
        if ((op->rflags & ~ST_ROW_STATIC) || ((op->rflags & ST_ROW_STATIC) && op->ck_len))
            r->err = CS_ECORRUPT;
        break;
    case ST__OP_LIVENESS:
        op->lv.ts_us = rd_sv(r);
        op->lv.ttl_s = rd_i32(r);
        op->lv.ldt_s = rd_i32(r);
        break;
    case ST__OP_CDEL: {
        uint64_t c = rd_uv(r);
        if (c > UINT32_MAX) r->err = CS_ECORRUPT;
        op->col = (uint32_t)c;
        op->d = rd_del(r);
        break;
    }
    case ST__OP_CELL: {
        uint64_t c = rd_uv(r);
        if (c > UINT32_MAX) r->err = CS_ECORRUPT;
        op->cell.col = (uint32_t)c;
        op->cell.flags = rd_u8(r);
        op->cell.ts_us = rd_sv(r);
        op->cell.ttl_s = rd_i32(r);
        op->cell.ldt_s = rd_i32(r);
        op->cell.path = rd_bytes(r, &op->cell.path_len);
        op->cell.val = rd_bytes(r, &op->cell.val_len);
        break;
    }
    default:
        return CS_ECORRUPT;
    }
    return r->err ? CS_ECORRUPT : 1;
}
