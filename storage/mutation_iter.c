/*
 * mutation_iter.c: reading a built st_mutation back, op by op (additive
 * public API in storage.h: st_mutation_len, st_mutation_next_op).
 * Written by the index/view engineer (issue 5) so that cql/index_maint.c
 * can derive index entries and view rows from a write group without
 * looking at storage internals.  Pure decoding of the op stream
 * (st__op_next); no state, thread-safe as long as m is not modified.
 */
#include "storage/storage_int.h"

#include <string.h>

size_t st_mutation_len(const st_mutation *m)
{
    return m ? m->ops.len : 0;
}

int st_mutation_next_op(const st_mutation *m, size_t *pos, size_t end, st_mut_op *out)
{
    if (!m || m->err)
        return m ? m->err : CS_EINVAL;
    if (end > m->ops.len)
        end = m->ops.len;
    if (*pos >= end)
        return 0;
    cs_rd r;
    cs_rd_init(&r, m->ops.p, end);
    r.pos = *pos;
    st__op op;
    memset(&op, 0, sizeof op);   /* the fields of other kinds read as zero */
    int rc = st__op_next(&r, &op);
    if (rc <= 0)
        return rc < 0 ? rc : 0;
    *pos = r.pos;
    out->kind = op.kind;
    out->table_id = op.id;
    out->pk = op.pk; out->pk_len = op.pk_len;
    out->d = op.d;
    out->start = (st_bound){ op.rt.start, op.rt.start_len, op.rt.start_incl };
    out->end = (st_bound){ op.rt.end, op.rt.end_len, op.rt.end_incl };
    if (op.kind == ST__OP_RT)
        out->d = op.rt.d;
    out->ck = op.ck; out->ck_len = op.ck_len;
    out->row_flags = op.rflags;
    out->lv = op.lv;
    out->col = op.col;
    out->cell = op.cell;
    return 1;
}
