/*
 * num.c: numeric helpers for aggregates and casts (types.h ctype_num_*):
 * add, divide by a count, conversions, and CAST between numeric types with
 * Java's Number semantics (Cassandra's CastFcts).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cql/types/types_int.h"

/* ------------------------------------------------ numeric helpers (types.h) */

static int64_t int_val(const ctype *t, const uint8_t *v, size_t n)
{
    switch (n) {
    case 1: return (int8_t)v[0];
    case 2: return (int16_t)cs_be16(v);
    case 4: return (int32_t)cs_be32(v);
    case 8: return (int64_t)cs_be64(v);
    default: return 0;
    }
}

static double fp_val(const ctype *t, const uint8_t *v, size_t n)
{
    if (t->kind == CT_FLOAT && n == 4) {
        uint32_t u = cs_be32(v);
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    if (t->kind == CT_DOUBLE && n == 8) {
        uint64_t u = cs_be64(v);
        double d;
        memcpy(&d, &u, 8);
        return d;
    }
    return 0;
}

double ctype_num_to_double(const ctype *t, const uint8_t *v, size_t n)
{
    switch (t->kind) {
    case CT_TINYINT: case CT_SMALLINT: case CT_INT: case CT_BIGINT: case CT_COUNTER:
        return (double)int_val(t, v, n);
    case CT_FLOAT: case CT_DOUBLE:
        return fp_val(t, v, n);
    case CT_VARINT: case CT_DECIMAL: {
        cs_buf b;
        cs_buf_init(&b);
        if (t->kind == CT_VARINT)
            ctype__varint_to_text(v, n, &b);
        else
            ctype__decimal_to_text(v, n, &b);
        cs_buf_put_u8(&b, 0);
        double d = b.err ? 0 : strtod((const char *)b.p, NULL);
        cs_buf_destroy(&b);
        return d;
    }
    default:
        return 0;
    }
}

int ctype_num_from_int64(const ctype *t, int64_t x, cs_buf *out)
{
    switch (t->kind) {
    case CT_TINYINT: cs_buf_put_u8(out, (uint8_t)x); break;
    case CT_SMALLINT: cs_buf_put_u16(out, (uint16_t)x); break;
    case CT_INT: cs_buf_put_u32(out, (uint32_t)x); break;
    case CT_BIGINT: case CT_COUNTER: cs_buf_put_u64(out, (uint64_t)x); break;
    case CT_FLOAT: {
        float f = (float)x;
        uint32_t u;
        memcpy(&u, &f, 4);
        cs_buf_put_u32(out, u);
        break;
    }
    case CT_DOUBLE: {
        double d = (double)x;
        uint64_t u;
        memcpy(&u, &d, 8);
        cs_buf_put_u64(out, u);
        break;
    }
    case CT_VARINT: case CT_DECIMAL: {
        uint8_t b[8];
        cs_st64(b, (uint64_t)x);
        size_t skip, len = ctype__varint_minimal(b, 8, &skip);
        if (t->kind == CT_DECIMAL)
            cs_buf_put_u32(out, 0);
        cs_buf_put(out, b + skip, len);
        break;
    }
    default:
        return CS_EINVAL;
    }
    return out->err ? CS_ENOMEM : 0;
}

/* Multiply a magnitude by 10^k. */
static void bn_mul_pow10(ctype__bn *a, int64_t k)
{
    while (k >= 9 && !a->err) {
        ctype__bn_mul_small(a, 1000000000u, 0);
        k -= 9;
    }
    uint32_t m = 1;
    while (k-- > 0)
        m *= 10;
    if (m > 1)
        ctype__bn_mul_small(a, m, 0);
}

int ctype_num_add(const ctype *t, const uint8_t *a, size_t an, const uint8_t *b, size_t bn_, cs_buf *out)
{
    switch (t->kind) {
    case CT_TINYINT: case CT_SMALLINT: case CT_INT: case CT_BIGINT: case CT_COUNTER:
        /* Java arithmetic: wraps on overflow */
        return ctype_num_from_int64(t, (int64_t)((uint64_t)int_val(t, a, an) + (uint64_t)int_val(t, b, bn_)), out);
    case CT_FLOAT: {
        float f = (float)fp_val(t, a, an) + (float)fp_val(t, b, bn_);
        uint32_t u;
        memcpy(&u, &f, 4);
        cs_buf_put_u32(out, u);
        return out->err ? CS_ENOMEM : 0;
    }
    case CT_DOUBLE: {
        double d = fp_val(t, a, an) + fp_val(t, b, bn_);
        uint64_t u;
        memcpy(&u, &d, 8);
        cs_buf_put_u64(out, u);
        return out->err ? CS_ENOMEM : 0;
    }
    case CT_VARINT: case CT_DECIMAL: {
        /* exact: BigInteger.add / BigDecimal.add (ctype_num_big_op) */
        const char *why = NULL;
        return ctype_num_big_op('+', t, t, a, an, t, b, bn_, out, &why);
    }
    default:
        return CS_EINVAL;
    }
}

/* Division by a positive count, for avg(): integers truncate (Java), float
 * and double divide, varint truncates toward zero (BigInteger.divide),
 * decimal keeps the dividend's scale with HALF_EVEN rounding. */
int ctype_num_div_int(const ctype *t, const uint8_t *v, size_t n, int64_t count, cs_buf *out)
{
    if (count <= 0)
        return CS_EINVAL;
    switch (t->kind) {
    case CT_TINYINT: case CT_SMALLINT: case CT_INT: case CT_BIGINT: case CT_COUNTER:
        return ctype_num_from_int64(t, int_val(t, v, n) / count, out);
    case CT_FLOAT: {
        float f = (float)(fp_val(t, v, n) / (double)count);
        uint32_t u;
        memcpy(&u, &f, 4);
        cs_buf_put_u32(out, u);
        return out->err ? CS_ENOMEM : 0;
    }
    case CT_DOUBLE: {
        double d = fp_val(t, v, n) / (double)count;
        uint64_t u;
        memcpy(&u, &d, 8);
        cs_buf_put_u64(out, u);
        return out->err ? CS_ENOMEM : 0;
    }
    case CT_VARINT: case CT_DECIMAL: {
        size_t off = t->kind == CT_DECIMAL ? 4 : 0;
        if (n < off)
            return CS_EINVAL;
        ctype__bn x;
        ctype__bn_from_twos(&x, v + off, n - off);
        /* long division by a 64-bit count, two 32-bit steps when needed */
        uint64_t c = (uint64_t)count;
        uint64_t rem = 0;
        if (c <= 0xFFFFFFFFu) {
            rem = ctype__bn_div_small(&x, (uint32_t)c);
        } else {
            /* rare: divide digit by digit in base 2^32 with 128-bit arithmetic */
            unsigned __int128 r = 0;
            for (size_t i = x.n; i-- > 0;) {
                unsigned __int128 cur = (r << 32) | x.d[i];
                x.d[i] = (uint32_t)(cur / c);
                r = cur % c;
            }
            ctype__bn_trim(&x);
            rem = (uint64_t)r;
        }
        bool neg = (v[off] & 0x80) != 0 && n > off;
        if (t->kind == CT_DECIMAL && rem) {
            /* HALF_EVEN on the remainder */
            unsigned __int128 twice = (unsigned __int128)rem * 2;
            bool up = twice > c || (twice == c && x.n > 0 && (x.d[0] & 1));
            if (up) {
                ctype__bn one;
                ctype__bn_init(&one);
                ctype__bn_reserve(&one, 1);
                if (!one.err) {
                    one.d[0] = 1;
                    one.n = 1;
                    x.neg = false;
                    ctype__bn r2;
                    ctype__bn_add(&r2, &x, &one);
                    ctype__bn_free(&x);
                    ctype__bn_move(&x, &r2);
                }
                ctype__bn_free(&one);
            }
        }
        x.neg = neg && x.n > 0;
        if (off)
            cs_buf_put(out, v, 4);
        ctype__bn_to_twos(&x, out);
        int rc = x.err ? CS_ENOMEM : 0;
        ctype__bn_free(&x);
        return rc ? rc : out->err ? CS_ENOMEM : 0;
    }
    default:
        return CS_EINVAL;
    }
}

/* ------------------------------------------------ numeric casts (CastFcts) */

/* Java's double -> long narrowing (saturating, NaN -> 0). */
static int64_t d2l(double d)
{
    if (isnan(d))
        return 0;
    if (d >= 9223372036854775807.0)
        return INT64_MAX;
    if (d <= -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)d;
}

static int32_t d2i(double d)
{
    if (isnan(d))
        return 0;
    if (d >= 2147483647.0)
        return INT32_MAX;
    if (d <= -2147483648.0)
        return INT32_MIN;
    return (int32_t)d;
}

/* Low 64 bits of the integer part of a varint/decimal (BigDecimal.longValue,
 * BigInteger.longValue). */
static int64_t big_low64(const uint8_t *v, size_t n, int64_t scale)
{
    ctype__bn a;
    ctype__bn_from_twos(&a, v, n);
    if (a.err) {
        ctype__bn_free(&a);
        return 0;
    }
    while (scale > 0 && a.n > 0) {
        uint32_t d = scale >= 9 ? 1000000000u : 1;
        if (scale < 9)
            for (int64_t k = 0; k < scale; k++)
                d *= 10;
        ctype__bn_div_small(&a, d);
        scale -= scale >= 9 ? 9 : scale;
    }
    uint64_t lo = (a.n > 0 ? a.d[0] : 0) | ((uint64_t)(a.n > 1 ? a.d[1] : 0) << 32);
    for (int64_t k = 0; k < -scale && k < 200; k++)
        lo *= 10;
    if (scale < -200)
        lo = 0;
    bool neg = a.neg;
    ctype__bn_free(&a);
    return (int64_t)(neg ? (uint64_t)0 - lo : lo);
}

static bool is_int_kind(ctype_kind k)
{
    return k == CT_TINYINT || k == CT_SMALLINT || k == CT_INT || k == CT_BIGINT || k == CT_COUNTER;
}

int ctype_num_cast(const ctype *from, const ctype *to, const uint8_t *v, size_t n, cs_buf *out)
{
    if (!ctype_is_numeric(from) || !ctype_is_numeric(to))
        return CS_EINVAL;
    if (n == 0)
        return 0;
    ctype_kind fk = from->kind, tk = to->kind;
    bool ffp = fk == CT_FLOAT || fk == CT_DOUBLE;
    double fd = ffp ? fp_val(from, v, n) : 0;
    if (fk == CT_DECIMAL && n < 4)
        return CS_EINVAL;
    if (is_int_kind(tk)) {
        int64_t x;
        if (is_int_kind(fk))
            x = int_val(from, v, n);
        else if (ffp)
            x = tk == CT_BIGINT || tk == CT_COUNTER ? d2l(fd) : d2i(fd);
        else if (fk == CT_DECIMAL)
            x = big_low64(v + 4, n - 4, (int32_t)cs_be32(v));
        else
            x = big_low64(v, n, 0);
        return ctype_num_from_int64(to, x, out);
    }
    if (tk == CT_FLOAT || tk == CT_DOUBLE) {
        double d;
        if (is_int_kind(fk)) {
            d = (double)int_val(from, v, n);
            if (tk == CT_FLOAT) {
                float f = (float)int_val(from, v, n);
                uint32_t u;
                memcpy(&u, &f, 4);
                cs_buf_put_u32(out, u);
                return out->err ? CS_ENOMEM : 0;
            }
        } else if (ffp) {
            d = fd;
        } else {
            cs_buf b;
            cs_buf_init(&b);
            if (fk == CT_VARINT)
                ctype__varint_to_text(v, n, &b);
            else
                ctype__decimal_to_text(v, n, &b);
            cs_buf_put_u8(&b, 0);
            if (b.err) {
                cs_buf_destroy(&b);
                return CS_ENOMEM;
            }
            if (tk == CT_FLOAT) {
                float f = strtof((const char *)b.p, NULL);
                uint32_t u;
                memcpy(&u, &f, 4);
                cs_buf_destroy(&b);
                cs_buf_put_u32(out, u);
                return out->err ? CS_ENOMEM : 0;
            }
            d = strtod((const char *)b.p, NULL);
            cs_buf_destroy(&b);
        }
        if (tk == CT_FLOAT) {
            float f = (float)d;
            uint32_t u;
            memcpy(&u, &f, 4);
            cs_buf_put_u32(out, u);
        } else {
            uint64_t u;
            memcpy(&u, &d, 8);
            cs_buf_put_u64(out, u);
        }
        return out->err ? CS_ENOMEM : 0;
    }
    if (tk == CT_DECIMAL) {
        if (is_int_kind(fk))
            return ctype_num_from_int64(to, int_val(from, v, n), out);
        if (fk == CT_VARINT) {
            cs_buf_put_u32(out, 0);
            cs_buf_put(out, v, n);
            return out->err ? CS_ENOMEM : 0;
        }
        if (ffp) {
            /* new BigDecimal(Float.toString(f)) / BigDecimal.valueOf(d) */
            if (isnan(fd) || isinf(fd))
                return CS_EINVAL;
            cs_buf b;
            cs_buf_init(&b);
            ctype_format_java_double(fd, fk == CT_FLOAT, &b);
            int rc = b.err ? CS_ENOMEM : ctype__decimal_from_text((const char *)b.p, b.len, out);
            cs_buf_destroy(&b);
            return rc;
        }
    }
    if (tk == CT_VARINT) {
        /* BigInteger.valueOf(p.longValue()) */
        int64_t x;
        if (is_int_kind(fk))
            x = int_val(from, v, n);
        else if (ffp)
            x = d2l(fd);
        else if (fk == CT_DECIMAL)
            x = big_low64(v + 4, n - 4, (int32_t)cs_be32(v));
        else
            x = big_low64(v, n, 0);
        return ctype_num_from_int64(to, x, out);
    }
    return CS_EINVAL;
}

/* ------------------------------------------------ operators on varint and decimal */

/* A decimal as BigDecimal: unscaled value and scale. */
typedef struct big_dec {
    ctype__bn u;
    int64_t scale;
} big_dec;

/* An operand as the BigInteger or BigDecimal its NumberType gives
 * (IntegerType.toBigInteger, NumberType.toBigInteger = valueOf(toLong),
 * DecimalType.toBigDecimal, IntegerType.toBigDecimal = new BigDecimal(
 * BigInteger), NumberType.toBigDecimal = BigDecimal.valueOf(toDouble)). */
static int big_operand(const ctype *t, const uint8_t *v, size_t n, big_dec *d, const char **why)
{
    (void)why;                       /* the same shape as dec_operand; nothing fails here but memory */
    ctype__bn_init(&d->u);
    d->scale = 0;
    switch (t->kind) {
    case CT_VARINT:
        ctype__bn_from_twos(&d->u, v, n);
        return d->u.err;
    case CT_DECIMAL:
        if (n < 4)
            return CS_EINVAL;
        d->scale = (int32_t)cs_be32(v);
        ctype__bn_from_twos(&d->u, v + 4, n - 4);
        return d->u.err;
    case CT_TINYINT: case CT_SMALLINT: case CT_INT: case CT_BIGINT: case CT_COUNTER: {
        uint8_t b[8];
        cs_st64(b, (uint64_t)int_val(t, v, n));
        ctype__bn_from_twos(&d->u, b, 8);
        return d->u.err;
    }
    default:
        return CS_EINVAL;
    }
}

/* A non-decimal, non-varint operand of a decimal operation:
 * BigDecimal.valueOf(toDouble(v)). */
static int dec_operand(const ctype *t, const uint8_t *v, size_t n, big_dec *d, const char **why)
{
    if (t->kind == CT_DECIMAL || t->kind == CT_VARINT)
        return big_operand(t, v, n, d, why);
    ctype__bn_init(&d->u);
    d->scale = 0;
    double x = ctype_num_to_double(t, v, n);
    if (isnan(x)) {
        *why = "A NaN cannot be converted into a decimal";
        return CS_EUSER;
    }
    if (isinf(x)) {
        *why = "An infinite number cannot be converted into a decimal";
        return CS_EUSER;
    }
    cs_buf s, ser;
    cs_buf_init(&s);
    cs_buf_init(&ser);
    ctype_format_java_double(x, false, &s);
    int rc = s.err ? CS_ENOMEM : ctype__decimal_from_text((const char *)s.p, s.len, &ser);
    if (rc == 0)
        rc = big_operand(ctype_scalar(CT_DECIMAL), ser.p, ser.len, d, why);
    cs_buf_destroy(&s);
    cs_buf_destroy(&ser);
    return rc;
}

/* Decimal digits of |a| (BigDecimal.precision: 1 for zero). */
static int64_t bn_precision(const ctype__bn *a, int *err)
{
    if (a->n == 0)
        return 1;
    char small[CTYPE_BN_INL * 10 + 10];
    char *p = a->n <= CTYPE_BN_INL ? small : cs_malloc(a->n * 10 + 10);
    if (!p) {
        *err = CS_ENOMEM;
        return 1;
    }
    long n = ctype__bn_digits_into(a, p);
    if (p != small)
        cs_free(p);
    if (n < 0)
        *err = CS_ENOMEM;
    return n < 1 ? 1 : n;
}

/* |a| /= 10 if it divides exactly (true), else unchanged. */
static bool bn_div10_exact(ctype__bn *a)
{
    if (a->n == 0)
        return true;
    uint64_t r = 0;
    for (size_t i = a->n; i-- > 0;)
        r = ((r << 32) | a->d[i]) % 10;
    if (r)
        return false;
    ctype__bn_div_small(a, 10);
    return true;
}

static int put_big(const ctype__bn *u, int64_t scale, bool dec, cs_buf *out, const char **why)
{
    if (u->err)
        return CS_ENOMEM;
    if (dec) {
        if (scale > INT32_MAX || scale < INT32_MIN) {
            *why = scale > 0 ? "Underflow" : "Overflow";   /* BigDecimal.checkScale */
            return CS_EUSER;
        }
        cs_buf_put_u32(out, (uint32_t)(int32_t)scale);
    }
    ctype__bn_to_twos(u, out);
    return out->err ? CS_ENOMEM : 0;
}

int ctype_num_big_op(char op, const ctype *rt, const ctype *ta, const uint8_t *a, size_t an, const ctype *tb,
                     const uint8_t *b, size_t bn_, cs_buf *out, const char **why)
{
    bool dec = rt->kind == CT_DECIMAL;
    if (!dec && rt->kind != CT_VARINT)
        return CS_EINVAL;
    big_dec x, y;
    ctype__bn_init(&y.u);
    y.scale = 0;
    int rc = dec ? dec_operand(ta, a, an, &x, why) : big_operand(ta, a, an, &x, why);
    if (rc == 0 && op != 'n')
        rc = dec ? dec_operand(tb, b, bn_, &y, why) : big_operand(tb, b, bn_, &y, why);
    ctype__bn r, q;
    ctype__bn_init(&r);
    ctype__bn_init(&q);
    int64_t scale = 0;
    if (rc != 0)
        goto done;
    if (op == 'n') {                 /* negate() */
        ctype__bn_move(&r, &x.u);
        r.neg = !r.neg && r.n > 0;
        scale = x.scale;
    } else if (op == '+' || op == '-') {
        scale = x.scale > y.scale ? x.scale : y.scale;
        if (scale - x.scale > 100000 || scale - y.scale > 100000) {
            rc = CS_EINVAL;
            goto done;
        }
        bn_mul_pow10(&x.u, scale - x.scale);
        bn_mul_pow10(&y.u, scale - y.scale);
        if (op == '-')
            y.u.neg = !y.u.neg && y.u.n > 0;
        ctype__bn_add(&r, &x.u, &y.u);
    } else if (op == '*') {
        ctype__bn_mul(&r, &x.u, &y.u);
        scale = x.scale + y.scale;
    } else if (op == '/' || op == '%') {
        if (y.u.n == 0) {
            *why = !dec ? "BigInteger divide by zero" : x.u.n == 0 ? "Division undefined" : "Division by zero";
            rc = CS_EUSER;
            goto done;
        }
        if (!dec) {                  /* BigInteger.divide / remainder */
            ctype__bn_divmod(&q, &r, &x.u, &y.u);
            if (op == '/') {
                ctype__bn_free(&r);
                ctype__bn_move(&r, &q);
            }
        } else if (op == '/') {
            /* DecimalType.divide: a scale from the operands' first digits,
             * within [32, 1000], HALF_UP, then stripTrailingZeros */
            int err = 0;
            int64_t first = (bn_precision(&x.u, &err) - x.scale) - (bn_precision(&y.u, &err) - y.scale);
            if (err) {
                rc = err;
                goto done;
            }
            scale = 32 - first;
            if (scale < x.scale) scale = x.scale;
            if (scale < y.scale) scale = y.scale;
            if (scale < 32) scale = 32;
            if (scale > 1000) scale = 1000;
            int64_t k = scale - x.scale + y.scale;     /* q = x.u * 10^k / y.u */
            if (k > 100000 || k < -100000) {
                rc = CS_EINVAL;
                goto done;
            }
            if (k >= 0)
                bn_mul_pow10(&x.u, k);
            else
                bn_mul_pow10(&y.u, -k);
            ctype__bn_divmod(&q, &r, &x.u, &y.u);
            /* HALF_UP: away from zero when 2|r| >= |y| */
            ctype__bn twice;
            ctype__bn_init(&twice);
            ctype__bn_add(&twice, &r, &r);
            bool up = ctype__bn_cmp_mag(&twice, &y.u) >= 0;
            ctype__bn_free(&twice);
            ctype__bn_free(&r);
            if (up) {
                ctype__bn one;
                ctype__bn_init(&one);
                one.d[0] = 1;
                one.n = 1;
                one.neg = x.u.neg != y.u.neg;
                ctype__bn_add(&r, &q, &one);
            } else {
                ctype__bn_move(&r, &q);
            }
            if (r.n == 0) {
                scale = 0;           /* BigDecimal.ZERO */
            } else {
                while (scale > INT32_MIN && bn_div10_exact(&r))
                    scale--;
            }
        } else {
            /* BigDecimal.remainder: x - divideToIntegralValue(y) * y, whose
             * scale is max(x.scale, scale of the quotient + y.scale), the
             * quotient's scale being x.scale - y.scale, or, when that is
             * negative, what stripping its trailing zeros toward it gives */
            int64_t s = x.scale > y.scale ? x.scale : y.scale;
            if (s - x.scale > 100000 || s - y.scale > 100000) {
                rc = CS_EINVAL;
                goto done;
            }
            bn_mul_pow10(&x.u, s - x.scale);
            int64_t xs = x.scale;
            bn_mul_pow10(&y.u, s - y.scale);
            ctype__bn_divmod(&q, &r, &x.u, &y.u);
            int64_t pref = xs - y.scale, qscale = pref;
            if (pref < 0) {
                int64_t stripped = 0;
                if (q.n == 0)
                    stripped = -pref;
                else
                    while (stripped < -pref && bn_div10_exact(&q))
                        stripped++;
                qscale = -stripped;
            }
            scale = xs > qscale + y.scale ? xs : qscale + y.scale;
            for (int64_t i = s; i > scale; i--)
                ctype__bn_div_small(&r, 10);   /* exact: r is representable at `scale` */
            if (r.n == 0)
                r.neg = false;
        }
    } else {
        rc = CS_EINVAL;
    }
    if (rc == 0 && (x.u.err || y.u.err || q.err))
        rc = CS_ENOMEM;              /* a scaling or a quotient ran out of memory */
    if (rc == 0)
        rc = put_big(&r, scale, dec, out, why);
done:
    ctype__bn_free(&x.u);
    ctype__bn_free(&y.u);
    ctype__bn_free(&r);
    ctype__bn_free(&q);
    return rc;
}
