/*
 * buf.h: growable byte buffers (writer) and bounds-checked readers.
 *
 * cs_buf is a writer with a sticky error: every put_* call is a no-op after a
 * failure and buf.err says why, so encoders check once at the end.
 * cs_rd is a reader over borrowed bytes, also with a sticky error: reading
 * past the end sets rd.err = CS_ECORRUPT (or CS_EINVAL) and returns zeroes.
 * Both are big-endian for fixed-width integers (network order, as the native
 * protocol and our on-disk formats use).  Varints are unsigned LEB128
 * (cs_buf_put_uvarint) and zigzag for signed (cs_buf_put_svarint).
 */
#ifndef CS_BUF_H
#define CS_BUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct cs_buf {
    uint8_t *p;     /* owned; cs_malloc'd */
    size_t len;     /* bytes used */
    size_t cap;     /* bytes allocated */
    int err;        /* sticky: 0 or CS_ENOMEM */
} cs_buf;

static inline void cs_buf_init(cs_buf *b) { b->p = NULL; b->len = b->cap = 0; b->err = 0; }
void cs_buf_destroy(cs_buf *b);
static inline void cs_buf_reset(cs_buf *b) { b->len = 0; b->err = 0; }   /* len = 0, keeps memory */
int cs_buf_reserve(cs_buf *b, size_t extra);  /* ensure cap >= len + extra */
/* Take ownership of the bytes (caller frees with cs_free); buffer becomes empty. */
uint8_t *cs_buf_steal(cs_buf *b, size_t *len);

/* The writers below are inline (they are most of the cost of encoding a
 * mutation or a result): room at hand is used directly, growth and the
 * sticky error go through the out-of-line halves (buf.c). */
uint8_t *cs__buf_extend_slow(cs_buf *b, size_t n);
void cs__buf_put_uvarint_slow(cs_buf *b, uint64_t v);

/* Grow len by n, return ptr to the new bytes or NULL (error, sticky). */
static inline uint8_t *cs_buf_extend(cs_buf *b, size_t n)
{
    if (!b->err && b->cap - b->len >= n) {
        uint8_t *r = b->p + b->len;
        b->len += n;
        return r;
    }
    return cs__buf_extend_slow(b, n);
}

static inline void cs_buf_put(cs_buf *b, const void *p, size_t n)
{
    uint8_t *d = cs_buf_extend(b, n);
    if (d && n)
        memcpy(d, p, n);
}

static inline void cs_buf_put_u8(cs_buf *b, uint8_t v)
{
    uint8_t *d = cs_buf_extend(b, 1);
    if (d)
        *d = v;
}

static inline void cs_buf_put_u16(cs_buf *b, uint16_t v)
{
    uint8_t *d = cs_buf_extend(b, 2);
    if (d) {
        d[0] = (uint8_t)(v >> 8);
        d[1] = (uint8_t)v;
    }
}

static inline void cs_buf_put_u32(cs_buf *b, uint32_t v)
{
    uint8_t *d = cs_buf_extend(b, 4);
    if (d) {
        d[0] = (uint8_t)(v >> 24);
        d[1] = (uint8_t)(v >> 16);
        d[2] = (uint8_t)(v >> 8);
        d[3] = (uint8_t)v;
    }
}

static inline void cs_buf_put_u64(cs_buf *b, uint64_t v)
{
    uint8_t *d = cs_buf_extend(b, 8);
    if (d)
        for (int i = 0; i < 8; i++)
            d[i] = (uint8_t)(v >> (56 - 8 * i));
}

static inline void cs_buf_put_uvarint(cs_buf *b, uint64_t v)
{
    if (!b->err && b->cap - b->len >= 10) {   /* room for the longest (10 bytes) */
        uint8_t *d = b->p + b->len, *start = d;
        while (v >= 0x80) {
            *d++ = (uint8_t)(v | 0x80);
            v >>= 7;
        }
        *d++ = (uint8_t)v;
        b->len += (size_t)(d - start);
        return;
    }
    cs__buf_put_uvarint_slow(b, v);
}

static inline void cs_buf_put_svarint(cs_buf *b, int64_t v)
{
    cs_buf_put_uvarint(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}
/* Overwrite 4 bytes at an earlier offset (for length prefixes). */
void cs_buf_patch_u32(cs_buf *b, size_t off, uint32_t v);
/* Native protocol helpers: [string] = u16 len + bytes, [long string] = i32 len,
 * [bytes] = i32 len (-1 = null) + bytes. */
void cs_buf_put_string(cs_buf *b, const char *s);
void cs_buf_put_stringn(cs_buf *b, const char *s, size_t n);
void cs_buf_put_long_string(cs_buf *b, const char *s, size_t n);
void cs_buf_put_bytes(cs_buf *b, const void *p, int32_t n); /* n < 0 writes null (-1) */

typedef struct cs_rd {
    const uint8_t *p;  /* borrowed */
    size_t len;
    size_t pos;
    int err;           /* sticky: 0 or CS_ECORRUPT */
} cs_rd;

static inline void cs_rd_init(cs_rd *r, const void *p, size_t len)
{ r->p = (const uint8_t *)p; r->len = len; r->pos = 0; r->err = 0; }
static inline size_t cs_rd_left(const cs_rd *r) { return r->err ? 0 : r->len - r->pos; }

/* The readers below: a read past the end sets err (sticky) and returns 0
 * or NULL.  The one-byte cases are inline (a decoded sstable row is mostly
 * one-byte varints and flags); the rest is in buf.c. */
uint64_t cs_rd__uvarint_long(cs_rd *r);
const uint8_t *cs_rd__take_short(cs_rd *r);

/* Returns a pointer into the reader's bytes (borrowed) or NULL on error. */
static inline const uint8_t *cs_rd_take(cs_rd *r, size_t n)
{
    if (r->err || n > r->len - r->pos) return cs_rd__take_short(r);
    const uint8_t *p = r->p + r->pos;
    r->pos += n;
    return p;
}
static inline uint8_t cs_rd_u8(cs_rd *r) { const uint8_t *p = cs_rd_take(r, 1); return p ? p[0] : 0; }
uint16_t cs_rd_u16(cs_rd *r);
uint32_t cs_rd_u32(cs_rd *r);
uint64_t cs_rd_u64(cs_rd *r);
static inline uint64_t cs_rd_uvarint(cs_rd *r)
{
    if (!r->err && r->pos < r->len && !(r->p[r->pos] & 0x80)) return r->p[r->pos++];
    return cs_rd__uvarint_long(r);
}
static inline int64_t cs_rd_svarint(cs_rd *r)
{
    uint64_t u = cs_rd_uvarint(r);
    return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}
/* Native [string]/[long string]: pointer+len into the input. */
const char *cs_rd_string(cs_rd *r, size_t *n);
const char *cs_rd_long_string(cs_rd *r, size_t *n);
/* Native [bytes]: returns length (-1 null, -2 unset in v4 values); *p set when >= 0. */
int32_t cs_rd_bytes(cs_rd *r, const uint8_t **p);

/* Big-endian load/store without a buffer. */
static inline uint16_t cs_be16(const uint8_t *p) { return (uint16_t)((p[0] << 8) | p[1]); }
static inline uint32_t cs_be32(const uint8_t *p)
{ return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3]; }
static inline uint64_t cs_be64(const uint8_t *p) { return ((uint64_t)cs_be32(p) << 32) | cs_be32(p + 4); }
static inline void cs_st16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static inline void cs_st32(uint8_t *p, uint32_t v)
{ p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v; }
static inline void cs_st64(uint8_t *p, uint64_t v) { cs_st32(p, (uint32_t)(v >> 32)); cs_st32(p + 4, (uint32_t)v); }
/* A double as CQL's double: its IEEE 754 bits, big-endian. */
static inline void cs_st_double(uint8_t *p, double v) { uint64_t u; memcpy(&u, &v, 8); cs_st64(p, u); }

#endif
