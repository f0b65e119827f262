/* buf.c: growable writer and bounds-checked reader (see buf.h). */
#include "common/buf.h"
#include "common/alloc.h"
#include "common/err.h"

void cs_buf_destroy(cs_buf *b) { cs_free(b->p); cs_buf_init(b); }

int cs_buf_reserve(cs_buf *b, size_t extra)
{
    if (b->err)
        return b->err;
    if (b->cap - b->len >= extra)
        return 0;
    size_t need = b->len + extra;
    if (need < b->len) {
        b->err = CS_ENOMEM;
        return b->err;
    }
    size_t nc = b->cap ? b->cap : 64;
    while (nc < need)
        nc = nc * 2 > nc ? nc * 2 : need;
    uint8_t *np = cs_realloc(b->p, nc);
    if (!np) {
        b->err = CS_ENOMEM;
        return b->err;
    }
    b->p = np;
    b->cap = nc;
    return 0;
}

uint8_t *cs__buf_extend_slow(cs_buf *b, size_t n)
{
    if (cs_buf_reserve(b, n))
        return NULL;
    uint8_t *r = b->p + b->len;
    b->len += n;
    return r;
}

uint8_t *cs_buf_steal(cs_buf *b, size_t *len)
{
    uint8_t *p = b->p;
    if (len)
        *len = b->len;
    cs_buf_init(b);
    return p;
}

void cs__buf_put_uvarint_slow(cs_buf *b, uint64_t v)
{
    uint8_t tmp[10];
    int n = 0;
    while (v >= 0x80) {
        tmp[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    tmp[n++] = (uint8_t)v;
    cs_buf_put(b, tmp, (size_t)n);
}

void cs_buf_patch_u32(cs_buf *b, size_t off, uint32_t v)
{
    if (!b->err && off + 4 <= b->len)
        cs_st32(b->p + off, v);
}

void cs_buf_put_stringn(cs_buf *b, const char *s, size_t n)
{
    if (n > 0xFFFF) {
        b->err = b->err ? b->err : CS_EINVAL;
        return;
    }
    cs_buf_put_u16(b, (uint16_t)n);
    cs_buf_put(b, s, n);
}
void cs_buf_put_string(cs_buf *b, const char *s) { cs_buf_put_stringn(b, s, strlen(s)); }

void cs_buf_put_long_string(cs_buf *b, const char *s, size_t n)
{
    cs_buf_put_u32(b, (uint32_t)n);
    cs_buf_put(b, s, n);
}

void cs_buf_put_bytes(cs_buf *b, const void *p, int32_t n)
{
    if (n < 0) {
        cs_buf_put_u32(b, 0xFFFFFFFFu);
        return;
    }
    cs_buf_put_u32(b, (uint32_t)n);
    cs_buf_put(b, p, (size_t)n);
}

/* ---- reader ---- */

/* cs_rd_take past the end (or after an error). */
const uint8_t *cs_rd__take_short(cs_rd *r)
{
    r->err = CS_ECORRUPT;
    return NULL;
}

uint16_t cs_rd_u16(cs_rd *r) { const uint8_t *p = cs_rd_take(r, 2); return p ? cs_be16(p) : 0; }
uint32_t cs_rd_u32(cs_rd *r) { const uint8_t *p = cs_rd_take(r, 4); return p ? cs_be32(p) : 0; }
uint64_t cs_rd_u64(cs_rd *r) { const uint8_t *p = cs_rd_take(r, 8); return p ? cs_be64(p) : 0; }

/* cs_rd_uvarint when the next byte is not a whole varint (or there is
 * none, or err is set). */
uint64_t cs_rd__uvarint_long(cs_rd *r)
{
    /* Fast path (the same result): ten bytes at hand. */
    if (!r->err && r->pos < r->len) {
        const uint8_t *p = r->p + r->pos;
        if (!(p[0] & 0x80)) {
            r->pos++;
            return p[0];
        }
        if (r->len - r->pos >= 10) {
            uint64_t v = 0;
            for (int i = 0; i < 10; i++) {
                if (i == 9 && (p[i] & 0x7E)) {
                    r->pos += 10;
                    r->err = CS_ECORRUPT;
                    return 0;
                }
                v |= (uint64_t)(p[i] & 0x7F) << (7 * i);
                if (!(p[i] & 0x80)) {
                    r->pos += (size_t)i + 1;
                    return v;
                }
            }
            r->pos += 10;
            r->err = CS_ECORRUPT;
            return 0;
        }
    }
    uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        const uint8_t *p = cs_rd_take(r, 1);
        if (!p)
            return 0;
        if (shift == 63 && (*p & 0x7E)) {
            r->err = CS_ECORRUPT;
            return 0;
        }
        v |= (uint64_t)(*p & 0x7F) << shift;
        if (!(*p & 0x80))
            return v;
    }
    r->err = CS_ECORRUPT;
    return 0;
}


const char *cs_rd_string(cs_rd *r, size_t *n)
{
    size_t l = cs_rd_u16(r);
    const uint8_t *p = cs_rd_take(r, l);
    *n = p ? l : 0;
    return (const char *)p;
}

const char *cs_rd_long_string(cs_rd *r, size_t *n)
{
    uint32_t l = cs_rd_u32(r);
    if (l > 0x7FFFFFFFu) {
        r->err = CS_ECORRUPT;
        *n = 0;
        return NULL;
    }
    const uint8_t *p = cs_rd_take(r, l);
    *n = p ? l : 0;
    return (const char *)p;
}

int32_t cs_rd_bytes(cs_rd *r, const uint8_t **p)
{
    int32_t l = (int32_t)cs_rd_u32(r);
    *p = NULL;
    if (r->err)
        return -1;
    if (l < 0)
        return l < -2 ? (r->err = CS_ECORRUPT, -1) : l;
    *p = cs_rd_take(r, (size_t)l);
    return *p ? l : -1;
}
