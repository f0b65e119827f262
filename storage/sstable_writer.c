/*
 * sstable_writer.c: writes one sstable (docs/format/sstable.md).
 *
 * Partitions arrive in (token, key) order.  Each is serialized into a
 * logical byte stream cut into SST_BLOCK_SIZE blocks, each lz4-compressed
 * with a CRC32C; compressed blocks reach the file in writes of 256 KiB, and
 * the writeback of every 8 MiB is started as it goes (sync_file_range), so
 * the fsync at finish is short.  Rows are encoded straight into reserved
 * memory; a memtable row still in its written form, straight from its op
 * bytes ("packed rows" below).  The partition index (with a row index
 * entry every ~4 KiB inside wide partitions), bloom filter and statistics
 * are kept in memory and written at finish (the bloom bits of a key are
 * prefetched and set a few keys later; Index.db's bytes then go to the
 * new sstable's reader instead of being read back).  Every component is written under a tmp- name,
 * fsynced, renamed; the TOC is written last, so an sstable without a TOC is
 * an unfinished one and is deleted on load.
 */
#include "storage/sstable_int.h"
#include "common/alloc.h"
#include "common/err.h"
#include "common/hash.h"
#include "common/log.h"
#include "common/vfs.h"

#include <endian.h>
#include <fcntl.h>
#include <inttypes.h>
#include <lz4.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define SST_WRITE_BUF (256u << 10)      /* compressed blocks go to the file in writes of this size */
#define SST_SYNC_EVERY (8u << 20)        /* start writeback of every 8 MiB written */

#define SST_BLOOM_LAG 16                 /* a key's bloom bits are set 16 keys after they were prefetched */

typedef struct sst_file_hdr { uint8_t b[SST_FILE_HDR]; } sst_file_hdr;
_Static_assert(sizeof(sst_file_hdr) == 16, "sstable file header is 16 bytes");
typedef struct sst_block_hdr { uint8_t b[SST_BLOCK_HDR]; } sst_block_hdr;
_Static_assert(sizeof(sst_block_hdr) == 12, "sstable block header is 12 bytes");

#define SST_DROP_SPOOL 4096              /* distinct drop-time points a writer holds before binning them */

struct sst_writer {
    char *dir;
    uint64_t gen;
    int fd;
    uint64_t file_off;                   /* compressed bytes written (including those still in out) */
    cs_buf out;                          /* compressed blocks not yet written: one pwrite per SST_WRITE_BUF */
    uint64_t synced;                     /* file bytes handed to writeback (sync_file_range) */
    uint8_t *cbuf; size_t ccap;          /* compression scratch, reused for every block */
    cs_buf block;                        /* current uncompressed block */
    uint64_t logical;                    /* logical bytes emitted so far */
    cs_buf chunks;                       /* u64 BE compressed offsets */
    uint64_t n_chunks;
    uint64_t warm_id;                    /* block cache id the reader will have; 0: no warming */
    cs_buf index;                        /* Index.db as it grows: header, then the entries */
    uint64_t n_entries;
    cs_buf part;                         /* current partition bytes */
    cs_buf ri;                           /* current partition's row index */
    /* Current partition (sst_writer_begin .. sst_writer_end): */
    bool in_part;
    uint64_t part_pos;                   /* its logical start */
    uint64_t part_emitted;               /* bytes of it already emitted from part */
    uint64_t hdr_len, n_ri, run_start;   /* run_start: partition-relative offset of the open run */
    bool run_open;
    cs_buf run_first;                    /* first clustering of the open run (copied: rows may be freed) */
    cs_buf last_ck;                      /* clustering of the last row of an sst_writer_rows call (copied) */
    const uint8_t *prev_ck;              /* the last row's clustering: last_ck's bytes, or a packed row's */
    uint32_t prev_ck_len;                /*   (borrowed until sst_writer_end, sst_writer_row_ops) */
    uint64_t part_rows, part_cells;
    int64_t part_token;
    uint8_t *bloom; uint64_t bloom_bits; uint32_t bloom_k;
    uint64_t bloom_m;                    /* UINT64_MAX / bloom_bits + 1 (bloom_start) */
    uint64_t bq_x[SST_BLOOM_LAG], bq_step[SST_BLOOM_LAG]; int bq_n, bq_head;   /* keys whose bits are not set yet */
    sst_stats st;
    /* Exact drop-time points and counts, sorted, folded into st's bins
     * when full and at finish (StreamingTombstoneHistogramBuilder's spool):
     * n items at a point count the same as n single ones. */
    int32_t spool_pt[SST_DROP_SPOOL]; uint64_t spool_n[SST_DROP_SPOOL]; int n_spool, spool_last;
    uint64_t hist_off[SST_SIZE_BUCKETS];  /* the cell histogram uses the first SST_CELL_BUCKETS */
    int hint_size, hint_cells;           /* histogram buckets of the previous partition */
    int err;
    bool first;
    int64_t last_token; cs_buf last_key;
};

char *sst__path(const char *dir, uint64_t gen, const char *comp, bool tmp)
{
    char buf[4200];
    snprintf(buf, sizeof buf, "%s/%scs-%" PRIu64 "-%s", dir, tmp ? "tmp-" : "", gen, comp);
    return cs_strdup(buf);
}

void st_hist_offsets(uint64_t *off, int n)
{
    uint64_t last = 1;
    off[0] = 1;
    for (int i = 1; i < n; i++) {
        uint64_t next = (uint64_t)llround((double)last * 1.2);
        if (next == last) next++;
        off[i] = next;
        last = next;
    }
}

/* The bucket of v among n offsets: the first offset >= v, n past them. */
static int hist_bucket(const uint64_t *off, int n, uint64_t v)
{
    if (v > off[n - 1]) return n;
    int lo = 0, hi = n - 1;
    while (lo < hi) { int mid = (lo + hi) / 2; if (off[mid] >= v) hi = mid; else lo = mid + 1; }
    return lo;
}

/* sst__hist_add with a guess: the bucket of the previous value (partitions
 * of one table are often alike), else the binary search. */
static void hist_add_hint(uint64_t *counts, const uint64_t *off, int n, uint64_t v, int *hint)
{
    int h = *hint;
    if (h < n && off[h] >= v && (h == 0 || off[h - 1] < v)) { counts[h]++; return; }
    h = hist_bucket(off, n, v);
    counts[h]++;
    *hint = h;
}

void sst__hist_add(uint64_t *counts, const uint64_t *off, int n, uint64_t v)
{
    counts[hist_bucket(off, n, v)]++;
}

uint64_t st_hist_min(const uint64_t *counts, const uint64_t *off, int n)
{
    for (int i = 0; i <= n; i++)
        if (counts[i]) return i == 0 ? 0 : off[i - 1] + 1;
    return 0;
}

uint64_t st_hist_max(const uint64_t *counts, const uint64_t *off, int n)
{
    if (counts[n]) return INT64_MAX;
    for (int i = n - 1; i >= 0; i--)
        if (counts[i]) return off[i];
    return 0;
}

uint64_t sst__hist_count(const uint64_t *counts, int n)
{
    uint64_t c = 0;
    for (int i = 0; i <= n; i++) c += counts[i];
    return c;
}

uint64_t sst__hist_mean(const uint64_t *counts, const uint64_t *off, int n)
{
    /* Cassandra throws for an overflowed histogram; here its last bucket
     * is left out (no partition reaches 1.4 TB or 4.1e9 cells in practice) */
    uint64_t elements = 0, sum = 0;
    for (int i = 0; i < n; i++) { elements += counts[i]; sum += counts[i] * off[i]; }
    return elements ? (uint64_t)ceil((double)sum / (double)elements) : 0;
}

uint64_t sst__bloom_hash(const uint8_t *pk, uint32_t n) { return cs_xxh64(pk, n, 0); }

/* Bit i of key hash h: (h1 + i * h2) % nbits (docs/format/sstable.md).
 * h1, h2 < 2^32 and i < 2^32, so h1 + i * h2 never wraps and the bits can
 * be stepped with one conditional subtraction each: two divisions per key
 * instead of k, the same bits. */
typedef struct bloom_it { uint64_t x, step, nbits; } bloom_it;

static inline bloom_it bloom_first(uint64_t h, uint64_t nbits)
{
    uint64_t h1 = h & 0xffffffffu, h2 = (h >> 32) | 1;
    return (bloom_it){ h1 % nbits, h2 % nbits, nbits };
}

static inline uint64_t bloom_next(bloom_it *it)
{
    uint64_t b = it->x;
    it->x += it->step;
    if (it->x >= it->nbits) it->x -= it->nbits;
    return b;
}

/* bloom_first for the writer's filter without its two divisions (one
 * key each partition): x % d for x < 2^32 and 0 < d < 2^32 is
 * ((m * x mod 2^64) * d) >> 64 with m = UINT64_MAX / d + 1 (Lemire, Kaser
 * and Kurz, "Faster remainder by direct computation", 2019); a filter of
 * 2^32 bits or more leaves h1 and h2 (< 2^32) as they are. */
static inline bloom_it bloom_start(const sst_writer *w, uint64_t h)
{
    uint64_t h1 = h & 0xffffffffu, h2 = (h >> 32) | 1, d = w->bloom_bits;
    if (d >> 32) return (bloom_it){ h1, h2, d };
    return (bloom_it){ (uint64_t)(((unsigned __int128)(w->bloom_m * h1) * d) >> 64),
                       (uint64_t)(((unsigned __int128)(w->bloom_m * h2) * d) >> 64), d };
}

/* Set the bits of the queued key at the head. */
static void bloom_set_head(sst_writer *w)
{
    bloom_it it = { w->bq_x[w->bq_head], w->bq_step[w->bq_head], w->bloom_bits };
    for (uint32_t i = 0; i < w->bloom_k; i++) {
        uint64_t bit = bloom_next(&it);
        w->bloom[bit >> 3] |= (uint8_t)(1u << (bit & 7));
    }
    w->bq_head = (w->bq_head + 1) % SST_BLOOM_LAG;
    w->bq_n--;
}

/* Add a key hash to the filter: its bits' bytes are prefetched now and set
 * SST_BLOOM_LAG keys later (a filter bigger than the caches costs a miss
 * per bit otherwise). */
static void bloom_add(sst_writer *w, uint64_t h)
{
    bloom_it it = bloom_start(w, h);
    if (w->bq_n == SST_BLOOM_LAG) bloom_set_head(w);
    int slot = (w->bq_head + w->bq_n) % SST_BLOOM_LAG;
    w->bq_x[slot] = it.x;
    w->bq_step[slot] = it.step;
    w->bq_n++;
    for (uint32_t i = 0; i < w->bloom_k; i++) __builtin_prefetch(&w->bloom[bloom_next(&it) >> 3], 1);
}

static void bloom_drain(sst_writer *w)
{
    while (w->bq_n > 0) bloom_set_head(w);
}

bool sst__bloom_test(const uint8_t *bits, uint64_t nbits, uint32_t k, uint64_t h)
{
    if (nbits == 0) return true;
    bloom_it it = bloom_first(h, nbits);
    for (uint32_t i = 0; i < k; i++) {
        uint64_t b = bloom_next(&it);
        if (!(bits[b >> 3] & (1u << (b & 7)))) return false;
    }
    return true;
}

void sst__bloom_prefetch(const uint8_t *bits, uint64_t nbits, uint32_t k, uint64_t h)
{
    if (nbits == 0) return;
    bloom_it it = bloom_first(h, nbits);
    for (uint32_t i = 0; i < k; i++) __builtin_prefetch(&bits[bloom_next(&it) >> 3]);
}

/* ---------------------------------------------------------------- encoding */

static void put_del(cs_buf *b, st_deletion d) { cs_buf_put_svarint(b, d.ts_us); cs_buf_put_svarint(b, d.ldt_s); }
static void put_bytes(cs_buf *b, const uint8_t *p, uint32_t n) { cs_buf_put_uvarint(b, n); if (n) cs_buf_put(b, p, n); }

/* Varints straight into reserved memory (LEB128; zigzag for signed): the
 * same bytes as cs_buf_put_uvarint/svarint, without a capacity check each. */
static inline uint8_t *wr_uv(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) { *p++ = (uint8_t)(v | 0x80); v >>= 7; }
    *p++ = (uint8_t)v;
    return p;
}

static inline uint8_t *wr_sv(uint8_t *p, int64_t v) { return wr_uv(p, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63)); }

static inline uint8_t *wr_bytes(uint8_t *p, const uint8_t *s, uint32_t n)
{
    p = wr_uv(p, n);
    if (n) { memcpy(p, s, n); p += n; }
    return p;
}

/* One row, encoded in place after a single reserve of its upper bound. */
void sst__encode_row(cs_buf *b, const st__row *r)
{
    size_t max = 1 + 10 + (size_t)r->ck_len + 30 + 20 + 10 + 10 + (size_t)r->n_cdels * 30;
    for (int i = 0; i < r->n_cells; i++) max += 10 + 1 + 30 + 20 + (size_t)r->cells[i].path_len + r->cells[i].val_len;
    if (cs_buf_reserve(b, max)) return;
    uint8_t *p = b->p + b->len;
    uint8_t f = SST_ROW_PRESENT;
    if (r->lv.ts_us != INT64_MIN) f |= SST_ROW_HAS_LV;
    if (r->del.ts_us != INT64_MIN) f |= SST_ROW_HAS_DEL;
    if (r->flags & ST_ROW_STATIC) f |= SST_ROW_IS_STATIC;
    *p++ = f;
    p = wr_bytes(p, r->ck, r->ck_len);
    if (f & SST_ROW_HAS_LV) {
        p = wr_sv(p, r->lv.ts_us);
        p = wr_sv(p, r->lv.ttl_s);
        p = wr_sv(p, r->lv.ldt_s);
    }
    if (f & SST_ROW_HAS_DEL) { p = wr_sv(p, r->del.ts_us); p = wr_sv(p, r->del.ldt_s); }
    p = wr_uv(p, (uint64_t)r->n_cdels);
    for (int i = 0; i < r->n_cdels; i++) {
        p = wr_uv(p, r->cdels[i].col);
        p = wr_sv(p, r->cdels[i].d.ts_us);
        p = wr_sv(p, r->cdels[i].d.ldt_s);
    }
    p = wr_uv(p, (uint64_t)r->n_cells);
    for (int i = 0; i < r->n_cells; i++) {
        const st_cell *c = &r->cells[i];
        p = wr_uv(p, c->col);
        *p++ = c->flags;
        p = wr_sv(p, c->ts_us);
        p = wr_sv(p, c->ttl_s);
        p = wr_sv(p, c->ldt_s);
        p = wr_bytes(p, c->path, c->path_len);
        p = wr_bytes(p, c->val, c->val_len);
    }
    b->len = (size_t)(p - b->p);
}

/* ---------------------------------------------------------------- writer */

/* In writes of at most SST_WRITE_BUF: the kernel (PREEMPT_NONE here) does
 * not preempt a thread inside a system call, so one 11 MB pwrite of a
 * partition index (~4 ms of copying) by a SCHED_IDLE flush held its CPU
 * against the request loop waking there. */
static int write_all(int fd, const void *p, size_t n, uint64_t *off)
{
    for (size_t done = 0; done < n;) {
        size_t k = n - done < SST_WRITE_BUF ? n - done : SST_WRITE_BUF;
        ssize_t w = vfs_pwrite(fd, (const uint8_t *)p + done, k, *off);
        if (w < 0) return (int)w;
        *off += k;
        done += k;
    }
    return 0;
}

static void file_hdr(uint8_t h[SST_FILE_HDR], uint32_t magic, uint32_t param)
{
    cs_st32(h, magic);
    cs_st32(h + 4, SST_VERSION);
    cs_st32(h + 8, param);
    cs_st32(h + 12, 0);
}

int sst_writer_open(const char *dir, uint64_t gen, double fp_chance, uint64_t expected_keys,
                    sst_writer **out)
{
    *out = NULL;
    sst_writer *w = cs_calloc(1, sizeof *w);
    if (!w) return CS_ENOMEM;
    w->dir = cs_strdup(dir);
    w->gen = gen;
    w->fd = -1;
    cs_buf_init(&w->block); cs_buf_init(&w->chunks); cs_buf_init(&w->index); cs_buf_init(&w->out);
    cs_buf_init(&w->part); cs_buf_init(&w->ri); cs_buf_init(&w->last_key); cs_buf_init(&w->run_first); cs_buf_init(&w->last_ck);
    st_hist_offsets(w->hist_off, SST_SIZE_BUCKETS);
    w->st.min_ts = INT64_MAX; w->st.max_ts = INT64_MIN;
    w->st.max_ldt = INT32_MIN;
    w->st.min_token = INT64_MAX; w->st.max_token = INT64_MIN;
    w->first = true;
    if (fp_chance <= 0 || fp_chance >= 1) fp_chance = 0.01;
    if (expected_keys < 1) expected_keys = 1;
    double bits = -(double)expected_keys * log(fp_chance) / (M_LN2 * M_LN2);
    if (bits < 64) bits = 64;
    if (bits > 8.0 * (1u << 30)) bits = 8.0 * (1u << 30);
    w->bloom_bits = ((uint64_t)bits + 7) & ~7ull;
    w->bloom_k = (uint32_t)llround(bits / (double)expected_keys * M_LN2);
    if (w->bloom_k < 1) w->bloom_k = 1;
    if (w->bloom_k > 20) w->bloom_k = 20;
    w->bloom_m = UINT64_MAX / w->bloom_bits + 1;
    w->bloom = cs_calloc(1, w->bloom_bits / 8);
    char *p = sst__path(dir, gen, "Data.db", true);
    if (!w->dir || !w->bloom || !p) { cs_free(p); sst_writer_abort(w); return CS_ENOMEM; }
    w->fd = vfs_open(p, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    cs_free(p);
    if (w->fd < 0) { int rc = w->fd; w->fd = -1; sst_writer_abort(w); return rc; }
    uint8_t h[SST_FILE_HDR];
    file_hdr(h, SST_INDEX_MAGIC, SST_BLOCK_SIZE);
    cs_buf_put(&w->index, h, sizeof h);
    if (w->index.err) { sst_writer_abort(w); return CS_ENOMEM; }
    file_hdr(h, SST_DATA_MAGIC, SST_BLOCK_SIZE);
    int rc = write_all(w->fd, h, sizeof h, &w->file_off);
    if (rc) { sst_writer_abort(w); return rc; }
    *out = w;
    return 0;
}

/* Write the buffered blocks (one pwrite), and every SST_SYNC_EVERY bytes
 * start their writeback (the fsync at finish then has little left to do,
 * and never a burst of a whole sstable's dirty pages behind the commit
 * log's own fsyncs). */
static int write_out(sst_writer *w)
{
    if (w->out.len == 0) return 0;
    uint64_t off = w->file_off - w->out.len;
    int rc = write_all(w->fd, w->out.p, w->out.len, &off);
    cs_buf_reset(&w->out);
    if (rc) return rc;
    uint64_t upto = w->file_off & ~(uint64_t)4095;   /* whole pages only: the next write extends the last one */
    if (upto - w->synced >= SST_SYNC_EVERY) {
        (void)sync_file_range(w->fd, (off64_t)w->synced, (off64_t)(upto - w->synced), SYNC_FILE_RANGE_WRITE);
        w->synced = upto;
    }
    return 0;
}

/* Compress the current block into the output buffer. */
static int flush_block(sst_writer *w)
{
    if (w->block.len == 0) return 0;
    int bound = LZ4_compressBound((int)w->block.len);
    if ((size_t)bound > w->ccap) {
        uint8_t *c = cs_realloc(w->cbuf, (size_t)bound);
        if (!c) return CS_ENOMEM;
        w->cbuf = c;
        w->ccap = (size_t)bound;
    }
    int n = LZ4_compress_default((const char *)w->block.p, (char *)w->cbuf, (int)w->block.len, bound);
    const uint8_t *src = w->cbuf;
    uint32_t clen;
    if (n <= 0 || (size_t)n >= w->block.len) {
        src = w->block.p;
        clen = (uint32_t)w->block.len | SST_RAW_FLAG;
        n = (int)w->block.len;
    } else {
        clen = (uint32_t)n;
    }
    uint8_t h[SST_BLOCK_HDR];
    cs_st32(h, clen);
    cs_st32(h + 4, (uint32_t)w->block.len);
    cs_st32(h + 8, cs_crc32c(0, src, (size_t)n));
    if (w->warm_id) sst__cache_warm(w->warm_id, w->n_chunks, w->block.p, (uint32_t)w->block.len);
    cs_buf_put_u64(&w->chunks, w->file_off);
    w->n_chunks++;
    if (w->chunks.err) return w->chunks.err;
    cs_buf_put(&w->out, h, sizeof h);
    cs_buf_put(&w->out, src, (size_t)n);
    if (w->out.err) return w->out.err;
    w->file_off += (uint64_t)n + SST_BLOCK_HDR;
    cs_buf_reset(&w->block);
    return w->out.len >= SST_WRITE_BUF ? write_out(w) : 0;
}

/* Append logical bytes, cutting blocks at SST_BLOCK_SIZE. */
static int emit(sst_writer *w, const uint8_t *p, size_t n)
{
    while (n) {
        size_t room = SST_BLOCK_SIZE - w->block.len;
        size_t k = n < room ? n : room;
        cs_buf_put(&w->block, p, k);
        if (w->block.err) return w->block.err;
        p += k; n -= k;
        w->logical += k;
        if (w->block.len == SST_BLOCK_SIZE) {
            int rc = flush_block(w);
            if (rc) return rc;
        }
    }
    return 0;
}

static void note_ts(sst_writer *w, int64_t ts)
{
    if (ts == INT64_MIN) return;
    if (ts < w->st.min_ts) w->st.min_ts = ts;
    if (ts > w->st.max_ts) w->st.max_ts = ts;
}

static void note_ldt(sst_writer *w, int32_t ldt)
{
    if (ldt > w->st.max_ldt) w->st.max_ldt = ldt;
}

/* ---------------------------------------------------------------- drop-time histogram */

int32_t sst__drop_point(int32_t ldt)
{
    if (ldt <= 0) return 0;
    int64_t d = ldt % SST_DROP_ROUND_S;
    int64_t p = d ? (int64_t)ldt + SST_DROP_ROUND_S - d : ldt;
    return p > INT32_MAX - 1 ? INT32_MAX - 1 : (int32_t)p;   /* saturatingCastToMaxDeletionTime */
}

void sst__drop_bins_add(sst_stats *s, int32_t pt, uint64_t n)
{
    int lo = 0, hi = s->n_drop;
    while (lo < hi) { int mid = (lo + hi) / 2; if (s->drop_pt[mid] < pt) lo = mid + 1; else hi = mid; }
    if (lo < s->n_drop && s->drop_pt[lo] == pt) { s->drop_cnt[lo] += n; return; }
    memmove(&s->drop_pt[lo + 1], &s->drop_pt[lo], sizeof(int32_t) * (size_t)(s->n_drop - lo));
    memmove(&s->drop_cnt[lo + 1], &s->drop_cnt[lo], sizeof(uint64_t) * (size_t)(s->n_drop - lo));
    s->drop_pt[lo] = pt;
    s->drop_cnt[lo] = n;
    if (++s->n_drop <= SST_DROP_BINS) return;
    /* Full: the first pair of neighbours nearest each other becomes one
     * point at their weighted mean, rounded up (DataHolder.mergeNearestPoints). */
    int k = 0;
    for (int i = 1; i + 1 < s->n_drop; i++)
        if ((int64_t)s->drop_pt[i + 1] - s->drop_pt[i] < (int64_t)s->drop_pt[k + 1] - s->drop_pt[k]) k = i;
    uint64_t v1 = s->drop_cnt[k], v2 = s->drop_cnt[k + 1], sum = v1 + v2;
    double mean = ((double)s->drop_pt[k] * (double)v1 + (double)s->drop_pt[k + 1] * (double)v2) / (double)sum;
    int64_t np = (int64_t)mean;
    if (np > s->drop_pt[k + 1]) np = s->drop_pt[k + 1];
    if (np < s->drop_pt[k]) np = s->drop_pt[k];
    s->drop_pt[k] = sst__drop_point((int32_t)np);
    s->drop_cnt[k] = sum;
    memmove(&s->drop_pt[k + 1], &s->drop_pt[k + 2], sizeof(int32_t) * (size_t)(s->n_drop - k - 2));
    memmove(&s->drop_cnt[k + 1], &s->drop_cnt[k + 2], sizeof(uint64_t) * (size_t)(s->n_drop - k - 2));
    s->n_drop--;
}

double sst__droppable_before(const sst_stats *s, int32_t gc_before)
{
    double sum = 0;
    for (int i = 0; i < s->n_drop; i++) {
        int32_t p = s->drop_pt[i];
        double v = (double)s->drop_cnt[i];
        if (p <= gc_before) { sum += v; continue; }
        if (i == 0) return 0;
        /* The trapezoid between the previous point and this one, up to gc_before. */
        int32_t pp = s->drop_pt[i - 1];
        double pv = (double)s->drop_cnt[i - 1];
        double w = (double)(gc_before - pp) / (double)(p - pp);
        double mb = pv + (v - pv) * w;
        sum -= pv;
        sum += (pv + mb) * w / 2;
        sum += pv / 2.0;
        return sum;
    }
    return sum;
}

double sst__droppable_ratio(const sst_stats *s, int32_t gc_before)
{
    uint64_t off[SST_CELL_BUCKETS];
    st_hist_offsets(off, SST_CELL_BUCKETS);
    uint64_t cells = sst__hist_mean(s->cell_hist, off, SST_CELL_BUCKETS) * sst__hist_count(s->cell_hist, SST_CELL_BUCKETS);
    return cells > 0 ? sst__droppable_before(s, gc_before) / (double)cells : 0.0;
}

/* The spool into the bins, in point order. */
static void spool_fold(sst_writer *w)
{
    for (int i = 0; i < w->n_spool; i++) sst__drop_bins_add(&w->st, w->spool_pt[i], w->spool_n[i]);
    w->n_spool = 0;
    w->spool_last = 0;
}

/* Count n tombstones or TTL'd items at drop-time point pt. */
static void note_drop_n(sst_writer *w, int32_t pt, uint64_t n)
{
    w->st.droppable += n;
    int k = w->spool_last;
    if (k < w->n_spool && w->spool_pt[k] == pt) { w->spool_n[k] += n; return; }
    int lo = 0, hi = w->n_spool;
    while (lo < hi) { int mid = (lo + hi) / 2; if (w->spool_pt[mid] < pt) lo = mid + 1; else hi = mid; }
    if (lo < w->n_spool && w->spool_pt[lo] == pt) { w->spool_n[lo] += n; w->spool_last = lo; return; }
    if (w->n_spool == SST_DROP_SPOOL) { spool_fold(w); lo = 0; }
    memmove(&w->spool_pt[lo + 1], &w->spool_pt[lo], sizeof(int32_t) * (size_t)(w->n_spool - lo));
    memmove(&w->spool_n[lo + 1], &w->spool_n[lo], sizeof(uint64_t) * (size_t)(w->n_spool - lo));
    w->spool_pt[lo] = pt;
    w->spool_n[lo] = n;
    w->n_spool++;
    w->spool_last = lo;
}

/* Count one tombstone or TTL'd item by its local deletion time (every
 * local deletion time MetadataCollector gives its histogram: deletions of
 * every kind, expiring cells and row markers; INT32_MAX is none). */
static void note_drop(sst_writer *w, int32_t ldt)
{
    if (ldt != INT32_MAX) note_drop_n(w, sst__drop_point(ldt), 1);   /* not Cell.NO_DELETION_TIME */
}

static void note_row_stats(sst_writer *w, const st__row *r, uint64_t *cells)
{
    if (r->lv.ts_us != INT64_MIN) {
        note_ts(w, r->lv.ts_us);
        note_ldt(w, r->lv.ttl_s > 0 ? r->lv.ldt_s : INT32_MAX);
        if (r->lv.ttl_s > 0) note_drop(w, r->lv.ldt_s);
    }
    if (r->del.ts_us != INT64_MIN) { note_ts(w, r->del.ts_us); note_ldt(w, r->del.ldt_s); w->st.tombstones++; note_drop(w, r->del.ldt_s); }
    for (int i = 0; i < r->n_cdels; i++) {
        note_ts(w, r->cdels[i].d.ts_us); note_ldt(w, r->cdels[i].d.ldt_s); w->st.tombstones++; note_drop(w, r->cdels[i].d.ldt_s);
    }
    for (int i = 0; i < r->n_cells; i++) {
        const st_cell *c = &r->cells[i];
        note_ts(w, c->ts_us);
        if (c->flags & (ST_CELL_TOMBSTONE | ST_CELL_EXPIRING)) {
            note_ldt(w, c->ldt_s);
            w->st.tombstones += (c->flags & ST_CELL_TOMBSTONE) ? 1 : 0;
            note_drop(w, c->ldt_s);
        } else {
            note_ldt(w, INT32_MAX);
        }
    }
    *cells += (uint64_t)r->n_cells;
}

/* Clustering bounds: min is a (possibly truncated) lower bound; max is the
 * largest clustering or, when truncated, a prefix of it. */
static void note_ck(sst_writer *w, const uint8_t *ck, uint32_t ck_len)
{
    /* no clustering (a table without clustering columns): bounds stay */
    if (ck_len == 0 && w->st.ck_bounds && w->st.min_ck_len == 0) return;
    uint32_t n = ck_len < 256 ? ck_len : 256;
    if (!w->st.ck_bounds || st__bytes_cmp(ck, n, w->st.min_ck, w->st.min_ck_len) < 0) {
        if (n) memcpy(w->st.min_ck, ck, n);
        w->st.min_ck_len = n;
    }
    if (!w->st.ck_bounds || st__bytes_cmp(ck, ck_len, w->st.max_ck, w->st.max_ck_len) > 0) {
        if (n) memcpy(w->st.max_ck, ck, n);
        w->st.max_ck_len = n;
        w->st.max_ck_truncated = ck_len > 256;
    }
    w->st.ck_bounds = true;
}

/* Start partition p (its key, deletion, range tombstones and static row;
 * p's rows are ignored): rows follow with sst_writer_rows, then
 * sst_writer_end.  Partitions must come in (token, key) order.  A partition
 * is emitted as it grows, so a huge one never sits whole in memory. */
int sst_writer_begin(sst_writer *w, const st__part *p)
{
    if (w->err) return w->err;
    if (w->in_part) return w->err = CS_EINVAL;
    if (!w->first && st__key_cmp(p->token, p->pk, p->pk_len, w->last_token, w->last_key.p, (uint32_t)w->last_key.len) <= 0)
        return w->err = CS_EINVAL;
    w->first = false;
    w->last_token = p->token;
    cs_buf_reset(&w->last_key);
    cs_buf_put(&w->last_key, p->pk, p->pk_len);
    if (w->last_key.err) return w->err = CS_ENOMEM;
    cs_buf *b = &w->part;
    cs_buf_reset(b);
    cs_buf_reset(&w->ri);
    uint64_t cells = 0;
    uint8_t pf = 0;
    if (p->pdel.ts_us != INT64_MIN) pf |= SST_PART_HAS_DEL;
    if (p->stat) pf |= SST_PART_HAS_STATIC;
    if (cs_buf_reserve(b, 10 + (size_t)p->pk_len + 1 + 20 + 10)) return w->err = CS_ENOMEM;
    uint8_t *q = wr_bytes(b->p + b->len, p->pk, p->pk_len);
    *q++ = pf;
    if (pf & SST_PART_HAS_DEL) {
        q = wr_sv(q, p->pdel.ts_us);
        q = wr_sv(q, p->pdel.ldt_s);
        note_ts(w, p->pdel.ts_us); note_ldt(w, p->pdel.ldt_s);
        w->st.tombstones++; note_drop(w, p->pdel.ldt_s);
    }
    q = wr_uv(q, (uint64_t)p->n_rts);
    b->len = (size_t)(q - b->p);
    for (int i = 0; i < p->n_rts; i++) {
        const st__rt *rt = &p->rts[i];
        cs_buf_put_u8(b, (uint8_t)((rt->start_incl ? 1 : 0) | (rt->end_incl ? 2 : 0)));
        put_bytes(b, rt->start, rt->start_len);
        put_bytes(b, rt->end, rt->end_len);
        put_del(b, rt->d);
        note_ts(w, rt->d.ts_us); note_ldt(w, rt->d.ldt_s);
        w->st.tombstones++; note_drop(w, rt->d.ldt_s);
    }
    if (p->stat) { sst__encode_row(b, p->stat); note_row_stats(w, p->stat, &cells); }
    if (b->err) return w->err = CS_ENOMEM;
    w->in_part = true;
    w->part_pos = w->logical;
    w->part_emitted = 0;
    w->hdr_len = b->len;
    w->n_ri = 0;
    w->run_open = false;
    w->prev_ck = NULL;
    w->prev_ck_len = 0;
    w->part_rows = p->stat ? 1 : 0;
    w->part_cells = cells;
    w->part_token = p->token;
    return 0;
}

/* Row index bookkeeping before a row with clustering ck is appended to
 * the open partition: the open run is closed at the previous row
 * (w->prev_ck) once it reached SST_ROW_INDEX_EVERY bytes, and a run opens
 * at this row if none is open. */
static inline void row_run(sst_writer *w, const uint8_t *ck, uint32_t ck_len)
{
    uint64_t at = w->part_emitted + w->part.len;
    if (w->run_open && at - w->run_start >= SST_ROW_INDEX_EVERY) {
        put_bytes(&w->ri, w->run_first.p, (uint32_t)w->run_first.len);
        put_bytes(&w->ri, w->prev_ck, w->prev_ck_len);
        cs_buf_put_uvarint(&w->ri, w->run_start);
        cs_buf_put_uvarint(&w->ri, at - w->run_start);
        w->n_ri++;
        w->run_open = false;
    }
    if (!w->run_open) {
        w->run_open = true;
        w->run_start = at;
        cs_buf_reset(&w->run_first);
        cs_buf_put(&w->run_first, ck, ck_len);
    }
}

/* Emit what is buffered of the open partition once it is big (the header
 * stays in front). */
static int part_spill(sst_writer *w)
{
    cs_buf *b = &w->part;
    if (b->err || w->ri.err || w->run_first.err || w->last_ck.err) return w->err = CS_ENOMEM;
    if (b->len >= 4 * SST_ROW_INDEX_MIN) {
        int rc = emit(w, b->p, b->len);
        if (rc) return w->err = rc;
        w->part_emitted += b->len;
        cs_buf_reset(b);
    }
    return 0;
}

/* Append rows (in clustering order, after any rows already added) to the
 * open partition, with a row index entry every SST_ROW_INDEX_EVERY bytes.
 * The last run is closed by sst_writer_end. */
int sst_writer_rows(sst_writer *w, st__row *const *rows, int n)
{
    if (w->err) return w->err;
    if (!w->in_part) return w->err = CS_EINVAL;
    for (int i = 0; i < n; i++) {
        const st__row *r = rows[i];
        row_run(w, r->ck, r->ck_len);
        sst__encode_row(&w->part, r);
        note_row_stats(w, r, &w->part_cells);
        note_ck(w, r->ck, r->ck_len);
        w->prev_ck = r->ck;
        w->prev_ck_len = r->ck_len;
    }
    if (n > 0) {
        /* copied once per call: the caller may free rows afterwards */
        cs_buf_reset(&w->last_ck);
        cs_buf_put(&w->last_ck, w->prev_ck, w->prev_ck_len);
        w->prev_ck = w->last_ck.p;
    }
    w->part_rows += (uint64_t)n;
    return part_spill(w);
}

/* ---------------------------------------------------------------- packed rows
 *
 * A memtable row written once keeps its ops as they came in the mutation
 * (memtable.c, mt_row): LIVENESS, ROWDEL, CDEL and CELL ops, each a kind
 * byte and then the same fields, in the same encoding, as the sstable row
 * encoding's marker, deletion, complex deletion and cell.  When the ops
 * are in the shape one write produces (at most one marker, then at most
 * one deletion, then complex deletions of increasing columns, then cells
 * in (column, path) order, every varint in its shortest form), the row's
 * encoding is its fields copied in order, which is what decoding the ops
 * into an st__row (merging them one by one into an empty row) and
 * encoding that row gives, byte for byte; statistics are gathered on the
 * way.  Any other shape is declined and goes the decoded way. */

/* A varint at *pp (before end) in its shortest form: true with its value
 * and *pp past it; false if truncated or longer than needed (re-encoding
 * it would not give the same bytes). */
static inline bool rd_canon_uv(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
    const uint8_t *p = *pp;
    if (p < end && *p < 0x80) { *v = *p; *pp = p + 1; return true; }
    if (end - p >= 8) {
        /* Up to 8 bytes (56 bits: a microsecond timestamp) without a loop:
         * find the last byte, then gather the 7-bit groups pairwise. */
        uint64_t w;
        memcpy(&w, p, 8);
        w = le64toh(w);
        uint64_t stop = ~w & 0x8080808080808080ull;
        if (stop) {
            unsigned bits = (unsigned)__builtin_ctzll(stop) + 1;   /* through the last byte's top bit */
            if (bits < 64) w &= (1ull << bits) - 1;
            if ((w >> (bits - 8)) == 0) return false;              /* a last byte of 0: not the shortest form */
            w &= 0x7f7f7f7f7f7f7f7full;
            w = ((w & 0x7f007f007f007f00ull) >> 1) | (w & 0x007f007f007f007full);
            w = ((w & 0x3fff00003fff0000ull) >> 2) | (w & 0x00003fff00003fffull);
            w = ((w & 0x0fffffff00000000ull) >> 4) | (w & 0x000000000fffffffull);
            *v = w;
            *pp = p + bits / 8;
            return true;
        }
    }
    uint64_t x = 0;
    for (unsigned s = 0; p < end && s < 64; s += 7) {
        uint8_t b = *p++;
        x |= (uint64_t)(b & 0x7f) << s;
        if (!(b & 0x80)) {
            if (b == 0 || (s == 63 && b > 1)) return false;
            *v = x;
            *pp = p;
            return true;
        }
    }
    return false;
}

static inline bool rd_canon_sv(const uint8_t **pp, const uint8_t *end, int64_t *v)
{
    uint64_t u;
    if (!rd_canon_uv(pp, end, &u)) return false;
    *v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
    return true;
}

static inline bool rd_canon_i32(const uint8_t **pp, const uint8_t *end, int32_t *v)
{
    int64_t x;
    if (!rd_canon_sv(pp, end, &x) || x < INT32_MIN || x > INT32_MAX) return false;
    *v = (int32_t)x;
    return true;
}

/* Skip a length-prefixed byte string; its bytes and length in *s, *n. */
static inline bool rd_canon_bytes(const uint8_t **pp, const uint8_t *end, const uint8_t **s, uint32_t *n)
{
    uint64_t l;
    if (!rd_canon_uv(pp, end, &l) || l > (uint64_t)(end - *pp)) return false;
    *s = *pp;
    *n = (uint32_t)l;
    *pp += l;
    return true;
}

/* Statistics of one packed row, applied to the writer once it is encoded
 * (a declined row must leave them untouched).  Droppable items are kept
 * as runs of one histogram point in order (the spool's folds depend on
 * the order its points first come in): a row with more runs is declined. */
#define PACKED_DROP_RUNS 8
typedef struct packed_stats {
    int64_t min_ts, max_ts;
    int32_t max_ldt;
    uint64_t tombstones;
    int32_t drop_pt[PACKED_DROP_RUNS]; uint32_t drop_n[PACKED_DROP_RUNS];
    int n_runs;
} packed_stats;

static inline void ps_ts(packed_stats *s, int64_t ts)
{
    if (ts == INT64_MIN) return;
    if (ts < s->min_ts) s->min_ts = ts;
    if (ts > s->max_ts) s->max_ts = ts;
}

static inline void ps_ldt(packed_stats *s, int32_t ldt)
{
    if (ldt > s->max_ldt) s->max_ldt = ldt;
}

static inline bool ps_drop(packed_stats *s, int32_t ldt)
{
    if (ldt == INT32_MAX) return true;   /* no deletion time: not counted (note_drop) */
    int32_t pt = sst__drop_point(ldt);
    if (s->n_runs && s->drop_pt[s->n_runs - 1] == pt) { s->drop_n[s->n_runs - 1]++; return true; }
    if (s->n_runs == PACKED_DROP_RUNS) return false;
    s->drop_pt[s->n_runs] = pt;
    s->drop_n[s->n_runs++] = 1;
    return true;
}

int sst_writer_row_ops(sst_writer *w, const uint8_t *ck, uint32_t ck_len, uint8_t flags,
                       const uint8_t *ops, uint32_t ops_len, uint32_t n_cells)
{
    if (w->err) return w->err;
    if (!w->in_part) return w->err = CS_EINVAL;
    cs_buf *b = &w->part;
    /* Every op's fields are copied without its kind byte; the counts are
     * a byte (complex deletions, at most 127 here) and a varint. */
    if (cs_buf_reserve(b, 1 + 10 + (size_t)ck_len + 1 + 10 + ops_len)) return w->err = CS_ENOMEM;
    row_run(w, ck, ck_len);
    uint8_t *start = b->p + b->len, *q = start + 1;
    q = wr_bytes(q, ck, ck_len);
    uint8_t f = SST_ROW_PRESENT | ((flags & ST_ROW_STATIC) ? SST_ROW_IS_STATIC : 0);
    uint8_t *n_cdels_at = NULL;
    uint32_t n_cdels = 0, cells = 0, prev_col = 0;
    const uint8_t *prev_path = NULL;
    uint32_t prev_pl = 0;
    int stage = 0;               /* kind of the last op: they must come in kind order */
    packed_stats ps = { INT64_MAX, INT64_MIN, INT32_MIN, 0, { 0 }, { 0 }, 0 };
    const uint8_t *p = ops, *end = ops + ops_len;
    while (p < end) {
        int kind = *p++;
        const uint8_t *fs = p;   /* the op's fields */
        int64_t ts;
        int32_t ttl, ldt;
        if (kind < stage || (kind == stage && kind != ST__OP_CDEL && kind != ST__OP_CELL)) goto decline;
        if (kind >= ST__OP_CDEL && stage < ST__OP_CDEL) {
            n_cdels_at = q++;
        }
        if (kind == ST__OP_CELL && stage < ST__OP_CELL) q = wr_uv(q, n_cells);
        stage = kind;
        switch (kind) {
        case ST__OP_LIVENESS:
            if (!rd_canon_sv(&p, end, &ts) || !rd_canon_i32(&p, end, &ttl) || !rd_canon_i32(&p, end, &ldt)) goto decline;
            if (ts == INT64_MIN) goto decline;         /* merging it into a row is a no-op */
            f |= SST_ROW_HAS_LV;
            ps_ts(&ps, ts);
            ps_ldt(&ps, ttl > 0 ? ldt : INT32_MAX);
            if (ttl > 0 && !ps_drop(&ps, ldt)) goto decline;
            break;
        case ST__OP_ROWDEL:
            if (!rd_canon_sv(&p, end, &ts) || !rd_canon_i32(&p, end, &ldt)) goto decline;
            if (ts == INT64_MIN) goto decline;
            f |= SST_ROW_HAS_DEL;
            ps_ts(&ps, ts);
            ps_ldt(&ps, ldt);
            ps.tombstones++;
            if (!ps_drop(&ps, ldt)) goto decline;
            break;
        case ST__OP_CDEL: {
            uint64_t col;
            if (!rd_canon_uv(&p, end, &col) || col > UINT32_MAX) goto decline;
            if (n_cdels && col <= prev_col) goto decline;    /* merged or reordered */
            if (!rd_canon_sv(&p, end, &ts) || !rd_canon_i32(&p, end, &ldt)) goto decline;
            if (++n_cdels > 127) goto decline;
            prev_col = (uint32_t)col;
            ps_ts(&ps, ts);
            ps_ldt(&ps, ldt);
            ps.tombstones++;
            if (!ps_drop(&ps, ldt)) goto decline;
            break;
        }
        case ST__OP_CELL: {
            uint64_t col;
            const uint8_t *path, *val;
            uint32_t pl, vl;             /* (the value is only skipped) */
            if (!rd_canon_uv(&p, end, &col) || col > UINT32_MAX || p == end) goto decline;
            uint8_t cf = *p++;
            if (!rd_canon_sv(&p, end, &ts) || !rd_canon_i32(&p, end, &ttl) || !rd_canon_i32(&p, end, &ldt) ||
                !rd_canon_bytes(&p, end, &path, &pl) || !rd_canon_bytes(&p, end, &val, &vl))
                goto decline;
            if (cells > 0 && (col < prev_col || (col == prev_col && st__bytes_cmp(prev_path, prev_pl, path, pl) >= 0)))
                goto decline;                          /* merged or reordered */
            if (++cells > n_cells) goto decline;
            prev_col = (uint32_t)col;
            prev_path = path;
            prev_pl = pl;
            ps_ts(&ps, ts);
            if (cf & (ST_CELL_TOMBSTONE | ST_CELL_EXPIRING)) {
                ps_ldt(&ps, ldt);
                ps.tombstones += (cf & ST_CELL_TOMBSTONE) ? 1 : 0;
                if (!ps_drop(&ps, ldt)) goto decline;
            } else {
                ps.max_ldt = INT32_MAX;
            }
            break;
        }
        default:
            goto decline;
        }
        size_t n = (size_t)(p - fs);
        memcpy(q, fs, n);
        q += n;
    }
    if (cells != n_cells) goto decline;
    if (stage < ST__OP_CDEL) *q++ = 0;
    else *n_cdels_at = (uint8_t)n_cdels;
    if (stage < ST__OP_CELL) *q++ = 0;                 /* no cells (n_cells is 0) */
    *start = f;
    b->len = (size_t)(q - b->p);
    /* statistics, as note_row_stats and note_ck would gather them */
    if (ps.min_ts < w->st.min_ts) w->st.min_ts = ps.min_ts;
    if (ps.max_ts > w->st.max_ts) w->st.max_ts = ps.max_ts;
    note_ldt(w, ps.max_ldt);
    w->st.tombstones += ps.tombstones;
    for (int i = 0; i < ps.n_runs; i++) note_drop_n(w, ps.drop_pt[i], ps.drop_n[i]);
    w->part_cells += cells;
    w->part_rows++;
    note_ck(w, ck, ck_len);
    w->prev_ck = ck;
    w->prev_ck_len = ck_len;
    int rc = part_spill(w);
    return rc;
decline:
    /* nothing written: b->len and the statistics are as they were; a run
     * opened at this row stays open for it */
    return 1;
}

/* Finish the open partition: end marker, index entry, bloom, stats. */
int sst_writer_end(sst_writer *w)
{
    if (w->err) return w->err;
    if (!w->in_part) return w->err = CS_EINVAL;
    cs_buf *b = &w->part;
    /* A partition of one run carries no row index (below): no need to close it. */
    if (w->run_open && w->n_ri == 0) w->run_open = false;
    if (w->run_open) {
        put_bytes(&w->ri, w->run_first.p, (uint32_t)w->run_first.len);
        put_bytes(&w->ri, w->prev_ck, w->prev_ck_len);
        cs_buf_put_uvarint(&w->ri, w->run_start);
        cs_buf_put_uvarint(&w->ri, w->part_emitted + b->len - w->run_start);
        w->n_ri++;
        w->run_open = false;
    }
    cs_buf_put_u8(b, 0);   /* end of partition */
    if (b->err || w->ri.err) return w->err = CS_ENOMEM;
    int rc = emit(w, b->p, b->len);
    if (rc) return w->err = rc;
    uint64_t len = w->part_emitted + b->len;
    w->in_part = false;
    /* Index entry. */
    cs_buf *x = &w->index;
    /* Only wide partitions (>= SST_ROW_INDEX_MIN bytes of rows) carry a row index. */
    uint64_t n_ri = w->n_ri;
    if (n_ri < 2 || len - w->hdr_len < SST_ROW_INDEX_MIN) { cs_buf_reset(&w->ri); n_ri = 0; }
    if (cs_buf_reserve(x, 10 + w->last_key.len + 8 + 4 * 10 + 10 + w->ri.len)) return w->err = CS_ENOMEM;
    uint8_t *q = x->p + x->len;
    q = wr_bytes(q, w->last_key.p, (uint32_t)w->last_key.len);
    cs_st64(q, (uint64_t)w->part_token);
    q += 8;
    q = wr_uv(q, w->part_pos);
    q = wr_uv(q, len);
    q = wr_uv(q, w->hdr_len);
    q = wr_uv(q, n_ri);
    q = wr_bytes(q, w->ri.p, (uint32_t)w->ri.len);
    x->len = (size_t)(q - x->p);
    w->n_entries++;
    bloom_add(w, sst__bloom_hash(w->last_key.p, (uint32_t)w->last_key.len));
    w->st.partitions++;
    w->st.rows += w->part_rows;
    w->st.cells += w->part_cells;
    if (w->part_token < w->st.min_token) w->st.min_token = w->part_token;
    if (w->part_token > w->st.max_token) w->st.max_token = w->part_token;
    hist_add_hint(w->st.size_hist, w->hist_off, SST_SIZE_BUCKETS, len, &w->hint_size);
    hist_add_hint(w->st.cell_hist, w->hist_off, SST_CELL_BUCKETS, w->part_cells, &w->hint_cells);
    return 0;
}

/* Serialize one whole partition and its index entry. */
int sst_writer_add(sst_writer *w, const st__part *p)
{
    int rc = sst_writer_begin(w, p);
    if (!rc) rc = sst_writer_rows(w, p->rows, p->n_rows);
    if (!rc) rc = sst_writer_end(w);
    return rc;
}

uint64_t sst_writer_bytes(const sst_writer *w) { return w->file_off + w->index.len; }

/* Write buf as component comp (tmp name), fsync. */
static int write_component(sst_writer *w, const char *comp, const uint8_t *p, size_t n)
{
    char *path = sst__path(w->dir, w->gen, comp, true);
    if (!path) return CS_ENOMEM;
    int fd = vfs_open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    cs_free(path);
    if (fd < 0) return fd;
    uint64_t off = 0;
    int rc = write_all(fd, p, n, &off);
    if (!rc) rc = vfs_fsync(fd);
    vfs_close(fd);
    return rc;
}

static void put_stats(cs_buf *b, const sst_stats *s)
{
    cs_buf_put_u64(b, (uint64_t)s->min_ts);
    cs_buf_put_u64(b, (uint64_t)s->max_ts);
    cs_buf_put_u32(b, (uint32_t)s->max_ldt);
    cs_buf_put_u64(b, s->partitions);
    cs_buf_put_u64(b, s->rows);
    cs_buf_put_u64(b, s->cells);
    cs_buf_put_u64(b, s->tombstones);
    cs_buf_put_u64(b, s->droppable);
    cs_buf_put_u64(b, s->clog_pos.segment);
    cs_buf_put_u64(b, s->clog_pos.offset);
    cs_buf_put_u32(b, (uint32_t)s->level);
    cs_buf_put_u64(b, (uint64_t)s->min_token);
    cs_buf_put_u64(b, (uint64_t)s->max_token);
    cs_buf_put_u64(b, s->data_bytes);
    cs_buf_put_u8(b, (uint8_t)((s->ck_bounds ? 1 : 0) | (s->max_ck_truncated ? 2 : 0)));
    cs_buf_put_u32(b, s->min_ck_len);
    cs_buf_put(b, s->min_ck, s->min_ck_len);
    cs_buf_put_u32(b, s->max_ck_len);
    cs_buf_put(b, s->max_ck, s->max_ck_len);
    cs_buf_put_uvarint(b, SST_SIZE_BUCKETS + 1);
    for (int i = 0; i <= SST_SIZE_BUCKETS; i++) cs_buf_put_uvarint(b, s->size_hist[i]);
    cs_buf_put_uvarint(b, SST_CELL_BUCKETS + 1);
    for (int i = 0; i <= SST_CELL_BUCKETS; i++) cs_buf_put_uvarint(b, s->cell_hist[i]);
    cs_buf_put_uvarint(b, (uint64_t)s->n_ancestors);
    for (int i = 0; i < s->n_ancestors; i++) cs_buf_put_uvarint(b, s->ancestors[i]);
    cs_buf_put_uvarint(b, (uint64_t)s->n_drop);
    for (int i = 0; i < s->n_drop; i++) { cs_buf_put_uvarint(b, (uint64_t)s->drop_pt[i]); cs_buf_put_uvarint(b, s->drop_cnt[i]); }
}

/* Statistics.db's bytes: the header, the statistics, the CRC. */
static void stats_encode(cs_buf *f, const sst_stats *s)
{
    uint8_t h[SST_FILE_HDR];
    file_hdr(h, SST_STATS_MAGIC, 0);
    cs_st32(h + 4, SST_STATS_VERSION);
    cs_buf_put(f, h, sizeof h);
    put_stats(f, s);
    cs_buf_put_u32(f, cs_crc32c(0, f->p, f->len));
}

int sst__stats_write(const char *dir, uint64_t gen, const sst_stats *s)
{
    cs_buf f;
    cs_buf_init(&f);
    stats_encode(&f, s);
    char *p = sst__path(dir, gen, "Statistics.db", false);
    int rc = f.err ? f.err : !p ? CS_ENOMEM : vfs_write_atomic(p, f.p, f.len);
    cs_free(p);
    cs_buf_destroy(&f);
    return rc;
}

void sst_writer_set_ancestors(sst_writer *w, const uint64_t *gens, int n)
{
    int cap = (int)(sizeof w->st.ancestors / sizeof w->st.ancestors[0]);
    w->st.n_ancestors = n < cap ? n : cap;
    memcpy(w->st.ancestors, gens, sizeof(uint64_t) * (size_t)w->st.n_ancestors);
}

static int rename_comp(sst_writer *w, const char *comp)
{
    char *a = sst__path(w->dir, w->gen, comp, true);
    char *b = sst__path(w->dir, w->gen, comp, false);
    int rc = (a && b) ? vfs_rename(a, b) : CS_ENOMEM;
    cs_free(a); cs_free(b);
    return rc;
}

int sst_writer_finish(sst_writer *w, st_clog_pos clog_pos, int level, sst_reader **out)
{
    *out = NULL;
    int rc = w->err ? w->err : flush_block(w);
    if (!rc) rc = write_out(w);
    if (!rc) rc = vfs_fsync(w->fd);
    if (rc) { sst_writer_abort(w); return rc; }
    vfs_close(w->fd);
    w->fd = -1;
    w->st.clog_pos = clog_pos;
    w->st.level = level;
    w->st.data_bytes = w->logical;
    if (w->st.min_ts == INT64_MAX) { w->st.min_ts = INT64_MIN; w->st.max_ts = INT64_MIN; }
    spool_fold(w);
    bloom_drain(w);
    cs_buf_put_u64(&w->chunks, w->file_off);   /* end sentinel */
    if (w->chunks.err) { sst_writer_abort(w); return CS_ENOMEM; }
    /* Index.db: header and entries (w->index), chunk offsets, footer;
     * handed to the reader below rather than read back. */
    cs_buf *x = &w->index;
    uint64_t chunks_off = x->len;
    cs_buf_put(x, w->chunks.p, w->chunks.len);
    cs_buf_put_u64(x, w->n_entries);
    cs_buf_put_u64(x, chunks_off);
    cs_buf_put_u64(x, w->n_chunks);
    cs_buf_put_u64(x, w->logical);
    cs_buf_put_u32(x, cs_crc32c(0, x->p, x->len));
    rc = x->err ? x->err : write_component(w, "Index.db", x->p, x->len);
    /* Filter.db */
    cs_buf f;
    cs_buf_init(&f);
    uint8_t h[SST_FILE_HDR];
    file_hdr(h, SST_FILTER_MAGIC, w->bloom_k);
    cs_buf_put(&f, h, sizeof h);
    cs_buf_put_u64(&f, w->bloom_bits);
    cs_buf_put(&f, w->bloom, w->bloom_bits / 8);
    cs_buf_put_u32(&f, cs_crc32c(0, f.p, f.len));
    if (!rc) rc = f.err ? f.err : write_component(w, "Filter.db", f.p, f.len);
    /* Statistics.db */
    cs_buf_reset(&f);
    stats_encode(&f, &w->st);
    if (!rc) rc = f.err ? f.err : write_component(w, "Statistics.db", f.p, f.len);
    cs_buf_destroy(&f);
    static const char *comps[] = { "Data.db", "Index.db", "Filter.db", "Statistics.db" };
    for (int i = 0; !rc && i < 4; i++) rc = rename_comp(w, comps[i]);
    if (!rc) {
        rc = write_component(w, "TOC.txt", (const uint8_t *)SST_TOC_TEXT, sizeof SST_TOC_TEXT - 1);
        if (!rc) rc = rename_comp(w, "TOC.txt");
    }
    if (!rc) rc = vfs_fsync_dir(w->dir);
    if (rc) { sst_writer_abort(w); return rc; }
    char *dir = cs_strdup(w->dir);
    uint64_t gen = w->gen, warm_id = w->warm_id;
    w->warm_id = 0;                                /* the reader takes its warmed blocks */
    uint8_t *idx = x->p;
    size_t idx_len = x->len;
    if (x->cap - idx_len > (idx_len >> 4)) {     /* kept as long as the reader lives: no spare capacity */
        uint8_t *t = cs_realloc(idx, idx_len);
        if (t) idx = t;
    }
    cs_buf_init(x);
    sst_writer_abort(w);   /* frees memory; files are complete (TOC present) so nothing is deleted */
    if (!dir) {
        cs_free(idx);
        if (warm_id) sst__cache_forget(warm_id);
        return CS_ENOMEM;
    }
    rc = sst__reader_open_written(dir, gen, idx, idx_len, warm_id, out);
    if (rc) {
        sst__delete_files(dir, gen);   /* never leave an unreadable sstable behind */
        if (warm_id) sst__cache_forget(warm_id);
    }
    cs_free(dir);
    return rc;
}

void sst_writer_warm_cache(sst_writer *w)
{
    if (w && !w->warm_id) w->warm_id = sst__cache_new_id();
}

void sst_writer_abort(sst_writer *w)
{
    if (!w) return;
    if (w->warm_id) sst__cache_forget(w->warm_id);
    if (w->fd >= 0) vfs_close(w->fd);
    if (w->dir) {
        static const char *comps[] = { "Data.db", "Index.db", "Filter.db", "Statistics.db", "TOC.txt" };
        char *toc = sst__path(w->dir, w->gen, "TOC.txt", false);
        bool done = toc && vfs_file_size(toc) >= 0;
        cs_free(toc);
        for (int i = 0; !done && i < 5; i++) {
            char *p = sst__path(w->dir, w->gen, comps[i], true);
            if (p) { if (vfs_file_size(p) >= 0) vfs_unlink(p); cs_free(p); }
            p = sst__path(w->dir, w->gen, comps[i], false);
            if (p) { if (vfs_file_size(p) >= 0) vfs_unlink(p); cs_free(p); }
        }
    }
    cs_buf_destroy(&w->block); cs_buf_destroy(&w->chunks); cs_buf_destroy(&w->index); cs_buf_destroy(&w->out);
    cs_free(w->cbuf);
    cs_buf_destroy(&w->part); cs_buf_destroy(&w->ri); cs_buf_destroy(&w->last_key); cs_buf_destroy(&w->run_first); cs_buf_destroy(&w->last_ck);
    cs_free(w->bloom);
    cs_free(w->dir);
    cs_free(w);
}
