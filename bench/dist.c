/*
 * dist.c: random numbers and cassandra-stress style distributions.
 */
#include "bench/bench.h"
#include "common/alloc.h"
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ xoshiro256** */

void bench_rng_seed(bench_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = seed = bench_mix64(seed + (uint64_t)i);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t bench_rng_next(bench_rng *r)
{
    uint64_t *s = r->s;
    uint64_t res = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return res;
}

double bench_rng_double(bench_rng *r) { return (double)(bench_rng_next(r) >> 11) * 0x1.0p-53; }

/* ------------------------------------------------------------ parsing */

/* The number in [s, e), with an optional k/m/b suffix (OptionDistribution
 * .parseLong: 1k = 1000, 1m = 10^6, 1b = 10^9); spaces around it are fine. */
static bool parse_num(const char *s, const char *e, double *out)
{
    while (s < e && isspace((unsigned char)*s))
        s++;
    while (e > s && isspace((unsigned char)e[-1]))
        e--;
    size_t n = (size_t)(e - s);
    char tmp[64];
    if (n == 0 || n >= sizeof(tmp))
        return false;
    memcpy(tmp, s, n);
    tmp[n] = 0;
    double mul = 1;
    switch (tolower((unsigned char)tmp[n - 1])) {
    case 'k': mul = 1e3; tmp[--n] = 0; break;
    case 'm': mul = 1e6; tmp[--n] = 0; break;
    case 'b': mul = 1e9; tmp[--n] = 0; break;
    default: break;
    }
    char *end;
    double v = strtod(tmp, &end);
    if (end == tmp || *end || !isfinite(v))
        return false;
    *out = v * mul;
    return true;
}

/* "a..b" (stress splits on two or more dots) in [s, e). */
static bool parse_range(const char *s, const char *e, int64_t *lo, int64_t *hi)
{
    const char *dots = NULL;
    for (const char *p = s; p + 1 < e; p++)
        if (p[0] == '.' && p[1] == '.') {
            dots = p;
            break;
        }
    if (!dots)
        return false;
    const char *r = dots;
    while (r < e && *r == '.')
        r++;
    double a, b;
    if (!parse_num(s, dots, &a) || !parse_num(r, e, &b))
        return false;
    if (fabs(a) > 9e18 || fabs(b) > 9e18)
        return false;
    *lo = (int64_t)a;
    *hi = (int64_t)b;
    return true;
}

/* Weibull(shape, 1)'s inverse CDF at 1 - sqrt(1/span), which stress scales
 * every exp and extreme range by "to ensure all values are visitable":
 * (0.5 ln span)^(1/shape).  0 for spans below 2 (stress's scale is then
 * infinite and every sample is the maximum). */
static double visitable_quantile(double span, double shape)
{
    return span < 2 ? 0 : pow(0.5 * log(span), 1 / shape);
}

static int64_t offset_sample(const bench_dist *d, double x);

static int build_zipf(bench_dist *d)
{
    int64_t nn = d->max - d->min + 1;
    if (nn > 10000000)
        return 0;
    d->zipf_n = nn;
    d->zipf_cdf = cs_malloc(sizeof(double) * (size_t)nn);
    if (!d->zipf_cdf)
        return -1;
    double sum = 0;
    for (int64_t k = 0; k < nn; k++)
        d->zipf_cdf[k] = (sum += 1.0 / pow((double)(k + 1), d->param));
    for (int64_t k = 0; k < nn; k++)
        d->zipf_cdf[k] /= sum;
    return 0;
}

int bench_dist_parse(const char *text, bench_dist *d, char *err, size_t errlen)
{
    memset(d, 0, sizeof(*d));
    d->divisor = 1;
    const char *t = text;
    while (isspace((unsigned char)*t))
        t++;
    if (*t == '~') {
        d->inverted = true;
        t++;
    }
    char name[32];
    size_t i = 0;
    while (isalpha((unsigned char)t[i]) && i < sizeof(name) - 1) {
        name[i] = (char)tolower((unsigned char)t[i]);
        i++;
    }
    name[i] = 0;
    const char *open = t + i, *close = strrchr(t, ')');
    if (*open != '(' || !close || close < open) {
        snprintf(err, errlen, "bad distribution '%s': expected NAME(args)", text);
        return -1;
    }
    /* after the arguments: nothing, or the ratio's "/D" */
    const char *p = close + 1;
    while (isspace((unsigned char)*p))
        p++;
    if (*p == '/') {
        const char *e = p + strlen(p);
        if (!parse_num(p + 1, e, &d->divisor) || d->divisor <= 0)
            goto bad;
    } else if (*p) {
        goto bad;
    }
    /* the comma-separated arguments */
    const char *arg[4], *arg_end[4];
    int n_args = 0;
    for (const char *a = open + 1; n_args < 4;) {
        const char *c = a;
        while (c < close && *c != ',')
            c++;
        arg[n_args] = a;
        arg_end[n_args++] = c;
        if (c == close)
            break;
        a = c + 1;
        if (n_args == 4)
            goto bad;
    }
    double x[4] = { 0, 0, 0, 0 };
    for (int k = 1; k < n_args; k++)
        if (!parse_num(arg[k], arg_end[k], &x[k]))
            goto bad;
    if (!strcmp(name, "fixed")) {
        if (n_args != 1 || !parse_num(arg[0], arg_end[0], &x[0]) || fabs(x[0]) > 9e18)
            goto bad;
        d->kind = DIST_FIXED;
        d->min = d->max = (int64_t)x[0];
        return 0;
    }
    if (!parse_range(arg[0], arg_end[0], &d->min, &d->max) || d->max < d->min)
        goto bad;
    double span = (double)(d->max - d->min);
    if (!strcmp(name, "uniform")) {
        if (n_args != 1) goto bad;
        d->kind = DIST_UNIFORM;
    } else if (!strcmp(name, "gaussian") || !strcmp(name, "normal") || !strcmp(name, "gauss") ||
               !strcmp(name, "norm")) {
        d->kind = DIST_GAUSSIAN;
        if (n_args == 3) {          /* (a..b, mean, stdev) */
            d->mean = x[1];
            d->sd = x[2];
        } else if (n_args <= 2) {   /* (a..b[, stdvrng]): the range covers stdvrng deviations each side */
            double stdvrng = n_args == 2 ? x[1] : 3;
            if (stdvrng <= 0) goto bad;
            d->mean = ((double)d->min + (double)d->max) / 2;
            d->sd = span / 2 / stdvrng;
        } else {
            goto bad;
        }
        if (d->sd < 0) goto bad;
    } else if (!strcmp(name, "exp")) {
        if (n_args != 1) goto bad;
        d->kind = DIST_EXP;
        double q = visitable_quantile(span, 1);
        d->scale = q > 0 ? span / q : INFINITY;
    } else if (!strcmp(name, "extreme") || !strcmp(name, "extr") || !strcmp(name, "weibull") ||
               !strcmp(name, "qextreme") || !strcmp(name, "qextr")) {
        bool quantized = name[0] == 'q';
        if (n_args != (quantized ? 3 : 2) && !(n_args == 1 && !quantized)) goto bad;
        d->kind = quantized ? DIST_QEXTREME : DIST_EXTREME;
        d->param = n_args >= 2 ? x[1] : 1.5;   /* cassette: the shape may be left out */
        if (d->param <= 0) goto bad;
        double q = visitable_quantile(span, d->param);
        d->scale = q > 0 ? span / q : INFINITY;
        if (quantized) {
            if (x[2] < 1 || x[2] > 1e6 || x[2] != floor(x[2])) goto bad;
            /* stress's DistributionQuantized: the bounds are the quantiles
             * i/quantas; a sample picks its quanta, then a uniform value in it */
            d->quantas = (int)x[2];
            d->q_bounds = cs_calloc((size_t)d->quantas + 1, sizeof(int64_t));
            if (!d->q_bounds) goto bad;
            d->q_bounds[0] = d->min;
            d->q_bounds[d->quantas] = d->max + 1;
            for (int k = 1; k < d->quantas; k++)
                d->q_bounds[k] = offset_sample(d, d->scale * pow(-log(1 - (double)k / d->quantas), 1 / d->param));
        }
    } else if (!strcmp(name, "zipf")) {
        if (n_args > 2) goto bad;
        d->kind = DIST_ZIPF;
        d->param = n_args == 2 ? x[1] : 1.0;
        if (d->param <= 0 || build_zipf(d)) goto bad;
    } else if (!strcmp(name, "seq")) {
        if (n_args != 1) goto bad;
        d->kind = DIST_SEQ;
        d->seq_next = 0;
    } else {
        snprintf(err, errlen, "unknown distribution '%s' (fixed, uniform, gaussian, exp, extreme, qextreme, zipf, seq)",
                 name);
        return -1;
    }
    if (d->min == d->max && d->kind != DIST_SEQ)
        d->kind = DIST_FIXED;   /* stress: min == max is fixed(min) */
    return 0;
bad:
    snprintf(err, errlen, "bad distribution '%s'", text);
    return -1;
}

void bench_dist_destroy(bench_dist *d)
{
    cs_free(d->zipf_cdf);
    d->zipf_cdf = NULL;
    cs_free(d->q_bounds);
    d->q_bounds = NULL;
}

/* ------------------------------------------------------------ sampling */

/* DistributionBoundApache.bound: truncated towards zero, then clamped. */
static int64_t bound_sample(const bench_dist *d, double v)
{
    if (isnan(v))
        return d->min;
    if (v <= (double)d->min)
        return d->min;
    if (v >= (double)d->max)
        return d->max;
    int64_t x = (int64_t)v;
    return x < d->min ? d->min : x > d->max ? d->max : x;
}

/* DistributionOffsetApache.offset: min + the truncated value, clamped to 0..max - min. */
static int64_t offset_sample(const bench_dist *d, double v)
{
    uint64_t delta = (uint64_t)(d->max - d->min);
    if (isnan(v) || v <= 0)
        return d->min;
    if (v >= (double)delta)
        return d->max;
    uint64_t x = (uint64_t)v;
    return d->min + (int64_t)(x > delta ? delta : x);
}

static double gauss_z(bench_rng *r)
{
    double u1 = 1 - bench_rng_double(r), u2 = bench_rng_double(r);
    return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

/* The underlying real-valued draw of exp and extreme (before the offset). */
static double weibull_draw(const bench_dist *d, bench_rng *r)
{
    double e = -log(1 - bench_rng_double(r));
    if (!isfinite(d->scale))
        return INFINITY;
    return d->kind == DIST_EXP ? d->scale * e : d->scale * pow(e, 1 / d->param);
}

/* One draw of d (DIST_SEQ: its first value; the callers step sequences). */
static int64_t sample_plain(const bench_dist *d, bench_rng *r)
{
    switch (d->kind) {
    case DIST_FIXED:
        return d->min;
    case DIST_UNIFORM:
        /* UniformRealDistribution(min, max + 1), bounded */
        return bound_sample(d, (double)d->min + bench_rng_double(r) * ((double)(d->max - d->min) + 1));
    case DIST_GAUSSIAN:
        return bound_sample(d, d->mean + gauss_z(r) * d->sd);
    case DIST_EXP:
    case DIST_EXTREME:
        return offset_sample(d, weibull_draw(d, r));
    case DIST_QEXTREME: {
        int64_t v = offset_sample(d, weibull_draw(d, r));
        int q = 0;
        while (q + 1 < d->quantas && d->q_bounds[q + 1] <= v)
            q++;
        int64_t lo = d->q_bounds[q], hi = d->q_bounds[q + 1];
        int64_t x = lo + (int64_t)(bench_rng_double(r) * (double)(hi - lo));
        return x < d->min ? d->min : x > d->max ? d->max : x;
    }
    case DIST_ZIPF: {
        double u = bench_rng_double(r);
        if (d->zipf_cdf) {
            int64_t lo = 0, hi = d->zipf_n - 1;
            while (lo < hi) {
                int64_t mid = (lo + hi) / 2;
                if (d->zipf_cdf[mid] < u) lo = mid + 1; else hi = mid;
            }
            return d->min + lo;
        }
        /* large ranges: continuous approximation of the inverse CDF */
        double s = d->param == 1.0 ? 1.0001 : d->param, n = (double)(d->max - d->min) + 1;
        double x = pow(u * (pow(n, 1 - s) - 1) + 1, 1 / (1 - s));
        return bound_sample(d, (double)d->min + x - 1);
    }
    case DIST_SEQ:
        return d->min;
    }
    return d->min;
}

static int64_t seq_at(const bench_dist *d, uint64_t i)
{
    return d->min + (int64_t)(i % ((uint64_t)(d->max - d->min) + 1));
}

int64_t bench_dist_sample(bench_dist *d, bench_rng *r)
{
    int64_t x = d->kind == DIST_SEQ ? seq_at(d, d->seq_next++) : sample_plain(d, r);
    return d->inverted ? d->max - (x - d->min) : x;
}

int64_t bench_dist_sample_seeded(const bench_dist *d, uint64_t seed)
{
    int64_t x;
    if (d->kind == DIST_FIXED) {
        x = d->min;
    } else if (d->kind == DIST_SEQ) {
        x = seq_at(d, seed);
    } else {
        bench_rng r;
        bench_rng_seed(&r, seed);
        x = sample_plain(d, &r);
    }
    return d->inverted ? d->max - (x - d->min) : x;
}

double bench_dist_sample_ratio(bench_dist *d, bench_rng *r)
{
    double lo = (double)d->min, hi = (double)d->max, x;
    switch (d->kind) {
    case DIST_UNIFORM:
        x = fmin(hi, lo + bench_rng_double(r) * (hi - lo + 1));
        break;
    case DIST_GAUSSIAN:
        x = fmax(lo, fmin(hi, d->mean + gauss_z(r) * d->sd));
        break;
    case DIST_EXP:
    case DIST_EXTREME: {
        double v = weibull_draw(d, r);
        x = lo + (isnan(v) || v < 0 ? 0 : fmin(v, hi - lo));
        break;
    }
    case DIST_SEQ:
        x = (double)seq_at(d, d->seq_next++);
        break;
    default:
        x = (double)sample_plain(d, r);
        break;
    }
    if (d->inverted)
        x = hi - (x - lo);
    x /= d->divisor;
    return x < 0 ? 0 : x > 1 ? 1 : x;
}

void bench_dist_describe(const bench_dist *d, char *out, size_t n)
{
    static const char *names[] = { "fixed", "uniform", "gaussian", "exp", "extreme", "qextreme", "zipf", "seq" };
    if (d->kind == DIST_FIXED)
        snprintf(out, n, "%sfixed(%lld)", d->inverted ? "~" : "", (long long)d->min);
    else
        snprintf(out, n, "%s%s(%lld..%lld)", d->inverted ? "~" : "", names[d->kind], (long long)d->min,
                 (long long)d->max);
}
