/*
 * block_cache.c: a process-wide LRU cache of decompressed sstable blocks,
 * keyed by (reader id, block number).  Reader ids are never reused, so the
 * blocks of a deleted sstable simply age out.  Capacity: st_config's
 * block_cache_size (file_cache_size, default 256 MiB, like Cassandra's chunk
 * cache min(512 MiB, heap/4)), or CASSETTE_BLOCK_CACHE_MB (0 disables).  It
 * is a bound, not a reservation: blocks are allocated as they are read, so
 * an idle server holds only the hash buckets (sized for the capacity, one
 * pointer per ~4 KiB block).  The cache lives while at least one
 * engine is open (st__cache_retain/release), so memory counters return to
 * zero after the last st_engine_close.  Thread-safe: 16 shards by key hash,
 * each with its own mutex and 1/16 of the capacity.  Replacement is CLOCK
 * (second chance), an LRU approximation: a hit only marks its entry, so it
 * touches no other entry's memory (an LRU move-to-front touched three);
 * eviction takes the tail, or gives a marked tail one more round.
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
#include <stdlib.h>
#include <string.h>

#define NSHARDS 16                    /* independent LRUs, each with its own mutex */
#define NBUCKETS_MIN 1024             /* hash buckets per shard, at least (a power of 2) */
#define DK_BITS 4096u                 /* recent-miss bitmap per shard */

typedef struct centry {
    uint64_t rid, blk;
    uint32_t len;
    bool ref;                         /* hit since it last came to the tail (CLOCK) */
    struct centry *hnext;             /* hash chain */
    struct centry *prev, *next;       /* list, head = newest; evicted from the tail */
    uint8_t data[];
} centry;

typedef struct cshard {
    pthread_mutex_t mu;
    centry **buckets;
    size_t nbuckets;                  /* a power of 2 */
    centry *head, *tail;
    size_t used, cap;
    uint64_t dk[DK_BITS / 64];        /* doorkeeper: blocks missed recently */
    uint32_t dk_n;                    /* bits set since the last clear */
} cshard;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;   /* g_refs, setup/teardown */
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
static size_t bucket_of(const cshard *sh, uint64_t h) { return (size_t)((h / NSHARDS) & (sh->nbuckets - 1)); }

static void lru_unlink(cshard *sh, centry *e)
{
    if (e->prev) e->prev->next = e->next; else sh->head = e->next;
    if (e->next) e->next->prev = e->prev; else sh->tail = e->prev;
    e->prev = e->next = NULL;
}

static void lru_push(cshard *sh, centry *e)
{
    e->prev = NULL;
    e->next = sh->head;
    if (sh->head) sh->head->prev = e;
    sh->head = e;
    if (!sh->tail) sh->tail = e;
}

/* The next block to evict: the tail, after giving marked tails a second
 * round at the head.  NULL if empty. */
static centry *clock_victim(cshard *sh)
{
    centry *e;
    while ((e = sh->tail) && e->ref) {
        e->ref = false;
        lru_unlink(sh, e);
        lru_push(sh, e);
    }
    return e;
}

static void evict(cshard *sh, centry *e)
{
    centry **pp = &sh->buckets[bucket_of(sh, key_hash(e->rid, e->blk))];
    while (*pp && *pp != e) pp = &(*pp)->hnext;
    if (*pp) *pp = e->hnext;
    lru_unlink(sh, e);
    sh->used -= sizeof *e + e->len;
    cs_free(e);
}

static void init_mutexes(void)
{
    for (int i = 0; i < NSHARDS; i++) pthread_mutex_init(&g_shards[i].mu, NULL);
}

/* Shard memory is set up by the first engine and freed by the last; the
 * shard mutexes live for the process.  A shard's bucket array is allocated
 * by its first insert, so a server that reads no sstable (a fresh test
 * database) neither pays for nor holds 512 KiB of buckets at 256 MiB. */
void st__cache_retain(size_t cap)
{
    pthread_once(&g_once, init_mutexes);
    pthread_mutex_lock(&g_mu);
    if (g_refs++ == 0) {
        const char *env = getenv("CASSETTE_BLOCK_CACHE_MB");
        if (env) cap = (size_t)strtoul(env, NULL, 10) << 20;
        /* about one bucket per block a full shard holds: chains stay ~1 long */
        size_t nb = NBUCKETS_MIN;
        while (nb < cap / NSHARDS / SST_BLOCK_SIZE && nb < ((size_t)1 << 24)) nb <<= 1;
        for (int i = 0; i < NSHARDS; i++) {
            cshard *sh = &g_shards[i];
            pthread_mutex_lock(&sh->mu);
            sh->head = sh->tail = NULL;
            sh->used = 0;
            sh->nbuckets = nb;
            sh->buckets = NULL;   /* allocated by the shard's first insert */
            sh->cap = cap / NSHARDS;
            pthread_mutex_unlock(&sh->mu);
        }
        atomic_store(&g_slot_cap, g_shards[0].cap);
    }
    pthread_mutex_unlock(&g_mu);
}

void st__cache_release(void)
{
    pthread_mutex_lock(&g_mu);
    if (--g_refs == 0) {
        atomic_store(&g_slot_cap, 0);
        for (int i = 0; i < NSHARDS; i++) {
            cshard *sh = &g_shards[i];
            pthread_mutex_lock(&sh->mu);
            while (sh->tail) evict(sh, sh->tail);
            cs_free(sh->buckets);
            sh->buckets = NULL;
            sh->cap = 0;
            pthread_mutex_unlock(&sh->mu);
        }
    }
    pthread_mutex_unlock(&g_mu);
}

bool sst__cache_get(uint64_t rid, uint64_t blk, uint32_t len, uint32_t off, uint8_t *dst, uint32_t n)
{
    bool hit = false;
    uint64_t h = key_hash(rid, blk);
    cshard *sh = shard_of(h);
    pthread_once(&g_once, init_mutexes);
    pthread_mutex_lock(&sh->mu);
    if (sh->buckets && (uint64_t)off + n <= len) {
        for (centry *e = sh->buckets[bucket_of(sh, h)]; e; e = e->hnext)
            if (e->rid == rid && e->blk == blk && e->len == len) {
                memcpy(dst, e->data + off, n);
                e->ref = true;
                hit = true;
                break;
            }
    }
    pthread_mutex_unlock(&sh->mu);
    return hit;
}

void sst__cache_put(uint64_t rid, uint64_t blk, const uint8_t *src, uint32_t len)
{
    uint8_t *d = sst__cache_slot(rid, blk, len);
    if (!d) return;
    memcpy(d, src, len);
    sst__cache_insert(rid, blk, d);
}

/* A slot for block (rid, blk) of len bytes, to be filled by the caller (a
 * miss decompresses straight into it) and handed to sst__cache_insert; NULL
 * if the cache is disabled, the block too big for it, or out of memory.
 * When the shard is full and its least recent block has the same length,
 * that block's memory is taken over (no free + malloc per miss). */
uint8_t *sst__cache_slot(uint64_t rid, uint64_t blk, uint32_t len)
{
    size_t cap = atomic_load(&g_slot_cap);   /* insert re-checks under the lock */
    if (cap == 0 || sizeof(centry) + len > cap / 2) return NULL;
    cshard *sh = shard_of(key_hash(rid, blk));
    centry *e = NULL;
    pthread_mutex_lock(&sh->mu);
    if (sh->buckets && sh->tail && sh->used + sizeof *e + len > sh->cap && clock_victim(sh)->len == len) {
        e = sh->tail;
        centry **pp = &sh->buckets[bucket_of(sh, key_hash(e->rid, e->blk))];
        while (*pp && *pp != e) pp = &(*pp)->hnext;
        if (*pp) *pp = e->hnext;
        lru_unlink(sh, e);
        sh->used -= sizeof *e + e->len;
    }
    pthread_mutex_unlock(&sh->mu);
    if (!e && !(e = cs_malloc(sizeof *e + len))) return NULL;
    e->len = len;
    return e->data;
}

/* Should a point read that missed block (rid, blk) of len bytes cache it?
 * Yes while the shard has room; else only on the block's second miss
 * within the doorkeeper's memory (the first one is only recorded). */
bool sst__cache_admit(uint64_t rid, uint64_t blk, uint32_t len)
{
    uint64_t h = key_hash(rid, blk);
    cshard *sh = shard_of(h);
    pthread_once(&g_once, init_mutexes);
    pthread_mutex_lock(&sh->mu);
    bool admit = true;
    if (sh->buckets && sh->used + sizeof(centry) + len > sh->cap) {
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

/* Give a filled slot to the cache as block (rid, blk); it takes ownership
 * (frees the slot if the cache went away meanwhile, or if another reader
 * cached the same block first). */
void sst__cache_insert(uint64_t rid, uint64_t blk, uint8_t *slot)
{
    centry *e = (centry *)(void *)(slot - offsetof(centry, data));
    uint64_t h = key_hash(rid, blk);
    cshard *sh = shard_of(h);
    pthread_once(&g_once, init_mutexes);
    pthread_mutex_lock(&sh->mu);
    centry *old = NULL;
    if (sh->buckets) {
        for (old = sh->buckets[bucket_of(sh, h)]; old; old = old->hnext)
            if (old->rid == rid && old->blk == blk) break;
        if (old && old->len == e->len) {
            old->ref = true;
            pthread_mutex_unlock(&sh->mu);
            cs_free(e);
            return;
        }
        if (old) evict(sh, old);
    }
    if (!sh->buckets && sh->cap)
        sh->buckets = cs_calloc(sh->nbuckets, sizeof *sh->buckets);
    if (sh->buckets && sizeof(centry) + e->len <= sh->cap / 2) {
        e->rid = rid; e->blk = blk;
        e->ref = false;
        size_t b = bucket_of(sh, h);
        e->hnext = sh->buckets[b];
        sh->buckets[b] = e;
        lru_push(sh, e);
        sh->used += sizeof *e + e->len;
        for (centry *v; sh->used > sh->cap && (v = clock_victim(sh)) && v != e;) evict(sh, v);
        e = NULL;
    }
    pthread_mutex_unlock(&sh->mu);
    cs_free(e);
}

/* Release a slot that was not inserted. */
void sst__cache_slot_free(uint8_t *slot)
{
    if (slot) cs_free(slot - offsetof(centry, data));
}
