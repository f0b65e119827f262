/*
 * reaper.c: teardown handed off by request threads.
 *
 * Dropping the last reference to a compacted-away sstable or a flushed
 * memtable means unmapping its Data.db, unlinking its files (the kernel
 * then drops their page cache) and freeing arrays and arenas of tens to
 * hundreds of MB: milliseconds of mostly kernel work.  The last reference
 * is often a read's: the compaction swapped the set while a point read on
 * a request loop still held the old readers.  A request loop that did the
 * teardown stalled every connection it serves for those milliseconds (at
 * 60k reads/s one such stall puts a second's p99 at 5-60 ms; see
 * docs/performance.md, "Teardown and slab faults off the request loop").
 *
 * So a thread that declares itself a request thread (st_foreground_thread)
 * hands such teardown to one helper thread here; every other thread (flush,
 * compaction, tools, unit tests) tears down inline as before.  The helper
 * starts with the first hand-off and stops with the last engine
 * (st__reaper_release, which first waits for the queue to drain, so files
 * are gone and memory is freed when st_engine_close returns).
 */
#include "storage/storage_int.h"
#include "common/alloc.h"

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>

typedef struct reap_item {
    struct reap_item *next;
    void (*fn)(void *);
    void *arg;
} reap_item;

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;                /* work queued, or stop */
    pthread_cond_t idle;              /* queue empty and nothing running */
    reap_item *head, *tail;
    bool running, stop, busy;
    int refs;                         /* open engines */
    pthread_t th;
    uint64_t done;
} g_reap = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER, .idle = PTHREAD_COND_INITIALIZER };

static _Thread_local bool tl_foreground;

void st_foreground_thread(bool on) { tl_foreground = on; }

bool st__foreground(void) { return tl_foreground; }

bool st__helper_start(pthread_t *th, void *(*fn)(void *), const char *name)
{
    /* the helper takes no signal meant for the process */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    bool ok = pthread_create(th, NULL, fn, NULL) == 0;
    if (ok) pthread_setname_np(*th, name);   /* for top -H and perf */
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return ok;
}

static void *reap_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&g_reap.mu);
    for (;;) {
        reap_item *it = g_reap.head;
        if (it) {
            g_reap.head = it->next;
            if (!g_reap.head) g_reap.tail = NULL;
            g_reap.busy = true;
            pthread_mutex_unlock(&g_reap.mu);
            it->fn(it->arg);
            cs_free(it);
            pthread_mutex_lock(&g_reap.mu);
            g_reap.busy = false;
            g_reap.done++;
            continue;
        }
        pthread_cond_broadcast(&g_reap.idle);
        if (g_reap.stop) break;
        pthread_cond_wait(&g_reap.cv, &g_reap.mu);
    }
    pthread_mutex_unlock(&g_reap.mu);
    return NULL;
}

bool st__reap(void (*fn)(void *), void *arg)
{
    if (!tl_foreground) return false;
    reap_item *it = cs_malloc(sizeof *it);
    if (!it) return false;
    it->next = NULL; it->fn = fn; it->arg = arg;
    pthread_mutex_lock(&g_reap.mu);
    if (g_reap.refs > 0 && !g_reap.stop && !g_reap.running)
        g_reap.running = st__helper_start(&g_reap.th, reap_main, "reaper");
    bool queued = g_reap.running && !g_reap.stop;
    if (queued) {
        if (g_reap.tail) g_reap.tail->next = it; else g_reap.head = it;
        g_reap.tail = it;
        pthread_cond_signal(&g_reap.cv);
    }
    pthread_mutex_unlock(&g_reap.mu);
    if (!queued) cs_free(it);
    return queued;
}

void st__reap_drain(void)
{
    pthread_mutex_lock(&g_reap.mu);
    while (g_reap.running && (g_reap.head || g_reap.busy)) pthread_cond_wait(&g_reap.idle, &g_reap.mu);
    pthread_mutex_unlock(&g_reap.mu);
}

uint64_t st__reaped(void)
{
    pthread_mutex_lock(&g_reap.mu);
    uint64_t n = g_reap.done;
    pthread_mutex_unlock(&g_reap.mu);
    return n;
}

void st__reaper_retain(void)
{
    pthread_mutex_lock(&g_reap.mu);
    g_reap.refs++;
    pthread_mutex_unlock(&g_reap.mu);
}

void st__reaper_release(void)
{
    st__reap_drain();
    pthread_mutex_lock(&g_reap.mu);
    bool last = --g_reap.refs == 0, join = last && g_reap.running;
    if (join) {
        g_reap.stop = true;
        pthread_cond_signal(&g_reap.cv);
    }
    pthread_mutex_unlock(&g_reap.mu);
    if (!join) return;
    pthread_join(g_reap.th, NULL);
    pthread_mutex_lock(&g_reap.mu);
    /* the helper drained the queue before it stopped; it holds nothing */
    g_reap.running = g_reap.stop = false;
    pthread_mutex_unlock(&g_reap.mu);
}
