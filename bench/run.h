/*
 * run.h: one benchmark run of one profile, and its results.
 */
#ifndef CS_BENCH_RUN_H
#define CS_BENCH_RUN_H

#include "bench/work.h"

typedef struct bench_opts {
    const char *host; int port;
    const char *user, *pass;
    int connections;            /* default 4 */
    int concurrency;            /* in flight per connection, default 16 */
    double rate;                /* ops/s; 0 = max throughput */
    double duration_s;          /* default 10 (when n_ops == 0) */
    int64_t n_ops;              /* stop after n ops (0 = by duration) */
    double warmup_s;            /* not recorded; default 1 */
    const char *ops;            /* override the profile's ops ratios */
    const char *pop;            /* seed population (stress's -pop), overriding the profile's pop */
    int nodes, vnodes, rf;      /* simulated ring (default 6, 16, 3) */
    int top;                    /* hottest partitions to list (default 10) */
    bool quiet;
    uint64_t seed;
} bench_opts;

typedef struct bench_kind_count { char *kind; uint64_t count; } bench_kind_count;

typedef struct bench_op_result {
    char *name;
    bench_hist hist;
    uint64_t ok, errors;
    uint64_t rows;              /* rows the successful ops read (every page) */
    double throughput;          /* successful ops/s over the measured time */
} bench_op_result;

typedef struct bench_tick { double t_s; double ops_per_s; uint64_t p50_ns, p99_ns, max_ns; } bench_tick;

typedef struct bench_result {
    char *scheme, *description, *table;
    double elapsed_s;           /* measured (after warm-up) */
    uint64_t total_ok, total_errors;
    double throughput;
    double target_rate;
    int hosts;                  /* hosts the ring named (token-aware routing) */
    uint64_t routed_ops;        /* ops sent to their partition's owner (multi-host only) */
    bench_op_result *ops; int n_ops;
    bench_kind_count *errors; int n_errors;
    bench_kind_count *warnings; int n_warnings;
    bench_tick *ticks; int n_ticks;
    bench_part_summary parts;
    uint64_t *size_hist_rows;   /* partitions per rows-bucket (powers of 2), 40 entries */
    uint64_t *size_hist_bytes;  /* partitions per bytes-bucket [2^i, 2^(i+1)) (0 bytes in 0), 40 entries */
    bench_ring_result ring_ops, ring_rows;
    char **top_keys;            /* printable keys of the top partitions */
} bench_result;

int bench_run(bench_profile *p, const bench_opts *o, bench_result *out, char *err, size_t errlen);
void bench_result_destroy(bench_result *r);

/* report.c: the text report of n results on f, and the JSON report to path
 * ("-" for stdout); 0, or -1 when the file cannot be written. */
void bench_report_text(FILE *f, bench_result *rs, int n, const bench_opts *o);
int bench_report_json(const char *path, bench_result *rs, int n, const bench_opts *o);
/* report_html.c: the self-contained HTML page of n results (n >= 1) to path;
 * 0, or -1 when the file cannot be written.  Reads rs and o only. */
int bench_report_html(const char *path, bench_result *rs, int n, const bench_opts *o);

#endif
