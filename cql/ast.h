/*
 * ast.h: the abstract syntax tree of one CQL statement.  Produced by
 * cql/parser.c, consumed by the executors (exec_*.c).  Every node lives in the
 * statement's arena (cql_stmt.arena) and dies with it; prepared statements
 * keep their cql_stmt alive in the prepared cache.
 *
 * Identifiers are already case-folded: unquoted names lower-cased, quoted
 * names kept verbatim with "" unescaped.  `ks` fields are NULL when the name
 * was not keyspace-qualified.
 */
#ifndef CS_CQL_AST_H
#define CS_CQL_AST_H

#include <stdint.h>
#include <stdbool.h>
#include "common/arena.h"
#include "cql/types.h"

typedef struct ast_term ast_term;
typedef struct ast_selector ast_selector;

typedef struct ast_qname { char *ks; char *name; } ast_qname;  /* [ks.]name */

typedef struct ast_pos { int line, col; } ast_pos;            /* 1-based, for messages */

/* ---------------------------------------------------------------- terms */

typedef enum {
    TERM_LITERAL,   /* lit.kind/lit.text */
    TERM_NULL,      /* null */
    TERM_BIND,      /* ? or :name; bind.index is its position among all markers */
    TERM_LIST,      /* [a, b] */
    TERM_SET,       /* {a, b}; {} is an empty SET (may be a map by receiver) */
    TERM_MAP,       /* {k: v, ...}: elems[2i] keys, elems[2i+1] values */
    TERM_TUPLE,     /* (a, b) */
    TERM_UDT,       /* {field: value, ...}: field_names[i] -> elems[i] */
    TERM_FUNC,      /* fn(args): func.ks/name, elems = args */
    TERM_CAST,      /* (type) term: cast_type text, elems[0] */
    TERM_NEG,       /* -term (unary minus on a non-literal) */
} ast_term_kind;

struct ast_term {
    ast_term_kind kind;
    ast_pos pos;
    struct { lit_kind kind; char *text; size_t len; } lit;   /* TERM_LITERAL (text unquoted/unescaped) */
    struct { int index; char *name; } bind;                  /* TERM_BIND (name NULL for ?) */
    ast_qname func;                                          /* TERM_FUNC */
    char *cast_type;                                         /* TERM_CAST */
    ast_term **elems; int n_elems;
    char **field_names;                                      /* TERM_UDT */
};

/* ---------------------------------------------------------------- selectors */

typedef enum {
    SEL_COLUMN,     /* col */
    SEL_WRITETIME,  /* writetime(col) */
    SEL_TTL,        /* ttl(col) */
    SEL_FUNC,       /* fn(args...) incl. aggregates, token(), toJson() */
    SEL_COUNT_STAR, /* count(*) / count(1) */
    SEL_CAST,       /* CAST(sel AS type) */
    SEL_TERM,       /* a literal or bind marker used as a selector */
    SEL_FIELD,      /* sel.field (UDT field) */
    SEL_ELEMENT,    /* sel[term] (collection element, C* 4.0+) */
    SEL_SLICE,      /* sel[term..term] */
} ast_selector_kind;

struct ast_selector {
    ast_selector_kind kind;
    ast_pos pos;
    char *column;               /* SEL_COLUMN/WRITETIME/TTL */
    ast_qname func;             /* SEL_FUNC */
    ast_selector **args; int n_args;   /* SEL_FUNC args; SEL_CAST/FIELD/ELEMENT/SLICE: args[0] is the operand */
    char *cast_type;            /* SEL_CAST */
    char *field;                /* SEL_FIELD */
    ast_term *term, *term2;     /* SEL_TERM; SEL_ELEMENT key; SEL_SLICE from/to (NULL = open) */
    char *alias;                /* AS alias, NULL if none */
    char *text;                 /* source text of the selector, for the result column name */
};

/* ---------------------------------------------------------------- WHERE */

typedef enum {
    OP_EQ, OP_LT, OP_LTE, OP_GT, OP_GTE, OP_NEQ, OP_IN,
    OP_CONTAINS, OP_CONTAINS_KEY, OP_IS_NOT_NULL, OP_LIKE,
} ast_op;

typedef enum {
    REL_COLUMN,     /* col op term */
    REL_TOKEN,      /* token(c1, c2) op term */
    REL_MULTI,      /* (c1, c2) op (t1, t2) | IN ((..), (..)) | op ? */
    REL_ELEMENT,    /* col[key] op term (map element filtering) */
} ast_relation_kind;

typedef struct ast_relation {
    ast_relation_kind kind;
    ast_op op;
    ast_pos pos;
    char **columns; int n_columns;   /* 1 for REL_COLUMN/REL_ELEMENT */
    ast_term *key;                   /* REL_ELEMENT map key */
    /* Right-hand side: for OP_IN a list in `in` (or a single bind marker in
     * `value` for `IN ?`); for REL_MULTI a TERM_TUPLE or bind marker;
     * OP_IS_NOT_NULL has no value. */
    ast_term *value;
    ast_term **in; int n_in;
    bool in_marker;                  /* IN ? / IN :name: value is the marker */
} ast_relation;

/* IF conditions of LWTs. */
typedef struct ast_condition {
    char *column;
    ast_term *elem;                  /* col[elem] op value, NULL if none */
    char *field;                     /* col.field op value */
    ast_op op;                       /* EQ NEQ LT LTE GT GTE IN CONTAINS CONTAINS_KEY */
    ast_term *value;
    ast_term **in; int n_in; bool in_marker;
} ast_condition;

/* ---------------------------------------------------------------- DML */

typedef struct ast_using {
    ast_term *ttl;                   /* USING TTL x, NULL if absent */
    ast_term *timestamp;             /* USING TIMESTAMP x */
} ast_using;

typedef struct ast_order { char *column; bool desc; } ast_order;

typedef struct ast_select {
    ast_qname table;
    bool json, distinct;
    bool star;                        /* SELECT * */
    ast_selector **sels; int n_sels;
    ast_relation **where; int n_where;
    char **group_by; int n_group_by;  /* a column's name, NULL for another selector */
    ast_selector **group_sels;        /* n_group_by: each GROUP BY element (unaliasedSelector) */
    ast_order *order; int n_order;
    ast_term *per_partition_limit;    /* NULL if absent */
    ast_term *limit;
    bool allow_filtering;
} ast_select;

typedef struct ast_insert {
    ast_qname table;
    char **columns; int n_columns;
    ast_term **values; int n_values;
    ast_term *json;                   /* INSERT ... JSON 'text' | ?; columns NULL then */
    bool json_default_unset;          /* DEFAULT UNSET (default is NULL) */
    bool if_not_exists;
    ast_using using;
} ast_insert;

typedef enum {
    SET_ASSIGN,       /* col = value */
    SET_ADD,          /* col = col + value (counter, list append, set/map add) */
    SET_PREPEND,      /* col = value + col (list prepend) */
    SET_SUB,          /* col = col - value (counter, list/set/map remove) */
    SET_ELEMENT,      /* col[key] = value */
    SET_FIELD,        /* col.field = value */
    SET_ADD_ASSIGN,   /* col += value (C* 5.0); treated as SET_ADD */
    SET_SUB_ASSIGN,   /* col -= value */
} ast_set_kind;

typedef struct ast_set_op {
    ast_set_kind kind;
    char *column;
    ast_term *key;                    /* SET_ELEMENT */
    char *field;                      /* SET_FIELD */
    ast_term *value;
    ast_pos pos;
} ast_set_op;

typedef struct ast_update {
    ast_qname table;
    ast_using using;
    ast_set_op *sets; int n_sets;
    ast_relation **where; int n_where;
    bool if_exists;
    ast_condition *conds; int n_conds;
} ast_update;

typedef struct ast_delete_target {
    char *column;
    ast_term *key;                    /* col[key] */
    char *field;                      /* col.field */
} ast_delete_target;

typedef struct ast_delete {
    ast_qname table;
    ast_delete_target *targets; int n_targets;   /* 0 = whole row(s) */
    ast_using using;                  /* only timestamp allowed */
    ast_relation **where; int n_where;
    bool if_exists;
    ast_condition *conds; int n_conds;
} ast_delete;

typedef struct cql_stmt cql_stmt;
typedef enum { BATCH_LOGGED, BATCH_UNLOGGED, BATCH_COUNTER } ast_batch_kind;
typedef struct ast_batch {
    ast_batch_kind kind;
    ast_using using;
    cql_stmt **stmts; int n_stmts;    /* INSERT/UPDATE/DELETE only; share the batch's arena */
} ast_batch;

/* ---------------------------------------------------------------- DDL */

/* A WITH property: name = value, where value is a constant, an identifier or
 * a map literal.  CLUSTERING ORDER BY and COMPACT STORAGE are separate. */
typedef enum { PROP_STRING, PROP_NUMBER, PROP_BOOL, PROP_IDENT, PROP_MAP } ast_prop_kind;
typedef struct ast_prop {
    char *name;                        /* lower-cased */
    ast_prop_kind kind;
    char *value;                       /* STRING/NUMBER/BOOL/IDENT text */
    char **map_keys; char **map_values; int n_map;   /* PROP_MAP (values as text) */
    ast_pos pos;
} ast_prop;

typedef struct ast_props { ast_prop *items; int n; } ast_props;

typedef struct ast_coldef {
    char *name;
    char *type;                        /* type text, e.g. "frozen<list<int>>" (normalized spacing) */
    bool is_static;
    bool primary_key;                  /* inline PRIMARY KEY */
} ast_coldef;

typedef struct ast_create_table {
    ast_qname table;
    bool if_not_exists;
    ast_coldef *cols; int n_cols;
    char **pk; int n_pk;               /* partition key columns (empty if inline PK) */
    char **ck; int n_ck;               /* clustering columns */
    ast_order *clustering_order; int n_clustering_order;
    bool compact_storage;
    ast_props props;
} ast_create_table;

typedef enum { ALTER_ADD, ALTER_DROP, ALTER_RENAME, ALTER_WITH, ALTER_TYPE_CHANGE, ALTER_DROP_COMPACT } ast_alter_kind;
typedef struct ast_alter_table {
    ast_qname table;
    bool if_exists;                    /* ALTER TABLE IF EXISTS (C* 5.0) */
    ast_alter_kind kind;
    bool if_col_not_exists, if_col_exists;   /* ADD IF NOT EXISTS / DROP IF EXISTS (5.0) */
    ast_coldef *cols; int n_cols;      /* ADD: defs; DROP: names in cols[i].name */
    char **rename_from, **rename_to; int n_renames;
    ast_props props;                   /* WITH */
    int64_t drop_timestamp;            /* DROP ... USING TIMESTAMP, INT64_MIN if none */
} ast_alter_table;

typedef struct ast_keyspace_def {
    char *name;
    bool if_not_exists, if_exists;
    ast_props props;                   /* replication = {...}, durable_writes = bool */
} ast_keyspace_def;

typedef struct ast_type_def {          /* CREATE/ALTER/DROP TYPE */
    ast_qname name;
    bool if_not_exists, if_exists;
    char **field_names; char **field_types; int n_fields;   /* CREATE, ALTER ADD */
    char **rename_from, **rename_to; int n_renames;          /* ALTER RENAME */
    bool alter_add, alter_rename;
} ast_type_def;

typedef struct ast_create_index {
    char *name;                        /* NULL = default <table>_<col>_idx */
    ast_qname table;
    bool if_not_exists;
    /* target: kind one of "values","keys","entries","full","" (plain) */
    char *target_kind; char *target_column;
    char *using_class;                 /* USING 'sai' or custom class, NULL if none */
    ast_props props;                   /* WITH OPTIONS = {...} */
} ast_create_index;

typedef struct ast_create_view {
    ast_qname view;
    ast_qname base;
    bool if_not_exists;
    ast_select *select;                /* SELECT part: selectors + WHERE */
    char **pk; int n_pk; char **ck; int n_ck;
    ast_order *clustering_order; int n_clustering_order;
    ast_props props;
    char *where_text;                  /* WHERE clause source text for system_schema.views */
} ast_create_view;

typedef struct ast_drop {
    ast_qname name;                    /* keyspace: name.name; index/view/type/table/function */
    bool if_exists;
    const char *fn_args;               /* DROP FUNCTION/AGGREGATE f(int, text): "int, text"; NULL if no list */
} ast_drop;

typedef enum {
    DESC_CLUSTER, DESC_KEYSPACES, DESC_KEYSPACE, DESC_TABLES, DESC_TABLE,
    DESC_SCHEMA, DESC_FULL_SCHEMA, DESC_TYPES, DESC_TYPE, DESC_FUNCTIONS, DESC_FUNCTION,
    DESC_AGGREGATES, DESC_AGGREGATE, DESC_INDEX, DESC_MATERIALIZED_VIEW,
    DESC_GENERIC,                      /* DESCRIBE name: keyspace, or table/view/index/type in current ks */
} ast_describe_kind;
typedef struct ast_describe {
    ast_describe_kind kind;
    ast_qname name;
    bool only;                         /* DESCRIBE ONLY KEYSPACE */
    bool with_internals;               /* WITH INTERNALS */
} ast_describe;

/* ---------------------------------------------------------------- auth */

/* Role and permission statements (Cassandra 4.1's Parser.g: createRoleStatement,
 * createUserStatement, grantRoleStatement, listPermissionsStatement, ...). */
typedef enum {
    AUTH_CREATE_ROLE, AUTH_ALTER_ROLE, AUTH_DROP_ROLE,
    AUTH_GRANT_ROLE, AUTH_REVOKE_ROLE, AUTH_LIST_ROLES, AUTH_LIST_USERS,
    AUTH_GRANT_PERMS, AUTH_REVOKE_PERMS, AUTH_LIST_PERMS,
} ast_auth_kind;

/* Role options given (RoleOptions; each at most once). */
enum { ROLEOPT_SUPERUSER = 1, ROLEOPT_LOGIN = 2, ROLEOPT_PASSWORD = 4, ROLEOPT_HASHED = 8, ROLEOPT_OPTIONS = 16 };

/* Permissions (Permission, in its declaration order). */
enum { PERM_CREATE = 1, PERM_ALTER = 2, PERM_DROP = 4, PERM_SELECT = 8, PERM_MODIFY = 16,
       PERM_AUTHORIZE = 32, PERM_DESCRIBE = 64, PERM_EXECUTE = 128, PERM_ALL = 255 };

typedef enum {
    RES_NONE, RES_ALL_KEYSPACES, RES_KEYSPACE, RES_TABLE, RES_ALL_TABLES,
    RES_ALL_ROLES, RES_ROLE, RES_ALL_FUNCTIONS, RES_FUNCTIONS_IN_KS, RES_FUNCTION,
    RES_ALL_MBEANS, RES_MBEAN,
} ast_resource_kind;

typedef struct ast_resource {
    ast_resource_kind kind;
    char *ks;                          /* KEYSPACE, TABLE (NULL: the session's), ALL_TABLES, FUNCTIONS_IN_KS, FUNCTION */
    char *name;                        /* TABLE, ROLE, FUNCTION, MBEAN */
} ast_resource;

/* IResource.applicablePermissions (PERM_* bits) and the Java class name
 * Cassandra's messages give ("DataResource", "RoleResource",
 * "FunctionResource", "JMXResource"); parser_auth.c. */
unsigned cql_resource_permissions(ast_resource_kind k);
const char *cql_resource_class(ast_resource_kind k);

typedef struct ast_auth {
    ast_auth_kind kind;
    const char *verb;                  /* "CREATE ROLE", "LIST PERMISSIONS", ... */
    bool user_form;                    /* the USER spelling (CREATE USER, LIST USERS, ...) */
    bool if_exists;                    /* IF [NOT] EXISTS */
    char *role;                        /* the role named; NULL for LIST without OF */
    char *grantee;                     /* GRANT/REVOKE ... TO|FROM role */
    unsigned opts;                     /* ROLEOPT_* given */
    bool superuser, login;             /* their values when given */
    char *password;                    /* PASSWORD or HASHED PASSWORD text */
    bool has_dcs;                      /* ACCESS TO [ALL] DATACENTERS given */
    bool recursive;                    /* false after NORECURSIVE */
    unsigned perms;                    /* PERM_* */
    ast_resource res;                  /* RES_NONE if no ON clause */
} ast_auth;

/* ---------------------------------------------------------------- statement */

typedef enum {
    STMT_SELECT, STMT_INSERT, STMT_UPDATE, STMT_DELETE, STMT_BATCH, STMT_USE,
    STMT_CREATE_KEYSPACE, STMT_ALTER_KEYSPACE, STMT_DROP_KEYSPACE,
    STMT_CREATE_TABLE, STMT_ALTER_TABLE, STMT_DROP_TABLE, STMT_TRUNCATE,
    STMT_CREATE_TYPE, STMT_ALTER_TYPE, STMT_DROP_TYPE,
    STMT_CREATE_INDEX, STMT_DROP_INDEX,
    STMT_CREATE_VIEW, STMT_ALTER_VIEW, STMT_DROP_VIEW,
    STMT_CREATE_FUNCTION, STMT_DROP_FUNCTION, STMT_CREATE_AGGREGATE, STMT_DROP_AGGREGATE,
    STMT_DESCRIBE,
    STMT_AUTH,          /* CREATE/ALTER/DROP ROLE|USER, GRANT, REVOKE, LIST ...: u.auth */
} cql_stmt_kind;

struct cql_stmt {
    cql_stmt_kind kind;
    cs_arena arena;                    /* owns every node (a batch's children share the parent's) */
    int n_binds;                       /* number of bind markers */
    char **bind_names;                 /* n_binds entries; NULL entry for `?` */
    const char *text; size_t text_len; /* source text (arena copy) */
    void *exec_memo;                   /* the executor's memo of its analysis (cql_stmt_memo,
                                          exec_int.h): one cs_malloc'd block, freed by cql_stmt_free */
    union {
        ast_select select;
        ast_insert insert;
        ast_update update;
        ast_delete del;
        ast_batch batch;
        char *use_keyspace;
        ast_keyspace_def keyspace;     /* CREATE/ALTER/DROP KEYSPACE */
        ast_create_table create_table;
        ast_alter_table alter_table;
        ast_drop drop;                 /* DROP TABLE/INDEX/VIEW/TYPE/FUNCTION/AGGREGATE, TRUNCATE */
        ast_type_def type_def;
        ast_create_index create_index;
        ast_create_view create_view;
        ast_alter_table alter_view;    /* ALTER MATERIALIZED VIEW v WITH ... (props only) */
        ast_describe describe;
        ast_auth auth;
    } u;
};

/* Parse exactly one statement (a trailing ';' allowed; a second statement is a
 * SyntaxException as in Cassandra).  Returns a statement (free with
 * cql_stmt_free) or NULL with e set: SyntaxException (0x2000) with Cassandra's
 * wording, "line L:C ..." positions. */
cql_stmt *cql_parse(const char *text, size_t len, cs_error *e);
void cql_stmt_free(cql_stmt *s);

/* Lexer, exposed for tests and for DESCRIBE's identifier quoting. */
bool cql_is_reserved_keyword(const char *lowercased);
/* Append an identifier, double-quoted if needed (not [a-z][a-z0-9_]* or reserved). */
void cql_quote_ident(const char *name, cs_buf *out);

#endif
