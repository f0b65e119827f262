/*
 * metrics.c: per-table request metrics, the node-wide CQL and batch
 * metrics, and the toppartitions sampler (see metrics.h).  Tables are found
 * by id in a small open-addressing map of entries hung off the context;
 * the sampler counts partition keys in two maps (reads, writes) while it
 * is on.
 */
#include "cql/metrics.h"
#include "common/alloc.h"
#include "common/hash.h"
#include "common/util.h"
#include "cql/cql_int.h"
#include "storage/storage.h"
#include <stdlib.h>
#include <string.h>

typedef struct top_map { cql_top_entry *e; uint64_t *h; size_t cap, n; } top_map;

typedef struct metrics {
    cql_table_metrics **tables; size_t cap, n;   /* open addressing by id; entries never move */
    cql_table_metrics *last;           /* the entry find() recorded into last (a SELECT records
                                          twice, a workload mostly one table) */
    cql_node_metrics *node;            /* made on first use */
    bool sampling; uint8_t sample_id[16];
    top_map reads, writes;
} metrics;

static metrics *M(cql_ctx *ctx)
{
    if (!ctx->metrics)
        ctx->metrics = cs_calloc(1, sizeof(metrics));
    return ctx->metrics;
}

/* Slot hash of a table id (a uuid: random or MD5 bits, so a multiply-mix
 * of its two halves spreads well). */
static size_t id_hash(const uint8_t id[16])
{
    uint64_t a, b;
    memcpy(&a, id, 8);
    memcpy(&b, id + 8, 8);
    uint64_t h = (a ^ (b * 0x9E3779B97F4A7C15ull)) * 0xBF58476D1CE4E5B9ull;
    return (size_t)(h ^ (h >> 31));
}

void cql_table_metrics_init(cql_table_metrics *tm, const uint8_t id[16], uint64_t now_ns)
{
    memcpy(tm->id, id, 16);
    cql_timer *tt[] = { &tm->reads, &tm->writes, &tm->scans };
    for (size_t i = 0; i < CS_ARRAY_LEN(tt); i++) {
        cql_hist_init(&tt[i]->h, CQL_HIST_TIMER, now_ns);
        cql_meter_init(&tt[i]->m, now_ns);
        tt[i]->total_us = 0;
    }
    cql_hist_init(&tm->sstables_per_read, CQL_HIST_COUNT0, now_ns);
    cql_hist_init(&tm->tombstones, CQL_HIST_COUNT, now_ns);
    cql_hist_init(&tm->live, CQL_HIST_COUNT, now_ns);
}

/* A new table's metrics: every histogram's decay landmark is now, as a
 * Cassandra table's metrics start when the table is opened. */
static cql_table_metrics *table_new(const uint8_t id[16])
{
    cql_table_metrics *tm = cs_malloc(sizeof *tm);
    if (tm)
        cql_table_metrics_init(tm, id, cs_mono_ns());
    return tm;
}

/* The entry of table id, made when create (request loop only: creating
 * callers also keep m->last, the one-entry cache in front of the probe). */
static cql_table_metrics *find(metrics *m, const uint8_t id[16], bool create)
{
    if (m->last && !memcmp(m->last->id, id, 16))
        return m->last;
    if (create && (m->n + 1) * 2 > m->cap) {
        size_t nc = m->cap ? m->cap * 2 : 64;
        cql_table_metrics **nt = cs_calloc(nc, sizeof(*nt));
        if (!nt)
            return NULL;
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->tables[i])
                continue;
            size_t j = id_hash(m->tables[i]->id) & (nc - 1);
            while (nt[j])
                j = (j + 1) & (nc - 1);
            nt[j] = m->tables[i];
        }
        cs_free(m->tables);
        m->tables = nt;
        m->cap = nc;
    }
    if (!m->cap)
        return NULL;
    size_t j = id_hash(id) & (m->cap - 1);
    while (m->tables[j]) {
        if (!memcmp(m->tables[j]->id, id, 16))
            return create ? (m->last = m->tables[j]) : m->tables[j];
        j = (j + 1) & (m->cap - 1);
    }
    if (!create || !(m->tables[j] = table_new(id)))
        return NULL;
    m->n++;
    return m->last = m->tables[j];
}

/* The time for a histogram update made while a request runs: its start
 * (the histograms decay by whole seconds, so the microseconds since do not
 * matter), which saves a clock read per read and per batch. */
static uint64_t metrics_now(const cql_ctx *ctx)
{
    return ctx->running.kind != CQL_RUN_NONE ? ctx->running.started_ns : cs_mono_ns();
}

/* ---------------------------------------------------------------- node-wide */

cql_node_metrics *cql_node_metrics_get(cql_ctx *ctx)
{
    metrics *m = M(ctx);
    if (m && !m->node && (m->node = cs_calloc(1, sizeof *m->node))) {
        uint64_t now = cs_mono_ns();
        cql_hist_init(&m->node->batch_logged, CQL_HIST_COUNT, now);
        cql_hist_init(&m->node->batch_unlogged, CQL_HIST_COUNT, now);
        cql_hist_init(&m->node->batch_counter, CQL_HIST_COUNT, now);
        cql_timer *pt[] = { &m->node->proxy_read, &m->node->proxy_write, &m->node->proxy_range };
        for (size_t i = 0; i < CS_ARRAY_LEN(pt); i++) {
            cql_hist_init(&pt[i]->h, CQL_HIST_TIMER, now);
            cql_meter_init(&pt[i]->m, now);
        }
    }
    return m ? m->node : NULL;
}

void cql_metrics_statement(cql_ctx *ctx, bool prepared)
{
    cql_node_metrics *n = cql_node_metrics_get(ctx);
    if (n)
        ++*(prepared ? &n->prepared_executed : &n->regular_executed);
}

void cql_metrics_batch(cql_ctx *ctx, int kind, int partitions)
{
    cql_node_metrics *n = cql_node_metrics_get(ctx);
    if (n)
        cql_hist_add(kind == 0 ? &n->batch_logged : kind == 2 ? &n->batch_counter : &n->batch_unlogged,
                     partitions, metrics_now(ctx));
}

void cql_timer_snapshot(cql_timer *t, cql_hist_snap *s) { cql_hist_snapshot(&t->h, cs_mono_ns(), s); }
void cql_histogram_snapshot(cql_hist *h, cql_hist_snap *s) { cql_hist_snapshot(h, cs_mono_ns(), s); }

/* ---------------------------------------------------------------- per table */

static void top_add(top_map *t, const uint8_t *pk, size_t n)
{
    uint64_t h = cs_xxh64(pk, n, 7) | 1;
    if ((t->n + 1) * 2 > t->cap) {
        size_t nc = t->cap ? t->cap * 2 : 256;
        cql_top_entry *ne = cs_calloc(nc, sizeof(*ne));
        uint64_t *nh = cs_calloc(nc, sizeof(uint64_t));
        if (!ne || !nh) {
            cs_free(ne);
            cs_free(nh);
            return;
        }
        for (size_t i = 0; i < t->cap; i++) {
            if (!t->h[i]) continue;
            size_t j = t->h[i] & (nc - 1);
            while (nh[j]) j = (j + 1) & (nc - 1);
            nh[j] = t->h[i];
            ne[j] = t->e[i];
        }
        cs_free(t->e);
        cs_free(t->h);
        t->e = ne;
        t->h = nh;
        t->cap = nc;
    }
    size_t j = h & (t->cap - 1);
    while (t->h[j] && !(t->h[j] == h && t->e[j].pk_len == n && !memcmp(t->e[j].pk, pk, n)))
        j = (j + 1) & (t->cap - 1);
    if (!t->h[j]) {
        t->h[j] = h;
        t->e[j].pk = cs_memdup(pk, n);
        t->e[j].pk_len = n;
        t->n++;
    }
    t->e[j].count++;
}

void cql_metrics_record(cql_ctx *ctx, const sch_table *t, int kind, uint64_t micros, uint64_t now_ns,
                        const uint8_t *pk, size_t pk_len)
{
    metrics *m = M(ctx);
    if (!m || !t)
        return;
    cql_table_metrics *tm = find(m, t->id, true);
    if (!tm)
        return;
    /* LatencyMetrics.addNano: the Timer (µs, truncated) and the total */
    cql_timer *tt = kind == 1 ? &tm->writes : kind == 2 ? &tm->scans : &tm->reads;
    cql_hist_add(&tt->h, (int64_t)micros, now_ns);
    cql_meter_mark(&tt->m, 1, now_ns);
    tt->total_us += micros;
    cql_node_metrics *nm = cql_node_metrics_get(ctx);
    if (nm) {   /* the coordinator's ClientRequest latency of the same request */
        cql_timer *pt = kind == 1 ? &nm->proxy_write : kind == 2 ? &nm->proxy_range : &nm->proxy_read;
        cql_hist_add(&pt->h, (int64_t)micros, now_ns);
        cql_meter_mark(&pt->m, 1, now_ns);
        pt->total_us += micros;
    }
    if (m->sampling && pk && !memcmp(m->sample_id, t->id, 16))
        top_add(kind == 1 ? &m->writes : &m->reads, pk, pk_len);
}

void cql_metrics_sample(cql_ctx *ctx, const sch_table *t, bool write, const uint8_t *pk, size_t pk_len)
{
    metrics *m = ctx->metrics;
    if (m && m->sampling && t && pk && !memcmp(m->sample_id, t->id, 16))
        top_add(write ? &m->writes : &m->reads, pk, pk_len);
}

/* ReadCommand's metric recording when a read closes: the tombstones and
 * live rows it scanned, and for a single partition the sstables it
 * merged (SinglePartitionReadCommand: updateSSTableIterated). */
void cql_metrics_record_read_stats(cql_ctx *ctx, const sch_table *t, uint64_t rows, uint64_t tombstones,
                                   int64_t sstables)
{
    metrics *m = M(ctx);
    cql_table_metrics *tm = m && t ? find(m, t->id, true) : NULL;
    if (!tm)
        return;
    uint64_t now = metrics_now(ctx);
    cql_hist_add(&tm->tombstones, (int64_t)tombstones, now);
    cql_hist_add(&tm->live, (int64_t)rows, now);
    if (sstables >= 0)
        cql_hist_add(&tm->sstables_per_read, sstables, now);
}

int cql_thread_pools(cql_ctx *ctx, bool in_request, cql_pool *out, int max)
{
    st_engine_stats es;
    st_engine_stats_get(ctx->eng, &es);
    uint64_t reads = 0, writes = 0;
    metrics *m = ctx->metrics;
    for (size_t i = 0; m && i < m->cap; i++) {
        if (!m->tables[i])
            continue;
        reads += m->tables[i]->reads.h.count + m->tables[i]->scans.h.count;
        writes += m->tables[i]->writes.h.count;
    }
    cql_pool p[5] = {
        { "CompactionExecutor", es.compactions_running, es.compaction_threads, (int)es.compactions_pending,
          es.compactions_done, 0, 0 },
        { "MemtableFlushWriter", es.flushes_running, es.flush_threads, (int)es.flushes_queued, es.flushes_done, 0, 0 },
        /* a writer held by back-pressure holds the loop: never blocked when asked */
        { "MutationStage", 0, 1, 0, writes, 0, es.backpressure_waits },
        { "Native-Transport-Requests", in_request ? 1 : 0, 1, 0, ctx->requests, 0, 0 },
        { "ReadStage", 0, 1, 0, reads, 0, 0 },
    };
    int n = max < 5 ? max : 5;
    memcpy(out, p, sizeof *out * (size_t)n);
    return n;
}

cql_table_metrics *cql_metrics_get(cql_ctx *ctx, const uint8_t id[16])
{
    metrics *m = ctx->metrics;
    return m ? find(m, id, false) : NULL;
}

static void top_clear(top_map *t)
{
    for (size_t i = 0; i < t->cap; i++)
        if (t->h[i])
            cs_free(t->e[i].pk);
    cs_free(t->e);
    cs_free(t->h);
    memset(t, 0, sizeof(*t));
}

int cql_toppartitions_start(cql_ctx *ctx, const sch_table *t)
{
    metrics *m = M(ctx);
    if (!m)
        return CS_ENOMEM;
    top_clear(&m->reads);
    top_clear(&m->writes);
    memcpy(m->sample_id, t->id, 16);
    m->sampling = true;
    return 0;
}

static int cmp_count_desc(const void *a, const void *b)
{
    uint64_t x = ((const cql_top_entry *)a)->count, y = ((const cql_top_entry *)b)->count;
    return x < y ? 1 : x > y ? -1 : 0;
}

static void top_take(top_map *t, cql_top_entry **out, int *n)
{
    *out = cs_calloc(t->n + 1, sizeof(cql_top_entry));
    *n = 0;
    for (size_t i = 0; i < t->cap; i++)
        if (t->h[i]) {
            (*out)[(*n)++] = t->e[i];
            t->e[i].pk = NULL;
        }
    qsort(*out, (size_t)*n, sizeof(cql_top_entry), cmp_count_desc);
    top_clear(t);
}

void cql_toppartitions_stop(cql_ctx *ctx, cql_top_entry **reads, int *n_reads, cql_top_entry **writes,
                            int *n_writes)
{
    metrics *m = M(ctx);
    m->sampling = false;
    top_take(&m->reads, reads, n_reads);
    top_take(&m->writes, writes, n_writes);
}

void cql_toppartitions_free(cql_top_entry *e, int n)
{
    for (int i = 0; i < n; i++)
        cs_free(e[i].pk);
    cs_free(e);
}

void cql_metrics_free(cql_ctx *ctx)
{
    metrics *m = ctx->metrics;
    if (!m)
        return;
    top_clear(&m->reads);
    top_clear(&m->writes);
    for (size_t i = 0; i < m->cap; i++)
        cs_free(m->tables[i]);
    cs_free(m->tables);
    cs_free(m->node);
    cs_free(m);
    ctx->metrics = NULL;
}
