/*
 * exec_ddl_iv.c: CREATE/DROP INDEX and CREATE/ALTER/DROP MATERIALIZED VIEW
 * (Cassandra 4.1 CreateIndexStatement, DropIndexStatement,
 * CreateViewStatement, AlterViewStatement, DropViewStatement wording).
 * Owner: catalog.
 *
 * A view gets its own storage table.  Index and view maintenance, builds
 * and index queries: cql/index*.c (docs/indexes.md).  Builds run in the
 * background (index_build.c): registered and persisted before the schema
 * row is written, a first slice inline once the statement succeeded.
 */
#include <string.h>
#include <stdio.h>
#include <ctype.h>

#include "cql/ddl_int.h"
#include "cql/index.h"   /* index hook (issue 5) */
#include "common/alloc.h"

static bool index_name_taken(sch_keyspace *k, const char *name, sch_index **found)
{
    for (int j = 0; j < k->n_tables; j++)
        for (int x = 0; x < k->tables[j]->n_indexes; x++)
            if (strcmp(k->tables[j]->indexes[x]->name, name) == 0) {
                if (found) *found = k->tables[j]->indexes[x];
                return true;
            }
    return false;
}

static void quoted(const char *name, char *out, size_t cap)
{
    cs_buf b;
    cs_buf_init(&b);
    cql_quote_ident(name, &b);
    snprintf(out, cap, "%.*s", (int)b.len, b.p ? (const char *)b.p : name);
    cs_buf_destroy(&b);
}

int ddl_create_index(cql_ctx *ctx, cql_session *s, cql_stmt *st, cql_result *r, cs_error *e)
{
    sch_catalog *c = ctx->cat;
    const ast_create_index *ci = &st->u.create_index;
    const char *ks = ddl_keyspace_of(&ci->table, s, e);
    if (!ks) return CS_EUSER;
    if (ddl_check_modifiable(c, ks, e)) return CS_EUSER;
    if (cql__guard_flag(ctx, s, ctx->cfg.guard.secondary_indexes, "secondary_indexes", "Creating secondary indexes", e))
        return CS_EUSER;   /* CreateIndexStatement.apply, first */
    sch_keyspace *k = sch_keyspace_find(c, ks);
    if (!k) return cs_error_set(e, CS_ERR_INVALID, "Keyspace '%s' doesn't exist", ks);
    sch_table *t = sch_table_find(c, ks, ci->table.name);
    if (!t) return cs_error_set(e, CS_ERR_INVALID, "Table '%s' doesn't exist", ci->table.name);
    if (ci->name && index_name_taken(k, ci->name, NULL)) {
        if (ci->if_not_exists) { cql_result_void(r); return 0; }
        return cs_error_set(e, CS_ERR_INVALID, "Index '%s' already exists", ci->name);
    }
    if (t->is_counter) return cs_error_set(e, CS_ERR_INVALID, "Secondary indexes on counter tables aren't supported");
    if (t->is_view) return cs_error_set(e, CS_ERR_INVALID, "Secondary indexes on materialized views aren't supported");
    if (cql__guard_max_on(ctx, s, CQL_GUARD_SECONDARY_INDEXES_PER_TABLE)) {
        char what[600];
        if (ci->name && *ci->name) snprintf(what, sizeof what, "%s on table %s", ci->name, t->name);
        else snprintf(what, sizeof what, "on table %s", t->name);
        if (cql__guard_max(ctx, s, r, CQL_GUARD_SECONDARY_INDEXES_PER_TABLE, t->n_indexes + 1, what, e)) return CS_EUSER;
    }
    const char *cls = ci->using_class;
    char clsbuf[256] = "";
    if (cls) {
        if (strstr(cls, "SASIIndex")) {
            if (!ctx->cfg.sasi_indexes_enabled)   /* 4.1's default */
                return cs_error_set(e, CS_ERR_INVALID, "SASI indexes are disabled. Enable in cassandra.yaml to use.");
            return cs_error_set(e, CS_ERR_INVALID, "SASI indexes are not supported by cassette (sasi_indexes_enabled is "
                                "set, but there is no SASIIndex here): use CREATE INDEX, a materialized view or "
                                "ALLOW FILTERING");
        }
        snprintf(clsbuf, sizeof clsbuf, "%s", cls);
        return cs_error_set(e, CS_ERR_CONFIG, "Unable to find custom indexer class '%s'", clsbuf);
    }
    if (!ci->target_column || !*ci->target_column)
        return cs_error_set(e, CS_ERR_INVALID, "Only CUSTOM indexes can be created without specifying a target column");
    sch_column *col = sch_column_find(t, ci->target_column);
    if (!col) return sch_undefined_column(t, ci->target_column, e);   /* IndexTarget.Raw.prepare */
    const ctype *ty = col->type;
    const char *kind = ci->target_kind && *ci->target_kind ? ci->target_kind : "";
    bool coll = ctype_is_collection(ty);
    if (!*kind) kind = coll && !ty->frozen ? "values" : "simple";
    char qn[300];
    quoted(col->name, qn, sizeof qn);
    if (ty->kind == CT_DURATION) return cs_error_set(e, CS_ERR_INVALID, "Secondary indexes are not supported on duration columns");
    if (t->compact != SCH_COMPACT_NONE && (col->kind == COL_PARTITION_KEY || col->kind == COL_CLUSTERING))
        return cs_error_set(e, CS_ERR_INVALID, "Secondary indexes are not supported on PRIMARY KEY columns in COMPACT STORAGE tables");
    if (t->compact != SCH_COMPACT_NONE && col == t->compact_value)
        return cs_error_set(e, CS_ERR_INVALID, "Secondary indexes are not supported on compact value column of COMPACT STORAGE tables");
    if (col->kind == COL_PARTITION_KEY && t->n_pk == 1)
        return cs_error_set(e, CS_ERR_INVALID, "Cannot create secondary index on the only partition key column %s", qn);
    if (coll && ty->frozen && strcmp(kind, "full") != 0)
        return cs_error_set(e, CS_ERR_INVALID, "Cannot create %s() index on frozen column %s. Frozen collections are immutable and must be fully "
                            "indexed by using the 'full(%s)' modifier", kind, qn, qn);
    if (!(coll && ty->frozen) && strcmp(kind, "full") == 0)
        return cs_error_set(e, CS_ERR_INVALID, "full() indexes can only be created on frozen collections");
    if (!coll && strcmp(kind, "simple") != 0)
        return cs_error_set(e, CS_ERR_INVALID, "Cannot create %s() index on %s. Non-collection columns only support simple indexes", kind, qn);
    if (!(ty->kind == CT_MAP && !ty->frozen) && (strcmp(kind, "keys") == 0 || strcmp(kind, "entries") == 0))
        return cs_error_set(e, CS_ERR_INVALID, "Cannot create index on %s of column %s with non-map type", kind, qn);
    if (ty->kind == CT_UDT && !ty->frozen)
        return cs_error_set(e, CS_ERR_INVALID, "Cannot create index on non-frozen UDT column %s", qn);
    char target[320];
    if (strcmp(kind, "simple") == 0) snprintf(target, sizeof target, "%s", qn);
    else snprintf(target, sizeof target, "%s(%s)", kind, qn);
    for (int x = 0; x < t->n_indexes; x++)
        if (strcmp(t->indexes[x]->target, target) == 0 && !t->indexes[x]->class_name) {
            if (ci->if_not_exists) { cql_result_void(r); return 0; }
            return cs_error_set(e, CS_ERR_INVALID, "Index %s is a duplicate of existing index %s",
                                ci->name ? ci->name : target, t->indexes[x]->name);
        }
    if (ci->props.n > 0)
        return cs_error_set(e, CS_ERR_INVALID, "Cannot specify options for a non-CUSTOM index");
    /* name: given, or <table>_<column>_idx with non-word characters removed, made unique */
    char name[300];
    if (ci->name) {
        snprintf(name, sizeof name, "%s", ci->name);
    } else {
        char base[200];
        size_t n = 0;
        char raw[300];
        snprintf(raw, sizeof raw, "%s_%s_idx", t->name, col->name);
        for (const char *p = raw; *p && n + 1 < sizeof base; p++)
            if (isalnum((unsigned char)*p) || *p == '_') base[n++] = *p;
        base[n] = 0;
        snprintf(name, sizeof name, "%s", base);
        for (int i = 1; index_name_taken(k, name, NULL); i++) snprintf(name, sizeof name, "%s_%d", base, i);
    }
    for (const char *p = name; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_')
            return cs_error_set(e, CS_ERR_CONFIG, "Illegal index name %s", name);
    sch_index *ix = cs_calloc(1, sizeof *ix);
    sch_index **ni = ix ? cs_realloc(t->indexes, sizeof(*ni) * (size_t)(t->n_indexes + 1)) : NULL;
    if (!ni) { cs_free(ix); return cs_error_set(e, CS_ERR_SERVER, "out of memory"); }
    t->indexes = ni;
    ix->name = cs_strdup(name);
    ix->kind = cs_strdup("COMPOSITES");
    ix->target = cs_strdup(target);
    ix->table = t;
    sch__kv_set(&ix->opt_keys, &ix->opt_values, &ix->n_opts, "target", target);
    if (!ix->name || !ix->kind || !ix->target || ix->n_opts != 1) {
        cs_free(ix->name); cs_free(ix->kind); cs_free(ix->target);
        sch__kv_free(ix->opt_keys, ix->opt_values, ix->n_opts);
        cs_free(ix);
        return cs_error_set(e, CS_ERR_SERVER, "out of memory");
    }
    t->indexes[t->n_indexes++] = ix;
    /* index hook (issue 5): storage, and the background build registered
     * (persisted) BEFORE the schema row is written; resumed after a crash */
    int rc = cql_index_create(ctx, ix, e);
    if (rc) {
        cql_index_drop(ctx, ix);
        t->n_indexes--;
        cs_free(ix->name); cs_free(ix->kind); cs_free(ix->target);
        sch__kv_free(ix->opt_keys, ix->opt_values, ix->n_opts);
        cs_free(ix);
        return CS_EUSER;
    }
    rc = ddl_write_table(c, t, e);
    if (rc) return rc;
    sch__new_version(c);
    ddl_schema_change(r, "UPDATED", "TABLE", ks, t->name);
    cql_index_build_inline(ctx);   /* small tables: built before the reply */
    return 0;
}

int ddl_drop_index(cql_ctx *ctx, cql_session *s, cql_stmt *st, cql_result *r, cs_error *e)
{
    sch_catalog *c = ctx->cat;
    const ast_drop *d = &st->u.drop;
    const char *ks = ddl_keyspace_of(&d->name, s, e);
    if (!ks) return CS_EUSER;
    if (ddl_check_modifiable(c, ks, e)) return CS_EUSER;
    sch_keyspace *k = sch_keyspace_find(c, ks);
    sch_index *ix = NULL;
    if (!k || !index_name_taken(k, d->name.name, &ix)) {
        if (d->if_exists) { cql_result_void(r); return 0; }
        return cs_error_set(e, CS_ERR_INVALID, "Index '%s.%s' doesn't exist'", ks, d->name.name);
    }
    sch_table *t = ix->table;
    for (int x = 0; x < t->n_indexes; x++) {
        if (t->indexes[x] != ix) continue;
        memmove(&t->indexes[x], &t->indexes[x + 1], sizeof(*t->indexes) * (size_t)(t->n_indexes - x - 1));
        t->n_indexes--;
        break;
    }
    cql_index_drop(ctx, ix);   /* index hook (issue 5): drop the hidden index table */
    cs_free(ix->name); cs_free(ix->kind); cs_free(ix->target); cs_free(ix->class_name);
    sch__kv_free(ix->opt_keys, ix->opt_values, ix->n_opts);
    cs_free(ix);
    int rc = ddl_write_table(c, t, e);
    if (rc) return rc;
    sch__new_version(c);
    ddl_schema_change(r, "UPDATED", "TABLE", ks, t->name);
    return 0;
}

/* ---------------------------------------------------------------- materialized views */

static bool str_in(char **l, int n, const char *s)
{
    for (int i = 0; i < n; i++) if (strcmp(l[i], s) == 0) return true;
    return false;
}

/* Is column `name` restricted by some relation of the WHERE clause? */
static bool restricted(const ast_select *sel, const char *name)
{
    for (int i = 0; i < sel->n_where; i++)
        for (int j = 0; j < sel->where[i]->n_columns; j++)
            if (strcmp(sel->where[i]->columns[j], name) == 0) return true;
    return false;
}

int ddl_create_view(cql_ctx *ctx, cql_session *s, cql_stmt *st, cql_result *r, cs_error *e)
{
    sch_catalog *c = ctx->cat;
    const ast_create_view *cv = &st->u.create_view;
    if (!ctx->cfg.materialized_views_enabled)
        return cs_error_set(e, CS_ERR_INVALID, "Materialized views are disabled. Enable in cassandra.yaml to use.");
    const char *ks = ddl_keyspace_of(&cv->view, s, e);
    if (!ks) return CS_EUSER;
    if (cv->base.ks && strcmp(cv->base.ks, ks) != 0)
        return cs_error_set(e, CS_ERR_INVALID, "Cannot create a materialized view on a table in a different keyspace");
    if (ddl_check_modifiable(c, ks, e)) return CS_EUSER;
    sch_keyspace *k = sch_keyspace_find(c, ks);
    if (!k) return cs_error_set(e, CS_ERR_INVALID, "Keyspace '%s' doesn't exist", ks);
    sch_table *base = sch_table_find(c, ks, cv->base.name);
    if (!base) return cs_error_set(e, CS_ERR_INVALID, "Base table '%s' doesn't exist", cv->base.name);
    sch_table *ex = sch_table_find(c, ks, cv->view.name);
    if (ex && !ex->is_view)
        return cs_error_set(e, CS_ERR_INVALID, "Cannot create materialized view '%s' - a table with the same name already exists", cv->view.name);
    if (ex) {
        if (cv->if_not_exists) { cql_result_void(r); return 0; }
        cs_error_set(e, CS_ERR_ALREADY_EXISTS, "Cannot add already existing table \"%s\" to keyspace \"%s\"", cv->view.name, ks);
        snprintf(e->keyspace, sizeof e->keyspace, "%s", ks);
        snprintf(e->table, sizeof e->table, "%s", cv->view.name);
        return CS_EUSER;
    }
    if (base->is_counter) return cs_error_set(e, CS_ERR_INVALID, "Materialized views are not supported on counter tables");
    if (base->is_view) return cs_error_set(e, CS_ERR_INVALID, "Materialized views cannot be created against other materialized views");
    if (cql__guard_table_props(ctx, s, r, &cv->props, e)) return CS_EUSER;   /* CreateViewStatement: properties, then views */
    if (cql__guard_max_on(ctx, s, CQL_GUARD_MATERIALIZED_VIEWS_PER_TABLE)) {
        char what[600];
        snprintf(what, sizeof what, "%s on table %s", cv->view.name, base->name);
        if (cql__guard_max(ctx, s, r, CQL_GUARD_MATERIALIZED_VIEWS_PER_TABLE, base->n_views + 1, what, e)) return CS_EUSER;
    }
    const ast_select *sel = cv->select;
    if (!sel) return cs_error_set(e, CS_ERR_INVALID, "Missing SELECT in materialized view definition");
    /* selected columns */
    for (int i = 0; !sel->star && i < sel->n_sels; i++) {
        const ast_selector *x = sel->sels[i];
        if (x->alias) return cs_error_set(e, CS_ERR_INVALID, "Cannot use aliases when defining a materialized view (got %s)", x->text ? x->text : "");
        if (x->kind != SEL_COLUMN)
            return cs_error_set(e, CS_ERR_INVALID, "Can only select columns by name when defining a materialized view (got %s)", x->text ? x->text : "");
        sch_column *bc = sch_column_find(base, x->column);
        if (!bc) return cs_error_set(e, CS_ERR_INVALID, "Undefined column name %s in table %s.%s", x->column, ks, base->name);
        if (bc->kind == COL_STATIC)
            return cs_error_set(e, CS_ERR_INVALID, "Cannot include static column '%s' in materialized view '%s'", x->column, cv->view.name);
    }
    if (cv->n_pk == 0) return cs_error_set(e, CS_ERR_INVALID, "Must provide at least one partition key column for materialized view '%s'", cv->view.name);
    int nk = cv->n_pk + cv->n_ck, non_pk = 0;
    for (int i = 0; i < nk; i++) {
        const char *n = i < cv->n_pk ? cv->pk[i] : cv->ck[i - cv->n_pk];
        sch_column *bc = sch_column_find(base, n);
        if (!bc) return cs_error_set(e, CS_ERR_INVALID, "Unknown column '%s' referenced in PRIMARY KEY for materialized view '%s'", n, cv->view.name);
        for (int j = 0; j < i; j++) {
            const char *o = j < cv->n_pk ? cv->pk[j] : cv->ck[j - cv->n_pk];
            if (strcmp(o, n) == 0) return cs_error_set(e, CS_ERR_INVALID, "Duplicate column '%s' in PRIMARY KEY clause for materialized view '%s'", n, cv->view.name);
        }
        if (bc->kind == COL_STATIC)
            return cs_error_set(e, CS_ERR_INVALID, "Cannot include static column '%s' in materialized view '%s'", n, cv->view.name);
        if (bc->kind == COL_REGULAR) non_pk++;
    }
    cs_buf miss;
    cs_buf_init(&miss);
    for (int i = 0; i < base->n_pk + base->n_ck; i++) {
        const char *n = i < base->n_pk ? base->pk[i]->name : base->ck[i - base->n_pk]->name;
        if (!str_in(cv->pk, cv->n_pk, n) && !str_in(cv->ck, cv->n_ck, n)) {
            if (miss.len) sch__puts(&miss, ", ");
            sch__puts(&miss, n);
        }
    }
    if (miss.len) {
        int rc = cs_error_set(e, CS_ERR_INVALID, "Cannot create materialized view '%s' without primary key columns %s from base table '%s'",
                              cv->view.name, sch__bufstr(&miss) ? (char *)miss.p : "", base->name);
        cs_buf_destroy(&miss);
        return rc;
    }
    if (non_pk > 1) {
        for (int i = 0; i < nk; i++) {
            const char *n = i < cv->n_pk ? cv->pk[i] : cv->ck[i - cv->n_pk];
            if (sch_column_find(base, n)->kind != COL_REGULAR) continue;
            if (miss.len) sch__puts(&miss, ", ");
            sch__puts(&miss, n);
        }
        int rc = cs_error_set(e, CS_ERR_INVALID, "Cannot include more than one non-primary key column in materialized view primary key (got %s)",
                              sch__bufstr(&miss) ? (char *)miss.p : "");
        cs_buf_destroy(&miss);
        return rc;
    }
    for (int i = 0; i < sel->n_where; i++) {
        if (sel->where[i]->kind == REL_TOKEN) {
            cs_buf_destroy(&miss);
            return cs_error_set(e, CS_ERR_INVALID, "Cannot use token relation when defining a materialized view");
        }
    }
    for (int i = 0; i < sel->n_where; i++) {
        const ast_relation *rel = sel->where[i];
        for (int j = 0; j < rel->n_columns; j++) {
            const char *n = rel->columns[j];
            if (str_in(cv->pk, cv->n_pk, n) || str_in(cv->ck, cv->n_ck, n)) continue;
            if (rel->op == OP_IS_NOT_NULL) continue;
            if (miss.len) sch__puts(&miss, ",");
            sch__printf(&miss, "%s", n);
        }
    }
    if (miss.len) {
        int rc = cs_error_set(e, CS_ERR_INVALID, "Non-primary key columns can only be restricted with 'IS NOT NULL' (got: %s restricted illegally)",
                              sch__bufstr(&miss) ? (char *)miss.p : "");
        cs_buf_destroy(&miss);
        return rc;
    }
    for (int i = 0; i < nk; i++) {
        const char *n = i < cv->n_pk ? cv->pk[i] : cv->ck[i - cv->n_pk];
        if (!restricted(sel, n)) {
            sch__puts(&miss, miss.len ? ", " : "");
            sch__puts(&miss, n);
        }
    }
    if (miss.len) {
        int rc = cs_error_set(e, CS_ERR_INVALID, "Primary key columns %s must be restricted with 'IS NOT NULL' or otherwise",
                              sch__bufstr(&miss) ? (char *)miss.p : "");
        cs_buf_destroy(&miss);
        return rc;
    }
    cs_buf_destroy(&miss);
    for (int i = 0; i < cv->n_clustering_order; i++)
        if (i >= cv->n_ck || strcmp(cv->clustering_order[i].column, cv->ck[i]) != 0)
            return cs_error_set(e, CS_ERR_INVALID, "Clustering key columns must exactly match columns in CLUSTERING ORDER BY directive");
    /* build the view */
    sch_table *v = sch__table_new(k, cv->view.name);
    if (!v) return cs_error_set(e, CS_ERR_SERVER, "out of memory");
    cs_uuid id;
    cs_uuid_timeuuid(&id, cs_now_us());
    memcpy(v->id, id.b, 16);
    v->is_view = true;
    v->view_base = base;
    v->view_include_all = sel->star;
    v->view_where = cs_strdup(cv->where_text ? cv->where_text : "");
    ast_props props;   /* without the properties the guardrail ignores */
    int rc = cql__guard_props_kept(ctx, s, &cv->props, &props, e);
    if (rc == 0) rc = ddl_apply_table_props(v, &props, true, false, e);
    if (props.items != cv->props.items) cs_free(props.items);
    if (rc == 0 && v->default_ttl_s > 0)
        rc = cs_error_set(e, CS_ERR_INVALID, "Cannot set default_time_to_live for a materialized view. Data in a materialized view always expire at the same time than the corresponding data in the parent table.");
    for (int i = 0; rc == 0 && i < base->n_cols; i++) {
        const sch_column *bc = &base->cols[i];
        int pp = -1, cp = -1;
        for (int j = 0; j < cv->n_pk; j++) if (strcmp(cv->pk[j], bc->name) == 0) pp = j;
        for (int j = 0; j < cv->n_ck; j++) if (strcmp(cv->ck[j], bc->name) == 0) cp = j;
        bool selected = sel->star;
        for (int j = 0; !selected && j < sel->n_sels; j++)
            if (sel->sels[j]->column && strcmp(sel->sels[j]->column, bc->name) == 0) selected = true;
        if (pp < 0 && cp < 0 && (!selected || bc->kind == COL_STATIC)) continue;
        bool desc = false;
        if (cp >= 0 && cp < cv->n_clustering_order) desc = cv->clustering_order[cp].desc;
        rc = sch__table_add_col(v, bc->name, ctype_ref(bc->type),
                                pp >= 0 ? COL_PARTITION_KEY : cp >= 0 ? COL_CLUSTERING : COL_REGULAR,
                                pp >= 0 ? pp : cp, desc);
    }
    if (rc == 0 && sch__table_finish(v, e)) rc = CS_EUSER;
    sch_table **nv = NULL;
    if (rc == 0) {
        nv = cs_realloc(base->views, sizeof(*nv) * (size_t)(base->n_views + 1));
        if (!nv) rc = cs_error_set(e, CS_ERR_SERVER, "out of memory");
        else base->views = nv;
    }
    /* index hook (issue 5): open the view's storage and register its
     * background build (persisted) BEFORE its schema row is written */
    if (rc == 0) {
        st_table_opts o;
        sch__table_st_opts(v, &o);
        if (st_table_open(c->eng, v->id, ks, v->name, &o, &v->st))
            rc = cs_error_set(e, CS_ERR_SERVER, "Cannot create view storage");
    }
    if (rc == 0 && cql_view_build(ctx, v, e)) rc = CS_EUSER;
    bool added = false;
    if (rc == 0) {
        if (sch__ks_add_table(k, v)) rc = cs_error_set(e, CS_ERR_SERVER, "out of memory");
        else added = true;
    }
    if (rc == 0) rc = ddl_write_table(c, v, e);
    if (rc && v->st) { st_table_drop(v->st); v->st = NULL; }
    if (rc) {
        cql__index_build_cancel(ctx, v->id);
        if (added) sch__ks_remove_table(k, v);
        sch__table_free(v);
        return CS_EUSER;
    }
    base->views[base->n_views++] = v;
    sch__new_version(c);
    ddl_schema_change(r, "CREATED", "TABLE", ks, v->name);
    cql_result_warn(r, "Materialized views are experimental and are not recommended for production use.");
    cql_index_build_inline(ctx);   /* small tables: built before the reply */
    return 0;
}

static sch_table *find_view(sch_catalog *c, const char *ks, const char *name)
{
    sch_table *t = sch_table_find(c, ks, name);
    return t && t->is_view ? t : NULL;
}

int ddl_alter_view(cql_ctx *ctx, cql_session *s, cql_stmt *st, cql_result *r, cs_error *e)
{
    sch_catalog *c = ctx->cat;
    const ast_alter_table *a = &st->u.alter_view;
    const char *ks = ddl_keyspace_of(&a->table, s, e);
    if (!ks) return CS_EUSER;
    if (ddl_check_modifiable(c, ks, e)) return CS_EUSER;
    sch_table *v = find_view(c, ks, a->table.name);
    if (!v) {
        if (a->if_exists) { cql_result_void(r); return 0; }
        return cs_error_set(e, CS_ERR_INVALID, "Materialized view '%s.%s' doesn't exist", ks, a->table.name);
    }
    ast_props props;   /* AlterViewStatement: the table_properties guardrail */
    if (cql__guard_table_props(ctx, s, r, &a->props, e) || cql__guard_props_kept(ctx, s, &a->props, &props, e))
        return CS_EUSER;
    int arc = ddl_alter_with(c, v, &props, true, true, e);
    if (props.items != a->props.items) cs_free(props.items);
    if (arc) return CS_EUSER;
    int rc = ddl_write_table(c, v, e);
    if (rc) return rc;
    sch__new_version(c);
    ddl_schema_change(r, "UPDATED", "TABLE", ks, v->name);
    return 0;
}

int ddl_drop_view(cql_ctx *ctx, cql_session *s, cql_stmt *st, cql_result *r, cs_error *e)
{
    sch_catalog *c = ctx->cat;
    const ast_drop *d = &st->u.drop;
    const char *ks = ddl_keyspace_of(&d->name, s, e);
    if (!ks) return CS_EUSER;
    if (ddl_check_modifiable(c, ks, e)) return CS_EUSER;
    sch_table *v = find_view(c, ks, d->name.name);
    if (!v) {
        if (d->if_exists) { cql_result_void(r); return 0; }
        return cs_error_set(e, CS_ERR_INVALID, "Materialized view '%s.%s' doesn't exist", ks, d->name.name);
    }
    st_mutation *m = st_mutation_new();
    sch__rows_table_drop(c, m, v, cs_write_ts_us());
    int rc = sch__commit(c, m, e);
    st_mutation_free(m);
    if (rc) return rc;
    sch_table *base = v->view_base;
    if (base) {
        for (int i = 0; i < base->n_views; i++) {
            if (base->views[i] != v) continue;
            memmove(&base->views[i], &base->views[i + 1], sizeof(*base->views) * (size_t)(base->n_views - i - 1));
            base->n_views--;
            break;
        }
    }
    cql__index_build_cancel(ctx, v->id);   /* index hook: build in progress */
    if (v->st) st_table_drop(v->st);
    v->st = NULL;
    char name[256];
    snprintf(name, sizeof name, "%s", v->name);
    sch__ks_remove_table(v->ks, v);
    sch__table_free(v);
    sch__new_version(c);
    ddl_schema_change(r, "DROPPED", "TABLE", ks, name);
    return 0;
}
