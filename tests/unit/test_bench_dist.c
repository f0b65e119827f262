/* Unit tests for cassette-bench's distributions (bench/dist.c) and
 * clustering tree (bench/tree.c): cassandra-stress's syntax, defaults and
 * shapes (OptionDistribution.java, PartitionIterator.java). */
#include <criterion/criterion.h>
#include "bench/work.h"
#include "common/alloc.h"

#include <math.h>
#include <string.h>

static size_t live_at_start;

static void setup(void) { live_at_start = cs_alloc_count(); }
static void teardown(void) { cr_assert_eq(cs_alloc_count(), live_at_start, "allocations left behind"); }

TestSuite(bench_dist, .init = setup, .fini = teardown);
TestSuite(bench_tree, .init = setup, .fini = teardown);

static bench_dist parse_ok(const char *text)
{
    bench_dist d;
    char err[256];
    cr_assert_eq(bench_dist_parse(text, &d, err, sizeof(err)), 0, "%s: %s", text, err);
    return d;
}

static void parse_bad(const char *text)
{
    bench_dist d;
    char err[256];
    cr_assert_neq(bench_dist_parse(text, &d, err, sizeof(err)), 0, "%s was accepted", text);
    bench_dist_destroy(&d);
}

Test(bench_dist, stress_syntax)
{
    bench_dist d = parse_ok("uniform(1..100B)");   /* stress's identity default */
    cr_assert_eq(d.kind, DIST_UNIFORM);
    cr_assert_eq(d.min, 1);
    cr_assert_eq(d.max, 100000000000LL);
    d = parse_ok("fixed(2k)");
    cr_assert_eq(d.kind, DIST_FIXED);
    cr_assert_eq(d.min, 2000);
    d = parse_ok("UNIFORM(1...10)");                 /* two or more dots, any case */
    cr_assert_eq(d.max, 10);
    d = parse_ok("uniform(5..5)");                   /* min == max is fixed */
    cr_assert_eq(d.kind, DIST_FIXED);
    d = parse_ok("uniform(1..10)/10");
    cr_assert_eq(d.divisor, 10);
    d = parse_ok("fixed(1)/1k");
    cr_assert_eq(d.divisor, 1000);
    d = parse_ok("normal(10..100, 50)");             /* stdvrng: (max - min) / 2 / 50 */
    cr_assert_eq(d.kind, DIST_GAUSSIAN);
    cr_assert_float_eq(d.mean, 55, 1e-9);
    cr_assert_float_eq(d.sd, 0.9, 1e-9);
    d = parse_ok("gaussian(1..100,20,5)");           /* explicit mean and stdev */
    cr_assert_float_eq(d.mean, 20, 1e-9);
    cr_assert_float_eq(d.sd, 5, 1e-9);
    d = parse_ok("gauss(1..10)");
    cr_assert_float_eq(d.sd, 1.5, 1e-9);             /* 3 deviations each side by default */
    d = parse_ok("norm(1..10)");
    cr_assert_eq(d.kind, DIST_GAUSSIAN);
    d = parse_ok("~exp(1..10)");
    cr_assert(d.inverted);
    cr_assert_eq(d.kind, DIST_EXP);
    d = parse_ok("extr(1..10,2)");
    cr_assert_eq(d.kind, DIST_EXTREME);
    d = parse_ok("weibull(1..10,2)");
    cr_assert_eq(d.kind, DIST_EXTREME);
    d = parse_ok("seq(1..5)");
    cr_assert_eq(d.kind, DIST_SEQ);
    d = parse_ok("qextreme(1..1000,2,4)");
    cr_assert_eq(d.kind, DIST_QEXTREME);
    cr_assert_eq(d.quantas, 4);
    bench_dist_destroy(&d);
    d = parse_ok("qextr(1..1000,2,4)");
    bench_dist_destroy(&d);
}

Test(bench_dist, refused)
{
    parse_bad("uniform(5)");
    parse_bad("fixed(1..5)");
    parse_bad("uniform(10..1)");
    parse_bad("gaussian(1..10,1,2,3)");
    parse_bad("zeta(1..10)");
    parse_bad("uniform(1..10");
    parse_bad("uniform(1..10) x");
    parse_bad("exp(1..10,2)");
    parse_bad("qextreme(1..10,2)");
    parse_bad("uniform(1..10)/0");
}

/* The mean of n draws, every one checked to lie within [min, max]. */
static double mean_of(bench_dist *d, int n)
{
    bench_rng r;
    bench_rng_seed(&r, 42);
    double sum = 0;
    for (int i = 0; i < n; i++) {
        int64_t x = bench_dist_sample(d, &r);
        cr_assert(x >= d->min && x <= d->max, "%lld outside %lld..%lld", (long long)x, (long long)d->min,
                  (long long)d->max);
        sum += (double)x;
    }
    return sum / n;
}

Test(bench_dist, shapes)
{
    bench_dist u = parse_ok("uniform(1..4)");
    cr_assert_float_eq(mean_of(&u, 100000), 2.5, 0.02);
    bench_dist g = parse_ok("gaussian(1..1000,200,10)");
    cr_assert_float_eq(mean_of(&g, 100000), 199.5, 0.5);   /* truncated towards zero, as stress */
    /* exp(a..b): mean (b - a) / (0.5 ln(b - a)), offset from a and clamped */
    bench_dist e = parse_ok("exp(1..1000)");
    cr_assert_float_eq(e.scale, 999 / (0.5 * log(999.0)), 1e-6);
    double me = mean_of(&e, 100000);
    cr_assert(me > 275 && me < 287, "exp mean %f", me);       /* 281 by a direct computation */
    bench_dist ie = parse_ok("~exp(1..1000)");
    cr_assert_float_eq(mean_of(&ie, 100000), 1001 - me, 0.5);   /* the same draws mirrored */
    /* extreme(a..b, shape): Weibull scaled by (b - a) / (0.5 ln(b - a))^(1/shape) */
    bench_dist x = parse_ok("extreme(1..1000,2)");
    cr_assert_float_eq(x.scale, 999 / sqrt(0.5 * log(999.0)), 1e-6);
    double mx = mean_of(&x, 100000);
    cr_assert(mx > 460 && mx < 485, "extreme mean %f", mx);   /* 473 by a direct computation */
    bench_dist q = parse_ok("qextreme(1..1000,2,4)");
    cr_assert_eq(q.q_bounds[0], 1);
    cr_assert_eq(q.q_bounds[4], 1001);
    for (int i = 0; i < 4; i++)
        cr_assert(q.q_bounds[i] <= q.q_bounds[i + 1]);
    mean_of(&q, 100000);
    bench_dist_destroy(&q);
    bench_dist s = parse_ok("seq(3..5)");
    bench_rng r;
    bench_rng_seed(&r, 1);
    int64_t want[] = { 3, 4, 5, 3, 4 };
    for (int i = 0; i < 5; i++)
        cr_assert_eq(bench_dist_sample(&s, &r), want[i]);
    bench_dist is = parse_ok("~seq(3..5)");
    cr_assert_eq(bench_dist_sample(&is, &r), 5);
}

Test(bench_dist, ratios)
{
    bench_rng r;
    bench_rng_seed(&r, 7);
    /* stress's ratios take the real-valued draw: uniform(1..10) is
     * continuous over [1, 11) clamped to 10, so /10 has mean 0.595 */
    bench_dist d = parse_ok("uniform(1..10)/10");
    double sum = 0, lo = 1, hi = 0;
    for (int i = 0; i < 200000; i++) {
        double x = bench_dist_sample_ratio(&d, &r);
        sum += x;
        lo = fmin(lo, x);
        hi = fmax(hi, x);
    }
    cr_assert_float_eq(sum / 200000, 0.595, 0.005);
    cr_assert(lo >= 0.1 && hi <= 1.0);
    bench_dist f = parse_ok("fixed(1)/1000");
    cr_assert_float_eq(bench_dist_sample_ratio(&f, &r), 0.001, 1e-12);
    bench_dist big = parse_ok("fixed(5)/2");
    cr_assert_float_eq(bench_dist_sample_ratio(&big, &r), 1.0, 1e-12);   /* clamped to 0..1 */
}

Test(bench_dist, seeded)
{
    bench_dist d = parse_ok("uniform(1..100B)");
    cr_assert_eq(bench_dist_sample_seeded(&d, 99), bench_dist_sample_seeded(&d, 99));
    cr_assert_neq(bench_dist_sample_seeded(&d, 99), bench_dist_sample_seeded(&d, 100));
    bench_dist s = parse_ok("seq(10..14)");
    cr_assert_eq(bench_dist_sample_seeded(&s, 0), 10);
    cr_assert_eq(bench_dist_sample_seeded(&s, 7), 12);
}

/* Every leaf of partition h, in order: digits within their levels' counts,
 * strictly increasing as tuples (clustering order), none twice. */
static int64_t walk_leaves(bench_tree *t, uint64_t h)
{
    int64_t rows = bench_tree_rows(t, h), prev[64];
    for (int64_t l = 0; l < rows; l++) {
        uint64_t seed[64];
        int64_t digit[64];
        bench_tree_leaf(t, h, l, seed, digit);
        if (l > 0) {
            int d = 0;
            while (d < t->levels && digit[d] == prev[d])
                d++;
            cr_assert(d < t->levels && digit[d] > prev[d], "leaf %lld not after leaf %lld", (long long)l,
                      (long long)l - 1);
        }
        memcpy(prev, digit, sizeof(int64_t) * (size_t)t->levels);
    }
    return rows;
}

Test(bench_tree, fixed_counts_multiply)
{
    bench_dist a = parse_ok("fixed(3)"), c = parse_ok("fixed(4)");
    bench_dist *levels[] = { &a, NULL, &c, NULL };   /* NULL: no cluster, stress's fixed(1) */
    bench_tree t;
    cr_assert_eq(bench_tree_init(&t, levels, 4), 0);
    for (uint64_t h = 1; h < 50; h++)
        cr_assert_eq(walk_leaves(&t, h), 12);
    bench_tree_destroy(&t);
    bench_tree none;
    cr_assert_eq(bench_tree_init(&none, NULL, 0), 0);
    cr_assert_eq(bench_tree_rows(&none, 5), 1);
    bench_tree_destroy(&none);
}

Test(bench_tree, counts_per_parent)
{
    /* cqlstress-example.yaml's clustering: date uniform(20..40), three
     * columns without cluster, lval uniform(1..4), one more without */
    bench_dist date = parse_ok("uniform(20..40)"), lval = parse_ok("uniform(1..4)");
    bench_dist *levels[] = { &date, NULL, NULL, &lval, NULL, NULL };
    bench_tree t;
    cr_assert_eq(bench_tree_init(&t, levels, 6), 0);
    cr_assert_eq(t.var_depth, 4);
    int64_t min = 1 << 30, max = 0;
    double sum = 0;
    for (uint64_t h = 1; h <= 400; h++) {
        int64_t rows = walk_leaves(&t, h);
        /* the sum of one lval count per date, not one count for all dates */
        int64_t dates = (int64_t)t.n_groups, check = 0;
        cr_assert(dates >= 20 && dates <= 40);
        for (size_t g = 0; g < t.n_groups; g++) {
            cr_assert(t.gcount[g] >= 1 && t.gcount[g] <= 4);
            check += t.gcount[g];
        }
        cr_assert_eq(rows, check);
        min = rows < min ? rows : min;
        max = rows > max ? rows : max;
        sum += (double)rows;
    }
    cr_assert(min >= 20 && max <= 160);
    cr_assert_float_eq(sum / 400, 75, 5);   /* 30 dates x 2.5 */
    /* the same partition, the same rows */
    cr_assert_eq(bench_tree_rows(&t, 12345), bench_tree_rows(&t, 12345));
    bench_tree_destroy(&t);
}
