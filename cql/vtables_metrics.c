/*
 * vtables_metrics.c: the metric tables of system_views, computed on read
 * from cql/metrics.c and the storage engine, as Cassandra 4.1's
 * TableMetricTables, CQLMetricsTable and BatchMetricsTable fill them.
 *
 * Per-table tables have one row per table of every keyspace but the
 * virtual ones (ColumnFamilyStore.all(): system tables and views too),
 * partition key (keyspace_name, table_name):
 *   *_latency            count, p50th_ms, p99th_ms, max_ms, per_second:
 *                        the table's Timer (cql_timer).  Cassandra 4.1's
 *                        LatencyTableMetric multiplies the snapshot's
 *                        values by 1e-6 for a nanosecond Timer, but 4.1's
 *                        Timers hold microseconds (CASSANDRA-16760), so
 *                        the _ms columns read the microseconds times 1e-6:
 *                        seconds.  cassette prints what 4.1 prints.  On one
 *                        node the coordinator's tables show the replica's.
 *   tombstones_per_read,
 *   rows_per_read        count, p50th, p99th, max of the tombstones and
 *                        live rows each SELECT scanned.
 *   disk_usage,
 *   max_partition_size   mebibytes: the live sstables' bytes, the largest
 *                        partition's size bucket, each rounded up to MiB.
 * Doubles are rounded to 3 decimals (Precision.round, HALF_UP).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/util.h"
#include "cql/exec_int.h"
#include "cql/metrics.h"
#include "cql/vtables_int.h"

/* ---------------------------------------------------------------- per table */

typedef int (*table_row_fn)(cql_ctx *ctx, sch_table *base, vrow *r);

/* One row per table of every non-virtual keyspace, in keyspace/table
 * order (the executor sorts them by key anyway). */
static int rows_per_table(cql_ctx *ctx, sch_table *t, emit_fn emit, void *arg, table_row_fn fill)
{
    vrow r;
    cs_buf_init(&r.store);
    int rc = 0;
    for (int i = 0; rc == 0 && i < sch_keyspace_count(ctx->cat); i++) {
        sch_keyspace *k = sch_keyspace_at(ctx->cat, i);
        if (k->is_virtual)
            continue;
        for (int j = 0; rc == 0 && j < k->n_tables; j++) {
            sch_table *bt = k->tables[j];
            vrow_begin(&r, t);
            vset_text(&r, "keyspace_name", k->name);
            vset_text(&r, "table_name", bt->name);
            if (fill(ctx, bt, &r) == 0)
                rc = vemit(&r, emit, arg);
        }
    }
    cs_buf_destroy(&r.store);
    return rc;
}

/* The table's metrics, or empty ones in *tmp when it has had no request. */
static cql_table_metrics *table_metrics(cql_ctx *ctx, sch_table *bt, cql_table_metrics *tmp)
{
    cql_table_metrics *tm = cql_metrics_get(ctx, bt->id);
    if (!tm) {
        cql_table_metrics_init(tmp, bt->id, cs_mono_ns());
        tm = tmp;
    }
    return tm;
}

/* HistogramTableMetric: count, then p50th, p99th and max (+ suffix) of a
 * snapshot, each times scale, rounded to 3 decimals. */
static void fill_histogram(vrow *r, uint64_t count, const cql_hist_snap *s, const char *suffix, double scale)
{
    char col[32];
    vset_bigint(r, "count", (int64_t)count);
    snprintf(col, sizeof col, "p50th%s", suffix);
    vset_double(r, col, cql_round3(cql_hist_value(s, 0.5) * scale));
    snprintf(col, sizeof col, "p99th%s", suffix);
    vset_double(r, col, cql_round3(cql_hist_value(s, 0.99) * scale));
    snprintf(col, sizeof col, "max%s", suffix);
    vset_double(r, col, cql_round3((double)cql_hist_max(s) * scale));
}

/* LatencyTableMetric of one of the table's Timers (NS_TO_MS applied to
 * microseconds, as 4.1 does), and its five-minute rate. */
static int fill_latency(cql_timer *tt, vrow *r)
{
    cql_hist_snap s;
    cql_timer_snapshot(tt, &s);
    fill_histogram(r, tt->h.count, &s, "_ms", 0.000001);
    vset_double(r, "per_second", cql_round3(cql_meter_rate5(&tt->m, cs_mono_ns())));
    return 0;
}

static int fill_read(cql_ctx *c, sch_table *bt, vrow *r)
{
    cql_table_metrics tmp;
    return fill_latency(&table_metrics(c, bt, &tmp)->reads, r);
}

static int fill_write(cql_ctx *c, sch_table *bt, vrow *r)
{
    cql_table_metrics tmp;
    return fill_latency(&table_metrics(c, bt, &tmp)->writes, r);
}

static int fill_scan(cql_ctx *c, sch_table *bt, vrow *r)
{
    cql_table_metrics tmp;
    return fill_latency(&table_metrics(c, bt, &tmp)->scans, r);
}

static int fill_count_hist(cql_hist *h, vrow *r)
{
    cql_hist_snap s;
    cql_histogram_snapshot(h, &s);
    fill_histogram(r, h->count, &s, "", 1.0);
    return 0;
}

static int fill_tombstones(cql_ctx *c, sch_table *bt, vrow *r)
{
    cql_table_metrics tmp;
    return fill_count_hist(&table_metrics(c, bt, &tmp)->tombstones, r);
}

static int fill_rows(cql_ctx *c, sch_table *bt, vrow *r)
{
    cql_table_metrics tmp;
    return fill_count_hist(&table_metrics(c, bt, &tmp)->live, r);
}

/* StorageTableMetric: bytes rounded up to mebibytes. */
static int64_t mebibytes(uint64_t bytes) { return (int64_t)((bytes + (1u << 20) - 1) >> 20); }

static int fill_disk(cql_ctx *ctx, sch_table *bt, vrow *r)
{
    st_table_stats st;
    memset(&st, 0, sizeof st);
    if (bt->st && st_table_stats_get(bt->st, &st))
        return -1;
    vset_bigint(r, "mebibytes", mebibytes(st.sstable_bytes));
    return 0;
}

static int fill_max_partition(cql_ctx *ctx, sch_table *bt, vrow *r)
{
    st_table_stats st;
    memset(&st, 0, sizeof st);
    if (bt->st && st_table_stats_get(bt->st, &st))
        return -1;
    vset_bigint(r, "mebibytes", mebibytes(st.max_partition_bytes));
    return 0;
}

/* On one node the coordinator is the replica: the coordinator_* tables map
 * to these too. */
int cql__vt_local_read_latency(cql_ctx *c, sch_table *t, emit_fn e, void *a) { return rows_per_table(c, t, e, a, fill_read); }
int cql__vt_local_write_latency(cql_ctx *c, sch_table *t, emit_fn e, void *a) { return rows_per_table(c, t, e, a, fill_write); }
int cql__vt_local_scan_latency(cql_ctx *c, sch_table *t, emit_fn e, void *a) { return rows_per_table(c, t, e, a, fill_scan); }
int cql__vt_tombstones_per_read(cql_ctx *c, sch_table *t, emit_fn e, void *a) { return rows_per_table(c, t, e, a, fill_tombstones); }
int cql__vt_rows_per_read(cql_ctx *c, sch_table *t, emit_fn e, void *a) { return rows_per_table(c, t, e, a, fill_rows); }
int cql__vt_disk_usage(cql_ctx *c, sch_table *t, emit_fn e, void *a) { return rows_per_table(c, t, e, a, fill_disk); }
int cql__vt_max_partition_size(cql_ctx *c, sch_table *t, emit_fn e, void *a) { return rows_per_table(c, t, e, a, fill_max_partition); }

/* ---------------------------------------------------------------- node-wide */

/* cql_metrics (CQLMetricsTable): name, value (double) per CQLMetrics
 * figure: the prepared statement cache's size and evictions, EXECUTEs and
 * QUERYs run, and the prepared share of them (RatioGauge: NaN before any). */
int cql__vt_cql_metrics(cql_ctx *ctx, sch_table *t, emit_fn emit, void *arg)
{
    cql_node_metrics *nm = cql_node_metrics_get(ctx);
    if (!nm)
        return CS_ENOMEM;
    double prep = (double)nm->prepared_executed, reg = (double)nm->regular_executed;
    const struct { const char *name; double v; } rows[] = {
        { "prepared_statements_count", (double)cql__prepared_count(ctx) },
        { "prepared_statements_evicted", (double)nm->prepared_evicted },
        { "prepared_statements_executed", prep },
        { "prepared_statements_ratio", prep + reg != 0 ? prep / (prep + reg) : NAN },
        { "regular_statements_executed", reg },
    };
    vrow r;
    cs_buf_init(&r.store);
    int rc = 0;
    for (size_t i = 0; i < CS_ARRAY_LEN(rows) && rc == 0; i++) {
        vrow_begin(&r, t);
        vset_text(&r, "name", rows[i].name);
        vset_double(&r, "value", rows[i].v);
        rc = vemit(&r, emit, arg);
    }
    cs_buf_destroy(&r.store);
    return rc;
}

/* batch_metrics (BatchMetricsTable): partitions per logged, unlogged and
 * counter batch, p50th, p99th, p999th (doubles, unrounded) and max. */
int cql__vt_batch_metrics(cql_ctx *ctx, sch_table *t, emit_fn emit, void *arg)
{
    cql_node_metrics *nm = cql_node_metrics_get(ctx);
    if (!nm)
        return CS_ENOMEM;
    const struct { const char *name; cql_hist *h; } rows[] = {
        { "partitions_per_counter_batch", &nm->batch_counter },
        { "partitions_per_logged_batch", &nm->batch_logged },
        { "partitions_per_unlogged_batch", &nm->batch_unlogged },
    };
    vrow r;
    cs_buf_init(&r.store);
    int rc = 0;
    for (size_t i = 0; i < CS_ARRAY_LEN(rows) && rc == 0; i++) {
        cql_hist_snap s;
        cql_histogram_snapshot(rows[i].h, &s);
        vrow_begin(&r, t);
        vset_text(&r, "name", rows[i].name);
        vset_double(&r, "p50th", cql_hist_value(&s, 0.5));
        vset_double(&r, "p99th", cql_hist_value(&s, 0.99));
        vset_double(&r, "p999th", cql_hist_value(&s, 0.999));
        vset_bigint(&r, "max", cql_hist_max(&s));
        rc = vemit(&r, emit, arg);
    }
    cs_buf_destroy(&r.store);
    return rc;
}
