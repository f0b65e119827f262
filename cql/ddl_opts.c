/*
 * ddl_opts.c: WITH options of CREATE/ALTER KEYSPACE and TABLE/VIEW, applied
 * with Cassandra 4.1's validation and normalisation (TableAttributes,
 * TableParams, CompactionParams, CompressionParams, CachingParams,
 * KeyspaceAttributes, ReplicationParams).  Owner: catalog.
 */
#include <string.h>
#include <stdlib.h>
#include <stdio.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <strings.h>

#include "cql/ddl_int.h"
#include "common/alloc.h"

static bool prop_is_scalar(const ast_prop *p) { return p->kind != PROP_MAP; }

static int need_string(const ast_prop *p, cs_error *e)
{
    if (!prop_is_scalar(p))
        return cs_error_set(e, CS_ERR_SYNTAX, "Invalid value for property '%s'. It should be a string", p->name);
    return 0;
}

static int need_map(const ast_prop *p, cs_error *e)
{
    if (prop_is_scalar(p))
        return cs_error_set(e, CS_ERR_SYNTAX, "Invalid value for property '%s'. It should be a map.", p->name);
    return 0;
}

static int get_int(const ast_prop *p, int *out, cs_error *e)
{
    if (need_string(p, e)) return CS_EUSER;
    char *end;
    errno = 0;
    long v = strtol(p->value, &end, 10);
    if (errno || *end || end == p->value || v < INT32_MIN || v > INT32_MAX)
        return cs_error_set(e, CS_ERR_SYNTAX, "Invalid integer value %s for '%s'", p->value, p->name);
    *out = (int)v;
    return 0;
}

static int get_double(const ast_prop *p, double *out, cs_error *e)
{
    if (need_string(p, e)) return CS_EUSER;
    char *end;
    double v = strtod(p->value, &end);
    if (*end || end == p->value)
        return cs_error_set(e, CS_ERR_SYNTAX, "Invalid double value %s for '%s'", p->value, p->name);
    *out = v;
    return 0;
}

static int get_bool(const ast_prop *p, bool *out, cs_error *e)
{
    if (need_string(p, e)) return CS_EUSER;
    if (strcasecmp(p->value, "true") == 0) *out = true;
    else if (strcasecmp(p->value, "false") == 0) *out = false;
    else return cs_error_set(e, CS_ERR_SYNTAX, "Invalid boolean value %s for '%s'. "
                             "Only true and false are valid values.", p->value, p->name);
    return 0;
}

/* Normalise a speculative_retry / additional_write_policy value to
 * Cassandra's SpeculativeRetryPolicy toString: "99p" ("#.####"p),
 * "50ms" (integer), "ALWAYS", "NEVER" (also for NONE), MIN(..)/MAX(..)
 * upper-cased.  Errors name 'speculative_retry' for both options, as
 * Cassandra does. */
static int norm_retry(const ast_prop *p, char **out, cs_error *e)
{
    if (need_string(p, e)) return CS_EUSER;
    const char *v = p->value;
    size_t n = strlen(v);
    char buf[160];
    if (n == 0 || n >= 120) goto bad;
    if (strcasecmp(v, "always") == 0) {
        snprintf(buf, sizeof buf, "ALWAYS");
    } else if (strcasecmp(v, "never") == 0 || strcasecmp(v, "none") == 0) {
        snprintf(buf, sizeof buf, "NEVER");
    } else if (strncasecmp(v, "min(", 4) == 0 || strncasecmp(v, "max(", 4) == 0) {
        for (size_t i = 0; i <= n; i++) buf[i] = (char)toupper((unsigned char)v[i]);
    } else {
        size_t digits = strspn(v, "0123456789.");
        if (digits == 0) goto bad;
        const char *suffix = v + digits;
        char num[64];
        snprintf(num, sizeof num, "%.*s", (int)digits, v);
        char *end;
        double d = strtod(num, &end);
        if (*end) goto bad;
        if (strcasecmp(suffix, "p") == 0 || strcasecmp(suffix, "percentile") == 0) {
            if (d <= 0.0 || d >= 100.0)
                return cs_error_set(e, CS_ERR_CONFIG, "Invalid value %s for PERCENTILE option 'speculative_retry': must be between (0.0 and 100.0)", v);
            snprintf(num, sizeof num, "%.4f", d);
            char *dot = strchr(num, '.');
            if (dot) {
                char *z = num + strlen(num) - 1;
                while (z > dot && *z == '0') *z-- = 0;
                if (z == dot) *z = 0;
            }
            snprintf(buf, sizeof buf, "%sp", num);
        } else if (strcasecmp(suffix, "ms") == 0) {
            snprintf(buf, sizeof buf, "%dms", (int)d);
        } else {
            goto bad;
        }
    }
    *out = cs_strdup(buf);
    return 0;
bad:
    return cs_error_set(e, CS_ERR_CONFIG, "Invalid value %s for option 'speculative_retry'", v);
}

static void kv_reset(char ***k, char ***v, int *n)
{
    sch__kv_free(*k, *v, *n);
    *k = *v = NULL;
    *n = 0;
}

/* ---------------------------------------------------------------- compaction options */

static bool java_long(const char *v, int64_t *out) { return sch__java_long(v, out); }
static bool java_double(const char *v, double *out) { return sch__java_double(v, out); }

static bool java_int(const char *v, int *out)
{
    int64_t n;
    if (!java_long(v, &n) || n < INT32_MIN || n > INT32_MAX) return false;
    *out = (int)n;
    return true;
}

static const char *opt_get(const ast_prop *p, const char *key)
{
    for (int i = 0; i < p->n_map; i++)
        if (strcmp(p->map_keys[i], key) == 0) return p->map_values[i];
    return NULL;
}

/* A Java double as Double.toString prints it, for messages (into buf). */
static const char *jdouble(double d, char *buf, size_t n)
{
    cs_buf b;
    cs_buf_init(&b);
    sch__put_double(&b, d);
    snprintf(buf, n, "%s", sch__bufstr(&b) ? (char *)b.p : "?");
    cs_buf_destroy(&b);
    return buf;
}

/* AbstractCompactionStrategy.validateOptions. */
static int validate_common_opts(const ast_prop *p, cs_error *e)
{
    const char *v;
    if ((v = opt_get(p, "tombstone_threshold"))) {
        double d;
        if (!java_double(v, &d))
            return cs_error_set(e, CS_ERR_CONFIG, "%s is not a parsable int (base10) for tombstone_threshold", v);
        float f = (float)d;
        if (f < 0) return cs_error_set(e, CS_ERR_CONFIG, "tombstone_threshold must be greater than 0, but was %f", (double)f);
    }
    if ((v = opt_get(p, "tombstone_compaction_interval"))) {
        int64_t n;
        if (!java_long(v, &n))
            return cs_error_set(e, CS_ERR_CONFIG, "%s is not a parsable int (base10) for tombstone_compaction_interval", v);
        if (n < 0)
            return cs_error_set(e, CS_ERR_CONFIG, "tombstone_compaction_interval must be greater than 0, but was %lld", (long long)n);
    }
    if ((v = opt_get(p, "unchecked_tombstone_compaction")) && strcasecmp(v, "true") && strcasecmp(v, "false"))
        return cs_error_set(e, CS_ERR_CONFIG, "'unchecked_tombstone_compaction' should be either 'true' or 'false', not '%s'", v);
    if ((v = opt_get(p, "log_all")) && strcasecmp(v, "true") && strcasecmp(v, "false"))
        return cs_error_set(e, CS_ERR_CONFIG, "'log_all' should either be 'true' or 'false', not %s", v);
    if ((v = opt_get(p, "enabled")) && strcasecmp(v, "true") && strcasecmp(v, "false"))
        return cs_error_set(e, CS_ERR_CONFIG, "enabled should either be 'true' or 'false', not %s", v);
    return 0;
}

/* SizeTieredCompactionStrategyOptions.validateOptions (STCS, and the size
 * tiers of TWCS's newest window and LCS's L0). */
static int validate_stcs_opts(const ast_prop *p, cs_error *e)
{
    const char *v;
    if ((v = opt_get(p, "min_sstable_size"))) {
        int64_t n;
        if (!java_long(v, &n))
            return cs_error_set(e, CS_ERR_CONFIG, "%s is not a parsable int (base10) for min_sstable_size", v);
        if (n < 0) return cs_error_set(e, CS_ERR_CONFIG, "min_sstable_size must be non negative: %lld", (long long)n);
    }
    double low = 0.5, high = 1.5;
    if ((v = opt_get(p, "bucket_low")) && !java_double(v, &low))
        return cs_error_set(e, CS_ERR_CONFIG, "%s is not a parsable float for bucket_low", v);
    if ((v = opt_get(p, "bucket_high")) && !java_double(v, &high))
        return cs_error_set(e, CS_ERR_CONFIG, "%s is not a parsable float for bucket_high", v);
    if (!(high > low)) {   /* Java's bucketHigh <= bucketLow: false with a NaN */
        if (isnan(high) || isnan(low)) return 0;
        char a[64], b[64];
        return cs_error_set(e, CS_ERR_CONFIG, "bucket_high value (%s) is less than or equal to the bucket_low value (%s)",
                            jdouble(high, a, sizeof a), jdouble(low, b, sizeof b));
    }
    return 0;
}

/* LeveledCompactionStrategy.validateOptions (after the common ones). */
static int validate_lcs_opts(const ast_prop *p, cs_error *e)
{
    const char *size = opt_get(p, "sstable_size_in_mb");
    if (!size) size = "1";
    int n;
    if (!java_int(size, &n))
        return cs_error_set(e, CS_ERR_CONFIG, "%s is not a parsable int (base10) for sstable_size_in_mb", size);
    if (n < 1) return cs_error_set(e, CS_ERR_CONFIG, "sstable_size_in_mb must be larger than 0, but was %d", n);
    const char *fan = opt_get(p, "fanout_size");
    if (fan && !java_int(fan, &n))   /* Cassandra's message names the sstable size's value here */
        return cs_error_set(e, CS_ERR_CONFIG, "%s is not a parsable int (base10) for fanout_size", size);
    if (fan && n < 1) return cs_error_set(e, CS_ERR_CONFIG, "fanout_size must be larger than 0, but was %d", n);
    return validate_stcs_opts(p, e);
}

/* TimeWindowCompactionStrategyOptions.validateOptions. */
static int validate_twcs_opts(const ast_prop *p, cs_error *e)
{
    const char *v;
    if ((v = opt_get(p, "timestamp_resolution")) && strcmp(v, "SECONDS") && strcmp(v, "MILLISECONDS") &&
        strcmp(v, "MICROSECONDS") && strcmp(v, "NANOSECONDS"))
        return cs_error_set(e, CS_ERR_CONFIG, "%s is not valid for timestamp_resolution", v);
    if ((v = opt_get(p, "compaction_window_unit")) && strcmp(v, "MINUTES") && strcmp(v, "HOURS") && strcmp(v, "DAYS"))
        return cs_error_set(e, CS_ERR_CONFIG, "%s is not valid for compaction_window_unit", v);
    if ((v = opt_get(p, "compaction_window_size"))) {
        int n;
        if (!java_int(v, &n))
            return cs_error_set(e, CS_ERR_CONFIG, "%s is not a parsable int (base10) for compaction_window_size", v);
        if (n < 1) return cs_error_set(e, CS_ERR_CONFIG, "%d must be greater than 1 for compaction_window_size", n);
    }
    if ((v = opt_get(p, "expired_sstable_check_frequency_seconds"))) {
        int64_t n;
        if (!java_long(v, &n))
            return cs_error_set(e, CS_ERR_CONFIG, "%s is not a parsable int (base10) for expired_sstable_check_frequency_seconds", v);
        if (n < 0)
            return cs_error_set(e, CS_ERR_CONFIG, "expired_sstable_check_frequency_seconds must not be negative, but was %lld",
                                (long long)n);
    }
    if ((v = opt_get(p, "unsafe_aggressive_sstable_expiration"))) {
        if (strcasecmp(v, "true") && strcasecmp(v, "false"))
            return cs_error_set(e, CS_ERR_CONFIG, "unsafe_aggressive_sstable_expiration is not 'true' or 'false' (%s)", v);
        if (strcasecmp(v, "true") == 0)   /* the system property is never set here */
            return cs_error_set(e, CS_ERR_CONFIG, "unsafe_aggressive_sstable_expiration is requested but not allowed, restart "
                                "cassandra with -Dcassandra.allow_unsafe_aggressive_sstable_expiration=true to allow it");
    }
    return validate_stcs_opts(p, e);
}

/* CompactionParams.validate's threshold checks (after the strategy's). */
static int validate_thresholds(const ast_prop *p, cs_error *e)
{
    const char *mins = opt_get(p, "min_threshold"), *maxs = opt_get(p, "max_threshold");
    const char *names[2] = { "min_threshold", "max_threshold" }, *vals[2] = { mins, maxs };
    for (int i = 0; i < 2; i++)   /* StringUtils.isNumeric: digits only, not empty */
        if (vals[i] && (!*vals[i] || strspn(vals[i], "0123456789") != strlen(vals[i])))
            return cs_error_set(e, CS_ERR_CONFIG, "Invalid value %s for '%s' compaction sub-option - must be an integer",
                                vals[i], names[i]);
    int mn = 4, mx = 32;
    if ((mins && !java_int(mins, &mn)) || (maxs && !java_int(maxs, &mx)))   /* Integer.parseInt's NumberFormatException */
        return cs_error_set(e, CS_ERR_CONFIG, "For input string: \"%s\"", mins && !java_int(mins, &mn) ? mins : maxs);
    if (mn <= 0 || mx <= 0)
        return cs_error_set(e, CS_ERR_CONFIG, "Disabling compaction by setting compaction thresholds to 0 has been removed,"
                            " set the compaction option 'enabled' to false instead.");
    if (mn <= 1) return cs_error_set(e, CS_ERR_CONFIG, "Min compaction threshold cannot be less than 2 (got %d)", mn);
    if (mn > mx)
        return cs_error_set(e, CS_ERR_CONFIG, "Min compaction threshold (got %d) cannot be greater than max compaction threshold (got %d)",
                            mn, mx);
    return 0;
}

/* CompactionParams.fromMap + validate: the class, provide_overlapping_
 * tombstones, the strategy's validateOptions, options no strategy
 * understands, then min/max_threshold, in Cassandra's order. */
static int apply_compaction(sch_table *t, const ast_prop *p, cs_error *e)
{
    if (need_map(p, e)) return CS_EUSER;
    const char *cls = opt_get(p, "class");
    if (!cls)
        return cs_error_set(e, CS_ERR_CONFIG, "Missing sub-option 'class' for the 'compaction' option.");
    char full[256];
    if (strchr(cls, '.')) snprintf(full, sizeof full, "%s", cls);
    else snprintf(full, sizeof full, "org.apache.cassandra.db.compaction.%s", cls);
    const char *simple = strrchr(full, '.') + 1;
    static const char *const known[] = {
        "SizeTieredCompactionStrategy", "LeveledCompactionStrategy", "TimeWindowCompactionStrategy",
    };
    bool ok = false;
    for (size_t i = 0; i < CS_ARRAY_LEN(known); i++)
        if (strcmp(simple, known[i]) == 0 && strncmp(full, "org.apache.cassandra.db.compaction.", 35) == 0) ok = true;
    if (!ok)
        return cs_error_set(e, CS_ERR_CONFIG, "Unable to find compaction strategy class '%s'", full);
    bool is_lcs = strcmp(simple, "LeveledCompactionStrategy") == 0;
    bool is_twcs = strcmp(simple, "TimeWindowCompactionStrategy") == 0;
    const char *pot = opt_get(p, "provide_overlapping_tombstones");
    if (pot) {
        char up[128];
        size_t i = 0;
        for (; pot[i] && i + 1 < sizeof up; i++) up[i] = (char)toupper((unsigned char)pot[i]);
        up[i] = 0;
        if (strcmp(up, "NONE") && strcmp(up, "ROW") && strcmp(up, "CELL"))
            return cs_error_set(e, CS_ERR_CONFIG, "Invalid value %s for 'provide_overlapping_tombstones' compaction sub-option - "
                                "must be one of the following [NONE, ROW, CELL].", up);
    }
    if (validate_common_opts(p, e)) return CS_EUSER;
    if ((is_lcs ? validate_lcs_opts(p, e) : is_twcs ? validate_twcs_opts(p, e) : validate_stcs_opts(p, e))) return CS_EUSER;
    /* options each strategy understands (AbstractCompactionStrategy + its own) */
    static const char *const common[] = {
        "class", "enabled", "min_threshold", "max_threshold", "tombstone_threshold", "tombstone_compaction_interval",
        "unchecked_tombstone_compaction", "log_all", "only_purge_repaired_tombstones", "provide_overlapping_tombstones",
        "min_sstable_size", "bucket_low", "bucket_high",
    };
    static const char *const lcs[] = { "sstable_size_in_mb", "fanout_size", "single_sstable_uplevel" };
    static const char *const twcs[] = {
        "compaction_window_unit", "compaction_window_size", "timestamp_resolution",
        "expired_sstable_check_frequency_seconds", "unsafe_aggressive_sstable_expiration",
    };
    const char *const *own = NULL;
    size_t n_own = 0;
    if (is_lcs) { own = lcs; n_own = CS_ARRAY_LEN(lcs); }
    if (is_twcs) { own = twcs; n_own = CS_ARRAY_LEN(twcs); }
    cs_buf bad;
    cs_buf_init(&bad);
    for (int i = 0; i < p->n_map; i++) {
        bool known = false;
        for (size_t j = 0; j < CS_ARRAY_LEN(common) && !known; j++) known = strcmp(p->map_keys[i], common[j]) == 0;
        for (size_t j = 0; j < n_own && !known; j++) known = strcmp(p->map_keys[i], own[j]) == 0;
        if (known) continue;
        sch__puts(&bad, bad.len ? ", " : "[");
        sch__puts(&bad, p->map_keys[i]);
    }
    if (bad.len) {
        sch__puts(&bad, "]");
        int rc = cs_error_set(e, CS_ERR_CONFIG, "Properties specified %s are not understood by %s",
                              sch__bufstr(&bad) ? (char *)bad.p : "", simple);
        cs_buf_destroy(&bad);
        return rc;
    }
    cs_buf_destroy(&bad);
    if (validate_thresholds(p, e)) return CS_EUSER;
    kv_reset(&t->compaction_k, &t->compaction_v, &t->n_compaction);
    for (int i = 0; i < p->n_map; i++) {
        if (strcmp(p->map_keys[i], "class") == 0) continue;
        sch__kv_set(&t->compaction_k, &t->compaction_v, &t->n_compaction, p->map_keys[i], p->map_values[i]);
    }
    sch__kv_set(&t->compaction_k, &t->compaction_v, &t->n_compaction, "class", full);
    if (!sch__kv_get(t->compaction_k, t->compaction_v, t->n_compaction, "max_threshold"))
        sch__kv_set(&t->compaction_k, &t->compaction_v, &t->n_compaction, "max_threshold", "32");
    if (!sch__kv_get(t->compaction_k, t->compaction_v, t->n_compaction, "min_threshold"))
        sch__kv_set(&t->compaction_k, &t->compaction_v, &t->n_compaction, "min_threshold", "4");
    return 0;
}

static int apply_compression(sch_table *t, const ast_prop *p, cs_error *e)
{
    if (need_map(p, e)) return CS_EUSER;
    const char *cls = NULL, *enabled = NULL;
    for (int i = 0; i < p->n_map; i++) {
        if (strcmp(p->map_keys[i], "class") == 0) cls = p->map_values[i];
        if (strcmp(p->map_keys[i], "enabled") == 0) enabled = p->map_values[i];
    }
    kv_reset(&t->compression_k, &t->compression_v, &t->n_compression);
    if (enabled && strcasecmp(enabled, "false") == 0) {
        if (p->n_map > 1)
            return cs_error_set(e, CS_ERR_CONFIG, "If the 'enabled' option is set to false no other options must be specified");
        sch__kv_set(&t->compression_k, &t->compression_v, &t->n_compression, "enabled", "false");
        return 0;
    }
    if (!cls)
        return cs_error_set(e, CS_ERR_CONFIG, "Missing sub-option 'class' for the 'compression' option.");
    if (!*cls) {
        sch__kv_set(&t->compression_k, &t->compression_v, &t->n_compression, "enabled", "false");
        return 0;
    }
    char full[256];
    if (strchr(cls, '.')) snprintf(full, sizeof full, "%s", cls);
    else snprintf(full, sizeof full, "org.apache.cassandra.io.compress.%s", cls);
    static const char *const known[] = {
        "org.apache.cassandra.io.compress.LZ4Compressor", "org.apache.cassandra.io.compress.SnappyCompressor",
        "org.apache.cassandra.io.compress.DeflateCompressor", "org.apache.cassandra.io.compress.ZstdCompressor",
        "org.apache.cassandra.io.compress.NoopCompressor",
    };
    bool ok = false;
    for (size_t i = 0; i < CS_ARRAY_LEN(known); i++) if (strcmp(full, known[i]) == 0) ok = true;
    if (!ok) return cs_error_set(e, CS_ERR_CONFIG, "Could not create Compression for type %s", full);
    sch__kv_set(&t->compression_k, &t->compression_v, &t->n_compression, "class", full);
    sch__kv_set(&t->compression_k, &t->compression_v, &t->n_compression, "chunk_length_in_kb", "16");
    for (int i = 0; i < p->n_map; i++) {
        const char *k = p->map_keys[i];
        if (strcmp(k, "class") == 0 || strcmp(k, "enabled") == 0) continue;
        if (strcmp(k, "chunk_length_kb") == 0) k = "chunk_length_in_kb";
        if (strcmp(k, "chunk_length_in_kb") && strcmp(k, "min_compress_ratio") && strcmp(k, "compression_level")
            && strcmp(k, "lz4_compressor_type") && strcmp(k, "lz4_high_compressor_level"))
            return cs_error_set(e, CS_ERR_CONFIG, "Unknown compression options %s", k);
        sch__kv_set(&t->compression_k, &t->compression_v, &t->n_compression, k, p->map_values[i]);
    }
    return 0;
}

/* CachingParams.fromMap: a missing 'keys' means NONE, a missing
 * 'rows_per_partition' means NONE (0); ALL/NONE/integer; extra keys refused. */
static int apply_caching(sch_table *t, const ast_prop *p, cs_error *e)
{
    if (need_map(p, e)) return CS_EUSER;
    const char *keys = NULL, *rows = NULL;
    cs_buf extra;
    cs_buf_init(&extra);
    for (int i = 0; i < p->n_map; i++) {
        if (strcmp(p->map_keys[i], "keys") == 0) keys = p->map_values[i];
        else if (strcmp(p->map_keys[i], "rows_per_partition") == 0) rows = p->map_values[i];
        else { sch__puts(&extra, extra.len ? ", " : "["); sch__puts(&extra, p->map_keys[i]); }
    }
    int rc = 0;
    if (keys && strcasecmp(keys, "ALL") && strcasecmp(keys, "NONE"))
        rc = cs_error_set(e, CS_ERR_CONFIG, "Invalid value '%s' for caching sub-option 'keys': only 'ALL' and 'NONE' are allowed", keys);
    char rowsbuf[32] = "NONE";
    if (rc == 0 && rows) {
        size_t digits = strspn(rows, "0123456789");
        if (strcasecmp(rows, "ALL") == 0) snprintf(rowsbuf, sizeof rowsbuf, "ALL");
        else if (strcasecmp(rows, "NONE") == 0) snprintf(rowsbuf, sizeof rowsbuf, "NONE");
        else if (digits > 0 && !rows[digits] && digits < 10) {
            long nrows = strtol(rows, NULL, 10);
            if (nrows == 0) snprintf(rowsbuf, sizeof rowsbuf, "NONE");
            else snprintf(rowsbuf, sizeof rowsbuf, "%ld", nrows);
        } else {
            rc = cs_error_set(e, CS_ERR_CONFIG, "Invalid value '%s' for caching sub-option 'rows_per_partition': "
                              "only 'ALL', 'NONE', and integer values are allowed", rows);
        }
    }
    if (rc == 0 && extra.len) {
        sch__puts(&extra, "]");
        rc = cs_error_set(e, CS_ERR_CONFIG, "Invalid caching sub-options %s: only 'keys' and 'rows_per_partition' are allowed",
                          sch__bufstr(&extra) ? (char *)extra.p : "");
    }
    cs_buf_destroy(&extra);
    if (rc) return CS_EUSER;
    kv_reset(&t->caching_k, &t->caching_v, &t->n_caching);
    sch__kv_set(&t->caching_k, &t->caching_v, &t->n_caching, "keys", keys && strcasecmp(keys, "ALL") == 0 ? "ALL" : "NONE");
    sch__kv_set(&t->caching_k, &t->caching_v, &t->n_caching, "rows_per_partition", rowsbuf);
    return 0;
}

/* Apply WITH options to t (CREATE: on defaults; ALTER: on current values). */
int ddl_apply_table_props(sch_table *t, const ast_props *props, bool is_view, bool altering, cs_error *e)
{
    for (int i = 0; i < props->n; i++) {
        const ast_prop *p = &props->items[i];
        for (int j = 0; j < i; j++)
            if (strcmp(props->items[j].name, p->name) == 0)
                return cs_error_set(e, CS_ERR_SYNTAX, "Multiple definition for property '%s'", p->name);
        const char *n = p->name;
        int rc = 0;
        char *s = NULL;
        if (strcmp(n, "comment") == 0) {
            if (!(rc = need_string(p, e))) { cs_free(t->comment); t->comment = cs_strdup(p->value); }
        } else if (strcmp(n, "default_time_to_live") == 0) {
            rc = get_int(p, &t->default_ttl_s, e);
        } else if (strcmp(n, "gc_grace_seconds") == 0) {
            rc = get_int(p, &t->gc_grace_s, e);
        } else if (strcmp(n, "bloom_filter_fp_chance") == 0) {
            rc = get_double(p, &t->bloom_fp_chance, e);
        } else if (strcmp(n, "crc_check_chance") == 0) {
            rc = get_double(p, &t->crc_check_chance, e);
        } else if (strcmp(n, "min_index_interval") == 0) {
            rc = get_int(p, &t->min_index_interval, e);
        } else if (strcmp(n, "max_index_interval") == 0) {
            rc = get_int(p, &t->max_index_interval, e);
        } else if (strcmp(n, "memtable_flush_period_in_ms") == 0) {
            rc = get_int(p, &t->memtable_flush_period_ms, e);
        } else if (strcmp(n, "speculative_retry") == 0) {
            if (!(rc = norm_retry(p, &s, e))) { cs_free(t->speculative_retry); t->speculative_retry = s; }
        } else if (strcmp(n, "additional_write_policy") == 0) {
            if (!(rc = norm_retry(p, &s, e))) { cs_free(t->additional_write_policy); t->additional_write_policy = s; }
        } else if (strcmp(n, "read_repair") == 0) {
            if (!(rc = need_string(p, e))) {
                if (strcasecmp(p->value, "BLOCKING") && strcasecmp(p->value, "NONE"))
                    return cs_error_set(e, CS_ERR_CONFIG, "No enum constant org.apache.cassandra.service.reads.repair.ReadRepairStrategy.%s", p->value);
                cs_free(t->read_repair);
                t->read_repair = cs_strdup(strcasecmp(p->value, "NONE") ? "BLOCKING" : "NONE");
            }
        } else if (strcmp(n, "cdc") == 0) {
            rc = get_bool(p, &t->cdc, e);
        } else if (strcmp(n, "caching") == 0) {
            rc = apply_caching(t, p, e);
        } else if (strcmp(n, "compaction") == 0) {
            rc = apply_compaction(t, p, e);
        } else if (strcmp(n, "compression") == 0) {
            rc = apply_compression(t, p, e);
        } else if (strcmp(n, "extensions") == 0) {
            rc = need_map(p, e);   /* accepted, not stored (no extensions supported) */
        } else if (strcmp(n, "memtable") == 0) {
            if (!(rc = need_string(p, e)) && strcmp(p->value, "default") != 0)
                return cs_error_set(e, CS_ERR_CONFIG, "Memtable configuration \"%s\" not found.", p->value);
        } else if (strcmp(n, "id") == 0 && !altering && !is_view) {
            cs_uuid u;
            if ((rc = need_string(p, e))) return rc;
            if (cs_uuid_parse(p->value, strlen(p->value), &u))
                return cs_error_set(e, CS_ERR_CONFIG, "Invalid table id");
            memcpy(t->id, u.b, 16);
        } else if (strcmp(n, "id") == 0) {
            return cs_error_set(e, CS_ERR_CONFIG, "Cannot alter table id.");
        } else {
            return cs_error_set(e, CS_ERR_SYNTAX, "Unknown property '%s'", n);
        }
        if (rc) return CS_EUSER;
    }
    /* TableParams.validate */
    /* BloomCalculations.minSupportedBloomFilterFpChance() = 6.71E-5 */
    if (t->bloom_fp_chance <= 6.71e-05 || t->bloom_fp_chance > 1.0) {
        cs_buf b; cs_buf_init(&b); sch__put_double(&b, t->bloom_fp_chance);
        int rc = cs_error_set(e, CS_ERR_CONFIG, "bloom_filter_fp_chance must be larger than 6.71E-5 and less than or equal to 1.0 (got %s)",
                              sch__bufstr(&b) ? (char *)b.p : "?");
        cs_buf_destroy(&b);
        return rc;
    }
    if (t->crc_check_chance < 0 || t->crc_check_chance > 1.0) {
        cs_buf b; cs_buf_init(&b); sch__put_double(&b, t->crc_check_chance);
        int rc = cs_error_set(e, CS_ERR_CONFIG, "crc_check_chance must be larger than or equal to 0 and smaller than or equal to 1.0 (got %s)",
                              sch__bufstr(&b) ? (char *)b.p : "?");
        cs_buf_destroy(&b);
        return rc;
    }
    if (t->default_ttl_s < 0)
        return cs_error_set(e, CS_ERR_CONFIG, "default_time_to_live must be greater than or equal to 0 (got %d)", t->default_ttl_s);
    if (t->default_ttl_s > 630720000)
        return cs_error_set(e, CS_ERR_CONFIG, "default_time_to_live must be less than or equal to %d (got %d)", 630720000, t->default_ttl_s);
    if (t->gc_grace_s < 0)
        return cs_error_set(e, CS_ERR_CONFIG, "gc_grace_seconds must be greater than or equal to 0 (got %d)", t->gc_grace_s);
    if (t->min_index_interval < 1)
        return cs_error_set(e, CS_ERR_CONFIG, "min_index_interval must be greater than or equal to 1 (got %d)", t->min_index_interval);
    if (t->max_index_interval < t->min_index_interval)
        return cs_error_set(e, CS_ERR_CONFIG, "max_index_interval must be greater than or equal to min_index_interval (%d) (got %d)",
                            t->min_index_interval, t->max_index_interval);
    if (t->memtable_flush_period_ms < 0)
        return cs_error_set(e, CS_ERR_CONFIG, "memtable_flush_period_in_ms must be greater than or equal to 0 (got %d)",
                            t->memtable_flush_period_ms);
    return 0;
}

/* Keyspace WITH: replication map and durable_writes.  `k` holds the current
 * values when altering; replication is replaced as a whole when given. */
int ddl_apply_keyspace_props(sch_keyspace *k, const ast_props *props, bool creating, cs_error *e)
{
    const ast_prop *repl = NULL;
    for (int i = 0; i < props->n; i++) {
        const ast_prop *p = &props->items[i];
        for (int j = 0; j < i; j++)
            if (strcmp(props->items[j].name, p->name) == 0)
                return cs_error_set(e, CS_ERR_SYNTAX, "Multiple definition for property '%s'", p->name);
        if (strcmp(p->name, "replication") == 0) {
            if (need_map(p, e)) return CS_EUSER;
            repl = p;
        } else if (strcmp(p->name, "durable_writes") == 0) {
            if (get_bool(p, &k->durable_writes, e)) return CS_EUSER;
        } else {
            return cs_error_set(e, CS_ERR_SYNTAX, "Unknown property '%s'", p->name);
        }
    }
    if (!repl) {
        if (creating) return cs_error_set(e, CS_ERR_INVALID, "Missing mandatory option 'replication'");
        return 0;
    }
    const char *cls = NULL;
    for (int i = 0; i < repl->n_map; i++)
        if (strcmp(repl->map_keys[i], "class") == 0) cls = repl->map_values[i];
    if (!cls) return cs_error_set(e, CS_ERR_CONFIG, "Missing replication strategy class");
    char full[256];
    if (strchr(cls, '.')) snprintf(full, sizeof full, "%s", cls);
    else snprintf(full, sizeof full, "org.apache.cassandra.locator.%s", cls);
    bool simple = strcmp(full, "org.apache.cassandra.locator.SimpleStrategy") == 0;
    bool nts = strcmp(full, "org.apache.cassandra.locator.NetworkTopologyStrategy") == 0;
    if (strcmp(full, "org.apache.cassandra.locator.LocalStrategy") == 0)
        return cs_error_set(e, CS_ERR_INVALID, "Unable to use given strategy class: LocalStrategy is reserved for internal use.");
    if (strcmp(full, "org.apache.cassandra.locator.OldNetworkTopologyStrategy") == 0)
        return cs_error_set(e, CS_ERR_CONFIG, "The support for the OldNetworkTopologyStrategy has been removed in C* version 4.0. "
                            "The keyspace strategy should be switch to NetworkTopologyStrategy");
    if (!simple && !nts)
        return cs_error_set(e, CS_ERR_CONFIG, "Unable to find replication strategy class '%s'", full);
    /* options without 'class'; prev = the current ones when altering */
    char **ok_ = NULL, **ov = NULL;
    int on = 0;
    for (int i = 0; i < repl->n_map; i++)
        if (strcmp(repl->map_keys[i], "class") != 0)
            sch__kv_set(&ok_, &ov, &on, repl->map_keys[i], repl->map_values[i]);
    const char *prev_rf = creating ? NULL : sch__kv_get(k->repl_k, k->repl_v, k->n_repl, "replication_factor");
    int rc = 0;
    if (simple) {
        /* SimpleStrategy.prepareOptions: default to the previous or default_keyspace_rf (1) */
        if (!sch__kv_get(ok_, ov, on, "replication_factor"))
            sch__kv_set(&ok_, &ov, &on, "replication_factor", prev_rf ? prev_rf : "1");
        for (int i = 0; rc == 0 && i < on; i++)
            if (strcmp(ok_[i], "replication_factor") != 0)
                rc = cs_error_set(e, CS_ERR_CONFIG, "Unrecognized strategy option {%s} passed to SimpleStrategy for keyspace %s",
                                  ok_[i], k->name);
    } else {
        /* NetworkTopologyStrategy.prepareOptions (CASSANDRA-14303 auto-expansion) */
        if (on == 0) sch__kv_set(&ok_, &ov, &on, "replication_factor", prev_rf ? prev_rf : "1");
        char *rep = NULL;
        const char *r0 = sch__kv_get(ok_, ov, on, "replication_factor");
        if (r0) {
            rep = cs_strdup(r0);
            char **tk = NULL, **tv = NULL;
            int tn = 0;
            for (int i = 0; i < on; i++)
                if (strcmp(ok_[i], "replication_factor") != 0) sch__kv_set(&tk, &tv, &tn, ok_[i], ov[i]);
            sch__kv_free(ok_, ov, on);
            ok_ = tk; ov = tv; on = tn;
        }
        if (!rep && on == 0 && prev_rf) {
            rep = cs_strdup(prev_rf);
        } else if (rep && !creating) {
            for (int i = 0; i < k->n_repl; i++)
                if (strcmp(k->repl_k[i], "class") && strcmp(k->repl_k[i], "replication_factor")
                    && !sch__kv_get(ok_, ov, on, k->repl_k[i]))
                    sch__kv_set(&ok_, &ov, &on, k->repl_k[i], k->repl_v[i]);
        }
        if (rep && !sch__kv_get(ok_, ov, on, "datacenter1")) sch__kv_set(&ok_, &ov, &on, "datacenter1", rep);
        cs_free(rep);
        /* drop DCs with replication 0 */
        char **tk = NULL, **tv = NULL;
        int tn = 0;
        for (int i = 0; i < on; i++) if (strcmp(ov[i], "0") != 0) sch__kv_set(&tk, &tv, &tn, ok_[i], ov[i]);
        sch__kv_free(ok_, ov, on);
        ok_ = tk; ov = tv; on = tn;
        if (on == 0) rc = cs_error_set(e, CS_ERR_CONFIG, "Configuration for at least one datacenter must be present");
        for (int i = 0; rc == 0 && i < on; i++)
            if (strcmp(ok_[i], "datacenter1") != 0)
                rc = cs_error_set(e, CS_ERR_CONFIG, "Unrecognized strategy option {%s} passed to NetworkTopologyStrategy for keyspace %s",
                                  ok_[i], k->name);
    }
    for (int i = 0; rc == 0 && i < on; i++) {
        const char *val = ov[i];
        char *end;
        long rf = strtol(val, &end, 10);
        if (*end == '/')
            rc = cs_error_set(e, CS_ERR_CONFIG, "Transient replication is disabled. Enable in cassandra.yaml to use.");
        else if (!*val || *end)
            rc = cs_error_set(e, CS_ERR_CONFIG, "For input string: \"%s\"", val);
        else if (rf < 0)
            rc = cs_error_set(e, CS_ERR_CONFIG, "Replication factor must be non-negative, found %ld", rf);
    }
    char **nk = NULL, **nv = NULL;
    int nn = 0;
    if (rc == 0) {
        sch__kv_set(&nk, &nv, &nn, "class", full);
        for (int i = 0; i < on; i++) sch__kv_set(&nk, &nv, &nn, ok_[i], ov[i]);
    }
    sch__kv_free(ok_, ov, on);
    if (rc) return CS_EUSER;
    sch__kv_free(k->repl_k, k->repl_v, k->n_repl);
    k->repl_k = nk;
    k->repl_v = nv;
    k->n_repl = nn;
    return 0;
}
