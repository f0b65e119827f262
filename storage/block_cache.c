/*
 * block_cache.c: a process-wide LRU cache of decompressed sstable blocks,
 * keyed by (reader id, block number).  Reader ids are never reused, so the
 * blocks of a deleted sstable simply age out.  Capacity: 32 MiB, or
 * CASSETTE_BLOCK_CACHE_MB (0 disables).  The cache lives while at least one
 * engine is open (st__cache_retain/release), so memory counters return to
 * zero after the last st_engine_close.  Thread-safe (one mutex).
 */
#include "storage/sstable_int.h"
#include "common/alloc.h"

#include <stdlib.h>
#include <string.h>

#define NBUCKETS 8192

typedef struct centry {
    uint64_t rid, blk;
    uint32_t len;
    struct centry *hnext;             /* hash chain */
    struct centry *prev, *next;       /* LRU list, head = most recent */
    uint8_t data[];
} centry;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static centry **g_buckets;
static centry *g_head, *g_tail;
static size_t g_used, g_cap;
static int g_refs;
static atomic_uint_least64_t g_next_rid = 1;

uint64_t sst__cache_new_id(void) { return atomic_fetch_add(&g_next_rid, 1); }

static size_t bucket(uint64_t rid, uint64_t blk)
{
    uint64_t h = (rid * 0x9E3779B97F4A7C15ull) ^ (blk + 0x632BE59BD9B4E019ull + (rid << 6));
    h ^= h >> 29;
    return (size_t)(h % NBUCKETS);
}

static void lru_unlink(centry *e)
{
    if (e->prev) e->prev->next = e->next; else g_head = e->next;
    if (e->next) e->next->prev = e->prev; else g_tail = e->prev;
    e->prev = e->next = NULL;
}

static void lru_push(centry *e)
{
    e->prev = NULL;
    e->next = g_head;
    if (g_head) g_head->prev = e;
    g_head = e;
    if (!g_tail) g_tail = e;
}

static void evict(centry *e)
{
    centry **pp = &g_buckets[bucket(e->rid, e->blk)];
    while (*pp && *pp != e) pp = &(*pp)->hnext;
    if (*pp) *pp = e->hnext;
    lru_unlink(e);
    g_used -= sizeof *e + e->len;
    cs_free(e);
}

void st__cache_retain(void)
{
    pthread_mutex_lock(&g_mu);
    if (g_refs++ == 0) {
        const char *env = getenv("CASSETTE_BLOCK_CACHE_MB");
        g_cap = (env ? (size_t)strtoul(env, NULL, 10) : 32) << 20;
        g_buckets = g_cap ? cs_calloc(NBUCKETS, sizeof *g_buckets) : NULL;
        if (!g_buckets) g_cap = 0;
    }
    pthread_mutex_unlock(&g_mu);
}

void st__cache_release(void)
{
    pthread_mutex_lock(&g_mu);
    if (--g_refs == 0) {
        while (g_tail) evict(g_tail);
        cs_free(g_buckets);
        g_buckets = NULL;
        g_cap = 0;
    }
    pthread_mutex_unlock(&g_mu);
}

bool sst__cache_get(uint64_t rid, uint64_t blk, uint8_t *dst, uint32_t len)
{
    bool hit = false;
    pthread_mutex_lock(&g_mu);
    if (g_buckets) {
        for (centry *e = g_buckets[bucket(rid, blk)]; e; e = e->hnext)
            if (e->rid == rid && e->blk == blk && e->len == len) {
                memcpy(dst, e->data, len);
                lru_unlink(e);
                lru_push(e);
                hit = true;
                break;
            }
    }
    pthread_mutex_unlock(&g_mu);
    return hit;
}

void sst__cache_put(uint64_t rid, uint64_t blk, const uint8_t *src, uint32_t len)
{
    pthread_mutex_lock(&g_mu);
    if (g_buckets && sizeof(centry) + len <= g_cap / 8) {
        centry *e = cs_malloc(sizeof *e + len);
        if (e) {
            e->rid = rid; e->blk = blk; e->len = len;
            memcpy(e->data, src, len);
            size_t b = bucket(rid, blk);
            e->hnext = g_buckets[b];
            g_buckets[b] = e;
            lru_push(e);
            g_used += sizeof *e + len;
            while (g_used > g_cap && g_tail && g_tail != e) evict(g_tail);
        }
    }
    pthread_mutex_unlock(&g_mu);
}
