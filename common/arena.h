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
typedef struct cs_arena {
    cs_arena_chunk *head;  /* newest chunk */
    size_t used;           /* bytes handed out (for accounting) */
    int err;               /* sticky CS_ENOMEM */
    size_t chunk_max;      /* chunks double up to this (0: 64 KiB); see cs_arena_set_chunk_max */
} cs_arena;

void cs_arena_init(cs_arena *a);
void cs_arena_destroy(cs_arena *a);
void *cs_arena_alloc(cs_arena *a, size_t n);          /* 16-aligned, NULL on OOM */
void *cs_arena_zalloc(cs_arena *a, size_t n);
char *cs_arena_strndup(cs_arena *a, const char *s, size_t n);
char *cs_arena_strdup(cs_arena *a, const char *s);
void *cs_arena_memdup(cs_arena *a, const void *p, size_t n);
/* Keep up to 32 freed 4 KiB chunks on the calling thread for reuse by its
 * next arenas (the request loop enables it; off by default so leak counts in
 * tests stay exact).  Turning it off frees the cached chunks. */
void cs_arena_cache_enable(bool on);
/* Let chunks keep doubling up to max bytes (after init, before use), for
 * long-lived big arenas such as a memtable's slab. */
void cs_arena_set_chunk_max(cs_arena *a, size_t max);

#endif
