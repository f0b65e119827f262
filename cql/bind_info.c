/*
 * bind_info.c: the receiver of every bind marker of a statement, as the
 * PREPARED result's metadata reports it (spec v4 §4.2.5.4), and the v4
 * pk_indexes.  Owner: exec-read.  Caller: prepared.c.
 *
 * Receiver names follow Cassandra: the column name for `col = ?`, "in(col)"
 * for `col IN ?`, "value(col)"/"key(col)"/"idx(col)" for collection elements,
 * "partition key token" for token(...) relations, "[limit]",
 * "[per_partition_limit]", "[ttl]", "[timestamp]", "[json]", "argN" for
 * function arguments, "(c1,c2)" and "in((c1,c2))" for multi-column relations.
 */
#include <stdio.h>
#include <ctype.h>
#include <string.h>
#include <strings.h>
#include "cql/exec_int.h"
#include "common/alloc.h"

typedef struct walker {
    cql_bind_info *bi;
    const sch_table *t;
    cs_error *e;
    int16_t pk_marker[16];
} walker;

static void set_spec(walker *w, int idx, const char *name, const ctype *type)
{
    if (idx < 0 || idx >= w->bi->n || w->bi->specs[idx].name)
        return;
    cql_bind_spec *s = &w->bi->specs[idx];
    s->ks = w->t ? w->t->ks->name : "";
    s->table = w->t ? w->t->name : "";
    s->name = cs_strdup(name);
    s->type = ctype_ref(type ? type : ctype_scalar(CT_BLOB));
}

/* Lists/Sets/Maps.Literal.prepare: no marker inside a collection literal's
 * elements, however deep (a tuple or UDT literal of its own may hold
 * them); refused as the statement is prepared.  Returns whether it
 * refused. */
static bool marker_inside(walker *w, const ast_term *t, const char *name, const ctype *type)
{
    for (int i = 0; i < t->n_elems; i++)
        if (cql__term_has_marker(t->elems[i])) {   /* at any depth: Term.containsBindMarker */
            const char *what = t->kind == TERM_LIST ? "list"
                               : t->kind == TERM_SET && !(type && type->kind == CT_MAP) ? "set" : "map";
            if (!cs_error_isset(w->e))
                cs_error_set(w->e, CS_ERR_INVALID,
                             "Invalid %s literal for %s: bind variables are not supported inside collection literals", what,
                             name);
            return true;
        }
    return false;
}

static void walk_term(walker *w, const ast_term *t, const char *name, const ctype *type);

/* Visit every marker inside a term whose receiver is (name, type). */
static void walk_term(walker *w, const ast_term *t, const char *name, const ctype *type)
{
    char nb[300];
    if (!t)
        return;
    switch (t->kind) {
    case TERM_BIND:
        set_spec(w, t->bind.index, t->bind.name ? t->bind.name : name, type);
        break;
    case TERM_LIST:
    case TERM_SET:
        if (marker_inside(w, t, name, type))
            return;
        snprintf(nb, sizeof(nb), "value(%s)", name);
        for (int i = 0; i < t->n_elems; i++)
            walk_term(w, t->elems[i], nb,
                      type && ctype_is_collection(type) ? type->sub[0] : NULL);
        break;
    case TERM_MAP:
        if (marker_inside(w, t, name, type))
            return;
        for (int i = 0; i < t->n_elems; i++) {
            snprintf(nb, sizeof(nb), "%s(%s)", i % 2 ? "value" : "key", name);
            walk_term(w, t->elems[i], nb,
                      type && type->kind == CT_MAP ? type->sub[i % 2] : NULL);
        }
        break;
    case TERM_TUPLE:
        for (int i = 0; i < t->n_elems; i++) {
            snprintf(nb, sizeof(nb), "%s[%d]", name, i);
            walk_term(w, t->elems[i], nb,
                      type && type->kind == CT_TUPLE && i < type->n_sub ? type->sub[i] : NULL);
        }
        break;
    case TERM_UDT:
        for (int i = 0; i < t->n_elems; i++) {
            const ctype *ft = NULL;
            for (int j = 0; type && type->kind == CT_UDT && j < type->n_sub; j++)
                if (!strcmp(type->field_names[j], t->field_names[i]))
                    ft = type->sub[j];
            snprintf(nb, sizeof(nb), "%s.%s", name, t->field_names[i]);
            walk_term(w, t->elems[i], nb, ft);
        }
        break;
    case TERM_FUNC:
        for (int i = 0; i < t->n_elems; i++) {
            /* FunctionResolver.makeArgSpec: "arg0(system.totimestamp)" */
            snprintf(nb, sizeof(nb), "arg%d(%s.%s)", i, t->func.ks ? t->func.ks : "system", t->func.name);
            for (char *q = nb; *q; q++)
                *q = (char)tolower((unsigned char)*q);
            /* token()'s arguments are the partition key's columns */
            const ctype *pt = w->t && !strcasecmp(t->func.name, "token") && t->n_elems == w->t->n_pk
                                  ? w->t->pk[i]->type
                                  : cql__fn_param_type(t->func.name, i, t->n_elems, type);
            walk_term(w, t->elems[i], nb, pt);
        }
        break;
    case TERM_CAST: {
        cs_error e2;
        cs_error_init(&e2);
        ctype *ct = ctype_parse(t->cast_type, w->t ? w->t->ks->name : NULL, NULL, NULL, &e2);
        walk_term(w, t->elems[0], name, ct ? ct : type);
        if (ct)
            ctype_unref(ct);
        break;
    }
    case TERM_NEG:
        walk_term(w, t->elems[0], name, type);
        break;
    default:
        break;
    }
}

static const sch_column *need_col(walker *w, const char *name)
{
    const sch_column *c = sch_column_find(w->t, name);
    if (!c)
        sch_undefined_column(w->t, name, w->e);
    return c;
}

/* Element receiver of a collection column: key(m)/idx(l) or value(c). */
static void walk_elem_key(walker *w, const sch_column *c, const ast_term *key)
{
    char nb[300];
    if (c->type->kind == CT_LIST) {
        snprintf(nb, sizeof(nb), "idx(%s)", c->name);
        walk_term(w, key, nb, ctype_scalar(CT_INT));
    } else if (c->type->kind == CT_MAP || c->type->kind == CT_SET) {
        snprintf(nb, sizeof(nb), "key(%s)", c->name);
        walk_term(w, key, nb, c->type->sub[0]);
    } else
        walk_term(w, key, c->name, c->type);
}

static void walk_elem_value(walker *w, const sch_column *c, const ast_term *v)
{
    char nb[300];
    snprintf(nb, sizeof(nb), "value(%s)", c->name);
    const ctype *vt = c->type->kind == CT_MAP ? c->type->sub[1]
                      : c->type->kind == CT_LIST || c->type->kind == CT_SET ? c->type->sub[0] : c->type;
    walk_term(w, v, nb, vt);
}

static void walk_in(walker *w, const char *name, const ctype *type, const ast_term *marker,
                    ast_term **in, int n_in, bool in_marker)
{
    char nb[300];
    if (in_marker) {
        snprintf(nb, sizeof(nb), "in(%s)", name);
        ctype *lt = ctype_new_collection(CT_LIST, ctype_ref(type), NULL, false);
        walk_term(w, marker, nb, lt);
        if (lt)
            ctype_unref(lt);
    } else
        for (int i = 0; i < n_in; i++)
            walk_term(w, in[i], name, type);
}

static void walk_relations(walker *w, ast_relation **rels, int n)
{
    char nb[600];
    for (int i = 0; i < n && !cs_error_isset(w->e); i++) {
        const ast_relation *r = rels[i];
        if (r->kind == REL_TOKEN) {
            walk_term(w, r->value, "partition key token", ctype_scalar(CT_BIGINT));
            continue;
        }
        if (r->kind == REL_MULTI) {
            ctype *sub[32];
            int m = r->n_columns < 32 ? r->n_columns : 32;
            size_t off = (size_t)snprintf(nb, sizeof(nb), "(");
            for (int j = 0; j < m; j++) {
                const sch_column *c = need_col(w, r->columns[j]);
                if (!c) {
                    while (j-- > 0)
                        ctype_unref(sub[j]);
                    return;
                }
                sub[j] = ctype_ref(c->type);
                off += (size_t)snprintf(nb + off, sizeof(nb) - off, "%s%s", j ? "," : "", c->name);
            }
            snprintf(nb + off, sizeof(nb) - off, ")");
            ctype *tt = ctype_new_tuple(sub, m);
            /* a tuple literal's elements take the columns' own receivers */
            const ast_term *one[1] = { r->value };
            const ast_term *const *lits = r->op == OP_IN && !r->in_marker ? (const ast_term *const *)r->in : one;
            int nl = r->op == OP_IN && !r->in_marker ? r->n_in : 1;
            bool done = false;
            if (r->op != OP_IN || !r->in_marker) {
                done = true;
                for (int k = 0; k < nl; k++) {
                    const ast_term *lt = lits[k];
                    if (lt && lt->kind == TERM_TUPLE) {
                        for (int j = 0; j < lt->n_elems && j < m; j++) {
                            const sch_column *c = sch_column_find(w->t, r->columns[j]);
                            walk_term(w, lt->elems[j], c ? c->name : nb, c ? c->type : NULL);
                        }
                    } else
                        walk_term(w, lt, nb, tt);
                }
            }
            if (!done)
                walk_in(w, nb, tt, r->value, r->in, r->n_in, r->in_marker);
            if (tt)
                ctype_unref(tt);
            continue;
        }
        const sch_column *c = need_col(w, r->columns[0]);
        if (!c)
            return;
        if (r->kind == REL_ELEMENT) {
            walk_elem_key(w, c, r->key);
            walk_elem_value(w, c, r->value);
            continue;
        }
        switch (r->op) {
        case OP_IN:
            walk_in(w, c->name, c->type, r->value, r->in, r->n_in, r->in_marker);
            break;
        case OP_CONTAINS:
            walk_elem_value(w, c, r->value);
            break;
        case OP_CONTAINS_KEY:
            walk_elem_key(w, c, r->value);
            break;
        default:
            walk_term(w, r->value, c->name, c->type);
            if (r->op == OP_EQ && c->kind == COL_PARTITION_KEY && r->value &&
                r->value->kind == TERM_BIND && c->position < 16)
                w->pk_marker[c->position] = (int16_t)r->value->bind.index;
        }
    }
}

/* Markers inside selectors: a collection element or slice takes the
 * map's key type ("key(m)") or the set's element type ("value(s)")
 * (Selectable.specForElementOrSlice); function arguments their
 * parameters'.  Others stay untyped blobs (below). */
static void walk_selector(walker *w, const ast_selector *s)
{
    if (!s || !w->t)
        return;
    for (int i = 0; i < s->n_args; i++)
        walk_selector(w, s->args[i]);
    if (s->kind == SEL_FUNC) {   /* a marker argument: the parameter's type, named "[selection]" (Selectable.WithTerm) */
        const ctype *a0 = NULL;
        if (s->n_args > 0 && s->args[0]->kind == SEL_COLUMN) {
            const sch_column *c = sch_column_find(w->t, s->args[0]->column);
            a0 = c ? c->type : NULL;
        }
        for (int i = 0; i < s->n_args; i++) {
            const ast_selector *a = s->args[i];
            const ctype *pt = a->kind == SEL_TERM && a->term && a->term->kind == TERM_BIND
                                  ? cql__fn_sel_param_type(s->func.name, i, s->n_args, a0) : NULL;
            if (pt)
                walk_term(w, a->term, "[selection]", pt);
        }
    }
    if ((s->kind == SEL_ELEMENT || s->kind == SEL_SLICE) && s->n_args == 1 && s->args[0]->kind == SEL_COLUMN) {
        const sch_column *c = sch_column_find(w->t, s->args[0]->column);
        if (!c || (c->type->kind != CT_MAP && c->type->kind != CT_SET))
            return;
        char nb[300];
        snprintf(nb, sizeof(nb), "%s(%s)", c->type->kind == CT_MAP ? "key" : "value", c->name);
        walk_term(w, s->term, nb, c->type->sub[0]);
        walk_term(w, s->term2, nb, c->type->sub[0]);
    }
}

static void walk_using(walker *w, const ast_using *u)
{
    walk_term(w, u->ttl, "[ttl]", ctype_scalar(CT_INT));
    walk_term(w, u->timestamp, "[timestamp]", ctype_scalar(CT_BIGINT));
}

static void walk_conditions(walker *w, const ast_condition *cs, int n)
{
    for (int i = 0; i < n && !cs_error_isset(w->e); i++) {
        const ast_condition *c = &cs[i];
        const sch_column *col = need_col(w, c->column);
        if (!col)
            return;
        if (c->elem) {
            walk_elem_key(w, col, c->elem);
            if (c->op == OP_IN) {
                for (int j = 0; j < c->n_in; j++)
                    walk_elem_value(w, col, c->in[j]);
                if (c->in_marker)
                    walk_elem_value(w, col, c->value);
            } else
                walk_elem_value(w, col, c->value);
            continue;
        }
        const ctype *ty = col->type;
        char nb[300];
        snprintf(nb, sizeof(nb), "%s", col->name);
        if (c->field && ty->kind == CT_UDT) {
            for (int j = 0; j < ty->n_sub; j++)
                if (!strcmp(ty->field_names[j], c->field))
                    ty = ty->sub[j];
            snprintf(nb, sizeof(nb), "%s.%s", col->name, c->field);
        }
        if (c->op == OP_IN)
            walk_in(w, nb, ty, c->value, c->in, c->n_in, c->in_marker);
        else if (c->op == OP_CONTAINS)
            walk_elem_value(w, col, c->value);
        else if (c->op == OP_CONTAINS_KEY)
            walk_elem_key(w, col, c->value);
        else
            walk_term(w, c->value, nb, ty);
    }
}

static void walk_update_sets(walker *w, const ast_update *u)
{
    for (int i = 0; i < u->n_sets && !cs_error_isset(w->e); i++) {
        const ast_set_op *s = &u->sets[i];
        const sch_column *c = need_col(w, s->column);
        if (!c)
            return;
        switch (s->kind) {
        case SET_ELEMENT:
            walk_elem_key(w, c, s->key);
            walk_elem_value(w, c, s->value);
            break;
        case SET_FIELD: {
            const ctype *ft = NULL;
            for (int j = 0; c->type->kind == CT_UDT && j < c->type->n_sub; j++)
                if (!strcmp(c->type->field_names[j], s->field))
                    ft = c->type->sub[j];
            char nb[300];
            snprintf(nb, sizeof(nb), "%s.%s", c->name, s->field);
            walk_term(w, s->value, nb, ft);
            break;
        }
        case SET_SUB:
        case SET_SUB_ASSIGN:
            if (c->type->kind == CT_MAP) {
                ctype *st = ctype_new_collection(CT_SET, ctype_ref(c->type->sub[0]), NULL, false);
                walk_term(w, s->value, c->name, st);
                if (st)
                    ctype_unref(st);
                break;
            }
            /* fall through */
        default:
            walk_term(w, s->value, c->name, c->type);
        }
    }
}

static int walk_stmt(walker *w, cql_ctx *ctx, const cql_session *s, cql_stmt *st)
{
    const ast_qname *qn = cql__stmt_table(st);
    if (st->kind == STMT_BATCH) {
        walk_using(w, &st->u.batch.using);
        for (int i = 0; i < st->u.batch.n_stmts; i++) {
            int rc = walk_stmt(w, ctx, s, st->u.batch.stmts[i]);
            if (rc)
                return rc;
        }
        return 0;
    }
    if (!qn)
        return 0;
    const sch_table *t = sch_resolve_table(ctx->cat, qn->ks, qn->name, s->keyspace, w->e);
    if (!t)
        return CS_EUSER;
    w->t = t;
    if (!w->bi->table)
        w->bi->table = t;
    switch (st->kind) {
    case STMT_SELECT: {
        const ast_select *sel = &st->u.select;
        for (int i = 0; i < sel->n_sels && !cs_error_isset(w->e); i++)
            walk_selector(w, sel->sels[i]);
        for (int i = 0; sel->group_sels && i < sel->n_group_by && !cs_error_isset(w->e); i++)
            walk_selector(w, sel->group_sels[i]);
        walk_relations(w, sel->where, sel->n_where);
        walk_term(w, sel->per_partition_limit, "[per_partition_limit]", ctype_scalar(CT_INT));
        walk_term(w, sel->limit, "[limit]", ctype_scalar(CT_INT));
        break;
    }
    case STMT_INSERT: {
        const ast_insert *in = &st->u.insert;
        if (in->json)
            walk_term(w, in->json, "[json]", ctype_scalar(CT_VARCHAR));
        for (int i = 0; i < in->n_columns && i < in->n_values && !cs_error_isset(w->e); i++) {
            const sch_column *c = need_col(w, in->columns[i]);
            if (!c)
                break;
            walk_term(w, in->values[i], c->name, c->type);
            if (c->kind == COL_PARTITION_KEY && in->values[i]->kind == TERM_BIND && c->position < 16)
                w->pk_marker[c->position] = (int16_t)in->values[i]->bind.index;
        }
        walk_using(w, &in->using);
        break;
    }
    case STMT_UPDATE: {
        const ast_update *u = &st->u.update;
        walk_using(w, &u->using);
        walk_update_sets(w, u);
        walk_relations(w, u->where, u->n_where);
        walk_conditions(w, u->conds, u->n_conds);
        break;
    }
    case STMT_DELETE: {
        const ast_delete *d = &st->u.del;
        for (int i = 0; i < d->n_targets && !cs_error_isset(w->e); i++) {
            if (!d->targets[i].key)
                continue;
            const sch_column *c = need_col(w, d->targets[i].column);
            if (c)
                walk_elem_key(w, c, d->targets[i].key);
        }
        walk_using(w, &d->using);
        walk_relations(w, d->where, d->n_where);
        walk_conditions(w, d->conds, d->n_conds);
        break;
    }
    default:
        break;
    }
    return cs_error_isset(w->e) ? CS_EUSER : 0;
}

int cql__bind_info(cql_ctx *ctx, const cql_session *s, cql_stmt *st, cql_bind_info *out,
                   cs_error *e)
{
    memset(out, 0, sizeof(*out));
    out->n = st->n_binds;
    if (out->n > 0) {
        out->specs = cs_calloc((size_t)out->n, sizeof(cql_bind_spec));
        if (!out->specs)
            return cs_error_set(e, CS_ERR_SERVER, "out of memory");
    }
    walker w;
    memset(&w, 0, sizeof(w));
    w.bi = out;
    w.e = e;
    for (int i = 0; i < 16; i++)
        w.pk_marker[i] = -1;
    int rc = walk_stmt(&w, ctx, s, st);
    if (rc) {
        cql__bind_info_destroy(out);
        return rc;
    }
    /* markers not reached (e.g. selectors): untyped blob receivers */
    for (int i = 0; i < out->n; i++)
        if (!out->specs[i].name) {
            char nb[32];
            snprintf(nb, sizeof(nb), "arg%d", i);
            set_spec(&w, i, st->bind_names && st->bind_names[i] ? st->bind_names[i] : nb, NULL);
        }
    if (out->table && st->kind != STMT_BATCH) {
        const sch_table *t = out->table;
        bool all = t->n_pk <= 16;
        for (int i = 0; all && i < t->n_pk; i++)
            if (w.pk_marker[i] < 0)
                all = false;
        if (all) {
            out->n_pk = t->n_pk;
            for (int i = 0; i < t->n_pk; i++)
                out->pk_index[i] = (uint16_t)w.pk_marker[i];
        }
    }
    return 0;
}

void cql__bind_info_destroy(cql_bind_info *bi)
{
    for (int i = 0; bi->specs && i < bi->n; i++) {
        cs_free(bi->specs[i].name);
        if (bi->specs[i].type)
            ctype_unref(bi->specs[i].type);
    }
    cs_free(bi->specs);
    bi->specs = NULL;
    bi->n = 0;
}
