/*
 * admin.c: nodetool-style operations on tables (flush, compact), for the
 * admin endpoint (server/admin.c) and cassette-tool.  Owner: lead.
 * Semantics follow nodetool: no keyspace = every keyspace with storage; a
 * keyspace and no tables = every table of it; unknown names are errors.
 */
#include "cql/cql_int.h"
#include "cql/index.h"   /* index hook (issue 5) */
#include <string.h>

typedef int (*table_op)(st_table *t);

static int for_tables(cql_ctx *ctx, const char *ks, const char **tables, int n_tables, table_op op,
                      const char *verb, cs_error *e)
{
    sch_catalog *c = ctx->cat;
    int first = 0, last = sch_keyspace_count(c);
    if (ks && *ks) {
        sch_keyspace *k = sch_keyspace_find(c, ks);
        if (!k)
            return cs_error_set(e, CS_ERR_INVALID, "Keyspace [%s] does not exist.", ks);
        for (int i = 0; i < last; i++)
            if (sch_keyspace_at(c, i) == k)
                first = i, last = i + 1;
        for (int i = 0; i < n_tables; i++) {
            sch_table *t = sch_table_find(c, ks, tables[i]);
            if (!t)
                return cs_error_set(e, CS_ERR_INVALID, "Unknown keyspace/table %s.%s", ks, tables[i]);
            if (t->st) {
                int rc = op(t->st);
                if (rc == 0) rc = cql_index_for_each(ctx, t, op);   /* index hook (issue 5) */
                if (rc)
                    return cs_error_set(e, CS_ERR_SERVER, "%s of %s.%s failed: %s", verb, ks, tables[i],
                                        cs_strerror(rc));
            }
        }
        if (n_tables)
            return 0;
    }
    for (int i = first; i < last; i++) {
        sch_keyspace *k = sch_keyspace_at(c, i);
        if (k->is_virtual)
            continue;
        for (int j = 0; j < k->n_tables; j++) {
            sch_table *t = k->tables[j];
            if (!t->st || t->is_virtual)
                continue;
            int rc = op(t->st);
            if (rc == 0) rc = cql_index_for_each(ctx, t, op);   /* index hook (issue 5) */
            if (rc)
                return cs_error_set(e, CS_ERR_SERVER, "%s of %s.%s failed: %s", verb, k->name, t->name,
                                    cs_strerror(rc));
        }
    }
    return 0;
}

int cql_admin_flush(cql_ctx *ctx, const char *ks, const char **tables, int n_tables, cs_error *e)
{
    return for_tables(ctx, ks, tables, n_tables, st_table_flush, "flush", e);
}

int cql_admin_compact(cql_ctx *ctx, const char *ks, const char **tables, int n_tables, cs_error *e)
{
    return for_tables(ctx, ks, tables, n_tables, st_table_compact, "compaction", e);
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
