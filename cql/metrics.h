/*
 * metrics.h: per-table request metrics for nodetool (tablestats,
 * tablehistograms, toppartitions), system_views and /metrics.
 * Owner: cql/metrics.c.  Thread: the request loop (like all of cql/); the
 * admin endpoint reads them on the same loop.
 *
 * The histograms are Cassandra 4.1's (cql/hist.h): latencies in
 * microseconds in a decaying reservoir of 127 buckets, counts in 164, so
 * nodetool and system_views print the bucket offsets, decayed percentiles
 * and maxima Cassandra's formulas give for the same samples.
 */
#ifndef CS_CQL_METRICS_H
#define CS_CQL_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cql/hist.h"

typedef struct cql_ctx cql_ctx;
typedef struct sch_table sch_table;

/* A latency metric (LatencyMetrics): its Timer (histogram of µs and the
 * five-minute meter) and the *TotalLatency counter (µs summed). */
typedef struct cql_timer {
    cql_hist h;                       /* CQL_HIST_TIMER; h.count is the Timer's count */
    cql_meter m;                      /* per_second: getFiveMinuteRate */
    uint64_t total_us;
} cql_timer;

typedef struct cql_table_metrics {
    uint8_t id[16];
    cql_timer reads, writes, scans;   /* ReadLatency, WriteLatency, RangeLatency */
    cql_hist sstables_per_read;       /* SSTablesPerReadHistogram: single-partition SELECTs (zeros kept) */
    cql_hist tombstones;              /* TombstoneScannedHistogram: per SELECT */
    cql_hist live;                    /* LiveScannedHistogram: live rows per SELECT */
} cql_table_metrics;

/* Empty metrics of table id whose histograms start decaying at now_ns
 * (what a table without requests reads as). */
void cql_table_metrics_init(cql_table_metrics *tm, const uint8_t id[16], uint64_t now_ns);

/* Node-wide CQL statement and batch metrics (CQLMetrics, BatchMetrics). */
typedef struct cql_node_metrics {
    uint64_t regular_executed;        /* QUERY messages whose statement parsed and bound */
    uint64_t prepared_executed;       /* EXECUTE messages of a known statement, bound */
    uint64_t prepared_evicted;        /* prepared statements dropped for room */
    cql_hist batch_logged, batch_unlogged, batch_counter;   /* partitions per batch (CQL_HIST_COUNT) */
    /* ClientRequest latencies (nodetool proxyhistograms): every table's
     * reads, writes and range scans as cql_metrics_record counts them, the
     * node being the coordinator; CAS and view writes get none of their
     * own (a conditional write counts as a write). */
    cql_timer proxy_read, proxy_write, proxy_range;
    /* ClientRequest Timeouts of Read and RangeSlice: reads that ended at
     * read_request_timeout / range_request_timeout (cql__read_timeout). */
    uint64_t read_timeouts, range_timeouts;
} cql_node_metrics;

/* The node-wide metrics (made on first use; NULL without memory). */
cql_node_metrics *cql_node_metrics_get(cql_ctx *ctx);
/* A QUERY (prepared false) or EXECUTE (true) about to run its statement. */
void cql_metrics_statement(cql_ctx *ctx, bool prepared);
/* A batch that wrote `partitions` partition mutations; kind as ast_batch_kind
 * (0 logged, 1 unlogged, 2 counter). */
void cql_metrics_batch(cql_ctx *ctx, int kind, int partitions);

/* Snapshots (the decayed weights now) of a timer or histogram. */
void cql_timer_snapshot(cql_timer *t, cql_hist_snap *s);
void cql_histogram_snapshot(cql_hist *h, cql_hist_snap *s);

/* Record one request on a table, ended at now_ns (cs_mono_ns).  kind: 0
 * read, 1 write, 2 range scan.  pk/pk_len: the partition touched (for
 * toppartitions), may be NULL. */
void cql_metrics_record(cql_ctx *ctx, const sch_table *t, int kind, uint64_t micros, uint64_t now_ns,
                        const uint8_t *pk, size_t pk_len);
/* Count one touch of partition pk for toppartitions (no-op unless sampling). */
void cql_metrics_sample(cql_ctx *ctx, const sch_table *t, bool write, const uint8_t *pk, size_t pk_len);
/* Count one SELECT's live rows and tombstones scanned on t, and the
 * sstables it consulted when it read a single partition (else -1). */
void cql_metrics_record_read_stats(cql_ctx *ctx, const sch_table *t, uint64_t rows, uint64_t tombstones,
                                   int64_t sstables);
/* Metrics of a table; NULL if it has seen no request.  Owned by the
 * context until cql_metrics_free (not const: snapshots rescale them). */
cql_table_metrics *cql_metrics_get(cql_ctx *ctx, const uint8_t id[16]);

/* toppartitions: sample partitions touched on one table for a while. */
typedef struct cql_top_entry { uint8_t *pk; size_t pk_len; uint64_t count; } cql_top_entry;
int cql_toppartitions_start(cql_ctx *ctx, const sch_table *t);
/* Stop sampling and take the counts (sorted, most first; caller frees with
 * cql_toppartitions_free). */
void cql_toppartitions_stop(cql_ctx *ctx, cql_top_entry **reads, int *n_reads, cql_top_entry **writes,
                            int *n_writes);
void cql_toppartitions_free(cql_top_entry *e, int n);

/* The thread pools of nodetool tpstats and system_views.thread_pools, as
 * cassette runs them: CompactionExecutor and MemtableFlushWriter are the
 * storage threads; MutationStage, ReadStage and Native-Transport-Requests
 * run on the request loops under the one execution lock, so at most one
 * task of them is active (the request asking, when in_request).  Sorted by
 * name; returns how many (at most max). */
typedef struct cql_pool {
    const char *name;
    int active, active_limit, pending;
    uint64_t completed, blocked, blocked_all_time;
} cql_pool;
int cql_thread_pools(cql_ctx *ctx, bool in_request, cql_pool *out, int max);

void cql_metrics_free(cql_ctx *ctx);

#endif
