/*
 * exec_int.h: the statement executor's internal API, shared by the read side
 * (exec-read: exec.c bind.c restrict.c exec_select.c paging.c functions.c
 * result.c prepared.c) and the write side (exec-write: exec_modify.c
 * exec_batch.c lwt.c counter.c).  Not for server/ or the catalog.
 *
 * Thread: everything runs on the server's single request loop thread.
 *
 * Request flow (exec.c):
 *   cql_query / cql_execute / cql_batch
 *     -> parse (statement cache) or look up the prepared statement
 *     -> resolve named values into positional values (by marker index),
 *        check "Invalid amount of bind variables", validate each value
 *     -> dispatch by kind:
 *          SELECT                 cql__exec_select            (exec_select.c)
 *          INSERT/UPDATE/DELETE   cql_exec_modify             (exec-write)
 *          BATCH                  cql_exec_batch              (exec-write)
 *          DDL / DESCRIBE / USE   cql_exec_ddl / _describe / _use (catalog)
 *
 * Values.  A value is a cql_value (exec.h): len >= 0 bytes of the native
 * serialization, CQL_NULL (-1) or CQL_UNSET (-2).  Everything this API
 * produces (evaluated terms, partition keys, clustering bounds, filter
 * operands) lives in the caller-supplied arena (cql_eval.arena) and dies
 * with the request.
 */
#ifndef CS_CQL_EXEC_INT_H
#define CS_CQL_EXEC_INT_H

#include "cql/cql_int.h"
#include "common/arena.h"

/* ================================================================ term evaluation (bind.c) */

/* Evaluation context for one execution of one statement. */
typedef struct cql_eval {
    cql_ctx *ctx;
    cql_session *sess;
    const char *ks;                    /* keyspace of the statement's table (UDT/function lookup) */
    const cql_value *vals; int n_vals; /* bound values by marker index (names already resolved) */
    cs_arena *arena;                   /* evaluated values live here (request lifetime) */
    int64_t now_us;                    /* statement time (currentTimestamp() etc.); 0 = not read yet */
} cql_eval;

/* Initialise an evaluation context (the clock is read on first use). */
void cql__eval_init(cql_eval *ev, cql_ctx *ctx, cql_session *s, const char *ks,
                    const cql_value *vals, int n_vals, cs_arena *arena);
/* The statement time: cs_now_us() at the first call, the same afterwards. */
int64_t cql__eval_now_us(cql_eval *ev);

/*
 * Evaluate `t` as a value of type `recv` (the receiver).  `recv_name` names
 * the receiver in messages, as Cassandra does (a column name, "[limit]",
 * "[ttl]", "[timestamp]", "partition key token", "value(m)", ...).
 * Handles literals (ctype_from_literal), NULL, bind markers (the bound value,
 * validated with ctype_validate; UNSET passes through as CQL_UNSET), list /
 * set / map / tuple / UDT literals (elements evaluated against the element
 * types, serialized in the protocol form; sets sorted and deduplicated, maps
 * sorted by key), function calls (now(), uuid(), toTimestamp(...), blobAs*,
 * ...: see cql__fn_call), casts and negation.
 * Returns 0 with *out set (out->p in ev->arena), or CS_EUSER with e set
 * (InvalidRequest, Cassandra's wording, e.g.
 *   Invalid STRING constant (foo) for "k" of type int
 *   Invalid null value in condition for column k   [callers decide null rules]
 *   Invalid unset value for column k               [callers decide unset rules]).
 */
/* A term as CQL text, for messages: strings quoted, markers as ?, collections in their brackets. */
void cql__term_text(const ast_term *t, cs_buf *b);
/* Does t hold a bind marker, at any depth (Term.containsBindMarker)? */
bool cql__term_has_marker(const ast_term *t);
int cql__term_eval(cql_eval *ev, const ast_term *t, const ctype *recv, const char *recv_name,
                   cql_value *out, cs_error *e);

/* Evaluate an int receiver such as [limit], [per_partition_limit], [ttl]:
 * null/unset -> *is_set false.  Errors as cql__term_eval. */
int cql__term_eval_i32(cql_eval *ev, const ast_term *t, const char *recv_name,
                       int32_t *out, bool *is_set, cs_error *e);
/* Same for a bigint receiver ([timestamp]). */
int cql__term_eval_i64(cql_eval *ev, const ast_term *t, const char *recv_name,
                       int64_t *out, bool *is_set, cs_error *e);

/* ================================================================ bind metadata (bind.c) */

/* One bind marker's receiver, as PREPARED metadata reports it. */
typedef struct cql_bind_spec {
    const char *ks, *table;            /* borrowed from the catalog (valid until next DDL) */
    char *name;                        /* cs_malloc'd: column name, "[limit]", "[ttl]",
                                          "[timestamp]", "[per_partition_limit]",
                                          "partition key token", "in(k)", "key(m)",
                                          "value(m)", "idx(l)", "[json]", ... */
    ctype *type;                       /* owned ref (e.g. list<int> for in(k)) */
} cql_bind_spec;

typedef struct cql_bind_info {
    cql_bind_spec *specs; int n;       /* one per marker, by marker index */
    uint16_t pk_index[16]; int n_pk;   /* v4 pk_indexes: marker index of each pk column
                                          (n_pk = 0 when not all pk columns are bound by `=?`) */
    const sch_table *table;            /* NULL for statements without one (USE, DDL) */
} cql_bind_info;

/* Compute the receivers of every bind marker of `st` (any DML statement,
 * including a BATCH's children) against the session keyspace.  0 or CS_EUSER
 * (unknown table/column, as Cassandra reports at prepare time). */
int cql__bind_info(cql_ctx *ctx, const cql_session *s, cql_stmt *st, cql_bind_info *out,
                   cs_error *e);
void cql__bind_info_destroy(cql_bind_info *bi);

/* ================================================================ WHERE analysis (restrict.c) */

typedef enum {
    CQL_WHERE_SELECT,                  /* partition keys or token range; clustering slices; filters */
    CQL_WHERE_UPDATE,                  /* every pk and ck column by = / IN; exact keys */
    CQL_WHERE_DELETE,                  /* pk by = / IN; ck: exact keys or prefix/slices (range tombstones) */
} cql_where_kind;

enum {
    CQL_WHERE_ALLOW_FILTERING = 1,     /* SELECT ... ALLOW FILTERING */
    CQL_WHERE_STATIC_ONLY = 2,         /* UPDATE/DELETE touching only static columns:
                                          clustering may (must) be absent */
    CQL_WHERE_LWT = 4,                 /* conditional statement (accepted; its single-partition
                                          and no-IN rules are checked by lwt.c) */
};

/* A predicate applied to each row after the storage read (filtering), or
 * used by the write side for conditions-free checks. */
typedef struct cql_filter {
    const sch_column *col;
    ast_op op;                         /* EQ NEQ LT LTE GT GTE IN CONTAINS CONTAINS_KEY IS_NOT_NULL */
    bool element;                      /* REL_ELEMENT: col[key] op val (maps) */
    cql_value key;                     /* map key for element */
    cql_value val;                     /* operand (EQ/LT/.., CONTAINS: element, CONTAINS_KEY: key) */
    cql_value *in; int n_in;           /* OP_IN operands */
} cql_filter;

/* The analysed WHERE clause. */
typedef struct cql_where {
    /* partitions */
    bool pk_all;                       /* every pk column restricted by = / IN */
    cql_value *pks; int n_pks;         /* serialized partition keys (pk_all), sorted, deduplicated */
    bool token_range;                  /* token(pk) restrictions (SELECT) */
    int64_t tok_start; bool tok_start_incl;
    int64_t tok_end; bool tok_end_incl;
    /* clustering */
    bool ck_all;                       /* every ck column restricted by = / IN */
    cql_value *cks; int n_cks;         /* ck_all: full byte-comparable clustering keys, sorted */
    st_slice *slices; int n_slices;    /* !ck_all: sorted non-overlapping slices (0 = all rows) */
    int ck_eq_prefix;                  /* number of leading ck columns fixed by = / IN */
    bool ck_restricted;                /* any clustering restriction at all */
    /* filtering */
    cql_filter *filters; int n_filters;
    bool needs_filtering;              /* query requires ALLOW FILTERING (granted) */
    bool empty;                        /* provably empty: IN (), contradicting slices, ... */
    bool has_in_pk, has_in_ck;         /* IN on a partition / clustering column */
    /* Values of each = / IN restriction as written (duplicates too), in
     * key order: partition key columns (pk_all) and clustering groups
     * (ck_all), for guardrail in_select_cartesian_product. */
    int pk_raw[16], n_pk_raw, ck_raw[16], n_ck_raw;
    bool uses_index;                   /* the one filter is served by a secondary index */
} cql_where;

/*
 * Analyse `rels` for table `t`.  Evaluates every term (bind markers included)
 * through ev.  Applies Cassandra's rules and messages, e.g.
 *   Some partition key parts are missing: k2
 *   Some clustering keys are missing: c2
 *   Clustering column "c2" cannot be restricted (preceding column "c1" is not restricted)
 *   PRIMARY KEY column "c" cannot be restricted as preceding column "b" is not restricted
 *   Only EQ and IN relation are supported on the partition key (unless you use
 *     the token() function) for DELETE statements
 *   Cannot execute this query as it might involve data filtering and thus may have
 *     unpredictable performance. If you want to execute this query despite the
 *     performance unpredictability, use ALLOW FILTERING
 *   Undefined column name x
 *   Invalid null value in condition for column k
 * Cartesian products of IN values are refused past 65536 keys.  A single
 * EQ/CONTAINS restriction on a secondary-indexed column needs no ALLOW
 * FILTERING (uses_index; answered by scan + filter).  Multi-column slices
 * over mixed clustering orders become the exact slices of their tuple
 * comparison (a prefix and one column's bound each).
 * Returns 0 with *out filled (arrays in ev->arena), or CS_EUSER.
 */
int cql__where_analyze(cql_eval *ev, const sch_table *t, ast_relation **rels, int n_rels,
                       cql_where_kind kind, int flags, cql_where *out, cs_error *e);

/*
 * Point restrictions: every partition key column by `col = term` and the
 * clustering columns [0, n_ck) likewise (all of them for UPDATE/DELETE), each
 * once, no token(), IN, slice or filter: the hot shape of prepared writes and
 * reads.  cql__where_point_keys recognizes it (statically, from the relations
 * and the table) and lists the (column, term) pairs in the order
 * cql__where_analyze evaluates them; cql__where_bind_point then only
 * evaluates the terms and builds the keys, producing the cql_where and the
 * errors cql__where_analyze would for those relations ("Invalid unset value
 * for column k", "Invalid null value in condition for column k", "Invalid
 * partition key value" ...).  Only for relations that cql__where_analyze
 * accepted with the same table: the static checks are not repeated.
 */
typedef struct cql_keyterm {
    const sch_column *col;             /* a key column (or, in a write memo, the column written) */
    const ast_term *term;              /* its value (a DELETE target's: NULL) */
} cql_keyterm;
#define CQL_POINT_MAX_CK 32

/* n_ck (>= 0) with out[0, n_rels) filled, or -1 when rels are not a point
 * restriction of kind (UPDATE and DELETE need every clustering column). */
int cql__where_point_keys(const sch_table *t, ast_relation *const *rels, int n_rels,
                          cql_where_kind kind, cql_keyterm *out);
int cql__where_bind_point(cql_eval *ev, const sch_table *t, const cql_keyterm *keys, int n,
                          int n_ck, cql_where_kind kind, cql_where *out, cs_error *e);

/*
 * A statement's memo of its value-independent analysis (st->exec_memo):
 * made after an execution whose analysis succeeded, used while the catalog
 * version (any DDL changes it) and the resolved table (another session
 * keyspace resolves another one) are the ones it was made with, so its
 * column pointers are alive.  A statement of another shape gets a memo with
 * point false and is not examined again until the next DDL.  A SELECT's
 * memo also holds its selection when that is plain columns or `*` (the
 * xsel entries then name only table-owned columns, types and names, alive
 * as long as the memo is valid).  Owners: exec_modify.c
 * (INSERT/UPDATE/DELETE), exec_select.c (SELECT).  Request
 * loop only (executions hold the exec lock).
 */
typedef struct cql_stmt_memo {
    uint8_t ver[16];                   /* catalog version when made */
    const sch_table *t;                /* table it was made for */
    int cap;                           /* entries in items */
    bool point;                        /* the fast path applies (else: the general one) */
    bool has_regular, has_static;      /* write: as cql_wplan */
    int n_ops;                         /* write: items[0, n_ops) are operations in evaluation order */
    int n_keys, n_ck;                  /* items[n_ops, n_ops + n_keys): key relations (point keys) */
    void *sel;                         /* SELECT: its compiled selection when memoizable (select_sel.c
                                          cql__sel_memo_put), in this block after the key terms; else NULL */
    cql_keyterm items[];
} cql_stmt_memo;

/* st's memo when it was made under the current catalog version (its table
 * m->t is then alive), else NULL. */
cql_stmt_memo *cql__stmt_memo_current(cql_ctx *ctx, const cql_stmt *st);
/* The same, and only when it was made for t. */
cql_stmt_memo *cql__stmt_memo(cql_ctx *ctx, const cql_stmt *st, const sch_table *t);
/* A cleared memo for t (point false) with room for n items, reusing st's
 * block when it is large enough; NULL when out of memory (no memo then).
 * The memo is a cache, not part of the statement's meaning: a statement
 * otherwise immutable (const) gets one too. */
cql_stmt_memo *cql__stmt_memo_new(cql_ctx *ctx, const cql_stmt *st, const sch_table *t, int n);

/* Does the (non-null) value v of column f->col satisfy the filter?  For
 * collections, v is the serialized collection (or len -1 for null/empty). */
bool cql__filter_match(const cql_filter *f, const uint8_t *v, int32_t len);
/* Same on a whole row (vals indexed like t->cols). */
bool cql__filter_match_row(const cql_filter *f, const sch_table *t, const cql_value *vals);

/* ================================================================ functions (functions.c) */

/*
 * Call a native scalar function by name (lower-cased; `ks` NULL or
 * "system"): now, uuid, totimestamp, todate, tounixtimestamp,
 * currenttimestamp/date/time/timeuuid, mintimeuuid, maxtimeuuid, dateof,
 * unixtimestampof, token-less conversions, blobas<type>, <type>asblob,
 * tojson, fromjson (with recv), cast helpers.  arg_types[i] may be NULL for
 * an untyped literal argument already converted by the caller.
 * Also the arithmetic operators _add/_substract/_multiply/_divide/_modulo/
 * _negate on numeric types.
 * Returns 0 with *out (in arena) and *ret_type (borrowed), or CS_EUSER
 * ("Unknown function 'x'", "Invalid number of arguments in call to function x: 1 required but 2 provided").
 */
int cql__fn_call(cql_eval *ev, const char *name, const ctype *const *arg_types,
                 const cql_value *args, int n_args, const ctype *recv,
                 const ctype **ret_type, cql_value *out, cs_error *e);
/* Expected type of parameter i of function `name` called with n args (NULL
 * when the parameter is polymorphic: the argument types itself). */
const ctype *cql__fn_param_type(const char *name, int i, int n_args, const ctype *recv);
/* The operator of a binary operation function ("+" for _add, "-" for
 * _substract, "*", "/", "%"), NULL for any other name. */
const char *cql__fn_operator(const char *name);
/* The type a bind marker (or a string literal) argument i of function
 * `name` takes in a selection, where there is no receiver: the parameter's
 * type once the function is known from its other arguments (arg0: the
 * first argument's type, which picks floor()'s overload); NULL if none. */
const ctype *cql__fn_sel_param_type(const char *name, int i, int n_args, const ctype *arg0);
/* FunctionResolver for the native functions of fixed signatures (the time
 * conversions, mintimeuuid / maxtimeuuid, dateof / unixtimestampof, the
 * blob conversions): an argument as the resolver sees it (a typed value,
 * a literal of kind lit, a marker or null), and its text for messages. */
typedef struct cql_fn_arg {
    const ctype *type;     /* a column's or function's type; NULL for a literal / marker / null */
    int lit;               /* lit_kind of a literal, -1 otherwise */
    bool marker, null;
    const char *text;
} cql_fn_arg;
/* 2 (EXACT_MATCH) when param is arg's kind, 1 when a param of that kind
 * takes arg's values (isValueCompatibleWith: bigint <- timestamp, varint <-
 * int / bigint / timestamp, timestamp <- bigint, date <- int, time <-
 * bigint, uuid <- timeuuid, text <- ascii, blob <- anything), else 0. */
int cql__fn_accepts(ctype_kind param, ctype_kind arg);
/* "system.fn : (in[i]) -> ret[i]" for the n one-argument signatures whose
 * pick[i] is set (all of them without pick), joined by ", " into out, as
 * FunctionResolver lists candidates in its messages. */
void cql__fn_sig_list(const char *fn, const ctype_kind *in, const ctype_kind *ret, const int *pick, int n, char *out,
                      size_t cap);
/* Pick the signature of function `name` (keyspace ks as written, or NULL) for args:
 * 0 with params[] and *ret; CS_EUSER with Cassandra's message ("Type
 * error: k cannot be passed as argument 0 of function system.dateof of
 * type timeuuid", "Invalid call to function todate, none of its type
 * signatures match (known type signatures: ...)", "Ambiguous call ...");
 * 1 when the function is not one of these (the caller types it itself). */
int cql__fn_resolve(const char *ks, const char *name, const cql_fn_arg *args, int n, ctype_kind *params,
                    ctype_kind *ret, cs_error *e);
/* The known type signatures of an overloaded native function, as
 * FunctionResolver lists them when none matches ("system.floor :
 * (timestamp, duration) -> timestamp, ..."), NULL for other names. */
const char *cql__fn_signatures(const char *name);
/* Return type of a native scalar function given argument types, or NULL if
 * the function is unknown (no error set). */
const ctype *cql__fn_return_type(const char *name, const ctype *const *arg_types, int n_args,
                                 const ctype *recv);

/* ================================================================ complex-cell paths (exec-write)
 * How the write side stores non-frozen collections and UDTs (collections.c
 * has the full comment; the read side assembles values the same way, see
 * cql__rowcopy_value in wread.c):
 *   set<T>:   one cell per element, path = ctype_bc_encode(T, elem, asc), empty value
 *   map<K,V>: one cell per entry,   path = ctype_bc_encode(K, key, asc), value = V
 *   list<T>:  one cell per element, path = ctype_bc_encode(timeuuid, id, asc), value = T;
 *             path order is list order (appends increasing ids, prepends
 *             ids below all earlier ones)
 *   UDT:      one cell per non-null field, path = u16 big-endian field index
 * Whole-value overwrite = st_mut_complex_delete(col, ts - 1) + new cells;
 * DELETE col = complex deletion at ts.  Counters: one ST_CELL_COUNTER cell
 * holding the big-endian int64 total (counter.c). */

/* ================================================================ entry points owned by exec-write */

/*
 * INSERT / UPDATE / DELETE (exec_modify.c, lwt.c, counter.c).  `p->values`
 * are POSITIONAL by marker index (exec.c resolved named values and checked
 * the count; p->names is NULL).  Fills r (Void, or Rows for LWT).
 * Returns 0 or CS_EUSER.
 */
int cql_exec_modify(cql_ctx *ctx, cql_session *s, cql_stmt *st, const cql_params *p,
                    cql_result *r, cs_error *e);

/* One statement of a batch, with its positional values. */
typedef struct cql_batch_entry {
    cql_stmt *stmt;                    /* INSERT/UPDATE/DELETE (parsed or prepared; borrowed) */
    const cql_value *values; int n_values;   /* positional by the stmt's marker index */
    const char *keyspace;              /* keyspace a prepared item was prepared under (Cassandra
                                          binds it at PREPARE); NULL = the session's */
} cql_batch_entry;

/*
 * BATCH (exec_batch.c): from the protocol BATCH message (`using` NULL) or a
 * BEGIN BATCH ... APPLY BATCH statement (`using` = the batch's USING; each
 * child's values are the batch statement's values, shared).  `p` carries
 * consistency, serial consistency and the default timestamp (values unused).
 */
int cql_exec_batch(cql_ctx *ctx, cql_session *s, ast_batch_kind kind, const ast_using *using,
                   const cql_batch_entry *items, int n_items, const cql_params *p,
                   cql_result *r, cs_error *e);

/* ================================================================ exec-read internals */

/* SELECT (exec_select.c).  p->values positional as for cql_exec_modify. */
int cql__exec_select(cql_ctx *ctx, cql_session *s, cql_stmt *st, const cql_params *p,
                     cql_result *r, cs_error *e);

/* Write the result metadata of a SELECT (for PREPARED): flags, count,
 * global table spec, column specs.  0 or CS_EUSER. */
int cql__select_metadata(cql_ctx *ctx, cql_session *s, cql_stmt *st, cs_buf *out, cs_error *e);

/* exec.c */
int cql__resolve_values(const cql_stmt *st, const cql_value *vals, int n_vals,
                        const char *const *names, const size_t *name_lens, cs_arena *a,
                        cql_value **out, cs_error *e);
int cql__run(cql_ctx *ctx, cql_session *s, cql_stmt *st, const cql_params *p, bool prepared, cql_result *r,
             cs_error *e);
const ast_qname *cql__stmt_table(const cql_stmt *st);

/* prepared.c: statement cache (by query text) and prepared cache (by id). */
typedef struct cql_prepared {
    uint8_t id[16];
    cql_stmt *stmt;                    /* owned */
    char *keyspace;                    /* session keyspace at prepare time ("" none) */
} cql_prepared;
/* Parsed statement for q: cached (*cached true, owned by the cache; valid
 * until the next cql__stmt_cache_trim) or fresh (caller frees).  NULL + e. */
cql_stmt *cql__stmt_cache_get(cql_ctx *ctx, const char *q, size_t qlen, bool *cached,
                              cs_error *e);
void cql__stmt_cache_trim(cql_ctx *ctx);
cql_prepared *cql__prepared_find(cql_ctx *ctx, const uint8_t *id, size_t idlen);
/* Statements in the prepared cache (CQLMetrics' PreparedStatementsCount). */
int cql__prepared_count(cql_ctx *ctx);
int cql__prepare(cql_ctx *ctx, cql_session *s, const char *q, size_t qlen, cql_result *r,
                 cs_error *e);
/* Evict prepared statements a schema change invalidates (altered or dropped
 * table, dropped keyspace); called by cql__run after DDL. */
void cql__prepared_on_schema_change(cql_ctx *ctx, const cql_schema_change *ch);

#endif
