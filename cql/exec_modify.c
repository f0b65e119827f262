/*
 * exec_modify.c: INSERT, UPDATE and DELETE (owner: exec-write).
 * Caller: exec.c (cql_exec_modify), exec_batch.c (cql__wplan_*).
 *
 * A statement is first analysed and fully evaluated into a cql_wplan
 * (cql__wplan_prepare: table, USING attributes, WHERE keys via restrict.c,
 * each SET operation / DELETE target / INSERT value, LWT conditions), then
 * turned into storage mutations (cql__wplan_apply, cells in collections.c,
 * counters in counter.c).  Keeping the two steps apart lets LWTs check their
 * conditions before anything is written and lets a BATCH validate every
 * statement before building its single st_mutation.
 *
 * Semantics follow Cassandra's ModificationStatement / UpdateStatement /
 * DeleteStatement / Operation: INSERT writes a row marker (liveness) and
 * UPDATE does not; DELETE without columns deletes the partition, a row or a
 * clustering range; statics go to the static row.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cql/modify_int.h"
#include "common/alloc.h"
#include "common/util.h"

/* ---------------------------------------------------------------- helpers */

/* Render a term roughly as CQL source, for messages. */
static void term_str(const ast_term *t, cs_buf *out)
{
    static const char *open[] = { [TERM_LIST] = "[", [TERM_SET] = "{", [TERM_MAP] = "{",
                                  [TERM_TUPLE] = "(", [TERM_UDT] = "{" };
    static const char *close[] = { [TERM_LIST] = "]", [TERM_SET] = "}", [TERM_MAP] = "}",
                                   [TERM_TUPLE] = ")", [TERM_UDT] = "}" };
    if (!t) { cs_buf_put(out, "?", 1); return; }
    switch (t->kind) {
    case TERM_LITERAL:
        if (t->lit.kind == LIT_STRING) {
            cs_buf_put_u8(out, '\'');
            for (size_t i = 0; i < t->lit.len; i++) {
                if (t->lit.text[i] == '\'')
                    cs_buf_put_u8(out, '\'');
                cs_buf_put_u8(out, (uint8_t)t->lit.text[i]);
            }
            cs_buf_put_u8(out, '\'');
        } else
            cs_buf_put(out, t->lit.text, t->lit.len);
        break;
    case TERM_NULL: cs_buf_put(out, "null", 4); break;
    case TERM_BIND:
        if (t->bind.name) { cs_buf_put_u8(out, ':'); cs_buf_put(out, t->bind.name, strlen(t->bind.name)); }
        else cs_buf_put_u8(out, '?');
        break;
    case TERM_LIST: case TERM_SET: case TERM_MAP: case TERM_TUPLE: case TERM_UDT:
        cs_buf_put(out, open[t->kind], 1);
        for (int i = 0; i < t->n_elems; i++) {
            if (t->kind == TERM_UDT) {
                cs_buf_put(out, t->field_names[i], strlen(t->field_names[i]));
                cs_buf_put(out, ": ", 2);
            }
            term_str(t->elems[i], out);
            if (i + 1 < t->n_elems)
                cs_buf_put(out, t->kind == TERM_MAP && i % 2 == 0 ? ": " : ", ", 2);
        }
        cs_buf_put(out, close[t->kind], 1);
        break;
    case TERM_FUNC:
        cs_buf_put(out, t->func.name, strlen(t->func.name));
        cs_buf_put_u8(out, '(');
        for (int i = 0; i < t->n_elems; i++) {
            term_str(t->elems[i], out);
            if (i + 1 < t->n_elems) cs_buf_put(out, ", ", 2);
        }
        cs_buf_put_u8(out, ')');
        break;
    case TERM_CAST:
        cs_buf_put_u8(out, '(');
        cs_buf_put(out, t->cast_type, strlen(t->cast_type));
        cs_buf_put(out, ")", 1);
        if (t->n_elems) term_str(t->elems[0], out);
        break;
    case TERM_NEG:
        cs_buf_put_u8(out, '-');
        if (t->n_elems) term_str(t->elems[0], out);
        break;
    }
}

/* "v = v + 1" style text of a SET operation (Cassandra Operation.toString). */
static const char *op_str(cs_arena *a, const ast_set_op *op)
{
    cs_buf v, o;
    cs_buf_init(&v);
    cs_buf_init(&o);
    term_str(op->value, &v);
    cs_buf_put_u8(&v, 0);
    const char *c = op->column, *val = v.err ? "?" : (const char *)v.p;
    char tmp[1024];
    switch (op->kind) {
    case SET_ADD: case SET_ADD_ASSIGN: snprintf(tmp, sizeof tmp, "%s = %s + %s", c, c, val); break;
    case SET_SUB: case SET_SUB_ASSIGN: snprintf(tmp, sizeof tmp, "%s = %s - %s", c, c, val); break;
    case SET_PREPEND: snprintf(tmp, sizeof tmp, "%s = %s - %s", c, val, c); break;
    case SET_ELEMENT:
        term_str(op->key, &o);
        cs_buf_put_u8(&o, 0);
        snprintf(tmp, sizeof tmp, "%s[%s] = %s", c, o.err ? "?" : (const char *)o.p, val);
        break;
    case SET_FIELD: snprintf(tmp, sizeof tmp, "%s.%s = %s", c, op->field, val); break;
    default: snprintf(tmp, sizeof tmp, "%s = %s", c, val); break;
    }
    cs_buf_destroy(&v);
    cs_buf_destroy(&o);
    return cs_arena_strdup(a, tmp);
}

static int udt_field_index(const ctype *t, const char *name)
{
    for (int i = 0; i < t->n_sub; i++)
        if (strcmp(t->field_names[i], name) == 0)
            return i;
    return -1;
}

static sch_column *find_col(const sch_table *t, const char *name, cs_error *e)
{
    sch_column *c = sch_column_find(t, name);
    if (!c)
        sch_undefined_column(t, name, e);
    return c;
}

static bool is_pk_col(const sch_column *c)
{
    return c->kind == COL_PARTITION_KEY || c->kind == COL_CLUSTERING;
}

/* ---------------------------------------------------------------- attributes */

int cql__check_ttl(int64_t ttl, cs_error *e)
{
    if (ttl < 0)
        return cs_error_set(e, CS_ERR_INVALID, "A TTL must be greater or equal to 0, but was %lld",
                            (long long)ttl);
    if (ttl > CQL_MAX_TTL_S)
        return cs_error_set(e, CS_ERR_INVALID, "ttl is too large. requested (%lld) maximum (%d)",
                            (long long)ttl, CQL_MAX_TTL_S);
    return 0;
}

/* A TTL whose expiry (now_s + ttl_s) is past what a 32-bit local deletion
 * time holds (2038-01-19): refused as Cassandra 4.1 refuses it under its
 * default REJECT policy (ExpirationDateOverflowHandling, CASSANDRA-14092),
 * instead of an expiry that wraps negative (an expired write). */
static int check_expiry(const sch_table *t, int32_t ttl_s, bool is_default, int32_t now_s, cs_error *e)
{
    if (ttl_s <= 0 || (int64_t)now_s + ttl_s <= INT32_MAX)
        return 0;
    return cs_error_set(e, CS_ERR_INVALID,
                        "Request on table %s.%s with %sttl of %d seconds exceeds maximum supported expiration "
                        "date of 2038-01-19T03:14:06+00:00. In order to avoid this use a lower TTL, change the "
                        "expiration date overflow policy or upgrade to a version where this limitation is "
                        "fixed. See CASSANDRA-14092 for more details.",
                        t->ks->name, t->name, is_default ? "default " : "", ttl_s);
}

/* USING TIMESTAMP / TTL (Cassandra Attributes.getTimestamp/getTimeToLive). */
static int eval_attrs(cql_eval *ev, const ast_using *u, const sch_table *t, int64_t batch_ts,
                      int32_t now_s, cql_wplan *pl, cs_error *e)
{
    cql_value v;
    pl->ts_us = batch_ts;
    pl->ts_set = false;
    if (u->timestamp) {
        if (cql__term_eval(ev, u->timestamp, ctype_scalar(CT_BIGINT), "[timestamp]", &v, e) < 0)
            return CS_EUSER;
        if (v.len == CQL_NULL)
            return cs_error_set(e, CS_ERR_INVALID, "Invalid null value of timestamp");
        if (v.len != CQL_UNSET) {
            if (v.len != 8)
                return cs_error_set(e, CS_ERR_INVALID, "Invalid timestamp value");
            pl->ts_us = (int64_t)cs_be64(v.p);
            pl->ts_set = true;
        }
    }
    pl->ttl_s = t->default_ttl_s;
    bool is_default = true;
    if (u->ttl) {
        if (cql__term_eval(ev, u->ttl, ctype_scalar(CT_INT), "[ttl]", &v, e) < 0)
            return CS_EUSER;
        if (v.len == CQL_NULL || v.len == 0)
            pl->ttl_s = 0;
        else if (v.len != CQL_UNSET) {
            if (v.len != 4)
                return cs_error_set(e, CS_ERR_INVALID, "Invalid TTL value");
            int32_t ttl = (int32_t)cs_be32(v.p);
            if (cql__check_ttl(ttl, e) < 0)
                return CS_EUSER;
            pl->ttl_s = ttl;
            is_default = false;
        }
    }
    return check_expiry(t, pl->ttl_s, is_default, now_s, e);
}

/* ---------------------------------------------------------------- INSERT */

/* `col = value` for a key column of an INSERT, in blk (one per column). */
typedef struct eq_blk { ast_relation r; char *col; } eq_blk;
static ast_relation *eq_rel(eq_blk *blk, const char *col, ast_term *value)
{
    ast_relation *r = &blk->r;
    char **cols = &blk->col;
    cols[0] = (char *)col;
    r->kind = REL_COLUMN;
    r->op = OP_EQ;
    r->columns = cols;
    r->n_columns = 1;
    r->value = value;
    return r;
}

/* Add a value for a non-key column of an INSERT. */
static int insert_value(cql_wplan *pl, cs_arena *a, const sch_column *c, cql_value v, cs_error *e)
{
    cql_wop *op = &pl->ops[pl->n_ops++];
    memset(op, 0, sizeof *op);
    op->col = c;
    op->kind = SET_ASSIGN;
    op->val = v;
    if (c->kind == COL_STATIC)
        pl->has_static = true;
    else
        pl->has_regular = true;
    return 0;
}

/*
 * COMPACT STORAGE writes (UpdateStatement.addUpdateForKey, UpdateParameters
 * .newRow): no row marker, a row lives while its cell does.  A dense
 * table's write that sets no column sets the compact value: the hidden
 * empty one, or the declared one is mandatory; a single clustering column
 * may not be empty.  (A static compact table's INSERT of the key alone is
 * refused before: "Some clustering keys are missing: column1", as
 * StatementRestrictions refuses it.)
 */
static int compact_write(cql_eval *ev, cql_wplan *pl, cs_error *e)
{
    const sch_table *t = pl->t;
    pl->row_marker = false;
    if (t->compact != SCH_COMPACT_DENSE || !t->compact_value)
        return 0;
    if (pl->n_ops == 0) {
        if (!t->compact_value->hidden)
            return cs_error_set(e, CS_ERR_INVALID, "Column %s is mandatory for this COMPACT STORAGE table",
                                t->compact_value->name);
        cql_wop *ops = cs_arena_zalloc(ev->arena, sizeof *ops);
        if (!ops)
            return cs_error_set(e, CS_ERR_SERVER, "out of memory");
        ops[0].col = t->compact_value;
        ops[0].kind = SET_ASSIGN;
        ops[0].val = (cql_value){ (const uint8_t *)"", 0 };
        pl->ops = ops;
        pl->n_ops = 1;
        pl->has_regular = true;
    }
    if (t->n_ck == 1) {
        for (int j = 0; j < pl->w.n_cks; j++) {
            cs_buf raw;
            cs_buf_init(&raw);
            size_t off;
            int32_t len;
            int rc = sch_clustering_decode(t, pl->w.cks[j].p, (size_t)pl->w.cks[j].len, &raw, &off, &len);
            bool empty = rc == 0 && len == 0;
            cs_buf_destroy(&raw);
            if (empty)
                return cs_error_set(e, CS_ERR_INVALID, "Invalid empty or null value for column %s", t->ck[0]->name);
        }
    }
    return 0;
}

static int prep_insert(cql_eval *ev, cql_stmt *st, cql_wplan *pl, ast_relation ***rels_out,
                       int *n_rels, cs_error *e)
{
    const ast_insert *in = &st->u.insert;
    const sch_table *t = pl->t;
    if (t->is_counter)
        return cs_error_set(e, CS_ERR_INVALID,
                            "INSERT statements are not allowed on counter tables, use UPDATE instead");
    pl->if_not_exists = in->if_not_exists;
    pl->row_marker = true;
    if (in->json)
        return cql__insert_json(ev, st, pl, rels_out, n_rels, e);
    if (in->n_columns == 0)
        return cs_error_set(e, CS_ERR_INVALID, "No columns provided to INSERT");
    if (in->n_columns != in->n_values)
        return cs_error_set(e, CS_ERR_INVALID, "Unmatched column names/values");
    for (int i = 0; i < in->n_columns; i++)
        for (int j = 0; j < i; j++)
            if (strcmp(in->columns[i], in->columns[j]) == 0)
                return cs_error_set(e, CS_ERR_INVALID, "The column names contains duplicates");
    /* one zeroed block: relations, operations, the relations' storage */
    size_t n = (size_t)in->n_columns;
    uint8_t *blk = cs_arena_zalloc(ev->arena, (sizeof(ast_relation *) + sizeof(cql_wop) + sizeof(eq_blk)) * n);
    if (!blk)
        return cs_error_set(e, CS_ERR_SERVER, "out of memory");
    ast_relation **rels = (ast_relation **)blk;
    pl->ops = (cql_wop *)(blk + sizeof(ast_relation *) * n);
    eq_blk *eqs = (eq_blk *)(blk + (sizeof(ast_relation *) + sizeof(cql_wop)) * n);
    int nr = 0;
    for (int i = 0; i < in->n_columns; i++) {
        const sch_column *c = find_col(t, in->columns[i], e);
        if (!c)
            return CS_EUSER;
        if (is_pk_col(c)) {
            rels[nr] = eq_rel(&eqs[nr], c->name, in->values[i]);
            nr++;
            continue;
        }
        cql_value v;
        if (cql__term_eval(ev, in->values[i], c->type, c->name, &v, e) < 0)
            return CS_EUSER;
        insert_value(pl, ev->arena, c, v, e);
    }
    *rels_out = rels;
    *n_rels = nr;
    return 0;
}

/* ---------------------------------------------------------------- UPDATE */

/* Receiver type of an operation's value; *tmp gets a ref to unref later. */
static int prep_set_op(cql_eval *ev, const sch_table *t, const ast_set_op *sop, cql_wop *op,
                       cs_error *e)
{
    const sch_column *c = find_col(t, sop->column, e);
    if (!c)
        return CS_EUSER;
    if (is_pk_col(c))
        return cs_error_set(e, CS_ERR_INVALID, "PRIMARY KEY part %s found in SET part", c->name);
    const ctype *ty = c->type;
    int kind = sop->kind;
    if (kind == SET_ADD_ASSIGN) kind = SET_ADD;
    if (kind == SET_SUB_ASSIGN) kind = SET_SUB;
    op->col = c;
    op->kind = kind;
    bool coll = ctype_is_collection(ty);
    bool multi = ctype_is_multicell(ty);
    const ctype *recv = ty;
    ctype *owned = NULL;
    char name[300];
    snprintf(name, sizeof name, "%s", c->name);
    switch (kind) {
    case SET_ASSIGN:
        if (ty->kind == CT_COUNTER)
            return cs_error_set(e, CS_ERR_INVALID, "Cannot set the value of counter column %s "
                                "(counters can only be incremented/decremented, not set)", c->name);
        break;
    case SET_ADD:
    case SET_SUB:
        if (ty->kind == CT_COUNTER) {
            recv = ctype_scalar(CT_BIGINT);
            break;
        }
        if (!coll)
            return cs_error_set(e, CS_ERR_INVALID, "Invalid operation (%s) for non counter column %s",
                                op_str(ev->arena, sop), c->name);
        if (!multi)
            return cs_error_set(e, CS_ERR_INVALID, "Invalid operation (%s) for frozen collection column %s",
                                op_str(ev->arena, sop), c->name);
        if (kind == SET_SUB && ty->kind == CT_MAP)
            recv = owned = ctype_new_collection(CT_SET, ctype_ref(ty->sub[0]), NULL, false);
        break;
    case SET_PREPEND:
        if (ty->kind != CT_LIST)
            return cs_error_set(e, CS_ERR_INVALID, "Invalid operation (%s) for non list column %s",
                                op_str(ev->arena, sop), c->name);
        if (!multi)
            return cs_error_set(e, CS_ERR_INVALID, "Invalid operation (%s) for frozen list column %s",
                                op_str(ev->arena, sop), c->name);
        break;
    case SET_ELEMENT: {
        if (!coll)
            return cs_error_set(e, CS_ERR_INVALID, "Invalid operation (%s) for non collection column %s",
                                op_str(ev->arena, sop), c->name);
        if (!multi)
            return cs_error_set(e, CS_ERR_INVALID, "Invalid operation (%s) for frozen collection column %s",
                                op_str(ev->arena, sop), c->name);
        if (ty->kind == CT_SET)
            return cs_error_set(e, CS_ERR_INVALID, "Invalid operation (%s) for set column %s",
                                op_str(ev->arena, sop), c->name);
        const ctype *kt = ty->kind == CT_LIST ? ctype_scalar(CT_INT) : ty->sub[0];
        char kname[300];
        snprintf(kname, sizeof kname, "%s(%s)", ty->kind == CT_LIST ? "idx" : "key", c->name);
        if (cql__term_eval(ev, sop->key, kt, kname, &op->key, e) < 0)
            return CS_EUSER;
        recv = ty->kind == CT_LIST ? ty->sub[0] : ty->sub[1];
        snprintf(name, sizeof name, "value(%s)", c->name);
        break;
    }
    case SET_FIELD:
        if (ty->kind != CT_UDT)
            return cs_error_set(e, CS_ERR_INVALID, "Invalid operation (%s) for non-UDT column %s",
                                op_str(ev->arena, sop), c->name);
        if (!multi)
            return cs_error_set(e, CS_ERR_INVALID, "Invalid operation (%s) for frozen UDT column %s",
                                op_str(ev->arena, sop), c->name);
        op->field = udt_field_index(ty, sop->field);
        if (op->field < 0)
            return cs_error_set(e, CS_ERR_INVALID, "UDT column %s does not have a field named %s",
                                c->name, sop->field);
        recv = ty->sub[op->field];
        snprintf(name, sizeof name, "%s.%s", c->name, sop->field);
        break;
    default:
        return cs_error_set(e, CS_ERR_SERVER, "unknown SET operation");
    }
    int rc = cql__term_eval(ev, sop->value, recv, name, &op->val, e);
    if (owned)
        ctype_unref(owned);
    if (rc < 0)
        return CS_EUSER;
    if (ty->kind == CT_COUNTER && op->val.len == CQL_NULL)
        return cs_error_set(e, CS_ERR_INVALID, "Invalid null value for counter increment");
    return 0;
}

static int prep_update(cql_eval *ev, cql_stmt *st, cql_wplan *pl, cs_error *e)
{
    const ast_update *u = &st->u.update;
    pl->ops = cs_arena_zalloc(ev->arena, sizeof *pl->ops * (size_t)(u->n_sets ? u->n_sets : 1));
    if (!pl->ops)
        return cs_error_set(e, CS_ERR_SERVER, "out of memory");
    for (int i = 0; i < u->n_sets; i++) {
        cql_wop *op = &pl->ops[pl->n_ops];
        if (prep_set_op(ev, pl->t, &u->sets[i], op, e) < 0)
            return CS_EUSER;
        pl->n_ops++;
        if (op->col->kind == COL_STATIC)
            pl->has_static = true;
        else
            pl->has_regular = true;
    }
    pl->if_exists = u->if_exists;
    return 0;
}

/* ---------------------------------------------------------------- DELETE */

static int prep_delete(cql_eval *ev, cql_stmt *st, cql_wplan *pl, cs_error *e)
{
    const ast_delete *d = &st->u.del;
    pl->ops = cs_arena_zalloc(ev->arena, sizeof *pl->ops * (size_t)(d->n_targets ? d->n_targets : 1));
    if (!pl->ops)
        return cs_error_set(e, CS_ERR_SERVER, "out of memory");
    for (int i = 0; i < d->n_targets; i++) {
        const ast_delete_target *tg = &d->targets[i];
        cql_wop *op = &pl->ops[pl->n_ops];
        const sch_column *c = find_col(pl->t, tg->column, e);
        if (!c)
            return CS_EUSER;
        if (is_pk_col(c))
            return cs_error_set(e, CS_ERR_INVALID,
                                "Invalid identifier %s for deletion (should not be a PRIMARY KEY part)", c->name);
        op->col = c;
        const ctype *ty = c->type;
        if (tg->key) {
            if (!ctype_is_collection(ty))
                return cs_error_set(e, CS_ERR_INVALID, "Invalid deletion operation for non collection column %s", c->name);
            if (!ctype_is_multicell(ty))
                return cs_error_set(e, CS_ERR_INVALID, "Invalid deletion operation for frozen collection column %s", c->name);
            const ctype *kt = ty->kind == CT_LIST ? ctype_scalar(CT_INT) : ty->sub[0];
            char kname[300];
            snprintf(kname, sizeof kname, "%s(%s)", ty->kind == CT_LIST ? "idx" : ty->kind == CT_SET ? "value" : "key", c->name);
            if (cql__term_eval(ev, tg->key, kt, kname, &op->key, e) < 0)
                return CS_EUSER;
            op->kind = CQL_WOP_DEL_ELEM;
        } else if (tg->field) {
            if (ty->kind != CT_UDT)
                return cs_error_set(e, CS_ERR_INVALID, "Invalid field deletion operation for non-UDT column %s", c->name);
            if (!ctype_is_multicell(ty))
                return cs_error_set(e, CS_ERR_INVALID, "Frozen UDT column %s does not support field deletions", c->name);
            op->field = udt_field_index(ty, tg->field);
            if (op->field < 0)
                return cs_error_set(e, CS_ERR_INVALID, "UDT column %s does not have a field named %s", c->name, tg->field);
            op->kind = CQL_WOP_DEL_FIELD;
        } else
            op->kind = CQL_WOP_DEL_COLUMN;
        pl->n_ops++;
        if (c->kind == COL_STATIC)
            pl->has_static = true;
        else
            pl->has_regular = true;
    }
    pl->if_exists = d->if_exists;
    return 0;
}

/* ---------------------------------------------------------------- memo */

/*
 * The hot shapes (exec_int.h, cql_stmt_memo): an INSERT of values, an UPDATE
 * of `col = term` assignments, a DELETE of whole columns or rows, each
 * naming every key column by `=` (a point restriction), on a table without
 * counters, without IF.  What the general analysis below does for them
 * beyond evaluating terms (column lookups by name, duplicate and kind
 * checks, the WHERE rules) depends only on the statement and the table, so
 * after it succeeded once the memo keeps the columns and the terms in the
 * order they are evaluated, and wplan_bind only evaluates: the same checks
 * of the values, in the same order, hence the same errors.
 */
static void wmemo_record(cql_eval *ev, cql_stmt *st, const cql_wplan *pl, ast_relation **rels,
                         int n_rels)
{
    cql_stmt_memo *m = cql__stmt_memo_new(ev->ctx, st, pl->t, pl->n_ops + n_rels);
    if (!m || pl->is_counter || cql__wplan_is_lwt(pl) || pl->t->compact != SCH_COMPACT_NONE)
        return;                      /* compact tables: compact_write runs each time */
    const sch_table *t = pl->t;
    cql_keyterm *it = m->items;
    int n = 0;
    switch (st->kind) {
    case STMT_INSERT: {
        const ast_insert *in = &st->u.insert;
        if (in->json)
            return;
        for (int i = 0; i < in->n_columns; i++) {
            const sch_column *c = sch_column_find(t, in->columns[i]);
            if (!c)
                return;
            if (is_pk_col(c))
                continue;
            if (n >= pl->n_ops || pl->ops[n].col != c)
                return;
            it[n].col = c;
            it[n++].term = in->values[i];
        }
        break;
    }
    case STMT_UPDATE:
        for (int i = 0; i < st->u.update.n_sets; i++) {
            const ast_set_op *sop = &st->u.update.sets[i];
            /* (names past prep_set_op's 300-byte buffer would differ in messages) */
            if (sop->kind != SET_ASSIGN || i >= pl->n_ops || strlen(pl->ops[i].col->name) >= 300)
                return;
            it[n].col = pl->ops[i].col;
            it[n++].term = sop->value;
        }
        break;
    case STMT_DELETE:
        for (int i = 0; i < pl->n_ops; i++) {
            if (pl->ops[i].kind != CQL_WOP_DEL_COLUMN)
                return;
            it[n].col = pl->ops[i].col;
            it[n++].term = NULL;
        }
        break;
    default:
        return;
    }
    if (n != pl->n_ops)
        return;
    int n_ck = cql__where_point_keys(t, rels, n_rels,
                                     st->kind == STMT_DELETE ? CQL_WHERE_DELETE : CQL_WHERE_UPDATE, it + n);
    if (n_ck < 0)
        return;
    m->n_ops = n;
    m->n_keys = n_rels;
    m->n_ck = n_ck;
    m->has_regular = pl->has_regular;
    m->has_static = pl->has_static;
    m->point = true;
}

/* The plan of a hot-shape statement from its memo (pl's table, attributes
 * and counter flag already set): the values evaluated, nothing looked up. */
static int wplan_bind(cql_eval *ev, const cql_stmt *st, const cql_stmt_memo *m, cql_wplan *pl,
                      cs_error *e)
{
    pl->ops = cs_arena_zalloc(ev->arena, sizeof *pl->ops * (size_t)(m->n_ops ? m->n_ops : 1));
    if (!pl->ops)
        return cs_error_set(e, CS_ERR_SERVER, "out of memory");
    for (int i = 0; i < m->n_ops; i++) {
        cql_wop *op = &pl->ops[i];
        const sch_column *c = m->items[i].col;
        op->col = c;
        if (!m->items[i].term) {
            op->kind = CQL_WOP_DEL_COLUMN;
            continue;
        }
        op->kind = SET_ASSIGN;
        if (cql__term_eval(ev, m->items[i].term, c->type, c->name, &op->val, e) < 0)
            return CS_EUSER;
    }
    pl->n_ops = m->n_ops;
    pl->has_regular = m->has_regular;
    pl->has_static = m->has_static;
    pl->row_marker = st->kind == STMT_INSERT && pl->t->compact == SCH_COMPACT_NONE;
    cql_where_kind wk = st->kind == STMT_DELETE ? CQL_WHERE_DELETE : CQL_WHERE_UPDATE;
    if (cql__where_bind_point(ev, pl->t, m->items + m->n_ops, m->n_keys, m->n_ck, wk, &pl->w, e) < 0)
        return CS_EUSER;
    return 0;
}

/* ---------------------------------------------------------------- prepare */

int cql__wplan_prepare(cql_eval *ev, cql_stmt *st, int64_t batch_ts, int32_t now_s,
                       cql_wplan *pl, cs_error *e)
{
    memset(pl, 0, sizeof *pl);
    pl->st = st;
    const ast_qname *qn = st->kind == STMT_INSERT ? &st->u.insert.table
                        : st->kind == STMT_UPDATE ? &st->u.update.table : &st->u.del.table;
    const ast_using *us = st->kind == STMT_INSERT ? &st->u.insert.using
                        : st->kind == STMT_UPDATE ? &st->u.update.using : &st->u.del.using;
    sch_table *t = cql__table_cached(ev->ctx, qn, ev->sess ? ev->sess->keyspace : "", e);
    if (!t)
        return CS_EUSER;
    pl->t = t;
    if (t->is_view)
        return cs_error_set(e, CS_ERR_INVALID, "Cannot directly modify a materialized view");
    if (t->is_virtual || !t->st)   /* AbstractVirtualTable.apply */
        return cs_error_set(e, CS_ERR_INVALID, "Modification is not supported by table %s.%s",
                            t->ks->name, t->name);
    /* Cassandra lets a superuser write system tables; here the catalog owns
     * them (their rows are the schema), so refuse like its DDL guard. */
    if (t->is_system)
        return cs_error_set(e, CS_ERR_UNAUTHORIZED, "%s keyspace is not user-modifiable.", t->ks->name);
    pl->is_counter = t->is_counter;
    ev->ks = t->ks->name;
    if (eval_attrs(ev, us, t, batch_ts, now_s, pl, e) < 0)
        return CS_EUSER;
    cql_stmt_memo *memo = cql__stmt_memo(ev->ctx, st, t);
    if (memo && memo->point)
        return wplan_bind(ev, st, memo, pl, e);

    ast_relation **rels = NULL;
    int n_rels = 0;
    const ast_condition *conds = NULL;
    int n_conds = 0;
    int rc;
    cql_where_kind wk = CQL_WHERE_UPDATE;
    switch (st->kind) {
    case STMT_INSERT:
        rc = prep_insert(ev, st, pl, &rels, &n_rels, e);
        break;
    case STMT_UPDATE:
        rc = prep_update(ev, st, pl, e);
        rels = st->u.update.where; n_rels = st->u.update.n_where;
        conds = st->u.update.conds; n_conds = st->u.update.n_conds;
        break;
    case STMT_DELETE:
        rc = prep_delete(ev, st, pl, e);
        rels = st->u.del.where; n_rels = st->u.del.n_where;
        conds = st->u.del.conds; n_conds = st->u.del.n_conds;
        wk = CQL_WHERE_DELETE;
        break;
    default:
        return cs_error_set(e, CS_ERR_SERVER, "not a modification statement");
    }
    if (rc < 0)
        return CS_EUSER;
    if (cql__wplan_conds(ev, conds, n_conds, pl, e) < 0)
        return CS_EUSER;
    bool lwt = cql__wplan_is_lwt(pl);
    if (pl->is_counter) {
        if (pl->ts_set)
            return cs_error_set(e, CS_ERR_INVALID, "Cannot provide custom timestamp for counter updates");
        if (st->kind == STMT_UPDATE && st->u.update.using.ttl)
            return cs_error_set(e, CS_ERR_INVALID, "Cannot provide custom TTL for counter updates");
        if (lwt)
            return cs_error_set(e, CS_ERR_INVALID, "Conditional updates are not supported on counter tables");
        pl->ttl_s = 0;
    }
    if (lwt && pl->ts_set)
        return cs_error_set(e, CS_ERR_INVALID, "Cannot provide custom timestamp for conditional updates");

    /* Static-only when the statement touches static columns only (or an
     * INSERT names no clustering column). */
    bool static_only = pl->has_static && !pl->has_regular;
    for (int i = 0; i < pl->n_conds; i++)
        if (pl->conds[i].col->kind != COL_STATIC)
            static_only = false;
    if (st->kind == STMT_INSERT && t->n_ck > 0) {
        bool any_ck = false;
        for (int i = 0; i < n_rels; i++)
            for (int j = 0; j < t->n_ck; j++)
                if (strcmp(rels[i]->columns[0], t->ck[j]->name) == 0)
                    any_ck = true;
        if (any_ck)
            static_only = false;
    }
    if (st->kind == STMT_DELETE && pl->n_ops == 0)
        static_only = false;
    int flags = (static_only ? CQL_WHERE_STATIC_ONLY : 0) | (lwt ? CQL_WHERE_LWT : 0);
    if (cql__where_analyze(ev, t, rels, n_rels, wk, flags, &pl->w, e) < 0)
        return CS_EUSER;
    if (!pl->w.pk_all)
        return cs_error_set(e, CS_ERR_INVALID, "Some partition key parts are missing");
    if (static_only && st->kind == STMT_INSERT)
        pl->has_regular = false;
    else if (st->kind == STMT_INSERT && t->n_ck > 0 && !pl->w.ck_all && pl->w.n_cks == 0)
        return cs_error_set(e, CS_ERR_INVALID, "Some clustering keys are missing: %s", t->ck[0]->name);
    if (t->compact != SCH_COMPACT_NONE && st->kind != STMT_DELETE && compact_write(ev, pl, e) < 0)
        return CS_EUSER;
    if (lwt) {
        if (pl->w.n_pks > 1 || pl->w.has_in_pk)
            return cs_error_set(e, CS_ERR_INVALID, "IN on the partition key is not supported with conditional %s",
                                st->kind == STMT_DELETE ? "deletions" : "updates");
        if (pl->w.n_cks > 1 || pl->w.has_in_ck)
            return cs_error_set(e, CS_ERR_INVALID, "IN on the clustering key columns is not supported with conditional %s",
                                st->kind == STMT_DELETE ? "deletions" : "updates");
        if (st->kind == STMT_DELETE && t->n_ck > 0 && !pl->w.ck_all && !static_only) {
            /* a whole-row DELETE (no columns named) applies to the regular
             * columns too (Cassandra's Operations.appliesToRegularColumns) */
            if (pl->has_regular || pl->n_ops == 0)
                return cs_error_set(e, CS_ERR_INVALID, "DELETE statements must restrict all PRIMARY KEY columns "
                                    "with equality relations in order to delete non static columns");
            for (int i = 0; i < pl->n_conds; i++)
                if (pl->conds[i].col->kind != COL_STATIC)
                    return cs_error_set(e, CS_ERR_INVALID, "DELETE statements must restrict all PRIMARY KEY columns "
                                        "with equality relations in order to use IF condition on non static columns");
        }
    }
    (void)now_s;
    if (!memo)
        wmemo_record(ev, st, pl, rels, n_rels);
    return 0;
}

/* ---------------------------------------------------------------- apply */

static int apply_op(cql_wrow *w, const cql_wop *op, bool is_counter, cs_error *e)
{
    const sch_column *c = op->col;
    switch (op->kind) {
    case SET_ASSIGN:
        return cql__w_set_value(w, c, op->val, e);
    case SET_ADD:
    case SET_SUB:
        if (c->type->kind == CT_COUNTER) {
            if (op->val.len == CQL_UNSET)
                return 0;
            if (op->val.len != 8)
                return cs_error_set(e, CS_ERR_INVALID, "Invalid counter increment");
            int64_t d = (int64_t)cs_be64(op->val.p);
            if (op->kind == SET_SUB)
                d = (int64_t)(0 - (uint64_t)d);
            return cql__counter_add(w, c, d, e);
        }
        return op->kind == SET_ADD ? cql__w_coll_add(w, c, op->val, e) : cql__w_coll_sub(w, c, op->val, e);
    case SET_PREPEND:
        return cql__w_list_prepend(w, c, op->val, e);
    case SET_ELEMENT:
        return cql__w_elem_set(w, c, op->key, op->val, e);
    case SET_FIELD:
        return cql__w_field_set(w, c, op->field, op->val, e);
    case CQL_WOP_DEL_COLUMN:
        return cql__w_column_delete(w, c, e);
    case CQL_WOP_DEL_ELEM:
        return cql__w_elem_delete(w, c, op->key, e);
    case CQL_WOP_DEL_FIELD:
        return cql__w_field_delete(w, c, op->field, e);
    }
    (void)is_counter;
    return cs_error_set(e, CS_ERR_SERVER, "unknown operation");
}

static int apply_ops(cql_wrow *w, const cql_wplan *pl, bool statics, cs_error *e)
{
    for (int i = 0; i < pl->n_ops; i++) {
        const cql_wop *op = &pl->ops[i];
        if ((op->col->kind == COL_STATIC) != statics)
            continue;
        if (apply_op(w, op, pl->is_counter, e) < 0)
            return CS_EUSER;
    }
    return 0;
}

/* DELETE without columns: partition, rows or ranges. */
static void apply_row_deletes(cql_wbatch *b, const cql_wplan *pl, cql_wrow *w)
{
    st_deletion d = { pl->ts_us, b->now_s };
    const sch_table *t = pl->t;
    if (t->n_ck == 0 || (!pl->w.ck_all && !pl->w.ck_restricted && pl->w.n_slices == 0)) {
        st_mut_partition_delete(b->m, d);
        return;
    }
    if (pl->w.ck_all) {
        for (int j = 0; j < pl->w.n_cks; j++) {
            st_mut_row(b->m, pl->w.cks[j].p, (uint32_t)pl->w.cks[j].len, 0);
            st_mut_row_delete(b->m, d);
        }
        return;
    }
    for (int j = 0; j < pl->w.n_slices; j++)
        st_mut_range_delete(b->m, pl->w.slices[j].start, pl->w.slices[j].end, d);
    (void)w;
}

int cql__wplan_apply(cql_wbatch *b, const cql_wplan *pl, cs_error *e)
{
    const sch_table *t = pl->t;
    const cql_where *wh = &pl->w;
    if (wh->empty)
        return 0;
    for (int i = 0; i < wh->n_pks; i++) {
        const cql_value *pk = &wh->pks[i];
        if (pk->len == 0)
            return cs_error_set(e, CS_ERR_INVALID, "Key may not be empty");
        if (pk->len > 65535)
            return cs_error_set(e, CS_ERR_INVALID, "Key length of %d is longer than maximum of 65535", pk->len);
        if (cql__wbatch_partition(b, t, pk->p, (uint32_t)pk->len) < 0)
            return cs_error_set(e, CS_ERR_SERVER, "out of memory");
        cql_wrow w = { .b = b, .t = t, .pk = pk->p, .pk_len = (uint32_t)pk->len,
                       .ts_us = pl->ts_us, .ttl_s = pl->ttl_s };
        if (pl->st->kind == STMT_DELETE && pl->n_ops == 0) {
            apply_row_deletes(b, pl, &w);
            continue;
        }
        if (pl->st->kind == STMT_DELETE && pl->has_regular && t->n_ck > 0 && !wh->ck_all)
            return cs_error_set(e, CS_ERR_INVALID, "Range deletions are not supported for specific columns");
        if (pl->has_static) {
            w.is_static = true;
            w.ck = NULL; w.ck_len = 0;
            cql__wrow_start(&w);
            if (apply_ops(&w, pl, true, e) < 0)
                return CS_EUSER;
        }
        if (!pl->has_regular && !(pl->row_marker && (t->n_ck == 0 || wh->n_cks > 0)))
            continue;
        int n_cks = t->n_ck == 0 ? 1 : wh->n_cks;
        for (int j = 0; j < n_cks; j++) {
            w.is_static = false;
            w.ck = t->n_ck == 0 ? NULL : wh->cks[j].p;
            w.ck_len = t->n_ck == 0 ? 0 : (uint32_t)wh->cks[j].len;
            if (w.ck_len > 65535)
                return cs_error_set(e, CS_ERR_INVALID, "Key length of %u is longer than maximum of 65535", w.ck_len);
            cql__wrow_start(&w);
            if (pl->row_marker) {
                st_liveness lv = { pl->ts_us, pl->ttl_s, pl->ttl_s > 0 ? b->now_s + pl->ttl_s : 0 };
                st_mut_row_liveness(b->m, lv);
            }
            if (apply_ops(&w, pl, false, e) < 0)
                return CS_EUSER;
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- entry point */

int cql_exec_modify(cql_ctx *ctx, cql_session *s, cql_stmt *st, const cql_params *p,
                    cql_result *r, cs_error *e)
{
    cql_batch_entry ent = { st, p->values, p->n_values, NULL };
    return cql__exec_writes(ctx, s, -1, NULL, &ent, 1, p, r, e);
}
