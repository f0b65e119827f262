/*
 * guardrails.c: Cassandra 4.1's guardrails (db/guardrails), configured in
 * cassandra.yaml (cql_config.guard) and applied, as Guardrail.enabled
 * does, to ordinary users only: with PasswordAuthenticator, a role that is
 * not a superuser (ClientState.isOrdinaryUser).  Under
 * AllowAllAuthenticator every session is a superuser, so none applies.
 *
 * Each guardrail keeps Cassandra's name and words: a warning goes to the
 * response's warnings, a failure is an InvalidRequest (GuardrailViolated-
 * Exception), both as "Guardrail <name> violated: <message>".  The call
 * sites are where Cassandra's statements call them (see cql_int.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cql/cql_int.h"
#include "common/alloc.h"

bool cql__guard_applies(cql_ctx *ctx, const cql_session *s)
{
    return s && ctx->cfg.password_authenticator && !cql__authz_is_super(ctx, s);
}

/* DisableFlag.ensureEnabled: "<what> is not allowed" */
int cql__guard_flag(cql_ctx *ctx, const cql_session *s, bool enabled, const char *name, const char *what,
                    cs_error *e)
{
    if (enabled || !cql__guard_applies(ctx, s))
        return 0;
    return cs_error_set(e, CS_ERR_INVALID, "Guardrail %s violated: %s is not allowed", name, what);
}

/* The MaxThreshold messages of Guardrails.java, by guardrail. */
static void max_message(int g, bool warn, const char *what, long long v, long long th, char *m, size_t n)
{
    switch (g) {
    case CQL_GUARD_KEYSPACES:
        if (warn) snprintf(m, n, "Creating keyspace %s, current number of keyspaces %lld exceeds warning threshold of %lld.", what, v, th);
        else snprintf(m, n, "Cannot have more than %lld keyspaces, aborting the creation of keyspace %s", th, what);
        break;
    case CQL_GUARD_TABLES:
        if (warn) snprintf(m, n, "Creating table %s, current number of tables %lld exceeds warning threshold of %lld.", what, v, th);
        else snprintf(m, n, "Cannot have more than %lld tables, aborting the creation of table %s", th, what);
        break;
    case CQL_GUARD_COLUMNS_PER_TABLE:
        if (warn) snprintf(m, n, "The table %s has %lld columns, this exceeds the warning threshold of %lld.", what, v, th);
        else snprintf(m, n, "Tables cannot have more than %lld columns, but %lld provided for table %s", th, v, what);
        break;
    case CQL_GUARD_SECONDARY_INDEXES_PER_TABLE:
        if (warn) snprintf(m, n, "Creating secondary index %s, current number of indexes %lld exceeds warning threshold of %lld.", what, v, th);
        else snprintf(m, n, "Tables cannot have more than %lld secondary indexes, aborting the creation of secondary index %s", th, what);
        break;
    case CQL_GUARD_MATERIALIZED_VIEWS_PER_TABLE:
        if (warn) snprintf(m, n, "Creating materialized view %s, current number of views %lld exceeds warning threshold of %lld.", what, v, th);
        else snprintf(m, n, "Tables cannot have more than %lld materialized views, aborting the creation of materialized view %s", th, what);
        break;
    case CQL_GUARD_PAGE_SIZE:
        if (warn) snprintf(m, n, "Query for table %s with page size %lld exceeds warning threshold of %lld.", what, v, th);
        else snprintf(m, n, "Aborting query for table %s, page size %lld exceeds fail threshold of %lld.", what, v, th);
        break;
    case CQL_GUARD_PARTITION_KEYS_IN_SELECT:
        if (warn) snprintf(m, n, "Query with partition keys in IN clause on table %s, with number of partition keys %lld exceeds warning threshold of %lld.", what, v, th);
        else snprintf(m, n, "Aborting query with partition keys in IN clause on table %s, number of partition keys %lld exceeds fail threshold of %lld.", what, v, th);
        break;
    case CQL_GUARD_IN_SELECT_CARTESIAN_PRODUCT:
        if (warn) snprintf(m, n, "The cartesian product of the IN restrictions on %s produces %lld values, this exceeds warning threshold of %lld.", what, v, th);
        else snprintf(m, n, "Aborting query because the cartesian product of the IN restrictions on %s produces %lld values, this exceeds fail threshold of %lld.", what, v, th);
        break;
    case CQL_GUARD_COLLECTION_SIZE:
        snprintf(m, n, "Detected collection %s of size %lld, this exceeds the %s threshold of %lld.", what, v,
                 warn ? "warning" : "failure", th);
        break;
    case CQL_GUARD_ITEMS_PER_COLLECTION:
        snprintf(m, n, "Detected collection %s with %lld items, this exceeds the %s threshold of %lld.", what, v,
                 warn ? "warning" : "failure", th);
        break;
    case CQL_GUARD_MINIMUM_REPLICATION_FACTOR:
        snprintf(m, n, "The keyspace %s has a replication factor of %lld, below the %s threshold of %lld.", what, v,
                 warn ? "warning" : "failure", th);
        break;
    default:   /* CQL_GUARD_FIELDS_PER_UDT */
        if (warn) snprintf(m, n, "The user type %s has %lld columns, this exceeds the warning threshold of %lld.", what, v, th);
        else snprintf(m, n, "User types cannot have more than %lld columns, but %lld provided for user type %s.", th, v, what);
        break;
    }
}

static const char *const max_names[] = {
    [CQL_GUARD_KEYSPACES] = "keyspaces", [CQL_GUARD_TABLES] = "tables",
    [CQL_GUARD_COLUMNS_PER_TABLE] = "columns_per_table",
    [CQL_GUARD_SECONDARY_INDEXES_PER_TABLE] = "secondary_indexes_per_table",
    [CQL_GUARD_MATERIALIZED_VIEWS_PER_TABLE] = "materialized_views_per_table",
    [CQL_GUARD_PAGE_SIZE] = "page_size", [CQL_GUARD_PARTITION_KEYS_IN_SELECT] = "partition_keys_in_select",
    [CQL_GUARD_FIELDS_PER_UDT] = "fields_per_udt", [CQL_GUARD_ITEMS_PER_COLLECTION] = "items_per_collection",
    [CQL_GUARD_COLLECTION_SIZE] = "collection_size",
    [CQL_GUARD_IN_SELECT_CARTESIAN_PRODUCT] = "in_select_cartesian_product",
    [CQL_GUARD_MINIMUM_REPLICATION_FACTOR] = "minimum_replication_factor",
};

void cql__guard_threshold(const cql_ctx *ctx, int g, long long th[2])
{
    const struct cql_guardrails *c = &ctx->cfg.guard;
    if (g == CQL_GUARD_COLLECTION_SIZE) {
        th[0] = c->collection_size[0];
        th[1] = c->collection_size[1];
        return;
    }
    const int *v;
    switch (g) {
    case CQL_GUARD_KEYSPACES: v = c->keyspaces; break;
    case CQL_GUARD_TABLES: v = c->tables; break;
    case CQL_GUARD_COLUMNS_PER_TABLE: v = c->columns_per_table; break;
    case CQL_GUARD_SECONDARY_INDEXES_PER_TABLE: v = c->secondary_indexes_per_table; break;
    case CQL_GUARD_MATERIALIZED_VIEWS_PER_TABLE: v = c->materialized_views_per_table; break;
    case CQL_GUARD_PAGE_SIZE: v = c->page_size; break;
    case CQL_GUARD_PARTITION_KEYS_IN_SELECT: v = c->partition_keys_in_select; break;
    case CQL_GUARD_ITEMS_PER_COLLECTION: v = c->items_per_collection; break;
    case CQL_GUARD_MINIMUM_REPLICATION_FACTOR: v = c->minimum_replication_factor; break;
    case CQL_GUARD_IN_SELECT_CARTESIAN_PRODUCT: v = c->in_select_cartesian_product; break;
    default: v = c->fields_per_udt; break;
    }
    th[0] = v[0];
    th[1] = v[1];
}

bool cql__guard_max_on(cql_ctx *ctx, const cql_session *s, int g)
{
    long long th[2];
    cql__guard_threshold(ctx, g, th);
    return (th[0] > 0 || th[1] > 0) && cql__guard_applies(ctx, s);
}

/* MaxThreshold.guard: over the fail threshold fails, else over the warn
 * one warns (r may be NULL: no warning to give); MinThreshold's, below. */
int cql__guard_max(cql_ctx *ctx, const cql_session *s, cql_result *r, int g, long long value, const char *what,
                   cs_error *e)
{
    if (!cql__guard_max_on(ctx, s, g))
        return 0;
    long long th[2];
    cql__guard_threshold(ctx, g, th);
    char m[700];
    bool min = g == CQL_GUARD_MINIMUM_REPLICATION_FACTOR;
    if (th[1] > 0 && (min ? value < th[1] : value > th[1])) {
        max_message(g, false, what, value, th[1], m, sizeof m);
        return cs_error_set(e, CS_ERR_INVALID, "Guardrail %s violated: %s", max_names[g], m);
    }
    if (th[0] > 0 && (min ? value < th[0] : value > th[0]) && r) {
        max_message(g, true, what, value, th[0], m, sizeof m);
        cql_result_warn(r, "Guardrail %s violated: %s", max_names[g], m);
    }
    return 0;
}


/* A Java Set<ConsistencyLevel> as its toString prints it: "[ONE, ALL]", in
 * the enum's order (Sets.immutableEnumSet). */
static void cl_list(uint32_t bits, char *m, size_t n)
{
    size_t k = (size_t)snprintf(m, n, "[");
    bool first = true;
    for (unsigned i = 0; cql_consistency_level_name(i) && k < n; i++)
        if (bits & (1u << i)) {
            k += (size_t)snprintf(m + k, n - k, "%s%s", first ? "" : ", ", cql_consistency_level_name(i));
            first = false;
        }
    if (k < n)
        snprintf(m + k, n - k, "]");
}

/* Values<ConsistencyLevel>.guard for read_consistency_levels or
 * write_consistency_levels: the request's levels (a write's with its
 * serial consistency) against the disallowed, then the warned ones. */
int cql__guard_cl(cql_ctx *ctx, const cql_session *s, cql_result *r, bool write, uint32_t levels, cs_error *e)
{
    const struct cql_guardrails *c = &ctx->cfg.guard;
    uint32_t dis = write ? c->write_cl_disallowed : c->read_cl_disallowed;
    uint32_t warned = write ? c->write_cl_warned : c->read_cl_warned;
    if (!((dis | warned) & levels) || !cql__guard_applies(ctx, s))
        return 0;
    const char *name = write ? "write_consistency_levels" : "read_consistency_levels";
    const char *what = write ? "write consistency levels" : "read consistency levels";
    char a[200], b[200];
    if (dis & levels) {
        cl_list(dis & levels, a, sizeof a);
        cl_list(dis, b, sizeof b);
        return cs_error_set(e, CS_ERR_INVALID, "Guardrail %s violated: Provided values %s are not allowed for %s (disallowed values are: %s)",
                            name, a, what, b);
    }
    if (r) {
        cl_list(warned & levels, a, sizeof a);
        cl_list(warned, b, sizeof b);
        cql_result_warn(r, "Guardrail %s violated: Provided values %s are not recommended for %s (warned values are: %s)",
                        name, a, what, b);
    }
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* "[a, b]" of names[0..n) */
static void name_list(const char **names, int n, char *m, size_t cap)
{
    size_t k = (size_t)snprintf(m, cap, "[");
    for (int i = 0; i < n && k < cap; i++)
        k += (size_t)snprintf(m + k, cap - k, "%s%s", i ? ", " : "", names[i]);
    if (k < cap)
        snprintf(m + k, cap - k, "]");
}

int cql__guard_table_props(cql_ctx *ctx, const cql_session *s, cql_result *r, const ast_props *in, cs_error *e)
{
    const struct cql_guardrails *g = &ctx->cfg.guard;
    if (!(g->n_table_props[0] || g->n_table_props[1] || g->n_table_props[2]) || !in->n || !cql__guard_applies(ctx, s))
        return 0;
    static const char *const fmt[3] = {
        "Guardrail table_properties violated: Provided values %s are not recommended for Table Properties (warned values are: %s)",
        "Guardrail table_properties violated: Ignoring provided values %s as they are not supported for Table Properties (ignored values are: %s)",
        "Guardrail table_properties violated: Provided values %s are not allowed for Table Properties (disallowed values are: %s)",
    };
    for (int w = 2; w >= 0; w--) {   /* Values.guard: disallowed, ignored, warned */
        const char *hit[CQL_TABLE_PROPERTIES], *conf[CQL_TABLE_PROPERTIES];
        int nh = 0, nc = g->n_table_props[w];
        for (int i = 0; i < nc; i++) {
            conf[i] = cql_table_property_name(g->table_props[w][i]);
            for (int j = 0; j < in->n; j++)
                if (!strcmp(in->items[j].name, conf[i])) {
                    hit[nh++] = conf[i];
                    break;
                }
        }
        if (!nh)
            continue;
        qsort(hit, (size_t)nh, sizeof hit[0], cmp_str);
        cql_java_hashset_order(conf, nc);
        char a[600], b[600];
        name_list(hit, nh, a, sizeof a);
        name_list(conf, nc, b, sizeof b);
        if (w == 2)
            return cs_error_set(e, CS_ERR_INVALID, fmt[2], a, b);
        if (r)
            cql_result_warn(r, fmt[w], a, b);
    }
    return 0;
}

int cql__guard_props_kept(cql_ctx *ctx, const cql_session *s, const ast_props *in, ast_props *out, cs_error *e)
{
    *out = *in;
    const struct cql_guardrails *g = &ctx->cfg.guard;
    if (!g->n_table_props[1] || !in->n || !cql__guard_applies(ctx, s))
        return 0;
    int kept = 0;
    ast_prop *items = cs_malloc(sizeof *items * (size_t)in->n);
    if (!items)
        return cs_error_set(e, CS_ERR_SERVER, "out of memory");
    for (int i = 0; i < in->n; i++) {
        bool ignored = false;
        for (int j = 0; j < g->n_table_props[1] && !ignored; j++)
            ignored = !strcmp(in->items[i].name, cql_table_property_name(g->table_props[1][j]));
        if (!ignored)
            items[kept++] = in->items[i];
    }
    if (kept == in->n) {
        cs_free(items);
        return 0;
    }
    out->items = items;
    out->n = kept;
    return 0;
}

int cql__guard_in_product(cql_ctx *ctx, const cql_session *s, cql_result *r, const int *raw, int n, const char *what,
                          cs_error *e)
{
    if (!cql__guard_max_on(ctx, s, CQL_GUARD_IN_SELECT_CARTESIAN_PRODUCT))
        return 0;
    long long p = 1;
    for (int i = 0; i < n; i++) {
        p = raw[i] > 0 && p > (1LL << 40) ? p : p * raw[i];
        if (cql__guard_max(ctx, s, r, CQL_GUARD_IN_SELECT_CARTESIAN_PRODUCT, p, what, e))
            return CS_EUSER;
    }
    return 0;
}
