/*
 * picture.c: the partition picture (see picture.h).  The partition table
 * holds 40-byte entries without keys, the row set 64-bit hashes; both are
 * open-addressing tables on huge pages, updated in prefetched batches
 * (flush).  docs/bench.md, "Client cost".
 */
#include "bench/picture.h"
#include "common/alloc.h"
#include "common/hash.h"
#include <math.h>
#include <string.h>
#include <sys/mman.h>

/* ------------------------------------------------------------ tables */

/* A zeroed table, on huge pages when big: its slots are touched at random,
 * so 4 KiB pages cost a fault per page when it grows and a TLB miss per
 * lookup.  Only the 2 MiB-aligned interior is advised (before the zeroing
 * touches it); if the kernel says no, it is an ordinary table. */
static void *table_alloc(size_t n)
{
    uint8_t *p = cs_malloc(n ? n : 1);
    if (!p)
        return NULL;
    const uintptr_t huge = 2u << 20;
    uintptr_t a = ((uintptr_t)p + huge - 1) & ~(huge - 1), b = ((uintptr_t)p + n) & ~(huge - 1);
    if (n >= 4 * huge && b > a)
        madvise((void *)a, b - a, MADV_HUGEPAGE);
    memset(p, 0, n);
    return p;
}

/* Move the partition table into a zeroed table of nc slots (a power of two). */
static void parts_resize(bench_picture *pic, size_t nc)
{
    part_stat *np = table_alloc(nc * sizeof(*np));
    for (size_t i = 0; i < pic->parts_cap; i++) {
        if (!pic->parts[i].hash) continue;
        size_t j = pic->parts[i].hash & (nc - 1);
        while (np[j].hash) j = (j + 1) & (nc - 1);
        np[j] = pic->parts[i];
    }
    cs_free(pic->parts);
    pic->parts = np;
    pic->parts_cap = nc;
}

static void parts_grow(bench_picture *pic)
{
    parts_resize(pic, pic->parts_cap ? pic->parts_cap * 2 : 1024);
}

void bench_picture_reserve(bench_picture *pic, size_t n)
{
    size_t nc = pic->parts_cap ? pic->parts_cap : 1024;
    while (nc < 2 * n + 2)
        nc *= 2;
    if (nc > pic->parts_cap)
        parts_resize(pic, nc);   /* one table, not every doubling on the way */
}

static part_stat *part_get(bench_picture *pic, uint64_t h, const uint8_t *key, uint32_t klen)
{
    if (!h) h = 1;
    if ((pic->n_parts + 1) * 2 > pic->parts_cap)
        parts_grow(pic);
    size_t j = h & (pic->parts_cap - 1);
    while (pic->parts[j].hash && pic->parts[j].hash != h)
        j = (j + 1) & (pic->parts_cap - 1);
    if (!pic->parts[j].hash) {
        pic->parts[j].hash = h;
        pic->parts[j].token = cs_murmur3_token(key, klen);
        pic->n_parts++;
    }
    return &pic->parts[j];
}

static void rowset_grow(bench_picture *pic)
{
    size_t nc = pic->rowset_cap ? pic->rowset_cap * 2 : 4096;
    uint64_t *ns = table_alloc(nc * sizeof(uint64_t));
    for (size_t i = 0; i < pic->rowset_cap; i++) {
        if (!pic->rowset[i]) continue;
        size_t j = pic->rowset[i] & (nc - 1);
        while (ns[j]) j = (j + 1) & (nc - 1);
        ns[j] = pic->rowset[i];
    }
    cs_free(pic->rowset);
    pic->rowset = ns;
    pic->rowset_cap = nc;
}

/* Returns true if the (partition, row) pair is new. */
static bool rowset_add(bench_picture *pic, uint64_t h)
{
    if (!h) h = 1;
    if ((pic->n_rowset + 1) * 2 > pic->rowset_cap)
        rowset_grow(pic);
    size_t j = h & (pic->rowset_cap - 1);
    while (pic->rowset[j] && pic->rowset[j] != h)
        j = (j + 1) & (pic->rowset_cap - 1);
    if (pic->rowset[j])
        return false;
    pic->rowset[j] = h;
    pic->n_rowset++;
    return true;
}

/* ------------------------------------------------------------ hottest */

/* Hotter first: more operations, then the smaller key hash (a stable order for ties). */
static bool hotter(uint64_t ops_a, uint64_t hash_a, uint64_t ops_b, uint64_t hash_b)
{
    return ops_a != ops_b ? ops_a > ops_b : hash_a < hash_b;
}

/* Partition ps just gained an operation (or appeared): keep pic->hot the
 * top_n hottest.  Only ps moved, and only up, so it either joins (pushing
 * out the coolest), moves up within, or stays out. */
static void hot_note(bench_picture *pic, const part_stat *ps, const uint8_t *key, uint32_t klen)
{
    int cap = pic->top_n;
    if (cap <= 0)
        return;
    if (!pic->hot)
        pic->hot = cs_calloc((size_t)cap, sizeof(part_hot));
    if (pic->n_hot == cap) {
        const part_hot *w = &pic->hot[cap - 1];
        /* a member has ops > the coolest's (or is the coolest, now +1) */
        if (!hotter(ps->ops, ps->hash, w->ops, w->hash))
            return;
    }
    int i = 0;
    while (i < pic->n_hot && pic->hot[i].hash != ps->hash)
        i++;
    if (i == pic->n_hot) {            /* joins: take the last place */
        if (pic->n_hot < cap) {
            i = pic->n_hot++;
        } else {
            i = cap - 1;
            cs_free(pic->hot[i].key);
        }
        pic->hot[i].hash = ps->hash;
        pic->hot[i].key = cs_memdup(key, klen ? klen : 1);
        pic->hot[i].key_len = klen;
    }
    pic->hot[i].ops = ps->ops;
    while (i > 0 && hotter(pic->hot[i].ops, pic->hot[i].hash, pic->hot[i - 1].ops, pic->hot[i - 1].hash)) {
        part_hot t = pic->hot[i];
        pic->hot[i] = pic->hot[i - 1];
        pic->hot[i - 1] = t;
        i--;
    }
}

/* ------------------------------------------------------------ updates */

void bench_picture_init(bench_picture *pic)
{
    memset(pic, 0, sizeof(*pic));
    pic->top_n = 10;
    cs_buf_init(&pic->keys);
}

void bench_picture_destroy(bench_picture *pic)
{
    for (int i = 0; i < pic->n_hot; i++)
        cs_free(pic->hot[i].key);
    cs_free(pic->hot);
    cs_free(pic->parts);
    cs_free(pic->rowset);
    cs_buf_destroy(&pic->keys);
    memset(pic, 0, sizeof(*pic));
}

void bench_picture_flush(bench_picture *pic)
{
    int n = pic->n_queue;
    if (!n)
        return;
    /* grow first, so the prefetched slots stay where they are */
    while ((pic->n_parts + (size_t)n + 1) * 2 > pic->parts_cap)
        parts_grow(pic);
    if (!pic->one_row_per_part)
        while ((pic->n_rowset + (size_t)n + 1) * 2 > pic->rowset_cap)
            rowset_grow(pic);
    for (int i = 0; i < n; i++) {
        const bench_pic_ent *e = &pic->queue[i];
        __builtin_prefetch(&pic->parts[(e->h ? e->h : 1) & (pic->parts_cap - 1)], 1);
        if ((e->what & BENCH_PIC_ROW) && !pic->one_row_per_part)
            __builtin_prefetch(&pic->rowset[(e->row_h ? e->row_h : 1) & (pic->rowset_cap - 1)], 1);
    }
    for (int i = 0; i < n; i++) {
        const bench_pic_ent *e = &pic->queue[i];
        size_t before = pic->n_parts;
        const uint8_t *key = pic->keys.p + e->key_off;
        part_stat *ps = part_get(pic, e->h, key, e->key_len);
        if (e->what & BENCH_PIC_OP)
            ps->ops++;
        if ((e->what & BENCH_PIC_OP) || pic->n_parts != before)
            hot_note(pic, ps, key, e->key_len);
        if ((e->what & BENCH_PIC_ROW) && (pic->one_row_per_part ? ps->rows == 0 : rowset_add(pic, e->row_h))) {
            ps->rows++;
            ps->bytes += e->bytes;
        }
    }
    pic->n_queue = 0;
    cs_buf_reset(&pic->keys);
}

/* Queue one acknowledged update (its key from keys). */
static void queue_one(bench_picture *pic, const bench_pic_ent *e, const uint8_t *keys)
{
    bench_pic_ent *q = &pic->queue[pic->n_queue];
    *q = *e;
    if (pic->n_queue && q[-1].h == e->h) {   /* the same partition as the one before: its key */
        q->key_off = q[-1].key_off;
    } else {
        q->key_off = (uint32_t)pic->keys.len;
        cs_buf_put(&pic->keys, e->key_len ? keys + e->key_off : NULL, e->key_len);
        if (pic->keys.err) {   /* out of memory: the update is lost, the queue stays whole */
            pic->keys.len = q->key_off;
            pic->keys.err = 0;
            return;
        }
    }
    if (++pic->n_queue == BENCH_PIC_BATCH)
        bench_picture_flush(pic);
}

void bench_picture_ack(bench_picture *pic, const bench_pending *pd)
{
    for (uint32_t i = 0; i < pd->n; i++)
        queue_one(pic, &pd->ents[i], pd->keys.p);
}

/* ------------------------------------------------------------ pending */

void bench_pending_init(bench_pending *pd)
{
    pd->ents = NULL;
    pd->n = pd->cap = 0;
    cs_buf_init(&pd->keys);
}

void bench_pending_destroy(bench_pending *pd)
{
    cs_free(pd->ents);
    cs_buf_destroy(&pd->keys);
    bench_pending_init(pd);
}

void bench_pending_add(bench_pending *pd, uint64_t h, const uint8_t *key, uint32_t key_len, uint32_t what,
                       uint64_t row_h, uint64_t bytes)
{
    if (pd->n == pd->cap) {
        uint32_t nc = pd->cap ? pd->cap * 2 : 8;
        bench_pic_ent *ne = cs_realloc(pd->ents, (size_t)nc * sizeof(*ne));
        if (!ne)
            return;
        pd->ents = ne;
        pd->cap = nc;
    }
    bench_pic_ent *e = &pd->ents[pd->n];
    if (pd->n && e[-1].h == h) {   /* rows of one partition: its key once */
        e->key_off = e[-1].key_off;
    } else {
        e->key_off = (uint32_t)pd->keys.len;
        cs_buf_put(&pd->keys, key, key_len);
        if (pd->keys.err) {
            pd->keys.len = e->key_off;
            pd->keys.err = 0;
            return;
        }
    }
    e->h = h;
    e->row_h = row_h;
    e->bytes = bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)bytes;
    e->key_len = key_len;
    e->what = what;
    pd->n++;
}

/* ------------------------------------------------------------ summary */

/* The k-th smallest of a[0..n) (k < n); reorders a.  Three-way partitions,
 * so runs of equal values (every partition one row) stay linear. */
static uint64_t select_u64(uint64_t *a, size_t n, size_t k)
{
    size_t lo = 0, hi = n;          /* k lies in [lo, hi) */
    while (hi - lo > 1) {
        uint64_t x = a[lo], y = a[lo + (hi - lo) / 2], z = a[hi - 1];
        uint64_t piv = x < y ? (y < z ? y : x < z ? z : x) : (x < z ? x : y < z ? z : y);
        size_t lt = lo, i = lo, gt = hi;   /* [lo,lt) < piv, [lt,i) == piv, [gt,hi) > piv */
        while (i < gt) {
            uint64_t v = a[i];
            if (v < piv) { a[i] = a[lt]; a[lt++] = v; i++; }
            else if (v > piv) { a[i] = a[--gt]; a[gt] = v; }
            else i++;
        }
        if (k < lt) hi = lt;
        else if (k >= gt) lo = gt;
        else return piv;
    }
    return a[lo];
}

void bench_picture_summary(bench_picture *pic, int top_n, bench_part_summary *out)
{
    memset(out, 0, sizeof(*out));
    bench_picture_flush(pic);
    uint64_t *rows = cs_calloc(pic->n_parts + 1, sizeof(uint64_t));
    uint64_t *bytes = cs_calloc(pic->n_parts + 1, sizeof(uint64_t));
    size_t nw = 0;
    for (size_t i = 0; i < pic->parts_cap; i++) {
        const part_stat *ps = &pic->parts[i];
        if (!ps->hash) continue;
        out->total_ops += ps->ops;
        if (ps->rows) {
            out->rows_total += ps->rows;
            rows[nw] = ps->rows;
            bytes[nw++] = ps->bytes;
        }
    }
    /* the hottest were kept as the run went (hot_note); their figures now */
    int n_top = pic->n_hot < top_n ? pic->n_hot : top_n < 0 ? 0 : top_n;
    out->top = cs_calloc((size_t)n_top + 1, sizeof(part_stat));
    out->top_key = cs_calloc((size_t)n_top + 1, sizeof(uint8_t *));
    out->top_key_len = cs_calloc((size_t)n_top + 1, sizeof(uint32_t));
    for (int i = 0; i < n_top; i++) {
        const part_hot *h = &pic->hot[i];
        out->top[i] = *part_get(pic, h->hash, h->key, h->key_len);
        out->top_key[i] = cs_memdup(h->key, h->key_len ? h->key_len : 1);
        out->top_key_len[i] = h->key_len;
    }
    out->count = nw;
    if (nw) {
        /* nearest rank (the smallest value with at least p of them at or
         * below it) for both, so p50 <= p99 <= max whatever the count */
        size_t k50 = (size_t)ceil((double)nw * 0.50) - 1, k99 = (size_t)ceil((double)nw * 0.99) - 1;
        out->rows_p50 = select_u64(rows, nw, k50);
        out->rows_p99 = select_u64(rows, nw, k99);
        out->rows_max = select_u64(rows, nw, nw - 1);
        out->bytes_p50 = select_u64(bytes, nw, k50);
        out->bytes_p99 = select_u64(bytes, nw, k99);
        out->bytes_max = select_u64(bytes, nw, nw - 1);
    }
    out->n_top = n_top;
    cs_free(rows);
    cs_free(bytes);
}

void bench_part_summary_destroy(bench_part_summary *s)
{
    for (int i = 0; s->top_key && i < s->n_top; i++)
        cs_free(s->top_key[i]);
    cs_free(s->top_key);
    cs_free(s->top_key_len);
    s->top_key = NULL;
    s->top_key_len = NULL;
    cs_free(s->top);
    s->top = NULL;
}
