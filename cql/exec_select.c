/*
 * exec_select.c: SELECT execution, output side.  Owner: exec-read.
 * Caller: exec.c.  Storage side in select_scan.c, selection in
 * select_sel.c, WHERE analysis in restrict*.c, paging state in paging.c.
 *
 *   cql__exec_select
 *     -> resolve table, compile selection, analyse WHERE, evaluate LIMIT /
 *        PER PARTITION LIMIT, check GROUP BY / DISTINCT / ORDER BY
 *     -> scan (select_scan.c): partition keys, token range or virtual table
 *     -> cql__select_emit per row: PER PARTITION LIMIT, aggregation or
 *        grouping, selection, paging, LIMIT
 *     -> Rows result with paging state when the page is full and another
 *        row qualifies (so a full last page carries no state).
 *
 * Page boundaries: a page ends after page_size rows, or early once it has
 * scanned its tombstone budget (select_scan.c); the state records the
 * last returned row (partition key + clustering key) and the counts used by
 * LIMIT and PER PARTITION LIMIT, so the next page resumes right after it.
 * GROUP BY pages count groups; aggregates without GROUP BY return one row; ORDER BY with IN
 * over several partitions sorts in memory and refuses paging (Cassandra).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cql/select_int.h"
#include "cql/index.h"   /* index hook (issue 5) */
#include "cql/metrics.h"
#include "cql/modify_int.h"   /* the SERIAL read's Paxos trace (lwt_trace.c) */
#include "common/alloc.h"
#include "common/hash.h"
#include "common/util.h"

/* ---------------------------------------------------------------- output */

/* Evaluate the selection for a row (or the aggregate results: row NULL). */
static int row_values(cql_sx *x, const xrow *row, cql_value *vals)
{
    for (int i = 0; i < x->sel.n; i++) {
        int rc = row ? cql__sel_eval(&x->ev, x->t, x->sel.sels[i], row, &vals[i], x->e)
                     : cql__sel_agg_result(&x->ev, x->t, x->sel.sels[i], &vals[i], x->e);
        if (rc)
            return rc;
    }
    return 0;
}

static int write_values(cql_sx *x, const cql_value *vals)
{
    if (x->sel.json) {
        cs_buf b;
        cs_buf_init(&b);
        int rc = cql__sel_json_row(&x->sel, vals, &b);
        if (rc == 0)
            cql_rows_value(&x->out, b.p, (int32_t)b.len);
        cs_buf_destroy(&b);
        return rc ? cs_error_set(x->e, CS_ERR_SERVER, "cannot format JSON row") : 0;
    }
    for (int i = 0; i < x->sel.n; i++)
        cql_rows_value(&x->out, vals[i].p, vals[i].len);
    return 0;
}

/* Keep a selected row (or a group's row) for the in-memory ORDER BY sort,
 * under the clustering it sorts by. */
static int buffer_vals(cql_sx *x, const uint8_t *ck, uint32_t ck_len, const cql_value *vals)
{
    if (x->n_brows == x->cap_brows) {
        size_t nc = x->cap_brows ? x->cap_brows * 2 : 64;
        cql_brow *nb = cs_realloc(x->brows, sizeof(cql_brow) * nc);
        if (!nb)
            return cs_error_set(x->e, CS_ERR_SERVER, "out of memory");
        x->brows = nb;
        x->cap_brows = nc;
    }
    cs_buf b;
    cs_buf_init(&b);
    for (int i = 0; i < x->sel.n; i++)
        cs_buf_put_bytes(&b, vals[i].p, vals[i].len);
    cql_brow *br = &x->brows[x->n_brows];
    br->ck = cs_arena_memdup0(&x->arena, ck, ck_len);
    br->ck_len = ck_len;
    br->vals = cs_arena_memdup0(&x->arena, b.p, b.len);   /* (b holds exactly len bytes) */
    br->vals_len = b.len;
    br->seq = x->n_brows;
    cs_buf_destroy(&b);
    if (!br->ck || !br->vals)
        return cs_error_set(x->e, CS_ERR_SERVER, "out of memory");
    x->n_brows++;
    return 0;
}

static int flush_group(cql_sx *x)
{
    if (!x->group_open)
        return 0;
    x->group_open = false;
    if (x->emitted >= x->limit)
        return 0;
    cql_value *vals = cs_arena_zalloc(&x->arena, sizeof(cql_value) * (size_t)(x->sel.n + 1));
    if (!vals)
        return cs_error_set(x->e, CS_ERR_SERVER, "out of memory");
    int rc = row_values(x, NULL, vals);
    if (rc == 0 && x->buffer) {   /* GROUP BY with ORDER BY over several partitions: sorted, then limited */
        rc = buffer_vals(x, x->group_ck.p, (uint32_t)x->group_ck.len, vals);
        cql__sel_agg_reset(&x->sel);
        return rc;
    }
    if (rc == 0)
        rc = write_values(x, vals);
    x->emitted++;
    x->page_emitted++;
    cql__sel_agg_reset(&x->sel);
    if (x->emitted >= x->limit)
        x->stop = true;
    return rc;
}

/* A row that passed the filters: select, aggregate or group it. */
int cql__select_emit(cql_sx *x, const xrow *row)
{
    int rc;
    if (x->n_group) {
        cs_buf key;
        cs_buf_init(&key);
        for (int i = 0; i < x->n_group; i++) {
            cql_value v = row->vals[x->group_cols[i]];
            if (i == x->n_group - 1 && x->group_fn &&
                (rc = cql__sel_eval(&x->ev, x->t, x->group_fn, row, &v, x->e))) {   /* floor(ts, 1h) */
                cs_buf_destroy(&key);
                return rc;
            }
            cs_buf_put_bytes(&key, v.p, v.len);
        }
        bool same = x->group_open && key.len == x->group_key.len &&
                    !memcmp(key.p, x->group_key.p, key.len);
        if (!same) {
            if ((rc = flush_group(x))) {
                cs_buf_destroy(&key);
                return rc;
            }
            bool full = x->page_emitted >= x->page_size;   /* pages count groups */
            if (full && !x->stop)
                x->more = true;
            /* with GROUP BY, PER PARTITION LIMIT counts groups (DataLimits.groupByLimits) */
            bool skip = x->part_emitted >= x->pp_limit;
            if (x->stop || full || skip) {
                x->stop |= full;
                x->part_skip |= skip;
                cs_buf_destroy(&key);
                return 0;
            }
            x->part_emitted++;
            cs_buf_reset(&x->group_key);
            cs_buf_put(&x->group_key, key.p, key.len);
            cs_buf_reset(&x->group_ck);
            cs_buf_put(&x->group_ck, row->ck, row->ck_len);
            x->group_open = true;
        }
        cs_buf_destroy(&key);
        /* the paging position is the last row fed to a group */
        cs_buf_reset(&x->last_pk);
        cs_buf_put(&x->last_pk, row->pk, row->pk_len);
        cs_buf_reset(&x->last_ck);
        cs_buf_put(&x->last_ck, row->ck, row->ck_len);
        x->last_has_ck = !row->is_static_only;
        x->last_part_done = row->is_static_only;
        x->last_part_emitted = x->part_emitted;
        return cql__sel_agg_add(&x->ev, x->t, &x->sel, row, x->e);
    }
    if (x->sel.has_agg)
        return cql__sel_agg_add(&x->ev, x->t, &x->sel, row, x->e);
    if (x->part_emitted >= x->pp_limit) {
        x->part_skip = true;
        return 0;
    }
    if (x->page_full) {
        x->more = true;
        x->stop = true;
        return 0;
    }
    cql_value *vals = cs_arena_zalloc(x->ev.arena, sizeof(cql_value) * (size_t)(x->sel.n + 1));
    if (!vals)
        return cs_error_set(x->e, CS_ERR_SERVER, "out of memory");
    if ((rc = row_values(x, row, vals)))
        return rc;
    x->part_emitted++;
    if (x->buffer)
        return buffer_vals(x, row->ck, row->ck_len, vals);
    if ((rc = write_values(x, vals)))
        return rc;
    x->emitted++;
    x->page_emitted++;
    cs_buf_reset(&x->last_pk);
    cs_buf_put(&x->last_pk, row->pk, row->pk_len);
    cs_buf_reset(&x->last_ck);
    cs_buf_put(&x->last_ck, row->ck, row->ck_len);
    x->last_has_ck = !row->is_static_only && !x->distinct;
    x->last_part_done = row->is_static_only || x->distinct;
    x->last_part_emitted = x->part_emitted;
    if (x->emitted >= x->limit)
        x->stop = true;
    else if (x->page_emitted >= x->page_size)
        x->page_full = true;
    if (x->part_emitted >= x->pp_limit)
        x->part_skip = true;
    return 0;
}

/* ---------------------------------------------------------------- ORDER BY / GROUP BY / DISTINCT */

/* Is column c restricted by = (a single value; IN does not count)?  As
 * StatementRestrictions.isColumnRestrictedByEq. */
static bool eq_restricted(const cql_sx *x, const sch_column *c)
{
    for (int i = 0; i < x->as->n_where; i++) {
        const ast_relation *r = x->as->where[i];
        /* an IN of one value is an EQ (SingleColumnRelation.newINRestriction) */
        bool eq = r->op == OP_EQ || (r->op == OP_IN && !r->in_marker && r->n_in == 1);
        if (!eq || (r->kind != REL_COLUMN && r->kind != REL_MULTI))
            continue;
        for (int j = 0; j < r->n_columns; j++)
            if (!strcmp(r->columns[j], c->name))
                return true;
    }
    return false;
}

/* ORDER BY (SelectStatement.verifyOrderingIsAllowed / isReversed): clustering
 * columns in declared order, skipping only columns restricted by = (or an
 * IN of one value), all in
 * the same direction relative to the clustering order. */
static int check_order(cql_sx *x)
{
    const ast_select *as = x->as;
    const sch_table *t = x->t;
    if (as->n_order == 0)
        return 0;
    if (!x->w.pk_all)
        return cs_error_set(x->e, CS_ERR_INVALID,
                            "ORDER BY is only supported when the partition key is restricted by an EQ or an IN.");
    int rev = -1, next = 0;
    for (int i = 0; i < as->n_order; i++) {
        const sch_column *c = sch_column_find(t, as->order[i].column);
        if (!c)
            return sch_undefined_column(t, as->order[i].column, x->e);
        if (c->kind != COL_CLUSTERING)
            return cs_error_set(x->e, CS_ERR_INVALID,
                                "Order by is currently only supported on the clustered columns of the PRIMARY KEY, got %s",
                                c->name);
        while (next != c->position) {
            if (next > c->position || !eq_restricted(x, t->ck[next]))
                return cs_error_set(x->e, CS_ERR_INVALID,
                                    "Order by currently only supports the ordering of columns following their declared order in the PRIMARY KEY");
            next++;
        }
        next++;
        int r = as->order[i].desc != c->desc;
        if (rev >= 0 && r != rev)
            return cs_error_set(x->e, CS_ERR_INVALID, "Unsupported order by relation");
        rev = r;
    }
    x->reversed = rev == 1;
    /* SelectStatement refuses post-query ordering (an IN on the partition
     * key with ORDER BY) on its paging path only: taken for an aggregate
     * or GROUP BY, or when the LIMIT is above the page size */
    bool paged = x->p && x->p->page_size > 0 &&
                 (x->sel.has_agg || x->n_group > 0 || x->limit > x->p->page_size);
    if (x->w.has_in_pk && paged)
        return cs_error_set(x->e, CS_ERR_INVALID,
                            "Cannot page queries with both ORDER BY and a IN restriction on the partition key; "
                            "you must either remove the ORDER BY or the IN and sort client side, or disable "
                            "paging for this query");
    if (x->w.n_pks > 1)
        x->buffer = !x->sel.has_agg || x->n_group > 0;   /* a lone aggregate row needs no sort */
    return 0;
}

/* GROUP BY (SelectStatement.getAggregationSpecification): primary key
 * columns in order, skipping only columns restricted by =, covering the
 * whole partition key.  Groups are the partition plus a clustering prefix. */
/* The columns a GROUP BY function reads (Selectable.newSelectorFactory's
 * defs), up to max; their count. */
static int group_fn_columns(const ast_selector *s, const char **cols, int n, int max)
{
    if (!s)
        return n;
    if (s->column && (s->kind == SEL_COLUMN || s->kind == SEL_WRITETIME || s->kind == SEL_TTL)) {
        if (n < max)
            cols[n] = s->column;
        return n + 1;
    }
    for (int i = 0; i < s->n_args; i++)
        n = group_fn_columns(s->args[i], cols, n, max);
    return n;
}

static bool is_aggregate_name(const char *f)
{
    return !strcasecmp(f, "count") || !strcasecmp(f, "min") || !strcasecmp(f, "max") || !strcasecmp(f, "sum") ||
           !strcasecmp(f, "avg");
}

/* GROUP BY's last element as a function of a clustering column
 * (getAggregationSpecFactory): compiled into x->group_fn; *col its column. */
static int group_by_function(cql_sx *x, const ast_selector *g, const sch_column **col)
{
    if (g->kind == SEL_COUNT_STAR || (g->kind == SEL_FUNC && is_aggregate_name(g->func.name)))
        return cs_error_set(x->e, CS_ERR_INVALID, "Aggregate functions are not supported within the GROUP BY clause, got: system.%s",
                            g->kind == SEL_COUNT_STAR ? "count" : g->func.name);
    xsel *fx = cql__sel_compile_one(&x->ev, x->t, g, x->e);
    if (!fx)
        return CS_EUSER;
    if (x->group_fn)   /* getAggregationSpecFactory keeps the last selector factory: the earlier
                        * function's column then groups by its values */
        cql__sel_destroy_one(x->group_fn);
    x->group_fn = fx;
    const char *cols[8];
    int n = group_fn_columns(g, cols, 0, 8);
    if (n == 0)
        return cs_error_set(x->e, CS_ERR_INVALID, "GROUP BY functions must have one clustering column name as parameter");
    if (n > 1) {
        char list[512];
        size_t off = 0;
        list[0] = 0;
        for (int i = 0; i < n && i < 8; i++)
            off += (size_t)snprintf(list + off, off < sizeof list ? sizeof list - off : 0, "%s%s", i ? "," : "",
                                    cols[i]);
        return cs_error_set(x->e, CS_ERR_INVALID, "GROUP BY functions accept only one clustering column as parameter, got: %s",
                            list);
    }
    const sch_column *c = sch_column_find(x->t, cols[0]);
    if (!c)
        return sch_undefined_column(x->t, cols[0], x->e);
    if (c->kind != COL_CLUSTERING)
        return cs_error_set(x->e, CS_ERR_INVALID, "Group by functions are only supported on clustering columns, got %s",
                            c->name);
    *col = c;
    return 0;
}

static int check_group_by(cql_sx *x)
{
    const ast_select *as = x->as;
    const sch_table *t = x->t;
    if (as->n_group_by == 0)
        return 0;
    const char *order_msg = "Group by currently only support groups of columns following their declared order in the PRIMARY KEY";
    int n_key = t->n_pk + t->n_ck, next = 0, ck_prefix = 0;
    for (int i = 0; i < as->n_group_by; i++) {
        const ast_selector *g = as->group_sels ? as->group_sels[i] : NULL;
        const sch_column *c = NULL;
        if (g && g->kind != SEL_COLUMN) {
            if (g->kind != SEL_FUNC && g->kind != SEL_COUNT_STAR)
                return cs_error_set(x->e, CS_ERR_INVALID,
                                    "Group by is currently only supported on the columns of the PRIMARY KEY, got %s",
                                    g->text ? g->text : "?");
            int rc = group_by_function(x, g, &c);   /* a later function takes over, as in Cassandra */
            if (rc)
                return rc;
        } else {
            c = sch_column_find(t, as->group_by[i]);
            if (!c)
                return sch_undefined_column(t, as->group_by[i], x->e);
            if (c->kind != COL_PARTITION_KEY && c->kind != COL_CLUSTERING)
                return cs_error_set(x->e, CS_ERR_INVALID,
                                    "Group by is currently only supported on the columns of the PRIMARY KEY, got %s",
                                    c->name);
            if (x->group_fn)
                return cs_error_set(x->e, CS_ERR_INVALID, "Functions are only supported on the last element of the GROUP BY clause");
        }
        for (;;) {
            if (next >= n_key)
                return cs_error_set(x->e, CS_ERR_INVALID, "%s", order_msg);
            const sch_column *k = next < t->n_pk ? t->pk[next] : t->ck[next - t->n_pk];
            next++;
            if (k->kind == COL_CLUSTERING)
                ck_prefix++;
            if (k == c)
                break;
            if (!eq_restricted(x, k))
                return cs_error_set(x->e, CS_ERR_INVALID, "%s", order_msg);
        }
    }
    if (next < t->n_pk)
        return cs_error_set(x->e, CS_ERR_INVALID, "Group by is not supported on only a part of the partition key");
    if (ck_prefix > 0 && as->distinct)
        return cs_error_set(x->e, CS_ERR_INVALID, "Grouping on clustering columns is not allowed for SELECT DISTINCT queries");
    if (t->n_pk + ck_prefix > 64)
        return cs_error_set(x->e, CS_ERR_INVALID, "Too many GROUP BY columns");
    int n = 0;
    for (int i = 0; i < t->n_pk; i++)
        x->group_cols[n++] = (int)(t->pk[i] - t->cols);
    for (int i = 0; i < ck_prefix; i++)
        x->group_cols[n++] = (int)(t->ck[i] - t->cols);
    x->n_group = n;
    return 0;
}

/* SELECT DISTINCT (SelectStatement.validateDistinctSelection). */
static int check_distinct(cql_sx *x)
{
    if (!x->as->distinct)
        return 0;
    x->distinct = true;
    if (x->as->per_partition_limit)
        return cs_error_set(x->e, CS_ERR_INVALID, "PER PARTITION LIMIT is not allowed with SELECT DISTINCT queries");
    const sch_table *t = x->t;
    bool nonstatic_filter = false;
    for (int i = 0; i < x->w.n_filters; i++)
        if (x->w.filters[i].col->kind == COL_REGULAR || x->w.filters[i].col->kind == COL_CLUSTERING)
            nonstatic_filter = true;
    if (x->w.ck_restricted || nonstatic_filter)
        return cs_error_set(x->e, CS_ERR_INVALID,
                            "SELECT DISTINCT with WHERE clause only supports restriction by partition key and/or static columns.");
    if (x->sel.star)
        return cs_error_set(x->e, CS_ERR_INVALID, "SELECT DISTINCT queries must only request partition key columns and/or static columns (not %s)",
                            t->n_ck ? t->ck[0]->name : (t->n_cols > t->n_pk ? t->cols[t->n_pk].name : "*"));
    bool *has = cs_arena_zalloc(&x->arena, sizeof(bool) * (size_t)(t->n_cols + 1));
    if (!has)
        return cs_error_set(x->e, CS_ERR_SERVER, "out of memory");
    for (int i = 0; i < x->sel.n; i++) {
        const xsel *s = x->sel.sels[i];
        if (s->kind != SEL_COLUMN)
            continue;
        const sch_column *c = &t->cols[s->col];
        if (c->kind != COL_PARTITION_KEY && c->kind != COL_STATIC)
            return cs_error_set(x->e, CS_ERR_INVALID,
                                "SELECT DISTINCT queries must only request partition key columns and/or static columns (not %s)",
                                c->name);
        has[s->col] = true;
    }
    if (!x->w.pk_all && !x->sel.has_agg)     /* only key range queries need the whole key */
        for (int i = 0; i < t->n_pk; i++)
            if (!has[t->pk[i] - t->cols])
                return cs_error_set(x->e, CS_ERR_INVALID,
                                    "SELECT DISTINCT queries must request all the partition key columns (missing %s)",
                                    t->pk[i]->name);
    return 0;
}

static _Thread_local bool g_rev;
static int brow_cmp(const void *a, const void *b)
{
    const cql_brow *x = a, *y = b;
    size_t n = x->ck_len < y->ck_len ? x->ck_len : y->ck_len;
    int c = memcmp(x->ck, y->ck, n);
    if (!c)
        c = x->ck_len < y->ck_len ? -1 : x->ck_len > y->ck_len;
    if (g_rev)
        c = -c;
    if (!c)
        c = x->seq < y->seq ? -1 : 1;
    return c;
}

static void flush_buffer(cql_sx *x)
{
    g_rev = x->reversed;
    if (x->n_brows > 1)              /* none buffered: brows may be NULL */
        qsort(x->brows, x->n_brows, sizeof(cql_brow), brow_cmp);
    cql_value *vals = cs_arena_zalloc(&x->arena, sizeof(cql_value) * (size_t)(x->sel.n + 1));
    for (size_t i = 0; vals && i < x->n_brows && x->emitted < x->limit; i++) {
        cs_rd r;
        cs_rd_init(&r, x->brows[i].vals, x->brows[i].vals_len);
        for (int k = 0; k < x->sel.n; k++) {
            const uint8_t *p = NULL;
            int32_t l = cs_rd_bytes(&r, &p);
            vals[k].p = p;
            vals[k].len = l;
        }
        if (write_values(x, vals))
            return;
        x->emitted++;
    }
}

/* ---------------------------------------------------------------- entry points */

static int sx_init(cql_sx *x, cql_ctx *ctx, cql_session *s, cql_stmt *st, const cql_params *p,
                   cs_error *e)
{
    memset(x, 0, sizeof(*x));
    x->ctx = ctx;
    x->s = s;
    x->st = st;
    x->as = &st->u.select;
    x->p = p;
    x->e = e;
    cs_arena_init(&x->arena);
    cs_arena_init(&x->part_arena);
    cs_arena_init(&x->row_arena);
    cs_buf_init(&x->ck_store);
    cs_buf_init(&x->last_pk);
    cs_buf_init(&x->last_ck);
    cs_buf_init(&x->group_key);
    cs_buf_init(&x->group_ck);
    x->t = cql__table_cached(ctx, &x->as->table, s->keyspace, e);
    if (!x->t)
        return CS_EUSER;
    cql__eval_init(&x->ev, ctx, s, x->t->ks->name, p ? p->values : NULL, p ? p->n_values : 0, &x->arena);
    x->memo = cql__stmt_memo(ctx, st, x->t);
    if (x->memo && x->memo->sel) {   /* compiled by an earlier execution (analyze_where) */
        cql__sel_memo_get(x->memo->sel, &x->sel);
        return 0;
    }
    return cql__sel_compile(&x->ev, x->t, x->as, &x->sel, e);
}

static void sx_destroy(cql_sx *x)
{
    cql__sel_destroy(&x->sel);
    cql__sel_destroy_one(x->group_fn);
    cs_free(x->brows);
    cs_buf_destroy(&x->last_pk);
    cs_buf_destroy(&x->last_ck);
    cs_buf_destroy(&x->group_key);
    cs_buf_destroy(&x->group_ck);
    cs_arena_destroy(&x->part_arena);
    cs_arena_destroy(&x->row_arena);
    cs_buf_destroy(&x->ck_store);
    cs_arena_destroy(&x->arena);
}

int cql__select_metadata(cql_ctx *ctx, cql_session *s, cql_stmt *st, cs_buf *out, cs_error *e)
{
    cql_sx x;
    int rc = sx_init(&x, ctx, s, st, NULL, e);
    int ver = s->protocol_version ? s->protocol_version : 4;
    if (rc == 0) {
        int n = x.sel.json ? 1 : x.sel.n;
        cs_buf_put_u32(out, 0x0001);
        cs_buf_put_u32(out, (uint32_t)n);
        cs_buf_put_string(out, x.t->ks->name);
        cs_buf_put_string(out, x.t->name);
        if (x.sel.json) {
            cs_buf_put_string(out, "[json]");
            ctype_encode_option_v(ctype_scalar(CT_VARCHAR), ver, out);
        } else
            for (int i = 0; i < x.sel.n; i++) {
                cs_buf_put_string(out, x.sel.sels[i]->name);
                ctype_encode_option_v(x.sel.sels[i]->type, ver, out);
            }
    }
    sx_destroy(&x);
    return rc;
}

static int eval_limit(cql_sx *x, const ast_term *t, const char *name, const char *what, int32_t *out)
{
    *out = INT32_MAX;
    if (!t)
        return 0;
    bool set;
    int32_t v;
    int rc = cql__term_eval_i32(&x->ev, t, name, &v, &set, x->e);
    if (rc)
        return rc;
    if (!set) {
        cql_value raw;
        cql__term_eval(&x->ev, t, ctype_scalar(CT_INT), name, &raw, x->e);
        if (raw.len == CQL_NULL)
            return cs_error_set(x->e, CS_ERR_INVALID, "Invalid null value of %s", what);
        return 0;
    }
    if (v <= 0)
        return cs_error_set(x->e, CS_ERR_INVALID, "%s must be strictly positive",
                            !strcmp(what, "limit") ? "LIMIT" : "PER PARTITION LIMIT");
    *out = v;
    return 0;
}

/* ---------------------------------------------------------------- metadata memo */

/*
 * The start of a Rows body up to the row count (kind, flags, column count,
 * table spec, column specs) depends only on the statement, its table, the
 * catalog and the protocol version, so a statement executed again copies
 * the bytes (and the writer's state) recorded the first time instead of
 * encoding every column spec.  An entry is used only when all of these
 * match, the text included: another statement may be allocated where a
 * freed one was.
 */
#define META_MEMO_SIZE 64
typedef struct meta_memo {
    const cql_stmt *st;
    char *text; size_t text_len;       /* cs_malloc'd copy of st->text */
    const sch_table *t;
    uint8_t ver[16];                   /* catalog version: any DDL invalidates */
    int proto;
    cql_rows w;                        /* writer state after the metadata (w.r unused) */
    uint8_t *bytes; size_t n;          /* body bytes [0, n) */
} meta_memo;

void cql__select_meta_free(cql_ctx *ctx)
{
    meta_memo *m = ctx->select_meta;
    if (!m)
        return;
    for (int i = 0; i < META_MEMO_SIZE; i++) {
        cs_free(m[i].text);
        cs_free(m[i].bytes);
    }
    cs_free(m);
    ctx->select_meta = NULL;
}

static meta_memo *meta_slot(cql_ctx *ctx, const cql_stmt *st)
{
    if (!ctx->select_meta)
        ctx->select_meta = cs_calloc(META_MEMO_SIZE, sizeof(meta_memo));
    meta_memo *m = ctx->select_meta;
    return m ? &m[((uintptr_t)st >> 4) % META_MEMO_SIZE] : NULL;
}

/* Start the Rows body: from the memo if it matches, else encoded (and
 * recorded when it can be replayed). */
static void begin_rows(cql_sx *x, cql_result *r, int version, int n_cols, bool skip_metadata)
{
    meta_memo *m = skip_metadata ? NULL : meta_slot(x->ctx, x->st);
    uint8_t ver[16];
    if (m) {
        sch_version(x->ctx->cat, ver);
        if (m->st == x->st && m->t == x->t && m->proto == version && m->bytes &&
            !memcmp(m->ver, ver, 16) && m->w.n_cols == n_cols && m->text_len == x->st->text_len &&
            !memcmp(m->text, x->st->text, m->text_len)) {
            cs_buf_reset(&r->body);
            cs_buf_put(&r->body, m->bytes, m->n);
            x->out = m->w;
            x->out.r = r;
            return;
        }
    }
    cql_rows_begin(&x->out, r, version, x->t->ks->name, x->t->name, n_cols, skip_metadata);
    cql__sel_columns(&x->sel, &x->out);
    /* replayable: every column spec written and the row count last */
    if (!m || r->body.err || x->out.cols_added != n_cols || !x->out.count_off ||
        x->out.count_off + 4 != r->body.len || x->out.n_rows != 0)
        return;
    uint8_t *bytes = cs_malloc(r->body.len);
    char *text = cs_malloc(x->st->text_len ? x->st->text_len : 1);
    if (!bytes || !text) {
        cs_free(bytes);
        cs_free(text);
        return;
    }
    cs_free(m->bytes);
    cs_free(m->text);
    memcpy(bytes, r->body.p, r->body.len);
    memcpy(text, x->st->text, x->st->text_len);
    m->st = x->st;
    m->text = text;
    m->text_len = x->st->text_len;
    m->t = x->t;
    memcpy(m->ver, ver, 16);
    m->proto = version;
    m->w = x->out;
    m->w.r = NULL;
    m->bytes = bytes;
    m->n = r->body.len;
}

/*
 * The WHERE clause: a point restriction (exec_int.h) is analysed once per
 * statement (its memo, checked against the catalog version and the table)
 * and afterwards only its terms are evaluated; any other shape is analysed
 * on every execution.
 */
static int analyze_where(cql_sx *x)
{
    cql_stmt_memo *m = x->memo;   /* sx_init looked it up; nothing since changed the catalog */
    if (m && m->point)
        return cql__where_bind_point(&x->ev, x->t, m->items, m->n_keys, m->n_ck, CQL_WHERE_SELECT,
                                     &x->w, x->e);
    int flags = x->as->allow_filtering ? CQL_WHERE_ALLOW_FILTERING : 0;
    int rc = cql__where_analyze(&x->ev, x->t, x->as->where, x->as->n_where, CQL_WHERE_SELECT, flags,
                                &x->w, x->e);
    if (rc != 0 || m)
        return rc;
    /* the selection, compiled by sx_init, goes after the key terms */
    size_t sel_bytes = cql__sel_memo_size(x->as, &x->sel);
    int n_sel = (int)((sel_bytes + sizeof(cql_keyterm) - 1) / sizeof(cql_keyterm));
    if ((m = cql__stmt_memo_new(x->ctx, x->st, x->t, x->as->n_where + n_sel))) {
        int n_ck = cql__where_point_keys(x->t, x->as->where, x->as->n_where, CQL_WHERE_SELECT, m->items);
        if (n_ck >= 0) {
            m->n_keys = x->as->n_where;
            m->n_ck = n_ck;
            m->point = true;
        }
        if (sel_bytes) {
            m->sel = &m->items[x->as->n_where];
            cql__sel_memo_put(&x->sel, m->sel);
        }
        x->memo = m;
    }
    return rc;
}

/* Java's Float.toString of v, as Cassandra's traces print a float: the
 * shortest decimal that reads back as v, plain from 10^-3 to below 10^7
 * ("0.0", "56.25"), computerized scientific notation outside ("1.0E7"). */
static void java_float(float v, char *out, size_t n)
{
    if (isnan(v)) { snprintf(out, n, "NaN"); return; }
    if (isinf(v)) { snprintf(out, n, v < 0 ? "-Infinity" : "Infinity"); return; }
    if (v == 0) { snprintf(out, n, signbit(v) ? "-0.0" : "0.0"); return; }
    char e[32];
    for (int p = 1; p <= 9; p++) {
        snprintf(e, sizeof e, "%.*e", p - 1, (double)v);
        if (strtof(e, NULL) == v)
            break;
    }
    /* e: [-]d[.ddd]e[+-]x -> sign, the digits, the decimal exponent */
    const char *q = e;
    bool neg = *q == '-';
    q += neg;
    char dig[16];
    int nd = 0;
    for (; *q && *q != 'e'; q++)
        if (*q != '.' && nd < 15)
            dig[nd++] = *q;
    int x = atoi(q + 1);
    while (nd > 1 && dig[nd - 1] == '0')
        nd--;
    dig[nd] = 0;
    size_t o = 0;
#define PUT(c) do { if (o + 1 < n) out[o++] = (c); } while (0)
    if (neg)
        PUT('-');
    float a = fabsf(v);
    if (a >= 1e-3f && a < 1e7f) {
        if (x >= 0) {
            for (int i = 0; i <= x; i++)
                PUT(i < nd ? dig[i] : '0');
            PUT('.');
            if (x + 1 >= nd)
                PUT('0');
            for (int i = x + 1; i < nd; i++)
                PUT(dig[i]);
        } else {
            PUT('0'); PUT('.');
            for (int i = 0; i < -x - 1; i++)
                PUT('0');
            for (int i = 0; i < nd; i++)
                PUT(dig[i]);
        }
        out[o] = 0;
    } else {
        PUT(dig[0]); PUT('.');
        if (nd == 1)
            PUT('0');
        for (int i = 1; i < nd; i++)
            PUT(dig[i]);
        out[o] = 0;
        snprintf(out + o, n > o ? n - o : 0, "E%d", x);
    }
#undef PUT
}

/* RangeCommands.rangeCommandIterator's trace: the vnode ranges the read's
 * token range spans on this node's ring, the concurrency it starts with
 * (from the rows it expects per range: the table's estimated rows, or the
 * index's rows per indexed value, over num_tokens and the replication
 * factor, less a 10% margin) and, the ranges all having this node as
 * their replica, the one request they merge into (ReplicaPlanMerger). */
void cql__trace_range_requests(const cql_sx *x, int64_t index_rows)
{
    int64_t s = INT64_MIN, e = INT64_MIN;
    if (x->w.token_range) {
        s = x->w.tok_start;
        e = x->w.tok_end == INT64_MAX && x->w.tok_end_incl ? INT64_MIN : x->w.tok_end;
    }
    int ranges = 1;   /* the pieces the ring's tokens cut (s, e] into */
    for (int i = 0; i < x->ctx->n_tokens; i++) {
        int64_t t = x->ctx->tokens[i];
        if (t > s && (e == INT64_MIN || t < e))
            ranges++;
    }
    /* expected rows (DataLimits.estimateTotalResults, or the index's
     * getEstimatedResultRows: its table's mean rows per partition) */
    float expected = 0;
    st_table_stats st;
    memset(&st, 0, sizeof st);
    if (index_rows >= 0) {
        expected = (float)index_rows;
    } else if (x->t->st) {
        st_table_stats_get(x->t->st, &st);
        uint64_t keys = st.partitions_estimate - st.memtable_partitions;
        int cells = keys ? (int)(st.cells_estimate / keys) : 0;
        int regular = 0;
        for (int i = 0; i < x->t->n_cols; i++)
            regular += x->t->cols[i].kind == COL_REGULAR;
        expected = (float)cells / (float)regular * (float)keys;
    }
    int rf = 0;
    const sch_keyspace *k = x->t->ks;
    for (int i = 0; i < k->n_repl; i++)
        if (strcmp(k->repl_k[i], "class") != 0)
            rf += atoi(k->repl_v[i]);
    if (rf <= 0)
        rf = 1;   /* LocalStrategy, EverywhereStrategy on one node */
    float per = expected / (float)(x->ctx->n_tokens > 0 ? x->ctx->n_tokens : 1) / (float)rf;
    per -= per * 0.10f;   /* CONCURRENT_SUBREQUESTS_MARGIN */
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int max_cf = ranges < (cpus > 0 ? (int)cpus * 10 : 10) ? ranges : (cpus > 0 ? (int)cpus * 10 : 10);
    int cf = 1;
    if (per != 0) {
        int64_t count = x->limit < x->page_size ? x->limit : x->page_size;   /* the command's limit, paged */
        double need = ceil((double)count / (double)per);
        int want = isnan(need) ? 0 : need > max_cf ? max_cf : (int)need;   /* (int) NaN is 0 in Java */
        cf = want > 1 ? want : 1;
    }
    char f[48];
    java_float(per, f, sizeof f);
    cql__trace(CQL_TRACE_NTR, "Submitting range requests on %d ranges with a concurrency of %d (%s rows per range expected)",
               ranges, cf, f);
    cql__trace(CQL_TRACE_NTR, "Submitted 1 concurrent range requests");
}

/* PartitionRangeReadCommand's trace of a sequential scan: the table's
 * sstables and the key range as Cassandra prints it, "(min(t), max(u)]"
 * (a token bound's min or max key bound by its inclusiveness; an absent
 * bound is the minimum token's).  Cassandra, splitting the ring by the
 * node's vnodes, traces one such line per range it scans; this is one line
 * for the whole range. */
static void trace_seq_scan(cql_sx *x)
{
    const char *sk = "min", *ek = "min";
    int64_t s = INT64_MIN, e = INT64_MIN;
    if (x->w.token_range) {
        if (!(x->w.tok_start == INT64_MIN && x->w.tok_start_incl)) {
            s = x->w.tok_start;
            sk = x->w.tok_start_incl ? "min" : "max";
        }
        if (!(x->w.tok_end == INT64_MAX && x->w.tok_end_incl) && x->w.tok_end != INT64_MIN) {
            e = x->w.tok_end;
            ek = x->w.tok_end_incl ? "max" : "min";
        }
    }
    /* the sstables reaching into the token range, as (from, to] (min(t)
     * starts at token t itself, min(u) ends before token u) */
    int64_t from = s == INT64_MIN || strcmp(sk, "max") == 0 ? s : s - 1;
    int64_t to = e == INT64_MIN || strcmp(ek, "max") == 0 || e == INT64_MIN + 1 ? e : e - 1;
    int n = x->t->st ? st_table_sstables_in_range(x->t->st, from, to) : 0;
    cql__trace(CQL_TRACE_READ, "Executing seq scan across %d sstables for (%s(%lld), %s(%lld)]",
               n, sk, (long long)s, ek, (long long)e);
}

static int run_select(cql_sx *x, cql_result *r)
{
    const cql_params *p = x->p;
    int rc = analyze_where(x);
    if (rc == 0)
        rc = cql_index_check_select(x);   /* index hook (issue 5): ORDER BY with an index */
    if (rc)
        return rc;
    for (int i = 0; i < x->w.n_filters; i++)
        if (x->w.filters[i].col->kind == COL_REGULAR)
            x->regular_filter = true;
    if (p && (p->consistency == 0x0008 || p->consistency == 0x0009) &&
        (!x->w.pk_all || x->w.n_pks != 1) && !x->t->is_virtual)
        return cs_error_set(x->e, CS_ERR_INVALID,
                            "SERIAL/LOCAL_SERIAL consistency may only be requested for one partition at a time");
    if (x->sel.has_agg && x->as->n_group_by == 0 && x->as->per_partition_limit)
        return cs_error_set(x->e, CS_ERR_INVALID, "PER PARTITION LIMIT is not allowed with aggregate queries.");
    if (x->as->n_group_by &&   /* guardrail group_by: SelectStatement's selection, after the restrictions */
        (rc = cql__guard_flag(x->ctx, x->s, x->ctx->cfg.guard.group_by, "group_by", "GROUP BY functionality", x->e)))
        return rc;
    if ((rc = eval_limit(x, x->as->limit, "[limit]", "limit", &x->limit)) ||
        (rc = eval_limit(x, x->as->per_partition_limit, "[per_partition_limit]", "per partition limit",
                         &x->pp_limit)) ||
        (rc = check_group_by(x)) || (rc = check_distinct(x)) || (rc = check_order(x)))
        return rc;
    /* guardrails of SelectStatement.validate and execute: ALLOW FILTERING
     * (not on system keyspaces), the read consistency, the partition keys of an
     * IN, the page size of a paged read */
    if (cql__guard_applies(x->ctx, x->s)) {
        const struct cql_guardrails *g = &x->ctx->cfg.guard;
        if (x->as->allow_filtering && !x->t->ks->is_system &&
            (rc = cql__guard_flag(x->ctx, x->s, g->allow_filtering, "allow_filtering", "Querying with ALLOW FILTERING", x->e)))
            return rc;
        if (p && p->consistency < 32 && (rc = cql__guard_cl(x->ctx, x->s, r, false, 1u << p->consistency, x->e)))
            return rc;
        if (x->w.has_in_pk && x->w.pk_all &&   /* getPartitionKeys, then the clustering's names */
            (rc = cql__guard_in_product(x->ctx, x->s, r, x->w.pk_raw, x->w.n_pk_raw, "partition key", x->e)))
            return rc;
        if (x->w.has_in_pk && x->w.pk_all && x->w.n_pks > 0 &&
            (rc = cql__guard_max(x->ctx, x->s, r, CQL_GUARD_PARTITION_KEYS_IN_SELECT, x->w.n_pks, x->t->name, x->e)))
            return rc;
        if (x->w.has_in_ck && x->w.ck_all &&
            (rc = cql__guard_in_product(x->ctx, x->s, r, x->w.ck_raw, x->w.n_ck_raw, "clustering key", x->e)))
            return rc;
        if (p && p->page_size > 0 && (x->sel.has_agg || x->n_group > 0 || x->limit > p->page_size) &&
            (rc = cql__guard_max(x->ctx, x->s, r, CQL_GUARD_PAGE_SIZE, p->page_size, x->t->name, x->e)))
            return rc;
    }
    if (x->sel.has_agg || x->n_group) {
        /* Cassandra's client warnings for aggregates (SelectStatement) */
        bool pk_restricted = x->w.pk_all || x->w.token_range;
        for (int i = 0; i < x->w.n_filters; i++)
            pk_restricted |= x->w.filters[i].col->kind == COL_PARTITION_KEY;
        if (!pk_restricted)
            cql_result_warn(r, "Aggregation query used without partition key");
        else if (x->w.has_in_pk)
            cql_result_warn(r, "Aggregation query used on multiple partition keys (IN restriction)");
    }
    bool single_page = (x->sel.has_agg && !x->n_group) || x->buffer;
    x->page_size = (!single_page && p && p->page_size > 0) ? p->page_size : INT32_MAX;
    /* Paged reads end a page early after a budget of tombstones (not with
     * GROUP BY: a group must not straddle a budget cut). */
    if (!x->n_group)
        cql__tombstone_budget(x->page_size, x->ctx->cfg.tombstone_failure_threshold, &x->tomb_budget,
                              &x->tomb_hard);
    cql_pstate ps, *pps = NULL;
    if (!single_page && p && p->paging_state && p->paging_state_len >= 0) {
        if ((rc = cql__pstate_decode(p->paging_state, p->paging_state_len, &ps, x->e)))
            return rc;
        pps = &ps;
        x->emitted = ps.emitted;
        if (x->emitted >= x->limit)
            x->stop = true;
    }
    int n_cols = x->sel.json ? 1 : x->sel.n;
    begin_rows(x, r, x->s->protocol_version ? x->s->protocol_version : 4, n_cols,
               p ? p->skip_metadata : false);
    if (!x->t->is_virtual) {
        /* Cassandra's coordinator waits read_request_timeout for a
         * single-partition read (one per key of an IN) and
         * range_request_timeout for a range or index read, counted from
         * the request's arrival (queryStartNanoTime). */
        uint64_t ms = (uint64_t)cql_timeout_ms(x->ctx, x->w.pk_all ? CQL_TIMEOUT_READ : CQL_TIMEOUT_RANGE);
        uint64_t t0 = p && p->start_ns ? p->start_ns : cs_mono_ns();
        x->deadline_ns = ms > (UINT64_MAX - t0) / 1000000u ? UINT64_MAX : t0 + ms * 1000000u;
        if (!x->deadline_ns)
            x->deadline_ns = 1;
    }
    if (p && (p->consistency == 0x0008 || p->consistency == 0x0009) && !x->t->is_virtual &&
        x->w.pk_all && x->w.n_pks == 1 && cql__tracing()) {
        /* legacyReadWithPaxos: a Paxos round with an empty update (proposed,
         * never committed) before the read itself */
        cql_paxos_trace pt;
        cql__paxos_trace_begin(&pt, x->t, x->w.pks[0].p, (uint32_t)x->w.pks[0].len);
        cql__paxos_trace_propose(&pt, NULL);
        cql__paxos_trace_end(&pt, true);
    }
    if (!x->w.empty && !x->stop) {
        bool by_index = false;   /* index hook (issue 5) */
        /* a single-partition read traces its own lines, key by key (cql__scan_keys) */
        bool traced = cql__tracing() && !x->t->is_virtual;
        if (traced && !x->w.pk_all) {
            cql_index_trace_choice(x);   /* the command's index (ReadCommand.findIndex) */
            cql__trace(CQL_TRACE_NTR, "Computing ranges to query");   /* RangeCommands */
        }
        if (x->t->is_virtual)
            rc = cql__scan_virtual(x, pps);
        else if (x->w.pk_all)
            rc = cql__scan_keys(x, pps);
        else if ((rc = cql_index_select(x, pps, &by_index)) != 0 || by_index)
            ;   /* index hook (issue 5, cql/index_query.c): served by a secondary index */
        else {
            if (traced) {
                cql__trace_range_requests(x, -1);
                trace_seq_scan(x);
            }
            rc = cql__scan_range(x, pps);
        }
    }
    if (rc)
        return rc;
    if (x->n_group)
        rc = flush_group(x);   /* the last group: into the buffer when sorting */
    else if (x->sel.has_agg && !x->distinct) {
        x->group_open = true;
        rc = flush_group(x);
    }
    if (x->buffer && rc == 0)
        flush_buffer(x);
    if (rc)
        return rc;
    if (!x->t->is_virtual)   /* sstables per read: single-partition reads, as Cassandra's histogram */
        cql_metrics_record_read_stats(x->ctx, x->t, x->live_rows, x->tombstones,
                                      x->w.pk_all && x->w.n_pks == 1 ? (int64_t)x->sstables_read : -1);
    int warn = x->ctx->cfg.tombstone_warn_threshold;
    if (cql__tracing() && !x->t->is_virtual && !x->w.pk_all)   /* ReadCommand's tombstone counting */
        cql__trace_read_counts(x, x->live_rows, x->tombstones);
    if (warn > 0 && x->tombstones > (uint64_t)warn) {
        /* the query as text, without the trailing ';' a client may send */
        size_t qlen = x->st->text_len;
        while (qlen > 0 && (x->st->text[qlen - 1] == ';' || x->st->text[qlen - 1] == ' ' ||
                            x->st->text[qlen - 1] == '\n' || x->st->text[qlen - 1] == '\t'))
            qlen--;
        if (x->w.pk_all && x->w.n_pks == 1)
            cql_result_warn(r, "Read %llu live rows and %llu tombstone cells for query %.*s; token %lld (see tombstone_warn_threshold)",
                            (unsigned long long)x->live_rows, (unsigned long long)x->tombstones,
                            (int)qlen, x->st->text,
                            (long long)cs_murmur3_token(x->w.pks[0].p, (size_t)x->w.pks[0].len));
        else
            cql_result_warn(r, "Read %llu live rows and %llu tombstone cells for query %.*s; token %lld (see tombstone_warn_threshold)",
                            (unsigned long long)x->live_rows, (unsigned long long)x->tombstones,
                            (int)qlen, x->st->text, (long long)x->token);
    }
    if (x->more) {
        cql_pstate np;
        memset(&np, 0, sizeof(np));
        np.pk = x->last_pk.p ? x->last_pk.p : (const uint8_t *)"";
        np.pk_len = (uint32_t)x->last_pk.len;
        np.ck = x->last_has_ck ? (x->last_ck.p ? x->last_ck.p : (const uint8_t *)"") : NULL;
        np.ck_len = (uint32_t)x->last_ck.len;
        np.part_done = x->last_part_done;
        np.emitted = x->emitted;
        np.part_emitted = x->last_part_emitted;
        cs_buf b;
        cs_buf_init(&b);
        cql__pstate_encode(&np, &b);
        cql_rows_end(&x->out, b.p, (int32_t)b.len);
        cs_buf_destroy(&b);
    } else
        cql_rows_end(&x->out, NULL, -1);
    if (r->body.err)
        return cs_error_set(x->e, CS_ERR_SERVER, "out of memory");
    return 0;
}

int cql__exec_select(cql_ctx *ctx, cql_session *s, cql_stmt *st, const cql_params *p,
                     cql_result *r, cs_error *e)
{
    cql_sx x;
    int rc = sx_init(&x, ctx, s, st, p, e);
    if (rc == 0)
        rc = run_select(&x, r);
    sx_destroy(&x);
    return rc;
}
