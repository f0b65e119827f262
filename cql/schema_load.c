/*
 * schema_load.c: rebuild the user schema from the system_schema.* tables at
 * startup (after the commit log replay of those tables).  Owner: catalog.
 *
 * Order: keyspaces, types (in dependency order: repeated passes until no
 * more resolve), tables and views with their options, columns, dropped
 * columns, indexes, then view -> base links and storage opening.  Rows of
 * system keyspaces are skipped (compiled-in definitions win).  A row that
 * cannot be understood is logged and skipped, never fatal.
 */
#include <string.h>
#include <stdlib.h>

#include "cql/schema_int.h"
#include "cql/index.h"   /* index hook (issue 5) */
#include "common/alloc.h"
#include "common/log.h"

typedef struct srow {
    char ks[256];                /* partition key (keyspace name) */
    cs_buf store;                /* decoded clustering values */
    size_t off[4];
    int32_t len[4];
    const st_row_view *r;
} srow;

typedef int (*row_cb)(sch_catalog *c, srow *row, void *arg);

/* Full scan of a system_schema table, calling cb for every live row of a
 * non-system keyspace. */
static int scan_all(sch_catalog *c, sch_table *t, row_cb cb, void *arg)
{
    st_read_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.start_token = INT64_MIN;
    spec.end_token = INT64_MAX;
    spec.start_inclusive = true;
    st_scan *s = NULL;
    int rc = st_scan_open(t->st, &spec, &s);
    if (rc) return rc;
    srow row;
    memset(&row, 0, sizeof row);
    cs_buf_init(&row.store);
    st_partition_view pv;
    while ((rc = st_scan_next_partition(s, &pv)) == 1) {
        if (pv.pk_len >= sizeof row.ks) continue;
        memcpy(row.ks, pv.pk, pv.pk_len);
        row.ks[pv.pk_len] = 0;
        if (sch__is_system_ks_name(row.ks)) continue;
        st_row_view r;
        while ((rc = st_scan_next_row(s, &r)) == 1) {
            if (r.flags & ST_ROW_STATIC) continue;
            cs_buf_reset(&row.store);
            if (sch_clustering_decode(t, r.ck, r.ck_len, &row.store, row.off, row.len) != 0) {
                CS_WARN("system_schema.%s: undecodable clustering key in keyspace %s, row skipped",
                        t->name, row.ks);
                continue;
            }
            row.r = &r;
            rc = cb(c, &row, arg);
            if (rc) break;
        }
        if (rc < 0) break;
    }
    cs_buf_destroy(&row.store);
    st_scan_close(s);
    return rc < 0 ? rc : 0;
}

static char *row_ck(srow *row, int i)
{
    if (row->len[i] < 0) return NULL;
    if (row->len[i] == 0) return cs_strdup("");
    return cs_strndup((const char *)row->store.p + row->off[i], (size_t)row->len[i]);
}

static const st_cell *row_cell(srow *row, const char *col)
{
    uint32_t id = sch__col_id(col);
    for (int i = 0; i < row->r->n_cells; i++)
        if (row->r->cells[i].col == id && row->r->cells[i].path_len == 0) return &row->r->cells[i];
    return NULL;
}

static char *row_text(srow *row, const char *col)
{
    const st_cell *ce = row_cell(row, col);
    if (!ce) return NULL;
    return ce->val_len ? cs_strndup((const char *)ce->val, ce->val_len) : cs_strdup("");
}

static int row_int(srow *row, const char *col, int dflt)
{
    const st_cell *ce = row_cell(row, col);
    return ce && ce->val_len == 4 ? (int)(int32_t)cs_be32(ce->val) : dflt;
}

static double row_double(srow *row, const char *col, double dflt)
{
    const st_cell *ce = row_cell(row, col);
    if (!ce || ce->val_len != 8) return dflt;
    uint64_t u = cs_be64(ce->val);
    double d;
    memcpy(&d, &u, 8);
    return d;
}

static bool row_bool(srow *row, const char *col, bool dflt)
{
    const st_cell *ce = row_cell(row, col);
    return ce && ce->val_len == 1 ? ce->val[0] != 0 : dflt;
}

static void row_map(srow *row, const char *col, char ***k, char ***v, int *n)
{
    const st_cell *ce = row_cell(row, col);
    if (!ce) return;
    char **nk, **nv;
    int nn;
    if (sch__get_text_map(ce->val, (int32_t)ce->val_len, &nk, &nv, &nn) == 0) {
        sch__kv_free(*k, *v, *n);
        *k = nk; *v = nv; *n = nn;
    }
}

/* ---------------------------------------------------------------- keyspaces */

static int load_keyspace(sch_catalog *c, srow *row, void *arg)
{
    if (sch_keyspace_find(c, row->ks)) return 0;
    sch_keyspace *k = sch__keyspace_new(row->ks);
    if (!k) return CS_ENOMEM;
    k->durable_writes = row_bool(row, "durable_writes", true);
    row_map(row, "replication", &k->repl_k, &k->repl_v, &k->n_repl);
    int rc = sch__keyspace_add(c, k);
    if (rc) sch__keyspace_free(k);
    return rc;
}

/* ---------------------------------------------------------------- types */

typedef struct pending_type {
    char *ks, *name;
    char **fnames; int n_fnames;
    char **ftypes; int n_ftypes;
} pending_type;

typedef struct pending_types { pending_type *v; int n; } pending_types;

static int collect_type(sch_catalog *c, srow *row, void *arg)
{
    pending_types *pt = arg;
    if (!sch_keyspace_find(c, row->ks)) return 0;
    pending_type *nv = cs_realloc(pt->v, sizeof(*nv) * (size_t)(pt->n + 1));
    if (!nv) return CS_ENOMEM;
    pt->v = nv;
    pending_type *p = &pt->v[pt->n++];
    memset(p, 0, sizeof *p);
    p->ks = cs_strdup(row->ks);
    p->name = row_ck(row, 0);
    const st_cell *ce = row_cell(row, "field_names");
    if (ce) sch__get_text_list(ce->val, (int32_t)ce->val_len, &p->fnames, &p->n_fnames);
    ce = row_cell(row, "field_types");
    if (ce) sch__get_text_list(ce->val, (int32_t)ce->val_len, &p->ftypes, &p->n_ftypes);
    return 0;
}

static void free_list(char **l, int n)
{
    for (int i = 0; i < n; i++) cs_free(l[i]);
    cs_free(l);
}

/* Resolve pending types in passes (a UDT may use another UDT). */
static void build_types(sch_catalog *c, pending_types *pt)
{
    bool progress = true;
    int left = pt->n;
    while (progress && left > 0) {
        progress = false;
        for (int i = 0; i < pt->n; i++) {
            pending_type *p = &pt->v[i];
            if (!p->name) continue;
            sch_keyspace *k = sch_keyspace_find(c, p->ks);
            if (!k || p->n_fnames != p->n_ftypes) { cs_free(p->name); p->name = NULL; left--; continue; }
            ctype **ft = cs_calloc((size_t)p->n_ftypes + 1, sizeof(ctype *));
            bool ok = ft != NULL;
            for (int j = 0; ok && j < p->n_ftypes; j++) {
                cs_error e;
                cs_error_init(&e);
                ft[j] = ctype_parse(p->ftypes[j], p->ks, sch__udt_lookup_cb, c, &e);
                if (!ft[j]) ok = false;
            }
            if (ok) {
                /* ctype_new_udt takes the field type refs */
                ctype *u = ctype_new_udt(p->ks, p->name, p->fnames, ft, p->n_fnames, false);
                for (int j = 0; j < p->n_ftypes; j++) ft[j] = NULL;
                if (u) sch__ks_add_type(k, u);
                cs_free(p->name);
                p->name = NULL;
                left--;
                progress = true;
            }
            if (ft) {
                for (int j = 0; j < p->n_ftypes; j++) if (ft[j]) ctype_unref(ft[j]);
                cs_free(ft);
            }
        }
    }
    for (int i = 0; i < pt->n; i++) {
        pending_type *p = &pt->v[i];
        if (p->name) CS_WARN("user type %s.%s could not be resolved; skipped", p->ks, p->name);
        cs_free(p->ks);
        cs_free(p->name);
        free_list(p->fnames, p->n_fnames);
        free_list(p->ftypes, p->n_ftypes);
    }
    cs_free(pt->v);
}

/* ---------------------------------------------------------------- tables and views */

static void load_params(sch_table *t, srow *row)
{
    t->bloom_fp_chance = row_double(row, "bloom_filter_fp_chance", t->bloom_fp_chance);
    char *s = row_text(row, "comment");
    if (s) { cs_free(t->comment); t->comment = s; }
    t->crc_check_chance = row_double(row, "crc_check_chance", t->crc_check_chance);
    t->default_ttl_s = row_int(row, "default_time_to_live", t->default_ttl_s);
    t->gc_grace_s = row_int(row, "gc_grace_seconds", t->gc_grace_s);
    t->max_index_interval = row_int(row, "max_index_interval", t->max_index_interval);
    t->min_index_interval = row_int(row, "min_index_interval", t->min_index_interval);
    t->memtable_flush_period_ms = row_int(row, "memtable_flush_period_in_ms", t->memtable_flush_period_ms);
    if ((s = row_text(row, "speculative_retry"))) { cs_free(t->speculative_retry); t->speculative_retry = s; }
    if ((s = row_text(row, "additional_write_policy"))) {
        cs_free(t->additional_write_policy);
        t->additional_write_policy = s;
    }
    if ((s = row_text(row, "read_repair"))) { cs_free(t->read_repair); t->read_repair = s; }
    t->cdc = row_bool(row, "cdc", false);
    row_map(row, "caching", &t->caching_k, &t->caching_v, &t->n_caching);
    row_map(row, "compaction", &t->compaction_k, &t->compaction_v, &t->n_compaction);
    row_map(row, "compression", &t->compression_k, &t->compression_v, &t->n_compression);
    const st_cell *ce = row_cell(row, "id");
    if (ce && ce->val_len == 16) memcpy(t->id, ce->val, 16);
}

/* COMPACT STORAGE from system_schema.tables.flags (TableMetadata.Flag): a
 * "dense" table is dense compact (compound too with 2+ clustering
 * columns), one neither dense nor compound a static compact table (the
 * Python driver reads them so too); a CQL table is compound. */
static sch_compact table_compact(srow *row)
{
    const st_cell *fl = row_cell(row, "flags");
    bool compound = false, dense = false;
    if (fl && fl->val_len >= 4) {
        cs_rd r;
        cs_rd_init(&r, fl->val, fl->val_len);
        int32_t n = (int32_t)cs_rd_u32(&r);
        for (int32_t i = 0; i < n && !r.err; i++) {
            const uint8_t *p;
            int32_t len = cs_rd_bytes(&r, &p);
            if (len == 8 && memcmp(p, "compound", 8) == 0) compound = true;
            if (len == 5 && memcmp(p, "dense", 5) == 0) dense = true;
        }
    }
    return dense ? SCH_COMPACT_DENSE : compound ? SCH_COMPACT_NONE : SCH_COMPACT_STATIC;
}

static int load_table(sch_catalog *c, srow *row, void *arg)
{
    bool is_view = arg != NULL;
    sch_keyspace *k = sch_keyspace_find(c, row->ks);
    char *name = row_ck(row, 0);
    if (!k || !name) { cs_free(name); return 0; }
    if (sch_table_find(c, row->ks, name)) { cs_free(name); return 0; }
    sch_table *t = sch__table_new(k, name);
    cs_free(name);
    if (!t) return CS_ENOMEM;
    load_params(t, row);
    if (!is_view)
        t->compact = table_compact(row);
    if (is_view) {
        t->is_view = true;
        t->view_where = row_text(row, "where_clause");
        t->view_include_all = row_bool(row, "include_all_columns", false);
        /* base resolved later by name: remember it in a temporary */
        char *base = row_text(row, "base_table_name");
        if (base) {
            t->view_base = (sch_table *)base;   /* replaced in link_views() */
        }
    }
    int rc = sch__ks_add_table(k, t);
    if (rc) { if (is_view) cs_free(t->view_base); t->view_base = NULL; sch__table_free(t); }
    return rc;
}

static int load_column(sch_catalog *c, srow *row, void *arg)
{
    char *tname = row_ck(row, 0), *cname = row_ck(row, 1);
    sch_table *t = tname ? sch_table_find(c, row->ks, tname) : NULL;
    char *type = row_text(row, "type"), *kind = row_text(row, "kind"), *order = row_text(row, "clustering_order");
    int rc = 0;
    if (t && cname && type && kind) {
        cs_error e;
        cs_error_init(&e);
        /* "empty": a dense compact table's hidden value, a type no CQL statement names */
        ctype *ty = strcmp(type, "empty") == 0 ? (ctype *)ctype_scalar(CT_EMPTY)
                                               : ctype_parse(type, row->ks, sch__udt_lookup_cb, c, &e);
        if (!ty) {
            CS_WARN("column %s.%s.%s: bad type '%s' (%s); skipped", row->ks, tname, cname, type, e.msg);
        } else {
            sch_col_kind ck = strcmp(kind, "partition_key") == 0 ? COL_PARTITION_KEY
                            : strcmp(kind, "clustering") == 0 ? COL_CLUSTERING
                            : strcmp(kind, "static") == 0 ? COL_STATIC : COL_REGULAR;
            rc = sch__table_add_col(t, cname, ty, ck, row_int(row, "position", -1),
                                    order && strcmp(order, "desc") == 0);
        }
    }
    cs_free(tname); cs_free(cname); cs_free(type); cs_free(kind); cs_free(order);
    return rc;
}

static int load_dropped(sch_catalog *c, srow *row, void *arg)
{
    char *tname = row_ck(row, 0), *cname = row_ck(row, 1);
    sch_table *t = tname ? sch_table_find(c, row->ks, tname) : NULL;
    char *type = row_text(row, "type");
    const st_cell *ce = row_cell(row, "dropped_time");
    int rc = 0;
    if (t && cname && type) {
        cs_error e;
        cs_error_init(&e);
        ctype *ty = ctype_parse(type, row->ks, sch__udt_lookup_cb, c, &e);
        sch_dropped_col *nd = ty ? cs_realloc(t->dropped, sizeof(*nd) * (size_t)(t->n_dropped + 1)) : NULL;
        if (nd) {
            t->dropped = nd;
            nd[t->n_dropped].name = cname;
            nd[t->n_dropped].type = ty;
            nd[t->n_dropped].dropped_us = ce && ce->val_len == 8 ? (int64_t)cs_be64(ce->val) * 1000 : 0;
            t->n_dropped++;
            cname = NULL;
        } else if (ty) {
            ctype_unref(ty);
            rc = CS_ENOMEM;
        }
    }
    cs_free(tname); cs_free(cname); cs_free(type);
    return rc;
}

static int load_index(sch_catalog *c, srow *row, void *arg)
{
    char *tname = row_ck(row, 0), *iname = row_ck(row, 1);
    sch_table *t = tname ? sch_table_find(c, row->ks, tname) : NULL;
    cs_free(tname);
    if (!t || !iname) { cs_free(iname); return 0; }
    sch_index *ix = cs_calloc(1, sizeof *ix);
    sch_index **ni = ix ? cs_realloc(t->indexes, sizeof(*ni) * (size_t)(t->n_indexes + 1)) : NULL;
    if (!ni) { cs_free(ix); cs_free(iname); return CS_ENOMEM; }
    t->indexes = ni;
    ix->name = iname;
    ix->kind = row_text(row, "kind");
    if (!ix->kind) ix->kind = cs_strdup("COMPOSITES");
    row_map(row, "options", &ix->opt_keys, &ix->opt_values, &ix->n_opts);
    const char *tg = sch__kv_get(ix->opt_keys, ix->opt_values, ix->n_opts, "target");
    ix->target = cs_strdup(tg ? tg : "");
    const char *cl = sch__kv_get(ix->opt_keys, ix->opt_values, ix->n_opts, "class_name");
    ix->class_name = cl ? cs_strdup(cl) : NULL;
    ix->table = t;
    t->indexes[t->n_indexes++] = ix;
    return 0;
}

/* Finish tables, link views to bases, open storage. */
static int finish_tables(sch_catalog *c)
{
    for (int i = 0; i < c->n_ks; i++) {
        sch_keyspace *k = c->ks[i];
        if (k->is_system) continue;
        for (int j = 0; j < k->n_tables; j++) {
            sch_table *t = k->tables[j];
            if (t->is_view && t->view_base) {
                char *base = (char *)t->view_base;
                t->view_base = sch_table_find(c, k->name, base);
                cs_free(base);
                if (t->view_base) {
                    sch_table **nv = cs_realloc(t->view_base->views,
                                                sizeof(*nv) * (size_t)(t->view_base->n_views + 1));
                    if (!nv) return CS_ENOMEM;
                    t->view_base->views = nv;
                    nv[t->view_base->n_views++] = t;
                }
            }
        }
        for (int j = 0; j < k->n_tables; j++) {
            sch_table *t = k->tables[j];
            cs_error e;
            cs_error_init(&e);
            if (sch__table_finish(t, &e) != 0 || t->n_pk == 0) {
                CS_WARN("table %s.%s has an invalid definition; not loaded", k->name, t->name);
                sch__ks_remove_table(k, t);
                sch__table_free(t);
                j--;
                continue;
            }
            st_table_opts o;
            sch__table_st_opts(t, &o);
            int rc = st_table_open(c->eng, t->id, k->name, t->name, &o, &t->st);
            if (rc == 0) rc = cql_index_open_table(c->eng, t);   /* index hook (issue 5): before replay */
            if (rc) {
                CS_ERROR("cannot open storage of %s.%s: %s", k->name, t->name, cs_strerror(rc));
                return rc;
            }
        }
    }
    return 0;
}

int sch__load_user_schema(sch_catalog *c)
{
    int rc = scan_all(c, c->ss[SS_KEYSPACES], load_keyspace, NULL);
    pending_types pt = { NULL, 0 };
    if (rc == 0) rc = scan_all(c, c->ss[SS_TYPES], collect_type, &pt);
    build_types(c, &pt);
    if (rc == 0) rc = scan_all(c, c->ss[SS_TABLES], load_table, NULL);
    if (rc == 0) rc = scan_all(c, c->ss[SS_VIEWS], load_table, (void *)1);
    if (rc == 0) rc = scan_all(c, c->ss[SS_COLUMNS], load_column, NULL);
    if (rc == 0) rc = scan_all(c, c->ss[SS_DROPPED_COLUMNS], load_dropped, NULL);
    if (rc == 0) rc = scan_all(c, c->ss[SS_INDEXES], load_index, NULL);
    if (rc == 0) rc = finish_tables(c);
    return rc;
}
