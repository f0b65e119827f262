/*
 * cql/prefetch.c: a hint from the request loop about the next request.
 *
 * The loop sees a connection's next EXECUTE while it runs the current one
 * (server/conn.c prefetch_next).  When that statement is a SELECT with a
 * point memo (naming its whole partition key by `=`, exec_int.h
 * cql_stmt_memo) made under the current catalog version,
 * its partition key is composed from the bound values and storage is asked
 * to start loading what a lookup of that key touches first
 * (st_prefetch_key).  Nothing is decoded for real and nothing is checked:
 * a wrong or stale hint only loads memory nobody reads.
 */
#include "cql/exec_int.h"
#include "cql/cql_int.h"
#include "common/buf.h"
#include "storage/storage.h"

#include <string.h>

void cql_prefetch_execute(cql_ctx *ctx, const uint8_t *id, size_t idlen, const cql_value *vals,
                          int n_vals)
{
    cql_prepared *ps = cql__prepared_find(ctx, id, idlen);
    /* Reads only: a write descends the memtable's tree, a chain of
     * dependent misses a hint cannot start, and reads no bloom filter. */
    if (!ps || !ps->stmt || ps->stmt->kind != STMT_SELECT)
        return;
    const cql_stmt_memo *m = cql__stmt_memo_current(ctx, ps->stmt);   /* m->t alive */
    if (!m || !m->point)
        return;
    const sch_table *t = m->t;
    if (!t->st || t->n_pk < 1 || t->n_pk > CQL_PREFETCH_VALUES)
        return;
    cql_value pk[CQL_PREFETCH_VALUES];
    int found = 0;
    for (int i = m->n_ops; i < m->n_ops + m->n_keys; i++) {
        const cql_keyterm *k = &m->items[i];
        if (k->col->kind != COL_PARTITION_KEY || !k->term || k->term->kind != TERM_BIND)
            continue;
        int b = k->term->bind.index, pos = k->col->position;
        if (b < 0 || b >= n_vals || vals[b].len < 0 || pos < 0 || pos >= t->n_pk)
            return;
        pk[pos] = vals[b];
        found++;
    }
    if (found != t->n_pk)
        return;
    if (t->n_pk == 1) {
        st_prefetch_key(t->st, pk[0].p, (uint32_t)pk[0].len);
        return;
    }
    cs_buf b;
    cs_buf_init(&b);
    if (sch_partition_key(t, pk, &b) == 0 && !b.err)
        st_prefetch_key(t->st, b.p, (uint32_t)b.len);
    cs_buf_destroy(&b);
}
