/*
 * cql/prefetch.c: hints from the request loop about the requests to come.
 *
 * The loop sees a connection's buffered EXECUTEs before it runs them
 * (server/conn.c).  When a statement has a point memo (naming its whole
 * partition key by `=`, exec_int.h cql_stmt_memo) made under the current
 * catalog version, its partition key is composed from the bound values,
 * and storage is asked to start loading what the requests will touch
 * first, for all of them together: the SELECTs' lookups
 * (st_prefetch_reads), the INSERT/UPDATE/DELETEs' memtable paths
 * (st_prefetch_writes).  Nothing is decoded for real and nothing is
 * checked: a wrong or stale hint only loads memory nobody reads.
 */
#include "cql/exec_int.h"
#include "cql/cql_int.h"
#include "common/buf.h"
#include "storage/storage.h"

#include <string.h>

/* The table and partition key of prepared statement id bound to vals
 * when it is a point SELECT, INSERT, UPDATE or DELETE with a current
 * memo: 1 with *write set, and *key borrowed from vals (one key column)
 * or appended to b (composite; *key NULL, then the key is b's bytes from
 * *off), else 0. */
static int hint_key(cql_ctx *ctx, const uint8_t *id, size_t idlen, const cql_value *vals, int n_vals,
                    bool *write, st_table **st, const uint8_t **key, uint32_t *len, cs_buf *b,
                    size_t *off)
{
    cql_prepared *ps = cql__prepared_find(ctx, id, idlen);
    if (!ps || !ps->stmt)
        return 0;
    int kind = ps->stmt->kind;
    *write = kind == STMT_INSERT || kind == STMT_UPDATE || kind == STMT_DELETE;
    if (!*write && kind != STMT_SELECT)
        return 0;
    const cql_stmt_memo *m = cql__stmt_memo_current(ctx, ps->stmt);   /* m->t alive */
    if (!m || !m->point)
        return 0;
    const sch_table *t = m->t;
    if (!t->st || t->n_pk < 1 || t->n_pk > CQL_PREFETCH_VALUES)
        return 0;
    cql_value pk[CQL_PREFETCH_VALUES];
    int found = 0;
    for (int i = m->n_ops; i < m->n_ops + m->n_keys; i++) {
        const cql_keyterm *k = &m->items[i];
        if (k->col->kind != COL_PARTITION_KEY || !k->term || k->term->kind != TERM_BIND)
            continue;
        int bi = k->term->bind.index, pos = k->col->position;
        if (bi < 0 || bi >= n_vals || vals[bi].len < 0 || pos < 0 || pos >= t->n_pk)
            return 0;
        pk[pos] = vals[bi];
        found++;
    }
    if (found != t->n_pk)
        return 0;
    *st = t->st;
    if (t->n_pk == 1) {
        *key = pk[0].p;
        *len = (uint32_t)pk[0].len;
        return 1;
    }
    *off = b->len;
    if (sch_partition_key(t, pk, b) != 0 || b->err)
        return 0;
    *key = NULL;
    *len = (uint32_t)(b->len - *off);
    return 1;
}

int cql_prefetch_batch(cql_ctx *ctx, const cql_prefetch_req *reqs, int n)
{
    st_table *tab[ST_PREFETCH_KEYS];
    const uint8_t *keys[ST_PREFETCH_KEYS];
    uint32_t lens[ST_PREFETCH_KEYS];
    size_t offs[ST_PREFETCH_KEYS];
    bool write[ST_PREFETCH_KEYS];
    int k = 0, hinted = 0;
    cs_buf b;
    cs_buf_init(&b);
    for (int i = 0; i < n && k < ST_PREFETCH_KEYS; i++)
        k += hint_key(ctx, reqs[i].id, reqs[i].idlen, reqs[i].vals, reqs[i].n_vals, &write[k], &tab[k],
                      &keys[k], &lens[k], &b, &offs[k]);
    for (int i = 0; i < k; i++)
        if (!keys[i])
            keys[i] = b.p + offs[i];   /* b no longer moves */
    /* one call per run of reads or of writes on one table (usually one run) */
    for (int i = 0, j; i < k; i = j) {
        for (j = i + 1; j < k && tab[j] == tab[i] && write[j] == write[i]; j++)
            ;
        if (j - i < 2)
            continue;
        if (write[i])
            st_prefetch_writes(tab[i], keys + i, lens + i, j - i);
        else
            st_prefetch_reads(tab[i], keys + i, lens + i, j - i);
        hinted += j - i;
    }
    cs_buf_destroy(&b);
    return hinted;
}
