/*
 * fuzz_commitlog.c: commit log replay (storage/commitlog_replay.c and the
 * engine's apply of each record, storage/engine.c st__apply into
 * memtables) over a segment whose records the fuzzer chooses, then what
 * the engine does with what it accepted: reads, a flush to an sstable,
 * and a restart.
 *
 * Records are under CRCs (docs/format/commitlog.md), so the input gives
 * their payloads and the harness frames them with valid lengths and CRCs:
 *
 *   [u8 mode] [u8 n_records] n_records x ([u16 len] payload) [tail]
 *
 * mode bit 0: a version 1 segment (else 2); bit 1: the header's "reused"
 * flag; bit 2: the tail bytes follow the records (torn, zero or stale
 * tails); bit 3: flip one bit of the built file (at a position from the
 * tail's first two bytes), to reach the CRC and torn-record paths.
 * Two tables are open during replay (ids TA and TB, which the seeds'
 * payloads name).
 *
 * Checked beyond "no crash, no sanitizer report": replay returns 0 (a bad
 * record is logged and skipped, never fatal); the replayed data reads
 * back; each table flushes to an sstable sst_verify passes; the data reads
 * the same after the flush and after a restart; nothing leaks.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/buf.h"
#include "common/err.h"
#include "common/hash.h"
#include "common/vfs.h"
#include "storage/sstable.h"
#include "storage/storage.h"
#include "tests/fuzz/fuzz_common.h"

#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, "fuzz_commitlog: check failed: %s: ", #cond); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); abort(); } } while (0)

#define SEG_ID 1000u
static const uint8_t TA[16] = { 0xc1, 0x0a, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14 };
static const uint8_t TB[16] = { 0xc1, 0x0b, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14 };
static const char *g_dir;
static char g_data[300], g_cl[300];
static int32_t g_now;                /* reads use one clock: expiry cannot differ between them */

/* ------------------------------------------------------------ the segment */

static void build_segment(fz_in *in)
{
    uint8_t mode = fz_u8(in), n = fz_u8(in);
    unsigned ver = (mode & 1) ? 1 : 2;
    cs_buf b;
    cs_buf_init(&b);
    cs_buf_put_u32(&b, 0x43534C47u);
    cs_buf_put_u32(&b, ver);
    cs_buf_put_u64(&b, SEG_ID);
    if (ver == 2)
        cs_buf_put_u32(&b, (mode & 2) ? 1u : 0u);
    uint32_t hcrc = cs_crc32c(0, b.p, b.len);
    cs_buf_put_u32(&b, hcrc);
    uint32_t seed = ver == 2 ? hcrc : 0;
    for (int i = 0; i < n && fz_left(in) > 0; i++) {
        size_t len;
        const uint8_t *p = fz_chunk(in, &len);
        uint8_t l[4];
        cs_st32(l, (uint32_t)len);
        cs_buf_put(&b, l, 4);
        cs_buf_put_u32(&b, cs_crc32c(seed, l, 4));
        cs_buf_put(&b, p, len);
        cs_buf_put_u32(&b, cs_crc32c(0, p, len));
    }
    size_t tail = fz_left(in);
    if ((mode & 4) && tail)
        cs_buf_put(&b, in->p + in->pos, tail);
    if ((mode & 8) && tail >= 2) {
        size_t at = ((size_t)in->p[in->pos] << 8 | in->p[in->pos + 1]) % b.len;
        b.p[at] ^= (uint8_t)(1u << (at % 8));
    }
    char path[400];
    snprintf(path, sizeof path, "%s/CommitLog-%u-%u.log", g_cl, ver, SEG_ID);
    CHECK(fz_write_file(path, b.p, b.len) == 0, "write %s", path);
    cs_buf_destroy(&b);
}

/* ------------------------------------------------------------ the engine */

static st_engine *open_engine(st_table **ta, st_table **tb)
{
    st_config cfg;
    st_config_defaults(&cfg);
    cfg.data_dir = g_data;
    cfg.commitlog_dir = g_cl;
    cfg.segment_size = 1 << 20;
    cfg.block_cache_size = 0;
    st_engine *e;
    CHECK(st_engine_open(&cfg, &e) == 0, "engine open");
    st_table_opts o;
    st_table_opts_defaults(&o);
    o.compaction_enabled = false;
    CHECK(st_table_open(e, TA, "ks", "a", &o, ta) == 0, "table a");
    CHECK(st_table_open(e, TB, "ks", "b", &o, tb) == 0, "table b");
    int rc = st_engine_replay(e, NULL, NULL);
    CHECK(rc == 0, "replay: %d (%s)", rc, cs_strerror(rc));
    CHECK(st_engine_replay_done(e) == 0, "replay done");
    return e;
}

/* Everything a full scan returns (with tombstones), hashed. */
static uint64_t digest(st_table *t, bool tombstones)
{
    st_read_spec spec = { .start_token = INT64_MIN, .end_token = INT64_MAX, .start_inclusive = true,
                          .include_static = true, .now_s = g_now, .with_tombstones = tombstones };
    st_scan *s;
    CHECK(st_scan_open(t, &spec, &s) == 0, "scan open");
    uint64_t h = 0;
    st_partition_view pv;
    st_row_view rv;
    int rc;
    while ((rc = st_scan_next_partition(s, &pv)) == 1) {
        h = cs_xxh64(pv.pk, pv.pk_len, h);
        int k;
        while ((k = st_scan_next_row(s, &rv)) == 1) {
            h = cs_xxh64(rv.ck, rv.ck_len, h ^ rv.flags);
            h = cs_xxh64(&rv.liveness.ts_us, sizeof rv.liveness.ts_us, h);
            for (int i = 0; i < rv.n_cells; i++) {
                const st_cell *c = &rv.cells[i];
                h = cs_xxh64(c->val, c->val_len, h ^ c->col);
                h = cs_xxh64(c->path, c->path_len, h ^ (uint64_t)c->ts_us);
            }
        }
        CHECK(k == 0, "memtable row read: %d", k);
    }
    CHECK(rc == 0, "memtable partition read: %d", rc);
    st_scan_close(s);
    return h;
}

static void verify_flushed(st_table *t)
{
    char **paths;
    int n;
    CHECK(st_table_sstables(t, &paths, &n) == 0, "sstables");
    for (int i = 0; i < n; i++) {
        int rc = sst_verify(paths[i], NULL);
        CHECK(rc == 0, "the sstable flushed from replayed data does not verify: %d (%s)", rc, paths[i]);
    }
    st_paths_free(paths, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t base = cs_alloc_count();
    fz_empty_dir(g_dir);
    vfs_mkdirs(g_data);
    vfs_mkdirs(g_cl);
    fz_in in = { data, size, 0 };
    build_segment(&in);
    g_now = 1700000000;
    st_table *ta, *tb;
    st_engine *e = open_engine(&ta, &tb);
    uint64_t a0 = digest(ta, false), b0 = digest(tb, false);
    (void)digest(ta, true);
    (void)digest(tb, true);
    CHECK(st_table_flush(ta) == 0 && st_table_flush(tb) == 0, "flush");
    verify_flushed(ta);
    verify_flushed(tb);
    CHECK(digest(ta, false) == a0 && digest(tb, false) == b0, "the data read differently after the flush");
    st_engine_close(e, false);
    e = open_engine(&ta, &tb);
    CHECK(digest(ta, false) == a0 && digest(tb, false) == b0, "the data read differently after a restart");
    st_engine_close(e, false);
    CHECK(cs_alloc_count() == base, "%zu allocations not freed", cs_alloc_count() - base);
    return 0;
}

/* ------------------------------------------------------------ seeds */

/* The records of the segment(s) in g_cl, as one input of mode `mode`. */
static void seed_segment(const char *name, uint8_t mode, const uint8_t *tail, size_t tail_len)
{
    char **names;
    int n;
    CHECK(vfs_list(g_cl, &names, &n) == 0, "list");
    cs_buf out;
    cs_buf_init(&out);
    cs_buf_put_u8(&out, mode);
    cs_buf_put_u8(&out, 0);
    int recs = 0;
    for (int i = 0; i < n; i++) {
        if (strncmp(names[i], "CommitLog-2-", 12))
            continue;
        char p[600];
        snprintf(p, sizeof p, "%s/%s", g_cl, names[i]);
        uint8_t *b;
        size_t len;
        CHECK(vfs_read_all(p, &b, &len) == 0, "read %s", p);
        size_t off = 24;
        while (off + 12 <= len && recs < 255) {
            uint32_t rl = cs_be32(b + off);
            if (rl == 0 || off + 12 + rl > len)
                break;
            cs_buf_put_u16(&out, (uint16_t)rl);
            cs_buf_put(&out, b + off + 8, rl);
            off += 12 + rl;
            recs++;
        }
        cs_free(b);
    }
    vfs_list_free(names, n);
    out.p[1] = (uint8_t)recs;
    cs_buf_put(&out, tail, tail_len);
    fz_seed(name, out.p, out.len);
    cs_buf_destroy(&out);
}

static void be32(uint8_t *p, uint32_t v) { cs_st32(p, v); }

static void write_seeds(void)
{
    st_config cfg;
    st_config_defaults(&cfg);
    cfg.data_dir = g_data;
    cfg.commitlog_dir = g_cl;
    cfg.segment_size = 1 << 20;
    st_engine *e;
    CHECK(st_engine_open(&cfg, &e) == 0, "seed engine");
    st_table *ta, *tb;
    CHECK(st_table_open(e, TA, "ks", "a", NULL, &ta) == 0 && st_table_open(e, TB, "ks", "b", NULL, &tb) == 0,
          "seed tables");
    CHECK(st_engine_replay_done(e) == 0, "seed replay done");
    for (int s = 0; s < 8; s++) {
        st_mutation *m = st_mutation_new();
        uint8_t pk[4], ck[5] = { 0x40, 0x80, 0, 0, 0 }, v[8];
        be32(pk, (uint32_t)s);
        st_mut_partition(m, s & 1 ? tb : ta, pk, 4);
        switch (s) {
        case 0:                                   /* a row with a marker and a cell */
            st_mut_row(m, ck, 5, 0);
            st_mut_row_liveness(m, (st_liveness){ 10, 0, 0 });
            be32(v, 7);
            st_mut_cell(m, &(st_cell){ .col = 1, .ts_us = 10, .val = v, .val_len = 4 });
            break;
        case 1:                                   /* partition and range deletions */
            st_mut_partition_delete(m, (st_deletion){ 5, 1000 });
            st_mut_range_delete(m, (st_bound){ ck, 5, true }, (st_bound){ NULL, 0, true },
                                (st_deletion){ 6, 1001 });
            break;
        case 2:                                   /* static row, row deletion, tombstone cell */
            st_mut_row(m, NULL, 0, ST_ROW_STATIC);
            st_mut_cell(m, &(st_cell){ .col = 9, .ts_us = 11, .val = (const uint8_t *)"s", .val_len = 1 });
            st_mut_row(m, ck, 5, 0);
            st_mut_row_delete(m, (st_deletion){ 12, 2000 });
            st_mut_cell(m, &(st_cell){ .col = 2, .flags = ST_CELL_TOMBSTONE, .ts_us = 13, .ldt_s = 2001 });
            break;
        case 3:                                   /* a collection: complex deletion, cells with paths */
            st_mut_row(m, ck, 5, 0);
            st_mut_complex_delete(m, 3, (st_deletion){ 9, 900 });
            for (int k = 0; k < 3; k++) {
                uint8_t path[2] = { 0x10, (uint8_t)k };
                st_mut_cell(m, &(st_cell){ .col = 3, .ts_us = 10, .path = path, .path_len = 2, .val = v,
                                           .val_len = 4 });
            }
            break;
        case 4:                                   /* expiring and counter cells */
            st_mut_row(m, ck, 5, 0);
            st_mut_row_liveness(m, (st_liveness){ 10, 100, 1700000100 });
            st_mut_cell(m, &(st_cell){ .col = 1, .flags = ST_CELL_EXPIRING, .ts_us = 10, .ttl_s = 100,
                                       .ldt_s = 1700000100, .val = v, .val_len = 4 });
            st_mut_cell(m, &(st_cell){ .col = 4, .flags = ST_CELL_COUNTER, .ts_us = 14,
                                       .val = (const uint8_t *)"\0\0\0\0\0\0\0\x2a", .val_len = 8 });
            break;
        case 5:                                   /* several rows and two partitions, two tables */
            for (int r = 0; r < 4; r++) {
                ck[4] = (uint8_t)r;
                st_mut_row(m, ck, 5, 0);
                st_mut_cell(m, &(st_cell){ .col = 1, .ts_us = 20 + r, .val = v, .val_len = 4 });
            }
            be32(pk, 77);
            st_mut_partition(m, ta, pk, 4);
            st_mut_row(m, ck, 5, 0);
            st_mut_cell(m, &(st_cell){ .col = 1, .ts_us = 30, .val = v, .val_len = 4 });
            break;
        case 6:                                   /* an empty value and an empty key */
            st_mut_row(m, NULL, 0, 0);
            st_mut_cell(m, &(st_cell){ .col = 1, .ts_us = 1, .val = v, .val_len = 0 });
            break;
        default:                                  /* an overwrite of case 0's row */
            be32(pk, 0);
            st_mut_partition(m, ta, pk, 4);
            st_mut_row(m, ck, 5, 0);
            st_mut_cell(m, &(st_cell){ .col = 1, .ts_us = 9, .val = v, .val_len = 4 });
            break;
        }
        CHECK(st_write(e, m, NULL) == 0, "seed write %d", s);
        st_mutation_free(m);
    }
    st_engine_close(e, false);
    static const uint8_t zeros[16], junk[5] = { 0, 0, 0, 9, 1 };
    seed_segment("records-v2", 0, NULL, 0);
    seed_segment("records-reused-stale", 2 | 4, junk, sizeof junk);
    seed_segment("records-zero-tail", 4, zeros, sizeof zeros);
    seed_segment("records-flip", 8, (const uint8_t *)"\0\x30", 2);
    seed_segment("records-v1", 1, NULL, 0);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fz_quiet();
    g_dir = fz_scratch_dir("commitlog");
    snprintf(g_data, sizeof g_data, "%s/data", g_dir);
    snprintf(g_cl, sizeof g_cl, "%s/commitlog", g_dir);
    vfs_mkdirs(g_data);
    vfs_mkdirs(g_cl);
    if (fz_seed_dir()) {
        write_seeds();
        exit(0);
    }
    /* What the engine allocates once, before the per-input leak check. */
    st_table *ta, *tb;
    st_engine_close(open_engine(&ta, &tb), false);
    return 0;
}
