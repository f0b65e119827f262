/*
 * picture.h: the partition picture of one run (bench/picture.c): every
 * partition the server acknowledged a write or read of, with its token,
 * distinct rows, value bytes and the operations that touched it, and the
 * --top hottest with their keys.  The runner reads the summary and the
 * table (ring, size histograms) after the run.
 *
 * Only acknowledged requests count, so the picture can be set beside the
 * server's own (tablestats, tablehistograms, SELECT count(*)):
 *
 *   bench_model_build (gen.c)     fills the request's bench_pending with
 *                                 what it would add (one entry per row,
 *                                 one per partition a read names)
 *   reply is a RESULT             the runner applies it: bench_picture_ack
 *   reply is an ERROR             (refused, timed out, connection lost)
 *                                 it is not applied; the next build resets it
 *
 * A batch thus adds all its rows or none.  The tables are far bigger than
 * the caches, so acknowledged updates are queued and applied
 * BENCH_PIC_BATCH at a time, their slots prefetched first; they are applied
 * in order, so the picture is the same as applying each at once.  Keys are
 * not kept (only the hottest partitions keep theirs), and a partition's
 * token is computed when it is first seen.
 *
 * Single-threaded: the runner's loop owns the picture and the pending
 * records.
 */
#ifndef CS_BENCH_PICTURE_H
#define CS_BENCH_PICTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/buf.h"

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

enum { BENCH_PIC_OP = 1, BENCH_PIC_ROW = 2 };   /* what an update adds */

typedef struct bench_pic_ent {  /* one update (32 bytes) */
    uint64_t h;                 /* partition key hash */
    uint64_t row_h;             /* (partition, clustering) hash, BENCH_PIC_ROW */
    uint32_t bytes;             /* the row's value bytes, BENCH_PIC_ROW (a row travels in one
                                   frame, whose length is 32 bits) */
    uint32_t key_off, key_len;  /* the serialized key in its owner's keys buffer */
    uint32_t what;              /* BENCH_PIC_OP | BENCH_PIC_ROW */
} bench_pic_ent;

#define BENCH_PIC_BATCH 32

typedef struct bench_picture {
    part_stat *parts; size_t parts_cap, n_parts;   /* open addressing by hash (0: empty slot) */
    uint64_t *rowset; size_t rowset_cap, n_rowset; /* hashes of the (partition, clustering) rows */
    bool one_row_per_part;      /* no clustering columns: a partition's row is new iff rows == 0 */
    /* the top_n hottest partitions, kept as operations come (ops only grow,
     * so this is exact) because the table does not keep keys */
    int top_n;                  /* set before the run; default 10 */
    part_hot *hot; int n_hot;
    bench_pic_ent queue[BENCH_PIC_BATCH]; int n_queue;   /* updates not applied yet */
    cs_buf keys;                /* their keys */
} bench_picture;

/* What one request adds to the picture once the server acknowledges it.
 * 32 bytes per row of the op, and the partition key once per run of rows
 * of one partition: less than the request's message, which holds the same
 * key and more in every statement.  The memory is kept for the next op
 * built into it (no allocation per request once warm). */
typedef struct bench_pending {
    bench_pic_ent *ents; uint32_t n, cap;
    cs_buf keys;                /* the serialized keys ents point into */
} bench_pending;

void bench_pending_init(bench_pending *pd);
void bench_pending_destroy(bench_pending *pd);
/* Empty pd, keeping its memory. */
static inline void bench_pending_reset(bench_pending *pd)
{
    pd->n = 0;
    cs_buf_reset(&pd->keys);
}
/* Record an operation on partition (h, key) (BENCH_PIC_OP) and/or a row
 * written (BENCH_PIC_ROW: row_h, bytes); key is copied.  Out of memory,
 * the entry is left out. */
void bench_pending_add(bench_pending *pd, uint64_t h, const uint8_t *key, uint32_t key_len, uint32_t what,
                       uint64_t row_h, uint64_t bytes);

/* An empty picture keeping the 10 hottest, rows told apart by their
 * clustering (set one_row_per_part for a table without clustering columns). */
void bench_picture_init(bench_picture *pic);
void bench_picture_destroy(bench_picture *pic);
/* Size the partition table for n partitions at once (a doubling of a
 * million partitions mid-run stalls the loop for ~100 ms). */
void bench_picture_reserve(bench_picture *pic, size_t n);
/* The request pd was built for was acknowledged: add what it holds (pd is
 * only read; the caller still owns it). */
void bench_picture_ack(bench_picture *pic, const bench_pending *pd);
/* Apply what is queued: read pic->parts only after this (the summary
 * calls it). */
void bench_picture_flush(bench_picture *pic);

typedef struct bench_part_summary {
    size_t count;               /* partitions with at least one row */
    uint64_t rows_total;        /* their distinct rows */
    uint64_t rows_p50, rows_p99, rows_max;
    uint64_t bytes_p50, bytes_p99, bytes_max;
    uint64_t total_ops;
    part_stat *top; int n_top;  /* hottest by ops, then by smaller key hash */
    uint8_t **top_key; uint32_t *top_key_len;   /* their serialized keys (owned) */
} bench_part_summary;
/* The summary of pic (flushed first), with at most top_n hottest
 * partitions; free with bench_part_summary_destroy. */
void bench_picture_summary(bench_picture *pic, int top_n, bench_part_summary *out);
void bench_part_summary_destroy(bench_part_summary *s);

#endif
