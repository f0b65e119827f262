/* arena.c: bump allocator (see arena.h). */
#include "common/arena.h"
#include "common/alloc.h"
#include "common/err.h"
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

struct cs_arena_chunk {
    cs_arena_chunk *next;
    size_t size, used;
    _Alignas(16) unsigned char data[];
};

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

static cs_arena_chunk *chunk_new(size_t sz)
{
    if (sz == CHUNK_MIN && tl_cache.n > 0)
        return tl_cache.c[--tl_cache.n];
    return cs_malloc(sizeof(cs_arena_chunk) + sz);
}

static void chunk_free(cs_arena_chunk *c)
{
    if (tl_cache.on && c->size == CHUNK_MIN && tl_cache.n < CACHE_MAX)
        tl_cache.c[tl_cache.n++] = c;
    else
        cs_free(c);
}

void cs_arena_init(cs_arena *a) { a->head = NULL; a->used = 0; a->err = 0; a->chunk_max = 0; }

void cs_arena_set_chunk_max(cs_arena *a, size_t max) { a->chunk_max = max; }

void cs_arena_destroy(cs_arena *a)
{
    cs_arena_chunk *c = a->head;
    while (c) {
        cs_arena_chunk *n = c->next;
        chunk_free(c);
        c = n;
    }
    cs_arena_init(a);
}

void *cs_arena_alloc(cs_arena *a, size_t n)
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
        cs_arena_chunk *nc = chunk_new(sz);
        if (!nc) {
            a->err = CS_ENOMEM;
            return NULL;
        }
        nc->size = sz;
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

char *cs_arena_strndup(cs_arena *a, const char *s, size_t n)
{
    char *d = cs_arena_alloc(a, n + 1);
    if (!d)
        return NULL;
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

char *cs_arena_strdup(cs_arena *a, const char *s) { return cs_arena_strndup(a, s, strlen(s)); }

void *cs_arena_memdup(cs_arena *a, const void *p, size_t n)
{
    void *d = cs_arena_alloc(a, n);
    if (d && n)
        memcpy(d, p, n);
    return d;
}
