/*
 * test_storage_model.c: randomized model test of the whole engine.
 *
 * Random mutations (cells, TTLs, row markers, row/range/partition/complex
 * deletions, static cells) go both to the engine and to a tiny model that
 * keeps every operation and computes the expected live rows from scratch.
 * Between mutations the test randomly flushes, compacts, and reopens the
 * engine (close + open + replay).  Every read (full ring scans and
 * single-partition slices, forward and reversed) must agree with the model.
 * Configurations vary memtable size, segment size and compaction strategy.
 * The seed is printed; set CS_SEED to reproduce.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STORAGE_FIXTURE_TAG "st_model"
#define STORAGE_FIXTURE_TID { 9, 9, 9, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 }
#include "test_storage_fixture.h"

enum { M_CELL, M_LV, M_ROWDEL, M_RT, M_PDEL, M_CDEL };
#define NPK 6
#define NC 4      /* clustering components 0..NC-1, two components */
#define MAXOPS 4000

typedef struct bnd { uint8_t k[2]; int len; bool incl; } bnd;
typedef struct mop {
    int kind, pk;
    uint8_t ck[2]; bool stat;
    uint32_t col; uint8_t path; bool has_path;
    int64_t ts; int32_t ttl, ldt; uint8_t flags;
    uint32_t val;
    bnd s, e;
} mop;

static mop g_ops[MAXOPS];
static int g_nops;
static int32_t NOW;
static unsigned g_seed, g_seed0;
/* Expiring data is either already expired at NOW (ttl 10, written 15 s
 * before NOW) or live for an hour.  Reads use the fixed NOW, but compaction
 * and purging use the real clock: data that expired a few seconds after NOW
 * turned into tombstones (and, with gc_grace 0, vanished) whenever a
 * configuration ran longer than that on a loaded machine, and the model,
 * still at NOW, disagreed (a rare "static flag" failure). */
#define LIVE_TTL 3605
static int g_cfgno, g_step;
static bool g_increasing;
static int64_t g_ts;
static uint32_t g_pad;               /* extra value bytes, to make wide partitions */
static uint8_t g_vbuf[8192];

static unsigned rnd(unsigned n) { return (unsigned)(rand_r(&g_seed) % n); }

/* ---------------------------------------------------------------- model */

static bool m_after_start(const uint8_t *ck, int n, const bnd *b)
{
    if (b->len == 0) return true;
    int m = n < b->len ? n : b->len;
    int c = memcmp(ck, b->k, (size_t)m);
    if (c == 0) c = n < b->len ? -1 : n > b->len ? 1 : 0;
    return b->incl ? c >= 0 : c > 0;
}

static bool m_before_end(const uint8_t *ck, int n, const bnd *b)
{
    if (b->len == 0) return true;
    int m = n < b->len ? n : b->len;
    int c = memcmp(ck, b->k, (size_t)m);
    if (c == 0) c = n < b->len ? -1 : n > b->len ? 1 : 0;
    return b->incl ? c <= 0 : c < 0;
}

typedef struct mdel { int64_t ts; int32_t ldt; } mdel;
static mdel dmax(mdel a, int64_t ts, int32_t ldt)
{
    if (ts > a.ts || (ts == a.ts && ldt > a.ldt)) { a.ts = ts; a.ldt = ldt; }
    return a;
}

static int32_t m_ldt(const mop *c) { return (c->flags & (ST_CELL_TOMBSTONE | ST_CELL_EXPIRING)) ? c->ldt : INT32_MAX; }

/* Independent re-statement of Cells.reconcile for the model. */
static const mop *m_win(const mop *a, const mop *b)
{
    if (!a) return b;
    if (a->ts != b->ts) return a->ts > b->ts ? a : b;
    bool ad = m_ldt(a) != INT32_MAX, bd = m_ldt(b) != INT32_MAX;   /* tombstone or expiring */
    if (ad != bd) return ad ? a : b;                                 /* CASSANDRA-14592 */
    bool at = a->flags & ST_CELL_TOMBSTONE, bt = b->flags & ST_CELL_TOMBSTONE;
    if (at != bt) return at ? a : b;
    if (ad && m_ldt(a) != m_ldt(b)) return m_ldt(a) > m_ldt(b) ? a : b;
    if (at) return a;
    return a->val >= b->val ? a : b;   /* values are 4-byte big-endian: memcmp == numeric */
}

static const mop *m_lv_win(const mop *a, const mop *b)
{
    if (!a) return b;
    if (a->ts != b->ts) return a->ts > b->ts ? a : b;
    bool ae = a->ttl > 0, be = b->ttl > 0;
    if (ae != be) return ae ? a : b;
    if (ae && b->ldt > a->ldt) return b;
    return a;
}

typedef struct xcell { uint32_t col; bool has_path; uint8_t path; int64_t ts; uint32_t val; } xcell;
typedef struct xrow { bool stat; uint8_t ck[2]; int64_t lv_ts; xcell cells[16]; int n; } xrow;

/* Expected row for (pk, ck or static): returns true if live. */
static bool m_row(int pk, const uint8_t *ck, bool stat, xrow *out)
{
    memset(out, 0, sizeof *out);
    out->stat = stat;
    if (!stat) memcpy(out->ck, ck, 2);
    mdel d = { INT64_MIN, INT32_MAX };
    for (int i = 0; i < g_nops; i++) {
        const mop *o = &g_ops[i];
        if (o->pk != pk) continue;
        if (o->kind == M_PDEL) d = dmax(d, o->ts, o->ldt);
        if (stat) continue;
        if (o->kind == M_RT && m_after_start(ck, 2, &o->s) && m_before_end(ck, 2, &o->e)) d = dmax(d, o->ts, o->ldt);
        if (o->kind == M_ROWDEL && !o->stat && !memcmp(o->ck, ck, 2)) d = dmax(d, o->ts, o->ldt);
    }
    const mop *lv = NULL;
    for (int i = 0; i < g_nops; i++) {
        const mop *o = &g_ops[i];
        if (o->pk == pk && o->kind == M_LV && !stat && !memcmp(o->ck, ck, 2)) lv = m_lv_win(lv, o);
    }
    bool live = false;
    out->lv_ts = INT64_MIN;
    if (lv && lv->ts > d.ts && (lv->ttl <= 0 || lv->ldt > NOW)) { out->lv_ts = lv->ts; live = true; }
    /* Columns: 1, 2 simple; 3 complex with paths 0..3; 9 static. */
    uint32_t cols[] = { 1, 2, 3, 9 };
    for (int ci = 0; ci < 4; ci++) {
        uint32_t col = cols[ci];
        if ((col == 9) != stat) continue;
        mdel cd = d;
        for (int i = 0; i < g_nops; i++) {
            const mop *o = &g_ops[i];
            if (o->pk == pk && o->kind == M_CDEL && o->col == col && o->stat == stat && (stat || !memcmp(o->ck, ck, 2)))
                cd = dmax(cd, o->ts, o->ldt);
        }
        for (int path = 0; path < (col == 3 ? 4 : 1); path++) {
            const mop *w = NULL;
            for (int i = 0; i < g_nops; i++) {
                const mop *o = &g_ops[i];
                if (o->pk == pk && o->kind == M_CELL && o->col == col && o->stat == stat &&
                    (stat || !memcmp(o->ck, ck, 2)) && (col != 3 || o->path == path))
                    w = m_win(w, o);
            }
            if (!w || w->ts <= cd.ts) continue;
            if (w->flags & ST_CELL_TOMBSTONE) continue;
            if ((w->flags & ST_CELL_EXPIRING) && w->ldt <= NOW) continue;
            xcell *x = &out->cells[out->n++];
            x->col = col; x->has_path = col == 3; x->path = (uint8_t)path; x->ts = w->ts; x->val = w->val;
            live = true;
        }
    }
    return live;
}

/* ---------------------------------------------------------------- engine side */

static st_engine *g_e;
static st_table *g_t;
static st_config g_cfg;
static st_table_opts g_opts;

static uint64_t g_compactions, g_flushed;

static void eng_close(bool flush)
{
    st_table_stats ts;
    st_table_stats_get(g_t, &ts);
    g_compactions += ts.compactions_done;
    g_flushed += ts.bytes_flushed;
    st_engine_close(g_e, flush);
}

static void eng_open(void)
{
    cr_assert_eq(st_engine_open(&g_cfg, &g_e), 0);
    cr_assert_eq(st_table_open(g_e, TID, "ks", "model", &g_opts, &g_t), 0);
    cr_assert_eq(st_engine_replay(g_e, NULL, NULL), 0);
    cr_assert_eq(st_engine_replay_done(g_e), 0);
}

static void pk_bytes(int pk, uint8_t out[4]) { out[0] = 0; out[1] = 0; out[2] = 0; out[3] = (uint8_t)pk; }

static int64_t next_ts(void)
{
    if (g_increasing) return ++g_ts;
    return 1 + (int64_t)rnd(40);
}

static bnd rand_bound(void)
{
    bnd b = { { 0, 0 }, 0, true };
    int r = rnd(5);
    if (r == 0) return b;   /* unbounded */
    b.len = r <= 2 ? 1 : 2;
    b.k[0] = (uint8_t)rnd(NC);
    b.k[1] = (uint8_t)rnd(NC);
    if (b.len == 1 && rnd(2)) { b.len = 2; b.k[1] = 0xFF; }   /* P ++ 0xFF (end-inclusive form) */
    b.incl = rnd(2);
    return b;
}

static void random_mutation(void)
{
    int pk = rnd(NPK);
    uint8_t k[4];
    pk_bytes(pk, k);
    st_mutation *m = st_mutation_new();
    st_mut_partition(m, g_t, k, 4);
    int nops = 1 + rnd(3);
    for (int j = 0; j < nops && g_nops < MAXOPS - 4; j++) {
        mop o;
        memset(&o, 0, sizeof o);
        o.pk = pk;
        o.ts = next_ts();
        o.ldt = NOW - 100 + (int32_t)rnd(3);   /* tombstone ldt; ties possible */
        int r = rnd(100);
        if (r < 3) {
            o.kind = M_PDEL;
            st_mut_partition_delete(m, (st_deletion){ o.ts, o.ldt });
        } else if (r < 10) {
            o.kind = M_RT;
            o.s = rand_bound(); o.e = rand_bound();
            st_mut_range_delete(m, (st_bound){ o.s.k, (uint32_t)o.s.len, o.s.incl },
                                (st_bound){ o.e.k, (uint32_t)o.e.len, o.e.incl }, (st_deletion){ o.ts, o.ldt });
        } else {
            o.stat = rnd(10) == 0;
            o.ck[0] = (uint8_t)rnd(NC); o.ck[1] = (uint8_t)rnd(NC);
            if (o.stat) st_mut_row(m, NULL, 0, ST_ROW_STATIC);
            else st_mut_row(m, o.ck, 2, 0);
            int q = rnd(100);
            if (!o.stat && q < 8) {
                o.kind = M_ROWDEL;
                st_mut_row_delete(m, (st_deletion){ o.ts, o.ldt });
            } else if (!o.stat && q < 30) {
                o.kind = M_LV;
                if (rnd(4) == 0) { o.ttl = rnd(2) ? LIVE_TTL : 10; o.ldt = (o.ttl == 10 ? NOW - 15 : NOW - 5) + o.ttl; } else o.ldt = 0;
                st_mut_row_liveness(m, (st_liveness){ o.ts, o.ttl, o.ldt });
            } else if (!o.stat && q < 36) {
                o.kind = M_CDEL; o.col = 3;
                st_mut_complex_delete(m, 3, (st_deletion){ o.ts, o.ldt });
            } else {
                o.kind = M_CELL;
                o.col = o.stat ? 9 : 1 + rnd(3);
                o.has_path = o.col == 3;
                o.path = (uint8_t)rnd(4);
                o.val = rnd(5);
                int f = rnd(10);
                if (f == 0) { o.flags = ST_CELL_TOMBSTONE; o.val = 0; }
                else if (f <= 2) { o.flags = ST_CELL_EXPIRING; o.ttl = rnd(2) ? LIVE_TTL : 10; o.ldt = (o.ttl == 10 ? NOW - 15 : NOW - 5) + o.ttl; }
                else o.ldt = 0;
                uint8_t *v = g_vbuf;
                v[0] = (uint8_t)(o.val >> 24); v[1] = (uint8_t)(o.val >> 16); v[2] = (uint8_t)(o.val >> 8); v[3] = (uint8_t)o.val;
                memset(v + 4, (int)(o.val * 7 + 1), g_pad);
                st_cell c = { .col = o.col, .flags = o.flags, .ts_us = o.ts, .ttl_s = o.ttl, .ldt_s = o.ldt,
                              .path = o.has_path ? &o.path : NULL, .path_len = o.has_path ? 1 : 0,
                              .val = (o.flags & ST_CELL_TOMBSTONE) ? NULL : v, .val_len = (o.flags & ST_CELL_TOMBSTONE) ? 0 : 4 + g_pad };
                st_mut_cell(m, &c);
            }
        }
        g_ops[g_nops++] = o;
    }
    cr_assert_eq(st_write(g_e, m, NULL), 0);
    st_mutation_free(m);
}

/* Compare one engine row to the model's. */
static void check_row(const st_row_view *r, const xrow *x, int pk)
{
    cr_assert_eq((r->flags & ST_ROW_STATIC) != 0, x->stat, "seed %u cfg %d step %d pk %d: static flag", g_seed0, g_cfgno, g_step, pk);
    if (!x->stat) {
        cr_assert_eq(r->ck_len, 2, "seed %u cfg %d step %d pk %d", g_seed0, g_cfgno, g_step, pk);
        cr_assert(!memcmp(r->ck, x->ck, 2), "seed %u cfg %d step %d pk %d: ck %d,%d vs %d,%d", g_seed0, g_cfgno, g_step, pk, r->ck[0], r->ck[1], x->ck[0], x->ck[1]);
    }
    cr_assert_eq(r->liveness.ts_us, x->lv_ts, "seed %u cfg %d step %d pk %d ck %d,%d: marker ts %lld vs %lld", g_seed0, g_cfgno, g_step, pk,
                 x->ck[0], x->ck[1], (long long)r->liveness.ts_us, (long long)x->lv_ts);
    cr_assert_eq(r->n_cells, x->n, "seed %u cfg %d step %d pk %d ck %d,%d: %d cells vs %d", g_seed0, g_cfgno, g_step, pk, x->ck[0], x->ck[1], r->n_cells, x->n);
    for (int i = 0; i < x->n; i++) {
        const st_cell *c = &r->cells[i];
        cr_assert_eq(c->col, x->cells[i].col, "seed %u cfg %d step %d", g_seed0, g_cfgno, g_step);
        cr_assert_eq(c->path_len, x->cells[i].has_path ? 1u : 0u, "seed %u cfg %d step %d", g_seed0, g_cfgno, g_step);
        if (x->cells[i].has_path) cr_assert_eq(c->path[0], x->cells[i].path, "seed %u cfg %d step %d", g_seed0, g_cfgno, g_step);
        cr_assert_eq(c->ts_us, x->cells[i].ts, "seed %u cfg %d step %d pk %d ck %d,%d col %u: ts %lld vs %lld", g_seed0, g_cfgno, g_step, pk,
                     x->ck[0], x->ck[1], c->col, (long long)c->ts_us, (long long)x->cells[i].ts);
        cr_assert_eq(c->val_len, 4u + g_pad, "seed %u cfg %d step %d", g_seed0, g_cfgno, g_step);
        uint32_t v = ((uint32_t)c->val[0] << 24) | ((uint32_t)c->val[1] << 16) | ((uint32_t)c->val[2] << 8) | c->val[3];
        cr_assert_eq(v, x->cells[i].val, "seed %u cfg %d step %d pk %d: value", g_seed0, g_cfgno, g_step, pk);
    }
}

/* Expected rows of a partition under a slice set, in order. */
static int model_rows(int pk, const bnd (*sl)[2], int nsl, bool reversed, bool with_static, xrow *out)
{
    int n = 0;
    xrow x;
    if (with_static && m_row(pk, NULL, true, &x)) out[n++] = x;
    int start = n;
    for (int a = 0; a < NC; a++)
        for (int b = 0; b < NC; b++) {
            uint8_t ck[2] = { (uint8_t)a, (uint8_t)b };
            bool in = nsl == 0;
            for (int s = 0; s < nsl && !in; s++) in = m_after_start(ck, 2, &sl[s][0]) && m_before_end(ck, 2, &sl[s][1]);
            if (in && m_row(pk, ck, false, &x)) out[n++] = x;
        }
    if (reversed)
        for (int i = start, j = n - 1; i < j; i++, j--) { xrow t = out[i]; out[i] = out[j]; out[j] = t; }
    return n;
}

static void verify_all(void)
{
    /* Full ring scan. */
    st_read_spec rs = { .start_token = INT64_MIN, .end_token = INT64_MAX, .include_static = true, .now_s = NOW };
    st_scan *s;
    cr_assert_eq(st_scan_open(g_t, &rs, &s), 0);
    st_partition_view p;
    bool seen[NPK] = { 0 };
    int64_t prev = INT64_MIN;
    int rc;
    while ((rc = st_scan_next_partition(s, &p)) == 1) {
        cr_assert_eq(p.pk_len, 4);
        int pk = p.pk[3];
        cr_assert(pk < NPK && !seen[pk], "seed %u cfg %d step %d: partition %d twice", g_seed0, g_cfgno, g_step, pk);
        cr_assert_geq(p.token, prev);
        prev = p.token;
        seen[pk] = true;
        xrow exp[NC * NC + 1];
        int ne = model_rows(pk, NULL, 0, false, true, exp);
        cr_assert_gt(ne, 0, "seed %u cfg %d step %d: partition %d returned but model has no live rows", g_seed0, g_cfgno, g_step, pk);
        st_row_view r;
        int i = 0;
        while (st_scan_next_row(s, &r) == 1) {
            cr_assert_lt(i, ne, "seed %u cfg %d step %d pk %d: extra row", g_seed0, g_cfgno, g_step, pk);
            check_row(&r, &exp[i], pk);
            i++;
        }
        cr_assert_eq(i, ne, "seed %u cfg %d step %d pk %d: %d rows vs model %d", g_seed0, g_cfgno, g_step, pk, i, ne);
    }
    cr_assert_eq(rc, 0, "seed %u cfg %d step %d: scan error %d", g_seed0, g_cfgno, g_step, rc);
    st_scan_close(s);
    for (int pk = 0; pk < NPK; pk++) {
        if (seen[pk]) continue;
        xrow exp[NC * NC + 1];
        cr_assert_eq(model_rows(pk, NULL, 0, false, true, exp), 0, "seed %u cfg %d step %d: partition %d missing", g_seed0, g_cfgno, g_step, pk);
    }
    /* Token-range scans from a random key (inclusive or not) to a random token. */
    for (int k = 0; k < 3; k++) {
        int a = rnd(NPK), b = rnd(NPK);
        uint8_t ka[4], kb[4];
        pk_bytes(a, ka); pk_bytes(b, kb);
        int64_t ta = cs_murmur3_token(ka, 4), tb = cs_murmur3_token(kb, 4);
        bool incl = rnd(2);
        st_read_spec q = { .start_token = ta, .start_key = ka, .start_key_len = 4, .start_inclusive = incl,
                           .end_token = tb, .include_static = true, .now_s = NOW };
        cr_assert_eq(st_scan_open(g_t, &q, &s), 0);
        int got = 0;
        while (st_scan_next_partition(s, &p) == 1) {
            int pk = p.pk[3];
            int64_t tp = cs_murmur3_token(p.pk, 4);
            cr_assert(tp > ta || (tp == ta && (pk != a || incl)),
                      "seed %u cfg %d step %d: partition %d before range start", g_seed0, g_cfgno, g_step, pk);
            cr_assert_leq(tp, tb, "seed %u: partition past end token", g_seed0);
            got++;
        }
        st_scan_close(s);
        int want = 0;
        for (int pk = 0; pk < NPK; pk++) {
            uint8_t kk[4];
            pk_bytes(pk, kk);
            int64_t tp = cs_murmur3_token(kk, 4);
            bool in = (tp > ta || (tp == ta && (pk == a ? incl : memcmp(kk, ka, 4) > 0))) && tp <= tb;
            xrow exp[NC * NC + 1];
            if (in && model_rows(pk, NULL, 0, false, true, exp) > 0) want++;
        }
        cr_assert_eq(got, want, "seed %u cfg %d step %d: range scan %d partitions, model %d", g_seed0, g_cfgno, g_step, got, want);
    }
    /* Single-partition slices, forward and reversed. */
    for (int k = 0; k < 4; k++) {
        int pk = rnd(NPK);
        uint8_t key[4];
        pk_bytes(pk, key);
        bnd sl[2][2];
        int nsl = rnd(3);
        if (nsl == 1) { sl[0][0] = rand_bound(); sl[0][1] = rand_bound(); }
        if (nsl == 2) {
            int cut = 1 + rnd(NC - 1);
            sl[0][0] = (bnd){ { 0, 0 }, 0, true };
            sl[0][1] = (bnd){ { (uint8_t)(cut - 1), 0xFF }, 2, true };
            sl[1][0] = (bnd){ { (uint8_t)cut, 0 }, 1, true };
            sl[1][1] = (bnd){ { 0, 0 }, 0, true };
        }
        st_slice ss[2];
        for (int i = 0; i < nsl; i++) {
            ss[i].start = (st_bound){ sl[i][0].k, (uint32_t)sl[i][0].len, sl[i][0].incl };
            ss[i].end = (st_bound){ sl[i][1].k, (uint32_t)sl[i][1].len, sl[i][1].incl };
        }
        bool rev = rnd(2), stat = rnd(2);
        st_read_spec q = { .pk = key, .pk_len = 4, .slices = ss, .n_slices = nsl, .reversed = rev,
                           .include_static = stat, .now_s = NOW };
        cr_assert_eq(st_scan_open(g_t, &q, &s), 0);
        xrow exp[NC * NC + 1];
        int ne = model_rows(pk, (const bnd (*)[2])sl, nsl, rev, stat, exp);
        int got = 0;
        if (st_scan_next_partition(s, &p) == 1) {
            st_row_view r;
            while (st_scan_next_row(s, &r) == 1) {
                cr_assert_lt(got, ne, "seed %u cfg %d step %d pk %d: extra row in slice", g_seed0, g_cfgno, g_step, pk);
                check_row(&r, &exp[got], pk);
                got++;
            }
        }
        cr_assert_eq(got, ne, "seed %u cfg %d step %d pk %d slice(n=%d rev=%d): %d rows vs %d", g_seed0, g_cfgno, g_step, pk, nsl, rev, got, ne);
        st_scan_close(s);
    }
}

static uint32_t g_pad_next;
static void run_config(int strategy, size_t memtable, size_t segment, bool increasing, int steps)
{
    g_pad = g_pad_next;
    fixture_dirs();
    fixture_config(&g_cfg);
    g_cfg.memtable_space = memtable;
    g_cfg.segment_size = segment;
    g_cfg.commitlog_total_space = segment * 4;
    st_table_opts_defaults(&g_opts);
    g_opts.compaction = strategy;
    g_opts.min_threshold = 2;
    g_opts.lcs_sstable_size_mb = 1;
    g_opts.twcs_window_s = 1;
    /* Size tiers, level fanout and single-sstable tombstone compactions
     * (an interval of 0 or 1 s, any threshold, with or without the
     * overlap check) vary too. */
    static const double lows[] = { 0.5, 0.2, 0.9 }, highs[] = { 1.5, 1.2, 4.0 };
    g_opts.bucket_low = lows[rnd(3)];
    g_opts.bucket_high = highs[rnd(3)];
    g_opts.min_sstable_bytes = rnd(2) ? 50ll << 20 : (int64_t)rnd(16384);
    g_opts.lcs_fanout = 2 + (int)rnd(9);
    g_opts.tombstone_threshold = (double)rnd(50) / 100.0;
    g_opts.tombstone_interval_s = rnd(2);
    g_opts.unchecked_tombstone = rnd(2);
    g_opts.tombstone_compactions = rnd(4) != 0;
    g_opts.twcs_expired_check_s = rnd(2) ? 0 : 600;
    g_increasing = increasing;
    g_opts.gc_grace_s = increasing && !getenv("CS_NOGC") ? 0 : 864000;
    g_nops = 0;
    g_compactions = g_flushed = 0;
    g_ts = 0;
    g_cfgno++;
    NOW = cs_now_s();
    eng_open();
    for (int i = 0; i < steps; i++) {
        g_step = i;
        random_mutation();
        int r = rnd(100);
        if (r < 4) cr_assert_eq(st_table_flush(g_t), 0);
        else if (r < 6) cr_assert_eq(st_table_compact(g_t), 0);
        else if (r < 8) { eng_close(rnd(2)); eng_open(); }
        if (i % 25 == 24) verify_all();
    }
    verify_all();
    st_table_stats ts;
    cr_assert_eq(st_table_stats_get(g_t, &ts), 0);
    fprintf(stderr, "  cfg %d: %d ops, %llu sstables, %llu compactions, %llu bytes flushed\n", g_cfgno, g_nops,
            (unsigned long long)ts.sstable_count, (unsigned long long)(ts.compactions_done + g_compactions),
            (unsigned long long)(ts.bytes_flushed + g_flushed));
    st_engine_close(g_e, true);
    eng_open();
    verify_all();
    st_engine_close(g_e, false);
    vfs_rmtree(g_dir);
}

Test(storage_model, random_against_model, .timeout = 120)
{
    const char *env = getenv("CS_SEED");
    unsigned seed = env ? (unsigned)strtoul(env, NULL, 10) : (unsigned)(cs_now_us() & 0x7fffffff);
    fprintf(stderr, "storage model test seed %u (CS_SEED=%u to reproduce)\n", seed, seed);
    g_seed = seed; g_seed0 = seed;
    run_config(ST_COMPACT_STCS, 1 << 20, 1 << 16, false, 300);
    run_config(ST_COMPACT_STCS, 8 << 10, 8 << 10, true, 300);
    run_config(ST_COMPACT_TWCS, 16 << 10, 1 << 14, false, 300);
    run_config(ST_COMPACT_LCS, 8 << 10, 1 << 14, true, 300);
    run_config(ST_COMPACT_LCS, 1 << 20, 1 << 20, false, 300);
    /* Wide partitions (row index, values across blocks): values of 3 KiB. */
    g_pad_next = 3000;
    run_config(ST_COMPACT_STCS, 4 << 20, 1 << 20, false, 400);
    cr_assert_eq(cs_alloc_count(), 0, "leak: %zu allocations", cs_alloc_count());
}
