/*
 * exec_ddl_alter.c: ALTER TABLE and CREATE/ALTER/DROP TYPE (Cassandra 4.1
 * AlterTableStatement, CreateTypeStatement, AlterTypeStatement,
 * DropTypeStatement wording).  Owner: catalog.
 *
 * ALTER validates everything first, then changes the catalog object in
 * place and writes its rows (one mutation).  Dropped columns are recorded
 * in system_schema.dropped_columns (the executor hides cells written before
 * the drop time).  UDTs are immutable ctypes: ALTER TYPE builds a new one
 * and re-points every column, type and field that used the old one.
 */
#include <string.h>
#include <strings.h>
#include <stdio.h>
#include <ctype.h>

#include "cql/ddl_int.h"
#include "common/alloc.h"

static void type_text(const ctype *t, cs_buf *b) { ctype_to_cql(t, b); }

static const char *tstr(const ctype *t, char *buf, size_t cap)
{
    cs_buf b;
    cs_buf_init(&b);
    type_text(t, &b);
    snprintf(buf, cap, "%.*s", (int)b.len, b.p ? (const char *)b.p : "");
    cs_buf_destroy(&b);
    return buf;
}

/* Table lookup shared by ALTER TABLE / index / view statements. */
static sch_table *find_table(sch_catalog *c, const char *ks, const char *name, bool if_exists, cql_result *r,
                             cs_error *e, bool *noop)
{
    *noop = false;
    if (!sch_keyspace_find(c, ks)) {
        if (if_exists) { cql_result_void(r); *noop = true; return NULL; }
        cs_error_set(e, CS_ERR_INVALID, "Keyspace '%s' doesn't exist", ks);
        return NULL;
    }
    sch_table *t = sch_table_find(c, ks, name);
    if (!t) {
        if (if_exists) { cql_result_void(r); *noop = true; return NULL; }
        cs_error_set(e, CS_ERR_INVALID, "Table '%s.%s' doesn't exist", ks, name);
    }
    return t;
}

/* ---------------------------------------------------------------- ALTER TABLE */

static int alter_add(sch_catalog *c, sch_table *t, const ast_alter_table *a, cs_error *e)
{
    ctype **types = cs_calloc((size_t)a->n_cols + 1, sizeof(ctype *));
    bool *skip = cs_calloc((size_t)a->n_cols + 1, sizeof(bool));
    if (!types || !skip) {
        cs_free(types);
        cs_free(skip);
        return cs_error_set(e, CS_ERR_SERVER, "out of memory");
    }
    int rc = 0;
    for (int i = 0; rc == 0 && i < a->n_cols; i++) {
        const ast_coldef *cd = &a->cols[i];
        if (sch_column_find(t, cd->name)) {
            if (a->if_col_not_exists) { skip[i] = true; continue; }
            rc = cs_error_set(e, CS_ERR_INVALID, "Column with name '%s' already exists", cd->name);
            break;
        }
        for (int j = 0; j < i; j++)
            if (strcmp(a->cols[j].name, cd->name) == 0)
                rc = cs_error_set(e, CS_ERR_INVALID, "Column with name '%s' already exists", cd->name);
        if (rc) break;
        if (t->compact != SCH_COMPACT_NONE) {
            rc = cs_error_set(e, CS_ERR_INVALID, "Cannot add new column to a COMPACT STORAGE table");
            break;
        }
        if (cd->is_static && t->n_ck == 0) {
            rc = cs_error_set(e, CS_ERR_INVALID, "Static columns are only useful (and thus allowed) if the table has at least one clustering column");
            break;
        }
        types[i] = ddl_parse_type(c, cd->type, t->ks->name, e);
        if (!types[i]) { rc = CS_EUSER; break; }
        for (int d = 0; d < t->n_dropped; d++) {
            if (strcmp(t->dropped[d].name, cd->name) != 0) continue;
            char t1[128], t2[128];
            if (t->dropped[d].type->kind == CT_COUNTER) {
                rc = cs_error_set(e, CS_ERR_INVALID, "Cannot re-add previously dropped counter column %s", cd->name);
            } else if (!ctype_value_compatible(types[i], t->dropped[d].type)) {
                rc = cs_error_set(e, CS_ERR_INVALID, "Cannot re-add previously dropped column '%s' of type %s, incompatible with previous type %s",
                                  cd->name, tstr(types[i], t1, sizeof t1), tstr(t->dropped[d].type, t2, sizeof t2));
            }
        }
        if (rc) break;
        bool counter = types[i]->kind == CT_COUNTER;
        if (counter && !t->is_counter)
            rc = cs_error_set(e, CS_ERR_CONFIG, "Cannot have a counter column (\"%s\") in a non counter table", cd->name);
        else if (!counter && t->is_counter)
            rc = cs_error_set(e, CS_ERR_CONFIG, "Cannot have a non counter column (\"%s\") in a counter table", cd->name);
    }
    int n_before = t->n_cols;
    for (int i = 0; rc == 0 && i < a->n_cols; i++) {
        if (skip[i]) continue;
        rc = sch__table_add_col(t, a->cols[i].name, types[i], a->cols[i].is_static ? COL_STATIC : COL_REGULAR, -1, false);
        types[i] = NULL;
        if (rc) rc = cs_error_set(e, CS_ERR_SERVER, "out of memory");
    }
    for (int i = 0; i < a->n_cols; i++) if (types[i]) ctype_unref(types[i]);
    cs_free(types);
    if (rc == 0 && sch__table_finish(t, e) == 0) {
        /* views selecting * get the new regular columns too */
        for (int v = 0; v < t->n_views; v++) {
            sch_table *x = t->views[v];
            if (!x->view_include_all) continue;
            bool hit = false;
            for (int i = 0; i < a->n_cols; i++) {
                if (skip[i] || a->cols[i].is_static || sch_column_find(x, a->cols[i].name)) continue;
                sch_column *bc = sch_column_find(t, a->cols[i].name);
                if (bc && sch__table_add_col(x, bc->name, ctype_ref(bc->type), COL_REGULAR, -1, false) == 0) hit = true;
            }
            if (hit && (sch__table_finish(x, e) || ddl_write_table(c, x, e))) { cs_free(skip); return CS_EUSER; }
        }
        cs_free(skip);
        return 0;
    }
    /* roll back: the new columns were appended after the existing ones,
     * but finish may have sorted them in; remove them by name */
    for (int i = 0; i < a->n_cols; i++) {
        if (skip[i]) continue;
        for (int j = 0; j < t->n_cols && t->n_cols > n_before; j++) {
            if (strcmp(t->cols[j].name, a->cols[i].name) != 0) continue;
            cs_free(t->cols[j].name);
            if (t->cols[j].type) ctype_unref(t->cols[j].type);
            memmove(&t->cols[j], &t->cols[j + 1], sizeof(*t->cols) * (size_t)(t->n_cols - j - 1));
            t->n_cols--;
            break;
        }
    }
    cs_free(skip);
    sch__table_finish(t, NULL);
    return CS_EUSER;
}

static int alter_drop(sch_catalog *c, sch_table *t, const ast_alter_table *a, cs_error *e)
{
    for (int i = 0; i < a->n_cols; i++) {
        const char *n = a->cols[i].name;
        sch_column *col = sch_column_find(t, n);
        if (!col) {
            if (a->if_col_exists) continue;
            return cs_error_set(e, CS_ERR_INVALID, "Column %s was not found in table '%s.%s'", n, t->ks->name, t->name);
        }
        if (col->kind == COL_PARTITION_KEY || col->kind == COL_CLUSTERING)
            return cs_error_set(e, CS_ERR_INVALID, "Cannot drop PRIMARY KEY column %s", n);
        /* a dense compact table's one non-key column: Cassandra's metadata
         * would lose its compact value (an assertion there) */
        if (t->compact == SCH_COMPACT_DENSE && col == t->compact_value)
            return cs_error_set(e, CS_ERR_INVALID, "Cannot drop the compact value column %s of a COMPACT STORAGE table", n);
        if (col->type->kind == CT_UDT && !col->type->frozen) {
            char tt[128];
            return cs_error_set(e, CS_ERR_INVALID, "Cannot drop non-frozen column %s of user type %s", n, tstr(col->type, tt, sizeof tt));
        }
        for (int x = 0; x < t->n_indexes; x++) {
            const char *tg = t->indexes[x]->target;
            const char *p = strchr(tg, '(');
            char base[256];
            if (p) snprintf(base, sizeof base, "%.*s", (int)(strlen(p + 1) - 1), p + 1);
            else snprintf(base, sizeof base, "%s", tg);
            if (strcmp(base, n) == 0)
                return cs_error_set(e, CS_ERR_INVALID, "Cannot drop column %s because it has dependent secondary indexes (%s)",
                                    n, t->indexes[x]->name);
        }
        if (t->n_views > 0)
            return cs_error_set(e, CS_ERR_INVALID, "Cannot drop column %s on base table %s with materialized views", n, t->name);
    }
    int64_t when = a->drop_timestamp != INT64_MIN ? a->drop_timestamp : cs_write_ts_us();
    for (int i = 0; i < a->n_cols; i++) {
        sch_column *col = sch_column_find(t, a->cols[i].name);
        if (!col) continue;
        /* record (or refresh) the dropped column */
        int d;
        for (d = 0; d < t->n_dropped; d++) if (strcmp(t->dropped[d].name, col->name) == 0) break;
        if (d == t->n_dropped) {
            sch_dropped_col *nd = cs_realloc(t->dropped, sizeof(*nd) * (size_t)(t->n_dropped + 1));
            if (!nd) return cs_error_set(e, CS_ERR_SERVER, "out of memory");
            t->dropped = nd;
            nd[d].name = cs_strdup(col->name);
            if (!nd[d].name) return cs_error_set(e, CS_ERR_SERVER, "out of memory");
            nd[d].type = NULL;
            t->n_dropped++;
        }
        if (t->dropped[d].type) ctype_unref(t->dropped[d].type);
        t->dropped[d].type = col->type;   /* moves the ref */
        t->dropped[d].dropped_us = when;
        cs_free(col->name);
        int idx = (int)(col - t->cols);
        memmove(&t->cols[idx], &t->cols[idx + 1], sizeof(*t->cols) * (size_t)(t->n_cols - idx - 1));
        t->n_cols--;
    }
    return sch__table_finish(t, e) ? CS_EUSER : 0;
}

/* A view's WHERE text with identifier `from` renamed to `to` (string
 * literals untouched; quoted and unquoted identifiers compared case-folded
 * as the parser does).  Returns a new string or NULL on OOM. */
static char *rename_in_where(const char *w, const char *from, const char *to)
{
    cs_buf b;
    cs_buf_init(&b);
    const char *p = w;
    while (*p) {
        if (*p == '\'') {                      /* string literal */
            const char *q = p + 1;
            while (*q && !(*q == '\'' && q[1] != '\'')) q += (*q == '\'' ? 2 : 1);
            if (*q) q++;
            cs_buf_put(&b, p, (size_t)(q - p));
            p = q;
        } else if (*p == '"' || isalpha((unsigned char)*p) || *p == '_') {
            char id[256];
            size_t n = 0;
            const char *q = p;
            if (*p == '"') {
                q++;
                while (*q && !(*q == '"' && q[1] != '"')) {
                    if (*q == '"') q++;
                    if (n + 1 < sizeof id) id[n++] = *q;
                    q++;
                }
                if (*q) q++;
            } else {
                while (isalnum((unsigned char)*q) || *q == '_') {
                    if (n + 1 < sizeof id) id[n++] = (char)tolower((unsigned char)*q);
                    q++;
                }
            }
            id[n] = 0;
            if (strcmp(id, from) == 0) cql_quote_ident(to, &b);
            else cs_buf_put(&b, p, (size_t)(q - p));
            p = q;
        } else {
            cs_buf_put_u8(&b, (uint8_t)*p++);
        }
    }
    char *out = sch__bufstr(&b) ? cs_strdup((char *)b.p) : NULL;
    cs_buf_destroy(&b);
    return out;
}

static int alter_rename(sch_catalog *c, sch_table *t, const ast_alter_table *a, cs_error *e)
{
    for (int i = 0; i < a->n_renames; i++) {
        const char *from = a->rename_from[i], *to = a->rename_to[i];
        sch_column *col = sch_column_find(t, from);
        if (!col) return cs_error_set(e, CS_ERR_INVALID, "Column %s was not found in table %s.%s", from, t->ks->name, t->name);
        if (col->kind != COL_PARTITION_KEY && col->kind != COL_CLUSTERING)
            return cs_error_set(e, CS_ERR_INVALID, "Cannot rename non PRIMARY KEY column %s", from);
        if (sch_column_find(t, to))
            return cs_error_set(e, CS_ERR_INVALID, "Cannot rename column %s to %s in table '%s.%s'; another column with that name already exists",
                                from, to, t->ks->name, t->name);
        for (int x = 0; x < t->n_indexes; x++)
            if (strstr(t->indexes[x]->target, from))
                return cs_error_set(e, CS_ERR_INVALID, "Can't rename column %s because it has dependent secondary indexes (%s)",
                                    from, t->indexes[x]->name);
    }
    /* rename in the table and in the views that include the column */
    for (int v = -1; v < t->n_views; v++) {
        sch_table *x = v < 0 ? t : t->views[v];
        bool hit = false;
        for (int i = 0; i < a->n_renames; i++) {
            sch_column *col = sch_column_find(x, a->rename_from[i]);
            if (!col) continue;
            char *nn = cs_strdup(a->rename_to[i]);
            if (!nn) return cs_error_set(e, CS_ERR_SERVER, "out of memory");
            cs_free(col->name);
            col->name = nn;
            col->id = sch__col_id(nn);
            hit = true;
            if (x->is_view && x->view_where) {
                char *nw = rename_in_where(x->view_where, a->rename_from[i], a->rename_to[i]);
                if (nw) { cs_free(x->view_where); x->view_where = nw; }
            }
        }
        if (sch__table_finish(x, e)) return CS_EUSER;
        if (v >= 0 && hit && ddl_write_table(c, x, e)) return CS_EUSER;
    }
    return 0;
}

bool ddl_uncompressed_ok(cql_ctx *ctx, const cql_session *s)
{
    return ctx->cfg.guard.uncompressed_tables || !cql__guard_applies(ctx, s);
}

bool ddl_uncompressed(const sch_table *t)
{
    const char *en = sch__kv_get(t->compression_k, t->compression_v, t->n_compression, "enabled");
    return en && strcasecmp(en, "false") == 0;
}

int ddl_uncompressed_refused(cs_error *e)
{
    return cs_error_set(e, CS_ERR_INVALID, "Guardrail uncompressed_tables_enabled violated: Uncompressed table is not allowed");
}

int ddl_alter_with(sch_catalog *c, sch_table *t, const ast_props *props, bool view, bool uncompressed_ok, cs_error *e)
{
    /* validate on a scratch table carrying the current options */
    sch_table tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.name = t->name;
    tmp.comment = cs_strdup(t->comment ? t->comment : "");
    tmp.default_ttl_s = t->default_ttl_s;
    tmp.gc_grace_s = t->gc_grace_s;
    tmp.bloom_fp_chance = t->bloom_fp_chance;
    tmp.crc_check_chance = t->crc_check_chance;
    tmp.min_index_interval = t->min_index_interval;
    tmp.max_index_interval = t->max_index_interval;
    tmp.memtable_flush_period_ms = t->memtable_flush_period_ms;
    tmp.speculative_retry = cs_strdup(t->speculative_retry);
    tmp.additional_write_policy = cs_strdup(t->additional_write_policy);
    tmp.read_repair = cs_strdup(t->read_repair);
    tmp.cdc = t->cdc;
    for (int i = 0; i < t->n_caching; i++) sch__kv_set(&tmp.caching_k, &tmp.caching_v, &tmp.n_caching, t->caching_k[i], t->caching_v[i]);
    for (int i = 0; i < t->n_compaction; i++) sch__kv_set(&tmp.compaction_k, &tmp.compaction_v, &tmp.n_compaction, t->compaction_k[i], t->compaction_v[i]);
    for (int i = 0; i < t->n_compression; i++) sch__kv_set(&tmp.compression_k, &tmp.compression_v, &tmp.n_compression, t->compression_k[i], t->compression_v[i]);
    int rc = ddl_apply_table_props(&tmp, props, view, true, e);
    if (rc == 0 && !uncompressed_ok && ddl_uncompressed(&tmp))   /* AlterTableStatement.AlterOptions */
        rc = ddl_uncompressed_refused(e);
    if (rc == 0 && t->is_counter && tmp.default_ttl_s > 0)
        rc = cs_error_set(e, CS_ERR_INVALID, "Cannot set default_time_to_live on a table with counters");
    if (rc == 0 && view && tmp.default_ttl_s > 0)
        rc = cs_error_set(e, CS_ERR_INVALID, "Forbidden default_time_to_live detected for a materialized view. Data in a materialized view always expire at the same time than the corresponding data in the parent table. default_time_to_live must be set to zero, see CASSANDRA-12868 for more information");
    if (rc == 0 && view && tmp.gc_grace_s == 0 && t->gc_grace_s != 0)
        rc = cs_error_set(e, CS_ERR_INVALID, "Cannot alter gc_grace_seconds of a materialized view to 0, since this value is used to TTL undelivered updates. Setting gc_grace_seconds too low might cause undelivered updates to expire before being replayed.");
    if (rc == 0 && !view && t->n_views > 0 && tmp.gc_grace_s == 0 && t->gc_grace_s != 0)
        rc = cs_error_set(e, CS_ERR_INVALID, "Cannot alter gc_grace_seconds of the base table of a materialized view to 0, since this value is used to TTL undelivered updates. Setting gc_grace_seconds too low might cause undelivered updates to expire before being replayed.");
    if (rc == 0) {
        /* swap the option fields into t */
#define SWAP(f) do { __typeof__(t->f) x_ = t->f; t->f = tmp.f; tmp.f = x_; } while (0)
        SWAP(comment); SWAP(default_ttl_s); SWAP(gc_grace_s); SWAP(bloom_fp_chance); SWAP(crc_check_chance);
        SWAP(min_index_interval); SWAP(max_index_interval); SWAP(memtable_flush_period_ms);
        SWAP(speculative_retry); SWAP(additional_write_policy); SWAP(read_repair); SWAP(cdc);
        SWAP(caching_k); SWAP(caching_v); SWAP(n_caching);
        SWAP(compaction_k); SWAP(compaction_v); SWAP(n_compaction);
        SWAP(compression_k); SWAP(compression_v); SWAP(n_compression);
#undef SWAP
        if (t->st) {
            st_table_opts o;
            sch__table_st_opts(t, &o);
            st_table_set_opts(t->st, &o);
        }
    }
    cs_free(tmp.comment);
    cs_free(tmp.speculative_retry);
    cs_free(tmp.additional_write_policy);
    cs_free(tmp.read_repair);
    sch__kv_free(tmp.caching_k, tmp.caching_v, tmp.n_caching);
    sch__kv_free(tmp.compaction_k, tmp.compaction_v, tmp.n_compaction);
    sch__kv_free(tmp.compression_k, tmp.compression_v, tmp.n_compression);
    return rc ? CS_EUSER : 0;
}

int ddl_alter_table(cql_ctx *ctx, cql_session *s, cql_stmt *st, cql_result *r, cs_error *e)
{
    sch_catalog *c = ctx->cat;
    const ast_alter_table *a = &st->u.alter_table;
    const char *ks = ddl_keyspace_of(&a->table, s, e);
    if (!ks) return CS_EUSER;
    if (ddl_check_modifiable(c, ks, e)) return CS_EUSER;
    bool noop;
    sch_table *t = find_table(c, ks, a->table.name, a->if_exists, r, e, &noop);
    if (noop) return 0;
    if (!t) return CS_EUSER;
    if (t->is_view)
        return cs_error_set(e, CS_ERR_INVALID, "Cannot use ALTER TABLE on a materialized view; use ALTER MATERIALIZED VIEW instead");
    int rc;
    if (a->kind == ALTER_ADD && cql__guard_max_on(ctx, s, CQL_GUARD_COLUMNS_PER_TABLE)) {
        int n_new = 0, exists = 0;   /* AlterTableStatement's AddColumns, once the columns are added */
        for (int i = 0; i < a->n_cols; i++) {
            if (sch_column_find(t, a->cols[i].name)) exists++;
            else n_new++;
        }
        if (!exists && cql__guard_max(ctx, s, r, CQL_GUARD_COLUMNS_PER_TABLE, t->n_cols + n_new, t->name, e))
            return CS_EUSER;
    }
    switch (a->kind) {
    case ALTER_ADD: rc = alter_add(c, t, a, e); break;
    case ALTER_DROP: rc = alter_drop(c, t, a, e); break;
    case ALTER_RENAME: rc = alter_rename(c, t, a, e); break;
    case ALTER_WITH: {   /* AlterOptions.validate: the table_properties guardrail first */
        ast_props props = a->props;
        rc = cql__guard_table_props(ctx, s, r, &a->props, e);
        if (rc == 0) rc = cql__guard_props_kept(ctx, s, &a->props, &props, e);
        if (rc == 0) rc = ddl_alter_with(c, t, &props, false, ddl_uncompressed_ok(ctx, s), e);
        if (props.items != a->props.items) cs_free(props.items);
        break;
    }
    case ALTER_TYPE_CHANGE: rc = cs_error_set(e, CS_ERR_INVALID, "Altering column types is no longer supported"); break;
    case ALTER_DROP_COMPACT:
        rc = cs_error_set(e, CS_ERR_INVALID, "DROP COMPACT STORAGE is disabled. Enable in cassandra.yaml to use.");
        break;
    default: rc = cs_error_set(e, CS_ERR_SERVER, "unknown ALTER TABLE form"); break;
    }
    if (rc) return CS_EUSER;
    rc = ddl_write_table(c, t, e);
    if (rc) return rc;
    sch__new_version(c);
    ddl_schema_change(r, "UPDATED", "TABLE", ks, t->name);
    return 0;
}

/* ---------------------------------------------------------------- types */

/* A copy of t with every reference to UDT (ks, name) replaced by `nu`
 * (frozen-ness kept).  Returns a new ref, or NULL on OOM. */
static ctype *replace_udt(const ctype *t, const ctype *nu)
{
    if (t->kind == CT_UDT && strcmp(t->udt_ks, nu->udt_ks) == 0 && strcmp(t->udt_name, nu->udt_name) == 0)
        return t->frozen ? ctype_freeze(nu) : ctype_ref(nu);
    if (t->n_sub == 0) return ctype_ref(t);
    ctype *sub[64];
    int n = t->n_sub < 64 ? t->n_sub : 64;
    for (int i = 0; i < n; i++) sub[i] = replace_udt(t->sub[i], nu);
    switch (t->kind) {
    case CT_LIST: case CT_SET: return ctype_new_collection(t->kind, sub[0], NULL, t->frozen);
    case CT_MAP: return ctype_new_collection(t->kind, sub[0], sub[1], t->frozen);
    case CT_TUPLE: return ctype_new_tuple(sub, n);
    case CT_UDT: return ctype_new_udt(t->udt_ks, t->udt_name, t->field_names, sub, n, t->frozen);
    default:
        for (int i = 0; i < n; i++) ctype_unref(sub[i]);
        return ctype_ref(t);
    }
}

static bool uses_udt(const ctype *t, const char *ks, const char *name)
{
    if (t->kind == CT_UDT && strcmp(t->udt_ks, ks) == 0 && strcmp(t->udt_name, name) == 0) return true;
    for (int i = 0; i < t->n_sub; i++) if (uses_udt(t->sub[i], ks, name)) return true;
    return false;
}

/* Re-point every use of the (altered) UDT nu in keyspace k; returns the
 * tables to persist in `changed` (caller frees the array). */
static void repoint_udt(sch_keyspace *k, const ctype *nu, sch_table ***changed, int *n_changed)
{
    for (int i = 0; i < k->n_types; i++) {
        if (k->types[i]->udt_name && strcmp(k->types[i]->udt_name, nu->udt_name) == 0) continue;
        if (uses_udt(k->types[i], nu->udt_ks, nu->udt_name)) {
            ctype *x = replace_udt(k->types[i], nu);
            if (x) { ctype_unref(k->types[i]); k->types[i] = x; }
        }
    }
    for (int j = 0; j < k->n_tables; j++) {
        sch_table *t = k->tables[j];
        bool hit = false;
        for (int ci = 0; ci < t->n_cols; ci++) {
            if (!uses_udt(t->cols[ci].type, nu->udt_ks, nu->udt_name)) continue;
            ctype *x = replace_udt(t->cols[ci].type, nu);
            if (x) { ctype_unref(t->cols[ci].type); t->cols[ci].type = x; hit = true; }
        }
        if (hit) {
            sch_table **nc = cs_realloc(*changed, sizeof(*nc) * (size_t)(*n_changed + 1));
            if (nc) { *changed = nc; nc[(*n_changed)++] = t; }
        }
    }
}

static int check_field_type(const ctype *ft, cs_error *e)
{
    if (ft->kind == CT_COUNTER) return cs_error_set(e, CS_ERR_INVALID, "A user type cannot contain counters");
    if (ft->kind == CT_UDT && !ft->frozen) return cs_error_set(e, CS_ERR_INVALID, "A user type cannot contain non-frozen UDTs");
    return 0;
}

int ddl_create_type(cql_ctx *ctx, cql_session *s, cql_stmt *st, cql_result *r, cs_error *e)
{
    sch_catalog *c = ctx->cat;
    const ast_type_def *d = &st->u.type_def;
    const char *ks = ddl_keyspace_of(&d->name, s, e);
    if (!ks) return CS_EUSER;
    if (ddl_check_modifiable(c, ks, e)) return CS_EUSER;
    if (cql__guard_max(ctx, s, r, CQL_GUARD_FIELDS_PER_UDT, d->n_fields, d->name.name, e))   /* CreateTypeStatement.validate */
        return CS_EUSER;
    sch_keyspace *k = sch_keyspace_find(c, ks);
    if (!k) return cs_error_set(e, CS_ERR_INVALID, "Keyspace '%s' doesn't exist", ks);
    if (sch__ks_type_index(k, d->name.name) >= 0) {
        if (d->if_not_exists) { cql_result_void(r); return 0; }
        return cs_error_set(e, CS_ERR_INVALID, "A user type with name '%s' already exists", d->name.name);
    }
    for (int i = 0; i < d->n_fields; i++)
        for (int j = 0; j < i; j++)
            if (strcmp(d->field_names[i], d->field_names[j]) == 0)
                return cs_error_set(e, CS_ERR_INVALID, "Duplicate field name '%s' in type '%s'", d->field_names[i], d->name.name);
    ctype **ft = cs_calloc((size_t)d->n_fields + 1, sizeof(ctype *));
    if (!ft) return cs_error_set(e, CS_ERR_SERVER, "out of memory");
    int rc = 0;
    for (int i = 0; rc == 0 && i < d->n_fields; i++) {
        ft[i] = ddl_parse_type(c, d->field_types[i], ks, e);
        if (!ft[i]) rc = CS_EUSER;
        else rc = check_field_type(ft[i], e);
    }
    if (rc) {
        for (int i = 0; i < d->n_fields; i++) if (ft[i]) ctype_unref(ft[i]);
        cs_free(ft);
        return CS_EUSER;
    }
    ctype *u = ctype_new_udt(ks, d->name.name, d->field_names, ft, d->n_fields, false);
    cs_free(ft);
    if (!u) return cs_error_set(e, CS_ERR_SERVER, "out of memory");
    if (sch__ks_add_type(k, u)) return cs_error_set(e, CS_ERR_SERVER, "out of memory");   /* u released */
    st_mutation *m = st_mutation_new();
    sch__rows_type(c, m, k, u, cs_write_ts_us());
    rc = sch__commit(c, m, e);
    st_mutation_free(m);
    if (rc) { sch__ks_remove_type(k, k->n_types - 1); return rc; }
    sch__new_version(c);
    ddl_schema_change(r, "CREATED", "TYPE", ks, d->name.name);
    return 0;
}

int ddl_alter_type(cql_ctx *ctx, cql_session *s, cql_stmt *st, cql_result *r, cs_error *e)
{
    sch_catalog *c = ctx->cat;
    const ast_type_def *d = &st->u.type_def;
    const char *ks = ddl_keyspace_of(&d->name, s, e);
    if (!ks) return CS_EUSER;
    if (ddl_check_modifiable(c, ks, e)) return CS_EUSER;
    sch_keyspace *k = sch_keyspace_find(c, ks);
    int idx = k ? sch__ks_type_index(k, d->name.name) : -1;
    if (idx < 0) {
        if (d->if_exists) { cql_result_void(r); return 0; }
        return cs_error_set(e, CS_ERR_INVALID, "Type %s.%s doesn't exist", ks, d->name.name);
    }
    const ctype *old = k->types[idx];
    int n = old->n_sub;
    int add = d->alter_add ? d->n_fields : 0;
    char **names = cs_calloc((size_t)(n + add) + 1, sizeof(char *));
    ctype **types = cs_calloc((size_t)(n + add) + 1, sizeof(ctype *));
    if (!names || !types) { cs_free(names); cs_free(types); return cs_error_set(e, CS_ERR_SERVER, "out of memory"); }
    int rc = 0;
    for (int i = 0; i < n; i++) { names[i] = old->field_names[i]; types[i] = ctype_ref(old->sub[i]); }
    if (d->alter_add) {
        for (int i = 0; rc == 0 && i < d->n_fields; i++) {
            for (int j = 0; j < n + i; j++)
                if (strcmp(names[j], d->field_names[i]) == 0)
                    rc = cs_error_set(e, CS_ERR_INVALID, "Cannot add field %s to type %s.%s: a field with name %s already exists",
                                      d->field_names[i], ks, d->name.name, d->field_names[i]);
            if (rc) break;
            names[n + i] = d->field_names[i];
            types[n + i] = ddl_parse_type(c, d->field_types[i], ks, e);
            if (!types[n + i]) { rc = CS_EUSER; break; }
            if ((rc = check_field_type(types[n + i], e))) break;
            if (uses_udt(types[n + i], ks, d->name.name)) {
                char tt[128];
                rc = cs_error_set(e, CS_ERR_INVALID, "Cannot add new field %s of type %s to user type %s.%s as it would create a circular reference",
                                  d->field_names[i], tstr(types[n + i], tt, sizeof tt), ks, d->name.name);
                break;
            }
            cs_buf pk_users;
            cs_buf_init(&pk_users);
            for (int j = 0; j < k->n_tables; j++)
                for (int p = 0; p < k->tables[j]->n_pk; p++)
                    if (uses_udt(k->tables[j]->pk[p]->type, ks, d->name.name)) {
                        if (pk_users.len) sch__puts(&pk_users, ", ");
                        sch__printf(&pk_users, "%s.%s", ks, k->tables[j]->name);
                        break;
                    }
            if (pk_users.len) {
                char tt[128];
                rc = cs_error_set(e, CS_ERR_INVALID, "Cannot add new field %s of type %s to user type %s.%s as the type is being used "
                                  "in partition key by the following tables: %s", d->field_names[i],
                                  tstr(types[n + i], tt, sizeof tt), ks, d->name.name,
                                  sch__bufstr(&pk_users) ? (char *)pk_users.p : "");
            }
            cs_buf_destroy(&pk_users);
            if (rc == 0 && cql__guard_max(ctx, s, r, CQL_GUARD_FIELDS_PER_UDT, n + i + 1, d->name.name, e))
                rc = CS_EUSER;   /* AlterTypeStatement's AddField */
        }
    } else if (d->alter_rename) {
        for (int i = 0; rc == 0 && i < d->n_renames; i++) {
            int f = -1;
            for (int j = 0; j < n; j++) if (strcmp(names[j], d->rename_from[i]) == 0) f = j;
            if (f < 0) { rc = cs_error_set(e, CS_ERR_INVALID, "Unkown field %s in user type %s.%s", d->rename_from[i], ks, d->name.name); break; }
            names[f] = d->rename_to[i];
        }
        for (int i = 0; rc == 0 && i < n; i++)
            for (int j = 0; j < i; j++)
                if (strcmp(names[i], names[j]) == 0)
                    rc = cs_error_set(e, CS_ERR_INVALID, "Duplicate field name %s in type %s", names[i], ks);  /* sic: Cassandra formats the keyspace */
    } else {
        rc = cs_error_set(e, CS_ERR_INVALID, "Altering field types is no longer supported");
    }
    int total = d->alter_add ? n + add : n;
    if (rc) {
        for (int i = 0; i < total; i++) if (types[i]) ctype_unref(types[i]);
        cs_free(names); cs_free(types);
        return CS_EUSER;
    }
    ctype *nu = ctype_new_udt(ks, d->name.name, names, types, total, false);
    cs_free(names);
    cs_free(types);
    if (!nu) return cs_error_set(e, CS_ERR_SERVER, "out of memory");
    /* install, then persist the type and every table that uses it */
    ctype_unref(k->types[idx]);
    k->types[idx] = nu;
    sch_table **changed = NULL;
    int n_changed = 0;
    repoint_udt(k, nu, &changed, &n_changed);
    st_mutation *m = st_mutation_new();
    int64_t ts_del = cs_write_ts_us(), ts = cs_write_ts_us();
    for (int i = 0; i < k->n_types; i++)
        if (k->types[i] == nu || uses_udt(k->types[i], ks, d->name.name)) sch__rows_type(c, m, k, k->types[i], ts);
    for (int i = 0; i < n_changed; i++) sch__rows_table(c, m, changed[i], ts_del, ts);
    cs_free(changed);
    rc = sch__commit(c, m, e);
    st_mutation_free(m);
    if (rc) return rc;
    sch__new_version(c);
    ddl_schema_change(r, "UPDATED", "TYPE", ks, d->name.name);
    return 0;
}

int ddl_drop_type(cql_ctx *ctx, cql_session *s, cql_stmt *st, cql_result *r, cs_error *e)
{
    sch_catalog *c = ctx->cat;
    const ast_drop *d = &st->u.drop;
    const char *ks = ddl_keyspace_of(&d->name, s, e);
    if (!ks) return CS_EUSER;
    if (ddl_check_modifiable(c, ks, e)) return CS_EUSER;
    sch_keyspace *k = sch_keyspace_find(c, ks);
    int idx = k ? sch__ks_type_index(k, d->name.name) : -1;
    if (idx < 0) {
        if (d->if_exists) { cql_result_void(r); return 0; }
        return cs_error_set(e, CS_ERR_INVALID, "Type '%s.%s' doesn't exist", ks, d->name.name);
    }
    cs_buf users;
    cs_buf_init(&users);
    for (int i = 0; i < k->n_types; i++) {
        if (i == idx || !uses_udt(k->types[i], ks, d->name.name)) continue;
        if (users.len) sch__puts(&users, ", ");
        sch__puts(&users, k->types[i]->udt_name);
    }
    if (users.len) {
        int rc = cs_error_set(e, CS_ERR_INVALID, "Cannot drop user type '%s.%s' as it is still used by user types %s",
                              ks, d->name.name, sch__bufstr(&users) ? (char *)users.p : "");
        cs_buf_destroy(&users);
        return rc;
    }
    for (int j = 0; j < k->n_tables; j++) {
        sch_table *t = k->tables[j];
        bool hit = false;
        for (int ci = 0; ci < t->n_cols; ci++) if (uses_udt(t->cols[ci].type, ks, d->name.name)) hit = true;
        if (!hit) continue;
        if (users.len) sch__puts(&users, ", ");
        sch__puts(&users, t->name);
    }
    if (users.len) {
        int rc = cs_error_set(e, CS_ERR_INVALID, "Cannot drop user type '%s.%s' as it is still used by tables %s",
                              ks, d->name.name, sch__bufstr(&users) ? (char *)users.p : "");
        cs_buf_destroy(&users);
        return rc;
    }
    cs_buf_destroy(&users);
    st_mutation *m = st_mutation_new();
    sch__rows_type_drop(c, m, ks, d->name.name, cs_write_ts_us());
    int rc = sch__commit(c, m, e);
    st_mutation_free(m);
    if (rc) return rc;
    char name[256];
    snprintf(name, sizeof name, "%s", d->name.name);
    sch__ks_remove_type(k, idx);
    sch__new_version(c);
    ddl_schema_change(r, "DROPPED", "TYPE", ks, name);
    return 0;
}
