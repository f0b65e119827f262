/*
 * consistency.c: the names the server's config shares with cql/ (the
 * consistency levels, the table properties, the guardrails' thresholds)
 * and their Java-style printing, on their own so that the config links
 * nothing else of cql/.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "cql/cql_int.h"

const char *cql_consistency_level_name(unsigned code)
{
    static const char *const names[] = { "ANY", "ONE", "TWO", "THREE", "QUORUM", "ALL", "LOCAL_QUORUM",
                                         "EACH_QUORUM", "SERIAL", "LOCAL_SERIAL", "LOCAL_ONE", "NODE_LOCAL" };
    return code < sizeof names / sizeof names[0] ? names[code] : NULL;
}

const char *cql_table_property_name(unsigned i)
{
    /* TableAttributes' valid keywords: TableParams.Option, then "id" */
    static const char *const names[] = { "bloom_filter_fp_chance", "caching", "comment", "compaction", "compression",
                                         "memtable", "default_time_to_live", "extensions", "gc_grace_seconds",
                                         "max_index_interval", "memtable_flush_period_in_ms", "min_index_interval",
                                         "speculative_retry", "additional_write_policy", "crc_check_chance", "cdc",
                                         "read_repair", "id" };
    return i < sizeof names / sizeof names[0] ? names[i] : NULL;
}

/* Java's String.hashCode, then HashMap's spread of it. */
static unsigned java_spread(const char *s)
{
    int32_t h = 0;
    for (; *s; s++)
        h = (int32_t)((uint32_t)h * 31u + (unsigned char)*s);
    uint32_t u = (uint32_t)h;
    return u ^ (u >> 16);
}

/* Reorder names[0..n) (inserted in that order) as a Java HashSet of them
 * iterates. */
static void java_hashset_order(const char **names, int n)
{
    unsigned cap = 16;
    while ((unsigned)n > cap / 4 * 3)
        cap *= 2;
    for (int i = 1; i < n; i++) {   /* stable insertion sort by bucket: a bucket keeps insertion order */
        const char *x = names[i];
        unsigned bx = java_spread(x) & (cap - 1);
        int j = i - 1;
        while (j >= 0 && (java_spread(names[j]) & (cap - 1)) > bx) {
            names[j + 1] = names[j];
            j--;
        }
        names[j + 1] = x;
    }
}

void cql_name_list(const char *const *names, int n, char *out, size_t cap)
{
    size_t k = (size_t)snprintf(out, cap, "[");
    for (int i = 0; i < n && k < cap; i++)
        k += (size_t)snprintf(out + k, cap - k, "%s%s", i ? ", " : "", names[i]);
    if (k < cap)
        snprintf(out + k, cap - k, "]");
}

void cql_consistency_set_text(uint32_t bits, char *out, size_t cap)
{
    const char *names[32];
    int n = 0;
    for (unsigned i = 0; cql_consistency_level_name(i); i++)
        if (bits & (1u << i))
            names[n++] = cql_consistency_level_name(i);
    cql_name_list(names, n, out, cap);
}

void cql_table_props_text(const uint8_t *idx, int n, char *out, size_t cap)
{
    const char *names[CQL_TABLE_PROPERTIES];
    for (int i = 0; i < n && i < CQL_TABLE_PROPERTIES; i++)
        names[i] = cql_table_property_name(idx[i]);
    n = n < CQL_TABLE_PROPERTIES ? n : CQL_TABLE_PROPERTIES;
    java_hashset_order(names, n);
    cql_name_list(names, n, out, cap);
}

#define TH(g, field, bytes, min) [g] = { #field, offsetof(struct cql_guardrails, field), bytes, min }
const cql_guard_threshold_def cql_guard_thresholds[] = {
    TH(CQL_GUARD_KEYSPACES, keyspaces, false, false),
    TH(CQL_GUARD_TABLES, tables, false, false),
    TH(CQL_GUARD_COLUMNS_PER_TABLE, columns_per_table, false, false),
    TH(CQL_GUARD_SECONDARY_INDEXES_PER_TABLE, secondary_indexes_per_table, false, false),
    TH(CQL_GUARD_MATERIALIZED_VIEWS_PER_TABLE, materialized_views_per_table, false, false),
    TH(CQL_GUARD_PAGE_SIZE, page_size, false, false),
    TH(CQL_GUARD_PARTITION_KEYS_IN_SELECT, partition_keys_in_select, false, false),
    TH(CQL_GUARD_FIELDS_PER_UDT, fields_per_udt, false, false),
    TH(CQL_GUARD_ITEMS_PER_COLLECTION, items_per_collection, false, false),
    TH(CQL_GUARD_COLLECTION_SIZE, collection_size, true, false),
    TH(CQL_GUARD_IN_SELECT_CARTESIAN_PRODUCT, in_select_cartesian_product, false, false),
    TH(CQL_GUARD_MINIMUM_REPLICATION_FACTOR, minimum_replication_factor, false, true),
};
#undef TH
const int cql_guard_n_thresholds = (int)(sizeof cql_guard_thresholds / sizeof cql_guard_thresholds[0]);
