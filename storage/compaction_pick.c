/*
 * compaction_pick.c: what a background compaction of a table does next,
 * the three strategies' choices (compaction.c merges what they pick).
 *
 *   st__compact_background ─ compact_once ─┬─ twcs: drop fully expired sstables (twcs_drop_expired)
 *                                          ├─ stcs_pick | twcs_pick | lcs_pick
 *                                          └─ none due: tombstone_pick ──> st__compact_run
 *
 * Size tiers (stcs_buckets) are Cassandra's SizeTieredCompactionStrategy
 * .getBuckets over Data.db sizes, with bucket_low, bucket_high and
 * min_sstable_size; the bucket compacted is the first (smallest sstables)
 * with min_threshold members, cut to max_threshold (Cassandra ranks
 * buckets by read hotness, which is not kept here, and breaks ties by
 * size).  LCS level L holds fanout_size^L sstables' worth.
 *
 * Single-sstable tombstone compactions (AbstractCompactionStrategy
 * .worthDroppingTombstones, worth_dropping): when nothing else is due, an
 * sstable whose estimated droppable tombstone ratio (drop-time histogram
 * at gc_before over its cell count estimate) exceeds tombstone_threshold,
 * whose Data.db is at least tombstone_compaction_interval old, and whose
 * droppable part is not all shadowed by overlapping sstables (the overlap
 * check, skipped with unchecked_tombstone_compaction) is compacted alone:
 * STCS takes the largest such sstable, TWCS the smallest, LCS the one
 * with the highest ratio from the highest level down, keeping its level.
 * The output is a new Data.db, so the interval holds it back next time: a
 * compaction that dropped nothing runs again only an interval later, not
 * in a loop.  Nothing else triggers these (no flush may follow), so the
 * compaction threads look every second for tables where one may be due
 * (st__compaction_check_due), as Cassandra's periodic background
 * submission does every minute.
 */
#include "storage/sstable_int.h"
#include "common/alloc.h"
#include "common/err.h"
#include "common/log.h"
#include "common/util.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- helpers */

/* SSTableReader.onDiskLength: the Data.db file's bytes. */
static uint64_t disk_len(const sst_reader *r)
{
    return r->chunks ? r->chunks[r->n_chunks] : 0;
}

/* By Data.db size, then generation (a stable order for equal sizes). */
static int cmp_disk(const void *a, const void *b)
{
    const sst_reader *x = *(sst_reader *const *)a, *y = *(sst_reader *const *)b;
    uint64_t p = disk_len(x), q = disk_len(y);
    if (p != q) return p < q ? -1 : 1;
    return x->gen < y->gen ? -1 : x->gen > y->gen;
}

static int cmp_min_token(const void *a, const void *b)
{
    const sst_reader *x = *(sst_reader *const *)a, *y = *(sst_reader *const *)b;
    return x->st.min_token < y->st.min_token ? -1 : x->st.min_token > y->st.min_token;
}

static bool overlaps(const sst_reader *a, const sst_reader *b)
{
    return a->st.min_token <= b->st.max_token && b->st.min_token <= a->st.max_token;
}

static int32_t gc_before_of(const st_table_opts *o, int32_t now)
{
    return (int32_t)CS_MAX((int64_t)INT32_MIN, (int64_t)now - o->gc_grace_s);
}

static int min_thr(const st_table_opts *o) { return o->min_threshold > 1 ? o->min_threshold : 2; }
static int max_thr(const st_table_opts *o) { return o->max_threshold >= min_thr(o) ? o->max_threshold : 32; }

static uint64_t lcs_target(const st_table_opts *o)
{
    return (uint64_t)(o->lcs_sstable_size_mb > 0 ? o->lcs_sstable_size_mb : 160) << 20;
}

/* LeveledManifest.maxBytesForLevel for L >= 1: fanout^L sstables of
 * target bytes (saturating). */
static uint64_t lcs_level_limit(const st_table_opts *o, int L)
{
    uint64_t fan = (uint64_t)(o->lcs_fanout > 0 ? o->lcs_fanout : 10), limit = lcs_target(o);
    for (int p = 0; p < L; p++) limit = limit > UINT64_MAX / fan ? UINT64_MAX : limit * fan;
    return limit;
}

/* ---------------------------------------------------------------- size tiers */

typedef struct bucket { int start, n; } bucket;

/* SizeTieredCompactionStrategy.getBuckets over v[0..n): sorted by Data.db
 * size, each sstable joins the first bucket (in the order they were made)
 * whose average size A it is within (A * bucket_low, A * bucket_high) of,
 * or that is, like it, under min_sstable_size; else it starts a bucket.
 * The average is kept as Cassandra keeps it, a long: (count * A + size) /
 * (count + 1).  v is reordered so that each bucket's members are
 * contiguous, buckets in the order made, members by size; b (n entries)
 * gets them.  Returns how many, or -1 without memory. */
static int stcs_buckets(sst_reader **v, int n, const st_table_opts *o, bucket *b)
{
    qsort(v, (size_t)n, sizeof *v, cmp_disk);
    int *of = cs_malloc(sizeof(int) * (size_t)(n + 1));
    int64_t *avg = cs_malloc(sizeof(int64_t) * (size_t)(n + 1));
    sst_reader **tmp = cs_malloc(sizeof *tmp * (size_t)(n + 1));
    if (!of || !avg || !tmp) { cs_free(of); cs_free(avg); cs_free(tmp); return -1; }
    int nb = 0;
    for (int i = 0; i < n; i++) {
        int64_t size = (int64_t)disk_len(v[i]);
        int j = 0;
        for (; j < nb; j++) {
            double a = (double)avg[j];
            if (((double)size > a * o->bucket_low && (double)size < a * o->bucket_high) ||
                (size < o->min_sstable_bytes && avg[j] < o->min_sstable_bytes))
                break;
        }
        if (j == nb) { b[nb].n = 0; avg[nb++] = size; }
        else avg[j] = ((int64_t)b[j].n * avg[j] + size) / (b[j].n + 1);
        b[j].n++;
        of[i] = j;
    }
    for (int j = 0, at = 0; j < nb; j++) { b[j].start = at; at += b[j].n; b[j].n = 0; }
    for (int i = 0; i < n; i++) { bucket *x = &b[of[i]]; tmp[x->start + x->n++] = v[i]; }
    memcpy(v, tmp, sizeof *v * (size_t)n);
    cs_free(of); cs_free(avg); cs_free(tmp);
    return nb;
}

/* The first bucket with at least min_threshold members, its smallest
 * max_threshold moved to the front of v; returns how many (0: none). */
static int stcs_pick(sst_reader **v, int n, const st_table_opts *o)
{
    if (n == 0) return 0;
    bucket *b = cs_malloc(sizeof *b * (size_t)n);
    int nb = b ? stcs_buckets(v, n, o, b) : -1, k = 0;
    for (int j = 0; j < nb && !k; j++)
        if (b[j].n >= min_thr(o)) {
            k = CS_MIN(b[j].n, max_thr(o));
            memmove(v, v + b[j].start, sizeof *v * (size_t)k);
        }
    cs_free(b);
    return k;
}

/* getEstimatedCompactionsByTasks: each bucket of min_threshold or more
 * members is ceil(members / max_threshold) compactions. */
static uint64_t stcs_estimate(sst_reader **v, int n, const st_table_opts *o)
{
    if (n == 0) return 0;
    bucket *b = cs_malloc(sizeof *b * (size_t)n);
    int nb = b ? stcs_buckets(v, n, o, b) : -1;
    uint64_t due = 0;
    for (int j = 0; j < nb; j++)
        if (b[j].n >= min_thr(o)) due += (uint64_t)((b[j].n + max_thr(o) - 1) / max_thr(o));
    cs_free(b);
    return due;
}

/* ---------------------------------------------------------------- expiry and tombstones */

/* CompactionController.getFullyExpiredSSTables: which of cand[0..n) hold
 * only data deleted or expired before gc_before (max local deletion time)
 * that shadows nothing anywhere: its max timestamp is below every min
 * timestamp of the live data elsewhere, in the other candidates, the
 * overlapping sstables and the memtables.  Sets exp[i]; returns how many. */
static int fully_expired(st_table *t, sst_reader *const *cand, int n, int32_t gc_before, bool *exp)
{
    int64_t min_ts = INT64_MAX;
    pthread_mutex_lock(&t->mu);
    for (int i = 0; i < t->n_ssts; i++) {
        const sst_reader *r = t->ssts[i];
        if (r->st.max_ldt < gc_before || r->st.min_ts >= min_ts) continue;
        bool is_cand = false, over = false;
        for (int k = 0; k < n && !is_cand; k++) { is_cand = cand[k] == r; over = over || overlaps(cand[k], r); }
        if (!is_cand && over) min_ts = r->st.min_ts;
    }
    min_ts = CS_MIN(min_ts, atomic_load(&t->mem->min_ts));
    for (int i = 0; i < t->n_flushing; i++) min_ts = CS_MIN(min_ts, atomic_load(&t->flushing[i]->min_ts));
    pthread_mutex_unlock(&t->mu);
    for (int i = 0; i < n; i++)
        if (cand[i]->st.max_ldt >= gc_before) min_ts = CS_MIN(min_ts, cand[i]->st.min_ts);
    int k = 0;
    for (int i = 0; i < n; i++) {
        exp[i] = cand[i]->st.max_ldt < gc_before && cand[i]->st.max_ts < min_ts;
        k += exp[i];
    }
    return k;
}

/* Keys of r with a token in the union of the ranges (lo[i], hi[i]], as
 * Cassandra's Range (a range from a token to itself is the whole ring). */
typedef struct tok_range { int64_t lo, hi; } tok_range;

static int cmp_range(const void *a, const void *b)
{
    const tok_range *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static uint64_t keys_in_ranges(const sst_reader *r, tok_range *rg, int n)
{
    for (int i = 0; i < n; i++)
        if (rg[i].lo == rg[i].hi) return r->n_idx;
    qsort(rg, (size_t)n, sizeof *rg, cmp_range);
    uint64_t keys = 0;
    for (int i = 0; i < n;) {
        int64_t lo = rg[i].lo, hi = rg[i].hi;
        for (i++; i < n && rg[i].lo <= hi; i++) hi = CS_MAX(hi, rg[i].hi);   /* normalize: merge overlaps */
        uint64_t a = lo == INT64_MAX ? r->n_idx : sst__sorted_lower(r->toks, r->n_idx, lo + 1);
        uint64_t b = hi == INT64_MAX ? r->n_idx : sst__sorted_lower(r->toks, r->n_idx, hi + 1);
        keys += b > a ? b - a : 0;
    }
    return keys;
}

/* AbstractCompactionStrategy.worthDroppingTombstones for r (not being
 * compacted) at gc_before, now_ms by the wall clock. */
static bool worth_dropping(st_table *t, const st_table_opts *o, sst_reader *r, int32_t gc_before, int64_t now_ms)
{
    if (!o->tombstone_compactions) return false;
    if (now_ms < r->created_ms + o->tombstone_interval_s * 1000) return false;   /* held back: no loop */
    double ratio = sst__droppable_ratio(&r->st, gc_before);
    if (ratio <= o->tombstone_threshold) return false;
    if (o->unchecked_tombstone) return true;
    /* getOverlappingLiveSSTables: every other live sstable, compacting or not */
    pthread_mutex_lock(&t->mu);
    tok_range *rg = cs_malloc(sizeof *rg * (size_t)(t->n_ssts + 1));
    sst_reader **ov = cs_malloc(sizeof *ov * (size_t)(t->n_ssts + 1));
    int n = 0;
    for (int i = 0; rg && ov && i < t->n_ssts; i++)
        if (t->ssts[i] != r && overlaps(t->ssts[i], r)) {
            rg[n] = (tok_range){ t->ssts[i]->st.min_token, t->ssts[i]->st.max_token };
            sst_reader_ref(t->ssts[i]);
            ov[n++] = t->ssts[i];
        }
    pthread_mutex_unlock(&t->mu);
    bool worth = false;
    if (!rg || !ov) worth = false;
    else if (n == 0) worth = true;            /* nothing overlaps: the tombstones can go */
    else {
        bool exp;
        sst_reader *one[1] = { r };
        if (fully_expired(t, one, 1, gc_before, &exp) > 0) worth = true;
        else {
            /* The index summary's sampling (min_index_interval) must give
             * two samples at least; then the share of r's cells in keys
             * outside the overlaps, taken as all droppable. */
            uint64_t mi = (uint64_t)(o->min_index_interval > 0 ? o->min_index_interval : 128);
            if ((r->n_idx + mi - 1) / mi >= 2) {
                uint64_t off[SST_CELL_BUCKETS];
                st_hist_offsets(off, SST_CELL_BUCKETS);
                uint64_t mean = sst__hist_mean(r->st.cell_hist, off, SST_CELL_BUCKETS);
                uint64_t count = sst__hist_count(r->st.cell_hist, SST_CELL_BUCKETS);
                int64_t in = (int64_t)CS_MAX((uint64_t)1, keys_in_ranges(r, rg, n));   /* estimatedKeysForRanges */
                int64_t remaining = (int64_t)r->n_idx - in;
                double cols = (double)mean * (double)remaining, all = (double)count * (double)mean;
                worth = all > 0 && cols / all * ratio > o->tombstone_threshold;
            }
        }
    }
    for (int i = 0; ov && i < n; i++) sst_reader_unref(ov[i]);
    cs_free(rg);
    cs_free(ov);
    return worth;
}

/* The single-sstable tombstone compaction due among v[0..n) (not being
 * compacted), or NULL: STCS's largest worth dropping, TWCS's smallest;
 * LCS looks from the highest level down, in each at the sstables by
 * droppable ratio, highest first, until one is at or below the threshold. */
static sst_reader *tombstone_pick(st_table *t, const st_table_opts *o, sst_reader **v, int n)
{
    if (!o->tombstone_compactions || n == 0) return NULL;
    int32_t gc_before = gc_before_of(o, cs_now_s());
    int64_t now_ms = cs_now_ms();
    sst_reader *pick = NULL;
    if (o->compaction != ST_COMPACT_LCS) {
        qsort(v, (size_t)n, sizeof *v, cmp_disk);
        if (o->compaction == ST_COMPACT_TWCS) {
            for (int i = 0; i < n && !pick; i++) if (worth_dropping(t, o, v[i], gc_before, now_ms)) pick = v[i];
        } else {
            for (int i = n - 1; i >= 0 && !pick; i--) if (worth_dropping(t, o, v[i], gc_before, now_ms)) pick = v[i];
        }
        return pick;
    }
    sst_reader **lv = cs_malloc(sizeof *lv * (size_t)n);
    double *ratio = cs_malloc(sizeof *ratio * (size_t)n);
    for (int L = 8; lv && ratio && L >= 0 && !pick; L--) {
        int m = 0;
        for (int i = 0; i < n; i++)
            if (v[i]->st.level == L) { lv[m] = v[i]; ratio[m++] = sst__droppable_ratio(&v[i]->st, gc_before); }
        while (m > 0 && !pick) {
            int best = 0;
            for (int i = 1; i < m; i++) if (ratio[i] > ratio[best]) best = i;
            if (ratio[best] <= o->tombstone_threshold) break;      /* the rest of the level is below */
            if (worth_dropping(t, o, lv[best], gc_before, now_ms)) pick = lv[best];
            lv[best] = lv[--m];
            ratio[best] = ratio[m];
        }
    }
    cs_free(lv);
    cs_free(ratio);
    return pick;
}

/* Would a look at t find a compaction that only time made due (a
 * tombstone compaction, a TWCS sstable expired whole)?  A cheap bound:
 * false is certain, true means compact_once should look.  Caller holds
 * t->mu. */
bool st__compaction_check_due(st_table *t, int64_t now_ms)
{
    const st_table_opts *o = &t->opts;
    if (!o->compaction_enabled || t->n_ssts == 0) return false;
    int32_t gc_before = gc_before_of(o, (int32_t)(now_ms / 1000));
    bool twcs_check = o->compaction == ST_COMPACT_TWCS &&
                      now_ms - t->last_expired_check_ms > o->twcs_expired_check_s * 1000;
    for (int i = 0; i < t->n_ssts; i++) {
        const sst_reader *r = t->ssts[i];
        if (atomic_load(&r->compacting)) continue;
        if (twcs_check && r->st.max_ldt < gc_before) return true;
        if (o->tombstone_compactions && now_ms >= r->created_ms + o->tombstone_interval_s * 1000 &&
            sst__droppable_ratio(&r->st, gc_before) > o->tombstone_threshold)
            return true;
    }
    return false;
}

/* ---------------------------------------------------------------- strategies */

/* TWCS: drop the sstables of v[0..*n) expired whole (when the check is
 * due: expired_sstable_check_frequency_seconds); they leave v.  Returns
 * how many went. */
static int twcs_drop_expired(st_table *t, const st_table_opts *o, sst_reader **v, int *n)
{
    int64_t now_ms = cs_now_ms();
    pthread_mutex_lock(&t->mu);
    bool due = now_ms - t->last_expired_check_ms > o->twcs_expired_check_s * 1000;
    if (due) t->last_expired_check_ms = now_ms;
    pthread_mutex_unlock(&t->mu);
    if (!due || *n == 0) return 0;
    bool *exp = cs_malloc(sizeof *exp * (size_t)*n);
    if (!exp || fully_expired(t, v, *n, gc_before_of(o, (int32_t)(now_ms / 1000)), exp) == 0) { cs_free(exp); return 0; }
    int dropped = 0;
    st_clog_pos floor_pos = { 0, 0 };
    pthread_mutex_lock(&t->mu);
    for (int i = 0; i < *n; i++) {
        if (!exp[i]) continue;
        sst_reader *r = v[i];
        for (int j = 0; j < t->n_ssts; j++)
            if (t->ssts[j] == r) {
                if (st__pos_cmp(r->st.clog_pos, floor_pos) > 0) floor_pos = r->st.clog_pos;
                t->ssts[j] = t->ssts[--t->n_ssts]; sst__mark_obsolete(r); sst_reader_unref(r); dropped++;
                t->src_version++;
                break;
            }
        v[i] = NULL;
    }
    pthread_mutex_unlock(&t->mu);
    int m = 0;
    for (int i = 0; i < *n; i++) if (v[i]) v[m++] = v[i];
    *n = m;
    cs_free(exp);
    if (floor_pos.segment) st__save_replay_floor(t, floor_pos);
    return dropped;
}

static int64_t twcs_window(const st_table_opts *o, const sst_reader *r)
{
    return r->st.max_ts / 1000000 / (o->twcs_window_s > 0 ? o->twcs_window_s : 86400);
}

/* TimeWindowCompactionStrategy.newestBucket: windows by their sstables'
 * max timestamp, newest first; the newest window is size-tiered (at least
 * min_threshold sstables in it), an older one with two or more is
 * compacted whole (its smallest max_threshold).  The pick goes to the
 * front of v; returns its length. */
static int twcs_pick(const st_table_opts *o, sst_reader **v, int n)
{
    if (n == 0) return 0;
    sst_reader **g = cs_malloc(sizeof *g * (size_t)n);
    if (!g) return 0;
    int64_t newest = INT64_MIN;
    for (int i = 0; i < n; i++) newest = CS_MAX(newest, twcs_window(o, v[i]));
    int k = 0;
    for (int64_t w = newest, below;; w = below) {
        int cnt = 0;
        below = INT64_MIN;
        for (int j = 0; j < n; j++) {
            int64_t x = twcs_window(o, v[j]);
            if (x == w) g[cnt++] = v[j];
            else if (x < w && x > below) below = x;
        }
        if (w == newest) k = cnt >= min_thr(o) ? stcs_pick(g, cnt, o) : 0;
        else if (cnt >= 2) {
            qsort(g, (size_t)cnt, sizeof *g, cmp_disk);   /* trimToThreshold: the smallest */
            k = CS_MIN(cnt, max_thr(o));
        }
        if (k) { memcpy(v, g, sizeof *v * (size_t)k); break; }
        if (below == INT64_MIN) break;
    }
    cs_free(g);
    return k;
}

/* LCS: four or more L0 sstables go into L1 with the L1 sstables they
 * overlap; else the first level past fanout^L sstables' worth gives its
 * lowest-token sstable to the next one, with the sstables it overlaps
 * there.  Inputs at the front of v (room for every sstable of t); sets
 * *level; returns how many. */
static int lcs_pick(st_table *t, const st_table_opts *o, sst_reader **v, int n, int *level)
{
    int k = 0;
    sst_reader **l0 = cs_malloc(sizeof *l0 * (size_t)(n + 1));
    if (!l0) return 0;
    int n0 = 0;
    for (int i = 0; i < n; i++) if (v[i]->st.level == 0) l0[n0++] = v[i];
    if (n0 >= 4) {
        for (int i = 0; i < n0 && k < max_thr(o); i++) v[k++] = l0[i];
        int base = k;
        pthread_mutex_lock(&t->mu);
        for (int i = 0; i < t->n_ssts; i++) {
            sst_reader *r = t->ssts[i];
            if (r->st.level != 1 || atomic_load(&r->compacting)) continue;
            for (int j = 0; j < base; j++) if (overlaps(r, v[j])) { v[k++] = r; break; }
        }
        pthread_mutex_unlock(&t->mu);
        *level = 1;
    } else {
        for (int L = 1; L < 7 && k == 0; L++) {
            uint64_t bytes = 0, limit = lcs_level_limit(o, L);
            int cnt = 0;
            for (int i = 0; i < n; i++) if (v[i]->st.level == L) { bytes += v[i]->logical; l0[cnt++] = v[i]; }
            if (bytes <= limit || cnt == 0) continue;
            qsort(l0, (size_t)cnt, sizeof *l0, cmp_min_token);
            sst_reader *pick = l0[0];
            v[k++] = pick;
            pthread_mutex_lock(&t->mu);
            for (int i = 0; i < t->n_ssts; i++) {
                sst_reader *r = t->ssts[i];
                if (r->st.level == L + 1 && !atomic_load(&r->compacting) && overlaps(r, pick)) v[k++] = r;
            }
            pthread_mutex_unlock(&t->mu);
            *level = L + 1;
        }
    }
    cs_free(l0);
    return k;
}

/* Pick and run one compaction; returns 1 if one ran (or TWCS dropped
 * sstables), 0 if nothing is due. */
static int compact_once(st_table *t)
{
    pthread_mutex_lock(&t->mu);
    st_table_opts o = t->opts;
    int n = 0;
    sst_reader **v = cs_malloc(sizeof *v * (size_t)(t->n_ssts + 1));
    if (v) for (int i = 0; i < t->n_ssts; i++) if (!atomic_load(&t->ssts[i]->compacting)) v[n++] = t->ssts[i];
    pthread_mutex_unlock(&t->mu);
    if (!v) return 0;
    if (!o.compaction_enabled || n == 0) { cs_free(v); return 0; }
    int k = 0, level = 0;
    uint64_t target = 0;
    if (o.compaction == ST_COMPACT_TWCS) {
        if (twcs_drop_expired(t, &o, v, &n) > 0) { cs_free(v); return 1; }
        k = twcs_pick(&o, v, n);
    } else if (o.compaction == ST_COMPACT_LCS) {
        target = lcs_target(&o);
        k = lcs_pick(t, &o, v, n, &level);
    } else {
        k = stcs_pick(v, n, &o);
    }
    if (k == 0) {
        sst_reader *r = tombstone_pick(t, &o, v, n);
        if (r) {
            v[0] = r;
            k = 1;
            level = o.compaction == ST_COMPACT_LCS ? r->st.level : 0;   /* LCS: it keeps its level */
            CS_DEBUG("storage: tombstone compaction of %s.%s generation %" PRIu64, t->ks, t->name, r->gen);
        }
    }
    if (k == 0) { cs_free(v); return 0; }
    for (int i = 0; i < k; i++) atomic_store(&v[i]->compacting, true);
    /* Keep the inputs alive across the swap. */
    for (int i = 0; i < k; i++) sst_reader_ref(v[i]);
    int rc = st__compact_run(t, v, k, level, target);
    for (int i = 0; i < k; i++) sst_reader_unref(v[i]);
    cs_free(v);
    return rc ? 0 : 1;
}

void st__compact_background(st_table *t)
{
    for (int i = 0; i < 64; i++) {
        pthread_mutex_lock(&t->mu);
        bool stop = t->dropped || t->paused > 0 || t->e->closing || atomic_load(&t->autocompaction_off);
        pthread_mutex_unlock(&t->mu);
        if (stop || compact_once(t) == 0) break;
    }
}

/* Estimated compactions due (nodetool's "Pending compactions"): size-tiered
 * buckets with at least min_threshold members (for TWCS too), L0 and
 * over-full levels for LCS, plus one if a check is queued or running (for
 * a table whose compaction is disabled only a running one: a flush asks
 * for a check that finds nothing to do).  Caller holds t->mu. */
uint64_t st__compaction_estimate(st_table *t)
{
    const st_table_opts *o = &t->opts;
    if (!o->compaction_enabled) return t->compact_running ? 1 : 0;
    uint64_t est = (t->want_compact || t->compact_running) ? 1 : 0;
    int n = t->n_ssts;
    if (n < 2) return est;
    uint64_t due = 0;
    if (o->compaction == ST_COMPACT_LCS) {
        uint64_t target = lcs_target(o);
        uint64_t bytes[8] = { 0 };
        int cnt[8] = { 0 };
        for (int i = 0; i < n; i++) {
            int L = t->ssts[i]->st.level < 8 ? t->ssts[i]->st.level : 7;
            bytes[L] += t->ssts[i]->logical;
            cnt[L]++;
        }
        due += (uint64_t)(cnt[0] / 4);
        for (int L = 1; L < 8; L++) {
            uint64_t limit = lcs_level_limit(o, L);
            if (bytes[L] > limit) due += (bytes[L] - limit) / target + 1;
        }
    } else {
        sst_reader **v = cs_malloc(sizeof *v * (size_t)n);
        if (!v) return est;
        memcpy(v, t->ssts, sizeof *v * (size_t)n);
        due = stcs_estimate(v, n, o);
        cs_free(v);
    }
    return due > est ? due : est;
}
