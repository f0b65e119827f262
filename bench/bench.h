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
 * cassandra-stress syntax: fixed(N) uniform(a..b) gaussian(a..b[,stdvrng])
 * normal(...) exp(a..b) extreme(a..b,shape) zipf(a..b[,s]) seq(a..b); a
 * trailing "/D" divides (used by insert.select, e.g. uniform(1..10)/10).
 * Numbers accept k/m/b suffixes (1k = 1000, 1m, 1b). */
typedef enum { DIST_FIXED, DIST_UNIFORM, DIST_GAUSSIAN, DIST_EXP, DIST_EXTREME, DIST_ZIPF, DIST_SEQ } bench_dist_kind;
typedef struct bench_dist {
    bench_dist_kind kind;
    int64_t min, max;
    double param;             /* gaussian stdvrng, extreme shape, zipf exponent */
    double divisor;           /* "/D" suffix, 1 if none */
    uint64_t seq_next;        /* DIST_SEQ state */
    double *zipf_cdf; int64_t zipf_n;   /* precomputed for small ranges */
} bench_dist;
int bench_dist_parse(const char *text, bench_dist *d, char *err, size_t errlen);
int64_t bench_dist_sample(bench_dist *d, bench_rng *r);
double bench_dist_sample_ratio(bench_dist *d, bench_rng *r);   /* sample / divisor */
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
    char *name;
    char *cql;
    bool multirow;            /* fields: multirow (else samerow) */
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
    bench_dist insert_rows;                 /* cassette: rows per insert op per partition (overrides select) */
    bool has_insert_rows;
    char *batchtype;                        /* LOGGED / UNLOGGED / COUNTER (default UNLOGGED) */
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
