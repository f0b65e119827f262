/*
 * compress.c: see compress.h.  The state is the thread's own (each request
 * loop compresses its own frames).
 *
 * LZ4_resetStream_fast before each block drops the previous block as a
 * dictionary without clearing the 16 KiB hash table: it moves the stream's
 * offset on by 64 KiB, so entries left from earlier blocks fall outside the
 * new block's window and are never taken as matches (lz4.h: a stream reset
 * "fast" starts a new, independent chain).
 *
 * Same bytes in, same bytes out, whatever the thread compressed before: a
 * table compressing at offset 0 (fresh, or cleared by LZ4 itself once the
 * offset passes 1 GiB) also tries its empty slots, which point at the
 * block's first byte, and so can pick other matches than a reset one.
 * state_fresh therefore compresses one byte after clearing, so that every
 * block is compressed by a reset stream at a non-zero offset, and clears
 * again long before LZ4 would (tl_offset tracks the stream's offset).
 * (Test compress/same_bytes_whatever_came_before.)
 */
#include "common/compress.h"

#include <lz4.h>
#include <stdbool.h>
#include <stdint.h>

#define OFFSET_RENEW (512u << 20)    /* well below LZ4's own 1 GiB clearing */

static _Thread_local LZ4_stream_t tl_state;
static _Thread_local bool tl_ready;
static _Thread_local uint64_t tl_offset;

static void state_fresh(void)
{
    char one = 0, out[16];
    LZ4_initStream(&tl_state, sizeof tl_state);
    LZ4_compress_fast_continue(&tl_state, &one, out, 1, (int)sizeof out, 1);
    tl_offset = 1;
    tl_ready = true;
}

int cs_lz4_compress(const void *src, void *dst, int n, int cap)
{
    if (n > CS_LZ4_SMALL)
        return LZ4_compress_default((const char *)src, (char *)dst, n, cap);
    if (!tl_ready || tl_offset > OFFSET_RENEW)
        state_fresh();
    LZ4_resetStream_fast(&tl_state);
    tl_offset += 65536u + (uint64_t)(n > 0 ? n : 0);
    int c = LZ4_compress_fast_continue(&tl_state, (const char *)src, (char *)dst, n, cap, 1);
    if (c <= 0)
        tl_ready = false;   /* lz4.h: after an error the stream is undefined; start afresh */
    return c > 0 ? c : 0;
}
