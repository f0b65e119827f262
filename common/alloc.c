/*
 * alloc.c: the counting allocator.  Each block carries a 16-byte header with
 * its size so cs_free can account for it.
 *
 * Counting is per thread: each thread owns a slot (claimed on its first
 * allocation) that only it writes, with plain relaxed loads and stores, so
 * the hot path has no locked read-modify-write and no cache line shared
 * between the request loop and the flush/compaction threads (the shared
 * atomics used to cost more than the malloc on busy threads).  A block freed
 * by another thread than the one that allocated it makes both slots' sums
 * move, which is fine: only the total is meaningful.  cs_alloc_used/count sum
 * the slots (exact when no thread is allocating); a thread that exits folds
 * its slot into the global counters and releases it.  Threads beyond
 * MAX_SLOTS share the global atomics.
 */
#include "common/alloc.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define HDR 16
#define MAX_SLOTS 128

typedef struct {
    _Atomic size_t used;    /* bytes, modulo 2^64 (may "go negative") */
    _Atomic size_t count;
    atomic_bool taken;
    char pad[64 - 2 * sizeof(size_t) - sizeof(atomic_bool)];
} slot;

static _Alignas(64) slot slots[MAX_SLOTS];
static _Thread_local slot *my_slot;
static _Thread_local bool no_slot;   /* registry full: use the globals */
static pthread_key_t exit_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

static atomic_size_t used_bytes;   /* exited threads, overflow threads */
static atomic_size_t live_count;
static atomic_long fail_countdown;

static void slot_release(void *p)
{
    slot *sl = p;
    atomic_fetch_add(&used_bytes, atomic_load_explicit(&sl->used, memory_order_relaxed));
    atomic_fetch_add(&live_count, atomic_load_explicit(&sl->count, memory_order_relaxed));
    atomic_store_explicit(&sl->used, 0, memory_order_relaxed);
    atomic_store_explicit(&sl->count, 0, memory_order_relaxed);
    atomic_store(&sl->taken, false);
}

static void make_key(void) { pthread_key_create(&exit_key, slot_release); }

static slot *claim(void)
{
    if (no_slot) return NULL;
    pthread_once(&key_once, make_key);
    for (int i = 0; i < MAX_SLOTS; i++) {
        bool f = false;
        if (!atomic_load_explicit(&slots[i].taken, memory_order_relaxed) &&
            atomic_compare_exchange_strong(&slots[i].taken, &f, true)) {
            if (pthread_setspecific(exit_key, &slots[i]) != 0) {
                atomic_store(&slots[i].taken, false);
                break;
            }
            my_slot = &slots[i];
            return my_slot;
        }
    }
    no_slot = true;
    return NULL;
}

/* Add du bytes and dc blocks (both modulo 2^64) to this thread's counts. */
static inline void account(size_t du, size_t dc)
{
    slot *sl = my_slot;
    if (!sl && !(sl = claim())) {
        atomic_fetch_add_explicit(&used_bytes, du, memory_order_relaxed);
        atomic_fetch_add_explicit(&live_count, dc, memory_order_relaxed);
        return;
    }
    atomic_store_explicit(&sl->used, atomic_load_explicit(&sl->used, memory_order_relaxed) + du, memory_order_relaxed);
    atomic_store_explicit(&sl->count, atomic_load_explicit(&sl->count, memory_order_relaxed) + dc, memory_order_relaxed);
}

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
    account(n, 1);
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
    account(n - old, 0);   /* modulo 2^64: a shrink subtracts */
    return nb + HDR;
}

void cs_free(void *p)
{
    if (!p)
        return;
    unsigned char *b = (unsigned char *)p - HDR;
    size_t n;
    memcpy(&n, b, sizeof(n));
    account(0 - n, (size_t)0 - 1);
    free(b); /* raw-ok */
}

char *cs_strndup(const char *s, size_t n)
{
    char *d = cs_malloc(n + 1);
    if (!d)
        return NULL;
    if (n)
        memcpy(d, s, n);             /* s may be NULL when n is 0 (an empty cs_buf) */
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

static size_t sum(size_t base, size_t slot_off)
{
    size_t t = base;
    for (int i = 0; i < MAX_SLOTS; i++)
        t += atomic_load_explicit((_Atomic size_t *)((char *)&slots[i] + slot_off), memory_order_relaxed);
    return t;
}

size_t cs_alloc_used(void) { return sum(atomic_load(&used_bytes), offsetof(slot, used)); }
size_t cs_alloc_count(void) { return sum(atomic_load(&live_count), offsetof(slot, count)); }
void cs_alloc_fail_nth(long n) { atomic_store(&fail_countdown, n); }

void *cs_map_aligned(size_t n, size_t align, int huge, int fault)
{
    /* map align more than asked, keep the aligned part */
    uint8_t *m = mmap(NULL, n + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return NULL;
    uint8_t *a = (uint8_t *)(((uintptr_t)m + align - 1) & ~(uintptr_t)(align - 1));
    if (a > m) munmap(m, (size_t)(a - m));
    if (a + n < m + n + align) munmap(a + n, (size_t)(m + n + align - (a + n)));
#ifdef MADV_HUGEPAGE
    if (huge) (void)madvise(a, n, MADV_HUGEPAGE);
#else
    (void)huge;
#endif
    if (fault)
        for (size_t o = 0; o < n; o += 4096) ((volatile uint8_t *)a)[o] = 0;
    return a;
}
