/*
 * lwt_trace.c: the trace of a conditional write or a SERIAL read as
 * Cassandra 4.1's coordinator writes it with the default paxos_variant v1
 * (StorageProxy.legacyCas / beginAndRepairPaxos / doPaxos, PaxosState's
 * legacy prepare, propose and commit).  Owner: exec-write.  Thread: the
 * request loop.
 *
 * cassette runs no Paxos rounds (one replica, requests on one loop: the
 * read, the check and the write of a conditional update are already
 * atomic), so the lines describe the round the single Cassandra node
 * would run: a ballot (a timeuuid), prepared and promised, the CAS read,
 * the proposal accepted and, when it is not empty, committed.  The
 * entities are printed in Cassandra's toString forms: a proposal as
 * "Accepted(<ballot 100 ns time>:<ballot>, <update min timestamp>:key=<k>
 * \n    Row: <clustering> | <col>=<value>...)" (PartitionUpdate
 * .toString(false)), the current values as a FilteredPartition
 * ("[ks.t] key=... partition_deletion=... columns=[[statics] | [regulars]]"
 * and its rows in full detail).
 */
#include "cql/modify_int.h"
#include "cql/cql_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"

static void bprintf(cs_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bprintf(cs_buf *b, const char *fmt, ...)
{
    char tmp[256];
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < sizeof tmp) {
        cs_buf_put(b, tmp, (size_t)n);
    } else if (n >= 0) {
        uint8_t *d = cs_buf_extend(b, (size_t)n + 1);
        if (d) {
            vsnprintf((char *)d, (size_t)n + 1, fmt, ap2);
            b->len--;   /* drop the terminator */
        }
    }
    va_end(ap2);
}

/* EncodingStats.NO_STATS: an empty update's minimum timestamp (2015-09-22). */
#define NO_STATS_TS 1442880000000000LL

static const sch_column *col_by_id(const sch_table *t, uint32_t id)
{
    for (int i = 0; i < t->n_cols; i++)
        if (t->cols[i].id == id)
            return &t->cols[i];
    return NULL;
}

/* AbstractType.getString: the value's text, unquoted (text as is, blobs as
 * hex without 0x). */
static void value_string(const ctype *t, const uint8_t *v, size_t n, cs_buf *out)
{
    if (t->kind == CT_VARCHAR || t->kind == CT_ASCII) {
        cs_buf_put(out, v, n);
        return;
    }
    cs_buf tmp;
    cs_buf_init(&tmp);
    if (ctype_format_cql(t, v, n, &tmp) != 0 || tmp.err) {
        for (size_t i = 0; i < n; i++)
            bprintf(out, "%02x", v[i]);
    } else if (tmp.len >= 2 && tmp.p[0] == '\'' && tmp.p[tmp.len - 1] == '\'') {
        cs_buf_put(out, tmp.p + 1, tmp.len - 2);
    } else if (t->kind == CT_BLOB && tmp.len >= 2 && tmp.p[0] == '0' && tmp.p[1] == 'x') {
        cs_buf_put(out, tmp.p + 2, tmp.len - 2);
    } else {
        cs_buf_put(out, tmp.p, tmp.len);
    }
    cs_buf_destroy(&tmp);
}

/* A complex cell's path as its key's text (a list's path is its timeuuid). */
static void path_string(const sch_column *c, const st_cell *cell, cs_buf *out)
{
    const ctype *t = c->type;
    if (t->kind == CT_UDT && cell->path_len == 2) {
        int f = cs_be16(cell->path);
        if (f < t->n_sub && t->field_names)
            bprintf(out, "%s", t->field_names[f]);
        return;
    }
    if ((t->kind == CT_MAP || t->kind == CT_SET) && t->n_sub >= 1) {
        cs_buf tmp;
        cs_buf_init(&tmp);
        cs_rd r;
        cs_rd_init(&r, cell->path, cell->path_len);
        if (ctype_bc_decode(t->sub[0], &r, false, &tmp) == 0 && !tmp.err) {
            value_string(t->sub[0], tmp.p, tmp.len, out);
            cs_buf_destroy(&tmp);
            return;
        }
        cs_buf_destroy(&tmp);
    }
    if (cell->path_len == 16) {
        cs_uuid u;
        memcpy(u.b, cell->path, 16);
        char s[37];
        cs_uuid_format(&u, s);
        bprintf(out, "%s", s);
        return;
    }
    for (uint32_t i = 0; i < cell->path_len; i++)
        bprintf(out, "%02x", cell->path[i]);
}

/* A complex cell's value type. */
static const ctype *elem_type(const sch_column *c, const st_cell *cell)
{
    const ctype *t = c->type;
    if (t->kind == CT_MAP && t->n_sub == 2)
        return t->sub[1];
    if (t->kind == CT_LIST && t->n_sub >= 1)
        return t->sub[0];
    if (t->kind == CT_UDT && cell->path_len == 2 && cs_be16(cell->path) < t->n_sub)
        return t->sub[cs_be16(cell->path)];
    return NULL;   /* a set's cells have no value */
}

/* Clustering.toString(metadata): "c=1, d=x"; EMPTY without clustering
 * columns; STATIC for the static row. */
static void clustering_string(const sch_table *t, const uint8_t *ck, uint32_t ck_len, bool is_static, cs_buf *out)
{
    if (is_static) {
        bprintf(out, "STATIC");
        return;
    }
    if (t->n_ck == 0) {
        bprintf(out, "EMPTY");
        return;
    }
    cs_buf store;
    cs_buf_init(&store);
    size_t off[64];
    int32_t len[64];
    if (t->n_ck > 64 || sch_clustering_decode(t, ck, ck_len, &store, off, len) != 0) {
        cs_buf_destroy(&store);
        return;
    }
    for (int i = 0; i < t->n_ck; i++) {
        bprintf(out, "%s%s=", i ? ", " : "", t->ck[i]->name);
        if (len[i] < 0)
            bprintf(out, "null");
        else
            value_string(t->ck[i]->type, store.p + off[i], (size_t)len[i], out);
    }
    cs_buf_destroy(&store);
}

/* ColumnMetadata order within a row: simple columns, then complex ones,
 * each by name. */
static int col_order(const void *a, const void *b)
{
    const sch_column *x = *(const sch_column *const *)a, *y = *(const sch_column *const *)b;
    bool cx = ctype_is_multicell(x->type), cy = ctype_is_multicell(y->type);
    if (cx != cy)
        return cx ? 1 : -1;
    return strcmp(x->name, y->name);
}

/* The columns of cells[0..n), in row order (at most 256). */
static int row_columns(const sch_table *t, const st_cell *cells, int n, const sch_column **cols)
{
    int k = 0;
    for (int i = 0; i < n && k < 256; i++) {
        const sch_column *c = col_by_id(t, cells[i].col);
        if (!c)
            continue;
        bool seen = false;
        for (int j = 0; j < k && !seen; j++)
            seen = cols[j] == c;
        if (!seen)
            cols[k++] = c;
    }
    qsort(cols, (size_t)k, sizeof *cols, col_order);
    return k;
}

/* Row.toString(metadata, false): "Row: <clustering> | a=1, m={k -> v}". */
static void row_brief(const sch_table *t, const uint8_t *ck, uint32_t ck_len, bool is_static,
                      const st_cell *cells, int n, cs_buf *out)
{
    bprintf(out, "\n    Row: ");
    clustering_string(t, ck, ck_len, is_static, out);
    bprintf(out, " | ");
    const sch_column *cols[256];
    int k = row_columns(t, cells, n, cols);
    for (int j = 0; j < k; j++) {
        const sch_column *c = cols[j];
        bprintf(out, "%s%s=", j ? ", " : "", c->name);
        if (!ctype_is_multicell(c->type)) {
            for (int i = n - 1; i >= 0; i--)
                if (cells[i].col == c->id) {
                    if (cells[i].flags & ST_CELL_TOMBSTONE)
                        bprintf(out, "<tombstone>");
                    else
                        value_string(c->type, cells[i].val, cells[i].val_len, out);
                    break;
                }
            continue;
        }
        bprintf(out, "{");
        bool first = true;
        for (int i = 0; i < n; i++) {
            if (cells[i].col != c->id || (cells[i].flags & ST_CELL_TOMBSTONE))
                continue;
            bprintf(out, "%s", first ? "" : ", ");
            first = false;
            path_string(c, &cells[i], out);
            bprintf(out, " -> ");
            const ctype *et = elem_type(c, &cells[i]);
            if (et)
                value_string(et, cells[i].val, cells[i].val_len, out);
        }
        bprintf(out, "}");
    }
}

/* AbstractCell.toString: "[v=1 ts=5]", "[m[k]=v ts=5]", "[v=<tombstone> ts=5 ldt=9]". */
static void cell_full(const sch_column *c, const st_cell *cell, cs_buf *out)
{
    if (cell->flags & ST_CELL_COUNTER) {
        bprintf(out, "[%s=%lld ts=%lld]", c->name,
                      cell->val_len == 8 ? (long long)(int64_t)cs_be64(cell->val) : 0LL, (long long)cell->ts_us);
        return;
    }
    bprintf(out, "[%s", c->name);
    if (ctype_is_multicell(c->type)) {
        bprintf(out, "[");
        path_string(c, cell, out);
        bprintf(out, "]");
    }
    bprintf(out, "=");
    if (cell->flags & ST_CELL_TOMBSTONE) {
        bprintf(out, "<tombstone>");
    } else {
        const ctype *vt = ctype_is_multicell(c->type) ? elem_type(c, cell) : c->type;
        if (vt)
            value_string(vt, cell->val, cell->val_len, out);
    }
    if (cell->flags & ST_CELL_EXPIRING)
        bprintf(out, " ts=%lld ttl=%d ldt=%d]", (long long)cell->ts_us, cell->ttl_s, cell->ldt_s);
    else if (cell->flags & ST_CELL_TOMBSTONE)
        bprintf(out, " ts=%lld ldt=%d]", (long long)cell->ts_us, cell->ldt_s);
    else
        bprintf(out, " ts=%lld]", (long long)cell->ts_us);
}

/* Row.toString(metadata, true): "Row[info=[ts=5] ]: c=1 | [v=1 ts=5]", with
 * only the cells of the columns the CAS read fetched. */
static void row_full(const sch_table *t, const cql_rowcopy *rc, const uint8_t *ck, uint32_t ck_len,
                     bool is_static, const bool *fetched, cs_buf *out)
{
    const st_liveness *l = &rc->liveness;
    if (l->ttl_s > 0)
        bprintf(out, "\n    Row[info=[ts=%lld ttl=%d, let=%d] ]: ", (long long)l->ts_us, l->ttl_s, l->ldt_s);
    else
        bprintf(out, "\n    Row[info=[ts=%lld] ]: ", (long long)l->ts_us);
    clustering_string(t, ck, ck_len, is_static, out);
    bprintf(out, " | ");
    const sch_column *cols[256];
    int k = row_columns(t, rc->cells, rc->n_cells, cols);
    bool first = true;
    for (int j = 0; j < k; j++) {
        const sch_column *c = cols[j];
        if (!fetched[c - t->cols])
            continue;
        bprintf(out, "%s", first ? "" : ", ");
        first = false;
        for (int i = 0; i < rc->n_cells; i++) {
            if (rc->cells[i].col != c->id)
                continue;
            if (ctype_is_multicell(c->type))   /* ComplexColumnData: each cell after ", " */
                bprintf(out, ", ");
            cell_full(c, &rc->cells[i], out);
            if (!ctype_is_multicell(c->type))
                break;
        }
    }
}

static bool on(const cql_paxos_trace *pt)
{
    return pt && pt->on;
}

void cql__paxos_trace_begin(cql_paxos_trace *pt, const sch_table *t, const uint8_t *pk, uint32_t pk_len)
{
    memset(pt, 0, sizeof *pt);
    if (!cql__tracing())
        return;
    pt->on = true;
    pt->t = t;
    pt->pk = pk;
    pt->pk_len = pk_len;
    pt->ballot_us = cs_now_us();
    cs_uuid u;
    cs_uuid_timeuuid(&u, pt->ballot_us);
    cs_uuid_format(&u, pt->ballot);
    /* TimeUUID.uuidTimestamp: the 60-bit time field, 100 ns since 1582 */
    pt->ballot_time = (int64_t)((((uint64_t)u.b[6] & 0x0f) << 56) | ((uint64_t)u.b[7] << 48) |
                                ((uint64_t)u.b[4] << 40) | ((uint64_t)u.b[5] << 32) |
                                ((uint64_t)u.b[0] << 24) | ((uint64_t)u.b[1] << 16) |
                                ((uint64_t)u.b[2] << 8) | (uint64_t)u.b[3]);
    cql__trace(CQL_TRACE_NTR, "Preparing %s", pt->ballot);
    cql__trace(CQL_TRACE_MUTATION, "Promising ballot %s", pt->ballot);
}

void cql__paxos_trace_read_begin(cql_paxos_trace *pt)
{
    if (!on(pt))
        return;
    cql__trace(CQL_TRACE_NTR, "Reading existing values for CAS precondition");
    cql__trace(CQL_TRACE_READ, "Executing single-partition query on %s", pt->t->name);
    cql__trace(CQL_TRACE_READ, "Acquiring sstable references");
    cql__wread_stats_reset();
}

void cql__paxos_trace_read_end(cql_paxos_trace *pt, bool by_names, int live_rows)
{
    if (!on(pt))
        return;
    const cql_wread_stats *s = cql__wread_stats();
    if (by_names) {
        cql__trace(CQL_TRACE_READ, "Merging memtable contents");
    } else {   /* the sstables whose key range holds the key (View.select), none skipped by a whole-partition slice */
        int64_t tok = cs_murmur3_token(pt->pk, pt->pk_len);
        int n = pt->t->st && tok != INT64_MIN ? st_table_sstables_in_range(pt->t->st, tok - 1, tok) : 0;
        cql__trace(CQL_TRACE_READ, "Skipped 0/%d non-slice-intersecting sstables, included 0 due to tombstones", n);
        cql__trace(CQL_TRACE_READ, "Merged data from memtables and %llu sstables", (unsigned long long)s->sstables);
    }
    cql__trace(CQL_TRACE_READ, "Read %d live rows and %llu tombstone cells", live_rows,
               (unsigned long long)s->tombstones);
}

void cql__paxos_trace_mismatch(cql_paxos_trace *pt, const bool *fetched, const cql_rowcopy *stat,
                               const cql_rowcopy *const *regs, const uint8_t *const *cks,
                               const uint32_t *ck_lens, int n_regs)
{
    if (!on(pt))
        return;
    const sch_table *t = pt->t;
    cs_buf b;
    cs_buf_init(&b);
    bprintf(&b, "[%s.%s] key=", t->ks->name, t->name);
    sch_partition_key_text(t, pt->pk, pt->pk_len, &b);
    bprintf(&b, " partition_deletion=deletedAt=-9223372036854775808, localDeletion=2147483647 columns=[[");
    bool first = true;
    const sch_column *cols[256];
    int k = 0;
    for (int i = 0; i < t->n_cols && k < 256; i++)
        if (fetched[i] && (t->cols[i].kind == COL_STATIC || t->cols[i].kind == COL_REGULAR))
            cols[k++] = &t->cols[i];
    qsort(cols, (size_t)k, sizeof *cols, col_order);
    for (int i = 0; i < k; i++)
        if (cols[i]->kind == COL_STATIC) {
            bprintf(&b, "%s%s", first ? "" : " ", cols[i]->name);
            first = false;
        }
    bprintf(&b, "] | [");
    first = true;
    for (int i = 0; i < k; i++)
        if (cols[i]->kind == COL_REGULAR) {
            bprintf(&b, "%s%s", first ? "" : " ", cols[i]->name);
            first = false;
        }
    bprintf(&b, "]]");
    bool stat_fetched = false;   /* a static row without fetched columns is empty: not shown */
    for (int i = 0; stat && i < stat->n_cells && !stat_fetched; i++) {
        const sch_column *c = col_by_id(t, stat->cells[i].col);
        stat_fetched = c && fetched[c - t->cols];
    }
    if (stat && stat->exists && stat_fetched)
        row_full(t, stat, NULL, 0, true, fetched, &b);
    for (int i = 0; i < n_regs; i++)
        if (regs[i]->exists)
            row_full(t, regs[i], cks[i], ck_lens[i], false, fetched, &b);
    cql__trace(CQL_TRACE_NTR, "CAS precondition does not match current values %.*s", (int)b.len,
               b.p ? (const char *)b.p : "");
    cs_buf_destroy(&b);
}

/* "<kind>(<ballot time>:<ballot>, <min ts>:key=<k>[rows])" of the update m
 * (NULL: empty) for pt's partition. */
static void commit_string(const cql_paxos_trace *pt, const char *kind, const st_mutation *m, cs_buf *out)
{
    const sch_table *t = pt->t;
    int64_t min_ts = INT64_MAX;
    size_t pos = 0, end = m ? st_mutation_len(m) : 0;
    st_mut_op op;
    while (m && st_mutation_next_op(m, &pos, end, &op) == 1) {
        int64_t ts = op.kind == ST_MOP_CELL ? op.cell.ts_us : op.kind == ST_MOP_LIVENESS ? op.lv.ts_us
                   : (op.kind == ST_MOP_PDEL || op.kind == ST_MOP_RT || op.kind == ST_MOP_ROWDEL ||
                      op.kind == ST_MOP_CDEL) ? op.d.ts_us : INT64_MAX;
        if (ts != INT64_MIN && ts < min_ts)
            min_ts = ts;
    }
    bprintf(out, "%s(%lld:%s, %lld:key=", kind, (long long)pt->ballot_time, pt->ballot,
                  (long long)(min_ts == INT64_MAX ? NO_STATS_TS : min_ts));
    sch_partition_key_text(t, pt->pk, pt->pk_len, out);
    /* rows: the ops after each ROW, up to the next ROW or PARTITION */
    pos = 0;
    const uint8_t *ck = NULL;
    uint32_t ck_len = 0;
    bool in_row = false, is_static = false;
    st_cell cells[256];
    int n = 0;
    for (;;) {
        int rc = m ? st_mutation_next_op(m, &pos, end, &op) : 0;
        if (rc != 1 || op.kind == ST_MOP_ROW || op.kind == ST_MOP_PARTITION) {
            if (in_row)
                row_brief(t, ck, ck_len, is_static, cells, n, out);
            in_row = false;
            n = 0;
            if (rc != 1)
                break;
            if (op.kind == ST_MOP_ROW) {
                in_row = true;
                ck = op.ck;
                ck_len = op.ck_len;
                is_static = (op.row_flags & ST_ROW_STATIC) != 0;
            }
            continue;
        }
        if (in_row && op.kind == ST_MOP_CELL && n < 256)
            cells[n++] = op.cell;
    }
    bprintf(out, ")");
}

void cql__paxos_trace_propose(cql_paxos_trace *pt, const st_mutation *m)
{
    if (!on(pt))
        return;
    cql__trace(CQL_TRACE_NTR, "CAS precondition is met; proposing client-requested updates for %s", pt->ballot);
    cs_buf b;
    cs_buf_init(&b);
    commit_string(pt, "Accepted", m, &b);
    cql__trace(CQL_TRACE_MUTATION, "Accepting proposal %.*s", (int)b.len, b.p ? (const char *)b.p : "");
    cs_buf_destroy(&b);
}

void cql__paxos_trace_commit(cql_paxos_trace *pt, const st_mutation *m)
{
    if (!on(pt))
        return;
    cs_buf b;
    cs_buf_init(&b);
    commit_string(pt, "Committed", m, &b);
    cql__trace(CQL_TRACE_MUTATION, "Committing proposal %.*s", (int)b.len, b.p ? (const char *)b.p : "");
    cs_buf_destroy(&b);
}

void cql__paxos_trace_end(cql_paxos_trace *pt, bool applied)
{
    if (!on(pt))
        return;
    cql__trace(CQL_TRACE_NTR, applied ? "CAS applied successfully" : "CAS did not apply");
}
