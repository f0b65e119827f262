/*
 * select_int.h: shared by the SELECT executor's files only (exec_select.c,
 * select_sel.c, paging.c; owner exec-read).
 *
 * A SELECT runs as: WHERE analysis (restrict.c) -> storage scans ->
 * materialized rows (xrow: every table column's value plus write time and
 * TTL) -> row filters -> selection (xsel trees: columns, functions,
 * aggregates, writetime/ttl, casts) -> Rows writer, with LIMIT, PER
 * PARTITION LIMIT and paging applied on the way.
 */
#ifndef CS_CQL_SELECT_INT_H
#define CS_CQL_SELECT_INT_H

#include "cql/exec_int.h"
#include "common/util.h"

enum { AGG_NONE = 0, AGG_COUNT, AGG_COUNT_STAR, AGG_MIN, AGG_MAX, AGG_SUM, AGG_AVG };

/* One materialized row.  Arrays indexed like sch_table.cols. */
typedef struct xrow {
    cql_value *vals;           /* value or len -1 (null) */
    int64_t *wt;               /* write time (µs) of simple cells, INT64_MIN if none */
    int32_t *ttl;              /* remaining TTL (s), 0 if none */
    const uint8_t *pk; uint32_t pk_len;
    const uint8_t *ck; uint32_t ck_len;
    int64_t token;
    bool is_static_only;       /* a partition with only static content */
} xrow;

/* A compiled selector. */
typedef struct xsel xsel;
struct xsel {
    ast_selector_kind kind;
    int col;                   /* table column index for COLUMN/WRITETIME/TTL */
    const ctype *type;         /* result type (borrowed from table or singletons, or own_type) */
    ctype *own_type;           /* owned ref when the type was built here */
    const char *name;          /* result column name (arena) */
    const char *fname;         /* SEL_FUNC: lower-case name without "system." */
    xsel **args; int n_args;
    int agg;                   /* AGG_* */
    bool is_token;             /* token(<the partition key, in order>): the row's token */
    bool token_of_args;        /* token(<other arguments>): computed from their values */
    bool contains_agg;
    const ast_term *elem_from, *elem_to;   /* SEL_TERM term; SEL_ELEMENT key / SEL_SLICE bounds */
    int field;                 /* SEL_FIELD index */
    const ctype *cast_from;    /* SEL_CAST: the cast function's input type (CastFcts), its argument read as one */
    /* aggregate state (per group) */
    int64_t count;
    cs_buf acc; bool acc_set;  /* running sum/min/max value */
    cs_buf first; bool first_set; int32_t first_len;   /* first value of a non-aggregate */
};

typedef struct xselection {
    xsel **sels; int n;
    bool has_agg;              /* aggregate query (one row per group) */
    bool json;                 /* SELECT JSON */
    bool selects_static;       /* a selector reads a static column (at any depth), or `*` with statics */
    bool star;
    bool borrowed;             /* sels belong to a statement memo (cql__sel_memo_get): not destroyed */
} xselection;

/* Compile the selection of `as` against t; 0 or CS_EUSER. */
int cql__sel_compile(cql_eval *ev, const sch_table *t, const ast_select *as, xselection *out,
                     cs_error *e);
void cql__sel_destroy(xselection *x);
/* One selector compiled on its own (GROUP BY's function), and its end. */
xsel *cql__sel_compile_one(cql_eval *ev, const sch_table *t, const ast_selector *as, cs_error *e);
void cql__sel_destroy_one(xsel *x);
/*
 * A compiled selection kept in a statement's memo (cql_stmt_memo.sel), so a
 * prepared SELECT does not build and tear down one xsel per column on every
 * execution.  Only selections that read nothing but the table and the
 * statement and whose xsel entries are never written while rows are
 * emitted: `*` or plain columns without alias, no aggregate, no GROUP BY
 * (grouping keeps per-group state in the xsel).
 * cql__sel_memo_size: the bytes cql__sel_memo_put needs for sel (compiled
 * from as), or 0 when it is not such a selection.  cql__sel_memo_put copies
 * sel into mem (8-byte aligned, that many bytes); cql__sel_memo_get makes
 * out a borrowed view of it (valid while the memo is).
 */
size_t cql__sel_memo_size(const ast_select *as, const xselection *sel);
void cql__sel_memo_put(const xselection *sel, void *mem);
void cql__sel_memo_get(const void *mem, xselection *out);
/* Evaluate a non-aggregate selector on a row (value in ev->arena). */
int cql__sel_eval(cql_eval *ev, const sch_table *t, xsel *s, const xrow *row, cql_value *out,
                  cs_error *e);
/* Aggregation: add a row to every selector's state; produce results; reset. */
int cql__sel_agg_add(cql_eval *ev, const sch_table *t, xselection *x, const xrow *row, cs_error *e);
int cql__sel_agg_result(cql_eval *ev, const sch_table *t, xsel *s, cql_value *out, cs_error *e);
void cql__sel_agg_reset(xselection *x);
/* Write the metadata columns of the selection to a Rows writer / buffer. */
void cql__sel_columns(const xselection *x, cql_rows *w);
/* JSON object text of one output row (SELECT JSON). */
int cql__sel_json_row(const xselection *x, const cql_value *vals, cs_buf *out);

/* ---------------------------------------------------------------- paging (paging.c) */

typedef struct cql_pstate {
    const uint8_t *pk; uint32_t pk_len;
    const uint8_t *ck; uint32_t ck_len;
    bool part_done;            /* resume with the partition after pk */
    int32_t emitted;           /* rows returned so far (LIMIT) */
    int32_t part_emitted;      /* rows returned in pk so far (PER PARTITION LIMIT) */
} cql_pstate;

void cql__pstate_encode(const cql_pstate *ps, cs_buf *out);
/* Decode (pointers borrow from p).  CS_EUSER: ProtocolError "Invalid value for the paging state". */
int cql__pstate_decode(const uint8_t *p, int32_t len, cql_pstate *ps, cs_error *e);
/* Slices restricted to the rows strictly after (forward) or before
 * (reversed) clustering key ck.  Result in arena; *n may become 0 with
 * *empty set when nothing is left. */
int cql__slices_after(cs_arena *a, const st_slice *in, int n_in, const uint8_t *ck, uint32_t ck_len,
                      bool reversed, st_slice **out, int *n, bool *empty);

/* ---------------------------------------------------------------- one execution */

typedef struct cql_brow { uint8_t *ck; uint32_t ck_len; uint8_t *vals; size_t vals_len; size_t seq; } cql_brow;

/* One SELECT execution (exec_select.c owns the lifecycle). */
typedef struct cql_sx {
    cql_ctx *ctx; cql_session *s; const sch_table *t; const ast_select *as; const cql_stmt *st;
    const cql_params *p; cs_error *e;
    cql_stmt_memo *memo;               /* st's memo for t (cql__stmt_memo at sx_init), or NULL */
    cs_arena arena;                    /* request lifetime */
    cs_arena row_arena;                /* per-row scratch (xrow, selector values) */
    cs_buf ck_store;                   /* clustering decode scratch */
    uint32_t *idmap;                   /* sorted (column id, index) pairs */
    int64_t *drop_us;                  /* per column: dropped-before time (re-added columns) */
    int32_t now_s;                     /* read time for TTLs */
    cql_eval ev;
    cql_where w;
    xselection sel;
    cql_result *r; cql_rows out;
    bool reversed, distinct, regular_filter;
    int32_t limit, pp_limit, page_size;
    int32_t emitted, page_emitted, part_emitted;
    bool page_full, stop, more, part_skip;
    /* current partition */
    cs_arena part_arena;
    const uint8_t *pk; uint32_t pk_len; int64_t token;
    cql_value *pkvals;
    st_cell *scells; int n_scells;
    /* last returned row */
    cs_buf last_pk, last_ck; bool last_has_ck, last_part_done; int32_t last_part_emitted;
    /* GROUP BY */
    int group_cols[64]; int n_group;
    xsel *group_fn;                    /* GROUP BY ..., f(ck): f of the last group column, its group value */
    cs_buf group_key; bool group_open;
    cs_buf group_ck;                   /* the group's first row's clustering: its place in an ORDER BY sort */
    /* ORDER BY with IN over several partitions: sort in memory */
    bool buffer; cql_brow *brows; size_t n_brows, cap_brows;
    uint64_t tombstones, live_rows;
    uint64_t sstables_read;            /* sstables consulted (st_scan_stats), for SSTablesPerReadHistogram */
    /* Paged reads: tombstones a page may scan before it ends early (0 =
     * unlimited): tomb_budget once the page has a row, tomb_hard while it
     * has none (see cql__tombstone_budget in select_scan.c). */
    uint64_t tomb_budget, tomb_hard;
    /* The request timeout (read_request_timeout for a read of partition
     * keys, range_request_timeout for a range or index read), from the
     * request's arrival: cql__deadline_tick reads the clock every
     * CQL_DEADLINE_EVERY partitions or rows and ends the read past it. */
    uint64_t deadline_ns;              /* 0: none (virtual tables) */
    uint32_t ticks;
} cql_sx;


/* Rows materialized in memory (virtual tables, views). */
typedef struct cql_vrow { cql_value *vals; uint8_t *pk; uint32_t pk_len; uint8_t *ck; uint32_t ck_len; } cql_vrow;
typedef struct cql_vcollect { cql_sx *x; cql_vrow *rows; size_t n, cap; int err; } cql_vcollect;
/* vtable_rows-style emit callback: one value per column of x->t (arg = cql_vcollect). */
int cql__vrow_add(void *arg, const uint8_t **vals, const int32_t *lens);
/* Sort, restrict, filter and emit collected rows; frees vc->rows. */
int cql__emit_vrows(cql_sx *x, cql_vcollect *vc, const cql_pstate *ps, bool token_order);
bool cql__in_slices(const cql_where *w, const uint8_t *ck, uint32_t n);

/* exec_select.c: a row that passed the filters -> selection/aggregation. */
int cql__select_emit(cql_sx *x, const xrow *row);
/* select_scan.c: the three read paths. */
int cql__scan_keys(cql_sx *x, const cql_pstate *ps);
/* A traced read's "Read N live rows and M tombstone cells" line (ReadCommand). */
void cql__trace_read_counts(const cql_sx *x, uint64_t live, uint64_t tombstones);
/* A traced range or index read's "Submitting range requests on N ranges ..." and
 * "Submitted 1 concurrent range requests" (index_rows: the index's expected
 * rows, getEstimatedResultRows; -1 for a read without an index). */
void cql__trace_range_requests(const cql_sx *x, int64_t index_rows);
int cql__scan_range(cql_sx *x, const cql_pstate *ps);
int cql__scan_virtual(cql_sx *x, const cql_pstate *ps);
/* Tombstone budgets of one page of page_size rows (0: unpaged, unlimited):
 * *soft once the page holds a row, *hard while it is empty. */
/* Cassandra's answer to a local read that failed on this node (its
 * LocalReadRunnable reports the failure to the read callback, and the
 * coordinator throws ReadFailureException): READ_FAILURE with 0 responses,
 * 1 failure from this node (listen_address), reason `code` named `name`
 * (RequestFailureReason: 0 UNKNOWN, 1 READ_TOO_MANY_TOMBSTONES, ...).
 * Returns CS_EUSER. */
int cql__read_failure(cql_sx *x, uint16_t code, const char *name);

void cql__tombstone_budget(int32_t page_size, int fail_threshold, uint64_t *soft, uint64_t *hard);

/* Cassandra's answer to a read still running at its timeout (the
 * coordinator's ReadCallback gives up waiting for the local read):
 * READ_TIMEOUT "Operation timed out - received only 0 responses.", the
 * request's consistency, 0 received, 1 required, no data.  Counted in
 * the node's ClientRequest timeouts.  Returns CS_EUSER. */
int cql__read_timeout(cql_sx *x);
#define CQL_DEADLINE_EVERY 128u
/* One unit of read work (a partition or row scanned, an index entry):
 * every CQL_DEADLINE_EVERY of them the clock is read; CS_EUSER (the read
 * timeout) once past x->deadline_ns, else 0. */
static inline int cql__deadline_tick(cql_sx *x)
{
    if (++x->ticks % CQL_DEADLINE_EVERY || !x->deadline_ns)
        return 0;
    return cs_mono_ns() > x->deadline_ns ? cql__read_timeout(x) : 0;
}

#endif
