/*
 * test_cql_exec_select.c: the read side (SELECT, paging, prepared
 * statements, functions, aggregates, refusals) through cql_query /
 * cql_prepare / cql_execute on a real engine in a temp dir.  Results are
 * checked by decoding the RESULT body.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include "cql/cql_int.h"
#include "common/hash.h"
#include "cql/exec.h"
#include "storage/storage.h"
#include "common/alloc.h"
#include "common/vfs.h"
#include "common/util.h"

static char g_dir[256];
static st_engine *g_eng;
static cql_ctx *g_ctx;
static cql_session g_sess;
static cs_error g_err;
static char g_warn[2048];

static size_t g_alloc0;

static void setup(void)
{
    g_alloc0 = cs_alloc_count();
    static char d[300], c[300];
    snprintf(g_dir, sizeof g_dir, "/tmp/cs_exec_select_%d", (int)getpid());
    vfs_rmtree(g_dir);
    snprintf(d, sizeof d, "%s/data", g_dir);
    snprintf(c, sizeof c, "%s/commitlog", g_dir);
    vfs_mkdirs(d);
    vfs_mkdirs(c);
    st_config cfg;
    st_config_defaults(&cfg);
    cfg.data_dir = d;
    cfg.commitlog_dir = c;
    cr_assert_eq(st_engine_open(&cfg, &g_eng), 0);
    cql_config cc;
    cql_config_defaults(&cc);
    cr_assert_eq(cql_ctx_new(g_eng, &cc, &g_ctx), 0);
    memset(&g_sess, 0, sizeof g_sess);
    g_sess.protocol_version = 4;
}

static void teardown(void)
{
    cql_ctx_free(g_ctx);
    st_engine_close(g_eng, false);
    vfs_rmtree(g_dir);
    cr_expect_eq(cs_alloc_count(), g_alloc0, "leaked %zu allocations", cs_alloc_count() - g_alloc0);
}

/* Minimal value formatter (cqlsh-like) for the types these tests use. */
static void fmt(const ctype *t, const uint8_t *v, int32_t n, cs_buf *b)
{
    char tmp[64];
    if (n < 0) { cs_buf_put(b, "null", 4); return; }
    switch (t->kind) {
    case CT_INT:
        snprintf(tmp, sizeof tmp, "%d", n == 4 ? (int32_t)cs_be32(v) : 0);
        cs_buf_put(b, tmp, strlen(tmp));
        return;
    case CT_BIGINT: case CT_COUNTER: case CT_TIMESTAMP:
        snprintf(tmp, sizeof tmp, "%lld", n == 8 ? (long long)(int64_t)cs_be64(v) : 0LL);
        cs_buf_put(b, tmp, strlen(tmp));
        return;
    case CT_BOOLEAN:
        cs_buf_put(b, n && v[0] ? "true" : "false", n && v[0] ? 4 : 5);
        return;
    case CT_VARCHAR: case CT_ASCII:
        cs_buf_put_u8(b, '\'');
        cs_buf_put(b, v, (size_t)n);
        cs_buf_put_u8(b, '\'');
        return;
    case CT_LIST: case CT_SET: case CT_MAP: {
        cs_rd r;
        cs_rd_init(&r, v, (size_t)n);
        int32_t cnt = (int32_t)cs_rd_u32(&r);
        cs_buf_put_u8(b, t->kind == CT_LIST ? '[' : '{');
        for (int32_t i = 0; i < cnt && !r.err; i++) {
            const uint8_t *p = NULL;
            int32_t l = cs_rd_bytes(&r, &p);
            if (i) cs_buf_put(b, ", ", 2);
            fmt(t->sub[0], p, l, b);
            if (t->kind == CT_MAP) {
                cs_buf_put(b, ": ", 2);
                l = cs_rd_bytes(&r, &p);
                fmt(t->sub[1], p, l, b);
            }
        }
        cs_buf_put_u8(b, t->kind == CT_LIST ? ']' : '}');
        return;
    }
    case CT_UDT: {
        cs_rd r;
        cs_rd_init(&r, v, (size_t)n);
        cs_buf_put_u8(b, '{');
        for (int i = 0; i < t->n_sub; i++) {
            const uint8_t *p = NULL;
            int32_t l = cs_rd_left(&r) ? cs_rd_bytes(&r, &p) : -1;
            if (i) cs_buf_put(b, ", ", 2);
            cs_buf_put(b, t->field_names[i], strlen(t->field_names[i]));
            cs_buf_put(b, ": ", 2);
            fmt(t->sub[i], p, l, b);
        }
        cs_buf_put_u8(b, '}');
        return;
    }
    default:
        if (ctype_format_cql(t, v, (size_t)n, b) < 0) cs_buf_put(b, "?", 1);
    }
}


/* Request options for run(). */
typedef struct ropts {
    int32_t page_size;
    const uint8_t *ps; int32_t ps_len;
    cql_value *vals; int n_vals;
    const char **names; const size_t *name_lens;
    bool skip_metadata;
    const uint8_t *id;          /* EXECUTE this id instead of QUERY */
} ropts;

static uint8_t g_ps[4096];
static int32_t g_ps_len;
static uint32_t g_flags;

/* Decode a RESULT Rows body into text: header line of names, then one line
 * per row, values separated by '|'.  Records paging state in g_ps. */
static void render(const cql_result *r, char *out, size_t outn)
{
    out[0] = 0;
    g_ps_len = -1;
    size_t len = 0;
    cs_rd rd;
    cs_rd_init(&rd, r->body.p, r->body.len);
    if (cs_rd_u32(&rd) != 2)
        return;
    uint32_t flags = cs_rd_u32(&rd);
    g_flags = flags;
    int ncol = (int)cs_rd_u32(&rd);
    size_t n;
    if (flags & 2) {
        const uint8_t *p = NULL;
        g_ps_len = cs_rd_bytes(&rd, &p);
        if (g_ps_len > 0 && g_ps_len <= (int32_t)sizeof g_ps)
            memcpy(g_ps, p, (size_t)g_ps_len);
    }
    ctype *types[64] = {0};
    if (!(flags & 4)) {
        if (flags & 1) { cs_rd_string(&rd, &n); cs_rd_string(&rd, &n); }
        for (int i = 0; i < ncol && i < 64; i++) {
            if (!(flags & 1)) { cs_rd_string(&rd, &n); cs_rd_string(&rd, &n); }
            const char *nm = cs_rd_string(&rd, &n);
            len += (size_t)snprintf(out + len, outn - len, "%s%.*s", i ? "|" : "", (int)n, nm);
            types[i] = ctype_decode_option(&rd);
        }
    }
    len += (size_t)snprintf(out + len, outn - len, "\n");
    int nrows = (int)cs_rd_u32(&rd);
    for (int j = 0; j < nrows && !rd.err; j++) {
        for (int i = 0; i < ncol; i++) {
            const uint8_t *vp = NULL;
            int32_t vl = cs_rd_bytes(&rd, &vp);
            cs_buf b;
            cs_buf_init(&b);
            if (!types[i]) {
                char tmp[32];
                snprintf(tmp, sizeof tmp, "<%d>", vl);
                cs_buf_put(&b, tmp, strlen(tmp));
            } else
                fmt(types[i], vp, vl, &b);
            len += (size_t)snprintf(out + len, outn - len, "%s%.*s", i ? "|" : "", (int)b.len, (char *)b.p);
            cs_buf_destroy(&b);
        }
        len += (size_t)snprintf(out + len, outn - len, "\n");
    }
    for (int i = 0; i < ncol && i < 64; i++)
        if (types[i]) ctype_unref(types[i]);
}

static int run(const char *q, const ropts *o, char *out, size_t outn)
{
    cql_result r;
    cql_result_init(&r);
    cs_error_init(&g_err);
    cql_params p;
    memset(&p, 0, sizeof p);
    p.consistency = 1;
    p.paging_state_len = -1;
    p.timestamp = INT64_MIN;
    if (o) {
        p.page_size = o->page_size;
        p.paging_state = o->ps;
        p.paging_state_len = o->ps ? o->ps_len : -1;
        p.values = o->vals;
        p.n_values = o->n_vals;
        p.names = o->names;
        p.name_lens = o->name_lens;
        p.skip_metadata = o->skip_metadata;
    }
    int rc = (o && o->id) ? cql_execute(g_ctx, &g_sess, o->id, 16, &p, &r, &g_err)
                          : cql_query(g_ctx, &g_sess, q, strlen(q), &p, &r, &g_err);
    cs_alloc_fail_nth(0);   /* injected failures are for the server side only */
    g_warn[0] = 0;
    for (int i = 0; i < r.n_warnings; i++)
        snprintf(g_warn + strlen(g_warn), sizeof g_warn - strlen(g_warn), "%s\n", r.warnings[i]);
    if (out) {
        if (rc == 0)
            render(&r, out, outn);
        else
            out[0] = 0;
    }
    cql_result_destroy(&r);
    return rc;
}

static void ok(const char *q)
{
    int rc = run(q, NULL, NULL, 0);
    cr_assert_eq(rc, 0, "%s -> %s", q, g_err.msg);
}

static void fails(const char *q, const char *msg)
{
    int rc = run(q, NULL, NULL, 0);
    cr_assert_neq(rc, 0, "%s should fail", q);
    cr_assert(strstr(g_err.msg, msg) != NULL, "%s: got [%s], want [%s]", q, g_err.msg, msg);
}

static const char *body_of(const char *out)
{
    const char *b = strchr(out, '\n');
    return b ? b + 1 : out;
}

static void rows(const char *q, const char *want)
{
    static char out[65536];
    int rc = run(q, NULL, out, sizeof out);
    cr_assert_eq(rc, 0, "%s -> %s", q, g_err.msg);
    cr_assert_str_eq(body_of(out), want, "%s: got [%s] want [%s]", q, body_of(out), want);
}

static void result(const char *q, const char *want)
{
    static char out[65536];
    int rc = run(q, NULL, out, sizeof out);
    cr_assert_eq(rc, 0, "%s -> %s", q, g_err.msg);
    cr_assert_str_eq(out, want, "%s: got [%s] want [%s]", q, out, want);
}

/* Fetch every page of q with page size ps; concatenated rows must equal the
 * unpaged result; returns the number of pages. */
static int paged_equals(const char *q, int ps)
{
    static char all[65536], acc[65536], page[65536];
    int rc = run(q, NULL, all, sizeof all);
    cr_assert_eq(rc, 0, "%s -> %s", q, g_err.msg);
    acc[0] = 0;
    uint8_t state[4096];
    int32_t slen = -1;
    int pages = 0;
    for (;;) {
        ropts o;
        memset(&o, 0, sizeof o);
        o.page_size = ps;
        o.ps = slen >= 0 ? state : NULL;
        o.ps_len = slen;
        rc = run(q, &o, page, sizeof page);
        cr_assert_eq(rc, 0, "%s page %d -> %s", q, pages, g_err.msg);
        pages++;
        const char *b = body_of(page);
        int nl = 0;
        for (const char *c = b; *c; c++) nl += *c == '\n';
        cr_assert(nl <= ps, "%s: page of %d rows > %d", q, nl, ps);
        strncat(acc, b, sizeof acc - strlen(acc) - 1);
        if (g_ps_len < 0)
            break;
        memcpy(state, g_ps, (size_t)g_ps_len);
        slen = g_ps_len;
        cr_assert(pages < 1000, "too many pages");
    }
    cr_assert_str_eq(acc, body_of(all), "%s (page size %d): paged [%s] vs all [%s]", q, ps, acc, body_of(all));
    return pages;
}

static void mkks(void)
{
    ok("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
    ok("USE ks");
}

static void fill_kcv(void)
{
    ok("CREATE TABLE t (k int, c int, v int, PRIMARY KEY (k, c))");
    for (int k = 0; k < 4; k++)
        for (int c = 0; c < 5; c++) {
            char q[200];
            snprintf(q, sizeof q, "INSERT INTO t (k, c, v) VALUES (%d, %d, %d)", k, c, k * 10 + c);
            ok(q);
        }
}

TestSuite(exec_select, .init = setup, .fini = teardown, .timeout = 60);

Test(exec_select, single_partition_slices)
{
    mkks();
    fill_kcv();
    result("SELECT * FROM t WHERE k = 1", "k|c|v\n1|0|10\n1|1|11\n1|2|12\n1|3|13\n1|4|14\n");
    rows("SELECT c FROM t WHERE k = 1 AND c > 1", "2\n3\n4\n");
    rows("SELECT c FROM t WHERE k = 1 AND c >= 1 AND c < 3", "1\n2\n");
    rows("SELECT c FROM t WHERE k = 1 AND c <= 1", "0\n1\n");
    rows("SELECT c FROM t WHERE k = 1 AND c = 3", "3\n");
    rows("SELECT c FROM t WHERE k = 1 AND c IN (4, 0, 2, 2)", "0\n2\n4\n");
    rows("SELECT c FROM t WHERE k = 1 LIMIT 2", "0\n1\n");
    rows("SELECT c FROM t WHERE k = 1 ORDER BY c DESC", "4\n3\n2\n1\n0\n");
    rows("SELECT c FROM t WHERE k = 1 AND c < 3 ORDER BY c DESC LIMIT 2", "2\n1\n");
    rows("SELECT c FROM t WHERE k = 1 AND c > 3 AND c < 2", "");
    rows("SELECT c FROM t WHERE k = 9", "");
    rows("SELECT c FROM t WHERE k = 1 AND c IN ()", "");
    rows("SELECT c FROM t WHERE k IN ()", "");
    rows("SELECT k, c FROM t WHERE k IN (2, 0) AND c = 1", "0|1\n2|1\n");
    rows("SELECT k, c FROM t WHERE k IN (2, 0) AND c > 2 PER PARTITION LIMIT 1", "0|3\n2|3\n");
    rows("SELECT c AS x, v FROM t WHERE k = 3 AND c = 0", "0|30\n");
    result("SELECT c AS x FROM t WHERE k = 3 AND c = 0", "x\n0\n");
    ok("CREATE TABLE cp (a int, b text, c int, PRIMARY KEY ((a, b), c))");
    ok("INSERT INTO cp (a, b, c) VALUES (1, 'x', 1)");
    ok("INSERT INTO cp (a, b, c) VALUES (1, 'y', 2)");
    ok("INSERT INTO cp (a, b, c) VALUES (2, 'x', 3)");
    ok("INSERT INTO cp (a, b, c) VALUES (2, 'y', 4)");
    rows("SELECT a, b, c FROM cp WHERE a IN (2, 1) AND b IN ('y', 'x')", "1|'x'|1\n1|'y'|2\n2|'x'|3\n2|'y'|4\n");
    rows("SELECT c FROM cp WHERE a = 2 AND b = 'y'", "4\n");
    fails("SELECT c FROM cp WHERE a = 2", "Cannot execute this query as it might involve data filtering");
    rows("SELECT c FROM cp WHERE a = 2 ALLOW FILTERING", "3\n4\n");
    rows("SELECT c FROM cp WHERE b = 'x' ALLOW FILTERING", "3\n1\n");   /* token order */
}

Test(exec_select, range_scans_and_tokens)
{
    mkks();
    fill_kcv();
    /* full scan: token order of the int keys */
    rows("SELECT DISTINCT k FROM t", "1\n0\n2\n3\n");
    rows("SELECT k, c FROM t LIMIT 3", "1|0\n1|1\n1|2\n");
    rows("SELECT k, c FROM t PER PARTITION LIMIT 1", "1|0\n0|0\n2|0\n3|0\n");
    rows("SELECT token(k), k FROM t WHERE k = 1 AND c = 0", "-4069959284402364209|1\n");
    rows("SELECT k FROM t WHERE token(k) > -4069959284402364209 PER PARTITION LIMIT 1", "0\n2\n3\n");
    rows("SELECT k FROM t WHERE token(k) >= -4069959284402364209 AND token(k) <= -4069959284402364209 PER PARTITION LIMIT 1", "1\n");
    rows("SELECT count(*) FROM t", "20\n");
    rows("SELECT k FROM t WHERE token(k) > token(1) PER PARTITION LIMIT 1", "0\n2\n3\n");
    rows("SELECT k FROM t WHERE token(k) <= token(1) PER PARTITION LIMIT 1", "1\n");
    rows("SELECT k, c FROM t WHERE k IN (1, 2) AND c IN (1, 3) ORDER BY c DESC", "1|3\n2|3\n1|1\n2|1\n");
    rows("SELECT c FROM t WHERE k = 1 AND c IN (1, 3) ORDER BY c DESC", "3\n1\n");
    rows("SELECT k, count(*) FROM t PER PARTITION LIMIT 2", "1|8\n");
    rows("SELECT k, count(*) FROM t GROUP BY k PER PARTITION LIMIT 2", "1|5\n0|5\n2|5\n3|5\n");
    rows("SELECT k, c, count(*) FROM t GROUP BY k, c PER PARTITION LIMIT 2 LIMIT 5", "1|0|1\n1|1|1\n0|0|1\n0|1|1\n2|0|1\n");
    /* a dropped then re-added column does not resurrect old cells */
    ok("ALTER TABLE t DROP v");
    ok("ALTER TABLE t ADD v int");
    rows("SELECT c, v FROM t WHERE k = 1 AND c < 2", "0|null\n1|null\n");
    ok("UPDATE t SET v = 5 WHERE k = 1 AND c = 1");
    rows("SELECT c, v FROM t WHERE k = 1 AND c < 2", "0|null\n1|5\n");
}

Test(exec_select, clustering_multi_and_desc)
{
    mkks();
    ok("CREATE TABLE m (k int, a int, b int, v int, PRIMARY KEY (k, a, b)) WITH CLUSTERING ORDER BY (a DESC, b ASC)");
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            char q[200];
            snprintf(q, sizeof q, "INSERT INTO m (k, a, b, v) VALUES (0, %d, %d, %d)", a, b, a * 10 + b);
            ok(q);
        }
    rows("SELECT v FROM m WHERE k = 0", "20\n21\n22\n10\n11\n12\n0\n1\n2\n");
    rows("SELECT v FROM m WHERE k = 0 AND a > 0", "20\n21\n22\n10\n11\n12\n");
    rows("SELECT v FROM m WHERE k = 0 AND a >= 1 AND a < 2", "10\n11\n12\n");
    rows("SELECT v FROM m WHERE k = 0 AND a = 1 AND b > 0", "11\n12\n");
    rows("SELECT v FROM m WHERE k = 0 AND a IN (0, 2) AND b < 2", "20\n21\n0\n1\n");
    rows("SELECT v FROM m WHERE k = 0 AND (a, b) = (1, 2)", "12\n");
    rows("SELECT v FROM m WHERE k = 0 AND (a, b) IN ((1, 2), (0, 0))", "12\n0\n");
    rows("SELECT v FROM m WHERE k = 0 ORDER BY a ASC, b DESC", "2\n1\n0\n12\n11\n10\n22\n21\n20\n");
    rows("SELECT v FROM m WHERE k = 0 AND a = 2 ORDER BY a ASC, b DESC LIMIT 2", "22\n21\n");
    ok("CREATE TABLE m2 (k int, a int, b int, v int, PRIMARY KEY (k, a, b))");
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            char q[200];
            snprintf(q, sizeof q, "INSERT INTO m2 (k, a, b, v) VALUES (0, %d, %d, %d)", a, b, a * 10 + b);
            ok(q);
        }
    rows("SELECT v FROM m2 WHERE k = 0 AND (a, b) > (1, 1)", "12\n20\n21\n22\n");
    /* mixed clustering order: tuple comparison by value, clustering order */
    ok("CREATE TABLE mx (p int, c1 int, c2 text, v int, PRIMARY KEY (p, c1, c2)) WITH CLUSTERING ORDER BY (c1 ASC, c2 DESC)");
    for (int a = 0; a < 3; a++)
        for (const char *b = "abc"; *b; b++) {
            char q[200];
            snprintf(q, sizeof q, "INSERT INTO mx (p, c1, c2, v) VALUES (0, %d, '%c', 1)", a, *b);
            ok(q);
        }
    rows("SELECT c1, c2 FROM mx WHERE p = 0 AND (c1, c2) > (1, 'b')", "1|'c'\n2|'c'\n2|'b'\n2|'a'\n");
    rows("SELECT c1, c2 FROM mx WHERE p = 0 AND (c1, c2) >= (1, 'b') AND (c1, c2) < (2, 'b')", "1|'c'\n1|'b'\n2|'a'\n");
    cr_assert_eq(paged_equals("SELECT c1, c2 FROM mx WHERE p = 0 AND (c1, c2) > (0, 'b')", 2), 4);
    rows("SELECT v FROM m2 WHERE k = 0 AND (a, b) >= (1, 1) AND (a, b) < (2, 1)", "11\n12\n20\n");
    fails("SELECT v FROM m2 WHERE k = 0 AND (a, b) > (1, 1) AND a < 2", "Column \"a\" cannot be restricted by both a tuple notation inequality and a single column inequality");
    fails("SELECT v FROM m2 WHERE k = 0 AND a < 2 AND (a, b) > (1, 1)", "Column \"a\" cannot be restricted by both a tuple notation inequality and a single column inequality");
    rows("SELECT v FROM m2 WHERE k = 0 AND a = 1 AND (b) > (0)", "11\n12\n");
    fails("SELECT v FROM m2 WHERE k = 0 AND (b, a) > (0, 1)", "Clustering columns must appear in the PRIMARY KEY order in multi-column relations");
    fails("SELECT v FROM m2 WHERE k = 0 AND (k, a) > (0, 1)", "Multi-column relations can only be applied to clustering columns but was applied to: k");
}

Test(exec_select, refusals)
{
    mkks();
    ok("CREATE TABLE p (k1 int, k2 int, c1 int, c2 int, v int, PRIMARY KEY ((k1, k2), c1, c2))");
    fails("SELECT * FROM p WHERE k1 = 1", "Cannot execute this query as it might involve data filtering");
    fails("SELECT * FROM p WHERE k1 = 1 AND k2 = 1 AND c2 = 1",
          "PRIMARY KEY column \"c2\" cannot be restricted as preceding column \"c1\" is not restricted");
    fails("SELECT * FROM p WHERE k1 = 1 AND k2 = 1 AND c1 > 1 AND c2 = 1",
          "Clustering column \"c2\" cannot be restricted (preceding column \"c1\" is restricted by a non-EQ relation)");
    fails("SELECT * FROM p WHERE k1 = 1 AND k2 = 1 AND v = 1", "Cannot execute this query as it might involve data filtering");
    fails("SELECT * FROM p WHERE c1 = 1", "ALLOW FILTERING");
    fails("SELECT * FROM p WHERE k1 > 1 AND k2 = 1", "Only EQ and IN relation are supported on the partition key");
    fails("SELECT * FROM p WHERE k1 = 1 AND k2 = 1 AND x = 1", "Undefined column name x");
    fails("SELECT x FROM p", "Undefined column name x");
    fails("SELECT * FROM p ORDER BY c1 DESC", "ORDER BY is only supported when the partition key is restricted by an EQ or an IN.");
    fails("SELECT * FROM p WHERE k1 = 1 AND k2 = 1 ORDER BY v DESC", "Order by is currently only supported on the clustered columns of the PRIMARY KEY, got v");
    fails("SELECT * FROM p WHERE k1 = 1 AND k2 = 1 ORDER BY c2 DESC", "Order by currently only supports the ordering of columns following their declared order in the PRIMARY KEY");
    fails("SELECT * FROM p WHERE k1 = 1 AND k2 = 1 ORDER BY c1 DESC, c2 ASC", "Unsupported order by relation");
    fails("SELECT * FROM p WHERE k1 = 1 AND k2 = 1 LIMIT 0", "LIMIT must be strictly positive");
    fails("SELECT * FROM p WHERE k1 = 'a' AND k2 = 1", "Invalid STRING constant (a) for \"k1\" of type int");
    fails("SELECT c1 FROM p WHERE k1 = 1 AND k2 = 1 AND c1 = 1 AND c1 = 2", "c1 cannot be restricted by more than one relation if it includes an Equal");
    fails("SELECT c1 FROM p WHERE k1 = 1 AND k2 = 1 AND c1 IN (1) AND c1 > 2", "c1 cannot be restricted by more than one relation if it includes a IN");
    fails("SELECT c1 FROM p WHERE k1 = 1 AND k2 = 1 AND c1 > 1 AND c1 = 2", "Column \"c1\" cannot be restricted by both an equality and an inequality relation");
    fails("SELECT c1 FROM p WHERE k1 = 1 AND k2 = 1 AND c1 > 1 AND c1 > 2", "More than one restriction was found for the start bound on c1");
    fails("SELECT DISTINCT c1 FROM p", "SELECT DISTINCT queries must only request partition key columns and/or static columns (not c1)");
    fails("SELECT DISTINCT k1 FROM p", "SELECT DISTINCT queries must request all the partition key columns (missing k2)");
    fails("SELECT * FROM p WHERE token(k2, k1) > 0", "The token function arguments must be in the partition key order: k1, k2");
    fails("SELECT * FROM nope", "nope");
    fails("SELECT writetime(k1) FROM p", "Cannot use selection function writeTime on PRIMARY KEY part k1");
    rows("SELECT * FROM p WHERE k1 = 1 ALLOW FILTERING", "");
    rows("SELECT * FROM p WHERE k1 = 1 AND k2 = 1 AND c2 = 1 ALLOW FILTERING", "");
}

Test(exec_select, filtering)
{
    mkks();
    ok("CREATE TABLE f (k int, c int, v int, s int static, l list<int>, m map<text, int>, PRIMARY KEY (k, c))");
    ok("INSERT INTO f (k, c, v, l, m) VALUES (1, 1, 10, [1, 2], {'a': 1})");
    ok("INSERT INTO f (k, c, v, l, m) VALUES (1, 2, 20, [3], {'b': 2})");
    ok("INSERT INTO f (k, c, v, l, m) VALUES (2, 1, 10, [2], {'a': 3})");
    ok("UPDATE f SET s = 7 WHERE k = 2");
    rows("SELECT k, c FROM f WHERE v = 10 ALLOW FILTERING", "1|1\n2|1\n");
    rows("SELECT k, c FROM f WHERE k = 1 AND v > 10 ALLOW FILTERING", "1|2\n");
    rows("SELECT k, c FROM f WHERE l CONTAINS 2 ALLOW FILTERING", "1|1\n2|1\n");
    rows("SELECT k, c FROM f WHERE m CONTAINS KEY 'b' ALLOW FILTERING", "1|2\n");
    rows("SELECT k, c FROM f WHERE m['a'] = 3 ALLOW FILTERING", "2|1\n");
    rows("SELECT k, c FROM f WHERE s = 7 ALLOW FILTERING", "2|1\n");
    rows("SELECT k, c FROM f WHERE c = 2 ALLOW FILTERING", "1|2\n");
    rows("SELECT k, c FROM f WHERE v IN (20, 30) ALLOW FILTERING", "1|2\n");
    rows("SELECT l, m FROM f WHERE k = 1 AND c = 1", "[1, 2]|{'a': 1}\n");
    result("SELECT m['a'], m['z'] FROM f WHERE k = 1 AND c = 1", "m['a']|m['z']\n1|null\n");
    ok("INSERT INTO f (k, c, m) VALUES (3, 1, {'a': 1, 'b': 2, 'c': 3, 'd': 4})");
    rows("SELECT m['b'..'c'], m[..'a'], m['c'..] FROM f WHERE k = 3 AND c = 1", "{'b': 2, 'c': 3}|{'a': 1}|{'c': 3, 'd': 4}\n");
    fails("SELECT l[0] FROM f", "Element selection is only allowed on sets and maps, but l is a list");
    fails("SELECT * FROM f WHERE v != 1 ALLOW FILTERING", "Unsupported \"!=\" relation");
}

Test(exec_select, statics_and_distinct)
{
    mkks();
    ok("CREATE TABLE s (k int, c int, v int, st int static, PRIMARY KEY (k, c))");
    ok("UPDATE s SET st = 5 WHERE k = 1");
    ok("INSERT INTO s (k, c, v, st) VALUES (2, 1, 10, 6)");
    ok("INSERT INTO s (k, c, v) VALUES (2, 2, 20)");
    result("SELECT * FROM s WHERE k = 1", "k|c|st|v\n1|null|5|null\n");
    rows("SELECT * FROM s WHERE k = 2", "2|1|6|10\n2|2|6|20\n");
    rows("SELECT * FROM s WHERE k = 1 AND c = 1", "");
    rows("SELECT DISTINCT k, st FROM s", "1|5\n2|6\n");
    /* static-only partitions show up in full-partition queries */
    rows("SELECT k, c FROM s", "1|null\n2|1\n2|2\n");
    rows("SELECT k, c FROM s WHERE c > 0 ALLOW FILTERING", "2|1\n2|2\n");
    rows("SELECT count(*) FROM s", "3\n");
    rows("SELECT k, c, st FROM s", "1|null|5\n2|1|6\n2|2|6\n");
    rows("SELECT count(*) FROM s WHERE k = 2", "2\n");
}

Test(exec_select, aggregates_and_group_by)
{
    mkks();
    ok("CREATE TABLE a (k int, c int, i int, b bigint, d double, f float, t text, vi varint, de decimal, PRIMARY KEY (k, c))");
    ok("INSERT INTO a (k, c, i, b, d, f, t, vi, de) VALUES (1, 1, 1, 10, 1.5, 0.5, 'x', 100, 1.5)");
    ok("INSERT INTO a (k, c, i, b, d, f, t, vi, de) VALUES (1, 2, 2, 20, 2.5, 1.5, 'y', 200, 2.5)");
    ok("INSERT INTO a (k, c, i, b, d, f, t) VALUES (1, 3, 4, 30, 3.0, 2.0, 'a')");
    ok("INSERT INTO a (k, c) VALUES (2, 1)");
    result("SELECT count(*), count(i), min(i), max(i), sum(i), avg(i) FROM a WHERE k = 1",
           "count|system.count(i)|system.min(i)|system.max(i)|system.sum(i)|system.avg(i)\n3|3|1|4|7|2\n");
    rows("SELECT sum(b), avg(b), sum(d), avg(d), min(t), max(t) FROM a WHERE k = 1", "60|20|7.0|2.3333333333333335|'a'|'y'\n");
    rows("SELECT sum(vi), avg(de) FROM a WHERE k = 1", "300|2.0\n");
    rows("SELECT count(*), min(i), sum(i) FROM a WHERE k = 3", "0|null|0\n");
    cr_assert_str_eq(g_warn, "");
    rows("SELECT k, count(*) FROM a GROUP BY k", "1|3\n2|1\n");
    cr_assert_str_eq(g_warn, "Aggregation query used without partition key\n");
    rows("SELECT count(*) FROM a WHERE k IN (1, 2)", "4\n");
    cr_assert_str_eq(g_warn, "Aggregation query used on multiple partition keys (IN restriction)\n");
    rows("SELECT k, c, max(i) FROM a WHERE k = 1 GROUP BY k, c LIMIT 2", "1|1|1\n1|2|2\n");
    fails("SELECT sum(t) FROM a", "Invalid call to function sum");
    fails("SELECT k, count(*) FROM a GROUP BY c", "Group by currently only support groups of columns following their declared order in the PRIMARY KEY");
    fails("SELECT k, count(*) FROM a GROUP BY i", "Group by is currently only supported on the columns of the PRIMARY KEY, got i");
}

Test(exec_select, functions_writetime_ttl_json)
{
    mkks();
    ok("CREATE TABLE fn (k int PRIMARY KEY, v int, t text, ts timestamp, u timeuuid)");
    ok("INSERT INTO fn (k, v, t, ts, u) VALUES (1, 5, 'hi', '2021-01-02 03:04:05+0000', now()) USING TIMESTAMP 1234 AND TTL 1000");
    rows("SELECT writetime(v) FROM fn WHERE k = 1", "1234\n");
    static char out[4096];
    cr_assert_eq(run("SELECT ttl(v) FROM fn WHERE k = 1", NULL, out, sizeof out), 0);
    int ttl = atoi(body_of(out));
    cr_assert(ttl > 990 && ttl <= 1000, "ttl %d", ttl);
    rows("SELECT toJson(t), toJson(v) FROM fn WHERE k = 1", "'\"hi\"'|'5'\n");
    result("SELECT JSON k, t FROM fn WHERE k = 1", "[json]\n'{\"k\": 1, \"t\": \"hi\"}'\n");
    rows("SELECT JSON k AS \"Key\", count(*) FROM fn WHERE k = 1", "'{\"\\\"Key\\\"\": 1, \"count\": 1}'\n");
    rows("SELECT toUnixTimestamp(ts) FROM fn WHERE k = 1", "1609556645000\n");
    rows("SELECT CAST(v AS text), CAST(v AS double) FROM fn WHERE k = 1", "'5'|5.0\n");
    rows("SELECT blobAsInt(intAsBlob(v)) FROM fn WHERE k = 1", "5\n");
    ok("INSERT INTO fn (k, v, t, ts) VALUES (2, fromJson('7'), fromJson('\"x\"'), toTimestamp(now()))");
    rows("SELECT v, t FROM fn WHERE k = 2", "7|'x'\n");
    rows("SELECT k FROM fn WHERE k = 2 AND ts <= currentTimestamp() AND ts > '2020-01-01' ALLOW FILTERING", "2\n");
    fails("INSERT INTO fn (k, v) VALUES (3, fromJson('\"x\"'))", "");
    fails("SELECT nosuchfn(v) FROM fn", "Unknown function 'nosuchfn'");
    fails("SELECT toTimestamp(v, v) FROM fn", "Invalid number of arguments in call to function system.totimestamp: 1 required but 2 provided");
    result("SELECT v + 1, v * 2, v - 10, v / 2, v % 3, -v FROM fn WHERE k = 1",
           "v + 1|v * 2|v - 10|v / 2|v % 3|-v\n6|10|-5|2|2|-5\n");
    rows("SELECT v + 1.5 FROM fn WHERE k = 1", "6.5\n");
    fails("SELECT v / 0 FROM fn WHERE k = 1", "/ by zero");
    result("SELECT 1, 'a', (bigint)2 FROM fn WHERE k = 1", "1|'a'|(bigint)2\n1|'a'|2\n");
    {
        cql_result r;
        cql_result_init(&r);
        cs_error_init(&g_err);
        cr_assert_neq(cql_prepare(g_ctx, &g_sess, "SELECT ? FROM fn", 16, NULL, &r, &g_err), 0);
        cr_assert_str_eq(g_err.msg, "Cannot infer type for term ? in selection clause (try using a cast to force a type)");
        cql_result_destroy(&r);
    }
    rows("SELECT k FROM fn WHERE k = 1 AND u < now() ALLOW FILTERING", "1\n");
    rows("SELECT k FROM fn WHERE k = 1 AND u > maxTimeuuid('2030-01-01 00:00+0000') ALLOW FILTERING", "");
}

Test(exec_select, paging_every_shape)
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

static void prepare(const char *q, uint8_t id[16], char *meta, size_t n)
{
    cql_result r;
    cql_result_init(&r);
    cs_error_init(&g_err);
    int rc = cql_prepare(g_ctx, &g_sess, q, strlen(q), NULL, &r, &g_err);
    cr_assert_eq(rc, 0, "prepare %s -> %s", q, g_err.msg);
    cs_rd rd;
    cs_rd_init(&rd, r.body.p, r.body.len);
    cr_assert_eq(cs_rd_u32(&rd), 4);
    cr_assert_eq(cs_rd_u16(&rd), 16);
    memcpy(id, cs_rd_take(&rd, 16), 16);
    /* bind metadata: flags, count, pk_count, pk indexes, [global], specs */
    uint32_t flags = cs_rd_u32(&rd);
    int cnt = (int)cs_rd_u32(&rd);
    int pkc = (int)cs_rd_u32(&rd);
    size_t len = 0, sl;
    len += (size_t)snprintf(meta + len, n - len, "pk:");
    for (int i = 0; i < pkc; i++)
        len += (size_t)snprintf(meta + len, n - len, "%d,", cs_rd_u16(&rd));
    if (flags & 1) { cs_rd_string(&rd, &sl); cs_rd_string(&rd, &sl); }
    len += (size_t)snprintf(meta + len, n - len, " binds:");
    for (int i = 0; i < cnt; i++) {
        if (!(flags & 1)) { cs_rd_string(&rd, &sl); cs_rd_string(&rd, &sl); }
        const char *nm = cs_rd_string(&rd, &sl);
        ctype *t = ctype_decode_option(&rd);
        cs_buf b;
        cs_buf_init(&b);
        if (t) ctype_to_cql(t, &b);
        len += (size_t)snprintf(meta + len, n - len, "%.*s:%.*s,", (int)sl, nm, (int)b.len, (char *)b.p);
        cs_buf_destroy(&b);
        if (t) ctype_unref(t);
    }
    /* result metadata */
    uint32_t rflags = cs_rd_u32(&rd);
    int rcnt = (int)cs_rd_u32(&rd);
    len += (size_t)snprintf(meta + len, n - len, " result:%u/%d", rflags, rcnt);
    cr_assert_eq(rd.err, 0);
    cql_result_destroy(&r);
}

static cql_value ival(uint8_t *buf, int32_t v)
{
    cs_st32(buf, (uint32_t)v);
    return (cql_value){ buf, 4 };
}

Test(exec_select, prepared_statements)
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
    /* prepare refusals */
    cql_result r;
    cql_result_init(&r);
    cs_error_init(&g_err);
    cr_assert_neq(cql_prepare(g_ctx, &g_sess, "SELECT x FROM t", 15, NULL, &r, &g_err), 0);
    cr_assert_str_eq(g_err.msg, "Undefined column name x");
    cql_result_destroy(&r);
}

Test(exec_select, tombstone_thresholds)
{
    mkks();
    ok("CREATE TABLE tb (k int, c int, v int, PRIMARY KEY (k, c))");
    for (int c = 0; c < 30; c++) {
        char q[200];
        snprintf(q, sizeof q, "INSERT INTO tb (k, c, v) VALUES (1, %d, 1)", c);
        ok(q);
        snprintf(q, sizeof q, "DELETE FROM tb WHERE k = 1 AND c = %d", c);
        ok(q);
    }
    ok("INSERT INTO tb (k, c, v) VALUES (1, 100, 1)");
    g_ctx->cfg.tombstone_warn_threshold = 10;
    g_ctx->cfg.tombstone_failure_threshold = 1000;
    rows("SELECT c FROM tb WHERE k = 1", "100\n");
    cr_assert(strstr(g_warn, "Read 1 live rows and ") && strstr(g_warn, "tombstone cells for query SELECT c FROM tb WHERE k = 1; token -4069959284402364209"),
              "warning: %s", g_warn);
    g_ctx->cfg.tombstone_failure_threshold = 20;
    cr_assert_neq(run("SELECT c FROM tb WHERE k = 1", NULL, NULL, 0), 0);
    cr_assert_eq(g_err.code, CS_ERR_READ_FAILURE);
    cr_assert_eq(g_err.numfailures, 1);
    cr_assert_eq(g_err.blockfor, 1);
}

Test(exec_select, secondary_index_restrictions)
{
    mkks();
    ok("CREATE TABLE ix (k int, c int, v int, w int, s set<int>, PRIMARY KEY (k, c))");
    ok("CREATE INDEX ON ix (v)");
    ok("CREATE INDEX ON ix (values(s))");
    ok("INSERT INTO ix (k, c, v, w, s) VALUES (1, 1, 5, 1, {1, 2})");
    ok("INSERT INTO ix (k, c, v, w, s) VALUES (2, 1, 5, 2, {3})");
    ok("INSERT INTO ix (k, c, v, w) VALUES (2, 2, 6, 2)");
    rows("SELECT k, c FROM ix WHERE v = 5", "1|1\n2|1\n");
    rows("SELECT k, c FROM ix WHERE k = 2 AND v = 5", "2|1\n");
    rows("SELECT k, c FROM ix WHERE s CONTAINS 3", "2|1\n");
    fails("SELECT k, c FROM ix WHERE v = 5 AND w = 1", "ALLOW FILTERING");
    fails("SELECT k, c FROM ix WHERE v > 5", "ALLOW FILTERING");
    fails("SELECT k, c FROM ix WHERE w = 1", "ALLOW FILTERING");
}

Test(exec_select, virtual_tables)
{
    mkks();
    fill_kcv();
    rows("SELECT key, cluster_name FROM system.local WHERE key = 'local'", "'local'|'Test Cluster'\n");
    rows("SELECT key FROM system.local WHERE key = 'nope'", "");
    rows("SELECT column_name, kind FROM system_virtual_schema.columns WHERE keyspace_name = 'system_views' AND table_name = 'clients' AND column_name < 'd'",
         "'address'|'partition_key'\n'client_options'|'regular'\n'connection_stage'|'regular'\n");
    rows("SELECT column_name FROM system_virtual_schema.columns WHERE keyspace_name = 'system_views' AND table_name = 'clients' AND column_name IN ('port', 'hostname')",
         "'hostname'\n'port'\n");
    paged_equals("SELECT * FROM system_virtual_schema.columns", 7);
    paged_equals("SELECT keyspace_name, table_name FROM system_virtual_schema.tables", 3);
    rows("SELECT count(*) FROM system_virtual_schema.columns WHERE keyspace_name = 'system_views' AND table_name = 'clients'", "13\n");
}

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

Test(exec_select, random_queries_against_model)
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
        bool multi_in = kmode == 2 && (kin[0] != kin[1] || kin[1] != kin[2]);
        if (rev && !multi_in) ql += (size_t)snprintf(q + ql, sizeof q - ql, " ORDER BY c1 DESC");
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

/* Fail the Nth allocation of a SELECT for N = 1, 2, ...: every run either
 * succeeds or reports an error; nothing crashes or leaks. */
Test(exec_select, allocation_failures)
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

/* Paging resumes by key, not by position: rows inserted behind the cursor
 * are not seen, rows inserted ahead are, and deleting the last returned row
 * or partition does not lose the place (the seed article's scenario). */
Test(exec_select, paging_while_writing)
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

/* Views are maintained by the index module (index_maint.c); reads go
 * through the view's own storage like any table. */
Test(exec_select, materialized_view_reads)
{
    mkks();
    ok("CREATE TABLE base (k int, c int, v int, w text, PRIMARY KEY (k, c))");
    ok("CREATE MATERIALIZED VIEW bv AS SELECT * FROM base WHERE v IS NOT NULL AND k IS NOT NULL AND c IS NOT NULL "
       "PRIMARY KEY (v, k, c) WITH CLUSTERING ORDER BY (k DESC, c ASC)");
    ok("CREATE MATERIALIZED VIEW bw AS SELECT k, c, w FROM base WHERE w IS NOT NULL AND k IS NOT NULL AND c IS NOT NULL "
       "PRIMARY KEY (w, k, c)");
    ok("INSERT INTO base (k, c, v, w) VALUES (0, 1, 10, 'a')");
    ok("INSERT INTO base (k, c, v, w) VALUES (1, 1, 10, 'a')");
    ok("INSERT INTO base (k, c, v) VALUES (1, 2, 20)");
    ok("INSERT INTO base (k, c, w) VALUES (2, 1, 'b')");
    result("SELECT * FROM bv WHERE v = 10", "v|k|c|w\n10|1|1|'a'\n10|0|1|'a'\n");
    rows("SELECT k, c FROM bv WHERE v = 10 ORDER BY k ASC", "0|1\n1|1\n");
    rows("SELECT k, c FROM bv WHERE v = 20", "1|2\n");
    rows("SELECT count(*) FROM bv", "3\n");
    rows("SELECT w, k FROM bw WHERE w = 'a'", "'a'|0\n'a'|1\n");
    rows("SELECT w, k, c FROM bw WHERE w IN ('b', 'a')", "'a'|0|1\n'a'|1|1\n'b'|2|1\n");
    paged_equals("SELECT * FROM bv", 1);
    ok("UPDATE base SET v = 20 WHERE k = 0 AND c = 1");
    rows("SELECT k, c FROM bv WHERE v = 20", "1|2\n0|1\n");
}

/* Random (mostly invalid) SELECTs over a table with every kind of column:
 * each one either answers or fails with a message; nothing crashes. */
Test(exec_select, random_select_shapes_never_crash)
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
