/*
 * test_storage_engine.c: write/read/replay through storage.h.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "storage/storage.h"
#include "storage/storage_int.h"   /* mt_check on the active memtable */
#include "storage/sstable_int.h"   /* st__save_replay_floor */
#include "common/alloc.h"
#include "common/util.h"
#include "common/hash.h"
#include "common/vfs.h"

#define STORAGE_FIXTURE_TAG "st_engine"
#define STORAGE_FIXTURE_TID { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 }
#include "test_storage_fixture.h"

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
    char **names; int n;
    cr_assert_eq(vfs_list(g_c, &names, &n), 0);
    cr_assert_eq(n, 1);
    char p[700];
    snprintf(p, sizeof p, "%s/%s", g_c, names[0]);
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

/* ---------------------------------------------------------------- memtable row forms */

/* Expected state of partition 1: value per clustering (0 = absent). */
#define FORMS_CK 100
static uint32_t g_want[FORMS_CK];

static void del_row(st_engine *e, st_table *t, uint32_t pk, uint32_t ck, int64_t ts)
{
    uint8_t k[4] = { (uint8_t)(pk >> 24), (uint8_t)(pk >> 16), (uint8_t)(pk >> 8), (uint8_t)pk };
    uint8_t c[4] = { (uint8_t)(ck >> 24), (uint8_t)(ck >> 16), (uint8_t)(ck >> 8), (uint8_t)ck };
    st_mutation *m = st_mutation_new();
    st_mut_partition(m, t, k, 4);
    st_mut_row(m, c, 4, 0);
    st_mut_row_delete(m, (st_deletion){ ts, 1 });
    cr_assert_eq(st_write(e, m, NULL), 0);
    st_mutation_free(m);
}

static uint32_t be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }

/* Read partition 1 (whole, or ck in [lo, hi]) and compare with g_want. */
static void check_forms(st_table *t, const char *when, int lo, int hi)
{
    uint8_t k[4] = { 0, 0, 0, 1 };
    uint8_t a[4] = { 0, 0, 0, (uint8_t)lo }, b[4] = { 0, 0, 0, (uint8_t)hi };
    st_slice sl = { { a, 4, true }, { b, 4, true } };
    st_read_spec rs = { .pk = k, .pk_len = 4 };
    if (lo >= 0) { rs.slices = &sl; rs.n_slices = 1; }
    else { lo = 0; hi = FORMS_CK - 1; }
    st_scan *s;
    cr_assert_eq(st_scan_open(t, &rs, &s), 0);
    st_partition_view p;
    int want_n = 0;
    for (int i = lo; i <= hi; i++) want_n += g_want[i] != 0;
    int n = 0, prev = -1;
    if (st_scan_next_partition(s, &p) == 1) {
        st_row_view r;
        while (st_scan_next_row(s, &r) == 1) {
            cr_assert_eq(r.ck_len, 4, "%s", when);
            int ck = (int)be32(r.ck);
            cr_assert(ck > prev && ck >= lo && ck <= hi, "%s: ck %d after %d", when, ck, prev);
            prev = ck;
            cr_assert_eq(r.n_cells, 1, "%s: ck %d", when, ck);
            cr_assert_eq(be32(r.cells[0].val), g_want[ck], "%s: ck %d", when, ck);
            cr_assert_neq(r.liveness.ts_us, INT64_MIN, "%s: ck %d", when, ck);
            n++;
        }
    }
    st_scan_close(s);
    cr_assert_eq(n, want_n, "%s: %d rows, want %d", when, n, want_n);
}

static void check_all_forms(st_table *t, const char *when)
{
    cr_assert_eq(mt_check(t->mem), 0, "%s: memtable check", when);
    check_forms(t, when, -1, -1);
    check_forms(t, when, 3, 17);
    check_forms(t, when, 40, 41);
}

/* A partition goes through every row container (one row, arrays of 2..32,
 * a tree past 32) and every row form (packed, then unpacked by a second
 * write: overwrite, older write, row deletion), read back at each step,
 * then after a flush and with more writes on top. */
Test(storage_engine, memtable_row_forms)
{
    st_engine *e = open_engine(ST_SYNC_PERIODIC, 0);
    st_table *t = open_table(e);
    memset(g_want, 0, sizeof g_want);
    int64_t ts = 1000;
    int steps[] = { 1, 2, 3, 4, 5, 8, 9, 16, 17, 31, 32, 33, 34, 64, 65, 100 };
    int done = 0;
    char when[64];
    for (size_t si = 0; si < sizeof steps / sizeof steps[0]; si++) {
        for (; done < steps[si]; done++) {
            uint32_t ck = (uint32_t)((done * 37 + 11) % FORMS_CK);   /* scrambled order */
            g_want[ck] = 1000 + ck;
            put_int(e, t, 1, ck, g_want[ck], ts++);
        }
        snprintf(when, sizeof when, "%d rows", done);
        check_all_forms(t, when);
    }
    /* Second writes: newer overwrite, older write (loses), row deletion, rewrite after deletion. */
    for (uint32_t ck = 0; ck < FORMS_CK; ck += 3) { g_want[ck] = 5000 + ck; put_int(e, t, 1, ck, g_want[ck], ts++); }
    for (uint32_t ck = 1; ck < FORMS_CK; ck += 3) put_int(e, t, 1, ck, 7, 1);
    for (uint32_t ck = 2; ck < FORMS_CK; ck += 6) { g_want[ck] = 0; del_row(e, t, 1, ck, ts++); }
    for (uint32_t ck = 2; ck < FORMS_CK; ck += 12) { g_want[ck] = 9000 + ck; put_int(e, t, 1, ck, g_want[ck], ts++); }
    check_all_forms(t, "second writes");
    cr_assert_eq(st_table_flush(t), 0);
    check_all_forms(t, "flushed");
    /* On top of the sstable: a small partition again, with a deletion. */
    put_int(e, t, 1, 50, 76, ts++);
    g_want[50] = 77; put_int(e, t, 1, 50, 77, ts++);   /* one row, unpacked by the second write */
    g_want[51] = 0; del_row(e, t, 1, 51, ts++);
    check_all_forms(t, "memtable over sstable");
    st_engine_close(e, true);
    e = open_engine(ST_SYNC_PERIODIC, 0);
    t = open_table(e);
    cr_assert_eq(st_engine_replay(e, NULL, NULL), 0);
    cr_assert_eq(st_engine_replay_done(e), 0);
    check_all_forms(t, "reopened");
    st_engine_close(e, false);
    cr_assert_eq(cs_alloc_count(), 0, "leak: %zu allocations", cs_alloc_count());
}

/* A partition deletion lives in the partition's extension: rows older than
 * it disappear, newer ones stay, in the memtable and after a flush. */
Test(storage_engine, memtable_partition_deletion)
{
    st_engine *e = open_engine(ST_SYNC_PERIODIC, 0);
    st_table *t = open_table(e);
    for (uint32_t ck = 0; ck < 40; ck++) put_int(e, t, 2, ck, ck, 100 + ck);   /* ts 100..139 */
    uint8_t k[4] = { 0, 0, 0, 2 };
    st_mutation *m = st_mutation_new();
    st_mut_partition(m, t, k, 4);
    st_mut_partition_delete(m, (st_deletion){ 119, 1 });                      /* kills ts <= 119 */
    cr_assert_eq(st_write(e, m, NULL), 0);
    st_mutation_free(m);
    put_int(e, t, 2, 5, 555, 200);                                             /* rewritten after it */
    uint32_t last = 0;
    cr_assert_eq(count_rows(t, k, 4, &last), 21);
    cr_assert_eq(last, 39);
    cr_assert_eq(mt_check(t->mem), 0);
    cr_assert_eq(st_table_flush(t), 0);
    cr_assert_eq(count_rows(t, k, 4, &last), 21);
    st_engine_close(e, false);
    cr_assert_eq(cs_alloc_count(), 0);
}

/* Accounted memtable bytes per key/value row (16-byte key, 100-byte value,
 * row marker: what the storage bench's fill and a CQL INSERT into
 * (key blob PRIMARY KEY, value blob) write): within ~2x of the 116 raw bytes. */
Test(storage_engine, memtable_bytes_per_kv_row)
{
    st_engine *e = open_engine(ST_SYNC_PERIODIC, 0);
    st_table *t = open_table(e);
    int n = 20000;
    uint8_t v[100];
    for (int i = 0; i < n; i++) {
        char k[17];
        snprintf(k, sizeof k, "%016d", (i * 7919) % n);
        memset(v, i & 0xff, sizeof v);
        st_mutation *m = st_mutation_new();
        st_mut_partition(m, t, (const uint8_t *)k, 16);
        st_mut_row(m, NULL, 0, 0);
        st_mut_row_liveness(m, (st_liveness){ .ts_us = 1000 + i });
        st_cell c = { .col = 1, .ts_us = 1000 + i, .val = v, .val_len = sizeof v };
        st_mut_cell(m, &c);
        cr_assert_eq(st_write(e, m, NULL), 0);
        st_mutation_free(m);
    }
    st_table_stats ts;
    cr_assert_eq(st_table_stats_get(t, &ts), 0);
    cr_assert_eq(ts.memtable_partitions, (uint64_t)n);
    double per = (double)ts.memtable_bytes / n;
    fprintf(stderr, "memtable: %.1f accounted bytes per 116-byte kv row\n", per);
    cr_assert_lt(per, 2.5 * 116, "%.1f bytes per row", per);
    cr_assert_eq(mt_check(t->mem), 0);
    cr_assert_eq(count_rows(t, NULL, 0, NULL), n);
    st_engine_close(e, false);
    cr_assert_eq(cs_alloc_count(), 0);
}

/* Apply one row (key i, value v) to memtable m under a chosen token. */
static void idx_put(st_table *t, mt_memtable *m, int64_t token, uint32_t i, uint32_t v)
{
    uint8_t k[8] = { 'p', 'k', 0, 0, (uint8_t)(i >> 24), (uint8_t)(i >> 16), (uint8_t)(i >> 8), (uint8_t)i };
    uint8_t val[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v };
    st_mutation *mu = st_mutation_new();
    st_mut_partition(mu, t, k, i == UINT32_MAX ? 0 : 8);          /* key ~0: the empty key */
    st_mut_row(mu, NULL, 0, 0);
    st_mut_row_liveness(mu, (st_liveness){ 1000 + v, 0, 0 });
    st_cell c = { .col = 1, .ts_us = 1000 + v, .val = val, .val_len = 4 };
    st_mut_cell(mu, &c);
    cs_rd r;
    cs_rd_init(&r, mu->ops.p, mu->ops.len);
    st__op op;
    cr_assert_eq(st__op_next(&r, &op), 1);
    cr_assert_eq(op.kind, ST__OP_PARTITION);
    size_t added;
    cr_assert_eq(mt_apply(m, token, op.pk, op.pk_len, &r, &added), 0);
    st_mutation_free(mu);
}

/* Read key i under token from m: -1 if absent, else its value. */
static int64_t idx_get(mt_memtable *m, int64_t token, uint32_t i)
{
    uint8_t k[8] = { 'p', 'k', 0, 0, (uint8_t)(i >> 24), (uint8_t)(i >> 16), (uint8_t)(i >> 8), (uint8_t)i };
    cs_arena a;
    cs_arena_init(&a);
    st__part p;
    int rc = mt_read_partition(m, token, k, i == UINT32_MAX ? 0 : 8, NULL, 0, &p, &a);
    cr_assert(rc == 0 || rc == 1, "rc %d", rc);
    int64_t v = -1;
    if (rc == 1) {
        cr_assert_eq(p.n_rows, 1);
        cr_assert_eq(p.rows[0]->n_cells, 1);
        const uint8_t *b = p.rows[0]->cells[0].val;
        v = (int64_t)((uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3]);
    }
    cs_arena_destroy(&a);
    return v;
}

/* Token of key i: runs of three keys share one (colliding tokens), the
 * rest are spread; key ~0 is the empty key, under token 0 with key 0. */
static int64_t idx_token(uint32_t i)
{
    if (i == UINT32_MAX) return 0;
    return i % 4 == 3 ? (int64_t)(i / 12) : (int64_t)((uint64_t)i * 0x9E3779B97F4A7C15ull);
}

/* The memtable's partition index: lookups through it agree with what was
 * written while its table doubles (mt_check, in the middle of moving the
 * old table too), with tokens shared by several keys and the empty key,
 * for absent keys (same token, other key; unseen tokens), after
 * overwrites; and a memtable sized ahead (mt_expect_partitions) does not
 * grow its table. */
Test(storage_engine, memtable_partition_index)
{
    st_engine *e = open_engine(ST_SYNC_PERIODIC, 0);
    st_table *t = open_table(e);
    mt_memtable *m = mt_new(NULL);
    cr_assert_not_null(m);
    const uint32_t n = 40000;
    idx_put(t, m, idx_token(UINT32_MAX), UINT32_MAX, 7);
    unsigned grew = 0, last_bits = 0, moving_checked = 0;
    for (uint32_t i = 0; i < n; i++) {
        idx_put(t, m, idx_token(i), i, i);
        if (m->idx.bits != last_bits) { grew++; last_bits = m->idx.bits; }
        /* once per growth, halfway through moving the old table */
        if (m->idx_old.slots && m->idx_moved > ((size_t)1 << m->idx_old.bits) / 2 && moving_checked != m->idx.bits) {
            cr_assert_eq(mt_check(m), 0, "moving, after key %u", i);
            moving_checked = m->idx.bits;
        }
        if ((i & (i + 1)) == 0 || i % 9973 == 0) cr_assert_eq(mt_check(m), 0, "after key %u", i);
    }
    cr_assert_geq(moving_checked, 10, "checked while moving up to %u bits", moving_checked);
    cr_assert(!m->idx_off, "index turned off");
    cr_assert_geq(grew, 8, "table grew %u times", grew);
    cr_assert_eq(mt_partitions(m), (size_t)n + 1);
    cr_assert_eq(mt_check(m), 0);
    for (uint32_t i = 0; i < n; i++) cr_assert_eq(idx_get(m, idx_token(i), i), (int64_t)i, "key %u", i);
    cr_assert_eq(idx_get(m, 0, UINT32_MAX), 7);
    for (uint32_t i = n; i < n + 2000; i++) {
        cr_assert_eq(idx_get(m, idx_token(i), i), -1, "absent key %u", i);
        cr_assert_eq(idx_get(m, idx_token(i % n), i), -1, "absent key %u under a present token", i);
    }
    /* Overwrites find their partition: no new ones, newest value read. */
    for (uint32_t i = 0; i < n; i += 7) idx_put(t, m, idx_token(i), i, i + 1000000);
    cr_assert_eq(mt_partitions(m), (size_t)n + 1);
    for (uint32_t i = 0; i < n; i++) cr_assert_eq(idx_get(m, idx_token(i), i), (int64_t)(i % 7 ? i : i + 1000000), "key %u", i);
    cr_assert_eq(mt_check(m), 0);

    /* Sized from the memtable before: one table, no growth. */
    mt_memtable *m2 = mt_new(NULL);
    mt_expect_partitions(m2, mt_partitions(m));
    idx_put(t, m2, idx_token(0), 0, 0);
    unsigned bits = m2->idx.bits;
    cr_assert_geq((size_t)3 << bits, (size_t)4 * (n + 1), "%u bits for %u partitions", bits, n + 1);
    for (uint32_t i = 1; i <= n; i++) idx_put(t, m2, idx_token(i), i, i);
    cr_assert_eq(m2->idx.bits, bits, "grew from %u to %u bits", bits, m2->idx.bits);
    cr_assert_null(m2->idx_old.slots);
    cr_assert_eq(mt_check(m2), 0);
    mt_unref(m2);
    mt_unref(m);
    st_engine_close(e, false);
    cr_assert_eq(cs_alloc_count(), 0);
}

/* Big index tables (memtable.c, IDX_MAP_BYTES and up) are mapped on 2 MiB
 * boundaries; a dead memtable's table goes zeroed into the pool and the
 * next memtable of its size starts with it (no stale slot: every key of
 * the one before reads absent); a second one at the same time maps its
 * own; a growing memtable unmaps the mapped table it replaces; the pool
 * keeps what trim(false) finds fresh and trim(true) empties it. */
Test(storage_engine, memtable_index_table_recycled)
{
    st_engine *e = open_engine(ST_SYNC_PERIODIC, 0);
    st_table *t = open_table(e);
    const uintptr_t huge = (uintptr_t)2 << 20;
    const size_t table = (size_t)4 << 20;   /* 2^19 slots: what 200k partitions ask for */
    mt_index_pool_trim(true);
    cr_assert_eq(mt_index_pool_bytes(), 0);
    mt_memtable *m1 = mt_new(NULL);
    mt_expect_partitions(m1, 200000);
    for (uint32_t i = 0; i < 3000; i++) idx_put(t, m1, idx_token(i), i, i);
    uint64_t *slots = m1->idx.slots;
    cr_assert_eq(m1->idx.bits, 19);
    cr_assert_eq((uintptr_t)slots & (huge - 1), 0, "table at %p", (void *)slots);
    mt_unref(m1);   /* not a request thread: freed here, its table pooled */
    cr_assert_eq(mt_index_pool_bytes(), table);

    mt_memtable *m2 = mt_new(NULL);
    mt_expect_partitions(m2, 200000);
    idx_put(t, m2, idx_token(5000), 5000, 1);
    cr_assert_eq(m2->idx.slots, slots, "the pooled table");
    cr_assert_eq(mt_index_pool_bytes(), 0);
    for (uint32_t i = 0; i < 3000; i++) cr_assert_eq(idx_get(m2, idx_token(i), i), -1, "key %u of the memtable before", i);
    for (uint32_t i = 0; i < 3000; i += 3) idx_put(t, m2, idx_token(i), i, i + 7);
    for (uint32_t i = 0; i < 3000; i++) cr_assert_eq(idx_get(m2, idx_token(i), i), i % 3 ? -1 : (int64_t)i + 7, "key %u", i);
    cr_assert_eq(mt_check(m2), 0);

    mt_memtable *m3 = mt_new(NULL);   /* pool empty: a mapping of its own */
    mt_expect_partitions(m3, 200000);
    idx_put(t, m3, idx_token(1), 1, 1);
    cr_assert_neq(m3->idx.slots, slots);
    cr_assert_eq((uintptr_t)m3->idx.slots & (huge - 1), 0);
    mt_unref(m2);
    mt_unref(m3);
    cr_assert_eq(mt_index_pool_bytes(), 2 * table);
    mt_index_pool_trim(false);
    cr_assert_eq(mt_index_pool_bytes(), 2 * table, "fresh tables stay");

    /* Growth from a mapped 2 MiB table (2^18 slots) to 4 MiB: the pooled
     * table of that size is taken, the 2 MiB one unmapped once moved. */
    mt_memtable *m4 = mt_new(NULL);
    mt_expect_partitions(m4, 150000);
    const uint32_t n = 230000;   /* grows at 196,608; moved over 16 slots per insert */
    for (uint32_t i = 0; i < n; i++) {
        idx_put(t, m4, idx_token(i), i, i);
        if (i == 0) cr_assert_eq(m4->idx.bits, 18);
    }
    cr_assert_eq(m4->idx.bits, 19);
    cr_assert_null(m4->idx_old.slots, "the 2 MiB table moved over and unmapped");
    cr_assert_eq(mt_index_pool_bytes(), table, "one pooled table taken by the growth");
    cr_assert_eq(mt_check(m4), 0);
    for (uint32_t i = 0; i < n; i += 97) cr_assert_eq(idx_get(m4, idx_token(i), i), (int64_t)i, "key %u", i);
    cr_assert_eq(idx_get(m4, idx_token(n + 1), n + 1), -1);
    mt_unref(m4);
    cr_assert_eq(mt_index_pool_bytes(), 2 * table);
    mt_index_pool_trim(true);
    cr_assert_eq(mt_index_pool_bytes(), 0);

    /* A flush job's prepare: a resident table of the size asked for, once;
     * none for a small memtable; the next memtable of that size takes it. */
    mt_index_pool_prepare(1000);
    cr_assert_eq(mt_index_pool_bytes(), 0, "small tables are calloc'd");
    mt_index_pool_prepare(200000);
    cr_assert_eq(mt_index_pool_bytes(), table);
    mt_index_pool_prepare(200000);
    cr_assert_eq(mt_index_pool_bytes(), table, "one is enough");
    mt_memtable *m5 = mt_new(NULL);
    mt_expect_partitions(m5, 200000);
    idx_put(t, m5, idx_token(9), 9, 9);
    cr_assert_eq(mt_index_pool_bytes(), 0);
    cr_assert_eq(idx_get(m5, idx_token(9), 9), 9);
    cr_assert_eq(mt_check(m5), 0);
    mt_unref(m5);
    mt_index_pool_trim(true);
    st_engine_close(e, false);
    cr_assert_eq(cs_alloc_count(), 0);
}

/* st_mutation_reset: an emptied mutation (its sticky error cleared) writes
 * like a new one, and holds nothing of what it held before. */
Test(storage_engine, mutation_reset_reuse)
{
    st_engine *e = open_engine(ST_SYNC_PERIODIC, 0);
    st_table *t = open_table(e);
    uint8_t k1[4] = { 0, 0, 0, 1 }, k2[4] = { 0, 0, 0, 2 }, c[4] = { 0, 0, 0, 0 }, v[4] = { 0, 0, 0, 9 };
    st_mutation *m = st_mutation_new();
    st_mut_row(m, c, 4, 0);                       /* no partition: sticky error */
    cr_assert_neq(st_write(e, m, NULL), 0);
    st_mutation_reset(m);
    cr_assert(st_mutation_empty(m));
    st_mut_partition(m, t, k1, 4);
    st_mut_row(m, c, 4, 0);
    st_mut_row_liveness(m, (st_liveness){ 10, 0, 0 });
    cr_assert_eq(st_write(e, m, NULL), 0);
    st_mutation_reset(m);
    cr_assert(st_mutation_empty(m));
    st_mut_partition(m, t, k2, 4);
    st_mut_row(m, c, 4, 0);
    st_cell cell = { .col = 7, .ts_us = 11, .val = v, .val_len = 4 };
    st_mut_cell(m, &cell);
    cr_assert_eq(st_write(e, m, NULL), 0);
    st_mutation_reset(m);
    st_mutation_free(m);
    uint32_t last = 0;
    cr_assert_eq(count_rows(t, k1, 4, NULL), 1);
    cr_assert_eq(count_rows(t, k2, 4, &last), 1);
    cr_assert_eq(last, 9);
    cr_assert_eq(count_rows(t, NULL, 0, NULL), 2);   /* k2's write did not repeat k1 */
    st_engine_close(e, false);
    cr_assert_eq(cs_alloc_count(), 0, "leak: %zu allocations", cs_alloc_count());
}

/* Background priority (engine_bg.c "Priority"): the flush thread runs under
 * SCHED_IDLE for a flush nobody waits for, at normal priority while a caller
 * waits (st__bg_urgent) or memtable memory nears back-pressure. */
static int bg_policy(st_engine *e, int i)
{
    int pol; struct sched_param sp;
    cr_assert_eq(pthread_getschedparam(e->threads[i], &pol, &sp), 0);
    return pol;
}

static void flush_async_and_wait(st_engine *e, st_table *t, uint32_t pk)
{
    put_int(e, t, pk, 1, pk, 1000 + pk);
    cr_assert_eq(st__flush_table(t, false), 0);
    for (int i = 0; i < 5000; i++) {
        pthread_mutex_lock(&t->mu);
        int n = t->flush_jobs;
        pthread_mutex_unlock(&t->mu);
        if (n == 0) return;
        usleep(1000);
    }
    cr_assert_fail("flush did not finish");
}

/* The flush's memory urgency (engine_bg.c st__bg_mem_pressure): the 3/4
 * rule at once; the rate rule only from the growth of the active memtables
 * after a baseline taken BG_RATE_MIN_NS after the switch, over
 * BG_RATE_MIN_NS and BG_RATE_MIN_BYTES: what is there at the switch (a few
 * writes just after it, the fresh memtable's first index table, the other
 * tables' memtables) is not a rate. */
Test(storage_engine, flush_pressure_rate_rule)
{
    st_engine *e = open_engine(ST_SYNC_PERIODIC, 0);
    size_t space = e->cfg.memtable_space, MiB = (size_t)1 << 20;
    size_t saved_total = atomic_load(&e->mem_total), saved_fl = atomic_load(&e->mem_flushing);
    uint64_t saved_sw = atomic_load(&e->bg_switch_ns), now = cs_mono_ns();
    /* half flushing, 1 MiB written 10 us after the switch: too early to tell */
    atomic_store(&e->mem_flushing, space / 2);
    atomic_store(&e->mem_total, space / 2 + MiB);
    atomic_store(&e->bg_switch_ns, now - 10000);
    cr_assert(!st__bg_mem_pressure(e));
    cr_assert_lt(e->bg_base_ns, now - 10000, "no baseline before BG_RATE_MIN_NS");
    /* 200 ms after the switch, 16 MiB active (an index table sized for a
     * million partitions, counted at the first write): the baseline, not a
     * rate of 80 MB/s */
    atomic_store(&e->bg_switch_ns, now - 200000000ull);
    atomic_store(&e->mem_total, space / 2 + 16 * MiB);
    cr_assert(!st__bg_mem_pressure(e));
    cr_assert_geq(e->bg_base_ns, now);
    cr_assert_eq(e->bg_base_active, 16 * MiB);
    /* right after the baseline: too early to tell, whatever came since */
    atomic_store(&e->mem_total, space / 2 + 56 * MiB);
    cr_assert(!st__bg_mem_pressure(e));
    /* 200 ms after the baseline: 1 MiB more (5 MB/s, headroom for ~20 s) no;
     * 40 MiB more (200 MB/s) yes */
    atomic_store(&e->bg_switch_ns, now - 400000000ull);
    e->bg_base_ns = now - 200000000ull;
    atomic_store(&e->mem_total, space / 2 + 17 * MiB);
    cr_assert(!st__bg_mem_pressure(e));
    atomic_store(&e->mem_total, space / 2 + 56 * MiB);
    cr_assert(st__bg_mem_pressure(e));
    /* under 1 MiB of growth is never enough to tell */
    atomic_store(&e->bg_switch_ns, now - 3000000000ull);
    e->bg_base_ns = now - 2000000000ull;
    atomic_store(&e->mem_total, space / 2 + 16 * MiB + MiB / 2);
    cr_assert(!st__bg_mem_pressure(e));
    cr_assert_eq(e->bg_base_ns, now - 2000000000ull, "the baseline stays until the next switch");
    /* a new switch takes a new baseline */
    atomic_store(&e->bg_switch_ns, now - 150000000ull);
    atomic_store(&e->mem_total, space / 2 + 60 * MiB);
    cr_assert(!st__bg_mem_pressure(e));
    cr_assert_eq(e->bg_base_active, 60 * MiB);
    /* over 3/4 of the space: at once, whatever the rate */
    atomic_store(&e->mem_total, space / 4 * 3 + MiB);
    atomic_store(&e->bg_switch_ns, now);
    cr_assert(st__bg_mem_pressure(e));
    /* nothing flushing and under 3/4: no */
    atomic_store(&e->mem_flushing, 0);
    atomic_store(&e->mem_total, space / 2);
    cr_assert(!st__bg_mem_pressure(e));
    atomic_store(&e->mem_total, saved_total);
    atomic_store(&e->mem_flushing, saved_fl);
    atomic_store(&e->bg_switch_ns, saved_sw);
    st_engine_close(e, false);
}

Test(storage_engine, background_priority)
{
    st_engine *e = open_engine(ST_SYNC_PERIODIC, 0);
    st_table *t = open_table(e);
    flush_async_and_wait(e, t, 1);
    if (!atomic_load(&e->bg_idle_ok)) {   /* no CAP_SYS_NICE: never idle */
        cr_assert(!atomic_load(&e->bg_idle[0]));
        cr_assert_eq(bg_policy(e, 0), SCHED_OTHER);
        st_engine_close(e, false);
        return;
    }
    cr_assert(atomic_load(&e->bg_idle[0]));
    cr_assert_eq(bg_policy(e, 0), SCHED_IDLE);
    /* A waiter raises the thread at once, and it stays up while one waits. */
    st__bg_urgent(e, 0, +1);
    cr_assert(!atomic_load(&e->bg_idle[0]));
    cr_assert_eq(bg_policy(e, 0), SCHED_OTHER);
    flush_async_and_wait(e, t, 2);
    cr_assert_eq(bg_policy(e, 0), SCHED_OTHER);
    st__bg_urgent(e, 0, -1);
    flush_async_and_wait(e, t, 3);
    cr_assert_eq(bg_policy(e, 0), SCHED_IDLE);
    /* A synchronous flush runs at normal priority. */
    put_int(e, t, 4, 1, 4, 1004);
    cr_assert_eq(st_table_flush(t), 0);
    cr_assert_eq(bg_policy(e, 0), SCHED_OTHER);
    flush_async_and_wait(e, t, 5);
    cr_assert_eq(bg_policy(e, 0), SCHED_IDLE);
    /* Memory at back-pressure: the held writer raises it. */
    e->cfg.memtable_space = 1;
    put_int(e, t, 6, 1, 6, 1006);
    cr_assert(!atomic_load(&e->bg_idle[0]));
    cr_assert_eq(bg_policy(e, 0), SCHED_OTHER);
    e->cfg.memtable_space = 256u << 20;
    cr_assert_eq(count_rows(t, NULL, 0, NULL), 6);
    st_engine_close(e, true);
}

/* ---------------------------------------------------------------- side info
 *
 * st_write applies a mutation with the builder's side info (storage_int.h
 * st__mrow: a new row's run is copied, not decoded); replay has only the
 * op stream.  Both must build the same memtable. */

static void dump_row(cs_buf *b, const st__row *r)
{
    cs_buf_put_u32(b, r->ck_len);
    if (r->ck_len) cs_buf_put(b, r->ck, r->ck_len);
    cs_buf_put_u8(b, r->flags);
    cs_buf_put_u64(b, (uint64_t)r->lv.ts_us);
    cs_buf_put_u32(b, (uint32_t)r->lv.ttl_s);
    cs_buf_put_u32(b, (uint32_t)r->lv.ldt_s);
    cs_buf_put_u64(b, (uint64_t)r->del.ts_us);
    cs_buf_put_u32(b, (uint32_t)r->del.ldt_s);
    cs_buf_put_u32(b, (uint32_t)r->n_cdels);
    for (int i = 0; i < r->n_cdels; i++) {
        cs_buf_put_u32(b, r->cdels[i].col);
        cs_buf_put_u64(b, (uint64_t)r->cdels[i].d.ts_us);
        cs_buf_put_u32(b, (uint32_t)r->cdels[i].d.ldt_s);
    }
    cs_buf_put_u32(b, (uint32_t)r->n_cells);
    for (int i = 0; i < r->n_cells; i++) {
        const st_cell *c = &r->cells[i];
        cs_buf_put_u32(b, c->col);
        cs_buf_put_u8(b, c->flags);
        cs_buf_put_u64(b, (uint64_t)c->ts_us);
        cs_buf_put_u32(b, (uint32_t)c->ttl_s);
        cs_buf_put_u32(b, (uint32_t)c->ldt_s);
        cs_buf_put_u32(b, c->path_len);
        if (c->path_len) cs_buf_put(b, c->path, c->path_len);
        cs_buf_put_u32(b, c->val_len);
        if (c->val_len) cs_buf_put(b, c->val, c->val_len);
    }
}

/* mt_foreach's sink for mt_dump: packed rows declined, so every row comes
 * decoded; a partition's rows are kept apart until its end (their count
 * goes first). */
typedef struct dump_ctx { cs_buf *b; cs_buf rows; uint32_t n_rows; } dump_ctx;

static int dump_begin(void *arg, const st__part *p)
{
    dump_ctx *d = arg;
    cs_buf *b = d->b;
    cs_buf_put_u64(b, (uint64_t)p->token);
    cs_buf_put_u32(b, p->pk_len);
    if (p->pk_len) cs_buf_put(b, p->pk, p->pk_len);
    cs_buf_put_u64(b, (uint64_t)p->pdel.ts_us);
    cs_buf_put_u32(b, (uint32_t)p->pdel.ldt_s);
    cs_buf_put_u32(b, (uint32_t)p->n_rts);
    for (int i = 0; i < p->n_rts; i++) {
        const st__rt *rt = &p->rts[i];
        cs_buf_put_u8(b, (uint8_t)(rt->start_incl | rt->end_incl << 1));
        cs_buf_put_u32(b, rt->start_len);
        if (rt->start_len) cs_buf_put(b, rt->start, rt->start_len);
        cs_buf_put_u32(b, rt->end_len);
        if (rt->end_len) cs_buf_put(b, rt->end, rt->end_len);
        cs_buf_put_u64(b, (uint64_t)rt->d.ts_us);
        cs_buf_put_u32(b, (uint32_t)rt->d.ldt_s);
    }
    cs_buf_put_u8(b, p->stat != NULL);
    if (p->stat) dump_row(b, p->stat);
    cs_buf_reset(&d->rows);
    d->n_rows = 0;
    return 0;
}

static int dump_packed(void *arg, const uint8_t *ck, uint32_t ck_len, uint8_t flags, const uint8_t *ops,
                       uint32_t ops_len, uint32_t n_cells)
{
    return 1;
}

static int dump_rows(void *arg, st__row *const *rows, int n)
{
    dump_ctx *d = arg;
    for (int i = 0; i < n; i++) dump_row(&d->rows, rows[i]);
    d->n_rows += (uint32_t)n;
    return 0;
}

static int dump_end(void *arg)
{
    dump_ctx *d = arg;
    cs_buf_put_u32(d->b, d->n_rows);
    cs_buf_put(d->b, d->rows.p, d->rows.len);
    return 0;
}

/* Everything a memtable holds, and its counters, as bytes. */
static void mt_dump(mt_memtable *m, cs_buf *b)
{
    cr_assert_eq(mt_check(m), 0);
    dump_ctx d = { b, { 0 }, 0 };
    cs_buf_init(&d.rows);
    mt_sink s = { dump_begin, dump_packed, dump_rows, dump_end, &d };
    cr_assert_eq(mt_foreach(m, &s), 0);
    cr_assert(!d.rows.err);
    cs_buf_destroy(&d.rows);
    cs_buf_put_u64(b, (uint64_t)atomic_load(&m->min_ts));
    cs_buf_put_u64(b, atomic_load(&m->cells));
    cs_buf_put_u64(b, atomic_load(&m->n_rows));
    cs_buf_put_u64(b, mt_partitions(m));
    cr_assert(!b->err);
}

static bool is_row_level(uint8_t k)
{
    return k == ST__OP_LIVENESS || k == ST__OP_ROWDEL || k == ST__OP_CDEL || k == ST__OP_CELL;
}

/* The side info says what decoding the stream says: tables, rows per
 * partition, and each ROW op's run (bytes, cells, smallest timestamp). */
static void check_side(const st_mutation *mu)
{
    cr_assert(!mu->side_off);
    cs_rd r;
    cs_rd_init(&r, mu->ops.p, mu->ops.len);
    st__op op;
    uint32_t np = 0, nr = 0;
    int k;
    while ((k = st__op_next(&r, &op)) == 1) {
        if (op.kind == ST__OP_PARTITION) {
            cr_assert_lt(np, mu->n_parts);
            cr_assert_arr_eq(mu->parts[np].t->id, op.id, 16);
            cr_assert_eq(mu->parts[np].body, r.pos);
            cr_assert_eq(mu->parts[np].pk_len, op.pk_len);
            if (op.pk_len) cr_assert_eq(op.pk, mu->ops.p + r.pos - op.pk_len);
            cr_assert_eq(mu->parts[np].row0, nr);
            if (np) cr_assert_eq(mu->parts[np - 1].row0 + mu->parts[np - 1].n_rows, nr);
            np++;
        } else if (op.kind == ST__OP_ROW) {
            cr_assert_lt(nr, mu->n_rows);
            size_t start = r.pos;
            uint32_t cells = 0;
            int64_t min = INT64_MAX;
            while (cs_rd_left(&r) && is_row_level(r.p[r.pos])) {
                st__op o;
                cr_assert_eq(st__op_next(&r, &o), 1);
                int64_t ts = o.kind == ST__OP_LIVENESS ? o.lv.ts_us : o.kind == ST__OP_CELL ? o.cell.ts_us : o.d.ts_us;
                if (ts != INT64_MIN && ts < min) min = ts;
                cells += o.kind == ST__OP_CELL;
            }
            const st__mrow *s = &mu->rows[nr++];
            cr_assert_eq(s->run0, start, "row %u", nr - 1);
            cr_assert_eq(s->ck_len, op.ck_len, "row %u", nr - 1);
            if (op.ck_len) cr_assert_eq(op.ck, mu->ops.p + start - op.ck_len);
            cr_assert_eq(s->flags, op.rflags, "row %u", nr - 1);
            cr_assert_eq(s->ops_len, r.pos - start, "row %u: run of %u bytes, want %zu", nr - 1, s->ops_len, r.pos - start);
            cr_assert_eq(s->n_cells, cells, "row %u", nr - 1);
            cr_assert_eq(s->min_ts, min, "row %u", nr - 1);
        }
    }
    cr_assert_eq(k, 0);
    cr_assert_eq(np, mu->n_parts);
    cr_assert_eq(nr, mu->n_rows);
    cr_assert_eq(mu->parts[np - 1].row0 + mu->parts[np - 1].n_rows, nr);
}

/* Apply mu to `with` using its side info (as st_write does) and to
 * `without` from its bytes alone (as replay does), partition by partition. */
static void apply_both(mt_memtable *with, mt_memtable *without, const st_mutation *mu)
{
    check_side(mu);
    cs_rd r1, r2;
    cs_rd_init(&r1, mu->ops.p, mu->ops.len);
    cs_rd_init(&r2, mu->ops.p, mu->ops.len);
    st__op op;
    uint32_t pi = 0;
    while (st__op_next(&r1, &op) == 1) {
        cr_assert_eq(op.kind, ST__OP_PARTITION);
        const st__mpart *sp = &mu->parts[pi++];
        int64_t tok = cs_murmur3_token(op.pk, op.pk_len);
        size_t a1 = 0, a2 = 0;
        cr_assert_eq(mt_apply_side(with, tok, op.pk, op.pk_len, &r1, &mu->rows[sp->row0], sp->n_rows, NULL, &a1), 0);
        cr_assert_eq(st__op_next(&r2, &op), 1);
        cr_assert_eq(mt_apply(without, tok, op.pk, op.pk_len, &r2, &a2), 0);
        cr_assert_eq(r1.pos, r2.pos);
        cr_assert_eq(a1, a2, "partition %u: %zu bytes added with side info, %zu without", pi - 1, a1, a2);
        cr_assert_eq(atomic_load(&with->min_ts), atomic_load(&without->min_ts), "partition %u", pi - 1);
        cr_assert_eq(atomic_load(&with->cells), atomic_load(&without->cells), "partition %u", pi - 1);
        cr_assert_eq(atomic_load(&with->n_rows), atomic_load(&without->n_rows), "partition %u", pi - 1);
    }
}

static const uint8_t *kb(int i)
{
    static uint8_t k[32][4];
    i &= 31;
    k[i][0] = 'k'; k[i][1] = 0; k[i][2] = (uint8_t)(i >> 8); k[i][3] = (uint8_t)i;
    return k[i];
}

static int side_rnd(uint64_t *s, int k)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (int)((*s >> 33) % (uint64_t)k);
}

/* Hand-made mutations covering every op kind, then random ones (overwrites
 * of packed and unpacked rows, several rows and partitions per mutation). */
static int side_mutations(st_table *t, st_table *t2, st_mutation **out, int max)
{
    int n = 0;
    uint8_t v8[8] = { 0, 0, 0, 0, 0, 0, 0, 5 }, big[300];
    memset(big, 0xab, sizeof big);
    st_mutation *m;
    /* 1: rows with a marker, plain, expiring and tombstone cells; a static
     * row; a second partition in another table. */
    m = out[n++] = st_mutation_new();
    st_mut_partition(m, t, kb(1), 4);
    st_mut_row(m, (const uint8_t *)"a", 1, 0);
    st_mut_row_liveness(m, (st_liveness){ 100, 0, 0 });
    st_mut_cell(m, &(st_cell){ .col = 1, .ts_us = 100, .val = (const uint8_t *)"x", .val_len = 1 });
    st_mut_cell(m, &(st_cell){ .col = 2, .flags = ST_CELL_EXPIRING, .ts_us = 90, .ttl_s = 60, .ldt_s = 1000060,
                               .val = big, .val_len = sizeof big });
    st_mut_row(m, (const uint8_t *)"b", 1, 0);
    st_mut_cell(m, &(st_cell){ .col = 1, .flags = ST_CELL_TOMBSTONE, .ts_us = 101, .ldt_s = 1000000 });
    st_mut_row(m, NULL, 0, ST_ROW_STATIC);
    st_mut_cell(m, &(st_cell){ .col = 9, .ts_us = 102, .val = (const uint8_t *)"s", .val_len = 1 });
    st_mut_partition(m, t2, kb(1), 4);
    st_mut_row(m, (const uint8_t *)"a", 1, 0);
    st_mut_row_liveness(m, (st_liveness){ 50, 10, 1000010 });
    /* 2: overwrite of packed row a (newer) and b (older); a row deletion; a
     * counter; an empty row (no ops) and one with an absent marker. */
    m = out[n++] = st_mutation_new();
    st_mut_partition(m, t, kb(1), 4);
    st_mut_row(m, (const uint8_t *)"a", 1, 0);
    st_mut_cell(m, &(st_cell){ .col = 1, .ts_us = 200, .val = (const uint8_t *)"y", .val_len = 1 });
    st_mut_row(m, (const uint8_t *)"b", 1, 0);
    st_mut_cell(m, &(st_cell){ .col = 3, .ts_us = 20, .val = (const uint8_t *)"old", .val_len = 3 });
    st_mut_row(m, (const uint8_t *)"c", 1, 0);
    st_mut_row_delete(m, (st_deletion){ 150, 1000001 });
    st_mut_row(m, (const uint8_t *)"d", 1, 0);
    st_mut_cell(m, &(st_cell){ .col = 4, .flags = ST_CELL_COUNTER, .ts_us = 160, .val = v8, .val_len = 8 });
    st_mut_row(m, (const uint8_t *)"e", 1, 0);
    st_mut_row(m, (const uint8_t *)"f", 1, 0);
    st_mut_row_liveness(m, (st_liveness){ INT64_MIN, 0, 0 });
    /* 3: partition deletion and range tombstone before rows; a collection:
     * complex deletion then cells with paths; a partition named twice. */
    m = out[n++] = st_mutation_new();
    st_mut_partition(m, t, kb(2), 4);
    st_mut_partition_delete(m, (st_deletion){ 5, 999 });
    st_mut_range_delete(m, (st_bound){ (const uint8_t *)"a", 1, true }, (st_bound){ (const uint8_t *)"c", 1, false },
                        (st_deletion){ 6, 999 });
    st_mut_row(m, (const uint8_t *)"d", 1, 0);
    st_mut_row_liveness(m, (st_liveness){ 300, 0, 0 });
    st_mut_complex_delete(m, 3, (st_deletion){ 299, 1000002 });
    st_mut_cell(m, &(st_cell){ .col = 3, .ts_us = 300, .path = (const uint8_t *)"p2", .path_len = 2,
                               .val = (const uint8_t *)"v2", .val_len = 2 });
    st_mut_cell(m, &(st_cell){ .col = 3, .ts_us = 300, .path = (const uint8_t *)"p1", .path_len = 2 });
    st_mut_partition(m, t, kb(3), 4);
    st_mut_row(m, (const uint8_t *)"a", 1, 0);
    st_mut_cell(m, &(st_cell){ .col = 1, .ts_us = 7, .val = (const uint8_t *)"z", .val_len = 1 });
    st_mut_partition(m, t, kb(2), 4);
    st_mut_row(m, (const uint8_t *)"d", 1, 0);
    st_mut_cell(m, &(st_cell){ .col = 3, .ts_us = 301, .path = (const uint8_t *)"p1", .path_len = 2,
                               .val = (const uint8_t *)"w", .val_len = 1 });
    /* 4: a row's ops split by a partition deletion and a range tombstone
     * (the ops after them reconcile into the row the run made), and the
     * same new row twice in one mutation. */
    m = out[n++] = st_mutation_new();
    st_mut_partition(m, t, kb(4), 4);
    st_mut_row(m, (const uint8_t *)"a", 1, 0);
    st_mut_cell(m, &(st_cell){ .col = 1, .ts_us = 400, .val = (const uint8_t *)"1", .val_len = 1 });
    st_mut_partition_delete(m, (st_deletion){ 3, 999 });
    st_mut_cell(m, &(st_cell){ .col = 2, .ts_us = 1, .val = (const uint8_t *)"2", .val_len = 1 });
    st_mut_range_delete(m, (st_bound){ NULL, 0, true }, (st_bound){ (const uint8_t *)"a", 1, true },
                        (st_deletion){ 2, 999 });
    st_mut_row_delete(m, (st_deletion){ 0, 999 });
    st_mut_row(m, (const uint8_t *)"b", 1, 0);
    st_mut_cell(m, &(st_cell){ .col = 1, .ts_us = 401, .val = (const uint8_t *)"3", .val_len = 1 });
    st_mut_row(m, (const uint8_t *)"b", 1, 0);
    st_mut_cell(m, &(st_cell){ .col = 1, .ts_us = 402, .val = (const uint8_t *)"4", .val_len = 1 });
    st_mut_row(m, NULL, 0, ST_ROW_STATIC);
    st_mut_row_liveness(m, (st_liveness){ 403, 0, 0 });
    /* Random: 16 partitions x 40 rows, every op kind, timestamps that
     * win and lose. */
    uint64_t s = 11;
#define RND(k) side_rnd(&s, k)
    while (n < max) {
        m = out[n++] = st_mutation_new();
        int parts = 1 + RND(3);
        for (int p = 0; p < parts; p++) {
            st_mut_partition(m, RND(5) ? t : t2, kb(8 + RND(16)), 4);
            if (!RND(20)) st_mut_partition_delete(m, (st_deletion){ RND(1000), 999 });
            int rows = 1 + RND(4);
            for (int r = 0; r < rows; r++) {
                uint8_t ck[2] = { 'r', (uint8_t)RND(40) };
                bool stat = !RND(10);
                st_mut_row(m, stat ? NULL : ck, stat ? 0 : 2, stat ? ST_ROW_STATIC : 0);
                int ops = RND(5);
                for (int o = 0; o < ops; o++) {
                    int64_t ts = 1 + RND(1000);
                    uint8_t path[1] = { (uint8_t)RND(4) }, val[4] = { 'v', (uint8_t)RND(256), 0, 0 };
                    switch (RND(9)) {
                    case 0: st_mut_row_liveness(m, (st_liveness){ ts, RND(2) ? 0 : 30, RND(2) ? 0 : 1000030 }); break;
                    case 1: st_mut_row_delete(m, (st_deletion){ ts, 999 }); break;
                    case 2: st_mut_complex_delete(m, 5, (st_deletion){ ts, 999 }); break;
                    case 3: st_mut_cell(m, &(st_cell){ .col = 5, .ts_us = ts, .path = path, .path_len = 1, .val = val, .val_len = 4 }); break;
                    case 4: st_mut_cell(m, &(st_cell){ .col = 6, .flags = ST_CELL_COUNTER, .ts_us = ts, .val = v8, .val_len = 8 }); break;
                    case 5: st_mut_cell(m, &(st_cell){ .col = 7, .flags = ST_CELL_TOMBSTONE, .ts_us = ts, .ldt_s = 999 }); break;
                    case 6: st_mut_cell(m, &(st_cell){ .col = 8, .flags = ST_CELL_EXPIRING, .ts_us = ts, .ttl_s = 9, .ldt_s = 1009, .val = val, .val_len = 2 }); break;
                    default: st_mut_cell(m, &(st_cell){ .col = (uint32_t)(1 + RND(4)), .ts_us = ts, .val = val, .val_len = (uint32_t)RND(5) }); break;
                    }
                }
                if (!RND(25)) st_mut_range_delete(m, (st_bound){ ck, 2, true }, (st_bound){ NULL, 0, true }, (st_deletion){ RND(1000), 999 });
            }
        }
    }
#undef RND
    return n;
}

/* Memtable by memtable: the side-info path and the decoding path add the
 * same bytes and build the same memtable (rows, cells, tombstones,
 * counters, min timestamp), mutation after mutation. */
Test(storage_engine, memtable_side_info_same_as_decoding)
{
    st_engine *e = open_engine(ST_SYNC_PERIODIC, 0);
    st_table *t = open_table(e), *t2;
    uint8_t id2[16] = { 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 2 };
    cr_assert_eq(st_table_open(e, id2, "ks", "t2", NULL, &t2), 0);
    enum { N = 300 };
    st_mutation *mus[N];
    int n = side_mutations(t, t2, mus, N);
    mt_memtable *with = mt_new(NULL), *without = mt_new(NULL);
    for (int i = 0; i < n; i++) {
        apply_both(with, without, mus[i]);
        if (i < 8 || i % 50 == 0 || i == n - 1) {
            cs_buf a, b;
            cs_buf_init(&a);
            cs_buf_init(&b);
            mt_dump(with, &a);
            mt_dump(without, &b);
            cr_assert_eq(a.len, b.len, "after mutation %d", i);
            cr_assert_eq(memcmp(a.p, b.p, a.len), 0, "after mutation %d", i);
            cr_assert_eq(atomic_load(&with->mem), atomic_load(&without->mem), "after mutation %d", i);
            cs_buf_destroy(&a);
            cs_buf_destroy(&b);
        }
    }
    cr_assert_gt(atomic_load(&with->n_rows), 300);
    /* a reset mutation starts its side info over */
    st_mutation_reset(mus[0]);
    cr_assert_eq(mus[0]->n_parts + mus[0]->n_rows, 0);
    st_mut_partition(mus[0], t, kb(1), 4);
    st_mut_row(mus[0], (const uint8_t *)"a", 1, 0);
    st_mut_cell(mus[0], &(st_cell){ .col = 1, .ts_us = 7, .val = (const uint8_t *)"q", .val_len = 1 });
    apply_both(with, without, mus[0]);
    for (int i = 0; i < n; i++) st_mutation_free(mus[i]);
    mt_unref(with);
    mt_unref(without);
    st_engine_close(e, false);
    cr_assert_eq(cs_alloc_count(), 0, "leak: %zu allocations", cs_alloc_count());
}

/* Through the engine: the memtables st_write built equal the ones replay
 * builds from the commit log after a restart. */
Test(storage_engine, write_and_replay_build_same_memtable)
{
    st_engine *e = open_engine(ST_SYNC_PERIODIC, 0);
    uint8_t id2[16] = { 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 2 };
    st_table *t = open_table(e), *t2;
    cr_assert_eq(st_table_open(e, id2, "ks", "t2", NULL, &t2), 0);
    enum { N = 200 };
    st_mutation *mus[N];
    int n = side_mutations(t, t2, mus, N);
    for (int i = 0; i < n; i++) cr_assert_eq(st_write(e, mus[i], NULL), 0, "mutation %d", i);
    for (int i = 0; i < n; i++) st_mutation_free(mus[i]);
    cs_buf w[2], r[2];
    for (int i = 0; i < 2; i++) {
        cs_buf_init(&w[i]);
        mt_dump(i ? t2->mem : t->mem, &w[i]);
    }
    cr_assert_gt(atomic_load(&t->mem->n_rows), 100);
    st_engine_close(e, false);
    e = open_engine(ST_SYNC_PERIODIC, 0);
    t = open_table(e);
    cr_assert_eq(st_table_open(e, id2, "ks", "t2", NULL, &t2), 0);
    cr_assert_eq(st_engine_replay(e, NULL, NULL), 0);
    for (int i = 0; i < 2; i++) {
        cs_buf_init(&r[i]);
        mt_dump(i ? t2->mem : t->mem, &r[i]);
        cr_assert_eq(w[i].len, r[i].len, "table %d", i);
        cr_assert_eq(memcmp(w[i].p, r[i].p, w[i].len), 0, "table %d", i);
        cs_buf_destroy(&w[i]);
        cs_buf_destroy(&r[i]);
    }
    cr_assert_eq(st_engine_replay_done(e), 0);
    st_engine_close(e, false);
    cr_assert_eq(cs_alloc_count(), 0, "leak: %zu allocations", cs_alloc_count());
}

/* TRUNCATE (a request) and a compaction thread can save the table's replay
 * floor at the same moment.  Each save must succeed and the TRUNCATED file
 * must end at the highest position saved: a lower one left by the slower
 * writer would replay truncated records into the table at the next start.
 * Two threads save interleaved positions (even and odd offsets). */
typedef struct { st_table *t; uint64_t first; int rc; } floor_arg;

static void *save_floors(void *p)
{
    floor_arg *a = p;
    for (uint64_t i = 0; i < 150 && !a->rc; i++)
        a->rc = st__save_replay_floor(a->t, (st_clog_pos){ 7, a->first + 2 * i });
    return NULL;
}

Test(storage_engine, replay_floor_saves_race_to_the_highest)
{
    st_engine *e = open_engine(ST_SYNC_PERIODIC, 0);
    st_table *t = open_table(e);
    floor_arg a[2] = { { t, 100, 0 }, { t, 101, 0 } };
    pthread_t th[2];
    for (int i = 0; i < 2; i++) cr_assert_eq(pthread_create(&th[i], NULL, save_floors, &a[i]), 0);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    cr_assert_eq(a[0].rc, 0, "save: %s", cs_strerror(a[0].rc));
    cr_assert_eq(a[1].rc, 0, "save: %s", cs_strerror(a[1].rc));
    char p[4200];
    snprintf(p, sizeof p, "%s/TRUNCATED", t->dir);
    uint8_t *b; size_t n;
    cr_assert_eq(vfs_read_all(p, &b, &n), 0);
    cr_assert_eq(n, 20);
    cr_assert_eq(cs_be64(b), 7);
    cr_assert_eq(cs_be64(b + 8), 101 + 2 * 149, "TRUNCATED holds offset %llu", (unsigned long long)cs_be64(b + 8));
    cs_free(b);
    snprintf(p, sizeof p, "%s/TRUNCATED.tmp", t->dir);
    cr_assert_neq(access(p, F_OK), 0, "TRUNCATED.tmp left behind");
    st_engine_close(e, false);
    cr_assert_eq(cs_alloc_count(), 0, "leak: %zu allocations", cs_alloc_count());
}

/* Cassandra 4.1's Cells.reconcile on a timestamp tie: a tombstone or an
 * expiring cell beats a plain one (CASSANDRA-14592: an expiring cell too,
 * whatever its value, so the winner does not change when it expires), a
 * tombstone beats an expiring cell, then the later local deletion time, and
 * only then the greater value. */
Test(storage_engine, reconcile_ties_as_cassandra_4_1)
{
    uint8_t lo[1] = { 'a' }, hi[1] = { 'z' };
    st_cell plain = { .col = 1, .ts_us = 5, .val = hi, .val_len = 1 };
    st_cell plain_lo = { .col = 1, .ts_us = 5, .val = lo, .val_len = 1 };
    st_cell exp = { .col = 1, .ts_us = 5, .flags = ST_CELL_EXPIRING, .ttl_s = 60, .ldt_s = 1000, .val = lo, .val_len = 1 };
    st_cell exp_later = { .col = 1, .ts_us = 5, .flags = ST_CELL_EXPIRING, .ttl_s = 60, .ldt_s = 2000, .val = lo, .val_len = 1 };
    st_cell exp_hi = { .col = 1, .ts_us = 5, .flags = ST_CELL_EXPIRING, .ttl_s = 60, .ldt_s = 1000, .val = hi, .val_len = 1 };
    st_cell tomb = { .col = 1, .ts_us = 5, .flags = ST_CELL_TOMBSTONE, .ldt_s = 500 };
    st_cell newer = { .col = 1, .ts_us = 6, .val = lo, .val_len = 1 };
    const st_cell *pairs[][3] = {
        { &plain, &exp, &exp },          /* expiring beats plain even with the smaller value */
        { &exp, &plain, &exp },
        { &exp, &tomb, &tomb },          /* tombstone beats expiring, whatever the ldts */
        { &tomb, &exp_later, &tomb },
        { &exp, &exp_later, &exp_later },/* both expiring: the later expiry */
        { &exp_later, &exp, &exp_later },
        { &exp, &exp_hi, &exp_hi },      /* same expiry: the greater value */
        { &plain_lo, &plain, &plain },   /* both plain: the greater value */
        { &tomb, &newer, &newer },       /* the higher timestamp first of all */
        { &plain, &tomb, &tomb },
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        cr_assert_eq(st_cell_reconcile(pairs[i][0], pairs[i][1]), pairs[i][2], "pair %zu", i);
}
