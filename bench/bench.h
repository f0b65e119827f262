/*
 * bench.h: cassette-bench, the partitioning-scheme workbench.  A pure CQL
 * client: it only speaks the native protocol (server/frame.h for framing),
 * so it runs unchanged against Apache Cassandra or ScyllaDB.
 *
 * Flow of one run (bench/main.c):
 *   profile (YAML file, cassandra-stress user profile or preset:NAME)
 *     -> schema: keyspace/table/extra definitions executed, columns read back
 *        from system_schema.columns (so value generators know the types)
 *     -> workload: insert + named queries with ratios, value generators per
 *        column (bench/gen.c) and distributions (bench/dist.c)
 *     -> runner (bench/runner.c): libuv loop, N connections x C in flight,
 *        max throughput or fixed rate with coordinated-omission-corrected
 *        latencies (measured from the intended start), warm-up, progress
 *     -> stats: latency histograms per op (bench/hist.c), errors and client
 *        warnings by kind, per-partition rows/bytes/traffic, a simulated ring
 *        (bench/ring.c) fed with the real Murmur3 tokens of the partitions
 *     -> report: text and JSON (bench/report.c), a self-contained HTML page
 *        with SVG charts comparing the schemes (bench/report_html.c).
 * Threads: one (the libuv loop).
 */
#ifndef CS_BENCH_H
#define CS_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/buf.h"

/* ------------------------------------------------------------ random */

typedef struct bench_rng { uint64_t s[4]; } bench_rng;
void bench_rng_seed(bench_rng *r, uint64_t seed);
uint64_t bench_rng_next(bench_rng *r);
double bench_rng_double(bench_rng *r);            /* [0, 1) */
/* stateless hash (splitmix64 step and finalizer) */
static inline uint64_t bench_mix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

/* ------------------------------------------------------------ distributions (dist.c)
 * cassandra-stress's syntax and shapes (OptionDistribution.java):
 *   fixed(N)  uniform(a..b)  gaussian(a..b[,stdvrng]) or gaussian(a..b,mean,stdev)
 *   exp(a..b)  extreme(a..b,shape)  qextreme(a..b,shape,quantas)  seq(a..b)
 * with stress's aliases (normal, norm, gauss, extr, qextr; weibull, which
 * stress lists but cannot build, is extreme here), a leading '~' inverting
 * the distribution (a + b - x), k/m/b suffixes (1k = 1000, 1m, 1b) and a
 * trailing "/D" for ratios (insert.select, insert.row-population: sample / D,
 * clamped to 0..1).  cassette adds zipf(a..b[,s]).  Numbers may be
 * fractional ("1.5k"), where stress takes whole numbers only. */
typedef enum { DIST_FIXED, DIST_UNIFORM, DIST_GAUSSIAN, DIST_EXP, DIST_EXTREME, DIST_QEXTREME, DIST_ZIPF,
               DIST_SEQ } bench_dist_kind;
typedef struct bench_dist {
    bench_dist_kind kind;
    int64_t min, max;         /* the support: every sample is within */
    bool inverted;            /* '~': a + b - x */
    double mean, sd;          /* gaussian */
    double scale;             /* exp: mean; extreme/qextreme: Weibull scale */
    double param;             /* extreme shape, zipf exponent */
    int64_t *q_bounds; int quantas;     /* qextreme: quantas + 1 bounds */
    double divisor;           /* "/D" suffix, 1 if none */
    uint64_t seq_next;        /* DIST_SEQ state */
    double *zipf_cdf; int64_t zipf_n;   /* precomputed for small ranges */
} bench_dist;
/* Parse text into d (0), or fill err and return -1.  bench_dist_destroy
 * frees what d holds either way. */
int bench_dist_parse(const char *text, bench_dist *d, char *err, size_t errlen);
int64_t bench_dist_sample(bench_dist *d, bench_rng *r);
/* The draw of d seeded by seed: the same seed gives the same value, as
 * stress's generators reseed their distributions per value (seq(a..b):
 * a + seed mod (b - a + 1), as stress's DistributionSequence.setSeed). */
int64_t bench_dist_sample_seeded(const bench_dist *d, uint64_t seed);
/* The real-valued sample stress's ratios use (Distribution.nextDouble: not
 * truncated to whole numbers), divided by the divisor and clamped to 0..1. */
double bench_dist_sample_ratio(bench_dist *d, bench_rng *r);
void bench_dist_destroy(bench_dist *d);
void bench_dist_describe(const bench_dist *d, char *out, size_t n);

/* ------------------------------------------------------------ latency histogram (hist.c)
 * Log-linear buckets over nanoseconds: 2^k ranges split into 32 sub-buckets,
 * so every value is within ~3% of its bucket; covers 1 ns .. ~1 hour. */
#define HIST_SUB 32
#define HIST_EXP 42
typedef struct bench_hist {
    uint64_t counts[HIST_EXP * HIST_SUB];
    uint64_t n, max_ns, min_ns;
    double sum_ns;
} bench_hist;
void bench_hist_init(bench_hist *h);
void bench_hist_record(bench_hist *h, uint64_t ns);
void bench_hist_merge(bench_hist *into, const bench_hist *from);
uint64_t bench_hist_pct(const bench_hist *h, double pct);      /* pct in 0..100 */

/* ------------------------------------------------------------ ring simulation (ring.c) */
typedef struct bench_ring_result {
    int nodes, vnodes, rf;
    double max_load, mean_load, min_load;   /* in the weight's unit */
    double *node_load;                      /* nodes entries, owned */
    double max_over_mean;
} bench_ring_result;
/* Distribute weights at tokens over `nodes` nodes with `vnodes` random tokens
 * each (seeded) and replication factor rf (SimpleStrategy placement). */
int bench_ring_simulate(const int64_t *tokens, const double *weights, size_t n, int nodes, int vnodes,
                        int rf, uint64_t seed, bench_ring_result *out);
/* The same placement for two weight sets in one walk (weights2/out2 may be NULL). */
int bench_ring_simulate2(const int64_t *tokens, const double *weights, const double *weights2, size_t n,
                         int nodes, int vnodes, int rf, uint64_t seed, bench_ring_result *out,
                         bench_ring_result *out2);
void bench_ring_result_destroy(bench_ring_result *r);

/* ------------------------------------------------------------ profile (profile.c) */
typedef enum {
    GEN_DEFAULT,        /* value from population distribution seed */
    GEN_CLOCK,          /* simulated clock: start + op_index * step (timestamp/bigint) */
    GEN_DAY,            /* date of the simulated clock */
    GEN_SLOT,           /* (simulated second) mod slots */
    GEN_BUCKET,         /* rows already written to (partition w/o bucket) / bucket_rows */
    GEN_TIMEUUID_NOW,   /* timeuuid of the simulated clock */
} bench_gen_kind;

typedef struct bench_colspec {
    char *name;
    bool has_size, has_population, has_cluster;
    bench_dist size, population, cluster;
    bench_gen_kind gen;
    int64_t gen_step_ms;      /* GEN_CLOCK step per op */
    int64_t gen_start_ms;     /* GEN_CLOCK start (0 = 2026-01-01) */
    int64_t gen_param;        /* GEN_SLOT slots / GEN_BUCKET rows per bucket */
} bench_colspec;

typedef struct bench_query {
    char *name;               /* lower-cased, as stress matches op names */
    char *cql;                /* NULL for a token range query until the model builds it */
    bool multirow;            /* fields: multirow (stress's default) or samerow */
    bool token_range;         /* from token_range_queries: one page of a token range per op */
    char *columns;            /* token range query: the selected columns ('*' = all) */
    int pages;                /* pages to fetch per op (cassette extension; default 1) */
    int page_size;            /* fetch size (default 5000; 0 = driver default) */
    int64_t lag_ms;           /* bind generated values as of clock - lag (cassette extension) */
    int64_t window_ms;        /* markers of `col >(=) ?` on a clock column bind clock - lag - window */
} bench_query;

typedef struct bench_profile {
    char *name;               /* preset name or file base name */
    char *description;
    char *keyspace, *keyspace_def;
    char *table, *table_def;
    char **extra_defs; int n_extra;         /* extra CQL run after the table (indexes, views, tables) */
    char **extra_inserts; int n_extra_ins;  /* extra INSERT/UPDATE run with each insert op, binding by column name */
    bench_colspec *cols; int n_cols;
    bench_dist insert_partitions;           /* partitions per insert op (default fixed(1)) */
    bench_dist insert_select;               /* fraction of a partition's rows per op (default fixed(1)/1) */
    bench_dist insert_row_pop;              /* row-population: fraction of value columns set (default fixed(1)/1) */
    bench_dist insert_rows;                 /* cassette: rows per insert op per partition (overrides select) */
    bool has_insert_rows;
    char *batchtype;                        /* LOGGED / UNLOGGED / COUNTER (default LOGGED, as stress) */
    char *condition;                        /* insert.condition: appended to the UPDATE (LWT), or NULL */
    bool insert_verb;                       /* cassette: insert.statement: insert (INSERT, not stress's UPDATE) */
    char *specname;                         /* stress's specname (default keyspace.table): op prefix */
    char *pop;                              /* cassette: pop: the seed population, as --pop (stress's -pop) */
    bench_query *queries; int n_queries;
    char **op_names; double *op_ratios; int n_ops;   /* ops: insert=1, q=2 ... */
} bench_profile;

int bench_profile_load_file(const char *path, bench_profile *p, char *err, size_t errlen);
int bench_profile_load_text(const char *name, const char *yaml, bench_profile *p, char *err, size_t errlen);
void bench_profile_destroy(bench_profile *p);
/* Parse "insert=1,read=2" overriding the profile's ops. */
int bench_profile_set_ops(bench_profile *p, const char *spec, char *err, size_t errlen);

/* ------------------------------------------------------------ presets (presets.c) */
typedef struct bench_preset { const char *name; const char *summary; const char *yaml; } bench_preset;
const bench_preset *bench_presets(int *n);
const bench_preset *bench_preset_find(const char *name);

#endif
