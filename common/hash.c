/*
 * hash.c: Murmur3 tokens (bit-exact with Cassandra's Murmur3Partitioner),
 * CRC-32C, xxHash64 and MD5.
 */
#include "common/hash.h"
#include <stdint.h>
#include <string.h>
#include <xxhash.h>

/* ------------------------------------------------------------ Murmur3 */

static inline uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static inline uint64_t fmix64(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return k;
}

/* One 8-byte load (the byte loop this replaces was compiled as such:
 * ~70 of murmur3's ~185 instructions for a 16-byte key). */
static inline uint64_t le64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

/* Cassandra widens tail bytes from Java's signed byte: sign-extended. */
static inline uint64_t sx(uint8_t b) { return (uint64_t)(int64_t)(int8_t)b; }

int64_t cs_murmur3_token(const void *key, size_t len)
{
    const uint8_t *d = key;
    const uint64_t c1 = 0x87c37b91114253d5ULL, c2 = 0x4cf5ad432745937fULL;
    uint64_t h1 = 0, h2 = 0;
    size_t nblocks = len / 16;
    for (size_t i = 0; i < nblocks; i++) {
        uint64_t k1 = le64(d + i * 16), k2 = le64(d + i * 16 + 8);
        k1 *= c1; k1 = rotl64(k1, 31); k1 *= c2; h1 ^= k1;
        h1 = rotl64(h1, 27); h1 += h2; h1 = h1 * 5 + 0x52dce729;
        k2 *= c2; k2 = rotl64(k2, 33); k2 *= c1; h2 ^= k2;
        h2 = rotl64(h2, 31); h2 += h1; h2 = h2 * 5 + 0x38495ab5;
    }
    const uint8_t *t = d + nblocks * 16;
    uint64_t k1 = 0, k2 = 0;
    switch (len & 15) {
    case 15: k2 ^= sx(t[14]) << 48; /* fall through */
    case 14: k2 ^= sx(t[13]) << 40; /* fall through */
    case 13: k2 ^= sx(t[12]) << 32; /* fall through */
    case 12: k2 ^= sx(t[11]) << 24; /* fall through */
    case 11: k2 ^= sx(t[10]) << 16; /* fall through */
    case 10: k2 ^= sx(t[9]) << 8;   /* fall through */
    case 9:  k2 ^= sx(t[8]);
        k2 *= c2; k2 = rotl64(k2, 33); k2 *= c1; h2 ^= k2;
        /* fall through */
    case 8:  k1 ^= sx(t[7]) << 56;  /* fall through */
    case 7:  k1 ^= sx(t[6]) << 48;  /* fall through */
    case 6:  k1 ^= sx(t[5]) << 40;  /* fall through */
    case 5:  k1 ^= sx(t[4]) << 32;  /* fall through */
    case 4:  k1 ^= sx(t[3]) << 24;  /* fall through */
    case 3:  k1 ^= sx(t[2]) << 16;  /* fall through */
    case 2:  k1 ^= sx(t[1]) << 8;   /* fall through */
    case 1:  k1 ^= sx(t[0]);
        k1 *= c1; k1 = rotl64(k1, 31); k1 *= c2; h1 ^= k1;
    }
    h1 ^= (uint64_t)len;
    h2 ^= (uint64_t)len;
    h1 += h2;
    h2 += h1;
    h1 = fmix64(h1);
    h2 = fmix64(h2);
    h1 += h2;
    int64_t tok = (int64_t)h1;
    return tok == INT64_MIN ? INT64_MAX : tok;
}

/* ------------------------------------------------------------ CRC-32C, CRC-32 */

/* Slice-by-8 tables of a reflected 32-bit CRC (any CPU): CRC-32C
 * (Castagnoli, 0x82F63B78) and CRC-32 (IEEE, zlib's, 0xEDB88320). */
typedef struct crc_tables {
    uint32_t poly;
    int ready;
    uint32_t tab[8][256];
} crc_tables;

static crc_tables crc32c_t = { 0x82F63B78u, 0, { { 0 } } };
static crc_tables crc32_t = { 0xEDB88320u, 0, { { 0 } } };

static void crc_init(crc_tables *c)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t v = i;
        for (int k = 0; k < 8; k++)
            v = v & 1 ? (v >> 1) ^ c->poly : v >> 1;
        c->tab[0][i] = v;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            c->tab[t][i] = (c->tab[t - 1][i] >> 8) ^ c->tab[0][c->tab[t - 1][i] & 0xFF];
    __atomic_store_n(&c->ready, 1, __ATOMIC_RELEASE);
}

static uint32_t crc_sw(crc_tables *c, uint32_t crc, const void *p, size_t n)
{
    if (!__atomic_load_n(&c->ready, __ATOMIC_ACQUIRE))
        crc_init(c); /* idempotent: racing initializers write identical tables */
    uint32_t (*tab)[256] = c->tab;
    const uint8_t *d = p;
    crc = ~crc;
    while (n >= 8) {
        uint32_t lo = crc ^ ((uint32_t)d[0] | (uint32_t)d[1] << 8 | (uint32_t)d[2] << 16 | (uint32_t)d[3] << 24);
        crc = tab[7][lo & 0xFF] ^ tab[6][(lo >> 8) & 0xFF] ^ tab[5][(lo >> 16) & 0xFF] ^
              tab[4][lo >> 24] ^ tab[3][d[4]] ^ tab[2][d[5]] ^ tab[1][d[6]] ^ tab[0][d[7]];
        d += 8;
        n -= 8;
    }
    while (n--)
        crc = (crc >> 8) ^ tab[0][(crc ^ *d++) & 0xFF];
    return ~crc;
}

/* Software CRC-32C (any CPU). */
uint32_t cs_crc32c_sw(uint32_t crc, const void *p, size_t n)
{
    return crc_sw(&crc32c_t, crc, p, n);
}

/* CRC-32 (protocol v5 segments: not on a hot path, no hardware variant). */
uint32_t cs_crc32(uint32_t crc, const void *p, size_t n)
{
    return crc_sw(&crc32_t, crc, p, n);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <nmmintrin.h>
#define CRC_HAVE_HW 1

/* SSE4.2 crc32 instruction (same polynomial, bit-reflected like the
 * tables): 8 bytes per instruction, ~3-4x the table version.  Only called
 * after the runtime CPU check in pick_crc. */
__attribute__((target("sse4.2")))
static uint32_t crc_hw(uint32_t crc, const void *p, size_t n)
{
    const uint8_t *d = p;
    uint64_t c = (uint32_t)~crc;
    while (n && ((uintptr_t)d & 7)) { c = _mm_crc32_u8((uint32_t)c, *d++); n--; }
    while (n >= 32) {
        uint64_t v0, v1, v2, v3;
        memcpy(&v0, d, 8); memcpy(&v1, d + 8, 8); memcpy(&v2, d + 16, 8); memcpy(&v3, d + 24, 8);
        c = _mm_crc32_u64(c, v0);
        c = _mm_crc32_u64(c, v1);
        c = _mm_crc32_u64(c, v2);
        c = _mm_crc32_u64(c, v3);
        d += 32;
        n -= 32;
    }
    while (n >= 8) { uint64_t v; memcpy(&v, d, 8); c = _mm_crc32_u64(c, v); d += 8; n -= 8; }
    while (n--) c = _mm_crc32_u8((uint32_t)c, *d++);
    return ~(uint32_t)c;
}
#else
#define CRC_HAVE_HW 0
#endif

bool cs_crc32c_hw_available(void)
{
#if CRC_HAVE_HW
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.2");
#else
    return false;
#endif
}

/* The implementation in use, chosen on first call (racing choosers store
 * the same pointer). */
typedef uint32_t (*crc_fn)(uint32_t, const void *, size_t);
static crc_fn crc_impl;

uint32_t cs_crc32c(uint32_t crc, const void *p, size_t n)
{
    crc_fn f = __atomic_load_n(&crc_impl, __ATOMIC_ACQUIRE);
    if (!f) {
#if CRC_HAVE_HW
        f = cs_crc32c_hw_available() ? crc_hw : cs_crc32c_sw;
#else
        f = cs_crc32c_sw;
#endif
        __atomic_store_n(&crc_impl, f, __ATOMIC_RELEASE);
    }
    return f(crc, p, n);
}

/* ------------------------------------------------------------ xxHash64 */

uint64_t cs_xxh64(const void *p, size_t n, uint64_t seed) { return XXH64(p, n, seed); }

/* ------------------------------------------------------------ MD5 (RFC 1321) */

typedef struct { uint32_t a, b, c, d; } md5_state;

static const uint32_t md5_k[64] = {
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
    0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
    0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
    0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
    0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
};
static const uint8_t md5_r[64] = {
    7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20,
    5, 9, 14, 20, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 6, 10, 15, 21, 6, 10, 15, 21,
    6, 10, 15, 21, 6, 10, 15, 21,
};

static void md5_block(md5_state *s, const uint8_t *blk)
{
    uint32_t w[16];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)blk[i * 4] | (uint32_t)blk[i * 4 + 1] << 8 | (uint32_t)blk[i * 4 + 2] << 16 |
               (uint32_t)blk[i * 4 + 3] << 24;
    uint32_t a = s->a, b = s->b, c = s->c, d = s->d;
    for (int i = 0; i < 64; i++) {
        uint32_t f;
        int g;
        if (i < 16) { f = (b & c) | (~b & d); g = i; }
        else if (i < 32) { f = (d & b) | (~d & c); g = (5 * i + 1) & 15; }
        else if (i < 48) { f = b ^ c ^ d; g = (3 * i + 5) & 15; }
        else { f = c ^ (b | ~d); g = (7 * i) & 15; }
        uint32_t tmp = d;
        d = c;
        c = b;
        uint32_t x = a + f + md5_k[i] + w[g];
        b = b + ((x << md5_r[i]) | (x >> (32 - md5_r[i])));
        a = tmp;
    }
    s->a += a; s->b += b; s->c += c; s->d += d;
}

void cs_md5(const void *p, size_t n, uint8_t out[16])
{
    md5_state s = { 0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476 };
    const uint8_t *d = p;
    size_t full = n / 64;
    for (size_t i = 0; i < full; i++)
        md5_block(&s, d + i * 64);
    uint8_t tail[128];
    size_t rem = n % 64;
    memcpy(tail, d + full * 64, rem);
    tail[rem] = 0x80;
    size_t tl = rem < 56 ? 64 : 128;
    memset(tail + rem + 1, 0, tl - rem - 1);
    uint64_t bits = (uint64_t)n * 8;
    for (int i = 0; i < 8; i++)
        tail[tl - 8 + i] = (uint8_t)(bits >> (8 * i));
    md5_block(&s, tail);
    if (tl == 128)
        md5_block(&s, tail + 64);
    uint32_t v[4] = { s.a, s.b, s.c, s.d };
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            out[i * 4 + j] = (uint8_t)(v[i] >> (8 * j));
}
