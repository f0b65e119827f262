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
