/*
 * test_storage_sstable.c: sstables through the engine: wide partitions and
 * the row index, values across block edges, empty and large values, and
 * corruption of every component (clean error naming the file, no crash).
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "storage/storage.h"
#include "storage/sstable.h"
#include "storage/sstable_int.h"
#include "common/alloc.h"
#include "common/hash.h"
#include "common/err.h"
#include "common/vfs.h"
#include "test_log_capture.h"

#define STORAGE_FIXTURE_TAG "st_sst"
#define STORAGE_FIXTURE_TID { 7, 7, 7, 7, 7, 7, 7, 7, 1, 1, 1, 1, 1, 1, 1, 1 }
#include "test_storage_fixture.h"

static st_engine *eopen(void)
{
    st_config cfg;
    fixture_config(&cfg);
    st_engine *e;
    cr_assert_eq(st_engine_open(&cfg, &e), 0);
    return e;
}

static void ck_of(uint32_t i, uint8_t ck[4]) { ck[0] = i >> 24; ck[1] = i >> 16; ck[2] = i >> 8; ck[3] = i; }

/* One partition of n rows with value size vsz, flushed. */
static void write_wide(st_engine *e, st_table *t, uint32_t n, uint32_t vsz)
{
    uint8_t *v = cs_malloc(vsz + 1);
    uint8_t pk[3] = { 'p', 'k', '1' };
    for (uint32_t i = 0; i < n; i += 100) {
        st_mutation *m = st_mutation_new();
        st_mut_partition(m, t, pk, 3);
        for (uint32_t j = i; j < i + 100 && j < n; j++) {
            uint8_t ck[4];
            ck_of(j, ck);
            memset(v, (int)(j & 0xff), vsz);
            if (vsz >= 4) ck_of(j, v);
            st_mut_row(m, ck, 4, 0);
            st_mut_row_liveness(m, (st_liveness){ 10, 0, 0 });
            st_cell c = { .col = 1, .ts_us = 10, .val = v, .val_len = vsz };
            st_mut_cell(m, &c);
        }
        cr_assert_eq(st_write(e, m, NULL), 0);
        st_mutation_free(m);
    }
    cs_free(v);
    cr_assert_eq(st_table_flush(t), 0);
}

static int read_slice(st_table *t, uint32_t a, uint32_t b, bool rev, uint32_t vsz, st_scan_stats *stats)
{
    uint8_t pk[3] = { 'p', 'k', '1' };
    uint8_t s[4], en[4];
    ck_of(a, s); ck_of(b, en);
    st_slice sl = { { s, 4, true }, { en, 4, true } };
    st_read_spec rs = { .pk = pk, .pk_len = 3, .slices = &sl, .n_slices = 1, .reversed = rev };
    st_scan *sc;
    cr_assert_eq(st_scan_open(t, &rs, &sc), 0);
    st_partition_view p;
    int n = 0;
    if (st_scan_next_partition(sc, &p) == 1) {
        st_row_view r;
        uint32_t expect = rev ? b : a;
        while (st_scan_next_row(sc, &r) == 1) {
            uint8_t ck[4];
            ck_of(expect, ck);
            cr_assert(!memcmp(r.ck, ck, 4), "row %u out of order", expect);
            cr_assert_eq(r.n_cells, 1);
            cr_assert_eq(r.cells[0].val_len, vsz);
            if (vsz >= 4) cr_assert(!memcmp(r.cells[0].val, ck, 4));
            expect = rev ? expect - 1 : expect + 1;
            n++;
        }
    }
    if (stats) *stats = *st_scan_stats_get(sc);
    st_scan_close(sc);
    return n;
}

TestSuite(storage_sstable, .init = setup, .fini = teardown);

Test(storage_sstable, wide_partition_slice_reads_few_blocks, .timeout = 60)
{
    st_engine *e = eopen();
    st_table *t;
    cr_assert_eq(st_table_open(e, TID, "ks", "wide", NULL, &t), 0);
    write_wide(e, t, 20000, 200);
    cr_assert_eq(read_slice(t, 10000, 10009, false, 200, NULL), 10);
    cr_assert_eq(read_slice(t, 10000, 10009, true, 200, NULL), 10);
    cr_assert_eq(read_slice(t, 0, 19999, false, 200, NULL), 20000);
    cr_assert_eq(read_slice(t, 19990, 30000, false, 200, NULL), 10);
    /* Blocks decompressed by a narrow slice: a handful, not the ~250 of the partition. */
    pthread_mutex_lock(&t->mu);
    sst_reader *r = t->ssts[0];
    pthread_mutex_unlock(&t->mu);
    uint64_t before = atomic_load(&r->blocks_read);
    st_scan_stats st;
    cr_assert_eq(read_slice(t, 15000, 15001, false, 200, &st), 2);
    uint64_t used = atomic_load(&r->blocks_read) - before;
    cr_assert_leq(used, 8, "slice read %llu blocks", (unsigned long long)used);
    cr_assert_eq(st.sstables_read, 1);
    st_engine_close(e, false);
    cr_assert_eq(cs_alloc_count(), 0);
}

Test(storage_sstable, value_sizes_and_block_edges)
{
    uint32_t sizes[] = { 0, 1, SST_BLOCK_SIZE - 1, SST_BLOCK_SIZE, SST_BLOCK_SIZE + 1, 3 * SST_BLOCK_SIZE + 7, 1 << 20 };
    st_engine *e = eopen();
    for (unsigned i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        uint8_t id[16];
        memcpy(id, TID, 16);
        id[15] = (uint8_t)(i + 10);
        char name[32];
        snprintf(name, sizeof name, "v%u", i);
        st_table *t;
        cr_assert_eq(st_table_open(e, id, "ks", name, NULL, &t), 0);
        uint32_t n = sizes[i] > 100000 ? 5 : 40;
        write_wide(e, t, n, sizes[i]);
        cr_assert_eq(read_slice(t, 0, n - 1, false, sizes[i], NULL), (int)n);
        char **paths; int np;
        cr_assert_eq(st_table_sstables(t, &paths, &np), 0);
        cr_assert_eq(np, 1);
        cr_assert_eq(sst_verify(paths[0], NULL), 0);
        st_paths_free(paths, np);
    }
    st_engine_close(e, false);
    cr_assert_eq(cs_alloc_count(), 0);
}

/* Flip one byte of file `comp` at relative position frac and reopen. */
static int corrupt_and_open(const char *comp, double frac, int *verify_rc)
{
    st_engine *e = eopen();
    st_table *t;
    cr_assert_eq(st_table_open(e, TID, "ks", "c", NULL, &t), 0);
    write_wide(e, t, 3000, 100);
    char dir[600];
    snprintf(dir, sizeof dir, "%s", st_table_dir(t));
    st_engine_close(e, false);
    char p[800];
    snprintf(p, sizeof p, "%s/cs-1-%s", dir, comp);
    int64_t sz = vfs_file_size(p);
    cr_assert_gt(sz, 0, "%s", p);
    uint64_t off = (uint64_t)((double)(sz - 1) * frac);
    int fd = open(p, O_RDWR);
    uint8_t b;
    cr_assert_eq(pread(fd, &b, 1, (off_t)off), 1);
    b ^= 0x5a;
    cr_assert_eq(pwrite(fd, &b, 1, (off_t)off), 1);
    close(fd);
    *verify_rc = sst_verify(p, NULL);
    e = eopen();
    int rc = st_table_open(e, TID, "ks", "c", NULL, &t);
    if (rc == 0) {
        /* Data corruption shows on read. */
        st_read_spec rs = { .start_token = INT64_MIN, .end_token = INT64_MAX };
        st_scan *s;
        cr_assert_eq(st_scan_open(t, &rs, &s), 0);
        st_partition_view pv;
        st_row_view r;
        while ((rc = st_scan_next_partition(s, &pv)) == 1) {
            int k;
            while ((k = st_scan_next_row(s, &r)) == 1) {}
            if (k < 0) { rc = k; break; }
        }
        st_scan_close(s);
    }
    st_engine_close(e, false);
    vfs_rmtree(g_dir);
    return rc;
}

Test(storage_sstable, corruption_is_detected, .timeout = 60)
{
    const char *comps[] = { "Data.db", "Index.db", "Filter.db", "Statistics.db" };
    double fracs[] = { 0.0, 0.01, 0.5, 0.99, 1.0 };
    for (int c = 0; c < 4; c++)
        for (int f = 0; f < 5; f++) {
            int vrc;
            int rc = corrupt_and_open(comps[c], fracs[f], &vrc);
            cr_assert_eq(vrc, CS_ECORRUPT, "%s at %.2f: verify returned %d", comps[c], fracs[f], vrc);
            cr_assert_eq(rc, CS_ECORRUPT, "%s at %.2f: open/read returned %d", comps[c], fracs[f], rc);
        }
    cr_assert_eq(cs_alloc_count(), 0);
}

/* Read every row of table t: 0, or the first error. */
static int scan_all(st_table *t, int *rows)
{
    st_read_spec rs = { .start_token = INT64_MIN, .end_token = INT64_MAX };
    st_scan *s;
    cr_assert_eq(st_scan_open(t, &rs, &s), 0);
    st_partition_view pv;
    st_row_view r;
    int rc, k = 0;
    *rows = 0;
    while ((rc = st_scan_next_partition(s, &pv)) == 1) {
        while ((k = st_scan_next_row(s, &r)) == 1) (*rows)++;
        if (k < 0) { rc = k; break; }
    }
    st_scan_close(s);
    return rc;
}

/* scan_all with stderr (the log) captured into log[cap]. */
static int scan_all_logged(st_table *t, int *rows, char *log, size_t cap)
{
    char lp[400];
    snprintf(lp, sizeof lp, "%s.log", g_dir);
    test_log_capture c;
    log_capture_begin(&c, lp);
    int rc = scan_all(t, rows);
    log_capture_end(&c, log, cap);
    return rc;
}

/* A Data.db truncated (at a page edge) while its reader has it mapped:
 * reading past the new end is a corruption error naming the file (mapped:
 * the SIGBUS is caught; read with pread: a short read), never a crash, and
 * the blocks still there read as before. */
static void truncated_under_reader(const char *mmap_env, const char *want)
{
    setenv("CASSETTE_SSTABLE_MMAP", mmap_env, 1);
    st_engine *e = eopen();
    st_table *t;
    cr_assert_eq(st_table_open(e, TID, "ks", "tr", NULL, &t), 0);
    write_wide(e, t, 3000, 100);
    st_engine_close(e, false);
    e = eopen();
    cr_assert_eq(st_table_open(e, TID, "ks", "tr", NULL, &t), 0);
    char p[800];
    snprintf(p, sizeof p, "%s/cs-1-Data.db", st_table_dir(t));
    int64_t sz = vfs_file_size(p);
    cr_assert_gt(sz, 3 * 8192, "%s: %lld bytes", p, (long long)sz);
    cr_assert_eq(truncate(p, sz / 3 / 4096 * 4096), 0);
    int rows;
    char log[4096];
    cr_assert_eq(scan_all_logged(t, &rows, log, sizeof log), CS_ECORRUPT, "MMAP=%s", mmap_env);
    cr_assert(strstr(log, want) && strstr(log, "cs-1-Data.db"), "MMAP=%s: %s", mmap_env, log);
    cr_assert_gt(rows, 0, "MMAP=%s: rows before the cut", mmap_env);
    cr_assert_lt(rows, 3000, "MMAP=%s", mmap_env);
    /* again: the same error, the same rows (cached or re-read) */
    int again;
    cr_assert_eq(scan_all(t, &again), CS_ECORRUPT);
    cr_assert_eq(again, rows);
    st_engine_close(e, false);
    vfs_rmtree(g_dir);
    unsetenv("CASSETTE_SSTABLE_MMAP");
}

Test(storage_sstable, data_truncated_while_open_mapped, .timeout = 60)
{
    truncated_under_reader("1", "corruption: block past the end of the file (truncated while open)");
    cr_assert_eq(cs_alloc_count(), 0);
}

Test(storage_sstable, data_truncated_while_open_pread, .timeout = 60)
{
    truncated_under_reader("0", "corruption: truncated block");
    cr_assert_eq(cs_alloc_count(), 0);
}

Test(storage_sstable, dump_prints_rows)
{
    st_engine *e = eopen();
    st_table *t;
    cr_assert_eq(st_table_open(e, TID, "ks", "d", NULL, &t), 0);
    write_wide(e, t, 3, 4);
    char **paths; int np;
    cr_assert_eq(st_table_sstables(t, &paths, &np), 0);
    char *buf; size_t len;
    FILE *f = open_memstream(&buf, &len);
    cr_assert_eq(sst_dump(paths[0], f), 0);
    fclose(f);
    cr_assert(strstr(buf, "ck=00000002") != NULL, "%s", buf);
    free(buf);   /* raw-ok: open_memstream */
    f = open_memstream(&buf, &len);
    cr_assert_eq(sst_metadata(paths[0], f), 0);
    fclose(f);
    cr_assert(strstr(buf, "Rows: 3") != NULL, "%s", buf);
    free(buf);   /* raw-ok: open_memstream */
    st_paths_free(paths, np);
    st_engine_close(e, false);
    cr_assert_eq(cs_alloc_count(), 0);
}

/* Random single-byte flips in every binary component: sst_verify must
 * report corruption every time (every byte is under a checksum) and never
 * crash. */
Test(storage_sstable, fuzz_flips, .timeout = 120)
{
    st_engine *e = eopen();
    st_table *t;
    cr_assert_eq(st_table_open(e, TID, "ks", "fz", NULL, &t), 0);
    write_wide(e, t, 2000, 50);
    char dir[600];
    snprintf(dir, sizeof dir, "%s", st_table_dir(t));
    st_engine_close(e, false);
    const char *comps[] = { "Data.db", "Index.db", "Filter.db", "Statistics.db" };
    unsigned seed = 12345;
    for (int c = 0; c < 4; c++) {
        char p[800];
        snprintf(p, sizeof p, "%s/cs-1-%s", dir, comps[c]);
        uint8_t *orig; size_t n;
        cr_assert_eq(vfs_read_all(p, &orig, &n), 0);
        for (int k = 0; k < 60; k++) {
            size_t off = (size_t)rand_r(&seed) % n;
            uint8_t bit = (uint8_t)(1u << (rand_r(&seed) % 8));
            orig[off] ^= bit;
            int fd = open(p, O_WRONLY | O_TRUNC);
            cr_assert_eq(write(fd, orig, n), (ssize_t)n);
            close(fd);
            int rc = sst_verify(p, NULL);
            cr_assert_eq(rc, CS_ECORRUPT, "%s: flip at %zu not detected (%d)", comps[c], off, rc);
            orig[off] ^= bit;
        }
        int fd = open(p, O_WRONLY | O_TRUNC);
        cr_assert_eq(write(fd, orig, n), (ssize_t)n);
        close(fd);
        cs_free(orig);
        cr_assert_eq(sst_verify(p, NULL), 0);
    }
    /* Truncated files. */
    char p[800];
    snprintf(p, sizeof p, "%s/cs-1-Data.db", dir);
    cr_assert_eq(truncate(p, vfs_file_size(p) - 1), 0);
    cr_assert_eq(sst_verify(p, NULL), CS_ECORRUPT);
    cr_assert_eq(cs_alloc_count(), 0);
}

/* Found by fuzz_sstable: sst_verify read each partition whole and so never
 * looked at the row index that slices (and the engine's windowed reads of
 * wide partitions) go through.  A row index run cut short, in an Index.db
 * whose CRC still checks, read fine in verify and failed in every query. */
Test(storage_sstable, verify_checks_the_row_index, .timeout = 60)
{
    st_engine *e = eopen();
    st_table *t;
    cr_assert_eq(st_table_open(e, TID, "ks", "ri", NULL, &t), 0);
    write_wide(e, t, 2000, 50);            /* ~110 KB: a row index */
    char p[800];
    snprintf(p, sizeof p, "%s/cs-1-Index.db", st_table_dir(t));
    st_engine_close(e, false);
    cr_assert_eq(sst_verify(p, NULL), 0);
    uint8_t *b; size_t n;
    cr_assert_eq(vfs_read_all(p, &b, &n), 0);
    /* The one entry: key, token, pos, len, hdr_len, n_ri, row index bytes;
     * the first run is first_ck, last_ck, offset, length. */
    cs_rd r;
    cs_rd_init(&r, b + SST_FILE_HDR, n - SST_FILE_HDR);
    uint64_t kl = cs_rd_uvarint(&r);
    r.pos += (size_t)kl + 8;
    for (int i = 0; i < 3; i++) (void)cs_rd_uvarint(&r);
    cr_assert_gt(cs_rd_uvarint(&r), 1, "no row index");
    (void)cs_rd_uvarint(&r);                /* row index length */
    uint8_t first[16], last[16];
    uint64_t fl = cs_rd_uvarint(&r);
    cr_assert_leq(fl, 16);
    memcpy(first, cs_rd_take(&r, (size_t)fl), (size_t)fl);
    uint64_t ll = cs_rd_uvarint(&r);
    cr_assert_leq(ll, 16);
    memcpy(last, cs_rd_take(&r, (size_t)ll), (size_t)ll);
    (void)cs_rd_uvarint(&r);                /* offset */
    size_t at = SST_FILE_HDR + r.pos;
    while (b[at] & 0x80) at++;              /* the length's last byte */
    cr_assert_eq(r.err, 0);
    cr_assert_gt(b[at], 0);
    b[at]--;                                /* the first run 128 (or 1) bytes short */
    cs_st32(b + n - 4, cs_crc32c(0, b, n - 4));
    int fd = open(p, O_WRONLY | O_TRUNC);
    cr_assert_eq(write(fd, b, n), (ssize_t)n);
    close(fd);
    cs_free(b);
    int vrc = sst_verify(p, NULL);
    cr_assert_eq(vrc, CS_ECORRUPT, "verify: %d", vrc);
    /* ... as a query of the first run's rows finds. */
    e = eopen();
    cr_assert_eq(st_table_open(e, TID, "ks", "ri", NULL, &t), 0);
    uint8_t pk[3] = { 'p', 'k', '1' };
    st_slice sl = { { first, (uint32_t)fl, true }, { last, (uint32_t)ll, true } };
    st_read_spec rs = { .pk = pk, .pk_len = 3, .slices = &sl, .n_slices = 1 };
    st_scan *sc;
    cr_assert_eq(st_scan_open(t, &rs, &sc), 0);
    st_partition_view pv;
    st_row_view rv;
    int k = st_scan_next_partition(sc, &pv);
    while (k == 1) k = st_scan_next_row(sc, &rv);
    cr_assert_eq(k, CS_ECORRUPT);
    st_scan_close(sc);
    st_engine_close(e, false);
    cr_assert_eq(cs_alloc_count(), 0);
}

/* Rewrite the only entry of Index.db at p so that it points at logical
 * position pos for len bytes (the varints may change size: the chunk
 * table and footer move, the CRC is recomputed). */
static void rewrite_entry(const char *p, int which, uint64_t v0, uint64_t v1);
static void set_entry_span(const char *p, uint64_t pos, uint64_t len) { rewrite_entry(p, 0, pos, len); }
/* ... or its row index count (which = 1: v0; v1 unused). */
static void set_entry_nri(const char *p, uint64_t n_ri) { rewrite_entry(p, 1, n_ri, 0); }

static void rewrite_entry(const char *p, int which, uint64_t v0, uint64_t v1)
{
    uint8_t *b; size_t n;
    cr_assert_eq(vfs_read_all(p, &b, &n), 0);
    const uint8_t *f = b + n - 36;
    uint64_t n_entries = cs_be64(f), chunks_off = cs_be64(f + 8), n_chunks = cs_be64(f + 16);
    uint64_t logical = cs_be64(f + 24);
    cr_assert_eq(n_entries, 1);
    cs_rd r;
    cs_rd_init(&r, b + SST_FILE_HDR, chunks_off - SST_FILE_HDR);
    uint64_t kl = cs_rd_uvarint(&r);
    r.pos += (size_t)kl + 8;
    if (which == 1)                          /* past pos, len, hdr_len */
        for (int i = 0; i < 3; i++) (void)cs_rd_uvarint(&r);
    size_t at = r.pos;                       /* which 0: pos, len; 1: n_ri, replaced */
    (void)cs_rd_uvarint(&r);
    if (which == 0) (void)cs_rd_uvarint(&r);
    cr_assert_eq(r.err, 0);
    cs_buf o;
    cs_buf_init(&o);
    cs_buf_put(&o, b, SST_FILE_HDR + at);
    cs_buf_put_uvarint(&o, v0);
    if (which == 0) cs_buf_put_uvarint(&o, v1);
    cs_buf_put(&o, b + SST_FILE_HDR + r.pos, chunks_off - SST_FILE_HDR - r.pos);
    uint64_t new_off = o.len;
    cs_buf_put(&o, b + chunks_off, 8 * (size_t)(n_chunks + 1));
    cs_buf_put_u64(&o, n_entries);
    cs_buf_put_u64(&o, new_off);
    cs_buf_put_u64(&o, n_chunks);
    cs_buf_put_u64(&o, logical);
    cs_buf_put_u32(&o, cs_crc32c(0, o.p, o.len));
    int fd = open(p, O_WRONLY | O_TRUNC);
    cr_assert_eq(write(fd, o.p, o.len), (ssize_t)o.len);
    close(fd);
    cs_buf_destroy(&o);
    cs_free(b);
}

/* An index entry whose position plus length wraps past 2^64 passed the
 * "entry points outside data" check (pos + len <= logical, computed
 * modulo 2^64), and a read of it returned 16 bytes of memory never
 * written (no block lies in the wrapped range) as the partition. */
Test(storage_sstable, index_entry_span_wrapping_is_corrupt)
{
    st_engine *e = eopen();
    st_table *t;
    cr_assert_eq(st_table_open(e, TID, "ks", "wrap", NULL, &t), 0);
    write_wide(e, t, 3, 10);
    char p[800];
    snprintf(p, sizeof p, "%s/cs-1-Index.db", st_table_dir(t));
    st_engine_close(e, false);
    set_entry_span(p, UINT64_MAX - 7, 16);
    cr_assert_eq(sst_verify(p, NULL), CS_ECORRUPT);
    e = eopen();
    cr_assert_eq(st_table_open(e, TID, "ks", "wrap", NULL, &t), CS_ECORRUPT);
    st_engine_close(e, false);
    cr_assert_eq(cs_alloc_count(), 0);
}

/* A row index count larger than its bytes can hold: each run takes at
 * least 4 bytes, so a count the row index cannot hold is corrupt at open,
 * not an allocation of count * 48 bytes when a slice first reads it (2^24
 * runs: 800 MB asked for by a 100-byte file; 2^32 + 1 read as 1). */
Test(storage_sstable, row_index_count_is_checked_against_its_bytes)
{
    const uint64_t counts[] = { 1u << 24, (1ull << 32) + 1 };
    for (int i = 0; i < 2; i++) {
        st_engine *e = eopen();
        st_table *t;
        cr_assert_eq(st_table_open(e, TID, "ks", "nri", NULL, &t), 0);
        write_wide(e, t, 3, 10);
        char p[800];
        snprintf(p, sizeof p, "%s/cs-1-Index.db", st_table_dir(t));
        st_engine_close(e, false);
        set_entry_nri(p, counts[i]);
        e = eopen();
        cr_assert_eq(st_table_open(e, TID, "ks", "nri", NULL, &t), CS_ECORRUPT, "n_ri %llu",
                     (unsigned long long)counts[i]);
        st_engine_close(e, false);
        vfs_rmtree(g_dir);
    }
    cr_assert_eq(cs_alloc_count(), 0);
}

/* A full read of a wide partition streams window by window: all rows, in
 * order both ways, with memtable overrides merged in, and memory bounded
 * well below the partition's size. */
Test(storage_sstable, wide_partition_full_read_is_streamed, .timeout = 60)
{
    setenv("CASSETTE_BLOCK_CACHE_MB", "0", 1);
    st_engine *e = eopen();
    st_table *t;
    cr_assert_eq(st_table_open(e, TID, "ks", "stream", NULL, &t), 0);
    write_wide(e, t, 20000, 200);          /* ~4.4 MB partition, flushed */
    /* Overwrite a few rows in the memtable with a later timestamp, add a static row. */
    uint8_t pk[3] = { 'p', 'k', '1' };
    st_mutation *m = st_mutation_new();
    st_mut_partition(m, t, pk, 3);
    st_mut_row(m, NULL, 0, ST_ROW_STATIC);
    st_cell sc = { .col = 9, .ts_us = 50, .val = (const uint8_t *)"S", .val_len = 1 };
    st_mut_cell(m, &sc);
    for (uint32_t j = 0; j < 20000; j += 997) {
        uint8_t ck[4];
        ck_of(j, ck);
        st_mut_row(m, ck, 4, 0);
        st_cell c = { .col = 1, .ts_us = 20, .val = (const uint8_t *)"new", .val_len = 3 };
        st_mut_cell(m, &c);
    }
    cr_assert_eq(st_write(e, m, NULL), 0);
    st_mutation_free(m);
    for (int rev = 0; rev < 2; rev++) {
        st_read_spec rs = { .pk = pk, .pk_len = 3, .reversed = rev, .include_static = true };
        st_scan *sc2;
        cr_assert_eq(st_scan_open(t, &rs, &sc2), 0);
        st_partition_view p;
        cr_assert_eq(st_scan_next_partition(sc2, &p), 1);
        size_t base = cs_alloc_used(), peak = 0;
        st_row_view r;
        int n = 0, news = 0;
        cr_assert_eq(st_scan_next_row(sc2, &r), 1);
        cr_assert(r.flags & ST_ROW_STATIC, "static row first");
        uint32_t expect = rev ? 19999 : 0;
        while (st_scan_next_row(sc2, &r) == 1) {
            uint8_t ck[4];
            ck_of(expect, ck);
            cr_assert(!memcmp(r.ck, ck, 4), "rev %d: row %u out of order", rev, expect);
            if (r.cells[0].val_len == 3) { news++; cr_assert_eq(expect % 997, 0); }
            expect = rev ? expect - 1 : expect + 1;
            n++;
            size_t u = cs_alloc_used();
            if (u > peak) peak = u;
        }
        cr_assert_eq(n, 20000);
        cr_assert_eq(news, 21);
        cr_assert_lt(peak > base ? peak - base : 0, (size_t)1 << 20, "read buffered %zu bytes", peak - base);
        st_scan_close(sc2);
    }
    st_engine_close(e, false);
    unsetenv("CASSETTE_BLOCK_CACHE_MB");
    cr_assert_eq(cs_alloc_count(), 0);
}

/* The bloom filter's bits are the format's (h1 + i * h2) % nbits
 * (docs/format/sstable.md): sst__bloom_test steps them without a division
 * per bit and must agree with the formula, for filters of any size. */
Test(storage_sstable, bloom_bits_match_the_format)
{
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int round = 0; round < 2000; round++) {
        x ^= x >> 12; x ^= x << 25; x ^= x >> 27;
        uint64_t h = x * 2685821657736338717ull;
        uint64_t nbits = 8 + (x % 5000000) * 8;
        if (round % 7 == 0) nbits = 64;
        if (round == 11 || round == 1111) nbits = 8ull << 30;   /* the largest filter the writer makes */
        uint32_t k = 1 + (uint32_t)(x % 20);
        size_t bytes = (size_t)(nbits / 8);
        uint8_t *bits = cs_calloc(1, bytes);
        cr_assert_not_null(bits);
        uint64_t h1 = h & 0xffffffffu, h2 = (h >> 32) | 1, want[20];
        for (uint32_t i = 0; i < k; i++) {
            want[i] = (h1 + (uint64_t)i * h2) % nbits;
            bits[want[i] >> 3] |= (uint8_t)(1u << (want[i] & 7));
        }
        cr_assert(sst__bloom_test(bits, nbits, k, h), "round %d", round);
        /* Clear one of the key's bits (not shared with another): absent. */
        uint64_t drop = want[round % k];
        bool shared = false;
        for (uint32_t i = 0; i < k; i++) if (i != (uint32_t)(round % k) && want[i] == drop) shared = true;
        if (!shared) {
            bits[drop >> 3] &= (uint8_t)~(1u << (drop & 7));
            cr_assert(!sst__bloom_test(bits, nbits, k, h), "round %d", round);
        }
        cs_free(bits);
    }
    cr_assert_eq(cs_alloc_count(), 0);
}

/* The summary search (sst__sorted_lower: interpolation, galloping, then
 * bisection) finds exactly what a plain bisection finds, for evenly spread
 * tokens (what Murmur3 gives), skewed and clustered ones, runs of equal
 * tokens, the ring's ends, and every probe between and around the values. */
static uint64_t ref_lower(const int64_t *a, uint64_t n, int64_t v)
{
    uint64_t lo = 0, hi = n;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (a[mid] < v) lo = mid + 1; else hi = mid;
    }
    return lo;
}

static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return a < b ? -1 : a > b;
}

Test(storage_sstable, summary_search_matches_bisection)
{
    uint64_t x = 0x9E3779B97F4A7C15ull;
#define RND() (x ^= x << 13, x ^= x >> 7, x ^= x << 17, x)
    static int64_t a[5000];
    for (int shape = 0; shape < 6; shape++)
        for (uint64_t n = 0; n <= 5000; n = n < 70 ? n + 1 : n * 3 + 7) {
            for (uint64_t i = 0; i < n; i++) {
                uint64_t r = RND();
                switch (shape) {
                case 0: a[i] = (int64_t)r; break;                                   /* even */
                case 1: a[i] = (int64_t)(r >> 40) * (int64_t)(r >> 40) - (1ll << 40); break;   /* skewed */
                case 2: a[i] = (r & 1) ? INT64_MIN + (int64_t)(r % 1000) : INT64_MAX - (int64_t)(r % 1000); break;
                case 3: a[i] = (int64_t)(r % 7); break;                              /* runs of equals */
                case 4: a[i] = i < n / 2 ? INT64_MIN : INT64_MAX; break;
                default: a[i] = (int64_t)(r % 100000) * 1000; break;                 /* clustered */
                }
            }
            qsort(a, n, sizeof a[0], cmp_i64);
            for (uint64_t i = 0; i < n; i++)
                for (int d = -1; d <= 1; d++) {
                    if ((d < 0 && a[i] == INT64_MIN) || (d > 0 && a[i] == INT64_MAX)) continue;
                    int64_t v = a[i] + d;
                    cr_assert_eq(sst__sorted_lower(a, n, v), ref_lower(a, n, v), "shape %d n %lu v %ld", shape,
                                 (unsigned long)n, (long)v);
                }
            for (int k = 0; k < 200; k++) {
                int64_t v = k < 2 ? (k ? INT64_MAX : INT64_MIN) : (int64_t)RND();
                cr_assert_eq(sst__sorted_lower(a, n, v), ref_lower(a, n, v), "shape %d n %lu v %ld", shape,
                             (unsigned long)n, (long)v);
            }
        }
#undef RND
}

/* ---------------------------------------------------------------- packed rows
 *
 * Flush encodes a memtable row still in its written form straight from its
 * op bytes (sst_writer_row_ops).  A memtable flushed that way and flushed
 * with every row decoded first (the sink declining them all: the way it
 * replaces) must give the same bytes in every component, for every kind of
 * op, in the shapes one write gives (encoded directly) and in others
 * (declined, then decoded). */

typedef struct pk_sink {
    sst_writer *w;
    bool decline_all;
    uint64_t packed, declined;
} pk_sink;

static int pk_begin(void *a, const st__part *p) { return sst_writer_begin(((pk_sink *)a)->w, p); }
static int pk_rows(void *a, st__row *const *rows, int n) { return sst_writer_rows(((pk_sink *)a)->w, rows, n); }
static int pk_end(void *a) { return sst_writer_end(((pk_sink *)a)->w); }

static int pk_packed(void *a, const uint8_t *ck, uint32_t ck_len, uint8_t flags, const uint8_t *ops,
                     uint32_t ops_len, uint32_t n_cells)
{
    pk_sink *s = a;
    int rc = s->decline_all ? 1 : sst_writer_row_ops(s->w, ck, ck_len, flags, ops, ops_len, n_cells);
    if (rc == 1) s->declined++;
    else if (rc == 0) s->packed++;
    return rc;
}

/* Flush m as generation 1 in dir; the sink's counts in *out. */
static void pk_flush(mt_memtable *m, const char *dir, bool decline_all, pk_sink *out)
{
    cr_assert_eq(vfs_mkdirs(dir), 0);
    pk_sink s = { NULL, decline_all, 0, 0 };
    cr_assert_eq(sst_writer_open(dir, 1, 0.01, mt_partitions(m) + 1, &s.w), 0);
    mt_sink sink = { pk_begin, pk_packed, pk_rows, pk_end, &s };
    cr_assert_eq(mt_foreach(m, &sink), 0);
    sst_reader *r, *d;
    cr_assert_eq(sst_writer_finish(s.w, (st_clog_pos){ 3, 4 }, 0, &r), 0);
    /* The writer's reader (Index.db taken over from memory) is the one
     * opened from the files. */
    cr_assert_eq(sst_reader_open(dir, 1, &d), 0);
    cr_assert(r->idx_len == d->idx_len && memcmp(r->idx_buf, d->idx_buf, d->idx_len) == 0);
    cr_assert(r->n_idx == d->n_idx && r->n_chunks == d->n_chunks && r->logical == d->logical);
    cr_assert(r->block_size == d->block_size && r->n_ri_slots == d->n_ri_slots && r->n_sum == d->n_sum);
    cr_assert_eq(memcmp(r->chunks, d->chunks, sizeof *d->chunks * (d->n_chunks + 1)), 0);
    cr_assert_eq(memcmp(r->toks, d->toks, sizeof *d->toks * d->n_idx), 0);
    for (uint64_t i = 0; i < d->n_idx; i++) {
        const sst_index_entry *x = &r->idx[i], *y = &d->idx[i];
        cr_assert(x->pk - r->idx_buf == y->pk - d->idx_buf && x->pk_len == y->pk_len && x->pos == y->pos &&
                  x->len == y->len && x->hdr_len == y->hdr_len && x->n_ri == y->n_ri && x->ri_len == y->ri_len &&
                  x->ri_slot == y->ri_slot, "entry %" PRIu64, i);
    }
    cr_assert_eq(memcmp(&r->st, &d->st, sizeof d->st), 0);
    sst_reader_unref(d);
    sst_reader_unref(r);
    char *data = sst__path(dir, 1, "Data.db", false);
    cr_assert_eq(sst_verify(data, NULL), 0);
    cs_free(data);
    *out = s;
}

/* Flush m both ways and compare the components; returns the direct
 * flush's counts. */
static pk_sink pk_compare(mt_memtable *m, const char *what)
{
    char a[400], b[400];
    snprintf(a, sizeof a, "%s/packed", g_dir);
    snprintf(b, sizeof b, "%s/decoded", g_dir);
    vfs_rmtree(a);
    vfs_rmtree(b);
    pk_sink sa, sb;
    cr_assert_eq(mt_check(m), 0, "%s", what);
    pk_flush(m, a, false, &sa);
    pk_flush(m, b, true, &sb);
    cr_assert_eq(sa.packed + sa.declined, sb.declined, "%s", what);
    static const char *comps[] = { "Data.db", "Index.db", "Filter.db", "Statistics.db" };
    for (int i = 0; i < 4; i++) {
        char *pa = sst__path(a, 1, comps[i], false), *pb = sst__path(b, 1, comps[i], false);
        uint8_t *x, *y;
        size_t nx, ny;
        cr_assert_eq(vfs_read_all(pa, &x, &nx), 0);
        cr_assert_eq(vfs_read_all(pb, &y, &ny), 0);
        cr_assert(nx == ny && memcmp(x, y, nx) == 0, "%s: %s differs (%zu vs %zu bytes)", what, comps[i], nx, ny);
        cs_free(x); cs_free(y); cs_free(pa); cs_free(pb);
    }
    vfs_rmtree(a);
    vfs_rmtree(b);
    return sa;
}

static void pk_apply(mt_memtable *m, st_mutation *mu)
{
    cr_assert_eq(mu->err, 0);
    cs_rd r;
    cs_rd_init(&r, mu->ops.p, mu->ops.len);
    st__op op;
    while (cs_rd_left(&r)) {
        cr_assert_eq(st__op_next(&r, &op), 1);
        cr_assert_eq(op.kind, ST__OP_PARTITION);
        size_t added;
        cr_assert_eq(mt_apply(m, cs_murmur3_token(op.pk, op.pk_len), op.pk, op.pk_len, &r, &added), 0);
    }
}

static st_table pk_table;   /* st_mut_partition needs only its id */

/* One write of one row, shaped by `shape`, to a fresh memtable: which
 * shapes are encoded directly and which are declined. */
static void pk_shape(int shape, uint64_t *packed, uint64_t *declined)
{
    mt_memtable *m = mt_new(NULL);
    st_mutation *mu = st_mutation_new();
    uint8_t pk[4] = { 'k', (uint8_t)shape, 0, 1 }, ck[3] = { 1, 2, (uint8_t)shape }, val[8] = { 0, 0, 0, 0, 0, 0, 0, 42 };
    uint8_t path[2] = { 9, (uint8_t)shape }, path2[3] = { 9, (uint8_t)shape, 0 };
    st_mut_partition(mu, &pk_table, pk, sizeof pk);
    st_mut_row(mu, ck, sizeof ck, 0);
    st_cell plain = { .col = 2, .ts_us = 1700000000000000 + shape, .val = val, .val_len = 5 };
    st_cell ttl = { .col = 3, .flags = ST_CELL_EXPIRING, .ts_us = 5, .ttl_s = 600, .ldt_s = 1700000600, .val = val, .val_len = 3 };
    st_cell tomb = { .col = 4, .flags = ST_CELL_TOMBSTONE, .ts_us = -7, .ldt_s = 1700000000 };
    st_cell counter = { .col = 5, .flags = ST_CELL_COUNTER, .ts_us = 99, .val = val, .val_len = 8 };
    st_cell complex = { .col = 6, .ts_us = 100, .path = path, .path_len = 2, .val = val, .val_len = 1 };
    st_cell empty = { .col = 7, .ts_us = 100 };
    switch (shape) {
    case 0: /* an INSERT: marker and cells */
        st_mut_row_liveness(mu, (st_liveness){ 1700000000000000, 0, 0 });
        st_mut_cell(mu, &plain); st_mut_cell(mu, &ttl); st_mut_cell(mu, &counter); st_mut_cell(mu, &empty);
        break;
    case 1: /* INSERT ... USING TTL: expiring marker */
        st_mut_row_liveness(mu, (st_liveness){ 77, 600, 1700000700 });
        st_mut_cell(mu, &ttl);
        break;
    case 2: /* DELETE of a row */
        st_mut_row_delete(mu, (st_deletion){ 1234, 1700000000 });
        break;
    case 3: /* collection overwrite: complex deletions then cells */
        st_mut_complex_delete(mu, 6, (st_deletion){ 99, 1700000000 });
        st_mut_complex_delete(mu, 8, (st_deletion){ 99, 1700000000 });
        st_mut_cell(mu, &complex);
        complex.path = path2; complex.path_len = 3;
        st_mut_cell(mu, &complex);
        break;
    case 4: /* cell tombstones only */
        st_mut_cell(mu, &tomb);
        tomb.col = 9; tomb.ldt_s = 1800000000;
        st_mut_cell(mu, &tomb);
        break;
    case 5: /* everything, in order */
        st_mut_row_liveness(mu, (st_liveness){ -5, 0, 0 });
        st_mut_row_delete(mu, (st_deletion){ -6, 0 });
        st_mut_complex_delete(mu, 6, (st_deletion){ INT64_MIN, INT32_MIN });
        st_mut_cell(mu, &plain); st_mut_cell(mu, &tomb); st_mut_cell(mu, &complex);
        break;
    case 6: /* an empty row (no ops) */
        break;
    case 14: /* an UPDATE: cells, no marker */
        st_mut_cell(mu, &plain); st_mut_cell(mu, &ttl);
        break;
    case 7: /* declined: cells out of order */
        st_mut_cell(mu, &ttl); st_mut_cell(mu, &plain);
        break;
    case 8: /* declined: the same cell twice */
        st_mut_cell(mu, &plain); plain.ts_us++; st_mut_cell(mu, &plain);
        break;
    case 9: /* declined: two markers */
        st_mut_row_liveness(mu, (st_liveness){ 5, 0, 0 });
        st_mut_row_liveness(mu, (st_liveness){ 6, 0, 0 });
        break;
    case 10: /* declined: a marker after a cell */
        st_mut_cell(mu, &plain);
        st_mut_row_liveness(mu, (st_liveness){ 5, 0, 0 });
        break;
    case 11: /* declined: complex deletions of one column twice */
        st_mut_complex_delete(mu, 6, (st_deletion){ 99, 1 });
        st_mut_complex_delete(mu, 6, (st_deletion){ 100, 1 });
        break;
    case 12: /* declined: a marker at no timestamp (merged, it is none) */
        st_mut_row_liveness(mu, (st_liveness){ INT64_MIN, 0, 0 });
        st_mut_cell(mu, &plain);
        break;
    case 13: /* declined: droppable cells of more than 8 days in turn */
        for (int i = 0; i < 10; i++) {
            tomb.col = 10 + (uint32_t)i;
            tomb.ldt_s = 1700000000 + (i % 2 ? 86400 * 3 : 0);
            st_mut_cell(mu, &tomb);
        }
        break;
    }
    pk_apply(m, mu);
    st_mutation_free(mu);
    /* a partition that is just a static row (a full row: always decoded) */
    mu = st_mutation_new();
    pk[3] = 2;
    st_mut_partition(mu, &pk_table, pk, sizeof pk);
    st_mut_row(mu, NULL, 0, ST_ROW_STATIC);
    tomb.col = 1;
    st_mut_cell(mu, &tomb);
    pk_apply(m, mu);
    st_mutation_free(mu);
    char what[32];
    snprintf(what, sizeof what, "shape %d", shape);
    pk_sink s = pk_compare(m, what);
    *packed = s.packed;
    *declined = s.declined;
    mt_unref(m);
}

Test(storage_sstable, packed_rows_encode_as_decoded_shapes)
{
    for (int shape = 0; shape <= 14; shape++) {
        uint64_t packed, declined;
        pk_shape(shape, &packed, &declined);
        bool direct = shape <= 6 || shape == 14;
        cr_assert_eq(packed, direct ? 1u : 0u, "shape %d", shape);
        cr_assert_eq(declined, direct ? 0u : 1u, "shape %d", shape);
    }
    cr_assert_eq(cs_alloc_count(), 0);
}

/* Random writes: every op kind, some rows written twice (full rows), keys
 * of a pool (partitions written again, deletions, range tombstones, static
 * rows), drop times over 100 days (the statistics' 64-day list merges),
 * clusterings past the 256 bytes the statistics keep, and one wide
 * partition (row index runs). */
Test(storage_sstable, packed_rows_encode_as_decoded_random, .timeout = 120)
{
    uint64_t x = 0x2545F4914F6CDD1Dull;
#define PRND() (x ^= x << 13, x ^= x >> 7, x ^= x << 17, x)
    for (int round = 0; round < 4; round++) {
        mt_memtable *m = mt_new(NULL);
        uint8_t val[400], path[8], ck[300], pk[12];
        for (size_t i = 0; i < sizeof val; i++) val[i] = (uint8_t)PRND();
        int writes = round == 3 ? 200 : 3000;
        for (int wi = 0; wi < writes; wi++) {
            st_mutation *mu = st_mutation_new();
            uint32_t pkl = 1 + (uint32_t)(PRND() % sizeof pk);
            uint64_t id = PRND() % 1500;
            for (uint32_t i = 0; i < pkl; i++) pk[i] = (uint8_t)(id >> (i % 8 * 3));
            if (round == 3) { pkl = 3; memcpy(pk, "big", 3); }
            st_mut_partition(mu, &pk_table, pk, pkl);
            if (PRND() % 20 == 0) st_mut_partition_delete(mu, (st_deletion){ (int64_t)(PRND() % 1000000), (int32_t)(1700000000 + PRND() % 100 * 86400) });
            if (PRND() % 25 == 0) {
                uint8_t s0 = (uint8_t)PRND(), s1 = (uint8_t)(s0 + PRND() % 8);
                st_mut_range_delete(mu, (st_bound){ &s0, 1, PRND() % 2 }, (st_bound){ &s1, 1, PRND() % 2 },
                                    (st_deletion){ (int64_t)(PRND() % 1000), 1700000000 });
            }
            int n_rows = round == 3 ? 100 : (int)(PRND() % 4);
            for (int ri = -1; ri < n_rows; ri++) {
                if (ri < 0) {
                    if (PRND() % 10) continue;
                    st_mut_row(mu, NULL, 0, ST_ROW_STATIC);
                } else {
                    uint32_t ckl = PRND() % 30 == 0 ? 257 + (uint32_t)(PRND() % 40) : (uint32_t)(PRND() % 5);
                    uint64_t cid = PRND() % 8;
                    if (round == 3) { ckl = 4; cid = (uint64_t)wi * 100 + (uint64_t)ri; }
                    for (uint32_t i = 0; i < ckl; i++) ck[i] = (uint8_t)(ckl - 1 - i < 8 ? cid >> (8 * (ckl - 1 - i)) : 0);
                    st_mut_row(mu, ck, ckl, 0);
                }
                bool mixed = PRND() % 20 == 0;      /* kinds out of order */
                int order[4] = { 0, 1, 2, 3 };
                if (mixed) for (int i = 3; i > 0; i--) { int j = (int)(PRND() % (uint64_t)(i + 1)), t = order[i]; order[i] = order[j]; order[j] = t; }
                for (int k = 0; k < 4; k++) {
                    switch (order[k]) {
                    case 0:
                        if (PRND() % 10 < 7) {
                            bool t = PRND() % 5 == 0;
                            st_mut_row_liveness(mu, (st_liveness){ (int64_t)(PRND() % 2000000) - 1000, t ? 3600 : 0,
                                                                   t ? (int32_t)(1700000000 + PRND() % 100 * 86400) : 0 });
                            if (PRND() % 30 == 0) st_mut_row_liveness(mu, (st_liveness){ (int64_t)(PRND() % 2000), 0, 0 });
                        }
                        break;
                    case 1:
                        if (PRND() % 10 == 0) st_mut_row_delete(mu, (st_deletion){ (int64_t)(PRND() % 1000), (int32_t)(1700000000 + PRND() % 100 * 86400) });
                        break;
                    case 2:
                        if (PRND() % 10 == 0) {
                            uint32_t c = 10 + (uint32_t)(PRND() % 3);
                            int n = 1 + (int)(PRND() % 3);
                            for (int i = 0; i < n; i++, c += PRND() % 30 == 0 ? 0 : 1 + (uint32_t)(PRND() % 3))
                                st_mut_complex_delete(mu, c, (st_deletion){ (int64_t)(PRND() % 1000), (int32_t)(1700000000 + PRND() % 100 * 86400) });
                        }
                        break;
                    case 3: {
                        int n = (int)(PRND() % 7);
                        uint32_t col = (uint32_t)(PRND() % 12);
                        for (int i = 0; i < n; i++) {
                            st_cell c = { .col = col, .ts_us = (int64_t)(PRND() % 4000000000000ull) - 2000000000000ll };
                            uint64_t kind = PRND() % 20;
                            if (kind < 2) { c.flags = ST_CELL_TOMBSTONE; c.ldt_s = (int32_t)(1700000000 + PRND() % 100 * 86400); }
                            else if (kind < 4) { c.flags = ST_CELL_EXPIRING; c.ttl_s = 60; c.ldt_s = (int32_t)(1700000000 + PRND() % 100 * 86400); }
                            else if (kind < 5) { c.flags = ST_CELL_COUNTER; c.val = val; c.val_len = 8; }
                            if (!(c.flags & (ST_CELL_TOMBSTONE | ST_CELL_COUNTER))) {
                                c.val_len = PRND() % 10 == 0 ? 0 : (uint32_t)(PRND() % 300);
                                c.val = c.val_len ? val + PRND() % 100 : NULL;
                            }
                            if (col >= 10) {
                                c.path_len = 1 + (uint32_t)(PRND() % 4);
                                for (uint32_t j = 0; j < c.path_len; j++) path[j] = (uint8_t)(i * 16 + (int)j);
                                c.path = path;
                            }
                            st_mut_cell(mu, &c);
                            uint64_t step = PRND() % 25;
                            if (step == 0) col = col > 0 ? col - 1 : 0;           /* out of order, or the same cell again */
                            else if (step > 12 && col >= 10) { /* next path of the same complex column */ }
                            else col += 1 + (uint32_t)(PRND() % 3);
                        }
                        break;
                    }
                    }
                }
            }
            pk_apply(m, mu);
            st_mutation_free(mu);
        }
        char what[32];
        snprintf(what, sizeof what, "round %d", round);
        pk_sink s = pk_compare(m, what);
        cr_assert_gt(s.packed, 100u, "%s: %" PRIu64 " packed", what, s.packed);
        if (round < 3) cr_assert_gt(s.declined, 0u, "%s", what);
        mt_unref(m);
    }
#undef PRND
    cr_assert_eq(cs_alloc_count(), 0);
}

/* Varints of every width in a packed row's fields (timestamps, TTLs,
 * deletion times, columns, lengths), at each width's bounds and of both
 * signs, are encoded directly and give the decoded way's bytes. */
Test(storage_sstable, packed_rows_varint_widths)
{
    mt_memtable *m = mt_new(NULL);
    uint8_t val[300];
    memset(val, 'x', sizeof val);
    int rows = 0;
    for (int k = 0; k <= 63; k++) {
        int64_t mag = (int64_t)((k == 63 ? 0 : 1ull << k) - 1) + (k == 63 ? INT64_MAX : 0);
        int64_t tss[4] = { mag, -mag, mag + 1, -mag - 1 };
        for (int j = 0; j < 4; j++) {
            int64_t ts = tss[j];
            if (ts == INT64_MIN) continue;            /* no marker: declined (shape 12) */
            st_mutation *mu = st_mutation_new();
            uint8_t pk[3] = { 'w', (uint8_t)k, (uint8_t)j };
            st_mut_partition(mu, &pk_table, pk, sizeof pk);
            st_mut_row(mu, NULL, 0, 0);
            int32_t t32 = (int32_t)(k < 31 ? ts : ts > 0 ? INT32_MAX : INT32_MIN);
            st_mut_row_liveness(mu, (st_liveness){ ts, t32, t32 });
            st_cell c = { .col = (uint32_t)(k < 32 ? (1ull << k) - 1 : UINT32_MAX), .flags = ST_CELL_EXPIRING,
                          .ts_us = ts, .ttl_s = t32, .ldt_s = t32, .val = val, .val_len = (uint32_t)(k * 4) };
            st_mut_cell(mu, &c);
            pk_apply(m, mu);
            st_mutation_free(mu);
            rows++;
        }
    }
    pk_sink s = pk_compare(m, "varint widths");
    cr_assert_eq(s.packed, (uint64_t)rows);
    cr_assert_eq(s.declined, 0u);
    mt_unref(m);
    cr_assert_eq(cs_alloc_count(), 0);
}

/* Op bytes not in the shortest form, or cut short, are declined with
 * nothing written. */
Test(storage_sstable, packed_rows_decline_odd_bytes)
{
    char dir[400];
    snprintf(dir, sizeof dir, "%s/odd", g_dir);
    cr_assert_eq(vfs_mkdirs(dir), 0);
    sst_writer *w;
    cr_assert_eq(sst_writer_open(dir, 1, 0.01, 10, &w), 0);
    st__part p = { .pk = (const uint8_t *)"k", .pk_len = 1, .token = cs_murmur3_token("k", 1), .pdel = ST_NO_DELETION };
    cr_assert_eq(sst_writer_begin(w, &p), 0);
    /* CELL col 1, flags 0, ts 1700000000000000 (8 bytes), ttl 0, ldt 0, no path, value "v" */
    uint8_t good[] = { ST__OP_CELL, 1, 0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0, 0, 0, 1, 'v' };
    cs_buf b;
    cs_buf_init(&b);
    cs_buf_put_svarint(&b, 1700000000000000);
    cr_assert_eq(b.len, 8u);
    memcpy(good + 3, b.p, 8);
    cs_buf_destroy(&b);
    uint8_t ops[32];
    /* the ts with a padding byte (9 bytes, value unchanged) */
    memcpy(ops, good, 3);
    memcpy(ops + 3, good + 3, 8);
    ops[10] |= 0x80;
    ops[11] = 0;
    memcpy(ops + 12, good + 11, sizeof good - 11);
    cr_assert_eq(sst_writer_row_ops(w, NULL, 0, 0, ops, sizeof good + 1, 1), 1);
    /* a one-byte column padded to two */
    uint8_t pad[sizeof good + 1];
    pad[0] = ST__OP_CELL; pad[1] = 0x81; pad[2] = 0;
    memcpy(pad + 3, good + 2, sizeof good - 2);
    cr_assert_eq(sst_writer_row_ops(w, NULL, 0, 0, pad, sizeof pad, 1), 1);
    /* cut short anywhere */
    for (uint32_t n = 1; n < sizeof good; n++) cr_assert_eq(sst_writer_row_ops(w, NULL, 0, 0, good, n, 1), 1, "cut at %u", n);
    /* a cell count that does not match */
    cr_assert_eq(sst_writer_row_ops(w, NULL, 0, 0, good, sizeof good, 2), 1);
    /* an unknown op */
    uint8_t odd[] = { 9, 0 };
    cr_assert_eq(sst_writer_row_ops(w, NULL, 0, 0, odd, sizeof odd, 0), 1);
    cr_assert_eq(sst_writer_row_ops(w, NULL, 0, 0, good, sizeof good, 1), 0);
    cr_assert_eq(sst_writer_end(w), 0);
    sst_reader *r;
    cr_assert_eq(sst_writer_finish(w, (st_clog_pos){ 0, 0 }, 0, &r), 0);
    cr_assert_eq(r->st.rows, 1u);
    cr_assert_eq(r->st.cells, 1u);
    cr_assert_eq(r->st.min_ts, 1700000000000000);
    cs_arena a;
    cs_arena_init(&a);
    st__part out;
    bool neg;
    cr_assert_eq(sst_read_partition(r, p.token, p.pk, 1, NULL, 0, &out, &a, &neg), 1);
    cr_assert_eq(out.n_rows, 1);
    cr_assert_eq(out.rows[0]->n_cells, 1);
    cr_assert_eq(out.rows[0]->cells[0].ts_us, 1700000000000000);
    cr_assert_eq(out.rows[0]->cells[0].val_len, 1u);
    cs_arena_destroy(&a);
    sst_reader_unref(r);
    cr_assert_eq(cs_alloc_count(), 0);
}

/* The writer sets a key's bloom bits without dividing (bloom_start): the
 * reader's test (the format's formula) finds every key, for filters of
 * many sizes. */
Test(storage_sstable, bloom_bits_of_the_writer_match_the_format, .timeout = 60)
{
    static const uint64_t expect[] = { 1, 2, 3, 7, 100, 999, 12345, 65537, 1000003, 30000000 };
    for (size_t t = 0; t < sizeof expect / sizeof expect[0]; t++) {
        char dir[400];
        snprintf(dir, sizeof dir, "%s/bloom%zu", g_dir, t);
        cr_assert_eq(vfs_mkdirs(dir), 0);
        sst_writer *w;
        cr_assert_eq(sst_writer_open(dir, 1, t % 2 ? 0.1 : 0.001, expect[t], &w), 0);
        /* keys in token order */
        enum { N = 300 };
        static struct { int64_t tok; uint8_t k[8]; } keys[N];
        for (int i = 0; i < N; i++) {
            for (int j = 0; j < 8; j++) keys[i].k[j] = (uint8_t)(i * 131 + j * 7 + (int)t);
            keys[i].tok = cs_murmur3_token(keys[i].k, 8);
        }
        for (int i = 1; i < N; i++)
            for (int j = i; j > 0 && keys[j - 1].tok > keys[j].tok; j--) {
                __typeof__(keys[0]) x = keys[j]; keys[j] = keys[j - 1]; keys[j - 1] = x;
            }
        for (int i = 0; i < N; i++) {
            if (i && keys[i].tok == keys[i - 1].tok) continue;
            st__part p = { .pk = keys[i].k, .pk_len = 8, .token = keys[i].tok, .pdel = ST_NO_DELETION };
            cr_assert_eq(sst_writer_add(w, &p), 0);
        }
        sst_reader *r;
        cr_assert_eq(sst_writer_finish(w, (st_clog_pos){ 0, 0 }, 0, &r), 0);
        for (int i = 0; i < N; i++)
            cr_assert(sst__bloom_test(r->bloom, r->bloom_bits, r->bloom_k, sst__bloom_hash(keys[i].k, 8)),
                      "%" PRIu64 " bits: key %d", r->bloom_bits, i);
        sst_reader_unref(r);
    }
    cr_assert_eq(cs_alloc_count(), 0);
}

/* Write o to path with its CRC-32C appended (a component's trailer);
 * destroys o. */
static void write_with_crc(const char *path, cs_buf *o)
{
    uint8_t crc[4];
    cs_st32(crc, cs_crc32c(0, o->p, o->len));
    cs_buf_put(o, crc, 4);
    FILE *f = fopen(path, "wb");
    cr_assert(f);
    cr_assert_eq(fwrite(o->p, 1, o->len, f), o->len);
    fclose(f);
    cs_buf_destroy(o);
}

/* Rewrite the Statistics.db at path as version 1 wrote it: 96 buckets per
 * histogram and no overflow bucket (what lay past offset 95 counted in 95). */
static void stats_to_v1(const char *path)
{
    uint8_t *b;
    size_t n;
    cr_assert_eq(vfs_read_all(path, &b, &n), 0);
    cr_assert_eq(cs_be32(b + 4), SST_STATS_VERSION);
    size_t pos = SST_FILE_HDR + 8 + 8 + 4 + 8 * 5 + 8 + 8 + 4 + 8 + 8 + 8 + 1;
    pos += 4 + cs_be32(b + pos);                  /* min_ck */
    pos += 4 + cs_be32(b + pos);                  /* max_ck */
    cs_rd rd;
    cs_rd_init(&rd, b + pos, n - 4 - pos);
    uint64_t h[2][SST_SIZE_BUCKETS + 1];
    int nb[2] = { SST_SIZE_BUCKETS + 1, SST_CELL_BUCKETS + 1 };
    for (int k = 0; k < 2; k++) {
        cr_assert_eq(cs_rd_uvarint(&rd), (uint64_t)nb[k]);
        for (int i = 0; i < nb[k]; i++) h[k][i] = cs_rd_uvarint(&rd);
    }
    cr_assert_eq(rd.err, 0);
    cs_buf o;
    cs_buf_init(&o);
    cs_buf_put(&o, b, pos);
    cs_st32(o.p + 4, 1);
    for (int k = 0; k < 2; k++) {
        uint64_t tail = 0;
        for (int i = 95; i < nb[k]; i++) tail += h[k][i];
        for (int i = 0; i < 96; i++) cs_buf_put_uvarint(&o, i < 95 ? h[k][i] : tail);
    }
    cs_buf_put(&o, b + pos + rd.pos, n - 4 - pos - rd.pos);
    write_with_crc(path, &o);
    cs_free(b);
}

static int bucket_of(const uint64_t *off, int n, uint64_t v)
{
    for (int i = 0; i < n; i++)
        if (off[i] >= v) return i;
    return n;
}

/* Partition size and cells-per-partition histograms of Cassandra's sizes
 * (EstimatedHistogram(150) and (118), each with an overflow bucket): an
 * 80 MB partition is counted in its own bucket, not in the 75 MB one the
 * 96 buckets of version 1 stopped at; tablestats' min/max/mean are
 * EstimatedHistogram's min() (one past the bucket below), max() and
 * ceil(mean); a version-1 Statistics.db still reads. */
Test(storage_sstable, partition_histograms_of_cassandras_sizes, .timeout = 120)
{
    uint64_t off[SST_SIZE_BUCKETS];
    st_hist_offsets(off, SST_SIZE_BUCKETS);
    static const uint64_t first[] = { 1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 17, 20, 24, 29, 35, 42, 50, 60, 72, 86, 103 };
    for (int i = 0; i < (int)(sizeof first / sizeof first[0]); i++) cr_assert_eq(off[i], first[i]);
    cr_assert_eq(off[95], 74975550u);                    /* version 1's last bucket */
    cr_assert_eq(off[SST_CELL_BUCKETS - 1], 4139110981u); /* MetadataCollector: "> 4B cells" */
    /* MetadataCollector's comment says 150 buckets track 1697806495183; that
     * is the 151st offset: newOffsets(150) ends one before it */
    cr_assert_eq(off[SST_SIZE_BUCKETS - 1], 1414838745986u);
    uint64_t c[SST_SIZE_BUCKETS + 1] = { 0 };
    sst__hist_add(c, off, SST_SIZE_BUCKETS, 0);
    sst__hist_add(c, off, SST_SIZE_BUCKETS, 103);
    sst__hist_add(c, off, SST_SIZE_BUCKETS, 104);
    sst__hist_add(c, off, SST_SIZE_BUCKETS, off[SST_SIZE_BUCKETS - 1] + 1);
    cr_assert(c[0] == 1 && c[21] == 1 && c[22] == 1 && c[SST_SIZE_BUCKETS] == 1);
    cr_assert_eq(st_hist_max(c, off, SST_SIZE_BUCKETS), (uint64_t)INT64_MAX);
    cr_assert_eq(sst__hist_count(c, SST_SIZE_BUCKETS), 4);
    c[0] = 0;
    cr_assert_eq(st_hist_min(c, off, SST_SIZE_BUCKETS), 87);   /* one past offset 86 */
    cr_assert_eq(sst__hist_mean(c, off, SST_SIZE_BUCKETS), 114); /* ceil((103 + 124) / 2), overflow left out */

    st_engine *e = eopen();
    st_table *t;
    cr_assert_eq(st_table_open(e, TID, "ks", "hist", NULL, &t), 0);
    st_mutation *m = st_mutation_new();
    uint8_t pk2[3] = { 'p', 'k', '2' }, ck[4];
    st_mut_partition(m, t, pk2, 3);
    ck_of(7, ck);
    st_mut_row(m, ck, 4, 0);
    st_mut_row_liveness(m, (st_liveness){ 10, 0, 0 });
    st_cell cell = { .col = 1, .ts_us = 10, .val = ck, .val_len = 4 };
    st_mut_cell(m, &cell);
    cr_assert_eq(st_write(e, m, NULL), 0);
    st_mutation_free(m);
    write_wide(e, t, 1000, 80000);                       /* pk1: 80 MB, 1000 cells; flushed with pk2 */
    for (int round = 0; round < 3; round++) {
        st_histogram hb, hc;
        cr_assert_eq(st_table_partition_histograms(t, &hb, &hc), 0);
        cr_assert_eq(hb.n, SST_SIZE_BUCKETS);
        cr_assert_eq(hc.n, SST_CELL_BUCKETS);
        int big = -1, small = -1, nz = 0;
        for (int i = 0; i <= hb.n; i++) {
            if (!hb.counts[i]) continue;
            nz++;
            if (small < 0) small = i; else big = i;
        }
        cr_assert_eq(nz, 2, "round %d", round);
        cr_assert_lt(small, 25, "small partition in bucket %d", small);   /* up to 179 bytes */
        st_table_stats ts;
        cr_assert_eq(st_table_stats_get(t, &ts), 0);
        if (round < 2) {
            /* 80,000,000 value bytes and the rows' own: bucket 97 (89,970,660) */
            cr_assert_eq(big, bucket_of(off, SST_SIZE_BUCKETS, 80000000 + 1000 * 4), "round %d: bucket %d", round, big);
            cr_assert_eq(hb.offsets[big], 89970660u);
            cr_assert_eq(ts.max_partition_bytes, 89970660u);
            cr_assert_eq(ts.mean_partition_bytes, (off[small] + 89970660u + 1) / 2);
            cr_assert_eq(hc.counts[bucket_of(off, SST_CELL_BUCKETS, 1000)], 1);
            cr_assert_eq(hc.counts[bucket_of(off, SST_CELL_BUCKETS, 1)], 1);
        } else {
            cr_assert_eq(big, 95, "version 1: bucket %d", big);
            cr_assert_eq(ts.max_partition_bytes, 74975550u);
        }
        cr_assert_eq(ts.min_partition_bytes, small ? off[small - 1] + 1 : 0);
        st_engine_close(e, false);
        if (round == 1) {
            char p[800];
            snprintf(p, sizeof p, "%s/ks/hist-07070707070707070101010101010101/cs-1-Statistics.db", g_d);
            if (access(p, F_OK) != 0) {
                /* the table directory's layout is the engine's: find it */
                e = eopen();
                cr_assert_eq(st_table_open(e, TID, "ks", "hist", NULL, &t), 0);
                snprintf(p, sizeof p, "%s/cs-1-Statistics.db", st_table_dir(t));
                st_engine_close(e, false);
            }
            stats_to_v1(p);
        }
        e = eopen();
        cr_assert_eq(st_table_open(e, TID, "ks", "hist", NULL, &t), 0);
    }
    int rows;
    cr_assert_eq(scan_all(t, &rows), 0);
    cr_assert_eq(rows, 1001);
    st_engine_close(e, false);
    vfs_rmtree(g_dir);
    cr_assert_eq(cs_alloc_count(), 0);
}

/* ---------------------------------------------------------------- drop-time histogram */

/* Rewrite the Statistics.db at path as versions 1 and 2 ended it: the
 * drop list as n days (ldt / 86400) and counts. */
static void stats_drop_days(const char *path, uint32_t version, const uint32_t *days, const uint64_t *cnt, int n)
{
    uint8_t *b;
    size_t len;
    cr_assert_eq(vfs_read_all(path, &b, &len), 0);
    cr_assert_geq(cs_be32(b + 4), 2);                /* the same layout up to the drop list */
    size_t pos = SST_FILE_HDR + 8 + 8 + 4 + 8 * 5 + 8 + 8 + 4 + 8 + 8 + 8 + 1;
    pos += 4 + cs_be32(b + pos);                  /* min_ck */
    pos += 4 + cs_be32(b + pos);                  /* max_ck */
    cs_rd rd;
    cs_rd_init(&rd, b + pos, len - 4 - pos);
    for (int k = 0; k < 2; k++) {                 /* the histograms, then the ancestors */
        uint64_t nb = cs_rd_uvarint(&rd);
        for (uint64_t i = 0; i < nb; i++) cs_rd_uvarint(&rd);
    }
    uint64_t na = cs_rd_uvarint(&rd);
    for (uint64_t i = 0; i < na; i++) cs_rd_uvarint(&rd);
    cr_assert_eq(rd.err, 0);
    cs_buf o;
    cs_buf_init(&o);
    cs_buf_put(&o, b, pos + rd.pos);
    cs_st32(o.p + 4, version);
    cs_buf_put_uvarint(&o, (uint64_t)n);
    for (int i = 0; i < n; i++) { cs_buf_put_uvarint(&o, days[i]); cs_buf_put_uvarint(&o, cnt[i]); }
    write_with_crc(path, &o);
    cs_free(b);
}

/* Local deletion times are kept as Cassandra's TombstoneHistogram keeps
 * them: rounded up to a minute, at most 100 bins (the nearest two merged
 * into their weighted mean, rounded up), and summed up to gc_before with
 * the trapezoid across the bin pair around it; a flush's counts match
 * what it wrote, and the days of a version 2 file read as the points at
 * their ends. */
Test(storage_sstable, drop_time_histogram)
{
    cr_assert_eq(sst__drop_point(60), 60);
    cr_assert_eq(sst__drop_point(61), 120);
    cr_assert_eq(sst__drop_point(0), 0);
    cr_assert_eq(sst__drop_point(-5), 0);
    cr_assert_eq(sst__drop_point(INT32_MAX - 5), INT32_MAX - 1);
    sst_stats s;
    memset(&s, 0, sizeof s);
    for (int i = 1; i <= SST_DROP_BINS; i++) sst__drop_bins_add(&s, i * 600, 1);
    cr_assert_eq(s.n_drop, SST_DROP_BINS);
    sst__drop_bins_add(&s, 600, 2);                         /* an existing point: counted there */
    cr_assert_eq(s.n_drop, SST_DROP_BINS);
    cr_assert_eq(s.drop_cnt[0], 3);
    sst__drop_bins_add(&s, SST_DROP_BINS * 600 + 60, 1);    /* 60 s from the last: those two merge */
    cr_assert_eq(s.n_drop, SST_DROP_BINS);
    cr_assert_eq(s.drop_pt[SST_DROP_BINS - 1], SST_DROP_BINS * 600 + 60, "mean 60030, rounded up");
    cr_assert_eq(s.drop_cnt[SST_DROP_BINS - 1], 2);
    uint64_t total = 0;
    for (int i = 0; i < s.n_drop; i++) total += s.drop_cnt[i];
    cr_assert_eq(total, SST_DROP_BINS + 3);

    memset(&s, 0, sizeof s);
    sst__drop_bins_add(&s, 600, 10);
    sst__drop_bins_add(&s, 1200, 30);
    cr_assert_float_eq(sst__droppable_before(&s, 599), 0.0, 1e-9);
    /* a bin is the centre of its mass: at its point it counts half, but
     * for the last bin (nothing after it to interpolate towards) */
    cr_assert_float_eq(sst__droppable_before(&s, 600), 5.0, 1e-9);
    /* halfway: (10 + 20) * 0.5 / 2 + 10 / 2 */
    cr_assert_float_eq(sst__droppable_before(&s, 900), 12.5, 1e-9);
    cr_assert_float_eq(sst__droppable_before(&s, 1200), 40.0, 1e-9);
    cr_assert_float_eq(sst__droppable_ratio(&s, 1200), 0.0, 1e-9, "no cells counted: ratio 0");
    s.cell_hist[3] = 8;                                     /* 8 partitions of 4 cells: 32 cells */
    cr_assert_float_eq(sst__droppable_ratio(&s, 1200), 40.0 / 32, 1e-9);

    /* Through the writer: three partition deletions a second apart (one
     * minute point), a TTL'd cell with its marker (another). */
    char dir[300];
    snprintf(dir, sizeof dir, "%s/dropt", g_dir);
    cr_assert_eq(vfs_mkdirs(dir), 0);
    sst_writer *w;
    cr_assert_eq(sst_writer_open(dir, 1, 0.01, 4, &w), 0);
    const int32_t T = 1700000040;                           /* a multiple of 60 */
    struct { int64_t tok; char k[4]; } keys[4];
    for (int i = 0; i < 4; i++) {
        keys[i].k[0] = 'd';
        keys[i].k[1] = (char)('0' + i);
        keys[i].tok = cs_murmur3_token(keys[i].k, 2);
    }
    for (int i = 1; i < 4; i++)
        for (int j = i; j > 0 && keys[j - 1].tok > keys[j].tok; j--) { __typeof__(keys[0]) x = keys[j]; keys[j] = keys[j - 1]; keys[j - 1] = x; }
    for (int i = 0; i < 4; i++) {
        st__part p = { .pk = (const uint8_t *)keys[i].k, .pk_len = 2, .token = keys[i].tok, .pdel = ST_NO_DELETION };
        st__row row = { .ck = (const uint8_t *)"c", .ck_len = 1, .lv = { INT64_MIN, 0, 0 }, .del = ST_NO_DELETION };
        st__row *rows[1] = { &row };
        st_cell c = { .col = 1, .flags = ST_CELL_EXPIRING, .ts_us = 5, .ttl_s = 100, .ldt_s = T + 3600, .val = (const uint8_t *)"v", .val_len = 1 };
        if (i < 3) p.pdel = (st_deletion){ 7, T + 1 + i };
        else { row.lv = (st_liveness){ 5, 100, T + 3600 }; row.cells = &c; row.n_cells = 1; p.rows = rows; p.n_rows = 1; }
        cr_assert_eq(sst_writer_add(w, &p), 0);
    }
    sst_reader *r;
    cr_assert_eq(sst_writer_finish(w, (st_clog_pos){ 0, 0 }, 0, &r), 0);
    cr_assert_eq(r->st.n_drop, 2);
    cr_assert(r->st.drop_pt[0] == T + 60 && r->st.drop_cnt[0] == 3);
    cr_assert(r->st.drop_pt[1] == T + 3600 && r->st.drop_cnt[1] == 2, "the cell and its marker");
    cr_assert_eq(r->st.droppable, 5);
    cr_assert_float_eq(sst__droppable_before(&r->st, T + 59), 0.0, 1e-9, "not before the minute's end");
    cr_assert_float_eq(sst__droppable_before(&r->st, T + 60), 1.5, 1e-9);
    cr_assert_float_eq(sst__droppable_before(&r->st, T + 3600), 5.0, 1e-9);
    sst_reader_unref(r);
    cr_assert_eq(sst_reader_open(dir, 1, &r), 0);
    cr_assert(r->stats_version == SST_STATS_VERSION && r->st.n_drop == 2 && r->st.drop_pt[1] == T + 3600);
    sst_reader_unref(r);

    char *p = sst__path(dir, 1, "Statistics.db", false);
    const uint32_t days[2] = { 19000, 19002 };
    const uint64_t cnt[2] = { 4, 6 };
    stats_drop_days(p, 2, days, cnt, 2);
    cr_assert_eq(sst_reader_open(dir, 1, &r), 0);
    cr_assert_eq(r->stats_version, 2);
    cr_assert_eq(r->st.n_drop, 2);
    cr_assert(r->st.drop_pt[0] == 19001 * 86400 && r->st.drop_cnt[0] == 4);
    cr_assert(r->st.drop_pt[1] == 19003 * 86400 && r->st.drop_cnt[1] == 6);
    sst_reader_unref(r);
    const uint32_t bad[2] = { 19002, 19002 };               /* days must increase */
    stats_drop_days(p, 2, bad, cnt, 2);
    cr_assert_eq(sst_reader_open(dir, 1, &r), CS_ECORRUPT);
    cs_free(p);
    vfs_rmtree(g_dir);
    cr_assert_eq(cs_alloc_count(), 0);
}
