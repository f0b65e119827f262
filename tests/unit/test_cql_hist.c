/* Unit tests for cql/hist.c: Cassandra 4.1's bucket offsets, the decaying
 * reservoir's percentiles, min, max and mean, EstimatedHistogram's
 * arithmetic, the five-minute meter and the 3-decimal rounding of the
 * system_views metric tables.  Expected values follow the Java formulas
 * (EstimatedHistogram.newOffsets, DecayingEstimatedHistogramReservoir,
 * metrics-core EWMA, commons-math Precision.round). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "common/alloc.h"
#include "cql/hist.h"

#define S 1000000000ull   /* one second in ns */

Test(cql_hist, offsets_are_the_1_2_series)
{
    static const uint64_t head[] = { 1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 17, 20, 24, 29, 35, 42, 50, 60, 72,
                                     86, 103, 124, 149, 179, 215, 258, 310, 372, 446 };
    int n;
    const uint64_t *t = cql_hist_offsets(CQL_HIST_TIMER, &n);
    cr_assert_eq(n, 127);                                    /* LOW_BUCKET_COUNT */
    for (size_t i = 0; i < sizeof head / sizeof head[0]; i++)
        cr_assert_eq(t[i], head[i], "offset %zu: %llu", i, (unsigned long long)t[i]);
    cr_assert_eq(t[126], 21356903512ull);
    const uint64_t *c = cql_hist_offsets(CQL_HIST_COUNT, &n);
    cr_assert_eq(n, 164);                                    /* DEFAULT_BUCKET_COUNT */
    cr_assert_eq(c[0], 1);
    cr_assert_eq(c[163], 18165375903306ull);
    const uint64_t *z = cql_hist_offsets(CQL_HIST_COUNT0, &n);
    cr_assert_eq(n, 165);                                    /* a bucket for 0 first */
    cr_assert(z[0] == 0 && z[1] == 1 && z[2] == 2 && z[164] == 18165375903306ull);
    /* EstimatedHistogram(90), the default, and MetadataCollector's 118 */
    uint64_t o[200];
    cr_assert_eq(cql_hist_offsets_make(90, false, o, 200), 90);
    cr_assert_eq(o[89], 25109160ull);
    cr_assert_eq(cql_hist_offsets_make(118, false, o, 200), 118);
    cr_assert_eq(o[117], 4139110981ull);                     /* "can track a max value of 4139110981" */
    for (int i = 1; i < 118; i++)
        cr_assert_gt(o[i], o[i - 1]);
}

Test(cql_hist, index_is_the_first_offset_not_below)
{
    int n;
    const uint64_t *t = cql_hist_offsets(CQL_HIST_TIMER, &n);
    cr_assert_eq(cql_hist_index(t, n, 0), 0);
    cr_assert_eq(cql_hist_index(t, n, -5), 0);
    cr_assert_eq(cql_hist_index(t, n, 1), 0);
    cr_assert_eq(cql_hist_index(t, n, 8), 7);
    cr_assert_eq(cql_hist_index(t, n, 9), 8);               /* (8, 10] */
    cr_assert_eq(cql_hist_index(t, n, 10), 8);
    cr_assert_eq(cql_hist_index(t, n, 11), 9);
    cr_assert_eq(cql_hist_index(t, n, 21356903512ll), 126);
    cr_assert_eq(cql_hist_index(t, n, 21356903513ll), 127); /* overflow bucket */
}

Test(cql_hist, percentiles_min_max_of_one_to_hundred)
{
    cql_hist h;
    cql_hist_init(&h, CQL_HIST_TIMER, 5 * S);
    for (int v = 1; v <= 100; v++)
        cql_hist_add(&h, v, 5 * S);
    cql_hist_snap s;
    cql_hist_snapshot(&h, 5 * S, &s);
    cr_assert_eq(h.count, 100);
    cr_assert_eq(cql_hist_value(&s, 0.5), 50.0);             /* the 50th value, 50, is an offset */
    cr_assert_eq(cql_hist_value(&s, 0.75), 86.0);            /* 75 is in (72, 86] */
    cr_assert_eq(cql_hist_value(&s, 0.95), 103.0);
    cr_assert_eq(cql_hist_value(&s, 0.99), 103.0);
    cr_assert_eq(cql_hist_max(&s), 103);                     /* the bucket of 100 */
    cr_assert_eq(cql_hist_min(&s), 0);                       /* the first bucket: 0 */
    /* values 21..26: min is one past the offset before their first bucket */
    cql_hist_init(&h, CQL_HIST_TIMER, 0);
    for (int v = 21; v <= 26; v++)
        cql_hist_add(&h, v, 0);
    cql_hist_snapshot(&h, 0, &s);
    cr_assert_eq(cql_hist_min(&s), 21);                      /* 1 + 20 */
    cr_assert_eq(cql_hist_value(&s, 0.5), 24.0);
    cr_assert_eq(cql_hist_value(&s, 0.75), 29.0);
    cr_assert_eq(cql_hist_max(&s), 29);
    cr_assert_float_eq(cql_hist_mean(&s), (4 * 24.0 + 2 * 29.0) / 6, 1e-12);
    /* empty: 0 everywhere, NaN mean */
    cql_hist_init(&h, CQL_HIST_TIMER, 0);
    cql_hist_snapshot(&h, 0, &s);
    cr_assert(cql_hist_value(&s, 0.5) == 0 && cql_hist_min(&s) == 0 && cql_hist_max(&s) == 0);
    cr_assert(isnan(cql_hist_mean(&s)));
}

/* Max is a bucket offset at least as large as every percentile. */
Test(cql_hist, max_is_never_below_a_percentile)
{
    srand(7);
    static const double qs[] = { 0.5, 0.75, 0.95, 0.98, 0.99, 0.999 };
    for (int round = 0; round < 200; round++) {
        cql_hist h;
        cql_hist_init(&h, CQL_HIST_TIMER, 0);
        int n = 1 + rand() % 50;
        for (int i = 0; i < n; i++)
            cql_hist_add(&h, 1 + rand() % 5000, (uint64_t)(rand() % 40) * S);
        cql_hist_snap s;
        cql_hist_snapshot(&h, 40 * S, &s);
        for (size_t q = 0; q < sizeof qs / sizeof qs[0]; q++)
            cr_assert_geq((double)cql_hist_max(&s), cql_hist_value(&s, qs[q]));
        int64_t mx = cql_hist_max(&s);
        int at = cql_hist_index(s.off, s.n, mx);
        cr_assert(mx == 0 || (at < s.n && s.off[at] == (uint64_t)mx), "max %lld is not an offset", (long long)mx);
    }
}

Test(cql_hist, counts_with_and_without_a_zero_bucket)
{
    /* live rows / tombstones per read (considerZeroes false): 0 counts as 1 */
    cql_hist h;
    cql_hist_init(&h, CQL_HIST_COUNT, 0);
    for (int i = 0; i < 4; i++)
        cql_hist_add(&h, 0, 0);
    cql_hist_add(&h, 5, 0);
    cql_hist_snap s;
    cql_hist_snapshot(&h, 0, &s);
    cr_assert_float_eq(cql_hist_mean(&s), 1.8, 1e-12);      /* (4 * 1 + 5) / 5 */
    cr_assert_eq(cql_hist_max(&s), 5);
    cr_assert_eq(cql_hist_min(&s), 0);
    cr_assert_eq(cql_hist_value(&s, 0.5), 1.0);
    /* SSTables per read (considerZeroes true): 0 is its own bucket */
    cql_hist_init(&h, CQL_HIST_COUNT0, 0);
    cql_hist_add(&h, 0, 0);
    for (int i = 0; i < 3; i++)
        cql_hist_add(&h, 3, 0);
    cql_hist_snapshot(&h, 0, &s);
    cr_assert_eq(cql_hist_min(&s), 0);
    cr_assert_eq(cql_hist_value(&s, 0.25), 0.0);
    cr_assert_eq(cql_hist_value(&s, 0.5), 3.0);
    cr_assert_eq(cql_hist_max(&s), 3);
    cql_hist_init(&h, CQL_HIST_COUNT0, 0);
    cql_hist_add(&h, 1, 0);
    cql_hist_snapshot(&h, 0, &s);
    cr_assert_eq(cql_hist_min(&s), 1);                       /* 1 + the zero offset */
}

Test(cql_hist, forward_decay)
{
    /* a value two minutes later weighs round(exp(120 / (60 / ln 2))) = 4 */
    cql_hist h;
    cql_hist_init(&h, CQL_HIST_TIMER, 0);
    cql_hist_add(&h, 10, 0);
    cql_hist_add(&h, 1000, 120 * S);
    cr_assert_eq(h.decaying[8], 1);
    cr_assert_eq(h.decaying[cql_hist_index(cql_hist_offsets(CQL_HIST_TIMER, &(int){ 0 }), 127, 1000)], 4);
    cql_hist_snap s;
    cql_hist_snapshot(&h, 120 * S, &s);                       /* 1/4 rounds to 0: the old value is gone */
    cr_assert_eq(cql_hist_value(&s, 0.5), 1109.0);
    cr_assert_eq(cql_hist_min(&s), 925);
    cr_assert_eq(h.count, 2);                                /* the count does not decay */
    /* one value, read back: there until it weighs less than half */
    cql_hist_init(&h, CQL_HIST_TIMER, 0);
    cql_hist_add(&h, 50, 0);
    cql_hist_snapshot(&h, 59 * S, &s);
    cr_assert_eq(cql_hist_max(&s), 50);
    cql_hist_snapshot(&h, 62 * S, &s);
    cr_assert_eq(cql_hist_max(&s), 0);
    /* the first 35 s after the landmark weigh 1 each (exp(s/86.6) < 1.5) */
    cql_hist_init(&h, CQL_HIST_TIMER, 0);
    cql_hist_add(&h, 5, 34 * S);
    cql_hist_add(&h, 5, 36 * S);
    cr_assert_eq(h.decaying[4], 3);
}

Test(cql_hist, landmark_rescale_after_thirty_minutes)
{
    cql_hist h;
    cql_hist_init(&h, CQL_HIST_TIMER, 0);
    cql_hist_add(&h, 5, 0);
    cql_hist_add(&h, 5, 31 * 60 * S);                         /* rescales first: the old weight rounds to 0 */
    cr_assert_eq(h.landmark_ns, 31 * 60 * S);
    cr_assert_eq(h.decaying[4], 1);
    cr_assert_eq(h.plain[4], 2);
    cql_hist_snap s;
    cql_hist_snapshot(&h, 31 * 60 * S, &s);
    cr_assert_eq(s.b[4], 1);
}

Test(cql_hist, estimated_histogram_of_partition_sizes)
{
    uint64_t off[150], counts[151] = { 0 };
    int n = cql_hist_offsets_make(150, false, off, 150);
    counts[cql_hist_index(off, n, 100)] += 3;                 /* (86, 103] */
    counts[cql_hist_index(off, n, 5000)] += 1;                /* (4768, 5722] */
    cr_assert_eq(cql_ehist_percentile(off, counts, n, 0.5), 103.0);
    cr_assert_eq(cql_ehist_percentile(off, counts, n, 0.75), 103.0);   /* ceil(4 * 0.75) = 3 */
    cr_assert_eq(cql_ehist_percentile(off, counts, n, 0.95), 5722.0);
    cr_assert_eq(cql_ehist_min(off, counts, n), 87);
    cr_assert_eq(cql_ehist_max(off, counts, n), 5722);
    counts[n] = 1;                                            /* an overflow */
    cr_assert_eq(cql_ehist_max(off, counts, n), INT64_MAX);
}

Test(cql_hist, five_minute_rate)
{
    cql_meter m;
    cql_meter_init(&m, 0);
    cql_meter_mark(&m, 100, S / 2);
    cr_assert_eq(cql_meter_rate5(&m, 4 * S), 0.0);           /* no tick yet */
    cr_assert_float_eq(cql_meter_rate5(&m, 5 * S + S / 2), 20.0, 1e-9);   /* 100 events in 5 s */
    cr_assert_float_eq(cql_meter_rate5(&m, 10 * S + S / 2), 20.0 * exp(-1.0 / 60), 1e-9);
    cr_assert_float_eq(cql_meter_rate5(&m, 60 * S + S / 2), 20.0 * exp(-11.0 / 60), 1e-9);
    cr_assert_eq(m.count, 100);
}

Test(cql_hist, round_to_three_decimals_half_up)
{
    cr_assert_eq(cql_round3(0.0125), 0.013);
    cr_assert_eq(cql_round3(3.5e-5), 0.0);
    cr_assert_eq(cql_round3(5e-4), 0.001);
    cr_assert_eq(cql_round3(4.9e-4), 0.0);
    cr_assert_eq(cql_round3(123.4567), 123.457);
    cr_assert_eq(cql_round3(1.0005), 1.001);                 /* Java's "1.0005", not the binary value below it */
    cr_assert_eq(cql_round3(2.0), 2.0);
    cr_assert_eq(cql_round3(0.9995), 1.0);
    cr_assert_eq(cql_round3(1.0e7), 1.0e7);
    cr_assert_eq(cql_round3(-2.0004), -2.0);
    cr_assert(signbit(cql_round3(-0.0004)));
    cr_assert(isnan(cql_round3(NAN)));
    cr_assert_eq(cs_alloc_used(), 0);
}
