/*
 * schema_store.c: schema as data.  Writes the rows of system_schema.* that
 * describe keyspaces, tables, columns, dropped columns, indexes, views and
 * types (Cassandra 4.1's SchemaKeyspace layout), and loads the user schema
 * back from them at startup.  Also the hidden local-state table holding the
 * host id, tokens and the generation of the system rows.  Owner: catalog.
 *
 * Invariants:
 *  1. A DDL statement's rows go into ONE st_mutation (one commit log record),
 *     so a crash never leaves half a table definition.
 *  2. Replacing an object's rows deletes the old ones at ts_del and writes
 *     the new ones at ts > ts_del in the same mutation.
 *  3. Rows of system keyspaces are ignored at load time (the compiled-in
 *     definitions win); they exist only for clients to read.
 */
#include <string.h>
#include <stdio.h>
#include <stdlib.h>

#include "cql/schema_int.h"
#include "common/alloc.h"
#include "common/log.h"

/* ---------------------------------------------------------------- value codecs */

static void put_coll_item(cs_buf *b, const char *s)
{
    size_t n = strlen(s);
    cs_buf_put_u32(b, (uint32_t)n);
    cs_buf_put(b, s, n);
}

void sch__put_text_map(cs_buf *b, char **k, char **v, int n)
{
    /* maps are kept sorted by key (sch__kv_set) */
    cs_buf_put_u32(b, (uint32_t)n);
    for (int i = 0; i < n; i++) {
        put_coll_item(b, k[i]);
        put_coll_item(b, v[i]);
    }
}

void sch__put_text_list(cs_buf *b, char **items, int n)
{
    cs_buf_put_u32(b, (uint32_t)n);
    for (int i = 0; i < n; i++) put_coll_item(b, items[i]);
}

static char *get_item(cs_rd *r)
{
    uint32_t l = cs_rd_u32(r);
    if (r->err) return NULL;
    if (l == 0) return cs_strdup("");
    const uint8_t *p = cs_rd_take(r, l);
    if (!p) return NULL;
    return cs_strndup((const char *)p, l);
}

int sch__get_text_map(const uint8_t *p, int32_t n, char ***k, char ***v, int *cnt)
{
    *k = *v = NULL;
    *cnt = 0;
    if (n < 4) return n < 0 ? 0 : CS_ECORRUPT;
    cs_rd r;
    cs_rd_init(&r, p, (size_t)n);
    uint32_t c = cs_rd_u32(&r);
    if (c > (uint32_t)n) return CS_ECORRUPT;
    for (uint32_t i = 0; i < c; i++) {
        char *a = get_item(&r), *b = get_item(&r);
        if (!a || !b) { cs_free(a); cs_free(b); return CS_ECORRUPT; }
        sch__kv_set(k, v, cnt, a, b);
        cs_free(a);
        cs_free(b);
    }
    return 0;
}

int sch__get_text_list(const uint8_t *p, int32_t n, char ***items, int *cnt)
{
    *items = NULL;
    *cnt = 0;
    if (n < 4) return n < 0 ? 0 : CS_ECORRUPT;
    cs_rd r;
    cs_rd_init(&r, p, (size_t)n);
    uint32_t c = cs_rd_u32(&r);
    if (c > (uint32_t)n) return CS_ECORRUPT;
    char **out = cs_calloc(c + 1, sizeof(char *));
    if (!out) return CS_ENOMEM;
    for (uint32_t i = 0; i < c; i++) {
        out[i] = get_item(&r);
        if (!out[i]) {
            for (uint32_t j = 0; j < i; j++) cs_free(out[j]);
            cs_free(out);
            return CS_ECORRUPT;
        }
    }
    *items = out;
    *cnt = (int)c;
    return 0;
}

/* ---------------------------------------------------------------- row writer */

typedef struct rw {
    st_mutation *m;
    int64_t ts;
    cs_buf tmp;
} rw;

/* Start a row of system_schema table t in partition `ks`, with clustering
 * values ck[0..n). */
static void row_begin(rw *w, const sch_table *t, const char *ks, const char **ck, int n)
{
    if (!w->m) return;
    cql_value v[4];
    for (int i = 0; i < n; i++) v[i] = (cql_value){ (const uint8_t *)ck[i], (int32_t)strlen(ck[i]) };
    cs_buf_reset(&w->tmp);
    sch_clustering_key(t, v, n, &w->tmp);
    st_mut_partition(w->m, t->st, (const uint8_t *)ks, (uint32_t)strlen(ks));
    st_mut_row(w->m, w->tmp.p, (uint32_t)w->tmp.len, 0);
    st_mut_row_liveness(w->m, (st_liveness){ w->ts, 0, 0 });
}

static void cell(rw *w, const char *col, const void *p, size_t n)
{
    if (!w->m) return;
    st_cell c;
    memset(&c, 0, sizeof c);
    c.col = sch__col_id(col);
    c.ts_us = w->ts;
    c.val = p;
    c.val_len = (uint32_t)n;
    st_mut_cell(w->m, &c);
}

static void cell_text(rw *w, const char *col, const char *s) { if (s) cell(w, col, s, strlen(s)); }
static void cell_bool(rw *w, const char *col, bool b) { uint8_t v = b ? 1 : 0; cell(w, col, &v, 1); }
static void cell_int(rw *w, const char *col, int32_t i) { uint8_t v[4]; cs_st32(v, (uint32_t)i); cell(w, col, v, 4); }
static void cell_double(rw *w, const char *col, double d) { uint8_t v[8]; cs_st_double(v, d); cell(w, col, v, 8); }
static void cell_map(rw *w, const char *col, char **k, char **v, int n)
{
    cs_buf b;
    cs_buf_init(&b);
    sch__put_text_map(&b, k, v, n);
    if (!b.err) cell(w, col, b.p, b.len);
    cs_buf_destroy(&b);
}

/* Delete one row (ck[0..n) full key) or, with prefix, every row under it. */
static void del_rows(rw *w, const sch_table *t, const char *ks, const char **ck, int n, bool prefix,
                     int64_t ts)
{
    if (!w->m) return;
    cql_value v[4];
    for (int i = 0; i < n; i++) v[i] = (cql_value){ (const uint8_t *)ck[i], (int32_t)strlen(ck[i]) };
    cs_buf_reset(&w->tmp);
    sch_clustering_key(t, v, n, &w->tmp);
    st_mut_partition(w->m, t->st, (const uint8_t *)ks, (uint32_t)strlen(ks));
    st_deletion d = { ts, cs_now_s() };
    if (!prefix) {
        st_mut_row(w->m, w->tmp.p, (uint32_t)w->tmp.len, 0);
        st_mut_row_delete(w->m, d);
        return;
    }
    cs_buf end;
    cs_buf_init(&end);
    cs_buf_put(&end, w->tmp.p, w->tmp.len);
    cs_buf_put_u8(&end, CK_AFTER);
    st_mut_range_delete(w->m, (st_bound){ w->tmp.p, (uint32_t)w->tmp.len, true },
                        (st_bound){ end.p, (uint32_t)end.len, true }, d);
    cs_buf_destroy(&end);
}

static void rw_init(rw *w, st_mutation *m, int64_t ts) { w->m = m; w->ts = ts; cs_buf_init(&w->tmp); }
static void rw_done(rw *w) { cs_buf_destroy(&w->tmp); }

void sch__rows_keyspace(sch_catalog *c, st_mutation *m, const sch_keyspace *k, int64_t ts)
{
    rw w;
    rw_init(&w, m, ts);
    row_begin(&w, c->ss[SS_KEYSPACES], k->name, NULL, 0);
    cell_bool(&w, "durable_writes", k->durable_writes);
    cell_map(&w, "replication", k->repl_k, k->repl_v, k->n_repl);
    rw_done(&w);
}

/* Partition deletions of `ks` in every system_schema table. */
void sch__rows_keyspace_drop(sch_catalog *c, st_mutation *m, const char *ks, int64_t ts)
{
    if (!m) return;
    for (int i = 0; i < SS_COUNT; i++) {
        st_mut_partition(m, c->ss[i]->st, (const uint8_t *)ks, (uint32_t)strlen(ks));
        st_mut_partition_delete(m, (st_deletion){ ts, cs_now_s() });
    }
}

static const char *kind_name(sch_col_kind k)
{
    switch (k) {
    case COL_PARTITION_KEY: return "partition_key";
    case COL_CLUSTERING: return "clustering";
    case COL_STATIC: return "static";
    default: return "regular";
    }
}

static void params_cells(rw *w, const sch_table *t)
{
    cell_double(w, "bloom_filter_fp_chance", t->bloom_fp_chance);
    cell_text(w, "comment", t->comment ? t->comment : "");
    cell_double(w, "dclocal_read_repair_chance", 0.0);
    cell_int(w, "default_time_to_live", t->default_ttl_s);
    cell_int(w, "gc_grace_seconds", t->gc_grace_s);
    cell_int(w, "max_index_interval", t->max_index_interval);
    cell_int(w, "memtable_flush_period_in_ms", t->memtable_flush_period_ms);
    cell_int(w, "min_index_interval", t->min_index_interval);
    cell_double(w, "read_repair_chance", 0.0);
    cell_text(w, "speculative_retry", t->speculative_retry);
    cell_text(w, "additional_write_policy", t->additional_write_policy);
    cell_double(w, "crc_check_chance", t->crc_check_chance);
    cell_map(w, "caching", t->caching_k, t->caching_v, t->n_caching);
    cell_map(w, "compaction", t->compaction_k, t->compaction_v, t->n_compaction);
    cell_map(w, "compression", t->compression_k, t->compression_v, t->n_compression);
    cell_text(w, "read_repair", t->read_repair);
    uint8_t empty[4] = { 0, 0, 0, 0 };
    cell(w, "extensions", empty, 4);
    if (t->cdc) cell_bool(w, "cdc", true);
    cell(w, "id", t->id, 16);
}

/* Rows of a table or view: tables/views row, columns, dropped columns,
 * indexes.  ts_del != INT64_MIN first deletes the previous rows. */
void sch__rows_table(sch_catalog *c, st_mutation *m, const sch_table *t, int64_t ts_del, int64_t ts)
{
    rw w;
    rw_init(&w, m, ts);
    const char *ks = t->ks->name;
    const char *key[2] = { t->name, NULL };
    if (ts_del != INT64_MIN) {
        del_rows(&w, c->ss[t->is_view ? SS_VIEWS : SS_TABLES], ks, key, 1, false, ts_del);
        del_rows(&w, c->ss[SS_COLUMNS], ks, key, 1, true, ts_del);
        del_rows(&w, c->ss[SS_DROPPED_COLUMNS], ks, key, 1, true, ts_del);
        del_rows(&w, c->ss[SS_INDEXES], ks, key, 1, true, ts_del);
    }
    if (t->is_view) {
        row_begin(&w, c->ss[SS_VIEWS], ks, key, 1);
        if (t->view_base) {
            cell(&w, "base_table_id", t->view_base->id, 16);
            cell_text(&w, "base_table_name", t->view_base->name);
        }
        cell_text(&w, "where_clause", t->view_where ? t->view_where : "");
        cell_bool(&w, "include_all_columns", t->view_include_all);
    } else {
        row_begin(&w, c->ss[SS_TABLES], ks, key, 1);
        /* TableMetadata.Flag, as a set in name order: a table is compound
         * unless it is COMPACT STORAGE (CreateTableStatement.fixupCompactTable) */
        char *fk[3];
        int nf = 0;
        if (t->compact == SCH_COMPACT_NONE || (t->compact == SCH_COMPACT_DENSE && t->n_ck > 1))
            fk[nf++] = "compound";
        if (t->is_counter)
            fk[nf++] = "counter";
        if (t->compact == SCH_COMPACT_DENSE)
            fk[nf++] = "dense";
        cs_buf b;
        cs_buf_init(&b);
        sch__put_text_list(&b, fk, nf);   /* a set serializes like a list */
        if (!b.err) cell(&w, "flags", b.p, b.len);
        cs_buf_destroy(&b);
    }
    params_cells(&w, t);
    for (int i = 0; i < t->n_cols; i++) {
        const sch_column *col = &t->cols[i];
        const char *ck[2] = { t->name, col->name };
        row_begin(&w, c->ss[SS_COLUMNS], ks, ck, 2);
        cell(&w, "column_name_bytes", col->name, strlen(col->name));
        cell_text(&w, "kind", kind_name(col->kind));
        cell_int(&w, "position", col->position);
        cell_text(&w, "clustering_order",
                  col->kind == COL_CLUSTERING ? (col->desc ? "desc" : "asc") : "none");
        cs_buf tb;
        cs_buf_init(&tb);
        ctype_to_cql(col->type, &tb);
        if (!tb.err) cell(&w, "type", tb.p, tb.len);
        cs_buf_destroy(&tb);
    }
    for (int i = 0; i < t->n_dropped; i++) {
        const sch_dropped_col *d = &t->dropped[i];
        const char *ck[2] = { t->name, d->name };
        row_begin(&w, c->ss[SS_DROPPED_COLUMNS], ks, ck, 2);
        uint8_t v[8];
        cs_st64(v, (uint64_t)(d->dropped_us / 1000));
        cell(&w, "dropped_time", v, 8);
        cell_text(&w, "kind", "regular");
        cs_buf tb;
        cs_buf_init(&tb);
        ctype_to_cql(d->type, &tb);
        if (!tb.err) cell(&w, "type", tb.p, tb.len);
        cs_buf_destroy(&tb);
    }
    for (int i = 0; i < t->n_indexes; i++) {
        const sch_index *ix = t->indexes[i];
        const char *ck[2] = { t->name, ix->name };
        row_begin(&w, c->ss[SS_INDEXES], ks, ck, 2);
        cell_text(&w, "kind", ix->kind);
        cell_map(&w, "options", ix->opt_keys, ix->opt_values, ix->n_opts);
    }
    rw_done(&w);
}

void sch__rows_table_drop(sch_catalog *c, st_mutation *m, const sch_table *t, int64_t ts)
{
    rw w;
    rw_init(&w, m, ts);
    const char *key[1] = { t->name };
    const char *ks = t->ks->name;
    del_rows(&w, c->ss[t->is_view ? SS_VIEWS : SS_TABLES], ks, key, 1, false, ts);
    del_rows(&w, c->ss[SS_COLUMNS], ks, key, 1, true, ts);
    del_rows(&w, c->ss[SS_DROPPED_COLUMNS], ks, key, 1, true, ts);
    del_rows(&w, c->ss[SS_INDEXES], ks, key, 1, true, ts);
    del_rows(&w, c->ss[SS_TRIGGERS], ks, key, 1, true, ts);
    rw_done(&w);
}

void sch__rows_type(sch_catalog *c, st_mutation *m, const sch_keyspace *k, const ctype *u, int64_t ts)
{
    rw w;
    rw_init(&w, m, ts);
    const char *key[1] = { u->udt_name };
    row_begin(&w, c->ss[SS_TYPES], k->name, key, 1);
    cs_buf b;
    cs_buf_init(&b);
    sch__put_text_list(&b, u->field_names, u->n_sub);
    if (!b.err) cell(&w, "field_names", b.p, b.len);
    cs_buf_reset(&b);
    cs_buf_put_u32(&b, (uint32_t)u->n_sub);
    for (int i = 0; i < u->n_sub; i++) {
        cs_buf tb;
        cs_buf_init(&tb);
        ctype_to_cql(u->sub[i], &tb);
        cs_buf_put_u32(&b, (uint32_t)tb.len);
        cs_buf_put(&b, tb.p, tb.len);
        cs_buf_destroy(&tb);
    }
    if (!b.err) cell(&w, "field_types", b.p, b.len);
    cs_buf_destroy(&b);
    rw_done(&w);
}

void sch__rows_type_drop(sch_catalog *c, st_mutation *m, const char *ks, const char *name, int64_t ts)
{
    rw w;
    rw_init(&w, m, ts);
    const char *key[1] = { name };
    del_rows(&w, c->ss[SS_TYPES], ks, key, 1, false, ts);
    rw_done(&w);
}

int sch__commit(sch_catalog *c, st_mutation *m, cs_error *e)
{
    int rc = m ? st_write(c->eng, m, &c->last_pos) : CS_ENOMEM;
    if (rc) {
        CS_ERROR("schema write failed: %s", cs_strerror(rc));
        if (e) cs_error_set(e, CS_ERR_SERVER, "Failed to persist schema change: %s", cs_strerror(rc));
        return e ? CS_EUSER : rc;
    }
    return 0;
}

/* ---------------------------------------------------------------- hidden local state */

enum { LS_HOST = 1, LS_TOKENS = 2, LS_GEN = 3 };

int sch__local_state_load(sch_catalog *c, cs_uuid *host, int64_t **tokens, int *n, int *gen)
{
    *tokens = NULL;
    *n = 0;
    *gen = -1;
    memset(host, 0, sizeof *host);
    st_read_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.pk = (const uint8_t *)"local";
    spec.pk_len = 5;
    spec.start_token = INT64_MIN;
    spec.end_token = INT64_MAX;
    spec.start_inclusive = true;
    st_scan *s = NULL;
    int rc = st_scan_open(c->local_state, &spec, &s);
    if (rc) return rc;
    st_partition_view pv;
    st_row_view r;
    if (st_scan_next_partition(s, &pv) == 1) {
        while (st_scan_next_row(s, &r) == 1) {
            for (int i = 0; i < r.n_cells; i++) {
                const st_cell *ce = &r.cells[i];
                if (ce->col == LS_HOST && ce->val_len == 16) {
                    memcpy(host->b, ce->val, 16);
                    if (*gen < 0) *gen = 0;
                } else if (ce->col == LS_TOKENS && ce->val_len % 8 == 0 && ce->val_len > 0) {
                    int cnt = (int)(ce->val_len / 8);
                    int64_t *t = cs_malloc(sizeof(int64_t) * (size_t)cnt);
                    if (!t) { st_scan_close(s); return CS_ENOMEM; }
                    for (int j = 0; j < cnt; j++) t[j] = (int64_t)cs_be64(ce->val + 8 * j);
                    cs_free(*tokens);
                    *tokens = t;
                    *n = cnt;
                } else if (ce->col == LS_GEN && ce->val_len == 4) {
                    *gen = (int)cs_be32(ce->val);
                }
            }
        }
    }
    st_scan_close(s);
    return 0;
}

int sch__local_state_save(sch_catalog *c, const cs_uuid *host, const int64_t *tokens, int n, int gen)
{
    st_mutation *m = st_mutation_new();
    if (!m) return CS_ENOMEM;
    int64_t ts = cs_write_ts_us();
    st_mut_partition(m, c->local_state, (const uint8_t *)"local", 5);
    st_mut_row(m, NULL, 0, 0);
    st_mut_row_liveness(m, (st_liveness){ ts, 0, 0 });
    st_cell ce;
    memset(&ce, 0, sizeof ce);
    ce.ts_us = ts;
    ce.col = LS_HOST;
    ce.val = host->b;
    ce.val_len = 16;
    st_mut_cell(m, &ce);
    uint8_t *tb = cs_malloc((size_t)n * 8 + 1);
    if (!tb) { st_mutation_free(m); return CS_ENOMEM; }
    for (int i = 0; i < n; i++) cs_st64(tb + 8 * i, (uint64_t)tokens[i]);
    ce.col = LS_TOKENS;
    ce.val = tb;
    ce.val_len = (uint32_t)n * 8;
    st_mut_cell(m, &ce);
    uint8_t g[4];
    cs_st32(g, (uint32_t)gen);
    ce.col = LS_GEN;
    ce.val = g;
    ce.val_len = 4;
    st_mut_cell(m, &ce);
    int rc = st_write(c->eng, m, NULL);
    st_mutation_free(m);
    cs_free(tb);
    return rc;
}
