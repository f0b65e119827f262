/*
 * consistency.c: the names of the consistency levels and of the table
 * properties, on their own so that the server's config (guardrail lists)
 * links nothing else of cql/.
 */
#include <stdint.h>
#include "cql/exec.h"

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

void cql_java_hashset_order(const char **names, int n)
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
