/*
 * test_storage_budget.c: the scan tombstone budget (st_read_spec.
 * max_tombstones / max_tombstones_live, ST_SCAN_BUDGET, st_scan_budget_pos):
 * a scan stops at a row or partition boundary once it has scanned its
 * budget, and resuming after the reported position reads every live row
 * exactly once, in memtables and in sstables, forward and reversed, for one
 * partition and for token ranges.
 */
#include <stdio.h>
#include <string.h>

#define STORAGE_FIXTURE_TAG "st_budget"
#define STORAGE_FIXTURE_TID { 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4 }
#define STORAGE_FIXTURE_TABLE "b"
#define STORAGE_FIXTURE_OPEN_TABLE
#include "test_storage_fixture.h"

TestSuite(storage_budget, .init = setup, .fini = teardown);

static const uint8_t PK[] = { 'k' };
#define NROWS 3000

static bool is_live(int c) { return c == 0 || c == 5 || c == 1500 || c == 1501 || c == 2999; }

/* NROWS rows in partition PK: live rows is_live, row tombstones elsewhere. */
static void write_rows(void)
{
    st_mutation *m = st_mutation_new();
    st_mut_partition(m, T, PK, 1);
    for (int c = 0; c < NROWS; c++) {
        uint8_t ck[2] = { (uint8_t)(c >> 8), (uint8_t)c };
        st_mut_row(m, ck, 2, 0);
        if (is_live(c))
            st_mut_row_liveness(m, (st_liveness){ 10, 0, 0 });
        else
            st_mut_row_delete(m, (st_deletion){ 10, 10 });
    }
    cr_assert_eq(st_write(E, m, NULL), 0);
    st_mutation_free(m);
}

/* Read partition PK in budgeted scans, resuming after each reported
 * position; returns the live rows seen (in order) and the scan count. */
static int read_budgeted(bool rev, uint64_t budget, int *seen, int *n_seen)
{
    uint8_t pos[2];
    bool have_pos = false;
    int scans = 0;
    *n_seen = 0;
    for (;;) {
        st_slice sl;
        memset(&sl, 0, sizeof sl);
        if (have_pos) {
            if (rev) sl.end = (st_bound){ pos, 2, false };
            else sl.start = (st_bound){ pos, 2, false };
        }
        st_read_spec rs = { .pk = PK, .pk_len = 1, .reversed = rev, .max_tombstones = budget,
                            .slices = have_pos ? &sl : NULL, .n_slices = have_pos ? 1 : 0 };
        st_scan *s;
        cr_assert_eq(st_scan_open(T, &rs, &s), 0);
        scans++;
        cr_assert_lt(scans, 100, "no progress");
        st_partition_view p;
        int rc = st_scan_next_partition(s, &p);
        if (rc == 1) {
            st_row_view r;
            while ((rc = st_scan_next_row(s, &r)) == 1) {
                cr_assert_eq(r.ck_len, 2);
                seen[(*n_seen)++] = r.ck[0] << 8 | r.ck[1];
            }
        }
        cr_assert_geq(rc, 0);
        if (budget) cr_assert_leq(st_scan_stats_get(s)->tombstones, budget + 1);
        if (rc != ST_SCAN_BUDGET) {
            cr_assert_eq(rc, 0);
            int64_t t; const uint8_t *k, *ck; uint32_t kl, cl;
            cr_assert_eq(st_scan_budget_pos(s, &t, &k, &kl, &ck, &cl), CS_EINVAL);
            st_scan_close(s);
            return scans;
        }
        int64_t t; const uint8_t *k, *ck; uint32_t kl, cl;
        cr_assert_eq(st_scan_budget_pos(s, &t, &k, &kl, &ck, &cl), 0);
        cr_assert_eq(kl, 1);
        cr_assert_eq(k[0], 'k');
        cr_assert_not_null(ck);
        cr_assert_eq(cl, 2);
        memcpy(pos, ck, 2);
        have_pos = true;
        st_scan_close(s);
    }
}

static void check_partition(const char *where)
{
    static int seen[NROWS];
    int want[NROWS], nw = 0;
    for (int c = 0; c < NROWS; c++)
        if (is_live(c)) want[nw++] = c;
    for (int rev = 0; rev < 2; rev++) {
        int n;
        int scans = read_budgeted(rev, 1000, seen, &n);
        cr_assert_eq(n, nw, "%s rev %d: %d rows", where, rev, n);
        for (int i = 0; i < n; i++)
            cr_assert_eq(seen[i], want[rev ? nw - 1 - i : i], "%s rev %d row %d", where, rev, i);
        cr_assert_geq(scans, 3, "%s rev %d: %d scans", where, rev, scans);
        /* Unlimited: one scan. */
        cr_assert_eq(read_budgeted(rev, 0, seen, &n), 1);
        cr_assert_eq(n, nw);
    }
}

Test(storage_budget, partition_memtable_and_sstable)
{
    write_rows();
    check_partition("memtable");
    cr_assert_eq(st_table_flush(T), 0);
    check_partition("sstable");
}

/* max_tombstones_live: a far budget until a live row, then a near one. */
Test(storage_budget, live_budget)
{
    write_rows();
    st_read_spec rs = { .pk = PK, .pk_len = 1, .max_tombstones = 100000, .max_tombstones_live = 10 };
    uint8_t start[2] = { 0, 6 };   /* after rows 0 and 5: 1494 tombstones before 1500 */
    st_slice sl = { { start, 2, true }, { NULL, 0, true } };
    rs.slices = &sl; rs.n_slices = 1;
    st_scan *s;
    cr_assert_eq(st_scan_open(T, &rs, &s), 0);
    st_partition_view p;
    cr_assert_eq(st_scan_next_partition(s, &p), 1);
    st_row_view r;
    cr_assert_eq(st_scan_next_row(s, &r), 1);
    cr_assert_eq(r.ck[0] << 8 | r.ck[1], 1500);
    cr_assert_eq(st_scan_next_row(s, &r), 1);
    cr_assert_eq(r.ck[0] << 8 | r.ck[1], 1501);
    cr_assert_eq(st_scan_next_row(s, &r), ST_SCAN_BUDGET);
    cr_assert_eq(st_scan_next_row(s, &r), ST_SCAN_BUDGET);
    int64_t t; const uint8_t *k, *ck; uint32_t kl, cl;
    cr_assert_eq(st_scan_budget_pos(s, &t, &k, &kl, &ck, &cl), 0);
    cr_assert_eq(ck[0] << 8 | ck[1], 1502);   /* the first tombstone after the live rows */
    st_scan_close(s);
}

/* Token range over fully deleted partitions: the scan stops after a
 * partition, with no clustering position. */
Test(storage_budget, range_of_deleted_partitions)
{
    enum { NP = 400 };
    for (int i = 0; i < NP; i++) {
        uint8_t k3[3] = { 'p', (uint8_t)(i >> 8), (uint8_t)i };
        st_mutation *m = st_mutation_new();
        st_mut_partition(m, T, k3, 3);
        st_mut_row(m, (const uint8_t *)"c", 1, 0);
        st_mut_row_liveness(m, (st_liveness){ 5, 0, 0 });
        if (i % 50 != 7)
            st_mut_partition_delete(m, (st_deletion){ 10, 10 });
        cr_assert_eq(st_write(E, m, NULL), 0);
        st_mutation_free(m);
        if (i == NP / 2) cr_assert_eq(st_table_flush(T), 0);
    }
    int found[NP];
    memset(found, 0, sizeof found);
    int64_t tok = INT64_MIN;
    uint8_t key[3];
    bool have = false;
    int scans = 0;
    for (;;) {
        st_read_spec rs = { .start_token = tok, .start_key = have ? key : NULL, .start_key_len = have ? 3 : 0,
                            .start_inclusive = false, .end_token = INT64_MAX, .max_tombstones = 50 };
        st_scan *s;
        cr_assert_eq(st_scan_open(T, &rs, &s), 0);
        cr_assert_lt(++scans, 100);
        st_partition_view p;
        int rc;
        while ((rc = st_scan_next_partition(s, &p)) == 1) {
            cr_assert_eq(p.pk_len, 3);
            int i = p.pk[1] << 8 | p.pk[2];
            found[i]++;
            st_row_view r;
            while ((rc = st_scan_next_row(s, &r)) == 1) ;
            cr_assert_eq(rc, 0);
            have = true; tok = p.token; memcpy(key, p.pk, 3);
        }
        cr_assert_leq(st_scan_stats_get(s)->tombstones, 51);
        if (rc == 0) { st_scan_close(s); break; }
        cr_assert_eq(rc, ST_SCAN_BUDGET);
        const uint8_t *k, *ck; uint32_t kl, cl;
        cr_assert_eq(st_scan_budget_pos(s, &tok, &k, &kl, &ck, &cl), 0);
        cr_assert_null(ck);
        cr_assert_eq(kl, 3);
        cr_assert_eq(tok, cs_murmur3_token(k, 3));
        memcpy(key, k, 3); have = true;
        st_scan_close(s);
    }
    for (int i = 0; i < NP; i++)
        cr_assert_eq(found[i], i % 50 == 7 ? 1 : 0, "partition %d seen %d times", i, found[i]);
    cr_assert_geq(scans, 6);
}
