/*
 * test_storage_compaction.c: strategy behaviour through storage.h.
 *  - STCS: min_threshold similar-sized flushes become one sstable
 *  - compaction disabled: nothing happens
 *  - LCS: L0 flushes move to L1 in files of sstable_size_in_mb
 *  - TWCS: fully expired sstables are dropped whole; old windows merged
 *  - gc_grace: tombstones kept before it, purged after
 *  - a corrupt input fails the compaction cleanly
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define STORAGE_FIXTURE_TAG "st_cmp"
#define STORAGE_FIXTURE_TID { 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6 }
#define STORAGE_FIXTURE_OPEN_ENGINE
#include "test_storage_fixture.h"
#include "storage/sstable_int.h"   /* sst_writer, the table's sstables */

TestSuite(storage_compaction, .init = setup, .fini = teardown);

/* n partitions starting at base, value vsz, timestamp ts, optional TTL expiry. */
static void fill(st_table *t, int base, int n, uint32_t vsz, int64_t ts, int32_t expiry)
{
    static uint8_t v[4096];
    for (int i = base; i < base + n; i++) {
        uint8_t pk[4] = { (uint8_t)(i >> 24), (uint8_t)(i >> 16), (uint8_t)(i >> 8), (uint8_t)i };
        memset(v, i, vsz);
        st_mutation *m = st_mutation_new();
        st_mut_partition(m, t, pk, 4);
        st_mut_row(m, (const uint8_t *)"c", 1, 0);
        st_cell c = { .col = 1, .ts_us = ts, .val = v, .val_len = vsz };
        if (expiry) { c.flags = ST_CELL_EXPIRING; c.ttl_s = 1; c.ldt_s = expiry; }
        st_mut_cell(m, &c);
        cr_assert_eq(st_write(E, m, NULL), 0);
        st_mutation_free(m);
    }
    cr_assert_eq(st_table_flush(t), 0);
}

/* Wait (bounded) until the background compactor settles on `want` sstables. */
static uint64_t settle(st_table *t, uint64_t want)
{
    st_table_stats s;
    for (int i = 0; i < 400; i++) {
        st_table_stats_get(t, &s);
        if (s.sstable_count == want && s.pending_compactions == 0) break;
        usleep(10000);
    }
    usleep(20000);
    st_table_stats_get(t, &s);
    return s.sstable_count;
}

static int count_live(st_table *t)
{
    st_read_spec rs = { .start_token = INT64_MIN, .end_token = INT64_MAX };
    st_scan *s;
    cr_assert_eq(st_scan_open(t, &rs, &s), 0);
    st_partition_view p;
    int n = 0;
    while (st_scan_next_partition(s, &p) == 1) n++;
    st_scan_close(s);
    return n;
}

Test(storage_compaction, stcs_merges_similar)
{
    st_table_opts o;
    st_table_opts_defaults(&o);
    st_table *t;
    cr_assert_eq(st_table_open(E, TID, "ks", "stcs", &o, &t), 0);
    for (int k = 0; k < 4; k++) fill(t, k * 100, 100, 100, 10, 0);
    cr_assert_eq(settle(t, 1), 1);
    cr_assert_eq(count_live(t), 400);
    st_table_stats s;
    st_table_stats_get(t, &s);
    cr_assert_geq(s.compactions_done, 1);
}

Test(storage_compaction, disabled)
{
    st_table_opts o;
    st_table_opts_defaults(&o);
    o.compaction_enabled = false;
    st_table *t;
    cr_assert_eq(st_table_open(E, TID, "ks", "off", &o, &t), 0);
    for (int k = 0; k < 5; k++) fill(t, k * 10, 10, 10, 10, 0);
    usleep(100000);
    st_table_stats s;
    st_table_stats_get(t, &s);
    cr_assert_eq(s.sstable_count, 5);
    cr_assert_eq(s.pending_compactions, 0, "disabled: nothing pending");
    /* Major compaction still works on demand. */
    cr_assert_eq(st_table_compact(t), 0);
    st_table_stats_get(t, &s);
    cr_assert_eq(s.sstable_count, 1);
    cr_assert_eq(count_live(t), 50);
}

Test(storage_compaction, lcs_levels)
{
    st_table_opts o;
    st_table_opts_defaults(&o);
    o.compaction = ST_COMPACT_LCS;
    o.lcs_sstable_size_mb = 1;
    st_table *t;
    cr_assert_eq(st_table_open(E, TID, "ks", "lcs", &o, &t), 0);
    /* 4 flushes of ~1.2 MiB of incompressible-ish data each. */
    for (int k = 0; k < 4; k++) {
        static uint8_t v[3000];
        for (int i = 0; i < 400; i++) {
            int key = k * 400 + i;
            uint8_t pk[4] = { (uint8_t)(key >> 24), (uint8_t)(key >> 16), (uint8_t)(key >> 8), (uint8_t)key };
            for (unsigned j = 0; j < sizeof v; j++) v[j] = (uint8_t)(j * 31 + key * 17 + (j >> 3) * key);
            st_mutation *m = st_mutation_new();
            st_mut_partition(m, t, pk, 4);
            st_mut_row(m, (const uint8_t *)"c", 1, 0);
            st_cell c = { .col = 1, .ts_us = 10, .val = v, .val_len = sizeof v };
            st_mut_cell(m, &c);
            cr_assert_eq(st_write(E, m, NULL), 0);
            st_mutation_free(m);
        }
        cr_assert_eq(st_table_flush(t), 0);
    }
    st_table_stats s;
    for (int i = 0; i < 400; i++) {
        st_table_stats_get(t, &s);
        if (s.sstables_per_level[0] == 0 && s.sstables_per_level[1] > 1) break;
        usleep(10000);
    }
    cr_assert_eq(s.sstables_per_level[0], 0, "L0 not compacted");
    cr_assert_gt(s.sstables_per_level[1], 1, "L1 should be split by size");
    cr_assert_eq(count_live(t), 1600);
}

Test(storage_compaction, twcs_drops_expired)
{
    st_table_opts o;
    st_table_opts_defaults(&o);
    o.compaction = ST_COMPACT_TWCS;
    o.gc_grace_s = 0;
    o.twcs_window_s = 3600;
    st_table *t;
    cr_assert_eq(st_table_open(E, TID, "ks", "twcs", &o, &t), 0);
    int32_t now = cs_now_s();
    int64_t ts = cs_now_us();
    fill(t, 0, 50, 10, ts - 10, now - 100);   /* already expired */
    fill(t, 50, 50, 10, ts - 5, now - 50);    /* already expired */
    fill(t, 100, 50, 10, ts, 0);              /* live */
    cr_assert_eq(count_live(t), 50);
    cr_assert_eq(settle(t, 1), 1, "expired sstables dropped whole");
    cr_assert_eq(count_live(t), 50);
}

Test(storage_compaction, gc_grace_purge)
{
    for (int grace = 0; grace < 2; grace++) {
        st_table_opts o;
        st_table_opts_defaults(&o);
        o.gc_grace_s = grace ? 864000 : 0;
        uint8_t id[16];
        memcpy(id, TID, 16);
        id[0] = (uint8_t)(50 + grace);
        st_table *t;
        cr_assert_eq(st_table_open(E, id, "ks", grace ? "keep" : "purge", &o, &t), 0);
        fill(t, 0, 10, 10, 10, 0);
        st_mutation *m = st_mutation_new();
        for (int i = 0; i < 10; i++) {
            uint8_t pk[4] = { 0, 0, 0, (uint8_t)i };
            st_mut_partition(m, t, pk, 4);
            st_mut_partition_delete(m, (st_deletion){ 20, cs_now_s() - 10 });
        }
        cr_assert_eq(st_write(E, m, NULL), 0);
        st_mutation_free(m);
        cr_assert_eq(st_table_flush(t), 0);
        cr_assert_eq(st_table_compact(t), 0);
        st_table_stats s;
        st_table_stats_get(t, &s);
        if (grace) {
            cr_assert_eq(s.sstable_count, 1);
            cr_assert_eq(s.partitions_estimate, 10, "tombstones kept within gc_grace");
        } else {
            cr_assert_eq(s.sstable_count, 0, "everything purged");
        }
        cr_assert_eq(count_live(t), 0);
    }
}

Test(storage_compaction, droppable_tombstone_estimate)
{
    st_table_opts o;
    st_table_opts_defaults(&o);
    o.gc_grace_s = 86400;
    o.compaction_enabled = false;
    st_table *t;
    cr_assert_eq(st_table_open(E, TID, "ks", "drop", &o, &t), 0);
    st_mutation *m = st_mutation_new();
    for (int i = 0; i < 20; i++) {
        uint8_t pk[4] = { 0, 0, 1, (uint8_t)i };
        st_mut_partition(m, t, pk, 4);
        /* 10 old deletions (10 days ago), 10 recent ones. */
        st_mut_partition_delete(m, (st_deletion){ 5, cs_now_s() - (i < 10 ? 10 * 86400 : 60) });
    }
    cr_assert_eq(st_write(E, m, NULL), 0);
    st_mutation_free(m);
    cr_assert_eq(st_table_flush(t), 0);
    st_table_stats s;
    cr_assert_eq(st_table_stats_get(t, &s), 0);
    /* Two histogram points, 10 each, ten days and a minute back; gc_before
     * (a day back) lies 9/10 of the way between them: TombstoneHistogram
     * .sum counts the first and the trapezoid up to gc_before, half the
     * first point's count and (10 + 10) * 0.9 / 2. */
    cr_assert_float_eq(s.droppable_estimate, 14.0, 0.01, "%f", s.droppable_estimate);
    cr_assert_eq(s.droppable_tombstones, 14);
    o.gc_grace_s = 864000 * 2;
    cr_assert_eq(st_table_set_opts(t, &o), 0);
    cr_assert_eq(st_table_stats_get(t, &s), 0);
    cr_assert_eq(s.droppable_tombstones, 0);
}

/* A damaged block in an input (compaction streams its inputs, checking each
 * block's CRC): the compaction fails with a corruption error, keeps its
 * inputs and leaves no output behind; the undamaged data still reads. */
Test(storage_compaction, corrupt_input_fails_cleanly)
{
    st_table_opts o;
    st_table_opts_defaults(&o);
    o.compaction_enabled = false;
    st_table *t;
    cr_assert_eq(st_table_open(E, TID, "ks", "corrupt", &o, &t), 0);
    fill(t, 0, 3000, 200, 10, 0);
    fill(t, 3000, 3000, 200, 10, 0);
    char **paths; int n;
    cr_assert_eq(st_table_sstables(t, &paths, &n), 0);
    cr_assert_eq(n, 2);
    int64_t sz = vfs_file_size(paths[1]);
    cr_assert_gt(sz, 8192);   /* several blocks */
    int fd = vfs_open(paths[1], O_RDWR, 0);
    cr_assert_geq(fd, 0);
    uint8_t b;
    cr_assert_eq(vfs_pread(fd, &b, 1, (uint64_t)sz / 2), 1);
    b ^= 0x5a;
    cr_assert_eq(vfs_pwrite(fd, &b, 1, (uint64_t)sz / 2), 1);
    vfs_close(fd);
    st_paths_free(paths, n);
    cr_assert_eq(st_table_compact(t), CS_ECORRUPT);
    st_table_stats s;
    st_table_stats_get(t, &s);
    cr_assert_eq(s.sstable_count, 2);
    char **names; int nn;
    cr_assert_eq(vfs_list(st_table_dir(t), &names, &nn), 0);
    int data = 0;
    for (int i = 0; i < nn; i++) {
        cr_assert(strncmp(names[i], "tmp-", 4) != 0, "leftover %s", names[i]);
        if (strstr(names[i], "-Data.db")) data++;
    }
    vfs_list_free(names, nn);
    cr_assert_eq(data, 2);
}

/* n partitions of vsz random (incompressible) bytes, flushed. */
static void fill_random(st_table *t, int base, int n, uint32_t vsz)
{
    static uint8_t v[4096];
    uint64_t x = 0x9E3779B97F4A7C15ull ^ (uint64_t)base;
    for (int i = base; i < base + n; i++) {
        for (uint32_t k = 0; k < vsz; k++) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; v[k] = (uint8_t)x; }
        uint8_t pk[4] = { (uint8_t)(i >> 24), (uint8_t)(i >> 16), (uint8_t)(i >> 8), (uint8_t)i };
        st_mutation *m = st_mutation_new();
        st_mut_partition(m, t, pk, 4);
        st_mut_row(m, (const uint8_t *)"c", 1, 0);
        st_cell c = { .col = 1, .ts_us = 10, .val = v, .val_len = vsz };
        st_mut_cell(m, &c);
        cr_assert_eq(st_write(E, m, NULL), 0);
        st_mutation_free(m);
    }
    cr_assert_eq(st_table_flush(t), 0);
}

/* compaction_throughput: a major compaction reading ~3 MiB at 1 MiB/s
 * takes at least the 2 s past its one second of saved-up rate (a lower
 * bound: the throttle sleeps; nothing here bounds how fast it may go);
 * unthrottled again, the next one is not held. */
Test(storage_compaction, throughput_cap, .timeout = 60)
{
    st_table_opts o;
    st_table_opts_defaults(&o);
    o.compaction_enabled = false;
    st_table *t;
    cr_assert_eq(st_table_open(E, TID, "ks", "rate", &o, &t), 0);
    cr_assert_eq(st_engine_compaction_throughput(E), 0, "unthrottled by default in the engine");
    for (int k = 0; k < 3; k++) fill_random(t, k * 1000, 1000, 1000);
    st_engine_set_compaction_throughput(E, 1u << 20);
    cr_assert_eq(st_engine_compaction_throughput(E), 1u << 20);
    uint64_t t0 = cs_mono_ns();
    cr_assert_eq(st_table_compact(t), 0);
    double s = (double)(cs_mono_ns() - t0) / 1e9;
    cr_assert_geq(s, 1.5, "3 MiB at 1 MiB/s took %.2f s", s);
    cr_assert_eq(count_live(t), 3000);
    st_engine_set_compaction_throughput(E, 0);
    for (int k = 3; k < 5; k++) fill_random(t, k * 1000, 1000, 1000);
    cr_assert_eq(st_table_compact(t), 0);
    cr_assert_eq(count_live(t), 5000);
}

/* At open, the inputs of a compaction whose output exists are removed (a
 * crash between publishing the output and deleting its inputs).  An
 * output's inputs always have lower generations, so a Statistics.db naming
 * its own generation (or a later one) as an ancestor is corrupt: acting on
 * it deleted the sstable itself, with its data.  Written here: gen 3
 * naming itself and gen 4 naming gen 9, beside gen 5 naming gen 1 (a
 * true leftover, still removed). */
static void write_sst_with_ancestors(const char *dir, uint64_t gen, const uint64_t *anc, int n_anc)
{
    sst_writer *w;
    cr_assert_eq(sst_writer_open(dir, gen, 0.01, 1, &w), 0);
    char k[8];
    snprintf(k, sizeof k, "g%llu", (unsigned long long)gen);
    st__part p = { .pk = (const uint8_t *)k, .pk_len = (uint32_t)strlen(k),
                   .token = cs_murmur3_token(k, strlen(k)), .pdel = { 1000, 1 } };
    cr_assert_eq(sst_writer_add(w, &p), 0);
    sst_writer_set_ancestors(w, anc, n_anc);
    sst_reader *r;
    cr_assert_eq(sst_writer_finish(w, (st_clog_pos){ 0, 0 }, 0, &r), 0);
    sst_reader_unref(r);
}

static bool toc_exists(const char *dir, uint64_t gen)
{
    char p[700];
    snprintf(p, sizeof p, "%s/cs-%llu-TOC.txt", dir, (unsigned long long)gen);
    return access(p, F_OK) == 0;
}

static st_table *open_off(void)
{
    st_table_opts o;
    st_table_opts_defaults(&o);
    o.compaction_enabled = false;   /* the generations must stay as written */
    st_table *t;
    cr_assert_eq(st_table_open(E, TID, "ks", "anc", &o, &t), 0);
    return t;
}

Test(storage_compaction, ancestors_not_older_are_ignored)
{
    st_table *t = open_off();
    fill(t, 0, 10, 10, 10, 0);                /* gen 1 */
    fill(t, 10, 10, 10, 10, 0);               /* gen 2 */
    char dir[600];
    snprintf(dir, sizeof dir, "%s", t->dir);
    st_engine_close(E, false);
    const uint64_t self[] = { 3 }, later[] = { 9 }, old[] = { 1 };
    write_sst_with_ancestors(dir, 3, self, 1);
    write_sst_with_ancestors(dir, 4, later, 1);
    write_sst_with_ancestors(dir, 5, old, 1);
    E = open_engine(ST_SYNC_PERIODIC, 0);
    t = open_off();
    cr_assert(toc_exists(dir, 3), "an sstable naming itself as an ancestor was deleted");
    cr_assert(toc_exists(dir, 4));
    cr_assert(toc_exists(dir, 2));
    int gens = 0;
    pthread_mutex_lock(&t->mu);
    for (int i = 0; i < t->n_ssts; i++) gens |= 1 << (int)t->ssts[i]->gen;
    pthread_mutex_unlock(&t->mu);
    cr_assert_eq(gens, (1 << 2) | (1 << 3) | (1 << 4) | (1 << 5), "live generations mask %#x", gens);
    cr_assert_eq(count_live(t), 10);          /* gen 2's (gens 3-5 hold deleted partitions; gen 1 went) */
}
