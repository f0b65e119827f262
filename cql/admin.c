/*
 * admin.c: nodetool-style operations on tables (flush, compact), for the
 * admin endpoint (server/admin.c) and cassette-tool.  Owner: lead.
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
            return cs_error_set(e, CS_ERR_INVALID, "Keyspace [%s] does not exist.", ks);
        for (int i = 0; i < last; i++)
            if (sch_keyspace_at(c, i) == k)
                first = i, last = i + 1;
        /* Every name is checked before anything runs, like nodetool. */
        for (int i = 0; i < n_tables && rc == 0; i++) {
            sch_table *t = sch_table_find(c, ks, tables[i]);
            rc = t ? add_table(ctx, &ts, t, e)
                   : cs_error_set(e, CS_ERR_INVALID, "Unknown keyspace/table %s.%s", ks, tables[i]);
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
