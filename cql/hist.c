/*
 * hist.c: Cassandra's decaying histograms, EstimatedHistogram arithmetic
 * and the five-minute meter (see hist.h for what each models).
 */
#include "cql/hist.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "cql/types.h"
#include "storage/storage.h"

#define NS_PER_S 1000000000ull
#define LANDMARK_RESET_NS (30ull * 60 * NS_PER_S)   /* LANDMARK_RESET_INTERVAL_IN_NS */
#define TICK_NS (5ull * NS_PER_S)                   /* Meter.TICK_INTERVAL */

/* ---------------------------------------------------------------- offsets */

static uint64_t off_timer[127], off_count[164], off_count0[165];
static pthread_once_t off_once = PTHREAD_ONCE_INIT;
/* The bucket of each value below SMALL_N, per kind: most values added are
 * small (latencies in µs, rows and tombstones per read), and a table
 * lookup saves the bisection over 127-165 offsets. */
#define SMALL_N 4096
static uint8_t small_timer[SMALL_N], small_count[SMALL_N], small_count0[SMALL_N];

int cql_hist_offsets_make(int size, bool zeros, uint64_t *out, int cap)
{
    int n = size + (zeros ? 1 : 0), i = 0;
    if (n > cap)
        n = cap;
    if (zeros && i < n)
        out[i++] = 0;
    if (i < n)
        st_hist_offsets(out + i, n - i);   /* the series storage's histograms use */
    return n;
}

static void offsets_once(void)
{
    cql_hist_offsets_make(127, false, off_timer, 127);   /* DecayingEstimatedHistogramReservoir.LOW_BUCKET_COUNT */
    cql_hist_offsets_make(164, false, off_count, 164);   /* DEFAULT_BUCKET_COUNT */
    cql_hist_offsets_make(164, true, off_count0, 165);
    for (int v = 0; v < SMALL_N; v++) {
        small_timer[v] = (uint8_t)cql_hist_index(off_timer, 127, v);
        small_count[v] = (uint8_t)cql_hist_index(off_count, 164, v);
        small_count0[v] = (uint8_t)cql_hist_index(off_count0, 165, v);
    }
}

const uint64_t *cql_hist_offsets(cql_hist_kind kind, int *n)
{
    pthread_once(&off_once, offsets_once);
    switch (kind) {
    case CQL_HIST_TIMER: *n = 127; return off_timer;
    case CQL_HIST_COUNT: *n = 164; return off_count;
    default: *n = 165; return off_count0;
    }
}

int cql_hist_index(const uint64_t *off, int n, int64_t v)
{
    /* Cassandra estimates the index from log1.2(v) and checks the next
     * bucket; both end on the first offset >= v, found here by bisection */
    uint64_t u = v < 0 ? 0 : (uint64_t)v;
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (off[mid] < u)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* ---------------------------------------------------------------- decaying reservoir */

/* forwardDecayWeight: exp(whole seconds since the landmark / mean lifetime). */
static double decay_weight(const cql_hist *h, uint64_t now_ns)
{
    static const double mean_lifetime_s = 60.0 / 0.69314718055994530942;   /* HALF_TIME / ln 2 */
    uint64_t s = now_ns > h->landmark_ns ? (now_ns - h->landmark_ns) / NS_PER_S : 0;
    return exp((double)s / mean_lifetime_s);
}

/* rescaleIfNeeded: past 30 minutes, divide the weights by the landmark's
 * weight and start again from now. */
static void rescale(cql_hist *h, uint64_t now_ns)
{
    if (now_ns <= h->landmark_ns || now_ns - h->landmark_ns <= LANDMARK_RESET_NS)
        return;
    double f = decay_weight(h, now_ns);
    for (int i = 0; i < CQL_HIST_MAX_BUCKETS; i++)
        h->decaying[i] = (uint64_t)llround((double)h->decaying[i] / f);
    h->landmark_ns = now_ns;
    h->weight = 0;
}

void cql_hist_init(cql_hist *h, cql_hist_kind kind, uint64_t now_ns)
{
    pthread_once(&off_once, offsets_once);   /* cql_hist_add reads the tables without it */
    memset(h, 0, sizeof *h);
    h->kind = (uint8_t)kind;
    h->landmark_ns = now_ns;
}

void cql_hist_add(cql_hist *h, int64_t value, uint64_t now_ns)
{
    rescale(h, now_ns);
    int i;
    if (value >= 0 && value < SMALL_N) {
        i = h->kind == CQL_HIST_TIMER ? small_timer[value] : h->kind == CQL_HIST_COUNT ? small_count[value]
                                                                                        : small_count0[value];
    } else {
        int n;
        const uint64_t *off = cql_hist_offsets((cql_hist_kind)h->kind, &n);
        i = cql_hist_index(off, n, value);
    }
    /* round(forwardDecayWeight(now)), the same for a whole second after
     * the landmark: kept with the second's bounds (no division per add) */
    if (!h->weight || now_ns < h->weight_from_ns || now_ns >= h->weight_to_ns) {
        uint64_t sec = now_ns > h->landmark_ns ? (now_ns - h->landmark_ns) / NS_PER_S : 0;
        h->weight_from_ns = now_ns > h->landmark_ns ? h->landmark_ns + sec * NS_PER_S : 0;   /* before it: second 0 */
        h->weight_to_ns = h->landmark_ns + (sec + 1) * NS_PER_S;
        h->weight = (uint64_t)llround(decay_weight(h, now_ns));
    }
    h->decaying[i] += h->weight;
    h->plain[i]++;
    h->count++;
}

void cql_hist_snapshot(cql_hist *h, uint64_t now_ns, cql_hist_snap *s)
{
    rescale(h, now_ns);
    s->off = cql_hist_offsets((cql_hist_kind)h->kind, &s->n);
    double f = decay_weight(h, now_ns);
    for (int i = 0; i <= s->n; i++)
        s->b[i] = (uint64_t)llround((double)h->decaying[i] / f);
}

/* Sum of the weights, the overflow bucket included (AbstractSnapshot.count). */
static uint64_t snap_count(const uint64_t *b, int n)
{
    uint64_t c = 0;
    for (int i = 0; i <= n; i++)
        c += b[i];
    return c;
}

double cql_hist_value(const cql_hist_snap *s, double q)
{
    return cql_ehist_percentile(s->off, s->b, s->n, q);
}

int64_t cql_hist_min(const cql_hist_snap *s) { return cql_ehist_min(s->off, s->b, s->n); }
int64_t cql_hist_max(const cql_hist_snap *s) { return cql_ehist_max(s->off, s->b, s->n); }

double cql_hist_mean(const cql_hist_snap *s)
{
    if (s->b[s->n])
        return NAN;
    uint64_t elements = 0, sum = 0;
    for (int i = 0; i < s->n; i++) {
        elements += s->b[i];
        sum += s->b[i] * s->off[i];
    }
    return (double)sum / (double)elements;   /* 0/0: NaN, as Java's */
}

/* ---------------------------------------------------------------- EstimatedHistogram */

double cql_ehist_percentile(const uint64_t *off, const uint64_t *counts, int n, double q)
{
    uint64_t want = (uint64_t)ceil((double)snap_count(counts, n) * q);
    if (want == 0)
        return 0;
    uint64_t seen = 0;
    for (int i = 0; i < n; i++) {
        seen += counts[i];
        if (seen >= want)
            return (double)off[i];
    }
    return 0;
}

int64_t cql_ehist_min(const uint64_t *off, const uint64_t *counts, int n)
{
    return (int64_t)st_hist_min(counts, off, n);
}

int64_t cql_ehist_max(const uint64_t *off, const uint64_t *counts, int n)
{
    return (int64_t)st_hist_max(counts, off, n);
}

/* ---------------------------------------------------------------- meter */

void cql_meter_init(cql_meter *m, uint64_t now_ns)
{
    memset(m, 0, sizeof *m);
    m->last_tick_ns = now_ns;
}

/* Meter.tickIfNecessary: one EWMA tick per whole 5 s since the last. */
static void meter_tick(cql_meter *m, uint64_t now_ns)
{
    if (now_ns <= m->last_tick_ns || now_ns - m->last_tick_ns <= TICK_NS)
        return;
    uint64_t age = now_ns - m->last_tick_ns, ticks = age / TICK_NS;
    m->last_tick_ns = now_ns - age % TICK_NS;
    const double alpha = 1.0 - exp(-5.0 / 60.0 / 5.0);   /* EWMA M5_ALPHA */
    /* the first tick takes the events counted; the others see none, each
     * multiplying the rate by (1 - alpha): done at once past a few */
    double instant = (double)m->uncounted / (double)TICK_NS;
    m->uncounted = 0;
    if (m->initialized)
        m->rate += alpha * (instant - m->rate);
    else {
        m->rate = instant;
        m->initialized = true;
    }
    if (ticks > 1)
        m->rate *= pow(1.0 - alpha, (double)(ticks - 1));
}

void cql_meter_mark(cql_meter *m, uint64_t n, uint64_t now_ns)
{
    meter_tick(m, now_ns);
    m->count += n;
    m->uncounted += n;
}

double cql_meter_rate5(cql_meter *m, uint64_t now_ns)
{
    meter_tick(m, now_ns);
    return m->rate * (double)NS_PER_S;
}

/* ---------------------------------------------------------------- rounding */

double cql_round3(double v)
{
    if (isnan(v) || isinf(v))
        return v;
    cs_buf b;
    cs_buf_init(&b);
    ctype_format_java_double(v, false, &b);   /* "[-]int.frac[E[-]exp]" */
    char s[64];
    size_t n = b.err || b.len >= sizeof s ? 0 : b.len;
    if (n)
        memcpy(s, b.p, n);
    s[n] = 0;
    cs_buf_destroy(&b);
    if (!n)
        return v;
    /* the digits and where the decimal point falls among them */
    const char *p = s;
    bool neg = *p == '-';
    if (neg)
        p++;
    char dig[64];
    int nd = 0, point = -1;
    for (; *p && *p != 'E'; p++) {
        if (*p == '.')
            point = nd;
        else if (nd < 40)
            dig[nd++] = *p;
    }
    if (point < 0)
        point = nd;
    if (*p == 'E')
        point += atoi(p + 1);
    /* keep the digits up to the third decimal; the next one rounds half up */
    int keep = point + 3;
    if (keep < 0)
        return neg ? -0.0 : 0.0;
    /* digits as an integer scaled by 10^3 */
    char num[96];
    int nn = 0;
    for (int i = 0; i < keep && nn < 90; i++)
        num[nn++] = i < nd ? dig[i] : '0';
    bool up = keep < nd && dig[keep] >= '5';
    if (up) {
        int i = nn - 1;
        while (i >= 0 && num[i] == '9')
            num[i--] = '0';
        if (i >= 0)
            num[i]++;
        else {
            memmove(num + 1, num, (size_t)nn);
            num[0] = '1';
            nn++;
        }
    }
    if (nn == 0)
        num[nn++] = '0';
    num[nn] = 0;
    char out[128];
    snprintf(out, sizeof out, "%s%se-3", neg ? "-" : "", num);
    double r = strtod(out, NULL);
    return r == 0 ? 0.0 * v : r;   /* MATH-1089: a negative rounded to zero stays -0.0 */
}
