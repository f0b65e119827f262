/*
 * read.c: st_scan, the read path.
 *
 * A scan takes a snapshot of the table's sources at open (memtables and
 * sstables, each referenced so flush and compaction can proceed).  For each
 * partition, every source materializes the partition restricted to the
 * requested slices into the scan's arena; st__part_merge reconciles them;
 * then tombstones and TTLs are applied to produce the live rows.
 * Range scans advance a cursor (token, key): the next partition is the
 * smallest key after the cursor over all sources.
 * A tombstone budget (spec.max_tombstones, set by paged CQL reads) stops
 * the scan at a row or partition boundary once that many tombstones were
 * scanned: the caller gets ST_SCAN_BUDGET and resumes from
 * st_scan_budget_pos, so long tombstone runs yield short pages instead of
 * one read that crosses tombstone_failure_threshold.
 * Point reads: a single-partition scan keeps itself, its spec copies, its
 * source arrays and (unless the partition is read in windows) its rows in
 * one arena, so it costs one allocation; st_read_point runs the same
 * lookups, merge and live view on a stack scan with everything in the
 * caller's arena (no scan object at all).  Per sstable a point read costs
 * a bloom probe, an index summary + index search, and the partition's
 * bytes from the block cache, or from the mapped Data.db on a miss.
 */
#include "storage/storage_int.h"
#include "storage/sstable_int.h"
#include "common/alloc.h"
#include "common/err.h"
#include "common/hash.h"
#include "common/util.h"

#include <string.h>

struct st_scan {
    st_table *t;
    st_read_spec spec;
    st_slice *slices;                   /* owned copy */
    cs_arena keep;                      /* the scan itself, spec copies, sources */
    cs_arena *ka;                       /* single partition: arena of everything (keep, or st_read_point's) */
    bool accum;                         /* st_read_point: windows accumulate in ka */
    mt_memtable **mts; int n_mts;
    sst_reader **ssts; int n_ssts;
    cs_arena pa;                        /* per-window arena (rows handed out) */
    cs_arena parena;                    /* per-partition arena (window bounds) */
    bool single, done;
    bool cover;                         /* timestamp-ordered point read (spec.cover_cols) */
    /* Current partition, read window by window (see load_partition). */
    int64_t ptoken; uint8_t *pkey; uint32_t pkey_len, pkey_cap;
    const uint8_t *const *wb; const uint32_t *wbl; int n_wb;   /* window boundaries (row index first keys, borrowed) */
    sst_pctx *pctx;                     /* per-sstable lookup memo for this partition (parena) */
    const st__rhint *rh;                /* st_read_point: its batch hint's lookups, if any */
    /* Range scans: every source's candidate, the first key after the
     * cursor there (next_key).  The cursor only moves to the smallest
     * candidate, so after the first search each source steps on from its
     * own candidate instead of searching again. */
    uint64_t *nk_pos; bool *nk_ok;      /* per sstable: its candidate's index entry, if it has one */
    mt_keycur *mk;                      /* per memtable: its cursor */
    struct mt_cand { int64_t t; const uint8_t *k; uint32_t l; bool has; } *mc;   /* per memtable: its
                                           candidate; has: it is the current partition */
    bool nk_live;                       /* next_key has run: the candidates are set */
    int next_win, n_win;                /* windows are 0..n_win-1 in clustering order */
    int win_lo, win_hi;                 /* the windows the slices can touch (inclusive) */
    bool first_win;                     /* next window is the partition's first */
    bool static_done;                   /* static row handled (emitted or absent) */
    bool ssts_counted;                  /* sstables_read/skipped counted for this partition */
    int64_t cur_token; uint8_t *cur_key; uint32_t cur_len, cur_cap; bool cur_incl, cur_has_key;
    st_row_view *out; int n_out, next_out;
    st_scan_stats stats;
    st_deletion pdel;                   /* current partition's deletion */
    int32_t now_s;
    /* Tombstone budget (spec.max_tombstones): where the scan stopped. */
    bool bud_hit, bud_has_ck;
    bool had_live;                      /* a live clustering row was produced */
    uint8_t *bud_ck; uint32_t bud_ck_len;
};

/* Budget exhausted?  (spec.max_tombstones 0 = unlimited) */
static bool budget_spent(const st_scan *s)
{
    uint64_t max = s->had_live && s->spec.max_tombstones_live ? s->spec.max_tombstones_live
                                                              : s->spec.max_tombstones;
    return max && s->stats.tombstones >= max;
}

/* Stop the scan at the current partition, after clustering key ck (NULL:
 * after the whole partition).  Returns 0 or CS_ENOMEM. */
static int budget_stop(st_scan *s, const uint8_t *ck, uint32_t ck_len)
{
    s->bud_hit = true;
    s->bud_has_ck = ck != NULL;
    s->bud_ck_len = 0;
    if (ck) {
        uint8_t *n = cs_realloc(s->bud_ck, ck_len ? ck_len : 1);
        if (!n) return CS_ENOMEM;
        if (ck_len) memcpy(n, ck, ck_len);
        s->bud_ck = n; s->bud_ck_len = ck_len;
    }
    return 0;
}

/* ---------------------------------------------------------------- merge */

static int row_ck_cmp(const st__row *a, const st__row *b)
{
    return st__bytes_cmp(a->ck, a->ck_len, b->ck, b->ck_len);
}

/* Merge partitions (same key) into out: deletions max'ed, range tombstones
 * concatenated, rows merged by clustering (k-way). */
int st__part_merge(st__part **in, int n, st__part *out, cs_arena *a)
{
    memset(out, 0, sizeof *out);
    out->pdel = ST_NO_DELETION;
    if (n == 0) return 0;
    out->pk = in[0]->pk; out->pk_len = in[0]->pk_len; out->token = in[0]->token;
    int *pos = cs_arena_zalloc(a, sizeof(int) * (size_t)n);
    if (!pos) return CS_ENOMEM;
    for (int i = 0; i < n; i++) {
        out->pdel = st__del_max(out->pdel, in[i]->pdel);
        for (int j = 0; j < in[i]->n_rts; j++)
            if (st__part_add_rt(out, &in[i]->rts[j], a)) return CS_ENOMEM;
        if (in[i]->stat) {
            if (!out->stat) { out->stat = st__row_copy(in[i]->stat, a); if (!out->stat) return CS_ENOMEM; }
            else if (st__row_merge(out->stat, in[i]->stat, a, NULL)) return CS_ENOMEM;
        }
    }
    if (n == 1) {
        out->rows = in[0]->rows; out->n_rows = in[0]->n_rows; out->cap_rows = in[0]->cap_rows;
        return 0;
    }
    for (;;) {
        st__row *min = NULL;
        for (int i = 0; i < n; i++)
            if (pos[i] < in[i]->n_rows && (!min || row_ck_cmp(in[i]->rows[pos[i]], min) < 0))
                min = in[i]->rows[pos[i]];
        if (!min) break;
        st__row *acc = NULL;
        int owners = 0;
        for (int i = 0; i < n; i++) {
            if (pos[i] < in[i]->n_rows && row_ck_cmp(in[i]->rows[pos[i]], min) == 0) {
                st__row *r = in[i]->rows[pos[i]++];
                if (!acc) acc = r;
                else {
                    if (owners == 1) { acc = st__row_copy(acc, a); if (!acc) return CS_ENOMEM; }
                    if (st__row_merge(acc, r, a, NULL)) return CS_ENOMEM;
                }
                owners++;
            }
        }
        if (st__part_add_row(out, acc, a)) return CS_ENOMEM;
    }
    return 0;
}

/* ---------------------------------------------------------------- live view */

static st_deletion rt_deletion(const st__part *p, const st__row *r)
{
    st_deletion d = ST_NO_DELETION;
    for (int i = 0; i < p->n_rts; i++)
        if (st__rt_covers(&p->rts[i], r->ck, r->ck_len)) d = st__del_max(d, p->rts[i].d);
    return d;
}

/* Build the live view of row r into v (cells in arena a).  Returns true if
 * the row has live data. */
/* A row marker that has not expired at now (a non-expiring one never does). */
static bool lv_unexpired(const st_liveness *lv, int32_t now) { return lv->ttl_s <= 0 || lv->ldt_s > now; }

static bool row_live(st_scan *s, const st__part *p, const st__row *r, st_row_view *v, cs_arena *a)
{
    int32_t now = s->now_s;
    st_deletion d = p->pdel;
    if (!(r->flags & ST_ROW_STATIC)) d = st__del_max(d, rt_deletion(p, r));
    /* A row deletion superseded by the partition or range deletion covering
     * the row is dropped before it is counted, as Cassandra's Row.filter
     * does with the active deletion: only a newer one is a tombstone read. */
    if (r->del.ts_us != INT64_MIN) {
        if (r->del.ts_us > d.ts_us)
            s->stats.tombstones++;
        d = st__del_max(d, r->del);
    }
    memset(v, 0, sizeof *v);
    v->ck = r->ck; v->ck_len = r->ck_len; v->flags = r->flags;
    v->liveness.ts_us = INT64_MIN;
    bool live = false;
    if (r->lv.ts_us != INT64_MIN && r->lv.ts_us > d.ts_us) {
        if (lv_unexpired(&r->lv, now)) { v->liveness = r->lv; live = true; }
    }
    st_cell *cells = r->n_cells ? cs_arena_alloc(a, sizeof(st_cell) * (size_t)r->n_cells) : NULL;
    int nc = 0;
    int ci = 0;
    for (int i = 0; i < r->n_cells; i++) {
        const st_cell *c = &r->cells[i];
        st_deletion cd = d;
        while (ci < r->n_cdels && r->cdels[ci].col < c->col) ci++;
        for (int k = 0; k < r->n_cdels; k++)
            if (r->cdels[k].col == c->col) cd = st__del_max(cd, r->cdels[k].d);
        if (c->ts_us <= cd.ts_us) continue;
        bool dead = (c->flags & ST_CELL_TOMBSTONE) || ((c->flags & ST_CELL_EXPIRING) && c->ldt_s <= now);
        if (dead) {
            s->stats.tombstones++;
            if (!s->spec.with_tombstones) continue;
        } else {
            live = true;
        }
        if (cells) cells[nc++] = *c;
    }
    v->cells = cells; v->n_cells = nc;
    return live;
}

/* ---------------------------------------------------------------- windows */

/* Start bound a more restrictive than b? (empty key = unbounded) */
static bool start_tighter(st_bound a, st_bound b)
{
    if (!a.len) return false;
    if (!b.len) return true;
    int c = st__bytes_cmp(a.key, a.len, b.key, b.len);
    return c > 0 || (c == 0 && !a.inclusive && b.inclusive);
}

static bool end_tighter(st_bound a, st_bound b)
{
    if (!a.len) return false;
    if (!b.len) return true;
    int c = st__bytes_cmp(a.key, a.len, b.key, b.len);
    return c < 0 || (c == 0 && !a.inclusive && b.inclusive);
}

static bool slice_empty(const st_slice *x)
{
    if (!x->start.len || !x->end.len) return false;
    int c = st__bytes_cmp(x->start.key, x->start.len, x->end.key, x->end.len);
    return c > 0 || (c == 0 && !(x->start.inclusive && x->end.inclusive));
}

/* The slices of window k (in output order): the user's slices intersected
 * with [boundary k-1, boundary k).  Returns the count (maybe 0). */
static int window_slices(st_scan *s, int k, st_slice *out)
{
    int w = s->spec.reversed ? s->win_hi - k : s->win_lo + k;
    st_slice win;
    win.start = w == 0 ? (st_bound){ NULL, 0, true } : (st_bound){ s->wb[w - 1], s->wbl[w - 1], true };
    win.end = w == s->n_win - 1 ? (st_bound){ NULL, 0, true } : (st_bound){ s->wb[w], s->wbl[w], false };
    if (s->spec.n_slices == 0) { out[0] = win; return 1; }
    int n = 0;
    for (int i = 0; i < s->spec.n_slices; i++) {
        st_slice x = s->spec.slices[i];
        if (start_tighter(win.start, x.start)) x.start = win.start;
        if (end_tighter(win.end, x.end)) x.end = win.end;
        if (!slice_empty(&x)) out[n++] = x;
    }
    return n;
}

static _Thread_local uint64_t tl_rhint_used;
uint64_t st__rhint_used(void) { return tl_rhint_used; }

/* The read hint's answer for sstable r, if it has one. */
static const sst_lookup_hint *rhint_for(const st__rhint *rh, const sst_reader *r)
{
    for (int j = 0; j < ST__RHINT_SSTS; j++)
        if (rh->s[j].state != SST_HINT_NONE && rh->s[j].rid == r->cache_id) {
            tl_rhint_used++;
            return &rh->s[j];
        }
    return NULL;
}

/* Look partition (token, pk) up in sstable i, its memo into s->pctx[i]:
 * the point read's batch hint's answer when it looked there, else the
 * bloom test and index search. */
static int lookup_sstable(st_scan *s, int i, int64_t token, const uint8_t *pk, uint32_t pk_len,
                          const uint8_t *const **k, const uint32_t **l, int *n)
{
    const sst_lookup_hint *h = s->rh ? rhint_for(s->rh, s->ssts[i]) : NULL;
    return h ? sst_partition_hinted(s->ssts[i], h, &s->pctx[i], k, l, n)
             : sst_partition_lookup(s->ssts[i], token, pk, pk_len, &s->pctx[i], k, l, n);
}

/* A single-partition read's sstables, newest first by max timestamp
 * (Cassandra's maxTimestampDescending; insertion sort: a handful), so a
 * partition deletion read early lets load_window pass the older ones. */
static void sort_newest_first(sst_reader **ssts, int n)
{
    for (int i = 1; i < n; i++) {
        sst_reader *r = ssts[i];
        int j = i;
        for (; j > 0 && ssts[j - 1]->st.max_ts < r->st.max_ts; j--) ssts[j] = ssts[j - 1];
        ssts[j] = r;
    }
}

/* A traced read's record of sstable r (st_read_trace): only the sstables
 * whose key range holds the key count, as Cassandra selects them. */
static bool key_in_range(const sst_reader *r, int64_t token, const uint8_t *pk, uint32_t pk_len)
{
    if (r->n_idx == 0) return false;
    const sst_index_entry *lo = &r->idx[0], *hi = &r->idx[r->n_idx - 1];
    return st__key_cmp(lo->token, lo->pk, lo->pk_len, token, pk, pk_len) <= 0 &&
           st__key_cmp(hi->token, hi->pk, hi->pk_len, token, pk, pk_len) >= 0;
}

static void trace_probe(st_read_trace *tr, sst_reader *r, int64_t token, const uint8_t *pk, uint32_t pk_len,
                        uint8_t outcome, bool slice_miss, const st__part *p)
{
    if (!key_in_range(r, token, pk, pk_len)) return;
    if (tr->n == ST_TRACE_PROBES) return;
    st_sst_probe *pr = &tr->probes[tr->n++];
    pr->gen = r->gen;
    pr->max_ts = r->st.max_ts;
    pr->outcome = outcome;
    pr->slice_miss = slice_miss;
    pr->tombstones = r->st.tombstones != 0;
    if (outcome == ST_PROBE_FOUND && p) {
        pr->deleted = p->pdel.ts_us != INT64_MIN;
        uint64_t i = sst__idx_find(r, token, pk, pk_len);
        pr->index_entries = i < r->n_idx && r->idx[i].n_ri >= 2 ? r->idx[i].n_ri : 0;
    }
}

/* Timestamp-ordered point read (spec.cover_cols): do the parts read so far
 * settle the result for sources whose data is all at or before max_ts?
 * Yes if they hold one row without clustering, no deletion of any kind
 * (conservative), a row marker newer than max_ts that wins over the other
 * markers read and is live, and, for every listed column, a simple cell
 * newer than max_ts: nothing older can then shadow the marker or those
 * cells, or add a tombstone that would.  (The winning marker, not any
 * live one: a newer expired marker supersedes an older live one, and the
 * row then lives only if some column does, which needs every source.) */
static bool covered(const st_scan *s, st__part *const *parts, int np, int64_t max_ts)
{
    const st_read_spec *sp = &s->spec;
    int64_t marker_ts = INT64_MIN;     /* the newest marker read, */
    bool marker_live = false;          /* live if every marker of that timestamp is */
    uint64_t found = 0, all = sp->n_cover >= 64 ? ~0ull : (1ull << sp->n_cover) - 1;
    for (int i = 0; i < np; i++) {
        const st__part *p = parts[i];
        if (p->pdel.ts_us != INT64_MIN || p->n_rts || p->stat || p->n_rows > 1) return false;
        if (p->n_rows == 0) continue;
        const st__row *r = p->rows[0];
        if (r->ck_len || r->del.ts_us != INT64_MIN || r->n_cdels) return false;
        if (r->lv.ts_us != INT64_MIN && r->lv.ts_us >= marker_ts) {
            bool live = lv_unexpired(&r->lv, s->now_s);
            marker_live = r->lv.ts_us > marker_ts ? live : marker_live && live;
            marker_ts = r->lv.ts_us;
        }
        for (int c = 0; c < r->n_cells; c++) {
            const st_cell *cell = &r->cells[c];
            if (cell->ts_us <= max_ts || cell->path_len) continue;
            for (int k = 0; k < sp->n_cover; k++)
                if (sp->cover_cols[k] == cell->col) { found |= 1ull << k; break; }
        }
    }
    return marker_ts > max_ts && marker_live && found == all;
}

/* Materialize window k of the current partition into s->out (arena pa).
 * The first window also yields the static row and counts partition-level
 * tombstones and sstables consulted.  Returns 0 or <0. */
static int load_window(st_scan *s, int k, bool *exists)
{
    cs_arena *a;
    if (s->single && (s->n_win == 1 || s->accum)) {
        a = s->ka;                      /* one window (or st_read_point): no arena of its own */
    } else {
        cs_arena_reset(&s->pa);
        a = &s->pa;
    }
    s->out = NULL; s->n_out = s->next_out = 0;
    s->first_win = false;
    bool want_static = s->spec.include_static && !s->static_done;
    int nsl_cap = s->spec.n_slices ? s->spec.n_slices : 1;
    st_slice *sl = cs_arena_alloc(a, sizeof(st_slice) * (size_t)nsl_cap);
    if (!sl) return CS_ENOMEM;
    bool windowed = s->n_win > 1;
    int nsl = windowed ? window_slices(s, k, sl) : s->spec.n_slices;
    if (!windowed && nsl) memcpy(sl, s->spec.slices, sizeof(st_slice) * (size_t)nsl);
    if (windowed && nsl == 0) {
        if (!want_static) return 0;
        /* Only the static row is wanted from this window: a slice matching no row. */
        static const uint8_t none[1] = { 0 };
        sl[0] = (st_slice){ { none, 1, false }, { none, 1, false } };
        nsl = 1;
    }
    int64_t token = s->ptoken;
    const uint8_t *pk = s->pkey;
    uint32_t pk_len = s->pkey_len;
    int n_src = s->n_mts + s->n_ssts;
    st__part **parts = cs_arena_alloc(a, sizeof(st__part *) * (size_t)(n_src ? n_src : 1));
    if (!parts) return CS_ENOMEM;
    int np = 0;
    /* Each sstable is counted (stats, trace) once per partition: skipped
     * when its bounds miss the whole read's slices (or it is passed), read
     * in the window that first reads it.  An sstable that only later
     * windows reach, and that a read stopping early never reaches, is
     * neither (as Cassandra's merge opens an sstable only once its lower
     * bound is reached, and counts those it iterated). */
    bool first = !s->ssts_counted;
    s->ssts_counted = true;
    int64_t newest_pdel = INT64_MIN;    /* the newest partition deletion read so far */
    st_read_trace *tr = s->single ? s->spec.trace : NULL;
    if (tr && first) {
        memset(tr, 0, sizeof *tr);
        for (int i = 0; i < s->n_ssts; i++)   /* the sstables whose key range holds the key */
            tr->n_ssts += key_in_range(s->ssts[i], token, pk, pk_len);
    }
    for (int i = 0; i < s->n_mts; i++) {
        if (!s->single && !s->mc[i].has) continue;   /* next_key found it elsewhere */
        st__part *p = cs_arena_zalloc(a, sizeof *p);
        if (!p) return CS_ENOMEM;
        int rc = mt_read_partition(s->mts[i], token, pk, pk_len, sl, nsl, p, a);
        if (rc < 0) return rc;
        if (rc) parts[np++] = p;
        if (rc && p->pdel.ts_us > newest_pdel) newest_pdel = p->pdel.ts_us;
    }
    for (int i = 0; i < s->n_ssts; i++) {
        sst_reader *r = s->ssts[i];
        /* Everything in r is older than a partition deletion already read:
         * all shadowed (SinglePartitionReadCommand stops at the first such
         * sstable, the sstables being newest first) */
        sst_pctx *acct = &s->pctx[i];
        if (r->st.max_ts < newest_pdel && !s->spec.with_tombstones) {
            if (!acct->acct) {
                acct->acct = true;
                s->stats.sstables_skipped++;
                if (tr) trace_probe(tr, r, token, pk, pk_len, ST_PROBE_COVERED, false, NULL);
            }
            continue;
        }
        if (s->cover) {
            /* Newest first (st_read_point sorted them): stop once what was
             * read settles the row for every sstable left. */
            if (covered(s, parts, np, r->st.max_ts)) {
                for (int j = i; j < s->n_ssts; j++) {
                    if (s->pctx[j].acct) continue;
                    s->pctx[j].acct = true;
                    s->stats.sstables_skipped++;
                    if (tr) trace_probe(tr, s->ssts[j], token, pk, pk_len, ST_PROBE_COVERED, false, NULL);
                }
                break;
            }
            if (s->pctx[i].state == 0) {   /* the lookup load_partition left for now */
                const uint8_t *const *k; const uint32_t *l; int n;
                int rc = lookup_sstable(s, i, token, pk, pk_len, &k, &l, &n);
                if (rc < 0) return rc;
                s->pctx[i].point = true;
            }
        }
        bool slice_miss = nsl && !sst_may_contain_ck(r, sl, nsl);
        /* its bounds miss the read's slices (not just this window's) */
        bool read_miss = slice_miss && (!windowed || !s->spec.n_slices ||
                                        !sst_may_contain_ck(r, s->spec.slices, s->spec.n_slices));
        if (slice_miss && r->st.tombstones == 0 && !want_static) {
            if (read_miss && !acct->acct) {
                acct->acct = true;
                s->stats.sstables_skipped++;
                if (tr) trace_probe(tr, r, token, pk, pk_len, ST_PROBE_SLICE, true, NULL);
            }
            continue;
        }
        st__part *p = cs_arena_zalloc(a, sizeof *p);
        if (!p) return CS_ENOMEM;
        bool neg = false;
        int rc = sst_read_partition_ctx(r, token, pk, pk_len, sl, nsl, p, a, &neg,
                                        s->pctx ? &s->pctx[i] : NULL, s->single ? s->ka : &s->parena);
        if (rc < 0) return rc;
        /* read: the partition was found there (Cassandra's merged sstables
         * count those whose index held the key, not its bloom false
         * positives) */
        if (!acct->acct) {
            acct->acct = true;
            if (neg || rc == 0) s->stats.sstables_skipped++; else s->stats.sstables_read++;
            if (tr)
                trace_probe(tr, r, token, pk, pk_len, neg ? ST_PROBE_BLOOM : rc ? ST_PROBE_FOUND : ST_PROBE_INDEX_MISS,
                            read_miss && !want_static, rc ? p : NULL);
        }
        if (rc) parts[np++] = p;
        if (rc && p->pdel.ts_us > newest_pdel) newest_pdel = p->pdel.ts_us;
    }
    if (np == 0) return 0;
    *exists = true;
    st__part m;
    int rc = st__part_merge(parts, np, &m, a);
    if (rc) return rc;
    s->pdel = st__del_max(s->pdel, m.pdel);
    if (!s->static_done || !windowed) {   /* partition-level tombstones: count once */
        if (m.pdel.ts_us != INT64_MIN) s->stats.tombstones++;
        s->stats.tombstones += (uint64_t)m.n_rts;
    }
    s->out = cs_arena_alloc(a, sizeof(st_row_view) * (size_t)(m.n_rows + 1));
    if (!s->out) return CS_ENOMEM;
    if (want_static && m.stat) {
        st_row_view v;
        bool live = row_live(s, &m, m.stat, &v, a);
        if (live || s->spec.with_tombstones) s->out[s->n_out++] = v;
    }
    s->static_done = true;
    for (int j = 0; j < m.n_rows; j++) {
        int i = s->spec.reversed ? m.n_rows - 1 - j : j;
        st_row_view v;
        uint64_t before = s->stats.tombstones;
        bool live = row_live(s, &m, m.rows[i], &v, a);
        if (live || s->spec.with_tombstones) s->out[s->n_out++] = v;
        s->had_live |= live;
        /* Tombstone budget: stop after a row that consumed some of it (the
         * rows after it are read again by the next page). */
        if (s->stats.tombstones > before && budget_spent(s) && j + 1 < m.n_rows) {
            int rc = budget_stop(s, m.rows[i]->ck, m.rows[i]->ck_len);
            if (rc) return rc;
            break;
        }
    }
    return a->err ? CS_ENOMEM : 0;
}

/* Load windows until one yields rows.  Returns 1 if rows are ready, 0 if
 * the partition has no more, <0 on error. */
static int fill_rows(st_scan *s, bool *exists)
{
    while (s->next_out >= s->n_out) {
        if (s->bud_hit) return ST_SCAN_BUDGET;
        if (s->next_win > s->win_hi - s->win_lo) return 0;
        int rc = load_window(s, s->next_win++, exists);
        if (rc) return rc;
    }
    return 1;
}

/* Number of window boundaries <= key (boundaries are strictly increasing). */
static int count_le(const st_scan *s, const uint8_t *key, uint32_t len)
{
    int lo = 0, hi = s->n_wb;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (st__bytes_cmp(s->wb[mid], s->wbl[mid], key, len) <= 0) lo = mid + 1; else hi = mid;
    }
    return lo;
}

/* Set up partition (token, key): its windows are the row-index runs of the
 * sstable holding most of it, so a huge partition is read ~64 KiB at a time
 * instead of whole.  Returns 1 if it has rows to return, 0 if not, <0. */
/* The windows of a partition spread over several sstables: the
 * boundaries of the sstable with the most windows, plus where every
 * sstable's wide part of the partition starts (the first key of its row
 * index) and ends (the key just after its last: the last key and a zero
 * byte), so that sstables holding disjoint clustering ranges (a time
 * series flushed hour by hour) each get windows of their own and a read
 * that stops early (a LIMIT, a page), in either direction, reads only the
 * sstables it reaches, as Cassandra's merge opens an sstable only once
 * its lower bound is reached.  Any sorted boundaries tile the clustering
 * space; borrowed keys, the new arrays and the "just after" keys in pa. */
#define WIDEN_MAX 32
static void widen_add(const uint8_t **k, uint32_t *l, int *n, const uint8_t *key, uint32_t len)
{
    int j = (*n)++;   /* insertion, sorted by bytes */
    for (; j > 0 && st__bytes_cmp(k[j - 1], l[j - 1], key, len) > 0; j--) { k[j] = k[j - 1]; l[j] = l[j - 1]; }
    k[j] = key; l[j] = len;
}

static int widen_windows(st_scan *s, cs_arena *pa)
{
    const uint8_t *fk[2 * WIDEN_MAX];
    uint32_t fl[2 * WIDEN_MAX];
    int nf = 0, parts = 0;
    for (int i = 0; i < s->n_ssts && parts < WIDEN_MAX; i++) {
        const uint8_t *first, *last;
        uint32_t flen, llen;
        int rc = sst_partition_ck_range(s->ssts[i], &s->pctx[i], &first, &flen, &last, &llen);
        if (rc < 0) return rc;
        if (rc == 0) continue;
        uint8_t *after = cs_arena_alloc(pa, (size_t)llen + 1);
        if (!after) return CS_ENOMEM;
        if (llen) memcpy(after, last, llen);
        after[llen] = 0;
        widen_add(fk, fl, &nf, first, flen);
        widen_add(fk, fl, &nf, after, llen + 1);
        parts++;
    }
    if (parts < 2) return 0;   /* one wide part: its own windows already */
    int cap = s->n_wb + nf;
    const uint8_t **nb = cs_arena_alloc(pa, sizeof *nb * (size_t)cap);
    uint32_t *nl = cs_arena_alloc(pa, sizeof *nl * (size_t)cap);
    if (!nb || !nl) return CS_ENOMEM;
    int n = 0, a = 0, b = 0;
    while (a < s->n_wb || b < nf) {   /* merge, without duplicates */
        const uint8_t *k; uint32_t l;
        if (b >= nf || (a < s->n_wb && st__bytes_cmp(s->wb[a], s->wbl[a], fk[b], fl[b]) <= 0)) {
            k = s->wb[a]; l = s->wbl[a]; a++;
        } else {
            k = fk[b]; l = fl[b]; b++;
        }
        if (n && st__bytes_cmp(nb[n - 1], nl[n - 1], k, l) == 0) continue;
        nb[n] = k; nl[n] = l; n++;
    }
    s->wb = nb; s->wbl = nl; s->n_wb = n;
    return 0;
}

static int load_partition(st_scan *s, int64_t token, const uint8_t *pk, uint32_t pk_len, bool known)
{
    cs_arena *pa = s->ka;
    if (s->single) {
        /* One partition: its key is the (copied) spec key, its memo lives in ka. */
        s->pkey = (uint8_t *)pk;
    } else {
        if (pk_len + 1 > s->pkey_cap) {
            uint8_t *n = cs_realloc(s->pkey, pk_len + 1);
            if (!n) return CS_ENOMEM;
            s->pkey = n; s->pkey_cap = pk_len + 1;
        }
        if (pk_len) memcpy(s->pkey, pk, pk_len);
        cs_arena_reset(&s->parena);
        pa = &s->parena;
    }
    s->pkey_len = pk_len;
    s->ptoken = token;
    s->n_wb = 0; s->wb = NULL; s->wbl = NULL;
    s->pctx = s->n_ssts ? cs_arena_zalloc(pa, sizeof(sst_pctx) * (size_t)s->n_ssts) : NULL;
    if (s->n_ssts && !s->pctx) return CS_ENOMEM;
    /* One bloom probe + index search per sstable for the whole partition:
     * the memo in pctx[i] serves every window's read. */
    for (int i = 0; i < s->n_ssts && !s->cover; i++) {
        const uint8_t *const *k; const uint32_t *l; int n;
        int rc;
        if (known) {
            /* next_key found each sstable's first key after the cursor: it
             * holds this partition iff that key is this one. */
            sst_reader *r = s->ssts[i];
            bool found = s->nk_ok[i] && st__key_cmp(r->idx[s->nk_pos[i]].token, r->idx[s->nk_pos[i]].pk,
                                                    r->idx[s->nk_pos[i]].pk_len, token, pk, pk_len) == 0;
            rc = sst_partition_known(r, found, s->nk_pos[i], &s->pctx[i], &k, &l, &n);
        } else {
            rc = lookup_sstable(s, i, token, pk, pk_len, &k, &l, &n);
        }
        if (rc < 0) return rc;
        s->pctx[i].point = s->single;   /* block cache admission, partial decode */
        if (n > s->n_wb) { s->wb = k; s->wbl = l; s->n_wb = n; }
    }
    /* A point read: start loading each found partition's cached bytes
     * (their slots were prefetched by the lookups) so the memtable lookup
     * overlaps those misses. */
    if (s->single && !s->cover)
        for (int i = 0; i < s->n_ssts; i++)
            if (s->pctx[i].state == 2) sst_prefetch_partition(s->ssts[i], s->pctx[i].idx);
    if (s->n_wb && s->n_ssts > 1 && !s->cover) {
        int rc = widen_windows(s, pa);
        if (rc < 0) return rc;
    }
    s->n_win = s->n_wb + 1;
    /* Only windows between the first slice's start and the last slice's end
     * can hold wanted rows (window w spans [wb[w-1], wb[w])). */
    s->win_lo = 0;
    s->win_hi = s->n_win - 1;
    if (s->n_wb && s->spec.n_slices) {
        st_bound lo = s->spec.slices[0].start, hi = s->spec.slices[s->spec.n_slices - 1].end;
        if (lo.len) s->win_lo = count_le(s, lo.key, lo.len);
        if (hi.len) s->win_hi = count_le(s, hi.key, hi.len);
        if (s->win_hi < s->win_lo) s->win_hi = s->win_lo;   /* one (empty) window still yields the static row */
    }
    s->next_win = 0;
    s->first_win = true;
    s->static_done = false;
    s->ssts_counted = false;
    s->pdel = ST_NO_DELETION;
    s->out = NULL; s->n_out = s->next_out = 0;
    bool exists = false;
    int rc = fill_rows(s, &exists);
    if (rc < 0) return rc;
    if (rc == 0 && s->spec.with_tombstones && exists) return 1;
    return rc;
}

/* ---------------------------------------------------------------- scan api */

/* Take the table's sources (memtables, sstables), each referenced, into
 * arrays allocated in a. */
static int snapshot_sources(st_scan *s, cs_arena *a)
{
    st_table *t = s->t;
    pthread_mutex_lock(&t->mu);
    s->mts = cs_arena_alloc(a, sizeof(mt_memtable *) * (size_t)(t->n_flushing + 1));
    s->ssts = cs_arena_alloc(a, sizeof(sst_reader *) * (size_t)(t->n_ssts + 1));
    if (s->mts && s->ssts) {
        s->mts[s->n_mts++] = t->mem; mt_ref(t->mem);
        for (int i = 0; i < t->n_flushing; i++) { s->mts[s->n_mts++] = t->flushing[i]; mt_ref(t->flushing[i]); }
        for (int i = 0; i < t->n_ssts; i++) { s->ssts[s->n_ssts++] = t->ssts[i]; sst_reader_ref(t->ssts[i]); }
    }
    pthread_mutex_unlock(&t->mu);
    return s->mts && s->ssts ? 0 : CS_ENOMEM;
}

static void release_sources(st_scan *s)
{
    for (int i = 0; i < s->n_mts; i++) mt_unref(s->mts[i]);
    for (int i = 0; i < s->n_ssts; i++) sst_reader_unref(s->ssts[i]);
    s->n_mts = s->n_ssts = 0;
}

/* A partition key copy with a zero byte after it: st_partition_view.pk has
 * always had one (callers copy pk_len + 1 bytes). */
static uint8_t *key_copy(cs_arena *a, const uint8_t *pk, uint32_t len)
{
    uint8_t *k = cs_arena_alloc(a, (size_t)len + 1);
    if (!k) return NULL;
    if (len) memcpy(k, pk, len);
    k[len] = 0;
    return k;
}

static bool bad_slices(const st_read_spec *spec)
{
    for (int i = 0; i < spec->n_slices; i++) {
        const st_slice *in = &spec->slices[i];
        if ((in->start.len && !in->start.key) || (in->end.len && !in->end.key)) return true;
    }
    return false;
}

int st_scan_open(st_table *t, const st_read_spec *spec, st_scan **out)
{
    *out = NULL;
    if (!t || !spec || spec->n_slices < 0 || (spec->n_slices && !spec->slices) || bad_slices(spec)) return CS_EINVAL;
    /* The scan lives in its own arena (keep), with the spec copies and the
     * source arrays: a point read makes one allocation for all of it. */
    cs_arena k;
    cs_arena_init(&k);
    st_scan *s = cs_arena_zalloc(&k, sizeof *s);
    if (!s) { cs_arena_destroy(&k); return CS_ENOMEM; }
    s->keep = k;
    s->ka = &s->keep;
    s->t = t;
    s->spec = *spec;
    cs_arena_init(&s->pa);
    cs_arena_init(&s->parena);
    if (spec->n_slices) {
        s->slices = cs_arena_alloc(&s->keep, sizeof(st_slice) * (size_t)spec->n_slices);
        for (int i = 0; s->slices && i < spec->n_slices; i++) {
            s->slices[i] = spec->slices[i];
            const st_slice *in = &spec->slices[i];
            s->slices[i].start.key = in->start.len ? cs_arena_memdup(&s->keep, in->start.key, in->start.len) : NULL;
            s->slices[i].end.key = in->end.len ? cs_arena_memdup(&s->keep, in->end.key, in->end.len) : NULL;
        }
        s->spec.slices = s->slices;
    }
    s->single = spec->pk != NULL;
    if (s->single) {
        s->spec.pk = key_copy(&s->keep, spec->pk, spec->pk_len);
    } else {
        s->cur_token = spec->start_token;
        s->cur_has_key = spec->start_key != NULL;
        s->cur_incl = spec->start_key ? spec->start_inclusive : true;
        if (spec->start_key) {
            s->cur_key = spec->start_key_len ? cs_memdup(spec->start_key, spec->start_key_len) : cs_malloc(1);
            if (!s->cur_key) { st_scan_close(s); return CS_ENOMEM; }
            s->cur_len = s->cur_cap = spec->start_key_len;
        }
    }
    s->now_s = spec->now_s ? spec->now_s : cs_now_s();
    if (s->keep.err || snapshot_sources(s, &s->keep)) { st_scan_close(s); return CS_ENOMEM; }
    if (s->single)
        sort_newest_first(s->ssts, s->n_ssts);
    if (!s->single) {
        s->nk_pos = cs_arena_zalloc(&s->keep, sizeof *s->nk_pos * ((size_t)s->n_ssts + 1));
        s->nk_ok = cs_arena_zalloc(&s->keep, sizeof *s->nk_ok * ((size_t)s->n_ssts + 1));
        s->mk = cs_arena_zalloc(&s->keep, sizeof *s->mk * (size_t)s->n_mts);
        s->mc = cs_arena_zalloc(&s->keep, sizeof *s->mc * (size_t)s->n_mts);
        if (!s->nk_pos || !s->nk_ok || !s->mk || !s->mc) { st_scan_close(s); return CS_ENOMEM; }
    }
    *out = s;
    return 0;
}

/* The keys hints were last given for on this thread (reads and writes),
 * in order, with their tokens: the reads and writes that follow (the
 * requests after the current one) need not hash them again.  A lookup
 * tries the entry after the last one used and the one after it (a
 * request may have been skipped), no further: an unhinted request must
 * not pay for a search. */
#define HINT_KEY_MAX 64
#define HINT_RING 32
static _Thread_local struct {
    uint32_t w, r;                     /* entries written, entries passed */
    struct { int64_t token; st__whint wh; st__rhint rh; uint32_t len; uint8_t key[HINT_KEY_MAX]; } e[HINT_RING];
} tl_hint;

void st__hint_tokens_put(const uint8_t *const *pks, const uint32_t *lens, const int64_t *tokens,
                         const st__whint *wh, const st__rhint *rh, int n)
{
    if (tl_hint.r > tl_hint.w || tl_hint.w - tl_hint.r > HINT_RING) tl_hint.r = tl_hint.w;
    for (int i = 0; i < n; i++) {
        if (lens[i] > HINT_KEY_MAX) continue;
        uint32_t k = tl_hint.w++ % HINT_RING;
        tl_hint.e[k].token = tokens[i];
        tl_hint.e[k].wh = wh ? wh[i] : (st__whint){ 0 };
        tl_hint.e[k].rh = rh ? rh[i] : (st__rhint){ 0 };
        tl_hint.e[k].len = lens[i];
        if (lens[i]) memcpy(tl_hint.e[k].key, pks[i], lens[i]);
    }
}

int st__hint_hash(const uint8_t *const *pks, const uint32_t *lens, int n, int64_t *tokens)
{
    if (n > ST_PREFETCH_KEYS) n = ST_PREFETCH_KEYS;
    for (int i = 0; i < n; i++) {
        if (!pks[i] && lens[i]) return 0;
        tokens[i] = cs_murmur3_token(pks[i], lens[i]);
    }
    return n > 0 ? n : 0;
}

int64_t st__hint_token(const uint8_t *pk, uint32_t len, st__whint *wh, st__rhint *rh)
{
    if (wh) *wh = (st__whint){ 0 };
    if (rh) *rh = (st__rhint){ 0 };
    for (uint32_t i = tl_hint.r; i != tl_hint.w && i - tl_hint.r < 2; i++) {
        if (tl_hint.w - i > HINT_RING) continue;           /* overwritten since */
        const uint32_t k = i % HINT_RING;
        if (tl_hint.e[k].len == len && (len == 0 || memcmp(tl_hint.e[k].key, pk, len) == 0)) {
            tl_hint.r = i + 1;
            if (wh) *wh = tl_hint.e[k].wh;
            if (rh) *rh = tl_hint.e[k].rh;
            return tl_hint.e[k].token;
        }
    }
    return cs_murmur3_token(pk, len);
}

/* The point-read fast path: the partition's rows straight into the
 * caller's arena, with no scan object on the heap.  Same lookups, merge and
 * live view as a single-partition scan (load_partition / load_window). */
int st_read_point(st_table *t, const st_read_spec *spec, cs_arena *a, st_point *out)
{
    if (out) memset(out, 0, sizeof *out);
    if (!t || !spec || !a || !out || !spec->pk || spec->n_slices < 0 || (spec->n_slices && !spec->slices) ||
        spec->max_tombstones || spec->max_tombstones_live || bad_slices(spec))
        return CS_EINVAL;
    st_scan s;
    memset(&s, 0, sizeof s);
    cs_arena_init(&s.keep);
    cs_arena_init(&s.pa);
    cs_arena_init(&s.parena);
    s.t = t;
    s.spec = *spec;
    s.ka = a;
    s.accum = true;
    s.single = true;
    s.done = true;
    s.now_s = spec->now_s ? spec->now_s : cs_now_s();
    int rc = snapshot_sources(&s, a);
    s.cover = rc == 0 && spec->n_cover > 0 && spec->n_cover <= 64 && spec->cover_cols && !spec->n_slices &&
              !spec->with_tombstones;
    if (rc == 0)
        sort_newest_first(s.ssts, s.n_ssts);
    /* the batch hint's lookups of this key: load_partition takes them,
     * and a timestamp-ordered read (whose lookups wait for load_window,
     * newest sstable first) too, so they are kept for the whole read */
    st__rhint rh = { 0 };
    if (rc == 0) {
        const uint8_t *pk = key_copy(a, spec->pk, spec->pk_len);
        int64_t token = pk ? st__hint_token(pk, spec->pk_len, NULL, &rh) : 0;
        s.rh = &rh;
        rc = pk ? load_partition(&s, token, pk, spec->pk_len, false) : CS_ENOMEM;
    }
    if (rc == 1) {
        /* Rows of later windows (a wide partition) are appended. */
        st_row_view *rows = s.out;
        int n = s.n_out, cap = s.n_out;
        s.next_out = s.n_out;
        bool exists = false;
        int more;
        while ((more = fill_rows(&s, &exists)) == 1) {
            int add = s.n_out - s.next_out;
            if (n + add > cap) {
                int nc = cap * 2 > n + add ? cap * 2 : n + add;
                st_row_view *nr = cs_arena_alloc(a, sizeof *nr * (size_t)nc);
                if (!nr) { more = CS_ENOMEM; break; }
                if (n) memcpy(nr, rows, sizeof *nr * (size_t)n);
                rows = nr; cap = nc;
            }
            memcpy(rows + n, s.out + s.next_out, sizeof *rows * (size_t)add);
            n += add;
            s.next_out = s.n_out;
        }
        if (more < 0) rc = more;
        for (int i = 0; i < n; i++)
            if (rows[i].liveness.ts_us != INT64_MIN || rows[i].n_cells) s.stats.rows++;
        out->part.pk = s.pkey; out->part.pk_len = s.pkey_len; out->part.token = s.ptoken;
        out->part.deletion = s.pdel;
        out->rows = rows; out->n_rows = n;
    }
    release_sources(&s);
    cs_arena_destroy(&s.pa);
    cs_arena_destroy(&s.parena);
    cs_arena_destroy(&s.keep);
    out->stats = s.stats;
    if (rc < 0) { out->rows = NULL; out->n_rows = 0; memset(&out->part, 0, sizeof out->part); }
    return rc < 0 ? rc : rc == 1;
}

/* The sstables a point read probes first (the newest by max timestamp;
 * st_read_point stops early once they settle the row). */
#define PREFETCH_SSTS ST__RHINT_SSTS
_Static_assert(PREFETCH_SSTS <= SST_PREFETCH_READERS && ST_PREFETCH_KEYS <= SST_PREFETCH_LOOKUPS,
               "a read hint's sstables and keys fit sst_prefetch_lookups");

void st_prefetch_reads(st_table *t, const uint8_t *const *pks, const uint32_t *lens, int n)
{
    int64_t tokens[ST_PREFETCH_KEYS];
    if (!t || (n = st__hint_hash(pks, lens, n, tokens)) == 0) return;
    /* the PREFETCH_SSTS newest (all of them when there are no more): an
     * insertion into a short sorted list, the sstables are few */
    sst_reader *top[PREFETCH_SSTS];
    int k = 0;
    pthread_mutex_lock(&t->mu);
    for (int i = 0; i < t->n_ssts; i++) {
        sst_reader *r = t->ssts[i];
        if (k == PREFETCH_SSTS && top[k - 1]->st.max_ts >= r->st.max_ts) continue;
        int j = k < PREFETCH_SSTS ? k++ : PREFETCH_SSTS - 1;
        for (; j > 0 && top[j - 1]->st.max_ts < r->st.max_ts; j--) top[j] = top[j - 1];
        top[j] = r;
    }
    uint64_t hs[ST_PREFETCH_KEYS];
    for (int i = 0; i < n && k; i++) {
        hs[i] = sst__bloom_hash(pks[i], lens[i]);
        for (int j = 0; j < k; j++) sst_prefetch_bloom(top[j], hs[i]);
    }
    if (!t->dropped) mt_prefetch_reads(t->mem, tokens, n);
    /* the blooms have arrived by now; with two keys or more, the stages
     * after them (one key: its read comes next, nothing to overlap), and
     * what they found kept for the reads (load_partition) */
    st__rhint rh[ST_PREFETCH_KEYS];
    bool looked = k && n > 1;
    if (looked) {
        sst_lookup_hint out[ST_PREFETCH_KEYS][SST_PREFETCH_READERS];
        sst_prefetch_lookups(top, k, tokens, hs, n, out);
        for (int i = 0; i < n; i++)
            for (int j = 0; j < PREFETCH_SSTS; j++) rh[i].s[j] = j < k ? out[i][j] : (sst_lookup_hint){ 0 };
    }
    pthread_mutex_unlock(&t->mu);
    st__hint_tokens_put(pks, lens, tokens, NULL, looked ? rh : NULL, n);
}

/* Smallest key after the cursor over all sources; marks the memtables
 * that hold it (mc[].has; nk_pos/nk_ok tell it for sstables).  An sstable
 * with no candidate left is skipped: it never gains keys. */
static int next_key(st_scan *s, int64_t *tok, const uint8_t **key, uint32_t *len)
{
    bool found = false;
    const uint8_t *ck = s->cur_has_key ? s->cur_key : NULL;
    for (int i = 0; i < s->n_mts + s->n_ssts; i++) {
        int64_t t = 0; const uint8_t *k = NULL; uint32_t l = 0;
        int rc;
        if (i < s->n_mts) {
            rc = mt_next_key(s->mts[i], s->cur_token, ck, s->cur_len, s->cur_incl, s->spec.end_token,
                             &t, &k, &l, &s->mk[i]);
            s->mc[i] = (struct mt_cand){ t, k, l, rc == 1 };
        } else {
            int j = i - s->n_mts;
            if (s->nk_live && !s->nk_ok[j]) continue;
            rc = sst_next_key(s->ssts[j], s->cur_token, ck, s->cur_len, s->cur_incl, s->spec.end_token,
                              &t, &k, &l, &s->nk_pos[j], s->nk_live);
            s->nk_ok[j] = rc == 1;
        }
        if (rc < 0) return rc;
        if (rc && (!found || st__key_cmp(t, k, l, *tok, *key, *len) < 0)) {
            *tok = t; *key = k; *len = l; found = true;
        }
    }
    s->nk_live = true;
    /* Which memtables hold it: those whose candidate it is. */
    for (int i = 0; found && i < s->n_mts; i++)
        s->mc[i].has = s->mc[i].has && st__key_cmp(s->mc[i].t, s->mc[i].k, s->mc[i].l, *tok, *key, *len) == 0;
    return found ? 1 : 0;
}

int st_scan_next_partition(st_scan *s, st_partition_view *p)
{
    if (!s || !p) return CS_EINVAL;
    for (;;) {
        if (s->bud_hit) return ST_SCAN_BUDGET;
        if (s->done) return 0;
        cs_arena_reset(&s->pa);
        s->out = NULL; s->n_out = s->next_out = 0;
        int64_t tok = 0; const uint8_t *key = NULL; uint32_t len = 0;
        if (s->single) {
            s->done = true;
            key = s->spec.pk; len = s->spec.pk_len;
            tok = cs_murmur3_token(key, len);
        } else {
            int rc = next_key(s, &tok, &key, &len);
            if (rc <= 0) { s->done = true; return rc; }
            if (len > s->cur_cap || !s->cur_key) {
                uint8_t *nk = cs_realloc(s->cur_key, len ? len : 1);
                if (!nk) return CS_ENOMEM;
                s->cur_key = nk; s->cur_cap = len;
            }
            memcpy(s->cur_key, key, len);
            s->cur_len = len; s->cur_token = tok;
            s->cur_has_key = true; s->cur_incl = false;
        }
        int rc = load_partition(s, tok, key, len, !s->single);
        if (rc < 0 || rc == ST_SCAN_BUDGET) return rc;
        if (rc == 0) {
            /* A partition with nothing to return: stop after it when the
             * budget is spent and more partitions may follow. */
            if (!s->single && budget_spent(s)) {
                if ((rc = budget_stop(s, NULL, 0))) return rc;
                return ST_SCAN_BUDGET;
            }
            continue;
        }
        p->pk = s->pkey; p->pk_len = s->pkey_len; p->token = tok;
        p->deletion = s->pdel;
        return 1;
    }
}

int st_scan_next_row(st_scan *s, st_row_view *r)
{
    if (!s || !r) return CS_EINVAL;
    bool exists = false;
    int rc = fill_rows(s, &exists);
    if (rc != 1) return rc;
    *r = s->out[s->next_out++];
    if (r->liveness.ts_us != INT64_MIN || r->n_cells) s->stats.rows++;
    return 1;
}

const st_scan_stats *st_scan_stats_get(const st_scan *s) { return &s->stats; }

void st_scan_set_max_tombstones(st_scan *s, uint64_t max)
{
    if (s) { s->spec.max_tombstones = max; s->spec.max_tombstones_live = 0; }
}

int st_scan_budget_pos(const st_scan *s, int64_t *token, const uint8_t **pk, uint32_t *pk_len,
                       const uint8_t **ck, uint32_t *ck_len)
{
    if (!s || !s->bud_hit) return CS_EINVAL;
    *token = s->ptoken;
    *pk = s->pkey ? s->pkey : (const uint8_t *)"";
    *pk_len = s->pkey_len;
    *ck = s->bud_has_ck ? (s->bud_ck ? s->bud_ck : (const uint8_t *)"") : NULL;
    *ck_len = s->bud_has_ck ? s->bud_ck_len : 0;
    return 0;
}

void st_scan_close(st_scan *s)
{
    if (!s) return;
    release_sources(s);
    cs_arena_destroy(&s->pa);
    cs_arena_destroy(&s->parena);
    if (!s->single) cs_free(s->pkey);    /* single: the key is in keep */
    cs_free(s->cur_key);
    cs_free(s->bud_ck);
    cs_arena k = s->keep;                /* s itself lives in keep */
    cs_arena_destroy(&k);
}
