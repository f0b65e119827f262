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

/* A number with an optional k/m/b suffix. Returns chars consumed or 0. */
static int parse_num(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s)
        return 0;
    if (end > s + 1 && end[-1] == '.' && end[0] == '.')
        end--;   /* "1..50": strtod took "1." */
    switch (tolower((unsigned char)*end)) {
    case 'k': v *= 1e3; end++; break;
    case 'm': v *= 1e6; end++; break;
    case 'b': v *= 1e9; end++; break;
    default: break;
    }
    *out = v;
    return (int)(end - s);
}

int bench_dist_parse(const char *text, bench_dist *d, char *err, size_t errlen)
{
    memset(d, 0, sizeof(*d));
    d->divisor = 1;
    char name[32];
    size_t i = 0;
    while (text[i] == ' ') text++;
    while (isalpha((unsigned char)text[i]) && i < sizeof(name) - 1) {
        name[i] = (char)tolower((unsigned char)text[i]);
        i++;
    }
    name[i] = 0;
    const char *p = text + i;
    if (*p != '(') {
        snprintf(err, errlen, "bad distribution '%s': expected NAME(args)", text);
        return -1;
    }
    p++;
    double a = 0, b = 0, c = 0;
    int n = parse_num(p, &a);
    if (!n) goto bad;
    p += n;
    bool range = false;
    if (p[0] == '.' && p[1] == '.') {
        p += 2;
        n = parse_num(p, &b);
        if (!n) goto bad;
        p += n;
        range = true;
    }
    bool has_c = false;
    if (*p == ',') {
        p++;
        n = parse_num(p, &c);
        if (!n) goto bad;
        p += n;
        has_c = true;
    }
    if (*p != ')') goto bad;
    p++;
    if (*p == '/') {
        double dv;
        n = parse_num(p + 1, &dv);
        if (!n || dv <= 0) goto bad;
        d->divisor = dv;
        p += 1 + n;
    }
    while (*p == ' ') p++;
    if (*p) goto bad;
    d->min = (int64_t)a;
    d->max = range ? (int64_t)b : (int64_t)a;
    if (d->max < d->min) goto bad;
    if (!strcmp(name, "fixed")) {
        d->kind = DIST_FIXED;
        d->max = d->min;
    } else if (!strcmp(name, "uniform")) {
        d->kind = DIST_UNIFORM;
    } else if (!strcmp(name, "gaussian") || !strcmp(name, "normal") || !strcmp(name, "gauss")) {
        d->kind = DIST_GAUSSIAN;
        d->param = has_c ? c : 3;   /* standard deviations covered by the range */
    } else if (!strcmp(name, "exp")) {
        d->kind = DIST_EXP;
    } else if (!strcmp(name, "extreme")) {
        d->kind = DIST_EXTREME;
        d->param = has_c ? c : 1.5;
    } else if (!strcmp(name, "zipf")) {
        d->kind = DIST_ZIPF;
        d->param = has_c ? c : 1.0;
        int64_t nn = d->max - d->min + 1;
        if (nn <= 10000000) {
            d->zipf_n = nn;
            d->zipf_cdf = cs_malloc(sizeof(double) * (size_t)nn);
            if (!d->zipf_cdf) goto bad;
            double sum = 0;
            for (int64_t k = 0; k < nn; k++)
                d->zipf_cdf[k] = (sum += 1.0 / pow((double)(k + 1), d->param));
            for (int64_t k = 0; k < nn; k++)
                d->zipf_cdf[k] /= sum;
        }
    } else if (!strcmp(name, "seq")) {
        d->kind = DIST_SEQ;
        d->seq_next = 0;
    } else {
        snprintf(err, errlen, "unknown distribution '%s' (fixed, uniform, gaussian, exp, extreme, zipf, seq)", name);
        return -1;
    }
    return 0;
bad:
    snprintf(err, errlen, "bad distribution '%s'", text);
    return -1;
}

void bench_dist_destroy(bench_dist *d)
{
    cs_free(d->zipf_cdf);
    d->zipf_cdf = NULL;
}

static int64_t clamp(const bench_dist *d, double v)
{
    int64_t x = (int64_t)llround(v);
    return x < d->min ? d->min : x > d->max ? d->max : x;
}

int64_t bench_dist_sample(bench_dist *d, bench_rng *r)
{
    int64_t span = d->max - d->min;
    switch (d->kind) {
    case DIST_FIXED:
        return d->min;
    case DIST_UNIFORM:
        return d->min + (int64_t)(bench_rng_next(r) % (uint64_t)(span + 1));
    case DIST_GAUSSIAN: {
        double u1 = bench_rng_double(r), u2 = bench_rng_double(r);
        double z = sqrt(-2 * log(u1 + 1e-300)) * cos(2 * M_PI * u2);
        double mean = (d->min + d->max) / 2.0, sd = span / (2.0 * d->param);
        return clamp(d, mean + z * sd);
    }
    case DIST_EXP: {
        /* mean at the lower third of the range, as a skewed "most small" shape */
        double lambda = 3.0 / (span + 1.0);
        return clamp(d, d->min - log(1 - bench_rng_double(r)) / lambda);
    }
    case DIST_EXTREME: {
        /* Weibull-like: heavy tail towards max */
        double u = bench_rng_double(r);
        double w = pow(-log(1 - u), 1.0 / d->param) / 3.0;
        return clamp(d, d->min + w * span);
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
        double s = d->param == 1.0 ? 1.0001 : d->param, n = (double)span + 1;
        double x = pow(u * (pow(n, 1 - s) - 1) + 1, 1 / (1 - s));
        return clamp(d, d->min + x - 1);
    }
    case DIST_SEQ:
        return d->min + (int64_t)(d->seq_next++ % (uint64_t)(span + 1));
    }
    return d->min;
}

double bench_dist_sample_ratio(bench_dist *d, bench_rng *r)
{
    return (double)bench_dist_sample(d, r) / d->divisor;
}

void bench_dist_describe(const bench_dist *d, char *out, size_t n)
{
    static const char *names[] = { "fixed", "uniform", "gaussian", "exp", "extreme", "zipf", "seq" };
    if (d->kind == DIST_FIXED)
        snprintf(out, n, "fixed(%lld)", (long long)d->min);
    else
        snprintf(out, n, "%s(%lld..%lld)", names[d->kind], (long long)d->min, (long long)d->max);
}
