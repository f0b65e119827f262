/*
 * metrics.c: per-table request metrics and the toppartitions sampler (see
 * metrics.h).  Tables are found by id in a small open-addressing map hung
 * off the context; the sampler counts partition keys in two maps (reads,
 * writes) while it is on.
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
    cql_table_metrics *tables; size_t cap, n;
    cql_table_metrics *last;           /* the entry find() recorded into last (a SELECT records
                                          twice, a workload mostly one table); NULL after a rehash */
    bool sampling; uint8_t sample_id[16];
    top_map reads, writes;
} metrics;

static uint64_t offsets[CQL_LAT_BUCKETS];

const uint64_t *cql_latency_offsets(void)
{
    if (!offsets[0]) {
        /* 1, 2, 3, ... then each ~1.2x the last, rounded up (EstimatedHistogram) */
        uint64_t last = 1;
        offsets[0] = 1;
        for (int i = 1; i < CQL_LAT_BUCKETS; i++) {
            uint64_t next = (uint64_t)((double)last * 1.2);
            if (next == last)
                next++;
            offsets[i] = last = next;
        }
    }
    return offsets;
}

double cql_latency_pct(const cql_latency *l, double p)
{
    if (!l->count)
        return 0;
    const uint64_t *off = cql_latency_offsets();
    uint64_t want = (uint64_t)((double)l->count * p / 100.0 + 0.999999), seen = 0;
    if (want == 0)
        want = 1;
    for (int i = 0; i < CQL_LAT_BUCKETS; i++) {
        seen += l->buckets[i];
        if (seen >= want)
            return (double)off[i];
    }
    return (double)l->max_us;
}

double cql_count_pct(const cql_latency *l, double p)
{
    if (!l->count)
        return 0;
    uint64_t want = (uint64_t)((double)l->count * p / 100.0 + 0.999999);
    if (want == 0)
        want = 1;
    if (l->zeros >= want)
        return 0;
    const uint64_t *off = cql_latency_offsets();
    uint64_t seen = l->zeros;
    for (int i = 0; i < CQL_LAT_BUCKETS; i++) {
        seen += l->buckets[i];
        if (seen >= want)
            return (double)off[i];
    }
    return (double)l->max_us;
}

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

/* The entry of table id, made when create (request loop only: creating
 * callers also keep m->last, the one-entry cache in front of the probe). */
static cql_table_metrics *find(metrics *m, const uint8_t id[16], bool create)
{
    if (create && m->last && !memcmp(m->last->id, id, 16))
        return m->last;
    if (create && (m->n + 1) * 2 > m->cap) {
        size_t nc = m->cap ? m->cap * 2 : 64;
        cql_table_metrics *nt = cs_calloc(nc, sizeof(*nt));
        if (!nt)
            return NULL;
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->tables[i].reads.count && !m->tables[i].writes.count && !m->tables[i].scans.count &&
                !memcmp(m->tables[i].id, (uint8_t[16]){ 0 }, 16))
                continue;
            size_t j = id_hash(m->tables[i].id) & (nc - 1);
            while (memcmp(nt[j].id, (uint8_t[16]){ 0 }, 16))
                j = (j + 1) & (nc - 1);
            nt[j] = m->tables[i];
        }
        cs_free(m->tables);
        m->tables = nt;
        m->cap = nc;
        m->last = NULL;
    }
    if (!m->cap)
        return NULL;
    size_t j = id_hash(id) & (m->cap - 1);
    while (memcmp(m->tables[j].id, (uint8_t[16]){ 0 }, 16)) {
        if (!memcmp(m->tables[j].id, id, 16))
            return create ? (m->last = &m->tables[j]) : &m->tables[j];
        j = (j + 1) & (m->cap - 1);
    }
    if (!create)
        return NULL;
    memcpy(m->tables[j].id, id, 16);
    m->n++;
    return m->last = &m->tables[j];
}

static void lat_add(cql_latency *l, uint64_t us)
{
    const uint64_t *off = cql_latency_offsets();
    int lo = 0, hi = CQL_LAT_BUCKETS - 1;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (off[mid] < us) lo = mid + 1; else hi = mid;
    }
    l->buckets[lo]++;
    l->count++;
    l->total_us += us;
    if (us > l->max_us)
        l->max_us = us;
}

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

void cql_metrics_record(cql_ctx *ctx, const sch_table *t, int kind, uint64_t micros, const uint8_t *pk,
                        size_t pk_len)
{
    metrics *m = M(ctx);
    if (!m || !t)
        return;
    cql_table_metrics *tm = find(m, t->id, true);
    if (!tm)
        return;
    lat_add(kind == 1 ? &tm->writes : kind == 2 ? &tm->scans : &tm->reads, micros);
    if (m->sampling && pk && !memcmp(m->sample_id, t->id, 16))
        top_add(kind == 1 ? &m->writes : &m->reads, pk, pk_len);
}

void cql_metrics_sample(cql_ctx *ctx, const sch_table *t, bool write, const uint8_t *pk, size_t pk_len)
{
    metrics *m = ctx->metrics;
    if (m && m->sampling && t && pk && !memcmp(m->sample_id, t->id, 16))
        top_add(write ? &m->writes : &m->reads, pk, pk_len);
}

void cql_metrics_record_read_stats(cql_ctx *ctx, const sch_table *t, uint64_t rows, uint64_t tombstones,
                                   int64_t sstables)
{
    metrics *m = M(ctx);
    cql_table_metrics *tm = m && t ? find(m, t->id, true) : NULL;
    if (!tm)
        return;
    tm->rows_read += rows;
    tm->tombstones_scanned += tombstones;
    if (sstables == 0) {
        tm->sstables_per_read.zeros++;
        tm->sstables_per_read.count++;
    } else if (sstables > 0) {
        lat_add(&tm->sstables_per_read, (uint64_t)sstables);
    }
    int64_t minute = cs_now_coarse_ms() / 60000;   /* per SELECT: the cheap clock */
    cql_slice_minute *sm = &tm->slices[minute % 5];
    if (sm->minute != minute)
        *sm = (cql_slice_minute){ .minute = minute };
    sm->reads++;
    sm->rows += rows;
    sm->tombstones += tombstones;
    if (rows > sm->rows_max)
        sm->rows_max = rows;
    if (tombstones > sm->tombstones_max)
        sm->tombstones_max = tombstones;
}

void cql_metrics_slices(const cql_table_metrics *tm, int64_t now_ms, double *avg_rows, uint64_t *max_rows,
                        double *avg_tombstones, uint64_t *max_tombstones)
{
    uint64_t reads = 0, rows = 0, tombs = 0;
    *max_rows = *max_tombstones = 0;
    int64_t now = now_ms / 60000;
    for (int i = 0; tm && i < 5; i++) {
        const cql_slice_minute *sm = &tm->slices[i];
        if (!sm->reads || sm->minute <= now - 5 || sm->minute > now)
            continue;
        reads += sm->reads;
        rows += sm->rows;
        tombs += sm->tombstones;
        if (sm->rows_max > *max_rows)
            *max_rows = sm->rows_max;
        if (sm->tombstones_max > *max_tombstones)
            *max_tombstones = sm->tombstones_max;
    }
    *avg_rows = reads ? (double)rows / (double)reads : 0.0 / 0.0;
    *avg_tombstones = reads ? (double)tombs / (double)reads : 0.0 / 0.0;
}

int cql_thread_pools(cql_ctx *ctx, bool in_request, cql_pool *out, int max)
{
    st_engine_stats es;
    st_engine_stats_get(ctx->eng, &es);
    uint64_t reads = 0, writes = 0;
    metrics *m = ctx->metrics;
    for (size_t i = 0; m && i < m->cap; i++) {   /* empty slots count zero */
        reads += m->tables[i].reads.count + m->tables[i].scans.count;
        writes += m->tables[i].writes.count;
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

const cql_table_metrics *cql_metrics_get(cql_ctx *ctx, const uint8_t id[16])
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
    cs_free(m->tables);
    cs_free(m);
    ctx->metrics = NULL;
}
