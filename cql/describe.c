/*
 * describe.c: server-side DESCRIBE in Cassandra 4.1's result shape
 * (cql3/statements/DescribeStatement.java) and the CQL text of schema
 * objects (TableMetadata/KeyspaceMetadata/UserType/IndexMetadata/
 * ViewMetadata toCqlString, CqlBuilder's 4-space indentation).
 * Owner: catalog.
 *
 * Results are Rows of spec system.describe: keyspace_name, type, name
 * [, create_statement]; DESCRIBE CLUSTER: cluster, partitioner, snitch
 * [, range_ownership].  Paging is by row offset: the paging state is
 * [u16 version=1][16 bytes schema version][u64 next offset]; a page that is
 * exactly full announces more pages (as Cassandra does).
 */
#include <string.h>
#include <stdio.h>
#include <strings.h>

#include "cql/schema_int.h"
#include "common/alloc.h"

#define IND "    "

/* ---------------------------------------------------------------- CQL text */

static void qid(cs_buf *b, const char *name) { cql_quote_ident(name, b); }

static void squote(cs_buf *b, const char *s)
{
    cs_buf_put_u8(b, '\'');
    for (const char *p = s; p && *p; p++) {
        if (*p == '\'') cs_buf_put_u8(b, '\'');
        cs_buf_put_u8(b, (uint8_t)*p);
    }
    cs_buf_put_u8(b, '\'');
}

static void map_text(cs_buf *b, char **k, char **v, int n)
{
    sch__puts(b, "{");
    for (int i = 0; i < n; i++) {
        if (i) sch__puts(b, ", ");
        squote(b, k[i]);
        sch__puts(b, ": ");
        squote(b, v[i]);
    }
    sch__puts(b, "}");
}

static void table_name(cs_buf *b, const sch_table *t)
{
    qid(b, t->ks->name);
    sch__puts(b, ".");
    qid(b, t->name);
}

void sch__cql_keyspace(const sch_keyspace *k, cs_buf *out)
{
    if (k->is_virtual) {
        sch__puts(out, "/*\nWarning: Keyspace ");
        qid(out, k->name);
        sch__puts(out, " is a virtual keyspace and cannot be recreated with CQL.\nStructure, for reference:\nVIRTUAL KEYSPACE ");
        qid(out, k->name);
        sch__puts(out, ";\n*/");
        return;
    }
    sch__puts(out, "CREATE KEYSPACE ");
    qid(out, k->name);
    sch__puts(out, " WITH replication = {'class': ");
    const char *cls = sch__kv_get(k->repl_k, k->repl_v, k->n_repl, "class");
    if (!cls) cls = "";
    const char *pfx = "org.apache.cassandra.locator.";
    squote(out, strncmp(cls, pfx, strlen(pfx)) == 0 && !strchr(cls + strlen(pfx), '.') ? cls + strlen(pfx) : cls);
    for (int i = 0; i < k->n_repl; i++) {
        if (strcmp(k->repl_k[i], "class") == 0) continue;
        sch__puts(out, ", ");
        squote(out, k->repl_k[i]);
        sch__puts(out, ": ");
        squote(out, k->repl_v[i]);
    }
    sch__printf(out, "}  AND durable_writes = %s;", k->durable_writes ? "true" : "false");
}

/* A static compact table's columns are static inside, regular to CQL
 * (CompactTableMetadata.allColumnsInCreateOrder). */
static void column_def(cs_buf *b, const sch_table *t, const sch_column *c)
{
    qid(b, c->name);
    sch__puts(b, " ");
    ctype_to_cql(c->type, b);
    if (c->kind == COL_STATIC && t->compact != SCH_COMPACT_STATIC) sch__puts(b, " static");
}

/* Columns in Cassandra's "create order": pk, ck, statics then regulars,
 * each with simple (non multi-cell) columns first, then by name. */
static int create_order(const sch_table *t, const sch_column **out)
{
    int n = 0;
    for (int i = 0; i < t->n_cols; i++)
        if ((t->cols[i].kind == COL_PARTITION_KEY || t->cols[i].kind == COL_CLUSTERING) && !t->cols[i].hidden)
            out[n++] = &t->cols[i];
    for (int pass = 0; pass < 4; pass++) {
        sch_col_kind kind = pass < 2 ? COL_STATIC : COL_REGULAR;
        bool complex = pass % 2 == 1;
        for (int i = 0; i < t->n_cols; i++)
            if (t->cols[i].kind == kind && !t->cols[i].hidden && ctype_is_multicell(t->cols[i].type) == complex)
                out[n++] = &t->cols[i];
    }
    return n;
}

static void primary_key(cs_buf *b, const sch_table *t)
{
    sch__puts(b, "PRIMARY KEY (");
    if (t->n_pk > 1) {
        sch__puts(b, "(");
        for (int i = 0; i < t->n_pk; i++) { if (i) sch__puts(b, ", "); qid(b, t->pk[i]->name); }
        sch__puts(b, ")");
    } else {
        qid(b, t->pk[0]->name);
    }
    for (int i = 0; i < t->n_ck; i++) {
        if (t->ck[i]->hidden) continue;      /* a static compact table's column1 */
        sch__puts(b, ", ");
        qid(b, t->ck[i]->name);
    }
    sch__puts(b, ")\n");
}

static void table_options(cs_buf *b, const sch_table *t, bool internals)
{
    if (t->compact != SCH_COMPACT_NONE)
        sch__puts(b, "COMPACT STORAGE\n" IND "AND ");
    if (internals) {
        cs_uuid u;
        char s[37];
        memcpy(u.b, t->id, 16);
        cs_uuid_format(&u, s);
        sch__printf(b, "ID = %s\n" IND "AND ", s);
    }
    if (t->n_ck > 0) {
        sch__puts(b, "CLUSTERING ORDER BY (");
        for (int i = 0; i < t->n_ck; i++) {
            if (i) sch__puts(b, ", ");
            qid(b, t->ck[i]->name);
            sch__puts(b, t->ck[i]->desc ? " DESC" : " ASC");
        }
        sch__puts(b, ")\n" IND "AND ");
    }
    if (t->ks->is_virtual) {
        sch__puts(b, "comment = ");
        squote(b, t->comment ? t->comment : "");
        sch__puts(b, ";");
        return;
    }
    sch__puts(b, "additional_write_policy = ");
    squote(b, t->additional_write_policy);
    sch__puts(b, "\n" IND "AND bloom_filter_fp_chance = ");
    sch__put_double(b, t->bloom_fp_chance);
    sch__puts(b, "\n" IND "AND caching = ");
    map_text(b, t->caching_k, t->caching_v, t->n_caching);
    sch__printf(b, "\n" IND "AND cdc = %s", t->cdc ? "true" : "false");
    sch__puts(b, "\n" IND "AND comment = ");
    squote(b, t->comment ? t->comment : "");
    sch__puts(b, "\n" IND "AND compaction = ");
    map_text(b, t->compaction_k, t->compaction_v, t->n_compaction);
    sch__puts(b, "\n" IND "AND compression = ");
    map_text(b, t->compression_k, t->compression_v, t->n_compression);
    sch__puts(b, "\n" IND "AND memtable = 'default'");
    sch__puts(b, "\n" IND "AND crc_check_chance = ");
    sch__put_double(b, t->crc_check_chance);
    if (!t->is_view) sch__printf(b, "\n" IND "AND default_time_to_live = %d", t->default_ttl_s);
    sch__puts(b, "\n" IND "AND extensions = {}");
    sch__printf(b, "\n" IND "AND gc_grace_seconds = %d", t->gc_grace_s);
    sch__printf(b, "\n" IND "AND max_index_interval = %d", t->max_index_interval);
    sch__printf(b, "\n" IND "AND memtable_flush_period_in_ms = %d", t->memtable_flush_period_ms);
    sch__printf(b, "\n" IND "AND min_index_interval = %d", t->min_index_interval);
    sch__puts(b, "\n" IND "AND read_repair = ");
    squote(b, t->read_repair);
    sch__puts(b, "\n" IND "AND speculative_retry = ");
    squote(b, t->speculative_retry);
    sch__puts(b, ";");
}

void sch__cql_table(const sch_table *t, bool internals, cs_buf *out)
{
    if (t->is_view) { sch__cql_view(t, internals, out); return; }
    const char *kw = "CREATE";
    bool virt = t->ks->is_virtual;   /* system.local & co. are computed here but real tables in Cassandra */
    if (virt) {
        sch__puts(out, "/*\nWarning: Table ");
        table_name(out, t);
        sch__puts(out, " is a virtual table and cannot be recreated with CQL.\nStructure, for reference:\n");
        kw = "VIRTUAL";
    }
    bool compact = t->compact != SCH_COMPACT_NONE;   /* CompactTableMetadata.appendCqlTo */
    if (compact) {
        sch__puts(out, "/*\nWarning: Table ");
        table_name(out, t);
        sch__puts(out, " omitted because it has constructs not compatible with CQL (was created via legacy API).\n"
                       "Approximate structure, for reference:\n(this should not be used to reproduce this schema)\n\n");
    }
    sch__printf(out, "%s TABLE ", kw);
    table_name(out, t);
    sch__puts(out, " (\n");
    bool single = t->n_pk == 1 && t->n_ck == 0;
    const sch_column **cols = cs_calloc((size_t)t->n_cols + 1, sizeof(*cols));
    if (!cols) { out->err = CS_ENOMEM; return; }
    int n = create_order(t, cols);
    /* WITH INTERNALS: dropped columns are declared, then dropped (and
     * re-added) by ALTER statements (TableMetadata.appendCqlTo) */
    bool drops = internals && t->n_dropped > 0;
    for (int i = 0; i < n; i++) {
        bool readded = false;
        for (int d = 0; drops && d < t->n_dropped; d++)
            if (strcmp(t->dropped[d].name, cols[i]->name) == 0) readded = true;
        if (readded) continue;
        sch__puts(out, IND);
        column_def(out, t, cols[i]);
        if (single && cols[i]->kind == COL_PARTITION_KEY) sch__puts(out, " PRIMARY KEY");
        if (!single || drops || i + 1 < n) sch__puts(out, ",");
        sch__puts(out, "\n");
    }
    cs_free(cols);
    for (int d = 0; drops && d < t->n_dropped; d++) {
        sch__puts(out, IND);
        qid(out, t->dropped[d].name);
        sch__puts(out, " ");
        ctype_to_cql(t->dropped[d].type, out);
        if (!single) sch__puts(out, ",");
        sch__puts(out, "\n");
    }
    if (!single) {
        sch__puts(out, IND);
        primary_key(out, t);
    }
    sch__puts(out, ") WITH ");
    table_options(out, t, internals);
    for (int d = 0; drops && d < t->n_dropped; d++) {
        sch__puts(out, "\nALTER TABLE ");
        table_name(out, t);
        sch__puts(out, " DROP ");
        qid(out, t->dropped[d].name);
        sch__printf(out, " USING TIMESTAMP %lld;", (long long)t->dropped[d].dropped_us);
        const sch_column *now = sch_column_find(t, t->dropped[d].name);
        if (now) {
            sch__puts(out, "\nALTER TABLE ");
            table_name(out, t);
            sch__puts(out, " ADD ");
            column_def(out, t, now);
            sch__puts(out, ";");
        }
    }
    if (virt || compact) sch__puts(out, "\n*/");
}

void sch__cql_view(const sch_table *v, bool internals, cs_buf *out)
{
    sch__puts(out, "CREATE MATERIALIZED VIEW ");
    table_name(out, v);
    sch__puts(out, " AS\n" IND "SELECT ");
    if (v->view_include_all) {
        sch__puts(out, "*");
    } else {
        /* select order: pk, ck, then the others by name */
        for (int i = 0; i < v->n_cols; i++) { if (i) sch__puts(out, ", "); qid(out, v->cols[i].name); }
    }
    sch__puts(out, "\n" IND "FROM ");
    qid(out, v->ks->name);
    sch__puts(out, ".");
    qid(out, v->view_base ? v->view_base->name : "");
    sch__puts(out, "\n" IND "WHERE ");
    sch__puts(out, v->view_where ? v->view_where : "");
    sch__puts(out, "\n" IND);
    primary_key(out, v);
    sch__puts(out, " WITH ");
    table_options(out, v, internals);
}

void sch__cql_type(const ctype *u, cs_buf *out)
{
    sch__puts(out, "CREATE TYPE ");
    qid(out, u->udt_ks);
    sch__puts(out, ".");
    qid(out, u->udt_name);
    sch__puts(out, " (\n");
    for (int i = 0; i < u->n_sub; i++) {
        if (i) sch__puts(out, ",\n");
        sch__puts(out, IND);
        qid(out, u->field_names[i]);
        sch__puts(out, " ");
        ctype_to_cql(u->sub[i], out);
    }
    sch__puts(out, "\n);");
}

void sch__cql_index(const sch_index *ix, cs_buf *out)
{
    if (ix->class_name) {
        sch__puts(out, "CREATE CUSTOM INDEX ");
        qid(out, ix->name);
        sch__puts(out, " ON ");
        table_name(out, ix->table);
        sch__printf(out, " (%s) USING ", ix->target);
        squote(out, ix->class_name);
        int extra = 0;
        for (int i = 0; i < ix->n_opts; i++)
            if (strcmp(ix->opt_keys[i], "target") && strcmp(ix->opt_keys[i], "class_name")) extra++;
        if (extra) {
            sch__puts(out, " WITH OPTIONS = {");
            int k = 0;
            for (int i = 0; i < ix->n_opts; i++) {
                if (!strcmp(ix->opt_keys[i], "target") || !strcmp(ix->opt_keys[i], "class_name")) continue;
                if (k++) sch__puts(out, ", ");
                squote(out, ix->opt_keys[i]);
                sch__puts(out, ": ");
                squote(out, ix->opt_values[i]);
            }
            sch__puts(out, "}");
        }
    } else {
        sch__puts(out, "CREATE INDEX ");
        qid(out, ix->name);
        sch__puts(out, " ON ");
        table_name(out, ix->table);
        sch__printf(out, " (%s)", ix->target);
    }
    sch__puts(out, ";");
}

/* ---------------------------------------------------------------- element lists */

typedef struct elem {
    char *ks, *type, *name, *stmt;   /* stmt NULL for listings */
} elem;

typedef struct elems {
    elem *v; int n, cap;
    bool with_stmt;
    bool internals;
} elems;

static void quoted_str(const char *name, char **out)
{
    cs_buf b;
    cs_buf_init(&b);
    qid(&b, name);
    *out = sch__bufstr(&b) ? cs_strdup((char *)b.p) : NULL;
    cs_buf_destroy(&b);
}

static elem *push(elems *l, const char *ks, const char *type, const char *name)
{
    if (l->n == l->cap) {
        int nc = l->cap ? l->cap * 2 : 32;
        elem *nv = cs_realloc(l->v, sizeof(*nv) * (size_t)nc);
        if (!nv) return NULL;
        l->v = nv;
        l->cap = nc;
    }
    elem *e = &l->v[l->n++];
    memset(e, 0, sizeof *e);
    quoted_str(ks, &e->ks);
    e->type = cs_strdup(type);
    quoted_str(name, &e->name);
    return e;
}

static void set_stmt(elem *e, cs_buf *b)
{
    if (!e) return;
    e->stmt = sch__bufstr(b) ? cs_strdup((char *)b->p) : NULL;
}

static void add_keyspace(elems *l, const sch_keyspace *k)
{
    elem *e = push(l, k->name, "keyspace", k->name);
    if (!l->with_stmt || !e) return;
    cs_buf b;
    cs_buf_init(&b);
    sch__cql_keyspace(k, &b);
    set_stmt(e, &b);
    cs_buf_destroy(&b);
}

static void add_type(elems *l, const sch_keyspace *k, const ctype *u)
{
    elem *e = push(l, k->name, "type", u->udt_name);
    if (!l->with_stmt || !e) return;
    cs_buf b;
    cs_buf_init(&b);
    sch__cql_type(u, &b);
    set_stmt(e, &b);
    cs_buf_destroy(&b);
}

static void add_index(elems *l, const sch_index *ix)
{
    elem *e = push(l, ix->table->ks->name, "index", ix->name);
    if (!l->with_stmt || !e) return;
    cs_buf b;
    cs_buf_init(&b);
    sch__cql_index(ix, &b);
    set_stmt(e, &b);
    cs_buf_destroy(&b);
}

static void add_table_only(elems *l, const sch_table *t)
{
    elem *e = push(l, t->ks->name, t->is_view ? "materialized_view" : "table", t->name);
    if (!l->with_stmt || !e) return;
    cs_buf b;
    cs_buf_init(&b);
    sch__cql_table(t, l->internals, &b);
    set_stmt(e, &b);
    cs_buf_destroy(&b);
}

static int ci_cmp(const char *a, const char *b) { return strcasecmp(a, b); }

/* Pointers sorted case-insensitively by name (SchemaElement.NAME_COMPARATOR). */
static void sort_ptrs(void **p, int n, const char *(*name)(void *))
{
    for (int i = 1; i < n; i++) {
        void *x = p[i];
        int j = i;
        while (j > 0 && ci_cmp(name(p[j - 1]), name(x)) > 0) { p[j] = p[j - 1]; j--; }
        p[j] = x;
    }
}
static const char *tname(void *t) { return ((sch_table *)t)->name; }
static const char *iname(void *i) { return ((sch_index *)i)->name; }
static const char *kname(void *k) { return ((sch_keyspace *)k)->name; }
static const char *uname(void *u) { return ((ctype *)u)->udt_name; }

/* A table, its indexes and (with views) its views, like getTableElements. */
static void add_table(elems *l, const sch_table *t, bool with_views)
{
    add_table_only(l, t);
    if (t->n_indexes) {
        void **ix = cs_calloc((size_t)t->n_indexes, sizeof(void *));
        if (ix) {
            for (int i = 0; i < t->n_indexes; i++) ix[i] = t->indexes[i];
            sort_ptrs(ix, t->n_indexes, iname);
            for (int i = 0; i < t->n_indexes; i++) add_index(l, ix[i]);
            cs_free(ix);
        }
    }
    if (with_views && t->n_views) {
        void **vv = cs_calloc((size_t)t->n_views, sizeof(void *));
        if (vv) {
            for (int i = 0; i < t->n_views; i++) vv[i] = t->views[i];
            sort_ptrs(vv, t->n_views, tname);
            for (int i = 0; i < t->n_views; i++) add_table_only(l, vv[i]);
            cs_free(vv);
        }
    }
}

static void **sorted_types(const sch_keyspace *k)
{
    void **p = cs_calloc((size_t)k->n_types + 1, sizeof(void *));
    if (!p) return NULL;
    for (int i = 0; i < k->n_types; i++) p[i] = k->types[i];
    sort_ptrs(p, k->n_types, uname);
    return p;
}

static void **sorted_tables(const sch_keyspace *k, int *n)
{
    void **p = cs_calloc((size_t)k->n_tables + 1, sizeof(void *));
    *n = 0;
    if (!p) return NULL;
    for (int i = 0; i < k->n_tables; i++) if (!k->tables[i]->is_view) p[(*n)++] = k->tables[i];
    sort_ptrs(p, *n, tname);
    return p;
}

static void add_keyspace_all(elems *l, const sch_keyspace *k, bool only)
{
    add_keyspace(l, k);
    if (only) return;
    void **ty = sorted_types(k);
    for (int i = 0; ty && i < k->n_types; i++) add_type(l, k, ty[i]);
    cs_free(ty);
    int n;
    void **tb = sorted_tables(k, &n);
    for (int i = 0; tb && i < n; i++) add_table(l, tb[i], true);
    cs_free(tb);
}

static void **sorted_keyspaces(sch_catalog *c)
{
    int n = sch_keyspace_count(c);
    void **p = cs_calloc((size_t)n + 1, sizeof(void *));
    if (!p) return NULL;
    for (int i = 0; i < n; i++) p[i] = sch_keyspace_at(c, i);
    sort_ptrs(p, n, kname);
    return p;
}

static void elems_free(elems *l)
{
    for (int i = 0; i < l->n; i++) {
        cs_free(l->v[i].ks); cs_free(l->v[i].type); cs_free(l->v[i].name); cs_free(l->v[i].stmt);
    }
    cs_free(l->v);
}

/* ---------------------------------------------------------------- execution */

static const char *schema_changed_msg =
    "The schema has changed since the previous page of the DESCRIBE statement was computed. Please retry DESCRIBE.";

static void put_text(cql_rows *w, const char *s)
{
    cql_rows_value(w, (const uint8_t *)(s ? s : ""), (int32_t)strlen(s ? s : ""));
}

/* Emit rows [offset, offset + page) of l, with paging state. */
static int emit(cql_ctx *ctx, cql_session *s, const cql_params *p, elems *l, cql_result *r, cs_error *e)
{
    uint64_t offset = 0;
    uint8_t ver[16];
    sch_version(ctx->cat, ver);
    if (p && p->paging_state && p->paging_state_len >= 0) {
        if (p->paging_state_len != 26 || cs_be16(p->paging_state) != 1)
            return cs_error_set(e, CS_ERR_INVALID, "Invalid paging state.");
        if (memcmp(p->paging_state + 2, ver, 16) != 0)
            return cs_error_set(e, CS_ERR_INVALID, "%s", schema_changed_msg);
        offset = cs_be64(p->paging_state + 18);
    }
    int32_t page = p ? p->page_size : 0;
    cql_rows w;
    int version = s && s->protocol_version ? s->protocol_version : 4;
    int ncols = l->with_stmt ? 4 : 3;
    cql_rows_begin(&w, r, version, "system", "describe", ncols, false);
    const ctype *text = ctype_scalar(CT_VARCHAR);
    cql_rows_col(&w, "keyspace_name", text);
    cql_rows_col(&w, "type", text);
    cql_rows_col(&w, "name", text);
    if (l->with_stmt) cql_rows_col(&w, "create_statement", text);
    int32_t emitted = 0;
    for (uint64_t i = offset; i < (uint64_t)l->n; i++) {
        if (page > 0 && emitted == page) break;
        put_text(&w, l->v[i].ks);
        put_text(&w, l->v[i].type);
        put_text(&w, l->v[i].name);
        if (l->with_stmt) put_text(&w, l->v[i].stmt);
        emitted++;
    }
    if (page > 0 && emitted == page) {
        uint8_t ps[26];
        cs_st16(ps, 1);
        memcpy(ps + 2, ver, 16);
        cs_st64(ps + 18, offset + (uint64_t)emitted);
        cql_rows_end(&w, ps, 26);
    } else {
        cql_rows_end(&w, NULL, -1);
    }
    return 0;
}

static int describe_cluster(cql_ctx *ctx, cql_session *s, cql_result *r)
{
    const char *use = s && s->keyspace[0] ? s->keyspace : NULL;
    bool ranges = use && !sch__is_system_ks_name(use);
    cql_rows w;
    cql_rows_begin(&w, r, s && s->protocol_version ? s->protocol_version : 4, "system", "describe", ranges ? 4 : 3, false);
    const ctype *text = ctype_scalar(CT_VARCHAR);
    cql_rows_col(&w, "cluster", text);
    cql_rows_col(&w, "partitioner", text);
    cql_rows_col(&w, "snitch", text);
    ctype *lt = NULL, *mt = NULL;
    if (ranges) {
        lt = ctype_new_collection(CT_LIST, ctype_ref(text), NULL, false);
        mt = ctype_new_collection(CT_MAP, ctype_ref(text), lt, false);
        cql_rows_col(&w, "range_ownership", mt);
    }
    put_text(&w, ctx->cfg.cluster_name ? ctx->cfg.cluster_name : "Test Cluster");
    put_text(&w, "Murmur3Partitioner");
    put_text(&w, "SimpleSnitch");
    if (ranges) {
        /* token (range end) -> [endpoint]; a map sorted by key text */
        cs_buf b;
        cs_buf_init(&b);
        char addr[80];
        snprintf(addr, sizeof addr, "/%s:7000", ctx->cfg.listen_address ? ctx->cfg.listen_address : "127.0.0.1");
        char (*keys)[24] = cs_calloc((size_t)ctx->n_tokens + 1, 24);
        int n = ctx->n_tokens;
        for (int i = 0; keys && i < n; i++) snprintf(keys[i], 24, "%lld", (long long)ctx->tokens[i]);
        for (int i = 1; keys && i < n; i++) {
            char tmp[24];
            memcpy(tmp, keys[i], 24);
            int j = i;
            while (j > 0 && strcmp(keys[j - 1], tmp) > 0) { memcpy(keys[j], keys[j - 1], 24); j--; }
            memcpy(keys[j], tmp, 24);
        }
        cs_buf_put_u32(&b, (uint32_t)(keys ? n : 0));
        for (int i = 0; keys && i < n; i++) {
            cs_buf_put_u32(&b, (uint32_t)strlen(keys[i]));
            cs_buf_put(&b, keys[i], strlen(keys[i]));
            cs_buf_put_u32(&b, (uint32_t)(4 + 4 + strlen(addr)));
            cs_buf_put_u32(&b, 1);
            cs_buf_put_u32(&b, (uint32_t)strlen(addr));
            cs_buf_put(&b, addr, strlen(addr));
        }
        cs_free(keys);
        cql_rows_value(&w, b.p, (int32_t)b.len);
        cs_buf_destroy(&b);
    }
    cql_rows_end(&w, NULL, -1);
    if (mt) ctype_unref(mt);
    return 0;
}

static bool is_system_for_schema(const char *name) { return sch__is_system_ks_name(name); }

int cql_exec_describe(cql_ctx *ctx, cql_session *s, cql_stmt *st, const cql_params *p,
                      cql_result *r, cs_error *e)
{
    sch_catalog *c = ctx->cat;
    const ast_describe *d = &st->u.describe;
    const char *use = s && s->keyspace[0] ? s->keyspace : NULL;
    elems l;
    memset(&l, 0, sizeof l);
    l.internals = d->with_internals;
    int rc = 0;
    const char *ks = d->name.ks;
    const char *name = d->name.name;
    switch (d->kind) {
    case DESC_CLUSTER:
        return describe_cluster(ctx, s, r);
    case DESC_KEYSPACES: {
        void **k = sorted_keyspaces(c);
        for (int i = 0; k && i < sch_keyspace_count(c); i++) add_keyspace(&l, k[i]);
        cs_free(k);
        break;
    }
    case DESC_TABLES: case DESC_TYPES: case DESC_FUNCTIONS: case DESC_AGGREGATES: {
        void **k = NULL;
        int nk = 0;
        if (use) {
            sch_keyspace *one = sch_keyspace_find(c, use);
            if (!one) { rc = cs_error_set(e, CS_ERR_INVALID, "'%s' not found in keyspaces", use); break; }
            k = cs_calloc(1, sizeof(void *));
            if (k) { k[0] = one; nk = 1; }
        } else {
            k = sorted_keyspaces(c);
            nk = sch_keyspace_count(c);
        }
        for (int i = 0; k && i < nk; i++) {
            sch_keyspace *kk = k[i];
            if (d->kind == DESC_TABLES) {
                int n;
                void **tb = sorted_tables(kk, &n);
                for (int j = 0; tb && j < n; j++) push(&l, kk->name, "table", ((sch_table *)tb[j])->name);
                cs_free(tb);
            } else if (d->kind == DESC_TYPES) {
                void **ty = sorted_types(kk);
                for (int j = 0; ty && j < kk->n_types; j++) push(&l, kk->name, "type", ((ctype *)ty[j])->udt_name);
                cs_free(ty);
            }
        }
        cs_free(k);
        break;
    }
    case DESC_SCHEMA: case DESC_FULL_SCHEMA: {
        l.with_stmt = true;
        void **k = sorted_keyspaces(c);
        for (int i = 0; k && i < sch_keyspace_count(c); i++) {
            sch_keyspace *kk = k[i];
            if (d->kind == DESC_SCHEMA && is_system_for_schema(kk->name)) continue;
            add_keyspace_all(&l, kk, false);
        }
        cs_free(k);
        break;
    }
    default: {
        l.with_stmt = true;
        /* element statements: resolve the keyspace */
        const char *kname_ = ks ? ks : use;
        if (d->kind == DESC_KEYSPACE && !ks) kname_ = name ? name : use;
        if (d->kind == DESC_GENERIC && !ks) {
            if (name && sch_keyspace_find(c, name)) {
                add_keyspace_all(&l, sch_keyspace_find(c, name), false);
                break;
            }
            kname_ = use ? use : name;
        }
        if (!kname_) {
            rc = cs_error_set(e, CS_ERR_INVALID, "No keyspace specified and no current keyspace");
            break;
        }
        sch_keyspace *k = sch_keyspace_find(c, kname_);
        if (!k) { rc = cs_error_set(e, CS_ERR_INVALID, "'%s' not found in keyspaces", kname_); break; }
        sch_table *t = name ? sch_table_find(c, k->name, name) : NULL;
        sch_index *ix = NULL;
        for (int i = 0; name && !ix && i < k->n_tables; i++)
            for (int j = 0; j < k->tables[i]->n_indexes; j++)
                if (strcmp(k->tables[i]->indexes[j]->name, name) == 0) ix = k->tables[i]->indexes[j];
        switch (d->kind) {
        case DESC_KEYSPACE:
            add_keyspace_all(&l, k, d->only);
            break;
        case DESC_TABLE:
            if (!t || t->is_view) { rc = cs_error_set(e, CS_ERR_INVALID, "Table '%s' not found in keyspace '%s'", name, k->name); break; }
            add_table(&l, t, false);
            break;
        case DESC_INDEX:
            if (!ix) { rc = cs_error_set(e, CS_ERR_INVALID, "Table for existing index '%s' not found in '%s'", name, k->name); break; }
            add_index(&l, ix);
            break;
        case DESC_MATERIALIZED_VIEW:
            if (!t || !t->is_view) { rc = cs_error_set(e, CS_ERR_INVALID, "Materialized view '%s' not found in '%s'", name, k->name); break; }
            add_table_only(&l, t);
            break;
        case DESC_TYPE: {
            int i = sch__ks_type_index(k, name ? name : "");
            if (i < 0) { rc = cs_error_set(e, CS_ERR_INVALID, "User defined type '%s' not found in '%s'", name, k->name); break; }
            add_type(&l, k, k->types[i]);
            break;
        }
        case DESC_FUNCTION:
            rc = cs_error_set(e, CS_ERR_INVALID, "User defined function '%s' not found in '%s'", name, k->name);
            break;
        case DESC_AGGREGATE:
            rc = cs_error_set(e, CS_ERR_INVALID, "User defined aggregate '%s' not found in '%s'", name, k->name);
            break;
        case DESC_GENERIC:
            if (t && !t->is_view) add_table(&l, t, false);
            else if (ix) add_index(&l, ix);
            else if (t) add_table_only(&l, t);
            else rc = cs_error_set(e, CS_ERR_INVALID, "'%s' not found in keyspace '%s'", name, k->name);
            break;
        default:
            rc = cs_error_set(e, CS_ERR_INVALID, "Unsupported DESCRIBE statement");
            break;
        }
        break;
    }
    }
    if (rc == 0) rc = emit(ctx, s, p, &l, r, e);
    elems_free(&l);
    return rc;
}
