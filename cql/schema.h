/*
 * schema.h: the schema catalog (keyspaces, tables, columns, types, indexes,
 * views) in memory, persisted in the engine's own system_schema.* tables.
 * Owner: cql/schema.c, cql/system_schema.c, cql/exec_ddl.c.  Readers: every
 * executor.  Thread: the CQL layer runs on the server's single request loop
 * thread, so the catalog needs no locks; background threads never touch it.
 *
 * Objects are owned by the catalog.  A pointer obtained from a lookup is valid
 * until the next DDL statement executes (DDL never runs while a request is
 * half-executed, since execution is single-threaded); prepared statements
 * re-resolve tables by id via sch_table_by_id() and fail with Unprepared-like
 * behaviour if the table is gone.
 */
#ifndef CS_CQL_SCHEMA_H
#define CS_CQL_SCHEMA_H

#include <stdint.h>
#include <stdbool.h>
#include "cql/types.h"
#include "common/err.h"
#include "storage/storage.h"

typedef enum { COL_PARTITION_KEY, COL_CLUSTERING, COL_REGULAR, COL_STATIC } sch_col_kind;

typedef struct sch_column {
    char *name;
    ctype *type;               /* owned ref */
    sch_col_kind kind;
    int position;              /* index within pk or ck; -1 for regular/static */
    bool desc;                 /* clustering order DESC */
    uint32_t id;               /* storage column id = cs_xxh64(name) low 32 bits (collision-checked at DDL) */
    bool hidden;               /* COMPACT STORAGE's internal columns (set by sch__table_finish): in
                                  system_schema, never in CQL (sch_column_find, SELECT *, DESCRIBE) */
} sch_column;

/* COMPACT STORAGE (Cassandra 4.1 CreateTableStatement.fixupCompactTable):
 * dense (clustering columns; flags {dense[, compound]}) with at most one
 * non-key column, the compact value (a hidden `value` of type empty when
 * none was declared); static (no declared clustering: flags {}): the
 * declared columns are static, with a hidden text clustering `column1` and
 * a hidden blob (counter) `value`.  Rows carry no row marker: a row lives
 * while a cell of it does. */
typedef enum { SCH_COMPACT_NONE, SCH_COMPACT_DENSE, SCH_COMPACT_STATIC } sch_compact;

typedef struct sch_table sch_table;
typedef struct sch_keyspace sch_keyspace;
typedef struct cql_ctx cql_ctx;

/* A virtual table produces its rows on demand (system.local, system.peers,
 * system_views.*, system_virtual_schema.*).  emit() takes one value per column
 * in the table's column order (len -1 = null); the executor then applies
 * WHERE/ORDER/LIMIT generically. */
typedef int (*sch_vtable_rows_cb)(cql_ctx *ctx, sch_table *t,
                                  int (*emit)(void *arg, const uint8_t **vals, const int32_t *lens),
                                  void *arg);

typedef struct sch_index {
    char *name;
    char *kind;                /* "COMPOSITES", "KEYS", "CUSTOM" */
    char *target;              /* options['target'], e.g. "v", "values(m)", "keys(m)" */
    char *class_name;          /* custom/SAI class, NULL for native */
    char **opt_keys, **opt_values; int n_opts;   /* full options map */
    sch_table *table;          /* base table */
    void *impl;                /* owned by the index implementation (issue 5) */
} sch_index;

typedef struct sch_dropped_col { char *name; ctype *type; int64_t dropped_us; } sch_dropped_col;

struct sch_table {
    sch_keyspace *ks;
    char *name;
    uint8_t id[16];            /* table id (uuid) */
    sch_column *cols; int n_cols;            /* partition key, clustering, then others sorted by name */
    sch_column **pk; int n_pk;               /* in key order */
    sch_column **ck; int n_ck;
    /* Options as Cassandra reports them in system_schema.tables. */
    char *comment;
    int default_ttl_s;
    int gc_grace_s;
    double bloom_fp_chance;
    double crc_check_chance;
    int min_index_interval, max_index_interval;
    int memtable_flush_period_ms;
    char *speculative_retry, *additional_write_policy, *read_repair;
    bool cdc;
    char **caching_k, **caching_v; int n_caching;
    char **compaction_k, **compaction_v; int n_compaction;   /* includes 'class' */
    char **compression_k, **compression_v; int n_compression;
    bool is_counter;           /* has counter columns */
    sch_compact compact;       /* COMPACT STORAGE (system_schema.tables flags) */
    sch_column *compact_value; /* compact tables: the single regular column (sch__table_finish) */
    bool is_view;              /* a materialized view */
    sch_table *view_base;      /* views: the base table */
    char *view_where;          /* views: where_clause text */
    bool view_include_all;
    sch_table **views; int n_views;          /* base tables: their views */
    sch_index **indexes; int n_indexes;
    sch_dropped_col *dropped; int n_dropped;
    bool is_virtual;           /* no storage; rows from vtable_rows */
    bool is_system;            /* system keyspaces: refuse DDL/writes */
    sch_vtable_rows_cb vtable_rows;
    st_table *st;              /* storage handle (NULL for virtual tables) */
};

typedef struct sch_keyspace {
    char *name;
    bool durable_writes;
    char **repl_k, **repl_v; int n_repl;     /* replication map, includes 'class' (full class name) */
    bool is_virtual, is_system;
    sch_table **tables; int n_tables;        /* tables and views */
    ctype **types; int n_types;              /* UDTs (CT_UDT, non-frozen form) in creation order */
} sch_keyspace;

typedef struct sch_catalog sch_catalog;

sch_keyspace *sch_keyspace_find(sch_catalog *c, const char *name);
sch_table *sch_table_find(sch_catalog *c, const char *ks, const char *name);
/* A serialized partition key as Cassandra's partitionKeyType.getString
 * prints it (nodetool, error messages): each component as its CQL text
 * without quotes, composite components joined by ':'. */
void sch_partition_key_text(const sch_table *t, const uint8_t *pk, size_t n, cs_buf *out);
sch_table *sch_table_by_id(sch_catalog *c, const uint8_t id[16]);
sch_column *sch_column_find(const sch_table *t, const char *name);
/* TableMetadata.getExistingColumn's refusal of a name sch_column_find does
 * not know: "Undefined column name x in table ks.t" (names quoted as CQL
 * needs them).  Returns CS_EUSER. */
int sch_undefined_column(const sch_table *t, const char *name, cs_error *e);
const ctype *sch_type_find(sch_catalog *c, const char *ks, const char *name);
/* Iterate keyspaces in name order (system ones included). */
int sch_keyspace_count(sch_catalog *c);
sch_keyspace *sch_keyspace_at(sch_catalog *c, int i);
/* Drop time (µs) of a dropped column with this storage id, or INT64_MIN.
 * Readers skip cells with ts_us <= it: a re-added column must not show
 * data written before the drop (Cassandra's DroppedColumn semantics). */
int64_t sch_dropped_us(const sch_table *t, uint32_t col_id);
/* Current schema version (changes with every DDL); see system.local. */
void sch_version(sch_catalog *c, uint8_t out[16]);

/* Resolve [ks.]name against a session keyspace; sets InvalidRequest
 * "No keyspace has been specified. USING a keyspace is required..." or
 * "table X does not exist" style errors (Cassandra wording). */
sch_table *sch_resolve_table(sch_catalog *c, const char *ks, const char *name,
                             const char *session_ks, cs_error *e);

#endif
