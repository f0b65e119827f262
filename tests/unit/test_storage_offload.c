/*
 * test_storage_offload.c: work kept off the request threads.
 *   - reaper.c: the teardown of an obsolete sstable whose last reference a
 *     foreground thread drops runs on the reaper thread; other threads
 *     tear down inline; TRUNCATE reclaims disk before it returns; engine
 *     close waits for the queue and stops the thread.
 *   - block_cache.c: cache slabs are faulted in by the "cache-slabs"
 *     helper, never more than the capacity allows; blocks asked for before
 *     a slab is ready are still cached; the helper stops with the cache.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "storage/storage.h"
#include "storage/storage_int.h"
#include "storage/sstable_int.h"
#include "common/vfs.h"

#define STORAGE_FIXTURE_TAG "st_offload"
#define STORAGE_FIXTURE_TID { 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 2, 3, 4, 5, 6 }
#include "test_storage_fixture.h"

TestSuite(storage_offload, .init = setup, .fini = teardown);

static void put(st_engine *e, st_table *t, uint32_t pk, int64_t ts)
{
    uint8_t k[4] = { (uint8_t)(pk >> 24), (uint8_t)(pk >> 16), (uint8_t)(pk >> 8), (uint8_t)pk };
    uint8_t v[8] = { 'v', 'a', 'l', 'u', 'e', (uint8_t)pk, (uint8_t)ts, 0 };
    st_mutation *m = st_mutation_new();
    st_mut_partition(m, t, k, 4);
    st_mut_row(m, NULL, 0, 0);
    st_mut_row_liveness(m, (st_liveness){ ts, 0, 0 });
    st_cell c = { .col = 1, .ts_us = ts, .val = v, .val_len = sizeof v };
    st_mut_cell(m, &c);
    cr_assert_eq(st_write(e, m, NULL), 0);
    st_mutation_free(m);
}

/* Data.db files in the table's directory. */
static int data_files(const char *dir)
{
    char **names; int n, k = 0;
    if (vfs_list(dir, &names, &n) != 0) return -1;
    for (int i = 0; i < n; i++) {
        size_t l = strlen(names[i]);
        if (l > 8 && !strcmp(names[i] + l - 8, "-Data.db")) k++;
    }
    vfs_list_free(names, n);
    return k;
}

/* Threads of this process named `name`. */
static int threads_named(const char *name)
{
    DIR *d = opendir("/proc/self/task");
    cr_assert_not_null(d);
    int k = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        char p[300], comm[64] = "";
        snprintf(p, sizeof p, "/proc/self/task/%s/comm", de->d_name);
        FILE *f = fopen(p, "r");
        if (!f) continue;
        if (fgets(comm, sizeof comm, f)) comm[strcspn(comm, "\n")] = 0;
        fclose(f);
        if (!strcmp(comm, name)) k++;
    }
    closedir(d);
    return k;
}

/* Two more sstables, then a scan holding the table's sstables (and its
 * memtable) while a compaction replaces them: the scan holds their last
 * references.  `before`: the sstables the table had. */
static st_scan *two_sstables_held_over_compaction(st_engine *e, st_table *t, int64_t ts, int before)
{
    for (uint32_t i = 0; i < 200; i++) put(e, t, i, ts);
    cr_assert_eq(st_table_flush(t), 0);
    for (uint32_t i = 100; i < 300; i++) put(e, t, i, ts + 1);
    cr_assert_eq(st_table_flush(t), 0);
    st_read_spec rs = { .start_token = INT64_MIN, .end_token = INT64_MAX };
    st_scan *s;
    cr_assert_eq(st_scan_open(t, &rs, &s), 0);
    cr_assert_eq(st_table_compact(t), 0);
    int n = data_files(st_table_dir(t));
    cr_assert_eq(n, before + 3, "the compacted-away sstables stay while referenced (%d Data.db)", n);
    return s;
}

static int scan_partitions(st_scan *s)
{
    st_partition_view p;
    int n = 0;
    while (st_scan_next_partition(s, &p) == 1) n++;
    return n;
}

Test(storage_offload, foreground_thread_hands_teardown_to_the_reaper)
{
    st_engine *e = open_engine(ST_SYNC_PERIODIC, 0);
    st_table *t = open_table(e);
    st_scan *s = two_sstables_held_over_compaction(e, t, 10, 0);
    cr_assert_eq(scan_partitions(s), 300, "the held scan still reads the old sstables");
    uint64_t before = st__reaped();
    st_foreground_thread(true);
    st_scan_close(s);                    /* drops the last references: handed off */
    st_foreground_thread(false);
    st__reap_drain();
    cr_assert_geq(st__reaped() - before, 2, "both old readers torn down by the reaper");
    cr_assert_eq(data_files(st_table_dir(t)), 1);
    cr_assert_eq(threads_named("reaper"), 1);

    /* Any other thread tears down inline, as before. */
    s = two_sstables_held_over_compaction(e, t, 20, 1);
    before = st__reaped();
    st_scan_close(s);
    cr_assert_eq(data_files(st_table_dir(t)), 1, "deleted before st_scan_close returned");
    cr_assert_eq(st__reaped(), before);
    st_engine_close(e, false);
    cr_assert_eq(threads_named("reaper"), 0, "the reaper stops with the last engine");
}

Test(storage_offload, close_waits_for_handed_off_teardown)
{
    st_engine *e = open_engine(ST_SYNC_PERIODIC, 0);
    st_table *t = open_table(e);
    st_scan *s = two_sstables_held_over_compaction(e, t, 10, 0);
    char dir[512];
    snprintf(dir, sizeof dir, "%s", st_table_dir(t));
    st_foreground_thread(true);
    st_scan_close(s);
    st_engine_close(e, false);           /* returns only once the queue is done */
    st_foreground_thread(false);
    cr_assert_eq(data_files(dir), 1);
    cr_assert_eq(threads_named("reaper"), 0);
}

Test(storage_offload, truncate_on_a_foreground_thread_reclaims_at_once)
{
    st_engine *e = open_engine(ST_SYNC_PERIODIC, 0);
    st_table *t = open_table(e);
    for (uint32_t i = 0; i < 100; i++) put(e, t, i, 10);
    cr_assert_eq(st_table_flush(t), 0);
    cr_assert_eq(data_files(st_table_dir(t)), 1);
    st_foreground_thread(true);
    cr_assert_eq(st_table_truncate(t), 0);
    cr_assert_eq(data_files(st_table_dir(t)), 0, "TRUNCATE returned with the sstable still on disk");
    cr_assert(st__foreground(), "truncate restores the caller's flag");
    st_foreground_thread(false);
    st_engine_close(e, false);
}

/* Wait until the helper has a slab ready, or has made `limit` since made0. */
static void wait_spare(uint64_t made0, uint64_t limit)
{
    struct timespec ts = { 0, 1000 * 1000 };
    for (int i = 0; i < 5000; i++) {
        uint64_t made, waited; int spare;
        sst__cache_slab_stats(&made, &waited, &spare);
        if (spare >= 1 || made - made0 >= limit) return;
        nanosleep(&ts, NULL);
    }
    cr_assert_fail("the slab helper made no slab in 5 s");
}

/* 128 MiB: 16 shards of 8 MiB, each taking at most 4 slabs of 2 MiB. */
Test(storage_offload, cache_slabs_come_from_the_helper)
{
    st__cache_retain((size_t)128 << 20);
    uint64_t made0, waited0; int spare;
    sst__cache_slab_stats(&made0, &waited0, &spare);
    cr_assert_eq(threads_named("cache-slabs"), 0, "no helper before the first block");
    uint64_t rid = sst__cache_new_id();
    uint8_t block[4096], got[8];
    /* The first block finds no slab ready: cached all the same (malloc'd),
     * and the helper starts. */
    uint8_t *slot = sst__cache_slot(rid, 0, sizeof block);
    cr_assert_not_null(slot);
    memset(slot, 0xab, sizeof block);
    sst__cache_insert(rid, 0, slot);
    cr_assert(sst__cache_get(rid, 0, sizeof block, 100, got, sizeof got));
    cr_assert_eq(got[0], 0xab);
    uint64_t made, waited;
    sst__cache_slab_stats(&made, &waited, &spare);
    cr_assert_gt(waited, waited0);
    cr_assert_eq(threads_named("cache-slabs"), 1);
    wait_spare(made0, 64);
    /* Fill well past the capacity (pausing for the helper now and then, as
     * a server's reads would not outrun it forever): every block readable
     * right after its insert, and no more slabs made than the shards hold. */
    for (uint64_t b = 1; b < 3 * 32768; b++) {
        if (b % 256 == 0) wait_spare(made0, 64);
        slot = sst__cache_slot(rid, b, sizeof block);
        cr_assert_not_null(slot);
        memset(slot, (int)(b & 0xff), sizeof block);
        sst__cache_insert(rid, b, slot);
        cr_assert(sst__cache_get(rid, b, sizeof block, 4000, got, 1));
        cr_assert_eq(got[0], (uint8_t)(b & 0xff));
    }
    sst__cache_slab_stats(&made, &waited, &spare);
    cr_assert_geq(made - made0, 48, "slabs came from the helper (%llu made)", (unsigned long long)(made - made0));
    cr_assert_leq(made - made0, 64, "more slabs than 16 shards of 4");
    st__cache_release();
    cr_assert_eq(threads_named("cache-slabs"), 0, "the helper stops with the cache");
    sst__cache_slab_stats(&made, &waited, &spare);
    cr_assert_eq(spare, 0, "spare slabs unmapped");
}
