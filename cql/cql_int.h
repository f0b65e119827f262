/*
 * cql_int.h: shared inside cql/ only (not for server/).  The context struct,
 * the Rows result builder, and helpers that the catalog (schema, DDL,
 * DESCRIBE, virtual tables) and the executor (SELECT/INSERT/UPDATE/DELETE/
 * BATCH, prepared statements) both use.
 *
 * Ownership of files (so parallel work does not collide):
 *   catalog: schema.c system_schema.c vtables.c exec_ddl.c describe.c ctx.c
 *   executor: exec.c exec_select.c exec_modify.c exec_batch.c bind.c
 *             restrict.c paging.c functions.c result.c prepared.c lwt.c
 *   parser:  lexer.c parser*.c        types: types/ (all .c files)
 */
#ifndef CS_CQL_INT_H
#define CS_CQL_INT_H

#include "cql/exec.h"
#include "cql/schema.h"
#include "cql/ast.h"
#include "common/util.h"

typedef struct cql_prepared_cache cql_prepared_cache;   /* executor-owned */
typedef struct cql_stmt_cache cql_stmt_cache;           /* executor-owned */

/* One memo of a statement's table resolution (exec.c cql__table_cached). */
typedef struct cql_tcache_ent {
    const ast_qname *qn;              /* the statement's table name it was made for */
    sch_table *t;
    uint8_t ver[16];                  /* catalog version when made: any DDL invalidates */
} cql_tcache_ent;
#define CQL_TCACHE_SIZE 64

/* The request executing now, for system_views.queries: set by cql_query,
 * cql_execute and cql_batch for the call's duration (one at a time: the
 * execution lock); every pointer borrowed from the request for that long. */
typedef enum { CQL_RUN_NONE, CQL_RUN_QUERY, CQL_RUN_EXECUTE, CQL_RUN_BATCH } cql_run_kind;
typedef struct cql_running {
    cql_run_kind kind;
    const cql_session *session;
    const char *query; size_t query_len;          /* QUERY */
    const uint8_t *id; size_t id_len;             /* EXECUTE */
    const cql_batch_item *items; int n_items;     /* BATCH */
    const cql_params *params;                     /* may be NULL */
    uint64_t created_ns, started_ns;              /* arrival (params->start_ns) and execution start */
} cql_running;

/* A protocol consistency code's name (ConsistencyLevel): "ONE", ... */
const char *cql__consistency_name(int cl);
/* Request tracing (trace.c): whether this thread runs a traced request, and
 * one event of it (a no-op when none), named as Cassandra traces it, on the
 * thread pool it would run on. */
bool cql__tracing(void);
void cql__trace(const char *thread, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define CQL_TRACE_NTR "Native-Transport-Requests-1"
#define CQL_TRACE_READ "ReadStage-1"
#define CQL_TRACE_MUTATION "MutationStage-1"
#define CQL_TRACE_COUNTER_MUTATION "CounterMutationStage-1"

struct cql_ctx {
    st_engine *eng;
    cql_config cfg;
    sch_catalog *cat;                 /* catalog-owned */
    cql_prepared_cache *prepared;     /* executor-owned; created lazily by exec.c */
    cql_stmt_cache *stmts;            /* executor-owned */
    cs_uuid host_id;                  /* persisted in system.local (catalog) */
    int64_t *tokens; int n_tokens;    /* this node's tokens, sorted (catalog) */
    int64_t started_ms;
    uint64_t requests;                /* counters for system_views / metrics */
    void *metrics;                    /* per-table metrics (metrics.c), lazily created */
    void *traces;                     /* recent trace sessions (trace.c), lazily created */
    void *trace_run;                  /* the running traced request's events (trace.c), lazily created */
    _Atomic double trace_probability; /* nodetool settraceprobability (trace.c); read by every loop */
    void *index_builds;               /* index/view builds in progress (index_build.c), lazily created */
    cql_tcache_ent tcache[CQL_TCACHE_SIZE];   /* executor-owned (exec.c) */
    void *select_meta;                /* SELECT result metadata memo (exec_select.c), lazily created */
    st_mutation *spare_mut;           /* an emptied mutation for the next write (exec_batch.c) */
    void *sel_memo;                   /* SELECT column list memo (select_sel.c), lazily created */
    struct cql_roles *roles;          /* role store (roles.c; catalog) */
    cql_running running;              /* the request executing (exec.c) */
    char native_addr[64];             /* cql_native_set (admin.c): where clients connect */
    int native_port;
    bool (*native_running)(void *arg);   /* NULL: running */
    void *native_arg;
};

/* Free ctx->sel_memo (select_sel.c; called by cql_exec_ctx_destroy). */
void cql__sel_memo_free(cql_ctx *ctx);

/* Free ctx->select_meta (exec_select.c; called by cql_exec_ctx_destroy). */
void cql__select_meta_free(cql_ctx *ctx);

/* [ks.]name resolved as sch_resolve_table does (same errors), memoized per
 * statement until the catalog version changes (executor, exec.c). */
sch_table *cql__table_cached(cql_ctx *ctx, const ast_qname *qn, const char *session_ks,
                             cs_error *e);

/* ------------------------------------------------ Rows result builder (executor: result.c)
 * Builds a RESULT Rows body (spec v4 §4.2.5.2) in r->body:
 *   cql_rows_begin(r, version, ks, table, n_cols, flags)
 *   cql_rows_col(r, name, type)   x n_cols   (metadata; all columns share ks/table)
 *   cql_rows_value(r, p, len)     x n_cols per row  (len -1 = null)
 *   cql_rows_end(r, paging_state, ps_len)   (ps_len < 0: no more pages)
 * no_metadata: write NO_METADATA flag instead of column specs (EXECUTE with
 * skip_metadata).  Row count is patched at the end. */
typedef struct cql_rows {
    cql_result *r;
    size_t flags_off, count_off, ps_insert_off;
    int n_cols, cols_added;
    int32_t n_rows;
    bool no_metadata;
    int version;
} cql_rows;

void cql_rows_begin(cql_rows *w, cql_result *r, int version, const char *ks, const char *table,
                    int n_cols, bool no_metadata);
void cql_rows_col(cql_rows *w, const char *name, const ctype *type);
void cql_rows_value(cql_rows *w, const uint8_t *p, int32_t len);
void cql_rows_end(cql_rows *w, const uint8_t *paging_state, int32_t ps_len);

/* Other RESULT kinds (result.c). */
void cql_result_void(cql_result *r);
void cql_result_set_keyspace(cql_result *r, const char *ks);
void cql_result_schema_change(cql_result *r, const char *change, const char *target,
                              const char *ks, const char *name, const char *arg_types);

/* ------------------------------------------------ catalog entry points (catalog-owned)
 * Each DDL/DESCRIBE statement: 0 and r filled (Schema_change / Rows), or
 * CS_EUSER with e.  USE is handled here too (checks the keyspace exists). */
int cql_exec_ddl(cql_ctx *ctx, cql_session *s, cql_stmt *st, cql_result *r, cs_error *e);
int cql_exec_describe(cql_ctx *ctx, cql_session *s, cql_stmt *st, const cql_params *p,
                      cql_result *r, cs_error *e);
int cql_exec_use(cql_ctx *ctx, cql_session *s, cql_stmt *st, cql_result *r, cs_error *e);
/* Role and permission statements (exec_auth.c, catalog-owned). */
int cql__exec_auth(cql_ctx *ctx, cql_session *s, const cql_stmt *st, cql_result *r, cs_error *e);

/* authz.c: resources (IResource) and the authorize step. */
void cql__res_name(const ast_resource *r, char *out, size_t cap);      /* getName: "data/ks/t" */
void cql__res_text(const ast_resource *r, char *out, size_t cap);      /* toString: "<table ks.t>" */
bool cql__res_from_name(const char *name, ast_resource *r, char *buf, size_t cap);
int cql__res_chain(const ast_resource *r, ast_resource out[4]);        /* r, then its parents */
bool cql__authz_enabled(const cql_ctx *ctx);                           /* authorizer: CassandraAuthorizer */
const char *cql__authz_user(const cql_ctx *ctx, const cql_session *s); /* NULL: anonymous */
bool cql__authz_is_super(cql_ctx *ctx, const cql_session *s);          /* ClientState.isSuper */

/* Guardrails (guardrails.c, Cassandra 4.1's db/guardrails; cql_config.guard):
 * only for ordinary users (PasswordAuthenticator, not a superuser; s NULL:
 * an internal call, never).  Failures are InvalidRequest, warnings go to r,
 * both "Guardrail <name> violated: ...".  Call sites, as Cassandra's:
 * allow_filtering (SelectStatement.validate), group_by (its selection),
 * read_consistency_levels, page_size and partition_keys_in_select (its
 * execute), user_timestamps (ModificationStatement.validate),
 * write_consistency_levels (the write's and batch's execute),
 * read_before_write_list_operations (list element writes), keyspaces,
 * tables, columns_per_table, compact_tables (CREATE), columns_per_table on
 * ALTER TABLE ADD, secondary_indexes and secondary_indexes_per_table (CREATE
 * INDEX), materialized_views_per_table, fields_per_udt (CREATE / ALTER TYPE
 * ADD), drop_truncate_table_enabled (DROP TABLE, TRUNCATE), items_per_collection
 * (a collection's elements written by a setter or an appender),
 * minimum_replication_factor (CREATE / ALTER KEYSPACE, each datacenter),
 * uncompressed_tables_enabled (CREATE / ALTER TABLE). */
enum { CQL_GUARD_KEYSPACES, CQL_GUARD_TABLES, CQL_GUARD_COLUMNS_PER_TABLE, CQL_GUARD_SECONDARY_INDEXES_PER_TABLE,
       CQL_GUARD_MATERIALIZED_VIEWS_PER_TABLE, CQL_GUARD_PAGE_SIZE, CQL_GUARD_PARTITION_KEYS_IN_SELECT,
       CQL_GUARD_FIELDS_PER_UDT, CQL_GUARD_ITEMS_PER_COLLECTION, CQL_GUARD_COLLECTION_SIZE,
       CQL_GUARD_IN_SELECT_CARTESIAN_PRODUCT,
       CQL_GUARD_MINIMUM_REPLICATION_FACTOR /* a MinThreshold: below its thresholds */ };
bool cql__guard_applies(cql_ctx *ctx, const cql_session *s);
int cql__guard_flag(cql_ctx *ctx, const cql_session *s, bool enabled, const char *name, const char *what, cs_error *e);
void cql__guard_threshold(const cql_ctx *ctx, int g, long long th[2]);   /* {warn, fail} */
bool cql__guard_max_on(cql_ctx *ctx, const cql_session *s, int g);   /* Threshold.enabled */
int cql__guard_max(cql_ctx *ctx, const cql_session *s, cql_result *r, int g, long long value, const char *what,
                   cs_error *e);
int cql__guard_cl(cql_ctx *ctx, const cql_session *s, cql_result *r, bool write, uint32_t levels, cs_error *e);
/* in_select_cartesian_product: with an IN among them, the product of the
 * restrictions' values (raw[0..n), as written) after each one, what
 * "partition key" or "clustering key" (MultiCBuilder.buildSize). */
int cql__guard_in_product(cql_ctx *ctx, const cql_session *s, cql_result *r, const int *raw, int n, const char *what,
                          cs_error *e);
/* table_properties (Create/Alter Table and View validate): the WITH clause's
 * names against the disallowed (fail), ignored and warned (warn) ones.
 * cql__guard_props_kept: *out is in, or a cs_malloc'd copy of its items
 * without the ignored ones (out->items != in->items: the caller frees). */
int cql__guard_table_props(cql_ctx *ctx, const cql_session *s, cql_result *r, const ast_props *in, cs_error *e);
int cql__guard_props_kept(cql_ctx *ctx, const cql_session *s, const ast_props *in, ast_props *out, cs_error *e);
/* IAuthorizer.authorize: the permissions s's user holds on exactly r. */
unsigned cql__authz_perms_on(cql_ctx *ctx, const cql_session *s, const ast_resource *r);
/* ClientState.ensurePermission(perm, r): Unauthorized unless the user
 * holds perm on r or a parent (always 0 under AllowAllAuthorizer). */
int cql__authz_ensure(cql_ctx *ctx, const cql_session *s, unsigned perm, const ast_resource *r, cs_error *e);
/* The statement's authorize step (not STMT_AUTH, which exec_auth.c runs). */
int cql__authorize(cql_ctx *ctx, const cql_session *s, const cql_stmt *st, cs_error *e);
/* After a schema change: the creator's grants, a dropped resource's revokes. */
void cql__authz_schema_changed(cql_ctx *ctx, const cql_session *s, const cql_schema_change *c);

/* Free the executor's statement and prepared caches (prepared.c, exec-read).
 * cql_ctx_free (ctx.c) calls it before freeing the catalog. */
void cql_exec_caches_free(cql_ctx *ctx);

/* Catalog lifecycle, called by cql_ctx_new/cql_ctx_free (ctx.c, catalog-owned). */
int sch_catalog_open(cql_ctx *ctx, sch_catalog **out);   /* system keyspaces, replay, load */
void sch_catalog_free(sch_catalog *c);
/* Optional (executor, exec.c): release the executor-owned caches in ctx
 * (prepared, stmts).  cql_ctx_free calls it first if it is linked in
 * (declared weak in ctx.c). */
void cql_exec_ctx_destroy(cql_ctx *ctx);

/* Clustering / partition key encoding (catalog-owned, schema.c), used by both.
 * Serialized partition key from the pk column values (in pk order). */
int sch_partition_key(const sch_table *t, const cql_value *vals, cs_buf *out);
/* Split a serialized partition key back into pk values (borrowed pointers into pk). */
int sch_partition_key_split(const sch_table *t, const uint8_t *pk, size_t n, cql_value *out);
/* Byte-comparable clustering prefix from the first n ck values. */
int sch_clustering_key(const sch_table *t, const cql_value *vals, int n, cs_buf *out);
/* Decode a clustering key into serialized values (appended into `store`,
 * offsets/lengths in out_off/out_len, n_ck entries). */
int sch_clustering_decode(const sch_table *t, const uint8_t *ck, size_t n, cs_buf *store,
                          size_t *out_off, int32_t *out_len);

#endif
