/*
 * sstable_reader.c: opens and reads one sstable (docs/format/sstable.md).
 *
 * At open the Index, Filter and Statistics components are read whole and
 * checked (magic, version, CRC), and an in-memory summary of the index's
 * tokens is built (one per SST_SUMMARY_EVERY entries); the Data file stays
 * open, mapped read-only where possible (else read with pread), and is read
 * block by block, each block's CRC verified before decompression; a read
 * decompresses only the block prefix it needs (the block cache keeps it).  A reader is
 * immutable after open and shared by reference count between the table's
 * live set and in-flight scans; when marked obsolete (compacted away or
 * truncated) its files are deleted at the last unref.
 */
#include "storage/sstable_int.h"
#include "common/alloc.h"
#include "common/err.h"
#include "common/hash.h"
#include "common/log.h"
#include "common/vfs.h"
#include "common/util.h"

#include <fcntl.h>
#include <lz4.h>
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#define IDX_FOOTER 36
#define HUGE_PAGE ((uintptr_t)2 << 20)

/* Ask for transparent huge pages (THP "madvise" mode) on the 2 MiB-aligned
 * interior of a big array about to be filled: the index entries, the token
 * array and the chunk offsets are read at random by point reads, and with
 * 4 KiB pages nearly every such read also missed the TLB (an 80 MB entry
 * array spans 20k pages).  Call before the first write, so the pages are
 * faulted in huge; a no-op for small arrays, or where unsupported. */
static void advise_huge(void *p, size_t n)
{
#ifdef MADV_HUGEPAGE
    if (!p || n < 2 * HUGE_PAGE) return;
    uintptr_t a = ((uintptr_t)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1), e = ((uintptr_t)p + n) & ~(HUGE_PAGE - 1);
    if (e > a) (void)madvise((void *)a, (size_t)(e - a), MADV_HUGEPAGE);
#else
    (void)p; (void)n;
#endif
}

static int corrupt(sst_reader *r, const char *comp, const char *what, uint64_t off)
{
    char *p = sst__path(r->dir, r->gen, comp, false);
    int rc = CS_CORRUPT(what, p ? p : comp, off);
    cs_free(p);
    return rc;
}

static int check_hdr(sst_reader *r, const char *comp, const uint8_t *b, size_t n, uint32_t magic, uint32_t *param)
{
    if (n < SST_FILE_HDR + 4) return corrupt(r, comp, "file too short", 0);
    if (cs_be32(b) != magic) return corrupt(r, comp, "bad magic", 0);
    uint32_t v = cs_be32(b + 4);
    if (v != SST_VERSION && !(magic == SST_STATS_MAGIC && v >= 1 && v <= SST_STATS_VERSION))
        return corrupt(r, comp, "unsupported version", 4);
    if (param) *param = cs_be32(b + 8);
    return 0;
}

static int check_crc(sst_reader *r, const char *comp, const uint8_t *b, size_t n)
{
    if (cs_be32(b + n - 4) != cs_crc32c(0, b, n - 4)) return corrupt(r, comp, "file checksum mismatch", n - 4);
    return 0;
}

/* cs_rd_uvarint with its one-byte case inline (same results and errors):
 * four of an index entry's six varints are one byte, and a flush parses
 * its whole new index (250k entries took ~8 ms). */
static inline uint64_t idx_uv(cs_rd *r)
{
    if (!r->err && r->pos < r->len && !(r->p[r->pos] & 0x80)) return r->p[r->pos++];
    return cs_rd_uvarint(r);
}

/* Load Index.db: read from the file, or (written != NULL) the bytes the
 * writer just wrote to it, taken over.  Those are not checked again for
 * what only a damaged file gets wrong (checksum, each key's token): they
 * are the writer's own memory. */
static int load_index(sst_reader *r, uint8_t *written, size_t written_len)
{
    int rc = 0;
    if (written) {
        r->idx_buf = written;
        r->idx_len = written_len;
    } else {
        char *p = sst__path(r->dir, r->gen, "Index.db", false);
        if (!p) return CS_ENOMEM;
        rc = vfs_read_all(p, &r->idx_buf, &r->idx_len);
        cs_free(p);
        if (rc) return rc;
    }
    uint8_t *b = r->idx_buf;
    size_t n = r->idx_len;
    if ((rc = check_hdr(r, "Index.db", b, n, SST_INDEX_MAGIC, &r->block_size))) return rc;
    if (n < SST_FILE_HDR + IDX_FOOTER) return corrupt(r, "Index.db", "file too short", 0);
    if (!written && (rc = check_crc(r, "Index.db", b, n))) return rc;
    const uint8_t *f = b + n - IDX_FOOTER;
    uint64_t n_entries = cs_be64(f), chunks_off = cs_be64(f + 8), n_chunks = cs_be64(f + 16);
    uint64_t logical = cs_be64(f + 24);
    if (r->block_size == 0 || r->block_size > (64u << 20) || chunks_off < SST_FILE_HDR ||
        chunks_off > n - IDX_FOOTER || (n - IDX_FOOTER - chunks_off) / 8 != n_chunks + 1 ||
        n_entries > (n - IDX_FOOTER) || (n_chunks * r->block_size) < logical)
        return corrupt(r, "Index.db", "bad footer", n - IDX_FOOTER);
    r->n_chunks = n_chunks;
    r->chunks = cs_malloc(sizeof(uint64_t) * (size_t)(n_chunks + 1));
    r->idx = cs_malloc(sizeof(sst_index_entry) * (size_t)(n_entries ? n_entries : 1));
    r->toks = cs_malloc(sizeof(int64_t) * (size_t)(n_entries ? n_entries : 1));
    if (!r->chunks || !r->idx || !r->toks) return CS_ENOMEM;
    advise_huge(r->chunks, sizeof(uint64_t) * (size_t)(n_chunks + 1));
    advise_huge(r->idx, sizeof(sst_index_entry) * (size_t)n_entries);
    memset(r->idx, 0, sizeof(sst_index_entry) * (size_t)(n_entries ? n_entries : 1));
    advise_huge(r->toks, sizeof(int64_t) * (size_t)n_entries);
    for (uint64_t i = 0; i <= n_chunks; i++) {
        r->chunks[i] = cs_be64(b + chunks_off + 8 * i);
        if (i && r->chunks[i] < r->chunks[i - 1]) return corrupt(r, "Index.db", "chunk offsets not increasing", chunks_off + 8 * i);
    }
    cs_rd rd;
    cs_rd_init(&rd, b + SST_FILE_HDR, chunks_off - SST_FILE_HDR);
    for (uint64_t i = 0; i < n_entries; i++) {
        sst_index_entry *e = &r->idx[i];
        uint64_t at = SST_FILE_HDR + rd.pos;
        uint64_t kl = idx_uv(&rd);
        if (kl > cs_rd_left(&rd)) return corrupt(r, "Index.db", "bad key length", at);
        e->pk = cs_rd_take(&rd, (size_t)kl);
        e->pk_len = (uint32_t)kl;
        e->token = (int64_t)cs_rd_u64(&rd);
        r->toks[i] = e->token;
        e->pos = idx_uv(&rd);
        e->len = idx_uv(&rd);
        uint64_t hdr = idx_uv(&rd);
        uint64_t n_ri = idx_uv(&rd);
        uint64_t rl = idx_uv(&rd);
        if (rd.err || rl > cs_rd_left(&rd)) return corrupt(r, "Index.db", "truncated entry", at);
        /* A run takes at least 4 bytes (two lengths, offset, length): a
         * count its bytes cannot hold would only size an allocation. */
        if (n_ri > rl / 4) return corrupt(r, "Index.db", "bad row index", at);
        e->n_ri = (uint32_t)n_ri;
        e->ri = cs_rd_take(&rd, (size_t)rl);
        e->ri_len = (uint32_t)rl;
        e->hdr_len = hdr;
        if (e->n_ri) e->ri_slot = r->n_ri_slots++;
        if (e->pos > logical || e->len > logical - e->pos || e->len == 0 || hdr > e->len)   /* no wrap */
            return corrupt(r, "Index.db", "entry points outside data", at);
        if (!written && e->token != cs_murmur3_token(e->pk, e->pk_len))
            return corrupt(r, "Index.db", "token does not match key", at);
        if (i && st__key_cmp(r->idx[i - 1].token, r->idx[i - 1].pk, r->idx[i - 1].pk_len, e->token, e->pk, e->pk_len) >= 0)
            return corrupt(r, "Index.db", "keys out of order", at);
    }
    if (rd.err || cs_rd_left(&rd) != 0) return corrupt(r, "Index.db", "trailing bytes in entries", chunks_off);
    r->n_idx = n_entries;
    r->logical = logical;
    /* Summary of the token array (Cassandra's Summary.db, built in memory):
     * a lookup searches it (small, cache-resident) and then one
     * SST_SUMMARY_EVERY-entry stretch of toks, instead of all of toks. */
    r->n_sum = (n_entries + SST_SUMMARY_EVERY - 1) / SST_SUMMARY_EVERY;
    r->sum = cs_malloc(sizeof(int64_t) * (size_t)(r->n_sum ? r->n_sum : 1));
    if (!r->sum) return CS_ENOMEM;
    for (uint64_t k = 0; k < r->n_sum; k++) r->sum[k] = r->toks[k * SST_SUMMARY_EVERY];
    if (r->n_ri_slots) {
        r->ri_slots = cs_calloc(r->n_ri_slots, sizeof *r->ri_slots);
        if (!r->ri_slots) return CS_ENOMEM;
        for (uint32_t i = 0; i < r->n_ri_slots; i++) atomic_init(&r->ri_slots[i], NULL);
    }
    return 0;
}

static int load_filter(sst_reader *r)
{
    char *p = sst__path(r->dir, r->gen, "Filter.db", false);
    if (!p) return CS_ENOMEM;
    uint8_t *b; size_t n;
    int rc = vfs_read_all(p, &b, &n);
    cs_free(p);
    if (rc) return rc;
    uint32_t k;
    if (!(rc = check_hdr(r, "Filter.db", b, n, SST_FILTER_MAGIC, &k)) && !(rc = check_crc(r, "Filter.db", b, n))) {
        uint64_t bits = n >= SST_FILE_HDR + 12 ? cs_be64(b + SST_FILE_HDR) : 0;
        if (k == 0 || k > 64 || bits == 0 || bits % 8 || SST_FILE_HDR + 8 + bits / 8 + 4 != n) {
            rc = corrupt(r, "Filter.db", "bad filter size", SST_FILE_HDR);
        } else {
            r->bloom = cs_malloc((size_t)(bits / 8));
            advise_huge(r->bloom, (size_t)(bits / 8));
            if (r->bloom) memcpy(r->bloom, b + SST_FILE_HDR + 8, (size_t)(bits / 8));
            r->bloom_bits = bits;
            r->bloom_k = k;
            if (!r->bloom) rc = CS_ENOMEM;
        }
    }
    cs_free(b);
    return rc;
}

static int load_stats(sst_reader *r)
{
    char *p = sst__path(r->dir, r->gen, "Statistics.db", false);
    if (!p) return CS_ENOMEM;
    uint8_t *b; size_t n;
    int rc = vfs_read_all(p, &b, &n);
    cs_free(p);
    if (rc) return rc;
    if ((rc = check_hdr(r, "Statistics.db", b, n, SST_STATS_MAGIC, NULL)) || (rc = check_crc(r, "Statistics.db", b, n))) {
        cs_free(b);
        return rc;
    }
    cs_rd rd;
    cs_rd_init(&rd, b + SST_FILE_HDR, n - SST_FILE_HDR - 4);
    r->stats_version = cs_be32(b + 4);
    sst_stats *s = &r->st;
    s->min_ts = (int64_t)cs_rd_u64(&rd);
    s->max_ts = (int64_t)cs_rd_u64(&rd);
    s->max_ldt = (int32_t)cs_rd_u32(&rd);
    s->partitions = cs_rd_u64(&rd);
    s->rows = cs_rd_u64(&rd);
    s->cells = cs_rd_u64(&rd);
    s->tombstones = cs_rd_u64(&rd);
    s->droppable = cs_rd_u64(&rd);
    s->clog_pos.segment = cs_rd_u64(&rd);
    s->clog_pos.offset = cs_rd_u64(&rd);
    s->level = (int32_t)cs_rd_u32(&rd);
    s->min_token = (int64_t)cs_rd_u64(&rd);
    s->max_token = (int64_t)cs_rd_u64(&rd);
    s->data_bytes = cs_rd_u64(&rd);
    uint8_t f = cs_rd_u8(&rd);
    s->ck_bounds = f & 1;
    s->max_ck_truncated = (f & 2) != 0;
    s->min_ck_len = cs_rd_u32(&rd);
    if (s->min_ck_len > 256) rd.err = CS_ECORRUPT;
    const uint8_t *q = cs_rd_take(&rd, s->min_ck_len);
    if (q && s->min_ck_len) memcpy(s->min_ck, q, s->min_ck_len);
    s->max_ck_len = cs_rd_u32(&rd);
    if (s->max_ck_len > 256) rd.err = CS_ECORRUPT;
    q = cs_rd_take(&rd, s->max_ck_len);
    if (q && s->max_ck_len) memcpy(s->max_ck, q, s->max_ck_len);
    if (r->stats_version == 1) {
        /* version 1: 96 buckets each, no overflow bucket (the same offsets;
         * what lay past offset 95 was counted in bucket 95 and stays there) */
        for (int i = 0; i < 96; i++) s->size_hist[i] = cs_rd_uvarint(&rd);
        for (int i = 0; i < 96; i++) s->cell_hist[i] = cs_rd_uvarint(&rd);
    } else {
        if (cs_rd_uvarint(&rd) != SST_SIZE_BUCKETS + 1) rd.err = CS_ECORRUPT;
        for (int i = 0; !rd.err && i <= SST_SIZE_BUCKETS; i++) s->size_hist[i] = cs_rd_uvarint(&rd);
        if (cs_rd_uvarint(&rd) != SST_CELL_BUCKETS + 1) rd.err = CS_ECORRUPT;
        for (int i = 0; !rd.err && i <= SST_CELL_BUCKETS; i++) s->cell_hist[i] = cs_rd_uvarint(&rd);
    }
    if (s->level < 0 || s->level > 8) rd.err = CS_ECORRUPT;
    uint64_t ancestors = cs_rd_uvarint(&rd);
    if (ancestors > 1024) rd.err = CS_ECORRUPT;
    for (uint64_t i = 0; !rd.err && i < ancestors; i++) {
        uint64_t g = cs_rd_uvarint(&rd);
        if (s->n_ancestors < (int)(sizeof s->ancestors / sizeof s->ancestors[0])) s->ancestors[s->n_ancestors++] = g;
    }
    /* Drop times: version 3 points (seconds: multiples of SST_DROP_ROUND_S,
     * or the cap INT32_MAX - 1);
     * before, at most 64 days (ldt / 86400), each read as the point at its
     * end (every time in it is at or before that). */
    uint64_t nd = cs_rd_uvarint(&rd);
    bool days = r->stats_version < 3;
    if (nd > (days ? 64u : SST_DROP_BINS)) rd.err = CS_ECORRUPT;
    for (uint64_t i = 0; !rd.err && i < nd; i++) {
        uint64_t v = cs_rd_uvarint(&rd);
        int64_t pt = days ? (v >= (uint64_t)INT32_MAX / 86400 ? INT32_MAX - 1 : (int64_t)(v + 1) * 86400) : (int64_t)v;
        if ((days && v > UINT32_MAX) || pt > INT32_MAX - 1 || (i && pt <= s->drop_pt[i - 1]))
            rd.err = CS_ECORRUPT;
        s->drop_pt[i] = (int32_t)pt;
        s->drop_cnt[i] = cs_rd_uvarint(&rd);
        s->n_drop = (int)i + 1;
    }
    if (rd.err || cs_rd_left(&rd)) rc = corrupt(r, "Statistics.db", "bad statistics body", SST_FILE_HDR + rd.pos);
    cs_free(b);
    return rc;
}

int sst__stats_read(const char *dir, uint64_t gen, sst_stats *out)
{
    sst_reader r;   /* load_stats reads only dir and gen, and fills st */
    memset(&r, 0, sizeof r);
    r.dir = (char *)dir;
    r.gen = gen;
    int rc = load_stats(&r);
    if (!rc) *out = r.st;
    return rc;
}

/* A Data.db shortened under a running server (by hand, by another
 * process) turns a read of its mapping past the new end into SIGBUS, which
 * would kill the server.  Cassandra's JVM turns such a fault into an error
 * of the read that made it; so does this: the only code that reads a
 * mapping is map_copy (a missed block's compressed bytes), which arms a
 * per-thread jump the SIGBUS handler takes when the faulting address lies
 * in the mapping being read.  The read then fails as corrupt, naming the
 * file, and the server goes on.  Any other SIGBUS gets the action that was
 * there before (default: the process dies) when the access repeats. */
static _Thread_local sigjmp_buf *volatile tl_fault_jmp;   /* volatile: read by the handler only */
static _Thread_local const uint8_t *volatile tl_fault_lo, *volatile tl_fault_hi;
static struct sigaction g_sigbus_prev;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
    (void)sig; (void)uc;
    const uint8_t *a = si->si_addr;
    if (tl_fault_jmp && a >= tl_fault_lo && a < tl_fault_hi) siglongjmp(*tl_fault_jmp, 1);
    sigaction(SIGBUS, &g_sigbus_prev, NULL);
}

static void sigbus_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;   /* not blocked after the jump (no mask saved: no system call per copy) */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, &g_sigbus_prev);
}

/* Copy len bytes at off of r's mapped Data.db to dst; false if the file no
 * longer holds them (SIGBUS). */
static bool map_copy(const sst_reader *r, void *dst, uint64_t off, size_t len)
{
    sigjmp_buf jb;
    if (sigsetjmp(jb, 0)) {
        tl_fault_jmp = NULL;
        return false;
    }
    tl_fault_lo = r->data_map;
    tl_fault_hi = r->data_map + r->data_map_len;
    tl_fault_jmp = &jb;
    atomic_signal_fence(memory_order_seq_cst);   /* the copy stays between arming and disarming */
    memcpy(dst, r->data_map + off, len);
    atomic_signal_fence(memory_order_seq_cst);
    tl_fault_jmp = NULL;
    return true;
}

/* Map Data.db read-only, as Cassandra's disk_access_mode mmap: a block
 * missing from the block cache is then copied from the page cache with no
 * system call (map_copy: one memcpy of the compressed bytes, which keeps a
 * truncated file from killing the server), checked and decompressed.
 * Sstables are immutable and unlinked only after the last unref, so the
 * mapping stays valid while the reader lives.  CASSETTE_SSTABLE_MMAP=0 (or
 * a failed mmap) reads blocks with pread instead. */
static void map_data(sst_reader *r, uint64_t sz)
{
    static int mode = -1;                /* racy init is harmless: same value */
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    if (mode < 0) {
        const char *env = getenv("CASSETTE_SSTABLE_MMAP");
        mode = !(env && env[0] == '0');
    }
    if (!mode || sz == 0 || sz > SIZE_MAX) return;
    pthread_once(&once, sigbus_install);
    void *m = mmap(NULL, (size_t)sz, PROT_READ, MAP_SHARED, r->data_fd, 0);
    if (m == MAP_FAILED) return;
    r->data_map = m;
    r->data_map_len = (size_t)sz;
}

/* The Data.db files (device, inode) some reader has open, live or
 * waiting for its last unref to delete them: an import of a table's own
 * directory (refresh) takes none of them for a new sstable. */
static pthread_mutex_t g_open_mu = PTHREAD_MUTEX_INITIALIZER;
static struct open_file { uint64_t dev, ino; } *g_open;
static size_t g_n_open, g_cap_open;

static void open_files_add(sst_reader *r)
{
    struct stat sb;
    if (fstat(r->data_fd, &sb) != 0) return;
    pthread_mutex_lock(&g_open_mu);
    if (g_n_open == g_cap_open) {
        size_t nc = g_cap_open ? g_cap_open * 2 : 64;
        struct open_file *n = cs_realloc(g_open, nc * sizeof *n);
        if (n) { g_open = n; g_cap_open = nc; }
    }
    if (g_n_open < g_cap_open) {
        g_open[g_n_open++] = (struct open_file){ (uint64_t)sb.st_dev, (uint64_t)sb.st_ino };
        r->in_open_files = true;
        r->dev = (uint64_t)sb.st_dev;
        r->ino = (uint64_t)sb.st_ino;
    }
    pthread_mutex_unlock(&g_open_mu);
}

static void open_files_remove(sst_reader *r)
{
    if (!r->in_open_files) return;
    pthread_mutex_lock(&g_open_mu);
    for (size_t i = 0; i < g_n_open; i++)
        if (g_open[i].dev == r->dev && g_open[i].ino == r->ino) {
            g_open[i] = g_open[--g_n_open];
            break;
        }
    if (g_n_open == 0) { cs_free(g_open); g_open = NULL; g_cap_open = 0; }
    pthread_mutex_unlock(&g_open_mu);
}

bool sst__data_file_open(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0) return false;
    bool found = false;
    pthread_mutex_lock(&g_open_mu);
    for (size_t i = 0; i < g_n_open && !found; i++)
        found = g_open[i].dev == (uint64_t)sb.st_dev && g_open[i].ino == (uint64_t)sb.st_ino;
    pthread_mutex_unlock(&g_open_mu);
    return found;
}

int sst_reader_open(const char *dir, uint64_t gen, sst_reader **out)
{
    return sst__reader_open_written(dir, gen, NULL, 0, 0, out);
}

int sst__reader_open_written(const char *dir, uint64_t gen, uint8_t *idx, size_t idx_len, uint64_t cache_id,
                             sst_reader **out)
{
    *out = NULL;
    sst_reader *r = cs_calloc(1, sizeof *r);
    if (!r) { cs_free(idx); return CS_ENOMEM; }
    atomic_init(&r->refs, 1);
    atomic_init(&r->obsolete, false);
    atomic_init(&r->compacting, false);
    r->gen = gen;
    r->cache_id = cache_id ? cache_id : sst__cache_new_id();   /* the writer's, when it warmed the cache */
    r->data_fd = -1;
    r->dir = cs_strdup(dir);
    if (!r->dir) { cs_free(r); cs_free(idx); return CS_ENOMEM; }
    int rc = load_index(r, idx, idx_len);
    if (!rc) rc = load_filter(r);
    if (!rc) rc = load_stats(r);
    if (!rc) {
        char *p = sst__path(dir, gen, "Data.db", false);
        r->data_fd = p ? vfs_open(p, O_RDONLY, 0) : CS_ENOMEM;
        if (r->data_fd >= 0) {
            int64_t sz = vfs_file_size(p);
            uint8_t h[SST_FILE_HDR];
            if (sz < SST_FILE_HDR || vfs_pread(r->data_fd, h, SST_FILE_HDR, 0) != SST_FILE_HDR)
                rc = corrupt(r, "Data.db", "file too short", 0);
            else if (cs_be32(h) != SST_DATA_MAGIC) rc = corrupt(r, "Data.db", "bad magic", 0);
            else if (cs_be32(h + 4) != SST_VERSION) rc = corrupt(r, "Data.db", "unsupported version", 4);
            else if (cs_be32(h + 8) != r->block_size) rc = corrupt(r, "Data.db", "block size differs from index", 8);
            else if ((uint64_t)sz != r->chunks[r->n_chunks]) rc = corrupt(r, "Data.db", "size differs from index", (uint64_t)sz);
            r->file_bytes = (uint64_t)(sz > 0 ? sz : 0) + r->idx_len + r->bloom_bits / 8;
            int64_t mt = vfs_file_mtime_ms(p);
            r->created_ms = mt > 0 ? mt : 0;   /* File.lastModified: 0 when it cannot be read */
            if (!rc) map_data(r, (uint64_t)sz);
            if (!rc) open_files_add(r);
        } else {
            rc = r->data_fd;
        }
        cs_free(p);
    }
    if (rc) {
        atomic_store(&r->refs, 1);
        sst_reader_unref(r);
        return rc;
    }
    *out = r;
    return 0;
}

void sst_reader_ref(sst_reader *r) { if (r) atomic_fetch_add(&r->refs, 1); }

void sst__mark_obsolete(sst_reader *r) { if (r) atomic_store(&r->obsolete, true); }

void sst__delete_files(const char *dir, uint64_t gen)
{
    /* TOC first: without it the rest is garbage even if we crash midway.
     * Paths on the stack: a failed allocation must not skip the TOC and
     * leave a TOC naming deleted components (unreadable at the next open). */
    static const char *comps[] = { "TOC.txt", "Data.db", "Index.db", "Filter.db", "Statistics.db" };
    char path[4400];
    for (int i = 0; i < 5; i++) {
        snprintf(path, sizeof path, "%s/cs-%" PRIu64 "-%s", dir, gen, comps[i]);
        vfs_unlink(path);
    }
}

static void reader_free(void *arg)
{
    sst_reader *r = arg;
    open_files_remove(r);
    if (r->data_map) munmap((void *)r->data_map, r->data_map_len);
    if (r->data_fd >= 0) vfs_close(r->data_fd);
    if (atomic_load(&r->obsolete)) {
        sst__delete_files(r->dir, r->gen);
        /* its blocks would only age out: the room goes to live sstables
         * (a flush's or compaction's output is cached into free room) */
        sst__cache_forget(r->cache_id);
    }
    for (uint32_t i = 0; r->ri_slots && i < r->n_ri_slots; i++) cs_free(atomic_load(&r->ri_slots[i]));
    cs_free(r->ri_slots);
    cs_free(r->idx_buf);
    cs_free(r->idx);
    cs_free(r->toks);
    cs_free(r->sum);
    cs_free(r->chunks);
    cs_free(r->bloom);
    cs_free(r->dir);
    cs_free(r);
}

void sst_reader_unref(sst_reader *r)
{
    if (!r || atomic_fetch_sub(&r->refs, 1) != 1) return;
    if (!st__reap(reader_free, r)) reader_free(r);
}

/* ---------------------------------------------------------------- data */

/* Read logical bytes [pos, pos+len) into the arena.  Cached blocks are
 * copied only for the part inside the range (a point read copies its
 * partition, not the whole block); missed blocks are read, checked (CRC),
 * decompressed into a cache slot and then copied likewise.  A point read
 * (point) whose missed block the cache does not admit decodes only the
 * block's prefix up to the range's end, into a scratch buffer. */
/* Per thread: +16 per block cache miss, -1 per hit (0..1024). */
static _Thread_local uint32_t tl_miss_score = 1024;

static int read_range(sst_reader *r, uint64_t pos, uint64_t len, cs_arena *a, const uint8_t **out, bool point)
{
    *out = NULL;
    if (len == 0) { *out = (const uint8_t *)""; return 0; }
    uint64_t bs = r->block_size;
    if (pos > r->logical || len > r->logical - pos) return corrupt(r, "Data.db", "read past logical end", pos);
    uint64_t b0 = pos / bs, b1 = (pos + len - 1) / bs;
    if (b1 >= r->n_chunks) return corrupt(r, "Data.db", "block beyond chunk table", pos);
    uint8_t *buf = cs_arena_alloc(a, (size_t)len);
    if (!buf) return CS_ENOMEM;
    /* Compressed bytes go to a stack buffer when they fit (4 KiB blocks);
     * a miss decompresses straight into a cache slot, so it costs no
     * allocation besides the slot and one copy of the bytes asked for. */
    uint8_t stackc[2 * 4096 + 64 + SST_BLOCK_HDR];
    uint8_t scratch[4096];
    uint8_t *cbuf = stackc, *heapc = NULL, *blk = NULL;
    size_t ccap = sizeof stackc;
    int rc = 0;
    for (uint64_t b = b0; b <= b1 && !rc; b++) {
        uint64_t want_len = (b + 1) * bs <= r->logical ? bs : r->logical - b * bs;
        uint64_t from = b == b0 ? pos - b * bs : 0;               /* part of block b inside the range */
        uint64_t to = b == b1 ? pos + len - b * bs : want_len;
        uint8_t *dst = buf + (b * bs + from - pos);
        /* Start loading the compressed block while the cache is asked: a
         * miss reads it right after (its header, then the CRC streams it).
         * Only while this thread's lookups miss often (tl_miss_score): when
         * nearly all hit, the chunk offset and the mapped block's lines
         * (often an untouched page: a page walk) were loaded for nothing,
         * ~13% of a cached point SELECT's server CPU. */
        if (r->data_map && tl_miss_score > 0) {
            const uint8_t *cb = r->data_map + r->chunks[b];
            for (int k = 0; k < 4; k++) __builtin_prefetch(cb + 64 * k);
        }
        if (sst__cache_get(r->cache_id, b, (uint32_t)want_len, (uint32_t)from, dst, (uint32_t)(to - from))) {
            if (tl_miss_score > 0) tl_miss_score--;
            continue;
        }
        /* a miss counts 16 hits: prefetching stays on below ~94% hits */
        tl_miss_score = tl_miss_score + 16 > 1024 ? 1024 : tl_miss_score + 16;
        uint64_t miss_t0 = cs_mono_ns();
        uint64_t off = r->chunks[b], clen_total = r->chunks[b + 1] - off;
        if (clen_total < SST_BLOCK_HDR || clen_total > bs * 2 + 64 + SST_BLOCK_HDR) { rc = corrupt(r, "Data.db", "bad block length", off); break; }
        if (clen_total > ccap) {
            cs_free(heapc);
            cbuf = heapc = cs_malloc((size_t)clen_total);
            ccap = (size_t)clen_total;
            if (!cbuf) { rc = CS_ENOMEM; break; }
        }
        if (r->data_map) {
            /* off + clen_total <= the size at open: chunk offsets were checked then */
            if (!map_copy(r, cbuf, off, (size_t)clen_total)) { rc = corrupt(r, "Data.db", "block past the end of the file (truncated while open)", off); break; }
        } else {
            ssize_t got = vfs_pread(r->data_fd, cbuf, (size_t)clen_total, off);
            if (got < 0) { rc = (int)got; break; }
            if ((uint64_t)got != clen_total) { rc = corrupt(r, "Data.db", "truncated block", off); break; }
        }
        uint32_t clen = cs_be32(cbuf), raw = cs_be32(cbuf + 4), crc = cs_be32(cbuf + 8);
        bool stored = clen & SST_RAW_FLAG;
        clen &= ~SST_RAW_FLAG;
        if ((uint64_t)clen + SST_BLOCK_HDR != clen_total || raw != want_len) { rc = corrupt(r, "Data.db", "bad block header", off); break; }
        if (cs_crc32c(0, cbuf + SST_BLOCK_HDR, clen) != crc) { rc = corrupt(r, "Data.db", "block checksum mismatch", off); break; }
        atomic_fetch_add(&r->blocks_read, 1);
        bool admit = !point || sst__cache_admit(r->cache_id, b, raw);
        uint8_t *slot = admit ? sst__cache_slot(r->cache_id, b, raw) : NULL;
        uint8_t *out = slot;
        uint32_t need = raw;
        if (!out) {
            /* not cached: a whole block into the range goes straight there,
             * else only the prefix up to the range's end is decoded (half
             * a block on average for a point read; the CRC above covered
             * the whole block) */
            if (from == 0 && to == raw) out = dst;
            else {
                if (bs <= sizeof scratch) out = scratch;
                else if (!blk && !(blk = cs_malloc((size_t)bs))) { rc = CS_ENOMEM; break; }
                else out = blk;
                need = (uint32_t)to;
            }
        }
        if (stored) {
            if (clen != raw) { sst__cache_slot_free(slot); rc = corrupt(r, "Data.db", "bad stored block", off); break; }
            memcpy(out, cbuf + SST_BLOCK_HDR, need);
        } else {
            int d = need < raw
                ? LZ4_decompress_safe_partial((const char *)cbuf + SST_BLOCK_HDR, (char *)out, (int)clen, (int)need, (int)raw)
                : LZ4_decompress_safe((const char *)cbuf + SST_BLOCK_HDR, (char *)out, (int)clen, (int)raw);
            if (d < 0 || (uint32_t)d != need) { sst__cache_slot_free(slot); rc = corrupt(r, "Data.db", "lz4 decompression failed", off); break; }
        }
        if (out != dst) memcpy(dst, out + from, (size_t)(to - from));
        if (slot) sst__cache_insert(r->cache_id, b, slot);
        sst__cache_miss_time(cs_mono_ns() - miss_t0);
    }
    cs_free(heapc);
    cs_free(blk);
    if (rc) return rc;
    *out = buf;
    return 0;
}

int sst__read_range(sst_reader *r, uint64_t pos, uint64_t len, cs_arena *a, const uint8_t **out)
{
    return read_range(r, pos, len, a, out, false);
}

static const uint8_t *rd_bytes(cs_rd *rd, uint32_t *n)
{
    uint64_t l = cs_rd_uvarint(rd);
    if (rd->err || l > cs_rd_left(rd)) { rd->err = CS_ECORRUPT; *n = 0; return NULL; }
    *n = (uint32_t)l;
    return l ? cs_rd_take(rd, (size_t)l) : NULL;
}

static int32_t rd_i32(cs_rd *rd)
{
    int64_t v = cs_rd_svarint(rd);
    if (v < INT32_MIN || v > INT32_MAX) rd->err = CS_ECORRUPT;
    return (int32_t)v;
}

static st_deletion rd_del(cs_rd *rd)
{
    st_deletion d;
    d.ts_us = cs_rd_svarint(rd);
    d.ldt_s = rd_i32(rd);
    return d;
}

int sst__decode_row(cs_rd *rd, uint8_t f, st__row *r, cs_arena *a)
{
    memset(r, 0, sizeof *r);
    if (!(f & SST_ROW_PRESENT) || (f & ~15u)) return CS_ECORRUPT;
    r->flags = (f & SST_ROW_IS_STATIC) ? ST_ROW_STATIC : 0;
    r->ck = rd_bytes(rd, &r->ck_len);
    r->lv.ts_us = INT64_MIN;
    r->del = ST_NO_DELETION;
    if (f & SST_ROW_HAS_LV) {
        r->lv.ts_us = cs_rd_svarint(rd);
        r->lv.ttl_s = rd_i32(rd);
        r->lv.ldt_s = rd_i32(rd);
    }
    if (f & SST_ROW_HAS_DEL) r->del = rd_del(rd);
    uint64_t nd = cs_rd_uvarint(rd);
    if (rd->err || nd > cs_rd_left(rd)) return CS_ECORRUPT;
    if (nd) {
        r->cdels = cs_arena_alloc(a, sizeof(st__cdel) * (size_t)nd);
        if (!r->cdels) return CS_ENOMEM;
        for (uint64_t i = 0; i < nd; i++) {
            uint64_t c = cs_rd_uvarint(rd);
            if (c > UINT32_MAX) rd->err = CS_ECORRUPT;
            r->cdels[i].col = (uint32_t)c;
            r->cdels[i].d = rd_del(rd);
        }
        r->n_cdels = r->cap_cdels = (int)nd;
    }
    uint64_t nc = cs_rd_uvarint(rd);
    if (rd->err || nc > cs_rd_left(rd)) return CS_ECORRUPT;
    if (nc) {
        r->cells = cs_arena_alloc(a, sizeof(st_cell) * (size_t)nc);
        if (!r->cells) return CS_ENOMEM;
        for (uint64_t i = 0; i < nc; i++) {
            st_cell *c = &r->cells[i];
            uint64_t col = cs_rd_uvarint(rd);
            if (col > UINT32_MAX) rd->err = CS_ECORRUPT;
            c->col = (uint32_t)col;
            c->flags = cs_rd_u8(rd);
            c->ts_us = cs_rd_svarint(rd);
            c->ttl_s = rd_i32(rd);
            c->ldt_s = rd_i32(rd);
            c->path = rd_bytes(rd, &c->path_len);
            c->val = rd_bytes(rd, &c->val_len);
            if (i && !rd->err && st__cell_order(&r->cells[i - 1], c) >= 0) rd->err = CS_ECORRUPT;
        }
        r->n_cells = r->cap_cells = (int)nc;
    }
    return rd->err ? CS_ECORRUPT : 0;
}

int sst__decode_part_header(cs_rd *rd, st__part *p, cs_arena *a)
{
    memset(p, 0, sizeof *p);
    p->pk = rd_bytes(rd, &p->pk_len);
    uint8_t f = cs_rd_u8(rd);
    if (f & ~3u) return CS_ECORRUPT;
    p->pdel = ST_NO_DELETION;
    if (f & SST_PART_HAS_DEL) p->pdel = rd_del(rd);
    uint64_t nrt = cs_rd_uvarint(rd);
    if (rd->err || nrt > cs_rd_left(rd)) return CS_ECORRUPT;
    if (nrt) {
        p->rts = cs_arena_alloc(a, sizeof(st__rt) * (size_t)nrt);
        if (!p->rts) return CS_ENOMEM;
        for (uint64_t i = 0; i < nrt; i++) {
            st__rt *t = &p->rts[i];
            uint8_t tf = cs_rd_u8(rd);
            t->start_incl = tf & 1;
            t->end_incl = (tf & 2) != 0;
            t->start = rd_bytes(rd, &t->start_len);
            t->end = rd_bytes(rd, &t->end_len);
            t->d = rd_del(rd);
        }
        p->n_rts = p->cap_rts = (int)nrt;
    }
    if (f & SST_PART_HAS_STATIC) {
        p->stat = cs_arena_alloc(a, sizeof(st__row));
        if (!p->stat) return CS_ENOMEM;
        uint8_t rf = cs_rd_u8(rd);
        int rc = sst__decode_row(rd, rf, p->stat, a);
        if (rc) return rc;
        if (!(p->stat->flags & ST_ROW_STATIC)) return CS_ECORRUPT;
    }
    return rd->err ? CS_ECORRUPT : 0;
}

/* ---------------------------------------------------------------- lookups */

/* First i in [lo, hi) of the sorted a with a[i] >= v (hi if none): a
 * branch-light bisection. */
static inline uint64_t bisect_lower(const int64_t *a, uint64_t lo, uint64_t hi, int64_t v)
{
    uint64_t n = hi - lo;
    while (n > 0) {
        uint64_t half = n / 2;
        if (a[lo + half] < v) { lo += half + 1; n -= half + 1; }
        else n = half;
    }
    return lo;
}

/* The interpolated guess for token in the sorted sm[0, n): a slot in
 * [1, n-1] when sm[0] < token <= sm[n-1] and the array is long and spread
 * enough to guess from (n >= 64, sm[n-1] > sm[0]); else 0, no guess. */
static inline uint64_t sorted_guess(const int64_t *sm, uint64_t n, int64_t token)
{
    if (n < 64 || sm[n - 1] <= sm[0] || token <= sm[0] || token > sm[n - 1]) return 0;
    double f = ((double)token - (double)sm[0]) / ((double)sm[n - 1] - (double)sm[0]);
    uint64_t g = (uint64_t)(f * (double)(n - 1));
    return g < 1 ? 1 : g > n - 1 ? n - 1 : g;
}

/* First slot of the sorted sm[0, n) holding a value >= token (n if none),
 * for the summary (one token per SST_SUMMARY_EVERY index entries).  Murmur3
 * tokens spread evenly, so the slot is guessed by interpolation between
 * the first and last sampled tokens (off by ~sqrt(entries)/32 slots: a
 * line or two) and bracketed by galloping from the guess, then bisected:
 * one or two cache misses where a bisection of the whole summary (tens of
 * KiB per sstable) took several dependent ones.  Exact for any data; only
 * the speed depends on the spread (no guess: the whole array bisected). */
uint64_t sst__sorted_lower(const int64_t *sm, uint64_t n, int64_t token)
{
    uint64_t lo = 0, hi = n, g = sorted_guess(sm, n, token);
    if (g) {                               /* sm[0] < token <= sm[n-1]: the answer is in [1, n-1] */
        uint64_t step = 1;
        if (sm[g] < token) {               /* answer in (g, n-1]; sm[n-1] >= token */
            uint64_t below = g, p = g + 1;
            while (p < n - 1 && sm[p] < token) { below = p; p = g + (step *= 2); if (p > n - 1) p = n - 1; }
            lo = below + 1; hi = p + 1;    /* sm[below] < token <= sm[p] */
        } else {                           /* answer in [1, g]; sm[0] < token */
            uint64_t above = g, p = g - 1;
            while (p > 0 && sm[p] >= token) { above = p; p = g > (step *= 2) ? g - step : 0; }
            lo = p + 1; hi = above + 1;    /* sm[p] < token <= sm[above] */
        }
    }
    return bisect_lower(sm, lo, hi, token);
}

/* The stretch [*lo, *hi) of the token array holding the first entry >=
 * token, from the summary, its lines asked for. */
static void idx_stretch(const sst_reader *r, int64_t token, uint64_t *lo, uint64_t *hi)
{
    /* Summary first: the last sampled token < token starts the stretch of
     * toks holding the lower bound (entries before it are all < token). */
    uint64_t slo = sst__sorted_lower(r->sum, r->n_sum, token);
    /* sum[slo-1] < token <= sum[slo]: the bound is in ((slo-1)*E, slo*E] */
    *lo = slo ? (slo - 1) * SST_SUMMARY_EVERY + 1 : 0;
    *hi = slo < r->n_sum ? slo * SST_SUMMARY_EVERY : r->n_idx;
    /* The stretch is 4-5 cache lines: fetch them together instead of one
     * dependent miss per halving. */
    for (uint64_t k = *lo; k < *hi; k += 8) __builtin_prefetch(&r->toks[k]);
}

/* First index entry >= (token, key) (> if strict); key NULL: first of token.
 * Binary search over the dense token array (8 B per entry, not the 80 B
 * entries: far fewer cache and TLB misses), then a short walk over the
 * entries sharing the token, compared by key. */
static uint64_t idx_lower(sst_reader *r, int64_t token, const uint8_t *key, uint32_t klen, bool strict)
{
    const int64_t *t = r->toks;
    uint64_t lo, hi;
    idx_stretch(r, token, &lo, &hi);
    lo = bisect_lower(t, lo, hi, token);
    if (!key) return lo;
    while (lo < r->n_idx && t[lo] == token) {
        const sst_index_entry *e = &r->idx[lo];
        int c = st__bytes_cmp(e->pk, e->pk_len, key, klen);
        if (c < 0 || (strict && c == 0)) lo++; else break;
    }
    return lo;
}

uint64_t sst__idx_find(sst_reader *r, int64_t token, const uint8_t *pk, uint32_t pk_len)
{
    uint64_t i = idx_lower(r, token, pk, pk_len, false);
    if (i >= r->n_idx || st__key_cmp(r->idx[i].token, r->idx[i].pk, r->idx[i].pk_len, token, pk, pk_len) != 0)
        return r->n_idx;
    return i;
}

/* Entries with a token at or below tok. */
static uint64_t idx_upto(sst_reader *r, int64_t tok)
{
    return tok == INT64_MAX ? r->n_idx : idx_lower(r, tok + 1, NULL, 0, false);
}

uint64_t sst_keys_in_range(sst_reader *r, int64_t start, int64_t end)
{
    uint64_t below = idx_upto(r, start), upto = end == INT64_MIN ? r->n_idx : idx_upto(r, end);
    return upto > below ? upto - below : 0;
}

static bool in_slice(const st__row *r, const st_slice *s)
{
    return st__after_start(r->ck, r->ck_len, s->start.key, s->start.len, s->start.inclusive) &&
           st__before_end(r->ck, r->ck_len, s->end.key, s->end.len, s->end.inclusive);
}

static bool in_slices(const st__row *r, const st_slice *s, int n)
{
    if (n == 0) return true;
    for (int i = 0; i < n; i++) if (in_slice(r, &s[i])) return true;
    return false;
}

/* Decode rows from rd until the end marker or the end of rd, keeping those
 * in the slices; stop early past the last slice's end. */
static int decode_rows(sst_reader *r, cs_rd *rd, const st_slice *slices, int n, st__part *p, cs_arena *a, uint64_t base)
{
    while (cs_rd_left(rd)) {
        uint8_t f = cs_rd_u8(rd);
        if (f == 0) break;
        st__row *row = cs_arena_alloc(a, sizeof *row);
        if (!row) return CS_ENOMEM;
        int rc = sst__decode_row(rd, f, row, a);
        if (rc == CS_ENOMEM) return rc;
        if (rc) return corrupt(r, "Data.db", "bad row", base + rd->pos);
        if (p->n_rows && st__bytes_cmp(p->rows[p->n_rows - 1]->ck, p->rows[p->n_rows - 1]->ck_len, row->ck, row->ck_len) >= 0)
            return corrupt(r, "Data.db", "rows out of order", base + rd->pos);
        if (n && !st__before_end(row->ck, row->ck_len, slices[n - 1].end.key, slices[n - 1].end.len, slices[n - 1].end.inclusive))
            break;
        if (!in_slices(row, slices, n)) continue;
        if (st__part_add_row(p, row, a)) return CS_ENOMEM;
    }
    return 0;
}

/* The parsed row index of wide entry e: parsed and checked on first use,
 * then shared by every read of the reader (lock-free publish; a racing
 * loser frees its copy).  NULL with *rc set on corruption or OOM. */
static const sst_ri *get_ri(sst_reader *r, const sst_index_entry *e, int *rc)
{
    *rc = 0;
    _Atomic(sst_ri *) *slot = &r->ri_slots[e->ri_slot];
    sst_ri *ri = atomic_load_explicit(slot, memory_order_acquire);
    if (ri) return ri;
    /* Windows of ~SST_WINDOW_RUNS * SST_ROW_INDEX_EVERY bytes whatever the
     * run size the writer used (older files: ~64 KiB runs). */
    uint64_t avg = e->len / e->n_ri + 1;
    uint32_t stride = avg >= (uint64_t)SST_WINDOW_RUNS * SST_ROW_INDEX_EVERY ? 1
                    : (uint32_t)(((uint64_t)SST_WINDOW_RUNS * SST_ROW_INDEX_EVERY) / avg);
    uint32_t nb = (e->n_ri - 1) / stride;
    size_t sz = sizeof(sst_ri) + sizeof(sst_ri_run) * (size_t)e->n_ri + (sizeof(uint8_t *) + sizeof(uint32_t)) * (size_t)(nb + 1);
    ri = cs_malloc(sz);
    if (!ri) { *rc = CS_ENOMEM; return NULL; }
    ri->runs = (sst_ri_run *)(ri + 1);
    ri->bk = (const uint8_t **)(ri->runs + e->n_ri);
    ri->bl = (uint32_t *)(ri->bk + nb + 1);
    ri->n = e->n_ri;
    ri->nb = 0;
    cs_rd x;
    cs_rd_init(&x, e->ri, e->ri_len);
    for (uint32_t k = 0; k < e->n_ri; k++) {
        sst_ri_run *u = &ri->runs[k];
        u->first = rd_bytes(&x, &u->fl);
        u->last = rd_bytes(&x, &u->ll);
        u->off = cs_rd_uvarint(&x);
        u->len = cs_rd_uvarint(&x);
        if (x.err || u->off > e->len || u->len > e->len - u->off || u->len == 0 ||
            (k && (u->off < ri->runs[k - 1].off + ri->runs[k - 1].len ||
                   st__bytes_cmp(ri->runs[k - 1].last, ri->runs[k - 1].ll, u->first, u->fl) >= 0)) ||
            st__bytes_cmp(u->first, u->fl, u->last, u->ll) > 0) {
            cs_free(ri);
            *rc = corrupt(r, "Index.db", k && !x.err ? "row index out of order" : "bad row index", 0);
            return NULL;
        }
        if (k && k % stride == 0) { ri->bk[ri->nb] = u->first; ri->bl[ri->nb] = u->fl; ri->nb++; }
    }
    sst_ri *expect = NULL;
    if (!atomic_compare_exchange_strong_explicit(slot, &expect, ri, memory_order_acq_rel, memory_order_acquire)) {
        cs_free(ri);
        ri = expect;
    }
    return ri;
}

int sst_partition_ck_range(sst_reader *r, const sst_pctx *ctx, const uint8_t **first, uint32_t *fl,
                           const uint8_t **last, uint32_t *ll)
{
    if (!ctx || ctx->state != 2 || ctx->idx >= r->n_idx) return 0;
    const sst_index_entry *e = &r->idx[ctx->idx];
    if (e->n_ri < 2) return 0;
    int rc;
    const sst_ri *ri = get_ri(r, e, &rc);
    if (!ri) return rc;
    *first = ri->runs[0].first; *fl = ri->runs[0].fl;
    *last = ri->runs[ri->n - 1].last; *ll = ri->runs[ri->n - 1].ll;
    return 1;
}

int sst_read_partition(sst_reader *r, int64_t token, const uint8_t *pk, uint32_t pk_len,
                       const st_slice *slices, int n_slices, st__part *p, cs_arena *a,
                       bool *bloom_negative)
{
    return sst_read_partition_ctx(r, token, pk, pk_len, slices, n_slices, p, a, bloom_negative, NULL, NULL);
}

static int read_entry(sst_reader *r, uint64_t i, const st_slice *slices, int n_slices, st__part *p, cs_arena *a,
                      const uint8_t *want, uint32_t want_len, bool point);

/* As sst_read_partition; ctx (zeroed by the caller, allocated in ca, which
 * must outlive a) remembers the index lookup and the parsed row index
 * across the windows of one partition. */
int sst_read_partition_ctx(sst_reader *r, int64_t token, const uint8_t *pk, uint32_t pk_len,
                           const st_slice *slices, int n_slices, st__part *p, cs_arena *a,
                           bool *bloom_negative, sst_pctx *ctx, cs_arena *ca)
{
    *bloom_negative = false;
    if (ctx && ctx->state) {
        *bloom_negative = ctx->neg;
        if (ctx->state == 1) return 0;
        int rc = read_entry(r, ctx->idx, slices, n_slices, p, a, ctx->unverified ? pk : NULL, pk_len, ctx->point);
        if (rc == 0) {                   /* another key with the same token */
            atomic_fetch_add(&r->bloom_fp, 1);
            ctx->state = 1;
        }
        if (rc >= 0) ctx->unverified = false;
        return rc;
    }
    atomic_fetch_add(&r->bloom_checks, 1);
    if (!sst__bloom_test(r->bloom, r->bloom_bits, r->bloom_k, sst__bloom_hash(pk, pk_len))) {
        *bloom_negative = true;
        if (ctx) { ctx->state = 1; ctx->neg = true; }
        return 0;
    }
    uint64_t i = idx_lower(r, token, pk, pk_len, false);
    if (i >= r->n_idx || st__key_cmp(r->idx[i].token, r->idx[i].pk, r->idx[i].pk_len, token, pk, pk_len) != 0) {
        atomic_fetch_add(&r->bloom_fp, 1);
        if (ctx) ctx->state = 1;
        return 0;
    }
    if (ctx) { ctx->state = 2; ctx->idx = i; }
    return sst__read_entry_ri(r, i, slices, n_slices, p, a, ctx ? &ctx->ri : NULL, ca);
}

int sst__read_entry(sst_reader *r, uint64_t i, const st_slice *slices, int n_slices, st__part *p, cs_arena *a)
{
    return sst__read_entry_ri(r, i, slices, n_slices, p, a, NULL, NULL);
}

/* Read index entry i restricted to slices.  ri_cache (may be NULL): the
 * parsed row index, kept in ca across calls. */
int sst__read_entry_ri(sst_reader *r, uint64_t i, const st_slice *slices, int n_slices, st__part *p, cs_arena *a,
                       void **ri_cache, cs_arena *ca)
{
    (void)ri_cache; (void)ca;
    return read_entry(r, i, slices, n_slices, p, a, NULL, 0, false);
}

/* The partition header just decoded (p) against the index entry e: 0 if
 * it is the partition wanted, 1 if it is another key with the wanted
 * token (want: the lookup matched the token alone, see
 * sst_partition_lookup), <0 if data and index disagree. */
static int check_header(sst_reader *r, const sst_index_entry *e, const st__part *p, const uint8_t *want, uint32_t want_len)
{
    if (!want) return st__bytes_cmp(p->pk, p->pk_len, e->pk, e->pk_len) ? corrupt(r, "Data.db", "bad partition header", e->pos) : 0;
    if (!st__bytes_cmp(p->pk, p->pk_len, want, want_len)) return 0;
    if (!st__bytes_cmp(e->pk, e->pk_len, want, want_len)) return corrupt(r, "Data.db", "bad partition header", e->pos);
    return 1;
}

/* Read index entry i restricted to slices: 1, or <0.  want (may be NULL):
 * the key the caller looks for, when the index entry was found by token
 * only; returns 0 if the entry holds another key. */
static int read_entry(sst_reader *r, uint64_t i, const st_slice *slices, int n_slices, st__part *p, cs_arena *a,
                      const uint8_t *want, uint32_t want_len, bool point)
{
    const sst_index_entry *e = &r->idx[i];
    const uint8_t *buf;
    int rc;
    if (n_slices == 0 || e->n_ri == 0) {
        if ((rc = read_range(r, e->pos, e->len, a, &buf, point))) return rc;
        cs_rd rd;
        cs_rd_init(&rd, buf, e->len);
        rc = sst__decode_part_header(&rd, p, a);
        if (rc == CS_ENOMEM) return rc;
        if (rc) return corrupt(r, "Data.db", "bad partition header", e->pos);
        if ((rc = check_header(r, e, p, want, want_len))) return rc < 0 ? rc : 0;
        rc = decode_rows(r, &rd, slices, n_slices, p, a, e->pos);
        p->token = e->token;
        return rc ? rc : 1;
    }
    /* Wide partition: header, then only the row index blocks the slices touch. */
    if ((rc = read_range(r, e->pos, e->hdr_len, a, &buf, point))) return rc;
    cs_rd rd;
    cs_rd_init(&rd, buf, e->hdr_len);
    rc = sst__decode_part_header(&rd, p, a);
    if (rc == CS_ENOMEM) return rc;
    if (rc) return corrupt(r, "Data.db", "bad partition header", e->pos);
    if ((rc = check_header(r, e, p, want, want_len))) return rc < 0 ? rc : 0;
    p->token = e->token;
    const sst_ri *pri = get_ri(r, e, &rc);
    if (!pri) return rc;
    const sst_ri_run *ri = pri->runs;
    for (int s = 0; s < n_slices; s++) {
        const st_slice *sl = &slices[s];
        uint32_t lo = 0, hi = e->n_ri;   /* first block whose last ck is in or after the slice start */
        while (lo < hi) {
            uint32_t mid = (lo + hi) / 2;
            if (st__after_start(ri[mid].last, ri[mid].ll, sl->start.key, sl->start.len, sl->start.inclusive)) hi = mid;
            else lo = mid + 1;
        }
        if (lo >= e->n_ri) continue;
        uint32_t end = lo;
        while (end + 1 < e->n_ri && st__before_end(ri[end + 1].first, ri[end + 1].fl, sl->end.key, sl->end.len, sl->end.inclusive)) end++;
        uint64_t from = ri[lo].off, to = ri[end].off + ri[end].len;
        if ((rc = read_range(r, e->pos + from, to - from, a, &buf, point))) return rc;
        cs_rd_init(&rd, buf, to - from);
        int before = p->n_rows;
        /* Slices are disjoint and ordered: check order only within this run. */
        st__part tmp = *p;
        tmp.rows = NULL; tmp.n_rows = tmp.cap_rows = 0;
        rc = decode_rows(r, &rd, sl, 1, &tmp, a, e->pos + from);
        if (rc) return rc;
        for (int k = 0; k < tmp.n_rows; k++)
            if (st__part_add_row(p, tmp.rows[k], a)) return CS_ENOMEM;
        (void)before;
    }
    return 1;
}

int sst_next_key(sst_reader *r, int64_t token, const uint8_t *key, uint32_t klen, bool incl,
                 int64_t end_token, int64_t *out_token, const uint8_t **out_key, uint32_t *out_len,
                 uint64_t *pos, bool resume)
{
    uint64_t i;
    if (resume && key && !incl) {
        /* From the last candidate: normally it is still after the cursor
         * or, taken, the next entry is. */
        for (i = *pos; i < r->n_idx && (r->toks[i] < token ||
                                        (r->toks[i] == token &&
                                         st__bytes_cmp(r->idx[i].pk, r->idx[i].pk_len, key, klen) <= 0));)
            i++;
    } else {
        i = idx_lower(r, token, key, klen, key ? !incl : false);
    }
    *pos = i;
    if (i >= r->n_idx || r->idx[i].token > end_token) return 0;
    *out_token = r->idx[i].token;
    *out_key = r->idx[i].pk;     /* lives as long as the reader, which the caller references */
    *out_len = r->idx[i].pk_len;
    return 1;
}

bool sst_may_contain_ck(sst_reader *r, const st_slice *slices, int n_slices)
{
    if (n_slices == 0) return true;
    if (!r->st.ck_bounds) return false;
    for (int i = 0; i < n_slices; i++) {
        const st_slice *s = &slices[i];
        /* Slice entirely before min? end bound vs min (min is a lower
         * bound: an exclusive end at it excludes every key). */
        int e = s->end.len ? st__bytes_cmp(s->end.key, s->end.len, r->st.min_ck, r->st.min_ck_len) : 1;
        bool before_min = e < 0 || (e == 0 && !s->end.inclusive);
        bool after_max = false;
        if (s->start.len) {
            uint32_t n = r->st.max_ck_truncated && s->start.len > r->st.max_ck_len ? r->st.max_ck_len : s->start.len;
            int c = st__bytes_cmp(s->start.key, n, r->st.max_ck, r->st.max_ck_len);
            after_max = r->st.max_ck_truncated ? c > 0 : (s->start.inclusive ? c > 0 : c >= 0);
        }
        if (!before_min && !after_max) return true;
    }
    return false;
}

/* Look up partition (token, pk) once for a windowed read: bloom probe and
 * index search, remembered in ctx so the window reads do not repeat them.
 * keys/lens: the window boundaries (first clustering of every
 * SST_WINDOW_RUNS-th row-index run), borrowed from the reader (valid while
 * r is referenced); *n = 0 if absent or not wide.  0 or <0. */
int sst_partition_lookup(sst_reader *r, int64_t token, const uint8_t *pk, uint32_t pk_len, sst_pctx *ctx,
                         const uint8_t *const **keys, const uint32_t **lens, int *n)
{
    sst_lookup_hint h = { r->cache_id, 0, SST_HINT_NEG };
    bool unique = true;
    if (sst__bloom_test(r->bloom, r->bloom_bits, r->bloom_k, sst__bloom_hash(pk, pk_len))) {
        /* By token first: when one entry has it (nearly always), the key is
         * compared with the partition header the read decodes anyway, which
         * saves a cache miss on the index entry's key. */
        uint64_t i = idx_lower(r, token, NULL, 0, false);
        unique = i + 1 >= r->n_idx || r->toks[i + 1] != token;
        if (i < r->n_idx && r->toks[i] == token && !unique) i = idx_lower(r, token, pk, pk_len, false);
        bool absent = i >= r->n_idx || r->toks[i] != token ||
                      (!unique && st__bytes_cmp(r->idx[i].pk, r->idx[i].pk_len, pk, pk_len) != 0);
        h.state = absent ? SST_HINT_FP : SST_HINT_AT;
        h.pos = i;
    }
    int rc = sst_partition_hinted(r, &h, ctx, keys, lens, n);
    if (h.state == SST_HINT_AT) ctx->unverified = unique;   /* else the key was compared here */
    return rc;
}

int sst_partition_known(sst_reader *r, bool found, uint64_t pos, sst_pctx *ctx,
                        const uint8_t *const **keys, const uint32_t **lens, int *n)
{
    *keys = NULL; *lens = NULL; *n = 0;
    if (!found) {
        memset(ctx, 0, sizeof *ctx);
        ctx->state = 1; ctx->neg = true;
        return 0;
    }
    if (pos >= r->n_idx) return CS_EINVAL;
    memset(ctx, 0, sizeof *ctx);
    ctx->state = 2; ctx->idx = pos;
    const sst_index_entry *e = &r->idx[pos];
    /* The read comes after the other sources' lookups and the memtable's:
     * start loading the block cache slot of the partition's first block. */
    sst__cache_prefetch(r->cache_id, e->pos / r->block_size);
    if (e->n_ri < 2) return 0;
    int rc;
    const sst_ri *ri = get_ri(r, e, &rc);
    if (!ri) return rc;
    *keys = ri->bk; *lens = ri->bl; *n = ri->nb;
    return 0;
}

int sst_partition_hinted(sst_reader *r, const sst_lookup_hint *h, sst_pctx *ctx,
                         const uint8_t *const **keys, const uint32_t **lens, int *n)
{
    atomic_fetch_add(&r->bloom_checks, 1);
    if (h->state != SST_HINT_AT) {
        *keys = NULL; *lens = NULL; *n = 0;
        memset(ctx, 0, sizeof *ctx);
        ctx->state = 1;
        ctx->neg = h->state == SST_HINT_NEG;
        if (!ctx->neg) atomic_fetch_add(&r->bloom_fp, 1);
        return 0;
    }
    int rc = sst_partition_known(r, true, h->pos, ctx, keys, lens, n);
    ctx->unverified = true;   /* found by token alone */
    return rc;
}

void sst_prefetch_bloom(sst_reader *r, uint64_t h)
{
    sst__bloom_prefetch(r->bloom, r->bloom_bits, r->bloom_k, h);
}

/* Point-lookup hints for n keys in the sstables rs, newest first (by max
 * timestamp), their bloom bytes already asked for (sst_prefetch_bloom).
 * Sstable by sstable, each stage for all the keys still open, so each
 * stage's loads arrive while the others are asked for: the bloom test and
 * the summary line the interpolation lands on; the token stretch
 * (idx_stretch); the index entry of the key's token.  A key whose token
 * one sstable holds is not looked up in the older ones: a timestamp-
 * ordered read stops there (if it does not, its own lookup finds the rest;
 * their hints say SST_HINT_NONE).  Then, for every entry found, the block
 * cache slot of its partition's first block, and its bytes there.  What
 * each lookup found goes to out[i][j] (key i, sstable j) when out is not
 * NULL, so the read need not search again (sst_partition_hinted). */
void sst_prefetch_lookups(sst_reader *const *rs, int n_rs, const int64_t *tokens, const uint64_t *hs, int n,
                          sst_lookup_hint (*out)[SST_PREFETCH_READERS])
{
    enum { MAX_R = SST_PREFETCH_READERS, MAX_K = SST_PREFETCH_LOOKUPS };
    if (n_rs > MAX_R) n_rs = MAX_R;
    if (n > MAX_K) n = MAX_K;
    uint64_t lo[MAX_K], hi[MAX_K];
    bool want[MAX_K], open[MAX_K];
    int at[MAX_K];                       /* the sstable holding key i's token, or -1 */
    uint64_t at_pos[MAX_K];
    for (int i = 0; i < n; i++) { open[i] = true; at[i] = -1; }
    if (out)
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n_rs; j++) out[i][j] = (sst_lookup_hint){ rs[j]->cache_id, 0, SST_HINT_NONE };
    for (int j = 0; j < n_rs; j++) {
        const sst_reader *r = rs[j];
        int n_want = 0;
        for (int i = 0; i < n; i++) {
            want[i] = false;
            if (!open[i]) continue;
            want[i] = r->n_idx && sst__bloom_test(r->bloom, r->bloom_bits, r->bloom_k, hs[i]);
            n_want += want[i];
            uint64_t g = want[i] ? sorted_guess(r->sum, r->n_sum, tokens[i]) : 0;
            if (g) __builtin_prefetch(&r->sum[g]);
            /* an sstable with no entries: bloom_bits 0 tests positive */
            if (out && r->n_idx && !want[i]) out[i][j].state = SST_HINT_NEG;
        }
        if (!n_want) continue;
        for (int i = 0; i < n; i++)
            if (want[i]) idx_stretch(r, tokens[i], &lo[i], &hi[i]);
        for (int i = 0; i < n; i++) {
            if (!want[i]) continue;
            uint64_t k = bisect_lower(r->toks, lo[i], hi[i], tokens[i]);
            bool has = k < r->n_idx && r->toks[k] == tokens[i];
            if (!has) {
                if (out) out[i][j].state = SST_HINT_FP;
                continue;
            }
            __builtin_prefetch(&r->idx[k]);
            open[i] = false;
            at[i] = j;
            at_pos[i] = k;
            /* as sst_partition_lookup: the token's only entry (several
             * entries share it: the read compares keys itself) */
            if (out && (k + 1 >= r->n_idx || r->toks[k + 1] != tokens[i])) {
                out[i][j].state = SST_HINT_AT;
                out[i][j].pos = k;
            }
        }
    }
    for (int i = 0; i < n; i++)
        if (at[i] >= 0) sst__cache_prefetch(rs[at[i]]->cache_id, rs[at[i]]->idx[at_pos[i]].pos / rs[at[i]]->block_size);
    /* the slots have arrived: the bytes the reads will copy */
    for (int i = 0; i < n; i++)
        if (at[i] >= 0) sst_prefetch_partition(rs[at[i]], at_pos[i]);
}

void sst_prefetch_partition(sst_reader *r, uint64_t pos)
{
    if (pos >= r->n_idx) return;
    const sst_index_entry *e = &r->idx[pos];
    uint64_t off = e->pos % r->block_size;
    uint64_t n = e->len < r->block_size - off ? e->len : r->block_size - off;
    sst__cache_prefetch_bytes(r->cache_id, e->pos / r->block_size, (uint32_t)off, (uint32_t)n);
}

/* As sst_partition_lookup without a memo; keys copied into a. */
int sst_partition_bounds(sst_reader *r, int64_t token, const uint8_t *pk, uint32_t pk_len, cs_arena *a,
                         const uint8_t ***keys, uint32_t **lens, int *n)
{
    sst_pctx ctx;
    const uint8_t *const *k; const uint32_t *l;
    *keys = NULL; *lens = NULL;
    int rc = sst_partition_lookup(r, token, pk, pk_len, &ctx, &k, &l, n);
    if (rc || !*n) return rc;
    *keys = cs_arena_memdup(a, k, sizeof(*k) * (size_t)*n);
    *lens = cs_arena_memdup(a, l, sizeof(*l) * (size_t)*n);
    return *keys && *lens ? 0 : CS_ENOMEM;
}
