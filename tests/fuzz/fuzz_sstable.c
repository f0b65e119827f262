/*
 * fuzz_sstable.c: an sstable whose contents the fuzzer chooses, opened and
 * read by the engine (storage/sstable_reader.c, read.c, compaction.c) and
 * by the offline tools (sst_verify, sst_dump, sst_metadata in
 * storage/sstable_tool.c).
 *
 * Every byte of an sstable is under a CRC (docs/format/sstable.md), so raw
 * byte flips only reach the checksum checks.  The input therefore gives the
 * contents *inside* the checksums, and the harness builds the files around
 * them with valid framing:
 *
 *   [u8 mode] [u8 k] [u16 n_entries]
 *   [u32 len] Data.db logical stream (the partitions)
 *   [u16 len] Index.db entries (their tokens are recomputed from the keys)
 *   [u16 len] Statistics.db body
 *   [u16 len] Filter.db bits (none: a 64-bit filter of ones)
 *
 * mode bit 0: blocks lz4-compressed (else stored); bits 1-2: block size
 * 4096, 64, 512 or 16384; bit 3: no TOC.txt; bit 4: raw mode, the four
 * chunks are Data.db, Index.db, Statistics.db and Filter.db verbatim
 * (header and checksum checks); bit 5: keep the input's tokens; bit 6: flip
 * byte n_entries of Data.db after building it; bit 7: Statistics.db is
 * version 2 (150 + 118 histogram buckets; else version 1, 96 + 96: inputs
 * from before version 2 keep their meaning).  Seeds set bit 7.
 *
 * Per input: sst_verify, sst_metadata and sst_dump of the files; then the
 * table is opened in a real engine and read (a full scan forwards, reversed
 * with statics and tombstones, a point read of every key, a slice), then
 * compacted, read again, and dropped.  Checked beyond "no crash": every
 * error is CS_ECORRUPT (or CS_ENOMEM/CS_EIO/CS_ENOTFOUND from the tools);
 * a failed compaction leaves the sstable in place and readable as before;
 * when sst_verify passes a file, a full read of it succeeds; nothing leaks.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <lz4.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/arena.h"
#include "common/buf.h"
#include "common/err.h"
#include "common/hash.h"
#include "common/vfs.h"
#include "storage/sstable.h"
#include "storage/sstable_int.h"
#include "storage/storage.h"
#include "tests/fuzz/fuzz_common.h"

#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, "fuzz_sstable: check failed: %s: ", #cond); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); abort(); } } while (0)

static const uint8_t TID[16] = { 0xf0, 0x22, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14 };
static char g_data[300], g_tdir[400];
static st_engine *g_eng;
static FILE *g_null;

/* ------------------------------------------------------------ building */

static void put_hdr(cs_buf *b, uint32_t magic, uint32_t param)
{
    cs_buf_put_u32(b, magic);
    cs_buf_put_u32(b, SST_VERSION);
    cs_buf_put_u32(b, param);
    cs_buf_put_u32(b, 0);
}

static void put_crc(cs_buf *b)
{
    cs_buf_put_u32(b, cs_crc32c(0, b->p, b->len));
}

static void write_comp(const char *comp, const void *p, size_t n)
{
    char path[600];
    snprintf(path, sizeof path, "%s/cs-1-%s", g_tdir, comp);
    CHECK(fz_write_file(path, p, n) == 0, "write %s", path);
}

/* Recompute the token of every index entry that parses, as the writer
 * would have: the fuzzer cannot make Murmur3 match a key it changed. */
static void fix_tokens(uint8_t *p, size_t n)
{
    cs_rd r;
    cs_rd_init(&r, p, n);
    while (cs_rd_left(&r)) {
        uint64_t kl = cs_rd_uvarint(&r);
        if (r.err || kl > cs_rd_left(&r) || cs_rd_left(&r) - kl < 8)
            return;
        const uint8_t *k = cs_rd_take(&r, (size_t)kl);
        cs_st64(p + r.pos, (uint64_t)cs_murmur3_token(k, (uint32_t)kl));
        r.pos += 8;
        for (int i = 0; i < 4; i++)
            (void)cs_rd_uvarint(&r);
        uint64_t rl = cs_rd_uvarint(&r);
        if (r.err || rl > cs_rd_left(&r))
            return;
        r.pos += (size_t)rl;
    }
}

/* The next [u32 length][bytes] chunk (clipped to what is left). */
static const uint8_t *chunk32(fz_in *in, size_t *len)
{
    size_t n = (size_t)fz_u16(in) << 16;
    n |= fz_u16(in);
    if (n > fz_left(in))
        n = fz_left(in);
    const uint8_t *p = in->p + in->pos;
    in->pos += n;
    *len = n;
    return p;
}

static void build(fz_in *in)
{
    static const uint32_t sizes[4] = { 4096, 64, 512, 16384 };
    uint8_t mode = fz_u8(in), k = fz_u8(in);
    uint16_t n_entries = fz_u16(in);
    size_t dl, il, sl, fl;
    const uint8_t *d = chunk32(in, &dl), *ix = fz_chunk(in, &il), *st = fz_chunk(in, &sl),
                  *fb = fz_chunk(in, &fl);
    if (mode & 0x10) {
        write_comp("Data.db", d, dl);
        write_comp("Index.db", ix, il);
        write_comp("Statistics.db", st, sl);
        write_comp("Filter.db", fb, fl);
    } else {
        uint32_t bs = sizes[(mode >> 1) & 3];
        /* Data.db: the logical stream cut into blocks. */
        cs_buf data, idx, b;
        cs_buf_init(&data);
        cs_buf_init(&idx);
        cs_buf_init(&b);
        put_hdr(&data, SST_DATA_MAGIC, bs);
        uint64_t n_chunks = (dl + bs - 1) / bs;
        uint64_t *chunks = malloc(sizeof(uint64_t) * (size_t)(n_chunks + 1));
        char *cbuf = malloc((size_t)LZ4_compressBound((int)bs));
        for (uint64_t c = 0; c < n_chunks; c++) {
            chunks[c] = data.len;
            const uint8_t *blk = d + c * bs;
            uint32_t raw = (uint32_t)(dl - c * bs < bs ? dl - c * bs : bs);
            int clen = (mode & 1) ? LZ4_compress_default((const char *)blk, cbuf, (int)raw,
                                                         LZ4_compressBound((int)bs)) : 0;
            const uint8_t *stored = clen > 0 ? (const uint8_t *)cbuf : blk;
            uint32_t slen = clen > 0 ? (uint32_t)clen : raw;
            cs_buf_put_u32(&data, clen > 0 ? slen : (slen | SST_RAW_FLAG));
            cs_buf_put_u32(&data, raw);
            cs_buf_put_u32(&data, cs_crc32c(0, stored, slen));
            cs_buf_put(&data, stored, slen);
        }
        chunks[n_chunks] = data.len;
        if ((mode & 0x40) && data.len > SST_FILE_HDR)
            data.p[SST_FILE_HDR + n_entries % (data.len - SST_FILE_HDR)] ^= 0x01;
        write_comp("Data.db", data.p, data.len);
        /* Index.db: header, entries, chunk table, footer, CRC. */
        put_hdr(&idx, SST_INDEX_MAGIC, bs);
        size_t at = idx.len;
        cs_buf_put(&idx, ix, il);
        if (!(mode & 0x20))
            fix_tokens(idx.p + at, il);
        uint64_t chunks_off = idx.len;
        for (uint64_t c = 0; c <= n_chunks; c++)
            cs_buf_put_u64(&idx, chunks[c]);
        cs_buf_put_u64(&idx, n_entries);
        cs_buf_put_u64(&idx, chunks_off);
        cs_buf_put_u64(&idx, n_chunks);
        cs_buf_put_u64(&idx, dl);
        put_crc(&idx);
        write_comp("Index.db", idx.p, idx.len);
        /* Statistics.db and Filter.db. */
        put_hdr(&b, SST_STATS_MAGIC, 0);
        if (mode & 0x80)
            cs_st32(b.p + 4, SST_STATS_VERSION);
        cs_buf_put(&b, st, sl);
        put_crc(&b);
        write_comp("Statistics.db", b.p, b.len);
        cs_buf_reset(&b);
        put_hdr(&b, SST_FILTER_MAGIC, k ? k : 1);
        if (fl) {
            cs_buf_put_u64(&b, (uint64_t)fl * 8);
            cs_buf_put(&b, fb, fl);
        } else {
            cs_buf_put_u64(&b, 64);
            cs_buf_put(&b, "\xff\xff\xff\xff\xff\xff\xff\xff", 8);
        }
        put_crc(&b);
        write_comp("Filter.db", b.p, b.len);
        cs_buf_destroy(&b);
        cs_buf_destroy(&idx);
        cs_buf_destroy(&data);
        free(chunks);
        free(cbuf);
    }
    if (!(mode & 0x08)) {
        const char toc[] = "Data.db\nIndex.db\nFilter.db\nStatistics.db\nTOC.txt\n";
        write_comp("TOC.txt", toc, sizeof toc - 1);
    }
}

/* ------------------------------------------------------------ reading */

static bool read_error_ok(int rc)
{
    return rc == CS_ECORRUPT || rc == CS_ENOMEM;
}

/* A digest of everything a scan returns, to compare reads. */
static uint64_t mix(uint64_t h, const void *p, size_t n)
{
    return cs_xxh64(p, n, h);
}

/* Full scan with spec; returns 0 or the error, and the digest in *h. */
static int scan(st_table *t, const st_read_spec *spec, uint64_t *h, int *parts)
{
    st_scan *s;
    int rc = st_scan_open(t, spec, &s);
    if (rc)
        return rc;
    *h = 0;
    *parts = 0;
    st_partition_view pv;
    st_row_view rv;
    while ((rc = st_scan_next_partition(s, &pv)) == 1) {
        (*parts)++;
        *h = mix(*h, pv.pk, pv.pk_len);
        int k;
        while ((k = st_scan_next_row(s, &rv)) == 1) {
            *h = mix(*h, rv.ck, rv.ck_len);
            for (int i = 0; i < rv.n_cells; i++) {
                *h = mix(*h, rv.cells[i].val, rv.cells[i].val_len);
                *h = mix(*h, rv.cells[i].path, rv.cells[i].path_len);
            }
        }
        if (k < 0) {
            rc = k;
            break;
        }
    }
    st_scan_close(s);
    return rc < 0 ? rc : 0;
}

static int full_scan(st_table *t, uint64_t *h, int *parts)
{
    st_read_spec spec = { .start_token = INT64_MIN, .end_token = INT64_MAX, .start_inclusive = true,
                          .include_static = true };
    return scan(t, &spec, h, parts);
}

static void reads(st_table *t)
{
    uint64_t h;
    int parts;
    int rc = full_scan(t, &h, &parts);
    CHECK(rc == 0 || read_error_ok(rc), "full scan: %d", rc);
    st_read_spec rev = { .start_token = INT64_MIN, .end_token = INT64_MAX, .start_inclusive = true,
                         .reversed = true, .include_static = true, .with_tombstones = true };
    rc = scan(t, &rev, &h, &parts);
    CHECK(rc == 0 || read_error_ok(rc), "reversed scan: %d", rc);
    /* A point read and a slice of every key in the sstable's index. */
    pthread_mutex_lock(&t->mu);
    sst_reader *r = t->n_ssts ? t->ssts[0] : NULL;
    sst_reader_ref(r);
    pthread_mutex_unlock(&t->mu);
    if (!r)
        return;
    uint8_t lo = 0x40, hi = 0x80;
    st_slice sl = { { &lo, 1, true }, { &hi, 1, false } };
    for (uint64_t i = 0; i < r->n_idx && i < 64; i++) {
        cs_arena a;
        cs_arena_init(&a);
        st_point pt;
        st_read_spec ps = { .pk = r->idx[i].pk, .pk_len = r->idx[i].pk_len, .include_static = true };
        rc = st_read_point(t, &ps, &a, &pt);
        CHECK(rc == 0 || rc == 1 || read_error_ok(rc), "point read: %d", rc);
        ps.slices = &sl;
        ps.n_slices = 1;
        ps.reversed = i & 1;
        rc = st_read_point(t, &ps, &a, &pt);
        CHECK(rc == 0 || rc == 1 || read_error_ok(rc), "slice read: %d", rc);
        cs_arena_destroy(&a);
        ps.n_slices = 0;
        rc = scan(t, &ps, &h, &parts);
        CHECK(rc == 0 || read_error_ok(rc), "partition scan: %d", rc);
    }
    sst_reader_unref(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t base = cs_alloc_count();
    fz_in in = { data, size, 0 };
    fz_empty_dir(g_data);
    vfs_mkdirs(g_tdir);
    build(&in);
    char path[600];
    snprintf(path, sizeof path, "%s/cs-1-Data.db", g_tdir);
    /* The tools. */
    int vrc = sst_verify(path, g_null);
    CHECK(vrc == 0 || vrc == CS_ECORRUPT || vrc == CS_ENOMEM || vrc == CS_EIO || vrc == CS_ENOTFOUND,
          "sst_verify: %d", vrc);
    int rc = sst_metadata(path, g_null);
    CHECK(rc == 0 || rc == CS_ECORRUPT || rc == CS_ENOMEM || rc == CS_EIO || rc == CS_ENOTFOUND,
          "sst_metadata: %d", rc);
    rc = sst_dump(path, g_null);
    CHECK(rc == 0 || rc == CS_ECORRUPT || rc == CS_ENOMEM || rc == CS_EIO || rc == CS_ENOTFOUND,
          "sst_dump: %d", rc);
    /* The engine. */
    st_table *t;
    st_table_opts o;
    st_table_opts_defaults(&o);
    o.compaction_enabled = false;
    rc = st_table_open(g_eng, TID, "ks", "fz", &o, &t);
    CHECK(rc == 0 || rc == CS_ECORRUPT || rc == CS_ENOMEM, "table open: %d", rc);
    if (rc == 0) {
        uint64_t h0 = 0, h1 = 0;
        int p0 = 0, p1 = 0;
        int rc0 = full_scan(t, &h0, &p0);
        if (vrc == 0)
            CHECK(rc0 == 0, "sst_verify passed the sstable but a full read fails: %d", rc0);
        reads(t);
        rc = st_table_compact(t);
        CHECK(rc == 0 || read_error_ok(rc), "compaction: %d", rc);
        int rc1 = full_scan(t, &h1, &p1);
        if (rc != 0) {
            /* A failed compaction leaves its input as it was. */
            CHECK(rc1 == rc0 && (rc0 != 0 || h1 == h0), "failed compaction changed the data: %d/%d", rc0, rc1);
        } else if (rc0 == 0) {
            CHECK(rc1 == 0, "compacted sstable does not read: %d", rc1);
        }
        CHECK(st_table_drop(t) == 0, "drop");
    }
    CHECK(cs_alloc_count() == base, "%zu allocations not freed", cs_alloc_count() - base);
    return 0;
}

/* ------------------------------------------------------------ seeds */

/* Unpack the sstable gen of table dir into the input format. */
static void seed_from(const char *dir, uint64_t gen, const char *name, uint8_t mode)
{
    char p[600];
    uint8_t *dat, *idx, *sts, *flt;
    size_t dn, in, sn, fn;
    snprintf(p, sizeof p, "%s/cs-%" PRIu64 "-Data.db", dir, gen);
    CHECK(vfs_read_all(p, &dat, &dn) == 0, "%s", p);
    snprintf(p, sizeof p, "%s/cs-%" PRIu64 "-Index.db", dir, gen);
    CHECK(vfs_read_all(p, &idx, &in) == 0, "%s", p);
    snprintf(p, sizeof p, "%s/cs-%" PRIu64 "-Statistics.db", dir, gen);
    CHECK(vfs_read_all(p, &sts, &sn) == 0, "%s", p);
    snprintf(p, sizeof p, "%s/cs-%" PRIu64 "-Filter.db", dir, gen);
    CHECK(vfs_read_all(p, &flt, &fn) == 0, "%s", p);
    const uint8_t *f = idx + in - 4 - 32;
    uint64_t n_entries = cs_be64(f), chunks_off = cs_be64(f + 8), n_chunks = cs_be64(f + 16);
    cs_buf logical, out;
    cs_buf_init(&logical);
    cs_buf_init(&out);
    for (uint64_t c = 0; c < n_chunks; c++) {
        uint64_t off = cs_be64(idx + chunks_off + 8 * c);
        uint32_t clen = cs_be32(dat + off), raw = cs_be32(dat + off + 4);
        uint8_t *dst = cs_buf_extend(&logical, raw);
        if (clen & SST_RAW_FLAG)
            memcpy(dst, dat + off + SST_BLOCK_HDR, raw);
        else
            CHECK(LZ4_decompress_safe((const char *)dat + off + SST_BLOCK_HDR, (char *)dst,
                                      (int)clen, (int)raw) == (int)raw, "lz4");
    }
    CHECK(chunks_off - SST_FILE_HDR < 65536 && sn < 65536, "%s: too big for a seed", name);
    cs_buf_put_u8(&out, mode | 0x80);             /* the writer's Statistics.db version */
    cs_buf_put_u8(&out, (uint8_t)cs_be32(flt + 8));
    cs_buf_put_u16(&out, (uint16_t)n_entries);
    cs_buf_put_u32(&out, (uint32_t)logical.len);
    cs_buf_put(&out, logical.p, logical.len);
    cs_buf_put_u16(&out, (uint16_t)(chunks_off - SST_FILE_HDR));
    cs_buf_put(&out, idx + SST_FILE_HDR, chunks_off - SST_FILE_HDR);
    cs_buf_put_u16(&out, (uint16_t)(sn - SST_FILE_HDR - 4));
    cs_buf_put(&out, sts + SST_FILE_HDR, sn - SST_FILE_HDR - 4);
    size_t bits = fn - SST_FILE_HDR - 8 - 4;
    cs_buf_put_u16(&out, bits < 4096 ? (uint16_t)bits : 0);
    if (bits < 4096)
        cs_buf_put(&out, flt + SST_FILE_HDR + 8, bits);
    fz_seed(name, out.p, out.len);
    if (mode == 1) {
        /* The raw-mode variant: the files verbatim (when small). */
        cs_buf_reset(&out);
        cs_buf_put_u8(&out, 0x10);
        cs_buf_put_u8(&out, 0);
        cs_buf_put_u16(&out, 0);
        const uint8_t *comp[4] = { dat, idx, sts, flt };
        size_t lens[4] = { dn, in, sn, fn };
        bool small = true;
        for (int i = 0; i < 4; i++) {
            small = small && lens[i] < 8192;
            if (i == 0)
                cs_buf_put_u32(&out, (uint32_t)lens[i]);
            else
                cs_buf_put_u16(&out, (uint16_t)lens[i]);
            cs_buf_put(&out, comp[i], lens[i]);
        }
        char nm[128];
        snprintf(nm, sizeof nm, "%s-raw", name);
        if (small)
            fz_seed(nm, out.p, out.len);
    }
    cs_buf_destroy(&logical);
    cs_buf_destroy(&out);
    cs_free(dat);
    cs_free(idx);
    cs_free(sts);
    cs_free(flt);
}

static void be32(uint8_t *p, uint32_t v) { cs_st32(p, v); }

/* Partitions of every shape through the real write path, each table
 * flushed to one sstable and turned into seeds. */
static void write_seeds(void)
{
    static const char *const shapes[] = { "simple", "wide", "tombstones", "static", "collections", "ttl" };
    for (int s = 0; s < 6; s++) {
        uint8_t id[16];
        memcpy(id, TID, 16);
        id[15] = (uint8_t)(0x40 + s);
        st_table *t;
        CHECK(st_table_open(g_eng, id, "ks", shapes[s], NULL, &t) == 0, "seed table");
        st_mutation *m = st_mutation_new();
        int parts = s == 1 ? 1 : 3;
        for (int pki = 0; pki < parts; pki++) {
            uint8_t pk[4];
            be32(pk, (uint32_t)pki + 1);
            st_mut_partition(m, t, pk, 4);
            if (s == 2 && pki == 0)
                st_mut_partition_delete(m, (st_deletion){ 5, 1000 });
            if (s == 2) {
                uint8_t a[5] = { 0x40, 0x80, 0, 0, 1 }, b[5] = { 0x40, 0x80, 0, 0, 3 };
                st_mut_range_delete(m, (st_bound){ a, 5, true }, (st_bound){ b, 5, false },
                                    (st_deletion){ 7, 2000 });
            }
            if (s == 3) {
                st_mut_row(m, NULL, 0, ST_ROW_STATIC);
                st_cell sc = { .col = 9, .ts_us = 50, .val = (const uint8_t *)"S", .val_len = 1 };
                st_mut_cell(m, &sc);
            }
            int rows = s == 1 ? 40 : 4;
            uint32_t vsz = s == 1 ? 1800 : 8;   /* the wide partition: > 64 KiB, a row index */
            uint8_t *v = cs_calloc(1, vsz);
            for (int r = 0; r < rows; r++) {
                uint8_t ck[5] = { 0x40, 0x80, 0, 0, (uint8_t)r };
                st_mut_row(m, ck, 5, 0);
                st_mut_row_liveness(m, (st_liveness){ 10, s == 5 ? 100 : 0, s == 5 ? 2000000000 : 0 });
                if (s == 2 && r == 2)
                    st_mut_row_delete(m, (st_deletion){ 11, 3000 });
                be32(v, (uint32_t)r);
                be32(v + 4, (uint32_t)pki);
                st_cell c = { .col = 1, .ts_us = 10, .val = v, .val_len = vsz };
                if (s == 5) {
                    c.flags = ST_CELL_EXPIRING;
                    c.ttl_s = 100;
                    c.ldt_s = 2000000000;
                }
                if (s == 2 && r == 1) {
                    c.flags = ST_CELL_TOMBSTONE;
                    c.ldt_s = 4000;
                    c.val_len = 0;
                }
                st_mut_cell(m, &c);
                if (s == 4) {
                    st_mut_complex_delete(m, 2, (st_deletion){ 9, 100 });
                    for (int e = 0; e < 3; e++) {
                        uint8_t path[2] = { 0x10, (uint8_t)e };
                        st_cell cc = { .col = 2, .ts_us = 10, .path = path, .path_len = 2, .val = v,
                                       .val_len = 4 };
                        st_mut_cell(m, &cc);
                    }
                    uint8_t cnt[8] = { 0, 0, 0, 0, 0, 0, 0, 42 };
                    st_cell ct = { .col = 3, .flags = ST_CELL_COUNTER, .ts_us = 12, .val = cnt, .val_len = 8 };
                    st_mut_cell(m, &ct);
                }
            }
            cs_free(v);
        }
        CHECK(st_write(g_eng, m, NULL) == 0, "seed write");
        st_mutation_free(m);
        CHECK(st_table_flush(t) == 0, "seed flush");
        char nm[64];
        for (uint8_t mode = 0; mode < 4; mode++) {
            if (mode == 2)
                continue;
            snprintf(nm, sizeof nm, "%s-mode%u", shapes[s], mode);
            seed_from(st_table_dir(t), 1, nm, mode);
        }
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fz_quiet();
    const char *dir = fz_scratch_dir("sstable");
    snprintf(g_data, sizeof g_data, "%s/data", dir);
    char hex[33];
    for (int i = 0; i < 16; i++)
        snprintf(hex + 2 * i, 3, "%02x", TID[i]);
    snprintf(g_tdir, sizeof g_tdir, "%s/ks/fz-%s", g_data, hex);
    char cl[300];
    snprintf(cl, sizeof cl, "%s/commitlog", dir);
    vfs_mkdirs(g_data);
    vfs_mkdirs(cl);
    g_null = fopen("/dev/null", "w");
    st_config cfg;
    st_config_defaults(&cfg);
    cfg.data_dir = g_data;
    cfg.commitlog_dir = cl;
    cfg.segment_size = 1 << 20;
    cfg.block_cache_size = 0;      /* nothing kept between inputs: the leak check holds */
    cfg.snapshot_cleanup_period_ms = 1 << 30;   /* no sweep allocating beside an input */
    CHECK(st_engine_open(&cfg, &g_eng) == 0, "engine open");
    CHECK(st_engine_replay_done(g_eng) == 0, "replay done");
    if (fz_seed_dir()) {
        write_seeds();
        exit(0);
    }
    /* Warm up what the engine allocates once (its table array...), so
     * that the per-input leak check sees only the input's allocations. */
    st_table *t;
    CHECK(st_table_open(g_eng, TID, "ks", "fz", NULL, &t) == 0, "warm-up");
    uint64_t h;
    int parts;
    CHECK(full_scan(t, &h, &parts) == 0, "warm-up scan");
    CHECK(st_table_compact(t) == 0 && st_table_drop(t) == 0, "warm-up drop");
    return 0;
}
