/*
 * frame.h: the native protocol frame codec, both directions, so the server,
 * cassette-bench and cassette-tool share it.  Owner: server/frame.c.
 *
 * v3/v4 frame (spec v4 §2): 9-byte header [version|dir][flags][stream i16]
 * [opcode][length u32] then the body, which is lz4-compressed (4-byte
 * big-endian uncompressed length, then the lz4 block) when the COMPRESSION
 * flag is set.  Body sub-parts in order: tracing id (response, 0x02), custom
 * payload (0x04), warnings (response, 0x08), then the message.
 *
 * v5 (frame_seg.c): after the STARTUP exchange the same envelopes travel
 * inside CRC-protected segments, optionally lz4-compressed per segment.
 */
#ifndef CS_SERVER_FRAME_H
#define CS_SERVER_FRAME_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include "common/buf.h"

enum {
    OP_ERROR = 0x00, OP_STARTUP = 0x01, OP_READY = 0x02, OP_AUTHENTICATE = 0x03,
    OP_OPTIONS = 0x05, OP_SUPPORTED = 0x06, OP_QUERY = 0x07, OP_RESULT = 0x08,
    OP_PREPARE = 0x09, OP_EXECUTE = 0x0A, OP_REGISTER = 0x0B, OP_EVENT = 0x0C,
    OP_BATCH = 0x0D, OP_AUTH_CHALLENGE = 0x0E, OP_AUTH_RESPONSE = 0x0F, OP_AUTH_SUCCESS = 0x10,
};
enum {
    FRAME_FLAG_COMPRESSION = 0x01, FRAME_FLAG_TRACING = 0x02, FRAME_FLAG_CUSTOM_PAYLOAD = 0x04,
    FRAME_FLAG_WARNING = 0x08, FRAME_FLAG_USE_BETA = 0x10,
};
enum { RESULT_VOID = 1, RESULT_ROWS = 2, RESULT_SET_KEYSPACE = 3, RESULT_PREPARED = 4, RESULT_SCHEMA_CHANGE = 5 };
#define FRAME_HEADER_LEN 9
#define FRAME_DIR_RESPONSE 0x80

typedef struct frame_header {
    uint8_t version;         /* without the direction bit */
    bool response;
    uint8_t flags;
    int16_t stream;
    uint8_t opcode;
    uint32_t length;         /* body length as on the wire */
} frame_header;

/* Parse a header from 9 bytes.  Returns 0, or CS_ECORRUPT for a negative
 * [int] length.  Version, direction and max frame size checks are the
 * caller's (server/conn.c answers them with a protocol error). */
int frame_header_parse(const uint8_t *p, frame_header *h);

/* Decoded frame body: the message bytes (decompressed if needed) plus the
 * optional prefix parts. Pointers borrow from `scratch` or the input. */
typedef struct frame_body {
    const uint8_t *msg; size_t msg_len;
    const uint8_t *tracing_id;           /* 16 bytes, responses with TRACING */
    const char **warnings; int n_warnings;   /* responses with WARNING (cs_malloc'd array, caller frees with frame_body_destroy) */
    cs_buf scratch;                      /* decompression buffer */
    size_t ulen;                         /* a compressed body's announced uncompressed length (set with CS_ETOOBIG too) */
} frame_body;
void frame_body_destroy(frame_body *b);
/* Body compression negotiated in STARTUP (v3/v4): lz4 (Cassandra's
 * LZ4Compressor: a 4-byte big-endian uncompressed length, then one raw lz4
 * block) or snappy (SnappyCompressor: one raw snappy buffer, which holds
 * its own length). */
enum { FRAME_COMP_NONE = 0, FRAME_COMP_LZ4 = 1, FRAME_COMP_SNAPPY = 2 };
/* Decode a body (after the header).  lz4 when the COMPRESSION flag is set.
 * Custom payload is skipped (parsed and validated).  0 or CS_ECORRUPT/CS_ETOOBIG. */
int frame_body_decode(const frame_header *h, const uint8_t *body, size_t len, size_t max_len,
                      frame_body *out);
/* The same with the connection's algorithm (FRAME_COMP_*). */
int frame_body_decode_with(const frame_header *h, const uint8_t *body, size_t len, size_t max_len, int comp,
                           frame_body *out);

/* Encoding: frame_begin writes a header placeholder and the optional parts;
 * the caller appends the message body; frame_end patches the length and
 * compresses (FRAME_COMP_*: lz4, snappy) if `compress`.  Sticky errors in out->err. */
typedef struct frame_writer {
    cs_buf *out;
    size_t start;            /* offset of the header in out */
    uint8_t flags;
    int compress;            /* FRAME_COMP_* (true: lz4) */
} frame_writer;
void frame_begin(frame_writer *w, cs_buf *out, uint8_t version, bool response, int16_t stream,
                 uint8_t opcode, uint8_t flags, int compress,
                 const uint8_t *tracing_id, const char *const *warnings, int n_warnings);
void frame_end(frame_writer *w);

/* ------------------------------------------------ protocol v5 segments (frame_seg.c) */

/* The largest segment payload (spec v5 §2.1), compressed or not. */
#define FRAME_SEG_MAX_PAYLOAD (128 * 1024 - 1)

/* One decoded segment.  payload borrows the input or `scratch`. */
typedef struct frame_seg {
    bool self_contained;
    size_t size;                     /* bytes on the wire: header, payload, CRC32 */
    const uint8_t *payload;          /* decompressed */
    size_t payload_len;
    bool bad_header;                 /* CS_ECORRUPT: the header's CRC24 failed (else the payload's CRC32) */
    bool bad_lz4;                    /* CS_ECORRUPT: CRCs fine, the lz4 data did not decode to its length */
    int32_t read_crc, computed_crc;  /* the CRC that failed, as Cassandra prints them (Java int) */
} frame_seg;

/* Decode the segment at p[0..avail), lz4 form when `lz4`.  Returns 1 (seg
 * filled, seg->size bytes used), 0 if more bytes are needed, CS_ECORRUPT
 * (seg says what failed) or CS_ENOMEM. */
int frame_seg_decode(const uint8_t *p, size_t avail, bool lz4, cs_buf *scratch, frame_seg *seg);
/* Append one segment carrying payload[0..len) (len <= FRAME_SEG_MAX_PAYLOAD,
 * else out->err = CS_ETOOBIG); lz4: compressed when that is smaller. */
void frame_seg_put(cs_buf *out, const uint8_t *payload, size_t len, bool self_contained, bool lz4);
/* Append env[0..len), whole envelopes, as segments: packed into
 * self-contained segments, an envelope over one payload cut into
 * non-self-contained ones.  Sticky errors in out->err. */
void frame_seg_wrap(cs_buf *out, const uint8_t *env, size_t len, bool lz4);
/* The header CRC24 of the low n bytes of v (tests, fuzz corpora). */
uint32_t frame_seg_crc24(uint64_t v, int n);

/* Helpers for [string map], [string multimap], [string list] (spec v4 §3). */
void frame_put_string_list(cs_buf *b, const char *const *items, int n);
void frame_put_string_multimap(cs_buf *b, const char *const *keys, const char *const *const *vals,
                               const int *n_vals, int n);

#endif
