/*
 * test_storage_read.c: read semantics through storage.h: tombstone kinds,
 * TTL, static rows, collections, token-range scans with start keys, tombstone
 * counting, with_tombstones, and that flushing never changes a result.
 */
#define STORAGE_FIXTURE_TAG "st_read"
#define STORAGE_FIXTURE_TID { 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3 }
#define STORAGE_FIXTURE_TABLE "r"
#define STORAGE_FIXTURE_ROWS
#include "test_storage_fixture.h"
#include "storage/sstable_int.h"   /* the block cache's internals */

TestSuite(storage_read, .init = setup, .fini = teardown);

Test(storage_read, row_and_range_deletes)
{
    st_mutation *m = mut();
    const char *cks[] = { "a", "b", "ba", "bz", "c", "d" };
    for (int i = 0; i < 6; i++) {
        st_mut_row(m, (const uint8_t *)cks[i], (uint32_t)strlen(cks[i]), 0);
        st_mut_row_liveness(m, (st_liveness){ 10, 0, 0 });
        cell(m, 1, 10, cks[i]);
    }
    commit(m);
    m = mut();
    /* Delete prefix "b" inclusive (end bound b ++ 0xFF), and row d. */
    const uint8_t bff[] = { 'b', 0xFF };
    st_mut_range_delete(m, (st_bound){ (const uint8_t *)"b", 1, true }, (st_bound){ bff, 2, true }, (st_deletion){ 20, NOW });
    st_mut_row(m, (const uint8_t *)"d", 1, 0);
    st_mut_row_delete(m, (st_deletion){ 20, NOW });
    commit(m);
    /* A later write into the deleted range survives. */
    m = mut();
    st_mut_row(m, (const uint8_t *)"ba", 2, 0);
    cell(m, 2, 30, "new");
    commit(m);
    expect("a:m,1=a,;ba:2=new,;c:m,1=c,;", false, false);
    expect("c:m,1=c,;ba:2=new,;a:m,1=a,;", false, true);
    st_scan_stats st;
    char got[512];
    dump(got, sizeof got, false, false, &st);
    cr_assert_geq(st.tombstones, 2);   /* the range tombstone and the row deletion */
    cr_assert_eq(st.rows, 3);
}

Test(storage_read, partition_delete_static_and_ties)
{
    st_mutation *m = mut();
    st_mut_row(m, NULL, 0, ST_ROW_STATIC);
    cell(m, 9, 10, "s1");
    st_mut_row(m, (const uint8_t *)"x", 1, 0);
    cell(m, 1, 10, "v1");
    commit(m);
    expect("S:9=s1,;x:1=v1,;", true, false);
    expect("x:1=v1,;", false, false);
    /* Same timestamp: greater value wins; tombstone beats both. */
    m = mut();
    st_mut_row(m, (const uint8_t *)"x", 1, 0);
    cell(m, 1, 10, "v2");
    commit(m);
    expect("x:1=v2,;", false, false);
    m = mut();
    st_mut_row(m, (const uint8_t *)"x", 1, 0);
    st_cell tomb = { .col = 1, .flags = ST_CELL_TOMBSTONE, .ts_us = 10, .ldt_s = NOW };
    st_mut_cell(m, &tomb);
    commit(m);
    expect("S:9=s1,;", true, false);
    /* Partition deletion at 15 removes the static row too; later data stays. */
    m = mut();
    st_mut_partition_delete(m, (st_deletion){ 15, NOW });
    st_mut_row(m, (const uint8_t *)"y", 1, 0);
    cell(m, 1, 16, "after");
    commit(m);
    expect("y:1=after,;", true, false);
}

Test(storage_read, ttl_and_collections)
{
    st_mutation *m = mut();
    st_mut_row(m, (const uint8_t *)"r", 1, 0);
    st_mut_row_liveness(m, (st_liveness){ 10, 100, NOW - 1 });   /* expired marker */
    st_cell live = { .col = 1, .flags = ST_CELL_EXPIRING, .ts_us = 10, .ttl_s = 100, .ldt_s = NOW + 50,
                     .val = (const uint8_t *)"L", .val_len = 1 };
    st_cell dead = { .col = 2, .flags = ST_CELL_EXPIRING, .ts_us = 10, .ttl_s = 100, .ldt_s = NOW,
                     .val = (const uint8_t *)"D", .val_len = 1 };
    st_mut_cell(m, &live);
    st_mut_cell(m, &dead);
    /* Map column 3: elements a, b, c. */
    const char *keys[] = { "a", "b", "c" };
    for (int i = 0; i < 3; i++) {
        st_cell e = { .col = 3, .ts_us = 10, .path = (const uint8_t *)keys[i], .path_len = 1,
                      .val = (const uint8_t *)keys[i], .val_len = 1 };
        st_mut_cell(m, &e);
    }
    commit(m);
    expect("r:1=L,3/a=a,3/b=b,3/c=c,;", false, false);
    /* Overwrite the collection: complex deletion at 19, new element at 20. */
    m = mut();
    st_mut_row(m, (const uint8_t *)"r", 1, 0);
    st_mut_complex_delete(m, 3, (st_deletion){ 19, NOW });
    st_cell e = { .col = 3, .ts_us = 20, .path = (const uint8_t *)"z", .path_len = 1, .val = (const uint8_t *)"z", .val_len = 1 };
    st_mut_cell(m, &e);
    commit(m);
    expect("r:1=L,3/z=z,;", false, false);
}

/* Token-range scans: start key inclusive/exclusive, end token. */
Test(storage_read, token_ranges)
{
    int64_t tok[20];
    uint8_t keys[20][2];
    for (int i = 0; i < 20; i++) {
        keys[i][0] = 'p'; keys[i][1] = (uint8_t)i;
        tok[i] = cs_murmur3_token(keys[i], 2);
        st_mutation *m = st_mutation_new();
        st_mut_partition(m, T, keys[i], 2);
        st_mut_row(m, (const uint8_t *)"c", 1, 0);
        st_mut_row_liveness(m, (st_liveness){ 1, 0, 0 });
        commit(m);
        if (i == 10) cr_assert_eq(st_table_flush(T), 0);   /* half in an sstable */
    }
    /* Sort indexes by token. */
    int ord[20];
    for (int i = 0; i < 20; i++) ord[i] = i;
    for (int i = 0; i < 20; i++)
        for (int j = i + 1; j < 20; j++)
            if (tok[ord[j]] < tok[ord[i]]) { int x = ord[i]; ord[i] = ord[j]; ord[j] = x; }
    for (int start = 0; start < 20; start += 3) {
        for (int incl = 0; incl < 2; incl++) {
            int endi = (start + 7) % 20;
            st_read_spec rs = { .start_token = tok[ord[start]], .start_key = keys[ord[start]], .start_key_len = 2,
                                .start_inclusive = incl, .end_token = tok[ord[endi]], .now_s = NOW };
            if (endi < start) rs.end_token = INT64_MAX;
            st_scan *s;
            cr_assert_eq(st_scan_open(T, &rs, &s), 0);
            st_partition_view p;
            int k = incl ? start : start + 1;
            while (st_scan_next_partition(s, &p) == 1) {
                cr_assert_lt(k, 20);
                cr_assert(!memcmp(p.pk, keys[ord[k]], 2), "start %d incl %d: wrong partition at %d", start, incl, k);
                k++;
            }
            int last = endi < start ? 19 : endi;
            cr_assert_eq(k, last + 1, "start %d incl %d: ended at %d, want %d", start, incl, k, last + 1);
            st_scan_close(s);
        }
    }
    /* start_key NULL: from the first key of start_token. */
    st_read_spec rs = { .start_token = tok[ord[5]], .end_token = tok[ord[5]], .now_s = NOW };
    st_scan *s;
    cr_assert_eq(st_scan_open(T, &rs, &s), 0);
    st_partition_view p;
    cr_assert_eq(st_scan_next_partition(s, &p), 1);
    cr_assert(!memcmp(p.pk, keys[ord[5]], 2));
    cr_assert_eq(st_scan_next_partition(s, &p), 0);
    st_scan_close(s);
}

/* Range scans step each source on from its own candidate (next_key's
 * cursors) instead of searching it again per partition.  Keys spread over
 * three sstables and the memtable, some in several of them (the newest
 * value must win, each key come once, in ring order); then partitions
 * written into the memtable while a scan is half way (enough to split the
 * tree's leaves under its cursor): every key written before the scan
 * still comes exactly once, in order, and so do the new keys after the
 * cursor (the memtable cursor searches again when the tree changed). */
static void scan_key(int i, uint8_t k[3]) { k[0] = 's'; k[1] = (uint8_t)(i >> 8); k[2] = (uint8_t)i; }

static void put_key(int i, int64_t ts, const char *v)
{
    uint8_t k[3];
    scan_key(i, k);
    st_mutation *m = st_mutation_new();
    st_mut_partition(m, T, k, 3);
    st_mut_row(m, NULL, 0, 0);
    st_cell c = { .col = 1, .ts_us = ts, .val = (const uint8_t *)v, .val_len = (uint32_t)strlen(v) };
    st_mut_cell(m, &c);
    commit(m);
}

static int key_index(const st_partition_view *p) { return p->pk_len == 3 ? p->pk[1] << 8 | p->pk[2] : -1; }

Test(storage_read, range_scan_cursors_across_sources)
{
    enum { N = 600 };
    /* source s (0-2: sstables, 3: the memtable) holds key i if i % (s + 2) == 0;
     * every key is somewhere (i % 5 == 1 keys only in the memtable) */
    for (int s = 0; s < 4; s++) {
        for (int i = 0; i < N; i++) {
            bool here = i % (s + 2) == 0 || (s == 3 && i % 5 == 1) || (s == 0 && i % 2 && i % 3 && i % 4 && i % 5 != 1);
            if (!here) continue;
            char v[16];
            snprintf(v, sizeof v, "v%d", s);
            put_key(i, 100 + s, v);
        }
        if (s < 3) cr_assert_eq(st_table_flush(T), 0);
    }
    int newest[N];
    for (int i = 0; i < N; i++) {
        newest[i] = -1;
        for (int s = 0; s < 4; s++)
            if (i % (s + 2) == 0 || (s == 3 && i % 5 == 1) || (s == 0 && i % 2 && i % 3 && i % 4 && i % 5 != 1)) newest[i] = s;
        cr_assert_geq(newest[i], 0, "key %d in no source", i);
    }
    st_read_spec rs = { .start_token = INT64_MIN, .end_token = INT64_MAX, .now_s = NOW };
    st_scan *sc;
    cr_assert_eq(st_scan_open(T, &rs, &sc), 0);
    int seen[N] = { 0 }, n = 0;
    int64_t last = INT64_MIN;
    st_partition_view p;
    st_row_view r;
    while (st_scan_next_partition(sc, &p) == 1) {
        int i = key_index(&p);
        cr_assert(i >= 0 && i < N);
        cr_assert(n == 0 || p.token > last, "key %d out of ring order", i);
        last = p.token;
        seen[i]++;
        n++;
        cr_assert_eq(st_scan_next_row(sc, &r), 1);
        cr_assert_eq(r.n_cells, 1);
        char want[16];
        snprintf(want, sizeof want, "v%d", newest[i]);
        cr_assert(r.cells[0].val_len == strlen(want) && !memcmp(r.cells[0].val, want, strlen(want)),
                  "key %d: not the newest value %s", i, want);
    }
    st_scan_close(sc);
    cr_assert_eq(n, N);
    for (int i = 0; i < N; i++) cr_assert_eq(seen[i], 1, "key %d came %d times", i, seen[i]);

    /* Writes into the memtable half way through a scan. */
    enum { M = 1500 };
    cr_assert_eq(st_scan_open(T, &rs, &sc), 0);
    memset(seen, 0, sizeof seen);
    int seen_new[M] = { 0 };
    int64_t cursor_at_write = 0;
    n = 0;
    bool written = false;
    while (st_scan_next_partition(sc, &p) == 1) {
        int i = key_index(&p);
        cr_assert(i >= 0 && i < N + M);
        cr_assert(n == 0 || p.token > last, "key %d out of ring order", i);
        last = p.token;
        if (i < N) seen[i]++; else seen_new[i - N]++;
        n++;
        if (n == N / 2 && !written) {
            for (int j = N; j < N + M; j++) put_key(j, 200, "new");
            cursor_at_write = p.token;
            written = true;
        }
    }
    st_scan_close(sc);
    cr_assert(written);
    for (int i = 0; i < N; i++) cr_assert_eq(seen[i], 1, "key %d came %d times", i, seen[i]);
    int after = 0;
    for (int j = 0; j < M; j++) {
        uint8_t k[3];
        scan_key(N + j, k);
        bool ahead = cs_murmur3_token(k, 3) > cursor_at_write;
        after += ahead;
        cr_assert_eq(seen_new[j], ahead ? 1 : 0, "new key %d (%s the cursor) came %d times", N + j,
                     ahead ? "after" : "before", seen_new[j]);
    }
    cr_assert_gt(after, M / 4);
}

Test(storage_read, with_tombstones_and_truncate)
{
    st_mutation *m = mut();
    st_mut_row(m, (const uint8_t *)"a", 1, 0);
    st_mut_row_delete(m, (st_deletion){ 5, 5 });
    commit(m);
    st_read_spec rs = { .pk = PK, .pk_len = 1, .now_s = NOW };
    st_scan *s;
    st_partition_view p;
    cr_assert_eq(st_scan_open(T, &rs, &s), 0);
    cr_assert_eq(st_scan_next_partition(s, &p), 0);
    st_scan_close(s);
    rs.with_tombstones = true;
    cr_assert_eq(st_scan_open(T, &rs, &s), 0);
    cr_assert_eq(st_scan_next_partition(s, &p), 1);
    st_row_view r;
    cr_assert_eq(st_scan_next_row(s, &r), 1);
    cr_assert_eq(r.ck_len, 1);
    st_scan_close(s);
    /* Truncate drops everything; a reopen does not bring it back. */
    m = mut();
    st_mut_row(m, (const uint8_t *)"b", 1, 0);
    cell(m, 1, 10, "x");
    commit(m);
    cr_assert_eq(st_table_flush(T), 0);
    m = mut();
    st_mut_row(m, (const uint8_t *)"c", 1, 0);
    cell(m, 1, 10, "y");
    commit(m);
    cr_assert_eq(st_table_truncate(T), 0);
    char got[256];
    dump(got, sizeof got, false, false, NULL);
    cr_assert_str_eq(got, "");
    m = mut();
    st_mut_row(m, (const uint8_t *)"d", 1, 0);
    cell(m, 1, 10, "z");
    commit(m);
    st_engine_close(E, false);
    st_config cfg;
    st_config_defaults(&cfg);
    cfg.data_dir = g_d; cfg.commitlog_dir = g_c;
    cr_assert_eq(st_engine_open(&cfg, &E), 0);
    cr_assert_eq(st_table_open(E, TID, "ks", "r", NULL, &T), 0);
    cr_assert_eq(st_engine_replay(E, NULL, NULL), 0);
    cr_assert_eq(st_engine_replay_done(E), 0);
    dump(got, sizeof got, false, false, NULL);
    cr_assert_str_eq(got, "d:1=z,;");
}

Test(storage_read, stats_and_histograms)
{
    for (int i = 0; i < 50; i++) {
        uint8_t k[2] = { 'h', (uint8_t)i };
        st_mutation *m = st_mutation_new();
        st_mut_partition(m, T, k, 2);
        st_mut_row(m, (const uint8_t *)"c", 1, 0);
        cell(m, 1, 10, "value");
        commit(m);
    }
    st_table_stats ts;
    cr_assert_eq(st_table_stats_get(T, &ts), 0);
    cr_assert_eq(ts.memtable_partitions, 50);
    cr_assert_gt(ts.memtable_bytes, 0);
    cr_assert_eq(st_table_flush(T), 0);
    cr_assert_eq(st_table_stats_get(T, &ts), 0);
    cr_assert_eq(ts.sstable_count, 1);
    cr_assert_eq(ts.memtable_partitions, 0);
    cr_assert_geq(ts.partitions_estimate, 50);
    cr_assert_gt(ts.mean_partition_bytes, 0);
    st_histogram hb, hc;
    cr_assert_eq(st_table_partition_histograms(T, &hb, &hc), 0);
    uint64_t total = 0;
    for (int i = 0; i < hb.n; i++) total += hb.counts[i];
    cr_assert_eq(total, 50);
    cr_assert_eq(hb.offsets[0], 1);
    cr_assert_eq(hb.offsets[1], 2);
}

/* Point-read fast path (st_read_point) edge cases; every read is checked
 * against the scan by dump_spec. */
static void put_kv(const uint8_t *k, uint32_t kl, const char *ck, uint32_t col, int64_t ts, const char *v)
{
    st_mutation *m = st_mutation_new();
    st_mut_partition(m, T, k, kl);
    st_mut_row(m, (const uint8_t *)ck, (uint32_t)strlen(ck), 0);
    cell(m, col, ts, v);
    commit(m);
}

Test(storage_read, point_memtable_and_sstables)
{
    /* Same row spread over two sstables and the memtable: merged. */
    put_kv(PK, 1, "r", 1, 10, "old");
    put_kv(PK, 1, "r", 2, 10, "two");
    cr_assert_eq(st_table_flush(T), 0);
    put_kv(PK, 1, "r", 1, 20, "new");
    put_kv(PK, 1, "s", 1, 5, "s-sst");
    cr_assert_eq(st_table_flush(T), 0);
    put_kv(PK, 1, "r", 3, 30, "mem");
    put_kv(PK, 1, "s", 1, 4, "older-in-mem");
    char got[512];
    st_scan_stats st;
    dump(got, sizeof got, false, false, &st);
    cr_assert_str_eq(got, "r:1=new,2=two,3=mem,;s:1=s-sst,;");
    cr_assert_eq(st.sstables_read, 2);
    cr_assert_eq(st.rows, 2);
    dump(got, sizeof got, false, true, NULL);
    cr_assert_str_eq(got, "s:1=s-sst,;r:1=new,2=two,3=mem,;");
    /* A slice through the fast path. */
    st_slice sl = { { (const uint8_t *)"s", 1, true }, { (const uint8_t *)"s", 1, true } };
    st_read_spec rs = { .pk = PK, .pk_len = 1, .slices = &sl, .n_slices = 1, .now_s = NOW };
    dump_spec(&rs, got, sizeof got, NULL);
    cr_assert_str_eq(got, "s:1=s-sst,;");
}

Test(storage_read, point_deleted_partition_and_expired)
{
    put_kv(PK, 1, "a", 1, 10, "x");
    st_mutation *m = mut();
    st_mut_row(m, (const uint8_t *)"b", 1, 0);
    st_cell exp = { .col = 1, .flags = ST_CELL_EXPIRING, .ts_us = 10, .ttl_s = 5, .ldt_s = NOW + 3,
                    .val = (const uint8_t *)"E", .val_len = 1 };
    st_mut_cell(m, &exp);
    commit(m);
    cr_assert_eq(st_table_flush(T), 0);
    char got[512];
    dump(got, sizeof got, false, false, NULL);
    cr_assert_str_eq(got, "a:1=x,;b:1=E,;");
    /* Read "later": the expiring cell is gone, counted as a tombstone. */
    st_scan_stats st;
    st_read_spec rs = { .pk = PK, .pk_len = 1, .now_s = NOW + 3 };
    dump_spec(&rs, got, sizeof got, &st);
    cr_assert_str_eq(got, "a:1=x,;");
    cr_assert_eq(st.tombstones, 1);
    rs.with_tombstones = true;
    dump_spec(&rs, got, sizeof got, NULL);
    cr_assert_str_eq(got, "a:1=x,;b:1=E,;");
    /* Partition deletion in the memtable hides the sstable's rows. */
    m = mut();
    st_mut_partition_delete(m, (st_deletion){ 15, NOW });
    commit(m);
    bool found;
    dump_scan(&(st_read_spec){ .pk = PK, .pk_len = 1, .now_s = NOW }, got, sizeof got, NULL, &found);
    cr_assert(!found);
    expect("", false, false);
    /* with_tombstones: the partition exists (both paths agree on it). */
    rs.now_s = NOW;
    dump_spec(&rs, got, sizeof got, &st);
    cr_assert_geq(st.tombstones, 1);
    /* Newer data after the deletion comes back. */
    put_kv(PK, 1, "c", 1, 16, "y");
    expect("c:1=y,;", false, false);
}

/* A partition deletion read first (the sstables newest first by max
 * timestamp) passes every sstable older than it: their data is all
 * shadowed, and their tombstones are not scanned (Cassandra's
 * SinglePartitionReadCommand stops there).  Both read paths, with and
 * without a slice; with_tombstones still reads them all. */
Test(storage_read, partition_deletion_passes_older_sstables)
{
    put_kv(PK, 1, "a", 1, 10, "old1");
    cr_assert_eq(st_table_flush(T), 0);
    st_mutation *m = mut();
    st_mut_row(m, (const uint8_t *)"b", 1, 0);
    st_mut_row_delete(m, (st_deletion){ 12, NOW });
    commit(m);
    cr_assert_eq(st_table_flush(T), 0);
    m = mut();
    st_mut_partition_delete(m, (st_deletion){ 15, NOW });
    commit(m);
    put_kv(PK, 1, "c", 1, 16, "new");
    cr_assert_eq(st_table_flush(T), 0);
    put_kv(PK, 1, "d", 1, 20, "mem");
    char got[512];
    st_scan_stats st;
    dump(got, sizeof got, false, false, &st);
    cr_assert_str_eq(got, "c:1=new,;d:1=mem,;");
    cr_assert_eq(st.sstables_read, 1);
    cr_assert_eq(st.sstables_skipped, 2);
    cr_assert_eq(st.tombstones, 1, "the partition deletion, not the older row deletion");
    st_slice sl = { { (const uint8_t *)"a", 1, true }, { (const uint8_t *)"c", 1, true } };
    st_read_spec rs = { .pk = PK, .pk_len = 1, .slices = &sl, .n_slices = 1, .now_s = NOW };
    dump_spec(&rs, got, sizeof got, &st);
    cr_assert_str_eq(got, "c:1=new,;");
    cr_assert_eq(st.sstables_read, 1);
    rs.with_tombstones = true;
    bool found;
    dump_scan(&rs, got, sizeof got, &st, &found);
    cr_assert_eq(st.sstables_read, 3, "with_tombstones reads the shadowed sstables");
    /* newer data in an older sstable's time range is not passed */
    put_kv(PK, 1, "e", 1, 14, "before-deletion");
    cr_assert_eq(st_table_flush(T), 0);
    dump(got, sizeof got, false, false, &st);
    cr_assert_str_eq(got, "c:1=new,;d:1=mem,;");
    cr_assert_eq(st.sstables_read, 2, "d's sstable (max ts 20) and the deletion's");
}

/* A wide partition flushed in parts (disjoint clustering ranges and an
 * overlapping rewrite) plus the memtable: the windows take every wide
 * part's start as a boundary, and every read (forward, reversed, sliced,
 * stopped early) returns exactly the merged rows; a read that stops after
 * the first rows in either direction touches only the sstables there. */
static void put_rows(int from, int to, int64_t ts, char tag)
{
    char v[101];
    memset(v, tag, 100);
    v[100] = 0;
    st_mutation *m = mut();
    for (int i = from; i < to; i++) {
        char ck[16];
        snprintf(ck, sizeof ck, "%06d", i);
        st_mut_row(m, (const uint8_t *)ck, 6, 0);
        cell(m, 1, ts, v);
    }
    commit(m);
}

static char want_tag(int i)
{
    return i >= 4000 ? 'm' : i >= 1000 && i < 3000 ? 'b' : 'a';
}

static void check_rows(int from, int to, bool reversed, int stop_after, uint64_t *ssts_read)
{
    char lo[16], hi[16];
    snprintf(lo, sizeof lo, "%06d", from);
    snprintf(hi, sizeof hi, "%06d", to);
    st_slice sl = { { (const uint8_t *)lo, 6, true }, { (const uint8_t *)hi, 6, false } };
    st_read_spec rs = { .pk = PK, .pk_len = 1, .slices = &sl, .n_slices = 1, .reversed = reversed, .now_s = NOW };
    st_scan *sc;
    cr_assert_eq(st_scan_open(T, &rs, &sc), 0);
    st_partition_view pv;
    cr_assert_eq(st_scan_next_partition(sc, &pv), 1);
    st_row_view r;
    int n = 0, rc;
    while ((n < stop_after || stop_after < 0) && (rc = st_scan_next_row(sc, &r)) == 1) {
        int i = reversed ? to - 1 - n : from + n;
        char ck[16];
        snprintf(ck, sizeof ck, "%06d", i);
        cr_assert_eq(r.ck_len, 6);
        cr_assert(memcmp(r.ck, ck, 6) == 0, "row %d: %.6s, want %s (reversed %d)", n, (const char *)r.ck, ck, reversed);
        cr_assert_eq(r.n_cells, 1);
        cr_assert_eq(r.cells[0].val[0], want_tag(i), "row %s", ck);
        n++;
    }
    if (stop_after < 0)
        cr_assert_eq(n, to - from, "rows %d..%d reversed %d: %d", from, to, reversed, n);
    *ssts_read = st_scan_stats_get(sc)->sstables_read;
    st_scan_close(sc);
}

Test(storage_read, wide_partition_in_parts_windows, .timeout = 120)
{
    put_rows(0, 2000, 10, 'a');
    cr_assert_eq(st_table_flush(T), 0);
    put_rows(2000, 4000, 10, 'a');
    cr_assert_eq(st_table_flush(T), 0);
    put_rows(1000, 3000, 20, 'b');
    cr_assert_eq(st_table_flush(T), 0);
    put_rows(4000, 5000, 30, 'm');
    uint64_t ssts;
    check_rows(0, 5000, false, -1, &ssts);
    check_rows(0, 5000, true, -1, &ssts);
    check_rows(1500, 3500, false, -1, &ssts);
    check_rows(1500, 3500, true, -1, &ssts);
    check_rows(999, 1001, true, -1, &ssts);
    /* the first rows only: the sstable of the first part and the rewrite
     * starting at 1000 are not reached forward... */
    check_rows(0, 5000, false, 10, &ssts);
    cr_assert_eq(ssts, 1, "forward, stopped early: %llu sstables", (unsigned long long)ssts);
    /* ...nor, reversed, any sstable: rows 4000.. are in the memtable */
    check_rows(0, 5000, true, 10, &ssts);
    cr_assert_eq(ssts, 0, "reversed, stopped early: %llu sstables", (unsigned long long)ssts);
    check_rows(0, 3900, true, 10, &ssts);
    cr_assert_eq(ssts, 1, "reversed from 3899: %llu sstables", (unsigned long long)ssts);
}

/* Each sstable counted once per read, by the whole read's slices: a slice
 * starting before every wide part's first row first loads a window no
 * sstable holds (before the parts' first keys); the sstables the later
 * windows read are read, not skipped, and the trace says so. */
static void count_slice(const char *lo, const char *hi, int want_rows, uint64_t want_read, uint64_t want_skipped)
{
    st_slice sl = { { (const uint8_t *)lo, 6, true }, { (const uint8_t *)hi, 6, false } };
    st_read_trace tr;
    st_read_spec rs = { .pk = PK, .pk_len = 1, .slices = &sl, .n_slices = 1, .now_s = NOW, .trace = &tr };
    st_scan *sc;
    cr_assert_eq(st_scan_open(T, &rs, &sc), 0);
    st_partition_view pv;
    int pr = st_scan_next_partition(sc, &pv);   /* 0: no live row in the slice */
    cr_assert_eq(pr, want_rows > 0 ? 1 : 0, "[%s, %s): %d", lo, hi, pr);
    st_row_view r;
    int n = 0;
    while (pr == 1 && st_scan_next_row(sc, &r) == 1)
        n++;
    const st_scan_stats *stt = st_scan_stats_get(sc);
    cr_assert_eq(n, want_rows, "[%s, %s): %d rows", lo, hi, n);
    cr_assert_eq(stt->sstables_read, want_read, "[%s, %s): %llu read", lo, hi, (unsigned long long)stt->sstables_read);
    cr_assert_eq(stt->sstables_skipped, want_skipped, "[%s, %s): %llu skipped", lo, hi,
                 (unsigned long long)stt->sstables_skipped);
    cr_assert_eq(tr.n_ssts, 2);
    int found = 0, missed = 0;
    for (int i = 0; i < tr.n; i++) {
        found += tr.probes[i].outcome == ST_PROBE_FOUND && !tr.probes[i].slice_miss;
        missed += tr.probes[i].slice_miss;
    }
    cr_assert_eq((uint64_t)found, want_read, "[%s, %s): %d traced as read", lo, hi, found);
    cr_assert_eq((uint64_t)missed, want_skipped, "[%s, %s): %d traced as skipped", lo, hi, missed);
    st_scan_close(sc);
}

Test(storage_read, sstables_counted_by_the_read_not_its_first_window, .timeout = 60)
{
    put_rows(1000, 2000, 10, 'b');
    cr_assert_eq(st_table_flush(T), 0);
    put_rows(2000, 3000, 10, 'b');
    cr_assert_eq(st_table_flush(T), 0);
    count_slice("000000", "003000", 2000, 2, 0);
    count_slice("000000", "001500", 500, 1, 1);
    count_slice("002500", "009999", 500, 1, 1);
    count_slice("000000", "000999", 0, 0, 2);
}

Test(storage_read, point_absent_keys_and_bloom_false_positive)
{
    for (int i = 0; i < 20; i++) {
        uint8_t k[2] = { 'p', (uint8_t)i };
        put_kv(k, 2, "c", 1, 10, "v");
    }
    cr_assert_eq(st_table_flush(T), 0);
    cs_arena a;
    cs_arena_init(&a);
    st_point pt;
    /* Absent keys: most stop at the bloom filter; find one that passes it
     * (a false positive), then the index lookup must say absent. */
    st_table_stats ts0, ts1;
    cr_assert_eq(st_table_stats_get(T, &ts0), 0);
    bool fp = false;
    for (uint32_t i = 0; i < 100000 && !fp; i++) {
        uint8_t k[5] = { 'q', (uint8_t)i, (uint8_t)(i >> 8), (uint8_t)(i >> 16), 0 };
        st_read_spec rs = { .pk = k, .pk_len = 5, .now_s = NOW };
        cr_assert_eq(st_read_point(T, &rs, &a, &pt), 0);
        cr_assert_eq(pt.n_rows, 0);
        cr_assert_eq(pt.stats.sstables_read + pt.stats.sstables_skipped, 1);
        cr_assert_eq(st_table_stats_get(T, &ts1), 0);
        if (ts1.bloom_false_positives > ts0.bloom_false_positives) {
            fp = true;
            char got[64];
            dump_spec(&rs, got, sizeof got, NULL);
            cr_assert_str_eq(got, "");
        }
    }
    cr_assert(fp, "no bloom false positive in 100000 absent keys");
    /* Present keys still found, also with an empty arena reused. */
    for (int i = 0; i < 20; i++) {
        uint8_t k[2] = { 'p', (uint8_t)i };
        st_read_spec rs = { .pk = k, .pk_len = 2, .now_s = NOW };
        cr_assert_eq(st_read_point(T, &rs, &a, &pt), 1);
        cr_assert_eq(pt.n_rows, 1);
        cr_assert_eq(pt.rows[0].n_cells, 1);
        cr_assert_eq(pt.part.token, cs_murmur3_token(k, 2));
    }
    /* A tombstone budget is the scan's job. */
    st_read_spec rs = { .pk = PK, .pk_len = 1, .max_tombstones = 10 };
    cr_assert_eq(st_read_point(T, &rs, &a, &pt), CS_EINVAL);
    cs_arena_destroy(&a);
}

/* A wide partition (row index, read in windows by a scan) through the fast
 * path: all rows, and slices. */
Test(storage_read, point_wide_partition, .timeout = 60)
{
    char v[200];
    memset(v, 'w', sizeof v - 1);
    v[sizeof v - 1] = 0;
    st_mutation *m = mut();
    for (int i = 0; i < 3000; i++) {
        char ck[16];
        snprintf(ck, sizeof ck, "%06d", i % 1000000);
        st_mut_row(m, (const uint8_t *)ck, 6, 0);
        cell(m, 1, 10, v);
    }
    commit(m);
    cr_assert_eq(st_table_flush(T), 0);
    m = mut();
    st_mut_range_delete(m, (st_bound){ (const uint8_t *)"001000", 6, true }, (st_bound){ (const uint8_t *)"002000", 6, false },
                        (st_deletion){ 20, NOW });
    commit(m);
    static char got[1 << 20];
    st_scan_stats st;
    st_read_spec rs = { .pk = PK, .pk_len = 1, .now_s = NOW };
    dump_spec(&rs, got, sizeof got, &st);
    cr_assert_eq(st.rows, 2000);
    rs.reversed = true;
    dump_spec(&rs, got, sizeof got, &st);
    cr_assert_eq(st.rows, 2000);
    st_slice sl[2] = { { { (const uint8_t *)"000990", 6, true }, { (const uint8_t *)"001010", 6, true } },
                       { { (const uint8_t *)"002500", 6, false }, { (const uint8_t *)"002503", 6, true } } };
    rs = (st_read_spec){ .pk = PK, .pk_len = 1, .slices = sl, .n_slices = 2, .now_s = NOW };
    dump_spec(&rs, got, sizeof got, &st);
    cr_assert_eq(st.rows, 10 + 3);
}

/* E and T again over the same directories, the commit log replayed. */
static void open_replayed(void)
{
    st_config cfg;
    fixture_config(&cfg);
    cr_assert_eq(st_engine_open(&cfg, &E), 0);
    T = open_table(E);
    cr_assert_eq(st_engine_replay(E, NULL, NULL), 0);
    cr_assert_eq(st_engine_replay_done(E), 0);
}

static void reopen(void)
{
    st_engine_close(E, true);
    open_replayed();
}

/* Point reads of many partitions of one sstable in several orders, with a
 * block cache far smaller than the data (CASSETTE_BLOCK_CACHE_MB=1, 16
 * shards of 64 KiB): misses the cache does not admit decode a block
 * prefix into scratch, the others fill and replace cache entries. */
Test(storage_read, point_reads_block_prefixes, .timeout = 60)
{
    enum { N = 12000 };
    setenv("CASSETTE_BLOCK_CACHE_MB", "1", 1);
    reopen();                            /* the cache is sized by the first engine open */
    unsetenv("CASSETTE_BLOCK_CACHE_MB");
    for (int i = 0; i < N; i++) {
        uint8_t k[4] = { 'b', (uint8_t)i, (uint8_t)(i >> 8), 0 };
        char v[160];
        snprintf(v, sizeof v, "value-%d-%d-%0100d", i, i * 7919, i);
        put_kv(k, 4, "c", 1, 10, v);
    }
    cr_assert_eq(st_table_flush(T), 0);
    cs_arena a;
    cs_arena_init(&a);
    uint64_t x = 88172645463325252ull;
    for (int pass = 0; pass < 4; pass++) {
        for (int j = 0; j < N; j++) {
            int i = pass == 0 ? j : pass == 1 ? N - 1 - j : (int)((x ^= x << 13, x ^= x >> 7, x ^= x << 17) % N);
            uint8_t k[4] = { 'b', (uint8_t)i, (uint8_t)(i >> 8), 0 };
            char v[160];
            int vl = snprintf(v, sizeof v, "value-%d-%d-%0100d", i, i * 7919, i);
            st_point pt;
            st_read_spec rs = { .pk = k, .pk_len = 4, .now_s = NOW };
            cr_assert_eq(st_read_point(T, &rs, &a, &pt), 1, "pass %d key %d", pass, i);
            cr_assert_eq(pt.n_rows, 1);
            cr_assert_eq(pt.rows[0].n_cells, 1);
            cr_assert(pt.rows[0].cells[0].val_len == (uint32_t)vl && !memcmp(pt.rows[0].cells[0].val, v, (size_t)vl),
                      "pass %d key %d: wrong value", pass, i);
            cs_arena_destroy(&a);
            cs_arena_init(&a);
        }
        /* The scan path reads the same blocks through the same cache. */
        char got[256];
        bool found;
        uint8_t k[4] = { 'b', (uint8_t)(pass * 7), 0, 0 };
        dump_scan(&(st_read_spec){ .pk = k, .pk_len = 4, .now_s = NOW }, got, sizeof got, NULL, &found);
        cr_assert(found);
    }
    cs_arena_destroy(&a);
    reopen();                            /* default cache again */
}

/* Block cache admission: free room admits; once full, a block gets in on
 * its second recent miss; hits copy bytes; a second insert of the same
 * block keeps one copy. */
Test(storage_read, block_cache_admission)
{
    st_engine_close(E, false);
    st__cache_retain((size_t)1 << 20);
    uint64_t rid = sst__cache_new_id();
    uint8_t blk[4096], got[16];
    int admitted = 0;
    for (uint64_t b = 0; b < 2000; b++) {
        if (!sst__cache_admit(rid, b, sizeof blk)) continue;
        admitted++;
        uint8_t *slot = sst__cache_slot(rid, b, sizeof blk);
        cr_assert_not_null(slot);
        memset(blk, (int)(b & 0xff), sizeof blk);
        memcpy(slot, blk, sizeof blk);
        sst__cache_insert(rid, b, slot);
    }
    /* 1 MiB holds ~250 blocks of 4 KiB: the rest were refused (first miss). */
    cr_assert_gt(admitted, 150);
    cr_assert_lt(admitted, 1000);
    uint64_t first_refused = UINT64_MAX;
    for (uint64_t b = 0; b < 2000 && first_refused == UINT64_MAX; b++)
        if (!sst__cache_get(rid, b, sizeof blk, 0, got, sizeof got)) first_refused = b;
    cr_assert_neq(first_refused, UINT64_MAX);
    /* A new block: refused on its first miss, admitted on the second. */
    cr_assert(!sst__cache_admit(rid, 100000, sizeof blk));
    cr_assert(sst__cache_admit(rid, 100000, sizeof blk));
    uint8_t *slot = sst__cache_slot(rid, 100000, sizeof blk);
    cr_assert_not_null(slot);
    memset(slot, 7, sizeof blk);
    sst__cache_insert(rid, 100000, slot);
    slot = sst__cache_slot(rid, 100000, sizeof blk);   /* a racing reader's copy */
    cr_assert_not_null(slot);
    memset(slot, 8, sizeof blk);
    sst__cache_insert(rid, 100000, slot);
    cr_assert(sst__cache_get(rid, 100000, sizeof blk, 100, got, sizeof got));
    cr_assert_eq(got[0], 7, "the first cached copy stays");
    /* Hits do not move entries: a block hit stays through later inserts. */
    for (uint64_t b = 200000; b < 200400; b++) {
        sst__cache_get(rid, 100000, sizeof blk, 0, got, 1);
        if (!sst__cache_admit(rid, b, sizeof blk) && !sst__cache_admit(rid, b, sizeof blk)) continue;
        slot = sst__cache_slot(rid, b, sizeof blk);
        if (slot) sst__cache_insert(rid, b, slot);
    }
    cr_assert(sst__cache_get(rid, 100000, sizeof blk, 0, got, 1), "a block hit all along was evicted");
    st__cache_release();
    open_replayed();
}

/* Warmed blocks (sst__cache_warm, a flush's or compaction's output) fill
 * only free room, never evicting; while any of them has not been read, a
 * point read's miss is admitted at once (they are room: CLOCK takes them
 * first); once all were read, the full cache is back to second-miss
 * admission.  sst__cache_forget drops a reader id's blocks. */
Test(storage_read, block_cache_warm_blocks)
{
    st_engine_close(E, false);
    st__cache_retain((size_t)1 << 20);
    uint64_t rid = sst__cache_new_id(), other = sst__cache_new_id();
    uint8_t blk[4096], got[16];
    memset(blk, 5, sizeof blk);
    for (uint64_t b = 0; b < 2000; b++) sst__cache_warm(rid, b, blk, sizeof blk);
    st_block_cache_stats cs;
    st_block_cache_stats_get(&cs);
    cr_assert_gt(cs.entries, 150);
    cr_assert_lt(cs.entries, 300, "warming filled past the capacity: %lu", (unsigned long)cs.entries);
    cr_assert_leq(cs.size_bytes, cs.capacity_bytes);
    uint64_t warmed = cs.entries;
    /* full of unread warm blocks: a miss is admitted on its first try */
    cr_assert(sst__cache_admit(other, 7, sizeof blk));
    uint8_t *slot = sst__cache_slot(other, 7, sizeof blk);
    cr_assert_not_null(slot);
    memset(slot, 9, sizeof blk);
    sst__cache_insert(other, 7, slot);
    cr_assert(sst__cache_get(other, 7, sizeof blk, 0, got, sizeof got) && got[0] == 9);
    /* read every warm block still there: none unread, admission by second miss */
    uint64_t hits = 0;
    for (uint64_t b = 0; b < 2000; b++) hits += sst__cache_get(rid, b, sizeof blk, 0, got, 1) && got[0] == 5;
    cr_assert_geq(hits, warmed - 2);
    cr_assert(!sst__cache_admit(other, 8, sizeof blk), "a first miss with no unread warm block left");
    cr_assert(sst__cache_admit(other, 8, sizeof blk));
    /* the cache is full of read blocks: warming adds nothing */
    sst__cache_warm(other, 9, blk, sizeof blk);
    cr_assert(!sst__cache_get(other, 9, sizeof blk, 0, got, 1));
    sst__cache_forget(rid);
    st_block_cache_stats_get(&cs);
    cr_assert_eq(cs.entries, 1, "only the other id's block is left");
    cr_assert(sst__cache_get(other, 7, sizeof blk, 0, got, 1));
    st__cache_release();
    open_replayed();
}

/* A partition key of a multiple of 16 bytes, big enough for an arena chunk
 * of its own: the returned pk has a readable zero byte after it (the CQL
 * layer copies pk_len + 1 bytes), through the scan and the fast path. */
Test(storage_read, point_big_key_has_trailing_byte)
{
    static uint8_t k[10000];
    for (size_t i = 0; i < sizeof k; i++) k[i] = (uint8_t)('a' + i % 26);
    put_kv(k, sizeof k, "c", 1, 10, "v");
    for (int flushed = 0; flushed < 2; flushed++) {
        st_read_spec rs = { .pk = k, .pk_len = sizeof k, .now_s = NOW };
        cs_arena a;
        cs_arena_init(&a);
        st_point pt;
        cr_assert_eq(st_read_point(T, &rs, &a, &pt), 1);
        cr_assert_eq(pt.part.pk_len, sizeof k);
        cr_assert_eq(pt.part.pk[sizeof k], 0);
        cr_assert(!memcmp(pt.part.pk, k, sizeof k));
        cs_arena_destroy(&a);
        st_scan *s;
        cr_assert_eq(st_scan_open(T, &rs, &s), 0);
        st_partition_view p;
        cr_assert_eq(st_scan_next_partition(s, &p), 1);
        cr_assert_eq(p.pk[sizeof k], 0);
        st_scan_close(s);
        cr_assert_eq(st_table_flush(T), 0);
    }
}

/* Block cache against a model: random inserts (several lengths, so slot
 * tables grow and blocks of different sizes evict each other), lookups
 * and re-inserts; a hit always returns the bytes last inserted for its
 * (reader, block, length), and the memory counters return to zero. */
Test(storage_read, block_cache_model)
{
    st_engine_close(E, false);
    size_t before = cs_alloc_count();
    st__cache_retain((size_t)64 << 20);
    uint64_t rids[3] = { sst__cache_new_id(), sst__cache_new_id(), sst__cache_new_id() };
    static const uint32_t lens[4] = { 48, 48, 1000, 4096 };
    uint8_t buf[4096], got[4096];
    uint64_t x = 88172645463325252ull;
    int hits = 0;
    for (int it = 0; it < 400000; it++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        uint64_t rid = rids[x % 3], blk = (x >> 8) % 60000;
        uint32_t len = lens[(blk ^ rid) % 4];
        if (it % 1000 == 999) len = lens[(x >> 40) % 4];   /* the same block, another length */
        uint8_t tag = (uint8_t)(rid * 31 + blk * 7 + len);
        if ((x >> 32) % 3) {
            uint32_t off = (uint32_t)((x >> 20) % len), n = (uint32_t)((x >> 36) % (len - off)) + 1;
            if (sst__cache_get(rid, blk, len, off, got, n)) {
                hits++;
                for (uint32_t k = 0; k < n; k++)
                    cr_assert_eq(got[k], (uint8_t)(tag + off + k), "block %llu len %u byte %u",
                                 (unsigned long long)blk, len, off + k);
            }
        } else {
            for (uint32_t k = 0; k < len; k++) buf[k] = (uint8_t)(tag + k);
            if ((x >> 50) % 2) {
                sst__cache_put(rid, blk, buf, len);
            } else {
                uint8_t *s = sst__cache_slot(rid, blk, len);
                if (!s) continue;
                memcpy(s, buf, len);
                if ((x >> 52) % 8 == 0) sst__cache_slot_free(s);
                else sst__cache_insert(rid, blk, s);
            }
        }
    }
    cr_assert_gt(hits, 1000);
    st__cache_release();
    cr_assert_eq(cs_alloc_count(), before, "cache memory not freed");
    open_replayed();
}

/* A row as "row m@ts;col=v@ts;..." over the columns of cov (a covered
 * read may omit the others). */
typedef struct cover_set { const uint32_t *cols; int n; } cover_set;

static size_t fmt_cover_row(char *out, size_t n, const st_row_view *r, const void *arg)
{
    const cover_set *cs = arg;
    size_t len = (size_t)snprintf(out, n, "row ");
    if (r->liveness.ts_us != INT64_MIN) len += (size_t)snprintf(out + len, n - len, "m@%lld;", (long long)r->liveness.ts_us);
    for (int c = 0; c < r->n_cells; c++)
        for (int k = 0; k < cs->n; k++)
            if (r->cells[c].col == cs->cols[k])
                len += (size_t)snprintf(out + len, n - len, "%u=%.*s@%lld;", r->cells[c].col, (int)r->cells[c].val_len,
                                        (const char *)r->cells[c].val, (long long)r->cells[c].ts_us);
    return len;
}

static void fmt_cover(const st_read_spec *rs, const uint32_t *cols, int n_cols, char *out, size_t n,
                      st_scan_stats *stats)
{
    cover_set cs = { cols, n_cols };
    point_text(rs, fmt_cover_row, &cs, out, n, stats, NULL);
}

/* Timestamp-ordered point reads (st_read_spec.cover_cols): random writes
 * to partitions without clustering (row markers with and without TTL,
 * cells, cell tombstones, expiring cells, row and partition deletions,
 * timestamps out of write order) spread over the memtable and several
 * sstables; a covered read returns the same marker and columns as the
 * full read, and covered reads do skip sstables. */
Test(storage_read, point_timestamp_ordered_matches_full_read, .timeout = 60)
{
    uint64_t seed = 0x2545F4914F6CDD1Dull ^ ((uint64_t)getpid() << 17);
    if (getenv("CS_SEED")) seed = strtoull(getenv("CS_SEED"), NULL, 0);   /* to replay a failure */
    uint64_t x = seed;
#define RND() (x ^= x << 13, x ^= x >> 7, x ^= x << 17, x)
    const uint32_t all[3] = { 1, 2, 3 }, one[1] = { 2 };
    uint64_t skipped = 0, reads = 0, hinted0 = st__rhint_used();
    for (int round = 0; round < 60; round++) {
        uint8_t key[3] = { 't', (uint8_t)round, (uint8_t)(round >> 8) };
        int n_ops = 1 + (int)(RND() % 10);
        for (int op = 0; op < n_ops; op++) {
            int64_t ts = (int64_t)op * 100 + (int64_t)(RND() % 160);   /* mostly newer, sometimes not */
            st_mutation *m = st_mutation_new();
            st_mut_partition(m, T, key, sizeof key);
            int kind = (int)(RND() % 12);
            if (kind == 0) {
                st_mut_partition_delete(m, (st_deletion){ ts, NOW });
            } else if (kind == 1) {
                st_mut_row(m, NULL, 0, 0);
                st_mut_row_delete(m, (st_deletion){ ts, NOW });
            } else {
                st_mut_row(m, NULL, 0, 0);
                int lv = (int)(RND() % 10);
                if (lv < 6) st_mut_row_liveness(m, (st_liveness){ ts, 0, 0 });
                else if (lv == 6) st_mut_row_liveness(m, (st_liveness){ ts, 100, NOW + 100 });
                else if (lv == 7) st_mut_row_liveness(m, (st_liveness){ ts, 1, NOW - 1 });   /* expired */
                for (uint32_t c = 1; c <= 3; c++) {
                    int ck = (int)(RND() % 10);
                    if (ck >= 7) continue;
                    char v[32];
                    snprintf(v, sizeof v, "v%d.%d", round, op);
                    st_cell cell = { .col = c, .ts_us = ts, .val = (const uint8_t *)v, .val_len = (uint32_t)strlen(v) };
                    if (ck == 0) { cell.flags = ST_CELL_TOMBSTONE; cell.ldt_s = NOW; cell.val = NULL; cell.val_len = 0; }
                    else if (ck == 1) { cell.flags = ST_CELL_EXPIRING; cell.ttl_s = 1; cell.ldt_s = NOW - 1; }
                    else if (ck == 2) { cell.flags = ST_CELL_EXPIRING; cell.ttl_s = 100; cell.ldt_s = NOW + 100; }
                    st_mut_cell(m, &cell);
                }
            }
            commit(m);
            if (RND() % 10 < 4) cr_assert_eq(st_table_flush(T), 0);
        }
        st_read_spec rs = { .pk = key, .pk_len = sizeof key, .now_s = NOW, .include_static = true };
        char full[1024], cov[1024], full1[1024], cov1[1024];
        st_scan_stats st;
        fmt_cover(&rs, all, 3, full, sizeof full, NULL);
        fmt_cover(&rs, one, 1, full1, sizeof full1, NULL);
        rs.cover_cols = all; rs.n_cover = 3;
        /* every other round after a batch hint (this key and one never
         * written): its lookups stop at the newest sstable holding the
         * key, which with timestamps out of write order may not settle
         * the row; the read then looks the older ones up itself */
        if (round % 2) {
            static const uint8_t none[3] = { 'n', 'o', 'k' };
            const uint8_t *hk[2] = { key, none };
            const uint32_t hl[2] = { sizeof key, sizeof none };
            st_prefetch_reads(T, hk, hl, 2);
        }
        fmt_cover(&rs, all, 3, cov, sizeof cov, &st);
        skipped += st.sstables_skipped;
        reads++;
        cr_assert_str_eq(cov, full, "seed %#llx round %d: covered read differs", (unsigned long long)seed, round);
        rs.cover_cols = one; rs.n_cover = 1;
        fmt_cover(&rs, one, 1, cov1, sizeof cov1, NULL);
        cr_assert_str_eq(cov1, full1, "seed %#llx round %d: covered read (one column) differs:\n%s\nvs full\n%s", (unsigned long long)seed, round, cov1, full1);
    }
    /* Plain overwrites: the memtable's row settles it, every sstable skipped. */
    uint8_t key[2] = { 'o', 'w' };
    for (int i = 0; i < 3; i++) {
        st_mutation *m = st_mutation_new();
        st_mut_partition(m, T, key, sizeof key);
        st_mut_row(m, NULL, 0, 0);
        /* newer than every random write above (op * 100 + 159 < 1100) */
        st_mut_row_liveness(m, (st_liveness){ 1000000 + i, 0, 0 });
        for (uint32_t c = 1; c <= 3; c++) cell(m, c, 1000000 + i, i == 2 ? "new" : "old");
        commit(m);
        if (i < 2) cr_assert_eq(st_table_flush(T), 0);
    }
    st_read_spec rs = { .pk = key, .pk_len = sizeof key, .now_s = NOW, .cover_cols = all, .n_cover = 3 };
    char out[256];
    st_scan_stats st;
    fmt_cover(&rs, all, 3, out, sizeof out, &st);
    cr_assert_str_eq(out, "row m@1000002;1=new@1000002;2=new@1000002;3=new@1000002;");
    cr_assert_eq(st.sstables_read, 0, "an sstable was read for a row the memtable settles");
    cr_assert_gt(skipped, 0, "seed %#llx: no covered read of %llu skipped an sstable", (unsigned long long)seed,
                 (unsigned long long)reads);
    cr_assert_gt(st__rhint_used(), hinted0, "seed %#llx: no read took a hint's lookup", (unsigned long long)seed);
#undef RND
}

/* The prefetch tests' rows: partition key, a row marker and cell 1 = val,
 * both at ts (put_marked); and the point read of key expecting exactly that cell
 * (found false: expecting no partition). */
static void put_marked(const char *key, int64_t ts, const char *val)
{
    st_mutation *m = st_mutation_new();
    st_mut_partition(m, T, (const uint8_t *)key, (uint32_t)strlen(key));
    st_mut_row(m, NULL, 0, 0);
    st_mut_row_liveness(m, (st_liveness){ ts, 0, 0 });
    cell(m, 1, ts, val);
    commit(m);
}

static void expect_kv(const char *key, bool found, const char *val)
{
    st_read_spec rs = { .pk = (const uint8_t *)key, .pk_len = (uint32_t)strlen(key), .now_s = NOW };
    char got[512], want[512];
    bool f;
    dump_point(&rs, got, sizeof got, NULL, &f);
    cr_assert_eq(f, found, "%s", key);
    snprintf(want, sizeof want, ":m,1=%s,;", val);
    if (found) cr_assert_str_eq(got, want, "%s", key);
}

/* A read hint for one key (st_prefetch_reads of 1) changes nothing: after
 * it, point reads of that key, of another key of the same length and of a
 * longer key return their own partitions (the read reuses the hinted
 * key's token only for those very bytes), from the memtable and from four
 * sstables (more than the three whose blooms it loads). */
Test(storage_read, prefetch_hint_changes_nothing)
{
    static const char *keys[] = { "a1", "a2", "b1", "long key over sixty-four bytes, longer than the hint's copy of a key..." };
    char v[96];
    for (int round = 0; round < 5; round++) {
        for (int i = 0; i < 4; i++) {
            snprintf(v, sizeof v, "%s/%d", keys[i], round);
            put_marked(keys[i], 10 + round, v);
        }
        if (round < 4) cr_assert_eq(st_table_flush(T), 0);
    }
    for (int h = 0; h < 4; h++)
        for (int i = 0; i < 4; i++) {
            const uint8_t *hk = (const uint8_t *)keys[h];
            uint32_t hl = (uint32_t)strlen(keys[h]);
            st_prefetch_reads(T, &hk, &hl, 1);
            snprintf(v, sizeof v, "%s/4", keys[i]);
            expect_kv(keys[i], true, v);
        }
    const uint8_t *nk[2] = { NULL, (const uint8_t *)"" };
    uint32_t zl[2] = { 0, 0 };
    st_prefetch_reads(T, nk, zl, 1);
    st_prefetch_reads(T, nk + 1, zl + 1, 1);
}

/* st_prefetch_reads is only a hint: after a batch of keys, point reads in
 * the hinted order, in another order, skipping some, and of keys not in
 * the batch each return their own partition (a read reuses a hinted
 * token only for the very bytes it was hashed from).  The sstables hold
 * 3000 more partitions, so their lookups' hints (sst_prefetch_lookups)
 * take the summary's interpolation path too; batches of those keys, with
 * absent ones among them, read back right. */
Test(storage_read, prefetch_reads_changes_nothing)
{
    static const char *keys[] = { "a1", "a2", "b1", "long key over sixty-four bytes, longer than the hint's copy of a key...", "zz" };
    char v[96];
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 5; i++) {
            snprintf(v, sizeof v, "%s/%d", keys[i], round);
            put_marked(keys[i], 10 + round, v);
        }
        for (int i = 0; round < 2 && i < 3000; i += 1 + round) {
            snprintf(v, sizeof v, "f%d", i);
            put_marked(v, 10 + round, v);
        }
        if (round < 2) cr_assert_eq(st_table_flush(T), 0);
    }
    for (int b = 0; b < 3100; b += 20) {
        char kb[20][16];
        const uint8_t *bp[20];
        uint32_t bl[20];
        for (int j = 0; j < 20; j++) {
            snprintf(kb[j], sizeof kb[j], "f%d", b + j);
            bp[j] = (const uint8_t *)kb[j];
            bl[j] = (uint32_t)strlen(kb[j]);
        }
        st_prefetch_reads(T, bp, bl, 20);
        for (int j = 0; j < 20; j++)
            expect_kv(kb[j], b + j < 3000, kb[j]);
    }
    const uint8_t *pks[4];
    uint32_t lens[4];
    for (int i = 0; i < 4; i++) {
        pks[i] = (const uint8_t *)keys[i];
        lens[i] = (uint32_t)strlen(keys[i]);
    }
    static const int orders[][6] = { { 0, 1, 2, 3, 4, -1 }, { 2, 0, 3, 1, -1 }, { 1, 3, -1 }, { 4, 4, 0, -1 } };
    for (size_t o = 0; o < sizeof orders / sizeof orders[0]; o++) {
        st_prefetch_reads(T, pks, lens, 4);
        for (int k = 0; orders[o][k] >= 0; k++) {
            snprintf(v, sizeof v, "%s/2", keys[orders[o][k]]);
            expect_kv(keys[orders[o][k]], true, v);
        }
    }
    st_prefetch_reads(T, pks, lens, 0);
    pks[0] = NULL;
    st_prefetch_reads(T, pks, lens, 4);     /* a NULL key with a length: ignored */
}

/* The memtable hint follows each one-row partition to its row's mutable
 * form, cells and values, or to its packed bytes: with rows in every form
 * (packed and longer than a few cache lines, overwritten into the mutable
 * form, a deleted cell whose value is NULL, two cells, a row deletion, an
 * absent key and an empty value), a batch hint then point reads return
 * the same as reads without it, in and out of the hinted order. */
Test(storage_read, prefetch_reads_memtable_row_forms)
{
    char big[300];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    put_marked("packed", 10, big);
    for (int ts = 10; ts < 13; ts++) put_marked("over", ts, ts == 12 ? big : "short");
    put_marked("empty", 10, "");
    put_marked("gone", 10, "v");
    st_mutation *m = st_mutation_new();
    st_mut_partition(m, T, (const uint8_t *)"gone", 4);
    st_mut_row(m, NULL, 0, 0);
    st_cell tomb = { .col = 1, .ts_us = 11, .flags = ST_CELL_TOMBSTONE, .ldt_s = NOW };
    st_mut_cell(m, &tomb);
    commit(m);
    m = st_mutation_new();
    st_mut_partition(m, T, (const uint8_t *)"two", 3);
    st_mut_row(m, NULL, 0, 0);
    st_mut_row_liveness(m, (st_liveness){ 10, 0, 0 });
    cell(m, 1, 10, "one");
    cell(m, 2, 10, big);
    commit(m);
    put_marked("rowdel", 10, "v");
    m = st_mutation_new();
    st_mut_partition(m, T, (const uint8_t *)"rowdel", 6);
    st_mut_row(m, NULL, 0, 0);
    st_mut_row_delete(m, (st_deletion){ 11, NOW });
    commit(m);

    static const char *keys[] = { "packed", "over", "empty", "gone", "two", "rowdel", "absent" };
    enum { NK = sizeof keys / sizeof keys[0] };
    char want[NK][1024];
    bool found[NK];
    for (int i = 0; i < NK; i++) {
        st_read_spec rs = { .pk = (const uint8_t *)keys[i], .pk_len = (uint32_t)strlen(keys[i]), .now_s = NOW };
        dump_point(&rs, want[i], sizeof want[i], NULL, &found[i]);
    }
    cr_assert(found[0] && found[1] && found[2] && found[3] && found[4]);
    cr_assert(!found[6]);
    const uint8_t *pks[NK];
    uint32_t lens[NK];
    for (int i = 0; i < NK; i++) {
        pks[i] = (const uint8_t *)keys[i];
        lens[i] = (uint32_t)strlen(keys[i]);
    }
    static const int orders[][NK + 1] = { { 0, 1, 2, 3, 4, 5, 6, -1 }, { 6, 4, 1, 0, -1 }, { 3, 3, 5, -1 } };
    for (size_t o = 0; o < sizeof orders / sizeof orders[0]; o++) {
        st_prefetch_reads(T, pks, lens, NK);
        for (int k = 0; orders[o][k] >= 0; k++) {
            int i = orders[o][k];
            st_read_spec rs = { .pk = pks[i], .pk_len = lens[i], .now_s = NOW };
            char got[1024];
            bool f;
            dump_point(&rs, got, sizeof got, NULL, &f);
            cr_assert_eq(f, found[i], "%s", keys[i]);
            cr_assert_str_eq(got, want[i], "%s", keys[i]);
        }
    }
}

static void bloom_counts(uint64_t *checks, uint64_t *fp)
{
    st_table_stats ts;
    cr_assert_eq(st_table_stats_get(T, &ts), 0);
    *checks = ts.bloom_checks;
    *fp = ts.bloom_false_positives;
}

/* A read hint for keys[0..n) (strings), their pointers and lengths in
 * bp and bl for the reads that follow. */
static void hint_keys(char (*keys)[16], int n, const uint8_t **bp, uint32_t *bl)
{
    for (int j = 0; j < n; j++) {
        bp[j] = (const uint8_t *)keys[j];
        bl[j] = (uint32_t)strlen(keys[j]);
    }
    st_prefetch_reads(T, bp, bl, n);
}

/* A batch hint's sstable lookups (bloom test, index search) are kept for
 * the point reads that follow, which use them instead of searching again:
 * over five sstables (the hint looks up in them newest first, up to the
 * first holding the key's token) and a
 * memtable, with keys present in some sstables, in all, in none, the reads
 * after a hint return what reads without one return, with the same bloom
 * check and false positive counts, and most lookups come from the hint.
 * A hint made before a flush or a compaction is still right after it: its
 * answers are only taken for the very sstables it looked in. */
Test(storage_read, prefetch_reads_lookups_kept)
{
    enum { N = 400, B = 16 };
    char keys[N][16];
    for (int i = 0; i < N; i++) snprintf(keys[i], sizeof keys[i], "h%d", i);
    st_table_set_autocompaction(T, false);               /* five sstables stay five */
    for (int round = 0; round < 6; round++) {
        for (int i = 0; i < N - 40; i++)                 /* h360.. never written */
            if (i % (round + 2) == 0 || i % 7 == round) {
                char v[32];
                snprintf(v, sizeof v, "%.15s/%d", keys[i], round);
                put_marked(keys[i], 10 + round, v);
            }
        if (round < 5) cr_assert_eq(st_table_flush(T), 0);
    }
    char (*want)[512] = cs_malloc(sizeof(char[N][512]));
    bool *wf = cs_malloc(N);
    cr_assert(want && wf);
    uint64_t c0, f0, c1, f1, c2, f2;
    st_table_stats ts;
    cr_assert_eq(st_table_stats_get(T, &ts), 0);
    cr_assert_eq(ts.sstable_count, 5);
    bloom_counts(&c0, &f0);
    for (int i = 0; i < N; i++) {
        st_read_spec rs = { .pk = (const uint8_t *)keys[i], .pk_len = (uint32_t)strlen(keys[i]), .now_s = NOW };
        dump_point(&rs, want[i], 512, NULL, &wf[i]);
    }
    bloom_counts(&c1, &f1);
    cr_assert_gt(f1 - f0, 0, "some bloom false positives to compare");
    uint64_t used0 = st__rhint_used();
    for (int phase = 0; phase < 3; phase++) {
        for (int b = 0; b < N; b += B) {
            const uint8_t *bp[B];
            uint32_t bl[B];
            hint_keys(keys + b, B, bp, bl);
            if (phase == 1 && b == B * 5) cr_assert_eq(st_table_flush(T), 0);      /* an empty flush: nothing new */
            if (phase == 2 && b == B * 5) cr_assert_eq(st_table_compact(T), 0);    /* the hinted sstables replaced */
            for (int j = 0; j < B; j++) {
                st_read_spec rs = { .pk = bp[j], .pk_len = bl[j], .now_s = NOW };
                char got[512];
                bool f;
                dump_point(&rs, got, sizeof got, NULL, &f);
                cr_assert_eq(f, wf[b + j], "%s", keys[b + j]);
                cr_assert_str_eq(got, want[b + j], "%s", keys[b + j]);
            }
        }
        if (phase == 0) {
            bloom_counts(&c2, &f2);
            cr_assert_eq(c2 - c1, c1 - c0, "bloom checks with hints %lu, without %lu",
                         (unsigned long)(c2 - c1), (unsigned long)(c1 - c0));
            cr_assert_eq(f2 - f1, f1 - f0, "false positives with hints %lu, without %lu",
                         (unsigned long)(f2 - f1), (unsigned long)(f1 - f0));
            /* every key's lookups in the five sstables, newest first, up
             * to the first that holds it (rounds 4 to 0; round 5 is in
             * the memtable): the older ones are not looked up */
            uint64_t probed = 0;
            for (int i = 0; i < N; i++) {
                int r = 4;
                while (r >= 0 && !(i < N - 40 && (i % (r + 2) == 0 || i % 7 == r))) r--;
                probed += r >= 0 ? (uint64_t)(5 - r) : 5;
            }
            cr_assert_eq(st__rhint_used() - used0, probed, "%lu, want %lu",
                         (unsigned long)(st__rhint_used() - used0), (unsigned long)probed);
        }
    }
    /* Timestamp-ordered reads (cover_cols) look the sstables up one by
     * one, newest first, and stop once the row is settled: they take the
     * hint's answers too, and read back what they read without it. */
    static const uint32_t col1[] = { 1 };
    for (int i = 0; i < N; i++) {
        st_read_spec rs = { .pk = (const uint8_t *)keys[i], .pk_len = (uint32_t)strlen(keys[i]), .now_s = NOW,
                            .cover_cols = col1, .n_cover = 1 };
        dump_point(&rs, want[i], 512, NULL, &wf[i]);
    }
    uint64_t used1 = st__rhint_used();
    for (int b = 0; b < N; b += B) {
        const uint8_t *bp[B];
        uint32_t bl[B];
        hint_keys(keys + b, B, bp, bl);
        for (int j = 0; j < B; j++) {
            st_read_spec rs = { .pk = bp[j], .pk_len = bl[j], .now_s = NOW, .cover_cols = col1, .n_cover = 1 };
            char got[512];
            bool f;
            dump_point(&rs, got, sizeof got, NULL, &f);
            cr_assert_eq(f, wf[b + j], "%s", keys[b + j]);
            cr_assert_str_eq(got, want[b + j], "%s", keys[b + j]);
        }
    }
    /* at least the newest sstable's lookup of every key (after the major
     * compaction above there is one sstable) */
    cr_assert_geq(st__rhint_used() - used1, (uint64_t)N, "%lu", (unsigned long)(st__rhint_used() - used1));
    cs_free(want);
    cs_free(wf);
}

/* A flush and a compaction put the blocks they write into the block cache
 * while it has room, under the new sstable's reader id: reads right after
 * them find every block cached (no miss); the compaction's inputs, gone,
 * leave the cache with them, so it holds the output's blocks only. */
Test(storage_read, flush_and_compaction_warm_the_block_cache)
{
    enum { N = 3000 };
    st_table_set_autocompaction(T, false);
    st_block_cache_stats c0, c1, c2;
    char k[16], v[160];
    for (int round = 0; round < 2; round++) {
        for (int i = round; i < N; i += 1 + round) {
            snprintf(k, sizeof k, "w%d", i);
            snprintf(v, sizeof v, "%s/%d/%0120d", k, round, i);   /* ~3000 x 140 B: ~100 blocks */
            put_marked(k, 10 + round, v);
        }
        cr_assert_eq(st_table_flush(T), 0);
    }
    st_block_cache_stats_get(&c0);
    uint64_t blocks = (uint64_t)T->ssts[0]->n_chunks + (uint64_t)T->ssts[1]->n_chunks;
    cr_assert_gt(T->ssts[0]->n_chunks, 20);
    cr_assert_eq(c0.entries, blocks, "cached %lu of %lu blocks", (unsigned long)c0.entries, (unsigned long)blocks);
    for (int pass = 0; pass < 2; pass++) {
        st_block_cache_stats_get(&c1);
        for (int i = 0; i < N; i++) {
            snprintf(k, sizeof k, "w%d", i);
            int round = i % 2 ? 1 : 0;
            snprintf(v, sizeof v, "%s/%d/%0120d", k, round, i);
            expect_kv(k, true, v);
        }
        st_block_cache_stats_get(&c2);
        cr_assert_gt(c2.requests - c1.requests, (uint64_t)N);
        cr_assert_eq(c2.hits - c1.hits, c2.requests - c1.requests, "%lu misses",
                     (unsigned long)((c2.requests - c1.requests) - (c2.hits - c1.hits)));
        if (pass == 0) {
            cr_assert_eq(st_table_compact(T), 0);
            cr_assert_eq(T->n_ssts, 1);
            /* the inputs' readers go when the last read of them is done */
            for (int w = 0; w < 200; w++) {
                st_block_cache_stats_get(&c2);
                if (c2.entries == T->ssts[0]->n_chunks) break;
                usleep(10000);
            }
            cr_assert_eq(c2.entries, T->ssts[0]->n_chunks, "cached %lu, output %lu blocks",
                         (unsigned long)c2.entries, (unsigned long)T->ssts[0]->n_chunks);
        }
    }
}

/* Overwrites skip the descent: after N keys are written, a batch hint
 * before each batch of their overwrites finds every one in the memtable's
 * index, each write takes its partition from the hint, and the memtable
 * stays consistent with every key reading back its last value.  A hint
 * for new keys (absent from the index) still descends, and a new key
 * hinted together with overwrites lands in its own partition. */
Test(storage_read, prefetch_writes_overwrites_skip_descent)
{
    enum { N = 3000, BATCH = ST_PREFETCH_KEYS };
    char keys[BATCH][16];
    const uint8_t *pks[BATCH];
    uint32_t lens[BATCH];
    for (int round = 0; round < 3; round++) {
        uint64_t before = T->mem->hinted_parts;
        for (int i0 = 0; i0 < N; i0 += BATCH) {
            for (int j = 0; j < BATCH; j++) {
                /* round 2: every other key of a batch is new */
                int k = round == 2 && j % 2 ? N + i0 + j : i0 + j;
                snprintf(keys[j], sizeof keys[j], "k%d", k);
                pks[j] = (const uint8_t *)keys[j];
                lens[j] = (uint32_t)strlen(keys[j]);
            }
            int nb = N - i0 < BATCH ? N - i0 : BATCH;   /* hint only what is written (the hint ring) */
            st_prefetch_writes(T, pks, lens, nb);
            for (int j = 0; j < nb; j++) {
                char v[32];
                snprintf(v, sizeof v, "%.15s/%d", keys[j], round);
                put_marked(keys[j], 10 + round, v);
            }
        }
        uint64_t hinted = T->mem->hinted_parts - before;
        if (round == 0) cr_assert_eq(hinted, 0, "new keys took a partition from a hint");
        if (round == 1) cr_assert_eq(hinted, (uint64_t)N, "%llu of %d overwrites hinted", (unsigned long long)hinted, N);
        if (round == 2) cr_assert_eq(hinted, (uint64_t)N / 2, "%llu", (unsigned long long)hinted);
    }
    cr_assert_eq(mt_check(T->mem), 0);
    cr_assert_eq(mt_partitions(T->mem), (size_t)(N + N / 2));
    for (int i = 0; i < N; i++) {
        char k[16], v[32];
        snprintf(k, sizeof k, "k%d", i);
        snprintf(v, sizeof v, "%s/%d", k, i % 2 ? 1 : 2);
        expect_kv(k, true, v);
        snprintf(k, sizeof k, "k%d", N + i);
        snprintf(v, sizeof v, "%s/2", k);
        expect_kv(k, i % 2 == 1, v);
    }
}

/* st_prefetch_writes is only a hint: with it before each batch of writes
 * (keys new and already there, more than it takes, an empty key; the
 * writes start from the leaves it found, split since or not), the
 * memtable is consistent and every key reads back its last write, from a
 * memtable big enough for a three-level partition tree; a hint given on
 * a memtable flushed before its writes arrive is not used on the next. */
Test(storage_read, prefetch_writes_changes_nothing)
{
    enum { N = 3000, BATCH = ST_PREFETCH_KEYS + 4 };
    char keys[BATCH][16];
    const uint8_t *pks[BATCH];
    uint32_t lens[BATCH];
    for (int round = 0; round < 2; round++)
        for (int i0 = 0; i0 < N; i0 += BATCH) {
            for (int j = 0; j < BATCH; j++) {
                snprintf(keys[j], sizeof keys[j], "k%d", (i0 + j) % N);
                pks[j] = (const uint8_t *)keys[j];
                lens[j] = (uint32_t)strlen(keys[j]);
            }
            st_prefetch_writes(T, pks, lens, BATCH);
            if (round == 1 && i0 == BATCH * 10) cr_assert_eq(st_table_flush(T), 0);
            for (int j = 0; j < BATCH && i0 + j < N; j++) {
                char v[32];
                snprintf(v, sizeof v, "%.15s/%d", keys[j], round);
                put_marked(keys[j], 10 + round, v);
            }
        }
    lens[0] = 0;
    st_prefetch_writes(T, pks, lens, 1);
    st_prefetch_writes(T, pks, lens, 0);
    cr_assert_eq(mt_check(T->mem), 0);
    cr_assert_eq(mt_partitions(T->mem), (size_t)(N - BATCH * 10));   /* the rest went to the sstable */
    for (int i = 0; i < N; i += 7) {
        char k[16], v[32];
        snprintf(k, sizeof k, "k%d", i);
        snprintf(v, sizeof v, "%s/1", k);
        expect_kv(k, true, v);
    }
}
