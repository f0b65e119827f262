/*
 * type.c: CQL type descriptors.  Scalar singletons, constructors for
 * collections/tuples/UDTs/custom types, reference counting, structural
 * equality, compatibility, and the two text forms: ctype_parse (type text
 * from DDL) and ctype_to_cql (as system_schema.columns.type prints it, i.e.
 * Cassandra's CQL3Type.toString()).
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cql/types/types_int.h"

/* ------------------------------------------------ scalar singletons */

#define SCALAR(k) { .kind = (k), .frozen = false, .refcnt = -1 }
static ctype g_scalars[] = {
    SCALAR(CT_ASCII), SCALAR(CT_BIGINT), SCALAR(CT_BLOB), SCALAR(CT_BOOLEAN),
    SCALAR(CT_COUNTER), SCALAR(CT_DECIMAL), SCALAR(CT_DOUBLE), SCALAR(CT_FLOAT),
    SCALAR(CT_INT), SCALAR(CT_TIMESTAMP), SCALAR(CT_UUID), SCALAR(CT_VARCHAR),
    SCALAR(CT_VARINT), SCALAR(CT_TIMEUUID), SCALAR(CT_INET), SCALAR(CT_DATE),
    SCALAR(CT_TIME), SCALAR(CT_SMALLINT), SCALAR(CT_TINYINT), SCALAR(CT_DURATION),
    SCALAR(CT_EMPTY),
};

static const struct { const char *name; ctype_kind kind; } g_names[] = {
    { "ascii", CT_ASCII }, { "bigint", CT_BIGINT }, { "blob", CT_BLOB },
    { "boolean", CT_BOOLEAN }, { "counter", CT_COUNTER }, { "decimal", CT_DECIMAL },
    { "double", CT_DOUBLE }, { "float", CT_FLOAT }, { "int", CT_INT },
    { "timestamp", CT_TIMESTAMP }, { "uuid", CT_UUID }, { "text", CT_VARCHAR },
    { "varchar", CT_VARCHAR }, { "varint", CT_VARINT }, { "timeuuid", CT_TIMEUUID },
    { "inet", CT_INET }, { "date", CT_DATE }, { "time", CT_TIME },
    { "smallint", CT_SMALLINT }, { "tinyint", CT_TINYINT }, { "duration", CT_DURATION },
    { "empty", CT_EMPTY },
};

const ctype *ctype_scalar(ctype_kind k)
{
    for (size_t i = 0; i < sizeof(g_scalars) / sizeof(g_scalars[0]); i++)
        if (g_scalars[i].kind == k)
            return &g_scalars[i];
    return NULL;
}

/* Name of a scalar kind as CQL prints it ("text" for varchar); NULL otherwise. */
const char *ctype_kind_name(ctype_kind k)
{
    for (size_t i = 0; i < sizeof(g_names) / sizeof(g_names[0]); i++)
        if (g_names[i].kind == k)
            return g_names[i].name;
    return NULL;
}

/* ------------------------------------------------ lifecycle */

ctype *ctype_ref(const ctype *t)
{
    ctype *m = (ctype *)t;
    if (m && m->refcnt >= 0)
        m->refcnt++;
    return m;
}

void ctype_unref(ctype *t)
{
    if (!t || t->refcnt < 0)
        return;
    if (--t->refcnt > 0)
        return;
    for (int i = 0; i < t->n_sub; i++) {
        ctype_unref(t->sub[i]);
        if (t->field_names)
            cs_free(t->field_names[i]);
    }
    cs_free(t->sub);
    cs_free(t->field_names);
    cs_free(t->udt_ks);
    cs_free(t->udt_name);
    cs_free(t->custom_class);
    cs_free(t);
}

static ctype *type_alloc(ctype_kind k, int n_sub)
{
    ctype *t = cs_calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->kind = k;
    t->refcnt = 1;
    t->n_sub = n_sub;
    if (n_sub > 0) {
        t->sub = cs_calloc((size_t)n_sub, sizeof(ctype *));
        if (!t->sub) {
            cs_free(t);
            return NULL;
        }
    }
    return t;
}

ctype *ctype_new_collection(ctype_kind k, ctype *elem_or_key, ctype *value, bool frozen)
{
    int n = k == CT_MAP ? 2 : 1;
    ctype *t = (k == CT_LIST || k == CT_SET || k == CT_MAP) ? type_alloc(k, n) : NULL;
    if (!t || !elem_or_key || (k == CT_MAP && !value)) {
        ctype_unref(elem_or_key);
        ctype_unref(value);
        ctype_unref(t);
        return NULL;
    }
    t->frozen = frozen;
    t->sub[0] = elem_or_key;
    if (k == CT_MAP)
        t->sub[1] = value;
    else
        ctype_unref(value);
    return t;
}

ctype *ctype_new_tuple(ctype **elems, int n)
{
    ctype *t = type_alloc(CT_TUPLE, n);
    if (!t) {
        for (int i = 0; i < n; i++)
            ctype_unref(elems[i]);
        return NULL;
    }
    t->frozen = true;
    for (int i = 0; i < n; i++)
        t->sub[i] = elems[i];
    return t;
}

ctype *ctype_new_udt(const char *ks, const char *name, char **field_names, ctype **field_types,
                     int n, bool frozen)
{
    ctype *t = type_alloc(CT_UDT, n);
    bool ok = t != NULL;
    if (t) {
        t->frozen = frozen;
        t->udt_ks = cs_strdup(ks ? ks : "");
        t->udt_name = cs_strdup(name ? name : "");
        t->field_names = n > 0 ? cs_calloc((size_t)n, sizeof(char *)) : NULL;
        ok = t->udt_ks && t->udt_name && (n == 0 || t->field_names);
    }
    for (int i = 0; i < n; i++) {
        if (ok) {
            t->sub[i] = field_types[i];
            t->field_names[i] = cs_strdup(field_names[i]);
            ok = t->field_names[i] != NULL;
        } else {
            ctype_unref(field_types[i]);
        }
    }
    if (!ok) {
        ctype_unref(t);
        return NULL;
    }
    return t;
}

ctype *ctype_new_custom(const char *class_name)
{
    ctype *t = type_alloc(CT_CUSTOM, 0);
    if (!t)
        return NULL;
    t->frozen = false;
    t->custom_class = cs_strdup(class_name);
    if (!t->custom_class) {
        ctype_unref(t);
        return NULL;
    }
    return t;
}

/* Copy of t with the frozen flag set to `frozen`, subs taken as given refs. */
static ctype *type_copy_with(const ctype *t, bool frozen, ctype **subs)
{
    ctype *c = type_alloc(t->kind, t->n_sub);
    if (!c) {
        for (int i = 0; i < t->n_sub; i++)
            ctype_unref(subs[i]);
        return NULL;
    }
    c->frozen = frozen;
    bool ok = true;
    for (int i = 0; i < t->n_sub; i++)
        c->sub[i] = subs[i];
    if (t->kind == CT_UDT) {
        c->udt_ks = cs_strdup(t->udt_ks);
        c->udt_name = cs_strdup(t->udt_name);
        c->field_names = t->n_sub ? cs_calloc((size_t)t->n_sub, sizeof(char *)) : NULL;
        ok = c->udt_ks && c->udt_name && (t->n_sub == 0 || c->field_names);
        for (int i = 0; ok && i < t->n_sub; i++)
            ok = (c->field_names[i] = cs_strdup(t->field_names[i])) != NULL;
    }
    if (t->custom_class)
        ok = ok && (c->custom_class = cs_strdup(t->custom_class)) != NULL;
    if (!ok) {
        ctype_unref(c);
        return NULL;
    }
    return c;
}

/* Frozen variant, recursively (Cassandra's AbstractType.freeze() applied
 * through CQL3Type.Raw.freeze(): everything inside frozen<> is frozen). */
ctype *ctype_freeze(const ctype *t)
{
    if (!t)
        return NULL;
    if (t->n_sub == 0 && (t->kind != CT_UDT || t->frozen))
        return ctype_ref(t);
    if (t->n_sub == 0)
        return type_copy_with(t, true, NULL);
    ctype *subs[t->n_sub];
    bool changed = !t->frozen;
    for (int i = 0; i < t->n_sub; i++) {
        subs[i] = ctype_freeze(t->sub[i]);
        if (!subs[i]) {
            for (int j = 0; j < i; j++)
                ctype_unref(subs[j]);
            return NULL;
        }
        if (subs[i] != t->sub[i])
            changed = true;
    }
    if (!changed) {
        for (int i = 0; i < t->n_sub; i++)
            ctype_unref(subs[i]);
        return ctype_ref(t);
    }
    return type_copy_with(t, true, subs);
}

/* ------------------------------------------------ predicates */

bool ctype_equal(const ctype *a, const ctype *b)
{
    if (a == b)
        return true;
    if (!a || !b || a->kind != b->kind || a->n_sub != b->n_sub)
        return false;
    /* varchar and text are one type; the scalar table has one varchar entry */
    switch (a->kind) {
    case CT_LIST: case CT_SET: case CT_MAP: case CT_UDT:
        if (a->frozen != b->frozen)
            return false;
        break;
    case CT_CUSTOM:
        return a->custom_class && b->custom_class && strcmp(a->custom_class, b->custom_class) == 0;
    default:
        break;
    }
    if (a->kind == CT_UDT) {
        if (strcmp(a->udt_ks, b->udt_ks) != 0 || strcmp(a->udt_name, b->udt_name) != 0)
            return false;
        for (int i = 0; i < a->n_sub; i++)
            if (strcmp(a->field_names[i], b->field_names[i]) != 0)
                return false;
    }
    for (int i = 0; i < a->n_sub; i++)
        if (!ctype_equal(a->sub[i], b->sub[i]))
            return false;
    return true;
}

bool ctype_is_collection(const ctype *t)
{
    return t && (t->kind == CT_LIST || t->kind == CT_SET || t->kind == CT_MAP);
}

bool ctype_refs_duration(const ctype *t)
{
    if (t->kind == CT_DURATION)
        return true;
    for (int i = 0; i < t->n_sub; i++)
        if (ctype_refs_duration(t->sub[i]))
            return true;
    return false;
}

const char *ctype_duration_holder(const ctype *t)
{
    if (!ctype_refs_duration(t))
        return NULL;
    return ctype_is_collection(t) ? "collections" : t->kind == CT_TUPLE ? "tuples" : t->kind == CT_UDT ? "UDTs" : NULL;
}

bool ctype_is_multicell(const ctype *t)
{
    return t && !t->frozen && (ctype_is_collection(t) || t->kind == CT_UDT);
}

bool ctype_is_numeric(const ctype *t)
{
    if (!t)
        return false;
    switch (t->kind) {
    case CT_BIGINT: case CT_COUNTER: case CT_DECIMAL: case CT_DOUBLE: case CT_FLOAT:
    case CT_INT: case CT_SMALLINT: case CT_TINYINT: case CT_VARINT:
        return true;
    default:
        return false;
    }
}

/* Cassandra's AbstractType.isValueCompatibleWith: can bytes written as `from`
 * be read as `to`?  (BytesType reads anything; text reads ascii; varint reads
 * int/bigint; bigint <-> timestamp; uuid reads timeuuid; frozen collections and
 * tuples componentwise.) */
bool ctype_value_compatible(const ctype *to, const ctype *from)
{
    if (ctype_equal(to, from))
        return true;
    if (!to || !from)
        return false;
    switch (to->kind) {
    case CT_BLOB:
        return true;
    case CT_VARCHAR:
        return from->kind == CT_ASCII;
    case CT_VARINT:
        return from->kind == CT_INT || from->kind == CT_BIGINT || from->kind == CT_SMALLINT ||
               from->kind == CT_TINYINT;
    case CT_BIGINT:
        return from->kind == CT_TIMESTAMP;
    case CT_TIMESTAMP:
        return from->kind == CT_BIGINT;
    case CT_UUID:
        return from->kind == CT_TIMEUUID;
    case CT_LIST: case CT_SET: case CT_MAP:
        if (from->kind != to->kind || from->frozen != to->frozen)
            return false;
        if (to->kind == CT_MAP && !ctype_equal(to->sub[0], from->sub[0]) &&
            !(to->frozen && ctype_value_compatible(to->sub[0], from->sub[0])))
            return false;
        return ctype_value_compatible(to->sub[to->n_sub - 1], from->sub[from->n_sub - 1]);
    case CT_TUPLE: case CT_UDT:
        if (from->kind != to->kind || from->n_sub > to->n_sub)
            return false;
        if (to->kind == CT_UDT && (strcmp(to->udt_ks, from->udt_ks) || strcmp(to->udt_name, from->udt_name)))
            return false;
        for (int i = 0; i < from->n_sub; i++)
            if (!ctype_value_compatible(to->sub[i], from->sub[i]))
                return false;
        return true;
    default:
        return false;
    }
}

/* ------------------------------------------------ small output helpers */

void ctype__puts(cs_buf *out, const char *s)
{
    cs_buf_put(out, s, strlen(s));
}

void ctype__printf(cs_buf *out, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof(tmp)) {
        cs_buf_put(out, tmp, (size_t)n);
        return;
    }
    uint8_t *p = cs_buf_extend(out, (size_t)n + 1);
    if (!p)
        return;
    va_start(ap, fmt);
    vsnprintf((char *)p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    out->len--;     /* drop the NUL */
}

void ctype__put_hex(cs_buf *out, const uint8_t *p, size_t n)
{
    static const char hx[] = "0123456789abcdef";
    uint8_t *d = cs_buf_extend(out, n * 2);
    if (!d)
        return;
    for (size_t i = 0; i < n; i++) {
        d[2 * i] = (uint8_t)hx[p[i] >> 4];
        d[2 * i + 1] = (uint8_t)hx[p[i] & 15];
    }
}

/* Cassandra's reserved keywords (reserved_keywords.txt), lowercase. */
static const char *const g_reserved[] = {
    "add", "allow", "alter", "and", "apply", "asc", "authorize", "batch", "begin", "by",
    "columnfamily", "create", "delete", "desc", "describe", "drop", "entries", "execute",
    "from", "full", "grant", "if", "in", "index", "infinity", "insert", "into", "is",
    "keyspace", "limit", "materialized", "modify", "nan", "norecursive", "not", "null",
    "of", "on", "or", "order", "primary", "rename", "revoke", "schema", "select", "set",
    "table", "to", "token", "truncate", "unlogged", "update", "use", "using", "view",
    "where", "with",
};

/* ColumnIdentifier.maybeQuote: bare if [a-z][a-z0-9_]* and not reserved. */
void ctype__quote_ident(const char *name, cs_buf *out)
{
    bool bare = name[0] >= 'a' && name[0] <= 'z';
    for (const char *p = name; bare && *p; p++)
        bare = (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_';
    for (size_t i = 0; bare && i < sizeof(g_reserved) / sizeof(g_reserved[0]); i++)
        if (strcmp(g_reserved[i], name) == 0)
            bare = false;
    if (bare) {
        ctype__puts(out, name);
        return;
    }
    cs_buf_put_u8(out, '"');
    for (const char *p = name; *p; p++) {
        if (*p == '"')
            cs_buf_put_u8(out, '"');
        cs_buf_put_u8(out, (uint8_t)*p);
    }
    cs_buf_put_u8(out, '"');
}

/* ------------------------------------------------ ctype_to_cql */

/* CQL3Type.toString(): every frozen collection/UDT/tuple prints frozen<...>,
 * maps as "map<k, v>", tuples "frozen<tuple<a, b>>", custom as quoted class. */
void ctype_to_cql(const ctype *t, cs_buf *out)
{
    const char *nm;
    switch (t->kind) {
    case CT_LIST: case CT_SET: case CT_MAP:
        if (t->frozen)
            ctype__puts(out, "frozen<");
        ctype__puts(out, t->kind == CT_LIST ? "list<" : t->kind == CT_SET ? "set<" : "map<");
        ctype_to_cql(t->sub[0], out);
        if (t->kind == CT_MAP) {
            ctype__puts(out, ", ");
            ctype_to_cql(t->sub[1], out);
        }
        cs_buf_put_u8(out, '>');
        if (t->frozen)
            cs_buf_put_u8(out, '>');
        return;
    case CT_TUPLE:
        ctype__puts(out, "frozen<tuple<");
        for (int i = 0; i < t->n_sub; i++) {
            if (i)
                ctype__puts(out, ", ");
            ctype_to_cql(t->sub[i], out);
        }
        ctype__puts(out, ">>");
        return;
    case CT_UDT:
        if (t->frozen)
            ctype__puts(out, "frozen<");
        ctype__quote_ident(t->udt_name, out);
        if (t->frozen)
            cs_buf_put_u8(out, '>');
        return;
    case CT_EMPTY:                   /* CQL3Type.Native.EMPTY (a dense compact table's hidden value) */
        ctype__puts(out, "empty");
        return;
    case CT_CUSTOM:
        cs_buf_put_u8(out, '\'');
        ctype__puts(out, t->custom_class ? t->custom_class : "");
        cs_buf_put_u8(out, '\'');
        return;
    default:
        nm = ctype_kind_name(t->kind);
        ctype__puts(out, nm ? nm : "?");
        return;
    }
}

/* ------------------------------------------------ ctype_parse */

typedef struct tparser {
    const char *s;
    size_t pos, len;
    const char *ks;
    ctype_udt_lookup_cb lookup;
    void *arg;
    cs_error *e;
} tparser;

static void skip_ws(tparser *p)
{
    while (p->pos < p->len && isspace((unsigned char)p->s[p->pos]))
        p->pos++;
}

static bool eat(tparser *p, char c)
{
    skip_ws(p);
    if (p->pos < p->len && p->s[p->pos] == c) {
        p->pos++;
        return true;
    }
    return false;
}

/* An identifier: bare (lowercased) or "double quoted" (case kept). */
static int read_ident(tparser *p, char *out, size_t cap)
{
    skip_ws(p);
    size_t o = 0;
    if (p->pos < p->len && p->s[p->pos] == '"') {
        p->pos++;
        for (;;) {
            if (p->pos >= p->len)
                return -1;
            char c = p->s[p->pos++];
            if (c == '"') {
                if (p->pos < p->len && p->s[p->pos] == '"')
                    p->pos++;
                else
                    break;
            }
            if (o + 1 >= cap)
                return -1;
            out[o++] = c;
        }
        out[o] = 0;
        return o ? 0 : -1;
    }
    while (p->pos < p->len) {
        char c = p->s[p->pos];
        if (!(isalnum((unsigned char)c) || c == '_'))
            break;
        if (o + 1 >= cap)
            return -1;
        out[o++] = (char)tolower((unsigned char)c);
        p->pos++;
    }
    out[o] = 0;
    return o ? 0 : -1;
}

static ctype *parse_type(tparser *p, bool in_frozen);

static int syntax_err(tparser *p)
{
    return cs_error_set(p->e, CS_ERR_SYNTAX, "line 1:%zu no viable alternative at input '%.*s'",
                        p->pos, (int)(p->len - p->pos < 40 ? p->len - p->pos : 40), p->s + p->pos);
}

/* Source text of a fragment, for error messages that quote the type. */
static void frag(tparser *p, size_t from, char *buf, size_t cap)
{
    size_t n = p->pos - from;
    while (n > 0 && isspace((unsigned char)p->s[from]))
        from++, n--;
    if (n >= cap)
        n = cap - 1;
    memcpy(buf, p->s + from, n);
    buf[n] = 0;
}

/* Checks of CQL3Type.Raw.RawCollection.prepare on an element type. */
static int check_elem(tparser *p, ctype_kind coll, const ctype *el, bool is_key, size_t start)
{
    char src[256];
    if (el->kind == CT_COUNTER) {
        frag(p, start, src, sizeof(src));
        return cs_error_set(p->e, CS_ERR_INVALID, "Counters are not allowed inside collections: %s", src);
    }
    if (el->kind == CT_DURATION && (coll == CT_SET || is_key)) {
        frag(p, start, src, sizeof(src));
        if (coll == CT_SET)
            return cs_error_set(p->e, CS_ERR_INVALID, "Durations are not allowed inside sets: %s", src);
        return cs_error_set(p->e, CS_ERR_INVALID, "Durations are not allowed as map keys: %s", src);
    }
    if (ctype_is_multicell(el)) {
        frag(p, start, src, sizeof(src));
        if (el->kind == CT_UDT)
            return cs_error_set(p->e, CS_ERR_INVALID, "Non-frozen UDTs are not allowed inside collections: %s", src);
        return cs_error_set(p->e, CS_ERR_INVALID, "Non-frozen collections are not allowed inside collections: %s", src);
    }
    return 0;
}

static ctype *parse_collection(tparser *p, ctype_kind k, bool in_frozen, size_t start)
{
    if (!eat(p, '<')) {
        syntax_err(p);
        return NULL;
    }
    ctype *a = parse_type(p, in_frozen), *b = NULL;
    if (!a)
        return NULL;
    if (k == CT_MAP) {
        if (!eat(p, ',')) {
            ctype_unref(a);
            syntax_err(p);
            return NULL;
        }
        b = parse_type(p, in_frozen);
        if (!b) {
            ctype_unref(a);
            return NULL;
        }
    }
    if (!eat(p, '>')) {
        ctype_unref(a);
        ctype_unref(b);
        syntax_err(p);
        return NULL;
    }
    if (check_elem(p, k, a, k == CT_MAP, start) || (b && check_elem(p, k, b, false, start))) {
        ctype_unref(a);
        ctype_unref(b);
        return NULL;
    }
    ctype *t = ctype_new_collection(k, a, b, in_frozen);
    if (!t)
        cs_error_set(p->e, CS_ERR_SERVER, "out of memory");
    return t;
}

static ctype *parse_tuple(tparser *p)
{
    if (!eat(p, '<')) {
        syntax_err(p);
        return NULL;
    }
    ctype *elems[256];
    int n = 0;
    do {
        if (n == 256) {
            cs_error_set(p->e, CS_ERR_INVALID, "Too many tuple elements");
            goto fail;
        }
        ctype *el = parse_type(p, true);
        if (!el)
            goto fail;
        elems[n++] = el;
    } while (eat(p, ','));
    if (!eat(p, '>')) {
        syntax_err(p);
        goto fail;
    }
    for (int i = 0; i < n; i++) {
        if (elems[i]->kind == CT_COUNTER) {
            cs_error_set(p->e, CS_ERR_INVALID, "Counters are not allowed inside tuples");
            goto fail;
        }
    }
    ctype *t = ctype_new_tuple(elems, n);
    if (!t)
        cs_error_set(p->e, CS_ERR_SERVER, "out of memory");
    return t;
fail:
    for (int i = 0; i < n; i++)
        ctype_unref(elems[i]);
    return NULL;
}

static ctype *parse_type(tparser *p, bool in_frozen)
{
    char id[256];
    skip_ws(p);
    size_t start = p->pos;
    if (p->pos < p->len && p->s[p->pos] == '\'') {
        /* custom class: 'org.apache.cassandra.db.marshal.BytesType' */
        size_t b = ++p->pos;
        while (p->pos < p->len && p->s[p->pos] != '\'')
            p->pos++;
        if (p->pos >= p->len) {
            syntax_err(p);
            return NULL;
        }
        char *cls = cs_strndup(p->s + b, p->pos - b);
        p->pos++;
        if (!cls) {
            cs_error_set(p->e, CS_ERR_SERVER, "out of memory");
            return NULL;
        }
        ctype *t = ctype_parse_custom_class(cls);
        cs_free(cls);
        if (!t)
            cs_error_set(p->e, CS_ERR_SERVER, "out of memory");
        return t;
    }
    bool quoted = p->pos < p->len && p->s[p->pos] == '"';
    if (read_ident(p, id, sizeof(id)) != 0) {
        syntax_err(p);
        return NULL;
    }
    if (!quoted) {
        if (strcmp(id, "frozen") == 0) {
            if (!eat(p, '<')) {
                syntax_err(p);
                return NULL;
            }
            size_t inner = p->pos;
            ctype *t = parse_type(p, true);
            if (!t)
                return NULL;
            if (!eat(p, '>')) {
                ctype_unref(t);
                syntax_err(p);
                return NULL;
            }
            if (t->n_sub == 0 && t->kind != CT_UDT && t->kind != CT_TUPLE) {
                char src[256];
                p->pos--;
                frag(p, inner, src, sizeof(src));
                p->pos++;
                ctype_unref(t);
                cs_error_set(p->e, CS_ERR_INVALID,
                             "frozen<> is only allowed on collections, tuples, and user-defined types (got %s)", src);
                return NULL;
            }
            ctype *f = ctype_freeze(t);
            ctype_unref(t);
            return f;
        }
        if (strcmp(id, "list") == 0)
            return parse_collection(p, CT_LIST, in_frozen, start);
        if (strcmp(id, "set") == 0)
            return parse_collection(p, CT_SET, in_frozen, start);
        if (strcmp(id, "map") == 0)
            return parse_collection(p, CT_MAP, in_frozen, start);
        if (strcmp(id, "tuple") == 0)
            return parse_tuple(p);
        for (size_t i = 0; i < sizeof(g_names) / sizeof(g_names[0]); i++)
            if (g_names[i].kind != CT_EMPTY && strcmp(g_names[i].name, id) == 0)
                return (ctype *)ctype_scalar(g_names[i].kind);
    }
    /* user type: [ks.]name */
    char ks[256];
    const char *kp = p->ks;
    if (eat(p, '.')) {
        snprintf(ks, sizeof(ks), "%s", id);
        kp = ks;
        if (read_ident(p, id, sizeof(id)) != 0) {
            syntax_err(p);
            return NULL;
        }
    }
    if (kp && p->ks && strcmp(kp, p->ks) != 0) {
        cs_error_set(p->e, CS_ERR_INVALID,
                     "Statement on keyspace %s cannot refer to a user type in keyspace %s; "
                     "user types can only be used in the keyspace they are defined in", p->ks, kp);
        return NULL;
    }
    const ctype *u = p->lookup && kp ? p->lookup(p->arg, kp, id) : NULL;
    if (!u) {
        if (kp)
            cs_error_set(p->e, CS_ERR_INVALID, "Unknown type %s.%s", kp, id);
        else
            cs_error_set(p->e, CS_ERR_INVALID, "Unknown type %s", id);
        return NULL;
    }
    if (in_frozen)
        return ctype_freeze(u);
    return ctype_ref(u);
}

ctype *ctype_parse(const char *text, const char *ks, ctype_udt_lookup_cb lookup, void *arg, cs_error *e)
{
    tparser p = { .s = text, .pos = 0, .len = strlen(text), .ks = ks, .lookup = lookup, .arg = arg, .e = e };
    ctype *t = parse_type(&p, false);
    if (!t)
        return NULL;
    skip_ws(&p);
    if (p.pos != p.len) {
        ctype_unref(t);
        syntax_err(&p);
        return NULL;
    }
    return t;
}

/* A quoted custom class.  Cassandra's own marshal classes map back to the
 * native types ('org.apache.cassandra.db.marshal.Int32Type' is int); any
 * other class is an opaque blob-like custom type. */
ctype *ctype_parse_custom_class(const char *cls)
{
    static const struct { const char *cls; ctype_kind k; } m[] = {
        { "AsciiType", CT_ASCII }, { "LongType", CT_BIGINT }, { "BytesType", CT_BLOB },
        { "BooleanType", CT_BOOLEAN }, { "CounterColumnType", CT_COUNTER },
        { "DecimalType", CT_DECIMAL }, { "DoubleType", CT_DOUBLE }, { "FloatType", CT_FLOAT },
        { "Int32Type", CT_INT }, { "TimestampType", CT_TIMESTAMP }, { "UUIDType", CT_UUID },
        { "UTF8Type", CT_VARCHAR }, { "IntegerType", CT_VARINT }, { "TimeUUIDType", CT_TIMEUUID },
        { "InetAddressType", CT_INET }, { "SimpleDateType", CT_DATE }, { "TimeType", CT_TIME },
        { "ShortType", CT_SMALLINT }, { "ByteType", CT_TINYINT }, { "DurationType", CT_DURATION },
        { "EmptyType", CT_EMPTY },
    };
    const char *base = cls;
    static const char pfx[] = "org.apache.cassandra.db.marshal.";
    if (strncmp(base, pfx, sizeof(pfx) - 1) == 0)
        base += sizeof(pfx) - 1;
    for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++)
        if (strcmp(base, m[i].cls) == 0)
            return (ctype *)ctype_scalar(m[i].k);
    return ctype_new_custom(cls);
}
