/*
 * bignum.c: arbitrary-precision integers for varint and decimal: sign +
 * magnitude in little-endian 32-bit limbs, held inline up to CTYPE_BN_INL
 * limbs (512 bits) so common numbers need no allocation.  Conversions to and
 * from Java's BigInteger.toByteArray form and decimal digits.  Internal to
 * cql/types/ (types_int.h); errors are sticky in bn.err (CS_ENOMEM).
 */
#include <string.h>

#include "cql/types/types_int.h"

void ctype__bn_init(ctype__bn *a)
{
    a->neg = false;
    a->d = a->inl;
    a->n = 0;
    a->cap = CTYPE_BN_INL;
    a->err = 0;
}

void ctype__bn_free(ctype__bn *a)
{
    if (a->d != a->inl)
        cs_free(a->d);
    ctype__bn_init(a);
}

/* Move src into dst (dst must be freed or fresh). */
void ctype__bn_move(ctype__bn *dst, ctype__bn *src)
{
    *dst = *src;
    if (src->d == src->inl)
        dst->d = dst->inl;
    ctype__bn_init(src);
}

void ctype__bn_reserve(ctype__bn *a, size_t n)
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

void ctype__bn_trim(ctype__bn *a)
{
    while (a->n > 0 && a->d[a->n - 1] == 0)
        a->n--;
    if (a->n == 0)
        a->neg = false;
}

/* a = a * m + add (magnitude). */
void ctype__bn_mul_small(ctype__bn *a, uint32_t m, uint32_t add)
{
    uint64_t carry = add;
    for (size_t i = 0; i < a->n; i++) {
        uint64_t x = (uint64_t)a->d[i] * m + carry;
        a->d[i] = (uint32_t)x;
        carry = x >> 32;
    }
    if (carry) {
        ctype__bn_reserve(a, a->n + 1);
        if (a->err)
            return;
        a->d[a->n++] = (uint32_t)carry;
    }
}

/* a /= d (magnitude); returns the remainder. */
uint32_t ctype__bn_div_small(ctype__bn *a, uint32_t d)
{
    uint64_t r = 0;
    for (size_t i = a->n; i-- > 0;) {
        uint64_t x = (r << 32) | a->d[i];
        a->d[i] = (uint32_t)(x / d);
        r = x % d;
    }
    ctype__bn_trim(a);
    return (uint32_t)r;
}

void ctype__bn_from_twos(ctype__bn *a, const uint8_t *v, size_t n)
{
    ctype__bn_init(a);
    if (n == 0)
        return;
    a->neg = (v[0] & 0x80) != 0;
    ctype__bn_reserve(a, n / 4 + 1);
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
    ctype__bn_trim(a);
}

/* Minimal two's complement, big-endian (BigInteger.toByteArray); zero is 00. */
void ctype__bn_to_twos(const ctype__bn *a, cs_buf *out)
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
int ctype__bn_cmp_mag(const ctype__bn *a, const ctype__bn *b)
{
    if (a->n != b->n)
        return a->n < b->n ? -1 : 1;
    for (size_t i = a->n; i-- > 0;)
        if (a->d[i] != b->d[i])
            return a->d[i] < b->d[i] ? -1 : 1;
    return 0;
}

/* r = a + b (signed); r may not alias. */
void ctype__bn_add(ctype__bn *r, const ctype__bn *a, const ctype__bn *b)
{
    ctype__bn_init(r);
    size_t n = (a->n > b->n ? a->n : b->n) + 1;
    ctype__bn_reserve(r, n);
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
        const ctype__bn *big = a, *sm = b;
        if (ctype__bn_cmp_mag(a, b) < 0) {
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
    ctype__bn_trim(r);
}

/* Decimal digits of |a| (most significant first, "0" for zero) into out,
 * which must hold a->n * 10 + 10 bytes.  Returns the count, or -1 when the
 * scratch copy cannot be allocated. */
long ctype__bn_digits_into(const ctype__bn *a, char *out)
{
    if (a->n == 0) {
        out[0] = '0';
        return 1;
    }
    ctype__bn t;
    ctype__bn_init(&t);
    ctype__bn_reserve(&t, a->n);
    if (t.err)
        return -1;
    memcpy(t.d, a->d, a->n * sizeof(uint32_t));
    t.n = a->n;
    size_t len = 0;
    while (t.n > 0) {
        uint32_t r = ctype__bn_div_small(&t, 1000000000u);
        for (int k = 0; k < 9; k++) {
            out[len++] = (char)('0' + r % 10);
            r /= 10;
        }
    }
    ctype__bn_free(&t);
    while (len > 1 && out[len - 1] == '0')
        len--;
    for (size_t i = 0; i < len / 2; i++) {
        char x = out[i];
        out[i] = out[len - 1 - i];
        out[len - 1 - i] = x;
    }
    return (long)len;
}

void ctype__bn_to_digits(const ctype__bn *a, cs_buf *out)
{
    char small[CTYPE_BN_INL * 10 + 10];
    char *tmp = a->n <= CTYPE_BN_INL ? small : cs_malloc(a->n * 10 + 10);
    if (!tmp) {
        out->err = CS_ENOMEM;
        return;
    }
    long len = ctype__bn_digits_into(a, tmp);
    if (len < 0)
        out->err = CS_ENOMEM;
    else
        cs_buf_put(out, tmp, (size_t)len);
    if (tmp != small)
        cs_free(tmp);
}

/* Digits (already validated) to a magnitude. */
void ctype__bn_from_digits(ctype__bn *a, const char *s, size_t n)
{
    ctype__bn_init(a);
    size_t i = 0;
    while (i < n) {
        uint32_t chunk = 0, mul = 1;
        for (int k = 0; k < 9 && i < n; k++, i++) {
            chunk = chunk * 10 + (uint32_t)(s[i] - '0');
            mul *= 10;
        }
        ctype__bn_mul_small(a, mul, chunk);
        if (a->err)
            return;
    }
    ctype__bn_trim(a);
}

/* r = a * b (signed); r may not alias. */
void ctype__bn_mul(ctype__bn *r, const ctype__bn *a, const ctype__bn *b)
{
    ctype__bn_init(r);
    if (a->err || b->err) {
        r->err = CS_ENOMEM;
        return;
    }
    if (a->n == 0 || b->n == 0)
        return;
    size_t n = a->n + b->n;
    ctype__bn_reserve(r, n);
    if (r->err)
        return;
    memset(r->d, 0, n * sizeof(uint32_t));
    for (size_t i = 0; i < a->n; i++) {
        uint64_t c = 0;
        for (size_t j = 0; j < b->n; j++) {
            uint64_t x = (uint64_t)a->d[i] * b->d[j] + r->d[i + j] + c;
            r->d[i + j] = (uint32_t)x;
            c = x >> 32;
        }
        r->d[i + b->n] = (uint32_t)c;
    }
    r->n = n;
    r->neg = a->neg != b->neg;
    ctype__bn_trim(r);
}

/* q = a / b truncated toward zero, r = a - q * b (the sign of a), as
 * BigInteger.divideAndRemainder; b must not be zero.  q and r fresh. */
void ctype__bn_divmod(ctype__bn *q, ctype__bn *r, const ctype__bn *a, const ctype__bn *b)
{
    ctype__bn_init(q);
    ctype__bn_init(r);
    if (a->err || b->err || b->n == 0) {
        q->err = r->err = a->err || b->err ? CS_ENOMEM : 0;
        return;
    }
    if (b->n == 1) {
        ctype__bn_reserve(q, a->n);
        if (q->err)
            return;
        memcpy(q->d, a->d, a->n * sizeof(uint32_t));
        q->n = a->n;
        uint32_t rem = ctype__bn_div_small(q, b->d[0]);
        q->neg = q->n && (a->neg != b->neg);
        if (rem) {
            r->d[0] = rem;
            r->n = 1;
            r->neg = a->neg;
        }
        return;
    }
    /* long division by limbs (Knuth's algorithm D): normalize so the
     * divisor's top limb has its high bit set, estimate each quotient limb
     * from the top two limbs, correct it at most twice, subtract, and add
     * back in the rare case the estimate was still one too large */
    size_t n = b->n, m = a->n >= n ? a->n - n : 0;
    if (a->n < n || ctype__bn_cmp_mag(a, b) < 0) {   /* |a| < |b|: q = 0, r = a */
        ctype__bn_reserve(r, a->n);
        if (r->err)
            return;
        memcpy(r->d, a->d, a->n * sizeof(uint32_t));
        r->n = a->n;
        r->neg = a->neg && r->n;
        return;
    }
    uint32_t *vn = cs_malloc(n * sizeof(uint32_t)), *un = cs_malloc((a->n + 1) * sizeof(uint32_t));
    ctype__bn_reserve(q, m + 1);
    ctype__bn_reserve(r, n);
    if (!vn || !un || q->err || r->err) {
        cs_free(vn);
        cs_free(un);
        q->err = r->err = CS_ENOMEM;
        return;
    }
    int sh = __builtin_clz(b->d[n - 1]);
    for (size_t i = n - 1; i > 0; i--)
        vn[i] = (b->d[i] << sh) | (sh ? (uint32_t)((uint64_t)b->d[i - 1] >> (32 - sh)) : 0);
    vn[0] = b->d[0] << sh;
    un[a->n] = sh ? (uint32_t)((uint64_t)a->d[a->n - 1] >> (32 - sh)) : 0;
    for (size_t i = a->n - 1; i > 0; i--)
        un[i] = (a->d[i] << sh) | (sh ? (uint32_t)((uint64_t)a->d[i - 1] >> (32 - sh)) : 0);
    un[0] = a->d[0] << sh;
    const uint64_t B = (uint64_t)1 << 32;
    for (size_t j = m + 1; j-- > 0;) {
        uint64_t top = ((uint64_t)un[j + n] << 32) | un[j + n - 1];
        uint64_t qhat = top / vn[n - 1], rhat = top % vn[n - 1];
        while (qhat >= B || qhat * vn[n - 2] > ((rhat << 32) | un[j + n - 2])) {
            qhat--;
            rhat += vn[n - 1];
            if (rhat >= B)
                break;
        }
        int64_t borrow = 0, t;
        for (size_t i = 0; i < n; i++) {
            uint64_t p = qhat * vn[i];
            t = (int64_t)un[i + j] - borrow - (int64_t)(p & 0xFFFFFFFFu);
            un[i + j] = (uint32_t)t;
            borrow = (int64_t)(p >> 32) - (t >> 32);
        }
        t = (int64_t)un[j + n] - borrow;
        un[j + n] = (uint32_t)t;
        if (t < 0) {                 /* one too many: add the divisor back */
            qhat--;
            uint64_t c = 0;
            for (size_t i = 0; i < n; i++) {
                uint64_t x = (uint64_t)un[i + j] + vn[i] + c;
                un[i + j] = (uint32_t)x;
                c = x >> 32;
            }
            un[j + n] += (uint32_t)c;
        }
        q->d[j] = (uint32_t)qhat;
    }
    q->n = m + 1;
    for (size_t i = 0; i < n; i++)   /* the remainder, shifted back */
        r->d[i] = (un[i] >> sh) | (sh ? (uint32_t)((uint64_t)un[i + 1] << (32 - sh)) : 0);
    r->n = n;
    cs_free(vn);
    cs_free(un);
    ctype__bn_trim(r);
    ctype__bn_trim(q);
    q->neg = q->n && (a->neg != b->neg);
    r->neg = r->n && a->neg;
}
