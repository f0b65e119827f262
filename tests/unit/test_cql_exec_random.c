/*
 * test_cql_exec_random.c: randomized SELECTs: a model-based test (slices, IN, ORDER BY,
 * limits, paging over memtable + sstable data) and random query shapes that
 * must answer or fail with a message, never crash.
 * Through cql_query / cql_prepare / cql_execute on a real engine in a temp
 * dir; results checked by decoding the RESULT body (test_cql_exec_harness.h).
 */
#include "test_cql_exec_harness.h"

TestSuite(exec_random, .init = setup, .fini = teardown, .timeout = 120);

/* ---------------------------------------------------------------- model-based random queries */

typedef struct mrow { int k, c1, c2; } mrow;
static int64_t g_tok[8];

static int mrow_cmp_token(const mrow *a, const mrow *b, bool by_value, bool rev)
{
    if (a->k != b->k) {
        if (by_value)
            return a->k < b->k ? -1 : 1;
        return g_tok[a->k] < g_tok[b->k] ? -1 : 1;
    }
    int c = a->c1 != b->c1 ? (a->c1 < b->c1 ? -1 : 1) : a->c2 != b->c2 ? (a->c2 > b->c2 ? -1 : 1) : 0;
    return rev ? -c : c;
}

Test(exec_random, random_queries_against_model)
{
    mkks();
    ok("CREATE TABLE r (k int, c1 int, c2 int, v int, PRIMARY KEY (k, c1, c2)) WITH CLUSTERING ORDER BY (c1 ASC, c2 DESC)");
    bool present[4][4][4];
    unsigned seed = (unsigned)time(NULL);
    srand(seed);
    for (int k = 0; k < 4; k++) {
        uint8_t kb[4];
        cs_st32(kb, (uint32_t)k);
        g_tok[k] = cs_murmur3_token(kb, 4);
        for (int a = 0; a < 4; a++)
            for (int b = 0; b < 4; b++) {
                present[k][a][b] = rand() % 3 != 0;
                if (present[k][a][b]) {
                    char q[200];
                    snprintf(q, sizeof q, "INSERT INTO r (k, c1, c2, v) VALUES (%d, %d, %d, 0)", k, a, b);
                    ok(q);
                }
            }
        if (k == 1) {   /* half the data in an sstable */
            const char *tb[1] = { "r" };
            cs_error fe;
            cs_error_init(&fe);
            cr_assert_eq(cql_admin_flush(g_ctx, "ks", tb, 1, &fe), 0, "%s", fe.msg);
        }
    }
    ok("DELETE FROM r WHERE k = 2 AND c1 = 1");   /* a range tombstone too */
    for (int a = 0; a < 4; a++)
        present[2][1][a] = false;
    static char want[65536], got[65536];
    for (int iter = 0; iter < 300; iter++) {
        char q[512];
        size_t ql = 0;
        int kmode = rand() % 3;                 /* 0 none, 1 =, 2 IN */
        int kv = rand() % 4, kin[3] = { rand() % 4, rand() % 4, rand() % 4 };
        int c1mode = kmode ? rand() % 4 : 0;    /* 0 none, 1 =, 2 IN, 3 slice */
        int c1v = rand() % 4, c1in[2] = { rand() % 4, rand() % 4 };
        int lo = rand() % 5 - 1, hi = rand() % 5;   /* -1: unbounded */
        int c2mode = (c1mode == 1 || c1mode == 2) ? rand() % 2 : 0;
        int c2lo = rand() % 5 - 1;
        bool rev = kmode && rand() % 2;
        int limit = rand() % 3 ? 0 : 1 + rand() % 8;
        int ppl = rand() % 3 ? 0 : 1 + rand() % 3;
        ql += (size_t)snprintf(q + ql, sizeof q - ql, "SELECT k, c1, c2 FROM r");
        const char *sep = " WHERE ";
        if (kmode == 1) { ql += (size_t)snprintf(q + ql, sizeof q - ql, "%sk = %d", sep, kv); sep = " AND "; }
        if (kmode == 2) { ql += (size_t)snprintf(q + ql, sizeof q - ql, "%sk IN (%d, %d, %d)", sep, kin[0], kin[1], kin[2]); sep = " AND "; }
        if (c1mode == 1) ql += (size_t)snprintf(q + ql, sizeof q - ql, "%sc1 = %d", sep, c1v);
        if (c1mode == 2) ql += (size_t)snprintf(q + ql, sizeof q - ql, "%sc1 IN (%d, %d)", sep, c1in[0], c1in[1]);
        if (c1mode == 3) {
            if (lo >= 0) ql += (size_t)snprintf(q + ql, sizeof q - ql, "%sc1 >= %d", sep, lo), sep = " AND ";
            if (hi < 4) ql += (size_t)snprintf(q + ql, sizeof q - ql, "%sc1 < %d", sep, hi);
        }
        if (c2mode && c2lo >= 0) ql += (size_t)snprintf(q + ql, sizeof q - ql, " AND c2 > %d", c2lo);
        /* paged, ORDER BY with any IN on the key is refused (keyIsInRelation) */
        bool in_pk = kmode == 2;
        if (rev && !in_pk) ql += (size_t)snprintf(q + ql, sizeof q - ql, " ORDER BY c1 DESC");
        else rev = false;
        if (ppl) ql += (size_t)snprintf(q + ql, sizeof q - ql, " PER PARTITION LIMIT %d", ppl);
        if (limit) ql += (size_t)snprintf(q + ql, sizeof q - ql, " LIMIT %d", limit);
        /* model */
        mrow rs[64];
        int n = 0;
        for (int k = 0; k < 4; k++) {
            if (kmode == 1 && k != kv) continue;
            if (kmode == 2 && k != kin[0] && k != kin[1] && k != kin[2]) continue;
            for (int a = 0; a < 4; a++) {
                if (c1mode == 1 && a != c1v) continue;
                if (c1mode == 2 && a != c1in[0] && a != c1in[1]) continue;
                if (c1mode == 3 && ((lo >= 0 && a < lo) || (hi < 4 && a >= hi))) continue;
                for (int b = 0; b < 4; b++) {
                    if (c2mode && c2lo >= 0 && b <= c2lo) continue;
                    if (present[k][a][b]) rs[n++] = (mrow){ k, a, b };
                }
            }
        }
        bool by_value = kmode != 0;
        for (int i = 1; i < n; i++)      /* insertion sort */
            for (int j = i; j > 0 && mrow_cmp_token(&rs[j - 1], &rs[j], by_value, rev) > 0; j--) {
                mrow t = rs[j]; rs[j] = rs[j - 1]; rs[j - 1] = t;
            }
        size_t wl = 0;
        int emitted = 0, pk = -1, pe = 0;
        want[0] = 0;
        for (int i = 0; i < n; i++) {
            if (rs[i].k != pk) { pk = rs[i].k; pe = 0; }
            if (ppl && pe >= ppl) continue;
            if (limit && emitted >= limit) break;
            pe++;
            emitted++;
            wl += (size_t)snprintf(want + wl, sizeof want - wl, "%d|%d|%d\n", rs[i].k, rs[i].c1, rs[i].c2);
        }
        int rc = run(q, NULL, got, sizeof got);
        cr_assert_eq(rc, 0, "seed %u: %s -> %s", seed, q, g_err.msg);
        cr_assert_str_eq(body_of(got), want, "seed %u: %s\ngot:\n%swant:\n%s", seed, q, body_of(got), want);
        paged_equals(q, 1 + rand() % 4);
    }
}

/* Random (mostly invalid) SELECTs over a table with every kind of column:
 * each one either answers or fails with a message; nothing crashes. */
Test(exec_random, random_select_shapes_never_crash)
{
    mkks();
    ok("CREATE TABLE z (a int, b text, c int, d timeuuid, s int static, v int, l list<int>, m map<text, int>, "
       "fz frozen<set<int>>, PRIMARY KEY ((a, b), c, d)) WITH CLUSTERING ORDER BY (c DESC, d ASC)");
    ok("CREATE INDEX ON z (v)");
    for (int i = 0; i < 20; i++) {
        char q[300];
        snprintf(q, sizeof q, "INSERT INTO z (a, b, c, d, s, v, l, m, fz) VALUES (%d, '%c', %d, now(), %d, %d, [%d], {'k%d': %d}, {%d})",
                 i % 3, 'x' + i % 2, i % 5, i, i % 4, i, i, i, i);
        ok(q);
    }
    static const char *sels[] = { "*", "a, b", "count(*)", "DISTINCT a, b", "DISTINCT a, b, s", "JSON *", "max(c), min(d)",
        "writetime(v), ttl(s)", "token(a, b)", "m['k1'], l", "CAST(c AS text)", "sum(v), avg(v)", "c + 1, -v",
        "toJson(fz), dateOf(d)", "a AS x, x", "ttl(a)", "v[0]", "count(v), b" };
    static const char *wh[] = { "", "a = 1", "a = 1 AND b = 'x'", "a IN (0, 1) AND b IN ('x', 'y')", "c > 1",
        "a = 1 AND b = 'y' AND c > 1 AND c <= 3", "a = 0 AND b = 'x' AND (c, d) > (1, now())", "v = 3",
        "v > 3", "l CONTAINS 2", "m CONTAINS KEY 'k3'", "m['k4'] = 4", "token(a, b) > 0", "token(a) > 0",
        "a = 1 AND b = 'x' AND c IN (1, 2) AND d > minTimeuuid('2020-01-01')", "fz = {3}", "s = 1",
        "a = 1 AND b = 'x' AND c = 1 AND c = 2", "b = 'x'", "d < now()", "c IN ()" };
    static const char *tail[] = { "", " LIMIT 3", " PER PARTITION LIMIT 1", " ORDER BY c ASC", " ORDER BY c DESC, d DESC",
        " GROUP BY a, b", " GROUP BY a, b, c LIMIT 2", " ALLOW FILTERING", " LIMIT 2 ALLOW FILTERING",
        " ORDER BY d ASC", " GROUP BY c" };
    srand(7);
    static char out[65536];
    for (int i = 0; i < 1500; i++) {
        char q[600];
        const char *w = wh[rand() % (int)(sizeof wh / sizeof wh[0])];
        snprintf(q, sizeof q, "SELECT %s FROM z%s%s%s", sels[rand() % (int)(sizeof sels / sizeof sels[0])],
                 *w ? " WHERE " : "", w, tail[rand() % (int)(sizeof tail / sizeof tail[0])]);
        ropts o;
        memset(&o, 0, sizeof o);
        o.page_size = rand() % 2 ? 0 : 1 + rand() % 5;
        int rc = run(q, &o, out, sizeof out);
        cr_assert(rc == 0 || (g_err.code >= 0 && g_err.msg[0]), "%s: rc %d without a message", q, rc);
        if (rc == 0 && o.page_size > 0 && g_ps_len > 0) {
            uint8_t st[4096];
            memcpy(st, g_ps, (size_t)g_ps_len);
            o.ps = st;
            o.ps_len = g_ps_len;
            rc = run(q, &o, out, sizeof out);
            cr_assert(rc == 0, "%s: second page failed: %s", q, g_err.msg);
        }
    }
}
