/*
 * report_fmt.c: numbers as people read them (1.2k, 44.1 KiB, 4.33 ms),
 * 1-2-5 axis ticks, and the partition size limits of report_fmt.h.
 */
#include "bench/report_fmt.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

int bench_part_over(uint64_t rows, uint64_t bytes)
{
    return (rows > BENCH_LARGE_PARTITION_ROWS ? BENCH_OVER_ROWS : 0) |
           (bytes > BENCH_LARGE_PARTITION_BYTES ? BENCH_OVER_BYTES : 0);
}

/* x rounded to three significant digits (x >= 0). */
static double round3(double x)
{
    if (!(x > 0) || !isfinite(x))
        return 0;
    double scale = pow(10, 2 - floor(log10(x)));
    return round(x * scale) / scale;
}

/* Drop trailing zeros after a decimal point, and the point itself. */
static void trim_zeros(char *s)
{
    char *dot = strchr(s, '.');
    if (!dot)
        return;
    char *e = s + strlen(s);
    while (e > dot + 1 && e[-1] == '0')
        e--;
    if (e == dot + 1)
        e = dot;
    *e = 0;
}

/* x >= 0 with three significant digits and no exponent, then suffix. */
static char *sig3(double x, const char *suffix, char *out, size_t n)
{
    x = round3(x);
    int decimals = 0;
    if (x > 0 && x < 100)
        decimals = 2 - (int)floor(log10(x));
    if (decimals > 6) {
        decimals = 0;
        x = 0;
    }
    char num[48];
    snprintf(num, sizeof(num), "%.*f", decimals, x);
    trim_zeros(num);
    snprintf(out, n, "%s%s", num, suffix);
    return out;
}

/* Pick the unit (powers of base) in which v reads below base after
 * rounding, and print it with three significant digits. */
static char *scaled(double v, double base, const char *const *units, int n_units, const char *sep, char *out,
                    size_t n)
{
    const char *sign = "";
    if (v < 0) {
        sign = "-";
        v = -v;
    }
    if (!isfinite(v)) {
        snprintf(out, n, "%s", isnan(v) ? "n/a" : "inf");
        return out;
    }
    double u = 1;
    int i = 0;
    while (i + 1 < n_units && (v / u >= base || round3(v / u) >= base)) {
        u *= base;
        i++;
    }
    char suffix[16], body[48];
    snprintf(suffix, sizeof(suffix), "%s%s", *units[i] ? sep : "", units[i]);
    sig3(v / u, suffix, body, sizeof(body));
    snprintf(out, n, "%s%s", sign, body);
    return out;
}

char *bench_fmt_si(double v, char *out, size_t n)
{
    static const char *const units[] = { "", "k", "M", "G", "T" };
    return scaled(v, 1000, units, 5, "", out, n);
}

char *bench_fmt_bytes(double bytes, char *out, size_t n)
{
    static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
    if (bytes < 1024 && bytes > -1024) {
        snprintf(out, n, "%.0f B", bytes);
        return out;
    }
    return scaled(bytes, 1024, units, 5, " ", out, n);
}

char *bench_fmt_ms(double ms, char *out, size_t n)
{
    if (!isfinite(ms))
        snprintf(out, n, "n/a");
    else if (ms <= 0)
        snprintf(out, n, "0 ms");
    else if (round3(ms) < 0.1)
        sig3(ms * 1000, " \xc2\xb5s", out, n);
    else if (round3(ms) < 1000)
        sig3(ms, " ms", out, n);
    else
        sig3(ms / 1000, " s", out, n);
    return out;
}

char *bench_fmt_count(uint64_t v, char *out, size_t n)
{
    char digits[32], grouped[48];
    int nd = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)v);
    int j = 0;
    for (int i = 0; i < nd; i++) {
        if (i && (nd - i) % 3 == 0)
            grouped[j++] = ',';
        grouped[j++] = digits[i];
    }
    grouped[j] = 0;
    snprintf(out, n, "%s", grouped);
    return out;
}

char *bench_fmt_ratio(double r, char *out, size_t n)
{
    char num[32];
    bench_fmt_si(r, num, sizeof(num));
    snprintf(out, n, "%sx", num);
    return out;
}

void bench_axis_nice(double data_max, int max_ticks, bench_axis *ax)
{
    if (!(data_max > 0) || !isfinite(data_max))
        data_max = 1;
    if (max_ticks < 1)
        max_ticks = 1;
    double raw = data_max / max_ticks;
    double p = pow(10, floor(log10(raw)));
    static const double mult[] = { 1, 2, 5, 10 };
    double step = 10 * p;
    for (int i = 0; i < 4; i++)
        if (mult[i] * p >= raw * (1 - 1e-9)) {
            step = mult[i] * p;
            break;
        }
    memset(ax, 0, sizeof(*ax));
    ax->step = step;
    ax->n = (int)ceil(data_max / step - 1e-9);
    if (ax->n < 1)
        ax->n = 1;
    ax->max = ax->n * step;
    /* four-digit labels read fine (2000, 8000); above, k, M or G */
    static const char *const suffix[] = { "", "k", "M", "G" };
    int u = 0;
    ax->div = 1;
    if (ax->max >= 1e4)
        while (u < 3 && ax->max >= ax->div * 1000) {
            ax->div *= 1000;
            u++;
        }
    snprintf(ax->suffix, sizeof(ax->suffix), "%s", suffix[u]);
    double s = step / ax->div;
    ax->decimals = s >= 1 ? 0 : (int)ceil(-log10(s) - 1e-9);
    if (ax->decimals > 9)
        ax->decimals = 9;
}

void bench_axis_int(double data_max, int max_ticks, bench_axis *ax)
{
    bench_axis_nice(data_max, max_ticks, ax);
    if (ax->step < 1) {
        int n = (int)ceil(data_max - 1e-9);
        bench_axis_nice(n < 1 ? 1 : n, n < 1 ? 1 : n, ax);
    }
}

char *bench_axis_label(const bench_axis *ax, double v, char *out, size_t n)
{
    if (fabs(v) < ax->step * 1e-9) {
        snprintf(out, n, "0");
        return out;
    }
    snprintf(out, n, "%.*f%s", ax->decimals, v / ax->div, ax->suffix);
    return out;
}
