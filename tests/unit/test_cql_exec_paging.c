/*
 * test_cql_exec_paging.c: paging of every query shape (pages concatenated = unpaged result),
 * bad states, ORDER BY with IN, GROUP BY pages, paging while writing.
 * Through cql_query / cql_prepare / cql_execute on a real engine in a temp
 * dir; results checked by decoding the RESULT body (test_cql_exec_harness.h).
 */
#include "test_cql_exec_harness.h"

TestSuite(exec_paging, .init = setup, .fini = teardown, .timeout = 120);

Test(exec_paging, paging_every_shape)
{
    mkks();
    fill_kcv();
    ok("CREATE TABLE s (k int, c int, v int, st int static, PRIMARY KEY (k, c))");
    ok("UPDATE s SET st = 5 WHERE k = 1");
    for (int k = 2; k < 6; k++)
        for (int c = 0; c < 3; c++) {
            char q[200];
            snprintf(q, sizeof q, "INSERT INTO s (k, c, v) VALUES (%d, %d, %d)", k, c, c);
            ok(q);
        }
    const char *qs[] = {
        "SELECT * FROM t WHERE k = 1",
        "SELECT * FROM t WHERE k = 1 ORDER BY c DESC",
        "SELECT * FROM t WHERE k = 1 AND c > 0 AND c <= 3",
        "SELECT * FROM t WHERE k IN (3, 1, 2)",
        "SELECT * FROM t WHERE k IN (3, 1) AND c IN (1, 3, 4)",
        "SELECT * FROM t",
        "SELECT * FROM t LIMIT 7",
        "SELECT * FROM t PER PARTITION LIMIT 2",
        "SELECT * FROM t PER PARTITION LIMIT 2 LIMIT 5",
        "SELECT * FROM t WHERE v > 12 ALLOW FILTERING",
        "SELECT * FROM t WHERE token(k) > -4069959284402364209",
        "SELECT DISTINCT k FROM t",
        "SELECT * FROM s",
        "SELECT DISTINCT k, st FROM s",
        "SELECT * FROM t WHERE k = 1 ORDER BY c DESC LIMIT 3",
    };
    for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++)
        for (int ps = 1; ps <= 4; ps++)
            paged_equals(qs[i], ps);
    cr_assert_eq(paged_equals("SELECT * FROM t WHERE k = 1", 5), 1, "a full page with nothing after has no paging state");
    cr_assert_eq(paged_equals("SELECT count(*) FROM t", 2), 1);
    /* GROUP BY pages count groups */
    cr_assert_eq(paged_equals("SELECT k, count(*) FROM t GROUP BY k", 1), 4);
    cr_assert_eq(paged_equals("SELECT k, c, max(v) FROM t GROUP BY k, c", 7), 3);
    paged_equals("SELECT k, c, max(v) FROM t GROUP BY k, c PER PARTITION LIMIT 2 LIMIT 7", 2);
    paged_equals("SELECT k, c FROM t WHERE k IN (1, 2) GROUP BY k, c", 3);
    paged_equals("SELECT k, count(*) FROM s GROUP BY k", 1);
    /* bad paging state */
    ropts o;
    memset(&o, 0, sizeof o);
    o.page_size = 2;
    uint8_t junk[3] = {9, 9, 9};
    o.ps = junk;
    o.ps_len = 3;
    cr_assert_neq(run("SELECT * FROM t", &o, NULL, 0), 0);
    cr_assert_eq(g_err.code, CS_ERR_PROTOCOL);
    /* ORDER BY with IN and paging */
    memset(&o, 0, sizeof o);
    o.page_size = 10;
    cr_assert_neq(run("SELECT * FROM t WHERE k IN (1, 2) ORDER BY c DESC", &o, NULL, 0), 0);
    cr_assert(strstr(g_err.msg, "Cannot page queries with both ORDER BY and a IN restriction"));
    /* ... only on SelectStatement's paging path: not when LIMIT fits in a page */
    cr_assert_eq(run("SELECT k, c FROM t WHERE k IN (1, 2) ORDER BY c DESC LIMIT 3", &o, NULL, 0), 0);
    cr_assert_eq(run("SELECT k, c FROM t WHERE k IN (1, 2) ORDER BY c DESC LIMIT 10", &o, NULL, 0), 0);
    cr_assert_neq(run("SELECT k, c FROM t WHERE k IN (1, 2) ORDER BY c DESC LIMIT 11", &o, NULL, 0), 0);
    cr_assert_neq(run("SELECT count(*) FROM t WHERE k IN (1, 2) ORDER BY c DESC LIMIT 3", &o, NULL, 0), 0);
    cr_assert_neq(run("SELECT * FROM t WHERE k IN (1) ORDER BY c DESC", &o, NULL, 0), 0);   /* keyIsInRelation */
    rows("SELECT k, c FROM t WHERE k IN (1, 2) AND c > 2 ORDER BY c DESC", "1|4\n2|4\n1|3\n2|3\n");
}

/* Paging resumes by key, not by position: rows inserted behind the cursor
 * are not seen, rows inserted ahead are, and deleting the last returned row
 * or partition does not lose the place (the seed article's scenario). */
Test(exec_paging, paging_while_writing)
{
    mkks();
    fill_kcv();
    static char page[8192];
    ropts o;
    memset(&o, 0, sizeof o);
    o.page_size = 3;
    uint8_t st[512];
    /* single partition */
    cr_assert_eq(run("SELECT c FROM t WHERE k = 1", &o, page, sizeof page), 0);
    cr_assert_str_eq(body_of(page), "0\n1\n2\n");
    memcpy(st, g_ps, (size_t)g_ps_len);
    o.ps = st;
    o.ps_len = g_ps_len;
    ok("INSERT INTO t (k, c, v) VALUES (1, -1, 0)");   /* behind the cursor */
    ok("INSERT INTO t (k, c, v) VALUES (1, 7, 0)");    /* ahead */
    ok("DELETE FROM t WHERE k = 1 AND c = 2");          /* the last returned row */
    cr_assert_eq(run("SELECT c FROM t WHERE k = 1", &o, page, sizeof page), 0);
    cr_assert_str_eq(body_of(page), "3\n4\n7\n");
    cr_assert_eq(g_ps_len, -1);
    /* range scan: delete the partition of the last returned row */
    memset(&o, 0, sizeof o);
    o.page_size = 2;
    cr_assert_eq(run("SELECT k, c FROM t", &o, page, sizeof page), 0);
    cr_assert_str_eq(body_of(page), "1|-1\n1|0\n");
    memcpy(st, g_ps, (size_t)g_ps_len);
    o.ps = st;
    o.ps_len = g_ps_len;
    ok("DELETE FROM t WHERE k = 1");
    cr_assert_eq(run("SELECT k, c FROM t", &o, page, sizeof page), 0);
    cr_assert_str_eq(body_of(page), "0|0\n0|1\n");
}

/* Tombstone budget of paged reads (select_scan.c): with
 * tombstone_failure_threshold 300 the soft budget is 150 and the hard one
 * 270, so pages over runs of deleted rows / partitions end early, and the
 * pages still concatenate to the unpaged result (which scans < 300). */
Test(exec_paging, tombstone_budget_short_pages)
{
    mkks();
    g_ctx->cfg.tombstone_failure_threshold = 300;
    g_ctx->cfg.tombstone_warn_threshold = 0;
    ok("CREATE TABLE d (k int, c int, v int, st int static, PRIMARY KEY (k, c))");
    char q[200];
    for (int c = 0; c < 250; c++) {
        bool live = c == 0 || c == 3 || c == 100 || c == 180 || c == 181 || c == 249;
        if (live)
            snprintf(q, sizeof q, "INSERT INTO d (k, c, v) VALUES (1, %d, %d)", c, c);
        else
            snprintf(q, sizeof q, "DELETE FROM d WHERE k = 1 AND c = %d", c);
        ok(q);
    }
    ok("UPDATE d SET st = 7 WHERE k = 1");
    for (int k = 2; k < 30; k++) {
        snprintf(q, sizeof q, "INSERT INTO d (k, c, v) VALUES (%d, 1, 1)", k);
        ok(q);
        snprintf(q, sizeof q, "DELETE FROM d WHERE k = %d", k);
        ok(q);
    }
    ok("INSERT INTO d (k, c, v) VALUES (31, 0, 31)");
    ok("INSERT INTO d (k, c, v) VALUES (32, 0, 32)");
    const char *qs[] = {
        "SELECT * FROM d WHERE k = 1",
        "SELECT k, c, v FROM d WHERE k = 1 ORDER BY c DESC",
        "SELECT * FROM d WHERE k = 1 AND c > 0 AND c < 249",
        "SELECT * FROM d WHERE k IN (1, 31)",
        "SELECT * FROM d",
        "SELECT * FROM d PER PARTITION LIMIT 4",
        "SELECT * FROM d LIMIT 5",
        "SELECT * FROM d WHERE v >= 0 ALLOW FILTERING",
        "SELECT DISTINCT k FROM d",
    };
    for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++)
        for (int ps = 1; ps <= 4; ps++)
            paged_equals(qs[i], ps);
    /* 6 rows with page size 100: cut by the soft budget into >= 2 pages */
    cr_assert_geq(paged_equals("SELECT c FROM d WHERE k = 1", 100), 2);
    cr_assert_geq(paged_equals("SELECT c FROM d WHERE k = 1 ORDER BY c DESC", 100), 2);
    /* the same after a flush (sstable windows) */
    cs_error fe;
    cs_error_init(&fe);
    const char *tb[] = { "d" };
    cr_assert_eq(cql_admin_flush(g_ctx, "ks", tb, 1, &fe), 0, "%s", fe.msg);
    for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++)
        paged_equals(qs[i], 3);
    cr_assert_geq(paged_equals("SELECT c FROM d WHERE k = 1", 100), 2);
    /* unpaged past the threshold still fails */
    g_ctx->cfg.tombstone_failure_threshold = 200;
    cr_assert_neq(run("SELECT * FROM d WHERE k = 1", NULL, NULL, 0), 0);
    cr_assert_eq(g_err.code, CS_ERR_READ_FAILURE);
    /* ... and paged does not (soft 100, hard 180): every live row once */
    static char page[65536], acc[65536];
    uint8_t state[4096];
    int32_t slen = -1;
    int pages = 0;
    acc[0] = 0;
    for (;;) {
        ropts o;
        memset(&o, 0, sizeof o);
        o.page_size = 50;
        o.ps = slen >= 0 ? state : NULL;
        o.ps_len = slen;
        cr_assert_eq(run("SELECT c FROM d", &o, page, sizeof page), 0, "page %d -> %s", pages, g_err.msg);
        strncat(acc, body_of(page), sizeof acc - strlen(acc) - 1);
        pages++;
        if (g_ps_len < 0)
            break;
        memcpy(state, g_ps, (size_t)g_ps_len);
        slen = g_ps_len;
        cr_assert_lt(pages, 100);
    }
    g_ctx->cfg.tombstone_failure_threshold = 300;
    char all[65536];
    cr_assert_eq(run("SELECT c FROM d", NULL, all, sizeof all), 0);
    cr_assert_str_eq(acc, body_of(all));
    cr_assert_geq(pages, 2);
}
