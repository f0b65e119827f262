/*
 * vtables.c: rows of the virtual tables, computed on read:
 *   system.local (this node), system.peers / peers_v2 (empty: single node),
 *   the other tables of `system` (empty), system_views.settings (from the
 *   server's config text), system_views.system_properties (the environment
 *   variables that concern the node), clients, sstable_tasks, caches,
 *   thread_pools, system_virtual_schema.{keyspaces,tables,columns}
 *   (describing the virtual keyspaces), system_auth, and the attachment of
 *   every table's callback (the metric tables are in vtables_metrics.c,
 *   gossip_info, queries and the cache keys in vtables_node.c; a table
 *   without a callback reads empty).  Owner: catalog.
 * Each callback emits whole rows, one value per column in the table's
 * column order; the executor filters, orders and pages them.
 */
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <unistd.h>

#include "cql/vtables_int.h"
#include "cql/metrics.h"
#include "cql/roles.h"
#include "common/util.h"
#include "common/alloc.h"

/* ---------------------------------------------------------------- system */

static int rows_empty(cql_ctx *ctx, sch_table *t, emit_fn emit, void *arg) { return 0; }

static int rows_local(cql_ctx *ctx, sch_table *t, emit_fn emit, void *arg)
{
    vrow r;
    cs_buf_init(&r.store);
    vrow_begin(&r, t);
    vset_text(&r, "key", "local");
    vset_text(&r, "bootstrapped", "COMPLETED");
    vset_inet(&r, "broadcast_address", ctx->cfg.listen_address);
    vset_int(&r, "broadcast_port", 7000);
    vset_text(&r, "cluster_name", ctx->cfg.cluster_name ? ctx->cfg.cluster_name : "Test Cluster");
    vset_text(&r, "cql_version", "3.4.6");
    vset_text(&r, "data_center", "datacenter1");
    vset_int(&r, "gossip_generation", (int32_t)(ctx->started_ms / 1000));
    vset(&r, "host_id", ctx->host_id.b, 16);
    vset_inet(&r, "listen_address", ctx->cfg.listen_address);
    vset_int(&r, "listen_port", 7000);
    vset_text(&r, "native_protocol_version", "5"); /* ProtocolVersion.CURRENT in 4.x */
    vset_text(&r, "partitioner", "org.apache.cassandra.dht.Murmur3Partitioner");
    vset_text(&r, "rack", "rack1");
    vset_text(&r, "release_version", "4.1.8");
    vset_inet(&r, "rpc_address", ctx->cfg.listen_address);
    vset_int(&r, "rpc_port", ctx->native_port ? ctx->native_port : ctx->cfg.native_port ? ctx->cfg.native_port : 9042);
    uint8_t ver[16];
    sch_version(ctx->cat, ver);
    vset(&r, "schema_version", ver, 16);
    /* tokens: set<text>, decimal, sorted as text (a set's element order) */
    cs_buf tk;
    cs_buf_init(&tk);
    char (*txt)[24] = cs_calloc((size_t)ctx->n_tokens + 1, 24);
    if (txt) {
        for (int i = 0; i < ctx->n_tokens; i++) snprintf(txt[i], 24, "%lld", (long long)ctx->tokens[i]);
        /* insertion sort by bytes */
        for (int i = 1; i < ctx->n_tokens; i++) {
            char tmp[24];
            memcpy(tmp, txt[i], 24);
            int j = i;
            while (j > 0 && strcmp(txt[j - 1], tmp) > 0) { memcpy(txt[j], txt[j - 1], 24); j--; }
            memcpy(txt[j], tmp, 24);
        }
        cs_buf_put_u32(&tk, (uint32_t)ctx->n_tokens);
        for (int i = 0; i < ctx->n_tokens; i++) {
            cs_buf_put_u32(&tk, (uint32_t)strlen(txt[i]));
            cs_buf_put(&tk, txt[i], strlen(txt[i]));
        }
        cs_free(txt);
        if (!tk.err) vset(&r, "tokens", tk.p, tk.len);
    }
    cs_buf_destroy(&tk);
    int rc = vemit(&r, emit, arg);
    cs_buf_destroy(&r.store);
    return rc;
}

/* ---------------------------------------------------------------- system_views */

/* settings: one row per "name<TAB>value" (or "name: value", "name=value")
 * line of the server's config_text. */
static int rows_settings(cql_ctx *ctx, sch_table *t, emit_fn emit, void *arg)
{
    const char *p = ctx->cfg.config_text;
    vrow r;
    cs_buf_init(&r.store);
    int rc = 0;
    char name[256], val[1024];
    while (p && *p && rc == 0) {
        const char *eol = strchr(p, '\n');
        size_t n = eol ? (size_t)(eol - p) : strlen(p);
        const char *sep = memchr(p, '\t', n);      /* server/config.c: "name\tvalue\n" */
        if (!sep) sep = memchr(p, ':', n);
        if (!sep) sep = memchr(p, '=', n);
        if (sep && p[0] != '#') {
            size_t kl = (size_t)(sep - p), vl = n - kl - 1;
            while (kl > 0 && p[kl - 1] == ' ') kl--;
            const char *v = sep + 1;
            while (vl > 0 && *v == ' ') { v++; vl--; }
            if (kl > 0 && kl < sizeof name && vl < sizeof val) {
                memcpy(name, p, kl); name[kl] = 0;
                memcpy(val, v, vl); val[vl] = 0;
                if (!strcmp(name, "compaction_throughput") && ctx->eng)   /* nodetool may have set it since */
                    cs_format_rate(val, sizeof val, st_engine_compaction_throughput(ctx->eng));
                if (!strcmp(name, "concurrent_compactors") && ctx->eng)
                    snprintf(val, sizeof val, "%d", st_engine_concurrent_compactors(ctx->eng));
                for (int i = 0; i < CQL_TIMEOUTS; i++)
                    if (!strcmp(name, cql_timeout_name(i)))
                        snprintf(val, sizeof val, "%lldms", (long long)ctx->cfg.timeout_ms[i]);
                vrow_begin(&r, t);
                vset_text(&r, "name", name);
                vset_text(&r, "value", val);
                rc = vemit(&r, emit, arg);
            }
        }
        p = eol ? eol + 1 : NULL;
    }
    cs_buf_destroy(&r.store);
    return rc;
}

/* system_properties (Cassandra's SystemPropertiesTable): the process
 * environment variables that concern the node, as name and value, in name
 * order (the executor sorts by key, as LocalPartitioner does).  Cassandra
 * lists the environment variables and JVM system properties that start with
 * "cassandra." or are one of CassandraRelevantProperties /
 * CassandraRelevantEnv (JAVA_HOME).  cassette has no JVM, so no
 * properties: it lists the variables of Cassandra's rule that are set, and
 * its own, env_own below (the equivalent of CassandraRelevantProperties:
 * every getenv of a CASSETTE_ variable in the tree names one of them;
 * tests/integration/test_system_properties.py checks it). */
static const char *const env_own[] = {
    "CASSETTE_BLOCK_CACHE_MB",                       /* storage/block_cache.c: file_cache_size override */
    "CASSETTE_COMMITLOG_GATHER_MAX_US",              /* storage/commitlog.c: group sync gathering bound */
    "CASSETTE_INDEX_BUILD_STEP_ROWS",                /* cql/index_build.c: rows per index build slice */
    "CASSETTE_LOG",                                  /* common/log.c: log level */
    "CASSETTE_SNAPSHOT_MIN_ALLOWED_TTL_SECONDS",     /* server/nodetool.c: cassandra.snapshot.min_allowed_ttl_seconds */
    "CASSETTE_SNAPSHOT_TTL_CLEANUP_PERIOD_SECONDS",  /* server/main.c: cassandra.snapshot.ttl_cleanup_period_seconds */
    "CASSETTE_SSTABLE_MMAP",                         /* storage/sstable_reader.c: 0 reads Data.db with pread */
    "CASSETTE_TEST_ADMIN_HOLD",                      /* server/admin.c: test hook */
};

/* CassandraRelevantEnv, and the CassandraRelevantProperties names (4.1)
 * outside the "cassandra." prefix. */
static const char *const env_cassandra[] = {
    "JAVA_HOME", "java.home", "sun.rmi.transport.tcp.threadKeepAliveTime", "java.rmi.dgc.leaseValue",
    "org.apache.cassandra.disable_mbean_registration", "org.apache.cassandra.mbean_registration_class",
    "org.apache.cassandra.dtest.is_in_jvm_dtest", "check_data_resurrection_heartbeat_period_milli",
    "org.apache.cassandra.conf.CassandraRelevantPropertiesTest",
    "org.apache.cassandra.db.virtual.SystemPropertiesTableTest",
};

static bool env_relevant(const char *name, size_t n)
{
    if (n > 10 && !memcmp(name, "cassandra.", 10)) return true;   /* Config.PROPERTY_PREFIX */
    for (size_t i = 0; i < CS_ARRAY_LEN(env_own); i++)
        if (strlen(env_own[i]) == n && !memcmp(env_own[i], name, n)) return true;
    for (size_t i = 0; i < CS_ARRAY_LEN(env_cassandra); i++)
        if (strlen(env_cassandra[i]) == n && !memcmp(env_cassandra[i], name, n)) return true;
    return false;
}

static int rows_system_properties(cql_ctx *ctx, sch_table *t, emit_fn emit, void *arg)
{
    vrow r;
    cs_buf_init(&r.store);
    int rc = 0;
    for (char **e = environ; *e && rc == 0; e++) {
        const char *eq = strchr(*e, '=');
        if (!eq || eq == *e || !env_relevant(*e, (size_t)(eq - *e))) continue;
        size_t n = (size_t)(eq - *e);
        bool seen = false;   /* a name twice in environ: getenv's (the first) only */
        for (char **p = environ; p < e && !seen; p++)
            seen = !strncmp(*p, *e, n + 1);
        if (seen) continue;
        vrow_begin(&r, t);
        vset(&r, "name", *e, n);
        vset_text(&r, "value", eq + 1);
        rc = vemit(&r, emit, arg);
    }
    cs_buf_destroy(&r.store);
    return rc;
}

/* The host name of a loopback address (InetSocketAddress.getHostName:
 * "localhost" for 127.0.0.1), from the resolver, which answers those from
 * the hosts file; other addresses are looked up when they connect (the
 * server's conn.c, off the request loop) and come here as they are. */
static const char *loopback_name(const char *ip, char *out, size_t n)
{
    struct sockaddr_in a4;
    struct sockaddr_in6 a6;
    memset(&a4, 0, sizeof a4);
    memset(&a6, 0, sizeof a6);
    const struct sockaddr *sa = NULL;
    socklen_t len = 0;
    if (inet_pton(AF_INET, ip, &a4.sin_addr) == 1 && (ntohl(a4.sin_addr.s_addr) >> 24) == 127) {
        a4.sin_family = AF_INET;
        sa = (const struct sockaddr *)&a4;
        len = sizeof a4;
    } else if (inet_pton(AF_INET6, ip, &a6.sin6_addr) == 1 && IN6_IS_ADDR_LOOPBACK(&a6.sin6_addr)) {
        a6.sin6_family = AF_INET6;
        sa = (const struct sockaddr *)&a6;
        len = sizeof a6;
    }
    if (!sa || getnameinfo(sa, len, out, (socklen_t)n, NULL, 0, NI_NAMEREQD) != 0)
        return ip;
    return out;
}

/* clients: one row per registered connection (cql_session_opened). */
static int rows_clients(cql_ctx *ctx, sch_table *t, emit_fn emit, void *arg)
{
    sch_catalog *c = ctx->cat;
    vrow r;
    cs_buf_init(&r.store);
    int rc = 0;
    for (int i = 0; i < c->n_sessions && rc == 0; i++) {
        const cql_session *s = c->sessions[i];
        char ip[64];
        int port = 0;
        snprintf(ip, sizeof ip, "%s", s->client_addr);
        char *colon = strrchr(ip, ':');
        if (colon) { *colon = 0; port = atoi(colon + 1); }
        if (ip[0] == '[') { memmove(ip, ip + 1, strlen(ip)); char *b = strchr(ip, ']'); if (b) *b = 0; }
        vrow_begin(&r, t);
        vset_inet(&r, "address", ip);
        vset_int(&r, "port", port);
        vset_text(&r, "connection_stage", "ready");
        if (s->driver_name[0]) vset_text(&r, "driver_name", s->driver_name);
        if (s->driver_version[0]) vset_text(&r, "driver_version", s->driver_version);
        const cql_client_info *ci = s->client;
        if (ci && ci->options_len >= 0)
            vset(&r, "client_options", ci->options, (size_t)ci->options_len);
        bool named = ci && atomic_load_explicit(&ci->hostname_set, memory_order_acquire);
        char host[256];
        vset_text(&r, "hostname", named ? ci->hostname : loopback_name(ip, host, sizeof host));
        vset_int(&r, "protocol_version", s->protocol_version);
        if (ci)
            vset_bigint(&r, "request_count",
                        (int64_t)atomic_load_explicit(&ci->request_count, memory_order_relaxed));
        uint8_t f = 0;
        vset(&r, "ssl_enabled", &f, 1);
        /* ClientState's user: the role logged in, AllowAllAuthenticator's anonymous */
        vset_text(&r, "username", s->user[0] ? s->user : "anonymous");
        rc = vemit(&r, emit, arg);
    }
    cs_buf_destroy(&r.store);
    return rc;
}

/* sstable_tasks: running flushes/compactions (st_compactions_list). */
static int rows_sstable_tasks(cql_ctx *ctx, sch_table *t, emit_fn emit, void *arg)
{
    st_compaction_info info[32];
    int n = st_compactions_list(ctx->eng, info, (int)CS_ARRAY_LEN(info));
    vrow r;
    cs_buf_init(&r.store);
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        vrow_begin(&r, t);
        vset_text(&r, "keyspace_name", info[i].ks);
        vset_text(&r, "table_name", info[i].table);
        cs_uuid id;
        cs_uuid_timeuuid(&id, ctx->started_ms * 1000 + i);
        vset(&r, "task_id", id.b, 16);
        vset_double(&r, "completion_ratio",
                    info[i].total_bytes ? (double)info[i].done_bytes / (double)info[i].total_bytes : 0.0);
        vset_text(&r, "kind", strcmp(info[i].kind, "Flush") == 0 ? "flush" : "compaction");
        vset_bigint(&r, "progress", (int64_t)info[i].done_bytes);
        vset_bigint(&r, "total", (int64_t)info[i].total_bytes);
        vset_text(&r, "unit", "bytes");
        rc = vemit(&r, emit, arg);
    }
    cs_buf_destroy(&r.store);
    return rc;
}

/* system_views.caches: the block cache is Cassandra's chunk cache
 * ("chunks"; file_cache_size); cassette keeps no key, row or counter cache,
 * so they have no row.  The recent per-second rates (a one-minute meter in
 * Cassandra) are not tracked: null. */
static int rows_caches(cql_ctx *ctx, sch_table *t, emit_fn emit, void *arg)
{
    st_block_cache_stats cs;
    st_block_cache_stats_get(&cs);
    vrow r;
    cs_buf_init(&r.store);
    vrow_begin(&r, t);
    vset_text(&r, "name", "chunks");
    vset_bigint(&r, "capacity_bytes", (int64_t)cs.capacity_bytes);
    vset_int(&r, "entry_count", cs.entries > INT32_MAX ? INT32_MAX : (int32_t)cs.entries);
    vset_bigint(&r, "hit_count", (int64_t)cs.hits);
    vset_double(&r, "hit_ratio", cs.requests ? (double)cs.hits / (double)cs.requests : 0.0 / 0.0);
    vset_bigint(&r, "request_count", (int64_t)cs.requests);
    vset_bigint(&r, "size_bytes", (int64_t)cs.size_bytes);
    int rc = vemit(&r, emit, arg);
    cs_buf_destroy(&r.store);
    return rc;
}

/* system_views.thread_pools (cql_thread_pools): asked through CQL, the
 * request asking is the one active Native-Transport-Requests task. */
static int rows_thread_pools(cql_ctx *ctx, sch_table *t, emit_fn emit, void *arg)
{
    cql_pool p[8];
    int n = cql_thread_pools(ctx, true, p, 8);
    vrow r;
    cs_buf_init(&r.store);
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        vrow_begin(&r, t);
        vset_text(&r, "name", p[i].name);
        vset_int(&r, "active_tasks", p[i].active);
        vset_int(&r, "active_tasks_limit", p[i].active_limit);
        vset_bigint(&r, "blocked_tasks", (int64_t)p[i].blocked);
        vset_bigint(&r, "blocked_tasks_all_time", (int64_t)p[i].blocked_all_time);
        vset_bigint(&r, "completed_tasks", (int64_t)p[i].completed);
        vset_int(&r, "pending_tasks", p[i].pending);
        rc = vemit(&r, emit, arg);
    }
    cs_buf_destroy(&r.store);
    return rc;
}

/* ---------------------------------------------------------------- system_virtual_schema */

static int rows_vkeyspaces(cql_ctx *ctx, sch_table *t, emit_fn emit, void *arg)
{
    vrow r;
    cs_buf_init(&r.store);
    int rc = 0;
    for (int i = 0; i < sch_keyspace_count(ctx->cat) && rc == 0; i++) {
        sch_keyspace *k = sch_keyspace_at(ctx->cat, i);
        if (!k->is_virtual) continue;
        vrow_begin(&r, t);
        vset_text(&r, "keyspace_name", k->name);
        rc = vemit(&r, emit, arg);
    }
    cs_buf_destroy(&r.store);
    return rc;
}

static int rows_vtables(cql_ctx *ctx, sch_table *t, emit_fn emit, void *arg)
{
    vrow r;
    cs_buf_init(&r.store);
    int rc = 0;
    for (int i = 0; i < sch_keyspace_count(ctx->cat) && rc == 0; i++) {
        sch_keyspace *k = sch_keyspace_at(ctx->cat, i);
        if (!k->is_virtual) continue;
        for (int j = 0; j < k->n_tables && rc == 0; j++) {
            vrow_begin(&r, t);
            vset_text(&r, "keyspace_name", k->name);
            vset_text(&r, "table_name", k->tables[j]->name);
            vset_text(&r, "comment", k->tables[j]->comment ? k->tables[j]->comment : "");
            rc = vemit(&r, emit, arg);
        }
    }
    cs_buf_destroy(&r.store);
    return rc;
}

static int rows_vcolumns(cql_ctx *ctx, sch_table *t, emit_fn emit, void *arg)
{
    static const char *const kinds[] = { "partition_key", "clustering", "regular", "static" };
    vrow r;
    cs_buf_init(&r.store);
    cs_buf ty;
    cs_buf_init(&ty);
    int rc = 0;
    for (int i = 0; i < sch_keyspace_count(ctx->cat) && rc == 0; i++) {
        sch_keyspace *k = sch_keyspace_at(ctx->cat, i);
        if (!k->is_virtual) continue;
        for (int j = 0; j < k->n_tables && rc == 0; j++) {
            sch_table *vt = k->tables[j];
            /* rows sorted by column name within a table (clustering order) */
            int idx[VROW_MAX_COLS], n = 0;
            for (int c = 0; c < vt->n_cols && n < VROW_MAX_COLS; c++) {
                int p = n++;
                while (p > 0 && strcmp(vt->cols[idx[p - 1]].name, vt->cols[c].name) > 0) { idx[p] = idx[p - 1]; p--; }
                idx[p] = c;
            }
            for (int c = 0; c < n && rc == 0; c++) {
                sch_column *col = &vt->cols[idx[c]];
                vrow_begin(&r, t);
                vset_text(&r, "keyspace_name", k->name);
                vset_text(&r, "table_name", vt->name);
                vset_text(&r, "column_name", col->name);
                vset_text(&r, "clustering_order",
                          col->kind == COL_CLUSTERING ? (col->desc ? "desc" : "asc") : "none");
                vset(&r, "column_name_bytes", col->name, strlen(col->name));
                vset_text(&r, "kind", kinds[col->kind]);
                vset_int(&r, "position", col->position);
                cs_buf_reset(&ty);
                ctype_to_cql(col->type, &ty);
                vset(&r, "type", ty.p, ty.len);
                rc = vemit(&r, emit, arg);
            }
        }
    }
    cs_buf_destroy(&ty);
    cs_buf_destroy(&r.store);
    return rc;
}

/* system.size_estimates and system.table_estimates, as Cassandra's
 * SizeEstimatesRecorder records them (computed here when read, not every
 * 5 minutes): for every table and view of every keyspace whose replication
 * is not LocalStrategy, one row per range of the node's tokens, the
 * wrap-around range unwrapped into (last, min] and (min, first] (min =
 * -2^63, Range.unwrap); partitions counted in the sstables, mean partition
 * size of the sstables (st_table_size_estimate).  table_estimates has each
 * row twice, range_type 'primary' and 'local_primary' (one node: the same
 * ranges).  A table without storage reads as empty. */
static int rows_estimates(cql_ctx *ctx, sch_table *t, emit_fn emit, void *arg, bool by_type)
{
    int n = ctx->n_tokens;
    if (n <= 0)
        return 0;
    /* ranges: (tokens[i-1], tokens[i]] for i >= 1, then (last, min], (min, first] */
    int nr = n + 1;
    int64_t *lo = cs_malloc(sizeof(int64_t) * (size_t)nr), *hi = cs_malloc(sizeof(int64_t) * (size_t)nr);
    if (!lo || !hi) { cs_free(lo); cs_free(hi); return CS_ENOMEM; }
    for (int i = 1; i < n; i++) { lo[i - 1] = ctx->tokens[i - 1]; hi[i - 1] = ctx->tokens[i]; }
    lo[n - 1] = ctx->tokens[n - 1]; hi[n - 1] = INT64_MIN;
    lo[n] = INT64_MIN; hi[n] = ctx->tokens[0];
    static const char *const types[] = { "primary", "local_primary" };
    vrow r;
    cs_buf_init(&r.store);
    int rc = 0;
    sch_catalog *c = ctx->cat;
    for (int i = 0; i < sch_keyspace_count(c) && !rc; i++) {
        sch_keyspace *k = sch_keyspace_at(c, i);
        const char *cls = sch__kv_get(k->repl_k, k->repl_v, k->n_repl, "class");
        if (k->is_virtual || (cls && strstr(cls, "LocalStrategy")))
            continue;
        for (int j = 0; j < k->n_tables && !rc; j++) {
            sch_table *bt = k->tables[j];
            for (int g = 0; g < nr && !rc; g++) {
                uint64_t parts = 0, mean = 0;
                if (bt->st) st_table_size_estimate(bt->st, lo[g], hi[g], &parts, &mean);
                char a[24], b[24];
                snprintf(a, sizeof a, "%lld", (long long)lo[g]);
                snprintf(b, sizeof b, "%lld", (long long)hi[g]);
                for (int ty = 0; ty < (by_type ? 2 : 1) && !rc; ty++) {
                    vrow_begin(&r, t);
                    vset_text(&r, "keyspace_name", k->name);
                    vset_text(&r, "table_name", bt->name);
                    if (by_type) vset_text(&r, "range_type", types[ty]);
                    vset_text(&r, "range_start", a);
                    vset_text(&r, "range_end", b);
                    vset_bigint(&r, "mean_partition_size", (int64_t)mean);
                    vset_bigint(&r, "partitions_count", (int64_t)parts);
                    rc = vemit(&r, emit, arg);
                }
            }
        }
    }
    cs_buf_destroy(&r.store);
    cs_free(lo);
    cs_free(hi);
    return rc;
}

static int rows_size_estimates(cql_ctx *c, sch_table *t, emit_fn e, void *a) { return rows_estimates(c, t, e, a, false); }
static int rows_table_estimates(cql_ctx *c, sch_table *t, emit_fn e, void *a) { return rows_estimates(c, t, e, a, true); }

/* ---------------------------------------------------------------- system_auth */

/* roles: the role store's rows (the scan puts them in ring order). */
static int rows_roles(cql_ctx *ctx, sch_table *t, emit_fn emit, void *arg)
{
    char **names;
    int n;
    if (cql_roles_all(ctx->roles, &names, &n)) return CS_ENOMEM;
    vrow r;
    cs_buf_init(&r.store);
    cs_buf set;
    cs_buf_init(&set);
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        cql_role_info info = cql_roles_get(ctx->roles, names[i]);
        if (!info.exists) continue;
        vrow_begin(&r, t);
        vset_text(&r, "role", names[i]);
        uint8_t b = info.login;
        vset(&r, "can_login", &b, 1);
        b = info.super;
        vset(&r, "is_superuser", &b, 1);
        char **of;
        int n_of;
        if (cql_roles_member_of(ctx->roles, names[i], &of, &n_of) == 0) {
            if (n_of) {   /* an empty set reads as null */
                cs_buf_reset(&set);
                cs_buf_put_u32(&set, (uint32_t)n_of);
                for (int j = 0; j < n_of; j++) {
                    cs_buf_put_u32(&set, (uint32_t)strlen(of[j]));
                    cs_buf_put(&set, of[j], strlen(of[j]));
                }
                vset(&r, "member_of", set.p, set.len);
            }
            cql_roles_names_free(of, n_of);
        }
        char *hash = cql_roles_hash_of(ctx->roles, names[i]);
        if (hash) vset_text(&r, "salted_hash", hash);
        cs_free(hash);
        rc = vemit(&r, emit, arg);
    }
    cs_buf_destroy(&set);
    cs_buf_destroy(&r.store);
    cql_roles_names_free(names, n);
    return rc;
}

static int rows_role_members(cql_ctx *ctx, sch_table *t, emit_fn emit, void *arg)
{
    char **roles, **members;
    int n;
    if (cql_roles_members(ctx->roles, &roles, &members, &n)) return CS_ENOMEM;
    vrow r;
    cs_buf_init(&r.store);
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        vrow_begin(&r, t);
        vset_text(&r, "role", roles[i]);
        vset_text(&r, "member", members[i]);
        rc = vemit(&r, emit, arg);
    }
    cs_buf_destroy(&r.store);
    cql_roles_names_free(roles, n);
    cql_roles_names_free(members, n);
    return rc;
}

/* role_permissions (CassandraAuthorizer): a row per (role, resource) with
 * its permission names; resource_role_permissons_index (sic, Cassandra's
 * name): a row per (resource, role) that has any. */
static int rows_role_permissions(cql_ctx *ctx, sch_table *t, emit_fn emit, void *arg)
{
    cql_perm_row *rows;
    int n;
    if (cql_perms_list(ctx->roles, &rows, &n)) return CS_ENOMEM;
    bool index = !strcmp(t->name, "resource_role_permissons_index");
    vrow r;
    cs_buf_init(&r.store);
    cs_buf set;
    cs_buf_init(&set);
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        vrow_begin(&r, t);
        vset_text(&r, "role", rows[i].role);
        vset_text(&r, "resource", rows[i].resource);
        if (!index) {
            /* set<text>: the names in their sorted (text) order */
            const char *names[8];
            int k = 0;
            for (unsigned bit = 1; bit <= PERM_EXECUTE; bit <<= 1)
                if (rows[i].perms & bit) names[k++] = cql_perm_name(bit);
            for (int a = 1; a < k; a++)
                for (int b = a; b > 0 && strcmp(names[b - 1], names[b]) > 0; b--) {
                    const char *tmp = names[b];
                    names[b] = names[b - 1];
                    names[b - 1] = tmp;
                }
            cs_buf_reset(&set);
            cs_buf_put_u32(&set, (uint32_t)k);
            for (int j = 0; j < k; j++) {
                cs_buf_put_u32(&set, (uint32_t)strlen(names[j]));
                cs_buf_put(&set, names[j], strlen(names[j]));
            }
            vset(&r, "permissions", set.p, set.len);
        }
        rc = vemit(&r, emit, arg);
    }
    cs_buf_destroy(&set);
    cs_buf_destroy(&r.store);
    cql_perms_rows_free(rows, n);
    return rc;
}

/* trace.c */
int cql__trace_sessions_rows(cql_ctx *ctx, sch_table *t, emit_fn emit, void *arg);
int cql__trace_events_rows(cql_ctx *ctx, sch_table *t, emit_fn emit, void *arg);

/* index_build.c (index hook, issue 5): built indexes / views, view builds in progress */
int cql__index_info_rows(cql_ctx *ctx, sch_table *t, emit_fn emit, void *arg);
int cql__built_views_rows(cql_ctx *ctx, sch_table *t, emit_fn emit, void *arg);
int cql__view_builds_rows(cql_ctx *ctx, sch_table *t, emit_fn emit, void *arg);

/* Attach row callbacks to every virtual table (unknown ones read empty). */
void sch__vtables_attach(sch_catalog *c)
{
    static const struct { const char *ks, *name; sch_vtable_rows_cb cb; } map[] = {
        { "system", "local", rows_local },
        { "system", "IndexInfo", cql__index_info_rows },
        { "system", "built_views", cql__built_views_rows },
        { "system", "view_builds_in_progress", cql__view_builds_rows },
        { "system", "size_estimates", rows_size_estimates },
        { "system", "table_estimates", rows_table_estimates },
        { "system_views", "settings", rows_settings },
        { "system_auth", "roles", rows_roles },
        { "system_auth", "role_members", rows_role_members },
        { "system_auth", "role_permissions", rows_role_permissions },
        { "system_auth", "resource_role_permissons_index", rows_role_permissions },
        { "system_traces", "sessions", cql__trace_sessions_rows },
        { "system_traces", "events", cql__trace_events_rows },
        { "system_views", "coordinator_read_latency", cql__vt_local_read_latency },
        { "system_views", "coordinator_scan_latency", cql__vt_local_scan_latency },
        { "system_views", "coordinator_write_latency", cql__vt_local_write_latency },
        { "system_views", "local_read_latency", cql__vt_local_read_latency },
        { "system_views", "local_scan_latency", cql__vt_local_scan_latency },
        { "system_views", "local_write_latency", cql__vt_local_write_latency },
        { "system_views", "tombstones_per_read", cql__vt_tombstones_per_read },
        { "system_views", "rows_per_read", cql__vt_rows_per_read },
        { "system_views", "disk_usage", cql__vt_disk_usage },
        { "system_views", "max_partition_size", cql__vt_max_partition_size },
        { "system_views", "cql_metrics", cql__vt_cql_metrics },
        { "system_views", "batch_metrics", cql__vt_batch_metrics },
        { "system_views", "gossip_info", cql__vt_gossip_info },
        { "system_views", "queries", cql__vt_queries },
        { "system_views", "credentials_cache_keys", cql__vt_credentials_cache_keys },
        { "system_views", "clients", rows_clients },
        { "system_views", "sstable_tasks", rows_sstable_tasks },
        { "system_views", "thread_pools", rows_thread_pools },
        { "system_views", "caches", rows_caches },
        { "system_views", "system_properties", rows_system_properties },
        { "system_virtual_schema", "keyspaces", rows_vkeyspaces },
        { "system_virtual_schema", "tables", rows_vtables },
        { "system_virtual_schema", "columns", rows_vcolumns },
    };
    for (int i = 0; i < c->n_ks; i++) {
        sch_keyspace *k = c->ks[i];
        for (int j = 0; j < k->n_tables; j++) {
            sch_table *t = k->tables[j];
            if (!t->is_virtual) continue;
            t->vtable_rows = rows_empty;
            for (size_t m = 0; m < CS_ARRAY_LEN(map); m++)
                if (strcmp(map[m].ks, k->name) == 0 && strcmp(map[m].name, t->name) == 0)
                    t->vtable_rows = map[m].cb;
        }
    }
}
