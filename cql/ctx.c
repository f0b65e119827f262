/*
 * ctx.c: the CQL layer's context (cql_ctx) and the catalog's startup.
 * Owner: catalog.  Called by the server once at boot (cql_ctx_new) and at
 * shutdown (cql_ctx_free), on the request loop thread.
 *
 * Startup sequence (sch_catalog_open), kept cheap so the first query is
 * answered within milliseconds of exec:
 *   1. define the system keyspaces; open the storage of the stored ones and
 *      of the hidden local-state table         (sch__define_system)
 *   2. replay the commit log into those tables  (st_engine_replay, phase 0)
 *   3. host id and tokens: load, or generate and persist on first start;
 *      (re)write the system keyspaces' rows in system_schema when missing
 *   4. load the user schema from system_schema  (sch__load_user_schema),
 *      which opens the user tables' storage
 *   5. replay the commit log into user tables   (phase 1), then
 *      st_engine_replay_done
 */
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#include "cql/metrics.h"
#include "cql/trace.h"
#include "cql/schema_int.h"
#include "cql/index.h"   /* index hook (issue 5) */
#include "cql/roles.h"
#include "common/alloc.h"
#include "common/log.h"
#include "common/util.h"

/* Optional executor hook (exec.c) releasing its caches; weak so the catalog
 * links without it. */
extern void cql_exec_ctx_destroy(cql_ctx *ctx) __attribute__((weak));

void cql_config_defaults(cql_config *c)
{
    memset(c, 0, sizeof *c);
    c->cluster_name = "Test Cluster";
    c->listen_address = "127.0.0.1";
    c->native_port = 9042;
    c->num_tokens = 16;
    c->tombstone_warn_threshold = 1000;
    c->tombstone_failure_threshold = 100000;
    c->batch_size_warn_kb = 5;
    c->batch_size_fail_kb = 50;
    c->unlogged_batch_across_partitions_warn_threshold = 10;
    c->materialized_views_enabled = true;
    c->user_defined_functions_enabled = false;
    static const int64_t timeouts[CQL_TIMEOUTS] = { 5000, 10000, 2000, 5000, 1000, 60000, 10000, 2000, 30000, 300000 };
    memcpy(c->timeout_ms, timeouts, sizeof timeouts);
    c->config_text = NULL;
    int *th[] = { c->guard.keyspaces, c->guard.tables, c->guard.columns_per_table, c->guard.secondary_indexes_per_table,
                  c->guard.materialized_views_per_table, c->guard.page_size, c->guard.partition_keys_in_select,
                  c->guard.fields_per_udt, c->guard.items_per_collection, c->guard.minimum_replication_factor,
                  c->guard.in_select_cartesian_product };
    for (size_t i = 0; i < sizeof th / sizeof th[0]; i++)
        th[i][0] = th[i][1] = -1;
    c->guard.allow_filtering = c->guard.user_timestamps = c->guard.group_by = c->guard.drop_truncate_table = true;
    c->guard.secondary_indexes = c->guard.compact_tables = c->guard.read_before_write_list_operations = true;
    c->guard.uncompressed_tables = true;
    c->guard.collection_size[0] = c->guard.collection_size[1] = -1;
}

const char *cql_timeout_name(int which)
{
    static const char *const names[CQL_TIMEOUTS] = {
        "read_request_timeout", "range_request_timeout", "write_request_timeout", "counter_write_request_timeout",
        "cas_contention_timeout", "truncate_request_timeout", "request_timeout", "internode_tcp_connect_timeout",
        "internode_tcp_user_timeout", "internode_streaming_tcp_user_timeout",
    };
    return which >= 0 && which < CQL_TIMEOUTS ? names[which] : NULL;
}

int64_t cql_timeout_ms(cql_ctx *ctx, int which)
{
    return which >= 0 && which < CQL_TIMEOUTS ? ctx->cfg.timeout_ms[which] : 0;
}

void cql_timeout_set(cql_ctx *ctx, int which, int64_t ms)
{
    if (which >= 0 && which < CQL_TIMEOUTS)
        ctx->cfg.timeout_ms[which] = ms;
}

static bool want_user_table(const uint8_t id[16], void *arg)
{
    sch_table *t = sch_table_by_id((sch_catalog *)arg, id);
    if (!t) return cql_index_owns_id((sch_catalog *)arg, id);   /* index hook (issue 5) */
    return !t->ks->is_system;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Host id and tokens: load them, or create them on first start. */
static int local_identity(sch_catalog *c, cql_ctx *ctx, bool *first_start, int *gen)
{
    cs_uuid host;
    int64_t *tokens = NULL;
    int n = 0;
    int rc = sch__local_state_load(c, &host, &tokens, &n, gen);
    if (rc) return rc;
    static const uint8_t zero[16];
    *first_start = memcmp(host.b, zero, 16) == 0 || n == 0;
    if (*first_start) {
        cs_free(tokens);
        cs_uuid_random(&host);
        n = ctx->cfg.num_tokens > 0 ? ctx->cfg.num_tokens : 1;
        tokens = cs_malloc(sizeof(int64_t) * (size_t)n);
        if (!tokens) return CS_ENOMEM;
        for (int i = 0; i < n; i++) {
            do cs_random_bytes(&tokens[i], sizeof tokens[i]);
            while (tokens[i] == INT64_MIN);
        }
        qsort(tokens, (size_t)n, sizeof *tokens, cmp_i64);
    }
    ctx->host_id = host;
    ctx->tokens = tokens;
    ctx->n_tokens = n;
    return 0;
}

int sch_catalog_open(cql_ctx *ctx, sch_catalog **out)
{
    *out = NULL;
    sch_catalog *c = cs_calloc(1, sizeof *c);
    if (!c) return CS_ENOMEM;
    c->ctx = ctx;
    c->eng = ctx->eng;
    ctx->cat = c;
    int rc = sch__define_system(c);
    if (rc) goto fail;
    uint8_t lid[16];
    sch__system_table_id("system", "cassette_local_state", lid);
    st_table_opts o;
    st_table_opts_defaults(&o);
    rc = st_table_open(c->eng, lid, "system", "cassette_local_state", &o, &c->local_state);
    if (rc) goto fail;
    rc = st_engine_replay(c->eng, NULL, NULL);
    if (rc) goto fail;
    bool first = false;
    int gen = -1;
    rc = local_identity(c, ctx, &first, &gen);
    if (rc) goto fail;
    if (first || gen != SCH_SYSTEM_SCHEMA_GEN) {
        rc = sch__write_system_rows(c);
        if (rc == 0)
            rc = sch__local_state_save(c, &ctx->host_id, ctx->tokens, ctx->n_tokens, SCH_SYSTEM_SCHEMA_GEN);
        if (rc) goto fail;
    }
    rc = sch__load_user_schema(c);
    if (rc) goto fail;
    c->replay_phase = 1;
    rc = st_engine_replay(c->eng, want_user_table, c);
    if (rc == 0) rc = st_engine_replay_done(c->eng);
    if (rc) goto fail;
    sch__vtables_attach(c);
    sch__new_version(c);
    *out = c;
    return 0;
fail:
    CS_ERROR("catalog startup failed: %s", cs_strerror(rc));
    sch_catalog_free(c);
    ctx->cat = NULL;
    return rc;
}

void sch_catalog_free(sch_catalog *c)
{
    if (!c) return;
    for (int i = 0; i < c->n_ks; i++) sch__keyspace_free(c->ks[i]);
    cs_free(c->ks);
    cs_free(c->sessions);
    cs_free(c);
}

int cql_ctx_new(st_engine *eng, const cql_config *cfg, cql_ctx **out)
{
    *out = NULL;
    cql_ctx *ctx = cs_calloc(1, sizeof *ctx);
    if (!ctx) return CS_ENOMEM;
    ctx->eng = eng;
    if (cfg) ctx->cfg = *cfg; else cql_config_defaults(&ctx->cfg);
    /* own copies of the borrowed strings */
    ctx->cfg.cluster_name = cs_strdup(ctx->cfg.cluster_name ? ctx->cfg.cluster_name : "Test Cluster");
    ctx->cfg.listen_address = cs_strdup(ctx->cfg.listen_address ? ctx->cfg.listen_address : "127.0.0.1");
    ctx->cfg.config_text = ctx->cfg.config_text ? cs_strdup(ctx->cfg.config_text) : NULL;
    ctx->started_ms = cs_now_ms();
    int rc = sch_catalog_open(ctx, &ctx->cat);
    if (rc) {
        cql_ctx_free(ctx);
        return rc;
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/roles.cassette", st_engine_data_dir(eng) ? st_engine_data_dir(eng) : ".");
    cs_error e;
    cs_error_init(&e);
    if (cql_roles_open(path, &ctx->roles, &e)) {
        CS_ERROR("%s", e.msg);
        cql_ctx_free(ctx);
        return CS_ECORRUPT;
    }
    *out = ctx;
    return 0;
}

void cql_ctx_free(cql_ctx *ctx)
{
    if (!ctx) return;
    if (cql_exec_ctx_destroy) cql_exec_ctx_destroy(ctx);
    cql_metrics_free(ctx);
    cql_trace_free(ctx);
    cql_index_builds_free(ctx);   /* index hook (issue 5): builds in progress */
    sch_catalog_free(ctx->cat);
    cql_roles_free(ctx->roles);
    cs_free(ctx->tokens);
    cs_free((char *)ctx->cfg.cluster_name);
    cs_free((char *)ctx->cfg.listen_address);
    cs_free((char *)ctx->cfg.config_text);
    cs_free(ctx);
}

int cql_login(cql_ctx *ctx, const char *user, size_t ulen, const char *pass, size_t plen, cs_error *e)
{
    return cql_roles_login(ctx->roles, user, ulen, pass, plen, e);
}

struct sch_catalog *cql_ctx_catalog(cql_ctx *ctx) { return ctx ? ctx->cat : NULL; }
st_engine *cql_ctx_engine(cql_ctx *ctx) { return ctx ? ctx->eng : NULL; }

/* ---------------------------------------------------------------- client registry */

void cql_session_opened(cql_ctx *ctx, cql_session *s)
{
    sch_catalog *c = ctx ? ctx->cat : NULL;
    if (!c || !s) return;
    if (c->n_sessions == c->cap_sessions) {
        int nc = c->cap_sessions ? c->cap_sessions * 2 : 16;
        cql_session **ns = cs_realloc(c->sessions, sizeof(*ns) * (size_t)nc);
        if (!ns) return;
        c->sessions = ns;
        c->cap_sessions = nc;
    }
    c->sessions[c->n_sessions++] = s;
}

void cql_session_closed(cql_ctx *ctx, cql_session *s)
{
    sch_catalog *c = ctx ? ctx->cat : NULL;
    if (!c) return;
    for (int i = 0; i < c->n_sessions; i++) {
        if (c->sessions[i] == s) {
            c->sessions[i] = c->sessions[--c->n_sessions];
            return;
        }
    }
}
