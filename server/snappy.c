/*
 * snappy.c: libsnappy loaded on first use (see snappy.h).
 */
#include "server/snappy.h"
#include "common/log.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <pthread.h>
#include <snappy-c.h>

static struct {
    __typeof__(&snappy_compress) compress;
    __typeof__(&snappy_uncompress) uncompress;
    __typeof__(&snappy_uncompressed_length) uncompressed_length;
    __typeof__(&snappy_max_compressed_length) max_compressed_length;
    bool ok;
    _Atomic bool tried;               /* load has run (whatever its outcome) */
} g;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void load(void)
{
    void *h = dlopen("libsnappy.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        CS_WARN("snappy: cannot load libsnappy.so.1 (%s): clients asking for snappy are refused", dlerror());
        return;
    }
    /* POSIX: a function pointer through a void * (dlsym's documented use) */
    *(void **)&g.compress = dlsym(h, "snappy_compress");
    *(void **)&g.uncompress = dlsym(h, "snappy_uncompress");
    *(void **)&g.uncompressed_length = dlsym(h, "snappy_uncompressed_length");
    *(void **)&g.max_compressed_length = dlsym(h, "snappy_max_compressed_length");
    g.ok = g.compress && g.uncompress && g.uncompressed_length && g.max_compressed_length;
    if (!g.ok)
        CS_WARN("snappy: libsnappy.so.1 lacks its C functions: clients asking for snappy are refused");
}

bool srv_snappy_available(void)
{
    pthread_once(&g_once, load);
    atomic_store_explicit(&g.tried, true, memory_order_release);
    return g.ok;
}

bool srv_snappy_known_missing(void)
{
    /* g.ok is written by load before `tried` is set (pthread_once and the
     * release above order them) */
    return atomic_load_explicit(&g.tried, memory_order_acquire) && !g.ok;
}

int srv_snappy_compress(const char *in, size_t n, char *out, size_t *out_n)
{
    return g.ok ? (int)g.compress(in, n, out, out_n) : (int)SNAPPY_INVALID_INPUT;
}

int srv_snappy_uncompress(const char *in, size_t n, char *out, size_t *out_n)
{
    return g.ok ? (int)g.uncompress(in, n, out, out_n) : (int)SNAPPY_INVALID_INPUT;
}

int srv_snappy_uncompressed_length(const char *in, size_t n, size_t *len)
{
    return g.ok ? (int)g.uncompressed_length(in, n, len) : (int)SNAPPY_INVALID_INPUT;
}

size_t srv_snappy_max_compressed_length(size_t n)
{
    return g.ok ? g.max_compressed_length(n) : 0;
}
