/*
 * decimal.c: varint (two's complement big-endian, Java BigInteger.toByteArray)
 * and decimal (i32 scale + varint unscaled, Java BigDecimal) text parse and
 * print, the normal form used by byte-comparable encoding, and numeric
 * comparison.
 */
#include <ctype.h>
#include <string.h>

#include "cql/types/types_int.h"

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
    ctype__bn a;
    ctype__bn_from_digits(&a, s + i, n - i);
    if (a.err) {
        ctype__bn_free(&a);
        return CS_ENOMEM;
    }
    a.neg = neg && a.n > 0;
    ctype__bn_to_twos(&a, out);
    ctype__bn_free(&a);
    return out->err ? CS_ENOMEM : 0;
}

void ctype__varint_to_text(const uint8_t *v, size_t n, cs_buf *out)
{
    ctype__bn a;
    ctype__bn_from_twos(&a, v, n);
    if (a.neg)
        cs_buf_put_u8(out, '-');
    ctype__bn_to_digits(&a, out);
    ctype__bn_free(&a);
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
        ctype__bn a;
        ctype__bn_from_digits(&a, (const char *)dg.p, dg.len);
        if (a.err)
            out->err = a.err;
        a.neg = neg && a.n > 0;
        cs_buf_put_u32(out, (uint32_t)(int32_t)scale);
        ctype__bn_to_twos(&a, out);
        if (a.err)
            out->err = a.err;
        ctype__bn_free(&a);
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
    ctype__bn a;
    ctype__bn_from_twos(&a, v + 4, n - 4);
    cs_buf dg;
    cs_buf_init(&dg);
    ctype__bn_to_digits(&a, &dg);
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
    ctype__bn_free(&a);
}

int ctype__num_normal(const uint8_t *unscaled, size_t n, int64_t scale, int *sign, cs_buf *digits,
                      int64_t *exp10)
{
    ctype__bn a;
    ctype__bn_from_twos(&a, unscaled, n);
    if (a.err)
        return CS_ENOMEM;
    *sign = a.n == 0 ? 0 : a.neg ? -1 : 1;
    *exp10 = 0;
    if (a.n == 0) {
        ctype__bn_free(&a);
        return 0;
    }
    size_t start = digits->len;
    ctype__bn_to_digits(&a, digits);
    ctype__bn_free(&a);
    if (digits->err)
        return CS_ENOMEM;
    int64_t nd = (int64_t)(digits->len - start);
    while (digits->len > start && digits->p[digits->len - 1] == '0')
        digits->len--;
    *exp10 = nd - scale;
    return 0;
}

/* Numeric comparison of two (unscaled, scale) numbers without heap
 * allocation for numbers up to CTYPE_BN_INL limbs.  Falls back to byte order only
 * if a scratch allocation for a huge number fails. */
int ctype__num_cmp(const uint8_t *a, size_t an, int64_t sa, const uint8_t *b, size_t bn_, int64_t sb)
{
    ctype__bn x, y;
    ctype__bn_from_twos(&x, a, an);
    ctype__bn_from_twos(&y, b, bn_);
    int c = 0;
    char sx[CTYPE_BN_INL * 10 + 10], sy[CTYPE_BN_INL * 10 + 10];
    char *dx = sx, *dy = sy;
    if (x.err || y.err)
        goto fallback;
    int gx = x.n == 0 ? 0 : x.neg ? -1 : 1, gy = y.n == 0 ? 0 : y.neg ? -1 : 1;
    if (gx != gy || gx == 0) {
        c = gx < gy ? -1 : gx > gy;
        goto out;
    }
    if (x.n > CTYPE_BN_INL)
        dx = cs_malloc(x.n * 10 + 10);
    if (y.n > CTYPE_BN_INL)
        dy = cs_malloc(y.n * 10 + 10);
    long nx = dx ? ctype__bn_digits_into(&x, dx) : -1, ny = dy ? ctype__bn_digits_into(&y, dy) : -1;
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
    ctype__bn_free(&x);
    ctype__bn_free(&y);
    return c;
}
