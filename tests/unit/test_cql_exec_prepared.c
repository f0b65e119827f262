/*
 * test_cql_exec_prepared.c: PREPARE / EXECUTE: ids, bind metadata and receivers, pk_indexes,
 * named values, skip_metadata, UNPREPARED, bound value checks, and
 * allocation failures through SELECT / PREPARE / EXECUTE.
 * Through cql_query / cql_prepare / cql_execute on a real engine in a temp
 * dir; results checked by decoding the RESULT body (test_cql_exec_harness.h).
 */
#include "test_cql_exec_harness.h"
#include "cql/exec_int.h"   /* cql__prepared_find, cql_stmt_memo: is the memo in use */

TestSuite(exec_prepared, .init = setup, .fini = teardown, .timeout = 120);

Test(exec_prepared, prepared_statements)
{
    mkks();
    fill_kcv();
    uint8_t id[16], id2[16];
    char meta[1024];
    prepare("SELECT c, v FROM t WHERE k = ? AND c > ? LIMIT ?", id, meta, sizeof meta);
    cr_assert_str_eq(meta, "pk:0, binds:k:int,c:int,[limit]:int, result:1/2");
    uint8_t b1[4], b2[4], b3[4];
    cql_value vals[3] = { ival(b1, 2), ival(b2, 1), ival(b3, 2) };
    ropts o;
    memset(&o, 0, sizeof o);
    o.id = id;
    o.vals = vals;
    o.n_vals = 3;
    static char out[8192];
    cr_assert_eq(run(NULL, &o, out, sizeof out), 0, "%s", g_err.msg);
    cr_assert_str_eq(out, "c|v\n2|22\n3|23\n");
    o.skip_metadata = true;
    cr_assert_eq(run(NULL, &o, out, sizeof out), 0, "%s", g_err.msg);
    cr_assert(g_flags & 4, "NO_METADATA");
    o.skip_metadata = false;
    /* paging through EXECUTE */
    vals[2] = ival(b3, 100);
    o.page_size = 2;
    cr_assert_eq(run(NULL, &o, out, sizeof out), 0);
    cr_assert_str_eq(out, "c|v\n2|22\n3|23\n");
    cr_assert(g_ps_len > 0);
    o.ps = g_ps;
    o.ps_len = g_ps_len;
    cr_assert_eq(run(NULL, &o, out, sizeof out), 0);
    cr_assert_str_eq(out, "c|v\n4|24\n");
    cr_assert_eq(g_ps_len, -1);
    /* wrong count, unset, null */
    memset(&o, 0, sizeof o);
    o.id = id;
    o.vals = vals;
    o.n_vals = 2;
    cr_assert_neq(run(NULL, &o, NULL, 0), 0);
    cr_assert_str_eq(g_err.msg, "Invalid amount of bind variables: expected 3, received 2");
    o.n_vals = 3;
    vals[0].len = CQL_UNSET;
    cr_assert_neq(run(NULL, &o, NULL, 0), 0);
    cr_assert_str_eq(g_err.msg, "Invalid unset value for column k");
    vals[0].len = CQL_NULL;
    cr_assert_neq(run(NULL, &o, NULL, 0), 0);
    cr_assert_str_eq(g_err.msg, "Invalid null value in condition for column k");
    vals[0] = ival(b1, 2);
    vals[1].len = 3;
    cr_assert_neq(run(NULL, &o, NULL, 0), 0);
    /* unknown id */
    uint8_t bad[16] = {1, 2, 3};
    o.id = bad;
    cr_assert_neq(run(NULL, &o, NULL, 0), 0);
    cr_assert_eq(g_err.code, CS_ERR_UNPREPARED);
    cr_assert_eq(g_err.unprepared_id_len, 16);
    cr_assert(!memcmp(g_err.unprepared_id, bad, 16));
    /* same text, same id; qualified text under no keyspace */
    prepare("SELECT c, v FROM t WHERE k = ? AND c > ? LIMIT ?", id2, meta, sizeof meta);
    cr_assert(!memcmp(id, id2, 16));
    prepare("INSERT INTO t (k, c, v) VALUES (?, ?, ?) USING TTL ?", id2, meta, sizeof meta);
    cr_assert_str_eq(meta, "pk:0, binds:k:int,c:int,v:int,[ttl]:int, result:4/0");
    prepare("SELECT * FROM t WHERE k IN ? AND token(k) > ?", id2, meta, sizeof meta);
    cr_assert_str_eq(meta, "pk: binds:in(k):list<int>,partition key token:bigint, result:1/3");
    prepare("SELECT * FROM t WHERE k = :key AND c = :cc", id2, meta, sizeof meta);
    cr_assert_str_eq(meta, "pk:0, binds:key:int,cc:int, result:1/3");
    /* bound frozen sets are normalized before keying */
    ok("CREATE TABLE fz (k frozen<set<int>> PRIMARY KEY, v int)");
    ok("INSERT INTO fz (k, v) VALUES ({1, 2, 3}, 7)");
    prepare("SELECT v FROM fz WHERE k = ?", id2, meta, sizeof meta);
    uint8_t setv[4 + 3 * 8];
    cs_st32(setv, 3);
    int order[3] = { 3, 1, 2 };
    for (int i = 0; i < 3; i++) {
        cs_st32(setv + 4 + 8 * i, 4);
        cs_st32(setv + 8 + 8 * i, (uint32_t)order[i]);
    }
    cql_value sv = { setv, (int32_t)sizeof setv };
    memset(&o, 0, sizeof o);
    o.id = id2;
    o.vals = &sv;
    o.n_vals = 1;
    cr_assert_eq(run(NULL, &o, out, sizeof out), 0, "%s", g_err.msg);
    cr_assert_str_eq(body_of(out), "7\n");
    prepare("SELECT * FROM t WHERE k = :key AND c = :cc", id2, meta, sizeof meta);
    /* named values */
    const char *names[2] = { "cc", "key" };
    size_t nlens[2] = { 2, 3 };
    cql_value nv[2] = { ival(b1, 4), ival(b2, 3) };
    memset(&o, 0, sizeof o);
    o.id = id2;
    o.vals = nv;
    o.n_vals = 2;
    o.names = names;
    o.name_lens = nlens;
    cr_assert_eq(run(NULL, &o, out, sizeof out), 0, "%s", g_err.msg);
    cr_assert_str_eq(body_of(out), "3|4|34\n");
    /* receivers of DML markers */
    ok("CREATE TABLE col (k int, c int, l list<int>, s set<text>, m map<text, int>, PRIMARY KEY (k, c))");
    prepare("UPDATE col USING TTL ? AND TIMESTAMP ? SET m[?] = ?, l[?] = ?, s = s + ? WHERE k = ? AND c IN ?", id2, meta, sizeof meta);
    cr_assert_str_eq(meta, "pk:7, binds:[ttl]:int,[timestamp]:bigint,key(m):text,value(m):int,idx(l):int,value(l):int,s:set<text>,k:int,in(c):list<int>, result:4/0");
    prepare("UPDATE col SET m = m - ? WHERE k = ? AND c = ? IF l = ?", id2, meta, sizeof meta);
    cr_assert_str_eq(meta, "pk:1, binds:m:set<text>,k:int,c:int,l:list<int>, result:4/0");
    prepare("DELETE m[?] FROM col WHERE k = ? AND c = ?", id2, meta, sizeof meta);
    cr_assert_str_eq(meta, "pk:1, binds:key(m):text,k:int,c:int, result:4/0");
    prepare("SELECT k FROM col WHERE m CONTAINS ? AND m CONTAINS KEY ? AND l CONTAINS ? AND m[?] = ? ALLOW FILTERING", id2, meta, sizeof meta);
    cr_assert_str_eq(meta, "pk: binds:value(m):int,key(m):text,value(l):int,key(m):text,value(m):int, result:1/1");
    ok("CREATE TABLE m2 (k int, a int, b int, PRIMARY KEY (k, a, b))");
    prepare("SELECT k FROM m2 WHERE k = 0 AND (a, b) > ? AND (a, b) < (?, ?)", id2, meta, sizeof meta);
    cr_assert_str_eq(meta, "pk: binds:(a,b):frozen<tuple<int, int>>,a:int,b:int, result:1/1");
    prepare("SELECT k FROM m2 WHERE k = 0 AND (a, b) IN ((?, ?), (1, ?))", id2, meta, sizeof meta);
    cr_assert_str_eq(meta, "pk: binds:a:int,b:int,b:int, result:1/1");
    prepare("SELECT k FROM m2 WHERE k = 0 AND (a, b) IN ?", id2, meta, sizeof meta);
    cr_assert_str_eq(meta, "pk: binds:in((a,b)):list<frozen<tuple<int, int>>>, result:1/1");
    prepare("BEGIN BATCH INSERT INTO col (k, c) VALUES (?, ?); DELETE FROM col WHERE k = ? AND c = ? APPLY BATCH", id2, meta, sizeof meta);
    cr_assert_str_eq(meta, "pk: binds:k:int,c:int,k:int,c:int, result:4/0");
    /* ALTER TABLE invalidates the table's prepared statements (UNPREPARED,
     * then a new PREPARE returns the new result metadata) */
    uint8_t sid[16];
    prepare("SELECT * FROM m2 WHERE k = 0", sid, meta, sizeof meta);
    cr_assert_str_eq(meta, "pk: binds: result:1/3");
    memset(&o, 0, sizeof o);
    o.id = sid;
    cr_assert_eq(run(NULL, &o, out, sizeof out), 0, "%s", g_err.msg);
    ok("ALTER TABLE m2 ADD x int");
    cr_assert_neq(run(NULL, &o, out, sizeof out), 0);
    cr_assert_eq(g_err.code, CS_ERR_UNPREPARED);
    prepare("SELECT * FROM m2 WHERE k = 0", sid, meta, sizeof meta);
    cr_assert_str_eq(meta, "pk: binds: result:1/4");
    cr_assert_eq(run(NULL, &o, out, sizeof out), 0, "%s", g_err.msg);
    /* statements on other tables survive; DROP KEYSPACE evicts them all */
    o.id = id;
    o.vals = vals;
    o.n_vals = 3;
    vals[0] = ival(b1, 2);
    vals[1] = ival(b2, 1);
    vals[2] = ival(b3, 2);
    cr_assert_eq(run(NULL, &o, out, sizeof out), 0, "%s", g_err.msg);
    /* prepare refusals */
    cql_result r;
    cql_result_init(&r);
    cs_error_init(&g_err);
    cr_assert_neq(cql_prepare(g_ctx, &g_sess, "SELECT x FROM t", 15, NULL, &r, &g_err), 0);
    cr_assert_str_eq(g_err.msg, "Undefined column name x in table ks.t");
    cql_result_destroy(&r);
}

/* Fail the Nth allocation of a SELECT for N = 1, 2, ...: every run either
 * succeeds or reports an error; nothing crashes or leaks. */
Test(exec_prepared, allocation_failures)
{
    mkks();
    ok("CREATE TABLE o (k int, c int, v text, m map<text, int>, s int static, PRIMARY KEY (k, c))");
    ok("INSERT INTO o (k, c, v, m, s) VALUES (1, 1, 'a', {'x': 1}, 3)");
    ok("INSERT INTO o (k, c, v, m) VALUES (1, 2, 'b', {'y': 2})");
    ok("INSERT INTO o (k, c, v) VALUES (2, 1, 'c')");
    const char *qs[] = {
        "SELECT * FROM o WHERE k IN (1, 2) AND c > 0",
        "SELECT k, count(*), max(v) FROM o GROUP BY k",
        "SELECT JSON * FROM o",
        "SELECT k, c, writetime(v), m['x'] FROM o WHERE v = 'b' ALLOW FILTERING",
        "SELECT DISTINCT k, s FROM o",
        "SELECT * FROM system_virtual_schema.columns WHERE keyspace_name = 'system_views'",
        "SELECT c, toJson(m), CAST(c AS text), c + 1 FROM o WHERE k = 1 AND c IN (1, 2)",
    };
    static char out[8192];
    for (size_t q = 0; q < sizeof qs / sizeof qs[0]; q++) {
        /* warm the statement cache so the parse is not what fails */
        cr_assert_eq(run(qs[q], NULL, out, sizeof out), 0, "%s", g_err.msg);
        int successes = 0;
        for (long n = 1; n < 400 && successes < 3; n++) {
            ropts o;
            memset(&o, 0, sizeof o);
            o.page_size = 1;
            cs_alloc_fail_nth(n);
            int rc = run(qs[q], &o, out, sizeof out);
            cs_alloc_fail_nth(0);
            if (rc == 0)
                successes++;
            else
                cr_assert(g_err.code >= 0, "%s: n=%ld rc=%d: error without a message", qs[q], n, rc);
        }
        cr_assert(successes > 0, "%s never succeeded", qs[q]);
    }
    /* PREPARE and EXECUTE with a paging state */
    const char *pq = "SELECT c, v FROM o WHERE k = ? AND c >= ?";
    int successes = 0;
    for (long n = 1; n < 400 && successes < 3; n++) {
        cql_result r;
        cql_result_init(&r);
        cs_error_init(&g_err);
        cs_alloc_fail_nth(n);
        int rc = cql_prepare(g_ctx, &g_sess, pq, strlen(pq), NULL, &r, &g_err);
        cs_alloc_fail_nth(0);
        if (rc == 0)
            successes++;
        else
            cr_assert(g_err.code >= 0, "prepare n=%ld: no message", n);
        cql_result_destroy(&r);
    }
    uint8_t id[16];
    char meta[512];
    prepare(pq, id, meta, sizeof meta);
    uint8_t b1[4], b2[4];
    cql_value vals[2] = { ival(b1, 1), ival(b2, 0) };
    ropts o;
    memset(&o, 0, sizeof o);
    o.id = id;
    o.vals = vals;
    o.n_vals = 2;
    o.page_size = 1;
    cr_assert_eq(run(NULL, &o, out, sizeof out), 0, "%s", g_err.msg);
    uint8_t st[256];
    int32_t sl = g_ps_len;
    cr_assert(sl > 0 && sl < (int32_t)sizeof st);
    memcpy(st, g_ps, (size_t)sl);
    o.ps = st;
    o.ps_len = sl;
    successes = 0;
    for (long n = 1; n < 400 && successes < 3; n++) {
        cs_alloc_fail_nth(n);
        int rc = run(NULL, &o, out, sizeof out);
        cs_alloc_fail_nth(0);
        if (rc == 0) {
            successes++;
            cr_assert_str_eq(body_of(out), "2|'b'\n", "n=%ld full=[%s]", n, out);
        } else
            cr_assert(g_err.code >= 0, "execute n=%ld: no message", n);
    }
}

Test(exec_prepared, drop_keyspace_unprepares)
{
    mkks();
    fill_kcv();
    uint8_t id[16];
    char meta[512];
    prepare("SELECT * FROM t WHERE k = 1", id, meta, sizeof meta);
    ropts o;
    memset(&o, 0, sizeof o);
    o.id = id;
    cr_assert_eq(run(NULL, &o, NULL, 0), 0, "%s", g_err.msg);
    ok("DROP KEYSPACE ks");
    cr_assert_neq(run(NULL, &o, NULL, 0), 0);
    cr_assert_eq(g_err.code, CS_ERR_UNPREPARED);
}

/* Per-statement memos (the column list of SELECT, the reusable mutation of
 * writes) across repeated executions and DDL: a dropped, re-added or
 * shifted column is never served from a stale memo. */
Test(exec_prepared, memos_across_ddl)
{
    mkks();
    ok("CREATE TABLE sm (k int PRIMARY KEY, a int, b int, s int)");
    uint8_t id[16], b1[4], b2[4];
    char meta[1024];
    prepare("INSERT INTO sm (k, a, b) VALUES (?, 1, ?)", id, meta, sizeof meta);
    cql_value vals[2] = { ival(b1, 1), ival(b2, 2) };
    ropts o;
    memset(&o, 0, sizeof o);
    o.id = id;
    o.vals = vals;
    o.n_vals = 2;
    static char out[8192];
    for (int i = 0; i < 3; i++) {
        vals[0] = ival(b1, i);
        vals[1] = ival(b2, 10 + i);
        cr_assert_eq(run(NULL, &o, out, sizeof out), 0, "%s", g_err.msg);
    }
    vals[0].len = CQL_NULL;   /* an error between writes leaves nothing behind */
    cr_assert_neq(run(NULL, &o, NULL, 0), 0);
    vals[0] = ival(b1, 3);
    cr_assert_eq(run(NULL, &o, out, sizeof out), 0, "%s", g_err.msg);
    for (int i = 0; i < 2; i++) {
        rows("SELECT b, a FROM sm WHERE k = 1", "11|1\n");
        rows("SELECT k, b FROM sm WHERE k = 3", "3|12\n");
        rows("SELECT b AS x, a FROM sm WHERE k = 2", "12|1\n");
    }
    uint8_t sid[16];
    prepare("SELECT b, s FROM sm WHERE k = ?", sid, meta, sizeof meta);
    memset(&o, 0, sizeof o);
    o.id = sid;
    o.vals = vals;
    o.n_vals = 1;
    vals[0] = ival(b1, 2);
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(run(NULL, &o, out, sizeof out), 0, "%s", g_err.msg);
        cr_assert_str_eq(out, "b|s\n12|null\n");
    }
    ok("ALTER TABLE sm DROP a");
    cr_assert_neq(run(NULL, &o, NULL, 0), 0);   /* DDL: UNPREPARED, as before */
    rows("SELECT b, s FROM sm WHERE k = 2", "12|null\n");
    fails("SELECT b, a FROM sm WHERE k = 1", "Undefined column name a");
    ok("ALTER TABLE sm ADD a int");
    rows("SELECT b, a FROM sm WHERE k = 1", "11|null\n");
    ok("INSERT INTO sm (k, a) VALUES (1, 7)");
    rows("SELECT b, a FROM sm WHERE k = 1", "11|7\n");
    prepare("SELECT b, s FROM sm WHERE k = ?", sid, meta, sizeof meta);
    cr_assert_eq(run(NULL, &o, out, sizeof out), 0, "%s", g_err.msg);
    cr_assert_str_eq(out, "b|s\n12|null\n");
}

/* ---- the write plan / point WHERE memo (cql_stmt_memo, exec_int.h) ---- */

static int exec_id(const uint8_t *id, cql_value *vals, int n)
{
    ropts o;
    memset(&o, 0, sizeof o);
    o.id = id;
    o.vals = vals;
    o.n_vals = n;
    return run(NULL, &o, NULL, 0);
}

/* Is the prepared statement id served from a point memo (the fast path)? */
static bool memo_point(const uint8_t *id)
{
    cql_prepared *p = cql__prepared_find(g_ctx, id, 16);
    cr_assert(p != NULL);
    const cql_stmt_memo *m = p->stmt->exec_memo;
    return m && m->point;
}

/* The memoized statement id fails with vals exactly as a first execution
 * (the general analysis, no memo yet) of the same text does; and with want
 * when given. */
static void same_error(const char *q, const uint8_t *id, cql_value *vals, int n, const char *want)
{
    static int fresh;
    char q2[512], general[sizeof g_err.msg], meta[1024];
    snprintf(q2, sizeof q2, "%s%*s", q, ++fresh, "");
    uint8_t id2[16];
    prepare(q2, id2, meta, sizeof meta);
    cr_assert_neq(exec_id(id2, vals, n), 0, "%s should fail", q);
    snprintf(general, sizeof general, "%s", g_err.msg);
    int code = g_err.code;
    cr_assert(memo_point(id), "%s: not memoized", q);
    cr_assert_neq(exec_id(id, vals, n), 0, "%s should fail", q);
    cr_assert_str_eq(g_err.msg, general, "%s", q);
    cr_assert_eq(g_err.code, code, "%s", q);
    if (want)
        cr_assert_str_eq(g_err.msg, want, "%s: [%s]", q, g_err.msg);
}

static cql_value tval(const char *s) { return (cql_value){ (const uint8_t *)s, (int32_t)strlen(s) }; }
static cql_value bval(uint8_t *buf, int64_t v)
{
    cs_st64(buf, (uint64_t)v);
    return (cql_value){ buf, 8 };
}

/* Prepared INSERT / UPDATE / DELETE / point SELECT: repeated executions with
 * other values, bad values (the general analysis's errors, in its order),
 * unset and null values, bound TTL and TIMESTAMP. */
Test(exec_prepared, point_memo_values)
{
    mkks();
    ok("CREATE TABLE wm (k int, c int, v text, w int, s int static, PRIMARY KEY (k, c))");
    const char *ins = "INSERT INTO wm (k, c, v, w) VALUES (?, ?, ?, ?) USING TTL ? AND TIMESTAMP ?";
    uint8_t iid[16], b[6][8];
    char meta[1024];
    prepare(ins, iid, meta, sizeof meta);
    cql_value v[6];
    for (int i = 0; i < 4; i++) {
        char txt[16];
        snprintf(txt, sizeof txt, "v%d", i);
        v[0] = ival(b[0], i % 2);
        v[1] = ival(b[1], i);
        v[2] = tval(txt);
        v[3] = ival(b[3], 100 + i);
        v[4] = ival(b[4], i == 3 ? 1000 : 0);
        v[5] = bval(b[5], 5000 + i);
        cr_assert_eq(exec_id(iid, v, 6), 0, "%s", g_err.msg);
        cr_assert(memo_point(iid));
    }
    rows("SELECT k, c, v, w, writetime(v) FROM wm",
         "1|1|'v1'|101|5001\n1|3|'v3'|103|5003\n0|0|'v0'|100|5000\n0|2|'v2'|102|5002\n");
    static char out[1024];
    cr_assert_eq(run("SELECT ttl(v) FROM wm WHERE k = 1 AND c = 3", NULL, out, sizeof out), 0);
    int ttl = atoi(strchr(out, '\n') + 1);
    cr_assert(ttl > 990 && ttl <= 1000, "ttl %d", ttl);
    rows("SELECT ttl(v) FROM wm WHERE k = 1 AND c = 1", "null\n");
    /* unset: a value column is left alone, TTL and TIMESTAMP take their defaults */
    v[0] = ival(b[0], 0);
    v[1] = ival(b[1], 0);
    v[2] = tval("x");
    v[3].len = CQL_UNSET;
    v[4].len = CQL_UNSET;
    v[5].len = CQL_UNSET;
    cr_assert_eq(exec_id(iid, v, 6), 0, "%s", g_err.msg);
    rows("SELECT v, w FROM wm WHERE k = 0 AND c = 0", "'x'|100\n");
    v[4].len = CQL_NULL;   /* null TTL: none */
    v[3].len = CQL_NULL;   /* null value: deleted */
    cr_assert_eq(exec_id(iid, v, 6), 0, "%s", g_err.msg);
    rows("SELECT v, w, ttl(v) FROM wm WHERE k = 0 AND c = 0", "'x'|null|null\n");
    /* bad values, each against the general analysis of the same text */
    cql_value good[6] = { ival(b[0], 7), ival(b[1], 7), tval("y"), ival(b[3], 7), ival(b[4], 0), bval(b[5], 1) };
    memcpy(v, good, sizeof v);
    v[0].len = CQL_NULL;
    same_error(ins, iid, v, 6, "Invalid null value in condition for column k");
    v[0].len = CQL_UNSET;
    same_error(ins, iid, v, 6, "Invalid unset value for column k");
    memcpy(v, good, sizeof v);
    v[1].len = CQL_NULL;
    same_error(ins, iid, v, 6, "Invalid null value in condition for column c");
    v[1].len = 3;   /* wrong type */
    same_error(ins, iid, v, 6, NULL);
    memcpy(v, good, sizeof v);
    v[0].len = CQL_NULL;
    v[3].len = 2;   /* a value's error comes before a key's */
    same_error(ins, iid, v, 6, NULL);
    v[2] = (cql_value){ (const uint8_t *)"\xff\xfe", 2 };   /* invalid UTF-8 first */
    same_error(ins, iid, v, 6, NULL);
    memcpy(v, good, sizeof v);
    uint8_t neg[4];
    v[4] = ival(neg, -1);
    v[0].len = CQL_NULL;   /* attributes before values */
    same_error(ins, iid, v, 6, "A TTL must be greater or equal to 0, but was -1");
    memcpy(v, good, sizeof v);
    v[5].len = CQL_NULL;
    same_error(ins, iid, v, 6, "Invalid null value of timestamp");
    same_error(ins, iid, v, 5, "Invalid amount of bind variables: expected 6, received 5");
    v[0] = (cql_value){ (const uint8_t *)"", 0 };   /* empty key: refused when applied */
    v[5] = bval(b[5], 1);
    same_error(ins, iid, v, 6, "Key may not be empty");
    rows("SELECT count(*) FROM wm WHERE k = 7", "0\n");

    /* UPDATE ... WHERE k = ? AND c = ?, with a literal TIMESTAMP */
    const char *upd = "UPDATE wm USING TIMESTAMP 9000 SET w = ?, v = ? WHERE c = ? AND k = ?";
    uint8_t uid[16];
    prepare(upd, uid, meta, sizeof meta);
    for (int i = 0; i < 3; i++) {
        v[0] = ival(b[0], 200 + i);
        v[1] = tval("u");
        v[2] = ival(b[2], i);
        v[3] = ival(b[3], 5);
        cr_assert_eq(exec_id(uid, v, 4), 0, "%s", g_err.msg);
    }
    cr_assert(memo_point(uid));
    rows("SELECT c, w, v, writetime(w) FROM wm WHERE k = 5", "0|200|'u'|9000\n1|201|'u'|9000\n2|202|'u'|9000\n");
    v[2].len = CQL_NULL;
    v[3].len = CQL_UNSET;   /* c is evaluated first: WHERE order */
    same_error(upd, uid, v, 4, "Invalid null value in condition for column c");
    v[2] = ival(b[2], 0);
    same_error(upd, uid, v, 4, "Invalid unset value for column k");
    v[0].len = 5;
    same_error(upd, uid, v, 4, NULL);

    /* point SELECTs: the partition, then a row */
    const char *sel = "SELECT c, w FROM wm WHERE k = ?";
    const char *sel2 = "SELECT w FROM wm WHERE k = ? AND c = ?";
    uint8_t sid[16], sid2[16];
    prepare(sel, sid, meta, sizeof meta);
    prepare(sel2, sid2, meta, sizeof meta);
    static const char *want[2] = { "c|w\n0|200\n1|201\n2|202\n", "c|w\n1|101\n3|103\n" };
    for (int i = 0; i < 4; i++) {
        ropts o;
        memset(&o, 0, sizeof o);
        o.id = sid;
        o.vals = v;
        o.n_vals = 1;
        v[0] = ival(b[0], i % 2 ? 1 : 5);
        cr_assert_eq(run(NULL, &o, out, sizeof out), 0, "%s", g_err.msg);
        cr_assert_str_eq(out, want[i % 2]);
        o.id = sid2;
        o.n_vals = 2;
        v[1] = ival(b[1], i % 2 ? 3 : 2);
        cr_assert_eq(run(NULL, &o, out, sizeof out), 0, "%s", g_err.msg);
        cr_assert_str_eq(out, i % 2 ? "w\n103\n" : "w\n202\n");
    }
    cr_assert(memo_point(sid) && memo_point(sid2));
    v[0].len = CQL_NULL;
    same_error(sel, sid, v, 1, "Invalid null value in condition for column k");
    v[0].len = 2;
    same_error(sel2, sid2, v, 2, NULL);
    v[0] = ival(b[0], 1);
    v[1].len = CQL_UNSET;
    same_error(sel2, sid2, v, 2, "Invalid unset value for column c");

    /* DELETE of a column, then of a row */
    const char *dc = "DELETE w FROM wm WHERE k = ? AND c = ?", *dr = "DELETE FROM wm WHERE k = ? AND c = ?";
    uint8_t did[16], did2[16];
    prepare(dc, did, meta, sizeof meta);
    prepare(dr, did2, meta, sizeof meta);
    v[0] = ival(b[0], 5);
    v[1] = ival(b[1], 1);
    cr_assert_eq(exec_id(did, v, 2), 0, "%s", g_err.msg);
    v[1] = ival(b[1], 2);
    cr_assert_eq(exec_id(did, v, 2), 0, "%s", g_err.msg);
    cr_assert_eq(exec_id(did2, v, 2), 0, "%s", g_err.msg);
    v[1] = ival(b[1], 0);
    cr_assert_eq(exec_id(did2, v, 2), 0, "%s", g_err.msg);
    cr_assert(memo_point(did) && memo_point(did2));
    rows("SELECT c, w, v FROM wm WHERE k = 5", "1|null|'u'\n");
    v[1].len = CQL_NULL;
    same_error(dr, did2, v, 2, "Invalid null value in condition for column c");
}

/* A statement whose analysis fails is never served from a memo: a value
 * error that comes first stays first, then the statement's own error. */
Test(exec_prepared, point_memo_not_after_failure)
{
    mkks();
    ok("CREATE TABLE wf (k int, c int, v int, PRIMARY KEY (k, c))");
    uint8_t id[16], b1[4], b2[4];
    char meta[512];
    prepare("INSERT INTO wf (k, v) VALUES (?, ?)", id, meta, sizeof meta);
    cql_value v[2] = { ival(b1, 1), ival(b2, 1) };
    for (int i = 0; i < 3; i++) {
        v[0].len = CQL_NULL;
        cr_assert_neq(exec_id(id, v, 2), 0);
        cr_assert_str_eq(g_err.msg, "Invalid null value in condition for column k");
        v[0] = ival(b1, 1);
        cr_assert_neq(exec_id(id, v, 2), 0);
        cr_assert_str_eq(g_err.msg, "Some clustering keys are missing: c");
    }
    cr_assert(!memo_point(id));
    /* other shapes keep the general path, and its results */
    prepare("UPDATE wf SET v = ? WHERE k = ? AND c IN (1, 2)", id, meta, sizeof meta);
    v[0] = ival(b1, 9);
    v[1] = ival(b2, 4);
    for (int i = 0; i < 2; i++)
        cr_assert_eq(exec_id(id, v, 2), 0, "%s", g_err.msg);
    cr_assert(!memo_point(id));
    rows("SELECT c, v FROM wf WHERE k = 4", "1|9\n2|9\n");
}

/* The memo is checked against the catalog version and the table: DDL on the
 * table (ALTER, DROP + CREATE with another layout) or another session
 * keyspace never reuses it.  Query texts are cached statements that survive
 * DDL (prepared ones are dropped: UNPREPARED). */
Test(exec_prepared, point_memo_across_ddl)
{
    mkks();
    ok("CREATE TABLE wd (k int, c int, v int, PRIMARY KEY (k, c))");
    ok("CREATE TABLE other (k int PRIMARY KEY, v int)");
    const char *q = "INSERT INTO wd (k, c, v) VALUES (?, ?, ?)";
    uint8_t id[16], b[3][4];
    char meta[512];
    prepare(q, id, meta, sizeof meta);
    cql_value v[3] = { ival(b[0], 1), ival(b[1], 2), ival(b[2], 3) };
    ropts o;
    memset(&o, 0, sizeof o);
    o.vals = v;
    o.n_vals = 3;
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(exec_id(id, v, 3), 0, "%s", g_err.msg);
        cr_assert_eq(run(q, &o, NULL, 0), 0, "%s", g_err.msg);
    }
    cr_assert(memo_point(id));
    ok("ALTER TABLE other ADD w int");   /* another table: the statement stays prepared */
    v[2] = ival(b[2], 4);
    cr_assert_eq(exec_id(id, v, 3), 0, "%s", g_err.msg);
    cr_assert(memo_point(id));
    rows("SELECT k, c, v FROM wd", "1|2|4\n");
    ok("ALTER TABLE wd ADD w int");
    cr_assert_neq(exec_id(id, v, 3), 0);
    cr_assert_eq(g_err.code, CS_ERR_UNPREPARED);
    v[2] = ival(b[2], 5);
    cr_assert_eq(run(q, &o, NULL, 0), 0, "%s", g_err.msg);
    ok("ALTER TABLE wd DROP v");
    cr_assert_neq(run(q, &o, NULL, 0), 0);
    cr_assert_str_eq(g_err.msg, "Undefined column name v in table ks.wd");
    ok("ALTER TABLE wd ADD v int");
    cr_assert_eq(run(q, &o, NULL, 0), 0, "%s", g_err.msg);
    rows("SELECT k, c, v, w FROM wd", "1|2|5|null\n");
    /* DROP + CREATE: c a partition key column, then a regular one */
    ok("DROP TABLE wd");
    ok("CREATE TABLE wd (k int, c int, v int, PRIMARY KEY ((k, c)))");
    cr_assert_neq(exec_id(id, v, 3), 0);
    cr_assert_eq(g_err.code, CS_ERR_UNPREPARED);
    for (int i = 0; i < 2; i++)
        cr_assert_eq(run(q, &o, NULL, 0), 0, "%s", g_err.msg);
    rows("SELECT k, c, v FROM wd WHERE k = 1 AND c = 2", "1|2|5\n");
    ok("DROP TABLE wd");
    ok("CREATE TABLE wd (k int PRIMARY KEY, c int, v int)");
    cr_assert_eq(run(q, &o, NULL, 0), 0, "%s", g_err.msg);
    v[1] = ival(b[1], 8);
    cr_assert_eq(run(q, &o, NULL, 0), 0, "%s", g_err.msg);
    rows("SELECT k, c, v FROM wd", "1|8|5\n");
    /* another session keyspace, where the same text names another layout */
    ok("CREATE KEYSPACE ks2 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
    ok("CREATE TABLE ks2.wd (k int, c int, v int, PRIMARY KEY (k, c))");
    ok("USE ks2");
    v[1] = ival(b[1], 9);
    for (int i = 0; i < 2; i++)
        cr_assert_eq(run(q, &o, NULL, 0), 0, "%s", g_err.msg);
    rows("SELECT k, c, v FROM ks2.wd", "1|9|5\n");
    ok("USE ks");
    v[2] = ival(b[2], 6);
    cr_assert_eq(run(q, &o, NULL, 0), 0, "%s", g_err.msg);
    rows("SELECT k, c, v FROM ks.wd", "1|9|6\n");
    rows("SELECT k, c, v FROM ks2.wd", "1|9|5\n");
    /* a point SELECT text whose clustering column becomes a regular one */
    const char *sq = "SELECT v FROM wd WHERE k = ? AND c = ?";
    ok("USE ks2");
    o.n_vals = 2;
    static char out[512];
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(run(sq, &o, out, sizeof out), 0, "%s", g_err.msg);
        cr_assert_str_eq(out, "v\n5\n");
    }
    ok("DROP TABLE ks2.wd");
    ok("CREATE TABLE ks2.wd (k int PRIMARY KEY, c int, v int)");
    cr_assert_neq(run(sq, &o, NULL, 0), 0);
    cr_assert(strstr(g_err.msg, "ALLOW FILTERING") != NULL, "%s", g_err.msg);
    ok("USE ks");   /* ks.wd: c is a regular column too */
    cr_assert_neq(run(sq, &o, NULL, 0), 0);
    cr_assert(strstr(g_err.msg, "ALLOW FILTERING") != NULL, "%s", g_err.msg);
}

/* ---- the request loop's hint about the next EXECUTE (cql/prefetch.c) ---- */

/* Read hints (cql_prefetch_batch on SELECTs) never change a result and
 * never touch a table the catalog no longer has: current memos (single
 * and composite partition keys, with sstables and a memtable), any values
 * (too few, null, empty), unknown ids, and memos made before DROP TABLE /
 * ALTER TABLE. */
static int hint1(const uint8_t *id, int idlen, const cql_value *v, int n)
{
    cql_prefetch_req r[2];
    memset(r, 0, sizeof r);
    r[0].id = id;
    r[0].idlen = (size_t)idlen;
    for (int i = 0; i < n; i++) r[0].vals[i] = v[i];
    r[0].n_vals = n;
    r[1] = r[0];                          /* a run of two: one is not hinted */
    return cql_prefetch_batch(g_ctx, r, 2);
}

Test(exec_prepared, prefetch_hint)
{
    mkks();
    ok("CREATE TABLE ph (k int PRIMARY KEY, v int)");
    ok("CREATE TABLE pc (a int, b text, v int, PRIMARY KEY ((a, b)))");
    char q[128];
    for (int round = 0; round < 5; round++) {     /* five sstables, then a memtable */
        for (int i = 0; i < 20; i++) {
            snprintf(q, sizeof q, "INSERT INTO ph (k, v) VALUES (%d, %d)", round * 20 + i, round);
            ok(q);
            snprintf(q, sizeof q, "INSERT INTO pc (a, b, v) VALUES (%d, 'x%d', %d)", i, round, round);
            ok(q);
        }
        if (round < 4) {
            cs_error fe;
            const char *tb[] = { "ph", "pc" };
            cr_assert_eq(cql_admin_flush(g_ctx, "ks", tb, 2, &fe), 0, "%s", fe.msg);
        }
    }
    uint8_t sid[16], cid[16], iid[16], b[4][4];
    char meta[512], out[256];
    prepare("SELECT v FROM ph WHERE k = ?", sid, meta, sizeof meta);
    prepare("SELECT v FROM pc WHERE a = ? AND b = ?", cid, meta, sizeof meta);
    prepare("INSERT INTO ph (k, v) VALUES (?, ?)", iid, meta, sizeof meta);
    cql_value k[2] = { ival(b[0], 41), ival(b[1], 7) };
    cql_value c[2] = { ival(b[2], 3), tval("x1") };
    ropts o;
    memset(&o, 0, sizeof o);
    cr_assert_eq(hint1(sid, 16, k, 1), 0);        /* no memo yet */
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(exec_id(sid, k, 1), 0, "%s", g_err.msg);
        cr_assert_eq(exec_id(cid, c, 2), 0, "%s", g_err.msg);
        cr_assert_eq(exec_id(iid, k, 2), 0, "%s", g_err.msg);
    }
    cr_assert(memo_point(sid) && memo_point(cid) && memo_point(iid));
    cql_value nul = { NULL, -1 }, empty = { (const uint8_t *)"", 0 };
    cr_assert_eq(hint1(sid, 16, k, 1), 2);
    cr_assert_eq(hint1(sid, 16, k, 0), 0);
    cr_assert_eq(hint1(sid, 16, &nul, 1), 0);
    cr_assert_eq(hint1(sid, 16, &empty, 1), 2);
    cr_assert_eq(hint1(sid, 15, k, 1), 0);
    cr_assert_eq(hint1(cid, 16, c, 2), 2);
    cr_assert_eq(hint1(cid, 16, c, 1), 0);
    cr_assert_eq(hint1(iid, 16, k, 2), 2);        /* a write */
    uint8_t unknown[16] = { 1 };
    cr_assert_eq(hint1(unknown, 16, k, 1), 0);
    cql_prefetch_req mix[3];
    memset(mix, 0, sizeof mix);
    mix[0] = (cql_prefetch_req){ .id = sid, .idlen = 16, .vals = { k[0] }, .n_vals = 1 };
    mix[1] = (cql_prefetch_req){ .id = iid, .idlen = 16, .vals = { k[0], k[1] }, .n_vals = 2 };
    mix[2] = mix[0];
    cr_assert_eq(cql_prefetch_batch(g_ctx, mix, 3), 0);   /* read, write, read: runs of one */
    hint1(sid, 16, k, 1);
    o.id = sid; o.vals = k; o.n_vals = 1;
    cr_assert_eq(run(NULL, &o, out, sizeof out), 0, "%s", g_err.msg);
    cr_assert_str_eq(out, "v\n7\n");   /* the INSERT's (41, 7) over (41, 2) */
    hint1(cid, 16, c, 2);
    o.id = cid; o.vals = c; o.n_vals = 2;
    cr_assert_eq(run(NULL, &o, out, sizeof out), 0, "%s", g_err.msg);
    cr_assert_str_eq(out, "v\n1\n");
    /* stale memos: the table they name is gone or altered */
    ok("DROP TABLE ph");
    cr_assert_eq(hint1(sid, 16, k, 1), 0);
    ok("ALTER TABLE pc ADD w int");
    cr_assert_eq(hint1(cid, 16, c, 2), 0);
    ok("CREATE TABLE ph (k int PRIMARY KEY, v int)");
    cr_assert_eq(hint1(sid, 16, k, 1), 0);
    rows("SELECT v FROM pc WHERE a = 3 AND b = 'x1'", "1\n");
}

/* Write hints (cql_prefetch_batch on point INSERT, UPDATE and DELETE with
 * a current memo; single and composite partition keys) go to storage in
 * runs of two or more on one table, a SELECT ending a run; not unknown
 * ids, missing or null key values, nor memos made before DROP TABLE /
 * ALTER TABLE.  Results are unchanged. */
Test(exec_prepared, prefetch_writes_hint)
{
    mkks();
    ok("CREATE TABLE wh (k int PRIMARY KEY, v int)");
    ok("CREATE TABLE wc (a int, b text, v int, PRIMARY KEY ((a, b)))");
    for (int i = 0; i < 2000; i++) {             /* a partition tree of three levels */
        char q[96];
        snprintf(q, sizeof q, "INSERT INTO wh (k, v) VALUES (%d, %d)", i, i);
        ok(q);
    }
    uint8_t ins[16], upd[16], del[16], sel[16], cu[16], b[7][4];
    char meta[512], out[256];
    prepare("INSERT INTO wh (k, v) VALUES (?, ?)", ins, meta, sizeof meta);
    prepare("UPDATE wh SET v = ? WHERE k = ?", upd, meta, sizeof meta);
    prepare("DELETE FROM wh WHERE k = ?", del, meta, sizeof meta);
    prepare("SELECT v FROM wh WHERE k = ?", sel, meta, sizeof meta);
    prepare("UPDATE wc SET v = ? WHERE a = ? AND b = ?", cu, meta, sizeof meta);
    cql_value kv[2] = { ival(b[0], 4000), ival(b[1], 1) };       /* INSERT (k, v); absent k */
    cql_value vk[2] = { ival(b[2], 2), ival(b[3], 17) };         /* UPDATE v, k; present k */
    cql_value dk[1] = { ival(b[4], 18) };                        /* DELETE k */
    cql_value cv[3] = { ival(b[5], 9), ival(b[6], 3), tval("x") };
    cql_prefetch_req r[8];
    memset(r, 0, sizeof r);
    r[0] = (cql_prefetch_req){ .id = ins, .idlen = 16, .vals = { kv[0], kv[1] }, .n_vals = 2 };
    r[1] = (cql_prefetch_req){ .id = upd, .idlen = 16, .vals = { vk[0], vk[1] }, .n_vals = 2 };
    r[2] = (cql_prefetch_req){ .id = del, .idlen = 16, .vals = { dk[0] }, .n_vals = 1 };
    r[3] = (cql_prefetch_req){ .id = sel, .idlen = 16, .vals = { dk[0] }, .n_vals = 1 };
    r[4] = (cql_prefetch_req){ .id = cu, .idlen = 16, .vals = { cv[0], cv[1], cv[2] }, .n_vals = 3 };
    r[5] = r[4];
    /* no memos yet */
    cr_assert_eq(cql_prefetch_batch(g_ctx, r, 6), 0);
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(exec_id(ins, kv, 2), 0, "%s", g_err.msg);
        cr_assert_eq(exec_id(upd, vk, 2), 0, "%s", g_err.msg);
        cr_assert_eq(exec_id(del, dk, 1), 0, "%s", g_err.msg);
        cr_assert_eq(exec_id(sel, dk, 1), 0, "%s", g_err.msg);
        cr_assert_eq(exec_id(cu, cv, 3), 0, "%s", g_err.msg);
    }
    cr_assert(memo_point(ins) && memo_point(upd) && memo_point(del) && memo_point(cu));
    /* INSERT, UPDATE, DELETE on wh (a run of 3); the SELECT is not a
     * write; the two composite-key UPDATEs on wc (a run of 2) */
    cr_assert_eq(cql_prefetch_batch(g_ctx, r, 6), 5);
    cr_assert_eq(cql_prefetch_batch(g_ctx, r, 1), 0);        /* a run of one: no hint */
    cr_assert_eq(cql_prefetch_batch(g_ctx, r + 3, 3), 2);
    cql_prefetch_req odd[4] = { r[0], r[1], r[0], r[0] };
    odd[0].n_vals = 0;                                         /* the key's value missing */
    odd[1].vals[1] = (cql_value){ NULL, -1 };                  /* a null key */
    odd[2].idlen = 15;                                         /* an unknown id */
    cr_assert_eq(cql_prefetch_batch(g_ctx, odd, 4), 0);
    odd[2] = r[2];
    cr_assert_eq(cql_prefetch_batch(g_ctx, odd, 4), 2);
    cql_prefetch_req many[40];
    for (int i = 0; i < 40; i++)
        many[i] = r[i % 3];
    cr_assert_eq(cql_prefetch_batch(g_ctx, many, 40), ST_PREFETCH_KEYS);
    /* the hints changed nothing */
    ropts o;
    memset(&o, 0, sizeof o);
    o.id = sel; o.vals = vk + 1; o.n_vals = 1;
    cr_assert_eq(run(NULL, &o, out, sizeof out), 0, "%s", g_err.msg);
    cr_assert_str_eq(out, "v\n2\n");
    rows("SELECT v FROM wh WHERE k = 4000", "1\n");
    rows("SELECT v FROM wh WHERE k = 18", "");
    rows("SELECT v FROM wc WHERE a = 3 AND b = 'x'", "9\n");
    rows("SELECT count(*) FROM wh", "2000\n");
    /* stale memos: the tables they name are gone or altered */
    ok("DROP TABLE wh");
    cr_assert_eq(cql_prefetch_batch(g_ctx, r, 6), 0);
    ok("ALTER TABLE wc ADD w int");
    cr_assert_eq(cql_prefetch_batch(g_ctx, r + 4, 2), 0);
    rows("SELECT v FROM wc WHERE a = 3 AND b = 'x'", "9\n");
}

/* ---- the selection memo (cql_stmt_memo.sel, select_sel.c) ---- */

/* Is the prepared statement id's selection served from its memo? */
static bool memo_sel(const uint8_t *id)
{
    cql_prepared *p = cql__prepared_find(g_ctx, id, 16);
    cr_assert(p != NULL);
    const cql_stmt_memo *m = p->stmt->exec_memo;
    return m && m->sel;
}

/* A selection kept in the statement's memo gives the results and metadata
 * of a fresh compilation: `*` and plain columns across ALTER TABLE ADD and
 * DROP (text and prepared), JSON, DISTINCT; aliases, functions and GROUP
 * BY (whose selectors keep per-group state) are compiled every time and
 * stay right on repeated executions. */
Test(exec_prepared, selection_memo)
{
    mkks();
    ok("CREATE TABLE sm2 (k int, c int, v int, s int static, PRIMARY KEY (k, c))");
    ok("INSERT INTO sm2 (k, c, v, s) VALUES (1, 1, 11, 100)");
    ok("INSERT INTO sm2 (k, c, v) VALUES (1, 2, 12)");
    ok("INSERT INTO sm2 (k, c, v) VALUES (2, 1, 21)");
    uint8_t b[2][4];
    cql_value k[2] = { ival(b[0], 1), ival(b[1], 2) };
    ropts o;
    memset(&o, 0, sizeof o);
    o.vals = k;
    o.n_vals = 1;
    static char out[1024];
    char meta[1024];
    struct { const char *q, *want; bool memo; } cases[] = {
        { "SELECT * FROM sm2 WHERE k = ?", "k|c|s|v\n1|1|100|11\n1|2|100|12\n", true },
        { "SELECT v, k FROM sm2 WHERE k = ?", "v|k\n11|1\n12|1\n", true },
        { "SELECT v, v, s FROM sm2 WHERE k = ? AND c = 2", "v|v|s\n12|12|100\n", true },
        { "SELECT JSON k, v FROM sm2 WHERE k = ?", "[json]\n'{\"k\": 1, \"v\": 11}'\n'{\"k\": 1, \"v\": 12}'\n", true },
        { "SELECT DISTINCT k, s FROM sm2 WHERE k = ?", "k|s\n1|100\n", true },
        { "SELECT k, v FROM sm2 WHERE k = ? AND v > 11 ALLOW FILTERING", "k|v\n1|12\n", true },
        { "SELECT v AS x FROM sm2 WHERE k = ?", "x\n11\n12\n", false },
        { "SELECT k, c FROM sm2 WHERE k = ? GROUP BY k", "k|c\n1|1\n", false },
        { "SELECT k, count(*) FROM sm2 WHERE k = ?", "k|count\n1|2\n", false },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t id[16];
        prepare(cases[i].q, id, meta, sizeof meta);
        char meta0[1024];
        snprintf(meta0, sizeof meta0, "%s", meta);
        o.id = id;
        for (int r = 0; r < 3; r++) {
            cr_assert_eq(run(NULL, &o, out, sizeof out), 0, "%s: %s", cases[i].q, g_err.msg);
            cr_assert_str_eq(out, cases[i].want, "%s (run %d)", cases[i].q, r);
            o.id = NULL;   /* the same text through QUERY (its cached statement) */
            cr_assert_eq(run(cases[i].q, &o, out, sizeof out), 0, "%s: %s", cases[i].q, g_err.msg);
            cr_assert_str_eq(out, cases[i].want, "%s (text, run %d)", cases[i].q, r);
            o.id = id;
        }
        cr_assert_eq(memo_sel(id), cases[i].memo, "%s", cases[i].q);
        prepare(cases[i].q, id, meta, sizeof meta);   /* metadata from the memo */
        cr_assert_str_eq(meta, meta0, "%s", cases[i].q);
    }
    /* `*` and a plain list across ADD / DROP: text (its cached statement's
     * memo goes stale) and prepared (UNPREPARED, then prepared again) */
    const char *star = "SELECT * FROM sm2 WHERE k = ? AND c = 1";
    const char *plain = "SELECT c, v FROM sm2 WHERE k = ? AND c = 1";
    uint8_t sid[16], pid[16];
    prepare(star, sid, meta, sizeof meta);
    prepare(plain, pid, meta, sizeof meta);
    o.id = NULL;
    for (int r = 0; r < 2; r++) {
        cr_assert_eq(run(star, &o, out, sizeof out), 0, "%s", g_err.msg);
        cr_assert_str_eq(out, "k|c|s|v\n1|1|100|11\n");
        cr_assert_eq(exec_id(sid, k, 1), 0, "%s", g_err.msg);
        cr_assert_eq(exec_id(pid, k, 1), 0, "%s", g_err.msg);
    }
    cr_assert(memo_sel(sid) && memo_sel(pid));
    ok("ALTER TABLE sm2 ADD w int");
    ok("INSERT INTO sm2 (k, c, w) VALUES (1, 1, 5)");
    for (int r = 0; r < 2; r++) {
        cr_assert_eq(run(star, &o, out, sizeof out), 0, "%s", g_err.msg);
        cr_assert_str_eq(out, "k|c|s|v|w\n1|1|100|11|5\n");
    }
    cr_assert_neq(exec_id(sid, k, 1), 0);
    cr_assert_eq(g_err.code, CS_ERR_UNPREPARED);
    prepare(star, sid, meta, sizeof meta);
    cr_assert_str_eq(meta, "pk:0, binds:k:int, result:1/5");
    o.id = sid;
    for (int r = 0; r < 2; r++) {
        cr_assert_eq(run(NULL, &o, out, sizeof out), 0, "%s", g_err.msg);
        cr_assert_str_eq(out, "k|c|s|v|w\n1|1|100|11|5\n");
    }
    cr_assert(memo_sel(sid));
    o.id = NULL;
    ok("ALTER TABLE sm2 DROP v");
    cr_assert_eq(run(star, &o, out, sizeof out), 0, "%s", g_err.msg);
    cr_assert_str_eq(out, "k|c|s|w\n1|1|100|5\n");
    cr_assert_neq(run(plain, &o, out, sizeof out), 0);
    cr_assert_str_eq(g_err.msg, "Undefined column name v in table ks.sm2");
    ok("ALTER TABLE sm2 ADD v int");
    for (int r = 0; r < 2; r++) {
        cr_assert_eq(run(plain, &o, out, sizeof out), 0, "%s", g_err.msg);
        cr_assert_str_eq(out, "c|v\n1|null\n");
        cr_assert_eq(run(star, &o, out, sizeof out), 0, "%s", g_err.msg);
        cr_assert_str_eq(out, "k|c|s|v|w\n1|1|100|null|5\n");
    }
    /* another session keyspace: the same text names another table */
    ok("CREATE KEYSPACE ks3 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
    ok("CREATE TABLE ks3.sm2 (k int, c int, z int, PRIMARY KEY (k, c))");
    ok("INSERT INTO ks3.sm2 (k, c, z) VALUES (1, 1, 9)");
    ok("USE ks3");
    for (int r = 0; r < 2; r++) {
        cr_assert_eq(run(star, &o, out, sizeof out), 0, "%s", g_err.msg);
        cr_assert_str_eq(out, "k|c|z\n1|1|9\n");
    }
    ok("USE ks");
    cr_assert_eq(run(star, &o, out, sizeof out), 0, "%s", g_err.msg);
    cr_assert_str_eq(out, "k|c|s|v|w\n1|1|100|null|5\n");
}
