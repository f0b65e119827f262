/*
 * engine_bg.c: background work of the engine.
 *
 * Threads: thread 0 flushes memtables, one at a time in FIFO order (so a
 * table's sstables are always produced in commit log order, which makes the
 * replay position stored in each sstable monotonic).  Threads 1..n run
 * compactions (compaction_pick.c, compaction.c), at most one per table at
 * a time: of the tables a flush, ALTER or autocompaction asked for, and,
 * looked for every BG_CHECK_MS, of those where only time made one due.
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
 * (tables dirty in the oldest segment); a memtable holding data that is
 * memtable_flush_period_in_ms old (flush_periods, timed by the flush
 * thread's wait); st_engine_close(flush_all).
 * Back-pressure: st_write waits while all memtables exceed memtable_space.
 *
 * Priority: flush and compaction run under SCHED_IDLE while there is
 * headroom, so they only take CPU the request loop and its clients leave
 * (a waking normal task preempts a SCHED_IDLE one at once; a 650 ms flush
 * at normal priority halved the loop's CPU, 150-370 ms p99).  A thread is
 * raised to SCHED_OTHER nice 0 whenever starving it would hurt:
 *   - flush: writers would reach back-pressure (memtable_space) within
 *     BG_HORIZON_NS at the rate they filled memtables since the flushing
 *     began, or memory is over 3/4 of memtable_space (st__bg_mem_pressure,
 *     checked by st_write once per MiB written and at each job); a caller
 *     waiting for a flush (st_table_flush / nodetool flush, snapshot before
 *     TRUNCATE and DROP, st_engine_close) or held by back-pressure;
 *   - compaction: a caller waiting for it (st__wait_idle for TRUNCATE/DROP,
 *     a major compaction waiting for the background one); its table has
 *     BG_BACKLOG_PENDING compactions pending or BG_BACKLOG_SSTABLES x
 *     min_threshold sstables when it is picked;
 *   - both: closing; and a flush thread while it publishes (it then holds
 *     locks writers take: a preempted SCHED_IDLE holder would stall them).
 * Left open: Linux has no priority inheritance for these policies, so a
 * SCHED_IDLE thread preempted inside one of its other short t->mu / e->mu
 * sections (compaction's progress check every 64 partitions, the job
 * bookkeeping) makes a writer that needs the lock wait until that thread
 * gets a CPU again: at once on an idle CPU, later on a saturated machine.
 * Waiters count themselves in bg_urgent and raise the threads directly
 * (pthread_setschedparam on the thread); a thread lowers itself only at a
 * job boundary, re-checking every reason under prio_mu.  The kernel lets a
 * thread leave SCHED_IDLE only with CAP_SYS_NICE or RLIMIT_NICE >= 20:
 * without either, every thread stays at normal priority, as before.
 */
#include "storage/sstable_int.h"
#include "common/alloc.h"
#include "common/err.h"
#include "common/log.h"
#include "common/util.h"
#include "common/vfs.h"

#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static bool bg_hold(st_engine *e, int i);
static void bg_unhold(st_engine *e, int i, bool was_idle);
static void bg_raise(st_engine *e, int kind);

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

int st__push_sst(st_table *t, sst_reader *r)
{
    if (t->n_ssts == t->cap_ssts) {
        int nc = t->cap_ssts ? t->cap_ssts * 2 : 8;
        sst_reader **n = cs_realloc(t->ssts, (size_t)nc * sizeof *n);
        if (!n) return CS_ENOMEM;
        t->ssts = n; t->cap_ssts = nc;
    }
    t->ssts[t->n_ssts++] = r;
    t->src_version++;
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
        if ((rc = st__push_sst(t, r))) { sst_reader_unref(r); break; }
    }
    vfs_list_free(names, n);
    if (rc) return rc;
    /* Inputs of a compaction whose output exists are obsolete.  An output
     * always has a higher generation than its inputs: a Statistics.db that
     * names its own generation or a later one as an ancestor is corrupt,
     * and its list is not acted on (it would delete the sstable itself, or
     * a newer one, with its data). */
    for (int i = 0; i < t->n_ssts; i++) {
        const sst_reader *out = t->ssts[i];
        bool bad = false;
        for (int k = 0; k < out->st.n_ancestors; k++) bad |= out->st.ancestors[k] >= out->gen;
        if (bad) {
            CS_ERROR("corruption: %s/cs-%" PRIu64 "-Statistics.db names generation %" PRIu64
                     " or later as an ancestor; its ancestors are ignored",
                     t->dir, out->gen, out->gen);
            continue;
        }
        for (int k = 0; k < out->st.n_ancestors; k++)
            for (int j = 0; j < t->n_ssts; j++)
                if (t->ssts[j]->gen == out->st.ancestors[k]) sst__mark_obsolete(t->ssts[j]);
    }
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

/* The memtable's walk (mt_foreach) onto the sstable writer. */
static int flush_begin(void *w, const st__part *p) { return sst_writer_begin(w, p); }
static int flush_rows(void *w, st__row *const *rows, int n) { return sst_writer_rows(w, rows, n); }
static int flush_end(void *w) { return sst_writer_end(w); }

static int flush_packed(void *w, const uint8_t *ck, uint32_t ck_len, uint8_t flags, const uint8_t *ops,
                        uint32_t ops_len, uint32_t n_cells)
{
    return sst_writer_row_ops(w, ck, ck_len, flags, ops, ops_len, n_cells);
}

static void remove_flushing(st_table *t, mt_memtable *m)
{
    for (int i = 0; i < t->n_flushing; i++)
        if (t->flushing[i] == m) {
            memmove(&t->flushing[i], &t->flushing[i + 1], sizeof(*t->flushing) * (size_t)(t->n_flushing - i - 1));
            t->n_flushing--;
            t->src_version++;
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
        sst_writer_warm_cache(w);   /* the memtable's data stays at hand for reads */
        mt_sink s = { flush_begin, flush_packed, flush_rows, flush_end, w };
        rc = mt_foreach(m, &s);
        if (rc) sst_writer_abort(w);
        else rc = sst_writer_finish(w, m->flush_pos, 0, &r);
    }
    size_t bytes = atomic_load(&m->mem);
    CS_DEBUG("storage: flushed %s.%s generation %" PRIu64 " (%zu memtable bytes) in %.1f ms", t->ks, t->name,
             gen, bytes, (double)(cs_mono_ns() - t0) / 1e6);
    bool held = bg_hold(e, 0);   /* publishing takes t->mu, e->mu, the commit log's lock */
    pthread_mutex_lock(&t->mu);
    if (rc) {
        m->flush_failed = true;
        CS_ERROR("storage: flush of %s.%s failed: %s (memtable kept; retried on the next flush, replayed on restart)",
                 t->ks, t->name, cs_strerror(rc));
    } else {
        if (epoch != t->epoch) { sst__mark_obsolete(r); sst_reader_unref(r); r = NULL; }
        else if ((rc = st__push_sst(t, r))) { sst__mark_obsolete(r); sst_reader_unref(r); r = NULL; m->flush_failed = true; }
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
        st__recycle_segments(e);   /* takes the barrier writers take: still raised */
    }
    bg_unhold(e, 0, held);
    /* The slow, lock-free part at background priority: freeing the
     * memtable (tens of MB of unmaps, each a TLB shootdown on the loop's
     * CPU) and unlinking recycled segments.  Raised, they ran for
     * milliseconds at normal priority, and a request loop that woke on
     * that CPU waited for them (perf sched: 4 ms behind a 16 ms run). */
    if (!rc) {
        mt_unref(m);
        clog_reap(e->log);
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
    /* The memtable after this one was sized from it (mt_expect_partitions):
     * its index table, and the next one's, come from the pool. */
    mt_index_pool_prepare(mt_partitions(j->mt));
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
        mt_memtable *fresh = mt_new(e->mt_pool);
        if (fresh) mt_expect_partitions(fresh, mt_partitions(t->mem));
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
        t->src_version++;
        t->memtable_switches++;
        j->t = t; j->mt = old; j->gen = t->next_gen++; j->epoch = t->epoch; j->wait = wait;
        t->flush_jobs++;
        if (atomic_fetch_add(&e->mem_flushing, atomic_load(&old->mem)) == 0) atomic_store(&e->bg_switch_ns, cs_mono_ns());
    }
    pthread_mutex_unlock(&t->mu);
    pthread_rwlock_unlock(&e->barrier);
    if (wait) st__bg_urgent(e, 0, +1);   /* before the job is visible: it starts at normal priority */
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
    st__bg_urgent(e, 0, -1);
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
    if (atomic_load(&e->bg_idle[0])) {
        /* The rate estimate once per MiB written, not per write (a clock read). */
        uint_fast64_t mark = total >> 20, prev = atomic_load(&e->bg_mark);
        if (total > e->cfg.memtable_space / 4 * 3 ||
            (mark != prev && atomic_compare_exchange_strong(&e->bg_mark, &prev, mark) && st__bg_mem_pressure(e)))
            bg_raise(e, 0);
    }
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
    st__bg_urgent(e, 0, +1);
    uint64_t t0 = cs_mono_ns(), deadline = t0 + 10ull * 1000000000ull;
    bool waited = false;   /* with no flush queued there is nothing to wait for (and nothing to count) */
    pthread_mutex_lock(&e->mu);
    while (atomic_load(&e->mem_total) > e->cfg.memtable_space && e->jobs && cs_mono_ns() < deadline && !e->closing) {
        waited = true;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 50 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) { ts.tv_sec++; ts.tv_nsec -= 1000000000L; }
        pthread_cond_timedwait(&e->cv, &e->mu, &ts);
    }
    pthread_mutex_unlock(&e->mu);
    st__bg_urgent(e, 0, -1);
    if (waited) {
        atomic_fetch_add(&e->bp_waits, 1);
        atomic_fetch_add(&e->bp_ns, cs_mono_ns() - t0);
    }
}

/* ---------------------------------------------------------------- priority */

/* The policy is in the file header ("Priority").  threads[i] changes policy
 * only under prio_mu, and whoever lowers it re-reads every reason to stay
 * at normal priority under that mutex, after the waiter that raised it
 * published its reason: so a thread never goes back to SCHED_IDLE past a
 * waiter that needs it. */

enum { BG_FLUSH = 0, BG_COMPACT = 1 };

/* A compaction thread stays at normal priority while its table has this
 * many compactions pending, or this many times min_threshold sstables. */
#define BG_BACKLOG_PENDING 4
#define BG_BACKLOG_SSTABLES 4

/* The memtable chunk pool is trimmed this often: chunks that sat unused
 * since the previous trim are freed (a flush cycle under steady writes is
 * shorter; an idle server's memtable memory is returned within ~2 trims). */
#define MT_POOL_TRIM_NS (5ull * 1000000000ull)

/* Every table is looked at this often for compactions that only time
 * makes due (tombstone compactions, TWCS expiry; st__compaction_check_due):
 * no flush need come to trigger them.  Cassandra submits every table for
 * a background compaction once a minute. */
#define BG_CHECK_MS 1000

/* A flush must not wait for idle CPU once the writers would reach
 * back-pressure (memtable_space, st__backpressure) within BG_HORIZON_NS at
 * the rate they are filling the active memtables, or once memory is past
 * 3/4 of memtable_space anyway.  At max throughput (~40 MB/s of memtable)
 * that is at once, as before the idle policy; at half of it (~15 MB/s) a
 * 256 MiB space never gets there. */
#define BG_HORIZON_NS (4ull * 1000000000ull)
/* The rate is the growth of the active memtables from a baseline, the
 * first estimate at least BG_RATE_MIN_NS after the switch (bg_switch_ns),
 * over at least BG_RATE_MIN_NS and BG_RATE_MIN_BYTES.  Not the active bytes
 * since the switch: those include what the switch itself brings, which is
 * no rate.  A few writes in the microseconds after it made any rate look
 * huge; the fresh memtable's first index table, sized for the partitions of
 * the one before (16 MiB for a million), is counted at its first write; and
 * the other tables' memtables were there before.  Each made the whole
 * flush (a policy is re-decided only between jobs) run at normal priority
 * while the writers were at 15 MB/s: the index table alone read as 61 MB/s
 * 140 ms after the switch (fixed 65k/s INSERT: the loop runnable but not
 * running 37% of the time during the flush, per-second p99 3-14 ms).  A
 * writer at max throughput is still caught within ~0.2 s (st__maybe_flush
 * re-checks every MiB written). */
#define BG_RATE_MIN_NS (100ull * 1000000ull)
#define BG_RATE_MIN_BYTES ((size_t)1 << 20)

bool st__bg_mem_pressure(st_engine *e)
{
    size_t space = e->cfg.memtable_space, total = atomic_load(&e->mem_total), fl = atomic_load(&e->mem_flushing);
    if (total > space / 4 * 3) return true;
    if (fl == 0 || total >= space) return fl > 0;
    size_t active = total > fl ? total - fl : 0;
    uint64_t now = cs_mono_ns(), sw = atomic_load(&e->bg_switch_ns);
    if (now - sw < BG_RATE_MIN_NS) return false;
    pthread_mutex_lock(&e->rate_mu);
    if (e->bg_base_ns < sw) {   /* the first estimate since this switch: the baseline */
        e->bg_base_ns = now;
        e->bg_base_active = active;
        pthread_mutex_unlock(&e->rate_mu);
        return false;
    }
    uint64_t el = now - e->bg_base_ns;
    size_t grown = active > e->bg_base_active ? active - e->bg_base_active : 0;
    pthread_mutex_unlock(&e->rate_mu);
    if (el < BG_RATE_MIN_NS || grown < BG_RATE_MIN_BYTES) return false;
    /* headroom / (grown / el) < horizon */
    return (double)(space - total) * (double)el < (double)grown * (double)BG_HORIZON_NS;
}

/* Can a thread that entered SCHED_IDLE get back to SCHED_OTHER nice 0?
 * The kernel treats SCHED_IDLE as nice 20: leaving it needs CAP_SYS_NICE or
 * an RLIMIT_NICE of at least 20.  Without it every thread stays normal. */
static bool bg_idle_reversible(void)
{
#ifdef SCHED_IDLE
    struct rlimit rl;
    if (getrlimit(RLIMIT_NICE, &rl) == 0) {
        if (rl.rlim_cur >= 20) return true;
        if (rl.rlim_max >= 20 || rl.rlim_max == RLIM_INFINITY) {
            rl.rlim_cur = rl.rlim_max == RLIM_INFINITY ? 20 : rl.rlim_max;
            if (setrlimit(RLIMIT_NICE, &rl) == 0) return true;
        }
    }
    FILE *f = fopen("/proc/self/status", "r");
    bool cap = false;
    if (f) {
        char line[256];
        unsigned long long v;
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "CapEff: %llx", &v) == 1) { cap = (v >> 23) & 1; break; }   /* CAP_SYS_NICE */
        fclose(f);
    }
    return cap;
#else
    return false;
#endif
}

/* Caller holds prio_mu.  self: i is the calling thread. */
static void bg_set_policy(st_engine *e, int i, bool idle, bool self)
{
#ifdef SCHED_IDLE
    if (atomic_load(&e->bg_idle[i]) == idle) return;
    struct sched_param sp = { .sched_priority = 0 };
    int rc = pthread_setschedparam(self ? pthread_self() : e->threads[i], idle ? SCHED_IDLE : SCHED_OTHER, &sp);
    if (rc) {
        /* Stay (or try to stay) normal from now on. */
        CS_WARN("storage: cannot set background thread %d to %s: %s; background threads stay at normal priority",
                i, idle ? "SCHED_IDLE" : "SCHED_OTHER", strerror(rc));
        e->bg_idle_ok = false;
        return;
    }
    atomic_store(&e->bg_idle[i], idle);
#else
    (void)e; (void)i; (void)idle; (void)self;
#endif
}

/* The calling background thread i: idle policy unless a reason says
 * otherwise (backlog: its compaction is overdue). */
static void bg_pace(st_engine *e, int i, bool backlog)
{
    if (!e->bg_idle_ok && !atomic_load(&e->bg_idle[i])) return;
    pthread_mutex_lock(&e->prio_mu);
    bool urgent = i == 0 ? atomic_load(&e->bg_urgent[BG_FLUSH]) > 0 || st__bg_mem_pressure(e)
                         : atomic_load(&e->bg_urgent[BG_COMPACT]) > 0 || backlog;
    bg_set_policy(e, i, e->bg_idle_ok && !urgent, true);
    pthread_mutex_unlock(&e->prio_mu);
}

/* Raise the flush thread (kind BG_FLUSH) or the compaction threads to
 * normal priority now. */
static void bg_raise(st_engine *e, int kind)
{
    pthread_mutex_lock(&e->prio_mu);
    for (int i = kind == BG_FLUSH ? 0 : 1; i < (kind == BG_FLUSH ? 1 : e->n_threads); i++)
        if (atomic_load(&e->bg_idle[i])) bg_set_policy(e, i, false, false);
    pthread_mutex_unlock(&e->prio_mu);
}

void st__bg_urgent(st_engine *e, int kind, int delta)
{
    atomic_fetch_add(&e->bg_urgent[kind], delta);
    if (delta > 0) bg_raise(e, kind);
}

/* The calling background thread i at normal priority while it holds locks
 * the request path takes (a preempted SCHED_IDLE holder would stall it);
 * returns whether it was idle, for bg_unhold. */
static bool bg_hold(st_engine *e, int i)
{
    if (!atomic_load(&e->bg_idle[i])) return false;
    pthread_mutex_lock(&e->prio_mu);
    bg_set_policy(e, i, false, true);
    pthread_mutex_unlock(&e->prio_mu);
    return true;
}

static void bg_unhold(st_engine *e, int i, bool was_idle)
{
    if (was_idle) bg_pace(e, i, false);
}

/* Index of the calling thread in threads[] (stored before it can run:
 * st__bg_start creates the threads under prio_mu). */
static int bg_self(st_engine *e)
{
    pthread_mutex_lock(&e->prio_mu);
    int k = 0;
    for (int i = 0; i < e->n_threads; i++)
        if (pthread_equal(e->threads[i], pthread_self())) k = i;
    pthread_mutex_unlock(&e->prio_mu);
    return k;
}

/* ---------------------------------------------------------------- threads */

/* memtable_flush_period_in_ms (Cassandra's AbstractAllocatorMemtable
 * .scheduleFlush / flushIfPeriodExpired): a memtable is looked at once it
 * is a period old; one holding data is flushed (its successor is looked
 * at a period after it is made), a clean one is looked at again a period
 * later.  Caller (the flush thread) holds e->mu, released while flushes
 * are queued.  Returns the ns until the next look is due, UINT64_MAX for
 * none, 0 after queueing flushes. */
#define FLUSH_PERIOD_BATCH 16

static uint64_t flush_periods(st_engine *e)
{
    uint64_t now = cs_mono_ns(), next = UINT64_MAX;
    st_table *due[FLUSH_PERIOD_BATCH];
    int n = 0;
    for (int i = 0; i < e->n_tables && n < FLUSH_PERIOD_BATCH; i++) {
        st_table *t = e->tables[i];
        pthread_mutex_lock(&t->mu);
        uint64_t period = t->opts.flush_period_ms > 0 ? (uint64_t)t->opts.flush_period_ms * 1000000u : 0;
        if (period && !t->dropped && t->paused == 0) {
            uint64_t at = CS_MAX(t->mem->created_ns + period, t->flush_recheck_ns);
            if (now < at) next = CS_MIN(next, at - now);
            else if (mt_partitions(t->mem) == 0) { t->flush_recheck_ns = now + period; next = CS_MIN(next, period); }
            else {
                t->flush_recheck_ns = now + period;   /* a flush that fails is tried again a period later */
                t->pins++;                            /* a drop meanwhile leaves t to the unpin */
                due[n++] = t;
            }
        }
        pthread_mutex_unlock(&t->mu);
    }
    if (n == 0) return next;
    pthread_mutex_unlock(&e->mu);
    for (int i = 0; i < n; i++) {
        CS_DEBUG("storage: %s.%s memtable_flush_period_in_ms expired: flushing", due[i]->ks, due[i]->name);
        st__flush_table(due[i], false);
        st_table_unpin(due[i]);
    }
    pthread_mutex_lock(&e->mu);
    return 0;
}

static void *flush_main(void *arg)
{
    st_engine *e = arg;
    pthread_mutex_lock(&e->mu);
    for (;;) {
        while (!e->jobs && !e->closing) {
            uint64_t wait_ns = flush_periods(e);
            if (e->jobs || e->closing || wait_ns == 0) continue;
            if (wait_ns == UINT64_MAX) { pthread_cond_wait(&e->cv, &e->mu); continue; }
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            uint64_t ns = (uint64_t)ts.tv_nsec + wait_ns;
            ts.tv_sec += (time_t)(ns / 1000000000u);
            ts.tv_nsec = (long)(ns % 1000000000u);
            pthread_cond_timedwait(&e->cv, &e->mu, &ts);
        }
        if (!e->jobs && e->closing) break;
        st__job *j = e->jobs;
        e->jobs = j->next;
        pthread_mutex_unlock(&e->mu);
        bg_pace(e, 0, false);
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
    int self = bg_self(e);
    pthread_mutex_lock(&e->mu);
    while (!e->closing) {
        /* Memtable chunks no memtable took for a while go back to malloc
         * (e->mu is not held while they are freed). */
        uint64_t now = cs_mono_ns();
        if (e->mt_pool && now - e->mt_pool_trim_ns > MT_POOL_TRIM_NS) {
            e->mt_pool_trim_ns = now;
            pthread_mutex_unlock(&e->mu);
            cs_chunk_pool_trim(e->mt_pool);
            mt_index_pool_trim(false);
            pthread_mutex_lock(&e->mu);
            continue;
        }
        st_table *pick = NULL;
        bool backlog = false;
        /* Past concurrent_compactors (nodetool setconcurrentcompactors
         * lowered it), this thread takes no work. */
        bool idle = self > atomic_load(&e->cmp_concurrent);
        for (int i = 0; i < e->n_tables && !pick && !idle; i++) {
            st_table *t = e->tables[i];
            pthread_mutex_lock(&t->mu);
            if (t->want_compact && !t->compacting && t->paused == 0 && !t->dropped) {
                t->compacting = true;
                t->want_compact = false;
                pick = t;
                int min_t = t->opts.min_threshold > 1 ? t->opts.min_threshold : 2;
                backlog = t->n_ssts >= BG_BACKLOG_SSTABLES * min_t ||
                          st__compaction_estimate(t) >= BG_BACKLOG_PENDING;
            }
            pthread_mutex_unlock(&t->mu);
        }
        if (!pick && cs_now_ms() - e->last_compaction_check_ms >= BG_CHECK_MS) {
            /* Compactions only time makes due (compaction_pick.c). */
            int64_t now_ms = cs_now_ms();
            e->last_compaction_check_ms = now_ms;
            bool any = false;
            for (int i = 0; i < e->n_tables; i++) {
                st_table *t = e->tables[i];
                pthread_mutex_lock(&t->mu);
                if (!t->want_compact && !t->compacting && t->paused == 0 && !t->dropped &&
                    !atomic_load(&t->autocompaction_off) && st__compaction_check_due(t, now_ms))
                    any = t->want_compact = true;
                pthread_mutex_unlock(&t->mu);
            }
            if (any) continue;
        }
        if (!pick) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_sec += 1;
            pthread_cond_timedwait(&e->cv, &e->mu, &ts);
            continue;
        }
        pthread_mutex_unlock(&e->mu);
        bg_pace(e, self, backlog);
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
    atomic_store(&e->cmp_concurrent, nc);
    if (nc > ST_MAX_COMPACTION_THREADS) nc = ST_MAX_COMPACTION_THREADS;
    pthread_mutex_init(&e->prio_mu, NULL);
    pthread_mutex_init(&e->rate_mu, NULL);
    e->bg_idle_ok = bg_idle_reversible();
    if (!e->bg_idle_ok) CS_DEBUG("storage: SCHED_IDLE cannot be left without CAP_SYS_NICE; flush and compaction run at normal priority");
    pthread_mutex_lock(&e->prio_mu);   /* threads[] complete before any thread reads it (bg_self) */
    int rc = 0;
    if (pthread_create(&e->threads[0], NULL, flush_main, e) != 0) rc = CS_EIO;
    else {
        pthread_setname_np(e->threads[0], "flush");   /* for top -H and perf */
        e->n_threads = 1;
    }
    for (int i = 0; !rc && i < nc; i++) {
        if (pthread_create(&e->threads[e->n_threads], NULL, compact_main, e) != 0) break;
        pthread_setname_np(e->threads[e->n_threads], "compaction");
        e->n_threads++;
    }
    pthread_mutex_unlock(&e->prio_mu);
    return rc;
}

void st_engine_set_concurrent_compactors(st_engine *e, int n)
{
    if (!e || n <= 0) return;
    atomic_store(&e->cmp_concurrent, n);
    pthread_mutex_lock(&e->mu);
    bool closing = e->closing;
    pthread_mutex_unlock(&e->mu);
    /* More threads if needed (the engine's are made under prio_mu, as by
     * st__bg_start; called on the thread that closes the engine, so not
     * during st__bg_stop). */
    int want = CS_MIN(n, ST_MAX_COMPACTION_THREADS) + 1;
    if (!closing && e->n_threads > 0) {   /* started (prio_mu exists) */
        pthread_mutex_lock(&e->prio_mu);
        while (e->n_threads < want) {
            if (pthread_create(&e->threads[e->n_threads], NULL, compact_main, e) != 0) break;
            pthread_setname_np(e->threads[e->n_threads], "compaction");
            e->n_threads++;
        }
        pthread_mutex_unlock(&e->prio_mu);
    }
    pthread_mutex_lock(&e->mu);
    pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&e->mu);
    CS_INFO("storage: concurrent_compactors set to %d", n);
}

int st_engine_concurrent_compactors(st_engine *e)
{
    return e ? atomic_load(&e->cmp_concurrent) : 0;
}

void st__bg_stop(st_engine *e)
{
    if (e->n_threads > 0) {
        /* Closing: whatever is left runs at normal priority. */
        st__bg_urgent(e, BG_FLUSH, +1);
        st__bg_urgent(e, BG_COMPACT, +1);
    }
    pthread_mutex_lock(&e->mu);
    e->closing = true;
    pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&e->mu);
    for (int i = 0; i < e->n_threads; i++) pthread_join(e->threads[i], NULL);
    if (e->n_threads > 0) {
        uint64_t w = atomic_load(&e->bp_waits), ns = atomic_load(&e->bp_ns);
        if (w) CS_INFO("storage: writers waited for memtable flushes %" PRIu64 " times, %.1f ms in all", w, (double)ns / 1e6);
        pthread_mutex_destroy(&e->prio_mu);
        pthread_mutex_destroy(&e->rate_mu);
    }
    e->n_threads = 0;
}

void st_table_size_estimate(st_table *t, int64_t start, int64_t end, uint64_t *partitions, uint64_t *mean_size)
{
    uint64_t n = 0, bytes = 0, keys = 0;
    pthread_mutex_lock(&t->mu);   /* keeps the readers referenced; their arrays are immutable */
    for (int i = 0; i < t->n_ssts; i++) {
        sst_reader *r = t->ssts[i];
        n += sst_keys_in_range(r, start, end);
        bytes += r->logical;
        keys += r->n_idx;
    }
    pthread_mutex_unlock(&t->mu);
    *partitions = n;
    *mean_size = keys ? bytes / keys : 0;
}

void st_table_set_autocompaction(st_table *t, bool on)
{
    if (!t) return;
    atomic_store(&t->autocompaction_off, !on);
    if (on) st__bg_kick(t->e);   /* look for work now, as Cassandra's enableAutoCompaction */
}

bool st_table_autocompaction(const st_table *t)
{
    return t && !atomic_load(&t->autocompaction_off);
}

void st__bg_kick(st_engine *e)
{
    pthread_mutex_lock(&e->mu);
    for (int i = 0; i < e->n_tables; i++) e->tables[i]->want_compact = true;
    pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&e->mu);
}

void st__bg_kick_table(st_table *t)
{
    pthread_mutex_lock(&t->e->mu);
    t->want_compact = true;
    pthread_cond_broadcast(&t->e->cv);
    pthread_mutex_unlock(&t->e->mu);
}

/* Stop new compactions on t and wait for its flushes and compaction to end.
 * Balanced by st__resume. */
void st__wait_idle(st_table *t)
{
    st__bg_urgent(t->e, BG_FLUSH, +1);
    st__bg_urgent(t->e, BG_COMPACT, +1);
    pthread_mutex_lock(&t->mu);
    t->paused++;
    while (t->flush_jobs > 0 || t->compacting) pthread_cond_wait(&t->cv, &t->mu);
    pthread_mutex_unlock(&t->mu);
    st__bg_urgent(t->e, BG_FLUSH, -1);
    st__bg_urgent(t->e, BG_COMPACT, -1);
}

void st__resume(st_table *t)
{
    pthread_mutex_lock(&t->mu);
    if (t->paused > 0) t->paused--;
    pthread_cond_broadcast(&t->cv);      /* st_table_compact waits for it */
    pthread_mutex_unlock(&t->mu);
}

/* ---------------------------------------------------------------- stats */

int st_table_sstables_in_range(st_table *t, int64_t start, int64_t end)
{
    if (!t) return 0;
    int n = 0;
    pthread_mutex_lock(&t->mu);
    for (int i = 0; i < t->n_ssts; i++) {
        const sst_reader *r = t->ssts[i];
        if (r->n_idx == 0) continue;
        int64_t lo = r->idx[0].token, hi = r->idx[r->n_idx - 1].token;
        n += hi > start && (end == INT64_MIN || lo <= end);
    }
    pthread_mutex_unlock(&t->mu);
    return n;
}

int st_table_stats_get(st_table *t, st_table_stats *out)
{
    if (!t || !out) return CS_EINVAL;
    memset(out, 0, sizeof *out);
    uint64_t off[SST_SIZE_BUCKETS];
    st_hist_offsets(off, SST_SIZE_BUCKETS);
    pthread_mutex_lock(&t->mu);
    out->memtable_bytes = atomic_load(&t->mem->mem);
    out->memtable_cells = t->mem->cells;
    out->memtable_partitions = mt_partitions(t->mem);
    out->sstable_count = (uint64_t)t->n_ssts;
    uint64_t parts = 0, minb = 0, maxb = 0, sumb = 0, nb = 0;
    int32_t now = cs_now_s();
    for (int i = 0; i < t->n_ssts; i++) {
        sst_reader *r = t->ssts[i];
        out->sstable_bytes += r->file_bytes;
        parts += r->st.partitions;
        out->droppable_estimate += sst__droppable_before(&r->st, (int32_t)CS_MAX((int64_t)INT32_MIN, (int64_t)now - t->opts.gc_grace_s));
        out->bloom_false_positives += atomic_load(&r->bloom_fp);
        out->bloom_checks += atomic_load(&r->bloom_checks);
        if (r->st.level >= 0 && r->st.level < 8) {
            out->sstables_per_level[r->st.level]++;
            out->sstables_bytes_per_level[r->st.level] += r->file_bytes;
        }
        out->data_bytes += r->chunks[r->n_chunks];
        out->uncompressed_bytes += r->logical;
        out->bloom_disk_bytes += SST_FILE_HDR + 12 + r->bloom_bits / 8;
        out->bloom_mem_bytes += r->bloom_bits / 8;
        out->index_mem_bytes += r->idx_len + r->n_idx * (sizeof *r->idx + sizeof *r->toks) + r->n_sum * sizeof *r->sum;
        out->chunk_offsets_bytes += (r->n_chunks + 1) * sizeof *r->chunks;
        /* TableMetrics' Min/Max/MeanPartitionSize and getDroppableTombstoneRatio's
         * cell count: EstimatedHistogram min(), max(), mean() * count() per sstable */
        const uint64_t *sh = r->st.size_hist, *ch = r->st.cell_hist;
        out->cells_estimate += sst__hist_mean(ch, off, SST_CELL_BUCKETS) * sst__hist_count(ch, SST_CELL_BUCKETS);
        out->sstable_rows += r->st.rows;
        uint64_t mn = st_hist_min(sh, off, SST_SIZE_BUCKETS), mx = st_hist_max(sh, off, SST_SIZE_BUCKETS);
        if (minb == 0 || mn < minb) minb = mn;
        if (mx > maxb) maxb = mx;
        uint64_t cnt = sst__hist_count(sh, SST_SIZE_BUCKETS);
        sumb += sst__hist_mean(sh, off, SST_SIZE_BUCKETS) * cnt;
        nb += cnt;
    }
    out->droppable_tombstones = (uint64_t)llround(out->droppable_estimate);
    out->partitions_estimate = parts + out->memtable_partitions;
    out->bytes_flushed = t->bytes_flushed;
    out->bytes_compacted = t->bytes_compacted;
    out->pending_flushes = (uint64_t)t->flush_jobs;
    out->pending_compactions = st__compaction_estimate(t);
    out->compactions_done = t->compactions_done;
    out->memtable_switches = t->memtable_switches;
    out->max_partition_bytes = maxb;
    out->min_partition_bytes = minb;
    out->mean_partition_bytes = nb ? sumb / nb : 0;
    out->bloom_fp_ratio = out->bloom_checks ? (double)out->bloom_false_positives / (double)out->bloom_checks : 0.0;
    pthread_mutex_unlock(&t->mu);
    return 0;
}

int st_table_partition_histograms(st_table *t, st_histogram *bytes, st_histogram *cells)
{
    if (!t) return CS_EINVAL;
    if (bytes) { memset(bytes, 0, sizeof *bytes); st_hist_offsets(bytes->offsets, SST_SIZE_BUCKETS); bytes->n = SST_SIZE_BUCKETS; }
    if (cells) { memset(cells, 0, sizeof *cells); st_hist_offsets(cells->offsets, SST_CELL_BUCKETS); cells->n = SST_CELL_BUCKETS; }
    pthread_mutex_lock(&t->mu);
    for (int i = 0; i < t->n_ssts; i++) {
        for (int k = 0; bytes && k <= SST_SIZE_BUCKETS; k++) bytes->counts[k] += t->ssts[i]->st.size_hist[k];
        for (int k = 0; cells && k <= SST_CELL_BUCKETS; k++) cells->counts[k] += t->ssts[i]->st.cell_hist[k];
    }
    pthread_mutex_unlock(&t->mu);
    return 0;
}

void st_engine_stats_get(st_engine *e, st_engine_stats *out)
{
    memset(out, 0, sizeof *out);
    if (!e) return;
    out->flush_threads = e->n_threads > 0 ? 1 : 0;          /* threads[0] flushes */
    out->compaction_threads = e->n_threads > 1 ? CS_MIN(e->n_threads - 1, atomic_load(&e->cmp_concurrent)) : 0;
    out->backpressure_waits = atomic_load(&e->bp_waits);
    uint64_t jobs = 0;
    pthread_mutex_lock(&e->mu);
    for (int i = 0; i < e->n_tables; i++) {
        st_table *t = e->tables[i];
        pthread_mutex_lock(&t->mu);
        jobs += (uint64_t)t->flush_jobs;
        out->flushes_done += t->memtable_switches - (uint64_t)t->flush_jobs;
        out->compactions_done += t->compactions_done;
        if (t->compact_running) out->compactions_running++;
        uint64_t est = st__compaction_estimate(t);
        out->compactions_pending += est > (t->compact_running ? 1u : 0u) ? est - (t->compact_running ? 1u : 0u) : 0;
        pthread_mutex_unlock(&t->mu);
    }
    pthread_mutex_unlock(&e->mu);
    /* one flush thread runs one job at a time; the rest wait */
    out->flushes_running = jobs ? 1 : 0;
    out->flushes_queued = jobs ? jobs - 1 : 0;
}

/* Cassandra's OperationType names (compactionstats' "compaction type"). */
static const char *op_name(int op)
{
    return op == ST_OP_GC ? "Remove deleted data" : op == ST_OP_UPGRADE ? "Upgrade sstables"
         : op == ST_OP_SCRUB ? "Scrub" : "Compaction";
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
            snprintf(c->kind, sizeof c->kind, "%s", !t->compact_running ? "Flush" : op_name(t->cmp_op));
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
const char *st_engine_data_dir(const st_engine *e) { return e ? e->data_dir : NULL; }

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
