/* Unit tests for common/: buffers, varints, hashes, uuids, arena, allocator. */
#include <criterion/criterion.h>
#include "common/alloc.h"
#include "common/arena.h"
#include "common/buf.h"
#include "common/compress.h"
#include "common/err.h"
#include "common/hash.h"
#include "common/util.h"

#include <lz4.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

Test(murmur3, cassandra_oracle)
{
    /* Oracle from the Python driver's Murmur3Token.hash_fn. */
    uint8_t k1[] = { 0, 0, 0, 1 };
    cr_assert_eq(cs_murmur3_token(k1, 4), -4069959284402364209LL);
    /* keys of one or more 16-byte blocks (from the Python driver's
     * cassandra.murmur3.murmur3), with and without high bytes and tails */
    uint8_t k16[16], k17[17], kff[40];
    for (int i = 0; i < 16; i++) k16[i] = (uint8_t)i;
    for (int i = 0; i < 17; i++) k17[i] = (uint8_t)(0x80 + i);
    memset(kff, 0xff, sizeof kff);
    cr_assert_eq(cs_murmur3_token(k16, 16), 4920504430128807728LL);
    cr_assert_eq(cs_murmur3_token(k17, 17), -3616694464407856223LL);
    cr_assert_eq(cs_murmur3_token("a key of thirty-three bytes long!", 33), -9089736916257780585LL);
    cr_assert_eq(cs_murmur3_token(kff, 40), 3295903915886194887LL);
}

Test(murmur3, high_bytes_and_lengths)
{
    /* Tail bytes >= 0x80 are sign-extended; exercise every tail length and
     * check determinism and the MIN->MAX mapping never yields INT64_MIN. */
    uint8_t key[40];
    for (int i = 0; i < 40; i++)
        key[i] = (uint8_t)(0x80 + i);
    for (size_t n = 0; n <= 40; n++) {
        int64_t a = cs_murmur3_token(key, n), b = cs_murmur3_token(key, n);
        cr_assert_eq(a, b);
        cr_assert_neq(a, INT64_MIN);
    }
}

Test(crc32c, known_vector)
{
    /* RFC 3720 test vector: 32 bytes of zeros -> 0x8A9136AA; "123456789" -> 0xE3069283. */
    uint8_t z[32] = { 0 };
    cr_assert_eq(cs_crc32c(0, z, 32), 0x8A9136AAu);
    cr_assert_eq(cs_crc32c(0, "123456789", 9), 0xE3069283u);
    /* incremental == one shot */
    cr_assert_eq(cs_crc32c(cs_crc32c(0, "1234", 4), "56789", 5), 0xE3069283u);
}

Test(crc32, known_vectors)
{
    /* zlib's crc32: "123456789" -> 0xCBF43926; the v5 segment seed (the
     * CRC of FA 2D 55 CA) and a payload continued from it, as Python's
     * zlib.crc32(b"hello", zlib.crc32(b"\xfa\x2d\x55\xca")) computes. */
    cr_assert_eq(cs_crc32(0, "123456789", 9), 0xCBF43926u);
    cr_assert_eq(cs_crc32(0, "", 0), 0u);
    static const uint8_t seed[4] = { 0xFA, 0x2D, 0x55, 0xCA };
    uint32_t s0 = cs_crc32(0, seed, 4);
    cr_assert_eq(s0, 0x44777ED3u);
    cr_assert_eq(cs_crc32(s0, "hello", 5), 0xB60E8074u);
    uint8_t b[768];
    for (size_t i = 0; i < sizeof b; i++)
        b[i] = (uint8_t)i;
    cr_assert_eq(cs_crc32(0, b, sizeof b), 0xB0C0DF2Au);
    for (size_t cut = 0; cut <= sizeof b; cut += 37)     /* incremental == one shot */
        cr_assert_eq(cs_crc32(cs_crc32(0, b, cut), b + cut, sizeof b - cut), 0xB0C0DF2Au);
}

/* The SSE4.2 path (when the CPU has it) and the table path agree on random
 * data of every length 0..300 at every alignment 0..7, and incrementally. */
Test(crc32c, hardware_matches_software)
{
    static uint8_t buf[320];
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < sizeof buf; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        buf[i] = (uint8_t)x;
    }
    for (size_t off = 0; off < 8; off++)
        for (size_t n = 0; n + off <= 308; n++) {
            uint32_t seed = (uint32_t)(n * 2654435761u);
            cr_assert_eq(cs_crc32c(seed, buf + off, n), cs_crc32c_sw(seed, buf + off, n), "off %zu len %zu", off, n);
        }
    cr_assert_eq(cs_crc32c_sw(0, "123456789", 9), 0xE3069283u);
    cr_assert_eq(cs_crc32c(cs_crc32c(0, buf, 100), buf + 100, 200), cs_crc32c_sw(0, buf, 300));
}

Test(md5, known_vectors)
{
    uint8_t out[16];
    cs_md5("", 0, out);
    uint8_t e0[16] = { 0xd4, 0x1d, 0x8c, 0xd9, 0x8f, 0x00, 0xb2, 0x04, 0xe9, 0x80, 0x09, 0x98, 0xec, 0xf8, 0x42, 0x7e };
    cr_assert_arr_eq(out, e0, 16);
    cs_md5("The quick brown fox jumps over the lazy dog", 43, out);
    uint8_t e1[16] = { 0x9e, 0x10, 0x7d, 0x9d, 0x37, 0x2b, 0xb6, 0x82, 0x6b, 0xd8, 0x1d, 0x35, 0x42, 0xa4, 0x19, 0xd6 };
    cr_assert_arr_eq(out, e1, 16);
}

Test(buf, ints_and_varints_round_trip)
{
    cs_buf b;
    cs_buf_init(&b);
    uint64_t vals[] = { 0, 1, 127, 128, 16383, 16384, (1ull << 35) - 1, UINT64_MAX };
    for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
        cs_buf_put_uvarint(&b, vals[i]);
        cs_buf_put_svarint(&b, -(int64_t)(vals[i] >> 1));
    }
    cs_buf_put_u16(&b, 0xBEEF);
    cs_buf_put_u32(&b, 0xDEADBEEF);
    cs_buf_put_u64(&b, 0x0123456789ABCDEFull);
    cs_buf_put_string(&b, "hello");
    cs_buf_put_bytes(&b, NULL, -1);
    cr_assert_eq(b.err, 0);
    cs_rd r;
    cs_rd_init(&r, b.p, b.len);
    for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
        cr_assert_eq(cs_rd_uvarint(&r), vals[i]);
        cr_assert_eq(cs_rd_svarint(&r), -(int64_t)(vals[i] >> 1));
    }
    cr_assert_eq(cs_rd_u16(&r), 0xBEEF);
    cr_assert_eq(cs_rd_u32(&r), 0xDEADBEEF);
    cr_assert_eq(cs_rd_u64(&r), 0x0123456789ABCDEFull);
    size_t n;
    const char *s = cs_rd_string(&r, &n);
    cr_assert_eq(n, 5);
    cr_assert(memcmp(s, "hello", 5) == 0);
    const uint8_t *p;
    cr_assert_eq(cs_rd_bytes(&r, &p), -1);
    cr_assert_eq(cs_rd_left(&r), 0);
    cr_assert_eq(r.err, 0);
    /* reading past the end is a sticky error, not a crash */
    cs_rd_u32(&r);
    cr_assert_eq(r.err, CS_ECORRUPT);
    cr_assert_eq(cs_rd_u8(&r), 0);
    cs_buf_destroy(&b);
    cr_assert_eq(cs_alloc_count(), 0);
}

Test(buf, truncated_inputs_are_errors)
{
    uint8_t bad[] = { 0x00, 0x10, 'a' }; /* string claims 16 bytes, has 1 */
    cs_rd r;
    cs_rd_init(&r, bad, sizeof(bad));
    size_t n;
    cr_assert_null(cs_rd_string(&r, &n));
    cr_assert_eq(r.err, CS_ECORRUPT);
    uint8_t v[11];
    memset(v, 0xFF, sizeof(v)); /* varint that never ends */
    cs_rd_init(&r, v, sizeof(v));
    cs_rd_uvarint(&r);
    cr_assert_eq(r.err, CS_ECORRUPT);
}

Test(uuid, format_parse_and_timeuuid_order)
{
    cs_uuid a, b, c;
    cs_uuid_random(&a);
    char s[37];
    cs_uuid_format(&a, s);
    cr_assert_eq(cs_uuid_parse(s, 36, &b), 0);
    cr_assert_arr_eq(a.b, b.b, 16);
    cr_assert_eq(a.b[6] >> 4, 4);
    cs_uuid_timeuuid(&b, 1000);
    cs_uuid_timeuuid(&c, 1000);
    cr_assert_eq(b.b[6] >> 4, 1);
    cr_assert(memcmp(b.b, c.b, 16) != 0, "same-µs timeuuids must differ");
    cr_assert_eq(cs_uuid_parse("not-a-uuid", 10, &a), CS_EINVAL);
}

Test(arena, alloc_and_destroy)
{
    cs_arena a;
    cs_arena_init(&a);
    for (int i = 0; i < 1000; i++) {
        char *p = cs_arena_alloc(&a, (size_t)(i % 300) + 1);
        cr_assert_not_null(p);
        cr_assert_eq(((uintptr_t)p) & 15, 0);
    }
    cr_assert_not_null(cs_arena_alloc(&a, 100000));
    cr_assert_str_eq(cs_arena_strdup(&a, "abc"), "abc");
    cs_arena_destroy(&a);
    cr_assert_eq(cs_alloc_count(), 0);
}

/* The inline fast path and the slow one hand out the same kind of memory:
 * 16-aligned, disjoint, zero-size requests distinct, and every byte
 * accounted in used. */
Test(arena, fast_path_sizes_and_accounting)
{
    cs_arena a;
    cs_arena_init(&a);
    unsigned char *prev = NULL;
    size_t want = 0;
    for (int i = 0; i < 3000; i++) {
        size_t n = (size_t)(i % 37) * 7;   /* 0, 7, ... 252: some exact multiples of 16 */
        unsigned char *p = cs_arena_alloc(&a, n);
        cr_assert_not_null(p);
        cr_assert_eq(((uintptr_t)p) & 15, 0);
        cr_assert_neq(p, prev);
        memset(p, 0xAB, n);
        want += n ? (n + 15) & ~(size_t)15 : 16;
        prev = p;
    }
    cr_assert_eq(a.used, want);
    cs_arena_destroy(&a);
    cr_assert_eq(cs_alloc_count(), 0);
}

/* cs_arena_reset keeps the chunks: the same allocations again make no new
 * chunk and land in the memory of the first round. */
Test(arena, reset_reuses_chunks)
{
    cs_arena a;
    cs_arena_init(&a);
    char *first = NULL;
    for (int i = 0; i < 2000; i++) {
        char *p = cs_arena_alloc(&a, 200);
        if (!first) first = p;
        memset(p, 1, 200);
    }
    cr_assert_not_null(cs_arena_alloc(&a, 100000));   /* a big one-off chunk too */
    size_t chunks = cs_alloc_count();
    for (int round = 0; round < 5; round++) {
        cs_arena_reset(&a);
        cr_assert_eq(a.used, 0);
        char *p0 = NULL;
        for (int i = 0; i < 2000; i++) {
            char *p = cs_arena_alloc(&a, 200);
            cr_assert_not_null(p);
            if (!p0) p0 = p;
            memset(p, 2, 200);
        }
        cr_assert_not_null(cs_arena_alloc(&a, 100000));
        cr_assert_eq(p0, first, "round %d: the first chunk is used first again", round);
        cr_assert_eq(cs_alloc_count(), chunks, "round %d: no new chunk", round);
    }
    cs_arena_destroy(&a);
    cr_assert_eq(cs_alloc_count(), 0);
}

/* A chunk pool: chunks of its size that a destroyed arena gives back serve
 * the next arena (no allocation), up to its bound; a trim frees the chunks
 * no arena took since the previous trim; the last reference frees it. */
Test(arena, chunk_pool)
{
    const size_t CH = 64 << 10;
    cs_chunk_pool *p = cs_chunk_pool_new(CH, 8 * CH);
    cr_assert_not_null(p);
    size_t base = cs_alloc_count();
    cs_arena a;
    cs_arena_init(&a);
    cs_arena_set_chunk_max(&a, CH);
    cs_arena_set_pool(&a, p);
    for (int i = 0; i < 12 * 1024; i++) cr_assert_not_null(cs_arena_alloc(&a, 64));   /* 768 KiB */
    size_t with_arena = cs_alloc_count();
    cs_arena_destroy(&a);
    cr_assert_eq(cs_chunk_pool_bytes(p), 8 * CH, "kept up to the bound");
    cr_assert_eq(cs_alloc_count(), base + 8, "the chunks past the bound and the small ones are freed");
    /* The next arena takes them: allocating the same again adds only the
     * small chunks and the ones the pool could not keep. */
    cs_arena_init(&a);
    cs_arena_set_chunk_max(&a, CH);
    cs_arena_set_pool(&a, p);
    for (int i = 0; i < 12 * 1024; i++) cr_assert_not_null(cs_arena_alloc(&a, 64));
    cr_assert_eq(cs_alloc_count(), with_arena);
    cr_assert_eq(cs_chunk_pool_bytes(p), 0);
    cs_arena_destroy(&a);
    cr_assert_eq(cs_chunk_pool_bytes(p), 8 * CH);
    cs_chunk_pool_trim(p);   /* the stock went down to 0 since creation: nothing idle */
    cr_assert_eq(cs_chunk_pool_bytes(p), 8 * CH);
    cs_chunk_pool_trim(p);   /* no arena took any since: all idle */
    cr_assert_eq(cs_chunk_pool_bytes(p), 0);
    cr_assert_eq(cs_alloc_count(), base);
    /* References: an arena's holder keeps the pool alive past its creator. */
    cs_chunk_pool_ref(p);
    cs_arena_init(&a);
    cs_arena_set_chunk_max(&a, CH);
    cs_arena_set_pool(&a, p);
    for (int i = 0; i < 4 * 1024; i++) cr_assert_not_null(cs_arena_alloc(&a, 64));
    cs_chunk_pool_unref(p);
    cs_arena_destroy(&a);
    cr_assert_gt(cs_chunk_pool_bytes(p), 0);
    cs_chunk_pool_unref(p);
    cr_assert_eq(cs_alloc_count(), base - 1, "the pool and its chunks freed");
}

Test(alloc, fail_nth)
{
    cs_alloc_fail_nth(2);
    void *a = cs_malloc(10);
    void *b = cs_malloc(10);
    void *c = cs_malloc(10);
    cr_assert_not_null(a);
    cr_assert_null(b);
    cr_assert_not_null(c);
    cs_free(a);
    cs_free(c);
    cr_assert_eq(cs_alloc_used(), 0);
}

/* Per-thread counting: blocks allocated on one thread and freed on another,
 * threads that exit (their slots fold into the totals), more threads than
 * one: the totals come back to zero and count what is live in between. */
#define XT_N 1000
static void *xt_alloc(void *arg)
{
    void **v = arg;
    for (int i = 0; i < XT_N; i++) v[i] = cs_malloc((size_t)i + 1);
    return NULL;
}
static void *xt_free(void *arg)
{
    void **v = arg;
    for (int i = 0; i < XT_N; i += 2) cs_free(v[i]);
    return NULL;
}

Test(alloc, counts_across_threads)
{
    static void *v[4][XT_N];
    pthread_t th[4];
    for (int t = 0; t < 4; t++) pthread_create(&th[t], NULL, xt_alloc, v[t]);
    for (int t = 0; t < 4; t++) pthread_join(th[t], NULL);
    size_t per = (size_t)XT_N * (XT_N + 1) / 2;
    cr_assert_eq(cs_alloc_count(), 4 * XT_N);
    cr_assert_eq(cs_alloc_used(), 4 * per);
    for (int t = 0; t < 4; t++) pthread_create(&th[t], NULL, xt_free, v[(t + 1) % 4]);
    for (int t = 0; t < 4; t++) pthread_join(th[t], NULL);
    cr_assert_eq(cs_alloc_count(), 4 * XT_N / 2);
    void *grown = cs_realloc(v[0][1], 5000);   /* block 1 was 2 bytes */
    cr_assert_not_null(grown);
    v[0][1] = grown;
    cr_assert_eq(cs_alloc_used(), 4 * (per - (size_t)XT_N * XT_N / 4) + 4998);
    for (int t = 0; t < 4; t++)
        for (int i = 1; i < XT_N; i += 2) cs_free(v[t][i]);
    cr_assert_eq(cs_alloc_count(), 0);
    cr_assert_eq(cs_alloc_used(), 0);
}

Test(util, write_ts_strictly_increasing)
{
    int64_t prev = cs_write_ts_us();
    for (int i = 0; i < 10000; i++) {
        int64_t t = cs_write_ts_us();
        cr_assert_gt(t, prev);
        prev = t;
    }
}

/* Blocks compressed one after another from the same buffer, each sharing
 * most of its bytes with the one before, decompress alone: the reused
 * state never makes a block refer to an earlier one.  Sizes around the
 * 64 KiB window too; a destination too small gives 0. */
Test(compress, blocks_are_independent)
{
    static const int sizes[] = { 1, 15, 100, CS_LZ4_SMALL, CS_LZ4_SMALL + 1, 4096, 65535, 65536, 70000 };
    int max = 70000;
    unsigned char *src = malloc((size_t)max), *dst = malloc((size_t)LZ4_compressBound(max)),
                  *back = malloc((size_t)max);
    unsigned x = 12345;
    for (int i = 0; i < max; i++) {
        x = x * 1103515245u + 12345u;
        src[i] = (i % 116) < 16 ? (unsigned char)"partition-key-00"[i % 16] : (unsigned char)(x >> 16);
    }
    for (int round = 0; round < 3; round++)
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            int n = sizes[k];
            src[n / 2] ^= (unsigned char)(round + 1);   /* a new block, mostly the old bytes */
            int c = cs_lz4_compress(src, dst, n, LZ4_compressBound(n));
            cr_assert_gt(c, 0, "size %d", n);
            cr_assert_eq(LZ4_decompress_safe((const char *)dst, (char *)back, c, n), n, "size %d round %d", n, round);
            cr_assert_eq(memcmp(back, src, (size_t)n), 0, "size %d round %d", n, round);
        }
    memset(src, 'a', 4096);
    int c = cs_lz4_compress(src, dst, 4096, LZ4_compressBound(4096));
    cr_assert(c > 0 && c < 100, "4 KiB of one byte compresses (%d)", c);
    x = 7;
    for (int i = 0; i < 4096; i++) { x = x * 1103515245u + 12345u; src[i] = (unsigned char)(x >> 16); }
    cr_assert_eq(cs_lz4_compress(src, dst, 4096, 100), 0, "random bytes do not fit in 100");
    c = cs_lz4_compress(src, dst, 4096, LZ4_compressBound(4096));   /* and the state is sound after it */
    cr_assert_eq(LZ4_decompress_safe((const char *)dst, (char *)back, c, 4096), 4096);
    cr_assert_eq(memcmp(back, src, 4096), 0);
    free(src);
    free(dst);
    free(back);
}

/* The same block compresses to the same bytes in a thread that never
 * compressed before and in one that compressed other blocks first (sstables
 * written twice from one memtable are identical). */
typedef struct cz_job { const unsigned char *src; int n; unsigned char out[8192]; int c; } cz_job;

static void *cz_fresh(void *arg)
{
    cz_job *j = arg;
    j->c = cs_lz4_compress(j->src, j->out, j->n, (int)sizeof j->out);
    return NULL;
}

Test(compress, same_bytes_whatever_came_before)
{
    static unsigned char blk[4096], other[4096];
    unsigned x = 99;
    for (int i = 0; i < 4096; i++) {
        x = x * 1103515245u + 12345u;
        blk[i] = (i % 116) < 16 ? (unsigned char)"row-key-00000000"[i % 16] : (unsigned char)(x >> 16);
        other[i] = (unsigned char)(x >> 8);
    }
    static const int sizes[] = { 106, 300, CS_LZ4_SMALL, CS_LZ4_SMALL + 1 };
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        static cz_job fresh;
        fresh.src = blk;
        fresh.n = sizes[k];
        pthread_t t;
        cr_assert_eq(pthread_create(&t, NULL, cz_fresh, &fresh), 0);
        pthread_join(t, NULL);
        cr_assert_gt(fresh.c, 0);
        static unsigned char out[8192];
        for (int i = 0; i < 50; i++) cs_lz4_compress(other, out, 1000 + i * 61, (int)sizeof out);
        int c = cs_lz4_compress(blk, out, sizes[k], (int)sizeof out);
        cr_assert(c == fresh.c && memcmp(out, fresh.out, (size_t)c) == 0, "size %d: %d vs %d bytes", sizes[k], c, fresh.c);
    }
}

/* An error initialized only in code and msg (the request loop's) holds the
 * same fields as a cs_error_init one once an error is recorded: cs_error_set
 * clears everything after msg; a second set changes nothing. */
Test(error, set_clears_the_fields_after_msg)
{
    static cs_error e;
    memset(&e, 0x5A, sizeof e);
    e.code = -1;
    e.msg[0] = '\0';
    cr_assert_eq(cs_error_set(&e, CS_ERR_ALREADY_EXISTS, "Cannot add existing keyspace \"%s\"", "k"), CS_EUSER);
    static cs_error ref;
    cs_error_init(&ref);
    cr_assert_eq(memcmp((char *)&e + offsetof(cs_error, cl), (char *)&ref + offsetof(cs_error, cl),
                        sizeof e - offsetof(cs_error, cl)), 0);
    cr_assert_str_eq(e.msg, "Cannot add existing keyspace \"k\"");
    snprintf(e.keyspace, sizeof e.keyspace, "%s", "k");
    cs_error_set(&e, CS_ERR_INVALID, "second");
    cr_assert_eq(e.code, CS_ERR_ALREADY_EXISTS);
    cr_assert_str_eq(e.keyspace, "k");
}

/* cs_parse_instant_ms reads what cs_format_instant_ms writes (snapshot
 * manifests' created_at / expires_at), and Instant.toString's longer
 * fractions; anything else is CS_EINVAL. */
Test(util, instant_parse_round_trip)
{
    static const int64_t ms[] = { 0, 1, 999, 1000, 951782400000LL /* 2000-02-29 */, 1700000000123LL,
                                  4102444799999LL /* 2099-12-31T23:59:59.999Z */ };
    for (size_t i = 0; i < CS_ARRAY_LEN(ms); i++) {
        char s[40];
        cs_format_instant_ms(ms[i], s, sizeof s);
        int64_t got = -1;
        cr_assert_eq(cs_parse_instant_ms(s, strlen(s), &got), 0, "%s", s);
        cr_assert_eq(got, ms[i], "%s: %lld", s, (long long)got);
    }
    int64_t v;
    const char *ok = "2023-05-01T10:20:30.123456789Z";
    cr_assert_eq(cs_parse_instant_ms(ok, strlen(ok), &v), 0);
    cr_assert_eq(v, 1682936430123LL);
    ok = "2023-05-01T10:20:30.5Z";
    cr_assert_eq(cs_parse_instant_ms(ok, strlen(ok), &v), 0);
    cr_assert_eq(v, 1682936430500LL);
    static const char *bad[] = { "", "null", "2023-05-01T10:20:30", "2023-05-01 10:20:30Z", "2023-13-01T10:20:30Z",
                                 "2023-02-29T10:20:30Z", "2023-05-01T24:00:00Z", "2023-05-01T10:20:30.Z",
                                 "2023-05-01T10:20:30.1234567890Z", "2023-05-01T10:20:30Zx" };
    for (size_t i = 0; i < CS_ARRAY_LEN(bad); i++)
        cr_assert_eq(cs_parse_instant_ms(bad[i], strlen(bad[i]), &v), CS_EINVAL, "%s", bad[i]);
}
