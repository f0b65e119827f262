/*
 * schema_int.h: private to the catalog files (schema.c, schema_store.c,
 * system_schema.c, vtables.c, exec_ddl.c, describe.c, ctx.c).  Owner: catalog.
 *
 * The catalog is a sorted array of keyspaces, each holding its tables and
 * UDTs.  Every object is cs_malloc'd individually and freed by
 * sch_catalog_free.  Persistence: each DDL writes the rows describing the
 * changed objects into the engine's system_schema.* tables as ONE mutation
 * (schema_store.c); startup scans them back (sch__load_user_schema).
 * Single-threaded: runs on the request loop thread only.
 */
#ifndef CS_CQL_SCHEMA_INT_H
#define CS_CQL_SCHEMA_INT_H

#include "cql/cql_int.h"
#include "common/buf.h"

/* system_schema tables, in the order of their definitions. */
enum {
    SS_KEYSPACES, SS_TABLES, SS_COLUMNS, SS_DROPPED_COLUMNS, SS_TRIGGERS, SS_VIEWS,
    SS_TYPES, SS_FUNCTIONS, SS_AGGREGATES, SS_INDEXES, SS_COUNT
};

/* Bump when the compiled-in definitions of the system keyspaces change: the
 * rows describing them in system_schema are rewritten at startup. */
#define SCH_SYSTEM_SCHEMA_GEN 3

struct sch_catalog {
    cql_ctx *ctx;
    st_engine *eng;
    sch_keyspace **ks; int n_ks, cap_ks;   /* sorted by name */
    uint8_t version[16];                   /* schema version uuid */
    sch_table *ss[SS_COUNT];               /* system_schema.* */
    st_table *local_state;                 /* hidden table: host id, tokens, system schema gen */
    int replay_phase;                      /* 0: system tables, 1: user tables */
    cql_session **sessions; int n_sessions, cap_sessions;   /* system_views.clients */
    st_clog_pos last_pos;                  /* commit log position of the last schema write */
};

/* ---------------------------------------------------------------- schema.c */
sch_keyspace *sch__keyspace_new(const char *name);
void sch__keyspace_free(sch_keyspace *k);
int sch__keyspace_add(sch_catalog *c, sch_keyspace *k);        /* takes ownership */
void sch__keyspace_remove(sch_catalog *c, sch_keyspace *k);    /* detaches, does not free */
sch_table *sch__table_new(sch_keyspace *ks, const char *name);
void sch__table_free(sch_table *t);
void sch__table_defaults(sch_table *t);
/* Add a column (takes the type ref).  position: pk/ck index, else -1. */
int sch__table_add_col(sch_table *t, const char *name, ctype *type, sch_col_kind kind,
                       int position, bool desc);
/* Sort columns (pk, ck, static by name, regular by name), build pk/ck arrays,
 * compute ids, refuse id collisions.  0 or CS_EUSER with e. */
int sch__table_finish(sch_table *t, cs_error *e);
int sch__ks_add_table(sch_keyspace *k, sch_table *t);           /* takes ownership */
void sch__ks_remove_table(sch_keyspace *k, sch_table *t);       /* detaches */
int sch__ks_add_type(sch_keyspace *k, ctype *udt);              /* takes the ref */
void sch__ks_remove_type(sch_keyspace *k, int i);
int sch__ks_type_index(const sch_keyspace *k, const char *name);
void sch__new_version(sch_catalog *c);
uint32_t sch__col_id(const char *name);
void sch__kv_set(char ***k, char ***v, int *n, const char *key, const char *val);
void sch__kv_free(char **k, char **v, int n);
const char *sch__kv_get(char **k, char **v, int n, const char *key);
/* Table id for system tables: Cassandra's TableId.forSystemTable (name uuid v3). */
void sch__system_table_id(const char *ks, const char *table, uint8_t out[16]);
bool sch__is_system_ks_name(const char *name);
const ctype *sch__udt_lookup_cb(void *arg, const char *ks, const char *name);
void sch__table_st_opts(const sch_table *t, st_table_opts *o);

/* ---------------------------------------------------------------- system_schema.c */
/* Define system, system_schema, system_auth, system_distributed,
 * system_traces, system_views, system_virtual_schema. */
int sch__define_system(sch_catalog *c);
/* Write the rows describing the system keyspaces if missing or outdated. */
int sch__write_system_rows(sch_catalog *c);

/* ---------------------------------------------------------------- schema_store.c */
/* Row writers: add to m the rows describing an object (deleting the old
 * ones first at ts_del), written at ts. */
void sch__rows_keyspace(sch_catalog *c, st_mutation *m, const sch_keyspace *k, int64_t ts);
void sch__rows_keyspace_drop(sch_catalog *c, st_mutation *m, const char *ks, int64_t ts);
void sch__rows_table(sch_catalog *c, st_mutation *m, const sch_table *t, int64_t ts_del, int64_t ts);
void sch__rows_table_drop(sch_catalog *c, st_mutation *m, const sch_table *t, int64_t ts);
void sch__rows_type(sch_catalog *c, st_mutation *m, const sch_keyspace *k, const ctype *u, int64_t ts);
void sch__rows_type_drop(sch_catalog *c, st_mutation *m, const char *ks, const char *name, int64_t ts);
/* Load all non-system keyspaces from system_schema (after replay). */
int sch__load_user_schema(sch_catalog *c);
/* Hidden local state (host id, tokens, generation). */
int sch__local_state_load(sch_catalog *c, cs_uuid *host, int64_t **tokens, int *n, int *gen);
int sch__local_state_save(sch_catalog *c, const cs_uuid *host, const int64_t *tokens, int n, int gen);
/* Commit a schema mutation; logs and returns CS_E* on failure. */
int sch__commit(sch_catalog *c, st_mutation *m, cs_error *e);

/* Serialized value helpers (native-protocol form). */
void sch__put_text_map(cs_buf *b, char **k, char **v, int n);   /* sorted by key */
void sch__put_text_list(cs_buf *b, char **items, int n);
/* Parse a serialized map<text,text>/list<text> into malloc'd strings. */
int sch__get_text_map(const uint8_t *p, int32_t n, char ***k, char ***v, int *cnt);
int sch__get_text_list(const uint8_t *p, int32_t n, char ***items, int *cnt);

/* ---------------------------------------------------------------- vtables.c */
void sch__vtables_attach(sch_catalog *c);     /* sets vtable_rows on virtual tables */

/* ---------------------------------------------------------------- describe.c */
/* CREATE statements (appended to out). */
void sch__cql_keyspace(const sch_keyspace *k, cs_buf *out);
void sch__cql_table(const sch_table *t, bool internals, cs_buf *out);
void sch__cql_type(const ctype *u, cs_buf *out);
void sch__cql_index(const sch_index *ix, cs_buf *out);
void sch__cql_view(const sch_table *v, bool internals, cs_buf *out);

/* Small formatting helpers. */
void sch__puts(cs_buf *b, const char *s);
void sch__printf(cs_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sch__put_double(cs_buf *b, double d);            /* Java Double.toString style */
char *sch__bufstr(cs_buf *b);                          /* NUL-terminate, return p */
/* Numbers as Java parses them (option values): Long.parseLong (a sign
 * and digits only, in range) and Double.parseDouble (whitespace around,
 * NaN, Infinity, an exponent, an f/F/d/D suffix; no hexadecimal).  True
 * and *out set, or false. */
bool sch__java_long(const char *v, int64_t *out);
bool sch__java_double(const char *v, double *out);

#endif
