/*
 * nodetool.c: nodetool verbs (see nodetool.h).  Layouts follow Cassandra
 * 4.1's nodetool (tools/nodetool/) so scripts that scrape them keep
 * working; figures come from the catalog and the storage engine.
 */
#include "server/nodetool.h"
#include "server/nodetool_int.h"
#include "server/config.h"
#include "common/alloc.h"
#include "common/hash.h"
#include "common/util.h"
#include "cql/metrics.h"
#include "cql/schema.h"
#include "cql/types.h"
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uv.h>

void nodetool__printf(cs_buf *o, const char *fmt, ...)
{
    char tmp[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n > 0)
        cs_buf_put(o, tmp, (size_t)(n < (int)sizeof(tmp) ? n : (int)sizeof(tmp) - 1));
}

/* FileUtils.stringifyFileSize: DecimalFormat("#.##") of the value in the
 * largest unit it reaches ("3.2 MiB", "512 MiB", "0 bytes"). */
void nodetool__human(uint64_t b, char *out, size_t n)
{
    static const char *const units[] = { "bytes", "KiB", "MiB", "GiB", "TiB" };
    int u = 0;
    double v = (double)b;
    while (u < 4 && v >= 1024.0) { v /= 1024.0; u++; }
    char num[48];
    snprintf(num, sizeof num, "%.2f", v);
    char *dot = strchr(num, '.');
    if (dot) {                                   /* no trailing zeros, no lone point */
        char *end = num + strlen(num) - 1;
        while (end > dot && *end == '0') *end-- = 0;
        if (end == dot) *end = 0;
    }
    snprintf(out, n, "%s %s", num, units[u]);
}

static uint64_t rss_bytes(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return 0;
    char line[256];
    uint64_t kb = 0;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "VmRSS: %llu kB", (unsigned long long *)&kb) == 1)
            break;
    fclose(f);
    return kb * 1024;
}

static const char *repl_class(const sch_keyspace *k, int *replicas);

/* A table's off-heap memory as Cassandra counts it (Info and tablestats):
 * memtables (on the heap here: 0), bloom filters, index summaries and
 * compression metadata, cassette's in-memory filters, partition index and
 * block offset tables. */
static uint64_t offheap_bytes(const st_table_stats *st)
{
    return st->bloom_mem_bytes + st->index_mem_bytes + st->chunk_offsets_bytes;
}

/* The node's figures summed over every table with storage, in one walk:
 * load (live sstable and memtable bytes), off-heap memory, and the
 * uncompressed bytes of keyspaces replicated more than once that
 * TableMetrics.globalPercentRepaired counts (not system_distributed). */
typedef struct node_sums { uint64_t load, offheap, replicated; } node_sums;

static node_sums node_sums_get(sch_catalog *c)
{
    node_sums ns = { 0, 0, 0 };
    for (int i = 0; i < sch_keyspace_count(c); i++) {
        sch_keyspace *k = sch_keyspace_at(c, i);
        int rf;
        bool repaired_kind = !k->is_virtual && strcmp(k->name, "system_distributed") != 0 &&
                             strcmp(repl_class(k, &rf), "LocalStrategy") != 0 && rf >= 2;
        for (int j = 0; j < k->n_tables; j++) {
            st_table_stats st;
            if (!k->tables[j]->st || st_table_stats_get(k->tables[j]->st, &st))
                continue;
            ns.load += st.sstable_bytes + st.memtable_bytes;
            ns.offheap += offheap_bytes(&st);
            if (repaired_kind)
                ns.replicated += st.uncompressed_bytes;
        }
    }
    return ns;
}

const char *nodetool__listen_addr(srv *s)
{
    return s->cfg && s->cfg->listen_address[0] ? s->cfg->listen_address : "127.0.0.1";
}

/* The native transport's address (numeric, as bound; rpc_address). */
static const char *native_addr(srv *s)
{
    return s->addr[0] ? s->addr : nodetool__listen_addr(s);
}

/* A double as Java's Double.toString prints it (tablestats prints doubles
 * by string concatenation): NaN, the shortest digits that read back the
 * same, at least one decimal, E notation below 1e-3 and from 1e7. */
void nodetool__java_double(double v, char *out, size_t n)
{
    cs_buf b;
    cs_buf_init(&b);
    ctype_format_java_double(v, false, &b);
    snprintf(out, n, "%.*s", (int)b.len, b.p ? (const char *)b.p : "");
    cs_buf_destroy(&b);
}

/* FBUtilities.prettyPrintMemory: KiB below 1 MiB, three decimals. */
static void pretty_memory(uint64_t b, char *out, size_t n)
{
    if (b >= 1ull << 30) snprintf(out, n, "%.3fGiB", (double)b / (double)(1ull << 30));
    else if (b >= 1ull << 20) snprintf(out, n, "%.3fMiB", (double)b / (double)(1ull << 20));
    else snprintf(out, n, "%.3fKiB", (double)b / 1024.0);
}

/* ring as Cassandra 4.1's Ring: one line per token of this node, sorted,
 * under the last token, then the vnodes warning.  A single node owns the
 * whole ring: 100.00% effective ownership on every line. */
static int do_ring(srv *s, cs_buf *o)
{
    cql_node_info ni;
    cql_node_info_get(s->cql, &ni);
    char load[32], addr[300], fmt[64];
    nodetool__human(node_sums_get(cql_ctx_catalog(s->cql)).load, load, sizeof(load));
    /* the address column is as wide as "address:storage port" */
    snprintf(addr, sizeof addr, "%s:7000", nodetool__listen_addr(s));
    snprintf(fmt, sizeof fmt, "%%-%ds  %%-12s%%-7s%%-8s%%-16s%%-20s%%-44s\n", (int)strlen(addr));
    nodetool__printf(o, "\nDatacenter: datacenter1\n==========\n");
    nodetool__printf(o, fmt, "Address", "Rack", "Status", "State", "Load", "Owns", "Token");
    char last[32];
    snprintf(last, sizeof last, "%lld", ni.n_tokens ? (long long)ni.tokens[ni.n_tokens - 1] : 0LL);
    if (ni.n_tokens > 1)
        nodetool__printf(o, fmt, "", "", "", "", "", "", last);
    else
        nodetool__printf(o, "\n");
    for (int i = 0; i < ni.n_tokens; i++) {
        char tok[32];
        snprintf(tok, sizeof tok, "%lld", (long long)ni.tokens[i]);
        nodetool__printf(o, fmt, nodetool__listen_addr(s), "rack1", "Up", "Normal", load, "100.00%", tok);
    }
    nodetool__printf(o, "\n");
    if (ni.n_tokens > 1)
        nodetool__printf(o, "  Warning: \"nodetool ring\" is used to output all the tokens of a node.\n"
                      "  To view status related info of a node use \"nodetool status\" instead.\n\n");
    nodetool__printf(o, "\n  ");
    return 200;
}

static int do_status(srv *s, cs_buf *o)
{
    cql_node_info ni;
    cql_node_info_get(s->cql, &ni);
    char load[32];
    nodetool__human(node_sums_get(cql_ctx_catalog(s->cql)).load, load, sizeof(load));
    nodetool__printf(o, "Datacenter: datacenter1\n=======================\nStatus=Up/Down\n|/ State=Normal/Leaving/Joining/Moving\n");
    nodetool__printf(o, "--  Address    Load        Tokens  Owns (effective)  Host ID                               Rack\n");
    nodetool__printf(o, "UN  %-9s  %-10s  %-6d  %-16s  %-36s  rack1\n\n", nodetool__listen_addr(s), load, ni.n_tokens, "100.0%",
               ni.host_id);
    return 200;
}

static int do_info(srv *s, cs_buf *o)
{
    cql_node_info ni;
    cql_node_info_get(s->cql, &ni);
    char load[32];
    node_sums ns = node_sums_get(cql_ctx_catalog(s->cql));
    nodetool__human(ns.load, load, sizeof(load));
    double heap = (double)cs_alloc_used() / (1024.0 * 1024.0), rss = (double)rss_bytes() / (1024.0 * 1024.0);
    nodetool__printf(o, "ID                     : %s\n", ni.host_id);
    nodetool__printf(o, "Gossip active          : %s\n", s->drained ? "false" : "true");   /* drain stops gossip */
    nodetool__printf(o, "Native Transport active: %s\n", srv_native_running(s) ? "true" : "false");
    nodetool__printf(o, "Load                   : %s\n", load);
    nodetool__printf(o, "Generation No          : %lld\n", (long long)(ni.started_ms / 1000));
    nodetool__printf(o, "Uptime (seconds)       : %lld\n", (long long)((cs_now_ms() - ni.started_ms) / 1000));
    nodetool__printf(o, "Heap Memory (MB)       : %.2f / %.2f\n", heap, rss);
    nodetool__printf(o, "Off Heap Memory (MB)   : %.2f\n", (double)ns.offheap / (1024.0 * 1024.0));
    nodetool__printf(o, "Data Center            : datacenter1\n");
    nodetool__printf(o, "Rack                   : rack1\n");
    nodetool__printf(o, "Exceptions             : 0\n");
    /* cassette keeps no key, row or counter cache: empty ones, as Cassandra
     * prints a cache sized 0 */
    static const char *const none[] = { "Key Cache", "Row Cache", "Counter Cache" };
    for (int i = 0; i < 3; i++)
        nodetool__printf(o, "%-23s: entries 0, size 0 bytes, capacity 0 bytes, 0 hits, 0 requests, NaN recent hit rate, "
                      "0 save period in seconds\n", none[i]);
    st_block_cache_stats cs;
    st_block_cache_stats_get(&cs);
    char size[32], cap[32], rate[16];
    nodetool__human(cs.size_bytes, size, sizeof size);
    nodetool__human(cs.capacity_bytes, cap, sizeof cap);
    if (cs.requests) snprintf(rate, sizeof rate, "%.3f", (double)cs.hits / (double)cs.requests);
    else snprintf(rate, sizeof rate, "NaN");
    /* the block cache is the chunk cache; the miss latency is the mean
     * since start (Cassandra's, a decaying reservoir's: NaN before a miss) */
    char lat[32];
    if (cs.misses_timed) snprintf(lat, sizeof lat, "%.3f", (double)cs.miss_ns / 1e3 / (double)cs.misses_timed);
    else snprintf(lat, sizeof lat, "NaN");
    nodetool__printf(o, "%-23s: entries %llu, size %s, capacity %s, %llu misses, %llu requests, %s recent hit rate, "
                  "%s microseconds miss latency\n", "Chunk Cache", (unsigned long long)cs.entries, size, cap,
               (unsigned long long)(cs.requests - cs.hits), (unsigned long long)cs.requests, rate, lat);
    /* TableMetrics.globalPercentRepaired: nothing is ever repaired here, so
     * 0.0 as soon as a keyspace it counts holds data */
    nodetool__printf(o, "Percent Repaired       : %s%%\n", ns.replicated ? "0.0" : "100.0");
    nodetool__printf(o, "Token                  : (invoke with -T/--tokens to see all %d tokens)\n", ni.n_tokens);
    return 200;
}

static int do_describecluster(srv *s, cs_buf *o)
{
    cql_node_info ni;
    cql_node_info_get(s->cql, &ni);
    nodetool__printf(o, "Cluster Information:\n\tName: %s\n\tSnitch: org.apache.cassandra.locator.SimpleSnitch\n",
               ni.cluster_name ? ni.cluster_name : "Test Cluster");
    nodetool__printf(o, "\tDynamicEndPointSnitch: enabled\n\tPartitioner: org.apache.cassandra.dht.Murmur3Partitioner\n");
    nodetool__printf(o, "\tSchema versions:\n\t\t%s: [%s]\n\n", ni.schema_version, nodetool__listen_addr(s));
    nodetool__printf(o, "Stats for all nodes:\n\tLive: 1\n\tJoining: 0\n\tMoving: 0\n\tLeaving: 0\n\tUnreachable: 0\n\n");
    nodetool__printf(o, "Data Centers: \n\tdatacenter1 #Nodes: 1 #Down: 0\n");
    return 200;
}

/* StatsKeyspace.readLatency: the tables' total µs over their count, in ms. */
static double total_mean_ms(uint64_t total_us, uint64_t count)
{
    return count ? (double)total_us / (double)count / 1000.0 : 0.0 / 0.0;
}

/* TableStatsHolder's local latency: the Timer's (decayed) mean µs in ms,
 * NaN unless above 0. */
static double timer_mean_ms(cql_timer *t)
{
    cql_hist_snap sn;
    cql_timer_snapshot(t, &sn);
    double v = cql_hist_mean(&sn) / 1000.0;
    return v > 0 ? v : 0.0 / 0.0;
}

/* Java's String.format("%01.3f") of a latency: NaN without requests. */
static void ms3(double v, char *out, size_t n)
{
    if (v != v) snprintf(out, n, "NaN");
    else snprintf(out, n, "%.3f", v);
}

/* nodetool prints the per-level lines for LeveledCompactionStrategy only. */
static bool is_leveled(const sch_table *t)
{
    for (int i = 0; i < t->n_compaction; i++)
        if (!strcmp(t->compaction_k[i], "class") && strstr(t->compaction_v[i], "LeveledCompactionStrategy"))
            return true;
    return false;
}

/* One table in Cassandra 4.1's tablestats layout (TableStatsPrinter), every
 * figure from the table's storage and request metrics.  Lines a single node
 * without repair, snapshots or off-heap memtables always reads the same in
 * Cassandra too: Old SSTable count 0 (one sstable format), Speculative
 * retries 0, Bytes repaired / pending 0, memtable off heap 0, Dropped
 * Mutations 0. */
static void table_stats_block(cs_buf *o, srv *s, sch_table *t)
{
    cql_table_metrics *tm = cql_metrics_get(s->cql, t->id), empty;
    if (!tm) {
        cql_table_metrics_init(&empty, t->id, cs_mono_ns());
        tm = &empty;
    }
    st_table_stats st;
    memset(&st, 0, sizeof(st));
    if (t->st)
        st_table_stats_get(t->st, &st);
    char d[64], m[64];
    nodetool__printf(o, "\t\tTable%s: %s\n", t->is_view ? " (view)" : "", t->name);
    nodetool__printf(o, "\t\tSSTable count: %llu\n", (unsigned long long)st.sstable_count);
    nodetool__printf(o, "\t\tOld SSTable count: 0\n");
    if (is_leveled(t)) {
        nodetool__printf(o, "\t\tSSTables in each level: [");
        for (int l = 0; l < 8; l++) {
            /* nodetool shows the level's limit when it is over it: L0 4, then fanout^level */
            uint64_t max = 4;
            for (int k = 0; k < l; k++) max = k ? max * 10 : 10;
            if (st.sstables_per_level[l] > 0 && (uint64_t)st.sstables_per_level[l] > max)
                nodetool__printf(o, "%s%d/%llu", l ? ", " : "", st.sstables_per_level[l], (unsigned long long)max);
            else
                nodetool__printf(o, "%s%d", l ? ", " : "", st.sstables_per_level[l]);
        }
        nodetool__printf(o, "]\n\t\tSSTable bytes in each level: [");
        for (int l = 0; l < 8; l++)
            nodetool__printf(o, "%s%llu", l ? ", " : "", (unsigned long long)st.sstables_bytes_per_level[l]);
        nodetool__printf(o, "]\n");
    }
    uint64_t offheap = offheap_bytes(&st);
    nodetool__printf(o, "\t\tSpace used (live): %llu\n", (unsigned long long)st.sstable_bytes);
    nodetool__printf(o, "\t\tSpace used (total): %llu\n", (unsigned long long)st.sstable_bytes);
    /* SnapshotsSize (cfs.trueSnapshotsSize): the snapshots' sstable files
     * that no live sstable shares, manifests left out (SSTableSizeSummer) */
    uint64_t snap_true = 0;
    st_snapshot_info *sv; int nsv;
    if (t->st && st_table_snapshots(t->st, &sv, &nsv) == 0) {
        for (int x = 0; x < nsv; x++) snap_true += sv[x].sstable_true_size;
        cs_free(sv);
    }
    nodetool__printf(o, "\t\tSpace used by snapshots (total): %llu\n", (unsigned long long)snap_true);
    nodetool__printf(o, "\t\tOff heap memory used (total): %llu\n", (unsigned long long)offheap);
    /* CompressionRatio: compressed / uncompressed over the live sstables, -1 without any */
    nodetool__java_double(st.uncompressed_bytes ? (double)st.data_bytes / (double)st.uncompressed_bytes : -1.0, d, sizeof d);
    nodetool__printf(o, "\t\tSSTable Compression Ratio: %s\n", d);
    nodetool__printf(o, "\t\tNumber of partitions (estimate): %llu\n", (unsigned long long)st.partitions_estimate);
    nodetool__printf(o, "\t\tMemtable cell count: %llu\n", (unsigned long long)st.memtable_cells);
    nodetool__printf(o, "\t\tMemtable data size: %llu\n", (unsigned long long)st.memtable_bytes);
    nodetool__printf(o, "\t\tMemtable off heap memory used: 0\n");
    nodetool__printf(o, "\t\tMemtable switch count: %llu\n", (unsigned long long)st.memtable_switches);
    nodetool__printf(o, "\t\tSpeculative retries: 0\n");
    nodetool__printf(o, "\t\tLocal read count: %llu\n", (unsigned long long)tm->reads.h.count);
    ms3(timer_mean_ms(&tm->reads), d, sizeof d);
    nodetool__printf(o, "\t\tLocal read latency: %s ms\n", d);
    nodetool__printf(o, "\t\tLocal write count: %llu\n", (unsigned long long)tm->writes.h.count);
    ms3(timer_mean_ms(&tm->writes), d, sizeof d);
    nodetool__printf(o, "\t\tLocal write latency: %s ms\n", d);
    nodetool__printf(o, "\t\tPending flushes: %llu\n", (unsigned long long)st.pending_flushes);
    /* PercentRepaired: 100.0 without sstables; cassette never marks one repaired */
    nodetool__printf(o, "\t\tPercent repaired: %s\n", st.sstable_count ? "0.0" : "100.0");
    pretty_memory(0, m, sizeof m);
    nodetool__printf(o, "\t\tBytes repaired: %s\n", m);
    pretty_memory(st.uncompressed_bytes, d, sizeof d);   /* BytesUnrepaired: uncompressed lengths */
    nodetool__printf(o, "\t\tBytes unrepaired: %s\n", d);
    nodetool__printf(o, "\t\tBytes pending repair: %s\n", m);
    nodetool__printf(o, "\t\tBloom filter false positives: %llu\n", (unsigned long long)st.bloom_false_positives);
    nodetool__printf(o, "\t\tBloom filter false ratio: %.5f\n", st.bloom_fp_ratio);
    nodetool__printf(o, "\t\tBloom filter space used: %llu\n", (unsigned long long)st.bloom_disk_bytes);
    nodetool__printf(o, "\t\tBloom filter off heap memory used: %llu\n", (unsigned long long)st.bloom_mem_bytes);
    nodetool__printf(o, "\t\tIndex summary off heap memory used: %llu\n", (unsigned long long)st.index_mem_bytes);
    nodetool__printf(o, "\t\tCompression metadata off heap memory used: %llu\n", (unsigned long long)st.chunk_offsets_bytes);
    nodetool__printf(o, "\t\tCompacted partition minimum bytes: %llu\n", (unsigned long long)st.min_partition_bytes);
    nodetool__printf(o, "\t\tCompacted partition maximum bytes: %llu\n", (unsigned long long)st.max_partition_bytes);
    nodetool__printf(o, "\t\tCompacted partition mean bytes: %llu\n", (unsigned long long)st.mean_partition_bytes);
    /* LiveScannedHistogram and TombstoneScannedHistogram: decayed mean and
     * max of what each SELECT scanned ("last five minutes" in name) */
    cql_hist_snap sn;
    cql_histogram_snapshot(&tm->live, &sn);
    nodetool__java_double(cql_hist_mean(&sn), d, sizeof d);
    nodetool__printf(o, "\t\tAverage live cells per slice (last five minutes): %s\n", d);
    nodetool__printf(o, "\t\tMaximum live cells per slice (last five minutes): %lld\n", (long long)cql_hist_max(&sn));
    cql_histogram_snapshot(&tm->tombstones, &sn);
    nodetool__java_double(cql_hist_mean(&sn), d, sizeof d);
    nodetool__printf(o, "\t\tAverage tombstones per slice (last five minutes): %s\n", d);
    nodetool__printf(o, "\t\tMaximum tombstones per slice (last five minutes): %lld\n", (long long)cql_hist_max(&sn));
    nodetool__printf(o, "\t\tDropped Mutations: 0\n");
    /* getDroppableTombstoneRatio: droppable tombstones / cells, over the live sstables */
    nodetool__printf(o, "\t\tDroppable tombstone ratio: %.5f\n\n",
               st.cells_estimate ? st.droppable_estimate / (double)st.cells_estimate : 0.0);
}

/* tablestats [ks[.table] ...] */
static int do_tablestats(srv *s, char **args, int n, cs_buf *o)
{
    sch_catalog *c = cql_ctx_catalog(s->cql);
    int total = 0;
    cs_buf body;
    cs_buf_init(&body);
    for (int i = 0; i < sch_keyspace_count(c); i++) {
        sch_keyspace *k = sch_keyspace_at(c, i);
        if (k->is_virtual)
            continue;
        bool ks_header = false;
        for (int j = 0; j < k->n_tables; j++) {
            sch_table *t = k->tables[j];
            bool want = n == 0 ? !k->is_system : false;
            for (int a = 0; a < n; a++) {
                const char *dot = strchr(args[a], '.');
                size_t kl = dot ? (size_t)(dot - args[a]) : strlen(args[a]);
                if (strlen(k->name) == kl && !strncmp(k->name, args[a], kl) && (!dot || !strcmp(dot + 1, t->name)))
                    want = true;
            }
            if (!want || t->is_virtual)
                continue;
            if (!ks_header) {
                uint64_t rd_n = 0, rd_us = 0, wr_n = 0, wr_us = 0;
                for (int x = 0; x < k->n_tables; x++) {
                    const cql_table_metrics *tm = cql_metrics_get(s->cql, k->tables[x]->id);
                    if (!tm) continue;
                    rd_n += tm->reads.h.count;
                    rd_us += tm->reads.total_us;
                    wr_n += tm->writes.h.count;
                    wr_us += tm->writes.total_us;
                }
                uint64_t pending = 0;
                for (int x = 0; x < k->n_tables; x++) {
                    st_table_stats ts;
                    if (k->tables[x]->st && !st_table_stats_get(k->tables[x]->st, &ts))
                        pending += ts.pending_flushes;
                }
                char rl[64], wl[64];
                nodetool__java_double(total_mean_ms(rd_us, rd_n), rl, sizeof rl);
                nodetool__java_double(total_mean_ms(wr_us, wr_n), wl, sizeof wl);
                nodetool__printf(&body, "Keyspace : %s\n\tRead Count: %llu\n\tRead Latency: %s ms\n\tWrite Count: %llu\n"
                                  "\tWrite Latency: %s ms\n\tPending Flushes: %llu\n", k->name,
                           (unsigned long long)rd_n, rl, (unsigned long long)wr_n, wl,
                           (unsigned long long)pending);
                ks_header = true;
            }
            table_stats_block(&body, s, t);
            total++;
        }
        if (ks_header)
            nodetool__printf(&body, "----------------\n");
    }
    /* TableStatsHolder's checks (badUse): every keyspace named exists, then
     * every table named in it */
    for (int a = 0; a < n; a++) {
        const char *dot = strchr(args[a], '.');
        char ksn[256];
        snprintf(ksn, sizeof ksn, "%.*s", (int)(dot ? (size_t)(dot - args[a]) : strlen(args[a])), args[a]);
        char m[700];
        if (!sch_keyspace_find(c, ksn))
            snprintf(m, sizeof m, "Unknown keyspace: %.300s", ksn);
        else if (dot && !sch_table_find(c, ksn, dot + 1))
            snprintf(m, sizeof m, "Unknown tables: [%.300s] in keyspace: %.300s", dot + 1, ksn);
        else
            continue;
        cs_buf_destroy(&body);
        return nodetool__bad_use(o, m);
    }
    nodetool__printf(o, "Total number of tables: %d\n----------------\n", total);
    cs_buf_put(o, body.p, body.len);
    cs_buf_destroy(&body);
    return 200;
}

/* Java's String.format("%<width>.<decimals>f") of a double: NaN as "NaN"; past 2^53
 * Java writes Double.toString's shortest digits padded with zeros
 * ((double)Long.MAX_VALUE is 9223372036854776000, not ...5808). */
void nodetool__java_f(cs_buf *o, int width, double v, int decimals)
{
    if (v != v) {
        nodetool__printf(o, "%*s", width, "NaN");
        return;
    }
    if (fabs(v) < 9007199254740992.0 || isinf(v)) {
        nodetool__printf(o, "%*.*f", width, decimals, v);
        return;
    }
    char digits[32], txt[400];
    int nd, exp10;
    ctype_java_digits(v, digits, &nd, &exp10);   /* v = 0.d1d2... x 10^exp10 */
    size_t n = 0;
    if (v < 0)
        txt[n++] = '-';
    for (int i = 0; i < exp10 && n < sizeof txt - 40; i++)
        txt[n++] = i < nd ? digits[i] : '0';
    if (decimals > 0) {
        txt[n++] = '.';
        for (int i = 0; i < decimals; i++)
            txt[n++] = '0';
    }
    txt[n] = 0;
    nodetool__printf(o, "%*s", width, txt);
}

/* One table in TableHistograms' layout: the partition size and cell count
 * percentiles of its sstables (EstimatedHistogram over their summed
 * buckets; NaN and a note without sstables), the read and write latency
 * Timers and SSTablesPerReadHistogram (decayed snapshots; Min is one past
 * the bucket below the first used, Max the last used bucket's offset). */
static void histograms_block(srv *s, sch_table *t, cs_buf *o)
{
    static const double qs[] = { 0.5, 0.75, 0.95, 0.98, 0.99 };
    double size[7], cells[7];
    st_table_stats st;
    memset(&st, 0, sizeof st);
    st_table_stats_get(t->st, &st);
    if (!st.sstable_count) {
        nodetool__printf(o, "No SSTables exists, unable to calculate 'Partition Size' and 'Cell Count' percentiles\n");
        for (int i = 0; i < 7; i++)
            size[i] = cells[i] = 0.0 / 0.0;
    } else {
        st_histogram hb, hc;
        st_table_partition_histograms(t->st, &hb, &hc);
        /* counts[n] is EstimatedHistogram's overflow bucket: percentiles
         * NaN then, with TableHistograms' notes; Max is Long.MAX_VALUE */
        if (hb.counts[hb.n])
            nodetool__printf(o, "Row sizes are larger than %llu, unable to calculate percentiles\n",
                       (unsigned long long)hb.offsets[hb.n - 1]);
        if (hc.counts[hc.n])
            nodetool__printf(o, "Column counts are larger than %llu, unable to calculate percentiles\n",
                       (unsigned long long)hc.offsets[hc.n - 1]);
        for (int i = 0; i < 5; i++) {
            size[i] = hb.counts[hb.n] ? 0.0 / 0.0 : cql_ehist_percentile(hb.offsets, hb.counts, hb.n, qs[i]);
            cells[i] = hc.counts[hc.n] ? 0.0 / 0.0 : cql_ehist_percentile(hc.offsets, hc.counts, hc.n, qs[i]);
        }
        size[5] = (double)cql_ehist_min(hb.offsets, hb.counts, hb.n);
        cells[5] = (double)cql_ehist_min(hc.offsets, hc.counts, hc.n);
        size[6] = (double)cql_ehist_max(hb.offsets, hb.counts, hb.n);
        cells[6] = (double)cql_ehist_max(hc.offsets, hc.counts, hc.n);
    }
    cql_table_metrics *tm = cql_metrics_get(s->cql, t->id), empty;
    if (!tm) {
        cql_table_metrics_init(&empty, t->id, cs_mono_ns());
        tm = &empty;
    }
    cql_hist_snap rd, wr, ss;
    cql_timer_snapshot(&tm->reads, &rd);
    cql_timer_snapshot(&tm->writes, &wr);
    cql_histogram_snapshot(&tm->sstables_per_read, &ss);
    nodetool__printf(o, "%s/%s histograms\n", t->ks->name, t->name);
    nodetool__printf(o, "%-10s%18s%18s%18s%18s%18s\n", "Percentile", "Read Latency", "Write Latency", "SSTables",
               "Partition Size", "Cell Count");
    nodetool__printf(o, "%-10s%18s%18s%18s%18s%18s\n", "", "(micros)", "(micros)", "", "(bytes)", "");
    static const char *const names[] = { "50%", "75%", "95%", "98%", "99%", "Min", "Max" };
    for (int i = 0; i < 7; i++) {
        const cql_hist_snap *h[] = { &rd, &wr, &ss };
        nodetool__printf(o, "%-10s", names[i]);
        for (int k = 0; k < 3; k++)
            nodetool__java_f(o, 18, i < 5 ? cql_hist_value(h[k], qs[i]) : i == 5 ? (double)cql_hist_min(h[k])
                                                                       : (double)cql_hist_max(h[k]), 2);
        nodetool__java_f(o, 18, size[i], 0);
        nodetool__java_f(o, 18, cells[i], 0);
        nodetool__printf(o, "\n");
    }
    nodetool__printf(o, "\n");
}

/* tablehistograms [ks table | ks.table]: one table, or every table. */
static int do_tablehistograms(srv *s, char **args, int n, cs_buf *o)
{
    sch_catalog *c = cql_ctx_catalog(s->cql);
    char ks[256], tb[256];
    if (n == 0) {
        /* every table (Cassandra's come out of a hash multimap; here in
         * keyspace and table order) */
        for (int i = 0; i < sch_keyspace_count(c); i++) {
            sch_keyspace *k = sch_keyspace_at(c, i);
            for (int j = 0; !k->is_virtual && j < k->n_tables; j++)
                if (k->tables[j]->st)
                    histograms_block(s, k->tables[j], o);
        }
        return 200;
    }
    if (n == 1 && strchr(args[0], '.') && !strchr(strchr(args[0], '.') + 1, '.')) {
        snprintf(ks, sizeof(ks), "%.*s", (int)(strchr(args[0], '.') - args[0]), args[0]);
        snprintf(tb, sizeof(tb), "%s", strchr(args[0], '.') + 1);
    } else if (n == 2) {
        snprintf(ks, sizeof(ks), "%s", args[0]);
        snprintf(tb, sizeof(tb), "%s", args[1]);
    } else {
        return nodetool__bad_use(o, "tablehistograms requires keyspace and table name arguments");
    }
    sch_table *t = sch_table_find(c, ks, tb);
    if (!t || !t->st) {
        char msg[600];
        snprintf(msg, sizeof msg, "Unknown table %s.%s", ks, tb);
        return nodetool__bad_use(o, msg);
    }
    histograms_block(s, t, o);
    return 200;
}

/* nodetool's TableBuilder: rows x cols cells of cell_size bytes each (a
 * flat array, row-major), every column as wide as its widest cell, one
 * space apart, left-aligned. */
void nodetool__table_print(cs_buf *o, const char *cells, size_t cell_size, int rows, int cols)
{
    int w[16] = { 0 };
    for (int i = 0; i < rows; i++)
        for (int c = 0; c < cols && c < 16; c++) {
            int l = (int)strlen(cells + ((size_t)i * (size_t)cols + (size_t)c) * cell_size);
            if (l > w[c]) w[c] = l;
        }
    for (int i = 0; i < rows; i++)
        for (int c = 0; c < cols && c < 16; c++)
            nodetool__printf(o, "%-*s%s", w[c], cells + ((size_t)i * (size_t)cols + (size_t)c) * cell_size,
                       c < cols - 1 ? " " : "\n");
}

/* compactionstats as Cassandra 4.1's: the estimated remaining tasks
 * (each table's compaction strategy estimate) in total and per table that
 * has any, a blank line, then the running compactions as nodetool's
 * TableBuilder aligns them (columns as wide as their widest cell, one space
 * apart) and the remaining time: the bytes left over compaction_throughput
 * (n/a when unthrottled). */
static int do_compactionstats(srv *s, cs_buf *o)
{
    sch_catalog *c = cql_ctx_catalog(s->cql);
    uint64_t total = 0;
    cs_buf per;
    cs_buf_init(&per);
    for (int i = 0; i < sch_keyspace_count(c); i++) {
        sch_keyspace *k = sch_keyspace_at(c, i);
        for (int j = 0; j < k->n_tables; j++) {
            st_table_stats st;
            if (!k->tables[j]->st || st_table_stats_get(k->tables[j]->st, &st) || !st.pending_compactions)
                continue;
            total += st.pending_compactions;
            nodetool__printf(&per, "- %s.%s: %llu\n", k->name, k->tables[j]->name,
                       (unsigned long long)st.pending_compactions);
        }
    }
    nodetool__printf(o, "pending tasks: %llu\n", (unsigned long long)total);
    cs_buf_put(o, per.p, per.len);
    cs_buf_destroy(&per);
    nodetool__printf(o, "\n");
    st_compaction_info info[64];
    int n = st_compactions_list(s->eng, info, 64);
    if (n <= 0)
        return 200;
    enum { NCOL = 8 };
    char cells[65][NCOL][48];
    static const char *head[NCOL] = { "id", "compaction type", "keyspace", "table", "completed", "total", "unit",
                                      "progress" };
    for (int col = 0; col < NCOL; col++)
        snprintf(cells[0][col], sizeof cells[0][col], "%s", head[col]);
    uint64_t remaining = 0;
    for (int i = 0; i < n; i++) {
        cs_uuid u;
        memcpy(u.b, info[i].table_id, 16);
        remaining += info[i].total_bytes > info[i].done_bytes ? info[i].total_bytes - info[i].done_bytes : 0;
        char (*r)[48] = cells[i + 1];
        cs_uuid_format(&u, r[0]);
        snprintf(r[1], sizeof r[1], "%s", info[i].kind);
        snprintf(r[2], sizeof r[2], "%s", info[i].ks);
        snprintf(r[3], sizeof r[3], "%s", info[i].table);
        snprintf(r[4], sizeof r[4], "%llu", (unsigned long long)info[i].done_bytes);
        snprintf(r[5], sizeof r[5], "%llu", (unsigned long long)info[i].total_bytes);
        snprintf(r[6], sizeof r[6], "bytes");
        if (info[i].total_bytes)
            snprintf(r[7], sizeof r[7], "%.2f%%", 100.0 * (double)info[i].done_bytes / (double)info[i].total_bytes);
        else
            snprintf(r[7], sizeof r[7], "n/a");
    }
    nodetool__table_print(o, &cells[0][0][0], sizeof cells[0][0], n + 1, NCOL);
    char left[48] = "n/a";
    uint64_t rate = st_engine_compaction_throughput(s->eng);
    if (rate) {
        uint64_t secs = remaining / rate;
        snprintf(left, sizeof left, "%lluh%02llum%02llus", (unsigned long long)(secs / 3600),
                 (unsigned long long)(secs % 3600 / 60), (unsigned long long)(secs % 60));
    }
    nodetool__printf(o, "%25s%10s\n", "Active compaction remaining time : ", left);
    return 200;
}

/* gossipinfo (FailureDetector.getAllEndpointStates): this node's endpoint
 * state as Gossiper would hold it on a one-node ring.  generation is the
 * start time in seconds and heartbeat ticks once a second, as Gossiper's;
 * the application states come in ApplicationState order, each
 * "NAME:version:value" with versions in the order a starting 4.1 node
 * publishes them (close to a real node's, not exact); no INTERNAL_* state
 * (SimpleSnitch publishes none); TOKENS hidden as nodetool prints it. */
static int do_gossipinfo(srv *s, cs_buf *o)
{
    cql_gossip g;
    cql_gossip_get(s->cql, &g);
    nodetool__printf(o, "/%s\n  generation:%d\n  heartbeat:%d\n", g.address, g.generation, g.heartbeat);
    for (int i = 0; i < CQL_GOSSIP_STATES; i++)   /* FailureDetector.appendEndpointState */
        if (g.version[i] && i != CQL_GOSSIP_TOKENS)
            nodetool__printf(o, "  %s:%d:%s\n", cql_gossip_state_name(i), g.version[i], g.value[i]);
    nodetool__printf(o, "  TOKENS:%d:<hidden>\n\n", g.version[CQL_GOSSIP_TOKENS]);
    return 200;
}

/* describering ks (DescribeRing, StorageService.describeRingJMX): the schema
 * version, then one TokenRange line per range of the ring, (previous token,
 * token], the first one wrapping around from the last token, each with this
 * node as its only endpoint.  Ascending by end token (Cassandra's come out
 * of a hash map, in no set order). */
static int do_describering(srv *s, char **args, int n, cs_buf *o)
{
    if (n != 1) {
        nodetool__printf(o, "nodetool: %s\n", n ? "Too many arguments: describering takes one keyspace"
                                           : "Required arguments are missing: The keyspace name");
        return 400;
    }
    sch_keyspace *k = sch_keyspace_find(cql_ctx_catalog(s->cql), args[0]);
    if (!k || k->is_virtual) {
        nodetool__printf(o, "error: No such keyspace: %s\n", args[0]);
        return 500;
    }
    int rf;
    if (!strcmp(repl_class(k, &rf), "LocalStrategy")) {
        nodetool__printf(o, "error: There is no ring for the keyspace: %s\n", args[0]);
        return 500;
    }
    cql_node_info ni;
    cql_node_info_get(s->cql, &ni);
    const char *host = nodetool__listen_addr(s);
    const char *rpc = native_addr(s);
    nodetool__printf(o, "Schema Version:%s\nTokenRange: \n", ni.schema_version);
    for (int i = 0; i < ni.n_tokens; i++) {
        long long start = (long long)ni.tokens[i ? i - 1 : ni.n_tokens - 1], end = (long long)ni.tokens[i];
        nodetool__printf(o, "\tTokenRange(start_token:%lld, end_token:%lld, endpoints:[%s], rpc_endpoints:[%s], "
                      "endpoint_details:[EndpointDetails(host:%s, datacenter:datacenter1, rack:rack1)])\n",
                   start, end, host, rpc, host);
    }
    return 200;
}

/* getendpoints ks table key: the replicas of the key's token; on one node,
 * the node itself once the table is known and the key parses. */
static int do_getendpoints(srv *s, char **args, int n, cs_buf *o)
{
    /* GetEndpoints' checkArgument is a badUse (exit 1); what the server
     * throws (StorageService.getNaturalReplicasForToken: the table, the
     * key's MarshalException) comes back as nodetool's "error: " (exit 2) */
    if (n != 3)
        return nodetool__bad_use(o, "getendpoints requires keyspace, table and partition key arguments");
    sch_table *t = sch_table_find(cql_ctx_catalog(s->cql), args[0], args[1]);
    if (!t) {
        nodetool__printf(o, "error: Unknown table '%s' in keyspace '%s'\n", args[1], args[0]);
        return 500;
    }
    if (t->n_pk == 1) {
        /* validate the key against the partition key type, as nodetool does */
        cs_buf v;
        cs_buf_init(&v);
        cs_error e;
        cs_error_init(&e);
        const ctype *ty = t->pk[0]->type;
        int k = ty->kind;
        lit_kind lk = (k == CT_INT || k == CT_BIGINT || k == CT_SMALLINT || k == CT_TINYINT || k == CT_VARINT ||
                       k == CT_COUNTER) ? LIT_INTEGER
                    : (k == CT_UUID || k == CT_TIMEUUID) ? LIT_UUID
                    : (k == CT_DOUBLE || k == CT_FLOAT || k == CT_DECIMAL) ? LIT_FLOAT
                    : k == CT_BOOLEAN ? LIT_BOOLEAN : k == CT_BLOB ? LIT_HEX : LIT_STRING;
        int rc = ctype_from_literal(ty, lk, args[2], strlen(args[2]), t->pk[0]->name, &v, &e);
        cs_buf_destroy(&v);
        if (rc) {
            nodetool__printf(o, "error: %s\n", cs_error_isset(&e) ? e.msg : "invalid key");
            return 500;
        }
    }
    nodetool__printf(o, "%s\n", nodetool__listen_addr(s));
    return 200;
}

static void sampler_block(cs_buf *o, const char *name, const sch_table *t, const cql_top_entry *e, int n, int top)
{
    nodetool__printf(o, "%s Sampler:\n  Cardinality: ~%d (256 capacity)\n  Top %d partitions:\n", name, n, top);
    if (!n) {
        nodetool__printf(o, "\tNothing recorded during sampling period...\n");
        return;
    }
    cs_buf keys;
    cs_buf_init(&keys);
    size_t width = 9;
    size_t *ends = cs_calloc((size_t)n + 1, sizeof(size_t));
    for (int i = 0; i < n && i < top; i++) {
        size_t start = keys.len;
        sch_partition_key_text(t, e[i].pk, e[i].pk_len, &keys);
        ends[i] = keys.len;
        if (keys.len - start > width) width = keys.len - start;
    }
    nodetool__printf(o, "\t%-*s %10s %10s\n", (int)width, "Partition", "Count", "+/-");
    size_t start = 0;
    for (int i = 0; i < n && i < top; i++) {
        nodetool__printf(o, "\t%-*.*s %10llu %10d\n", (int)width, (int)(ends[i] - start), (const char *)keys.p + start,
                   (unsigned long long)e[i].count, 0);
        start = ends[i];
    }
    cs_free(ends);
    cs_buf_destroy(&keys);
}

void nodetool_toppartitions_report(srv *s, const sch_table *t, int top, cs_buf *o)
{
    cql_top_entry *rd, *wr;
    int nr, nw;
    cql_toppartitions_stop(s->cql, &rd, &nr, &wr, &nw);
    sampler_block(o, "WRITES", t, wr, nw, top);
    nodetool__printf(o, "\n");
    sampler_block(o, "READS", t, rd, nr, top);
    cql_toppartitions_free(rd, nr);
    cql_toppartitions_free(wr, nw);
}

/* tpstats as Cassandra 4.1's TpStatsPrinter: the pools (cql_thread_pools)
 * aligned by TableBuilder, then the dropped-messages table, here its
 * header only: a single node exchanges no internode messages, so it has
 * no message type to list. */
static int do_tpstats(srv *s, cs_buf *o)
{
    cql_pool p[8];
    int n = cql_thread_pools(s->cql, false, p, 8);
    char cells[9][6][40];
    static const char *head[6] = { "Pool Name", "Active", "Pending", "Completed", "Blocked", "All time blocked" };
    for (int c = 0; c < 6; c++)
        snprintf(cells[0][c], sizeof cells[0][c], "%s", head[c]);
    for (int i = 0; i < n; i++) {
        snprintf(cells[i + 1][0], 40, "%s", p[i].name);
        snprintf(cells[i + 1][1], 40, "%d", p[i].active);
        snprintf(cells[i + 1][2], 40, "%d", p[i].pending);
        snprintf(cells[i + 1][3], 40, "%llu", (unsigned long long)p[i].completed);
        snprintf(cells[i + 1][4], 40, "%llu", (unsigned long long)p[i].blocked);
        snprintf(cells[i + 1][5], 40, "%llu", (unsigned long long)p[i].blocked_all_time);
    }
    nodetool__table_print(o, &cells[0][0][0], sizeof cells[0][0], n + 1, 6);
    nodetool__printf(o, "\nLatencies waiting in queue (micros) per dropped message types\n");
    char dcells[1][6][40];
    static const char *dhead[6] = { "Message type", "Dropped    ", "50%     ", "95%     ", "99%     ", "Max" };
    for (int c = 0; c < 6; c++)
        snprintf(dcells[0][c], 40, "%s", dhead[c]);
    nodetool__table_print(o, &dcells[0][0][0], sizeof dcells[0][0], 1, 6);
    return 200;
}

/* nodetool's badUse (an IllegalArgumentException): exit 1. */
int nodetool__bad_use(cs_buf *o, const char *msg)
{
    nodetool__printf(o, "nodetool: %s\nSee 'nodetool help' or 'nodetool help <command>'.\n", msg);
    return 400;
}

/* ---------------------------------------------------------------- keyspace verbs
 *
 * repair, cleanup, disableautocompaction and enableautocompaction take
 * nodetool's [options] [keyspace [tables...]]: options (a leading '-') are
 * accepted and, for a single node, change nothing; without a keyspace they
 * apply to every keyspace that is not LocalStrategy (system, system_schema)
 * nor virtual, as parseOptionalKeyspace(NON_LOCAL_STRATEGY). */

/* Options of these verbs that take a value (skipped with it). */
static bool option_has_value(const char *a)
{
    static const char *const v[] = { "-dc", "--in-dc", "-st", "--start-token", "-et", "--end-token", "-hosts",
                                     "--in-hosts", "-j", "--job-threads", "--jobs", "-pl" };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (!strcmp(a, v[i]))
            return true;
    return false;
}

typedef struct ks_args {
    const char *ks;                      /* NULL: all non-local keyspaces */
    const char *tables[NODETOOL_MAX_ARGS]; int n_tables;
    bool ignore_unreplicated;            /* repair -iuk */
} ks_args;

/* Parse [options] [keyspace [tables...]]; checks the names.  Returns 200 or
 * an HTTP error with nodetool's message in o. */
static int parse_ks_args(srv *s, char **args, int n, ks_args *ka, cs_buf *o)
{
    memset(ka, 0, sizeof *ka);
    for (int i = 0; i < n; i++) {
        if (args[i][0] == '-') {
            if (!strcmp(args[i], "-iuk") || !strcmp(args[i], "--ignore-unreplicated-keyspaces"))
                ka->ignore_unreplicated = true;
            if (option_has_value(args[i]))
                i++;
            continue;
        }
        if (!ka->ks) ka->ks = args[i];
        else if (ka->n_tables < NODETOOL_MAX_ARGS) ka->tables[ka->n_tables++] = args[i];
    }
    sch_catalog *c = cql_ctx_catalog(s->cql);
    /* parseOptionalKeyspace's badUse (exit 1); an unknown table is the
     * server's IllegalArgumentException from getColumnFamilyStore (exit 2) */
    if (ka->ks && !sch_keyspace_find(c, ka->ks)) {
        char m[400];
        snprintf(m, sizeof m, "Keyspace [%.300s] does not exist.", ka->ks);
        return nodetool__bad_use(o, m);
    }
    for (int i = 0; i < ka->n_tables; i++)
        if (!sch_table_find(c, ka->ks, ka->tables[i])) {
            nodetool__printf(o, "error: Unknown keyspace/cf pair (%s.%s)\n", ka->ks, ka->tables[i]);
            return 500;
        }
    return 200;
}

/* Replication class (last component) and every replica it asks for. */
static const char *repl_class(const sch_keyspace *k, int *replicas)
{
    const char *cls = "";
    int rf = 0;
    for (int i = 0; i < k->n_repl; i++) {
        if (!strcmp(k->repl_k[i], "class")) {
            const char *dot = strrchr(k->repl_v[i], '.');
            cls = dot ? dot + 1 : k->repl_v[i];
        } else {
            rf += atoi(k->repl_v[i]);    /* replication_factor, or one per data center */
        }
    }
    *replicas = rf;
    return cls;
}

static bool in_scope(const sch_keyspace *k, const ks_args *ka)
{
    if (k->is_virtual)
        return false;
    if (ka->ks)
        return !strcmp(k->name, ka->ks);
    int rf;
    return strcmp(repl_class(k, &rf), "LocalStrategy") != 0;
}

/* "[2026-11-21 12:00:00,123] " as RepairRunner prints its messages. */
static void repair_stamp(cs_buf *o)
{
    int64_t ms = cs_now_ms();
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;
    localtime_r(&secs, &tm);
    nodetool__printf(o, "[%04d-%02d-%02d %02d:%02d:%02d,%03d] ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
               tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ms % 1000));
}

/* repair: a keyspace with one replica needs none (StorageService.repair
 * returns 0 and nodetool prints that); with more replicas than this single
 * node, every range has no neighbour and Cassandra's repair aborts with
 * "Nothing to repair for <range> in <ks>", or skips the keyspace with
 * --ignore-unreplicated-keyspaces.  system_distributed is repaired only
 * when named. */
static int do_repair(srv *s, char **args, int n, cs_buf *o)
{
    ks_args ka;
    int code = parse_ks_args(s, args, n, &ka, o);
    if (code != 200)
        return code;
    sch_catalog *c = cql_ctx_catalog(s->cql);
    cql_node_info ni;
    cql_node_info_get(s->cql, &ni);
    static int cmd;
    for (int i = 0; i < sch_keyspace_count(c); i++) {
        sch_keyspace *k = sch_keyspace_at(c, i);
        if (!in_scope(k, &ka) || (!ka.ks && !strcmp(k->name, "system_distributed")))
            continue;
        int rf;
        repl_class(k, &rf);
        if (rf < 2) {
            repair_stamp(o);
            nodetool__printf(o, "Replication factor is 1. No repair is needed for keyspace '%s'\n", k->name);
            continue;
        }
        /* the first range of this node's ring: (last token, first token] */
        long long lo = ni.n_tokens ? (long long)ni.tokens[ni.n_tokens - 1] : 0;
        long long hi = ni.n_tokens ? (long long)ni.tokens[0] : 0;
        if (ka.ignore_unreplicated) {
            repair_stamp(o);
            nodetool__printf(o, "Nothing to repair for (%lld,%lld] in %s - unreplicated keyspace is ignored since repair "
                          "was called with --ignore-unreplicated-keyspaces\n", lo, hi, k->name);
            continue;
        }
        ++cmd;
        repair_stamp(o);
        nodetool__printf(o, "Repair command #%d failed with error Nothing to repair for (%lld,%lld] in %s - aborting\n",
                   cmd, lo, hi, k->name);
        repair_stamp(o);
        nodetool__printf(o, "Repair command #%d finished with error\n", cmd);
        nodetool__printf(o, "error: Repair job has failed with the error message: Repair command #%d failed with error "
                      "Nothing to repair for (%lld,%lld] in %s - aborting. Check the logs on the repair "
                      "participants for further details\n", cmd, lo, hi, k->name);
        return 500;
    }
    return 200;
}

/* cleanup: drops data this node no longer owns; a single node owns every
 * token, so there is nothing to drop (Cassandra prints nothing either). */
static int do_cleanup(srv *s, char **args, int n, cs_buf *o)
{
    ks_args ka;
    return parse_ks_args(s, args, n, &ka, o);
}

static int do_autocompaction(srv *s, char **args, int n, bool on, cs_buf *o)
{
    ks_args ka;
    int code = parse_ks_args(s, args, n, &ka, o);
    if (code != 200)
        return code;
    sch_catalog *c = cql_ctx_catalog(s->cql);
    for (int i = 0; i < sch_keyspace_count(c); i++) {
        sch_keyspace *k = sch_keyspace_at(c, i);
        if (!in_scope(k, &ka))
            continue;
        for (int j = 0; j < k->n_tables; j++) {
            sch_table *t = k->tables[j];
            bool want = ka.n_tables == 0;
            for (int x = 0; x < ka.n_tables; x++)
                want = want || !strcmp(ka.tables[x], t->name);
            if (want && t->st)
                st_table_set_autocompaction(t->st, on);
        }
    }
    return 200;
}

/* getcompactionthroughput [-d | --precise-mib] (GetCompactionThroughput):
 * the cap in MiB/s; a cap that is not a whole number of MiB/s needs -d. */
static int do_getcompactionthroughput(srv *s, char **args, int n, cs_buf *o)
{
    bool precise = n > 0 && (!strcmp(args[0], "-d") || !strcmp(args[0], "--precise-mib"));
    uint64_t r = st_engine_compaction_throughput(s->eng);
    if (precise) {
        char d[64];
        nodetool__java_double((double)r / 1048576.0, d, sizeof d);
        nodetool__printf(o, "Current compaction throughput: %s MiB/s\n", d);
        return 200;
    }
    if (r % 1048576) {
        nodetool__printf(o, "error: Use the -d flag to quiet this error and get the exact throughput in MiB/s\n");
        return 500;
    }
    nodetool__printf(o, "Current compaction throughput: %llu MB/s\n", (unsigned long long)(r >> 20));
    return 200;
}

/* setcompactionthroughput N: N MiB/s, 0 unthrottled (SetCompactionThroughput,
 * DatabaseDescriptor.setCompactionThroughputMebibytesPerSec). */
static int do_setcompactionthroughput(srv *s, char **args, int n, cs_buf *o)
{
    if (n < 1) {
        nodetool__printf(o, "nodetool: Required parameters are missing: compaction_throughput\n"
                      "See 'nodetool help' or 'nodetool help <command>'.\n");
        return 400;
    }
    char *end;
    errno = 0;
    long v = strtol(args[0], &end, 10);
    if (errno || end == args[0] || *end || v < INT32_MIN || v > INT32_MAX) {
        nodetool__printf(o, "nodetool: compaction_throughput: can not convert \"%s\" to a Integer\n"
                      "See 'nodetool help' or 'nodetool help <command>'.\n", args[0]);
        return 400;
    }
    if (v == INT32_MAX) {
        nodetool__printf(o, "error: compaction_throughput: %ld is too large; it should be less than %d in MiB/s\n", v, INT32_MAX);
        return 500;
    }
    if (v < 0) {
        nodetool__printf(o, "error: Invalid data rate: value must be non-negative\n");
        return 500;
    }
    st_engine_set_compaction_throughput(s->eng, (uint64_t)v << 20);
    return 200;
}

int nodetool_run(srv *s, const char *verb, char **args, int n, cs_buf *o, nodetool_job **job)
{
    *job = NULL;
    int code = nodetool__run_sstables(s, verb, args, n, o, job);
    if (!code)
        code = nodetool__run_node(s, verb, args, n, o);
    if (code)
        return code;
    if (!strcmp(verb, "status")) return do_status(s, o);
    if (!strcmp(verb, "info")) return do_info(s, o);
    if (!strcmp(verb, "describecluster")) return do_describecluster(s, o);
    if (!strcmp(verb, "tablestats") || !strcmp(verb, "cfstats")) return do_tablestats(s, args, n, o);
    if (!strcmp(verb, "tablehistograms") || !strcmp(verb, "cfhistograms")) return do_tablehistograms(s, args, n, o);
    if (!strcmp(verb, "compactionstats")) return do_compactionstats(s, o);
    if (!strcmp(verb, "getendpoints")) return do_getendpoints(s, args, n, o);
    if (!strcmp(verb, "describering")) return do_describering(s, args, n, o);
    if (!strcmp(verb, "gossipinfo")) return do_gossipinfo(s, o);
    if (!strcmp(verb, "version")) { nodetool__printf(o, "ReleaseVersion: 4.1.8\n"); return 200; }
    if (!strcmp(verb, "truncatehints")) return 200;   /* a single node keeps no hints */
    if (!strcmp(verb, "statusbinary")) {
        nodetool__printf(o, "%s\n", srv_native_running(s) ? "running" : "not running");
        return 200;
    }
    if (!strcmp(verb, "disablebinary")) {
        srv_native_stop(s, false);
        return 200;
    }
    if (!strcmp(verb, "enablebinary")) {
        int rc = srv_native_start(s);
        if (rc == 0)
            return 200;
        if (s->drained)   /* StorageService.checkServiceAllowedToStart */
            nodetool__printf(o, "error: Unable to start native transport because the node was drained.\n");
        else if (rc == CS_EAGAIN)
            nodetool__printf(o, "error: the native transport is still closing; try again\n");
        else
            nodetool__printf(o, "error: Error starting native transport: %s\n", uv_strerror(rc));
        return 500;
    }
    if (!strcmp(verb, "repair")) return do_repair(s, args, n, o);
    if (!strcmp(verb, "tpstats")) return do_tpstats(s, o);
    if (!strcmp(verb, "ring")) return do_ring(s, o);
    if (!strcmp(verb, "snapshot") || !strcmp(verb, "listsnapshots") || !strcmp(verb, "clearsnapshot"))
        return nodetool__run_snapshot(s, verb, args, n, o);
    if (!strcmp(verb, "cleanup")) return do_cleanup(s, args, n, o);
    if (!strcmp(verb, "disableautocompaction")) return do_autocompaction(s, args, n, false, o);
    if (!strcmp(verb, "enableautocompaction")) return do_autocompaction(s, args, n, true, o);
    if (!strcmp(verb, "getcompactionthroughput")) return do_getcompactionthroughput(s, args, n, o);
    if (!strcmp(verb, "setcompactionthroughput")) return do_setcompactionthroughput(s, args, n, o);
    nodetool__printf(o, "nodetool: unknown command '%s'\n", verb);
    return 404;
}
