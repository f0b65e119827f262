/* util.c: clocks, write timestamps, uuids, randomness (see util.h). */
#include "common/util.h"
#include "common/err.h"
#include "common/buf.h"
#include <fcntl.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

int64_t cs_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}
int64_t cs_now_ms(void) { return cs_now_us() / 1000; }
void cs_format_rate(char *out, size_t cap, uint64_t bytes_per_s)
{
    if (bytes_per_s % (1024 * 1024) == 0)
        snprintf(out, cap, "%lluMiB/s", (unsigned long long)(bytes_per_s >> 20));
    else if (bytes_per_s % 1024 == 0)
        snprintf(out, cap, "%lluKiB/s", (unsigned long long)(bytes_per_s >> 10));
    else
        snprintf(out, cap, "%lluB/s", (unsigned long long)bytes_per_s);
}

int64_t cs_now_coarse_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME_COARSE, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
/* The same clock as cs_now_us: a write derives its "now" in seconds from its
 * microsecond timestamp, and a read's ttl() and expiry test must not see a
 * second the write has not reached (the coarse clock lags by a tick: ttl()
 * read 1001 for a TTL of 1000 at a second's edge). */
int32_t cs_now_s(void) { return (int32_t)(cs_now_us() / 1000000); }

uint64_t cs_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static _Atomic int64_t last_write_ts;

int64_t cs_write_ts_us(void)
{
    int64_t now = cs_now_us();
    int64_t last = atomic_load(&last_write_ts);
    for (;;) {
        int64_t next = now > last ? now : last + 1;
        if (atomic_compare_exchange_weak(&last_write_ts, &last, next))
            return next;
    }
}

void cs_random_bytes(void *p, size_t n)
{
    unsigned char *d = p;
    while (n > 0) {
        ssize_t r = getrandom(d, n, 0);
        if (r <= 0) {
            int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
            if (fd >= 0) {
                r = read(fd, d, n);
                close(fd);
            }
            if (r <= 0) { /* last resort: time-based, never expected */
                uint64_t x = cs_mono_ns() ^ (uint64_t)cs_now_us();
                for (size_t i = 0; i < n; i++) { x = x * 6364136223846793005ull + 1; d[i] = (unsigned char)(x >> 56); }
                return;
            }
        }
        d += r;
        n -= (size_t)r;
    }
}

void cs_uuid_random(cs_uuid *u)
{
    cs_random_bytes(u->b, 16);
    u->b[6] = (uint8_t)((u->b[6] & 0x0F) | 0x40);
    u->b[8] = (uint8_t)((u->b[8] & 0x3F) | 0x80);
}

/* Version 1 uuids: 60-bit count of 100 ns since 1582-10-15, a random clock
 * sequence and node chosen once per process.  Calls within the same 100 ns
 * tick get consecutive ticks so every uuid is unique and increasing. */
#define UUID_EPOCH_OFFSET 0x01B21DD213814000LL
static pthread_mutex_t tu_mu = PTHREAD_MUTEX_INITIALIZER;
static int64_t tu_last;
static uint8_t tu_node[8];
static int tu_init;

void cs_uuid_timeuuid(cs_uuid *u, int64_t ts_us)
{
    pthread_mutex_lock(&tu_mu);
    if (!tu_init) {
        cs_random_bytes(tu_node, 8);
        tu_node[0] = (uint8_t)((tu_node[0] & 0x3F) | 0x80); /* variant */
        tu_node[2] |= 0x01;                                   /* multicast bit: random node */
        tu_init = 1;
    }
    int64_t t = ts_us * 10 + UUID_EPOCH_OFFSET;
    if (t <= tu_last)
        t = tu_last + 1;
    tu_last = t;
    pthread_mutex_unlock(&tu_mu);
    uint64_t ut = (uint64_t)t;
    cs_st32(u->b, (uint32_t)ut);
    cs_st16(u->b + 4, (uint16_t)(ut >> 32));
    cs_st16(u->b + 6, (uint16_t)(((ut >> 48) & 0x0FFF) | 0x1000));
    memcpy(u->b + 8, tu_node, 8);
}

void cs_uuid_format(const cs_uuid *u, char out[37])
{
    static const char hx[] = "0123456789abcdef";
    int j = 0;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            out[j++] = '-';
        out[j++] = hx[u->b[i] >> 4];
        out[j++] = hx[u->b[i] & 15];
    }
    out[j] = 0;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int cs_uuid_parse(const char *s, size_t n, cs_uuid *u)
{
    if (n != 36)
        return CS_EINVAL;
    int k = 0;
    for (size_t i = 0; i < 36; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (s[i] != '-')
                return CS_EINVAL;
            continue;
        }
        int h = hexval(s[i]), l = i + 1 < 36 ? hexval(s[i + 1]) : -1;
        if (h < 0 || l < 0)
            return CS_EINVAL;
        u->b[k++] = (uint8_t)(h << 4 | l);
        i++;
    }
    return k == 16 ? 0 : CS_EINVAL;
}

void cs_format_instant_ms(int64_t ms, char *out, size_t n)
{
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    char base[32];
    strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
    if (ms % 1000)
        snprintf(out, n, "%s.%03dZ", base, (int)(ms % 1000));
    else
        snprintf(out, n, "%sZ", base);
}

/* n digits at s as a number, or -1. */
static int digits(const char *s, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

int cs_parse_instant_ms(const char *s, size_t n, int64_t *out_ms)
{
    /* YYYY-MM-DDTHH:MM:SS then [.f{1,9}] then Z */
    if (n < 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':') return CS_EINVAL;
    int y = digits(s, 4), mo = digits(s + 5, 2), d = digits(s + 8, 2);
    int h = digits(s + 11, 2), mi = digits(s + 14, 2), sec = digits(s + 17, 2);
    if (y < 0 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59)
        return CS_EINVAL;
    static const int mdays[12] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (d > mdays[mo - 1] || (mo == 2 && d == 29 && !leap)) return CS_EINVAL;
    size_t i = 19;
    int ms = 0;
    if (s[i] == '.') {
        size_t f = ++i;
        while (i < n && s[i] >= '0' && s[i] <= '9') i++;
        if (i == f || i - f > 9) return CS_EINVAL;
        for (size_t k = 0; k < 3; k++) ms = ms * 10 + (f + k < i ? s[f + k] - '0' : 0);
    }
    if (i + 1 != n || s[i] != 'Z') return CS_EINVAL;
    /* days since the epoch of a proleptic Gregorian date (civil_from_days inverted) */
    int yy = mo <= 2 ? y - 1 : y;
    int64_t era = (yy >= 0 ? yy : yy - 399) / 400;
    int64_t yoe = yy - era * 400;
    int64_t doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    int64_t days = era * 146097 + doe - 719468;
    *out_ms = ((days * 24 + h) * 60 + mi) * 60000 + (int64_t)sec * 1000 + ms;
    return 0;
}
