/*
 * report_fmt.h: numbers as people read them, axis ticks and the partition
 * size limits, shared by the text report (bench/report.c) and the HTML page
 * (bench/report_html.c).  Pure functions, no allocation, any thread.
 */
#ifndef CS_BENCH_REPORT_FMT_H
#define CS_BENCH_REPORT_FMT_H

#include <stddef.h>
#include <stdint.h>

/* Cassandra logs a warning when compaction writes a partition larger than
 * compaction_large_partition_warning_threshold (default 100 MiB, 4.0/4.1
 * cassandra.yaml; partition_size_warn_threshold in 5.0), and the usual data
 * modelling guidance is to keep partitions under ~100 MB and ~100k rows. */
#define BENCH_LARGE_PARTITION_BYTES (100ull << 20)
#define BENCH_LARGE_PARTITION_ROWS  100000ull

/* bench_part_over() bits: which limit a partition of this size exceeds. */
#define BENCH_OVER_ROWS  1
#define BENCH_OVER_BYTES 2

/* 0, or BENCH_OVER_ROWS | BENCH_OVER_BYTES for a partition of `rows` rows
 * and `bytes` bytes strictly above the limits above. */
int bench_part_over(uint64_t rows, uint64_t bytes);

/* The formatters write a NUL-terminated string of at most n bytes into out
 * (n >= 16 is always enough) and return out.  Three significant digits,
 * trailing zeros trimmed. */

/* 0, 0.541, 42, 999, 1.2k, 40.8k, 952k, 1.5M, 3.4G. */
char *bench_fmt_si(double v, char *out, size_t n);
/* 512 B, 1 KiB, 44.1 KiB, 1.77 MiB, 110 MiB, 2 GiB (powers of 1024). */
char *bench_fmt_bytes(double bytes, char *out, size_t n);
/* A latency given in ms: 54 µs, 0.541 ms, 4.33 ms, 43.3 ms, 1.23 s. */
char *bench_fmt_ms(double ms, char *out, size_t n);
/* An exact count with thousands separators: 7, 1,881, 1,234,567. */
char *bench_fmt_count(uint64_t v, char *out, size_t n);
/* A ratio: 1.17x, 7.5x, 23x, 1.2kx. */
char *bench_fmt_ratio(double r, char *out, size_t n);

/* A linear axis from 0 to max in n steps of step, step being 1, 2 or 5
 * times a power of ten, max >= the data's maximum. */
typedef struct bench_axis {
    double step;    /* tick spacing */
    double max;     /* top of the axis: n * step */
    int n;          /* intervals (ticks are 0, step, ..., max) */
    double div;     /* tick labels are value / div ... */
    char suffix[4]; /* ... followed by this ("", "k", "M", "G") */
    int decimals;   /* digits after the point in every tick label */
} bench_axis;

/* The smallest 1-2-5 step giving at most max_ticks intervals (>= 1) that
 * cover data_max (<= 0, NaN or infinite counts as 1). */
void bench_axis_nice(double data_max, int max_ticks, bench_axis *ax);
/* The same for whole numbers (seconds, ranks): the step is at least 1. */
void bench_axis_int(double data_max, int max_ticks, bench_axis *ax);
/* The label of tick value v on ax: "0", "0.5", "1.5k", "20k", "1M". */
char *bench_axis_label(const bench_axis *ax, double v, char *out, size_t n);

#endif
