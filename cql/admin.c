/*
 * admin.c: nodetool-style operations on tables (flush, compact), for the
 * admin endpoint (server/admin.c) and cassette-tool, and the node facts
 * they print (node info, the native transport's address, gossip state).
 * Owner: lead.
 * Semantics follow nodetool: no keyspace = every keyspace with storage; a
 * keyspace and no tables = every table of it; unknown names are errors
 * (checked before anything runs).  A table covers its index tables.
 *
 * Two steps so the work can leave the request loop: cql_admin_resolve
 * (loop thread: reads the catalog) pins the storage tables, cql_admin_run
 * (any thread) flushes or compacts them, cql_admin_release unpins.
 */
#include "cql/cql_int.h"
#include "cql/index.h"   /* index hook (issue 5) */
#include "cql/schema_int.h"
#include "cql/types.h"
#include "common/alloc.h"
#include <stdio.h>
#include <string.h>

/* The targets so far (each pinned); grows by doubling. */
typedef struct targets {
    cql_admin_target *v;
    int n, cap;
} targets;

static int add_target(targets *ts, st_table *st, const char *ks, const char *table, const char *index)
{
    if (ts->n == ts->cap) {
        int nc = ts->cap ? ts->cap * 2 : 8;
        cql_admin_target *nv = cs_realloc(ts->v, sizeof *nv * (size_t)nc);
        if (!nv)
            return CS_ENOMEM;
        ts->v = nv;
        ts->cap = nc;
    }
    cql_admin_target *x = &ts->v[ts->n++];
    x->st = st;
    snprintf(x->name, sizeof x->name, "%s.%s%s%s", ks, table, index ? "." : "", index ? index : "");
    st_table_pin(st);
    return 0;
}

/* A table and its index tables (nodetool flush/compact of a table covers
 * its indexes, as in Cassandra). */
static int add_table(cql_ctx *ctx, targets *ts, sch_table *t, cs_error *e)
{
    const char *ks = t->ks->name;
    if (!t->st)
        return 0;
    int rc = add_target(ts, t->st, ks, t->name, NULL);
    for (int i = 0; rc == 0 && i < t->n_indexes; i++) {   /* index hook (issue 5) */
        st_table *ist = cql_index_storage(ctx->eng, t->indexes[i]);
        rc = ist ? add_target(ts, ist, ks, t->name, t->indexes[i]->name) : CS_EIO;
    }
    if (rc)
        cs_error_set(e, CS_ERR_SERVER, "cannot open the storage of %s.%s: %s", ks, t->name, cs_strerror(rc));
    return rc;
}

int cql_admin_resolve(cql_ctx *ctx, const char *ks, const char **tables, int n_tables,
                      cql_admin_target **out, int *n_out, cs_error *e)
{
    *out = NULL;
    *n_out = 0;
    sch_catalog *c = ctx->cat;
    targets ts = { NULL, 0, 0 };
    int rc = 0;
    int first = 0, last = sch_keyspace_count(c);
    if (ks && *ks) {
        sch_keyspace *k = sch_keyspace_find(c, ks);
        if (!k)
            return cs_error_set(e, CS_ERR_INVALID, "nodetool: Keyspace [%s] does not exist.\n"
                                "See 'nodetool help' or 'nodetool help <command>'.", ks);
        for (int i = 0; i < last; i++)
            if (sch_keyspace_at(c, i) == k)
                first = i, last = i + 1;
        /* Every name is checked before anything runs, like nodetool. */
        for (int i = 0; i < n_tables && rc == 0; i++) {
            sch_table *t = sch_table_find(c, ks, tables[i]);
            rc = t ? add_table(ctx, &ts, t, e)
                   : cs_error_set(e, CS_ERR_SERVER, "error: Unknown keyspace/cf pair (%s.%s)", ks, tables[i]);
        }
        if (n_tables)
            last = first;
    }
    for (int i = first; i < last && rc == 0; i++) {
        sch_keyspace *k = sch_keyspace_at(c, i);
        if (k->is_virtual)
            continue;
        for (int j = 0; j < k->n_tables && rc == 0; j++)
            if (!k->tables[j]->is_virtual)
                rc = add_table(ctx, &ts, k->tables[j], e);
    }
    if (rc) {
        if (rc == CS_ENOMEM && !cs_error_isset(e))
            cs_error_set(e, CS_ERR_SERVER, "out of memory");
        cql_admin_release(ts.v, ts.n);
        return rc;
    }
    *out = ts.v;
    *n_out = ts.n;
    return 0;
}

int cql_admin_run(cql_admin_target *v, int n, bool compact, cs_error *e)
{
    for (int i = 0; i < n; i++) {
        int rc = compact ? st_table_compact(v[i].st) : st_table_flush(v[i].st);
        if (rc)
            return cs_error_set(e, CS_ERR_SERVER, "%s of %s failed: %s", compact ? "compaction" : "flush",
                                v[i].name, cs_strerror(rc));
    }
    return 0;
}

void cql_admin_release(cql_admin_target *v, int n)
{
    for (int i = 0; i < n; i++)
        st_table_unpin(v[i].st);
    cs_free(v);
}

static int admin_sync(cql_ctx *ctx, const char *ks, const char **tables, int n_tables, bool compact, cs_error *e)
{
    cql_admin_target *v;
    int n;
    int rc = cql_admin_resolve(ctx, ks, tables, n_tables, &v, &n, e);
    if (rc)
        return rc;
    rc = cql_admin_run(v, n, compact, e);
    cql_admin_release(v, n);
    return rc;
}

int cql_admin_flush(cql_ctx *ctx, const char *ks, const char **tables, int n_tables, cs_error *e)
{
    return admin_sync(ctx, ks, tables, n_tables, false, e);
}

int cql_admin_compact(cql_ctx *ctx, const char *ks, const char **tables, int n_tables, cs_error *e)
{
    return admin_sync(ctx, ks, tables, n_tables, true, e);
}

void cql_node_info_get(cql_ctx *ctx, cql_node_info *out)
{
    memset(out, 0, sizeof(*out));
    cs_uuid_format(&ctx->host_id, out->host_id);
    cs_uuid v;
    sch_version(ctx->cat, v.b);
    cs_uuid_format(&v, out->schema_version);
    out->cluster_name = ctx->cfg.cluster_name;
    out->tokens = ctx->tokens;
    out->n_tokens = ctx->n_tokens;
    out->started_ms = ctx->started_ms;
}

/* ---------------------------------------------------------------- native transport, gossip */

void cql_native_set(cql_ctx *ctx, const char *addr, int port, bool (*running)(void *arg), void *arg)
{
    snprintf(ctx->native_addr, sizeof ctx->native_addr, "%s", addr ? addr : "");
    ctx->native_port = port;
    ctx->native_running = running;
    ctx->native_arg = arg;
}

const char *cql_gossip_state_name(int ordinal)
{
    static const char *const names[CQL_GOSSIP_STATES] = {
        "STATUS", "LOAD", "SCHEMA", "DC", "RACK", "RELEASE_VERSION", "REMOVAL_COORDINATOR", "INTERNAL_IP",
        "RPC_ADDRESS", "X_11_PADDING", "SEVERITY", "NET_VERSION", "HOST_ID", "TOKENS", "RPC_READY",
        "INTERNAL_ADDRESS_AND_PORT", "NATIVE_ADDRESS_AND_PORT", "STATUS_WITH_PORT", "SSTABLE_VERSIONS",
        "DISK_USAGE", "X1", "X2", "X3", "X4", "X5", "X6", "X7", "X8", "X9", "X10",
    };
    return ordinal >= 0 && ordinal < CQL_GOSSIP_STATES ? names[ordinal] : "";
}

static void gossip_set(cql_gossip *g, int ordinal, int version, const char *value)
{
    g->version[ordinal] = version;
    snprintf(g->value[ordinal], sizeof g->value[ordinal], "%s", value);
}

void cql_gossip_get(cql_ctx *ctx, cql_gossip *g)
{
    memset(g, 0, sizeof *g);
    const char *listen = ctx->cfg.listen_address && *ctx->cfg.listen_address ? ctx->cfg.listen_address : "127.0.0.1";
    const char *rpc = ctx->native_addr[0] ? ctx->native_addr : listen;
    int port = ctx->native_port ? ctx->native_port : ctx->cfg.native_port ? ctx->cfg.native_port : 9042;
    snprintf(g->address, sizeof g->address, "%s", listen);
    g->port = 7000;
    g->generation = (int)(ctx->started_ms / 1000);
    long long up = (long long)((cs_now_ms() - ctx->started_ms) / 1000);
    /* one version generator for the states and the heartbeat: the states
     * take 1-19 at start, then the heartbeat one a second */
    g->heartbeat = (int)(20 + up);
    /* LOAD: StorageMetrics.load, the tables' bytes (as nodetool status) */
    uint64_t load = 0;
    for (int i = 0; i < sch_keyspace_count(ctx->cat); i++) {
        sch_keyspace *k = sch_keyspace_at(ctx->cat, i);
        for (int j = 0; !k->is_virtual && j < k->n_tables; j++) {
            st_table_stats st;
            if (k->tables[j]->st && !st_table_stats_get(k->tables[j]->st, &st))
                load += st.sstable_bytes + st.memtable_bytes;
        }
    }
    cs_buf b;
    cs_buf_init(&b);
    ctype_format_java_double((double)load, false, &b);
    cs_buf_put_u8(&b, 0);
    char status[64], v[96];
    snprintf(status, sizeof status, "NORMAL,%lld", ctx->n_tokens ? (long long)ctx->tokens[0] : 0LL);
    cql_node_info ni;
    cql_node_info_get(ctx, &ni);
    gossip_set(g, 0, 16, status);                                   /* STATUS */
    gossip_set(g, 1, (int)(20 + up / 60 * 60), b.err ? "0.0" : (const char *)b.p);   /* LOAD, every minute */
    gossip_set(g, 2, 12, ni.schema_version);                        /* SCHEMA */
    gossip_set(g, 3, 8, "datacenter1");                             /* DC */
    gossip_set(g, 4, 10, "rack1");                                  /* RACK */
    gossip_set(g, 5, 5, "4.1.8");                                   /* RELEASE_VERSION */
    gossip_set(g, 8, 4, rpc);                                       /* RPC_ADDRESS */
    gossip_set(g, 11, 1, "12");                                     /* NET_VERSION */
    gossip_set(g, 12, 2, ni.host_id);                               /* HOST_ID */
    gossip_set(g, CQL_GOSSIP_TOKENS, 14, "");                       /* TOKENS */
    gossip_set(g, 14, 19, !ctx->native_running || ctx->native_running(ctx->native_arg) ? "true" : "false");
    snprintf(v, sizeof v, "%s:%d", rpc, port);
    gossip_set(g, 16, 3, v);                                        /* NATIVE_ADDRESS_AND_PORT */
    gossip_set(g, 17, 15, status);                                  /* STATUS_WITH_PORT */
    gossip_set(g, 18, 6, "big-nb");                                 /* SSTABLE_VERSIONS */
    cs_buf_destroy(&b);
}
