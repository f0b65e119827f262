/*
 * datetime.c: timestamp, date, time and duration text forms, as Cassandra's
 * TimestampSerializer, SimpleDateSerializer, TimeSerializer and cql3/Duration
 * parse and print them.  All times are UTC (Cassandra uses the JVM's default
 * zone for zone-less timestamps; servers run in UTC).
 */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "cql/types/types_int.h"
#include "common/util.h"

/* ------------------------------------------------ calendar */

/* Howard Hinnant's days_from_civil, for the proleptic Gregorian calendar. */
int64_t ctype__days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

void ctype__civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t yy = yoe + era * 400;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yy + (*m <= 2);
}

static int days_in_month(int64_t y, int m)
{
    static const int dm[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
    if (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
        return 29;
    return dm[m - 1];
}

/* ------------------------------------------------ small scanner */

typedef struct scan { const char *s; size_t n, i; } scan;

/* Read between min and max digits; -1 if fewer than min. */
static int64_t digits(scan *c, int min, int max, int *count)
{
    int64_t v = 0;
    int k = 0;
    while (c->i < c->n && k < max && isdigit((unsigned char)c->s[c->i])) {
        int d = c->s[c->i] - '0';
        if (v > (INT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
        c->i++;
        k++;
    }
    if (count)
        *count = k;
    return k < min ? -1 : v;
}

static bool peek(scan *c, char ch) { return c->i < c->n && c->s[c->i] == ch; }
static bool take(scan *c, char ch)
{
    if (peek(c, ch)) {
        c->i++;
        return true;
    }
    return false;
}

/* Zone offset in minutes: Z | +hh | +hhmm | +hh:mm | UTC/GMT/UT[+hh:mm].
 * `spaced` says a space preceded it (named zones are only valid then). */
static int parse_offset(scan *c, int64_t *off_min)
{
    *off_min = 0;
    if (take(c, 'Z'))
        return 0;
    static const char *const names[] = { "UTC", "GMT", "UT" };
    for (size_t k = 0; k < 3; k++) {
        size_t l = strlen(names[k]);
        if (c->n - c->i >= l && strncmp(c->s + c->i, names[k], l) == 0) {
            c->i += l;
            if (c->i == c->n)
                return 0;
            break;
        }
    }
    int sign;
    if (take(c, '+'))
        sign = 1;
    else if (take(c, '-'))
        sign = -1;
    else
        return -1;
    int64_t hh = digits(c, 2, 2, NULL), mm = 0;
    if (hh < 0 || hh > 18)
        return -1;
    if (take(c, ':')) {
        if ((mm = digits(c, 2, 2, NULL)) < 0)
            return -1;
    } else if (c->i < c->n) {
        if ((mm = digits(c, 2, 2, NULL)) < 0)
            return -1;
    }
    if (mm > 59)
        return -1;
    *off_min = sign * (hh * 60 + mm);
    return 0;
}

/* ------------------------------------------------ timestamp */

int ctype__parse_timestamp(const char *s, size_t n, int64_t *ms)
{
    if (n == 3 && strncasecmp(s, "now", 3) == 0) {
        *ms = cs_now_ms();
        return 0;
    }
    /* ms since epoch: ^-?\d+$ */
    size_t i = (n > 0 && s[0] == '-') ? 1 : 0;
    bool alldig = i < n;
    for (size_t k = i; k < n; k++)
        alldig = alldig && isdigit((unsigned char)s[k]);
    if (alldig) {
        uint64_t v = 0;
        for (size_t k = i; k < n; k++) {
            if (v > (UINT64_MAX - 9) / 10)
                return CS_EINVAL;
            v = v * 10 + (uint64_t)(s[k] - '0');
        }
        if (i ? v > (uint64_t)INT64_MAX + 1 : v > (uint64_t)INT64_MAX)
            return CS_EINVAL;
        *ms = i ? (int64_t)(0 - v) : (int64_t)v;
        return 0;
    }
    scan c = { s, n, 0 };
    int cnt;
    int64_t y = digits(&c, 1, 9, &cnt);
    if (y < 0 || !take(&c, '-'))
        return CS_EINVAL;
    int64_t mo = digits(&c, 1, 2, NULL);
    if (mo < 1 || mo > 12 || !take(&c, '-'))
        return CS_EINVAL;
    int64_t d = digits(&c, 1, 2, NULL);
    if (d < 1 || d > days_in_month(y, (int)mo))
        return CS_EINVAL;
    int64_t hh = 0, mi = 0, ss = 0, frac_ms = 0, off = 0;
    if (peek(&c, 'T') || (peek(&c, ' ') && c.i + 1 < n && isdigit((unsigned char)s[c.i + 1]))) {
        c.i++;
        hh = digits(&c, 1, 2, NULL);
        if (hh < 0 || hh > 23 || !take(&c, ':'))
            return CS_EINVAL;
        mi = digits(&c, 1, 2, NULL);
        if (mi < 0 || mi > 59)
            return CS_EINVAL;
        if (take(&c, ':')) {
            ss = digits(&c, 1, 2, NULL);
            if (ss < 0 || ss > 59)
                return CS_EINVAL;
        }
        if (take(&c, '.')) {
            int k;
            int64_t f = digits(&c, 0, 9, &k);
            if (f < 0)
                return CS_EINVAL;
            while (k < 3) {
                f *= 10;
                k++;
            }
            while (k > 3) {
                f /= 10;
                k--;
            }
            frac_ms = f;
        }
    }
    if (c.i < n) {
        take(&c, ' ');
        if (parse_offset(&c, &off) != 0 || c.i != n)
            return CS_EINVAL;
    }
    int64_t days = ctype__days_from_civil(y, (int)mo, (int)d);
    *ms = ((days * 24 + hh) * 60 + mi - off) * 60000 + ss * 1000 + frac_ms;
    return 0;
}

static void put_year(cs_buf *out, int64_t y, bool plus_over_4)
{
    if (y < 0)
        ctype__printf(out, "-%04lld", (long long)-y);
    else if (y > 9999 && plus_over_4)
        ctype__printf(out, "+%lld", (long long)y);
    else
        ctype__printf(out, "%04lld", (long long)y);
}

/* yyyy-MM-dd'T'HH:mm:ss.SSSZ (or with a space for JSON), UTC. */
void ctype__fmt_timestamp(int64_t ms, bool json, cs_buf *out)
{
    int64_t days = ms / 86400000, rem = ms % 86400000;
    if (rem < 0) {
        rem += 86400000;
        days--;
    }
    int64_t y;
    int m, d;
    ctype__civil_from_days(days, &y, &m, &d);
    /* Java's "yyyy" is the year of era: 1 BC is 0001, no sign below year 1 */
    put_year(out, y <= 0 ? 1 - y : y, true);
    ctype__printf(out, "-%02d-%02d%c%02d:%02d:%02d.%03dZ", m, d, json ? ' ' : 'T',
                  (int)(rem / 3600000), (int)(rem / 60000 % 60), (int)(rem / 1000 % 60), (int)(rem % 1000));
}

/* ------------------------------------------------ date */

int ctype__parse_date(const char *s, size_t n, uint32_t *out, cs_error *e)
{
    size_t i = (n > 0 && s[0] == '-') ? 1 : 0;
    bool alldig = i < n;
    for (size_t k = i; k < n; k++)
        alldig = alldig && isdigit((unsigned char)s[k]);
    if (alldig) {
        /* raw unsigned day count, epoch at 2^31 */
        bool ok = !i && n - i <= 10;
        uint64_t v = 0;
        for (size_t k = i; ok && k < n; k++)
            v = v * 10 + (uint64_t)(s[k] - '0');
        if (!ok || v > 0xFFFFFFFFull)
            return cs_error_set(e, CS_ERR_INVALID, "Unable to make unsigned int (for date) from: '%.*s'",
                                (int)n, s);
        *out = (uint32_t)v;
        return 0;
    }
    scan c = { s, n, 0 };
    int sign = 1, cnt;
    bool plus = false, minus = false;
    if (take(&c, '+'))
        plus = true;
    else if (take(&c, '-'))
        minus = true;
    if (minus)
        sign = -1;
    int64_t y = digits(&c, 4, 10, &cnt);
    /* ISO_LOCAL_DATE year: 4 digits unsigned, more only with a sign; '+' only above 4 digits */
    bool ok = y >= 0 && (cnt == 4 ? !plus : (plus || minus));
    int64_t mo = -1, d = -1;
    if (ok && take(&c, '-'))
        mo = digits(&c, 2, 2, NULL);
    if (ok && mo >= 1 && mo <= 12 && take(&c, '-'))
        d = digits(&c, 2, 2, NULL);
    y *= sign;
    if (!ok || mo < 1 || mo > 12 || d < 1 || c.i != n || d > days_in_month(y, (int)mo))
        return cs_error_set(e, CS_ERR_INVALID, "Unable to coerce '%.*s' to a formatted date (long)", (int)n, s);
    int64_t days = ctype__days_from_civil(y, (int)mo, (int)d);
    if (days < INT32_MIN)
        return cs_error_set(e, CS_ERR_INVALID, "Input date %.*s is less than min supported date -5877641-06-23T00:00Z",
                            (int)n, s);
    if (days > INT32_MAX)
        return cs_error_set(e, CS_ERR_INVALID, "Input date %.*s is greater than max supported date 5881580-07-11T00:00Z",
                            (int)n, s);
    *out = (uint32_t)(days + 2147483648LL);
    return 0;
}

/* LocalDate.toString(): yyyy-mm-dd, '+' above 9999. */
void ctype__fmt_date(uint32_t raw, cs_buf *out)
{
    int64_t days = (int64_t)raw - 2147483648LL;
    int64_t y;
    int m, d;
    ctype__civil_from_days(days, &y, &m, &d);
    put_year(out, y, true);
    ctype__printf(out, "-%02d-%02d", m, d);
}

/* ------------------------------------------------ time */

int ctype__parse_time(const char *s, size_t n, int64_t *out, cs_error *e)
{
    size_t i = (n > 0 && s[0] == '-') ? 1 : 0;
    bool alldig = i < n;
    for (size_t k = i; k < n; k++)
        alldig = alldig && isdigit((unsigned char)s[k]);
    if (alldig) {
        uint64_t v = 0;
        bool ok = !i && n <= 18;
        for (size_t k = 0; ok && k < n; k++)
            v = v * 10 + (uint64_t)(s[k] - '0');
        if (!ok || v >= 86400000000000ULL)
            return cs_error_set(e, CS_ERR_INVALID, "Unable to make long (for time) from: '%.*s'", (int)n, s);
        *out = (int64_t)v;
        return 0;
    }
    /* hh:mm:ss[.fffffffff], surrounding blanks trimmed */
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        n--;
    size_t b = 0;
    while (b < n && isspace((unsigned char)s[b]))
        b++;
    scan c = { s + b, n - b, 0 };
    int64_t hh = digits(&c, 1, 9, NULL), mi = -1, ss = -1, ns = 0;
    if (hh >= 0 && take(&c, ':'))
        mi = digits(&c, 1, 9, NULL);
    if (mi >= 0 && take(&c, ':'))
        ss = digits(&c, 1, 9, NULL);
    bool ok = hh >= 0 && hh < 24 && mi >= 0 && mi < 60 && ss >= 0 && ss < 60;
    if (ok && take(&c, '.')) {
        int k;
        ns = digits(&c, 1, 9, &k);
        ok = ns >= 0;
        while (ok && k < 9) {
            ns *= 10;
            k++;
        }
    }
    if (!ok || c.i != c.n)
        return cs_error_set(e, CS_ERR_INVALID, "(TimeType) Unable to coerce '%.*s' to a formatted time (long)",
                            (int)n, s);
    *out = ((hh * 60 + mi) * 60 + ss) * 1000000000LL + ns;
    return 0;
}

/* TimeSerializer.toString: HH:MM:SS.nnnnnnnnn. */
void ctype__fmt_time(int64_t ns, cs_buf *out)
{
    if (ns < 0)
        ns = 0;
    int64_t s = ns / 1000000000LL;
    ctype__printf(out, "%02d:%02d:%02d.%09lld", (int)(s / 3600), (int)(s / 60 % 60), (int)(s % 60),
                  (long long)(ns % 1000000000LL));
}

/* ------------------------------------------------ duration */

/* Cassandra's unsigned vint (utils/vint/VIntCoding): the count of leading 1
 * bits of the first byte is the number of extra bytes; big-endian value. */
static void put_uvint(cs_buf *out, uint64_t v)
{
    int extra = 0;
    while (extra < 8 && (extra == 7 ? (v >> 56) != 0 : (v >> (7 * (extra + 1))) != 0))
        extra++;
    uint8_t b[9];
    if (extra == 8) {
        b[0] = 0xFF;
        for (int k = 0; k < 8; k++)
            b[1 + k] = (uint8_t)(v >> (56 - 8 * k));
        cs_buf_put(out, b, 9);
        return;
    }
    for (int k = extra; k >= 0; k--) {
        b[k] = (uint8_t)v;
        v >>= 8;
    }
    b[0] |= (uint8_t)(0xFF << (8 - extra));
    cs_buf_put(out, b, (size_t)extra + 1);
}

void ctype__put_vint(cs_buf *out, int64_t v)
{
    put_uvint(out, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

int ctype__get_vint(const uint8_t *v, size_t n, size_t *pos, int64_t *out)
{
    if (*pos >= n)
        return -1;
    uint8_t f = v[*pos];
    int extra = 0;
    while (extra < 8 && (f & (0x80 >> extra)))
        extra++;
    if (n - *pos < (size_t)extra + 1)
        return -1;
    uint64_t u = extra == 8 ? 0 : (uint64_t)(f & (0xFF >> extra));
    for (int k = 1; k <= extra; k++)
        u = (u << 8) | v[*pos + (size_t)k];
    *pos += (size_t)extra + 1;
    *out = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
    return 0;
}

void ctype__put_duration(cs_buf *out, int32_t months, int32_t days, int64_t nanos)
{
    ctype__put_vint(out, months);
    ctype__put_vint(out, days);
    ctype__put_vint(out, nanos);
}

int ctype__get_duration(const uint8_t *v, size_t n, int64_t *months, int64_t *days, int64_t *nanos)
{
    size_t pos = 0;
    if (ctype__get_vint(v, n, &pos, months) || ctype__get_vint(v, n, &pos, days) ||
        ctype__get_vint(v, n, &pos, nanos) || pos != n)
        return -1;
    return 0;
}

typedef struct dur_builder {
    bool neg;
    int64_t months, days, nanos;
    int unit;          /* index of the last unit added (order check) */
    cs_error *e;
} dur_builder;

static const char *const unit_names[] = { "", "years", "months", "weeks", "days", "hours", "minutes",
                                          "seconds", "milliseconds", "microseconds", "nanoseconds" };

/* Add `num` of unit index u (1=y ... 10=ns), with Duration.Builder's checks. */
static int dur_add(dur_builder *b, int u, int64_t num)
{
    if (u == b->unit)
        return cs_error_set(b->e, CS_ERR_INVALID, "Invalid duration. The %s are specified multiple times", unit_names[u]);
    if (u < b->unit)
        return cs_error_set(b->e, CS_ERR_INVALID, "Invalid duration. The %s should be after %s",
                            unit_names[b->unit], unit_names[u]);
    b->unit = u;
    static const int64_t per[] = { 0, 12, 1, 7, 1, 3600000000000LL, 60000000000LL, 1000000000LL, 1000000LL, 1000LL, 1 };
    const char *what;
    int64_t limit;
    if (u <= 2) {
        what = "months";
        limit = (INT32_MAX - b->months) / per[u];
    } else if (u <= 4) {
        what = "days";
        limit = (INT32_MAX - b->days) / per[u];
    } else {
        what = "nanoseconds";
        limit = (INT64_MAX - b->nanos) / per[u];
    }
    if (num > limit)
        return cs_error_set(b->e, CS_ERR_INVALID,
                            "Invalid duration. The total number of %s must be less or equal to %d", what, INT32_MAX);
    if (u <= 2)
        b->months += num * per[u];
    else if (u <= 4)
        b->days += num * per[u];
    else
        b->nanos += num * per[u];
    return 0;
}

static int dur_fail(cs_error *e, const char *s, size_t n)
{
    return cs_error_set(e, CS_ERR_INVALID, "Unable to convert '%.*s' to a duration", (int)n, s);
}

/* Read a run of digits as a long; -1 if none or overflow. */
static int64_t dnum(scan *c)
{
    int k;
    int64_t v = digits(c, 1, 19, &k);
    if (v >= 0 && c->i < c->n && isdigit((unsigned char)c->s[c->i]))
        return -1;
    return v;
}

int ctype__parse_duration(const char *in, size_t n, int32_t *months, int32_t *days, int64_t *nanos, cs_error *e)
{
    dur_builder b = { .e = e };
    const char *s = in;
    if (n > 0 && s[0] == '-') {
        b.neg = true;
        s++;
        n--;
    }
    scan c = { s, n, 0 };
    int rc = 0;
    if (n > 0 && s[0] == 'P') {
        c.i = 1;
        if (s[n - 1] == 'W') {
            int64_t w = dnum(&c);
            if (w < 0 || c.i != n - 1)
                return dur_fail(e, s, n);
            rc = dur_add(&b, 3, w);
        } else if (memchr(s, '-', n)) {
            /* P yyyy-mm-ddThh:mm:ss */
            int64_t f[6];
            static const char seps[] = "--T::";
            for (int k = 0; k < 6; k++) {
                int cnt;
                f[k] = digits(&c, k == 0 ? 4 : 2, k == 0 ? 4 : 2, &cnt);
                if (f[k] < 0 || (k < 5 && !take(&c, seps[k])))
                    return dur_fail(e, s, n);
            }
            if (c.i != n)
                return dur_fail(e, s, n);
            for (int k = 0; k < 6 && !rc; k++)
                rc = dur_add(&b, k == 0 ? 1 : k == 1 ? 2 : k + 2, f[k]);
        } else {
            /* PnYnMnDTnHnMnS */
            static const char date_units[] = "YMD", time_units[] = "HMS";
            static const int date_idx[] = { 1, 2, 4 }, time_idx[] = { 5, 6, 7 };
            int64_t got[8];
            int which[8], ng = 0, pos = 0;
            bool in_time = false;
            while (c.i < n && !rc) {
                if (!in_time && take(&c, 'T')) {
                    in_time = true;
                    pos = 0;
                    continue;
                }
                int64_t v = dnum(&c);
                if (v < 0 || c.i >= n)
                    return dur_fail(e, s, n);
                char u = s[c.i++];
                const char *units = in_time ? time_units : date_units;
                const int *idx = in_time ? time_idx : date_idx;
                int k = pos;
                while (k < 3 && units[k] != u)
                    k++;
                if (k == 3 || ng == 8)
                    return dur_fail(e, s, n);
                pos = k + 1;
                got[ng] = v;
                which[ng++] = idx[k];
            }
            for (int k = 0; k < ng && !rc; k++)
                rc = dur_add(&b, which[k], got[k]);
        }
    } else {
        /* standard: (\d+unit)+ */
        if (n == 0)
            return dur_fail(e, s, n);
        while (c.i < n && !rc) {
            int64_t v = dnum(&c);
            if (v < 0 || c.i >= n)
                return dur_fail(e, s, n);
            const char *u = s + c.i;
            size_t left = n - c.i;
            int idx;
            size_t ul = 2;
            if (left >= 2 && strncasecmp(u, "mo", 2) == 0)
                idx = 2;
            else if (left >= 2 && strncasecmp(u, "ms", 2) == 0)
                idx = 8;
            else if (left >= 2 && strncasecmp(u, "us", 2) == 0)
                idx = 9;
            else if (left >= 3 && (uint8_t)u[0] == 0xC2 && (uint8_t)u[1] == 0xB5 && (u[2] == 's' || u[2] == 'S')) {
                idx = 9;
                ul = 3;
            } else if (left >= 2 && strncasecmp(u, "ns", 2) == 0)
                idx = 10;
            else {
                ul = 1;
                switch (tolower((unsigned char)u[0])) {
                case 'y': idx = 1; break;
                case 'w': idx = 3; break;
                case 'd': idx = 4; break;
                case 'h': idx = 5; break;
                case 'm': idx = 6; break;
                case 's': idx = 7; break;
                default: return dur_fail(e, s, n);
                }
            }
            c.i += ul;
            rc = dur_add(&b, idx, v);
        }
    }
    if (rc)
        return rc;
    *months = (int32_t)(b.neg ? -b.months : b.months);
    *days = (int32_t)(b.neg ? -b.days : b.days);
    *nanos = b.neg ? -b.nanos : b.nanos;
    return 0;
}

static int64_t dur_part(cs_buf *out, int64_t v, int64_t div, const char *unit)
{
    if (v == 0 || v < div)
        return v;
    ctype__printf(out, "%lld%s", (long long)(v / div), unit);
    return v % div;
}

/* cql3/Duration.toString: e.g. 1y2mo3d4h5m6s7ms8us9ns, '-' if negative. */
void ctype__fmt_duration(int32_t months, int32_t days, int64_t nanos, cs_buf *out)
{
    if (months < 0 || days < 0 || nanos < 0)
        cs_buf_put_u8(out, '-');
    int64_t mo = months < 0 ? -(int64_t)months : months;
    int64_t r = dur_part(out, mo, 12, "y");
    dur_part(out, r, 1, "mo");
    dur_part(out, days < 0 ? -(int64_t)days : days, 1, "d");
    if (nanos != 0) {
        uint64_t an = nanos < 0 ? (uint64_t)0 - (uint64_t)nanos : (uint64_t)nanos;
        int64_t x = (int64_t)(an > (uint64_t)INT64_MAX ? INT64_MAX : an);
        x = dur_part(out, x, 3600000000000LL, "h");
        x = dur_part(out, x, 60000000000LL, "m");
        x = dur_part(out, x, 1000000000LL, "s");
        x = dur_part(out, x, 1000000LL, "ms");
        x = dur_part(out, x, 1000LL, "us");
        dur_part(out, x, 1, "ns");
    }
}

/* ------------------------------------------------ temporal arithmetic */

static int64_t floor_div(int64_t a, int64_t b)
{
    return a >= 0 ? a / b : -((-(a + 1)) / b) - 1;
}

/* A duration value's parts, months and days within Java ints; -1 if not. */
static int dur_parts32(const uint8_t *dur, size_t dn, int64_t *mo, int64_t *d, int64_t *ns)
{
    if (ctype__get_duration(dur, dn, mo, d, ns) != 0 || *mo < INT32_MIN || *mo > INT32_MAX || *d < INT32_MIN ||
        *d > INT32_MAX)
        return -1;
    return 0;
}

/* CS_EUSER with fmt's one %s the duration as Duration.toString prints it. */
static int dur_text_error(cs_error *e, const char *fmt, int64_t mo, int64_t d, int64_t ns)
{
    cs_buf txt;
    cs_buf_init(&txt);
    ctype__fmt_duration((int32_t)mo, (int32_t)d, ns, &txt);
    cs_buf_put_u8(&txt, 0);
    cs_error_set(e, CS_ERR_INVALID, fmt, txt.err ? "" : (const char *)txt.p);
    cs_buf_destroy(&txt);
    return CS_EUSER;
}

/* Duration.add: ms plus months, days and nanoseconds (UTC). */
static int64_t time_add(int64_t ms, int64_t months, int64_t days, int64_t nanos)
{
    /* Java long arithmetic: wraps */
    if (months == 0)
        return (int64_t)((uint64_t)ms + (uint64_t)days * 86400000u + (uint64_t)(nanos / 1000000));
    /* GregorianCalendar.add(MONTH): same time of day, the day of month
     * kept unless past the new month's end; then DAY_OF_MONTH, then
     * MILLISECOND with (int) (nanos / 1e6).  (Calendar's Julian dates
     * before 1582-10-15 are not reproduced: proleptic Gregorian here.) */
    int64_t day = floor_div(ms, 86400000);
    int64_t tod = ms - day * 86400000;
    int64_t y;
    int m, d;
    ctype__civil_from_days(day, &y, &m, &d);
    int64_t mi = y * 12 + (m - 1) + months;
    y = floor_div(mi, 12);
    m = (int)(mi - y * 12) + 1;
    int dim = days_in_month(y, m);
    if (d > dim)
        d = dim;
    int64_t t = ctype__days_from_civil(y, m, d) * 86400000 + tod;
    t = (int64_t)((uint64_t)t + (uint64_t)days * 86400000u);
    return (int64_t)((uint64_t)t + (uint64_t)(int64_t)(int32_t)(uint32_t)(uint64_t)(nanos / 1000000));
}

int ctype_temporal_add_duration(ctype_kind kind, const uint8_t *v, size_t n, const uint8_t *dur, size_t dn,
                                bool sub, cs_buf *out, cs_error *e)
{
    int64_t mo, d, ns;
    if (dur_parts32(dur, dn, &mo, &d, &ns) != 0)
        return CS_EINVAL;
    bool is_date = kind == CT_DATE;
    if (is_date ? ns != 0 : ns % 1000000 != 0)
        return dur_text_error(e, is_date ? "The duration must have a day precision. Was: %s"
                                         : "The duration must have a millisecond precision. Was: %s", mo, d, ns);
    int64_t ms;
    if (is_date) {
        if (n != 4)
            return CS_EINVAL;
        ms = ((int64_t)cs_be32(v) - ((int64_t)1 << 31)) * 86400000;   /* dayToTimeInMillis */
    } else {
        if (n != 8)
            return CS_EINVAL;
        ms = (int64_t)cs_be64(v);
    }
    /* substractFrom negates each part as Java ints and long */
    if (sub) {
        mo = (int32_t)(0u - (uint32_t)mo);
        d = (int32_t)(0u - (uint32_t)d);
        ns = (int64_t)(0 - (uint64_t)ns);
    }
    int64_t r = time_add(ms, mo, d, ns);
    if (is_date) {
        /* timeInMillisToDay: Duration.ofMillis(ms).toDays() (towards zero) - Integer.MIN_VALUE, as an int */
        uint8_t b[4];
        cs_st32(b, (uint32_t)((uint64_t)(r / 86400000) + ((uint64_t)1 << 31)));
        cs_buf_put(out, b, 4);
    } else {
        uint8_t b[8];
        cs_st64(b, (uint64_t)r);
        cs_buf_put(out, b, 8);
    }
    return out->err ? CS_ENOMEM : 0;
}

/* ------------------------------------------------ floor() */

static void year_month(int64_t ms, int64_t *y, int *m)
{
    int d;
    ctype__civil_from_days(floor_div(ms, 86400000), y, m, &d);
}

int ctype_floor_timestamp(int64_t t_ms, const uint8_t *dur, size_t dn, int64_t start_ms, bool is_date,
                          int64_t *out_ms, cs_error *e)
{
    int64_t mo, d, ns;
    if (dur_parts32(dur, dn, &mo, &d, &ns) != 0)
        return CS_EINVAL;
    if (is_date ? ns != 0 : ns % 1000000 != 0)
        return dur_text_error(e, is_date ? "The floor on date values cannot be computed for the %s duration as "
                                           "precision is below 1 day"
                                         : "The floor cannot be computed for the %s duration as precision is "
                                           "below 1 millisecond", mo, d, ns);
    if (start_ms > t_ms)
        return cs_error_set(e, CS_ERR_INVALID, "The floor function starting time is greater than the provided time");
    if (ns < 0 || d < 0 || mo < 0)
        return cs_error_set(e, CS_ERR_INVALID, "Negative durations are not supported by the floor function");
    int64_t dur_ms = (int64_t)((uint64_t)d * 86400000u + (uint64_t)(ns / 1000000));
    if (mo == 0) {
        if (dur_ms == 0) {
            *out_ms = t_ms;
            return 0;
        }
        int64_t delta = (int64_t)((uint64_t)t_ms - (uint64_t)start_ms) % dur_ms;
        *out_ms = t_ms - delta;
        return 0;
    }
    /* Calendar: the months between start and time give a first multiplier,
     * stepped back while days and milliseconds overshoot */
    int64_t y, sy;
    int m, sm;
    year_month(t_ms, &y, &m);
    year_month(start_ms, &sy, &sm);
    int32_t in_months = (int32_t)((y - sy) * 12 + (m - sm));
    int32_t mult = in_months / (int32_t)mo;
    int64_t cal = time_add(start_ms, (int32_t)((uint32_t)mult * (uint32_t)mo), 0, 0);
    if (d == 0 && ns == 0) {
        *out_ms = cal;
        return 0;
    }
    int64_t fl = (int64_t)((uint64_t)cal + (uint64_t)(int64_t)mult * (uint64_t)dur_ms);
    while (fl > t_ms) {
        mult--;
        cal = time_add(cal, -mo, 0, 0);
        fl = (int64_t)((uint64_t)cal + (uint64_t)(int64_t)mult * (uint64_t)dur_ms);
    }
    *out_ms = fl > start_ms ? fl : start_ms;
    return 0;
}

int ctype_floor_time(int64_t t_ns, const uint8_t *dur, size_t dn, int64_t *out_ns, cs_error *e)
{
    int64_t mo, d, ns;
    if (ctype__get_duration(dur, dn, &mo, &d, &ns) != 0)
        return CS_EINVAL;
    if (ns < 0 || d < 0 || mo < 0)
        return cs_error_set(e, CS_ERR_INVALID, "Negative durations are not supported by the floor function");
    if (mo != 0 || d != 0 || ns > 86400000000000LL)
        return cs_error_set(e, CS_ERR_INVALID,
                            "For time values, the floor can only be computed for durations smaller that a day");
    *out_ns = ns == 0 ? t_ns : t_ns - t_ns % ns;
    return 0;
}
