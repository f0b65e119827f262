/*
 * test_server_frame.c: the frame codec (server/frame.h): header round trips,
 * optional body parts, lz4 in both directions, and malformed input.
 */
#include <criterion/criterion.h>
#include <lz4.h>
#include <string.h>

#include "common/alloc.h"
#include "common/buf.h"
#include "common/err.h"
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
