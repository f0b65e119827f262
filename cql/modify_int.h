/*
 * modify_int.h: shared among the write-side executor files only
 * (exec_modify.c, exec_batch.c, collections.c, counter.c, lwt.c; owner:
 * exec-write).  The public entry points (cql_exec_modify, cql_exec_batch...)
 * are declared in cql/exec_int.h; this header holds the write machinery they
 * share.  Single-threaded: everything here runs on the CQL request thread.
 *
 * Flow of a write:
 *   cql__wbatch_init      one per statement or BATCH: owns the st_mutation
 *   cql__wbatch_partition start/select a partition (tracks distinct keys)
 *   cql__wrow_*           cells of one row (collections.c)
 *   cql__counter_add      counter deltas, resolved at commit (counter.c)
 *   cql__wbatch_data_size Cassandra's batch size, for the thresholds (batch_size.c)
 *   cql__wbatch_commit    counters -> cells, st_write, durability (exec_batch.c)
 *   cql__wbatch_destroy
 */
#ifndef CS_CQL_MODIFY_INT_H
#define CS_CQL_MODIFY_INT_H

#include "cql/cql_int.h"
#include "common/arena.h"

/* One distinct partition touched by a write group (for warnings, LWT). */
typedef struct cql_wpart {
    const sch_table *t;
    const uint8_t *pk; uint32_t pk_len;        /* arena copy */
} cql_wpart;

/* A pending counter delta (summed per cell, applied at commit). */
typedef struct cql_wcounter {
    const sch_table *t;
    const uint8_t *pk; uint32_t pk_len;        /* arena copies */
    const uint8_t *ck; uint32_t ck_len;
    bool is_static;
    uint32_t col;
    int64_t delta;
    int64_t ts_us;                             /* latest statement timestamp (batch size) */
} cql_wcounter;

/* A write group: one statement, or all statements of a BATCH.  All
 * mutations go to ONE st_mutation, hence one commit log record. */
typedef struct cql_wbatch {
    cql_ctx *ctx;
    st_mutation *m;
    cs_arena arena;                            /* key copies, scratch */
    int32_t now_s;                             /* local deletion time / TTL base */
    cql_wpart *parts; int n_parts, cap_parts;   /* parts is &part1 until a second partition */
    cql_wpart part1;                           /* (so a wbatch never moves once in use) */
    cql_wcounter *ctrs; int n_ctrs, cap_ctrs;
    int cur_part;                              /* index in parts of the current partition */
    uint64_t start_ns;                         /* the request's start (cql_params), 0 = unknown */
    const cql_session *session;                /* the request's (guardrails), NULL = internal */
    cql_result *result;                        /* the request's, for guardrail warnings (may be NULL) */
    bool atomic;                               /* a logged batch of several mutations (traced as one) */
    bool paxos;                                /* an applied conditional update: committed by Paxos (no
                                                  "Determining replicas" line) */
} cql_wbatch;

int cql__wbatch_init(cql_wbatch *b, cql_ctx *ctx, int32_t now_s);
void cql__wbatch_destroy(cql_wbatch *b);
/* Select (and start in the st_mutation) the partition pk of table t. */
int cql__wbatch_partition(cql_wbatch *b, const sch_table *t, const uint8_t *pk, uint32_t pk_len);
/* Resolve counters, st_write the group, fill r->need_sync/sync_pos. */
int cql__wbatch_commit(cql_wbatch *b, cql_result *r, cs_error *e);

/* One row being written inside the current partition of a wbatch. */
typedef struct cql_wrow {
    cql_wbatch *b;
    const sch_table *t;
    const uint8_t *pk; uint32_t pk_len;        /* borrowed */
    const uint8_t *ck; uint32_t ck_len;        /* borrowed; empty for static */
    bool is_static;
    int64_t ts_us;                             /* write timestamp */
    int32_t ttl_s;                             /* 0 = no TTL */
    size_t mut_start;                          /* st_mutation_len after the row started: its own ops follow */
} cql_wrow;

/* Start row ck (or the static row) in the mutation. */
void cql__wrow_start(cql_wrow *w);

/* ---- collections.c: cells for every column kind (path conventions there) */

/* Whole value of column c (INSERT value, SET c = v): null writes a tombstone,
 * unset is skipped by the caller.  Non-frozen collections and UDTs: complex
 * deletion at ts-1 then one cell per element / non-null field. */
int cql__w_set_value(cql_wrow *w, const sch_column *c, cql_value v, cs_error *e);
/* c = c + v: set/map add, list append. */
int cql__w_coll_add(cql_wrow *w, const sch_column *c, cql_value v, cs_error *e);
/* c = v + c: list prepend. */
int cql__w_list_prepend(cql_wrow *w, const sch_column *c, cql_value v, cs_error *e);
/* c = c - v: set discard, map key discard (v is a set of keys), list discard
 * (read-before-write). */
int cql__w_coll_sub(cql_wrow *w, const sch_column *c, cql_value v, cs_error *e);
/* c[key] = v: map put (null v deletes), list set by index (read-before-write). */
int cql__w_elem_set(cql_wrow *w, const sch_column *c, cql_value key, cql_value v, cs_error *e);
/* DELETE c[key]: map key, set element, list index (read-before-write). */
int cql__w_elem_delete(cql_wrow *w, const sch_column *c, cql_value key, cs_error *e);
/* c.field = v (non-frozen UDT); DELETE c.field. */
int cql__w_field_set(cql_wrow *w, const sch_column *c, int field, cql_value v, cs_error *e);
int cql__w_field_delete(cql_wrow *w, const sch_column *c, int field, cs_error *e);
/* DELETE c: tombstone cell, or complex deletion at ts for multi-cell columns. */
int cql__w_column_delete(cql_wrow *w, const sch_column *c, cs_error *e);

/* Path of a non-frozen UDT field cell: u16 big-endian field index. */
void cql__udt_field_path(int field, uint8_t out[2]);

/* Read the live cells of one row from storage (read-before-write, LWT).
 * Copies are kept in `store` (cells' pointers reference store->p, so do not
 * grow store afterwards).  Returns 1 if the row has any live data (marker or
 * cell), 0 if absent, <0 on storage error. */
typedef struct cql_rowcopy {
    cs_buf store;                              /* path/value bytes */
    st_cell *cells; int n_cells;               /* sorted by (col, path) */
    st_liveness liveness;
    bool exists;
} cql_rowcopy;
int cql__read_row(const sch_table *t, const uint8_t *pk, uint32_t pk_len,
                  const uint8_t *ck, uint32_t ck_len, bool is_static, int32_t now_s,
                  cql_rowcopy *out);
/* Same, optionally keeping tombstone cells not shadowed by a row, range or
 * partition deletion (flags ST_CELL_TOMBSTONE), for counters. */
int cql__read_row_ex(const sch_table *t, const uint8_t *pk, uint32_t pk_len,
                     const uint8_t *ck, uint32_t ck_len, bool is_static, int32_t now_s,
                     bool tombstones, cql_rowcopy *out);
void cql__rowcopy_free(cql_rowcopy *rc);
/* 1 if partition pk has any live row (static included), 0 if not, <0 error. */
int cql__partition_exists(const sch_table *t, const uint8_t *pk, uint32_t pk_len, int32_t now_s);
/* The clustering of partition pk's first live row (static row excluded)
 * into ck: 1 if there is one, 0 if not, <0 error. */
int cql__first_row_ck(const sch_table *t, const uint8_t *pk, uint32_t pk_len, int32_t now_s, cs_buf *ck);
/* Value of column c assembled from the row's cells in protocol form (a
 * collection rebuilt from its cells).  Returns 1 with out filled, 0 if null. */
int cql__rowcopy_value(const cql_rowcopy *rc, const sch_column *c, cs_buf *out);

/* ---- counter.c */

/* c = c + delta on the current row (summed per cell until commit). */
int cql__counter_add(cql_wrow *w, const sch_column *c, int64_t delta, cs_error *e);
/* Apply the pending counter deltas: read totals, write counter cells. */
int cql__counters_apply(cql_wbatch *b, cs_error *e);

/* ---- batch_size.c */

/* The size BatchStatement.verifyBatchSize compares with the batch size
 * thresholds: Cassandra's IMutation.dataSize over the group's mutations as
 * its collector builds them (one PartitionUpdate per table and partition
 * key, the statements' rows of one clustering merged), from b->m and the
 * pending counter deltas.  Call before cql__wbatch_commit (which adds the
 * counter totals and the index and view rows, none of which Cassandra
 * counts).  Returns the size in bytes, or CS_ENOMEM, or CS_ECORRUPT for a
 * mutation it cannot read (a bug). */
int64_t cql__wbatch_data_size(const cql_wbatch *b);

/* ---- exec_modify.c: one INSERT/UPDATE/DELETE, analysed and evaluated */

#include "cql/exec_int.h"

/* One evaluated SET operation / DELETE target / INSERT value. */
typedef struct cql_wop {
    const sch_column *col;
    int kind;                                  /* ast_set_kind; DELETE: CQL_WOP_DEL_* */
    cql_value key;                             /* element key / list index */
    int field;                                 /* UDT field index */
    cql_value val;
} cql_wop;
enum { CQL_WOP_DEL_COLUMN = 100, CQL_WOP_DEL_ELEM, CQL_WOP_DEL_FIELD };

/* One evaluated LWT condition. */
typedef struct cql_wcond {
    const sch_column *col;
    int access;                                /* 0 whole value, 1 element, 2 UDT field */
    cql_value key;                             /* element key / list index */
    int field;
    const ctype *vtype;                        /* type the operand(s) compare as */
    ast_op op;
    cql_value *vals; int n_vals;               /* 1 value, or the IN list */
} cql_wcond;

typedef struct cql_wplan {
    cql_stmt *st;
    const sch_table *t;
    cql_where w;                               /* pks, cks / slices */
    int64_t ts_us; bool ts_set;                /* USING TIMESTAMP given */
    int32_t ttl_s;
    cql_wop *ops; int n_ops;
    bool has_regular, has_static;              /* ops touching regular / static columns */
    bool row_marker;                           /* INSERT */
    bool if_exists, if_not_exists;
    cql_wcond *conds; int n_conds;
    bool is_counter;
} cql_wplan;

/* Analyse and evaluate st (INSERT/UPDATE/DELETE).  batch_ts: the timestamp
 * to use when the statement has none.  Arrays live in ev->arena. */
int cql__wplan_prepare(cql_eval *ev, cql_stmt *st, int64_t batch_ts, int32_t now_s,
                       cql_wplan *pl, cs_error *e);
/* Add the plan's mutations to b. */
int cql__wplan_apply(cql_wbatch *b, const cql_wplan *pl, cs_error *e);
static inline bool cql__wplan_is_lwt(const cql_wplan *pl)
{ return pl->if_exists || pl->if_not_exists || pl->n_conds > 0; }

/* INSERT ... JSON (insert_json.c): fills pl->ops and equality relations
 * for the key columns (values passed as extra bind markers). */
int cql__insert_json(cql_eval *ev, cql_stmt *st, cql_wplan *pl, ast_relation ***rels,
                     int *n_rels, cs_error *e);

/* ---- exec_batch.c: run one statement (kind -1) or a batch of them. */
int cql__exec_writes(cql_ctx *ctx, cql_session *s, int kind, const ast_using *using,
                     const cql_batch_entry *items, int n_items, const cql_params *p,
                     cql_result *r, cs_error *e);

/* ---- lwt.c */

int cql__wplan_conds(cql_eval *ev, const ast_condition *conds, int n, cql_wplan *pl, cs_error *e);

/* Check the conditions of plans (one partition of one table), build the
 * [applied] result into r; *applied says whether to apply the mutations. */
typedef struct cql_paxos_trace cql_paxos_trace;
int cql__lwt_check(cql_wplan *const *plans, int n, bool is_batch, int32_t now_s, int version,
                   cql_result *r, bool *applied, cql_paxos_trace *pt, cs_error *e);

/* ---- lwt_trace.c: the trace of a conditional write (or SERIAL read) as
 * Cassandra 4.1's legacy Paxos writes it (see the file).  Each call does
 * nothing unless the request is traced (cql__trace_begin made pt->on). */
struct cql_paxos_trace {
    bool on;
    char ballot[37];                           /* the round's ballot, a timeuuid */
    int64_t ballot_us, ballot_time;            /* its µs; its 100 ns UUID time */
    const sch_table *t;
    const uint8_t *pk; uint32_t pk_len;        /* the partition (borrowed) */
};
/* "Preparing <ballot>", "Promising ballot <ballot>". */
void cql__paxos_trace_begin(cql_paxos_trace *pt, const sch_table *t, const uint8_t *pk, uint32_t pk_len);
/* "Reading existing values for CAS precondition" and the read's opening
 * lines; read_end: its closing lines (by clustering names, or a slice),
 * with the sstables and tombstones counted by cql__read_row meanwhile. */
void cql__paxos_trace_read_begin(cql_paxos_trace *pt);
void cql__paxos_trace_read_end(cql_paxos_trace *pt, bool by_names, int live_rows);
/* "CAS precondition does not match current values <FilteredPartition>":
 * the static row and the rows read, cells of the fetched columns
 * (fetched[i] for t->cols[i]). */
void cql__paxos_trace_mismatch(cql_paxos_trace *pt, const bool *fetched, const cql_rowcopy *stat,
                               const cql_rowcopy *const *regs, const uint8_t *const *cks,
                               const uint32_t *ck_lens, int n_regs);
/* "CAS precondition is met; proposing ...", "Accepting proposal
 * Accepted(...)" of update m (NULL: the empty update of a CAS that does
 * not apply or of a SERIAL read). */
void cql__paxos_trace_propose(cql_paxos_trace *pt, const st_mutation *m);
/* "Committing proposal Committed(...)" (only for a non-empty update). */
void cql__paxos_trace_commit(cql_paxos_trace *pt, const st_mutation *m);
/* "CAS applied successfully" / "CAS did not apply". */
void cql__paxos_trace_end(cql_paxos_trace *pt, bool applied);

/* What cql__read_row(_ex) read since the last reset, on this thread (the
 * CAS read's trace counts). */
typedef struct cql_wread_stats { uint64_t sstables, tombstones; } cql_wread_stats;
void cql__wread_stats_reset(void);
const cql_wread_stats *cql__wread_stats(void);

/* Small helpers. */
int cql__check_ttl(int64_t ttl, cs_error *e);   /* Cassandra's Attributes rules */
#define CQL_MAX_TTL_S 630720000                  /* 20 years */

#endif
