/*
 * counter.c: counter columns (UPDATE t SET c = c + n).  Owner: exec-write.
 *
 * Cassette has one replica and a single-threaded CQL executor, so a counter
 * is stored as its current TOTAL in a plain cell flagged ST_CELL_COUNTER
 * (value: big-endian int64).  An increment reads the current total, adds the
 * delta and writes the new total with a timestamp strictly greater than the
 * cell it read, so reconciliation (higher timestamp wins) always keeps the
 * latest total and commit log replay or compaction can never double count
 * (storage.h header comment).
 *
 * Deltas are summed per cell while a statement or COUNTER batch is built
 * (cql__counter_add) and resolved in one pass just before st_write
 * (cql__counters_apply), so `c = c + 1` twice in one batch adds 2, as
 * Cassandra's merged counter updates do.
 */
#include <string.h>
#include "cql/modify_int.h"
#include "common/alloc.h"
#include "common/util.h"

static bool same_cell(const cql_wcounter *a, const cql_wrow *w, uint32_t col)
{
    return a->t == w->t && a->col == col && a->is_static == w->is_static &&
           a->pk_len == w->pk_len && memcmp(a->pk, w->pk, w->pk_len) == 0 &&
           a->ck_len == w->ck_len && (w->ck_len == 0 || memcmp(a->ck, w->ck, w->ck_len) == 0);
}

int cql__counter_add(cql_wrow *w, const sch_column *c, int64_t delta, cs_error *e)
{
    cql_wbatch *b = w->b;
    for (int i = 0; i < b->n_ctrs; i++) {
        if (same_cell(&b->ctrs[i], w, c->id)) {
            b->ctrs[i].delta = (int64_t)((uint64_t)b->ctrs[i].delta + (uint64_t)delta);
            if (w->ts_us > b->ctrs[i].ts_us)
                b->ctrs[i].ts_us = w->ts_us;
            return 0;
        }
    }
    if (b->n_ctrs == b->cap_ctrs) {
        int nc = b->cap_ctrs ? b->cap_ctrs * 2 : 8;
        cql_wcounter *n = cs_realloc(b->ctrs, (size_t)nc * sizeof *n);
        if (!n)
            return cs_error_set(e, CS_ERR_SERVER, "out of memory");
        b->ctrs = n;
        b->cap_ctrs = nc;
    }
    cql_wcounter *k = &b->ctrs[b->n_ctrs];
    k->t = w->t;
    k->pk = cs_arena_memdup(&b->arena, w->pk, w->pk_len ? w->pk_len : 1);
    k->pk_len = w->pk_len;
    k->ck = w->ck_len ? cs_arena_memdup(&b->arena, w->ck, w->ck_len) : NULL;
    k->ck_len = w->ck_len;
    k->is_static = w->is_static;
    k->col = c->id;
    k->delta = delta;
    k->ts_us = w->ts_us;
    if (!k->pk || (w->ck_len && !k->ck))
        return cs_error_set(e, CS_ERR_SERVER, "out of memory");
    b->n_ctrs++;
    return 0;
}

/* Current total and timestamp of one counter cell (0 / INT64_MIN if none).
 * *deleted: the cell's latest version is a tombstone.  As in Cassandra
 * (Conflicts.resolveCounter, CASSANDRA-7346) a counter cell tombstone takes
 * precedence over any later increment, so a deleted counter stays deleted
 * until compaction purges the tombstone. */
static int current_total(cql_wbatch *b, const cql_wcounter *k, int64_t *total, int64_t *ts,
                         bool *deleted)
{
    cql_rowcopy rc;
    int r = cql__read_row_ex(k->t, k->pk, k->pk_len, k->ck, k->ck_len, k->is_static, b->now_s,
                             true, &rc);
    *total = 0;
    *ts = INT64_MIN;
    *deleted = false;
    if (r >= 0) {
        for (int i = 0; i < rc.n_cells; i++) {
            const st_cell *c = &rc.cells[i];
            if (c->col != k->col || c->path_len != 0)
                continue;
            if (c->flags & ST_CELL_TOMBSTONE) {
                *deleted = true;
                continue;
            }
            if (c->val_len == 8)
                *total = (int64_t)cs_be64(c->val);
            *ts = c->ts_us;
        }
    }
    cql__rowcopy_free(&rc);
    return r < 0 ? r : 0;
}

int cql__counters_apply(cql_wbatch *b, cs_error *e)
{
    for (int i = 0; i < b->n_ctrs; i++) {
        const cql_wcounter *k = &b->ctrs[i];
        int64_t total, ts;
        bool deleted;
        int r = current_total(b, k, &total, &ts, &deleted);
        if (r < 0)
            return cs_error_set(e, CS_ERR_SERVER, "counter read failed: %s", cs_strerror(r));
        if (deleted)
            continue;
        int64_t now = cs_write_ts_us();
        int64_t nts = (ts != INT64_MIN && now <= ts) ? ts + 1 : now;
        uint8_t v[8];
        cs_st64(v, (uint64_t)total + (uint64_t)k->delta);
        if (cql__wbatch_partition(b, k->t, k->pk, k->pk_len) < 0)
            return cs_error_set(e, CS_ERR_SERVER, "out of memory");
        st_mut_row(b->m, k->ck, k->ck_len, k->is_static ? ST_ROW_STATIC : 0);
        st_cell c;
        memset(&c, 0, sizeof c);
        c.col = k->col;
        c.flags = ST_CELL_COUNTER;
        c.ts_us = nts;
        c.val = v;
        c.val_len = 8;
        st_mut_cell(b->m, &c);
    }
    b->n_ctrs = 0;
    return 0;
}
