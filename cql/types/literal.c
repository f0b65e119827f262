/*
 * literal.c: CQL constants to serialized values (ctype_from_literal), with
 * Cassandra's rules for which literal kind fits which type
 * (cql3/Constants.Literal.testAssignment) and the messages of each type's
 * fromString (db/marshal/XType.java), e.g.
 *   Invalid STRING constant (foo) for "k" of type int
 *   Unable to make int from '99999999999'
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cql/types/types_int.h"
#include "common/util.h"

static const char *lit_name(lit_kind k)
{
    switch (k) {
    case LIT_STRING: return "STRING";
    case LIT_INTEGER: return "INTEGER";
    case LIT_FLOAT: return "FLOAT";
    case LIT_BOOLEAN: return "BOOLEAN";
    case LIT_UUID: return "UUID";
    case LIT_HEX: return "HEX";
    case LIT_DURATION: return "DURATION";
    }
    return "?";
}

/* Constants.Literal.testAssignment. */
bool ctype_literal_assignable(const ctype *t, lit_kind k)
{
    switch (t->kind) {
    case CT_CUSTOM: case CT_TUPLE:   /* not a native type: any constant, read by fromString */
        return true;
    case CT_ASCII: case CT_VARCHAR: case CT_INET:
        return k == LIT_STRING;
    case CT_DATE: case CT_TIME: case CT_TIMESTAMP:
        return k == LIT_STRING || k == LIT_INTEGER;
    case CT_BIGINT: case CT_COUNTER: case CT_INT: case CT_SMALLINT: case CT_TINYINT: case CT_VARINT:
        return k == LIT_INTEGER;
    case CT_DECIMAL: case CT_DOUBLE: case CT_FLOAT:
        return k == LIT_INTEGER || k == LIT_FLOAT;
    case CT_DURATION:
        return k == LIT_INTEGER || k == LIT_DURATION;
    case CT_UUID: case CT_TIMEUUID:
        return k == LIT_UUID;
    case CT_BOOLEAN:
        return k == LIT_BOOLEAN;
    case CT_BLOB:
        return k == LIT_HEX;
    default:
        return false;
    }
}

/* Parse a Java-style integer (Integer.parseInt etc.): [+-]digits within [lo, hi]. */
static int parse_int(const char *s, size_t n, int64_t lo, int64_t hi, int64_t *out)
{
    size_t i = 0;
    bool neg = false;
    if (n > 0 && (s[0] == '-' || s[0] == '+')) {
        neg = s[0] == '-';
        i = 1;
    }
    if (i == n)
        return -1;
    uint64_t v = 0;
    for (; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return -1;
        if (v > ((uint64_t)1 << 63) / 10 + 1)
            return -1;
        v = v * 10 + (uint64_t)(s[i] - '0');
        if (v > ((uint64_t)1 << 63))
            return -1;
    }
    int64_t x;
    if (neg)
        x = v == ((uint64_t)1 << 63) ? INT64_MIN : -(int64_t)v;
    else if (v > (uint64_t)INT64_MAX)
        return -1;
    else
        x = (int64_t)v;
    if (x < lo || x > hi)
        return -1;
    *out = x;
    return 0;
}

/* Java Double.parseDouble, restricted to decimal syntax plus NaN/Infinity and
 * an optional f/F/d/D suffix. */
static int parse_double(const char *s, size_t n, double *out)
{
    char buf[400];
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        n--;
    while (n > 0 && isspace((unsigned char)*s)) {
        s++;
        n--;
    }
    if (n == 0 || n >= sizeof(buf))
        return -1;
    memcpy(buf, s, n);
    buf[n] = 0;
    const char *p = buf;
    bool neg = false;
    if (*p == '-' || *p == '+') {
        neg = *p == '-';
        p++;
    }
    if (strcasecmp(p, "nan") == 0) {
        *out = NAN;
        return 0;
    }
    if (strcasecmp(p, "infinity") == 0) {
        *out = neg ? -INFINITY : INFINITY;
        return 0;
    }
    size_t l = strlen(p);
    if (l > 0 && strchr("fFdD", p[l - 1]))
        buf[--n] = 0;
    /* only digits . e E + - allowed (no hex floats, no "inf") */
    bool dig = false;
    for (const char *q = p; *q; q++) {
        if (isdigit((unsigned char)*q))
            dig = true;
        else if (!strchr(".eE+-", *q))
            return -1;
    }
    if (!dig)
        return -1;
    char *end;
    errno = 0;
    double d = strtod(buf, &end);
    if (*end != 0)
        return -1;
    *out = d;
    return 0;
}

/* Constants.Type.getPreferedTypeFor: an integer literal is an int if it
 * fits one, else a bigint, else a varint; a floating one a double if the
 * double it parses to is numerically the same (BigDecimal.valueOf), else a
 * decimal; NaN and the infinities doubles.  The other kinds have one type. */
const ctype *ctype_literal_preferred(lit_kind k, const char *text, size_t n)
{
    switch (k) {
    case LIT_STRING: return ctype_scalar(CT_VARCHAR);
    case LIT_BOOLEAN: return ctype_scalar(CT_BOOLEAN);
    case LIT_UUID: return ctype_scalar(CT_UUID);
    case LIT_HEX: return ctype_scalar(CT_BLOB);
    case LIT_DURATION: return ctype_scalar(CT_DURATION);
    case LIT_INTEGER: case LIT_FLOAT: break;
    default: return ctype_scalar(CT_BLOB);
    }
    if (k == LIT_INTEGER) {
        int64_t x;
        if (parse_int(text, n, INT32_MIN, INT32_MAX, &x) == 0)
            return ctype_scalar(CT_INT);
        if (parse_int(text, n, INT64_MIN, INT64_MAX, &x) == 0)
            return ctype_scalar(CT_BIGINT);
        return ctype_scalar(CT_VARINT);
    }
    double d;
    if (parse_double(text, n, &d) != 0)
        return ctype_scalar(CT_DOUBLE);      /* NaN, Infinity, or refused later */
    if (isnan(d) || (isinf(d) && memchr(text, 'I', n)))
        return ctype_scalar(CT_DOUBLE);
    if (isinf(d))
        return ctype_scalar(CT_DECIMAL);    /* beyond a double */
    cs_buf lit, dbl, j;
    cs_buf_init(&lit);
    cs_buf_init(&dbl);
    cs_buf_init(&j);
    ctype_format_java_double(d, false, &j);
    bool same = false;
    if (!j.err && ctype__decimal_from_text(text, n, &lit) == 0 &&
        ctype__decimal_from_text((const char *)j.p, j.len, &dbl) == 0 && lit.len >= 4 && dbl.len >= 4)
        same = ctype__num_cmp(lit.p + 4, lit.len - 4, (int32_t)cs_be32(lit.p), dbl.p + 4, dbl.len - 4,
                              (int32_t)cs_be32(dbl.p)) == 0;
    cs_buf_destroy(&lit);
    cs_buf_destroy(&dbl);
    cs_buf_destroy(&j);
    return ctype_scalar(same ? CT_DOUBLE : CT_DECIMAL);
}

static int hex_val(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Hex.hexToBytes: even length, hex digits only. */
int ctype_hex_decode(const char *s, size_t n, cs_buf *out)
{
    if (n % 2)
        return CS_EINVAL;
    for (size_t i = 0; i < n; i += 2) {
        int a = hex_val(s[i]), b = hex_val(s[i + 1]);
        if (a < 0 || b < 0)
            return CS_EINVAL;
        cs_buf_put_u8(out, (uint8_t)(a * 16 + b));
    }
    return 0;
}

static int fail(cs_error *e, const char *fmt, const char *s, size_t n)
{
    return cs_error_set(e, CS_ERR_INVALID, fmt, (int)n, s);
}

/* TupleType.fromString: fields split on ':' not preceded by a backslash,
 * '@' for a null field, '\:' and '\@' unescaped, each field by its own
 * type's fromString; fewer fields than the type make a shorter value. */
static int tuple_from_string(const ctype *t, const char *s, size_t n, cs_buf *out, cs_error *e)
{
    int count = n ? 1 : 0;
    for (size_t i = 0; i < n; i++)
        count += s[i] == ':' && (i == 0 || s[i - 1] != '\\');
    if (count > t->n_sub) {
        cs_buf tb;
        cs_buf_init(&tb);
        ctype_to_cql(t, &tb);
        int rc = cs_error_set(e, CS_ERR_INVALID, "Invalid tuple literal: too many elements. Type %.*s expects %d but got %d",
                              (int)tb.len, tb.p ? (const char *)tb.p : "", t->n_sub, count);
        cs_buf_destroy(&tb);
        return rc;
    }
    cs_buf f;
    cs_buf_init(&f);
    size_t start = 0;
    int rc = 0;
    for (int k = 0; k < count && rc == 0; k++) {
        size_t end = start;
        while (end < n && !(s[end] == ':' && (end == 0 || s[end - 1] != '\\')))
            end++;
        if (end - start == 1 && s[start] == '@') {
            cs_buf_put_u32(out, (uint32_t)-1);
        } else {
            cs_buf_reset(&f);
            for (size_t i = start; i < end; i++)
                if (!(s[i] == '\\' && i + 1 < end && (s[i + 1] == ':' || s[i + 1] == '@')))
                    cs_buf_put_u8(&f, (uint8_t)s[i]);
            if (f.err) {
                rc = CS_ENOMEM;
                break;
            }
            size_t at = out->len;
            cs_buf_put_u32(out, 0);
            rc = ctype_from_string(t->sub[k], f.p ? (const char *)f.p : "", f.len, out, e);
            if (rc == 0 && !out->err)
                cs_st32(out->p + at, (uint32_t)(out->len - at - 4));
        }
        start = end + 1;
    }
    cs_buf_destroy(&f);
    return rc;
}

/* The text form of a value of type t (AbstractType.fromString): scalars
 * and tuples; also used by JSON parsing and CAST.  0 or CS_EUSER with e. */
int ctype_from_string(const ctype *t, const char *s, size_t n, cs_buf *out, cs_error *e)
{
    int64_t x;
    switch (t->kind) {
    case CT_TUPLE:
        return tuple_from_string(t, s, n, out, e);
    case CT_ASCII:
        for (size_t i = 0; i < n; i++)
            if ((uint8_t)s[i] & 0x80)
                return cs_error_set(e, CS_ERR_INVALID,
                                    "Invalid ASCII character in string literal: java.nio.charset.UnmappableCharacterException: Input length = 1");
        cs_buf_put(out, s, n);
        return 0;
    case CT_VARCHAR:
        if (!ctype__utf8_valid((const uint8_t *)s, n))
            return cs_error_set(e, CS_ERR_INVALID, "String didn't validate.");
        cs_buf_put(out, s, n);
        return 0;
    case CT_BLOB: case CT_CUSTOM:
        if (ctype_hex_decode(s, n, out) != 0)
            return fail(e, "cannot parse '%.*s' as hex bytes", s, n);
        return 0;
    case CT_TINYINT:
        if (n == 0)
            return 0;
        if (parse_int(s, n, INT8_MIN, INT8_MAX, &x))
            return fail(e, "Unable to make byte from '%.*s'", s, n);
        cs_buf_put_u8(out, (uint8_t)x);
        return 0;
    case CT_SMALLINT:
        if (n == 0)
            return 0;
        if (parse_int(s, n, INT16_MIN, INT16_MAX, &x))
            return fail(e, "Unable to make short from '%.*s'", s, n);
        cs_buf_put_u16(out, (uint16_t)x);
        return 0;
    case CT_INT:
        if (n == 0)
            return 0;
        if (parse_int(s, n, INT32_MIN, INT32_MAX, &x))
            return fail(e, "Unable to make int from '%.*s'", s, n);
        cs_buf_put_u32(out, (uint32_t)x);
        return 0;
    case CT_BIGINT: case CT_COUNTER:
        if (n == 0)
            return 0;
        if (parse_int(s, n, INT64_MIN, INT64_MAX, &x))
            return fail(e, "Unable to make long from '%.*s'", s, n);
        cs_buf_put_u64(out, (uint64_t)x);
        return 0;
    case CT_VARINT:
        if (n == 0)
            return 0;
        if (ctype__varint_from_text(s, n, out) != 0)
            return fail(e, "unable to make int from '%.*s'", s, n);
        return 0;
    case CT_DECIMAL:
        if (n == 0)
            return 0;
        if (ctype__decimal_from_text(s, n, out) != 0)
            return fail(e, "unable to make BigDecimal from '%.*s'", s, n);
        return 0;
    case CT_DOUBLE: case CT_FLOAT: {
        double d;
        if (n == 0)
            return 0;
        if (parse_double(s, n, &d) != 0)
            return fail(e, t->kind == CT_DOUBLE ? "Unable to make double from '%.*s'" : "Unable to make float from '%.*s'",
                        s, n);
        if (t->kind == CT_DOUBLE) {
            uint64_t u;
            memcpy(&u, &d, 8);
            cs_buf_put_u64(out, u);
        } else {
            /* Float.parseFloat rounds once, straight from the decimal text */
            float f = (float)d;
            if (isfinite(d) && d != 0) {
                char tmp[400];
                snprintf(tmp, sizeof(tmp), "%.*s", (int)n, s);
                size_t tl = strlen(tmp);
                while (tl > 0 && strchr("fFdD \t", tmp[tl - 1]))
                    tmp[--tl] = 0;
                f = strtof(tmp, NULL);
            }
            uint32_t u;
            memcpy(&u, &f, 4);
            cs_buf_put_u32(out, u);
        }
        return 0;
    }
    case CT_BOOLEAN:
        if (n == 0 || (n == 5 && strncasecmp(s, "false", 5) == 0)) {
            cs_buf_put_u8(out, 0);
            return 0;
        }
        if (n == 4 && strncasecmp(s, "true", 4) == 0) {
            cs_buf_put_u8(out, 1);
            return 0;
        }
        return fail(e, "Unable to make boolean from '%.*s'", s, n);
    case CT_UUID: case CT_TIMEUUID: {
        cs_uuid u;
        if (n == 0)
            return 0;
        if (n != 36 || cs_uuid_parse(s, n, &u) != 0) {
            if (t->kind == CT_TIMEUUID)
                return fail(e, "Unknown timeuuid representation: %.*s", s, n);
            return fail(e, "Unable to make UUID from '%.*s'", s, n);
        }
        if (t->kind == CT_TIMEUUID && (u.b[6] >> 4) != 1)
            return cs_error_set(e, CS_ERR_INVALID, "TimeUUID supports only version 1 UUIDs");
        cs_buf_put(out, u.b, 16);
        return 0;
    }
    case CT_INET: {
        char buf[64];
        uint8_t a[16];
        if (n == 0)
            return 0;
        if (n >= sizeof(buf))
            return fail(e, "Unable to make inet address from '%.*s'", s, n);
        memcpy(buf, s, n);
        buf[n] = 0;
        if (inet_pton(AF_INET, buf, a) == 1) {
            cs_buf_put(out, a, 4);
            return 0;
        }
        if (inet_pton(AF_INET6, buf, a) == 1) {
            /* Java's InetAddress turns v4-mapped v6 addresses into v4 */
            static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF };
            if (memcmp(a, mapped, 12) == 0)
                cs_buf_put(out, a + 12, 4);
            else
                cs_buf_put(out, a, 16);
            return 0;
        }
        if (strcmp(buf, "localhost") == 0) {
            static const uint8_t lo[4] = { 127, 0, 0, 1 };
            cs_buf_put(out, lo, 4);
            return 0;
        }
        return fail(e, "Unable to make inet address from '%.*s'", s, n);
    }
    case CT_TIMESTAMP: {
        int64_t ms;
        if (n == 0)
            return 0;
        if (ctype__parse_timestamp(s, n, &ms) != 0) {
            bool raw = n > 0;
            for (size_t i = (s[0] == '-'); i < n && raw; i++)
                raw = isdigit((unsigned char)s[i]);
            if (raw)
                return fail(e, "Unable to make long (for date) from: '%.*s'", s, n);
            return fail(e, "Unable to parse a date/time from '%.*s'", s, n);
        }
        cs_buf_put_u64(out, (uint64_t)ms);
        return 0;
    }
    case CT_DATE: {
        uint32_t d;
        if (n == 0)
            return 0;
        int rc = ctype__parse_date(s, n, &d, e);
        if (rc)
            return rc;
        cs_buf_put_u32(out, d);
        return 0;
    }
    case CT_TIME: {
        int64_t ns;
        if (n == 0)
            return 0;
        int rc = ctype__parse_time(s, n, &ns, e);
        if (rc)
            return rc;
        cs_buf_put_u64(out, (uint64_t)ns);
        return 0;
    }
    case CT_DURATION: {
        int32_t mo, d;
        int64_t ns;
        if (n == 0)
            return 0;
        int rc = ctype__parse_duration(s, n, &mo, &d, &ns, e);
        if (rc)
            return rc;
        ctype__put_duration(out, mo, d, ns);
        return 0;
    }
    case CT_EMPTY:
        if (n)
            return fail(e, "'%.*s' is not empty", s, n);
        return 0;
    default: {
        cs_buf tb;
        cs_buf_init(&tb);
        ctype_to_cql(t, &tb);
        int rc = cs_error_set(e, CS_ERR_INVALID, "Cannot parse a value of type %.*s from a string",
                              (int)tb.len, tb.p ? (const char *)tb.p : "");
        cs_buf_destroy(&tb);
        return rc;
    }
    }
}

int ctype_from_literal(const ctype *t, lit_kind k, const char *text, size_t n, const char *what,
                       cs_buf *out, cs_error *e)
{
    if (!ctype_literal_assignable(t, k)) {
        cs_buf tb;
        cs_buf_init(&tb);
        ctype_to_cql(t, &tb);
        int rc = cs_error_set(e, CS_ERR_INVALID, "Invalid %s constant (%.*s) for \"%s\" of type %.*s", lit_name(k),
                              (int)n, text, what ? what : "", (int)tb.len, tb.p ? (const char *)tb.p : "");
        cs_buf_destroy(&tb);
        return rc;
    }
    size_t start = out->len;
    int rc;
    if (k == LIT_HEX) {
        /* Constants.Literal.parsedValue: BytesType.fromString(text without 0x) */
        const char *h = text;
        size_t hn = n;
        if (hn >= 2 && h[0] == '0' && (h[1] == 'x' || h[1] == 'X')) {
            h += 2;
            hn -= 2;
        }
        rc = ctype_from_string(ctype_scalar(CT_BLOB), h, hn, out, e);
    } else if (t->kind == CT_COUNTER) {
        rc = ctype_from_string(ctype_scalar(CT_BIGINT), text, n, out, e);
    } else {
        rc = ctype_from_string(t, text, n, out, e);
    }
    if (rc) {
        out->len = start;
        return rc;
    }
    return out->err ? CS_ENOMEM : 0;
}
