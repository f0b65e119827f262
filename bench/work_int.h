/*
 * work_int.h: what the workload model's own files (gen.c, token_range.c)
 * share inside bench/; the rest of the bench uses work.h.
 */
#ifndef CS_BENCH_WORK_INT_H
#define CS_BENCH_WORK_INT_H

#include "bench/work.h"

/* The CQL of a token range query over m's table: the partition key's
 * token, then columns ('*': every column, key columns first), WHERE the
 * token is in (?, ?].  Caller frees. */
char *bench__token_range_cql(bench_model *m, const char *columns);
/* Build the EXECUTE of one page of token range query qi into msg (as
 * bench_model_build); sets m->last_cursor. */
void bench__token_range_build(bench_model *m, int qi, cs_buf *msg, uint8_t *opcode, size_t *flags_off);
/* qsort_r orders of column indexes (arg: the bench_col array): by the
 * column's position in its key, by name. */
int bench__col_by_position(const void *a, const void *b, void *arg);
int bench__col_by_name(const void *a, const void *b, void *arg);
/* Free the ranges and cursors (bench_model_destroy). */
void bench__token_range_destroy(bench_model *m);

#endif
