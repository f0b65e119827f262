/*
 * decimal.c: arbitrary precision for varint (two's complement big-endian,
 * Java BigInteger.toByteArray) and decimal (i32 scale + varint unscaled,
 * Java BigDecimal): text parse/print, normal form for comparison and
 * byte-comparable encoding, and the numeric helpers ctype_num_* (types.h)
 * that aggregates use.
 *
 * Numbers are held as sign + magnitude in little-endian 32-bit limbs.
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cql/types/types_int.h"

#define BN_INL 16   /* limbs held inline: numbers up to 512 bits need no allocation */

typedef struct bn {
    bool neg;
    uint32_t *d;      /* little-endian limbs: inl, or cs_malloc'd when larger */
    size_t n, cap;
    int err;
    uint32_t inl[BN_INL];
} bn;

static void bn_init(bn *a)
{
    a->neg = false;
    a->d = a->inl;
    a->n = 0;
    a->cap = BN_INL;
    a->err = 0;
}

static void bn_free(bn *a)
{
    if (a->d != a->inl)
        cs_free(a->d);
    bn_init(a);
}

/* Move src into dst (dst must be freed or fresh). */
static void bn_move(bn *dst, bn *src)
{
    *dst = *src;
    if (src->d == src->inl)
        dst->d = dst->inl;
    bn_init(src);
}

static void bn_reserve(bn *a, size_t n)
{
    if (a->err || n <= a->cap)
        return;
    size_t cap = a->cap * 2;
    while (cap < n)
        cap *= 2;
    uint32_t *d = cs_malloc(cap * sizeof(uint32_t));
    if (!d) {
        a->err = CS_ENOMEM;
        return;
    }
    if (a->n)
        memcpy(d, a->d, a->n * sizeof(uint32_t));
    if (a->d != a->inl)
        cs_free(a->d);
    a->d = d;
    a->cap = cap;
}

static void bn_trim(bn *a)
{
    while (a->n > 0 && a->d[a->n - 1] == 0)
        a->n--;
    if (a->n == 0)
        a->neg = false;
}

/* a = a * m + add (magnitude). */
static void bn_mul_small(bn *a, uint32_t m, uint32_t add)
{
    uint64_t carry = add;
    for (size_t i = 0; i < a->n; i++) {
        uint64_t x = (uint64_t)a->d[i] * m + carry;
        a->d[i] = (uint32_t)x;
        carry = x >> 32;
    }
    if (carry) {
        bn_reserve(a, a->n + 1);
        if (a->err)
            return;
        a->d[a->n++] = (uint32_t)carry;
    }
}

/* a /= d (magnitude); returns the remainder. */
static uint32_t bn_div_small(bn *a, uint32_t d)
{
    uint64_t r = 0;
    for (size_t i = a->n; i-- > 0;) {
        uint64_t x = (r << 32) | a->d[i];
        a->d[i] = (uint32_t)(x / d);
        r = x % d;
    }
    bn_trim(a);
    return (uint32_t)r;
}

static void bn_from_twos(bn *a, const uint8_t *v, size_t n)
{
    bn_init(a);
    if (n == 0)
        return;
    a->neg = (v[0] & 0x80) != 0;
    bn_reserve(a, n / 4 + 1);
    if (a->err)
        return;
    a->n = n / 4 + 1;   /* fits: reserved above */
    memset(a->d, 0, a->n * sizeof(uint32_t));
    /* magnitude of a negative number = ~v + 1 */
    uint32_t carry = a->neg ? 1 : 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t byte = v[n - 1 - i];
        if (a->neg) {
            byte = (~byte & 0xFF) + carry;
            carry = byte >> 8;
            byte &= 0xFF;
        }
        a->d[i / 4] |= byte << (8 * (i % 4));
    }
    bn_trim(a);
}

/* Minimal two's complement, big-endian (BigInteger.toByteArray); zero is 00. */
static void bn_to_twos(const bn *a, cs_buf *out)
{
    size_t nb = a->n * 4 + 1;
    uint8_t tmp[64], *b = nb <= sizeof(tmp) ? tmp : cs_malloc(nb);
    if (!b) {
        out->err = CS_ENOMEM;
        return;
    }
    for (size_t i = 0; i < nb; i++) {
        size_t li = i / 4;
        b[nb - 1 - i] = li < a->n ? (uint8_t)(a->d[li] >> (8 * (i % 4))) : 0;
    }
    if (a->neg) {
        unsigned carry = 1;
        for (size_t i = nb; i-- > 0;) {
            unsigned x = (uint8_t)~b[i] + carry;
            b[i] = (uint8_t)x;
            carry = x >> 8;
        }
    }
    size_t skip;
    size_t len = ctype__varint_minimal(b, nb, &skip);
    cs_buf_put(out, b + skip, len);
    if (b != tmp)
        cs_free(b);
}

size_t ctype__varint_minimal(const uint8_t *v, size_t n, size_t *skip)
{
    size_t i = 0;
    while (i + 1 < n && ((v[i] == 0x00 && !(v[i + 1] & 0x80)) || (v[i] == 0xFF && (v[i + 1] & 0x80))))
        i++;
    *skip = i;
    return n - i;
}

/* |a| vs |b| */
static int bn_cmp_mag(const bn *a, const bn *b)
{
    if (a->n != b->n)
        return a->n < b->n ? -1 : 1;
    for (size_t i = a->n; i-- > 0;)
        if (a->d[i] != b->d[i])
            return a->d[i] < b->d[i] ? -1 : 1;
    return 0;
}

/* r = a + b (signed); r may not alias. */
static void bn_add(bn *r, const bn *a, const bn *b)
{
    bn_init(r);
    size_t n = (a->n > b->n ? a->n : b->n) + 1;
    bn_reserve(r, n);
    if (r->err)
        return;
    r->n = n;
    if (a->neg == b->neg) {
        uint64_t c = 0;
        for (size_t i = 0; i < n; i++) {
            uint64_t x = c + (i < a->n ? a->d[i] : 0) + (i < b->n ? b->d[i] : 0);
            r->d[i] = (uint32_t)x;
            c = x >> 32;
        }
        r->neg = a->neg;
    } else {
        const bn *big = a, *sm = b;
        if (bn_cmp_mag(a, b) < 0) {
            big = b;
            sm = a;
        }
        int64_t br = 0;
        for (size_t i = 0; i < n; i++) {
            int64_t x = (int64_t)(i < big->n ? big->d[i] : 0) - (i < sm->n ? sm->d[i] : 0) - br;
            br = x < 0;
            r->d[i] = (uint32_t)(x + (br ? ((int64_t)1 << 32) : 0));
        }
        r->neg = big->neg;
    }
    bn_trim(r);
}

/* Decimal digits of |a| (most significant first, "0" for zero) into out,
 * which must hold a->n * 10 + 10 bytes.  Returns the count, or -1 when the
 * scratch copy cannot be allocated. */
static long bn_digits_into(const bn *a, char *out)
{
    if (a->n == 0) {
        out[0] = '0';
        return 1;
    }
    bn t;
    bn_init(&t);
    bn_reserve(&t, a->n);
    if (t.err)
        return -1;
    memcpy(t.d, a->d, a->n * sizeof(uint32_t));
    t.n = a->n;
    size_t len = 0;
    while (t.n > 0) {
        uint32_t r = bn_div_small(&t, 1000000000u);
        for (int k = 0; k < 9; k++) {
            out[len++] = (char)('0' + r % 10);
            r /= 10;
        }
    }
    bn_free(&t);
    while (len > 1 && out[len - 1] == '0')
        len--;
    for (size_t i = 0; i < len / 2; i++) {
        char x = out[i];
        out[i] = out[len - 1 - i];
        out[len - 1 - i] = x;
    }
    return (long)len;
}

static void bn_to_digits(const bn *a, cs_buf *out)
{
    char small[BN_INL * 10 + 10];
    char *tmp = a->n <= BN_INL ? small : cs_malloc(a->n * 10 + 10);
    if (!tmp) {
        out->err = CS_ENOMEM;
        return;
    }
    long len = bn_digits_into(a, tmp);
    if (len < 0)
        out->err = CS_ENOMEM;
    else
        cs_buf_put(out, tmp, (size_t)len);
    if (tmp != small)
        cs_free(tmp);
}

/* Digits (already validated) to a magnitude. */
static void bn_from_digits(bn *a, const char *s, size_t n)
{
    bn_init(a);
    size_t i = 0;
    while (i < n) {
        uint32_t chunk = 0, mul = 1;
        for (int k = 0; k < 9 && i < n; k++, i++) {
            chunk = chunk * 10 + (uint32_t)(s[i] - '0');
            mul *= 10;
        }
        bn_mul_small(a, mul, chunk);
        if (a->err)
            return;
    }
    bn_trim(a);
}

/* ------------------------------------------------ varint text */

int ctype__varint_from_text(const char *s, size_t n, cs_buf *out)
{
    size_t i = 0;
    bool neg = false;
    if (i < n && (s[i] == '-' || s[i] == '+'))
        neg = s[i++] == '-';
    if (i == n)
        return CS_EINVAL;
    for (size_t k = i; k < n; k++)
        if (!isdigit((unsigned char)s[k]))
            return CS_EINVAL;
    bn a;
    bn_from_digits(&a, s + i, n - i);
    if (a.err) {
        bn_free(&a);
        return CS_ENOMEM;
    }
    a.neg = neg && a.n > 0;
    bn_to_twos(&a, out);
    bn_free(&a);
    return out->err ? CS_ENOMEM : 0;
}

void ctype__varint_to_text(const uint8_t *v, size_t n, cs_buf *out)
{
    bn a;
    bn_from_twos(&a, v, n);
    if (a.neg)
        cs_buf_put_u8(out, '-');
    bn_to_digits(&a, out);
    bn_free(&a);
}

/* ------------------------------------------------ decimal text */

int ctype__decimal_from_text(const char *s, size_t n, cs_buf *out)
{
    size_t i = 0;
    bool neg = false;
    if (i < n && (s[i] == '-' || s[i] == '+'))
        neg = s[i++] == '-';
    cs_buf dg;
    cs_buf_init(&dg);
    int64_t frac = 0, exp = 0;
    bool dot = false, any = false;
    for (; i < n; i++) {
        char c = s[i];
        if (isdigit((unsigned char)c)) {
            cs_buf_put_u8(&dg, (uint8_t)c);
            any = true;
            if (dot)
                frac++;
        } else if (c == '.' && !dot) {
            dot = true;
        } else {
            break;
        }
    }
    int rc = 0;
    if (!any)
        rc = CS_EINVAL;
    if (!rc && i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        bool eneg = false;
        if (i < n && (s[i] == '-' || s[i] == '+'))
            eneg = s[i++] == '-';
        if (i == n)
            rc = CS_EINVAL;
        for (; !rc && i < n && isdigit((unsigned char)s[i]); i++) {
            exp = exp * 10 + (s[i] - '0');
            if (exp > 10000000000LL)
                rc = CS_EINVAL;
        }
        if (eneg)
            exp = -exp;
    }
    if (!rc && i != n)
        rc = CS_EINVAL;
    int64_t scale = frac - exp;
    if (!rc && (scale > INT32_MAX || scale < INT32_MIN))
        rc = CS_EINVAL;
    if (!rc && dg.err)
        rc = CS_ENOMEM;
    if (!rc) {
        bn a;
        bn_from_digits(&a, (const char *)dg.p, dg.len);
        if (a.err)
            out->err = a.err;
        a.neg = neg && a.n > 0;
        cs_buf_put_u32(out, (uint32_t)(int32_t)scale);
        bn_to_twos(&a, out);
        if (a.err)
            out->err = a.err;
        bn_free(&a);
        if (out->err)
            rc = CS_ENOMEM;
    }
    cs_buf_destroy(&dg);
    return rc;
}

/* BigDecimal.toString(): plain when scale >= 0 and the adjusted exponent is
 * >= -6, else scientific "d.dddE+n". */
void ctype__decimal_to_text(const uint8_t *v, size_t n, cs_buf *out)
{
    if (n < 4)
        return;
    int32_t scale = (int32_t)cs_be32(v);
    bn a;
    bn_from_twos(&a, v + 4, n - 4);
    cs_buf dg;
    cs_buf_init(&dg);
    bn_to_digits(&a, &dg);
    if (dg.err) {
        out->err = dg.err;
        goto done;
    }
    const char *d = (const char *)dg.p;
    int64_t nd = (int64_t)dg.len;
    int64_t adjusted = -(int64_t)scale + (nd - 1);
    if (a.neg)
        cs_buf_put_u8(out, '-');
    if (scale == 0) {
        cs_buf_put(out, d, (size_t)nd);
    } else if (scale > 0 && adjusted >= -6) {
        if (nd > scale) {
            cs_buf_put(out, d, (size_t)(nd - scale));
            cs_buf_put_u8(out, '.');
            cs_buf_put(out, d + nd - scale, (size_t)scale);
        } else {
            ctype__puts(out, "0.");
            for (int64_t k = 0; k < scale - nd; k++)
                cs_buf_put_u8(out, '0');
            cs_buf_put(out, d, (size_t)nd);
        }
    } else {
        cs_buf_put_u8(out, (uint8_t)d[0]);
        if (nd > 1) {
            cs_buf_put_u8(out, '.');
            cs_buf_put(out, d + 1, (size_t)(nd - 1));
        }
        ctype__printf(out, "E%s%lld", adjusted >= 0 ? "+" : "", (long long)adjusted);
    }
done:
    cs_buf_destroy(&dg);
    bn_free(&a);
}

int ctype__num_normal(const uint8_t *unscaled, size_t n, int64_t scale, int *sign, cs_buf *digits,
                      int64_t *exp10)
{
    bn a;
    bn_from_twos(&a, unscaled, n);
    if (a.err)
        return CS_ENOMEM;
    *sign = a.n == 0 ? 0 : a.neg ? -1 : 1;
    *exp10 = 0;
    if (a.n == 0) {
        bn_free(&a);
        return 0;
    }
    size_t start = digits->len;
    bn_to_digits(&a, digits);
    bn_free(&a);
    if (digits->err)
        return CS_ENOMEM;
    int64_t nd = (int64_t)(digits->len - start);
    while (digits->len > start && digits->p[digits->len - 1] == '0')
        digits->len--;
    *exp10 = nd - scale;
    return 0;
}

/* Numeric comparison of two (unscaled, scale) numbers without heap
 * allocation for numbers up to BN_INL limbs.  Falls back to byte order only
 * if a scratch allocation for a huge number fails. */
int ctype__num_cmp(const uint8_t *a, size_t an, int64_t sa, const uint8_t *b, size_t bn_, int64_t sb)
{
    bn x, y;
    bn_from_twos(&x, a, an);
    bn_from_twos(&y, b, bn_);
    int c = 0;
    char sx[BN_INL * 10 + 10], sy[BN_INL * 10 + 10];
    char *dx = sx, *dy = sy;
    if (x.err || y.err)
        goto fallback;
    int gx = x.n == 0 ? 0 : x.neg ? -1 : 1, gy = y.n == 0 ? 0 : y.neg ? -1 : 1;
    if (gx != gy || gx == 0) {
        c = gx < gy ? -1 : gx > gy;
        goto out;
    }
    if (x.n > BN_INL)
        dx = cs_malloc(x.n * 10 + 10);
    if (y.n > BN_INL)
        dy = cs_malloc(y.n * 10 + 10);
    long nx = dx ? bn_digits_into(&x, dx) : -1, ny = dy ? bn_digits_into(&y, dy) : -1;
    if (nx < 0 || ny < 0)
        goto fallback;
    int64_t ex = nx - sa, ey = ny - sb;
    while (nx > 1 && dx[nx - 1] == '0')
        nx--;
    while (ny > 1 && dy[ny - 1] == '0')
        ny--;
    if (ex != ey) {
        c = ex < ey ? -1 : 1;
    } else {
        long m = nx < ny ? nx : ny;
        int k = memcmp(dx, dy, (size_t)m);
        c = k ? (k < 0 ? -1 : 1) : (nx < ny ? -1 : nx > ny);
    }
    c *= gx;
    goto out;
fallback:
    {
        size_t m = an < bn_ ? an : bn_;
        int k = m ? memcmp(a, b, m) : 0;
        c = k ? (k < 0 ? -1 : 1) : (an < bn_ ? -1 : an > bn_);
    }
out:
    if (dx != sx)
        cs_free(dx);
    if (dy != sy)
        cs_free(dy);
    bn_free(&x);
    bn_free(&y);
    return c;
}

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
static void bn_mul_pow10(bn *a, int64_t k)
{
    while (k >= 9 && !a->err) {
        bn_mul_small(a, 1000000000u, 0);
        k -= 9;
    }
    uint32_t m = 1;
    while (k-- > 0)
        m *= 10;
    if (m > 1)
        bn_mul_small(a, m, 0);
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
    case CT_VARINT: {
        bn x, y, r;
        bn_from_twos(&x, a, an);
        bn_from_twos(&y, b, bn_);
        bn_add(&r, &x, &y);
        int rc = x.err || y.err || r.err ? CS_ENOMEM : 0;
        if (!rc)
            bn_to_twos(&r, out);
        bn_free(&x);
        bn_free(&y);
        bn_free(&r);
        return rc ? rc : out->err ? CS_ENOMEM : 0;
    }
    case CT_DECIMAL: {
        if (an < 4 || bn_ < 4)
            return CS_EINVAL;
        int64_t sa = (int32_t)cs_be32(a), sb = (int32_t)cs_be32(b);
        int64_t s = sa > sb ? sa : sb;
        if (s - sa > 100000 || s - sb > 100000)
            return CS_EINVAL;
        bn x, y, r;
        bn_from_twos(&x, a + 4, an - 4);
        bn_from_twos(&y, b + 4, bn_ - 4);
        bn_mul_pow10(&x, s - sa);
        bn_mul_pow10(&y, s - sb);
        bn_add(&r, &x, &y);
        int rc = x.err || y.err || r.err ? CS_ENOMEM : 0;
        if (!rc) {
            cs_buf_put_u32(out, (uint32_t)(int32_t)s);
            bn_to_twos(&r, out);
        }
        bn_free(&x);
        bn_free(&y);
        bn_free(&r);
        return rc ? rc : out->err ? CS_ENOMEM : 0;
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
        bn x;
        bn_from_twos(&x, v + off, n - off);
        /* long division by a 64-bit count, two 32-bit steps when needed */
        uint64_t c = (uint64_t)count;
        uint64_t rem = 0;
        if (c <= 0xFFFFFFFFu) {
            rem = bn_div_small(&x, (uint32_t)c);
        } else {
            /* rare: divide digit by digit in base 2^32 with 128-bit arithmetic */
            unsigned __int128 r = 0;
            for (size_t i = x.n; i-- > 0;) {
                unsigned __int128 cur = (r << 32) | x.d[i];
                x.d[i] = (uint32_t)(cur / c);
                r = cur % c;
            }
            bn_trim(&x);
            rem = (uint64_t)r;
        }
        bool neg = (v[off] & 0x80) != 0 && n > off;
        if (t->kind == CT_DECIMAL && rem) {
            /* HALF_EVEN on the remainder */
            unsigned __int128 twice = (unsigned __int128)rem * 2;
            bool up = twice > c || (twice == c && x.n > 0 && (x.d[0] & 1));
            if (up) {
                bn one;
                bn_init(&one);
                bn_reserve(&one, 1);
                if (!one.err) {
                    one.d[0] = 1;
                    one.n = 1;
                    x.neg = false;
                    bn r2;
                    bn_add(&r2, &x, &one);
                    bn_free(&x);
                    bn_move(&x, &r2);
                }
                bn_free(&one);
            }
        }
        x.neg = neg && x.n > 0;
        if (off)
            cs_buf_put(out, v, 4);
        bn_to_twos(&x, out);
        int rc = x.err ? CS_ENOMEM : 0;
        bn_free(&x);
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
    bn a;
    bn_from_twos(&a, v, n);
    if (a.err) {
        bn_free(&a);
        return 0;
    }
    while (scale > 0 && a.n > 0) {
        uint32_t d = scale >= 9 ? 1000000000u : 1;
        if (scale < 9)
            for (int64_t k = 0; k < scale; k++)
                d *= 10;
        bn_div_small(&a, d);
        scale -= scale >= 9 ? 9 : scale;
    }
    uint64_t lo = (a.n > 0 ? a.d[0] : 0) | ((uint64_t)(a.n > 1 ? a.d[1] : 0) << 32);
    for (int64_t k = 0; k < -scale && k < 200; k++)
        lo *= 10;
    if (scale < -200)
        lo = 0;
    bool neg = a.neg;
    bn_free(&a);
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
