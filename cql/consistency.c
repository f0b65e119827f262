/*
 * consistency.c: the names of the consistency levels, on their own so that
 * the server's config (guardrail lists) links nothing else of cql/.
 */
#include "cql/exec.h"

const char *cql_consistency_level_name(unsigned code)
{
    static const char *const names[] = { "ANY", "ONE", "TWO", "THREE", "QUORUM", "ALL", "LOCAL_QUORUM",
                                         "EACH_QUORUM", "SERIAL", "LOCAL_SERIAL", "LOCAL_ONE", "NODE_LOCAL" };
    return code < sizeof names / sizeof names[0] ? names[code] : NULL;
}
