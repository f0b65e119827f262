/*
 * index.h: secondary indexes and materialized views (issue 5; owner: index).
 * Files: index_maint.c (entries and view rows derived from each write
 * group, added to the SAME st_mutation), index_store.c (hidden index
 * tables, ids, open/drop/truncate, initial builds of indexes and views),
 * index_query.c (SELECT through an index).  Design: docs/indexes.md.
 *
 * Thread: the CQL request loop thread only (like the whole executor).
 *
 * Hooks called from other owners' files (each one line, commented there):
 *   exec_batch.c   cql__wbatch_commit -> cql_index_maintain before st_write
 *   exec_select.c  run_select         -> cql_index_select for indexed queries
 *   exec_ddl_iv.c  CREATE/DROP INDEX, CREATE MATERIALIZED VIEW -> create/drop/build
 *   exec_ddl.c     DROP TABLE / KEYSPACE, TRUNCATE -> drop / truncate index storage
 *   schema_load.c  finish_tables      -> cql_index_open_table (before replay)
 *   ctx.c          want_user_table    -> cql_index_owns_id (replay filter)
 *   admin.c        flush / compact    -> cql_index_for_each
 *   restrict.c     cql__where_analyze -> cql_index_grants_key_filtering
 */
#ifndef CS_CQL_INDEX_H
#define CS_CQL_INDEX_H

#include "cql/cql_int.h"

/* What an index target names: kind and column (NULL if the column is gone). */
enum { IDX_SIMPLE = 0, IDX_VALUES, IDX_KEYS, IDX_ENTRIES, IDX_FULL };
typedef struct cql_index_target {
    int kind;                          /* IDX_* */
    const sch_column *col;
} cql_index_target;
int cql_index_target_parse(const sch_index *ix, cql_index_target *out);

/* ---- index_store.c */

/* The hidden storage table of an index (directory <table>.<index>); its id
 * is derived from the base table id and the index name. */
void cql_index_table_id(const sch_index *ix, uint8_t out[16]);
/* Open the storage of every index of t (startup: before commit log replay). */
int cql_index_open_table(st_engine *eng, sch_table *t);
/* The index's storage (opened on demand), or NULL. */
st_table *cql_index_storage(st_engine *eng, sch_index *ix);
/* Is id the storage of some index of the catalog?  (replay filter) */
bool cql_index_owns_id(sch_catalog *c, const uint8_t id[16]);
/* CREATE INDEX: open the storage and register its background build
 * (persisted before the schema row is written; index_build.c). */
int cql_index_create(cql_ctx *ctx, sch_index *ix, cs_error *e);
/* DROP INDEX (before the sch_index is freed) and DROP TABLE / KEYSPACE. */
void cql_index_drop(cql_ctx *ctx, sch_index *ix);
void cql_index_drop_table(cql_ctx *ctx, sch_table *t);
/* Apply op (st_table_flush, st_table_compact) to every index table of t
 * (nodetool flush/compact of a table covers its indexes, as in Cassandra). */
int cql_index_for_each(cql_ctx *ctx, sch_table *t, int (*op)(st_table *));
/* TRUNCATE of the base table. */
int cql_index_truncate_table(cql_ctx *ctx, sch_table *t);
/* CREATE MATERIALIZED VIEW: register the background build of the view. */
int cql_view_build(cql_ctx *ctx, sch_table *v, cs_error *e);

/* ---- index_build.c (background builds; see the file comment) */

/* Is the index / view still being built?  (index queries are refused) */
bool cql_index_is_building(cql_ctx *ctx, const sch_index *ix);
/* Has ix's build stopped on an error (it stays unavailable, logged)? */
bool cql_index_build_failed(cql_ctx *ctx, const sch_index *ix);
bool cql_view_is_building(cql_ctx *ctx, const sch_table *v);
/* After a successful CREATE INDEX / VIEW: a first slice inline (small
 * tables are built when the statement returns). */
void cql_index_build_inline(cql_ctx *ctx);
void cql_index_builds_free(cql_ctx *ctx);   /* cql_ctx_free hook */
/* internal (index_store.c) */
int cql__index_build_begin(cql_ctx *ctx, sch_index *ix, cs_error *e);
int cql__view_build_begin(cql_ctx *ctx, sch_table *v, cs_error *e);
void cql__index_build_cancel(cql_ctx *ctx, const uint8_t id[16]);
bool cql__index_build_owns_id(const uint8_t id[16]);
int cql__index_build_open(st_engine *eng);

/* ---- index_maint.c */

/* Add to m the index entries and view rows that the base table writes
 * already in m imply (read-before-write of the affected rows).  0 or
 * CS_EUSER with e set. */
int cql_index_maintain(cql_ctx *ctx, st_mutation *m, int32_t now_s, cs_error *e);

/* Index entry layout (index_maint.c):
 *   partition key = u8 bucket (top 4 bits of the base token) + index value
 *   clustering    = token (8 bytes, sign-flipped big endian) + escaped base
 *                   partition key (0x00 -> 0x00 0xff, end 0x00 0x00) + base
 *                   clustering (empty for partition-level entries) */
#define CQL_INDEX_BUCKETS 16
int cql_index_bucket(int64_t token);
/* Index value of a serialized value of type ty (byte-comparable form). */
int cql_index_value(const ctype *ty, const uint8_t *v, int32_t n, cs_buf *out);
void cql_index_entry_ck(int64_t token, const uint8_t *pk, uint32_t pk_len,
                        const uint8_t *ck, uint32_t ck_len, cs_buf *out);

/* ---- view_where.c */

/* Does a base row satisfy view v's WHERE clause beyond IS NOT NULL?  vals
 * indexed like the base table's columns (len -1 = null); pk/ck the row's
 * keys.  *match true also when the clause cannot be evaluated. */
int cql_view_where_match(cql_ctx *ctx, const sch_table *v, const cql_value *vals, const uint8_t *pk,
                         uint32_t pk_len, const uint8_t *ck, uint32_t ck_len, bool *match);

/* ---- index_query.c */
struct cql_sx;
struct cql_pstate;
/* SELECT with a restriction an index serves and no full partition key:
 * reads the candidate partitions from the index and runs them through the
 * normal single-partition path (filters re-check every row, so stale
 * entries never show).  *handled false: not applicable, scan as before. */
int cql_index_select(struct cql_sx *x, const struct cql_pstate *ps, bool *handled);
/* A traced range read's index choice, before its ranges (getBestIndexFor's trace line). */
void cql_index_trace_choice(struct cql_sx *x);
/* WHERE analysis hook (restrict.c): true when the relations are one
 * `col = x` on an indexed partition key component or clustering column
 * (plus, for a clustering column, EQ on the whole partition key): Cassandra
 * serves these with the index, without ALLOW FILTERING. */
int cql_index_grants_key_filtering(const sch_table *t, ast_relation **rels, int n);
/* Refusals that depend on an index serving the query (Cassandra's
 * verifyOrderingIsAllowed: "ORDER BY with 2ndary indexes is not
 * supported.").  0 or CS_EUSER. */
int cql_index_check_select(struct cql_sx *x);

#endif
