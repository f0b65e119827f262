/*
 * types_int.h: shared among cql/types/ only.  Date/time arithmetic,
 * arbitrary-precision helpers for varint/decimal, identifier quoting and
 * small serialization readers.  Not for use outside cql/types/.
 */
#ifndef CS_CQL_TYPES_INT_H
#define CS_CQL_TYPES_INT_H

#include "cql/types.h"
#include "common/alloc.h"

/* ------------------------------------------------ calendar (datetime.c) */
/* Days since 1970-01-01 of a proleptic Gregorian y-m-d (any year). */
int64_t ctype__days_from_civil(int64_t y, int m, int d);
void ctype__civil_from_days(int64_t z, int64_t *y, int *m, int *d);
/* Parse a timestamp string as Cassandra's TimestampSerializer does; ms since epoch.
 * 0 or CS_EINVAL. */
int ctype__parse_timestamp(const char *s, size_t n, int64_t *ms);
/* "yyyy-mm-dd" (or integer) to the serialized unsigned date (days + 2^31).
 * 0 or CS_EUSER with e. */
int ctype__parse_date(const char *s, size_t n, uint32_t *out, cs_error *e);
/* "hh:mm:ss[.fffffffff]" (or integer nanos) to nanos of day.  0 or CS_EUSER. */
int ctype__parse_time(const char *s, size_t n, int64_t *out, cs_error *e);
/* Duration literal (1h30m, P1DT2H, P0001-02-03T04:05:06) to months/days/nanos. */
int ctype__parse_duration(const char *s, size_t n, int32_t *months, int32_t *days, int64_t *nanos,
                          cs_error *e);
/* Formatting: "yyyy-mm-dd HH:MM:SS.fffZ" (json=true) / "yyyy-mm-ddTHH:MM:SS.fffZ". */
void ctype__fmt_timestamp(int64_t ms, bool json, cs_buf *out);
void ctype__fmt_date(uint32_t raw, cs_buf *out);
void ctype__fmt_time(int64_t nanos, cs_buf *out);
void ctype__fmt_duration(int32_t months, int32_t days, int64_t nanos, cs_buf *out);
/* Serialized duration helpers (vint encoding, as Cassandra's DurationSerializer). */
void ctype__put_duration(cs_buf *out, int32_t months, int32_t days, int64_t nanos);
int ctype__get_duration(const uint8_t *v, size_t n, int64_t *months, int64_t *days, int64_t *nanos);
void ctype__put_vint(cs_buf *out, int64_t v);
int ctype__get_vint(const uint8_t *v, size_t n, size_t *pos, int64_t *out);

/* ------------------------------------------------ big numbers (decimal.c) */
/* Decimal digits text (optional sign) to a minimal two's-complement varint. */
int ctype__varint_from_text(const char *s, size_t n, cs_buf *out);
/* Varint bytes to decimal text. */
void ctype__varint_to_text(const uint8_t *v, size_t n, cs_buf *out);
/* Decimal text (BigDecimal syntax: [-+]digits[.digits][e[-+]digits]) to
 * serialized decimal (i32 scale + varint unscaled). */
int ctype__decimal_from_text(const char *s, size_t n, cs_buf *out);
/* Serialized decimal to BigDecimal.toString() text. */
void ctype__decimal_to_text(const uint8_t *v, size_t n, cs_buf *out);
/* Normal form of a number: sign (-1/0/1), decimal digits of |value| without
 * leading/trailing zeros (into digits, as '0'..'9'), and exponent E such that
 * value = 0.d1d2... x 10^E.  For varints pass scale 0. */
int ctype__num_normal(const uint8_t *unscaled, size_t n, int64_t scale, int *sign,
                      cs_buf *digits, int64_t *exp10);
/* Numeric order of unscaled x 10^-scale numbers (varint: scale 0); no heap
 * use for numbers up to 512 bits. */
int ctype__num_cmp(const uint8_t *a, size_t an, int64_t sa, const uint8_t *b, size_t bn, int64_t sb);
/* Minimal length of a two's complement integer (strip redundant sign bytes). */
size_t ctype__varint_minimal(const uint8_t *v, size_t n, size_t *skip);

/* ------------------------------------------------ bignum.c */
#define CTYPE_BN_INL 16   /* limbs held inline */
typedef struct ctype__bn {
    bool neg;
    uint32_t *d;      /* little-endian limbs: inl, or cs_malloc'd when larger */
    size_t n, cap;
    int err;          /* sticky: 0 or CS_ENOMEM */
    uint32_t inl[CTYPE_BN_INL];
} ctype__bn;
void ctype__bn_init(ctype__bn *a);
void ctype__bn_free(ctype__bn *a);
void ctype__bn_move(ctype__bn *dst, ctype__bn *src);        /* dst must be free */
void ctype__bn_reserve(ctype__bn *a, size_t n);
void ctype__bn_trim(ctype__bn *a);
void ctype__bn_mul_small(ctype__bn *a, uint32_t m, uint32_t add);  /* a = a*m + add */
uint32_t ctype__bn_div_small(ctype__bn *a, uint32_t d);           /* a /= d, remainder */
void ctype__bn_from_twos(ctype__bn *a, const uint8_t *v, size_t n);
void ctype__bn_to_twos(const ctype__bn *a, cs_buf *out);
int ctype__bn_cmp_mag(const ctype__bn *a, const ctype__bn *b);
void ctype__bn_add(ctype__bn *r, const ctype__bn *a, const ctype__bn *b);   /* r fresh */
void ctype__bn_mul(ctype__bn *r, const ctype__bn *a, const ctype__bn *b);   /* r fresh */
/* BigInteger.divideAndRemainder (b not zero): q truncated toward zero, r
 * with the sign of a; q and r fresh. */
void ctype__bn_divmod(ctype__bn *q, ctype__bn *r, const ctype__bn *a, const ctype__bn *b);
long ctype__bn_digits_into(const ctype__bn *a, char *out);   /* out: n*10+10 bytes */
void ctype__bn_to_digits(const ctype__bn *a, cs_buf *out);
void ctype__bn_from_digits(ctype__bn *a, const char *s, size_t n);

/* ------------------------------------------------ misc */
void ctype__quote_ident(const char *name, cs_buf *out);
int ctype__utf8_valid(const uint8_t *p, size_t n);
/* Read an [int len][bytes] element of a collection/tuple; -1 len = null.
 * Returns 0 or -1 on malformed input. */
int ctype__rd_elem(const uint8_t *v, size_t n, size_t *pos, const uint8_t **p, int32_t *len);
void ctype__put_hex(cs_buf *out, const uint8_t *p, size_t n);
void ctype__puts(cs_buf *out, const char *s);
void ctype__printf(cs_buf *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
