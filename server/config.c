/*
 * config.c: the YAML-subset reader for cassandra.yaml-style configuration
 * (see config.h for the subset).  Each known key has one row in `keys`:
 * its name (the 4.1 name), the unit a bare number means for the legacy
 * `_in_ms`/`_in_kb`/`_in_mb` spelling, and a setter.
 */
#include "server/config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdarg.h>
#include <netdb.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/err.h"
#include "common/log.h"
#include "common/util.h"

/* ------------------------------------------------------------ units */

static const char *skip_ws(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* Parse a leading non-negative integer; *end after it.  CS_EINVAL if none. */
static int parse_num(const char *s, long long *v, const char **end)
{
    s = skip_ws(s);
    if (!isdigit((unsigned char)*s))
        return CS_EINVAL;
    errno = 0;
    char *e;
    long long n = strtoll(s, &e, 10);
    if (errno)
        return CS_EINVAL;
    *v = n;
    *end = skip_ws(e);
    return 0;
}

int config_parse_duration_ms(const char *s, long long def_unit_ms, long long *out)
{
    long long n;
    const char *u;
    if (parse_num(s, &n, &u))
        return CS_EINVAL;
    static const struct { const char *u; long long num, den; } units[] = {
        { "ms", 1, 1 }, { "s", 1000, 1 }, { "m", 60000, 1 }, { "h", 3600000, 1 },
        { "d", 86400000, 1 }, { "us", 1, 1000 }, { "\xc2\xb5s", 1, 1000 }, { "ns", 1, 1000000 },
    };
    if (*u == '\0') {
        *out = n * def_unit_ms;
        return 0;
    }
    for (size_t i = 0; i < CS_ARRAY_LEN(units); i++) {
        if (strcmp(u, units[i].u) == 0) {
            *out = n * units[i].num / units[i].den;
            return 0;
        }
    }
    return CS_EINVAL;
}

int config_parse_size(const char *s, long long def_unit_bytes, long long *out)
{
    long long n;
    const char *u;
    if (parse_num(s, &n, &u))
        return CS_EINVAL;
    static const struct { const char *u; long long mul; } units[] = {
        { "B", 1 }, { "KiB", 1024 }, { "MiB", 1024 * 1024 }, { "GiB", 1024LL * 1024 * 1024 },
    };
    if (*u == '\0') {
        *out = n * def_unit_bytes;
        return 0;
    }
    for (size_t i = 0; i < CS_ARRAY_LEN(units); i++) {
        if (strcmp(u, units[i].u) == 0) {
            *out = n * units[i].mul;
            return 0;
        }
    }
    return CS_EINVAL;
}

/* ------------------------------------------------------------ DurationSpec */

static const char *const unit_names[] = { "NANOSECONDS", "MICROSECONDS", "MILLISECONDS", "SECONDS",
                                          "MINUTES", "HOURS", "DAYS" };
static const char *const unit_symbols[] = { "ns", "us", "ms", "s", "m", "h", "d" };
static const long long unit_ns[] = { 1LL, 1000LL, 1000000LL, 1000000000LL, 60000000000LL, 3600000000000LL,
                                     86400000000000LL };

/* "[NANOSECONDS, ..., DAYS]" from min_unit on (DurationSpec.acceptedUnits). */
static void accepted_units(int min_unit, char *out, size_t n)
{
    size_t len = (size_t)snprintf(out, n, "[");
    for (int u = min_unit; u <= CONFIG_D && len < n; u++)
        len += (size_t)snprintf(out + len, n - len, "%s%s", u > min_unit ? ", " : "", unit_names[u]);
    if (len < n)
        snprintf(out + len, n - len, "]");
}

long long config_duration_to(const config_duration *d, int unit)
{
    if (d->unit == unit)
        return d->quantity;
    if (d->unit < unit)   /* to a coarser unit: truncating division */
        return d->quantity / (unit_ns[unit] / unit_ns[d->unit]);
    long long ratio = unit_ns[d->unit] / unit_ns[unit];
    return d->quantity > LLONG_MAX / ratio ? LLONG_MAX : d->quantity * ratio;
}

void config_duration_format(const config_duration *d, char *out, size_t n)
{
    snprintf(out, n, "%lld%s", d->quantity, unit_symbols[d->unit]);
}

int config_duration_spec(const char *s, int min_unit, long long max, config_duration *out, char *err,
                         size_t errlen)
{
    char units[160];
    accepted_units(min_unit, units, sizeof units);
    size_t nd = strspn(s, "0123456789");
    const char *sym = s + nd;
    int unit = -1;
    static const struct { const char *sym; int unit; } syms[] = {
        { "d", CONFIG_D }, { "h", CONFIG_H }, { "m", CONFIG_MIN }, { "s", CONFIG_S }, { "ms", CONFIG_MS },
        { "us", CONFIG_US }, { "\xc2\xb5s", CONFIG_US }, { "ns", CONFIG_NS },
    };
    for (size_t i = 0; nd > 0 && i < CS_ARRAY_LEN(syms); i++)
        if (strcmp(sym, syms[i].sym) == 0)
            unit = syms[i].unit;
    if (unit < 0) {
        snprintf(err, errlen, "Invalid duration: %s Accepted units:%s where case matters and only non-negative "
                 "values.", s, units);
        return CS_EINVAL;
    }
    errno = 0;
    long long q = strtoll(s, NULL, 10);
    if (errno == ERANGE) {   /* Long.parseLong's NumberFormatException */
        snprintf(err, errlen, "For input string: \"%.*s\"", (int)nd, s);
        return CS_EINVAL;
    }
    if (unit < min_unit) {
        snprintf(err, errlen, "Invalid duration: %s Accepted units:%s", s, units);
        return CS_EINVAL;
    }
    config_duration d = { q, unit };
    if (config_duration_to(&d, min_unit) >= max) {
        char lower[16];   /* minUnit.name().toLowerCase() */
        size_t i = 0;
        for (; unit_names[min_unit][i] && i + 1 < sizeof lower; i++)
            lower[i] = (char)tolower((unsigned char)unit_names[min_unit][i]);
        lower[i] = '\0';
        snprintf(err, errlen, "Invalid duration: %s. It shouldn't be more than %lld in %s", s, max - 1, lower);
        return CS_EINVAL;
    }
    *out = d;
    return 0;
}

static int parse_bool(const char *s, bool *out)
{
    if (strcasecmp(s, "true") == 0 || strcmp(s, "1") == 0 || strcasecmp(s, "yes") == 0) {
        *out = true;
        return 0;
    }
    if (strcasecmp(s, "false") == 0 || strcmp(s, "0") == 0 || strcasecmp(s, "no") == 0) {
        *out = false;
        return 0;
    }
    return CS_EINVAL;
}

static int parse_int(const char *s, int *out)
{
    char *e;
    errno = 0;
    long v = strtol(s, &e, 10);
    if (errno || e == s || *skip_ws(e) != '\0' || v < -2147483647L || v > 2147483647L)
        return CS_EINVAL;
    *out = (int)v;
    return 0;
}

static int copy_str(char *dst, size_t cap, const char *s)
{
    size_t n = strlen(s);
    if (n >= cap)
        return CS_EINVAL;
    memcpy(dst, s, n + 1);
    return 0;
}

/* ------------------------------------------------------------ keys */

/* Kinds of value: how the text is turned into the stored number. */
enum { K_STR, K_INT, K_BOOL, K_MS, K_SIZE, K_RATE, K_SPECIAL, K_IGNORE };

typedef struct key_def {
    const char *name;       /* 4.1 name */
    int kind;
    long long unit;         /* unit of a bare number under `name` (ms or bytes) */
    size_t off;             /* offset in config for K_STR/K_INT/K_BOOL/K_MS/K_SIZE */
    int width;              /* for K_MS/K_SIZE/K_INT: sizeof the field */
} key_def;

#define F(field) offsetof(config, field), (int)sizeof(((config *)0)->field)

static const key_def keys[] = {
    { "cluster_name", K_STR, 0, F(cluster_name) },
    { "listen_address", K_STR, 0, F(listen_address) },
    { "rpc_address", K_STR, 0, F(rpc_address) },
    { "native_transport_port", K_INT, 0, F(native_port) },
    { "commitlog_directory", K_STR, 0, F(commitlog_dir) },
    { "commitlog_sync", K_SPECIAL, 0, 0, 0 },
    { "data_file_directories", K_SPECIAL, 0, 0, 0 },
    { "commitlog_sync_period", K_MS, 1, F(st.sync_period_ms) },
    { "commitlog_sync_group_window", K_MS, 1, F(st.sync_group_window_ms) },
    { "commitlog_sync_batch_window", K_IGNORE, 0, 0, 0 },
    { "commitlog_segment_size", K_SIZE, 1024 * 1024, F(st.segment_size) },
    { "commitlog_total_space", K_SIZE, 1024 * 1024, F(st.commitlog_total_space) },
    { "memtable_heap_space", K_SIZE, 1024 * 1024, F(st.memtable_space) },
    { "file_cache_size", K_SIZE, 1024 * 1024, F(st.block_cache_size) },
    { "memtable_offheap_space", K_IGNORE, 0, 0, 0 },
    { "native_transport_max_frame_size", K_SIZE, 1024 * 1024, F(max_frame_size) },
    { "native_transport_max_concurrent_connections", K_INT, 0, F(max_connections) },
    { "tombstone_warn_threshold", K_INT, 0, F(cql.tombstone_warn_threshold) },
    { "tombstone_failure_threshold", K_INT, 0, F(cql.tombstone_failure_threshold) },
    /* Stored in KiB: a bare number under the new name means KiB too (4.1). */
    { "batch_size_warn_threshold", K_SPECIAL, 1024, 0, 0 },
    { "batch_size_fail_threshold", K_SPECIAL, 1024, 0, 0 },
    { "unlogged_batch_across_partitions_warn_threshold", K_INT, 0,
      F(cql.unlogged_batch_across_partitions_warn_threshold) },
    { "authenticator", K_SPECIAL, 0, 0, 0 },
    { "authorizer", K_SPECIAL, 0, 0, 0 },
    { "role_manager", K_IGNORE, 0, 0, 0 },
    { "materialized_views_enabled", K_BOOL, 0, F(cql.materialized_views_enabled) },
    { "enable_materialized_views", K_BOOL, 0, F(cql.materialized_views_enabled) },
    { "sasi_indexes_enabled", K_BOOL, 0, F(cql.sasi_indexes_enabled) },
    { "enable_sasi_indexes", K_BOOL, 0, F(cql.sasi_indexes_enabled) },
    { "user_defined_functions_enabled", K_BOOL, 0, F(cql.user_defined_functions_enabled) },
    { "enable_user_defined_functions", K_BOOL, 0, F(cql.user_defined_functions_enabled) },
    { "num_tokens", K_INT, 0, F(cql.num_tokens) },
    /* guardrails (GuardrailsOptions; cql/guardrails.c) */
    { "keyspaces_warn_threshold", K_INT, 0, F(cql.guard.keyspaces[0]) },
    { "keyspaces_fail_threshold", K_INT, 0, F(cql.guard.keyspaces[1]) },
    { "tables_warn_threshold", K_INT, 0, F(cql.guard.tables[0]) },
    { "tables_fail_threshold", K_INT, 0, F(cql.guard.tables[1]) },
    { "columns_per_table_warn_threshold", K_INT, 0, F(cql.guard.columns_per_table[0]) },
    { "columns_per_table_fail_threshold", K_INT, 0, F(cql.guard.columns_per_table[1]) },
    { "secondary_indexes_per_table_warn_threshold", K_INT, 0, F(cql.guard.secondary_indexes_per_table[0]) },
    { "secondary_indexes_per_table_fail_threshold", K_INT, 0, F(cql.guard.secondary_indexes_per_table[1]) },
    { "materialized_views_per_table_warn_threshold", K_INT, 0, F(cql.guard.materialized_views_per_table[0]) },
    { "materialized_views_per_table_fail_threshold", K_INT, 0, F(cql.guard.materialized_views_per_table[1]) },
    { "page_size_warn_threshold", K_INT, 0, F(cql.guard.page_size[0]) },
    { "page_size_fail_threshold", K_INT, 0, F(cql.guard.page_size[1]) },
    { "partition_keys_in_select_warn_threshold", K_INT, 0, F(cql.guard.partition_keys_in_select[0]) },
    { "partition_keys_in_select_fail_threshold", K_INT, 0, F(cql.guard.partition_keys_in_select[1]) },
    { "fields_per_udt_warn_threshold", K_INT, 0, F(cql.guard.fields_per_udt[0]) },
    { "fields_per_udt_fail_threshold", K_INT, 0, F(cql.guard.fields_per_udt[1]) },
    { "in_select_cartesian_product_warn_threshold", K_INT, 0, F(cql.guard.in_select_cartesian_product[0]) },
    { "in_select_cartesian_product_fail_threshold", K_INT, 0, F(cql.guard.in_select_cartesian_product[1]) },
    { "items_per_collection_warn_threshold", K_INT, 0, F(cql.guard.items_per_collection[0]) },
    { "items_per_collection_fail_threshold", K_INT, 0, F(cql.guard.items_per_collection[1]) },
    { "minimum_replication_factor_warn_threshold", K_INT, 0, F(cql.guard.minimum_replication_factor[0]) },
    { "minimum_replication_factor_fail_threshold", K_INT, 0, F(cql.guard.minimum_replication_factor[1]) },
    { "uncompressed_tables_enabled", K_BOOL, 0, F(cql.guard.uncompressed_tables) },
    { "collection_size_warn_threshold", K_SIZE, 1, F(cql.guard.collection_size[0]) },
    { "table_properties_warned", K_SPECIAL, 0, 0, 0 },
    { "table_properties_ignored", K_SPECIAL, 1, 0, 0 },
    { "table_properties_disallowed", K_SPECIAL, 2, 0, 0 },
    { "collection_size_fail_threshold", K_SIZE, 1, F(cql.guard.collection_size[1]) },
    { "allow_filtering_enabled", K_BOOL, 0, F(cql.guard.allow_filtering) },
    { "user_timestamps_enabled", K_BOOL, 0, F(cql.guard.user_timestamps) },
    { "group_by_enabled", K_BOOL, 0, F(cql.guard.group_by) },
    { "drop_truncate_table_enabled", K_BOOL, 0, F(cql.guard.drop_truncate_table) },
    { "secondary_indexes_enabled", K_BOOL, 0, F(cql.guard.secondary_indexes) },
    { "compact_tables_enabled", K_BOOL, 0, F(cql.guard.compact_tables) },
    { "read_before_write_list_operations_enabled", K_BOOL, 0, F(cql.guard.read_before_write_list_operations) },
    { "read_consistency_levels_warned", K_SPECIAL, 0, F(cql.guard.read_cl_warned) },
    { "read_consistency_levels_disallowed", K_SPECIAL, 0, F(cql.guard.read_cl_disallowed) },
    { "write_consistency_levels_warned", K_SPECIAL, 0, F(cql.guard.write_cl_warned) },
    { "write_consistency_levels_disallowed", K_SPECIAL, 0, F(cql.guard.write_cl_disallowed) },
    { "concurrent_compactors", K_INT, 0, F(st.compaction_threads) },
    { "auto_snapshot", K_BOOL, 0, F(st.snapshot_on_truncate) },
    { "auto_snapshot_ttl", K_SPECIAL, 0, 0, 0 },
    { "admin_port", K_INT, 0, F(admin_port) },
    { "request_loops", K_INT, 0, F(request_loops) },
    { "commitlog_sync_wait_poll_us", K_INT, 0, F(commitlog_sync_wait_poll_us) },
    /* Known Cassandra keys with no effect on a single cassette node. */
    { "partitioner", K_IGNORE, 0, 0, 0 },
    { "seed_provider", K_IGNORE, 0, 0, 0 },
    { "endpoint_snitch", K_IGNORE, 0, 0, 0 },
    { "hints_directory", K_IGNORE, 0, 0, 0 },
    { "saved_caches_directory", K_IGNORE, 0, 0, 0 },
    { "cdc_raw_directory", K_IGNORE, 0, 0, 0 },
    { "start_native_transport", K_IGNORE, 0, 0, 0 },
    { "storage_port", K_IGNORE, 0, 0, 0 },
    { "ssl_storage_port", K_IGNORE, 0, 0, 0 },
    { "concurrent_reads", K_IGNORE, 0, 0, 0 },
    { "concurrent_writes", K_IGNORE, 0, 0, 0 },
    { "concurrent_counter_writes", K_IGNORE, 0, 0, 0 },
    /* The request timeouts (cql_timeout_ms; the first seven floored at
     * LOWEST_ACCEPTED_TIMEOUT_MS once the file is read). */
    { "read_request_timeout", K_MS, 1, F(cql.timeout_ms[CQL_TIMEOUT_READ]) },
    { "range_request_timeout", K_MS, 1, F(cql.timeout_ms[CQL_TIMEOUT_RANGE]) },
    { "write_request_timeout", K_MS, 1, F(cql.timeout_ms[CQL_TIMEOUT_WRITE]) },
    { "counter_write_request_timeout", K_MS, 1, F(cql.timeout_ms[CQL_TIMEOUT_COUNTER_WRITE]) },
    { "cas_contention_timeout", K_MS, 1, F(cql.timeout_ms[CQL_TIMEOUT_CAS]) },
    { "truncate_request_timeout", K_MS, 1, F(cql.timeout_ms[CQL_TIMEOUT_TRUNCATE]) },
    { "request_timeout", K_MS, 1, F(cql.timeout_ms[CQL_TIMEOUT_MISC]) },
    { "internode_tcp_connect_timeout", K_MS, 1, F(cql.timeout_ms[CQL_TIMEOUT_INTERNODE_CONNECT]) },
    { "internode_tcp_user_timeout", K_MS, 1, F(cql.timeout_ms[CQL_TIMEOUT_INTERNODE_USER]) },
    { "internode_streaming_tcp_user_timeout", K_MS, 1, F(cql.timeout_ms[CQL_TIMEOUT_INTERNODE_STREAMING_USER]) },
    { "hinted_handoff_enabled", K_BOOL, 0, F(hinted_handoff_enabled) },
    { "incremental_backups", K_IGNORE, 0, 0, 0 },
    { "snapshot_before_compaction", K_IGNORE, 0, 0, 0 },
    { "compaction_throughput", K_RATE, 1024 * 1024, F(st.compaction_throughput) },
    { "disk_failure_policy", K_IGNORE, 0, 0, 0 },
    { "commit_failure_policy", K_IGNORE, 0, 0, 0 },
    { "key_cache_size", K_IGNORE, 0, 0, 0 },
    { "row_cache_size", K_IGNORE, 0, 0, 0 },
    { "counter_cache_size", K_IGNORE, 0, 0, 0 },
    { "memtable_allocation_type", K_IGNORE, 0, 0, 0 },
    { "broadcast_address", K_IGNORE, 0, 0, 0 },
    { "broadcast_rpc_address", K_IGNORE, 0, 0, 0 },
    { "native_transport_allow_older_protocols", K_IGNORE, 0, 0, 0 },
    { "gc_warn_threshold", K_IGNORE, 0, 0, 0 },
    { "gc_log_threshold", K_IGNORE, 0, 0, 0 },
};

/*
 * Find a key, mapping the legacy unit-suffixed spelling to the 4.1 name:
 * `x_in_ms` -> x with unit ms, `x_in_kb` -> KiB, `x_in_mb` -> MiB.
 * *legacy_unit receives the unit for a bare number (0: the row's default).
 */
static const key_def *find_key(const char *key, long long *legacy_unit)
{
    char base[128];
    size_t n = strlen(key);
    *legacy_unit = 0;
    if (n >= sizeof base)
        return NULL;
    memcpy(base, key, n + 1);
    static const struct { const char *suf; long long unit; } sufs[] = {
        { "_in_ms", 1 }, { "_in_kb", 1024 }, { "_in_mb", 1024 * 1024 },
        { "_in_kib", 1024 }, { "_in_mib", 1024 * 1024 }, { "_in_s", 1000 },
        { "_mb_per_sec", 1024 * 1024 },
    };
    for (size_t i = 0; i < CS_ARRAY_LEN(sufs); i++) {
        size_t sl = strlen(sufs[i].suf);
        if (n > sl && strcmp(base + n - sl, sufs[i].suf) == 0) {
            base[n - sl] = '\0';
            *legacy_unit = sufs[i].unit;
            break;
        }
    }
    /* Old boolean names: enable_x -> x_enabled handled by explicit rows. */
    for (size_t i = 0; i < CS_ARRAY_LEN(keys); i++)
        if (strcmp(keys[i].name, base) == 0)
            return &keys[i];
    return NULL;
}

static void store_ll(config *c, const key_def *k, long long v)
{
    void *p = (char *)c + k->off;
    if (k->width == sizeof(int))
        *(int *)p = (int)CS_MIN(v, 2147483647LL);
    else
        *(size_t *)p = (size_t)v;
}

/* Cassandra 4.1's batch thresholds are stored in KiB (cql_config). */
static int set_batch(config *c, const char *key, const char *v, long long legacy_unit)
{
    long long bytes;
    if (config_parse_size(v, legacy_unit ? legacy_unit : 1024, &bytes))
        return CS_EINVAL;
    int kb = (int)(bytes / 1024);
    if (strncmp(key, "batch_size_warn", 15) == 0)
        c->cql.batch_size_warn_kb = kb;
    else
        c->cql.batch_size_fail_kb = kb;
    return 0;
}

static int set_special(config *c, const key_def *k, const char *v, long long legacy_unit)
{
    if (strncmp(k->name, "table_properties_", 17) == 0) {   /* one element of a list of table property names */
        struct cql_guardrails *g = &c->cql.guard;
        int which = (int)k->unit;   /* 0 warned, 1 ignored, 2 disallowed */
        char low[64];
        size_t n = strlen(v);
        if (n >= sizeof low) n = sizeof low - 1;
        for (size_t i = 0; i < n; i++) low[i] = (char)tolower((unsigned char)v[i]);
        low[n] = '\0';
        int idx = -1;
        for (unsigned i = 0; cql_table_property_name(i); i++)
            if (strcmp(low, cql_table_property_name(i)) == 0) idx = (int)i;
        if (idx < 0) {   /* GuardrailsOptions.validateTableProperties, at the end of the parse */
            if (!c->guard_bad_property[0])
                snprintf(c->guard_bad_property, sizeof c->guard_bad_property, "%s\t%s", k->name, low);
            return 0;
        }
        for (int i = 0; i < g->n_table_props[which]; i++)
            if (g->table_props[which][i] == idx) return 0;   /* a set */
        if (g->n_table_props[which] < CQL_TABLE_PROPERTIES)
            g->table_props[which][g->n_table_props[which]++] = (uint8_t)idx;
        return 0;
    }
    if (strstr(k->name, "_consistency_levels_")) {   /* one element of a list of ConsistencyLevel names */
        for (unsigned i = 0; cql_consistency_level_name(i); i++)
            if (strcasecmp(v, cql_consistency_level_name(i)) == 0) {
                *(uint32_t *)((char *)c + k->off) |= 1u << i;
                return 0;
            }
        return CS_EINVAL;
    }
    if (strcmp(k->name, "commitlog_sync") == 0) {
        if (strcmp(v, "periodic") == 0)
            c->st.sync_mode = ST_SYNC_PERIODIC;
        else if (strcmp(v, "batch") == 0)
            c->st.sync_mode = ST_SYNC_BATCH;
        else if (strcmp(v, "group") == 0)
            c->st.sync_mode = ST_SYNC_GROUP;
        else
            return CS_EINVAL;
        return 0;
    }
    if (strcmp(k->name, "authenticator") == 0) {
        const char *dot = strrchr(v, '.');
        const char *cls = dot ? dot + 1 : v;
        if (strcmp(cls, "AllowAllAuthenticator") == 0)
            c->authenticator = CONFIG_AUTH_ALLOW_ALL;
        else if (strcmp(cls, "PasswordAuthenticator") == 0)
            c->authenticator = CONFIG_AUTH_PASSWORD;
        else
            return CS_EINVAL;
        return 0;
    }
    if (strcmp(k->name, "authorizer") == 0) {
        /* AllowAllAuthorizer or CassandraAuthorizer (permissions in the
         * role store, cql/authz.c); anything else refused as an unknown
         * class would be */
        const char *dot = strrchr(v, '.');
        const char *cls = dot ? dot + 1 : v;
        if (strcmp(cls, "CassandraAuthorizer") == 0)
            c->cql.cassandra_authorizer = true;
        else if (strcmp(cls, "AllowAllAuthorizer") == 0)
            c->cql.cassandra_authorizer = false;
        else
            return CS_EINVAL;
        return 0;
    }
    if (strcmp(k->name, "auto_snapshot_ttl") == 0) {
        /* DatabaseDescriptor: an IntSecondsBound, or "Invalid value of
         * auto_snapshot_ttl" (the loader's message says which line). */
        config_duration d;
        char err[256];
        if (config_duration_spec(v, CONFIG_S, INT32_MAX, &d, err, sizeof err))
            return CS_EINVAL;
        c->st.auto_snapshot_has_ttl = true;
        c->st.auto_snapshot_ttl_s = config_duration_to(&d, CONFIG_S);
        config_duration_format(&d, c->auto_snapshot_ttl, sizeof c->auto_snapshot_ttl);
        return 0;
    }
    if (strcmp(k->name, "data_file_directories") == 0) {
        /* Only the first directory is used (one data directory per node). */
        if (c->data_dir[0] == '\0')
            return copy_str(c->data_dir, sizeof c->data_dir, v);
        CS_WARN("config: data_file_directories: only the first directory is used, ignoring %s", v);
        return 0;
    }
    return set_batch(c, k->name, v, legacy_unit);
}

int config_set(config *c, const char *key, const char *v)
{
    long long legacy_unit;
    const key_def *k = find_key(key, &legacy_unit);
    if (!k)
        return CS_ENOTFOUND;
    if (strcmp(k->name, "admin_port") == 0)
        c->admin_port_set = true;
    long long n;
    bool b;
    int iv;
    switch (k->kind) {
    case K_STR:
        return copy_str((char *)c + k->off, (size_t)k->width, v);
    case K_INT:
        if (parse_int(v, &iv))
            return CS_EINVAL;
        if (k->off == offsetof(config, request_loops) && (iv < 0 || iv > CONFIG_MAX_REQUEST_LOOPS))
            return CS_EINVAL;
        if (k->off == offsetof(config, commitlog_sync_wait_poll_us) && (iv < 0 || iv > CONFIG_MAX_SYNC_WAIT_POLL_US))
            return CS_EINVAL;
        *(int *)((char *)c + k->off) = iv;
        return 0;
    case K_BOOL:
        if (parse_bool(v, &b))
            return CS_EINVAL;
        *(bool *)((char *)c + k->off) = b;
        return 0;
    case K_MS:
        if (config_parse_duration_ms(v, legacy_unit ? legacy_unit : k->unit, &n))
            return CS_EINVAL;
        store_ll(c, k, n);
        return 0;
    case K_SIZE:
        if (config_parse_size(v, legacy_unit ? legacy_unit : k->unit, &n))
            return CS_EINVAL;
        store_ll(c, k, n);
        return 0;
    case K_RATE: {   /* 4.1's DataRateSpec: 64MiB/s, 1024KiB/s, 0B/s; bare: the unit of the row */
        char num[64];
        size_t l = strlen(v);
        if (l >= sizeof num)
            return CS_EINVAL;
        memcpy(num, v, l + 1);
        if (l > 2 && strcmp(num + l - 2, "/s") == 0)
            num[l - 2] = '\0';
        else if (!legacy_unit && strspn(num, "0123456789") != l)
            return CS_EINVAL;   /* a unit without /s */
        if (config_parse_size(num, legacy_unit ? legacy_unit : k->unit, &n) || n < 0)
            return CS_EINVAL;
        store_ll(c, k, n);
        return 0;
    }
    case K_SPECIAL:
        return set_special(c, k, v, legacy_unit);
    default:
        return 0;
    }
}

/* ------------------------------------------------------------ YAML subset */

/* Remove a trailing comment (outside quotes) and surrounding blanks; unquote. */
static char *clean_value(char *s)
{
    s = (char *)skip_ws(s);
    char q = (*s == '"' || *s == '\'') ? *s : 0;
    if (q) {
        char *end = strchr(s + 1, q);
        if (end) {
            *end = '\0';
            return s + 1;
        }
    }
    char *hash = strstr(s, " #");
    if (hash)
        *hash = '\0';
    if (*s == '#')
        *s = '\0';
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
        s[--n] = '\0';
    return s;
}

/* Apply one key/value, warning on unknown keys; CS_EINVAL on a bad value. */
static int apply(config *c, const char *k, const char *v, int line, char *err, size_t errlen)
{
    int rc = config_set(c, k, v);
    if (rc == CS_ENOTFOUND) {
        CS_WARN("config line %d: unknown key '%s' ignored", line, k);
        c->warnings++;
        return 0;
    }
    if (rc) {
        snprintf(err, errlen, "config line %d: invalid value '%s' for %s", line, v, k);
        return CS_EINVAL;
    }
    return 0;
}

static void fmt_size(char *out, size_t cap, unsigned long long b);

/* GuardrailsOptions' checks of the thresholds (validateMaxIntThreshold). */
static int guard_validate(const config *cfg, const struct cql_guardrails *g, char *err, size_t errlen)
{
    if (cfg->guard_bad_property[0]) {
        const char *tab = strchr(cfg->guard_bad_property, '\t');
        snprintf(err, errlen, "Invalid value for %.*s: '[%s]' do not parse as valid table properties",
                 (int)(tab - cfg->guard_bad_property), cfg->guard_bad_property, tab + 1);
        return CS_EINVAL;
    }
    for (int i = 0; i < cql_guard_n_thresholds; i++) {
        const cql_guard_threshold_def *d = &cql_guard_thresholds[i];
        if (d->bytes)
            continue;   /* collection_size, below */
        const int *v = (const int *)(const void *)((const char *)g + d->off);
        bool min = d->min;
        for (int j = 0; j < 2; j++) {
            const char *kind = j ? "fail" : "warn";
            if (v[j] == 0) {
                snprintf(err, errlen, "Invalid value for %s_%s_threshold: 0 is not allowed; if attempting to disable use -1",
                         d->name, kind);
                return CS_EINVAL;
            }
            if (v[j] < -1) {
                snprintf(err, errlen, "Invalid value %d for %s_%s_threshold: negative values are not allowed, "
                         "outside of -1 which disables the guardrail", v[j], d->name, kind);
                return CS_EINVAL;
            }
        }
        if (v[0] != -1 && v[1] != -1 && (min ? v[1] > v[0] : v[1] < v[0])) {
            snprintf(err, errlen, "The warn threshold %d for %s_warn_threshold should be %s than the fail threshold %d",
                     v[0], d->name, min ? "greater" : "lower", v[1]);
            return CS_EINVAL;
        }
        if (min && v[1] > 1) {   /* validateMinRFVersusDefaultRF: default_keyspace_rf is 1 */
            snprintf(err, errlen, "%s_fail_threshold to be set (%d) cannot be greater than default_keyspace_rf (1)",
                     d->name, v[1]);
            return CS_EINVAL;
        }
    }
    for (int j = 0; j < 2; j++)
        if (g->collection_size[j] == 0) {
            snprintf(err, errlen, "Invalid value for collection_size_%s_threshold: 0 is not allowed; if attempting to "
                     "disable use an empty value", j ? "fail" : "warn");
            return CS_EINVAL;
        }
    if (g->collection_size[0] > 0 && g->collection_size[1] > 0 && g->collection_size[1] < g->collection_size[0]) {
        char a[32], b[32];
        fmt_size(a, sizeof a, (unsigned long long)g->collection_size[0]);
        fmt_size(b, sizeof b, (unsigned long long)g->collection_size[1]);
        snprintf(err, errlen, "The warn threshold %s for collection_size_warn_threshold should be lower than the fail "
                 "threshold %s", a, b);
        return CS_EINVAL;
    }
    return 0;
}

/* Apply each element of a flow list "[a, b]" to key k. */
static int apply_flow_list(config *c, const char *k, char *v, int line, char *err, size_t errlen)
{
    char *end = strrchr(v, ']');
    if (end)
        *end = '\0';
    char *save = NULL;
    for (char *item = strtok_r(v + 1, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *iv = clean_value(item);
        if (*iv && apply(c, k, iv, line, err, errlen))
            return CS_EINVAL;
    }
    return 0;
}

/* DatabaseDescriptor.checkForLowestAcceptedTimeouts: a request timeout
 * under 10 ms is raised to 10 ms, with its INFO line (nodetool settimeout
 * is not floored, as in Cassandra). */
#define LOWEST_ACCEPTED_TIMEOUT_MS 10
static void floor_timeouts(config *c)
{
    for (int i = CQL_TIMEOUT_READ; i <= CQL_TIMEOUT_MISC; i++) {
        if (c->cql.timeout_ms[i] < LOWEST_ACCEPTED_TIMEOUT_MS) {
            CS_INFO("found %s::%lldms less than lowest acceptable value %dms, continuing with %dms",
                    cql_timeout_name(i), (long long)c->cql.timeout_ms[i], LOWEST_ACCEPTED_TIMEOUT_MS,
                    LOWEST_ACCEPTED_TIMEOUT_MS);
            c->cql.timeout_ms[i] = LOWEST_ACCEPTED_TIMEOUT_MS;
        }
    }
}

int config_parse(config *c, const char *text, size_t len, char *err, size_t errlen)
{
    char *buf = cs_strndup(text, len);
    if (!buf)
        return CS_ENOMEM;
    char list_key[128] = "";   /* top-level key whose block list is being read */
    int line = 0, rc = 0;
    char *save = NULL;
    for (char *ln = strtok_r(buf, "\n", &save); ln && rc == 0; ln = strtok_r(NULL, "\n", &save)) {
        line++;
        const char *t = skip_ws(ln);
        if (*t == '#' || *t == '\0' || *t == '\r')
            continue;
        bool indented = t != ln;
        if (indented) {
            /* A block list item of the current top-level key; nested maps skipped. */
            if (list_key[0] && t[0] == '-' && (t[1] == ' ' || t[1] == '\0')) {
                char *v = clean_value((char *)t + 1);
                if (*v)
                    rc = apply(c, list_key, v, line, err, errlen);
            }
            continue;
        }
        list_key[0] = '\0';
        char *colon = strchr(ln, ':');
        if (!colon) {
            CS_WARN("config line %d: not a 'key: value' line, ignored", line);
            c->warnings++;
            continue;
        }
        *colon = '\0';
        char *k = clean_value(ln);
        char *v = clean_value(colon + 1);
        if (*v == '\0') {
            /* Block list or nested map follows; known-but-ignored keys stay quiet. */
            long long u;
            const key_def *kd = find_key(k, &u);
            if (!kd) {
                CS_WARN("config line %d: unknown key '%s' ignored", line, k);
                c->warnings++;
            } else if (strlen(k) < sizeof list_key && kd->kind != K_IGNORE) {
                memcpy(list_key, k, strlen(k) + 1);
            }
            continue;
        }
        if (strcmp(v, "null") == 0 || strcmp(v, "~") == 0)
            continue;
        if (*v == '[')
            rc = apply_flow_list(c, k, v, line, err, errlen);
        else
            rc = apply(c, k, v, line, err, errlen);
    }
    cs_free(buf);
    if (rc == 0)
        floor_timeouts(c);
    if (rc == 0)
        rc = guard_validate(c, &c->cql.guard, err, errlen);
    if (rc == 0 && c->cql.cassandra_authorizer && c->authenticator == CONFIG_AUTH_ALLOW_ALL) {
        /* AuthConfig.applyAuth */
        snprintf(err, errlen, "AllowAllAuthenticator can't be used with CassandraAuthorizer");
        rc = CS_EINVAL;
    }
    return rc;
}

int config_load(config *c, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        cs_last_errno = errno;
        snprintf(err, errlen, "cannot open config file %s: %s", path, strerror(errno));
        return CS_EIO;
    }
    cs_buf b;
    cs_buf_init(&b);
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        cs_buf_put(&b, chunk, n);
    bool bad = ferror(f);
    fclose(f);
    int rc;
    if (bad || b.err) {
        snprintf(err, errlen, "cannot read config file %s", path);
        rc = bad ? CS_EIO : CS_ENOMEM;
    } else {
        rc = config_parse(c, (const char *)b.p, b.len, err, errlen);
    }

    cs_buf_destroy(&b);
    return rc;
}

/* ------------------------------------------------------------ lifecycle */

size_t config_default_file_cache_size(uint64_t ram)
{
    const uint64_t mib = 1024 * 1024;
    uint64_t half = ram / 2 < 1024 * mib ? ram / 2 : 1024 * mib;
    uint64_t quarter = ram / 4 < 8192 * mib ? ram / 4 : 8192 * mib;
    uint64_t heap = half > quarter ? half : quarter;
    uint64_t cache = heap / 4 < 512 * mib ? heap / 4 : 512 * mib;
    return (size_t)(cache / mib * mib);
}

void config_defaults(config *c)
{
    memset(c, 0, sizeof *c);
    st_config_defaults(&c->st);
    /* As Cassandra sizes its chunk cache for this machine (a bound, not a
     * reservation: the cache grows as blocks are read). */
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    if (pages > 0 && psz > 0)
        c->st.block_cache_size = config_default_file_cache_size((uint64_t)pages * (uint64_t)psz);
    cql_config_defaults(&c->cql);
    strcpy(c->cluster_name, "Test Cluster");
    strcpy(c->listen_address, "127.0.0.1");
    strcpy(c->rpc_address, "127.0.0.1");
    c->native_port = 9042;
    c->max_frame_size = 16 * 1024 * 1024;
    c->max_connections = -1;
    c->authenticator = CONFIG_AUTH_ALLOW_ALL;
    c->admin_port = 7199;
    c->request_loops = 1;
    c->commitlog_sync_wait_poll_us = CONFIG_DEFAULT_SYNC_WAIT_POLL_US;
    c->hinted_handoff_enabled = true;
    c->st.compaction_throughput = (uint64_t)64 << 20;   /* Cassandra 4.1's 64MiB/s */
    cs_buf_init(&c->settings);
}

/* Replace a host name ("localhost") by its numeric address, IPv4 first, so
 * system.local's inet columns get an address.  Unresolvable names are kept
 * (the listener reports the error). */
static void numeric_address(char *addr, size_t cap)
{
    struct in_addr a4;
    struct in6_addr a6;
    if (inet_pton(AF_INET, addr, &a4) == 1 || inet_pton(AF_INET6, addr, &a6) == 1)
        return;
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(addr, NULL, &hints, &res) != 0 || !res)
        return;
    const struct addrinfo *pick = res;
    for (const struct addrinfo *ai = res; ai; ai = ai->ai_next)
        if (ai->ai_family == AF_INET) {
            pick = ai;
            break;
        }
    char buf[INET6_ADDRSTRLEN];
    const void *src = pick->ai_family == AF_INET
        ? (const void *)&((const struct sockaddr_in *)pick->ai_addr)->sin_addr
        : (const void *)&((const struct sockaddr_in6 *)pick->ai_addr)->sin6_addr;
    if (inet_ntop(pick->ai_family, src, buf, sizeof buf) && strlen(buf) < cap)
        strcpy(addr, buf);
    freeaddrinfo(res);
}

/* Sizes as Cassandra 4.1 prints them: the largest exact unit. */
static void fmt_size(char *out, size_t cap, unsigned long long b)
{
    if (b && b % (1024ull * 1024 * 1024) == 0)
        snprintf(out, cap, "%lluGiB", b >> 30);
    else if (b && b % (1024ull * 1024) == 0)
        snprintf(out, cap, "%lluMiB", b >> 20);
    else if (b && b % 1024 == 0)
        snprintf(out, cap, "%lluKiB", b >> 10);
    else
        snprintf(out, cap, "%lluB", b);
}

static void setting(cs_buf *b, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void setting(cs_buf *b, const char *name, const char *fmt, ...)
{
    char val[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(val, sizeof val, fmt, ap);
    va_end(ap);
    cs_buf_put(b, name, strlen(name));
    cs_buf_put_u8(b, '\t');
    cs_buf_put(b, val, strlen(val));
    cs_buf_put_u8(b, '\n');
}

static int cmp_line(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sort the "name\tvalue\n" lines of b by name (tabs sort before any name
 * character, so a name before its longer namesakes). */
static void sort_lines(cs_buf *b)
{
    size_t n = 0;
    for (size_t i = 0; i < b->len; i++)
        n += b->p[i] == '\n';
    char *text = cs_strndup((const char *)b->p, b->len);
    const char **lines = cs_calloc(n + 1, sizeof *lines);
    if (!text || !lines) {
        cs_free(text);
        cs_free(lines);
        return;
    }
    size_t k = 0;
    for (char *p = text, *nl; k < n && (nl = strchr(p, '\n')); p = nl + 1) {
        *nl = '\0';
        lines[k++] = p;
    }
    qsort(lines, k, sizeof *lines, cmp_line);
    cs_buf_reset(b);
    for (size_t i = 0; i < k; i++) {
        cs_buf_put(b, lines[i], strlen(lines[i]));
        cs_buf_put_u8(b, '\n');
    }
    cs_free(lines);
    cs_free(text);
}

/* The guardrails' settings, as Cassandra's settings table shows them. */
static void guard_settings(cs_buf *b, const struct cql_guardrails *g)
{
    char n[96];
    for (int i = 0; i < cql_guard_n_thresholds; i++) {
        const cql_guard_threshold_def *d = &cql_guard_thresholds[i];
        if (d->bytes)
            continue;   /* collection_size, below */
        const int *v = (const int *)(const void *)((const char *)g + d->off);
        snprintf(n, sizeof n, "%s_fail_threshold", d->name);
        setting(b, n, "%d", v[1]);
        snprintf(n, sizeof n, "%s_warn_threshold", d->name);
        setting(b, n, "%d", v[0]);
    }
    static const struct { const char *name; size_t off; } fl[] = {
        { "allow_filtering_enabled", offsetof(struct cql_guardrails, allow_filtering) },
        { "compact_tables_enabled", offsetof(struct cql_guardrails, compact_tables) },
        { "drop_truncate_table_enabled", offsetof(struct cql_guardrails, drop_truncate_table) },
        { "group_by_enabled", offsetof(struct cql_guardrails, group_by) },
        { "read_before_write_list_operations_enabled", offsetof(struct cql_guardrails, read_before_write_list_operations) },
        { "secondary_indexes_enabled", offsetof(struct cql_guardrails, secondary_indexes) },
        { "uncompressed_tables_enabled", offsetof(struct cql_guardrails, uncompressed_tables) },
        { "user_timestamps_enabled", offsetof(struct cql_guardrails, user_timestamps) },
    };
    for (size_t i = 0; i < sizeof fl / sizeof fl[0]; i++)
        setting(b, fl[i].name, "%s", *(const bool *)((const char *)g + fl[i].off) ? "true" : "false");
    for (int j = 0; j < 2; j++)
        if (g->collection_size[j] > 0) {   /* unset: null in Cassandra's table, no row here */
            char v[32];
            fmt_size(v, sizeof v, (unsigned long long)g->collection_size[j]);
            setting(b, j ? "collection_size_fail_threshold" : "collection_size_warn_threshold", "%s", v);
        }
    static const struct { const char *name; size_t off; } cl[] = {
        { "read_consistency_levels_disallowed", offsetof(struct cql_guardrails, read_cl_disallowed) },
        { "read_consistency_levels_warned", offsetof(struct cql_guardrails, read_cl_warned) },
        { "write_consistency_levels_disallowed", offsetof(struct cql_guardrails, write_cl_disallowed) },
        { "write_consistency_levels_warned", offsetof(struct cql_guardrails, write_cl_warned) },
    };
    static const char *const tp[3] = { "table_properties_warned", "table_properties_ignored", "table_properties_disallowed" };
    for (int w = 0; w < 3; w++) {   /* a HashSet of names (GuardrailsOptions.validateTableProperties) */
        char v[600];
        cql_table_props_text(g->table_props[w], g->n_table_props[w], v, sizeof v);
        setting(b, tp[w], "%s", v);
    }
    for (size_t i = 0; i < sizeof cl / sizeof cl[0]; i++) {
        char v[200];
        cql_consistency_set_text(*(const uint32_t *)(const void *)((const char *)g + cl[i].off), v, sizeof v);
        setting(b, cl[i].name, "%s", v);
    }
}

static void timeout_setting(cs_buf *b, const config *c, int which)
{
    setting(b, cql_timeout_name(which), "%lldms", (long long)c->cql.timeout_ms[which]);
}

/* The effective settings for system_views.settings, sorted by name. */
static void build_settings(config *c)
{
    static const char *const sync[] = { "periodic", "batch", "group" };
    char sz[32];
    cs_buf *b = &c->settings;
    cs_buf_reset(b);
    setting(b, "admin_port", "%d", c->admin_port);
    setting(b, "authenticator", "%s", c->authenticator == CONFIG_AUTH_PASSWORD
            ? "PasswordAuthenticator" : "AllowAllAuthenticator");
    setting(b, "authorizer", "%s", c->cql.cassandra_authorizer ? "CassandraAuthorizer" : "AllowAllAuthorizer");
    setting(b, "auto_snapshot", "%s", c->st.snapshot_on_truncate ? "true" : "false");
    if (c->auto_snapshot_ttl[0])
        setting(b, "auto_snapshot_ttl", "%s", c->auto_snapshot_ttl);
    setting(b, "batch_size_fail_threshold", "%dKiB", c->cql.batch_size_fail_kb);
    setting(b, "batch_size_warn_threshold", "%dKiB", c->cql.batch_size_warn_kb);
    timeout_setting(b, c, CQL_TIMEOUT_CAS);
    setting(b, "cluster_name", "%s", c->cluster_name);
    setting(b, "commitlog_directory", "%s", c->commitlog_dir);
    fmt_size(sz, sizeof sz, c->st.segment_size);
    setting(b, "commitlog_segment_size", "%s", sz);
    setting(b, "commitlog_sync", "%s", sync[c->st.sync_mode >= 0 && c->st.sync_mode <= 2
                                           ? c->st.sync_mode : 0]);
    setting(b, "commitlog_sync_group_window", "%dms", c->st.sync_group_window_ms);
    setting(b, "commitlog_sync_period", "%dms", c->st.sync_period_ms);
    setting(b, "commitlog_sync_wait_poll_us", "%d", c->commitlog_sync_wait_poll_us);
    fmt_size(sz, sizeof sz, c->st.commitlog_total_space);
    setting(b, "commitlog_total_space", "%s", sz);
    cs_format_rate(sz, sizeof sz, c->st.compaction_throughput);
    setting(b, "compaction_throughput", "%s", sz);
    setting(b, "concurrent_compactors", "%d", c->st.compaction_threads);
    timeout_setting(b, c, CQL_TIMEOUT_COUNTER_WRITE);
    setting(b, "data_file_directories", "[%s]", c->data_dir);
    fmt_size(sz, sizeof sz, c->st.block_cache_size);
    setting(b, "file_cache_size", "%s", sz);
    setting(b, "hinted_handoff_enabled", "%s", c->hinted_handoff_enabled ? "true" : "false");
    timeout_setting(b, c, CQL_TIMEOUT_INTERNODE_STREAMING_USER);
    timeout_setting(b, c, CQL_TIMEOUT_INTERNODE_CONNECT);
    timeout_setting(b, c, CQL_TIMEOUT_INTERNODE_USER);
    setting(b, "listen_address", "%s", c->listen_address);
    setting(b, "materialized_views_enabled", "%s",
            c->cql.materialized_views_enabled ? "true" : "false");
    fmt_size(sz, sizeof sz, c->st.memtable_space);
    setting(b, "memtable_heap_space", "%s", sz);
    setting(b, "sasi_indexes_enabled", "%s", c->cql.sasi_indexes_enabled ? "true" : "false");
    setting(b, "native_transport_max_concurrent_connections", "%d", c->max_connections);
    fmt_size(sz, sizeof sz, c->max_frame_size);
    setting(b, "native_transport_max_frame_size", "%s", sz);
    setting(b, "native_transport_port", "%d", c->native_port);
    setting(b, "num_tokens", "%d", c->cql.num_tokens);
    timeout_setting(b, c, CQL_TIMEOUT_RANGE);
    timeout_setting(b, c, CQL_TIMEOUT_READ);
    setting(b, "request_loops", "%d", c->request_loops);
    timeout_setting(b, c, CQL_TIMEOUT_MISC);
    setting(b, "rpc_address", "%s", c->rpc_address);
    setting(b, "tombstone_failure_threshold", "%d", c->cql.tombstone_failure_threshold);
    setting(b, "tombstone_warn_threshold", "%d", c->cql.tombstone_warn_threshold);
    timeout_setting(b, c, CQL_TIMEOUT_TRUNCATE);
    setting(b, "unlogged_batch_across_partitions_warn_threshold", "%d",
            c->cql.unlogged_batch_across_partitions_warn_threshold);
    setting(b, "user_defined_functions_enabled", "%s",
            c->cql.user_defined_functions_enabled ? "true" : "false");
    timeout_setting(b, c, CQL_TIMEOUT_WRITE);
    guard_settings(b, &c->cql.guard);
    sort_lines(b);   /* the guardrails' among the others: one name order */
    cs_buf_put_u8(b, '\0');
}

void config_finish(config *c, const char *base)
{
    numeric_address(c->listen_address, sizeof c->listen_address);
    if (!base)
        base = ".";
    if (c->data_dir[0] == '\0')
        snprintf(c->data_dir, sizeof c->data_dir, "%s/data", base);
    if (c->commitlog_dir[0] == '\0')
        snprintf(c->commitlog_dir, sizeof c->commitlog_dir, "%s/commitlog", base);
    c->st.data_dir = c->data_dir;
    c->st.commitlog_dir = c->commitlog_dir;
    c->cql.cluster_name = c->cluster_name;
    c->cql.listen_address = c->listen_address;
    c->cql.native_port = c->native_port;
    c->request_loops_effective = c->request_loops;
    if (c->request_loops_effective <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        c->request_loops_effective = n > 0 ? (int)n : 1;
    }
    if (c->request_loops_effective > CONFIG_MAX_REQUEST_LOOPS)
        c->request_loops_effective = CONFIG_MAX_REQUEST_LOOPS;
    build_settings(c);
    c->cql.config_text = c->settings.err ? NULL : (const char *)c->settings.p;
}

void config_destroy(config *c)
{
    cs_buf_destroy(&c->settings);
}
