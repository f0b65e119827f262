/*
 * test_storage_pin.c: st_table_pin / st_table_unpin (storage.h): a pinned
 * table handle outlives st_table_drop (flush/compact on it are no-ops, the
 * last unpin frees it), and flush/compact on another thread race DROP and
 * TRUNCATE safely (the admin endpoint runs them on libuv's thread pool).
 * Run under ASan (make SANITIZE=address,undefined) for the lifetime checks.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "storage/storage.h"
#include "common/vfs.h"

#define STORAGE_FIXTURE_TAG "st_pin"
#define STORAGE_FIXTURE_TID { 9, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 }
#include "test_storage_fixture.h"

static void put(st_engine *e, st_table *t, uint32_t pk, int64_t ts)
{
    uint8_t k[4] = { (uint8_t)(pk >> 24), (uint8_t)(pk >> 16), (uint8_t)(pk >> 8), (uint8_t)pk };
    st_mutation *m = st_mutation_new();
    st_mut_partition(m, t, k, 4);
    st_mut_row(m, k, 4, 0);
    st_mut_row_liveness(m, (st_liveness){ ts, 0, 0 });
    st_cell cell = { .col = 7, .ts_us = ts, .val = k, .val_len = 4 };
    st_mut_cell(m, &cell);
    cr_assert_eq(st_write(e, m, NULL), 0);
    st_mutation_free(m);
}

static int count_rows(st_table *t)
{
    st_read_spec rs = { .start_token = INT64_MIN, .end_token = INT64_MAX };
    st_scan *s;
    cr_assert_eq(st_scan_open(t, &rs, &s), 0);
    st_partition_view p;
    int n = 0;
    while (st_scan_next_partition(s, &p) == 1) {
        st_row_view r;
        while (st_scan_next_row(s, &r) == 1)
            n++;
    }
    st_scan_close(s);
    return n;
}

static uint64_t sstables(st_table *t)
{
    st_table_stats st;
    cr_assert_eq(st_table_stats_get(t, &st), 0);
    return st.sstable_count;
}

TestSuite(storage_pin, .init = setup, .fini = teardown);

Test(storage_pin, pinned_table_outlives_drop)
{
    st_engine *e = open_engine(ST_SYNC_PERIODIC, 0);
    st_table *t = open_table(e);
    for (uint32_t i = 0; i < 50; i++)
        put(e, t, i, 1000 + i);
    cr_assert_eq(st_table_flush(t), 0);
    put(e, t, 99, 5000);
    st_table_pin(t);
    cr_assert_eq(st_table_drop(t), 0);
    cr_assert_null(st_table_find(e, TID), "a dropped table is forgotten even while pinned");
    /* The handle is still valid: flush and compact do nothing, stats are empty. */
    cr_assert_eq(st_table_flush(t), 0);
    cr_assert_eq(st_table_compact(t), 0);
    cr_assert_eq(sstables(t), 0);
    /* A new table of the same id opens while the old handle is pinned. */
    st_table *t2 = open_table(e);
    cr_assert_neq(t2, NULL);
    put(e, t2, 1, 9000);
    cr_assert_eq(count_rows(t2), 1);
    st_table_unpin(t);                  /* frees the dropped handle (ASan: no leak) */
    cr_assert_eq(st_table_flush(t2), 0);
    cr_assert_eq(sstables(t2), 1);
    st_engine_close(e, true);
}

Test(storage_pin, pin_without_drop_changes_nothing)
{
    st_engine *e = open_engine(ST_SYNC_PERIODIC, 0);
    st_table *t = open_table(e);
    st_table_pin(t);
    st_table_pin(t);
    put(e, t, 1, 1000);
    st_table_unpin(t);
    st_table_unpin(t);
    cr_assert_eq(st_table_find(e, TID), t);
    cr_assert_eq(st_table_flush(t), 0);
    cr_assert_eq(count_rows(t), 1);
    cr_assert_eq(sstables(t), 1);
    cr_assert_eq(st_table_drop(t), 0);   /* unpinned: freed at once */
    st_engine_close(e, true);
}

typedef struct worker_arg {
    st_table *t;
    bool compact;
    int rounds;
    atomic_int started;
} worker_arg;

static void *worker(void *p)
{
    worker_arg *w = p;
    atomic_store(&w->started, 1);
    for (int i = 0; i < w->rounds; i++) {
        int rc = w->compact ? st_table_compact(w->t) : st_table_flush(w->t);
        cr_assert_eq(rc, 0, "round %d: %d", i, rc);
    }
    return NULL;
}

/* DROP on this thread while another flushes/compacts the pinned table. */
static void drop_during(bool compact)
{
    st_engine *e = open_engine(ST_SYNC_PERIODIC, 0);
    for (int round = 0; round < 20; round++) {
        st_table *t = open_table(e);
        for (uint32_t s = 0; s < 4; s++) {
            for (uint32_t i = 0; i < 30; i++)
                put(e, t, s * 100 + i, 1000 + i);
            cr_assert_eq(st_table_flush(t), 0);
        }
        put(e, t, 7, 3000);
        worker_arg w = { t, compact, 5, 0 };
        st_table_pin(t);
        pthread_t th;
        cr_assert_eq(pthread_create(&th, NULL, worker, &w), 0);
        while (!atomic_load(&w.started))
            sched_yield();
        if (round % 2)
            usleep(200);
        cr_assert_eq(st_table_drop(t), 0);
        pthread_join(th, NULL);
        st_table_unpin(t);
        cr_assert_null(st_table_find(e, TID));
    }
    st_engine_close(e, true);
}

Test(storage_pin, drop_during_flush) { drop_during(false); }
Test(storage_pin, drop_during_compact) { drop_during(true); }

/* TRUNCATE while another thread runs a major compaction: nothing the
 * truncate removed comes back (the compaction waits for or abandons it). */
Test(storage_pin, truncate_during_compact)
{
    st_engine *e = open_engine(ST_SYNC_PERIODIC, 0);
    st_table *t = open_table(e);
    for (int round = 0; round < 30; round++) {
        for (uint32_t s = 0; s < 3; s++) {
            for (uint32_t i = 0; i < 40; i++)
                put(e, t, s * 1000 + i, 1000 + round);
            cr_assert_eq(st_table_flush(t), 0);
        }
        worker_arg w = { t, true, 1, 0 };
        st_table_pin(t);
        pthread_t th;
        cr_assert_eq(pthread_create(&th, NULL, worker, &w), 0);
        while (!atomic_load(&w.started))
            sched_yield();
        if (round % 3 == 1)
            usleep(100);
        cr_assert_eq(st_table_truncate(t), 0);
        pthread_join(th, NULL);
        st_table_unpin(t);
        cr_assert_eq(count_rows(t), 0, "round %d: truncated rows came back", round);
    }
    st_engine_close(e, true);
}
