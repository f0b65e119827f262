/*
 * engine_bg.c: background work of the engine.
 *
 * Threads: thread 0 flushes memtables, one at a time in FIFO order (so a
 * table's sstables are always produced in commit log order, which makes the
 * replay position stored in each sstable monotonic).  Threads 1..n run
 * compactions (compaction.c), at most one per table at a time.
 *
 * Memtable life cycle (numbers are the invariants):
 *   active ──st__flush_table (barrier write lock: 1. no write in flight)──>
 *   flushing[] ──flush_job: sst_writer──> sstable added, memtable unref'd
 *   2. a memtable leaves flushing[] only once its sstable is in ssts[], so a
 *      reader's snapshot always sees the data in one place or the other.
 *   3. if truncate ran meanwhile (epoch changed) the new sstable is dropped.
 *
 * Flush triggers: st_table_flush; active memtables over half of
 * memtable_space (largest first); commit log over commitlog_total_space
 * (tables dirty in the oldest segment); st_engine_close(flush_all).
 * Back-pressure: st_write waits while all memtables exceed memtable_space.
 */
#include "storage/sstable_int.h"
#include "common/alloc.h"
#include "common/err.h"
#include "common/log.h"
#include "common/util.h"
#include "common/vfs.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct st__job {
    st_table *t;
    mt_memtable *mt;
    uint64_t gen;
    uint64_t epoch;
    bool wait, done;
    int rc;
    struct st__job *next;
} st__job;

/* ---------------------------------------------------------------- loading */

static int cmp_reader_gen(const void *a, const void *b)
{
    const sst_reader *x = *(sst_reader *const *)a, *y = *(sst_reader *const *)b;
    return x->gen < y->gen ? -1 : x->gen > y->gen;
}

static int push_sst(st_table *t, sst_reader *r)
{
    if (t->n_ssts == t->cap_ssts) {
        int nc = t->cap_ssts ? t->cap_ssts * 2 : 8;
        sst_reader **n = cs_realloc(t->ssts, (size_t)nc * sizeof *n);
        if (!n) return CS_ENOMEM;
        t->ssts = n; t->cap_ssts = nc;
    }
    t->ssts[t->n_ssts++] = r;
    return 0;
}

/* Open every complete sstable in the table directory; remove leftovers of
 * interrupted flushes/compactions (tmp- files, components without a TOC,
 * inputs of a finished compaction). */
int st__table_load_sstables(st_table *t)
{
    char **names; int n;
    int rc = vfs_list(t->dir, &names, &n);
    if (rc) return rc;
    uint64_t maxgen = 0;
    char path[4400];
    for (int i = 0; i < n; i++) {
        uint64_t g; int c = 0;
        if (!strncmp(names[i], "tmp-", 4)) {
            snprintf(path, sizeof path, "%s/%s", t->dir, names[i]);
            vfs_unlink(path);
            if (sscanf(names[i], "tmp-cs-%" SCNu64 "-%n", &g, &c) == 1 && g > maxgen) maxgen = g;
            continue;
        }
        if (sscanf(names[i], "cs-%" SCNu64 "-%n", &g, &c) == 1 && c > 0 && g > maxgen) maxgen = g;
    }
    for (int i = 0; i < n; i++) {
        uint64_t g; int c = 0;
        if (sscanf(names[i], "cs-%" SCNu64 "-%n", &g, &c) != 1 || c == 0) continue;
        snprintf(path, sizeof path, "%s/cs-%" PRIu64 "-TOC.txt", t->dir, g);
        if (vfs_file_size(path) < 0) {
            snprintf(path, sizeof path, "%s/%s", t->dir, names[i]);
            CS_WARN("storage: removing incomplete sstable component %s", path);
            vfs_unlink(path);
            continue;
        }
        if (strcmp(names[i] + c, "TOC.txt") != 0) continue;
        sst_reader *r;
        rc = sst_reader_open(t->dir, g, &r);
        if (rc) {
            CS_ERROR("storage: cannot open sstable %s/cs-%" PRIu64 ": %s", t->dir, g, cs_strerror(rc));
            break;
        }
        if ((rc = push_sst(t, r))) { sst_reader_unref(r); break; }
    }
    vfs_list_free(names, n);
    if (rc) return rc;
    /* Inputs of a compaction whose output exists are obsolete. */
    for (int i = 0; i < t->n_ssts; i++)
        for (int k = 0; k < t->ssts[i]->st.n_ancestors; k++)
            for (int j = 0; j < t->n_ssts; j++)
                if (t->ssts[j]->gen == t->ssts[i]->st.ancestors[k]) sst__mark_obsolete(t->ssts[j]);
    int j = 0;
    for (int i = 0; i < t->n_ssts; i++) {
        if (atomic_load(&t->ssts[i]->obsolete)) { sst_reader_unref(t->ssts[i]); continue; }
        t->ssts[j++] = t->ssts[i];
    }
    t->n_ssts = j;
    if (t->n_ssts > 1) qsort(t->ssts, (size_t)t->n_ssts, sizeof *t->ssts, cmp_reader_gen);
    for (int i = 0; i < t->n_ssts; i++)
        if (st__pos_cmp(t->ssts[i]->st.clog_pos, t->replay_pos) > 0) t->replay_pos = t->ssts[i]->st.clog_pos;
    t->next_gen = maxgen + 1;
    return 0;
}

void st__table_sst_unref_all(st_table *t)
{
    for (int i = 0; i < t->n_ssts; i++) sst_reader_unref(t->ssts[i]);
    t->n_ssts = 0;
}

/* ---------------------------------------------------------------- flush */

typedef struct flush_ctx { sst_writer *w; int rc; } flush_ctx;

static int flush_part(st__part *p, void *arg)
{
    flush_ctx *c = arg;
    return sst_writer_add(c->w, p);
}

static void remove_flushing(st_table *t, mt_memtable *m)
{
    for (int i = 0; i < t->n_flushing; i++)
        if (t->flushing[i] == m) {
            memmove(&t->flushing[i], &t->flushing[i + 1], sizeof(*t->flushing) * (size_t)(t->n_flushing - i - 1));
            t->n_flushing--;
            return;
        }
}

/* Write memtable m as sstable `gen` and publish it (invariants 2, 3).
 * Returns 0, or an error with m left in flushing[] marked failed. */
static int flush_one(st_engine *e, st_table *t, mt_memtable *m, uint64_t gen, uint64_t epoch)
{
    uint64_t t0 = cs_mono_ns();
    sst_writer *w;
    int rc = sst_writer_open(t->dir, gen, t->opts.bloom_fp_chance, mt_partitions(m), &w);
    sst_reader *r = NULL;
    if (!rc) {
        flush_ctx c = { w, 0 };
        rc = mt_foreach(m, flush_part, &c);
        if (rc) sst_writer_abort(w);
        else rc = sst_writer_finish(w, m->flush_pos, 0, &r);
    }
    size_t bytes = atomic_load(&m->mem);
    CS_DEBUG("storage: flushed %s.%s generation %" PRIu64 " (%zu memtable bytes) in %.1f ms", t->ks, t->name,
             gen, bytes, (double)(cs_mono_ns() - t0) / 1e6);
    pthread_mutex_lock(&t->mu);
    if (rc) {
        m->flush_failed = true;
        CS_ERROR("storage: flush of %s.%s failed: %s (memtable kept; retried on the next flush, replayed on restart)",
                 t->ks, t->name, cs_strerror(rc));
    } else {
        if (epoch != t->epoch) { sst__mark_obsolete(r); sst_reader_unref(r); r = NULL; }
        else if ((rc = push_sst(t, r))) { sst__mark_obsolete(r); sst_reader_unref(r); r = NULL; m->flush_failed = true; }
        if (!rc) {
            remove_flushing(t, m);
            t->bytes_flushed += r ? r->file_bytes : 0;
            t->want_compact = true;
        }
    }
    pthread_mutex_unlock(&t->mu);
    if (!rc) {
        atomic_fetch_sub(&e->mem_total, bytes);
        atomic_fetch_sub(&e->mem_flushing, bytes);
        mt_unref(m);
        st__recycle(e);
    }
    return rc;
}

/* Flush job: first retry older memtables of the table whose flush failed
 * (publishing a newer sstable first would move the table's replay position
 * past their records), then the job's own memtable. */
static void run_flush(st_engine *e, st__job *j)
{
    st_table *t = j->t;
    int rc = 0;
    for (;;) {
        mt_memtable *older = NULL;
        uint64_t gen = 0;
        pthread_mutex_lock(&t->mu);
        for (int i = 0; i < t->n_flushing && t->flushing[i] != j->mt; i++)
            if (t->flushing[i]->flush_failed) { older = t->flushing[i]; gen = t->next_gen++; break; }
        pthread_mutex_unlock(&t->mu);
        if (!older) break;
        if ((rc = flush_one(e, t, older, gen, j->epoch))) break;
    }
    if (!rc) rc = flush_one(e, t, j->mt, j->gen, j->epoch);
    else {
        pthread_mutex_lock(&t->mu);
        j->mt->flush_failed = true;
        pthread_mutex_unlock(&t->mu);
    }
    pthread_mutex_lock(&t->mu);
    t->flush_jobs--;
    j->rc = rc;
    j->done = true;
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
    pthread_mutex_lock(&e->mu);
    pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&e->mu);
}

/* Switch the active memtable and queue its flush.  wait: until written. */
int st__flush_table(st_table *t, bool wait)
{
    st_engine *e = t->e;
    pthread_rwlock_wrlock(&e->barrier);
    /* No write is in flight (barrier): every record before this position is
     * in the memtable being switched out.  Read before t->mu (lock order:
     * commit log, then table). */
    st_clog_pos switch_pos = clog_current(e->log);
    pthread_mutex_lock(&t->mu);
    st__job *j = NULL;
    bool retry = t->n_flushing > 0 && t->flushing[0]->flush_failed;
    if ((mt_partitions(t->mem) > 0 || retry) && !t->dropped && t->paused == 0) {
        mt_memtable *fresh = mt_new();
        j = cs_calloc(1, sizeof *j);
        if (!fresh || !j) {
            mt_unref(fresh); cs_free(j);
            pthread_mutex_unlock(&t->mu);
            pthread_rwlock_unlock(&e->barrier);
            return CS_ENOMEM;
        }
        if (t->n_flushing == t->cap_flushing) {
            int nc = t->cap_flushing ? t->cap_flushing * 2 : 4;
            mt_memtable **nf = cs_realloc(t->flushing, (size_t)nc * sizeof *nf);
            if (!nf) {
                mt_unref(fresh); cs_free(j);
                pthread_mutex_unlock(&t->mu);
                pthread_rwlock_unlock(&e->barrier);
                return CS_ENOMEM;
            }
            t->flushing = nf; t->cap_flushing = nc;
        }
        mt_memtable *old = t->mem;
        old->flush_pos = switch_pos;
        t->flushing[t->n_flushing++] = old;
        t->mem = fresh;
        j->t = t; j->mt = old; j->gen = t->next_gen++; j->epoch = t->epoch; j->wait = wait;
        t->flush_jobs++;
        atomic_fetch_add(&e->mem_flushing, atomic_load(&old->mem));
    }
    pthread_mutex_unlock(&t->mu);
    pthread_rwlock_unlock(&e->barrier);
    pthread_mutex_lock(&e->mu);
    if (j) {
        st__job **pp = &e->jobs;
        while (*pp) pp = &(*pp)->next;
        *pp = j;
        pthread_cond_broadcast(&e->cv);
    }
    pthread_mutex_unlock(&e->mu);
    if (!wait) return 0;
    int rc = 0;
    pthread_mutex_lock(&t->mu);
    if (j) {
        while (!j->done) pthread_cond_wait(&t->cv, &t->mu);
        rc = j->rc;
        cs_free(j);
    } else {
        while (t->flush_jobs > 0) pthread_cond_wait(&t->cv, &t->mu);
    }
    pthread_mutex_unlock(&t->mu);
    return rc;
}

int st_table_flush(st_table *t)
{
    if (!t) return CS_EINVAL;
    return st__flush_table(t, true);
}

/* Flush the largest active memtable when active memory passes half the cap;
 * flush tables pinning the oldest segment when the log is over its cap. */
void st__maybe_flush(st_engine *e)
{
    size_t total = atomic_load(&e->mem_total), fl = atomic_load(&e->mem_flushing);
    size_t active = total > fl ? total - fl : 0;
    if (active > e->cfg.memtable_space / 2) {
        st_table *best = NULL;
        size_t best_mem = 0;
        pthread_mutex_lock(&e->mu);
        for (int i = 0; i < e->n_tables; i++) {
            st_table *t = e->tables[i];
            pthread_mutex_lock(&t->mu);
            size_t m = atomic_load(&t->mem->mem);
            pthread_mutex_unlock(&t->mu);
            if (m > best_mem) { best_mem = m; best = t; }
        }
        pthread_mutex_unlock(&e->mu);
        if (best) st__flush_table(best, false);
    }
    if (clog_total_bytes(e->log) > e->cfg.commitlog_total_space) {
        uint8_t ids[16][16];
        int n = clog_oldest_dirty(e->log, ids, 16);
        for (int i = 0; i < n; i++) {
            st_table *t = st_table_find(e, ids[i]);
            if (t && t->n_flushing == 0) st__flush_table(t, false);
        }
    }
}

void st__backpressure(st_engine *e)
{
    if (atomic_load(&e->mem_total) <= e->cfg.memtable_space) return;
    st__maybe_flush(e);
    uint64_t deadline = cs_mono_ns() + 10ull * 1000000000ull;
    pthread_mutex_lock(&e->mu);
    while (atomic_load(&e->mem_total) > e->cfg.memtable_space && e->jobs && cs_mono_ns() < deadline && !e->closing) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 50 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) { ts.tv_sec++; ts.tv_nsec -= 1000000000L; }
        pthread_cond_timedwait(&e->cv, &e->mu, &ts);
    }
    pthread_mutex_unlock(&e->mu);
}

/* ---------------------------------------------------------------- threads */

static void *flush_main(void *arg)
{
    st_engine *e = arg;
    pthread_mutex_lock(&e->mu);
    for (;;) {
        while (!e->jobs && !e->closing) pthread_cond_wait(&e->cv, &e->mu);
        if (!e->jobs && e->closing) break;
        st__job *j = e->jobs;
        e->jobs = j->next;
        pthread_mutex_unlock(&e->mu);
        bool wait = j->wait;
        run_flush(e, j);
        if (!wait) cs_free(j);
        pthread_mutex_lock(&e->mu);
    }
    pthread_mutex_unlock(&e->mu);
    return NULL;
}

static void *compact_main(void *arg)
{
    st_engine *e = arg;
    pthread_mutex_lock(&e->mu);
    while (!e->closing) {
        st_table *pick = NULL;
        for (int i = 0; i < e->n_tables && !pick; i++) {
            st_table *t = e->tables[i];
            pthread_mutex_lock(&t->mu);
            if (t->want_compact && !t->compacting && t->paused == 0 && !t->dropped) {
                t->compacting = true;
                t->want_compact = false;
                pick = t;
            }
            pthread_mutex_unlock(&t->mu);
        }
        if (!pick) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_sec += 1;
            pthread_cond_timedwait(&e->cv, &e->mu, &ts);
            continue;
        }
        pthread_mutex_unlock(&e->mu);
        st__compact_background(pick);
        pthread_mutex_lock(&pick->mu);
        pick->compacting = false;
        pthread_cond_broadcast(&pick->cv);
        pthread_mutex_unlock(&pick->mu);
        pthread_mutex_lock(&e->mu);
    }
    pthread_mutex_unlock(&e->mu);
    return NULL;
}

int st__bg_start(st_engine *e)
{
    int nc = e->cfg.compaction_threads > 0 ? e->cfg.compaction_threads : 1;
    if (nc > 7) nc = 7;
    if (pthread_create(&e->threads[0], NULL, flush_main, e) != 0) return CS_EIO;
    e->n_threads = 1;
    for (int i = 0; i < nc; i++) {
        if (pthread_create(&e->threads[e->n_threads], NULL, compact_main, e) != 0) break;
        e->n_threads++;
    }
    return 0;
}

void st__bg_stop(st_engine *e)
{
    pthread_mutex_lock(&e->mu);
    e->closing = true;
    pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&e->mu);
    for (int i = 0; i < e->n_threads; i++) pthread_join(e->threads[i], NULL);
    e->n_threads = 0;
}

void st__bg_kick(st_engine *e)
{
    pthread_mutex_lock(&e->mu);
    for (int i = 0; i < e->n_tables; i++) e->tables[i]->want_compact = true;
    pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&e->mu);
}

/* Stop new compactions on t and wait for its flushes and compaction to end.
 * Balanced by st__resume. */
void st__wait_idle(st_table *t)
{
    pthread_mutex_lock(&t->mu);
    t->paused++;
    while (t->flush_jobs > 0 || t->compacting) pthread_cond_wait(&t->cv, &t->mu);
    pthread_mutex_unlock(&t->mu);
}

void st__resume(st_table *t)
{
    pthread_mutex_lock(&t->mu);
    if (t->paused > 0) t->paused--;
    pthread_mutex_unlock(&t->mu);
}

/* ---------------------------------------------------------------- stats */

int st_table_stats_get(st_table *t, st_table_stats *out)
{
    if (!t || !out) return CS_EINVAL;
    memset(out, 0, sizeof *out);
    uint64_t off[96];
    sst__hist_offsets(off);
    pthread_mutex_lock(&t->mu);
    out->memtable_bytes = atomic_load(&t->mem->mem);
    out->memtable_cells = t->mem->cells;
    out->memtable_partitions = mt_partitions(t->mem);
    out->sstable_count = (uint64_t)t->n_ssts;
    uint64_t parts = 0, minb = UINT64_MAX, maxb = 0, sumb = 0, nb = 0;
    for (int i = 0; i < t->n_ssts; i++) {
        sst_reader *r = t->ssts[i];
        out->sstable_bytes += r->file_bytes;
        parts += r->st.partitions;
        out->droppable_tombstones += sst__droppable(&r->st, cs_now_s(), t->opts.gc_grace_s);
        out->bloom_false_positives += atomic_load(&r->bloom_fp);
        out->bloom_checks += atomic_load(&r->bloom_checks);
        if (r->st.level >= 0 && r->st.level < 8) out->sstables_per_level[r->st.level]++;
        for (int k = 0; k < 96; k++) {
            if (!r->st.size_hist[k]) continue;
            uint64_t v = off[k];
            if (v < minb) minb = v;
            if (v > maxb) maxb = v;
            sumb += v * r->st.size_hist[k];
            nb += r->st.size_hist[k];
        }
    }
    out->partitions_estimate = parts + out->memtable_partitions;
    out->bytes_flushed = t->bytes_flushed;
    out->bytes_compacted = t->bytes_compacted;
    out->pending_flushes = (uint64_t)t->flush_jobs;
    out->pending_compactions = st__compaction_estimate(t);
    out->compactions_done = t->compactions_done;
    out->max_partition_bytes = maxb;
    out->min_partition_bytes = nb ? minb : 0;
    out->mean_partition_bytes = nb ? sumb / nb : 0;
    out->bloom_fp_ratio = out->bloom_checks ? (double)out->bloom_false_positives / (double)out->bloom_checks : 0.0;
    pthread_mutex_unlock(&t->mu);
    return 0;
}

int st_table_partition_histograms(st_table *t, st_histogram *bytes, st_histogram *cells)
{
    if (!t) return CS_EINVAL;
    uint64_t off[96];
    sst__hist_offsets(off);
    if (bytes) { memset(bytes, 0, sizeof *bytes); memcpy(bytes->offsets, off, sizeof off); bytes->n = 96; }
    if (cells) { memset(cells, 0, sizeof *cells); memcpy(cells->offsets, off, sizeof off); cells->n = 96; }
    pthread_mutex_lock(&t->mu);
    for (int i = 0; i < t->n_ssts; i++)
        for (int k = 0; k < 96; k++) {
            if (bytes) bytes->counts[k] += t->ssts[i]->st.size_hist[k];
            if (cells) cells->counts[k] += t->ssts[i]->st.cell_hist[k];
        }
    pthread_mutex_unlock(&t->mu);
    return 0;
}

int st_compactions_list(st_engine *e, st_compaction_info *out, int max)
{
    if (!e || (!out && max)) return CS_EINVAL;
    int n = 0;
    pthread_mutex_lock(&e->mu);
    for (int i = 0; i < e->n_tables && n < max; i++) {
        st_table *t = e->tables[i];
        pthread_mutex_lock(&t->mu);
        if (t->compact_running || t->flush_jobs) {
            st_compaction_info *c = &out[n++];
            memset(c, 0, sizeof *c);
            memcpy(c->table_id, t->id, 16);
            snprintf(c->ks, sizeof c->ks, "%s", t->ks);
            snprintf(c->table, sizeof c->table, "%s", t->name);
            snprintf(c->kind, sizeof c->kind, "%s", t->compact_running ? "Compaction" : "Flush");
            c->done_bytes = t->compact_running ? t->cmp_done : 0;
            c->total_bytes = t->compact_running ? t->cmp_total : 0;
        }
        pthread_mutex_unlock(&t->mu);
    }
    pthread_mutex_unlock(&e->mu);
    return n;
}

/* ---------------------------------------------------------------- tools */

const char *st_table_dir(const st_table *t) { return t ? t->dir : NULL; }

int st_table_sstables(st_table *t, char ***paths, int *n)
{
    *paths = NULL; *n = 0;
    if (!t) return CS_EINVAL;
    pthread_mutex_lock(&t->mu);
    int cnt = t->n_ssts;
    char **v = cs_calloc((size_t)(cnt ? cnt : 1), sizeof *v);
    int rc = v ? 0 : CS_ENOMEM;
    for (int i = 0; v && i < cnt; i++) {
        v[i] = sst__path(t->dir, t->ssts[i]->gen, "Data.db", false);
        if (!v[i]) rc = CS_ENOMEM;
    }
    pthread_mutex_unlock(&t->mu);
    if (rc) { st_paths_free(v, cnt); return rc; }
    *paths = v; *n = cnt;
    return 0;
}

void st_paths_free(char **paths, int n)
{
    for (int i = 0; paths && i < n; i++) cs_free(paths[i]);
    cs_free(paths);
}
