/*
 * exec_ddl.c: DDL statements, USE and TRUNCATE (Cassandra 4.1
 * cql3/statements/schema/ *Statement.java semantics and messages).
 * Owner: catalog.  Thread: request loop.
 *
 * Every statement follows the same steps:
 *   1. resolve the keyspace and refuse system/virtual keyspaces;
 *   2. validate and build the new object aside (catalog untouched);
 *   3. write its system_schema rows as ONE mutation (sch__commit);
 *   4. install it in the catalog, open/drop storage, bump the schema version;
 *   5. answer RESULT Schema_change (or Void when IF [NOT] EXISTS made it a
 *      no-op, as Cassandra does for an empty schema diff).
 * DDL is instant: there is no schema agreement to wait for on one node.
 */
#include <string.h>
#include <stdio.h>
#include <ctype.h>
#include <stdlib.h>

#include "cql/index.h"   /* index hook (issue 5) */
#include "cql/ddl_int.h"
#include "common/alloc.h"
#include "common/log.h"

/* ---------------------------------------------------------------- shared helpers */

const char *ddl_keyspace_of(const ast_qname *q, const cql_session *s, cs_error *e)
{
    if (q->ks) return q->ks;
    if (s && s->keyspace[0]) return s->keyspace;
    cs_error_set(e, CS_ERR_INVALID, "No keyspace has been specified. USE a keyspace, or explicitly specify keyspace.tablename");
    return NULL;
}

int ddl_check_modifiable(sch_catalog *c, const char *ks, cs_error *e)
{
    sch_keyspace *k = sch_keyspace_find(c, ks);
    if (k && k->is_virtual)
        return cs_error_set(e, CS_ERR_INVALID, "Virtual keyspace '%s' is not user-modifiable", ks);
    if (sch__is_system_ks_name(ks))
        return cs_error_set(e, CS_ERR_INVALID, "System keyspace '%s' is not user-modifiable", ks);
    return 0;
}

void ddl_schema_change(cql_result *r, const char *change, const char *target, const char *ks, const char *name)
{
    cql_result_schema_change(r, change, target, ks, name, NULL);
    r->schema_changed = true;
    memset(&r->change, 0, sizeof r->change);
    snprintf(r->change.change_type, sizeof r->change.change_type, "%s", change);
    snprintf(r->change.target, sizeof r->change.target, "%s", target);
    snprintf(r->change.keyspace, sizeof r->change.keyspace, "%s", ks);
    snprintf(r->change.name, sizeof r->change.name, "%s", name ? name : "");
}

static int already_exists(cs_error *e, const char *ks, const char *table)
{
    if (table)
        cs_error_set(e, CS_ERR_ALREADY_EXISTS, "Cannot add already existing table \"%s\" to keyspace \"%s\"", table, ks);
    else
        cs_error_set(e, CS_ERR_ALREADY_EXISTS, "Cannot add existing keyspace \"%s\"", ks);
    snprintf(e->keyspace, sizeof e->keyspace, "%s", ks);
    snprintf(e->table, sizeof e->table, "%s", table ? table : "");
    return CS_EUSER;
}

static bool valid_name(const char *n)
{
    size_t l = strlen(n);
    if (l == 0 || l > 48) return false;
    for (size_t i = 0; i < l; i++)
        if (!isalnum((unsigned char)n[i]) && n[i] != '_') return false;
    return true;
}

typedef struct udt_scope { sch_catalog *c; const char *ks; const char *other; } udt_scope;

/* UDT lookup limited to the statement's keyspace (CQL3Type.Raw.RawUT). */
static const ctype *scoped_lookup(void *arg, const char *ks, const char *name)
{
    udt_scope *u = arg;
    if (ks && strcmp(ks, u->ks) != 0) { u->other = ks; return NULL; }
    return sch_type_find(u->c, u->ks, name);
}

ctype *ddl_parse_type(sch_catalog *c, const char *text, const char *ks, cs_error *e)
{
    udt_scope u = { c, ks, NULL };
    ctype *t = ctype_parse(text, ks, scoped_lookup, &u, e);
    if (!t && u.other) {
        char other[256];
        snprintf(other, sizeof other, "%s", u.other);
        cs_error_init(e);
        cs_error_set(e, CS_ERR_INVALID, "Statement on keyspace %s cannot refer to a user type in keyspace %s; "
                     "user types can only be used in the keyspace they are defined in", ks, other);
    }
    return t;
}

int ddl_write_table(sch_catalog *c, sch_table *t, cs_error *e)
{
    st_mutation *m = st_mutation_new();
    if (!m) return cs_error_set(e, CS_ERR_SERVER, "out of memory");
    int64_t ts_del = cs_write_ts_us();
    sch__rows_table(c, m, t, ts_del, cs_write_ts_us());
    int rc = sch__commit(c, m, e);
    st_mutation_free(m);
    return rc;
}

static void type_text(const ctype *t, char *out, size_t cap)
{
    cs_buf b;
    cs_buf_init(&b);
    ctype_to_cql(t, &b);
    snprintf(out, cap, "%.*s", (int)b.len, b.p ? (const char *)b.p : "");
    cs_buf_destroy(&b);
}

/* ---------------------------------------------------------------- USE */

int cql_exec_use(cql_ctx *ctx, cql_session *s, cql_stmt *st, cql_result *r, cs_error *e)
{
    const char *ks = st->u.use_keyspace;
    if (!ks || !sch_keyspace_find(ctx->cat, ks))
        return cs_error_set(e, CS_ERR_INVALID, "Keyspace '%s' does not exist", ks ? ks : "");
    snprintf(s->keyspace, sizeof s->keyspace, "%s", ks);
    cql_result_set_keyspace(r, ks);
    return 0;
}

/* ---------------------------------------------------------------- keyspaces */

/* Client warnings for a replication factor above the node count (one node
 * in datacenter1), as SimpleStrategy/NetworkTopologyStrategy.maybeWarnOnOptions. */
static void warn_rf(cql_result *r, const sch_keyspace *k)
{
    const char *cls = sch__kv_get(k->repl_k, k->repl_v, k->n_repl, "class");
    bool nts = cls && strstr(cls, "NetworkTopologyStrategy");
    for (int i = 0; i < k->n_repl; i++) {
        if (strcmp(k->repl_k[i], "class") == 0) continue;
        int rf = atoi(k->repl_v[i]);
        if (nts && strcmp(k->repl_k[i], "datacenter1") != 0) continue;   /* unknown DC: 0 nodes, no warning */
        if (rf <= 1) continue;
        if (nts)
            cql_result_warn(r, "Your replication factor %d for keyspace %s is higher than the number of nodes 1 for datacenter %s",
                            rf, k->name, k->repl_k[i]);
        else
            cql_result_warn(r, "Your replication factor %d for keyspace %s is higher than the number of nodes 1", rf, k->name);
    }
}

/* Guardrail minimum_replication_factor, as the strategies'
 * maybeWarnOnOptions: each datacenter's full replicas (NTS) or the
 * replication_factor (SimpleStrategy), not for system keyspaces. */
static int guard_min_rf(cql_ctx *ctx, cql_session *s, cql_result *r, const sch_keyspace *k, cs_error *e)
{
    if (sch__is_system_ks_name(k->name) || !cql__guard_max_on(ctx, s, CQL_GUARD_MINIMUM_REPLICATION_FACTOR))
        return 0;
    for (int i = 0; i < k->n_repl; i++) {
        if (strcmp(k->repl_k[i], "class") == 0) continue;
        const char *v = k->repl_v[i], *slash = strchr(v, '/');
        int rf = atoi(v) - (slash ? atoi(slash + 1) : 0);   /* "3/1": 3 replicas, 1 transient */
        if (cql__guard_max(ctx, s, r, CQL_GUARD_MINIMUM_REPLICATION_FACTOR, rf, k->name, e)) return CS_EUSER;
    }
    return 0;
}

/* Tables, views and keyspaces outside the virtual keyspaces. */
static void count_schema(sch_catalog *c, bool user_only, int *tables, int *keyspaces)
{
    *tables = *keyspaces = 0;
    for (int i = 0; i < sch_keyspace_count(c); i++) {
        sch_keyspace *k = sch_keyspace_at(c, i);
        if (k->is_virtual || (user_only && k->is_system)) continue;
        (*keyspaces)++;
        *tables += k->n_tables;
    }
}

static int create_keyspace(cql_ctx *ctx, cql_session *s, cql_stmt *st, cql_result *r, cs_error *e)
{
    sch_catalog *c = ctx->cat;
    const ast_keyspace_def *d = &st->u.keyspace;
    if (ddl_check_modifiable(c, d->name, e)) return CS_EUSER;
    if (!valid_name(d->name))
        return cs_error_set(e, CS_ERR_INVALID, "Keyspace name must not be empty, more than 48 characters long, "
                            "or contain non-alphanumeric-underscore characters (got '%s')", d->name);
    if (cql__guard_max_on(ctx, s, CQL_GUARD_KEYSPACES)) {   /* CreateKeyspaceStatement.validate: user keyspaces + 1 */
        int nt, nk;
        count_schema(c, true, &nt, &nk);
        if (cql__guard_max(ctx, s, r, CQL_GUARD_KEYSPACES, nk + 1, d->name, e)) return CS_EUSER;
    }
    /* CreateKeyspaceStatement.apply order: property names, mandatory
     * replication, existence, then the strategy and its options */
    bool has_repl = false;
    for (int i = 0; i < d->props.n; i++) {
        const char *pn = d->props.items[i].name;
        if (strcmp(pn, "replication") && strcmp(pn, "durable_writes"))
            return cs_error_set(e, CS_ERR_SYNTAX, "Unknown property '%s'", pn);
        if (strcmp(pn, "replication") == 0) has_repl = true;
    }
    if (!has_repl) return cs_error_set(e, CS_ERR_INVALID, "Missing mandatory option 'replication'");
    if (sch_keyspace_find(c, d->name)) {
        if (d->if_not_exists) { cql_result_void(r); return 0; }
        return already_exists(e, d->name, NULL);
    }
    sch_keyspace *k = sch__keyspace_new(d->name);
    if (!k) return cs_error_set(e, CS_ERR_SERVER, "out of memory");
    if (ddl_apply_keyspace_props(k, &d->props, true, e)) { sch__keyspace_free(k); return CS_EUSER; }
    if (guard_min_rf(ctx, s, r, k, e)) { sch__keyspace_free(k); return CS_EUSER; }
    /* install first (may fail on OOM), then persist; undo on failure */
    if (sch__keyspace_add(c, k)) { sch__keyspace_free(k); return cs_error_set(e, CS_ERR_SERVER, "out of memory"); }
    st_mutation *m = st_mutation_new();
    int64_t ts_del = cs_write_ts_us();
    sch__rows_keyspace_drop(c, m, k->name, ts_del);   /* clear leftovers of an older incarnation */
    sch__rows_keyspace(c, m, k, cs_write_ts_us());
    int rc = sch__commit(c, m, e);
    st_mutation_free(m);
    if (rc) { sch__keyspace_remove(c, k); sch__keyspace_free(k); return rc; }
    sch__new_version(c);
    ddl_schema_change(r, "CREATED", "KEYSPACE", d->name, NULL);
    warn_rf(r, k);
    int nt, nk;
    count_schema(c, false, &nt, &nk);
    if (nk > 40)   /* keyspace_count_warn_threshold */
        cql_result_warn(r, "Cluster already contains %d keyspaces. Having a large number of keyspaces will significantly slow down schema dependent cluster operations.", nk);
    return 0;
}

static int alter_keyspace(cql_ctx *ctx, cql_session *s, cql_stmt *st, cql_result *r, cs_error *e)
{
    sch_catalog *c = ctx->cat;
    const ast_keyspace_def *d = &st->u.keyspace;
    sch_keyspace *k = sch_keyspace_find(c, d->name);
    if (k && k->is_virtual)
        return cs_error_set(e, CS_ERR_INVALID, "Virtual keyspace '%s' is not user-modifiable", d->name);
    if (strcmp(d->name, "system") == 0 || strcmp(d->name, "system_schema") == 0)
        return cs_error_set(e, CS_ERR_INVALID, "System keyspace '%s' is not user-modifiable", d->name);
    if (!k) {
        if (d->if_exists) { cql_result_void(r); return 0; }
        return cs_error_set(e, CS_ERR_INVALID, "Keyspace '%s' doesn't exist", d->name);
    }
    /* work on a scratch copy so a failure leaves k untouched */
    sch_keyspace tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.name = k->name;
    tmp.durable_writes = k->durable_writes;
    for (int i = 0; i < k->n_repl; i++) sch__kv_set(&tmp.repl_k, &tmp.repl_v, &tmp.n_repl, k->repl_k[i], k->repl_v[i]);
    if (ddl_apply_keyspace_props(&tmp, &d->props, false, e) || guard_min_rf(ctx, s, r, &tmp, e)) {
        sch__kv_free(tmp.repl_k, tmp.repl_v, tmp.n_repl);
        return CS_EUSER;
    }
    st_mutation *m = st_mutation_new();
    sch__rows_keyspace(c, m, &tmp, cs_write_ts_us());
    int rc = sch__commit(c, m, e);
    st_mutation_free(m);
    if (rc) { sch__kv_free(tmp.repl_k, tmp.repl_v, tmp.n_repl); return rc; }
    sch__kv_free(k->repl_k, k->repl_v, k->n_repl);
    k->repl_k = tmp.repl_k; k->repl_v = tmp.repl_v; k->n_repl = tmp.n_repl;
    k->durable_writes = tmp.durable_writes;
    sch__new_version(c);
    ddl_schema_change(r, "UPDATED", "KEYSPACE", d->name, NULL);
    if (!k->is_system) warn_rf(r, k);
    return 0;
}

static int drop_keyspace(cql_ctx *ctx, cql_stmt *st, cql_result *r, cs_error *e)
{
    sch_catalog *c = ctx->cat;
    const ast_keyspace_def *d = &st->u.keyspace;
    if (ddl_check_modifiable(c, d->name, e)) return CS_EUSER;
    sch_keyspace *k = sch_keyspace_find(c, d->name);
    if (!k) {
        if (d->if_exists) { cql_result_void(r); return 0; }
        return cs_error_set(e, CS_ERR_INVALID, "Keyspace '%s' doesn't exist", d->name);
    }
    st_mutation *m = st_mutation_new();
    sch__rows_keyspace_drop(c, m, k->name, cs_write_ts_us());
    int rc = sch__commit(c, m, e);
    st_mutation_free(m);
    if (rc) return rc;
    for (int i = 0; i < k->n_tables; i++) {
        cql_index_drop_table(ctx, k->tables[i]);   /* index hook (issue 5) */
        if (k->tables[i]->st) st_table_drop(k->tables[i]->st);
        k->tables[i]->st = NULL;
    }
    char name[256];
    snprintf(name, sizeof name, "%s", k->name);
    sch__keyspace_remove(c, k);
    sch__keyspace_free(k);
    sch__new_version(c);
    ddl_schema_change(r, "DROPPED", "KEYSPACE", name, NULL);
    return 0;
}

/* ---------------------------------------------------------------- CREATE TABLE */

static bool in_list(char **l, int n, const char *s)
{
    for (int i = 0; i < n; i++) if (strcmp(l[i], s) == 0) return true;
    return false;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* CreateTableStatement.validateCompactTable, in its order. */
static int validate_compact(const ast_create_table *ct, ctype **types, char **pk, int n_pk, char **ck, int n_ck,
                            bool has_static, cs_error *e)
{
    const char **cols = cs_calloc((size_t)ct->n_cols + 1, sizeof(char *));
    if (!cols) return cs_error_set(e, CS_ERR_SERVER, "out of memory");
    int n = 0, rc = 0;
    bool multicell = false;
    for (int i = 0; i < ct->n_cols; i++) {
        if (in_list(pk, n_pk, ct->cols[i].name) || in_list(ck, n_ck, ct->cols[i].name)) continue;
        cols[n++] = ct->cols[i].name;
        if (ctype_is_multicell(types[i])) multicell = true;
    }
    if (multicell)
        rc = cs_error_set(e, CS_ERR_INVALID, "Non-frozen collections and UDTs are not supported with COMPACT STORAGE");
    else if (has_static)
        rc = cs_error_set(e, CS_ERR_INVALID, "Static columns are not supported in COMPACT STORAGE tables");
    else if (n_ck == 0 && n == 0)
        rc = cs_error_set(e, CS_ERR_INVALID, "No definition found that is not part of the PRIMARY KEY");
    else if (n_ck > 0 && n > 1) {
        /* the non-key columns, as Cassandra's TreeMap keeps them: by name */
        qsort(cols, (size_t)n, sizeof *cols, name_cmp);
        cs_buf b;
        cs_buf_init(&b);
        for (int i = 0; i < n; i++) {
            if (i) sch__puts(&b, ", ");
            sch__puts(&b, cols[i]);
        }
        rc = cs_error_set(e, CS_ERR_INVALID, "COMPACT STORAGE with composite PRIMARY KEY allows no more than one column "
                          "not part of the PRIMARY KEY (got: %s)", sch__bufstr(&b) ? (char *)b.p : "");
        cs_buf_destroy(&b);
    }
    cs_free(cols);
    return rc;
}

/* A name no column of t has: base, then base1, base2... for "value"
 * (DefaultNames.defaultCompactValueName), base1, base2... for "column"
 * (defaultClusteringName). */
static void default_name(const sch_table *t, const char *base, bool bare_first, char *out, size_t cap)
{
    for (int k = bare_first ? 0 : 1;; k++) {
        if (k == 0) snprintf(out, cap, "%s", base);
        else snprintf(out, cap, "%s%d", base, k);
        bool used = false;
        for (int i = 0; i < t->n_cols; i++)
            if (strcmp(t->cols[i].name, out) == 0) used = true;
        if (!used) return;
    }
}

/* CreateTableStatement.fixupCompactTable: the flags and the hidden columns. */
static int add_compact_columns(sch_table *t, int n_ck, bool has_counter, cs_error *e)
{
    char name[64];
    int rc = 0;
    if (n_ck == 0) {
        t->compact = SCH_COMPACT_STATIC;
        default_name(t, "column", false, name, sizeof name);
        rc = sch__table_add_col(t, name, (ctype *)ctype_scalar(CT_VARCHAR), COL_CLUSTERING, 0, false);
        if (rc == 0) {
            default_name(t, "value", true, name, sizeof name);
            rc = sch__table_add_col(t, name, (ctype *)ctype_scalar(has_counter ? CT_COUNTER : CT_BLOB),
                                    COL_REGULAR, -1, false);
        }
    } else {
        t->compact = SCH_COMPACT_DENSE;
        bool has_regular = false;
        for (int i = 0; i < t->n_cols; i++)
            if (t->cols[i].kind == COL_REGULAR) has_regular = true;
        if (!has_regular) {
            default_name(t, "value", true, name, sizeof name);
            rc = sch__table_add_col(t, name, (ctype *)ctype_scalar(CT_EMPTY), COL_REGULAR, -1, false);
        }
    }
    return rc ? cs_error_set(e, CS_ERR_SERVER, "out of memory") : 0;
}

/* Validate the column list and primary key of CREATE TABLE and add the
 * columns to t (CreateTableStatement.builder). */
static int build_columns(sch_catalog *c, const ast_create_table *ct, const char *ks, sch_table *t, cs_error *e)
{
    const char *tn = ct->table.name;
    for (int i = 0; i < ct->n_cols; i++)
        for (int j = 0; j < i; j++)
            if (strcmp(ct->cols[i].name, ct->cols[j].name) == 0)
                return cs_error_set(e, CS_ERR_INVALID, "Duplicate column '%s' declaration for table '%s'", ct->cols[i].name, tn);
    /* primary key: inline or PRIMARY KEY (...) clause, exactly one */
    int inline_pk = -1, n_inline = 0;
    for (int i = 0; i < ct->n_cols; i++)
        if (ct->cols[i].primary_key) { inline_pk = i; n_inline++; }
    if (n_inline > 1 || (n_inline == 1 && ct->n_pk > 0))
        return cs_error_set(e, CS_ERR_INVALID, "Multiple PRIMARY KEY specified for table '%s' (exactly one required)", tn);
    if (n_inline == 0 && ct->n_pk == 0)
        return cs_error_set(e, CS_ERR_INVALID, "No PRIMARY KEY specifed for table '%s' (exactly one required)", tn);
    char *inl[1];
    char **pk = ct->pk;
    int n_pk = ct->n_pk;
    if (n_inline) { inl[0] = ct->cols[inline_pk].name; pk = inl; n_pk = 1; }
    char **ck = ct->ck;
    int n_ck = n_inline ? 0 : ct->n_ck;
    for (int i = 0; i < ct->n_clustering_order; i++)
        for (int j = 0; j < i; j++)
            if (strcmp(ct->clustering_order[i].column, ct->clustering_order[j].column) == 0)
                return cs_error_set(e, CS_ERR_INVALID, "Duplicate column '%s' in CLUSTERING ORDER BY clause for table '%s'",
                                    ct->clustering_order[i].column, tn);
    /* types */
    ctype **types = cs_calloc((size_t)ct->n_cols + 1, sizeof(ctype *));
    if (!types) return cs_error_set(e, CS_ERR_SERVER, "out of memory");
    int rc = 0;
    for (int i = 0; i < ct->n_cols && rc == 0; i++) {
        types[i] = ddl_parse_type(c, ct->cols[i].type, ks, e);
        if (!types[i]) { rc = CS_EUSER; break; }
        if (types[i]->kind == CT_UDT && !types[i]->frozen) {
            for (int f = 0; f < types[i]->n_sub; f++)
                if (ctype_is_multicell(types[i]->sub[f]))
                    rc = cs_error_set(e, CS_ERR_INVALID, "Non-frozen UDTs with nested non-frozen collections are not supported");
        }
    }
    /* key columns */
    for (int i = 0; rc == 0 && i < n_pk + n_ck; i++) {
        const char *name = i < n_pk ? pk[i] : ck[i - n_pk];
        int idx = -1;
        for (int j = 0; j < ct->n_cols; j++) if (strcmp(ct->cols[j].name, name) == 0) idx = j;
        if (idx < 0) { rc = cs_error_set(e, CS_ERR_INVALID, "Unknown column '%s' referenced in PRIMARY KEY for table '%s'", name, tn); break; }
        for (int j = 0; j < i; j++) {
            const char *o = j < n_pk ? pk[j] : ck[j - n_pk];
            if (strcmp(o, name) == 0) rc = cs_error_set(e, CS_ERR_INVALID, "Duplicate column '%s' in PRIMARY KEY clause for table '%s'", name, tn);
        }
        if (rc) break;
        const ctype *ty = types[idx];
        char tt[256];
        if (ctype_is_multicell(ty)) {
            type_text(ty, tt, sizeof tt);
            rc = cs_error_set(e, CS_ERR_INVALID, ty->kind == CT_UDT
                              ? "Invalid non-frozen user-defined type %s for PRIMARY KEY column '%s'"
                              : "Invalid non-frozen collection type %s for PRIMARY KEY column '%s'", tt, name);
        } else if (ty->kind == CT_COUNTER) {
            rc = cs_error_set(e, CS_ERR_INVALID, "counter type is not supported for PRIMARY KEY column '%s'", name);
        } else if (ctype_refs_duration(ty)) {
            rc = cs_error_set(e, CS_ERR_INVALID, "duration type is not supported for PRIMARY KEY column '%s'", name);
        } else if (ct->cols[idx].is_static) {
            rc = cs_error_set(e, CS_ERR_INVALID, "Static column '%s' cannot be part of the PRIMARY KEY", name);
        }
    }
    /* clustering order */
    if (rc == 0) {
        cs_buf bad;
        cs_buf_init(&bad);
        for (int i = 0; i < ct->n_clustering_order; i++) {
            if (!in_list(ck, n_ck, ct->clustering_order[i].column)) {
                sch__puts(&bad, bad.len ? ", " : "[");
                sch__puts(&bad, ct->clustering_order[i].column);
            }
        }
        if (bad.len) {
            sch__puts(&bad, "]");
            rc = cs_error_set(e, CS_ERR_INVALID, "Only clustering key columns can be defined in CLUSTERING ORDER directive: %s are not clustering columns",
                              sch__bufstr(&bad) ? (char *)bad.p : "");
        }
        cs_buf_destroy(&bad);
        for (int i = 0; rc == 0 && i < ct->n_clustering_order; i++) {
            const char *id = ct->clustering_order[i].column, *cc = ck[i];
            if (strcmp(id, cc) != 0) {
                bool listed = false;
                for (int j = 0; j < ct->n_clustering_order; j++)
                    if (strcmp(ct->clustering_order[j].column, cc) == 0) listed = true;
                rc = listed ? cs_error_set(e, CS_ERR_INVALID, "The order of columns in the CLUSTERING ORDER directive must match that of the clustering columns (%s must appear before %s)", cc, id)
                            : cs_error_set(e, CS_ERR_INVALID, "Missing CLUSTERING ORDER for column %s", cc);
            }
        }
    }
    /* statics, counters */
    bool has_static = false, has_counter = false, has_noncounter = false;
    for (int i = 0; rc == 0 && i < ct->n_cols; i++) {
        const char *name = ct->cols[i].name;
        if (in_list(pk, n_pk, name) || in_list(ck, n_ck, name)) continue;
        if (ct->cols[i].is_static) has_static = true;
        if (types[i]->kind == CT_COUNTER) has_counter = true; else has_noncounter = true;
    }
    if (rc == 0 && ct->compact_storage)
        rc = validate_compact(ct, types, pk, n_pk, ck, n_ck, has_static, e);
    else if (rc == 0 && n_ck == 0 && has_static)
        rc = cs_error_set(e, CS_ERR_INVALID, "Static columns are only useful (and thus allowed) if the table has at least one clustering column");
    if (rc == 0 && has_counter && has_noncounter)
        rc = cs_error_set(e, CS_ERR_INVALID, "Cannot mix counter and non counter columns in the same table");
    if (rc == 0 && has_counter && t->default_ttl_s > 0)
        rc = cs_error_set(e, CS_ERR_INVALID, "Cannot set default_time_to_live on a table with counters");
    /* add */
    for (int i = 0; rc == 0 && i < ct->n_cols; i++) {
        const char *name = ct->cols[i].name;
        sch_col_kind kind = COL_REGULAR;
        int pos = -1;
        bool desc = false;
        for (int j = 0; j < n_pk; j++) if (strcmp(pk[j], name) == 0) { kind = COL_PARTITION_KEY; pos = j; }
        for (int j = 0; j < n_ck; j++) if (strcmp(ck[j], name) == 0) { kind = COL_CLUSTERING; pos = j; }
        if (kind == COL_REGULAR && (ct->cols[i].is_static || (ct->compact_storage && n_ck == 0)))
            kind = COL_STATIC;      /* a static compact table's declared columns are static */
        if (kind == COL_CLUSTERING)
            for (int j = 0; j < ct->n_clustering_order; j++)
                if (strcmp(ct->clustering_order[j].column, name) == 0) desc = ct->clustering_order[j].desc;
        rc = sch__table_add_col(t, name, types[i], kind, pos, desc);
        types[i] = NULL;
        if (rc) rc = cs_error_set(e, CS_ERR_SERVER, "out of memory");
    }
    for (int i = 0; i < ct->n_cols; i++) if (types[i]) ctype_unref(types[i]);
    cs_free(types);
    if (rc == 0 && ct->compact_storage)
        rc = add_compact_columns(t, n_ck, has_counter, e);
    if (rc) return CS_EUSER;
    return sch__table_finish(t, e) ? CS_EUSER : 0;
}

static int create_table(cql_ctx *ctx, cql_session *s, cql_stmt *st, cql_result *r, cs_error *e)
{
    sch_catalog *c = ctx->cat;
    const ast_create_table *ct = &st->u.create_table;
    const char *ks = ddl_keyspace_of(&ct->table, s, e);
    if (!ks) return CS_EUSER;
    if (ddl_check_modifiable(c, ks, e)) return CS_EUSER;
    if (cql__guard_applies(ctx, s)) {   /* CreateTableStatement.validate: properties, columns, tables, compact storage */
        if (cql__guard_table_props(ctx, s, r, &ct->props, e)) return CS_EUSER;
        if (cql__guard_max(ctx, s, r, CQL_GUARD_COLUMNS_PER_TABLE, ct->n_cols, ct->table.name, e)) return CS_EUSER;
        if (cql__guard_max_on(ctx, s, CQL_GUARD_TABLES)) {
            int nt, nk;   /* tables and views of user keyspaces: each a ColumnFamilyStore */
            count_schema(c, true, &nt, &nk);
            if (cql__guard_max(ctx, s, r, CQL_GUARD_TABLES, nt + 1, ct->table.name, e)) return CS_EUSER;
        }
        if (ct->compact_storage &&
            cql__guard_flag(ctx, s, ctx->cfg.guard.compact_tables, "compact_tables",
                            "Creation of new COMPACT STORAGE tables", e)) return CS_EUSER;
    }
    sch_keyspace *k = sch_keyspace_find(c, ks);
    if (!k) return cs_error_set(e, CS_ERR_INVALID, "Keyspace '%s' doesn't exist", ks);
    if (sch_table_find(c, ks, ct->table.name)) {
        if (ct->if_not_exists) { cql_result_void(r); return 0; }
        return already_exists(e, ks, ct->table.name);
    }
    sch_table *t = sch__table_new(k, ct->table.name);
    if (!t) return cs_error_set(e, CS_ERR_SERVER, "out of memory");
    cs_uuid id;
    cs_uuid_timeuuid(&id, cs_now_us());
    memcpy(t->id, id.b, 16);
    ast_props props;   /* without the properties the guardrail ignores */
    int rc = cql__guard_props_kept(ctx, s, &ct->props, &props, e);
    if (rc == 0) rc = ddl_apply_table_props(t, &props, false, false, e);
    if (props.items != ct->props.items) cs_free(props.items);
    if (rc == 0) rc = build_columns(c, ct, ks, t, e);
    if (rc == 0 && !valid_name(t->name))
        rc = cs_error_set(e, CS_ERR_CONFIG, "Table name must not be empty, more than 48 characters long, or contain "
                          "non-alphanumeric-underscore characters (got \"%s\")", t->name);
    if (rc == 0 && sch_table_by_id(c, t->id))
        rc = cs_error_set(e, CS_ERR_CONFIG, "Table id already in use");
    if (rc == 0 && ddl_uncompressed(t) && !ddl_uncompressed_ok(ctx, s))   /* CreateTableStatement.apply */
        rc = ddl_uncompressed_refused(e);
    bool added = false;
    if (rc == 0) {
        if (sch__ks_add_table(k, t)) rc = cs_error_set(e, CS_ERR_SERVER, "out of memory");
        else added = true;
    }
    if (rc == 0) rc = ddl_write_table(c, t, e);
    if (rc == 0) {
        st_table_opts o;
        sch__table_st_opts(t, &o);
        int src = st_table_open(c->eng, t->id, ks, t->name, &o, &t->st);
        if (src) rc = cs_error_set(e, CS_ERR_SERVER, "Cannot create table storage: %s", cs_strerror(src));
    }
    if (rc) {
        if (added) sch__ks_remove_table(k, t);
        sch__table_free(t);
        return CS_EUSER;
    }
    sch__new_version(c);
    ddl_schema_change(r, "CREATED", "TABLE", ks, t->name);
    int nt, nk;
    count_schema(c, false, &nt, &nk);
    if (nt > 150)   /* table_count_warn_threshold */
        cql_result_warn(r, "Cluster already contains %d tables in %d keyspaces. Having a large number of tables will significantly slow down schema dependent cluster operations.", nt, nk);
    return 0;
}

/* ---------------------------------------------------------------- DROP TABLE / TRUNCATE */

/* Guardrail drop_truncate_table_enabled, for both statements. */
static int guard_drop_truncate(cql_ctx *ctx, const cql_session *s, cs_error *e)
{
    return cql__guard_flag(ctx, s, ctx->cfg.guard.drop_truncate_table, "drop_truncate_table_enabled",
                           "DROP and TRUNCATE TABLE functionality", e);
}

static int drop_table(cql_ctx *ctx, cql_session *s, cql_stmt *st, cql_result *r, cs_error *e)
{
    sch_catalog *c = ctx->cat;
    const ast_drop *d = &st->u.drop;
    const char *ks = ddl_keyspace_of(&d->name, s, e);
    if (!ks) return CS_EUSER;
    if (ddl_check_modifiable(c, ks, e)) return CS_EUSER;
    if (guard_drop_truncate(ctx, s, e)) return CS_EUSER;   /* DropTableStatement.apply, first */
    sch_keyspace *k = sch_keyspace_find(c, ks);
    if (!k) {
        if (d->if_exists) { cql_result_void(r); return 0; }
        return cs_error_set(e, CS_ERR_INVALID, "Keyspace '%s' doesn't exist", ks);
    }
    sch_table *t = sch_table_find(c, ks, d->name.name);
    if (!t) {
        if (d->if_exists) { cql_result_void(r); return 0; }
        return cs_error_set(e, CS_ERR_INVALID, "Table '%s.%s' doesn't exist", ks, d->name.name);
    }
    if (t->is_view)
        return cs_error_set(e, CS_ERR_INVALID, "Cannot use DROP TABLE on a materialized view. Please use DROP MATERIALIZED VIEW instead.");
    if (t->n_views > 0) {
        /* Cassandra 4.1 (DropTableStatement) formats the keyspace name here, not the views */
        return cs_error_set(e, CS_ERR_INVALID, "Cannot drop a table when materialized views still depend on it (%s)", ks);
    }
    st_mutation *m = st_mutation_new();
    sch__rows_table_drop(c, m, t, cs_write_ts_us());
    int rc = sch__commit(c, m, e);
    st_mutation_free(m);
    if (rc) return rc;
    cql_index_drop_table(ctx, t);   /* index hook (issue 5): hidden index tables */
    if (t->st) st_table_drop(t->st);
    t->st = NULL;
    char name[256];
    snprintf(name, sizeof name, "%s", t->name);
    sch__ks_remove_table(k, t);
    sch__table_free(t);
    sch__new_version(c);
    ddl_schema_change(r, "DROPPED", "TABLE", ks, name);
    return 0;
}

static int truncate_table(cql_ctx *ctx, cql_session *s, cql_stmt *st, cql_result *r, cs_error *e)
{
    const ast_drop *d = &st->u.drop;
    sch_table *t = sch_resolve_table(ctx->cat, d->name.ks, d->name.name, s ? s->keyspace : NULL, e);
    if (!t) return CS_EUSER;
    if (guard_drop_truncate(ctx, s, e)) return CS_EUSER;   /* TruncateStatement.validate */
    if (t->is_view)
        return cs_error_set(e, CS_ERR_INVALID, "Cannot TRUNCATE materialized view directly; must truncate base table instead");
    if (t->ks->is_virtual)   /* AbstractVirtualTable.truncate */
        return cs_error_set(e, CS_ERR_INVALID, "Truncation is not supported by table %s.%s", t->ks->name, t->name);
    if (strcmp(t->ks->name, "system_schema") == 0)
        return cs_error_set(e, CS_ERR_INVALID, "System keyspace '%s' is not user-modifiable", t->ks->name);
    int rc = t->st ? st_table_truncate(t->st) : 0;
    for (int i = 0; rc == 0 && i < t->n_views; i++)
        if (t->views[i]->st) rc = st_table_truncate(t->views[i]->st);
    if (rc == 0) rc = cql_index_truncate_table(ctx, t);   /* index hook (issue 5) */
    if (rc) return cs_error_set(e, CS_ERR_TRUNCATE, "Error during truncate: %s", cs_strerror(rc));
    cql_result_void(r);
    return 0;
}

/* ---------------------------------------------------------------- dispatch */

static int exec_ddl(cql_ctx *ctx, cql_session *s, cql_stmt *st, cql_result *r, cs_error *e);

/* Run a schema statement; in batch/group commit modes the reply waits for
 * the schema write to be durable (r->need_sync). */
int cql_exec_ddl(cql_ctx *ctx, cql_session *s, cql_stmt *st, cql_result *r, cs_error *e)
{
    int rc = exec_ddl(ctx, s, st, r, e);
    if (rc == 0 && r->schema_changed && st_sync_needed(ctx->eng)) {
        r->need_sync = true;
        r->sync_pos = ctx->cat->last_pos;
    }
    return rc;
}

/* ---------------------------------------------------------------- FUNCTION / AGGREGATE */

/* CREATE/DROP FUNCTION/AGGREGATE: cassette has no user-defined functions
 * (user_defined_functions_enabled is false), so creation is refused and
 * no function exists to drop.  The keyspace is judged first, as
 * AlterSchemaStatement.execute does before the statement's own apply:
 * the local system keyspaces (SchemaConstants.isLocalSystemKeyspace, so
 * the native functions' `system` too), then a virtual keyspace. */
static int function_statement(cql_ctx *ctx, cql_session *s, cql_stmt *st, cql_result *r, cs_error *e)
{
    static const char *const local[] = { "system", "system_schema", "system_views", "system_virtual_schema" };
    const ast_drop *d = &st->u.drop;
    const char *ks = ddl_keyspace_of(&d->name, s, e);
    if (!ks)
        return CS_EUSER;
    for (size_t i = 0; i < sizeof local / sizeof local[0]; i++)
        if (!strcmp(ks, local[i]))
            return cs_error_set(e, CS_ERR_INVALID, "System keyspace '%s' is not user-modifiable", ks);
    sch_keyspace *k = sch_keyspace_find(ctx->cat, ks);
    if (k && k->is_virtual)
        return cs_error_set(e, CS_ERR_INVALID, "Virtual keyspace '%s' is not user-modifiable", ks);
    if (st->kind == STMT_CREATE_FUNCTION || st->kind == STMT_CREATE_AGGREGATE)
        return cs_error_set(e, CS_ERR_INVALID,
                            "User-defined functions are disabled in cassandra.yaml - set user_defined_functions_enabled=true to enable");
    if (d->if_exists) {
        cql_result_void(r);
        return 0;
    }
    /* DropFunctionStatement / DropAggregateStatement name it with the
     * argument types when they were given */
    return cs_error_set(e, CS_ERR_INVALID, "%s '%s.%s%s%s%s' doesn't exist",
                        st->kind == STMT_DROP_FUNCTION ? "Function" : "Aggregate", ks, d->name.name,
                        d->fn_args ? "(" : "", d->fn_args ? d->fn_args : "", d->fn_args ? ")" : "");
}

static int exec_ddl(cql_ctx *ctx, cql_session *s, cql_stmt *st, cql_result *r, cs_error *e)
{
    switch (st->kind) {
    case STMT_USE: return cql_exec_use(ctx, s, st, r, e);
    case STMT_CREATE_KEYSPACE: return create_keyspace(ctx, s, st, r, e);
    case STMT_ALTER_KEYSPACE: return alter_keyspace(ctx, s, st, r, e);
    case STMT_DROP_KEYSPACE: return drop_keyspace(ctx, st, r, e);
    case STMT_CREATE_TABLE: return create_table(ctx, s, st, r, e);
    case STMT_ALTER_TABLE: return ddl_alter_table(ctx, s, st, r, e);
    case STMT_DROP_TABLE: return drop_table(ctx, s, st, r, e);
    case STMT_TRUNCATE: return truncate_table(ctx, s, st, r, e);
    case STMT_CREATE_TYPE: return ddl_create_type(ctx, s, st, r, e);
    case STMT_ALTER_TYPE: return ddl_alter_type(ctx, s, st, r, e);
    case STMT_DROP_TYPE: return ddl_drop_type(ctx, s, st, r, e);
    case STMT_CREATE_INDEX: return ddl_create_index(ctx, s, st, r, e);
    case STMT_DROP_INDEX: return ddl_drop_index(ctx, s, st, r, e);
    case STMT_CREATE_VIEW: return ddl_create_view(ctx, s, st, r, e);
    case STMT_ALTER_VIEW: return ddl_alter_view(ctx, s, st, r, e);
    case STMT_DROP_VIEW: return ddl_drop_view(ctx, s, st, r, e);
    case STMT_CREATE_FUNCTION:
    case STMT_CREATE_AGGREGATE:
    case STMT_DROP_FUNCTION:
    case STMT_DROP_AGGREGATE:
        return function_statement(ctx, s, st, r, e);
    case STMT_AUTH:
        return cql__exec_auth(ctx, s, st, r, e);
    default:
        return cs_error_set(e, CS_ERR_SERVER, "statement is not a schema statement");
    }
}
