/*
 * token_range.c: cassandra-stress's token_range_queries (TokenRangeQuery.java,
 * TokenRangeIterator.java).  Each op reads one page of one token range of
 * the ring: the ranges between the ring's tokens as the drivers list them,
 * unwrapped, walked in token order and round again (stress's -tokenrange
 * wrap).  A cursor holds a range being read and the paging state of its
 * next page; an op takes a cursor whose next page is due, else an idle one
 * on the next range, so with C ops in flight C ranges are read at once, as
 * stress's threads each read their own.  The runner hands each answer back
 * (bench_model_cursor_done).
 *
 * Called from gen.c (bench_model_init, bench_model_build) and the runner;
 * single-threaded (the runner's loop).
 */
#include "bench/work_int.h"
#include "common/alloc.h"
#include "server/frame.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct bench_cursor {   /* a token range being read, one page per op */
    int range;                  /* index into tr_lo/tr_hi */
    uint8_t *ps; int32_t ps_len;/* paging state of the next page (0: the range's first) */
    bool busy;                  /* a page is in flight */
    bool more;                  /* the next page is due (ps set) */
} bench_cursor;

/* A token range query, as stress's TokenRangeQuery builds it: the token of
 * the partition key, then the columns ('*': every column, key columns
 * first), over one range, (? , ?].  Caller frees. */
char *bench__token_range_cql(bench_model *m, const char *columns)
{
    cs_buf s, tok;
    cs_buf_init(&s);
    cs_buf_init(&tok);
    cs_buf_put(&tok, "token(", 6);
    for (int pos = 0, n = 0; pos < m->n_pk; pos++)
        for (int i = 0; i < m->n_cols; i++)
            if (m->cols[i].kind == 0 && m->cols[i].position == pos) {
                if (n++) cs_buf_put(&tok, ", ", 2);
                cs_buf_put(&tok, "\"", 1);
                cs_buf_put(&tok, m->cols[i].name, strlen(m->cols[i].name));
                cs_buf_put(&tok, "\"", 1);
            }
    cs_buf_put(&tok, ")", 1);
    cs_buf_put(&s, "SELECT ", 7);
    cs_buf_put(&s, tok.p, tok.len);
    cs_buf_put(&s, ", ", 2);
    if (!strcmp(columns, "*")) {
        /* the key columns in key order, then the others by name, as the driver lists them */
        int n = 0;
        for (int kind = 0; kind < 3; kind++) {
            int *order = cs_calloc((size_t)m->n_cols + 1, sizeof(int)), k = 0;
            for (int i = 0; i < m->n_cols; i++)
                if ((kind < 2 ? m->cols[i].kind == kind : m->cols[i].kind >= 2))
                    order[k++] = i;
            qsort_r(order, (size_t)k, sizeof(int), kind < 2 ? bench__col_by_position : bench__col_by_name, m->cols);
            for (int j = 0; j < k; j++) {
                if (n++) cs_buf_put(&s, ", ", 2);
                cs_buf_put(&s, "\"", 1);
                cs_buf_put(&s, m->cols[order[j]].name, strlen(m->cols[order[j]].name));
                cs_buf_put(&s, "\"", 1);
            }
            cs_free(order);
        }
    } else {
        cs_buf_put(&s, columns, strlen(columns));
    }
    char tmp[512];
    snprintf(tmp, sizeof(tmp), " FROM \"%s\".\"%s\" WHERE ", m->p->keyspace, m->p->table);
    cs_buf_put(&s, tmp, strlen(tmp));
    cs_buf_put(&s, tok.p, tok.len);
    cs_buf_put(&s, " > ? AND ", 9);
    cs_buf_put(&s, tok.p, tok.len);
    cs_buf_put(&s, " <= ?", 5);
    cs_buf_put_u8(&s, 0);
    char *out = cs_strdup(s.err ? "" : (const char *)s.p);
    cs_buf_destroy(&s);
    cs_buf_destroy(&tok);
    return out;
}

void bench_model_set_ring(bench_model *m, const int64_t *tokens, int n)
{
    cs_free(m->tr_lo);
    cs_free(m->tr_hi);
    m->tr_lo = cs_calloc((size_t)n + 2, sizeof(int64_t));
    m->tr_hi = cs_calloc((size_t)n + 2, sizeof(int64_t));
    m->n_ranges = 0;
    /* (MIN, t0], (t0, t1], ..., (t_last, MAX]: the wrapping range unwrapped
     * (no key has the minimum token) */
    int64_t lo = INT64_MIN;
    for (int i = 0; i <= n; i++) {
        int64_t hi = i < n ? tokens[i] : INT64_MAX;
        if (hi > lo) {
            m->tr_lo[m->n_ranges] = lo;
            m->tr_hi[m->n_ranges++] = hi;
            lo = hi;
        }
    }
}

/* A cursor for the next token range op: one whose next page is due, else
 * an idle one (or a new one) on the next range, wrapping around the ring
 * (stress's -tokenrange wrap). */
static int take_cursor(bench_model *m)
{
    int idle = -1;
    for (int i = 0; i < m->n_cursors; i++) {
        if (m->cursors[i].busy)
            continue;
        if (m->cursors[i].more) {
            m->cursors[i].busy = true;
            return i;
        }
        if (idle < 0)
            idle = i;
    }
    if (idle < 0) {
        m->cursors = cs_realloc(m->cursors, sizeof(bench_cursor) * (size_t)(m->n_cursors + 1));
        idle = m->n_cursors++;
        memset(&m->cursors[idle], 0, sizeof(bench_cursor));
    }
    bench_cursor *c = &m->cursors[idle];
    c->range = (int)(m->next_range++ % (uint64_t)m->n_ranges);
    c->ps_len = 0;
    c->more = false;
    c->busy = true;
    return idle;
}

void bench_model_cursor_done(bench_model *m, int cursor, bool ok, const uint8_t *ps, int32_t ps_len)
{
    if (cursor < 0 || cursor >= m->n_cursors)
        return;
    bench_cursor *c = &m->cursors[cursor];
    c->busy = false;
    c->more = ok && ps && ps_len > 0;
    if (c->more) {
        c->ps = cs_realloc(c->ps, (size_t)ps_len);
        memcpy(c->ps, ps, (size_t)ps_len);
        c->ps_len = ps_len;
    }
}

/* One page of a token range: EXECUTE with the range's bounds, the page
 * size and, after the first page, the paging state. */
void bench__token_range_build(bench_model *m, int qi, cs_buf *msg, uint8_t *opcode, size_t *flags_off)
{
    const bench_stmt *st = &m->queries[qi];
    const bench_query *q = &m->p->queries[qi];
    int ci = take_cursor(m);
    bench_cursor *c = &m->cursors[ci];
    m->last_cursor = ci;
    *opcode = OP_EXECUTE;
    cs_buf_put_u16(msg, (uint16_t)st->idlen);
    cs_buf_put(msg, st->id, (size_t)st->idlen);
    cs_buf_put_u16(msg, 0x0001);   /* ONE */
    *flags_off = msg->len;
    cs_buf_put_u8(msg, (uint8_t)(0x01 | 0x04 | (c->more ? 0x08 : 0)));
    cs_buf_put_u16(msg, 2);
    cs_buf_put_u32(msg, 8);
    cs_buf_put_u64(msg, (uint64_t)m->tr_lo[c->range]);
    cs_buf_put_u32(msg, 8);
    cs_buf_put_u64(msg, (uint64_t)m->tr_hi[c->range]);
    cs_buf_put_u32(msg, (uint32_t)(q->page_size > 0 ? q->page_size : 5000));
    if (c->more)
        cs_buf_put_bytes(msg, c->ps, c->ps_len);
}

void bench__token_range_destroy(bench_model *m)
{
    cs_free(m->tr_lo);
    cs_free(m->tr_hi);
    for (int i = 0; i < m->n_cursors; i++)
        cs_free(m->cursors[i].ps);
    cs_free(m->cursors);
    m->tr_lo = m->tr_hi = NULL;
    m->cursors = NULL;
    m->n_cursors = m->n_ranges = 0;
}
