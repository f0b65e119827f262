/*
 * hash.h: the hashes cassette needs.
 *  - cs_murmur3_token: Cassandra's Murmur3Partitioner token, bit-exact:
 *    MurmurHash3 x64_128, seed 0, first 64-bit half, tail bytes sign-extended
 *    (Cassandra's quirk), Long.MIN_VALUE mapped to Long.MAX_VALUE.
 *    Oracle: int key 1 (00 00 00 01) -> -4069959284402364209.
 *  - cs_crc32c: CRC-32C (Castagnoli), for on-disk checksums.
 *  - cs_crc32: CRC-32 (IEEE 802.3, zlib's crc32 and java.util.zip.CRC32),
 *    for protocol v5 segments.
 *  - cs_xxh64: xxHash64 (wraps libxxhash), for bloom filters.
 *  - cs_md5: MD5 (prepared statement ids, as Cassandra).
 */
#ifndef CS_HASH_H
#define CS_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

int64_t cs_murmur3_token(const void *key, size_t len);
uint32_t cs_crc32c(uint32_t crc, const void *p, size_t n);   /* start with crc = 0 */
/* The portable table implementation cs_crc32c falls back to (same results),
 * and whether the SSE4.2 instruction path is used on this CPU (tests). */
uint32_t cs_crc32c_sw(uint32_t crc, const void *p, size_t n);
bool cs_crc32c_hw_available(void);
/* zlib-compatible: start with crc = 0; cs_crc32(cs_crc32(0, a), b) is the
 * CRC of a followed by b.  Table-driven, any CPU. */
uint32_t cs_crc32(uint32_t crc, const void *p, size_t n);
uint64_t cs_xxh64(const void *p, size_t n, uint64_t seed);
void cs_md5(const void *p, size_t n, uint8_t out[16]);

#endif
