/*
 * util.h: small helpers shared by every layer: clocks, uuids, min/max.
 */
#ifndef CS_UTIL_H
#define CS_UTIL_H

#include <stdint.h>
#include <stddef.h>
#include <string.h>

#define CS_MIN(a, b) ((a) < (b) ? (a) : (b))
#define CS_MAX(a, b) ((a) > (b) ? (a) : (b))
#define CS_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Byte strings in unsigned lexicographic order, a prefix first: <0, 0, >0. */
static inline int cs_bytes_cmp(const void *a, size_t an, const void *b, size_t bn)
{
    size_t n = an < bn ? an : bn;
    int c = n ? memcmp(a, b, n) : 0;
    return c ? c : (an > bn) - (an < bn);
}

int64_t cs_now_us(void);          /* wall clock, µs since epoch */
int64_t cs_now_ms(void);
int32_t cs_now_s(void);           /* wall clock, s since epoch (local deletion time unit) */
/* Wall clock in ms from the kernel's tick-updated copy (CLOCK_REALTIME_COARSE:
 * behind by at most a tick, a fifth of the cost here): for bucketing
 * statistics per request, never for timestamps. */
int64_t cs_now_coarse_ms(void);
/* A data rate as Cassandra 4.1 prints a DataRateSpec: 64MiB/s, 1536KiB/s, 10B/s. */
void cs_format_rate(char *out, size_t cap, uint64_t bytes_per_s);
uint64_t cs_mono_ns(void);        /* monotonic */
/* A time in ms since the epoch as Java's Instant.toString prints it (UTC):
 * 2026-11-21T18:52:56.123Z, without the fraction when the ms are 0. */
void cs_format_instant_ms(int64_t ms, char *out, size_t n);
/* The inverse for an ISO-8601 instant in UTC, as Instant.parse reads
 * it: 2026-11-21T18:52:56Z with an optional fraction of 1-9 digits (cut to
 * ms).  Parses s[0..n); 0, or CS_EINVAL. */
int cs_parse_instant_ms(const char *s, size_t n, int64_t *out_ms);
/* Strictly increasing µs timestamps for writes from this process (like Cassandra's
 * ClientState.getTimestamp): max(now, last + 1). Thread-safe. */
int64_t cs_write_ts_us(void);

typedef struct cs_uuid { uint8_t b[16]; } cs_uuid;
void cs_uuid_random(cs_uuid *u);           /* version 4 */
void cs_uuid_timeuuid(cs_uuid *u, int64_t ts_us); /* version 1, unique per call, node/clock random per process */
void cs_uuid_format(const cs_uuid *u, char out[37]);
int cs_uuid_parse(const char *s, size_t n, cs_uuid *u); /* 0 ok, CS_EINVAL */
void cs_random_bytes(void *p, size_t n);   /* getrandom(), falls back to /dev/urandom */

#endif
