/*
 * metrics.h: per-table request metrics for nodetool (tablestats,
 * tablehistograms, toppartitions), system_views and /metrics.
 * Owner: cql/metrics.c.  Thread: the request loop (like all of cql/); the
 * admin endpoint reads them on the same loop.
 *
 * Latencies use Cassandra's EstimatedHistogram bucket offsets (each bucket
 * ~1.2x the previous, in microseconds), so tablehistograms prints the same
 * bucket boundaries nodetool does.
 */
#ifndef CS_CQL_METRICS_H
#define CS_CQL_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cql_ctx cql_ctx;
typedef struct sch_table sch_table;

#define CQL_LAT_BUCKETS 90

typedef struct cql_latency {
    uint64_t count;
    uint64_t total_us;
    uint64_t max_us;
    uint64_t buckets[CQL_LAT_BUCKETS];
    uint64_t zeros;                   /* values of 0 in a count histogram (cql_count_pct) */
} cql_latency;

/* One minute of SELECTs on a table: live rows and tombstones each read
 * scanned (what Cassandra's LiveScannedHistogram and
 * TombstoneScannedHistogram record per read command). */
typedef struct cql_slice_minute {
    int64_t minute;                   /* wall clock minutes; slot reused after 5 */
    uint64_t reads, rows, rows_max, tombstones, tombstones_max;
} cql_slice_minute;

typedef struct cql_table_metrics {
    uint8_t id[16];
    cql_latency reads, writes, scans;
    uint64_t tombstones_scanned, rows_read;
    cql_slice_minute slices[5];       /* the last five minutes, by minute % 5 */
    cql_latency sstables_per_read;    /* single-partition SELECTs: sstables consulted (a count, zeros kept) */
} cql_table_metrics;

/* tablestats' "... per slice (last five minutes)": mean and max live rows
 * and tombstones per read over the five minutes before now_ms (means NaN,
 * maxima 0 without a read, as Cassandra prints them). */
void cql_metrics_slices(const cql_table_metrics *tm, int64_t now_ms, double *avg_rows, uint64_t *max_rows,
                        double *avg_tombstones, uint64_t *max_tombstones);

/* Bucket upper bounds in microseconds (Cassandra's EstimatedHistogram). */
const uint64_t *cql_latency_offsets(void);
/* Value at percentile p (0..100) of a latency histogram, in microseconds. */
double cql_latency_pct(const cql_latency *l, double p);
/* The same for a count histogram whose zeros are kept apart (Cassandra's
 * histograms that "consider zeroes", such as SSTablesPerReadHistogram). */
double cql_count_pct(const cql_latency *l, double p);

/* Record one request on a table.  kind: 0 read, 1 write, 2 range scan.
 * pk/pk_len: the partition touched (for toppartitions), may be NULL. */
void cql_metrics_record(cql_ctx *ctx, const sch_table *t, int kind, uint64_t micros,
                        const uint8_t *pk, size_t pk_len);
/* Count one touch of partition pk for toppartitions (no-op unless sampling). */
void cql_metrics_sample(cql_ctx *ctx, const sch_table *t, bool write, const uint8_t *pk, size_t pk_len);
/* Count one SELECT's live rows and tombstones scanned on t, and the
 * sstables it consulted when it read a single partition (else -1). */
void cql_metrics_record_read_stats(cql_ctx *ctx, const sch_table *t, uint64_t rows, uint64_t tombstones,
                                   int64_t sstables);
/* Metrics of a table; NULL if it has seen no request. */
const cql_table_metrics *cql_metrics_get(cql_ctx *ctx, const uint8_t id[16]);

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
