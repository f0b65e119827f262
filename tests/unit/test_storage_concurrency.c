/*
 * test_storage_concurrency.c: writers, readers, flushes and compactions at
 * the same time.  Each writer owns one partition and appends rows in order;
 * readers check a partition never shrinks (a flush or compaction must never
 * hide data) and rows stay sorted; at the end every row is there, also after
 * a reopen.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#define STORAGE_FIXTURE_TAG "st_conc"
#define STORAGE_FIXTURE_TID { 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5 }
#include "test_storage_fixture.h"

#define WRITERS 3
#define ROWS 2000

static st_engine *g_e;
static st_table *g_t;
static atomic_int g_done;

static void *writer(void *arg)
{
    int w = (int)(intptr_t)arg;
    uint8_t pk[2] = { 'w', (uint8_t)w };
    uint8_t val[64];
    memset(val, w, sizeof val);
    for (uint32_t i = 0; i < ROWS; i++) {
        uint8_t ck[4] = { (uint8_t)(i >> 24), (uint8_t)(i >> 16), (uint8_t)(i >> 8), (uint8_t)i };
        st_mutation *m = st_mutation_new();
        st_mut_partition(m, g_t, pk, 2);
        st_mut_row(m, ck, 4, 0);
        st_mut_row_liveness(m, (st_liveness){ 1 + i, 0, 0 });
        st_cell c = { .col = 1, .ts_us = 1 + i, .val = val, .val_len = sizeof val };
        st_mut_cell(m, &c);
        if (st_write(g_e, m, NULL) != 0) { st_mutation_free(m); return (void *)1; }
        st_mutation_free(m);
    }
    return NULL;
}

static int count(int w)
{
    uint8_t pk[2] = { 'w', (uint8_t)w };
    st_read_spec rs = { .pk = pk, .pk_len = 2 };
    st_scan *s;
    if (st_scan_open(g_t, &rs, &s)) return -1;
    st_partition_view p;
    int n = 0;
    if (st_scan_next_partition(s, &p) == 1) {
        st_row_view r;
        uint32_t prev = 0;
        while (st_scan_next_row(s, &r) == 1) {
            uint32_t v = ((uint32_t)r.ck[0] << 24) | ((uint32_t)r.ck[1] << 16) | ((uint32_t)r.ck[2] << 8) | r.ck[3];
            if (n && v <= prev) { st_scan_close(s); return -2; }
            if (v != (uint32_t)n) { st_scan_close(s); return -3; }   /* rows appear in order, no gaps */
            prev = v;
            n++;
        }
    }
    st_scan_close(s);
    return n;
}

static void *reader(void *arg)
{
    (void)arg;
    int last[WRITERS] = { 0 };
    while (!atomic_load(&g_done)) {
        for (int w = 0; w < WRITERS; w++) {
            int n = count(w);
            if (n < last[w]) return (void *)(intptr_t)(1000 + w);
            last[w] = n;
        }
    }
    return NULL;
}

static void eopen(void)
{
    st_config cfg;
    fixture_config(&cfg);
    cfg.memtable_space = 1 << 20;
    cfg.segment_size = 64 << 10;
    cfg.commitlog_total_space = 512 << 10;
    cfg.compaction_threads = 2;
    cr_assert_eq(st_engine_open(&cfg, &g_e), 0);
    st_table_opts o;
    st_table_opts_defaults(&o);
    o.min_threshold = 2;
    cr_assert_eq(st_table_open(g_e, TID, "ks", "conc", &o, &g_t), 0);
    cr_assert_eq(st_engine_replay(g_e, NULL, NULL), 0);
    cr_assert_eq(st_engine_replay_done(g_e), 0);
}

TestSuite(storage_concurrency, .init = setup, .fini = teardown);

Test(storage_concurrency, writers_readers_flush_compact, .timeout = 120)
{
    eopen();
    pthread_t wt[WRITERS], rt;
    atomic_store(&g_done, 0);
    for (int i = 0; i < WRITERS; i++) pthread_create(&wt[i], NULL, writer, (void *)(intptr_t)i);
    pthread_create(&rt, NULL, reader, NULL);
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(st_table_flush(g_t), 0);
        cr_assert_eq(st_table_compact(g_t), 0);
        usleep(5000);
    }
    for (int i = 0; i < WRITERS; i++) {
        void *r;
        pthread_join(wt[i], &r);
        cr_assert_null(r, "writer %d failed", i);
    }
    atomic_store(&g_done, 1);
    void *rr;
    pthread_join(rt, &rr);
    cr_assert_null(rr, "reader saw a partition shrink or disorder: %ld", (long)(intptr_t)rr);
    for (int w = 0; w < WRITERS; w++) cr_assert_eq(count(w), ROWS);
    st_table_stats ts;
    cr_assert_eq(st_table_stats_get(g_t, &ts), 0);
    cr_assert_gt(ts.bytes_flushed, 0);
    st_engine_close(g_e, false);
    eopen();
    for (int w = 0; w < WRITERS; w++) cr_assert_eq(count(w), ROWS, "after reopen");
    st_engine_close(g_e, true);
    vfs_rmtree(g_dir);
    cr_assert_eq(cs_alloc_count(), 0, "leak: %zu", cs_alloc_count());
}

static int g_ncb;
static void on_sync(void *arg) { (void)arg; g_ncb++; }

/* Group commit while other threads write: every waiter's callback runs on
 * the loop, detach leaves the loop closable. */
Test(storage_concurrency, group_commit_under_load, .timeout = 120)
{
    g_e = open_engine(ST_SYNC_GROUP, 64 << 10);
    cr_assert_eq(st_table_open(g_e, TID, "ks", "conc2", NULL, &g_t), 0);
    uv_loop_t loop;
    uv_loop_init(&loop);
    pthread_t wt[WRITERS];
    for (int i = 0; i < WRITERS; i++) pthread_create(&wt[i], NULL, writer, (void *)(intptr_t)i);
    g_ncb = 0;
    for (int i = 0; i < 300; i++) {
        uint8_t pk[2] = { 'x', (uint8_t)i };
        st_mutation *m = st_mutation_new();
        st_mut_partition(m, g_t, pk, 2);
        st_mut_partition_delete(m, (st_deletion){ 1, 1 });
        st_clog_pos pos;
        cr_assert_eq(st_write(g_e, m, &pos), 0);
        st_mutation_free(m);
        cr_assert_eq(st_sync_wait(g_e, &loop, pos, on_sync, NULL), 0);
        if (i % 10 == 0) uv_run(&loop, UV_RUN_NOWAIT);
    }
    while (g_ncb < 300) uv_run(&loop, UV_RUN_ONCE);
    for (int i = 0; i < WRITERS; i++) pthread_join(wt[i], NULL);
    cr_assert_eq(st_engine_detach_loop(g_e, &loop), 0);
    uv_run(&loop, UV_RUN_NOWAIT);
    cr_assert_eq(uv_loop_close(&loop), 0);
    for (int w = 0; w < WRITERS; w++) cr_assert_eq(count(w), ROWS);
    st_engine_close(g_e, false);
    vfs_rmtree(g_dir);
    cr_assert_eq(cs_alloc_count(), 0, "leak: %zu", cs_alloc_count());
}
