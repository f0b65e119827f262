/*
 * nodetool_node.c: nodetool's node-wide setting and status verbs (see
 * nodetool_int.h): gettimeout / settimeout, gettraceprobability /
 * settraceprobability, proxyhistograms, netstats, gcstats, statusgossip,
 * statushandoff, getlogginglevels.  Arguments, messages and layouts are
 * nodetool 4.1's (tools/nodetool/<Verb>.java, NodeProbe); each figure is
 * cassette's own, and where a single node has none of the thing counted
 * (streams, internode messages, read repairs, garbage collections) the
 * count printed is the 0 that is true of it.
 */
#include "server/nodetool_int.h"
#include "server/config.h"
#include "common/alloc.h"
#include "common/log.h"
#include "common/util.h"
#include "cql/metrics.h"
#include "cql/trace.h"
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- timeouts */

/* GetTimeout.TIMEOUT_TYPES, and the types in CQL_TIMEOUT_* order. */
#define TIMEOUT_TYPES "read, range, write, counterwrite, cascontention, truncate, internodeconnect, internodeuser, " \
                      "internodestreaminguser, misc (general rpc_timeout_in_ms)"

static int timeout_type(const char *t)
{
    static const char *const names[CQL_TIMEOUTS] = { "read", "range", "write", "counterwrite", "cascontention",
                                                     "truncate", "misc", "internodeconnect", "internodeuser",
                                                     "internodestreaminguser" };
    for (int i = 0; i < CQL_TIMEOUTS; i++)
        if (!strcmp(t, names[i]))
            return i;
    return -1;
}

/* gettimeout TYPE (GetTimeout, NodeProbe.getTimeout). */
static int do_gettimeout(srv *s, char **args, int n, cs_buf *o)
{
    if (n != 1)
        return nodetool__bad_use(o, "gettimeout requires a timeout type, one of (" TIMEOUT_TYPES ")");
    int w = timeout_type(args[0]);
    if (w < 0)   /* NodeProbe's RuntimeException, made a badUse by GetTimeout */
        return nodetool__bad_use(o, "Timeout type requires one of (" TIMEOUT_TYPES ")");
    nodetool__printf(o, "Current timeout for type %s: %lld ms\n", args[0], (long long)cql_timeout_ms(s->cql, w));
    return 200;
}

/* settimeout TYPE MS (SetTimeout, NodeProbe.setTimeout): every failure
 * is a badUse there (it rethrows them as IllegalArgumentException). */
static int do_settimeout(srv *s, char **args, int n, cs_buf *o)
{
    if (n == 0)
        return nodetool__bad_use(o, "Required parameters are missing: args");
    if (n != 2)
        return nodetool__bad_use(o, "Timeout type followed by value in ms (0 disables socket streaming timeout). Type "
                                    "should be one of (" TIMEOUT_TYPES ")");
    char *end;
    errno = 0;
    long long v = strtoll(args[1], &end, 10);   /* Long.parseLong */
    if (!*args[1] || *end || errno || args[1][0] == ' ') {
        char m[300];
        snprintf(m, sizeof m, "For input string: \"%.200s\"", args[1]);
        return nodetool__bad_use(o, m);
    }
    if (v < 0)
        return nodetool__bad_use(o, "timeout must be non-negative");
    int w = timeout_type(args[0]);
    if (w < 0)
        return nodetool__bad_use(o, "Timeout type requires one of (" TIMEOUT_TYPES ")");
    if (w >= CQL_TIMEOUT_INTERNODE_CONNECT)   /* setInternode*(int): the value is cast */
        v = (int32_t)v;
    cql_timeout_set(s->cql, w, v);
    return 200;
}

/* ---------------------------------------------------------------- tracing */

/* settraceprobability P (SetTraceProbability): 0 to 1, a Double as
 * airline converts it (Double.valueOf: decimal or exponent, NaN, Infinity). */
static int do_settraceprobability(srv *s, char **args, int n, cs_buf *o)
{
    if (n == 0)
        return nodetool__bad_use(o, "Required parameters are missing: trace_probability");
    if (n > 1) {
        char m[600];
        snprintf(m, sizeof m, "Found unexpected parameters: [%.500s]", args[1]);
        return nodetool__bad_use(o, m);
    }
    char *end;
    errno = 0;
    double p = strtod(args[0], &end);
    bool hex = strchr(args[0], 'x') || strchr(args[0], 'X');
    if (!*args[0] || *end || hex || (errno && p != 0)) {
        char m[300];
        snprintf(m, sizeof m, "trace_probability: can not convert \"%.200s\" to a Double", args[0]);
        return nodetool__bad_use(o, m);
    }
    if (!(p >= 0 && p <= 1))
        return nodetool__bad_use(o, "Trace probability must be between 0 and 1");
    cql_trace_set_probability(s->cql, p);
    return 200;
}

/* ---------------------------------------------------------------- proxyhistograms */

/* proxyhistograms (ProxyHistograms): the coordinator's ClientRequest
 * latency Timers (cql_node_metrics), percentiles, Min and Max as
 * tablehistograms reads a Timer; CAS and view writes have none here. */
static int do_proxyhistograms(srv *s, cs_buf *o)
{
    cql_node_metrics *nm = cql_node_metrics_get(s->cql);
    cql_hist_snap sn[6];
    cql_hist empty;
    cql_hist_init(&empty, CQL_HIST_TIMER, cs_mono_ns());
    for (int i = 0; i < 6; i++) {
        cql_timer *t = !nm ? NULL : i == 0 ? &nm->proxy_read : i == 1 ? &nm->proxy_write
                     : i == 2 ? &nm->proxy_range : NULL;
        if (t)
            cql_timer_snapshot(t, &sn[i]);
        else
            cql_histogram_snapshot(&empty, &sn[i]);
    }
    nodetool__printf(o, "proxy histograms\n");
    nodetool__printf(o, "%-10s%19s%19s%19s%19s%19s%19s\n", "Percentile", "Read Latency", "Write Latency",
                     "Range Latency", "CAS Read Latency", "CAS Write Latency", "View Write Latency");
    nodetool__printf(o, "%-10s%19s%19s%19s%19s%19s%19s\n", "", "(micros)", "(micros)", "(micros)", "(micros)",
                     "(micros)", "(micros)");
    static const char *const names[] = { "50%", "75%", "95%", "98%", "99%", "Min", "Max" };
    static const double qs[] = { 0.5, 0.75, 0.95, 0.98, 0.99 };
    for (int r = 0; r < 7; r++) {
        nodetool__printf(o, "%-10s", names[r]);
        for (int i = 0; i < 6; i++) {
            double v = r < 5 ? cql_hist_value(&sn[i], qs[r])
                     : r == 5 ? (double)cql_hist_min(&sn[i]) : (double)cql_hist_max(&sn[i]);
            nodetool__java_f(o, 19, v, 2);
        }
        nodetool__printf(o, "\n");
    }
    nodetool__printf(o, "\n");
    return 200;
}

/* ---------------------------------------------------------------- netstats, gcstats */

/* netstats [-H] (NetStats): the operation mode (StorageService's:
 * NORMAL, DRAINED after drain), no streams, no read repair (one replica
 * has nothing to compare), no internode messages. */
static int do_netstats(srv *s, cs_buf *o)
{
    nodetool__printf(o, "Mode: %s\n", s->drained ? "DRAINED" : "NORMAL");
    nodetool__printf(o, "Not sending any streams.\n");
    nodetool__printf(o, "Read Repair Statistics:\nAttempted: 0\nMismatch (Blocking): 0\nMismatch (Background): 0\n");
    nodetool__printf(o, "%-25s%10s%10s%15s%10s\n", "Pool Name", "Active", "Pending", "Completed", "Dropped");
    static const char *const pools[] = { "Large messages", "Small messages", "Gossip messages" };
    for (int i = 0; i < 3; i++)
        nodetool__printf(o, "%-25s%10s%10d%15d%10d\n", pools[i], "n/a", 0, 0, 0);
    return 200;
}

/* gcstats (GcStats, GCInspector.getAndResetStats): the milliseconds since
 * the last gcstats (or the start), and no collection: cassette frees
 * memory as it goes, it has no garbage collector.  The stdev of no
 * collections is 0/0 (NaN), as Java prints it; "Direct Memory Bytes" is
 * what the counting allocator holds (all of cassette's memory is native). */
static int64_t gc_last_ms;   /* loop thread */

static int do_gcstats(srv *s, cs_buf *o)
{
    int64_t now = cs_now_ms();
    cql_node_info ni;
    cql_node_info_get(s->cql, &ni);
    double interval = (double)(now - (gc_last_ms ? gc_last_ms : ni.started_ms));
    gc_last_ms = now;
    nodetool__printf(o, "%20s%20s%20s%20s%20s%20s%25s\n", "Interval (ms)", "Max GC Elapsed (ms)",
                     "Total GC Elapsed (ms)", "Stdev GC Elapsed (ms)", "GC Reclaimed (MB)", "Collections",
                     "Direct Memory Bytes");
    nodetool__printf(o, "%20.0f%20.0f%20.0f%20s%20.0f%20.0f%25lld\n", interval, 0.0, 0.0, "NaN", 0.0, 0.0,
                     (long long)cs_alloc_used());
    return 200;
}

/* ---------------------------------------------------------------- status */

/* getlogginglevels (GetLoggingLevels): cassette has one logger, the root
 * (CASSETTE_LOG), at logback's level names. */
static int do_getlogginglevels(cs_buf *o)
{
    static const char *const names[] = { "DEBUG", "INFO", "WARN", "ERROR" };
    int l = cs_log_level();
    nodetool__printf(o, "\n%-50s%10s\n", "Logger Name", "Log Level");
    nodetool__printf(o, "%-50s%10s\n", "ROOT", names[l < 0 ? 0 : l > 3 ? 3 : l]);
    return 200;
}

/* ---------------------------------------------------------------- dispatch */

int nodetool__run_node(srv *s, const char *verb, char **args, int n, cs_buf *o)
{
    if (!strcmp(verb, "gettimeout")) return do_gettimeout(s, args, n, o);
    if (!strcmp(verb, "settimeout")) return do_settimeout(s, args, n, o);
    if (!strcmp(verb, "gettraceprobability")) {
        char d[64];
        nodetool__java_double(cql_trace_probability(s->cql), d, sizeof d);
        nodetool__printf(o, "Current trace probability: %s\n", d);
        return 200;
    }
    if (!strcmp(verb, "settraceprobability")) return do_settraceprobability(s, args, n, o);
    if (!strcmp(verb, "proxyhistograms")) return do_proxyhistograms(s, o);
    if (!strcmp(verb, "netstats")) return do_netstats(s, o);
    if (!strcmp(verb, "gcstats")) return do_gcstats(s, o);
    if (!strcmp(verb, "statusgossip")) {   /* drain stops gossip (as info's "Gossip active") */
        nodetool__printf(o, "%s\n", s->drained ? "not running" : "running");
        return 200;
    }
    if (!strcmp(verb, "statushandoff")) {
        bool on = !s->cfg || s->cfg->hinted_handoff_enabled;
        nodetool__printf(o, "Hinted handoff is %s\n", on ? "running" : "not running");
        return 200;
    }
    if (!strcmp(verb, "getlogginglevels")) return do_getlogginglevels(o);
    return 0;
}
