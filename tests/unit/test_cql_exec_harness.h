/*
 * test_cql_exec_harness.h: shared by the executor read-side tests
 * (test_cql_exec_select.c, _paging.c, _prepared.c, _random.c; owner
 * exec-read): a real engine and CQL context in a temp dir per test, request
 * helpers (run/ok/fails/rows/result/paged_equals/prepare), and a RESULT Rows
 * decoder that renders rows as "v1|v2|...\n" lines.  Every test ends with
 * the allocation count back where it started.
 */
#ifndef CS_TEST_CQL_EXEC_HARNESS_H
#define CS_TEST_CQL_EXEC_HARNESS_H
#pragma GCC diagnostic ignored "-Wunused-function"

#include <stdarg.h>
#include <time.h>

#include "test_cql_fixture.h"

static void setup(void) { fixture_setup("exec_select"); }
static void teardown(void) { fixture_teardown(); }

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
/* Append to out without running past outn (snprintf's return value is what
 * it wanted to write, so adding it blindly overflows once truncated). */
static void app(char *out, size_t outn, size_t *len, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void app(char *out, size_t outn, size_t *len, const char *fmt, ...)
{
    if (*len + 1 >= outn)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out + *len, outn - *len, fmt, ap);
    va_end(ap);
    if (n > 0)
        *len = *len + (size_t)n < outn ? *len + (size_t)n : outn - 1;
}

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
            app(out, outn, &len, "%s%.*s", i ? "|" : "", (int)n, nm);
            types[i] = ctype_decode_option(&rd);
        }
    }
    app(out, outn, &len, "\n");
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
            app(out, outn, &len, "%s%.*s", i ? "|" : "", (int)b.len, (char *)b.p);
            cs_buf_destroy(&b);
        }
        app(out, outn, &len, "\n");
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
    fixture_default_params(&p);
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
    fixture_take_warnings(&r);
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

/* ok() of a statement built from a printf format. */
static void okf(const char *fmt, ...) __attribute__((format(printf, 1, 2), unused));
static void okf(const char *fmt, ...)
{
    char q[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(q, sizeof q, fmt, ap);
    va_end(ap);
    ok(q);
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
        len += (size_t)snprintf(meta + len, n - len, "%.*s:%.*s,", (int)sl, nm, (int)b.len, b.p ? (char *)b.p : "");
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

#endif
