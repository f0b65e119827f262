/* arena.c: bump allocator (see arena.h). */
#include "common/arena.h"
#include "common/alloc.h"
#include "common/err.h"
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define CHUNK_MIN 4096
#define CACHE_MAX 32

/* Per-thread cache of CHUNK_MIN chunks (see cs_arena_cache_enable): a
 * request builds and drops several small arenas, and a 4 KiB malloc/free
 * pair per arena goes through malloc's slow path. */
static _Thread_local struct {
    bool on;
    int n;
    cs_arena_chunk *c[CACHE_MAX];
} tl_cache;

void cs_arena_cache_enable(bool on)
{
    tl_cache.on = on;
    if (!on) {
        while (tl_cache.n > 0)
            cs_free(tl_cache.c[--tl_cache.n]);
    }
}

struct cs_chunk_pool {
    _Atomic int refs;
    pthread_mutex_t mu;
    size_t chunk_size, max;     /* bytes per chunk, bytes kept at most */
    cs_arena_chunk *free;       /* the stock, linked by next */
    size_t n, low;              /* chunks in stock, and its low mark since the last trim */
};

cs_chunk_pool *cs_chunk_pool_new(size_t chunk_size, size_t max_bytes)
{
    cs_chunk_pool *p = cs_calloc(1, sizeof *p);
    if (!p)
        return NULL;
    pthread_mutex_init(&p->mu, NULL);
    p->refs = 1;
    p->chunk_size = chunk_size;
    p->max = max_bytes;
    return p;
}

static void chunks_free_raw(cs_arena_chunk *c)
{
    while (c) {
        cs_arena_chunk *n = c->next;
        cs_free(c);
        c = n;
    }
}

void cs_chunk_pool_ref(cs_chunk_pool *p) { p->refs++; }

void cs_chunk_pool_unref(cs_chunk_pool *p)
{
    if (!p || --p->refs > 0)
        return;
    chunks_free_raw(p->free);
    pthread_mutex_destroy(&p->mu);
    cs_free(p);
}

void cs_chunk_pool_trim(cs_chunk_pool *p)
{
    cs_arena_chunk *drop = NULL;
    pthread_mutex_lock(&p->mu);
    for (size_t k = p->low; k > 0 && p->free; k--) {
        cs_arena_chunk *c = p->free;
        p->free = c->next;
        c->next = drop;
        drop = c;
        p->n--;
    }
    p->low = p->n;
    pthread_mutex_unlock(&p->mu);
    chunks_free_raw(drop);   /* outside the lock */
}

size_t cs_chunk_pool_bytes(cs_chunk_pool *p)
{
    pthread_mutex_lock(&p->mu);
    size_t b = p->n * p->chunk_size;
    pthread_mutex_unlock(&p->mu);
    return b;
}

static cs_arena_chunk *pool_take(cs_chunk_pool *p)
{
    pthread_mutex_lock(&p->mu);
    cs_arena_chunk *c = p->free;
    if (c) {
        p->free = c->next;
        if (--p->n < p->low)
            p->low = p->n;
    }
    pthread_mutex_unlock(&p->mu);
    return c;
}

static bool pool_give(cs_chunk_pool *p, cs_arena_chunk *c)
{
    pthread_mutex_lock(&p->mu);
    bool kept = (p->n + 1) * p->chunk_size <= p->max;
    if (kept) {
        c->next = p->free;
        p->free = c;
        p->n++;
    }
    pthread_mutex_unlock(&p->mu);
    return kept;
}

static cs_arena_chunk *chunk_new(cs_arena *a, size_t sz)
{
    if (sz == CHUNK_MIN && tl_cache.n > 0)
        return tl_cache.c[--tl_cache.n];
    if (a->pool && sz == a->pool->chunk_size) {
        cs_arena_chunk *c = pool_take(a->pool);
        if (c)
            return c;
    }
    return cs_malloc(sizeof(cs_arena_chunk) + sz);
}

static void chunk_free(cs_arena *a, cs_arena_chunk *c)
{
    if (tl_cache.on && c->size == CHUNK_MIN && tl_cache.n < CACHE_MAX)
        tl_cache.c[tl_cache.n++] = c;
    else if (!(a->pool && c->size == a->pool->chunk_size && pool_give(a->pool, c)))
        cs_free(c);
}

void cs_arena_set_pool(cs_arena *a, cs_chunk_pool *p) { a->pool = p; }

void cs_arena_init(cs_arena *a)
{
    a->head = NULL;
    a->spare = NULL;
    a->pool = NULL;
    a->used = 0;
    a->err = 0;
    a->chunk_max = 0;
}

void cs_arena_set_chunk_max(cs_arena *a, size_t max) { a->chunk_max = max; }

static void chunks_free(cs_arena *a, cs_arena_chunk *c)
{
    while (c) {
        cs_arena_chunk *n = c->next;
        chunk_free(a, c);
        c = n;
    }
}

void cs_arena_destroy(cs_arena *a)
{
    chunks_free(a, a->head);
    chunks_free(a, a->spare);
    cs_arena_init(a);
}

void cs_arena_reset(cs_arena *a)
{
    cs_arena_chunk *c = a->head;
    while (c) {
        cs_arena_chunk *n = c->next;
        c->used = 0;
        c->next = a->spare;
        a->spare = c;
        c = n;
    }
    a->head = NULL;
    a->used = 0;
    a->err = 0;
}

/* A kept chunk for an allocation of n bytes, unlinked, or NULL.  So that
 * the same allocations after a reset find the chunks they had: a small
 * allocation takes the first regular chunk (at most cap bytes; reset left
 * them oldest, so smallest, first), a big one-off the smallest that fits. */
static cs_arena_chunk *spare_take(cs_arena *a, size_t n, size_t cap)
{
    cs_arena_chunk **best = NULL;
    for (cs_arena_chunk **pp = &a->spare; *pp; pp = &(*pp)->next) {
        size_t sz = (*pp)->size;
        if (sz < n)
            continue;
        if (n <= CHUNK_MIN && sz <= cap) {
            best = pp;
            break;
        }
        if (!best || sz < (*best)->size)
            best = pp;
    }
    if (!best)
        return NULL;
    cs_arena_chunk *c = *best;
    *best = c->next;
    return c;
}

void *cs_arena__alloc_slow(cs_arena *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (n == 0)
        n = 16;
    cs_arena_chunk *c = a->head;
    if (!c || c->size - c->used < n) {
        size_t cap = a->chunk_max ? a->chunk_max : 65536;
        size_t sz = n > CHUNK_MIN ? n : (c ? (c->size < cap ? c->size * 2 : cap) : CHUNK_MIN);
        if (sz < n)
            sz = n;
        cs_arena_chunk *nc = a->spare ? spare_take(a, n, cap) : NULL;
        if (!nc) {
            nc = chunk_new(a, sz);
            if (!nc) {
                a->err = CS_ENOMEM;
                return NULL;
            }
            nc->size = sz;
        }
        nc->used = 0;
        if (c && n > CHUNK_MIN && c->size - c->used > 256) {
            /* big one-off: keep the current chunk as head for small allocations */
            nc->next = c->next;
            c->next = nc;
            nc->used = n;
            a->used += n;
            return nc->data;
        }
        nc->next = c;
        a->head = c = nc;
    }
    void *p = c->data + c->used;
    c->used += n;
    a->used += n;
    return p;
}

void *cs_arena_zalloc(cs_arena *a, size_t n)
{
    void *p = cs_arena_alloc(a, n);
    if (p)
        memset(p, 0, n);
    return p;
}

char *cs_arena_strndup(cs_arena *a, const char *s, size_t n) { return cs_arena_memdup0(a, s, n); }

char *cs_arena_strdup(cs_arena *a, const char *s) { return cs_arena_strndup(a, s, strlen(s)); }

void *cs_arena_memdup0(cs_arena *a, const void *p, size_t n)
{
    unsigned char *d = cs_arena_alloc(a, n + 1);
    if (!d)
        return NULL;
    if (n)
        memcpy(d, p, n);
    d[n] = 0;
    return d;
}

void *cs_arena_memdup(cs_arena *a, const void *p, size_t n)
{
    void *d = cs_arena_alloc(a, n);
    if (d && n)
        memcpy(d, p, n);
    return d;
}
