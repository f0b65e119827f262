/*
 * compaction.c: merging sstables and tombstone purge (what to merge is
 * compaction_pick.c's).
 *
 *   st__compact_background (compaction_pick.c) ─> st__compact_run
 *   st_table_compact (major) ───────────────────> st__compact_run
 *
 * st__compact_run merges the inputs partition by partition (k-way over
 * their sorted indexes; each input is read front to back through a stream
 * of 256 KiB reads, outside the block cache: see "input streams"), applies
 * every deletion to the data it shadows, purges tombstones and expired
 * data older than gc_grace_seconds when nothing outside the compaction
 * that may hold the partition (an sstable, a memtable) could hold older
 * data they shadow (see "purge"), and writes one output (or, for LCS,
 * outputs of lcs_sstable_size_mb).  Outputs record their inputs as
 * ancestors so a crash between publishing the outputs and deleting the
 * inputs is repaired on load.  The swap of inputs for outputs happens under
 * the table lock; readers holding old readers keep them until they unref.
 */
#include "storage/sstable_int.h"
#include "common/alloc.h"
#include "common/err.h"
#include "common/hash.h"
#include "common/log.h"
#include "common/util.h"

#include "common/vfs.h"

#include <fcntl.h>
#include <inttypes.h>
#include <lz4.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---------------------------------------------------------------- purge
 *
 * A tombstone (or expired cell) past gc_grace_seconds is dropped only if
 * nothing outside the compaction may hold older data it shadows, as
 * Cassandra's CompactionController.getPurgeEvaluator decides per
 * partition: the sources that may hold the partition are the other
 * sstables whose token range covers it and whose bloom filter answers
 * yes, and the memtables holding it; its timestamp must be below the
 * smallest min timestamp among them (a memtable gives its own: none is
 * kept per partition).  Checked first against the table-wide bound (every
 * source's min timestamp, max_purgeable), which settles the common cases
 * at no cost; the partition's own bound is worked out only for a tombstone
 * that bound keeps, once per partition. */

/* The sources outside a compaction, referenced, as of t->src_version
 * `version` (src_refresh). */
typedef struct purge_src {
    sst_reader **ssts; int n_ssts;
    mt_memtable **mts; int n_mts;
    uint64_t version;
    bool valid;
} purge_src;

typedef struct purge_ctx {
    int32_t gc_before;        /* tombstones with ldt < this are past gc grace */
    int64_t max_purgeable;    /* table-wide: every source outside has only newer timestamps */
    int32_t now;
    st__rewrite *rw;          /* a single-sstable rewrite's extras (maintenance.c), or NULL */
    st_table *t;              /* the partition's own bound (part_max_purgeable): */
    sst_reader *const *in; int n_in;
    purge_src src;
    int64_t token; const uint8_t *pk; uint32_t pk_len;   /* the partition being purged */
    bool part_known;          /* part_max worked out for it */
    int64_t part_max;
} purge_ctx;

static void src_release(purge_src *s)
{
    for (int i = 0; i < s->n_ssts; i++) sst_reader_unref(s->ssts[i]);
    for (int i = 0; i < s->n_mts; i++) mt_unref(s->mts[i]);
    cs_free(s->ssts);
    cs_free(s->mts);
    memset(s, 0, sizeof *s);
}

/* Take the table's sources outside the inputs: sstables, the memtable and
 * those being flushed (a flushed memtable's sstable is in ssts[] before it
 * leaves flushing[], so one look under t->mu sees everything once).
 * False (nothing taken) without memory. */
static bool src_refresh(purge_ctx *c)
{
    src_release(&c->src);
    st_table *t = c->t;
    purge_src *s = &c->src;
    pthread_mutex_lock(&t->mu);
    s->ssts = cs_malloc(sizeof *s->ssts * (size_t)(t->n_ssts + 1));
    s->mts = cs_malloc(sizeof *s->mts * (size_t)(t->n_flushing + 1));
    if (s->ssts && s->mts) {
        for (int i = 0; i < t->n_ssts; i++) {
            bool is_in = false;
            for (int k = 0; k < c->n_in && !is_in; k++) is_in = c->in[k] == t->ssts[i];
            if (!is_in) { sst_reader_ref(t->ssts[i]); s->ssts[s->n_ssts++] = t->ssts[i]; }
        }
        mt_ref(t->mem);
        s->mts[s->n_mts++] = t->mem;
        for (int i = 0; i < t->n_flushing; i++) { mt_ref(t->flushing[i]); s->mts[s->n_mts++] = t->flushing[i]; }
        s->version = atomic_load(&t->src_version);
        s->valid = true;
    }
    pthread_mutex_unlock(&t->mu);
    if (!s->valid) src_release(s);
    return s->valid;
}

/* The smallest min timestamp among the sources that may hold the current
 * partition (INT64_MAX: none).  Without a view of the sources, the
 * table-wide bound. */
static int64_t part_max_purgeable(purge_ctx *c)
{
    purge_src *s = &c->src;
    if ((!s->valid || s->version != atomic_load(&c->t->src_version)) && !src_refresh(c)) return c->max_purgeable;
    int64_t m = INT64_MAX;
    uint64_t h = 0;
    bool hashed = false;
    for (int i = 0; i < s->n_ssts; i++) {
        const sst_reader *r = s->ssts[i];
        if (r->st.min_ts >= m || r->n_idx == 0) continue;   /* cannot lower it */
        if (c->token < r->st.min_token || c->token > r->st.max_token) continue;
        if (!hashed) { h = sst__bloom_hash(c->pk, c->pk_len); hashed = true; }
        if (sst__bloom_test(r->bloom, r->bloom_bits, r->bloom_k, h)) m = r->st.min_ts;
    }
    for (int i = 0; i < s->n_mts; i++) {
        int64_t mts = atomic_load(&s->mts[i]->min_ts);
        if (mts < m && mt_has_partition(s->mts[i], c->token, c->pk, c->pk_len)) m = mts;
    }
    return m;
}

/* The partition purge_part / compact_wide work on next. */
static void purge_begin(purge_ctx *c, int64_t token, const uint8_t *pk, uint32_t pk_len)
{
    c->token = token;
    c->pk = pk;
    c->pk_len = pk_len;
    c->part_known = false;
}

static bool purgeable(purge_ctx *c, int64_t ts, int32_t ldt)
{
    if (ldt >= c->gc_before) return false;
    if (ts < c->max_purgeable) return true;
    if (!c->part_known) {
        c->part_max = part_max_purgeable(c);
        c->part_known = true;
    }
    return ts < c->part_max;
}

/* Apply deletions to shadowed data and drop purgeable tombstones, in place.
 * Returns true if the row still carries anything. */
static bool purge_row(purge_ctx *c, st__row *r, st_deletion above)
{
    st_deletion eff = above;
    if (r->del.ts_us != INT64_MIN) {
        eff = st__del_max(eff, r->del);   /* applies to this row's data even if purged below */
        if (r->del.ts_us <= above.ts_us || purgeable(c, r->del.ts_us, r->del.ldt_s)) r->del = ST_NO_DELETION;
    }
    if (r->lv.ts_us != INT64_MIN) {
        bool expired = r->lv.ttl_s > 0 && r->lv.ldt_s <= c->now;
        if (r->lv.ts_us <= eff.ts_us || (expired && purgeable(c, r->lv.ts_us, r->lv.ldt_s - r->lv.ttl_s)))
            r->lv.ts_us = INT64_MIN;
    }
    /* Cells first, against every original complex deletion. */
    int n = 0;
    for (int i = 0; i < r->n_cells; i++) {
        st_cell cell = r->cells[i];
        st_deletion d = eff;
        for (int k = 0; k < r->n_cdels; k++)
            if (r->cdels[k].col == cell.col) d = st__del_max(d, r->cdels[k].d);
        if (cell.ts_us <= d.ts_us) continue;
        if (cell.flags & ST_CELL_TOMBSTONE) {
            if (purgeable(c, cell.ts_us, cell.ldt_s)) continue;
        } else if ((cell.flags & ST_CELL_EXPIRING) && cell.ldt_s <= c->now) {
            if (purgeable(c, cell.ts_us, cell.ldt_s - cell.ttl_s)) continue;
        }
        r->cells[n++] = cell;
    }
    r->n_cells = n;
    int nd = 0;
    for (int i = 0; i < r->n_cdels; i++) {
        st__cdel d = r->cdels[i];
        if (d.d.ts_us <= eff.ts_us || purgeable(c, d.d.ts_us, d.d.ldt_s)) continue;
        r->cdels[nd++] = d;
    }
    r->n_cdels = nd;
    return r->lv.ts_us != INT64_MIN || r->del.ts_us != INT64_MIN || r->n_cdels || r->n_cells;
}

/* Returns true if anything of the partition remains. */
static bool purge_part(purge_ctx *c, st__part *p)
{
    st_deletion pdel = p->pdel;
    /* Rows: every original deletion applies; purged tombstones go afterwards. */
    int nr = 0;
    for (int i = 0; i < p->n_rows; i++) {
        st__row *r = p->rows[i];
        st_deletion above = pdel;
        for (int k = 0; k < p->n_rts; k++)
            if (st__rt_covers(&p->rts[k], r->ck, r->ck_len)) above = st__del_max(above, p->rts[k].d);
        if (purge_row(c, r, above)) p->rows[nr++] = r;
    }
    p->n_rows = nr;
    int n = 0;
    for (int i = 0; i < p->n_rts; i++) {
        st__rt rt = p->rts[i];
        if (rt.d.ts_us <= pdel.ts_us || purgeable(c, rt.d.ts_us, rt.d.ldt_s)) continue;
        p->rts[n++] = rt;
    }
    p->n_rts = n;
    if (p->stat && !purge_row(c, p->stat, pdel)) p->stat = NULL;
    if (pdel.ts_us != INT64_MIN && purgeable(c, pdel.ts_us, pdel.ldt_s)) p->pdel = ST_NO_DELETION;
    return p->pdel.ts_us != INT64_MIN || p->n_rts || p->n_rows || p->stat;
}

/* ---------------------------------------------------------------- input streams */

/* Compaction reads each input front to back, so it streams it: compressed
 * blocks come in reads of CIN_READ bytes through the stream's own
 * descriptor (sequential read-ahead hint; the reader's descriptor and its
 * read-ahead state are left to queries), each block's CRC is checked and it
 * is decompressed into a window of logical bytes that moves forward with
 * the requests.  Nothing goes through the block cache, so a compaction
 * neither pays for cache inserts nor evicts the blocks queries use.  A
 * request behind the window (never made by compact_run) falls back to
 * sst__read_range.  Bytes handed out stay valid until the next request on
 * the same stream. */
#define CIN_READ (256u << 10)

typedef struct cin {
    sst_reader *r;
    int fd;                              /* own descriptor, or r->data_fd */
    uint8_t *cbuf; size_t ccap;          /* compressed file bytes [coff, coff + clen) */
    uint64_t coff, clen;
    uint64_t blk;                        /* next block to decompress */
    uint8_t *win; size_t wcap;           /* logical bytes [wlo, whi) */
    uint64_t wlo, whi;
} cin;

static int cin_corrupt(cin *c, const char *what, uint64_t off)
{
    char *p = sst__path(c->r->dir, c->r->gen, "Data.db", false);
    int rc = CS_CORRUPT(what, p ? p : "Data.db", off);
    cs_free(p);
    return rc;
}

static void cin_open(cin *c, sst_reader *r)
{
    memset(c, 0, sizeof *c);
    c->r = r;
    c->fd = -1;
    char *p = sst__path(r->dir, r->gen, "Data.db", false);
    if (p) c->fd = vfs_open(p, O_RDONLY, 0);
    cs_free(p);
    if (c->fd >= 0) (void)posix_fadvise(c->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    else c->fd = -1;
}

static void cin_close(cin *c)
{
    if (c->fd >= 0) vfs_close(c->fd);
    cs_free(c->cbuf);
    cs_free(c->win);
    memset(c, 0, sizeof *c);
}

/* Decompress block c->blk at the end of the window. */
static int cin_block(cin *c)
{
    sst_reader *r = c->r;
    uint64_t bs = r->block_size, b = c->blk;
    if (b >= r->n_chunks) return cin_corrupt(c, "block beyond chunk table", b * bs);
    uint64_t want_len = (b + 1) * bs <= r->logical ? bs : r->logical - b * bs;
    uint64_t off = r->chunks[b], n = r->chunks[b + 1] - off;
    if (r->chunks[b + 1] < off || n < SST_BLOCK_HDR || n > bs * 2 + 64 + SST_BLOCK_HDR) return cin_corrupt(c, "bad block length", off);
    if (off < c->coff || off + n > c->coff + c->clen) {
        uint64_t end = r->chunks[r->n_chunks];
        uint64_t want = n > CIN_READ ? n : CIN_READ;
        if (end > off && off + want > end) want = end - off < n ? n : end - off;
        if (want > c->ccap) {
            uint8_t *nb = cs_realloc(c->cbuf, (size_t)want);
            if (!nb) return CS_ENOMEM;
            c->cbuf = nb;
            c->ccap = (size_t)want;
        }
        ssize_t got = vfs_pread(c->fd >= 0 ? c->fd : r->data_fd, c->cbuf, (size_t)want, off);
        if (got < 0) { c->clen = 0; return (int)got; }
        c->coff = off;
        c->clen = (uint64_t)got;
        if ((uint64_t)got < n) { c->clen = 0; return cin_corrupt(c, "truncated block", off); }
    }
    const uint8_t *cb = c->cbuf + (off - c->coff);
    uint32_t clen = cs_be32(cb), raw = cs_be32(cb + 4), crc = cs_be32(cb + 8);
    bool stored = clen & SST_RAW_FLAG;
    clen &= ~SST_RAW_FLAG;
    if ((uint64_t)clen + SST_BLOCK_HDR != n || raw != want_len) return cin_corrupt(c, "bad block header", off);
    if (cs_crc32c(0, cb + SST_BLOCK_HDR, clen) != crc) return cin_corrupt(c, "block checksum mismatch", off);
    size_t have = (size_t)(c->whi - c->wlo);
    if (have + raw > c->wcap) {
        size_t nc = c->wcap ? c->wcap : 64 * 1024;
        while (nc < have + raw) nc *= 2;
        uint8_t *nw = cs_realloc(c->win, nc);
        if (!nw) return CS_ENOMEM;
        c->win = nw;
        c->wcap = nc;
    }
    uint8_t *dst = c->win + have;
    if (stored) {
        if (clen != raw) return cin_corrupt(c, "bad stored block", off);
        memcpy(dst, cb + SST_BLOCK_HDR, raw);
    } else {
        int d = LZ4_decompress_safe((const char *)cb + SST_BLOCK_HDR, (char *)dst, (int)clen, (int)raw);
        if (d < 0 || (uint32_t)d != raw) return cin_corrupt(c, "lz4 decompression failed", off);
    }
    atomic_fetch_add(&c->r->blocks_read, 1);
    c->whi += raw;
    c->blk++;
    return 0;
}

/* Logical bytes [pos, pos + len) of the input's data. */
static int cin_get(cin *c, uint64_t pos, uint64_t len, cs_arena *a, const uint8_t **out)
{
    *out = NULL;
    if (len == 0) { *out = (const uint8_t *)""; return 0; }
    sst_reader *r = c->r;
    if (pos + len > r->logical || pos + len < pos) return cin_corrupt(c, "read past logical end", pos);
    if (pos < c->wlo) return sst__read_range(r, pos, len, a, out);
    if (pos >= c->whi) {
        c->blk = pos / r->block_size;
        c->wlo = c->whi = c->blk * r->block_size;
    } else if (pos > c->wlo) {
        memmove(c->win, c->win + (pos - c->wlo), (size_t)(c->whi - pos));
        c->wlo = pos;
    }
    while (c->whi < pos + len) {
        int rc = cin_block(c);
        if (rc) { c->wlo = c->whi = 0; c->blk = 0; return rc; }
    }
    *out = c->win + (pos - c->wlo);
    return 0;
}

/* Decode rows from rd into p: those inside sl if given (rows past its end
 * stop the loop), all otherwise. */
static int cin_rows(cin *c, cs_rd *rd, const st_slice *sl, st__part *p, cs_arena *a, uint64_t base)
{
    const uint8_t *prev = NULL;
    uint32_t prev_len = 0;
    bool any = false;
    while (cs_rd_left(rd)) {
        uint8_t f = cs_rd_u8(rd);
        if (f == 0) break;
        st__row *row = cs_arena_alloc(a, sizeof *row);
        if (!row) return CS_ENOMEM;
        int rc = sst__decode_row(rd, f, row, a);
        if (rc == CS_ENOMEM) return rc;
        if (rc) return cin_corrupt(c, "bad row", base + rd->pos);
        if (any && st__bytes_cmp(prev, prev_len, row->ck, row->ck_len) >= 0) return cin_corrupt(c, "rows out of order", base + rd->pos);
        any = true;
        prev = row->ck;
        prev_len = row->ck_len;
        if (sl) {
            if (!st__before_end(row->ck, row->ck_len, sl->end.key, sl->end.len, sl->end.inclusive)) break;
            if (!st__after_start(row->ck, row->ck_len, sl->start.key, sl->start.len, sl->start.inclusive)) continue;
        }
        if (st__part_add_row(p, row, a)) return CS_ENOMEM;
    }
    return 0;
}

/* Decode a partition header from bytes (pk checked against index entry e). */
static int cin_header(cin *c, const sst_index_entry *e, cs_rd *rd, st__part *p, cs_arena *a)
{
    int rc = sst__decode_part_header(rd, p, a);
    if (rc == CS_ENOMEM) return rc;
    if (rc || st__bytes_cmp(p->pk, p->pk_len, e->pk, e->pk_len) != 0) return cin_corrupt(c, "bad partition header", e->pos);
    p->token = e->token;
    return 0;
}

/* The whole partition at index entry i (as sst__read_entry with no slice). */
static int cin_read_part(cin *c, uint64_t i, st__part *p, cs_arena *a)
{
    const sst_index_entry *e = &c->r->idx[i];
    const uint8_t *buf;
    int rc = cin_get(c, e->pos, e->len, a, &buf);
    if (rc) return rc;
    cs_rd rd;
    cs_rd_init(&rd, buf, e->len);
    if ((rc = cin_header(c, e, &rd, p, a))) return rc;
    return cin_rows(c, &rd, NULL, p, a, e->pos);
}

/* The header (key, deletion, range tombstones, static row) of the
 * partition at index entry i, copied into a: it outlives later requests. */
static int cin_read_header(cin *c, uint64_t i, st__part *p, cs_arena *a)
{
    const sst_index_entry *e = &c->r->idx[i];
    if (e->hdr_len == 0 || e->hdr_len > e->len) return cin_corrupt(c, "bad partition header length", e->pos);
    const uint8_t *buf;
    int rc = cin_get(c, e->pos, e->hdr_len, a, &buf);
    if (rc) return rc;
    uint8_t *copy = cs_arena_memdup(a, buf, (size_t)e->hdr_len);
    if (!copy) return CS_ENOMEM;
    cs_rd rd;
    cs_rd_init(&rd, copy, e->hdr_len);
    return cin_header(c, e, &rd, p, a);
}

/* A wide partition's rows window by window: the input's row-index runs
 * (validated and kept by the reader), next = first run not yet wholly
 * consumed.  Entries without a row index are one run covering all rows. */
typedef struct cin_wide {
    const sst_ri_run *runs; uint32_t n;
    sst_ri_run whole;
    uint32_t next;
} cin_wide;

static int cin_wide_init(cin *c, uint64_t i, cin_wide *wd)
{
    sst_reader *r = c->r;
    const sst_index_entry *e = &r->idx[i];
    memset(wd, 0, sizeof *wd);
    if (e->n_ri >= 2) {
        sst_pctx ctx;
        const uint8_t *const *k; const uint32_t *l; int nb;
        int rc = sst_partition_known(r, true, i, &ctx, &k, &l, &nb);
        if (rc) return rc;
        const sst_ri *ri = atomic_load_explicit(&r->ri_slots[e->ri_slot], memory_order_acquire);
        if (!ri) return cin_corrupt(c, "row index not loaded", e->pos);
        wd->runs = ri->runs;
        wd->n = ri->n;
        return 0;
    }
    wd->whole.off = e->hdr_len;
    wd->whole.len = e->len - e->hdr_len;
    wd->runs = &wd->whole;
    wd->n = 1;
    return 0;
}

/* Rows of entry i inside window sl (sl->end exclusive, or unbounded). */
static int cin_wide_rows(cin *c, uint64_t i, cin_wide *wd, const st_slice *sl, st__part *p, cs_arena *a)
{
    const sst_index_entry *e = &c->r->idx[i];
    bool whole = wd->runs == &wd->whole, open_end = sl->end.len == 0;
    uint32_t k = wd->next;
    if (k >= wd->n) return 0;
    if (!whole && !open_end && !st__before_end(wd->runs[k].first, wd->runs[k].fl, sl->end.key, sl->end.len, sl->end.inclusive))
        return 0;   /* this input's next rows are all past the window */
    uint32_t j = k;
    while (j + 1 < wd->n && (open_end || st__before_end(wd->runs[j + 1].first, wd->runs[j + 1].fl, sl->end.key, sl->end.len, sl->end.inclusive)))
        j++;
    uint64_t from = wd->runs[k].off, to = wd->runs[j].off + wd->runs[j].len;
    if (from < e->hdr_len || to > e->len || to <= from) return cin_corrupt(c, "bad row index run", e->pos);
    const uint8_t *buf;
    int rc = cin_get(c, e->pos + from, to - from, a, &buf);
    if (rc) return rc;
    cs_rd rd;
    cs_rd_init(&rd, buf, to - from);
    if ((rc = cin_rows(c, &rd, sl, p, a, e->pos + from))) return rc;
    /* Runs wholly before the window's end are done; a straddling one is
     * read again by the next window. */
    if (open_end) wd->next = wd->n;
    else if (!whole)
        while (k <= j && st__before_end(wd->runs[k].last, wd->runs[k].ll, sl->end.key, sl->end.len, sl->end.inclusive)) wd->next = ++k;
    return 0;
}

/* ---------------------------------------------------------------- run */

typedef struct out_set { sst_reader **v; int n, cap; } out_set;

static int out_push(out_set *o, sst_reader *r)
{
    if (o->n == o->cap) {
        int nc = o->cap ? o->cap * 2 : 4;
        sst_reader **n = cs_realloc(o->v, (size_t)nc * sizeof *n);
        if (!n) return CS_ENOMEM;
        o->v = n; o->cap = nc;
    }
    o->v[o->n++] = r;
    return 0;
}

/* The smallest timestamp any source outside the inputs may hold. */
static int64_t max_purgeable(st_table *t, sst_reader **in, int n)
{
    int64_t m = INT64_MAX;
    pthread_mutex_lock(&t->mu);
    for (int i = 0; i < t->n_ssts; i++) {
        bool is_in = false;
        for (int k = 0; k < n && !is_in; k++) is_in = in[k] == t->ssts[i];
        if (!is_in && t->ssts[i]->st.min_ts < m) m = t->ssts[i]->st.min_ts;
    }
    if (t->mem->min_ts < m) m = t->mem->min_ts;
    for (int i = 0; i < t->n_flushing; i++) if (t->flushing[i]->min_ts < m) m = t->flushing[i]->min_ts;
    pthread_mutex_unlock(&t->mu);
    return m;
}

/* Open the output writer if not yet open. */
static int open_writer(st_table *t, sst_writer **w, const uint64_t *gens, int n, uint64_t keys)
{
    if (*w) return 0;
    pthread_mutex_lock(&t->mu);
    uint64_t g = t->next_gen++;
    pthread_mutex_unlock(&t->mu);
    int rc = sst_writer_open(t->dir, g, t->opts.bloom_fp_chance, keys, w);
    if (!rc) sst_writer_set_ancestors(*w, gens, n);
    if (!rc) sst_writer_warm_cache(*w);   /* reads of the output start warm */
    return rc;
}

/* Partitions with at least this many bytes (over the inputs) are merged and
 * written window by window instead of whole. */
#define WIDE_STREAM_BYTES (1u << 20)
/* Read windows: every WIDE_WINDOW_STEP-th row-index window boundary (~1 MiB). */
#define WIDE_WINDOW_STEP 16

/* Merge the partition present at pos[i] of the inputs flagged in
 * has[], window by window: the merged header (deletion, range tombstones,
 * static row) first, then the rows of each ~1 MiB clustering window, read
 * from every input, merged, purged and appended to the output, so memory
 * stays bounded whatever the partition's size.  The windows are the row
 * index of the input with the most runs.  Nothing is written if nothing
 * survives the purge. */
static int compact_wide(st_table *t, purge_ctx *pc, sst_reader **in, cin *cins, int n, const uint64_t *pos,
                        const bool *has, sst_writer **w, const uint64_t *gens, uint64_t keys)
{
    cs_arena ha;
    cs_arena_init(&ha);
    int rc = 0, np = 0;
    bool begun = false;
    st__part **parts = cs_arena_alloc(&ha, sizeof(st__part *) * (size_t)n);
    st__part **hdr = cs_arena_zalloc(&ha, sizeof(st__part *) * (size_t)n);   /* each input's header */
    cin_wide *wd = cs_arena_zalloc(&ha, sizeof(cin_wide) * (size_t)n);
    const uint8_t *const *bk = NULL; const uint32_t *bl = NULL; int nb = 0;
    if (!parts || !hdr || !wd) rc = CS_ENOMEM;
    for (int i = 0; i < n && !rc; i++) {
        if (!has[i]) continue;
        st__part *p = cs_arena_zalloc(&ha, sizeof *p);
        if (!p) { rc = CS_ENOMEM; break; }
        if ((rc = cin_read_header(&cins[i], pos[i], p, &ha))) break;
        hdr[i] = p;
        parts[np] = cs_arena_alloc(&ha, sizeof *p);
        if (!parts[np]) { rc = CS_ENOMEM; break; }
        *parts[np++] = *p;   /* the merge may rearrange its inputs: hdr[] stays as read */
        sst_pctx ctx;
        const uint8_t *const *k2; const uint32_t *l2; int n2;
        if ((rc = sst_partition_known(in[i], true, pos[i], &ctx, &k2, &l2, &n2))) break;
        if (n2 > nb) { bk = k2; bl = l2; nb = n2; }
        if ((rc = cin_wide_init(&cins[i], pos[i], &wd[i]))) break;
    }
    st__part hm, hp;
    if (!rc) rc = st__part_merge(parts, np, &hm, &ha);
    int nw = nb / WIDE_WINDOW_STEP + 1;
    /* garbagecollect: the key's own purge limit, for this partition only
     * (pc itself, not a copy: it owns the purge sources part_max_purgeable
     * takes references on) */
    int64_t table_max = pc->max_purgeable;
    if (!rc && pc->rw) {   /* garbagecollect: the header against the others' (with the first window's rows) */
        st_slice sl0 = { { NULL, 0, true }, nw == 1 ? (st_bound){ NULL, 0, true }
                                                    : (st_bound){ bk[WIDE_WINDOW_STEP - 1], bl[WIDE_WINDOW_STEP - 1], false } };
        rc = st__rewrite_shadow(pc->rw, &hm, &sl0, &ha, &pc->max_purgeable);
    }
    bool hdr_left = false;
    if (!rc) {
        /* The header as written: purged on a copy (rows are purged against
         * the original deletions, window by window). */
        hp = hm;
        hp.rows = NULL; hp.n_rows = hp.cap_rows = 0;
        hp.rts = hm.n_rts ? cs_arena_memdup(&ha, hm.rts, sizeof(st__rt) * (size_t)hm.n_rts) : NULL;
        hp.stat = hm.stat ? st__row_copy(hm.stat, &ha) : NULL;
        if ((hm.n_rts && !hp.rts) || (hm.stat && !hp.stat)) rc = CS_ENOMEM;
        else hdr_left = purge_part(pc, &hp);
    }
    for (int wi = 0; wi < nw && !rc; wi++) {
        st_slice sl;
        sl.start = wi == 0 ? (st_bound){ NULL, 0, true }
                           : (st_bound){ bk[wi * WIDE_WINDOW_STEP - 1], bl[wi * WIDE_WINDOW_STEP - 1], true };
        sl.end = wi == nw - 1 ? (st_bound){ NULL, 0, true }
                              : (st_bound){ bk[(wi + 1) * WIDE_WINDOW_STEP - 1], bl[(wi + 1) * WIDE_WINDOW_STEP - 1], false };
        cs_arena wa;
        cs_arena_init(&wa);
        int wn = 0;
        for (int i = 0; i < n && !rc; i++) {
            if (!has[i]) continue;
            /* This input's key and deletions (rows are purged against the
             * original ones) with the window's rows; the static row is
             * written from hp. */
            st__part *p = cs_arena_alloc(&wa, sizeof *p);
            if (!p) { rc = CS_ENOMEM; break; }
            *p = *hdr[i];
            p->rows = NULL; p->n_rows = p->cap_rows = 0;
            p->stat = NULL;
            if (p->n_rts && !(p->rts = cs_arena_memdup(&wa, hdr[i]->rts, sizeof(st__rt) * (size_t)p->n_rts))) { rc = CS_ENOMEM; break; }
            p->cap_rts = p->n_rts;
            rc = cin_wide_rows(&cins[i], pos[i], &wd[i], &sl, p, &wa);
            if (!rc) parts[wn++] = p;
        }
        st__part m;
        if (!rc) rc = st__part_merge(parts, wn, &m, &wa);
        if (!rc && pc->rw) rc = st__rewrite_shadow(pc->rw, &m, &sl, &wa, NULL);
        if (!rc) {
            purge_part(pc, &m);
            if (m.n_rows && !begun) {
                rc = open_writer(t, w, gens, n, keys);
                if (!rc) rc = sst_writer_begin(*w, &hp);
                begun = !rc;
            }
            if (!rc && m.n_rows) rc = sst_writer_rows(*w, m.rows, m.n_rows);
        }
        cs_arena_destroy(&wa);
    }
    if (!rc && !begun && hdr_left) {
        rc = open_writer(t, w, gens, n, keys);
        if (!rc) rc = sst_writer_begin(*w, &hp);
        begun = !rc;
    }
    if (!rc && begun) rc = sst_writer_end(*w);
    cs_arena_destroy(&ha);
    pc->max_purgeable = table_max;
    return rc;
}

#define CMP_ARENA_BYTES (1u << 20)
#define CMP_CHECK_EVERY 64u

/* ---------------------------------------------------------------- throttle */

/* compaction_throughput (storage.h): one schedule for the engine, as
 * Cassandra's single RateLimiter.  Each payment moves cmp_rate_next_ns, the
 * time by which everything read so far is paid for, by bytes / rate; a
 * compaction that finds it in the future sleeps until then.  A schedule
 * more than CMP_RATE_BURST_NS in the past is brought forward to that, so
 * an idle spell saves up at most a second of reads (Guava's SmoothBursty). */
#define CMP_RATE_BURST_NS 1000000000ull
#define CMP_RATE_SLICE_NS 100000000ull   /* sleep in slices: a stop (or a new rate) is seen within 0.1 s */

void st_engine_set_compaction_throughput(st_engine *e, uint64_t bytes_per_s)
{
    atomic_store(&e->cmp_rate, bytes_per_s);
    pthread_mutex_lock(&e->cmp_rate_mu);
    e->cmp_rate_next_ns = 0;   /* a new rate starts afresh */
    pthread_mutex_unlock(&e->cmp_rate_mu);
}

uint64_t st_engine_compaction_throughput(st_engine *e) { return atomic_load(&e->cmp_rate); }

size_t st_engine_max_mutation_bytes(st_engine *e) { return e->cfg.segment_size / 2; }

void st__compaction_throttle(st_engine *e, uint64_t bytes, bool (*stop)(void *arg), void *arg)
{
    uint64_t rate = atomic_load(&e->cmp_rate);
    if (!rate || !bytes) return;
    pthread_mutex_lock(&e->cmp_rate_mu);
    uint64_t now = cs_mono_ns();
    uint64_t base = e->cmp_rate_next_ns + CMP_RATE_BURST_NS < now ? now - CMP_RATE_BURST_NS : e->cmp_rate_next_ns;
    e->cmp_rate_next_ns = base + (uint64_t)((double)bytes * 1e9 / (double)rate);
    uint64_t until = e->cmp_rate_next_ns;
    pthread_mutex_unlock(&e->cmp_rate_mu);
    for (uint64_t t = cs_mono_ns(); t < until; t = cs_mono_ns()) {
        if (stop && stop(arg)) return;
        if (atomic_load(&e->cmp_rate) != rate) return;   /* re-paced by the next payment */
        uint64_t d = until - t < CMP_RATE_SLICE_NS ? until - t : CMP_RATE_SLICE_NS;
        struct timespec ts = { (time_t)(d / 1000000000u), (long)(d % 1000000000u) };
        nanosleep(&ts, NULL);
    }
}

/* Must a compaction of t begun at epoch stop (t truncated, dropped or
 * paused, the engine closing, or nodetool stop)?  Caller holds t->mu. */
static bool cmp_stale_locked(const st_table *t, uint64_t epoch)
{
    return t->epoch != epoch || t->dropped || t->paused > 0 || t->e->closing || t->cmp_stop;
}

/* A compaction stops sleeping in the throttle once it must stop (the
 * check after the sleep then ends it). */
typedef struct cmp_stop { st_table *t; uint64_t epoch; } cmp_stop;

static bool cmp_stopped(void *arg)
{
    cmp_stop *c = arg;
    pthread_mutex_lock(&c->t->mu);
    bool stale = cmp_stale_locked(c->t, c->epoch);
    pthread_mutex_unlock(&c->t->mu);
    return stale;
}

/* Merge inputs into new sstables at `level`, then swap them in.  rw: a
 * single-sstable rewrite (st__compact_rewrite), else NULL.  Stopped by
 * nodetool stop: CS_ECANCELED, nothing swapped. */
static int compact_run_rw(st_table *t, sst_reader **in, int n, int level, uint64_t target_bytes, st__rewrite *rw)
{
    purge_ctx pc;
    memset(&pc, 0, sizeof pc);
    uint64_t t0 = cs_mono_ns();
    pc.now = cs_now_s();
    pc.gc_before = (int32_t)CS_MAX((int64_t)INT32_MIN, (int64_t)pc.now - t->opts.gc_grace_s);
    if (rw && rw->op != ST_OP_GC) pc.gc_before = INT32_MIN;   /* upgradesstables, scrub: nothing purged */
    pc.max_purgeable = max_purgeable(t, in, n);
    pc.rw = rw;
    pc.t = t;
    pc.in = in;
    pc.n_in = n;
    uint64_t total = 0, epoch;
    st_clog_pos cpos = { 0, 0 };
    uint64_t *gens = cs_malloc(sizeof(uint64_t) * (size_t)n);
    uint64_t *pos = cs_calloc((size_t)n, sizeof(uint64_t));
    st__part **parts = cs_malloc(sizeof(st__part *) * (size_t)n);
    bool *has = cs_malloc(sizeof(bool) * (size_t)n);
    cin *cins = cs_calloc((size_t)n, sizeof(cin));
    if (!gens || !pos || !parts || !has || !cins) {
        cs_free(gens); cs_free(pos); cs_free(parts); cs_free(has); cs_free(cins);
        return CS_ENOMEM;
    }
    for (int i = 0; i < n; i++) cin_open(&cins[i], in[i]);
    uint64_t keys = 0, on_disk = 0;
    for (int i = 0; i < n; i++) {
        total += in[i]->logical;
        on_disk += in[i]->n_chunks ? in[i]->chunks[in[i]->n_chunks] : in[i]->logical;
        keys += in[i]->n_idx;
        gens[i] = in[i]->gen;
        if (st__pos_cmp(in[i]->st.clog_pos, cpos) > 0) cpos = in[i]->st.clog_pos;
    }
    pthread_mutex_lock(&t->mu);
    epoch = t->epoch;
    t->compact_running = 1;
    t->cmp_op = rw ? rw->op : ST_OP_COMPACTION;
    t->cmp_stop = false;
    t->cmp_done = 0;
    t->cmp_total = total;
    pthread_mutex_unlock(&t->mu);
    out_set out = { 0 };
    sst_writer *w = NULL;
    int rc = 0;
    uint64_t done = 0;
    /* Partitions share one arena until it holds CMP_ARENA_BYTES (each is
     * written before the next is read); progress and staleness are
     * checked every CMP_CHECK_EVERY partitions. */
    cs_arena a;
    cs_arena_init(&a);
    unsigned since_check = 0;
    /* The throttle is paid in bytes read from disk (compressed): the
     * partitions' logical bytes times the inputs' compression ratio. */
    double ratio = total ? (double)on_disk / (double)total : 1.0;
    uint64_t paid = 0;
    cmp_stop stop = { t, epoch };
    for (;;) {
        /* Smallest key among the inputs' cursors, and which inputs hold it. */
        int first = -1;
        const sst_index_entry *key = NULL;
        for (int i = 0; i < n; i++) {
            has[i] = false;
            if (pos[i] >= in[i]->n_idx) continue;
            const sst_index_entry *e = &in[i]->idx[pos[i]];
            int c = first < 0 ? -1 : st__key_cmp(e->token, e->pk, e->pk_len, key->token, key->pk, key->pk_len);
            if (c < 0) {
                for (int k = 0; k < i; k++) has[k] = false;
                first = i;
                key = e;
            }
            if (c <= 0) has[i] = true;
        }
        if (first < 0) break;
        purge_begin(&pc, key->token, key->pk, key->pk_len);
        /* A wide partition is streamed window by window (compact_wide). */
        uint64_t plen = 0;
        bool any_ri = false;
        for (int i = 0; i < n; i++) {
            if (!has[i]) continue;
            plen += in[i]->idx[pos[i]].len;
            any_ri |= in[i]->idx[pos[i]].n_ri >= 2;
        }
        if (any_ri && plen >= WIDE_STREAM_BYTES && !(rw && rw->op == ST_OP_SCRUB)) {   /* scrub: whole, to skip it */
            rc = compact_wide(t, &pc, in, cins, n, pos, has, &w, gens, keys);
            for (int i = 0; i < n; i++)
                if (has[i]) { done += in[i]->idx[pos[i]].len; pos[i]++; }
            since_check = CMP_CHECK_EVERY;
        } else {
            int np = 0;
            for (int i = 0; i < n && !rc; i++) {
                if (!has[i]) continue;
                st__part *p = cs_arena_zalloc(&a, sizeof *p);
                if (!p) { rc = CS_ENOMEM; break; }
                rc = cin_read_part(&cins[i], pos[i], p, &a);
                if (rc && rc != CS_ENOMEM && rw && rw->op == ST_OP_SCRUB && !rw->fail_corrupt) {
                    CS_WARN("storage: scrub of %s.%s drops the unreadable partition at %" PRIu64 " of sstable %" PRIu64
                            " (%s)", t->ks, t->name, in[i]->idx[pos[i]].pos, in[i]->gen, cs_strerror(rc));
                    rw->dropped++;
                    rc = 0;
                } else if (!rc) {
                    parts[np++] = p;
                }
                done += in[i]->idx[pos[i]].len;
                pos[i]++;
            }
            st__part m;
            /* garbagecollect: the key's own purge limit, for this partition
             * only (in pc itself: it owns the purge sources) */
            int64_t table_max = pc.max_purgeable;
            if (!rc) rc = st__part_merge(parts, np, &m, &a);
            if (!rc && rw && np) rc = st__rewrite_shadow(rw, &m, NULL, &a, &pc.max_purgeable);
            if (!rc && purge_part(&pc, &m)) {
                rc = open_writer(t, &w, gens, n, keys);
                if (!rc) rc = sst_writer_add(w, &m);
            }
            pc.max_purgeable = table_max;
            if (a.used >= CMP_ARENA_BYTES) cs_arena_reset(&a);
            since_check++;
        }
        if (!rc && w && target_bytes && sst_writer_bytes(w) >= target_bytes) {
            sst_reader *r;
            rc = sst_writer_finish(w, cpos, level, &r);
            w = NULL;
            if (!rc && (rc = out_push(&out, r))) sst_reader_unref(r);
        }
        if (rc) break;
        if (since_check >= CMP_CHECK_EVERY) {
            since_check = 0;
            st__compaction_throttle(t->e, (uint64_t)((double)(done - paid) * ratio), cmp_stopped, &stop);
            paid = done;
            pthread_mutex_lock(&t->mu);
            t->cmp_done = done;
            bool stale = cmp_stale_locked(t, epoch), stopped = t->cmp_stop;
            /* Writes since the start may carry old timestamps: the
             * table-wide bound follows the memtables down. */
            int64_t mm = atomic_load(&t->mem->min_ts);
            for (int i = 0; i < t->n_flushing; i++) mm = CS_MIN(mm, atomic_load(&t->flushing[i]->min_ts));
            pc.max_purgeable = CS_MIN(pc.max_purgeable, mm);
            pthread_mutex_unlock(&t->mu);
            /* The sources changed (a flush): let go of them (a flushed
             * memtable is freed), to be taken again when next needed. */
            if (pc.src.valid && pc.src.version != atomic_load(&t->src_version)) src_release(&pc.src);
            if (stale) { rc = stopped ? CS_ECANCELED : CS_EAGAIN; break; }
        }
    }
    cs_arena_destroy(&a);
    src_release(&pc.src);
    if (w) {
        if (rc) sst_writer_abort(w);
        else {
            sst_reader *r;
            rc = sst_writer_finish(w, cpos, level, &r);
            if (!rc && (rc = out_push(&out, r))) sst_reader_unref(r);
        }
    }
    int n_out = out.n;
    st_clog_pos floor_pos = { 0, 0 };
    pthread_mutex_lock(&t->mu);
    t->compact_running = 0;
    t->cmp_op = 0;
    t->cmp_stop = false;
    if (!rc && t->epoch != epoch) rc = CS_EAGAIN;
    if (!rc) {
        /* Swap: remove inputs, add outputs. */
        int j = 0;
        for (int i = 0; i < t->n_ssts; i++) {
            bool is_in = false;
            for (int k = 0; k < n && !is_in; k++) is_in = in[k] == t->ssts[i];
            if (!is_in) t->ssts[j++] = t->ssts[i];
        }
        t->n_ssts = j;
        int need = t->n_ssts + out.n;
        if (need > t->cap_ssts) {
            sst_reader **nv = cs_realloc(t->ssts, sizeof *nv * (size_t)need);
            if (nv) { t->ssts = nv; t->cap_ssts = need; }
        }
        if (need <= t->cap_ssts) {
            if (out.n == 0 && cpos.segment) floor_pos = cpos;
            for (int i = 0; i < out.n; i++) t->ssts[t->n_ssts++] = out.v[i];
            out.n = 0;
            for (int i = 0; i < n; i++) { sst__mark_obsolete(in[i]); sst_reader_unref(in[i]); }
            t->src_version++;
            t->bytes_compacted += total;
            t->compactions_done++;
        } else {
            /* Could not grow: put inputs back (they are still referenced by in[]). */
            for (int i = 0; i < n; i++) t->ssts[t->n_ssts++] = in[i];
            rc = CS_ENOMEM;
        }
    }
    pthread_mutex_unlock(&t->mu);
    /* Everything was purged: keep the inputs' commit log position on disk. */
    if (floor_pos.segment) st__save_replay_floor(t, floor_pos);
    for (int i = 0; i < n; i++) atomic_store(&in[i]->compacting, false);
    for (int i = 0; i < out.n; i++) { sst__mark_obsolete(out.v[i]); sst_reader_unref(out.v[i]); }
    cs_free(out.v);
    for (int i = 0; i < n; i++) cin_close(&cins[i]);
    cs_free(cins);
    cs_free(gens); cs_free(pos); cs_free(parts); cs_free(has);
    CS_DEBUG("storage: compacted %d sstables of %s.%s (%" PRIu64 " bytes) into %d at level %d in %.1f ms", n, t->ks,
             t->name, total, n_out, level, (double)(cs_mono_ns() - t0) / 1e6);
    if (rc == CS_ECANCELED) CS_INFO("storage: compaction of %s.%s stopped (nodetool stop)", t->ks, t->name);
    else if (rc && rc != CS_EAGAIN) CS_ERROR("storage: compaction of %s.%s failed: %s", t->ks, t->name, cs_strerror(rc));
    return rc == CS_EAGAIN ? 0 : rc;
}

/* Merge inputs into new sstables at `level`, then swap them in (sstable_int.h). */
int st__compact_run(st_table *t, sst_reader **in, int n, int level, uint64_t target_bytes)
{
    return compact_run_rw(t, in, n, level, target_bytes, NULL);
}

int st__compact_rewrite(st_table *t, sst_reader *in, st__rewrite *rw)
{
    return compact_run_rw(t, &in, 1, in->st.level, 0, rw);
}

/* ---------------------------------------------------------------- major */

/* Major compaction: everything into one sstable (LCS: into level 1, split). */
int st_table_compact(st_table *t)
{
    if (!t) return CS_EINVAL;
    pthread_mutex_lock(&t->mu);
    /* Not during a truncate/drop (paused): its swap of the sstable set would
     * race the choice of inputs below (st_table_pin: t may be dropped). */
    if (!t->dropped && (t->compacting || t->paused > 0)) {   /* background compaction: normal priority */
        st__bg_urgent(t->e, 1, +1);
        while (!t->dropped && (t->compacting || t->paused > 0)) pthread_cond_wait(&t->cv, &t->mu);
        st__bg_urgent(t->e, 1, -1);
    }
    if (t->dropped) { pthread_mutex_unlock(&t->mu); return 0; }
    t->compacting = true;
    int n = t->n_ssts;
    sst_reader **v = cs_malloc(sizeof *v * (size_t)(n + 1));
    if (v) for (int i = 0; i < n; i++) { v[i] = t->ssts[i]; sst_reader_ref(v[i]); atomic_store(&v[i]->compacting, true); }
    bool lcs = t->opts.compaction == ST_COMPACT_LCS;
    uint64_t target = lcs ? (uint64_t)(t->opts.lcs_sstable_size_mb > 0 ? t->opts.lcs_sstable_size_mb : 160) << 20 : 0;
    pthread_mutex_unlock(&t->mu);
    int rc = v ? 0 : CS_ENOMEM;
    if (v && n > 0) rc = st__compact_run(t, v, n, lcs ? 1 : 0, target);
    for (int i = 0; v && i < n; i++) sst_reader_unref(v[i]);
    cs_free(v);
    pthread_mutex_lock(&t->mu);
    t->compacting = false;
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
    return rc;
}
