/*
 * alloc.c: the counting allocator.  Each block carries a 16-byte header with
 * its size so cs_free can account for it.  Counters are atomics.
 */
#include "common/alloc.h"
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define HDR 16

static atomic_size_t used_bytes;
static atomic_size_t live_count;
static atomic_long fail_countdown;

static int should_fail(void)
{
    long n = atomic_load_explicit(&fail_countdown, memory_order_relaxed);
    if (n <= 0)
        return 0;
    n = atomic_fetch_sub(&fail_countdown, 1);
    return n == 1;
}

void *cs_malloc(size_t n)
{
    if (should_fail() || n > SIZE_MAX - HDR)
        return NULL;
    unsigned char *p = malloc(n + HDR); /* raw-ok */
    if (!p)
        return NULL;
    memcpy(p, &n, sizeof(n));
    atomic_fetch_add_explicit(&used_bytes, n, memory_order_relaxed);
    atomic_fetch_add_explicit(&live_count, 1, memory_order_relaxed);
    return p + HDR;
}

void *cs_calloc(size_t n, size_t sz)
{
    if (sz && n > SIZE_MAX / sz)
        return NULL;
    void *p = cs_malloc(n * sz);
    if (p)
        memset(p, 0, n * sz);
    return p;
}

void *cs_realloc(void *p, size_t n)
{
    if (!p)
        return cs_malloc(n);
    if (should_fail() || n > SIZE_MAX - HDR)
        return NULL;
    unsigned char *b = (unsigned char *)p - HDR;
    size_t old;
    memcpy(&old, b, sizeof(old));
    unsigned char *nb = realloc(b, n + HDR); /* raw-ok */
    if (!nb)
        return NULL;
    memcpy(nb, &n, sizeof(n));
    if (n >= old)
        atomic_fetch_add_explicit(&used_bytes, n - old, memory_order_relaxed);
    else
        atomic_fetch_sub_explicit(&used_bytes, old - n, memory_order_relaxed);
    return nb + HDR;
}

void cs_free(void *p)
{
    if (!p)
        return;
    unsigned char *b = (unsigned char *)p - HDR;
    size_t n;
    memcpy(&n, b, sizeof(n));
    atomic_fetch_sub_explicit(&used_bytes, n, memory_order_relaxed);
    atomic_fetch_sub_explicit(&live_count, 1, memory_order_relaxed);
    free(b); /* raw-ok */
}

char *cs_strndup(const char *s, size_t n)
{
    char *d = cs_malloc(n + 1);
    if (!d)
        return NULL;
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

char *cs_strdup(const char *s) { return s ? cs_strndup(s, strlen(s)) : NULL; }

void *cs_memdup(const void *p, size_t n)
{
    void *d = cs_malloc(n ? n : 1);
    if (d && n)
        memcpy(d, p, n);
    return d;
}

size_t cs_alloc_used(void) { return atomic_load(&used_bytes); }
size_t cs_alloc_count(void) { return atomic_load(&live_count); }
void cs_alloc_fail_nth(long n) { atomic_store(&fail_countdown, n); }
