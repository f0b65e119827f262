/*
 * bind.c: term evaluation (literals, bind markers, collection / tuple / UDT
 * literals, function calls, casts, negation) against a receiver type.
 * Owner: exec-read.  Callers: restrict.c, exec_select.c and the write side
 * (exec_modify.c, lwt.c, exec_batch.c) through exec_int.h.
 *
 * Every produced value is in the native-protocol serialization and lives in
 * ev->arena.  Collection literals are normalised as Cassandra stores them:
 * sets sorted and deduplicated by the element comparator, maps sorted by key
 * (a repeated key keeps the last value).
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "cql/exec_int.h"
#include "common/alloc.h"
#include "common/util.h"

void cql__eval_init(cql_eval *ev, cql_ctx *ctx, cql_session *s, const char *ks,
                    const cql_value *vals, int n_vals, cs_arena *arena)
{
    memset(ev, 0, sizeof(*ev));
    ev->ctx = ctx;
    ev->sess = s;
    ev->ks = ks;
    ev->vals = vals;
    ev->n_vals = n_vals;
    ev->arena = arena;
    ev->now_us = 0;   /* read on first use (cql__eval_now_us) */
}

int64_t cql__eval_now_us(cql_eval *ev)
{
    if (!ev->now_us)
        ev->now_us = cs_now_us();
    return ev->now_us;
}

/* Copy a buffer's bytes into the arena as a value. */
static int buf_to_value(cql_eval *ev, cs_buf *b, cql_value *out, cs_error *e)
{
    if (b->err)
        return cs_error_set(e, CS_ERR_SERVER, "out of memory");
    out->len = (int32_t)b->len;
    out->p = b->len ? cs_arena_memdup(ev->arena, b->p, b->len) : (const uint8_t *)"";
    if (b->len && !out->p)
        return cs_error_set(e, CS_ERR_SERVER, "out of memory");
    return 0;
}

/* The CQL text of a type, in a static-per-call buffer for messages. */
static const char *type_text(const ctype *t, char *buf, size_t n)
{
    cs_buf b;
    cs_buf_init(&b);
    ctype_to_cql(t, &b);
    snprintf(buf, n, "%.*s", (int)b.len, b.p ? (const char *)b.p : "");
    cs_buf_destroy(&b);
    return buf;
}


/* ---------------------------------------------------------------- collections */

static void tt_put(cs_buf *b, const char *s) { cs_buf_put(b, s, strlen(s)); }

/* A relation's operand as CQL text, for messages ("b != 5"), as Cassandra
 * prints its raw terms: strings quoted, markers as ?, collections with
 * their brackets. */
void cql__term_text(const ast_term *t, cs_buf *b)
{
    if (!t) {
        tt_put(b, "null");
        return;
    }
    const char *open = NULL, *close = NULL;
    switch (t->kind) {
    case TERM_LITERAL:
        if (t->lit.kind == LIT_STRING) tt_put(b, "'");
        cs_buf_put(b, t->lit.text, t->lit.len);
        if (t->lit.kind == LIT_STRING) tt_put(b, "'");
        return;
    case TERM_NULL: tt_put(b, "null"); return;
    case TERM_BIND:
        tt_put(b, t->bind.name ? ":" : "?");
        if (t->bind.name) tt_put(b, t->bind.name);
        return;
    case TERM_LIST: open = "["; close = "]"; break;
    case TERM_SET: case TERM_MAP: case TERM_UDT: open = "{"; close = "}"; break;
    case TERM_TUPLE: open = "("; close = ")"; break;
    case TERM_FUNC:
        tt_put(b, t->func.name);
        open = "("; close = ")";
        break;
    case TERM_NEG:
        tt_put(b, "-");
        cql__term_text(t->n_elems ? t->elems[0] : NULL, b);
        return;
    default:
        tt_put(b, "...");
        return;
    }
    tt_put(b, open);
    for (int i = 0; i < t->n_elems; i++) {
        if (i) tt_put(b, t->kind == TERM_MAP && i % 2 ? ": " : ", ");
        if (t->kind == TERM_UDT) { tt_put(b, t->field_names[i]); tt_put(b, ": "); }
        cql__term_text(t->elems[i], b);
    }
    tt_put(b, close);
}

bool cql__term_has_marker(const ast_term *t)
{
    if (!t)
        return false;
    if (t->kind == TERM_BIND)
        return true;
    for (int i = 0; i < t->n_elems; i++)
        if (cql__term_has_marker(t->elems[i]))
            return true;
    return false;
}

/* An element of a collection, tuple or UDT literal that its slot's type
 * cannot take: Cassandra tests every element's type (testAssignment)
 * before preparing any, and refuses one with the enclosing literal's
 * message.  Only a constant or a nested literal is tested so (markers and
 * nulls are assignable to anything); only a type mismatch is reworded. */
static bool tested_term(const ast_term *t)
{
    switch (t->kind) {
    case TERM_LITERAL: case TERM_LIST: case TERM_SET: case TERM_MAP: case TERM_TUPLE: case TERM_UDT: case TERM_NEG:
        return true;
    default:
        return false;
    }
}

static bool type_mismatch(const cs_error *e)
{
    return e->code == CS_ERR_INVALID && (strstr(e->msg, " constant (") || strstr(e->msg, " literal for ")) &&
           !strstr(e->msg, "bind variables are not supported");
}

/* Reword a mismatch of element t: fmt takes the receiver's name, the
 * element's text and the slot's type, or (part) a part name first. */
static int not_of_type(const ast_term *t, const ctype *slot, const char *name, const char *what, const char *part,
                       cs_error *e)
{
    cs_buf v, ty;
    cs_buf_init(&v);
    cs_buf_init(&ty);
    if (part) tt_put(&v, part);
    else cql__term_text(t, &v);
    ctype_to_cql(slot, &ty);
    cs_buf_put_u8(&v, 0);
    cs_buf_put_u8(&ty, 0);
    e->code = -1;   /* the element's own error gives way (cs_error_set keeps the first) */
    int rc = cs_error_set(e, CS_ERR_INVALID, "Invalid %s literal for %s: %s is not of type %s", what, name,
                          v.err ? "..." : (const char *)v.p, ty.err ? "..." : (const char *)ty.p);
    cs_buf_destroy(&v);
    cs_buf_destroy(&ty);
    return rc;
}

typedef struct elem { cql_value k, v; } elem;
typedef struct sort_ctx { const ctype *t; } sort_ctx;
static _Thread_local const ctype *g_sort_type;

static int elem_cmp(const void *a, const void *b)
{
    const elem *x = a, *y = b;
    return ctype_compare(g_sort_type, x->k.p, (size_t)x->k.len, y->k.p, (size_t)y->k.len);
}

/* Evaluate an element of a collection literal (what: "list", "set" or
 * "map"; role: "value" or "key"), in Cassandra's order of refusals: a
 * type mismatch at once (testAssignment), then, after every element, a
 * bind marker (prepare), then a null or unset element (bind).  *late
 * keeps the first of the latter two kinds (2: a marker, 1: a null). */
static int eval_elem(cql_eval *ev, const ast_term *t, const ctype *type, const char *name, const char *what,
                     const char *role, int *late, cql_value *out, cs_error *e)
{
    if (cql__term_has_marker(t)) {   /* containsBindMarker: nested ones too */
        *late = 2;
        out->len = CQL_NULL;
        return 0;
    }
    int rc = cql__term_eval(ev, t, type, name, out, e);
    if (rc) {
        if (tested_term(t) && type_mismatch(e)) {
            cs_buf v;
            cs_buf_init(&v);
            tt_put(&v, role);
            tt_put(&v, " ");
            cql__term_text(t, &v);
            cs_buf_put_u8(&v, 0);
            rc = not_of_type(t, type, name, what, v.err ? role : (const char *)v.p, e);
            cs_buf_destroy(&v);
        }
        return rc;
    }
    if ((out->len == CQL_NULL || out->len == CQL_UNSET) && !*late)
        *late = out->len == CQL_NULL ? 1 : 3;
    return 0;
}

/* After a literal's elements: the refusal eval_elem put off, if any. */
static int elem_late(int late, const char *what, const char *name, cs_error *e)
{
    if (late == 2)
        return cs_error_set(e, CS_ERR_INVALID, "Invalid %s literal for %s: bind variables are not supported inside collection literals",
                            what, name);
    if (late == 1)
        return cs_error_set(e, CS_ERR_INVALID, "null is not supported inside collections");
    if (late == 3)
        return cs_error_set(e, CS_ERR_INVALID, "unset value is not supported inside collections");
    return 0;
}

static void put_elem(cs_buf *b, const cql_value *v)
{
    cs_buf_put_u32(b, (uint32_t)v->len);
    if (v->len > 0)
        cs_buf_put(b, v->p, (size_t)v->len);
}

static int eval_list(cql_eval *ev, const ast_term *t, const ctype *recv, const char *name,
                     cql_value *out, cs_error *e)
{
    cs_buf b;
    cs_buf_init(&b);
    cs_buf_put_u32(&b, (uint32_t)t->n_elems);
    int rc = 0, late = 0;
    for (int i = 0; i < t->n_elems && rc == 0; i++) {
        cql_value v;
        rc = eval_elem(ev, t->elems[i], recv->sub[0], name, "list", "value", &late, &v, e);
        if (rc == 0)
            put_elem(&b, &v);
    }
    if (rc == 0)
        rc = elem_late(late, "list", name, e);
    if (rc == 0)
        rc = buf_to_value(ev, &b, out, e);
    cs_buf_destroy(&b);
    return rc;
}

/* Sets (keys only) and maps (is_map): sort by key, drop duplicates. */
static int eval_sorted(cql_eval *ev, const ast_term *t, const ctype *recv, const char *name,
                       bool is_map, cql_value *out, cs_error *e)
{
    int n = is_map ? t->n_elems / 2 : t->n_elems;
    elem *els = cs_arena_zalloc(ev->arena, sizeof(elem) * (size_t)(n ? n : 1));
    if (!els)
        return cs_error_set(e, CS_ERR_SERVER, "out of memory");
    const char *what = is_map ? "map" : "set";
    int late = 0;
    for (int i = 0; i < n; i++) {
        const ast_term *kt = is_map ? t->elems[2 * i] : t->elems[i];
        int rc = eval_elem(ev, kt, recv->sub[0], name, what, is_map ? "key" : "value", &late, &els[i].k, e);
        if (rc)
            return rc;
        if (is_map) {
            rc = eval_elem(ev, t->elems[2 * i + 1], recv->sub[1], name, what, "value", &late, &els[i].v, e);
            if (rc)
                return rc;
        }
    }
    int lrc = elem_late(late, what, name, e);
    if (lrc)
        return lrc;
    g_sort_type = recv->sub[0];
    /* stable insertion order for duplicates: mergesort-like via qsort on index tie-break */
    for (int i = 1; i < n; i++) {   /* insertion sort keeps the last duplicate last */
        elem x = els[i];
        int j = i - 1;
        while (j >= 0 && elem_cmp(&els[j], &x) > 0) {
            els[j + 1] = els[j];
            j--;
        }
        els[j + 1] = x;
    }
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (m > 0 && elem_cmp(&els[m - 1], &els[i]) == 0)
            els[m - 1] = els[i];           /* later value wins */
        else
            els[m++] = els[i];
    }
    cs_buf b;
    cs_buf_init(&b);
    cs_buf_put_u32(&b, (uint32_t)m);
    for (int i = 0; i < m; i++) {
        put_elem(&b, &els[i].k);
        if (is_map)
            put_elem(&b, &els[i].v);
    }
    int rc = buf_to_value(ev, &b, out, e);
    cs_buf_destroy(&b);
    return rc;
}

static int eval_tuple(cql_eval *ev, const ast_term *t, const ctype *recv, const char *name,
                      cql_value *out, cs_error *e)
{
    char tb[256];
    if (t->n_elems > recv->n_sub)
        return cs_error_set(e, CS_ERR_INVALID,
                            "Invalid tuple literal for %s: too many elements. Type %s expects %d but got %d",
                            name, type_text(recv, tb, sizeof(tb)), recv->n_sub, t->n_elems);
    cs_buf b;
    cs_buf_init(&b);
    int rc = 0;
    for (int i = 0; i < t->n_elems && rc == 0; i++) {
        cql_value v;
        rc = cql__term_eval(ev, t->elems[i], recv->sub[i], name, &v, e);
        if (rc && tested_term(t->elems[i]) && type_mismatch(e)) {
            char part[32];
            snprintf(part, sizeof part, "component %d", i);
            rc = not_of_type(t->elems[i], recv->sub[i], name, "tuple", part, e);
        }
        if (rc == 0 && v.len == CQL_UNSET)
            rc = cs_error_set(e, CS_ERR_INVALID, "Invalid unset value for tuple field number %d", i);
        if (rc == 0) {
            cs_buf_put_u32(&b, (uint32_t)(v.len < 0 ? -1 : v.len));
            if (v.len > 0)
                cs_buf_put(&b, v.p, (size_t)v.len);
        }
    }
    if (rc == 0)
        rc = buf_to_value(ev, &b, out, e);
    cs_buf_destroy(&b);
    return rc;
}

static int eval_udt(cql_eval *ev, const ast_term *t, const ctype *recv, const char *name,
                    cql_value *out, cs_error *e)
{
    cql_value *fv = cs_arena_zalloc(ev->arena, sizeof(cql_value) * (size_t)(recv->n_sub + 1));
    if (!fv)
        return cs_error_set(e, CS_ERR_SERVER, "out of memory");
    for (int i = 0; i < recv->n_sub; i++)
        fv[i].len = CQL_NULL;
    for (int i = 0; i < t->n_elems; i++) {
        int idx = -1;
        for (int j = 0; j < recv->n_sub; j++)
            if (!strcmp(recv->field_names[j], t->field_names[i]))
                idx = j;
        if (idx < 0)
            return cs_error_set(e, CS_ERR_INVALID, "Unknown field '%s' in value of user defined type %s",
                                t->field_names[i], recv->udt_name);
        int rc = cql__term_eval(ev, t->elems[i], recv->sub[idx], name, &fv[idx], e);
        if (rc && tested_term(t->elems[i]) && type_mismatch(e)) {
            char part[300];
            snprintf(part, sizeof part, "field %s", recv->field_names[idx]);
            rc = not_of_type(t->elems[i], recv->sub[idx], name, "user type", part, e);
        }
        if (rc)
            return rc;
        if (fv[idx].len == CQL_UNSET)
            fv[idx].len = CQL_NULL;
    }
    cs_buf b;
    cs_buf_init(&b);
    for (int i = 0; i < recv->n_sub; i++) {
        cs_buf_put_u32(&b, (uint32_t)(fv[i].len < 0 ? -1 : fv[i].len));
        if (fv[i].len > 0)
            cs_buf_put(&b, fv[i].p, (size_t)fv[i].len);
    }
    int rc = buf_to_value(ev, &b, out, e);
    cs_buf_destroy(&b);
    return rc;
}

/* ---------------------------------------------------------------- functions, casts */

static int eval_typed(cql_eval *ev, const ast_term *t, const ctype *recv, const char *name,
                      cql_value *out, const ctype **type, cs_error *e);

static int eval_func(cql_eval *ev, const ast_term *t, const ctype *recv, const char *name,
                     cql_value *out, const ctype **rtype, cs_error *e)
{
    const char *fname = t->func.name;
    int n = t->n_elems;
    if (!strcasecmp(fname, "tojson") && (!t->func.ks || !strcasecmp(t->func.ks, "system")))   /* FunctionResolver.get */
        return cs_error_set(e, CS_ERR_INVALID, "toJson() may only be used within the selection clause of SELECT statements");
    cql_value *args = cs_arena_zalloc(ev->arena, sizeof(cql_value) * (size_t)(n + 1));
    const ctype **types = cs_arena_zalloc(ev->arena, sizeof(ctype *) * (size_t)(n + 1));
    if (!args || !types)
        return cs_error_set(e, CS_ERR_SERVER, "out of memory");
    /* the native functions of fixed signatures: FunctionResolver picks the
     * parameter types from the arguments (a literal takes the one that can
     * read it: toTimestamp('2024-01-01') is the date flavour) */
    ctype_kind params[8];
    int resolved = 1;
    bool plain = n <= 8;   /* only literals, markers and nulls: their types are the resolver's to choose */
    for (int i = 0; i < n && plain; i++)
        plain = t->elems[i]->kind == TERM_LITERAL || t->elems[i]->kind == TERM_BIND || t->elems[i]->kind == TERM_NULL;
    if (plain && n > 0) {
        cql_fn_arg fa[8];
        cs_buf txt[8];
        for (int i = 0; i < n; i++) {
            const ast_term *a = t->elems[i];
            cs_buf_init(&txt[i]);
            cql__term_text(a, &txt[i]);
            cs_buf_put_u8(&txt[i], 0);
            fa[i] = (cql_fn_arg){ .type = NULL, .lit = a->kind == TERM_LITERAL ? (int)a->lit.kind : -1,
                                  .marker = a->kind == TERM_BIND, .null = a->kind == TERM_NULL,
                                  .text = txt[i].err ? "?" : (const char *)txt[i].p };
        }
        ctype_kind ret;
        resolved = cql__fn_resolve(t->func.ks, fname, fa, n, params, &ret, e);
        for (int i = 0; i < n; i++)
            cs_buf_destroy(&txt[i]);
        if (resolved < 0)
            return resolved;
    }
    for (int i = 0; i < n; i++) {
        const ctype *pt = resolved == 0 ? ctype_scalar(params[i]) : cql__fn_param_type(fname, i, n, recv);
        int rc = eval_typed(ev, t->elems[i], pt, name, &args[i], &types[i], e);
        if (rc)
            return rc;
    }
    if (n == 2 && cql__fn_operator(fname) && !cql__fn_return_type(fname, types, n, recv)) {
        cs_buf a, b;   /* FunctionResolver's words, with the operands as written */
        cs_buf_init(&a);
        cs_buf_init(&b);
        cql__term_text(t->elems[0], &a);
        cql__term_text(t->elems[1], &b);
        int rc = cs_error_set(e, CS_ERR_INVALID, "the '%s' operation is not supported between %.*s and %.*s",
                              cql__fn_operator(fname), (int)a.len, a.p ? (const char *)a.p : "",
                              (int)b.len, b.p ? (const char *)b.p : "");
        cs_buf_destroy(&a);
        cs_buf_destroy(&b);
        return rc;
    }
    return cql__fn_call(ev, fname, types, args, n, recv, rtype, out, e);
}

/* Negate a numeric value of a fixed-width type. */
static int negate(cql_eval *ev, const ctype *t, cql_value *v, cs_error *e)
{
    if (v->len <= 0)
        return 0;
    uint8_t *p = cs_arena_memdup(ev->arena, v->p, (size_t)v->len);
    if (!p)
        return cs_error_set(e, CS_ERR_SERVER, "out of memory");
    switch (t->kind) {
    case CT_TINYINT: p[0] = (uint8_t)(-(int8_t)p[0]); break;
    case CT_SMALLINT: cs_st16(p, (uint16_t)(-(int16_t)cs_be16(p))); break;
    case CT_INT: cs_st32(p, (uint32_t)(-(int32_t)cs_be32(p))); break;
    case CT_BIGINT: case CT_COUNTER: cs_st64(p, (uint64_t)(-(int64_t)cs_be64(p))); break;
    case CT_FLOAT: case CT_DOUBLE: p[0] ^= 0x80; break;
    default:
        return cs_error_set(e, CS_ERR_INVALID, "Unsupported negation of a value of this type");
    }
    v->p = p;
    return 0;
}

/* Evaluate t; *type receives the value's type (recv when given). */
static int eval_typed(cql_eval *ev, const ast_term *t, const ctype *recv, const char *name,
                      cql_value *out, const ctype **type, cs_error *e)
{
    *type = recv;
    if (t->kind == TERM_FUNC)
        return eval_func(ev, t, recv, name, out, type, e);
    if (!recv) {
        if (t->kind == TERM_LITERAL)
            recv = ctype_literal_preferred(t->lit.kind, t->lit.text, t->lit.len);
        else if (t->kind == TERM_CAST) {
            /* typed by the cast itself */
        } else if (t->kind == TERM_NULL) {
            out->p = NULL;
            out->len = CQL_NULL;
            *type = ctype_scalar(CT_BLOB);
            return 0;
        } else
            return cs_error_set(e, CS_ERR_INVALID,
                                "Cannot infer type of argument in call to function");
        *type = recv;
    }
    if (t->kind == TERM_CAST) {
        ctype *ct = ctype_parse(t->cast_type, ev->ks, NULL, NULL, e);
        if (!ct)
            return CS_EUSER;
        int rc = cql__term_eval(ev, t->elems[0], ct, name, out, e);
        *type = (ct->refcnt < 0) ? ct : (recv ? recv : ctype_scalar(CT_BLOB));
        ctype_unref(ct);
        return rc;
    }
    return cql__term_eval(ev, t, recv, name, out, e);
}

/* A type cast assigned to a receiver whose type is neither the cast's nor
 * value-compatible with it (TypeCast.prepare), as `SET a = (text)'foo'`
 * into an ascii column or `SET d = (int)3` into a double one: refused. */
static int cast_refused(const ast_term *t, const ctype *recv, const char *name, cs_error *e)
{
    cs_buf v, ty;
    cs_buf_init(&v);
    cs_buf_init(&ty);
    tt_put(&v, "(");
    tt_put(&v, t->cast_type);
    tt_put(&v, ")");
    cql__term_text(t->n_elems ? t->elems[0] : NULL, &v);
    cs_buf_put_u8(&v, 0);
    ctype_to_cql(recv, &ty);
    cs_buf_put_u8(&ty, 0);
    int rc = cs_error_set(e, CS_ERR_INVALID, "Cannot assign value %s to %s of type %s", v.err ? "..." : (const char *)v.p,
                          name ? name : "", ty.err ? "..." : (const char *)ty.p);
    cs_buf_destroy(&v);
    cs_buf_destroy(&ty);
    return rc;
}

/* ---------------------------------------------------------------- entry point */

static int term_eval(cql_eval *ev, const ast_term *t, const ctype *recv, const char *recv_name,
                     cql_value *out, cs_error *e);

int cql__term_eval(cql_eval *ev, const ast_term *t, const ctype *recv, const char *recv_name,
                   cql_value *out, cs_error *e)
{
    int rc = term_eval(ev, t, recv, recv_name, out, e);
    if (rc < 0 && !cs_error_isset(e))   /* an internal failure (ENOMEM ...) below us */
        rc = cs_error_set(e, CS_ERR_SERVER, "%s", cs_strerror(rc));
    return rc < 0 ? CS_EUSER : rc;
}

static int term_eval(cql_eval *ev, const ast_term *t, const ctype *recv, const char *recv_name,
                     cql_value *out, cs_error *e)
{
    char tb[256];
    out->p = NULL;
    out->len = CQL_NULL;
    if (!t)
        return 0;
    if (!recv && t->kind != TERM_FUNC && t->kind != TERM_CAST && t->kind != TERM_NULL) {
        const ctype *ty;
        return eval_typed(ev, t, NULL, recv_name, out, &ty, e);
    }
    switch (t->kind) {
    case TERM_LITERAL: {
        cs_buf b;
        cs_buf_init(&b);
        const ctype *rt = recv->kind == CT_COUNTER ? ctype_scalar(CT_BIGINT) : recv;
        int rc = ctype_from_literal(rt, t->lit.kind, t->lit.text, t->lit.len, recv_name, &b, e);
        if (rc == 0)
            rc = buf_to_value(ev, &b, out, e);
        cs_buf_destroy(&b);
        return rc;
    }
    case TERM_NULL:
        return 0;
    case TERM_BIND: {
        int i = t->bind.index;
        if (i < 0 || i >= ev->n_vals)
            return cs_error_set(e, CS_ERR_INVALID,
                                "Invalid amount of bind variables: expected %d, received %d",
                                i + 1, ev->n_vals);
        *out = ev->vals[i];
        if (out->len >= 0) {
            const ctype *vt = recv->kind == CT_COUNTER ? ctype_scalar(CT_BIGINT) : recv;
            int rc = ctype_validate(vt, out->p, (size_t)out->len, e);
            if (rc)
                return rc;
            if ((recv->kind == CT_SET || recv->kind == CT_MAP) && out->len > 0) {
                /* Cassandra re-serializes bound sets/maps: sorted, deduplicated */
                cs_buf b;
                cs_buf_init(&b);
                if (ctype_coll_normalize(recv, out->p, (size_t)out->len, &b) == 0)
                    rc = buf_to_value(ev, &b, out, e);
                cs_buf_destroy(&b);
                if (rc)
                    return rc;
            }
        } else if (out->len != CQL_UNSET)
            out->len = CQL_NULL;
        return 0;
    }
    case TERM_LIST:
        if (recv->kind != CT_LIST)
            return cs_error_set(e, CS_ERR_INVALID, "Invalid list literal for %s of type %s",
                                recv_name, type_text(recv, tb, sizeof(tb)));
        return eval_list(ev, t, recv, recv_name, out, e);
    case TERM_SET:
        if (recv->kind == CT_MAP && t->n_elems == 0)
            return eval_sorted(ev, t, recv, recv_name, true, out, e);
        if (recv->kind != CT_SET)
            return cs_error_set(e, CS_ERR_INVALID, "Invalid set literal for %s of type %s",
                                recv_name, type_text(recv, tb, sizeof(tb)));
        return eval_sorted(ev, t, recv, recv_name, false, out, e);
    case TERM_MAP:
        if (recv->kind != CT_MAP)
            return cs_error_set(e, CS_ERR_INVALID, "Invalid map literal for %s of type %s",
                                recv_name, type_text(recv, tb, sizeof(tb)));
        return eval_sorted(ev, t, recv, recv_name, true, out, e);
    case TERM_TUPLE:
        if (recv->kind != CT_TUPLE)
            return cs_error_set(e, CS_ERR_INVALID, "Invalid tuple type literal for %s of type %s",
                                recv_name, type_text(recv, tb, sizeof(tb)));
        return eval_tuple(ev, t, recv, recv_name, out, e);
    case TERM_UDT:
        if (recv->kind != CT_UDT)
            return cs_error_set(e, CS_ERR_INVALID, "Invalid user type literal for %s of type %s",
                                recv_name, type_text(recv, tb, sizeof(tb)));
        return eval_udt(ev, t, recv, recv_name, out, e);
    case TERM_FUNC: {
        const ctype *ty;
        return eval_func(ev, t, recv, recv_name, out, &ty, e);
    }
    case TERM_CAST: {
        ctype *ct = ctype_parse(t->cast_type, ev->ks, NULL, NULL, e);
        if (!ct)
            return CS_EUSER;
        int rc = recv && recv->kind != CT_COUNTER && !ctype_value_compatible(recv, ct)
                     ? cast_refused(t, recv, recv_name, e)
                     : cql__term_eval(ev, t->elems[0], ct, recv_name, out, e);
        ctype_unref(ct);
        return rc;
    }
    case TERM_NEG: {
        int rc = cql__term_eval(ev, t->elems[0], recv, recv_name, out, e);
        if (rc)
            return rc;
        return negate(ev, recv, out, e);
    }
    }
    return cs_error_set(e, CS_ERR_INVALID, "Unsupported term");
}

int cql__term_eval_i32(cql_eval *ev, const ast_term *t, const char *recv_name, int32_t *out,
                       bool *is_set, cs_error *e)
{
    cql_value v;
    *is_set = false;
    int rc = cql__term_eval(ev, t, ctype_scalar(CT_INT), recv_name, &v, e);
    if (rc)
        return rc;
    if (v.len == 4) {
        *out = (int32_t)cs_be32(v.p);
        *is_set = true;
    } else if (v.len == 0)
        return cs_error_set(e, CS_ERR_INVALID, "Invalid empty value for %s", recv_name);
    return 0;
}

int cql__term_eval_i64(cql_eval *ev, const ast_term *t, const char *recv_name, int64_t *out,
                       bool *is_set, cs_error *e)
{
    cql_value v;
    *is_set = false;
    int rc = cql__term_eval(ev, t, ctype_scalar(CT_BIGINT), recv_name, &v, e);
    if (rc)
        return rc;
    if (v.len == 8) {
        *out = (int64_t)cs_be64(v.p);
        *is_set = true;
    } else if (v.len == 0)
        return cs_error_set(e, CS_ERR_INVALID, "Invalid empty value for %s", recv_name);
    return 0;
}
