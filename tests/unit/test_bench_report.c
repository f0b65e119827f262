/*
 * test_bench_report.c: the bench report's number formatting, axis ticks and
 * partition limits (bench/report_fmt.h), and the HTML page
 * (bench_report_html) written from hand-made results: a partition over the
 * byte limit is flagged, strings from profiles and the server are escaped
 * (markup and invalid UTF-8), and results with no ticks, no operations or
 * no partitions still give a page.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/report_fmt.h"
#include "bench/run.h"
#include "common/alloc.h"

static size_t allocs_at_start;
static void setup(void) { allocs_at_start = cs_alloc_count(); }
static void teardown(void) { cr_assert_eq(cs_alloc_count(), allocs_at_start, "leak"); }
TestSuite(bench_report, .init = setup, .fini = teardown);

#define FMT(fn, v, want)                                                                                     \
    do {                                                                                                     \
        char out_[48];                                                                                       \
        cr_expect_str_eq(fn(v, out_, sizeof(out_)), want, "%s(%s)", #fn, #v);                                \
    } while (0)

Test(bench_report, si)
{
    FMT(bench_fmt_si, 0, "0");
    FMT(bench_fmt_si, 0.541, "0.541");
    FMT(bench_fmt_si, 0.0054, "0.0054");
    FMT(bench_fmt_si, 42, "42");
    FMT(bench_fmt_si, 999, "999");
    FMT(bench_fmt_si, 999.6, "1k");
    FMT(bench_fmt_si, 1000, "1k");
    FMT(bench_fmt_si, 1234, "1.23k");
    FMT(bench_fmt_si, 40761.7, "40.8k");
    FMT(bench_fmt_si, 952024, "952k");
    FMT(bench_fmt_si, 1.5e6, "1.5M");
    FMT(bench_fmt_si, 3.4e9, "3.4G");
    FMT(bench_fmt_si, -2500, "-2.5k");
    FMT(bench_fmt_si, NAN, "n/a");
}

Test(bench_report, bytes)
{
    FMT(bench_fmt_bytes, 0, "0 B");
    FMT(bench_fmt_bytes, 512, "512 B");
    FMT(bench_fmt_bytes, 1023, "1023 B");
    FMT(bench_fmt_bytes, 1024, "1 KiB");
    FMT(bench_fmt_bytes, 1536, "1.5 KiB");
    FMT(bench_fmt_bytes, 45144, "44.1 KiB");
    FMT(bench_fmt_bytes, 1048576, "1 MiB");
    FMT(bench_fmt_bytes, 1855000, "1.77 MiB");
    FMT(bench_fmt_bytes, 100.0 * (1 << 20), "100 MiB");
    FMT(bench_fmt_bytes, 1073741824.0 * 2, "2 GiB");
}

Test(bench_report, ms_count_ratio)
{
    FMT(bench_fmt_ms, 0, "0 ms");
    FMT(bench_fmt_ms, 0.054, "54 \xc2\xb5s");
    FMT(bench_fmt_ms, 0.541, "0.541 ms");
    FMT(bench_fmt_ms, 4.3254, "4.33 ms");
    FMT(bench_fmt_ms, 43.3, "43.3 ms");
    FMT(bench_fmt_ms, 1234, "1.23 s");
    FMT(bench_fmt_count, 0, "0");
    FMT(bench_fmt_count, 999, "999");
    FMT(bench_fmt_count, 1881, "1,881");
    FMT(bench_fmt_count, 100000, "100,000");
    FMT(bench_fmt_count, 1234567, "1,234,567");
    FMT(bench_fmt_ratio, 1.17, "1.17x");
    FMT(bench_fmt_ratio, 7.5, "7.5x");
    FMT(bench_fmt_ratio, 1200, "1.2kx");
}

static void axis_is(double data_max, int ticks, double step, double max, const char *top_label)
{
    bench_axis ax;
    bench_axis_nice(data_max, ticks, &ax);
    cr_expect_float_eq(ax.step, step, step * 1e-9, "step for %g: %g", data_max, ax.step);
    cr_expect_float_eq(ax.max, max, max * 1e-9, "max for %g: %g", data_max, ax.max);
    cr_expect_geq(ax.max, data_max > 0 && isfinite(data_max) ? data_max : 1);
    cr_expect_leq(ax.n, ticks);
    /* 1, 2 or 5 times a power of ten */
    double m = ax.step / pow(10, floor(log10(ax.step)));
    cr_expect(fabs(m - 1) < 1e-9 || fabs(m - 2) < 1e-9 || fabs(m - 5) < 1e-9, "step %g", ax.step);
    char lab[32];
    cr_expect_str_eq(bench_axis_label(&ax, ax.max, lab, sizeof(lab)), top_label);
    cr_expect_str_eq(bench_axis_label(&ax, 0, lab, sizeof(lab)), "0");
}

Test(bench_report, nice_axes)
{
    axis_is(5.77, 5, 2, 6, "6");
    axis_is(4.33, 5, 1, 5, "5");
    axis_is(0.35, 5, 0.1, 0.4, "0.4");
    axis_is(1.51, 5, 0.5, 2, "2.0");
    axis_is(95198, 5, 20000, 100000, "100k");
    axis_is(56000, 5, 20000, 60000, "60k");
    axis_is(2000, 5, 500, 2000, "2000");
    axis_is(1.2e6, 5, 500000, 1.5e6, "1.5M");
    axis_is(100, 5, 20, 100, "100");
    axis_is(0.008, 5, 0.002, 0.008, "0.008");
    axis_is(0, 5, 0.2, 1, "1.0");
    axis_is(NAN, 5, 0.2, 1, "1.0");
    axis_is(7, 1, 10, 10, "10");
    bench_axis ax;
    bench_axis_nice(1.51, 5, &ax);
    char lab[32];
    cr_expect_str_eq(bench_axis_label(&ax, 1.5, lab, sizeof(lab)), "1.5");
    bench_axis_nice(95198, 5, &ax);
    cr_expect_str_eq(bench_axis_label(&ax, 40000, lab, sizeof(lab)), "40k");
    /* whole numbers: no half seconds */
    bench_axis_int(3, 10, &ax);
    cr_expect_float_eq(ax.step, 1, 1e-12);
    cr_expect_float_eq(ax.max, 3, 1e-12);
    bench_axis_int(30, 10, &ax);
    cr_expect_float_eq(ax.step, 5, 1e-12);
    cr_expect_float_eq(ax.max, 30, 1e-12);
}

Test(bench_report, partition_limits)
{
    cr_expect_eq(bench_part_over(100000, 100ull << 20), 0);
    cr_expect_eq(bench_part_over(100001, 0), BENCH_OVER_ROWS);
    cr_expect_eq(bench_part_over(1, (100ull << 20) + 1), BENCH_OVER_BYTES);
    cr_expect_eq(bench_part_over(1000000, 1ull << 30), BENCH_OVER_ROWS | BENCH_OVER_BYTES);
}

/* ------------------------------------------------------------ the page */

/* A result with n_ops operations, n_ticks seconds, a partition picture of
 * `parts` partitions whose largest has max_rows rows and max_bytes bytes. */
static void fake(bench_result *r, const char *scheme, const char *desc, int n_ops, int n_ticks, size_t parts,
                 uint64_t max_rows, uint64_t max_bytes)
{
    memset(r, 0, sizeof(*r));
    r->scheme = cs_strdup(scheme);
    r->description = cs_strdup(desc);
    r->table = cs_strdup("ks.t");
    r->elapsed_s = n_ticks;
    r->n_ops = n_ops;
    r->ops = cs_calloc((size_t)n_ops + 1, sizeof(bench_op_result));
    for (int i = 0; i < n_ops; i++) {
        r->ops[i].name = cs_strdup(i ? "read" : "insert");
        bench_hist_init(&r->ops[i].hist);
        for (int k = 1; k <= 1000; k++)
            bench_hist_record(&r->ops[i].hist, (uint64_t)k * 1000 * (i + 1));
        r->ops[i].ok = 1000;
        r->ops[i].throughput = 1000.0 / (n_ticks ? n_ticks : 1);
        r->total_ok += 1000;
    }
    r->throughput = (double)r->total_ok / (n_ticks ? n_ticks : 1);
    r->n_ticks = n_ticks;
    r->ticks = cs_calloc((size_t)n_ticks + 1, sizeof(bench_tick));
    for (int i = 0; i < n_ticks; i++)
        r->ticks[i] = (bench_tick){ i + 1.0, 1000.0 + i, 500000, 2000000 + 100000 * (uint64_t)i, 3000000 };
    r->size_hist_rows = cs_calloc(40, sizeof(uint64_t));
    r->size_hist_bytes = cs_calloc(40, sizeof(uint64_t));
    r->parts.count = parts;
    if (parts) {
        r->parts.rows_p50 = r->parts.rows_p99 = r->parts.rows_max = max_rows;
        r->parts.bytes_p50 = r->parts.bytes_p99 = r->parts.bytes_max = max_bytes;
        r->size_hist_rows[63 - __builtin_clzll(max_rows)] = parts;
        r->size_hist_bytes[63 - __builtin_clzll(max_bytes)] = parts;
        r->parts.total_ops = r->total_ok;
        r->parts.n_top = 1;
        r->parts.top = cs_calloc(1, sizeof(part_stat));
        r->parts.top[0] = (part_stat){ 1, 42, max_bytes, r->total_ok / parts, (uint32_t)max_rows };
        r->top_keys = cs_calloc(2, sizeof(char *));
        r->top_keys[0] = cs_strdup("0x00000001");
        r->ring_ops = (bench_ring_result){ .nodes = 3, .vnodes = 4, .rf = 1, .max_load = 3, .mean_load = 2 };
        r->ring_ops.node_load = cs_calloc(3, sizeof(double));
        r->ring_ops.node_load[0] = 3;
        r->ring_ops.node_load[1] = 2;
        r->ring_ops.node_load[2] = 1;
        r->ring_ops.max_over_mean = 1.5;
    }
}

static void add_kind(bench_kind_count **k, int *n, const char *kind, uint64_t count)
{
    *k = cs_realloc(*k, sizeof(**k) * (size_t)(*n + 1));
    (*k)[*n].kind = cs_strdup(kind);
    (*k)[*n].count = count;
    (*n)++;
}

/* The page for rs as a NUL-terminated string (caller frees with free()). */
static char *page(bench_result *rs, int n)
{
    char path[] = "/tmp/test_bench_report_XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    bench_opts o = { .host = "127.0.0.1",
                     .port = 9042,
                     .connections = 1,
                     .concurrency = 1,
                     .nodes = 3,
                     .vnodes = 4,
                     .rf = 1 };
    cr_assert_eq(bench_report_html(path, rs, n, &o), 0);
    FILE *f = fopen(path, "rb");
    cr_assert(f);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    rewind(f);
    char *s = malloc((size_t)len + 1); /* raw-ok: test-side buffer, freed with free() */
    cr_assert_eq(fread(s, 1, (size_t)len, f), (size_t)len);
    s[len] = 0;
    fclose(f);
    unlink(path);
    return s;
}

/* The <td> of column col in the summary row of scheme (its opening tag). */
static const char *cell(const char *html, const char *scheme, const char *col)
{
    char row[128], key[64];
    snprintf(row, sizeof(row), "<tr data-scheme='%s'>", scheme);
    const char *r = strstr(html, row);
    cr_assert(r, "no summary row for %s", scheme);
    snprintf(key, sizeof(key), "data-col='%s'", col);
    const char *c = strstr(r, key);
    const char *end = strstr(r, "</tr>");
    cr_assert(c && c < end, "no %s cell for %s", col, scheme);
    return c;
}

static bool cell_has_class(const char *c, const char *cls)
{
    const char *close = strchr(c, '>');
    const char *k = strstr(c, "class='");
    if (!k || k > close)
        return false;
    const char *q = strchr(k + 7, '\'');
    size_t n = strlen(cls);
    for (const char *p = k + 7; p + n <= q; p++)
        if (!strncmp(p, cls, n) && (p[n] == ' ' || p + n == q) && (p == k + 7 || p[-1] == ' '))
            return true;
    return false;
}

Test(bench_report, page_flags_escapes_and_marks)
{
    bench_result rs[2];
    fake(&rs[0], "huge", "desc <script>alert('x')</script> & \"q\"", 2, 3, 10, 3, 200ull << 20);
    fake(&rs[1], "small", "", 1, 2, 1000, 5, 4096);
    add_kind(&rs[1].warnings, &rs[1].n_warnings, "read: bad \xff\xfe bytes <b>", 7);
    add_kind(&rs[1].errors, &rs[1].n_errors, "insert: 0x1100 timeout", 3);
    rs[1].total_errors = 3;
    char *html = page(rs, 2);
    /* escaped markup, replaced invalid UTF-8 */
    cr_expect_null(strstr(html, "<script>"));
    cr_expect(strstr(html, "desc &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;"));
    cr_expect(strstr(html, "bad \xef\xbf\xbd\xef\xbf\xbd bytes &lt;b&gt;"));
    cr_expect_null(strstr(html, "\xff"));
    /* the 200 MiB partition is over the byte limit, not the row limit */
    cr_expect(cell_has_class(cell(html, "huge", "bytes_max"), "over"));
    cr_expect(!cell_has_class(cell(html, "huge", "rows_max"), "over"));
    cr_expect(!cell_has_class(cell(html, "small", "bytes_max"), "over"));
    cr_expect(strstr(html, "<li class='bad' data-finding='over_limit' data-scheme='huge'>"));
    cr_expect(strstr(html, "<li class='bad' data-finding='errors' data-scheme='small'>"));
    cr_expect(strstr(html, "<li class='warn' data-finding='warnings' data-scheme='small'>"));
    /* best / worst: throughput, rows, errors */
    cr_expect(cell_has_class(cell(html, "huge", "ops_s"), "best"));
    cr_expect(cell_has_class(cell(html, "small", "ops_s"), "worst"));
    cr_expect(cell_has_class(cell(html, "small", "rows_max"), "worst"));
    cr_expect(cell_has_class(cell(html, "huge", "rows_max"), "best"));
    cr_expect(cell_has_class(cell(html, "small", "errors"), "worst"));
    cr_expect(!cell_has_class(cell(html, "huge", "partitions"), "best")); /* not compared */
    /* the figures behind the cells */
    const char *c = cell(html, "huge", "bytes_max");
    cr_expect(!strncmp(strstr(c, "data-v='"), "data-v='209715200'", 18));
    cr_expect(!strncmp(strchr(c, '>'), ">200 MiB !</td>", 15));
    c = cell(html, "small", "ops_s");
    cr_expect(!strncmp(strstr(c, "data-v='"), "data-v='500.0'", 14));
    cr_expect(!strncmp(strchr(c, '>'), ">500</td>", 9));
    /* every comparison chart names both schemes in its legend */
    int charts = 0;
    for (const char *p = html; (p = strstr(p, "<svg ")); p++) {
        const char *end = strstr(p, "</svg>");
        if (strncmp(p, "<svg xmlns='http://www.w3.org/2000/svg' class='chart cmp'", 57))
            continue;
        charts++;
        const char *a = strstr(p, "<g class='key' data-scheme='huge'>"),
                   *b = strstr(p, "<g class='key' data-scheme='small'>");
        cr_expect(a && a < end && b && b < end, "chart %d legend", charts);
    }
    cr_expect_eq(charts, 7);
    free(html); /* raw-ok */
    for (int i = 0; i < 2; i++)
        bench_result_destroy(&rs[i]);
}

/* Marks follow the published figure: two throughputs that both print as
 * 14999.1 (the JSON's and the cell's precision) are both the best. */
Test(bench_report, marks_ties_at_the_shown_precision)
{
    bench_result rs[3];
    const char *names[3] = { "a", "b", "c" };
    const double tput[3] = { 14999.0, 14999.14, 14999.06 };
    for (int i = 0; i < 3; i++) {
        fake(&rs[i], names[i], "", 1, 2, 10, 3, 4096);
        rs[i].throughput = tput[i];
    }
    char *html = page(rs, 3);
    cr_expect(cell_has_class(cell(html, "a", "ops_s"), "worst"));
    cr_expect(cell_has_class(cell(html, "b", "ops_s"), "best"));
    cr_expect(cell_has_class(cell(html, "c", "ops_s"), "best"));
    cr_expect(!strncmp(strstr(cell(html, "c", "ops_s"), "data-v='"), "data-v='14999.1'", 16));
    free(html); /* raw-ok */
    for (int i = 0; i < 3; i++)
        bench_result_destroy(&rs[i]);
}

Test(bench_report, page_of_nothing)
{
    /* no operations, no ticks, no partitions, one scheme: a page, no marks */
    bench_result r;
    fake(&r, "empty", "", 0, 0, 0, 0, 0);
    char *html = page(&r, 1);
    cr_expect(strstr(html, "</html>"));
    cr_expect(strstr(html, "no per-second samples"));
    cr_expect_null(strstr(html, "class='best'"));
    cr_expect_null(strstr(html, "class='worst'"));
    free(html); /* raw-ok */
    bench_result_destroy(&r);
}
