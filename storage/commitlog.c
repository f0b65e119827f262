/*
 * commitlog.c: the write-ahead log (format: docs/format/commitlog.md); its
 * reading side (replay, dump) is commitlog_replay.c.
 *
 * Segments are files CommitLog-2-<id>.log of at most segment_size bytes,
 * written append-only.  One record per st_write.  Invariants:
 *   1. Segment ids only grow; a position (segment id, end offset) orders all
 *      records ever written.
 *   2. When a segment fills, its fd moves to a pending list and the next
 *      one is created at once; every sync fsyncs the pending fds (and the
 *      directory if a segment was created) before the active segment, so
 *      "synced past P" still covers every earlier segment.  No fsync ever
 *      runs on the appending (request loop) thread.
 *   3. A segment is retired (clog_recycle) only when every table that wrote
 *      to it reports a clean position past the segment's end.
 *   4. Segments present at open are "old": replayed, never appended to.
 *   5. A record's length CRC is seeded with its segment's header CRC, which
 *      covers the segment id: bytes left in a reused file from its earlier
 *      segments never read as records of the current one.
 *
 *   clog_open ──> [active] ──clog_append──> full? ──seg_switch──> [closed, dirty]
 *                                clog_recycle ──> [doomed] ──clog_reap──> spare
 *                                                 (CommitLogSpare-<id>.log) or deleted
 *   seg_create: rename a spare to the new segment's name and overwrite it
 *   (else create the file).
 *
 * Reuse: writing into a file whose pages are still in the page cache costs
 *   a copy; appending to a new file costs a page allocation per 4 KiB too,
 *   and on a VM that returns freed memory to its host (virtio-balloon free
 *   page reporting), a host fault as well: ~17% of the request loop's time
 *   at 390k INSERT/s here, 1.4% with reuse (docs/performance.md).  Spares
 *   are kept up to memtable_heap_space bytes (a flush cycle's worth of
 *   log), at most half of commitlog_total_space; clog_close deletes them
 *   and cuts the active segment at its last record.  Until the first
 *   segment is recycled there are none, so a background thread
 *   (alloc_main, "commitlog-alloc", like Cassandra's segment allocator)
 *   prepares one: once the active segment (of 1 MiB or more) is half
 *   full and no spare is listed, it writes a new spare full of zeros and
 *   fdatasyncs it, so the next segment's pages are in the page cache and
 *   its blocks on disk before the request loop writes there (and a
 *   batch-mode fdatasync of the first records commits no block
 *   allocation).
 *
 * Deferred writes (clog_defer): on a thread that enabled them, appends go
 *   to an in-memory tail (wbuf) written with one pwrite by clog_flush, which
 *   the server calls before it sends any reply, so a pipelined batch of
 *   writes costs one system call and an acknowledged write is always in the
 *   kernel (it survives a process crash, as before).  Every sync, segment
 *   switch and close writes the tail first.
 *
 * Syncing: a background thread (sync_main) fsyncs the active segment
 *   periodic: every sync_period_ms (and when a waiter asks);
 *   batch:    as soon as a waiter asks, or, while the writers a round
 *             acknowledged come back within half an fsync, once they have
 *             (bounded gathering, gather_plan);
 *   group:    at most once per sync_group_window_ms, shared by all waiters.
 * Waiters registered by clog_sync_wait are completed on their own libuv loop
 * through one uv_async_t per loop (notifier), each loop woken once per round.  A waiter registered on a
 * deferring thread does not wake the sync thread itself: the notifier's
 * uv_check handle does, once, after the loop iteration that registered it,
 * so every write read in one iteration shares one fsync (and no fsync
 * starts before the iteration's deferred records exist); its uv_idle handle,
 * active until then, keeps the next poll from blocking when the waiter was
 * registered after this iteration's check phase began.  In batch and
 * group modes the active segment is zero-filled ahead of the writes
 * (seg_prealloc), so an fdatasync commits no file-size change.
 */
#include "storage/commitlog_int.h"
#include "common/alloc.h"
#include "common/err.h"
#include "common/hash.h"
#include "common/log.h"
#include "common/util.h"
#include "common/vfs.h"

#include <errno.h>
#include <fcntl.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uv.h>

/* l->total += d (d wraps for a decrease), under mu: one writer at a time,
 * so no atomic read-modify-write. */
static inline void total_add(clog *l, uint64_t d)
{
    atomic_store_explicit(&l->total, atomic_load_explicit(&l->total, memory_order_relaxed) + d,
                          memory_order_relaxed);
}

/* ---------------------------------------------------------------- segments */

#define WBUF_MAX (256u << 10)        /* write the deferred tail once this big */

static _Thread_local bool tl_defer;

void clog_defer(bool on) { tl_defer = on; }

static clog_seg *active(clog *l);

/* Write the deferred tail to the active segment.  Caller holds mu. */
static int wbuf_write(clog *l)
{
    if (l->wlen == 0) return l->werr;
    clog_seg *s = active(l);
    int rc = 0;
    if (!s || s->fd < 0) rc = CS_EIO;
    else {
        ssize_t w = vfs_pwrite(s->fd, l->wbuf, l->wlen, l->woff);
        if (w < 0) rc = (int)w;
    }
    if (rc) {
        if (!l->werr)
            CS_ERROR("commitlog: deferred write failed: %s; further writes are refused", cs_strerror(rc));
        l->werr = rc;
    }
    l->wlen = 0;
    return rc;
}

static int seg_push(clog *l, clog_seg *s)
{
    if (l->n_segs == l->cap_segs) {
        int nc = l->cap_segs ? l->cap_segs * 2 : 8;
        clog_seg **n = cs_realloc(l->segs, (size_t)nc * sizeof *n);
        if (!n) return CS_ENOMEM;
        l->segs = n; l->cap_segs = nc;
    }
    l->segs[l->n_segs++] = s;
    return 0;
}

static void seg_free(clog_seg *s)
{
    if (!s) return;
    if (s->fd >= 0) vfs_close(s->fd);
    cs_free(s->path);
    cs_free(s->dirty);
    cs_free(s);
}

char *clog__seg_path(const char *dir, unsigned ver, uint64_t id)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s/CommitLog-%u-%" PRIu64 ".log", dir, ver, id);
    return cs_strdup(buf);
}

/* Append a spare (path owned by the list from now on) to l's list, growing
 * it; false if it cannot grow.  Caller holds mu (or is clog_open). */
static bool spare_push(clog *l, char *path, uint64_t len)
{
    if (l->n_spares == l->cap_spares) {
        int nc = l->cap_spares ? l->cap_spares * 2 : 8;
        clog_spare *ns = cs_realloc(l->spares, (size_t)nc * sizeof *ns);
        if (!ns) return false;
        l->spares = ns;
        l->cap_spares = nc;
    }
    l->spares[l->n_spares++] = (clog_spare){ path, len };
    return true;
}

static char *spare_path(const char *dir, uint64_t id)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s/CommitLogSpare-%" PRIu64 ".log", dir, id);
    return cs_strdup(buf);
}

/* Open s->path for a new segment: a spare renamed to it (newest first: its
 * pages are the likeliest to be cached), else a new file.  Sets s->fd and,
 * for a spare, s->zeroed to its length (blocks already there).  Returns
 * CLOG_F_REUSED, 0, or an error.  Caller holds mu. */
static int seg_file(clog *l, clog_seg *s)
{
    while (l->n_spares > 0) {
        clog_spare sp = l->spares[--l->n_spares];
        l->spare_bytes -= sp.len;
        int rc = vfs_rename(sp.path, s->path);
        if (!rc && (s->fd = vfs_open(s->path, O_WRONLY, 0644)) >= 0) {
            cs_free(sp.path);
            s->zeroed = sp.len;
            return (int)CLOG_F_REUSED;
        }
        CS_WARN("commitlog: cannot reuse %s: %s", sp.path, cs_strerror(rc ? rc : s->fd));
        vfs_unlink(rc ? sp.path : s->path);
        cs_free(sp.path);
    }
    s->fd = vfs_open(s->path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    return s->fd < 0 ? s->fd : 0;
}

/* Create a new active segment with its header.  Caller holds mu. */
static int seg_create(clog *l)
{
    clog_seg *s = cs_calloc(1, sizeof *s);
    if (!s) return CS_ENOMEM;
    s->id = l->next_id++;
    s->ver = CLOG_VERSION;
    s->path = clog__seg_path(l->dir, s->ver, s->id);
    if (!s->path) { cs_free(s); return CS_ENOMEM; }
    int flags = seg_file(l, s);
    if (flags < 0) { s->fd = -1; seg_free(s); return flags; }
    uint8_t h[CLOG_HDR];
    cs_st32(h, CLOG_MAGIC);
    cs_st32(h + 4, CLOG_VERSION);
    cs_st64(h + 8, s->id);
    cs_st32(h + 16, (uint32_t)flags);
    s->seed = cs_crc32c(0, h, 20);
    cs_st32(h + 20, s->seed);
    ssize_t w = vfs_pwrite(s->fd, h, CLOG_HDR, 0);
    if (w < 0) { vfs_unlink(s->path); seg_free(s); return (int)w; }
    s->size = CLOG_HDR;
    if (seg_push(l, s)) { vfs_unlink(s->path); seg_free(s); return CS_ENOMEM; }
    total_add(l, CLOG_HDR);
    l->written.segment = s->id;
    l->written.offset = CLOG_HDR;
    l->dir_dirty = true;   /* the next sync makes the new file durable */
    return 0;
}

/* A record's bytes at d: header, payload, trailer. */
static void put_record(uint8_t *d, const uint8_t *h, const void *p, size_t n, const uint8_t *t)
{
    memcpy(d, h, CLOG_REC_HDR);
    memcpy(d + CLOG_REC_HDR, p, n);
    memcpy(d + CLOG_REC_HDR + n, t, CLOG_REC_TRL);
}

void clog__seg_mark(clog_seg *s, const uint8_t id[16])
{
    for (int i = s->n_dirty - 1; i >= 0; i--)
        if (!memcmp(s->dirty[i], id, 16)) return;
    if (s->n_dirty == s->cap_dirty) {
        int nc = s->cap_dirty ? s->cap_dirty * 2 : 4;
        void *n = cs_realloc(s->dirty, (size_t)nc * 16);
        if (!n) return;   /* worst case the segment is kept until restart */
        s->dirty = n; s->cap_dirty = nc;
    }
    memcpy(s->dirty[s->n_dirty++], id, 16);
}

static clog_seg *active(clog *l)
{
    if (l->n_segs == 0) return NULL;
    clog_seg *s = l->segs[l->n_segs - 1];
    return s->old ? NULL : s;
}

/* ---------------------------------------------------------------- open/close */

static int cmp_seg_name(const void *a, const void *b)
{
    uint64_t x = ((const clog__seg_name *)a)->id, y = ((const clog__seg_name *)b)->id;
    return x < y ? -1 : x > y;
}

/* The segments in dir (CommitLog-<ver>-<id>.log), in id order; with spares,
 * also keep the spare files (CommitLogSpare-<id>.log) as spares of l, up to
 * its bound, unlinking the others.  *out is cs_malloc'd. */
int clog__seg_list(const char *dir, clog *spares, clog__seg_name **out, int *n_out)
{
    char **names; int n;
    int rc = vfs_list(dir, &names, &n);
    if (rc) return rc;
    clog__seg_name *v = cs_malloc(sizeof *v * (size_t)(n + 1));
    int k = 0;
    for (int i = 0; v && i < n; i++) {
        unsigned ver; uint64_t id; int consumed = 0;
        size_t len = strlen(names[i]);
        if (sscanf(names[i], "CommitLog-%u-%" SCNu64 ".log%n", &ver, &id, &consumed) == 2 &&
            consumed == (int)len) {
            v[k].id = id; v[k].ver = ver; k++;
        } else if (spares && sscanf(names[i], "CommitLogSpare-%" SCNu64 ".log%n", &id, &consumed) == 1 &&
                   consumed == (int)len) {
            clog *l = spares;
            char *path = spare_path(dir, id);
            int64_t sz = path ? vfs_file_size(path) : -1;
            bool keep = path && sz > 0 && l->spare_bytes + (uint64_t)sz <= l->spare_max &&
                        spare_push(l, path, (uint64_t)sz);
            if (keep) {
                l->spare_bytes += (uint64_t)sz;
            } else {
                if (path) vfs_unlink(path);
                cs_free(path);
            }
        }
    }
    vfs_list_free(names, n);
    if (!v) return CS_ENOMEM;
    qsort(v, (size_t)k, sizeof *v, cmp_seg_name);
    *out = v;
    *n_out = k;
    return 0;
}

static void *sync_main(void *arg);
static void *alloc_main(void *arg);

int clog_open(const st_config *cfg, clog **out)
{
    *out = NULL;
    clog *l = cs_calloc(1, sizeof *l);
    if (!l) return CS_ENOMEM;
    l->cfg = *cfg;
    l->dir = cs_strdup(cfg->commitlog_dir);
    pthread_mutex_init(&l->mu, NULL);
    pthread_mutex_init(&l->fsync_mu, NULL);
    pthread_mutex_init(&l->smu, NULL);
    pthread_condattr_t ca;   /* timed waits on the monotonic clock (gathering deadlines) */
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&l->scv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_cond_init(&l->acv, NULL);
    l->gather_score = GATHER_SCORE_MAX;
    int rc = l->dir ? vfs_mkdirs(l->dir) : CS_ENOMEM;
    if (rc) { clog_close(l); return rc; }
    /* Spares: a flush cycle's worth of log, at most half the log's bound. */
    uint64_t seg = cfg->segment_size ? cfg->segment_size : 1;
    l->spare_max = cfg->memtable_space;
    if (l->spare_max > cfg->commitlog_total_space / 2) l->spare_max = cfg->commitlog_total_space / 2;
    if (l->spare_max < 2 * seg) l->spare_max = 2 * seg;
    clog__seg_name *ids; int ni;
    rc = clog__seg_list(l->dir, l, &ids, &ni);
    if (rc) { clog_close(l); return rc; }
    /* Ids start from the wall clock in ms (like Cassandra), so positions keep
     * growing even if the commit log directory is emptied while sstables
     * (which store positions) remain. */
    l->next_id = (uint64_t)cs_now_ms();
    for (int i = 0; i < ni; i++) {
        clog_seg *s = cs_calloc(1, sizeof *s);
        if (!s || !(s->path = clog__seg_path(l->dir, ids[i].ver, ids[i].id)) || seg_push(l, s)) {
            if (s) { cs_free(s->path); cs_free(s); }
            cs_free(ids); clog_close(l); return CS_ENOMEM;
        }
        s->id = ids[i].id;
        s->ver = ids[i].ver;
        s->fd = -1;
        s->old = true;
        int64_t sz = vfs_file_size(s->path);
        s->size = sz > 0 ? (uint64_t)sz : 0;
        total_add(l, s->size);
        if (ids[i].id >= l->next_id) l->next_id = ids[i].id + 1;
    }
    cs_free(ids);
    pthread_mutex_lock(&l->mu);
    rc = seg_create(l);
    pthread_mutex_unlock(&l->mu);
    if (rc) { clog_close(l); return rc; }
    l->synced = l->written;
    if (pthread_create(&l->thr, NULL, sync_main, l) != 0) { clog_close(l); return CS_EIO; }
    pthread_setname_np(l->thr, "commitlog-sync");   /* for top -H and perf */
    l->thr_started = true;
    if (pthread_create(&l->athr, NULL, alloc_main, l) != 0) { clog_close(l); return CS_EIO; }
    pthread_setname_np(l->athr, "commitlog-alloc");
    l->athr_started = true;
    *out = l;
    return 0;
}

static void notifier_close_cb(uv_handle_t *h)
{
    clog_notifier *n = h->data;
    if (--n->open_handles > 0) return;
    /* Callbacks completed but not yet run: run them now (we are on the loop). */
    clog_waiter *w = n->ready;
    while (w) { clog_waiter *nx = w->next; w->cb(w->arg); cs_free(w); w = nx; }
    pthread_mutex_destroy(&n->mu);
    cs_free(n);
}

/* Close the handles of a notifier; the last close callback frees it. */
static void notifier_close(clog_notifier *n)
{
    uv_close((uv_handle_t *)&n->idle, notifier_close_cb);
    uv_close((uv_handle_t *)&n->check, notifier_close_cb);
    uv_close((uv_handle_t *)&n->async, notifier_close_cb);
}

void clog_close(clog *l)
{
    if (!l) return;
    if (l->athr_started) {
        pthread_mutex_lock(&l->mu);
        __atomic_store_n(&l->astop, true, __ATOMIC_RELAXED);
        pthread_cond_signal(&l->acv);
        pthread_mutex_unlock(&l->mu);
        pthread_join(l->athr, NULL);
        l->athr_started = false;
    }
    if (l->thr_started) {
        pthread_mutex_lock(&l->smu);
        l->stop = true;
        pthread_cond_broadcast(&l->scv);
        pthread_mutex_unlock(&l->smu);
        pthread_join(l->thr, NULL);
        if (l->n_syncs) {
            char gather[200] = "";   /* batch mode only */
            if (l->n_targets)
                snprintf(gather, sizeof gather, "; writers back within the gathering bound after %" PRIu64 " of %" PRIu64
                         " syncs; %" PRIu64 " gathered (%" PRIu64 " at the bound, %.0f us each)",
                         l->n_hits, l->n_targets, l->n_gathers, l->n_gather_to,
                         l->n_gathers ? (double)l->gather_ns / 1e3 / (double)l->n_gathers : 0.0);
            CS_INFO("commitlog: %" PRIu64 " syncs completed %" PRIu64 " waiting writes (%.1f per sync, %.0f us per sync)%s",
                    l->n_syncs, l->n_waited, (double)l->n_waited / (double)l->n_syncs,
                    (double)l->sync_ns / 1e3 / (double)l->n_syncs, gather);
        }
    }
    pthread_mutex_lock(&l->mu);
    l->closing = true;
    if (l->wlen) wbuf_write(l);   /* (normally done by the final sync) */
    /* Cut the active segment at its last record: whatever follows (zeros,
     * or what a reused file held) need not be read again at open. */
    clog_seg *act = active(l);
    if (act && act->fd >= 0 && !l->werr && act->zeroed > act->size) vfs_truncate(act->fd, act->size);
    pthread_mutex_unlock(&l->mu);
    cs_free(l->wbuf);
    for (int i = 0; i < l->n_spares; i++) {
        vfs_unlink(l->spares[i].path);
        cs_free(l->spares[i].path);
    }
    cs_free(l->spares);
    /* Remaining waiters: the final sync in sync_main completed them. */
    for (clog_notifier *n = l->notifiers, *nx; n; n = nx) {
        nx = n->next;
        notifier_close(n);
    }
    for (int i = 0; i < l->n_segs; i++) seg_free(l->segs[i]);
    cs_free(l->segs);
    for (int i = 0; i < l->n_pend; i++) vfs_close(l->pend_fd[i]);
    cs_free(l->pend_fd);
    clog_reap(l);
    cs_free(l->doomed);
    cs_free(l->dir);
    pthread_mutex_destroy(&l->mu);
    pthread_mutex_destroy(&l->fsync_mu);
    pthread_mutex_destroy(&l->smu);
    pthread_cond_destroy(&l->scv);
    pthread_cond_destroy(&l->acv);
    cs_free(l);
}

/* ---------------------------------------------------------------- append */

/* Retire the full active segment (its fd waits in pend_fd for the next
 * sync, invariant 2) and start a new one.  Caller holds mu. */
static int seg_switch(clog *l)
{
    int wrc = wbuf_write(l);
    if (wrc) return wrc;
    clog_seg *s = active(l);
    if (s && s->fd >= 0) {
        if (l->n_pend == l->cap_pend) {
            int nc = l->cap_pend ? l->cap_pend * 2 : 4;
            int *n = cs_realloc(l->pend_fd, (size_t)nc * sizeof *n);
            if (!n) return CS_ENOMEM;
            l->pend_fd = n; l->cap_pend = nc;
        }
        l->pend_fd[l->n_pend++] = s->fd;
        s->fd = -1;
    }
    return seg_create(l);
}

int clog_append(clog *l, const uint8_t *p, size_t n, const uint8_t (*ids)[16], int n_ids,
                st_clog_pos *end)
{
    if (n > l->cfg.segment_size / 2 || n > UINT32_MAX - 16) return CS_ETOOBIG;
    uint8_t h[CLOG_REC_HDR], t[CLOG_REC_TRL];
    cs_st32(h, (uint32_t)n);
    cs_st32(t, cs_crc32c(0, p, n));   /* (the length CRC needs the segment: below) */
    size_t rec = CLOG_REC_HDR + n + CLOG_REC_TRL;
    pthread_mutex_lock(&l->mu);
    clog_seg *s = active(l);
    int rc = 0;
    if (!s || s->fd < 0 || (s->size + rec > l->cfg.segment_size && s->size > CLOG_HDR)) {
        rc = seg_switch(l);
        s = active(l);
    }
    if (!rc && l->werr) rc = l->werr;
    if (s) cs_st32(h + 4, cs_crc32c(s->seed, h, 4));
    if (!rc && s && tl_defer) {
        /* Deferred: append to the tail, written by clog_flush (or when big). */
        if (l->wlen == 0) l->woff = s->size;
        if (l->wlen + rec > l->wcap) {
            size_t nc = l->wcap ? l->wcap : 16384;
            while (nc < l->wlen + rec) nc *= 2;
            uint8_t *nb = cs_realloc(l->wbuf, nc);
            if (!nb) rc = CS_ENOMEM;
            else { l->wbuf = nb; l->wcap = nc; }
        }
        if (!rc) {
            put_record(l->wbuf + l->wlen, h, p, n, t);
            l->wlen += rec;
            if (l->wlen >= WBUF_MAX) rc = wbuf_write(l);
        }
    } else if (!rc && s) {
        if (l->wlen && (rc = wbuf_write(l))) goto out;   /* keep file order */
        /* One pwrite per record part; a torn record is caught by its CRC. */
        uint8_t stackbuf[4096];
        uint8_t *buf = rec <= sizeof stackbuf ? stackbuf : cs_malloc(rec);
        if (!buf) rc = CS_ENOMEM;
        else {
            put_record(buf, h, p, n, t);
            ssize_t w = vfs_pwrite(s->fd, buf, rec, s->size);
            if (buf != stackbuf) cs_free(buf);
            if (w < 0) rc = (int)w;
        }
    } else if (!rc) rc = CS_EIO;
    if (!rc) {   /* the record is in the segment (or in its deferred tail) */
        s->size += rec;
        total_add(l, rec);
        l->written.segment = s->id;
        l->written.offset = s->size;
        for (int i = 0; i < n_ids; i++) clog__seg_mark(s, ids[i]);
        if (end) *end = l->written;
        if (s->size > l->cfg.segment_size / 2 && l->asked_id != s->id && l->athr_started &&
            l->cfg.segment_size >= ALLOC_MIN_SEGMENT) {
            l->asked_id = s->id;   /* once per segment: alloc_main checks for spares itself */
            l->want_spare = true;
            pthread_cond_signal(&l->acv);
        }
    }
out:
    pthread_mutex_unlock(&l->mu);
    return rc;
}

int clog_flush(clog *l)
{
    /* Batch and group modes acknowledge a write only after a sync, and
     * every sync writes the tail first (do_sync): the request loop need not
     * spend a pwrite (and the mu hand-off with the sync thread) per reply
     * batch.  Periodic mode acknowledges before the sync, so the record
     * must reach the kernel first. */
    if (l->cfg.sync_mode != ST_SYNC_PERIODIC) return 0;
    pthread_mutex_lock(&l->mu);
    int rc = l->wlen ? wbuf_write(l) : 0;
    pthread_mutex_unlock(&l->mu);
    return rc;
}

/* storage.h entry points (here rather than in engine.c so a program using
 * only these does not link the engine object). */
void st_defer_log_writes(bool on) { clog_defer(on); }

int st_log_flush(st_engine *e) { return e ? clog_flush(e->log) : CS_EINVAL; }

st_clog_pos clog_current(clog *l)
{
    pthread_mutex_lock(&l->mu);
    st_clog_pos p = l->written;
    pthread_mutex_unlock(&l->mu);
    return p;
}

/* Every write asks (st__maybe_flush): no mutex, which the writer just
 * released in clog_append and the sync thread takes too. */
uint64_t clog_total_bytes(clog *l)
{
    return atomic_load_explicit(&l->total, memory_order_relaxed);
}

/* ---------------------------------------------------------------- sync */

#define PREALLOC_CHUNK (1u << 20)    /* zero-fill this much ahead of the writes */

/* One piece of zeros at off, at most 64 KiB and not past end: the bytes
 * written or an error (seg_prealloc and spare_make loop over it). */
static ssize_t pwrite_zeros(int fd, uint64_t off, uint64_t end)
{
    static const uint8_t zeros[64 << 10];
    size_t k = end - off < sizeof zeros ? (size_t)(end - off) : sizeof zeros;
    return vfs_pwrite(fd, zeros, k, off);
}

/* Zero-fill the active segment ahead of its write position (batch and group
 * modes only: they fdatasync after nearly every write).  An fdatasync after
 * an append that grows the file must also commit the new size (an ext4
 * journal commit, shared with every other writer of the disk); one after
 * overwriting blocks already written needs only the data, ~2x cheaper here.
 * The zeros read as "end of segment" on replay (format doc).  Caller holds
 * mu, so no append lands in the region being filled.  A failure only stops
 * the preallocation of this segment. */
static void seg_prealloc(clog *l, clog_seg *s)
{
    if (l->cfg.sync_mode == ST_SYNC_PERIODIC || !s || s->fd < 0) return;
    uint64_t lim = l->cfg.segment_size;
    if (s->zeroed >= lim || s->zeroed >= s->size + PREALLOC_CHUNK / 2) return;
    uint64_t from = s->zeroed > s->size ? s->zeroed : s->size;
    uint64_t to = from + PREALLOC_CHUNK < lim ? from + PREALLOC_CHUNK : lim;
    for (uint64_t off = from; off < to;) {
        ssize_t w = pwrite_zeros(s->fd, off, to);
        if (w <= 0) {
            CS_WARN("commitlog: cannot preallocate %s: %s", s->path, cs_strerror(w < 0 ? (int)w : CS_EIO));
            s->zeroed = lim;
            return;
        }
        off += (uint64_t)w;
        s->zeroed = off;
    }
}

bool clog_sync_needed(clog *l) { return l->cfg.sync_mode != ST_SYNC_PERIODIC; }

/* fsync the retired segments, the directory if a segment was created, then
 * the active segment; returns the position now durable.  fsync_mu (taken
 * before mu) serializes syncs, and only a sync closes a retired fd, so the
 * active fd stays open while we use it; mu is held only to take the state,
 * never during an fsync, so appends go on meanwhile. */
static int do_sync(clog *l, st_clog_pos *done)
{
    pthread_mutex_lock(&l->fsync_mu);
    pthread_mutex_lock(&l->mu);
    st_clog_pos p = l->written;
    clog_seg *s = active(l);
    int fd = s ? s->fd : -1;
    int *pend = l->pend_fd, n_pend = l->n_pend;
    l->pend_fd = NULL; l->n_pend = 0; l->cap_pend = 0;
    bool dir = l->dir_dirty;
    l->dir_dirty = false;
    int rc = l->wlen ? wbuf_write(l) : 0;
    seg_prealloc(l, s);
    pthread_mutex_unlock(&l->mu);
    for (int i = 0; i < n_pend; i++) {
        int r = vfs_fsync(pend[i]);
        if (r && !rc) rc = r;
        vfs_close(pend[i]);
    }
    cs_free(pend);
    if (dir) {
        int r = vfs_fsync_dir(l->dir);
        if (r && !rc) rc = r;
    }
    if (fd >= 0) {
        int r = vfs_fsync(fd);
        if (r && !rc) rc = r;
    }
    pthread_mutex_unlock(&l->fsync_mu);
    *done = p;
    if (rc) CS_ERROR("commitlog: fsync failed: %s (errno %d)", cs_strerror(rc), cs_last_errno);
    return rc;
}

/* Move satisfied waiters to their notifiers and wake those loops; returns
 * how many.  Each notifier gets its whole share with one lock and one
 * uv_async_send, after the others are unlinked: its loop, woken by the
 * first send, would otherwise take a partial list (and contend for n->mu
 * while we push the rest), answering the round in two loop wake-ups.
 * Caller holds smu (clog_detach_loop takes it before closing a notifier). */
static int complete_waiters(clog *l, bool all)
{
    int done = 0;
    clog_waiter *got = NULL, **tail = &got;   /* satisfied, in list order */
    clog_waiter **pp = &l->waiters;
    while (*pp) {
        clog_waiter *w = *pp;
        if (all || st__pos_cmp(w->pos, l->synced) <= 0) {
            *pp = w->next;
            w->next = NULL;
            *tail = w;
            tail = &w->next;
            done++;
        } else {
            pp = &w->next;
        }
    }
    l->n_waited += (uint64_t)done;
    l->n_pending -= done;
    while (got) {
        /* One notifier's waiters, pushed in list order onto a chain (so the
         * ready list keeps the newest-first order notifier_async_cb expects). */
        clog_notifier *n = got->n;
        clog_waiter *chain = NULL, *last = NULL, **gp = &got;
        while (*gp) {
            clog_waiter *w = *gp;
            if (w->n != n) { gp = &w->next; continue; }
            *gp = w->next;
            w->next = chain;
            chain = w;
            if (!last) last = w;
        }
        pthread_mutex_lock(&n->mu);   /* the waiters may be run and freed by the loop once queued */
        last->next = n->ready;
        n->ready = chain;
        pthread_mutex_unlock(&n->mu);
        uv_async_send(&n->async);
    }
    return done;
}

/* Deadlines for timed waits on scv (a CLOCK_MONOTONIC condition variable). */
static void ts_at_ns(struct timespec *ts, uint64_t mono_ns)
{
    ts->tv_sec = (time_t)(mono_ns / 1000000000u);
    ts->tv_nsec = (long)(mono_ns % 1000000000u);
}

static void ts_after_ms(struct timespec *ts, int ms) { ts_at_ns(ts, cs_mono_ns() + (uint64_t)ms * 1000000u); }

#define KICK_TIMEOUT_MS 2

/* Batch-mode gathering: after an fsync round, the next one waits until as
 * many waiters are pending as were active in that round (those it
 * completed plus those already waiting), at most half a recent round and
 * never more than GATHER_MAX_NS, then starts at once.  Without it, writers
 * that come back quickly (turnaround well under an fsync) split into two
 * groups that alternate: the writes acked by round k come back during
 * round k+1 and wait for all of round k+2, two fsyncs per write.  When
 * they come back slowly (a busy request loop answering and reading a whole
 * group takes longer than the bound) gathering would only leave the disk
 * idle while the loop works, and alternating groups overlap the two; so
 * gathering is on only while recent targets were reached within the bound
 * (gather_score, measured whether or not the sync thread waited).  A lone
 * serial writer never waits (its one write is the whole target), and a
 * burst that ends costs at most the bound once.  Durability is unchanged:
 * waiting only delays an fsync. */
static uint64_t g_gather_max_ns = GATHER_MAX_NS;   /* CASSETTE_COMMITLOG_GATHER_MAX_US (tests) */

/* True while the sync thread should keep gathering.  Caller holds smu. */
static bool gathering(const clog *l, uint64_t now)
{
    return l->n_pending < l->gather_target && now < l->gather_until;
}

/* After a batch round that completed `done` waiters at end_ns: score the
 * previous target (reached within its bound or not), then set the next
 * target and deadline.  `avg_ns` is the recent round duration.  Caller
 * holds smu. */
static void gather_plan(clog *l, int done, uint64_t end_ns, uint64_t avg_ns)
{
    uint64_t bound = avg_ns / 2 < g_gather_max_ns ? avg_ns / 2 : g_gather_max_ns;
    if (l->gather_target > 0) {
        bool hit = l->gather_hit && l->gather_hit - l->gather_from <= bound;
        l->n_targets++;
        l->n_hits += hit;
        if (hit && l->gather_score < GATHER_SCORE_MAX) l->gather_score++;
        if (!hit && l->gather_score > 0) l->gather_score--;
    }
    l->gather_target = done + l->n_pending;
    l->gather_from = end_ns;
    l->gather_hit = l->n_pending >= l->gather_target ? end_ns : 0;
    l->gather_until = l->gather_score > GATHER_SCORE_MAX / 2 ? end_ns + bound : end_ns;
}

static void *sync_main(void *arg)
{
    clog *l = arg;
    int mode = l->cfg.sync_mode;
    int period = l->cfg.sync_period_ms > 0 ? l->cfg.sync_period_ms : 10000;
    int window = l->cfg.sync_group_window_ms > 0 ? l->cfg.sync_group_window_ms : 15;
    uint64_t last_ns = 0, avg_ns = 0, gather_t0 = 0;
#ifdef PR_SET_TIMERSLACK
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);   /* gathering deadlines are ~100 us */
#endif
    const char *gm = getenv("CASSETTE_COMMITLOG_GATHER_MAX_US");
    if (gm) g_gather_max_ns = (uint64_t)strtoul(gm, NULL, 10) * 1000u;
    pthread_mutex_lock(&l->smu);
    for (;;) {
        if (l->stop) break;
        struct timespec ts;
        if (mode == ST_SYNC_PERIODIC) {
            if (!l->requested) {
                ts_after_ms(&ts, period);
                pthread_cond_timedwait(&l->scv, &l->smu, &ts);
                if (l->stop) break;
            }
        } else if (mode == ST_SYNC_BATCH && l->requested && l->gather_until > l->gather_from &&
                   (l->n_pending >= l->gather_target || gathering(l, cs_mono_ns()))) {
            /* Gathering (gather_plan): go as soon as every recently active
             * writer is back (clog_sync_wait signals), even mid-iteration
             * of a deferring loop (their records are appended already). */
            uint64_t now = cs_mono_ns();
            if (l->n_pending < l->gather_target) {
                if (!gather_t0) gather_t0 = now;
                ts_at_ns(&ts, l->gather_until);
                pthread_cond_timedwait(&l->scv, &l->smu, &ts);
                if (l->stop) break;
                continue;
            }
        } else if (!l->kicked) {
            /* Waiters of a deferring loop are kicked once per loop iteration
             * (notifier_check_cb); the timeout is only a safety net. */
            if (!l->requested) {
                pthread_cond_wait(&l->scv, &l->smu);
                continue;
            }
            ts_after_ms(&ts, KICK_TIMEOUT_MS);
            if (pthread_cond_timedwait(&l->scv, &l->smu, &ts) != ETIMEDOUT) continue;
            if (l->stop) break;
            if (!l->requested) continue;
        }
        if (mode == ST_SYNC_GROUP) {
            /* Share: at most one fsync per window; late arrivals join this one. */
            uint64_t now = cs_mono_ns(), next = last_ns + (uint64_t)window * 1000000ull;
            if (last_ns && now < next) {
                pthread_mutex_unlock(&l->smu);
                uint64_t left = next - now;   /* a window of a second or more: tv_nsec stays under 1e9 */
                struct timespec d = { (time_t)(left / 1000000000ull), (long)(left % 1000000000ull) };
                nanosleep(&d, NULL);
                pthread_mutex_lock(&l->smu);
            }
        }
        uint64_t t0 = cs_mono_ns();
        if (gather_t0) {
            l->n_gathers++;
            if (l->n_pending < l->gather_target) l->n_gather_to++;
            l->gather_ns += t0 - gather_t0;
            gather_t0 = 0;
        }
        l->requested = false;
        l->kicked = false;
        pthread_mutex_unlock(&l->smu);
        st_clog_pos p;
        int rc = do_sync(l, &p);
        last_ns = cs_mono_ns();
        l->sync_ns += last_ns - t0;
        avg_ns = avg_ns ? (avg_ns * 7 + (last_ns - t0)) / 8 : last_ns - t0;
        pthread_mutex_lock(&l->smu);
        if (!rc && st__pos_cmp(p, l->synced) > 0) l->synced = p;
        l->n_syncs++;
        int done = complete_waiters(l, false);
        if (mode == ST_SYNC_BATCH) gather_plan(l, done, last_ns, avg_ns);
    }
    pthread_mutex_unlock(&l->smu);
    st_clog_pos p;
    do_sync(l, &p);
    pthread_mutex_lock(&l->smu);
    if (st__pos_cmp(p, l->synced) > 0) l->synced = p;
    complete_waiters(l, true);
    pthread_mutex_unlock(&l->smu);
    return NULL;
}

int clog_sync_now(clog *l)
{
    st_clog_pos p;
    int rc = do_sync(l, &p);
    if (rc) return rc;
    pthread_mutex_lock(&l->smu);
    if (st__pos_cmp(p, l->synced) > 0) l->synced = p;
    complete_waiters(l, false);
    pthread_mutex_unlock(&l->smu);
    return 0;
}

int clog_spare_count(clog *l)
{
    pthread_mutex_lock(&l->mu);
    int n = l->n_spares;
    pthread_mutex_unlock(&l->mu);
    return n;
}

void clog_get_sync_stats(clog *l, clog_sync_stats *out)
{
    pthread_mutex_lock(&l->smu);
    *out = (clog_sync_stats){ l->n_syncs, l->n_waited, l->n_gathers, l->n_gather_to, l->gather_ns, l->synced };
    pthread_mutex_unlock(&l->smu);
}

static void notifier_async_cb(uv_async_t *h)
{
    clog_notifier *n = h->data;
    pthread_mutex_lock(&n->mu);
    clog_waiter *w = n->ready;
    n->ready = NULL;
    pthread_mutex_unlock(&n->mu);
    /* Reverse to run in completion order (list was built by pushing). */
    clog_waiter *rev = NULL;
    while (w) { clog_waiter *nx = w->next; w->next = rev; rev = w; w = nx; }
    while (rev) { clog_waiter *nx = rev->next; rev->cb(rev->arg); cs_free(rev); rev = nx; }
}

/* Nothing to do: an active idle handle only keeps the poll from blocking. */
static void notifier_idle_cb(uv_idle_t *h)
{
    (void)h;
}

/* End of a loop iteration that registered waiters (uv_check runs after the
 * iteration's I/O callbacks): wake the sync thread once for all of them, so
 * the writes of every request read in this iteration share one fsync. */
static void notifier_check_cb(uv_check_t *h)
{
    clog_notifier *n = h->data;
    uv_check_stop(h);
    uv_idle_stop(&n->idle);
    n->check_on = false;
    clog *l = n->l;
    pthread_mutex_lock(&l->smu);
    if (l->requested && !l->kicked) {
        l->kicked = true;
        /* Always: the sync thread may be idle in an untimed wait (it saw no
         * request), gathering or not; a gathering one just waits again. */
        pthread_cond_signal(&l->scv);
    }
    pthread_mutex_unlock(&l->smu);
}

int clog_sync_wait(clog *l, struct uv_loop_s *loop, st_clog_pos pos, void (*cb)(void *), void *arg)
{
    if (!loop || !cb) return CS_EINVAL;
    pthread_mutex_lock(&l->smu);
    if (st__pos_cmp(pos, l->synced) <= 0) {
        pthread_mutex_unlock(&l->smu);
        cb(arg);
        return 0;
    }
    clog_notifier *n = l->notifiers;
    while (n && n->loop != loop) n = n->next;
    if (!n) {
        n = cs_calloc(1, sizeof *n);
        if (!n) { pthread_mutex_unlock(&l->smu); return CS_ENOMEM; }
        if (uv_async_init(loop, &n->async, notifier_async_cb) != 0) {
            cs_free(n); pthread_mutex_unlock(&l->smu); return CS_EIO;
        }
        n->async.data = n;
        n->open_handles = 1;
        if (uv_check_init(loop, &n->check) != 0) {
            /* Unusable: close the async handle (its callback frees n). */
            pthread_mutex_init(&n->mu, NULL);
            uv_close((uv_handle_t *)&n->async, notifier_close_cb);
            pthread_mutex_unlock(&l->smu);
            return CS_EIO;
        }
        n->check.data = n;
        uv_idle_init(loop, &n->idle);   /* cannot fail (libuv) */
        n->idle.data = n;
        n->open_handles = 3;
        n->l = l;
        n->loop = loop;
        pthread_mutex_init(&n->mu, NULL);
        n->next = l->notifiers;
        l->notifiers = n;
    }
    clog_waiter *w = cs_calloc(1, sizeof *w);
    if (!w) { pthread_mutex_unlock(&l->smu); return CS_ENOMEM; }
    w->pos = pos; w->cb = cb; w->arg = arg; w->n = n;
    w->next = l->waiters;
    l->waiters = w;
    l->requested = true;
    if (++l->n_pending == l->gather_target && !l->gather_hit) {   /* every recent writer is back */
        l->gather_hit = cs_mono_ns();
        if (l->gather_until > l->gather_from) pthread_cond_signal(&l->scv);   /* gathering: go */
    }
    if (tl_defer) {
        /* The loop's deferred writes of this iteration are not even in the
         * kernel yet: sync once, after the iteration (notifier_check_cb). */
        if (!n->check_on && uv_check_start(&n->check, notifier_check_cb) == 0) {
            n->check_on = true;
            /* The check runs after this iteration's poll only if the write
             * was registered before that poll returned (an I/O callback).
             * From a check or idle callback, or outside uv_run, it runs
             * after the next poll, which could block until some unrelated
             * event (a request loop without timers: for ever); an active
             * idle handle makes that poll return at once. */
            uv_idle_start(&n->idle, notifier_idle_cb);
        }
        if (!n->check_on) { l->kicked = true; pthread_cond_signal(&l->scv); }
    } else {
        l->kicked = true;
        pthread_cond_signal(&l->scv);
    }
    pthread_mutex_unlock(&l->smu);
    return 0;
}

/* Close the notifier of `loop` (on that loop's thread): fsync, complete
 * its waiters, and uv_close its handle (its close callback runs the
 * remaining callbacks and frees it on the next loop iteration). */
int clog_detach_loop(clog *l, struct uv_loop_s *loop)
{
    int rc = clog_sync_now(l);
    pthread_mutex_lock(&l->smu);
    clog_notifier **pp = &l->notifiers, *n = NULL;
    while (*pp && (*pp)->loop != loop) pp = &(*pp)->next;
    if (*pp) { n = *pp; *pp = n->next; }
    if (n) {
        /* Every waiter of this loop completes now (durable unless the fsync failed). */
        clog_waiter **wp = &l->waiters;
        while (*wp) {
            clog_waiter *w = *wp;
            if (w->n == n) {
                *wp = w->next;
                l->n_pending--;
                pthread_mutex_lock(&n->mu);
                w->next = n->ready;
                n->ready = w;
                pthread_mutex_unlock(&n->mu);
            } else {
                wp = &w->next;
            }
        }
    }
    pthread_mutex_unlock(&l->smu);
    if (n) notifier_close(n);
    return rc;
}

/* ---------------------------------------------------------------- recycle */

void clog_recycle(clog *l, st_clog_pos (*clean)(const uint8_t id[16], void *arg), void *arg)
{
    pthread_mutex_lock(&l->mu);
    clog_seg *act = active(l);
    int j = 0;
    for (int i = 0; i < l->n_segs; i++) {
        clog_seg *s = l->segs[i];
        bool keep = s == act || (s->old && !l->replay_done);
        if (!keep) {
            st_clog_pos end = { s->id, s->size };
            for (int k = 0; k < s->n_dirty; ) {
                st_clog_pos c = clean(s->dirty[k], arg);
                if (st__pos_cmp(c, end) > 0) memcpy(s->dirty[k], s->dirty[--s->n_dirty], 16);
                else k++;
            }
            keep = s->n_dirty > 0;
        }
        if (keep) { l->segs[j++] = s; continue; }
        uint64_t total = atomic_load_explicit(&l->total, memory_order_relaxed);
        total_add(l, -(s->size < total ? s->size : total));
        if (l->n_doomed == l->cap_doomed) {
            int nc = l->cap_doomed ? l->cap_doomed * 2 : 8;
            clog_seg **n = cs_realloc(l->doomed, (size_t)nc * sizeof *n);
            if (!n) {   /* no room to defer: unlink now */
                vfs_unlink(s->path);
                seg_free(s);
                continue;
            }
            l->doomed = n; l->cap_doomed = nc;
        }
        l->doomed[l->n_doomed++] = s;
    }
    l->n_segs = j;
    pthread_mutex_unlock(&l->mu);
}

/* Keep a retired segment's file as a spare if the spares' bound allows (it
 * is renamed, so it is never replayed), else unlink it. */
static void seg_retire(clog *l, clog_seg *s)
{
    uint64_t len = s->zeroed > s->size ? s->zeroed : s->size;
    char *sp = spare_path(l->dir, s->id);
    pthread_mutex_lock(&l->mu);
    bool keep = sp && !l->closing && l->spare_bytes + len <= l->spare_max;
    if (keep) l->spare_bytes += len;   /* reserved; listed once renamed */
    pthread_mutex_unlock(&l->mu);
    if (keep && vfs_rename(s->path, sp) == 0) {
        pthread_mutex_lock(&l->mu);
        bool listed = spare_push(l, sp, len);
        if (!listed) l->spare_bytes -= len;
        pthread_mutex_unlock(&l->mu);
        if (listed) {
            CS_DEBUG("commitlog: recycled %s as %s", s->path, sp);
            return;
        }
        vfs_unlink(sp);   /* no room to list it */
    } else {
        if (keep) {
            pthread_mutex_lock(&l->mu);
            l->spare_bytes -= len;
            pthread_mutex_unlock(&l->mu);
        }
        vfs_unlink(s->path);
    }
    cs_free(sp);
    CS_DEBUG("commitlog: deleted %s", s->path);
}

/* Keep or unlink the segments clog_recycle dropped.  Called without the
 * engine's barrier held, so file operations never delay a writer. */
void clog_reap(clog *l)
{
    pthread_mutex_lock(&l->mu);
    clog_seg **d = l->doomed;
    int n = l->n_doomed;
    l->doomed = NULL; l->n_doomed = 0; l->cap_doomed = 0;
    pthread_mutex_unlock(&l->mu);
    for (int i = 0; i < n; i++) {
        seg_retire(l, d[i]);
        seg_free(d[i]);
    }
    cs_free(d);
}

/* Write a new spare at path: len bytes of zeros, fdatasynced every few MiB
 * (a batch-mode round would otherwise carry the whole file's dirty pages)
 * and at the end.  Runs on alloc_main without any lock.  0 or an error. */
static int spare_make(clog *l, const char *path, uint64_t len)
{
    int fd = vfs_open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    if (fd < 0) return fd;
    int rc = 0;
    for (uint64_t off = 0; off < len && !rc;) {
        if (__atomic_load_n(&l->astop, __ATOMIC_RELAXED)) { rc = CS_EIO; break; }   /* closing: not needed */
        ssize_t w = pwrite_zeros(fd, off, len);
        if (w <= 0) { rc = w < 0 ? (int)w : CS_EIO; break; }
        off += (uint64_t)w;
        if (off % (4u << 20) == 0 || off == len) rc = vfs_fsync(fd);
    }
    vfs_close(fd);
    return rc;
}

/* The segment allocator: when clog_append asks (the active segment is half
 * full) and no spare is listed, make one (spare_make) under a fresh id and
 * list it, newest, for seg_file to take at the next switch.  A failure
 * (disk full) is logged and the segment is simply created new, as before. */
static void *alloc_main(void *arg)
{
    clog *l = arg;
    pthread_mutex_lock(&l->mu);
    for (;;) {
        while (!l->want_spare && !l->astop) pthread_cond_wait(&l->acv, &l->mu);
        if (l->astop) break;
        l->want_spare = false;
        uint64_t len = l->cfg.segment_size;
        if (l->closing || l->n_spares > 0 || len == 0 || l->spare_bytes + len > l->spare_max) continue;
        char *path = spare_path(l->dir, l->next_id++);   /* ids only grow: no name is used twice */
        if (!path) continue;
        l->spare_bytes += len;   /* reserved; listed once written */
        pthread_mutex_unlock(&l->mu);
        int rc = spare_make(l, path, len);
        pthread_mutex_lock(&l->mu);
        if (!rc && !l->closing && spare_push(l, path, len)) {
            l->alloc_warned = false;
            CS_DEBUG("commitlog: prepared %s", path);
            continue;
        }
        l->spare_bytes -= len;
        if (rc && !l->astop && !l->alloc_warned) {   /* once until one succeeds (a full disk) */
            CS_WARN("commitlog: cannot prepare %s: %s; new segments are created as needed", path, cs_strerror(rc));
            l->alloc_warned = true;
        }
        pthread_mutex_unlock(&l->mu);
        vfs_unlink(path);
        cs_free(path);
        pthread_mutex_lock(&l->mu);
    }
    pthread_mutex_unlock(&l->mu);
    return NULL;
}

int clog_oldest_dirty(clog *l, uint8_t (*ids)[16], int max)
{
    pthread_mutex_lock(&l->mu);
    int n = 0;
    clog_seg *act = active(l);
    for (int i = 0; i < l->n_segs && n == 0; i++) {
        clog_seg *s = l->segs[i];
        if (s == act) break;
        for (int k = 0; k < s->n_dirty && n < max; k++) memcpy(ids[n++], s->dirty[k], 16);
    }
    pthread_mutex_unlock(&l->mu);
    return n;
}
