/*
 * hist.h: Cassandra 4.1's metric histograms and meters, computed the way
 * Cassandra computes them, for nodetool (tablehistograms, tablestats) and
 * the system_views metric tables.  Owner of the histograms: cql/metrics.c
 * (per table, and the node-wide CQL and batch metrics); the functions here
 * hold no state of their own beyond the constant offset tables.  Thread:
 * whoever owns the histogram (the request loop, under the execution lock).
 *
 * A cql_hist is DecayingEstimatedHistogramReservoir (metrics/
 * DecayingEstimatedHistogramReservoir.java): values go into buckets whose
 * upper bounds are EstimatedHistogram.newOffsets (1, 2, 3, ... 8, 10, 12,
 * 14, 17, 20, 24, 29, 35, ...: each the previous times 1.2, rounded,
 * duplicates bumped by one), plus one bucket for values above the last.
 * Every bucket is kept twice: a plain count, and a forward-decayed weight
 * (each value weighs round(exp(s / (60 / ln 2))) for the s whole seconds
 * since the histogram's landmark, the landmark moving and the weights
 * rescaled every 30 minutes).  Percentiles, min, max and mean read the
 * decayed weights divided by the weight of now, so a value counts half
 * after a minute and is gone from them after a few; the count is plain.
 *
 * Kinds, as Cassandra 4.1 makes them:
 *   CQL_HIST_TIMER   a latency Timer in microseconds (CassandraMetricsRegistry
 *                    .createReservoir: 127 offsets, LOW_BUCKET_COUNT; the
 *                    nanoseconds measured are truncated to microseconds);
 *   CQL_HIST_COUNT   Metrics.histogram(name, false): 164 offsets, a 0
 *                    counted in the first bucket (offset 1);
 *   CQL_HIST_COUNT0  Metrics.histogram(name, true): offset 0 first, then 164.
 */
#ifndef CS_CQL_HIST_H
#define CS_CQL_HIST_H

#include <stdbool.h>
#include <stdint.h>

typedef enum cql_hist_kind { CQL_HIST_TIMER, CQL_HIST_COUNT, CQL_HIST_COUNT0 } cql_hist_kind;

#define CQL_HIST_MAX_OFFSETS 165
#define CQL_HIST_MAX_BUCKETS (CQL_HIST_MAX_OFFSETS + 1)   /* the last counts overflows */

typedef struct cql_hist {
    uint8_t kind;                          /* cql_hist_kind */
    uint64_t landmark_ns;                  /* decayLandmark (monotonic clock) */
    uint64_t weight;                       /* the update weight of the second [weight_from_ns, weight_to_ns) */
    uint64_t weight_from_ns, weight_to_ns;
    uint64_t count;                        /* values added (Histogram.getCount) */
    uint64_t plain[CQL_HIST_MAX_BUCKETS];  /* buckets: counts */
    uint64_t decaying[CQL_HIST_MAX_BUCKETS];   /* decayingBuckets: forward-decayed weights */
} cql_hist;

/* EstimatedHistogram.newOffsets for a kind: the bucket upper bounds, *n of
 * them (constant tables, valid for the process's life). */
const uint64_t *cql_hist_offsets(cql_hist_kind kind, int *n);
/* The same for any size (EstimatedHistogram.newOffsets(size, zeros)):
 * fills out[0..size + zeros) and returns that count; cap bounds it. */
int cql_hist_offsets_make(int size, bool zeros, uint64_t *out, int cap);
/* Index of the bucket a value falls in: the first offset >= v, or n (the
 * overflow bucket); negative values count as 0 (findIndex). */
int cql_hist_index(const uint64_t *off, int n, int64_t v);

/* An empty histogram whose decay landmark is now_ns. */
void cql_hist_init(cql_hist *h, cql_hist_kind kind, uint64_t now_ns);
/* update(value) at now_ns. */
void cql_hist_add(cql_hist *h, int64_t value, uint64_t now_ns);

/* A snapshot: the decayed weights as of now_ns (getSnapshot), which the
 * accessors below read. */
typedef struct cql_hist_snap {
    const uint64_t *off;                   /* borrowed constant table */
    int n;                                 /* offsets; b has n + 1 buckets */
    uint64_t b[CQL_HIST_MAX_BUCKETS];
} cql_hist_snap;
/* Rescales h first when its landmark is 30 minutes old, as getSnapshot. */
void cql_hist_snapshot(cql_hist *h, uint64_t now_ns, cql_hist_snap *s);
/* getValue(q), q in [0, 1]: the offset of the bucket holding the
 * ceil(count * q)-th weight; 0 when empty (or past the buckets). */
double cql_hist_value(const cql_hist_snap *s, double q);
/* getMin: 0 when empty or the first bucket is used, else one more than
 * the offset before the first bucket used. */
int64_t cql_hist_min(const cql_hist_snap *s);
/* getMax: the offset of the last bucket used, INT64_MAX after an
 * overflow, 0 when empty. */
int64_t cql_hist_max(const cql_hist_snap *s);
/* getMean: bucket offsets weighted by the decayed weights (NaN when
 * empty or overflowed, where Cassandra throws). */
double cql_hist_mean(const cql_hist_snap *s);

/* EstimatedHistogram over plain counts (an sstable's partition sizes):
 * counts[0..n] with counts[n] the overflow bucket (0 if not kept).
 *   percentile: ceil(total * q)-th value's offset, 0 when empty (Cassandra
 *               refuses an overflowed one: callers check counts[n] first);
 *   min / max:  as cql_hist_min / cql_hist_max. */
double cql_ehist_percentile(const uint64_t *off, const uint64_t *counts, int n, double q);
int64_t cql_ehist_min(const uint64_t *off, const uint64_t *counts, int n);
int64_t cql_ehist_max(const uint64_t *off, const uint64_t *counts, int n);

/* A Meter's five-minute rate (metrics-core 3.1 Meter and EWMA): events are
 * counted into the current 5-second tick; each tick folds the tick's rate
 * into an exponentially weighted average with alpha 1 - exp(-1/60), the
 * first tick setting it.  So the rate reads 0 until 5 s after the first
 * events and then decays toward the recent rate. */
typedef struct cql_meter {
    uint64_t count;                        /* events marked */
    uint64_t uncounted;                    /* events in the current tick */
    double rate;                           /* events per ns */
    bool initialized;                      /* the first tick has set rate */
    uint64_t last_tick_ns;                 /* start of the current tick */
} cql_meter;
void cql_meter_init(cql_meter *m, uint64_t now_ns);
void cql_meter_mark(cql_meter *m, uint64_t n, uint64_t now_ns);
/* getFiveMinuteRate: events per second (ticks first, as Cassandra's). */
double cql_meter_rate5(cql_meter *m, uint64_t now_ns);

/* commons-math Precision.round(v, 3, ROUND_HALF_UP), as the system_views
 * metric tables round: Java's shortest decimal for v (Double.toString)
 * rounded half up at the third decimal. */
double cql_round3(double v);

#endif
