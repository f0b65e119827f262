/*
 * compare.c: Cassandra's comparators (db/marshal/XType.compareCustom) over
 * serialized values, and set/map normalization that depends on them.
 *
 *  - empty values sort first for every type;
 *  - ascii/text/blob/inet/custom/duration: unsigned bytes, shorter prefix first;
 *  - integers, timestamp, counter: signed; date, time: unsigned bytes;
 *  - float/double: Java Float.compare/Double.compare (-0.0 < 0.0, NaN last);
 *  - boolean: false < true (any non-zero byte is true);
 *  - uuid: version, then timestamp for v1, then unsigned bytes;
 *  - timeuuid: timestamp, then the low 8 bytes as signed bytes;
 *  - varint/decimal: numerically (1.5 == 1.50);
 *  - list/set: elementwise then count; map: key, value per entry then count;
 *  - tuple/UDT: componentwise (null first), then fewer components first.
 */
#include <math.h>
#include <string.h>

#include "cql/types/types_int.h"

static int cmp_bytes(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    size_t m = an < bn ? an : bn;
    int c = m ? memcmp(a, b, m) : 0;
    if (c)
        return c < 0 ? -1 : 1;
    return an < bn ? -1 : an > bn ? 1 : 0;
}

static int cmp_i64(int64_t a, int64_t b) { return a < b ? -1 : a > b; }
static int cmp_u64(uint64_t a, uint64_t b) { return a < b ? -1 : a > b; }

/* Java's Double.compare via doubleToLongBits ordering. */
static int64_t dbl_key(uint64_t bits)
{
    double d;
    memcpy(&d, &bits, 8);
    if (isnan(d))
        bits = 0x7ff8000000000000ULL;
    int64_t s = (int64_t)bits;
    return s < 0 ? (int64_t)(bits ^ 0x7FFFFFFFFFFFFFFFULL) : s;
}

static int32_t flt_key(uint32_t bits)
{
    float f;
    memcpy(&f, &bits, 4);
    if (isnan(f))
        bits = 0x7fc00000u;
    int32_t s = (int32_t)bits;
    return s < 0 ? (int32_t)(bits ^ 0x7FFFFFFFu) : s;
}

static uint64_t reorder_ts(uint64_t msb)
{
    return (msb << 48) | ((msb << 16) & 0xFFFF00000000ULL) | (msb >> 32);
}

static int cmp_uuid(const uint8_t *a, const uint8_t *b)
{
    uint64_t ma = cs_be64(a), mb = cs_be64(b);
    int va = (int)((ma >> 12) & 0xF), vb = (int)((mb >> 12) & 0xF);
    if (va != vb)
        return va < vb ? -1 : 1;
    if (va == 1) {
        int c = cmp_u64(reorder_ts(ma) & 0x0FFFFFFFFFFFFFFFULL, reorder_ts(mb) & 0x0FFFFFFFFFFFFFFFULL);
        if (c)
            return c;
    }
    int c = cmp_u64(ma, mb);
    return c ? c : cmp_u64(cs_be64(a + 8), cs_be64(b + 8));
}

static int cmp_timeuuid(const uint8_t *a, const uint8_t *b)
{
    int c = cmp_i64((int64_t)reorder_ts(cs_be64(a)), (int64_t)reorder_ts(cs_be64(b)));
    if (c)
        return c;
    return cmp_i64((int64_t)(cs_be64(a + 8) ^ 0x0080808080808080ULL),
                   (int64_t)(cs_be64(b + 8) ^ 0x0080808080808080ULL));
}

/* Numeric compare of varints/decimals. */
static int cmp_number(const uint8_t *a, size_t an, int64_t sa, const uint8_t *b, size_t bn, int64_t sb)
{
    return ctype__num_cmp(a, an, sa, b, bn, sb);
}

static int cmp_collection(const ctype *t, const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    if (an < 4 || bn < 4)
        return cmp_bytes(a, an, b, bn);
    int32_t ca = (int32_t)cs_be32(a), cb = (int32_t)cs_be32(b);
    size_t pa = 4, pb = 4;
    int per = t->kind == CT_MAP ? 2 : 1;
    for (int32_t i = 0; i < ca && i < cb; i++) {
        for (int j = 0; j < per; j++) {
            const uint8_t *ea, *eb;
            int32_t la, lb;
            if (ctype__rd_elem(a, an, &pa, &ea, &la) || ctype__rd_elem(b, bn, &pb, &eb, &lb))
                return cmp_bytes(a, an, b, bn);
            if (la < 0 || lb < 0) {
                if (la != lb)
                    return la < lb ? -1 : 1;
                continue;
            }
            int c = ctype_compare(t->sub[j], ea, (size_t)la, eb, (size_t)lb);
            if (c)
                return c;
        }
    }
    return ca < cb ? -1 : ca > cb ? 1 : 0;
}

static int cmp_tuple(const ctype *t, const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    size_t pa = 0, pb = 0;
    for (int i = 0; pa < an && pb < bn; i++) {
        const uint8_t *ea, *eb;
        int32_t la, lb;
        if (ctype__rd_elem(a, an, &pa, &ea, &la) || ctype__rd_elem(b, bn, &pb, &eb, &lb))
            return cmp_bytes(a, an, b, bn);
        if (la < 0) {
            if (lb < 0)
                continue;
            return -1;
        }
        if (lb < 0)
            return 1;
        const ctype *st = i < t->n_sub ? t->sub[i] : ctype_scalar(CT_BLOB);
        int c = ctype_compare(st, ea, (size_t)la, eb, (size_t)lb);
        if (c)
            return c;
    }
    if (pa >= an)
        return pb >= bn ? 0 : -1;
    return 1;
}

int ctype_compare(const ctype *t, const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    if (t->kind == CT_TUPLE || t->kind == CT_UDT)
        return cmp_tuple(t, a, an, b, bn);
    if (an == 0 || bn == 0)
        return an == 0 ? (bn == 0 ? 0 : -1) : 1;
    switch (t->kind) {
    case CT_TINYINT:
        if (an == 1 && bn == 1)
            return cmp_i64((int8_t)a[0], (int8_t)b[0]);
        break;
    case CT_SMALLINT:
        if (an == 2 && bn == 2)
            return cmp_i64((int16_t)cs_be16(a), (int16_t)cs_be16(b));
        break;
    case CT_INT:
        if (an == 4 && bn == 4)
            return cmp_i64((int32_t)cs_be32(a), (int32_t)cs_be32(b));
        break;
    case CT_BIGINT: case CT_COUNTER: case CT_TIMESTAMP:
        if (an == 8 && bn == 8)
            return cmp_i64((int64_t)cs_be64(a), (int64_t)cs_be64(b));
        break;
    case CT_DATE: case CT_TIME:
        break;   /* unsigned bytes (no compareCustom override in Cassandra) */
    case CT_FLOAT:
        if (an == 4 && bn == 4)
            return cmp_i64(flt_key(cs_be32(a)), flt_key(cs_be32(b)));
        break;
    case CT_DOUBLE:
        if (an == 8 && bn == 8)
            return cmp_i64(dbl_key(cs_be64(a)), dbl_key(cs_be64(b)));
        break;
    case CT_BOOLEAN:
        if (a[0] == b[0] || (a[0] && b[0]))
            return 0;
        return a[0] == 0 ? -1 : 1;
    case CT_UUID:
        if (an == 16 && bn == 16)
            return cmp_uuid(a, b);
        break;
    case CT_TIMEUUID:
        if (an == 16 && bn == 16)
            return cmp_timeuuid(a, b);
        break;
    case CT_VARINT:
        return cmp_number(a, an, 0, b, bn, 0);
    case CT_DECIMAL:
        if (an >= 4 && bn >= 4)
            return cmp_number(a + 4, an - 4, (int32_t)cs_be32(a), b + 4, bn - 4, (int32_t)cs_be32(b));
        break;
    case CT_LIST: case CT_SET: case CT_MAP:
        return cmp_collection(t, a, an, b, bn);
    default:
        break;
    }
    return cmp_bytes(a, an, b, bn);
}

/* ------------------------------------------------ set/map normalization */

typedef struct elem { const uint8_t *k, *v; int32_t kl, vl; size_t idx; } elem;

/* Insertion-stable merge sort by key (comparator with type). */
static void sort_elems(const ctype *kt, elem *e, elem *tmp, size_t n)
{
    if (n < 2)
        return;
    size_t h = n / 2;
    sort_elems(kt, e, tmp, h);
    sort_elems(kt, e + h, tmp, n - h);
    size_t i = 0, j = h, o = 0;
    while (i < h && j < n) {
        int c = ctype_compare(kt, e[i].k, (size_t)e[i].kl, e[j].k, (size_t)e[j].kl);
        tmp[o++] = c <= 0 ? e[i++] : e[j++];
    }
    while (i < h)
        tmp[o++] = e[i++];
    while (j < n)
        tmp[o++] = e[j++];
    memcpy(e, tmp, n * sizeof(elem));
}

int ctype_coll_normalize(const ctype *t, const uint8_t *v, size_t n, cs_buf *out)
{
    if ((t->kind != CT_SET && t->kind != CT_MAP) || n == 0) {
        cs_buf_put(out, v, n);
        return out->err ? CS_ENOMEM : 0;
    }
    int32_t cnt = ctype_coll_count(v, n);
    if (cnt < 0 || (size_t)cnt > n / 4)
        return CS_EINVAL;
    elem *e = cs_calloc(cnt ? (size_t)cnt * 2 : 1, sizeof(elem));
    if (!e)
        return CS_ENOMEM;
    size_t pos = 4;
    bool map = t->kind == CT_MAP;
    for (int32_t i = 0; i < cnt; i++) {
        if (ctype__rd_elem(v, n, &pos, &e[i].k, &e[i].kl) || e[i].kl < 0 ||
            (map && (ctype__rd_elem(v, n, &pos, &e[i].v, &e[i].vl) || e[i].vl < 0))) {
            cs_free(e);
            return CS_EINVAL;
        }
        e[i].idx = (size_t)i;
    }
    sort_elems(t->sub[0], e, e + cnt, (size_t)cnt);
    size_t cnt_off = out->len;
    cs_buf_put_u32(out, 0);
    uint32_t outn = 0;
    for (int32_t i = 0; i < cnt; i++) {
        /* among equal keys keep the last one written (stable sort keeps input order) */
        if (i + 1 < cnt && ctype_compare(t->sub[0], e[i].k, (size_t)e[i].kl, e[i + 1].k, (size_t)e[i + 1].kl) == 0)
            continue;
        cs_buf_put_u32(out, (uint32_t)e[i].kl);
        cs_buf_put(out, e[i].k, (size_t)e[i].kl);
        if (map) {
            cs_buf_put_u32(out, (uint32_t)e[i].vl);
            cs_buf_put(out, e[i].v, (size_t)e[i].vl);
        }
        outn++;
    }
    cs_free(e);
    if (out->err)
        return CS_ENOMEM;
    cs_buf_patch_u32(out, cnt_off, outn);
    return 0;
}
