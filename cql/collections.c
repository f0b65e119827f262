/*
 * collections.c: the cells a write produces for each column kind.
 * Owner: exec-write.  Called by exec_modify.c / exec_batch.c on the CQL
 * request thread.
 *
 * Complex-cell path conventions (shared with the read side, exec_select.c):
 *   - simple column (scalar, frozen collection, frozen UDT, tuple): one cell,
 *     empty path, value = the serialized value.
 *   - non-frozen set<T>:  path = ctype_bc_encode(T, elem, asc), value empty.
 *   - non-frozen map<K,V>: path = ctype_bc_encode(K, key, asc), value = V bytes.
 *   - non-frozen list<T>: path = ctype_bc_encode(timeuuid, id, asc) where id is
 *     a version-1 uuid made here: appends take strictly increasing times
 *     (>= now), prepends strictly decreasing times below 2010-01-01 mirrored
 *     (Cassandra's Lists.PrecisionTime trick), so path order = list order.
 *     value = element bytes.
 *   - non-frozen UDT: path = field index as u16 big-endian (2 bytes), value =
 *     field bytes; a null field has no cell.
 *   - overwriting a whole multi-cell value = st_mut_complex_delete(col, ts-1)
 *     then the new cells (Cassandra's setComplexDeletionTimePrevious);
 *     DELETE col = complex deletion at ts.
 * Decoding for reads: the element/key is ctype_bc_decode(path); list/UDT
 * readers use only the order of paths (UDT: cs_be16(path) = field index).
 */
#include <string.h>
#include "cql/modify_int.h"
#include "cql/cql_int.h"
#include "common/alloc.h"
#include "common/util.h"

/* ---------------------------------------------------------------- cells */

/* A live (or expiring, with the row's TTL) cell. */
static void put_cell(cql_wrow *w, uint32_t col, const uint8_t *path, uint32_t plen,
                     const uint8_t *v, uint32_t vlen)
{
    st_cell c;
    memset(&c, 0, sizeof c);
    c.col = col;
    c.ts_us = w->ts_us;
    if (w->ttl_s > 0) {
        c.flags = ST_CELL_EXPIRING;
        c.ttl_s = w->ttl_s;
        c.ldt_s = w->b->now_s + w->ttl_s;
    }
    c.path = path; c.path_len = plen;
    c.val = v; c.val_len = vlen;
    st_mut_cell(w->b->m, &c);
}

/* A cell tombstone at the row's timestamp. */
static void put_tomb(cql_wrow *w, uint32_t col, const uint8_t *path, uint32_t plen)
{
    st_cell c;
    memset(&c, 0, sizeof c);
    c.col = col;
    c.flags = ST_CELL_TOMBSTONE;
    c.ts_us = w->ts_us;
    c.ldt_s = w->b->now_s;
    c.path = path; c.path_len = plen;
    st_mut_cell(w->b->m, &c);
}

static void complex_delete(cql_wrow *w, uint32_t col, int64_t ts)
{
    st_deletion d = { ts, w->b->now_s };
    st_mut_complex_delete(w->b->m, col, d);
}

void cql__udt_field_path(int field, uint8_t out[2])
{
    cs_st16(out, (uint16_t)field);
}

/* ---------------------------------------------------------------- iteration */

/* Iterates a serialized list/set ([i32 n]([i32 len][bytes])*) or map (pairs). */
typedef struct coll_it { cs_rd r; int32_t n, i; } coll_it;

static int coll_open(coll_it *it, cql_value v, cs_error *e)
{
    cs_rd_init(&it->r, v.p, (size_t)v.len);
    it->i = 0;
    it->n = (int32_t)cs_rd_u32(&it->r);
    if (it->r.err || it->n < 0)
        return cs_error_set(e, CS_ERR_INVALID, "Invalid collection value (malformed)");
    return 0;
}

/* Next component; returns 1 with *out, 0 at end, <0 with e set. */
static int coll_next(coll_it *it, cql_value *out, cs_error *e)
{
    const uint8_t *p = NULL;
    int32_t n = cs_rd_bytes(&it->r, &p);
    if (it->r.err || n < -1)
        return cs_error_set(e, CS_ERR_INVALID, "Invalid collection value (malformed)");
    out->p = p; out->len = n;
    return 1;
}

static int bc_path(const ctype *t, cql_value v, cs_buf *out, cs_error *e)
{
    cs_buf_reset(out);
    int rc = ctype_bc_encode(t, v.p, (size_t)v.len, false, out);
    if (rc < 0 || out->err)
        return cs_error_set(e, CS_ERR_INVALID, "Invalid value for collection element");
    return 0;
}

/* ---------------------------------------------------------------- list ids */

#define UUID_EPOCH_OFFSET 0x01B21DD213814000LL   /* 100ns from 1582-10-15 to 1970 */
#define LIST_REFERENCE_MS 1262304000000LL         /* 2010-01-01, Lists.PrecisionTime */

static uint8_t list_node[8];
static bool list_node_set;
static int64_t list_last_append = INT64_MIN;    /* in 100ns units since 1970 */
static int64_t list_last_prepend = INT64_MAX;

/* A version-1 uuid at t100 (100ns since 1970), bc-encoded into out. */
static int list_path(int64_t t100, cs_buf *out, cs_error *e)
{
    if (!list_node_set) {
        cs_random_bytes(list_node, sizeof list_node);
        list_node_set = true;
    }
    uint64_t t = (uint64_t)(t100 + UUID_EPOCH_OFFSET);
    uint8_t u[16];
    cs_st32(u, (uint32_t)t);
    cs_st16(u + 4, (uint16_t)(t >> 32));
    cs_st16(u + 6, (uint16_t)(((t >> 48) & 0x0FFF) | 0x1000));
    u[8] = (uint8_t)((list_node[0] & 0x3F) | 0x80);
    memcpy(u + 9, list_node + 1, 7);
    cql_value v = { u, 16 };
    return bc_path(ctype_scalar(CT_TIMEUUID), v, out, e);
}

/* n strictly increasing times for an append. */
static int64_t list_append_times(int n)
{
    int64_t now = cs_now_us() * 10;
    int64_t first = now > list_last_append ? now : list_last_append + 1;
    list_last_append = first + n - 1;
    return first;
}

/* n increasing times, all below every earlier prepend: returns the first. */
static int64_t list_prepend_times(int n)
{
    int64_t now_ms = cs_now_ms();
    int64_t base = (LIST_REFERENCE_MS - (now_ms - LIST_REFERENCE_MS)) * 10000;
    int64_t top = base < list_last_prepend ? base : list_last_prepend - 1;
    int64_t first = top - (n - 1);
    list_last_prepend = first;
    return first;
}

/* ---------------------------------------------------------------- whole values */

static int null_elem(cs_error *e)
{
    return cs_error_set(e, CS_ERR_INVALID, "null is not supported inside collections");
}

/* Guardrail items_per_collection on the elements a write adds (Lists,
 * Sets and Maps: a setter's or an appender's, not counting those already
 * there). */
static int items_guard(cql_wrow *w, const sch_column *c, int32_t n, cs_error *e)
{
    cql_ctx *ctx = w->b->ctx;
    return cql__guard_max(ctx, w->b->session, w->b->result, CQL_GUARD_ITEMS_PER_COLLECTION, n, c->name, e);
}

/* Guardrail collection_size on the cells a write adds, as Cassandra's
 * Cell.dataSize: 16 bytes of timestamp, TTL and deletion time plus the
 * value and the path (a list cell's is a 16-byte time UUID, a set's the
 * element, a map's the key). */
#define CELL_META_BYTES 16
static int size_guard(cql_wrow *w, const sch_column *c, long long bytes, cs_error *e)
{
    cql_ctx *ctx = w->b->ctx;
    return cql__guard_max(ctx, w->b->session, w->b->result, CQL_GUARD_COLLECTION_SIZE, bytes, c->name, e);
}

/* Add every element of a serialized collection value (set add, map put,
 * list append/prepend) as cells.  prepend: list ids below existing ones. */
static int add_elements(cql_wrow *w, const sch_column *c, cql_value v, bool prepend, cs_error *e)
{
    const ctype *t = c->type;
    coll_it it;
    cql_value a = { NULL, 0 }, b = { NULL, 0 };
    cs_buf path;
    int rc;
    if ((rc = coll_open(&it, v, e)) < 0)
        return rc;
    if (!prepend && it.n > 0 && items_guard(w, c, it.n, e))
        return CS_EUSER;
    long long bytes = 0;   /* collection_size: checked once every cell is made, as Cassandra */
    cs_buf_init(&path);
    int64_t t100 = 0;
    if (t->kind == CT_LIST)
        t100 = prepend ? list_prepend_times(it.n > 0 ? it.n : 1) : list_append_times(it.n > 0 ? it.n : 1);
    for (it.i = 0; it.i < it.n; it.i++) {
        if ((rc = coll_next(&it, &a, e)) < 0)
            goto out;
        if (a.len < 0) { rc = null_elem(e); goto out; }
        switch (t->kind) {
        case CT_SET:
            if ((rc = bc_path(t->sub[0], a, &path, e)) < 0)
                goto out;
            put_cell(w, c->id, path.p, (uint32_t)path.len, NULL, 0);
            bytes += CELL_META_BYTES + a.len;
            break;
        case CT_MAP:
            if ((rc = coll_next(&it, &b, e)) < 0)
                goto out;
            if (b.len < 0) { rc = null_elem(e); goto out; }
            if ((rc = bc_path(t->sub[0], a, &path, e)) < 0)
                goto out;
            put_cell(w, c->id, path.p, (uint32_t)path.len, b.p, (uint32_t)b.len);
            bytes += CELL_META_BYTES + a.len + b.len;
            break;
        case CT_LIST:
            if ((rc = list_path(t100 + it.i, &path, e)) < 0)
                goto out;
            put_cell(w, c->id, path.p, (uint32_t)path.len, a.p, (uint32_t)a.len);
            bytes += CELL_META_BYTES + 16 + a.len;
            break;
        default:
            rc = cs_error_set(e, CS_ERR_SERVER, "not a collection column %s", c->name);
            goto out;
        }
    }
    rc = !prepend && it.n > 0 && size_guard(w, c, bytes, e) ? CS_EUSER : 0;
out:
    cs_buf_destroy(&path);
    return rc;
}

/* Fields of a serialized UDT value as cells (null fields: none). */
static int add_udt_fields(cql_wrow *w, const sch_column *c, cql_value v, cs_error *e)
{
    cs_rd r;
    cs_rd_init(&r, v.p, (size_t)v.len);
    for (int i = 0; i < c->type->n_sub && cs_rd_left(&r) > 0; i++) {
        const uint8_t *p = NULL;
        int32_t n = cs_rd_bytes(&r, &p);
        if (r.err || n < -1)
            return cs_error_set(e, CS_ERR_INVALID, "Invalid user type value (malformed)");
        if (n < 0)
            continue;
        uint8_t path[2];
        cql__udt_field_path(i, path);
        put_cell(w, c->id, path, 2, p, (uint32_t)n);
    }
    return 0;
}

int cql__w_set_value(cql_wrow *w, const sch_column *c, cql_value v, cs_error *e)
{
    if (v.len == CQL_UNSET)
        return 0;
    if (!ctype_is_multicell(c->type)) {
        bool coll = c->type->kind == CT_LIST || c->type->kind == CT_SET || c->type->kind == CT_MAP;
        if (coll && v.len >= 4 && items_guard(w, c, (int32_t)cs_be32(v.p), e))   /* a frozen collection: its elements */
            return CS_EUSER;
        if (v.len < 0)
            put_tomb(w, c->id, NULL, 0);
        else if (c->type->kind == CT_SET || c->type->kind == CT_MAP) {
            /* A bound frozen set/map may come unsorted: store it the way
             * Cassandra re-serializes it (sorted, deduplicated). */
            cs_buf nb;
            cs_buf_init(&nb);
            int rc = ctype_coll_normalize(c->type, v.p, (size_t)v.len, &nb);
            if (rc == 0)
                put_cell(w, c->id, NULL, 0, nb.p, (uint32_t)nb.len);
            long long bytes = CELL_META_BYTES + (long long)nb.len;
            cs_buf_destroy(&nb);
            if (rc < 0)
                return cs_error_set(e, CS_ERR_INVALID, "Invalid value for column %s", c->name);
            if (size_guard(w, c, bytes, e))
                return CS_EUSER;
        } else {
            put_cell(w, c->id, NULL, 0, v.p, (uint32_t)v.len);
            if (coll && v.len >= 0 && size_guard(w, c, CELL_META_BYTES + (long long)v.len, e))
                return CS_EUSER;
        }
        return 0;
    }
    complex_delete(w, c->id, w->ts_us - 1);
    if (v.len < 0)
        return 0;
    if (c->type->kind == CT_UDT)
        return add_udt_fields(w, c, v, e);
    return add_elements(w, c, v, false, e);
}

int cql__w_coll_add(cql_wrow *w, const sch_column *c, cql_value v, cs_error *e)
{
    if (v.len < 0)   /* null/unset: nothing to add */
        return 0;
    return add_elements(w, c, v, false, e);
}

int cql__w_list_prepend(cql_wrow *w, const sch_column *c, cql_value v, cs_error *e)
{
    if (v.len < 0)
        return 0;
    return add_elements(w, c, v, true, e);
}

/* ---------------------------------------------------------------- removals */

/* Existing cells of complex column c in the current row (read-before-write). */
static int read_cells(cql_wrow *w, const sch_column *c, cql_rowcopy *rc, int *first, int *count)
{
    int r = cql__read_row(w->t, w->pk, w->pk_len, w->ck, w->ck_len, w->is_static, w->b->now_s, rc);
    if (r < 0)
        return r;
    *first = 0; *count = 0;
    for (int i = 0; i < rc->n_cells; i++) {
        if (rc->cells[i].col != c->id)
            continue;
        if (*count == 0)
            *first = i;
        (*count)++;
    }
    return 0;
}

static int path_cmp(const st_cell *a, const st_cell *b)
{
    int o = memcmp(a->path, b->path, a->path_len < b->path_len ? a->path_len : b->path_len);
    return o ? o : (a->path_len > b->path_len) - (a->path_len < b->path_len);
}

/* Merge the row's own pending op into the view v (n cells, sorted by path;
 * room for one more).  Bytes are copied to the arena: the mutation's buffer
 * moves as the caller writes. */
static int view_apply(cql_wrow *w, const sch_column *c, const st_mut_op *op, st_cell *v, int *n)
{
    if (op->kind == ST_MOP_ROWDEL || (op->kind == ST_MOP_CDEL && op->col == c->id)) {
        int m = 0;
        for (int i = 0; i < *n; i++)
            if (v[i].ts_us > op->d.ts_us)
                v[m++] = v[i];
        *n = m;
        return 0;
    }
    if (op->kind != ST_MOP_CELL || op->cell.col != c->id)
        return 0;
    st_cell nc = op->cell;
    nc.path = cs_arena_memdup(&w->b->arena, nc.path_len ? nc.path : (const uint8_t *)"", nc.path_len + 1);
    nc.val = cs_arena_memdup(&w->b->arena, nc.val_len ? nc.val : (const uint8_t *)"", nc.val_len + 1);
    if (!nc.path || !nc.val)
        return CS_ENOMEM;
    int i = 0;
    while (i < *n && path_cmp(&v[i], &nc) < 0)
        i++;
    if (i < *n && path_cmp(&v[i], &nc) == 0) {
        v[i] = *st_cell_reconcile(&v[i], &nc);
        return 0;
    }
    memmove(&v[i + 1], &v[i], sizeof(st_cell) * (size_t)(*n - i));
    v[i] = nc;
    (*n)++;
    return 0;
}

/* The list c as this row's operation sees it: the stored cells with the
 * statement's earlier operations on the row merged in, as Cassandra's
 * UpdateParameters.getPrefetchedRow merges the pending row, so that
 * `DELETE l[2], l[2]` removes two elements and `SET l = l + [x], l[3] = y`
 * can reach the appended one.  *out (arena, sorted by path, live cells
 * only) borrows from rc, which the caller frees after use. */
static int list_view(cql_wrow *w, const sch_column *c, cql_rowcopy *rc, st_cell **out, int *count, cs_error *e)
{
    int first, n;
    int r = read_cells(w, c, rc, &first, &n);
    if (r < 0)
        return cs_error_set(e, CS_ERR_SERVER, "read failed: %s", cs_strerror(r));
    const st_mutation *m = w->b->m;
    size_t end = st_mutation_len(m), pos = w->mut_start;
    st_mut_op op;
    int extra = 0;
    while (st_mutation_next_op(m, &pos, end, &op) == 1)
        extra += op.kind == ST_MOP_CELL && op.cell.col == c->id;
    st_cell *v = cs_arena_alloc(&w->b->arena, sizeof(st_cell) * (size_t)(n + extra + 1));
    if (!v)
        return cs_error_set(e, CS_ERR_SERVER, "out of memory");
    if (n)                           /* no stored cells: rc->cells may be NULL */
        memcpy(v, rc->cells + first, sizeof(st_cell) * (size_t)n);
    pos = w->mut_start;
    while ((r = st_mutation_next_op(m, &pos, end, &op)) == 1) {
        if (op.kind == ST_MOP_ROW || op.kind == ST_MOP_PARTITION)
            break;   /* only this row's own ops */
        if (view_apply(w, c, &op, v, &n) < 0)
            return cs_error_set(e, CS_ERR_SERVER, "out of memory");
    }
    if (r < 0)
        return cs_error_set(e, CS_ERR_SERVER, "read failed: %s", cs_strerror(r));
    int live = 0;
    for (int i = 0; i < n; i++)
        if (!(v[i].flags & ST_CELL_TOMBSTONE))
            v[live++] = v[i];
    *out = v;
    *count = live;
    return 0;
}

/* List discard: delete every existing element equal to one of v's. */
static int list_discard(cql_wrow *w, const sch_column *c, cql_value v, cs_error *e)
{
    cql_rowcopy rc;
    st_cell *cells;
    int count, r;
    if ((r = list_view(w, c, &rc, &cells, &count, e)) < 0) {
        cql__rowcopy_free(&rc);
        return r;
    }
    for (int i = 0; i < count; i++) {
        const st_cell *cell = &cells[i];
        coll_it it;
        cql_value a = { NULL, 0 };
        if ((r = coll_open(&it, v, e)) < 0)
            break;
        for (it.i = 0; it.i < it.n; it.i++) {
            if ((r = coll_next(&it, &a, e)) < 0)
                break;
            if (a.len < 0) { r = null_elem(e); break; }
            if (ctype_compare(c->type->sub[0], cell->val, cell->val_len, a.p, (size_t)a.len) == 0) {
                put_tomb(w, c->id, cell->path, cell->path_len);
                break;
            }
        }
        if (r < 0)
            break;
    }
    cql__rowcopy_free(&rc);
    return r < 0 ? r : 0;
}

/* Guardrail read_before_write_list_operations (Lists' Discarder,
 * SetterByIndex and DiscarderByIndex, before their values are bound). */
static int list_rbw_guard(cql_wrow *w, const char *what, cs_error *e)
{
    cql_ctx *ctx = w->b->ctx;
    return cql__guard_flag(ctx, w->b->session, ctx->cfg.guard.read_before_write_list_operations,
                           "read_before_write_list_operations", what, e);
}

int cql__w_coll_sub(cql_wrow *w, const sch_column *c, cql_value v, cs_error *e)
{
    if (c->type->kind == CT_LIST && list_rbw_guard(w, "Removal of list items requiring read before write", e))
        return CS_EUSER;
    if (v.len < 0)
        return 0;
    if (c->type->kind == CT_LIST)
        return list_discard(w, c, v, e);
    /* set: elements; map: v is a set of keys.  Either way sub[0] encodes. */
    coll_it it;
    cql_value a = { NULL, 0 };
    cs_buf path;
    int rc;
    if ((rc = coll_open(&it, v, e)) < 0)
        return rc;
    cs_buf_init(&path);
    for (it.i = 0; it.i < it.n; it.i++) {
        if ((rc = coll_next(&it, &a, e)) < 0)
            goto out;
        if (a.len < 0) { rc = null_elem(e); goto out; }
        if ((rc = bc_path(c->type->sub[0], a, &path, e)) < 0)
            goto out;
        put_tomb(w, c->id, path.p, (uint32_t)path.len);
    }
    rc = 0;
out:
    cs_buf_destroy(&path);
    return rc;
}

/* Decode a list index (an int value). */
static int list_index(cql_value key, int32_t *idx, cs_error *e)
{
    if (key.len == CQL_NULL)
        return cs_error_set(e, CS_ERR_INVALID, "Invalid null value for list index");
    if (key.len == CQL_UNSET)
        return cs_error_set(e, CS_ERR_INVALID, "Invalid unset value for list index");
    if (key.len != 4)
        return cs_error_set(e, CS_ERR_INVALID, "Invalid list index");
    *idx = (int32_t)cs_be32(key.p);
    return 0;
}

/* Set or delete list element idx (v NULL = delete). */
static int list_at(cql_wrow *w, const sch_column *c, cql_value key, const cql_value *v, cs_error *e)
{
    int32_t idx = 0;
    int rc = list_index(key, &idx, e);
    if (rc < 0)
        return rc;
    cql_rowcopy rcp;
    st_cell *cells;
    int count;
    if ((rc = list_view(w, c, &rcp, &cells, &count, e)) < 0) {
        cql__rowcopy_free(&rcp);
        return rc;
    }
    if (count == 0)
        rc = cs_error_set(e, CS_ERR_INVALID, v ? "Attempted to set an element on a list which is null"
                                               : "Attempted to delete an element from a list which is null");
    else if (idx < 0 || idx >= count)
        rc = cs_error_set(e, CS_ERR_INVALID, "List index %d out of bound, list has size %d", idx, count);
    else {
        const st_cell *cell = &cells[idx];
        if (v == NULL || v->len == CQL_NULL)
            put_tomb(w, c->id, cell->path, cell->path_len);
        else if (v->len >= 0)
            put_cell(w, c->id, cell->path, cell->path_len, v->p, (uint32_t)v->len);
        rc = 0;
    }
    cql__rowcopy_free(&rcp);
    return rc;
}

int cql__w_elem_set(cql_wrow *w, const sch_column *c, cql_value key, cql_value v, cs_error *e)
{
    if (c->type->kind == CT_LIST) {
        if (list_rbw_guard(w, "Setting of list items by index requiring read before write", e))
            return CS_EUSER;
        if (v.len == CQL_UNSET)
            return 0;
        return list_at(w, c, key, &v, e);
    }
    if (key.len == CQL_NULL)
        return cs_error_set(e, CS_ERR_INVALID, "Invalid null map key");
    if (key.len == CQL_UNSET)
        return cs_error_set(e, CS_ERR_INVALID, "Invalid unset map key");
    if (v.len == CQL_UNSET)
        return 0;
    cs_buf path;
    cs_buf_init(&path);
    int rc = bc_path(c->type->sub[0], key, &path, e);
    if (rc == 0) {
        if (v.len < 0)
            put_tomb(w, c->id, path.p, (uint32_t)path.len);
        else
            put_cell(w, c->id, path.p, (uint32_t)path.len, v.p, (uint32_t)v.len);
    }
    cs_buf_destroy(&path);
    return rc;
}

int cql__w_elem_delete(cql_wrow *w, const sch_column *c, cql_value key, cs_error *e)
{
    if (c->type->kind == CT_LIST)
        return list_rbw_guard(w, "Removal of list items by index requiring read before write", e) ? CS_EUSER
               : list_at(w, c, key, NULL, e);
    if (key.len == CQL_NULL)
        return cs_error_set(e, CS_ERR_INVALID, c->type->kind == CT_SET ? "Invalid null set element"
                                                                       : "Invalid null map key");
    if (key.len == CQL_UNSET)
        return cs_error_set(e, CS_ERR_INVALID, c->type->kind == CT_SET ? "Invalid unset set element"
                                                                       : "Invalid unset map key");
    cs_buf path;
    cs_buf_init(&path);
    int rc = bc_path(c->type->sub[0], key, &path, e);
    if (rc == 0)
        put_tomb(w, c->id, path.p, (uint32_t)path.len);
    cs_buf_destroy(&path);
    return rc;
}

int cql__w_field_set(cql_wrow *w, const sch_column *c, int field, cql_value v, cs_error *e)
{
    uint8_t path[2];
    if (v.len == CQL_UNSET)
        return 0;
    cql__udt_field_path(field, path);
    if (v.len < 0)
        put_tomb(w, c->id, path, 2);
    else
        put_cell(w, c->id, path, 2, v.p, (uint32_t)v.len);
    return 0;
}

int cql__w_field_delete(cql_wrow *w, const sch_column *c, int field, cs_error *e)
{
    uint8_t path[2];
    cql__udt_field_path(field, path);
    put_tomb(w, c->id, path, 2);
    return 0;
}

int cql__w_column_delete(cql_wrow *w, const sch_column *c, cs_error *e)
{
    if (ctype_is_multicell(c->type))
        complex_delete(w, c->id, w->ts_us);
    else
        put_tomb(w, c->id, NULL, 0);
    return 0;
}
