/*
 * json.c: values from JSON text (INSERT JSON, fromJson()).
 *
 * The JSON text is parsed as Jackson's default ObjectMapper would (integers
 * become Integer / Long / BigInteger by size, other numbers Double, objects
 * maps, arrays lists), then converted with the rules and messages of each
 * type's fromJSONObject (db/marshal/XType.java): strings go through
 * fromString for most scalars, collections also accept a string holding JSON.
 * Messages are the MarshalException texts; INSERT JSON callers prefix
 * "Error decoding JSON value for <col>: ".
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cql/types/types_int.h"

/* ------------------------------------------------ JSON tree */

typedef enum { JV_NULL, JV_BOOL, JV_INT, JV_LONG, JV_BIGINT, JV_DOUBLE, JV_STRING, JV_ARRAY, JV_OBJECT } jv_kind;

typedef struct jv jv;
struct jv {
    jv_kind kind;
    bool b;
    double d;
    char *s;          /* string value (decoded), or number text */
    size_t sn;
    jv **items;       /* array items / object values */
    char **keys;      /* object keys (decoded, NUL-terminated) */
    size_t n, cap;
};

static void jv_free(jv *v)
{
    if (!v)
        return;
    for (size_t i = 0; i < v->n; i++) {
        jv_free(v->items[i]);
        if (v->keys)
            cs_free(v->keys[i]);
    }
    cs_free(v->items);
    cs_free(v->keys);
    cs_free(v->s);
    cs_free(v);
}

typedef struct jp { const char *s; size_t n, i; int depth; } jp;

static void jws(jp *p)
{
    while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' || p->s[p->i] == '\r'))
        p->i++;
}

static void put_utf8(cs_buf *b, uint32_t cp)
{
    if (cp < 0x80) {
        cs_buf_put_u8(b, (uint8_t)cp);
    } else if (cp < 0x800) {
        cs_buf_put_u8(b, (uint8_t)(0xC0 | (cp >> 6)));
        cs_buf_put_u8(b, (uint8_t)(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        cs_buf_put_u8(b, (uint8_t)(0xE0 | (cp >> 12)));
        cs_buf_put_u8(b, (uint8_t)(0x80 | ((cp >> 6) & 0x3F)));
        cs_buf_put_u8(b, (uint8_t)(0x80 | (cp & 0x3F)));
    } else {
        cs_buf_put_u8(b, (uint8_t)(0xF0 | (cp >> 18)));
        cs_buf_put_u8(b, (uint8_t)(0x80 | ((cp >> 12) & 0x3F)));
        cs_buf_put_u8(b, (uint8_t)(0x80 | ((cp >> 6) & 0x3F)));
        cs_buf_put_u8(b, (uint8_t)(0x80 | (cp & 0x3F)));
    }
}

static int hex4(jp *p, uint32_t *out)
{
    if (p->n - p->i < 4)
        return -1;
    uint32_t v = 0;
    for (int k = 0; k < 4; k++) {
        char c = p->s[p->i++];
        int h = isdigit((unsigned char)c) ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10
              : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
        if (h < 0)
            return -1;
        v = v * 16 + (uint32_t)h;
    }
    *out = v;
    return 0;
}

static int jstring(jp *p, char **out, size_t *outn)
{
    cs_buf b;
    cs_buf_init(&b);
    p->i++;   /* opening quote */
    for (;;) {
        if (p->i >= p->n)
            goto bad;
        char c = p->s[p->i++];
        if (c == '"')
            break;
        if ((unsigned char)c < 0x20)
            goto bad;
        if (c != '\\') {
            cs_buf_put_u8(&b, (uint8_t)c);
            continue;
        }
        if (p->i >= p->n)
            goto bad;
        c = p->s[p->i++];
        switch (c) {
        case '"': case '\\': case '/': cs_buf_put_u8(&b, (uint8_t)c); break;
        case 'b': cs_buf_put_u8(&b, '\b'); break;
        case 'f': cs_buf_put_u8(&b, '\f'); break;
        case 'n': cs_buf_put_u8(&b, '\n'); break;
        case 'r': cs_buf_put_u8(&b, '\r'); break;
        case 't': cs_buf_put_u8(&b, '\t'); break;
        case 'u': {
            uint32_t cp, lo;
            if (hex4(p, &cp))
                goto bad;
            if (cp >= 0xD800 && cp <= 0xDBFF && p->n - p->i >= 6 && p->s[p->i] == '\\' && p->s[p->i + 1] == 'u') {
                p->i += 2;
                if (hex4(p, &lo) || lo < 0xDC00 || lo > 0xDFFF)
                    goto bad;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            }
            put_utf8(&b, cp);
            break;
        }
        default:
            goto bad;
        }
    }
    cs_buf_put_u8(&b, 0);
    if (b.err)
        goto bad;
    *outn = b.len - 1;
    *out = (char *)cs_buf_steal(&b, NULL);
    return 0;
bad:
    cs_buf_destroy(&b);
    return -1;
}

static jv *jvalue(jp *p);

static int jpush(jv *v, jv *item, char *key)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 4;
        jv **it = cs_realloc(v->items, cap * sizeof(jv *));
        if (!it)
            return -1;
        v->items = it;
        if (v->kind == JV_OBJECT) {
            char **k = cs_realloc(v->keys, cap * sizeof(char *));
            if (!k)
                return -1;
            v->keys = k;
        }
        v->cap = cap;
    }
    v->items[v->n] = item;
    if (v->kind == JV_OBJECT)
        v->keys[v->n] = key;
    v->n++;
    return 0;
}

static jv *jnumber(jp *p, jv *v)
{
    size_t b = p->i;
    if (p->s[p->i] == '-')
        p->i++;
    size_t d0 = p->i;
    while (p->i < p->n && isdigit((unsigned char)p->s[p->i]))
        p->i++;
    if (p->i == d0 || (p->s[d0] == '0' && p->i - d0 > 1))
        return NULL;
    bool isfloat = false;
    if (p->i < p->n && p->s[p->i] == '.') {
        isfloat = true;
        p->i++;
        size_t f0 = p->i;
        while (p->i < p->n && isdigit((unsigned char)p->s[p->i]))
            p->i++;
        if (p->i == f0)
            return NULL;
    }
    if (p->i < p->n && (p->s[p->i] == 'e' || p->s[p->i] == 'E')) {
        isfloat = true;
        p->i++;
        if (p->i < p->n && (p->s[p->i] == '+' || p->s[p->i] == '-'))
            p->i++;
        size_t e0 = p->i;
        while (p->i < p->n && isdigit((unsigned char)p->s[p->i]))
            p->i++;
        if (p->i == e0)
            return NULL;
    }
    v->s = cs_strndup(p->s + b, p->i - b);
    if (!v->s)
        return NULL;
    v->sn = p->i - b;
    if (isfloat) {
        v->kind = JV_DOUBLE;
        v->d = strtod(v->s, NULL);
        return v;
    }
    size_t nd = p->i - d0;
    v->kind = JV_BIGINT;
    if (nd <= 18 || (nd == 19 && strcmp(p->s[b] == '-' ? v->s + 1 : v->s, "9223372036854775807") <= 0) ||
        (nd == 19 && p->s[b] == '-' && strcmp(v->s + 1, "9223372036854775808") <= 0)) {
        long long x = strtoll(v->s, NULL, 10);
        v->kind = (x >= INT32_MIN && x <= INT32_MAX) ? JV_INT : JV_LONG;
        v->d = (double)x;
    }
    return v;
}

static jv *jvalue(jp *p)
{
    jws(p);
    if (p->i >= p->n || ++p->depth > 64)
        return NULL;
    jv *v = cs_calloc(1, sizeof(jv));
    if (!v)
        return NULL;
    char c = p->s[p->i];
    if (c == '"') {
        v->kind = JV_STRING;
        if (jstring(p, &v->s, &v->sn))
            goto bad;
    } else if (c == '{' || c == '[') {
        v->kind = c == '{' ? JV_OBJECT : JV_ARRAY;
        char close = c == '{' ? '}' : ']';
        p->i++;
        jws(p);
        if (p->i < p->n && p->s[p->i] == close) {
            p->i++;
        } else {
            for (;;) {
                char *key = NULL;
                size_t kn;
                if (v->kind == JV_OBJECT) {
                    jws(p);
                    if (p->i >= p->n || p->s[p->i] != '"' || jstring(p, &key, &kn))
                        goto bad;
                    jws(p);
                    if (p->i >= p->n || p->s[p->i] != ':') {
                        cs_free(key);
                        goto bad;
                    }
                    p->i++;
                }
                jv *item = jvalue(p);
                if (!item || jpush(v, item, key)) {
                    jv_free(item);
                    cs_free(key);
                    goto bad;
                }
                jws(p);
                if (p->i < p->n && p->s[p->i] == ',') {
                    p->i++;
                    continue;
                }
                if (p->i < p->n && p->s[p->i] == close) {
                    p->i++;
                    break;
                }
                goto bad;
            }
        }
    } else if (c == '-' || isdigit((unsigned char)c)) {
        if (!jnumber(p, v))
            goto bad;
    } else if (p->n - p->i >= 4 && memcmp(p->s + p->i, "true", 4) == 0) {
        v->kind = JV_BOOL;
        v->b = true;
        p->i += 4;
    } else if (p->n - p->i >= 5 && memcmp(p->s + p->i, "false", 5) == 0) {
        v->kind = JV_BOOL;
        p->i += 5;
    } else if (p->n - p->i >= 4 && memcmp(p->s + p->i, "null", 4) == 0) {
        v->kind = JV_NULL;
        p->i += 4;
    } else {
        goto bad;
    }
    p->depth--;
    return v;
bad:
    jv_free(v);
    return NULL;
}

static jv *jparse(const char *s, size_t n)
{
    jp p = { s, n, 0, 0 };
    jv *v = jvalue(&p);
    if (!v)
        return NULL;
    jws(&p);
    if (p.i != n) {
        jv_free(v);
        return NULL;
    }
    return v;
}

/* ------------------------------------------------ Java-ish text of a value (messages) */

static const char *jclass(const jv *v)
{
    switch (v->kind) {
    case JV_NULL: return "null";
    case JV_BOOL: return "Boolean";
    case JV_INT: return "Integer";
    case JV_LONG: return "Long";
    case JV_BIGINT: return "BigInteger";
    case JV_DOUBLE: return "Double";
    case JV_STRING: return "String";
    case JV_ARRAY: return "ArrayList";
    case JV_OBJECT: return "LinkedHashMap";
    }
    return "Object";
}

static void jtext(const jv *v, cs_buf *out)
{
    switch (v->kind) {
    case JV_NULL: ctype__puts(out, "null"); break;
    case JV_BOOL: ctype__puts(out, v->b ? "true" : "false"); break;
    case JV_INT: case JV_LONG: case JV_BIGINT: cs_buf_put(out, v->s, v->sn); break;
    case JV_DOUBLE: ctype_format_java_double(v->d, false, out); break;
    case JV_STRING: cs_buf_put(out, v->s, v->sn); break;
    case JV_ARRAY: case JV_OBJECT:
        cs_buf_put_u8(out, v->kind == JV_ARRAY ? '[' : '{');
        for (size_t i = 0; i < v->n; i++) {
            if (i)
                ctype__puts(out, ", ");
            if (v->kind == JV_OBJECT) {
                ctype__puts(out, v->keys[i]);
                cs_buf_put_u8(out, '=');
            }
            jtext(v->items[i], out);
        }
        cs_buf_put_u8(out, v->kind == JV_ARRAY ? ']' : '}');
        break;
    }
}

/* Record "<fmt with %s class, %s text>" for value v. */
static int jerr(cs_error *e, const char *fmt, const jv *v)
{
    cs_buf t;
    cs_buf_init(&t);
    jtext(v, &t);
    cs_buf_put_u8(&t, 0);
    int rc = cs_error_set(e, CS_ERR_INVALID, fmt, jclass(v), t.err ? "" : (const char *)t.p);
    cs_buf_destroy(&t);
    return rc;
}

static int jerr1(cs_error *e, const char *fmt, const jv *v)
{
    cs_buf t;
    cs_buf_init(&t);
    jtext(v, &t);
    cs_buf_put_u8(&t, 0);
    int rc = cs_error_set(e, CS_ERR_INVALID, fmt, t.err ? "" : (const char *)t.p);
    cs_buf_destroy(&t);
    return rc;
}

/* ------------------------------------------------ conversion */

static int conv(const ctype *t, const jv *v, cs_buf *out, cs_error *e);

static int from_str(const ctype *t, const jv *v, cs_buf *out, cs_error *e)
{
    return ctype_from_string(t, v->s, v->sn, out, e);
}

static bool is_num(const jv *v) { return v->kind >= JV_INT && v->kind <= JV_DOUBLE; }

/* Number -> its Java String.valueOf text, then fromString. */
static int num_via_text(const ctype *t, const jv *v, cs_buf *out, cs_error *e)
{
    cs_buf s;
    cs_buf_init(&s);
    jtext(v, &s);
    int rc = s.err ? CS_ENOMEM : ctype_from_string(t, (const char *)s.p, s.len, out, e);
    cs_buf_destroy(&s);
    return rc;
}

/* Parse a string holding JSON (collections accept either form). */
static int conv_nested_string(const ctype *t, const jv *v, cs_buf *out, cs_error *e)
{
    jv *inner = jparse(v->s, v->sn);
    if (!inner)
        return cs_error_set(e, CS_ERR_INVALID, "Could not decode JSON string '%.*s'", (int)v->sn, v->s);
    int rc = conv(t, inner, out, e);
    jv_free(inner);
    return rc;
}

static int conv_elem(const ctype *t, const jv *v, cs_buf *out, cs_error *e)
{
    size_t off = out->len;
    cs_buf_put_u32(out, 0);
    int rc = conv(t, v, out, e);
    if (!rc && !out->err)
        cs_buf_patch_u32(out, off, (uint32_t)(out->len - off - 4));
    return rc;
}

static int conv_collection(const ctype *t, const jv *v, cs_buf *out, cs_error *e)
{
    bool map = t->kind == CT_MAP;
    if (map ? v->kind != JV_OBJECT : v->kind != JV_ARRAY) {
        const char *fmt = t->kind == CT_LIST ? "Expected a list, but got a %s: %s"
                        : t->kind == CT_SET ? "Expected a list (representing a set), but got a %s: %s"
                        : "Expected a map, but got a %s: %s";
        return jerr(e, fmt, v);
    }
    cs_buf tmp;
    cs_buf_init(&tmp);
    cs_buf_put_u32(&tmp, (uint32_t)v->n);
    int rc = 0;
    for (size_t i = 0; i < v->n && !rc; i++) {
        if (map) {
            jv key = { .kind = JV_STRING, .s = v->keys[i], .sn = strlen(v->keys[i]) };
            if (v->items[i]->kind == JV_NULL) {
                rc = cs_error_set(e, CS_ERR_INVALID, "Invalid null value in map");
                break;
            }
            rc = conv_elem(t->sub[0], &key, &tmp, e);
            if (!rc)
                rc = conv_elem(t->sub[1], v->items[i], &tmp, e);
        } else {
            if (v->items[i]->kind == JV_NULL) {
                rc = cs_error_set(e, CS_ERR_INVALID, t->kind == CT_LIST ? "Invalid null element in list"
                                                                         : "Invalid null element in set");
                break;
            }
            rc = conv_elem(t->sub[0], v->items[i], &tmp, e);
        }
    }
    if (!rc && tmp.err)
        rc = CS_ENOMEM;
    if (!rc)
        rc = ctype_coll_normalize(t, tmp.p, tmp.len, out);
    cs_buf_destroy(&tmp);
    return rc;
}

static int conv_tuple(const ctype *t, const jv *v, cs_buf *out, cs_error *e)
{
    if (v->kind != JV_ARRAY)
        return jerr(e, "Expected a list representation of a tuple, but got a %s: %s", v);
    if ((int)v->n != t->n_sub) {
        cs_buf s;
        cs_buf_init(&s);
        jtext(v, &s);
        cs_buf_put_u8(&s, 0);
        int rc = cs_error_set(e, CS_ERR_INVALID, (int)v->n > t->n_sub ? "Tuple contains extra items (expected %d): %s"
                                                                     : "Tuple is missing items (expected %d): %s",
                              t->n_sub, s.err ? "" : (const char *)s.p);
        cs_buf_destroy(&s);
        return rc;
    }
    for (size_t i = 0; i < v->n; i++) {
        if (v->items[i]->kind == JV_NULL) {
            cs_buf_put_u32(out, 0xFFFFFFFFu);
            continue;
        }
        int rc = conv_elem(t->sub[i], v->items[i], out, e);
        if (rc)
            return rc;
    }
    return 0;
}

/* Json.handleCaseSensitivity: "\"Name\"" keeps case, other keys lowercased. */
static void key_norm(const char *k, char *out, size_t cap)
{
    size_t n = strlen(k);
    if (n >= 2 && k[0] == '"' && k[n - 1] == '"') {
        snprintf(out, cap, "%.*s", (int)(n - 2), k + 1);
        return;
    }
    size_t i = 0;
    for (; k[i] && i + 1 < cap; i++)
        out[i] = (char)tolower((unsigned char)k[i]);
    out[i] = 0;
}

static int conv_udt(const ctype *t, const jv *v, cs_buf *out, cs_error *e)
{
    if (v->kind != JV_OBJECT)
        return jerr(e, "Expected a map, but got a %s: %s", v);
    char kn[512];
    for (size_t j = 0; j < v->n; j++) {
        key_norm(v->keys[j], kn, sizeof(kn));
        bool found = false;
        for (int i = 0; i < t->n_sub && !found; i++)
            found = strcmp(t->field_names[i], kn) == 0;
        if (!found)
            return cs_error_set(e, CS_ERR_INVALID, "Unknown field '%s' in value of user defined type %s", kn,
                                t->udt_name);
    }
    for (int i = 0; i < t->n_sub; i++) {
        const jv *fv = NULL;
        for (size_t j = 0; j < v->n; j++) {
            key_norm(v->keys[j], kn, sizeof(kn));
            if (strcmp(t->field_names[i], kn) == 0)
                fv = v->items[j];
        }
        if (!fv || fv->kind == JV_NULL) {
            cs_buf_put_u32(out, 0xFFFFFFFFu);
            continue;
        }
        int rc = conv_elem(t->sub[i], fv, out, e);
        if (rc)
            return rc;
    }
    return 0;
}

static int conv(const ctype *t, const jv *v, cs_buf *out, cs_error *e)
{
    bool str = v->kind == JV_STRING;
    switch (t->kind) {
    case CT_INT:
        if (str)
            return from_str(t, v, out, e);
        if (v->kind != JV_INT)
            return jerr(e, "Expected an int value, but got a %s: %s", v);
        return ctype_from_string(t, v->s, v->sn, out, e);
    case CT_BIGINT:
        if (str)
            return from_str(t, v, out, e);
        if (v->kind != JV_INT && v->kind != JV_LONG)
            return jerr(e, "Expected a bigint value, but got a %s: %s", v);
        return ctype_from_string(t, v->s, v->sn, out, e);
    case CT_COUNTER:
        return cs_error_set(e, CS_ERR_INVALID, "Counters are not supported in JSON values");
    case CT_SMALLINT: case CT_TINYINT:
        if (str)
            return from_str(t, v, out, e);
        if (!is_num(v))
            return jerr(e, t->kind == CT_SMALLINT ? "Expected a short value, but got a %s: %s"
                                                  : "Expected a byte value, but got a %s: %s", v);
        return num_via_text(t, v, out, e);
    case CT_VARINT: {
        cs_buf s;
        cs_buf_init(&s);
        jtext(v, &s);
        int rc = ctype__varint_from_text((const char *)s.p, s.len, out);
        cs_buf_destroy(&s);
        if (rc)
            return jerr1(e, "Value '%s' is not a valid representation of a varint value", v);
        return 0;
    }
    case CT_DECIMAL: {
        if (!str && !is_num(v))
            return jerr1(e, "Value '%s' is not a valid representation of a decimal value", v);
        cs_buf s;
        cs_buf_init(&s);
        jtext(v, &s);
        int rc = s.len ? ctype__decimal_from_text((const char *)s.p, s.len, out) : 0;
        cs_buf_destroy(&s);
        if (rc)
            return jerr1(e, "Value '%s' is not a valid representation of a decimal value", v);
        return 0;
    }
    case CT_DOUBLE: case CT_FLOAT:
        if (str)
            return from_str(t, v, out, e);
        if (!is_num(v))
            return jerr(e, t->kind == CT_DOUBLE ? "Expected a double value, but got a %s: %s"
                                                : "Expected a float value, but got a %s: %s", v);
        if (t->kind == CT_DOUBLE) {
            double d = v->kind == JV_DOUBLE ? v->d : strtod(v->s, NULL);
            uint64_t u;
            memcpy(&u, &d, 8);
            cs_buf_put_u64(out, u);
        } else {
            float f = (float)(v->kind == JV_DOUBLE ? v->d : strtod(v->s, NULL));
            uint32_t u;
            memcpy(&u, &f, 4);
            cs_buf_put_u32(out, u);
        }
        return 0;
    case CT_BOOLEAN:
        if (str)
            return from_str(t, v, out, e);
        if (v->kind != JV_BOOL)
            return jerr(e, "Expected a boolean value, but got a %s: %s", v);
        cs_buf_put_u8(out, v->b ? 1 : 0);
        return 0;
    case CT_VARCHAR:
        if (!str)
            return jerr(e, "Expected a UTF-8 string, but got a %s: %s", v);
        return from_str(t, v, out, e);
    case CT_ASCII:
        if (!str)
            return jerr(e, "Expected an ascii string, but got a %s: %s", v);
        return from_str(t, v, out, e);
    case CT_BLOB: case CT_CUSTOM: {
        cs_error sub;
        cs_error_init(&sub);
        const char *why = NULL;
        if (!str)
            why = "";
        else if (v->sn < 2 || v->s[0] != '0' || v->s[1] != 'x')
            why = "missing";
        else if (ctype_hex_decode(v->s + 2, v->sn - 2, out) != 0)
            why = "hex";
        if (!why)
            return 0;
        cs_buf s;
        cs_buf_init(&s);
        jtext(v, &s);
        cs_buf_put_u8(&s, 0);
        const char *txt = s.err ? "" : (const char *)s.p;
        int rc;
        if (*why == 'm')
            rc = cs_error_set(e, CS_ERR_INVALID,
                              "Value '%s' is not a valid blob representation: String representation of blob is missing 0x prefix: %s",
                              txt, txt);
        else if (*why == 'h')
            rc = cs_error_set(e, CS_ERR_INVALID, "Value '%s' is not a valid blob representation: cannot parse '%s' as hex bytes",
                              txt, txt + 2);
        else
            rc = cs_error_set(e, CS_ERR_INVALID, "Value '%s' is not a valid blob representation: %s cannot be cast to String",
                              txt, jclass(v));
        cs_buf_destroy(&s);
        return rc;
    }
    case CT_UUID: case CT_TIMEUUID:
        if (!str)
            return jerr(e, t->kind == CT_UUID ? "Expected a string representation of a uuid, but got a %s: %s"
                                              : "Expected a string representation of a timeuuid, but got a %s: %s", v);
        return from_str(t, v, out, e);
    case CT_TIMESTAMP:
        if (v->kind == JV_INT || v->kind == JV_LONG) {
            cs_buf_put_u64(out, (uint64_t)strtoll(v->s, NULL, 10));
            return 0;
        }
        if (!str)
            return jerr(e, "Expected a long or a datestring representation of a timestamp value, but got a %s: %s", v);
        return from_str(t, v, out, e);
    case CT_DATE:
        if (!str)
            return jerr(e, "Expected a string representation of a date value, but got a %s: %s", v);
        return from_str(t, v, out, e);
    case CT_TIME:
        if (!str)
            return jerr(e, "Expected a string representation of a time value, but got a %s: %s", v);
        return from_str(t, v, out, e);
    case CT_INET:
        if (!str)
            return jerr(e, "Expected a string representation of an inet value, but got a %s: %s", v);
        return from_str(t, v, out, e);
    case CT_DURATION:
        if (!str)
            return jerr(e, "Expected a string representation of a duration, but got a %s: %s", v);
        return from_str(t, v, out, e);
    case CT_LIST: case CT_SET: case CT_MAP:
        if (str)
            return conv_nested_string(t, v, out, e);
        return conv_collection(t, v, out, e);
    case CT_TUPLE:
        if (str)
            return conv_nested_string(t, v, out, e);
        return conv_tuple(t, v, out, e);
    case CT_UDT:
        if (str)
            return conv_nested_string(t, v, out, e);
        return conv_udt(t, v, out, e);
    case CT_EMPTY:
        if (!str || v->sn)
            return jerr1(e, "Expected an empty string, but got: %s", v);
        return 0;
    }
    return cs_error_set(e, CS_ERR_INVALID, "Unsupported type for JSON");
}

bool ctype_json_is_null(const char *json, size_t n)
{
    while (n > 0 && isspace((unsigned char)json[n - 1]))
        n--;
    while (n > 0 && isspace((unsigned char)*json)) {
        json++;
        n--;
    }
    return n == 4 && memcmp(json, "null", 4) == 0;
}

int ctype_from_json(const ctype *t, const char *json, size_t n, cs_buf *out, cs_error *e)
{
    jv *v = jparse(json, n);
    if (!v)
        return cs_error_set(e, CS_ERR_INVALID, "Could not decode JSON string '%.*s'", (int)(n > 200 ? 200 : n), json);
    size_t start = out->len;
    int rc = v->kind == JV_NULL ? 0 : conv(t, v, out, e);
    jv_free(v);
    if (!rc && out->err)
        rc = CS_ENOMEM;
    if (rc)
        out->len = start <= out->len ? start : out->len;
    return rc;
}
