/*
 * maintenance.c: nodetool's table maintenance on the storage side
 * (storage.h "maintenance"): the single-sstable rewrites of
 * garbagecollect, upgradesstables and scrub, the sstables holding a key
 * (getsstables), stopping compactions (stop) and the live compaction
 * thresholds (get/setcompactionthreshold).
 *
 *   st_table_rewrite ─ for each input, alone ─> st__compact_rewrite (compaction.c)
 *                                                 └─ per partition: st__rewrite_shadow (GC)
 *
 * A rewrite holds t->compacting for its whole run, as a major compaction
 * does, so no other compaction of the table chooses inputs meanwhile; the
 * merge, purge, output and swap are compaction.c's.  Garbage collection
 * follows Cassandra 4.1's CompactionIterator.GarbageSkipper: the
 * partition of the sstable being rewritten is compared with the same
 * partition in every other live sstable (the "shadow" sources, read
 * here); what their deletions delete goes (and with -g CELL the cells a
 * newer cell there overwrites), nothing of theirs is copied in, and the
 * result is then purged as any compaction purges (gc_grace_seconds
 * passed, and no older data outside the input: compaction.c
 * max_purgeable).  Dropping shadowed data is always safe: the deletion
 * that shadows it stays in its own sstable, and cannot be purged while
 * older data exists anywhere else.
 */
#include "storage/sstable_int.h"
#include "common/alloc.h"
#include "common/err.h"
#include "common/hash.h"
#include "common/log.h"
#include "common/util.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---------------------------------------------------------------- shadowing */

static bool del_set(st_deletion d) { return d.ts_us != INT64_MIN; }

/* Does bound a start at or before bound b starts (len 0: unbounded)? */
static bool start_le(const uint8_t *a, uint32_t al, bool ai, const uint8_t *b, uint32_t bl, bool bi)
{
    if (al == 0) return true;
    if (bl == 0) return false;
    int c = st__bytes_cmp(a, al, b, bl);
    return c < 0 || (c == 0 && (ai || !bi));
}

/* Does bound a end at or after bound b ends (len 0: unbounded)? */
static bool end_ge(const uint8_t *a, uint32_t al, bool ai, const uint8_t *b, uint32_t bl, bool bi)
{
    if (al == 0) return true;
    if (bl == 0) return false;
    int c = st__bytes_cmp(a, al, b, bl);
    return c > 0 || (c == 0 && (ai || !bi));
}

/* The deletion the shadow partition s puts on a clustering row at ck:
 * its partition deletion and the range tombstones covering ck (static
 * rows: the partition deletion only). */
static st_deletion shadow_range_del(const st__part *s, const uint8_t *ck, uint32_t n, bool is_static)
{
    st_deletion d = s->pdel;
    for (int i = 0; !is_static && i < s->n_rts; i++)
        if (st__rt_covers(&s->rts[i], ck, n)) d = st__del_max(d, s->rts[i].d);
    return d;
}

static st_deletion shadow_cdel(const st__row *sr, uint32_t col)
{
    for (int i = 0; sr && i < sr->n_cdels; i++)
        if (sr->cdels[i].col == col) return sr->cdels[i].d;
    return ST_NO_DELETION;
}

/* Drop from r what deletion d (the shadow's range deletions) and the
 * shadow's row sr (same clustering, may be NULL) delete: ROW granularity
 * (BTreeRow.filter under their deletion and sr's row deletion), or CELL
 * (Rows.removeShadowedCells: sr's complex deletions, and cells sr holds
 * a winning version of, too).  Returns true if r keeps anything. */
static bool filter_row(st__row *r, st_deletion d, const st__row *sr, bool cell_level)
{
    if (sr) d = st__del_max(d, sr->del);
    if (r->lv.ts_us != INT64_MIN && r->lv.ts_us <= d.ts_us) r->lv.ts_us = INT64_MIN;
    if (del_set(r->del) && st__del_supersedes(d, r->del)) r->del = ST_NO_DELETION;
    int nd = 0;
    for (int i = 0; i < r->n_cdels; i++) {
        st__cdel c = r->cdels[i];
        bool keep;
        if (cell_level) {
            st_deletion m = st__del_max(d, shadow_cdel(sr, c.col));
            keep = st__del_supersedes(c.d, m);
        } else {
            keep = !st__del_supersedes(d, c.d);
        }
        if (keep) r->cdels[nd++] = c;
    }
    r->n_cdels = nd;
    /* Cells: r's and sr's are both sorted by (col, path). */
    int nc = 0, j = 0;
    for (int i = 0; i < r->n_cells; i++) {
        const st_cell *c = &r->cells[i];
        st_deletion cd = cell_level ? st__del_max(d, shadow_cdel(sr, c->col)) : d;
        if (c->ts_us <= cd.ts_us) continue;
        if (cell_level && sr) {
            while (j < sr->n_cells && st__cell_order(&sr->cells[j], c) < 0) j++;
            if (j < sr->n_cells && st__cell_order(&sr->cells[j], c) == 0 &&
                st__cell_reconcile(c, &sr->cells[j]) == &sr->cells[j])
                continue;   /* overwritten elsewhere (a tie keeps ours: reconcile answers its first) */
        }
        r->cells[nc++] = *c;
    }
    r->n_cells = nc;
    return r->lv.ts_us != INT64_MIN || del_set(r->del) || r->n_cdels || r->n_cells;
}

/* Is the whole of rt deleted at least as strongly by the shadow (its
 * partition deletion, or one of its range tombstones spanning rt)?  Then
 * rt is superseded and goes (GarbageSkippingUnfilteredRowIterator
 * processDataMarker; a range only partly covered is kept whole). */
static bool rt_shadowed(const st__rt *rt, const st__part *s)
{
    if (!st__del_supersedes(rt->d, s->pdel)) return true;
    for (int i = 0; i < s->n_rts; i++) {
        const st__rt *o = &s->rts[i];
        if (start_le(o->start, o->start_len, o->start_incl, rt->start, rt->start_len, rt->start_incl) &&
            end_ge(o->end, o->end_len, o->end_incl, rt->end, rt->end_len, rt->end_incl) &&
            !st__del_supersedes(rt->d, st__del_max(s->pdel, o->d)))
            return true;
    }
    return false;
}

/* Apply shadow partition s to p (see st__rewrite_shadow). */
static int shadow_apply(st__part *p, const st__part *s, bool cell_level, cs_arena *a)
{
    if (del_set(p->pdel) && !st__del_supersedes(p->pdel, s->pdel)) p->pdel = ST_NO_DELETION;
    if (p->n_rts) {   /* a new array: p's may be shared with the input it was merged from */
        st__rt *v = cs_arena_alloc(a, sizeof *v * (size_t)p->n_rts);
        if (!v) return CS_ENOMEM;
        int n = 0;
        for (int i = 0; i < p->n_rts; i++)
            if (!rt_shadowed(&p->rts[i], s)) v[n++] = p->rts[i];
        p->rts = v;
        p->n_rts = p->cap_rts = n;
    }
    if (p->stat && !filter_row(p->stat, s->pdel, s->stat, cell_level)) p->stat = NULL;
    int n = 0, j = 0;
    for (int i = 0; i < p->n_rows; i++) {
        st__row *r = p->rows[i];
        while (j < s->n_rows && st__bytes_cmp(s->rows[j]->ck, s->rows[j]->ck_len, r->ck, r->ck_len) < 0) j++;
        bool same = j < s->n_rows && !st__bytes_cmp(s->rows[j]->ck, s->rows[j]->ck_len, r->ck, r->ck_len);
        const st__row *sr = same ? s->rows[j] : NULL;
        if (filter_row(r, shadow_range_del(s, r->ck, r->ck_len, false), sr, cell_level)) p->rows[n++] = r;
    }
    p->n_rows = n;
    return 0;
}

int st__rewrite_shadow(const st__rewrite *rw, st__part *p, const st_slice *sl, cs_arena *a,
                       int64_t *max_purgeable)
{
    if (!rw || rw->op != ST_OP_GC || !p->pk) return 0;
    int64_t maxp = rw->mem_min_ts;
    /* Without a window, the shadow is read over p's rows only (nothing
     * outside them can delete them; an empty slice when p has none: the
     * shadow's header alone). */
    static const uint8_t none[1] = { 0 };
    st_slice span;
    if (!sl) {
        if (p->n_rows) {
            span.start = (st_bound){ p->rows[0]->ck, p->rows[0]->ck_len, true };
            span.end = (st_bound){ p->rows[p->n_rows - 1]->ck, p->rows[p->n_rows - 1]->ck_len, true };
        } else {
            span.start = (st_bound){ none, 1, true };
            span.end = (st_bound){ none, 1, false };
        }
        sl = &span;
    }
    st__part **found = cs_arena_alloc(a, sizeof *found * (size_t)(rw->n_shadow + 1));
    if (!found) return CS_ENOMEM;
    int nf = 0;
    for (int i = 0; i < rw->n_shadow; i++) {
        sst_reader *r = rw->shadow[i];
        int64_t tok;
        const uint8_t *key;
        uint32_t kl;
        uint64_t pos;
        if (sst_next_key(r, p->token, p->pk, p->pk_len, true, p->token, &tok, &key, &kl, &pos, false) != 1 ||
            st__bytes_cmp(key, kl, p->pk, p->pk_len) != 0)
            continue;   /* r does not hold the key */
        if (r->st.min_ts < maxp) maxp = r->st.min_ts;
        /* Nothing in r can delete or overwrite what is older than all of
         * p's sstable; at ROW granularity only its tombstones count. */
        if (r->st.max_ts < rw->min_ts || (!rw->cell_level && r->st.tombstones == 0)) continue;
        st__part *q = cs_arena_zalloc(a, sizeof *q);
        if (!q) return CS_ENOMEM;
        bool neg;
        int rc = sst_read_partition(r, p->token, p->pk, p->pk_len, sl, 1, q, a, &neg);
        if (rc < 0) return rc;
        if (rc == 1) found[nf++] = q;
    }
    if (max_purgeable) *max_purgeable = maxp;
    if (nf == 0) return 0;
    st__part s;
    int rc = st__part_merge(found, nf, &s, a);
    return rc ? rc : shadow_apply(p, &s, rw->cell_level, a);
}

/* ---------------------------------------------------------------- rewrites */

static int cmp_max_ts(const void *a, const void *b)
{
    const sst_reader *x = *(sst_reader *const *)a, *y = *(sst_reader *const *)b;
    if (x->st.max_ts != y->st.max_ts) return x->st.max_ts < y->st.max_ts ? -1 : 1;
    return x->gen < y->gen ? -1 : x->gen > y->gen;
}

static int cmp_size_desc(const void *a, const void *b)
{
    const sst_reader *x = *(sst_reader *const *)a, *y = *(sst_reader *const *)b;
    if (x->file_bytes != y->file_bytes) return x->file_bytes > y->file_bytes ? -1 : 1;
    return x->gen < y->gen ? -1 : x->gen > y->gen;
}

static int cmp_gen(const void *a, const void *b)
{
    const sst_reader *x = *(sst_reader *const *)a, *y = *(sst_reader *const *)b;
    return x->gen < y->gen ? -1 : x->gen > y->gen;
}

/* The table's live sstables but `skip`, referenced (release with
 * unref_all); caller holds t->mu.  NULL only without memory. */
static sst_reader **live_locked(st_table *t, const sst_reader *skip, int *n)
{
    sst_reader **v = cs_malloc(sizeof *v * (size_t)(t->n_ssts + 1));
    *n = 0;
    for (int i = 0; v && i < t->n_ssts; i++)
        if (t->ssts[i] != skip) {
            sst_reader_ref(t->ssts[i]);
            v[(*n)++] = t->ssts[i];
        }
    return v;
}

static void unref_all(sst_reader **v, int n)
{
    for (int i = 0; i < n; i++) sst_reader_unref(v[i]);
    cs_free(v);
}

/* Is r's on-disk format older than what this build writes? */
static bool old_format(const sst_reader *r)
{
    return r->stats_version < SST_STATS_VERSION;
}

/* Was r's Data.db last written at or after max_ms (Cassandra's
 * getCreationTimeFor(DATA): the file's mtime)? */
static bool created_since(const sst_reader *r, int64_t max_ms)
{
    if (max_ms <= 0) return false;
    char *p = sst__path(r->dir, r->gen, "Data.db", false);
    struct stat sb;
    bool since = p && stat(p, &sb) == 0 &&
                 (int64_t)sb.st_mtim.tv_sec * 1000 + sb.st_mtim.tv_nsec / 1000000 > max_ms;
    cs_free(p);
    return since;
}

int st_table_rewrite(st_table *t, const st_rewrite_opts *o, st_rewrite_result *res)
{
    if (res) memset(res, 0, sizeof *res);
    if (!t || !o || (o->op != ST_OP_GC && o->op != ST_OP_UPGRADE && o->op != ST_OP_SCRUB)) return CS_EINVAL;
    pthread_mutex_lock(&t->mu);
    if (!t->dropped && (t->compacting || t->paused > 0)) {   /* as st_table_compact: after the running one */
        st__bg_urgent(t->e, 1, +1);
        while (!t->dropped && (t->compacting || t->paused > 0)) pthread_cond_wait(&t->cv, &t->mu);
        st__bg_urgent(t->e, 1, -1);
    }
    if (t->dropped) { pthread_mutex_unlock(&t->mu); return 0; }
    t->compacting = true;
    t->rewrite_op = o->op;
    t->rewrite_stop = false;
    int n = 0;
    sst_reader **v = live_locked(t, NULL, &n);
    pthread_mutex_unlock(&t->mu);
    int rc = v ? 0 : CS_ENOMEM;
    if (v) {
        int k = 0;
        for (int i = 0; i < n; i++) {
            bool skip = o->op == ST_OP_UPGRADE &&
                        ((!o->all && !old_format(v[i])) || created_since(v[i], o->max_created_ms));
            if (skip) sst_reader_unref(v[i]);
            else v[k++] = v[i];
        }
        n = k;
        /* CompactionManager's orders: garbage collection oldest data
         * first (maxTimestampAscending), so a newer sstable's turn sees
         * what the older ones still hold; upgrades largest first. */
        qsort(v, (size_t)n, sizeof *v,
              o->op == ST_OP_GC ? cmp_max_ts : o->op == ST_OP_UPGRADE ? cmp_size_desc : cmp_gen);
    }
    for (int i = 0; i < n && !rc; i++) {
        st__rewrite rw = { .op = o->op, .cell_level = o->gc_cells, .fail_corrupt = o->fail_corrupt,
                           .min_ts = v[i]->st.min_ts };
        pthread_mutex_lock(&t->mu);
        bool stop = t->dropped || t->paused > 0 || t->e->closing, stopped = t->rewrite_stop;
        if (!stop && !stopped && o->op == ST_OP_GC) {
            /* what the key's purge limit is made of: the other sstables
             * and, as of now, the memtables (later flushes come from them) */
            rw.shadow = live_locked(t, v[i], &rw.n_shadow);
            rw.mem_min_ts = t->mem->min_ts;
            for (int f = 0; f < t->n_flushing; f++)
                if (t->flushing[f]->min_ts < rw.mem_min_ts) rw.mem_min_ts = t->flushing[f]->min_ts;
        }
        pthread_mutex_unlock(&t->mu);
        if (stopped) { rc = CS_ECANCELED; break; }
        if (stop) break;
        if (o->op == ST_OP_GC && !rw.shadow) { rc = CS_ENOMEM; break; }
        atomic_store(&v[i]->compacting, true);
        rc = st__compact_rewrite(t, v[i], &rw);
        unref_all(rw.shadow, rw.n_shadow);
        if (!rc && res) {
            res->sstables++;
            res->dropped += rw.dropped;
        }
    }
    if (v) unref_all(v, n);
    pthread_mutex_lock(&t->mu);
    t->compacting = false;
    t->rewrite_op = 0;
    t->rewrite_stop = false;
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
    return rc;
}

int st_engine_stop_compactions(st_engine *e, int ops, const uint8_t *table_id)
{
    int n = 0;
    pthread_mutex_lock(&e->mu);
    for (int i = 0; i < e->n_tables; i++) {
        st_table *t = e->tables[i];
        if (table_id && memcmp(t->id, table_id, 16)) continue;
        pthread_mutex_lock(&t->mu);
        bool hit = false;
        if (t->compact_running && (t->cmp_op & ops)) t->cmp_stop = hit = true;
        if (t->rewrite_op & ops) t->rewrite_stop = hit = true;
        n += hit;
        pthread_mutex_unlock(&t->mu);
    }
    pthread_mutex_unlock(&e->mu);
    if (n) CS_INFO("storage: nodetool stop: %d compaction%s asked to stop", n, n == 1 ? "" : "s");
    return n;
}

/* ---------------------------------------------------------------- keys, thresholds */

int st_table_sstables_for_key(st_table *t, const uint8_t *pk, uint32_t len, char ***paths, int *n)
{
    *paths = NULL;
    *n = 0;
    if (!t || (!pk && len)) return CS_EINVAL;
    int64_t token = cs_murmur3_token(pk, len);
    int nv;
    pthread_mutex_lock(&t->mu);
    sst_reader **v = live_locked(t, NULL, &nv);
    pthread_mutex_unlock(&t->mu);
    if (!v) return CS_ENOMEM;
    qsort(v, (size_t)nv, sizeof *v, cmp_gen);
    char **out = cs_calloc((size_t)nv + 1, sizeof *out);
    int rc = out ? 0 : CS_ENOMEM, k = 0;
    for (int i = 0; i < nv && !rc; i++) {
        /* The index alone, as Cassandra's getPosition(EQ, updateStats false):
         * no bloom filter test, nothing counted. */
        int64_t tok;
        const uint8_t *key;
        uint32_t kl;
        uint64_t pos;
        if (sst_next_key(v[i], token, pk, len, true, token, &tok, &key, &kl, &pos, false) == 1 &&
            st__bytes_cmp(key, kl, pk, len) == 0) {
            out[k] = sst__path(v[i]->dir, v[i]->gen, "Data.db", false);
            if (!out[k++]) rc = CS_ENOMEM;
        }
    }
    unref_all(v, nv);
    if (rc) {
        st_paths_free(out, k);
        return rc;
    }
    *paths = out;
    *n = k;
    return 0;
}

void st_table_set_compaction_thresholds(st_table *t, int min_threshold, int max_threshold)
{
    if (!t) return;
    pthread_mutex_lock(&t->mu);
    t->opts.min_threshold = min_threshold;
    t->opts.max_threshold = max_threshold;
    t->thresholds_set = true;
    pthread_mutex_unlock(&t->mu);
    st__bg_kick(t->e);   /* CompactionManager.submitBackground */
}

void st_table_compaction_thresholds(st_table *t, int *min_threshold, int *max_threshold)
{
    *min_threshold = *max_threshold = 0;
    if (!t) return;
    pthread_mutex_lock(&t->mu);
    *min_threshold = t->opts.min_threshold;
    *max_threshold = t->opts.max_threshold;
    pthread_mutex_unlock(&t->mu);
}
