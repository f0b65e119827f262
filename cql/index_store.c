/*
 * index_store.c: the hidden storage tables of secondary indexes (owner:
 * index).  An index is an engine table of its own, never in the catalog:
 * directory <data>/<ks>/<table>.<index>-<id>, id = hash of (base table id,
 * index name), so it survives restarts and is opened with the base table,
 * before commit log replay (schema_load.c hook; ctx.c lets replay reach it).
 * Entry layout: index.h.  Builds: cql__index_build (index_maint.c).
 */
#include <string.h>
#include <stdio.h>
#include "cql/index.h"
#include "common/alloc.h"
#include "common/hash.h"

int cql__index_build(cql_ctx *ctx, sch_table *t, sch_index *ix, sch_table *v, cs_error *e);

/* ---------------------------------------------------------------- targets */

/* Column name of a target part: plain, or "quoted" with "" escapes. */
static const sch_column *target_col(const sch_table *t, const char *s, size_t n)
{
    char name[512];
    size_t k = 0;
    if (n >= 2 && s[0] == '"' && s[n - 1] == '"') {
        for (size_t i = 1; i + 1 < n && k + 1 < sizeof name; i++) {
            name[k++] = s[i];
            if (s[i] == '"' && i + 2 < n && s[i + 1] == '"')
                i++;
        }
    } else {
        for (size_t i = 0; i < n && k + 1 < sizeof name; i++)
            name[k++] = s[i];
    }
    name[k] = 0;
    return sch_column_find(t, name);
}

int cql_index_target_parse(const sch_index *ix, cql_index_target *out)
{
    memset(out, 0, sizeof *out);
    const char *tg = ix->target ? ix->target : "";
    const char *open = tg[0] == '"' ? NULL : strchr(tg, '(');
    size_t n = strlen(tg);
    if (!open || tg[n - 1] != ')') {
        out->kind = IDX_SIMPLE;
        out->col = target_col(ix->table, tg, n);
        return 0;
    }
    size_t kl = (size_t)(open - tg);
    if (kl == 6 && !strncmp(tg, "values", 6)) out->kind = IDX_VALUES;
    else if (kl == 4 && !strncmp(tg, "keys", 4)) out->kind = IDX_KEYS;
    else if (kl == 7 && !strncmp(tg, "entries", 7)) out->kind = IDX_ENTRIES;
    else if (kl == 4 && !strncmp(tg, "full", 4)) out->kind = IDX_FULL;
    else return CS_EINVAL;
    out->col = target_col(ix->table, open + 1, n - kl - 2);
    return 0;
}

/* ---------------------------------------------------------------- layout */

int cql_index_bucket(int64_t token)
{
    return (int)(((uint64_t)token ^ 0x8000000000000000ull) >> 60);
}

int cql_index_value(const ctype *ty, const uint8_t *v, int32_t n, cs_buf *out)
{
    if (n < 0)
        return CS_EINVAL;
    size_t mark = out->len;
    int rc = ctype_bc_encode(ty, v, (size_t)n, false, out);
    if (out->err || rc == CS_ENOMEM)
        return CS_ENOMEM;     /* never fall back on OOM: the key would differ */
    if (rc == 0)
        return 0;
    out->len = mark;          /* not byte-comparable (duration...): raw bytes */
    cs_buf_put(out, v, (size_t)n);
    return out->err ? CS_ENOMEM : 0;
}

void cql_index_entry_ck(int64_t token, const uint8_t *pk, uint32_t pk_len,
                        const uint8_t *ck, uint32_t ck_len, cs_buf *out)
{
    uint64_t u = (uint64_t)token ^ 0x8000000000000000ull;
    for (int i = 7; i >= 0; i--)
        cs_buf_put_u8(out, (uint8_t)(u >> (i * 8)));
    for (uint32_t i = 0; i < pk_len; i++) {
        cs_buf_put_u8(out, pk[i]);
        if (pk[i] == 0)
            cs_buf_put_u8(out, 0xff);
    }
    cs_buf_put_u8(out, 0);
    cs_buf_put_u8(out, 0);
    if (ck_len)
        cs_buf_put(out, ck, ck_len);
}

/* ---------------------------------------------------------------- storage */

void cql_index_table_id(const sch_index *ix, uint8_t out[16])
{
    uint8_t buf[16 + 256];
    size_t n = strlen(ix->name);
    if (n > 256)
        n = 256;
    memcpy(buf, ix->table->id, 16);
    memcpy(buf + 16, ix->name, n);
    uint64_t a = cs_xxh64(buf, 16 + n, 0x1de5), b = cs_xxh64(buf, 16 + n, 0x5eed);
    for (int i = 0; i < 8; i++) {
        out[i] = (uint8_t)(a >> (56 - 8 * i));
        out[8 + i] = (uint8_t)(b >> (56 - 8 * i));
    }
}

st_table *cql_index_storage(st_engine *eng, sch_index *ix)
{
    if (ix->impl)
        return ix->impl;
    uint8_t id[16];
    cql_index_table_id(ix, id);
    char name[600];
    snprintf(name, sizeof name, "%s.%s", ix->table->name, ix->name);
    st_table_opts o;
    st_table_opts_defaults(&o);
    st_table *st = NULL;
    if (st_table_open(eng, id, ix->table->ks->name, name, &o, &st))
        return NULL;
    ix->impl = st;
    return st;
}

int cql_index_open_table(st_engine *eng, sch_table *t)
{
    if (cql__index_build_open(eng))   /* build progress rows replay too */
        return CS_EIO;
    for (int i = 0; i < t->n_indexes; i++)
        if (!cql_index_storage(eng, t->indexes[i]))
            return CS_EIO;
    return 0;
}

bool cql_index_owns_id(sch_catalog *c, const uint8_t id[16])
{
    uint8_t x[16];
    if (cql__index_build_owns_id(id))
        return true;
    for (int k = 0; k < sch_keyspace_count(c); k++) {
        sch_keyspace *ks = sch_keyspace_at(c, k);
        for (int j = 0; j < ks->n_tables; j++)
            for (int i = 0; i < ks->tables[j]->n_indexes; i++) {
                cql_index_table_id(ks->tables[j]->indexes[i], x);
                if (!memcmp(x, id, 16))
                    return true;
            }
    }
    return false;
}

int cql_index_create(cql_ctx *ctx, sch_index *ix, cs_error *e)
{
    st_table *st = cql_index_storage(ctx->eng, ix);
    if (!st)
        return cs_error_set(e, CS_ERR_SERVER, "Cannot create index storage for %s", ix->name);
    /* leftovers of an earlier index of the same name (crash mid-build) */
    st_table_truncate(st);
    return cql__index_build_begin(ctx, ix, e);
}

void cql_index_drop(cql_ctx *ctx, sch_index *ix)
{
    uint8_t id[16];
    cql_index_table_id(ix, id);
    cql__index_build_cancel(ctx, id);
    st_table *st = cql_index_storage(ctx->eng, ix);
    if (st)
        st_table_drop(st);
    ix->impl = NULL;
}

void cql_index_drop_table(cql_ctx *ctx, sch_table *t)
{
    for (int i = 0; i < t->n_indexes; i++)
        cql_index_drop(ctx, t->indexes[i]);
}

int cql_index_truncate_table(cql_ctx *ctx, sch_table *t)
{
    int rc = 0;
    for (int i = 0; rc == 0 && i < t->n_indexes; i++) {
        st_table *st = cql_index_storage(ctx->eng, t->indexes[i]);
        rc = st ? st_table_truncate(st) : CS_EIO;
    }
    return rc;
}

int cql_view_build(cql_ctx *ctx, sch_table *v, cs_error *e)
{
    if (!v->view_base)
        return 0;
    return cql__view_build_begin(ctx, v, e);
}

int cql_index_for_each(cql_ctx *ctx, sch_table *t, int (*op)(st_table *))
{
    int rc = 0;
    for (int i = 0; rc == 0 && i < t->n_indexes; i++) {
        st_table *st = cql_index_storage(ctx->eng, t->indexes[i]);
        rc = st ? op(st) : CS_EIO;
    }
    return rc;
}
