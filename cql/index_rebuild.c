/*
 * index_rebuild.c: nodetool rebuild_index (cql/exec.h cql_index_rebuild):
 * a full rebuild of named secondary indexes, as Cassandra's
 * SecondaryIndexManager.rebuildIndexesBlocking: the index storage is
 * emptied and built again from the base table by the background builds of
 * index_build.c (the same as after CREATE INDEX: queries through the index
 * fail as unavailable until the build is done, writes keep maintaining
 * it).  Thread: the request loop.
 */
#include "cql/index.h"
#include "common/log.h"
#include <string.h>

/* The index of t called name, or "table.index" (Cassandra's index table
 * name), or NULL. */
static sch_index *find_index(sch_table *t, const char *name)
{
    size_t tl = strlen(t->name);
    if (!strncmp(name, t->name, tl) && name[tl] == '.')
        name += tl + 1;
    for (int i = 0; i < t->n_indexes; i++)
        if (!strcmp(t->indexes[i]->name, name))
            return t->indexes[i];
    return NULL;
}

/* The table ks.table as rebuildSecondaryIndex finds it; NULL with e set. */
static sch_table *base_table(cql_ctx *ctx, const char *ks, const char *table, cs_error *e)
{
    if (!sch_keyspace_find(ctx->cat, ks)) {   /* Keyspace.open's assertion */
        cs_error_set(e, CS_ERR_INVALID, "Unknown keyspace %s", ks);
        return NULL;
    }
    sch_table *t = sch_table_find(ctx->cat, ks, table);
    if (!t || t->is_virtual)
        cs_error_set(e, CS_ERR_INVALID, "Unknown keyspace/cf pair (%s.%s)", ks, table);
    return t && !t->is_virtual ? t : NULL;
}

int cql_index_rebuild(cql_ctx *ctx, const char *ks, const char *table, const char *const *names, int n,
                      int *started, cs_error *e)
{
    *started = 0;
    sch_table *t = base_table(ctx, ks, table, e);
    if (!t)
        return CS_EUSER;
    for (int i = 0; i < n; i++) {
        sch_index *ix = find_index(t, names[i]);
        if (!ix) {
            CS_INFO("rebuild_index: no index %s on %s.%s", names[i], ks, table);
            continue;
        }
        st_table *st = cql_index_storage(ctx->eng, ix);
        if (!st)
            return cs_error_set(e, CS_ERR_SERVER, "cannot open the storage of index %s", ix->name);
        uint8_t id[16];
        cql_index_table_id(ix, id);
        cql__index_build_cancel(ctx, id);   /* a build in progress starts over */
        int rc = st_table_truncate(st);
        if (rc)
            return cs_error_set(e, CS_ERR_SERVER, "cannot empty index %s: %s", ix->name, cs_strerror(rc));
        rc = cql__index_build_begin(ctx, ix, e);
        if (rc)
            return rc;
        CS_INFO("rebuild_index: rebuilding %s.%s.%s", ks, table, ix->name);
        ++*started;
    }
    return 0;
}

bool cql_index_rebuilding(cql_ctx *ctx, const char *ks, const char *table, const char *const *names, int n)
{
    sch_table *t = sch_table_find(ctx->cat, ks, table);
    for (int i = 0; t && i < n; i++) {
        sch_index *ix = find_index(t, names[i]);
        if (ix && cql_index_is_building(ctx, ix) && !cql_index_build_failed(ctx, ix))
            return true;
    }
    return false;
}

const char *cql_index_rebuild_failed(cql_ctx *ctx, const char *ks, const char *table, const char *const *names, int n)
{
    sch_table *t = sch_table_find(ctx->cat, ks, table);
    for (int i = 0; t && i < n; i++) {
        sch_index *ix = find_index(t, names[i]);
        if (ix && cql_index_build_failed(ctx, ix))
            return ix->name;
    }
    return NULL;
}
