/*
 * lwt.c: lightweight transactions (IF NOT EXISTS, IF EXISTS, IF conditions)
 * for single statements and conditional batches.  Owner: exec-write.
 *
 * Cassette has one replica and executes CQL on a single thread, so a
 * compare-and-set is linearizable without Paxos: read the current row(s),
 * check the conditions, and write (or not) before the next request runs.
 * SERIAL / LOCAL_SERIAL consistency are accepted and need nothing more.
 *
 * The result is Cassandra's (ModificationStatement.buildCasResultSet): a Rows
 * result whose first column is the boolean "[applied]" (ks/table of the
 * statement).  When not applied it also carries the current values: every
 * column (IF EXISTS / IF NOT EXISTS) or the columns named in the conditions
 * in IF order (plus the primary key columns in a batch), one row per
 * existing CQL row read; no extra columns when nothing exists.
 */
#include <stdio.h>
#include <string.h>
#include "cql/modify_int.h"
#include "common/alloc.h"

/* Operators as Cassandra's Operator.toString prints them in refusals. */
static const char *const opname[] = { [OP_LT] = "<", [OP_LTE] = "<=", [OP_GT] = ">", [OP_GTE] = ">=",
                                      [OP_CONTAINS] = "CONTAINS", [OP_CONTAINS_KEY] = "CONTAINS KEY" };

static int field_index(const ctype *t, const char *name)
{
    for (int i = 0; i < t->n_sub; i++)
        if (strcmp(t->field_names[i], name) == 0)
            return i;
    return -1;
}

/* ---------------------------------------------------------------- conditions */

/* Evaluate the IF conditions of a statement into pl->conds (Cassandra
 * ColumnCondition.prepare/bind rules and messages). */
int cql__wplan_conds(cql_eval *ev, const ast_condition *conds, int n, cql_wplan *pl, cs_error *e)
{
    if (n == 0)
        return 0;
    pl->conds = cs_arena_zalloc(ev->arena, sizeof *pl->conds * (size_t)n);
    if (!pl->conds)
        return cs_error_set(e, CS_ERR_SERVER, "out of memory");
    for (int i = 0; i < n; i++) {
        const ast_condition *ac = &conds[i];
        cql_wcond *wc = &pl->conds[i];
        const sch_column *c = sch_column_find(pl->t, ac->column);
        if (!c)
            return sch_undefined_column(pl->t, ac->column, e);
        if (c->kind == COL_PARTITION_KEY || c->kind == COL_CLUSTERING)
            return cs_error_set(e, CS_ERR_INVALID, "PRIMARY KEY column '%s' cannot have IF conditions", c->name);
        if (c->type->kind == CT_COUNTER)
            return cs_error_set(e, CS_ERR_INVALID, "Conditions on counters are not supported");
        wc->col = c;
        wc->op = ac->op;
        const ctype *ty = c->type;
        wc->vtype = ty;
        char name[300];
        snprintf(name, sizeof name, "%s", c->name);
        if (ac->elem) {
            if (!ctype_is_collection(ty))
                return cs_error_set(e, CS_ERR_INVALID, "Invalid element access syntax for non-collection column %s", c->name);
            if (ty->kind == CT_SET)
                return cs_error_set(e, CS_ERR_INVALID, "Invalid element access syntax for set column %s", c->name);
            const ctype *kt = ty->kind == CT_LIST ? ctype_scalar(CT_INT) : ty->sub[0];
            if (cql__term_eval(ev, ac->elem, kt, name, &wc->key, e) < 0)
                return CS_EUSER;
            if (wc->key.len == CQL_NULL)
                return cs_error_set(e, CS_ERR_INVALID, "Invalid null value for %s element access",
                                    ty->kind == CT_MAP ? "map" : "list");
            if (wc->key.len == CQL_UNSET)
                return cs_error_set(e, CS_ERR_INVALID, "Invalid 'unset' value in condition");
            wc->access = 1;
            wc->vtype = ty->kind == CT_LIST ? ty->sub[0] : ty->sub[1];
        } else if (ac->field) {
            if (ty->kind != CT_UDT)
                return cs_error_set(e, CS_ERR_INVALID, "Invalid field selection: %s of type %s is not a user type",
                                    c->name, "non-UDT");
            wc->field = field_index(ty, ac->field);
            if (wc->field < 0)
                return cs_error_set(e, CS_ERR_INVALID, "Unknown field %s for column %s", ac->field, c->name);
            wc->access = 2;
            wc->vtype = ty->sub[wc->field];
        }
        const ctype *vt = wc->vtype;
        if ((ac->op == OP_LT || ac->op == OP_LTE || ac->op == OP_GT || ac->op == OP_GTE) && ctype_refs_duration(vt)) {
            const char *holder = ctype_duration_holder(vt);
            if (holder)
                return cs_error_set(e, CS_ERR_INVALID, "Slice conditions are not supported on %s containing durations", holder);
            return cs_error_set(e, CS_ERR_INVALID, "Slice conditions ( %s ) are not supported on durations", opname[ac->op]);
        }
        if (ac->op == OP_CONTAINS || ac->op == OP_CONTAINS_KEY) {
            if (ac->op == OP_CONTAINS_KEY && ty->kind != CT_MAP)
                return cs_error_set(e, CS_ERR_INVALID, "Cannot use CONTAINS KEY on non-map column %s", c->name);
            if (ac->op == OP_CONTAINS && !ctype_is_collection(ty))
                return cs_error_set(e, CS_ERR_INVALID, "Cannot use CONTAINS on non-collection column %s", c->name);
            vt = ac->op == OP_CONTAINS_KEY ? ty->sub[0] : ty->kind == CT_MAP ? ty->sub[1] : ty->sub[0];
        }
        if (ac->op == OP_IN && !ac->in_marker) {
            wc->n_vals = ac->n_in;
            wc->vals = cs_arena_zalloc(ev->arena, sizeof *wc->vals * (size_t)(ac->n_in ? ac->n_in : 1));
            if (!wc->vals)
                return cs_error_set(e, CS_ERR_SERVER, "out of memory");
            int k = 0;
            for (int j = 0; j < ac->n_in; j++) {
                if (cql__term_eval(ev, ac->in[j], vt, name, &wc->vals[k], e) < 0)
                    return CS_EUSER;
                if (wc->vals[k].len != CQL_UNSET)   /* unset IN values are ignored */
                    k++;
            }
            wc->n_vals = k;
        } else if (ac->op == OP_IN) {
            ctype *lt = ctype_new_collection(CT_LIST, ctype_ref(vt), NULL, false);
            cql_value lv;
            int rc = cql__term_eval(ev, ac->value, lt, name, &lv, e);
            ctype_unref(lt);
            if (rc < 0)
                return CS_EUSER;
            if (lv.len == CQL_NULL)
                return cs_error_set(e, CS_ERR_INVALID, "Invalid null list in IN condition");
            if (lv.len == CQL_UNSET)
                return cs_error_set(e, CS_ERR_INVALID, "Invalid 'unset' value in condition");
            cs_rd r;
            cs_rd_init(&r, lv.p, (size_t)lv.len);
            int32_t cnt = (int32_t)cs_rd_u32(&r);
            if (r.err || cnt < 0 || cnt > 65535)
                return cs_error_set(e, CS_ERR_INVALID, "Invalid IN list");
            wc->vals = cs_arena_zalloc(ev->arena, sizeof *wc->vals * (size_t)(cnt ? cnt : 1));
            if (!wc->vals)
                return cs_error_set(e, CS_ERR_SERVER, "out of memory");
            for (int j = 0; j < cnt; j++) {
                const uint8_t *p = NULL;
                int32_t len = cs_rd_bytes(&r, &p);
                if (r.err)
                    return cs_error_set(e, CS_ERR_INVALID, "Invalid IN list");
                wc->vals[j].p = p;
                wc->vals[j].len = len < 0 ? CQL_NULL : len;
            }
            wc->n_vals = cnt;
        } else {
            wc->vals = cs_arena_zalloc(ev->arena, sizeof *wc->vals);
            if (!wc->vals)
                return cs_error_set(e, CS_ERR_SERVER, "out of memory");
            if (cql__term_eval(ev, ac->value, vt, name, &wc->vals[0], e) < 0)
                return CS_EUSER;
            /* a whole non-frozen collection is compared cell by cell
             * (MultiCellCollectionBound): an unset value applies to nothing;
             * anything else takes one value, which unset is not */
            bool cells = !wc->access && ctype_is_collection(ty) && ctype_is_multicell(ty);
            if (wc->vals[0].len == CQL_UNSET && !cells)
                return cs_error_set(e, CS_ERR_INVALID, "Invalid 'unset' value in condition");
            wc->n_vals = 1;
            if (wc->vals[0].len == CQL_NULL && (ac->op == OP_LT || ac->op == OP_LTE || ac->op == OP_GT ||
                                               ac->op == OP_GTE || ac->op == OP_CONTAINS || ac->op == OP_CONTAINS_KEY))
                return cs_error_set(e, CS_ERR_INVALID, "Invalid comparison with null for operator \"%s\"",
                                    opname[ac->op]);
        }
        pl->n_conds++;
    }
    return 0;
}

/* ---------------------------------------------------------------- evaluation */

/* The rows a plan's conditions look at. */
typedef struct lwt_rows {
    cql_rowcopy reg, stat;
    bool has_ck;                      /* a clustering row is addressed */
    bool part_exists;                 /* partition-level DELETE: any live row */
    const uint8_t *ck; uint32_t ck_len;
} lwt_rows;

static bool cond_static(const cql_wplan *pl)
{
    for (int i = 0; i < pl->n_conds; i++)
        if (pl->conds[i].col->kind == COL_STATIC)
            return true;
    return false;
}

/* Element of a multi-cell column's cells (map key / list index / UDT field). */
static bool elem_value(const cql_rowcopy *rc, const cql_wcond *c, cql_value *out)
{
    const ctype *t = c->col->type;
    int idx = 0;
    cs_buf path;
    cs_buf_init(&path);
    bool found = false;
    if (c->access == 1 && t->kind == CT_MAP)
        ctype_bc_encode(t->sub[0], c->key.p, (size_t)c->key.len, false, &path);
    int32_t want = (c->access == 1 && t->kind == CT_LIST && c->key.len == 4) ? (int32_t)cs_be32(c->key.p) : -1;
    for (int i = 0; i < rc->n_cells && !found; i++) {
        const st_cell *cell = &rc->cells[i];
        if (cell->col != c->col->id)
            continue;
        if (c->access == 2)
            found = cell->path_len == 2 && cs_be16(cell->path) == c->field;
        else if (t->kind == CT_MAP)
            found = cell->path_len == path.len && memcmp(cell->path, path.p, path.len) == 0;
        else
            found = idx++ == want;
        if (found) {
            out->p = cell->val;
            out->len = (int32_t)cell->val_len;
        }
    }
    cs_buf_destroy(&path);
    return found;
}

/* Frozen/simple value of a serialized element for CONTAINS (KEY). */
static bool coll_contains(const ctype *t, const uint8_t *v, size_t n, bool keys, cql_value x)
{
    cs_rd r;
    cs_rd_init(&r, v, n);
    int32_t cnt = (int32_t)cs_rd_u32(&r);
    const ctype *et = t->kind == CT_MAP ? (keys ? t->sub[0] : t->sub[1]) : t->sub[0];
    for (int32_t i = 0; i < cnt && !r.err; i++) {
        const uint8_t *k = NULL, *val = NULL;
        int32_t kl = cs_rd_bytes(&r, &k), vl = 0;
        if (t->kind == CT_MAP)
            vl = cs_rd_bytes(&r, &val);
        const uint8_t *p = (t->kind == CT_MAP && !keys) ? val : k;
        int32_t pl = (t->kind == CT_MAP && !keys) ? vl : kl;
        if (r.err || pl < 0)
            break;
        if (ctype_compare(et, p, (size_t)pl, x.p, (size_t)x.len) == 0)
            return true;
    }
    return false;
}

static bool is_empty_coll(const ctype *t, cql_value v)
{
    return v.len >= 4 && ctype_is_multicell(t) && t->kind != CT_UDT && cs_be32(v.p) == 0;
}

/* ctype_compare after normalizing a set/map operand (bound values may be
 * unsorted; values rebuilt from cells are sorted). */
static int cmp_norm(const ctype *t, cql_value cur, cql_value x)
{
    if ((t->kind != CT_SET && t->kind != CT_MAP) || x.len <= 0)
        return ctype_compare(t, cur.p, (size_t)cur.len, x.p, (size_t)x.len);
    cs_buf nb;
    cs_buf_init(&nb);
    int r;
    if (ctype_coll_normalize(t, x.p, (size_t)x.len, &nb) == 0)
        r = ctype_compare(t, cur.p, (size_t)cur.len, nb.p, nb.len);
    else
        r = ctype_compare(t, cur.p, (size_t)cur.len, x.p, (size_t)x.len);
    cs_buf_destroy(&nb);
    return r;
}

/* Does condition c hold on the row copy rc? */
static bool cond_holds(const cql_rowcopy *rc, const cql_wcond *c)
{
    cs_buf cur;
    cs_buf_init(&cur);
    cql_value v = { NULL, CQL_NULL };
    if (c->access) {
        elem_value(rc, c, &v);
    } else if (cql__rowcopy_value(rc, c->col, &cur) == 1) {
        v.p = cur.p;
        v.len = (int32_t)cur.len;
    }
    bool ok = false;
    const ctype *vt = c->vtype;
    switch (c->op) {
    case OP_IN:
        for (int i = 0; i < c->n_vals && !ok; i++) {
            cql_value x = c->vals[i];
            if (!c->access && is_empty_coll(vt, x))
                x.len = CQL_NULL;
            if (x.len < 0 || v.len < 0)
                ok = x.len < 0 && v.len < 0;
            else
                ok = cmp_norm(vt, v, x) == 0;
        }
        break;
    case OP_CONTAINS:
    case OP_CONTAINS_KEY:
        ok = v.len >= 0 && c->vals[0].len >= 0 &&   /* unset: applies to nothing */
             coll_contains(c->col->type, v.p, (size_t)v.len, c->op == OP_CONTAINS_KEY, c->vals[0]);
        break;
    default: {
        cql_value x = c->vals[0];
        if (x.len == CQL_UNSET)
            break;
        if (!c->access && ctype_is_collection(vt) && ctype_is_multicell(vt) && x.len >= 0 &&
            c->op != OP_EQ && c->op != OP_NEQ) {
            /* cell by cell (Cassandra's listAppliesTo ...): a missing
             * collection is an empty one, below any other */
            bool ve = v.len < 0 || is_empty_coll(vt, v), xe = is_empty_coll(vt, x);
            int cmp = ve && xe ? 0 : ve ? -1 : xe ? 1 : cmp_norm(vt, v, x);
            ok = c->op == OP_LT ? cmp < 0 : c->op == OP_LTE ? cmp <= 0 : c->op == OP_GT ? cmp > 0 : cmp >= 0;
            break;
        }
        if (!c->access && is_empty_coll(vt, x))
            x.len = CQL_NULL;
        if (x.len < 0 || v.len < 0) {
            bool both = x.len < 0 && v.len < 0;
            ok = c->op == OP_EQ ? both : c->op == OP_NEQ ? !both : false;
            break;
        }
        int cmp = cmp_norm(vt, v, x);
        switch (c->op) {
        case OP_EQ: ok = cmp == 0; break;
        case OP_NEQ: ok = cmp != 0; break;
        case OP_LT: ok = cmp < 0; break;
        case OP_LTE: ok = cmp <= 0; break;
        case OP_GT: ok = cmp > 0; break;
        case OP_GTE: ok = cmp >= 0; break;
        default: ok = false; break;
        }
    }
    }
    cs_buf_destroy(&cur);
    return ok;
}

/* Read what plan pl's conditions need. */
static int read_rows(const cql_wplan *pl, int32_t now_s, lwt_rows *lr)
{
    const sch_table *t = pl->t;
    const cql_value *pk = &pl->w.pks[0];
    memset(lr, 0, sizeof *lr);
    lr->has_ck = t->n_ck == 0 || pl->w.n_cks == 1;
    if (t->n_ck > 0 && pl->w.n_cks == 1) {
        lr->ck = pl->w.cks[0].p;
        lr->ck_len = (uint32_t)pl->w.cks[0].len;
    }
    int rc = 0;
    if (lr->has_ck)
        rc = cql__read_row(t, pk->p, (uint32_t)pk->len, lr->ck, lr->ck_len, false, now_s, &lr->reg);
    else
        cs_buf_init(&lr->reg.store);
    if (rc >= 0)
        rc = cql__read_row(t, pk->p, (uint32_t)pk->len, NULL, 0, true, now_s, &lr->stat);
    else
        cs_buf_init(&lr->stat.store);
    if (rc >= 0 && !lr->has_ck && pl->st->kind == STMT_DELETE && pl->n_ops == 0) {
        rc = cql__partition_exists(t, pk->p, (uint32_t)pk->len, now_s);
        lr->part_exists = rc == 1;
    }
    return rc < 0 ? rc : 0;
}

/* Does plan pl apply on the rows it read? */
static bool plan_applies(const cql_wplan *pl, const lwt_rows *lr)
{
    bool exists = lr->has_ck ? lr->reg.exists : lr->stat.exists || lr->part_exists;
    if (pl->if_not_exists && exists)
        return false;
    if (pl->if_exists && !exists)
        return false;
    for (int i = 0; i < pl->n_conds; i++) {
        const cql_wcond *c = &pl->conds[i];
        const cql_rowcopy *rc = c->col->kind == COL_STATIC ? &lr->stat : &lr->reg;
        if (!cond_holds(rc, c))
            return false;
    }
    return true;
}

/* ---------------------------------------------------------------- result */

typedef struct lwt_out {
    const sch_column **cols; int n_cols;
} lwt_out;

static void add_col(lwt_out *o, const sch_column *c)
{
    if (c->hidden)                   /* COMPACT STORAGE's internal columns: not in '*' */
        return;
    for (int i = 0; i < o->n_cols; i++)
        if (o->cols[i] == c)
            return;
    o->cols[o->n_cols++] = c;
}

/* Columns of the not-applied result (Cassandra's select order for '*'). */
static void result_cols(cql_wplan *const *pl, int n, bool is_batch, lwt_out *o)
{
    const sch_table *t = pl[0]->t;
    bool wildcard = false;
    for (int i = 0; i < n; i++)
        if (pl[i]->if_exists || pl[i]->if_not_exists)
            wildcard = true;
    if (wildcard || is_batch) {
        for (int i = 0; i < t->n_pk; i++) add_col(o, t->pk[i]);
        for (int i = 0; i < t->n_ck; i++) add_col(o, t->ck[i]);
    }
    if (wildcard) {
        for (int i = 0; i < t->n_cols; i++)
            if (t->cols[i].kind == COL_STATIC) add_col(o, &t->cols[i]);
        for (int i = 0; i < t->n_cols; i++)
            if (t->cols[i].kind == COL_REGULAR) add_col(o, &t->cols[i]);
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < pl[i]->n_conds; j++)
            add_col(o, pl[i]->conds[j].col);
}

/* Emit one result row for the rows read by plan pl. */
static void emit_row(cql_rows *w, const cql_wplan *pl, const lwt_rows *lr, const lwt_out *o)
{
    const sch_table *t = pl->t;
    cql_value pkv[16], ckv[64];
    cs_buf store, val;
    size_t ck_off[64];
    int32_t ck_len[64];
    cs_buf_init(&store);
    cs_buf_init(&val);
    int npk = t->n_pk <= 16 ? t->n_pk : 0;   /* wider keys: shown as null */
    if (npk && sch_partition_key_split(t, pl->w.pks[0].p, (size_t)pl->w.pks[0].len, pkv) < 0)
        for (int i = 0; i < npk; i++) pkv[i].len = CQL_NULL;
    bool have_ck = lr->ck_len > 0 && lr->reg.exists && t->n_ck <= 64 &&
                   sch_clustering_decode(t, lr->ck, lr->ck_len, &store, ck_off, ck_len) == 0;
    for (int i = 0; have_ck && i < t->n_ck; i++) {
        ckv[i].p = store.p + ck_off[i];
        ckv[i].len = ck_len[i];
    }
    static const uint8_t t_false = 0;
    cql_rows_value(w, &t_false, 1);
    for (int i = 0; i < o->n_cols; i++) {
        const sch_column *c = o->cols[i];
        if (c->kind == COL_PARTITION_KEY) {
            cql_value v = c->position < npk ? pkv[c->position] : (cql_value){ NULL, CQL_NULL };
            cql_rows_value(w, v.p, v.len);
        } else if (c->kind == COL_CLUSTERING) {
            if (have_ck)
                cql_rows_value(w, ckv[c->position].p, ckv[c->position].len);
            else
                cql_rows_value(w, NULL, -1);
        } else {
            const cql_rowcopy *rc = c->kind == COL_STATIC ? &lr->stat : &lr->reg;
            cs_buf_reset(&val);
            if (cql__rowcopy_value(rc, c, &val) == 1 && !val.err)
                cql_rows_value(w, val.p, (int32_t)val.len);
            else
                cql_rows_value(w, NULL, -1);
        }
    }
    cs_buf_destroy(&store);
    cs_buf_destroy(&val);
}

/* CQL3CasRequest.addExist/addNotExist/addConditions: the condition kinds
 * of the statements of a batch that address the same row must agree. */
static int check_mix(cql_wplan *const *plans, int n, cs_error *e)
{
    for (int i = 0; i < n; i++) {
        const cql_wplan *a = plans[i];
        if (!cql__wplan_is_lwt(a))
            continue;
        bool a_static = a->w.n_cks == 0 && a->t->n_ck > 0;
        int ka = a->if_exists ? 1 : a->if_not_exists ? 2 : 3;
        for (int j = 0; j < i; j++) {
            const cql_wplan *b = plans[j];
            if (!cql__wplan_is_lwt(b))
                continue;
            bool b_static = b->w.n_cks == 0 && b->t->n_ck > 0;
            if (a_static != b_static)
                continue;
            if (!a_static && a->w.n_cks == 1 && b->w.n_cks == 1 &&
                (a->w.cks[0].len != b->w.cks[0].len ||
                 memcmp(a->w.cks[0].p, b->w.cks[0].p, (size_t)a->w.cks[0].len) != 0))
                continue;
            int kb = b->if_exists ? 1 : b->if_not_exists ? 2 : 3;
            if (ka == kb)
                continue;
            if (ka == 3)
                return cs_error_set(e, CS_ERR_INVALID, "Cannot mix IF conditions and IF NOT EXISTS for the same row");
            if (kb != 3)
                return cs_error_set(e, CS_ERR_INVALID, "Cannot mix IF EXISTS and IF NOT EXISTS conditions for the same row");
            return cs_error_set(e, CS_ERR_INVALID, "Cannot mix IF conditions and IF %sEXISTS for the same row",
                                ka == 2 ? "NOT " : "");
        }
    }
    return 0;
}

/* The trace's CAS read: its closing lines, and on a mismatch the current
 * values (CQL3CasRequest.columnsToRead: every static column when a plan
 * writes one, else those its conditions name; every regular column when a
 * plan writes a regular row, else those its conditions name). */
static void trace_read(cql_paxos_trace *pt, cql_wplan *const *plans, int n, const lwt_rows *rows, bool applied)
{
    if (!pt || !pt->on)
        return;
    const sch_table *t = plans[0]->t;
    bool *fetched = cs_calloc((size_t)t->n_cols + 1, sizeof *fetched);
    if (!fetched)
        return;
    bool stat_all = false, reg_all = false, multicell = false, by_names = true;
    for (int i = 0; i < n; i++) {
        stat_all |= plans[i]->has_static;
        reg_all |= plans[i]->has_regular || (rows[i].has_ck && !plans[i]->has_static);
    }
    for (int i = 0; i < t->n_cols; i++)
        fetched[i] = (t->cols[i].kind == COL_STATIC && stat_all) || (t->cols[i].kind == COL_REGULAR && reg_all);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < plans[i]->n_conds; j++)
            fetched[plans[i]->conds[j].col - t->cols] = true;
    bool stat_fetched = false;
    for (int i = 0; i < t->n_cols; i++) {
        multicell |= fetched[i] && ctype_is_multicell(t->cols[i].type);   /* queriesMulticellType */
        stat_fetched |= fetched[i] && t->cols[i].kind == COL_STATIC;
    }
    int live = 0;
    const cql_rowcopy *regs[256], *stat = NULL;
    const uint8_t *cks[256];
    uint32_t ck_lens[256];
    int n_regs = 0;
    for (int i = 0; i < n; i++) {
        if (!cql__wplan_is_lwt(plans[i]))
            continue;
        by_names &= rows[i].has_ck;
        if (!stat && rows[i].stat.exists && stat_fetched)
            stat = &rows[i].stat;
        bool dup = false;
        for (int j = 0; j < n_regs && !dup; j++)
            dup = ck_lens[j] == rows[i].ck_len && (rows[i].ck_len == 0 || memcmp(cks[j], rows[i].ck, rows[i].ck_len) == 0);
        if (rows[i].has_ck && !dup && n_regs < 256) {
            regs[n_regs] = &rows[i].reg;
            cks[n_regs] = rows[i].ck;
            ck_lens[n_regs++] = rows[i].ck_len;
            live += rows[i].reg.exists;
        }
    }
    live += stat != NULL;
    cql__paxos_trace_read_end(pt, by_names && !multicell, live);
    if (!applied)
        cql__paxos_trace_mismatch(pt, fetched, stat, regs, cks, ck_lens, n_regs);
    cs_free(fetched);
}

int cql__lwt_check(cql_wplan *const *plans, int n, bool is_batch, int32_t now_s, int version,
                   cql_result *r, bool *applied, cql_paxos_trace *pt, cs_error *e)
{
    if (check_mix(plans, n, e) < 0)
        return CS_EUSER;
    const sch_table *t = plans[0]->t;
    if (pt && plans[0]->w.n_pks == 1) {
        cql__paxos_trace_begin(pt, t, plans[0]->w.pks[0].p, (uint32_t)plans[0]->w.pks[0].len);
        cql__paxos_trace_read_begin(pt);
    }
    lwt_rows *rows = cs_calloc((size_t)n, sizeof *rows);
    const sch_column **cols = cs_calloc((size_t)t->n_cols + 1, sizeof *cols);
    int rc = 0;
    if (!rows || !cols) {
        cs_free(rows);
        cs_free(cols);
        return cs_error_set(e, CS_ERR_SERVER, "out of memory");
    }
    *applied = true;
    for (int i = 0; i < n && rc == 0; i++) {
        if (plans[i]->w.n_pks != 1) {
            rc = cs_error_set(e, CS_ERR_INVALID, "IN on the partition key is not supported with conditional updates");
            break;
        }
        if ((rc = read_rows(plans[i], now_s, &rows[i])) < 0) {
            rc = cs_error_set(e, CS_ERR_SERVER, "read failed: %s", cs_strerror(rc));
            break;
        }
        if (cql__wplan_is_lwt(plans[i]) && !plan_applies(plans[i], &rows[i]))
            *applied = false;
    }
    if (rc == 0)
        trace_read(pt, plans, n, rows, *applied);
    if (rc == 0) {
        lwt_out o = { cols, 0 };
        if (!*applied)
            result_cols(plans, n, is_batch, &o);
        /* A plan whose conditions are all on static columns shows no row of
         * its own when another conditional plan reads a clustering row (the
         * statics come with that row); alone, it shows the partition's first
         * live row (CQL3CasRequest.readCommand: the first live row when
         * there are no row conditions), or the static row without one. */
        bool row_plans = false;
        for (int i = 0; i < n; i++)
            row_plans |= cql__wplan_is_lwt(plans[i]) && rows[i].has_ck && plans[i]->w.n_cks == 1;
        cs_buf first_ck;
        cs_buf_init(&first_ck);
        /* Rows to show: each distinct existing row read by a conditional plan. */
        int shown[256], n_shown = 0;
        for (int i = 0; i < n && !*applied && n_shown < 256; i++) {
            if (!cql__wplan_is_lwt(plans[i]))
                continue;
            lwt_rows *lr = &rows[i];
            bool static_only = !lr->has_ck && t->n_ck > 0;
            if (static_only && row_plans)
                continue;
            if (static_only && is_batch && lr->stat.exists && !lr->reg.exists) {
                const cql_value *pk = &plans[i]->w.pks[0];
                int fr = cql__first_row_ck(t, pk->p, (uint32_t)pk->len, now_s, &first_ck);
                if (fr == 1) {
                    cql__rowcopy_free(&lr->reg);
                    if (cql__read_row(t, pk->p, (uint32_t)pk->len, first_ck.p, (uint32_t)first_ck.len, false, now_s,
                                      &lr->reg) == 1) {
                        lr->ck = first_ck.p;
                        lr->ck_len = (uint32_t)first_ck.len;
                    }
                }
            }
            /* Like SelectStatement.processPartition: a partition with only
             * its static row yields a row when static columns were read,
             * which CQL3CasRequest.columnsToRead does when the statement
             * writes a static column or a condition names one (so not for
             * IF EXISTS on a regular row alone). */
            bool statics_read = plans[i]->has_static || cond_static(plans[i]);
            bool any = lr->reg.exists || ((statics_read || !lr->has_ck) && lr->stat.exists);
            if (!any)
                continue;
            bool dup = false;
            for (int j = 0; j < n_shown; j++)
                dup |= rows[shown[j]].ck_len == lr->ck_len &&
                       (lr->ck_len == 0 || memcmp(rows[shown[j]].ck, lr->ck, lr->ck_len) == 0);
            if (!dup)
                shown[n_shown++] = i;
        }
        if (n_shown == 0)
            o.n_cols = 0;
        cql_rows w;
        cql_rows_begin(&w, r, version, t->ks->name, t->name, 1 + o.n_cols, false);
        cql_rows_col(&w, "[applied]", ctype_scalar(CT_BOOLEAN));
        for (int i = 0; i < o.n_cols; i++)
            cql_rows_col(&w, o.cols[i]->name, o.cols[i]->type);
        if (*applied) {
            static const uint8_t t_true = 1;
            cql_rows_value(&w, &t_true, 1);
        } else if (n_shown == 0) {
            static const uint8_t t_false = 0;
            cql_rows_value(&w, &t_false, 1);
        } else {
            for (int j = 0; j < n_shown; j++)
                emit_row(&w, plans[shown[j]], &rows[shown[j]], &o);
        }
        cql_rows_end(&w, NULL, -1);
        cs_buf_destroy(&first_ck);   /* rows' ck may point into it: after the rows are written */
    }
    for (int i = 0; i < n; i++) {
        cql__rowcopy_free(&rows[i].reg);
        cql__rowcopy_free(&rows[i].stat);
    }
    cs_free(rows);
    cs_free(cols);
    return rc < 0 ? CS_EUSER : 0;
}
