/*
 * insert_json.c: INSERT INTO t JSON '...' [DEFAULT NULL | DEFAULT UNSET].
 * Owner: exec-write.  Caller: exec_modify.c (prep_insert).
 *
 * The JSON text must be an object mapping column names to values
 * (Cassandra's Json.parseJson): a key is lower-cased unless it is itself
 * double-quoted ("\"MyCol\"" keeps its case).  Each value's raw JSON text is
 * converted by ctype_from_json for the column type.  Key columns become
 * equality relations (their values passed as extra bind values) so that
 * restrict.c applies the same rules and messages as a normal INSERT;
 * columns not mentioned are written as null (DEFAULT NULL, the default) or
 * left untouched (DEFAULT UNSET).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>
#include "cql/modify_int.h"
#include "common/alloc.h"

typedef struct jkv {
    char *key;                        /* decoded, case-folded name */
    const char *val; size_t val_len;  /* raw JSON text of the value */
} jkv;

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

/* End of the JSON string starting at p ('"'), or NULL. */
static const char *string_end(const char *p, const char *end)
{
    for (p++; p < end; p++) {
        if (*p == '\\') { p++; continue; }
        if (*p == '"') return p + 1;
    }
    return NULL;
}

/* End of the JSON value starting at p, or NULL. */
static const char *value_end(const char *p, const char *end)
{
    if (p >= end) return NULL;
    if (*p == '"') return string_end(p, end);
    if (*p == '{' || *p == '[') {
        int depth = 0;
        while (p < end) {
            if (*p == '"') {
                p = string_end(p, end);
                if (!p) return NULL;
                continue;
            }
            if (*p == '{' || *p == '[') depth++;
            else if (*p == '}' || *p == ']') {
                if (--depth == 0) return p + 1;
            }
            p++;
        }
        return NULL;
    }
    const char *s = p;
    while (p < end && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\t' &&
           *p != '\n' && *p != '\r')
        p++;
    return p > s ? p : NULL;
}

/* Decode a JSON string key (simple escapes; \u00XX as a byte). */
static char *decode_key(cs_arena *a, const char *p, const char *q)
{
    char *out = cs_arena_alloc(a, (size_t)(q - p) + 1);
    size_t n = 0;
    if (!out) return NULL;
    for (p++; p < q - 1; p++) {
        if (*p != '\\') { out[n++] = *p; continue; }
        p++;
        switch (*p) {
        case 'n': out[n++] = '\n'; break;
        case 't': out[n++] = '\t'; break;
        case 'r': out[n++] = '\r'; break;
        case 'b': out[n++] = '\b'; break;
        case 'f': out[n++] = '\f'; break;
        case 'u':
            if (q - 1 - p > 4) {
                char hex[5] = { p[1], p[2], p[3], p[4], 0 };
                out[n++] = (char)strtol(hex, NULL, 16);
                p += 4;
            }
            break;
        default: out[n++] = *p; break;
        }
    }
    out[n] = 0;
    /* Cassandra: quoted keys keep their case, others are lower-cased. */
    if (n >= 2 && out[0] == '"' && out[n - 1] == '"') {
        memmove(out, out + 1, n - 2);
        out[n - 2] = 0;
    } else {
        for (size_t i = 0; i < n; i++)
            out[i] = (char)tolower((unsigned char)out[i]);
    }
    return out;
}

static int parse_object(cs_arena *a, const char *s, size_t len, jkv **out, int *n_out, cs_error *e)
{
    const char *p = s, *end = s + len;
    int cap = 16, n = 0;
    jkv *kv = cs_arena_alloc(a, sizeof *kv * (size_t)cap);
    if (!kv) return cs_error_set(e, CS_ERR_SERVER, "out of memory");
    p = skip_ws(p, end);
    if (p >= end || *p != '{')
        goto bad;
    p = skip_ws(p + 1, end);
    if (p < end && *p == '}') {
        p++;
        goto done;
    }
    for (;;) {
        if (p >= end || *p != '"') goto bad;
        const char *q = string_end(p, end);
        if (!q) goto bad;
        char *key = decode_key(a, p, q);
        if (!key) return cs_error_set(e, CS_ERR_SERVER, "out of memory");
        p = skip_ws(q, end);
        if (p >= end || *p != ':') goto bad;
        p = skip_ws(p + 1, end);
        const char *ve = value_end(p, end);
        if (!ve) goto bad;
        if (n == cap) {
            jkv *nk = cs_arena_alloc(a, sizeof *kv * (size_t)cap * 2);
            if (!nk) return cs_error_set(e, CS_ERR_SERVER, "out of memory");
            memcpy(nk, kv, sizeof *kv * (size_t)cap);
            kv = nk;
            cap *= 2;
        }
        kv[n].key = key;
        kv[n].val = p;
        kv[n].val_len = (size_t)(ve - p);
        n++;
        p = skip_ws(ve, end);
        if (p < end && *p == ',') { p = skip_ws(p + 1, end); continue; }
        if (p < end && *p == '}') { p++; break; }
        goto bad;
    }
done:
    p = skip_ws(p, end);
    if (p != end) goto bad;
    *out = kv;
    *n_out = n;
    return 0;
bad:
    return cs_error_set(e, CS_ERR_INVALID, "Could not decode JSON string as a map: %.*s",
                        (int)(len > 200 ? 200 : len), s);
}

int cql__insert_json(cql_eval *ev, cql_stmt *st, cql_wplan *pl, ast_relation ***rels_out,
                     int *n_rels, cs_error *e)
{
    const ast_insert *in = &st->u.insert;
    const sch_table *t = pl->t;
    cql_value js;
    if (cql__term_eval(ev, in->json, ctype_scalar(CT_VARCHAR), "[json]", &js, e) < 0)
        return CS_EUSER;
    /* a null value, or the JSON text null (Json.decodeJson gives null) */
    size_t b = 0, n = js.len > 0 ? (size_t)js.len : 0;
    while (b < n && isspace(js.p[b])) b++;
    while (n > b && isspace(js.p[n - 1])) n--;
    if (js.len < 0 || (n - b == 4 && !memcmp(js.p + b, "null", 4)))
        return cs_error_set(e, CS_ERR_INVALID, "Got null for INSERT JSON values");
    jkv *kv = NULL;
    int n_kv = 0;
    if (parse_object(ev->arena, (const char *)js.p, (size_t)js.len, &kv, &n_kv, e) < 0)
        return CS_EUSER;
    for (int i = 0; i < n_kv; i++) {
        if (!sch_column_find(t, kv[i].key))
            return cs_error_set(e, CS_ERR_INVALID, "JSON values map contains unrecognized column: %s", kv[i].key);
    }
    int nkeys = t->n_pk + t->n_ck;
    cql_value *vals = cs_arena_zalloc(ev->arena, sizeof *vals * (size_t)(ev->n_vals + nkeys + 1));
    ast_relation **rels = cs_arena_zalloc(ev->arena, sizeof *rels * (size_t)(nkeys + 1));
    pl->ops = cs_arena_zalloc(ev->arena, sizeof *pl->ops * (size_t)(t->n_cols + 1));
    if (!vals || !rels || !pl->ops)
        return cs_error_set(e, CS_ERR_SERVER, "out of memory");
    if (ev->n_vals)
        memcpy(vals, ev->vals, sizeof *vals * (size_t)ev->n_vals);
    int nv = ev->n_vals, nr = 0;
    for (int ci = 0; ci < t->n_cols; ci++) {
        const sch_column *c = &t->cols[ci];
        if (c->hidden)               /* COMPACT STORAGE's internal columns take no JSON value */
            continue;
        const jkv *hit = NULL;
        for (int i = n_kv - 1; i >= 0 && !hit; i--)   /* duplicate keys: last wins (Jackson) */
            if (strcmp(kv[i].key, c->name) == 0)
                hit = &kv[i];
        cql_value v = { NULL, in->json_default_unset ? CQL_UNSET : CQL_NULL };
        if (hit && !(hit->val_len == 4 && memcmp(hit->val, "null", 4) == 0)) {
            cs_buf b;
            cs_buf_init(&b);
            int rc = ctype_from_json(c->type, hit->val, hit->val_len, &b, e);
            if (rc < 0 || b.err) {
                cs_buf_destroy(&b);
                if (!cs_error_isset(e))
                    cs_error_set(e, CS_ERR_INVALID, "Error decoding JSON value for %s", c->name);
                return CS_EUSER;
            }
            v.p = cs_arena_memdup(ev->arena, b.p ? b.p : (const uint8_t *)"", b.len ? b.len : 1);
            v.len = (int32_t)b.len;
            cs_buf_destroy(&b);
        } else if (hit)
            v.len = CQL_NULL;
        if (c->kind == COL_PARTITION_KEY || c->kind == COL_CLUSTERING) {
            if (!hit)
                continue;   /* restrict.c reports the missing key part */
            ast_term *term = cs_arena_zalloc(ev->arena, sizeof *term);
            ast_relation *r = cs_arena_zalloc(ev->arena, sizeof *r);
            char **cols = cs_arena_alloc(ev->arena, sizeof *cols);
            if (!term || !r || !cols)
                return cs_error_set(e, CS_ERR_SERVER, "out of memory");
            vals[nv] = v;
            term->kind = TERM_BIND;
            term->bind.index = nv++;
            cols[0] = c->name;
            r->kind = REL_COLUMN;
            r->op = OP_EQ;
            r->columns = cols;
            r->n_columns = 1;
            r->value = term;
            rels[nr++] = r;
            continue;
        }
        if (v.len == CQL_UNSET)
            continue;
        cql_wop *op = &pl->ops[pl->n_ops++];
        memset(op, 0, sizeof *op);
        op->col = c;
        op->kind = SET_ASSIGN;
        op->val = v;
        if (c->kind == COL_STATIC)
            pl->has_static = true;
        else
            pl->has_regular = true;
    }
    ev->vals = vals;
    ev->n_vals = nv;
    *rels_out = rels;
    *n_rels = nr;
    return 0;
}
