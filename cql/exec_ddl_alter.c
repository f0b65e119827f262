/*
 * exec_ddl_alter.c: ALTER TABLE, CREATE/ALTER/DROP TYPE, CREATE/DROP INDEX,
 * CREATE/ALTER/DROP MATERIALIZED VIEW (schema objects only).  Owner: catalog.
 */
#include <string.h>
#include <stdio.h>

#include "cql/ddl_int.h"
#include "common/alloc.h"

#define NOT_YET(fn) \
    int fn(cql_ctx *ctx, cql_session *s, cql_stmt *st, cql_result *r, cs_error *e) \
    { return cs_error_set(e, CS_ERR_INVALID, "This schema statement is not supported yet"); }

NOT_YET(ddl_alter_table)
NOT_YET(ddl_create_type)
NOT_YET(ddl_alter_type)
NOT_YET(ddl_drop_type)
NOT_YET(ddl_create_index)
NOT_YET(ddl_drop_index)
NOT_YET(ddl_create_view)
NOT_YET(ddl_alter_view)
NOT_YET(ddl_drop_view)
