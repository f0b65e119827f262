/*
 * test_storage_engine.c: write/read/replay through storage.h.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "storage/storage.h"
#include "common/alloc.h"
#include "common/hash.h"
#include "common/vfs.h"

static char g_dir[256];
static const uint8_t TID[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };

static void setup(void)
{
    snprintf(g_dir, sizeof g_dir, "/tmp/cs_st_engine_%d", (int)getpid());
    vfs_rmtree(g_dir);
}
static void teardown(void) { vfs_rmtree(g_dir); }

static st_engine *open_engine(int mode, size_t seg)
{
    static char d[300], c[300];
    snprintf(d, sizeof d, "%s/data", g_dir);
    snprintf(c, sizeof c, "%s/commitlog", g_dir);
    st_config cfg;
    st_config_defaults(&cfg);
    cfg.data_dir = d; cfg.commitlog_dir = c;
    cfg.sync_mode = mode;
    if (seg) cfg.segment_size = seg;
    st_engine *e;
    cr_assert_eq(st_engine_open(&cfg, &e), 0);
    return e;
}

static st_table *open_table(st_engine *e)
{
    st_table *t;
    cr_assert_eq(st_table_open(e, TID, "ks", "t", NULL, &t), 0);
    return t;
}

static void put_int(st_engine *e, st_table *t, uint32_t pk, uint32_t ck, uint32_t v, int64_t ts)
{
    uint8_t k[4], c[4], val[4];
    k[0] = pk >> 24; k[1] = pk >> 16; k[2] = pk >> 8; k[3] = pk;
    c[0] = ck >> 24; c[1] = ck >> 16; c[2] = ck >> 8; c[3] = ck;
    val[0] = v >> 24; val[1] = v >> 16; val[2] = v >> 8; val[3] = v;
    st_mutation *m = st_mutation_new();
    st_mut_partition(m, t, k, 4);
    st_mut_row(m, c, 4, 0);
    st_mut_row_liveness(m, (st_liveness){ ts, 0, 0 });
    st_cell cell = { .col = 7, .ts_us = ts, .val = val, .val_len = 4 };
    st_mut_cell(m, &cell);
    cr_assert_eq(st_write(e, m, NULL), 0);
    st_mutation_free(m);
}

static int count_rows(st_table *t, const uint8_t *pk, uint32_t pklen, uint32_t *last_val)
{
    st_read_spec rs = { .pk = pk, .pk_len = pklen };
    if (!pk) { rs.start_token = INT64_MIN; rs.end_token = INT64_MAX; }
    st_scan *s;
    cr_assert_eq(st_scan_open(t, &rs, &s), 0);
    st_partition_view p;
    int n = 0;
    while (st_scan_next_partition(s, &p) == 1) {
        st_row_view r;
        while (st_scan_next_row(s, &r) == 1) {
            n++;
            if (last_val && r.n_cells) *last_val = (uint32_t)((r.cells[0].val[0] << 24) | (r.cells[0].val[1] << 16) | (r.cells[0].val[2] << 8) | r.cells[0].val[3]);
        }
    }
    st_scan_close(s);
    return n;
}

TestSuite(storage_engine, .init = setup, .fini = teardown);

Test(storage_engine, write_read_single)
{
    st_engine *e = open_engine(ST_SYNC_PERIODIC, 0);
    st_table *t = open_table(e);
    for (uint32_t i = 0; i < 100; i++) put_int(e, t, 1, i, i * 10, 1000 + i);
    uint8_t k[4] = { 0, 0, 0, 1 };
    uint32_t last = 0;
    cr_assert_eq(count_rows(t, k, 4, &last), 100);
    cr_assert_eq(last, 990);
    put_int(e, t, 1, 99, 5, 999);   /* older: loses */
    count_rows(t, k, 4, &last);
    cr_assert_eq(last, 990);
    put_int(e, t, 1, 99, 5, 5000);  /* newer: wins */
    count_rows(t, k, 4, &last);
    cr_assert_eq(last, 5);
    st_engine_close(e, false);
    cr_assert_eq(cs_alloc_count(), 0, "leak: %zu allocations", cs_alloc_count());
}

Test(storage_engine, range_scan_token_order)
{
    st_engine *e = open_engine(ST_SYNC_PERIODIC, 0);
    st_table *t = open_table(e);
    for (uint32_t i = 0; i < 50; i++) put_int(e, t, i, 0, i, 1);
    st_read_spec rs = { .start_token = INT64_MIN, .end_token = INT64_MAX };
    st_scan *s;
    cr_assert_eq(st_scan_open(t, &rs, &s), 0);
    st_partition_view p;
    int n = 0;
    int64_t prev = INT64_MIN;
    while (st_scan_next_partition(s, &p) == 1) {
        cr_assert_geq(p.token, prev);
        cr_assert_eq(p.token, cs_murmur3_token(p.pk, p.pk_len));
        prev = p.token;
        n++;
    }
    cr_assert_eq(n, 50);
    st_scan_close(s);
    st_engine_close(e, false);
    cr_assert_eq(cs_alloc_count(), 0);
}

Test(storage_engine, replay_across_segments)
{
    st_engine *e = open_engine(ST_SYNC_PERIODIC, 8192);
    st_table *t = open_table(e);
    for (uint32_t i = 0; i < 2000; i++) put_int(e, t, i % 7, i, i, 10 + i);
    st_engine_close(e, false);
    e = open_engine(ST_SYNC_PERIODIC, 8192);
    t = open_table(e);
    cr_assert_eq(st_engine_replay(e, NULL, NULL), 0);
    cr_assert_eq(st_engine_replay_done(e), 0);
    cr_assert_eq(count_rows(t, NULL, 0, NULL), 2000);
    st_engine_close(e, false);
    cr_assert_eq(cs_alloc_count(), 0);
}

static int g_cb_count;
static void on_sync(void *arg) { (void)arg; g_cb_count++; }

Test(storage_engine, group_sync_wait)
{
    for (int mode = ST_SYNC_BATCH; mode <= ST_SYNC_GROUP; mode++) {
        st_engine *e = open_engine(mode, 0);
        st_table *t = open_table(e);
        cr_assert(st_sync_needed(e));
        uv_loop_t loop;
        uv_loop_init(&loop);
        g_cb_count = 0;
        for (int i = 0; i < 10; i++) {
            uint8_t k[4] = { 0, 0, 0, (uint8_t)i };
            st_mutation *m = st_mutation_new();
            st_mut_partition(m, t, k, 4);
            st_mut_partition_delete(m, (st_deletion){ 5, 5 });
            st_clog_pos pos;
            cr_assert_eq(st_write(e, m, &pos), 0);
            st_mutation_free(m);
            cr_assert_eq(st_sync_wait(e, &loop, pos, on_sync, NULL), 0);
        }
        while (g_cb_count < 10) uv_run(&loop, UV_RUN_ONCE);
        cr_assert_eq(g_cb_count, 10);
        /* A waiter still pending at detach completes through the close callback. */
        st_mutation *m = st_mutation_new();
        uint8_t k[4] = { 1, 1, 1, 1 };
        st_mut_partition(m, t, k, 4);
        st_mut_partition_delete(m, (st_deletion){ 5, 5 });
        st_clog_pos pos;
        cr_assert_eq(st_write(e, m, &pos), 0);
        st_mutation_free(m);
        st_sync_wait(e, &loop, pos, on_sync, NULL);
        cr_assert_eq(st_engine_detach_loop(e, &loop), 0);
        uv_run(&loop, UV_RUN_NOWAIT);
        cr_assert_eq(g_cb_count, 11);
        cr_assert_eq(uv_loop_close(&loop), 0);
        st_engine_close(e, false);
        vfs_rmtree(g_dir);
    }
    cr_assert_eq(cs_alloc_count(), 0);
}

Test(storage_engine, torn_tail_replay)
{
    st_engine *e = open_engine(ST_SYNC_PERIODIC, 0);
    st_table *t = open_table(e);
    for (uint32_t i = 0; i < 10; i++) put_int(e, t, 1, i, i, 10 + i);
    st_engine_close(e, false);
    /* Truncate the segment in the middle of the last record. */
    char c[400], **names; int n;
    snprintf(c, sizeof c, "%s/commitlog", g_dir);
    cr_assert_eq(vfs_list(c, &names, &n), 0);
    cr_assert_eq(n, 1);
    char p[700];
    snprintf(p, sizeof p, "%s/%s", c, names[0]);
    vfs_list_free(names, n);
    int64_t sz = vfs_file_size(p);
    cr_assert_eq(truncate(p, sz - 3), 0);
    e = open_engine(ST_SYNC_PERIODIC, 0);
    t = open_table(e);
    cr_assert_eq(st_engine_replay(e, NULL, NULL), 0);
    st_engine_replay_done(e);
    uint8_t k[4] = { 0, 0, 0, 1 };
    cr_assert_eq(count_rows(t, k, 4, NULL), 9);
    st_engine_close(e, false);
    cr_assert_eq(cs_alloc_count(), 0);
}
