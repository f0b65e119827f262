/*
 * test_bench_report.c: the bench report's number formatting, axis ticks and
 * partition limits (bench/report_fmt.h).
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

#define FMT(fn, v, want)                                                                     \
    do {                                                                                     \
        char out_[48];                                                                       \
        cr_expect_str_eq(fn(v, out_, sizeof(out_)), want, "%s(%s)", #fn, #v);               \
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
