/*
 * format.c: text of values.
 *   ctype_format_cql:  a CQL literal, as Cassandra's CQL3Type.toCQLLiteral
 *                      prints it ('it''s', 0xcafe, '2021-01-01T00:00:00.000Z',
 *                      [1, 2], {k: v}, (a, null)).
 *   ctype_format_json: Cassandra's toJSONString (SELECT JSON / toJson()).
 * Floating point uses Java's Double.toString / Float.toString forms
 * ("1.0", "1.0E20", "NaN", "-Infinity").
 */
#include <arpa/inet.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cql/types/types_int.h"
#include "common/util.h"

/* ------------------------------------------------ Java float text */

/* Shortest decimal digits that round-trip, as digits + exponent
 * (value = 0.d1d2... x 10^exp); single precision if is_float. */
static void shortest(double d, bool is_float, char *digs, int *ndig, int *exp10)
{
    char buf[64];
    int maxp = is_float ? 9 : 17;
    for (int p = 1; p <= maxp; p++) {
        snprintf(buf, sizeof(buf), "%.*e", p - 1, d);
        bool ok = is_float ? (strtof(buf, NULL) == (float)d) : (strtod(buf, NULL) == d);
        if (ok || p == maxp)
            break;
    }
    /* buf: d.ddde[+-]xx */
    int n = 0;
    char *e = strchr(buf, 'e');
    for (char *q = buf; q < e; q++)
        if (*q >= '0' && *q <= '9')
            digs[n++] = *q;
    while (n > 1 && digs[n - 1] == '0')
        n--;
    digs[n] = 0;
    *ndig = n;
    *exp10 = atoi(e + 1) + 1;
}

void ctype_java_digits(double d, char digs[32], int *ndig, int *exp10)
{
    shortest(fabs(d), false, digs, ndig, exp10);
}

void ctype_format_java_double(double d, bool is_float, cs_buf *out)
{
    if (isnan(d)) {
        ctype__puts(out, "NaN");
        return;
    }
    if (isinf(d)) {
        ctype__puts(out, d < 0 ? "-Infinity" : "Infinity");
        return;
    }
    if (d == 0) {
        ctype__puts(out, signbit(d) ? "-0.0" : "0.0");
        return;
    }
    if (d < 0) {
        cs_buf_put_u8(out, '-');
        d = -d;
    }
    char digs[32];
    int nd, e;
    shortest(d, is_float, digs, &nd, &e);
    if (d >= 1e-3 && d < 1e7) {
        if (e <= 0) {
            ctype__puts(out, "0.");
            for (int i = 0; i < -e; i++)
                cs_buf_put_u8(out, '0');
            cs_buf_put(out, digs, (size_t)nd);
        } else if (nd <= e) {
            cs_buf_put(out, digs, (size_t)nd);
            for (int i = nd; i < e; i++)
                cs_buf_put_u8(out, '0');
            ctype__puts(out, ".0");
        } else {
            cs_buf_put(out, digs, (size_t)e);
            cs_buf_put_u8(out, '.');
            cs_buf_put(out, digs + e, (size_t)(nd - e));
        }
        return;
    }
    if (nd == 1) {
        /* Java writes two significant digits here and picks the pair nearest
         * the exact value (Double.MIN_VALUE is 4.9E-324, not 5.0E-324). */
        char two[32];
        snprintf(two, sizeof(two), "%.1e", d);
        bool ok = is_float ? (strtof(two, NULL) == (float)d) : (strtod(two, NULL) == d);
        if (ok && two[2] != '0') {
            digs[0] = two[0];
            digs[1] = two[2];
            nd = 2;
            e = atoi(strchr(two, 'e') + 1) + 1;
        }
    }
    cs_buf_put_u8(out, (uint8_t)digs[0]);
    cs_buf_put_u8(out, '.');
    if (nd > 1)
        cs_buf_put(out, digs + 1, (size_t)(nd - 1));
    else
        cs_buf_put_u8(out, '0');
    ctype__printf(out, "E%d", e - 1);
}

/* ------------------------------------------------ scalar text */

static double get_double(const uint8_t *v)
{
    uint64_t u = cs_be64(v);
    double d;
    memcpy(&d, &u, 8);
    return d;
}

static float get_float(const uint8_t *v)
{
    uint32_t u = cs_be32(v);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Java InetAddress.getHostAddress: dotted quad, or 8 uncompressed hex groups. */
static void fmt_inet(const uint8_t *v, size_t n, cs_buf *out)
{
    if (n == 4) {
        ctype__printf(out, "%d.%d.%d.%d", v[0], v[1], v[2], v[3]);
        return;
    }
    if (n == 16) {
        static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF };
        if (memcmp(v, mapped, 12) == 0) {
            fmt_inet(v + 12, 4, out);
            return;
        }
        for (int i = 0; i < 8; i++)
            ctype__printf(out, i ? ":%x" : "%x", cs_be16(v + 2 * i));
    }
}

static void put_quoted_cql(cs_buf *out, const uint8_t *v, size_t n)
{
    cs_buf_put_u8(out, '\'');
    for (size_t i = 0; i < n; i++) {
        if (v[i] == '\'')
            cs_buf_put_u8(out, '\'');
        cs_buf_put_u8(out, v[i]);
    }
    cs_buf_put_u8(out, '\'');
}

/* Json.quoteAsJsonString: quotes, backslash escapes for " \ and controls. */
void ctype_json_quote(const uint8_t *v, size_t n, cs_buf *out)
{
    cs_buf_put_u8(out, '"');
    for (size_t i = 0; i < n; i++) {
        uint8_t c = v[i];
        switch (c) {
        case '"': ctype__puts(out, "\\\""); break;
        case '\\': ctype__puts(out, "\\\\"); break;
        case '\n': ctype__puts(out, "\\n"); break;
        case '\r': ctype__puts(out, "\\r"); break;
        case '\t': ctype__puts(out, "\\t"); break;
        case '\b': ctype__puts(out, "\\b"); break;
        case '\f': ctype__puts(out, "\\f"); break;
        default:
            if (c < 0x20)
                ctype__printf(out, "\\u%04x", c);
            else
                cs_buf_put_u8(out, c);
        }
    }
    cs_buf_put_u8(out, '"');
}

/* The unquoted text of a scalar (serializer toString), for non-empty v. */
static int scalar_text(const ctype *t, const uint8_t *v, size_t n, cs_buf *out)
{
    switch (t->kind) {
    case CT_TINYINT:
        if (n != 1) return CS_EINVAL;
        ctype__printf(out, "%d", (int8_t)v[0]);
        return 0;
    case CT_SMALLINT:
        if (n != 2) return CS_EINVAL;
        ctype__printf(out, "%d", (int16_t)cs_be16(v));
        return 0;
    case CT_INT:
        if (n != 4) return CS_EINVAL;
        ctype__printf(out, "%d", (int32_t)cs_be32(v));
        return 0;
    case CT_BIGINT: case CT_COUNTER:
        if (n != 8) return CS_EINVAL;
        ctype__printf(out, "%lld", (long long)(int64_t)cs_be64(v));
        return 0;
    case CT_VARINT:
        ctype__varint_to_text(v, n, out);
        return 0;
    case CT_DECIMAL:
        if (n < 4) return CS_EINVAL;
        ctype__decimal_to_text(v, n, out);
        return 0;
    case CT_FLOAT:
        if (n != 4) return CS_EINVAL;
        ctype_format_java_double(get_float(v), true, out);
        return 0;
    case CT_DOUBLE:
        if (n != 8) return CS_EINVAL;
        ctype_format_java_double(get_double(v), false, out);
        return 0;
    case CT_BOOLEAN:
        if (n != 1) return CS_EINVAL;
        ctype__puts(out, v[0] ? "true" : "false");
        return 0;
    case CT_UUID: case CT_TIMEUUID: {
        if (n != 16) return CS_EINVAL;
        char s[37];
        cs_uuid u;
        memcpy(u.b, v, 16);
        cs_uuid_format(&u, s);
        cs_buf_put(out, s, 36);
        return 0;
    }
    case CT_INET:
        if (n != 4 && n != 16) return CS_EINVAL;
        fmt_inet(v, n, out);
        return 0;
    case CT_TIMESTAMP:
        if (n != 8) return CS_EINVAL;
        ctype__fmt_timestamp((int64_t)cs_be64(v), false, out);
        return 0;
    case CT_DATE:
        if (n != 4) return CS_EINVAL;
        ctype__fmt_date(cs_be32(v), out);
        return 0;
    case CT_TIME:
        if (n != 8) return CS_EINVAL;
        ctype__fmt_time((int64_t)cs_be64(v), out);
        return 0;
    case CT_DURATION: {
        int64_t mo, d, ns;
        if (ctype__get_duration(v, n, &mo, &d, &ns)) return CS_EINVAL;
        ctype__fmt_duration((int32_t)mo, (int32_t)d, ns, out);
        return 0;
    }
    default:
        cs_buf_put(out, v, n);
        return 0;
    }
}

/* ------------------------------------------------ CQL literals */

static int fmt_cql(const ctype *t, const uint8_t *v, size_t n, cs_buf *out, int depth);

static int fmt_cql_coll(const ctype *t, const uint8_t *v, size_t n, cs_buf *out, int depth)
{
    int32_t cnt = ctype_coll_count(v, n);
    if (cnt < 0)
        return CS_EINVAL;
    bool map = t->kind == CT_MAP;
    cs_buf_put_u8(out, t->kind == CT_LIST ? '[' : '{');
    size_t pos = 4;
    for (int32_t i = 0; i < cnt; i++) {
        if (i)
            ctype__puts(out, ", ");
        for (int j = 0; j < (map ? 2 : 1); j++) {
            const uint8_t *p;
            int32_t len;
            if (ctype__rd_elem(v, n, &pos, &p, &len))
                return CS_EINVAL;
            if (j)
                ctype__puts(out, ": ");
            int rc = len < 0 ? (ctype__puts(out, "null"), 0) : fmt_cql(t->sub[j], p, (size_t)len, out, depth + 1);
            if (rc)
                return rc;
        }
    }
    cs_buf_put_u8(out, t->kind == CT_LIST ? ']' : '}');
    return 0;
}

static int fmt_cql_tuple(const ctype *t, const uint8_t *v, size_t n, cs_buf *out, int depth)
{
    bool udt = t->kind == CT_UDT;
    cs_buf_put_u8(out, udt ? '{' : '(');
    size_t pos = 0;
    for (int i = 0; i < t->n_sub; i++) {
        if (i)
            ctype__puts(out, ", ");
        if (udt) {
            ctype__quote_ident(t->field_names[i], out);
            ctype__puts(out, ": ");
        }
        const uint8_t *p = NULL;
        int32_t len = -1;
        if (pos < n && ctype__rd_elem(v, n, &pos, &p, &len))
            return CS_EINVAL;
        if (len < 0) {
            ctype__puts(out, "null");
            continue;
        }
        int rc = fmt_cql(t->sub[i], p, (size_t)len, out, depth + 1);
        if (rc)
            return rc;
    }
    cs_buf_put_u8(out, udt ? '}' : ')');
    return 0;
}

static int fmt_cql(const ctype *t, const uint8_t *v, size_t n, cs_buf *out, int depth)
{
    if (depth > 64)
        return CS_EINVAL;
    switch (t->kind) {
    case CT_ASCII: case CT_VARCHAR:
        put_quoted_cql(out, v, n);
        return 0;
    case CT_BLOB: case CT_CUSTOM:
        ctype__puts(out, "0x");
        ctype__put_hex(out, v, n);
        return 0;
    case CT_LIST: case CT_SET: case CT_MAP:
        if (n == 0) {
            ctype__puts(out, t->kind == CT_LIST ? "[]" : "{}");
            return 0;
        }
        return fmt_cql_coll(t, v, n, out, depth);
    case CT_TUPLE: case CT_UDT:
        return fmt_cql_tuple(t, v, n, out, depth);
    case CT_EMPTY:
        return 0;
    default:
        break;
    }
    if (n == 0)
        return 0;
    bool quote = t->kind == CT_INET || t->kind == CT_TIMESTAMP || t->kind == CT_DATE || t->kind == CT_TIME;
    if (quote)
        cs_buf_put_u8(out, '\'');
    int rc = scalar_text(t, v, n, out);
    if (quote)
        cs_buf_put_u8(out, '\'');
    return rc;
}

int ctype_format_cql(const ctype *t, const uint8_t *v, size_t n, cs_buf *out)
{
    size_t start = out->len;
    int rc = fmt_cql(t, v, n, out, 0);
    if (!rc && out->err)
        rc = CS_ENOMEM;
    if (rc)
        out->len = start <= out->len ? start : out->len;
    return rc;
}

/* ------------------------------------------------ JSON */

static int fmt_json(const ctype *t, const uint8_t *v, size_t n, cs_buf *out, int depth);

static int fmt_json_coll(const ctype *t, const uint8_t *v, size_t n, cs_buf *out, int depth)
{
    int32_t cnt = ctype_coll_count(v, n);
    if (cnt < 0)
        return CS_EINVAL;
    bool map = t->kind == CT_MAP;
    cs_buf_put_u8(out, map ? '{' : '[');
    size_t pos = 4;
    for (int32_t i = 0; i < cnt; i++) {
        if (i)
            ctype__puts(out, ", ");
        const uint8_t *p;
        int32_t len;
        if (ctype__rd_elem(v, n, &pos, &p, &len) || len < 0)
            return CS_EINVAL;
        if (map) {
            /* MapType.toJSONString: non-string keys are wrapped in quotes */
            cs_buf k;
            cs_buf_init(&k);
            int rc = fmt_json(t->sub[0], p, (size_t)len, &k, depth + 1);
            if (!rc && k.err)
                rc = CS_ENOMEM;
            if (!rc) {
                if (k.len > 0 && k.p[0] == '"') {
                    cs_buf_put(out, k.p, k.len);
                } else {
                    ctype_json_quote(k.p, k.len, out);
                }
            }
            cs_buf_destroy(&k);
            if (rc)
                return rc;
            ctype__puts(out, ": ");
            if (ctype__rd_elem(v, n, &pos, &p, &len) || len < 0)
                return CS_EINVAL;
        }
        int rc = fmt_json(t->sub[map ? 1 : 0], p, (size_t)len, out, depth + 1);
        if (rc)
            return rc;
    }
    cs_buf_put_u8(out, map ? '}' : ']');
    return 0;
}

static int fmt_json_tuple(const ctype *t, const uint8_t *v, size_t n, cs_buf *out, int depth)
{
    bool udt = t->kind == CT_UDT;
    cs_buf_put_u8(out, udt ? '{' : '[');
    size_t pos = 0;
    for (int i = 0; i < t->n_sub; i++) {
        if (i)
            ctype__puts(out, ", ");
        if (udt) {
            /* UserType.toJSONString: case-sensitive names keep their quotes */
            const char *nm = t->field_names[i];
            bool lower = true;
            for (const char *q = nm; *q; q++)
                if (*q >= 'A' && *q <= 'Z')
                    lower = false;
            cs_buf fn;
            cs_buf_init(&fn);
            if (!lower)
                cs_buf_put_u8(&fn, '"');
            ctype__puts(&fn, nm);
            if (!lower)
                cs_buf_put_u8(&fn, '"');
            ctype_json_quote(fn.p, fn.len, out);
            cs_buf_destroy(&fn);
            ctype__puts(out, ": ");
        }
        const uint8_t *p = NULL;
        int32_t len = -1;
        if (pos < n && ctype__rd_elem(v, n, &pos, &p, &len))
            return CS_EINVAL;
        if (len < 0) {
            ctype__puts(out, "null");
            continue;
        }
        int rc = fmt_json(t->sub[i], p, (size_t)len, out, depth + 1);
        if (rc)
            return rc;
    }
    cs_buf_put_u8(out, udt ? '}' : ']');
    return 0;
}

static int fmt_json(const ctype *t, const uint8_t *v, size_t n, cs_buf *out, int depth)
{
    if (depth > 64)
        return CS_EINVAL;
    switch (t->kind) {
    case CT_ASCII: case CT_VARCHAR:
        ctype_json_quote(v, n, out);
        return 0;
    case CT_BLOB: case CT_CUSTOM:
        ctype__puts(out, "\"0x");
        ctype__put_hex(out, v, n);
        cs_buf_put_u8(out, '"');
        return 0;
    case CT_LIST: case CT_SET: case CT_MAP:
        if (n == 0) {
            ctype__puts(out, t->kind == CT_MAP ? "{}" : "[]");
            return 0;
        }
        return fmt_json_coll(t, v, n, out, depth);
    case CT_TUPLE: case CT_UDT:
        return fmt_json_tuple(t, v, n, out, depth);
    case CT_EMPTY:
        ctype__puts(out, "\"\"");
        return 0;
    default:
        break;
    }
    if (n == 0) {
        ctype__puts(out, "\"\"");
        return 0;
    }
    switch (t->kind) {
    case CT_FLOAT: case CT_DOUBLE: {
        double d = t->kind == CT_FLOAT ? (n == 4 ? get_float(v) : 0) : (n == 8 ? get_double(v) : 0);
        if (isnan(d) || isinf(d)) {
            ctype__puts(out, "null");
            return 0;
        }
        return scalar_text(t, v, n, out);
    }
    case CT_TIMESTAMP:
        if (n != 8)
            return CS_EINVAL;
        cs_buf_put_u8(out, '"');
        ctype__fmt_timestamp((int64_t)cs_be64(v), true, out);
        cs_buf_put_u8(out, '"');
        return 0;
    case CT_UUID: case CT_TIMEUUID: case CT_INET: case CT_DATE: case CT_TIME: case CT_DURATION: {
        cs_buf_put_u8(out, '"');
        int rc = scalar_text(t, v, n, out);
        cs_buf_put_u8(out, '"');
        return rc;
    }
    default:
        return scalar_text(t, v, n, out);
    }
}

int ctype_format_json(const ctype *t, const uint8_t *v, size_t n, cs_buf *out)
{
    size_t start = out->len;
    int rc = fmt_json(t, v, n, out, 0);
    if (!rc && out->err)
        rc = CS_ENOMEM;
    if (rc && out->len > start)
        out->len = start;
    return rc;
}
