/*
 * agg.c: sum() and avg() over numeric values, bit for bit as Cassandra's
 * AggregateFcts computes them (types.h ctype_agg_*):
 *   - tinyint/smallint/int/bigint/counter sum: wraps in the type's width;
 *   - their avg: 64-bit sum, BigInteger once it overflows, truncating
 *     division, result narrowed to the type;
 *   - float/double sum and avg: Kahan summation in double (avg continues in
 *     BigDecimal once the double sum overflows), NaN from same-signed
 *     infinities repaired with the plain sum;
 *   - varint: exact sum, avg truncates;
 *   - decimal: exact sum, avg is the running avg += (x - avg) / n with
 *     HALF_EVEN rounding at the dividend's scale.
 */
#include <math.h>
#include <string.h>

#include "cql/types/types_int.h"

static bool is_int_kind(ctype_kind k)
{
    return k == CT_TINYINT || k == CT_SMALLINT || k == CT_INT || k == CT_BIGINT || k == CT_COUNTER;
}

static int64_t int_of(const uint8_t *v, size_t n)
{
    switch (n) {
    case 1: return (int8_t)v[0];
    case 2: return (int16_t)cs_be16(v);
    case 4: return (int32_t)cs_be32(v);
    case 8: return (int64_t)cs_be64(v);
    default: return 0;
    }
}

void ctype_agg_init(ctype_agg *a, const ctype *t, bool avg)
{
    memset(a, 0, sizeof(*a));
    a->t = t;
    a->avg = avg;
    cs_buf_init(&a->big);
}

void ctype_agg_destroy(ctype_agg *a)
{
    cs_buf_destroy(&a->big);
    memset(a, 0, sizeof(*a));
}

/* a->big = a->big + (v, n) for decimal or varint type t (big empty = zero). */
static int big_add(ctype_agg *a, const ctype *t, const uint8_t *v, size_t n)
{
    cs_buf r;
    cs_buf_init(&r);
    int rc;
    if (a->big.len == 0)
        rc = (cs_buf_put(&r, v, n), r.err ? CS_ENOMEM : 0);
    else
        rc = ctype_num_add(t, a->big.p, a->big.len, v, n, &r);
    if (!rc) {
        cs_buf_destroy(&a->big);
        a->big = r;
    } else {
        cs_buf_destroy(&r);
    }
    return rc;
}

/* Serialized decimal of a double as BigDecimal.valueOf(d) (Double.toString). */
static int decimal_of_double(double d, cs_buf *out)
{
    cs_buf s;
    cs_buf_init(&s);
    ctype_format_java_double(d, false, &s);
    int rc = s.err ? CS_ENOMEM : ctype__decimal_from_text((const char *)s.p, s.len, out);
    cs_buf_destroy(&s);
    return rc;
}

/* -x for a decimal or varint (two's complement negate of the unscaled part). */
static int big_neg(const ctype *t, const uint8_t *v, size_t n, cs_buf *out)
{
    size_t off = t->kind == CT_DECIMAL ? 4 : 0;
    if (n < off)
        return CS_EINVAL;
    ctype__bn x;
    ctype__bn_from_twos(&x, v + off, n - off);
    x.neg = !x.neg && x.n > 0;
    if (off)
        cs_buf_put(out, v, 4);
    ctype__bn_to_twos(&x, out);
    int rc = x.err ? x.err : out->err ? CS_ENOMEM : 0;
    ctype__bn_free(&x);
    return rc;
}

static int add_float(ctype_agg *a, double x)
{
    if (a->foverflow) {
        cs_buf d;
        cs_buf_init(&d);
        int rc = decimal_of_double(x, &d);
        if (!rc)
            rc = big_add(a, ctype_scalar(CT_DECIMAL), d.p, d.len);
        cs_buf_destroy(&d);
        return rc;
    }
    a->fsimple += x;
    double prev = a->fsum;
    double tmp = x - a->fcomp;
    double rounded = a->fsum + tmp;
    a->fcomp = (rounded - a->fsum) - tmp;
    a->fsum = rounded;
    if (a->avg && isinf(a->fsum) && !isinf(x)) {
        /* FloatAvgAggregate: continue in BigDecimal from prev + x */
        a->foverflow = true;
        cs_buf p, q;
        cs_buf_init(&p);
        cs_buf_init(&q);
        int rc = decimal_of_double(prev, &p);
        if (!rc)
            rc = decimal_of_double(x, &q);
        if (!rc)
            rc = ctype_num_add(ctype_scalar(CT_DECIMAL), p.p, p.len, q.p, q.len, &a->big);
        cs_buf_destroy(&p);
        cs_buf_destroy(&q);
        return rc;
    }
    return 0;
}

int ctype_agg_add(ctype_agg *a, const uint8_t *v, size_t n)
{
    const ctype *t = a->t;
    if (n == 0)
        return 0;           /* empty values carry no number */
    int rc = 0;
    ctype_kind k = t->kind;
    if (is_int_kind(k)) {
        int64_t x = int_of(v, n);
        a->count++;
        if (!a->avg) {
            a->isum = (int64_t)((uint64_t)a->isum + (uint64_t)x);   /* narrowed at the end */
            return 0;
        }
        if (a->ioverflow) {
            uint8_t b[8];
            cs_st64(b, (uint64_t)x);
            return big_add(a, ctype_scalar(CT_VARINT), b, 8);
        }
        int64_t prev = a->isum, sum = (int64_t)((uint64_t)prev + (uint64_t)x);
        if (((prev ^ sum) & (x ^ sum)) < 0) {
            uint8_t b1[8], b2[8];
            cs_st64(b1, (uint64_t)prev);
            cs_st64(b2, (uint64_t)x);
            a->ioverflow = true;
            cs_buf_reset(&a->big);
            return ctype_num_add(ctype_scalar(CT_VARINT), b1, 8, b2, 8, &a->big);
        }
        a->isum = sum;
        return 0;
    }
    switch (k) {
    case CT_FLOAT: case CT_DOUBLE:
        a->count++;
        return add_float(a, ctype_num_to_double(t, v, n));
    case CT_VARINT:
        a->count++;
        return big_add(a, t, v, n);
    case CT_DECIMAL:
        if (n < 4)
            return CS_EINVAL;
        a->count++;
        if (!a->avg)
            return big_add(a, t, v, n);
        {
            /* avg = avg + (x - avg) / count, HALF_EVEN */
            cs_buf neg, diff, q;
            cs_buf_init(&neg);
            cs_buf_init(&diff);
            cs_buf_init(&q);
            if (a->big.len == 0)
                ctype_num_from_int64(t, 0, &a->big);
            rc = big_neg(t, a->big.p, a->big.len, &neg);
            if (!rc)
                rc = ctype_num_add(t, v, n, neg.p, neg.len, &diff);
            if (!rc)
                rc = ctype_num_div_int(t, diff.p, diff.len, a->count, &q);
            if (!rc)
                rc = big_add(a, t, q.p, q.len);
            cs_buf_destroy(&neg);
            cs_buf_destroy(&diff);
            cs_buf_destroy(&q);
        }
        return rc;
    default:
        return CS_EINVAL;
    }
}

static int put_double(const ctype *t, double d, cs_buf *out)
{
    if (t->kind == CT_FLOAT) {
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

int ctype_agg_result(const ctype_agg *a, cs_buf *out)
{
    const ctype *t = a->t;
    ctype_kind k = t->kind;
    if (is_int_kind(k)) {
        int64_t r = a->isum;
        if (a->avg) {
            if (a->count == 0) {
                r = 0;
            } else if (a->ioverflow) {
                cs_buf q, l;
                cs_buf_init(&q);
                cs_buf_init(&l);
                /* bigSum.divide(count).longValue() */
                int rc = ctype_num_div_int(ctype_scalar(CT_VARINT), a->big.p, a->big.len, a->count, &q);
                if (!rc)
                    rc = ctype_num_cast(ctype_scalar(CT_VARINT), ctype_scalar(CT_BIGINT), q.p, q.len, &l);
                if (!rc && l.len == 8)
                    r = (int64_t)cs_be64(l.p);
                cs_buf_destroy(&q);
                cs_buf_destroy(&l);
                if (rc)
                    return rc;
            } else {
                r = a->isum / a->count;
            }
        }
        return ctype_num_from_int64(t, r, out);   /* narrows like Java's casts */
    }
    switch (k) {
    case CT_FLOAT: case CT_DOUBLE: {
        if (a->avg && a->count == 0)
            return put_double(t, 0, out);
        if (a->foverflow) {
            cs_buf q;
            cs_buf_init(&q);
            int rc = ctype_num_div_int(ctype_scalar(CT_DECIMAL), a->big.p, a->big.len, a->count, &q);
            double d = rc ? 0 : ctype_num_to_double(ctype_scalar(CT_DECIMAL), q.p, q.len);
            cs_buf_destroy(&q);
            return rc ? rc : put_double(t, d, out);
        }
        double s = a->fsum + a->fcomp;
        if (isnan(s) && isinf(a->fsimple))
            s = a->fsimple;
        return put_double(t, a->avg ? s / (double)a->count : s, out);
    }
    case CT_VARINT:
        if (a->big.len == 0)
            return ctype_num_from_int64(t, 0, out);
        if (a->avg)
            return ctype_num_div_int(t, a->big.p, a->big.len, a->count, out);
        cs_buf_put(out, a->big.p, a->big.len);
        return out->err ? CS_ENOMEM : 0;
    case CT_DECIMAL:
        if (a->big.len == 0)
            return ctype_num_from_int64(t, 0, out);
        cs_buf_put(out, a->big.p, a->big.len);
        return out->err ? CS_ENOMEM : 0;
    default:
        return CS_EINVAL;
    }
}
