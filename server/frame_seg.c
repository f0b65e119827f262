/*
 * frame_seg.c: protocol v5 segment framing (spec v5 §2), both directions.
 * Free of server state, like frame.c.
 *
 * After the STARTUP exchange of a v5 connection, every byte on the wire in
 * both directions is a segment whose payload carries envelopes (the 9-byte
 * header frames of v4).  All integers are little-endian:
 *
 *   uncompressed:  [3: len(17) | self_contained << 17]  [3: CRC24 of those 3]
 *                  payload[len]  [4: CRC32 of the payload]
 *   lz4:           [5: clen(17) | ulen(17) << 17 | self_contained << 34]
 *                  [3: CRC24 of those 5]  payload[clen]  [4: CRC32 of it]
 *
 * ulen 0 in the lz4 form means the payload was stored uncompressed (it did
 * not get smaller).  The CRC24 is Cassandra's (init 0x875060, polynomial
 * 0x1974F0B, over the header's bytes as a little-endian integer, low byte
 * first); the CRC32 is zlib's, continued from the CRC of FA 2D 55 CA.
 *
 * A self-contained segment holds whole envelopes, one or more; an envelope
 * longer than a payload (128 KiB - 1) is cut into segments that are not
 * self-contained, in order.  Cassandra's FrameEncoderCrc / FrameEncoderLZ4
 * write the same bytes for the same payload.
 */
#include "server/frame.h"

#include <lz4.h>
#include <string.h>

#include "common/compress.h"
#include "common/err.h"
#include "common/hash.h"

#define CRC24_INIT 0x875060u
#define CRC24_POLY 0x1974F0Bu

/* CRC24 of the low `n` bytes of v, low byte first. */
static uint32_t crc24(uint64_t v, int n)
{
    uint32_t crc = CRC24_INIT;
    for (int i = 0; i < n; i++) {
        crc ^= (uint32_t)(v & 0xFF) << 16;
        v >>= 8;
        for (int k = 0; k < 8; k++) {
            crc <<= 1;
            if (crc & 0x1000000u)
                crc ^= CRC24_POLY;
        }
    }
    return crc & 0xFFFFFFu;
}

static uint32_t payload_crc(const uint8_t *p, size_t n)
{
    static const uint8_t seed[4] = { 0xFA, 0x2D, 0x55, 0xCA };
    return cs_crc32(cs_crc32(0, seed, 4), p, n);
}

static uint64_t ld_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static void st_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++, v >>= 8)
        p[i] = (uint8_t)v;
}

uint32_t frame_seg_crc24(uint64_t v, int n)
{
    return crc24(v, n);
}

/* ------------------------------------------------------------ decoding */

int frame_seg_decode(const uint8_t *p, size_t avail, bool lz4, cs_buf *scratch, frame_seg *seg)
{
    memset(seg, 0, sizeof *seg);
    const int hn = lz4 ? 5 : 3;
    if (avail < (size_t)hn + 3)
        return 0;
    uint64_t h = ld_le(p, hn);
    uint32_t read = (uint32_t)ld_le(p + hn, 3), computed = crc24(h, hn);
    if (read != computed) {
        seg->bad_header = true;
        seg->read_crc = (int32_t)read;
        seg->computed_crc = (int32_t)computed;
        return CS_ECORRUPT;
    }
    size_t len = (size_t)(h & FRAME_SEG_MAX_PAYLOAD), ulen = 0;
    if (lz4) {
        ulen = (size_t)((h >> 17) & FRAME_SEG_MAX_PAYLOAD);
        seg->self_contained = (h >> 34) & 1;
    } else {
        seg->self_contained = (h >> 17) & 1;
    }
    size_t total = (size_t)hn + 3 + len + 4;
    if (avail < total)
        return 0;
    seg->size = total;
    const uint8_t *pl = p + hn + 3;
    read = (uint32_t)ld_le(pl + len, 4);
    computed = payload_crc(pl, len);
    if (read != computed) {
        seg->read_crc = (int32_t)read;
        seg->computed_crc = (int32_t)computed;
        return CS_ECORRUPT;
    }
    if (!lz4 || ulen == 0) {
        seg->payload = pl;
        seg->payload_len = len;
        return 1;
    }
    cs_buf_reset(scratch);
    if (cs_buf_reserve(scratch, ulen) != 0)
        return CS_ENOMEM;
    int got = LZ4_decompress_safe((const char *)pl, (char *)scratch->p, (int)len, (int)ulen);
    if (got < 0 || (size_t)got != ulen) {
        seg->bad_lz4 = true;
        return CS_ECORRUPT;
    }
    scratch->len = ulen;
    seg->payload = scratch->p;
    seg->payload_len = ulen;
    return 1;
}

/* ------------------------------------------------------------ encoding */

void frame_seg_put(cs_buf *out, const uint8_t *payload, size_t len, bool self_contained, bool lz4)
{
    if (out->err)
        return;
    if (len > FRAME_SEG_MAX_PAYLOAD) {
        out->err = CS_ETOOBIG;
        return;
    }
    if (!lz4) {
        uint8_t *d = cs_buf_extend(out, 6 + len + 4);
        if (!d)
            return;
        uint64_t h = (uint64_t)len | (uint64_t)self_contained << 17;
        st_le(d, h, 3);
        st_le(d + 3, crc24(h, 3), 3);
        memcpy(d + 6, payload, len);
        st_le(d + 6 + len, payload_crc(payload, len), 4);
        return;
    }
    int bound = LZ4_compressBound((int)len);
    if (bound <= 0 || cs_buf_reserve(out, 8 + (size_t)(bound > (int)len ? bound : (int)len) + 4) != 0) {
        if (!out->err)
            out->err = CS_ENOMEM;
        return;
    }
    uint8_t *d = out->p + out->len;
    size_t clen = 0, ulen = len;
    if (len > 0) {
        int n = cs_lz4_compress(payload, d + 8, (int)len, bound);
        clen = n > 0 ? (size_t)n : len;
    }
    if (len == 0 || clen >= len) {    /* stored as it is: ulen 0 (spec v5 §2.2) */
        memcpy(d + 8, payload, len);
        clen = len;
        ulen = 0;
    }
    uint64_t h = (uint64_t)clen | (uint64_t)ulen << 17 | (uint64_t)self_contained << 34;
    st_le(d, h, 5);
    st_le(d + 5, crc24(h, 5), 3);
    st_le(d + 8 + clen, payload_crc(d + 8, clen), 4);
    out->len += 8 + clen + 4;
}

/*
 * Envelopes are packed greedily: each self-contained segment takes as many
 * whole envelopes as fit in one payload; an envelope too long for a payload
 * flushes what is packed and goes out alone, cut into non-self-contained
 * segments.  The envelopes are our own output, so their lengths are
 * trusted; a truncated last one (never produced) is sent as it is.
 */
void frame_seg_wrap(cs_buf *out, const uint8_t *env, size_t len, bool lz4)
{
    size_t start = 0, at = 0;
    while (at < len && !out->err) {
        size_t n = FRAME_HEADER_LEN;
        if (len - at >= FRAME_HEADER_LEN)
            n += cs_be32(env + at + 5);
        if (n > len - at)
            n = len - at;
        if (n > FRAME_SEG_MAX_PAYLOAD) {
            if (at > start)
                frame_seg_put(out, env + start, at - start, true, lz4);
            for (size_t k = 0; k < n; k += FRAME_SEG_MAX_PAYLOAD) {
                size_t part = n - k < FRAME_SEG_MAX_PAYLOAD ? n - k : FRAME_SEG_MAX_PAYLOAD;
                frame_seg_put(out, env + at + k, part, false, lz4);
            }
            at += n;
            start = at;
            continue;
        }
        if (at + n - start > FRAME_SEG_MAX_PAYLOAD) {
            frame_seg_put(out, env + start, at - start, true, lz4);
            start = at;
        }
        at += n;
    }
    if (at > start)
        frame_seg_put(out, env + start, at - start, true, lz4);
}
