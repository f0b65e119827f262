/*
 * work.h: the workload model between the profile and the runner.
 * bench/gen.c turns a profile plus the table's real schema (read back from
 * system_schema.columns) into requests: INSERT/UPDATE executions (batched
 * when an op writes several rows) and query executions with bound values.
 * It also holds the partition picture (picture.h): every partition the
 * server acknowledged a write or read of, with its token, distinct rows,
 * bytes and the operations that touched it.
 */
#ifndef CS_BENCH_WORK_H
#define CS_BENCH_WORK_H

#include "bench/bench.h"
#include "bench/client.h"
#include "bench/picture.h"

typedef struct bench_col {
    char *name;
    int kind;                   /* 0 partition key, 1 clustering, 2 regular, 3 static */
    int position;
    uint16_t type;              /* protocol type id; 0xFFFF = unsupported (bound as null) */
    bench_colspec *spec;        /* NULL if the profile says nothing */
} bench_col;

typedef struct bench_stmt {     /* a prepared statement and where its markers come from */
    char *cql;
    uint8_t id[64]; int idlen;
    int n_binds;
    int *bind_col;              /* column index per marker, -1 = special */
    uint16_t *bind_type;
    char *bind_op;              /* per marker: '=', '>', '<', 'L' (limit), 'I' (IN) */
    bool is_counter_update;
    int bound_pk;               /* partition key columns bound with '=' */
    bool binds_values;          /* binds a regular or static column */
} bench_stmt;

/* A partition's rows as stress's clustering tree (tree.c): level d has,
 * under each node of level d - 1, the count its cluster distribution draws
 * seeded by that node.  Leaves are numbered in clustering order. */
typedef struct bench_tree {
    int levels;                 /* counted clustering columns */
    const bench_dist **cluster; /* per level, borrowed from the profile; NULL = fixed(1) */
    int var_depth;              /* levels var_depth.. all have fixed counts */
    int64_t *fixed_below;       /* [d], d >= var_depth: leaves under a node of level d - 1; [levels] = 1 */
    /* the layout of the last partition asked about */
    uint64_t pk_hash; bool valid;
    int64_t rows;               /* its leaves */
    int64_t c0;                 /* var_depth <= 1: its level-0 count */
    size_t n_groups, cap;       /* var_depth >= 2: the nodes of level var_depth - 1 */
    int64_t *start;             /* group g holds leaves [start[g], start[g + 1]) */
    int32_t *path;              /* its digits on levels 0..var_depth - 2 */
    uint64_t *gseed;            /* its seed */
    int64_t *gcount;            /* its count */
} bench_tree;
/* cluster[0..levels) (NULL = fixed(1)) stay owned by the caller and must
 * outlive t.  0, or -1 (more than 64 levels, or out of memory). */
int bench_tree_init(bench_tree *t, bench_dist *const *cluster, int levels);
void bench_tree_destroy(bench_tree *t);
/* The rows of partition pk_hash (at least 1; capped at 2^62). */
int64_t bench_tree_rows(bench_tree *t, uint64_t pk_hash);
/* Leaf number leaf (0..rows-1) of partition pk_hash: per level, its digit
 * (the value's index under its parent) and the node's seed, from which the
 * value is drawn. */
void bench_tree_leaf(bench_tree *t, uint64_t pk_hash, int64_t leaf, uint64_t *node_seed, int64_t *digit);

typedef struct bench_scratch bench_scratch;   /* gen.c: buffers reused by every build */

typedef struct bench_model {
    bench_profile *p;
    char *table_q;              /* keyspace-qualified table name */
    bench_col *cols; int n_cols;
    bool counter_table;
    bench_stmt insert;          /* INSERT (or counter UPDATE) of every column */
    bench_stmt *extra; int n_extra;
    bench_stmt *queries;        /* parallel to p->queries */
    int64_t clock_ms;           /* simulated clock */
    bool last_token_set;        /* routing: see bench_model_last_token */
    int64_t clock_step_ms;
    bench_rng rng;
    int n_pk;                   /* partition key columns */
    bool has_bucket;            /* a partition key column uses the bucket generator */
    bool ck_clock;              /* a clustering column takes the clock (clock, timeuuid): every
                                   row written is a new one, not one of the partition's tree */
    int *op_query;              /* per op: -1 insert, else index into p->queries (-2 unknown) */
    int n_op_query;
    bench_scratch *scratch;
    /* generation (gen.c "rows") */
    bench_dist seeds;           /* the seed population: one seed per partition an op touches */
    uint64_t *col_salt;         /* per column: mixed into its seeds, as stress's per-column salt */
    int64_t *pk_seed;           /* per column: the value seed of the current partition's key columns */
    uint64_t uniq;              /* spreads timeuuids of one ms (drawn per row) */
    int *ck_all; int n_ck_all;  /* clustering columns in clustering order */
    int *col_level;             /* per column: its level in the tree, -1 if not a counted clustering column */
    bench_tree tree;            /* the rows of a partition */
    int *val_rank; int n_vals;  /* per column: rank among the value columns by name (row-population) */
    double row_pop;             /* the current partition's row-population ratio */
    /* token range queries (one page of a range per op) */
    int64_t *tr_lo, *tr_hi; int n_ranges;   /* (lo, hi] ranges of the ring, in token order */
    uint64_t next_range;
    struct bench_cursor *cursors; int n_cursors;
    int last_cursor;            /* cursor the last built op uses, -1 if none */
    bench_picture pic;          /* partition picture (picture.h) */
    /* bucket generator: rows written per partition-without-bucket */
    uint64_t *bk_keys; uint64_t *bk_rows; size_t bk_cap, n_bk;
} bench_model;

/* Create schema (keyspace, table, extra definitions), read the columns back,
 * prepare every statement.  err gets a readable reason. */
int bench_model_init(bench_model *m, bench_profile *p, bc_sync *conn, char *err, size_t errlen);
/* The seed population (stress's -pop): "seq=A..B", "dist=DIST", or NULL for
 * stress's default, seq(1..N) when the ops are inserts only, else
 * gaussian(1..N), N being n_ops or 1M.  Sizes the partition table.  0, or
 * -1 with err. */
int bench_model_set_seeds(bench_model *m, const char *spec, bool insert_only, int64_t n_ops, char *err,
                          size_t errlen);
/* The ring's tokens (sorted), which token range queries walk: the ranges
 * between consecutive tokens, as the drivers list them, unwrapped. */
void bench_model_set_ring(bench_model *m, const int64_t *tokens, int n);
/* The answer to an op that used cursor (bench_model_last_cursor): the next
 * page of its range comes from the paging state (copied), or, without one
 * (or on an error), the cursor takes the next range. */
void bench_model_cursor_done(bench_model *m, int cursor, bool ok, const uint8_t *ps, int32_t ps_len);
void bench_model_destroy(bench_model *m);

/* Build the request for one operation into msg (opcode in *opcode: EXECUTE
 * or BATCH); op = index into p->op_names.  pd (the caller's, reset first)
 * gets what the op adds to the partition picture: the caller applies it
 * with bench_picture_ack(&m->pic, pd) when the server answers with a
 * RESULT, and only then.  For an EXECUTE, *flags_off is the offset of the
 * query flags byte, so the runner can ask for the next page by setting
 * 0x08 and appending the paging state (it is the last field when only
 * values and page size are sent). */
int bench_model_build(bench_model *m, int op, cs_buf *msg, uint8_t *opcode, size_t *flags_off,
                      bench_pending *pd);
/* The Murmur3 token of the partition the last built op targets (its first
 * partition for a batch); false when the op does not name one partition
 * (IN on the key, range scans): token-aware routing then picks any host. */
bool bench_model_last_token(const bench_model *m, int64_t *token);

#endif
