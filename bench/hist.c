/*
 * hist.c: log-linear latency histogram (see bench.h).  Bucket index: the
 * power of two of the value selects a row, the next 5 bits a sub-bucket; the
 * first row holds 0..31 exactly.
 */
#include "bench/bench.h"
#include <string.h>

void bench_hist_init(bench_hist *h)
{
    memset(h, 0, sizeof(*h));
    h->min_ns = UINT64_MAX;
}

static int bucket_of(uint64_t v)
{
    if (v < HIST_SUB)
        return (int)v;
    int msb = 63 - __builtin_clzll(v);          /* >= 5 */
    int row = msb - 4;                           /* 1.. */
    int sub = (int)((v >> (msb - 5)) & (HIST_SUB - 1));
    int idx = row * HIST_SUB + sub;
    return idx >= HIST_EXP * HIST_SUB ? HIST_EXP * HIST_SUB - 1 : idx;
}

/* Upper edge of a bucket (reported value: conservative). */
static uint64_t bucket_value(int idx)
{
    int row = idx / HIST_SUB, sub = idx % HIST_SUB;
    if (row == 0)
        return (uint64_t)sub;
    int msb = row + 4;
    uint64_t base = (uint64_t)1 << msb;
    uint64_t step = (uint64_t)1 << (msb - 5);
    return base + (uint64_t)sub * step + step - 1;
}

void bench_hist_record(bench_hist *h, uint64_t ns)
{
    h->counts[bucket_of(ns)]++;
    h->n++;
    h->sum_ns += (double)ns;
    if (ns > h->max_ns) h->max_ns = ns;
    if (ns < h->min_ns) h->min_ns = ns;
}

void bench_hist_merge(bench_hist *into, const bench_hist *from)
{
    for (int i = 0; i < HIST_EXP * HIST_SUB; i++)
        into->counts[i] += from->counts[i];
    into->n += from->n;
    into->sum_ns += from->sum_ns;
    if (from->max_ns > into->max_ns) into->max_ns = from->max_ns;
    if (from->min_ns < into->min_ns) into->min_ns = from->min_ns;
}

uint64_t bench_hist_pct(const bench_hist *h, double pct)
{
    if (!h->n)
        return 0;
    if (pct >= 100)
        return h->max_ns;
    uint64_t want = (uint64_t)((pct / 100.0) * (double)h->n);
    if (want >= h->n) want = h->n - 1;
    uint64_t seen = 0;
    for (int i = 0; i < HIST_EXP * HIST_SUB; i++) {
        seen += h->counts[i];
        if (seen > want) {
            uint64_t v = bucket_value(i);
            return v > h->max_ns ? h->max_ns : v;
        }
    }
    return h->max_ns;
}
