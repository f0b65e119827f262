/*
 * alloc.h: the counting allocator.  Every allocation in cassette goes through
 * these (lint: `make lint-malloc` greps for raw malloc/free).  The count feeds
 * memtable caps and leak checks in unit tests; the fail-Nth hook drives OOM
 * tests.  Thread-safe (atomic counters).
 */
#ifndef CS_ALLOC_H
#define CS_ALLOC_H

#include <stddef.h>
#include <stdint.h>

void *cs_malloc(size_t n);            /* NULL on failure (or injected failure) */
void *cs_calloc(size_t n, size_t sz);
void *cs_realloc(void *p, size_t n);
void cs_free(void *p);                /* NULL is fine */
char *cs_strdup(const char *s);
char *cs_strndup(const char *s, size_t n);
void *cs_memdup(const void *p, size_t n);

size_t cs_alloc_used(void);           /* live bytes allocated through cs_* */
size_t cs_alloc_count(void);          /* live allocations */
/* Make the Nth allocation from now fail (1 = the next); 0 disables. Tests only. */
void cs_alloc_fail_nth(long n);

/* n bytes of zeroed anonymous memory at an `align`-aligned address (a power
 * of two, at least the page size), outside the counting allocator: for big
 * tables and slabs that want huge pages.  huge: advise transparent huge
 * pages; fault: touch every page now (on this thread, not the first
 * user's).  NULL if the kernel says no.  Freed with munmap(p, n). */
void *cs_map_aligned(size_t n, size_t align, int huge, int fault);

#endif
