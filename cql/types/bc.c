/*
 * bc.c: byte-comparable encoding of values (types.h ctype_bc_encode/decode).
 *
 * Invariants, for every type T and serialized values a, b:
 *   1. memcmp order of enc(a), enc(b) == sign of ctype_compare(T, a, b);
 *   2. enc is self-delimiting: enc(a) is never a proper prefix of enc(b),
 *      and a decoder finds the end without outside length, so components can
 *      be concatenated (clustering keys, nested collections);
 *   3. decode(enc(a)) compares equal to a (bytes may be normalized: boolean
 *      true becomes 01, varints become minimal; decimals come back exactly,
 *      scale included);
 *   4. desc = every byte of the component's encoding inverted.
 *
 * Layout per type (asc; "E" = empty value):
 *   byte strings (ascii, text, blob, inet, custom): bytes with 00 -> 00 FF,
 *       then 00 00; E is just 00 00.  Shorter prefix sorts first.
 *   fixed-width: E = 00, else 01 + body:
 *       signed ints, timestamp, counter: big-endian, sign bit flipped;
 *       date, time: big-endian (unsigned); boolean: 01 false / 02 true (no body);
 *       float/double: IEEE bits, sign bit flipped if positive, all bits
 *       inverted if negative, NaN canonical (Java's Float/Double.compare);
 *       timeuuid: timestamp-first msb (sign bit flipped), then the low 8 bytes
 *       with each byte's top bit flipped (Cassandra compares them signed).
 *   uuid: E = 00, else 10+version, then for v1 the timestamp-first msb,
 *       else the raw msb, then the lsb.
 *   varint: E = 00, negative 01, zero 02, positive 03.  Positive: length L of
 *       the magnitude (1 byte if < 255 else FF + 4 bytes), magnitude bytes.
 *       Negative: inverted length, then the minimal two's complement bytes.
 *   decimal: E = 00, negative 01, zero 02, positive 03; then the exponent E10
 *       (value = 0.d1d2.. x 10^E10) as 8 bytes with the sign bit flipped, then
 *       each digit + 1, then 00; for negatives these bytes are inverted.  Then
 *       the original scale (4 bytes, sign bit flipped) so decoding is exact.
 *       Known difference: numerically equal decimals with different scales
 *       (1.5, 1.50) are distinct keys here; Cassandra merges them.
 *   list/set/map: E = 00, else 01, then per element 02 + enc (map: key then
 *       value), then 01.
 *   tuple/UDT: per component 02 (null) or 03 + enc, then 01.
 */
#include <math.h>
#include <string.h>

#include "cql/types/types_int.h"

/* ------------------------------------------------ encoding */

static void put_bytes_esc(cs_buf *out, const uint8_t *v, size_t n)
{
    size_t i = 0;
    while (i < n) {
        const uint8_t *z = memchr(v + i, 0, n - i);
        size_t run = z ? (size_t)(z - (v + i)) : n - i;
        cs_buf_put(out, v + i, run);
        i += run;
        if (z) {
            cs_buf_put_u8(out, 0x00);
            cs_buf_put_u8(out, 0xFF);
            i++;
        }
    }
    cs_buf_put_u8(out, 0x00);
    cs_buf_put_u8(out, 0x00);
}

static uint64_t reorder_ts(uint64_t msb)
{
    return (msb << 48) | ((msb << 16) & 0xFFFF00000000ULL) | (msb >> 32);
}

static uint64_t unorder_ts(uint64_t r)
{
    return (r << 32) | ((r >> 16) & 0xFFFF0000ULL) | (r >> 48);
}

static void put_len(cs_buf *out, size_t l, uint8_t x)
{
    if (l < 0xFF) {
        cs_buf_put_u8(out, (uint8_t)(l ^ x));
    } else {
        cs_buf_put_u8(out, (uint8_t)(0xFF ^ x));
        cs_buf_put_u32(out, (uint32_t)l ^ (x ? 0xFFFFFFFFu : 0));
    }
}

static int enc_varint(const uint8_t *v, size_t n, cs_buf *out)
{
    size_t skip, len = ctype__varint_minimal(v, n, &skip);
    v += skip;
    bool neg = v[0] & 0x80;
    bool zero = len == 1 && v[0] == 0;
    if (zero) {
        cs_buf_put_u8(out, 0x02);
    } else if (neg) {
        cs_buf_put_u8(out, 0x01);
        put_len(out, len, 0xFF);
        cs_buf_put(out, v, len);
    } else {
        if (v[0] == 0) {
            v++;
            len--;
        }
        cs_buf_put_u8(out, 0x03);
        put_len(out, len, 0);
        cs_buf_put(out, v, len);
    }
    return 0;
}

static int enc_decimal(const uint8_t *v, size_t n, cs_buf *out)
{
    if (n < 4)
        return CS_EINVAL;
    cs_buf dg;
    cs_buf_init(&dg);
    int sign;
    int64_t e10;
    if (ctype__num_normal(v + 4, n - 4, (int32_t)cs_be32(v), &sign, &dg, &e10)) {
        cs_buf_destroy(&dg);
        return CS_ENOMEM;
    }
    if (sign == 0) {
        cs_buf_put_u8(out, 0x02);
    } else {
        uint8_t x = sign < 0 ? 0xFF : 0x00;
        cs_buf_put_u8(out, sign < 0 ? 0x01 : 0x03);
        uint8_t eb[8];
        cs_st64(eb, (uint64_t)e10 ^ 0x8000000000000000ULL);
        for (int i = 0; i < 8; i++)
            cs_buf_put_u8(out, eb[i] ^ x);
        for (size_t i = 0; i < dg.len; i++)
            cs_buf_put_u8(out, (uint8_t)((dg.p[i] - '0' + 1) ^ x));
        cs_buf_put_u8(out, x);
    }
    /* the original scale, so keys come back exactly as written (-1E+20, 1.50) */
    cs_buf_put_u32(out, cs_be32(v) ^ 0x80000000u);
    int rc = dg.err ? CS_ENOMEM : 0;
    cs_buf_destroy(&dg);
    return rc;
}

static int enc(const ctype *t, const uint8_t *v, size_t n, cs_buf *out, int depth);

static int enc_collection(const ctype *t, const uint8_t *v, size_t n, cs_buf *out, int depth)
{
    if (n == 0) {
        cs_buf_put_u8(out, 0x00);
        return 0;
    }
    int32_t cnt = ctype_coll_count(v, n);
    if (cnt < 0)
        return CS_EINVAL;
    cs_buf_put_u8(out, 0x01);
    size_t pos = 4;
    int per = t->kind == CT_MAP ? 2 : 1;
    for (int32_t i = 0; i < cnt; i++) {
        cs_buf_put_u8(out, 0x02);
        for (int j = 0; j < per; j++) {
            const uint8_t *p;
            int32_t len;
            if (ctype__rd_elem(v, n, &pos, &p, &len) || len < 0)
                return CS_EINVAL;
            int rc = enc(t->sub[j], p, (size_t)len, out, depth + 1);
            if (rc)
                return rc;
        }
    }
    if (pos != n)
        return CS_EINVAL;
    cs_buf_put_u8(out, 0x01);
    return 0;
}

static int enc_tuple(const ctype *t, const uint8_t *v, size_t n, cs_buf *out, int depth)
{
    size_t pos = 0;
    for (int i = 0; pos < n; i++) {
        const uint8_t *p;
        int32_t len;
        if (i >= t->n_sub || ctype__rd_elem(v, n, &pos, &p, &len))
            return CS_EINVAL;
        if (len < 0) {
            cs_buf_put_u8(out, 0x02);
            continue;
        }
        cs_buf_put_u8(out, 0x03);
        int rc = enc(t->sub[i], p, (size_t)len, out, depth + 1);
        if (rc)
            return rc;
    }
    cs_buf_put_u8(out, 0x01);
    return 0;
}

static int enc(const ctype *t, const uint8_t *v, size_t n, cs_buf *out, int depth)
{
    if (depth > 64)
        return CS_EINVAL;
    switch (t->kind) {
    case CT_ASCII: case CT_VARCHAR: case CT_BLOB: case CT_INET: case CT_CUSTOM:
        put_bytes_esc(out, v, n);
        return 0;
    case CT_EMPTY:
        return n ? CS_EINVAL : 0;
    case CT_DURATION:
        return CS_EINVAL;
    case CT_LIST: case CT_SET: case CT_MAP:
        return enc_collection(t, v, n, out, depth);
    case CT_TUPLE: case CT_UDT:
        return enc_tuple(t, v, n, out, depth);
    default:
        break;
    }
    if (n == 0) {
        cs_buf_put_u8(out, 0x00);
        return 0;
    }
    switch (t->kind) {
    case CT_BOOLEAN:
        if (n != 1)
            return CS_EINVAL;
        cs_buf_put_u8(out, v[0] ? 0x02 : 0x01);
        return 0;
    case CT_TINYINT: case CT_SMALLINT: case CT_INT: case CT_BIGINT: case CT_COUNTER:
    case CT_TIMESTAMP: {
        size_t w = t->kind == CT_TINYINT ? 1 : t->kind == CT_SMALLINT ? 2 : t->kind == CT_INT ? 4 : 8;
        if (n != w)
            return CS_EINVAL;
        cs_buf_put_u8(out, 0x01);
        cs_buf_put_u8(out, v[0] ^ 0x80);
        cs_buf_put(out, v + 1, n - 1);
        return 0;
    }
    case CT_DATE: case CT_TIME:
        if (n != (t->kind == CT_DATE ? 4u : 8u))
            return CS_EINVAL;
        cs_buf_put_u8(out, 0x01);
        cs_buf_put(out, v, n);
        return 0;
    case CT_FLOAT: {
        if (n != 4)
            return CS_EINVAL;
        uint32_t b = cs_be32(v);
        float f;
        memcpy(&f, &b, 4);
        if (isnan(f))
            b = 0x7fc00000u;
        b = (b & 0x80000000u) ? ~b : b ^ 0x80000000u;
        cs_buf_put_u8(out, 0x01);
        cs_buf_put_u32(out, b);
        return 0;
    }
    case CT_DOUBLE: {
        if (n != 8)
            return CS_EINVAL;
        uint64_t b = cs_be64(v);
        double d;
        memcpy(&d, &b, 8);
        if (isnan(d))
            b = 0x7ff8000000000000ULL;
        b = (b & 0x8000000000000000ULL) ? ~b : b ^ 0x8000000000000000ULL;
        cs_buf_put_u8(out, 0x01);
        cs_buf_put_u64(out, b);
        return 0;
    }
    case CT_UUID: {
        if (n != 16)
            return CS_EINVAL;
        uint64_t msb = cs_be64(v);
        int ver = (int)((msb >> 12) & 0xF);
        cs_buf_put_u8(out, (uint8_t)(0x10 + ver));
        cs_buf_put_u64(out, ver == 1 ? reorder_ts(msb) : msb);
        cs_buf_put(out, v + 8, 8);
        return 0;
    }
    case CT_TIMEUUID:
        if (n != 16)
            return CS_EINVAL;
        cs_buf_put_u8(out, 0x01);
        cs_buf_put_u64(out, reorder_ts(cs_be64(v)) ^ 0x8000000000000000ULL);
        cs_buf_put_u64(out, cs_be64(v + 8) ^ 0x8080808080808080ULL);
        return 0;
    case CT_VARINT:
        return enc_varint(v, n, out);
    case CT_DECIMAL:
        return enc_decimal(v, n, out);
    default:
        return CS_EINVAL;
    }
}

int ctype_bc_encode(const ctype *t, const uint8_t *v, size_t n, bool desc, cs_buf *out)
{
    size_t start = out->len;
    int rc = enc(t, v, n, out, 0);
    if (!rc && out->err)
        rc = CS_ENOMEM;
    if (rc) {
        if (out->len > start)
            out->len = start;
        return rc;
    }
    if (desc)
        for (size_t i = start; i < out->len; i++)
            out->p[i] = (uint8_t)~out->p[i];
    return 0;
}

/* ------------------------------------------------ decoding */

typedef struct drd { cs_rd *r; uint8_t x; } drd;

static uint8_t g8(drd *d)
{
    return cs_rd_u8(d->r) ^ d->x;
}

static uint64_t g64(drd *d)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = (v << 8) | g8(d);
    return v;
}

static void gput(drd *d, size_t n, cs_buf *out)
{
    const uint8_t *p = cs_rd_take(d->r, n);
    if (!p)
        return;
    uint8_t *o = cs_buf_extend(out, n);
    if (!o)
        return;
    for (size_t i = 0; i < n; i++)
        o[i] = p[i] ^ d->x;
}

static int dec(const ctype *t, drd *d, cs_buf *out, int depth);

static int dec_bytes(drd *d, cs_buf *out)
{
    for (;;) {
        uint8_t b = g8(d);
        if (d->r->err)
            return CS_ECORRUPT;
        if (b != 0) {
            cs_buf_put_u8(out, b);
            continue;
        }
        uint8_t c = g8(d);
        if (c == 0x00)
            return d->r->err ? CS_ECORRUPT : 0;
        if (c != 0xFF)
            return CS_ECORRUPT;
        cs_buf_put_u8(out, 0);
    }
}

static size_t get_len(drd *d, uint8_t x)
{
    uint8_t b = g8(d) ^ x;
    if (b != 0xFF)
        return b;
    uint32_t l = 0;
    for (int i = 0; i < 4; i++)
        l = (l << 8) | (uint8_t)(g8(d) ^ x);
    return l;
}

static int dec_varint(drd *d, uint8_t tag, cs_buf *out)
{
    if (tag == 0x02) {
        cs_buf_put_u8(out, 0);
        return 0;
    }
    if (tag != 0x01 && tag != 0x03)
        return CS_ECORRUPT;
    bool neg = tag == 0x01;
    size_t len = get_len(d, neg ? 0xFF : 0);
    if (d->r->err || len == 0 || len > cs_rd_left(d->r))
        return CS_ECORRUPT;
    const uint8_t *p = d->r->p + d->r->pos;
    uint8_t first = p[0] ^ d->x;
    if (!neg && (first & 0x80))
        cs_buf_put_u8(out, 0);
    gput(d, len, out);
    return d->r->err ? CS_ECORRUPT : 0;
}

static uint32_t g32(drd *d)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v = (v << 8) | g8(d);
    return v;
}

static int dec_decimal(drd *d, uint8_t tag, cs_buf *out)
{
    if (tag == 0x02) {
        uint32_t scale = g32(d) ^ 0x80000000u;
        if (d->r->err)
            return CS_ECORRUPT;
        cs_buf_put_u32(out, scale);
        cs_buf_put_u8(out, 0);
        return 0;
    }
    if (tag != 0x01 && tag != 0x03)
        return CS_ECORRUPT;
    uint8_t x = tag == 0x01 ? 0xFF : 0;
    int64_t e10 = (int64_t)((g64(d) ^ (x ? ~0ULL : 0)) ^ 0x8000000000000000ULL);
    cs_buf txt;
    cs_buf_init(&txt);
    if (x)
        cs_buf_put_u8(&txt, '-');
    int64_t nd = 0;
    for (;;) {
        uint8_t b = g8(d) ^ x;
        if (d->r->err || b > 10) {
            cs_buf_destroy(&txt);
            return CS_ECORRUPT;
        }
        if (b == 0)
            break;
        cs_buf_put_u8(&txt, (uint8_t)('0' + b - 1));
        nd++;
    }
    int64_t scale = (int32_t)(g32(d) ^ 0x80000000u);
    /* unscaled = digits x 10^(e10 - nd + scale); the zeros were stripped */
    int64_t zeros = e10 - nd + scale;
    if (d->r->err || zeros < 0 || zeros > 1000000) {
        cs_buf_destroy(&txt);
        return CS_ECORRUPT;
    }
    for (int64_t k = 0; k < zeros; k++)
        cs_buf_put_u8(&txt, '0');
    ctype__printf(&txt, "E%lld", (long long)-scale);
    int rc = txt.err ? CS_ENOMEM : ctype__decimal_from_text((const char *)txt.p, txt.len, out);
    cs_buf_destroy(&txt);
    return rc ? CS_ECORRUPT : 0;
}

static int dec_collection(const ctype *t, drd *d, cs_buf *out, int depth)
{
    uint8_t tag = g8(d);
    if (tag == 0x00)
        return d->r->err ? CS_ECORRUPT : 0;
    if (tag != 0x01)
        return CS_ECORRUPT;
    size_t cnt_off = out->len;
    cs_buf_put_u32(out, 0);
    uint32_t cnt = 0;
    int per = t->kind == CT_MAP ? 2 : 1;
    for (;;) {
        uint8_t b = g8(d);
        if (d->r->err)
            return CS_ECORRUPT;
        if (b == 0x01)
            break;
        if (b != 0x02)
            return CS_ECORRUPT;
        for (int j = 0; j < per; j++) {
            size_t len_off = out->len;
            cs_buf_put_u32(out, 0);
            int rc = dec(t->sub[j], d, out, depth + 1);
            if (rc)
                return rc;
            if (out->err)
                return CS_ENOMEM;
            cs_buf_patch_u32(out, len_off, (uint32_t)(out->len - len_off - 4));
        }
        cnt++;
    }
    if (out->err)
        return CS_ENOMEM;
    cs_buf_patch_u32(out, cnt_off, cnt);
    return 0;
}

static int dec_tuple(const ctype *t, drd *d, cs_buf *out, int depth)
{
    for (int i = 0;; i++) {
        uint8_t b = g8(d);
        if (d->r->err)
            return CS_ECORRUPT;
        if (b == 0x01)
            return 0;
        if (i >= t->n_sub)
            return CS_ECORRUPT;
        if (b == 0x02) {
            cs_buf_put_u32(out, 0xFFFFFFFFu);
            continue;
        }
        if (b != 0x03)
            return CS_ECORRUPT;
        size_t len_off = out->len;
        cs_buf_put_u32(out, 0);
        int rc = dec(t->sub[i], d, out, depth + 1);
        if (rc)
            return rc;
        if (out->err)
            return CS_ENOMEM;
        cs_buf_patch_u32(out, len_off, (uint32_t)(out->len - len_off - 4));
    }
}

static int dec(const ctype *t, drd *d, cs_buf *out, int depth)
{
    if (depth > 64)
        return CS_ECORRUPT;
    switch (t->kind) {
    case CT_ASCII: case CT_VARCHAR: case CT_BLOB: case CT_INET: case CT_CUSTOM:
        return dec_bytes(d, out);
    case CT_EMPTY:
        return 0;
    case CT_DURATION:
        return CS_EINVAL;
    case CT_LIST: case CT_SET: case CT_MAP:
        return dec_collection(t, d, out, depth);
    case CT_TUPLE: case CT_UDT:
        return dec_tuple(t, d, out, depth);
    default:
        break;
    }
    uint8_t tag = g8(d);
    if (d->r->err)
        return CS_ECORRUPT;
    if (tag == 0x00)
        return 0;           /* empty value */
    switch (t->kind) {
    case CT_BOOLEAN:
        if (tag > 2)
            return CS_ECORRUPT;
        cs_buf_put_u8(out, tag == 2 ? 1 : 0);
        return 0;
    case CT_TINYINT: case CT_SMALLINT: case CT_INT: case CT_BIGINT: case CT_COUNTER:
    case CT_TIMESTAMP: {
        size_t w = t->kind == CT_TINYINT ? 1 : t->kind == CT_SMALLINT ? 2 : t->kind == CT_INT ? 4 : 8;
        if (tag != 0x01)
            return CS_ECORRUPT;
        size_t off = out->len;
        gput(d, w, out);
        if (d->r->err)
            return CS_ECORRUPT;
        if (!out->err)
            out->p[off] ^= 0x80;
        return 0;
    }
    case CT_DATE: case CT_TIME:
        if (tag != 0x01)
            return CS_ECORRUPT;
        gput(d, t->kind == CT_DATE ? 4 : 8, out);
        return d->r->err ? CS_ECORRUPT : 0;
    case CT_FLOAT: {
        if (tag != 0x01)
            return CS_ECORRUPT;
        uint32_t b = 0;
        for (int i = 0; i < 4; i++)
            b = (b << 8) | g8(d);
        b = (b & 0x80000000u) ? b ^ 0x80000000u : ~b;
        cs_buf_put_u32(out, b);
        return d->r->err ? CS_ECORRUPT : 0;
    }
    case CT_DOUBLE: {
        if (tag != 0x01)
            return CS_ECORRUPT;
        uint64_t b = g64(d);
        b = (b & 0x8000000000000000ULL) ? b ^ 0x8000000000000000ULL : ~b;
        cs_buf_put_u64(out, b);
        return d->r->err ? CS_ECORRUPT : 0;
    }
    case CT_UUID: {
        if (tag < 0x10 || tag > 0x1F)
            return CS_ECORRUPT;
        uint64_t msb = g64(d);
        if (tag == 0x11)
            msb = unorder_ts(msb);
        cs_buf_put_u64(out, msb);
        gput(d, 8, out);
        return d->r->err ? CS_ECORRUPT : 0;
    }
    case CT_TIMEUUID: {
        if (tag != 0x01)
            return CS_ECORRUPT;
        uint64_t msb = unorder_ts(g64(d) ^ 0x8000000000000000ULL);
        uint64_t lsb = g64(d) ^ 0x8080808080808080ULL;
        cs_buf_put_u64(out, msb);
        cs_buf_put_u64(out, lsb);
        return d->r->err ? CS_ECORRUPT : 0;
    }
    case CT_VARINT:
        return dec_varint(d, tag, out);
    case CT_DECIMAL:
        return dec_decimal(d, tag, out);
    default:
        return CS_EINVAL;
    }
}

int ctype_bc_decode(const ctype *t, cs_rd *r, bool desc, cs_buf *out)
{
    drd d = { r, desc ? 0xFF : 0x00 };
    size_t start = out->len;
    int rc = dec(t, &d, out, 0);
    if (!rc && (r->err || out->err))
        rc = r->err ? CS_ECORRUPT : CS_ENOMEM;
    if (rc && out->len > start)
        out->len = start;
    return rc;
}
