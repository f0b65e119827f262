/*
 * batch_size.c: the batch size that Cassandra's batch thresholds measure.
 * Owner: exec-write.  Caller: exec_batch.c (batch_thresholds), on the CQL
 * request thread, only for batches of more than one mutation: a single
 * statement or a single-partition batch never comes here.
 *
 * BatchStatement.verifyBatchSize compares IMutation.dataSize(mutations) with
 * batch_size_warn_threshold and batch_size_fail_threshold.  The mutations are
 * what its updates collector built: one PartitionUpdate per table and
 * partition key, in which the rows several statements write at one
 * clustering are one row (Rows.merge: the cells of one column and path
 * reconciled, only the winner kept; what the row deletion or a complex
 * deletion shadows dropped).  PartitionUpdate.dataSize() adds up, in
 * Cassandra 4.1 (BTreeRow, LivenessInfo, Row.Deletion, AbstractCell,
 * ComplexColumnData, MutableDeletionInfo, RangeTombstoneList):
 *
 *   partition update  Σ rows + the static row + the deletion info
 *   row               clustering: Σ of its component values' bytes
 *                     + liveness: 8 (its timestamp, counted even when the
 *                       row has none); 16 when expiring (ttl, expiry time)
 *                     + row deletion: 13 (DeletionTime's 12 + 1), even live
 *                     + Σ simple cells + Σ complex columns
 *   static row        the same without clustering: 21 when empty
 *   cell              16 (timestamp 8, ttl 4, local deletion time 4)
 *                     + value bytes + path bytes
 *   complex column    12 (its deletion, even live) + Σ cells
 *   deletion info     8 (the partition deletion's timestamp, even live)
 *                     + with range tombstones: 4 + Σ (bounds' bytes + 12)
 *
 * Partition keys count nothing.  Cassette's mutation holds clustering keys
 * and cell paths in their byte-comparable form (cql/types.h); their sizes
 * here are those of the decoded values, so a list element's path is its
 * 16-byte timeuuid and a UDT field's its 2-byte index.  Counter deltas are
 * still pending (counter.c) when the thresholds are checked, as Cassandra's
 * are: it counts them as counter update cells, whose value
 * (CounterContext.createUpdate: a 2-byte header count, one 2-byte header
 * entry, one local shard of id 16 + clock 8 + count 8) is 36 bytes.  Index
 * entries and view rows join the mutation only at commit, after the check:
 * Cassandra does not count them either.
 *
 * How: every row-level fact and every cell of the mutation's op stream (and
 * every pending counter delta) becomes an atom keyed by (partition, static,
 * clustering, column, path).  Sorting them brings each merged row, column
 * and cell together, and each group is resolved the way the merge resolves
 * it.  Range tombstones are inserted, in statement order, into a list kept
 * normalized the way RangeTombstoneList keeps it (an overlap is split and
 * the later deletion wins it), since its pieces are what Cassandra counts.
 */
#include <stdlib.h>
#include <string.h>
#include "cql/modify_int.h"
#include "common/util.h"
#include "common/alloc.h"

/* Cassandra's dataSize() constants (see the table above). */
#define CELL_BYTES               16
#define LIVENESS_BYTES           8
#define EXPIRING_LIVENESS_BYTES  16
#define ROW_DELETION_BYTES       13
#define COMPLEX_DELETION_BYTES   12
#define PARTITION_DELETION_BYTES 8
#define EMPTY_STATIC_ROW_BYTES   (LIVENESS_BYTES + ROW_DELETION_BYTES)
#define RT_LIST_BYTES            4
#define RT_BYTES                 12        /* markedAt 8 + local deletion time 4 */
#define COUNTER_UPDATE_BYTES     36
#define LIST_PATH_BYTES          16

/* Atom kinds; the row-level ones sort before the column data. */
enum { A_LIVENESS, A_ROWDEL, A_CDEL, A_CELL };

typedef struct atom {
    uint32_t part;                 /* index in b->parts */
    uint32_t seq;                  /* position in the op stream */
    uint8_t kind;                  /* A_* */
    bool is_static;
    bool counter;                  /* a pending counter delta: value COUNTER_UPDATE_BYTES */
    const uint8_t *ck; uint32_t ck_len;   /* borrowed from b->m or b->ctrs */
    st_liveness lv;                /* A_LIVENESS */
    st_deletion d;                 /* A_ROWDEL, A_CDEL */
    st_cell cell;                  /* A_CELL; col also for A_CDEL */
} atom;

/* A clustering bound of a range tombstone.  inf: -1 before every
 * clustering (an unbounded start), +1 after every one (an unbounded end),
 * 0 the byte-comparable key (which already sorts a bound among the
 * clusterings: restrict_keys.c). */
typedef struct bound {
    const uint8_t *key; uint32_t len;
    int inf;
    int64_t bytes;                 /* Σ of its values' bytes */
} bound;

typedef struct rt_rec {            /* one range tombstone of the stream */
    uint32_t part, seq;
    bound s, e;
    st_deletion d;
} rt_rec;

typedef struct rt_piece { bound s, e; st_deletion d; } rt_piece;

typedef struct sizer {
    const cql_wbatch *b;
    atom *atoms; size_t n_atoms, cap_atoms;
    rt_rec *rts; size_t n_rts, cap_rts;
    rt_piece *list; int n_list, cap_list;  /* one partition's range tombstones */
    cs_buf tmp;                            /* decoding scratch */
} sizer;

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 64;
    while (nc < need)
        nc *= 2;
    void *n = cs_realloc(*p, nc * elem);
    if (!n)
        return CS_ENOMEM;
    *p = n;
    *cap = nc;
    return 0;
}

/* ---------------------------------------------------------------- value sizes */

/* Σ of the value bytes of the components of clustering prefix ck (a full
 * clustering, or a bound's prefix, perhaps followed by CK_AFTER):
 * ClusteringPrefix.dataSize(). */
static int64_t ck_bytes(sizer *z, const sch_table *t, const uint8_t *ck, uint32_t n)
{
    cs_rd r;
    cs_rd_init(&r, ck, n);
    int64_t total = 0;
    for (int i = 0; i < t->n_ck && cs_rd_left(&r) > 0 && r.p[r.pos] == CK_COMPONENT; i++) {
        r.pos++;
        cs_buf_reset(&z->tmp);
        int rc = ctype_bc_decode(t->ck[i]->type, &r, t->ck[i]->desc, &z->tmp);
        if (z->tmp.err)
            return CS_ENOMEM;
        if (rc || r.err)
            return CS_ECORRUPT;
        total += (int64_t)z->tmp.len;
    }
    return total;
}

/* CellPath.dataSize() of a complex cell: the set element, the map key, the
 * list element's timeuuid, the UDT field's 2-byte index. */
static int64_t path_bytes(sizer *z, const sch_column *c, const st_cell *cell)
{
    if (cell->path_len == 0)
        return 0;
    const ctype *kt;
    switch (c ? c->type->kind : CT_UDT) {
    case CT_LIST: kt = ctype_scalar(CT_TIMEUUID); break;
    case CT_SET: case CT_MAP: kt = c->type->sub[0]; break;
    default: return cell->path_len;
    }
    cs_rd r;
    cs_rd_init(&r, cell->path, cell->path_len);
    cs_buf_reset(&z->tmp);
    int rc = ctype_bc_decode(kt, &r, false, &z->tmp);
    if (z->tmp.err)
        return CS_ENOMEM;
    if (rc || r.err)
        return CS_ECORRUPT;
    return (int64_t)z->tmp.len;
}

static const sch_column *column_of(const sch_table *t, uint32_t id)
{
    for (int i = 0; i < t->n_cols; i++)
        if (t->cols[i].id == id)
            return &t->cols[i];
    return NULL;
}

/* ---------------------------------------------------------------- reconciliation */


/* Cells.reconcile (4.1) of two regular cells, l the earlier: the later
 * timestamp; on a tie a tombstone or an expiring cell beats a plain live one
 * (CASSANDRA-14592), a tombstone beats an expiring one, then the later local
 * deletion time, then the greater value (l on equality). */
static const st_cell *cell_winner(const st_cell *l, const st_cell *r)
{
    if (l->ts_us != r->ts_us)
        return l->ts_us > r->ts_us ? l : r;
    bool lt = l->flags & ST_CELL_TOMBSTONE, rt = r->flags & ST_CELL_TOMBSTONE;
    bool ld = lt || (l->flags & ST_CELL_EXPIRING), rd = rt || (r->flags & ST_CELL_EXPIRING);
    if (ld != rd)
        return ld ? l : r;
    if (ld) {
        if (lt != rt)
            return lt ? l : r;
        if (l->ldt_s != r->ldt_s)
            return l->ldt_s > r->ldt_s ? l : r;
    }
    return cs_bytes_cmp(l->val, l->val_len, r->val, r->val_len) >= 0 ? l : r;
}

/* The merged cell of n atoms at one column and path: its timestamp and its
 * value's bytes.  A tombstone beats counter updates whatever the timestamps
 * (Cells.resolveCounter, CASSANDRA-7346); counter updates merge into one
 * (one local shard: the same 36 bytes) at the latest timestamp. */
static void merged_cell(const atom *v, int n, int64_t *ts, int64_t *val_bytes)
{
    const st_cell *w = NULL;
    bool counter = false;
    int64_t cts = INT64_MIN;
    for (int i = 0; i < n; i++) {
        if (v[i].counter) {
            counter = true;
            if (v[i].cell.ts_us > cts)
                cts = v[i].cell.ts_us;
        } else
            w = w ? cell_winner(w, &v[i].cell) : &v[i].cell;
    }
    if (counter && !(w && (w->flags & ST_CELL_TOMBSTONE))) {
        *ts = w && w->ts_us > cts ? w->ts_us : cts;
        *val_bytes = COUNTER_UPDATE_BYTES;
        return;
    }
    *ts = w->ts_us;
    *val_bytes = w->val_len;
}

/* ---------------------------------------------------------------- rows */

/* One column of a merged row (n atoms, complex deletions first, then cells
 * by path), rd its row deletion or NULL.  Rows.merge drops a cell whose
 * timestamp the row deletion or the column's complex deletion covers; a
 * complex column stays (its 12 bytes counted) while it has a cell or a
 * complex deletion that the row deletion does not supersede. */
static int64_t column_bytes(sizer *z, const sch_column *c, const atom *v, int n, const st_deletion *rd)
{
    bool complex = c ? ctype_is_multicell(c->type) : (v[0].kind == A_CDEL || v[0].cell.path_len > 0);
    int k = 0;
    bool has_cd = false;
    st_deletion cd = ST_NO_DELETION;
    for (; k < n && v[k].kind == A_CDEL; k++) {
        if (!has_cd || st_deletion_supersedes(v[k].d, cd))
            cd = v[k].d;
        has_cd = true;
    }
    int64_t cells = 0;
    int n_cells = 0;
    while (k < n) {
        int q = k + 1;
        while (q < n && !cs_bytes_cmp(v[q].cell.path, v[q].cell.path_len, v[k].cell.path, v[k].cell.path_len))
            q++;
        int64_t ts, val;
        merged_cell(v + k, q - k, &ts, &val);
        if (!(rd && ts <= rd->ts_us) && !(has_cd && ts <= cd.ts_us)) {
            int64_t p = path_bytes(z, c, &v[k].cell);
            if (p < 0)
                return p;
            cells += CELL_BYTES + val + p;
            n_cells++;
        }
        k = q;
    }
    if (!complex)
        return cells;
    bool cd_stays = has_cd && !(rd && st_deletion_supersedes(*rd, cd));
    return n_cells > 0 || cd_stays ? COMPLEX_DELETION_BYTES + cells : 0;
}

/* Row.dataSize() of the merged row of n atoms (one partition, clustering
 * and static flag). */
static int64_t row_bytes(sizer *z, const sch_table *t, const atom *v, int n)
{
    int64_t size = v[0].is_static ? 0 : ck_bytes(z, t, v[0].ck, v[0].ck_len);
    if (size < 0)
        return size;
    bool has_lv = false, has_rd = false;
    st_liveness lv = { INT64_MIN, 0, 0 };
    st_deletion rd = ST_NO_DELETION;
    int k = 0;
    for (; k < n && v[k].kind < A_CDEL; k++) {
        if (v[k].kind == A_LIVENESS) {
            if (!has_lv || st_liveness_supersedes(v[k].lv, lv))
                lv = v[k].lv;
            has_lv = true;
        } else {
            if (!has_rd || st_deletion_supersedes(v[k].d, rd))
                rd = v[k].d;
            has_rd = true;
        }
    }
    if (has_lv && has_rd && lv.ts_us <= rd.ts_us)
        has_lv = false;                /* the merge empties a liveness the deletion covers */
    size += (has_lv && lv.ttl_s > 0 ? EXPIRING_LIVENESS_BYTES : LIVENESS_BYTES) + ROW_DELETION_BYTES;
    while (k < n) {
        int q = k + 1;
        while (q < n && v[q].cell.col == v[k].cell.col)
            q++;
        int64_t s = column_bytes(z, column_of(t, v[k].cell.col), v + k, q - k, has_rd ? &rd : NULL);
        if (s < 0)
            return s;
        size += s;
        k = q;
    }
    return size;
}

/* ---------------------------------------------------------------- range tombstones */

static int bound_cmp(const bound *a, const bound *b)
{
    if (a->inf || b->inf)
        return (a->inf > b->inf) - (a->inf < b->inf);
    return cs_bytes_cmp(a->key, a->len, b->key, b->len);
}

/* Slice.isEmpty: a start and an end that compare equal are an inclusive
 * start and an exclusive end of one prefix, or the reverse: empty too. */
static bool slice_empty(const bound *s, const bound *e)
{
    return bound_cmp(s, e) >= 0;
}

static int list_put(sizer *z, int i, bound s, bound e, st_deletion d)
{
    size_t cap = (size_t)z->cap_list;
    if (grow((void **)&z->list, &cap, (size_t)z->n_list + 1, sizeof *z->list))
        return CS_ENOMEM;
    z->cap_list = (int)cap;
    memmove(&z->list[i + 1], &z->list[i], sizeof *z->list * (size_t)(z->n_list - i));
    z->list[i] = (rt_piece){ s, e, d };
    z->n_list++;
    return 0;
}

/* Add range tombstone [s, e] at d to z->list, as RangeTombstoneList.add
 * does: where it overlaps a piece with an older timestamp it replaces that
 * part of it, elsewhere the existing pieces stay and it fills the gaps.
 * (A bound "inverted" from a start into an end, or back, has the same key
 * and values in cassette's encoding, so it is the same bound here.) */
static int list_add(sizer *z, bound s, bound e, st_deletion d)
{
    rt_piece *v;
    int n = z->n_list;
    if (n == 0 || bound_cmp(&z->list[n - 1].e, &s) <= 0)
        return list_put(z, n, s, e, d);
    int i = 0;
    while (bound_cmp(&z->list[i].e, &s) <= 0)   /* the first piece ending after s */
        i++;
    while (i < z->n_list) {
        v = z->list;
        if (slice_empty(&s, &e))
            return 0;
        if (d.ts_us > v[i].d.ts_us) {
            /* the new one wins over piece i: keep what of i lies before s */
            if (bound_cmp(&v[i].s, &s) < 0 && !slice_empty(&v[i].s, &s)) {
                if (list_put(z, i, v[i].s, s, v[i].d))
                    return CS_ENOMEM;
                v = z->list;
                i++;
                v[i].s = s;
            }
            if (bound_cmp(&e, &v[i].s) < 0)
                return list_put(z, i, s, e, d);
            if (bound_cmp(&v[i].e, &e) > 0) {
                /* i goes on after e: the new piece, then i's rest */
                if (list_put(z, i, s, e, d))
                    return CS_ENOMEM;
                v = z->list;
                i++;
                if (!slice_empty(&e, &v[i].e))
                    v[i].s = e;
                return 0;
            }
            /* i wholly covered: it becomes the new one, up to the next piece */
            if (i == z->n_list - 1 || bound_cmp(&e, &v[i + 1].s) <= 0) {
                v[i] = (rt_piece){ s, e, d };
                return 0;
            }
            v[i] = (rt_piece){ s, v[i + 1].s, d };
            s = v[i + 1].s;
            i++;
        } else {
            /* piece i stays: the new one only fills what lies before it */
            if (bound_cmp(&s, &v[i].s) < 0) {
                if (bound_cmp(&e, &v[i].s) <= 0)
                    return list_put(z, i, s, e, d);
                if (!slice_empty(&s, &v[i].s)) {
                    if (list_put(z, i, s, v[i].s, d))
                        return CS_ENOMEM;
                    i++;
                }
            }
            v = z->list;
            if (bound_cmp(&e, &v[i].e) <= 0)
                return 0;
            s = v[i].e;
            i++;
        }
    }
    return list_put(z, i, s, e, d);
}

static int rt_cmp(const void *x, const void *y)
{
    const rt_rec *a = x, *b = y;
    if (a->part != b->part)
        return a->part < b->part ? -1 : 1;
    return (a->seq > b->seq) - (a->seq < b->seq);
}

/* MutableDeletionInfo's range tombstones of each partition that has some. */
static int64_t rts_bytes(sizer *z)
{
    if (z->n_rts == 0)
        return 0;
    qsort(z->rts, z->n_rts, sizeof *z->rts, rt_cmp);
    int64_t total = 0;
    for (size_t i = 0; i < z->n_rts;) {
        size_t j = i;
        z->n_list = 0;
        for (; j < z->n_rts && z->rts[j].part == z->rts[i].part; j++)
            if (list_add(z, z->rts[j].s, z->rts[j].e, z->rts[j].d))
                return CS_ENOMEM;
        total += RT_LIST_BYTES;
        for (int k = 0; k < z->n_list; k++)
            total += z->list[k].s.bytes + z->list[k].e.bytes + RT_BYTES;
        i = j;
    }
    return total;
}

/* ---------------------------------------------------------------- collection */

static int part_of(const cql_wbatch *b, const uint8_t *table_id, const uint8_t *pk, uint32_t pk_len, int hint)
{
    for (int n = 0; n < b->n_parts; n++) {
        int i = (hint + 1 + n) % b->n_parts;   /* the next one first: partitions come in order */
        const cql_wpart *p = &b->parts[i];
        if (p->pk_len == pk_len && !memcmp(p->t->id, table_id, 16) &&
            (pk_len == 0 || !memcmp(p->pk, pk, pk_len)))
            return i;
    }
    return -1;
}

static atom *new_atom(sizer *z, uint32_t part, bool is_static, const uint8_t *ck, uint32_t ck_len, int kind)
{
    if (grow((void **)&z->atoms, &z->cap_atoms, z->n_atoms + 1, sizeof *z->atoms))
        return NULL;
    atom *a = &z->atoms[z->n_atoms];
    memset(a, 0, sizeof *a);
    a->part = part;
    a->seq = (uint32_t)z->n_atoms++;
    a->kind = (uint8_t)kind;
    a->is_static = is_static;
    a->ck = ck;
    a->ck_len = ck_len;
    return a;
}

static bound to_bound(sizer *z, const sch_table *t, st_bound sb, bool start, int64_t *bytes_rc)
{
    bound r = { sb.key, sb.len, sb.len == 0 ? (start ? -1 : 1) : 0, 0 };
    r.bytes = sb.len ? ck_bytes(z, t, sb.key, sb.len) : 0;
    if (r.bytes < 0)
        *bytes_rc = r.bytes;
    return r;
}

/* Atoms and range tombstones from the op stream, then the counter deltas. */
static int collect(sizer *z)
{
    const cql_wbatch *b = z->b;
    size_t pos = 0, end = st_mutation_len(b->m);
    st_mut_op op;
    int rc, part = -1;
    bool in_row = false, is_static = false;
    const uint8_t *ck = NULL;
    uint32_t ck_len = 0;
    while ((rc = st_mutation_next_op(b->m, &pos, end, &op)) == 1) {
        if (op.kind == ST_MOP_PARTITION) {
            part = part_of(b, op.table_id, op.pk, op.pk_len, part);
            if (part < 0)
                return CS_ECORRUPT;        /* every partition went through cql__wbatch_partition */
            in_row = false;
            continue;
        }
        if (part < 0)
            return CS_ECORRUPT;
        atom *a = NULL;
        switch (op.kind) {
        case ST_MOP_PDEL:                  /* counted whether or not there is one */
            break;
        case ST_MOP_RT: {
            if (grow((void **)&z->rts, &z->cap_rts, z->n_rts + 1, sizeof *z->rts))
                return CS_ENOMEM;
            const sch_table *t = b->parts[part].t;
            int64_t brc = 0;
            rt_rec *r = &z->rts[z->n_rts];
            r->part = (uint32_t)part;
            r->seq = (uint32_t)z->n_rts++;
            r->s = to_bound(z, t, op.start, true, &brc);
            r->e = to_bound(z, t, op.end, false, &brc);
            r->d = op.d;
            if (brc < 0)
                return (int)brc;
            break;
        }
        case ST_MOP_ROW:
            in_row = true;
            is_static = op.row_flags & ST_ROW_STATIC;
            ck = op.ck;
            ck_len = op.ck_len;
            break;
        case ST_MOP_LIVENESS:
        case ST_MOP_ROWDEL:
        case ST_MOP_CDEL:
        case ST_MOP_CELL:
            if (!in_row)
                return CS_ECORRUPT;
            a = new_atom(z, (uint32_t)part, is_static, ck, ck_len,
                         op.kind == ST_MOP_LIVENESS ? A_LIVENESS : op.kind == ST_MOP_ROWDEL ? A_ROWDEL
                         : op.kind == ST_MOP_CDEL ? A_CDEL : A_CELL);
            if (!a)
                return CS_ENOMEM;
            a->lv = op.lv;
            a->d = op.d;
            if (op.kind == ST_MOP_CELL)
                a->cell = op.cell;
            else
                a->cell.col = op.col;
            break;
        default:
            return CS_ECORRUPT;
        }
    }
    if (rc < 0)
        return rc;
    for (int i = 0; i < b->n_ctrs; i++) {
        const cql_wcounter *k = &b->ctrs[i];
        int p = -1;
        for (int j = 0; j < b->n_parts && p < 0; j++)
            if (b->parts[j].t == k->t && b->parts[j].pk_len == k->pk_len &&
                (k->pk_len == 0 || !memcmp(b->parts[j].pk, k->pk, k->pk_len)))
                p = j;
        if (p < 0)
            return CS_ECORRUPT;
        atom *a = new_atom(z, (uint32_t)p, k->is_static, k->ck, k->ck_len, A_CELL);
        if (!a)
            return CS_ENOMEM;
        a->counter = true;
        a->cell.col = k->col;
        a->cell.ts_us = k->ts_us;
    }
    return 0;
}

/* Order: partition, static, clustering, row-level facts first, then by
 * column (complex deletions before cells) and path, then stream order. */
static int atom_cmp(const void *x, const void *y)
{
    const atom *a = x, *b = y;
    if (a->part != b->part)
        return a->part < b->part ? -1 : 1;
    if (a->is_static != b->is_static)
        return a->is_static ? -1 : 1;
    int c = cs_bytes_cmp(a->ck, a->ck_len, b->ck, b->ck_len);
    if (c)
        return c;
    bool ar = a->kind < A_CDEL, br = b->kind < A_CDEL;
    if (ar != br)
        return ar ? -1 : 1;
    if (!ar) {
        if (a->cell.col != b->cell.col)
            return a->cell.col < b->cell.col ? -1 : 1;
        if (a->kind != b->kind)
            return a->kind < b->kind ? -1 : 1;
        if ((c = cs_bytes_cmp(a->cell.path, a->cell.path_len, b->cell.path, b->cell.path_len)))
            return c;
    }
    return (a->seq > b->seq) - (a->seq < b->seq);
}

static bool same_row(const atom *a, const atom *b)
{
    return a->part == b->part && a->is_static == b->is_static && !cs_bytes_cmp(a->ck, a->ck_len, b->ck, b->ck_len);
}

static int64_t measure(sizer *z)
{
    int rc = collect(z);
    if (rc < 0)
        return rc;
    /* every partition update: its deletion info and its static row, whether
     * or not the batch wrote either */
    int64_t total = (int64_t)z->b->n_parts * (PARTITION_DELETION_BYTES + EMPTY_STATIC_ROW_BYTES);
    if (z->n_atoms)
        qsort(z->atoms, z->n_atoms, sizeof *z->atoms, atom_cmp);
    for (size_t i = 0; i < z->n_atoms;) {
        size_t j = i + 1;
        while (j < z->n_atoms && same_row(&z->atoms[i], &z->atoms[j]))
            j++;
        int64_t s = row_bytes(z, z->b->parts[z->atoms[i].part].t, z->atoms + i, (int)(j - i));
        if (s < 0)
            return s;
        total += s - (z->atoms[i].is_static ? EMPTY_STATIC_ROW_BYTES : 0);   /* counted above */
        i = j;
    }
    int64_t r = rts_bytes(z);
    return r < 0 ? r : total + r;
}

int64_t cql__wbatch_data_size(const cql_wbatch *b)
{
    sizer z;
    memset(&z, 0, sizeof z);
    z.b = b;
    cs_buf_init(&z.tmp);
    int64_t size = measure(&z);
    cs_free(z.atoms);
    cs_free(z.rts);
    cs_free(z.list);
    cs_buf_destroy(&z.tmp);
    return size;
}
