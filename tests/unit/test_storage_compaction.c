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
    o.twcs_expired_check_s = 0;   /* look for expired sstables at every check (600 s by default) */
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
    cr_assert_gt(vfs_file_size(paths[1]), 8192);   /* several blocks */
    flip_middle_byte(paths[1]);
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

/* ---------------------------------------------------------------- options, tombstone compactions, purge */

static void key_of(int i, uint8_t pk[4])
{
    pk[0] = (uint8_t)(i >> 24); pk[1] = (uint8_t)(i >> 16); pk[2] = (uint8_t)(i >> 8); pk[3] = (uint8_t)i;
}

/* The keys i in [from, to) whose token has sign `sign` (-1, +1; 0: any),
 * at most max, into out; how many. */
static int keys_by_token(int from, int to, int sign, int *out, int max)
{
    int n = 0;
    for (int i = from; i < to && n < max; i++) {
        uint8_t pk[4];
        key_of(i, pk);
        int64_t tok = cs_murmur3_token(pk, 4);
        if (sign == 0 || (sign < 0) == (tok < 0)) out[n++] = i;
    }
    return n;
}

/* One live cell at ts for each key, flushed. */
static void write_keys(st_table *t, const int *keys, int n, int64_t ts, bool flush)
{
    st_mutation *m = st_mutation_new();
    for (int i = 0; i < n; i++) {
        uint8_t pk[4];
        key_of(keys[i], pk);
        st_mut_partition(m, t, pk, 4);
        st_mut_row(m, (const uint8_t *)"c", 1, 0);
        st_cell c = { .col = 1, .ts_us = ts, .val = (const uint8_t *)"v", .val_len = 1 };
        st_mut_cell(m, &c);
    }
    cr_assert_eq(st_write(E, m, NULL), 0);
    st_mutation_free(m);
    if (flush) cr_assert_eq(st_table_flush(t), 0);
}

/* A partition deletion at ts for each key, deleted 5 minutes ago (past a
 * gc_grace_seconds of 0, and in the drop-time histogram already), flushed. */
static void delete_keys(st_table *t, const int *keys, int n, int64_t ts)
{
    st_mutation *m = st_mutation_new();
    for (int i = 0; i < n; i++) {
        uint8_t pk[4];
        key_of(keys[i], pk);
        st_mut_partition(m, t, pk, 4);
        st_mut_partition_delete(m, (st_deletion){ ts, cs_now_s() - 300 });
    }
    cr_assert_eq(st_write(E, m, NULL), 0);
    st_mutation_free(m);
    cr_assert_eq(st_table_flush(t), 0);
}

/* Tombstones in t's sstables, and how many sstables. */
static uint64_t sst_tombstones(st_table *t, int *n_ssts)
{
    uint64_t n = 0;
    pthread_mutex_lock(&t->mu);
    for (int i = 0; i < t->n_ssts; i++) n += t->ssts[i]->st.tombstones;
    if (n_ssts) *n_ssts = t->n_ssts;
    pthread_mutex_unlock(&t->mu);
    return n;
}

static uint64_t compactions(st_table *t)
{
    st_table_stats s;
    st_table_stats_get(t, &s);
    return s.compactions_done;
}

/* Wait (bounded, ms) until t has done at least n compactions; how many. */
static uint64_t wait_compactions(st_table *t, uint64_t n, int ms)
{
    for (int i = 0; i < ms / 10 && compactions(t) < n; i++) usleep(10000);
    usleep(50000);   /* the swap is counted before the compacting flag drops */
    return compactions(t);
}

/* Options for single-sstable tombstone compactions: an interval of 1 s
 * (0 would compact an sstable whose tombstones cannot go again and again),
 * any droppable tombstone (threshold 0.1), gc_grace 0. */
static st_table_opts tomb_opts(int strategy)
{
    st_table_opts o;
    st_table_opts_defaults(&o);
    o.compaction = strategy;
    o.gc_grace_s = 0;
    o.tombstone_interval_s = 1;
    o.tombstone_threshold = 0.1;
    o.tombstone_compactions = true;
    o.compaction_enabled = false;   /* set up first; st_table_set_opts turns it on */
    return o;
}

/* t's sstables made ms earlier (their Data.db's time, as read at open). */
static void age_ssts(st_table *t, int64_t ms)
{
    pthread_mutex_lock(&t->mu);
    for (int i = 0; i < t->n_ssts; i++) t->ssts[i]->created_ms -= ms;
    pthread_mutex_unlock(&t->mu);
}

/* Compaction on, for sstables past the interval. */
static void enable(st_table *t, st_table_opts *o)
{
    age_ssts(t, 2000);
    o->compaction_enabled = true;
    cr_assert_eq(st_table_set_opts(t, o), 0);
}

/* bucket_low / bucket_high / min_sstable_size group sstables as
 * Cassandra's getBuckets: sizes 1, 1, 2 and 4 are one bucket of two and
 * two of one within 0.5-1.5 (nothing to do at min_threshold 4), one
 * bucket of four within 0.5-5; under min_sstable_size all are one. */
Test(storage_compaction, bucket_options)
{
    for (int round = 0; round < 3; round++) {
        st_table_opts o;
        st_table_opts_defaults(&o);
        o.compaction_enabled = false;
        o.min_sstable_bytes = round == 2 ? 50ll << 20 : 0;
        o.bucket_high = round == 1 ? 5.0 : 1.5;
        uint8_t id[16];
        memcpy(id, TID, 16);
        id[0] = (uint8_t)(70 + round);
        char name[16];
        snprintf(name, sizeof name, "bk%d", round);
        st_table *t;
        cr_assert_eq(st_table_open(E, id, "ks", name, &o, &t), 0);
        fill_random(t, 0, 100, 500);
        fill_random(t, 100, 100, 500);
        fill_random(t, 200, 200, 500);
        fill_random(t, 400, 400, 500);
        enable(t, &o);
        uint64_t want = round == 0 ? 4 : 1;
        cr_assert_eq(settle(t, want), want, "round %d", round);
        cr_assert_eq(compactions(t), round == 0 ? 0 : 1, "round %d", round);
    }
}

/* LCS level L holds fanout_size^L sstables' worth: ~4.8 MB in 1 MB
 * sstables stays in L1 at fanout 10, spills into L2 at fanout 2. */
Test(storage_compaction, lcs_fanout, .timeout = 60)
{
    for (int fan = 0; fan < 2; fan++) {
        st_table_opts o;
        st_table_opts_defaults(&o);
        o.compaction = ST_COMPACT_LCS;
        o.lcs_sstable_size_mb = 1;
        o.lcs_fanout = fan ? 2 : 10;
        uint8_t id[16];
        memcpy(id, TID, 16);
        id[0] = (uint8_t)(80 + fan);
        st_table *t;
        cr_assert_eq(st_table_open(E, id, "ks", fan ? "fan2" : "fan10", &o, &t), 0);
        for (int k = 0; k < 4; k++) fill_random(t, k * 400, 400, 3000);
        st_table_stats s;
        for (int i = 0; i < 1000; i++) {
            st_table_stats_get(t, &s);
            if (s.sstables_per_level[0] == 0 && s.pending_compactions == 0 && (!fan || s.sstables_per_level[2] > 0)) break;
            usleep(10000);
        }
        usleep(100000);
        st_table_stats_get(t, &s);
        cr_assert_eq(s.sstables_per_level[0], 0);
        if (fan) {
            cr_assert_gt(s.sstables_per_level[2], 0, "fanout 2: L1's 2 MB overflow into L2");
            cr_assert_leq(s.sstables_bytes_per_level[1], 3u << 20);
        } else {
            cr_assert_eq(s.sstables_per_level[2], 0, "fanout 10: L1 holds 10 MB");
        }
        cr_assert_eq(count_live(t), 1600);
    }
}

/* STCS: an sstable of tombstones past gc_grace is compacted alone once
 * it is tombstone_compaction_interval old (its Data.db's time: moved back
 * here), its droppable ratio above tombstone_threshold (1.0 there: never),
 * and nothing overlaps it; nothing but the periodic check triggers it. */
Test(storage_compaction, tombstone_compaction_stcs, .timeout = 60)
{
    st_table_opts o = tomb_opts(ST_COMPACT_STCS);
    o.tombstone_interval_s = 3600;
    st_table *t;
    cr_assert_eq(st_table_open(E, TID, "ks", "tsc", &o, &t), 0);
    int keys[200];
    for (int i = 0; i < 200; i++) keys[i] = 1000 + i;
    delete_keys(t, keys, 200, 20);
    st_table_stats s;
    st_table_stats_get(t, &s);
    cr_assert_float_eq((double)s.droppable_estimate / (double)s.cells_estimate, 1.0, 1e-9);
    enable(t, &o);
    cr_assert_eq(wait_compactions(t, 1, 2500), 0, "the interval has not passed");
    o.tombstone_interval_s = 1;
    o.tombstone_threshold = 1.0;
    cr_assert_eq(st_table_set_opts(t, &o), 0);
    cr_assert_eq(wait_compactions(t, 1, 2500), 0, "a ratio of 1.0 is not above 1.0");
    o.tombstone_threshold = 0.5;
    cr_assert_eq(st_table_set_opts(t, &o), 0);
    /* no flush, no kick: st_table_set_opts looked already (the sstable was
     * made just now); the second look is the periodic one */
    cr_assert_eq(wait_compactions(t, 1, 5000), 1);
    int n;
    cr_assert_eq(sst_tombstones(t, &n), 0);
    cr_assert_eq(n, 0, "every tombstone purged: nothing left");
}

/* The overlap check: tombstones of keys another sstable's token range
 * covers (holding other keys, with older data) are not worth a
 * compaction (their share outside the overlap is nil), unless
 * unchecked_tombstone_compaction; then they go, that sstable holding none
 * of their keys (bloom filter). */
Test(storage_compaction, tombstone_compaction_overlap_check, .timeout = 60)
{
    st_table_opts o = tomb_opts(ST_COMPACT_STCS);
    o.bloom_fp_chance = 0.0001;
    st_table *t;
    cr_assert_eq(st_table_open(E, TID, "ks", "tso", &o, &t), 0);
    int live[300], dead[300];
    for (int i = 0; i < 300; i++) { live[i] = i; dead[i] = 5000 + i; }
    write_keys(t, live, 300, 10, true);
    delete_keys(t, dead, 300, 20);
    enable(t, &o);
    cr_assert_eq(wait_compactions(t, 1, 2500), 0, "overlapped: not worth it");
    o.unchecked_tombstone = true;
    cr_assert_eq(st_table_set_opts(t, &o), 0);
    cr_assert_eq(wait_compactions(t, 1, 5000), 1);
    /* what the live sstable's bloom filter may hold stays */
    sst_reader *a = NULL;
    pthread_mutex_lock(&t->mu);
    for (int i = 0; i < t->n_ssts; i++) if (t->ssts[i]->st.tombstones == 0) a = t->ssts[i];
    pthread_mutex_unlock(&t->mu);
    cr_assert_not_null(a);
    uint64_t fp = 0;
    for (int i = 0; i < 300; i++) {
        uint8_t pk[4];
        key_of(dead[i], pk);
        fp += sst__bloom_test(a->bloom, a->bloom_bits, a->bloom_k, sst__bloom_hash(pk, 4));
    }
    int n;
    cr_assert_eq(sst_tombstones(t, &n), fp, "%lu false positives", (unsigned long)fp);
    cr_assert_eq(n, fp ? 2 : 1);
    cr_assert_eq(count_live(t), 300);
}

/* A fully expired sstable passes the overlap check: tombstones older than
 * everything overlapping them shadow nothing. */
Test(storage_compaction, tombstone_compaction_fully_expired, .timeout = 60)
{
    st_table_opts o = tomb_opts(ST_COMPACT_STCS);
    st_table *t;
    cr_assert_eq(st_table_open(E, TID, "ks", "tsx", &o, &t), 0);
    int live[300], dead[300];
    for (int i = 0; i < 300; i++) { live[i] = i; dead[i] = 5000 + i; }
    write_keys(t, live, 300, 100, true);
    delete_keys(t, dead, 300, 20);            /* older than the live data */
    enable(t, &o);
    cr_assert_eq(wait_compactions(t, 1, 5000), 1);
    cr_assert_eq(sst_tombstones(t, NULL), 0);
    cr_assert_eq(count_live(t), 300);
}

/* Purge per partition: a tombstone is dropped when the only sstables
 * older than it cannot hold its partition (token range, bloom filter) nor
 * a memtable holds it; kept when one holds it. */
Test(storage_compaction, purge_per_partition, .timeout = 60)
{
    int neg[200], pos[200];
    int nn = keys_by_token(0, 100000, -1, neg, 200), np = keys_by_token(0, 100000, +1, pos, 200);
    cr_assert(nn == 200 && np == 200);
    for (int c = 0; c < 4; c++) {
        st_table_opts o = tomb_opts(ST_COMPACT_STCS);
        o.unchecked_tombstone = c >= 2;
        uint8_t id[16];
        memcpy(id, TID, 16);
        id[0] = (uint8_t)(90 + c);
        char name[16];
        snprintf(name, sizeof name, "pp%d", c);
        st_table *t;
        cr_assert_eq(st_table_open(E, id, "ks", name, &o, &t), 0);
        switch (c) {
        case 0:   /* older data in another token range: purged (the old rule kept it) */
            write_keys(t, neg, 200, 10, true);
            delete_keys(t, pos, 200, 20);
            break;
        case 1:   /* older data in a memtable, other keys: purged */
            delete_keys(t, pos, 200, 20);
            write_keys(t, neg, 200, 10, false);
            break;
        case 2:   /* older data for the same keys in a memtable: kept */
            delete_keys(t, pos, 200, 20);
            write_keys(t, pos, 200, 10, false);
            break;
        case 3:   /* older data for the same keys in another sstable: kept */
            write_keys(t, pos, 200, 10, true);
            delete_keys(t, pos, 200, 20);
            break;
        }
        enable(t, &o);
        cr_assert_eq(wait_compactions(t, 1, 5000), 1, "case %d", c);   /* the next an interval later */
        cr_assert_eq(sst_tombstones(t, NULL), c < 2 ? 0u : 200u, "case %d", c);
        cr_assert_eq(count_live(t), c == 1 ? 200 : c == 0 ? 200 : 0, "case %d", c);
    }
}

/* A tombstone compaction that could drop nothing (the deleted data is in
 * an older sstable) leaves a new sstable with the same ratio; its
 * Data.db is new, so it waits tombstone_compaction_interval again: one
 * compaction per interval, not a loop. */
Test(storage_compaction, tombstone_compaction_no_loop, .timeout = 60)
{
    st_table_opts o = tomb_opts(ST_COMPACT_STCS);
    o.unchecked_tombstone = true;
    o.tombstone_interval_s = 1;
    st_table *t;
    cr_assert_eq(st_table_open(E, TID, "ks", "tsl", &o, &t), 0);
    int keys[100];
    for (int i = 0; i < 100; i++) keys[i] = i;
    write_keys(t, keys, 100, 10, true);
    delete_keys(t, keys, 100, 20);
    uint64_t t0 = cs_mono_ns();
    enable(t, &o);
    usleep(3500000);
    double el = (double)(cs_mono_ns() - t0) / 1e9;
    uint64_t n = compactions(t);
    cr_assert_geq(n, 1, "compacted once the interval passed");
    cr_assert_leq(n, (uint64_t)el + 1, "%lu compactions in %.1f s", (unsigned long)n, el);
    cr_assert_eq(sst_tombstones(t, NULL), 100, "the tombstones stay: they shadow data");
    cr_assert_eq(count_live(t), 0);
}

/* Two flushed sstables of live cells and tombstones, of different sizes
 * (the deletions newer than the data they shadow elsewhere: nothing
 * expires whole); their generations, smaller and bigger Data.db. */
static void two_tombstone_ssts(st_table *t, uint64_t *g_small, uint64_t *g_big)
{
    int a[50], b[150];
    for (int i = 0; i < 50; i++) a[i] = 20000 + i;
    for (int i = 0; i < 150; i++) b[i] = 30000 + i;
    write_keys(t, a, 50, 10, false);
    delete_keys(t, b, 150, 20);
    write_keys(t, b, 50, 5, false);
    delete_keys(t, a, 50, 30);
    pthread_mutex_lock(&t->mu);
    cr_assert_eq(t->n_ssts, 2);
    bool first_small = t->ssts[0]->chunks[t->ssts[0]->n_chunks] < t->ssts[1]->chunks[t->ssts[1]->n_chunks];
    *g_small = t->ssts[first_small ? 0 : 1]->gen;
    *g_big = t->ssts[first_small ? 1 : 0]->gen;
    pthread_mutex_unlock(&t->mu);
}

/* The one ancestor of the lowest-generation sstable made from one input:
 * the input of the first single-sstable compaction. */
static uint64_t first_output_ancestor(st_table *t)
{
    uint64_t first_anc = 0, lo = UINT64_MAX;
    pthread_mutex_lock(&t->mu);
    for (int i = 0; i < t->n_ssts; i++)
        if (t->ssts[i]->gen < lo && t->ssts[i]->st.n_ancestors == 1) { lo = t->ssts[i]->gen; first_anc = t->ssts[i]->st.ancestors[0]; }
    pthread_mutex_unlock(&t->mu);
    return first_anc;
}

/* TWCS: tombstone compactions only with one of the options set
 * (tombstone_compactions); the smallest sstable worth it goes first. */
Test(storage_compaction, tombstone_compaction_twcs, .timeout = 60)
{
    st_table_opts o = tomb_opts(ST_COMPACT_TWCS);
    o.unchecked_tombstone = true;
    o.tombstone_compactions = false;
    o.twcs_window_s = 86400 * 365;
    st_table *t;
    cr_assert_eq(st_table_open(E, TID, "ks", "tst", &o, &t), 0);
    uint64_t g_small, g_big;
    two_tombstone_ssts(t, &g_small, &g_big);
    enable(t, &o);
    cr_assert_eq(wait_compactions(t, 1, 2500), 0, "TWCS without a tombstone option: none");
    o.tombstone_compactions = true;
    age_ssts(t, 2000);
    cr_assert_eq(st_table_set_opts(t, &o), 0);
    cr_assert_eq(wait_compactions(t, 2, 5000), 2);
    /* the output made first (lower generation) is the smallest's */
    uint64_t first_anc = first_output_ancestor(t);
    cr_assert_eq(first_anc, g_small, "smallest first (%lu, then %lu)", (unsigned long)g_small, (unsigned long)g_big);
}

/* STCS: the largest sstable worth it goes first. */
Test(storage_compaction, tombstone_compaction_stcs_largest_first, .timeout = 60)
{
    st_table_opts o = tomb_opts(ST_COMPACT_STCS);
    o.unchecked_tombstone = true;
    st_table *t;
    cr_assert_eq(st_table_open(E, TID, "ks", "tsb", &o, &t), 0);
    uint64_t g_small, g_big;
    two_tombstone_ssts(t, &g_small, &g_big);
    enable(t, &o);
    cr_assert_eq(wait_compactions(t, 2, 5000), 2);
    cr_assert_eq(first_output_ancestor(t), g_big);
}

/* LCS: an L1 sstable whose tombstones became droppable (gc_grace_seconds
 * lowered) is compacted alone and stays in L1. */
Test(storage_compaction, tombstone_compaction_lcs_keeps_level, .timeout = 60)
{
    st_table_opts o = tomb_opts(ST_COMPACT_LCS);
    o.gc_grace_s = 864000;
    o.compaction_enabled = true;
    st_table *t;
    cr_assert_eq(st_table_open(E, TID, "ks", "tsv", &o, &t), 0);
    for (int k = 0; k < 4; k++) {
        int keys[50];
        for (int i = 0; i < 50; i++) keys[i] = k * 50 + i;
        write_keys(t, keys, 25, 10, false);
        delete_keys(t, keys + 25, 25, 20);
    }
    st_table_stats s;
    for (int i = 0; i < 500; i++) {
        st_table_stats_get(t, &s);
        if (s.sstables_per_level[0] == 0 && s.sstables_per_level[1] > 0) break;
        usleep(10000);
    }
    uint64_t before = wait_compactions(t, 1, 1000);
    cr_assert_eq(s.sstables_per_level[0], 0);
    cr_assert_eq(sst_tombstones(t, NULL), 100, "within gc_grace: kept");
    o.gc_grace_s = 0;
    age_ssts(t, 2000);
    cr_assert_eq(st_table_set_opts(t, &o), 0);
    cr_assert_eq(wait_compactions(t, before + 1, 5000), before + 1);
    st_table_stats_get(t, &s);
    cr_assert_eq(sst_tombstones(t, NULL), 0);
    cr_assert_eq(s.sstables_per_level[0], 0);
    cr_assert_eq(s.sstables_per_level[1], (int32_t)s.sstable_count, "kept its level");
    cr_assert_eq(count_live(t), 100);
}

/* memtable_flush_period_in_ms: a memtable holding data is flushed once
 * it is a period old, without a flush asked for; a clean one is not (it
 * is looked at again a period later); a period set by ALTER applies. */
Test(storage_compaction, flush_period, .timeout = 60)
{
    st_table_opts o;
    st_table_opts_defaults(&o);
    o.compaction_enabled = false;
    o.flush_period_ms = 300;
    st_table *t;
    cr_assert_eq(st_table_open(E, TID, "ks", "fp", &o, &t), 0);
    int keys[10];
    for (int i = 0; i < 10; i++) keys[i] = i;
    write_keys(t, keys, 10, 10, false);
    st_table_stats s;
    for (int i = 0; i < 300; i++) {
        st_table_stats_get(t, &s);
        if (s.sstable_count == 1) break;
        usleep(10000);
    }
    cr_assert_eq(s.sstable_count, 1, "flushed by its period");
    cr_assert_eq(s.memtable_switches, 1);
    usleep(1000000);
    st_table_stats_get(t, &s);
    cr_assert_eq(s.memtable_switches, 1, "a clean memtable is not flushed");
    write_keys(t, keys, 5, 11, false);
    for (int i = 0; i < 300; i++) {
        st_table_stats_get(t, &s);
        if (s.sstable_count == 2) break;
        usleep(10000);
    }
    cr_assert_eq(s.sstable_count, 2);
    /* off, then on again by ALTER */
    o.flush_period_ms = 0;
    cr_assert_eq(st_table_set_opts(t, &o), 0);
    write_keys(t, keys, 5, 12, false);
    usleep(800000);
    st_table_stats_get(t, &s);
    cr_assert_eq(s.sstable_count, 2, "no period: no flush");
    o.flush_period_ms = 200;
    cr_assert_eq(st_table_set_opts(t, &o), 0);
    for (int i = 0; i < 300; i++) {
        st_table_stats_get(t, &s);
        if (s.sstable_count == 3) break;
        usleep(10000);
    }
    cr_assert_eq(s.sstable_count, 3);
    cr_assert_eq(count_live(t), 10);
}

/* TWCS drops an sstable whole only if it shadows nothing live: another
 * candidate's older live data for its keys keeps it (dropping it
 * resurrected that data), live data newer than all of it does not. */
Test(storage_compaction, twcs_expired_keeps_what_shadows_live_data, .timeout = 60)
{
    for (int newer = 0; newer < 2; newer++) {
        st_table_opts o;
        st_table_opts_defaults(&o);
        o.compaction = ST_COMPACT_TWCS;
        o.gc_grace_s = 0;
        o.twcs_window_s = 86400 * 365;
        o.twcs_expired_check_s = 0;
        o.compaction_enabled = false;
        uint8_t id[16];
        memcpy(id, TID, 16);
        id[0] = (uint8_t)(100 + newer);
        st_table *t;
        cr_assert_eq(st_table_open(E, id, "ks", newer ? "twn" : "two", &o, &t), 0);
        int keys[50];
        for (int i = 0; i < 50; i++) keys[i] = i;
        write_keys(t, keys, 50, 50, true);                 /* live, at 50 */
        delete_keys(t, keys, 50, newer ? 10 : 100);       /* expired whole; newer live data: shadows nothing */
        enable(t, &o);
        usleep(1500000);
        int n;
        sst_tombstones(t, &n);
        cr_assert_eq(n, newer ? 1 : 2, "newer %d", newer);
        cr_assert_eq(count_live(t), newer ? 50 : 0, "newer %d", newer);
    }
}
