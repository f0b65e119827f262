/*
 * block_cache.c: a process-wide cache of decompressed sstable blocks, keyed
 * by (reader id, block number).  Reader ids are never reused, so the blocks
 * of a deleted sstable simply age out.  Capacity: st_config's
 * block_cache_size (file_cache_size, default 256 MiB, like Cassandra's chunk
 * cache min(512 MiB, heap/4)), or CASSETTE_BLOCK_CACHE_MB (0 disables).  It
 * is a bound, not a reservation: blocks are allocated as they are read, so
 * an idle server holds nothing; a shard's slot table (sized for the
 * capacity, 32 bytes per ~2 KiB of it) is allocated by its first insert.
 * In shards of at least SLAB_MIN_CAP, blocks of up to SST_BLOCK_SIZE bytes
 * live in 2 MiB slabs asked for as transparent huge pages (see ent_alloc),
 * so a hit does not also miss the TLB; other blocks are cs_malloc'd.  A
 * helper thread faults slabs in ahead of need (see "Slabs are faulted
 * in"), so no read pays for a huge page's first touch.
 * The cache lives while at least one engine is open (st__cache_retain/
 * release), so memory counters return to zero after the last
 * st_engine_close.  Thread-safe: 16 shards by key hash, each with its own
 * mutex and 1/16 of the capacity.
 *
 * A shard is an open-addressing table (linear probing, backward-shift
 * deletion) of 32-byte slots holding the key, the length, the CLOCK mark
 * and the block's pointer: a hit reads one slot (one cache line, usually
 * the home slot) and then only the bytes it copies, never a block header
 * or a chain (a chained table cost a miss on the bucket, one on the entry
 * header, and a write to it for the mark).  Replacement is CLOCK (second
 * chance), an LRU approximation, with the hand sweeping the slot table: a
 * hit only marks its slot; eviction takes the first unmarked slot after
 * the hand, unmarking the ones it passes.  A new block starts marked, so
 * it survives at least one sweep.
 * Admission (sst__cache_admit, asked by point reads): once the shard is
 * full, a block missed by a point read enters the cache only if it was
 * missed recently too (a small per-shard bitmap of recent misses, cleared
 * as it fills: TinyLFU's doorkeeper).  Random point reads over data much
 * larger than the cache then decode into a scratch buffer instead of
 * evicting a block and writing 4 KiB of cold memory per miss, while blocks
 * read again soon still get in.
 */
#include "storage/sstable_int.h"
#include "common/alloc.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/mman.h>

#define NSHARDS 16                    /* independent tables, each with its own mutex */
#define REF_HIT 1u
#define REF_WARM 2u
#define NSLOTS_MIN 2048               /* slots per shard, at least (a power of 2) */
#define NSLOTS_MAX ((size_t)1 << 26)
#define DK_BITS 4096u                 /* recent-miss bitmap per shard */
#define SLAB_BYTES ((size_t)2 << 20)  /* one transparent huge page */
#define SLAB_MIN_CAP ((size_t)4 << 20) /* shards at least this big take blocks from slabs */

/* A cached block: its bytes, after a 16-byte header (the slot holds the key). */
typedef struct centry {
    uint32_t len;
    uint16_t shard;                   /* whose slab it is from (slab) */
    uint16_t slab;                    /* 1: a SLAB_ENTRY-byte piece of a slab, else cs_malloc'd */
    struct centry *next_free;         /* slab free list */
    uint8_t data[];
} centry;

/* Blocks of up to SST_BLOCK_SIZE bytes in a big shard live in slabs: 2 MiB
 * regions asked for as huge pages (madvise), carved in pieces of this size
 * and recycled through a per-shard free list.  With malloc'd 4 KiB blocks
 * every hit of a 256 MiB cache also missed the TLB (64k pages). */
#define SLAB_ENTRY (sizeof(centry) + SST_BLOCK_SIZE)

/* One table slot (rid 0: empty; reader ids start at 1). */
typedef struct cslot {
    uint64_t rid, blk;
    uint32_t len;
    uint32_t ref;                     /* REF_HIT: hit since the hand last passed (CLOCK);
                                         REF_WARM: put by sst__cache_warm, not hit yet */
    centry *e;
} cslot;

typedef struct cshard {
    pthread_mutex_t mu;
    cslot *slots;                     /* NULL until the first insert */
    size_t nslots;                    /* a power of 2 */
    size_t count;                     /* occupied slots */
    size_t hand;                      /* CLOCK hand: a slot index */
    size_t used, cap;
    _Atomic(cslot *) pf;              /* slots and nslots for sst__cache_prefetch, which reads */
    atomic_size_t pf_n;               /* them without the lock (a stale pair only misaims a prefetch) */
    void **slabs; size_t n_slabs, cap_slabs;   /* mmap'd, SLAB_BYTES each */
    uint8_t *carve; size_t carve_left;   /* the newest slab's uncarved part */
    centry *free_ents;                /* freed slab pieces */
    uint64_t hits, requests;          /* sst__cache_get (system_views.caches) */
    size_t warm_unread;               /* slots with REF_WARM: room for sst__cache_admit */
    uint64_t dk[DK_BITS / 64];        /* doorkeeper: blocks missed recently */
    uint32_t dk_n;                    /* bits set since the last clear */
} cshard;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;   /* g_refs, setup/teardown */
/* Time spent loading missed blocks (read, CRC, decompress), as Cassandra's
 * ChunkCache MissLatency: nodetool info prints the mean. */
static atomic_uint_fast64_t g_miss_ns, g_miss_n;
static cshard g_shards[NSHARDS];
static int g_refs;
static atomic_size_t g_slot_cap;      /* per-shard capacity, for sst__cache_slot */
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static atomic_uint_least64_t g_next_rid = 1;

uint64_t sst__cache_new_id(void) { return atomic_fetch_add(&g_next_rid, 1); }

static uint64_t key_hash(uint64_t rid, uint64_t blk)
{
    uint64_t h = (rid * 0x9E3779B97F4A7C15ull) ^ (blk + 0x632BE59BD9B4E019ull + (rid << 6));
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    return h;
}

static cshard *shard_of(uint64_t h) { return &g_shards[h % NSHARDS]; }
static size_t home_of(size_t nslots, uint64_t h) { return (size_t)((h / NSHARDS) & (nslots - 1)); }

/* The slot of (rid, blk), or SIZE_MAX. */
static size_t find(const cshard *sh, uint64_t h, uint64_t rid, uint64_t blk)
{
    size_t mask = sh->nslots - 1;
    for (size_t i = home_of(sh->nslots, h);; i = (i + 1) & mask) {
        const cslot *s = &sh->slots[i];
        if (s->rid == rid && s->blk == blk) return i;
        if (s->rid == 0) return SIZE_MAX;
    }
}

/* Empty slot i, shifting later members of its probe run back so every key
 * stays reachable from its home slot. */
static void slot_remove(cshard *sh, size_t i)
{
    size_t mask = sh->nslots - 1;
    size_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        cslot *s = &sh->slots[j];
        if (s->rid == 0) break;
        size_t home = home_of(sh->nslots, key_hash(s->rid, s->blk));
        /* s may fill the hole at i if its home is not in (i, j] (cyclically) */
        if (((j - home) & mask) >= ((j - i) & mask)) {
            sh->slots[i] = *s;
            i = j;
        }
    }
    memset(&sh->slots[i], 0, sizeof sh->slots[i]);
    sh->count--;
}

static void slot_put(cslot *slots, size_t nslots, uint64_t h, const cslot *v)
{
    size_t i = home_of(nslots, h);
    while (slots[i].rid) i = (i + 1) & (nslots - 1);
    slots[i] = *v;
}

/* The next slot to evict (CLOCK): the first unmarked occupied slot from
 * the hand on, unmarking the marked ones passed.  SIZE_MAX if empty. */
static size_t clock_victim(cshard *sh)
{
    if (!sh->count) return SIZE_MAX;
    size_t mask = sh->nslots - 1;
    for (;;) {
        size_t i = sh->hand;
        sh->hand = (i + 1) & mask;
        cslot *s = &sh->slots[i];
        if (!s->rid) continue;
        if (s->ref & REF_HIT) { s->ref &= ~REF_HIT; continue; }
        return i;
    }
}

/* Remove slot i and return its block (not freed). */
static size_t ent_bytes(const centry *e) { return e->slab ? SLAB_ENTRY : sizeof *e + e->len; }

/* Slabs are faulted in by a helper thread, never by the read that needs
 * one: on this project's VMs the first touch of a 2 MiB huge page costs
 * 1-5 ms (the guest zeroes it, the host faults its own pages in), and a
 * request loop taking that fault stalls every connection it serves (a
 * cold 256 MiB cache meant ~0.5 s of such stalls in its first seconds, the
 * SELECT p99 of docs/performance.md).  Once a shard asks, the helper keeps
 * up to SPARE_SLABS faulted-in slabs ready, never making more than the
 * shards may still take (g_grow.left); a shard that finds none asks, and
 * its blocks are cs_malloc'd (4 KiB faults, ~1.5 us each) meanwhile.  The
 * helper starts with the first request, so a server that reads no sstable
 * has no extra thread; it stops with the cache (st__cache_release). */
#define SPARE_SLABS 4

static struct {
    pthread_mutex_t mu;               /* after a shard's mutex, never before */
    pthread_cond_t cv;
    void *spare[SPARE_SLABS];
    int n_spare;
    size_t left;                      /* slabs the shards may still take, less those made */
    bool wanted;                      /* a shard asked since the helper last filled up */
    bool running, stop;
    pthread_t th;
    uint64_t made, waited;            /* slabs made; asks that found none ready */
} g_grow = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

/* A 2 MiB-aligned slab, faulted in (huge if THP allows); NULL if none. */
static void *map_slab(void)
{
    return cs_map_aligned(SLAB_BYTES, SLAB_BYTES, 1, 1);
}

static void *grow_main(void *arg)
{
    (void)arg;
#ifdef SCHED_IDLE
    /* Background work whose first touches of huge pages cost 1-5 ms of
     * kernel time each: SCHED_IDLE, so a request loop waking on its CPU
     * takes it back (at normal priority the helper had its CPU share:
     * perf sched showed it on the CPU for 15 of the 58 ms a half-max
     * INSERT run's loop waited).  If it starves, a shard takes 4 KiB
     * blocks meanwhile (spare_take). */
    struct sched_param sp = { .sched_priority = 0 };
    (void)pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp);
#endif
    pthread_mutex_lock(&g_grow.mu);
    while (!g_grow.stop) {
        if (g_grow.wanted && g_grow.n_spare < SPARE_SLABS && g_grow.left > 0) {
            g_grow.left--;
            pthread_mutex_unlock(&g_grow.mu);
            void *a = map_slab();
            pthread_mutex_lock(&g_grow.mu);
            if (!a) {                    /* out of memory: try again when asked again */
                g_grow.left++;
                g_grow.wanted = false;
                continue;
            }
            g_grow.spare[g_grow.n_spare++] = a;
            g_grow.made++;
            continue;
        }
        g_grow.wanted = false;
        pthread_cond_wait(&g_grow.cv, &g_grow.mu);
    }
    pthread_mutex_unlock(&g_grow.mu);
    return NULL;
}

/* A ready slab, or NULL; either way the helper is asked to make more. */
static void *spare_take(void)
{
    void *a = NULL;
    pthread_mutex_lock(&g_grow.mu);
    if (g_grow.n_spare) a = g_grow.spare[--g_grow.n_spare];
    else g_grow.waited++;
    if (!g_grow.stop && (g_grow.left || g_grow.n_spare)) {
        if (!g_grow.running) g_grow.running = st__helper_start(&g_grow.th, grow_main, "cache-slabs");
        g_grow.wanted = true;
        pthread_cond_signal(&g_grow.cv);
    }
    pthread_mutex_unlock(&g_grow.mu);
    return a;
}

/* Stop the helper and unmap its spare slabs (the last engine closed). */
static void grow_stop(void)
{
    pthread_mutex_lock(&g_grow.mu);
    bool running = g_grow.running;
    g_grow.stop = true;
    pthread_cond_signal(&g_grow.cv);
    pthread_mutex_unlock(&g_grow.mu);
    if (running) pthread_join(g_grow.th, NULL);
    pthread_mutex_lock(&g_grow.mu);
    while (g_grow.n_spare) munmap(g_grow.spare[--g_grow.n_spare], SLAB_BYTES);
    g_grow.running = g_grow.stop = g_grow.wanted = false;
    g_grow.left = 0;
    pthread_mutex_unlock(&g_grow.mu);
}

void sst__cache_slab_stats(uint64_t *made, uint64_t *waited, int *spare)
{
    pthread_mutex_lock(&g_grow.mu);
    *made = g_grow.made;
    *waited = g_grow.waited;
    *spare = g_grow.n_spare;
    pthread_mutex_unlock(&g_grow.mu);
}

/* Add a ready slab to shard sh (locked) and carve from it; false if none. */
static bool new_slab(cshard *sh)
{
    if (sh->n_slabs == sh->cap_slabs) {
        size_t n = sh->cap_slabs * 2 + 8;
        void **ns = cs_realloc(sh->slabs, sizeof(void *) * n);
        if (!ns) return false;
        sh->slabs = ns;
        sh->cap_slabs = n;
    }
    uint8_t *a = spare_take();
    if (!a) return false;
    sh->slabs[sh->n_slabs++] = a;
    sh->carve = a;
    sh->carve_left = SLAB_BYTES;
    return true;
}

/* A block buffer of len bytes for shard sh (locked): a slab piece if the
 * shard uses slabs, else (or if no slab can be had) cs_malloc'd.  NULL if
 * out of memory. */
static centry *ent_alloc(cshard *sh, uint32_t len)
{
    centry *e = NULL;
    if (len <= SST_BLOCK_SIZE && sh->cap >= SLAB_MIN_CAP) {
        if ((e = sh->free_ents)) {
            sh->free_ents = e->next_free;
        } else {
            if (sh->carve_left < SLAB_ENTRY && sh->n_slabs * SLAB_BYTES < sh->cap + SLAB_BYTES)
                new_slab(sh);
            if (sh->carve_left >= SLAB_ENTRY) {
                e = (centry *)(void *)sh->carve;
                sh->carve += SLAB_ENTRY;
                sh->carve_left -= SLAB_ENTRY;
            }
        }
        if (e) {
            e->slab = 1;
            e->shard = (uint16_t)(sh - g_shards);
        }
    }
    if (!e && (e = cs_malloc(sizeof *e + len))) e->slab = 0;
    if (e) e->len = len;
    return e;
}

/* Free a block buffer of shard sh (locked). */
static void ent_free(cshard *sh, centry *e)
{
    if (!e) return;
    if (!e->slab) { cs_free(e); return; }
    e->next_free = sh->free_ents;
    sh->free_ents = e;
}

/* Slot i was hit: mark it (CLOCK); a warmed block is now a read one. */
static void slot_hit(cshard *sh, cslot *s)
{
    if (s->ref & REF_WARM) sh->warm_unread--;
    s->ref = REF_HIT;
}

static centry *take(cshard *sh, size_t i)
{
    centry *e = sh->slots[i].e;
    if (sh->slots[i].ref & REF_WARM) sh->warm_unread--;
    sh->used -= ent_bytes(e);
    slot_remove(sh, i);
    return e;
}

/* Double the slot table (keeps it at most 3/4 full); false if out of memory. */
static bool grow(cshard *sh)
{
    if (sh->nslots >= NSLOTS_MAX) return false;
    size_t n = sh->nslots * 2;
    cslot *ns = cs_calloc(n, sizeof *ns);
    if (!ns) return false;
    for (size_t i = 0; i < sh->nslots; i++)
        if (sh->slots[i].rid) slot_put(ns, n, key_hash(sh->slots[i].rid, sh->slots[i].blk), &sh->slots[i]);
    cs_free(sh->slots);
    sh->slots = ns;
    sh->nslots = n;
    sh->hand = 0;
    atomic_store_explicit(&sh->pf_n, n, memory_order_relaxed);
    atomic_store_explicit(&sh->pf, ns, memory_order_relaxed);
    return true;
}

static void init_mutexes(void)
{
    for (int i = 0; i < NSHARDS; i++) pthread_mutex_init(&g_shards[i].mu, NULL);
}

/* The shard of block (rid, blk), locked; *h receives the block's hash. */
static cshard *lock_shard(uint64_t rid, uint64_t blk, uint64_t *h)
{
    *h = key_hash(rid, blk);
    cshard *sh = shard_of(*h);
    pthread_once(&g_once, init_mutexes);
    pthread_mutex_lock(&sh->mu);
    return sh;
}

/* Shard memory is set up by the first engine and freed by the last; the
 * shard mutexes live for the process.  A shard's slot table is allocated
 * by its first insert, so a server that reads no sstable (a fresh test
 * database) neither pays for nor holds it. */
void st__cache_retain(size_t cap)
{
    pthread_once(&g_once, init_mutexes);
    pthread_mutex_lock(&g_mu);
    if (g_refs++ == 0) {
        const char *env = getenv("CASSETTE_BLOCK_CACHE_MB");
        if (env) cap = (size_t)strtoul(env, NULL, 10) << 20;
        /* about two slots per block a full shard holds: probe runs stay short */
        size_t ns = NSLOTS_MIN;
        while (ns < 2 * (cap / NSHARDS / SST_BLOCK_SIZE) && ns < NSLOTS_MAX) ns <<= 1;
        for (int i = 0; i < NSHARDS; i++) {
            cshard *sh = &g_shards[i];
            pthread_mutex_lock(&sh->mu);
            sh->slots = NULL;   /* allocated by the shard's first insert */
            sh->nslots = ns;
            atomic_store_explicit(&sh->pf, NULL, memory_order_relaxed);
            atomic_store_explicit(&sh->pf_n, ns, memory_order_relaxed);
            sh->count = sh->hand = sh->used = 0;
            sh->cap = cap / NSHARDS;
            pthread_mutex_unlock(&sh->mu);
        }
        atomic_store(&g_slot_cap, g_shards[0].cap);
        size_t per = g_shards[0].cap >= SLAB_MIN_CAP ? (g_shards[0].cap + SLAB_BYTES - 1) / SLAB_BYTES : 0;
        pthread_mutex_lock(&g_grow.mu);
        g_grow.left = per * NSHARDS;   /* ent_alloc's bound: n_slabs * SLAB_BYTES < cap + SLAB_BYTES */
        pthread_mutex_unlock(&g_grow.mu);
    }
    pthread_mutex_unlock(&g_mu);
}

void st__cache_release(void)
{
    pthread_mutex_lock(&g_mu);
    if (--g_refs == 0) {
        atomic_store(&g_slot_cap, 0);
        grow_stop();
        for (int i = 0; i < NSHARDS; i++) {
            cshard *sh = &g_shards[i];
            pthread_mutex_lock(&sh->mu);
            for (size_t k = 0; sh->slots && k < sh->nslots; k++) ent_free(sh, sh->slots[k].e);
            for (size_t k = 0; k < sh->n_slabs; k++) munmap(sh->slabs[k], SLAB_BYTES);
            cs_free(sh->slabs);
            sh->slabs = NULL;
            sh->n_slabs = sh->cap_slabs = 0;
            sh->carve = NULL;
            sh->carve_left = 0;
            sh->free_ents = NULL;
            atomic_store_explicit(&sh->pf, NULL, memory_order_relaxed);
            cs_free(sh->slots);
            sh->slots = NULL;
            sh->count = sh->used = sh->cap = 0;
            sh->warm_unread = 0;
            pthread_mutex_unlock(&sh->mu);
        }
    }
    pthread_mutex_unlock(&g_mu);
}

bool sst__cache_get(uint64_t rid, uint64_t blk, uint32_t len, uint32_t off, uint8_t *dst, uint32_t n)
{
    bool hit = false;
    uint64_t h;
    cshard *sh = lock_shard(rid, blk, &h);
    if (sh->slots && (uint64_t)off + n <= len) {
        size_t i = find(sh, h, rid, blk);
        if (i != SIZE_MAX && sh->slots[i].len == len) {
            cslot *s = &sh->slots[i];
            memcpy(dst, s->e->data + off, n);
            slot_hit(sh, s);
            hit = true;
        }
    }
    sh->requests++;
    sh->hits += hit;
    pthread_mutex_unlock(&sh->mu);
    return hit;
}

void sst__cache_miss_time(uint64_t ns)
{
    atomic_fetch_add_explicit(&g_miss_ns, ns, memory_order_relaxed);
    atomic_fetch_add_explicit(&g_miss_n, 1, memory_order_relaxed);
}

void st_block_cache_stats_get(st_block_cache_stats *out)
{
    memset(out, 0, sizeof *out);
    pthread_once(&g_once, init_mutexes);
    for (int i = 0; i < NSHARDS; i++) {
        cshard *sh = &g_shards[i];
        pthread_mutex_lock(&sh->mu);
        out->capacity_bytes += sh->cap;
        out->size_bytes += sh->used;
        out->entries += sh->count;
        out->hits += sh->hits;
        out->requests += sh->requests;
        pthread_mutex_unlock(&sh->mu);
    }
    out->miss_ns = atomic_load_explicit(&g_miss_ns, memory_order_relaxed);
    out->misses_timed = atomic_load_explicit(&g_miss_n, memory_order_relaxed);
}

/* Start loading the slot where block (rid, blk) would be, without the lock:
 * a read that knows its block early (from the index entry) overlaps this
 * miss with other work (the memtable lookup) before sst__cache_get. */
void sst__cache_prefetch(uint64_t rid, uint64_t blk)
{
    uint64_t h = key_hash(rid, blk);
    cshard *sh = shard_of(h);
    cslot *s = atomic_load_explicit(&sh->pf, memory_order_relaxed);
    size_t n = atomic_load_explicit(&sh->pf_n, memory_order_relaxed);
    if (s && n) __builtin_prefetch(s + home_of(n, h));
}

/* Start loading bytes [off, off+n) of block (rid, blk) if it is cached
 * (at most 4 lines): a point read does this before its memtable lookup,
 * which then overlaps the miss on the bytes sst__cache_get copies. */
void sst__cache_prefetch_bytes(uint64_t rid, uint64_t blk, uint32_t off, uint32_t n)
{
    uint64_t h;
    cshard *sh = lock_shard(rid, blk, &h);
    if (sh->slots) {
        size_t i = find(sh, h, rid, blk);
        if (i != SIZE_MAX && off < sh->slots[i].len) {
            const uint8_t *p = sh->slots[i].e->data + off;
            for (uint32_t k = 0; k < n && k < 256; k += 64) __builtin_prefetch(p + k);
        }
    }
    pthread_mutex_unlock(&sh->mu);
}

void sst__cache_put(uint64_t rid, uint64_t blk, const uint8_t *src, uint32_t len)
{
    uint8_t *d = sst__cache_slot(rid, blk, len);
    if (!d) return;
    memcpy(d, src, len);
    sst__cache_insert(rid, blk, d);
}

/* A buffer for block (rid, blk) of len bytes, to be filled by the caller (a
 * miss decompresses straight into it) and handed to sst__cache_insert; NULL
 * if the cache is disabled, the block too big for it, or out of memory.
 * When the shard is full and its next victim has the same length, that
 * block's memory is taken over (no free + malloc per miss). */
uint8_t *sst__cache_slot(uint64_t rid, uint64_t blk, uint32_t len)
{
    size_t cap = atomic_load(&g_slot_cap);   /* insert re-checks under the lock */
    if (cap == 0 || sizeof(centry) + len > cap / 2) return NULL;
    cshard *sh = shard_of(key_hash(rid, blk));
    centry *e = NULL;
    pthread_mutex_lock(&sh->mu);
    if (sh->slots && sh->used + sizeof *e + len > sh->cap) {
        size_t v = clock_victim(sh);
        if (v != SIZE_MAX && (sh->slots[v].e->slab ? len <= SST_BLOCK_SIZE : sh->slots[v].len == len)) {
            e = take(sh, v);
            e->len = len;
        }
    }
    if (!e) e = ent_alloc(sh, len);
    pthread_mutex_unlock(&sh->mu);
    return e ? e->data : NULL;
}

/* Should a point read that missed block (rid, blk) of len bytes cache it?
 * Yes while the shard has room; else only on the block's second miss
 * within the doorkeeper's memory (the first one is only recorded). */
bool sst__cache_admit(uint64_t rid, uint64_t blk, uint32_t len)
{
    uint64_t h;
    cshard *sh = lock_shard(rid, blk, &h);
    bool admit = true;
    /* blocks put by flushes and compactions and never read count as room:
     * they go first (CLOCK passes them unmarked) */
    if (sh->slots && sh->used + sizeof(centry) + len > sh->cap && !sh->warm_unread) {
        uint32_t bit = (uint32_t)(h >> 40) % DK_BITS;
        uint64_t m = 1ull << (bit % 64);
        admit = (sh->dk[bit / 64] & m) != 0;
        if (!admit) {
            /* forget after about a shard's worth of blocks */
            size_t limit = sh->cap / ((size_t)len + sizeof(centry)) + 1;
            if (limit > DK_BITS / 4) limit = DK_BITS / 4;
            if (++sh->dk_n > limit) { memset(sh->dk, 0, sizeof sh->dk); sh->dk_n = 1; }
            sh->dk[bit / 64] |= m;
        }
    }
    pthread_mutex_unlock(&sh->mu);
    return admit;
}

/* Shard sh (locked) gets its slot table with its first block (a server
 * that reads no sstable holds none); NULL stays if out of memory. */
static void slots_ensure(cshard *sh)
{
    if (!sh->slots && sh->cap && sh->nslots) {
        sh->slots = cs_calloc(sh->nslots, sizeof *sh->slots);
        atomic_store_explicit(&sh->pf, sh->slots, memory_order_relaxed);
    }
}

/* Give a filled buffer to the cache as block (rid, blk); it takes ownership
 * (frees the buffer if the cache went away meanwhile, or if another reader
 * cached the same block first). */
void sst__cache_insert(uint64_t rid, uint64_t blk, uint8_t *slot)
{
    centry *e = (centry *)(void *)(slot - offsetof(centry, data));
    uint64_t h;
    cshard *sh = lock_shard(rid, blk, &h);
    if (sh->slots) {
        size_t i = find(sh, h, rid, blk);
        if (i != SIZE_MAX && sh->slots[i].len == e->len) {
            slot_hit(sh, &sh->slots[i]);
            ent_free(sh, e);
            pthread_mutex_unlock(&sh->mu);
            return;
        }
        if (i != SIZE_MAX) ent_free(sh, take(sh, i));
    }
    slots_ensure(sh);
    if (sh->slots && sizeof(centry) + e->len <= sh->cap / 2 &&
        ((sh->count + 1) * 4 <= sh->nslots * 3 || grow(sh))) {
        cslot v = { .rid = rid, .blk = blk, .len = e->len, .ref = REF_HIT, .e = e };
        slot_put(sh->slots, sh->nslots, h, &v);
        sh->count++;
        sh->used += ent_bytes(e);
        while (sh->used > sh->cap) {
            size_t x = clock_victim(sh);
            if (x == SIZE_MAX || sh->slots[x].e == e) break;
            ent_free(sh, take(sh, x));
        }
        e = NULL;
    }
    ent_free(sh, e);
    pthread_mutex_unlock(&sh->mu);
}

void sst__cache_warm(uint64_t rid, uint64_t blk, const uint8_t *src, uint32_t len)
{
    if (atomic_load(&g_slot_cap) == 0) return;
    uint64_t h;
    cshard *sh = lock_shard(rid, blk, &h);
    slots_ensure(sh);
    /* only into room a slab piece or an allocation can fill: never evict,
     * never grow the slot table, never replace a block */
    centry *e = NULL;
    if (sh->slots && sh->used + sizeof(centry) + SST_BLOCK_SIZE <= sh->cap && len <= SST_BLOCK_SIZE &&
        (sh->count + 1) * 4 <= sh->nslots * 3 && find(sh, h, rid, blk) == SIZE_MAX && (e = ent_alloc(sh, len))) {
        memcpy(e->data, src, len);
        cslot v = { .rid = rid, .blk = blk, .len = len, .ref = REF_WARM, .e = e };
        slot_put(sh->slots, sh->nslots, h, &v);
        sh->count++;
        sh->warm_unread++;
        sh->used += ent_bytes(e);
    }
    pthread_mutex_unlock(&sh->mu);
}

void sst__cache_forget(uint64_t rid)
{
    pthread_once(&g_once, init_mutexes);
    for (int k = 0; k < NSHARDS; k++) {
        cshard *sh = &g_shards[k];
        pthread_mutex_lock(&sh->mu);
        /* backward-shift deletion may move a later slot (or, wrapping, the
         * first) into i: look at i again after a removal */
        for (size_t i = 0; sh->slots && i < sh->nslots;) {
            if (sh->slots[i].rid == rid) ent_free(sh, take(sh, i));
            else i++;
        }
        pthread_mutex_unlock(&sh->mu);
    }
}

/* Release a buffer that was not inserted. */
void sst__cache_slot_free(uint8_t *slot)
{
    if (!slot) return;
    centry *e = (centry *)(void *)(slot - offsetof(centry, data));
    if (!e->slab) { cs_free(e); return; }
    cshard *sh = &g_shards[e->shard];
    pthread_mutex_lock(&sh->mu);
    ent_free(sh, e);
    pthread_mutex_unlock(&sh->mu);
}
