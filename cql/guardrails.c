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

void cql__guard_threshold(const cql_ctx *ctx, int g, long long th[2])
{
    const cql_guard_threshold_def *d = &cql_guard_thresholds[g];
    const char *f = (const char *)&ctx->cfg.guard + d->off;
    for (int i = 0; i < 2; i++)
        th[i] = d->bytes ? ((const int64_t *)(const void *)f)[i] : ((const int *)(const void *)f)[i];
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
    const char *name = cql_guard_thresholds[g].name;
    bool min = cql_guard_thresholds[g].min;
    if (th[1] > 0 && (min ? value < th[1] : value > th[1])) {
        max_message(g, false, what, value, th[1], m, sizeof m);
        return cs_error_set(e, CS_ERR_INVALID, "Guardrail %s violated: %s", name, m);
    }
    if (th[0] > 0 && (min ? value < th[0] : value > th[0]) && r) {
        max_message(g, true, what, value, th[0], m, sizeof m);
        cql_result_warn(r, "Guardrail %s violated: %s", name, m);
    }
    return 0;
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
        cql_consistency_set_text(dis & levels, a, sizeof a);
        cql_consistency_set_text(dis, b, sizeof b);
        return cs_error_set(e, CS_ERR_INVALID, "Guardrail %s violated: Provided values %s are not allowed for %s (disallowed values are: %s)",
                            name, a, what, b);
    }
    if (r) {
        cql_consistency_set_text(warned & levels, a, sizeof a);
        cql_consistency_set_text(warned, b, sizeof b);
        cql_result_warn(r, "Guardrail %s violated: Provided values %s are not recommended for %s (warned values are: %s)",
                        name, a, what, b);
    }
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
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
        const char *hit[CQL_TABLE_PROPERTIES];
        int nh = 0, nc = g->n_table_props[w];
        for (int i = 0; i < nc; i++) {
            const char *conf = cql_table_property_name(g->table_props[w][i]);
            for (int j = 0; j < in->n; j++)
                if (!strcmp(in->items[j].name, conf)) {
                    hit[nh++] = conf;
                    break;
                }
        }
        if (!nh)
            continue;
        qsort(hit, (size_t)nh, sizeof hit[0], cmp_str);
        char a[600], b[600];
        cql_name_list(hit, nh, a, sizeof a);
        cql_table_props_text(g->table_props[w], nc, b, sizeof b);
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
