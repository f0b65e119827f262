/*
 * ddl_int.h: shared by the DDL files (exec_ddl.c, exec_ddl_alter.c,
 * ddl_opts.c).  Owner: catalog.
 */
#ifndef CS_CQL_DDL_INT_H
#define CS_CQL_DDL_INT_H

#include "cql/schema_int.h"

int ddl_apply_table_props(sch_table *t, const ast_props *props, bool is_view, bool altering, cs_error *e);
int ddl_apply_keyspace_props(sch_keyspace *k, const ast_props *props, bool creating, cs_error *e);

/* Keyspace of a [ks.]name, or the session's; NULL with e set if neither. */
const char *ddl_keyspace_of(const ast_qname *q, const cql_session *s, cs_error *e);
/* Refuse DDL on system/virtual keyspaces (AlterSchemaStatement.execute). */
int ddl_check_modifiable(sch_catalog *c, const char *ks, cs_error *e);
/* RESULT Schema_change + r->schema_changed / r->change. */
void ddl_schema_change(cql_result *r, const char *change, const char *target, const char *ks, const char *name);
/* Parse a column type in keyspace ks (UDTs resolved in the catalog). */
ctype *ddl_parse_type(sch_catalog *c, const char *text, const char *ks, cs_error *e);
/* Persist t's rows (replacing older ones) in one mutation. */
int ddl_write_table(sch_catalog *c, sch_table *t, cs_error *e);

/* ALTER ... WITH options on an existing table or view (validated first). */
/* uncompressed_ok: false when guardrail uncompressed_tables_enabled refuses
 * a table without compression (ddl_uncompressed_ok). */
int ddl_alter_with(sch_catalog *c, sch_table *t, const ast_props *props, bool view, bool uncompressed_ok, cs_error *e);
bool ddl_uncompressed_ok(cql_ctx *ctx, const cql_session *s);
/* A table's compression options say none ({'enabled': false}, an empty class). */
bool ddl_uncompressed(const sch_table *t);
int ddl_uncompressed_refused(cs_error *e);
int ddl_alter_table(cql_ctx *ctx, cql_session *s, cql_stmt *st, cql_result *r, cs_error *e);
int ddl_create_type(cql_ctx *ctx, cql_session *s, cql_stmt *st, cql_result *r, cs_error *e);
int ddl_alter_type(cql_ctx *ctx, cql_session *s, cql_stmt *st, cql_result *r, cs_error *e);
int ddl_drop_type(cql_ctx *ctx, cql_session *s, cql_stmt *st, cql_result *r, cs_error *e);
int ddl_create_index(cql_ctx *ctx, cql_session *s, cql_stmt *st, cql_result *r, cs_error *e);
int ddl_drop_index(cql_ctx *ctx, cql_session *s, cql_stmt *st, cql_result *r, cs_error *e);
int ddl_create_view(cql_ctx *ctx, cql_session *s, cql_stmt *st, cql_result *r, cs_error *e);
int ddl_alter_view(cql_ctx *ctx, cql_session *s, cql_stmt *st, cql_result *r, cs_error *e);
int ddl_drop_view(cql_ctx *ctx, cql_session *s, cql_stmt *st, cql_result *r, cs_error *e);

#endif
