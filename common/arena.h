/*
 * arena.h: bump allocator for things that die together (a statement's AST,
 * a request's bound values and result rows).  Memory comes from cs_malloc in
 * chunks; cs_arena_destroy frees everything.  Not thread-safe.
 */
#ifndef CS_ARENA_H
#define CS_ARENA_H

#include <stdbool.h>
#include <stddef.h>

typedef struct cs_arena_chunk cs_arena_chunk;
typedef struct cs_chunk_pool cs_chunk_pool;
/* A chunk: visible only for cs_arena_alloc's inline fast path below. */
struct cs_arena_chunk {
    cs_arena_chunk *next;
    size_t size, used;
    _Alignas(16) unsigned char data[];
};
typedef struct cs_arena {
    cs_arena_chunk *head;  /* newest chunk */
    cs_arena_chunk *spare; /* chunks kept by cs_arena_reset, handed out again first */
    cs_chunk_pool *pool;   /* chunks of its size come from and go back to it (NULL: none) */
    size_t used;           /* bytes handed out (for accounting) */
    int err;               /* sticky CS_ENOMEM */
    size_t chunk_max;      /* chunks double up to this (0: 64 KiB); see cs_arena_set_chunk_max */
} cs_arena;

void cs_arena_init(cs_arena *a);
void cs_arena_destroy(cs_arena *a);
/* Free everything handed out but keep the chunks for the next allocations:
 * for an arena emptied again and again (a flush's or a compaction's rows,
 * a scan's windows), so its memory is not returned to malloc, and maybe
 * to the kernel, only to be faulted in again. */
void cs_arena_reset(cs_arena *a);
/* 16-aligned, NULL on OOM.  Inline: a request allocates dozens of small
 * things (2-3% of the request loop as a call with its saved registers);
 * a new chunk is cs_arena__alloc_slow's. */
void *cs_arena__alloc_slow(cs_arena *a, size_t n);
static inline void *cs_arena_alloc(cs_arena *a, size_t n)
{
    size_t r = (n + 15) & ~(size_t)15;
    cs_arena_chunk *c = a->head;
    if (r && c && c->size - c->used >= r) {
        void *p = c->data + c->used;
        c->used += r;
        a->used += r;
        return p;
    }
    return cs_arena__alloc_slow(a, n);
}
void *cs_arena_zalloc(cs_arena *a, size_t n);
char *cs_arena_strndup(cs_arena *a, const char *s, size_t n);
char *cs_arena_strdup(cs_arena *a, const char *s);
void *cs_arena_memdup(cs_arena *a, const void *p, size_t n);
/* n bytes of p (p may be NULL when n is 0) and a NUL after them: reads only
 * those n bytes. */
void *cs_arena_memdup0(cs_arena *a, const void *p, size_t n);
/* Keep up to 32 freed 4 KiB chunks on the calling thread for reuse by its
 * next arenas (the request loop enables it; off by default so leak counts in
 * tests stay exact).  Turning it off frees the cached chunks. */
void cs_arena_cache_enable(bool on);
/* Let chunks keep doubling up to max bytes (after init, before use), for
 * long-lived big arenas such as a memtable's slab. */
void cs_arena_set_chunk_max(cs_arena *a, size_t max);

/* A thread-safe stock of freed arena chunks of one size, for arenas that
 * come and go holding many such chunks (memtables: chunk_max = the pool's
 * chunk size).  A chunk a destroyed arena gives back is handed to the next
 * arena instead of being freed, so its pages need not be faulted in (and
 * zeroed) again; on a VM that returns freed memory to its host, that
 * fault is a host fault too.  At most max_bytes are kept. */
cs_chunk_pool *cs_chunk_pool_new(size_t chunk_size, size_t max_bytes);   /* one reference */
void cs_chunk_pool_ref(cs_chunk_pool *p);
void cs_chunk_pool_unref(cs_chunk_pool *p);      /* the last one frees it and its chunks */
/* Free the chunks no arena has needed since the previous trim (the low
 * mark of the stock in between), so an idle process gives the memory
 * back; call it every few seconds. */
void cs_chunk_pool_trim(cs_chunk_pool *p);
size_t cs_chunk_pool_bytes(cs_chunk_pool *p);    /* held now */
/* Take chunks of the pool's size from p and give them back to it (after
 * init, before use; p must outlive the arena: hold a reference). */
void cs_arena_set_pool(cs_arena *a, cs_chunk_pool *p);

#endif
