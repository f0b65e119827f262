/*
 * work.h: the workload model between the profile and the runner.
 * bench/gen.c turns a profile plus the table's real schema (read back from
 * system_schema.columns) into requests: INSERT/UPDATE executions (batched
 * when an op writes several rows) and query executions with bound values.
 * It also keeps the partition picture: every partition written, with its
 * token, distinct rows, bytes and the operations that touched it.
 */
#ifndef CS_BENCH_WORK_H
#define CS_BENCH_WORK_H

#include "bench/bench.h"
#include "bench/client.h"

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

typedef struct part_stat {      /* one partition written or read (40 bytes: there may be millions) */
    uint64_t hash;              /* of the serialized key; 0 = empty slot */
    int64_t token;
    uint64_t bytes;             /* bytes of distinct rows written (values) */
    uint64_t ops;               /* operations that touched it */
    uint32_t rows;              /* distinct rows written */
} part_stat;

typedef struct part_hot {       /* one of the hottest partitions so far, with its key */
    uint64_t hash, ops;
    uint8_t *key; uint32_t key_len;   /* serialized partition key (for display) */
} part_hot;

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
    bool one_row_per_part;      /* no clustering columns: a partition's row is new iff rows == 0 */
    bool has_bucket;            /* a partition key column uses the bucket generator */
    int *op_query;              /* per op: -1 insert, else index into p->queries (-2 unknown) */
    int n_op_query;
    bench_scratch *scratch;
    /* partition picture */
    part_stat *parts; size_t parts_cap, n_parts;
    /* the top_n hottest partitions, kept as operations come (ops only grow,
     * so this is exact) because the table does not keep keys */
    int top_n;                  /* set before the run; default 10 */
    part_hot *hot; int n_hot;
    uint64_t *rowset; size_t rowset_cap, n_rowset;   /* hashes of (partition, clustering) written */
    /* bucket generator: rows written per partition-without-bucket */
    uint64_t *bk_keys; uint64_t *bk_rows; size_t bk_cap, n_bk;
} bench_model;

/* Create schema (keyspace, table, extra definitions), read the columns back,
 * prepare every statement.  err gets a readable reason. */
int bench_model_init(bench_model *m, bench_profile *p, bc_sync *conn, char *err, size_t errlen);
void bench_model_destroy(bench_model *m);

/* Build the request for one operation into msg (opcode in *opcode: EXECUTE
 * or BATCH); op = index into p->op_names.  Updates the partition picture.
 * For an EXECUTE, *flags_off is the offset of the query flags byte, so the
 * runner can ask for the next page by setting 0x08 and appending the paging
 * state (it is the last field when only values and page size are sent). */
int bench_model_build(bench_model *m, int op, cs_buf *msg, uint8_t *opcode, size_t *flags_off);
/* The Murmur3 token of the partition the last built op targets (its first
 * partition for a batch); false when the op does not name one partition
 * (IN on the key, range scans): token-aware routing then picks any host. */
bool bench_model_last_token(const bench_model *m, int64_t *token);

/* Partition picture helpers (gen.c).  Updates are applied in batches; the
 * summary applies what is pending first, so read m->parts only after it. */
typedef struct bench_part_summary {
    size_t count;
    uint64_t rows_p50, rows_p99, rows_max;
    uint64_t bytes_p50, bytes_p99, bytes_max;
    uint64_t total_ops;
    part_stat *top; int n_top;  /* hottest by ops, then by smaller key hash */
    uint8_t **top_key; uint32_t *top_key_len;   /* their serialized keys (owned) */
} bench_part_summary;
void bench_model_summary(bench_model *m, int top_n, bench_part_summary *out);
void bench_part_summary_destroy(bench_part_summary *s);

#endif
