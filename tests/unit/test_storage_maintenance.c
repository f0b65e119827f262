/*
 * test_storage_maintenance.c: nodetool's maintenance through storage.h
 * (storage/maintenance.c):
 *  - garbagecollect, ROW: rows under another sstable's range tombstone and
 *    a partition under its partition deletion go; its own data outside
 *    them, and the deletions themselves, stay
 *  - garbagecollect, CELL: cells another sstable overwrote and cells under
 *    its complex deletion go too; ROW keeps them
 *  - garbagecollect's purge limit is the key's: a tombstone whose partition
 *    no other sstable holds is purged past gc_grace
 *  - upgradesstables rewrites nothing current without all
 *  - scrub leaves out the partitions of a corrupt block, or fails with
 *    fail_corrupt and keeps the sstable
 *  - sstables holding a key, compaction thresholds kept across set_opts
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define STORAGE_FIXTURE_TAG "st_mnt"
#define STORAGE_FIXTURE_TID { 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7 }
#define STORAGE_FIXTURE_OPEN_ENGINE
#include "test_storage_fixture.h"
#include "storage/sstable_int.h"   /* the table's sstables and their statistics */

TestSuite(storage_maintenance, .init = setup, .fini = teardown);

static st_table *open_quiet(const char *name, int gc_grace_s)
{
    st_table_opts o;
    st_table_opts_defaults(&o);
    o.compaction_enabled = false;
    o.gc_grace_s = gc_grace_s;
    st_table *t;
    cr_assert_eq(st_table_open(E, TID, "ks", name, &o, &t), 0);
    return t;
}

static void pk_of(int k, uint8_t pk[4])
{
    pk[0] = (uint8_t)(k >> 24); pk[1] = (uint8_t)(k >> 16); pk[2] = (uint8_t)(k >> 8); pk[3] = (uint8_t)k;
}

/* Row (k, c) with a marker and cells 1 and 2 at ts. */
static void put_row(st_mutation *m, st_table *t, int k, uint8_t c, int64_t ts)
{
    uint8_t pk[4];
    pk_of(k, pk);
    st_mut_partition(m, t, pk, 4);
    st_mut_row(m, &c, 1, 0);
    st_mut_row_liveness(m, (st_liveness){ ts, 0, 0 });
    for (uint32_t col = 1; col <= 2; col++) {
        st_cell cell = { .col = col, .ts_us = ts, .val = &c, .val_len = 1 };
        st_mut_cell(m, &cell);
    }
}

static void write_flush(st_mutation *m)
{
    cr_assert_eq(st_write(E, m, NULL), 0);
    st_mutation_free(m);
}

/* The table's sstables by generation, and one's statistics. */
static int ssts(st_table *t, sst_reader **out, int max)
{
    pthread_mutex_lock(&t->mu);
    int n = t->n_ssts < max ? t->n_ssts : max;
    for (int i = 0; i < n; i++) out[i] = t->ssts[i];
    pthread_mutex_unlock(&t->mu);
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && out[j - 1]->gen > out[j]->gen; j--) {
            sst_reader *x = out[j]; out[j] = out[j - 1]; out[j - 1] = x;
        }
    return n;
}

/* Live rows of partition k as "c:cells" text, read through a scan. */
static void rows_of(st_table *t, int k, char *out, size_t n)
{
    uint8_t pk[4];
    pk_of(k, pk);
    st_read_spec rs = { .pk = pk, .pk_len = 4 };
    st_scan *s;
    cr_assert_eq(st_scan_open(t, &rs, &s), 0);
    st_partition_view p;
    size_t len = 0;
    out[0] = 0;
    if (st_scan_next_partition(s, &p) == 1) {
        st_row_view r;
        while (st_scan_next_row(s, &r) == 1 && len < n)
            len += (size_t)snprintf(out + len, n - len, "%s%u:%d", len ? " " : "", r.ck_len ? r.ck[0] : 0, r.n_cells);
    }
    st_scan_close(s);
}

Test(storage_maintenance, gc_row_drops_what_other_deletions_shadow)
{
    st_table *t = open_quiet("row", 864000);
    st_mutation *m = st_mutation_new();
    for (uint8_t c = 1; c <= 3; c++) put_row(m, t, 1, c, 10);
    put_row(m, t, 2, 1, 10);
    put_row(m, t, 3, 1, 10);
    write_flush(m);
    cr_assert_eq(st_table_flush(t), 0);
    int32_t now = cs_now_s();
    m = st_mutation_new();
    uint8_t pk[4], lo = 1, hi = 2;
    pk_of(1, pk);
    st_mut_partition(m, t, pk, 4);   /* rows 1..2 of partition 1 */
    st_mut_range_delete(m, (st_bound){ &lo, 1, true }, (st_bound){ &hi, 1, true }, (st_deletion){ 20, now });
    pk_of(2, pk);
    st_mut_partition(m, t, pk, 4);
    st_mut_partition_delete(m, (st_deletion){ 20, now });
    pk_of(3, pk);                    /* older than partition 3's data: deletes nothing */
    st_mut_partition(m, t, pk, 4);
    st_mut_partition_delete(m, (st_deletion){ 5, now });
    write_flush(m);
    cr_assert_eq(st_table_flush(t), 0);
    st_rewrite_opts o = { .op = ST_OP_GC };
    st_rewrite_result res;
    cr_assert_eq(st_table_rewrite(t, &o, &res), 0);
    cr_assert_eq(res.sstables, 2);
    sst_reader *v[4];
    cr_assert_eq(ssts(t, v, 4), 2);
    const sst_reader *data = v[0]->st.tombstones ? v[1] : v[0], *tomb = v[0]->st.tombstones ? v[0] : v[1];
    cr_assert_eq(data->st.partitions, 2, "partition 2 went");
    cr_assert_eq(data->st.rows, 2, "rows 1.1 and 1.2 went, 1.3 and 3.1 stay");
    cr_assert_eq(data->st.tombstones, 0);
    cr_assert_eq(tomb->st.tombstones, 3, "within gc_grace the deletions stay");
    char buf[128];
    rows_of(t, 1, buf, sizeof buf);
    cr_assert_str_eq(buf, "3:2");
    rows_of(t, 2, buf, sizeof buf);
    cr_assert_str_eq(buf, "");
    rows_of(t, 3, buf, sizeof buf);
    cr_assert_str_eq(buf, "1:2");
}

Test(storage_maintenance, gc_cell_drops_overwritten_cells)
{
    st_table *t = open_quiet("cell", 864000);
    st_mutation *m = st_mutation_new();
    put_row(m, t, 1, 1, 10);
    uint8_t pk[4], c = 1, x = 'x', y = 'y';
    pk_of(1, pk);
    st_cell e1 = { .col = 3, .ts_us = 10, .path = &x, .path_len = 1, .val = &x, .val_len = 1 };
    st_cell e2 = { .col = 3, .ts_us = 10, .path = &y, .path_len = 1, .val = &y, .val_len = 1 };
    st_mut_cell(m, &e1);
    st_mut_cell(m, &e2);
    write_flush(m);
    cr_assert_eq(st_table_flush(t), 0);
    m = st_mutation_new();
    st_mut_partition(m, t, pk, 4);
    st_mut_row(m, &c, 1, 0);
    st_cell newer = { .col = 1, .ts_us = 20, .val = &y, .val_len = 1 };
    st_mut_cell(m, &newer);                                         /* overwrites cell 1 */
    st_mut_complex_delete(m, 3, (st_deletion){ 15, cs_now_s() });  /* the collection's old elements */
    write_flush(m);
    cr_assert_eq(st_table_flush(t), 0);
    sst_reader *v[4];
    cr_assert_eq(ssts(t, v, 4), 2);
    cr_assert_eq(v[0]->st.cells, 4);
    st_rewrite_opts o = { .op = ST_OP_GC };
    cr_assert_eq(st_table_rewrite(t, &o, NULL), 0);
    cr_assert_eq(ssts(t, v, 4), 2);
    cr_assert_eq(v[0]->st.cells, 4, "ROW: no row deletion, nothing goes");
    o.gc_cells = true;
    cr_assert_eq(st_table_rewrite(t, &o, NULL), 0);
    cr_assert_eq(ssts(t, v, 4), 2);
    cr_assert_eq(v[0]->st.cells, 1, "CELL: cell 1 overwritten, the collection's deleted: cell 2 stays");
    cr_assert_eq(v[1]->st.cells, 1, "the newer sstable keeps its own");
    char buf[64];
    rows_of(t, 1, buf, sizeof buf);
    cr_assert_str_eq(buf, "1:2");
}

Test(storage_maintenance, gc_purges_by_the_keys_own_limit)
{
    st_table *t = open_quiet("purge", 0);
    st_mutation *m = st_mutation_new();
    put_row(m, t, 1, 1, 10);
    put_row(m, t, 2, 1, 10);
    write_flush(m);
    cr_assert_eq(st_table_flush(t), 0);
    m = st_mutation_new();
    uint8_t pk[4];
    pk_of(1, pk);
    st_mut_partition(m, t, pk, 4);
    st_mut_partition_delete(m, (st_deletion){ 20, cs_now_s() - 10 });
    write_flush(m);
    cr_assert_eq(st_table_flush(t), 0);
    /* A compaction of the tombstone's sstable alone could not purge it:
     * the other one's data is older (the table-wide limit); garbage
     * collection first drops partition 1 there, then finds no other
     * sstable holding the key. */
    st_rewrite_opts o = { .op = ST_OP_GC };
    st_rewrite_result res;
    cr_assert_eq(st_table_rewrite(t, &o, &res), 0);
    sst_reader *v[4];
    cr_assert_eq(ssts(t, v, 4), 1, "the tombstone's sstable is gone");
    cr_assert_eq(v[0]->st.partitions, 1);
    cr_assert_eq(v[0]->st.tombstones, 0);
    char buf[64];
    rows_of(t, 2, buf, sizeof buf);
    cr_assert_str_eq(buf, "1:2");
}

Test(storage_maintenance, upgrade_rewrites_only_old_formats_unless_all)
{
    st_table *t = open_quiet("up", 864000);
    for (int f = 0; f < 2; f++) {
        st_mutation *m = st_mutation_new();
        put_row(m, t, f, 1, 10);
        write_flush(m);
        cr_assert_eq(st_table_flush(t), 0);
    }
    sst_reader *v[4];
    cr_assert_eq(ssts(t, v, 4), 2);
    uint64_t g0 = v[0]->gen, g1 = v[1]->gen;
    st_rewrite_opts o = { .op = ST_OP_UPGRADE };
    st_rewrite_result res;
    cr_assert_eq(st_table_rewrite(t, &o, &res), 0);
    cr_assert_eq(res.sstables, 0);
    cr_assert_eq(ssts(t, v, 4), 2);
    cr_assert(v[0]->gen == g0 && v[1]->gen == g1);
    o.all = true;
    cr_assert_eq(st_table_rewrite(t, &o, &res), 0);
    cr_assert_eq(res.sstables, 2);
    cr_assert_eq(ssts(t, v, 4), 2);
    cr_assert(v[0]->gen > g1 && v[1]->gen > g1);
    cr_assert_eq(v[0]->stats_version, SST_STATS_VERSION);
}

/* Flip the byte in the middle of the table's one sstable's Data.db. */
static void corrupt_middle(st_table *t)
{
    char **paths; int n;
    cr_assert_eq(st_table_sstables(t, &paths, &n), 0);
    cr_assert_eq(n, 1);
    flip_middle_byte(paths[0]);
    st_paths_free(paths, n);
}

Test(storage_maintenance, scrub_leaves_out_a_corrupt_block)
{
    st_table *t = open_quiet("scrub", 864000);
    st_mutation *m = st_mutation_new();
    for (int k = 0; k < 2000; k++) put_row(m, t, k, 1, 10);
    write_flush(m);
    cr_assert_eq(st_table_flush(t), 0);
    st_rewrite_opts o = { .op = ST_OP_SCRUB };
    st_rewrite_result res;
    cr_assert_eq(st_table_rewrite(t, &o, &res), 0);
    cr_assert(res.sstables == 1 && res.dropped == 0);
    corrupt_middle(t);
    o.fail_corrupt = true;
    cr_assert_eq(st_table_rewrite(t, &o, &res), CS_ECORRUPT);
    sst_reader *v[2];
    cr_assert_eq(ssts(t, v, 2), 1);
    cr_assert_eq(v[0]->st.partitions, 2000, "kept as it was");
    o.fail_corrupt = false;
    cr_assert_eq(st_table_rewrite(t, &o, &res), 0);
    cr_assert_eq(res.sstables, 1);
    cr_assert_gt(res.dropped, 0);
    cr_assert_eq(ssts(t, v, 2), 1);
    cr_assert_eq(v[0]->st.partitions + res.dropped, 2000);
    char **paths; int n;
    cr_assert_eq(st_table_sstables(t, &paths, &n), 0);
    cr_assert_eq(sst_verify(paths[0], NULL), 0);
    st_paths_free(paths, n);
}

Test(storage_maintenance, keys_and_thresholds)
{
    st_table *t = open_quiet("keys", 864000);
    for (int f = 0; f < 3; f++) {
        st_mutation *m = st_mutation_new();
        put_row(m, t, 1, (uint8_t)f, 10);
        if (f == 1) put_row(m, t, 2, 1, 10);
        write_flush(m);
        cr_assert_eq(st_table_flush(t), 0);
    }
    uint8_t pk[4];
    char **paths; int n;
    pk_of(1, pk);
    cr_assert_eq(st_table_sstables_for_key(t, pk, 4, &paths, &n), 0);
    cr_assert_eq(n, 3);
    for (int i = 0; i < n; i++) cr_assert(strstr(paths[i], "-Data.db"));
    st_paths_free(paths, n);
    pk_of(2, pk);
    cr_assert_eq(st_table_sstables_for_key(t, pk, 4, &paths, &n), 0);
    cr_assert_eq(n, 1);
    st_paths_free(paths, n);
    pk_of(3, pk);
    cr_assert_eq(st_table_sstables_for_key(t, pk, 4, &paths, &n), 0);
    cr_assert_eq(n, 0);
    st_paths_free(paths, n);

    int lo, hi;
    st_table_compaction_thresholds(t, &lo, &hi);
    cr_assert(lo == 4 && hi == 32);
    st_table_set_compaction_thresholds(t, 2, 6);
    st_table_opts o;
    st_table_opts_defaults(&o);
    o.compaction_enabled = false;
    o.gc_grace_s = 100;
    cr_assert_eq(st_table_set_opts(t, &o), 0);   /* ALTER TABLE: the nodetool values stay */
    st_table_compaction_thresholds(t, &lo, &hi);
    cr_assert(lo == 2 && hi == 6);
    cr_assert_eq(st_engine_stop_compactions(E, ST_OP_COMPACTION | ST_OP_GC, NULL), 0, "nothing running");
}
