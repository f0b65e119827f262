/*
 * test_bench_picture.c: the partition picture (bench/picture.h) counts what
 * was acknowledged.  A pending record applied with bench_picture_ack adds
 * its rows and operations; one never applied (the request was refused)
 * adds nothing, whatever partitions it named; a row acknowledged twice
 * counts once; a batch longer than the update queue, keys shared by runs
 * of rows of one partition, tables without clustering columns, reads
 * (operations without rows) and allocation failures.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "bench/picture.h"
#include "common/alloc.h"
#include "common/hash.h"

static size_t allocs_at_start;
static void setup(void) { allocs_at_start = cs_alloc_count(); }
static void teardown(void) { cr_assert_eq(cs_alloc_count(), allocs_at_start, "leak"); }
TestSuite(bench_picture, .init = setup, .fini = teardown);

/* Partition p's key (8 bytes, big-endian) and its hash. */
static uint64_t key_of(int p, uint8_t key[8])
{
    for (int i = 0; i < 8; i++)
        key[i] = (uint8_t)((uint64_t)p >> (56 - 8 * i));
    return cs_xxh64(key, 8, 42);
}

/* Row r of partition p: an operation on it when op, the row's bytes 10 + r. */
static void add_row(bench_pending *pd, int p, int r, bool op)
{
    uint8_t key[8];
    uint64_t h = key_of(p, key);
    bench_pending_add(pd, h, key, 8, (op ? BENCH_PIC_OP : 0) | BENCH_PIC_ROW, h ^ (uint64_t)(r + 1) * 0x9E37,
                      10 + (uint64_t)r);
}

/* Partition p's stat, or NULL if the picture does not hold it (flushed). */
static const part_stat *stat_of(const bench_picture *pic, int p)
{
    uint8_t key[8];
    uint64_t h = key_of(p, key);
    for (size_t i = 0; i < pic->parts_cap; i++)
        if (pic->parts[i].hash == h)
            return &pic->parts[i];
    return NULL;
}

Test(bench_picture, refused_requests_add_nothing)
{
    bench_picture pic;
    bench_picture_init(&pic);
    bench_pending ok, refused;
    bench_pending_init(&ok);
    bench_pending_init(&refused);
    /* a batch of partitions 1 (3 rows) and 2 (2 rows), acknowledged */
    for (int r = 0; r < 3; r++) add_row(&ok, 1, r, r == 0);
    for (int r = 0; r < 2; r++) add_row(&ok, 2, r, r == 0);
    bench_picture_ack(&pic, &ok);
    /* a refused batch: a new partition 3 and new rows of partition 1 */
    for (int r = 0; r < 4; r++) add_row(&refused, 3, r, r == 0);
    for (int r = 3; r < 6; r++) add_row(&refused, 1, r, r == 3);
    bench_part_summary s;
    bench_picture_summary(&pic, 10, &s);
    cr_assert_eq(s.count, 2);
    cr_assert_eq(s.rows_total, 5);
    cr_assert_eq(s.rows_max, 3);
    cr_assert_eq(s.bytes_max, 10 + 11 + 12);
    cr_assert_eq(s.total_ops, 2);
    cr_assert_null(stat_of(&pic, 3));
    cr_assert_eq(stat_of(&pic, 1)->rows, 3);
    cr_assert_eq(s.n_top, 2);
    bench_part_summary_destroy(&s);
    /* the same request built again and acknowledged this time */
    bench_picture_ack(&pic, &refused);
    bench_picture_summary(&pic, 10, &s);
    cr_assert_eq(s.count, 3);
    cr_assert_eq(s.rows_total, 12);
    cr_assert_eq(stat_of(&pic, 1)->rows, 6);
    cr_assert_eq(stat_of(&pic, 1)->ops, 2);
    cr_assert_eq(stat_of(&pic, 3)->rows, 4);
    /* the hottest first (2 ops), then by smaller hash; keys kept */
    cr_assert_eq(s.top[0].ops, 2);
    uint8_t key[8];
    key_of(1, key);
    cr_assert_eq(s.top_key_len[0], 8);
    cr_assert_arr_eq(s.top_key[0], key, 8);
    cr_assert_eq(s.top[0].token, cs_murmur3_token(key, 8));
    bench_part_summary_destroy(&s);
    bench_pending_destroy(&ok);
    bench_pending_destroy(&refused);
    bench_picture_destroy(&pic);
}

Test(bench_picture, rows_acknowledged_twice_count_once)
{
    bench_picture pic;
    bench_picture_init(&pic);
    bench_pending pd;
    bench_pending_init(&pd);
    for (int round = 0; round < 3; round++) {
        bench_pending_reset(&pd);
        cr_assert_eq(pd.n, 0);
        for (int r = 0; r < 4; r++) add_row(&pd, 7, r, r == 0);
        bench_picture_ack(&pic, &pd);
    }
    bench_part_summary s;
    bench_picture_summary(&pic, 10, &s);
    cr_assert_eq(s.count, 1);
    cr_assert_eq(s.rows_total, 4);
    cr_assert_eq(s.bytes_max, 10 + 11 + 12 + 13);
    cr_assert_eq(s.total_ops, 3);
    bench_part_summary_destroy(&s);
    bench_pending_destroy(&pd);
    bench_picture_destroy(&pic);
}

/* A batch of 40 partitions x 25 rows, far longer than the queue: every row
 * lands in its partition, each partition's key stored once in the record
 * and its token that of its own key. */
Test(bench_picture, long_batch_and_shared_keys)
{
    bench_picture pic;
    bench_picture_init(&pic);
    bench_pending pd;
    bench_pending_init(&pd);
    for (int p = 0; p < 40; p++)
        for (int r = 0; r < 25; r++)
            add_row(&pd, 1000 + p, r, r == 0);
    cr_assert_eq(pd.n, 40 * 25);
    cr_assert_eq(pd.keys.len, 40 * 8);
    uint32_t cap = pd.cap;
    bench_picture_ack(&pic, &pd);
    bench_part_summary s;
    bench_picture_summary(&pic, 0, &s);
    cr_assert_eq(s.count, 40);
    cr_assert_eq(s.rows_total, 1000);
    cr_assert_eq(s.rows_p50, 25);
    cr_assert_eq(s.n_top, 0);
    bench_part_summary_destroy(&s);
    for (int p = 0; p < 40; p++) {
        uint8_t key[8];
        key_of(1000 + p, key);
        const part_stat *ps = stat_of(&pic, 1000 + p);
        cr_assert_not_null(ps);
        cr_assert_eq(ps->rows, 25);
        cr_assert_eq(ps->token, cs_murmur3_token(key, 8));
    }
    /* the record's memory is kept for the next op */
    bench_pending_reset(&pd);
    add_row(&pd, 1, 0, true);
    cr_assert_eq(pd.cap, cap);
    bench_pending_destroy(&pd);
    bench_picture_destroy(&pic);
}

/* Reads name a partition without rows: operations, not a partition written. */
Test(bench_picture, reads_and_one_row_partitions)
{
    bench_picture pic;
    bench_picture_init(&pic);
    pic.one_row_per_part = true;
    bench_pending pd;
    bench_pending_init(&pd);
    uint8_t key[8];
    uint64_t h = key_of(5, key);
    bench_pending_add(&pd, h, key, 8, BENCH_PIC_OP, 0, 0);
    bench_picture_ack(&pic, &pd);
    /* without clustering columns any row of the partition is its one row */
    bench_pending_reset(&pd);
    add_row(&pd, 6, 0, true);
    bench_picture_ack(&pic, &pd);
    bench_pending_reset(&pd);
    add_row(&pd, 6, 1, true);
    bench_picture_ack(&pic, &pd);
    bench_part_summary s;
    bench_picture_summary(&pic, 10, &s);
    cr_assert_eq(s.count, 1);
    cr_assert_eq(s.rows_total, 1);
    cr_assert_eq(s.bytes_max, 10);
    cr_assert_eq(s.total_ops, 3);
    cr_assert_eq(s.n_top, 2);
    cr_assert_eq(stat_of(&pic, 5)->rows, 0);
    bench_part_summary_destroy(&s);
    bench_pending_destroy(&pd);
    bench_picture_destroy(&pic);
}

/* Out of memory an update is left out whole (in the record or the
 * picture's queue) and the rest stay usable. */
Test(bench_picture, allocation_failures)
{
    bench_picture pic;
    bench_picture_init(&pic);
    bench_pending pd;
    bench_pending_init(&pd);
    cs_alloc_fail_nth(1);           /* the record's entries */
    add_row(&pd, 1, 0, true);
    cr_assert_eq(pd.n, 0);
    cs_alloc_fail_nth(2);           /* the entries, then the key */
    add_row(&pd, 1, 0, true);
    cr_assert_eq(pd.n, 0);
    cr_assert_eq(pd.keys.err, 0);
    cs_alloc_fail_nth(0);
    add_row(&pd, 1, 0, true);
    add_row(&pd, 2, 0, true);
    cr_assert_eq(pd.n, 2);
    cs_alloc_fail_nth(1);           /* the queue's copy of partition 1's key */
    bench_picture_ack(&pic, &pd);
    cs_alloc_fail_nth(0);
    bench_part_summary s;
    bench_picture_summary(&pic, 10, &s);
    cr_assert_eq(s.count, 1);
    cr_assert_null(stat_of(&pic, 1));
    cr_assert_eq(stat_of(&pic, 2)->rows, 1);
    bench_part_summary_destroy(&s);
    bench_pending_destroy(&pd);
    bench_picture_destroy(&pic);
}
