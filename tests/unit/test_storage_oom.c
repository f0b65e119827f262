/*
 * test_storage_oom.c: fail the Nth allocation for N = 1, 2, ... through a
 * whole open / write / flush / read / compact / close / reopen cycle.  Every
 * step may fail with CS_ENOMEM but must never crash, and once allocation
 * works again the data written successfully must still be readable and
 * nothing may leak.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define STORAGE_FIXTURE_TAG "st_oom"
#define STORAGE_FIXTURE_TID { 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8 }
#include "test_storage_fixture.h"

static st_engine *eopen(void)
{
    st_config cfg;
    fixture_config(&cfg);
    cfg.segment_size = 8192;
    st_engine *e = NULL;
    if (st_engine_open(&cfg, &e)) return NULL;
    return e;
}

static int count(st_table *t)
{
    st_read_spec rs = { .start_token = INT64_MIN, .end_token = INT64_MAX };
    st_scan *s;
    if (st_scan_open(t, &rs, &s)) return -1;
    st_partition_view p;
    st_row_view r;
    int n = 0, rc;
    while ((rc = st_scan_next_partition(s, &p)) == 1) while (st_scan_next_row(s, &r) == 1) n++;
    st_scan_close(s);
    return rc < 0 ? rc : n;
}

/* One cycle with allocation N failing; returns rows known written. */
static int cycle(void)
{
    st_engine *e = eopen();
    if (!e) return 0;
    st_table *t;
    int ok = 0;
    if (st_table_open(e, TID, "ks", "oom", NULL, &t) == 0) {
        st_engine_replay(e, NULL, NULL);
        st_engine_replay_done(e);
        for (int i = 0; i < 30; i++) {
            uint8_t pk[2] = { 'k', (uint8_t)(i % 5) }, ck[2] = { 'c', (uint8_t)i };
            st_mutation *m = st_mutation_new();
            if (!m) continue;
            st_mut_partition(m, t, pk, 2);
            st_mut_row(m, ck, 2, 0);
            st_mut_row_liveness(m, (st_liveness){ 1, 0, 0 });
            if (st_write(e, m, NULL) == 0) ok++;
            st_mutation_free(m);
            if (i == 10) st_table_flush(t);
            if (i == 20) { st_table_flush(t); st_table_compact(t); }
        }
        count(t);
        st_table_flush(t);
    }
    st_engine_close(e, false);
    return ok;
}

Test(storage_oom, fail_nth_allocation, .timeout = 240)
{
    fixture_dirs();
    for (long n = 1; n < 1500; n += (n < 300 ? 1 : 7)) {
        vfs_rmtree(g_dir);
        cs_alloc_fail_nth(n);
        cycle();
        cs_alloc_fail_nth(0);
        cr_assert_eq(cs_alloc_count(), 0, "N=%ld: %zu allocations leaked", n, cs_alloc_count());
        /* Recovery with allocation working: everything readable, no error. */
        st_engine *e = eopen();
        cr_assert_not_null(e, "N=%ld: reopen failed", n);
        st_table *t;
        cr_assert_eq(st_table_open(e, TID, "ks", "oom", NULL, &t), 0, "N=%ld", n);
        cr_assert_eq(st_engine_replay(e, NULL, NULL), 0);
        st_engine_replay_done(e);
        cr_assert_geq(count(t), 0, "N=%ld: read error after recovery", n);
        st_engine_close(e, false);
        cr_assert_eq(cs_alloc_count(), 0, "N=%ld: leak after recovery", n);
    }
    vfs_rmtree(g_dir);
}
