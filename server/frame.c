/*
 * frame.c: the native protocol frame codec (spec v4 §2, v3 §2), both
 * directions.  Free of server state: cassette-bench and cassette-tool link it
 * to speak to any CQL server.
 *
 * Layout of a v3/v4 frame:
 *
 *   0         1       2..3         4        5..8
 *   [ver|dir] [flags] [stream i16] [opcode] [length u32]  body[length]
 *
 * When FRAME_FLAG_COMPRESSION is set the body is, as Cassandra's
 * LZ4Compressor writes it: a 4-byte big-endian uncompressed length followed
 * by one raw lz4 block.  Inside the (decompressed) body come, in this order:
 * the tracing id (responses only, 16 bytes, spec v4 §2.2), the custom payload
 * ([bytes map], 0x04), the warnings ([string list], responses only, 0x08) and
 * then the message itself.
 */
#include "server/frame.h"

#include <lz4.h>
#include "server/snappy.h"
#include <string.h>

#include "common/alloc.h"
#include "common/compress.h"
#include "common/err.h"

/* ------------------------------------------------------------ header */

/*
 * Parse the 9-byte header at p.  The length is an [int] on the wire, so a
 * value with the top bit set is corrupt (spec v4 §2.5); every other check
 * (version, direction, max frame size) belongs to the caller.
 */
int frame_header_parse(const uint8_t *p, frame_header *h)
{
    h->version = p[0] & 0x7f;
    h->response = (p[0] & FRAME_DIR_RESPONSE) != 0;
    h->flags = p[1];
    h->stream = (int16_t)cs_be16(p + 2);
    h->opcode = p[4];
    h->length = cs_be32(p + 5);
    if (h->length > 0x7fffffffu)
        return CS_ECORRUPT;
    return 0;
}

/* ------------------------------------------------------------ decoding */

void frame_body_destroy(frame_body *b)
{
    cs_free((void *)b->warnings);
    b->warnings = NULL;
    b->n_warnings = 0;
    cs_buf_destroy(&b->scratch);
}

/*
 * Skip a [bytes map] (custom payload): [short] n, then n pairs of [string]
 * key and [bytes] value.  Returns 0 or CS_ECORRUPT when anything overruns.
 */
static int skip_bytes_map(cs_rd *r)
{
    uint16_t n = cs_rd_u16(r);
    for (uint16_t i = 0; i < n && !r->err; i++) {
        size_t kl;
        const uint8_t *v;
        cs_rd_string(r, &kl);
        if (cs_rd_bytes(r, &v) < -1)
            return CS_ECORRUPT;
    }
    return r->err ? CS_ECORRUPT : 0;
}

/*
 * Read a [string list] of warnings into one cs_malloc'd block: the pointer
 * array followed by NUL-terminated copies, so one cs_free releases it.
 */
static int read_warnings(cs_rd *r, frame_body *out)
{
    uint16_t n = cs_rd_u16(r);
    size_t start = r->pos, total = 0;
    for (uint16_t i = 0; i < n && !r->err; i++) {
        size_t len;
        cs_rd_string(r, &len);
        total += len + 1;
    }
    if (r->err)
        return CS_ECORRUPT;
    if (n == 0)
        return 0;
    char **arr = cs_malloc(n * sizeof(char *) + total);
    if (!arr)
        return CS_ENOMEM;
    char *dst = (char *)(arr + n);
    cs_rd again;
    cs_rd_init(&again, r->p, r->len);
    again.pos = start;
    for (uint16_t i = 0; i < n; i++) {
        size_t len;
        const char *s = cs_rd_string(&again, &len);
        memcpy(dst, s, len);
        dst[len] = '\0';
        arr[i] = dst;
        dst += len + 1;
    }
    out->warnings = (const char **)arr;
    out->n_warnings = n;
    return 0;
}

/*
 * Decode a frame body.  `max_len` bounds the uncompressed length announced by
 * a compressed body before anything is allocated.  On success out->msg points
 * at the message bytes (inside `body` or out->scratch).  On error out holds
 * nothing that needs freeing beyond frame_body_destroy().
 */
int frame_body_decode(const frame_header *h, const uint8_t *body, size_t len, size_t max_len,
                      frame_body *out)
{
    return frame_body_decode_with(h, body, len, max_len, FRAME_COMP_LZ4, out);
}

int frame_body_decode_with(const frame_header *h, const uint8_t *body, size_t len, size_t max_len, int comp,
                           frame_body *out)
{
    memset(out, 0, sizeof *out);
    cs_buf_init(&out->scratch);
    const uint8_t *p = body;
    size_t n = len;
    if ((h->flags & FRAME_FLAG_COMPRESSION) && comp == FRAME_COMP_SNAPPY) {
        size_t ulen;
        if (!srv_snappy_available() || srv_snappy_uncompressed_length((const char *)body, len, &ulen) != 0)
            return CS_ECORRUPT;
        out->ulen = ulen;
        if (ulen > max_len)
            return CS_ETOOBIG;
        if (cs_buf_reserve(&out->scratch, ulen ? ulen : 1) != 0)
            return CS_ENOMEM;
        size_t got = ulen;
        if (srv_snappy_uncompress((const char *)body, len, (char *)out->scratch.p, &got) != 0 || got != ulen)
            return CS_ECORRUPT;
        out->scratch.len = ulen;
        p = out->scratch.p;
        n = ulen;
    } else if (h->flags & FRAME_FLAG_COMPRESSION) {
        if (len < 4)
            return CS_ECORRUPT;
        uint32_t ulen = cs_be32(body);
        out->ulen = ulen;
        if (ulen > max_len)
            return CS_ETOOBIG;
        if (ulen > 0) {
            if (cs_buf_reserve(&out->scratch, ulen) != 0)
                return CS_ENOMEM;
            int got = LZ4_decompress_safe((const char *)body + 4, (char *)out->scratch.p,
                                          (int)(len - 4), (int)ulen);
            if (got < 0 || (uint32_t)got != ulen)
                return CS_ECORRUPT;
            out->scratch.len = ulen;
        }
        p = out->scratch.p;
        n = ulen;
    }
    cs_rd r;
    cs_rd_init(&r, p, n);
    if (h->response && (h->flags & FRAME_FLAG_TRACING)) {
        out->tracing_id = cs_rd_take(&r, 16);
        if (!out->tracing_id)
            return CS_ECORRUPT;
    }
    if (h->flags & FRAME_FLAG_CUSTOM_PAYLOAD) {
        if (skip_bytes_map(&r) != 0)
            return CS_ECORRUPT;
    }
    if (h->response && (h->flags & FRAME_FLAG_WARNING)) {
        int rc = read_warnings(&r, out);
        if (rc != 0)
            return rc;
    }
    out->msg = p ? p + r.pos : p;
    out->msg_len = n - r.pos;
    return 0;
}

/* ------------------------------------------------------------ encoding */

/*
 * Start a frame in `out`: a header placeholder, then the tracing id and the
 * warnings when given (which set their flags).  The caller appends the
 * message body and calls frame_end().
 */
void frame_begin(frame_writer *w, cs_buf *out, uint8_t version, bool response, int16_t stream,
                 uint8_t opcode, uint8_t flags, int compress,
                 const uint8_t *tracing_id, const char *const *warnings, int n_warnings)
{
    w->out = out;
    w->start = out->len;
    w->compress = compress;
    if (tracing_id)
        flags |= FRAME_FLAG_TRACING;
    if (n_warnings > 0)
        flags |= FRAME_FLAG_WARNING;
    flags &= (uint8_t)~FRAME_FLAG_COMPRESSION;
    w->flags = flags;
    uint8_t hdr[FRAME_HEADER_LEN];
    hdr[0] = (uint8_t)(version | (response ? FRAME_DIR_RESPONSE : 0));
    hdr[1] = flags;
    cs_st16(hdr + 2, (uint16_t)stream);
    hdr[4] = opcode;
    cs_st32(hdr + 5, 0);
    cs_buf_put(out, hdr, sizeof hdr);
    if (tracing_id)
        cs_buf_put(out, tracing_id, 16);
    if (n_warnings > 0)
        frame_put_string_list(out, warnings, n_warnings);
}

/*
 * Finish the frame: compress the body in place when asked (and non-empty:
 * an empty body is sent uncompressed, without the flag, which every client
 * accepts), then patch the flags and the length.
 */
void frame_end(frame_writer *w)
{
    cs_buf *b = w->out;
    if (b->err)
        return;
    size_t body_off = w->start + FRAME_HEADER_LEN;
    size_t body_len = b->len - body_off;
    if (w->compress == FRAME_COMP_SNAPPY && body_len > 0) {
        size_t bound = srv_snappy_available() ? srv_snappy_max_compressed_length(body_len) : 0;
        if (bound == 0 || cs_buf_reserve(b, bound) != 0) {
            if (!b->err)
                b->err = CS_ETOOBIG;
            return;
        }
        /* Compress into the spare space after the body, then slide it down. */
        uint8_t *dst = b->p + b->len;
        size_t clen = bound;
        if (srv_snappy_compress((const char *)b->p + body_off, body_len, (char *)dst, &clen) != 0) {
            b->err = CS_ECORRUPT;
            return;
        }
        memmove(b->p + body_off, dst, clen);
        b->len = body_off + clen;
        body_len = clen;
        w->flags |= FRAME_FLAG_COMPRESSION;
    } else if (w->compress && body_len > 0) {
        int bound = LZ4_compressBound((int)body_len);
        if (bound <= 0 || cs_buf_reserve(b, (size_t)bound + 4) != 0) {
            if (!b->err)
                b->err = CS_ETOOBIG;
            return;
        }
        /* Compress into the spare space after the body, then slide it down. */
        uint8_t *dst = b->p + b->len;
        cs_st32(dst, (uint32_t)body_len);
        int clen = cs_lz4_compress(b->p + body_off, dst + 4, (int)body_len, bound);
        if (clen <= 0) {
            b->err = CS_ECORRUPT;
            return;
        }
        memmove(b->p + body_off, dst, (size_t)clen + 4);
        b->len = body_off + (size_t)clen + 4;
        body_len = (size_t)clen + 4;
        w->flags |= FRAME_FLAG_COMPRESSION;
    }
    b->p[w->start + 1] = w->flags;
    cs_st32(b->p + w->start + 5, (uint32_t)body_len);
}

/* ------------------------------------------------------------ helpers */

void frame_put_string_list(cs_buf *b, const char *const *items, int n)
{
    cs_buf_put_u16(b, (uint16_t)n);
    for (int i = 0; i < n; i++)
        cs_buf_put_string(b, items[i]);
}

void frame_put_string_multimap(cs_buf *b, const char *const *keys, const char *const *const *vals,
                               const int *n_vals, int n)
{
    cs_buf_put_u16(b, (uint16_t)n);
    for (int i = 0; i < n; i++) {
        cs_buf_put_string(b, keys[i]);
        frame_put_string_list(b, vals[i], n_vals[i]);
    }
}
