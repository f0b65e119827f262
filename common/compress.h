/*
 * compress.h: LZ4 compression of one native protocol frame body, in the
 * LZ4 block format any LZ4_decompress_safe reads.
 */
#ifndef CS_COMPRESS_H
#define CS_COMPRESS_H

/* Compress n bytes of src into dst (cap bytes; LZ4_compressBound(n) always
 * suffices): the compressed length, or 0 if it does not fit.  Bodies up to
 * CS_LZ4_SMALL bytes reuse the calling thread's LZ4 state, where
 * LZ4_compress_default clears a fresh 16 KiB one on every call; larger ones
 * go to LZ4_compress_default.  A /tmp microbenchmark (kv-like rows, other
 * memory touched between calls, 64 different buffers): 256 B 0.74-0.81 ->
 * 0.44-0.59 us, 512 B 0.98-1.13 -> 0.82-0.90 us, but 4 KiB 6.4-7.0 -> 13.4-
 * 16.0 us (a reused table is slower on larger blocks that differ from call
 * to call), so sstable blocks (4 KiB) use LZ4_compress_default. */
#define CS_LZ4_SMALL 512
int cs_lz4_compress(const void *src, void *dst, int n, int cap);

#endif
