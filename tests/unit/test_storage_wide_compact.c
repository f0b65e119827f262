/*
 * test_storage_wide_compact.c: compaction streams wide partitions window by
 * window (compaction.c compact_wide); the result must equal what the reads
 * saw before: overwrites, row and range deletions, a static row, and
 * neighbouring partitions.  Owner: sread.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "storage/storage.h"
#include "storage/sstable.h"
#include "storage/sstable_int.h"
#include "common/alloc.h"
#include "common/err.h"
#include "common/hash.h"
#include "common/vfs.h"

#define STORAGE_FIXTURE_TAG "st_widec"
#define STORAGE_FIXTURE_TID { 7, 7, 7, 7, 7, 7, 7, 7, 2, 2, 2, 2, 2, 2, 2, 2 }
#include "test_storage_fixture.h"

static void ck_of(uint32_t i, uint8_t ck[4]) { ck[0] = i >> 24; ck[1] = i >> 16; ck[2] = i >> 8; ck[3] = i; }

#define NROWS 30000u

/* Rows [a, b) of partition pk, value byte pattern from (row, ts). */
static void write_rows(st_engine *e, st_table *t, const char *pk, uint32_t a, uint32_t b, uint32_t step, int64_t ts)
{
    uint8_t v[100];
    for (uint32_t i = a; i < b; i += 500 * step) {
        st_mutation *m = st_mutation_new();
        st_mut_partition(m, t, (const uint8_t *)pk, (uint32_t)strlen(pk));
        for (uint32_t j = i; j < i + 500 * step && j < b; j += step) {
            uint8_t ck[4];
            ck_of(j, ck);
            memset(v, (int)((j + (uint32_t)ts) & 0xff), sizeof v);
            st_mut_row(m, ck, 4, 0);
            st_mut_row_liveness(m, (st_liveness){ ts, 0, 0 });
            st_cell c = { .col = 1, .ts_us = ts, .val = v, .val_len = sizeof v };
            st_mut_cell(m, &c);
        }
        cr_assert_eq(st_write(e, m, NULL), 0);
        st_mutation_free(m);
    }
}

/* CRC of everything a full read of pk returns (rows, cells, static row). */
static uint32_t digest(st_table *t, const char *pk, bool rev, uint32_t *rows)
{
    st_read_spec rs = { .pk = (const uint8_t *)pk, .pk_len = (uint32_t)strlen(pk), .reversed = rev, .include_static = true };
    st_scan *sc;
    cr_assert_eq(st_scan_open(t, &rs, &sc), 0);
    st_partition_view p;
    uint32_t crc = 0;
    *rows = 0;
    if (st_scan_next_partition(sc, &p) == 1) {
        st_row_view r;
        while (st_scan_next_row(sc, &r) == 1) {
            crc = cs_crc32c(crc, r.ck, r.ck_len);
            crc = cs_crc32c(crc, &r.flags, 1);
            for (int i = 0; i < r.n_cells; i++) {
                crc = cs_crc32c(crc, r.cells[i].val, r.cells[i].val_len);
                crc = cs_crc32c(crc, &r.cells[i].ts_us, sizeof r.cells[i].ts_us);
            }
            (*rows)++;
        }
    }
    st_scan_close(sc);
    return crc;
}

/* A fresh engine over the test's directories and table `name` in it. */
static void open_named(const char *name, st_engine **e, st_table **t)
{
    st_config cfg;
    fixture_config(&cfg);
    cr_assert_eq(st_engine_open(&cfg, e), 0);
    cr_assert_eq(st_table_open(*e, TID, "ks", name, NULL, t), 0);
}

TestSuite(storage_wide_compact, .init = setup, .fini = teardown);

Test(storage_wide_compact, streamed_merge_equals_reads, .timeout = 120)
{
    st_engine *e;
    st_table *t;
    open_named("widec", &e, &t);
    /* sstable 1: the wide partition (~3.5 MB) and two small neighbours. */
    write_rows(e, t, "wide", 0, NROWS, 1, 10);
    write_rows(e, t, "a", 0, 50, 1, 10);
    write_rows(e, t, "z", 0, 50, 1, 10);
    cr_assert_eq(st_table_flush(t), 0);
    /* sstable 2: overwrites of every 7th row, row deletions of every 11th,
     * a range deletion, a static row, rows past the end. */
    write_rows(e, t, "wide", 0, NROWS, 7, 20);
    write_rows(e, t, "wide", NROWS, NROWS + 3000, 1, 20);
    st_mutation *m = st_mutation_new();
    st_mut_partition(m, t, (const uint8_t *)"wide", 4);
    for (uint32_t i = 0; i < NROWS; i += 11) {
        uint8_t ck[4];
        ck_of(i, ck);
        st_mut_row(m, ck, 4, 0);
        st_mut_row_delete(m, (st_deletion){ 15, 1000 });
    }
    uint8_t s[4], en[4];
    ck_of(12000, s); ck_of(17999, en);
    st_mut_range_delete(m, (st_bound){ s, 4, true }, (st_bound){ en, 4, false }, (st_deletion){ 30, 1000 });
    st_mut_row(m, NULL, 0, ST_ROW_STATIC);
    st_cell c = { .col = 2, .ts_us = 25, .val = (const uint8_t *)"static", .val_len = 6 };
    st_mut_cell(m, &c);
    cr_assert_eq(st_write(e, m, NULL), 0);
    st_mutation_free(m);
    cr_assert_eq(st_table_flush(t), 0);

    uint32_t n0, n1, n2, na, nz;
    uint32_t d0 = digest(t, "wide", false, &n0), d1 = digest(t, "wide", true, &n1);
    uint32_t da = digest(t, "a", false, &na), dz = digest(t, "z", false, &nz);
    cr_assert_eq(n0, n1);
    cr_assert_gt(n0, 20000u);
    cr_assert_eq(st_table_compact(t), 0);
    pthread_mutex_lock(&t->mu);
    cr_assert_eq(t->n_ssts, 1);
    sst_reader *r = t->ssts[0];
    pthread_mutex_unlock(&t->mu);
    cr_assert_eq(r->n_idx, 3);
    bool wide_has_ri = false;
    for (uint64_t i = 0; i < r->n_idx; i++) if (r->idx[i].n_ri >= 2) wide_has_ri = true;
    cr_assert(wide_has_ri);
    cr_assert_eq(digest(t, "wide", false, &n2), d0);
    cr_assert_eq(n2, n0);
    cr_assert_eq(digest(t, "wide", true, &n2), d1);
    cr_assert_eq(digest(t, "a", false, &n2), da);
    cr_assert_eq(digest(t, "z", false, &n2), dz);
    st_engine_close(e, false);
    cr_assert_eq(cs_alloc_count(), 0);
}

/* The wide partition in one sstable, and in others only small pieces
 * (without a row index): a partition deletion that shadows the older rows,
 * rows scattered across every window, a range deletion straddling window
 * boundaries.  The streamed merge must apply each input's deletions to the
 * rows of every window, and read the small inputs' rows window by window. */
Test(storage_wide_compact, small_inputs_and_partition_deletion, .timeout = 120)
{
    st_engine *e;
    st_table *t;
    open_named("widec2", &e, &t);
    write_rows(e, t, "wide", 0, NROWS, 1, 10);
    write_rows(e, t, "b", 0, 20, 1, 10);
    cr_assert_eq(st_table_flush(t), 0);
    /* sstable 2: every 997th row again (newer), then sstable 3: a partition
     * deletion above sstable 1's rows but below sstable 2's, a range
     * deletion over ~8000 rows, and a few rows newer than everything. */
    write_rows(e, t, "wide", 0, NROWS, 997, 20);
    cr_assert_eq(st_table_flush(t), 0);
    st_mutation *m = st_mutation_new();
    st_mut_partition(m, t, (const uint8_t *)"wide", 4);
    st_mut_partition_delete(m, (st_deletion){ 15, 1000 });
    uint8_t s[4], en[4];
    ck_of(9000, s); ck_of(17000, en);
    st_mut_range_delete(m, (st_bound){ s, 4, true }, (st_bound){ en, 4, true }, (st_deletion){ 25, 1000 });
    cr_assert_eq(st_write(e, m, NULL), 0);
    st_mutation_free(m);
    write_rows(e, t, "wide", 100, NROWS, 1501, 30);
    cr_assert_eq(st_table_flush(t), 0);

    uint32_t n0, n1, n2, nb;
    uint32_t d0 = digest(t, "wide", false, &n0), d1 = digest(t, "wide", true, &n1);
    uint32_t db = digest(t, "b", false, &nb);
    cr_assert_eq(n0, n1);
    cr_assert_gt(n0, 30u);
    cr_assert_lt(n0, 100u);
    cr_assert_eq(st_table_compact(t), 0);
    pthread_mutex_lock(&t->mu);
    cr_assert_eq(t->n_ssts, 1);
    pthread_mutex_unlock(&t->mu);
    cr_assert_eq(digest(t, "wide", false, &n2), d0);
    cr_assert_eq(n2, n0);
    cr_assert_eq(digest(t, "wide", true, &n2), d1);
    cr_assert_eq(digest(t, "b", false, &n2), db);
    cr_assert_eq(n2, nb);
    st_engine_close(e, false);
    cr_assert_eq(cs_alloc_count(), 0);
}
