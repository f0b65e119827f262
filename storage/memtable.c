/*
 * memtable.c: the in-memory write buffer of one table.
 *
 * A memtable is a B+tree of partitions ordered by (token, key bytes); each
 * partition holds its rows ordered by clustering bytes (one inline, a sorted
 * array up to ROWS_ARRAY_MAX, a B+tree past that) and, when it has them, its
 * deletion, range tombstones and a static row (mt_pext).  A row written once
 * stays packed (its ops as they came in the op stream); the first write that
 * finds it unpacks it into an st__row that later writes reconcile into in
 * place (so a memtable holds at most one version of each cell).  Every
 * byte allocated for data is counted in `mem`, which drives flushing and
 * back-pressure (docs/impl.md, "Memtables and flush").
 *
 * Locking: one rwlock per memtable.  mt_apply takes it for writing for one
 * partition update (so readers see a partition update all or nothing);
 * readers copy what they need into their arena under the read lock.
 * Lifetime: reference counted; the engine holds one reference while the
 * memtable is active or being flushed, each scan holds one.
 * Memory: partitions, rows and cells come from the memtable's slab, tree
 * nodes from a second bump arena (`nodes`: kept apart from the data, the
 * upper levels of a big tree stay on few pages, which saves TLB misses on
 * every descent); both are written under the write lock and freed all at
 * once: no per-object free when a flushed memtable dies (which, done on the
 * flush thread, used to contend with the request loop's mallocs on the
 * allocator's lock), and no malloc per write.  An overwritten cell's old
 * value stays in the slab until the flush (Cassandra's slab allocator does
 * the same); `mem` counts both arenas' bytes, so it still drives flushing.
 */
#include "storage/storage_int.h"
#include "common/alloc.h"
#include "common/err.h"
#include "common/util.h"

#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

/* ---------------------------------------------------------------- layout */

/* A row.  Written once (the common case: an INSERT of a new row), it stays
 * packed: its clustering bytes followed by the row's ops exactly as they came
 * in the mutation's op stream (LIVENESS / ROWDEL / CDEL / CELL, the commit
 * log encoding), decoded into an st__row when read or flushed.  The first
 * write that finds the row already there unpacks it into `full`, a mutable
 * st__row in the slab (cells borrowing the packed bytes) that later writes
 * reconcile into; from then on `full` is the row. */
typedef struct mt_row {
    st__row *full;               /* NULL while packed */
    uint32_t ck_len;
    uint32_t ops_len;            /* packed op bytes after the clustering */
    uint32_t n_cells;            /* CELL ops among them (cells array size for decoding) */
    uint8_t flags;               /* ST_ROW_* */
    uint8_t data[];              /* ck bytes, then ops */
} mt_row;

/* Rarely used parts of a partition. */
typedef struct mt_pext {
    st_deletion pdel;                    /* partition deletion */
    st__rt *rts; int n_rts, cap_rts;    /* heap, bytes owned */
    st__row *stat;                       /* static row or NULL */
} mt_pext;

/* Rows of a partition by count: none; one (rows is the mt_row); up to
 * ROWS_ARRAY_MAX (a sorted array whose capacity is the next power of two,
 * at least 2); more (an st__btree, its nodes in the node arena).  Small partitions thus pay
 * no tree node, and a one-row partition no array either. */
#define ROWS_ARRAY_MAX 32

struct mt_partition {
    int64_t token;
    uint32_t pk_len;
    uint32_t n_rows;             /* PROBE: a lookup key, pk bytes at rows */
    void *rows;
    mt_pext *ext;                /* NULL unless a deletion, range tombstones or a static row */
    uint8_t pk[];
};

#define PROBE UINT32_MAX

static inline const uint8_t *part_pk(const mt_partition *p)
{
    return p->n_rows == PROBE ? (const uint8_t *)p->rows : p->pk;
}

static int part_cmp(const void *a, const void *b)
{
    const mt_partition *x = a, *y = b;
    return st__key_cmp(x->token, part_pk(x), x->pk_len, y->token, part_pk(y), y->pk_len);
}

/* Token as an unsigned key with the same order (see st__btree_hint). */
static uint64_t part_hint(const void *a)
{
    return (uint64_t)((const mt_partition *)a)->token ^ 0x8000000000000000ull;
}

/* A probe row (ops_len PROBE) keeps its clustering bytes at `full`. */
static inline const uint8_t *row_ck(const mt_row *r)
{
    return r->ops_len == PROBE ? (const uint8_t *)r->full : r->data;
}

static int row_cmp(const void *a, const void *b)
{
    const mt_row *x = a, *y = b;
    return st__bytes_cmp(row_ck(x), x->ck_len, row_ck(y), y->ck_len);
}

/* ---------------------------------------------------------------- partition index
 *
 * The B+tree orders the partitions (scans, flush, and writes, which need
 * a new partition's position in it anyway); a point read goes through this
 * open-addressing hash table instead: a slot and the partition it points
 * to are about two cache misses, where a descent of a million-partition
 * tree is about ten (find_leaf and its comparisons were ~18% of the
 * request loop's samples under a 50 x 16 point SELECT).  A miss here means
 * the partition is absent.
 *
 * A slot is the partition's pointer with 16 bits of its token's hash in
 * the top bits (user pointers fit in 48 bits; a memtable handed one that
 * does not, or that cannot allocate a table, turns the index off for good
 * and the tree answers every lookup), so a probe dereferences only slots
 * whose tag matches.  Linear probing, insert-only like the tree.  The table
 * doubles at 3/4 load; the table it replaces is moved over IDX_MOVE slots
 * per insert, and lookups look in both meanwhile, so no write pays for a
 * whole rehash (a million partitions would be tens of milliseconds).  The
 * first table is sized from the memtable before (mt_expect_partitions).
 * Its bytes count in `mem` like the tree's nodes: 8 per slot, 11-21 per
 * partition. */

#define IDX_MIN_BITS 6
#define IDX_MAX_BITS 40
#define IDX_MOVE 16                 /* old slots moved per insert while the table grows */
#define IDX_PTR ((1ull << 48) - 1)

/*
 * Slot tables of IDX_MAP_BYTES and more (from ~200k partitions) are mapped
 * on their own, 2 MiB-aligned, and recycled.  The first table of a
 * memtable is allocated by its first write, on the request loop, right
 * after the switch; a calloc'd 16 MiB table (a million partitions) was
 * zeroed there by memset: 2.8-2.9 ms during which the loop answered
 * nothing when malloc handed back resident memory, 7-9 ms when it had to
 * fault 4 KiB pages in.  Now a table mapped on the loop is zero already
 * and its pages fault in one by one as slots are first touched (~2 us
 * each, spread over the inserts).  When a memtable dies (mt_free: on the
 * flush thread or the reaper, never on a request loop) its table is zeroed
 * there and kept in a small pool (IDX_POOL_MAX tables, each unused for at
 * most IDX_POOL_AGE_NS) for the next memtable of that size, which then
 * starts with a resident, zeroed table; and each flush job makes sure the
 * pool holds a table of the size the next memtable will ask for, mapped in
 * huge pages (fewer TLB misses on the index's random lookups) and faulted
 * in on the flush thread (mt_index_pool_prepare).  A table the growth
 * replaces (idx_move) is unmapped at once.  Pooled tables are in no
 * memtable's `mem`.
 */
#define IDX_MAP_BYTES ((size_t)2 << 20)
#define IDX_HUGE ((size_t)2 << 20)
#define IDX_POOL_MAX 2
#define IDX_POOL_AGE_NS (60ull * 1000000000ull)

static pthread_mutex_t idx_pool_mu = PTHREAD_MUTEX_INITIALIZER;
static struct { uint64_t *slots; unsigned bits; uint64_t since_ns; } idx_pool[IDX_POOL_MAX];

static inline size_t idx_bytes(unsigned bits) { return ((size_t)1 << bits) * sizeof(uint64_t); }

/* A zeroed table of 2^bits slots; NULL when out of memory.  huge: in huge
 * pages, faulted in now (not on a request loop: with THP defrag "madvise",
 * a huge page fault may wait for the kernel to compact memory, 5-11 ms seen
 * here; 4 KiB faults, left to the inserts, cost ~2 us each). */
static uint64_t *idx_slots_new(unsigned bits, bool huge)
{
    size_t n = idx_bytes(bits);
    if (n < IDX_MAP_BYTES) return cs_calloc((size_t)1 << bits, sizeof(uint64_t));
    pthread_mutex_lock(&idx_pool_mu);
    for (int i = 0; i < IDX_POOL_MAX; i++)
        if (idx_pool[i].slots && idx_pool[i].bits == bits) {
            uint64_t *s = idx_pool[i].slots;
            idx_pool[i].slots = NULL;
            pthread_mutex_unlock(&idx_pool_mu);
            return s;
        }
    pthread_mutex_unlock(&idx_pool_mu);
    return cs_map_aligned(n, IDX_HUGE, huge, huge);   /* huge tables are made off the loop: faulted in here */
}

/* Put s, a zeroed table of 2^bits slots, into the pool; false if full. */
static bool idx_pool_put(uint64_t *s, unsigned bits)
{
    uint64_t now = cs_mono_ns();
    bool put = false;
    pthread_mutex_lock(&idx_pool_mu);
    for (int i = 0; i < IDX_POOL_MAX && !put; i++)
        if (!idx_pool[i].slots) {
            idx_pool[i].slots = s;
            idx_pool[i].bits = bits;
            idx_pool[i].since_ns = now;
            put = true;
        }
    pthread_mutex_unlock(&idx_pool_mu);
    return put;
}

/* Whether the pool has a free place, and whether it holds a table of 2^bits slots. */
static bool idx_pool_room(unsigned bits, bool *have)
{
    bool room = false, h = false;
    pthread_mutex_lock(&idx_pool_mu);
    for (int i = 0; i < IDX_POOL_MAX; i++) {
        room |= !idx_pool[i].slots;
        h |= idx_pool[i].slots && idx_pool[i].bits == bits;
    }
    pthread_mutex_unlock(&idx_pool_mu);
    if (have) *have = h;
    return room;
}

/* Free a table of 2^bits slots; keep: zero it into the pool if there is
 * room (only where a memset of the table stalls no request). */
static void idx_slots_free(uint64_t *s, unsigned bits, bool keep)
{
    if (!s) return;
    size_t n = idx_bytes(bits);
    if (n < IDX_MAP_BYTES) { cs_free(s); return; }
    if (keep && idx_pool_room(bits, NULL)) {   /* looked at first, so a full pool costs no memset */
        memset(s, 0, n);
        if (idx_pool_put(s, bits)) return;
    }
    munmap(s, n);
}

/* How many slots (2^bits) the first table of a memtable expecting n
 * partitions gets: under 3/4 full. */
static unsigned idx_bits_for(size_t n)
{
    unsigned bits = IDX_MIN_BITS;
    while (bits < IDX_MAX_BITS && ((size_t)3 << bits) / 4 < n) bits++;
    return bits;
}

void mt_index_pool_prepare(size_t partitions)
{
    unsigned bits = idx_bits_for(partitions);
    size_t n = idx_bytes(bits);
    if (n < IDX_MAP_BYTES) return;
    bool have;
    if (!idx_pool_room(bits, &have) || have) return;
    uint64_t *s = idx_slots_new(bits, true);
    if (s && !idx_pool_put(s, bits)) munmap(s, n);
}

void mt_index_pool_trim(bool all)
{
    uint64_t now = cs_mono_ns();
    for (;;) {
        uint64_t *s = NULL; unsigned bits = 0;
        pthread_mutex_lock(&idx_pool_mu);
        for (int i = 0; i < IDX_POOL_MAX && !s; i++)
            if (idx_pool[i].slots && (all || now - idx_pool[i].since_ns > IDX_POOL_AGE_NS)) {
                s = idx_pool[i].slots; bits = idx_pool[i].bits;
                idx_pool[i].slots = NULL;
            }
        pthread_mutex_unlock(&idx_pool_mu);
        if (!s) return;
        munmap(s, idx_bytes(bits));
    }
}

size_t mt_index_pool_bytes(void)
{
    size_t n = 0;
    pthread_mutex_lock(&idx_pool_mu);
    for (int i = 0; i < IDX_POOL_MAX; i++)
        if (idx_pool[i].slots) n += idx_bytes(idx_pool[i].bits);
    pthread_mutex_unlock(&idx_pool_mu);
    return n;
}

static inline uint64_t idx_hash(int64_t token)
{
    return (uint64_t)token * 0x9E3779B97F4A7C15ull;
}

static inline uint64_t idx_tag(uint64_t h)
{
    return (h & 0xffff) << 48;
}

/* Is p the partition (token, pk)? */
static inline bool part_is(const mt_partition *p, int64_t token, const uint8_t *pk, uint32_t pk_len)
{
    return p->token == token && p->pk_len == pk_len && (pk_len == 0 || memcmp(p->pk, pk, pk_len) == 0);
}

/* From slot *i of t's probe sequence, the next partition whose tag is
 * tag, not read (*i is left past it), or NULL at the sequence's end. */
static mt_partition *tab_next(const struct mt_ptab *t, size_t *i, uint64_t tag)
{
    size_t mask = ((size_t)1 << t->bits) - 1;
    for (;; *i = (*i + 1) & mask) {
        uint64_t s = t->slots[*i];
        if (!s) return NULL;
        if ((s & ~IDX_PTR) == tag) {
            *i = (*i + 1) & mask;
            return (mt_partition *)(uintptr_t)(s & IDX_PTR);
        }
    }
}

static mt_partition *tab_find(const struct mt_ptab *t, uint64_t h, int64_t token, const uint8_t *pk, uint32_t pk_len)
{
    if (!t->slots) return NULL;
    size_t i = (size_t)(h >> (64 - t->bits));
    for (mt_partition *p; (p = tab_next(t, &i, idx_tag(h)));)
        if (part_is(p, token, pk, pk_len)) return p;
    return NULL;
}

/* The first partition t's probe sequence for h holds whose tag matches,
 * without reading it (a hint's first stage; the caller compares it once
 * it has arrived), or NULL. */
static mt_partition *tab_candidate(const struct mt_ptab *t, uint64_t h)
{
    if (!t->slots) return NULL;
    size_t i = (size_t)(h >> (64 - t->bits));
    return tab_next(t, &i, idx_tag(h));
}

/* Put p, absent, into t (which has room). */
static void tab_put(struct mt_ptab *t, uint64_t h, const mt_partition *p)
{
    size_t mask = ((size_t)1 << t->bits) - 1, i = (size_t)(h >> (64 - t->bits));
    while (t->slots[i]) i = (i + 1) & mask;
    t->slots[i] = idx_tag(h) | (uint64_t)(uintptr_t)p;
    t->count++;
}

static void idx_drop(mt_memtable *m)
{
    idx_slots_free(m->idx.slots, m->idx.bits, false);
    idx_slots_free(m->idx_old.slots, m->idx_old.bits, false);
    memset(&m->idx, 0, sizeof m->idx);
    memset(&m->idx_old, 0, sizeof m->idx_old);
    m->idx_off = true;
}

/* Move the next `n` slots of the table being replaced (all: SIZE_MAX);
 * free it when done.  Each entry's partition is read for its token, so
 * they are all fetched first (one wait for the window, not one each). */
static void idx_move(mt_memtable *m, size_t n)
{
    struct mt_ptab *o = &m->idx_old;
    size_t cap = (size_t)1 << o->bits, end = cap - m->idx_moved < n ? cap : m->idx_moved + n;
    for (size_t i = m->idx_moved; i < end && n != SIZE_MAX; i++)
        if (o->slots[i]) __builtin_prefetch((const void *)(uintptr_t)(o->slots[i] & IDX_PTR));
    for (; m->idx_moved < end; m->idx_moved++) {
        uint64_t s = o->slots[m->idx_moved];
        if (!s) continue;
        const mt_partition *p = (const mt_partition *)(uintptr_t)(s & IDX_PTR);
        tab_put(&m->idx, idx_hash(p->token), p);
    }
    if (m->idx_moved == cap) {
        idx_slots_free(o->slots, o->bits, false);
        memset(o, 0, sizeof *o);
    }
}

/* Start loading the slot where a partition of this token would go. */
static inline void idx_prefetch(const mt_memtable *m, int64_t token)
{
    if (m->idx.slots) __builtin_prefetch(&m->idx.slots[idx_hash(token) >> (64 - m->idx.bits)], 1);
}

/* The partition (token, pk) if the index holds it.  Meaningful only while
 * the index is on (!m->idx_off). */
static mt_partition *idx_find(const mt_memtable *m, int64_t token, const uint8_t *pk, uint32_t pk_len)
{
    uint64_t h = idx_hash(token);
    mt_partition *p = tab_find(&m->idx, h, token, pk, pk_len);
    return p ? p : tab_find(&m->idx_old, h, token, pk, pk_len);
}

/* Index p, just inserted in the tree; table bytes allocated go to *mem. */
static void idx_add(mt_memtable *m, const mt_partition *p, size_t *mem)
{
    if (m->idx_off) return;
    if ((uint64_t)(uintptr_t)p & ~IDX_PTR) { idx_drop(m); return; }
    struct mt_ptab *t = &m->idx;
    if (!t->slots || t->count + 1 > ((size_t)3 << t->bits) / 4) {
        if (m->idx_old.slots) idx_move(m, SIZE_MAX);
        unsigned bits = t->slots ? t->bits + 1 : m->idx_hint_bits;
        if (bits > IDX_MAX_BITS) { idx_drop(m); return; }
        uint64_t *slots = idx_slots_new(bits, false);
        if (!slots) { idx_drop(m); return; }
        /* counted once the old table is gone (soon: IDX_MOVE slots per insert) */
        *mem += (((size_t)1 << bits) - (t->slots ? (size_t)1 << t->bits : 0)) * sizeof *slots;
        if (t->slots) {
            m->idx_old = *t;
            m->idx_moved = 0;
        }
        t->slots = slots;
        t->bits = bits;
        t->count = 0;
    }
    tab_put(t, idx_hash(p->token), p);
    if (m->idx_old.slots) idx_move(m, IDX_MOVE);
}

void mt_expect_partitions(mt_memtable *m, size_t n)
{
    m->idx_hint_bits = idx_bits_for(n);
}

mt_memtable *mt_new(cs_chunk_pool *pool)
{
    static _Atomic uint64_t next_id = 1;
    mt_memtable *m = cs_calloc(1, sizeof *m);
    if (!m) return NULL;
    m->id = atomic_fetch_add(&next_id, 1);
    pthread_rwlock_init(&m->lock, NULL);
    cs_arena_init(&m->slab);
    cs_arena_set_chunk_max(&m->slab, MT_CHUNK);   /* big memtables: few, mmap-sized chunks */
    cs_arena_init(&m->nodes);
    cs_arena_set_chunk_max(&m->nodes, MT_CHUNK);
    if (pool) {
        cs_chunk_pool_ref(pool);
        m->pool = pool;
        cs_arena_set_pool(&m->slab, pool);
        cs_arena_set_pool(&m->nodes, pool);
    }
    st__btree_init_hint(&m->parts, part_cmp, part_hint);
    m->parts.arena = &m->nodes;
    atomic_init(&m->mem, 0);
    atomic_init(&m->refs, 1);
    m->min_ts = INT64_MAX;
    m->created_ns = cs_mono_ns();
    m->idx_hint_bits = IDX_MIN_BITS;
    m->first_pos.segment = UINT64_MAX;
    return m;
}

void mt_ref(mt_memtable *m) { atomic_fetch_add(&m->refs, 1); }

/* Everything but the range tombstones lives in the slab. */
static void part_free(void *p)
{
    mt_partition *mp = p;
    if (!mp->ext) return;
    for (int i = 0; i < mp->ext->n_rts; i++) {
        cs_free((void *)mp->ext->rts[i].start);
        cs_free((void *)mp->ext->rts[i].end);
    }
    cs_free(mp->ext->rts);
}

static void mt_free(void *arg)
{
    mt_memtable *m = arg;
    if (m->has_rts) st__btree_destroy(&m->parts, part_free);
    cs_arena_destroy(&m->slab);
    cs_arena_destroy(&m->nodes);
    cs_chunk_pool_unref(m->pool);
    idx_slots_free(m->idx.slots, m->idx.bits, true);
    idx_slots_free(m->idx_old.slots, m->idx_old.bits, false);
    pthread_rwlock_destroy(&m->lock);
    cs_free(m);
}

void mt_unref(mt_memtable *m)
{
    if (!m || atomic_fetch_sub(&m->refs, 1) != 1) return;
    if (!st__reap(mt_free, m)) mt_free(m);
}

/* ---------------------------------------------------------------- rows of a partition */

typedef struct rows_pos { uint32_t idx; st__bpos bp; } rows_pos;

static inline mt_row **rows_arr(const mt_partition *p)
{
    return p->n_rows == 1 ? (mt_row **)&p->rows : (mt_row **)p->rows;
}

/* First index in the array form with row >= ck (> if strict). */
static uint32_t arr_lower(const mt_partition *p, const uint8_t *ck, uint32_t ck_len, bool strict)
{
    mt_row **a = rows_arr(p);
    uint32_t lo = 0, hi = p->n_rows;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        int c = st__bytes_cmp(a[mid]->data, a[mid]->ck_len, ck, ck_len);
        if (c < 0 || (strict && c == 0)) lo = mid + 1; else hi = mid;
    }
    return lo;
}

/* The row with clustering ck, or NULL with *pos where it belongs. */
static mt_row *rows_find(const mt_partition *p, const uint8_t *ck, uint32_t ck_len, rows_pos *pos)
{
    if (p->n_rows > ROWS_ARRAY_MAX) {
        mt_row probe = { .full = (st__row *)ck, .ck_len = ck_len, .ops_len = PROBE };
        return st__btree_find(p->rows, &probe, &pos->bp);
    }
    uint32_t i = arr_lower(p, ck, ck_len, false);
    pos->idx = i;
    if (i < p->n_rows) {
        mt_row *r = rows_arr(p)[i];
        if (st__bytes_cmp(r->data, r->ck_len, ck, ck_len) == 0) return r;
    }
    return NULL;
}

static uint32_t arr_cap(uint32_t n)
{
    uint32_t c = 2;
    while (c < n) c <<= 1;
    return c;
}

/* Insert absent row r at pos (from rows_find).  0 or CS_ENOMEM (p unchanged). */
static int rows_insert(mt_memtable *m, mt_partition *p, const rows_pos *pos, mt_row *r)
{
    uint32_t n = p->n_rows;
    if (n > ROWS_ARRAY_MAX) {
        if (st__btree_insert_at(p->rows, &pos->bp, r)) return CS_ENOMEM;
        p->n_rows++;
        return 0;
    }
    if (n == 0) {
        p->rows = r;
        p->n_rows = 1;
        return 0;
    }
    mt_row **a = rows_arr(p);
    if (n == ROWS_ARRAY_MAX) {
        st__btree *t = cs_arena_alloc(&m->slab, sizeof *t);
        if (!t) return CS_ENOMEM;
        st__btree_init(t, row_cmp);
        t->arena = &m->nodes;
        for (uint32_t i = 0; i <= n; i++) {
            mt_row *x = i < pos->idx ? a[i] : i == pos->idx ? r : a[i - 1];
            if (st__btree_insert(t, x)) return CS_ENOMEM;
        }
        p->rows = t;
        p->n_rows = n + 1;
        return 0;
    }
    if (n == 1 || n == arr_cap(n)) {                     /* full: grow */
        mt_row **na = cs_arena_alloc(&m->slab, arr_cap(n + 1) * sizeof *na);
        if (!na) return CS_ENOMEM;
        memcpy(na, a, n * sizeof *na);
        a = na;
    }
    memmove(&a[pos->idx + 1], &a[pos->idx], (n - pos->idx) * sizeof *a);
    a[pos->idx] = r;
    p->rows = a;
    p->n_rows = n + 1;
    return 0;
}

typedef struct rows_it { const mt_partition *p; uint32_t i; st__biter bi; } rows_it;

/* Position at the first row >= ck (> if strict); ck NULL = first row. */
static void rows_seek(const mt_partition *p, const uint8_t *ck, uint32_t ck_len, bool strict, rows_it *it)
{
    it->p = p;
    it->i = 0;
    if (p->n_rows > ROWS_ARRAY_MAX) {
        mt_row probe = { .full = (st__row *)ck, .ck_len = ck_len, .ops_len = PROBE };
        st__btree_seek(p->rows, ck ? &probe : NULL, strict, &it->bi);
    } else if (ck) {
        it->i = arr_lower(p, ck, ck_len, strict);
    }
}

static mt_row *rows_get(const rows_it *it)
{
    if (it->p->n_rows > ROWS_ARRAY_MAX) return st__biter_get(&it->bi);
    return it->i < it->p->n_rows ? rows_arr(it->p)[it->i] : NULL;
}

static void rows_next(rows_it *it)
{
    if (it->p->n_rows > ROWS_ARRAY_MAX) st__biter_next(&it->bi);
    else it->i++;
}

/* ---------------------------------------------------------------- row forms */

static bool is_row_op(uint8_t kind)
{
    return kind == ST__OP_LIVENESS || kind == ST__OP_ROWDEL || kind == ST__OP_CDEL || kind == ST__OP_CELL;
}

/* Merge one row-level op into row (the reconciliation every write does). */
static int merge_op(st__row *row, const st__op *op, cs_arena *a)
{
    st__row one = { .lv = { INT64_MIN, 0, 0 }, .del = ST_NO_DELETION };
    st__cdel cd;
    switch (op->kind) {
    case ST__OP_LIVENESS: one.lv = op->lv; break;
    case ST__OP_ROWDEL: one.del = op->d; break;
    case ST__OP_CDEL:
        cd.col = op->col; cd.d = op->d;
        one.cdels = &cd; one.n_cdels = 1;
        break;
    case ST__OP_CELL: one.cells = (st_cell *)&op->cell; one.n_cells = 1; break;
    default: return CS_ECORRUPT;
    }
    return st__row_merge(row, &one, a, NULL);
}

/* Decode packed row r into out, as if its ops had been merged one by one
 * into an empty row.  Cells are allocated in a; with copy the clustering and
 * values are copied into a too, else they borrow r's bytes. */
static int row_unpack_into(const mt_row *r, st__row *out, cs_arena *a, bool copy)
{
    memset(out, 0, sizeof *out);
    out->ck_len = r->ck_len;
    if (r->ck_len) {
        out->ck = copy ? cs_arena_memdup(a, r->data, r->ck_len) : r->data;
        if (!out->ck) return CS_ENOMEM;
    }
    out->flags = r->flags;
    out->lv.ts_us = INT64_MIN;
    out->del = ST_NO_DELETION;
    if (r->n_cells) {
        out->cells = cs_arena_alloc(a, (size_t)r->n_cells * sizeof(st_cell));
        if (!out->cells) return CS_ENOMEM;
        out->cap_cells = (int)r->n_cells;
    }
    cs_rd rd;
    cs_rd_init(&rd, r->data + r->ck_len, r->ops_len);
    st__op op;
    int k;
    while ((k = st__op_next(&rd, &op)) == 1) {
        int n = out->n_cells;
        if (op.kind == ST__OP_CELL && n < out->cap_cells &&
            (n == 0 || st__cell_order(&out->cells[n - 1], &op.cell) < 0)) {
            /* in order (the usual case): append */
            st_cell *c = &out->cells[n];
            *c = op.cell;
            if (!c->path_len) c->path = NULL;
            if (!c->val_len) c->val = NULL;
            if (copy && (c->path_len || c->val_len)) {
                uint8_t *b = cs_arena_alloc(a, (size_t)c->path_len + c->val_len);
                if (!b) return CS_ENOMEM;
                if (c->path_len) { memcpy(b, c->path, c->path_len); c->path = b; }
                if (c->val_len) { memcpy(b + c->path_len, c->val, c->val_len); c->val = b + c->path_len; }
            }
            out->n_cells++;
            continue;
        }
        int rc = merge_op(out, &op, a);
        if (rc) return rc;
    }
    return k < 0 ? k : 0;
}

/* The mutable form of r, made on the first write that finds r packed. */
static st__row *row_full(mt_memtable *m, mt_row *r)
{
    if (r->full) return r->full;
    st__row *f = cs_arena_alloc(&m->slab, sizeof *f);
    if (!f || row_unpack_into(r, f, &m->slab, false)) return NULL;
    r->full = f;
    return f;
}

/* A copy of r in a (for reads). */
static st__row *row_copy(const mt_row *r, cs_arena *a)
{
    if (r->full) return st__row_copy(r->full, a);
    st__row *c = cs_arena_alloc(a, sizeof *c);
    return c && row_unpack_into(r, c, a, true) == 0 ? c : NULL;
}

/* A view of r for flush: the full row itself, or r decoded into a with its
 * bytes borrowed. */
static st__row *row_view(const mt_row *r, cs_arena *a)
{
    if (r->full) return r->full;
    st__row *c = cs_arena_alloc(a, sizeof *c);
    return c && row_unpack_into(r, c, a, false) == 0 ? c : NULL;
}

/* ---------------------------------------------------------------- apply */

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

static mt_pext *part_ext(mt_memtable *m, mt_partition *p)
{
    if (!p->ext && (p->ext = cs_arena_zalloc(&m->slab, sizeof *p->ext)) != NULL) p->ext->pdel = ST_NO_DELETION;
    return p->ext;
}

static int add_rt(mt_pext *p, const st__rt *rt, size_t *mem)
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

/* Add to a counter only writers change, under the write lock: a relaxed
 * load and store, not a locked read-modify-write (stats read them
 * without the lock). */
static inline void count_add(_Atomic uint64_t *c, uint64_t n)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n, memory_order_relaxed);
}

static void note_ts(mt_memtable *m, int64_t ts)
{
    if (ts != INT64_MIN && ts < atomic_load_explicit(&m->min_ts, memory_order_relaxed))
        atomic_store_explicit(&m->min_ts, ts, memory_order_relaxed);
}

static void note_op(mt_memtable *m, const st__op *op)
{
    switch (op->kind) {
    case ST__OP_LIVENESS: note_ts(m, op->lv.ts_us); break;
    case ST__OP_ROWDEL: case ST__OP_CDEL: note_ts(m, op->d.ts_us); break;
    case ST__OP_CELL: note_ts(m, op->cell.ts_us); count_add(&m->cells, 1); break;
    default: break;
    }
}

/* A new packed row at pos: the ROW op just read (op) and its run, the
 * len bytes at ops holding n_cells CELL ops. */
static int row_put_packed(mt_memtable *m, mt_partition *p, const rows_pos *pos, const st__op *op,
                          const uint8_t *ops, size_t len, uint32_t n_cells, mt_row **out)
{
    if (len > UINT32_MAX - 1) return CS_EINVAL;
    mt_row *row = cs_arena_alloc(&m->slab, offsetof(mt_row, data) + op->ck_len + len);
    if (!row) return CS_ENOMEM;
    row->full = NULL;
    row->ck_len = op->ck_len;
    row->ops_len = (uint32_t)len;
    row->n_cells = n_cells;
    row->flags = op->rflags;
    if (op->ck_len) memcpy(row->data, op->ck, op->ck_len);
    if (len) memcpy(row->data + op->ck_len, ops, len);
    if (rows_insert(m, p, pos, row)) return CS_ENOMEM;
    count_add(&m->n_rows, 1);
    *out = row;
    return 0;
}

/* A new row from the ROW op just read (op) and the row-level ops that
 * follow it in r, which it consumes (decoding each: replay); inserted at
 * pos. */
static int row_insert_packed(mt_memtable *m, mt_partition *p, const rows_pos *pos, const st__op *op,
                             cs_rd *r, mt_row **out)
{
    size_t start = r->pos;
    uint32_t n_cells = 0;
    while (cs_rd_left(r) && is_row_op(r->p[r->pos])) {
        st__op o;
        int k = st__op_next(r, &o);
        if (k <= 0) return k < 0 ? k : CS_ECORRUPT;
        note_op(m, &o);
        if (o.kind == ST__OP_CELL) n_cells++;
    }
    return row_put_packed(m, p, pos, op, r->p + start, r->pos - start, n_cells, out);
}

/* row_insert_packed for a row whose run the builder measured (si): the
 * bytes are copied, not decoded; the same timestamp and cell counts. */
static int row_insert_known(mt_memtable *m, mt_partition *p, const rows_pos *pos, const st__op *op,
                            cs_rd *r, const st__mrow *si, mt_row **out)
{
    if (si->ops_len > cs_rd_left(r)) return CS_ECORRUPT;
    note_ts(m, si->min_ts);
    count_add(&m->cells, si->n_cells);
    const uint8_t *ops = r->p + r->pos;
    r->pos += si->ops_len;
    return row_put_packed(m, p, pos, op, ops, si->ops_len, si->n_cells, out);
}

/* Apply the ops of one partition update.  The stream r is positioned just
 * after the PARTITION op; stops before the next PARTITION op.  side: the
 * builder's entries for the partition's ROW ops, one each in order (NULL
 * for replay): a ROW op is taken from its entry, not decoded, and a new
 * row's run copied. */
int mt_apply_side(mt_memtable *m, int64_t token, const uint8_t *pk, uint32_t pk_len, cs_rd *r,
                  const st__mrow *side, uint32_t n_side, const st__whint *wh, size_t *added)
{
    size_t mem = 0;
    int rc = 0;
    pthread_rwlock_wrlock(&m->lock);
    size_t slab0 = m->slab.used + m->nodes.used;
    mt_partition probe = { .token = token, .pk_len = pk_len, .n_rows = PROBE, .rows = (void *)pk };
    st__bpos pp;
    /* An overwrite whose batch hint found its partition in the index goes
     * straight there (mt_prefetch_writes).  Otherwise a write descends the
     * tree: a new partition needs its position there anyway, and probing
     * the index first, one key at a time, cost fill-random ~8% (an absent
     * key's probe runs to an empty slot).  The slot a new partition goes
     * to is fetched meanwhile. */
    mt_partition *p;
    if (wh && wh->mt_id == m->id && wh->part) {
        p = wh->part;   /* found by the hint in this memtable, whose partitions never move or go */
        m->hinted_parts++;
    } else {
        idx_prefetch(m, token);
        p = st__btree_find_from(&m->parts, &probe, wh && wh->mt_id == m->id ? &wh->leaf : NULL, &pp);
    }
    if (!p) {
        p = cs_arena_alloc(&m->slab, sizeof *p + pk_len);
        if (!p) { rc = CS_ENOMEM; goto out; }
        p->token = token;
        p->pk_len = pk_len;
        p->n_rows = 0;
        p->rows = NULL;
        p->ext = NULL;
        if (pk_len) memcpy(p->pk, pk, pk_len);
        if (st__btree_insert_at(&m->parts, &pp, p)) { rc = CS_ENOMEM; goto out; }
        idx_add(m, p, &mem);
    }
    st__row *row = NULL;       /* the current row's mutable form, */
    mt_row *prow = NULL;       /* or its packed form (unpacked on demand) */
    uint32_t si = 0;           /* next side entry */
    for (;;) {
        if (cs_rd_left(r) == 0) break;
        if (r->p[r->pos] == ST__OP_PARTITION) break;
        st__op op;
        const st__mrow *known = NULL;
        if (side && r->p[r->pos] == ST__OP_ROW) {
            known = &side[si++];
            if (si > n_side || known->run0 <= r->pos || known->run0 > r->len || known->ck_len > known->run0) {
                rc = CS_EINVAL;          /* side info out of step with the stream: a builder bug */
                break;
            }
            op.kind = ST__OP_ROW;
            op.rflags = known->flags;
            op.ck_len = known->ck_len;
            op.ck = known->ck_len ? r->p + known->run0 - known->ck_len : NULL;
            r->pos = known->run0;
        } else {
            int k = st__op_next(r, &op);
            if (k < 0) { rc = k; break; }
            if (k == 0) break;
        }
        switch (op.kind) {
        case ST__OP_PDEL:
            if (!part_ext(m, p)) { rc = CS_ENOMEM; break; }
            p->ext->pdel = st__del_max(p->ext->pdel, op.d);
            note_ts(m, op.d.ts_us);
            break;
        case ST__OP_RT:
            if (!part_ext(m, p)) { rc = CS_ENOMEM; break; }
            rc = add_rt(p->ext, &op.rt, &mem);
            m->has_rts = true;
            note_ts(m, op.rt.d.ts_us);
            break;
        case ST__OP_ROW: {
            row = NULL;
            prow = NULL;
            if (op.rflags & ST_ROW_STATIC) {
                if (!part_ext(m, p)) { rc = CS_ENOMEM; break; }
                if (!p->ext->stat) {
                    p->ext->stat = row_new(&m->slab, NULL, 0, ST_ROW_STATIC);
                    if (!p->ext->stat) { rc = CS_ENOMEM; break; }
                }
                row = p->ext->stat;
            } else {
                rows_pos pos;
                prow = rows_find(p, op.ck, op.ck_len, &pos);
                if (!prow) rc = known ? row_insert_known(m, p, &pos, &op, r, known, &prow)
                                      : row_insert_packed(m, p, &pos, &op, r, &prow);
            }
            break;
        }
        case ST__OP_LIVENESS:
        case ST__OP_ROWDEL:
        case ST__OP_CDEL:
        case ST__OP_CELL:
            if (!row && prow && !(row = row_full(m, prow))) { rc = CS_ENOMEM; break; }
            if (!row) { rc = CS_ECORRUPT; break; }
            note_op(m, &op);
            rc = merge_op(row, &op, &m->slab);
            break;
        default:
            rc = CS_ECORRUPT;
        }
        if (rc) break;
    }
out:
    mem += m->slab.used + m->nodes.used - slab0;
    pthread_rwlock_unlock(&m->lock);
    atomic_fetch_add(&m->mem, mem);
    *added = mem;
    return rc;
}

int mt_apply(mt_memtable *m, int64_t token, const uint8_t *pk, uint32_t pk_len, cs_rd *r, size_t *added)
{
    return mt_apply_side(m, token, pk, pk_len, r, NULL, 0, NULL, added);
}

/* ---------------------------------------------------------------- reads */

/* Copy rows of one slice (start..end) into p. */
static int copy_slice(const mt_partition *mp, const st_slice *s, st__part *p, cs_arena *a)
{
    rows_it it;
    if (s && s->start.len) rows_seek(mp, s->start.key, s->start.len, !s->start.inclusive, &it);
    else rows_seek(mp, NULL, 0, false, &it);
    for (mt_row *r; (r = rows_get(&it)) != NULL; rows_next(&it)) {
        if (s && !st__before_end(r->data, r->ck_len, s->end.key, s->end.len, s->end.inclusive)) break;
        st__row *c = row_copy(r, a);
        if (!c || st__part_add_row(p, c, a)) return CS_ENOMEM;
    }
    return 0;
}

void mt_prefetch_reads(mt_memtable *m, const int64_t *tokens, int n)
{
    if (n > ST__BTREE_PREFETCH_MAX) n = ST__BTREE_PREFETCH_MAX;
    if (n <= 0 || pthread_rwlock_tryrdlock(&m->lock) != 0) return;
    if (!m->idx_off && m->idx.slots) {
        /* the slots; then, each slot having had the time to arrive, the
         * partition its tag points to (a hint: the first match only), and
         * then that partition's row if it has one (the kv shape), as
         * flush's prefetch_part does */
        const mt_partition *p[ST__BTREE_PREFETCH_MAX];
        for (int i = 0; i < n; i++) idx_prefetch(m, tokens[i]);
        for (int i = 0; i < n; i++) {
            uint64_t h = idx_hash(tokens[i]), s = m->idx.slots[h >> (64 - m->idx.bits)];
            p[i] = s && (s & ~IDX_PTR) == idx_tag(h) ? (const mt_partition *)(uintptr_t)(s & IDX_PTR) : NULL;
            if (p[i]) __builtin_prefetch(p[i]);
        }
        for (int i = 0; i < n; i++)
            if (p[i] && p[i]->n_rows == 1) __builtin_prefetch(p[i]->rows);
        /* the row has arrived: an overwritten row's mutable form (row_copy
         * reads it first), else the rest of its packed bytes; then that
         * form's cells, then their values (the copy's memmove).  Each
         * stage waits about one miss for all n keys, where the read would
         * wait one per key and per stage (~30% of the loop under a 50 x 16
         * point SELECT of a memtable of overwritten rows). */
        const st__row *f[ST__BTREE_PREFETCH_MAX];
        for (int i = 0; i < n; i++) {
            f[i] = NULL;
            if (!p[i] || p[i]->n_rows != 1) continue;
            const mt_row *r = p[i]->rows;
            if (r->full) {
                f[i] = r->full;
                __builtin_prefetch(f[i]);
            } else {
                const uint8_t *b = (const uint8_t *)r, *e = r->data + r->ck_len + r->ops_len;
                for (const uint8_t *q = b + 64; q < e && q < b + 256; q += 64) __builtin_prefetch(q);
            }
        }
        for (int i = 0; i < n; i++)
            if (f[i] && f[i]->n_cells > 0) {
                __builtin_prefetch(f[i]->cells);
                if (f[i]->n_cells > 1) __builtin_prefetch(&f[i]->cells[1]);
            }
        for (int i = 0; i < n; i++)
            for (int c = 0; f[i] && c < f[i]->n_cells && c < 2; c++) {
                const uint8_t *v = f[i]->cells[c].val;
                uint32_t len = f[i]->cells[c].val_len;
                if (v && len) {
                    __builtin_prefetch(v);
                    if (len > 64) __builtin_prefetch(v + 64);
                }
            }
    }
    pthread_rwlock_unlock(&m->lock);
}

void mt_prefetch_writes(mt_memtable *m, const int64_t *tokens, const uint8_t *const *pks,
                        const uint32_t *lens, int n, st__whint *wh)
{
    for (int i = 0; wh && i < n; i++) wh[i] = (st__whint){ 0 };
    if (n > ST__BTREE_PREFETCH_MAX) n = ST__BTREE_PREFETCH_MAX;
    if (n <= 0 || pthread_rwlock_tryrdlock(&m->lock) != 0) return;
    mt_partition probes[ST__BTREE_PREFETCH_MAX];
    const void *keys[ST__BTREE_PREFETCH_MAX];
    int at[ST__BTREE_PREFETCH_MAX];   /* keys[j] is key at[j] */
    for (int i = 0; i < n; i++) {
        probes[i] = (mt_partition){ .token = tokens[i], .pk_len = lens[i], .n_rows = PROBE, .rows = (void *)pks[i] };
        keys[i] = &probes[i];
        at[i] = i;
        if (!m->idx_off) idx_prefetch(m, tokens[i]);
    }
    /* Overwrites: a key the index holds needs no descent, only its
     * partition (and its one row), found here for all n at once: the
     * slots (prefetched above), then the partitions their tags point at,
     * then their rows.  The apply takes the partition from the hint.  A
     * key whose first tag match is another partition just descends. */
    int nd = n;
    if (wh && !m->idx_off && m->idx.slots) {
        mt_partition *cand[ST__BTREE_PREFETCH_MAX];
        for (int i = 0; i < n; i++) {
            uint64_t h = idx_hash(tokens[i]);
            cand[i] = tab_candidate(&m->idx, h);
            if (!cand[i] && m->idx_old.slots) cand[i] = tab_candidate(&m->idx_old, h);
            if (cand[i]) __builtin_prefetch(cand[i]);
        }
        nd = 0;
        for (int i = 0; i < n; i++) {
            mt_partition *c = cand[i];
            if (c && part_is(c, tokens[i], pks[i], lens[i])) {
                wh[i] = (st__whint){ .mt_id = m->id, .part = c };
                if (c->n_rows == 1) __builtin_prefetch(c->rows, 1);
            } else {
                keys[nd] = &probes[i];
                at[nd++] = i;
            }
        }
    }
    st__bleaf leaves[ST__BTREE_PREFETCH_MAX] = { { NULL, 0 } };
    st__btree_prefetch_many(&m->parts, keys, nd, leaves);
    for (int j = 0; wh && j < nd; j++)
        if (leaves[j].leaf) wh[at[j]] = (st__whint){ .mt_id = m->id, .leaf = leaves[j] };
    pthread_rwlock_unlock(&m->lock);
}

/* The partition (token, pk), or NULL: by the hash index while the memtable
 * has one, else down the tree.  Caller holds m->lock. */
static mt_partition *find_partition(mt_memtable *m, int64_t token, const uint8_t *pk, uint32_t pk_len)
{
    if (!m->idx_off) return idx_find(m, token, pk, pk_len);
    mt_partition probe = { .token = token, .pk_len = pk_len, .n_rows = PROBE, .rows = (void *)pk };
    st__bpos pos;
    return st__btree_find(&m->parts, &probe, &pos);
}

int mt_read_partition(mt_memtable *m, int64_t token, const uint8_t *pk, uint32_t pk_len,
                      const st_slice *slices, int n_slices, st__part *p, cs_arena *a)
{
    int rc = 1;
    pthread_rwlock_rdlock(&m->lock);
    mt_partition *mp = find_partition(m, token, pk, pk_len);
    if (!mp) { rc = 0; goto out; }
    memset(p, 0, sizeof *p);
    p->pk = mp->pk_len ? cs_arena_memdup(a, mp->pk, mp->pk_len) : cs_arena_alloc(a, 1);
    p->pk_len = mp->pk_len;
    p->token = mp->token;
    p->pdel = mp->ext ? mp->ext->pdel : ST_NO_DELETION;
    if (mp->ext) {
        for (int i = 0; i < mp->ext->n_rts; i++)
            if (st__part_add_rt(p, &mp->ext->rts[i], a)) { rc = CS_ENOMEM; goto out; }
        if (mp->ext->stat) {
            p->stat = st__row_copy(mp->ext->stat, a);
            if (!p->stat) { rc = CS_ENOMEM; goto out; }
        }
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

bool mt_has_partition(mt_memtable *m, int64_t token, const uint8_t *pk, uint32_t pk_len)
{
    pthread_rwlock_rdlock(&m->lock);
    bool found = find_partition(m, token, pk, pk_len) != NULL;
    pthread_rwlock_unlock(&m->lock);
    return found;
}

int mt_next_key(mt_memtable *m, int64_t token, const uint8_t *key, uint32_t klen, bool incl,
                int64_t end_token, int64_t *out_token, const uint8_t **out_key, uint32_t *out_len,
                mt_keycur *kc)
{
    int rc = 0;
    pthread_rwlock_rdlock(&m->lock);
    st__biter it;
    if (kc && kc->valid && kc->count == m->parts.count && key && !incl) {
        it = kc->it;
        /* Normally one step at most: the cursor's key, if the scan took it. */
        for (const mt_partition *c; (c = st__biter_get(&it)) != NULL &&
                                    st__key_cmp(c->token, c->pk, c->pk_len, token, key, klen) <= 0;)
            st__biter_next(&it);
    } else {
        mt_partition probe = { .token = token, .pk_len = key ? klen : 0, .n_rows = PROBE, .rows = (void *)key };
        st__btree_seek(&m->parts, &probe, key ? !incl : false, &it);
    }
    if (kc) { kc->it = it; kc->count = m->parts.count; kc->valid = true; }
    mt_partition *mp = st__biter_get(&it);
    if (mp && mp->token <= end_token) {
        *out_token = mp->token;
        *out_key = mp->pk;               /* partitions never move or go while the memtable lives */
        *out_len = mp->pk_len;
        rc = 1;
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

static int check_cells(const st__row *r)
{
    for (int i = 1; i < r->n_cells; i++)
        if (st__cell_order(&r->cells[i - 1], &r->cells[i]) >= 0) return CS_ECORRUPT;
    return 0;
}

/* Consistency check for tests and tools: partitions and rows ordered, row
 * counts right, packed rows decodable, rows' cells sorted and unique; the
 * partition index (when on) finds every partition, and holds no other. */
int mt_check(mt_memtable *m)
{
    int rc = 0;
    pthread_rwlock_rdlock(&m->lock);
    if (st__btree_check(&m->parts)) rc = CS_ECORRUPT;
    size_t moved = 0;       /* slots of the old table also in the new one */
    for (size_t i = 0; m->idx_old.slots && i < m->idx_moved; i++) moved += m->idx_old.slots[i] != 0;
    if (!m->idx_off && m->idx.count + m->idx_old.count - moved != m->parts.count) rc = CS_ECORRUPT;
    st__biter it;
    st__btree_seek(&m->parts, NULL, false, &it);
    for (mt_partition *p; rc == 0 && (p = st__biter_get(&it)) != NULL; st__biter_next(&it)) {
        if (!m->idx_off && idx_find(m, p->token, p->pk, p->pk_len) != p) {
            rc = CS_ECORRUPT;
            break;
        }
        if (p->n_rows > ROWS_ARRAY_MAX && (st__btree_check(p->rows) || ((st__btree *)p->rows)->count != p->n_rows)) {
            rc = CS_ECORRUPT;
            break;
        }
        if (p->ext && p->ext->stat) rc = check_cells(p->ext->stat);
        rows_it ri;
        rows_seek(p, NULL, 0, false, &ri);
        const mt_row *prev = NULL;
        uint32_t n = 0;
        for (mt_row *r; rc == 0 && (r = rows_get(&ri)) != NULL; rows_next(&ri), n++) {
            if (prev && row_cmp(prev, r) >= 0) rc = CS_ECORRUPT;
            prev = r;
            cs_arena a;
            cs_arena_init(&a);
            st__row *v = row_view(r, &a);
            if (!v) rc = a.err ? CS_ENOMEM : CS_ECORRUPT;
            else rc = check_cells(v);
            cs_arena_destroy(&a);
        }
        if (rc == 0 && n != p->n_rows) rc = CS_ECORRUPT;
    }
    pthread_rwlock_unlock(&m->lock);
    return rc;
}

/* Prefetch the one row (the common case) of partition p, whose head has
 * arrived. */
static inline __attribute__((always_inline)) void prefetch_row(const mt_partition *p)
{
    if (p && p->n_rows == 1) {
        const char *r = p->rows;
        __builtin_prefetch(r);
        __builtin_prefetch(r + 64);
        __builtin_prefetch(r + 128);
    }
}

/* Hand every partition to the sink in order (see storage_int.h): its
 * header as a view that borrows the memtable's memory, then its rows:
 * packed ones as their bytes (decoded in an arena only if the sink
 * declines them), full ones as they are, a run of those at a time.  Used
 * by flush on a memtable no longer written to.
 *
 * Partitions lie in the slab in arrival order, not token order, so nearly
 * every one is a cache and TLB miss.  The walk takes them from the tree
 * WALK_BATCH at a time, prefetching the heads of a whole batch in one go
 * while the batch before is written (the misses, page walks included,
 * overlap instead of stalling one by one), and each partition's row
 * WALK_ROW_AHEAD partitions ahead, once its head has arrived. */
#define WALK_BATCH 16
#define WALK_ROW_AHEAD 4

/* Up to WALK_BATCH next partitions of it into b, their heads prefetched. */
static int walk_fill(st__biter *it, mt_partition **b)
{
    int n = 0;
    for (mt_partition *p; n < WALK_BATCH && (p = st__biter_get(it)) != NULL; st__biter_next(it)) {
        __builtin_prefetch(p);
        b[n++] = p;
    }
    return n;
}

int mt_foreach(mt_memtable *m, const mt_sink *s)
{
    int rc = 0;
    pthread_rwlock_rdlock(&m->lock);
    st__biter it;
    st__btree_seek(&m->parts, NULL, false, &it);
    mt_partition *bat[2][WALK_BATCH];
    int n_next = walk_fill(&it, bat[1]), cur = 0;
    cs_arena a;                                  /* reused; emptied past 1 MiB */
    cs_arena_init(&a);
    st__row **run = NULL;                        /* decoded rows not yet handed over */
    uint32_t cap_run = 0;
    for (int bi = 0, n_cur = 0; rc == 0; bi++) {
        if (bi == n_cur) {                       /* next batch */
            cur ^= 1;
            n_cur = n_next;
            if (n_cur == 0) break;
            n_next = walk_fill(&it, bat[cur ^ 1]);
            bi = 0;
        }
        mt_partition *mp = bat[cur][bi];
        int ra = bi + WALK_ROW_AHEAD;
        prefetch_row(ra < n_cur ? bat[cur][ra] : ra - n_cur < n_next ? bat[cur ^ 1][ra - n_cur] : NULL);
        if (a.used > (1u << 20)) { cs_arena_reset(&a); run = NULL; cap_run = 0; }   /* keeps its chunks: no page faults again */
        st__part p;
        memset(&p, 0, sizeof p);
        p.pk = mp->pk; p.pk_len = mp->pk_len; p.token = mp->token;
        p.pdel = mp->ext ? mp->ext->pdel : ST_NO_DELETION;
        if (mp->ext) {
            p.rts = mp->ext->rts; p.n_rts = p.cap_rts = mp->ext->n_rts;
            p.stat = mp->ext->stat;
        }
        rc = s->begin(s->arg, &p);
        rows_it ri;
        rows_seek(mp, NULL, 0, false, &ri);
        int n = 0;
        for (mt_row *r; rc == 0 && (r = rows_get(&ri)) != NULL; rows_next(&ri)) {
            if (!r->full) {
                if (n) { rc = s->rows(s->arg, run, n); n = 0; if (rc) break; }
                rc = s->packed(s->arg, r->data, r->ck_len, r->flags, r->data + r->ck_len, r->ops_len, r->n_cells);
                if (rc <= 0) continue;
                rc = 0;                          /* declined: decoded below */
            }
            if ((uint32_t)n == cap_run) {
                uint32_t nc = cap_run ? 2 * cap_run : 16;
                st__row **g = cs_arena_alloc(&a, nc * sizeof *g);
                if (!g) { rc = CS_ENOMEM; break; }
                if (n) memcpy(g, run, (size_t)n * sizeof *g);
                run = g;
                cap_run = nc;
            }
            st__row *v = row_view(r, &a);
            if (!v) { rc = a.err ? CS_ENOMEM : CS_ECORRUPT; break; }
            run[n++] = v;
        }
        if (rc == 0 && n) rc = s->rows(s->arg, run, n);
        if (rc == 0) rc = s->end(s->arg);
    }
    cs_arena_destroy(&a);
    pthread_rwlock_unlock(&m->lock);
    return rc;
}
