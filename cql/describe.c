/*
 * describe.c: server-side DESCRIBE (Cassandra 4.1 DescribeStatement) and the
 * CQL text of schema objects.  Owner: catalog.
 */
#include <string.h>
#include "cql/schema_int.h"

int cql_exec_describe(cql_ctx *ctx, cql_session *s, cql_stmt *st, const cql_params *p,
                      cql_result *r, cs_error *e)
{
    return cs_error_set(e, CS_ERR_INVALID, "DESCRIBE is not supported yet");
}
