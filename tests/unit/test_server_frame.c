/*
 * test_server_frame.c: the frame codec (server/frame.h): header round trips,
 * optional body parts, lz4 in both directions, and malformed input.
 */
#include <criterion/criterion.h>
#include <lz4.h>
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "common/buf.h"
#include "common/err.h"
#include "common/hash.h"
#include "server/frame.h"

static size_t allocs_at_start;

static void setup(void) { allocs_at_start = cs_alloc_count(); }
static void teardown(void) { cr_assert_eq(cs_alloc_count(), allocs_at_start, "leak"); }

TestSuite(server_frame, .init = setup, .fini = teardown);

/* Build a frame with body `msg` and decode it back. */
static void roundtrip(uint8_t version, bool response, uint8_t opcode, bool compress,
                      const uint8_t *trace, const char *const *warn, int nwarn,
                      const char *msg)
{
    cs_buf b;
    cs_buf_init(&b);
    frame_writer w;
    frame_begin(&w, &b, version, response, 1234, opcode, 0, compress, trace, warn, nwarn);
    cs_buf_put(&b, msg, strlen(msg));
    frame_end(&w);
    cr_assert_eq(b.err, 0);
    frame_header h;
    cr_assert_eq(frame_header_parse(b.p, &h), 0);
    cr_assert_eq(h.version, version);
    cr_assert_eq(h.response, response);
    cr_assert_eq(h.stream, 1234);
    cr_assert_eq(h.opcode, opcode);
    cr_assert_eq(h.length, b.len - FRAME_HEADER_LEN);
    cr_assert_eq((h.flags & FRAME_FLAG_COMPRESSION) != 0, compress && b.len > FRAME_HEADER_LEN);
    frame_body fb;
    cr_assert_eq(frame_body_decode(&h, b.p + FRAME_HEADER_LEN, h.length, 1 << 20, &fb), 0);
    cr_assert_eq(fb.msg_len, strlen(msg));
    cr_assert(fb.msg_len == 0 || memcmp(fb.msg, msg, fb.msg_len) == 0);
    if (trace && response)
        cr_assert(fb.tracing_id && memcmp(fb.tracing_id, trace, 16) == 0);
    cr_assert_eq(fb.n_warnings, response ? nwarn : 0);
    for (int i = 0; i < fb.n_warnings; i++)
        cr_assert_str_eq(fb.warnings[i], warn[i]);
    frame_body_destroy(&fb);
    cs_buf_destroy(&b);
}

Test(server_frame, header_fields)
{
    uint8_t p[9] = { 0x84, 0x08, 0xff, 0xff, OP_EVENT, 0, 0, 1, 2 };
    frame_header h;
    cr_assert_eq(frame_header_parse(p, &h), 0);
    cr_assert_eq(h.version, 4);
    cr_assert(h.response);
    cr_assert_eq(h.flags, FRAME_FLAG_WARNING);
    cr_assert_eq(h.stream, -1);
    cr_assert_eq(h.opcode, OP_EVENT);
    cr_assert_eq(h.length, 258);
    p[5] = 0x80;    /* negative [int] length */
    cr_assert_eq(frame_header_parse(p, &h), CS_ECORRUPT);
}

Test(server_frame, roundtrip_plain_v3_v4)
{
    roundtrip(3, false, OP_QUERY, false, NULL, NULL, 0, "hello");
    roundtrip(4, true, OP_RESULT, false, NULL, NULL, 0, "");
    roundtrip(4, false, OP_OPTIONS, false, NULL, NULL, 0, "");
}

Test(server_frame, roundtrip_tracing_and_warnings)
{
    static const uint8_t trace[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
    static const char *const warn[] = { "Aggregation query used without partition key", "w2" };
    roundtrip(4, true, OP_RESULT, false, trace, warn, 2, "body");
    roundtrip(4, true, OP_RESULT, true, trace, warn, 2, "body");
    roundtrip(4, true, OP_RESULT, true, NULL, warn, 1, "");
}

Test(server_frame, roundtrip_lz4)
{
    char big[5000];
    for (size_t i = 0; i < sizeof big - 1; i++)
        big[i] = (char)('a' + i % 7);
    big[sizeof big - 1] = '\0';
    roundtrip(4, true, OP_RESULT, true, NULL, NULL, 0, big);
    roundtrip(4, false, OP_QUERY, true, NULL, NULL, 0, "x");
    roundtrip(3, false, OP_QUERY, true, NULL, NULL, 0, big);
}

/* The compressed layout is Cassandra's: 4-byte BE uncompressed length + raw lz4 block. */
Test(server_frame, lz4_wire_layout)
{
    const char *msg = "SELECT * FROM system.local WHERE key='local'";
    cs_buf b;
    cs_buf_init(&b);
    frame_writer w;
    frame_begin(&w, &b, 4, false, 0, OP_QUERY, 0, true, NULL, NULL, 0);
    cs_buf_put(&b, msg, strlen(msg));
    frame_end(&w);
    const uint8_t *body = b.p + FRAME_HEADER_LEN;
    cr_assert_eq(cs_be32(body), strlen(msg));
    char out[256];
    int n = LZ4_decompress_safe((const char *)body + 4, out, (int)(b.len - FRAME_HEADER_LEN - 4),
                                sizeof out);
    cr_assert_eq(n, (int)strlen(msg));
    cr_assert(memcmp(out, msg, (size_t)n) == 0);
    cs_buf_destroy(&b);
}

Test(server_frame, custom_payload_skipped)
{
    cs_buf b;
    cs_buf_init(&b);
    cs_buf_put_u16(&b, 2);
    cs_buf_put_string(&b, "k1");
    cs_buf_put_bytes(&b, "v", 1);
    cs_buf_put_string(&b, "k2");
    cs_buf_put_bytes(&b, NULL, -1);
    cs_buf_put(&b, "MSG", 3);
    frame_header h = { .version = 4, .flags = FRAME_FLAG_CUSTOM_PAYLOAD, .opcode = OP_QUERY,
                       .length = (uint32_t)b.len };
    frame_body fb;
    cr_assert_eq(frame_body_decode(&h, b.p, b.len, 1 << 20, &fb), 0);
    cr_assert_eq(fb.msg_len, 3);
    cr_assert(memcmp(fb.msg, "MSG", 3) == 0);
    frame_body_destroy(&fb);
    /* Truncated anywhere inside the payload map: an error, never a crash. */
    for (size_t cut = 0; cut < b.len - 3; cut++) {
        cr_assert_neq(frame_body_decode(&h, b.p, cut, 1 << 20, &fb), 0, "cut %zu", cut);
        frame_body_destroy(&fb);
    }
    cs_buf_destroy(&b);
}

Test(server_frame, malformed_compressed)
{
    frame_header h = { .version = 4, .flags = FRAME_FLAG_COMPRESSION, .opcode = OP_QUERY };
    frame_body fb;
    uint8_t tiny[3] = { 0, 0, 0 };
    cr_assert_eq(frame_body_decode(&h, tiny, sizeof tiny, 1 << 20, &fb), CS_ECORRUPT);
    frame_body_destroy(&fb);
    /* Announced uncompressed length over the limit: refused before allocating. */
    uint8_t huge[8] = { 0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0 };
    cr_assert_eq(frame_body_decode(&h, huge, sizeof huge, 1 << 20, &fb), CS_ETOOBIG);
    frame_body_destroy(&fb);
    /* Garbage lz4 data. */
    uint8_t bad[12] = { 0, 0, 0, 100, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
    cr_assert_eq(frame_body_decode(&h, bad, sizeof bad, 1 << 20, &fb), CS_ECORRUPT);
    frame_body_destroy(&fb);
    /* Valid lz4 but the announced length is wrong. */
    char src[64], dst[128];
    memset(src, 'z', sizeof src);
    int clen = LZ4_compress_default(src, dst + 4, sizeof src, sizeof dst - 4);
    cs_st32((uint8_t *)dst, 63);
    cr_assert_eq(frame_body_decode(&h, (uint8_t *)dst, (size_t)clen + 4, 1 << 20, &fb), CS_ECORRUPT);
    frame_body_destroy(&fb);
    cs_st32((uint8_t *)dst, 64);
    cr_assert_eq(frame_body_decode(&h, (uint8_t *)dst, (size_t)clen + 4, 1 << 20, &fb), 0);
    cr_assert_eq(fb.msg_len, 64);
    frame_body_destroy(&fb);
    /* Truncated compressed block at every length. */
    for (int cut = 4; cut < clen + 4; cut++) {
        cr_assert_neq(frame_body_decode(&h, (uint8_t *)dst, (size_t)cut, 1 << 20, &fb), 0);
        frame_body_destroy(&fb);
    }
}

Test(server_frame, truncated_warnings_and_tracing)
{
    static const uint8_t trace[16] = { 0 };
    static const char *const warn[] = { "first warning", "second" };
    cs_buf b;
    cs_buf_init(&b);
    frame_writer w;
    frame_begin(&w, &b, 4, true, 7, OP_RESULT, 0, false, trace, warn, 2);
    frame_end(&w);
    frame_header h;
    cr_assert_eq(frame_header_parse(b.p, &h), 0);
    size_t full = b.len - FRAME_HEADER_LEN;
    for (size_t cut = 0; cut < full; cut++) {
        frame_body fb;
        cr_assert_neq(frame_body_decode(&h, b.p + FRAME_HEADER_LEN, cut, 1 << 20, &fb), 0,
                      "cut %zu", cut);
        frame_body_destroy(&fb);
    }
    cs_buf_destroy(&b);
}

Test(server_frame, string_multimap)
{
    static const char *const a[] = { "3.4.6" };
    static const char *const c[] = { "lz4", "snappy" };
    static const char *const keys[] = { "CQL_VERSION", "COMPRESSION" };
    static const char *const *const vals[] = { a, c };
    static const int nv[] = { 1, 2 };
    cs_buf b;
    cs_buf_init(&b);
    frame_put_string_multimap(&b, keys, vals, nv, 2);
    cs_rd r;
    cs_rd_init(&r, b.p, b.len);
    cr_assert_eq(cs_rd_u16(&r), 2);
    size_t n;
    const char *s = cs_rd_string(&r, &n);
    cr_assert(n == 11 && memcmp(s, "CQL_VERSION", 11) == 0);
    cr_assert_eq(cs_rd_u16(&r), 1);
    s = cs_rd_string(&r, &n);
    cr_assert(n == 5 && memcmp(s, "3.4.6", 5) == 0);
    s = cs_rd_string(&r, &n);
    cr_assert(n == 11 && memcmp(s, "COMPRESSION", 11) == 0);
    cr_assert_eq(cs_rd_u16(&r), 2);
    cs_rd_string(&r, &n);
    cs_rd_string(&r, &n);
    cr_assert_eq(r.err, 0);
    cr_assert_eq(cs_rd_left(&r), 0);
    cs_buf_destroy(&b);
}

/* Random bodies with every flag combination never crash the body decoder. */
Test(server_frame, fuzz_body_decoder)
{
    srand(4242);
    for (int iter = 0; iter < 100000; iter++) {
        size_t n = (size_t)(rand() % 96);
        uint8_t *body = cs_malloc(n ? n : 1);
        for (size_t i = 0; i < n; i++)
            body[i] = (uint8_t)(rand() % 4 == 0 ? 0 : rand());
        if (n >= 4 && rand() % 2)
            cs_st32(body, (uint32_t)(rand() % 200));   /* plausible uncompressed length */
        frame_header h = { .version = 4, .response = rand() % 2, .flags = (uint8_t)(rand() & 0x0f),
                           .opcode = OP_RESULT, .length = (uint32_t)n };
        frame_body fb;
        int rc = frame_body_decode(&h, body, n, 1 << 16, &fb);
        cr_assert(rc == 0 || rc == CS_ECORRUPT || rc == CS_ETOOBIG || rc == CS_ENOMEM);
        if (rc == 0)
            cr_assert(fb.msg_len <= (h.flags & FRAME_FLAG_COMPRESSION ? (size_t)1 << 16 : n));
        frame_body_destroy(&fb);
        cs_free(body);
    }
}

/* ------------------------------------------------------------ v5 segments */

static size_t unhex(const char *h, uint8_t *out)
{
    size_t n = 0;
    for (; h[0] && h[1]; h += 2) {
        unsigned v;
        sscanf(h, "%2x", &v);
        out[n++] = (uint8_t)v;
    }
    return n;
}

/* Bytes the Python driver 3.25's SegmentCodec wrote (cassandra/segment.py):
 * b"hello" uncompressed; b"a" * 100 and b"xyz" (stored: ulen 0) with lz4. */
Test(server_frame, segments_from_the_python_driver)
{
    uint8_t w[64];
    cs_buf scratch;
    cs_buf_init(&scratch);
    frame_seg s;
    size_t n = unhex("05000219999a68656c6c6f74800eb6", w);
    for (size_t k = 0; k < n; k++)                   /* short input: more bytes needed */
        cr_assert_eq(frame_seg_decode(w, k, false, &scratch, &s), 0, "at %zu", k);
    cr_assert_eq(frame_seg_decode(w, n, false, &scratch, &s), 1);
    cr_assert(s.self_contained);
    cr_assert_eq(s.size, n);
    cr_assert_eq(s.payload_len, 5);
    cr_assert_eq(memcmp(s.payload, "hello", 5), 0);
    cs_buf b;                                        /* ours is the same bytes */
    cs_buf_init(&b);
    frame_seg_put(&b, (const uint8_t *)"hello", 5, true, false);
    cr_assert_eq(b.len, n);
    cr_assert_eq(memcmp(b.p, w, n), 0);

    n = unhex("0b00c800048f183a1f6101004b506161616161a6eef35a", w);
    cr_assert_eq(frame_seg_decode(w, n, true, &scratch, &s), 1);
    cr_assert(s.self_contained);
    cr_assert_eq(s.payload_len, 100);
    for (int i = 0; i < 100; i++)
        cr_assert_eq(s.payload[i], 'a');
    n = unhex("030000000477228378797aad819c1b", w);
    cr_assert_eq(frame_seg_decode(w, n, true, &scratch, &s), 1);
    cr_assert_eq(s.payload_len, 3);
    cr_assert_eq(memcmp(s.payload, "xyz", 3), 0);
    cs_buf_reset(&b);
    frame_seg_put(&b, (const uint8_t *)"xyz", 3, true, true);   /* incompressible: stored, same bytes */
    cr_assert_eq(b.len, n);
    cr_assert_eq(memcmp(b.p, w, n), 0);
    /* the CRC24 of Cassandra's Crc.crc24 (values from the Python driver's compute_crc24) */
    cr_assert_eq(frame_seg_crc24(0x20005, 3), 0x9a9919u);
    cr_assert_eq(frame_seg_crc24(0x123456789aull, 5), 0x40d313u);
    cs_buf_destroy(&b);
    cs_buf_destroy(&scratch);
}

Test(server_frame, segment_crc_failures)
{
    uint8_t w[64];
    cs_buf scratch;
    cs_buf_init(&scratch);
    frame_seg s;
    size_t n = unhex("05000219999a68656c6c6f74800eb6", w);
    w[4] ^= 1;                                       /* header CRC */
    cr_assert_eq(frame_seg_decode(w, n, false, &scratch, &s), CS_ECORRUPT);
    cr_assert(s.bad_header);
    cr_assert_eq(s.read_crc, 0x9a9819);
    cr_assert_eq(s.computed_crc, 0x9a9919);
    w[4] ^= 1;
    w[7] ^= 0x20;                                    /* payload byte: the body CRC */
    cr_assert_eq(frame_seg_decode(w, n, false, &scratch, &s), CS_ECORRUPT);
    cr_assert(!s.bad_header);
    cr_assert_eq((uint32_t)s.read_crc, 0xb60e8074u);
    cr_assert_neq(s.read_crc, s.computed_crc);
    w[7] ^= 0x20;
    w[0] = 6;                                        /* a length change fails the header CRC */
    cr_assert_eq(frame_seg_decode(w, n, false, &scratch, &s), CS_ECORRUPT);
    cr_assert(s.bad_header);
    /* lz4 data that does not decode to its length, CRCs recomputed */
    cs_buf b;
    cs_buf_init(&b);
    static const uint8_t junk[6] = { 0xF0, 0xFF, 0xFF, 0xFF, 0x01, 0x02 };
    uint64_t h = 6 | (uint64_t)100 << 17 | (uint64_t)1 << 34;
    uint32_t c = frame_seg_crc24(h, 5);
    uint8_t hdr[8];
    for (int i = 0; i < 5; i++)
        hdr[i] = (uint8_t)(h >> (8 * i));
    for (int i = 0; i < 3; i++)
        hdr[5 + i] = (uint8_t)(c >> (8 * i));
    cs_buf_put(&b, hdr, 8);
    cs_buf_put(&b, junk, 6);
    static const uint8_t seed[4] = { 0xFA, 0x2D, 0x55, 0xCA };
    uint32_t pc = cs_crc32(cs_crc32(0, seed, 4), junk, 6);
    uint8_t t[4] = { (uint8_t)pc, (uint8_t)(pc >> 8), (uint8_t)(pc >> 16), (uint8_t)(pc >> 24) };
    cs_buf_put(&b, t, 4);
    cr_assert_eq(frame_seg_decode(b.p, b.len, true, &scratch, &s), CS_ECORRUPT);
    cr_assert(s.bad_lz4);
    cs_buf_destroy(&b);
    cs_buf_destroy(&scratch);
}

/* Decode every segment of w; check the envelopes come back in order and
 * return how many segments there were (self-contained ones in *sc). */
static int unwrap_all(const cs_buf *w, bool lz4, const cs_buf *want, int *sc)
{
    cs_buf got, scratch;
    cs_buf_init(&got);
    cs_buf_init(&scratch);
    size_t at = 0;
    int n = 0;
    *sc = 0;
    while (at < w->len) {
        frame_seg s;
        cr_assert_eq(frame_seg_decode(w->p + at, w->len - at, lz4, &scratch, &s), 1, "segment %d", n);
        cr_assert_leq(s.payload_len, FRAME_SEG_MAX_PAYLOAD);
        cs_buf_put(&got, s.payload, s.payload_len);
        at += s.size;
        n++;
        *sc += s.self_contained;
    }
    cr_assert_eq(got.len, want->len);
    cr_assert_eq(memcmp(got.p, want->p, got.len), 0);
    cs_buf_destroy(&got);
    cs_buf_destroy(&scratch);
    return n;
}

static void put_envelope(cs_buf *b, size_t body_len, uint8_t fill)
{
    frame_writer w;
    frame_begin(&w, b, 5, true, 3, OP_RESULT, 0, false, NULL, NULL, 0);
    uint8_t *p = cs_buf_extend(b, body_len);
    for (size_t i = 0; i < body_len; i++)
        p[i] = (uint8_t)(fill + (i % 251 == 0 ? i : 0));
    frame_end(&w);
}

/* Small envelopes share self-contained segments; a large one is cut into
 * non-self-contained segments between them; both forms. */
Test(server_frame, segment_wrap_packs_and_splits)
{
    for (int lz4 = 0; lz4 < 2; lz4++) {
        cs_buf env, w;
        cs_buf_init(&env);
        cs_buf_init(&w);
        for (int i = 0; i < 50; i++)
            put_envelope(&env, 100, (uint8_t)i);
        frame_seg_wrap(&w, env.p, env.len, lz4);
        int sc;
        cr_assert_eq(unwrap_all(&w, lz4, &env, &sc), 1);   /* 50 x 109 bytes: one segment */
        cr_assert_eq(sc, 1);
        size_t small = env.len;
        put_envelope(&env, 300000, 'q');                   /* 300009 bytes: 3 segments */
        put_envelope(&env, 10, 'z');
        cs_buf_reset(&w);
        frame_seg_wrap(&w, env.p, env.len, lz4);
        cr_assert_eq(unwrap_all(&w, lz4, &env, &sc), 5);
        cr_assert_eq(sc, 2);
        /* the large envelope starts a segment of its own */
        cs_buf scratch;
        cs_buf_init(&scratch);
        frame_seg s;
        cr_assert_eq(frame_seg_decode(w.p, w.len, lz4, &scratch, &s), 1);
        cr_assert_eq(s.payload_len, small);
        cr_assert_eq(frame_seg_decode(w.p + s.size, w.len - s.size, lz4, &scratch, &s), 1);
        cr_assert(!s.self_contained);
        cr_assert_eq(s.payload_len, FRAME_SEG_MAX_PAYLOAD);
        cs_buf_destroy(&scratch);
        /* envelopes that together pass one payload take two segments */
        cs_buf_reset(&env);
        for (int i = 0; i < 3; i++)
            put_envelope(&env, 60000, (uint8_t)i);
        cs_buf_reset(&w);
        frame_seg_wrap(&w, env.p, env.len, lz4);
        cr_assert_eq(unwrap_all(&w, lz4, &env, &sc), 2);
        cr_assert_eq(sc, 2);
        cs_buf_reset(&w);
        frame_seg_put(&w, env.p, FRAME_SEG_MAX_PAYLOAD + 1, true, lz4);
        cr_assert_eq(w.err, CS_ETOOBIG);
        cs_buf_destroy(&env);
        cs_buf_destroy(&w);
    }
}
