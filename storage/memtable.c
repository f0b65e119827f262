/*
 * memtable.c: the in-memory write buffer of one table.
 *
 * A memtable is a B+tree of partitions ordered by (token, key bytes); each
 * partition holds its deletion, range tombstones, static row and a B+tree
 * of rows ordered by clustering bytes.  Writes reconcile in place (so a
 * memtable holds at most one version of each cell).  Every byte allocated
 * for data is counted in `mem`, which drives flushing and back-pressure.
 *
 * Locking: one rwlock per memtable.  mt_apply takes it for writing for one
 * partition update (so readers see a partition update all or nothing);
 * readers copy what they need into their arena under the read lock.
 * Lifetime: reference counted; the engine holds one reference while the
 * memtable is active or being flushed, each scan holds one.
 * Memory: partitions, rows, cells and tree nodes come from the memtable's
 * slab (a bump arena written under the write lock) and are freed all at
 * once with it: no per-object free when a flushed memtable dies (which, done
 * on the flush thread, used to contend with the request loop's mallocs on
 * the allocator's lock), and no malloc per write.  An overwritten cell's old
 * value stays in the slab until the flush (Cassandra's slab allocator does
 * the same); `mem` counts the slab's bytes, so it still drives flushing.
 */
#include "storage/storage_int.h"
#include "common/alloc.h"
#include "common/err.h"

#include <string.h>

static int part_cmp(const void *a, const void *b)
{
    const mt_partition *x = a, *y = b;
    return st__key_cmp(x->token, x->pk, x->pk_len, y->token, y->pk, y->pk_len);
}

/* Token as an unsigned key with the same order (see st__btree_hint). */
static uint64_t part_hint(const void *a)
{
    return (uint64_t)((const mt_partition *)a)->token ^ 0x8000000000000000ull;
}

static int row_cmp(const void *a, const void *b)
{
    const st__row *x = a, *y = b;
    return st__bytes_cmp(x->ck, x->ck_len, y->ck, y->ck_len);
}

mt_memtable *mt_new(void)
{
    mt_memtable *m = cs_calloc(1, sizeof *m);
    if (!m) return NULL;
    pthread_rwlock_init(&m->lock, NULL);
    cs_arena_init(&m->slab);
    cs_arena_set_chunk_max(&m->slab, 1u << 20);   /* big memtables: few, mmap-sized chunks */
    st__btree_init_hint(&m->parts, part_cmp, part_hint);
    m->parts.arena = &m->slab;
    atomic_init(&m->mem, 0);
    atomic_init(&m->refs, 1);
    m->min_ts = INT64_MAX;
    m->first_pos.segment = UINT64_MAX;
    return m;
}

void mt_ref(mt_memtable *m) { atomic_fetch_add(&m->refs, 1); }

/* Everything but the range tombstones lives in the slab. */
static void part_free(void *p)
{
    mt_partition *mp = p;
    for (int i = 0; i < mp->n_rts; i++) {
        cs_free((void *)mp->rts[i].start);
        cs_free((void *)mp->rts[i].end);
    }
    cs_free(mp->rts);
}

void mt_unref(mt_memtable *m)
{
    if (!m || atomic_fetch_sub(&m->refs, 1) != 1) return;
    if (m->has_rts) st__btree_destroy(&m->parts, part_free);
    cs_arena_destroy(&m->slab);
    pthread_rwlock_destroy(&m->lock);
    cs_free(m);
}

static st__row *row_new(cs_arena *slab, const uint8_t *ck, uint32_t n, uint8_t flags)
{
    st__row *r = cs_arena_zalloc(slab, sizeof *r + n);
    if (!r) return NULL;
    if (n) { memcpy(r + 1, ck, n); r->ck = (const uint8_t *)(r + 1); }
    r->ck_len = n;
    r->flags = flags;
    r->lv.ts_us = INT64_MIN;
    r->del = ST_NO_DELETION;
    return r;
}

static int add_rt(mt_partition *p, const st__rt *rt, size_t *mem)
{
    if (p->n_rts == p->cap_rts) {
        int nc = p->cap_rts ? p->cap_rts * 2 : 2;
        st__rt *n = cs_realloc(p->rts, (size_t)nc * sizeof *n);
        if (!n) return CS_ENOMEM;
        *mem += (size_t)(nc - p->cap_rts) * sizeof *n;
        p->rts = n; p->cap_rts = nc;
    }
    st__rt d = *rt;
    d.start = rt->start_len ? cs_memdup(rt->start, rt->start_len) : NULL;
    d.end = rt->end_len ? cs_memdup(rt->end, rt->end_len) : NULL;
    if ((rt->start_len && !d.start) || (rt->end_len && !d.end)) {
        cs_free((void *)d.start); cs_free((void *)d.end);
        return CS_ENOMEM;
    }
    *mem += rt->start_len + rt->end_len;
    p->rts[p->n_rts++] = d;
    return 0;
}

static void note_ts(mt_memtable *m, int64_t ts)
{
    if (ts != INT64_MIN && ts < atomic_load_explicit(&m->min_ts, memory_order_relaxed))
        atomic_store_explicit(&m->min_ts, ts, memory_order_relaxed);
}

/* Apply the ops of one partition update.  The stream r is positioned just
 * after the PARTITION op; stops before the next PARTITION op. */
int mt_apply(mt_memtable *m, int64_t token, const uint8_t *pk, uint32_t pk_len, cs_rd *r, size_t *added)
{
    size_t mem = 0;
    int rc = 0;
    pthread_rwlock_wrlock(&m->lock);
    size_t slab0 = m->slab.used;
    mt_partition probe = { .token = token, .pk = (uint8_t *)pk, .pk_len = pk_len };
    mt_partition *p = st__btree_get(&m->parts, &probe);
    if (!p) {
        p = cs_arena_zalloc(&m->slab, sizeof *p + pk_len);
        if (!p) { rc = CS_ENOMEM; goto out; }
        p->token = token;
        p->pk = (uint8_t *)(p + 1);
        if (pk_len) memcpy(p->pk, pk, pk_len);
        p->pk_len = pk_len;
        p->pdel = ST_NO_DELETION;
        st__btree_init(&p->rows, row_cmp);
        p->rows.arena = &m->slab;
        if (st__btree_insert(&m->parts, p)) { rc = CS_ENOMEM; goto out; }
    }
    st__row *row = NULL;
    for (;;) {
        if (cs_rd_left(r) == 0) break;
        if (r->p[r->pos] == ST__OP_PARTITION) break;
        st__op op;
        int k = st__op_next(r, &op);
        if (k < 0) { rc = k; break; }
        if (k == 0) break;
        switch (op.kind) {
        case ST__OP_PDEL:
            p->pdel = st__del_max(p->pdel, op.d);
            note_ts(m, op.d.ts_us);
            break;
        case ST__OP_RT:
            rc = add_rt(p, &op.rt, &mem);
            m->has_rts = true;
            note_ts(m, op.rt.d.ts_us);
            break;
        case ST__OP_ROW:
            if (op.rflags & ST_ROW_STATIC) {
                if (!p->stat) {
                    p->stat = row_new(&m->slab, NULL, 0, ST_ROW_STATIC);
                    if (!p->stat) { rc = CS_ENOMEM; break; }
                }
                row = p->stat;
            } else {
                st__row rp = { .ck = op.ck, .ck_len = op.ck_len };
                row = st__btree_get(&p->rows, &rp);
                if (!row) {
                    row = row_new(&m->slab, op.ck, op.ck_len, op.rflags);
                    if (!row) { rc = CS_ENOMEM; break; }
                    if (st__btree_insert(&p->rows, row)) { row = NULL; rc = CS_ENOMEM; break; }
                    m->n_rows++;
                }
            }
            break;
        case ST__OP_LIVENESS:
        case ST__OP_ROWDEL:
        case ST__OP_CDEL:
        case ST__OP_CELL: {
            if (!row) { rc = CS_ECORRUPT; break; }
            st__row one = { .lv = { INT64_MIN, 0, 0 }, .del = ST_NO_DELETION };
            st__cdel cd;
            if (op.kind == ST__OP_LIVENESS) { one.lv = op.lv; note_ts(m, op.lv.ts_us); }
            else if (op.kind == ST__OP_ROWDEL) { one.del = op.d; note_ts(m, op.d.ts_us); }
            else if (op.kind == ST__OP_CDEL) {
                cd.col = op.col; cd.d = op.d;
                one.cdels = &cd; one.n_cdels = 1;
                note_ts(m, op.d.ts_us);
            } else {
                one.cells = &op.cell; one.n_cells = 1;
                note_ts(m, op.cell.ts_us);
                m->cells++;
            }
            rc = st__row_merge(row, &one, &m->slab, NULL);
            break;
        }
        default:
            rc = CS_ECORRUPT;
        }
        if (rc) break;
    }
out:
    mem += m->slab.used - slab0;
    pthread_rwlock_unlock(&m->lock);
    atomic_fetch_add(&m->mem, mem);
    *added = mem;
    return rc;
}

/* Copy rows of one slice (start..end) into p. */
static int copy_slice(mt_partition *mp, const st_slice *s, st__part *p, cs_arena *a)
{
    st__biter it;
    if (s && s->start.len) {
        st__row probe = { .ck = s->start.key, .ck_len = s->start.len };
        st__btree_seek(&mp->rows, &probe, !s->start.inclusive, &it);
    } else {
        st__btree_seek(&mp->rows, NULL, false, &it);
    }
    for (st__row *r; (r = st__biter_get(&it)) != NULL; st__biter_next(&it)) {
        if (s && !st__before_end(r->ck, r->ck_len, s->end.key, s->end.len, s->end.inclusive)) break;
        st__row *c = st__row_copy(r, a);
        if (!c || st__part_add_row(p, c, a)) return CS_ENOMEM;
    }
    return 0;
}

int mt_read_partition(mt_memtable *m, int64_t token, const uint8_t *pk, uint32_t pk_len,
                      const st_slice *slices, int n_slices, st__part *p, cs_arena *a)
{
    int rc = 1;
    pthread_rwlock_rdlock(&m->lock);
    mt_partition probe = { .token = token, .pk = (uint8_t *)pk, .pk_len = pk_len };
    mt_partition *mp = st__btree_get(&m->parts, &probe);
    if (!mp) { rc = 0; goto out; }
    memset(p, 0, sizeof *p);
    p->pk = mp->pk_len ? cs_arena_memdup(a, mp->pk, mp->pk_len) : cs_arena_alloc(a, 1);
    p->pk_len = mp->pk_len;
    p->token = mp->token;
    p->pdel = mp->pdel;
    for (int i = 0; i < mp->n_rts; i++)
        if (st__part_add_rt(p, &mp->rts[i], a)) { rc = CS_ENOMEM; goto out; }
    if (mp->stat) {
        p->stat = st__row_copy(mp->stat, a);
        if (!p->stat) { rc = CS_ENOMEM; goto out; }
    }
    if (n_slices == 0) {
        if (copy_slice(mp, NULL, p, a)) rc = CS_ENOMEM;
    } else {
        for (int i = 0; i < n_slices && rc == 1; i++)
            if (copy_slice(mp, &slices[i], p, a)) rc = CS_ENOMEM;
    }
out:
    pthread_rwlock_unlock(&m->lock);
    return rc;
}

int mt_next_key(mt_memtable *m, int64_t token, const uint8_t *key, uint32_t klen, bool incl,
                int64_t end_token, int64_t *out_token, const uint8_t **out_key, uint32_t *out_len,
                cs_arena *a)
{
    int rc = 0;
    pthread_rwlock_rdlock(&m->lock);
    mt_partition probe = { .token = token, .pk = (uint8_t *)key, .pk_len = key ? klen : 0 };
    st__biter it;
    st__btree_seek(&m->parts, &probe, key ? !incl : false, &it);
    mt_partition *mp = st__biter_get(&it);
    if (mp && mp->token <= end_token) {
        *out_token = mp->token;
        *out_key = mp->pk_len ? cs_arena_memdup(a, mp->pk, mp->pk_len) : cs_arena_alloc(a, 1);
        *out_len = mp->pk_len;
        rc = *out_key ? 1 : CS_ENOMEM;
    }
    pthread_rwlock_unlock(&m->lock);
    return rc;
}

size_t mt_partitions(mt_memtable *m)
{
    pthread_rwlock_rdlock(&m->lock);
    size_t n = m->parts.count;
    pthread_rwlock_unlock(&m->lock);
    return n;
}

/* Consistency check for tests and tools: both trees ordered, rows' cells
 * sorted and unique. */
int mt_check(mt_memtable *m)
{
    int rc = 0;
    pthread_rwlock_rdlock(&m->lock);
    if (st__btree_check(&m->parts)) rc = CS_ECORRUPT;
    st__biter it;
    st__btree_seek(&m->parts, NULL, false, &it);
    for (mt_partition *p; rc == 0 && (p = st__biter_get(&it)) != NULL; st__biter_next(&it)) {
        if (st__btree_check(&p->rows)) { rc = CS_ECORRUPT; break; }
        st__biter ri;
        st__btree_seek(&p->rows, NULL, false, &ri);
        for (st__row *r; (r = st__biter_get(&ri)) != NULL; st__biter_next(&ri))
            for (int i = 1; i < r->n_cells; i++)
                if (st__cell_order(&r->cells[i - 1], &r->cells[i]) >= 0) rc = CS_ECORRUPT;
    }
    pthread_rwlock_unlock(&m->lock);
    return rc;
}

/* Call cb for every partition in order with a view that borrows the
 * memtable's memory (rows array in arena a, reset by the caller's cb if it
 * wishes).  Used by flush on a memtable no longer written to. */
int mt_foreach(mt_memtable *m, int (*cb)(st__part *p, void *arg), void *arg)
{
    int rc = 0;
    pthread_rwlock_rdlock(&m->lock);
    st__biter it;
    st__btree_seek(&m->parts, NULL, false, &it);
    for (mt_partition *mp; rc == 0 && (mp = st__biter_get(&it)) != NULL; st__biter_next(&it)) {
        cs_arena a;
        cs_arena_init(&a);
        st__part p;
        memset(&p, 0, sizeof p);
        p.pk = mp->pk; p.pk_len = mp->pk_len; p.token = mp->token;
        p.pdel = mp->pdel;
        p.rts = mp->rts; p.n_rts = p.cap_rts = mp->n_rts;
        p.stat = mp->stat;
        if (mp->rows.count) {
            p.rows = cs_arena_alloc(&a, sizeof(st__row *) * mp->rows.count);
            if (!p.rows) rc = CS_ENOMEM;
            st__biter ri;
            st__btree_seek(&mp->rows, NULL, false, &ri);
            for (st__row *r; p.rows && (r = st__biter_get(&ri)) != NULL; st__biter_next(&ri)) p.rows[p.n_rows++] = r;
            p.cap_rows = p.n_rows;
        }
        if (!rc) rc = cb(&p, arg);
        cs_arena_destroy(&a);
    }
    pthread_rwlock_unlock(&m->lock);
    return rc;
}
